"""The simulated Markor and its tasks: file browser over /sdcard, editor, dialogs, experts and random agents."""

from __future__ import annotations

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.sim import crossapp as cross_tasks
from android_gym.tasks.sim import markor as markor_tasks
from android_gym.tasks.sim.markor import MARKOR_DIR, list_dir, normalize_note, read_note, row_name

from .sim_ui import descs, tap_on, texts, ui_of
from .task_checks import (
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

PKG = "net.gsantner.markor"
NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ == markor_tasks.__name__)


def listed(phone: SimPhone) -> list[str]:
    """The names of the file browser's rows (their content descriptions name them), ".." first."""
    return [name for name in map(row_name, ui_of(phone).elements) if name is not None]


def tap_row(phone: SimPhone, name: str, long: bool = False) -> None:
    """Tap (or long-press) the file browser row of ``name``."""
    row = next(e for e in reversed(ui_of(phone).elements) if row_name(e) == name)  # the topmost: a dialog
    (phone.long_press if long else phone.tap)(*row.center)


def notebook(device) -> dict[str, str | None]:
    """Every path under the notebook (folders map to None) with its content, read through the shell."""
    out: dict[str, str | None] = {}
    pending = [""]
    while pending:
        rel = pending.pop()
        for name, is_dir in (list_dir(device, f"{MARKOR_DIR}/{rel}".rstrip("/")) or {}).items():
            path = f"{rel}/{name}".strip("/")
            out[path] = None if is_dir else read_note(device, f"{MARKOR_DIR}/{path}")
            if is_dir:
                pending.append(path)
    return out


# --- the app -------------------------------------------------------------------------------------------------


def test_browser_lists_folders_first_with_times_and_navigates():
    phone = SimPhone()
    phone.launch(PKG)
    assert listed(phone)[:8] == ["..", "Journal", "Recipes", "Work", "grocery_list.md", "ideas.txt",
                                 "meeting_notes.md", "packing_list.txt"]
    phone.swipe(540, 2000, 540, 800, 300)
    assert listed(phone)[-1] == "workout_plan.txt"  # the notebook is longer than the screen
    phone.swipe(540, 800, 540, 2000, 300)
    assert "Markor" in texts(phone)  # the app bar names the folder
    # as on the emulator: one node per row, its content description naming the kind, the name and, for the first
    # two notes only, the date
    assert "File grocery_list.md 10/13/2023, 1:59 PM" in descs(phone) and "Folder Journal " in descs(phone)
    assert "File meeting_notes.md " in descs(phone)
    assert {"Go to", "Sort by", "Search", "More options", "Files", "To-Do", "QuickNote", "More"} <= set(descs(phone))
    tap_row(phone, "Journal")
    assert listed(phone) == ["..", "2023-10-13.md", "2023-10-14.md"] and "> Journal" in texts(phone)
    phone.back()  # Back goes up a folder before leaving the app
    assert "Journal" in listed(phone) and phone.foreground == PKG
    tap_row(phone, "Work")
    tap_row(phone, "..")
    assert "Journal" in listed(phone)
    tap_on(phone, text="Sort by")
    tap_on(phone, text="Date modified")
    assert listed(phone)[4:8] == ["meeting_notes.md", "grocery_list.md", "packing_list.txt", "recipes_to_try.md"]


def test_new_note_gets_the_extension_and_the_editor_saves():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="Create a new file or folder")
    assert phone.keyboard_shown and {"Name", "my_note", ".md", "Type", "Template"} <= set(texts(phone))
    phone.type_text("shopping")
    tap_on(phone, text="OK")
    assert "shopping" in texts(phone)  # the editor's title: the name without its extension
    phone.type_text("eggs")
    tap_on(phone, text="Save")
    assert phone.shell(f"cat {MARKOR_DIR}/shopping.md") == "eggs"
    phone.type_text("\nmilk")
    phone.back()  # hides the keyboard
    phone.back()  # leaves the editor, saving (Markor autosaves)
    assert phone.shell(f"cat {MARKOR_DIR}/shopping.md") == "eggs\nmilk"
    tap_on(phone, text="Create a new file or folder")
    phone.type_text("plan.txt")
    tap_on(phone, text="OK")
    assert read_note(phone, f"{MARKOR_DIR}/plan.txt") == ""  # an existing extension is kept
    phone.back()
    phone.back()
    tap_on(phone, text="Create a new file or folder")
    phone.type_text("plan.txt")
    tap_on(phone, text="OK")
    assert "File already exists" in texts(phone)


