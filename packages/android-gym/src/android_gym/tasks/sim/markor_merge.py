"""AndroidWorld's MarkorMergeNotes re-created: three notes merged, in order, into a new note.

The new note's name has no extension (AndroidWorld draws eight random letters and digits), so the New file
dialog's extension field (".md" by default) must be emptied, as in the real Markor. Scored as AndroidWorld
does: the new file's text, stripped, is the three contents separated by one blank line each.
"""

from __future__ import annotations

import random
from typing import Any

from android_gym.actions import Finished, LongPress, OpenApp, PressBack
from android_gym.sim.apps.markor import TEXT_EXTENSIONS
from android_gym.tasks.base import ExpertGenerator, register_task
from android_gym.tasks.expert import ExpertStuck, find, id_is, tap_text, type_into
from android_gym.tasks.sim.markor import (
    EDITOR_ID,
    _MarkorTask,
    editor_text,
    noise_notes,
    note_path,
    open_in_browser,
    random_note_name,
    random_string,
    read_note,
)


def merged_lines(content: str | None) -> list[str] | None:
    """The merged note's lines once stripped (None when the note does not exist)."""
    return None if content is None else content.replace("\r", "").strip().split("\n")


def read_note_expert(ui: Any, name: str):
    """Open ``name`` from the file list, read the editor's text, go back to the list; returns (ui, text)."""
    ui = yield from open_in_browser(ui, name)
    text = editor_text(ui)
    for _ in range(2):
        if find(ui, id_is(EDITOR_ID)) is None:
            break
        ui = yield PressBack()
    return ui, text


def new_note_expert(ui: Any, name: str, text: str):
    """The New file dialog (emptying the extension when ``name`` has none of Markor's), the text, Save."""
    ui = yield from tap_text(ui, "Create a new file or folder", scroll=False)
    ui = yield from type_into(ui, name, resource_id="new_file_dialog__name")
    if not name.lower().endswith(TEXT_EXTENSIONS):
        field = find(ui, id_is("new_file_dialog__ext"))
        if field is None:
            raise ExpertStuck("the New file dialog has no extension field")
        ui = yield LongPress(*field.center)
        ui = yield from tap_text(ui, "Cut", scroll=False)
    ui = yield from tap_text(ui, "OK", scroll=False)
    ui = yield from type_into(ui, text, resource_id=EDITOR_ID)
    return (yield from tap_text(ui, "Save", scroll=False))


@register_task
class MarkorMergeNotes(_MarkorTask):
    """Merge three notes into a new one, a blank line between each."""

    name = "MarkorMergeNotes"
    template = ("Merge the contents of Markor notes {file1_name}, {file2_name} and {file3_name} (in the same order) "
                "into a new Markor note named {new_file_name} and save it. Add a new line between the content of "
                "each note.")
    difficulty = "hard"
    complexity = 7.8

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        names: list[str] = []
        while len(names) < 3:
            candidate = random_note_name(rng)
            if candidate not in names:
                names.append(candidate)
        params: dict[str, Any] = {f"file{i + 1}_name": n for i, n in enumerate(names)}
        params.update({f"file{i + 1}_content": random_string(rng, 20) for i in range(3)})
        params["new_file_name"] = random_string(rng, 8)
        params["notes"] = noise_notes(rng, rng.randint(1, 3), set(names))
        return params

    def start_notes(self) -> dict[str, str]:
        notes = dict(self.params.get("notes", {}))
        notes.update({self.params[f"file{i}_name"]: self.params[f"file{i}_content"] for i in (1, 2, 3)})
        return notes

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        p = self.params
        lines = merged_lines(read_note(device, note_path(p["new_file_name"])))
        expected = [p["file1_content"], "", p["file2_content"], "", p["file3_content"]]
        return 1.0 if lines == expected else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Markor")
        texts = []
        for i in (1, 2, 3):
            ui, text = yield from read_note_expert(ui, self.params[f"file{i}_name"])
            texts.append(text.strip())
        yield from new_note_expert(ui, self.params["new_file_name"], "\n\n".join(texts))
        yield Finished()


__all__ = ["MarkorMergeNotes", "new_note_expert", "read_note_expert"]
