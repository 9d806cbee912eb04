"""Episodes as data: a ``Trajectory`` is the instruction plus the list of ``Step`` records of one episode.

These are the records rollouts, reward models and trainers pass to each other. They are plain
dataclasses that convert to and from JSON-friendly dicts (screenshots are kept as arrays, or as
PNG bytes by the code that persists them). :meth:`Trajectory.save` and :meth:`Trajectory.load` keep one
episode in one JSON file (gzipped when the name ends in ``.gz``) with its screenshots as PNG, which is
what ``android-gym play --record episode.json.gz`` writes and ``android-gym view`` reads.
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from android_gym.actions import Action, action_from_dict


@dataclass
class Step:
    """One decision: what the agent saw, what it said, the action taken and what came of it."""

    ui: str
    action: Action | None
    response: str = ""
    reward: float = 0.0
    screenshot: np.ndarray | None = None
    xml: str | None = None
    parse_error: str | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ui": self.ui,
            "action": self.action.to_dict() if self.action is not None else None,
            "response": self.response,
            "reward": self.reward,
            "xml": self.xml,
            "parse_error": self.parse_error,
            "info": self.info,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Step:
        action = data.get("action")
        return cls(
            ui=data["ui"],
            action=action_from_dict(action) if action else None,
            response=data.get("response", ""),
            reward=float(data.get("reward", 0.0)),
            xml=data.get("xml"),
            parse_error=data.get("parse_error"),
            info=dict(data.get("info") or {}),
        )


TRAJECTORY_FORMAT = "android_gym.trajectory"
"""The ``format`` field of a file written by :meth:`Trajectory.save`."""
TRAJECTORY_FORMAT_VERSION = 1
"""The ``version`` field of a file written by :meth:`Trajectory.save`."""


def _png_b64(image: np.ndarray) -> str:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.asarray(image)).save(buf, format="PNG", compress_level=1)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _png_array(text: str) -> np.ndarray:
    from PIL import Image

    with Image.open(io.BytesIO(base64.b64decode(text, validate=True))) as img:
        return np.asarray(img.convert("RGB"))


def _json_default(value: Any) -> Any:
    """JSON for what ``info`` may hold besides plain values: numpy scalars and arrays (uint8 images as PNG)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        if value.dtype == np.uint8 and value.ndim == 3 and value.shape[2] in (3, 4):
            return {"__png__": _png_b64(value)}
        return value.tolist()
    if isinstance(value, (bytes, bytearray)):
        return {"__base64__": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, (set, tuple)):
        return list(value)
    return str(value)


def _decode_arrays(value: Any) -> Any:
    """Undo :func:`_json_default`'s PNG and bytes wrappers inside ``info`` dicts."""
    if isinstance(value, dict):
        if set(value) == {"__png__"}:
            return _png_array(value["__png__"])
        if set(value) == {"__base64__"}:
            return base64.b64decode(value["__base64__"])
        return {k: _decode_arrays(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_decode_arrays(v) for v in value]
    return value


@dataclass
class Trajectory:
    """A whole episode: task, goal text, steps, outcome."""

    task: str
    instruction: str
    steps: list[Step] = field(default_factory=list)
    success: float = 0.0
    answer: str | None = None
    seed: int | None = None
    truncated: bool = False
    error: str | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "instruction": self.instruction,
            "steps": [s.to_dict() for s in self.steps],
            "success": self.success,
            "answer": self.answer,
            "seed": self.seed,
            "truncated": self.truncated,
            "error": self.error,
            "info": self.info,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Trajectory:
        return cls(
            task=data["task"],
            instruction=data["instruction"],
            steps=[Step.from_dict(s) for s in data.get("steps", [])],
            success=float(data.get("success", 0.0)),
            answer=data.get("answer"),
            seed=data.get("seed"),
            truncated=bool(data.get("truncated", False)),
            error=data.get("error"),
            info=dict(data.get("info") or {}),
        )

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the episode as one JSON file (gzipped for a ``.gz`` name), screenshots as PNG; returns the path.

        Arrays in ``info`` (e.g. ``final_screenshot``) are kept too: uint8 images as PNG, others as lists.
        """
        data: dict[str, Any] = {"format": TRAJECTORY_FORMAT, "version": TRAJECTORY_FORMAT_VERSION, **self.to_dict()}
        for step, row in zip(self.steps, data["steps"]):
            row["screenshot_png"] = _png_b64(step.screenshot) if step.screenshot is not None else None
        text = json.dumps(data, ensure_ascii=False, default=_json_default)
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        payload = text.encode("utf-8")
        out.write_bytes(gzip.compress(payload, compresslevel=6) if out.suffix == ".gz" else payload)
        return out

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Trajectory:
        """Read an episode written by :meth:`save`; a file of another kind raises ``ValueError`` naming it."""
        src = Path(path)
        raw = src.read_bytes()
        try:
            text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
            data = json.loads(text)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{src}: not an android_gym trajectory file (JSON, optionally gzipped): {exc}") from None
        if not isinstance(data, dict) or data.get("format") != TRAJECTORY_FORMAT:
            found = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"{src}: field 'format' is {found!r}, expected {TRAJECTORY_FORMAT!r}")
        if data.get("version") != TRAJECTORY_FORMAT_VERSION:
            raise ValueError(f"{src}: field 'version' is {data.get('version')!r}, this android_gym reads "
                             f"{TRAJECTORY_FORMAT_VERSION}")
        for field_name in ("task", "instruction", "steps"):
            if field_name not in data:
                raise ValueError(f"{src}: field {field_name!r} is missing")
        try:
            traj = cls.from_dict(_decode_arrays(data))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"{src}: field 'steps' is malformed: {exc}") from None
        for i, (step, row) in enumerate(zip(traj.steps, data["steps"])):
            png = row.get("screenshot_png")
            if png:
                try:
                    step.screenshot = _png_array(png)
                except (ValueError, OSError) as exc:
                    raise ValueError(f"{src}: field 'steps[{i}].screenshot_png' is not a PNG image: {exc}") from None
        return traj
