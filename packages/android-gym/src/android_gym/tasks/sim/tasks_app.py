"""Tasks (org.tasks) questions: AndroidWorld's six information-retrieval tasks on the Tasks app re-created.

Set-up writes the app's own database through the shell (``sqlite3 /data/data/org.tasks/databases/database``,
the ``tasks`` table AndroidWorld fills), with the phone's date frozen at Sunday, October 15 2023
(:data:`~android_gym.tasks.sim.calendar.DEVICE_NOW`). Every instance holds a few target tasks and
about twenty others that never meet the question's condition, as AndroidWorld builds them.
Answers are scored AndroidWorld's way for these tasks: titles as a comma-separated list naming each
expected title once (case and punctuation aside), counts as one integer.

The experts read the task list as a person does: open the app, switch on "Show hidden" (or "Show
completed" for the completed-tasks question) in More options, scroll through every row reading its
title, due date, priority (the check box's description) and whether it is checked, and answer.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from android_gym.actions import Finished, OpenApp, Scroll
from android_gym.tasks.base import ExpertGenerator, Task, TaskError, register_task
from android_gym.tasks.device_state import answers_match, go_home, to_ms
from android_gym.tasks.expert import ExpertStuck, find, find_all, id_is, rows_in_view, tap_text, within
from android_gym.tasks.sim.calendar import DEVICE_NOW
from android_gym.tasks.suites import SUITES_AW

TASKS_PACKAGE = "org.tasks"
TASKS_APP = "Tasks"
TASKS_DB = "/data/data/org.tasks/databases/database"
DATE_FMT = "%B %d %Y"
PRIORITY_NAMES = {0: "High", 1: "Medium", 2: "Low", 3: "None"}

TARGET_TITLES = (
    "Complete project proposal", "Review code changes", "Schedule team meeting", "Submit expense report",
    "Update website content", "Review quarterly goals", "Organize files and folders", "Draft marketing email",
    "Attend networking event", "Prepare presentation for meeting", "Call client for follow-up",
    "Research market trends", "Follow up on support tickets", "Book flights for conference", "Plan team outing",
    "Review performance metrics", "Send report to manager", "Plan family reunion", "Read book for book club",
)
OTHER_TITLES = (
    "Buy groceries", "Water the garden", "Pay electricity bill", "Call the plumber", "Renew passport",
    "Clean the garage", "Walk the dog", "Fix the bike", "Return library books", "Order printer ink",
    "Back up the laptop", "Book a haircut", "Defrost the freezer", "Sort old photos", "Change bed sheets",
)
NOTES = ("Remember to complete this task.", "This task is important.", "Double-check details.",
         "Follow up with others.", "Check email for updates.", "")


# --- set-up through the shell ------------------------------------------------------------------------------


def _ms(iso: str) -> int:
    return to_ms(dt.datetime.fromisoformat(iso)) if iso else 0


def reset_tasks(device: Any, rows: list[dict[str, Any]]) -> None:
    """Start state: Tasks stopped on the home screen, its ``tasks`` table holding exactly ``rows``."""
    go_home(device, TASKS_PACKAGE)
    values = []
    for i, r in enumerate(rows):
        created = _ms(r["due"]) - 7 * 24 * 3600 * 1000 if r["due"] else to_ms(DEVICE_NOW)
        notes = r["notes"].replace("'", "''")
        values.append(
            f"('{r['title'].replace(chr(39), chr(39) * 2)}', {r['importance']}, {_ms(r['due'])}, {_ms(r['hide'])}, "
            f"{created}, {created}, {_ms(r['completed'])}, 0, '{notes}', 0, 0, 0, 0, 0, 0, '{1000 + i}', "
            "0, 0, 0)")
    sql = "DELETE FROM tasks;"
    if values:
        sql += ("INSERT INTO tasks (title, importance, dueDate, hideUntil, created, modified, completed, deleted, "
                "notes, estimatedSeconds, elapsedSeconds, timerStart, notificationFlags, lastNotified, repeat_from, "
                "remoteId, collapsed, parent, read_only) VALUES " + ", ".join(values) + ";")
    out = device.shell(f'sqlite3 {TASKS_DB} "{sql}"')
    if out.strip():
        raise TaskError(f"could not write the Tasks database: {out.strip()}")


def _random_row(rng: random.Random, title: str, *, day: dt.date | None = None, importance: int | None = None,
                completed: bool | None = None) -> dict[str, Any]:
    """One task: due on ``day`` (or within a week of today), hidden until some days before, maybe completed."""
    if day is None:
        day = DEVICE_NOW.date() + dt.timedelta(days=rng.randint(-7, 7))
    due = dt.datetime.combine(day, dt.time(rng.randint(0, 23), rng.choice((0, 15, 30, 45))))
    hide = due - dt.timedelta(days=rng.randint(1, 8), hours=rng.randint(0, 12))
    done = rng.random() < 0.5 if completed is None else completed
    finished = DEVICE_NOW - dt.timedelta(days=rng.randint(1, 20), minutes=rng.randint(0, 600)) if done else None
    return {"title": title, "importance": rng.randint(0, 3) if importance is None else importance,
            "due": due.isoformat(timespec="minutes"), "hide": hide.isoformat(timespec="minutes"),
            "completed": finished.isoformat(timespec="minutes") if finished else "", "notes": rng.choice(NOTES)}


def _noise(rng: random.Random, n: int, keep: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while len(out) < n:
        row = _random_row(rng, rng.choice(OTHER_TITLES))
        if keep(row):
            out.append(row)
    return out


def _due_day(row: dict[str, Any]) -> dt.date | None:
    return dt.datetime.fromisoformat(row["due"]).date() if row["due"] else None


# --- reading the list ----------------------------------------------------------------------------------------


def parse_due(text: str) -> dt.date | None:
    """The date of a row's due text ("Oct 16, 2023" or "Oct 16, 2023, 5:00 PM")."""
    m = re.match(r"([A-Z][a-z]{2}) (\d{1,2}), (\d{4})", text.strip())
    if m is None:
        return None
    return dt.datetime.strptime(" ".join(m.groups()), "%b %d %Y").date()


