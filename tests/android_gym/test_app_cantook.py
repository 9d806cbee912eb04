"""The simulated Cantook (AndroidLab's e-book reader) and AndroidLab's 12 cantook tasks on it: the screens as
AndroidLab's judges read them (plain TextViews, the selected destination), EPUB files, import, delete, marks,
collections, the store's bad input, the experts on three seeds and the checks' wrong paths."""

from __future__ import annotations

import pytest

from android_gym.sim import SimPhone
from android_gym.sim.apps.cantook import BOOKS_DIR, format_progress, make_epub, parse_progress, read_epub
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import get_task_class
from android_gym.tasks.device_state import parse_rows
from android_gym.tasks.runner import run_expert
from android_gym.tasks.sim.cantook_androidlab import (
    ALICE,
    EBOOKS_DIR,
    LAB_BOOKS,
    ROMEO_LINE,
    read_books,
    read_collections,
)

from .sim_ui import tap_on, texts, ui_of

PKG = "com.aldiko.android"
BOOKS = "content://com.aldiko.android/books"
COLLECTIONS = "content://com.aldiko.android/collections"
NAMES = [f"cantook_{n}" for n in range(1, 13)]


def plain(phone: SimPhone) -> list[str]:
    """Texts of the app's plain (not clickable) TextViews, top to bottom: what AndroidLab's judges match exactly."""
    return [e.text for e in ui_of(phone).elements if e.class_name.endswith("TextView") and not e.clickable
            and e.text and e.package == PKG]


def selected(phone: SimPhone) -> list[str]:
    """Content descriptions or texts of the selected views."""
    return [e.content_desc or e.text for e in ui_of(phone).elements if e.selected]


def started(name: str = "cantook_6") -> tuple[SimDevice, SimPhone]:
    device = SimDevice()
    get_task_class(name)(seed=0).initialize(device)
    return device, device.phone


def row_menu(phone: SimPhone, title: str) -> None:
    """Tap the More options of the first row titled ``title``."""
    ui = ui_of(phone)
    title_el = next(e for e in ui.elements if e.text == title and e.resource_id.endswith(":id/book_title"))
    more = next(e for e in ui.elements if e.resource_id.endswith(":id/book_more")
                and e.bounds[1] <= title_el.center[1] < e.bounds[3] + 40)
    phone.tap(*more.center)


def test_epub_round_trip_and_files_that_are_not_epubs():
    data = make_epub("A & B <x>", "Someone", ["One.", "Two & three."], ("Tales",))
    assert read_epub(data) == {"title": "A & B <x>", "author": "Someone", "subjects": ("Tales",),
                               "paragraphs": ["One.", "Two & three."]}
    for bad in (b"not a zip", make_epub("", "x", ["y"])):
        with pytest.raises(ValueError):
            read_epub(bad)


@pytest.mark.parametrize("text,tenths", [("37.8", 378), ("100", 1000), ("0.0", 0), ("12.4%", 124), ("100.1", None),
                                         ("-1", None), ("3.14", None), ("abc", None)])
def test_progress_parses_percent_with_one_decimal(text, tenths):
    assert parse_progress(text) == tenths
    if tenths is not None:
        assert parse_progress(format_progress(tenths)) == tenths


def test_my_books_lists_recently_read_then_recently_added_with_my_books_selected():
    _, phone = started()
    phone.launch(PKG)
    shown = plain(phone)
    read = shown.index("Recently read")
    added = shown.index("Recently added")
    assert [t for t in shown[read:added] if t in {b["title"] for b in LAB_BOOKS}] == [
        "The Scarlet Letter", "Oliver Twist", "Romeo and Juliet"]
    assert [t for t in shown[added:] if t in {b["title"] for b in LAB_BOOKS}][:3] == ["Moby Dick", "Hamlet",
                                                                                      "Don Quixote"]
    assert "37.8%" in shown and "Pride and Prejudice" not in texts(phone)
    assert selected(phone) == ["My Books"]


