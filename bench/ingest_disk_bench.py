"""The disk an ingest takes at its peak, split into spool, store and the rest, beside its input's size.

    .venv/bin/python -m bench.ingest_disk_bench                                   # ASER shape 100K/300K and 1M/3M
    .venv/bin/python -m bench.ingest_disk_bench --aser 100000,1000000 --append
    .venv/bin/python -m bench.ingest_disk_bench --aser 1000000=/path/KG.db --aser-synthetic 200000 --release ev2=DIR

Each ingest is ``eventkg --store DIR/s.lbug ingest SOURCE PATH`` in a process of its own, with
``TMPDIR`` set inside ``DIR``; every ~0.2 s the bench walks ``DIR`` and adds up the blocks each file
holds (``st_blocks``, what the disk gives it), sorted into:

* ``spool``: the ingest's spool folder (``.eventkg-spool-*``: held rows, key files, the staged
  Parquet tables the engine COPYs);
* ``store``: the store file itself;
* ``other``: everything else: the engine's ``.wal`` / ``.shadow`` / temporary files, the sidecars,
  anything under ``TMPDIR``.

Printed per ingest: the input's bytes, what the folder held before, its peak (and each part at that
moment, and each part's own peak), the store at rest after it, the peak's growth over the input's
bytes, and beside them the pre-ingest check's estimate (``eventkg.ingest.checks.ingest_need``) and
the growth over it, which must stay under 1. The floor beside the peak is the store's own growth
(at rest after over before): what the store alone keeps.
A sampled peak can miss a file that lived under 0.2 s, so a peak here is a floor of the real one.

``--append`` ingests a second file of the same size (seed + 1) into each store: the case where the
staged tables sit beside a store that already holds rows.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from bench.common import ROOT, DiskSampler, default_workdir, disk_usage, fs_used, generated_kg
from eventkg.ingest.checks import ingest_need, input_bytes

SPOOL_PREFIX = ".eventkg-spool-"
PARTS = ("spool", "store", "other")
PERIOD = 0.2


def part_of(path: Path, folder: Path, store: Path) -> str:
    """Which of :data:`PARTS` a file under ``folder`` counts to."""
    rel = path.relative_to(folder)
    if rel.parts[0].startswith(SPOOL_PREFIX):
        return "spool"
    if path == store:
        return "store"
    return "other"


def usage(folder: Path, store: Path) -> dict[str, int]:
    """Bytes the disk gives each of :data:`PARTS` under ``folder`` now."""
    return disk_usage(folder, lambda path: part_of(path, folder, store), PARTS)


def ingest_peak(source: str, path: Path, folder: Path) -> dict:
    """One ``eventkg ingest SOURCE PATH`` into ``folder/s.lbug``, its disk sampled as it runs."""
    store = folder / "s.lbug"
    tmp = folder / "tmp"
    tmp.mkdir(exist_ok=True)
    before = usage(folder, store)
    fs_before = fs_used(folder)
    sampler = DiskSampler(folder, lambda path: part_of(path, folder, store), PARTS, PERIOD)
    sampler.start()
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "eventkg", "--store", str(store), "ingest", source, str(path), "--json"],
                          capture_output=True, text=True, cwd=ROOT, env={**os.environ, "TMPDIR": str(tmp)})
    seconds = time.perf_counter() - t0
    sampler.stop()
    if proc.returncode != 0:
        raise SystemExit(f"ingest {source} {path} failed: {proc.stderr.strip()[-2000:]}")
    after = usage(folder, store)
    size = input_bytes(path)
    was, peak, rest = sum(before.values()), sum(sampler.peak.values()), sum(after.values())
    stored = store.stat().st_size if before["store"] else 0
    need = ingest_need(source, size, stored)  # what the pre-ingest check asks the disk to have free
    return {
        "source": source, "input": str(path), "input_bytes": size, "seconds": round(seconds, 1),
        "samples": sampler.samples, "before": was, "peak": peak, "peak_parts": sampler.peak,
        "part_peaks": sampler.part_peaks, "after": rest,
        "peak_growth_per_input_byte": round((peak - was) / size, 4),
        "store_growth_per_input_byte": round((rest - was) / size, 4),
        "spool_per_input_byte": round(sampler.part_peaks["spool"] / size, 4),
        "fs_before": fs_before, "fs_peak": sampler.fs_peak, "estimate": need,
        "peak_growth_over_estimate": round((max(peak - was, sampler.fs_peak - fs_before)) / need, 3),
        "fs_peak_growth_per_input_byte": round((sampler.fs_peak - fs_before) / size, 4),
    }


def mb(n: int) -> str:
    return f"{n / 1e6:,.1f}"


def show(run: dict, label: str) -> None:
    p, pp = run["peak_parts"], run["part_peaks"]
    print(f"{label:<34} {mb(run['input_bytes']):>9} {mb(run['before']):>8} {mb(run['peak']):>9} "
          f"{mb(p['spool']):>8} {mb(p['store']):>8} {mb(p['other']):>7} {mb(pp['spool']):>9} "
          f"{mb(run['after']):>8} {run['peak_growth_per_input_byte']:>7.3f} {run['store_growth_per_input_byte']:>7.3f} "
          f"{run['seconds']:>7.1f} {mb(run['fs_peak'] - run['fs_before']):>9} {mb(run['estimate']):>9} "
          f"{run['peak_growth_over_estimate']:>8.2f}", flush=True)


def header() -> None:
    print(f"{'ingest':<34} {'input MB':>9} {'before':>8} {'peak MB':>9} {'spool@pk':>8} {'store@pk':>8} "
          f"{'other@pk':>7} {'spool max':>9} {'after':>8} {'peak/in':>7} {'store/in':>7} {'s':>7} {'fs grew':>9} {'estimate':>9} {'grew/est':>8}", flush=True)


def aser_inputs(spec: str, work: Path, *, synthetic: bool = False) -> list[tuple[str, Path, int]]:
    """``"100000,1000000=/path/KG.db"`` -> [(label, folder holding KG.db, eventualities)]."""
    out = []
    for item in filter(None, spec.split(",")):
        size, _, given = item.partition("=")
        n = int(size)
        folder = work / f"{'syn' if synthetic else 'aser'}-{n}"
        folder.mkdir(parents=True, exist_ok=True)
        kg = folder / "KG.db"
        if given:
            if not kg.is_symlink():
                kg.unlink(missing_ok=True)
                kg.symlink_to(Path(given).resolve())
        elif not kg.exists():
            if synthetic:
                from tests.support.synthetic import make_aser_kg
                make_aser_kg(kg, n, 3 * n, seed=11)
            else:
                generated_kg(folder, n, 3 * n, 7).rename(kg)
        out.append((f"{'synthetic' if synthetic else 'aser shape'} {n:,}/{3 * n:,}", folder, n))
    return out


def second_file(work: Path, n: int, *, synthetic: bool) -> Path:
    """A second input of ``n`` eventualities (another seed) for an append."""
    folder = work / f"{'syn' if synthetic else 'aser'}-{n}-second"
    folder.mkdir(parents=True, exist_ok=True)
    kg = folder / "KG.db"
    if not kg.exists():
        if synthetic:
            from tests.support.synthetic import make_aser_kg
            make_aser_kg(kg, n, 3 * n, seed=12)
        else:
            generated_kg(folder, n, 3 * n, 8).rename(kg)
    return folder


def _renamed(text: str, i: int) -> str:
    """``text`` made the ``i``-th distinct copy of itself (inside a closing ``>`` where it has one)."""
    return f"{text[:-1]} in place {i}>" if text.endswith(">") else f"{text} in place {i}"


def scaled_copy(sample: Path, out: Path, copies: int) -> Path:
    """``sample``'s files (JSON lines, or a ``head relation tail weight`` TSV) written ``copies``
    times over into ``out``, each copy's event texts made distinct: the sample's shape at a bigger size."""
    if out.exists():
        return out
    part = out.with_name(out.name + ".part")
    shutil.rmtree(part, ignore_errors=True)
    for src in ([sample] if sample.is_file() else sorted(f for f in sample.rglob("*") if f.is_file())):
        dst = part / (src.name if sample.is_file() else src.relative_to(sample))
        dst.parent.mkdir(parents=True, exist_ok=True)
        lines = src.read_text(encoding="utf-8").splitlines()
        with dst.open("w", encoding="utf-8") as fh:
            if src.suffix == ".tsv":
                fh.write(lines[0] + "\n")
                for i in range(copies):
                    for line in lines[1:]:
                        head, rel, tail, *rest = line.split("\t")
                        fh.write("\t".join([_renamed(head, i), rel, _renamed(tail, i), *rest]) + "\n")
                continue
            for i in range(copies):
                for line in filter(None, lines):
                    row = json.loads(line)
                    row.update({k: _renamed(row[k], i) for k in ("event", "head", "tail") if isinstance(row.get(k), str)})
                    fh.write(json.dumps(row) + "\n")
    part.rename(out)
    return out


def store_folder(work: Path, name: str, tmpfs_mib: int, mounted: list[Path]) -> Path:
    """A new empty folder for one store; with ``tmpfs_mib``, a tmpfs of its own (so the file system's
    used bytes are this ingest's alone, files deleted while open included)."""
    folder = work / name
    if folder.is_mount():
        subprocess.run(["umount", "-l", str(folder)], check=True)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir()
    if tmpfs_mib:
        subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={tmpfs_mib}m", "tmpfs", str(folder)], check=True)
        mounted.append(folder)
    return folder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workdir", type=Path, default=default_workdir("eventkg-ingest-disk-bench"))
    ap.add_argument("--aser", default="100000,1000000", help="ASER-shape sizes (N: N/3N), N=PATH to use a KG.db")
    ap.add_argument("--aser-synthetic", default="", help="sizes of tests.support.synthetic files (the tests' shape)")
    ap.add_argument("--release", action="append", default=[], help="SOURCE=PATH: a real input to measure too")
    ap.add_argument("--append", action="store_true", help="then ingest a second file of each size into each store")
    ap.add_argument("--scaled", action="append", default=[],
                    help="SOURCE=SAMPLE:COPIES[,COPIES]: the sample written COPIES times over (distinct events)")
    ap.add_argument("--then", action="append", default=[],
                    help="SOURCE=PATH: ingested into each ASER case's store last (a small input onto a big store)")
    ap.add_argument("--onto", type=Path, help="a store each --release input is ingested into (a copy of it)")
    ap.add_argument("--tmpfs", type=int, default=0, metavar="MIB",
                    help="put each store on a tmpfs of this size (root): its used bytes sampled too")
    ap.add_argument("--json", type=Path, help="write every run's figures here")
    args = ap.parse_args()
    work = args.workdir
    work.mkdir(parents=True, exist_ok=True)
    runs: list[dict] = []
    mounted: list[Path] = []
    try:
        measure(args, work, runs, mounted)
    finally:
        for folder in mounted:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2))


