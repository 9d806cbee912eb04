"""Markor (net.gsantner.markor): a notes file browser over /sdcard/Documents/Markor and a text editor.

Notes are real files in the phone's /sdcard file system (what AndroidWorld checks with ``cat``/``ls``):
the app keeps no copy of them, it lists, reads and writes ``phone.files`` directly.

Pages: ``main`` (the file browser: folders first, then notes, each with its modification time;
".." to go up; a FAB opening the "New file" dialog with Name, extension and type, and Folder / Cancel /
OK buttons; long-press a row to select it, tap more rows to add them, then Delete / Move / Rename /
Select all in the app bar; "Sort by" name or date), ``editor`` (one multi-line field with the whole
note, Save in the app bar; Back saves changed text as Markor's autosave does).
A new file's name gets the extension field's value appended unless the name already ends with a
known text extension (.md, .txt, ...). A new note is written as an empty file when created.
"""

from __future__ import annotations

import datetime as dt
import posixpath
from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.files import FileSystemError
from android_gym.sim.view import (
    HORIZONTAL,
    Button,
    CheckBox,
    Column,
    Dialog,
    EditText,
    ListItem,
    RadioButton,
    ScrollList,
    Text,
    View,
)
from android_gym.sim.widgets import MultiSelect

MARKOR_PKG = "net.gsantner.markor"
MARKOR_ROOT = "/sdcard/Documents/Markor"
# the paths the emulator's ".." rows carry in their descriptions (as it spells them: the Move picker's title names
# the notebook "markor" too), and how many note rows of a folder it describes with their date (the real episodes'
# lists)
EMULATOR_DOCUMENTS = "/storage/emulated/0/Documents"
EMULATOR_NOTEBOOK = "/storage/emulated/0/Documents/markor"
DATED_ROWS = 2
TEXT_EXTENSIONS = (".md", ".txt", ".markdown", ".mkd", ".text", ".todo.txt", ".csv", ".json", ".html", ".yaml",
                   ".yml", ".org", ".adoc")
"""Names ending with one of these keep their extension in the New file dialog."""

FILE_TYPES: tuple[tuple[str, str], ...] = (("Markdown", ".md"), ("Plain Text", ".txt"), ("todo.txt", ".todo.txt"))

# A factory-fresh notebook: (path relative to the root, minutes before the phone's start time, content).
DEFAULT_NOTES: tuple[tuple[str, int, str], ...] = (
    ("grocery_list.md", 2 * 1440 + 95, "# Groceries\n- oat milk\n- eggs\n- spinach\n- coffee beans\n"),
    ("meeting_notes.md", 1440 + 300, "# Sprint planning\nDecisions:\n- ship the beta on Friday\n"),
    ("ideas.txt", 5 * 1440 + 42, "App idea: a plant watering reminder with photos.\n"),
    ("reading_list.md", 9 * 1440 + 610, "1. The Pragmatic Programmer\n2. Dune\n3. Atomic Habits\n"),
    ("packing_list.txt", 3 * 1440 + 75, "passport, charger, rain jacket, hiking boots\n"),
    ("podcast_ideas.md", 6 * 1440 + 200, "- Interview a beekeeper\n- History of the bicycle\n"),
    ("recipes_to_try.md", 4 * 1440 + 500, "Shakshuka, lentil soup, banana bread\n"),
    ("weekly_review.md", 7 * 1440 + 30, "## Week 40\nWins: finished the migration.\n"),
    ("workout_plan.txt", 8 * 1440 + 420, "Mon: run 5 km\nWed: strength\nSat: long ride\n"),
    ("Journal/2023-10-13.md", 2 * 1440 - 120, "Long run by the river, 12 km.\n"),
    ("Journal/2023-10-14.md", 1440 - 200, "Visited the farmers market with Ana.\n"),
    ("Work/okr_q4.md", 12 * 1440 + 33, "# Q4 OKRs\n- Reduce crash rate below 0.5%\n"),
)
DEFAULT_FOLDERS = ("Journal", "Work", "Recipes")
TEXT_ACTIONS = ("Check list", "Unordered list", "Bold", "Italic", "Delete lines", "Open link", "Attach",
                "Special Key", "Date and time")
"""The editor's text actions bar (a Markdown note's)."""
PLAIN_TEXT_ACTIONS = ("Check list", "Unordered list", "Ordered list", "Delete lines", "Open link", "Attach",
                      "Special Key", "Date and time", "Indent")
"""The text actions bar of a plain-text (.txt) note, as far as the screen shows it (the MarkorMoveNote runs)."""
FILE_SETTINGS = (("Wrap words", True), ("Syntax highlighting", True), ("Auto-format", True), ("Font Size", None),
                 ("Format", None))
"""The editor's More options > File settings submenu: (item, its checkbox's state or None without one)."""
TOOLS = ("Speed Read",)
"""The editor's More options > Tools submenu."""
SHARE_FORMATS = ("Plain Text", "Print / PDF", "File", "HTML", "HTML (as plain text)", "Image", "Screenshot",
                 "Calendar")
"""The editor's More options > Share submenu."""
ROWS_ON_SCREEN = 11
"""File rows that fit in the Files tab without scrolling."""
ROWS_OVER_KEYBOARD = 7
"""File rows that fit in the Files tab above Gboard (a folder of eight rows scrolls there, as a real run shows)."""


def _size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    return f"{n / 1024:.1f} KB"


