"""Distributed collection on a real local Ray cluster: workers, versions, staleness, faults, spool, DistRL end to end."""

from __future__ import annotations

import copy
import math
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import torch

ray = pytest.importorskip("ray", reason='the distributed collector needs Ray: pip install "coach-rl[ray]"')

from android_gym.sim.faults import FaultPlan  # noqa: E402
from android_gym.sim.latency import LatencyModel  # noqa: E402
from coach_reward.tiny_models import build_tiny_causal_lm  # noqa: E402
from coach_rl.actor import ActorUpdater  # noqa: E402
from coach_rl.algorithms import UpdateContext  # noqa: E402
from coach_rl.algorithms.distrl import DistRLLearner  # noqa: E402
from coach_rl.critic import Critic, CriticTrainer  # noqa: E402
from coach_rl.distributed import (  # noqa: E402
    AdbDeviceSpec,
    DistributedArguments,
    EmulatorDeviceSpec,
    RayCollector,
    ScriptedPolicy,
    SimDeviceSpec,
    TrajectorySpool,
)
from coach_rl.policy import HFPolicy, PolicyFormat  # noqa: E402

TASKS = ["SystemWifiTurnOn", "SystemBluetoothTurnOff"]


@pytest.fixture(scope="session")
def ray_cluster():
    """One small local cluster for the whole session (2 CPUs, 16 device slots; workers reserve no CPU)."""
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=2, include_dashboard=False, resources={"android_device": 16}, log_to_driver=False,
                 runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}})
    yield ray.get_runtime_context().gcs_address
    if started:
        ray.shutdown()


@pytest.fixture(scope="module")
def lm():
    return build_tiny_causal_lm(seed=0)


def _hf_policy(lm, **kwargs) -> HFPolicy:
    model, tok = lm
    fmt = PolicyFormat(action_format="index", max_history=1, action_space=())
    return HFPolicy(copy.deepcopy(model), tok, format=fmt, max_new_tokens=4, record_logprobs=True, **kwargs)


def _sim(time_scale: float = 0.0, max_steps: int = 3, **kwargs) -> SimDeviceSpec:
    latency = LatencyModel.preset("emulator", time_scale=time_scale) if time_scale else None
    return SimDeviceSpec({"task": TASKS, "max_steps": max_steps, "latency": latency}, **kwargs)


def test_arguments_validate_with_clear_errors() -> None:
    DistributedArguments().validate_distributed_arguments()
    with pytest.raises(ValueError, match="stale_policy must be one of drop, downweight"):
        DistributedArguments(stale_policy="ignore").validate_distributed_arguments()
    with pytest.raises(ValueError, match="num_workers must be an integer >= 1"):
        DistributedArguments(num_workers=0).validate_distributed_arguments()
    with pytest.raises(ValueError, match="needs weights_dir"):
        DistributedArguments(weight_transport="shared_dir").validate_distributed_arguments()
    with pytest.raises(ValueError, match="ray_node_wait_s must be a number of seconds >= 0"):
        DistributedArguments(ray_node_wait_s=-1).validate_distributed_arguments()
    with pytest.raises(ValueError, match="ray_head_lost_s must be a number of seconds > 0"):
        DistributedArguments(ray_head_lost_s=0).validate_distributed_arguments()


def test_spool_is_atomic_and_survives_a_new_instance(tmp_path) -> None:
    spool = TrajectorySpool(tmp_path)
    (tmp_path / "half-written.tmp").write_bytes(b"\x80")  # what a writer killed mid-write leaves
    spool.put("a-1", {"x": 1})
    spool.put("a-2", {"x": 2})
    again = TrajectorySpool(tmp_path)
    assert not list(tmp_path.glob("*.tmp"))
    assert again.pending() == [("a-1", {"x": 1}), ("a-2", {"x": 2})]
    assert again.acknowledge(["a-1"]) == 1
    assert [uid for uid, _ in TrajectorySpool(tmp_path).pending()] == ["a-2"]
    with pytest.raises(ValueError, match="spool id"):
        spool.put("../evil", {})


