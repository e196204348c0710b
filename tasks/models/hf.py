"""``hf:PATH`` — a local transformers causal LM (optional extra ``eventkg[hf]``).

Imported lazily: nothing here loads torch until a model is actually asked for. Greedy
decoding; the tokenizer's chat template is used when it has one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eventkg.tasks.errors import ModelSpecError
from eventkg.tasks.models.base import Completion, Model, Request


class HFModel(Model):
    """A local Hugging Face model folder, run with ``transformers`` (no hub access)."""

    def __init__(self, path: str, device: str | None = None, generate_batch: int = 4) -> None:
        if not path or not Path(path).expanduser().is_dir():
            raise ModelSpecError(f"hf model {path!r}: not a local model folder (hf:PATH needs a directory with config.json)")
        self.path = str(Path(path).expanduser().resolve())
        self.device = device
        self.generate_batch = generate_batch
        self.name = f"hf:{Path(self.path).name}"
        self._model: Any = None
        self._tok: Any = None

    def _load(self) -> None:
        if self._model is not None:
            return
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ModuleNotFoundError as exc:
            raise ModelSpecError(f"hf models need the optional extra: pip install 'eventkg[hf]' ({exc.name} missing)") from None
        self._tok = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
        if self._tok.pad_token is None:
            self._tok.pad_token = self._tok.eos_token
        self._tok.padding_side = "left"
        self._model = AutoModelForCausalLM.from_pretrained(self.path, local_files_only=True)
        self._device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
        self._model.to(self._device).eval()

    def _text(self, req: Request) -> str:
        if getattr(self._tok, "chat_template", None):
            messages = ([{"role": "system", "content": req.system}] if req.system else []) + [{"role": "user", "content": req.prompt}]
            return self._tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return req.prompt

    def generate(self, requests: Sequence[Request]) -> list[Completion]:
        import torch

        self._load()
        out: list[Completion] = []
        for i in range(0, len(requests), self.generate_batch):
            chunk = requests[i : i + self.generate_batch]
            enc = self._tok([self._text(r) for r in chunk], return_tensors="pt", padding=True).to(self._device)
            with torch.no_grad():
                gen = self._model.generate(**enc, max_new_tokens=max(r.max_tokens or 512 for r in chunk), do_sample=False,
                                           pad_token_id=self._tok.pad_token_id)
            for row in gen[:, enc["input_ids"].shape[1]:]:
                out.append(Completion(self._tok.decode(row, skip_special_tokens=True)))
        return out

    def close(self) -> None:
        self._model = None
