"""Benchmark: the vector index's embedding build on a GPU (``--device cuda``) beside the CPU.

What it measures, on ``--texts`` ASER-shaped event texts (the ``words`` column that
:func:`tests.support.aser_shape.make_aser_shape_kg` writes, 1M by default):

1. **build on the accelerator**: every text through the index build's own resumable path
   (:func:`eventkg.queries.vectors.encode.encode_chunks`: chunks saved as they finish), on
   ``--device`` with the batch size :func:`eventkg.queries.vectors.embeddings.default_encode_batch` picks
   for it; texts/s and the wall time for all of them;
2. **batch sizes**: the same encoder on a ``--sweep`` sample with other batch sizes, so the
   default can be seen to be near the best;
3. **baseline in the same run**: the CPU encoder (all cores of this machine) on a
   ``--cpu-sample`` sample, and its rate extrapolated to all texts;
4. **the floor of the GPU path**: the tokenizer alone (it runs on the CPU, one thread, before
   each forward pass) over the sweep sample, and the model in half precision (``.half()``)
   with the same batch sizes, to see what is left on the table; ``--workers``: the rate with
   that many worker processes feeding the GPU, and what starting them costs;
5. **the same vectors**: cosine of the accelerator's vectors (float32 and float16) against the
   CPU's for the CPU sample (min and mean), so a GPU-built index equals a CPU-built one.

``--model DIR`` takes any sentence-transformers folder. ``--random-weights DIR`` builds one
from DIR's ``config.json`` and tokenizer files with randomly initialised weights: the
throughput of a model depends only on its architecture and the token counts, which are
the real tokenizer's, so the rates equal the real model's (used where the 87 MB weights
cannot travel to the machine with the GPU). Never run in CI.

Run:  python -m bench.embed_device_bench --texts 1000000 --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path

from eventkg.queries.vectors.embeddings import (
    POOL_MIN_TEXTS,
    Embedder,
    default_encode_batch,
    resolve_device,
    usable_cores,
)
from eventkg.queries.vectors.encode import encode_chunks
from tests.support.aser_shape import make_aser_shape_kg


def aser_texts(n: int, workdir: Path, seed: int = 7) -> list[str]:
    """``n`` ASER-shaped eventuality texts (repeats included, as the toolkit's files have them)."""
    kg = make_aser_shape_kg(workdir / "KG.db", n, max(1, n // 100), seed=seed)
    with sqlite3.connect(kg) as con:
        return [row[0] for row in con.execute("SELECT words FROM Eventualities")]


def random_weight_model(config_dir: Path, out: Path) -> Path:
    """A sentence-transformers folder with ``config_dir``'s architecture and random weights."""
    from transformers import AutoConfig, AutoModel

    shutil.copytree(config_dir, out, dirs_exist_ok=True)
    AutoModel.from_config(AutoConfig.from_pretrained(config_dir)).save_pretrained(out)
    return out


def rate(embedder: Embedder, texts: list[str]) -> float:
    embedder.encode(texts[:64])  # load and warm up: not timed
    t = time.perf_counter()
    embedder.encode(texts)
    return len(texts) / (time.perf_counter() - t)


def pooled_rate(embedder: Embedder, texts: list[str]) -> tuple[float, float]:
    """(texts/s once the worker processes run, seconds to start them and encode their first texts)."""
    embedder.encode(texts[:64])  # the model loaded in this process, as a build has it
    t = time.perf_counter()
    embedder.expect(POOL_MIN_TEXTS)
    embedder.encode(texts[: 4 * embedder.workers * embedder.encode_batch])
    start = time.perf_counter() - t
    t = time.perf_counter()
    embedder.encode(texts)
    secs = time.perf_counter() - t
    embedder.close()
    return len(texts) / secs, start


def build_rate(embedder: Embedder, texts: list[str], work: Path) -> tuple[float, float]:
    """(texts/s, seconds) of the index build's chunked path over all ``texts``."""
    embedder.encode(texts[:64])
    plan = {"model": embedder.name, "dim": embedder.dim, "n": len(texts), "chunk": 65_536}
    t = time.perf_counter()
    vecs = encode_chunks(texts, work, plan, embedder, f"{len(texts):,} texts", None, print)
    secs = time.perf_counter() - t
    assert vecs.shape == (len(texts), embedder.dim)
    return len(texts) / secs, secs


def tokenize_rate(embedder: Embedder, texts: list[str]) -> float:
    """Texts/s of the model's tokenizer alone, in the encoder's batches (the GPU path's CPU part)."""
    bs = embedder.encode_batch
    tokenize = getattr(embedder.st, "preprocess", None) or embedder.st.tokenize  # renamed in 6.x
    tokenize(texts[:64])
    t = time.perf_counter()
    for i in range(0, len(texts), bs):
        tokenize(texts[i : i + bs])
    return len(texts) / (time.perf_counter() - t)


def cosines(a, b) -> tuple[float, float]:
    c = (a * b).sum(axis=1)
    return float(c.min()), float(c.mean())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=1_000_000)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--model", default=None, help="a sentence-transformers folder (default: the bundled MiniLM)")
    ap.add_argument("--random-weights", type=Path, help="build the model from this folder's config, random weights")
    ap.add_argument("--sweep", type=int, default=100_000, help="texts per batch size in the sweep")
    ap.add_argument("--batch-sizes", default="", help="batch sizes to sweep in one process, e.g. 256,512,2048")
    ap.add_argument("--workers", default="1,2,4,8", help="worker processes to sweep at the default batch")
    ap.add_argument("--half", action="store_true", help="also the model in float16 (one process), last")
    ap.add_argument("--cpu-sample", type=int, default=20_000)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="eventkg-embed-bench-") as tmp:
        tmp = Path(tmp)
        t = time.perf_counter()
        texts = aser_texts(args.texts, tmp)
        print(f"# {len(texts):,} ASER-shaped texts generated in {time.perf_counter() - t:.1f} s")
        model = str(random_weight_model(args.random_weights, tmp / "model")) if args.random_weights else args.model
        device = resolve_device(args.device)
        fig: dict = {"texts": len(texts), "device": device, "cpu_cores": usable_cores(),
                     "random_weights": bool(args.random_weights)}
        if device.startswith("cuda"):
            import torch

            fig["gpu"] = torch.cuda.get_device_name(0)
        gpu = Embedder(model, device=device)
        fig["default_batch"], fig["default_workers"] = default_encode_batch(device), gpu.workers
        fig["build_rate"], fig["build_s"] = build_rate(gpu, texts, tmp / "chunks")
        print(f"build on {device} (batch {fig['default_batch']}, {gpu.workers} worker processes): "
              f"{fig['build_rate']:,.0f} texts/s, {fig['build_s']:.1f} s for {len(texts):,}")
        sweep, sample = texts[: args.sweep], texts[: args.cpu_sample]
        fig["workers"] = {}
        for w in (int(x) for x in args.workers.split(",") if x):
            fig["workers"][w] = pooled_rate(Embedder(model, device=device, workers=w), sweep)
            print(f"  {w} worker processes: {fig['workers'][w][0]:,.0f} texts/s, "
                  f"{fig['workers'][w][1]:.1f} s to start them")
        fig["sweep"] = {}
        for bs in (int(b) for b in args.batch_sizes.split(",") if b):
            fig["sweep"][bs] = rate(Embedder(model, device=device, encode_batch=bs, workers=1), sweep)
            print(f"  batch {bs:5d}, one process: {fig['sweep'][bs]:,.0f} texts/s")
        fig["tokenize_rate"] = tokenize_rate(gpu, sweep)
        print(f"  tokenizer alone, one process: {fig['tokenize_rate']:,.0f} texts/s")
        gpu_vecs = gpu.encode(sample)
        gpu.close()
        cpu = Embedder(model, device="cpu")
        fig["cpu_rate"] = rate(cpu, sample)
        fig["cpu_all_s"] = len(texts) / fig["cpu_rate"]
        fig["speedup"] = fig["build_rate"] / fig["cpu_rate"]
        print(f"baseline cpu ({fig['cpu_cores']} cores, batch {cpu.encode_batch}): {fig['cpu_rate']:,.0f} texts/s "
              f"-> {fig['cpu_all_s'] / 60:.1f} min for all; {device} is {fig['speedup']:.1f}x")
        if device.startswith("cuda"):
            cpu_vecs = cpu.encode(sample)
            fig["cos_float32"] = cosines(gpu_vecs, cpu_vecs)
            print(f"  cosine of the {device} build's vectors to the CPU's (min, mean): {fig['cos_float32']}")
            if args.half:
                gpu.st.half()  # the loaded model is shared by every Embedder of (model, device): last
                fig["cos_float16"] = cosines(Embedder(model, device=device, workers=1).encode(sample), cpu_vecs)
                fig["half"] = rate(Embedder(model, device=device, workers=1), sweep)
                print(f"  float16, one process: {fig['half']:,.0f} texts/s, cosine {fig['cos_float16']}")
    if args.json:
        args.json.write_text(json.dumps(fig, indent=2))
    os.sys.stdout.flush()


if __name__ == "__main__":
    main()