def test_sync_rounds_policy_versions_and_published_weights(ray_cluster, lm, tmp_path) -> None:
    policy = _hf_policy(lm)
    with RayCollector(_sim(), policy, num_workers=3, async_collection=False, spool_dir=str(tmp_path / "spool"),
                      weight_transport="shared_dir", weights_dir=str(tmp_path / "weights")) as collector:
        batch = collector.collect(4, seeds=100, task_options={"task": TASKS[0]})
        assert len(batch) == 4
        assert sorted(t.seed for t in batch.trajectories) == [100, 101, 102, 103]
        assert all(t.task == TASKS[0] and t.info["policy_version"] == 0 for t in batch.trajectories)
        # the workers built the records; the driver named them by episode uid and weighed their staleness
        assert len(batch.records) == sum(len(t.steps) for t in batch.trajectories) > 0
        assert all(r.token_logprobs and len(r.token_logprobs) == len(r.token_ids) for r in batch.records)
        assert {r.episode_id for r in batch.records} == set(batch.uids)
        assert {r.sample_weight for r in batch.records} == {1.0} and {r.policy_version for r in batch.records} == {0}
        assert not any({"prompt", "token_ids", "return_t"} & set(s.info) for t in batch.trajectories for s in t.steps)
        assert batch.metrics["collector/staleness_0"] == 4.0
        assert len(collector.spool) == 4  # spooled until acknowledged
        assert collector.acknowledge(batch) == 4 and len(collector.spool) == 0
        new_model = copy.deepcopy(policy.model)
        with torch.no_grad():
            for p in new_model.parameters():
                p.add_(0.01)
        collector.publish_policy(new_model, 1)
        batch = collector.collect(3, seeds=200)
        assert [t.info["policy_version"] for t in batch.trajectories] == [1, 1, 1]
        expected = float(sum(float(p.double().sum()) for p in new_model.state_dict().values()))
        digests = ray.get([w.weights_digest.remote() for w in collector.workers])
        assert digests == pytest.approx([expected] * 3, rel=1e-9)
        assert (tmp_path / "weights" / "v1" / "model.pt").exists()
        with pytest.raises(ValueError, match="version must be an integer >= the current 1"):
            collector.publish_policy(None, 0)


def test_async_staleness_drop_and_downweight(ray_cluster) -> None:
    # each episode waits ~0.6 s on the (time-scaled) emulator, so episodes are still running when versions move on
    with RayCollector(_sim(time_scale=0.3), ScriptedPolicy(), num_workers=2, max_staleness=1,
                      stale_policy="drop") as collector:
        first = collector.collect(2)
        assert first.staleness == [0, 0]
        collector.publish_policy(None, 1)
        collector.publish_policy(None, 2)  # the two episodes in flight started at version 0: staleness 2 > 1
        batch = collector.collect(2)
        assert batch.dropped_stale >= 2
        assert all(s <= 1 for s in (t.info["staleness"] for t in batch.trajectories))
        assert batch.metrics["collector/staleness_2"] >= 2.0
        collector.args.stale_policy = "downweight"
        collector.publish_policy(None, 4)  # the running ones started at version 2: staleness 2, weight 0.5
        batch = collector.collect(2)
        assert batch.dropped_stale == 0
        assert [t.info["staleness"] for t in batch.trajectories] == [2, 2]
        assert batch.records and {r.sample_weight for r in batch.records} == {0.5}  # the weight is the records' only


