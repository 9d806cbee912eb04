"""Joplin (net.cozic.joplin): notebooks, notes and to-dos, over the real app's SQLite database.

Pages: ``main`` (the note list of the chosen notebook, or "All notes": to-dos first while not completed,
each to-do with its check box, then by last update, newest first; "New note" and "New to-do" buttons),
``sidebar`` (the side menu: "All notes" and every notebook by title), ``note`` (one note: its title, a
to-do's check box, the body as text; "Edit" turns the body into a field, Back saves a change),
``search`` (a query over titles and bodies, the matching notes listed as in the note list).

Database: ``/data/data/net.cozic.joplin/databases/joplin.sqlite`` with Joplin's ``folders``, ``notes`` and
``notes_normalized`` tables (ids are 32 hex digits; times in epoch ms; ``is_todo``/``todo_completed``
integers), what AndroidWorld's Joplin tasks write and read. The app keeps its rows as plain dicts with
the same columns: reading the file builds it from them (``notes_normalized`` derived from ``notes``, the
lowercased title, as the app's search index does), writing it loads them back.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.apps.columns import to_ms
from android_gym.sim.databases import build_database, read_table
from android_gym.sim.view import (
    Button,
    CheckBox,
    Column,
    EditText,
    ImageButton,
    ListItem,
    Row,
    ScrollList,
    Text,
    Toolbar,
    View,
)

JOPLIN_PKG = "net.cozic.joplin"
JOPLIN_DB = "/data/data/net.cozic.joplin/databases/joplin.sqlite"
ALL_NOTES = "All notes"

NOTE_COLUMNS: dict[str, Any] = {
    "id": "", "parent_id": "", "title": "", "body": "", "created_time": 0, "updated_time": 0, "is_conflict": 0,
    "latitude": 0.0, "longitude": 0.0, "altitude": 0.0, "author": "", "source_url": "", "is_todo": 0,
    "todo_due": 0, "todo_completed": 0, "source": "", "source_application": "", "application_data": "",
    "order": 0.0, "user_created_time": 0, "user_updated_time": 0, "encryption_cipher_text": "",
    "encryption_applied": 0, "markup_language": 1, "is_shared": 0, "share_id": "", "conflict_original_id": "",
    "master_key_id": "", "user_data": "",
}
"""The ``notes`` table's columns and their defaults."""
FOLDER_COLUMNS: dict[str, Any] = {
    "id": "", "title": "", "created_time": 0, "updated_time": 0, "user_created_time": 0, "user_updated_time": 0,
    "deleted_time": 0, "encryption_cipher_text": "", "encryption_applied": 0, "parent_id": "", "is_shared": 0,
    "share_id": "", "master_key_id": "", "icon": "", "user_data": "",
}
"""The ``folders`` table's columns and their defaults."""
NORMALIZED_COLUMNS = ("id", "parent_id", "title", "body", "latitude", "longitude", "altitude", "source_url",
                      "is_todo", "todo_due", "todo_completed", "user_created_time", "user_updated_time")
"""The ``notes_normalized`` table (the search index): these columns of ``notes``, the title lowercased."""

_TYPES = {str: "TEXT", int: "INT", float: "NUMERIC"}


def _create(table: str, columns: dict[str, Any], key: str = "id") -> str:
    cols = []
    for name, default in columns.items():
        kind = _TYPES[type(default)]
        if name == key:
            cols.append(f"`{name}` TEXT PRIMARY KEY")
        else:
            literal = f"'{default}'" if isinstance(default, str) else str(default)
            cols.append(f"`{name}` {kind} NOT NULL DEFAULT {literal}")
    return f"CREATE TABLE `{table}` ({', '.join(cols)})"


JOPLIN_SCHEMA = (
    "CREATE TABLE android_metadata (locale TEXT)",
    _create("folders", FOLDER_COLUMNS),
    _create("notes", NOTE_COLUMNS),
    _create("notes_normalized", {c: NOTE_COLUMNS[c] for c in NORMALIZED_COLUMNS}, key="none"),
    "CREATE INDEX notes_parent_id ON notes (parent_id)",
)
"""Joplin's tables as AndroidWorld's Joplin helpers use them."""

