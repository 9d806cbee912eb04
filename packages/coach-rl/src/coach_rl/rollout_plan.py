"""Which episodes an iteration plays (seeds and tasks): a function of the iteration alone, so a resume replays it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from coach_rl.configs import TRAIN_SEED_STRIDE, RunConfig

__all__ = ["rollout_plan", "task_probabilities"]


def rollout_plan(config: RunConfig, tasks: Sequence[str], iteration: int, episodes_per_instance: int,
                 weights: np.ndarray | None = None) -> tuple[list[int], list[dict[str, Any]]]:
    """Seeds and tasks of the episodes of ``iteration`` (1-based).

    Tasks go round-robin over ``tasks``, or with ``weights`` (:func:`task_probabilities`) are drawn from a
    generator seeded by the run's seed and the iteration; each task instance is played ``episodes_per_instance``
    times (same seed; GRPO's group of G). Episode seeds start at ``train_seed_offset + 10_000 * seed``, so runs with
    different seeds meet different task instances.
    """
    args, loop = config.coach, config.loop
    n = int(args.rollout_batch_size)
    group = int(episodes_per_instance)
    instances = max(1, n // group)
    first = (iteration - 1) * instances
    picker = np.random.default_rng([int(args.seed), iteration]) if weights is not None else None
    seeds, options = [], []
    for j in range(instances):
        index = first + j
        seed = loop.train_seed_offset + TRAIN_SEED_STRIDE * int(args.seed) + index
        if picker is not None:  # a curriculum (e.g. DGRPO's failure filtering) weighs the tasks
            task = str(picker.choice(tasks, p=weights))
        else:
            task = tasks[index % len(tasks)]
        for _ in range(group):
            seeds.append(seed)
            options.append({"task": task})
    return seeds, options


def task_probabilities(given: Mapping[str, float] | None, tasks: Sequence[str]) -> np.ndarray | None:
    """Sampling probabilities over ``tasks`` from an algorithm's curriculum (None: round-robin).

    ``given`` is what the algorithm's ``task_weights(tasks)`` said, ``{task: weight}`` (DGRPO's Failure Curriculum
    Filtering), a task it leaves out weighing 1; None or all weights equal means round-robin.
    """
    if given is None:
        return None
    w = np.array([max(0.0, float(given.get(t, 1.0))) for t in tasks])
    if w.sum() <= 0:
        raise RuntimeError("the curriculum removed every training task (all weights 0): nothing left to train on")
    if np.allclose(w, w[0]):
        return None
    return w / w.sum()
