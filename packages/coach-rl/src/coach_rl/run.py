"""The run folder of a training run: config, metrics log, checkpoints written atomically, and exact resume.

Layout of ``<run>/``::

    config.yaml          the resolved configuration (every key, after overrides)
    metrics.jsonl        one JSON record per line (training iterations, evaluations), appended and fsynced
    checkpoints/         iter-000003/ ... and LATEST (the name of the newest complete checkpoint)
    replay/              the on-disk replay buffer (coach_rl.replay)
    report.md, plots/    written by coach_rl.report

A checkpoint is written into a hidden temporary folder, every file fsynced, a ``MANIFEST.json`` written
last, then the folder is renamed into place (atomic on POSIX) and ``LATEST`` replaced atomically. A
process killed at any moment (``kill -9``) leaves the previous checkpoint intact and at worst a
``.tmp-*`` folder that the next :class:`RunDir` deletes. Older checkpoints beyond ``keep`` are pruned
only after the new one is published.

Exact resume needs, besides model and optimiser states, the random number generators
(:func:`capture_rng_state` / :func:`restore_rng_state`: Python, NumPy's global state, torch CPU and CUDA)
and the replay buffer as it was: :func:`snapshot_replay` hard-links the buffer's (immutable) shards into
the checkpoint, so shards evicted after the checkpoint can be put back by :func:`restore_replay`, and
shards added after it are removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
import yaml

__all__ = [
    "CHECKPOINT_MANIFEST",
    "RunDir",
    "capture_rng_state",
    "fsync_tree",
    "restore_replay",
    "restore_rng_state",
    "snapshot_replay",
]

CHECKPOINT_MANIFEST = "MANIFEST.json"
"""Written last into a checkpoint folder: a folder without it is incomplete and never loaded."""
_LATEST = "LATEST"
_CKPT_RE = re.compile(r"^iter-(\d{6,})$")
_TMP_PREFIX = ".tmp-"
_SHARD_RE = re.compile(r"^(\d{10})-([0-9a-f]{12})\.parquet$")


# -- durability helpers ---------------------------------------------------------------------------------


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def fsync_tree(root: str | os.PathLike[str]) -> None:
    """fsync every file and folder under ``root`` (so a rename after it publishes data that is on disk)."""
    root = Path(root)
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            path = Path(dirpath) / name
            if path.is_symlink():
                continue
            with open(path, "rb") as fh:
                os.fsync(fh.fileno())
        _fsync_dir(Path(dirpath))


def _atomic_write_text(path: Path, text: str) -> None:
    tmp = path.with_name(f"{_TMP_PREFIX}{path.name}-{os.getpid()}")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


# -- random number generators -----------------------------------------------------------------------------


def capture_rng_state() -> dict[str, Any]:
    """The global RNG states a training step draws from: Python ``random``, NumPy's legacy global, torch CPU/CUDA.

    Only tensors and builtins, so ``torch.load(..., weights_only=True)`` reads a saved state back.
    """
    version, internal, gauss = random.getstate()
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    state: dict[str, Any] = {
        "python": [version, list(internal), gauss],
        "numpy": {"kind": str(kind), "keys": torch.from_numpy(np.asarray(keys, dtype=np.int64)),
                  "pos": int(pos), "has_gauss": int(has_gauss), "cached": float(cached)},
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: Mapping[str, Any]) -> None:
    """Put back what :func:`capture_rng_state` returned (CUDA states only when CUDA is present)."""
    missing = {"python", "numpy", "torch"} - set(state)
    if missing:
        raise ValueError(f"not an RNG state: missing {sorted(missing)}")
    version, internal, gauss = state["python"]
    random.setstate((version, tuple(int(x) for x in internal), gauss))
    npy = state["numpy"]
    keys = np.asarray(npy["keys"].numpy() if isinstance(npy["keys"], torch.Tensor) else npy["keys"], dtype=np.uint32)
    np.random.set_state((npy["kind"], keys, int(npy["pos"]), int(npy["has_gauss"]), float(npy["cached"])))
    torch.set_rng_state(torch.as_tensor(state["torch"], dtype=torch.uint8))
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


# -- replay buffer snapshots ------------------------------------------------------------------------------


def _link_or_copy(src: Path, dst: Path) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another filesystem, or links unsupported
        shutil.copy2(src, dst)


def snapshot_replay(buffer: Any, checkpoint_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Record a :class:`coach_rl.replay.ReplayBuffer` in a checkpoint: its ``state_dict`` plus hard links to its shards.

    Shards never change after they are written, so a hard link costs no space and keeps the data alive
    even after the buffer evicts it. Returns the state dict (also written as ``replay_state.json``).
    """
    out = Path(checkpoint_dir) / "replay"
    out.mkdir(parents=True, exist_ok=True)
    state = buffer.state_dict()
    for name in state["shards"]:
        _link_or_copy(Path(buffer.directory) / name, out / name)
    (Path(checkpoint_dir) / "replay_state.json").write_text(json.dumps(state, indent=1))
    return state


