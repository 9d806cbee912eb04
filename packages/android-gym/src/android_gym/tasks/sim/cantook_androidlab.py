"""AndroidLab's 12 Cantook tasks (``cantook_1`` to ``cantook_12``) re-created on the simulated Cantook.

The task texts are AndroidLab's, verbatim (cantook_6 spells "Advantures"; the book it imports is titled "Alice's
Adventures in Wonderland", the title its judge looks for). Every task starts from the home screen, Cantook
stopped, the phone's clock at Thursday, May 16 2024, 10:00, and the same library, :data:`LAB_BOOKS` (EPUB files
under the app's folder, :mod:`android_gym.sim.apps.cantook`), whose order and metadata make the answers
AndroidLab's judges expect true: no Pride and Prejudice (cantook_1: "No"); The Scarlet Letter read last, then
Oliver Twist (cantook_2; cantook_9 marks Oliver Twist, finished, as unread); Moby Dick added last, then Hamlet by
William Shakespeare (cantook_3); two books by Charles Dickens (cantook_4); Romeo and Juliet at 37.8% (cantook_5),
opening on the page of Mercutio's "Thou desir'st me to stop in my tale against the haire" (cantook_10), the line
cantook_10's judge looks for; the category Tragedies holding Hamlet and Romeo and Juliet (cantook_11); the one
collection "To Read", so that "Favorite" is new (cantook_12). The file to import, ``alices-adventures-in-
wonderland.epub``, waits in ``/sdcard/Download/Ebooks/`` beside another book (cantook_6). Which other books, the
dates, the collection and the books' text (short public-domain excerpts) are this model's choice.

Checks read the app's books and collections (``content query --uri content://com.aldiko.android/books`` and
``.../collections``): every starting book must still be there as it was (title, author, categories, date added,
progress, read) except the one the task changes, and nothing else added. Opening a book only moves its "last
read", which the checks leave aside except for cantook_10 (Romeo and Juliet must be the last read, since the task
began, and the reader in front). cantook_11 changes nothing stored: its check wants the library as it was and
the category's page in front (the focused activity is Cantook's library, its title "Tragedies"). Query tasks
compare the answer with what the library gives, the library unchanged.
"""

from __future__ import annotations

import random
import re
from typing import Any, ClassVar

from android_gym.actions import Finished, OpenApp
from android_gym.tasks.base import ExpertGenerator, Task, TaskError, register_task
from android_gym.tasks.device_state import (
    content_delete,
    content_insert,
    content_query,
    force_stop,
    foreground_activity,
    go_home,
    normalize_answer,
    screen_nodes,
)
from android_gym.tasks.expert import (
    ExpertStuck,
    find_all,
    id_is,
    scroll_to,
    tap,
    tap_id,
    tap_text,
    type_into,
    within,
)
from android_gym.tasks.sim.vlc import push_bytes
from android_gym.tasks.suites import SUITES_LAB

CANTOOK_PACKAGE = "com.aldiko.android"
CANTOOK_APP = "Cantook"
BOOKS_URI = "content://com.aldiko.android/books"
COLLECTIONS_URI = "content://com.aldiko.android/collections"
BOOKS_DIR = "/sdcard/Android/data/com.aldiko.android/files/Books"
EBOOKS_DIR = "/sdcard/Download/Ebooks"
BOOK_FIELDS = ("_id", "title", "author", "file", "categories", "added", "last_read", "progress", "read")
KEPT_FIELDS = ("title", "author", "categories", "added", "progress", "read")
"""What a book must keep unless the task changes it (its "last read" moves whenever it is opened)."""
LIBRARY_ACTIVITY = "com.aldiko.android.view.library.LibraryActivity"
READER_ACTIVITY = "com.aldiko.android.reader.ReaderActivity"
PHONE_DATE = "051610002024.00"
"""``date`` argument setting the phone's clock to May 16 2024, 10:00 (a Thursday)."""
STARTED = "2024-05-16T10:00:00"


