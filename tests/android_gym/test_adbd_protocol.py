"""The simulated adbd at the wire level, without the adb binary: framing, flow control, services, sync, console."""

from __future__ import annotations

import errno
import socket
import stat
import struct
import threading
import time

import pytest

from android_gym.adbd import SimAdbd
from android_gym.adbd.console import ensure_token
from android_gym.adbd.protocol import (
    A_CLSE,
    A_CNXN,
    A_OKAY,
    A_OPEN,
    A_VERSION,
    A_WRTE,
    SHELL_EXIT,
    SHELL_STDOUT,
    Message,
    ProtocolError,
    ShellPacketReader,
    device_banner,
    parse_banner,
    parse_header,
    parse_service,
    read_message,
    shell_packet,
)
from android_gym.adbd.sync import DENT_V1, DENT_V2, REQUEST, STAT_V1, STAT_V2, SYNC_DATA_MAX, SyncSession
from android_gym.sim import SimDevice, SimPhone


@pytest.fixture(scope="module")
def phone() -> SimPhone:
    return SimPhone()


class RawHost:
    """A minimal adb host written against the protocol, to check what the device sends byte by byte."""

    def __init__(self, port: int, maxdata: int = 256 * 1024, auto_okay: bool = True):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        self.maxdata = maxdata
        self.auto_okay = auto_okay
        self.next_id = 100

    def send(self, message: Message) -> None:
        self.sock.sendall(message.pack())

    def recv(self) -> Message:
        return read_message(self.sock)

    def connect(self) -> Message:
        self.send(Message(A_CNXN, A_VERSION, self.maxdata, b"host::features=shell_v2,cmd,stat_v2\0"))
        return self.recv()

    def open(self, service: str) -> tuple[int, Message]:
        self.next_id += 1
        self.send(Message(A_OPEN, self.next_id, 0, service.encode() + b"\0"))
        return self.next_id, self.recv()

    def collect(self, local: int, remote: int) -> tuple[bytes, list[int]]:
        """Read WRTEs until CLSE, acknowledging each; returns the data and every WRTE size."""
        data, sizes = bytearray(), []
        while True:
            message = self.recv()
            if message.command == A_CLSE:
                return bytes(data), sizes
            assert message.command == A_WRTE, message
            assert (message.arg0, message.arg1) == (remote, local)
            data += message.data
            sizes.append(len(message.data))
            self.send(Message(A_OKAY, local, remote))

    def close(self) -> None:
        self.sock.close()


@pytest.fixture()
def adbd(phone: SimPhone):
    with SimAdbd(SimDevice(phone)) as server:
        yield server


# --- framing -------------------------------------------------------------------------------------

def test_message_round_trip_and_checksum():
    message = Message(A_WRTE, 7, 9, b"\x00\xffhello")
    raw = message.pack()
    assert len(raw) == 24 + 7
    command, arg0, arg1, length = parse_header(raw[:24])
    assert (command, arg0, arg1, length) == (A_WRTE, 7, 9, 7)
    assert struct.unpack_from("<I", raw, 16)[0] == sum(b"\x00\xffhello")
    assert struct.unpack_from("<I", raw, 20)[0] == A_WRTE ^ 0xFFFFFFFF


def test_bad_headers_are_rejected_with_reasons():
    good = Message(A_OKAY, 1, 2).pack()
    with pytest.raises(ProtocolError, match="magic"):
        parse_header(good[:20] + b"\0\0\0\0")
    with pytest.raises(ProtocolError, match="24 bytes"):
        parse_header(good[:10])
    big = struct.pack("<6I", A_WRTE, 1, 2, 10_000_000, 0, A_WRTE ^ 0xFFFFFFFF)
    with pytest.raises(ProtocolError, match="exceeds"):
        parse_header(big)


def test_banner_and_service_parsing():
    banner = device_banner({"ro.product.name": "oriole", "ro.product.model": "Pixel 6"}, ["shell_v2", "cmd"])
    assert banner == b"device::ro.product.name=oriole;ro.product.model=Pixel 6;features=shell_v2,cmd"
    kind, props, features = parse_banner(banner + b"\0")
    assert kind == "device" and props["ro.product.model"] == "Pixel 6" and features == ["shell_v2", "cmd"]
    with pytest.raises(ValueError, match="may not contain"):
        device_banner({"ro.product.name": "a;b"})
    assert parse_service("shell,v2,TERM=xterm-256color,raw:echo a:b") == (
        "shell", {"v2": "", "TERM": "xterm-256color", "raw": ""}, "echo a:b")
    assert parse_service("reboot:") == ("reboot", {}, "")
    assert parse_service("sync:") == ("sync", {}, "")


