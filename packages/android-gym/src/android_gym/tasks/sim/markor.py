"""Markor tasks: AndroidWorld's note and folder tasks re-created over files in /sdcard/Documents/Markor.

Set-up and checks use only shell file commands (``rm -rf``, ``mkdir -p``, ``echo ... >``, ``cat``,
``ls -l``, ``touch -d``), as AndroidWorld reads Markor's state from the files themselves. Each task
starts from an emptied notebook folder holding only its own notes. Note contents are compared
after :func:`normalize_note` (line ends stripped, trailing blank lines dropped) and, where
AndroidWorld matches fuzzily, blank lines are ignored.

Clipboard set-up uses AndroidWorld's Clipper convention (``am broadcast -a clipper.set -e text
...``); a device that cannot set the clipboard makes that task's ``initialize`` raise ``TaskError``.
"""

from __future__ import annotations

import datetime as dt
import random
import re
import string
from typing import Any, ClassVar

from android_gym.actions import Finished, LongPress, OpenApp, PressBack, Type
from android_gym.tasks.base import ExpertGenerator, Task, TaskError, register_task
from android_gym.tasks.device_state import force_stop, go_home, quote, set_clipboard
from android_gym.tasks.expert import (
    ExpertStuck,
    find,
    id_is,
    scroll_to,
    tap,
    tap_text,
    tap_where,
    text_is,
    type_into,
)
from android_gym.tasks.suites import SUITES_AW

MARKOR_PACKAGE = "net.gsantner.markor"
MARKOR_DIR = "/sdcard/Documents/Markor"
EDITOR_ID = "document__fragment__edit__highlighting_editor"

NOTE_STEMS = (
    "grocery_list_weekly", "meeting_notes_team", "personal_goals", "reading_list", "paper_summary",
    "vacation_plans", "home_renovation_budget", "workout_routine", "gift_ideas", "pizza_recipe", "weekend_todo",
    "insurance_comparison", "sketch_ideas", "python_goals", "trip_reflections", "startup_ideas",
    "client_schedule", "book_quotes", "garden_plan", "presentation_outline", "podcast_notes", "movie_watchlist",
    "packing_list", "car_maintenance_log", "language_practice",
)
SENTENCES = (
    "Buy fresh basil and tomatoes for the weekend.",
    "Call the landlord about the leaking faucet.",
    "The team agreed to ship the beta next Friday.",
    "Remember to back up the laptop before the update.",
    "Try the new ramen place near the station.",
    "Finish reading chapter four before book club.",
    "Schedule a dentist appointment for next month.",
    "Water the plants on the balcony every other day.",
    "Ask Maria for the slides from the workshop.",
    "Renew the passport before the trip in spring.",
    "Practice the presentation twice before Thursday.",
    "Compare prices for the new running shoes.",
    "Send the invoice to the client by Monday.",
    "Plan a picnic if the weather stays sunny.",
    "Fix the squeaky door hinge in the hallway.",
    "Look up train times for the weekend trip.",
    "Donate the old winter coats to the shelter.",
    "Update the budget spreadsheet with October costs.",
)
FOLDERS = ("Archive", "Drafts", "Errands", "Finance", "Health", "Hobbies", "Ideas", "Meetings", "Projects",
           "School", "Travel")


# --- shell helpers ----------------------------------------------------------------------------------------


def note_path(name: str, folder: str = "") -> str:
    """Absolute path of a note (or folder) inside the Markor notebook."""
    return f"{MARKOR_DIR}/{folder}/{name}" if folder else f"{MARKOR_DIR}/{name}"


def write_note(device: Any, path: str, content: str) -> None:
    """Create or overwrite a file with ``content`` (plus the newline ``echo`` adds, as AndroidWorld's files have)."""
    out = device.shell(f"echo {quote(content)} > {quote(path)}")
    if out.strip():
        raise TaskError(f"could not write {path}: {out.strip()}")


def read_note(device: Any, path: str) -> str | None:
    """The file's text, or None when it does not exist (or is a folder)."""
    out = device.shell(f"cat {quote(path)}")
    if out.startswith("cat: ") and ("No such file" in out or "Is a directory" in out):
        return None
    return out


