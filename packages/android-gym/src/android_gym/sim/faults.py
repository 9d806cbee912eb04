"""Seeded fault injection for the simulated device: crash, hang, slow and disconnect, by chance or on schedule.

``FaultPlan`` decides, per device call, whether a fault fires. The device applies it: a crash
raises :class:`~android_gym.device.DeviceCrashed` and the device stays dead until ``reboot()``; a
hang waits out the caller's timeout then raises :class:`~android_gym.device.DeviceTimeout` and
stays hung until ``reboot()``; a disconnect raises :class:`~android_gym.device.DeviceDisconnected`
until ``reconnect()``; slow adds ``slow_seconds`` of delay and then answers normally.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

FAULT_KINDS = ("crash", "hang", "slow", "disconnect")


@dataclass
class FaultPlan:
    """When faults fire. ``rates``: probability per call of each kind; ``schedule``: (call number, kind)
    pairs that fire exactly at that 1-based call; ``ops``: the operations faults may hit (None: all)."""

    rates: dict[str, float] = field(default_factory=dict)
    schedule: list[tuple[int, str]] = field(default_factory=list)
    seed: int = 0
    slow_seconds: float = 2.0
    ops: tuple[str, ...] | None = None
    calls: int = 0
    fired: list[tuple[int, str, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        for kind, rate in self.rates.items():
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault kind {kind!r}; known: {FAULT_KINDS}")
            if not 0.0 <= rate <= 1.0:
                raise ValueError(f"fault rate for {kind!r} must be in [0, 1], got {rate}")
        if sum(self.rates.values()) > 1.0:
            raise ValueError(f"fault rates sum to more than 1: {self.rates}")
        self.schedule = [(int(n), k) for n, k in self.schedule]
        for n, kind in self.schedule:
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown scheduled fault kind {kind!r}; known: {FAULT_KINDS}")
            if n < 1:
                raise ValueError(f"scheduled call numbers start at 1, got {n}")
        self._rng = random.Random(self.seed)
        self._by_call = {n: k for n, k in self.schedule}

    def next_fault(self, op: str) -> str | None:
        """Count one device call of kind ``op`` and return the fault to inject, or None."""
        self.calls += 1
        kind = self._by_call.get(self.calls)
        draw = self._rng.random()  # drawn on every call so outcomes depend only on the seed and call number
        if kind is None and (self.ops is None or op in self.ops):
            acc = 0.0
            for k in FAULT_KINDS:
                acc += self.rates.get(k, 0.0)
                if draw < acc:
                    kind = k
                    break
        if kind is not None:
            self.fired.append((self.calls, op, kind))
        return kind


def make_faults(spec: FaultPlan | Mapping[str, float] | Iterable[tuple[int, str]] | None,
                seed: int = 0) -> FaultPlan | None:
    """A ``FaultPlan`` from None, a plan, a dict of per-call rates, or a list of (call, kind) pairs."""
    if spec is None or isinstance(spec, FaultPlan):
        return spec
    if isinstance(spec, Mapping):
        return FaultPlan(rates={k: float(v) for k, v in spec.items()}, seed=seed)
    return FaultPlan(schedule=list(spec), seed=seed)
