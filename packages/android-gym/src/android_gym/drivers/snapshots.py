"""Two kinds of device snapshots: whole-emulator snapshots over the console, and app-data copies.

- :class:`EmulatorConsoleClient` speaks the emulator's telnet-style console (``127.0.0.1:<console port>``,
  ``auth <token>`` with the token from ``~/.emulator_console_auth_token``): ``avd snapshot
  save|load|list|delete`` saves and restores the whole device (RAM, disk, running apps) in seconds.
  Only emulators have a console.
- :class:`AppDataSnapshots` is what AndroidWorld calls a snapshot: a copy of ``/data/data/<pkg>``
  for chosen packages, saved under ``/data/local/tmp`` and copied back (apps force-stopped first).
  It works on any device with root (``adb root`` or ``su``) but restores only those apps' data.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from android_gym.device import DeviceDisconnected, DeviceError, DeviceTimeout

CONSOLE_TOKEN_FILE = "~/.emulator_console_auth_token"
_SNAPSHOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$")
_PACKAGE = re.compile(r"^[A-Za-z][\w]*(\.[A-Za-z_][\w]*)+$")


def check_snapshot_name(name: str) -> str:
    """``name`` if it is a safe snapshot name (letters, digits, ``_ . -``; no spaces), else ValueError."""
    if not isinstance(name, str) or not _SNAPSHOT_NAME.match(name):
        raise ValueError(f"bad snapshot name {name!r}: use 1-100 letters, digits, '_', '.', '-' (no spaces, "
                         "not starting with a punctuation mark)")
    return name


class ConsoleError(DeviceError):
    """The emulator console refused a command (``KO: ...``) or could not be reached."""


class EmulatorConsoleClient:
    """Client for an emulator console: one short connection per command, authenticated with the token.

    ``token``: the auth token (None: read ``token_path``, default ``~/.emulator_console_auth_token``;
    a console that does not ask for auth gets none). ``timeout``: seconds per command (snapshot
    loads of a big AVD can take tens of seconds; ``snapshot_timeout`` is used for those).
    """

    def __init__(self, port: int, host: str = "127.0.0.1", *, token: str | None = None,
                 token_path: str | os.PathLike[str] | None = None, timeout: float = 10.0,
                 snapshot_timeout: float = 120.0):
        self.host = host
        self.port = int(port)
        self.token = token
        self.token_path = Path(os.path.expanduser(str(token_path or CONSOLE_TOKEN_FILE)))
        self.timeout = float(timeout)
        self.snapshot_timeout = float(snapshot_timeout)

    def _token(self) -> str:
        if self.token is not None:
            return self.token
        try:
            return self.token_path.read_text().strip()
        except OSError as exc:
            raise ConsoleError(f"console {self.host}:{self.port} asks for auth but the token file "
                               f"{self.token_path} cannot be read: {exc}") from None

    @staticmethod
    def _read_reply(sock: socket.socket, buffer: bytearray, deadline: float, what: str) -> list[str]:
        """Lines up to and including a final ``OK``/``KO`` line."""
        lines: list[str] = []
        while True:
            while b"\n" in buffer:
                raw, _, rest = bytes(buffer).partition(b"\n")
                buffer[:] = rest
                line = raw.decode("utf-8", "replace").rstrip("\r")
                lines.append(line)
                if line == "OK" or line.startswith("OK:") or line.startswith("KO"):
                    return lines
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DeviceTimeout(f"emulator console: no reply to {what!r} in time")
            sock.settimeout(remaining)
            try:
                chunk = sock.recv(4096)
            except TimeoutError:
                raise DeviceTimeout(f"emulator console: no reply to {what!r} in time") from None
            if not chunk:
                if lines and what == "kill":
                    return lines + ["OK"]
                raise DeviceDisconnected(f"emulator console closed the connection during {what!r}")
            buffer.extend(chunk)

    def command(self, command: str, timeout: float | None = None) -> str:
        """Run one console command and return its output (without the final ``OK``); ``KO`` raises ConsoleError."""
        if "\n" in command or "\r" in command:
            raise ValueError(f"a console command is one line, got {command!r}")
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        try:
            sock = socket.create_connection((self.host, self.port), timeout=min(self.timeout, 5.0))
        except OSError as exc:
            raise ConsoleError(f"emulator console {self.host}:{self.port} unreachable: {exc}") from None
        buffer = bytearray()
        try:
            greeting = self._read_reply(sock, buffer, deadline, "greeting")
            if any("Authentication required" in line for line in greeting):
                sock.sendall(f"auth {self._token()}\r\n".encode())
                reply = self._read_reply(sock, buffer, deadline, "auth")
                if reply[-1].startswith("KO"):
                    raise ConsoleError(f"console {self.host}:{self.port} rejected the auth token "
                                       f"({reply[-1]}); check {self.token_path}")
            sock.sendall(command.encode() + b"\r\n")
            reply = self._read_reply(sock, buffer, deadline, command.split()[0] if command.split() else command)
            if reply[-1].startswith("KO"):
                raise ConsoleError(f"console command {command!r} failed: {reply[-1][2:].lstrip(': ')}")
            if command != "kill":
                try:
                    sock.sendall(b"quit\r\n")
                except OSError:
                    pass
            return "\n".join(reply[:-1])
        except OSError as exc:
            raise DeviceDisconnected(f"emulator console {self.host}:{self.port}: {exc}") from None
        finally:
            sock.close()

    def ping(self) -> bool:
        """True when the console answers."""
        try:
            self.command("ping", timeout=min(self.timeout, 5.0))
            return True
        except DeviceError:
            return False

    def avd_name(self) -> str:
        """The AVD name the emulator runs."""
        return self.command("avd name").strip()

    def snapshot_save(self, name: str) -> None:
        """Save the whole emulator state as ``name``."""
        self.command(f"avd snapshot save {check_snapshot_name(name)}", timeout=self.snapshot_timeout)

    def snapshot_load(self, name: str) -> None:
        """Restore the whole emulator state saved as ``name``."""
        self.command(f"avd snapshot load {check_snapshot_name(name)}", timeout=self.snapshot_timeout)

    def snapshot_delete(self, name: str) -> None:
        """Delete the snapshot ``name``."""
        self.command(f"avd snapshot delete {check_snapshot_name(name)}", timeout=self.snapshot_timeout)

    def snapshot_list(self) -> list[str]:
        """Names of the emulator's snapshots (parsed from the ``avd snapshot list`` table)."""
        names = []
        for line in self.command("avd snapshot list").splitlines():
            fields = line.split()
            if not fields or fields[0] in ("ID", "List"):
                continue
            # rows of the table "ID  TAG  VM SIZE  DATE  VM CLOCK" start with "--" or a number
            if len(fields) > 1 and (fields[0] == "--" or fields[0].isdigit()):
                names.append(fields[1])
            elif len(fields) == 1:
                names.append(fields[0])
        return names

    def kill(self) -> None:
        """Ask the emulator to exit."""
        self.command("kill")


