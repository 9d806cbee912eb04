"""The emulator console: the telnet-style text protocol an Android emulator serves on its console port.

Lines in, ``OK`` or ``KO: message`` out (CRLF line ends). When the auth token file
(``~/.emulator_console_auth_token`` by default; created with a random token when missing, as the
emulator does) is non-empty, only ``help``, ``auth`` and ``quit`` work until ``auth <token>``
succeeds; an empty file turns authentication off. Commands: ``avd snapshot save|load|list|delete
NAME``, ``avd name``, ``avd status``, ``ping``, ``kill``, ``help``, ``quit``/``exit``.

``adb emu COMMAND`` talks to this console directly: it reads the same token file from ``$HOME``,
sends ``auth <token>``, the command and ``quit``, and prints what follows the second ``OK``.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import threading
from pathlib import Path
from typing import Any

TOKEN_FILENAME = ".emulator_console_auth_token"
GREETING = "Android Console: type 'help' for a list of commands"
HELP_TEXT = (
    "Android console commands:\r\n\r\n"
    "    help|h|?         print a list of commands\r\n"
    "    auth             authenticate with the token from the auth token file\r\n"
    "    avd              control virtual device execution (avd snapshot save|load|list|delete, avd name, "
    "avd status)\r\n"
    "    ping             check if the emulator is alive\r\n"
    "    kill             kill the emulator instance\r\n"
    "    quit|exit        quit control session\r\n"
)


def default_token_path() -> Path:
    """``~/.emulator_console_auth_token``, where the emulator and ``adb emu`` look for the token."""
    return Path(os.path.expanduser("~")) / TOKEN_FILENAME


def ensure_token(path: str | os.PathLike[str] | None = None) -> str:
    """The console auth token from ``path`` (default ``~/.emulator_console_auth_token``), creating it when missing.

    An empty file means "no authentication", as with the real emulator.
    """
    token_path = Path(path) if path is not None else default_token_path()
    if not token_path.exists():
        token_path.parent.mkdir(parents=True, exist_ok=True)
        token = secrets.token_urlsafe(12)
        token_path.write_text(token)
        with contextlib.suppress(OSError):
            token_path.chmod(0o600)
        return token
    return token_path.read_text().strip()


class EmulatorConsole:
    """Serves the console protocol on an already-bound listening socket for one :class:`SimAdbd`."""

    def __init__(self, adbd: Any, listener: socket.socket, token_path: str | os.PathLike[str] | None = None):
        self.adbd = adbd
        self.listener = listener
        self.port: int = listener.getsockname()[1]
        self.token_path = Path(token_path) if token_path is not None else default_token_path()
        self.token = ensure_token(self.token_path)
        self._clients: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._accept_loop, name=f"sim-console-{self.port}", daemon=True)

    def start(self) -> None:
        """Start accepting console connections."""
        self._thread.start()

    def stop(self) -> None:
        """Close the listening socket and every open console session."""
        self._stopping.set()
        with contextlib.suppress(OSError):
            self.listener.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.listener.close()
        with self._lock:
            clients = list(self._clients)
            self._clients.clear()
        for client in clients:
            with contextlib.suppress(OSError):
                client.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                client.close()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)

    def _accept_loop(self) -> None:
        self.listener.settimeout(0.2)
        while not self._stopping.is_set():
            try:
                client, _peer = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            client.settimeout(None)
            with self._lock:
                self._clients.add(client)
            threading.Thread(target=self._session, args=(client,), name=f"sim-console-session-{self.port}",
                             daemon=True).start()

    # --- one session ----------------------------------------------------------------------------
    def _session(self, client: socket.socket) -> None:
        authed = not self.token

        def send(text: str) -> None:
            client.sendall(text.encode())

        try:
            if authed:
                send(f"{GREETING}\r\nOK\r\n")
            else:
                send("Android Console: Authentication required\r\n"
                     "Android Console: type 'auth <auth_token>' to authenticate\r\n"
                     "Android Console: you can find your <auth_token> in \r\n"
                     f"'{self.token_path}'\r\nOK\r\n")
            buf = b""
            while True:
                data = client.recv(4096)
                if not data:
                    break
                buf += data
                while b"\n" in buf:
                    raw, buf = buf.split(b"\n", 1)
                    line = raw.decode("utf-8", "replace").strip()
                    if not line:
                        continue
                    words = line.split()
                    head = words[0].lower()
                    if head in ("quit", "exit"):
                        return
                    if head == "auth":
                        given = words[1] if len(words) > 1 else ""
                        if self.token and secrets.compare_digest(given, self.token):
                            authed = True
                            send(f"{GREETING}\r\nOK\r\n")
                        elif not self.token:
                            send(f"{GREETING}\r\nOK\r\n")
                        else:
                            send(f"KO: authentication token does not match {self.token_path}\r\n")
                        continue
                    if head in ("help", "h", "?"):
                        send(HELP_TEXT + "\r\nOK\r\n")
                        continue
                    if not authed:
                        send("KO: unknown command, try 'help' (authenticate first: auth <auth_token>)\r\n")
                        continue
                    if head == "kill":
                        send("OK: killing emulator, bye bye\r\n")
                        self.adbd.kill()
                        return
                    send(self.command(words))
        except OSError:
            pass
        finally:
            with self._lock:
                self._clients.discard(client)
            with contextlib.suppress(OSError):
                client.close()

    def command(self, words: list[str]) -> str:
        """The reply (CRLF lines ending in ``OK`` or one ``KO: ...`` line) to one authenticated command."""
        head = words[0].lower()
        phone = getattr(getattr(self.adbd, "device", None), "phone", None)
        if head == "sms" and phone is not None:
            from android_gym.sim.device import console_reply

            return console_reply(phone, words, self.adbd.avd_name) or "KO: bad sms command\r\n"
        if head == "ping":
            return "I am alive!\r\nOK\r\n"
        if head != "avd":
            return "KO: unknown command, try 'help'\r\n"
        if len(words) < 2:
            return "KO: missing sub-command: avd snapshot|name|status\r\n"
        sub = words[1].lower()
        if sub == "name":
            return f"{self.adbd.avd_name}\r\nOK\r\n"
        if sub == "status":
            state = self.adbd.device_state()
            text = "virtual device is running" if state == "ok" else f"virtual device is {state}"
            return f"{text}\r\nOK\r\n"
        if sub != "snapshot":
            return f"KO: unknown avd sub-command '{words[1]}'; try 'help avd'\r\n"
        if len(words) < 3:
            return "KO: missing snapshot operation: save|load|list|delete\r\n"
        op = words[2].lower()
        if op == "list":
            names = self.adbd.snapshot_list()
            lines = ["List of snapshots present on all disks:", "ID        TAG                 VM SIZE"]
            lines += [f"--        {name:<20s}   0M" for name in names]
            return "\r\n".join(lines) + "\r\nOK\r\n"
        if op not in ("save", "load", "delete", "del"):
            return f"KO: unknown snapshot operation '{words[2]}'; use save|load|list|delete\r\n"
        if len(words) < 4:
            return f"KO: avd snapshot {op} needs a snapshot name\r\n"
        name = words[3]
        try:
            if op == "save":
                self.adbd.snapshot_save(name)
            elif op == "load":
                self.adbd.snapshot_load(name)
            else:
                self.adbd.snapshot_delete(name)
        except KeyError:
            return f"KO: snapshot '{name}' does not exist\r\n"
        except (ValueError, RuntimeError) as exc:
            return f"KO: {exc}\r\n"
        return "OK\r\n"
