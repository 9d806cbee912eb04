"""Look at episodes, not logs: one self-contained HTML page for recorded episodes (``android-gym view``).

:func:`load_episodes` reads what was recorded into :class:`ViewEpisode` objects:

- an android_gym trajectory file (:meth:`android_gym.trajectory.Trajectory.save`, what
  ``android-gym play --record episode.json.gz`` writes), or a folder of them;
- a coach-rl replay buffer folder (Parquet shards) or a single shard, read through coach-rl's own
  :class:`coach_rl.replay.ReplayBuffer` (imported only then: android-gym does not depend on coach-rl);
- a coach-rl run folder: its evaluation episodes (``episodes/eval_<label>/``, trajectory files) and the
  newest episodes of its replay buffer (``replay/``);
- a real AndroidWorld episode (``run.py``'s ``.pkl.gz`` or an agent's JSON log with ``step_records``): it is
  replayed on the simulated phone (:mod:`android_gym.replay`) and each real step shown beside its sim twin.

:func:`render_html` turns episodes into one page that needs nothing else (screenshots are inlined as
data URIs, the script is inline): per step the screenshot with the acted-on element boxed (an SVG
overlay in screen coordinates), the compressed UI the model read, its reply and the parsed action, and
the step's numbers where the data has them: the env reward, ``r_p`` (process reward), ``r_o`` (outcome
reward), ``R_t`` (return target) and the critic's ``Q``. Steps change with the buttons or the left/right
arrow keys, episodes with the selector or page up/down. A step may carry a ``twin`` (the same step
elsewhere, e.g. a real episode's step beside its replay on the simulated phone), drawn beside it.

:func:`serve_view` serves a page on 127.0.0.1 (an ephemeral port unless one is given).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import re
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from android_gym.trajectory import TRAJECTORY_FORMAT, Trajectory

__all__ = [
    "VALUE_SOURCES",
    "ViewEpisode",
    "ViewServer",
    "ViewStep",
    "default_page_path",
    "episode_from_trajectory",
    "load_episodes",
    "render_html",
    "serve_view",
    "write_view",
]

#: Names shown for step numbers, and where they are looked up (a coach-rl record's field, then ``step.info``).
VALUE_SOURCES: dict[str, tuple[str, ...]] = {
    "r_p": ("process_reward", "r_p"),
    "r_o": ("outcome_reward", "r_o"),
    "R_t": ("return_t", "R_t"),
    "Q": ("critic_q", "q_value", "Q", "q"),
}

_SHARD_NAME = re.compile(r"^\d{10}-[0-9a-f]{12}\.parquet$")
_TRAJECTORY_SUFFIXES = (".json", ".json.gz")


@dataclass
class ViewStep:
    """One step as the page shows it.

    ``image`` is an encoded screenshot (PNG or JPEG bytes) of a screen of ``size`` (width, height) pixels in
    the coordinates of ``box`` (the acted-on element's bounds ``x1, y1, x2, y2``), ``point`` (where the
    action touched) and ``end`` (where a swipe or drag ended). ``values`` are the step's numbers by name,
    ``notes`` free text lines shown under them, ``twin`` the same step seen elsewhere (drawn beside it).
    """

    index: int
    ui: str = ""
    response: str = ""
    action: str = ""
    parse_error: str | None = None
    image: bytes | None = None
    size: tuple[int, int] | None = None
    box: tuple[int, int, int, int] | None = None
    point: tuple[int, int] | None = None
    end: tuple[int, int] | None = None
    values: dict[str, float | None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    label: str = ""
    twin: ViewStep | None = None


@dataclass
class ViewEpisode:
    """One episode as the page shows it: a title, the goal, where it came from, the outcome and the steps.

    ``labels`` name the two sides when steps have twins (e.g. ``("real", "sim")``).
    """

    title: str
    instruction: str
    source: str = ""
    outcome: dict[str, Any] = field(default_factory=dict)
    steps: list[ViewStep] = field(default_factory=list)
    labels: tuple[str, str] = ("", "")


# -- from recorded data ---------------------------------------------------------------------------------


def _encode_image(image: Any, width: int | None) -> tuple[bytes, tuple[int, int]] | None:
    """PNG bytes of a screenshot (array, PIL image or encoded bytes), scaled to ``width``; with its original size."""
    from PIL import Image

    if image is None:
        return None
    if isinstance(image, (bytes, bytearray)):
        img = Image.open(io.BytesIO(bytes(image)))
    elif isinstance(image, np.ndarray):
        img = Image.fromarray(image)
    elif isinstance(image, Image.Image):
        img = image
    else:
        raise TypeError(f"a screenshot must be an array, a PIL image or encoded bytes, got {type(image).__name__}")
    size = (int(img.width), int(img.height))
    img = img.convert("RGB")
    if width and img.width > width:
        img = img.resize((width, max(1, round(img.height * width / img.width))), Image.BILINEAR)
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue(), size


def _action_geometry(action: Any) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """Where an action touches the screen (start point, end point), from its fields."""
    if action is None:
        return None, None
    x, y = getattr(action, "x", None), getattr(action, "y", None)
    point = (int(x), int(y)) if x is not None and y is not None else None
    ex, ey = getattr(action, "end_x", None), getattr(action, "end_y", None)
    end = (int(ex), int(ey)) if ex is not None and ey is not None else None
    return point, end


def _element_box(xml: str | None, point: tuple[int, int] | None) -> tuple[int, int, int, int] | None:
    """Bounds of the element under ``point`` in the step's hierarchy (None without a dump, a point or a hit)."""
    if not xml or point is None:
        return None
    from android_gym.xml import XMLParseError, compress_xml

    try:
        ui = compress_xml(xml)
    except (XMLParseError, ValueError):
        return None
    element = ui.element_at(*point, actionable=True) or ui.element_at(*point)
    return tuple(int(v) for v in element.bounds) if element is not None else None  # type: ignore[return-value]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _step_values(reward: float | None, record: Any, info: Mapping[str, Any]) -> dict[str, float | None]:
    """The step's numbers: env reward, then r_p / r_o / R_t / Q from the record or ``info`` where present."""
    out: dict[str, float | None] = {}
    if reward is not None:
        out["reward"] = _number(reward)
    for name, keys in VALUE_SOURCES.items():
        for key in keys:
            value = record.get(key) if isinstance(record, Mapping) else getattr(record, key, None)
            if value is None:
                value = info.get(key)
            if value is not None:
                out[name] = _number(value)  # NaN (e.g. an r_p the reward model could not give) shows as missing
                break
    return out