def list_dir(device: Any, path: str = MARKOR_DIR) -> dict[str, bool] | None:
    """{name: is_folder} from ``ls -l path``; None when the folder does not exist."""
    out = device.shell(f"ls -l {quote(path)}")
    if "No such file" in out:
        return None
    entries: dict[str, bool] = {}
    for line in out.splitlines():
        parts = line.split(None, 7)
        if len(parts) == 8 and line[:1] in "d-":
            entries[parts[7]] = line.startswith("d")
    return entries


_NOTES_EPOCH = dt.datetime(2023, 10, 14, 9, 0, 0)  # a day before the phone's frozen "now"


def reset_markor(device: Any, notes: dict[str, str] | None = None, folders: tuple[str, ...] = (),
                 spacing_s: list[int] | None = None) -> None:
    """Start state: Markor stopped, the home screen, the notebook holding exactly ``folders`` and ``notes``.

    ``notes`` maps paths relative to the notebook to contents, written in order; ``spacing_s``
    (one per note) spaces their modification times (``touch -d``) so the last written is the newest.
    """
    go_home(device, MARKOR_PACKAGE)
    device.shell(f"rm -rf {MARKOR_DIR} && mkdir -p {MARKOR_DIR}")
    for folder in folders:
        device.shell(f"mkdir -p {quote(note_path(folder))}")
    elapsed = 0
    for i, (rel, content) in enumerate((notes or {}).items()):
        write_note(device, note_path(rel), content)
        if spacing_s:
            elapsed += spacing_s[i]
            stamp = (_NOTES_EPOCH + dt.timedelta(seconds=elapsed)).strftime("%Y-%m-%d %H:%M:%S")
            device.shell(f"touch -d {quote(stamp)} {quote(note_path(rel))}")


def normalize_note(text: str | None) -> str:
    """Line ends stripped and trailing blank lines dropped (how note contents are compared)."""
    if text is None:
        return ""
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines()).strip("\n").strip()


def loose_lines(text: str | None) -> list[str]:
    """Non-blank lines, stripped, with inner whitespace collapsed (a lenient comparison)."""
    return [" ".join(line.split()) for line in (text or "").splitlines() if line.strip()]


# --- parameters ------------------------------------------------------------------------------------------


def random_note_name(rng: random.Random, extensions: tuple[str, ...] = (".md", ".txt")) -> str:
    """A realistic note file name such as ``trip_reflections_37.md``."""
    return f"{rng.choice(NOTE_STEMS)}_{rng.randint(1, 99)}{rng.choice(extensions)}"


def random_string(rng: random.Random, n: int) -> str:
    """``n`` random letters and digits."""
    return "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(n))


def noise_notes(rng: random.Random, n: int, avoid: set[str]) -> dict[str, str]:
    """``n`` distinct note names (none in ``avoid``) with a sentence each."""
    out: dict[str, str] = {}
    while len(out) < n:
        name = random_note_name(rng)
        if name not in avoid and name not in out:
            out[name] = rng.choice(SENTENCES)
    return out


# --- expert building blocks -------------------------------------------------------------------------------


ROW_ID = ":id/opoc_filesystem_item__root"
_ROW_KINDS = ("Folder ", "File ", "Selected ")


def row_name(element: Any) -> str | None:
    """The file or folder name of a file browser row (its content description is "File NAME DATE", "Folder NAME ",
    "Folder .. PATH" or "Selected NAME "), or None for anything else."""
    if not element.resource_id.endswith(ROW_ID):
        return None
    desc = element.content_desc or ""
    kind = next((k for k in _ROW_KINDS if desc.startswith(k)), None)
    if kind is None:
        return None
    rest = desc[len(kind):]
    if kind == "Folder " and rest.startswith(".. "):
        return ".."  # the emulator's ".." row may carry a folder's path after the name
    if kind == "File ":
        m = _DATE_RE.search(rest)
        return rest[:m.start() - 1] if m else rest.rstrip(" ")  # "NAME DATE"
    return rest[:-1] if rest.endswith(" ") else rest


