"""AndroidLab: its task YAMLs as env tasks, its trace folders as an export format, its metrics.

**Tasks.** AndroidLab keeps its tasks in YAML files (``evaluation/config/*.yaml`` in its checkout):
``APP``, ``package`` and ``tasks``, each with ``task_id``, ``task`` (the instruction),
``metric_type`` (``operation`` or ``query_detect``), ``metric_func`` and sometimes ``adb_query`` (an
``adb shell ...`` command whose output its judge reads at every step). :func:`load_androidlab_tasks`
reads them; :class:`AndroidLabSuite` turns each into an env task whose goal is the task text. Its
judges are per-task Python over the compressed XML of the trace, so there is no rule check here:
reward comes from an outcome verifier given to the env (anything with ``verify(trajectory,
device=, task=)``, e.g. coach_reward's judges); without one the reward is 0 and the success unknown
(``info["verified"]`` is False). The step budget is ``HUMAN_STEP_FACTOR`` (3) times the human step
count from ``ground_truth_length.json`` when known, else AndroidLab's ``max_rounds`` default (25).

**Traces.** :func:`export_androidlab_traces` writes episodes as AndroidLab's recorder does, so its
offline evaluator (``generate_result.py``) can score them: ``<out>/<task_id>_<time>/traces/trace.jsonl``
(one JSON line per step: ``trace_id``, ``index``, ``prompt``, ``image``, ``xml``, ``ac_xml``,
``current_activity``, ``window``, ``target``, ``parsed_action``, ``current_response`` and, for tasks
with an ``adb_query``, ``command``), the hierarchy dumps in ``xml/<index>.xml`` and the screenshots
in ``Screen/``. The evaluator finds a step's files by their base names in those two folders.

**Metrics.** :func:`androidlab_metrics` computes SR, RRR (human steps / agent steps over successful
episodes) and ROR (1 - share of consecutive screenshots more than 99.9 % identical) the way its
evaluator does.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import struct
import warnings
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from android_gym.actions import (
    Action,
    Click,
    Drag,
    Finished,
    LongPress,
    OpenApp,
    PressBack,
    PressEnter,
    PressHome,
    Scroll,
    Swipe,
    Type,
    Wait,
)
from android_gym.apps import resolve_package
from android_gym.device import Device, scroll_gesture
from android_gym.tasks.base import Task
from android_gym.trajectory import Trajectory

__all__ = [
    "DEFAULT_MAX_STEPS",
    "HUMAN_STEP_FACTOR",
    "JUDGE_GAPS",
    "AndroidLabSuite",
    "AndroidLabTask",
    "AndroidLabTaskSpec",
    "adb_query_probe",
    "androidlab_metrics",
    "androidlab_parsed_action",
    "encode_png",
    "export_androidlab_trace",
    "export_androidlab_traces",
    "find_human_steps",
    "load_androidlab_tasks",
    "load_human_steps",
]

HUMAN_STEP_FACTOR = 3.0
"""Step budget = this many times the human step count of a task (when it is known)."""

DEFAULT_MAX_STEPS = 25
"""Step budget when no human step count is known: AndroidLab's own ``max_rounds``."""