def test_reader_opens_romeo_and_juliet_on_mercutios_line_and_a_swipe_turns_the_page():
    device, phone = started()
    phone.launch(PKG)
    tap_on(phone, text="Romeo and Juliet")
    shown = plain(phone)
    assert ROMEO_LINE in shown and "Page 2 of 3" in shown and "37.8%" in shown
    assert not [t for t in texts(phone) if ".epub" in t or "Help" in t]  # what cantook_10's judge refuses
    romeo = next(b for b in read_books(device) if b["title"] == "Romeo and Juliet")
    assert romeo["last_read"].startswith("2024-05-16T10:00") and romeo["progress"] == "37.8"
    phone.swipe(900, 1200, 150, 1200, 200)  # the finger moves left: the next (last) page
    assert "Page 3 of 3" in plain(phone) and ROMEO_LINE not in plain(phone)
    phone.swipe(150, 1200, 900, 1200, 200)
    romeo = next(b for b in read_books(device) if b["title"] == "Romeo and Juliet")
    assert (romeo["progress"], romeo["read"]) == ("33.3", "0")
    phone.back()
    assert plain(phone)[plain(phone).index("Recently read") + 1] == "Romeo and Juliet"


def test_info_page_lists_what_the_mark_judges_look_for():
    device, phone = started()
    phone.launch(PKG)
    row_menu(phone, "Hamlet")
    tap_on(phone, text="Info")
    assert "Mark as read" in plain(phone) and "0.0%" in plain(phone)
    tap_on(phone, text="Mark as read")
    shown = plain(phone)
    assert {"Info", "Hamlet", "100.0%", "Mark as unread"} <= set(shown) and "Read" in texts(phone)
    hamlet = next(b for b in read_books(device) if b["title"] == "Hamlet")
    assert (hamlet["read"], hamlet["progress"]) == ("1", "100.0")
    tap_on(phone, text="Mark as unread")
    assert {"Mark as read", "0.0%"} <= set(plain(phone))


def test_delete_asks_first_then_removes_the_book_its_file_and_its_place_in_collections():
    device, phone = started()
    phone.launch(PKG)
    quixote = next(b for b in read_books(device) if b["title"] == "Don Quixote")
    row_menu(phone, "Don Quixote")
    tap_on(phone, text="Delete")
    tap_on(phone, text="Cancel")
    assert len(read_books(device)) == len(LAB_BOOKS)
    row_menu(phone, "Don Quixote")
    tap_on(phone, text="Delete")
    tap_on(phone, rid="button1")
    assert "Don Quixote" not in [b["title"] for b in read_books(device)]
    assert not phone.files.exists(quixote["file"])
    assert quixote["_id"] not in read_collections(device)[0]["books"].split(",")
    assert "Don Quixote" not in texts(phone) and selected(phone) == ["My Books"]


def test_import_lists_epubs_only_and_refuses_a_damaged_file_and_a_second_copy():
    device, phone = started()
    phone.files.write(f"{EBOOKS_DIR}/notes.txt", b"hello")
    phone.files.write(f"{EBOOKS_DIR}/broken.epub", b"PK not really")
    phone.launch(PKG)
    tap_on(phone, text="Import")
    tap_on(phone, text="Download")
    tap_on(phone, text="Ebooks")
    assert [t for t in texts(phone) if "." in t and t != ".."] == ["alices-adventures-in-wonderland.epub",
                                                                   "broken.epub", "the-time-machine.epub"]
    tap_on(phone, text="broken.epub")
    assert "not a valid EPUB file" in " ".join(texts(phone)) and len(read_books(device)) == len(LAB_BOOKS)
    tap_on(phone, text=ALICE["file"])
    assert selected(phone) == ["My Books"] and ALICE["title"] in plain(phone)
    alice = next(b for b in read_books(device) if b["title"] == ALICE["title"])
    assert alice["author"] == "Lewis Carroll" and alice["file"].startswith(BOOKS_DIR)
    assert alice["categories"] == "Children's stories" and phone.files.exists(f"{EBOOKS_DIR}/{ALICE['file']}")
    tap_on(phone, text="Import")
    tap_on(phone, text="Download")
    tap_on(phone, text="Ebooks")
    tap_on(phone, text=ALICE["file"])
    assert "already in your library" in " ".join(texts(phone))
    assert len(read_books(device)) == len(LAB_BOOKS) + 1