def is_row(name: str) -> Any:
    """A predicate: the file browser row of ``name``."""
    return lambda e: row_name(e) == name


def row_title(ui: Any, name: str) -> Any | None:
    """The file browser row showing ``name``."""
    return find(ui, is_row(name))


def open_in_browser(ui: Any, name: str, long: bool = False):
    """Scroll the file list to ``name`` and tap (or long-press) it; returns the next ui."""
    ui, element = yield from scroll_to(ui, is_row(name))
    x, y = element.center
    return (yield (LongPress(x, y) if long else tap(element)))


def create_note_expert(ui: Any, file_name: str, text: str | None = None, paste: bool = False):
    """Open Markor, create ``file_name`` through the New file dialog, write or paste the text, Save."""
    ui = yield OpenApp("Markor")
    ui = yield from tap_text(ui, "Create a new file or folder", scroll=False)
    ui = yield from type_into(ui, file_name, resource_id="new_file_dialog__name")
    ui = yield from tap_text(ui, "OK", scroll=False)
    if paste:
        editor = find(ui, id_is(EDITOR_ID))
        if editor is None:
            raise ExpertStuck("the editor did not open")
        ui = yield LongPress(*editor.center)
        ui = yield from tap_text(ui, "Paste", scroll=False)
    elif text is not None:
        ui = yield from type_into(ui, text, resource_id=EDITOR_ID)
    return (yield from tap_text(ui, "Save", scroll=False))


def replace_editor_text(ui: Any, text: str):
    """Select everything in the open note (long-press, "Select all" when offered) and type ``text`` over it."""
    editor = find(ui, id_is(EDITOR_ID))
    if editor is None:
        raise ExpertStuck("no note editor on screen")
    ui = yield LongPress(*editor.center)
    if find(ui, text_is("Select all")) is not None:
        ui = yield from tap_text(ui, "Select all", scroll=False)
    return (yield Type(text))


def editor_text(ui: Any) -> str:
    """The open note's text as the editor shows it."""
    editor = find(ui, id_is(EDITOR_ID))
    if editor is None:
        raise ExpertStuck("no note editor on screen")
    return editor.text


def rename_in_browser(ui: Any, old: str, new: str):
    """Long-press ``old`` in the file list, Rename, replace the name with ``new``, OK."""
    ui = yield from open_in_browser(ui, old, long=True)
    ui = yield from tap_text(ui, "Rename", scroll=False)
    field = find(ui, id_is("new_name"))
    if field is None:
        raise ExpertStuck("the Rename dialog did not open")
    ui = yield LongPress(*field.center)  # selects the old name
    ui = yield Type(new)
    if find(ui, text_is("OK")) is None:  # the keyboard covers the dialog's buttons: hide it
        ui = yield PressBack()
    return (yield from tap_text(ui, "OK", scroll=False))


def delete_selected_expert(ui: Any):
    """Delete in the selection app bar, then OK in the confirmation."""
    ui = yield from tap_text(ui, "Delete", scroll=False)
    return (yield from tap_text(ui, "OK", scroll=False))


# --- tasks ---------------------------------------------------------------------------------------------------


class _MarkorTask(Task):
    app_names = ("markor",)
    suites = SUITES_AW
    difficulty = "easy"
    complexity = 2.0

    def start_notes(self) -> dict[str, str]:
        """Notes (path relative to the notebook -> content) the task starts with."""
        return dict(self.params.get("notes", {}))

    def start_folders(self) -> tuple[str, ...]:
        return tuple(self.params.get("folders", ()))

    def initialize(self, device: Any) -> None:
        reset_markor(device, self.start_notes(), self.start_folders(), self.params.get("spacing_s"))

    def teardown(self, device: Any) -> None:
        force_stop(device, MARKOR_PACKAGE)

    def notes_intact(self, device: Any, skip: frozenset[str] | set[str] = frozenset()) -> bool:
        """Every starting note except ``skip`` still exists with its content."""
        for rel, content in self.start_notes().items():
            if rel in skip:
                continue
            if normalize_note(read_note(device, note_path(rel))) != normalize_note(content):
                return False
        return True


