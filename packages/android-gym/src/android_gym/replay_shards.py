"""Reading coach-rl's replay-buffer shards without coach-rl: what ``android-gym view`` shows of a run's ``replay/``.

coach-rl's replay buffer keeps one Parquet file per trajectory, named ``NNNNNNNNNN-<12 hex>.parquet`` (a sequence
number and an id), one row per step. A writer lands a shard with an atomic rename and never changes it after, so a
shard on disk is complete; its hidden ``.tmp-*`` files (a save in progress) and ``.corrupt-*`` files are not shards.
The columns read here: ``task``, ``instruction``, ``success``, ``answer``, ``seed``, ``truncated`` (the trajectory's,
the same on every row), ``step_index``, ``ui``, ``action`` (the action's dict as JSON, or null), ``response``,
``parse_error``, ``env_reward``, ``xml``, ``info`` (JSON), ``screenshot`` (a struct whose ``bytes`` are PNG) and the
numbers a page shows per step (``process_reward``, ``outcome_reward``, ``return_t``; NaN where there is none). The
schema's metadata names the layout's version under ``coach_rl.replay``.

This module only reads: it never deletes, renames or creates anything in the folder, so it can look at the buffer of
a run that is still writing. It needs ``pyarrow`` (``pip install 'android-gym[parquet]'``; coach-rl depends on it),
imported only when a shard is read. It never imports coach-rl.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from android_gym.actions import action_from_dict
from android_gym.trajectory import Step, Trajectory

__all__ = ["KNOWN_VERSIONS", "SHARD_NAME", "read_shard", "shard_files"]

SHARD_NAME = re.compile(r"^(\d{10})-([0-9a-f]{12})\.parquet$")
"""A shard's file name: the buffer's sequence number (oldest first) and the trajectory's 12-hex id."""

KNOWN_VERSIONS = (3,)
"""Versions of the shard layout this reader was written for (coach-rl's ``REPLAY_FORMAT_VERSION``)."""

_REQUIRED = ("task", "instruction", "step_index", "ui", "action", "response")
_RECORD_NUMBERS = ("process_reward", "outcome_reward", "return_t", "env_reward", "success", "policy_version",
                   "sample_weight", "expert_match")
PYARROW_HINT = "reading coach-rl replay shards needs pyarrow: pip install 'android-gym[parquet]'"


def shard_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The shards in ``folder``, oldest first (by sequence number)."""
    found = [p for p in Path(folder).iterdir() if p.is_file() and SHARD_NAME.match(p.name)]
    return sorted(found, key=lambda p: p.name)


def _pyarrow_parquet(where: Path) -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise ValueError(f"{where}: {PYARROW_HINT} ({exc})") from None
    return pq


def _version(schema_metadata: dict[bytes, bytes] | None) -> int | None:
    raw = (schema_metadata or {}).get(b"coach_rl.replay")
    if raw is None:
        return None
    try:
        return int(json.loads(raw)["version"])
    except (ValueError, KeyError, TypeError):
        return None


def _number(value: Any) -> float | None:
    """A stored number as a float (NaN stays NaN: a missing r_p is NaN in the shard); None stays None."""
    return None if value is None or isinstance(value, bool) else float(value)


def read_shard(path: str | os.PathLike[str]) -> tuple[Trajectory, list[dict[str, Any]]]:
    """One shard as an android_gym ``Trajectory`` and its per-step records (dicts of the step's training numbers).

    Screenshots are decoded to HxWx3 uint8 arrays, as the env recorded them. A file
    that is not a readable shard raises ``ValueError`` naming it and what is wrong.
    """
    src = Path(path)
    pq = _pyarrow_parquet(src)
    try:
        table = pq.read_table(src)
    except FileNotFoundError:
        raise ValueError(f"{src}: no such replay shard (evicted by the run's buffer since it was listed?)") from None
    except Exception as exc:  # pyarrow raises its own ArrowInvalid / OSError for a file that is not Parquet
        raise ValueError(f"{src}: not a readable Parquet file: {exc}") from None
    version = _version(table.schema.metadata)
    missing = [c for c in _REQUIRED if c not in table.column_names]
    if missing:
        what = f"layout version {version}" if version is not None else "no coach_rl.replay metadata"
        raise ValueError(f"{src}: not a coach-rl replay shard ({what}; missing column(s) {', '.join(missing)})")
    if table.num_rows == 0:
        raise ValueError(f"{src}: a replay shard without steps")
    cols = {c: table.column(c).to_pylist() for c in table.column_names}
    order = sorted(range(table.num_rows), key=lambda r: cols["step_index"][r])

    def first(name: str, default: Any = None) -> Any:
        return cols[name][order[0]] if name in cols else default

    def cell(name: str, r: int) -> Any:
        return cols[name][r] if name in cols else None

    success = first("success")
    trajectory = Trajectory(task=first("task") or "", instruction=first("instruction") or "",
                            success=float(success) if success is not None else 0.0, answer=first("answer"),
                            seed=first("seed"), truncated=bool(first("truncated", False)))
    records: list[dict[str, Any]] = []
    for r in order:
        action_text, info_text, shot = cell("action", r), cell("info", r), cell("screenshot", r)
        try:
            action = action_from_dict(json.loads(action_text)) if action_text else None
            info = json.loads(info_text) if info_text else {}
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"{src}: step {cols['step_index'][r]} has an action or info that does not read: "
                             f"{exc}") from None
        png = shot.get("bytes") if isinstance(shot, dict) else shot
        reward = cell("env_reward", r)
        trajectory.steps.append(Step(
            ui=cols["ui"][r] or "", action=action, response=cols["response"][r] or "",
            reward=float(reward) if reward is not None else 0.0, screenshot=_decode_png(png, src),
            xml=cell("xml", r), parse_error=cell("parse_error", r), info=dict(info)))
        records.append({name: _number(cols[name][r]) for name in _RECORD_NUMBERS if name in cols})
    return trajectory, records


def _decode_png(data: bytes | None, src: Path) -> np.ndarray | None:
    """A stored screenshot (PNG bytes) as an HxWx3 uint8 array, as the env recorded it."""
    if not data:
        return None
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as img:
            return np.asarray(img.convert("RGB"))
    except (UnidentifiedImageError, OSError) as exc:
        raise ValueError(f"{src}: a screenshot that is not an image: {exc}") from None