def test_categories_and_a_category_page_with_categories_selected():
    _, phone = started()
    phone.launch(PKG)
    tap_on(phone, rid="nav_categories")
    assert selected(phone) == ["Categories"]
    assert {"Tragedies", "Drama", "Fiction", "Adventure"} <= set(plain(phone))
    tap_on(phone, text="Tragedies")
    shown = plain(phone)
    assert shown[0] == "Tragedies" and {"Hamlet", "Romeo and Juliet"} <= set(shown)
    assert "Oliver Twist" not in shown and selected(phone) == ["Categories"]


def test_new_collection_wants_a_new_name():
    device, phone = started()
    phone.launch(PKG)
    tap_on(phone, rid="nav_collections")
    assert selected(phone) == ["Collections"] and "To Read" in plain(phone)
    tap_on(phone, text="New collection")
    tap_on(phone, text="Create")
    assert "Enter a name for the collection" in texts(phone)
    phone.type_text("to read")
    tap_on(phone, text="Create")
    assert "already exists" in " ".join(texts(phone)) and len(read_collections(device)) == 1
    tap_on(phone, rid="collection_name_input", long=True)
    phone.type_text("Favorite")
    tap_on(phone, text="Create")
    assert [c["name"] for c in read_collections(device)] == ["To Read", "Favorite"]
    assert "Favorite" in plain(phone) and selected(phone) == ["Collections"]
    tap_on(phone, text="To Read")
    assert {"Moby Dick", "Don Quixote"} <= set(plain(phone))


def test_search_matches_titles_and_authors():
    _, phone = started()
    phone.launch(PKG)
    tap_on(phone, text="Search")
    phone.type_text("dickens")
    assert [t for t in plain(phone) if t in {b["title"] for b in LAB_BOOKS}] == ["A Tale of Two Cities",
                                                                                 "Oliver Twist"]
    tap_on(phone, rid="search_input", long=True)
    phone.type_text("Pride and Prejudice")
    assert "No books found" in plain(phone)


def test_store_rejects_what_the_app_cannot_hold_and_pm_clear_empties_it():
    phone = SimPhone()
    phone.files.write("/sdcard/b.epub", make_epub("B", "Ann", ["x"]))
    phone.files.write("/sdcard/bad.epub", b"nope")

    def insert(binds: str, uri: str = BOOKS) -> str:
        return phone.shell(f"content insert --uri {uri} {binds}")

    assert "needs the file" in insert("--bind title:s:B")
    assert "no EPUB file" in insert("--bind file:s:/sdcard/missing.epub")
    assert "not an EPUB" in insert("--bind file:s:/sdcard/bad.epub")
    assert "percent" in insert("--bind file:s:/sdcard/b.epub --bind progress:s:120")
    assert "ISO" in insert("--bind file:s:/sdcard/b.epub --bind added:s:yesterday")
    assert "1 or 0" in insert("--bind file:s:/sdcard/b.epub --bind read:s:yes")
    assert "unknown Cantook book column" in insert("--bind file:s:/sdcard/b.epub --bind isbn:s:1")
    assert "unknown Cantook uri" in phone.shell("content query --uri content://com.aldiko.android/shelves")
    assert insert("--bind file:s:/sdcard/b.epub --bind progress:s:12.5").strip() == ""
    (row,) = parse_rows(phone.shell(f"content query --uri {BOOKS} --projection _id:title:author:progress"),
                        ["_id", "title", "author", "progress"])
    assert (row["title"], row["author"], row["progress"]) == ("B", "Ann", "12.5")
    assert "needs a name" in insert("--bind books:s:1", COLLECTIONS)
    assert "ids of books" in insert("--bind name:s:X --bind books:s:9", COLLECTIONS)
    assert insert("--bind name:s:X --bind books:s:1", COLLECTIONS).strip() == ""
    assert "already exists" in insert("--bind name:s:x", COLLECTIONS)
    assert "cannot change" in phone.shell(f"content update --uri {BOOKS} --bind file:s:/sdcard/x.epub")
    phone.shell(f"pm clear {PKG}")
    assert parse_rows(phone.shell(f"content query --uri {BOOKS} --projection _id"), ["_id"]) == []


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_every_cantook_task(name, seed):
    task = get_task_class(name)(seed=seed)
    device = SimDevice()
    task.initialize(device)
    assert task.is_successful(device, "") == 0.0
    assert run_expert(task, device).success == 1.0


