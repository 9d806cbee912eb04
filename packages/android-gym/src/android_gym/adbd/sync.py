"""The ``sync:`` service (``adb push``/``pull``/``ls``) over the simulated phone's in-memory file system.

``SyncSession`` is a byte-level state machine: the transport feeds it whatever the host wrote
(requests may be split over several WRTE messages, or several requests may share one) and sends
back the bytes it returns. Requests are 8-byte headers (id, length) followed by a path or data:
STAT / LST2 / STA2 (file status), LIST / LIS2 (directory entries), RECV (pull: DATA chunks of at
most 64 KiB then DONE), SEND (push: ``path,mode``, then DATA chunks and DONE carrying the mtime,
answered OKAY or FAIL), QUIT.
"""

from __future__ import annotations

import datetime as _dt
import errno
import posixpath
import stat as _stat
import struct
import zlib
from typing import Any

from android_gym.sim.files import FileSystemError

ID_STAT = b"STAT"
ID_STAT_V2 = b"STA2"
ID_LSTAT_V2 = b"LST2"
ID_LIST = b"LIST"
ID_LIST_V2 = b"LIS2"
ID_DENT = b"DENT"
ID_DENT_V2 = b"DNT2"
ID_SEND = b"SEND"
ID_RECV = b"RECV"
ID_DONE = b"DONE"
ID_DATA = b"DATA"
ID_OKAY = b"OKAY"
ID_FAIL = b"FAIL"
ID_QUIT = b"QUIT"

SYNC_DATA_MAX = 64 * 1024
MAX_PATH = 1024
REQUEST = struct.Struct("<4sI")
STAT_V1 = struct.Struct("<4sIII")
STAT_V2 = struct.Struct("<4sIQQIIIIQqqq")
DENT_V1 = struct.Struct("<4sIIII")
DENT_V2 = struct.Struct("<4sIQQIIIIQqqqI")

_EPOCH_AT_START: int | None = None
SDCARD_GID = 9997  # "everybody", as on emulated storage


def _epoch_at_start() -> int:
    global _EPOCH_AT_START
    if _EPOCH_AT_START is None:
        from android_gym.sim.constants import START_TIME

        _EPOCH_AT_START = int((START_TIME - _dt.datetime(1970, 1, 1)).total_seconds())
    return _EPOCH_AT_START


class FileStat:
    """What ``stat`` reports for one simulated path (mode, size, mtime in Unix seconds, ...)."""

    __slots__ = ("error", "mode", "size", "mtime", "ino", "nlink", "uid", "gid")

    def __init__(self, error: int = 0, mode: int = 0, size: int = 0, mtime: int = 0, ino: int = 0,
                 nlink: int = 0, uid: int = 0, gid: int = 0):
        self.error, self.mode, self.size, self.mtime = error, mode, size, mtime
        self.ino, self.nlink, self.uid, self.gid = ino, nlink, uid, gid


def stat_path(phone: Any, path: str) -> FileStat:
    """The status of ``path`` on the phone's file system (``error`` is an errno when it is missing)."""
    fs = phone.files
    try:
        full = fs.norm(path)
    except FileSystemError:
        return FileStat(error=errno.ENOENT)
    on_sdcard = full == "/sdcard" or full.startswith("/sdcard/")
    ino = zlib.crc32(full.encode()) or 1
    when = _epoch_at_start() + fs.mtimes.get(full, 0) // 1000
    if full in fs.dirs:
        mode = (_stat.S_IFDIR | 0o771) if on_sdcard else (_stat.S_IFDIR | 0o755)
        return FileStat(mode=mode, size=4096, mtime=when, ino=ino, nlink=2, gid=SDCARD_GID if on_sdcard else 0)
    if full in fs.files:
        mode = (_stat.S_IFREG | 0o660) if on_sdcard else (_stat.S_IFREG | 0o644)
        size = len(fs.read(full)) if full in fs.generated else len(fs.files[full])  # databases are built on read
        return FileStat(mode=mode, size=size, mtime=when, ino=ino, nlink=1,
                        gid=SDCARD_GID if on_sdcard else 0)
    parent = posixpath.dirname(full)
    if parent in fs.files:
        return FileStat(error=errno.ENOTDIR)
    return FileStat(error=errno.ENOENT)


def fail(message: str) -> bytes:
    """A FAIL reply carrying ``message``."""
    raw = message.encode()
    return REQUEST.pack(ID_FAIL, len(raw)) + raw