def test_device_crash_is_recovered_and_failing_resets_replace_the_device(ray_cluster) -> None:
    # worker 0's phone crashes at its 12th device call (the env reboots it at the next reset); worker 1's hangs at
    # its 12th (1 s timeout) and then crashes at calls 13-15, i.e. at each of the three reset attempts after the
    # reboot, so the reset fails and only a new device helps: the worker replaces it
    per_worker = [{"faults": FaultPlan(schedule=[(12, "crash")])},
                  {"faults": FaultPlan(schedule=[(12, "hang"), (13, "crash"), (14, "crash"), (15, "crash")])}]
    with RayCollector(_sim(max_steps=4, per_worker=per_worker, device_timeout=1.0), ScriptedPolicy(),
                      num_workers=2, async_collection=False) as collector:
        batch = collector.collect(6, seeds=0)
        assert len(batch) == 6
        errors = [t.error or "" for t in batch.trajectories]
        assert any("crash" in e.lower() for e in errors), errors
        assert any("did not answer" in e or "hung" in e for e in errors), errors
        assert all(t.truncated for t, e in zip(batch.trajectories, errors) if e)
        assert sum(1 for e in errors if not e) >= 2  # the rebooted devices played on
        assert batch.stats.env_errors >= 2
        info = {i["index"]: i for i in collector.worker_info()}
        assert info[0]["env_replacements"] == 0 and info[1]["env_replacements"] == 1
        assert not batch.failures  # the replaced device played the episode whose reset had failed


def test_killed_worker_is_restarted_and_its_lost_episode_is_counted_and_played_again(ray_cluster, tmp_path) -> None:
    with RayCollector(_sim(time_scale=0.5, max_steps=4), ScriptedPolicy(), num_workers=3, async_collection=False,
                      spool_dir=str(tmp_path)) as collector:
        collector.collect(3)  # workers are up
        victim = collector.workers[1]
        pid = ray.get(victim.pid.remote())
        threading.Timer(0.8, os.kill, (pid, signal.SIGKILL)).start()
        batch = collector.collect(3, seeds=10)
        # the dead worker's episode never reached the driver: dropped and counted, never a trajectory without
        # records (the loop needs one record per step), and its seed is played again by another worker
        assert len(batch) == 3 and sorted(t.seed for t in batch.trajectories) == [10, 11, 12]
        assert all(len(t.steps) == 4 for t in batch.trajectories)
        assert len(batch.records) == 12 and {r.episode_id for r in batch.records} == set(batch.uids)
        assert len(batch.lost) == 1 and "worker 1" in batch.lost[0]["error"] and "died" in batch.lost[0]["error"]
        assert batch.metrics["ray/lost_episodes"] == 1.0 and collector.lost_episodes == 1
        assert batch.lost[0]["uid"] not in batch.uids and len(collector.spool) == 6  # lost ones are not spooled
        info = {i["index"]: i for i in collector.worker_info()}  # waits until Ray has worker 1 back
        assert info[1]["restarted"] and info[1]["pid"] != pid and not info[0]["restarted"]
        batch = collector.collect(3)  # all three play again, the restarted one included
        assert len(batch) == 3 and not batch.lost
        assert {t.info["worker"] for t in batch.trajectories} == {0, 1, 2}
        assert collector.worker_failures == 1


DRIVER = """
import sys, time
import ray
from android_gym.sim.latency import LatencyModel
from coach_rl.distributed import RayCollector, ScriptedPolicy, SimDeviceSpec
ray.init(address=sys.argv[1], log_to_driver=False)
latency = LatencyModel.preset("emulator", time_scale=0.1)
collector = RayCollector(SimDeviceSpec({"task": ["SystemWifiTurnOn"], "max_steps": 2, "latency": latency}),
                         ScriptedPolicy(),
                         num_workers=2, ray_address=sys.argv[1], spool_dir=sys.argv[2])
batch = collector.collect(3)
print("UIDS " + " ".join(batch.uids), flush=True)
time.sleep(600)  # killed here, before the learner acknowledged anything
"""