def _action_text(action: Any) -> str:
    if action is None:
        return ""
    return json.dumps(action.to_dict(), ensure_ascii=False)


def episode_from_trajectory(
    trajectory: Trajectory,
    *,
    title: str | None = None,
    source: str = "",
    records: Sequence[Any] | None = None,
    image_width: int | None = 480,
) -> ViewEpisode:
    """A :class:`ViewEpisode` of an android_gym ``Trajectory``.

    ``records`` are per-step objects or dicts with ``process_reward`` / ``outcome_reward`` / ``return_t``
    (coach-rl's ``StepRecord``), which win over the same numbers in ``step.info``. Screenshots are scaled
    to ``image_width`` pixels wide (None keeps them as they are); boxes stay in screen coordinates.
    """
    if not isinstance(trajectory, Trajectory):
        raise TypeError(f"expected an android_gym Trajectory, got {type(trajectory).__name__}")
    if records is not None and len(records) != len(trajectory.steps):
        raise ValueError(f"{len(records)} records for a trajectory of {len(trajectory.steps)} steps")
    window = trajectory.info.get("window")
    steps = []
    for i, step in enumerate(trajectory.steps):
        encoded = _encode_image(step.screenshot, image_width)
        size = tuple(int(v) for v in window) if window else (encoded[1] if encoded else None)
        point, end = _action_geometry(step.action)
        notes = []
        activity = step.info.get("activity")
        if activity:
            notes.append(f"activity: {activity}")
        if step.info.get("error"):
            notes.append(f"error: {step.info['error']}")
        steps.append(ViewStep(
            index=i, ui=step.ui, response=step.response, action=_action_text(step.action),
            parse_error=step.parse_error, image=encoded[0] if encoded else None,
            size=size, box=_element_box(step.xml, point), point=point, end=end,  # type: ignore[arg-type]
            values=_step_values(step.reward, records[i] if records is not None else None, step.info), notes=notes,
        ))
    final_shot = trajectory.info.get("final_screenshot")
    final_ui = trajectory.info.get("final_ui")
    if final_shot is not None or final_ui:
        encoded = _encode_image(final_shot, image_width)
        steps.append(ViewStep(index=len(steps), ui=str(final_ui or ""), label="end",
                              image=encoded[0] if encoded else None, size=encoded[1] if encoded else None,
                              notes=["the screen after the last action"]))
    outcome: dict[str, Any] = {"success": trajectory.success, "steps": len(trajectory.steps)}
    for key in ("answer", "seed", "error"):
        if getattr(trajectory, key) is not None:
            outcome[key] = getattr(trajectory, key)
    if trajectory.truncated:
        outcome["truncated"] = True
    name = title or f"{trajectory.task}" + (f" (seed {trajectory.seed})" if trajectory.seed is not None else "")
    return ViewEpisode(title=name, instruction=trajectory.instruction, source=source, outcome=outcome, steps=steps)


