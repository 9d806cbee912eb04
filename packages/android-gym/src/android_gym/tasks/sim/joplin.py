"""Joplin questions: AndroidWorld's NotesIsTodo, NotesMeetingAttendeeCount, NotesRecipeIngredientCount and
NotesTodoItemCount re-created.

Set-up writes Joplin's database the way a real device allows, with ``sqlite3`` on
``/data/data/net.cozic.joplin/databases/joplin.sqlite`` (notebooks in ``folders``, notes and to-dos in
``notes`` and its search index ``notes_normalized``), then force-stops the app. Each task hides its target
among noise notes in several notebooks, as AndroidWorld does (and with AndroidWorld's parameter names, so the
experts answer AndroidWorld's own instances). Answers are compared after normalisation (see
:func:`~android_gym.tasks.device_state.answers_match`).
"""

from __future__ import annotations

import random
import re
from typing import Any, ClassVar

from android_gym.actions import Finished, OpenApp, Scroll
from android_gym.sim.apps.joplin import JOPLIN_DB, JOPLIN_PKG, new_id
from android_gym.tasks.base import ExpertGenerator, Task, TaskError, register_task
from android_gym.tasks.device_state import answers_match, force_stop, go_home, quote
from android_gym.tasks.expert import ExpertStuck, find, find_all, id_is, tap, tap_text, type_into
from android_gym.tasks.suites import SUITES_AW

JOPLIN_APP = "Joplin"
FOLDERS = ("Personal", "Work", "School", "Home", "Projects", "Ideas", "Recipes", "Finance", "Health", "Travel")
NOISE_NOTES = (
    ("Weekend plans", "Hike on Saturday, brunch with Sam on Sunday."),
    ("Book list", "Dune, Middlemarch, The Overstory, Piranesi."),
    ("Gift ideas", "A scarf for Mum, a board game for Leo."),
    ("Car maintenance", "Oil change due in November; rotate the tyres."),
    ("Workout log", "Ran 5 km in 27 minutes; stretching afterwards."),
    ("Packing list", "Passport, chargers, rain jacket, walking shoes."),
    ("Budget notes", "Groceries came in under budget this month."),
    ("Garden", "Plant tulip bulbs before the first frost."),
    ("Movie night picks", "Arrival, Paddington 2, Spirited Away."),
    ("Study plan", "Chapters 3 and 4 this week, practice problems on Friday."),
    ("Team retro", "Keep the demo day; drop the Friday status mail."),
    ("Doctor questions", "Ask about the allergy test results."),
    ("Podcast ideas", "Interview a local baker about sourdough."),
    ("House chores", "Clean the gutters, fix the squeaky door."),
    ("Trip budget", "Flights 420, hotel 610, food about 300."),
)
MEETING_TITLES = ("Team Weekly Sync", "Client Quarterly Review", "Project Kickoff Meeting", "Budget Planning Session",
                  "Sales Strategy Discussion", "Product Roadmap Alignment", "Marketing Campaign Planning")
MEETING_BODIES = (
    "Meeting Notes:\n- Discussed project milestones\n- Assigned action items to team members\n- Attended by {n} "
    "participants\n",
    "Meeting Minutes:\n- Presented sales performance metrics\n- Addressed client concerns\n- {n} attendees were "
    "present\n",
    "Meeting Recap:\n- Analyzed customer feedback\n- Scheduled follow-up meetings\n- {n} individuals attended\n",
)
RECIPE_TITLES = ("Pancake Recipe", "Spaghetti Carbonara", "Chocolate Cake", "Beef Stew", "Lasagna", "Tacos")
INGREDIENTS = ("almond flour", "coconut sugar", "chia seeds", "tahini", "matcha powder", "hemp seeds", "millet")
QUANTITIES = ("1 cup", "2 cups", "1/2 cup", "3/4 cup", "1/4 cup", "1 tablespoon", "2 tablespoons", "1 teaspoon")
RECIPE_BODY = ("Ingredients:\n- 1 cup all-purpose flour\n- 1/2 cup granulated sugar\n- {qty} {ingredient}\n"
               "- 1 teaspoon baking powder\n- 2 tablespoons unsalted butter\n\nInstructions:\n1. Preheat oven to "
               "350°F (175°C).\n2. Combine everything in a bowl.\n3. Bake for 25-30 minutes.\n")
TODO_TITLES = ("Grocery List", "Meeting Agenda", "Project Proposal", "Daily Journal", "To-Do List", "Research Notes",
               "Travel Itinerary", "Recipe Collection", "Budget Spreadsheet", "Training Manual")
ATTENDANCE_WORDS = ("attend", "particip", "present", "individual", "people")


# --- shell helpers -------------------------------------------------------------------------------------------