def _visible_rows(ui: Any, first_page: bool, at_end: bool) -> list[tuple[str, dt.date | None, str, bool]]:
    """(title, due day, priority, completed) of each row on screen whole (``rows_in_view``: none the list's
    edges may cut)."""
    rows = []
    for row in rows_in_view(ui, "recycler_view", "task_row", first_page=first_page, at_end=at_end,
                            what="task list"):
        parts = [e for e in ui.elements if e.parent_id == row.id or within(e.bounds, row.bounds)]
        title = next((e.text for e in parts if e.resource_id.endswith(":id/title")), None)
        box = next((e for e in parts if e.resource_id.endswith(":id/completeBox")), None)
        if title is None or box is None:
            continue
        due = next((parse_due(e.text) for e in parts if e.resource_id.endswith(":id/due_date")), None)
        rows.append((title, due, box.content_desc.replace(" priority", ""), box.checked))
    return rows


def read_task_list(ui: Any, show: tuple[str, ...] = ("Show hidden",)):
    """Open Tasks, switch on the ``show`` options, scroll through the list; returns (ui, every row read)."""
    ui = yield OpenApp(TASKS_APP)
    for option in show:
        ui = yield from tap_text(ui, "More options", scroll=False)
        box = find(ui, lambda e, o=option: e.text == o)
        if box is None:
            raise ExpertStuck(f"no {option!r} in the list's menu")
        if box.checked:
            ui = yield from tap_text(ui, "More options", scroll=False)  # already on: leave the menu by Back
        else:
            ui = yield from tap_text(ui, option, scroll=False)
    seen: list[tuple[str, dt.date | None, str, bool]] = []
    for scrolls in range(12):
        for row in _visible_rows(ui, first_page=scrolls == 0, at_end=False):
            if row not in seen:
                seen.append(row)
        lists = find_all(ui, id_is("recycler_view"))
        if not lists or find(ui, id_is("empty")) is not None:
            return ui, seen
        before = [(e.text, e.bounds) for e in ui.elements if e.resource_id.endswith(":id/title")]
        ui = yield Scroll("down", *lists[0].center)
        after = [(e.text, e.bounds) for e in ui.elements if e.resource_id.endswith(":id/title")]
        if after == before:  # the list's end
            for row in _visible_rows(ui, first_page=False, at_end=True):
                if row not in seen:
                    seen.append(row)
            return ui, seen
    raise ExpertStuck("the task list did not end after 12 scrolls")