def _book(title: str, author: str, categories: str, added: str, last_read: str, progress: str, read: str,
          file: str, text: tuple[str, ...]) -> dict[str, Any]:
    return {"title": title, "author": author, "categories": categories, "added": added, "last_read": last_read,
            "progress": progress, "read": read, "file": file, "text": text}


ROMEO_TEXT = (
    "The Tragedie of Romeo and Juliet",
    "Actus Primus. Scoena Prima.",
    "Enter Sampson and Gregory, with Swords and Bucklers, of the House of Capulet.",
    "Sampson. Gregory: A my word wee'l not carry coales.",
    "Greg. No, for then we should be Colliars.",
    "Samp. I meane, if we be in choller, wee'l draw.",
    "Ben. Stop there, stop there.",
    "Mer. Thou desir'st me to stop in my tale against the haire",
    "Ben. Thou would'st else haue made thy tale large.",
    "Mer. O thou art deceiu'd, I would haue made it short, for I was come to the whole depth of my tale, and "
    "meant indeed to occupie the argument no longer.",
    "Enter Nurse and her man.",
    "Rom. Heere's goodly geare.",
    "Mer. A saile, a saile.",
    "Ben. Two, two: a Shirt and a Smocke.",
    "Nur. Peter?",
    "Peter. Anon.",
    "Nur. My Fan Peter?",
    "Mer. Good Peter to hide her face, for her Fans the fairer face.",
)
"""Romeo and Juliet's excerpt: three pages, at 37.8% the reader opens on the second, Mercutio's line on it."""
ROMEO_LINE = "Mer. Thou desir'st me to stop in my tale against the haire"

LAB_BOOKS: tuple[dict[str, Any], ...] = (
    _book("The Scarlet Letter", "Nathaniel Hawthorne", "Fiction; Classics", "2024-04-02T20:10:00",
          "2024-05-15T21:30:00", "12.4", "0", "the-scarlet-letter.epub",
          ("The Scarlet Letter", "I. The Prison-Door",
           "A throng of bearded men, in sad-coloured garments and grey steeple-crowned hats, intermixed with women, "
           "some wearing hoods, and others bareheaded, was assembled in front of a wooden edifice, the door of "
           "which was heavily timbered with oak, and studded with iron spikes.")),
    _book("Oliver Twist", "Charles Dickens", "Fiction; Classics", "2024-03-18T19:00:00", "2024-05-12T22:05:00", "100.0",
          "1", "oliver-twist.epub",
          ("Oliver Twist", "Chapter I",
           "Among other public buildings in a certain town, which for many reasons it will be prudent to refrain "
           "from mentioning, there is one anciently common to most towns, great or small: to wit, a workhouse.")),
    _book("Romeo and Juliet", "William Shakespeare", "Tragedies; Drama", "2024-04-20T18:45:00", "2024-05-09T20:40:00",
          "37.8", "0", "romeo-and-juliet.epub", ROMEO_TEXT),
    _book("A Tale of Two Cities", "Charles Dickens", "Fiction; Historical fiction", "2024-03-10T09:30:00",
          "2024-04-28T21:15:00", "54.0", "0", "a-tale-of-two-cities.epub",
          ("A Tale of Two Cities", "Book the First: Recalled to Life",
           "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of "
           "foolishness.")),
    _book("Don Quixote", "Miguel de Cervantes", "Fiction; Adventure", "2024-05-06T12:00:00", "", "0.0", "0",
          "don-quixote.epub",
          ("Don Quixote", "Chapter I",
           "In a village of La Mancha, the name of which I have no desire to call to mind, there lived not long "
           "since one of those gentlemen that keep a lance in the lance-rack, an old buckler, a lean hack, and a "
           "greyhound for coursing.")),
    _book("Hamlet", "William Shakespeare", "Tragedies; Drama", "2024-05-10T08:20:00", "", "0.0", "0", "hamlet.epub",
          ("The Tragedie of Hamlet", "Actus Primus. Scoena Prima.",
           "Enter Barnardo and Francisco two Centinels.", "Barnardo. Who's there?",
           "Fran. Nay answer me: Stand & vnfold your selfe.", "Bar. Long liue the King.")),
    _book("Moby Dick", "Herman Melville", "Fiction; Adventure", "2024-05-14T19:40:00", "", "0.0", "0",
          "moby-dick.epub",
          ("Moby Dick", "Chapter 1. Loomings.",
           "Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my purse, "
           "and nothing particular to interest me on shore, I thought I would sail about a little and see the "
           "watery part of the world.")),
)
"""The library every AndroidLab Cantook task starts with (``categories`` "; "-separated, ``file`` under
:data:`BOOKS_DIR`)."""

