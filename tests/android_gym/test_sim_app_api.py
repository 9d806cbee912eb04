"""The app API of the simulated phone, exercised through the example app from the SIM_API guide."""

from __future__ import annotations

from android_gym.sim import (
    App,
    Column,
    Dialog,
    EditText,
    Fab,
    ImageButton,
    ListItem,
    ScrollList,
    SimPhone,
    Text,
    Toolbar,
)


class NotesApp(App):
    """The guide's example: a list of notes, an editor page, a delete dialog and a content provider."""

    package = "com.example.notes"
    label = "Notes"
    activity = ".NotesActivity"
    authorities = ("com.example.notes",)

    def setup(self) -> None:
        self.notes: list[dict] = [{"_id": 1, "title": "Groceries", "body": "milk"}]
        self.next_id = 2
        self.draft = ""

    def build_main(self) -> Column:
        items = [ListItem(n["title"], n["body"], lambda n=n: self.push("edit", note_id=n["_id"]),
                          on_long_click=lambda n=n: self.show_dialog("delete", note_id=n["_id"]),
                          resource_id="note_row", title_id="note_title")
                 for n in self.notes]
        return Column(
            Toolbar("Notes"),
            ScrollList(items or [Text("No notes yet")], "main:notes", resource_id="notes_list"),
            Fab("New note", self.new_note),
            weight=1,
        )

    def new_note(self) -> None:
        self.draft = ""
        self.push("edit", note_id=None)

    def build_edit(self, note_id: int | None) -> Column:
        return Column(
            Toolbar("Edit note", on_back=self.pop, actions=[ImageButton("Save", lambda: self.save(note_id))]),
            EditText(self.draft, self.set_draft, hint="Title", resource_id="title_input"),
            weight=1,
        )

    def set_draft(self, value: str) -> None:
        self.draft = value

    def save(self, note_id: int | None) -> None:
        if not self.draft.strip():
            self.toast("Title is empty")
            return
        self.notes.append({"_id": self.next_id, "title": self.draft, "body": ""})
        self.next_id += 1
        self.pop()
        self.toast("Saved")

    def dialog_delete(self, note_id: int) -> Column:
        return Dialog("Delete note?", "This cannot be undone.",
                      [("Cancel", self.close_dialog), ("Delete", lambda: self.delete(note_id))])

    def delete(self, note_id: int) -> None:
        self.notes = [n for n in self.notes if n["_id"] != note_id]
        self.close_dialog()

    def content_query(self, uri: str) -> list[dict]:
        return [dict(n) for n in self.notes]


def center(phone: SimPhone, text: str) -> tuple[int, int]:
    for e in phone.frame.entries:
        if text in (e.text, e.view.content_desc):
            x1, y1, x2, y2 = e.bounds
            return (x1 + x2) // 2, (y1 + y2) // 2
    raise AssertionError(f"{text!r} not on screen: {[e.text for e in phone.frame.entries if e.text]}")


def on_screen(phone: SimPhone, text: str) -> bool:
    return any(text in (e.text, e.view.content_desc) for e in phone.frame.entries)


def test_example_app_add_note_through_fab_keyboard_and_save():
    phone = SimPhone(apps=[NotesApp])
    phone.launch("com.example.notes")
    assert phone.current_activity() == "com.example.notes/.NotesActivity"
    assert on_screen(phone, "Groceries")
    phone.tap(*center(phone, "New note"))
    phone.tap(*center(phone, "Title"))
    assert phone.keyboard_shown
    phone.type_text("Call ")
    for ch in "mom":
        phone.tap(*center(phone, ch))  # soft keyboard keys type too
    assert phone.focused_field().text == "Call mom"
    phone.tap(*center(phone, "Save"))
    assert on_screen(phone, "Call mom") and on_screen(phone, "Saved")
    assert [n["title"] for n in phone.app("com.example.notes").notes] == ["Groceries", "Call mom"]


def test_example_app_dialog_is_modal_and_back_closes_it():
    phone = SimPhone(apps=[NotesApp])
    phone.launch("com.example.notes")
    phone.long_press(*center(phone, "Groceries"))
    assert on_screen(phone, "Delete note?")
    phone.tap(*center(phone, "Groceries"))  # outside the dialog: cancels it, does not open the note
    assert not on_screen(phone, "Delete note?") and not on_screen(phone, "Edit note")
    phone.long_press(*center(phone, "Groceries"))
    phone.back()
    assert not on_screen(phone, "Delete note?")
    phone.long_press(*center(phone, "Groceries"))
    phone.tap(*center(phone, "Delete"))
    assert phone.app("com.example.notes").notes == []
    assert on_screen(phone, "No notes yet")
    phone.back()
    assert phone.foreground == "com.google.android.apps.nexuslauncher"


def test_example_app_content_provider_through_the_shell():
    phone = SimPhone(apps=[NotesApp])
    out = phone.shell("content query --uri content://com.example.notes/notes --projection title:_id "
                      "--where \"title='Groceries'\"")
    assert out == "Row: 0 title=Groceries, _id=1\n"
    phone.shell("content insert --uri content://com.example.notes/notes --bind title:s:x")
    assert phone.last_status == 1  # the example app does not support insert: an error, not a crash
    assert phone.shell("content query --uri content://com.example.notes/notes --where \"_id > 5\"") == \
        "No result found.\n"


def test_snapshot_restores_app_pages_and_data():
    phone = SimPhone(apps=[NotesApp])
    phone.launch("com.example.notes")
    phone.snapshot_save("clean")
    phone.tap(*center(phone, "New note"))
    phone.type_text("Draft")
    phone.app("com.example.notes").notes.clear()
    phone.snapshot_load("clean")
    app = phone.app("com.example.notes")
    assert app.page == "main" and [n["title"] for n in app.notes] == ["Groceries"]
    assert app.phone is phone and on_screen(phone, "Groceries")