def _day_param(params: dict[str, Any], key: str = "date") -> dt.date:
    return dt.datetime.strptime(params[key], DATE_FMT).date()


# --- tasks ---------------------------------------------------------------------------------------------------


class _TasksQuestion(Task):
    """A question answered from the Tasks app; the instance's rows are ``rows``, the answer ``titles`` or ``count``."""

    app_names = ("tasks",)
    suites = SUITES_AW
    answer_task = True

    def initialize(self, device: Any) -> None:
        reset_tasks(device, self.params["rows"])

    def teardown(self, device: Any) -> None:
        go_home(device, TASKS_PACKAGE)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        if "count" in self.params:
            try:
                return 1.0 if answer is not None and int(answer.strip()) == self.params["count"] else 0.0
            except ValueError:
                return 0.0
        return 1.0 if answers_match(answer, self.params["titles"]) else 0.0

    @staticmethod
    def _params(rng: random.Random, targets: list[dict[str, Any]], keep: Callable[[dict[str, Any]], bool],
                **extra: Any) -> dict[str, Any]:
        rows = targets + _noise(rng, 20, keep)
        rng.shuffle(rows)
        return {**extra, "titles": [t["title"] for t in targets], "rows": rows}

    def answer_from(self, rows: list[tuple[str, dt.date | None, str, bool]]) -> str:
        """The answer an expert gives from the rows it read."""
        raise NotImplementedError

    show: ClassVar[tuple[str, ...]] = ("Show hidden",)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui, rows = yield from read_task_list(ui, self.show)
        yield Finished(self.answer_from(rows))


def _titles(rows: Iterable[tuple[str, dt.date | None, str, bool]]) -> str:
    return ", ".join(dict.fromkeys(r[0] for r in rows))


def _targets(rng: random.Random, n: int, **kw: Any) -> list[dict[str, Any]]:
    return [_random_row(rng, t, **kw) for t in rng.sample(TARGET_TITLES, n)]


@register_task
class TasksDueOnDate(_TasksQuestion):
    """Three open tasks due on a day of the next two weeks; name them."""

    name = "TasksDueOnDate"
    template = ("What tasks do I have due {date} in Tasks app? Answer with the titles only. If there are multiples "
                "titles, format your answer in a comma separated list.")
    difficulty = "easy"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        day = dt.date(2023, 10, rng.randint(15, 29))
        return cls._params(rng, _targets(rng, 3, day=day, completed=False), lambda r: _due_day(r) != day,
                           date=day.strftime(DATE_FMT))

    def answer_from(self, rows: list[tuple[str, dt.date | None, str, bool]]) -> str:
        day = _day_param(self.params)
        return _titles(r for r in rows if r[1] == day)


@register_task
class TasksHighPriorityTasks(_TasksQuestion):
    """One open high-priority task (maybe hidden until later today); name it."""

    name = "TasksHighPriorityTasks"
    template = ("What are my high priority tasks in Tasks app? Answer with the titles only. If there are multiples "
                "titles, format your answer in a comma separated list.")
    difficulty = "medium"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        target = _targets(rng, 1, day=dt.date(2023, 10, rng.randint(16, 22)), importance=0, completed=False)
        target[0]["hide"] = dt.datetime(2023, 10, rng.randint(10, 15), rng.randint(6, 22), 0).isoformat()
        return cls._params(rng, target, lambda r: r["importance"] != 0)

    def answer_from(self, rows: list[tuple[str, dt.date | None, str, bool]]) -> str:
        return _titles(r for r in rows if r[2] == "High" and not r[3])


