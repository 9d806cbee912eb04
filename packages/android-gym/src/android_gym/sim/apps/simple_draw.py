"""Simple Draw Pro (com.simplemobiletools.draw.pro): a canvas drawn on with the finger, saved as PNG, JPG or SVG.

Page ``main``: the app bar ("Undo", "Redo", "Save as", "More options" with Clear and Change background),
the canvas (``my_canvas``: each swipe that starts on it draws a stroke in the current colour and
width) and the tool bar ("Change color" with a few swatches, "Eraser", the stroke-width seek bar).

"Save as" is the app's dialog: "Path" (the folder, shown as "Internal/..."; tapping it opens the
folder picker: a breadcrumb from "Internal", the sub-folders, OK to pick the folder shown), the
"Filename" (at first ``image_<date>_<time>``) and the extension radio buttons PNG / SVG / JPG. OK writes
``<folder>/<filename>.<extension>``: a PNG or JPEG of the canvas (Pillow) or an SVG of its paths; an
existing file asks to be overwritten. As in the app, a first save goes to "Internal/Simple Draw",
later ones to the last folder and extension used. The real app keeps no database.
"""

from __future__ import annotations

import io
import posixpath
from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.apps.folder_picker import folder_picker_parts
from android_gym.sim.view import (
    Column,
    Dialog,
    EditText,
    ImageButton,
    ListItem,
    RadioButton,
    Row,
    SeekBar,
    Text,
    Toolbar,
    View,
)

DRAW_PKG = "com.simplemobiletools.draw.pro"
STORAGE_ROOT = "/sdcard"
DEFAULT_FOLDER = f"{STORAGE_ROOT}/Simple Draw"
EXTENSIONS = ("png", "svg", "jpg")
COLORS = {"Black": "#000000", "Red": "#e53935", "Green": "#43a047", "Blue": "#1e88e5", "Yellow": "#fdd835"}
CANVAS_SIZE = (1080, 1600)
"""Pixels of a saved image (the canvas as the phone's screen holds it)."""


def humanize(path: str) -> str:
    """A folder as the app shows it: /sdcard/Pictures -> "Internal/Pictures"."""
    return "Internal" + path[len(STORAGE_ROOT):] if path.startswith(STORAGE_ROOT) else path