LAB_COLLECTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (("To Read", ("Moby Dick", "Don Quixote")),)
"""The starting collections: name and the titles in it."""

ALICE = {"title": "Alice's Adventures in Wonderland", "author": "Lewis Carroll", "subjects": ("Children's stories",),
         "file": "alices-adventures-in-wonderland.epub",
         "text": ("Alice's Adventures in Wonderland", "Chapter I. Down the Rabbit-Hole",
                  "Alice was beginning to get very tired of sitting by her sister on the bank, and of having nothing "
                  "to do: once or twice she had peeped into the book her sister was reading, but it had no pictures "
                  "or conversations in it, 'and what is the use of a book,' thought Alice 'without pictures or "
                  "conversations?'")}
"""The book cantook_6 imports from :data:`EBOOKS_DIR`."""
OTHER_EBOOK = {"title": "The Time Machine", "author": "H. G. Wells", "subjects": ("Science fiction",),
               "file": "the-time-machine.epub",
               "text": ("The Time Machine", "I",
                        "The Time Traveller (for so it will be convenient to speak of him) was expounding a "
                        "recondite matter to us.")}
"""A second EPUB beside it, not to be imported."""


# --- device helpers ---------------------------------------------------------------------------------------


def read_books(device: Any) -> list[dict[str, str]]:
    """Every Cantook book as a dict of strings ("" for missing text)."""
    rows = content_query(device, BOOKS_URI, BOOK_FIELDS)
    return [{k: (r[k] or "") for k in BOOK_FIELDS} for r in rows]


def read_collections(device: Any) -> list[dict[str, str]]:
    """Every Cantook collection (``_id, name, books``) as a dict of strings."""
    rows = content_query(device, COLLECTIONS_URI, ("_id", "name", "books"))
    return [{k: (r[k] or "") for k in ("_id", "name", "books")} for r in rows]


def _epub(book: dict[str, Any]) -> bytes:
    from android_gym.sim.apps.cantook import make_epub

    subjects = tuple(book.get("subjects") or (c.strip() for c in book["categories"].split(";") if c.strip()))
    return make_epub(book["title"], book["author"], list(book["text"]), subjects)


def reset_cantook(device: Any) -> None:
    """Start state: Cantook stopped, the home screen, the clock at May 16 2024, :data:`LAB_BOOKS` and
    :data:`LAB_COLLECTIONS`, the two EPUBs in :data:`EBOOKS_DIR`."""
    go_home(device, CANTOOK_PACKAGE)
    device.shell(f"date {PHONE_DATE}")
    content_delete(device, COLLECTIONS_URI)
    content_delete(device, BOOKS_URI)
    device.shell(f"rm -rf {BOOKS_DIR} {EBOOKS_DIR}; mkdir -p {BOOKS_DIR} {EBOOKS_DIR}")
    for b in LAB_BOOKS:
        path = f"{BOOKS_DIR}/{b['file']}"
        push_bytes(device, path, _epub(b))
        content_insert(device, BOOKS_URI, [("file", "s", path)] + [(k, "s", b[k]) for k in KEPT_FIELDS if k != "read"]
                       + [("last_read", "s", b["last_read"]), ("read", "s", b["read"])])
    ids = {r["title"]: r["_id"] for r in read_books(device)}
    for name, titles in LAB_COLLECTIONS:
        content_insert(device, COLLECTIONS_URI, [("name", "s", name), ("books", "s", ",".join(ids[t] for t in titles))])
    for extra in (ALICE, OTHER_EBOOK):
        push_bytes(device, f"{EBOOKS_DIR}/{extra['file']}", _epub(extra))
    if len(read_books(device)) != len(LAB_BOOKS):
        raise TaskError("could not set up Cantook's library")


