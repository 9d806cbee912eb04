"""Replay real AndroidWorld episodes on the simulated phone and compare, step by step (``android-gym replay``).

:func:`load_real_episodes` reads episodes recorded on emulators in two formats:

- AndroidWorld's own episode files (``run.py``'s gzipped pickles: a list of dicts with ``goal``,
  ``task_template`` (the task name), ``seed``, ``is_successful`` and ``episode_data``, whose per-step lists
  hold ``before_element_list`` (AndroidWorld ``UIElement`` objects) and ``action_output`` (the reply with a
  JSON action)). They are read with a restricted unpickler that builds plain records instead of importing
  classes, so a file cannot run code and android_world need not be installed to read one;
- JSON logs in the layout many public AndroidWorld agent repositories write: top-level ``task_name``,
  ``goal``, ``success`` / ``task_actually_successful``, and ``step_records`` whose
  ``agent_data.before_element_list`` holds ``UIElement`` fields and whose ``action`` is the reply with a JSON
  action (``index`` actions point into that list).

Anything else raises ``ValueError`` naming the file and the field.

:func:`replay_episode` sets up the same task instance on the simulated phone with AndroidWorld's own task
class (``AndroidWorld-v0``; android_world must be installed): with the episode's parameters where the file
has them (its ``seed``, when AndroidWorld's ``generate_random_params`` under that seed gives the episode's goal),
else with the parameters read back from the goal through the task's own ``template`` (parameters the goal does
not show are drawn; the result says which). Random state of the real run that neither the parameters nor the
file keep is read back from the real screens that show it, before the first step, and reported under
``recovered_from_screen``: the launcher's predicted app (:func:`recover_predicted_app`), whether its page is
described "Home" (:func:`recover_home_page`), whether Bluetooth was left on (:func:`recover_bluetooth`) and the
noise files
AndroidWorld's file tasks draw (:func:`recover_noise_files`). Then every real step's action is performed on the
sim; before each step the sim's clock is moved on to the minute the real status bar shows
(:func:`follow_real_clock`: the real run's minutes pass while its agent thinks, the sim's only per input), and per
step the real element list is set beside the sim's for the same state, built the way AndroidWorld builds it
(``forest_to_ui_elements`` keeps leaves, nodes with a content description and scrollable nodes; the sim's
uiautomator dump goes through AndroidWorld's ``xml_dump_to_ui_elements`` and the same rule, each window's nodes
breadth first as the accessibility forwarder lists them). Elements match
on text, content description, resource name, class and clickability, position by position (index actions
depend on the order), and as a multiset. An ``index`` action is performed on the sim's element at the same
index, and the step records whether that is the element the real episode acted on. At the end AndroidWorld's
``is_successful`` on the sim is compared with the real episode's outcome.

:func:`replay_episodes` writes ``summary.json`` (per episode, per task and overall: element agreement,
action agreement, outcome agreement, the first step where the two diverge) and one side-by-side HTML page
per episode (the real element list drawn as a wireframe beside the sim's screenshot, see
:mod:`android_gym.episode_page`).
"""

from __future__ import annotations

import datetime as _dt
import gzip
import io
import json
import math
import os
import pickle
import re
import string
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "ELEMENT_KEYS",
    "RealEpisode",
    "RealStep",
    "element_key",
    "expert_path_length",
    "load_real_episodes",
    "real_folder_listing",
    "recover_noise_files",
    "recover_bluetooth",
    "recover_home_page",
    "recover_predicted_app",
    "follow_real_clock",
    "recover_params",
    "replay_episode",
    "replay_episode_resync",
    "replay_episodes",
    "screen_app",
    "screen_type",
    "summarise_resync",
    "sim_ui_elements",
]

ELEMENT_KEYS: tuple[str, ...] = ("text", "content_description", "resource_name", "class_name", "is_clickable")
"""What two elements must share to count as the same element."""

_UI_FIELDS = ("text", "content_description", "class_name", "hint_text", "is_checked", "is_checkable", "is_clickable",
              "is_editable", "is_enabled", "is_focused", "is_focusable", "is_long_clickable", "is_scrollable",
              "is_selected", "is_visible", "package_name", "resource_name", "resource_id", "tooltip")


@dataclass
class RealStep:
    """One recorded step: the element list the agent read (plain dicts of ``UIElement`` fields) and its reply.

    ``action`` is the JSON action parsed out of ``reply`` (None when there is none; ``action_error`` says why).
    """

    index: int
    elements: list[dict[str, Any]]
    reply: str
    action: dict[str, Any] | None
    action_error: str | None = None


@dataclass
class RealEpisode:
    """A real episode: where it came from, the task, its goal and outcome, parameters or seed, and its steps.

    ``success`` is the real outcome (1.0/0.0; None when the file does not say); ``no_steps_reason`` explains an
    episode whose file records no per-step element lists.
    """

    source: str
    format: str
    task: str
    goal: str
    success: float | None
    steps: list[RealStep] = field(default_factory=list)
    seed: int | None = None
    params: dict[str, Any] | None = None
    screen_size: tuple[int, int] | None = None
    no_steps_reason: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


# -- reading ----------------------------------------------------------------------------------------------


class _Record:
    """Stands in for any android_world class inside a pickle: keeps the state, runs nothing."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.__dict__["_args"] = args
        self.__dict__.update(kwargs)

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple) and len(state) == 2:
            state = {**(state[0] or {}), **(state[1] or {})}
        if isinstance(state, dict):
            self.__dict__.update(state)


_SAFE_GLOBALS = {
    ("datetime", "datetime"), ("datetime", "date"), ("datetime", "timedelta"), ("datetime", "timezone"),
    ("collections", "OrderedDict"), ("builtins", "set"), ("builtins", "frozenset"), ("builtins", "complex"),
    ("builtins", "object"), ("copyreg", "_reconstructor"),
    ("numpy", "ndarray"), ("numpy", "dtype"), ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar"),
    ("numpy._core.multiarray", "scalar"),
}


class _EpisodeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _SAFE_GLOBALS:
            return super().find_class(module, name)
        if module == "android_world" or module.startswith("android_world."):
            return type(name, (_Record,), {"__module__": "android_gym.replay.records"})
        raise pickle.UnpicklingError(f"refusing to load {module}.{name} (not a class AndroidWorld episodes hold)")


def _plain_element(element: Any, where: str) -> dict[str, Any]:
    """A ``UIElement`` (dict, record or object) as a dict of its fields, ``bbox_pixels`` as (x1, y1, x2, y2)."""
    get = element.get if isinstance(element, Mapping) else (lambda k, d=None: getattr(element, k, d))
    if not isinstance(element, Mapping) and not hasattr(element, "__dict__") and not hasattr(element, "text"):
        raise ValueError(f"{where} is not a UIElement (got {type(element).__name__})")
    out = {k: get(k) for k in _UI_FIELDS}
    box = get("bbox_pixels")
    if box is not None:
        bget = box.get if isinstance(box, Mapping) else (lambda k, d=None: getattr(box, k, d))
        try:
            out["bbox_pixels"] = tuple(int(round(float(bget(k)))) for k in ("x_min", "y_min", "x_max", "y_max"))
        except (TypeError, ValueError):
            out["bbox_pixels"] = None
    else:
        out["bbox_pixels"] = None
    return out


def element_key(element: Mapping[str, Any]) -> tuple[str, str, str, str, bool]:
    """The identity two elements must share: text, content description, resource name, class, clickability.

    Missing values count as empty; the resource name is ``resource_name``, else ``resource_id`` (a
    uiautomator dump names the same thing ``resource-id``).
    """
    resource = element.get("resource_name") or element.get("resource_id") or ""
    return (str(element.get("text") or ""), str(element.get("content_description") or ""), str(resource),
            str(element.get("class_name") or ""), bool(element.get("is_clickable")))


_ACTION_RE = re.compile(r"Action:\s*", re.I)


def _action_from_reply(reply: str) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON action object in a reply (after ``Action:``, else the last ``{...}``), or None and why not."""
    if not reply:
        return None, "the reply is empty"
    matches = list(_ACTION_RE.finditer(reply))
    text = reply[matches[-1].end():] if matches else reply
    start = text.find("{")
    if start < 0:
        return None, "the reply has no JSON action"
    depth = 0
    for i, ch in enumerate(text[start:], start):
        depth += ch == "{"
        depth -= ch == "}"
        if depth == 0:
            try:
                data = json.loads(text[start:i + 1])
            except json.JSONDecodeError as exc:
                return None, f"the reply's action is not JSON: {exc}"
            if not isinstance(data, dict) or "action_type" not in data:
                return None, "the reply's JSON has no action_type"
            return data, None
    return None, "the reply's JSON action is not closed"


def _as_float(value: Any) -> float | None:
    if isinstance(value, str):
        value = {"true": 1.0, "false": 0.0}.get(value.strip().lower(), value)
    try:
        out = float(value)
    except (TypeError, ValueError):
        return None
    return out if math.isfinite(out) else None


