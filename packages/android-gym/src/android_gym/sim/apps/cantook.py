"""Cantook (com.aldiko.android), the e-book reader AndroidLab runs its 12 ``cantook_*`` tasks on.

Where each fact comes from (no UI dump of this app is available here, so everything the sources do not
fix is marked as this model's choice):

- Package ``com.aldiko.android``: AndroidLab's ``templates/packages.py``; the app's name, Cantook, its
  ``evaluation/config/cantook.yaml``, whose tasks import an EPUB from ``/Download/Ebooks/``, delete a book,
  mark one read or unread, open a book, open a category and create a collection.
- From AndroidLab's judges (``evaluation/tasks/cantook/cantook.py``), which read the compressed XML of the last
  screen: a book's title, an opened book's text and a category's name are plain (not clickable) TextViews
  holding exactly that text; the library is the "My Books" destination, and "My Books", "Collections" and
  "Categories" are destinations a selected view stands for while they show; a collection's name is listed as
  a plain TextView on Collections; a book's info page shows its progress as "100.0%" (one decimal) and offers
  "Mark as read" or "Mark as unread" as plain texts (the judges of cantook_8 and 9 look for the page by its
  "Info" and "Read"); an import in progress lists file names ending ".epub".

This model's choices: the launcher label "Cantook"; the layout (a bottom navigation bar with My Books,
Collections and Categories; My Books listing "Recently read" and "Recently added" (three books each) and then
"All books" by title; a row per book with its title, author and progress and a "More options" button whose
menu offers Read, Info, Mark as read/unread, Add to collection and Delete; a tap on a row opening the book);
the toolbar's Search and Import; the in-app import browser starting at the shared storage and listing folders
and ``.epub`` files; the reader's pages of :data:`PAGE_PARAGRAPHS` paragraphs, a sideways swipe turning them,
a book opening at the page its progress points into; a new collection made from a dialog behind the
Collections tab's "New collection" button; a deleted book's file removed with it; every resource id.

Books are EPUB files (a zip with ``META-INF/container.xml`` and an OPF package whose ``dc:title``,
``dc:creator`` and ``dc:subject`` give the title, author and categories; the spine's XHTML ``<p>`` elements
are the text) kept under :data:`BOOKS_DIR`. The library is served to task checks through
``content://com.aldiko.android/books`` and ``content://com.aldiko.android/collections`` (a sim convenience:
the real app keeps them in its own SQLite file and exports no provider). Book columns: ``_id, title, author,
file, categories`` ("; "-separated), ``added, last_read`` (ISO "2024-05-16T10:00:00", last_read "" for never),
``progress`` ("37.8", percent with one decimal) and ``read`` (1 or 0). Insert needs ``file``, an EPUB on the
phone; title, author and categories default to its metadata. Collection columns: ``_id, name, books`` (book
ids, comma-separated); insert needs a ``name`` no other collection has.
"""

from __future__ import annotations

import datetime as dt
import io
import posixpath
import re
import zipfile
from typing import Any
from xml.etree import ElementTree

from android_gym.sim.app import App, Row, RowMatch, register_app
from android_gym.sim.files import FileSystemError
from android_gym.sim.view import (
    HORIZONTAL,
    Button,
    Column,
    Dialog,
    EditText,
    Fab,
    Image,
    ImageButton,
    ListItem,
    ScrollList,
    Text,
    Toolbar,
    View,
)

CANTOOK_PKG = "com.aldiko.android"
BOOKS_URI = "content://com.aldiko.android/books"
COLLECTIONS_URI = "content://com.aldiko.android/collections"
BOOKS_DIR = "/sdcard/Android/data/com.aldiko.android/files/Books"
"""Where the app keeps its books' EPUB files (this model's choice)."""
IMPORT_ROOT = "/sdcard"
TABS: dict[str, str] = {"books": "My Books", "collections": "Collections", "categories": "Categories"}
"""Bottom navigation destinations -> their labels (the judges' "My Books", "Collections", "Categories")."""
RECENT = 3
"""Books listed under each of "Recently read" and "Recently added"."""
PAGE_PARAGRAPHS = 6
"""Paragraphs on one page of the reader."""

BOOK_COLUMNS = ("_id", "title", "author", "file", "categories", "added", "last_read", "progress", "read")
COLLECTION_COLUMNS = ("_id", "name", "books")

_DC = "{http://purl.org/dc/elements/1.1/}"
_OPF = "{http://www.idpf.org/2007/opf}"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_XHTML = "{http://www.w3.org/1999/xhtml}"


# --- EPUB files -------------------------------------------------------------------------------------------------


