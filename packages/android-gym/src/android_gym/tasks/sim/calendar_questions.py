"""Simple Calendar Pro questions about times: AndroidWorld's time-window and person information-retrieval tasks.

Re-created with AndroidWorld's parameter names and forms (``date`` as "October 20 2023", times as
"3:15pm", "12pm" or "21:45"), so the experts run unchanged on AndroidWorld's own instances: they
open the day page (or the app's search) and read each event row's title and "start – end" line.
Scoring as in :mod:`android_gym.tasks.sim.calendar`: comma-separated titles (or, for the next
meeting with a person, "<Month> <day> <year> <HH:MM>"), compared after normalisation.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any, ClassVar

from android_gym.actions import Finished, OpenApp, Scroll
from android_gym.tasks.base import ExpertGenerator, register_task
from android_gym.tasks.expert import ExpertStuck, find, find_all, id_is, tap_id, type_into
from android_gym.tasks.sim.calendar import (
    CALENDAR_APP,
    DEVICE_NOW,
    EVENT_TITLES,
    _CalendarQuestion,
    _jsonable,
    _parse_clock,
    _subtitle_under,
    next_day,
    noise_events,
    open_calendar_day,
    random_event,
    show_month_view,
)

DATE_FORMAT = "%B %d %Y"
"""AndroidWorld's date form in its information-retrieval parameters ("October 20 2023")."""

TIMES = ("11:00am", "1:30pm", "9:45am", "21:45", "10:00am", "3:15pm", "12pm", "6:30am", "8:00pm", "5:20pm",
         "7:45am", "4pm", "10:30am", "16:15", "9:15pm", "11:30am", "20:00")
PEOPLE = ("Amanda", "John", "David", "Lucas", "James", "Ava", "Isabella", "Mia", "Elijah", "Charlotte", "Emily")
DURATIONS = {"30 m": 30, "1 h": 60, "45min": 45, "2 hours": 120, "15 minutes": 15, "90 min": 90}
EVENING_END = dt.time(20, 0)
"""The end of the window that "between {start_time} and 8pm" asks about."""


def parse_time_text(text: str) -> dt.time:
    """"21:45", "3:15pm" or "12pm" as a time (AndroidWorld's three forms)."""
    for fmt in ("%H:%M", "%I:%M%p", "%I%p"):
        try:
            return dt.datetime.strptime(text.strip(), fmt).time()
        except ValueError:
            continue
    raise ValueError(f"not a time: {text!r}")


def parse_date_text(text: str) -> dt.date:
    """"October 20 2023" as a date."""
    return dt.datetime.strptime(text, DATE_FORMAT).date()


def _date_text(day: dt.date) -> str:
    return day.strftime(DATE_FORMAT)


# --- reading the screen ---------------------------------------------------------------------------------------


def visible_event_rows(ui: Any) -> list[tuple[str, dt.time | None, Any]]:
    """(title, start time, title element) of each event row on screen; the time is None for all-day rows."""
    rows = []
    for title in find_all(ui, id_is("event_item_title")):
        line = _subtitle_under(ui, title)
        start = _parse_clock(line.text.split(" \u00b7 ")[0].split(" \u2013 ")[0]) if line is not None else None
        rows.append((title.text, start, title))
    return rows


def read_day_rows(ui: Any):
    """Every event row of the open day page as (title, start time), scrolling while the list may go on."""
    seen: list[tuple[str, dt.time | None]] = []
    for _ in range(6):
        fresh = [(t, s) for t, s, _ in visible_event_rows(ui) if (t, s) not in seen]
        seen.extend(fresh)
        listing = find(ui, id_is("day_events"))
        rows = find_all(ui, id_is("event_item_holder"))
        if listing is None or not rows or rows[-1].bounds[3] < listing.bounds[3] - 4 or (seen and not fresh):
            break
        ui = yield Scroll("down", *listing.center)
    return ui, seen


def _answer(titles: list[str]) -> str:
    unique: list[str] = []
    for t in titles:
        if t not in unique:
            unique.append(t)
    if not unique:
        raise ExpertStuck("no matching event on screen")
    return ", ".join(unique)


# --- tasks ----------------------------------------------------------------------------------------------------


