"""The simulated phone's in-memory file system (/sdcard and app data), plain data so snapshots copy it.

Paths are absolute POSIX paths; ``/sdcard`` is an alias of ``/storage/emulated/0`` as on Android, and of
``/data/media/0``, the folder behind shared storage that root sees (AndroidWorld reads OsmAnd's files there).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

SDCARD = "/sdcard"
_ALIASES = ("/storage/emulated/0", "/storage/self/primary", "/mnt/sdcard", "/data/media/0")
DEFAULT_DIRS = ("/", "/sdcard", "/sdcard/Download", "/sdcard/Documents", "/sdcard/DCIM", "/sdcard/Pictures",
                "/sdcard/Music", "/sdcard/Movies", "/sdcard/Alarms", "/sdcard/Audiobooks", "/sdcard/Notifications",
                "/sdcard/Podcasts", "/sdcard/Recordings", "/sdcard/Ringtones", "/sdcard/Android",
                "/sdcard/Android/data", "/data", "/data/data", "/data/local", "/data/local/tmp", "/system",
                "/system/bin")
"""The folders of a fresh phone: Android 13's public folders of the shared storage (as the AndroidWorld emulator's
Files lists them), then the system's."""


class FileSystemError(OSError):
    """A file operation failed; the message reads like the shell's (``No such file or directory``)."""