def restore_replay(replay_dir: str | os.PathLike[str], checkpoint_dir: str | os.PathLike[str]) -> dict[str, Any]:
    """Make ``replay_dir`` hold exactly the shards of the checkpoint; returns its replay ``state_dict``.

    Shards written after the checkpoint (sequence number >= its ``next_seq``) are deleted, shards the
    buffer evicted since are linked back from the checkpoint. Call this BEFORE opening the buffer (a
    buffer opened on extra shards would evict old ones to fit its capacity), then ``load_state_dict``.
    """
    ckpt = Path(checkpoint_dir)
    state_file = ckpt / "replay_state.json"
    if not state_file.is_file():
        raise FileNotFoundError(f"checkpoint {ckpt} holds no replay_state.json")
    state = json.loads(state_file.read_text())
    target = Path(replay_dir)
    target.mkdir(parents=True, exist_ok=True)
    keep = set(state["shards"])
    next_seq = int(state["next_seq"])
    for path in target.iterdir():
        match = _SHARD_RE.match(path.name)
        if match and path.name not in keep and int(match.group(1)) >= next_seq:
            path.unlink()
    for name in state["shards"]:
        if not (target / name).exists():
            src = ckpt / "replay" / name
            if not src.exists():
                raise FileNotFoundError(f"replay shard {name} is neither in {target} nor in the checkpoint {ckpt}")
            _link_or_copy(src, target / name)
    _fsync_dir(target)
    return state


# -- the run folder ---------------------------------------------------------------------------------------


