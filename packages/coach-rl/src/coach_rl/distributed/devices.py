"""What device a worker owns, as a picklable description the worker turns into an env inside its own process.

- :class:`SimDeviceSpec`: the embedded simulated phone (``gym.make("AndroidSim-v0", **env_kwargs)``), with its
  latency preset and fault injection; per-worker overrides make some workers slower (stragglers) or faulty.
- :class:`AdbDeviceSpec`: a phone, emulator or simulated adbd reached through adb, one serial per worker.
- :class:`EmulatorDeviceSpec`: an emulator the worker boots itself from android_gym's ``EmulatorPool`` (size 1)
  on the node it was placed on, and restarts when the device dies.

``open()`` gives the env; ``replace(env)`` gives a fresh one after the device failed in a way the env's own
recovery (reboot/reconnect at reset) could not fix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AdbDeviceSpec", "DeviceSpec", "EmulatorDeviceSpec", "SimDeviceSpec"]

DEFAULT_ENV_ID = "AndroidSim-v0"


def _make_env(env_id: str, kwargs: Mapping[str, Any]) -> Any:
    import gymnasium as gym

    import android_gym  # noqa: F401  (registers the env ids)

    return gym.make(env_id, **dict(kwargs))


@dataclass
class SimDeviceSpec:
    """The simulated phone: ``env_kwargs`` for every worker, ``per_worker[i]`` merged on top for worker ``i``."""

    env_kwargs: dict[str, Any] = field(default_factory=dict)
    per_worker: Sequence[Mapping[str, Any]] = ()
    env_id: str = DEFAULT_ENV_ID
    device_timeout: float | None = None
    """Seconds a hung simulated device makes its caller wait (None: the sim's default, 30 s)."""

    def kwargs_for(self, index: int) -> dict[str, Any]:
        """The env keyword arguments of worker ``index``."""
        kwargs = dict(self.env_kwargs)
        if self.per_worker:
            kwargs.update(self.per_worker[index % len(self.per_worker)])
        return kwargs

    def open(self, index: int) -> Any:
        """A new env (a new simulated phone) for worker ``index``."""
        kwargs = self.kwargs_for(index)
        if self.device_timeout is not None:
            from android_gym.sim import SimDevice, SimPhone

            width, height = kwargs.pop("screen_size", (1080, 2400))
            phone = SimPhone(width=width, height=height, latency=kwargs.pop("latency", None),
                             faults=kwargs.pop("faults", None))
            kwargs["device"] = SimDevice(phone, timeout=self.device_timeout)
        return _make_env(self.env_id, kwargs)

    def replace(self, index: int, env: Any) -> Any:
        """Close the failed env and start a fresh simulated phone."""
        try:
            env.close()
        except Exception:  # noqa: BLE001 - a dead device may fail to close; the new one matters
            pass
        return self.open(index)

    def close(self) -> None:
        """Nothing to release."""


@dataclass
class AdbDeviceSpec:
    """Devices behind adb: worker ``i`` drives ``serials[i]`` (``emulator-5554``, ``host:port`` of an adbd...)."""

    serials: Sequence[str]
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    device_kwargs: dict[str, Any] = field(default_factory=dict)
    env_id: str = "AndroidWorld-v0"

    def __post_init__(self) -> None:
        if isinstance(self.serials, str) or not self.serials:
            raise ValueError("serials must be a non-empty list, one adb serial per worker")

    def open(self, index: int) -> Any:
        """An env on this worker's serial."""
        from android_gym.drivers import AdbDevice

        if index >= len(self.serials):
            raise ValueError(f"worker {index} has no device: only {len(self.serials)} serials were given")
        device = AdbDevice(self.serials[index], **self.device_kwargs)
        return _make_env(self.env_id, {**self.env_kwargs, "device": device})

    def replace(self, index: int, env: Any) -> Any:
        """Reconnect: close the env and open the same serial again (adb reconnects on open)."""
        try:
            env.close()
        except Exception:  # noqa: BLE001
            pass
        return self.open(index)

    def close(self) -> None:
        """Nothing to release (the devices outlive the workers)."""


@dataclass
class EmulatorDeviceSpec:
    """An emulator of AVD ``avd`` booted by the worker on its node (``EmulatorPool(avd, size=1)``)."""

    avd: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    pool_kwargs: dict[str, Any] = field(default_factory=dict)
    env_id: str = "AndroidWorld-v0"

    def __post_init__(self) -> None:
        self._pool: Any = None
        self._device: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in ("_pool", "_device")}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._pool = None
        self._device = None

    def pool_kwargs_for(self, index: int) -> dict[str, Any]:
        """``pool_kwargs``, with worker ``index``'s own first console port unless ``base_port`` is given.

        Workers on one host boot their emulators at the same moment; searching the port range from the same
        start, two would pick the same free pair before either binds it. Worker ``i`` starts at 5554 + 2i.
        """
        from android_gym.drivers.pool import FIRST_CONSOLE_PORT, LAST_CONSOLE_PORT

        kwargs = dict(self.pool_kwargs)
        if "base_port" not in kwargs:
            slots = (int(kwargs.get("max_port", LAST_CONSOLE_PORT)) - FIRST_CONSOLE_PORT) // 2 + 1
            kwargs["base_port"] = FIRST_CONSOLE_PORT + 2 * (index % slots)
        return kwargs

    def open(self, index: int) -> Any:
        """Boot the emulator (first call) and give an env on it."""
        from android_gym.drivers import EmulatorPool

        if self._pool is None:
            self._pool = EmulatorPool(self.avd, size=1, **self.pool_kwargs_for(index))
        self._device = self._pool.acquire()
        return _make_env(self.env_id, {**self.env_kwargs, "device": self._device})

    def replace(self, index: int, env: Any) -> Any:
        """Restart the emulator (kill, relaunch, boot) and give an env on the fresh device."""
        try:
            env.close()
        except Exception:  # noqa: BLE001
            pass
        self._device = self._pool.restart(self._device)
        return _make_env(self.env_id, {**self.env_kwargs, "device": self._device})

    def close(self) -> None:
        """Shut the emulator down."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None


DeviceSpec = SimDeviceSpec | AdbDeviceSpec | EmulatorDeviceSpec
"""Any of the device descriptions above (anything with ``open(index)``, ``replace(index, env)``, ``close()``)."""
