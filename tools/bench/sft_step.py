"""Seconds per SFT step of the main job's warm-up: TRL's ``SFTTrainer`` against coach-rl's CPU loss, side by side.

The main job's SFT (``coach_rl.sft.sft_warmup``) runs TRL's ``SFTTrainer``. On a device without Triton, TRL's fused
LM head scores every position of a batch and masks the prompt's afterwards; ``sft_warmup`` uses a subclass that
projects only the completion's positions on CPU (the same loss and gradients, see tests/coach_rl/test_sft.py). This
tool builds the main job's tiny policy on its demonstrations and times ``--steps`` SFT steps with each trainer,
alternating ``--repeats`` times in one process (same data, same seed), and prints JSON: seconds per step of each run,
the mean training loss (equal for both), and the speed-up of the medians.

    .venv/bin/python tools/bench/sft_step.py [--config main] [--steps 30] [--repeats 2] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile

import torch

import coach_rl.sft as sft
from coach_rl.configs import load_config
from coach_rl.loop import TrainingLoop, _collect_demos, build_policy_model, make_policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="main")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    from trl import SFTTrainer

    with tempfile.TemporaryDirectory() as scratch:
        config = load_config(args.config, [f"output_dir={scratch}"])
        loop = TrainingLoop(config, progress=False)
        demos = _collect_demos(config, loop.tasks)
        trainers = {"trl": lambda: SFTTrainer, "coach_rl": sft._completion_trainer_class}
        runs: dict[str, list[dict[str, float]]] = {name: [] for name in trainers}
        original = sft._completion_trainer_class
        try:
            for _ in range(args.repeats):
                for name, trainer_class in trainers.items():
                    model, tokenizer = build_policy_model(config, demos)
                    policy = make_policy(model, tokenizer, config)
                    sft._completion_trainer_class = trainer_class
                    result = sft.sft_warmup(model, tokenizer, demos.examples(policy), max_steps=args.steps,
                                            learning_rate=config.loop.sft_learning_rate,
                                            per_device_train_batch_size=config.loop.sft_batch_size, seed=0)
                    runs[name].append({"seconds_per_step": round(result.seconds / args.steps, 3),
                                       "train_loss": round(result.train_loss, 5)})
        finally:
            sft._completion_trainer_class = original
    median = {name: statistics.median(r["seconds_per_step"] for r in rows) for name, rows in runs.items()}
    print(json.dumps({"config": args.config, "steps": args.steps, "threads": args.threads, "examples": len(demos),
                      "runs": runs, "median_seconds_per_step": median,
                      "speedup": round(median["trl"] / median["coach_rl"], 2)}, indent=2))


if __name__ == "__main__":
    main()