class RunDir:
    """A training run's folder: ``config.yaml``, ``metrics.jsonl``, ``checkpoints/``, ``replay/`` and the report.

    Opening a folder removes leftovers of a writer killed mid-save (hidden temporary files/folders).
    """

    def __init__(self, path: str | os.PathLike[str], *, keep: int = 2) -> None:
        """Open (creating if needed) the run folder at ``path``; ``keep`` complete checkpoints are retained."""
        if isinstance(keep, bool) or not isinstance(keep, int) or keep < 1:
            raise ValueError(f"keep must be an integer >= 1 (checkpoints retained), got {keep!r}")
        self.path = Path(path)
        self.keep = keep
        self.path.mkdir(parents=True, exist_ok=True)
        self.checkpoints_dir.mkdir(exist_ok=True)
        for folder in (self.path, self.checkpoints_dir):
            for item in folder.iterdir():
                if item.name.startswith(_TMP_PREFIX):
                    shutil.rmtree(item) if item.is_dir() else item.unlink(missing_ok=True)

    # -- paths --
    @property
    def config_path(self) -> Path:
        """``config.yaml``: the resolved configuration of the run."""
        return self.path / "config.yaml"

    @property
    def metrics_path(self) -> Path:
        """``metrics.jsonl``: one JSON record per line."""
        return self.path / "metrics.jsonl"

    @property
    def checkpoints_dir(self) -> Path:
        """``checkpoints/``: ``iter-NNNNNN`` folders and the ``LATEST`` pointer."""
        return self.path / "checkpoints"

    @property
    def replay_dir(self) -> Path:
        """``replay/``: the default replay buffer folder of the run."""
        return self.path / "replay"

    # -- config --
    def write_config(self, config: Mapping[str, Any]) -> Path:
        """Write the resolved configuration as YAML (atomically)."""
        text = yaml.safe_dump(_plain(dict(config)), sort_keys=True, allow_unicode=True)
        _atomic_write_text(self.config_path, text)
        return self.config_path

    def read_config(self) -> dict[str, Any]:
        """The configuration written by :meth:`write_config` (``FileNotFoundError`` when there is none)."""
        data = yaml.safe_load(self.config_path.read_text())
        if not isinstance(data, dict):
            raise ValueError(f"{self.config_path} does not hold a mapping")
        return data

    # -- metrics --
    def log_metrics(self, record: Mapping[str, Any]) -> None:
        """Append one JSON record to ``metrics.jsonl`` (flushed and fsynced: a crash loses at most this line)."""
        line = json.dumps(_plain(dict(record)), sort_keys=True, allow_nan=True)
        with open(self.metrics_path, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def read_metrics(self, kind: str | None = None) -> list[dict[str, Any]]:
        """All records (those with ``record["kind"] == kind`` when given); a torn last line is skipped."""
        if not self.metrics_path.exists():
            return []
        out = []
        for line in self.metrics_path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a crash mid-write
            if kind is None or rec.get("kind") == kind:
                out.append(rec)
        return out

    def truncate_metrics(self, iteration: int) -> int:
        """Drop training records of iterations after ``iteration`` (work a resumed run redoes); returns how many.

        Records without an ``iteration`` (e.g. the evaluation before training) are kept.
        """
        records = self.read_metrics()
        keep = [r for r in records if r.get("iteration") is None or int(r["iteration"]) <= iteration]
        if len(keep) != len(records) or self.metrics_path.exists():
            text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in keep)
            _atomic_write_text(self.metrics_path, text)
        return len(records) - len(keep)

    # -- checkpoints --
    def checkpoint_path(self, iteration: int) -> Path:
        """Where the checkpoint of ``iteration`` lives (``checkpoints/iter-NNNNNN``)."""
        return self.checkpoints_dir / f"iter-{iteration:06d}"

    def complete_checkpoints(self) -> list[tuple[int, Path]]:
        """``(iteration, path)`` of every checkpoint with a manifest, oldest first."""
        found = []
        for item in self.checkpoints_dir.iterdir():
            match = _CKPT_RE.match(item.name)
            if match and (item / CHECKPOINT_MANIFEST).is_file():
                found.append((int(match.group(1)), item))
        return sorted(found)

    def latest_checkpoint(self) -> Path | None:
        """The newest complete checkpoint (``LATEST`` when it names one, else the highest iteration), or None."""
        pointer = self.checkpoints_dir / _LATEST
        if pointer.is_file():
            candidate = self.checkpoints_dir / pointer.read_text().strip()
            if (candidate / CHECKPOINT_MANIFEST).is_file():
                return candidate
        complete = self.complete_checkpoints()
        return complete[-1][1] if complete else None

    @staticmethod
    def read_manifest(checkpoint: str | os.PathLike[str]) -> dict[str, Any]:
        """The manifest of a checkpoint folder (what :meth:`checkpoint` was given, plus its iteration)."""
        path = Path(checkpoint) / CHECKPOINT_MANIFEST
        if not path.is_file():
            raise FileNotFoundError(f"{checkpoint} is not a complete checkpoint (no {CHECKPOINT_MANIFEST})")
        return json.loads(path.read_text())

    @contextlib.contextmanager
    def checkpoint(self, iteration: int, manifest: Mapping[str, Any] | None = None) -> Iterator[Path]:
        """Write a checkpoint atomically: yields a temporary folder to fill; on a clean exit it is published.

        Publishing = fsync everything, write ``MANIFEST.json`` (``manifest`` + iteration + time), rename the
        folder to ``iter-NNNNNN``, point ``LATEST`` at it, prune older checkpoints beyond ``keep``. If the
        block raises, the temporary folder is removed and the previous checkpoint stays the latest.
        """
        if isinstance(iteration, bool) or not isinstance(iteration, int) or iteration < 0:
            raise ValueError(f"iteration must be an integer >= 0, got {iteration!r}")
        final = self.checkpoint_path(iteration)
        tmp = self.checkpoints_dir / f"{_TMP_PREFIX}{final.name}-{os.getpid()}"
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
        try:
            yield tmp
            info = {**_plain(dict(manifest or {})), "iteration": iteration, "saved_at": time.time()}
            (tmp / CHECKPOINT_MANIFEST).write_text(json.dumps(info, indent=1, sort_keys=True))
            fsync_tree(tmp)
            if final.exists():  # an earlier attempt at the same iteration (a resumed run redoing it)
                old = self.checkpoints_dir / f"{_TMP_PREFIX}old-{final.name}-{os.getpid()}"
                os.replace(final, old)
                shutil.rmtree(old)
            os.replace(tmp, final)
            _fsync_dir(self.checkpoints_dir)
            _atomic_write_text(self.checkpoints_dir / _LATEST, final.name + "\n")
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        self._prune()

    def _prune(self) -> None:
        complete = self.complete_checkpoints()
        latest = self.latest_checkpoint()
        for _, path in complete[:-self.keep]:
            if path != latest:
                shutil.rmtree(path, ignore_errors=True)
        # incomplete iter-* folders (no manifest) are left by nothing we do, but clear them if found
        for item in self.checkpoints_dir.iterdir():
            if _CKPT_RE.match(item.name) and not (item / CHECKPOINT_MANIFEST).exists():
                shutil.rmtree(item, ignore_errors=True)


def _plain(value: Any) -> Any:
    """Convert to YAML/JSON-safe builtins (tuples -> lists, NumPy scalars -> Python, enums -> value, Paths -> str)."""
    import enum

    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)
