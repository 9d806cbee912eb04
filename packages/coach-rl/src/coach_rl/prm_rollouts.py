"""PRM training rows from the policy's own rollouts, labelled with what a deployment knows.

A PRM trained only on the sim expert's states (``coach-reward demo``) judges the states a policy reaches poorly: on
the long-task study's rollouts its ``r_p`` separated the expert's actions from the others with an AUC of 0.58
(docs/studies/2026-11-29-prm-on-rollouts.md). A run folder's replay buffer holds every step the policy took, with
the episode's outcome; :func:`rollout_prm_rows` turns them into rows of ``coach_reward``'s PRM dataset schema, so
``coach-reward train-prm`` can train (or go on training) a PRM on them and ``coach-reward eval`` can score one there.

Labels (``labels``):

* ``outcome``: the step is correct when its episode succeeded (the task's check or the run's verifier, as the run
  recorded it) and its reply parsed. A deployment has this label; it is noisy (a successful episode's detours are
  labelled correct, a failed episode's right steps wrong).
* ``oracle``: the simulated phone's expert match (``expert_match``: the action is the expert's next one). A
  DIAGNOSTIC, to measure a PRM against; refused for steps without it and never a deployment's label.

Each row's prompt is the one the run scores ``r_p`` with (``coach_rl.rewards``): the episode's instruction, the
screen's UI text, the earlier steps' actions and the step's action, each written by
:func:`coach_reward.prompts.describe_action`.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

__all__ = ["LABEL_SOURCES", "rollout_prm_rows", "save_rollout_prm_dataset"]

LABEL_SOURCES = ("outcome", "oracle")
"""What a row's label is taken from (module docstring)."""

_DEFAULT_SCREEN = (1080, 2400)


def _replay_folder(run: str | os.PathLike[str]) -> Path:
    """A run folder's replay buffer (``RUN/replay``), or the buffer folder itself."""
    path = Path(run)
    if (path / "replay").is_dir():
        return path / "replay"
    if path.is_dir() and any(p.suffix == ".parquet" for p in path.iterdir()):
        return path
    raise FileNotFoundError(f"{path} is neither a run folder with a replay/ buffer nor a replay buffer folder")


def _screen_size(oracle: str | None) -> tuple[int, int]:
    if oracle:
        try:
            size = json.loads(oracle).get("screen_size")
            if size and len(size) == 2:
                return int(size[0]), int(size[1])
        except (ValueError, TypeError, AttributeError):
            pass
    return _DEFAULT_SCREEN


def rollout_prm_rows(
    runs: Iterable[str | os.PathLike[str]],
    labels: Literal["outcome", "oracle"] = "outcome",
) -> list[dict[str, Any]]:
    """One PRM-dataset row per stored step of the runs' replay buffers, labelled from ``labels``.

    ``runs`` are run folders (or their ``replay/`` folders); their buffers are read, never changed. Rows follow
    ``coach_reward.prm_data.prm_features()``; ``source`` is ``rollout:<run folder name>``, ``episode_id`` the
    trajectory id and ``match_reason`` says where the label came from.
    """
    from coach_reward.prm_data import prm_features
    from coach_reward.prompts import describe_action
    from coach_rl.replay import ReplayBuffer

    if labels not in LABEL_SOURCES:
        raise ValueError(f"labels must be one of {LABEL_SOURCES}, got {labels!r}")
    columns = list(prm_features())
    rows: list[dict[str, Any]] = []
    for run in runs:
        folder = _replay_folder(run)
        buffer = ReplayBuffer(folder, read_only=True)  # another run's buffer (maybe still being written): touch nothing
        by_episode: dict[str, list[Any]] = defaultdict(list)
        for step in buffer.states():
            by_episode[step.trajectory_id].append(step)
        name = Path(run).as_posix()
        for episode_id, steps in by_episode.items():
            steps.sort(key=lambda s: s.step_index)
            success = bool(steps[0].success >= 1.0)
            history: list[str] = []
            for step in steps:
                action_text = describe_action(step.action if step.action is not None else step.response)
                if labels == "outcome":
                    label = success and step.action is not None
                    reason = ("outcome: the episode succeeded" if label else
                              "outcome: the reply did not parse" if step.action is None else
                              "outcome: the episode failed")
                else:
                    if step.expert_match is None:
                        raise ValueError(f"{folder}: step {step.step_index} of {episode_id} has no expert_match; "
                                         "labels='oracle' needs runs on the simulated phone with oracle_diagnostics")
                    label = bool(step.expert_match >= 0.5)
                    reason = "oracle: the sim expert's next action" if label else "oracle: not the expert's action"
                width, height = _screen_size(step.oracle)
                row = {
                    "id": f"rollout:{name}:{episode_id}:{step.step_index}", "source": f"rollout:{name}",
                    "episode_id": episode_id, "task": step.task, "app": "", "step_index": int(step.step_index),
                    "instruction": step.instruction, "step_instruction": "", "ui": step.ui, "screenshot": None,
                    "screen_width": width, "screen_height": height, "history": list(history),
                    "expert_action": "", "expert_action_json": "", "candidate_index": 0, "thought": "",
                    "action_text": action_text,
                    "action_json": (json.dumps(step.action.to_dict(), ensure_ascii=False, sort_keys=True)
                                    if step.action is not None else ""),
                    "action_type": step.action.type if step.action is not None else "invalid",
                    "parse_error": step.parse_error or "", "label": label, "match_reason": reason, "rationale": "",
                }
                rows.append({k: row[k] for k in columns})
                history.append(action_text)
    return rows


def save_rollout_prm_dataset(rows: Sequence[dict[str, Any]], output_dir: str | os.PathLike[str]) -> dict[str, Path]:
    """Write rows of :func:`rollout_prm_rows` as a PRM dataset folder that ``coach-reward train-prm`` and ``eval`` read."""
    import datasets

    from coach_reward.prm_data import prm_features, save_prm_dataset

    if not rows:
        raise ValueError("no rollout steps to write: the runs' replay buffers are empty")
    data = datasets.Dataset.from_list(list(rows), features=prm_features())
    return save_prm_dataset(data, output_dir)