@register_task
class MarkorCreateNote(_MarkorTask):
    """Create a note with a given name and text."""

    name = "MarkorCreateNote"
    template = "Create a new note in Markor named {file_name} with the following text: {text}"
    difficulty = "medium"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        file_name = random_note_name(rng)
        return {"file_name": file_name, "text": rng.choice(SENTENCES),
                "notes": noise_notes(rng, rng.randint(1, 4), {file_name})}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        content = read_note(device, note_path(self.params["file_name"]))
        if content is None:
            return 0.0
        return 1.0 if loose_lines(content) == loose_lines(self.params["text"]) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        yield from create_note_expert(ui, self.params["file_name"], self.params["text"])
        yield Finished()


@register_task
class MarkorCreateFolder(_MarkorTask):
    """Create a folder in the notebook root."""

    name = "MarkorCreateFolder"
    template = "Create a new folder in Markor named {folder_name}."

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        stamp = dt.datetime(2023, 10, rng.randint(1, 15), rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59))
        return {"folder_name": "folder_" + stamp.strftime("%Y%m%d_%H%M%S"),
                "notes": noise_notes(rng, rng.randint(1, 4), set())}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        entries = list_dir(device) or {}
        return 1.0 if entries.get(self.params["folder_name"]) is True else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Markor")
        ui = yield from tap_text(ui, "Create a new file or folder", scroll=False)
        ui = yield from type_into(ui, self.params["folder_name"], resource_id="new_file_dialog__name")
        yield from tap_text(ui, "FOLDER", scroll=False)
        yield Finished()


@register_task
class MarkorDeleteNote(_MarkorTask):
    """Delete one named note; the others must remain."""

    name = "MarkorDeleteNote"
    template = "Delete the note in Markor named {file_name}."

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        file_name = random_note_name(rng)
        notes = noise_notes(rng, rng.randint(2, 5), {file_name})
        notes[file_name] = rng.choice(SENTENCES)
        order = list(notes)
        rng.shuffle(order)
        return {"file_name": file_name, "notes": {k: notes[k] for k in order}}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        target = self.params["file_name"]
        if read_note(device, note_path(target)) is not None:
            return 0.0
        return 1.0 if self.notes_intact(device, skip={target}) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Markor")
        ui = yield from open_in_browser(ui, self.params["file_name"], long=True)
        yield from delete_selected_expert(ui)
        yield Finished()


@register_task
class MarkorDeleteAllNotes(_MarkorTask):
    """Delete every note in the notebook."""

    name = "MarkorDeleteAllNotes"
    template = "Delete all my notes in Markor."

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"notes": noise_notes(rng, rng.randint(2, 6), set())}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        entries = list_dir(device)
        return 1.0 if entries is not None and not entries else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Markor")
        names = [row_name(e) for e in ui.elements if row_name(e) not in (None, "..")]
        if not names:
            raise ExpertStuck("no notes listed")
        ui = yield from open_in_browser(ui, names[0], long=True)
        for name in names[1:]:  # in selection mode a tap adds a row
            ui = yield from open_in_browser(ui, name)
        yield from delete_selected_expert(ui)
        yield Finished()


_DATE_RE = re.compile(r"(\d{2})/(\d{2})/(\d{4}), (\d{1,2}):(\d{2})(?: ([AP]M))?$")


def _row_time(desc: str) -> dt.datetime | None:
    """The modification time a row's content description ends with ("10/15/2023, 15:34"), if any."""
    m = _DATE_RE.search(desc or "")
    if m is None:
        return None
    month, day, year, hour, minute = (int(g) for g in m.groups()[:5])
    if m.group(6):
        hour = hour % 12 + (12 if m.group(6) == "PM" else 0)
    return dt.datetime(year, month, day, hour, minute)


