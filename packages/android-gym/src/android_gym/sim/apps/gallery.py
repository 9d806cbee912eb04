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

import posixpath
from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.apps.folder_picker import folder_picker_parts
from android_gym.sim.files import FileSystemError
from android_gym.sim.view import (
    Column,
    Dialog,
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


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 ** 2:
        return f"{n / 1024:.1f} KB"
    return f"{n / 1024 ** 2:.1f} MB"


def _grid(items: list[View], columns: int) -> list[View]:
    """Rows of ``columns`` equal cells (the last row padded with empty space)."""
    rows = []
    for i in range(0, len(items), columns):
        cells = items[i:i + columns]
        cells += [View(cls="android.view.View", weight=1, height=1) for _ in range(columns - len(cells))]
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

    def on_open(self) -> None:
        self.picker = {}

    def current_activity(self) -> str:
        name = {"media": "MediaActivity", "viewer": "ViewPagerActivity"}.get(self.page, "MainActivity")
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
    def build_folders(self) -> View:
        cells = []
        for folder in self.folders():
            media = self.media_in(folder)
            cells.append(Column(
                Image("", resource_id="dir_thumbnail", picture=media[0] if media else "", width=None, height=150),
                Text(posixpath.basename(folder), resource_id="dir_name", max_lines=1, padding=(8, 2)),
                Text(str(len(media)), resource_id="photo_cnt", size=12, color="#5f6368", padding=(8, 2)),
                cls="android.widget.RelativeLayout", resource_id="dir_holder", weight=1, padding=(2, 2),
                on_click=lambda f=folder: self.push("media", folder=f), clickable=True, focusable=True,
                long_clickable=True, on_long_click=lambda f=folder: self.push("media", folder=f)))
        body: list[View] = _grid(cells, DIR_COLUMNS) or [
            Text("No media files have been found", resource_id="directories_empty_placeholder", align="center",
                 padding=(24, 48), color="#5f6368")]
        return Column(
            Toolbar("Simple Gallery", resource_id="main_toolbar", actions=[
                ImageButton("Search", lambda: self.toast("Search is not available"), resource_id="search", icon="Q"),
                ImageButton("More options", lambda: self.toast("No options"), icon=":")]),
            ScrollList(body, "folders:grid", resource_id="directories_grid"),
            cls="android.widget.LinearLayout", resource_id="directories_holder", weight=1)

    def build_media(self, folder: str) -> View:
        cells = [Column(
            Image("", resource_id="medium_thumbnail", picture=path, width=None, height=110),
            Text(posixpath.basename(path), resource_id="medium_name", size=12, max_lines=2, padding=(4, 2)),
            cls="android.widget.RelativeLayout", resource_id="media_item_holder", weight=1, padding=(2, 2),
            on_click=lambda p=path: self.push("viewer", path=p), clickable=True, focusable=True)
            for path in self.media_in(folder)]
        body: list[View] = _grid(cells, MEDIA_COLUMNS) or [
            Text("No media files have been found", resource_id="media_empty_text_placeholder", align="center",
                 padding=(24, 48), color="#5f6368")]
        return Column(
            Toolbar(posixpath.basename(folder), on_back=self.pop, resource_id="media_toolbar"),
            ScrollList(body, f"media:{folder}", resource_id="media_grid"),
            cls="android.widget.LinearLayout", resource_id="media_holder", weight=1)

    def build_viewer(self, path: str) -> View:
        if not self.phone.files.is_file(path):  # moved or deleted behind the app's back
            return Column(Toolbar("", on_back=self.pop, resource_id="medium_viewer_toolbar"),
                          Text("The file is missing", padding=(24, 48), color="#5f6368"), weight=1)
        return Column(
            Toolbar(posixpath.basename(path), on_back=self.pop, resource_id="medium_viewer_toolbar", actions=[
                ImageButton("Share", lambda: self.toast("Sharing is not available"), resource_id="menu_share",
                            icon="<"),
                ImageButton("Delete", lambda: self.show_dialog("delete", path=path), resource_id="menu_delete",
                            icon="X"),
                ImageButton("More options", lambda: self.show_dialog("viewer_menu", path=path), icon=":")]),
            Image("", resource_id="gestures_view", picture=path, width=None, height=None, weight=1,
                  background="#000000"),
            cls="android.widget.RelativeLayout", resource_id="view_pager_holder", weight=1)

    # --- the viewer's menu and dialogs ----------------------------------------------------------------------
    def dialog_viewer_menu(self, path: str) -> View:
        entries = (("Copy to", lambda: self._open_picker("copy", path)),
                   ("Move to", lambda: self._open_picker("move", path)),
                   ("Properties", lambda: self.show_dialog("properties", path=path)))
        items = [ListItem(label, "", cb, resource_id="menu_item", title_id="title", min_height=48)
                 for label, cb in entries]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def dialog_properties(self, path: str) -> View:
        fs = self.phone.files
        rows = [("Name", posixpath.basename(path)), ("Path", humanize(posixpath.dirname(path))),
                ("Size", _size(len(fs.read(path)) if fs.is_file(path) else 0))]
        body = Column(*[Column(Text(k, size=12, color="#5f6368", resource_id="property_label"),
                               Text(v, resource_id="property_value"), padding=(24, 4)) for k, v in rows],
                      resource_id="properties_holder")
        return Dialog("Properties", body, [("OK", self.close_dialog)], button_ids=["android:id/button1"])

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