def _xml_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def make_epub(title: str, author: str, paragraphs: list[str] | tuple[str, ...], subjects: tuple[str, ...] = ()
              ) -> bytes:
    """A minimal EPUB 3 file: one XHTML chapter of ``paragraphs``, the title, author and subjects in its OPF."""
    subject_xml = "".join(f"<dc:subject>{_xml_text(s)}</dc:subject>" for s in subjects)
    opf = ('<?xml version="1.0" encoding="UTF-8"?>'
           '<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="id">'
           '<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">'
           f'<dc:identifier id="id">sim-{_xml_text(title.lower().replace(" ", "-"))}</dc:identifier>'
           f"<dc:title>{_xml_text(title)}</dc:title><dc:creator>{_xml_text(author)}</dc:creator>"
           f"{subject_xml}<dc:language>en</dc:language></metadata>"
           '<manifest><item id="text" href="text.xhtml" media-type="application/xhtml+xml"/></manifest>'
           '<spine><itemref idref="text"/></spine></package>')
    body = "".join(f"<p>{_xml_text(p)}</p>" for p in paragraphs)
    chapter = ('<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml">'
               f"<head><title>{_xml_text(title)}</title></head><body>{body}</body></html>")
    container = ('<?xml version="1.0"?><container version="1.0" '
                 'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                 '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
                 "</rootfiles></container>")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as zf:
        zf.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip")
        zf.writestr("META-INF/container.xml", container, zipfile.ZIP_DEFLATED)
        zf.writestr("OEBPS/content.opf", opf, zipfile.ZIP_DEFLATED)
        zf.writestr("OEBPS/text.xhtml", chapter, zipfile.ZIP_DEFLATED)
    return out.getvalue()