def _kept(row: dict[str, str]) -> tuple[str, ...]:
    return tuple(row[k] for k in KEPT_FIELDS)


def _seed_row(book: dict[str, Any]) -> tuple[str, ...]:
    return tuple(book[k] for k in KEPT_FIELDS)


# --- tasks -------------------------------------------------------------------------------------------------


class _LabCantook(Task):
    """An AndroidLab Cantook task: no parameters, Cantook stopped, :data:`LAB_BOOKS`, May 16 2024."""

    app_names = ("cantook",)
    suites = SUITES_LAB
    difficulty = "medium"
    complexity = 2.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {}

    def initialize(self, device: Any) -> None:
        reset_cantook(device)

    def teardown(self, device: Any) -> None:
        force_stop(device, CANTOOK_PACKAGE)

    @staticmethod
    def library_unchanged_but(device: Any, changed: str | None) -> list[dict[str, str]] | None:
        """The books not in the starting library, when every starting book but ``changed`` (a title) is still
        there as it was; None otherwise."""
        rows = read_books(device)
        remaining = [_kept(r) for r in rows]
        for b in LAB_BOOKS:
            if b["title"] == changed:
                continue
            if _seed_row(b) not in remaining:
                return None
            remaining.remove(_seed_row(b))
        return [r for r in rows if _kept(r) in remaining]

    @staticmethod
    def collections_unchanged(device: Any) -> bool:
        """Whether the collections are the starting ones, by name."""
        return sorted(c["name"] for c in read_collections(device)) == sorted(n for n, _ in LAB_COLLECTIONS)

    def changed_book(self, device: Any, title: str) -> dict[str, str] | None:
        """The one book titled ``title``, when every other starting book is as it was and nothing was added."""
        others = self.library_unchanged_but(device, title)
        if others is None or len(others) != 1 or others[0]["title"] != title:
            return None
        return others[0]


# --- helpers for the experts ---------------------------------------------------------------------------------


def book_row(ui: Any, title: str) -> Any:
    """The first book row on screen whose title is ``title``."""
    for row in find_all(ui, id_is("book_row")):
        if any(e.text == title and within(e.bounds, row.bounds) for e in find_all(ui, id_is("book_title"))):
            return row
    raise ExpertStuck(f"no row for {title!r} on screen")


def book_menu(ui: Any, title: str):
    """On a list of books, scroll to ``title`` and open its "More options" menu; returns the ui."""
    ui, _ = yield from scroll_to(ui, lambda e: e.text == title and (e.resource_id or "").endswith(":id/book_title"))
    row = book_row(ui, title)
    more = next((e for e in find_all(ui, id_is("book_more")) if within(e.bounds, row.bounds)), None)
    if more is None:
        raise ExpertStuck(f"no More options for {title!r}")
    return (yield tap(more))


# --- questions ---------------------------------------------------------------------------------------------


class _Question(_LabCantook):
    """A question about the library; the expert looks where the answer shows and answers ``ANSWER``."""

    answer_task = True
    complexity = 1.5
    ANSWER: ClassVar[str] = ""
    SEARCH: ClassVar[str] = ""
    """What the expert types into the search (nothing: the answer shows on My Books)."""

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        if self.library_unchanged_but(device, None) != []:
            return 0.0
        return 1.0 if self.answered(normalize_answer(answer or "")) else 0.0

    def answered(self, answer: str) -> bool:
        """Whether the normalised ``answer`` is right."""
        raise NotImplementedError

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(CANTOOK_APP)
        if self.SEARCH:
            ui = yield from tap_text(ui, "Search", scroll=False)
            ui = yield from type_into(ui, self.SEARCH, resource_id="search_input")
        yield Finished(self.ANSWER)


def _titles_in(answer: str) -> set[str]:
    known = {b["title"] for b in LAB_BOOKS} | {"Pride and Prejudice", ALICE["title"]}
    return {t for t in known if normalize_answer(t) in answer}


