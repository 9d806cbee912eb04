r"""DPER: Distributed Prioritized Experience Replay over whole trajectories (DistRL, Section 5.3, Appendix A.4.3).

A trajectory's priority mixes three per-trajectory means, each brought to [0, 1]:

.. math::  p(\tau) = w_1 \frac{\overline{|\delta|}}{\max |\delta|} + w_2 \min(1, \bar\rho)
           + w_3 \frac{\bar{\mathbb{H}}}{\max \mathbb{H}}, \qquad P(\tau) = \frac{p(\tau)^\alpha}{\sum_i p(\tau_i)^\alpha}

``|delta|`` is the mean absolute TD error of the trajectory under the current value network, ``rho`` its mean
importance ratio ``pi/mu``, ``H`` its mean sampled entropy ``-log pi(a_t|s_t)``; the maxima are the largest values
observed so far (the paper normalises by the maximum observed during training). :class:`PrioritizedTrajectorySampler`
keeps the statistics of every stored trajectory, samples ids with probability ``P`` (``alpha = 0.5`` in the paper)
and says when the priorities are due to be recomputed under the latest policy (every ``refresh_interval`` updates).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PrioritizedTrajectorySampler", "TrajectoryStats", "dper_priorities", "sampling_probabilities"]


@dataclass(frozen=True)
class TrajectoryStats:
    """The three per-trajectory means a DPER priority is made of."""

    abs_td: float
    """Mean ``|r_t + gamma V(s_{t+1}) - V(s_t)|`` over the trajectory's steps."""
    rho: float
    """Mean importance ratio ``pi(a_t|s_t) / mu(a_t|s_t)``."""
    entropy: float
    """Mean sampled entropy ``-log pi(a_t|s_t)``."""

    def __post_init__(self) -> None:
        for name in ("abs_td", "rho", "entropy"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"TrajectoryStats.{name} must be a finite number >= 0, got {value!r}")


def _weights(weights: Sequence[float]) -> tuple[float, float, float]:
    if len(weights) != 3:
        raise ValueError(f"weights must be (w1, w2, w3), got {weights!r}")
    out = tuple(float(w) for w in weights)
    if not all(math.isfinite(w) and w >= 0 for w in out) or sum(out) == 0:
        raise ValueError(f"weights must be finite, >= 0 and not all 0, got {weights!r}")
    return out  # type: ignore[return-value]


def dper_priorities(
    stats: Sequence[TrajectoryStats],
    weights: Sequence[float] = (1.0, 0.5, 0.1),
    td_max: float | None = None,
    entropy_max: float | None = None,
) -> np.ndarray:
    """Priorities ``p(tau)`` of ``stats`` (see the module docstring); the maxima default to those of ``stats``."""
    w1, w2, w3 = _weights(weights)
    if not stats:
        return np.zeros(0)
    td = np.array([s.abs_td for s in stats], dtype=np.float64)
    rho = np.array([s.rho for s in stats], dtype=np.float64)
    ent = np.array([s.entropy for s in stats], dtype=np.float64)
    td_scale = float(td.max()) if td_max is None else float(td_max)
    ent_scale = float(ent.max()) if entropy_max is None else float(entropy_max)
    td_n = td / td_scale if td_scale > 0 else np.zeros_like(td)
    ent_n = ent / ent_scale if ent_scale > 0 else np.zeros_like(ent)
    return w1 * np.minimum(td_n, 1.0) + w2 * np.minimum(rho, 1.0) + w3 * np.minimum(ent_n, 1.0)


def sampling_probabilities(priorities: Sequence[float] | np.ndarray, alpha: float = 0.5,
                           eps: float = 1e-6) -> np.ndarray:
    """``P_i = (p_i + eps)^alpha / sum_j (p_j + eps)^alpha``; ``eps`` keeps a zero-priority trajectory drawable."""
    p = np.asarray(priorities, dtype=np.float64)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"priorities must be a non-empty 1-D sequence, got shape {p.shape}")
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError("priorities must be finite and >= 0")
    if not (isinstance(alpha, (int, float)) and 0 <= alpha <= 1):
        raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
    scaled = (p + eps) ** alpha
    return scaled / scaled.sum()


