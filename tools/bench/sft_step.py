"""Seconds per step of the main job's two fine-tunes, TRL's ``SFTTrainer`` against our CPU loss, side by side.

The main job fine-tunes twice with TRL's ``SFTTrainer``: the PRM on its verdicts (``coach_reward.train_prm``, in
``coach-reward demo``) and the policy's warm-up on expert actions (``coach_rl.sft.sft_warmup``). On a device without
Triton, TRL's fused LM head scores every position of a batch and masks the prompt's afterwards; both use
``coach_reward.completion_loss.completion_only_sft_trainer``, a subclass that projects only the completion's positions
on CPU (the same loss and gradients, see tests/coach_reward/test_completion_loss.py). This tool times ``--steps``
steps of each fine-tune with each trainer, alternating ``--repeats`` times in one process (same data, same seed),
and prints JSON: seconds per step of each run, the training loss (equal for both up to float rounding), and the
speed-up of the medians.

    .venv/bin/python tools/bench/sft_step.py [--config main] [--steps 30] [--repeats 2] [--threads 1] [--what both]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
from collections.abc import Callable
from typing import Any

import torch

import coach_rl.sft as sft
from coach_reward import completion_loss
from coach_reward.prm_training import run_prm_demo
from coach_rl.components import build_policy_model, make_policy, run_training_tasks
from coach_rl.configs import load_config
from coach_rl.warmup import collect_run_demos


def _warmup_step(config: Any, demos: Any, steps: int) -> dict[str, float]:
    model, tokenizer = build_policy_model(config, demos)
    policy = make_policy(model, tokenizer, config)
    result = sft.sft_warmup(model, tokenizer, demos.examples(policy), max_steps=steps,
                            learning_rate=config.loop.sft_learning_rate,
                            per_device_train_batch_size=config.loop.sft_batch_size, seed=0)
    return {"seconds_per_step": round(result.seconds / steps, 3), "train_loss": round(result.train_loss, 5)}


def _prm_step(tasks: list[str], steps: int) -> dict[str, float]:
    """The main job's PRM (``coach-reward demo --size ci --instances 8 --held-out instances``), ``steps`` steps."""
    result = run_prm_demo("ci", seed=0, tasks=tasks, held_out="instances", train_tasks=tasks,
                          overrides={"instances": 8, "max_steps": steps})
    return {"seconds_per_step": round(result.training.seconds / steps, 3),
            "train_loss": round(result.training.train_loss, 5)}


def _side_by_side(run: Callable[[], dict[str, float]], repeats: int) -> dict[str, Any]:
    from trl import SFTTrainer

    trainers = {"trl": lambda: SFTTrainer, "ours": completion_loss.completion_only_sft_trainer}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trainers}
    original = (completion_loss.completion_only_sft_trainer, sft.completion_only_sft_trainer)
    try:
        for _ in range(repeats):
            for name, trainer_class in trainers.items():
                completion_loss.completion_only_sft_trainer = sft.completion_only_sft_trainer = trainer_class
                with contextlib.redirect_stdout(sys.stderr):  # the trainers' log lines; stdout is the JSON
                    runs[name].append(run())
    finally:
        completion_loss.completion_only_sft_trainer, sft.completion_only_sft_trainer = original
    median = {name: statistics.median(r["seconds_per_step"] for r in rows) for name, rows in runs.items()}
    return {"runs": runs, "median_seconds_per_step": median, "speedup": round(median["trl"] / median["ours"], 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="main")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--what", choices=("both", "warmup", "prm"), default="both")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    out: dict[str, Any] = {"config": args.config, "steps": args.steps, "threads": args.threads}
    with tempfile.TemporaryDirectory() as scratch:
        config = load_config(args.config, [f"output_dir={scratch}"])
        if args.what in ("both", "prm"):
            tasks = list(config.coach.tasks or [])
            out["prm"] = _side_by_side(lambda: _prm_step(tasks, args.steps), args.repeats)
        if args.what in ("both", "warmup"):
            demos = collect_run_demos(config, run_training_tasks(config))
            out["warmup"] = {"examples": len(demos), **_side_by_side(lambda: _warmup_step(config, demos, args.steps),
                                                                     args.repeats)}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