def test_shell_packets_reassemble_across_arbitrary_splits():
    stream = shell_packet(SHELL_STDOUT, b"hello") + shell_packet(SHELL_EXIT, b"\x03")
    for cut in range(len(stream) + 1):
        reader = ShellPacketReader()
        packets = reader.feed(stream[:cut]) + reader.feed(stream[cut:])
        assert packets == [(SHELL_STDOUT, b"hello"), (SHELL_EXIT, b"\x03")]


# --- sync state machine ---------------------------------------------------------------------------

def _req(ident: bytes, payload: bytes) -> bytes:
    return REQUEST.pack(ident, len(payload)) + payload


def test_sync_send_then_recv_round_trip_with_requests_split_byte_by_byte():
    phone = SimPhone(apps=[])
    session = SyncSession(phone)
    payload = bytes(range(256)) * 700  # 179200 bytes: three DATA chunks
    wire = _req(b"SEND", b"/sdcard/Download/blob.bin,33206")
    for i in range(0, len(payload), SYNC_DATA_MAX):
        wire += _req(b"DATA", payload[i:i + SYNC_DATA_MAX])
    wire += REQUEST.pack(b"DONE", 1_700_000_000)
    replies = []
    for i in range(64):  # worst case first: one byte per WRTE
        replies += session.feed(wire[i:i + 1])
    replies += session.feed(wire[64:])
    assert replies == [REQUEST.pack(b"OKAY", 0)]
    assert phone.files.read("/sdcard/Download/blob.bin") == payload

    out = b"".join(session.feed(_req(b"RECV", b"/sdcard/Download/blob.bin")))
    data, pos, sizes = bytearray(), 0, []
    while True:
        ident, length = REQUEST.unpack_from(out, pos)
        pos += 8
        if ident == b"DONE":
            break
        assert ident == b"DATA"
        sizes.append(length)
        data += out[pos:pos + length]
        pos += length
    assert bytes(data) == payload and max(sizes) <= SYNC_DATA_MAX and pos == len(out)


def test_sync_stat_list_and_errors():
    phone = SimPhone(apps=[])
    phone.files.write("/sdcard/notes/a.txt", b"12345")
    session = SyncSession(phone)
    st = STAT_V1.unpack(b"".join(session.feed(_req(b"STAT", b"/sdcard/notes/a.txt"))))
    assert st[0] == b"STAT" and stat.S_ISREG(st[1]) and st[2] == 5
    assert STAT_V1.unpack(b"".join(session.feed(_req(b"STAT", b"/nope"))))[1:] == (0, 0, 0)
    v2 = STAT_V2.unpack(b"".join(session.feed(_req(b"STA2", b"/sdcard/notes"))))
    assert v2[0] == b"STA2" and v2[1] == 0 and stat.S_ISDIR(v2[4])
    assert STAT_V2.unpack(b"".join(session.feed(_req(b"LST2", b"/sdcard/none"))))[1] == errno.ENOENT
    assert STAT_V2.unpack(b"".join(session.feed(_req(b"LST2", b"/sdcard/notes/a.txt/x"))))[1] == errno.ENOTDIR

    listing = b"".join(session.feed(_req(b"LIST", b"/sdcard/notes")))
    names, pos = [], 0
    while True:
        ident, mode, size, _mtime, namelen = DENT_V1.unpack_from(listing, pos)
        pos += DENT_V1.size
        if ident == b"DONE":
            break
        names.append((listing[pos:pos + namelen].decode(), size))
        pos += namelen
    assert names == [(".", 4096), ("..", 4096), ("a.txt", 5)]
    listing2 = b"".join(session.feed(_req(b"LIS2", b"/sdcard/notes")))
    assert listing2.endswith(b"DONE" + bytes(DENT_V2.size - 4)) and b"a.txt" in listing2

    failed = b"".join(session.feed(_req(b"RECV", b"/sdcard/missing.txt")))
    assert failed.startswith(b"FAIL") and b"No such file or directory" in failed
    assert not session.closed
    assert b"".join(session.feed(_req(b"XXXX", b"/"))).startswith(b"FAIL")
    assert session.closed


