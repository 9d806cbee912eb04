"""Files (com.google.android.documentsui, Android's DocumentsUI): browse, delete, move and copy files on /sdcard.

The app shows the phone's real file system (``phone.files``), so what the shell writes appears here
and what the app deletes or moves is gone from the shell's view at once. Pages: ``browse`` (one
folder of a root: the roots drawer behind "Show roots", a breadcrumb of the folders above, folders
then files by name; long-press a row to select it, tap more rows to add them; in selection mode
the app bar has Delete and "More options" with Move to…, Copy to… and Select all) and ``pick``
(the destination picker of Move to… / Copy to…: browse folders, then MOVE or COPY here).

Roots, as on the emulator: "Downloads" (``/sdcard/Download``, the page the app opens on),
"Recent" (files changed most recently) and "sdk_gphone_x86_64" (the whole shared storage, ``/sdcard``).
"""

from __future__ import annotations

import datetime as dt
import posixpath
from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.files import FileSystemError
from android_gym.sim.view import (
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
STORAGE_ROOT = "sdk_gphone_x86_64"
ROOTS: dict[str, str] = {"downloads": "/sdcard/Download", "storage": "/sdcard", "recent": ""}
ROOT_TITLES: dict[str, str] = {"recent": "Recent", "downloads": "Downloads", "storage": STORAGE_ROOT}
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

    def on_open(self) -> None:
        self.selection = []
        self.pick_path = ""

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

    def _summary(self, path: str) -> str:
        fs = self.phone.files
        if fs.is_dir(path):
            n = len(fs.listdir(path))
            return f"{n} item{'s' if n != 1 else ''}"
        from android_gym.sim.phone import START_TIME

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
        if root == "recent":
            return None
        top = ROOTS[root]
        parts = [top]
        rel = path[len(top):].strip("/")
        for name in rel.split("/") if rel else []:
            parts.append(posixpath.join(parts[-1], name))
        crumbs = []
        for p in parts:
            label = ROOT_TITLES[root] if p == top else posixpath.basename(p)
            crumbs.append(Button(label, (lambda q=p: on_pick(q)), resource_id="breadcrumb", background=None,
                                 height=40, padding=(8, 4)))
        return Row(*crumbs, resource_id="horizontal_breadcrumb", height=48, padding=(8, 0))

    def _jump(self, root: str, path: str) -> None:
        """A breadcrumb tap: drop the folders below ``path`` from the back stack."""
        while len(self.pages) > 1 and self.page_args.get("path", "") != path:
            self.pages.pop()
        if self.page_args.get("path") != path:
            self.open_root(root)
            if path != ROOTS[root]:
                self.open_folder(root, path)
        self.selection = []

    def _row(self, root: str, path: str) -> View:
        fs = self.phone.files
        is_dir = fs.is_dir(path)
        selected = path in self.selection
        if self.selection:
            click = lambda p=path: self._toggle(p)  # noqa: E731
        elif is_dir:
            click = lambda p=path: self.open_folder("storage" if root == "recent" else root, p)  # noqa: E731
        elif path.lower().endswith(WEB_EXTENSIONS):
            click = lambda p=path: self.show_dialog("open_with", path=p)  # noqa: E731
        else:
            click = lambda p=path: self.toast(f"No app can open {posixpath.basename(p)}")  # noqa: E731
        row = ListItem(posixpath.basename(path), self._summary(path), click, resource_id="item_root",
                       title_id="android:id/title", subtitle_id="details", icon="F" if is_dir else "D",
                       on_long_click=lambda p=path: self._toggle(p))
        if self.selection:
            row.children.insert(0, self.selection_check(selected, "icon_check"))
        row.selected = selected
        return row

    def build_browse(self, root: str = "downloads", path: str | None = None) -> View:
        folder = ROOTS[root] if path is None else path
        if root == "recent":
            items = [self._row(root, p) for p in self._recent()]
        else:
            dirs, files = self._entries(folder)
            items = [self._row(root, p) for p in dirs + files]
        if not items:
            items = [Text("No items", resource_id="message", align="center", padding=(24, 48), color="#5f6368")]
        if self.selection:
            toolbar = self.selection_toolbar("Clear selection", delete_id="action_menu_delete", toolbar_id="toolbar")
            toolbar.children.append(ImageButton("More options", lambda: self.show_dialog("selection_menu"),
                                                resource_id="overflow", icon=":"))
        else:
            title = ROOT_TITLES[root] if folder == ROOTS[root] else posixpath.basename(folder)
            toolbar = Toolbar(title, on_back=lambda: self.show_dialog("roots"), back_desc="Show roots",
                              actions=[ImageButton("Search", lambda: self.toast("Search is not available"),
                                                   resource_id="option_menu_search", icon="Q")],
                              resource_id="toolbar")
        return Column(
            toolbar,
            self._breadcrumb(root, folder, lambda q: self._jump(root, q)),
            ScrollList(items, f"browse:{root}:{folder}", resource_id="dir_list"),
            cls="android.widget.LinearLayout", resource_id="drawer_layout", weight=1,
        )

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
        entries = [ListItem(ROOT_TITLES[r], "", (lambda r=r: self._pick_root(r)), resource_id="root_item",
                            title_id="android:id/title", min_height=52)
                   for r in ("recent", "downloads", "storage")]
        return Dialog("Files", Column(*entries, resource_id="roots_list"), [])

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
        if root == "recent":
            self.selection = self._recent()
        else:
            dirs, files = self._entries(args.get("path") or ROOTS[root])
            self.selection = dirs + files
        self.close_dialog()

    def dialog_delete_selected(self) -> View:
        n = len(self.selection)
        what = f"\u201c{posixpath.basename(self.selection[0])}\u201d" if n == 1 else f"{n} items"
        return Dialog("", f"Delete {what}?", [("Cancel", self.close_dialog), ("OK", self._delete_selected)],
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
