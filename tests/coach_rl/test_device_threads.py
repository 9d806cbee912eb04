"""A worker that drives several devices in threads (``devices_per_worker > 1``): the episodes of its devices are
scored at the same time, with one PRM and one verifier for the whole process.

The worker class itself, without Ray: its devices' episodes run in threads here as Ray runs them in a threaded
actor. The model-level side (one generation at a time per model) is in coach_reward's test_backends.py.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest

from coach_rl.distributed import ScriptedPolicy, SimDeviceSpec
from coach_rl.distributed.worker import DeviceWorker
from coach_rl.rewards import RewardPipeline


class _Verifier:
    """Fails on one device once the other device's check has started; that check waits until the failure was
    counted and the failing episode went on to the PRM: the two checks overlap the same way every time."""

    def __init__(self) -> None:
        self.failing_device = None
        self.other_one_checking = threading.Event()
        self.failed_one_moved_on = threading.Event()

    def verify(self, trajectory, *, device=None, task=None):
        if device is self.failing_device:
            assert self.other_one_checking.wait(timeout=60)
            raise RuntimeError("the verifier's server is down")
        self.other_one_checking.set()
        assert self.failed_one_moved_on.wait(timeout=60)
        return SimpleNamespace(score=float(trajectory.success), reason="checked")


@pytest.fixture(autouse=True)
def _no_ray_left_behind():
    """The worker path calls Ray's API, which starts a default local Ray instance when none runs; shut it
    down, or test_distributed's session cluster would find Ray running without its ``android_device`` slots."""
    import ray

    running = ray.is_initialized()
    yield
    if not running and ray.is_initialized():
        ray.shutdown()


def test_each_device_thread_counts_only_its_own_episode_rewards() -> None:
    verifier = _Verifier()

    def prm(trajectory):
        verifier.failed_one_moved_on.set()  # only the failing device's episode gets here first
        return [0.5] * len(trajectory.steps)

    rewards = RewardPipeline(prm, verifier, retries=0)
    spec = SimDeviceSpec({"task": ["SystemWifiTurnOn"], "max_steps": 2})
    worker = DeviceWorker(0, spec, ScriptedPolicy(), collector_kwargs={"rewards": rewards}, count=2)
    try:
        verifier.failing_device = worker.envs[0].unwrapped.device
        results: dict[int, dict] = {}
        threads = [threading.Thread(target=lambda k=k: results.__setitem__(k, worker.run_episode(k, None, slot=k)))
                   for k in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert results[0]["error"] is None and results[1]["error"] is None
        # the failure is counted once, on the device where it happened (shared counters gave device 1 one too)
        assert [results[k]["stats"]["verifier_errors"] for k in (0, 1)] == [1, 0]
        assert results[1]["trajectory"].info["verifier"] == "checked"
        assert all(r.process_reward == 0.5 for k in (0, 1) for r in results[k]["records"])
        # the devices share the reward models, not the counters episodes are measured with
        pipelines = [c.rewards for c in worker.collectors]
        assert pipelines[0] is not pipelines[1] and pipelines[0].stats is not pipelines[1].stats
        assert pipelines[0].prm is pipelines[1].prm is prm and pipelines[1].verifier is verifier
    finally:
        worker.close()
