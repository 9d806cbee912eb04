"""The Ray actors: :class:`DeviceWorker` (one device or several, whole episodes) and :class:`InferenceServer`
(batched generation).

Both are plain classes; :mod:`coach_rl.distributed.collector` wraps them with ``ray.remote`` and its options, so
this module imports without Ray. A worker plays each episode with a :class:`coach_rl.rollout.RolloutCollector`
over its one env (the same episode, fault and reward logic as the in-process collector) and returns the finished
trajectory with its :class:`coach_rl.records.StepRecord` list; its policy is either its own CPU copy (weights loaded between episodes, so one trajectory has one
policy version) or a :class:`RemotePolicy` that asks the inference server.
"""

from __future__ import annotations

import asyncio
import copy
import os
import time
from collections.abc import Sequence
from typing import Any

from coach_rl.distributed.weights import apply_weights

__all__ = ["DeviceWorker", "InferenceServer", "RemotePolicy"]


def _one_thread() -> None:
    """Workers share the host's cores: one BLAS/torch thread each (OMP_NUM_THREADS=1)."""
    os.environ["OMP_NUM_THREADS"] = "1"
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover - torch is a dependency of coach-rl
        pass


def _node_id() -> str | None:
    """The Ray node this process runs on (None outside Ray)."""
    try:
        import ray

        return str(ray.get_runtime_context().get_node_id()) if ray.is_initialized() else None
    except Exception:  # noqa: BLE001 - outside a Ray worker
        return None


class RemotePolicy:
    """A :class:`coach_rl.policy.Policy` whose ``act`` is answered by an :class:`InferenceServer` actor."""

    def __init__(self, server: Any) -> None:
        """``server``: the inference actor's handle."""
        self.server = server
        self.version = 0

    def act(self, requests: Sequence[Any], *, greedy: bool = False) -> list[Any]:
        """Send the requests, wait for the replies (the server batches them with other workers')."""
        import ray

        version, outputs = ray.get(self.server.act.remote(list(requests), greedy))
        self.version = int(version)
        return outputs


class InferenceServer:
    """One policy answering every worker: requests arriving within ``batch_wait_s`` are generated in one batch."""

    def __init__(self, policy: Any, batch_wait_s: float = 0.005) -> None:
        """``policy``: any Policy (an HFPolicy on the GPU, a VLLMPolicy...)."""
        _one_thread()
        self.policy = policy
        self.batch_wait_s = float(batch_wait_s)
        self._pending: list[tuple[list[Any], bool, asyncio.Future]] = []
        self._flush: asyncio.Task | None = None
        self.batches: list[int] = []

    async def act(self, requests: list[Any], greedy: bool = False) -> tuple[int, list[Any]]:
        """Queue ``requests``; answered with the others of this batching window as ``(version, outputs)``."""
        future = asyncio.get_running_loop().create_future()
        self._pending.append((requests, bool(greedy), future))
        if self._flush is None or self._flush.done():
            self._flush = asyncio.create_task(self._run_batch())
        return await future

    async def _run_batch(self) -> None:
        await asyncio.sleep(self.batch_wait_s)
        pending, self._pending = self._pending, []
        for greedy in (False, True):
            group = [p for p in pending if p[1] == greedy]
            if not group:
                continue
            flat = [r for reqs, _, _ in group for r in reqs]
            try:
                outputs = await asyncio.get_running_loop().run_in_executor(
                    None, lambda flat=flat, greedy=greedy: self.policy.act(flat, greedy=greedy))
            except Exception as exc:  # noqa: BLE001 - every waiting worker gets the error
                for _, _, future in group:
                    future.set_exception(exc)
                continue
            self.batches.append(len(flat))
            start = 0
            for reqs, _, future in group:
                future.set_result((int(getattr(self.policy, "version", 0)), outputs[start:start + len(reqs)]))
                start += len(reqs)

    def set_policy(self, version: int, weights: Any) -> int:
        """Load a published version; returns it."""
        apply_weights(self.policy, weights)
        self.policy.version = int(version)
        return int(version)

    def batch_sizes(self) -> list[int]:
        """Requests per generation call so far (to check that batching across workers happens)."""
        return list(self.batches)