class PrioritizedTrajectorySampler:
    """Trajectory ids with DPER priorities: add, score, sample in proportion to ``p^alpha``, refresh periodically."""

    def __init__(self, weights: Sequence[float] = (1.0, 0.5, 0.1), alpha: float = 0.5, refresh_interval: int = 10,
                 capacity: int | None = None, eps: float = 1e-6) -> None:
        """``refresh_interval``: learner updates between recomputations; ``capacity``: oldest ids drop beyond it."""
        self.weights = _weights(weights)
        if not (isinstance(alpha, (int, float)) and 0 <= alpha <= 1):
            raise ValueError(f"alpha must be in [0, 1], got {alpha!r}")
        if isinstance(refresh_interval, bool) or not isinstance(refresh_interval, int) or refresh_interval < 1:
            raise ValueError(f"refresh_interval must be a positive integer, got {refresh_interval!r}")
        if capacity is not None and (isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1):
            raise ValueError(f"capacity must be None or a positive integer, got {capacity!r}")
        self.alpha = float(alpha)
        self.refresh_interval = refresh_interval
        self.capacity = capacity
        self.eps = float(eps)
        self._stats: dict[str, TrajectoryStats | None] = {}
        self.td_max = 0.0
        self.entropy_max = 0.0
        self.last_refresh = 0

    def __len__(self) -> int:
        return len(self._stats)

    @property
    def ids(self) -> list[str]:
        """The stored trajectory ids, oldest first."""
        return list(self._stats)

    def add(self, trajectory_id: str, stats: TrajectoryStats | None = None) -> None:
        """Store a trajectory; without stats it gets the highest current priority until it is scored."""
        if not isinstance(trajectory_id, str) or not trajectory_id:
            raise ValueError(f"trajectory_id must be a non-empty string, got {trajectory_id!r}")
        self._stats.pop(trajectory_id, None)
        self._stats[trajectory_id] = None
        if stats is not None:
            self.update(trajectory_id, stats)
        if self.capacity is not None:
            while len(self._stats) > self.capacity:
                self._stats.pop(next(iter(self._stats)))

    def update(self, trajectory_id: str, stats: TrajectoryStats) -> None:
        """Set the statistics of a stored trajectory (and grow the observed maxima)."""
        if trajectory_id not in self._stats:
            raise KeyError(f"unknown trajectory id {trajectory_id!r}")
        if not isinstance(stats, TrajectoryStats):
            raise TypeError(f"stats must be a TrajectoryStats, got {type(stats).__name__}")
        self._stats[trajectory_id] = stats
        self.td_max = max(self.td_max, stats.abs_td)
        self.entropy_max = max(self.entropy_max, stats.entropy)

    def remove(self, trajectory_id: str) -> None:
        """Forget a trajectory (no error when it is not stored)."""
        self._stats.pop(trajectory_id, None)

    def priorities(self) -> np.ndarray:
        """``p(tau)`` of every stored id, in :attr:`ids` order (unscored ids get the current maximum, or 1)."""
        ids = self.ids
        scored = [i for i in ids if self._stats[i] is not None]
        values = dper_priorities([self._stats[i] for i in scored], self.weights,  # type: ignore[misc]
                                 td_max=self.td_max, entropy_max=self.entropy_max)
        by_id = dict(zip(scored, values.tolist()))
        top = max(by_id.values(), default=1.0) or 1.0
        return np.array([by_id.get(i, top) for i in ids], dtype=np.float64)

    def probabilities(self) -> np.ndarray:
        """Sampling probabilities ``P(tau)`` in :attr:`ids` order."""
        return sampling_probabilities(self.priorities(), self.alpha, self.eps)

    def sample(self, n: int, rng: np.random.Generator) -> list[str]:
        """``n`` ids drawn with replacement with probability ``P(tau)``."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be an integer >= 0, got {n!r}")
        if not self._stats:
            raise ValueError("the sampler holds no trajectories")
        ids = self.ids
        picks = rng.choice(len(ids), size=n, replace=True, p=self.probabilities())
        return [ids[int(i)] for i in picks]

    def needs_refresh(self, update_step: int) -> bool:
        """Whether ``refresh_interval`` updates have passed since the last recomputation (or some ids are unscored)."""
        return update_step - self.last_refresh >= self.refresh_interval or any(s is None for s in self._stats.values())

    def mark_refreshed(self, update_step: int) -> None:
        """Record that every priority was recomputed at ``update_step``."""
        self.last_refresh = int(update_step)

    def state_dict(self) -> dict[str, Any]:
        """Everything an exact resume needs (JSON-safe)."""
        return {"stats": [[i, None if s is None else [s.abs_td, s.rho, s.entropy]] for i, s in self._stats.items()],
                "td_max": self.td_max, "entropy_max": self.entropy_max, "last_refresh": self.last_refresh}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore :meth:`state_dict`."""
        self._stats = {i: None if s is None else TrajectoryStats(*s) for i, s in state["stats"]}
        self.td_max = float(state["td_max"])
        self.entropy_max = float(state["entropy_max"])
        self.last_refresh = int(state["last_refresh"])
