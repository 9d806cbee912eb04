"""``EmulatorPool``: N headless Android emulators from one AVD, handed out as ``AdbDevice`` s and kept alive.

Each emulator gets a free port pair (even console port C, adb port C+1, from 5554 up) and runs as
``emulator -avd NAME -no-window -no-audio -no-boot-anim -read-only -ports C,C+1 [-snapshot S |
-no-snapshot]`` (no ``-grpc``); ``-read-only`` lets several instances share one AVD. The emulator
registers itself with the adb server as ``emulator-C`` (the pool repeats the registration,
``host:emulator:<adb port>``, while it waits, as adb's own port scan would) and takes ``emulator-C`` for its
own only when its emulator's process holds port C+1 (adb lists every emulator on this host, so another pool's
emulator that took the port first would otherwise be lent; the pool relaunches on the next free pair). It waits for
``sys.boot_completed``, turns animations off, and hands devices out with ``acquire``/``release``
(or ``with pool.device() as d``). A device that stops answering is restarted in place (kill and
relaunch on the same ports); its ``AdbDevice.recover()`` does that through the pool. ``close()``
asks each emulator to exit over its console (``kill``), then sends SIGTERM, then SIGKILL.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from android_gym.device import DeviceCrashed, DeviceError, DeviceTimeout
from android_gym.drivers.adb import AdbDevice, adb_server_request, server_port_from_env, start_adb_server
from android_gym.drivers.snapshots import EmulatorConsoleClient, check_snapshot_name

logger = logging.getLogger(__name__)

FIRST_CONSOLE_PORT = 5554
LAST_CONSOLE_PORT = 5682
ANIMATION_SETTINGS = ("window_animation_scale", "transition_animation_scale", "animator_duration_scale")


class EmulatorError(DeviceError):
    """An emulator could not be launched, did not boot in time, or the pool has none to give."""


def default_emulator_path() -> str:
    """``$ANDROID_HOME/emulator/emulator`` (or ``$ANDROID_SDK_ROOT``), else ``emulator`` on PATH."""
    for var in ("ANDROID_HOME", "ANDROID_SDK_ROOT"):
        root = os.environ.get(var)
        if root:
            return str(Path(root) / "emulator" / "emulator")
    return "emulator"


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """True when nothing listens on ``host:port`` and a server could bind it now (old connections
    lingering in TIME_WAIT do not count: emulators bind with SO_REUSEADDR)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def listening_sessions(port: int, proc: str = "/proc", holders: list[str] | None = None
                       ) -> set[int | None] | None:
    """The session ids of the processes listening on local TCP ``port``, read from Linux's /proc (None for a
    listener whose process this user cannot see); None where /proc cannot tell. ``holders``, when given, gets each
    listening process as "pid N (command line)".

    adb's server connects to every emulator it finds on ports 5555-5585, whoever started it, so ``emulator-5554``
    in adb may be another pool's emulator (another adb server, test worker or user) that bound the port between
    this pool's port check and its own emulator's start; the pool checks the listener is in its emulator's session.
    """
    inodes: set[str] = set()
    try:
        for table in ("tcp", "tcp6"):
            with contextlib.suppress(FileNotFoundError), open(f"{proc}/net/{table}") as rows:
                for row in list(rows)[1:]:
                    cols = row.split()
                    if len(cols) > 9 and cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:
                        inodes.add(cols[9])
    except (OSError, ValueError):
        return None
    sessions: set[int | None] = set()
    if not inodes:
        return sessions
    found: set[str] = set()
    for pid in (name for name in os.listdir(proc) if name.isdigit()):
        try:
            fds = os.listdir(f"{proc}/{pid}/fd")
            with open(f"{proc}/{pid}/stat") as stat:
                session = int(stat.read().rpartition(")")[2].split()[3])
        except (OSError, ValueError, IndexError):
            continue
        links = set()
        for fd in fds:  # one by one: a booting emulator closes files between the listing and the readlink
            with contextlib.suppress(OSError):
                links.add(os.readlink(f"{proc}/{pid}/fd/{fd}"))
        mine = {inode for inode in inodes if f"socket:[{inode}]" in links}
        if mine:
            found |= mine
            sessions.add(session)
            if holders is not None:
                holders.append(_command_line(proc, pid))
    if found != inodes:
        sessions.add(None)
    return sessions