class DeviceWorker:
    """One or several devices and their episodes (see the module docstring).

    With ``count`` > 1 the worker owns devices ``index .. index + count - 1`` (one env and one
    :class:`~coach_rl.rollout.RolloutCollector` each); the collector runs it as a threaded actor
    (``max_concurrency=count``) and plays one episode per device at a time, so a host's emulators need one
    process, not one each. Device ``index + k`` is slot ``k``.
    """

    def __init__(self, index: int, device: Any, policy: Any, inference: Any = None,
                 collector_kwargs: dict[str, Any] | None = None, max_env_replacements: int = 2,
                 count: int = 1) -> None:
        """Open the devices' envs; ``policy`` is this worker's copy (None with an ``inference`` server handle)."""
        _one_thread()
        from coach_rl.rollout import RolloutCollector

        self.index = int(index)
        self.count = int(count)
        # one copy of the description per device: a spec that holds what it opened (EmulatorDeviceSpec's pool)
        # serves one device only
        self.devices = [device] + [copy.deepcopy(device) for _ in range(self.count - 1)]
        self.policy = policy if inference is None else RemotePolicy(inference)
        self.max_env_replacements = int(max_env_replacements)
        self.envs = [d.open(self.index + k) for k, d in enumerate(self.devices)]
        kwargs = dict(collector_kwargs or {})
        rewards = kwargs.pop("rewards", None)
        # one reward pipeline per device (its own counters; the same PRM and verifier): the devices' threads
        # score at the same time
        self.collectors = [RolloutCollector([env], self.policy, **kwargs,
                                            **({} if rewards is None else {"rewards": rewards.fork() if k else rewards}))
                           for k, env in enumerate(self.envs)]
        self.replacements = [0] * self.count
        self.played = [0] * self.count
        try:
            import warnings

            import ray

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.restarted = bool(ray.get_runtime_context().was_current_actor_reconstructed)
        except Exception:  # noqa: BLE001 - outside Ray (tests of the class itself)
            self.restarted = False

    @property
    def device(self) -> Any:
        """The description of the first device."""
        return self.devices[0]

    @property
    def env(self) -> Any:
        """The env of the first device."""
        return self.envs[0]

    @property
    def episodes(self) -> int:
        """Episodes played on all devices."""
        return sum(self.played)

    @property
    def env_replacements(self) -> int:
        """Devices replaced, all slots."""
        return sum(self.replacements)

    def pid(self) -> int:
        """The worker process id (tests kill it)."""
        return os.getpid()

    def info(self, slot: int = 0) -> dict[str, Any]:
        """Counters of device ``slot``: episodes played, devices replaced, whether Ray restarted this worker, the
        host and Ray node."""
        import socket

        return {"index": self.index + slot, "pid": os.getpid(), "episodes": self.played[slot],
                "env_replacements": self.replacements[slot], "restarted": self.restarted,
                "host": socket.gethostname(), "node_id": _node_id(), "devices_in_process": self.count,
                "policy_version": int(getattr(self.policy, "version", 0))}

    def weights_digest(self) -> float:
        """Sum of every weight of this worker's policy copy (NaN without one): shows which weights arrived."""
        model = getattr(self.policy, "model", None)
        if model is None:
            return float("nan")
        return float(sum(float(p.double().sum()) for p in model.state_dict().values()))

    def set_policy(self, version: int, weights: Any) -> int:
        """Load a published version into this worker's copy (no-op for weights in inference mode)."""
        if not isinstance(self.policy, RemotePolicy):
            apply_weights(self.policy, weights)
        self.policy.version = int(version)
        return int(version)

    def run_episode(self, seed: int | None, options: dict[str, Any] | None, greedy: bool = False,
                    slot: int = 0) -> dict[str, Any]:
        """Play one whole episode on device ``slot``; a reset that fails makes the worker replace that device and
        try again."""
        started = time.perf_counter()
        errors: list[str] = []
        collector = self.collectors[slot]
        for _ in range(self.max_env_replacements + 1):
            batch = collector.collect(1, seeds=[seed], task_options=[options], greedy=greedy)
            if batch.trajectories:
                trajectory = batch.trajectories[0]
                self.played[slot] += 1
                trajectory.info.update(worker=self.index + slot, worker_pid=os.getpid(), node_id=_node_id(),
                                       env_replacements=self.replacements[slot], reset_errors=list(errors))
                return {"trajectory": trajectory, "records": batch.records, "stats": batch.stats.as_dict(),
                        "error": None, "seconds": time.perf_counter() - started}
            errors.append(batch.failures[0].error if batch.failures else "the episode did not start")
            self.envs[slot] = self.devices[slot].replace(self.index + slot, self.envs[slot])
            collector.envs = [self.envs[slot]]
            self.replacements[slot] += 1
        return {"trajectory": None, "records": [], "stats": None, "error": "; ".join(errors),
                "seconds": time.perf_counter() - started}

    def close(self) -> None:
        """Close the envs and release the devices (all of them, even when one fails; its error is raised after)."""
        errors: list[Exception] = []
        for env, device in zip(self.envs, self.devices):
            for close in (env.close, device.close):
                try:
                    close()
                except Exception as exc:  # noqa: BLE001 - the others still close
                    errors.append(exc)
        if errors:
            raise errors[0]
