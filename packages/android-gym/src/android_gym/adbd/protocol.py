"""The adb transport protocol's wire format: 24-byte message headers, payloads, banners and shell-protocol packets.

Every message is six little-endian u32 (command, arg0, arg1, payload length, payload byte sum,
command ^ 0xffffffff) followed by the payload. Since protocol version 0x01000001 the byte sum is
no longer checked, and Debian's adb 29 sends 0, so incoming sums are accepted as they come.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

A_SYNC = 0x434E5953
A_CNXN = 0x4E584E43
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_AUTH = 0x48545541
A_STLS = 0x534C5453

COMMAND_NAMES = {A_SYNC: "SYNC", A_CNXN: "CNXN", A_OPEN: "OPEN", A_OKAY: "OKAY", A_CLSE: "CLSE",
                 A_WRTE: "WRTE", A_AUTH: "AUTH", A_STLS: "STLS"}

A_VERSION = 0x01000001
MAX_PAYLOAD = 256 * 1024  # what we advertise; the host's CNXN may lower it (never raise it)
MAX_PAYLOAD_LIMIT = 1024 * 1024  # the largest payload we accept from a host (adb's own MAX_PAYLOAD)
HEADER = struct.Struct("<6I")

# The shell protocol (``shell,v2``): [id:u8][length:u32le][data]
SHELL_STDIN = 0
SHELL_STDOUT = 1
SHELL_STDERR = 2
SHELL_EXIT = 3
SHELL_CLOSE_STDIN = 4
SHELL_WINDOW_SIZE = 5
SHELL_HEADER = struct.Struct("<BI")

DEFAULT_FEATURES = ("shell_v2", "cmd", "stat_v2", "ls_v2", "fixed_push_mkdir")


class ProtocolError(ValueError):
    """Bytes on the wire are not a valid adb message (bad magic, oversized payload, truncated header)."""


@dataclass(frozen=True)
class Message:
    """One adb message: a command, its two arguments and the payload."""

    command: int
    arg0: int
    arg1: int
    data: bytes = b""

    @property
    def name(self) -> str:
        """The four-letter command name (``"OPEN"``), or its hex value when unknown."""
        return COMMAND_NAMES.get(self.command, f"0x{self.command:08x}")

    def pack(self) -> bytes:
        """Header and payload as sent on the wire (with the byte-sum checksum filled in)."""
        return HEADER.pack(self.command, self.arg0 & 0xFFFFFFFF, self.arg1 & 0xFFFFFFFF, len(self.data),
                           checksum(self.data), self.command ^ 0xFFFFFFFF) + self.data

    def __repr__(self) -> str:
        preview = self.data[:32]
        more = "..." if len(self.data) > 32 else ""
        return f"Message({self.name}, {self.arg0}, {self.arg1}, {preview!r}{more} [{len(self.data)} bytes])"


def checksum(data: bytes) -> int:
    """The header's data check: the byte sum of the payload, mod 2**32."""
    return sum(data) & 0xFFFFFFFF


def parse_header(header: bytes, max_payload: int = MAX_PAYLOAD_LIMIT) -> tuple[int, int, int, int]:
    """(command, arg0, arg1, payload length) from a 24-byte header; ProtocolError when it is not valid."""
    if len(header) != HEADER.size:
        raise ProtocolError(f"adb header must be {HEADER.size} bytes, got {len(header)}")
    command, arg0, arg1, length, _check, magic = HEADER.unpack(header)
    if magic != command ^ 0xFFFFFFFF:
        raise ProtocolError(f"bad magic 0x{magic:08x} for command 0x{command:08x}")
    if command not in COMMAND_NAMES:
        raise ProtocolError(f"unknown adb command 0x{command:08x}")
    if length > max_payload:
        raise ProtocolError(f"payload of {length} bytes exceeds the {max_payload}-byte limit")
    return command, arg0, arg1, length


def recv_exact(sock: socket.socket, n: int) -> bytes:
    """Exactly ``n`` bytes from ``sock``; ConnectionError when the peer closes first."""
    chunks: list[bytes] = []
    remaining = n
    while remaining:
        chunk = sock.recv(min(remaining, 1 << 20))
        if not chunk:
            raise ConnectionError(f"connection closed with {remaining} of {n} bytes unread")
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def read_message(sock: socket.socket, max_payload: int = MAX_PAYLOAD_LIMIT) -> Message:
    """Read one whole message from a socket (blocking)."""
    command, arg0, arg1, length = parse_header(recv_exact(sock, HEADER.size), max_payload)
    data = recv_exact(sock, length) if length else b""
    return Message(command, arg0, arg1, data)


def parse_banner(data: bytes) -> tuple[str, dict[str, str], list[str]]:
    """Split a CNXN banner ``kind:serial:k=v;k=v;features=a,b`` into (kind, properties, features)."""
    text = data.rstrip(b"\0").decode("utf-8", "replace")
    kind, _, rest = text.partition(":")
    _serial, _, props_text = rest.partition(":")
    props: dict[str, str] = {}
    for item in props_text.split(";"):
        key, sep, value = item.partition("=")
        if sep:
            props[key] = value
    features = [f for f in props.pop("features", "").split(",") if f]
    return kind, props, features


def device_banner(props: Mapping[str, str], features: Iterable[str] = DEFAULT_FEATURES) -> bytes:
    """The banner a device answers CNXN with: ``device::ro.product.name=...;...;features=...``."""
    for key, value in props.items():
        if any(c in f"{key}{value}" for c in ";=\0"):
            raise ValueError(f"banner property {key}={value!r} may not contain ';', '=' or NUL")
    parts = [f"{k}={v}" for k, v in props.items()]
    parts.append("features=" + ",".join(features))
    return ("device::" + ";".join(parts)).encode()


def shell_packet(packet_id: int, data: bytes) -> bytes:
    """One shell-protocol packet."""
    return SHELL_HEADER.pack(packet_id, len(data)) + data


class ShellPacketReader:
    """Reassembles shell-protocol packets from stream bytes that may arrive split anywhere."""

    def __init__(self) -> None:
        self._buf = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        """Add bytes; return the (id, data) packets now complete."""
        self._buf += data
        out: list[tuple[int, bytes]] = []
        while len(self._buf) >= SHELL_HEADER.size:
            packet_id, length = SHELL_HEADER.unpack_from(self._buf)
            end = SHELL_HEADER.size + length
            if len(self._buf) < end:
                break
            out.append((packet_id, bytes(self._buf[SHELL_HEADER.size:end])))
            del self._buf[:end]
        return out


def parse_service(service: str) -> tuple[str, dict[str, str], str]:
    """Split ``shell,v2,TERM=xterm,raw:CMD`` into ("shell", {"v2": "", "TERM": "xterm", "raw": ""}, "CMD").

    Services without a colon (``reboot``) give an empty argument.
    """
    head, _, arg = service.partition(":")
    name, *options = head.split(",")
    opts: dict[str, str] = {}
    for option in options:
        key, _, value = option.partition("=")
        opts[key] = value
    return name, opts, arg
