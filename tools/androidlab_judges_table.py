"""Write the table (packages/android-gym/docs/androidlab-on-sim.md) of AndroidLab's tasks on the simulated phone, scored by AndroidLab's own judges.

For every AndroidLab task the sim re-creates (``android_gym.list_tasks("androidlab")``) the scripted
expert plays it on ``AndroidLab-v0`` (device "sim"), which exports AndroidLab trace folders; AndroidLab's
offline evaluator (its ``Evaluation_Task`` and per-task judges, from a vendored checkout, run through
``tests/android_gym/androidlab_evaluator.py`` in a subprocess) scores them. Query tasks go to its LLM
judge, which cannot run offline, so they are counted apart. Per app: AndroidLab's tasks (with a rule
judge), those the sim re-creates, those whose rule judge passes the expert, and those it does not with
the reason (``android_gym.suites.androidlab.JUDGE_GAPS``). The table replaces the text between the
marker lines of packages/android-gym/docs/androidlab-on-sim.md. Prints a JSON summary.

    .venv/bin/python tools/androidlab_judges_table.py [--android-lab ../shared/vendor/android_lab] [--check]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import warnings
from collections import defaultdict
from pathlib import Path

from readme_tables import replace_readme_block  # tools/readme_tables.py (this script's folder)

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "packages" / "android-gym" / "docs" / "androidlab-on-sim.md"
EVALUATOR = ROOT / "tests" / "android_gym" / "androidlab_evaluator.py"
BEGIN = "<!-- androidlab-judges-table:begin (tools/androidlab_judges_table.py writes this) -->"
END = "<!-- androidlab-judges-table:end -->"


def expert_scores(names: list[str], config: Path, traces: Path) -> dict[str, float]:
    """Play each task's expert on AndroidLab-v0 (sim), recording AndroidLab traces under ``traces``."""
    from android_gym import AndroidEnv

    env = AndroidEnv(suite="androidlab", tasks_path=config, record_dir=traces, screenshot=True)
    scores = {}
    for name in names:
        env.reset(seed=0, options={"task": name})
        info: dict = {}
        for _ in range(60):
            _, _, terminated, truncated, info = env.step(env.expert_action())
            if terminated or truncated:
                break
        scores[name] = float(info.get("success") or 0.0)
    env.close()
    return scores


def judge(android_lab: Path, traces: Path, out: Path, names: list[str]) -> dict[str, dict]:
    """AndroidLab's evaluator over the traces: ``{task_id: its result dict}`` (rule-judged tasks only)."""
    run = subprocess.run([sys.executable, "-B", str(EVALUATOR), str(traces), str(out), *names], cwd=android_lab,
                         capture_output=True, text=True, timeout=900)
    if run.returncode:
        raise SystemExit(f"AndroidLab's evaluator failed:\n{run.stderr[-3000:]}")
    return json.loads(run.stdout.strip().splitlines()[-1])["results"]


def _sorted_ids(names: list[str]) -> list[str]:
    return sorted(names, key=lambda n: (n.rsplit("_", 1)[0], int(n.rsplit("_", 1)[1])))


def _ids(names: list[str]) -> str:
    return ", ".join(_sorted_ids(names))


def main(argv: list[str] | None = None) -> int:
    """Run the experts and the judges, rewrite the README table, print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--android-lab", type=Path, default=ROOT.parent / "shared" / "vendor" / "android_lab",
                        help="an Android-Lab checkout (default ../shared/vendor/android_lab)")
    parser.add_argument("--check", action="store_true", help="do not write the README; exit 1 if it differs")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    import android_gym
    from android_gym.suites.androidlab import JUDGE_GAPS, load_androidlab_tasks

    config = args.android_lab / "evaluation" / "config"
    specs = load_androidlab_tasks(config)
    names = android_gym.list_tasks("androidlab")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        traces = Path(tmp) / "logs" / "expert"
        ours = expert_scores(names, config, traces)
        theirs = judge(args.android_lab, traces, Path(tmp) / "results", names)

    by_app: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for spec in specs:
        row = by_app[spec.app]
        row["tasks"].append(spec.task_id)
        if not spec.is_query:
            row["rule"].append(spec.task_id)
        if spec.task_id in names:
            row["sim"].append(spec.task_id)
            if spec.is_query:
                row["sim_query"].append(spec.task_id)
            elif theirs.get(spec.task_id, {}).get("complete") is True:
                row["pass"].append(spec.task_id)
            else:
                row["fail"].append(spec.task_id)
    rows = ["| AndroidLab app | its tasks (rule-judged) | re-created on the sim (rule-judged) "
            "| its judge passes the expert | rule-judged, not passing |",
            "|---|---|---|---|---|"]
    totals = defaultdict(int)
    gaps = []
    for app in sorted(by_app, key=str.lower):
        row = by_app[app]
        for key in ("tasks", "rule", "sim", "sim_query", "pass", "fail"):
            totals[key] += len(row[key])
        sim_rule = len(row["sim"]) - len(row["sim_query"])
        passing = f"{len(row['pass'])}/{sim_rule}" + (f": {_ids(row['pass'])}" if row["pass"] else "")
        gaps.extend(row["fail"])
        rows.append(f"| {app} | {len(row['tasks'])} ({len(row['rule'])}) | {len(row['sim'])} ({sim_rule}) "
                    f"| {passing} | {_ids(row['fail'])} |")
    sim_rule_total = totals["sim"] - totals["sim_query"]
    rows.append(f"| all | {totals['tasks']} ({totals['rule']}) | {totals['sim']} ({sim_rule_total}) "
                f"| {totals['pass']}/{sim_rule_total} | {len(gaps)} |")
    rows.append("")
    rows.append("Why AndroidLab's judge does not pass these expert episodes:")
    rows.append("")
    rows.extend(f"- {n}: {JUDGE_GAPS.get(n, 'not named in JUDGE_GAPS')}" for n in _sorted_ids(gaps))
    table = "\n".join(rows)
    changed = replace_readme_block(README, BEGIN, END, table, write=not args.check)
    print(json.dumps({"androidlab_tasks": totals["tasks"], "re_created": totals["sim"],
                      "re_created_rule_judged": sim_rule_total, "judge_passes": totals["pass"],
                      "judge_fails": sorted(gaps), "expert_below_1": sorted(n for n, s in ours.items() if s < 1.0),
                      "seconds": round(time.perf_counter() - started, 1), "readme_changed": changed}))
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
