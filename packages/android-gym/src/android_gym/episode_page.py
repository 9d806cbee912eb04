"""The episode page: what one step and one episode show (:class:`ViewStep`, :class:`ViewEpisode`) and the
self-contained HTML page that shows them (:func:`render_html`).

Both :mod:`android_gym.viewer` (recorded episodes) and :mod:`android_gym.replay` (real episodes beside their sim
replay) build pages from these; neither imports the other for them.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ViewEpisode", "ViewStep", "encode_image", "render_html"]


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


def encode_image(image: Any, width: int | None) -> tuple[bytes, tuple[int, int]] | None:
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
