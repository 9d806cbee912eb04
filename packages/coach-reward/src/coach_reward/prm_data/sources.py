"""Where expert states come from: the simulated phone's scripted experts, recorded ``android_gym``
trajectories and AndroidControl-style episode files (with accessibility trees written as XML).
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from android_gym.actions import (
    Action,
    ActionParseError,
    Click,
    Finished,
    LongPress,
    OpenApp,
    PressBack,
    PressEnter,
    PressHome,
    Scroll,
    Type,
    Wait,
)
from coach_reward.prm_data.matching import _package, action_text
from coach_reward.prm_data.types import ExpertStep
from coach_reward.prompts import to_pil_image

__all__ = [
    "accessibility_tree_xml",
    "androidcontrol_action",
    "read_androidcontrol",
    "sim_expert_steps",
    "trajectory_expert_steps",
]

logger = logging.getLogger(__name__)


def _app_of_task(task: Any) -> str:
    names = getattr(task, "app_names", ()) or ()
    return str(names[0]) if names else ""


def sim_expert_steps(
    tasks: Sequence[str] | None = None,
    *,
    instances: int = 1,
    seed: int = 0,
    screenshots: bool = False,
    screen_size: tuple[int, int] = (1080, 2400),
    suite: str = "sim",
    skip_redundant: bool = True,
    progress: bool = False,
    stats: dict[str, int] | None = None,
) -> Iterator[ExpertStep]:
    """Expert states from the simulated phone: each task's scripted expert on ``AndroidSim-v0`` instances.

    Runs ``instances`` instances of every task in ``tasks`` (default: the whole suite) with the env seed
    ``seed`` (instance i uses AndroidWorld's per-instance seed rule). Only successful episodes are kept
    (as in the paper). With ``skip_redundant`` a state whose expert action left the screen unchanged
    (tapping the tab already shown, scrolling at the end of a list; waits and the final step excepted)
    yields no state, though the action stays in later states' history. ``stats`` (a dict) receives counters.
    """
    import gymnasium as gym

    import android_gym  # noqa: F401  (registers the env ids)
    from android_gym.tasks import list_tasks

    if instances < 1:
        raise ValueError(f"instances must be >= 1, got {instances}")
    if suite not in _SUITE_ENVS:
        raise ValueError(f"suite must be one of {sorted(_SUITE_ENVS)}, got {suite!r}")
    names = list(tasks) if tasks is not None else list_tasks(suite)
    counters = stats if stats is not None else {}
    for key in ("episodes", "kept_episodes", "failed_episodes", "redundant_steps", "steps"):
        counters.setdefault(key, 0)
    env = gym.make(f"android_gym:{_SUITE_ENVS[suite]}", screenshot=screenshots, screen_size=screen_size, task=names)
    base = env.unwrapped
    jobs = [(name, i) for name in names for i in range(instances)]
    try:
        for name, i in _progress(jobs, progress, "expert episodes"):
            obs, info = env.reset(seed=seed, options={"task": name, "instance": i})
            task = base.task
            width, height = base.device.screen_size
            episode: list[ExpertStep] = []
            history: list[str] = []
            redundant = 0
            done = False
            while not done:
                try:
                    action = base.expert_action()
                except (RuntimeError, StopIteration) as exc:  # ExpertStuck, or an expert that ran out of steps
                    logger.warning("expert of %s instance %d stopped: %s: %s", name, i, type(exc).__name__, exc)
                    info = {**info, "success": 0.0}
                    break
                ui_before = obs["ui"]
                step = ExpertStep(
                    instruction=obs["instruction"], ui=ui_before, expert=action, screen_size=(width, height),
                    history=tuple(history), elements=tuple(obs["elements"]),
                    screenshot=obs.get("screenshot"), source="sim", episode_id=f"{name}#{i}@{seed}", task=name,
                    app=_app_of_task(task), step_index=len(history))
                history.append(action_text(action))
                obs, _reward, terminated, truncated, info = env.step(action)
                done = terminated or truncated
                if skip_redundant and not done and obs["ui"] == ui_before and not isinstance(action, Wait):
                    redundant += 1
                    continue
                episode.append(step)
            counters["episodes"] += 1
            if info.get("success", 0.0) < 1.0:
                counters["failed_episodes"] += 1
                logger.warning("expert failed on %s instance %d (score %s); episode skipped", name, i,
                               info.get("success"))
                continue
            counters["kept_episodes"] += 1
            counters["redundant_steps"] += redundant
            counters["steps"] += len(episode)
            yield from episode
    finally:
        env.close()


_SUITE_ENVS = {"sim": "AndroidSim-v0", "android_world": "AndroidWorld-v0", "androidlab": "AndroidLab-v0"}


def trajectory_expert_steps(
    trajectories: Iterable[Any],
    *,
    screen_size: tuple[int, int] = (1080, 2400),
    min_success: float = 1.0,
    source: str = "trajectory",
) -> Iterator[ExpertStep]:
    """Expert states from recorded ``android_gym`` trajectories (or their dicts) that succeeded.

    A step without an action (an output that did not parse) ends the usable part of its episode.
    ``elements`` come from each step's raw ``xml`` when it was recorded; ``screen_size`` is used when a
    step's ``info`` has no ``screen_size``.
    """
    from android_gym.trajectory import Trajectory
    from android_gym.xml import compress_xml

    for n, traj in enumerate(trajectories):
        if isinstance(traj, Mapping):
            traj = Trajectory.from_dict(dict(traj))
        if not isinstance(traj, Trajectory):
            raise TypeError(f"trajectories[{n}] must be an android_gym Trajectory or its dict, got "
                            f"{type(traj).__name__}")
        if traj.success < min_success:
            continue
        history: list[str] = []
        for t, step in enumerate(traj.steps):
            if step.action is None:
                break
            size = tuple(step.info.get("screen_size", screen_size))
            elements: tuple[Any, ...] = ()
            if step.xml:
                elements = tuple(compress_xml(step.xml, screen_size=size).elements)  # type: ignore[arg-type]
            yield ExpertStep(
                instruction=traj.instruction, ui=step.ui, expert=step.action, screen_size=size,  # type: ignore[arg-type]
                history=tuple(history), elements=elements, screenshot=step.screenshot, source=source,
                episode_id=f"{traj.task}#{traj.seed if traj.seed is not None else n}", task=traj.task,
                app=str(traj.info.get("app", "")), step_index=t)
            history.append(action_text(step.action))


def _progress(items: Any, enabled: bool, desc: str, total: int | None = None) -> Any:
    if not enabled:
        return items
    from tqdm.auto import tqdm

    return tqdm(items, desc=desc, total=total)


# ---- AndroidControl --------------------------------------------------------------------------------

_AC_SIMPLE = {"navigate_home": PressHome, "navigate_back": PressBack, "wait": Wait, "keyboard_enter": PressEnter}


def androidcontrol_action(
    data: Mapping[str, Any] | str,
    *,
    screen_size: tuple[int, int],
    coordinates: str = "auto",
    invert_scroll: bool = False,
) -> Action:
    """One AndroidControl action (a JSON dict or its text) as an ``android_gym`` Action in screen pixels.

    ``action_type``: click, long_press (x, y), scroll (direction), open_app (app_name), type (x, y, text:
    tap, type, Enter), input_text (text only), navigate_home, navigate_back, wait; also keyboard_enter and
    status/answer (as ``finished``). ``coordinates``: "pixels", "relative" (0-1 fractions of the screen),
    "relative1000" (0-1000) or "auto" (relative when both values are within [0, 1] and not integers).
    ``invert_scroll`` flips scroll directions for data that records the finger's direction.
    """
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise ActionParseError(f"AndroidControl action is not JSON ({exc.msg} at {exc.pos})", text=data) from None
    if not isinstance(data, Mapping):
        raise ActionParseError(f"an AndroidControl action must be a JSON object, got {type(data).__name__}")
    if coordinates not in ("auto", "pixels", "relative", "relative1000"):
        raise ValueError(f"coordinates must be auto, pixels, relative or relative1000, got {coordinates!r}")
    kind = data.get("action_type")
    width, height = screen_size

    def point() -> tuple[int, int]:
        x, y = data.get("x"), data.get("y")
        for name, v in (("x", x), ("y", y)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
                raise ActionParseError(f"AndroidControl {kind!r} needs a numeric {name!r}, got {v!r}")
        space = coordinates
        if space == "auto":
            fractional = all(0.0 <= float(v) <= 1.0 for v in (x, y)) and not all(float(v).is_integer() for v in (x, y))
            space = "relative" if fractional else "pixels"
        if space == "relative":
            x, y = x * width, y * height
        elif space == "relative1000":
            x, y = x * width / 1000.0, y * height / 1000.0
        return (min(max(int(round(x)), 0), width - 1), min(max(int(round(y)), 0), height - 1))

    def text_field(name: str) -> str:
        value = data.get(name)
        if not isinstance(value, str):
            raise ActionParseError(f"AndroidControl {kind!r} needs a string {name!r}, got {value!r}")
        return value

    if kind in ("click", "long_press"):
        x, y = point()
        return Click(x, y) if kind == "click" else LongPress(x, y)
    if kind == "scroll":
        direction = text_field("direction").lower()
        flip = {"up": "down", "down": "up", "left": "right", "right": "left"}
        if direction not in flip:
            raise ActionParseError(f"AndroidControl scroll direction must be up/down/left/right, got {direction!r}")
        return Scroll(flip[direction] if invert_scroll else direction)
    if kind == "open_app":
        return OpenApp(text_field("app_name"))
    if kind == "type":
        x, y = point()
        return Type(text_field("text"), x, y, submit=True)
    if kind == "input_text":
        return Type(text_field("text"))
    if kind in _AC_SIMPLE:
        return _AC_SIMPLE[kind]()
    if kind in ("status", "answer"):
        return Finished(data.get("text") if kind == "answer" else None)
    raise ActionParseError(f"unknown AndroidControl action_type {kind!r}; expected click, long_press, scroll, "
                           "open_app, type, input_text, navigate_home, navigate_back or wait")


_XML_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\n": "&#10;", "\t": "&#9;"})


def _first(node: Mapping[str, Any], *keys: str, default: Any = None) -> Any:
    for key in keys:
        if key in node and node[key] is not None:
            return node[key]
    return default


def _node_bounds(node: Mapping[str, Any], screen_size: tuple[int, int]) -> tuple[int, int, int, int] | None:
    b = _first(node, "bounds_in_screen", "boundsInScreen", "bbox_pixels", "bbox", "bounds")
    if b is None:
        return None
    if isinstance(b, Mapping):
        if "left" in b or "right" in b:
            vals = [b.get("left", 0), b.get("top", 0), b.get("right", 0), b.get("bottom", 0)]
        else:
            vals = [b.get("x_min", 0), b.get("y_min", 0), b.get("x_max", 0), b.get("y_max", 0)]
    elif isinstance(b, str):
        nums = re.findall(r"-?\d+(?:\.\d+)?", b)
        if len(nums) != 4:
            return None
        vals = [float(v) for v in nums]
    elif isinstance(b, Sequence) and len(b) == 4:
        vals = list(b)
    else:
        return None
    try:
        x1, y1, x2, y2 = (float(v) for v in vals)
    except (TypeError, ValueError):
        return None
    if max(abs(x1), abs(y1), abs(x2), abs(y2)) <= 1.0 and (x2 > 0 or y2 > 0):  # relative bounds
        x1, x2, y1, y2 = x1 * screen_size[0], x2 * screen_size[0], y1 * screen_size[1], y2 * screen_size[1]
    return int(round(x1)), int(round(y1)), int(round(x2)), int(round(y2))


_FLAG_KEYS = {
    "clickable": ("is_clickable", "isClickable", "clickable"),
    "long-clickable": ("is_long_clickable", "isLongClickable", "long_clickable", "long-clickable"),
    "scrollable": ("is_scrollable", "isScrollable", "scrollable"),
    "checkable": ("is_checkable", "isCheckable", "checkable"),
    "checked": ("is_checked", "isChecked", "checked"),
    "focusable": ("is_focusable", "isFocusable", "focusable"),
    "focused": ("is_focused", "isFocused", "focused"),
    "selected": ("is_selected", "isSelected", "selected"),
    "enabled": ("is_enabled", "isEnabled", "enabled"),
    "editable": ("is_editable", "isEditable", "editable"),
    "password": ("is_password", "isPassword", "password"),
}


def _node_xml(node: Mapping[str, Any], screen_size: tuple[int, int]) -> str | None:
    bounds = _node_bounds(node, screen_size)
    if bounds is None:
        return None
    attrs = {
        "text": _first(node, "text", default=""),
        "resource-id": _first(node, "view_id_resource_name", "viewIdResourceName", "resource_name", "resource_id",
                              "resource-id", default=""),
        "class": _first(node, "class_name", "className", "class", default="android.view.View"),
        "package": _first(node, "package_name", "packageName", "package", default=""),
        "content-desc": _first(node, "content_description", "contentDescription", "content_desc", "content-desc",
                               default=""),
        "hint": _first(node, "hint_text", "hintText", "hint", default=""),
    }
    for name, keys in _FLAG_KEYS.items():
        value = _first(node, *keys, default=(name == "enabled"))
        attrs[name] = "true" if value in (True, "true", "True", 1) else "false"
    attrs["bounds"] = "[{},{}][{},{}]".format(*bounds)
    return " ".join(f'{k}="{str(v).translate(_XML_ESCAPES)}"' for k, v in attrs.items())


def accessibility_tree_xml(tree: Any, screen_size: tuple[int, int]) -> str:
    """A uiautomator-style XML dump from one AndroidControl-style accessibility tree, for ``compress_xml``.

    Accepted forms: uiautomator XML text (returned as is); a JSON rendering of Android's accessibility
    forest (``{"windows": [{"tree": {"nodes": [...]}}]}``, snake_case or camelCase as protobuf's JSON
    printer writes it; nodes nest by ``child_ids``/``childIds``); or a flat list of element dicts (bounds
    as ``bounds_in_screen`` {left, top, right, bottom}, ``bbox_pixels`` {x_min, ...}, ``bounds`` [x1, y1,
    x2, y2] or "[x1,y1][x2,y2]"; ``text``, ``content_description``, ``class_name``, ``resource_name`` /
    ``view_id_resource_name``, ``package_name`` and ``is_clickable``-style flags).
    """
    if isinstance(tree, str):
        text = tree.strip()
        if text.startswith("<"):
            return tree
        try:
            tree = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"accessibility tree is neither XML nor JSON ({exc.msg} at {exc.pos})") from None
    width, height = screen_size
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<hierarchy rotation="0">',
             f'<node class="android.widget.FrameLayout" package="" bounds="[0,0][{width},{height}]">']
    if isinstance(tree, Mapping) and "windows" in tree:
        for window in tree["windows"] or []:
            nodes = ((window or {}).get("tree") or {}).get("nodes") or []
            lines.extend(_nested_nodes(nodes, screen_size))
    elif isinstance(tree, Mapping) and "nodes" in tree:
        lines.extend(_nested_nodes(tree["nodes"] or [], screen_size))
    elif isinstance(tree, Sequence) and not isinstance(tree, (str, bytes)):
        for node in tree:
            if not isinstance(node, Mapping):
                raise ValueError(f"accessibility tree elements must be objects, got {type(node).__name__}")
            attrs = _node_xml(node, screen_size)
            if attrs is not None:
                lines.append(f"<node {attrs} />")
    else:
        raise ValueError(f"unsupported accessibility tree of type {type(tree).__name__}: expected XML text, "
                         "a {'windows': [...]} forest or a list of element objects")
    lines.extend(["</node>", "</hierarchy>"])
    return "\n".join(lines)


def _nested_nodes(nodes: Sequence[Any], screen_size: tuple[int, int]) -> list[str]:
    by_id: dict[Any, Mapping[str, Any]] = {}
    children: dict[Any, list[Any]] = {}
    order: list[Any] = []
    for i, node in enumerate(nodes):
        if not isinstance(node, Mapping):
            raise ValueError(f"accessibility forest node {i} must be an object, got {type(node).__name__}")
        key = _first(node, "unique_id", "uniqueId", "id", default=f"#{i}")
        by_id[key] = node
        order.append(key)
        children[key] = list(_first(node, "child_ids", "childIds", default=[]) or [])
    referenced = {c for cs in children.values() for c in cs}
    out: list[str] = []
    seen: set[Any] = set()

    def emit(key: Any, depth: int) -> None:
        if key in seen or key not in by_id or depth > 200:
            return
        seen.add(key)
        attrs = _node_xml(by_id[key], screen_size)
        kids = children.get(key, [])
        if attrs is None:
            for c in kids:
                emit(c, depth + 1)
            return
        if not kids:
            out.append(f"<node {attrs} />")
            return
        out.append(f"<node {attrs}>")
        for c in kids:
            emit(c, depth + 1)
        out.append("</node>")

    for key in order:
        if key not in referenced:
            emit(key, 0)
    for key in order:  # nodes only reachable through cycles or dangling parents
        emit(key, 0)
    return out


def _load_image(value: Any, base: Path, where: str) -> Any:
    """A PIL image from a path (relative to the episode file), a base64 string / data URL, or bytes."""
    from PIL import Image

    if value is None:
        return None
    if isinstance(value, (bytes, bytearray)):
        return to_pil_image(bytes(value))
    if not isinstance(value, str):
        raise ValueError(f"{where}: a screenshot must be a file path, base64 text or bytes, got {type(value).__name__}")
    if value.startswith("data:"):
        value = value.split(",", 1)[1] if "," in value else ""
    elif len(value) < 1024 and not value.startswith(("iVBOR", "/9j/")):
        path = (base / value) if not Path(value).is_absolute() else Path(value)
        if not path.is_file():
            raise FileNotFoundError(f"{where}: screenshot file not found: {path}")
        with Image.open(path) as img:
            img.load()
            return img.copy()
    try:
        return to_pil_image(base64.b64decode(value, validate=True))
    except (binascii.Error, ValueError, OSError) as exc:
        raise ValueError(f"{where}: the screenshot is neither a file nor base64 image data ({exc})") from None


def _episodes_in(path: Path) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as fh:
            for n, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    yield f"{path}:{n}", json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ValueError(f"{path}:{n}: not a JSON episode ({exc.msg} at column {exc.colno})") from None
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    if isinstance(data, Mapping) and "episodes" in data:
        data = data["episodes"]
    if isinstance(data, Mapping):
        yield str(path), data
    elif isinstance(data, list):
        for i, episode in enumerate(data):
            yield f"{path}[{i}]", episode
    else:
        raise ValueError(f"{path}: expected an episode object or a list of episodes, got {type(data).__name__}")


_SYSTEM_PACKAGES = ("com.android.systemui", "com.google.android.apps.nexuslauncher", "com.android.launcher3",
                    "com.google.android.inputmethod.latin", "android")


def _episode_app(trees_xml: list[str | None], actions: list[Action]) -> str:
    counts: Counter[str] = Counter()
    for xml in trees_xml:
        if xml:
            counts.update(p for p in re.findall(r'package="([^"]+)"', xml) if p and p not in _SYSTEM_PACKAGES)
    if counts:
        return counts.most_common(1)[0][0]
    for action in actions:
        if isinstance(action, OpenApp):
            return _package(action.app)
    return "unknown"


def read_androidcontrol(
    paths: str | Path | Sequence[str | Path],
    *,
    coordinates: str = "auto",
    invert_scroll: bool = False,
    screenshots: bool = True,
    ui_style: str = "androidlab",
) -> Iterator[ExpertStep]:
    """Expert states from AndroidControl-style episode files (``.json``: one episode or a list; ``.jsonl``).

    AndroidControl ships TFRecords; convert each record's fields to JSON (one object per episode):

    * ``goal`` (required): the episode's instruction. ``episode_id`` (optional, default: file name and index).
    * ``actions`` (required): JSON objects or JSON strings (see :func:`androidcontrol_action`); one
      fewer than the observations, as in AndroidControl (an equal count is accepted too).
    * ``accessibility_trees`` and/or ``screenshots``: one per observation. Trees: see
      :func:`accessibility_tree_xml`; screenshots: paths relative to the file, base64 PNG/JPEG or data URLs.
    * ``screenshot_widths`` / ``screenshot_heights`` (optional): the screen size per observation
      (default: the screenshot's size, else the tree's root bounds).
    * ``step_instructions`` (optional): one per action (kept in the ``step_instruction`` column).
    * ``app`` (optional): the app name or package for per-app reports (default: the most common
      non-system package in the trees).

    ``coordinates`` / ``invert_scroll`` as in :func:`androidcontrol_action`. Set ``screenshots=False``
    to skip loading images. Errors name the file, episode and step.
    """
    from android_gym.xml import compress_xml, parse_ui

    if isinstance(paths, (str, Path)):
        paths = [paths]
    files: list[Path] = []
    for p in paths:
        p = Path(p)
        if p.is_dir():
            files.extend(sorted(q for q in p.iterdir() if q.suffix in (".json", ".jsonl")))
        elif p.is_file():
            files.append(p)
        else:
            raise FileNotFoundError(f"AndroidControl episode file or folder not found: {p}")
    for file in files:
        for where, ep in _episodes_in(file):
            # The default episode id names the file, not its folder: the same files then give the same
            # dataset (the samplers seed on it) wherever they are read from.
            default_id = file.name + where[len(str(file)):]
            yield from _androidcontrol_episode(ep, where, default_id, file.parent, coordinates=coordinates,
                                               invert_scroll=invert_scroll, screenshots=screenshots,
                                               ui_style=ui_style, compress=compress_xml, parse=parse_ui)


def _androidcontrol_episode(ep: Any, where: str, default_id: str, base: Path, *, coordinates: str, invert_scroll: bool,
                            screenshots: bool, ui_style: str, compress: Callable[..., Any],
                            parse: Callable[..., Any]) -> Iterator[ExpertStep]:
    if not isinstance(ep, Mapping):
        raise ValueError(f"{where}: an episode must be a JSON object, got {type(ep).__name__}")
    goal = ep.get("goal")
    if not isinstance(goal, str) or not goal.strip():
        raise ValueError(f"{where}: the episode has no 'goal' text")
    raw_actions = ep.get("actions")
    if not isinstance(raw_actions, list) or not raw_actions:
        raise ValueError(f"{where}: the episode has no 'actions' list")
    trees = ep.get("accessibility_trees") or []
    shots = ep.get("screenshots") or []
    n_obs = max(len(trees), len(shots))
    if n_obs < len(raw_actions):
        raise ValueError(f"{where}: {len(raw_actions)} actions but only {n_obs} observations (accessibility_trees/"
                         "screenshots); AndroidControl has one observation per action plus the final one")
    widths, heights = ep.get("screenshot_widths") or [], ep.get("screenshot_heights") or []
    step_instr = ep.get("step_instructions") or []
    episode_id = str(ep.get("episode_id", default_id))
    steps: list[tuple[str, tuple[Any, ...], Any, tuple[int, int], str | None]] = []
    for t in range(len(raw_actions)):
        at = f"{where} step {t}"
        image = _load_image(shots[t], base, at) if (screenshots and t < len(shots)) else None
        tree = trees[t] if t < len(trees) else None
        size: tuple[int, int] | None = None
        if t < len(widths) and t < len(heights):
            size = (int(widths[t]), int(heights[t]))
        elif image is not None:
            size = image.size
        elif tree is not None and isinstance(tree, str) and tree.lstrip().startswith("<"):
            size = parse(tree).screen_size
        if size is None or size[0] <= 0 or size[1] <= 0:
            raise ValueError(f"{at}: no screen size (give screenshot_widths/heights, a screenshot or an XML tree)")
        xml = accessibility_tree_xml(tree, size) if tree is not None else None
        if xml is not None:
            try:
                ui = compress(xml, style=ui_style, screen_size=size)
            except ValueError as exc:
                raise ValueError(f"{at}: the accessibility tree cannot be read: {exc}") from exc
            steps.append((ui.text, tuple(ui.elements), image, size, xml))
        else:
            steps.append(("", (), image, size, None))
    actions: list[Action] = []
    for t, raw in enumerate(raw_actions):
        try:
            actions.append(androidcontrol_action(raw, screen_size=steps[t][3], coordinates=coordinates,
                                                 invert_scroll=invert_scroll))
        except ActionParseError as exc:
            raise ValueError(f"{where} step {t}: {exc}") from exc
    app = str(ep.get("app") or _episode_app([s[4] for s in steps], actions))
    history: list[str] = []
    for t, action in enumerate(actions):
        ui, elements, image, size, _ = steps[t]
        yield ExpertStep(
            instruction=goal, ui=ui, expert=action, screen_size=size, history=tuple(history), elements=elements,
            screenshot=image, step_instruction=str(step_instr[t]) if t < len(step_instr) else "",
            source="androidcontrol", episode_id=episode_id, task=episode_id, app=app, step_index=t)
        history.append(action_text(action))