# -- reading files and folders --------------------------------------------------------------------------


def _is_trajectory_file(path: Path) -> bool:
    return path.is_file() and path.name.endswith(_TRAJECTORY_SUFFIXES)


def _trajectory_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if _is_trajectory_file(p))


def _replay_shards(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and _SHARD_NAME.match(p.name))


def _import_replay_buffer(where: Path) -> Any:
    try:
        from coach_rl.replay import ReplayBuffer
    except ImportError as exc:
        raise ValueError(f"{where} holds coach-rl replay shards; reading them needs coach-rl "
                         f"(pip install coach-rl): {exc}") from None
    return ReplayBuffer


def _replay_episodes(shards: Sequence[Path], image_width: int | None) -> list[ViewEpisode]:
    """Episodes of replay shards, read with coach-rl's ``ReplayBuffer`` on links to them in a temporary folder.

    Opening a ``ReplayBuffer`` tidies its folder (it deletes a running writer's temporary files and evicts
    beyond its capacity), so the viewer never opens the run's own folder: shards are immutable once written,
    and hard links (copies across file systems) of them are a consistent read-only view.
    """
    if not shards:
        return []
    replay_buffer = _import_replay_buffer(shards[0].parent)
    out = []
    with tempfile.TemporaryDirectory(prefix="android-gym-view-") as tmp:
        for shard in shards:
            try:
                os.link(shard, Path(tmp) / shard.name)
            except OSError:
                shutil.copyfile(shard, Path(tmp) / shard.name)
        buffer = replay_buffer(tmp, capacity=sys.maxsize)
        by_name = {s.name.removesuffix(".parquet"): s for s in shards}
        for trajectory_id in buffer.trajectory_ids():
            trajectory = buffer.load_trajectory(trajectory_id)
            records = buffer.load_records(trajectory_id)
            out.append(episode_from_trajectory(
                trajectory, records=records, image_width=image_width, source=str(by_name[trajectory_id]),
                title=f"replay {trajectory_id}: {trajectory.task}",
            ))
    return out


def _trajectory_episodes(files: Iterable[Path], image_width: int | None, prefix: str = "") -> list[ViewEpisode]:
    out = []
    for path in files:
        trajectory = Trajectory.load(path)
        title = f"{prefix}{trajectory.task}" + (f" (seed {trajectory.seed})" if trajectory.seed is not None else "")
        out.append(episode_from_trajectory(trajectory, title=title, source=str(path), image_width=image_width))
    return out