@pytest.mark.parametrize("name,right,wrong", [
    ("cantook_1", ["No", "No, you don't", "It is not on your bookshelf"], ["Yes", "yes, it is", ""]),
    ("cantook_2", ["The Scarlet Letter", "You last read the scarlet letter"], ["Oliver Twist",
                                                                             "The Scarlet Letter or Oliver Twist"]),
    ("cantook_3", ["William Shakespeare", "Shakespeare"], ["Herman Melville", "Shakespeare and Melville"]),
    ("cantook_4", ["Two", "You have 2 Charles Dickens books"], ["3", "one", "two or three"]),
    ("cantook_5", ["37.8%", "You have read 37.8% of it"], ["38%", "37.8 or 12.4", "378"]),
])
def test_questions_want_the_librarys_answer(name, right, wrong):
    device, phone = started(name)
    task = get_task_class(name)(seed=0)
    for answer in right:
        assert task.is_successful(device, answer) == 1.0, answer
    for answer in wrong + [None]:
        assert task.is_successful(device, answer) == 0.0, answer
    phone.shell(f"content delete --uri {BOOKS} --where \"title='Moby Dick'\"")  # a question leaves the library alone
    assert task.is_successful(device, right[0]) == 0.0


def test_operation_checks_fail_on_the_wrong_book_or_a_second_change():
    device, phone = started("cantook_7")
    for name in ("cantook_7", "cantook_8", "cantook_9", "cantook_10", "cantook_11", "cantook_12", "cantook_6"):
        get_task_class(name)(seed=0).initialize(device)
        assert get_task_class(name)(seed=0).is_successful(device) == 0.0

    def check(name: str) -> float:
        return get_task_class(name)(seed=0).is_successful(device)

    get_task_class("cantook_7")(seed=0).initialize(device)
    phone.shell(f"content delete --uri {BOOKS} --where \"title='Hamlet'\"")
    assert check("cantook_7") == 0.0
    phone.shell(f"content delete --uri {BOOKS} --where \"title='Don Quixote'\"")
    assert check("cantook_7") == 0.0  # Hamlet went too
    get_task_class("cantook_8")(seed=0).initialize(device)
    phone.shell(f"content update --uri {BOOKS} --bind read:s:1 --bind progress:s:100 --where \"title='Hamlet'\"")
    assert check("cantook_8") == 1.0
    phone.shell(f"content update --uri {BOOKS} --bind read:s:1 --bind progress:s:100 --where \"title='Moby Dick'\"")
    assert check("cantook_8") == 0.0
    get_task_class("cantook_9")(seed=0).initialize(device)
    phone.shell(f"content update --uri {BOOKS} --bind read:s:0 --bind progress:s:0 "
                "--where \"title='The Scarlet Letter'\"")
    assert check("cantook_9") == 0.0  # the first book read, not the second
    get_task_class("cantook_10")(seed=0).initialize(device)
    phone.launch(PKG)
    tap_on(phone, text="Romeo and Juliet")
    assert check("cantook_10") == 1.0
    phone.back()
    assert check("cantook_10") == 0.0  # closed again
    tap_on(phone, text="Oliver Twist")
    assert check("cantook_10") == 0.0  # another book read since
    get_task_class("cantook_11")(seed=0).initialize(device)
    phone.launch(PKG)
    tap_on(phone, rid="nav_categories")
    tap_on(phone, text="Drama")
    assert check("cantook_11") == 0.0
    get_task_class("cantook_12")(seed=0).initialize(device)
    phone.shell(f"content insert --uri {COLLECTIONS} --bind name:s:Favorites")
    assert check("cantook_12") == 0.0
    phone.shell(f"content insert --uri {COLLECTIONS} --bind name:s:Favorite")
    assert check("cantook_12") == 0.0  # two new collections
    get_task_class("cantook_6")(seed=0).initialize(device)
    phone.launch(PKG)
    for text in ("Import", "Download", "Ebooks", "the-time-machine.epub"):
        tap_on(phone, text=text)
    assert check("cantook_6") == 0.0
    for text in ("Import", "Download", "Ebooks", ALICE["file"]):
        tap_on(phone, text=text)
    assert check("cantook_6") == 0.0  # and another book besides