class _TimeOnDayQuestion(_CalendarQuestion):
    """One target event on ``date`` at ``time``; the noise avoids what the question asks about."""

    time_key: ClassVar[str] = "time"
    titles: ClassVar[tuple[str, ...]] = EVENT_TITLES

    @classmethod
    def excluded(cls, event: dict[str, Any], day: dt.date, at: dt.time) -> bool:
        """Whether a noise event would change the answer."""
        raise NotImplementedError

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        day = dt.date(2023, 10, rng.randint(15, 29))
        time_text = rng.choice(TIMES)
        at = parse_time_text(time_text)
        title = rng.choice(cls.titles)
        duration = rng.choice(sorted(DURATIONS))
        target = random_event(rng, day=day.day, hour=at.hour, minute=at.minute, title=title,
                              minutes=DURATIONS[duration])
        noise = noise_events(rng, rng.randint(40, 60),
                             lambda e: e["title"] != title and not cls.excluded(e, day, at))
        return {"date": _date_text(day), cls.time_key: time_text, "title": title, "duration": duration,
                "titles": [title], "events": _jsonable([target] + noise)}

    def wanted(self, start: dt.time, at: dt.time) -> bool:
        """Whether a row starting at ``start`` answers the question about ``at``."""
        raise NotImplementedError

    def pick(self, rows: list[tuple[str, dt.time]], at: dt.time) -> list[str]:
        return [t for t, s in rows if self.wanted(s, at)]

    def expert(self, ui: Any) -> ExpertGenerator:
        at = parse_time_text(self.params[self.time_key])
        ui = yield from open_calendar_day(ui, parse_date_text(self.params["date"]))
        ui, rows = yield from read_day_rows(ui)
        yield Finished(_answer(self.pick([(t, s) for t, s in rows if s is not None], at)))


@register_task
class SimpleCalendarEventOnDateAtTime(_TimeOnDayQuestion):
    """What starts at this time on this day?"""

    name = "SimpleCalendarEventOnDateAtTime"
    template = ("What is on my schedule for {date} at {time} in Simple Calendar Pro? Answer with the titles only. "
                "If there are multiples titles, format your answer in a comma separated list.")
    difficulty = "medium"

    @classmethod
    def excluded(cls, event: dict[str, Any], day: dt.date, at: dt.time) -> bool:
        return event["start"].date() == day and event["start"].time() == at

    def wanted(self, start: dt.time, at: dt.time) -> bool:
        return start == at


@register_task
class SimpleCalendarFirstEventAfterStartTime(_TimeOnDayQuestion):
    """The first event of the day starting at or after a time."""

    name = "SimpleCalendarFirstEventAfterStartTime"
    template = ("What is my first event after {time} {date} in Simple Calendar Pro? Answer with the titles only. "
                "If there are multiples titles, format your answer in a comma separated list.")
    difficulty = "easy"
    titles = ("Sales Call", "Client Meeting", "Training Session", "Project Kickoff", "Team Brainstorming",
              "Dentist Appointment", "Haircut", "Grocery Shopping", "School Pickup", "Soccer Practice")

    @classmethod
    def excluded(cls, event: dict[str, Any], day: dt.date, at: dt.time) -> bool:
        return event["start"].date() == day and event["start"].time() >= at

    def wanted(self, start: dt.time, at: dt.time) -> bool:
        return start >= at

    def pick(self, rows: list[tuple[str, dt.time]], at: dt.time) -> list[str]:
        later = [(s, t) for t, s in rows if s >= at]
        if not later:
            return []
        first = min(s for s, _ in later)
        return [t for s, t in later if s == first]


@register_task
class SimpleCalendarEventsInTimeRange(_TimeOnDayQuestion):
    """Events of the day starting between a time and 8pm."""

    name = "SimpleCalendarEventsInTimeRange"
    template = ("Do I have any events between {start_time} and 8pm {date} in Simple Calendar Pro? Answer with the "
                "titles only. If there are multiples titles, format your answer in a comma separated list.")
    difficulty = "easy"
    time_key = "start_time"
    titles = ("Gym", "Dinner with Friends", "Happy Hour", "Evening Walk", "Yoga Class", "Run in the Park",
              "Cooking Class", "Movie Night", "Grocery Shopping", "Pick up Kids from School")

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        params = super().generate_random_params(rng)
        if parse_time_text(params["start_time"]) > EVENING_END:  # the window must be a window
            return cls.generate_random_params(rng)
        return params

    @classmethod
    def excluded(cls, event: dict[str, Any], day: dt.date, at: dt.time) -> bool:
        return event["start"].date() == day and at <= event["start"].time() <= EVENING_END

    def wanted(self, start: dt.time, at: dt.time) -> bool:
        return at <= start <= EVENING_END