def _real_episodes(src: Path, image_width: int | None, first_error: Exception | None) -> list[ViewEpisode]:
    """A real AndroidWorld episode file, replayed on the sim and shown beside its sim twin (:mod:`android_gym.replay`)."""
    from android_gym.replay import load_real_episodes, replay_episode

    try:
        real = load_real_episodes(src)
    except ValueError as exc:
        raise (first_error or exc) from None
    pages = []
    for episode in real:
        result, page = replay_episode(episode, image_width=image_width)
        if page is None:
            raise ValueError(f"{episode.source}: a real {episode.task} episode that cannot be replayed on the sim: "
                             f"{result['reason']}")
        pages.append(page)
    return pages


def _looks_like_run(folder: Path) -> bool:
    return (folder / "replay").is_dir() or (folder / "episodes").is_dir() or (folder / "metrics.jsonl").is_file()


def load_episodes(
    path: str | os.PathLike[str],
    *,
    max_episodes: int | None = 50,
    image_width: int | None = 480,
) -> list[ViewEpisode]:
    """Read the recorded episodes at ``path`` (see the module docstring for what it reads).

    ``max_episodes`` caps a replay buffer at its newest episodes (None: all). Anything else raises
    ``ValueError`` naming the file and what it lacks.
    """
    src = Path(path)
    if not src.exists():
        raise ValueError(f"{src}: no such file or folder")
    if max_episodes is not None and max_episodes < 1:
        raise ValueError(f"max_episodes must be a positive number or None, got {max_episodes!r}")

    def newest(shards: list[Path]) -> list[Path]:
        return shards[-max_episodes:] if max_episodes else shards

    if src.is_file():
        if _SHARD_NAME.match(src.name):
            return _replay_episodes([src], image_width)
        if src.name.endswith(_TRAJECTORY_SUFFIXES):
            try:
                return _trajectory_episodes([src], image_width)
            except ValueError as exc:
                if "field 'format'" not in str(exc):
                    raise
                return _real_episodes(src, image_width, exc)
        if src.name.endswith((".pkl", ".pkl.gz")):
            return _real_episodes(src, image_width, None)
        raise ValueError(f"{src}: not an episode file android-gym view reads: an android_gym trajectory "
                         f"({' or '.join(_TRAJECTORY_SUFFIXES)}, field 'format' = {TRAJECTORY_FORMAT!r}), a "
                         "coach-rl replay shard (NNNNNNNNNN-<12 hex>.parquet) or a real AndroidWorld episode "
                         "(.pkl.gz, or a JSON log with step_records)")
    if _looks_like_run(src):
        episodes: list[ViewEpisode] = []
        eval_root = src / "episodes"
        if eval_root.is_dir():
            for folder in sorted(p for p in eval_root.iterdir() if p.is_dir()):
                episodes += _trajectory_episodes(_trajectory_files(folder), image_width, prefix=f"{folder.name}: ")
        if (src / "replay").is_dir():
            episodes += _replay_episodes(newest(_replay_shards(src / "replay")), image_width)
        if not episodes:
            raise ValueError(f"{src}: a run folder without recorded episodes (no trajectory files in "
                             "episodes/<label>/ and no shards in replay/)")
        return episodes
    shards = _replay_shards(src)
    files = _trajectory_files(src)
    if not shards and not files:
        raise ValueError(f"{src}: a folder without episodes android-gym view reads (android_gym trajectory "
                         f"files {' / '.join(_TRAJECTORY_SUFFIXES)}, coach-rl replay shards, or a coach-rl run folder)")
    return _trajectory_episodes(files, image_width) + _replay_episodes(newest(shards), image_width)


# -- the page -------------------------------------------------------------------------------------------


def _step_json(step: ViewStep) -> dict[str, Any]:
    image = None
    if step.image is not None:
        kind = "jpeg" if step.image[:2] == b"\xff\xd8" else "png"
        image = f"data:image/{kind};base64," + base64.b64encode(step.image).decode("ascii")
    return {
        "index": step.index, "label": step.label, "ui": step.ui, "response": step.response, "action": step.action,
        "parse_error": step.parse_error, "image": image, "size": list(step.size) if step.size else None,
        "box": list(step.box) if step.box else None, "point": list(step.point) if step.point else None,
        "end": list(step.end) if step.end else None, "values": [[k, v] for k, v in step.values.items()],
        "notes": list(step.notes), "twin": _step_json(step.twin) if step.twin is not None else None,
    }


