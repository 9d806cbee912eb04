"""``SimDevice``: the :class:`android_gym.device.Device` protocol over an in-process ``SimPhone``.

Actions go through the same shell commands a real device gets (``action_to_commands``); the
latency model and fault injection apply here, per device call.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from android_gym.actions import Action, Wait
from android_gym.device import DeviceCrashed, DeviceDisconnected, DeviceTimeout, action_to_commands
from android_gym.screen import Screen
from android_gym.sim.faults import FaultPlan, make_faults
from android_gym.sim.latency import LatencyModel, make_latency
from android_gym.sim.phone import SimPhone

DEFAULT_TIMEOUT = 30.0
_SERIALS = itertools.count()


def _latency_op(command: str) -> str:
    words = command.split(None, 3)
    if not words:
        return "shell"
    head = words[0]
    if head == "input" and len(words) > 1:
        sub = words[1]
        return {"tap": "tap", "swipe": "swipe", "draganddrop": "swipe", "text": "text"}.get(sub, "keyevent")
    if head == "monkey" or (head == "am" and len(words) > 1 and words[1] in ("start", "start-activity")):
        return "launch"
    if head == "uiautomator":
        return "dump"
    if head == "screencap":
        return "screenshot"
    return "shell"


def console_reply(phone: SimPhone, words: list[str], avd_name: str = "Pixel_6_API_33") -> str | None:
    """The emulator console's reply to the phone-side commands (``sms send``, ``avd name``); None for others."""
    head = words[0].lower() if words else ""
    if head == "sms":
        if len(words) < 4 or words[1].lower() != "send":
            return "KO: usage: sms send <phonenumber> <text message>\r\n"
        try:
            phone.receive_sms(words[2], " ".join(words[3:]))
        except ValueError as exc:
            return f"KO: {exc}\r\n"
        return "OK\r\n"
    if head == "avd" and words[1:2] == ["name"]:
        return f"{avd_name}\r\nOK\r\n"
    if head == "ping":
        return "I am alive!\r\nOK\r\n"
    return None


class SimConsole:
    """The emulator console of an in-process simulated phone (what ``adb emu ...`` reaches)."""

    def __init__(self, phone: SimPhone):
        self.phone = phone

    def command(self, command: str, timeout: float | None = None) -> str:
        """The console's reply to one command line (``KO: ...`` for what the sim does not answer)."""
        reply = console_reply(self.phone, command.split())
        return reply if reply is not None else f"KO: unknown command '{command.split()[0] if command else ''}'\r\n"


