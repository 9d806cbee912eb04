"""Tasks that span two apps: AndroidWorld's Markor + SMS and Markor + Pro Expense tasks re-created.

``MarkorCreateNoteAndSms`` scores as AndroidWorld does: half for the note (name and text) and half
for the SMS (a message with the note's text sent to the number in the last five minutes of device
time, read from ``content://sms/sent``). ``ExpenseAddMultipleFromMarkor`` puts expenses in Markor's
``my_expenses.txt`` as AndroidWorld does (``name|amount_dollars|category_name|note`` lines, the targets'
notes ending ". Reimbursable."); those rows must be added to Pro Expense (the typed note may keep or drop
the suffix; the expert drops it, as AndroidWorld's check compares the original note) and nothing else may change.
"""

from __future__ import annotations

import random
from typing import Any

from android_gym.actions import Finished, OpenApp
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import force_stop
from android_gym.tasks.expert import ExpertStuck, tap_id, type_into
from android_gym.tasks.sim.contacts import random_phone_number
from android_gym.tasks.sim.expense import (
    EXPENSE_PACKAGE,
    add_expense_expert,
    random_expenses,
    reset_expenses,
    unchanged_plus,
)
from android_gym.tasks.sim.markor import (
    MARKOR_PACKAGE,
    SENTENCES,
    create_note_expert,
    editor_text,
    loose_lines,
    noise_notes,
    note_path,
    open_in_browser,
    random_note_name,
    read_note,
    reset_markor,
)
from android_gym.tasks.sim.sms import SMS_PKG, reset_sms, was_sent
from android_gym.tasks.suites import SUITES_AW

EXPENSES_FILE = "my_expenses.txt"
REIMBURSABLE = "Reimbursable."


@register_task
class MarkorCreateNoteAndSms(Task):
    """Write a note in Markor, then text its content to a number with Simple SMS Messenger."""

    name = "MarkorCreateNoteAndSms"
    template = ("Create a new note in Markor named {file_name} with the following text: {text}. Share the entire "
                "content of the note with the phone number {number} via SMS using Simple SMS Messenger")
    difficulty = "hard"
    complexity = 2.4
    app_names = ("markor", "simple sms messenger")
    suites = SUITES_AW

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        file_name = random_note_name(rng)
        return {"file_name": file_name, "text": rng.choice(SENTENCES).rstrip("."),
                "number": random_phone_number(rng), "notes": noise_notes(rng, rng.randint(1, 3), {file_name})}

    def initialize(self, device: Any) -> None:
        reset_sms(device)
        reset_markor(device, self.params["notes"])

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        content = read_note(device, note_path(self.params["file_name"]))
        note_ok = content is not None and loose_lines(content) == loose_lines(self.params["text"])
        sms_ok = was_sent(device, self.params["number"], self.params["text"])
        return (float(note_ok) + float(sms_ok)) / 2.0

    def teardown(self, device: Any) -> None:
        force_stop(device, MARKOR_PACKAGE, SMS_PKG)

    def expert(self, ui: Any) -> ExpertGenerator:
        p = self.params
        ui = yield from create_note_expert(ui, p["file_name"], p["text"])
        ui = yield OpenApp("Simple SMS Messenger")
        ui = yield from tap_id(ui, "conversations_fab")
        ui = yield from type_into(ui, p["number"], resource_id="new_conversation_address")
        ui = yield from tap_id(ui, "new_conversation_confirm", scroll=False)
        ui = yield from type_into(ui, p["text"], resource_id="thread_type_message")
        yield from tap_id(ui, "thread_send_message", scroll=False)
        yield Finished()


def expenses_csv(rows: list[dict[str, Any]]) -> str:
    """The note's text as AndroidWorld writes it: a ``name|amount_dollars|category_name|note`` header, then one
    such line per expense with the amount as ``$`` and the dollars as a float (``$123.4``)."""
    lines = ["name|amount_dollars|category_name|note"]
    lines += [f"{r['name']}|${r['cents'] / 100}|{r['category']}|{r['note']}" for r in rows]
    return "\n".join(lines)


def parse_expenses_csv(text: str) -> list[dict[str, Any]]:
    """Expense dicts (name, cents, category, note) from the note's ``|``-separated lines; the header is skipped."""
    out = []
    for line in text.splitlines():
        parts = [p.strip() for p in line.split("|")]
        if len(parts) < 4 or parts[0].lower() == "name":
            continue
        try:
            cents = int(round(float(parts[1].lstrip("$").replace(",", "")) * 100))
        except ValueError:
            continue
        out.append({"name": parts[0], "cents": cents, "category": parts[2], "note": "|".join(parts[3:])})
    return out


def without_reimbursable(note: str) -> str:
    """The note as it was before the file marked it: the trailing ". Reimbursable." dropped."""
    marked = ". " + REIMBURSABLE
    return note[: -len(marked)] if note.endswith(marked) else note


@register_task
class ExpenseAddMultipleFromMarkor(Task):
    """Read a CSV note in Markor and log its reimbursable expenses in Pro Expense."""

    name = "ExpenseAddMultipleFromMarkor"
    template = ("Go through the transactions in my_expenses.txt in Markor. Log the reimbursable transactions in "
                "the arduia pro expense.")
    difficulty = "hard"
    complexity = 4.0
    app_names = ("markor", "pro expense")
    suites = SUITES_AW

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        rows = random_expenses(rng, 2 + rng.randint(8, 12))
        targets, listed = rows[:2], rows[2:]
        in_file = [{**t, "note": f"{t['note']}. {REIMBURSABLE}"} for t in targets] + listed
        rng.shuffle(in_file)
        noise = random_expenses(rng, 8, {r["name"] for r in rows})
        return {"targets": targets, "file_rows": in_file, "noise": noise}

    def initialize(self, device: Any) -> None:
        reset_expenses(device, self.params["noise"])
        reset_markor(device, {EXPENSES_FILE: expenses_csv(self.params["file_rows"])})

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        targets = self.params["targets"]
        alt = {i: (f"{t['note']}. {REIMBURSABLE}",) for i, t in enumerate(targets)}
        return 1.0 if unchanged_plus(device, self.params["noise"], targets, alt) else 0.0

    def teardown(self, device: Any) -> None:
        force_stop(device, MARKOR_PACKAGE, EXPENSE_PACKAGE)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Markor")
        ui = yield from open_in_browser(ui, EXPENSES_FILE)
        wanted = [r for r in parse_expenses_csv(editor_text(ui)) if REIMBURSABLE.lower() in r["note"].lower()]
        if not wanted:
            raise ExpertStuck(f"no reimbursable transactions in {EXPENSES_FILE}")
        for row in wanted:
            ui = yield from add_expense_expert(ui, {**row, "note": without_reimbursable(row["note"])})
        yield Finished()
