"""AndroidLab's calendar tasks (``calendar_*``) re-created on the simulated Simple Calendar Pro.

AndroidLab runs them on another calendar app; the task texts are kept verbatim, so "note" is the
event's description here. The phone's date is frozen at Sunday, October 15 2023, 15:34, so "today"
is that day and a month-day without a year ("May 13th") may fall in either year. Each task starts
from a calendar holding :data:`LAB_EVENTS` plus the event it is about; checks read the calendar
provider (``content query --uri content://com.android.calendar/events``): the other events must
survive unchanged, and exactly the asked-for event must be added or changed.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any, ClassVar

from android_gym.actions import Finished, OpenApp
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import force_stop, from_ms, normalize_answer, to_ms
from android_gym.tasks.expert import tap_id, tap_text, type_into
from android_gym.tasks.sim.calendar import (
    CALENDAR_APP,
    CALENDAR_PACKAGE,
    DEVICE_NOW,
    add_event_expert,
    added_events,
    event_key,
    open_calendar_day,
    pick_date,
    pick_time,
    read_events,
    reset_calendar,
    row_key,
)
from android_gym.tasks.suites import SUITES_LAB

TODAY = DEVICE_NOW.date()


def _event(title: str, start: dt.datetime, minutes: int, description: str = "", location: str = "") -> dict[str, Any]:
    return {"title": title, "start": start, "minutes": minutes, "description": description, "location": location}


LAB_EVENTS: tuple[dict[str, Any], ...] = (
    _event("Dentist appointment", dt.datetime(2023, 10, 12, 9, 0), 60, "Routine check-up", "Maple Street Clinic"),
    _event("Brunch with family", dt.datetime(2023, 10, 15, 11, 0), 60, "Mom's favourite place", "The Coffee Bean"),
    _event("Project review", dt.datetime(2023, 10, 18, 14, 0), 90, "Q4 roadmap", "Conference Room A"),
    _event("Concert", dt.datetime(2023, 10, 21, 19, 0), 120, "Jazz quartet", "School auditorium"),
    _event("Car service", dt.datetime(2023, 10, 26, 10, 0), 30, "Oil change", "Local garage"),
)
"""The events every AndroidLab calendar task starts with (besides its own)."""


class _LabCalendar(Task):
    """An AndroidLab calendar task: no parameters, the app stopped, :data:`LAB_EVENTS` plus ``own_events``."""

    app_names = ("simple calendar pro",)
    suites = SUITES_LAB
    difficulty = "medium"
    complexity = 2.0
    own_events: ClassVar[tuple[dict[str, Any], ...]] = ()

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {}

    def start_events(self) -> list[dict[str, Any]]:
        """Every event the task starts with."""
        return [*LAB_EVENTS, *self.own_events]

    def initialize(self, device: Any) -> None:
        reset_calendar(device, self.start_events())

    def teardown(self, device: Any) -> None:
        force_stop(device, CALENDAR_PACKAGE)


# --- new events ----------------------------------------------------------------------------------------------


class _NewEvent(_LabCalendar):
    """Add one event; :meth:`wanted` says what it must look like, and nothing else may change."""

    def wanted(self, row: dict[str, Any]) -> bool:
        """Whether the added provider row is the asked-for event."""
        raise NotImplementedError

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        added = added_events(device, self.start_events())
        return 1.0 if added is not None and len(added) == 1 and self.wanted(added[0]) else 0.0


def _titled(row: dict[str, Any], title: str) -> bool:
    return normalize_answer(row["title"]) == normalize_answer(title)


@register_task
class CalendarLab1(_NewEvent):
    """calendar_1: "work" today at 5:00 PM."""

    name = "calendar_1"
    template = 'I want to add an event at 5:00PM today, whose Title is "work".'
    complexity = 3.0
    START: ClassVar[dt.datetime] = dt.datetime.combine(TODAY, dt.time(17, 0))

    def wanted(self, row: dict[str, Any]) -> bool:
        return _titled(row, "work") and row["dtstart"] == to_ms(self.START) and row["allDay"] != "1"

    def expert(self, ui: Any) -> ExpertGenerator:
        yield from add_event_expert(ui, "work", "", self.START, 60)
        yield Finished()


@register_task
class CalendarLab3(_NewEvent):
    """calendar_3: "meeting" on May 13th (2023 or 2024) with the note "conference room B202"."""

    name = "calendar_3"
    template = 'Help me arrange an event titled "meeting" at May 13th with note "conference room B202" .'
    complexity = 3.0
    NOTE: ClassVar[str] = "conference room B202"

    def wanted(self, row: dict[str, Any]) -> bool:
        start = from_ms(row["dtstart"])
        return (_titled(row, "meeting") and (start.month, start.day) == (5, 13)
                and normalize_answer(self.NOTE) in normalize_answer(row["description"]))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _new_event_form(ui, "meeting", self.NOTE)
        ui = yield from pick_date(ui, "event_start_date", dt.date(2024, 5, 13))
        yield from tap_id(ui, "save", scroll=False)
        yield Finished()


@register_task
class CalendarLab10(_NewEvent):
    """calendar_10: an event titled "this day" (any date and time)."""

    name = "calendar_10"
    template = 'arrange an event "this day"'
    complexity = 1.5
    difficulty = "easy"

    def wanted(self, row: dict[str, Any]) -> bool:
        return _titled(row, "this day")

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _new_event_form(ui, "this day")
        yield from tap_id(ui, "save", scroll=False)
        yield Finished()


def _new_event_form(ui: Any, title: str, description: str = ""):
    """Open the app's New Event form and fill the title (and description); returns the ui."""
    ui = yield OpenApp(CALENDAR_APP)
    ui = yield from tap_text(ui, "New Event", scroll=False)
    ui = yield from type_into(ui, title, resource_id="event_title")
    if description:
        ui = yield from type_into(ui, description, resource_id="event_description")
    return ui


