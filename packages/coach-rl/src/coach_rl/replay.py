"""An on-disk replay buffer of complete trajectories, one Parquet shard per trajectory, safe against crashes.

Every :meth:`ReplayBuffer.add` writes the trajectory's steps as one Parquet file: first to a hidden temp
file in the same folder, flushed to disk (``fsync``), then renamed into place with ``os.replace`` (atomic on
POSIX) and the folder entry synced. A process killed at any moment (``kill -9``) therefore leaves either
the complete shard or no shard, plus at most a hidden temp file that the next :class:`ReplayBuffer` opened on
the folder deletes. Shards are never modified after the rename; capacity eviction deletes whole shards,
oldest first. One process writes a folder at a time; any number may read it.

One row per step (see :data:`REPLAY_COLUMNS`): the fields of the step's :class:`coach_rl.records.StepRecord`
(ids, task instance group, the prompt messages and templated prompt text, the reply with its token ids and
log-probs, the acting policy version, process/outcome rewards with NaN for a missing r_p, the return target
R_t) plus what reports need (compressed UI, action as JSON, the screenshot as PNG bytes, XML, a timestamp). The files carry Hugging Face ``datasets``
feature metadata, so ``datasets.load_dataset("parquet", data_files=buffer.data_files())`` (or
``data_dir=<folder>``) opens them with the ``screenshot`` column as an ``Image`` feature, no coach_rl needed.
"""

from __future__ import annotations

import bisect
import io
import json
import os
import random
import re
import time
import uuid
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from android_gym.actions import Action, action_from_dict
from android_gym.trajectory import Step, Trajectory
from coach_rl.prompting import build_policy_messages, history_entry
from coach_rl.records import StepRecord

__all__ = [
    "REPLAY_COLUMNS",
    "REPLAY_FORMAT_VERSION",
    "ReplayBuffer",
    "ReplayResumeReport",
    "ReplayStep",
    "replay_features",
]

REPLAY_FORMAT_VERSION = 3
"""Version of the shard layout, stored in every file's schema metadata under ``coach_rl.replay``."""

_SHARD_RE = re.compile(r"^(\d{10})-([0-9a-f]{12})\.parquet$")
_TMP_PREFIX = ".tmp-"
_PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def replay_features() -> Any:
    """The ``datasets.Features`` of a shard (``screenshot`` is an ``Image``; everything else plain values)."""
    import datasets

    v = datasets.Value
    return datasets.Features({
        "trajectory_id": v("string"),
        "step_index": v("int32"),
        "num_steps": v("int32"),
        "task": v("string"),
        "group": v("string"),
        "instruction": v("string"),
        "prompt": v("string"),
        "prompt_text": v("string"),
        "token_ids": datasets.Sequence(v("int64")),
        "token_logprobs": datasets.Sequence(v("float64")),
        "ui": v("string"),
        "action": v("string"),
        "response": v("string"),
        "parse_error": v("string"),
        "env_reward": v("float64"),
        "process_reward": v("float64"),
        "outcome_reward": v("float64"),
        "return_t": v("float64"),
        "success": v("float64"),
        "answer": v("string"),
        "truncated": v("bool"),
        "seed": v("int64"),
        "xml": v("string"),
        "info": v("string"),
        "screenshot": datasets.Image(),
        "policy_version": v("int64"),
        "sample_weight": v("float64"),
        "timestamp": v("float64"),
        "expert_match": v("float64"),
        "oracle": v("string"),
    })


REPLAY_COLUMNS: tuple[str, ...] = tuple(replay_features().keys())
"""Column names of every shard, in order. ``return_t`` is the return target R_t of the step."""

# Columns kept in memory per shard (small); ``xml`` and ``screenshot`` are read from disk when asked for.
_LIGHT_COLUMNS = [c for c in REPLAY_COLUMNS if c not in ("xml", "screenshot")]


def _schema() -> pa.Schema:
    schema = replay_features().arrow_schema
    meta = dict(schema.metadata or {})
    meta[b"coach_rl.replay"] = json.dumps({"version": REPLAY_FORMAT_VERSION}).encode()
    return schema.with_metadata(meta)