JUDGE_GAPS: dict[str, str] = {
    "clock_9": "its judge (find_matching_subtrees on 'Alarm') takes an alarm's time and switch only as the direct "
               "children of a node whose own text holds 'Alarm', while the judges of clock_1-6, 26 and 27 "
               "(find_subtrees_of_parents_with_key) take them as the siblings of such a node; no screen gives both, "
               "and the sim's alarm list reads the way those eight judges read it",
    "calendar_7": "its judge wants '30 minutes before' beside 'meeting', 'May 13' and the note, while the task "
                  "replaces that notification with 5 and 10 minutes before (a later revision of the judge, in "
                  "MobileRL's copy, looks for '10 minutes before')",
    "calendar_10": "its judge looks for 'this_day' (an underscore) while the task asks for an event \"this day\"",
    "calendar_14": "its judge looks for 'Yearly' beside 'exam' while the task asks to make the event all-day",
    "cantook_8": "its judge_page takes a screen only when every TextView's text holds 'Info' or 'Read', while its "
                 "check wants a TextView reading exactly 'Hamlet', which holds neither, so no screen passes both (the "
                 "status bar's clock fails judge_page too); the sim's info page lists 'Info', 'Read', 'Hamlet', "
                 "'100.0%' and 'Mark as unread', what the check wants",
    "cantook_9": "the same judge_page as cantook_8's (every TextView holding 'Info' or 'Read') while its check wants "
                 "a TextView reading exactly 'Oliver Twist' and one reading 'Mark as read', neither of which holds "
                 "them; the sim's info page lists 'Info', 'Read', 'Oliver Twist' and 'Mark as read'",
}
"""Re-created AndroidLab tasks with a rule judge that does not pass the expert's episode on the sim, and why.

The expert solves each (the sim's own check scores 1.0); AndroidLab's judge, run offline on the exported
trace, does not. Every other re-created task with a rule judge passes it (tests/android_gym/
test_androidlab_own_evaluator.py asserts both; tools/androidlab_judges_table.py writes the README table)."""

HUMAN_STEPS_FILE = "ground_truth_length.json"
QUERY_METRIC = "query_detect"
_ADB_SHELL = "adb shell "


# --- task YAMLs ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AndroidLabTaskSpec:
    """One task of an AndroidLab YAML: ``task_id``, the instruction and what its judge needs."""

    task_id: str
    instruction: str
    app: str
    package: str | None
    metric_type: str
    category: str | None = None
    metric_func: str | None = None
    adb_query: str | None = None
    human_steps: int | None = None
    source: str | None = None

    @property
    def is_query(self) -> bool:
        """A question task (its answer is judged), AndroidLab's ``metric_type: query_detect``."""
        return self.metric_type == QUERY_METRIC

    def max_steps(self, factor: float = HUMAN_STEP_FACTOR, default: int = DEFAULT_MAX_STEPS) -> int:
        """The step budget: ``ceil(factor * human_steps)`` when known, else ``default``."""
        if self.human_steps is None:
            return int(default)
        return max(1, math.ceil(factor * self.human_steps))


def _require_yaml() -> Any:
    try:
        import yaml
    except ImportError as exc:  # pragma: no cover - pyyaml is the androidlab extra
        raise ImportError("AndroidLab task YAMLs need pyyaml: pip install 'android-gym[androidlab]'") from exc
    return yaml


def _yaml_files(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Path]:
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    if not items:
        raise ValueError("tasks_path is empty: give an AndroidLab evaluation/config folder or YAML files")
    files: list[Path] = []
    for item in items:
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
            if not found:
                raise FileNotFoundError(f"no .yaml files under {path}")
            files.extend(found)
        elif path.is_file():
            files.append(path)
        else:
            raise FileNotFoundError(f"AndroidLab tasks path {path} does not exist")
    return files