@register_task
class MarkorDeleteNewestNote(_MarkorTask):
    """Delete the note modified last; Sort by "Date modified" lists it first."""

    name = "MarkorDeleteNewestNote"
    template = "Delete the newest note in Markor."

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        notes = noise_notes(rng, rng.randint(2, 6), set())
        spacing = [0] + [rng.randint(60, 900) for _ in range(len(notes) - 1)]
        return {"notes": notes, "spacing_s": spacing}

    def newest(self) -> str:
        return list(self.start_notes())[-1]

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        entries = list_dir(device) or {}
        if self.newest() in entries or len(entries) != len(self.start_notes()) - 1:
            return 0.0
        return 1.0 if self.notes_intact(device, skip={self.newest()}) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        # the emulator's rows give only the first notes' dates, so sort by date: the newest note lists first
        ui = yield OpenApp("Markor")
        ui = yield from tap_text(ui, "Sort by", scroll=False)
        ui = yield from tap_text(ui, "Date modified", scroll=False)
        rows = [e for e in ui.elements if row_name(e) not in (None, "..") and e.content_desc.startswith("File ")]
        if not rows:
            raise ExpertStuck("no notes listed")
        ui = yield LongPress(*rows[0].center)
        yield from delete_selected_expert(ui)
        yield Finished()


class _EditNoteTask(_MarkorTask):
    """Open a note and rewrite its text; ``expected`` gives the text the note must end with."""

    def expected(self) -> str:
        raise NotImplementedError

    def new_text(self, original: str) -> str:
        """What the expert types over the note, given the text it reads in the editor."""
        raise NotImplementedError

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Markor")
        ui = yield from open_in_browser(ui, self.params["file_name"])
        shown = editor_text(ui)
        original = shown.rstrip("\n")
        ui = yield from replace_editor_text(ui, self.new_text(original) + shown[len(original):])  # keep the end
        if not self.params.get("new_name"):
            ui = yield from tap_text(ui, "Save", scroll=False)
        else:  # AndroidWorld's variants also rename the note: Back saves (Markor autosaves) and leaves the editor
            for _ in range(3):  # back from the editor (the keyboard first) to the file list
                if find(ui, lambda e: row_name(e) is not None) is not None:
                    break
                ui = yield PressBack()
            ui = yield from rename_in_browser(ui, self.params["file_name"], self.params["new_name"])
        yield Finished()


def _edit_params(rng: random.Random) -> dict[str, Any]:
    file_name = f"note_{random_string(rng, 5)}{rng.choice(('.md', '.txt'))}"
    original = rng.choice(SENTENCES)
    notes = noise_notes(rng, rng.randint(1, 4), {file_name})
    notes[file_name] = original
    return {"file_name": file_name, "original_content": original, "notes": notes}


class _PrependTask(_EditNoteTask):
    """Put ``header`` above a note's text with ``separator`` between them."""

    separator: ClassVar[str] = "\n"
    exact: ClassVar[bool] = False  # False: blank lines and inner spacing are ignored, as AndroidWorld matches fuzzily

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        content = read_note(device, note_path(self.params["file_name"]))
        if content is None:
            return 0.0
        expected = self.params["header"] + self.separator + self.params["original_content"]
        same = normalize_note if self.exact else loose_lines
        return 1.0 if same(content) == same(expected) else 0.0

    def new_text(self, original: str) -> str:
        kind = self.params.get("edit_type", "header")  # AndroidWorld's MarkorEditNote also draws footer and replace
        if kind == "footer":
            return original + self.separator + self.params["footer"]
        if kind == "replace":
            return self.params["replace_text"]
        return self.params["header"] + self.separator + original


@register_task
class MarkorEditNote(_PrependTask):
    """Add a line at the top of a note (blank lines are ignored in the check, as AndroidWorld matches fuzzily)."""

    name = "MarkorEditNote"
    template = "Edit {file_name} in Markor. Add to the top of the note {header}"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        params = _edit_params(rng)
        params["header"] = rng.choice([s for s in SENTENCES if s != params["original_content"]])
        return params