@dataclass
class ReplayStep:
    """One stored step with its trajectory's context: what the critic and the actor update read back.

    ``history`` holds the ``(thought, action_text)`` of the earlier steps of the same trajectory, ready for
    :func:`coach_rl.prompting.build_policy_messages`; ``screenshot`` is PNG bytes (or None).
    """

    trajectory_id: str
    step_index: int
    num_steps: int
    task: str
    instruction: str
    ui: str
    action: Action | None
    response: str
    parse_error: str | None
    env_reward: float
    process_reward: float
    outcome_reward: float
    return_t: float
    success: float
    policy_version: int
    timestamp: float
    group: str = ""
    prompt: list[dict[str, Any]] = field(default_factory=list)
    prompt_text: str = ""
    token_ids: list[int] | None = None
    token_logprobs: list[float] | None = None
    truncated: bool = False
    sample_weight: float = 1.0
    screenshot: bytes | None = None
    xml: str | None = None
    info: dict[str, Any] = field(default_factory=dict)
    history: list[tuple[str, str]] = field(default_factory=list)
    expert_match: float | None = None
    oracle: str | None = None

    def policy_messages(self, mode: str = "xml", **kwargs: Any) -> list[dict[str, Any]]:
        """The policy prompt of this state (:func:`coach_rl.prompting.build_policy_messages` with its history).

        ``mode="xml"`` shows the stored UI text; "screenshot"/"both" embed the stored screenshot (a bare
        image placeholder when it was not loaded or kept). ``kwargs`` go to ``build_policy_messages``.
        """
        return build_policy_messages(
            self.instruction,
            self.ui if mode != "screenshot" else None,
            self.screenshot if mode != "xml" else None,
            self.history,
            mode=mode,
            **kwargs,
        )

    def record(self) -> StepRecord:
        """The stored :class:`StepRecord` (what learners read)."""
        return StepRecord(
            episode_id=self.trajectory_id, step_index=self.step_index, num_steps=self.num_steps, task=self.task,
            group=self.group, prompt=self.prompt, prompt_text=self.prompt_text, response=self.response,
            token_ids=self.token_ids, token_logprobs=self.token_logprobs, policy_version=self.policy_version,
            process_reward=self.process_reward, outcome_reward=self.outcome_reward, return_t=self.return_t,
            success=self.success, env_reward=self.env_reward, parse_error=self.parse_error, truncated=self.truncated,
            instruction=self.instruction, ui=self.ui, sample_weight=self.sample_weight,
            action=json.dumps(self.action.to_dict(), ensure_ascii=False) if self.action is not None else None,
            expert_match=self.expert_match, oracle=self.oracle)

    def screenshot_array(self) -> np.ndarray | None:
        """The screenshot decoded to an HxWx3 uint8 array (None when the step kept none)."""
        if self.screenshot is None:
            return None
        from PIL import Image

        with Image.open(io.BytesIO(self.screenshot)) as img:
            return np.asarray(img.convert("RGB"))


class ReplayResumeReport(NamedTuple):
    """What :meth:`ReplayBuffer.load_state_dict` changed: shards dropped as newer than the checkpoint, and
    shards the checkpoint listed that are gone (evicted after it was taken)."""

    dropped: list[str]
    missing: list[str]


@dataclass
class _Shard:
    seq: int
    name: str
    num_steps: int
    light: pa.Table | None = None


def _png_bytes(image: Any, compress_level: int) -> bytes | None:
    """PNG bytes of a screenshot given as an HxWx3/HxWx4/HxW uint8 array, a PIL image or PNG bytes (None stays None)."""
    if image is None:
        return None
    if isinstance(image, (bytes, bytearray)):
        if not bytes(image[:8]) == _PNG_MAGIC:
            raise ValueError("screenshot bytes must be a PNG image (other encodings: pass an array or PIL image)")
        return bytes(image)
    from PIL import Image

    if isinstance(image, np.ndarray):
        if image.dtype != np.uint8 or image.ndim not in (2, 3) or (image.ndim == 3 and image.shape[2] not in (3, 4)):
            raise ValueError(
                f"screenshot array must be uint8 HxW, HxWx3 or HxWx4, got {image.dtype} of shape {image.shape}"
            )
        image = Image.fromarray(image)
    if not isinstance(image, Image.Image):
        raise TypeError(f"screenshot must be a uint8 array, a PIL image or PNG bytes, got {type(image).__name__}")
    buf = io.BytesIO()
    image.save(buf, format="PNG", compress_level=compress_level)
    return buf.getvalue()


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _as_rng(rng: Any) -> random.Random | np.random.Generator:
    if rng is None or isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(rng)
    if isinstance(rng, (random.Random, np.random.Generator)):
        return rng
    raise TypeError(f"rng must be a numpy Generator, a random.Random, an int seed or None, got {type(rng).__name__}")


