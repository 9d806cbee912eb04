"""How well the critic learns to rank actions in pre-training: fit on its own data, ranking on held-out instances.

The main job pre-trains Android Coach's critic on the warm-up policy's answers at the expert's demonstrated states
(paper Appendix B). This tool rebuilds that data from a warm-up checkpoint, labelled by the expert action match (the
labels the PRM approximates), and pre-trains fresh critics (copies of the checkpoint's policy backbone) in several
variants side by side, one process per variant, one torch thread each. Per variant it prints:

- ``train_acc`` beside ``majority`` (the share of the larger class): a critic whose training accuracy equals the
  majority share has learned the label prior and nothing else;
- ``train_auc``: how well it orders its own training pairs;
- ``test_auc`` and ``test_auc_within``: on held-out task instances (evaluation seeds), pooled and within each
  state's group of candidates (the comparison ACLOO makes);
- the loss curve in eight chunks and the spread of Q on the held-out pairs.

Variants (``--variants``, default all): ``base`` (the main job's settings before this tool: plain shuffled passes,
lr 3e-4, 400 steps), ``balanced`` (``critic_pretrain_balanced``), ``targets`` (``critic_action_targets``),
``balanced_targets`` (both), ``paired_targets`` (``critic_pretrain_paired``: each correct action paired with a
wrong one of its own state, and targets; also at lr 6e-4 and with 800 steps), ``base_800`` and
``balanced_targets_800`` (twice the steps), ``base_lr1e-3``.

``--screen-negatives`` builds the training data with ``critic_pretrain_screen_negatives`` and ``--samples`` sets
``critic_pretrain_samples``.

Usage (about 4 minutes a variant on one free core; variants run in parallel up to ``--jobs``)::

    .venv/bin/python tools/bench/critic_fit.py runs/main_job/warmup/checkpoints/iter-000000 --out /tmp/critic_fit.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import time
from pathlib import Path
from typing import Any

VARIANTS: dict[str, dict[str, Any]] = {
    "base": {},
    "balanced": {"balanced": True},
    "targets": {"targets": True},
    "balanced_targets": {"balanced": True, "targets": True},
    "base_800": {"steps": 800},
    "balanced_targets_800": {"balanced": True, "targets": True, "steps": 800},
    "base_lr1e-3": {"lr": 1e-3},
    "paired_targets": {"paired": True, "targets": True},
    "paired_targets_lr6e-4": {"paired": True, "targets": True, "lr": 6e-4},
    "paired_targets_800": {"paired": True, "targets": True, "steps": 800},
}


def build_data(checkpoint: Path, config_name: str, held_out_instances: int,
               samples: int | None = None, screen_negatives: bool = False) -> dict[str, Any]:
    """Training triples at the SFT demonstration states, held-out triples at evaluation-seed states (match labels)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from coach_rl.components import make_policy, run_policy_format
    from coach_rl.configs import load_config
    from coach_rl.critic_data import critic_pretrain_examples
    from coach_rl.demos import collect_demos
    from coach_rl.warmup import collect_run_demos

    config = load_config(config_name)
    tasks = list(config.coach.tasks or [])
    model = AutoModelForCausalLM.from_pretrained(checkpoint / "policy")
    tokenizer = AutoTokenizer.from_pretrained(checkpoint / "policy")
    policy = make_policy(model, tokenizer, config)
    demos = collect_run_demos(config, tasks)
    held = collect_demos(run_policy_format(config), tasks, seeds=range(1_000_000, 1_000_000 + held_out_instances))
    args = config.coach  # the pre-training data settings of Android Coach's Q critic (QCriticArguments)
    train = critic_pretrain_examples(policy, demos,
                                     samples=args.critic_pretrain_samples if samples is None else samples,
                                     contrast=args.critic_pretrain_contrast, seed=0, labels="match",
                                     screen_negatives=screen_negatives)
    test = critic_pretrain_examples(policy, held, samples=6, contrast=0, seed=1, labels="match")
    return {"train": train, "test": test}


def auc(labels: list[int], scores: list[float]) -> float:
    """Pooled AUC (ties count half; NaN without both labels): the diagnostics' ``binary_auc``."""
    from coach_rl.diagnostics import binary_auc

    return binary_auc(scores, [y == 1 for y in labels])


def auc_within(examples: list[tuple[str, str, int]], scores: list[float]) -> float:
    """AUC over the (correct, wrong) pairs of candidates that share a state."""
    groups: dict[str, list[tuple[float, int]]] = {}
    for (state, _, y), q in zip(examples, scores):
        groups.setdefault(state, []).append((q, y))
    pairs = good = 0.0
    for group in groups.values():
        for qa, ya in group:
            for qb, yb in group:
                if ya == 1 and yb == 0:
                    pairs += 1
                    good += (qa > qb) + 0.5 * (qa == qb)
    return good / pairs if pairs else float("nan")


