"""Building the run's Gymnasium envs (shared by the training loop, evaluation and benchmarks)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["make_envs"]


def make_envs(env_id: str, n: int, *, tasks: Sequence[str] | None = None,
              env_kwargs: dict[str, Any] | None = None) -> list[Any]:
    """``n`` Gymnasium envs of ``env_id`` over ``tasks`` (passed as the env's ``task`` list) with ``env_kwargs``.

    Gymnasium's env checker stays on: it checks the first reset and step of each env against the spaces the
    env declares, which is what the collector relies on.
    """
    import gymnasium as gym

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    kwargs = dict(env_kwargs or {})
    if tasks is not None:
        kwargs["task"] = list(tasks)
    return [gym.make(env_id, **kwargs) for _ in range(n)]