class ReplayBuffer:
    """Complete trajectories on disk under ``directory``; at most ``capacity`` steps, oldest trajectories evicted first.

    Opening a folder that holds shards continues that buffer (leftover temp
    files of a crashed writer are removed; unreadable shards are renamed ``*.corrupt`` with a warning).
    ``read_only=True`` reads another run's buffer without touching it: nothing is removed, renamed or evicted
    (unreadable shards are only skipped), and :meth:`add` is refused.
    """

    def __init__(
        self,
        directory: str | os.PathLike[str],
        capacity: int = 2000,
        *,
        png_compress_level: int = 1,
        read_only: bool = False,
    ) -> None:
        """Open (creating if needed, unless ``read_only``) the buffer in ``directory``; ``capacity`` counts steps
        (``replay_size``)."""
        if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity < 1:
            raise ValueError(f"capacity must be a positive integer (steps), got {capacity!r}")
        if not 0 <= png_compress_level <= 9:
            raise ValueError(f"png_compress_level must be 0..9, got {png_compress_level!r}")
        self.directory = Path(directory)
        self.read_only = bool(read_only)
        if self.read_only:
            if not self.directory.is_dir():
                raise FileNotFoundError(f"no replay buffer folder at {self.directory}")
        else:
            self.directory.mkdir(parents=True, exist_ok=True)
        self.capacity = capacity
        self.png_compress_level = png_compress_level
        self._schema = _schema()
        self._shards: list[_Shard] = []
        self._starts: list[int] = []  # cumulative step count before each shard
        self._next_seq = 0
        self._scan()
        if not self.read_only:
            self._evict()

    # -- folder scanning --------------------------------------------------------------------------------

    def _scan(self) -> None:
        if not self.read_only:
            for path in self.directory.iterdir():
                if path.name.startswith(_TMP_PREFIX):
                    path.unlink(missing_ok=True)  # a writer died before its rename: the trajectory never landed
        found: list[_Shard] = []
        for path in sorted(self.directory.iterdir()):
            match = _SHARD_RE.match(path.name)
            if not match:
                continue
            try:
                num = pq.ParquetFile(path).metadata.num_rows
            except (OSError, pa.ArrowException) as err:
                if self.read_only:
                    warnings.warn(f"replay shard {path} is unreadable ({err}); skipped", stacklevel=3)
                    continue
                bad = path.with_name(".corrupt-" + path.name)
                os.replace(path, bad)
                warnings.warn(f"replay shard {path} is unreadable ({err}); moved to {bad.name}", stacklevel=3)
                continue
            found.append(_Shard(int(match.group(1)), path.name, num))
        found.sort(key=lambda s: s.seq)
        self._shards = found
        self._next_seq = found[-1].seq + 1 if found else 0
        self._reindex()

    def _reindex(self) -> None:
        self._starts = []
        total = 0
        for shard in self._shards:
            self._starts.append(total)
            total += shard.num_steps
        self._total = total

    # -- adding -----------------------------------------------------------------------------------------

    def add(self, trajectory: Trajectory, records: Sequence[StepRecord]) -> str:
        """Persist one complete trajectory with its step records (atomically), evict old ones; returns its id.

        ``records`` are the trajectory's :class:`StepRecord` objects in step order (rewards and returns set by
        the collector's reward pipeline); their ``episode_id`` becomes the buffer's id for the trajectory.
        """
        if self.read_only:
            raise PermissionError(f"the replay buffer at {self.directory} was opened read_only")
        if not isinstance(trajectory, Trajectory):
            raise TypeError(f"trajectory must be an android_gym Trajectory, got {type(trajectory).__name__}")
        n = len(trajectory.steps)
        if n == 0:
            raise ValueError(f"trajectory of task {trajectory.task!r} has no steps: nothing to store")
        if n > self.capacity:
            raise ValueError(f"trajectory has {n} steps, more than the buffer's capacity of {self.capacity} steps")
        if isinstance(records, (str, bytes)) or not isinstance(records, Sequence) or len(records) != n:
            raise ValueError(f"records must be a list of one StepRecord per step ({n}), got "
                             f"{len(records) if isinstance(records, Sequence) else type(records).__name__}")
        for i, record in enumerate(records):
            if not isinstance(record, StepRecord):
                raise TypeError(f"records[{i}] must be a coach_rl.records.StepRecord, got {type(record).__name__}")
            if record.step_index != i:
                raise ValueError(f"records[{i}] has step_index {record.step_index}; records must be in step order")

        seq = self._next_seq
        uid = uuid.uuid4().hex[:12]
        traj_id = f"{seq:010d}-{uid}"
        for record in records:
            record.episode_id = traj_id
        table = self._table(trajectory, records)
        name = f"{traj_id}.parquet"
        tmp = self.directory / f"{_TMP_PREFIX}{uid}-{os.getpid()}"
        try:
            pq.write_table(table, tmp)
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, self.directory / name)
        finally:
            tmp.unlink(missing_ok=True)
        _fsync_dir(self.directory)
        self._next_seq = seq + 1
        self._shards.append(_Shard(seq, name, n, light=table.select(_LIGHT_COLUMNS)))
        self._reindex()
        self._evict()
        return traj_id

    def _table(self, traj: Trajectory, records: Sequence[StepRecord]) -> pa.Table:
        now = time.time()
        rows: dict[str, list[Any]] = {c: [] for c in REPLAY_COLUMNS}
        for i, (step, record) in enumerate(zip(traj.steps, records)):
            if not isinstance(step, Step):
                raise TypeError(f"trajectory.steps[{i}] must be an android_gym Step, got {type(step).__name__}")
            png = _png_bytes(step.screenshot, self.png_compress_level)
            values = {
                "trajectory_id": record.episode_id, "step_index": i, "num_steps": record.num_steps,
                "task": record.task, "group": record.group, "instruction": record.instruction,
                "prompt": json.dumps(record.prompt, ensure_ascii=False, default=str),
                "prompt_text": record.prompt_text, "token_ids": record.token_ids, "token_logprobs": record.token_logprobs,
                "ui": record.ui, "action": record.action, "response": record.response,
                "parse_error": record.parse_error, "env_reward": record.env_reward,
                "process_reward": record.process_reward, "outcome_reward": record.outcome_reward,
                "return_t": record.return_t, "success": record.success, "answer": traj.answer,
                "truncated": record.truncated, "seed": traj.seed, "xml": step.xml,
                "info": json.dumps(step.info, ensure_ascii=False, default=str) if step.info else None,
                "screenshot": {"bytes": png, "path": None} if png is not None else None,
                "policy_version": record.policy_version, "sample_weight": record.sample_weight, "timestamp": now,
                "expert_match": record.expert_match, "oracle": record.oracle,
            }
            for key, value in values.items():
                rows[key].append(value)
        return pa.Table.from_pydict(rows, schema=self._schema)

    def _evict(self) -> None:
        """Delete whole oldest shards until the steps fit the capacity (the newest trajectory always stays)."""
        changed = False
        while self._total > self.capacity and len(self._shards) > 1:
            shard = self._shards.pop(0)
            (self.directory / shard.name).unlink(missing_ok=True)
            self._total -= shard.num_steps
            changed = True
        if changed:
            _fsync_dir(self.directory)
            self._reindex()

    # -- reading ----------------------------------------------------------------------------------------

    def __len__(self) -> int:
        """Number of stored steps (state-action pairs)."""
        return self._total

    @property
    def num_trajectories(self) -> int:
        """Number of stored trajectories."""
        return len(self._shards)

    def trajectory_ids(self) -> list[str]:
        """Ids of the stored trajectories, oldest first."""
        return [s.name.removesuffix(".parquet") for s in self._shards]

    def data_files(self) -> list[str]:
        """Paths of the shards, oldest first (for ``datasets.load_dataset("parquet", data_files=...)``)."""
        return [str(self.directory / s.name) for s in self._shards]

    def _light(self, shard: _Shard) -> pa.Table:
        if shard.light is None:
            shard.light = pq.read_table(self.directory / shard.name, columns=_LIGHT_COLUMNS)
        return shard.light

    def _heavy(self, shard: _Shard, rows: list[int], columns: list[str]) -> dict[str, list[Any]]:
        table = pq.read_table(self.directory / shard.name, columns=columns)
        return {c: [table.column(c)[r].as_py() for r in rows] for c in columns}

    def _steps_of(self, shard: _Shard, rows: list[int], with_screenshots: bool, with_xml: bool) -> list[ReplayStep]:
        light = self._light(shard).to_pydict()
        heavy_cols = (["screenshot"] if with_screenshots else []) + (["xml"] if with_xml else [])
        heavy = self._heavy(shard, rows, heavy_cols) if heavy_cols else {}
        entries = [history_entry({"response": light["response"][j], "action": _action(light["action"][j])})
                   for j in range(shard.num_steps)]
        out = []
        for k, r in enumerate(rows):
            shot = heavy["screenshot"][k] if with_screenshots else None
            out.append(ReplayStep(
                trajectory_id=light["trajectory_id"][r], step_index=light["step_index"][r],
                num_steps=light["num_steps"][r], task=light["task"][r], instruction=light["instruction"][r],
                ui=light["ui"][r], action=_action(light["action"][r]), response=light["response"][r],
                parse_error=light["parse_error"][r], env_reward=light["env_reward"][r],
                process_reward=light["process_reward"][r], outcome_reward=light["outcome_reward"][r],
                return_t=light["return_t"][r], success=light["success"][r],
                policy_version=light["policy_version"][r], timestamp=light["timestamp"][r],
                group=light["group"][r], prompt=json.loads(light["prompt"][r]) if light["prompt"][r] else [],
                prompt_text=light["prompt_text"][r] or "", token_ids=light["token_ids"][r],
                token_logprobs=light["token_logprobs"][r], truncated=bool(light["truncated"][r]),
                sample_weight=float(light["sample_weight"][r]),
                screenshot=shot["bytes"] if shot else None,
                xml=heavy["xml"][k] if with_xml else None,
                info=json.loads(light["info"][r]) if light["info"][r] else {},
                history=entries[:light["step_index"][r]],
                expert_match=light["expert_match"][r],
                oracle=light["oracle"][r],
            ))
        return out

    def sample_steps(
        self, n: int, rng: Any = None, *, replace: bool = False, with_screenshots: bool = True, with_xml: bool = False
    ) -> list[ReplayStep]:
        """``n`` steps drawn uniformly from the buffer (without replacement unless ``replace``).

        ``rng`` is a ``numpy.random.Generator``, a ``random.Random``, an int seed or None (fresh entropy).
        """
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"n must be an integer >= 0, got {n!r}")
        if n > self._total and not replace:
            raise ValueError(f"cannot sample {n} distinct steps from a buffer of {self._total}")
        if n and not self._total:
            raise ValueError("the replay buffer is empty")
        gen = _as_rng(rng)
        if isinstance(gen, random.Random):
            picks = [gen.randrange(self._total) for _ in range(n)] if replace else gen.sample(range(self._total), n)
        else:
            picks = gen.choice(self._total, size=n, replace=replace).tolist()
        by_shard: dict[int, list[tuple[int, int]]] = {}
        for pos, index in enumerate(picks):
            s = bisect.bisect_right(self._starts, index) - 1
            by_shard.setdefault(s, []).append((pos, index - self._starts[s]))
        out: list[ReplayStep | None] = [None] * n
        for s, items in by_shard.items():
            steps = self._steps_of(self._shards[s], [r for _, r in items], with_screenshots, with_xml)
            for (pos, _), step in zip(items, steps):
                out[pos] = step
        return out  # type: ignore[return-value]

    def sample_records(self, n: int, rng: Any = None, *, replace: bool = False) -> list[StepRecord]:
        """``n`` stored :class:`StepRecord` objects drawn uniformly (see :meth:`sample_steps`)."""
        return [s.record() for s in self.sample_steps(n, rng, replace=replace, with_screenshots=False)]

    def states(self, *, with_screenshots: bool = False, with_xml: bool = False) -> Iterator[ReplayStep]:
        """Every stored step, oldest trajectory first, in step order."""
        for shard in list(self._shards):
            yield from self._steps_of(shard, list(range(shard.num_steps)), with_screenshots, with_xml)

    def load_trajectory(self, trajectory_id: str) -> Trajectory:
        """Rebuild a stored trajectory as an android_gym ``Trajectory`` (screenshots decoded to arrays).

        Each step's ``info`` is what the step recorded (the env's annotations); the training fields are in
        :meth:`load_records`.
        """
        for shard in self._shards:
            if shard.name == f"{trajectory_id}.parquet":
                break
        else:
            raise KeyError(f"no trajectory {trajectory_id!r} in the replay buffer")
        steps = self._steps_of(shard, list(range(shard.num_steps)), True, True)
        first = steps[0]
        light = self._light(shard)
        traj = Trajectory(task=first.task, instruction=first.instruction, success=first.success,
                          answer=light.column("answer")[0].as_py(), seed=light.column("seed")[0].as_py(),
                          truncated=bool(light.column("truncated")[0].as_py()))
        for s in steps:
            traj.steps.append(Step(ui=s.ui, action=s.action, response=s.response, reward=s.env_reward,
                                   screenshot=s.screenshot_array(), xml=s.xml, parse_error=s.parse_error,
                                   info=dict(s.info)))
        return traj

    def load_records(self, trajectory_id: str) -> list[StepRecord]:
        """The stored :class:`StepRecord` of every step of a trajectory, in step order."""
        for shard in self._shards:
            if shard.name == f"{trajectory_id}.parquet":
                return [s.record() for s in self._steps_of(shard, list(range(shard.num_steps)), False, False)]
        raise KeyError(f"no trajectory {trajectory_id!r} in the replay buffer")

    def to_dataset(self, *, with_screenshots: bool = True) -> Any:
        """All stored steps as a ``datasets.Dataset`` (``screenshot`` an ``Image`` feature), oldest first."""
        import datasets

        features = replay_features()
        if self._shards:
            table = pa.concat_tables([pq.read_table(p, schema=self._schema) for p in self.data_files()])
        else:
            table = self._schema.empty_table()
        if not with_screenshots:
            table = table.drop_columns(["screenshot"])
            del features["screenshot"]
        return datasets.Dataset(table.replace_schema_metadata(None), info=datasets.DatasetInfo(features=features))

    # -- resume -----------------------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The buffer's position for a checkpoint: capacity, next sequence number, shard names, step count."""
        return {
            "format": "coach_rl.replay",
            "version": REPLAY_FORMAT_VERSION,
            "capacity": self.capacity,
            "next_seq": self._next_seq,
            "shards": [s.name for s in self._shards],
            "num_steps": self._total,
        }

    def load_state_dict(self, state: dict[str, Any], *, drop_newer: bool = True) -> ReplayResumeReport:
        """Return to a checkpoint: delete shards added after it (``drop_newer``) and continue its numbering.

        Shards the checkpoint lists but the folder lacks (evicted after the checkpoint) cannot come back;
        they are reported in ``missing``.
        """
        if state.get("format") != "coach_rl.replay" or "next_seq" not in state or "shards" not in state:
            raise ValueError("not a ReplayBuffer state_dict (format 'coach_rl.replay' with next_seq and shards)")
        if state.get("version") != REPLAY_FORMAT_VERSION:
            raise ValueError(f"replay state version {state.get('version')!r} != {REPLAY_FORMAT_VERSION}")
        next_seq = int(state["next_seq"])
        dropped: list[str] = []
        if drop_newer:
            keep = []
            for shard in self._shards:
                if shard.seq >= next_seq:
                    (self.directory / shard.name).unlink(missing_ok=True)
                    dropped.append(shard.name)
                else:
                    keep.append(shard)
            self._shards = keep
            if dropped:
                _fsync_dir(self.directory)
        present = {s.name for s in self._shards}
        missing = [name for name in state["shards"] if name not in present]
        self._next_seq = max(next_seq, self._shards[-1].seq + 1 if self._shards else 0)
        self._reindex()
        self._evict()
        return ReplayResumeReport(dropped=dropped, missing=missing)



def _action(text: str | None) -> Action | None:
    return action_from_dict(json.loads(text)) if text else None