def _sql_text(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def reset_joplin(device: Any, notes: list[dict[str, Any]]) -> None:
    """Start state: Joplin stopped, the home screen, exactly ``notes`` (dicts with folder, title, body, is_todo,
    todo_completed) in notebooks named by their ``folder``."""
    folders: dict[str, str] = {}
    ids = random.Random(repr(notes))  # ids follow from the notes: the same set-up on every device
    statements = ["DELETE FROM notes", "DELETE FROM notes_normalized", "DELETE FROM folders"]
    stamp = 1697296440000  # October 14 2023 15:14, a day before the phone's frozen now
    for note in notes:
        if note["folder"] not in folders:
            folders[note["folder"]] = new_id(ids)
            statements.append("INSERT INTO folders (id, title, created_time, updated_time, user_created_time, "
                              f"user_updated_time) VALUES ('{folders[note['folder']]}', {_sql_text(note['folder'])}, "
                              f"{stamp}, {stamp}, {stamp}, {stamp})")
        values = (f"'{new_id(ids)}', '{folders[note['folder']]}', {_sql_text(note['title'])}, "
                  f"{_sql_text(note['body'])}, {int(note.get('is_todo', 0))}, {int(note.get('todo_completed', 0))}")
        for table, title in (("notes", note["title"]), ("notes_normalized", note["title"].lower())):
            row = values.replace(_sql_text(note["title"]), _sql_text(title), 1)
            times = "created_time, updated_time, " if table == "notes" else ""
            stamps = f"{stamp}, {stamp}, " if table == "notes" else ""
            statements.append(f"INSERT INTO {table} (id, parent_id, title, body, is_todo, todo_completed, {times}"
                              f"user_created_time, user_updated_time) VALUES ({row}, {stamps}{stamp}, {stamp})")
    out = device.shell(f"sqlite3 {JOPLIN_DB} {quote('; '.join(statements) + ';')}")
    if out.strip():
        raise TaskError(f"could not write Joplin's database: {out.strip()}")
    go_home(device, JOPLIN_PKG)


def noise(rng: random.Random, n: int, keep: Any = None) -> list[dict[str, Any]]:
    """``n`` random notes and to-dos over :data:`FOLDERS` for which ``keep(note)`` holds."""
    out: list[dict[str, Any]] = []
    while len(out) < n:
        title, body = rng.choice(NOISE_NOTES)
        todo = rng.random() < 0.5
        note = {"folder": rng.choice(FOLDERS), "title": title, "body": body, "is_todo": int(todo),
                "todo_completed": int(todo and rng.random() < 0.5)}
        if keep is None or keep(note):
            out.append(note)
    return out


# --- expert building blocks ----------------------------------------------------------------------------------


def search_note(ui: Any, title: str):
    """Open Joplin, search for ``title``; returns (ui, the result row's title element)."""
    ui = yield OpenApp(JOPLIN_APP)
    ui = yield from tap_text(ui, "Search", scroll=False)
    ui = yield from type_into(ui, title, resource_id="search_query")
    row = find(ui, lambda e: e.resource_id.endswith(":id/note_title") and e.text.lower() == title.lower())
    if row is None:
        raise ExpertStuck(f"no note titled {title!r} among the search results")
    return ui, row


def _in_row(ui: Any, element: Any, resource_id: str) -> Any | None:
    """The element with ``resource_id`` on the same list row as ``element`` (vertical overlap)."""
    top, bottom = element.bounds[1], element.bounds[3]
    return find(ui, lambda e: id_is(resource_id)(e) and e.bounds[1] < bottom and e.bounds[3] > top)


def read_note_body(ui: Any, title: str):
    """Search for ``title``, open it; returns (ui, its body text)."""
    ui, row = yield from search_note(ui, title)
    ui = yield tap(row)
    body = find(ui, id_is("note_body_text"))
    if body is None:
        raise ExpertStuck(f"note {title!r} did not open")
    return ui, body.text


# --- tasks ---------------------------------------------------------------------------------------------------


class _JoplinQuestion(Task):
    """A question answered from Joplin's notes; scored on the answer against ``params["answer"]``."""

    app_names = ("joplin",)
    suites = SUITES_AW
    answer_task = True
    difficulty = "easy"
    complexity = 1.0

    def initialize(self, device: Any) -> None:
        reset_joplin(device, self.params["notes"])

    def teardown(self, device: Any) -> None:
        force_stop(device, JOPLIN_PKG)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if answers_match(answer, [self.params["answer"]]) else 0.0


@register_task
class NotesIsTodo(_JoplinQuestion):
    """Is the note with this title a to-do?"""

    name = "NotesIsTodo"
    template = ("Is the note titled '{title}' in the Joplin app marked as a todo item? Respond with either 'True' if "
                "it is a todo or 'False' if not.")

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        title = rng.choice(TODO_TITLES)
        todo = rng.random() < 0.5
        target = {"folder": rng.choice(FOLDERS), "title": title, "body": rng.choice(NOISE_NOTES)[1],
                  "is_todo": int(todo), "todo_completed": 0}
        notes = noise(rng, 40, lambda n: n["title"].lower() != title.lower()) + [target]
        rng.shuffle(notes)
        return {"title": title, "is_todo": str(todo), "answer": str(todo), "notes": notes}

    def expert(self, ui: Any) -> ExpertGenerator:
        ui, row = yield from search_note(ui, self.params["title"])
        yield Finished("True" if _in_row(ui, row, "todo_checkbox") is not None else "False")


@register_task
class NotesMeetingAttendeeCount(_JoplinQuestion):
    """How many attended the meeting whose notes have this title?"""

    name = "NotesMeetingAttendeeCount"
    template = ("How many attendees were present in the meeting titled '{title}' in the Joplin app? Express your "
                "answer as just a single number.")

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        title = rng.choice(MEETING_TITLES)
        count = str(rng.choice(range(5, 105, 5)))
        target = {"folder": "Meeting Notes", "title": title, "body": rng.choice(MEETING_BODIES).format(n=count),
                  "is_todo": 0, "todo_completed": 0}
        notes = noise(rng, 40) + [target]
        rng.shuffle(notes)
        return {"title": title, "attendee_count": count, "answer": count, "notes": notes}

    def expert(self, ui: Any) -> ExpertGenerator:
        ui, body = yield from read_note_body(ui, self.params["title"])
        for line in body.splitlines():
            number = re.search(r"\d+", line)
            if number is not None and any(w in line.lower() for w in ATTENDANCE_WORDS):
                yield Finished(number.group(0))
                return
        raise ExpertStuck("the meeting note names no attendance")


@register_task
class NotesRecipeIngredientCount(_JoplinQuestion):
    """How much of an ingredient does a recipe need?"""

    name = "NotesRecipeIngredientCount"
    template = ("What quantity of {ingredient} do I need for the recipe '{title}' in the Joplin app? Express your "
                "answer in the format <amount> <unit> without using abbreviations.")

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        title = rng.choice(RECIPE_TITLES)
        ingredient = rng.choice(INGREDIENTS)
        qty = rng.choice(QUANTITIES)
        target = {"folder": "Recipes", "title": title, "body": RECIPE_BODY.format(qty=qty, ingredient=ingredient),
                  "is_todo": 0, "todo_completed": 0}
        notes = noise(rng, 40) + [target]
        rng.shuffle(notes)
        return {"title": title, "ingredient": ingredient, "ingredient_quantity": qty, "answer": qty, "notes": notes}

    def expert(self, ui: Any) -> ExpertGenerator:
        ingredient = self.params["ingredient"].lower()
        ui, body = yield from read_note_body(ui, self.params["title"])
        for line in body.splitlines():
            item = line.strip().lstrip("-*").strip()
            if item.lower().endswith(" " + ingredient):
                yield Finished(item[: -len(ingredient)].strip())
                return
        raise ExpertStuck(f"the recipe lists no {ingredient}")


@register_task
class NotesTodoItemCount(_JoplinQuestion):
    """How many to-dos are in a notebook?"""

    name = "NotesTodoItemCount"
    template = "How many to-dos do I have in the '{folder}' folder in the Joplin app? Express your answer as just a single number."
    difficulty = "medium"
    max_scrolls: ClassVar[int] = 5

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        folder = rng.choice(FOLDERS)
        titles = rng.sample(TODO_TITLES, 3)
        targets = [{"folder": folder, "title": t, "body": rng.choice(NOISE_NOTES)[1], "is_todo": 1,
                    "todo_completed": 0} for t in titles]
        notes = noise(rng, 45, lambda n: not (n["folder"] == folder and n["is_todo"])) + targets
        rng.shuffle(notes)
        return {"folder": folder, "answer": "3", "notes": notes}

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(JOPLIN_APP)
        ui = yield from tap_text(ui, "Side menu", scroll=False)
        ui = yield from tap_text(ui, self.params["folder"])
        todos: list[str] = []
        shown: list[str] = []
        for _ in range(self.max_scrolls + 1):
            titles = find_all(ui, id_is("note_title"))
            now = [t.text for t in titles]
            if now == shown:
                break  # the list did not move: its end
            shown = now
            for t in titles:
                if _in_row(ui, t, "todo_checkbox") is not None and t.text not in todos:
                    todos.append(t.text)
            listing = find(ui, id_is("note_list"))
            if listing is None or not titles or titles[-1].bounds[3] < listing.bounds[3] - 60:
                break  # the whole list is on screen
            ui = yield Scroll("down", *listing.center)
        yield Finished(str(len(todos)))


__all__ = ["NotesIsTodo", "NotesMeetingAttendeeCount", "NotesRecipeIngredientCount", "NotesTodoItemCount",
           "reset_joplin"]
