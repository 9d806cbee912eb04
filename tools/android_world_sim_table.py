"""Write the table (packages/android-gym/docs/android-world-on-sim.md) of AndroidWorld's 116 tasks on the simulated phone (runs them; needs android_world).

For every task of AndroidWorld's registry: whether it runs on the sim with AndroidWorld's own code
(``android_gym.suites.android_world_sim.SIM_TASKS``), the scripted expert's success over ``--seeds``
instances (AndroidWorld's ``initialize_task`` and ``is_successful`` on an in-process ``SimDevice``), and
why not where not. The table replaces the text between the two marker lines of
packages/android-gym/docs/android-world-on-sim.md, so it stays what the code does. Prints a JSON summary.

    .venv/bin/python tools/android_world_sim_table.py --seeds 3
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import warnings
from pathlib import Path

from readme_tables import replace_readme_block  # tools/readme_tables.py (this script's folder)

README = Path(__file__).resolve().parents[1] / "packages" / "android-gym" / "docs" / "android-world-on-sim.md"
BEGIN = "<!-- android-world-sim-table:begin (tools/android_world_sim_table.py writes this) -->"
END = "<!-- android-world-sim-table:end -->"


def expert_successes(name: str, seeds: int) -> list[float]:
    """AndroidWorld's score of the expert on instance 0 of suites seeded 0..seeds-1 (an error scores 0)."""
    from android_gym.sim import SimDevice
    from android_gym.suites.android_world_sim import AndroidWorldSimSuite
    from android_gym.tasks.runner import run_expert

    suite = AndroidWorldSimSuite([name])
    scores = []
    for seed in range(seeds):
        device = SimDevice()
        suite.attach(device)
        try:
            scores.append(run_expert(suite.instance(name, seed, 0), device).success)
        except Exception as exc:  # noqa: BLE001 - a failing set-up or expert is a 0 in the table, with its reason
            print(f"{name} seed {seed}: {type(exc).__name__}: {exc}", file=sys.stderr)
            scores.append(0.0)
    return scores


def main(argv: list[str] | None = None) -> int:
    """Run the tasks, rewrite the README table, print the summary."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="instances per task (suite seeds 0..N-1)")
    parser.add_argument("--check", action="store_true", help="do not write the README; exit 1 if it differs")
    args = parser.parse_args(argv)
    logging.disable(logging.CRITICAL)
    warnings.filterwarnings("ignore")
    from android_gym.suites.android_world import AndroidWorldSuite
    from android_gym.suites.android_world_sim import SIM_TASKS, reason_not_on_sim

    names = AndroidWorldSuite().names()
    rows = ["| AndroidWorld task | runs on the sim with AndroidWorld's code | expert success | why not |",
            "|---|---|---|---|"]
    started = time.perf_counter()
    solved = 0
    for name in names:
        if name in SIM_TASKS:
            scores = expert_successes(name, args.seeds)
            rate = sum(scores) / len(scores)
            solved += rate == 1.0
            rows.append(f"| {name} | yes | {rate:.0%} ({len(scores)} seeds) | |")
        else:
            rows.append(f"| {name} | no | | {reason_not_on_sim(name)} |")
    table = "\n".join(rows)
    changed = replace_readme_block(README, BEGIN, END, table, write=not args.check)
    print(json.dumps({"tasks": len(names), "on_sim": len(SIM_TASKS), "expert_solves_every_seed": solved,
                      "seeds": args.seeds, "seconds": round(time.perf_counter() - started, 1),
                      "readme_changed": changed}))
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    raise SystemExit(main())