class AppDataSnapshots:
    """AndroidWorld-style snapshots: copies of ``/data/data/<pkg>`` kept under ``store``.

    ``run(script, timeout)`` runs one ``sh`` script on the device as root and returns its output
    (the driver wraps it in ``su`` when adbd is not root). ``save(name, packages)`` force-stops each
    app and copies its data directory (``cp -a``, keeping owners and modes); ``load(name)`` force-stops
    the apps, replaces their data with the copies and restores SELinux labels (``restorecon``).
    Each snapshot keeps its package list in ``<store>/<name>/packages``, so another process can load it.
    """

    OK = "__android_gym_ok__"

    def __init__(self, run: Callable[[str, float | None], str], *,
                 store: str = "/data/local/tmp/android_gym_snapshots", data_root: str = "/data/data",
                 timeout: float = 120.0):
        self.run = run
        self.store = store.rstrip("/")
        self.data_root = data_root.rstrip("/")
        self.timeout = timeout

    @staticmethod
    def _packages(packages: Sequence[str]) -> list[str]:
        if isinstance(packages, str):
            packages = [packages]
        out = list(dict.fromkeys(packages))
        if not out:
            raise ValueError("app-data snapshots need at least one package")
        for pkg in out:
            if not isinstance(pkg, str) or not _PACKAGE.match(pkg):
                raise ValueError(f"bad package name {pkg!r} (expected something like com.example.app)")
        return out

    def save_script(self, name: str, packages: Sequence[str]) -> str:
        """The ``sh`` script ``save`` runs (printed for inspection; every name in it is validated and quoted)."""
        pkgs = self._packages(packages)
        snap = shlex.quote(f"{self.store}/{check_snapshot_name(name)}")
        lines = [f"rm -rf {snap}", f"mkdir -p {snap}"]
        for pkg in pkgs:
            src = shlex.quote(f"{self.data_root}/{pkg}")
            lines.append(f"am force-stop {pkg} 2>/dev/null")
            lines.append(f"[ -d {src} ] || {{ echo 'no data directory {self.data_root}/{pkg}'; exit 3; }}")
            lines.append(f"cp -a {src} {snap}/{pkg} || exit 4")
        lines.append(f"printf '%s\\n' {' '.join(pkgs)} > {snap}/packages || exit 5")
        lines.append(f"echo {self.OK}")
        return "\n".join(lines)

    def load_script(self, name: str, packages: Sequence[str]) -> str:
        """The ``sh`` script ``load`` runs for ``packages`` of snapshot ``name``."""
        pkgs = self._packages(packages)
        snap = shlex.quote(f"{self.store}/{check_snapshot_name(name)}")
        lines = []
        for pkg in pkgs:
            dst = shlex.quote(f"{self.data_root}/{pkg}")
            lines.append(f"[ -d {snap}/{pkg} ] || {{ echo 'snapshot {name} has no copy of {pkg}'; exit 3; }}")
            lines.append(f"am force-stop {pkg} 2>/dev/null")
            lines.append(f"rm -rf {dst} && cp -a {snap}/{pkg} {dst} || exit 4")
            lines.append(f"if command -v restorecon >/dev/null 2>&1; then restorecon -RF {dst}; fi")
        lines.append(f"echo {self.OK}")
        return "\n".join(lines)

    def _checked(self, script: str, what: str) -> str:
        out = self.run(script, self.timeout)
        if self.OK not in out:
            raise DeviceError(f"app-data snapshot {what} failed: {out.strip() or 'no output'}")
        return out

    def save(self, name: str, packages: Sequence[str]) -> None:
        """Copy the data of ``packages`` into snapshot ``name`` (replacing an older one of that name)."""
        self._checked(self.save_script(name, packages), f"save {name!r}")

    def packages(self, name: str) -> list[str]:
        """The packages snapshot ``name`` holds (read from the device)."""
        snap = shlex.quote(f"{self.store}/{check_snapshot_name(name)}")
        out = self.run(f"cat {snap}/packages 2>/dev/null && echo {self.OK}", self.timeout)
        if self.OK not in out:
            raise DeviceError(f"no app-data snapshot named {name!r} under {self.store}")
        return [line.strip() for line in out.splitlines() if line.strip() and line.strip() != self.OK]

    def load(self, name: str, packages: Sequence[str] | None = None) -> None:
        """Restore the apps' data from snapshot ``name`` (all its packages, or just ``packages``)."""
        pkgs = self.packages(name) if packages is None else list(packages)
        self._checked(self.load_script(name, pkgs), f"load {name!r}")

    def delete(self, name: str) -> None:
        """Remove snapshot ``name`` from the device."""
        snap = shlex.quote(f"{self.store}/{check_snapshot_name(name)}")
        self.run(f"rm -rf {snap}", self.timeout)

    def list(self) -> list[str]:
        """Names of the app-data snapshots on the device."""
        out = self.run(f"ls {shlex.quote(self.store)} 2>/dev/null", self.timeout)
        return [n for n in out.split() if _SNAPSHOT_NAME.match(n)]