def test_create_folder_and_reject_empty_or_taken_names():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="Create a new file or folder")
    tap_on(phone, text="FOLDER")
    assert "Please enter a name" in texts(phone)
    phone.type_text("Travel")
    tap_on(phone, text="FOLDER")
    assert list_dir(phone)["Travel"] is True
    assert listed(phone)[:5] == ["..", "Journal", "Recipes", "Travel", "Work"]
    tap_on(phone, text="Create a new file or folder")
    phone.type_text("Travel")
    tap_on(phone, text="FOLDER")
    assert "Folder already exists" in texts(phone)


def test_delete_confirm_cancel_and_select_several():
    phone = SimPhone()
    phone.launch(PKG)
    tap_row(phone, "ideas.txt", long=True)
    assert "Selected ideas.txt " in descs(phone)
    assert {"Favourite", "Rename", "Details", "Delete", "More options"} <= set(descs(phone))
    tap_on(phone, text="Delete")
    tap_on(phone, text="Cancel")
    assert "ideas.txt" in list_dir(phone)
    tap_on(phone, text="Delete")
    tap_on(phone, text="OK")
    assert "ideas.txt" not in list_dir(phone) and "ideas.txt" not in listed(phone)
    tap_row(phone, "Work", long=True)
    tap_row(phone, "Journal")  # in selection mode a tap adds a row
    assert "Rename" not in descs(phone)  # renaming takes one row
    tap_on(phone, text="Delete")
    tap_on(phone, text="OK")
    assert "Work" not in list_dir(phone) and "Journal" not in list_dir(phone) and "Recipes" in list_dir(phone)


def test_move_and_rename_selected_notes():
    phone = SimPhone()
    phone.launch(PKG)
    tap_row(phone, "ideas.txt", long=True)
    tap_row(phone, "reading_list.md")
    tap_on(phone, text="More options")
    assert texts(phone)[:5] == ["Clipboard", "Move", "Copy", "Create shortcut", "Share"]
    tap_on(phone, text="Move")
    assert "Move \u2192 markor" in texts(phone)  # the picker opens in the selection's folder (as the emulator spells it)
    tap_row(phone, "Work")
    assert "Move \u2192 Work" in texts(phone)
    tap_on(phone, text="SELECT THIS FOLDER")
    assert set(list_dir(phone, f"{MARKOR_DIR}/Work")) == {"okr_q4.md", "ideas.txt", "reading_list.md"}
    assert read_note(phone, f"{MARKOR_DIR}/Work/ideas.txt").startswith("App idea")
    tap_row(phone, "grocery_list.md", long=True)
    tap_on(phone, text="More options")
    tap_on(phone, text="Move")
    tap_on(phone, text="SELECT THIS FOLDER")  # already in this folder
    assert "The items are already in this folder" in texts(phone)
    tap_on(phone, text="CANCEL")
    tap_on(phone, text="Rename")
    phone.long_press(*next(e.center for e in ui_of(phone).elements if e.resource_id.endswith(":id/new_name")))
    phone.type_text("groceries.md")
    tap_on(phone, text="OK")
    assert "groceries.md" in list_dir(phone) and "grocery_list.md" not in list_dir(phone)


def test_editor_select_all_replace_and_paste():
    phone = SimPhone()
    phone.launch(PKG)
    tap_row(phone, "ideas.txt")
    assert phone.current_activity() == f"{PKG}/.activity.DocumentActivity"
    tap_on(phone, rid="document__fragment__edit__highlighting_editor", long=True)
    phone.type_text("Replaced")
    phone.set_clipboard(" and pasted")
    tap_on(phone, rid="document__fragment__edit__highlighting_editor", long=True)
    tap_on(phone, text="Paste")  # the selection goes: long-press then Paste replaces it
    tap_on(phone, text="Save")
    assert read_note(phone, f"{MARKOR_DIR}/ideas.txt") == " and pasted"


def test_files_written_through_the_shell_show_up():
    phone = SimPhone()
    phone.shell(f"rm -rf {MARKOR_DIR}")
    phone.launch(PKG)
    assert listed(phone) == [".."]
    phone.shell(f"mkdir -p {MARKOR_DIR}/Inbox && echo 'first line' > {MARKOR_DIR}/Inbox/from_shell.md")
    tap_row(phone, "Inbox")
    tap_row(phone, "from_shell.md")
    assert "first line\n" in texts(phone)


# --- tasks -----------------------------------------------------------------------------------------------


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES + ["MarkorCreateNoteAndSms"])
    assert len(NAMES) == 10