def load_human_steps(path: str | os.PathLike[str]) -> dict[str, int]:
    """``{task_id: human steps}`` from a ``ground_truth_length.json``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path} is not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path} must map task ids to step counts, got {type(data).__name__}")
    steps: dict[str, int] = {}
    for key, value in data.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ValueError(f"{path}: human steps of {key!r} must be a positive number, got {value!r}")
        steps[str(key)] = int(value)
    return steps


def find_human_steps(paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> Path | None:
    """Where ``ground_truth_length.json`` is for these task paths, if anywhere.

    Looked for beside each given folder or YAML and where an AndroidLab checkout keeps it relative
    to ``evaluation/config`` (``evaluation/tasks/human_ground_turth/``).
    """
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    for item in items:
        path = Path(item)
        folder = path if path.is_dir() else path.parent
        for candidate in (folder / HUMAN_STEPS_FILE,
                          folder.parent / "tasks" / "human_ground_turth" / HUMAN_STEPS_FILE,
                          folder / "tasks" / "human_ground_turth" / HUMAN_STEPS_FILE):
            if candidate.is_file():
                return candidate
    return None


def load_androidlab_tasks(
    paths: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    human_steps: Mapping[str, int] | str | os.PathLike[str] | None = None,
) -> list[AndroidLabTaskSpec]:
    """Every task in AndroidLab task YAMLs (a folder, searched recursively, or files), in file order.

    YAML files without a ``tasks`` list (AndroidLab's ``run_*.yaml`` agent configs) are skipped.
    ``human_steps``: a ``{task_id: steps}`` mapping or a ``ground_truth_length.json`` path; by default
    it is looked up with :func:`find_human_steps`. A malformed file or a task id used twice raises
    ValueError naming the file and the problem.
    """
    yaml = _require_yaml()
    if human_steps is None:
        found = find_human_steps(paths)
        steps = load_human_steps(found) if found is not None else {}
    elif isinstance(human_steps, Mapping):
        steps = {str(k): int(v) for k, v in human_steps.items()}
    else:
        steps = load_human_steps(human_steps)
    specs: list[AndroidLabTaskSpec] = []
    seen: dict[str, Path] = {}
    for file in _yaml_files(paths):
        try:
            data = yaml.safe_load(file.read_text(encoding="utf-8"))
        except yaml.YAMLError as exc:
            raise ValueError(f"{file}: not valid YAML: {exc}") from exc
        if not isinstance(data, dict) or "tasks" not in data:
            continue  # an agent/run config, not a task list
        app = data.get("APP")
        tasks = data["tasks"]
        if not isinstance(app, str) or not app:
            raise ValueError(f"{file}: needs a top-level 'APP' name")
        if not isinstance(tasks, list):
            raise ValueError(f"{file}: 'tasks' must be a list, got {type(tasks).__name__}")
        package = data.get("package")
        for i, entry in enumerate(tasks):
            if not isinstance(entry, dict):
                raise ValueError(f"{file}: task #{i} must be a mapping, got {type(entry).__name__}")
            task_id, text = entry.get("task_id"), entry.get("task")
            if not isinstance(task_id, str) or not task_id.strip():
                raise ValueError(f"{file}: task #{i} has no 'task_id'")
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"{file}: task {task_id!r} has no 'task' text")
            if task_id in seen:
                raise ValueError(f"task id {task_id!r} appears in both {seen[task_id]} and {file}")
            seen[task_id] = file
            query = entry.get("adb_query")
            specs.append(AndroidLabTaskSpec(
                task_id=task_id, instruction=text.strip(), app=app, package=package if isinstance(package, str) else None,
                metric_type=str(entry.get("metric_type") or "operation"), category=entry.get("category"),
                metric_func=entry.get("metric_func"), adb_query=query if isinstance(query, str) else None,
                human_steps=steps.get(task_id), source=str(file),
            ))
    if not specs:
        raise ValueError(f"no AndroidLab tasks found in {paths}")
    return specs


def adb_query_probe(query: str | None, device: Device) -> dict[str, Any]:
    """What AndroidLab's recorder stores per step for a task's ``adb_query``: ``{"command": {query: output}}``.

    The query (``adb shell ...``) runs in the device shell; the output is stripped, as AndroidLab's
    controller returns it. Queries that are not ``adb shell`` commands give ``{}``.
    """
    if not query or not query.startswith(_ADB_SHELL):
        return {}
    return {"command": {query: device.shell(query[len(_ADB_SHELL):]).strip()}}


class AndroidLabTask(Task):
    """One AndroidLab YAML task as an env task: goal = its text, no parameters, no rule check.

    ``initialize`` goes home and, like AndroidLab's ``in_app`` mode, starts the task's app from a
    stopped state; ``teardown`` stops it. There is no ``is_successful``: the env scores these tasks
    with the outcome verifier it was given (or not at all). ``trace_probe`` runs the task's
    ``adb_query`` so exported traces carry the ``command`` field AndroidLab's judges read.
    """

    spec: ClassVar[AndroidLabTaskSpec]
    step_factor: ClassVar[float] = HUMAN_STEP_FACTOR
    default_max_steps: ClassVar[int] = DEFAULT_MAX_STEPS
    start_in_app: ClassVar[bool] = True
    suites: ClassVar[tuple[str, ...]] = ("androidlab",)

    @property
    def goal(self) -> str:
        """The task text, as written in the YAML (never formatted)."""
        return self.spec.instruction

    @property
    def max_steps(self) -> int:
        """``step_factor`` x human steps, else ``default_max_steps``."""
        return self.spec.max_steps(self.step_factor, self.default_max_steps)

    def initialize(self, device: Device) -> None:
        """Home screen, then (``start_in_app``) the task's app freshly started."""
        device.shell("input keyevent 3")
        package = self.spec.package
        if self.start_in_app and package:
            device.shell(f"am force-stop {package}")
            device.shell(f"monkey -p {package} -c android.intent.category.LAUNCHER 1")

    def teardown(self, device: Device) -> None:
        """Stop the task's app."""
        if self.spec.package:
            device.shell(f"am force-stop {self.spec.package}")

    def trace_probe(self, device: Device) -> dict[str, Any]:
        """``{"command": {adb_query: output}}`` for tasks with an ``adb shell`` query, else ``{}``."""
        return adb_query_probe(self.spec.adb_query, device)


class AndroidLabSuite:
    """AndroidLab YAML tasks as a task source for :class:`~android_gym.envs.AndroidEnv` (``AndroidLab-v0``)."""

    suite = "androidlab"

    def __init__(self, tasks_path: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
                 human_steps: Mapping[str, int] | str | os.PathLike[str] | None = None,
                 step_factor: float = HUMAN_STEP_FACTOR, default_max_steps: int = DEFAULT_MAX_STEPS,
                 start_in_app: bool = True):
        if step_factor <= 0 or default_max_steps < 1:
            raise ValueError("step_factor must be positive and default_max_steps at least 1")
        self.specs = {spec.task_id: spec for spec in load_androidlab_tasks(tasks_path, human_steps)}
        self.step_factor = float(step_factor)
        self.default_max_steps = int(default_max_steps)
        self.start_in_app = bool(start_in_app)
        self._classes: dict[str, type[AndroidLabTask]] = {}

    def names(self) -> list[str]:
        """Task ids in file order."""
        return list(self.specs)

    def task_class(self, name: str) -> type[AndroidLabTask]:
        """The :class:`AndroidLabTask` subclass for ``task_id``; KeyError listing close ids otherwise."""
        spec = self.specs.get(name)
        if spec is None:
            import difflib

            close = difflib.get_close_matches(name, self.specs, n=5)
            hint = f"; did you mean {', '.join(close)}?" if close else ""
            raise KeyError(f"no AndroidLab task {name!r} in the loaded YAMLs{hint}")
        cls = self._classes.get(name)
        if cls is None:
            cls = type(f"Lab_{name}", (AndroidLabTask,), {
                "name": name, "spec": spec, "template": spec.instruction, "answer_task": spec.is_query,
                "app_names": (spec.app,), "step_factor": self.step_factor,
                "default_max_steps": self.default_max_steps, "start_in_app": self.start_in_app,
                "__module__": __name__, "__doc__": f"AndroidLab task {name}: {spec.instruction}",
            })
            self._classes[name] = cls
        return cls

    def attach(self, device: Device) -> None:
        """Nothing to bind: these tasks use the device they are handed."""

    def trace_probe(self, task: Task, device: Device) -> dict[str, Any]:
        """The per-step extras recorded in traces: the task's ``adb_query`` output."""
        spec = self.specs.get(task.name)
        return adb_query_probe(spec.adb_query if spec is not None else None, device)


# --- parsed actions -------------------------------------------------------------------------------------------


def _swipe_words(x: int, y: int, end_x: int, end_y: int) -> tuple[str, int]:
    dx, dy = end_x - x, end_y - y
    if abs(dx) > abs(dy):
        return ("right" if dx > 0 else "left"), abs(dx)
    return ("down" if dy > 0 else "up"), abs(dy) // 2


def androidlab_parsed_action(action: Action | None, screen_size: tuple[int, int] | None = None,
                             parse_error: str | None = None) -> dict[str, Any]:
    """The ``parsed_action`` AndroidLab's executor records for ``action``.

    ``{"operation": "do", "action": "Tap", "kwargs": {"element": [x, y]}}``, ``"Long Press"``,
    ``"Type"`` (``text``), ``"Swipe"`` (``element``, ``direction`` of the finger, ``dist`` in pixels
    per unit), ``"Press Enter"``/``"Press Back"``/``"Press Home"``, ``"Wait"``, ``"Launch"``
    (``package``) and ``{"operation": "finish", "action": "finish", "kwargs": {"message": ...}}``.
    Scrolls and drags become the Swipe of the same finger path (AndroidLab has neither); an action
    that could not be parsed is ``{"operation": "do", "action": "Invalid", "kwargs": {"error": ...}}``.
    """
    if action is None:
        return {"operation": "do", "action": "Invalid", "kwargs": {"error": parse_error or "no action"}}
    if isinstance(action, Click):
        return {"operation": "do", "action": "Tap", "kwargs": {"element": [action.x, action.y]}}
    if isinstance(action, LongPress):
        return {"operation": "do", "action": "Long Press", "kwargs": {"element": [action.x, action.y]}}
    if isinstance(action, Type):
        kwargs: dict[str, Any] = {"text": action.text}
        if action.x is not None and action.y is not None:
            kwargs["element"] = [action.x, action.y]
        return {"operation": "do", "action": "Type", "kwargs": kwargs}
    if isinstance(action, (Swipe, Drag)):
        direction, dist = _swipe_words(action.x, action.y, action.end_x, action.end_y)
        return {"operation": "do", "action": "Swipe",
                "kwargs": {"element": [action.x, action.y], "direction": direction, "dist": dist}}
    if isinstance(action, Scroll):
        width, height = screen_size or (1080, 2400)
        x = width // 2 if action.x is None else action.x
        y = height // 2 if action.y is None else action.y
        x1, y1, x2, y2 = scroll_gesture(action.direction, x, y, width, height)
        direction, dist = _swipe_words(x1, y1, x2, y2)
        return {"operation": "do", "action": "Swipe",
                "kwargs": {"element": [x1, y1], "direction": direction, "dist": dist}}
    if isinstance(action, PressEnter):
        return {"operation": "do", "action": "Press Enter"}
    if isinstance(action, PressBack):
        return {"operation": "do", "action": "Press Back"}
    if isinstance(action, PressHome):
        return {"operation": "do", "action": "Press Home"}
    if isinstance(action, Wait):
        return {"operation": "do", "action": "Wait"}
    if isinstance(action, OpenApp):
        try:
            package = resolve_package(action.app)
        except ValueError:
            package = action.app
        return {"operation": "do", "action": "Launch", "kwargs": {"package": package}}
    if isinstance(action, Finished):
        return {"operation": "finish", "action": "finish", "kwargs": {"message": action.text}}
    raise TypeError(f"no AndroidLab form for {action!r}")


def _response_text(step: Any, screen_size: tuple[int, int] | None) -> str:
    if step.response:
        return str(step.response)
    if step.action is None:
        return ""
    from android_gym.actions import ActionFormatError, format_action

    try:
        return format_action(step.action, "androidlab", screen_size=screen_size)
    except (ActionFormatError, ValueError):
        return json.dumps(step.action.to_dict(), ensure_ascii=False)


# --- trace export ----------------------------------------------------------------------------------------------


def _window(trajectory: Trajectory) -> list[int] | None:
    window = trajectory.info.get("window")
    if window is not None:
        return [int(window[0]), int(window[1])]
    for step in trajectory.steps:
        if step.screenshot is not None:
            return [int(step.screenshot.shape[1]), int(step.screenshot.shape[0])]
    return None


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode_png(pixels: Any) -> bytes:
    """An RGB (HxWx3) or grey (HxW) uint8 image as PNG bytes, quickly: no row filters, zlib level 1.

    About 3x faster than Pillow's adaptive filtering on phone screenshots, which matters when every
    step of every recorded episode is saved; any PNG reader decodes it.
    """
    array = np.ascontiguousarray(np.asarray(pixels, dtype=np.uint8))
    if array.ndim == 2:
        colour = 0
    elif array.ndim == 3 and array.shape[2] == 3:
        colour = 2
    else:
        raise ValueError(f"a screenshot must be HxWx3 or HxW uint8, got shape {array.shape}")
    height, width = array.shape[:2]
    rows = array.reshape(height, -1)
    raw = np.hstack([np.zeros((height, 1), dtype=np.uint8), rows]).tobytes()  # filter byte 0 on every row
    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", zlib.compress(raw, 1))
            + _png_chunk(b"IEND", b""))


