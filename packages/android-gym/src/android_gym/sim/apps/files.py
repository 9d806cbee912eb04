"""Files (com.google.android.documentsui, Android's DocumentsUI): browse, delete, move and copy files on /sdcard.

The app shows the phone's real file system (``phone.files``), so what the shell writes appears here
and what the app deletes or moves is gone from the shell's view at once. Pages: ``browse`` (one
folder of a root: the roots drawer behind "Show roots", a breadcrumb of the folders above, folders
then files by name; long-press a row to select it, tap more rows to add them; in selection mode
the app bar has Delete and "More options" with Move to…, Copy to… and Select all) and ``pick``
(the destination picker of Move to… / Copy to…: browse folders, then MOVE or COPY here).

Roots, as on the emulator's drawer: "Recent" (files changed most recently), "Images", "Videos", "Audio" and
"Documents" (those files anywhere on the storage), "Downloads" (``/sdcard/Download``, the page the app opens on),
"sdk_gphone64_x86_64" (the whole shared storage, ``/sdcard``) and "SDCARD" (the emulator's empty virtual card).

The browse page is laid out and listed as the AndroidWorld emulator's DocumentsUI (its element lists in
tests/android_gym/data/real_episodes): the app bar (Show roots, title, Search, More options), the breadcrumb,
the Images/Audio/Videos/Documents filter chips, "Files in <folder>" with the List view / Grid view switch, and
the items as a two-column grid (folders as one line, files as a card with the name, size and time), or as rows
in list view. A selection replaces the app bar with the action bar (Cancel, "N selected", Share, Delete, More
options).
"""

from __future__ import annotations

import datetime as dt
import posixpath
from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.constants import START_TIME
from android_gym.sim.files import FileSystemError
from android_gym.sim.view import (
    HORIZONTAL,
    Button,
    Column,
    Dialog,
    ImageButton,
    ListItem,
    Row,
    ScrollList,
    Text,
    Toolbar,
    View,
)
from android_gym.sim.widgets import MultiSelect

FILES_PKG = "com.google.android.documentsui"
STORAGE_ROOT = "sdk_gphone64_x86_64"
SDCARD_ROOT = "SDCARD"
ROOTS: dict[str, str] = {"downloads": "/sdcard/Download", "storage": "/sdcard", "recent": "", "images": "",
                         "videos": "", "audio": "", "documents": "", "sdcard": ""}
ROOT_TITLES: dict[str, str] = {"recent": "Recent", "images": "Images", "videos": "Videos", "audio": "Audio",
                               "documents": "Documents", "downloads": "Downloads", "storage": STORAGE_ROOT,
                               "sdcard": SDCARD_ROOT}
COLLECTIONS = ("recent", "images", "videos", "audio", "documents", "sdcard")
"""Roots that list files gathered from the storage (or, for the empty virtual card, nothing), not a folder."""
KINDS: dict[str, tuple[str, ...]] = {
    "Images": (".jpg", ".jpeg", ".png", ".gif", ".bmp", ".webp", ".heic"),
    "Audio": (".mp3", ".wav", ".m4a", ".ogg", ".flac", ".aac", ".amr", ".opus"),
    "Videos": (".mp4", ".mkv", ".webm", ".3gp", ".avi", ".mov"),
    "Documents": (".txt", ".pdf", ".doc", ".docx", ".md", ".csv", ".xls", ".xlsx", ".ppt", ".pptx", ".odt",
                  ".json", ".html", ".xml"),
}
"""The filter chips (and media roots) and the file name endings each keeps."""
RECENT_LIMIT = 30
WEB_EXTENSIONS = (".html", ".htm")
"""Files that open in Chrome (through the "Open with" chooser)."""


def _size(n: int) -> str:
    """The size as DocumentsUI writes it ("18 B", "2.1 kB", "3.4 MB")."""
    if n < 1000:
        return f"{n} B"
    if n < 1000 ** 2:
        return f"{n / 1000:.1f} kB"
    return f"{n / 1000 ** 2:.1f} MB"