def test_note_comparison_rules():
    assert normalize_note("a  \nb\n\n") == "a\nb"
    assert normalize_note("\nheader\n\nbody\n") == "header\n\nbody"
    assert normalize_note(None) == ""


@pytest.mark.parametrize("name", NAMES + ["MarkorCreateNoteAndSms"])
def test_expert_solves_task_on_five_seeds(name):
    check_expert_solves(name)


@pytest.mark.parametrize("name", NAMES + ["MarkorCreateNoteAndSms"])
def test_initial_state_is_not_a_success_and_initialize_is_repeatable(name):
    check_start_state(TASK_REGISTRY[name](seed=4), notebook, launch(PKG))


def test_newest_note_is_the_last_written_and_shows_so():
    task = TASK_REGISTRY["MarkorDeleteNewestNote"](seed=3)
    device = SimDevice()
    task.initialize(device)
    device.shell(f"monkey -p {PKG} -c android.intent.category.LAUNCHER 1")
    tap_on(device.phone, text="Sort by")
    tap_on(device.phone, text="Date modified")
    assert listed(device.phone)[:2] == ["..", task.newest()]
    device.shell(f"rm {MARKOR_DIR}/{list(task.start_notes())[0]}")  # deleting another note fails the task
    assert task.is_successful(device) == 0.0


def test_note_and_sms_scores_half_for_the_note_alone():
    task = TASK_REGISTRY["MarkorCreateNoteAndSms"](seed=1)
    device = SimDevice()
    task.initialize(device)
    device.shell(f"echo '{task.params['text']}' > {MARKOR_DIR}/{task.params['file_name']}")
    assert task.is_successful(device) == 0.5
    assert cross_tasks.MarkorCreateNoteAndSms.app_names == ("markor", "simple sms messenger")


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed))


def test_print_pdf_shows_the_print_spoolers_preview_a_moment_later_and_back_returns_to_the_note():
    # the real MarkorCreateNoteAndSms run: Print / PDF renders the note in view mode; after a wait the print
    # spooler's preview (its own window) lists; Back returns to the note in view mode
    phone = SimPhone()
    phone.launch(PKG)
    markor = phone.apps[PKG]
    phone.files.write(f"{MARKOR_DIR}/plants.md", "Water the plants.")
    markor.open_editor(f"{MARKOR_DIR}/plants.md")
    phone.invalidate()
    tap_on(phone, text="More options")
    tap_on(phone, text="Share")
    tap_on(phone, text="Print / PDF")
    assert markor.page == "editor" and markor.editor.get("view")
    phone.advance_clock(1000)
    assert markor.page == "print"
    assert {e.package for e in phone.frame.entries if e.window == "app"} == {"com.android.printspooler"}
    assert "Select a printer" in texts(phone) and "Page 1 of 1" in descs(phone)
    phone.back()
    assert markor.page == "editor" and markor.editor.get("view")
    phone.advance_clock(1000)
    assert markor.page == "editor"  # it comes once


def test_print_preview_does_not_come_up_once_the_note_was_left():
    # Print / PDF, then Back out of the note before the preview came: it does not come up later over another
    # note opened in view mode (the pending print ended with the note)
    phone = SimPhone()
    phone.launch(PKG)
    markor = phone.apps[PKG]
    phone.files.write(f"{MARKOR_DIR}/plants.md", "Water the plants.")
    phone.files.write(f"{MARKOR_DIR}/books.md", "Read more.")
    markor.open_editor(f"{MARKOR_DIR}/plants.md")
    phone.invalidate()
    tap_on(phone, text="More options")
    tap_on(phone, text="Share")
    tap_on(phone, text="Print / PDF")
    assert markor.print_pending
    phone.back()  # leaves the note (it is in view mode: Back closes the editor)
    assert markor.page == "main" and not markor.print_pending
    markor.open_editor(f"{MARKOR_DIR}/books.md")
    markor._set_view_mode(True)
    phone.invalidate()
    phone.advance_clock(1000)
    assert markor.page == "editor" and markor.editor["path"].endswith("books.md")


# --- issue 35 round 2: the tuning extension's MarkorMoveNote and ExpenseAddMultiple runs ----------------------


def _keys(phone: SimPhone) -> list[str]:
    return [e.content_desc for e in ui_of(phone).elements if e.resource_id.endswith(":id/key_pos_0_0")]


