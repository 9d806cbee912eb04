"""Simple Gallery Pro (com.simplemobiletools.gallery.pro): the phone's pictures and videos by folder, copy/move/delete.

The app reads the phone's shared storage (``phone.files``) as the real app reads the media store, so a
file AndroidWorld's set-up pushes into ``/sdcard/DCIM`` shows at once. Pages, as on the emulator after its
one-time set-up (all-files access granted):

- ``folders`` (MainActivity): every folder of ``/sdcard`` (``Android/`` excluded) that directly holds
  media, newest first, each a thumbnail of its newest file with the folder's name (``dir_name``) and
  how many files it holds (``photo_cnt``);
- ``media`` (MediaActivity): one folder's pictures and videos, newest first, each a thumbnail with its
  file name (``medium_name``; the app's "Show file names" setting on);
- ``viewer`` (ViewPagerActivity): one file full screen, its name as the title; Share, Delete and
  "More options" (Copy to, Move to, Properties) in the app bar.

"Copy to" and "Move to" open Simple Mobile Tools' folder picker ("Select a folder": a breadcrumb from
"Internal", the folder's sub-folders, OK), starting at the file's folder. Screenshots show the pictures
themselves (the files' pixels, scaled to the thumbnail or the screen).
"""

from __future__ import annotations

import datetime as dt
import io
import posixpath
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.apps.folder_picker import folder_picker_parts
from android_gym.sim.apps.search_bar import bar_button, search_bar
from android_gym.sim.files import FileSystemError
from android_gym.sim.view import (
    HORIZONTAL,
    Callback,
    Column,
    Dialog,
    Frame,
    Image,
    ImageButton,
    ListItem,
    Row,
    ScrollList,
    Text,
    Toolbar,
    View,
)

GALLERY_PKG = "com.simplemobiletools.gallery.pro"
STORAGE_ROOT = "/sdcard"
IMAGE_EXTENSIONS = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp", ".heic", ".svg")
VIDEO_EXTENSIONS = (".mp4", ".mkv", ".3gp", ".webm", ".mov", ".avi")
MEDIA_EXTENSIONS = IMAGE_EXTENSIONS + VIDEO_EXTENSIONS
DIR_COLUMNS = 2
MEDIA_COLUMNS = 3


def is_media(name: str) -> bool:
    """Whether the gallery lists a file of this name (a picture or a video, by extension; no hidden files)."""
    return not name.startswith(".") and name.lower().endswith(MEDIA_EXTENSIONS)


def humanize(path: str) -> str:
    """A folder as Simple Mobile Tools' apps show it: /sdcard/DCIM -> "Internal/DCIM"."""
    return "Internal" + path[len(STORAGE_ROOT):] if path.startswith(STORAGE_ROOT) else path


MEDIA_MENU = ("Filter media", "Change view type", "Temporarily show hidden", "Open the Recycle Bin", "Group by",
              "Set as default folder", "Create new folder", "Column count", "Slideshow", "Settings")
"""A media grid's More options, in the emulator's order."""