def _json_episode(data: Mapping[str, Any], src: Path) -> RealEpisode:
    for name in ("task_name", "goal", "step_records"):
        if name not in data:
            raise ValueError(f"{src}: field {name!r} is missing (not an AndroidWorld agent log with step_records)")
    records = data["step_records"]
    if not isinstance(records, list):
        raise ValueError(f"{src}: field 'step_records' must be a list, got {type(records).__name__}")
    outcome = data.get("task_actually_successful", data.get("success"))
    steps = []
    for i, record in enumerate(records):
        where = f"{src}: field 'step_records[{i}]"
        if not isinstance(record, Mapping):
            raise ValueError(f"{where}' must be an object")
        agent = record.get("agent_data")
        if not isinstance(agent, Mapping) or not isinstance(agent.get("before_element_list"), list):
            raise ValueError(f"{where}.agent_data.before_element_list' is missing or not a list")
        elements = [_plain_element(e, f"{where}.agent_data.before_element_list[{j}]'")
                    for j, e in enumerate(agent["before_element_list"])]
        reply = record.get("action")
        if not isinstance(reply, str):
            reply = agent.get("action_output") if isinstance(agent.get("action_output"), str) else ""
        action, error = _action_from_reply(reply)
        steps.append(RealStep(index=i, elements=elements, reply=reply, action=action, action_error=error))
    meta = {k: data[k] for k in ("model_name", "prompt_variant", "agent_claimed_done", "steps_taken")
            if k in data}
    return RealEpisode(source=str(src), format="agent_json_log", task=str(data["task_name"]), goal=str(data["goal"]),
                       success=_as_float(outcome), steps=steps, meta=meta)


def _json_action(action: Any) -> tuple[dict[str, Any] | None, str | None]:
    """An AndroidWorld ``JSONAction`` (record or dict) as the action dict its JSON form is: the fields it sets."""
    if action is None:
        return None, "no action was recorded for this step"
    fields = action if isinstance(action, Mapping) else getattr(action, "__dict__", None)
    if not isinstance(fields, Mapping) or not fields.get("action_type"):
        return None, f"the recorded action is not a JSONAction (got {type(action).__name__})"
    return {str(k): v for k, v in fields.items() if v is not None and not str(k).startswith("_")}, None


def _pickle_episode(data: Any, src: Path, n: int) -> RealEpisode:
    where = f"{src}: episode {n}"
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} is a {type(data).__name__}, not an AndroidWorld episode dict")
    for name in ("goal", "task_template", "episode_data"):
        if name not in data:
            raise ValueError(f"{where}: field {name!r} is missing (not an AndroidWorld episode)")
    episode_data = data["episode_data"] or {}
    if not isinstance(episode_data, Mapping):
        raise ValueError(f"{where}: field 'episode_data' must be a dict of per-step lists")
    # T3A/M3A-style agents keep the element list they read as ``before_element_list`` and the model's reply as
    # ``action_output``; agents without a language model keep the environment's ``State.ui_elements`` and the
    # ``JSONAction`` they performed (``android_action``).
    field_name = "before_element_list" if episode_data.get("before_element_list") else "ui_elements"
    elements_per_step = episode_data.get(field_name)
    replies = episode_data.get("action_output") or []
    performed = episode_data.get("android_action") or []
    steps: list[RealStep] = []
    reason = None
    if not elements_per_step:
        reason = ("the file records no per-step UI element lists (episode_data holds "
                  f"{', '.join(sorted(map(str, episode_data))) or 'nothing'})")
    else:
        for i, elements in enumerate(elements_per_step):
            if elements is None:
                raise ValueError(f"{where}: field 'episode_data.{field_name}[{i}]' is empty")
            plain = [_plain_element(e, f"{where}: field 'episode_data.{field_name}[{i}][{j}]'")
                     for j, e in enumerate(elements)]
            reply = replies[i] if i < len(replies) and isinstance(replies[i], str) else ""
            if reply or i >= len(performed):
                action, error = _action_from_reply(reply)
            else:
                action, error = _json_action(performed[i])
            steps.append(RealStep(index=i, elements=plain, reply=reply, action=action, action_error=error))
    screen = data.get("screen_config") or {}
    size = None
    if isinstance(screen, Mapping) and screen.get("width") and screen.get("height"):
        size = (int(screen["width"]), int(screen["height"]))
    seed = data.get("seed")
    params = None
    task = data.get("task")
    if task is not None:
        raw = getattr(task, "params", None) if not isinstance(task, Mapping) else task.get("params")
        if isinstance(raw, Mapping):
            params = dict(raw)
    return RealEpisode(
        source=f"{src}#{n}", format="android_world_pickle", task=str(data["task_template"]), goal=str(data["goal"]),
        success=_as_float(data.get("is_successful")), steps=steps,
        seed=int(seed) if isinstance(seed, int) else None, params=params, screen_size=size, no_steps_reason=reason,
        meta={k: data[k] for k in ("agent_name", "instance_id", "episode_length") if k in data},
    )


def load_real_episodes(path: str | os.PathLike[str]) -> list[RealEpisode]:
    """The real episodes in one file (a gzipped AndroidWorld pickle may hold several; a JSON log holds one)."""
    src = Path(path)
    raw = src.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise ValueError(f"{src}: a broken gzip file: {exc}") from None
    if raw[:1] == b"\x80":  # a pickle (protocol 2+)
        try:
            data = _EpisodeUnpickler(io.BytesIO(raw)).load()
        except (pickle.UnpicklingError, EOFError, AttributeError, ValueError, TypeError) as exc:
            raise ValueError(f"{src}: not an AndroidWorld episode pickle: {exc}") from None
        items = data if isinstance(data, list) else [data]
        return [_pickle_episode(item, src, n) for n, item in enumerate(items)]
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{src}: neither an AndroidWorld episode pickle nor a JSON episode log: {exc}") from None
    if not isinstance(data, Mapping):
        raise ValueError(f"{src}: the JSON is a {type(data).__name__}; an episode log is an object with task_name, "
                         "goal and step_records")
    return [_json_episode(data, src)]


# -- the task instance ------------------------------------------------------------------------------------


def _template_regex(template: str) -> tuple[re.Pattern[str], list[str]]:
    parts, names = [], []
    for literal, name, _spec, _conv in string.Formatter().parse(template):
        parts.append(re.escape(literal))
        if name is None:
            continue
        if name in names:
            parts.append(f"(?P={name})")
        else:
            names.append(name)
            parts.append(f"(?P<{name}>.+?)")
    return re.compile("".join(parts) + r"\Z", re.S), names


def _coerce(value: str, like: Any) -> Any:
    if isinstance(like, bool):
        return value.strip().lower() in ("true", "1", "yes")
    for kind in (int, float):
        if isinstance(like, kind):
            try:
                return kind(value)
            except ValueError:
                return value
    return value


def recover_params(aw_class: type, goal: str, seed: int | None = None) -> tuple[dict[str, Any] | None, str]:
    """The parameters of AndroidWorld task class ``aw_class`` whose goal is ``goal``, and how they were found.

    First the episode's ``seed`` (AndroidWorld's ``generate_random_params`` under it); then the goal read back
    through the class's ``template``, the fields it shows put over parameters drawn for the other keys. Both
    are kept only when the task built from them states exactly ``goal``; otherwise ``(None, why)``.
    """
    from android_gym.suites.android_world import android_world_params

    def goal_of(params: Mapping[str, Any]) -> str | None:
        try:
            return str(aw_class(dict(params)).goal)
        except Exception:  # noqa: BLE001 (a task may reject parameters in any way)
            return None

    if seed is not None:
        params = android_world_params(aw_class, seed)
        if goal_of(params) == goal:
            return params, f"the episode's seed {seed}"
    template = _goal_template(aw_class)
    if template is None:
        params, how = _rows_from_goal(aw_class, goal, seed)
        if params is not None and goal_of(params) == goal:
            return params, how
        return None, (f"{aw_class.__name__} has no template to read its parameters from the goal, and its goal is "
                      f"not a table of rows ({how})")
    pattern, names = _template_regex(template)
    match = pattern.match(goal)
    if match is None:
        return None, f"the goal does not follow {aw_class.__name__}'s template {template!r}"
    params = android_world_params(aw_class, 0 if seed is None else seed)
    for name in names:
        params[name] = _coerce(match.group(name), params.get(name))
    if goal_of(params) != goal:
        return None, (f"the template's fields ({', '.join(names) or 'none'}) do not rebuild the goal: the task "
                      f"states {goal_of(params)!r}")
    drawn = sorted(k for k in params if k not in names and k != "seed")
    how = f"the goal, through the task's template (fields {', '.join(names) or 'none'})"
    if drawn:
        how += f"; not in the goal, so drawn: {', '.join(drawn)}"
    return params, how


def _goal_template(aw_class: type) -> str | None:
    """The goal's template: the class's ``template``, else the prompt of the task proto AndroidWorld's information
    retrieval tasks are built from (``task_template``, a property that does not need an instance)."""
    template = getattr(aw_class, "template", None)
    if isinstance(template, str) and template:
        return template
    proto = getattr(aw_class, "task_template", None)
    if isinstance(proto, property) and proto.fget is not None:
        try:
            prompt = getattr(proto.fget(None), "prompt", None)
        except Exception:  # noqa: BLE001 (a property that needs its instance after all)
            prompt = None
        if isinstance(prompt, str) and prompt:
            return prompt
    return None