# --- edits of an existing event ------------------------------------------------------------------------------


class _EditEvent(_LabCalendar):
    """Change the event ``target``; every other event must stay as it was and no event may be added."""

    target: ClassVar[dict[str, Any]] = {}

    def start_events(self) -> list[dict[str, Any]]:
        return [*LAB_EVENTS, self.target]

    def edited(self, row: dict[str, Any]) -> bool:
        """Whether the target's provider row shows the asked-for change."""
        raise NotImplementedError

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        rows = read_events(device)
        others = sorted(event_key(e) for e in LAB_EVENTS)
        if sorted(row_key(r) for r in rows if not _titled(r, self.target["title"])) != others:
            return 0.0
        mine = [r for r in rows if _titled(r, self.target["title"])]
        return 1.0 if len(mine) == 1 and self.edited(mine[0]) else 0.0

    def open_target(self, ui: Any):
        """Open the target event's editor from its day page; returns the ui."""
        ui = yield from open_calendar_day(ui, self.target["start"].date())
        return (yield from tap_text(ui, self.target["title"]))


WORK = _event("work", dt.datetime.combine(TODAY, dt.time(17, 0)), 60)
EXAM = _event("exam", dt.datetime(2023, 10, 20, 9, 0), 120, "Chapters 1-6")


@register_task
class CalendarLab5(_EditEvent):
    """calendar_5: "work" (today 5-6 PM) ends at 7:00 PM instead; its start stays."""

    name = "calendar_5"
    template = 'Edit the event with title "work", change the end time to be 7:00 PM.'
    complexity = 2.5
    target = WORK
    END: ClassVar[dt.datetime] = dt.datetime.combine(TODAY, dt.time(19, 0))

    def edited(self, row: dict[str, Any]) -> bool:
        return row["dtstart"] == to_ms(WORK["start"]) and row["dtend"] == to_ms(self.END)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from self.open_target(ui)
        ui = yield from pick_time(ui, "event_end_time", self.END.time())
        yield from tap_id(ui, "save", scroll=False)
        yield Finished()


@register_task
class CalendarLab8(_EditEvent):
    """calendar_8: the note (description) of "work" gets "computer"."""

    name = "calendar_8"
    template = 'Edit the event titled "work" and add a Note "computer" to it'
    target = WORK

    def edited(self, row: dict[str, Any]) -> bool:
        return "computer" in normalize_answer(row["description"]).split() and row["dtstart"] == to_ms(WORK["start"])

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from self.open_target(ui)
        ui = yield from type_into(ui, "computer", resource_id="event_description")
        yield from tap_id(ui, "save", scroll=False)
        yield Finished()


@register_task
class CalendarLab9(_EditEvent):
    """calendar_9: "work" repeats daily (``rrule`` FREQ=DAILY)."""

    name = "calendar_9"
    template = 'For the event titled "work", please help me set recurrence to be daily'
    target = WORK

    def edited(self, row: dict[str, Any]) -> bool:
        return (row.get("rrule") or "").upper().startswith("FREQ=DAILY") and row["dtstart"] == to_ms(WORK["start"])

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from self.open_target(ui)
        ui = yield from tap_id(ui, "event_repetition_holder")
        ui = yield from tap_text(ui, "Daily", scroll=False)
        yield from tap_id(ui, "save", scroll=False)
        yield Finished()


@register_task
class CalendarLab14(_EditEvent):
    """calendar_14: "exam" becomes an all-day event (``allDay`` 1) on the same day."""

    name = "calendar_14"
    template = 'Edit the event titled "exam" and make it an all-day event.'
    target = EXAM

    def edited(self, row: dict[str, Any]) -> bool:
        return row["allDay"] == "1" and from_ms(row["dtstart"]).date() == EXAM["start"].date()

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from self.open_target(ui)
        ui = yield from tap_id(ui, "event_all_day")
        yield from tap_id(ui, "save", scroll=False)
        yield Finished()