_INSTALLED = to_ms(dt.datetime(2023, 10, 1, 9, 0))
DEFAULT_NOTES: tuple[tuple[str, str, str, int], ...] = (
    ("Welcome!", "1. Welcome to Joplin!", "Joplin is a free, open source note taking and to-do application.", 0),
    ("Welcome!", "2. Importing and exporting notes", "Notes can be imported from Evernote and Markdown files.", 0),
    ("Welcome!", "Try the to-do check box", "Tap the box to mark this to-do as done.", 1),
)
"""The notebook and notes a fresh install shows: (notebook, title, body, is_todo)."""


def new_id(rng: random.Random) -> str:
    """A Joplin item id: 32 hex digits, drawn from ``rng`` so that the same phone seed gives the same ids."""
    return f"{rng.getrandbits(128):032x}"


@register_app
class JoplinApp(App):
    """Joplin over lists of ``folders`` and ``notes`` rows (see the module docstring)."""

    package = JOPLIN_PKG
    label = "Joplin"
    activity = ".MainActivity"
    main_page = "main"
    icon_color = "#1071d3"
    databases = (JOPLIN_DB,)

    def setup(self) -> None:
        self.ids = random.Random(f"joplin:{self.phone.seed}")
        self.folders: list[dict[str, Any]] = []
        self.notes: list[dict[str, Any]] = []
        for folder, title, body, todo in DEFAULT_NOTES:
            parent = self.folder_id(folder) or self.add_folder(folder)
            self.add_note(parent, title, body, is_todo=todo)
        self._reset_ui()

    def clear_data(self) -> None:
        """``pm clear``: no notebooks, no notes."""
        self.folders = []
        self.notes = []
        self._reset_ui()

    def _reset_ui(self) -> None:
        self.current_folder = ""  # "" is "All notes"
        self.query = ""
        self.draft = ""

    def on_open(self) -> None:
        self._reset_ui()

    # --- data --------------------------------------------------------------------------------------
    def add_folder(self, title: str) -> str:
        """Create a notebook; returns its id."""
        now = to_ms(self.phone.now()) if self.folders else _INSTALLED
        row = {**FOLDER_COLUMNS, "id": new_id(self.ids), "title": title, "created_time": now, "updated_time": now,
               "user_created_time": now, "user_updated_time": now}
        self.folders.append(row)
        return row["id"]

    def folder_id(self, title: str) -> str:
        """The id of the notebook titled ``title`` ('' when there is none)."""
        return next((f["id"] for f in self.folders if f["title"] == title), "")

    def add_note(self, parent_id: str, title: str, body: str, is_todo: int = 0) -> str:
        """Create a note (or to-do) in a notebook; returns its id."""
        now = to_ms(self.phone.now()) if self.notes else _INSTALLED
        row = {**NOTE_COLUMNS, "id": new_id(self.ids), "parent_id": parent_id, "title": title, "body": body,
               "is_todo": int(is_todo), "created_time": now, "updated_time": now, "user_created_time": now,
               "user_updated_time": now}
        self.notes.append(row)
        return row["id"]

    def _note(self, note_id: str) -> dict[str, Any] | None:
        return next((n for n in self.notes if n["id"] == note_id), None)

    def _touch(self, note: dict[str, Any]) -> None:
        now = to_ms(self.phone.now())
        note["updated_time"] = note["user_updated_time"] = now

    def listed(self, notes: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Notes in list order: open to-dos on top, then newest update first, then title."""
        return sorted(notes, key=lambda n: (not (n["is_todo"] and not n["todo_completed"]),
                                            -int(n["user_updated_time"]), n["title"].lower(), n["id"]))

    # --- database ----------------------------------------------------------------------------------
    def dump_database(self, path: str) -> bytes:
        """joplin.sqlite with the folders, notes and their search index."""
        normalized = [{c: (n["title"].lower() if c == "title" else n[c]) for c in NORMALIZED_COLUMNS}
                      for n in self.notes]
        return build_database(JOPLIN_SCHEMA, {"folders": [dict(f) for f in self.folders],
                                              "notes": [dict(n) for n in self.notes],
                                              "notes_normalized": normalized})

    def load_database(self, path: str, data: bytes) -> None:
        """Replace the notebooks and notes with the rows of a written joplin.sqlite."""
        self.folders = [{c: _typed(r.get(c), d) for c, d in FOLDER_COLUMNS.items()} for r in read_table(data, "folders")]
        self.notes = [{c: _typed(r.get(c), d) for c, d in NOTE_COLUMNS.items()} for r in read_table(data, "notes")]
        if self.current_folder and not any(f["id"] == self.current_folder for f in self.folders):
            self.current_folder = ""

    # --- pages -------------------------------------------------------------------------------------
    def _note_row(self, note: dict[str, Any]) -> View:
        nid = note["id"]
        check = None
        if note["is_todo"]:
            check = CheckBox(bool(note["todo_completed"]), lambda n=nid: self.toggle_done(n),
                             resource_id="todo_checkbox", width=48)
        row = ListItem(note["title"] or "Untitled", "", lambda n=nid: self.open_note(n),
                       resource_id="note_item", title_id="note_title", min_height=48)
        if check is not None:
            row.children.insert(0, check)
        return row

    def build_main(self) -> View:
        folder = next((f for f in self.folders if f["id"] == self.current_folder), None)
        notes = [n for n in self.notes if folder is None or n["parent_id"] == folder["id"]]
        rows = [self._note_row(n) for n in self.listed(notes)]
        if not rows:
            rows = [Text("There are currently no notes. Create one by clicking on the (+) button.",
                         resource_id="empty_notes", padding=(24, 48), align="center", color="#5f6368")]
        toolbar = Toolbar(folder["title"] if folder else ALL_NOTES, actions=[
            ImageButton("Search", self.open_search, resource_id="search_button", icon="Q"),
        ], resource_id="header")
        toolbar.children.insert(0, ImageButton("Side menu", lambda: self.push("sidebar"),
                                               resource_id="side_menu_button", icon="="))
        buttons = Row(Button("New to-do", lambda: self.new_note(True), resource_id="new_todo"),
                      Button("New note", lambda: self.new_note(False), resource_id="new_note"),
                      padding=(16, 8))
        return Column(toolbar, ScrollList(rows, "main:notes", resource_id="note_list"), buttons,
                      cls="android.widget.FrameLayout", resource_id="notes_screen", weight=1)

    def build_sidebar(self) -> View:
        items: list[View] = [ListItem(ALL_NOTES, "", lambda: self.choose_folder(""), resource_id="folder_item",
                                      title_id="folder_title", icon="*")]
        for f in sorted(self.folders, key=lambda f: f["title"].lower()):
            items.append(ListItem(f["title"], "", lambda i=f["id"]: self.choose_folder(i), resource_id="folder_item",
                                  title_id="folder_title", icon="N"))
        return Column(Toolbar("Notebooks", on_back=self.pop, resource_id="side_menu_header"),
                      ScrollList(items, "sidebar:folders", resource_id="folder_list"),
                      cls="android.widget.FrameLayout", resource_id="side_menu", weight=1)

    def choose_folder(self, folder_id: str) -> None:
        """Show the note list of a notebook ('' for All notes) and close the side menu."""
        self.current_folder = folder_id
        self.scroll.pop("main:notes", None)
        self.pop()

    def open_search(self) -> None:
        self.query = ""
        self.push("search")
        self.focus("joplin_search")

    def _set_query(self, value: str) -> None:
        self.query = value
        self.scroll.pop("search:results", None)

    def build_search(self) -> View:
        q = self.query.strip().lower()
        found = [n for n in self.notes if q and (q in n["title"].lower() or q in n["body"].lower())]
        rows = [self._note_row(n) for n in self.listed(found)]
        if q and not rows:
            rows = [Text("No notes found", resource_id="search_empty", padding=(24, 48), align="center")]
        bar = Row(ImageButton("Back", self.pop, resource_id="search_back", icon="<"),
                  EditText(self.query, self._set_query, hint="Search...", key="joplin_search",
                           resource_id="search_query", weight=1),
                  height=64, padding=(4, 8), resource_id="search_bar")
        return Column(bar, ScrollList(rows, "search:results", resource_id="search_results"),
                      cls="android.widget.FrameLayout", resource_id="search_screen", weight=1)

    def open_note(self, note_id: str) -> None:
        """Show a note in view mode."""
        self.push("note", note_id=note_id, editing=False)

    def new_note(self, todo: bool) -> None:
        """Create an empty note or to-do in the shown notebook (the first one under All notes) and edit it."""
        parent = self.current_folder or (self.folders[0]["id"] if self.folders else self.add_folder("Notebook"))
        note_id = self.add_note(parent, "", "", is_todo=int(todo))
        self.draft = ""
        self.push("note", note_id=note_id, editing=True)
        self.focus("note_title_input")

    def toggle_done(self, note_id: str) -> None:
        """A to-do's check box: completed now, or open again."""
        note = self._note(note_id)
        if note is None:
            return
        note["todo_completed"] = 0 if note["todo_completed"] else to_ms(self.phone.now())
        self._touch(note)

    def _set_title(self, note_id: str, value: str) -> None:
        note = self._note(note_id)
        if note is not None and note["title"] != value:
            note["title"] = value
            self._touch(note)

    def _set_body(self, note_id: str, value: str) -> None:
        note = self._note(note_id)
        if note is not None and note["body"] != value:
            note["body"] = value
            self._touch(note)

    def _edit(self, note_id: str) -> None:
        self.pages[-1] = ("note", {"note_id": note_id, "editing": True})
        self.focus("note_body_input")

    def build_note(self, note_id: str, editing: bool) -> View:
        note = self._note(note_id)
        if note is None:
            return Column(Toolbar("", on_back=self.pop), Text("This note does not exist.", padding=(24, 48)))
        folder = next((f["title"] for f in self.folders if f["id"] == note["parent_id"]), "")
        actions = [] if editing else [ImageButton("Edit", lambda: self._edit(note_id), resource_id="edit_button",
                                                  icon="E")]
        parts: list[View | None] = [Toolbar(folder, on_back=self.pop, actions=actions, resource_id="note_header")]
        check = (CheckBox(bool(note["todo_completed"]), lambda: self.toggle_done(note_id),
                          resource_id="note_todo_checkbox", width=48) if note["is_todo"] else None)
        if editing:
            title: View = EditText(note["title"], lambda v: self._set_title(note_id, v), hint="Add title",
                                   key="note_title_input", resource_id="note_title_input", weight=1)
            body: View = EditText(note["body"], lambda v: self._set_body(note_id, v), hint="Type your note...",
                                  key="note_body_input", resource_id="note_body_input", multiline=True)
        else:
            title = Text(note["title"], resource_id="note_title_text", size=20, bold=True, weight=1, padding=(8, 12))
            body = Text(note["body"], resource_id="note_body_text", size=15, padding=(16, 8))
        parts.append(Row(check, title, padding=(8, 0)))
        parts.append(ScrollList([body], "note:body", resource_id="note_body"))
        return Column(*parts, cls="android.widget.FrameLayout", resource_id="note_screen", weight=1)


def _typed(value: Any, default: Any) -> Any:
    """A database value in the column's Python type (the default for NULL)."""
    if value is None:
        return default
    if isinstance(default, int):
        return int(value)
    if isinstance(default, float):
        return float(value)
    return str(value)


__all__ = ["JOPLIN_DB", "JOPLIN_PKG", "JOPLIN_SCHEMA", "JoplinApp", "new_id"]