@register_app
class MarkorApp(MultiSelect, App):
    """Markor's file browser and editor over ``phone.files`` under /sdcard/Documents/Markor."""

    package = MARKOR_PKG
    label = "Markor"
    activity = ".activity.MainActivity"
    main_page = "main"
    icon_color = "#546e7a"

    def setup(self) -> None:
        fs = self.phone.files
        fs.mkdir(MARKOR_ROOT)
        for folder in DEFAULT_FOLDERS:
            fs.mkdir(f"{MARKOR_ROOT}/{folder}")
        for rel, minutes_ago, content in DEFAULT_NOTES:
            fs.write(f"{MARKOR_ROOT}/{rel}", content, self.phone.clock_ms - minutes_ago * 60_000)
        self.sort_by = "name"
        self.search_history: list[str] = []  # Search's past queries (Markor keeps them: the field offers them again)
        self._reset_ui()

    def _reset_ui(self) -> None:
        self.cwd = ""
        self.selection: list[str] = []
        self.editor: dict[str, Any] = {}
        self.new_name = ""
        self.new_ext = ".md"
        self.rename_value = ""
        self.move_dir = ""
        self.print_pending = False  # Print / PDF chosen: the print preview comes up once time passes
        self.search_query = ""
        self.search_options = {"Regex search": False, "Case sensitive": False, "Search in content": False}
        self.search_results: list[str] = []
        self.search_filter = ""
        self.menu_hid_keyboard = False  # the editor's menu hid Gboard: it comes back when the menu goes

    def on_open(self) -> None:
        self._reset_ui()
        self.phone.files.mkdir(MARKOR_ROOT)  # Markor creates its notebook folder on start

    def current_activity(self) -> str:
        return ".activity.DocumentActivity" if self.page in ("editor", "print") else self.activity

    PRINT_PKG = "com.android.printspooler"

    def window_package(self) -> str:
        """The print preview is the print spooler's activity: its window carries that package."""
        return self.PRINT_PKG if self.page == "print" else self.package

    # --- file helpers ------------------------------------------------------------------------------
    @staticmethod
    def full(rel: str) -> str:
        """Absolute path of a path relative to the notebook root."""
        return MARKOR_ROOT if not rel else f"{MARKOR_ROOT}/{rel}"

    def _mtime(self, path: str) -> dt.datetime:
        base = self.phone.now() - dt.timedelta(milliseconds=self.phone.clock_ms)
        return base + dt.timedelta(milliseconds=self.phone.files.mtimes.get(self.phone.files.norm(path), 0))

    def entries(self, rel: str) -> list[tuple[str, bool]]:
        """(name, is_folder) inside ``rel``, folders first, then by the chosen sort order."""
        fs = self.phone.files
        base = self.full(rel)
        if not fs.is_dir(base):
            return []
        names = fs.listdir(base)
        folders = sorted((n for n in names if fs.is_dir(f"{base}/{n}")), key=str.lower)
        files = [n for n in names if not fs.is_dir(f"{base}/{n}")]
        if self.sort_by == "date":
            files.sort(key=lambda n: (-fs.mtimes.get(fs.norm(f"{base}/{n}"), 0), n.lower()))
        else:
            files.sort(key=str.lower)
        return [(n, True) for n in folders] + [(n, False) for n in files]

    def _clock(self, when: dt.datetime) -> str:
        """The time of day in the phone's 12/24-hour setting: "15:34" or "3:34 PM"."""
        if self.phone.settings_get("system", "time_12_24") == "24":
            return f"{when.hour:02d}:{when.minute:02d}"
        return f"{when.hour % 12 or 12}:{when.minute:02d} {'AM' if when.hour < 12 else 'PM'}"

    def _fmt_time(self, when: dt.datetime) -> str:
        return f"{when.strftime('%b')} {when.day}, {when.year} {self._clock(when)}"

    def _row_date(self, when: dt.datetime) -> str:
        """A file row's date as Markor's content description gives it: "10/15/2023, 15:34"."""
        return f"{when.month:02d}/{when.day:02d}/{when.year}, {self._clock(when)}"

    def _fs_row(self, name: str, is_folder: bool, on_click: Any, on_long_click: Any = None, *,
                selected: bool = False, subtitle: str = "", described: str = "") -> View:
        """A file browser row as the emulator's Markor lists it: one clickable node whose content description
        says "Folder NAME ", "File NAME DATE" or "Selected NAME " (the icon and texts inside are not listed)."""
        kind = "Selected" if selected else "Folder" if is_folder else "File"
        desc = f"{kind} {name} {'' if selected else described}"
        return View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, resource_id="opoc_filesystem_item__root",
                    content_desc=desc, clickable=True, focusable=True, long_clickable=True, on_click=on_click,
                    on_long_click=on_long_click, selected=selected, min_height=46, padding=(16.0, 0.0),
                    background="#d3e3fd" if selected else None, children=[
                        View(cls="android.widget.ImageView", width=40, height=40, layout_only=True,
                             icon="D" if is_folder else "N"),
                        View(cls="android.widget.LinearLayout", weight=1, padding=(16.0, 6.0), layout_only=True,
                             children=[
                                 Text(name, resource_id="ui__filesystem_item__title", max_lines=1, padding=(0, 2),
                                      layout_only=True),
                                 Text(subtitle, resource_id="ui__filesystem_item__description", size=12,
                                      color="#5f6368", padding=(0, 2), layout_only=True)][:2 if subtitle else 1])])

    # --- browser -----------------------------------------------------------------------------------
    def build_main(self) -> View:
        """The Files tab as the emulator's Markor lists it: the pager, the "Create a new file or folder" button, the
        app bar (the folder, Go to, Sort by, Search, More options; in selection mode Favourite, Rename, Details,
        Delete, More options), the bottom navigation, then the list (listed only when it scrolls) and its rows,
        ".." first, folders, then notes."""
        fs = self.phone.files
        if self.cwd and not fs.is_dir(self.full(self.cwd)):
            self.cwd, self.selection = "", []  # the folder was removed behind the app's back
        rows: list[View] = [self._fs_row("..", True, self.go_up,
                                         described=EMULATOR_DOCUMENTS if self.cwd else "")]
        files_seen = 0
        for name, is_folder in self.entries(self.cwd):
            path = f"{self.full(self.cwd)}/{name}"
            if is_folder:
                count = len(fs.listdir(path))
                subtitle, described = f"{count} item" + ("" if count == 1 else "s"), ""
            else:
                when = self._mtime(path)
                subtitle = f"{self._fmt_time(when)} \u00b7 {_size(len(fs.read(path)))}"
                # the emulator's rows describe only the first two notes with their date (the rest: "File NAME ")
                described = self._row_date(when) if files_seen < DATED_ROWS else ""
                files_seen += 1
            rows.append(self._fs_row(name, is_folder, lambda n=name, d=is_folder: self._tap_entry(n, d),
                                     lambda n=name: self._toggle(n), selected=name in self.selection,
                                     subtitle=subtitle, described=described))
        if self.selection:
            actions = [self._action("Favourite", "action_favourite", lambda: self.toast("Added to favourites")),
                       self._action("Rename", "action_rename_selected_item", self._open_rename)
                       if len(self.selection) == 1 else None,
                       self._action("Details", "action_info_selected_item", lambda: self.toast(", ".join(self.selection))),
                       self._action("Delete", "action_delete_selected_items", lambda: self.show_dialog("delete")),
                       self._action("More options", "", lambda: self.show_dialog("selection_menu"),
                                    cls="android.widget.ImageView")]
            title = None
        else:
            actions = [self._action("Go to", "action_go_to", self._go_home),
                       self._action("Sort by", "action_sort", lambda: self.show_dialog("sort")),
                       self._action("Search", "action_search", self._open_search),
                       self._action("More options", "", lambda: self.show_dialog("browser_menu"),
                                    cls="android.widget.ImageView")]
            title = Text(f"> {posixpath.basename(self.cwd)}" if self.cwd else "Markor", size=20, weight=1,
                         max_lines=1, padding=(16, 14))
        bar_items = [v for v in [title or View(weight=1, height=1, layout_only=True), *actions] if v is not None]
        app_bar = View(cls="android.widget.LinearLayout", height=64, background="#f8fafd", children=[
            View(cls="android.view.ViewGroup", orientation=HORIZONTAL, height=64, padding=(4.0, 8.0),
                 children=bar_items)])
        files = ScrollList(rows, "main:files", resource_id="ui__filesystem_dialog__list")
        # a RecyclerView is listed as scrollable only when it overflows (Gboard, up over the list, leaves fewer rows)
        keyboard_up = self.phone.keyboard_shown or self.phone.ime_detached
        files.scrollable = len(rows) > (ROWS_OVER_KEYBOARD if keyboard_up else ROWS_ON_SCREEN)
        # an empty folder (the notebook's root too) shows Markor's shrug over the list (a sibling of the list: listed
        # before the ".." row, as on the emulator)
        empty = (Text("\u00af\\_(\u30c4)_/\u00af", resource_id="empty_hint", size=22, align="center", height=134,
                      overlay=True) if len(rows) == 1 else None)
        pager = View(cls="androidx.viewpager.widget.ViewPager", resource_id="main__view_pager_container",
                     scrollable=True, weight=1, children=[
                         View(cls="android.widget.FrameLayout", weight=1, children=[
                             View(cls="android.widget.FrameLayout", weight=1,
                                  children=[c for c in (files, empty) if c is not None])])])
        nav = View(cls="android.widget.LinearLayout", height=56, background="#f3f6fc", children=[
            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=56, children=[
                View(cls="android.widget.FrameLayout", content_desc=label, resource_id=rid, weight=1, icon=label[:1],
                     clickable=rid != "nav_notebook", selected=rid == "nav_notebook",
                     on_click=None if rid == "nav_notebook" else (lambda t=label: self.toast(f"{t} is not available")))
                for label, rid in (("Files", "nav_notebook"), ("To-Do", "nav_todo"), ("QuickNote", "nav_quicknote"),
                                   ("More", "nav_more"))])])
        fab = View(cls="android.widget.ImageButton", content_desc="Create a new file or folder",
                   resource_id="fab_add_new_item", on_click=self._open_new_file, clickable=True, focusable=True,
                   long_clickable=True, width=56, height=56, icon="+", background="#c2e7ff", overlay=True)
        return Column(app_bar, pager, fab, nav, cls="android.widget.RelativeLayout",
                      resource_id="main__activity__content", weight=1, layout_only=True)

    @staticmethod
    def _action(desc: str, rid: str, on_click: Any, cls: str = "android.widget.TextView") -> View:
        """An app bar action (an ActionMenuItemView, a TextView known by its content description)."""
        return View(cls=cls, content_desc=desc, resource_id=rid, on_click=on_click, clickable=True, focusable=True,
                    long_clickable=cls == "android.widget.TextView" and desc != "Search", width=40, height=48,
                    icon=desc[:1])

    def _go_home(self) -> None:
        """Go to: back to the notebook's root folder."""
        self.selection = []
        self.cwd = ""
        self.scroll.pop("main:files", None)

    def dialog_browser_menu(self) -> View:
        """The Files tab's More options: Import from device, Settings (an ExpenseAddMultiple run opened it; the sim
        has neither behind them)."""
        items = [ListItem(label, "", lambda t=label: self._menu_then(lambda: self.toast(f"{t} is not available")),
                          title_id="title", min_height=48) for label in ("Import from device", "Settings")]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def dialog_selection_menu(self) -> View:
        """More options in selection mode: Clipboard, Move, Copy, Create shortcut, Share (as on the emulator)."""
        entries = (("Clipboard", lambda: self._menu_then(self._copy_names)), ("Move", lambda: self._menu_then(
            self._open_move)), ("Copy", lambda: self._menu_then(lambda: self.toast("Copy is not available"))),
            ("Create shortcut", lambda: self._menu_then(lambda: self.toast("Shortcut created"))),
            ("Share", lambda: self._menu_then(lambda: self.toast("Share is not available"))))
        items = [ListItem(label, "", cb, title_id="title", min_height=48) for label, cb in entries]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def _menu_then(self, action: Any) -> None:
        self.close_dialog()
        action()

    def _copy_names(self) -> None:
        self.phone.set_clipboard("\n".join(self.selection))

    def _tap_entry(self, name: str, is_folder: bool) -> None:
        if self.selection:
            self._toggle(name)
            return
        rel = f"{self.cwd}/{name}".strip("/")
        if is_folder:
            self.cwd = rel
            self.scroll.pop("main:files", None)
        else:
            self.open_editor(self.full(rel))

    def go_up(self) -> None:
        """Show the parent folder (no-op at the notebook root, where ".." is listed too)."""
        self.selection = []
        self.cwd = posixpath.dirname(self.cwd)
        self.scroll.pop("main:files", None)

    def _select_all(self) -> None:
        self.selection = [n for n, _ in self.entries(self.cwd)]

    def on_back(self) -> bool:
        if self.dialog is not None:
            self.dialog = None
            self._keyboard_back()
            return True
        if self.page == "editor":
            self.close_editor()
            return True
        if self.page == "main" and self.selection:
            self.selection = []
            return True
        if self.page == "main" and self.cwd:
            self.go_up()
            return True
        return self.pop()

    # --- editor ------------------------------------------------------------------------------------
    def open_editor(self, path: str) -> None:
        """Open the note at ``path`` (a missing file opens empty and is written on save)."""
        fs = self.phone.files
        text = fs.read_text(path) if fs.is_file(path) else ""
        self.editor = {"path": path, "text": text, "saved": text, "exists": fs.is_file(path)}
        self.print_pending = False
        self.selection = []
        keyboard_up = self.phone.keyboard_shown or self.phone.ime_detached
        self.push("editor", path=path)
        if keyboard_up:
            # the editor takes the focus as it opens, its cursor before the text: Gboard, when it is up (left by the
            # launcher's search or a dialog's field), serves it with Shift on (the MarkorMoveNote runs)
            self.phone.set_focus("markor_editor", shift=True)

    def _set_text(self, value: str) -> None:
        self.editor["text"] = value

    def save(self) -> None:
        """Write the editor's text to its file."""
        ed = self.editor
        if not ed:
            return
        if not ed["exists"] and not ed["text"]:
            return
        self.phone.files.write(ed["path"], ed["text"], self.phone.clock_ms)
        ed["saved"] = ed["text"]
        ed["exists"] = True
        self.toast("Saved")

    def close_editor(self) -> None:
        """Leave the editor, saving changed text first (Markor autosaves)."""
        ed = self.editor
        if ed and ed["text"] != ed["saved"]:
            self.save()
        self.editor = {}
        self.print_pending = False  # left before the preview came up: it does not come up over another page
        self.phone.set_focus(None)
        self.pop()

    def build_editor(self, path: str) -> View:
        """The note editor as the emulator's Markor lists it: the note's name, Undo, Redo, View mode, Save,
        Search, More options, the text actions bar, the text, then the bar's buttons."""
        ed = self.editor
        text = ed.get("text", "")
        if ed.get("view"):
            return self._build_view_mode(path, text)
        field = EditText(text, self._set_text, hint="", resource_id="document__fragment__edit__highlighting_editor",
                         key="markor_editor", multiline=True, min_height=400, background="#ffffff",
                         input_type="sentence")
        name = posixpath.basename(path)
        stem = next((name[:-len(ext)] for ext in TEXT_EXTENSIONS if name.lower().endswith(ext) and len(name) > len(ext)),
                    name)
        plain = name.lower().endswith(".txt") and not name.lower().endswith(".todo.txt")
        bar = [self._action(desc, rid, cb) for desc, rid, cb in (
            ("Undo", "action_undo", lambda: self.toast("Nothing to undo")),
            ("Redo", "action_redo", lambda: self.toast("Nothing to redo")),
            ("View mode", "action_preview", lambda: self._set_view_mode(True)),
            ("Save", "action_save", self.save),
            ("Search", "action_search", lambda: self.toast("Search is not available")))]
        bar.append(self._action("More options", "", self._editor_menu, cls="android.widget.ImageView"))
        app_bar = View(cls="android.widget.LinearLayout", height=64, background="#f8fafd", children=[
            View(cls="android.view.ViewGroup", orientation=HORIZONTAL, height=64, padding=(4.0, 8.0), children=[
                Text(stem, resource_id="note__activity__text_note_title", size=20, weight=1, max_lines=1,
                     padding=(16, 14)), *bar])])
        actions = View(cls="android.widget.HorizontalScrollView", scrollable=True, height=48,
                       resource_id="document__fragment__edit__text_actions_bar__scrolling_parent", children=[
                           View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=48, children=[
                               View(cls="android.widget.ImageView", content_desc=desc, clickable=True, width=48,
                                    height=40, icon=desc[:1], on_click=lambda d=desc: self.toast(d))
                               for desc in (PLAIN_TEXT_ACTIONS if plain else TEXT_ACTIONS)])])
        actions.dump_rank = -1  # listed before the text, though drawn under it
        page = View(cls="android.widget.FrameLayout", weight=1, children=[
            View(cls="android.widget.LinearLayout", weight=1, children=[
                ScrollList([field], "editor:doc",
                           resource_id="document__fragment__edit__content_editor__scrolling_parent",
                           cls="android.widget.ScrollView", layout_only=True),
                actions])])
        return Column(app_bar, page, cls="android.widget.RelativeLayout", resource_id="document__placeholder_fragment",
                      weight=1, layout_only=True)

    def _set_view_mode(self, on: bool) -> None:
        """View mode shows the note rendered (as a web page); Edit mode goes back to the text field."""
        self.editor["view"] = on
        if on:
            self.phone.set_focus(None)

    def _build_view_mode(self, path: str, text: str) -> View:
        """The rendered note as the emulator's Markor lists it: the note's name, Edit mode, More options, the
        search button, the WebView, Jump to bottom, Table of contents and Rotate, then the text (typographic
        apostrophes, as the Markdown renderer sets them)."""
        name = posixpath.basename(path)
        stem = next((name[:-len(ext)] for ext in TEXT_EXTENSIONS if name.lower().endswith(ext) and len(name) > len(ext)),
                    name)
        search = View(cls="android.widget.ImageView", content_desc="Search", resource_id="android:id/search_button",
                      clickable=True, focusable=True, width=35, height=48, icon="Q", dump_rank=1,
                      on_click=lambda: self.toast("Search is not available"))
        bar = [Text(stem, resource_id="note__activity__text_note_title", size=20, weight=1, max_lines=1,
                    padding=(16, 14)),
               self._action("Edit mode", "action_edit", lambda: self._set_view_mode(False)), search,
               self._action("More options", "", lambda: self.show_dialog("editor_menu"), cls="android.widget.ImageView")]
        # the bars' and the page's layouts are left out of the dump: the bar's items, the WebView and the tools list
        # side by side, the rendered text (inside the WebView) after them
        app_bar = View(cls="android.widget.LinearLayout", height=64, background="#f8fafd", layout_only=True, children=[
            View(cls="android.view.ViewGroup", orientation=HORIZONTAL, height=64, layout_only=True, children=bar)])
        rendered = [Text(line.replace("'", "\u2019"), padding=(21, 8)) for line in text.split("\n") if line.strip()]
        web = View(cls="android.webkit.WebView", scrollable=True, focusable=True, weight=1, background="#ffffff",
                   children=rendered or [View(height=1, layout_only=True)])
        tools = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=35, layout_only=True,
                     children=[View(cls="android.widget.ImageView", content_desc=desc, clickable=True, focusable=True,
                                    long_clickable=True, width=42, height=35, icon=desc[:1],
                                    on_click=lambda d=desc: self.toast(d))
                               for desc in ("Jump to bottom", "Table of contents", "Rotate")])
        page = View(cls="android.widget.FrameLayout", weight=1, layout_only=True, children=[web, tools])
        return Column(app_bar, page, cls="android.widget.RelativeLayout", resource_id="document__placeholder_fragment",
                      weight=1, layout_only=True)

    def _editor_menu(self) -> None:
        """More options in edit mode: the menu's popup takes the window's focus, so the keyboard goes (the real
        episode lists the menu without Gboard); the text keeps its focus, and Gboard comes back once the menu (or
        its submenu) is gone, as the MarkorMoveNote runs show."""
        self.menu_hid_keyboard = self.phone.keyboard_shown
        self.phone.keyboard_shown = False
        self.show_dialog("editor_menu")

    def close_dialog(self) -> None:
        super().close_dialog()
        self._keyboard_back()

    def _keyboard_back(self) -> None:
        if self.menu_hid_keyboard and self.dialog is None:
            self.menu_hid_keyboard = False
            if self.page == "editor" and self.phone.focus == "markor_editor":
                self.phone.keyboard_shown = True

    def dialog_editor_menu(self) -> View:
        """The editor's More options: File settings and Tools (submenus), Share (a submenu of formats), Info,
        Reload."""
        entries = (("File settings", lambda: self.show_dialog("file_settings_menu")),
                   ("Share", lambda: self.show_dialog("share_menu")),
                   ("Tools", lambda: self.show_dialog("tools_menu")), ("Info", self.close_dialog),
                   ("Reload", self.close_dialog))
        items = [ListItem(label, "", cb, title_id="title", min_height=48) for label, cb in entries]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def dialog_file_settings_menu(self) -> View:
        """File settings' submenu as the emulator lists it: its header, then Wrap words, Syntax highlighting and
        Auto-format (each with its checkbox, on), Font Size, Format. The sim changes none of them."""
        items: list[View] = [Text("File settings", resource_id="android:id/title", size=14, color="#5f6368",
                                  padding=(16, 12))]
        for label, checked in FILE_SETTINGS:
            # the checkbox sits a level deeper than the row's texts' layout (listed after its title, as there)
            box = None if checked is None else View(cls="android.widget.FrameLayout", width=40, height=40, children=[
                View(cls="android.widget.CheckBox", resource_id="checkbox", checkable=True, checked=checked,
                     width=32, height=32)])
            items.append(ListItem(label, "", self.close_dialog, title_id="title", min_height=48, trailing=box))
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def dialog_tools_menu(self) -> View:
        """Tools' submenu: its header, then Speed Read (which the sim does not run)."""
        items: list[View] = [Text("Tools", resource_id="android:id/title", size=14, color="#5f6368", padding=(16, 12))]
        items += [ListItem(label, "", self.close_dialog, title_id="title", min_height=48) for label in TOOLS]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def dialog_share_menu(self) -> View:
        """Share's submenu: the formats Markor shares a note in (the sim shares none of them)."""
        items = [Text("Share", resource_id="android:id/title", size=14, color="#5f6368", padding=(16, 12))]
        items += [ListItem(label, "", self._print if label == "Print / PDF"
                           else lambda: self._menu_then(lambda: self.toast("Sharing is not available")),
                           title_id="title", min_height=48) for label in SHARE_FORMATS]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def _print(self) -> None:
        """Print / PDF renders the note in view mode first, as the emulator's Markor does; the print spooler's
        preview comes up a moment later (the real run lists it after a wait), see :meth:`on_time_passed`."""
        self.close_dialog()
        self._set_view_mode(True)
        self.print_pending = True

    def on_time_passed(self) -> None:
        if self.print_pending and self.page == "editor" and self.editor.get("view"):
            self.print_pending = False
            self.push("print")

    def build_print(self) -> View:
        """The print spooler's preview as the emulator lists it: the printer drop-down ("Select a printer"), the
        summary row (copies 1, paper size Letter), the expand handle, then the page's preview ("1/1"). Printing
        itself is not simulated; Back returns to the note."""
        spinner = View(cls="android.widget.Spinner", resource_id="destination_spinner", clickable=True,
                       focusable=True, scrollable=True, width=256, height=48, padding=(8.0, 0.0),
                       on_click=lambda: self.toast("No printers on the simulated phone"), children=[
                           Text("Select a printer", size=16, padding=(0, 12))])
        summary = View(cls="android.widget.LinearLayout", content_desc="Summary, copies 1, paper size Letter",
                       resource_id="summary_content", clickable=True, focusable=True, orientation=HORIZONTAL,
                       height=34, padding=(28.0, 0.0), on_click=lambda: None, children=[
                           Text("Copies:", size=14, padding=(0, 4)), Text("1", resource_id="copies_count_summary",
                                                                      size=14, padding=(16, 4)),
                           Text("Paper size:", size=14, padding=(16, 4)),
                           Text("Letter", resource_id="paper_size_summary", size=14, padding=(16, 4))])
        handle = View(cls="android.widget.FrameLayout", content_desc="Expand handle",
                      resource_id="expand_collapse_handle", clickable=True, focusable=True, height=28,
                      on_click=lambda: None, dump_rank=-1)  # listed before the rows above it, as there
        page = View(cls="android.widget.CompoundButton", content_desc="Page 1 of 1", resource_id="preview_page",
                    clickable=True, focusable=True, checkable=True, checked=True, width=348, height=482,
                    background="#ffffff", on_click=lambda: None, children=[
                        View(height=450, layout_only=True),
                        Text("1/1", resource_id="page_number", size=14, align="center", selected=True)])
        # the preview's frame is a node of its own (not listed), so the page comes a level below the rows
        preview = View(cls="android.widget.FrameLayout", weight=1, background="#e8eaed", padding=(32.0, 120.0),
                       children=[page])
        return Column(View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, layout_only=True, height=48,
                           children=[spinner]),
                      summary, handle, preview, cls="android.widget.LinearLayout", weight=1, layout_only=True)

    # --- dialogs -----------------------------------------------------------------------------------
    def _open_new_file(self) -> None:
        self.new_name = ""
        self.new_ext = ".md"
        self.show_dialog("new_file")
        self.focus("new_file_name")

    def _set_new_name(self, value: str) -> None:
        self.new_name = value

    def _set_new_ext(self, value: str) -> None:
        self.new_ext = value

    def dialog_new_file(self) -> View:
        """The New file dialog as the emulator's Markor lists it: "Name" with the name ("my_note" as its hint) and
        extension fields, the Type and Template drop-downs, two notes, FOLDER / CANCEL / OK, then the drop-downs'
        values (Markdown, Empty file)."""
        label = next((name for name, ext in FILE_TYPES if ext == self.new_ext), "Markdown")

        def dropdown(rid: str, value: str, on_click: Any) -> View:
            return View(cls="android.widget.Spinner", resource_id=rid, clickable=True, focusable=True, weight=1,
                        height=48, on_click=on_click, scrollable=True, children=[
                            Text(value, resource_id="android:id/text1", max_lines=1, padding=(8, 12))])

        body = Column(
            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=56, layout_only=True, children=[
                Text("Name", size=14, color="#5f6368", padding=(0, 16), width=72),
                EditText(self.new_name, self._set_new_name, hint="my_note", resource_id="new_file_dialog__name",
                         key="new_file_name", weight=1, ime_action="Done"),  # Gboard's action key reads Done
                # the extension takes no suggestions: Gboard shows its row of digits over the letters there
                EditText(self.new_ext, self._set_new_ext, hint="Extension", resource_id="new_file_dialog__ext",
                         key="new_file_ext", width=96, input_type="visible_password")]),
            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=56, layout_only=True, children=[
                Text("Type", size=14, color="#5f6368", padding=(0, 16), width=72),
                dropdown("new_file_dialog__type", label, lambda: self.show_dialog("file_type"))]),
            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=56, layout_only=True, children=[
                Text("Template", size=14, color="#5f6368", padding=(0, 16), width=72),
                dropdown("new_file_dialog__template", "Empty file", lambda: self.toast("No other templates"))]),
            Text("- Folder is created without file extension", size=13, color="#5f6368", padding=(0, 4)),
            Text("- Files and folders are not overwritten", size=13, color="#5f6368", padding=(0, 4)),
            padding=(24, 0),
        )
        return Dialog("", body, [("FOLDER", self.create_folder), ("CANCEL", self.close_dialog),
                                 ("OK", self.create_file)],
                      button_ids=["android:id/button3", "android:id/button2", "android:id/button1"])

    def dialog_file_type(self) -> View:
        """The Type drop-down's list: picking a type sets the extension and goes back to New file."""
        items = [ListItem(name, "", (lambda e=ext: self._pick_type(e)), title_id="android:id/text1", min_height=48)
                 for name, ext in FILE_TYPES]
        return Dialog("", Column(*items))

    def _pick_type(self, ext: str) -> None:
        self.new_ext = ext
        self.show_dialog("new_file")

    def _checked_name(self, name: str) -> str | None:
        name = name.strip()
        if not name:
            self.toast("Please enter a name")
            return None
        if "/" in name or name in (".", ".."):
            self.toast("Invalid name")
            return None
        return name

    def create_file(self) -> None:
        """OK in the New file dialog: create the note and open it in the editor; with no name typed the dialog just
        closes (a real ExpenseAddMultiple run pressed OK over the "my_note" hint: nothing was created)."""
        if not self.new_name.strip():
            self.phone.set_focus(None)
            self.close_dialog()
            return
        name = self._checked_name(self.new_name)
        if name is None:
            return
        ext = self.new_ext.strip()
        if ext and not ext.startswith("."):
            ext = "." + ext
        if ext and not name.lower().endswith(ext.lower()) and not name.lower().endswith(TEXT_EXTENSIONS):
            name += ext
        path = f"{self.full(self.cwd)}/{name}"
        if self.phone.files.exists(path):
            self.toast("File already exists")
            return
        self.phone.files.write(path, "", self.phone.clock_ms)
        self.close_dialog()
        self.open_editor(path)
        self.focus("markor_editor")  # a new note opens ready for typing

    def create_folder(self) -> None:
        """Folder in the New file dialog: create a folder with the typed name."""
        name = self._checked_name(self.new_name)
        if name is None:
            return
        path = f"{self.full(self.cwd)}/{name}"
        if self.phone.files.exists(path):
            self.toast("Folder already exists")
            return
        self.phone.files.mkdir(path)
        self.phone.set_focus(None)
        self.close_dialog()

    # --- Search (the app bar's magnifier): file names under the current folder --------------------------------
    def _open_search(self) -> None:
        # the field takes the focus with no keyboard until it is tapped: text typed after a tap beside it (a real run
        # tapped "Regex search", typed and pressed Enter) goes into it and Enter searches, as on the emulator. Once a
        # search has run, the field opens with the last query, Gboard up and the past queries offered under it (a
        # MarkorMoveNote run's second search)
        self.search_query = self.search_history[-1] if self.search_history else ""
        self.show_dialog("search")
        self.phone.set_focus("markor_search", keyboard=bool(self.search_history))

    def _set_search_query(self, value: str) -> None:
        self.search_query = value

    def _toggle_search_option(self, label: str) -> None:
        self.search_options[label] = not self.search_options[label]

    @staticmethod
    def _dialog_column(*children: View | None, buttons: list[tuple[str, Any, str]],
                       after: list[View] | None = None) -> View:
        """A Markor (AppCompat) dialog: its title, message and fields listed before its buttons (then ``after``,
        a field's drop-down)."""
        row = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, resource_id="android:id/buttonPanel",
                   padding=(16, 8), children=[View(cls="android.view.View", weight=1, height=1, layout_only=True)]
                   + [Button(label, cb, resource_id=rid, background=None, height=48) for label, cb, rid in buttons])
        return Column(*children, row, *(after or ()), cls="android.widget.FrameLayout",
                      resource_id="android:id/content", background="#ffffff", padding=(0, 8))

    def dialog_search(self) -> View:
        """Search as the emulator's Markor lists it: "Search", "Recursive search in current directory.", the query
        (hint "Search"), three options, CANCEL / OK."""
        return self._dialog_column(
            Text("Search", resource_id="alertTitle", size=22, padding=(24, 12)),
            Text("Recursive search in current directory.", size=15, color="#444746", padding=(24, 4)),
            EditText(self.search_query, self._set_search_query, hint="Search", key="markor_search",
                     on_submit=self._run_search, padding=(24, 8), ime_action="Done"),
            *(CheckBox(on, (lambda k=label: self._toggle_search_option(k)), text=label, padding=(24, 4))
              for label, on in self.search_options.items()),
            buttons=[("CANCEL", self.close_dialog, "android:id/button2"), ("OK", self._run_search, "android:id/button1")],
            after=self._search_suggestions())

    def _search_suggestions(self) -> list[View]:
        """The past queries that hold the typed text, in the field's drop-down (listed after the dialog's buttons)."""
        typed = self.search_query.strip().lower()
        if not typed or self.phone.focus != "markor_search" or not self.phone.keyboard_shown:
            return []
        # the drop-down is a popup window of its own: its rows come a level below the dialog's buttons
        return [View(cls="android.widget.FrameLayout", children=[
            Text(q, resource_id="android:id/text1", size=16, max_lines=1, padding=(16, 12),
                 on_click=lambda q=q: self.show_dialog("search_suggestion", query=q))])
            for q in dict.fromkeys(reversed(self.search_history)) if typed in q.lower()][:3]

    def dialog_search_suggestion(self, query: str) -> View:
        """A tap on a past query in Search's drop-down: the emulator's screen then lists the drop-down alone, its
        row clickable, without Gboard, until the row is tapped again, which puts it in the field and brings the
        dialog and Gboard back (a MarkorMoveNote run)."""
        self.phone.keyboard_shown = False
        return Column(View(cls="android.widget.FrameLayout", children=[
            Text(query, resource_id="android:id/text1", size=16, max_lines=1, padding=(16, 12), clickable=True,
                 on_click=lambda: self._take_suggestion(query))]), background="#ffffff")

    def _take_suggestion(self, query: str) -> None:
        self.search_query = query
        self.show_dialog("search")
        self.phone.set_focus("markor_search")

    def _run_search(self) -> None:
        """The files and folders under the current folder whose names hold the query (as a regular expression with
        Regex search; case-insensitively unless Case sensitive), as paths from the current folder."""
        import re

        fs = self.phone.files
        query, opts = self.search_query, self.search_options
        if query.strip():
            self.search_history = [q for q in self.search_history if q != query] + [query]
        flags = 0 if opts["Case sensitive"] else re.IGNORECASE
        try:
            pattern = re.compile(query if opts["Regex search"] else re.escape(query), flags)
        except re.error:
            pattern = re.compile(re.escape(query), flags)
        found: list[str] = []
        pending = [self.cwd]
        while pending and query:
            rel = pending.pop(0)
            for name, is_folder in self.entries(rel):
                path = f"{rel}/{name}".strip("/")
                if pattern.search(name):
                    found.append(path)
                if is_folder:
                    pending.append(path)
                elif opts["Search in content"] and path not in found:
                    if pattern.search(fs.read(self.full(path)).decode("utf-8", "replace")):
                        found.append(path)
        self.search_results = found
        self.search_filter = ""
        self.phone.set_focus(None)
        self.show_dialog("search_results")
        if found:  # the list's filter field takes the focus, Gboard up (its row of digits), as on the emulator
            self.phone.set_focus("markor_search_filter")

    def _set_search_filter(self, value: str) -> None:
        self.search_filter = value

    def dialog_search_results(self) -> View:
        """"Select": a filter field (hint "Search") over the paths found (one tap opens one), or Markor's shrug
        when nothing was."""
        if not self.search_results:
            body: list[View] = [Text("     \u00af\\_(\u30c4)_/\u00af     ", resource_id="android:id/message",
                                     size=15, color="#444746", padding=(16, 8))]
        else:
            shown = [p for p in self.search_results if self.search_filter.strip().lower() in p.lower()]
            body = [EditText(self.search_filter, self._set_search_filter, hint="Search", key="markor_search_filter",
                             padding=(24, 8), input_type="visible_password")]
            body += [ListItem(path, "", (lambda p=path: self._open_found(p)), title_id="android:id/text1",
                              min_height=48) for path in shown]
        return self._dialog_column(Text("Select", resource_id="alertTitle", size=22, padding=(24, 12)), *body,
                                   buttons=[("CANCEL", self.close_dialog, "android:id/button2")])

    def _open_found(self, path: str) -> None:
        self.close_dialog()
        folder, _, name = path.rpartition("/")
        self.cwd = folder
        self.scroll.pop("main:files", None)
        self._tap_entry(name, self.phone.files.is_dir(self.full(path)))

    def dialog_sort(self) -> View:
        options = [RadioButton(self.sort_by == key, (lambda k=key: self._set_sort(k)), text=label,
                               resource_id="sort_option")
                   for key, label in (("name", "Name"), ("date", "Date modified"))]
        return Dialog("Sort by", Column(*options, padding=(16, 0)), [("Cancel", self.close_dialog)],
                      button_ids=["android:id/button2"])

    def _set_sort(self, key: str) -> None:
        self.sort_by = key
        self.close_dialog()

    def dialog_delete(self) -> View:
        names = ", ".join(self.selection)
        n = len(self.selection)
        return Dialog("Delete", f"Do you really want to delete {'this item' if n == 1 else f'these {n} items'}?"
                                f"\n{names}",
                      [("Cancel", self.close_dialog), ("OK", self._delete_selected)],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _delete_selected(self) -> None:
        base = self.full(self.cwd)
        for name in self.selection:
            try:
                self.phone.files.remove(f"{base}/{name}", recursive=True)
            except FileSystemError:
                pass
        self.selection = []
        self.close_dialog()

    def _open_rename(self) -> None:
        if len(self.selection) != 1:
            return
        self.rename_value = self.selection[0]
        self.show_dialog("rename")
        self.focus("rename_name")

    def _set_rename(self, value: str) -> None:
        self.rename_value = value

    def dialog_rename(self) -> View:
        return Dialog("Rename", EditText(self.rename_value, self._set_rename, hint="Name",
                                         resource_id="new_name", key="rename_name"),
                      [("Cancel", self.close_dialog), ("OK", self._rename)],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _rename(self) -> None:
        name = self._checked_name(self.rename_value)
        if name is None or not self.selection:
            return
        base = self.full(self.cwd)
        old = self.selection[0]
        if name != old:
            if self.phone.files.exists(f"{base}/{name}"):
                self.toast("File already exists")
                return
            self.phone.files.move(f"{base}/{old}", f"{base}/{name}")
        self.selection = []
        self.phone.set_focus(None)
        self.close_dialog()

    def _open_move(self) -> None:
        self.move_dir = self.cwd  # the folder picker opens where the selection is
        self.show_dialog("move")

    def dialog_move(self) -> View:
        """Markor's folder picker: "Move → FOLDER", home and search buttons, CANCEL and SELECT THIS FOLDER, then the
        folder's subfolders (".." first) as rows."""
        fs = self.phone.files
        base = self.full(self.move_dir)
        moving = {f"{self.cwd}/{n}".strip("/") for n in self.selection}
        # the ".." row's description on the emulator: nothing in the folder the move starts from, the notebook's
        # own path at its root, its parent's path deeper down
        up = "" if self.move_dir == self.cwd else EMULATOR_NOTEBOOK if not self.move_dir else EMULATOR_DOCUMENTS
        rows: list[View] = [self._fs_row("..", True, self._move_up, described=up)]
        for name in sorted(fs.listdir(base), key=str.lower):
            rel = f"{self.move_dir}/{name}".strip("/")
            if fs.is_dir(f"{base}/{name}") and rel not in moving:
                rows.append(self._fs_row(name, True, lambda r=rel: self._move_into(r)))
        folder = posixpath.basename(self.move_dir) if self.move_dir else posixpath.basename(EMULATOR_NOTEBOOK)
        head = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=48, padding=(16.0, 0.0),
                    children=[
                        View(cls="android.widget.ImageView", resource_id="ui__filesystem_dialog__home", width=32,
                             height=32, clickable=True, icon="H", on_click=lambda: self._move_into("")),
                        View(cls="android.widget.ImageView", resource_id="ui__filesystem_dialog__search_button",
                             weight=1, height=32, clickable=True, icon="Q",
                             on_click=lambda: self.toast("Search is not available"))])
        buttons = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=48, padding=(16.0, 0.0),
                       children=[View(weight=1, height=1, layout_only=True),
                                 Button("CANCEL", self.close_dialog, resource_id="ui__filesystem_dialog__button_cancel",
                                        cls="android.widget.TextView", background=None),
                                 Button("SELECT THIS FOLDER", self._move_here,
                                        resource_id="ui__filesystem_dialog__button_ok", cls="android.widget.TextView",
                                        background=None)])
        listing = Column(*rows[:8], resource_id="ui__filesystem_dialog__list")
        return Column(Text(f"Move \u2192 {folder}", resource_id="ui__filesystem_dialog__title", size=20,
                           padding=(24, 16)), head, buttons, listing, cls="android.widget.LinearLayout",
                      resource_id="ui__filesystem_dialog__root")

    def _move_up(self) -> None:
        self.move_dir = posixpath.dirname(self.move_dir)  # at the notebook's root it stays there

    def _move_into(self, rel: str) -> None:
        self.move_dir = rel

    def _move_here(self) -> None:
        if self.move_dir == self.cwd:
            self.toast("The items are already in this folder")
            return
        fs = self.phone.files
        src_base, dst_base = self.full(self.cwd), self.full(self.move_dir)
        for name in self.selection:
            if fs.exists(f"{dst_base}/{name}"):
                self.toast(f"{name} already exists there")
                continue
            fs.move(f"{src_base}/{name}", f"{dst_base}/{name}")
        self.selection = []
        self.close_dialog()


