"""A run's checkpoints and the run-folder files beside them, written and read here so the loop only says when."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import torch

from coach_rl.configs import RunConfig, load_config
from coach_rl.evaluation import EvalReport
from coach_rl.run import RunDir, capture_rng_state, snapshot_replay

__all__ = [
    "ALGORITHM_DIR",
    "BEST_DIR_NAME",
    "BEST_INFO_NAME",
    "DRIFT_PROBE_NAME",
    "LOOP_STATE_NAME",
    "POLICY_DIR",
    "check_resume_config",
    "clear_run_folder",
    "link_tree",
    "read_loop_state",
    "replace_dir",
    "restore_best_folder",
    "restore_eval_before",
    "write_checkpoint",
]

DRIFT_PROBE_NAME = "drift_probe.pt"
"""Run-folder file of the KL probe (the warm-up policy's replies and distributions on fixed probe states)."""
LOOP_STATE_NAME = "loop_state.pt"
"""Checkpoint file with the loop counters, the loop's sampling generator and the global RNG states."""
POLICY_DIR = "policy"
"""Checkpoint (and ``best/``) folder of the policy model and its tokenizer."""
ALGORITHM_DIR = "algorithm"
"""Checkpoint folder of what the algorithm's ``save`` writes."""
BEST_DIR_NAME = "best"
"""Run-folder (and checkpoint) folder of the best policy by validation: ``policy/`` and ``best.json``."""
BEST_INFO_NAME = "best.json"
"""File in ``best/``: the best policy's iteration, validation success and validation report."""
_WHERE_KEYS = ("ray_address",)
"""Settings a resumed run may change: where it runs, not what it computes (a new Ray head after the old one died)."""


def link_tree(src: Path, dst: Path) -> None:
    """A copy of the folder ``src`` at ``dst`` made of hard links (copies where links fail)."""
    from coach_rl.run import _link_or_copy

    for item in sorted(src.rglob("*")):
        target = dst / item.relative_to(src)
        if item.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            _link_or_copy(item, target)


def replace_dir(new: Path, target: Path) -> None:
    """Put the folder ``new`` at ``target`` (two renames; the old one goes after)."""
    old = target.with_name(f".tmp-old-{target.name}-{os.getpid()}")
    if old.exists():
        shutil.rmtree(old)
    if target.exists():
        os.replace(target, old)
    os.replace(new, target)
    if old.exists():
        shutil.rmtree(old)


def check_resume_config(run: RunDir, config: RunConfig) -> None:
    """A ValueError when the run folder holds a run configured otherwise (beyond where it runs)."""
    # a run saved before the configs were per algorithm wrote Coach's critic keys whatever its algorithm
    saved = load_config(run.read_config(), drop_unowned=True)
    diff = saved.differences(config, ignore=_WHERE_KEYS)
    # a run folder that was moved or copied: its own path, and paths inside it (the replay buffer), moved with it
    old_home, new_home = str(saved.coach.output_dir), str(config.coach.output_dir)
    diff = {k: (a, b) for k, (a, b) in diff.items() if not (k == "output_dir" or _same_place(a, b, old_home, new_home))}
    if diff:
        shown = "; ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in list(diff.items())[:8])
        raise ValueError(
            f"{run.path} holds a run with a different configuration ({shown}); resume it with the same "
            "configuration, or pick another output_dir (or pass fresh=True / --fresh to start over)"
        )


def _same_place(a: Any, b: Any, old_home: str, new_home: str) -> bool:
    """True when paths ``a`` and ``b`` lie at the same place inside run folders ``old_home`` and ``new_home``."""
    if not (isinstance(a, str) and isinstance(b, str)):
        return False
    inside = [os.path.relpath(path, home) for path, home in ((a, old_home), (b, new_home))]
    return inside[0] == inside[1] and not inside[0].startswith("..")


def clear_run_folder(run: RunDir, replay_dir: Path) -> None:
    """What a fresh start removes of an earlier run in the same folder: metrics, KL probe, evaluations, episodes,
    checkpoints, best policy and replay buffer."""
    for item in (run.metrics_path, run.path / DRIFT_PROBE_NAME, *run.path.glob("eval_*.json")):
        item.unlink(missing_ok=True)
    if (run.path / "episodes").exists():
        shutil.rmtree(run.path / "episodes")
    if run.checkpoints_dir.exists():
        shutil.rmtree(run.checkpoints_dir)
        run.checkpoints_dir.mkdir()
    if (run.path / BEST_DIR_NAME).exists():
        shutil.rmtree(run.path / BEST_DIR_NAME)
    if replay_dir.exists():
        shutil.rmtree(replay_dir)


def write_checkpoint(run: RunDir, state: Any, manifest: Mapping[str, Any], *, model: Any, tokenizer: Any,
                     algorithm: Any, replay: Any, loop_rng: np.random.Generator, stats: Mapping[str, Any],
                     eval_before: EvalReport | None) -> Path:
    """Write the checkpoint of ``state.iteration`` (``state``: the loop's :class:`coach_rl.loop.LoopState`)."""
    with run.checkpoint(state.iteration, manifest) as tmp:
        model.save_pretrained(tmp / POLICY_DIR)
        tokenizer.save_pretrained(tmp / POLICY_DIR)
        algorithm.save(tmp / ALGORITHM_DIR)
        snapshot_replay(replay, tmp)
        torch.save({"state": asdict(state), "rng": capture_rng_state(),
                    "loop_rng": loop_rng.bit_generator.state, "stats": json.loads(json.dumps(stats, default=str))},
                   tmp / LOOP_STATE_NAME)
        best = run.path / BEST_DIR_NAME
        if state.best_iteration is not None and (best / BEST_INFO_NAME).is_file():
            link_tree(best, tmp / BEST_DIR_NAME)  # hard links: the best policy costs no space here
        if eval_before is not None:
            (tmp / "eval_before.json").write_text(eval_before.to_json())
            sampled = run.path / "eval_before_sampled.json"
            if sampled.is_file():
                shutil.copyfile(sampled, tmp / sampled.name)
    return run.checkpoint_path(state.iteration)


def read_loop_state(checkpoint: Path) -> dict[str, Any]:
    """What :func:`write_checkpoint` saved of the loop: ``state`` (the counters), ``stats``, ``rng``, ``loop_rng``."""
    return torch.load(checkpoint / LOOP_STATE_NAME, map_location="cpu", weights_only=True)


def restore_eval_before(checkpoint: Path, run_path: Path) -> EvalReport | None:
    """The evaluation before training the checkpoint holds, put back in the run folder (with its sampled one)."""
    if not (checkpoint / "eval_before.json").is_file():
        return None
    report = EvalReport.from_dict(json.loads((checkpoint / "eval_before.json").read_text()))
    (run_path / "eval_before.json").write_text(report.to_json())
    if (checkpoint / "eval_before_sampled.json").is_file():
        shutil.copyfile(checkpoint / "eval_before_sampled.json", run_path / "eval_before_sampled.json")
    return report


def restore_best_folder(run_path: Path, checkpoint: Path) -> None:
    """Make ``best/`` the best policy the checkpoint knows: one saved after it (by iterations a resumed run
    redoes) is dropped, so the folder always matches ``state.best_iteration``."""
    best = run_path / BEST_DIR_NAME
    saved = checkpoint / BEST_DIR_NAME
    if saved.is_dir():
        tmp = run_path / f".tmp-best-{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp)
        link_tree(saved, tmp)
        replace_dir(tmp, best)
    elif best.exists():
        shutil.rmtree(best)
