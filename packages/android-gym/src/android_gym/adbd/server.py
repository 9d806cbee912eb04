"""``SimAdbd``: the simulated phone as a device on TCP, speaking the adb transport protocol to the real ``adb``.

One listening socket per device; each host connection gets a reader thread that answers CNXN,
opens streams for OPEN, acknowledges every WRTE with OKAY and hands stream data to the service
running in the stream's own thread. Outgoing data is cut into WRTE messages no larger than the
smaller of both sides' maxdata, and each WRTE waits for the host's OKAY of the previous one.

Services: ``shell:CMD`` (raw output), ``shell,v2,...:CMD`` (shell-protocol packets with the exit
code), ``shell:`` / ``shell,v2,pty:`` with no command (a line-based interactive session),
``exec:CMD`` (raw bytes, e.g. ``screencap -p``), ``sync:`` (push/pull/ls), ``tcp:PORT`` and
``tcp:HOST:PORT`` (for ``adb forward``), ``reboot:``. Anything else is refused with CLSE, which
adb reports as "closed".

Device calls go through :class:`~android_gym.sim.device.SimDevice`, so its latency model and
fault injection apply to adb traffic: a crash drops every connection and refuses new ones until
recovery (adb then shows the device offline or drops it), a hang makes the device stop answering
(connections stay open, nothing is acknowledged), a disconnect closes the sockets once (adb
reconnects).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import queue
import socket
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from android_gym.adbd.protocol import (
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_VERSION,
    A_WRTE,
    DEFAULT_FEATURES,
    MAX_PAYLOAD,
    SHELL_CLOSE_STDIN,
    SHELL_EXIT,
    SHELL_HEADER,
    SHELL_STDIN,
    SHELL_STDOUT,
    Message,
    ProtocolError,
    ShellPacketReader,
    device_banner,
    parse_banner,
    parse_service,
    read_message,
    shell_packet,
)
from android_gym.adbd.sync import SyncSession
from android_gym.device import DeviceCrashed, DeviceDisconnected, DeviceTimeout

log = logging.getLogger(__name__)

DEFAULT_ADB_SERVER_PORT = 5037
DEFAULT_AVD_NAME = "Pixel_6_API_33"
_ACCEPT_POLL = 0.2


class _Dropped(Exception):
    """Internal: a device fault ended the request; the fault handler already did what the wire shows."""


def _default_props() -> dict[str, str]:
    """The simulated phone's ro.product.* values, as ``getprop`` reports them."""
    from android_gym.sim.shell import GETPROP

    return {"ro.product.name": GETPROP["ro.product.name"], "ro.product.model": GETPROP["ro.product.model"],
            "ro.product.device": GETPROP["ro.product.device"]}


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that was free on ``host`` a moment ago (chosen by the kernel)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _bind(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(16)
    return sock


def bind_port_pair(host: str = "127.0.0.1", attempts: int = 50) -> tuple[socket.socket, socket.socket]:
    """Two listening sockets on adjacent ports (console P, adb P+1), the layout of an emulator's ports."""
    for _ in range(attempts):
        first = _bind(host, 0)
        port = first.getsockname()[1]
        if port >= 65535:
            first.close()
            continue
        try:
            second = _bind(host, port + 1)
        except OSError:
            first.close()
            continue
        return first, second
    raise OSError(f"no two adjacent free TCP ports found on {host} after {attempts} attempts")


class _Stream:
    """One adb stream (an OPENed service) on a connection: flow-controlled writes, queued reads."""

    def __init__(self, conn: _Connection, local_id: int, remote_id: int, service: str):
        self.conn = conn
        self.local_id = local_id
        self.remote_id = remote_id
        self.service = service
        self._can_write = threading.Event()
        self._can_write.set()  # after our OKAY to OPEN, one WRTE may go out
        self._inbox: queue.Queue[bytes | None] = queue.Queue()
        self.dead = False  # the host closed it or the connection went away
        self._closed = False

    # called by the connection's reader thread
    def on_okay(self) -> None:
        self._can_write.set()

    def on_data(self, data: bytes) -> None:
        self._inbox.put(data)

    def on_remote_close(self) -> None:
        self.dead = True
        self._closed = True  # the host already forgot this stream: no CLSE back
        self._inbox.put(None)
        self._can_write.set()

    # called by the service thread
    def write(self, data: bytes) -> bool:
        """Send ``data`` as WRTE messages of at most the negotiated maxdata; False when the stream is gone."""
        view = memoryview(data)
        step = self.conn.max_payload
        for start in range(0, len(view), step):
            self._can_write.wait()
            if self.dead or self.conn.closed:
                return False
            self._can_write.clear()
            if not self.conn.send(Message(A_WRTE, self.local_id, self.remote_id, bytes(view[start:start + step]))):
                return False
        return not self.dead

    def read(self, timeout: float | None = None) -> bytes | None:
        """The next bytes the host wrote; None at end of stream (host CLSE or connection closed)."""
        try:
            item = self._inbox.get(timeout=timeout)
        except queue.Empty:
            return b""
        if item is None:
            self._inbox.put(None)  # keep reporting the end
        return item

    def close(self) -> None:
        """Close our side: CLSE to the host (once)."""
        if self._closed:
            return
        self._closed = True
        self.dead = True
        self.conn.forget(self.local_id)
        self.conn.send(Message(A_CLSE, self.local_id, self.remote_id))

    def abort(self) -> None:
        """The connection went away: wake everything waiting on this stream."""
        self.dead = True
        self._closed = True
        self._inbox.put(None)
        self._can_write.set()


class _Connection:
    """One host connection (an adb server's transport to this device)."""

    _ids = itertools.count(1)

    def __init__(self, server: SimAdbd, sock: socket.socket, peer: Any):
        self.server = server
        self.sock = sock
        self.peer = peer
        self.max_payload = server.max_payload
        self.online = False
        self.closed = False
        self.host_features: list[str] = []
        self._send_lock = threading.Lock()
        self._streams: dict[int, _Stream] = {}
        self._streams_lock = threading.Lock()
        self._next_local = itertools.count(1)
        self.thread = threading.Thread(target=self._run, name=f"sim-adbd-conn-{next(self._ids)}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def send(self, message: Message) -> bool:
        """Write one message; False (and the connection closed) when the socket fails."""
        if self.closed:
            return False
        try:
            with self._send_lock:
                self.sock.sendall(message.pack())
            return True
        except OSError:
            self.close()
            return False

    def forget(self, local_id: int) -> None:
        with self._streams_lock:
            self._streams.pop(local_id, None)

    def close(self) -> None:
        """Drop the connection (the host sees the transport close) and abort every stream."""
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(OSError):
            self.sock.close()
        with self._streams_lock:
            streams = list(self._streams.values())
            self._streams.clear()
        for stream in streams:
            stream.abort()
        self.server._forget_connection(self)

    def _run(self) -> None:
        try:
            while not self.closed:
                message = read_message(self.sock)
                if self.server.device_state() == "hung":
                    continue  # a hung device answers nothing
                self._handle(message)
        except (OSError, ConnectionError, ProtocolError) as exc:
            if not self.closed:
                log.debug("sim-adbd %s: connection from %s ended: %s", self.server.serial, self.peer, exc)
        finally:
            self.close()

    def _handle(self, message: Message) -> None:
        command = message.command
        if command == A_CNXN:
            host_max = message.arg1 or self.server.max_payload
            self.max_payload = max(1024, min(self.server.max_payload, host_max))
            _kind, _props, self.host_features = parse_banner(message.data)
            with self._streams_lock:
                stale = list(self._streams.values())
                self._streams.clear()
            for stream in stale:
                stream.abort()
            self.online = True
            self.send(Message(A_CNXN, A_VERSION, self.server.max_payload, self.server.banner()))
            return
        if not self.online:
            return  # before CNXN only CNXN is meaningful (we never ask for AUTH)
        if command == A_OPEN:
            self._open(message)
        elif command == A_OKAY:
            with self._streams_lock:
                stream = self._streams.get(message.arg1)
            if stream is not None:
                stream.remote_id = message.arg0
                stream.on_okay()
        elif command == A_WRTE:
            with self._streams_lock:
                stream = self._streams.get(message.arg1)
            if stream is None:
                self.send(Message(A_CLSE, message.arg1, message.arg0))
                return
            self.send(Message(A_OKAY, stream.local_id, stream.remote_id))  # before anything the data causes
            stream.on_data(message.data)
        elif command == A_CLSE:
            with self._streams_lock:
                stream = self._streams.pop(message.arg1, None)
            if stream is not None:
                stream.on_remote_close()

    def _open(self, message: Message) -> None:
        remote_id = message.arg0
        service = message.data.rstrip(b"\0").decode("utf-8", "replace")
        try:
            handler = self.server._open_service(service)
        except Exception as exc:  # any failure to open a service is a refusal on the wire
            log.debug("sim-adbd %s: service %r refused: %s", self.server.serial, service, exc)
            handler = None
        if handler is None:
            self.send(Message(A_CLSE, 0, remote_id))
            return
        local_id = next(self._next_local)
        stream = _Stream(self, local_id, remote_id, service)
        with self._streams_lock:
            self._streams[local_id] = stream
        self.send(Message(A_OKAY, local_id, remote_id))
        threading.Thread(target=self._serve, args=(handler, stream), name=f"sim-adbd-{service[:24]}",
                         daemon=True).start()

    def _serve(self, handler: Callable[[_Stream], None], stream: _Stream) -> None:
        try:
            handler(stream)
        except _Dropped:
            return  # the fault handler decided what the host sees
        except Exception:  # a service bug must not kill the transport
            log.exception("sim-adbd %s: service %r failed", self.server.serial, stream.service)
        stream.close()


class SimAdbd:
    """The simulated phone exposed as an adb device on ``host:port`` (and, optionally, an emulator console).

    ``target``: a :class:`~android_gym.sim.device.SimDevice` (its latency and faults apply to adb
    traffic) or a :class:`~android_gym.sim.phone.SimPhone` (wrapped in a fresh ``SimDevice``).
    ``port=0`` picks a free port. ``console_port``: None for no console, 0 for a free one; with
    ``port=0`` and ``console_port=0`` the two are adjacent (console P, adb P+1) as on an emulator,
    and the device registers itself with the adb server (``host:emulator:P+1``) so it appears as
    ``emulator-P`` and ``adb emu`` works. ``announce`` forces that registration on or off;
    ``adb_server_port`` is where it goes (default: ``$ANDROID_ADB_SERVER_PORT`` or 5037).
    ``props`` override the CNXN banner's ``ro.product.*`` values; ``features`` replace the
    advertised feature list. Use as a context manager or call ``start()``/``stop()``.
    """

    def __init__(self, target: Any, host: str = "127.0.0.1", port: int = 0, console_port: int | None = None, *,
                 props: Mapping[str, str] | None = None, features: Iterable[str] = DEFAULT_FEATURES,
                 max_payload: int = MAX_PAYLOAD, announce: bool | None = None, adb_server_port: int | None = None,
                 auth_token_path: str | os.PathLike[str] | None = None, avd_name: str = DEFAULT_AVD_NAME,
                 shell_prompt: str | None = None):
        from android_gym.sim.device import SimDevice
        from android_gym.sim.phone import SimPhone

        if isinstance(target, SimPhone):
            target = SimDevice(target)
        if not isinstance(target, SimDevice):
            raise TypeError(f"SimAdbd needs a SimDevice or SimPhone, got {type(target).__name__}")
        if not 1024 <= max_payload <= 1024 * 1024:
            raise ValueError(f"max_payload must be between 1024 and 1048576 bytes, got {max_payload}")
        for name, value in (("port", port), ("console_port", console_port)):
            if value is not None and not 0 <= value <= 65535:
                raise ValueError(f"{name} must be in 0..65535, got {value}")
        self.device = target
        self.phone = target.phone
        self.host = host
        self.max_payload = max_payload
        self.features = tuple(features)
        self.props = _default_props()
        self.props.update(props or {})
        self.avd_name = avd_name
        self.shell_prompt = shell_prompt or f"{self.props.get('ro.product.device', 'generic')}:/ $ "
        self._requested_port = port
        self._requested_console = console_port
        self._announce = announce
        self._adb_server_port = adb_server_port
        self._auth_token_path = auth_token_path
        self._lock = threading.RLock()  # serialises every call into the phone
        self._conns: set[_Connection] = set()
        self._conns_lock = threading.Lock()
        self._listener: socket.socket | None = None
        self._accept_thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.console: Any = None
        self.port = 0
        self.console_port: int | None = None
        self.killed = False
        self.announced = False

    # --- lifecycle ------------------------------------------------------------------------------
    def start(self) -> SimAdbd:
        """Bind the ports, start serving, and register with the adb server when in emulator mode."""
        if self._listener is not None:
            return self
        console_sock: socket.socket | None = None
        if self._requested_port == 0 and self._requested_console == 0:
            console_sock, self._listener = bind_port_pair(self.host)
        else:
            self._listener = _bind(self.host, self._requested_port)
            if self._requested_console is not None:
                try:
                    console_sock = _bind(self.host, self._requested_console)
                except OSError:
                    self._listener.close()
                    self._listener = None
                    raise
        self.port = self._listener.getsockname()[1]
        if console_sock is not None:
            from android_gym.adbd.console import EmulatorConsole

            self.console = EmulatorConsole(self, console_sock, token_path=self._auth_token_path)
            self.console_port = self.console.port
            self.console.start()
        self._stopping.clear()
        self._accept_thread = threading.Thread(target=self._accept_loop, name=f"sim-adbd-accept-{self.port}",
                                               daemon=True)
        self._accept_thread.start()
        if self.announce_enabled:
            self.announced = self.announce()
        return self

    @property
    def emulator_mode(self) -> bool:
        """True when the console and adb ports are an emulator pair (console P, adb P+1)."""
        return self.console_port is not None and self.port == self.console_port + 1

    @property
    def announce_enabled(self) -> bool:
        """Whether ``start()`` registers the device with the adb server."""
        return self.emulator_mode if self._announce is None else bool(self._announce)

    @property
    def serial(self) -> str:
        """The serial adb lists this device under: ``emulator-P`` in emulator mode, else ``host:port``."""
        if self.emulator_mode and self.announce_enabled:
            return f"emulator-{self.console_port}"
        host = "127.0.0.1" if self.host in ("", "0.0.0.0") else self.host
        return f"{host}:{self.port}"

    @property
    def adb_server_port(self) -> int:
        """The adb server port registration goes to."""
        if self._adb_server_port is not None:
            return self._adb_server_port
        return int(os.environ.get("ANDROID_ADB_SERVER_PORT", DEFAULT_ADB_SERVER_PORT))

    def announce(self) -> bool:
        """Tell the adb server a new emulator is up (``host:emulator:PORT``); False when no server listens."""
        request = f"host:emulator:{self.port}".encode()
        try:
            with socket.create_connection(("127.0.0.1", self.adb_server_port), timeout=2.0) as s:
                s.sendall(b"%04x" % len(request) + request)
        except OSError as exc:
            log.info("sim-adbd: no adb server on port %d to announce to (%s)", self.adb_server_port, exc)
            return False
        return True

    def stop(self) -> None:
        """Stop serving: close the listening sockets, every connection and the console."""
        self._stopping.set()
        listener, self._listener = self._listener, None
        if listener is not None:
            with contextlib.suppress(OSError):
                listener.shutdown(socket.SHUT_RDWR)  # wakes a blocked accept() at once on Linux
            with contextlib.suppress(OSError):
                listener.close()
        self.drop_connections()
        if self.console is not None:
            self.console.stop()
        thread = self._accept_thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=2.0)

    def kill(self) -> None:
        """What ``adb emu kill`` does: the emulator goes away (device closed, ports released)."""
        self.killed = True
        self.device.close()
        self.stop()

    def __enter__(self) -> SimAdbd:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"SimAdbd({self.serial!r}, port={self.port}, console_port={self.console_port}, " \
               f"state={self.device_state()!r})"

    # --- connections ----------------------------------------------------------------------------
    def _accept_loop(self) -> None:
        listener = self._listener
        if listener is None:
            return
        listener.settimeout(_ACCEPT_POLL)
        while not self._stopping.is_set():
            try:
                sock, peer = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                break
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self.device_state() in ("crashed", "closed"):
                # like an emulator whose adbd died: the port forward accepts, then the line goes dead
                with contextlib.suppress(OSError):
                    sock.close()
                continue
            conn = _Connection(self, sock, peer)
            with self._conns_lock:
                self._conns.add(conn)
            conn.start()

    def _forget_connection(self, conn: _Connection) -> None:
        with self._conns_lock:
            self._conns.discard(conn)

    @property
    def connections(self) -> int:
        """How many host connections are open."""
        with self._conns_lock:
            return len(self._conns)

    def drop_connections(self) -> None:
        """Close every host connection (adb sees the transport go away)."""
        with self._conns_lock:
            conns = list(self._conns)
        for conn in conns:
            conn.close()

    def banner(self) -> bytes:
        """The CNXN banner this device answers with."""
        return device_banner(self.props, self.features)

    # --- device state and faults ----------------------------------------------------------------
    def device_state(self) -> str:
        """"ok", "crashed", "hung", "disconnected" or "closed": what the wire currently shows."""
        d = self.device
        if d.closed:
            return "closed"
        if d.crashed:
            return "crashed"
        if d.hung:
            return "hung"
        if d.disconnected:
            return "disconnected"
        return "ok"

    def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run a device call under the phone lock, turning device faults into what the wire shows."""
        with self._lock:
            try:
                return fn(*args)
            except DeviceTimeout:
                log.info("sim-adbd %s: device hung; no more answers until recover()", self.serial)
                raise _Dropped() from None
            except DeviceCrashed:
                log.info("sim-adbd %s: device crashed; connections dropped until recover()", self.serial)
                self.drop_connections()
                raise _Dropped() from None
            except DeviceDisconnected:
                if self.device.closed:
                    self.drop_connections()
                    raise _Dropped() from None
                log.info("sim-adbd %s: transport disconnected; the host may reconnect", self.serial)
                self.device.reconnect()  # transient: the next host connection works again
                self.drop_connections()
                raise _Dropped() from None

    def recover(self) -> None:
        """Bring a crashed, hung or disconnected device back (reboot when needed); stale connections drop."""
        with self._lock:
            was = self.device_state()
            self.device.recover()
        if was != "ok":
            self.drop_connections()

    def reboot(self) -> None:
        """What ``adb reboot`` does: the phone restarts (apps lose UI state) and the transport drops."""
        with self._lock:
            self.device.reconnect()
            self.device.reboot()
        self.drop_connections()

    # snapshot operations, used by the console
    def snapshot_save(self, name: str) -> None:
        """Save the phone state under ``name`` (works on a failed device too, as the emulator's does)."""
        with self._lock:
            self.device.latency.wait("snapshot_save")
            self.phone.snapshot_save(name)

    def snapshot_load(self, name: str) -> None:
        """Restore a snapshot; a crashed or hung device comes back with it (the whole VM state is restored)."""
        with self._lock:
            if name not in self.phone.snapshots:
                raise KeyError(f"no snapshot named {name!r}")
            was = self.device_state()
            if was != "ok":
                self.device.recover()
            self.device.latency.wait("snapshot_load")
            self.phone.snapshot_load(name)
        if was != "ok":
            self.drop_connections()

    def snapshot_list(self) -> list[str]:
        """Names of the saved snapshots."""
        with self._lock:
            return self.phone.snapshot_list()

    def snapshot_delete(self, name: str) -> None:
        """Delete a snapshot (KeyError when it does not exist)."""
        with self._lock:
            self.phone.snapshot_delete(name)

    # --- services -------------------------------------------------------------------------------
    def _open_service(self, service: str) -> Callable[[_Stream], None] | None:
        """The handler for an OPENed service, or None to refuse it (CLSE)."""
        name, opts, arg = parse_service(service)
        if name == "shell":
            v2 = "v2" in opts
            pty = "pty" in opts or ("raw" not in opts and not arg)
            if not arg:
                return lambda s: self._interactive(s, v2=v2, pty=pty)
            return lambda s: self._shell(s, arg, v2=v2)
        if name == "exec" and arg:
            return lambda s: self._exec_out(s, arg)
        if name == "sync" and not arg:
            return self._sync
        if name == "tcp" and arg:
            return self._open_tcp(arg)
        if name == "reboot":
            return self._reboot
        return None

    def _run(self, command: str) -> tuple[bytes, int]:
        """(stdout bytes, exit status) of one command line, through the device's fault and latency gate."""

        def run() -> tuple[bytes, int]:
            # timeout 0: a hang is reported at once and the transport goes silent here, instead of
            # SimDevice sleeping out its timeout while holding the phone
            output = self.device.exec_out(command, 0.0)
            return output, self.device.last_status

        return self._call(run)

    def _shell(self, stream: _Stream, command: str, v2: bool) -> None:
        output, status = self._run(command)
        if not v2:
            stream.write(output)
            return
        room = max(1, stream.conn.max_payload - SHELL_HEADER.size)
        packets = [shell_packet(SHELL_STDOUT, output[i:i + room]) for i in range(0, len(output), room)]
        packets.append(shell_packet(SHELL_EXIT, bytes([status & 0xFF])))
        for packet in packets:
            if not stream.write(packet):
                return

    def _exec_out(self, stream: _Stream, command: str) -> None:
        output, _status = self._run(command)
        stream.write(output)

    def _interactive(self, stream: _Stream, v2: bool, pty: bool) -> None:
        """A minimal line-based interactive shell: a prompt, one command per line, ``exit`` to leave.

        With a pty the typed characters are echoed and line ends become CRLF; output produced by one
        chunk of input goes out in one write.
        """
        prompt = self.shell_prompt.encode()
        pending = bytearray()

        def flush() -> bool:
            data = bytes(pending)
            pending.clear()
            if pty:
                data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
            if not data:
                return True
            return stream.write(shell_packet(SHELL_STDOUT, data) if v2 else data)

        reader = ShellPacketReader() if v2 else None
        line = bytearray()
        status = 0
        last = b""
        pending += prompt
        finished = False
        while not finished:
            if not flush():
                return
            data = stream.read()
            if data is None:
                return
            chunks: list[bytes] = []
            if reader is not None:
                for packet_id, payload in reader.feed(data):
                    if packet_id == SHELL_STDIN:
                        chunks.append(payload)
                    elif packet_id == SHELL_CLOSE_STDIN:
                        chunks.append(b"\x04")
            else:
                chunks.append(data)
            for byte in b"".join(chunks):
                ch = bytes([byte])
                if ch == b"\n" and last == b"\r":
                    last = ch
                    continue  # CRLF is one line end
                last = ch
                if ch in (b"\r", b"\n"):
                    if pty:
                        pending += b"\n"
                    command = line.decode("utf-8", "replace").strip()
                    line.clear()
                    if command in ("exit", "logout"):
                        finished = True
                        break
                    if command:
                        output, status = self._run(command)
                        pending += output
                    pending += prompt
                elif ch == b"\x04":  # Ctrl-D / end of input
                    if not line:
                        finished = True
                        break
                elif ch == b"\x03":  # Ctrl-C
                    line.clear()
                    pending += b"^C\n" + prompt
                elif ch in (b"\x7f", b"\x08"):
                    if line:
                        line.pop()
                        if pty:
                            pending += b"\b \b"
                else:
                    line += ch
                    if pty:
                        pending += ch
        if not flush():
            return
        if v2:
            stream.write(shell_packet(SHELL_EXIT, bytes([status & 0xFF])))

    def _sync(self, stream: _Stream) -> None:
        session = SyncSession(self.phone)
        while not session.closed:
            data = stream.read()
            if data is None:
                return
            with self._lock:
                state = self.device_state()
                replies = session.feed(data) if state == "ok" else None
            if replies is None:
                raise _Dropped()
            if replies and not stream.write(b"".join(replies)):
                return

    def _open_tcp(self, arg: str) -> Callable[[_Stream], None] | None:
        host, _, port_text = arg.rpartition(":")
        try:
            port = int(port_text)
        except ValueError:
            return None
        try:
            sock = socket.create_connection((host or "127.0.0.1", port), timeout=5.0)
        except OSError:
            return None
        sock.settimeout(None)
        return lambda s: self._pipe(s, sock)

    def _pipe(self, stream: _Stream, sock: socket.socket) -> None:
        def pump_out() -> None:
            try:
                while True:
                    data = sock.recv(65536)
                    if not data or not stream.write(data):
                        break
            except OSError:
                pass
            stream.close()

        outward = threading.Thread(target=pump_out, name="sim-adbd-tcp-out", daemon=True)
        outward.start()
        try:
            while True:
                data = stream.read()
                if data is None:
                    break
                if data:
                    sock.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            outward.join(timeout=5.0)
            with contextlib.suppress(OSError):
                sock.close()

    def _reboot(self, stream: _Stream) -> None:
        stream.close()
        self.reboot()


def serve(target: Any, host: str = "127.0.0.1", port: int = 5555, console_port: int | None = None,
          **kwargs: Any) -> SimAdbd:
    """Start a :class:`SimAdbd` for ``target`` and return it (running in background threads)."""
    return SimAdbd(target, host=host, port=port, console_port=console_port, **kwargs).start()


__all__ = ["DEFAULT_ADB_SERVER_PORT", "SimAdbd", "bind_port_pair", "free_port", "serve"]
