"""Distributed collection on Ray: device workers as actors, policy versions, staleness, spooled trajectories.

Install with ``pip install "coach-rl[ray]"``. :class:`RayCollector` has the API of
:class:`coach_rl.rollout.RolloutCollector` (``collect``) plus ``publish_policy`` and ``close``; its settings are the
fields of :class:`DistributedArguments`. Nothing here imports Ray until a collector is built.
"""

from __future__ import annotations

from coach_rl.distributed.arguments import DistributedArguments
from coach_rl.distributed.collector import DistributedRolloutBatch, RayCollector, RayHeadLost, ensure_ray
from coach_rl.distributed.devices import AdbDeviceSpec, DeviceSpec, EmulatorDeviceSpec, SimDeviceSpec
from coach_rl.distributed.scripted import ScriptedPolicy
from coach_rl.distributed.spool import TrajectorySpool
from coach_rl.distributed.weights import WeightsRef, apply_weights, cpu_state_dict, write_shared_weights
from coach_rl.distributed.worker import DeviceWorker, InferenceServer, RemotePolicy

__all__ = [
    "AdbDeviceSpec",
    "DeviceSpec",
    "DeviceWorker",
    "DistributedArguments",
    "DistributedRolloutBatch",
    "EmulatorDeviceSpec",
    "InferenceServer",
    "RayCollector",
    "RayHeadLost",
    "RemotePolicy",
    "ScriptedPolicy",
    "SimDeviceSpec",
    "TrajectorySpool",
    "WeightsRef",
    "apply_weights",
    "cpu_state_dict",
    "ensure_ray",
    "write_shared_weights",
]