def test_sync_push_onto_a_directory_fails_and_quit_closes():
    phone = SimPhone(apps=[])
    session = SyncSession(phone)
    reply = b"".join(session.feed(_req(b"SEND", b"/sdcard/Download,33206") + _req(b"DATA", b"x")
                                  + REQUEST.pack(b"DONE", 0)))
    assert reply.startswith(b"FAIL") and b"Is a directory" in reply
    quitting = SyncSession(phone)
    assert quitting.feed(REQUEST.pack(b"QUIT", 0)) == [] and quitting.closed
    too_long = SyncSession(phone)
    assert b"path too long" in b"".join(too_long.feed(REQUEST.pack(b"STAT", 5000)))


# --- the transport over a socket ------------------------------------------------------------------

def test_cnxn_banner_and_maxdata(adbd: SimAdbd):
    host = RawHost(adbd.port, maxdata=4096)
    reply = host.connect()
    assert reply.command == A_CNXN and reply.arg0 == A_VERSION
    kind, props, features = parse_banner(reply.data)
    assert kind == "device"
    assert props == {"ro.product.name": "oriole", "ro.product.model": "Pixel 6", "ro.product.device": "oriole"}
    assert {"shell_v2", "cmd", "stat_v2"} <= set(features)
    host.close()


def test_writes_respect_the_smaller_maxdata_and_wait_for_okay(adbd: SimAdbd, phone: SimPhone):
    blob = bytes(range(256)) * 400  # 102400 bytes, binary
    phone.files.write("/sdcard/blob.bin", blob)
    host = RawHost(adbd.port, maxdata=4096)
    host.connect()
    local, reply = host.open("exec:cat /sdcard/blob.bin")
    assert reply.command == A_OKAY and reply.arg1 == local
    remote = reply.arg0
    first = host.recv()
    assert first.command == A_WRTE and len(first.data) == 4096
    host.sock.settimeout(0.3)
    with pytest.raises(TimeoutError):  # no second WRTE before our OKAY
        host.recv()
    host.sock.settimeout(5)
    host.send(Message(A_OKAY, local, remote))
    rest, sizes = host.collect(local, remote)
    assert first.data + rest == blob
    assert max(sizes) <= 4096
    host.close()


def test_every_host_write_is_acknowledged_and_unknown_services_are_closed(adbd: SimAdbd):
    host = RawHost(adbd.port)
    host.connect()
    local, reply = host.open("jdwp:1234")
    assert reply.command == A_CLSE and reply.arg0 == 0 and reply.arg1 == local
    local, reply = host.open("shell,v2,pty:")
    assert reply.command == A_OKAY
    remote = reply.arg0
    prompt = host.recv()
    assert prompt.command == A_WRTE and prompt.data.startswith(bytes([SHELL_STDOUT]))
    host.send(Message(A_OKAY, local, remote))
    reader = ShellPacketReader()
    seen = b""
    for piece in (b"ech", b"o hi\r"):
        host.send(Message(A_WRTE, local, remote, shell_packet(0, piece)))
        ack = host.recv()  # the acknowledgement comes before anything the write causes
        assert (ack.command, ack.arg0, ack.arg1) == (A_OKAY, remote, local)
        echo = host.recv()
        assert echo.command == A_WRTE
        seen += b"".join(d for _i, d in reader.feed(echo.data))
        host.send(Message(A_OKAY, local, remote))
    while b"hi\r\n" not in seen:
        message = host.recv()
        assert message.command == A_WRTE
        seen += b"".join(d for _i, d in reader.feed(message.data))
        host.send(Message(A_OKAY, local, remote))
    assert seen.startswith(b"echo hi\r\nhi\r\n")  # pty mode echoes the typed line
    host.send(Message(A_WRTE, local, remote, shell_packet(0, b"exit\r")))
    packets = []
    while True:
        message = host.recv()
        if message.command == A_CLSE:
            break
        if message.command == A_WRTE:
            packets += reader.feed(message.data)
            host.send(Message(A_OKAY, local, remote))
    assert packets[-1] == (SHELL_EXIT, b"\x00")
    host.close()


def test_shell_v2_carries_output_and_exit_status(adbd: SimAdbd):
    host = RawHost(adbd.port, maxdata=1024)
    host.connect()
    local, reply = host.open("shell,v2,raw:getprop ro.product.model; nosuchtool")
    data, sizes = host.collect(local, reply.arg0)
    packets = ShellPacketReader().feed(data)
    stdout = b"".join(d for i, d in packets if i == SHELL_STDOUT)
    assert stdout.startswith(b"Pixel 6\n") and b"nosuchtool: inaccessible or not found" in stdout
    assert packets[-1] == (SHELL_EXIT, bytes([127]))
    assert max(sizes) <= 1024
    host.close()


