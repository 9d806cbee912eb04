r"""Difficulty-Adaptive Positive Replay (DAPR, MobileRL §4.3.2): keep the best trajectories and learn from them again.

Successful trajectories of hard tasks are rare; DGRPO keeps the top ``kappa`` (Table 4: 0.25) of each
iteration's trajectories by trajectory-level advantage (positive ones only) in a buffer of ``capacity`` (256)
and mixes at most ``gamma * M`` of them, those with the highest *current* advantage, into the next update of
``M`` on-policy trajectories (Eq. 4, ``gamma`` = 1.0). A drawn trajectory leaves the buffer: the paper expects a
stored trajectory to be sampled once more on average, and drawing it every iteration would overfit to it.
The buffer's advantages are "current" because DGRPO re-scores a stored trajectory against each new group of
the same task instance (:meth:`PositiveReplay.set_advantage`).

:func:`prune_negatives` keeps the update's positive-to-negative ratio at most 1:2 by dropping negatives, those
the current policy has drifted furthest from first (trajectory-level KL to the behaviour policy).

Everything is plain data: :meth:`PositiveReplay.state_dict` / :meth:`~PositiveReplay.load_state_dict` give an
exact resume (order, advantages, behaviour log-probs).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from coach_rl.records import StepRecord

__all__ = ["PositiveReplay", "ReplayTrajectory", "prune_negatives"]


@dataclass
class ReplayTrajectory:
    """One trajectory as DGRPO learns from it: its steps, advantage and the behaviour policy's token log-probs."""

    episode_id: str
    group: str
    """Task instance (``"<task>:<seed>"``), the group it was normalised in."""
    task: str
    advantage: float
    """Trajectory-level advantage A_traj (MobileRL Eq. 3)."""
    steps: list[StepRecord]
    behaviour_logps: list[list[float]] | None = None
    """Per step, the token log-probs of its response under the policy that generated it (None: not known yet)."""
    reward: float = 0.0
    """The (SPA-adjusted) reward of the trajectory."""
    outcome: float = 0.0
    """The terminal reward r (before SPA): re-scoring against a new group needs it."""
    inserted: int = field(default=0)
    """Insertion counter of the buffer (oldest first among equal advantages)."""

    @property
    def length(self) -> int:
        """T_i, the number of steps."""
        return len(self.steps)