def run_variant(job: tuple[str, dict[str, Any], str, str, int]) -> dict[str, Any]:
    """Pre-train one fresh critic with ``critic_pretrain`` (the shipped code) and measure it."""
    name, spec, checkpoint, data_path, seed = job
    import pickle

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from coach_rl.critic import Critic, critic_pretrain

    torch.set_num_threads(1)
    with open(data_path, "rb") as handle:
        data = pickle.load(handle)
    train, test = data["train"], data["test"]
    model = AutoModelForCausalLM.from_pretrained(Path(checkpoint) / "policy")
    tokenizer = AutoTokenizer.from_pretrained(Path(checkpoint) / "policy")
    critic = Critic.from_pretrained_lm(model, tokenizer, seed=seed, action_targets=bool(spec.get("targets")))
    steps, lr, batch = int(spec.get("steps", 400)), float(spec.get("lr", 3e-4)), 8
    started = time.perf_counter()
    result = critic_pretrain(critic, train, learning_rate=lr, epochs=max(1, -(-steps * batch // len(train))),
                             batch_size=batch, max_steps=steps, warmup_ratio=0.0, seed=seed,
                             balanced=bool(spec.get("balanced")), paired=bool(spec.get("paired")))
    with torch.no_grad():
        q_train = critic.score([s for s, _, _ in train], [a for _, a, _ in train]).tolist()
        q_test = critic.score([s for s, _, _ in test], [a for _, a, _ in test]).tolist()
    y_train = [int(y) for _, _, y in train]
    y_test = [int(y) for _, _, y in test]
    chunk = max(1, steps // 8)
    curve = [round(sum(result.losses[i:i + chunk]) / len(result.losses[i:i + chunk]), 4)
             for i in range(0, len(result.losses), chunk)]
    return {
        "variant": name, **{k: spec[k] for k in sorted(spec)}, "seed": seed,
        "train_examples": len(train), "train_positives": sum(y_train),
        "train_acc": round(result.accuracy, 3), "majority": round(max(sum(y_train), len(y_train) - sum(y_train))
                                                                 / len(y_train), 3),
        "train_auc": round(auc(y_train, q_train), 3),
        "test_examples": len(test), "test_auc": round(auc(y_test, q_test), 3),
        "test_auc_within": round(auc_within(test, q_test), 3),
        "q_std_test": round(float(torch.tensor(q_test).std()), 3), "loss_curve": curve,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoint", type=Path, help="a warm-up checkpoint folder (with policy/)")
    parser.add_argument("--config", default="main", help="run config whose tasks and data settings to use (main)")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0], help="critic seeds per variant (0)")
    parser.add_argument("--held-out-instances", type=int, default=6, help="evaluation seeds per task (6)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="variants trained at once")
    parser.add_argument("--samples", type=int, help="policy answers sampled per training state (default: the "
                        "config's critic_pretrain_samples)")
    parser.add_argument("--screen-negatives", action="store_true", help="training data with "
                        "critic_pretrain_screen_negatives (other goals' answers on the same screen)")
    parser.add_argument("--data", type=Path, help="reuse (or write) the pickled data here")
    parser.add_argument("--out", type=Path, help="write the JSON list of results here too")
    args = parser.parse_args(argv)
    if not (args.checkpoint / "policy").is_dir():
        parser.error(f"{args.checkpoint} is not a warm-up checkpoint: it has no policy/ folder")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import pickle
    import tempfile

    data_path = args.data or Path(tempfile.mkdtemp(prefix="critic-fit-")) / "data.pkl"
    if not data_path.is_file():
        started = time.perf_counter()
        data = build_data(args.checkpoint, args.config, args.held_out_instances, args.samples,
                          args.screen_negatives)
        data_path.parent.mkdir(parents=True, exist_ok=True)
        with open(data_path, "wb") as handle:
            pickle.dump(data, handle)
        print(f"data: {len(data['train'])} training and {len(data['test'])} held-out pairs "
              f"({time.perf_counter() - started:.0f} s) -> {data_path}", file=sys.stderr)
    jobs = [(name, VARIANTS[name], str(args.checkpoint), str(data_path), seed)
            for name in args.variants for seed in args.seeds]
    results = []
    with mp.get_context("spawn").Pool(max(1, min(args.jobs, len(jobs)))) as pool:
        for result in pool.imap_unordered(run_variant, jobs):
            print(json.dumps(result), flush=True)
            results.append(result)
    results.sort(key=lambda r: (args.variants.index(r["variant"]), r["seed"]))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