def test_several_streams_interleave_on_one_connection(adbd: SimAdbd):
    host = RawHost(adbd.port)
    host.connect()
    words = {}
    for word in ("alpha", "beta", "gamma"):
        host.next_id += 1
        words[host.next_id] = word
        host.send(Message(A_OPEN, host.next_id, 0, f"shell:echo {word}".encode() + b"\0"))
    received: dict[int, bytes] = {local: b"" for local in words}
    open_streams = set(words)
    while open_streams:
        message = host.recv()
        if message.command == A_WRTE:
            received[message.arg1] += message.data
            host.send(Message(A_OKAY, message.arg1, message.arg0))
        elif message.command == A_CLSE:
            open_streams.discard(message.arg1)
        else:
            assert message.command == A_OKAY and message.arg1 in words
    assert {words[k]: v for k, v in received.items()} == {"alpha": b"alpha\n", "beta": b"beta\n", "gamma": b"gamma\n"}
    host.close()


def test_stop_closes_connections_and_releases_the_port(phone: SimPhone):
    server = SimAdbd(phone).start()
    host = RawHost(server.port)
    host.connect()
    assert server.connections == 1
    t0 = time.monotonic()
    server.stop()
    assert time.monotonic() - t0 < 1.0
    host.sock.settimeout(2)
    assert host.sock.recv(1) == b""
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", server.port)) != 0


def test_constructor_rejects_bad_arguments(phone: SimPhone):
    with pytest.raises(TypeError, match="SimDevice or SimPhone"):
        SimAdbd("not a phone")
    with pytest.raises(ValueError, match="max_payload"):
        SimAdbd(phone, max_payload=10)
    with pytest.raises(ValueError, match="port"):
        SimAdbd(phone, port=70000)


# --- console over a raw socket ---------------------------------------------------------------------

def _console_exchange(port: int, lines: list[str]) -> str:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall("".join(line + "\r\n" for line in lines).encode() + b"quit\r\n")
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out.decode()
            out += chunk


def test_console_requires_auth_and_maps_snapshots(tmp_path, phone: SimPhone):
    token_file = tmp_path / "token"
    with SimAdbd(phone, console_port=0, auth_token_path=token_file) as server:
        token = token_file.read_text().strip()
        assert token and token == ensure_token(token_file)
        refused = _console_exchange(server.console_port, ["avd name", "auth wrong"])
        assert "Authentication required" in refused and "KO: unknown command" in refused
        assert "KO: authentication token does not match" in refused
        phone.shell("settings put global wifi_on 0")
        out = _console_exchange(server.console_port, [f"auth {token}", "avd snapshot save wifi_off", "ping",
                                                      "avd name", "avd snapshot list"])
        assert "I am alive!" in out and "Pixel_6_API_33\r\nOK" in out and "wifi_off" in out
        assert "wifi_off" in phone.snapshot_list()
        phone.shell("settings put global wifi_on 1")
        out = _console_exchange(server.console_port, [f"auth {token}", "avd snapshot load wifi_off",
                                                      "avd snapshot load missing", "avd snapshot delete wifi_off",
                                                      "avd frobnicate", "help"])
        assert phone.shell("settings get global wifi_on").strip() == "0"
        assert "KO: snapshot 'missing' does not exist" in out and "KO: unknown avd sub-command" in out
        assert "wifi_off" not in phone.snapshot_list()
        assert "avd" in out and out.count("OK\r\n") >= 4


def test_console_without_token_and_kill(tmp_path):
    token_file = tmp_path / "empty_token"
    token_file.write_text("")
    server = SimAdbd(SimPhone(apps=[]), port=0, console_port=0, auth_token_path=token_file, announce=False)
    with server:
        assert server.console_port == server.port - 1 and server.emulator_mode
        out = _console_exchange(server.console_port, ["avd status"])
        assert out.startswith("Android Console: type 'help'") and "virtual device is running" in out
        done = threading.Event()
        with socket.create_connection(("127.0.0.1", server.console_port), timeout=5) as s:
            s.sendall(b"kill\n")
            data = b""
            while chunk := s.recv(4096):
                data += chunk
            done.set()
        assert b"OK: killing emulator, bye bye" in data
        assert server.killed and server.device.closed and server.device_state() == "closed"