@pytest.mark.slow
def test_driver_killed_with_sigkill_and_restarted_delivers_the_spool(ray_cluster, tmp_path) -> None:
    spool = tmp_path / "spool"
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    proc = subprocess.Popen([sys.executable, str(script), ray_cluster, str(spool)], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        line = ""
        deadline = time.monotonic() + 240
        while not line.startswith("UIDS") and time.monotonic() < deadline:
            line = proc.stdout.readline() or line
            if proc.poll() is not None:
                break
        assert line.startswith("UIDS"), "the driver did not collect"
        uids = line.split()[1:]
        # the workers go on; what they finish now is spooled by the driver without a collect() call: kill the driver
        # once one such episode is on disk (it was a fixed 2 s wait). Files are counted: a TrajectorySpool() here
        # would delete the driver's temporary file
        while len(list(spool.glob("*.pkl"))) <= len(uids) and time.monotonic() < deadline:
            assert proc.poll() is None, "the driver ended before it was killed"
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    on_disk = {uid for uid, _ in TrajectorySpool(spool).pending()}
    assert set(uids) <= on_disk  # everything the dead driver had received is on disk
    assert len(on_disk) > len(uids)  # including episodes that finished after its last collect()
    with RayCollector(_sim(), ScriptedPolicy(), num_workers=1, spool_dir=str(spool)) as collector:
        batch = collector.collect(len(on_disk))
        assert set(batch.uids) == on_disk
        assert all(len(t.steps) == 2 for t in batch.trajectories)


@pytest.mark.slow
def test_inference_actor_batches_requests_across_workers(ray_cluster, lm) -> None:
    with RayCollector(_sim(time_scale=0.05), _hf_policy(lm), num_workers=3, inference="actor",
                      inference_batch_wait_s=0.1, async_collection=False) as collector:
        batch = collector.collect(3, seeds=0)
        assert len(batch) == 3
        assert batch.records and all(r.token_ids for r in batch.records)
        sizes = collector.inference_batch_sizes()
        assert sum(sizes) == sum(len(t.steps) for t in batch.trajectories)
        assert max(sizes) > 1  # requests of several workers went through one generate call


@pytest.mark.slow
def test_distrl_trains_end_to_end_on_three_async_workers(ray_cluster, lm) -> None:
    torch.set_num_threads(1)
    policy = _hf_policy(lm)
    model, tok = policy.model, policy.tokenizer
    learner = DistRLLearner(ActorUpdater(model, tok, lr=1e-4, micro_batch_size=8),
                            CriticTrainer(Critic.from_pretrained_lm(model, tok, seed=0), total_steps=10,
                                          learning_rate=1e-4, micro_batch_size=8),
                            gamma=0.9, replay_trajectories=2)
    rng = np.random.default_rng(0)
    with RayCollector(_sim(time_scale=0.05), policy, num_workers=3, max_staleness=2) as collector:
        version = 0
        for iteration in range(1, 4):
            batch = collector.collect(3)
            records = batch.records
            assert records and all(r.token_logprobs for r in records)
            assert [r.episode_id for r in records] == [u for u, t in zip(batch.uids, batch.trajectories)
                                                       for _ in t.steps]
            metrics = learner.update(records, UpdateContext(rng=rng, iteration=iteration, policy_version=version))
            assert all(math.isfinite(v) for v in metrics.values())
            collector.acknowledge(batch)
            version += 1
            collector.publish_policy(learner.policy_model, version)
        assert learner.updates == 3 and len(learner.replay) == 9
        assert max(batch.staleness) <= 2
        digests = ray.get([w.weights_digest.remote() for w in collector.workers])
        expected = float(sum(float(p.double().sum()) for p in learner.policy_model.state_dict().values()))
        assert digests == pytest.approx([expected] * 3, rel=1e-9)


@pytest.mark.slow
def test_workers_drive_devices_behind_adb(ray_cluster, tmp_path_factory) -> None:
    """Two workers, each on a simulated adbd reached through the real adb server (the emulator code path)."""
    adb = "/usr/bin/adb"
    if not os.access(adb, os.X_OK):
        pytest.skip(f"{adb} not installed (apt-get install adb)")
    from android_gym.adbd import HostAdb, SimAdbd
    from android_gym.sim import SimPhone

    host = HostAdb(adb=adb, home=tmp_path_factory.mktemp("adb_home"))
    host.start_server()
    daemons = [SimAdbd(SimPhone(seed=i), port=0, announce=False).start() for i in range(2)]
    try:
        spec = AdbDeviceSpec([f"127.0.0.1:{d.port}" for d in daemons],
                             env_kwargs={"task": "SystemWifiTurnOff", "max_steps": 2},
                             device_kwargs={"adb_port": host.server_port, "adb_path": adb, "timeout": 5.0,
                                            "console_port": None, "use_uiautomator2": False})
        with RayCollector(spec, ScriptedPolicy(), num_workers=2, async_collection=False) as collector:
            batch = collector.collect(2, seeds=0)
            assert len(batch) == 2 and all(len(t.steps) == 2 and not t.error for t in batch.trajectories)
            assert {t.info["worker"] for t in batch.trajectories} == {0, 1}
            assert all("wifi" in t.instruction.lower() for t in batch.trajectories)
    finally:
        for d in daemons:
            d.stop()
        host.kill_server()


def test_workers_boot_their_own_emulators_and_survive_one_crashing(ray_cluster, tmp_path_factory) -> None:
    """EmulatorDeviceSpec: each worker boots an emulator (the stand-in binary: the sim behind adbd, registered with
    a private adb server as emulator-C) from its own EmulatorPool; one crashes mid-episode and is relaunched."""
    from pathlib import Path

    from android_gym.adbd import HostAdb

    adb = "/usr/bin/adb"
    if not os.access(adb, os.X_OK):
        pytest.skip(f"{adb} not installed (apt-get install adb)")
    home = tmp_path_factory.mktemp("emu_home")
    host = HostAdb(adb=adb, home=home)
    host.start_server()
    fake = Path(__file__).resolve().parents[1] / "android_gym" / "fake_emulator" / "emulator"
    # an emulator dies at its 40th shell command, once per console port (the state dir remembers); port 5554's
    # (worker 0's) is marked as fired already, so only worker 1's emulator (5556) crashes
    (home / "fired").mkdir()
    (home / "fired" / "fired-5554").write_text("crash")
    env = {"FAKE_EMULATOR_PYTHON": sys.executable, "HOME": str(home), "FAKE_EMULATOR_STATE_DIR": str(home / "fired"),
           "FAKE_EMULATOR_HOME": str(home / "avd"), "FAKE_EMULATOR_CRASH_AFTER": "40"}
    spec = EmulatorDeviceSpec(
        "Pixel_6_API_33", env_kwargs={"task": "SystemWifiTurnOff", "max_steps": 3}, env_id="AndroidSim-v0",
        pool_kwargs={"emulator_path": str(fake), "adb_port": host.server_port, "adb_path": adb, "env": env,
                     "boot_timeout": 30.0, "grace_period": 2.0, "log_dir": str(home / "logs"),
                     "device_kwargs": {"timeout": 3.0, "console_token_path": str(home / ".emulator_console_auth_token"),
                                       "recover_timeout": 30.0}})
    try:
        with RayCollector(spec, ScriptedPolicy(), num_workers=2, async_collection=False) as collector:
            batch = collector.collect(8, seeds=0)
            assert len(batch) == 8 and not batch.failures
            assert {t.info["worker"] for t in batch.trajectories} == {0, 1}
            errors = [t.error for t in batch.trajectories if t.error]
            assert len(errors) == 1 and all(t.truncated for t in batch.trajectories if t.error), errors
            assert all(len(t.steps) == 3 for t in batch.trajectories if not t.error)
            assert [t.info["worker"] for t in batch.trajectories if t.error] == [1]
            # the crashed emulator was relaunched: both workers play clean episodes again
            again = collector.collect(4, seeds=1)
            assert len(again) == 4 and not any(t.error for t in again.trajectories)
            assert {t.info["worker"] for t in again.trajectories} == {0, 1}
        listed = host.devices()
        assert not [s for s, state in listed.items() if s.startswith("emulator-") and state == "device"], listed
    finally:
        host.kill_server()


def test_cluster_without_device_slots_is_a_clear_error(ray_cluster) -> None:
    with pytest.raises(ValueError, match="declares no 'phone_slot' resource"):
        RayCollector(_sim(), ScriptedPolicy(), num_workers=1, device_resource="phone_slot", ray_node_wait_s=0)
    started = time.monotonic()
    with pytest.raises(ValueError, match=r"declares no 'phone_slot' resource.*waited ray_node_wait_s=1\.5 s"):
        RayCollector(_sim(), ScriptedPolicy(), num_workers=1, device_resource="phone_slot", ray_node_wait_s=1.5)
    assert time.monotonic() - started >= 1.5  # a driver started while every device node is down waits for one
    config = DistributedArguments(collector="ray", num_workers=1, device_resource="phone_slot", ray_node_wait_s=0)
    with pytest.raises(ValueError, match="declares no 'phone_slot' resource"):  # from_config reads the same fields
        RayCollector.from_config(_sim(), ScriptedPolicy(), config)
    with pytest.raises(ValueError, match="inference must be one of worker, actor"):
        RayCollector.from_config(_sim(), ScriptedPolicy(), config, inference="gpu")


def test_one_worker_process_drives_several_devices_in_threads(ray_cluster, lm) -> None:
    # 8 devices in 2 processes: each plays 4 episodes at once (the emulator latency is mostly waiting)
    with RayCollector(_sim(time_scale=0.2, max_steps=3), ScriptedPolicy(), num_workers=8, devices_per_worker=4,
                      async_collection=False) as collector:
        assert collector.num_workers == 8 and collector.num_processes == 2
        batch = collector.collect(8, seeds=0)
        assert sorted(t.seed for t in batch.trajectories) == list(range(8))
        assert sorted(t.info["worker"] for t in batch.trajectories) == list(range(8))
        assert len(batch.records) == sum(len(t.steps) for t in batch.trajectories) == 24
        info = collector.worker_info()
        assert [i["index"] for i in info] == list(range(8)) and all(i["episodes"] == 1 for i in info)
        assert len({i["pid"] for i in info}) == 2 and {i["devices_in_process"] for i in info} == {4}
        assert batch.metrics["ray/worker_processes"] == 2.0
        started = time.perf_counter()
        collector.collect(1, seeds=100)  # one episode on one device
        one = time.perf_counter() - started
        started = time.perf_counter()
        collector.collect(8, seeds=100)  # four per process: they overlap (one after another would take 4x)
        assert time.perf_counter() - started < 2.5 * one
    with pytest.raises(ValueError, match="devices_per_worker > 1 .* use inference='actor'"):
        RayCollector(_sim(), _hf_policy(lm), num_workers=2, devices_per_worker=2)


@pytest.mark.slow
def test_a_resumed_driver_acknowledges_what_its_checkpoint_holds_and_never_delivers_it(ray_cluster, tmp_path) -> None:
    spool = str(tmp_path / "spool")
    with RayCollector(_sim(), ScriptedPolicy(), num_workers=1, async_collection=False, spool_dir=spool) as first:
        batch = first.collect(2, seeds=0)  # a driver that checkpointed these and died before acknowledging them
    held, other = batch.uids[0], batch.uids[1]
    with RayCollector(_sim(), ScriptedPolicy(), num_workers=1, async_collection=False, spool_dir=spool) as second:
        assert second.acknowledge([held]) == 1  # what TrainingLoop does with LoopState.acknowledged on resume
        again = second.collect(2, seeds=10)
        assert held not in again.uids and other in again.uids  # the spooled one it did not hold still comes back
