"""Publishing policy weights by version: through Ray's object store (small models) or a shared folder (large ones).

The object-store path puts one CPU ``state_dict`` per version with ``ray.put``; every worker's copy reads the
same object (one transfer per node). For models of several GB, use ``weight_transport="shared_dir"``: the
learner writes ``<weights_dir>/v<version>/model.pt`` (a folder every node mounts, e.g. NFS) and only the path
travels; workers load it from there (HF checkpoints written with ``save_pretrained`` work the same way for an
inference actor running vLLM, which reloads from a path).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

__all__ = ["WeightsRef", "apply_weights", "cpu_state_dict", "write_shared_weights"]


class WeightsRef(dict):
    """A published version: ``{"version": int, "path": str}`` for the shared folder (a dict, so it pickles small)."""


def cpu_state_dict(model: Any) -> dict[str, torch.Tensor]:
    """The model's weights as detached CPU tensors (what the object store carries)."""
    if not callable(getattr(model, "state_dict", None)):
        raise TypeError(f"publish_policy needs a torch model (with state_dict), got {type(model).__name__}")
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}


def write_shared_weights(model: Any, weights_dir: str | os.PathLike[str], version: int) -> WeightsRef:
    """Write ``model``'s weights to ``<weights_dir>/v<version>/model.pt`` atomically; the reference to publish."""
    folder = Path(weights_dir) / f"v{int(version)}"
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / "model.pt.tmp"
    torch.save(cpu_state_dict(model), tmp)
    os.replace(tmp, folder / "model.pt")
    return WeightsRef(version=int(version), path=str(folder / "model.pt"))


def apply_weights(policy: Any, weights: Any) -> None:
    """Load published ``weights`` (a state dict, or a :class:`WeightsRef`) into ``policy.model``; None: no-op."""
    if weights is None:
        return
    if isinstance(weights, WeightsRef):
        weights = torch.load(weights["path"], map_location="cpu", weights_only=True)
    model = getattr(policy, "model", None)
    if model is None or not callable(getattr(model, "load_state_dict", None)):
        raise TypeError(f"the worker's policy {type(policy).__name__} has no torch model to load weights into")
    model.load_state_dict(weights)