def render_png(strokes: list[dict[str, Any]], background: str, fmt: str = "PNG") -> bytes:
    """The canvas as an image file (PNG or JPEG) of :data:`CANVAS_SIZE`."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", CANVAS_SIZE, background)
    draw = ImageDraw.Draw(img)
    w, h = CANVAS_SIZE
    for s in strokes:
        draw.line([(x * w, y * h) for x, y in s["points"]], fill=s["color"], width=max(1, int(s["width"])),
                  joint="curve")
    out = io.BytesIO()
    img.save(out, format=fmt)
    return out.getvalue()


def render_svg(strokes: list[dict[str, Any]], background: str) -> bytes:
    """The canvas as the SVG the app writes: a background rectangle and one path per stroke."""
    w, h = CANVAS_SIZE
    parts = [f'<svg width="{w}" height="{h}" xmlns="http://www.w3.org/2000/svg">',
             f'<rect width="{w}" height="{h}" fill="{background}"/>']
    for s in strokes:
        d = " ".join(f"{'M' if i == 0 else 'L'}{x * w:.1f},{y * h:.1f}" for i, (x, y) in enumerate(s["points"]))
        parts.append(f'<path d="{d}" fill="none" stroke="{s["color"]}" stroke-width="{s["width"]:.0f}" '
                     'stroke-linecap="round" stroke-linejoin="round"/>')
    parts.append("</svg>")
    return "\n".join(parts).encode()


@register_app
class SimpleDrawApp(App):
    """Simple Draw Pro's canvas (strokes as plain dicts), its tools and its Save as dialog over ``phone.files``."""

    package = DRAW_PKG
    label = "Simple Draw Pro"
    activity = ".activities.MainActivity"
    main_page = "main"
    icon_color = "#f57c00"

    def setup(self) -> None:
        """A fresh install: an empty white canvas, black 20 px strokes, no folder saved to yet."""
        self.strokes: list[dict[str, Any]] = []
        self.undone: list[dict[str, Any]] = []
        self.color = "#000000"
        self.width = 20.0
        self.eraser = False
        self.background = "#ffffff"
        self.last_folder = ""
        self.last_extension = "png"
        self.current_name = ""
        self.form: dict[str, Any] = {}

    def clear_data(self) -> None:
        """``pm clear``: the fresh install's settings and an empty canvas."""
        self.setup()

    def on_open(self) -> None:
        self.form = {}

    # --- drawing -------------------------------------------------------------------------------------
    def stroke(self, x1: float, y1: float, x2: float, y2: float) -> None:
        """A finger's path across the canvas (fractions of its size): a stroke in the current colour and width."""
        color = self.background if self.eraser else self.color
        self.strokes.append({"color": color, "width": self.width, "points": [[x1, y1], [x2, y2]]})
        self.undone = []

    def undo(self) -> None:
        """Take back the last stroke."""
        if self.strokes:
            self.undone.append(self.strokes.pop())

    def redo(self) -> None:
        """Put back the last stroke taken back."""
        if self.undone:
            self.strokes.append(self.undone.pop())

    def build_main(self) -> View:
        drawing = tuple((s["color"], s["width"] / 2.625, tuple((p[0], p[1]) for p in s["points"]))
                        for s in self.strokes)
        canvas = View(cls="com.simplemobiletools.draw.pro.views.MyCanvas", resource_id="my_canvas", weight=1,
                      background=self.background, on_stroke=self.stroke, drawing=drawing, focusable=True)
        tools = Row(
            ImageButton("Change color", lambda: self.show_dialog("colors"), resource_id="color_picker", icon="C",
                        background=self.color if self.color != "#000000" else "#444444"),
            ImageButton("Eraser", self._toggle_eraser, resource_id="eraser", icon="E",
                        background="#c2e7ff" if self.eraser else None, selected=self.eraser),
            SeekBar(self.width, 100.0, self._set_width, resource_id="stroke_width_bar", content_desc="Stroke width",
                    weight=1),
            cls="android.widget.RelativeLayout", resource_id="bottom_tools", padding=(8, 8), background="#f5f5f5")
        return Column(
            Toolbar("", resource_id="main_toolbar", actions=[
                ImageButton("Undo", self.undo, resource_id="menu_undo", icon="<", enabled=bool(self.strokes)),
                ImageButton("Redo", self.redo, resource_id="menu_redo", icon=">", enabled=bool(self.undone)),
                ImageButton("Save as", self.open_save, resource_id="menu_save", icon="S"),
                ImageButton("More options", lambda: self.show_dialog("overflow"), icon=":")]),
            canvas, tools, cls="android.widget.RelativeLayout", resource_id="main_holder", weight=1)

    def _toggle_eraser(self) -> None:
        self.eraser = not self.eraser

    def _set_width(self, fraction: float) -> None:
        self.width = max(1.0, round(fraction * 100.0))

    def dialog_colors(self) -> View:
        items = [ListItem(name, "", lambda c=c: self._set_color(c), resource_id="color_item", title_id="title",
                          icon="o", min_height=48) for name, c in COLORS.items()]
        return Dialog("Change color", Column(*items, resource_id="color_list"), [("Cancel", self.close_dialog)])

    def _set_color(self, color: str) -> None:
        self.color = color
        self.eraser = False
        self.close_dialog()

    def dialog_overflow(self) -> View:
        entries = (("Clear", self._clear), ("Change background", self._toggle_background))
        items = [ListItem(label, "", cb, resource_id="menu_item", title_id="title") for label, cb in entries]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def _clear(self) -> None:
        self.strokes, self.undone, self.current_name = [], [], ""
        self.close_dialog()

    def _toggle_background(self) -> None:
        self.background = "#000000" if self.background == "#ffffff" else "#ffffff"
        self.close_dialog()

    # --- saving --------------------------------------------------------------------------------------
    def open_save(self) -> None:
        """The Save as dialog with the last folder and extension (a first save: Internal/Simple Draw, PNG)."""
        stamp = self.phone.now().strftime("%Y_%m_%d_%H_%M_%S")
        self.form = {"name": self.current_name or f"image_{stamp}", "ext": self.last_extension,
                     "folder": self.last_folder or DEFAULT_FOLDER, "picker": ""}
        self.show_dialog("save")

    def _set(self, key: str, value: Any) -> None:
        self.form[key] = value

    def dialog_save(self) -> View:
        f = self.form
        radios = [RadioButton(f["ext"] == ext, lambda e=ext: self._set("ext", e), text=ext.upper(),
                              resource_id=f"save_image_radio_{ext}") for ext in EXTENSIONS]
        body = Column(
            Text("Path", resource_id="save_image_path_label", size=12, color="#5f6368", padding=(24, 2)),
            View(cls="android.widget.TextView", text=humanize(f["folder"]), resource_id="save_image_path",
                 clickable=True, focusable=True, on_click=self._open_picker, padding=(24.0, 8.0), min_height=40),
            Text("Filename", size=12, color="#5f6368", padding=(24, 2)),
            EditText(f["name"], lambda v: self._set("name", v), hint="Filename", resource_id="save_image_filename"),
            Column(*radios, resource_id="save_image_radio_group", padding=(16, 0)),
            resource_id="save_image_holder")
        return Dialog("Save as", body, [("OK", self._save), ("Cancel", self.close_dialog)],
                      button_ids=["android:id/button1", "android:id/button2"])

    def _open_picker(self) -> None:
        self.form["picker"] = self.form["folder"]
        self.phone.set_focus(None)
        self.show_dialog("picker")

    def dialog_picker(self) -> View:
        """The folder picker: a breadcrumb from Internal, the sub-folders of the folder shown, OK picks it."""
        folder = self.form.get("picker") or STORAGE_ROOT
        crumbs, listing = folder_picker_parts(self.phone.files, folder, lambda p: self._set("picker", p))
        body = Column(Row(*crumbs, resource_id="filepicker_breadcrumbs", padding=(16, 0)), listing,
                      resource_id="filepicker_holder")
        return Dialog("Select a folder", body, [("OK", self._pick), ("Cancel", lambda: self.show_dialog("save"))],
                      button_ids=["android:id/button1", "android:id/button2"])

    def _pick(self) -> None:
        self.form["folder"] = self.form.get("picker") or STORAGE_ROOT
        self.show_dialog("save")

    def on_back(self) -> bool:
        if self.dialog is not None and self.dialog[0] == "picker":
            folder = self.form.get("picker") or STORAGE_ROOT
            if folder != STORAGE_ROOT and folder.startswith(STORAGE_ROOT):  # Back goes up a folder first
                self.form["picker"] = posixpath.dirname(folder)
            else:
                self.show_dialog("save")
            return True
        return super().on_back()

    def target(self) -> str:
        """The path OK would write."""
        f = self.form
        return f"{f['folder'].rstrip('/')}/{f['name'].strip()}.{f['ext']}"

    def _save(self) -> None:
        name = self.form.get("name", "").strip()
        if not name:
            self.toast("Filename cannot be empty")
            return
        if any(c in name for c in '/\\:*?"<>|'):
            self.toast("Filename contains invalid characters")
            return
        if self.phone.files.exists(self.target()):
            self.show_dialog("overwrite")
            return
        self._write()

    def dialog_overwrite(self) -> View:
        return Dialog("", f'File "{posixpath.basename(self.target())}" already exists. Overwrite?',
                      [("Yes", self._write), ("No", lambda: self.show_dialog("save"))],
                      button_ids=["android:id/button1", "android:id/button2"])

    def _write(self) -> None:
        """Write the canvas to the chosen file and remember the folder, extension and name for the next save."""
        f = self.form
        path = self.target()
        if f["ext"] == "svg":
            data = render_svg(self.strokes, self.background)
        else:
            data = render_png(self.strokes, self.background, "PNG" if f["ext"] == "png" else "JPEG")
        self.phone.files.write(path, data, self.phone.clock_ms)
        self.last_folder, self.last_extension, self.current_name = f["folder"], f["ext"], f["name"].strip()
        self.form = {}
        self.close_dialog()
        self.phone.set_focus(None)
        self.toast("File saved successfully")