ROWS_KEY, NOISE_ROWS_KEY, TEXT_KIND_KEY = "row_objects", "noise_row_objects", "text_representation_type"


def _goal_table(goal: str) -> tuple[str, list[str], list[list[str]]] | None:
    """The rows a goal lists after its first line, as AndroidWorld writes them: ``csv`` (a header of field names,
    then one line per row, ``|`` between values) or ``text_block`` (per row "Class: NAME" and one " field: value"
    line per other field, a blank line between rows). Returns the kind, the field names (for ``text_block`` the
    first is None's stand-in ``""``: the row's description) and the values per row, or None."""
    head, sep, body = goal.partition(":\n")
    if not sep or not body.strip():
        return None
    lines = body.split("\n")
    if "|" in lines[0]:
        fields = lines[0].split("|")
        rows = [line.split("|", len(fields) - 1) for line in lines[1:] if line]
        return ("csv", fields, rows) if rows and all(len(r) == len(fields) for r in rows) else None
    fields: list[str] = []
    rows: list[list[str]] = []
    for block in body.strip("\n").split("\n\n"):
        first, *rest = block.split("\n")
        _cls, colon, description = first.partition(": ")
        pairs = [line.strip().partition(": ") for line in rest if line.strip()]
        if not colon or any(not p[1] for p in pairs):
            return None
        names = ["", *(p[0] for p in pairs)]
        if fields and names != fields:
            return None
        fields = names
        rows.append([description, *(p[2] for p in pairs)])
    return ("text_block", fields, rows) if rows else None


def _rows_from_goal(aw_class: type, goal: str, seed: int | None) -> tuple[dict[str, Any] | None, str]:
    """Parameters of a task whose goal lists the rows to add (AndroidWorld's ``row_objects``, written out by
    ``get_text_representation_of_rows``: ExpenseAddMultiple and its kind), read back from the goal's table.

    The rows AndroidWorld draws under the episode's seed (or 0) give the row class and the fields the goal does not
    show (dates); each goal row's values replace theirs: a dataclass field directly, ``amount_dollars`` as cents,
    ``X_name`` through the class's ``X_id_to_name`` table. The noise rows stay drawn (the goal does not show them),
    less any that share a name with a goal row. Returns (params, how) or (None, why not)."""
    import dataclasses

    from android_gym.suites.android_world import android_world_params

    try:
        params = android_world_params(aw_class, 0 if seed is None else seed)
    except Exception as exc:  # noqa: BLE001 (a task's parameter draw may fail in any way)
        return None, f"its parameters cannot be drawn: {exc}"
    drawn = params.get(ROWS_KEY)
    if not isinstance(drawn, list) or not drawn or not dataclasses.is_dataclass(drawn[0]):
        return None, "it has no row_objects"
    table = _goal_table(goal)
    if table is None:
        return None, "the goal lists no rows as csv or text blocks"
    kind, fields, values = table
    row_class = type(drawn[0])
    names = {f.name for f in dataclasses.fields(row_class)}
    key_field = next((f for f in ("name", "title") if f in names), None)
    rows = []
    for i, row_values in enumerate(values):
        changes: dict[str, Any] = {}
        for name, value in zip(fields, row_values):
            name = name or key_field or ""
            if name in names:
                like = getattr(drawn[0], name)
                changes[name] = _coerce(value, like) if like is not None else value
            elif name == "amount_dollars" and "amount" in names and value.startswith("$"):
                try:
                    changes["amount"] = round(float(value[1:]) * 100)
                except ValueError:
                    return None, f"the amount {value!r} is not a number"
            elif name.endswith("_name") and isinstance(getattr(row_class, f"{name[:-5]}_id_to_name", None), dict):
                table_of = getattr(row_class, f"{name[:-5]}_id_to_name")
                ids = [k for k, v in table_of.items() if v == value]
                if not ids:
                    return None, f"{value!r} is not one of {row_class.__name__}'s {name[:-5]} names"
                changes[name[:-5]] = ids[0]
            else:
                return None, f"the goal's field {name!r} is not one of {row_class.__name__}'s"
        rows.append(dataclasses.replace(drawn[i % len(drawn)], **changes))
    params[ROWS_KEY] = rows
    if isinstance(params.get(NOISE_ROWS_KEY), list) and key_field:
        taken = {getattr(r, key_field) for r in rows}
        params[NOISE_ROWS_KEY] = [r for r in params[NOISE_ROWS_KEY] if getattr(r, key_field, None) not in taken]
    if TEXT_KIND_KEY in params:
        params[TEXT_KIND_KEY] = kind
    return params, (f"the goal's {kind} table of {len(rows)} row(s) ({', '.join(f or key_field or '' for f in fields)}); "
                    f"not in the goal, so drawn: the rows' other fields, {NOISE_ROWS_KEY}")


# -- the sim's element list -------------------------------------------------------------------------------


def sim_ui_elements(xml: str) -> list[Any]:
    """The sim's elements as AndroidWorld lists a screen from the accessibility forest (``forest_to_ui_elements``):
    leaves, nodes with a content description and scrollable nodes, each window's nodes breadth first
    (:func:`android_gym.suites.android_world.a11y_order`), each built by ``xml_dump_to_ui_elements``."""
    from android_gym.suites.android_world import a11y_order, ui_elements_from_xml

    elements = ui_elements_from_xml(xml)
    root = ET.fromstring(xml)
    nodes = [node for node in root.iter() if node is not root]
    if len(nodes) != len(elements):
        raise ValueError(f"{len(elements)} UI elements for {len(nodes)} nodes of the dump")
    by_node = {id(node): e for node, e in zip(nodes, elements)}
    return [by_node[id(node)] for node, _depth, _parent in a11y_order(root)
            if len(node) == 0 or node.get("content-desc") or node.get("scrollable") == "true"]


# -- hidden random state read back from the real screens ---------------------------------------------------


_ROW_DATE_RE = re.compile(r" \d{2}/\d{2}/\d{4}, \d{1,2}:\d{2}(?: [AP]M)?$")


def _row_file_name(element: Mapping[str, Any]) -> str | None:
    """The file a row names through its content description ("File NAME DATE" or "File NAME ", as Markor's rows
    say it), or None."""
    desc = str(element.get("content_description") or "")
    if not desc.startswith("File "):
        return None
    rest = desc[5:]
    m = _ROW_DATE_RE.search(rest)
    return rest[:m.start()] if m else rest[:-1] if rest.endswith(" ") else rest


def _listing(elements: Sequence[Mapping[str, Any]], resource: str | None) -> list[str]:
    """The file names a screen lists: the texts of the elements with ``resource`` (DocumentsUI's titles), or with
    None the names in "File NAME ..." content descriptions (Markor's rows)."""
    if resource is None:
        return [n for n in map(_row_file_name, elements) if n is not None]
    return [str(e["text"]) for e in elements if (e.get("resource_name") or "") == resource and e.get("text")]


def real_folder_listing(episode: RealEpisode, target: str,
                        folder_name: str | None = None) -> tuple[list[int], list[str]] | None:
    """The file names real screens show in the folder holding file ``target``, and the steps that show them.

    The first screen that lists ``target`` gives the folder's rows: a row is recognised by its text (DocumentsUI's
    title; the listing is every element with the same resource name) or its content description ("File NAME ...",
    Markor's rows). When no screen shows ``target`` itself (further down the list), the first screen with Markor's
    rows that names ``folder_name`` in its title ("NAME" or "> NAME") stands for it. Later screens whose listing
    shares at least half of those names show the same folder, further down or after a change, and add the names
    they show (a list longer than the screen shows the rest when scrolled). None when no screen lists the folder.
    """
    titles = {folder_name, f"> {folder_name}"} if folder_name else set()
    first_seen: tuple[int, str | None] | None = None
    for i, step in enumerate(episode.steps):
        for element in step.elements:
            if element.get("text") == target and element.get("resource_name"):
                first_seen = (i, str(element["resource_name"]))
                break
            if _row_file_name(element) == target:
                first_seen = (i, None)
                break
        if first_seen is not None:
            break
    if first_seen is None and titles:
        first_seen = next(((i, None) for i, step in enumerate(episode.steps)
                           if _listing(step.elements, None) and any(e.get("text") in titles for e in step.elements)),
                          None)
    if first_seen is None:
        return None
    i, resource = first_seen
    first = _listing(episode.steps[i].elements, resource)
    names, steps = list(first), [episode.steps[i].index]
    for later in episode.steps[i + 1:]:
        shown = _listing(later.elements, resource)
        if shown and len(set(shown) & set(first)) * 2 >= len(first):
            new = [n for n in shown if n not in names]
            if new:
                names.extend(new)
                steps.append(later.index)
    return steps, names