@register_task
class CantookLab1(_Question):
    """cantook_1: Pride and Prejudice is not in the library."""

    name = "cantook_1"
    template = "Do I have Pride and Prejudice on my bookshelf?"
    ANSWER = "No"
    SEARCH = "Pride and Prejudice"

    def answered(self, answer: str) -> bool:
        words = answer.split()
        negative = bool({"no", "not", "don", "dont", "nope"} & set(words))
        return negative and "yes" not in words


@register_task
class CantookLab2(_Question):
    """cantook_2: the book read last is The Scarlet Letter."""

    name = "cantook_2"
    template = "What was the last book I recently read?"
    ANSWER = "The Scarlet Letter"

    def answered(self, answer: str) -> bool:
        return _titles_in(answer) == {"The Scarlet Letter"}


@register_task
class CantookLab3(_Question):
    """cantook_3: the second book of Recently added, Hamlet, is William Shakespeare's."""

    name = "cantook_3"
    template = "Who is the author of the second book in my recently added?"
    ANSWER = "William Shakespeare"

    def answered(self, answer: str) -> bool:
        authors = {normalize_answer(b["author"]).split()[-1] for b in LAB_BOOKS}
        return {a for a in authors if a in answer.split()} == {"shakespeare"}


_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}


@register_task
class CantookLab4(_Question):
    """cantook_4: two books by Charles Dickens."""

    name = "cantook_4"
    template = "How many Charles Dickens books do I have?"
    ANSWER = "Two"
    SEARCH = "Charles Dickens"

    def answered(self, answer: str) -> bool:
        said = [_COUNTS[w] for w in answer.split() if w in _COUNTS] + [int(n) for n in re.findall(r"\d+", answer)]
        return said == [2]


@register_task
class CantookLab5(_Question):
    """cantook_5: Romeo and Juliet is read to 37.8%."""

    name = "cantook_5"
    template = "What is my progress in reading Romeo and Juliet?"
    ANSWER = "37.8%"

    def answered(self, answer: str) -> bool:
        return re.findall(r"\d+(?:\.\d+)?", answer) == ["37.8"]

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        if self.library_unchanged_but(device, None) != []:
            return 0.0
        return 1.0 if self.answered(answer or "") else 0.0


# --- operations -------------------------------------------------------------------------------------------


@register_task
class CantookLab6(_LabCantook):
    """cantook_6: import Alice's Adventures in Wonderland from /sdcard/Download/Ebooks."""

    name = "cantook_6"
    template = "Import Alice's Advantures in Wonderland from folder /Download/Ebooks/."

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        added = self.library_unchanged_but(device, None)
        if added is None or len(added) != 1:
            return 0.0
        book = added[0]
        ok = (book["title"], book["author"]) == (ALICE["title"], ALICE["author"]) and book["file"].startswith(
            BOOKS_DIR + "/")
        return 1.0 if ok and self.collections_unchanged(device) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(CANTOOK_APP)
        ui = yield from tap_text(ui, "Import", scroll=False)
        ui = yield from tap_text(ui, "Download")
        ui = yield from tap_text(ui, "Ebooks")
        ui = yield from tap_text(ui, ALICE["file"])
        yield Finished()


@register_task
class CantookLab7(_LabCantook):
    """cantook_7: delete Don Quixote (its menu's Delete, confirmed)."""

    name = "cantook_7"
    template = "Delete Don Quixote from my books."

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        others = self.library_unchanged_but(device, "Don Quixote")
        return 1.0 if others == [] and self.collections_unchanged(device) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(CANTOOK_APP)
        ui = yield from book_menu(ui, "Don Quixote")
        ui = yield from tap_text(ui, "Delete", scroll=False)
        ui = yield from tap_id(ui, "android:id/button1", scroll=False)
        yield Finished()


