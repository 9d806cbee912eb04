"""A latency model standing in for emulator timing: per-operation delays slept through an injectable function.

Presets:
- ``"zero"`` (default): no delay, the simulated phone at full speed.
- ``"emulator"``: typical Android emulator (API 33, x86_64, host GPU) costs per operation, so code
  paths that are fast on the sim but slow on a real device can be exercised. The numbers are the
  usual orders of magnitude for adb-driven emulators: a ``uiautomator dump`` takes ~0.5-1 s (it
  starts an instrumentation process each time), ``screencap -p`` ~0.2-0.3 s (PNG encoding on the
  device plus transfer), an ``input`` command ~0.1-0.2 s (a Java process start), an app cold start
  ~1 s, a snapshot load several seconds. The papers in the project's seeds (Android Coach, DistRL,
  MobileRL) all name emulator interaction as the bottleneck of online RL; Android Coach measures it
  at 1.7x the model's load+inference time.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

OPERATIONS = ("tap", "swipe", "text", "keyevent", "launch", "dump", "screenshot", "shell", "snapshot_save",
              "snapshot_load")

PRESETS: dict[str, dict[str, float]] = {
    "zero": {op: 0.0 for op in OPERATIONS},
    "emulator": {
        "tap": 0.15,
        "swipe": 0.45,  # the 300 ms gesture itself plus the input process
        "text": 0.25,
        "keyevent": 0.15,
        "launch": 1.0,
        "dump": 0.7,
        "screenshot": 0.25,
        "shell": 0.08,
        "snapshot_save": 2.0,
        "snapshot_load": 3.0,
    },
}


@dataclass
class LatencyModel:
    """Seconds of delay per operation, scaled by ``time_scale`` with optional seeded relative ``jitter``.

    ``sleep`` is called with each delay (``time.sleep`` by default; tests pass a recorder).
    ``total`` accumulates the simulated seconds spent.
    """

    delays: dict[str, float]
    time_scale: float = 1.0
    jitter: float = 0.0
    seed: int = 0
    sleep: Callable[[float], None] = time.sleep
    total: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = set(self.delays) - set(OPERATIONS)
        if unknown:
            raise ValueError(f"unknown latency operation(s) {sorted(unknown)}; known: {OPERATIONS}")
        if self.time_scale < 0 or self.jitter < 0 or any(v < 0 for v in self.delays.values()):
            raise ValueError("latency delays, time_scale and jitter must be >= 0")
        self._rng = random.Random(self.seed)

    @classmethod
    def preset(cls, name: str, time_scale: float = 1.0, sleep: Callable[[float], None] | None = None,
               jitter: float = 0.0, seed: int = 0) -> LatencyModel:
        """A model from a preset name ("zero" or "emulator")."""
        if name not in PRESETS:
            raise ValueError(f"unknown latency preset {name!r}; known: {sorted(PRESETS)}")
        return cls(dict(PRESETS[name]), time_scale=time_scale, jitter=jitter, seed=seed,
                   sleep=sleep or time.sleep)

    def cost(self, op: str) -> float:
        """The delay (seconds) the next ``op`` would take, jitter included."""
        base = self.delays.get(op, 0.0) * self.time_scale
        if base and self.jitter:
            base *= 1.0 + self._rng.uniform(-self.jitter, self.jitter)
        return max(0.0, base)

    def wait(self, op: str, extra: float = 0.0) -> float:
        """Sleep for ``op`` (plus ``extra`` seconds); returns the seconds slept."""
        if op not in OPERATIONS:
            raise ValueError(f"unknown latency operation {op!r}; known: {OPERATIONS}")
        seconds = self.cost(op) + max(0.0, extra)
        self.counts[op] = self.counts.get(op, 0) + 1
        if seconds > 0:
            self.total += seconds
            self.sleep(seconds)
        return seconds


def make_latency(spec: str | LatencyModel | Mapping[str, float] | None,
                 sleep: Callable[[float], None] | None = None) -> LatencyModel:
    """A ``LatencyModel`` from None/"zero", a preset name, a dict of delays, or a model (returned as is)."""
    if isinstance(spec, LatencyModel):
        return spec
    if spec is None:
        return LatencyModel.preset("zero", sleep=sleep)
    if isinstance(spec, str):
        return LatencyModel.preset(spec, sleep=sleep)
    if isinstance(spec, Mapping):
        delays = dict(PRESETS["zero"])
        delays.update({k: float(v) for k, v in spec.items()})
        return LatencyModel(delays, sleep=sleep or time.sleep)
    raise TypeError(f"latency must be None, a preset name, a dict or a LatencyModel, got {type(spec).__name__}")