def _command_line(proc: str, pid: str) -> str:
    """``pid (its command line)``, shortened, for messages that say who holds a port."""
    try:
        with open(f"{proc}/{pid}/cmdline", "rb") as f:
            args = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        args = ""
    return f"pid {pid} ({args[:160]})" if args else f"pid {pid}"


def port_holders(port: int, proc: str = "/proc") -> str:
    """Who listens on local TCP ``port``, for an error message: the processes' pids and command lines, or that
    this user cannot see them."""
    holders: list[str] = []
    sessions = listening_sessions(port, proc, holders)
    if not sessions:
        return "nothing listening now" if sessions is not None else "unknown (no /proc)"
    return ", ".join(holders + (["a process this user cannot see"] if None in sessions else []))


def find_port_pair(start: int = FIRST_CONSOLE_PORT, stop: int = LAST_CONSOLE_PORT,
                   taken: Sequence[int] = ()) -> tuple[int, int]:
    """The first (console, adb) pair with an even console port in [start, stop] where both ports are free."""
    first = start + (start % 2)
    for console in range(first, stop + 1, 2):
        if console in taken or console + 1 in taken:
            continue
        if port_is_free(console) and port_is_free(console + 1):
            return console, console + 1
    raise EmulatorError(f"no free emulator port pair between {start} and {stop}")


def emulator_command(emulator: str, avd: str, console_port: int, snapshot: str | None = None,
                     extra_args: Sequence[str] = ()) -> list[str]:
    """The command line that launches one headless emulator on ``console_port`` (adb on the next port)."""
    command = [emulator, "-avd", avd, "-no-window", "-no-audio", "-no-boot-anim", "-read-only",
               "-ports", f"{console_port},{console_port + 1}"]
    command += ["-snapshot", check_snapshot_name(snapshot)] if snapshot else ["-no-snapshot"]
    return command + list(extra_args)


@dataclass
class EmulatorSlot:
    """One emulator of the pool: its ports, process, driver, and whether it is lent out."""

    index: int
    console_port: int
    adb_port: int
    log_path: Path
    process: subprocess.Popen | None = None
    device: AdbDevice | None = None
    in_use: bool = False
    restarts: int = 0
    history: list[str] = field(default_factory=list)

    @property
    def serial(self) -> str:
        """The adb serial of this emulator."""
        return f"emulator-{self.console_port}"

    def alive(self) -> bool:
        """True while the emulator process runs."""
        return self.process is not None and self.process.poll() is None