class _Mark(_LabCantook):
    """Mark ``TITLE`` read (100.0%) or unread (0.0%) from its info page."""

    TITLE: ClassVar[str] = ""
    READ: ClassVar[bool] = True

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        book = self.changed_book(device, self.TITLE)
        if book is None or not self.collections_unchanged(device):
            return 0.0
        seed = next(b for b in LAB_BOOKS if b["title"] == self.TITLE)
        same = all(book[k] == seed[k] for k in ("author", "categories", "added"))
        wanted = ("1", "100.0") if self.READ else ("0", "0.0")
        return 1.0 if same and (book["read"], book["progress"]) == wanted else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(CANTOOK_APP)
        ui = yield from book_menu(ui, self.TITLE)
        ui = yield from tap_text(ui, "Info", scroll=False)
        yield from tap_text(ui, "Mark as read" if self.READ else "Mark as unread")
        yield Finished()


@register_task
class CantookLab8(_Mark):
    """cantook_8: Hamlet becomes read (100.0%)."""

    name = "cantook_8"
    template = "Mark Hamlet as read."
    TITLE = "Hamlet"


@register_task
class CantookLab9(_Mark):
    """cantook_9: the second book of Recently read, Oliver Twist (finished), becomes unread."""

    name = "cantook_9"
    template = "Mark the second book I recently read as unread."
    complexity = 2.5
    TITLE = "Oliver Twist"
    READ = False


@register_task
class CantookLab10(_LabCantook):
    """cantook_10: Romeo and Juliet open in the reader (at its 37.8%, Mercutio's line on the page)."""

    name = "cantook_10"
    template = "Open Romeo and Juliet."

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        if self.library_unchanged_but(device, None) != [] or not self.collections_unchanged(device):
            return 0.0
        read = sorted((b for b in read_books(device) if b["last_read"]), key=lambda b: b["last_read"])
        if not read or read[-1]["title"] != "Romeo and Juliet" or read[-1]["last_read"] < STARTED:
            return 0.0
        if len(read) > 1 and read[-2]["last_read"] == read[-1]["last_read"]:
            return 0.0  # another book opened at the same moment: not the last read alone
        return 1.0 if foreground_activity(device) == (CANTOOK_PACKAGE, READER_ACTIVITY) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(CANTOOK_APP)
        ui, _ = yield from scroll_to(ui, lambda e: e.text == "Romeo and Juliet")
        yield tap(book_row(ui, "Romeo and Juliet"))
        yield Finished()


@register_task
class CantookLab11(_LabCantook):
    """cantook_11: the category Tragedies open (Categories, then Tragedies)."""

    name = "cantook_11"
    template = "Open the category named 'Tragedies'."

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        if self.library_unchanged_but(device, None) != [] or not self.collections_unchanged(device):
            return 0.0
        if foreground_activity(device) != (CANTOOK_PACKAGE, LIBRARY_ACTIVITY):
            return 0.0
        nodes = screen_nodes(device)
        title = [n.text for n in nodes if (n.resource_id or "").endswith(":id/toolbar_title")]
        back = any((n.content_desc or "") == "Navigate up" for n in nodes)
        return 1.0 if title == ["Tragedies"] and back else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(CANTOOK_APP)
        ui = yield from tap_id(ui, "nav_categories", scroll=False)
        yield from tap_text(ui, "Tragedies")
        yield Finished()


@register_task
class CantookLab12(_LabCantook):
    """cantook_12: a new collection named Favorite (the library and the other collections as they were)."""

    name = "cantook_12"
    template = 'Create a new collection called "Favorite".'
    complexity = 2.5

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        if self.library_unchanged_but(device, None) != []:
            return 0.0
        names = [c["name"] for c in read_collections(device)]
        before = [n for n, _ in LAB_COLLECTIONS]
        new = list(names)
        for n in before:
            if n not in new:
                return 0.0
            new.remove(n)
        return 1.0 if [normalize_answer(n) for n in new] == ["favorite"] else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(CANTOOK_APP)
        ui = yield from tap_id(ui, "nav_collections", scroll=False)
        ui = yield from tap_text(ui, "New collection", scroll=False)
        ui = yield from type_into(ui, "Favorite", resource_id="collection_name_input")
        yield from tap_text(ui, "Create", scroll=False)
        yield Finished()

