"""Views of the simulated phone: the ``View`` node, small widget constructors and the layout pass.

Apps build a fresh tree of ``View`` objects from their state on every frame (views are cheap and
hold callbacks, app state holds none). Sizes are in dp (text sizes in sp); :func:`layout` turns
them into screen-pixel ``bounds`` for a given density, stacking children vertically or
horizontally, sharing leftover space by ``weight`` and offsetting scrollable lists.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

Bounds = tuple[int, int, int, int]
Callback = Callable[[], Any]

VERTICAL = "vertical"
HORIZONTAL = "horizontal"


@dataclass(eq=False, slots=True)
class View:
    """One node of a screen: what uiautomator reports (class, text, ids, flags), layout and behaviour.

    Layout: ``width``/``height`` fixed in dp (None: fill the parent's width / wrap the content's
    height, at least ``min_height``), ``weight`` shares leftover space along the parent's orientation, ``padding`` is
    (horizontal, vertical) dp inside the node. Behaviour: ``on_click``/``on_long_click`` for taps,
    ``on_text(new_value)`` makes the node an editable field, ``on_submit`` runs on Enter,
    ``on_seek(fraction)`` for seek bars, ``on_stroke(x1, y1, x2, y2)`` for drawing surfaces (a swipe
    starting on the node, as fractions of its width and height; ``drawing`` holds the (colour, width in
    dp, points as fractions) strokes the screenshot paints on it), ``picture`` is the path of an image file
    (on the phone's storage) the screenshot shows in the node, scaled to fit, ``scroll_key`` names the app-state
    offset of a scrollable list. A scrolling node with ``wrap_content`` measures as its content (a dialog's body) and only
    scrolls, and reports itself scrollable, once its parent gives it less height than that.
    ``key`` identifies the node across frames (focus); it defaults to ``resource_id``. A node with ``absolute`` places
    its children at their ``place`` (pixel box relative to the node's top-left) instead of stacking them (a web
    page's elements); ``image`` is a callable giving a Pillow image the screenshot shows scaled over the node (a
    web page's pixels), and a node with ``painted`` False is drawn by such an image, not by itself;
    ``on_touch(x, y)`` takes a tap at screen pixel (x, y) and ``on_drag(x1, y1, x2, y2)`` a swipe starting on the
    node, in screen pixels. An ``overlay`` child of
    a vertical layout takes no room in it: it is drawn over the bottom of the sibling before it (as a floating
    button floats over the bottom of a list) and comes after that sibling in the hierarchy. A ``layout_only``
    node (a layout Android leaves out of the accessibility tree, not important for accessibility) is laid out and
    drawn, but the dump leaves it out and lists its children as its parent's. ``input_type`` tells the keyboard
    what a field takes ("name": capitalised words, Next on the action key; "sentence": capitalised sentences
    (Shift is on while the field is empty); "phone", "visible_password" (text without suggestions) and "dropdown" (a label
    drop-down): Gboard's row of digits over the letters, as the emulator shows it; "" text); ``ime_action``, when
    set, is the label of the keyboard's action key for the field (an app's ``imeOptions``, e.g. "Done"). ``dump_rank`` orders siblings in the
    dump (stable, default 0) where a real app's view tree order differs from where the views are drawn (a
    bottom navigation bar added before the page above it).
    """

    cls: str = "android.view.View"
    text: str = ""
    resource_id: str = ""
    content_desc: str = ""
    hint: str = ""
    checkable: bool = False
    checked: bool = False
    clickable: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False
    width: float | None = None
    height: float | None = None
    min_height: float = 0.0
    weight: float = 0.0
    orientation: str = VERTICAL
    padding: tuple[float, float] = (0.0, 0.0)
    on_click: Callback | None = None
    on_long_click: Callback | None = None
    on_text: Callable[[str], Any] | None = None
    on_submit: Callback | None = None
    on_seek: Callable[[float], Any] | None = None
    on_stroke: Callable[[float, float, float, float], Any] | None = None
    on_touch: Callable[[int, int], Any] | None = None
    on_drag: Callable[[int, int, int, int], Any] | None = None
    absolute: bool = False
    place: Bounds | None = None
    image: Callable[[], Any] | None = None
    painted: bool = True
    drawing: tuple[tuple[str, float, tuple[tuple[float, float], ...]], ...] = ()
    picture: str = ""
    scroll_key: str | None = None
    wrap_content: bool = False
    overlay: bool = False
    layout_only: bool = False
    input_type: str = ""
    ime_action: str = ""
    dump_rank: int = 0
    key: str | None = None
    progress: float = 0.0
    max_progress: float = 100.0
    background: str | None = None
    color: str = "#1f1f1f"
    size: float = 16.0
    bold: bool = False
    align: str = "start"
    max_lines: int = 0
    icon: str | None = None
    children: list[View] = field(default_factory=list)
    bounds: Bounds = (0, 0, 0, 0)
    content_height: int = 0
    _measured: tuple[int, int] | None = None
    _widths: tuple[int, list[int]] | None = None

    @property
    def editable(self) -> bool:
        """True for text fields (nodes with an ``on_text`` handler or of class EditText)."""
        return self.on_text is not None or self.cls == "android.widget.EditText"

    @property
    def identity(self) -> str | None:
        """The key used for focus: ``key`` when given, else ``resource_id``, else None."""
        return self.key or self.resource_id or None

    def walk(self):
        """Yield this node and its descendants in document (pre-)order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def find(self, predicate: Callable[[View], bool]) -> View | None:
        """The first node in document order for which ``predicate`` is true."""
        for node in self.walk():
            if predicate(node):
                return node
        return None


def _view(defaults: dict[str, Any], overrides: dict[str, Any]) -> View:
    """A View from a constructor's defaults, with the caller's keyword arguments taking precedence."""
    if "padding" in overrides:
        overrides["padding"] = _pad(overrides["padding"])
    defaults.update(overrides)
    return View(**defaults)


def _pad(padding: float | tuple[float, float]) -> tuple[float, float]:
    if isinstance(padding, (int, float)):
        return (float(padding), float(padding))
    return (float(padding[0]), float(padding[1]))


# --- constructors ---------------------------------------------------------------------------------


def Text(text: str, *, resource_id: str = "", size: float = 16, bold: bool = False, color: str = "#1f1f1f",
         align: str = "start", max_lines: int = 0, padding: float | tuple[float, float] = (16, 4),
         **kw: Any) -> View:
    """A TextView showing ``text`` (wraps to several lines unless ``max_lines`` caps it)."""
    return _view(dict(cls="android.widget.TextView", text=text, resource_id=resource_id, size=size, bold=bold,
                color=color, align=align, max_lines=max_lines, padding=_pad(padding)), kw)


def Button(text: str, on_click: Callback | None = None, *, resource_id: str = "", enabled: bool = True,
           background: str | None = "#d3e3fd", **kw: Any) -> View:
    """A clickable Button labelled ``text``."""
    kw.setdefault("height", 48)
    kw.setdefault("padding", (16, 8))
    kw["padding"] = _pad(kw["padding"])
    return _view(dict(cls="android.widget.Button", text=text, resource_id=resource_id, on_click=on_click,
                clickable=True, focusable=True, enabled=enabled, background=background, align="center",
                bold=True, size=14), kw)


def ImageButton(content_desc: str, on_click: Callback | None = None, *, resource_id: str = "",
                icon: str | None = None, **kw: Any) -> View:
    """A 48dp icon button known to accessibility by ``content_desc`` (e.g. "Navigate up", "Search")."""
    kw.setdefault("width", 48)
    kw.setdefault("height", 48)
    return _view(dict(cls="android.widget.ImageButton", content_desc=content_desc, resource_id=resource_id,
                on_click=on_click, clickable=True, focusable=True, icon=icon or content_desc[:1]), kw)


def Image(content_desc: str = "", *, resource_id: str = "", icon: str | None = None, width: float = 40,
          height: float = 40, **kw: Any) -> View:
    """A non-interactive ImageView (an icon or picture)."""
    return _view(dict(cls="android.widget.ImageView", content_desc=content_desc, resource_id=resource_id,
                icon=icon, width=width, height=height), kw)


def EditText(value: str, on_text: Callable[[str], Any], *, hint: str = "", resource_id: str = "",
             key: str | None = None, on_submit: Callback | None = None, password: bool = False,
             multiline: bool = False, **kw: Any) -> View:
    """An editable text field showing ``value``; typing calls ``on_text(new_value)`` (store it in app state).

    Give it a stable ``key`` (or ``resource_id``) so focus survives rebuilding the screen. An empty
    field shows ``hint`` as its text, as Android's accessibility tree does. Enter runs ``on_submit``
    when given, else inserts a newline in a ``multiline`` field, else hides the keyboard.
    """
    kw.setdefault("max_lines", 0 if multiline else 1)
    kw.setdefault("height", None if multiline else 56)
    if multiline:
        kw.setdefault("min_height", 56)
    kw.setdefault("padding", (16, 8))
    kw["padding"] = _pad(kw["padding"])
    return _view(dict(cls="android.widget.EditText", text=value, hint=hint, resource_id=resource_id, key=key,
                on_text=on_text, on_submit=on_submit, clickable=True, focusable=True, long_clickable=True,
                password=password, background="#f0f4f9"), kw)


def Switch(checked: bool, on_click: Callback | None = None, *, text: str = "", resource_id: str = "",
           **kw: Any) -> View:
    """An on/off Switch (checkable; ``checked`` is its state)."""
    kw.setdefault("width", 60 if not text else None)
    kw.setdefault("height", 48)
    return _view(dict(cls="android.widget.Switch", text=text or ("ON" if checked else "OFF"), resource_id=resource_id,
                checkable=True, checked=checked, clickable=True, focusable=True, on_click=on_click), kw)


def CheckBox(checked: bool, on_click: Callback | None = None, *, text: str = "", resource_id: str = "",
             **kw: Any) -> View:
    """A CheckBox with optional label ``text``."""
    kw.setdefault("height", 48)
    kw.setdefault("padding", (8, 4))
    kw["padding"] = _pad(kw["padding"])
    return _view(dict(cls="android.widget.CheckBox", text=text, resource_id=resource_id, checkable=True,
                checked=checked, clickable=True, focusable=True, on_click=on_click), kw)


def RadioButton(checked: bool, on_click: Callback | None = None, *, text: str = "", resource_id: str = "",
                **kw: Any) -> View:
    """A RadioButton with label ``text``."""
    kw.setdefault("height", 48)
    kw.setdefault("padding", (8, 4))
    kw["padding"] = _pad(kw["padding"])
    return _view(dict(cls="android.widget.RadioButton", text=text, resource_id=resource_id, checkable=True,
                checked=checked, clickable=True, focusable=True, on_click=on_click), kw)


def SeekBar(progress: float, max_progress: float, on_seek: Callable[[float], Any], *, resource_id: str = "",
            content_desc: str = "", **kw: Any) -> View:
    """A horizontal SeekBar; a tap or drag calls ``on_seek(fraction)`` with the x position in [0, 1]."""
    kw.setdefault("height", 48)
    kw.setdefault("padding", (16, 0))
    kw["padding"] = _pad(kw["padding"])
    return _view(dict(cls="android.widget.SeekBar", text="", resource_id=resource_id,
                content_desc=content_desc, progress=progress, max_progress=max_progress, on_seek=on_seek,
                clickable=True, focusable=True, scrollable=False), kw)


def Column(*children: View | None, **kw: Any) -> View:
    """A vertical LinearLayout stacking ``children`` (None entries are skipped)."""
    kw.setdefault("cls", "android.widget.LinearLayout")
    if "padding" in kw:
        kw["padding"] = _pad(kw["padding"])
    return View(orientation=VERTICAL, children=[c for c in children if c is not None], **kw)


def Row(*children: View | None, **kw: Any) -> View:
    """A horizontal LinearLayout placing ``children`` side by side."""
    kw.setdefault("cls", "android.widget.LinearLayout")
    if "padding" in kw:
        kw["padding"] = _pad(kw["padding"])
    return View(orientation=HORIZONTAL, children=[c for c in children if c is not None], **kw)


def Frame(*children: View | None, **kw: Any) -> View:
    """A FrameLayout wrapper (stacks vertically here; used for real-looking nesting)."""
    kw.setdefault("cls", "android.widget.FrameLayout")
    return Column(*children, **kw)


def ScrollList(children: Sequence[View], scroll_key: str, *, resource_id: str = "", weight: float = 1.0,
               cls: str = "androidx.recyclerview.widget.RecyclerView", **kw: Any) -> View:
    """A vertically scrolling list (RecyclerView-like): only items inside the viewport are emitted.

    The scroll offset (pixels) lives in the app's ``scroll`` dict under ``scroll_key``; the phone
    changes it on swipes. By default the list takes the leftover height (``weight=1``).
    """
    return _view(dict(cls=cls, resource_id=resource_id, scroll_key=scroll_key, scrollable=True, focusable=True,
                weight=weight if kw.get("height") is None else 0.0, orientation=VERTICAL,
                children=[c for c in children if c is not None]), kw)


def Toolbar(title: str, *, on_back: Callback | None = None, actions: Sequence[View] = (),
            resource_id: str = "toolbar", title_id: str = "", back_desc: str = "Navigate up",
            background: str = "#f8fafd") -> View:
    """A 64dp app bar: an optional "Navigate up" button, the title and trailing action icons."""
    items: list[View] = []
    if on_back is not None:
        items.append(ImageButton(back_desc, on_back, icon="<"))
    items.append(Text(title, size=22, resource_id=title_id, weight=1, max_lines=1, padding=(16, 0)))
    items.extend(actions)
    return View(cls="android.view.ViewGroup", resource_id=resource_id, orientation=HORIZONTAL, height=64,
                padding=(4.0, 8.0), background=background, children=items)


def ListItem(title: str, subtitle: str = "", on_click: Callback | None = None, *, resource_id: str = "",
             title_id: str = "android:id/title", subtitle_id: str = "android:id/summary",
             icon: str | None = None, trailing: View | None = None, on_long_click: Callback | None = None,
             min_height: float = 56, **kw: Any) -> View:
    """A clickable list row with a title, an optional subtitle, icon and trailing widget (e.g. a Switch)."""
    texts = Column(Text(title, resource_id=title_id, size=16, max_lines=2, padding=(0, 2)),
                   Text(subtitle, resource_id=subtitle_id, size=14, color="#444746", max_lines=3, padding=(0, 2))
                   if subtitle else None,
                   cls="android.widget.RelativeLayout", weight=1, padding=(0, 8))
    children: list[View] = []
    if icon is not None:
        children.append(Image(icon=icon, width=40, height=40))
    children.append(texts)
    if trailing is not None:
        children.append(trailing)
    row = View(cls="android.widget.LinearLayout", resource_id=resource_id, orientation=HORIZONTAL,
               padding=(16.0, 0.0), clickable=on_click is not None, focusable=on_click is not None,
               long_clickable=on_long_click is not None, on_click=on_click, on_long_click=on_long_click,
               min_height=min_height, children=children, **kw)
    return row


def Dialog(title: str, body: str | View | None = None, buttons: Sequence[tuple[str, Callback | None]] = (),
           *, resource_id: str = "", button_ids: Sequence[str] | None = None) -> View:
    """An AlertDialog: title, a message (or any body view) and a row of text buttons (label, callback)."""
    parts: list[View | None] = [
        Text(title, resource_id="android:id/alertTitle", size=22, padding=(24, 12)) if title else None,
    ]
    if isinstance(body, str):
        parts.append(_dialog_body(Text(body, resource_id="android:id/message", size=15, color="#444746",
                                       padding=(24, 8)), title))
    elif body is not None:
        parts.append(_dialog_body(body, title))
    row: list[View] = [View(cls="android.view.View", weight=1, height=1, layout_only=True)]  # a Space: not listed
    ids = list(button_ids) if button_ids else ["android:id/button1", "android:id/button2", "android:id/button3"]
    for i, (label, cb) in enumerate(buttons):
        row.append(Button(label, cb, resource_id=ids[i] if i < len(ids) else "", background=None, height=48))
    if buttons:
        parts.append(Row(*row, cls="android.widget.LinearLayout", resource_id="android:id/buttonPanel",
                         padding=(16, 8)))
    return Column(*parts, cls="android.widget.FrameLayout", resource_id=resource_id or "android:id/content",
                  background="#ffffff", padding=(0, 8))


def _dialog_body(body: View, title: str) -> View:
    """A dialog's message or custom view, sized as AlertDialog sizes its content panel: as tall as its
    content while the dialog fits the screen, else what the title and buttons leave (so the buttons
    stay reachable above the soft keyboard on a short screen). A vertical container body then scrolls;
    others (a one-line message, a row of fields) are cut. The node tree is left as it was (no wrapper),
    so the hierarchy of a dialog that fits is unchanged."""
    if body.height is None:
        body.weight = 1.0
        if body.children and body.orientation == VERTICAL and body.scroll_key is None:
            body.scroll_key = f"__dialog__/{title}/{body.resource_id}"
            body.wrap_content = True
    return body


def Fab(content_desc: str, on_click: Callback | None, *, resource_id: str = "fab", icon: str = "+") -> View:
    """A floating action button (56dp), placed by the phone at the bottom-right of the content."""
    return View(cls="android.widget.ImageButton", content_desc=content_desc, resource_id=resource_id,
                on_click=on_click, clickable=True, focusable=True, width=56, height=56, icon=icon,
                background="#c2e7ff", key="__fab__")


def Spacer(height: float = 0, weight: float = 0) -> View:
    """Empty space: a fixed ``height`` or a share of leftover space by ``weight``."""
    return View(cls="android.view.View", height=height if not weight else None, weight=weight)


# --- layout ---------------------------------------------------------------------------------------

_LINE = 1.35  # line height as a multiple of the text size
_CHAR = 0.52  # average glyph width as a multiple of the text size


def _text_lines(text: str, size_px: float, width_px: float, max_lines: int) -> int:
    if not text:
        return 1
    per_line = max(1, int(width_px / (size_px * _CHAR)))
    lines = 0
    for para in text.split("\n"):
        lines += max(1, math.ceil(len(para) / per_line))
    if max_lines:
        lines = min(lines, max_lines)
    return lines


def text_width(text: str, size_px: float) -> float:
    """Estimated pixel width of ``text`` on one line at ``size_px``."""
    return len(text) * size_px * _CHAR


def _intrinsic_width(view: View, scale: float) -> int:
    if view.width is not None:
        return int(round(view.width * scale))
    pad = view.padding[0] * scale * 2
    if view.children:
        if view.orientation == HORIZONTAL:
            return int(sum(_intrinsic_width(c, scale) for c in view.children) + pad)
        return int(max(_intrinsic_width(c, scale) for c in view.children) + pad)
    label = view.text or view.hint
    return int(text_width(label, view.size * scale) + pad) if label else int(48 * scale)


def measure(view: View, width: int, scale: float) -> int:
    """Height in pixels that ``view`` wants when given ``width`` pixels (cached per width)."""
    m = view._measured
    if m is not None and m[0] == width:
        return m[1]
    if view.height is not None:
        h = int(round(view.height * scale))
    else:
        pad_h = view.padding[0] * scale
        pad_v = view.padding[1] * scale
        inner = width - 2 * pad_h
        if inner < 1:
            inner = 1
        children = view.children
        if not children:
            if view.weight and view.cls == "android.view.View" and not view.text:
                h = 0
            else:
                size_px = view.size * scale
                label = view.text or view.hint
                lines = _text_lines(label, size_px, inner, view.max_lines)
                h = int(lines * size_px * _LINE + 2 * pad_v)
        elif view.orientation == VERTICAL:
            total = 0
            if view.scroll_key is None or view.wrap_content:
                inner_i = int(inner)
                for c in children:
                    if not c.overlay:
                        total += measure(c, inner_i if c.width is None else int(c.width * scale), scale)
            h = int(total + 2 * pad_v)
        else:
            tallest = 0
            for c, w in zip(children, _row_widths(view, int(inner), scale)):
                ch = measure(c, w, scale)
                if ch > tallest:
                    tallest = ch
            h = int(tallest + 2 * pad_v)
        if view.min_height:
            least = int(view.min_height * scale)
            if least > h:
                h = least
    view._measured = (width, h)
    return h


def _row_widths(view: View, inner: int, scale: float) -> list[int]:
    """Pixel widths of a row's children inside ``inner`` pixels (fixed, intrinsic, then weighted shares)."""
    cached = view._widths
    if cached is not None and cached[0] == inner:
        return cached[1]
    children = view.children
    widths: list[int] = []
    fixed = 0
    total_weight = 0.0
    for c in children:
        if c.weight and c.width is None:
            widths.append(-1)
            total_weight += c.weight
        else:
            w = _intrinsic_width(c, scale)
            widths.append(w)
            fixed += w
    if total_weight:
        left = max(0, inner - fixed)
        widths = [int(left * c.weight / total_weight) if w < 0 else w for c, w in zip(children, widths)]
    view._widths = (inner, widths)
    return widths


def layout(view: View, x: int, y: int, width: int, height: int, scale: float,
           scroll: dict[str, int] | None = None) -> None:
    """Assign pixel ``bounds`` to ``view`` and its subtree inside the box (x, y, width, height).

    ``scale`` is density / 160. ``scroll`` maps scroll keys to pixel offsets; offsets are clamped to
    the content and written back, and ``content_height`` is recorded on scrollable lists.
    """
    view.bounds = (x, y, x + width, y + height)
    if not view.children:
        return
    if view.absolute:  # children at their own pixel boxes (a web page's elements)
        for c in view.children:
            px1, py1, px2, py2 = c.place or (0, 0, 0, 0)
            layout(c, x + px1, y + py1, max(0, px2 - px1), max(0, py2 - py1), scale, scroll)
        return
    pad_h = int(view.padding[0] * scale)
    pad_v = int(view.padding[1] * scale)
    ix, iy = x + pad_h, y + pad_v
    iw, ih = max(0, width - 2 * pad_h), max(0, height - 2 * pad_v)
    children = view.children
    if view.orientation == HORIZONTAL:
        widths = _row_widths(view, iw, scale)
        cx = ix
        if view.scroll_key is not None and scroll is not None:  # a list scrolling sideways (a row of chips)
            limit = max(0, sum(widths) - iw)
            offset = min(max(0, scroll.get(view.scroll_key, 0)), limit)
            scroll[view.scroll_key] = offset
            cx -= offset
        for c, w in zip(children, widths):
            if (c.children and c.height is None) or (c.height is None and c.weight):
                ch = ih  # containers in a row fill its height, as do weighted children without a height
            else:
                ch = measure(c, w, scale)
                if ch > ih:
                    ch = ih
            cy = iy + (ih - ch) // 2
            if c.children:
                layout(c, cx, cy, w, ch, scale, scroll)
            else:  # a leaf only takes its box
                c.bounds = (cx, cy, cx + w, cy + ch)
            cx += w
        return
    heights: list[int] = []
    widths: list[int] = []
    fixed = 0
    total_weight = 0.0
    for c in children:
        cw = iw if c.width is None else int(c.width * scale)
        widths.append(cw)
        if c.weight and c.height is None and view.scroll_key is None:
            heights.append(-1)
            total_weight += c.weight
        else:
            h = measure(c, cw, scale)
            heights.append(h)
            if not c.overlay:
                fixed += h
    if total_weight:
        left = max(0, ih - fixed)
        heights = [int(left * c.weight / total_weight) if h < 0 else h for c, h in zip(children, heights)]
    offset = 0
    if view.scroll_key is not None:
        view.content_height = sum(h for c, h in zip(children, heights) if not c.overlay)
        limit = max(0, view.content_height - ih)
        if view.wrap_content:
            view.scrollable = limit > 0
            if limit:
                view.focusable = True
        if scroll is not None:
            offset = min(max(0, scroll.get(view.scroll_key, 0)), limit)
            scroll[view.scroll_key] = offset
    _place_column(children, heights, widths, ix, iy - offset, scale, scroll)
    if view.wrap_content and scroll is not None and view.scroll_key is not None:
        revealed = _reveal_focused(view, iy, ih, offset, scroll)
        if revealed != offset:
            _place_column(children, heights, widths, ix, iy - revealed, scale, scroll)


def _place_column(children: list[View], heights: list[int], widths: list[int], x: int, y: int, scale: float,
                  scroll: dict[str, int] | None) -> None:
    """Stack ``children`` downwards from (x, y) with the given pixel heights and widths."""
    for c, h, cw in zip(children, heights, widths):
        top = y - h if c.overlay else y  # an overlay covers the bottom of what is above it
        if c.children:
            layout(c, x, top, cw, h, scale, scroll)
        else:  # a leaf only takes its box
            c.bounds = (x, top, x + cw, top + h)
        if not c.overlay:
            y += h


def _reveal_focused(view: View, top: int, height: int, offset: int, scroll: dict[str, int]) -> int:
    """The scroll offset of a wrap-content scroller after bringing its focused field into view.

    As Android's ScrollView does on a focus change or a resize (the soft keyboard opening), and only
    then: a later swipe away from the field is left alone. Which field and viewport were last revealed
    is kept in ``scroll`` next to the offset, under ``<scroll_key>@focus``.
    """
    key = view.scroll_key or ""
    focused = view.find(lambda v: v.focused and v.editable) if view.content_height > height else None
    if focused is None:
        scroll.pop(key + "@focus", None)
        return offset
    stamp = zlib.crc32(f"{focused.identity}|{height}".encode())
    if scroll.get(key + "@focus") == stamp:
        return offset
    scroll[key + "@focus"] = stamp
    y1, y2 = focused.bounds[1], focused.bounds[3]
    if y2 > top + height:
        offset += min(y2 - (top + height), y1 - top)  # down until its bottom shows, not past its top
    elif y1 < top:
        offset -= top - y1
    offset = min(max(0, offset), view.content_height - height)
    scroll[key] = offset
    return offset