class FileSystem:
    """Files (path -> bytes) and directories (a set of paths); every public method takes absolute paths."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.dirs: set[str] = set(DEFAULT_DIRS)
        self.mtimes: dict[str, int] = {}
        self.generated: dict[str, Callable[[], bytes]] = {}
        """Files whose bytes are built when read (apps' databases); not part of the saved state."""

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["generated"] = {}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.generated = {}

    def generate(self, path: str, build: Callable[[], bytes]) -> None:
        """Serve ``path`` from ``build()`` on every read (it is listed as a file from now on)."""
        p = self.norm(path)
        self.generated[p] = build
        self.mkdir(posixpath.dirname(p))
        self.files.setdefault(p, b"")

    @staticmethod
    def norm(path: str, cwd: str = "/") -> str:
        """Absolute normalised path, mapping /storage/emulated/0 and friends onto /sdcard."""
        if not path:
            raise FileSystemError("empty path")
        full = posixpath.normpath(posixpath.join(cwd, path))
        if full.startswith("//"):
            full = full[1:]
        for alias in _ALIASES:
            if full == alias or full.startswith(alias + "/"):
                full = SDCARD + full[len(alias):]
        return full

    def exists(self, path: str) -> bool:
        """True for an existing file or directory."""
        p = self.norm(path)
        return p in self.files or p in self.dirs

    def is_dir(self, path: str) -> bool:
        """True for an existing directory."""
        return self.norm(path) in self.dirs

    def is_file(self, path: str) -> bool:
        """True for an existing regular file."""
        return self.norm(path) in self.files

    def mkdir(self, path: str, parents: bool = True) -> None:
        """Create a directory (and its parents when ``parents``)."""
        p = self.norm(path)
        if p in self.files:
            raise FileSystemError(f"{path}: File exists")
        parent = posixpath.dirname(p)
        if parent not in self.dirs:
            if not parents:
                raise FileSystemError(f"{path}: No such file or directory")
            self.mkdir(parent, True)
        self.dirs.add(p)

    def write(self, path: str, data: bytes | str, mtime: int = 0, append: bool = False) -> None:
        """Write a file, creating parent directories; ``str`` data is stored as UTF-8."""
        p = self.norm(path)
        if p in self.dirs:
            raise FileSystemError(f"{path}: Is a directory")
        raw = data.encode() if isinstance(data, str) else bytes(data)
        self.mkdir(posixpath.dirname(p))
        self.files[p] = (self.files.get(p, b"") + raw) if append else raw
        self.mtimes[p] = mtime

    def read(self, path: str) -> bytes:
        """File contents as bytes."""
        p = self.norm(path)
        if p in self.dirs:
            raise FileSystemError(f"{path}: Is a directory")
        build = self.generated.get(p)
        if build is not None and p in self.files:
            self.files[p] = build()
        try:
            return self.files[p]
        except KeyError:
            raise FileSystemError(f"{path}: No such file or directory") from None

    def read_text(self, path: str) -> str:
        """File contents decoded as UTF-8 (undecodable bytes replaced)."""
        return self.read(path).decode("utf-8", "replace")

    def listdir(self, path: str) -> list[str]:
        """Sorted names directly inside directory ``path``."""
        p = self.norm(path)
        if p in self.files:
            return [posixpath.basename(p)]
        if p not in self.dirs:
            raise FileSystemError(f"{path}: No such file or directory")
        prefix = p.rstrip("/") + "/"
        names = {q[len(prefix):] for q in self.files if q.startswith(prefix) and "/" not in q[len(prefix):]}
        names |= {q[len(prefix):] for q in self.dirs if q.startswith(prefix) and q != p
                  and "/" not in q[len(prefix):]}
        return sorted(names)

    def remove(self, path: str, recursive: bool = False) -> None:
        """Delete a file, or a directory tree when ``recursive``."""
        p = self.norm(path)
        if p in self.files:
            del self.files[p]
            self.mtimes.pop(p, None)
            return
        if p not in self.dirs:
            raise FileSystemError(f"{path}: No such file or directory")
        if not recursive:
            raise FileSystemError(f"{path}: Is a directory")
        prefix = p.rstrip("/") + "/"
        for q in [q for q in self.files if q.startswith(prefix)]:
            del self.files[q]
            self.mtimes.pop(q, None)
        self.dirs = {d for d in self.dirs if d != p and not d.startswith(prefix)}

    def copy(self, src: str, dst: str) -> None:
        """Copy a file (into ``dst`` when it is a directory)."""
        s, d = self.norm(src), self.norm(dst)
        data = self.read(s)
        if d in self.dirs:
            d = posixpath.join(d, posixpath.basename(s))
        self.write(d, data, self.mtimes.get(s, 0))

    def move(self, src: str, dst: str) -> None:
        """Move a file or directory tree."""
        s, d = self.norm(src), self.norm(dst)
        if d in self.dirs:
            d = posixpath.join(d, posixpath.basename(s))
        if s in self.files:
            self.write(d, self.files.pop(s), self.mtimes.pop(s, 0))
            return
        if s not in self.dirs:
            raise FileSystemError(f"{src}: No such file or directory")
        prefix = s.rstrip("/") + "/"
        for q in [q for q in self.files if q.startswith(prefix)]:
            self.write(d + q[len(s):], self.files.pop(q), self.mtimes.pop(q, 0))
        moved = {x for x in self.dirs if x == s or x.startswith(prefix)}
        self.dirs -= moved
        self.dirs |= {d + x[len(s):] for x in moved}
        self.mkdir(posixpath.dirname(d))

    def copy_tree(self, src: str, dst: str) -> None:
        """Copy directory ``src``'s files and folders into directory ``dst`` (created when missing)."""
        s, d = self.norm(src), self.norm(dst)
        if s not in self.dirs:
            raise FileSystemError(f"{src}: No such file or directory")
        self.mkdir(d)
        prefix = s.rstrip("/") + "/"
        for q in sorted(x for x in self.dirs if x.startswith(prefix)):
            self.mkdir(d + "/" + q[len(prefix):])
        for q in [q for q in self.files if q.startswith(prefix)]:
            self.write(d + "/" + q[len(prefix):], self.files[q], self.mtimes.get(q, 0))

    def walk_files(self, path: str) -> list[str]:
        """All file paths under ``path`` (recursively), sorted."""
        p = self.norm(path)
        prefix = p.rstrip("/") + "/"
        return sorted(q for q in self.files if q.startswith(prefix))