def measure(args: argparse.Namespace, work: Path, runs: list[dict], mounted: list[Path]) -> None:
    """Every ingest the arguments ask for, printed as it ends and added to ``runs``."""
    header()
    cases = aser_inputs(args.aser, work) + aser_inputs(args.aser_synthetic, work, synthetic=True)
    for label, path, n in cases:
        folder = store_folder(work, f"store-{label.split()[0]}-{n}", args.tmpfs, mounted)
        run = ingest_peak("aser", path, folder)
        runs.append({"case": label, **run})
        show(run, label)
        if args.append:
            second = second_file(work, n, synthetic=label.startswith("synthetic"))
            run = ingest_peak("aser", second, folder)
            runs.append({"case": f"{label} append", **run})
            show(run, f"{label} + a second file")
        for spec in args.then:
            source, _, then = spec.partition("=")
            run = ingest_peak(source, Path(then), folder)
            runs.append({"case": f"{label} then {source} {then}", **run})
            show(run, f"  then {source} {Path(then).name}")
    releases = list(args.release)
    for spec in args.scaled:
        source, _, rest = spec.partition("=")
        sample, _, sizes = rest.rpartition(":")
        for copies in map(int, sizes.split(",")):
            name = Path(sample).name
            releases.append(f"{source}={scaled_copy(Path(sample), work / f'{source}-x{copies}' / name, copies)}")
    for spec in releases:
        source, _, path = spec.partition("=")
        folder = store_folder(work, f"store-{source}", args.tmpfs, mounted)
        onto = ""
        if args.onto:
            for part in [args.onto, *args.onto.parent.glob(f"{args.onto.name}.*")]:
                if part.is_file() and part.suffix in ("", ".lbug", ".digests", ".origins", ".ingests"):
                    shutil.copy2(part, folder / part.name.replace(args.onto.name, "s.lbug"))
            onto = f" onto {args.onto.name}"
        run = ingest_peak(source, Path(path), folder)
        runs.append({"case": f"{source} {path}{onto}", **run})
        show(run, f"{source} {Path(path).name}{onto}")


if __name__ == "__main__":
    main()