def _save_png(pixels: Any, path: Path) -> None:
    path.write_bytes(encode_png(pixels))


def export_androidlab_trace(trajectory: Trajectory, out_dir: str | os.PathLike[str], *,
                            task_id: str | None = None, timestamp: dt.datetime | None = None) -> Path:
    """Write one episode as an AndroidLab trace folder under ``out_dir``; returns the folder.

    The folder is ``<task_id>_<YYYY-mm-dd_HH-MM-SS>`` (a ``_<n>`` suffix keeps repeated runs apart);
    ``task_id`` defaults to ``trajectory.task``. Every step needs its hierarchy XML (``Step.xml``);
    steps without a screenshot still get an ``image`` path (the evaluator skips a line without
    one), with a warning, because AndroidLab's ROR then sees identical screens.
    """
    task_id = task_id or trajectory.task
    if not task_id or "/" in task_id or task_id.startswith("."):
        raise ValueError(f"bad task id for a trace folder: {task_id!r}")
    missing_xml = [i for i, s in enumerate(trajectory.steps) if not s.xml]
    if missing_xml:
        raise ValueError(f"trajectory of {task_id} has steps without hierarchy XML ({missing_xml[:5]}); "
                         "record episodes with the env's record option or keep Step.xml")
    out = Path(out_dir)
    stamp = (timestamp or dt.datetime.now()).strftime("%Y-%m-%d_%H-%M-%S")
    name = f"{task_id}_{stamp}"
    root = out / name
    n = 1
    while root.exists():
        n += 1
        root = out / f"{name}_{n}"
    trace_dir, xml_dir, screen_dir = root / "traces", root / "xml", root / "Screen"
    for folder in (trace_dir, xml_dir, screen_dir):
        folder.mkdir(parents=True, exist_ok=True)
    window = _window(trajectory)
    screen_size = (window[0], window[1]) if window else None
    no_screens = 0
    lines = []
    for index, step in enumerate(trajectory.steps):
        xml_path = xml_dir / f"{index}.xml"
        xml_path.write_text(step.xml or "", encoding="utf-8")
        (xml_dir / f"{index}_compressed_xml.txt").write_text(step.ui or "", encoding="utf-8")
        image_path = screen_dir / f"screenshot-{index}-{stamp}-before.png"
        if step.screenshot is not None:
            _save_png(step.screenshot, image_path)
        else:
            no_screens += 1
        line: dict[str, Any] = {
            "trace_id": root.name,
            "index": index,
            "prompt": trajectory.instruction if index == 0 else "** XML **",
            "image": str(image_path),
            "xml": str(xml_path),
            "ac_xml": None,
            "current_activity": step.info.get("activity"),
            "window": window,
            "target": trajectory.instruction,
        }
        if "command" in step.info:
            line["command"] = dict(step.info["command"])
        line["parsed_action"] = androidlab_parsed_action(step.action, screen_size, step.parse_error)
        line["current_response"] = _response_text(step, screen_size)
        lines.append(line)
    with (trace_dir / "trace.jsonl").open("w", encoding="utf-8") as f:
        for line in lines:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
    if no_screens:
        warnings.warn(f"{root.name}: {no_screens} of {len(lines)} steps have no screenshot; AndroidLab's ROR "
                      "will count them as unchanged screens", RuntimeWarning, stacklevel=2)
    return root