def _sim_folder_of(files: Any, name: str, root: str = "/sdcard") -> str | None:
    """The folder under ``root`` on the sim that holds a file called ``name`` (breadth first), or None."""
    pending = [root]
    while pending:
        folder = pending.pop(0)
        for entry in sorted(files.listdir(folder)):
            path = f"{folder}/{entry}"
            if files.is_dir(path):
                pending.append(path)
            elif entry == name:
                return folder
    return None


def recover_noise_files(episode: RealEpisode, params: Mapping[str, Any], device: Any) -> dict[str, Any] | None:
    """Put the noise files AndroidWorld drew at random for this run into the sim's folder, as the real screens that
    list the folder show them (:func:`real_folder_listing`).

    AndroidWorld's file tasks (``noise_candidates`` in their parameters) fill the task's folder with 1 to 20 files
    whose names it draws with Python's ``random`` when the task starts; the episode's parameters do not keep them.
    When real screens list the folder holding the task's file, the sim's noise files there are replaced by the
    names shown (files no real screen showed stay unknown and are not made up). Returns
    what was done (for ``summary.json``, as ``recovered_from_screen``), or None when nothing applies.
    """
    target = params.get("file_name") or params.get("original_name")
    files = getattr(getattr(device, "phone", None), "files", None)
    if "noise_candidates" not in params or not isinstance(target, str) or files is None:
        return None
    folder = _sim_folder_of(files, target)
    found = real_folder_listing(episode, target, folder.rsplit("/", 1)[-1]) if folder else None
    if found is None or folder is None:
        return None
    steps, shown = found
    before = sorted(n for n in files.listdir(folder) if files.is_file(f"{folder}/{n}"))
    template = next((n for n in before if n != target), None)
    content = files.read(f"{folder}/{template}") if template else b""
    mtime = files.mtimes.get(files.norm(f"{folder}/{target}"), 0)
    for name in before:
        if name != target and name not in shown:
            files.remove(f"{folder}/{name}")
    for name in shown:
        if name not in before and "/" not in name:
            files.write(f"{folder}/{name}", content, mtime)
    after = sorted(n for n in files.listdir(folder) if files.is_file(f"{folder}/{n}"))
    return {"what": "AndroidWorld's noise file names", "folder": folder, "real_steps": steps, "names": shown,
            "sim_drew": [n for n in before if n != target], "now": after}


STATUS_CLOCK_ID = "com.android.systemui:id/clock"
_CLOCK_RE = re.compile(r"^(\d{1,2}):(\d{2})$")


def follow_real_clock(step: RealStep, device: Any) -> int:
    """Set the sim's clock to the minute the real step's status bar shows; returns the minutes moved (negative
    back; 0 when the clocks agree, differ by more than three hours, or either cannot be read).

    A real episode's clock moves on while its agent thinks (11:34 to 11:40 over 19 steps in these runs); the sim's
    moves two seconds per input, so without this the status bar's clock differs on half the real screens. The sim
    lands on the start of the real minute. It can move back: one real run's first screen shows 11:39 and the
    next ones 11:34 (the emulator's clock was set back when the task was set up).
    """
    phone = getattr(device, "phone", None)
    real = next((str(e.get("text") or "") for e in step.elements
                 if (e.get("resource_name") or e.get("resource_id")) == STATUS_CLOCK_ID), "")
    m, n = _CLOCK_RE.match(real), _CLOCK_RE.match(phone.status_clock()[0]) if phone is not None else None
    if m is None or n is None:
        return 0
    twelve = phone.settings["system"].get("time_12_24") != "24"
    day = 12 * 60 if twelve else 24 * 60
    minutes = (int(m[1]) * 60 + int(m[2]) - int(n[1]) * 60 - int(n[2])) % day
    if minutes > day // 2:
        minutes -= day
    if minutes == 0 or abs(minutes) > 180:
        return 0
    now = phone.now()
    phone.clock_ms += minutes * 60_000 - now.second * 1000 - now.microsecond // 1000
    phone.invalidate()
    return minutes


