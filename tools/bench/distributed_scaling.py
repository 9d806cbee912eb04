"""How the Ray collector scales: trajectories per minute against workers, sync vs async with stragglers, overhead.

Every worker owns a simulated phone with the emulator latency preset (time-scaled by ``--time-scale``), so a
step mostly waits, as it does on a real emulator, and one machine measures the framework rather than its CPU.
The policy is :class:`coach_rl.distributed.ScriptedPolicy` (no generation cost). Three measurements:

1. scaling: asynchronous collection with 1, 2, 4, 8, 16 workers for ``--seconds`` each; efficiency is
   throughput(W) / (W * throughput(1)) (target >= 0.8 up to 16);
2. stragglers: 8 workers of which a quarter are 3x slower (latency scale x3), synchronous rounds against
   asynchronous collection (target: async >= 2x sync; DistRL reports 2.4x);
3. overhead: time per env step of the Ray collector (1 worker, zero latency, whole episodes in the worker, and
   the inference-actor mode with one RPC per step) minus the in-process RolloutCollector on the same env
   (target < 5 ms per step).

Prints one JSON object and writes a PNG.

    .venv/bin/python tools/bench/distributed_scaling.py [--seconds 30] [--time-scale 0.5] [--png out.png]

``--devices 8,32,64,128,256`` measures instead many devices over a real two-node cluster on this machine: a head
without device slots and two device nodes with ``--node-slots`` ``android_device`` slots each, started as
``ray start`` processes with token authentication (as the multi-node test does); every worker process drives
``--devices-per-worker`` simulated phones in threads (emulator latency preset, ``--time-scale``, 1.0 by default
in this mode). For each device count: trajectories per minute, fraction of linear (per-device rate against the
smallest count's), and the CPU share of the driver and of each node's processes, which shows what saturates.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import secrets
import statistics
import sys
import tempfile
import time
from typing import Any

import gymnasium as gym
import ray

import android_gym  # noqa: F401  (registers the env ids)
from android_gym.sim.latency import LatencyModel
from coach_rl.distributed import RayCollector, ScriptedPolicy, SimDeviceSpec
from coach_rl.rollout import RolloutCollector

TASKS = ["SystemWifiTurnOn", "SystemBluetoothTurnOff"]
MAX_STEPS = 3


def device(time_scale: float, per_worker: list[dict[str, Any]] | None = None) -> SimDeviceSpec:
    """The simulated phone with the emulator latency preset scaled by ``time_scale`` (0: no latency)."""
    latency = LatencyModel.preset("emulator", time_scale=time_scale) if time_scale > 0 else None
    return SimDeviceSpec({"task": TASKS, "max_steps": MAX_STEPS, "latency": latency}, per_worker=per_worker or ())


def throughput(collector: RayCollector, seconds: float, chunk: int) -> dict[str, float]:
    """Trajectories and env steps per minute of repeated ``collect(chunk)`` calls over ``seconds``."""
    collector.collect(chunk)  # every worker up and warm
    n = steps = 0
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        batch = collector.collect(chunk)
        n += len(batch)
        steps += sum(len(t.steps) for t in batch.trajectories)
    wall = time.perf_counter() - started
    return {"trajectories": n, "seconds": round(wall, 2), "trajectories_per_minute": round(60 * n / wall, 2),
            "steps_per_minute": round(60 * steps / wall, 2)}


def scaling(worker_counts: list[int], seconds: float, time_scale: float) -> list[dict[str, Any]]:
    """Asynchronous throughput for each worker count."""
    rows = []
    for w in worker_counts:
        with RayCollector(device(time_scale), ScriptedPolicy(), num_workers=w, async_collection=True) as c:
            row = {"workers": w, **throughput(c, seconds, chunk=w)}
        rows.append(row)
        print(json.dumps({"progress": "scaling", **row}), flush=True)
    base = rows[0]["trajectories_per_minute"] / rows[0]["workers"]
    for row in rows:
        row["linear_efficiency"] = round(row["trajectories_per_minute"] / (base * row["workers"]), 3)
    return rows


def stragglers(workers: int, seconds: float, time_scale: float) -> dict[str, Any]:
    """Synchronous rounds against asynchronous collection when a quarter of the workers are 3x slower."""
    slow = max(1, workers // 4)
    per_worker = [{"latency": LatencyModel.preset("emulator", time_scale=time_scale * (3 if i < slow else 1))}
                  for i in range(workers)]
    out: dict[str, Any] = {"workers": workers, "slow_workers": slow, "slowdown": 3}
    for mode in ("sync", "async"):
        with RayCollector(device(time_scale, per_worker), ScriptedPolicy(), num_workers=workers,
                          async_collection=mode == "async") as c:
            out[mode] = throughput(c, seconds, chunk=workers)
        print(json.dumps({"progress": "stragglers", mode: out[mode]}), flush=True)
    out["async_over_sync"] = round(out["async"]["trajectories_per_minute"] / out["sync"]["trajectories_per_minute"], 3)
    return out


def overhead(episodes: int, reps: int = 3) -> dict[str, Any]:
    """Milliseconds per env step, zero latency: in-process collector vs Ray (worker policy, inference actor).

    The three are measured in turn ``reps`` times (medians reported), so load from other processes on the host
    hits them alike.
    """
    env = gym.make("AndroidSim-v0", task=TASKS, max_steps=MAX_STEPS)
    local = RolloutCollector([env], ScriptedPolicy())
    collectors = {mode: RayCollector(device(0.0), ScriptedPolicy(), num_workers=1, async_collection=False,
                                     inference=mode, inference_batch_wait_s=0.0) for mode in ("worker", "actor")}
    samples: dict[str, list[float]] = {"in_process": [], "worker": [], "actor": []}
    try:
        local.collect(5, seeds=0)
        for c in collectors.values():
            c.collect(5, seeds=0)
        for rep in range(reps):
            for name, run in (("in_process", local.collect), ("worker", collectors["worker"].collect),
                              ("actor", collectors["actor"].collect)):
                t0 = time.perf_counter()
                batch = run(episodes, seeds=1000 + rep * episodes)
                steps = sum(len(t.steps) for t in batch.trajectories)
                samples[name].append(1000 * (time.perf_counter() - t0) / steps)
    finally:
        for c in collectors.values():
            c.close()
        env.close()
    med = {name: statistics.median(v) for name, v in samples.items()}
    out: dict[str, Any] = {"episodes": episodes, "reps": reps, "steps_per_episode": MAX_STEPS,
                           "in_process_ms_per_step": round(med["in_process"], 3)}
    for mode in ("worker", "actor"):
        out[f"ray_{mode}_ms_per_step"] = round(med[mode], 3)
        out[f"ray_{mode}_overhead_ms_per_step"] = round(med[mode] - med["in_process"], 3)
    print(json.dumps({"progress": "overhead", **out}), flush=True)
    return out


def plot(result: dict[str, Any], path: str) -> None:
    """Throughput against workers (with linear scaling) and the sync/async bars, in one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = result["scaling"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    ws = [r["workers"] for r in rows]
    tpm = [r["trajectories_per_minute"] for r in rows]
    a.plot(ws, tpm, "o-", label="RayCollector (async)")
    a.plot(ws, [tpm[0] / ws[0] * w for w in ws], "--", color="gray", label="linear")
    a.plot(ws, [0.8 * tpm[0] / ws[0] * w for w in ws], ":", color="gray", label="0.8 x linear")
    a.set_xscale("log", base=2)
    a.set_yscale("log")
    a.set_xticks(ws, [str(w) for w in ws])
    a.set_xlabel("device workers")
    a.set_ylabel("trajectories / minute")
    a.set_title(f"Scaling (emulator latency x{result['time_scale']})")
    a.legend()
    s = result["stragglers"]
    b.bar(["sync rounds", "async"], [s["sync"]["trajectories_per_minute"], s["async"]["trajectories_per_minute"]],
          color=["tab:orange", "tab:blue"])
    b.set_ylabel("trajectories / minute")
    b.set_title(f"{s['workers']} workers, {s['slow_workers']} of them 3x slower: async/sync = {s['async_over_sync']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def many_devices(counts: list[int], per_worker: int, seconds: float, time_scale: float,
                 slots: int) -> dict[str, Any]:
    """Asynchronous throughput of ``counts`` simulated devices over a two-node cluster, ``per_worker`` a process."""
    from coach_rl.distributed.local_cluster import LocalRayCluster

    # this process's RAY_AUTH_MODE / RAY_AUTH_TOKEN (it joins as the driver); 2 device nodes, ``slots`` each
    cluster = LocalRayCluster(tempfile.mkdtemp(prefix="raybench"), token=None, object_store_memory=200_000_000)
    cluster.start_head()
    for name in ("node1", "node2"):
        cluster.start_device_node(name, slots)
    rows = []
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        for n in counts:
            k = min(per_worker, n)
            with RayCollector(device(time_scale), ScriptedPolicy(), num_workers=n, devices_per_worker=k,
                              ray_address=cluster.address, async_collection=True) as c:
                c.collect(n)  # every process up and every device warm
                cpu0, nodes0, t0 = time.process_time(), cluster.cpu_seconds(), time.perf_counter()
                row = {"devices": n, "devices_per_process": k, "processes": c.num_processes,
                       **throughput(c, seconds, chunk=max(1, n // 4))}
                wall = time.perf_counter() - t0
                row["driver_cpu_share"] = round((time.process_time() - cpu0) / wall, 3)
                nodes1 = cluster.cpu_seconds()
                row["node_cpu_share"] = {name: round((nodes1[name] - nodes0[name]) / wall, 3) for name in nodes1}
                placed = {i["node_id"] for i in c.worker_info()}
                row["nodes_used"] = len(placed)
            rows.append(row)
            print(json.dumps({"progress": "many_devices", **row}), flush=True)
    finally:
        ray.shutdown()
        cluster.teardown()
    base = rows[0]["trajectories_per_minute"] / rows[0]["devices"]
    for row in rows:
        row["fraction_of_linear"] = round(row["trajectories_per_minute"] / (base * row["devices"]), 3)
    return {"time_scale": time_scale, "max_steps": MAX_STEPS, "seconds_per_config": seconds,
            "node_slots": slots, "host": {"cpus": os.cpu_count(), "ray": ray.__version__}, "rows": rows,
            "fraction_of_linear_at_max": rows[-1]["fraction_of_linear"],
            "fraction_of_linear_ok": rows[-1]["fraction_of_linear"] >= 0.8}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="measuring time per configuration")
    parser.add_argument("--time-scale", type=float, default=0.5, help="scale of the emulator latency preset")
    parser.add_argument("--workers", default="1,2,4,8,16", help="worker counts of the scaling curve")
    parser.add_argument("--straggler-workers", type=int, default=8)
    parser.add_argument("--overhead-episodes", type=int, default=60)
    parser.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local Ray cluster")
    parser.add_argument("--png", default="distributed_scaling.png")
    parser.add_argument("--devices", default="", help="device counts over a two-node cluster (e.g. 8,32,64,128,256); "
                                                      "measures only that")
    parser.add_argument("--devices-per-worker", type=int, default=32, help="simulated phones per worker process")
    parser.add_argument("--node-slots", type=int, default=128, help="android_device slots of each device node")
    args = parser.parse_args()
    if args.devices:
        if os.environ.get("RAY_AUTH_MODE") != "token" or not os.environ.get("RAY_AUTH_TOKEN"):
            # Ray reads the mode when it is imported: run again with a fresh token in the environment
            env = {**os.environ, "RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": secrets.token_hex(32)}
            os.execve(sys.executable, [sys.executable, *sys.argv], env)
        scale = args.time_scale if "--time-scale" in sys.argv else 1.0
        counts = [int(x) for x in args.devices.split(",")]
        print(json.dumps(many_devices(counts, args.devices_per_worker, args.seconds, scale, args.node_slots),
                         indent=2))
        return
    counts = [int(x) for x in args.workers.split(",")]
    ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False,
             resources={"android_device": max(counts + [args.straggler_workers])})
    try:
        result: dict[str, Any] = {
            "host": {"cpus": os.cpu_count(), "python": platform.python_version(), "ray": ray.__version__},
            "time_scale": args.time_scale, "max_steps": MAX_STEPS, "seconds_per_config": args.seconds,
        }
        result["overhead"] = overhead(args.overhead_episodes)
        result["stragglers"] = stragglers(args.straggler_workers, args.seconds, args.time_scale)
        result["scaling"] = scaling(counts, args.seconds, args.time_scale)
        last = result["scaling"][-1]
        result["targets"] = {
            "linear_efficiency_at_max_workers": last["linear_efficiency"],
            "linear_efficiency_ok": last["linear_efficiency"] >= 0.8,
            "async_over_sync_ok": result["stragglers"]["async_over_sync"] >= 2.0,
            "overhead_ok": result["overhead"]["ray_worker_overhead_ms_per_step"] < 5.0,
        }
        plot(result, args.png)
        result["png"] = os.path.abspath(args.png)
    finally:
        ray.shutdown()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