def export_androidlab_traces(trajectories: Iterable[Trajectory], out_dir: str | os.PathLike[str], *,
                             timestamp: dt.datetime | None = None) -> list[Path]:
    """Write episodes as AndroidLab trace folders under ``out_dir`` (one per episode); returns the folders.

    Point AndroidLab's ``generate_result.py --input_folder`` at the parent of ``out_dir`` (its
    folders are one per agent) to score them with its judges.
    """
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    return [export_androidlab_trace(t, out_dir, timestamp=timestamp) for t in trajectories]


# --- metrics ---------------------------------------------------------------------------------------------------


def _screens_identical(a: np.ndarray, b: np.ndarray, threshold: float = 0.999) -> bool:
    """AndroidLab's test: share of equal values among the non-white ones above ``threshold``."""
    if a.shape != b.shape:
        return False
    either = np.logical_or(a != 255, b != 255)
    total = float(either.sum())
    if total == 0:
        return True
    return float(np.logical_and(a == b, either).sum()) / total > threshold


def _ror(trajectory: Trajectory) -> float:
    shots = [s.screenshot for s in trajectory.steps]
    length = len(shots)
    if length <= 1:
        return 1.0
    images = [np.zeros((1, 1, 3), dtype=np.uint8) if s is None else np.asarray(s) for s in shots[:-1]]
    same = 0
    if len(shots) > 2:
        same = sum(_screens_identical(images[i], images[i + 1]) for i in range(len(images) - 1))
    return 1.0 - same / (length - 1)