@register_task
class MarkorAddNoteHeader(_PrependTask):
    """Add a header line and a blank line above a note's text (checked exactly, line ends aside)."""

    name = "MarkorAddNoteHeader"
    template = ("Update the Markor note {file_name} by adding the following text, along with a new blank line "
                "before the existing content: \"{header}\".")
    difficulty = "medium"
    separator = "\n\n"
    exact = True

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        params = _edit_params(rng)
        params["header"] = random_string(rng, 20)
        return params


@register_task
class MarkorChangeNoteContent(_EditNoteTask):
    """Replace a note's whole text."""

    name = "MarkorChangeNoteContent"
    template = "Update the content of {file_name} to \"{updated_content}\" in Markor."
    difficulty = "medium"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        params = _edit_params(rng)
        params["original_content"] = random_string(rng, 20)
        params["notes"][params["file_name"]] = params["original_content"]
        params["updated_content"] = random_string(rng, 20)
        return params

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        content = read_note(device, note_path(self.params["file_name"]))
        if content is None or normalize_note(content) != normalize_note(self.params["updated_content"]):
            return 0.0
        return 1.0 if self.notes_intact(device, skip={self.params["file_name"]}) else 0.0

    def new_text(self, original: str) -> str:
        return self.params["updated_content"]


@register_task
class MarkorMoveNote(_MarkorTask):
    """Move a note from one folder to another; its content must come along."""

    name = "MarkorMoveNote"
    template = "In Markor, move the note {file_name} from {source_folder} to {destination_folder}."
    difficulty = "medium"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        folders = rng.sample(FOLDERS, rng.randint(2, 4))
        source, destination = folders[0], folders[1]
        file_name = random_note_name(rng)
        notes = {f"{source}/{k}": v for k, v in noise_notes(rng, rng.randint(1, 3), {file_name}).items()}
        notes[f"{source}/{file_name}"] = rng.choice(SENTENCES)
        return {"file_name": file_name, "source_folder": source, "destination_folder": destination,
                "folders": sorted(folders), "notes": notes}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        p = self.params
        moved = read_note(device, note_path(p["file_name"], p["destination_folder"]))
        if moved is None or read_note(device, note_path(p["file_name"], p["source_folder"])) is not None:
            return 0.0
        original = self.start_notes()[f"{p['source_folder']}/{p['file_name']}"]
        if normalize_note(moved) != normalize_note(original):
            return 0.0
        return 1.0 if self.notes_intact(device, skip={f"{p['source_folder']}/{p['file_name']}"}) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        p = self.params
        ui = yield OpenApp("Markor")
        ui = yield from open_in_browser(ui, p["source_folder"])
        ui = yield from open_in_browser(ui, p["file_name"], long=True)
        ui = yield from tap_text(ui, "More options", scroll=False)
        ui = yield from tap_text(ui, "Move", scroll=False)
        home = find(ui, id_is("ui__filesystem_dialog__home"))  # the picker opens in the source folder
        if home is None:
            raise ExpertStuck("the folder picker did not open")
        ui = yield tap(home)
        for part in p["destination_folder"].split("/"):
            ui = yield from tap_where(ui, is_row(part), scroll=False)
        yield from tap_text(ui, "SELECT THIS FOLDER", scroll=False)
        yield Finished()


@register_task
class MarkorCreateNoteFromClipboard(_MarkorTask):
    """Create a note and paste the clipboard into it."""

    name = "MarkorCreateNoteFromClipboard"
    template = "Create a note in Markor named {file_name}. Perform a paste operation in the note and save the note."
    difficulty = "medium"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        file_name = random_note_name(rng)
        return {"file_name": file_name, "file_content": random_string(rng, 10),
                "notes": noise_notes(rng, rng.randint(1, 3), {file_name})}

    def initialize(self, device: Any) -> None:
        super().initialize(device)
        set_clipboard(device, self.params["file_content"])

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        content = read_note(device, note_path(self.params["file_name"]))
        return 1.0 if content is not None and normalize_note(content) == self.params["file_content"] else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        yield from create_note_expert(ui, self.params["file_name"], paste=True)
        yield Finished()