class SimDevice:
    """A simulated phone as a ``Device``: shell, observe, execute, snapshots, health.

    ``phone``: an existing ``SimPhone`` (None: a new one from ``phone_kwargs``). ``latency``: None,
    "zero", "emulator", a dict of per-operation seconds or a ``LatencyModel``. ``faults``: None, a
    ``FaultPlan``, a dict of per-call rates or a list of (call number, kind). ``sleep`` replaces
    ``time.sleep`` for latency and hangs (tests pass a recorder).
    """

    def __init__(self, phone: SimPhone | None = None, *, serial: str | None = None,
                 latency: str | LatencyModel | Mapping[str, float] | None = None,
                 faults: FaultPlan | Mapping[str, float] | Iterable[tuple[int, str]] | None = None,
                 timeout: float = DEFAULT_TIMEOUT, sleep: Callable[[float], None] | None = None,
                 seed: int = 0, **phone_kwargs: Any):
        self.phone = phone if phone is not None else SimPhone(seed=seed, **phone_kwargs)
        self.serial = serial or f"sim-{next(_SERIALS)}"
        self._sleep = sleep or time.sleep
        self.latency = make_latency(latency if latency is not None else self.phone.latency, sleep=self._sleep)
        if sleep is not None:
            self.latency.sleep = sleep
        self.faults = make_faults(faults if faults is not None else self.phone.faults, seed=seed)
        self.timeout = timeout
        self.crashed = False
        self.hung = False
        self.disconnected = False
        self.closed = False
        self.console = SimConsole(self.phone)

    # --- fault and latency gate -----------------------------------------------------------------
    def _gate(self, op: str, timeout: float | None = None) -> None:
        if self.closed:
            raise DeviceDisconnected(f"{self.serial}: device is closed")
        if self.disconnected:
            raise DeviceDisconnected(f"{self.serial}: device offline (call reconnect())")
        if self.crashed:
            raise DeviceCrashed(f"{self.serial}: device crashed (call reboot())")
        limit = self.timeout if timeout is None else timeout
        if self.hung:
            self._sleep(limit)
            raise DeviceTimeout(f"{self.serial}: no answer within {limit:g} s (device hung; call reboot())")
        kind = self.faults.next_fault(op) if self.faults is not None else None
        if kind == "crash":
            self.crashed = True
            raise DeviceCrashed(f"{self.serial}: system server crashed during {op}")
        if kind == "disconnect":
            self.disconnected = True
            raise DeviceDisconnected(f"{self.serial}: transport closed during {op}")
        if kind == "hang":
            self.hung = True
            self._sleep(limit)
            raise DeviceTimeout(f"{self.serial}: {op} did not answer within {limit:g} s")
        extra = self.faults.slow_seconds if kind == "slow" and self.faults is not None else 0.0
        self.latency.wait(op, extra)

    # --- Device protocol ------------------------------------------------------------------------
    @property
    def screen_size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return self.phone.width, self.phone.height

    def shell(self, command: str, timeout: float | None = None) -> str:
        """Run a shell command line on the phone and return its output."""
        self._gate(_latency_op(command), timeout)
        return self.phone.shell(command)

    def exec_out(self, command: str, timeout: float | None = None) -> bytes:
        """Run a command and return raw bytes (``screencap -p`` gives PNG)."""
        self._gate(_latency_op(command), timeout)
        return self.phone.exec_out(command)

    @property
    def last_status(self) -> int:
        """Exit status of the last shell command."""
        return self.phone.last_status

    def observe(self, screenshot: bool = False) -> Screen:
        """The current screen: hierarchy XML, optionally the pixels, and the foreground activity."""
        self._gate("dump")
        xml = self.phone.dump()
        pixels = None
        if screenshot:
            self.latency.wait("screenshot")
            pixels = self.phone.screenshot().copy()  # callers own what they get; the phone keeps its cache
        activity = self.phone.current_activity()
        return Screen(xml=xml, width=self.phone.width, height=self.phone.height, screenshot=pixels,
                      activity=activity, package=activity.split("/", 1)[0])

    def execute(self, action: Action) -> None:
        """Perform ``action`` through its shell commands (ValueError for an unknown app propagates)."""
        commands = action_to_commands(action, self.screen_size)
        if isinstance(action, Wait):
            self._gate("shell")
            self.phone.advance_clock(1000)
            return
        for command in commands:
            self._gate(_latency_op(command))
            self.phone.shell(command)

    def push(self, local: str, remote: str) -> None:
        """``adb push``: copy a local file onto the phone (into ``remote`` when it is a folder)."""
        self._gate("shell")
        with open(local, "rb") as fh:
            data = fh.read()
        files = self.phone.files
        if files.is_dir(remote):
            remote = remote.rstrip("/") + "/" + local.replace("\\", "/").rsplit("/", 1)[-1]
        files.write(remote, data, self.phone.clock_ms)
        self.phone.file_changed(remote)

    def pull(self, remote: str, local: str) -> None:
        """``adb pull``: copy a file from the phone to ``local`` (FileSystemError when it does not exist)."""
        self._gate("shell")
        data = self.phone.files.read(remote)
        with open(local, "wb") as fh:
            fh.write(data)

    def snapshot_save(self, name: str) -> None:
        """Save the whole phone state under ``name``."""
        self._gate("snapshot_save")
        self.phone.snapshot_save(name)

    def snapshot_load(self, name: str) -> None:
        """Restore the phone state saved under ``name``."""
        self._gate("snapshot_load")
        self.phone.snapshot_load(name)

    def snapshot_list(self) -> list[str]:
        """Names of saved snapshots."""
        return self.phone.snapshot_list()

    def snapshot_delete(self, name: str) -> None:
        """Forget a snapshot."""
        self.phone.snapshot_delete(name)

    def health(self) -> bool:
        """True when the device answers (not crashed, hung, disconnected or closed)."""
        return not (self.crashed or self.hung or self.disconnected or self.closed)

    def close(self) -> None:
        """Release the device; later calls raise DeviceDisconnected."""
        self.closed = True

    # --- recovery -------------------------------------------------------------------------------
    def reboot(self) -> None:
        """Restart a crashed or hung phone: data and settings survive, apps lose their UI state."""
        self.crashed = False
        self.hung = False
        for app in self.phone.apps.values():
            app.stop()
        self.phone.recents.clear()
        self.phone.home()

    def reconnect(self) -> None:
        """Re-attach after a disconnect."""
        if self.closed:
            raise DeviceDisconnected(f"{self.serial}: device is closed")
        self.disconnected = False

    def recover(self) -> None:
        """Bring a failed device back: reconnect, and reboot when it crashed or hung (snapshots survive)."""
        self.reconnect()
        if self.crashed or self.hung:
            self.reboot()

    def __repr__(self) -> str:
        return f"SimDevice({self.serial!r}, health={self.health()})"
