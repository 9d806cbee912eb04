"""``AdbDevice``: the :class:`~android_gym.device.Device` protocol over adb, for phones and emulators.

The hot path (shell commands, screenshots, hierarchy dumps) talks to the adb server directly on its
socket with one deadline per call, so a dead or hung device raises a
:class:`~android_gym.device.DeviceError` instead of hanging; it uses the ``shell_v2`` protocol when
the device offers it (binary-safe output, the exit status, and a cut connection is told apart from
a finished command). adbutils (``adbutils.AdbClient``) does the rest: ``adb connect``, device
state, and the device handle uiautomator2 needs. uiautomator2 is optional and used for hierarchy
dumps when its on-device server can run (``use_uiautomator2``).

Actions become the same shell commands the simulated phone gets
(:func:`android_gym.device.action_to_commands`); text that ``input text`` cannot type goes through a
broadcast input method when one is installed (:mod:`android_gym.drivers.text_input`).
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
import shutil
import socket
import subprocess
import threading
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from io import BytesIO
from typing import Any

import numpy as np

from android_gym.actions import Action, Finished, OpenApp, Type, Wait
from android_gym.apps import resolve_package
from android_gym.device import (
    DeviceCrashed,
    DeviceDisconnected,
    DeviceError,
    DeviceTimeout,
    action_to_commands,
    input_text_commands,
)
from android_gym.drivers.snapshots import AppDataSnapshots, EmulatorConsoleClient, check_snapshot_name
from android_gym.drivers.text_input import (
    BroadcastIme,
    detect_broadcast_ime,
    split_typeable,
    text_entry_commands,
)
from android_gym.screen import Screen

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30.0
DEFAULT_SERVER_PORT = 5037
DUMP_PATH = "/sdcard/window_dump.xml"
_FOCUS_MARK = "__android_gym_focus__"
_PACKAGE_RE = re.compile(r"^[A-Za-z][\w]*(\.[A-Za-z_][\w]*)+$")
_SERIAL_RE = re.compile(r"^[\w.\-\[\]:]+$")
_EMULATOR_SERIAL = re.compile(r"^emulator-(\d+)$")
_CRASH_MARKERS = ("DeadSystemException", "DeadObjectException", "Failure calling service",
                  "Can't find service: input", "Can't find service: activity", "Can't find service: window")
_DUMP_RETRY_MARKERS = ("could not get idle state", "null root node", "ERROR:")


class UiAutomator2Unavailable(DeviceError):
    """uiautomator2 was required (``use_uiautomator2=True``) but its on-device server cannot run."""


class _ServerFail(Exception):
    """The adb server answered FAIL with a message."""


def _require_adbutils() -> Any:
    try:
        import adbutils
    except ImportError as exc:  # pragma: no cover - the extra is installed in development
        raise ImportError("AdbDevice needs adbutils: pip install 'android-gym[adb]'") from exc
    return adbutils


def find_adb(adb_path: str | None = None) -> str:
    """The adb executable: ``adb_path``, ``$ADBUTILS_ADB_PATH``, ``adb`` on PATH, then adbutils' bundled one."""
    for candidate in (adb_path, os.environ.get("ADBUTILS_ADB_PATH"), shutil.which("adb")):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    adbutils = _require_adbutils()
    return adbutils.adb_path()


def server_port_from_env() -> int:
    """The adb server port: ``$ANDROID_ADB_SERVER_PORT`` or 5037."""
    value = os.environ.get("ANDROID_ADB_SERVER_PORT")
    if not value:
        return DEFAULT_SERVER_PORT
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"ANDROID_ADB_SERVER_PORT must be a port number, got {value!r}") from None


def start_adb_server(port: int, adb_path: str | None = None, timeout: float = 20.0) -> None:
    """Start an adb server on ``port`` (``adb -P PORT start-server``); a running one is left alone."""
    exe = find_adb(adb_path)
    env = dict(os.environ, ANDROID_ADB_SERVER_PORT=str(port))
    try:
        subprocess.run([exe, "-P", str(port), "start-server"], env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout, check=True)
    except subprocess.TimeoutExpired:
        raise DeviceTimeout(f"'adb -P {port} start-server' did not finish in {timeout:g} s") from None
    except subprocess.CalledProcessError as exc:
        raise DeviceDisconnected(f"'adb -P {port} start-server' failed: "
                                 f"{exc.stderr.decode(errors='replace').strip()}") from None


