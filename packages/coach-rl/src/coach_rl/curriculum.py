r"""Failure Curriculum Filtering (FCF, MobileRL §4.3.3): sample tasks that never succeed less, then not at all.

A task whose rewards were all zero for ``patience`` (2) consecutive epochs enters a ``cooldown`` (3) epoch
cooldown with sampling weight ``exp(-f)``, ``f`` the number of consecutive all-zero epochs; once ``f`` reaches
``remove_after`` (3) the task leaves the pool for good. Any reward above zero resets ``f``. An epoch in which
a task was not played leaves its ``f`` as it is and only counts down its cooldown. The failure history is part
of :meth:`FailureCurriculum.state_dict`, so it survives a resume ("failure histories from previous training are
retained").

Use: :meth:`~FailureCurriculum.observe` the rewards of each played task, :meth:`~FailureCurriculum.end_epoch`
after each pass over the task pool, and sample tasks in proportion to :meth:`~FailureCurriculum.weights`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["FailureCurriculum", "TaskHistory"]


@dataclass
class TaskHistory:
    """What the curriculum remembers about one task."""

    failures: int = 0
    """f: consecutive epochs in which every reward of the task was zero."""
    cooldown: int = 0
    """Epochs of cooldown left (weight ``exp(-f)`` while > 0)."""
    removed: bool = False
    """Permanently out of the sampling pool."""


class FailureCurriculum:
    """Per-task failure history and sampling weights (see the module docstring)."""

    def __init__(self, patience: int = 2, cooldown: int = 3, remove_after: int = 3) -> None:
        """``patience`` all-zero epochs start a ``cooldown``-epoch cooldown; ``remove_after`` of them remove the task."""
        for name, value in (("patience", patience), ("cooldown", cooldown), ("remove_after", remove_after)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if patience > remove_after:
            raise ValueError(f"patience ({patience}) must not exceed remove_after ({remove_after})")
        self.patience = patience
        self.cooldown = cooldown
        self.remove_after = remove_after
        self.epoch = 0
        self.history: dict[str, TaskHistory] = {}
        self._seen: dict[str, bool] = {}  # task -> any reward > 0 this epoch

    def observe(self, task: str, rewards: Sequence[float]) -> None:
        """Record the rewards one task earned in the current epoch (may be called several times per epoch)."""
        if not isinstance(task, str) or not task:
            raise ValueError(f"task must be a non-empty task name, got {task!r}")
        values = [float(r) for r in rewards]
        if not values:
            raise ValueError(f"no rewards given for task {task!r}")
        if any(not math.isfinite(r) for r in values):
            raise ValueError(f"rewards of task {task!r} contain NaN or infinite values")
        self._seen[task] = self._seen.get(task, False) or any(r > 0 for r in values)

    def end_epoch(self) -> dict[str, float]:
        """Close the epoch: update every task's history; returns counts (cooling, removed, observed)."""
        for task, succeeded in self._seen.items():
            h = self.history.setdefault(task, TaskHistory())
            if h.removed:
                continue
            if succeeded:
                h.failures, h.cooldown = 0, 0
                continue
            h.failures += 1
            if h.failures >= self.remove_after:
                h.removed, h.cooldown = True, 0
            elif h.failures >= self.patience:
                h.cooldown = self.cooldown
        for task, h in self.history.items():
            if task not in self._seen and h.cooldown > 0:
                h.cooldown -= 1
        observed = len(self._seen)
        self._seen = {}
        self.epoch += 1
        return {"fcf/cooling": float(sum(h.cooldown > 0 for h in self.history.values())),
                "fcf/removed": float(sum(h.removed for h in self.history.values())),
                "fcf/observed": float(observed)}

    def weight(self, task: str) -> float:
        """Sampling weight of one task: 0 when removed, ``exp(-f)`` in cooldown, 1 otherwise (and for unknown tasks)."""
        h = self.history.get(task)
        if h is None:
            return 1.0
        if h.removed:
            return 0.0
        return math.exp(-h.failures) if h.cooldown > 0 else 1.0

    def weights(self, tasks: Iterable[str]) -> dict[str, float]:
        """``{task: weight}`` for the given tasks."""
        return {task: self.weight(task) for task in tasks}

    def state_dict(self) -> dict[str, Any]:
        """The settings, the epoch counter, every task's history and the open epoch's observations."""
        return {"patience": self.patience, "cooldown": self.cooldown, "remove_after": self.remove_after,
                "epoch": self.epoch, "history": {t: asdict(h) for t, h in self.history.items()},
                "seen": dict(self._seen)}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`: the history carries over, the settings are this object's own."""
        if "history" not in state:
            raise ValueError("not a FailureCurriculum state: missing 'history'")
        self.epoch = int(state.get("epoch", 0))
        self.history = {str(t): TaskHistory(**h) for t, h in state["history"].items()}
        self._seen = {str(t): bool(v) for t, v in state.get("seen", {}).items()}
