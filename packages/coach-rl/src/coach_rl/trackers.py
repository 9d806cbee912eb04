"""Experiment trackers: the run's metric records mirrored to TensorBoard or Weights & Biases (``report_to``).

``metrics.jsonl`` in the run folder stays the source of truth (it is what resume, reports and
``coach-rl summarize`` read); trackers are a view of it. ``report_to`` takes the names TRL and
transformers use: ``"none"`` (default), ``"tensorboard"``, ``"wandb"``, ``"all"`` (every one installed),
or a list. Training records are logged at step = iteration, evaluations at the iteration they ran after
(``eval/success_rate`` ...), set-up once at step 0. After a resume, TensorBoard drops the events of
iterations the run redoes (``purge_step``), so curves never show the same iteration twice.
"""

from __future__ import annotations

import importlib.util
import math
import os
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

__all__ = ["KNOWN_TRACKERS", "Tracker", "TrackerError", "Trackers", "open_trackers", "resolve_report_to"]

KNOWN_TRACKERS = ("tensorboard", "wandb")
"""Tracker names ``report_to`` accepts (besides ``"none"`` and ``"all"``)."""

_MODULES = {"tensorboard": "tensorboard", "wandb": "wandb"}
_INSTALL = {"tensorboard": "pip install 'coach-rl[tensorboard]'", "wandb": "pip install wandb"}


class TrackerError(ValueError):
    """A tracker was asked for that is unknown or not installed (the message says how to get it)."""


class Tracker(Protocol):
    """What a tracker does: take scalars at a step, and close."""

    def log(self, scalars: Mapping[str, float], step: int) -> None: ...

    def close(self) -> None: ...


def resolve_report_to(report_to: str | Sequence[str] | None) -> list[str]:
    """The tracker names ``report_to`` asks for, checked: ``[]`` for none; TrackerError for unknown or missing ones."""
    if report_to is None:
        return []
    names = [report_to] if isinstance(report_to, str) else list(report_to)
    out: list[str] = []
    for name in names:
        if not isinstance(name, str):
            raise TrackerError(f"report_to entries must be strings, got {name!r}")
        key = name.strip().lower()
        if key in ("", "none"):
            continue
        if key == "all":
            out.extend(n for n in KNOWN_TRACKERS if importlib.util.find_spec(_MODULES[n]) is not None)
            continue
        if key not in KNOWN_TRACKERS:
            raise TrackerError(f"report_to={name!r} is not a tracker coach-rl knows; use one of "
                               f"{', '.join(('none', 'all', *KNOWN_TRACKERS))}")
        if importlib.util.find_spec(_MODULES[key]) is None:
            raise TrackerError(f"report_to={name!r} needs the {_MODULES[key]} package: {_INSTALL[key]}")
        out.append(key)
    return list(dict.fromkeys(out))


def scalars_of(record: Mapping[str, Any]) -> tuple[dict[str, float], int] | None:
    """The scalars of one ``metrics.jsonl`` record and the step to log them at; None for records not worth plotting."""
    kind = record.get("kind")
    if kind == "train":
        step = int(record.get("iteration", 0))
        prefix = ""
    elif kind == "eval":
        step = int(record.get("at_iteration", 0))
        prefix = "eval/" if record.get("label") in ("before", "after") or str(record.get("label", "")).startswith(
            "iter") else f"eval_{record.get('label')}/"
    elif kind == "setup":
        step, prefix = 0, "setup/"
    elif kind == "validation" and not record.get("iteration"):
        # validation_every: the starting policy's point of the curve; later ones come with their train record
        step, prefix = 0, ""
    else:
        return None
    skip = {"kind", "iteration", "at_iteration", "label"}
    out: dict[str, float] = {}
    for key, value in record.items():
        if key in skip or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if math.isfinite(float(value)):
            out[prefix + key] = float(value)
    return out, step


class _TensorBoard:
    def __init__(self, log_dir: Path, purge_step: int | None) -> None:
        from torch.utils.tensorboard import SummaryWriter

        self.writer = SummaryWriter(log_dir=str(log_dir), purge_step=purge_step)

    def log(self, scalars: Mapping[str, float], step: int) -> None:
        for key, value in scalars.items():
            self.writer.add_scalar(key, value, global_step=step)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()


class _WandB:
    def __init__(self, run_dir: Path, config: Mapping[str, Any], resumed: bool) -> None:
        import wandb

        # one W&B run per run folder: its id is kept there, so a resumed run continues the same curves
        id_file = run_dir / "wandb_run_id"
        run_id = id_file.read_text().strip() if id_file.is_file() else uuid.uuid4().hex[:12]
        id_file.write_text(run_id)
        self.run = wandb.init(project=os.environ.get("WANDB_PROJECT", "coach-rl"), id=run_id, resume="allow",
                              name=run_dir.name, dir=str(run_dir), config=dict(config))

    def log(self, scalars: Mapping[str, float], step: int) -> None:
        self.run.log(dict(scalars), step=step)

    def close(self) -> None:
        self.run.finish()


class Trackers:
    """The trackers of one run; :meth:`log` takes the same records as ``metrics.jsonl``."""

    def __init__(self, trackers: Sequence[Tracker] = ()) -> None:
        self.trackers = list(trackers)

    def __bool__(self) -> bool:
        return bool(self.trackers)

    def log(self, record: Mapping[str, Any]) -> None:
        """Mirror one metrics record to every tracker (records without scalars are skipped)."""
        if not self.trackers:
            return
        got = scalars_of(record)
        if got is None or not got[0]:
            return
        scalars, step = got
        for tracker in self.trackers:
            tracker.log(scalars, step)

    def close(self) -> None:
        """Flush and close every tracker."""
        for tracker in self.trackers:
            tracker.close()
        self.trackers = []


def open_trackers(report_to: str | Sequence[str] | None, run_dir: str | os.PathLike[str], *,
                  config: Mapping[str, Any] | None = None, resumed_from: int | None = None,
                  logging_dir: str | os.PathLike[str] | None = None) -> Trackers:
    """Open the trackers ``report_to`` names for the run in ``run_dir``.

    TensorBoard writes to ``logging_dir`` (default ``<run_dir>/tensorboard``); when the run resumes from
    iteration ``resumed_from``, events after it are purged. W&B logs ``config`` and keeps its run id in the
    run folder.
    """
    run_dir = Path(run_dir)
    out: list[Tracker] = []
    for name in resolve_report_to(report_to):
        if name == "tensorboard":
            purge = resumed_from + 1 if resumed_from is not None else None
            out.append(_TensorBoard(Path(logging_dir) if logging_dir else run_dir / "tensorboard", purge))
        elif name == "wandb":
            out.append(_WandB(run_dir, config or {}, resumed_from is not None))
    return Trackers(out)