class SyncSession:
    """One ``sync:`` stream's state: feed it host bytes, send back what it returns; ``closed`` after QUIT or FAIL.

    ``phone`` needs ``files`` (a :class:`~android_gym.sim.files.FileSystem`), ``clock_ms`` and
    ``invalidate()``; it is read afresh on every request because snapshot loads replace ``files``.
    """

    def __init__(self, phone: Any):
        self.phone = phone
        self._buf = bytearray()
        self._send_path: str | None = None
        self._send_data: list[bytes] = []
        self.closed = False

    def feed(self, data: bytes) -> list[bytes]:
        """Consume host bytes; return the reply chunks (in order) produced by every complete request."""
        self._buf += data
        out: list[bytes] = []
        while not self.closed and len(self._buf) >= REQUEST.size:
            ident, length = REQUEST.unpack_from(self._buf)
            if self._send_path is not None:
                if not self._take_send_message(ident, length, out):
                    break
                continue
            if ident == ID_QUIT:
                del self._buf[:REQUEST.size]
                self.closed = True
                break
            if length > MAX_PATH:
                out.append(fail("path too long"))
                self.closed = True
                break
            if len(self._buf) < REQUEST.size + length:
                break
            path = bytes(self._buf[REQUEST.size:REQUEST.size + length]).decode("utf-8", "replace")
            del self._buf[:REQUEST.size + length]
            self._request(ident, path, out)
        return out

    # --- requests -------------------------------------------------------------------------------
    def _request(self, ident: bytes, path: str, out: list[bytes]) -> None:
        if ident == ID_STAT:
            st = stat_path(self.phone, path)
            out.append(STAT_V1.pack(ID_STAT, st.mode, min(st.size, 0xFFFFFFFF), st.mtime & 0xFFFFFFFF))
        elif ident in (ID_STAT_V2, ID_LSTAT_V2):
            st = stat_path(self.phone, path)
            out.append(STAT_V2.pack(ident, st.error, 0 if st.error else 0xFD00, st.ino, st.mode, st.nlink, st.uid,
                                    st.gid, st.size, st.mtime, st.mtime, st.mtime))
        elif ident in (ID_LIST, ID_LIST_V2):
            out.extend(self._list(path, v2=ident == ID_LIST_V2))
        elif ident == ID_RECV:
            out.extend(self._recv(path))
        elif ident == ID_SEND:
            spec, comma, mode_text = path.rpartition(",")
            if not comma:
                out.append(fail("missing , in ID_SEND"))
                self.closed = True
                return
            try:
                int(mode_text)
            except ValueError:
                out.append(fail("bad mode"))
                self.closed = True
                return
            self._send_path = spec
            self._send_data = []
        else:
            out.append(fail(f"unknown command {int.from_bytes(ident, 'little'):08x}"))
            self.closed = True

    def _list(self, path: str, v2: bool) -> list[bytes]:
        fs = self.phone.files
        out: list[bytes] = []
        try:
            full = fs.norm(path)
        except FileSystemError:
            full = ""
        if full in fs.dirs:
            for name in [".", "..", *fs.listdir(full)]:
                child = full if name == "." else (posixpath.dirname(full) or "/") if name == ".." else \
                    posixpath.join(full, name)
                st = stat_path(self.phone, child)
                raw = name.encode()
                if v2:
                    out.append(DENT_V2.pack(ID_DENT_V2, st.error, 0xFD00, st.ino, st.mode, st.nlink, st.uid, st.gid,
                                            st.size, st.mtime, st.mtime, st.mtime, len(raw)) + raw)
                elif not st.error:
                    out.append(DENT_V1.pack(ID_DENT, st.mode, min(st.size, 0xFFFFFFFF), st.mtime & 0xFFFFFFFF,
                                            len(raw)) + raw)
        done = DENT_V2 if v2 else DENT_V1
        out.append(ID_DONE + bytes(done.size - 4))
        return out

    def _recv(self, path: str) -> list[bytes]:
        fs = self.phone.files
        try:
            data = fs.read(path)
        except FileSystemError as exc:
            reason = "Is a directory" if "Is a directory" in str(exc) else "No such file or directory"
            return [fail(f"open failed: {reason}")]
        out = [REQUEST.pack(ID_DATA, len(data[i:i + SYNC_DATA_MAX])) + data[i:i + SYNC_DATA_MAX]
               for i in range(0, len(data), SYNC_DATA_MAX)]
        out.append(REQUEST.pack(ID_DONE, 0))
        return out

    def _take_send_message(self, ident: bytes, length: int, out: list[bytes]) -> bool:
        """Handle one DATA/DONE message of a SEND in progress; False when more bytes are needed."""
        if ident == ID_DATA:
            if length > SYNC_DATA_MAX:
                out.append(fail("oversize data message"))
                self.closed = True
                return True
            if len(self._buf) < REQUEST.size + length:
                return False
            self._send_data.append(bytes(self._buf[REQUEST.size:REQUEST.size + length]))
            del self._buf[:REQUEST.size + length]
            return True
        del self._buf[:REQUEST.size]
        path, self._send_path = self._send_path, None
        if ident != ID_DONE:
            out.append(fail("invalid data message: expected ID_DONE"))
            self.closed = True
            return True
        assert path is not None
        try:
            self.phone.files.write(path, b"".join(self._send_data), self.phone.clock_ms)
            self.phone.file_changed(path)  # an app whose database was pushed reloads it
        except FileSystemError as exc:
            reason = str(exc).rsplit(": ", 1)[-1]
            out.append(fail(f"couldn't create file: {reason}"))
            self.closed = True
            return True
        finally:
            self._send_data = []
        out.append(REQUEST.pack(ID_OKAY, 0))
        return True
