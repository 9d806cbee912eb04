"""The text layouts of a compressed screen: AndroidLab lines, MobileRL lines and compact JSON.

Only whitelisted fields are written (class, actions, states, hint, text, content-desc, short resource
id in JSON, bounds, id), so attributes a dump happens to carry never reach the model.

* ``androidlab``: ``[n3f2a] Switch ;click check ; unchecked ;;Wi-Fi: bounds: [900,280][1040,380]``,
  i.e. ``[id] Class ;actions ; states ;extra;label: bounds: [x1,y1][x2,y2]``, indented two spaces per
  surviving ancestor. As in AndroidLab the class is blank for plain layout containers, a node with no
  action but focus reads ``focusable``, and text and content-desc are merged into the label; the
  extra field carries the hint (``hint: Search``).
* ``mobilerl``: ``[n3f2a] TextView; click; Audio Recorder; [221,1095] [858,1222]``, one flat line per
  element: id, class, actions and states, label (or ``hint: ...``), corners.
* ``json``: ``[{"id":..,"class":..,"text":..,"desc":..,"hint":..,"rid":..,"bounds":[x1,y1,x2,y2],
  "actions":[..],"states":[..],"parent":..}, ...]`` with empty fields left out.
"""

from __future__ import annotations

import json

from android_gym.xml.pruning import Selection
from android_gym.xml.tree import (
    F_CHECKABLE,
    F_CHECKED,
    F_CLICKABLE,
    F_DESC,
    F_ENABLED,
    F_FOCUSABLE,
    F_FOCUSED,
    F_HINT,
    F_LONG_CLICKABLE,
    F_PASSWORD,
    F_RID,
    F_SCROLLABLE,
    F_SELECTED,
    F_TEXT,
    FALSE_VALUES,
    TRUE_VALUES,
    UITree,
)

__all__ = ["BLANK_CLASSES", "STYLES", "flag_words", "render"]

STYLES: tuple[str, ...] = ("androidlab", "mobilerl", "json")
"""The text layouts `render` (and `compress_xml`) can write."""

BLANK_CLASSES = frozenset(
    ("View", "ViewGroup", "FrameLayout", "LinearLayout", "RelativeLayout", "ConstraintLayout")
)
"""Plain layout containers whose class AndroidLab's layout leaves blank."""

_T = TRUE_VALUES


def flag_words(row: tuple[str, ...], editable: bool) -> tuple[list[str], list[str]]:
    """(actions, states) words of a node row: click/long-click/scroll/check/input and
    checked|unchecked/selected/focused/password/disabled, in that order (as `UIElement` reports them)."""
    acts = []
    if row[F_CLICKABLE] in _T:
        acts.append("click")
    if row[F_LONG_CLICKABLE] in _T:
        acts.append("long-click")
    if row[F_SCROLLABLE] in _T:
        acts.append("scroll")
    checkable = row[F_CHECKABLE] in _T
    if checkable:
        acts.append("check")
    if editable:
        acts.append("input")
    states = []
    checked = row[F_CHECKED] in _T
    if checkable or checked:
        states.append("checked" if checked else "unchecked")
    if row[F_SELECTED] in _T:
        states.append("selected")
    if row[F_FOCUSED] in _T:
        states.append("focused")
    if row[F_PASSWORD] in _T:
        states.append("password")
    if row[F_ENABLED] in FALSE_VALUES:
        states.append("disabled")
    return acts, states


def _clean(s: str) -> str:
    """One line: newlines and tabs become spaces (runs collapse), ends stripped."""
    if not s:
        return s
    if "\n" in s or "\r" in s or "\t" in s:
        return " ".join(s.split())
    return s.strip()


def _label(row: tuple[str, ...]) -> str:
    text, desc = _clean(row[F_TEXT]), _clean(row[F_DESC])
    if text and desc and text != desc:
        return f"{text} {desc}"
    return text or desc


def _androidlab_words(row: tuple[str, ...], editable: bool) -> tuple[str, str]:
    """The ``click check `` and ``unchecked `` parts of an AndroidLab line."""
    acts, states = flag_words(row, editable)
    act_s = "".join(a + " " for a in acts)
    if not act_s and row[F_FOCUSABLE] in _T:
        act_s = "focusable "
    return act_s, "".join(s + " " for s in states)


def render(style: str, tree: UITree, sel: Selection, ids: list[str]) -> str:
    """The model-facing text of the selected elements in ``style`` (one of `STYLES`)."""
    rows, classes, editable = tree.rows, tree.classes, tree.editable
    if style == "androidlab":
        lines = []
        words: dict[tuple, tuple[str, str]] = {}  # flag values -> words; screens repeat a few combinations
        short: dict[str, str] = {}
        for i, (x1, y1, x2, y2), depth, eid in zip(sel.nodes, sel.bounds, sel.depths, ids):
            r = rows[i]
            cls_full = classes[i]
            cls = short.get(cls_full)
            if cls is None:
                cls = cls_full.rpartition(".")[2]
                cls = short[cls_full] = "" if cls in BLANK_CLASSES else cls
            e = editable[i]
            key = (r[F_CLICKABLE : F_ENABLED + 1], e)
            got = words.get(key)
            if got is None:
                got = words[key] = _androidlab_words(r, e)
            text, desc, hint = r[F_TEXT], r[F_DESC], r[F_HINT]
            if text:
                text = _clean(text)
            if hint:
                hint = _clean(hint)
                extra = f" hint: {hint} " if hint and hint != text else ""
            else:
                extra = ""
            if desc:  # the label, as `_label` writes it
                desc = _clean(desc)
                if text and desc and text != desc:
                    text = f"{text} {desc}"
                elif not text:
                    text = desc
            lines.append(
                f"{'  ' * depth}[{eid}] {cls} ;{got[0]}; {got[1]};{extra};{text}: bounds: [{x1},{y1}][{x2},{y2}]"
            )
        return "\n".join(lines)
    if style == "mobilerl":
        lines = []
        for p, i in enumerate(sel.nodes):
            r = rows[i]
            acts, states = flag_words(r, editable[i])
            if not acts and r[F_FOCUSABLE] in _T:
                acts.append("focusable")
            label = _label(r)
            if not label:
                hint = _clean(r[F_HINT])
                if hint:
                    label = f"hint: {hint}"
            x1, y1, x2, y2 = sel.bounds[p]
            lines.append(
                f"[{ids[p]}] {classes[i].rpartition('.')[2]}; {' '.join(acts + states)}; {label}; "
                f"[{x1},{y1}] [{x2},{y2}]"
            )
        return "\n".join(lines)
    if style == "json":
        out = []
        for p, i in enumerate(sel.nodes):
            r = rows[i]
            d: dict = {"id": ids[p], "class": classes[i].rpartition(".")[2]}
            if r[F_TEXT]:
                d["text"] = r[F_TEXT]
            if r[F_DESC]:
                d["desc"] = r[F_DESC]
            if r[F_HINT]:
                d["hint"] = r[F_HINT]
            if r[F_RID]:
                d["rid"] = r[F_RID].rpartition(":id/")[2]
            d["bounds"] = list(sel.bounds[p])
            acts, states = flag_words(r, editable[i])
            if acts:
                d["actions"] = acts
            if states:
                d["states"] = states
            if sel.parents[p] >= 0:
                d["parent"] = ids[sel.parents[p]]
            out.append(d)
        return json.dumps(out, ensure_ascii=False, separators=(",", ":"))
    raise ValueError(f"unknown compression style {style!r}; expected one of {', '.join(STYLES)}")