def _check_fraction(value: float, name: str, *, low_open: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a number in (0, 1], got {value!r}")
    if not ((0 < value <= 1) if low_open else (0 <= value <= 1)):
        raise ValueError(f"{name} must be in {'(0, 1]' if low_open else '[0, 1]'}, got {value!r}")
    return float(value)


class PositiveReplay:
    """The DAPR buffer (see the module docstring)."""

    def __init__(self, capacity: int = 256, top_fraction: float = 0.25, mix: float = 1.0) -> None:
        """``capacity`` trajectories at most; ``top_fraction`` is kappa, ``mix`` is gamma (Table 4: 256, 0.25, 1.0)."""
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"capacity must be a positive integer, got {capacity!r}")
        self.capacity = capacity
        self.top_fraction = _check_fraction(top_fraction, "top_fraction (kappa)")
        self.mix = _check_fraction(mix, "mix (gamma)", low_open=False)
        self._items: list[ReplayTrajectory] = []
        self._counter = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def items(self) -> list[ReplayTrajectory]:
        """The stored trajectories, highest advantage first (a copy of the list)."""
        return sorted(self._items, key=lambda t: (-t.advantage, t.inserted))

    def add_iteration(self, trajectories: Sequence[ReplayTrajectory]) -> list[str]:
        """Insert the top ``ceil(kappa * N)`` of an iteration's N trajectories by advantage (positive ones only).

        Ties keep input order. When the buffer overflows, the lowest-advantage entries (oldest first among
        ties) leave. Returns the episode ids inserted.
        """
        trajectories = list(trajectories)
        for i, t in enumerate(trajectories):
            if not isinstance(t, ReplayTrajectory):
                raise TypeError(f"trajectories[{i}] must be a ReplayTrajectory, got {type(t).__name__}")
            if t.behaviour_logps is None:
                raise ValueError(f"trajectories[{i}] ({t.episode_id}) has no behaviour_logps: the ratio of a "
                                 "replayed trajectory needs the log-probs of the policy that generated it")
        if not trajectories:
            return []
        n_top = math.ceil(self.top_fraction * len(trajectories))
        ranked = sorted(range(len(trajectories)), key=lambda i: (-trajectories[i].advantage, i))
        stored = {t.episode_id for t in self._items}
        inserted: list[str] = []
        for i in ranked[:n_top]:
            t = trajectories[i]
            if t.advantage <= 0 or t.episode_id in stored:
                continue
            self._counter += 1
            self._items.append(dataclasses.replace(t, inserted=self._counter))
            inserted.append(t.episode_id)
        if len(self._items) > self.capacity:
            keep = sorted(self._items, key=lambda t: (-t.advantage, -t.inserted))[: self.capacity]
            self._items = sorted(keep, key=lambda t: t.inserted)
        return [e for e in inserted if any(t.episode_id == e for t in self._items)]

    def draw(self, on_policy: int) -> list[ReplayTrajectory]:
        """Take out the ``min(floor(gamma * M), len)`` highest-current-advantage trajectories for an update of
        ``M = on_policy`` on-policy trajectories (positive advantages only)."""
        if isinstance(on_policy, bool) or not isinstance(on_policy, int) or on_policy < 0:
            raise ValueError(f"on_policy must be an integer >= 0 (M, the on-policy trajectories), got {on_policy!r}")
        k = math.floor(self.mix * on_policy + 1e-9)
        chosen = [t for t in self.items if t.advantage > 0][:k]
        taken = {t.episode_id for t in chosen}
        self._items = [t for t in self._items if t.episode_id not in taken]
        return chosen

    def groups(self) -> set[str]:
        """Task instances with at least one stored trajectory."""
        return {t.group for t in self._items}

    def in_group(self, group: str) -> list[ReplayTrajectory]:
        """The stored trajectories of one task instance (insertion order)."""
        return [t for t in self._items if t.group == group]

    def set_advantage(self, episode_id: str, advantage: float) -> None:
        """Re-score a stored trajectory (its advantage against the newest group of its task instance)."""
        if not math.isfinite(advantage):
            raise ValueError(f"advantage must be finite, got {advantage!r}")
        for t in self._items:
            if t.episode_id == episode_id:
                t.advantage = float(advantage)
                return
        raise KeyError(f"no stored trajectory {episode_id!r}")

    def state_dict(self) -> dict[str, Any]:
        """Plain data: settings, counter and every stored trajectory (steps as field dicts)."""
        return {
            "capacity": self.capacity, "top_fraction": self.top_fraction, "mix": self.mix, "counter": self._counter,
            "items": [{**{f.name: getattr(t, f.name) for f in dataclasses.fields(t) if f.name != "steps"},
                       "steps": [dataclasses.asdict(s) for s in t.steps]} for t in self._items],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` (the settings must match this buffer's)."""
        for key in ("capacity", "top_fraction", "mix"):
            if state.get(key) != getattr(self, key):
                raise ValueError(f"the saved replay had {key}={state.get(key)!r}, this one has {getattr(self, key)!r}")
        self._counter = int(state["counter"])
        self._items = [ReplayTrajectory(**{**item, "steps": [StepRecord(**s) for s in item["steps"]]})
                       for item in state["items"]]


def prune_negatives(advantages: Sequence[float], kls: Sequence[float], max_ratio: float = 2.0) -> list[int]:
    """Indices to keep so that negatives (A < 0) number at most ``max_ratio`` per positive (A > 0).

    Surplus negatives are dropped in descending order of ``kls`` (trajectory-level KL between the current and the
    behaviour policy: the most off-policy first), ties broken towards the lower advantage, then the later index.
    Zero-advantage trajectories are neither and always kept. Returns the kept indices in ascending order.
    """
    advantages = [float(a) for a in advantages]
    kls = [float(k) for k in kls]
    if len(advantages) != len(kls):
        raise ValueError(f"advantages ({len(advantages)}) and kls ({len(kls)}) must have one entry per trajectory")
    if not max_ratio >= 0:
        raise ValueError(f"max_ratio must be >= 0, got {max_ratio!r}")
    positives = sum(a > 0 for a in advantages)
    negatives = [i for i, a in enumerate(advantages) if a < 0]
    surplus = len(negatives) - math.floor(max_ratio * positives)
    dropped: set[int] = set()
    if surplus > 0:
        order = sorted(negatives, key=lambda i: (-kls[i], advantages[i], -i))
        dropped = set(order[:surplus])
    return [i for i in range(len(advantages)) if i not in dropped]