def _episode_json(episode: ViewEpisode) -> dict[str, Any]:
    return {"title": episode.title, "instruction": episode.instruction, "source": episode.source,
            "outcome": {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                        for k, v in episode.outcome.items()}, "labels": list(episode.labels),
            "steps": [_step_json(s) for s in episode.steps]}


_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:0;background:#f4f4f6;color:#222}
header{background:#223;color:#fff;padding:8px 14px;display:flex;gap:10px;align-items:center;flex-wrap:wrap}
header h1{font-size:16px;margin:0 12px 0 0}
header select{max-width:50vw}
button{font:inherit;padding:3px 10px;cursor:pointer}
main{display:flex;gap:14px;padding:12px;align-items:flex-start}
.shots{display:flex;gap:10px;flex:none}
.pane{background:#fff;border:1px solid #ccc;padding:6px}
.pane h3{margin:0 0 4px;font-size:13px}
.screen{position:relative;display:inline-block;line-height:0}
.screen img{height:min(78vh,900px);width:auto;display:block}
.screen svg{position:absolute;left:0;top:0;width:100%;height:100%;pointer-events:none}
.noshot{width:260px;height:200px;display:flex;align-items:center;justify-content:center;color:#888;line-height:1.4}
.side{flex:1;min-width:320px;display:flex;flex-direction:column;gap:8px}
.card{background:#fff;border:1px solid #ccc;padding:8px}
.card h2{font-size:13px;margin:0 0 4px;color:#555;text-transform:uppercase;letter-spacing:.04em}
pre{margin:0;white-space:pre-wrap;word-break:break-word;font:12px/1.35 ui-monospace,monospace}
pre.ui{max-height:40vh;overflow:auto}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 8px;text-align:left}
.err{color:#b00}
#strip{display:flex;flex-wrap:wrap;gap:3px;padding:0 12px}
#strip button{padding:1px 6px;font-size:12px}
#strip button.cur{background:#223;color:#fff}
"""

_SCRIPT = """
(function(){
const DATA = JSON.parse(document.getElementById('episode-data').textContent);
let ep = 0, st = 0;
const $ = (id) => document.getElementById(id);
const el = (tag, attrs, text) => { const e = document.createElement(tag);
  for (const k in (attrs||{})) e.setAttribute(k, attrs[k]); if (text !== undefined) e.textContent = text; return e; };
const SVG = 'http://www.w3.org/2000/svg';
const svgEl = (tag, attrs) => { const e = document.createElementNS(SVG, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]); return e; };
function fmt(v){ return (v === null || v === undefined) ? '\\u2013' : Number(v).toFixed(3); }
function screen(step, label){
  const pane = el('div', {class: 'pane'});
  if (label) pane.appendChild(el('h3', {}, label));
  if (!step){ pane.appendChild(el('div', {class: 'noshot'}, 'no such step')); return pane; }
  if (!step.image){ pane.appendChild(el('div', {class: 'noshot'}, 'no screenshot recorded')); return pane; }
  const wrap = el('div', {class: 'screen'});
  const img = el('img', {src: step.image, alt: 'screenshot of step ' + step.index, class: 'shot'});
  wrap.appendChild(img);
  const size = step.size;
  if (size && (step.box || step.point)){
    const svg = svgEl('svg', {viewBox: '0 0 ' + size[0] + ' ' + size[1], preserveAspectRatio: 'none'});
    const stroke = Math.max(4, size[0] / 150);
    if (step.box){ const b = step.box;
      svg.appendChild(svgEl('rect', {class: 'target', x: b[0], y: b[1], width: Math.max(1, b[2] - b[0]),
        height: Math.max(1, b[3] - b[1]), fill: 'rgba(255,0,80,0.12)', stroke: '#ff0050', 'stroke-width': stroke})); }
    if (step.point){ const p = step.point;
      if (step.end){ svg.appendChild(svgEl('line', {x1: p[0], y1: p[1], x2: step.end[0], y2: step.end[1],
        stroke: '#0070ff', 'stroke-width': stroke})); }
      svg.appendChild(svgEl('circle', {class: 'touch', cx: p[0], cy: p[1], r: stroke * 3, fill: 'none',
        stroke: '#0070ff', 'stroke-width': stroke})); }
    wrap.appendChild(svg);
  }
  pane.appendChild(wrap);
  return pane;
}
function card(title, node){ const c = el('div', {class: 'card'}); c.appendChild(el('h2', {}, title));
  c.appendChild(node); return c; }
function details(step, prefix){
  const out = [];
  const t = el('table', {class: 'values'});
  if (step.values.length){
    const head = el('tr'); const row = el('tr');
    for (const [k, v] of step.values){ head.appendChild(el('th', {}, k)); row.appendChild(el('td', {'data-name': k}, fmt(v))); }
    t.appendChild(head); t.appendChild(row); out.push(card(prefix + 'numbers', t));
  }
  const act = el('div');
  act.appendChild(el('pre', {class: 'action'}, step.action || (step.label === 'end' ? '(episode over)' : '(no action parsed)')));
  if (step.parse_error) act.appendChild(el('pre', {class: 'err'}, 'parse error: ' + step.parse_error));
  out.push(card(prefix + 'parsed action', act));
  if (step.response) out.push(card(prefix + 'reply', el('pre', {class: 'reply'}, step.response)));
  if (step.notes.length) out.push(card(prefix + 'notes', el('pre', {class: 'notes'}, step.notes.join('\\n'))));
  out.push(card(prefix + 'UI the model read', el('pre', {class: 'ui'}, step.ui || '(none recorded)')));
  return out;
}
function render(){
  const e = DATA.episodes[ep]; const step = e.steps[st];
  $('episode').value = String(ep);
  $('counter').textContent = e.steps.length ? ('step ' + (st + 1) + ' / ' + e.steps.length +
    (step && step.label ? ' (' + step.label + ')' : '')) : 'no steps';
  $('prev').disabled = st <= 0; $('next').disabled = st >= e.steps.length - 1;
  $('goal').textContent = e.instruction;
  $('outcome').textContent = Object.entries(e.outcome).map(([k, v]) => k + ': ' + v).join('   ') +
    (e.source ? '   source: ' + e.source : '');
  const strip = $('strip'); strip.replaceChildren();
  e.steps.forEach((s, i) => { const b = el('button', {class: i === st ? 'cur' : '', title: s.action || s.label}, String(i + 1));
    b.addEventListener('click', () => { st = i; render(); }); strip.appendChild(b); });
  const shots = $('shots'); shots.replaceChildren(); const side = $('side'); side.replaceChildren();
  if (!step) return;
  const twin = e.labels[0] || e.labels[1] || step.twin;
  shots.appendChild(screen(step, twin ? (e.labels[0] || 'recorded') : ''));
  if (twin) shots.appendChild(screen(step.twin, e.labels[1] || 'twin'));
  for (const c of details(step, twin ? (e.labels[0] || 'recorded') + ': ' : '')) side.appendChild(c);
  if (twin && step.twin) for (const c of details(step.twin, (e.labels[1] || 'twin') + ': ')) side.appendChild(c);
  document.title = DATA.title + ' \\u2013 ' + e.title + ' \\u2013 step ' + (st + 1);
}
function go(d){ const n = DATA.episodes[ep].steps.length; st = Math.min(Math.max(0, st + d), Math.max(0, n - 1)); render(); }
function episode(i){ ep = Math.min(Math.max(0, i), DATA.episodes.length - 1); st = 0; render(); }
const sel = $('episode');
DATA.episodes.forEach((e, i) => sel.appendChild(el('option', {value: String(i)}, (i + 1) + '. ' + e.title)));
sel.addEventListener('change', () => episode(Number(sel.value)));
$('prev').addEventListener('click', () => go(-1)); $('next').addEventListener('click', () => go(1));
$('prev-episode').addEventListener('click', () => episode(ep - 1));
$('next-episode').addEventListener('click', () => episode(ep + 1));
document.addEventListener('keydown', (ev) => {
  if (ev.target && ev.target.tagName === 'SELECT') return;
  if (ev.key === 'ArrowRight') { go(1); ev.preventDefault(); }
  else if (ev.key === 'ArrowLeft') { go(-1); ev.preventDefault(); }
  else if (ev.key === 'PageDown') { episode(ep + 1); ev.preventDefault(); }
  else if (ev.key === 'PageUp') { episode(ep - 1); ev.preventDefault(); }
  else if (ev.key === 'Home') { st = 0; render(); } else if (ev.key === 'End') { go(1e9); }
});
render();
})();
"""


def render_html(episodes: Sequence[ViewEpisode], *, title: str = "android-gym episodes") -> str:
    """One self-contained HTML page showing ``episodes`` (at least one)."""
    if not episodes:
        raise ValueError("no episodes to show")
    data = {"title": title, "episodes": [_episode_json(e) for e in episodes]}
    # "<" escaped so that no text in the data can close the script element.
    payload = json.dumps(data, ensure_ascii=False, allow_nan=False, default=str).replace("<", "\\u003c")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{_STYLE}</style></head>
<body>
<header><h1>{html.escape(title)}</h1>
<button id="prev-episode" title="previous episode (Page Up)">&#8679;</button>
<select id="episode" aria-label="episode"></select>
<button id="next-episode" title="next episode (Page Down)">&#8681;</button>
<button id="prev" title="previous step (left arrow)">&#9664; prev</button>
<span id="counter"></span>
<button id="next" title="next step (right arrow)">next &#9654;</button>
</header>
<div class="card" style="margin:8px 12px"><b>Goal:</b> <span id="goal"></span><br><small id="outcome"></small></div>
<div id="strip"></div>
<main><div id="shots" class="shots"></div><div id="side" class="side"></div></main>
<script type="application/json" id="episode-data">{payload}</script>
<script>{_SCRIPT}</script>
</body></html>
"""


def default_page_path(path: str | os.PathLike[str]) -> Path:
    """Where the page of ``path`` goes by default: ``<name>.html`` beside a file, ``<folder>/episodes.html``."""
    src = Path(path)
    if src.is_dir():
        return src / "episodes.html"
    name = src.name
    for suffix in (".json.gz", ".json", ".parquet", ".pkl.gz", ".pkl"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return src.with_name(name + ".html")


def write_view(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    title: str | None = None,
    max_episodes: int | None = 50,
    image_width: int | None = 480,
) -> Path:
    """Write the page of the episodes at ``path`` to ``out`` (default: ``<path>.html`` beside it); returns it."""
    src = Path(path)
    episodes = load_episodes(src, max_episodes=max_episodes, image_width=image_width)
    target = Path(out) if out is not None else default_page_path(src)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_html(episodes, title=title or f"episodes: {src.name}"), encoding="utf-8")
    return target


class ViewServer:
    """A page served over HTTP on a local address in a background thread; ``url`` says where, ``close()`` stops it."""

    def __init__(self, page: str, host: str = "127.0.0.1", port: int = 0) -> None:
        """Serve ``page`` at ``/`` (and ``/index.html``) on ``host:port`` (port 0: an ephemeral one)."""
        body = page.encode("utf-8")

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path.split("?", 1)[0] not in ("/", "/index.html"):
                    self.send_error(404, "only / is served")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
                pass

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self.host, self.port = self._server.server_address[:2]
        self._thread = threading.Thread(target=self._server.serve_forever, name="android-gym-view", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """The page's address."""
        return f"http://{self.host}:{self.port}/"

    def close(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ViewServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def serve_view(page: str, *, host: str = "127.0.0.1", port: int = 0) -> ViewServer:
    """Start serving ``page`` (see :class:`ViewServer`)."""
    return ViewServer(page, host, port)