class EmulatorPool:
    """A pool of headless emulators of AVD ``avd``.

    ``size``: how many. ``emulator_path``: the emulator binary (default
    ``$ANDROID_HOME/emulator/emulator``). ``snapshot``: boot from this snapshot (None: ``-no-snapshot``,
    a cold boot). ``adb_port``: the adb server (default ``$ANDROID_ADB_SERVER_PORT`` or 5037; started
    when not running). ``boot_timeout``: seconds to wait for ``sys.boot_completed``. ``extra_args``:
    more emulator flags. ``env``: extra environment for the emulator processes. ``log_dir``: where
    each emulator's output goes. ``device_kwargs``: passed to every ``AdbDevice``. ``grace_period``:
    seconds ``close()`` waits after the console ``kill`` and after SIGTERM. ``check_on_acquire``:
    health-check a device before lending it (restarting it when it fails). ``start``: launch now.
    """

    def __init__(self, avd: str, size: int = 1, *, emulator_path: str | os.PathLike[str] | None = None,
                 snapshot: str | None = None, base_port: int = FIRST_CONSOLE_PORT,
                 max_port: int = LAST_CONSOLE_PORT, adb_port: int | None = None, adb_path: str | None = None,
                 boot_timeout: float = 300.0, extra_args: Sequence[str] = (), env: Mapping[str, str] | None = None,
                 log_dir: str | os.PathLike[str] | None = None, device_kwargs: Mapping[str, Any] | None = None,
                 animations_off: bool = True, grace_period: float = 10.0, launch_attempts: int = 2,
                 max_restarts: int = 5, check_on_acquire: bool = True, start: bool = True):
        if not avd or not isinstance(avd, str) or any(c.isspace() for c in avd):
            raise ValueError(f"bad AVD name {avd!r}")
        if size < 1:
            raise ValueError(f"a pool needs at least one emulator, got size={size}")
        if "-grpc" in extra_args:
            raise ValueError("the pool runs emulators without -grpc; drop it from extra_args")
        if snapshot is not None:
            check_snapshot_name(snapshot)
        self.avd = avd
        self.size = int(size)
        self.emulator_path = str(emulator_path) if emulator_path is not None else default_emulator_path()
        self.snapshot = snapshot
        self.base_port = int(base_port)
        self.max_port = int(max_port)
        self.adb_port = server_port_from_env() if adb_port is None else int(adb_port)
        self.adb_path = adb_path
        self.boot_timeout = float(boot_timeout)
        self.extra_args = list(extra_args)
        self.env = dict(env or {})
        self.log_dir = Path(log_dir) if log_dir is not None else Path(tempfile.mkdtemp(prefix="android_gym_emu_"))
        self.device_kwargs = dict(device_kwargs or {})
        self.animations_off = animations_off
        self.grace_period = float(grace_period)
        self.launch_attempts = int(launch_attempts)
        self.max_restarts = int(max_restarts)
        self.check_on_acquire = check_on_acquire
        self.slots: list[EmulatorSlot] = []
        self._cond = threading.Condition()
        self._closed = False
        if start:
            self.start()

    # --- lifecycle --------------------------------------------------------------------------------
    def start(self) -> EmulatorPool:
        """Launch every emulator (in parallel) and wait until all have booted."""
        if self.slots:
            return self
        if not (os.path.isfile(self.emulator_path) or os.sep not in self.emulator_path):
            raise EmulatorError(f"emulator binary not found at {self.emulator_path} (set ANDROID_HOME or "
                                "pass emulator_path=)")
        start_adb_server(self.adb_port, self.adb_path)
        self.log_dir.mkdir(parents=True, exist_ok=True)
        taken: list[int] = []
        try:
            for index in range(self.size):
                console, adb = find_port_pair(self.base_port, self.max_port, taken)
                taken += [console, adb]
                slot = EmulatorSlot(index, console, adb, self.log_dir / f"emulator-{console}.log")
                self.slots.append(slot)
                self._launch(slot)
            for slot in self.slots:
                self._boot(slot)
        except BaseException:
            self.close()
            raise
        return self

    def _environment(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(self.env)
        env["ANDROID_ADB_SERVER_PORT"] = str(self.adb_port)
        return env

    def _launch(self, slot: EmulatorSlot) -> None:
        command = emulator_command(self.emulator_path, self.avd, slot.console_port, self.snapshot, self.extra_args)
        slot.history.append(f"launch {' '.join(command)}")
        with open(slot.log_path, "ab") as log:
            log.write(f"\n=== {time.strftime('%H:%M:%S')} {' '.join(command)}\n".encode())
            log.flush()
            try:
                slot.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                                env=self._environment(), start_new_session=True)
            except OSError as exc:
                raise EmulatorError(f"cannot run the emulator {self.emulator_path}: {exc}") from None

    def _log_tail(self, slot: EmulatorSlot, lines: int = 15) -> str:
        try:
            return "\n".join(slot.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def _boot(self, slot: EmulatorSlot) -> None:
        """Wait for ``slot``'s emulator to appear in adb and finish booting (relaunching a failed one)."""
        last_error: Exception | None = None
        for attempt in range(self.launch_attempts):
            if attempt:
                self._stop_process(slot, graceful=False)
                if not (port_is_free(slot.console_port) and port_is_free(slot.adb_port)):
                    taken = [p for s in self.slots if s is not slot for p in (s.console_port, s.adb_port)]
                    slot.console_port, slot.adb_port = find_port_pair(self.base_port, self.max_port, taken)
                    if slot.device is not None:
                        slot.device.retarget(slot.serial, slot.console_port)
                self._launch(slot)
            try:
                self._wait_booted(slot)
                return
            except EmulatorError as exc:
                last_error = exc
                logger.warning("emulator %s (attempt %d) failed to boot: %s", slot.serial, attempt + 1, exc)
        raise EmulatorError(f"{slot.serial}: no boot after {self.launch_attempts} launch(es): {last_error}")

    def _wait_booted(self, slot: EmulatorSlot) -> None:
        deadline = time.monotonic() + self.boot_timeout
        state = "absent"
        strangers = 0
        while True:
            if not slot.alive():
                code = slot.process.returncode if slot.process is not None else None
                raise EmulatorError(f"the emulator exited with status {code} while booting; log "
                                    f"{slot.log_path}:\n{self._log_tail(slot)}")
            if time.monotonic() > deadline:
                raise EmulatorError(f"not in adb as 'device' after {self.boot_timeout:g} s (state {state!r}); "
                                    f"log {slot.log_path}:\n{self._log_tail(slot)}")
            state = self._adb_state(slot)
            if state not in ("device", "absent"):  # adb knows it and it is booting: nothing to check yet
                time.sleep(0.1)
                continue
            owners = listening_sessions(slot.adb_port)
            ours = owners is None or (slot.process is not None and slot.process.pid in owners)
            strangers = strangers + 1 if owners and not ours else 0
            if strangers >= 3:  # seen on three polls in a row, not one /proc read that raced a closing file
                # another emulator took the port between the free-port check and this one's start: this one
                # cannot bind it, and the 'device' adb lists there is not this pool's (_boot relaunches elsewhere)
                raise EmulatorError(f"port {slot.adb_port} is held by another process (another emulator or pool?): "
                                    f"{port_holders(slot.adb_port)}; so adb's {slot.serial} is not this pool's "
                                    f"emulator")
            if state == "device" and ours:
                break
            if ours:  # absent: register it with adb, as adb's own port scan would
                self._announce(slot)
            time.sleep(0.1)
        if slot.device is None:
            kwargs = {"recover_timeout": self.boot_timeout, **self.device_kwargs}
            slot.device = AdbDevice(slot.serial, adb_port=self.adb_port, adb_path=self.adb_path,
                                    console_port=slot.console_port, restarter=self._restarter,
                                    process_alive=slot.alive, **kwargs)
        else:
            slot.device.reopen()
            slot.device.forget_device_state()
        try:
            slot.device.wait_for_boot(max(0.1, deadline - time.monotonic()))
            if self.animations_off:
                slot.device.shell("; ".join(f"settings put global {key} 0" for key in ANIMATION_SETTINGS))
        except DeviceError as exc:
            raise EmulatorError(f"{slot.serial} did not finish booting: {exc}; log {slot.log_path}:\n"
                                f"{self._log_tail(slot)}") from None
        slot.history.append("booted")

    def _adb_state(self, slot: EmulatorSlot) -> str:
        try:
            return adb_server_request(f"host-serial:{slot.serial}:get-state", port=self.adb_port, timeout=2.0).strip()
        except DeviceError:
            return "absent"

    def _announce(self, slot: EmulatorSlot) -> None:
        with contextlib.suppress(DeviceError):
            adb_server_request(f"host:emulator:{slot.adb_port}", port=self.adb_port, timeout=2.0, status=False)

    # --- lending ----------------------------------------------------------------------------------
    def acquire(self, timeout: float | None = None) -> AdbDevice:
        """Lend a free, healthy device (waits up to ``timeout`` seconds; None waits forever)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                if self._closed:
                    raise EmulatorError("the pool is closed")
                slot = next((s for s in self.slots if not s.in_use), None)
                if slot is not None:
                    slot.in_use = True
                    break
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise EmulatorError(f"no free emulator within {timeout:g} s (all {self.size} lent out)")
                self._cond.wait(remaining)
        try:
            if slot.device is not None:
                slot.device.reopen()  # an env that borrowed it may have closed it
            if self.check_on_acquire and (slot.device is None or not slot.device.health()):
                self.restart(slot)
        except BaseException:
            self._give_back(slot)
            raise
        assert slot.device is not None
        return slot.device

    def release(self, device: AdbDevice) -> None:
        """Take a lent device back."""
        self._give_back(self._slot_of(device))

    def _give_back(self, slot: EmulatorSlot) -> None:
        with self._cond:
            slot.in_use = False
            self._cond.notify()

    @contextlib.contextmanager
    def device(self, timeout: float | None = None) -> Iterator[AdbDevice]:
        """``with pool.device() as d:`` lends a device for the block."""
        dev = self.acquire(timeout)
        try:
            yield dev
        finally:
            self.release(dev)

    def _slot_of(self, device: AdbDevice) -> EmulatorSlot:
        for slot in self.slots:
            if slot.device is device:
                return slot
        raise ValueError(f"{device!r} does not belong to this pool")

    @property
    def devices(self) -> list[AdbDevice]:
        """Every booted device (lent or not)."""
        return [s.device for s in self.slots if s.device is not None]

    # --- health and restarts ----------------------------------------------------------------------
    def health_check(self, restart: bool = True) -> dict[str, bool]:
        """{serial: healthy} for every emulator; unhealthy idle ones are restarted when ``restart``."""
        report: dict[str, bool] = {}
        for slot in list(self.slots):
            healthy = slot.alive() and slot.device is not None and slot.device.health()
            report[slot.serial] = healthy
            if not healthy and restart and not slot.in_use:
                with self._cond:
                    if slot.in_use:
                        continue
                    slot.in_use = True
                try:
                    self.restart(slot)
                finally:
                    self._give_back(slot)
        return report

    def _restarter(self, device: AdbDevice) -> None:
        self.restart(self._slot_of(device))

    def restart(self, target: EmulatorSlot | AdbDevice) -> AdbDevice:
        """Kill and relaunch one emulator on its ports and wait for it to boot; returns its device."""
        slot = target if isinstance(target, EmulatorSlot) else self._slot_of(target)
        if self._closed:
            raise EmulatorError("the pool is closed")
        if slot.restarts >= self.max_restarts:
            raise DeviceCrashed(f"{slot.serial} was restarted {slot.restarts} times already; giving up "
                                f"(log {slot.log_path})")
        slot.restarts += 1
        slot.history.append("restart")
        logger.info("restarting emulator %s (restart %d)", slot.serial, slot.restarts)
        self._stop_process(slot, graceful=False)
        deadline = time.monotonic() + 10.0
        while not (port_is_free(slot.console_port) and port_is_free(slot.adb_port)) and time.monotonic() < deadline:
            time.sleep(0.1)
        self._launch(slot)
        self._boot(slot)
        assert slot.device is not None
        return slot.device

    def _stop_process(self, slot: EmulatorSlot, graceful: bool) -> None:
        process = slot.process
        if process is None or process.poll() is not None:
            return
        if graceful:
            console_kwargs = {k[len("console_"):]: v for k, v in self.device_kwargs.items()
                              if k in ("console_token", "console_token_path")}
            try:
                EmulatorConsoleClient(slot.console_port, timeout=min(5.0, self.grace_period), **console_kwargs).kill()
                asked = True
            except (DeviceError, ValueError) as exc:
                logger.info("%s: console kill failed (%s); sending SIGTERM", slot.serial, exc)
                asked = False
            if asked:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    process.wait(self.grace_period)
                    return
        for sig, wait in ((signal.SIGTERM, self.grace_period if graceful else 2.0), (signal.SIGKILL, 10.0)):
            if process.poll() is not None:
                return
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(wait)
        if process.poll() is None:
            raise DeviceTimeout(f"{slot.serial}: emulator process {process.pid} survived SIGKILL")

    def close(self) -> None:
        """Shut every emulator down: console ``kill``, then SIGTERM, then SIGKILL after ``grace_period``."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        for slot in self.slots:
            if slot.device is not None:
                slot.device.close()
            try:
                self._stop_process(slot, graceful=True)
            except DeviceError as exc:
                logger.error("%s", exc)

    def __enter__(self) -> EmulatorPool:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self.slots)

    def __repr__(self) -> str:
        lent = sum(s.in_use for s in self.slots)
        return f"EmulatorPool({self.avd!r}, size={self.size}, lent={lent}, adb_port={self.adb_port})"


__all__ = ["EmulatorError", "EmulatorPool", "EmulatorSlot", "emulator_command", "find_port_pair"]