@register_app
class FilesApp(MultiSelect, App):
    """DocumentsUI over the phone's /sdcard (state: where each page is, the selection, the picker's folder)."""

    package = FILES_PKG
    label = "Files"
    activity = "com.android.documentsui.files.FilesActivity"
    main_page = "browse"
    icon_color = "#1a73e8"

    def setup(self) -> None:
        self.selection: list[str] = []
        self.pick_path = ""
        self.chip = ""
        self.grid = True

    def on_open(self) -> None:
        self.selection = []
        self.pick_path = ""
        self.chip = ""

    def current_activity(self) -> str:
        if self.page == "pick":
            return "com.android.documentsui.picker.PickActivity"
        return self.activity

    # --- the file system ---------------------------------------------------------------------------
    def _entries(self, folder: str) -> tuple[list[str], list[str]]:
        """(sub-folder paths, file paths) directly in ``folder``, each sorted by name case-insensitively."""
        fs = self.phone.files
        try:
            names = fs.listdir(folder)
        except FileSystemError:
            return [], []
        paths = [posixpath.join(folder, n) for n in names]
        key = lambda p: posixpath.basename(p).lower()  # noqa: E731
        return (sorted((p for p in paths if fs.is_dir(p)), key=key),
                sorted((p for p in paths if fs.is_file(p)), key=key))

    def _recent(self) -> list[str]:
        fs = self.phone.files
        files = [p for p in fs.walk_files("/sdcard") if not p.startswith("/sdcard/Android/")]
        return sorted(files, key=lambda p: (-fs.mtimes.get(p, 0), p))[:RECENT_LIMIT]

    def _collection(self, root: str) -> list[str]:
        """The files a gathering root lists: recent ones, the storage's files of one kind, or none (the card)."""
        if root == "recent":
            return self._recent()
        if root == "sdcard":
            return []
        ends = KINDS[ROOT_TITLES[root]]
        fs = self.phone.files
        return sorted((p for p in fs.walk_files("/sdcard") if not p.startswith("/sdcard/Android/")
                       and p.lower().endswith(ends)), key=lambda p: posixpath.basename(p).lower())

    def _time(self, path: str) -> str:
        """The date column of a file: its time when changed today (as the status bar writes times), else the day."""
        when = START_TIME + dt.timedelta(milliseconds=self.phone.files.mtimes.get(path, 0))
        if when.date() != self.phone.now().date():
            return f"{when.strftime('%b')} {when.day}"
        if self.phone.settings_get("system", "time_12_24") == "24":
            return when.strftime("%H:%M")
        return f"{when.hour % 12 or 12}:{when.minute:02d}\u202f{'AM' if when.hour < 12 else 'PM'}"

    def _summary(self, path: str) -> str:
        fs = self.phone.files
        if fs.is_dir(path):
            n = len(fs.listdir(path))
            return f"{n} item{'s' if n != 1 else ''}"
        when = START_TIME + dt.timedelta(milliseconds=fs.mtimes.get(path, 0))
        return f"{_size(len(fs.files.get(path, b'')))}, {when.strftime('%b')} {when.day}"

    # --- browsing ------------------------------------------------------------------------------------
    def open_folder(self, root: str, path: str) -> None:
        """Show folder ``path`` of ``root`` (pushed, so Back returns to the folder above)."""
        self.selection = []
        self.push("browse", root=root, path=path)

    def open_root(self, root: str) -> None:
        """Start over at ``root``'s top folder (from the roots drawer)."""
        self.selection = []
        self.pages = []
        self.push("browse", root=root, path=ROOTS[root])

    def _breadcrumb(self, root: str, path: str, on_pick: Any) -> View | None:
        """The folders from the root down to ``path``; each a tappable crumb holding its name (listed a level below
        the crumb, as on the emulator, so after the chips and the items)."""
        if root in COLLECTIONS:
            return None
        top = ROOTS[root]
        parts = [top]
        rel = path[len(top):].strip("/")
        for name in rel.split("/") if rel else []:
            parts.append(posixpath.join(parts[-1], name))
        crumbs = []
        for p in parts:
            label = ROOT_TITLES[root] if p == top else posixpath.basename(p)
            crumbs.append(View(cls="android.widget.LinearLayout", clickable=True, focusable=True, height=48,
                               on_click=lambda q=p: on_pick(q), children=[
                                   Text(label, resource_id="breadcrumb_text", size=15, max_lines=1,
                                        padding=(12, 12), color="#0b57d0" if p != path else "#1f1f1f")]))
        return View(cls="androidx.recyclerview.widget.RecyclerView", resource_id="horizontal_breadcrumb",
                    orientation=HORIZONTAL, height=48, padding=(0.0, 0.0), dump_rank=3, children=crumbs)

    def _jump(self, root: str, path: str) -> None:
        """A breadcrumb tap: drop the folders below ``path`` from the back stack."""
        while len(self.pages) > 1 and self.page_args.get("path", "") != path:
            self.pages.pop()
        if self.page_args.get("path") != path:
            self.open_root(root)
            if path != ROOTS[root]:
                self.open_folder(root, path)
        self.selection = []

    def _click(self, root: str, path: str) -> Any:
        if self.selection:
            return lambda: self._toggle(path)
        if self.phone.files.is_dir(path):
            return lambda: self.open_folder("storage" if root in COLLECTIONS else root, path)
        if path.lower().endswith(WEB_EXTENSIONS):
            return lambda: self.show_dialog("open_with", path=path)
        return lambda: self.toast(f"No app can open {posixpath.basename(path)}")

    def _row(self, root: str, path: str) -> View:
        """An item in list view: a row with the name and its size and date."""
        is_dir = self.phone.files.is_dir(path)
        selected = path in self.selection
        row = ListItem(posixpath.basename(path), self._summary(path), self._click(root, path), resource_id="item_root",
                       title_id="android:id/title", subtitle_id="details", icon="F" if is_dir else "D",
                       on_long_click=lambda p=path: self._toggle(p))
        if self.selection:
            row.children.insert(0, self.selection_check(selected, "icon_check"))
        row.selected = selected
        return row

    def _card(self, root: str, path: str) -> View:
        """An item in grid view: a folder is one line with its name; a file a card (thumbnail, name, size and time).
        The card and its thumbnail are left out of the dump, as on the emulator: its texts are listed."""
        fs = self.phone.files
        selected = path in self.selection
        name = posixpath.basename(path)
        common = dict(cls="android.widget.FrameLayout", resource_id="item_root", layout_only=True, clickable=True,
                      long_clickable=True, selected=selected, on_click=self._click(root, path),
                      on_long_click=lambda p=path: self._toggle(p), weight=1, padding=(8.0, 4.0),
                      background="#d3e3fd" if selected else "#f3f6fc")
        title = Text(name, resource_id="android:id/title", size=15, max_lines=1, padding=(12, 0))
        if fs.is_dir(path):
            return View(height=57, orientation=HORIZONTAL, children=[
                View(cls="android.widget.ImageView", width=32, height=32, icon="F", layout_only=True), title],
                **common)
        details = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, layout_only=True, children=[
            Text(_size(len(fs.files.get(path, b""))), resource_id="details", size=13, color="#444746",
                 padding=(12, 0), max_lines=1),
            Text(self._time(path), resource_id="date", size=13, color="#444746", padding=(4, 0), max_lines=1)])
        return View(height=237, children=[
            View(cls="android.widget.ImageView", height=172, icon="D", layout_only=True, background="#e9eef6"),
            title, details], **common)

    def _grid(self, cards: list[View]) -> list[View]:
        rows = []
        for i in range(0, len(cards), 2):
            pair = cards[i:i + 2]
            if len(pair) == 1:
                pair.append(View(cls="android.view.View", weight=1, height=1, layout_only=True))
            rows.append(View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, layout_only=True,
                             padding=(8.0, 4.0), children=pair))
        return rows

    def _set_chip(self, chip: str) -> None:
        self.chip = "" if self.chip == chip else chip

    def build_browse(self, root: str = "downloads", path: str | None = None) -> View:
        """One folder (or gathering root): see the module docstring for the screen, listed breadth first."""
        folder = ROOTS[root] if path is None else path
        if root in COLLECTIONS:
            paths = self._collection(root)
        else:
            dirs, files = self._entries(folder)
            paths = dirs + files
        if self.chip:
            paths = [p for p in paths if self.phone.files.is_file(p) and p.lower().endswith(KINDS[self.chip])]
        title = ROOT_TITLES[root] if folder == ROOTS[root] else posixpath.basename(folder)
        path_is_top = root == "storage" and folder == ROOTS[root]  # "Files on <storage>", "Files in <folder>"
        if not paths:
            items: list[View] = [Text("No items", resource_id="message", align="center", padding=(20, 300),
                                      color="#5f6368")]
        elif self.grid:
            items = self._grid([self._card(root, p) for p in paths])
        else:
            items = [self._row(root, p) for p in paths]
        if self.selection:
            bar = View(cls="android.view.ViewGroup", resource_id="action_mode_bar", orientation=HORIZONTAL,
                       height=48, layout_only=True, background="#d3e3fd", dump_rank=-1, children=[
                           View(cls="android.widget.ImageView", content_desc="Cancel",
                                resource_id="action_mode_close_button", clickable=True, focusable=True, width=56,
                                height=48, icon="x", on_click=self._clear_selection),
                           Text(f"{len(self.selection)} selected", resource_id="action_bar_title", size=20,
                                weight=1, max_lines=1, padding=(16, 12)),
                           self._bar_button("Share", "action_menu_share", lambda: self.toast("No app to share with")),
                           self._bar_button("Delete", "action_menu_delete", lambda: self.show_dialog("delete_selected")),
                           View(cls="android.widget.ImageView", content_desc="More options", clickable=True,
                                focusable=True, width=48, height=48, icon=":",
                                on_click=lambda: self.show_dialog("selection_menu"))])
        else:
            bar = View(cls="android.view.ViewGroup", resource_id="toolbar", orientation=HORIZONTAL, height=48,
                       layout_only=True, background="#f8fafd", dump_rank=1, children=[
                           ImageButton("Show roots", lambda: self.show_dialog("roots"), icon="=", width=56),
                           Text(title, size=22, weight=1, max_lines=1, padding=(16, 10)),
                           self._bar_button("Search", "option_menu_search", lambda: self.toast("Search is not available")),
                           View(cls="android.widget.ImageView", content_desc="More options", clickable=True,
                                focusable=True, width=48, height=48, icon=":",
                                on_click=lambda: self.show_dialog("browse_menu"))])
        chips = View(cls="android.widget.HorizontalScrollView", scrollable=True, height=48, children=[View(
            cls="android.widget.LinearLayout", orientation=HORIZONTAL, layout_only=True, padding=(16.0, 0.0),
            children=[View(cls="android.widget.CompoundButton", text=kind, clickable=True, checkable=True,
                           checked=self.chip == kind, width=width, height=48, padding=(8.0, 12.0),
                           background="#d3e3fd" if self.chip == kind else "#f8fafd",
                           on_click=lambda k=kind: self._set_chip(k))
                      for kind, width in (("Images", 97), ("Audio", 88), ("Videos", 94), ("Documents", 110))])])
        header = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, layout_only=True, height=60,
                      dump_rank=1, children=[
                          Text(title if root in COLLECTIONS else f"Files {'on' if path_is_top else 'in'} {title}",
                               resource_id="header_title",
                               size=16, weight=1, max_lines=1, padding=(24, 20)),
                          View(cls="android.widget.TextView", content_desc="List view" if self.grid else "Grid view",
                               resource_id="sub_menu_list", clickable=True, focusable=True, width=48, height=48,
                               icon="=" if self.grid else "#", on_click=self._toggle_grid)])
        crumbs = self._breadcrumb(root, folder, lambda q: self._jump(root, q))
        page = View(cls="android.widget.ScrollView", scrollable=True, weight=1,
                    scroll_key=f"browse:{root}:{folder}", children=[
                        *([crumbs] if crumbs is not None else []), chips, header,
                        View(cls="android.widget.FrameLayout", resource_id="dir_list", dump_rank=2, children=items)])
        return Column(
            bar, page,
            View(cls="android.view.View", resource_id="drawer_edge", width=12, height=1, overlay=True, dump_rank=2),
            View(cls="android.view.ViewGroup", resource_id="container_save", height=1, overlay=True, dump_rank=3),
            cls="android.widget.FrameLayout", resource_id="drawer_layout", weight=1,
        )

    @staticmethod
    def _bar_button(desc: str, rid: str, on_click: Any) -> View:
        return View(cls="android.widget.TextView", content_desc=desc, resource_id=rid, clickable=True, focusable=True,
                    width=48, height=48, icon=desc[:1], on_click=on_click)

    def _toggle_grid(self) -> None:
        self.grid = not self.grid

    def dialog_browse_menu(self) -> View:
        """The app bar's More options: select every item of the folder."""
        items = [ListItem("Select all", "", self._select_all, resource_id="menu_item", title_id="android:id/title",
                          min_height=48)]
        return Dialog("", Column(*items, resource_id="menu_list"), [])

    # --- dialogs -------------------------------------------------------------------------------------
    def dialog_open_with(self, path: str) -> View:
        """Android's chooser for a web page: Chrome, "Just once" or "Always"."""
        from android_gym.sim.apps.chrome import CHROME_PKG

        return Dialog("Open with", ListItem("Chrome", "", lambda: self._open_in(CHROME_PKG, path), icon="C",
                                            resource_id="resolver_item", title_id="text1"),
                      [("Just once", lambda: self._open_in(CHROME_PKG, path)),
                       ("Always", lambda: self._open_in(CHROME_PKG, path))],
                      resource_id="resolver_list", button_ids=["button_once", "button_always"])

    def _open_in(self, package: str, path: str) -> None:
        """Open the file ``path`` in ``package`` (the chooser's choice)."""
        self.close_dialog()
        app = self.phone.app(package)
        app.open()
        app.open_url("file://" + path)
        self.phone.launch(package)

    def dialog_roots(self) -> View:
        """The roots drawer: "Files", the media and download roots, a divider, the storage and the virtual card."""
        def entry(root: str) -> View:
            children = [View(cls="android.widget.ImageView", width=40, height=40, icon=ROOT_TITLES[root][:1],
                             layout_only=True),
                        Text(ROOT_TITLES[root], resource_id="android:id/title", size=15, weight=1, max_lines=1,
                             padding=(16, 14))]
            if root == "sdcard":
                children.append(View(cls="android.widget.FrameLayout", content_desc="Eject",
                                     resource_id="action_icon_area", clickable=True, focusable=True, width=48,
                                     height=48, icon="^", on_click=lambda: self.toast("SDCARD can't be ejected")))
            return View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, clickable=True, focusable=True,
                        height=56, padding=(16.0, 0.0), on_click=lambda: self._pick_root(root), children=children)

        return View(cls="android.widget.LinearLayout", background="#ffffff", padding=(0.0, 8.0), children=[
            Text("Files", size=22, padding=(16, 12)),
            View(cls="android.widget.LinearLayout", children=[entry(r) for r in (
                "recent", "images", "videos", "audio", "documents", "downloads")]),
            View(cls="android.widget.FrameLayout", height=9),
            View(cls="android.widget.LinearLayout", children=[entry(r) for r in ("storage", "sdcard")]),
        ])

    def _pick_root(self, root: str) -> None:
        self.close_dialog()
        self.open_root(root)

    def dialog_selection_menu(self) -> View:
        entries = (("Move to\u2026", lambda: self._start_pick("move")), ("Copy to\u2026", lambda: self._start_pick("copy")),
                   ("Select all", self._select_all))
        items = [ListItem(label, "", cb, resource_id="menu_item", title_id="android:id/title", min_height=48)
                 for label, cb in entries]
        return Dialog("", Column(*items, resource_id="menu_list"), [])

    def _select_all(self) -> None:
        args = self.page_args
        root = args.get("root", "downloads")
        if root in COLLECTIONS:
            self.selection = self._collection(root)
        else:
            dirs, files = self._entries(args.get("path") or ROOTS[root])
            self.selection = dirs + files
        self.close_dialog()

    def dialog_delete_selected(self) -> View:
        n = len(self.selection)
        what = f'"{posixpath.basename(self.selection[0])}"' if n == 1 else f"{n} items"
        message = Text(f"Delete {what}?", size=16, padding=(24, 16))  # DocumentsUI's own message view: no id
        return Dialog("", message, [("CANCEL", self.close_dialog), ("OK", self._delete_selected)],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _delete_selected(self) -> None:
        n = 0
        for p in self.selection:
            try:
                self.phone.files.remove(p, recursive=True)
                n += 1
            except FileSystemError:
                pass
        self.selection = []
        self.close_dialog()
        self.toast(f"Deleted {n} item{'s' if n != 1 else ''}")

    # --- the destination picker -----------------------------------------------------------------------
    def _start_pick(self, op: str) -> None:
        self.close_dialog()
        args = self.page_args
        self.pick_path = args.get("path") or ROOTS.get(args.get("root", "storage")) or "/sdcard"
        self.push("pick", op=op, sources=list(self.selection))

    def _pick_into(self, path: str) -> None:
        self.pick_path = path

    def build_pick(self, op: str, sources: list[str]) -> View:
        folder = self.pick_path or "/sdcard"
        root = "storage"
        dirs, files = self._entries(folder)
        items: list[View] = [ListItem(posixpath.basename(p), self._summary(p), (lambda q=p: self._pick_into(q)),
                                      resource_id="item_root", title_id="android:id/title", subtitle_id="details",
                                      icon="F") for p in dirs]
        items += [ListItem(posixpath.basename(p), self._summary(p), None, resource_id="item_root",
                           title_id="android:id/title", subtitle_id="details", icon="D", enabled=False)
                  for p in files]
        if not items:
            items = [Text("No items", resource_id="message", align="center", padding=(24, 48), color="#5f6368")]
        verb = "Move" if op == "move" else "Copy"
        title = STORAGE_ROOT if folder == "/sdcard" else posixpath.basename(folder)
        return Column(
            Toolbar(f"{verb} to {title}", on_back=self._pick_up, resource_id="toolbar"),
            self._breadcrumb(root, folder, self._pick_into),
            ScrollList(items, f"pick:{folder}", resource_id="dir_list"),
            Row(View(cls="android.view.View", weight=1, height=1),
                Button("Cancel", self._cancel_pick, resource_id="android:id/button2", background=None),
                Button(verb.upper(), lambda: self._finish_pick(op, sources), resource_id="android:id/button1"),
                resource_id="container_save", padding=(16, 8)),
            cls="android.widget.LinearLayout", resource_id="drawer_layout", weight=1,
        )

    def _pick_up(self) -> None:
        if self.pick_path and self.pick_path != "/sdcard":
            self.pick_path = posixpath.dirname(self.pick_path)
        else:
            self._cancel_pick()

    def _cancel_pick(self) -> None:
        self.pick_path = ""
        self.pop()

    def _finish_pick(self, op: str, sources: list[str]) -> None:
        dest = self.pick_path or "/sdcard"
        fs = self.phone.files
        done = 0
        for src in sources:
            if not fs.exists(src) or dest == src or dest.startswith(src.rstrip("/") + "/"):
                continue
            target = posixpath.join(dest, posixpath.basename(src))
            if fs.exists(target) and target != src:
                self.toast(f"{posixpath.basename(src)} already exists in {posixpath.basename(dest) or STORAGE_ROOT}")
                continue
            if target == src:
                continue
            if op == "move":
                fs.move(src, dest)
            elif fs.is_dir(src):
                fs.copy_tree(src, target)
            else:
                fs.copy(src, dest)
            done += 1
        self.selection = []
        self.pick_path = ""
        self.pop()
        verb = "Moved" if op == "move" else "Copied"
        self.toast(f"{verb} {done} item{'s' if done != 1 else ''}")

    def on_back(self) -> bool:
        """Back in the picker goes up a folder (leaving it from its top); elsewhere as the other pages."""
        if self.page == "pick" and self.dialog is None:
            self._pick_up()
            return True
        return super().on_back()