def _half_up(value: float) -> str:
    """One decimal, halves rounded up (as Java's formatters do; Python's rounding would give 0.25 -> "0.2")."""
    return str(Decimal(repr(value)).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def _size(n: int) -> str:
    """A file size as Simple Mobile Tools writes it: "12.8 kB", "812 B", "1.2 MB" (1024-based, ".0" dropped)."""
    if n < 1024:
        return f"{n} B"
    value, unit = (n / 1024, "kB") if n < 1024 ** 2 else (n / 1024 ** 2, "MB")
    text = _half_up(value)
    return f"{text[:-2] if text.endswith('.0') else text} {unit}"


def _resolution(data: bytes) -> str:
    """A picture's "500 x 500 (0.3MP)"; "" when the bytes are no picture Pillow reads."""
    try:
        from PIL import Image as PilImage

        with PilImage.open(io.BytesIO(data)) as img:
            w, h = img.size
    except Exception:  # noqa: BLE001 - not a picture (a video, a broken file): no Resolution row
        return ""
    return f"{w} x {h} ({_half_up(w * h / 1_000_000)}MP)"


def _storage_path(folder: str) -> str:
    """/sdcard/DCIM -> "/storage/emulated/0/DCIM", the path the app shows."""
    return "/storage/emulated/0" + folder[len(STORAGE_ROOT):] if folder.startswith(STORAGE_ROOT) else folder


def _when(mtime: int) -> dt.datetime:
    return dt.datetime.fromtimestamp(mtime, dt.timezone.utc)


def _day(mtime: int) -> str:
    """The app's default date format, "19.07.2025"."""
    return _when(mtime).strftime("%d.%m.%Y")


def _clock(mtime: int, h24: bool) -> str:
    when = _when(mtime)
    return when.strftime("%H:%M") if h24 else when.strftime("%I:%M %p").lstrip("0")


def _grid(items: list[View], columns: int) -> list[View]:
    """Rows of ``columns`` equal cells (the last row padded with empty space the dump leaves out)."""
    rows = []
    for i in range(0, len(items), columns):
        cells = items[i:i + columns]
        cells += [View(cls="android.view.View", weight=1, height=1, layout_only=True)
                  for _ in range(columns - len(cells))]
        rows.append(Row(*cells, cls="android.widget.LinearLayout"))
    return rows


@register_app
class GalleryApp(App):
    """Simple Gallery Pro over ``phone.files`` (state: the open folder and file, the picker's folder)."""

    package = GALLERY_PKG
    label = "Simple Gallery Pro"
    activity = "com.simplemobiletools.gallery.pro.activities.MainActivity"
    main_page = "folders"
    icon_color = "#fb8c00"

    def setup(self) -> None:
        self.picker: dict[str, Any] = {}
        self.show_names = False  # the emulator's gallery shows no file names under the thumbnails
        self.show_all = False
        self.query = ""
        self.bar_hidden = False

    def on_open(self) -> None:
        self.picker = {}
        self.query = ""
        self.bar_hidden = False

    def current_activity(self) -> str:
        page = "media" if self.page == "folders" and self.show_all else self.page
        name = {"media": "MediaActivity", "viewer": "ViewPagerActivity"}.get(page, "MainActivity")
        return f"com.simplemobiletools.gallery.pro.activities.{name}"

    # --- what the media store holds -------------------------------------------------------------------------
    def _mtime(self, path: str) -> int:
        return self.phone.files.mtimes.get(self.phone.files.norm(path), 0)

    def media_in(self, folder: str) -> list[str]:
        """The pictures and videos directly in ``folder``, newest first (then by name)."""
        fs = self.phone.files
        try:
            names = fs.listdir(folder)
        except FileSystemError:
            return []
        paths = [posixpath.join(folder, n) for n in names if is_media(n) and fs.is_file(posixpath.join(folder, n))]
        return sorted(paths, key=lambda p: (-self._mtime(p), posixpath.basename(p).lower()))

    def folders(self) -> list[str]:
        """Folders of shared storage holding media directly, the one with the newest file first."""
        fs = self.phone.files
        found: dict[str, int] = {}
        for path in fs.walk_files(STORAGE_ROOT):
            folder = posixpath.dirname(path)
            if folder.startswith(f"{STORAGE_ROOT}/Android") or not is_media(posixpath.basename(path)):
                continue
            found[folder] = max(found.get(folder, 0), self._mtime(path))
        return sorted(found, key=lambda f: (-found[f], f.lower()))

    # --- pages ---------------------------------------------------------------------------------------------
    def _set_query(self, value: str) -> None:
        self.query = value

    def _focus_search(self) -> None:
        self.phone.set_focus("gallery_search")

    def _toggle_names(self) -> None:
        self.show_names = not self.show_names

    def _set_show_all(self, on: bool) -> None:
        self.show_all, self.query, self.bar_hidden = on, "", False
        self.scroll.clear()

    def _coordinator(self, bar: View | None, body: list[View], scroll_key: str, grid_id: str, coordinator_id: str,
                     empty: View) -> View:
        """A page as the emulator lists it: the CoordinatorLayout (a scrolling ScrollView) holding the search bar
        and the grid (a RecyclerView, listed as scrolling only once its items overflow)."""
        grid = ScrollList(body or [empty], scroll_key, resource_id=grid_id, wrap_content=True)
        return Column(bar, grid, cls="android.widget.ScrollView", resource_id=coordinator_id, scrollable=True,
                      weight=1)

    def build_folders(self) -> View:
        if self.show_all:
            return self._build_all_media()
        cells = []
        q = self.query.strip().lower()
        for folder in self.folders():
            if q and q not in posixpath.basename(folder).lower():
                continue
            media = self.media_in(folder)
            cells.append(Column(
                Image("", resource_id="dir_thumbnail", picture=media[0] if media else "", width=None, height=150,
                      layout_only=True),
                Text(posixpath.basename(folder), resource_id="dir_name", max_lines=1, padding=(8, 2)),
                Text(str(len(media)), resource_id="photo_cnt", size=12, color="#5f6368", padding=(8, 2)),
                cls="android.widget.RelativeLayout", resource_id="dir_holder", weight=1, padding=(2, 2),
                on_click=lambda f=folder: self._open_folder(f), clickable=True, focusable=True,
                long_clickable=True, on_long_click=lambda f=folder: self._open_folder(f)))
        bar = search_bar("Search", self._focus_search, "Search folders", self.query, self._set_query, [
            ("Open camera", "open_camera", lambda: self.toast("No camera app found")),
            ("Show all folders content", "show_all", lambda: self._set_show_all(True))],
            lambda: self.toast("No options"), key="gallery_search")
        return self._coordinator(bar, _grid(cells, DIR_COLUMNS), "folders:grid", "directories_grid",
                                 "directories_coordinator",
                                 Text("No media files have been found", resource_id="directories_empty_placeholder",
                                      align="center", padding=(24, 48), color="#5f6368"))

    def _open_folder(self, folder: str) -> None:
        self.query, self.bar_hidden = "", False
        self.push("media", folder=folder)

    def _media_cell(self, path: str) -> View:
        """One picture of a grid: a square thumbnail, its file name under it only while file names are shown."""
        return Column(
            Image("", resource_id="medium_thumbnail", picture=path, width=None, height=133, layout_only=True),
            Text(posixpath.basename(path), resource_id="medium_name", size=12, max_lines=2, padding=(4, 2))
            if self.show_names else None,
            cls="android.widget.RelativeLayout", resource_id="media_item_holder", weight=1, padding=(2, 2),
            on_click=lambda p=path: self.push("viewer", path=p), clickable=True, focusable=True)

    def _media_bar(self, folder: str | None) -> View | None:
        """The media grid's search bar (None while a scroll has collapsed it): Back and "Search in FOLDER" in a
        folder; the search glass, "Search files" and Switch to folder view when every folder's content is shown."""
        if self.bar_hidden:
            return None
        toggle = ("Toggle filename visibility", "toggle_filename", self._toggle_names)
        if folder is None:
            return search_bar("Search", self._focus_search, "Search files", self.query, self._set_query,
                              [toggle, ("Switch to folder view", "folder_view", lambda: self._set_show_all(False))],
                              lambda: self.show_dialog("media_menu"), key="gallery_search")
        return search_bar("Back", self.pop, f"Search in {posixpath.basename(folder)}", self.query, self._set_query,
                          [toggle, ("Sort by", "sort", lambda: self.toast("Sorting is not available"))],
                          lambda: self.show_dialog("media_menu"), key="gallery_search")

    def _matching(self, paths: list[str]) -> list[str]:
        q = self.query.strip().lower()
        return [p for p in paths if q in posixpath.basename(p).lower()] if q else paths

    def build_media(self, folder: str) -> View:
        cells = [self._media_cell(path) for path in self._matching(self.media_in(folder))]
        return self._coordinator(self._media_bar(folder), _grid(cells, MEDIA_COLUMNS), f"media:{folder}",
                                 "media_grid", "media_coordinator", self._no_media())

    @staticmethod
    def _no_media() -> View:
        return Text("No media files have been found", resource_id="media_empty_text_placeholder", align="center",
                    padding=(24, 48), color="#5f6368")

    def _build_all_media(self) -> View:
        """"Show all folders content": every folder's pictures in one grid, newest first, under a header per day
        of last change ("19.07.2025", as the app groups them by default)."""
        paths = [p for f in self.folders() for p in self.media_in(f)]
        paths = self._matching(sorted(paths, key=lambda p: (-self._mtime(p), posixpath.basename(p).lower())))
        body: list[View] = []
        by_day: dict[str, list[View]] = {}
        for path in paths:
            by_day.setdefault(_day(self._mtime(path)), []).append(self._media_cell(path))
        for day, cells in by_day.items():
            body.append(Frame(Text(day, resource_id="thumbnail_section", size=14, bold=True, padding=(16, 16),
                                   clickable=True, focusable=True, on_click=lambda: None)))
            body.extend(_grid(cells, MEDIA_COLUMNS))
        return self._coordinator(self._media_bar(None), body, "all:grid", "media_grid", "media_coordinator",
                                 self._no_media())

    def on_swipe(self, direction: str) -> bool:
        """A scroll over a grid too short to scroll collapses the search bar ("up": the finger moved up) or shows it
        again, as the emulator's CoordinatorLayout does."""
        if self.dialog is None and (self.page == "media" or (self.page == "folders" and self.show_all)):
            self.bar_hidden = direction == "up"
            return True
        return False

    def build_viewer(self, path: str) -> View:
        """The picture full screen under the app bar (Navigate up without a description, the file name, Rotate,
        Properties, More options) and the bottom actions; the picture's two image views come last in the tree."""
        if not self.phone.files.is_file(path):  # moved or deleted behind the app's back
            return Column(Toolbar("", on_back=self.pop, resource_id="medium_viewer_toolbar"),
                          Text("The file is missing", padding=(24, 48), color="#5f6368"), weight=1)
        up = ImageButton("", self.pop, icon="<", width=56, height=56)
        bar = View(cls="android.view.ViewGroup", resource_id="medium_viewer_toolbar", orientation=HORIZONTAL,
                   height=64, padding=(0.0, 4.0), background="#202124", children=[
                       up, Text(posixpath.basename(path), size=20, weight=1, max_lines=1, padding=(4, 12)),
                       bar_button("Rotate", "menu_rotate", lambda: self.toast("Rotating is not available")),
                       bar_button("Properties", "menu_properties", lambda: self.show_dialog("properties", path=path)),
                       View(cls="android.widget.ImageView", content_desc="More options", clickable=True,
                            focusable=True, long_clickable=True, width=40, height=48, icon=":",
                            on_click=lambda: self.show_dialog("viewer_menu", path=path))])
        picture = Frame(Frame(
            Image("", resource_id="gestures_view", picture=path, width=None, height=None, weight=1,
                  background="#000000", clickable=True, focusable=True),
            Image("", resource_id="subsampling_view", width=None, height=120, clickable=True, focusable=True,
                  overlay=True),
            weight=1), weight=1)
        bottom = View(cls="android.widget.LinearLayout", resource_id="bottom_actions", orientation=HORIZONTAL,
                      height=56, background="#000000", children=[
                          View(cls="android.widget.ImageView", content_desc=desc, resource_id=rid, on_click=cb,
                               clickable=True, focusable=True, weight=1, height=40, icon=desc[:1])
                          for desc, rid, cb in (
                              ("Toggle favorite", "bottom_favorite", lambda: self.toast("Added to favorites")),
                              ("Edit", "bottom_edit", lambda: self.toast("No app found to edit the picture")),
                              ("Share", "bottom_share", lambda: self.toast("Sharing is not available")),
                              ("Delete", "bottom_delete", lambda: self.show_dialog("delete", path=path)))])
        return Column(bar, picture, bottom, cls="android.widget.RelativeLayout", resource_id="view_pager_holder",
                      weight=1)

    # --- the menus and dialogs ------------------------------------------------------------------------------
    def dialog_media_menu(self) -> View:
        """A media grid's More options, as the emulator lists it (the sim carries out none of them)."""
        items = [ListItem(label, "", lambda t=label: self._menu_then(lambda: self.toast(f"{t} is not available")),
                          resource_id="menu_item", title_id="title", min_height=48) for label in MEDIA_MENU]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def _menu_then(self, action: Callback) -> None:
        self.close_dialog()
        action()

    def dialog_viewer_menu(self, path: str) -> View:
        entries = (("Copy to", lambda: self._open_picker("copy", path)),
                   ("Move to", lambda: self._open_picker("move", path)))
        items = [ListItem(label, "", cb, resource_id="menu_item", title_id="title", min_height=48)
                 for label, cb in entries]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def dialog_properties(self, path: str) -> View:
        """Name, Path, Size, Resolution (pictures) and Last modified, with Remove EXIF and OK, as on the emulator."""
        fs = self.phone.files
        data = fs.read(path) if fs.is_file(path) else b""
        rows = [("Name", posixpath.basename(path)), ("Path", _storage_path(posixpath.dirname(path))),
                ("Size", _size(len(data)))]
        resolution = _resolution(data)
        if resolution:
            rows.append(("Resolution", resolution))
        rows.append(("Last modified", f"{_day(self._mtime(path))}, {_clock(self._mtime(path), self._h24())}"))
        body = Column(*[Column(Text(k, size=12, color="#5f6368", resource_id="property_label"),
                               Text(v, resource_id="property_value"), padding=(24, 4)) for k, v in rows],
                      resource_id="properties_holder")
        return Dialog("Properties", body, [("Remove EXIF", lambda: self.toast("EXIF removed")),
                                           ("OK", self.close_dialog)],
                      button_ids=["android:id/button3", "android:id/button1"])

    def _h24(self) -> bool:
        """Whether the phone's clock setting is 24-hour (the same reading as the calendar's pickers)."""
        return self.phone.settings_get("system", "time_12_24") == "24"

    def dialog_delete(self, path: str) -> View:
        return Dialog("", f'Are you sure you want to delete "{posixpath.basename(path)}"?',
                      [("Yes", lambda: self._delete(path)), ("No", self.close_dialog)],
                      button_ids=["android:id/button1", "android:id/button2"])

    def _delete(self, path: str) -> None:
        try:
            self.phone.files.remove(path)
        except FileSystemError:
            pass
        self.close_dialog()
        self.pop()
        self.toast("File deleted")

    # --- copy and move: the folder picker ----------------------------------------------------------------------
    def _open_picker(self, op: str, path: str) -> None:
        self.picker = {"op": op, "source": path, "folder": posixpath.dirname(path)}
        self.show_dialog("picker")

    def _picker_to(self, folder: str) -> None:
        self.picker["folder"] = folder

    def dialog_picker(self) -> View:
        """Simple Mobile Tools' FilePickerDialog: a breadcrumb from Internal, the folder's sub-folders, OK."""
        folder = self.picker.get("folder") or STORAGE_ROOT
        crumbs, listing = folder_picker_parts(self.phone.files, folder, self._picker_to)
        body = Column(Row(*crumbs, resource_id="filepicker_breadcrumbs", padding=(16, 0)), listing,
                      resource_id="filepicker_holder")
        return Dialog("Select a folder", body, [("OK", self._finish_pick), ("Cancel", self._cancel_pick)],
                      button_ids=["android:id/button1", "android:id/button2"])

    def _cancel_pick(self) -> None:
        self.picker = {}
        self.close_dialog()

    def _finish_pick(self) -> None:
        op, source = self.picker.get("op"), self.picker.get("source", "")
        dest = self.picker.get("folder") or STORAGE_ROOT
        fs = self.phone.files
        self.picker = {}
        self.close_dialog()
        if not fs.is_file(source):
            self.toast("The file is missing")
            return
        if fs.norm(posixpath.dirname(source)) == fs.norm(dest):
            self.toast("Source and destination cannot be the same")
            return
        target = posixpath.join(dest, posixpath.basename(source))
        if fs.exists(target):
            self.toast(f'"{posixpath.basename(source)}" already exists')
            return
        if op == "move":
            fs.move(source, dest)
            self.pop()
            self.toast("Files moved successfully")
        else:
            fs.copy(source, dest)
            self.toast("Files copied successfully")

    def on_back(self) -> bool:
        """Back in the folder picker goes up a folder (closing it at Internal); elsewhere as usual."""
        if self.dialog is not None and self.dialog[0] == "picker":
            folder = self.picker.get("folder") or STORAGE_ROOT
            if folder != STORAGE_ROOT and folder.startswith(STORAGE_ROOT):
                self.picker["folder"] = posixpath.dirname(folder)
            else:
                self._cancel_pick()
            return True
        return super().on_back()