def follow_real_device(step: RealStep, device: Any, *, wifi: bool = False) -> dict[str, Any] | None:
    """Give the sim the emulator state a real step's status bar shows and no task sets.

    Which standing notifications the emulator shows (the Android System group, "Serial console enabled" alone, the
    virtual SD card; in either order) and its mobile signal ("Phone signal full.", "Phone two bars." ...) differ
    from one emulator run to the next and change during one (12 of the 21 real episodes show the sim's default);
    with ``wifi`` (the first step) also whether Wi-Fi was left on by the runs before. The host's state too, as the
    second held-out source's tuning runs show it: whether Do Not Disturb is on (its status bar icon; the runs
    before left it on), whether the emulator's Wi-Fi reaches the internet (its icon then lacks "No internet"), and
    the zone the clock's description reads the time in ("08:34" beside "15:34"; the sim's default, four hours
    back, is the first source's host). Returns what changed (for ``summary.json``), or None when nothing did, the
    step shows no status bar, or the device is not the sim.
    """
    phone = getattr(device, "phone", None)
    if phone is None:
        return None
    bar = [e for e in step.elements if e.get("package_name") == STATUS_BAR_PACKAGE]
    ids = {_resource_tail(e): e for e in bar}
    if "clock" not in ids:  # no status bar
        return None
    shade = "header_label" in ids or "slider" in ids  # the shade's header: its signal, no notification icons
    notifications = tuple(str(e.get("content_description")) for e in bar
                          if "notification:" in str(e.get("content_description") or "")
                          and not (e.get("resource_name") or e.get("resource_id")))
    signal = str(ids["mobile_combo"].get("content_description") or "") if "mobile_combo" in ids else ""
    done: dict[str, Any] = {}
    if not shade and notifications != phone.standing_notifications:
        phone.standing_notifications = notifications
        done["notifications"] = list(notifications)
    if signal and signal != phone.mobile_signal:
        phone.mobile_signal = done["mobile_signal"] = signal
    if wifi and not shade and phone.settings_get("global", "airplane_mode_on") != "1":
        on = "1" if "wifi_combo" in ids else "0"
        if phone.settings_get("global", "wifi_on") != on:
            phone.settings_put("global", "wifi_on", on)
            done["wifi_on"] = on == "1"
    if "wifi_combo" in ids:
        online = "No internet" not in str(ids["wifi_combo"].get("content_description") or "")
        if online != phone.wifi_internet:
            phone.wifi_internet = done["wifi_internet"] = online
    if not shade:
        zen = any(e.get("content_description") == "Do Not Disturb" for e in bar)
        if zen != (phone.settings_get("global", "zen_mode") not in (None, "0")):
            phone.settings_put("global", "zen_mode", "1" if zen else "0")
            done["do_not_disturb"] = zen
    offset = _spoken_offset(ids["clock"])
    if offset is not None and offset != phone.spoken_clock_offset:
        phone.spoken_clock_offset = offset
        done["clock_description_offset_minutes"] = int(offset.total_seconds() // 60)
    if not done:
        return None
    phone.invalidate()
    return {"what": "the emulator's standing notifications, mobile signal, Wi-Fi, Do Not Disturb or clock zone",
            "real_step": step.index, **done}


def _spoken_offset(clock: Mapping[str, Any]) -> Any:
    """How far the status bar clock's description is from the time it shows (a ``timedelta`` within 12 hours
    either way), or None when either is not an "H:MM" time or neither is past 12:59 (a 12-hour clock, whose
    offset is ambiguous)."""
    shown, said = (_CLOCK_RE.match(str(clock.get(k) or "")) for k in ("text", "content_description"))
    if shown is None or said is None or max(int(shown[1]), int(said[1])) < 13:
        return None
    minutes = (int(said[1]) * 60 + int(said[2]) - int(shown[1]) * 60 - int(shown[2])) % (24 * 60)
    if minutes > 12 * 60:
        minutes -= 24 * 60
    return _dt.timedelta(minutes=minutes)


PREDICTED_PREFIX = "Predicted app: "


def recover_predicted_app(episode: RealEpisode, device: Any) -> dict[str, Any] | None:
    """Give the sim's home screen the predicted app the real one shows on the episode's first screen.

    The Pixel launcher's dock ends with an app it predicts from the emulator's earlier use (Calendar, Markor,
    Gmail, Settings in these runs); nothing in the task says which. When the first real screen is the home screen,
    its "Predicted app: LABEL" becomes the sim launcher's ``earlier_prediction`` (what it shows until an app is
    used in the episode). Returns what was done (for ``summary.json``), or None when the first screen shows none.
    """
    from android_gym.sim.apps.launcher import EMULATOR_ONLY_APPS, LauncherApp

    phone = getattr(device, "phone", None)
    if phone is None or not episode.steps:
        return None
    desc = next((str(e.get("content_description")) for e in episode.steps[0].elements
                 if str(e.get("content_description") or "").startswith(PREDICTED_PREFIX)), None)
    launcher = next((a for a in phone.apps.values() if isinstance(a, LauncherApp)), None)
    if desc is None or launcher is None:
        return None
    label = desc[len(PREDICTED_PREFIX):]
    package = next((a.package for a in phone.apps.values() if a.label == label and a.in_launcher),
                   EMULATOR_ONLY_APPS.get(label))
    if package is None:
        return {"what": "the launcher's predicted app", "label": label, "applied": False,
                "why": "no app with that label on the sim or the emulator's home screen"}
    launcher.earlier_prediction = (label, package)
    phone.invalidate()
    return {"what": "the launcher's predicted app", "label": label, "package": package, "real_step": 0,
            "applied": True}


def recover_home_page(episode: RealEpisode, device: Any) -> dict[str, Any] | None:
    """Leave out the home screen's "Home" page description when the run's first home screen lists none.

    The Pixel launcher's workspace page is listed as a View described "Home" in 19 of the 21 real runs and not at
    all in the other two, on every home screen of the run: a state the runs before left, which no task sets.
    Returns what was done (for ``summary.json``), or None when the run shows the page or no home screen.
    """
    from android_gym.sim.apps.launcher import LauncherApp

    phone = getattr(device, "phone", None)
    launcher = next((a for a in phone.apps.values() if isinstance(a, LauncherApp)), None) if phone else None
    home = next((s for s in episode.steps if any(str(e.get("resource_name") or e.get("resource_id") or "")
                                                 .endswith("workspace") for e in s.elements)), None)
    if launcher is None or home is None or any(e.get("content_description") == "Home" for e in home.elements):
        return None
    launcher.page_described = False
    phone.invalidate()
    return {"what": "the home screen's page without its \"Home\" description", "real_step": home.index}


def recover_bluetooth(episode: RealEpisode, device: Any) -> dict[str, Any] | None:
    """Give the sim the Bluetooth state the run's first Quick Settings tiles show, when no action before could
    have changed it.

    Android 13's status bar shows no Bluetooth icon without a connected device, so only the shade tells whether
    the runs before left Bluetooth on (one real run did). The first real screen with the "Bluetooth." tile counts
    if every action before it was a swipe, scroll, navigation or app opening (no tap could have toggled it).
    Returns what was done (for ``summary.json``), or None when the state agrees or no screen shows it.
    """
    phone = getattr(device, "phone", None)
    if phone is None:
        return None
    for step in episode.steps:
        tile = next((e for e in step.elements if e.get("content_description") == "Bluetooth."
                     and str(e.get("class_name") or "").endswith("Switch")), None)
        if tile is not None:
            on = "1" if tile.get("is_checked") or tile.get("text") == "On" else "0"
            if phone.settings_get("global", "bluetooth_on") == on:
                return None
            phone.settings_put("global", "bluetooth_on", on)
            phone.invalidate()
            return {"what": "Bluetooth left on or off by the runs before", "bluetooth_on": on == "1",
                    "real_step": step.index}
        kind = (step.action or {}).get("action_type")
        if kind not in ("swipe", "scroll", "navigate_home", "navigate_back", "open_app", "wait"):
            return None
    return None


# -- comparing --------------------------------------------------------------------------------------------


STATUS_BAR_PACKAGE = "com.android.systemui"


def _without_status_bar(elements: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The elements other than System UI's (the status bar), unless System UI is all there is (the shade)."""
    kept = [e for e in elements if e.get("package_name") != STATUS_BAR_PACKAGE]
    return kept if kept else list(elements)


def _positional(rk: Sequence[Any], sk: Sequence[Any]) -> float:
    longest = max(len(rk), len(sk))
    return sum(a == b for a, b in zip(rk, sk)) / longest if longest else 1.0


def _compare_lists(real: Sequence[Mapping[str, Any]], sim: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Position-by-position and multiset agreement of two element lists under :func:`element_key`; also the
    position-by-position agreement of the screens without the status bar (whose network icons, notification
    order and clock minute differ from one emulator run to the next)."""
    rk, sk = [element_key(e) for e in real], [element_key(e) for e in sim]
    longest = max(len(rk), len(sk))
    same = [a == b for a, b in zip(rk, sk)]
    first = next((i for i, ok in enumerate(same) if not ok), None)
    if first is None and len(rk) != len(sk):
        first = min(len(rk), len(sk))
    common = sum((Counter(rk) & Counter(sk)).values())
    rl = Counter(k[:2] for k in rk if k[0] or k[1])
    sl = Counter(k[:2] for k in sk if k[0] or k[1])
    labelled = sum(rl.values()) + sum(sl.values())
    return {
        "real_elements": len(rk), "sim_elements": len(sk),
        "positional_agreement": (sum(same) / longest) if longest else 1.0,
        "screen_agreement": _positional([element_key(e) for e in _without_status_bar(real)],
                                        [element_key(e) for e in _without_status_bar(sim)]),
        "multiset_agreement": (2 * common / (len(rk) + len(sk))) if longest else 1.0,
        "label_agreement": (2 * sum((rl & sl).values()) / labelled) if labelled else 1.0,
        "identical": rk == sk, "first_mismatch": first,
    }


def _describe(element: Mapping[str, Any] | None) -> str | None:
    if element is None:
        return None
    text, desc, resource, cls, clickable = element_key(element)
    bits = [cls.rsplit(".", 1)[-1] or "?"]
    if text:
        bits.append(repr(text))
    if desc and desc != text:
        bits.append(f"desc={desc!r}")
    if resource:
        bits.append(f"id={resource.rsplit('/', 1)[-1]}")
    if clickable:
        bits.append("clickable")
    return " ".join(bits)


def _ui_text(elements: Sequence[Mapping[str, Any]]) -> str:
    return "\n".join(f"[{i}] {_describe(e)}" for i, e in enumerate(elements))


def _wireframe(elements: Sequence[Mapping[str, Any]], size: tuple[int, int]) -> Any:
    """The real element list drawn as boxes with their labels (the real episodes keep no screenshots)."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, (250, 250, 250))
    draw = ImageDraw.Draw(image)
    for i, element in enumerate(elements):
        box = element.get("bbox_pixels")
        if not box or box[2] <= box[0] or box[3] <= box[1]:
            continue
        colour = (30, 90, 220) if element.get("is_clickable") else (150, 150, 150)
        draw.rectangle(box, outline=colour, width=3)
        label = element.get("text") or element.get("content_description") or ""
        draw.text((box[0] + 6, box[1] + 4), f"{i} {label}"[:40], fill=(20, 20, 20))
    return image


def _plain_sim(elements: Sequence[Any]) -> list[dict[str, Any]]:
    return [_plain_element(e, f"sim element {i}") for i, e in enumerate(elements)]


# -- replaying ----------------------------------------------------------------------------------------------


def _empty_result(episode: RealEpisode, reason: str, **extra: Any) -> dict[str, Any]:
    return {"source": episode.source, "format": episode.format, "task": episode.task, "goal": episode.goal,
            "real_success": episode.success, "replayed": False, "reason": reason, "steps": [], **extra}


def replay_episode(episode: RealEpisode, *, image_width: int | None = 360) -> tuple[dict[str, Any], Any]:
    """Replay one real episode on the sim; returns its result (JSON-friendly) and its side-by-side page episode.

    The page episode is a :class:`android_gym.episode_page.ViewEpisode` (None when nothing was replayed).
    """
    import gymnasium as gym

    from android_gym.actions import ActionParseError, parse_action
    from android_gym.envs import register_envs
    from android_gym.episode_page import ViewEpisode, ViewStep, encode_image
    from android_gym.suites.android_world import AndroidWorldSuite, android_world_available
    from android_gym.suites.android_world_sim import SIM_TASKS, reason_not_on_sim

    if not android_world_available():
        return _empty_result(episode, "android_world is not installed: AndroidWorld's task classes are needed"), None
    if episode.task not in SIM_TASKS:
        return _empty_result(episode, f"{episode.task} does not run on the sim: {reason_not_on_sim(episode.task)}"), None
    suite = AndroidWorldSuite()
    aw_class = suite.registry[episode.task]
    if episode.params is not None:
        params, how = dict(episode.params), "the episode's own parameters"
    else:
        params, how = recover_params(aw_class, episode.goal, episode.seed)
    if params is None:
        return _empty_result(episode, f"the task instance could not be recovered: {how}"), None
    if episode.no_steps_reason:
        return _empty_result(episode, episode.no_steps_reason, params_from=how), None

    register_envs()  # the env ids (importing the android_gym package registers them too)
    env = gym.make("AndroidWorld-v0", task=episode.task, screenshot=True, max_steps=len(episode.steps) + 1,
                   disable_env_checker=True)
    try:
        obs, info = env.reset(seed=0, options={"task": episode.task, "params": params})
        goal_matches = info.get("goal") == episode.goal
        device = env.unwrapped.device
        first = follow_real_device(episode.steps[0], device, wifi=True) if episode.steps else None
        recovered = [r for r in (first, recover_predicted_app(episode, device), recover_home_page(episode, device),
                                 recover_bluetooth(episode, device),
                                 recover_noise_files(episode, params, device)) if r is not None]
        if recovered:  # the phone changed after the first observation: look again
            screen = device.observe(screenshot=True)
            info = {**info, "xml": screen.xml}
            obs = {**obs, "screenshot": screen.screenshot}
        size = (int(obs["screenshot"].shape[1]), int(obs["screenshot"].shape[0]))
        rows: list[dict[str, Any]] = []
        view_steps: list[ViewStep] = []
        answer = None
        done = False
        clock_moved: list[tuple[int, int]] = []
        for real in episode.steps:
            moved = 0 if done else follow_real_clock(real, device)
            followed = None if done or real.index == 0 else follow_real_device(real, device)
            if followed:
                recovered.append(followed)
            if moved:
                clock_moved.append((real.index, moved))
            if moved or followed:  # look again: the status bar changed
                screen = device.observe(screenshot=True)
                info = {**info, "xml": screen.xml}
                obs = {**obs, "screenshot": screen.screenshot}
            sim_objects = sim_ui_elements(info["xml"])
            sim = _plain_sim(sim_objects)
            row: dict[str, Any] = {"step": real.index, **_compare_lists(real.elements, sim), "action": real.action}
            index = real.action.get("index") if real.action else None
            real_target = sim_target = None
            if isinstance(index, int) and not isinstance(index, bool):
                real_target = real.elements[index] if 0 <= index < len(real.elements) else None
                sim_target = sim[index] if 0 <= index < len(sim) else None
                row["real_target"], row["sim_target"] = _describe(real_target), _describe(sim_target)
                row["same_target"] = (real_target is not None and sim_target is not None
                                      and element_key(real_target) == element_key(sim_target))
            else:
                row["same_target"] = None  # not an element-targeted action
            shot = obs["screenshot"]
            sim_action = None
            if done:
                row["note"] = "the sim episode had already ended"
            elif real.action is None:
                row["note"] = f"no action replayed: {real.action_error}"
            else:
                try:
                    sim_action = parse_action(real.action, elements=sim_objects, screen_size=size)
                    if real.action.get("action_type") == "scroll":  # AndroidWorld's own finger path, not Scroll's
                        sim_action = _androidworld_scroll(real.action, sim_objects, size)
                except ActionParseError as exc:
                    row["note"] = f"the action cannot be performed on the sim: {exc}"
            if sim_action is not None:
                row["sim_action"] = sim_action.to_dict()
                if real.action.get("action_type") == "answer":
                    answer = str(real.action.get("text", ""))
                obs, _reward, terminated, truncated, info = env.step(sim_action)
                done = terminated or truncated
                if info.get("error"):
                    row["note"] = f"device error: {info['error']}"
            rows.append(row)
            real_box = real_target.get("bbox_pixels") if real_target else None
            sim_box = sim_target.get("bbox_pixels") if sim_target else None
            real_size = episode.screen_size or size
            real_image = encode_image(_wireframe(real.elements, real_size), image_width)
            sim_image = encode_image(shot, image_width)
            notes = [f"elements: {row['real_elements']} real, {row['sim_elements']} sim; position-by-position "
                     f"agreement {row['positional_agreement']:.2f}, as a multiset {row['multiset_agreement']:.2f}, "
                     f"labels (text, description) alone {row['label_agreement']:.2f}"]
            if row["first_mismatch"] is not None:
                notes.append(f"first differing position: {row['first_mismatch']}")
            if row["same_target"] is not None:
                notes.append("the action hits the same element on both" if row["same_target"]
                             else f"the action hits different elements: real {row.get('real_target')}, "
                                  f"sim {row.get('sim_target')}")
            if row.get("note"):
                notes.append(row["note"])
            twin = ViewStep(index=real.index, ui=_ui_text(sim), action=json.dumps(row.get("sim_action")) if sim_action
                            else "", image=sim_image[0] if sim_image else None, size=size,
                            box=sim_box, point=_action_point(sim_action), notes=["the sim"])
            view_steps.append(ViewStep(index=real.index, ui=_ui_text(real.elements), response=real.reply,
                                       action=json.dumps(real.action) if real.action else "",
                                       parse_error=real.action_error, image=real_image[0] if real_image else None,
                                       size=real_size, box=real_box, notes=notes, twin=twin))
        unwrapped = env.unwrapped
        sim_success = float(unwrapped.task.is_successful(unwrapped.device, answer))
    finally:
        env.close()
    result = _episode_summary(episode, rows, sim_success, how, goal_matches=goal_matches)
    if recovered:
        result["recovered_from_screen"] = recovered
    if clock_moved:
        result["clock_followed"] = {"what": "the sim's clock moved on to the real status bar's minute",
                                    "steps": [i for i, _ in clock_moved],
                                    "minutes": [m for _, m in clock_moved]}
    page = ViewEpisode(title=f"{episode.task}: {Path(episode.source).name}", instruction=episode.goal,
                       source=episode.source, labels=("real (element list)", "sim"), steps=view_steps,
                       outcome={"real success": episode.success, "sim success": sim_success,
                                "outcome agreement": result["outcome_agreement"],
                                "first divergence": result["first_divergence"]})
    return result, page


def _androidworld_scroll(action: Mapping[str, Any], elements: Sequence[Any], size: tuple[int, int]) -> Any:
    """The swipe AndroidWorld performs for a ``scroll`` (from the middle of the indexed element, or of the screen,
    to its edge): the episode's scrolls were that gesture, and a list flings by the finger's speed."""
    from android_gym.actions import androidworld_scroll

    index = action.get("index")
    bounds = None
    if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(elements):
        box = elements[index].bbox_pixels
        bounds = (int(box.x_min), int(box.y_min), int(box.x_max), int(box.y_max))
    return androidworld_scroll(str(action["direction"]).strip().lower(), bounds, size)


def _action_point(action: Any) -> tuple[int, int] | None:
    x, y = getattr(action, "x", None), getattr(action, "y", None)
    return (int(x), int(y)) if x is not None and y is not None else None


def _mean(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def _episode_summary(episode: RealEpisode, rows: list[dict[str, Any]], sim_success: float, how: str,
                     goal_matches: bool) -> dict[str, Any]:
    targeted = [r["same_target"] for r in rows if r["same_target"] is not None]
    first_action = next((r["step"] for r in rows if r["same_target"] is False), None)
    first_elements = next((r["step"] for r in rows if not r["identical"]), None)
    firsts = [s for s in (first_action, first_elements) if s is not None]
    real_ok = None if episode.success is None else episode.success >= 1.0
    return {
        "source": episode.source, "format": episode.format, "task": episode.task, "goal": episode.goal,
        "replayed": True, "params_from": how, "goal_matches": goal_matches, "steps_replayed": len(rows),
        "element_agreement": _mean(r["positional_agreement"] for r in rows),
        "element_multiset_agreement": _mean(r["multiset_agreement"] for r in rows),
        "screen_agreement": _mean(r["screen_agreement"] for r in rows),
        "label_agreement": _mean(r["label_agreement"] for r in rows),
        "action_agreement": (sum(targeted) / len(targeted)) if targeted else None,
        "element_targeted_steps": len(targeted),
        "real_success": episode.success, "sim_success": sim_success,
        "outcome_agreement": None if real_ok is None else real_ok == (sim_success >= 1.0),
        "first_divergence": min(firsts) if firsts else None,
        "first_action_divergence": first_action, "first_element_list_divergence": first_elements,
        "steps": rows,
    }


# -- per-screen fidelity with re-synchronisation, and path divergence ----------------------------------------


IME_PACKAGES = ("com.google.android.inputmethod.latin",)
"""Keyboards: their elements sit over the app and do not tell which app is on screen."""

_SCREEN_MATCH = 0.5
"""A sim screen stands for the real one when it shows the same app and at least this share of the real screen's
elements (without the status bar) as a multiset."""

_APP_NAMES = {
    "com.android.settings": "Settings", "com.google.android.settings.intelligence": "Settings search",
    "com.android.systemui": "System UI (shade, dialogs)", "com.google.android.apps.nexuslauncher": "launcher",
    "net.gsantner.markor": "Markor", "com.simplemobiletools.calendar.pro": "Simple Calendar Pro",
    "com.google.android.contacts": "Contacts", "com.google.android.documentsui": "Files",
    "com.google.android.dialer": "Phone", "com.simplemobiletools.gallery.pro": "Simple Gallery Pro",
    "com.simplemobiletools.smsmessenger": "Simple SMS Messenger", "com.google.android.apps.messaging": "Messages",
    "com.arduia.expense": "Pro Expense", "com.google.android.deskclock": "Clock",
}

PATH_DIVERGENCE_REASONS = {
    "first_screen": "the episode's first screen already differs",
    "no_action": "the real step's action could not be read or performed on the sim",
    "target_missing": "the element the real action targeted has no counterpart on the sim's screen",
    "transition": "the same element was acted on, and the sim's app answered with another screen",
    "scroll": "a scroll or swipe moved the sim's screen elsewhere (distance, fling, or what it opens)",
    "text": "typing or the keyboard's Enter led the sim elsewhere",
    "navigation": "Back, Home or opening an app led the sim elsewhere",
    "no_input": "the real screen changed without an input the sim sees (a wait, an answer, a status)",
}
"""Why the sim's screen stopped standing for the real one, by the real action that came before."""


def screen_app(elements: Sequence[Mapping[str, Any]]) -> str:
    """The package of the app on screen: the commonest package among the elements other than the status bar's
    and the keyboard's; System UI's when it is all there is (the shade, its dialogs)."""
    counts = Counter(str(e.get("package_name") or "") for e in elements
                     if e.get("package_name") not in (STATUS_BAR_PACKAGE, *IME_PACKAGES))
    counts.pop("", None)
    return counts.most_common(1)[0][0] if counts else STATUS_BAR_PACKAGE


def screen_type(elements: Sequence[Mapping[str, Any]]) -> str:
    """The kind of screen, for the per-screen tables: the app's name, and "+ keyboard" while a keyboard is up."""
    package = screen_app(elements)
    name = _APP_NAMES.get(package, package)
    if any(e.get("package_name") in IME_PACKAGES for e in elements):
        name += " + keyboard"
    return name


def _same_screen(real: Sequence[Mapping[str, Any]], sim: Sequence[Mapping[str, Any]]) -> tuple[bool, float]:
    """Whether the sim's screen stands for the real one (same app, at least half the real elements without the
    status bar), and that multiset share."""
    rk = Counter(element_key(e) for e in _without_status_bar(real))
    sk = Counter(element_key(e) for e in _without_status_bar(sim))
    share = sum((rk & sk).values()) / max(1, sum(rk.values()))
    return screen_app(real) == screen_app(sim) and share >= _SCREEN_MATCH, share


def _counterpart(real: Sequence[Mapping[str, Any]], index: int, sim: Sequence[Mapping[str, Any]]) -> tuple[int, str]:
    """The sim element the real action at ``index`` means, and how it was found: the same element (same
    :func:`element_key`, the same occurrence among equal ones, else the nearest), else the sim element under the
    real element's centre (the smallest), else none (-1)."""
    target = real[index]
    key = element_key(target)
    same = [i for i, e in enumerate(sim) if element_key(e) == key]
    if same:
        rank = sum(1 for e in real[:index] if element_key(e) == key)
        if rank < len(same):
            return same[rank], "same element"
        return same[-1], "same element"
    box = target.get("bbox_pixels")
    if box:
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        under = [(((b[2] - b[0]) * (b[3] - b[1])), i) for i, e in enumerate(sim)
                 if (b := e.get("bbox_pixels")) and b[0] <= cx < b[2] and b[1] <= cy < b[3]]
        if under:
            return min(under)[1], "element under the real element's centre"
    return -1, "none"


def _divergence_reason(previous: Mapping[str, Any] | None) -> str:
    if previous is None:
        return "first_screen"
    action = previous.get("action") or {}
    kind = str(action.get("action_type") or "")
    if previous.get("note") or not kind:
        return "no_action"
    if previous.get("intent") == "none":
        return "target_missing"
    if kind in ("scroll", "swipe"):
        return "scroll"
    if kind in ("input_text", "keyboard_enter"):
        return "text"
    if kind in ("navigate_back", "navigate_home", "open_app"):
        return "navigation"
    if kind in ("wait", "status", "answer"):
        return "no_input"
    return "transition"


def _resource_tail(element: Mapping[str, Any]) -> str:
    """An element's resource id without its package (``.../id/clock`` -> ``clock``)."""
    return str(element.get("resource_name") or element.get("resource_id") or "").rpartition("/")[2]


def _select_real_tab(phone: Any, real: Sequence[Mapping[str, Any]]) -> str | None:
    """Put the sim's app on the tab the real screen shows: a tab bar lists its tabs (resource names starting "tab")
    with the selected one alone taking no click; when the sim lists the same tab clickable (it is on another one),
    tap it. Returns the tab's resource name, or None when nothing was tapped."""
    tabs = [e for e in real if _resource_tail(e).startswith("tab")]
    selected = [e for e in tabs if not e.get("is_clickable")]
    if len(tabs) < 2 or len(selected) != 1:
        return None
    name = _resource_tail(selected[0])
    for element in reversed(_plain_sim(sim_ui_elements(phone.dump()))):
        box = element.get("bbox_pixels")
        if _resource_tail(element) == name and element.get("is_clickable") and box:
            phone.tap(int((box[0] + box[2]) / 2), int((box[1] + box[3]) / 2))
            return name
    return None


def _resync(phone: Any, real: Sequence[Mapping[str, Any]], fresh: bool = False) -> str | None:
    """Bring the sim's phone to the app of the real screen (its home screen, its shade, or the app, resumed or with
    ``fresh`` started anew, on the tab the real screen shows: :func:`_select_real_tab`); returns what was done, or
    None when it cannot."""
    from android_gym.sim.phone import LAUNCHER_PACKAGE

    package = screen_app(real)
    if package == STATUS_BAR_PACKAGE:  # Quick Settings' pager: expanded; a brightness slider alone: its dialog
        ids = {_resource_tail(e) for e in real}
        level = 2 if "qs_pager" in ids else 3 if "slider" in ids else 1
        phone.shade = level
        phone.invalidate()
        return {1: "opened the shade", 2: "opened the shade with Quick Settings",
                3: "opened the brightness dialog"}[level]
    if package == LAUNCHER_PACKAGE:
        phone.home()
        return "went home"
    if package not in phone.apps:
        return None
    phone.launch(package, fresh=fresh)
    done = ("started " if fresh else "brought up ") + _APP_NAMES.get(package, package)
    tab = _select_real_tab(phone, real)
    return done if tab is None else f"{done} on its {tab} tab"


def replay_episode_resync(episode: RealEpisode) -> dict[str, Any]:
    """Replay one real episode so that every real screen gets a sim counterpart, and say where the path parts.

    The real actions are replayed by intent: an element-targeted action goes to the sim's counterpart of the real
    element (:func:`_counterpart`), not to the same index. Before each step, when the sim's screen does not stand
    for the real one (:func:`_same_screen`), that is a path divergence, put down with its step, the real screen's
    type and a reason (:data:`PATH_DIVERGENCE_REASONS`, from the action before), and the sim is brought back to the
    real screen's app (:func:`_resync`: the home screen, the shade, the app resumed, else started anew). Each step
    then records the per-screen agreement of the real screen with the (re-synchronised) sim's: in order and as a
    multiset, with and without the status bar. Returns the result (JSON-friendly; ``replayed`` False and
    ``reason`` when the episode cannot be set up).
    """
    import gymnasium as gym

    from android_gym.actions import ActionParseError, parse_action
    from android_gym.envs import register_envs
    from android_gym.suites.android_world import AndroidWorldSuite, android_world_available
    from android_gym.suites.android_world_sim import SIM_TASKS, reason_not_on_sim

    if not android_world_available():
        return _empty_result(episode, "android_world is not installed: AndroidWorld's task classes are needed")
    if episode.task not in SIM_TASKS:
        return _empty_result(episode, f"{episode.task} does not run on the sim: {reason_not_on_sim(episode.task)}")
    aw_class = AndroidWorldSuite().registry[episode.task]
    if episode.params is not None:
        params, how = dict(episode.params), "the episode's own parameters"
    else:
        params, how = recover_params(aw_class, episode.goal, episode.seed)
    if params is None:
        return _empty_result(episode, f"the task instance could not be recovered: {how}")
    if episode.no_steps_reason:
        return _empty_result(episode, episode.no_steps_reason, params_from=how)
    register_envs()  # the env ids (importing the android_gym package registers them too)
    env = gym.make("AndroidWorld-v0", task=episode.task, screenshot=False, max_steps=10 * len(episode.steps) + 10,
                   disable_env_checker=True)
    rows: list[dict[str, Any]] = []
    events: list[dict[str, Any]] = []
    try:
        obs, info = env.reset(seed=0, options={"task": episode.task, "params": params})
        device = env.unwrapped.device
        phone = device.phone
        if episode.steps:
            follow_real_device(episode.steps[0], device, wifi=True)
        for recover in (recover_predicted_app, recover_home_page, recover_bluetooth):
            recover(episode, device)
        recover_noise_files(episode, params, device)
        size = (int(phone.width), int(phone.height))
        for real in episode.steps:
            follow_real_clock(real, device)
            if real.index:
                follow_real_device(real, device)
            sim = _plain_sim(sim_ui_elements(device.observe().xml))
            same, share = _same_screen(real.elements, sim)
            row: dict[str, Any] = {"step": real.index, "screen_type": screen_type(real.elements),
                                   "app": _APP_NAMES.get(screen_app(real.elements), screen_app(real.elements)),
                                   "in_sync": same, "share_before_resync": share, "action": real.action}
            if not same:
                previous = rows[-1] if rows else None
                if previous is None or previous["counterpart"]:  # the path parts here (not still apart from before)
                    reason = _divergence_reason(previous)
                    events.append({"step": real.index, "reason": reason,
                                   "screen_type": previous["screen_type"] if previous else row["screen_type"],
                                   "real_action": (previous or {}).get("action")})
                for fresh in (False, True):
                    done = _resync(phone, real.elements, fresh=fresh)
                    if done is None:
                        break
                    sim = _plain_sim(sim_ui_elements(device.observe().xml))
                    row["resync"] = done
                    if _same_screen(real.elements, sim)[0]:
                        break
            row["counterpart"] = _same_screen(real.elements, sim)[0]
            row.update(_compare_lists(real.elements, sim))
            sim_objects = sim_ui_elements(device.observe().xml)
            if real.action is None:
                row["note"] = f"no action replayed: {real.action_error}"
            else:
                action = dict(real.action)
                index = action.get("index")
                if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < len(real.elements):
                    found, row["intent"] = _counterpart(real.elements, index, sim)
                    if found >= 0:
                        action["index"] = found
                try:
                    sim_action = parse_action(action, elements=sim_objects, screen_size=size)
                    if action.get("action_type") == "scroll":
                        sim_action = _androidworld_scroll(action, sim_objects, size)
                    row["sim_action"] = sim_action.to_dict()
                    _obs, _r, terminated, truncated, info = env.step(sim_action)
                    if info.get("error"):
                        row["note"] = f"device error: {info['error']}"
                    if terminated or truncated:
                        row["note"] = "the sim episode ended"
                        rows.append(row)
                        break
                except (ActionParseError, KeyError, ValueError) as exc:
                    row["note"] = f"the action cannot be performed on the sim: {exc}"
            rows.append(row)
    finally:
        env.close()
    first = events[0] if events else None
    return {
        "source": episode.source, "task": episode.task, "replayed": True, "params_from": how, "steps": rows,
        "expert_steps": expert_path_length(episode.task, params),
        "per_screen": _screen_aggregate(rows),
        "path_divergences": events,
        "first_path_divergence": None if first is None else first["step"],
        "first_path_divergence_reason": None if first is None else first["reason"],
        "steps_before_divergence": len(episode.steps) if first is None else first["step"],
    }


def expert_path_length(task: str, params: Mapping[str, Any], limit: int = 60) -> int | None:
    """How many steps the sim's expert takes for this task instance (its finishing action counted), or None when
    it has none or does not succeed within ``limit`` steps: the expert path the first divergence is set against."""
    import gymnasium as gym

    from android_gym.envs import register_envs

    register_envs()
    env = gym.make("AndroidWorld-v0", task=task, screenshot=False, max_steps=limit, disable_env_checker=True)
    try:
        env.reset(seed=0, options={"task": task, "params": dict(params)})
        for step in range(1, limit + 1):
            _obs, _r, terminated, truncated, info = env.step(env.unwrapped.expert_action())
            if terminated or truncated:
                return step if info.get("success", 0) > 0 else None
    except Exception:  # noqa: BLE001 (a task without an expert, or an expert that gets stuck)
        return None
    finally:
        env.close()
    return None


def _median(values: Sequence[float]) -> float | None:
    ordered = sorted(values)
    if not ordered:
        return None
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _screen_aggregate(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-screen agreement over ``rows`` (means over steps), with the share that had a sim counterpart and the
    agreement on those alone (``*_with_counterpart``: how the sim shows the screens it reaches)."""
    matched = [r for r in rows if r["counterpart"]]
    return {
        "steps": len(rows),
        "in_order": _mean(r["positional_agreement"] for r in rows),
        "multiset": _mean(r["multiset_agreement"] for r in rows),
        "in_order_with_counterpart": _mean(r["positional_agreement"] for r in matched),
        "multiset_with_counterpart": _mean(r["multiset_agreement"] for r in matched),
        "without_status_bar": _mean(r["screen_agreement"] for r in rows),
        "labels": _mean(r["label_agreement"] for r in rows),
        "counterpart": _mean(float(r["counterpart"]) for r in rows),
        "in_sync": _mean(float(r["in_sync"]) for r in rows),
    }


def summarise_resync(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-screen fidelity (overall, per app, per screen type; means over steps) and path divergence (per episode
    the first step and reason; the divergences counted per reason, per app and screen type where the real action
    before was taken) over :func:`replay_episode_resync`'s results."""
    replayed = [r for r in results if r.get("replayed")]
    rows = [row for r in replayed for row in r["steps"]]
    by_app: dict[str, list[Mapping[str, Any]]] = {}
    by_type: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        by_app.setdefault(row["app"], []).append(row)
        by_type.setdefault(row["screen_type"], []).append(row)
    events = [e for r in replayed for e in r["path_divergences"]]
    reasons: dict[str, dict[str, int]] = {}
    for e in events:
        reasons.setdefault(e["screen_type"], {}).setdefault(e["reason"], 0)
        reasons[e["screen_type"]][e["reason"]] += 1
    experts = [r["expert_steps"] for r in replayed if r.get("expert_steps") is not None]
    return {
        "per_screen": {"overall": _screen_aggregate(rows),
                       "per_app": {k: _screen_aggregate(v) for k, v in sorted(by_app.items())},
                       "per_screen_type": {k: _screen_aggregate(v) for k, v in sorted(by_type.items())}},
        "path_divergence": {
            "episodes": [{"source": r["source"], "task": r["task"], "steps": len(r["steps"]),
                          "first_divergence": r["first_path_divergence"],
                          "reason": r["first_path_divergence_reason"], "divergences": len(r["path_divergences"]),
                          "expert_steps": r.get("expert_steps")}
                         for r in replayed],
            "median_steps_before_first_divergence": _median([r["steps_before_divergence"] for r in replayed]),
            "median_first_divergence": _median([r["first_path_divergence"] for r in replayed
                                                if r["first_path_divergence"] is not None]),
            "median_expert_steps": _median(experts),
            "episodes_without_divergence": sum(1 for r in replayed if not r["path_divergences"]),
            "divergences": len(events),
            "reasons": dict(Counter(e["reason"] for e in events).most_common()),
            "reasons_by_screen_type": {k: dict(sorted(v.items())) for k, v in sorted(reasons.items())},
            "reason_meanings": PATH_DIVERGENCE_REASONS,
        },
    }


def _aggregate(results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    replayed = [r for r in results if r.get("replayed")]
    outcomes = [r["outcome_agreement"] for r in replayed if r.get("outcome_agreement") is not None]
    return {
        "episodes": len(results), "replayed": len(replayed),
        "element_agreement": _mean(r["element_agreement"] for r in replayed),
        "element_multiset_agreement": _mean(r["element_multiset_agreement"] for r in replayed),
        "screen_agreement": _mean(r["screen_agreement"] for r in replayed),
        "label_agreement": _mean(r["label_agreement"] for r in replayed),
        "action_agreement": _mean(r["action_agreement"] for r in replayed),
        "outcome_agreement": (sum(outcomes) / len(outcomes)) if outcomes else None,
        "first_divergence": [r["first_divergence"] for r in replayed],
    }


def replay_episodes(
    paths: Sequence[str | os.PathLike[str]],
    out_dir: str | os.PathLike[str],
    *,
    image_width: int | None = 360,
    resync: bool = True,
) -> dict[str, Any]:
    """Replay every episode in ``paths``; writes ``summary.json`` and one HTML page per replayed episode.

    Returns the summary: per episode (with its page), per task and overall, the episodes that could not be
    replayed with the reason (``not_replayed``), and the files that are not episode files at all
    (``unreadable_files``: each with its path and why; the other files are still replayed). With ``resync`` each
    episode is also replayed by :func:`replay_episode_resync`, and the summary gets ``per_screen`` (per-screen
    fidelity with re-synchronisation: overall, per app, per screen type) and ``path_divergence`` (where and why the
    sim's path parts from the real one) from :func:`summarise_resync`; each episode's result gets its
    ``per_screen``, ``first_path_divergence`` (with its reason) and ``path_divergences``.
    """
    from android_gym.episode_page import render_html

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    results: list[dict[str, Any]] = []
    unreadable: list[dict[str, str]] = []
    resynced: list[dict[str, Any]] = []
    for path in paths:
        try:
            episodes = load_real_episodes(path)
        except ValueError as exc:
            unreadable.append({"source": str(path), "reason": str(exc)})
            continue
        except OSError as exc:
            unreadable.append({"source": str(path), "reason": f"{path}: cannot be read: {exc.strerror or exc}"})
            continue
        for episode in episodes:
            result, page = replay_episode(episode, image_width=image_width)
            if resync and result.get("replayed"):
                twin = replay_episode_resync(episode)
                resynced.append(twin)
                result.update({k: twin[k] for k in ("per_screen", "path_divergences", "first_path_divergence",
                                                    "first_path_divergence_reason", "steps_before_divergence")})
                result["resync_steps"] = [{k: v for k, v in row.items() if k != "action"} for row in twin["steps"]]
            if page is not None:
                stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", Path(episode.source).name.replace("#", "_"))
                target = out / f"{stem}.html"
                target.write_text(render_html([page], title=f"replay: {episode.task}"), encoding="utf-8")
                result["page"] = target.name
            results.append(result)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_task.setdefault(r["task"], []).append(r)
    summary = {
        "overall": _aggregate(results),
        "per_task": {task: _aggregate(rs) for task, rs in sorted(by_task.items())},
        "not_replayed": [{"source": r["source"], "task": r["task"], "reason": r["reason"]}
                         for r in results if not r.get("replayed")],
        "unreadable_files": unreadable,
        **(summarise_resync(resynced) if resync else {}),
        "episodes": results,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    return summary