@register_task
class TasksHighPriorityTasksDueOnDate(_TasksQuestion):
    """One high-priority task due on a day; other tasks that day have other priorities."""

    name = "TasksHighPriorityTasksDueOnDate"
    template = ("Which tasks with high priority are due {date} in the Tasks app? Answer with the title only. If there "
                "are multiples titles, format your answer in a comma separated list.")
    difficulty = "medium"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        day = dt.date(2023, 10, rng.randint(15, 29))
        return cls._params(rng, _targets(rng, 1, day=day, importance=0, completed=False),
                           lambda r: not (_due_day(r) == day and r["importance"] == 0), date=day.strftime(DATE_FMT))

    def answer_from(self, rows: list[tuple[str, dt.date | None, str, bool]]) -> str:
        day = _day_param(self.params)
        return _titles(r for r in rows if r[1] == day and r[2] == "High")


@register_task
class TasksDueNextWeek(_TasksQuestion):
    """How many tasks are due next week (Monday October 16 to Sunday October 22)?"""

    name = "TasksDueNextWeek"
    template = "How many tasks do I have due next week in Tasks app? Express your answer as a single integer."
    difficulty = "medium"
    complexity = 1.2
    WEEK: ClassVar[tuple[dt.date, dt.date]] = (dt.date(2023, 10, 16), dt.date(2023, 10, 22))

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        n = rng.randint(2, 6)
        targets = [_random_row(rng, t, day=dt.date(2023, 10, rng.randint(16, 22)), completed=False)
                   for t in rng.sample(TARGET_TITLES, n)]
        for t in targets:
            t["hide"] = "2023-10-10T08:00"
        params = cls._params(rng, targets, lambda r: not cls.WEEK[0] <= (_due_day(r) or dt.date.min) <= cls.WEEK[1])
        params["count"] = n
        return params

    def answer_from(self, rows: list[tuple[str, dt.date | None, str, bool]]) -> str:
        today = DEVICE_NOW.date()
        monday = today + dt.timedelta(days=7 - today.weekday())
        return str(sum(1 for r in rows if r[1] is not None and monday <= r[1] <= monday + dt.timedelta(days=6)))


@register_task
class TasksCompletedTasksForDate(_TasksQuestion):
    """Three tasks due on a past day, all completed; name them (completed tasks are hidden at first)."""

    name = "TasksCompletedTasksForDate"
    template = ("Which tasks have I completed for {date} in Tasks app? Answer with the titles only. If there are "
                "multiples titles, format your answer in a comma separated list.")
    difficulty = "medium"
    show = ("Show completed",)

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        day = dt.date(2023, 10, rng.randint(10, 20))
        targets = _targets(rng, 3, day=day, completed=True)
        for t in targets:
            t["hide"] = "2023-10-09T08:00"
        return cls._params(rng, targets, lambda r: _due_day(r) != day, date=day.strftime(DATE_FMT))

    def answer_from(self, rows: list[tuple[str, dt.date | None, str, bool]]) -> str:
        day = _day_param(self.params)
        return _titles(r for r in rows if r[1] == day and r[3])


@register_task
class TasksIncompleteTasksOnDate(_TasksQuestion):
    """Three open tasks due on a day; every other task due by then is completed."""

    name = "TasksIncompleteTasksOnDate"
    template = ("What incomplete tasks do I have still have to do by {date} in Tasks app? Answer with the titles "
                "only. If there are multiples titles, format your answer in a comma separated list.")
    difficulty = "easy"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        day = dt.date(2023, 10, rng.randint(15, 29))
        targets = _targets(rng, 3, day=day, completed=False)
        for t in targets:
            t["hide"] = "2023-10-10T09:00"
        return cls._params(rng, targets, lambda r: (_due_day(r) or dt.date.max) > day or bool(r["completed"]),
                           date=day.strftime(DATE_FMT))

    def answer_from(self, rows: list[tuple[str, dt.date | None, str, bool]]) -> str:
        day = _day_param(self.params)
        return _titles(r for r in rows if r[1] is not None and r[1] <= day and not r[3])


__all__ = [
    "TASKS_DB",
    "TasksCompletedTasksForDate",
    "TasksDueNextWeek",
    "TasksDueOnDate",
    "TasksHighPriorityTasks",
    "TasksHighPriorityTasksDueOnDate",
    "TasksIncompleteTasksOnDate",
    "read_task_list",
    "reset_tasks",
]
