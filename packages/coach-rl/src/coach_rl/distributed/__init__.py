"""Distributed collection on Ray: device workers as actors, policy versions, staleness, spooled trajectories.

Install with ``pip install "coach-rl[ray]"``. :class:`RayCollector` has the API of
:class:`coach_rl.rollout.RolloutCollector` (``collect``) plus ``publish_policy`` and ``close``; its settings are the
fields of :class:`DistributedArguments`. Nothing here imports Ray until a collector is built, and the names
below are imported on first use (``coach-rl train``'s supervising process imports only ``supervise``).
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "coach_rl.distributed.arguments": ("DistributedArguments",),
    "coach_rl.distributed.collector": ("DistributedRolloutBatch", "RayCollector", "RayHeadLost", "ensure_ray"),
    "coach_rl.distributed.devices": ("AdbDeviceSpec", "DeviceSpec", "EmulatorDeviceSpec", "SimDeviceSpec"),
    "coach_rl.distributed.scripted": ("ScriptedPolicy",),
    "coach_rl.distributed.spool": ("TrajectorySpool",),
    "coach_rl.distributed.weights": ("WeightsRef", "apply_weights", "cpu_state_dict", "write_shared_weights"),
    "coach_rl.distributed.worker": ("DeviceWorker", "InferenceServer", "RemotePolicy"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

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


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
