"""How long a Ray device worker takes to start: what every test, run and driver restart on Ray pays per process.

A worker process imports what playing episodes needs (``coach_rl.rollout``, the sim, the reward pipeline); with
``import coach_rl`` pulling in TRL, the critic and the learners, and ``import coach_reward`` the tiny-model
builders (transformers), that was most of a test's time on a loaded 2-core machine. Two measurements, each
``--repeats`` times, medians reported:

1. ``import_seconds``: a fresh Python process importing what a device worker imports (no Ray);
2. ``workers_ready_seconds``: a local Ray cluster, then ``RayCollector`` with ``--workers`` workers
   (ScriptedPolicy, simulated phone) until every worker answers ``worker_info()``, and one collected episode
   per worker.

Prints one JSON object.

    .venv/bin/python tools/bench/worker_startup.py [--workers 4] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import time

_IMPORT = ("import sys, time\nt = time.perf_counter()\nfrom coach_rl.rollout import RolloutCollector\n"
           "import coach_rl.distributed.worker, coach_rl.distributed.scripted, coach_rl.distributed.devices\n"
           "print(time.perf_counter() - t, 'transformers' in sys.modules, 'trl' in sys.modules)")


def import_seconds() -> tuple[float, bool, bool]:
    out = subprocess.run([sys.executable, "-c", _IMPORT], capture_output=True, text=True, check=True).stdout.split()
    return float(out[0]), out[1] == "True", out[2] == "True"


def workers_ready_seconds(workers: int) -> float:
    import ray

    from coach_rl.distributed import RayCollector, ScriptedPolicy, SimDeviceSpec

    ray.init(num_cpus=2, include_dashboard=False, resources={"android_device": workers}, log_to_driver=False)
    try:
        started = time.perf_counter()
        with RayCollector(SimDeviceSpec({"task": ["SystemWifiTurnOn"], "max_steps": 2}), ScriptedPolicy(),
                          num_workers=workers, async_collection=False) as collector:
            collector.worker_info()
            collector.collect(workers)
            return time.perf_counter() - started
    finally:
        ray.shutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    imports = [import_seconds() for _ in range(args.repeats)]
    ready = [workers_ready_seconds(args.workers) for _ in range(args.repeats)]
    print(json.dumps({
        "workers": args.workers, "repeats": args.repeats, "python": platform.python_version(),
        "import_seconds": round(statistics.median(i[0] for i in imports), 2),
        "imports_transformers": imports[0][1], "imports_trl": imports[0][2],
        "workers_ready_seconds": round(statistics.median(ready), 2),
        "all_import_seconds": [round(i[0], 2) for i in imports], "all_ready_seconds": [round(r, 2) for r in ready],
    }, indent=1))


if __name__ == "__main__":
    main()
