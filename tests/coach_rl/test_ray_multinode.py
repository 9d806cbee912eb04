"""coach-rl on a real multi-node Ray cluster: separate `ray start` processes on 127.0.0.1 with token authentication.

A head without device slots and device nodes that declare `android_device` slots, each node with its own temp
dir and ports. `coach-rl train collector=ray ray_address=...` trains on it while device nodes die (every process
of the node killed, as when a host goes down) and join; the driver is killed with SIGKILL while no device node is
up and resumes from its checkpoint and spool; the head dies, the driver stops with an error naming the lost head,
and a new cluster (a new head at another address) resumes the run. About 5 minutes on a 2-core machine, mostly driver and worker start-ups (torch imports). Nodes are stopped by their process ids, never with `ray stop`
(which stops every Ray process on the machine).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="collector=ray needs Ray: pip install 'coach-rl[ray]'")
psutil = pytest.importorskip("psutil")
from coach_rl.distributed.local_cluster import LocalRayCluster as LocalCluster  # noqa: E402

pytestmark = pytest.mark.slow

ITERATIONS = 12
"""Enough that the first driver is still training when the last device node dies (7 iterations in, measured)."""


@pytest.fixture
def cluster() -> Iterator[LocalCluster]:
    # Ray's socket paths (<root>/<node>/session_<date>_<time>_<pid>/sockets/plasma_store) must stay under 107
    # characters: pytest's tmp_path is too deep once pytest-xdist adds its worker folder (popen-gw1/)
    root = Path(tempfile.mkdtemp(prefix="raycl", dir="/tmp"))
    cluster = LocalCluster(root, start_timeout=60)
    try:
        yield cluster
    finally:
        cluster.teardown()
        shutil.rmtree(root, ignore_errors=True)


def _driver(cluster: LocalCluster, run: Path, tag: str, **overrides: str) -> subprocess.Popen:
    settings = {"collector": "ray", "num_workers": "2", "ray_address": cluster.address, "output_dir": str(run),
                "total_iterations": str(ITERATIONS), "checkpoint_every": "1", "eval_instances_per_task": "0",
                "ray_node_wait_s": "8", "replay_size": "100000", "env_kwargs": '{"latency": {"dump": 0.15}}', **overrides}
    args = [sys.executable, "-c", "from coach_rl.cli import main; raise SystemExit(main())", "train", "--config",
            "smoke", "--no-progress", *(f"{k}={v}" for k, v in settings.items())]
    out = (run.parent / f"{tag}.out").open("w")
    err = (run.parent / f"{tag}.err").open("w")
    env = {**cluster.env, "TOKENIZERS_PARALLELISM": "false"}
    return subprocess.Popen(args, env=env, stdout=out, stderr=err, start_new_session=True)


def _records(run: Path) -> list[dict]:
    path = run / "metrics.jsonl"
    if not path.is_file():
        return []
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [r for r in lines if r.get("kind") == "train"]


def _wait(what: str, check, proc: subprocess.Popen, err: Path, timeout: float = 150) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        if proc.poll() is not None:
            raise AssertionError(f"the driver ended (rc {proc.returncode}) before {what}:\n{err.read_text()[-4000:]}")
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}:\n{err.read_text()[-4000:]}")


def test_driver_without_the_token_gets_an_error_naming_it(cluster: LocalCluster, tmp_path: Path) -> None:
    cluster.start_head(fast_health_checks=True)
    env = {k: v for k, v in cluster.env.items() if k not in ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")}
    env["HOME"] = str(tmp_path)  # no ~/.ray/auth_token either
    code = ("from coach_rl.distributed import ensure_ray\n"
            "try:\n    ensure_ray(__import__('sys').argv[1])\n"
            "except ConnectionError as exc:\n    print('REFUSED', exc)\n")
    started = time.monotonic()
    out = subprocess.run([sys.executable, "-c", code, cluster.address], env=env, capture_output=True, text=True,
                         timeout=120)
    assert "REFUSED" in out.stdout, out.stdout + out.stderr[-3000:]
    assert "token authentication" in out.stdout and "RAY_AUTH_MODE=token" in out.stdout
    assert "RAY_AUTH_TOKEN" in out.stdout and "ray get-auth-token" in out.stdout
    assert time.monotonic() - started < 60  # at once, not after ray.init's 20 s of retries plus imports


def test_train_survives_lost_and_joining_nodes_and_a_driver_killed_while_no_device_node_is_up(
        cluster: LocalCluster, tmp_path: Path) -> None:
    run = tmp_path / "run"
    cluster.start_head(fast_health_checks=True)
    cluster.start_device_node("dev_a", 1, wait=False)
    cluster.start_device_node("dev_b", 1, wait=False)
    cluster.wait_started("dev_a")
    cluster.wait_started("dev_b")
    proc = _driver(cluster, run, "driver1")
    err = tmp_path / "driver1.err"
    try:
        # 1. workers land only on nodes that declare device slots: one on each device node, none on the head
        _wait("two iterations", lambda: len(_records(run)) >= 2, proc, err, timeout=240)
        assert (cluster.device_workers("head"), cluster.device_workers("dev_a"), cluster.device_workers("dev_b")) \
            == (0, 1, 1)
        # 2. a device node dies mid-run: the run goes on with the node left and logs the lost node
        cluster.kill("dev_a")
        lost_at = len(_records(run))
        _wait("the lost node in the log", lambda: "lost node" in err.read_text(), proc, err)
        _wait("an iteration on the node left", lambda: any(r["iteration"] > lost_at + 1 and
                                                           r["ray/workers_placed"] == 1.0 for r in _records(run)),
              proc, err)
        # 3. a node joins: the lost worker is placed there
        cluster.start_device_node("dev_c", 1)
        _wait("the worker placed again", lambda: re.search(r"worker \d placed again, on node", err.read_text()),
              proc, err)
        assert cluster.device_workers("dev_c") == 1 and cluster.device_workers("head") == 0
        _wait("an iteration with both workers", lambda: _records(run)[-1]["ray/workers_placed"] == 2.0, proc, err)
        # 4. every device node dies: the driver says it waits; it is killed with SIGKILL while no node is up, with
        # finished episodes in its spool that no checkpoint holds yet
        _wait("a spooled episode", lambda: any((run / "spool").glob("*.pkl")), proc, err)
        cluster.kill("dev_b")
        cluster.kill("dev_c")
        _wait("the wait for a device node", lambda: "no live node has a 'android_device' slot" in err.read_text(),
              proc, err, timeout=60)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    log = err.read_text()
    assert log.count("lost node") == 3 and "joined with 1 'android_device' slots" in log
    records = _records(run)
    done = max(r["iteration"] for r in records)
    assert 3 <= done < ITERATIONS
    assert any(r["ray/nodes_lost"] >= 1.0 for r in records)
    assert sum(r["ray/lost_episodes"] for r in records) >= 1  # dropped and counted, played again elsewhere
    spooled = sorted(p.name for p in (run / "spool").glob("*.pkl"))  # finished, not yet acknowledged

    # 5. started again while no device node is up: it waits ray_node_wait_s, then a clear error (the same setting
    # as the run's: a resumed run keeps its configuration)
    again = _driver(cluster, run, "driver2")
    assert again.wait(timeout=240) != 0
    error = (tmp_path / "driver2.err").read_text()
    assert "declares no 'android_device' resource" in error and "ray_node_wait_s=8" in error, error[-3000:]

    # 6. a device node is back: the restarted driver resumes from the checkpoint and the spool
    cluster.start_device_node("dev_d", 2)
    last = _driver(cluster, run, "driver3")
    assert last.wait(timeout=300) == 0, (tmp_path / "driver3.err").read_text()[-4000:]
    out = (tmp_path / "driver3.out").read_text()
    summary = json.loads(out[out.index("{"):])
    assert summary["iterations"] == ITERATIONS and summary["resumed_from"] in (done, done + 1)
    records = _records(run)
    assert [r["iteration"] for r in records] == list(range(1, ITERATIONS + 1))  # redone ones replace lost ones
    assert all(r["rollout/episodes"] == 4 and r["rollout/steps"] > 0 for r in records)
    from coach_rl.replay import ReplayBuffer

    replay = ReplayBuffer(run / "replay")
    # no trajectory lost or counted twice: the replay holds exactly the episodes the iterations trained on, and
    # what the killed driver had spooled was delivered and acknowledged (the last driver's own spool holds only
    # episodes that finished after its last collect)
    assert replay.num_trajectories == sum(r["rollout/episodes"] for r in records)
    left = {p.name for p in (run / "spool").glob("*.pkl")}
    assert spooled and not left & set(spooled), f"never delivered: {sorted(left & set(spooled))}"


def test_head_loss_stops_the_driver_with_an_error_and_a_new_cluster_resumes_the_run(
        cluster: LocalCluster, tmp_path: Path) -> None:
    run = tmp_path / "run"
    cluster.start_head(fast_health_checks=True)
    cluster.start_device_node("dev", 2, wait=False)  # starts while the driver imports torch and warms up
    old_address = cluster.address
    # the collector reports the lost head after ray_head_lost_s (15 s by default) when Ray has not ended it first
    proc = _driver(cluster, run, "driver1", total_iterations="5", ray_head_lost_s="4")
    err = tmp_path / "driver1.err"
    try:
        cluster.wait_started("dev")
        _wait("two iterations", lambda: len(_records(run)) >= 2, proc, err, timeout=240)
        cluster.kill("head")
        rc = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    # the driver was started outside the head's process tree, but on its machine Ray attaches it to the head's
    # raylet and ends it itself at its next object store call (or the collector says so after ray_head_lost_s):
    # either way `coach-rl train` ends with one error line naming the lost head, the checkpoint and the spool
    log = err.read_text()
    assert rc == 3, log[-4000:]
    error = log.splitlines()[-1]
    assert error.startswith("coach-rl train: error: lost the Ray head node: its GCS at "), log[-4000:]
    assert "Traceback" not in log and "ray_address=<new head host:port>" in error
    done = len(_records(run))
    spooled = {p.name for p in (run / "spool").glob("*.pkl")}
    kept = re.search(r"keeps checkpoint iter-(\d+) and (\d+) spooled episodes", error)
    assert kept and 2 <= done < 5 and int(kept[1]) in (done, done + 1) and int(kept[2]) == len(spooled), error
    cluster.kill("dev")  # its raylet lost the cluster too
    # a new cluster (new head, new port, new node); the same command with its address resumes where the run stopped
    cluster.start_head(fast_health_checks=True)
    cluster.start_device_node("dev2", 2, wait=False)
    assert cluster.address != old_address
    again = _driver(cluster, run, "driver2", total_iterations="5", ray_head_lost_s="4")
    cluster.wait_started("dev2")
    assert again.wait(timeout=300) == 0, (tmp_path / "driver2.err").read_text()[-4000:]
    out = (tmp_path / "driver2.out").read_text()
    summary = json.loads(out[out.index("{"):])
    assert summary["iterations"] == 5 and summary["resumed_from"] == int(kept[1])
    records = _records(run)
    assert [r["iteration"] for r in records] == [1, 2, 3, 4, 5]
    from coach_rl.replay import ReplayBuffer

    # nothing lost or counted twice: the replay holds exactly the episodes trained on; the episodes the first driver
    # had spooled (its workers played on while the collector waited for the head) come first in the resumed
    # iterations, and any they did not need are still in the spool for the next run
    assert ReplayBuffer(run / "replay").num_trajectories == sum(r["rollout/episodes"] for r in records)
    delivered = spooled - {p.name for p in (run / "spool").glob("*.pkl")}
    assert len(delivered) == min(len(spooled), 4 * (5 - int(kept[1])))