def read_epub(data: bytes) -> dict[str, Any]:
    """An EPUB's ``title``, ``author``, ``subjects`` and text ``paragraphs``; ValueError when it is not one."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            container = ElementTree.fromstring(zf.read("META-INF/container.xml"))
            rootfile = container.find(f".//{_CONTAINER}rootfile")
            if rootfile is None or not rootfile.get("full-path"):
                raise ValueError("its container names no package file")
            opf_path = rootfile.get("full-path", "")
            opf = ElementTree.fromstring(zf.read(opf_path))
            metadata = opf.find(f"{_OPF}metadata")
            if metadata is None:
                raise ValueError("its package has no metadata")
            title = (metadata.findtext(f"{_DC}title") or "").strip()
            author = (metadata.findtext(f"{_DC}creator") or "").strip()
            subjects = tuple(s.text.strip() for s in metadata.findall(f"{_DC}subject") if s.text and s.text.strip())
            hrefs = {i.get("id"): i.get("href") for i in opf.iter(f"{_OPF}item")}
            paragraphs: list[str] = []
            for ref in opf.iter(f"{_OPF}itemref"):
                href = hrefs.get(ref.get("idref"))
                if not href:
                    continue
                page = ElementTree.fromstring(zf.read(posixpath.join(posixpath.dirname(opf_path), href)))
                paragraphs.extend(" ".join("".join(p.itertext()).split()) for p in page.iter(f"{_XHTML}p"))
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError) as exc:
        raise ValueError(f"not an EPUB file ({exc})") from None
    if not title:
        raise ValueError("the EPUB has no title")
    return {"title": title, "author": author, "subjects": subjects, "paragraphs": [p for p in paragraphs if p]}


# --- formatting -------------------------------------------------------------------------------------------------


def format_progress(tenths: int) -> str:
    """A progress as the app shows it: "37.8%", "100.0%", "0.0%"."""
    return f"{tenths // 10}.{tenths % 10}%"


_PROGRESS = re.compile(r"^(\d{1,3})(?:\.(\d))?%?$")


def parse_progress(text: str) -> int | None:
    """Tenths of a percent of "37.8" / "100" / "12.4%"; None unless between 0 and 100 with at most one decimal."""
    m = _PROGRESS.match(str(text).strip())
    if m is None:
        return None
    tenths = int(m.group(1)) * 10 + int(m.group(2) or 0)
    return tenths if tenths <= 1000 else None


def _iso(text: str, column: str) -> str:
    try:
        return dt.datetime.fromisoformat(text).strftime("%Y-%m-%dT%H:%M:%S")
    except ValueError:
        raise ValueError(f"Cantook {column} must be an ISO date and time (2024-05-16T10:00:00), got {text!r}") from None


def _split_categories(text: str) -> list[str]:
    return [c.strip() for c in str(text).split(";") if c.strip()]


@register_app
class CantookApp(App):
    """Cantook over plain book and collection dicts and EPUB files on the phone (see the module docstring)."""

    package = CANTOOK_PKG
    label = "Cantook"
    activity = "com.aldiko.android.view.library.LibraryActivity"
    main_page = "main"
    authorities = ("com.aldiko.android",)
    icon_color = "#e4572e"

    def setup(self) -> None:
        self.books: list[dict[str, Any]] = []
        self.collections: list[dict[str, Any]] = []
        self.next_book = 1
        self.next_collection = 1
        self.tab = "books"
        self.query = ""
        self.name_field = ""
        self.reader: dict[str, Any] = {}

    def clear_data(self) -> None:
        """``pm clear``: no books, no collections (the EPUB files stay where they are)."""
        self.books = []
        self.collections = []
        self.next_book = 1
        self.next_collection = 1

    def on_open(self) -> None:
        self.tab = "books"
        self.query = ""
        self.name_field = ""
        self.reader = {}

    def current_activity(self) -> str:
        if self.page == "reader":
            return "com.aldiko.android.reader.ReaderActivity"
        if self.page == "info":
            return "com.aldiko.android.view.info.BookInfoActivity"
        return self.activity

    # --- data ---------------------------------------------------------------------------------------------------
    def book(self, book_id: Any) -> dict[str, Any] | None:
        """The book with this id, or None."""
        return next((b for b in self.books if b["_id"] == book_id), None)

    def collection(self, collection_id: Any) -> dict[str, Any] | None:
        """The collection with this id, or None."""
        return next((c for c in self.collections if c["_id"] == collection_id), None)

    def _now(self) -> str:
        return self.phone.now().strftime("%Y-%m-%dT%H:%M:%S")

    def _add_book(self, meta: dict[str, Any], path: str, added: str) -> int:
        bid = self.next_book
        self.next_book += 1
        self.books.append({"_id": bid, "title": meta["title"], "author": meta.get("author", ""), "file": path,
                           "categories": list(meta.get("subjects", ())), "added": added, "last_read": "",
                           "progress": 0, "read": False})
        return bid

    def _remove_book(self, book_id: int) -> None:
        self.books = [b for b in self.books if b["_id"] != book_id]
        for c in self.collections:
            c["books"] = [i for i in c["books"] if i != book_id]

    def _set_read(self, book_id: int, read: bool) -> None:
        b = self.book(book_id)
        if b is not None:
            b["read"] = read
            b["progress"] = 1000 if read else 0
            self.toast(f"Marked as {'read' if read else 'unread'}")

    def recently_read(self) -> list[dict[str, Any]]:
        """Books opened at least once, the last opened first."""
        return sorted((b for b in self.books if b["last_read"]), key=lambda b: (b["last_read"], b["_id"]),
                      reverse=True)

    def recently_added(self) -> list[dict[str, Any]]:
        """Every book, the last added first."""
        return sorted(self.books, key=lambda b: (b["added"], b["_id"]), reverse=True)

    def by_title(self, books: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """Books (default: all) sorted by title."""
        return sorted(self.books if books is None else books, key=lambda b: (b["title"].lower(), b["_id"]))

    def categories(self) -> dict[str, list[dict[str, Any]]]:
        """Category name -> its books, by name."""
        out: dict[str, list[dict[str, Any]]] = {}
        for b in self.books:
            for c in b["categories"]:
                out.setdefault(c, []).append(b)
        return dict(sorted(out.items(), key=lambda kv: kv[0].lower()))

    # --- shared pieces ------------------------------------------------------------------------------------------
    def _nav(self, current: str) -> View:
        items = []
        for tab, label in TABS.items():
            items.append(View(cls="android.widget.FrameLayout", content_desc=label, resource_id=f"nav_{tab}",
                              clickable=True, focusable=True, selected=tab == current, weight=1,
                              background="#fde6df" if tab == current else None,
                              on_click=lambda t=tab: self.select_tab(t), children=[
                                  Image(icon=label[:1], width=24, height=24, resource_id="navigation_bar_item_icon"),
                                  Text(label, resource_id="navigation_bar_item_label", size=12, align="center",
                                       padding=(4, 2), max_lines=1),
                              ]))
        return View(cls="android.widget.FrameLayout", resource_id="bottom_navigation", orientation=HORIZONTAL,
                    height=72, background="#f7f2f0", children=items)

    def select_tab(self, tab: str) -> None:
        """Show a bottom-navigation destination (from any page: the stack goes back to the main page)."""
        if tab not in TABS:
            raise ValueError(f"unknown Cantook tab {tab!r}; one of {list(TABS)}")
        self.tab = tab
        self.pages = [(self.main_page, {})]
        self.dialog = None
        self.scroll.pop(f"main:{tab}", None)

    def _book_row(self, b: dict[str, Any]) -> View:
        bid = b["_id"]
        texts = Column(Text(b["title"], resource_id="book_title", size=16, bold=True, max_lines=2, padding=(0, 2)),
                       Text(b["author"], resource_id="book_author", size=14, color="#5f6368", max_lines=1,
                            padding=(0, 2)) if b["author"] else None,
                       cls="android.widget.LinearLayout", weight=1, padding=(12, 8))
        return View(cls="android.widget.LinearLayout", resource_id="book_row", orientation=HORIZONTAL,
                    clickable=True, focusable=True, long_clickable=True, min_height=76, padding=(12.0, 0.0),
                    on_click=lambda: self.open_book(bid), on_long_click=lambda: self.show_dialog("book_menu",
                                                                                                   book_id=bid),
                    children=[Image(icon="B", width=44, height=60, resource_id="book_cover"), texts,
                              Text(format_progress(b["progress"]), resource_id="book_progress", size=13,
                                   color="#5f6368", padding=(4, 0), max_lines=1),
                              ImageButton("More options", lambda: self.show_dialog("book_menu", book_id=bid),
                                          resource_id="book_more", icon=":")])

    @staticmethod
    def _header(text: str) -> View:
        return Text(text, resource_id="section_title", size=14, bold=True, color="#e4572e", padding=(16, 10))

    # --- main: the bottom navigation's three destinations ----------------------------------------------------
    def build_main(self) -> View:
        tab = self.tab if self.tab in TABS else "books"
        actions: list[View] = []
        if tab == "books":
            actions = [ImageButton("Search", self.open_search, resource_id="menu_search", icon="?"),
                       ImageButton("Import", self.open_import, resource_id="menu_import", icon="+")]
        body = getattr(self, f"_tab_{tab}")()
        return Column(Toolbar(TABS[tab], resource_id="toolbar", title_id="toolbar_title", actions=actions),
                      body, self._nav(tab), cls="android.widget.LinearLayout", resource_id="library_layout",
                      weight=1)

    def _tab_books(self) -> View:
        if not self.books:
            return Column(Text("Your library is empty", resource_id="empty_title", align="center", size=18,
                               padding=(24, 32)),
                          Button("Import books", self.open_import, resource_id="empty_import"),
                          resource_id="empty_view", weight=1)
        rows: list[View] = []
        read = self.recently_read()[:RECENT]
        if read:
            rows.append(self._header("Recently read"))
            rows.extend(self._book_row(b) for b in read)
        rows.append(self._header("Recently added"))
        rows.extend(self._book_row(b) for b in self.recently_added()[:RECENT])
        rows.append(self._header(f"All books ({len(self.books)})"))
        rows.extend(self._book_row(b) for b in self.by_title())
        return ScrollList(rows, "main:books", resource_id="library_list")

    def _tab_collections(self) -> View:
        rows: list[View] = [
            ListItem(c["name"], f"{len(c['books'])} book{'s' if len(c['books']) != 1 else ''}",
                     lambda i=c["_id"]: self.push("collection", collection_id=i), resource_id="collection_row",
                     title_id="collection_name", subtitle_id="collection_count", icon="C")
            for c in sorted(self.collections, key=lambda c: (c["name"].lower(), c["_id"]))]
        if not rows:
            rows = [Text("No collections yet", resource_id="empty_title", align="center", color="#5f6368",
                         padding=(24, 32))]
        return Column(ScrollList(rows, "main:collections", resource_id="collections_list"),
                      Fab("New collection", self.new_collection, resource_id="fab_new_collection"),
                      cls="android.widget.RelativeLayout", weight=1)

    def _tab_categories(self) -> View:
        rows: list[View] = [
            ListItem(name, f"{len(books)} book{'s' if len(books) != 1 else ''}",
                     lambda n=name: self.push("category", category=n), resource_id="category_row",
                     title_id="category_name", subtitle_id="category_count", icon="#")
            for name, books in self.categories().items()]
        if not rows:
            rows = [Text("No categories", resource_id="empty_title", align="center", color="#5f6368",
                         padding=(24, 32))]
        return ScrollList(rows, "main:categories", resource_id="categories_list")

    # --- a category, a collection -------------------------------------------------------------------------------
    def _shelf(self, title: str, books: list[dict[str, Any]], tab: str, key: str, empty: str) -> View:
        rows: list[View] = [self._book_row(b) for b in self.by_title(books)]
        if not rows:
            rows = [Text(empty, resource_id="empty_title", align="center", color="#5f6368", padding=(24, 32))]
        return Column(Toolbar(title, on_back=self.pop, resource_id="toolbar", title_id="toolbar_title"),
                      ScrollList(rows, key, resource_id="shelf_list"), self._nav(tab),
                      cls="android.widget.LinearLayout", resource_id="shelf_layout", weight=1)

    def build_category(self, category: str) -> View:
        return self._shelf(category, self.categories().get(category, []), "categories", "category:books",
                           "No books in this category")

    def build_collection(self, collection_id: int) -> View:
        c = self.collection(collection_id)
        if c is None:
            return self._shelf("", [], "collections", "collection:books", "This collection no longer exists")
        books = [b for b in (self.book(i) for i in c["books"]) if b is not None]
        return self._shelf(c["name"], books, "collections", "collection:books", "No books in this collection")

    # --- collections --------------------------------------------------------------------------------------------
    def new_collection(self) -> None:
        """The "New collection" dialog, its name field focused."""
        self.name_field = ""
        self.show_dialog("new_collection")
        self.focus("collection_name_input")

    def _set_name(self, value: str) -> None:
        self.name_field = value

    def dialog_new_collection(self) -> View:
        field = EditText(self.name_field, self._set_name, hint="Collection name", resource_id="collection_name_input",
                         on_submit=self.create_collection, input_type="sentence")
        return Dialog("New collection", Column(field, padding=(24, 8)),
                      [("Cancel", self._cancel_name), ("Create", self.create_collection)],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _cancel_name(self) -> None:
        self.name_field = ""
        self.phone.set_focus(None)
        self.close_dialog()

    def create_collection(self) -> None:
        """Create a collection named as typed; a toast says why not when the name is empty or taken."""
        name = " ".join(self.name_field.split())
        if not name:
            self.toast("Enter a name for the collection")
            return
        if any(c["name"].lower() == name.lower() for c in self.collections):
            self.toast(f"A collection named {name} already exists")
            return
        self._new_collection(name, [])
        self._cancel_name()

    def _new_collection(self, name: str, books: list[int]) -> int:
        cid = self.next_collection
        self.next_collection += 1
        self.collections.append({"_id": cid, "name": name, "books": list(books)})
        return cid

    # --- a book's menu, its info page, delete -------------------------------------------------------------------
    def dialog_book_menu(self, book_id: int) -> View:
        b = self.book(book_id)
        if b is None:
            return Dialog("", "This book is no longer in your library", [("OK", self.close_dialog)])
        entries = (("Read", lambda: self.open_book(book_id)),
                   ("Info", lambda: self.open_info(book_id)),
                   ("Mark as unread" if b["read"] else "Mark as read", lambda: self._menu_mark(book_id)),
                   ("Add to collection", lambda: self.show_dialog("add_to_collection", book_id=book_id)),
                   ("Delete", lambda: self.show_dialog("delete", book_id=book_id)))
        items = [ListItem(label, "", cb, resource_id="menu_item", title_id="menu_item_title", min_height=48)
                 for label, cb in entries]
        return Dialog(b["title"], Column(*items, resource_id="book_menu"))

    def _menu_mark(self, book_id: int) -> None:
        b = self.book(book_id)
        self.close_dialog()
        if b is not None:
            self._set_read(book_id, not b["read"])

    def open_info(self, book_id: int) -> None:
        """The book's info page."""
        self.close_dialog()
        if self.book(book_id) is not None:
            self.push("info", book_id=book_id)

    def build_info(self, book_id: int) -> View:
        b = self.book(book_id)
        bar = Toolbar("Info", on_back=self.pop, resource_id="toolbar", title_id="toolbar_title")
        if b is None:
            return Column(bar, Text("This book is no longer in your library", padding=(24, 32)))
        details: list[View | None] = [
            Image(icon="B", width=120, height=168, resource_id="info_cover"),
            Text(b["title"], resource_id="info_title", size=22, bold=True, padding=(16, 8)),
            Text(b["author"], resource_id="info_author", size=16, color="#5f6368") if b["author"] else None,
            Text(format_progress(b["progress"]), resource_id="info_progress", size=16, padding=(16, 8)),
            Button("Read", lambda: self.open_book(book_id), resource_id="info_read"),
            ListItem("Mark as unread" if b["read"] else "Mark as read", "",
                     lambda: self._set_read(book_id, not b["read"]), resource_id="info_mark",
                     title_id="info_mark_title", icon="v"),
            ListItem("Add to collection", "", lambda: self.show_dialog("add_to_collection", book_id=book_id),
                     resource_id="info_collection", title_id="info_collection_title", icon="C"),
            ListItem("Delete", "", lambda: self.show_dialog("delete", book_id=book_id), resource_id="info_delete",
                     title_id="info_delete_title", icon="D"),
        ]
        if b["categories"]:
            details.append(Text("Categories: " + ", ".join(b["categories"]), resource_id="info_categories", size=14,
                                color="#5f6368", padding=(16, 8)))
        return Column(bar, ScrollList([d for d in details if d is not None], "info:details",
                                      resource_id="info_scroll", cls="android.widget.ScrollView"),
                      cls="android.widget.LinearLayout", resource_id="info_layout", weight=1)

    def dialog_add_to_collection(self, book_id: int) -> View:
        rows = [View(cls="android.widget.CheckedTextView", text=c["name"], resource_id="collection_option",
                     clickable=True, focusable=True, checkable=True, checked=book_id in c["books"], height=48,
                     padding=(24.0, 12.0), on_click=lambda i=c["_id"]: self._toggle_in(i, book_id))
                for c in sorted(self.collections, key=lambda c: (c["name"].lower(), c["_id"]))]
        if not rows:
            rows = [Text("No collections yet: create one on Collections", padding=(24, 8), color="#5f6368")]
        return Dialog("Add to collection", Column(*rows, padding=(0, 0)), [("Done", self.close_dialog)],
                      button_ids=["android:id/button1"])

    def _toggle_in(self, collection_id: int, book_id: int) -> None:
        c = self.collection(collection_id)
        if c is None or self.book(book_id) is None:
            return
        if book_id in c["books"]:
            c["books"].remove(book_id)
        else:
            c["books"].append(book_id)

    def dialog_delete(self, book_id: int) -> View:
        b = self.book(book_id) or {"title": "this book"}
        return Dialog("Delete book", f"Delete {b['title']} from your library?",
                      [("Cancel", self.close_dialog), ("Delete", lambda: self.delete_book(book_id))],
                      button_ids=["android:id/button2", "android:id/button1"])

    def delete_book(self, book_id: int) -> None:
        """Remove the book and its file; an info page or reader on it closes."""
        b = self.book(book_id)
        self.close_dialog()
        if b is None:
            return
        if b["file"].startswith(BOOKS_DIR + "/") and self.phone.files.is_file(b["file"]):
            self.phone.files.remove(b["file"])
        self._remove_book(book_id)
        while len(self.pages) > 1 and self.page_args.get("book_id") == book_id:
            self.pop()
        self.toast("Book deleted")

    # --- search -------------------------------------------------------------------------------------------------
    def open_search(self) -> None:
        """The search page, its field focused."""
        self.query = ""
        self.push("search")
        self.focus("search_input")

    def _set_query(self, value: str) -> None:
        self.query = value

    def build_search(self) -> View:
        field = EditText(self.query, self._set_query, hint="Search titles and authors", resource_id="search_input",
                         weight=1, background=None)
        bar = View(cls="android.view.ViewGroup", resource_id="toolbar", orientation=HORIZONTAL, height=64,
                   padding=(4.0, 8.0), background="#f8fafd",
                   children=[ImageButton("Navigate up", self.pop, icon="<"), field])
        q = " ".join(self.query.lower().split())
        rows: list[View] = []
        if q:
            found = [b for b in self.by_title() if q in b["title"].lower() or q in b["author"].lower()]
            rows = [self._book_row(b) for b in found] or [
                Text("No books found", resource_id="empty_title", align="center", color="#5f6368", padding=(24, 32))]
        return Column(bar, ScrollList(rows, "search:results", resource_id="search_results"),
                      cls="android.widget.LinearLayout", resource_id="search_layout", weight=1)

    # --- import -------------------------------------------------------------------------------------------------
    def open_import(self) -> None:
        """The import browser at the shared storage."""
        self.push("import", folder=IMPORT_ROOT)

    def build_import(self, folder: str) -> View:
        files = self.phone.files
        if not files.is_dir(folder):
            folder = IMPORT_ROOT
        names = sorted((n for n in files.listdir(folder) if not n.startswith(".")), key=str.lower)
        subfolders = [n for n in names if files.is_dir(f"{folder}/{n}")]
        epubs = [n for n in names if files.is_file(f"{folder}/{n}") and n.lower().endswith(".epub")]
        rows: list[View] = [ListItem(n, "", lambda p=f"{folder}/{n}": self.replace("import", folder=p),
                                     resource_id="folder_row", title_id="file_name", icon="D", min_height=52)
                            for n in subfolders]
        rows += [ListItem(n, "", lambda p=f"{folder}/{n}": self.import_book(p), resource_id="file_row",
                          title_id="file_name", icon="E", min_height=52) for n in epubs]
        if not rows:
            rows = [Text("No folders or EPUB files here", resource_id="empty_title", color="#5f6368",
                         padding=(24, 16))]
        up: list[View] = []
        if folder != IMPORT_ROOT:
            parent = posixpath.dirname(folder)
            up = [ListItem("..", "", lambda: self.replace("import", folder=parent), resource_id="folder_up",
                           title_id="file_name", icon="^", min_height=52)]
        shown = "Internal storage" + folder[len(IMPORT_ROOT):]
        return Column(Toolbar("Import", on_back=self.pop, resource_id="toolbar", title_id="toolbar_title"),
                      Text(shown, resource_id="import_path", size=14, color="#5f6368", padding=(16, 8)),
                      ScrollList(up + rows, "import:files", resource_id="import_list"),
                      cls="android.widget.LinearLayout", resource_id="import_layout", weight=1)

    def import_book(self, path: str) -> None:
        """Copy an EPUB into the library (back to My Books); a toast says why not when it cannot be read or is in."""
        try:
            data = self.phone.files.read(path)
            meta = read_epub(data)
        except (FileSystemError, ValueError):
            self.toast(f"Could not import {posixpath.basename(path)}: not a valid EPUB file")
            return
        if any(b["title"] == meta["title"] and b["author"] == meta["author"] for b in self.books):
            self.toast(f"{meta['title']} is already in your library")
            return
        target = self._free_path(posixpath.basename(path))
        self.phone.files.write(target, data, self.phone.clock_ms)
        self._add_book(meta, target, self._now())
        self.tab = "books"
        self.pages = [(self.main_page, {})]
        self.scroll.pop("main:books", None)
        self.toast(f"{meta['title']} added to My Books")

    def _free_path(self, name: str) -> str:
        stem, ext = posixpath.splitext(name)
        path, n = f"{BOOKS_DIR}/{name}", 1
        while self.phone.files.exists(path):
            n += 1
            path = f"{BOOKS_DIR}/{stem} ({n}){ext}"
        return path

    # --- the reader ---------------------------------------------------------------------------------------------
    def open_book(self, book_id: int) -> None:
        """Open the book in the reader at the page its progress points into (it becomes the last read)."""
        self.close_dialog()
        b = self.book(book_id)
        if b is None:
            return
        try:
            paragraphs = read_epub(self.phone.files.read(b["file"]))["paragraphs"]
        except (FileSystemError, ValueError):
            self.toast(f"Could not open {b['title']}: its file is missing or damaged")
            return
        pages = max(1, -(-len(paragraphs) // PAGE_PARAGRAPHS))
        page = min(b["progress"] * pages // 1000, pages - 1)
        self.reader = {"book_id": book_id, "paragraphs": paragraphs, "page": page}
        b["last_read"] = self._now()
        self.push("reader", book_id=book_id)

    def _pages(self) -> int:
        return max(1, -(-len(self.reader.get("paragraphs", [])) // PAGE_PARAGRAPHS))

    def turn(self, step: int) -> None:
        """Turn ``step`` pages; the book's progress becomes the new page's start (the last page: 100.0%)."""
        b = self.book(self.reader.get("book_id"))
        pages = self._pages()
        page = self.reader.get("page", 0) + step
        if b is None or not 0 <= page < pages:
            return
        self.reader["page"] = page
        b["progress"] = 1000 if page == pages - 1 else page * 1000 // pages
        b["read"] = b["progress"] == 1000
        self.scroll.pop("reader:text", None)

    def on_swipe(self, direction: str) -> bool:
        """A sideways swipe in the reader turns the page (finger moving left: the next one)."""
        if self.page != "reader" or self.dialog is not None or direction not in ("left", "right"):
            return False
        self.turn(1 if direction == "left" else -1)
        return True

    def build_reader(self, book_id: int) -> View:
        b = self.book(book_id)
        if b is None or self.reader.get("book_id") != book_id:
            return Column(Toolbar("", on_back=self.pop), Text("This book is no longer in your library",
                                                              padding=(24, 32)))
        page = self.reader["page"]
        start = page * PAGE_PARAGRAPHS
        text = [Text(p, resource_id="reader_text", size=17, padding=(20, 6))
                for p in self.reader["paragraphs"][start:start + PAGE_PARAGRAPHS]]
        bar = View(cls="android.view.ViewGroup", resource_id="reader_toolbar", orientation=HORIZONTAL, height=56,
                   padding=(4.0, 4.0), background="#fbf8f3",
                   children=[ImageButton("Navigate up", self.pop, icon="<"),
                             Text(b["title"], resource_id="reader_title", size=16, weight=1, max_lines=1,
                                  padding=(12, 12))])
        footer = View(cls="android.widget.LinearLayout", resource_id="reader_footer", orientation=HORIZONTAL,
                      height=48, padding=(8.0, 0.0), children=[
                          ImageButton("Previous page", lambda: self.turn(-1), resource_id="reader_previous",
                                      icon="<", enabled=page > 0),
                          Text(f"Page {page + 1} of {self._pages()}", resource_id="reader_page", size=13,
                               align="center", weight=1, padding=(8, 14), color="#5f6368"),
                          Text(format_progress(b["progress"]), resource_id="reader_progress", size=13,
                               padding=(4, 14), color="#5f6368", width=64, max_lines=1, align="center"),
                          ImageButton("Next page", lambda: self.turn(1), resource_id="reader_next", icon=">",
                                      enabled=page < self._pages() - 1),
                      ])
        return Column(bar, ScrollList(text, "reader:text", resource_id="reader_view"), footer,
                      cls="android.widget.LinearLayout", resource_id="reader_layout", weight=1,
                      background="#fbf8f3")

    # --- content provider (a sim window onto the app's data) ----------------------------------------------------
    @staticmethod
    def _table(uri: str) -> str:
        rest = uri.split("://", 1)[-1]
        path = rest.split("/", 1)[1] if "/" in rest else ""
        table = path.split("/")[0]
        if table not in ("books", "collections"):
            raise ValueError(f"unknown Cantook uri {uri!r}; use {BOOKS_URI} or {COLLECTIONS_URI}")
        return table

    @staticmethod
    def _book_row_of(b: dict[str, Any]) -> Row:
        return {"_id": b["_id"], "title": b["title"], "author": b["author"], "file": b["file"],
                "categories": "; ".join(b["categories"]), "added": b["added"], "last_read": b["last_read"],
                "progress": format_progress(b["progress"])[:-1], "read": 1 if b["read"] else 0}

    def content_query(self, uri: str) -> list[Row]:
        if self._table(uri) == "books":
            return [self._book_row_of(b) for b in sorted(self.books, key=lambda b: b["_id"])]
        return [{"_id": c["_id"], "name": c["name"], "books": ",".join(str(i) for i in c["books"])}
                for c in sorted(self.collections, key=lambda c: c["_id"])]

    def _book_value(self, key: str, value: Any) -> Any:
        """A book column's value as stored, or a ValueError naming what is wrong."""
        text = "" if value is None else str(value)
        if key == "title":
            if not text.strip():
                raise ValueError("a Cantook book needs a title")
            return text.strip()
        if key == "author":
            return text.strip()
        if key == "categories":
            return _split_categories(text)
        if key == "added":
            return _iso(text, key)
        if key == "last_read":
            return _iso(text, key) if text.strip() else ""
        if key == "progress":
            tenths = parse_progress(text)
            if tenths is None:
                raise ValueError(f"Cantook progress is a percent from 0 to 100 with one decimal, got {text!r}")
            return tenths
        if key == "read":
            if text not in ("0", "1"):
                raise ValueError(f"Cantook read is 1 or 0, got {text!r}")
            return text == "1"
        raise ValueError(f"unknown Cantook book column {key!r}; known: {list(BOOK_COLUMNS)}")

    def _collection_books(self, text: str) -> list[int]:
        ids: list[int] = []
        for part in (p.strip() for p in str(text or "").split(",")):
            if not part:
                continue
            if not part.isdigit() or self.book(int(part)) is None:
                raise ValueError(f"Cantook collection books are ids of books in the library, got {part!r}")
            ids.append(int(part))
        return ids

    def _collection_name(self, value: Any, other_than: Any = None) -> str:
        name = " ".join(str(value or "").split())
        if not name:
            raise ValueError("a Cantook collection needs a name")
        if any(c["name"].lower() == name.lower() and c["_id"] != other_than for c in self.collections):
            raise ValueError(f"a Cantook collection named {name!r} already exists")
        return name

    def content_insert(self, uri: str, values: Row) -> str:
        if self._table(uri) == "collections":
            unknown = set(values) - set(COLLECTION_COLUMNS[1:])
            if unknown:
                raise ValueError(f"unknown Cantook collection column(s) {sorted(unknown)}; known: name, books")
            cid = self._new_collection(self._collection_name(values.get("name")),
                                       self._collection_books(values.get("books", "")))
            return f"{COLLECTIONS_URI}/{cid}"
        unknown = set(values) - set(BOOK_COLUMNS[1:])
        if unknown:
            raise ValueError(f"unknown Cantook book column(s) {sorted(unknown)}; known: {list(BOOK_COLUMNS[1:])}")
        path = str(values.get("file") or "")
        if not path:
            raise ValueError("a Cantook book needs the file of its EPUB")
        try:
            meta = read_epub(self.phone.files.read(path))
        except FileSystemError:
            raise ValueError(f"no EPUB file at {path!r}") from None
        except ValueError as exc:
            raise ValueError(f"{path!r} is {exc}") from None
        checked = {k: self._book_value(k, v) for k, v in values.items() if k != "file"}
        bid = self._add_book(meta, self.phone.files.norm(path), checked.pop("added", None) or self._now())
        self.book(bid).update(checked)
        return f"{BOOKS_URI}/{bid}"

    def content_update(self, uri: str, values: Row, match: RowMatch) -> int:
        table = self._table(uri)
        ids = {r["_id"] for r in self.content_query(uri) if match(r)}
        if table == "collections":
            unknown = set(values) - set(COLLECTION_COLUMNS[1:])
            if unknown:
                raise ValueError(f"Cantook collections update name and books, not {sorted(unknown)}")
            books = self._collection_books(values["books"]) if "books" in values else None
            for c in self.collections:
                if c["_id"] in ids:
                    if "name" in values:
                        c["name"] = self._collection_name(values["name"], c["_id"])
                    if books is not None:
                        c["books"] = list(books)
            return len(ids)
        if "file" in values or "_id" in values:
            raise ValueError("a Cantook book's file and id cannot change")
        checked = {k: self._book_value(k, v) for k, v in values.items()}
        for b in self.books:
            if b["_id"] in ids:
                b.update(checked)
        return len(ids)

    def content_delete(self, uri: str, match: RowMatch) -> int:
        ids = {r["_id"] for r in self.content_query(uri) if match(r)}
        if self._table(uri) == "collections":
            self.collections = [c for c in self.collections if c["_id"] not in ids]
        else:
            for bid in ids:
                self._remove_book(bid)
        return len(ids)