def androidlab_metrics(trajectories: Sequence[Trajectory], human_steps: Mapping[str, int] | None = None,
                       total: int | None = None) -> dict[str, Any]:
    """SR, RRR and ROR over episodes, as AndroidLab's evaluator defines them (percentages).

    SR: successful episodes (``trajectory.success >= 1``) over ``total`` (default: the number of
    episodes; AndroidLab divides by its 138 tasks). RRR: mean of human steps / agent steps over
    successful episodes whose task has a human step count. ROR: mean over episodes of 1 - (pairs of
    consecutive screenshots that are >99.9 % identical) / (steps - 1), with AndroidLab's quirk of
    comparing the screenshots before the last step only. Sub-SR needs AndroidLab's per-task
    sub-goal judges and is not computed here.
    """
    if not trajectories:
        raise ValueError("no trajectories to score")
    human_steps = human_steps or {}
    n = len(trajectories) if total is None else int(total)
    successes = [t for t in trajectories if t.success >= 1.0]
    rrr = [human_steps[t.task] / len(t.steps) for t in successes if t.task in human_steps and len(t.steps)]
    rors = [_ror(t) for t in trajectories]
    return {
        "episodes": len(trajectories),
        "successes": len(successes),
        "SR": 100.0 * len(successes) / n,
        "RRR": 100.0 * sum(rrr) / len(rrr) if rrr else None,
        "ROR": 100.0 * sum(rors) / len(rors),
    }