def kill_adb_server(port: int, host: str = "127.0.0.1", timeout: float = 5.0) -> None:
    """Stop the adb server on ``port`` (``host:kill``); no server there is not an error."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            _send_request(sock, "host:kill")
            sock.settimeout(timeout)
            sock.recv(4)
    except OSError:
        pass


def _send_request(sock: socket.socket, request: str) -> None:
    data = request.encode("utf-8")
    sock.sendall(f"{len(data):04x}".encode() + data)


def _recv_exact(sock: socket.socket, n: int, deadline: float) -> bytes:
    buf = bytearray()
    while len(buf) < n:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        sock.settimeout(remaining)
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise EOFError(f"connection closed after {len(buf)} of {n} bytes")
        buf.extend(chunk)
    return bytes(buf)


def _read_status(sock: socket.socket, deadline: float) -> None:
    status = _recv_exact(sock, 4, deadline)
    if status == b"OKAY":
        return
    if status == b"FAIL":
        length = int(_recv_exact(sock, 4, deadline), 16)
        raise _ServerFail(_recv_exact(sock, length, deadline).decode("utf-8", "replace"))
    raise _ServerFail(f"unexpected adb server reply {status!r}")


def _read_block(sock: socket.socket, deadline: float) -> str:
    length = int(_recv_exact(sock, 4, deadline), 16)
    return _recv_exact(sock, length, deadline).decode("utf-8", "replace")


def _server_request(host: str, port: int, request: str, deadline: float, *, reply: bool = True,
                    status: bool = True) -> str:
    with socket.create_connection((host, port), timeout=max(0.1, min(5.0, deadline - time.monotonic()))) as sock:
        _send_request(sock, request)
        if not status:
            return ""
        _read_status(sock, deadline)
        return _read_block(sock, deadline) if reply else ""


def adb_server_request(request: str, *, host: str = "127.0.0.1", port: int | None = None, timeout: float = 5.0,
                       reply: bool = True, status: bool = True) -> str:
    """Send one request (``host:devices``, ``host-serial:S:get-state``, ...) to the adb server and return
    its reply; ``status=False`` sends without waiting (``host:emulator:PORT`` gets no answer).

    Raises DeviceTimeout, or DeviceDisconnected naming the server's FAIL message or the socket error.
    """
    port = server_port_from_env() if port is None else port
    try:
        return _server_request(host, port, request, time.monotonic() + timeout, reply=reply, status=status)
    except TimeoutError:
        raise DeviceTimeout(f"adb server {host}:{port}: no answer to {request!r} within {timeout:g} s") from None
    except _ServerFail as exc:
        raise DeviceDisconnected(f"adb server {host}:{port} refused {request!r}: {exc}") from None
    except (OSError, EOFError) as exc:
        raise DeviceDisconnected(f"adb server {host}:{port} unreachable for {request!r}: {exc}") from None


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_wm_size(output: str) -> tuple[int, int]:
    """(width, height) from ``wm size`` output; an ``Override size`` wins over the ``Physical size``."""
    sizes = dict(re.findall(r"(Physical|Override) size:\s*(\d+x\d+)", output))
    chosen = sizes.get("Override") or sizes.get("Physical")
    if chosen is None:
        raise DeviceError(f"cannot read the screen size from 'wm size': {output.strip()!r}")
    w, h = chosen.split("x")
    return int(w), int(h)


def parse_rotation(output: str) -> int | None:
    """Display rotation 0-3 from ``dumpsys`` text (``mCurrentRotation=ROTATION_90``, ``mRotation=1``,
    ``SurfaceOrientation: 1``) or a hierarchy dump (``<hierarchy rotation="1">``); None if absent."""
    m = re.search(r"mCurrentRotation=(?:ROTATION_)?(\d+)", output)
    if m:
        value = int(m.group(1))
        return value // 90 if value >= 90 else value
    for pattern in (r"\bmRotation=(\d)", r"SurfaceOrientation:\s*(\d)", r"<hierarchy[^>]*\brotation=\"(\d)\""):
        m = re.search(pattern, output)
        if m:
            return int(m.group(1))
    return None


def parse_focus(output: str) -> str | None:
    """The foreground ``package/.Activity`` from ``dumpsys window`` lines (mFocusedApp, else mCurrentFocus)."""
    m = re.search(r"mFocusedApp=\S*ActivityRecord\{\S+ \S+ ([\w.]+/[\w.$]+)", output)
    if m:
        return m.group(1)
    m = re.search(r"mCurrentFocus=Window\{\S+ \S+ ([\w.]+/[\w.$]+)\}", output)
    return m.group(1) if m else None


def extract_xml(output: str) -> str | None:
    """The hierarchy XML inside ``uiautomator dump`` + ``cat`` output, or None when there is none."""
    start = output.find("<?xml")
    if start < 0:
        start = output.find("<hierarchy")
    end = output.rfind("</hierarchy>")
    if start < 0 or end < start:
        return None
    return output[start:end + len("</hierarchy>")]


def action_commands(action: Action, screen_size: tuple[int, int], ime: BroadcastIme | None = None) -> list[str]:
    """Shell commands for ``action`` on an adb device: :func:`action_to_commands`, with text it cannot
    type re-routed through the broadcast ``ime`` (or dropped with a warning when there is none)."""
    commands = action_to_commands(action, screen_size)
    if not isinstance(action, Type) or not action.text or not split_typeable(action.text)[1]:
        return commands
    plain = input_text_commands(action.text)
    start = commands.index(plain[0])
    return commands[:start] + text_entry_commands(action.text, ime, stacklevel=3) + commands[start + len(plain):]


class AdbDevice:
    """A phone or emulator reached through adb, as a :class:`~android_gym.device.Device`.

    ``serial``: ``emulator-5554``, ``127.0.0.1:5555`` / ``host:port`` (connected with ``adb connect``
    when needed) or a USB serial. ``adb_port``/``adb_host``: the adb server (default
    ``$ANDROID_ADB_SERVER_PORT`` or 5037 on 127.0.0.1; a local server that is not running is
    started). ``timeout``: seconds any one device call may take. ``use_uiautomator2``: "auto" (use it
    for hierarchy dumps when its server can run on the device; probed once), True (required), False.
    ``console_port``: the emulator console for whole-device snapshots: "auto" (``emulator-N`` -> N; a
    loopback ``host:P`` emulator -> P-1 when a console answers there), a port, or None.
    ``app_packages``: extra app name -> package entries for ``open_app``. ``stable_polls``: hierarchy
    dumps that must agree before ``observe`` returns (1: no idle wait). ``restarter``: called with
    this device when reconnecting cannot revive it (an :class:`~android_gym.drivers.pool.EmulatorPool`
    relaunches the emulator). ``process_alive``: tells a dead emulator process (DeviceCrashed) from a
    dropped connection (DeviceDisconnected).
    """

    def __init__(self, serial: str, *, adb_host: str = "127.0.0.1", adb_port: int | None = None,
                 adb_path: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 use_uiautomator2: bool | str = "auto", console_port: int | str | None = "auto",
                 console_token: str | None = None, console_token_path: str | None = None,
                 app_packages: Mapping[str, str] | None = None, stable_polls: int = 1,
                 idle_interval: float = 0.2, idle_timeout: float = 5.0, wait_seconds: float = 1.0,
                 snapshot_store: str = "/data/local/tmp/android_gym_snapshots",
                 restarter: Callable[[AdbDevice], None] | None = None,
                 process_alive: Callable[[], bool] | None = None,
                 recover_timeout: float = 120.0, recover_from_snapshot: bool = True, connect: bool | None = None):
        if not isinstance(serial, str) or not _SERIAL_RE.match(serial):
            raise ValueError(f"bad adb serial {serial!r}: expected e.g. 'emulator-5554', '127.0.0.1:5555' or a "
                             "USB serial")
        if use_uiautomator2 not in ("auto", True, False):
            raise ValueError(f"use_uiautomator2 must be 'auto', True or False, got {use_uiautomator2!r}")
        if timeout <= 0:
            raise ValueError(f"timeout must be positive seconds, got {timeout}")
        if stable_polls < 1:
            raise ValueError(f"stable_polls must be at least 1, got {stable_polls}")
        self.serial = serial
        self.adb_host = adb_host
        self.adb_port = server_port_from_env() if adb_port is None else int(adb_port)
        self.adb_path = adb_path
        self.timeout = float(timeout)
        self.use_uiautomator2 = use_uiautomator2
        self.app_packages = dict(app_packages or {})
        self.stable_polls = int(stable_polls)
        self.idle_interval = float(idle_interval)
        self.idle_timeout = float(idle_timeout)
        self.wait_seconds = float(wait_seconds)
        self.restarter = restarter
        self.process_alive = process_alive
        self.recover_timeout = float(recover_timeout)
        self.recover_from_snapshot = recover_from_snapshot
        self._last_console_snapshot: str | None = None
        self.connect_tcp = (":" in serial) if connect is None else bool(connect)
        self.closed = False
        self.last_status: int | None = None
        self.uiautomator2_reason: str | None = None
        self._console_token = console_token
        self._console_token_path = console_token_path
        self._console_spec = console_port
        self._console: EmulatorConsoleClient | None = None
        self._console_probed = False
        self._features: set[str] | None = None
        self._natural_size: tuple[int, int] | None = None
        self._rotation = 0
        self._ime: BroadcastIme | None = None
        self._ime_enabled = False
        self._ime_probed = False
        self._u2: Any = None
        self._u2_state = "untested" if use_uiautomator2 else "off"
        self._snapshot_kinds: dict[str, str] = {}
        self._app_data = AppDataSnapshots(self._run_as_root, store=snapshot_store)
        self._root_prefix: str | None = None
        self._client: Any = None

        started = self._ensure_server()
        if self.connect_tcp:
            self._adb_connect()
        # A new server finds running emulators within moments, and a running one lists an emulator that announced
        # itself (``host:emulator:PORT``, as an emulator does when it starts) once it has connected back to it:
        # a serial is called absent only after that grace, a few seconds at most, so a typo still fails fast.
        if not self._listed_within(min(self.timeout, 5.0 if started else 3.0)):
            listing = self._host_request("host:devices", time.monotonic() + 5.0).strip()
            raise DeviceDisconnected(f"adb (server {self.adb_host}:{self.adb_port}) does not list {self.serial!r}; "
                                     f"it lists: {listing.replace(chr(10), ', ') or 'no devices'}")
        self.wait_for_device(min(self.timeout, 30.0))

    # --- adb server plumbing ----------------------------------------------------------------------
    @property
    def client(self) -> Any:
        """The ``adbutils.AdbClient`` for this device's adb server (created on first use)."""
        if self._client is None:
            adbutils = _require_adbutils()
            self._client = adbutils.AdbClient(host=self.adb_host, port=self.adb_port, socket_timeout=self.timeout)
        return self._client

    @property
    def adbutils_device(self) -> Any:
        """This device as an ``adbutils.AdbDevice`` (for ``sync.push``/``pull``, ``install``, ``forward``)."""
        return self.client.device(self.serial)

    def _ensure_server(self) -> bool:
        """Start a local adb server when none answers; True when one was started."""
        try:
            socket.create_connection((self.adb_host, self.adb_port), timeout=2.0).close()
            return False
        except OSError:
            if not _is_loopback(self.adb_host):
                raise DeviceDisconnected(f"no adb server at {self.adb_host}:{self.adb_port}") from None
            start_adb_server(self.adb_port, self.adb_path)
            return True

    def _map_error(self, exc: BaseException, what: str) -> DeviceError:
        where = f"{self.serial}: {what}"
        if isinstance(exc, DeviceError):
            return exc
        if isinstance(exc, TimeoutError):
            return DeviceTimeout(f"{where}: no answer within the timeout (device hung?)")
        if self.process_alive is not None and self._process_died():
            return DeviceCrashed(f"{where}: the emulator process is gone ({exc})")
        if isinstance(exc, _ServerFail):
            return DeviceDisconnected(f"{where}: adb server says {exc}")
        if isinstance(exc, (EOFError, ConnectionError, OSError)):
            return DeviceDisconnected(f"{where}: connection lost ({exc})")
        return DeviceError(f"{where}: {type(exc).__name__}: {exc}")

    def _process_died(self, grace: float = 0.3) -> bool:
        """True when ``process_alive`` reports the emulator gone (given a moment to be reaped)."""
        assert self.process_alive is not None
        deadline = time.monotonic() + grace
        while self.process_alive():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def _host_request(self, request: str, deadline: float, reply: bool = True) -> str:
        """A ``host:`` request on a fresh server connection; returns the length-prefixed reply."""
        try:
            return _server_request(self.adb_host, self.adb_port, request, deadline, reply=reply)
        except (OSError, EOFError, _ServerFail) as exc:
            raise self._map_error(exc, request) from None

    def _open(self, service: str, deadline: float) -> socket.socket:
        """A socket on which ``service`` runs on this device (transport chosen by serial)."""
        if self.closed:
            raise DeviceDisconnected(f"{self.serial}: device is closed")
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeviceTimeout(f"{self.serial}: no time left to open {service.split(':')[0]}")
        try:
            sock = socket.create_connection((self.adb_host, self.adb_port), timeout=min(remaining, 5.0))
        except OSError as exc:
            raise DeviceDisconnected(f"{self.serial}: adb server {self.adb_host}:{self.adb_port} "
                                     f"unreachable ({exc})") from None
        try:
            _send_request(sock, f"host:transport:{self.serial}")
            _read_status(sock, deadline)
            _send_request(sock, service)
            _read_status(sock, deadline)
            return sock
        except BaseException as exc:
            sock.close()
            if isinstance(exc, (OSError, EOFError, _ServerFail)):
                raise self._map_error(exc, f"open {service.split(':')[0]}") from None
            raise

    @property
    def features(self) -> set[str]:
        """The device's adb features (``shell_v2``, ``cmd``, ...), read once."""
        if self._features is None:
            deadline = time.monotonic() + self.timeout
            self._features = set(self._host_request(f"host-serial:{self.serial}:features", deadline).split(","))
        return self._features

    # --- shell ------------------------------------------------------------------------------------
    def _run(self, command: str, timeout: float | None, binary: bool = False) -> tuple[bytes, int | None]:
        """(output, exit status or None): ``shell_v2`` when offered, else ``exec:`` for binary output
        (no terminal translation on old devices) or the legacy ``shell:``."""
        if "\0" in command:
            raise ValueError("a shell command cannot contain NUL characters")
        limit = self.timeout if timeout is None else float(timeout)
        deadline = time.monotonic() + limit
        v2 = "shell_v2" in self.features
        service = ("shell,v2,raw:" if v2 else "exec:" if binary else "shell:") + command
        sock = self._open(service, deadline)
        try:
            data = bytearray()
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError
                sock.settimeout(remaining)
                chunk = sock.recv(1 << 16)
                if not chunk:
                    break
                data.extend(chunk)
        except (OSError, EOFError) as exc:
            if isinstance(exc, TimeoutError):
                raise DeviceTimeout(f"{self.serial}: {command[:60]!r} did not finish within {limit:g} s") from None
            raise self._map_error(exc, command[:60]) from None
        finally:
            sock.close()
        if not v2:
            return bytes(data), None
        return self._decode_v2(bytes(data), command)

    def _decode_v2(self, data: bytes, command: str) -> tuple[bytes, int | None]:
        out = bytearray()
        status: int | None = None
        i = 0
        while i + 5 <= len(data):
            kind = data[i]
            length = int.from_bytes(data[i + 1:i + 5], "little")
            payload = data[i + 5:i + 5 + length]
            if len(payload) < length:
                break
            if kind in (1, 2):
                out.extend(payload)
            elif kind == 3:
                status = payload[0] if payload else 0
            i += 5 + length
        if status is None:
            raise self._map_error(EOFError("the device closed the shell before it finished"), command[:60])
        return bytes(out), status

    def shell(self, command: str, timeout: float | None = None) -> str:
        """Run ``command`` with the device's ``sh`` and return its output (stdout and stderr, as sent)."""
        data, self.last_status = self._run(command, timeout)
        return data.decode("utf-8", "replace")

    def exec_out(self, command: str, timeout: float | None = None) -> bytes:
        """Run ``command`` and return its raw output bytes (``screencap -p`` gives PNG)."""
        data, self.last_status = self._run(command, timeout, binary=True)
        return data

    def push(self, local: str, remote: str) -> None:
        """``adb push``: copy a local file onto the device (into ``remote`` when it is a folder), over adb's sync
        service; the same call as ``SimDevice.push``, so set-up code that pushes files runs on both."""
        import stat

        try:
            sync = self.adbutils_device.sync
            if remote.endswith("/") or stat.S_ISDIR(sync.stat(remote).mode):
                remote = remote.rstrip("/") + "/" + os.path.basename(local)
            sync.push(local, remote)
        except FileNotFoundError:
            raise
        except Exception as exc:  # adbutils' AdbError (a refused write), a lost connection
            raise self._map_error(exc, f"adb push {local} {remote}") from exc

    def pull(self, remote: str, local: str) -> None:
        """``adb pull``: copy a file from the device to ``local`` (FileNotFoundError when it does not exist)."""
        try:
            sync = self.adbutils_device.sync
            if sync.stat(remote).mode == 0:  # adb's STAT answers zeros for a path that does not exist
                raise FileNotFoundError(f"{self.serial}: {remote}: No such file or directory")
            sync.pull(remote, local)
        except FileNotFoundError:
            raise
        except Exception as exc:
            raise self._map_error(exc, f"adb pull {remote}") from exc

    # --- connection -------------------------------------------------------------------------------
    def _adb_connect(self) -> None:
        deadline = time.monotonic() + min(self.timeout, 20.0)
        answer = self._host_request(f"host:connect:{self.serial}", deadline)
        if not (answer.startswith("connected to") or answer.startswith("already connected")):
            raise DeviceDisconnected(f"adb connect {self.serial}: {answer.strip()}")

    def _adb_disconnect(self) -> None:
        try:
            self._host_request(f"host:disconnect:{self.serial}", time.monotonic() + 5.0)
        except DeviceError:
            pass

    def state(self, timeout: float = 5.0) -> str:
        """The adb state of the device: "device", "offline", "unauthorized", ... or "absent"."""
        try:
            return _server_request(self.adb_host, self.adb_port, f"host-serial:{self.serial}:get-state",
                                   time.monotonic() + timeout).strip()
        except _ServerFail as exc:  # adb answers FAIL "device offline", "device 'X' not found", ...
            message = str(exc)
            for state in ("offline", "unauthorized", "connecting", "authorizing"):
                if state in message:
                    return state
            return "absent"
        except TimeoutError:
            raise DeviceTimeout(f"adb server {self.adb_host}:{self.adb_port}: no answer to get-state") from None
        except (OSError, EOFError) as exc:
            raise DeviceDisconnected(f"adb server {self.adb_host}:{self.adb_port} unreachable: {exc}") from None

    def _listed_within(self, seconds: float) -> bool:
        """Whether adb lists the serial (in any state) within ``seconds``."""
        deadline = time.monotonic() + seconds
        while self.state(timeout=max(0.1, min(5.0, deadline - time.monotonic()))) == "absent":
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)
        return True

    def wait_for_device(self, timeout: float | None = None) -> None:
        """Wait until adb lists the device as ``device`` (DeviceTimeout after ``timeout`` seconds)."""
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        state = "absent"
        while time.monotonic() < deadline:
            state = self.state(timeout=max(0.1, min(5.0, deadline - time.monotonic())))
            if state == "device":
                return
            time.sleep(0.1)
        raise DeviceTimeout(f"{self.serial}: still {state!r} after {limit:g} s waiting for 'device'")

    def wait_for_boot(self, timeout: float = 300.0, poll: float = 0.5) -> None:
        """Wait until ``sys.boot_completed`` is 1 (DeviceTimeout after ``timeout`` seconds)."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            try:
                last = self.shell("getprop sys.boot_completed", timeout=min(10.0, self.timeout)).strip()
                if last == "1":
                    return
            except DeviceError as exc:
                last = str(exc)
            time.sleep(poll)
        raise DeviceTimeout(f"{self.serial}: not booted after {timeout:g} s (last: {last!r})")

    # --- screen -----------------------------------------------------------------------------------
    @property
    def rotation(self) -> int:
        """Display rotation 0-3 (from the last hierarchy dump, else ``dumpsys``)."""
        if self._natural_size is None:
            self._read_screen()
        return self._rotation

    @property
    def screen_size(self) -> tuple[int, int]:
        """(width, height) as the screen is shown now: ``wm size`` (override first), swapped when rotated."""
        if self._natural_size is None:
            self._read_screen()
        assert self._natural_size is not None
        w, h = self._natural_size
        return (h, w) if self._rotation % 2 else (w, h)

    def refresh_screen_size(self) -> tuple[int, int]:
        """Re-read the screen size and rotation (after ``wm size`` or rotation changes)."""
        self._natural_size = None
        return self.screen_size

    def _read_screen(self) -> None:
        out = self.shell("wm size; echo; dumpsys window displays | grep -E 'mCurrentRotation|mRotation='")
        self._natural_size = parse_wm_size(out)
        self._rotation = parse_rotation(out) or 0

    def screenshot(self) -> np.ndarray:
        """The screen as HxWx3 uint8 (``screencap -p``)."""
        from PIL import Image, UnidentifiedImageError

        png = self.exec_out("screencap -p")
        try:
            with Image.open(BytesIO(png)) as img:
                return np.asarray(img.convert("RGB"), dtype=np.uint8).copy()
        except (UnidentifiedImageError, OSError) as exc:
            raise DeviceError(f"{self.serial}: screencap did not return a PNG ({len(png)} bytes: "
                              f"{png[:80]!r}): {exc}") from None

    def dump_hierarchy(self) -> str:
        """The uiautomator hierarchy XML (uiautomator2 when active, else ``uiautomator dump``)."""
        return self._dump()[0]

    def _dump(self) -> tuple[str, str | None]:
        """(xml, foreground activity or None when not read)."""
        u2 = self._uiautomator2()
        if u2 is not None:
            try:
                xml = u2.dump_hierarchy()
                self._note_rotation(xml)
                return xml, None
            except Exception as exc:  # u2 failed: remember why and use uiautomator from now on
                self._u2, self._u2_state = None, "off"
                self.uiautomator2_reason = f"dump failed: {type(exc).__name__}: {exc}"
                logger.warning("%s: uiautomator2 dump failed (%s); using 'uiautomator dump'", self.serial, exc)
        deadline = time.monotonic() + self.timeout
        # rm first: a failed dump must not leave the previous file to be read back as current
        command = (f"rm -f {DUMP_PATH}; uiautomator dump {DUMP_PATH} && cat {DUMP_PATH}; echo; echo {_FOCUS_MARK}; "
                   "dumpsys window | grep -E 'mCurrentFocus|mFocusedApp'")
        while True:
            out = self.shell(command, timeout=max(0.1, deadline - time.monotonic()))
            head, _, focus = out.rpartition(_FOCUS_MARK)
            xml = extract_xml(head)
            if xml is not None:
                self._note_rotation(xml)
                return xml, parse_focus(focus)
            if not any(m in head for m in _DUMP_RETRY_MARKERS) or time.monotonic() + 0.5 > deadline:
                raise DeviceError(f"{self.serial}: uiautomator dump gave no hierarchy: {head.strip()[:300]!r}")
            time.sleep(0.3)

    def _note_rotation(self, xml: str) -> None:
        rotation = parse_rotation(xml[:300])
        if rotation is not None:
            self._rotation = rotation

    def current_activity(self) -> str | None:
        """The foreground ``package/.Activity`` (from ``dumpsys window``)."""
        return parse_focus(self.shell("dumpsys window | grep -E 'mCurrentFocus|mFocusedApp'"))

    def wait_for_idle(self, polls: int = 2, interval: float | None = None, timeout: float | None = None) -> bool:
        """Wait until ``polls`` hierarchy dumps in a row are identical (bounded by ``timeout``); True if they were."""
        return self._stable_dump(polls, interval, timeout)[2]

    def _stable_dump(self, polls: int, interval: float | None = None, timeout: float | None = None
                     ) -> tuple[str, str | None, bool]:
        interval = self.idle_interval if interval is None else interval
        deadline = time.monotonic() + (self.idle_timeout if timeout is None else timeout)
        xml, activity = self._dump()
        same = 1
        while same < polls:
            if time.monotonic() + interval > deadline:
                return xml, activity, False
            time.sleep(interval)
            new_xml, activity = self._dump()
            same = same + 1 if new_xml == xml else 1
            xml = new_xml
        return xml, activity, True

    def observe(self, screenshot: bool = False) -> Screen:
        """The current screen: hierarchy XML, optionally the pixels, and the foreground activity."""
        xml, activity, _ = self._stable_dump(self.stable_polls)
        if activity is None:
            activity = self.current_activity()
        pixels = self.screenshot() if screenshot else None
        width, height = self.screen_size
        source = "uiautomator2" if self.uiautomator2_active else "uiautomator"
        return Screen(xml=xml, width=width, height=height, screenshot=pixels, activity=activity,
                      package=activity.split("/", 1)[0] if activity else None, extras={"hierarchy_source": source})

    # --- uiautomator2 -----------------------------------------------------------------------------
    @property
    def uiautomator2_active(self) -> bool:
        """True when hierarchy dumps go through uiautomator2 (else ``uiautomator dump``; see ``uiautomator2_reason``)."""
        return self._u2 is not None

    def _uiautomator2(self) -> Any:
        if self._u2 is not None or self._u2_state == "off":
            return self._u2
        if self.use_uiautomator2 == "auto":
            out = self.shell("ls /system/bin/app_process /system/bin/app_process64 2>/dev/null")
            if "/system/bin/app_process" not in out or "No such file" in out:
                self._u2_state = "off"
                self.uiautomator2_reason = "the device has no app_process to run the uiautomator2 server"
                return None
        result: dict[str, Any] = {}

        def connect() -> None:
            try:
                import uiautomator2

                result["device"] = uiautomator2.connect(self.client.device(self.serial))
            except Exception as exc:  # any failure means: not usable here
                result["error"] = exc

        worker = threading.Thread(target=connect, name=f"u2-connect-{self.serial}", daemon=True)
        worker.start()
        worker.join(max(self.timeout, 20.0))
        if "device" in result:
            self._u2, self._u2_state = result["device"], "on"
            return self._u2
        reason = repr(result.get("error", "connecting took too long"))
        self._u2_state = "off"
        self.uiautomator2_reason = f"uiautomator2.connect failed: {reason}"
        if self.use_uiautomator2 is True:
            raise UiAutomator2Unavailable(f"{self.serial}: {self.uiautomator2_reason}")
        logger.info("%s: not using uiautomator2 (%s)", self.serial, reason)
        return None

    # --- actions ----------------------------------------------------------------------------------
    def _check_output(self, command: str, output: str) -> None:
        for marker in _CRASH_MARKERS:
            if marker in output:
                raise DeviceCrashed(f"{self.serial}: {command[:60]!r} failed, the system server looks dead: "
                                    f"{output.strip()[:200]}")

    def run_commands(self, commands: Sequence[str]) -> None:
        """Run action commands one by one, raising DeviceCrashed when the system server is dead."""
        for command in commands:
            self._check_output(command, self.shell(command))

    def execute(self, action: Action) -> None:
        """Perform ``action`` through its shell commands (ValueError for an app that cannot be opened)."""
        if isinstance(action, Finished):
            return
        if isinstance(action, Wait):
            self.shell(f"sleep {self.wait_seconds:g}", timeout=self.timeout + self.wait_seconds)
            return
        if isinstance(action, OpenApp):
            self.open_app(action.app)
            return
        ime = None
        if isinstance(action, Type) and action.text and split_typeable(action.text)[1]:
            ime = self._broadcast_ime()
        commands = action_commands(action, self.screen_size, ime)
        if ime is None:
            self.run_commands(commands)
            return
        previous = self._activate_ime(ime)
        try:
            self.run_commands(commands)
        finally:
            if previous and previous != ime.ime_id:
                self.shell(f"ime set {previous}")

    def _broadcast_ime(self) -> BroadcastIme | None:
        if not self._ime_probed:
            self._ime, self._ime_enabled = detect_broadcast_ime(self.shell)
            self._ime_probed = True
        return self._ime

    def _activate_ime(self, ime: BroadcastIme) -> str | None:
        """Make ``ime`` the current input method; returns the one it replaced."""
        previous = self.shell("settings get secure default_input_method").strip()
        if previous == ime.ime_id:
            return previous
        if not self._ime_enabled:
            self.shell(f"ime enable {ime.ime_id}")
            self._ime_enabled = True
        self.shell(f"ime set {ime.ime_id}")
        return previous if previous and previous != "null" else None

    def type_text(self, text: str) -> None:
        """Type ``text`` into the focused field, literally (see :mod:`android_gym.drivers.text_input`)."""
        self.execute(Type(text))

    def open_app(self, app: str) -> str:
        """Bring ``app`` (a name agents use, or a package) to the front; returns its package.

        ``monkey`` with the launcher category first; if that fails, the launcher activity from
        ``cmd package resolve-activity`` is started with ``am start -n``. ValueError when neither works.
        """
        package = resolve_package(app, extra=self.app_packages)
        if not _PACKAGE_RE.match(package):
            raise ValueError(f"app {app!r} maps to {package!r}, which is not a package name")
        out = self.shell(f"monkey -p {package} -c android.intent.category.LAUNCHER 1")
        self._check_output("monkey", out)
        if "Events injected: 1" in out and "aborted" not in out:
            return package
        resolved = self.shell(f"cmd package resolve-activity --brief -c android.intent.category.LAUNCHER {package}")
        component = next((line.strip() for line in reversed(resolved.splitlines())
                          if re.match(rf"^{re.escape(package)}/[\w.$]+$", line.strip())), None)
        if component is not None:
            started = self.shell(f"am start -n {component}")
            self._check_output("am start", started)
            if "Error" not in started and "Exception" not in started:
                return package
            out += "\n" + started
        raise ValueError(f"cannot open app {app!r} ({package}) on {self.serial}: {out.strip()[:300]}")

    # --- snapshots --------------------------------------------------------------------------------
    @property
    def console(self) -> EmulatorConsoleClient | None:
        """The emulator console when this device is an emulator with a reachable console, else None."""
        if not self._console_probed:
            self._console = self._find_console()
            self._console_probed = True
        return self._console

    def _find_console(self) -> EmulatorConsoleClient | None:
        spec = self._console_spec
        kwargs = {"token": self._console_token, "token_path": self._console_token_path}
        if spec is None:
            return None
        if spec != "auto":
            return EmulatorConsoleClient(int(spec), **kwargs)
        m = _EMULATOR_SERIAL.match(self.serial)
        if m:
            return EmulatorConsoleClient(int(m.group(1)), **kwargs)
        host, _, port = self.serial.rpartition(":")
        if not (host and port.isdigit() and _is_loopback(host.strip("[]"))):
            return None
        try:
            if self.shell("getprop ro.kernel.qemu", timeout=5.0).strip() != "1":
                return None
        except DeviceError:
            return None
        console = EmulatorConsoleClient(int(port) - 1, host=host.strip("[]"), **kwargs)
        return console if console.ping() else None

    @property
    def supports_snapshots(self) -> bool:
        """True when ``snapshot_save(name)`` without packages works (the device is an emulator with a console)."""
        return self.console is not None

    def snapshot_save(self, name: str, packages: Sequence[str] | None = None) -> None:
        """Save a snapshot: the whole emulator over its console, or with ``packages`` an app-data copy.

        Whole-device snapshots need an emulator console (``supports_snapshots``); app-data snapshots
        (``/data/data/<pkg>`` copied under ``/data/local/tmp``) need root and cover only those apps.
        """
        check_snapshot_name(name)
        if packages is not None:
            self._app_data.save(name, packages)
            self._snapshot_kinds[name] = "app_data"
            return
        console = self.console
        if console is None:
            raise DeviceError(f"{self.serial}: whole-device snapshots need an emulator console (this device has "
                              "none); pass packages=[...] for an app-data snapshot (needs root)")
        console.snapshot_save(name)
        self._snapshot_kinds[name] = "console"
        self._last_console_snapshot = name

    def snapshot_load(self, name: str, packages: Sequence[str] | None = None) -> None:
        """Restore a snapshot saved by ``snapshot_save`` (an app-data one when it was saved so or
        ``packages`` is given; an emulator snapshot otherwise), then wait for the device to answer."""
        check_snapshot_name(name)
        kind = self._snapshot_kinds.get(name)
        if packages is not None or kind == "app_data" or (kind is None and self.console is None):
            self._app_data.load(name, packages)
            return
        console = self.console
        if console is None:
            raise DeviceError(f"{self.serial}: no emulator console to load snapshot {name!r} from")
        console.snapshot_load(name)
        self._last_console_snapshot = name
        self._reattach(time.monotonic() + min(self.recover_timeout, 60.0))

    def snapshot_list(self) -> list[str]:
        """Snapshot names: the emulator's (when it has a console) and the app-data ones on the device."""
        names = self.console.snapshot_list() if self.console is not None else []
        if self._root_prefix is not None or "app_data" in self._snapshot_kinds.values():
            names += [n for n in self._app_data.list() if n not in names]
        return names

    def snapshot_delete(self, name: str) -> None:
        """Delete snapshot ``name``."""
        check_snapshot_name(name)
        if self._snapshot_kinds.pop(name, None) == "app_data" or self.console is None:
            self._app_data.delete(name)
        else:
            self.console.snapshot_delete(name)

    def _run_as_root(self, script: str, timeout: float | None) -> str:
        if self._root_prefix is None:
            if self.shell("id -u").strip() == "0":
                self._root_prefix = ""
            elif self.shell("su 0 id -u 2>/dev/null").strip() == "0":
                self._root_prefix = "su 0 "
            else:
                raise DeviceError(f"{self.serial}: app-data snapshots need root: run 'adb root' (emulator "
                                  "userdebug images) or install su")
        if not self._root_prefix:
            return self.shell(script, timeout=timeout)
        quoted = "'" + script.replace("'", "'\\''") + "'"
        return self.shell(f"{self._root_prefix}sh -c {quoted}", timeout=timeout)

    # --- health and recovery ----------------------------------------------------------------------
    def health(self, timeout: float = 5.0) -> bool:
        """True when the device answers a shell command and reports itself booted."""
        if self.closed:
            return False
        try:
            out = self.shell("echo ok; getprop sys.boot_completed", timeout=min(timeout, self.timeout))
        except DeviceError:
            return False
        return out.split() == ["ok", "1"]

    def reboot(self, timeout: float | None = None) -> None:
        """Reboot the device (adb ``reboot:`` service) and wait until it has booted again."""
        deadline = time.monotonic() + (self.recover_timeout if timeout is None else timeout)
        if not self._request_reboot(deadline):
            raise DeviceDisconnected(f"{self.serial}: the device did not accept the reboot request")
        self._reattach(deadline)

    def _request_reboot(self, deadline: float) -> bool:
        try:
            self._open("reboot:", min(deadline, time.monotonic() + min(self.timeout, 10.0))).close()
        except DeviceError as exc:
            logger.info("%s: reboot request failed: %s", self.serial, exc)
            return False
        time.sleep(0.2)
        return True

    def _reregister(self) -> None:
        """Make adb find the device again: ``adb connect`` for network serials, the emulator
        registration (``host:emulator:PORT``, harmless when already known) for emulators."""
        m = _EMULATOR_SERIAL.match(self.serial)
        if self.connect_tcp:
            self._adb_connect()
        elif m:
            try:
                adb_server_request(f"host:emulator:{int(m.group(1)) + 1}", host=self.adb_host, port=self.adb_port,
                                   status=False)
            except DeviceError:
                pass

    def _reattach(self, deadline: float) -> None:
        while True:
            try:
                self._reregister()
                self.wait_for_device(max(0.1, min(10.0, deadline - time.monotonic())))
                self.wait_for_boot(max(0.1, deadline - time.monotonic()))
                self.forget_device_state()
                return
            except DeviceError:
                if time.monotonic() >= deadline:
                    raise
                time.sleep(0.3)

    def forget_device_state(self) -> None:
        """Drop what was learned about the device (features, screen size, IME, root, uiautomator2) so
        it is read again; after a reboot or relaunch it may differ."""
        self._features = None
        self._natural_size = None
        self._ime_probed = False
        self._root_prefix = None
        if self._u2 is not None or (self._u2_state == "off" and self.use_uiautomator2):
            self._u2, self._u2_state = None, "untested"

    def retarget(self, serial: str, console_port: int | None) -> None:
        """Point this driver at a relaunched device that came back under another serial/console port."""
        if not _SERIAL_RE.match(serial):
            raise ValueError(f"bad adb serial {serial!r}")
        self.serial = serial
        self._console_spec = console_port
        self._console_probed = False
        self.forget_device_state()

    def reconnect(self) -> None:
        """Drop and re-establish the adb connection (``adb disconnect`` + ``connect`` for network serials)."""
        self._ensure_server()
        if self.connect_tcp:
            self._adb_disconnect()
        self._reregister()
        self.forget_device_state()

    def recover(self) -> None:
        """Bring a failed device back, trying in turn until it answers again:

        1. reconnect (``adb disconnect``/``connect``, or the emulator registration);
        2. ``restarter`` when one is set (a pool kills and relaunches the emulator), else
        3. ``adb reboot`` when adb still lists the device, then
        4. for an emulator whose console answers, reload the snapshot last saved or loaded through
           it (the whole VM comes back; an env reloads its clean snapshot next anyway).
        DeviceCrashed, listing what was tried, when none worked within ``recover_timeout``.
        """
        if self.closed:
            raise DeviceDisconnected(f"{self.serial}: device is closed")
        deadline = time.monotonic() + self.recover_timeout
        tried: list[str] = []
        process_dead = self.process_alive is not None and not self.process_alive()
        if not process_dead:
            try:
                self.reconnect()
                self.wait_for_device(min(2.0, self.timeout))
            except DeviceError as exc:
                tried.append(f"reconnect: {exc}")
            if self.health():
                return
        if self.restarter is not None:
            self.restarter(self)
            self.forget_device_state()
            if self.health():
                return
            raise DeviceCrashed(f"{self.serial}: still not answering after the restarter relaunched it")
        if self.state() == "device" and self._request_reboot(deadline):
            try:
                self._reattach(deadline)
                if self.health():
                    return
            except DeviceError as exc:
                tried.append(f"reboot: {exc}")
        else:
            tried.append("reboot: the device is not reachable through adb")
        console = self.console
        if console is not None and self._last_console_snapshot and self.recover_from_snapshot:
            try:
                console.snapshot_load(self._last_console_snapshot)
                self._reattach(deadline)
                if self.health():
                    return
            except DeviceError as exc:
                tried.append(f"console snapshot {self._last_console_snapshot!r}: {exc}")
        raise DeviceCrashed(f"{self.serial}: could not bring the device back ({'; '.join(tried) or 'no method'})")

    def close(self) -> None:
        """Release the driver (the device keeps running); later calls raise DeviceDisconnected."""
        if self._u2 is not None:
            try:
                self._u2.stop_uiautomator(wait=False)
            except Exception as exc:  # best effort on the way out
                warnings.warn(f"{self.serial}: stopping uiautomator2 failed: {exc}", RuntimeWarning, stacklevel=2)
            self._u2 = None
        self.closed = True

    def reopen(self) -> None:
        """Undo ``close()`` so the driver can be used again (a pool lends the same driver out again)."""
        self.closed = False

    def __enter__(self) -> AdbDevice:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"AdbDevice({self.serial!r}, adb={self.adb_host}:{self.adb_port})"
