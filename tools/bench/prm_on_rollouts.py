"""How well a PRM judges the policy's own steps, before and after training it on outcome-labelled rollouts.

Issue 36 (packages/coach-rl/docs/studies/2026-11-29-prm-on-rollouts.md). Given finished runs (e.g. a `coach-rl sweep`'s
final runs) and the PRM they scored r_p with:

1. `coach-rl prm-data`: the runs of the train seeds -> rows labelled by their episode's outcome (what a deployment
   knows), and labelled by the sim expert (the upper bound); the runs of the test seed -> rows labelled by the expert.
2. `coach-reward eval`: the PRM as it was, on the test rows.
3. `coach-reward train-prm --model <the PRM>`: the PRM trained further on the train rows (outcome labels; and expert
   labels, the diagnostic ceiling), each then evaluated on the test rows.

Printed and written (``--out``/result.json): per PRM, accuracy, majority-class accuracy and AUC against "this is the
expert's action" over all test steps, per task, and the share of same-screen pairs ranked right (two steps on the
same task and screen, one the expert's action and one not: the PRM should score the first higher; this is the
ranking Coach's critic inherits for the K actions it samples at one state). Run from the repository root.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path


def same_screen_pairs(tasks: Sequence[str], screens: Sequence[str], labels: Sequence[bool],
                      scores: Sequence[float]) -> tuple[float, int]:
    """Share of (correct, wrong) step pairs on the same task and screen that ``scores`` order right (ties count 1/2),
    and the number of such pairs (nan, 0 when there is none)."""
    from coach_rl.diagnostics import binary_auc

    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, key in enumerate(zip(tasks, screens)):
        groups[key].append(i)
    right = 0.0
    total = 0
    for members in groups.values():
        y = [bool(labels[i]) for i in members]
        pairs = sum(y) * (len(y) - sum(y))
        if pairs:  # a group's AUC is the share of its (correct, wrong) pairs ordered right
            right += binary_auc([scores[i] for i in members], y) * pairs
            total += pairs
    return (right / total if total else float("nan")), total


def per_task_auc(tasks: Sequence[str], labels: Sequence[bool], scores: Sequence[float]) -> dict[str, float | None]:
    """AUC of ``scores`` for ``labels`` within each task (None where a task has one class only)."""
    from coach_rl.diagnostics import binary_auc

    out: dict[str, float | None] = {}
    for task in sorted(set(tasks)):
        idx = [i for i, t in enumerate(tasks) if t == task]
        y = [bool(labels[i]) for i in idx]
        out[task] = binary_auc([float(scores[i]) for i in idx], y) if 0 < sum(y) < len(y) else None
    return out


def _run(cmd: list[str]) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def _tool(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--prm", required=True, help="the PRM folder the runs scored r_p with")
    p.add_argument("--train-runs", nargs="+", required=True, help="run folders whose rollouts train the PRM")
    p.add_argument("--test-runs", nargs="+", required=True, help="run folders whose rollouts measure it")
    p.add_argument("--out", required=True, help="output folder (datasets, PRMs, result.json)")
    p.add_argument("--steps", type=int, default=300, help="train-prm steps (default 300)")
    p.add_argument("--learning-rate", type=float, default=1e-3, help="train-prm learning rate (default 1e-3)")
    p.add_argument("--no-oracle", action="store_true", help="skip the expert-labelled ceiling")
    args = p.parse_args(argv)

    from coach_reward.prm_data import load_prm_dataset

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    prm_config = json.loads((Path(args.prm) / "prm_config.json").read_text())
    data = {"train_outcome": (args.train_runs, "outcome"), "test_oracle": (args.test_runs, "oracle")}
    if not args.no_oracle:
        data["train_oracle"] = (args.train_runs, "oracle")
    for name, (runs, labels) in data.items():
        if not (out / name).is_dir():
            _run([_tool("coach-rl"), "prm-data", *runs, "--labels", labels, "--output", str(out / name)])
    prms = {"as trained (expert demos)": Path(args.prm)}
    for labels in ["outcome"] + ([] if args.no_oracle else ["oracle"]):
        folder = out / f"prm_{labels}"
        if not (folder / "prm_config.json").is_file():
            train = [_tool("coach-reward"), "train-prm", "--data", str(out / f"train_{labels}"), "--model", args.prm,
                     "--prompt", str(prm_config.get("prompt", "paper")), "--learning-rate", str(args.learning_rate),
                     "--max-steps", str(args.steps), "--balanced-batches", "--seed", "0", "--output", str(folder),
                     "--json", str(out / f"train_{labels}.json"), "--quiet"]
            if prm_config.get("max_ui_chars") is not None:
                train += ["--max-ui-chars", str(prm_config["max_ui_chars"])]
            _run(train)
        prms[f"+ rollouts, {labels} labels" + (" (diagnostic ceiling)" if labels == "oracle" else "")] = folder
    test = load_prm_dataset(out / "test_oracle")
    tasks, screens, labels_ = list(test["task"]), list(test["ui"]), [bool(v) for v in test["label"]]
    result: dict[str, object] = {"train_runs": args.train_runs, "test_runs": args.test_runs, "test_steps": len(tasks),
                                 "test_expert_share": sum(labels_) / len(labels_), "prms": {}}
    for name, folder in prms.items():
        report = out / f"eval_{folder.name}.json"
        if not report.is_file():
            _run([_tool("coach-reward"), "eval", "--prm", str(folder), "--data", str(out / "test_oracle"), "--json",
                  str(report), "--quiet", "--max-new-tokens", "20"])
        evaluation = json.loads(report.read_text())
        scores = [float(s) for s in evaluation["scores"]]
        ranked, pairs = same_screen_pairs(tasks, screens, labels_, scores)
        metrics = evaluation["metrics"]
        result["prms"][name] = {  # type: ignore[index]
            "folder": str(folder), "accuracy": metrics["accuracy"], "majority": metrics["baseline_accuracy"],
            "auc": metrics["auc"], "same_screen_pairs_ranked_right": ranked, "same_screen_pairs": pairs,
            "auc_per_task": per_task_auc(tasks, labels_, scores)}
    (out / "result.json").write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