def test_a_note_opened_under_gboard_takes_it_with_shift_on_and_a_txt_note_gets_the_plain_text_bar():
    # a real run searched "Markor" in the launcher (Gboard stays up), opened a folder, then a .txt note: Gboard
    # served the editor ("Q", the shortcuts row), and the bar had Ordered list ... Indent instead of Bold, Italic
    phone = SimPhone()
    phone.launch(PKG)
    markor = phone.apps[PKG]
    phone.files.write(f"{MARKOR_DIR}/koala.txt", "1Z14EQ\n")
    phone.ime_detached = True
    phone.invalidate()
    tap_row(phone, "koala.txt")
    assert markor.page == "editor" and phone.focus == "markor_editor" and phone.keyboard_shown
    assert _keys(phone) == ["Q"] and "More features" in descs(phone)
    assert "Ordered list" in descs(phone) and "Indent" in descs(phone) and "Bold" not in descs(phone)
    phone.back()  # hides Gboard; opening a note without it up leaves it down
    phone.back()
    tap_row(phone, "koala.txt")
    assert not phone.keyboard_shown


def test_the_editors_submenus_list_as_on_the_emulator_and_gboard_comes_back_after_them():
    phone = SimPhone()
    phone.launch(PKG)
    phone.files.write(f"{MARKOR_DIR}/koala.txt", "text\n")
    phone.ime_detached = True
    phone.invalidate()
    tap_row(phone, "koala.txt")
    tap_on(phone, text="More options")
    shown = texts(phone)
    at = shown.index("File settings")
    assert not phone.keyboard_shown and shown[at:at + 5] == ["File settings", "Share", "Tools", "Info", "Reload"]
    tap_on(phone, text="File settings")
    from android_gym.replay import sim_ui_elements  # AndroidWorld's list: breadth first

    listed_now = [(e.text or "", e.class_name.rsplit(".", 1)[-1]) for e in sim_ui_elements(phone.dump())
                  if e.package_name == PKG]
    assert listed_now == [("File settings", "TextView"), ("Wrap words", "TextView"), ("", "CheckBox"),
                          ("Syntax highlighting", "TextView"), ("", "CheckBox"), ("Auto-format", "TextView"),
                          ("", "CheckBox"), ("Font Size", "TextView"), ("Format", "TextView")]
    phone.back()
    assert phone.apps[PKG].dialog is None and phone.keyboard_shown and _keys(phone) == ["Q"]
    tap_on(phone, text="More options")
    tap_on(phone, text="Tools")
    assert "Speed Read" in texts(phone)


def test_search_offers_the_last_query_again_and_select_filters_its_results():
    phone = SimPhone()
    phone.launch(PKG)
    markor = phone.apps[PKG]
    phone.files.write(f"{MARKOR_DIR}/Work/penguin.txt", "x\n")
    tap_on(phone, text="Search")
    assert not phone.keyboard_shown
    phone.type_text("zebra")
    phone.keyevent("KEYCODE_ENTER")
    assert markor.dialog[0] == "search_results" and not phone.keyboard_shown  # the shrug: no field
    phone.back()
    tap_on(phone, text="Search")
    assert phone.keyboard_shown and "zebra" in texts(phone)  # the last query, with Gboard, offered under the field
    suggestion = [e for e in ui_of(phone).elements if e.resource_id == "android:id/text1"]
    assert [e.text for e in suggestion] == ["zebra"] and not suggestion[0].clickable
    phone.tap(*suggestion[0].center)  # the drop-down alone, clickable, without Gboard; a second tap takes it
    from android_gym.replay import sim_ui_elements  # AndroidWorld's list: the focused window's

    assert [e.text for e in sim_ui_elements(phone.dump()) if e.package_name == PKG] == ["zebra"]
    assert not phone.keyboard_shown
    tap_on(phone, text="zebra")
    assert markor.dialog[0] == "search" and phone.keyboard_shown
    markor.search_query = "penguin"
    tap_on(phone, text="OK")
    assert "Work/penguin.txt" in texts(phone) and phone.focus == "markor_search_filter" and phone.keyboard_shown
    tap_on(phone, text="Work/penguin.txt")
    assert markor.page == "editor" and phone.keyboard_shown and _keys(phone) == ["Q"]


def test_the_browsers_more_options_and_ok_without_a_name():
    phone = SimPhone()
    phone.launch(PKG)
    markor = phone.apps[PKG]
    tap_on(phone, text="More options")
    assert texts(phone)[-3:-1] == ["Import from device", "Settings"]  # the status bar's clock last
    phone.back()
    before = list_dir(phone)
    tap_on(phone, text="Create a new file or folder")
    tap_on(phone, text="OK")  # over the "my_note" hint: the dialog closes, nothing is created
    assert markor.dialog is None and list_dir(phone) == before
