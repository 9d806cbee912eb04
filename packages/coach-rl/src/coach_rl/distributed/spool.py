"""A folder of finished episodes not yet acknowledged by the learner, written atomically one file each.

The RayCollector spools each episode as its ``(trajectory, records)`` pair.

The driver spools every trajectory the moment it arrives from a worker (temporary file, fsync, rename), before
anything else looks at it; :meth:`TrajectorySpool.acknowledge` deletes the files once the learner has them for
good (after its checkpoint). A driver killed with ``kill -9`` and started again on the same folder delivers the
spooled trajectories first, so no finished trajectory is ever lost.
"""

from __future__ import annotations

import os
import pickle
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["TrajectorySpool"]

_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


class TrajectorySpool:
    """Pickled trajectories under ``directory``, one ``<uid>.pkl`` each, in arrival order."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        """Create the folder when missing; leftover temporary files of a killed writer are removed."""
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        for tmp in self.directory.glob("*.tmp"):
            tmp.unlink(missing_ok=True)

    def _path(self, uid: str) -> Path:
        if not _NAME.match(uid):
            raise ValueError(f"a spool id must be letters, digits, '_', '-' or '.', got {uid!r}")
        return self.directory / f"{uid}.pkl"

    def put(self, uid: str, trajectory: Any) -> Path:
        """Write ``trajectory`` under ``uid`` atomically and durably (the file is complete or absent)."""
        path = self._path(uid)
        tmp = path.with_suffix(".tmp")
        with tmp.open("wb") as f:
            pickle.dump(trajectory, f, protocol=pickle.HIGHEST_PROTOCOL)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fd = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return path

    def pending(self) -> list[tuple[str, Any]]:
        """Every spooled ``(uid, trajectory)`` not yet acknowledged, oldest first."""
        files = sorted(self.directory.glob("*.pkl"), key=lambda p: (p.stat().st_mtime_ns, p.name))
        out = []
        for path in files:
            with path.open("rb") as f:
                out.append((path.stem, pickle.load(f)))
        return out

    def acknowledge(self, uids: Iterable[str]) -> int:
        """Delete the files of ``uids`` (the learner holds them now); returns how many were removed."""
        removed = 0
        for uid in uids:
            path = self._path(uid)
            if path.exists():
                path.unlink()
                removed += 1
        return removed

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*.pkl"))