@register_task
class SimpleCalendarEventsInNextWeek(_CalendarQuestion):
    """The events of next week (Monday October 16 to Sunday October 22 on the frozen clock)."""

    name = "SimpleCalendarEventsInNextWeek"
    template = ("What events do I have in the next week in Simple Calendar Pro? Answer with the titles only. If there "
                "are multiples titles, format your answer in a comma separated list.")
    difficulty = "easy"

    @staticmethod
    def week() -> tuple[dt.date, dt.date]:
        """Next Monday and the Sunday after it."""
        today = DEVICE_NOW.date()
        monday = today + dt.timedelta(days=7 - today.weekday())
        return monday, monday + dt.timedelta(days=6)

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        monday, sunday = cls.week()
        days = rng.sample(range(monday.day, sunday.day + 1), 2)
        titles = rng.sample(EVENT_TITLES, 2)
        targets = [random_event(rng, day=d, hour=rng.randint(7, 21), title=t) for d, t in zip(days, titles)]
        noise = noise_events(rng, rng.randint(40, 60), lambda e: e["title"] not in titles and not (
            DEVICE_NOW.date() <= e["start"].date() <= sunday))
        return {"titles": titles, "events": _jsonable(targets + noise)}

    def expert(self, ui: Any) -> ExpertGenerator:
        monday, sunday = self.week()
        ui = yield from open_calendar_day(ui, monday)
        titles: list[str] = []
        day = monday
        while True:
            ui, rows = yield from read_day_rows(ui)
            titles += [t for t, _ in rows]
            if day == sunday:
                break
            ui = yield from next_day(ui)
            day += dt.timedelta(days=1)
        yield Finished(_answer(titles))


@register_task
class SimpleCalendarNextMeetingWithPerson(_CalendarQuestion):
    """When is the next event with this person? Answered as "October 20 2023 14:00"."""

    name = "SimpleCalendarNextMeetingWithPerson"
    template = ("When is my next meeting with {person} in Simple Calendar Pro? Express your answer in the format "
                "<month name> <day> <year> <hour in 24-hour format>:<minutes>.")
    difficulty = "medium"
    expected_field = "when"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        person = rng.choice(PEOPLE)
        day = dt.date(2023, 10, rng.randint(16, 29))
        time_text = rng.choice(TIMES)
        at = parse_time_text(time_text)
        target = random_event(rng, day=day.day, hour=at.hour, minute=at.minute, title=f"Drinks with {person}",
                              minutes=30)
        noise = noise_events(rng, rng.randint(40, 60), lambda e: person not in e["title"])
        when = f"{_date_text(day)} {at.strftime('%H:%M')}"
        return {"person": person, "date": _date_text(day), "time": time_text, "when": [when],
                "events": _jsonable([target] + noise)}

    def expert(self, ui: Any) -> ExpertGenerator:
        person = self.params["person"]
        ui = yield OpenApp(CALENDAR_APP)
        ui = yield from show_month_view(ui)
        ui = yield from tap_id(ui, "top_toolbar_search", scroll=False)
        ui = yield from type_into(ui, person, resource_id="top_toolbar_search")
        today = DEVICE_NOW.date()
        found: list[tuple[dt.datetime, str]] = []
        for _ in range(6):
            headers = find_all(ui, id_is("event_section_title"))
            for title, start, element in visible_event_rows(ui):
                if person.lower() not in title.lower() or start is None:
                    continue
                above = [h for h in headers if h.bounds[1] < element.bounds[1]]
                if not above:
                    continue
                day = dt.datetime.strptime(above[-1].text, "%A, %B %d, %Y").date()
                found.append((dt.datetime.combine(day, start), title))
            if any(when.date() >= today for when, _ in found):
                break
            listing = find(ui, id_is("search_results_list"))
            if listing is None:
                break
            ui = yield Scroll("down", *listing.center)
        upcoming = [when for when, _ in found if when.date() >= today] or [when for when, _ in found]
        if not upcoming:
            raise ExpertStuck(f"no event with {person} found")
        first = min(upcoming)
        yield Finished(f"{_date_text(first.date())} {first.strftime('%H:%M')}")


__all__ = [
    "SimpleCalendarEventOnDateAtTime",
    "SimpleCalendarEventsInNextWeek",
    "SimpleCalendarEventsInTimeRange",
    "SimpleCalendarFirstEventAfterStartTime",
    "SimpleCalendarNextMeetingWithPerson",
    "parse_time_text",
]
