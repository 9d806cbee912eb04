"""``HostAdb``: the real ``adb`` binary with its own private server port, for tests and CI against ``SimAdbd``.

Each ``HostAdb`` runs adb commands with ``ANDROID_ADB_SERVER_PORT`` set to its own port (and,
optionally, ``HOME`` set to a private folder, which is where ``adb emu`` reads the console token),
so several test sessions never share or kill each other's adb server.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

from android_gym.adbd.server import free_port


def find_adb(explicit: str | os.PathLike[str] | None = None) -> str | None:
    """The adb binary to use: ``explicit``, ``$ADB``, ``/usr/bin/adb`` or the first ``adb`` on PATH (None if none)."""
    for candidate in (explicit, os.environ.get("ADB"), "/usr/bin/adb"):
        if candidate and Path(candidate).is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("adb")


class HostAdb:
    """Runs the ``adb`` client against a private adb server on ``server_port`` (a free port by default).

    ``scan_emulators=False`` (the default) asks that server not to probe ports 5555-5585 for
    emulators at start-up (``ADB_LOCAL_TRANSPORT_MAX_PORT=5553``), so an unrelated emulator or
    sim-adbd on the standard ports stays out of a test. adb 29 reads that variable racily (its
    scanner thread may start first), so this is best effort; ``ADB_EMU=0`` would be reliable but
    also stops adb re-attaching emulators that drop. Emulators that register themselves
    (``SimAdbd`` in emulator mode) appear either way.
    """

    def __init__(self, adb: str | os.PathLike[str] | None = None, server_port: int | None = None,
                 home: str | os.PathLike[str] | None = None, extra_env: Mapping[str, str] | None = None,
                 scan_emulators: bool = False):
        found = find_adb(adb)
        if found is None:
            raise FileNotFoundError("no adb binary found (install Debian's 'adb' package or set $ADB)")
        self.adb = found
        self.server_port = server_port or free_port()
        self.env = dict(os.environ)
        self.env["ANDROID_ADB_SERVER_PORT"] = str(self.server_port)
        self.env.pop("ANDROID_SERIAL", None)
        if not scan_emulators:
            self.env["ADB_LOCAL_TRANSPORT_MAX_PORT"] = "5553"
        if home is not None:
            Path(home).mkdir(parents=True, exist_ok=True)
            self.env["HOME"] = str(home)
        self.env.update(extra_env or {})

    def run(self, *args: str, timeout: float = 20.0, check: bool = False,
            input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        """Run ``adb ARGS...`` and return the completed process (bytes stdout/stderr)."""
        return subprocess.run([self.adb, *args], env=self.env, capture_output=True, timeout=timeout, check=check,
                              input=input, stdin=None if input is not None else subprocess.DEVNULL)

    def text(self, *args: str, timeout: float = 20.0) -> str:
        """stdout of ``adb ARGS...`` as text; RuntimeError carrying adb's message when it fails."""
        proc = self.run(*args, timeout=timeout)
        if proc.returncode != 0:
            error = proc.stderr.decode("utf-8", "replace").strip() or proc.stdout.decode("utf-8", "replace").strip()
            raise RuntimeError(f"adb {' '.join(args)} failed (exit {proc.returncode}): {error}")
        return proc.stdout.decode("utf-8", "replace")

    def start_server(self) -> None:
        """Start the private adb server (a no-op when it already runs)."""
        self.text("start-server")

    def kill_server(self) -> None:
        """Stop the private adb server."""
        try:
            self.run("kill-server", timeout=10.0)
        except subprocess.TimeoutExpired:
            pass

    def devices(self) -> dict[str, str]:
        """``adb devices`` as {serial: state} (state: device, offline, unauthorized, ...)."""
        listing: dict[str, str] = {}
        for line in self.text("devices").splitlines()[1:]:
            parts = line.split()
            if len(parts) >= 2:
                listing[parts[0]] = parts[1]
        return listing

    def connect(self, address: str, timeout: float = 10.0) -> str:
        """``adb connect ADDRESS``; returns adb's message and raises RuntimeError when it did not connect."""
        message = self.text("connect", address, timeout=timeout).strip()
        if "connected to" not in message:
            raise RuntimeError(f"adb connect {address} failed: {message}")
        return message

    def wait_for_state(self, serial: str, state: str | None, timeout: float = 10.0, poll: float = 0.05) -> float:
        """Wait until ``adb devices`` lists ``serial`` as ``state`` (None: not listed); returns seconds waited."""
        start = time.monotonic()
        while True:
            current = self.devices().get(serial)
            if current == state:
                return time.monotonic() - start
            if time.monotonic() - start > timeout:
                raise TimeoutError(f"{serial} is {current or 'not listed'} after {timeout:g} s (wanted {state})")
            time.sleep(poll)

    def __enter__(self) -> HostAdb:
        self.start_server()
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill_server()
