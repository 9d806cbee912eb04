"""Simple Calendar Pro tasks: AndroidWorld's add, delete and question tasks re-created.

Set-up and checks go through the calendar provider only (``content delete|insert|query --uri
content://com.android.calendar/events``, ``dtstart``/``dtend`` in epoch ms of the wall clock read as
UTC). As in AndroidWorld, the phone's date is frozen at Sunday, October 15 2023, 15:34
(:data:`DEVICE_NOW`); every task starts from a calendar holding only its own events plus noise.

Question tasks are scored on the answer, AndroidWorld's way: the answer is split on commas and
each part must match a different expected title (or the location) after :func:`normalize_answer`
(lower case, every run of non-alphanumeric characters made one space, trimmed), with as many parts
as expected values.
"""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Iterable
from typing import Any, ClassVar

from android_gym.actions import Finished, LongPress, OpenApp, Scroll
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import (
    answers_match,
    content_delete,
    content_insert,
    content_query,
    force_stop,
    go_home,
    normalize_answer,
    to_ms,
)
from android_gym.tasks.expert import (
    ExpertStuck,
    find,
    find_all,
    id_is,
    tap,
    tap_id,
    tap_text,
    type_into,
)
from android_gym.tasks.suites import SUITES_AW

CALENDAR_PACKAGE = "com.simplemobiletools.calendar.pro"
CALENDAR_APP = "Simple Calendar Pro"
EVENTS_URI = "content://com.android.calendar/events"
EVENT_FIELDS = ("_id", "title", "dtstart", "dtend", "allDay", "rrule", "eventLocation", "description")
DEVICE_NOW = dt.datetime(2023, 10, 15, 15, 34)
"""AndroidWorld's frozen device time (its ``device_constants.DT``), which the simulated phone also starts at."""

EVENT_TITLES = (
    "Sprint planning", "Lunch with Priya", "Design review", "Dentist check-up", "Yoga class", "Book club",
    "Piano lesson", "Client call", "Budget review", "Career fair", "Hackathon kickoff", "Parent-teacher meeting",
    "Car service", "Farmers market", "Team offsite", "Interview with Alex", "Pottery workshop", "Board game night",
    "Anniversary dinner", "Flu shot", "Quarterly planning", "Coffee with Jordan", "Guitar practice",
    "Open house", "Tax consultation", "Soccer practice", "Wine tasting", "Volunteer shift", "Haircut",
    "Product launch",
)
EVENT_DESCRIPTIONS = (
    "We will discuss the quarterly goals.", "Bring your laptop.", "Remember to confirm the reservation.",
    "Agenda will be shared in advance.", "Casual dress code.", "Prepare the slides beforehand.",
    "Pick up snacks on the way.", "Review last week's notes.", "Tickets are in my email.",
    "Call ahead if running late.", "Meet at the main entrance.", "Let's plan the next steps.",
    "Important: arrive 10 minutes early.", "Discuss the budget for next year.", "Bring a gift.",
)
EVENT_LOCATIONS = (
    "Room 4B", "Blue Bottle Cafe", "42 Elm Street", "Riverside Park", "Main Library", "Community hall",
    "Google Meet", "City Hospital", "The Green Bistro", "North Gym", "Town square", "Studio 9", "Online",
    "Harbor Pier", "Lincoln High School", "Westfield Mall", "Downtown office", "Science Museum",
    "Maple Street Clinic", "Sunset Winery",
)
DURATIONS_MIN = (15, 30, 45, 60, 90, 120)


# --- shell helpers ------------------------------------------------------------------------------------------


def clear_events(device: Any) -> None:
    """Delete every calendar event."""
    content_delete(device, EVENTS_URI)


def insert_event(device: Any, event: dict[str, Any]) -> None:
    """Insert one event dict (title, description, location, start datetime, minutes)."""
    start: dt.datetime = event["start"]
    end = start + dt.timedelta(minutes=event["minutes"])
    content_insert(device, EVENTS_URI, [
        ("title", "s", event["title"]), ("description", "s", event.get("description", "")),
        ("eventLocation", "s", event.get("location", "")), ("dtstart", "l", to_ms(start)),
        ("dtend", "l", to_ms(end)), ("allDay", "i", 0),
    ])


def read_events(device: Any) -> list[dict[str, Any]]:
    """Every event (:data:`EVENT_FIELDS`) as a dict with int ``dtstart``/``dtend`` and "" for missing text."""
    rows = content_query(device, EVENTS_URI, EVENT_FIELDS)
    for r in rows:
        r["dtstart"] = int(r["dtstart"] or 0)
        r["dtend"] = int(r["dtend"] or 0)
        for key in ("title", "description", "eventLocation"):
            r[key] = r[key] or ""
    return rows


def reset_calendar(device: Any, events: Iterable[dict[str, Any]]) -> None:
    """Start state: the calendar app stopped, the home screen, exactly ``events`` in the provider."""
    go_home(device, CALENDAR_PACKAGE)
    clear_events(device)
    for event in events:
        insert_event(device, event)


def event_key(event: dict[str, Any]) -> tuple[str, int, int]:
    """Identity of a task's event dict: (title, dtstart ms, dtend ms)."""
    return (event["title"], to_ms(event["start"]), to_ms(event["start"] + dt.timedelta(minutes=event["minutes"])))


def row_key(row: dict[str, Any]) -> tuple[str, int, int]:
    """Identity of a provider row from :func:`read_events`, in the shape of :func:`event_key`."""
    return (row["title"], row["dtstart"], row["dtend"])


def added_events(device: Any, before: Iterable[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The provider rows that are not among the ``before`` events; None when one of those is gone or changed."""
    rows = read_events(device)
    remaining = [row_key(r) for r in rows]
    for key in (event_key(e) for e in before):
        if key not in remaining:
            return None
        remaining.remove(key)
    added = []
    for r in rows:
        if row_key(r) in remaining:
            remaining.remove(row_key(r))
            added.append(r)
    return added


# --- parameters ------------------------------------------------------------------------------------------


def random_event(rng: random.Random, day: int | None = None, hour: int | None = None, minute: int | None = None,
                 title: str | None = None, minutes: int | None = None) -> dict[str, Any]:
    """A realistic October 2023 event; unspecified fields are drawn from ``rng``."""
    day = day if day is not None else rng.randint(1, 31)
    hour = hour if hour is not None else rng.randint(7, 21)
    minute = minute if minute is not None else rng.choice((0, 0, 15, 30, 45))
    return {
        "title": title or rng.choice(EVENT_TITLES),
        "description": rng.choice(EVENT_DESCRIPTIONS),
        "location": rng.choice(EVENT_LOCATIONS),
        "start": dt.datetime(2023, 10, day, hour, minute),
        "minutes": minutes if minutes is not None else rng.choice(DURATIONS_MIN),
    }


def noise_events(rng: random.Random, n: int, keep: Any) -> list[dict[str, Any]]:
    """``n`` random events for which ``keep(event)`` is true (distinct titles)."""
    out: list[dict[str, Any]] = []
    tries = 0
    while len(out) < n and tries < 2000:
        tries += 1
        candidate = random_event(rng)
        if keep(candidate) and all(candidate["title"] != e["title"] for e in out):
            out.append(candidate)
    return out


def _jsonable(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**e, "start": e["start"].isoformat(timespec="minutes")} for e in events]


def _events(param: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**e, "start": dt.datetime.fromisoformat(e["start"]) if isinstance(e["start"], str) else e["start"]}
            for e in param]


def reworded_date(day: dt.date, rng: random.Random, now: dt.datetime = DEVICE_NOW) -> str:
    """A natural way to say ``day`` relative to ``now`` (AndroidWorld's options: "today", "tomorrow",
    a weekday within a week, "this <weekday>", "the <weekday> after next", "October 20", "October 20 2023")."""
    today = now.date()
    options = [f"{day.strftime('%B')} {day.day:02d}", f"{day.strftime('%B')} {day.day:02d} {day.year}"]
    weekday = day.strftime("%A")
    if day == today:
        options.append("today")
    if day == today + dt.timedelta(days=1):
        options.append("tomorrow")
    if day == today - dt.timedelta(days=1):
        options.append("yesterday")
    if day > today:
        if (day - today).days <= 7:
            options += [weekday, f"this {weekday}"]
        elif (day - today).days <= 14:
            options.append(f"the {weekday} after next")
    elif day < today and (today - day).days <= 7:
        options.append(weekday)
    return rng.choice(options)


# --- expert building blocks ------------------------------------------------------------------------------


def _is_cell(element: Any) -> bool:
    return element.resource_id.endswith(":id/month_view_background")


def grid_start(year: int, month: int) -> dt.date:
    """The first day of Simple Calendar Pro's month grid (the Sunday before the 1st; a whole week before when the
    1st is a Sunday): the grid's 42 cells carry no text, so a day is found by its place."""
    first = dt.date(year, month, 1)
    return first - dt.timedelta(days=(first.weekday() + 1) % 7 or 7)


def _shown_month(ui: Any) -> dt.date:
    """The month the grid shows, from its title ("October"; "October 2024" outside the phone's year)."""
    title = find(ui, id_is("top_value"))
    if title is None:
        raise ExpertStuck("the month grid shows no month title")
    words = title.text.split()
    year = int(words[1]) if len(words) > 1 else DEVICE_NOW.year
    return dt.datetime.strptime(f"{words[0]} {year}", "%B %Y").date()


def show_month_view(ui: Any):
    """Make sure the month grid is showing (switch through "Change view" when the event list is)."""
    if find(ui, _is_cell) is not None:
        return ui
    ui = yield from tap_text(ui, "Change view", scroll=False)
    return (yield from tap_text(ui, "Month view", scroll=False))


def show_event_list(ui: Any):
    """Make sure the "Simple event list" view is showing."""
    if find(ui, id_is("calendar_events_list")) is not None:
        return ui
    ui = yield from tap_text(ui, "Change view", scroll=False)
    return (yield from tap_text(ui, "Simple event list", scroll=False))


def open_calendar_day(ui: Any, day: dt.date | None):
    """Open the app and the day page of ``day`` (None: today) from the month grid: the month's arrows to its
    month, then the cell at its place in the grid."""
    ui = yield OpenApp(CALENDAR_APP)
    ui = yield from show_month_view(ui)
    day = day or DEVICE_NOW.date()
    for _ in range(24):
        shown = _shown_month(ui)
        if (shown.year, shown.month) == (day.year, day.month):
            cells = find_all(ui, _is_cell)
            index = (day - grid_start(shown.year, shown.month)).days
            if len(cells) != 42 or not 0 <= index < 42:
                raise ExpertStuck(f"no cell for {day} in the month grid")
            return (yield tap(cells[index]))
        ui = yield from tap_id(ui, "top_right_arrow" if day > shown else "top_left_arrow", scroll=False)
    raise ExpertStuck(f"could not reach {day:%B %Y} in the month grid")


def next_day(ui: Any):
    """On a day page, the day's own "next" arrow (the month grid's arrows are listed before it)."""
    arrows = find_all(ui, id_is("top_right_arrow"))
    if not arrows:
        raise ExpertStuck("no day page open")
    return (yield tap(arrows[-1]))


def day_event_titles(ui: Any) -> list[str]:
    """Titles of the events listed on a day page (scrolling is not needed for a few events)."""
    return [e.text for e in find_all(ui, id_is("event_item_title"))]


def pick_date(ui: Any, field_id: str, day: dt.date):
    """Open the date picker of ``field_id`` and choose ``day`` (moving months as needed), then OK."""
    ui = yield from tap_id(ui, field_id)
    for _ in range(24):
        label = find(ui, id_is("month_name"))
        if label is None:
            raise ExpertStuck("the date picker shows no month")
        shown = dt.datetime.strptime(label.text, "%B %Y").date()
        if (shown.year, shown.month) == (day.year, day.month):
            break
        ui = yield from tap_text(ui, "Next month" if day > shown else "Previous month", scroll=False)
    ui = yield from tap_text(ui, f"{day.day} {day.strftime('%B')} {day.year}", scroll=False)
    return (yield from tap_text(ui, "OK", scroll=False))


def pick_time(ui: Any, field_id: str, when: dt.time):
    """Open the time picker of ``field_id`` and type the time (12-hour fields use AM/PM), then OK."""
    ui = yield from tap_id(ui, field_id)
    twelve = find(ui, id_is("am_label")) is not None
    hour = (when.hour % 12 or 12) if twelve else when.hour
    ui = yield from type_into(ui, f"{hour:02d}", resource_id="input_hour")
    ui = yield from type_into(ui, f"{when.minute:02d}", resource_id="input_minute")
    if twelve:
        ui = yield from tap_text(ui, "PM" if when.hour >= 12 else "AM", scroll=False)
    return (yield from tap_text(ui, "OK", scroll=False))


def _shown_date(ui: Any, field_id: str) -> dt.date | None:
    element = find(ui, id_is(field_id))
    if element is None:
        return None
    return dt.datetime.strptime(element.text, "%a, %b %d, %Y").date()


def add_event_expert(ui: Any, title: str, description: str, start: dt.datetime, minutes: int,
                     repeat: str | None = None):
    """Create an event through the New Event form: title, description, start/end date and time, the Repeat
    option shown as ``repeat`` ("Daily", "Weekly"; none: left as it is), Save."""
    end = start + dt.timedelta(minutes=minutes)
    ui = yield OpenApp(CALENDAR_APP)
    ui = yield from tap_text(ui, "New Event", scroll=False)
    ui = yield from type_into(ui, title, resource_id="event_title")
    if description:
        ui = yield from type_into(ui, description, resource_id="event_description")
    if _shown_date(ui, "event_start_date") != start.date():
        ui = yield from pick_date(ui, "event_start_date", start.date())
    ui = yield from pick_time(ui, "event_start_time", start.time())
    if _shown_date(ui, "event_end_date") != end.date():
        ui = yield from pick_date(ui, "event_end_date", end.date())
    ui = yield from pick_time(ui, "event_end_time", end.time())
    if repeat is not None:
        ui = yield from tap_id(ui, "event_repetition_holder")
        ui = yield from tap_text(ui, repeat, scroll=False)
    return (yield from tap_id(ui, "save", scroll=False))


# --- tasks -------------------------------------------------------------------------------------------------


class _CalendarTask(Task):
    app_names = ("simple calendar pro",)
    suites = SUITES_AW

    def initialize(self, device: Any) -> None:
        reset_calendar(device, self.start_events())

    def start_events(self) -> list[dict[str, Any]]:
        """Every event the task starts with (targets and noise)."""
        return _events(self.params.get("events", []))

    def teardown(self, device: Any) -> None:
        force_stop(device, CALENDAR_PACKAGE)


class _AddEventTask(_CalendarTask):
    """Create one event with a title, description, start hour and duration; the noise must survive."""

    difficulty = "hard"
    complexity = 3.4

    @classmethod
    def target_day(cls, rng: random.Random) -> int:
        return rng.randint(1, 31)

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        target = random_event(rng, day=cls.target_day(rng), hour=rng.randint(6, 22), minute=0)
        noise = noise_events(rng, rng.randint(4, 12), lambda e: e["title"] != target["title"])
        start = target["start"]
        return {"year": start.year, "month": start.month, "day": start.day, "hour": start.hour,
                "event_title": target["title"], "event_description": target["description"],
                "duration_mins": target["minutes"], "events": _jsonable(noise)}

    def _target(self) -> tuple[dt.datetime, int]:
        p = self.params
        return dt.datetime(p["year"], p["month"], p["day"], p["hour"]), int(p["duration_mins"])

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        added = added_events(device, self.start_events())
        if added is None or len(added) != 1:
            return 0.0
        return 1.0 if self.is_target(added[0]) else 0.0

    def is_target(self, new: dict[str, Any]) -> bool:
        """Whether the one added event has the asked title, description, start and end (subclasses add more)."""
        start, minutes = self._target()
        return (normalize_answer(new["title"]) == normalize_answer(self.params["event_title"])
                and normalize_answer(new["description"]) == normalize_answer(self.params["event_description"])
                and new["dtstart"] == to_ms(start) and new["dtend"] == to_ms(start + dt.timedelta(minutes=minutes)))

    def expert(self, ui: Any) -> ExpertGenerator:
        start, minutes = self._target()
        yield from add_event_expert(ui, self.params["event_title"], self.params["event_description"], start,
                                    minutes)
        yield Finished()


@register_task
class SimpleCalendarAddOneEvent(_AddEventTask):
    """Create an event on an absolute date of October 2023."""

    name = "SimpleCalendarAddOneEvent"
    template = ("In Simple Calendar Pro, create a calendar event on {year}-{month}-{day} at {hour}h with the title "
                "'{event_title}' and the description '{event_description}'. The event should last for "
                "{duration_mins} mins.")


@register_task
class SimpleCalendarAddOneEventTomorrow(_AddEventTask):
    """Create an event tomorrow (October 16 2023 on the frozen clock)."""

    name = "SimpleCalendarAddOneEventTomorrow"
    template = ("In Simple Calendar Pro, create a calendar event for tomorrow at {hour}h with the title "
                "'{event_title}' and the description '{event_description}'. The event should last for "
                "{duration_mins} mins.")
    difficulty = "easy"

    @classmethod
    def target_day(cls, rng: random.Random) -> int:
        return (DEVICE_NOW + dt.timedelta(days=1)).day


class _DeleteTask(_CalendarTask):
    """Delete the target events; every other event must remain."""

    def targets(self) -> list[dict[str, Any]]:
        return _events(self.params["targets"])

    def start_events(self) -> list[dict[str, Any]]:
        return self.targets() + _events(self.params["events"])

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        remaining = [row_key(r) for r in read_events(device)]
        for key in (event_key(e) for e in self.targets()):
            if key in remaining:
                return 0.0
        expected = sorted(event_key(e) for e in _events(self.params["events"]))
        return 1.0 if sorted(remaining) == expected else 0.0


@register_task
class SimpleCalendarDeleteEvents(_DeleteTask):
    """Delete every event on one day (three of them)."""

    name = "SimpleCalendarDeleteEvents"
    template = "In Simple Calendar Pro, delete all the calendar events on {year}-{month}-{day}"
    difficulty = "easy"
    complexity = 2.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        day = rng.randint(1, 31)
        targets = [random_event(rng, day=day) for _ in range(3)]
        noise = noise_events(rng, 20, lambda e: e["start"].day != day)
        return {"year": 2023, "month": 10, "day": day, "targets": _jsonable(targets), "events": _jsonable(noise)}

    def expert(self, ui: Any) -> ExpertGenerator:
        day = dt.date(self.params["year"], self.params["month"], self.params["day"])
        ui = yield from open_calendar_day(ui, day)
        rows = find_all(ui, id_is("event_item_holder"))
        if not rows:
            raise ExpertStuck(f"no events listed on {day}")
        ui = yield LongPress(*rows[0].center)
        for _ in range(len(rows) - 1):
            unselected = [r for r in find_all(ui, id_is("event_item_holder")) if not r.selected]
            if not unselected:
                break
            ui = yield tap(unselected[0])
        ui = yield from tap_text(ui, "Delete", scroll=False)
        yield from tap_text(ui, "Yes", scroll=False)
        yield Finished()


@register_task
class SimpleCalendarDeleteOneEvent(_DeleteTask):
    """Delete one event given by date, hour and title."""

    name = "SimpleCalendarDeleteOneEvent"
    template = ("In Simple Calendar Pro, delete the calendar event on {year}-{month}-{day} at {hour}h with the "
                "title '{event_title}'")
    difficulty = "easy"
    complexity = 1.6

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        target = random_event(rng, minute=0)
        noise = noise_events(rng, 20, lambda e: e["start"] != target["start"] and e["title"] != target["title"])
        start = target["start"]
        return {"year": 2023, "month": 10, "day": start.day, "hour": start.hour, "event_title": target["title"],
                "targets": _jsonable([target]), "events": _jsonable(noise)}

    def expert(self, ui: Any) -> ExpertGenerator:
        day = dt.date(self.params["year"], self.params["month"], self.params["day"])
        ui = yield from open_calendar_day(ui, day)
        ui = yield from tap_text(ui, self.params["event_title"])
        ui = yield from tap_id(ui, "delete", scroll=False)
        yield from tap_text(ui, "Yes", scroll=False)
        yield Finished()


# --- questions -----------------------------------------------------------------------------------------------


class _CalendarQuestion(_CalendarTask):
    """A question answered from the calendar; scored on the answer (see the module docstring)."""

    answer_task = True
    complexity = 1.2
    expected_field: ClassVar[str] = "titles"

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if answers_match(answer, self.params[self.expected_field]) else 0.0


def _day_question_params(rng: random.Random, n_targets: int) -> dict[str, Any]:
    day = dt.date(2023, 10, rng.randint(15, 29))
    titles = rng.sample(EVENT_TITLES, n_targets)
    hours = rng.sample(range(7, 22), n_targets)
    targets = [random_event(rng, day=day.day, hour=h, title=t) for t, h in zip(titles, hours)]
    noise = noise_events(rng, rng.randint(8, 16),
                         lambda e: e["start"].date() != day and e["title"] not in titles)
    return {"date": reworded_date(day, rng), "date_iso": day.isoformat(), "titles": titles,
            "events": _jsonable(targets + noise)}


class _EventsOnDayQuestion(_CalendarQuestion):
    n_targets: ClassVar[int] = 1

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return _day_question_params(rng, cls.n_targets)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_calendar_day(ui, dt.date.fromisoformat(self.params["date_iso"]))
        yield Finished(", ".join(day_event_titles(ui)))


@register_task
class SimpleCalendarAnyEventsOnDate(_EventsOnDayQuestion):
    """Three events on a day of the next two weeks; name them."""

    name = "SimpleCalendarAnyEventsOnDate"
    template = ("Do I have any events {date} in Simple Calendar Pro? Answer with the titles only. If there are "
                "multiples titles, format your answer in a comma separated list.")
    difficulty = "easy"
    n_targets = 3


@register_task
class SimpleCalendarEventsOnDate(_EventsOnDayQuestion):
    """One event on a day of the next two weeks; name it."""

    name = "SimpleCalendarEventsOnDate"
    template = ("What events do I have {date} in Simple Calendar Pro? Answer with the titles only. If there are "
                "multiple titles, format your answer as a comma separated list.")
    difficulty = "medium"
    n_targets = 1


@register_task
class SimpleCalendarLocationOfEvent(_CalendarQuestion):
    """Where is the event with this title? The date is not given: the agent must look for it."""

    name = "SimpleCalendarLocationOfEvent"
    template = ("What is the location of my {title} event in Simple Calendar Pro? Answer with the location only.")
    difficulty = "easy"
    complexity = 2.0
    expected_field = "locations"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        title = rng.choice(EVENT_TITLES)
        location = rng.choice(EVENT_LOCATIONS)
        target = {**random_event(rng, day=rng.randint(15, 29), title=title), "location": location}
        noise = noise_events(rng, rng.randint(8, 14), lambda e: title.lower() not in e["title"].lower())
        return {"title": title, "locations": [location], "events": _jsonable([target] + noise)}

    def expert(self, ui: Any) -> ExpertGenerator:
        title = self.params["title"]
        if "date" in self.params:  # AndroidWorld's instance names the event's day: read it on that day's page
            day = dt.datetime.strptime(self.params["date"], "%B %d %Y").date()
            ui = yield from open_calendar_day(ui, day)
        else:
            ui = yield OpenApp(CALENDAR_APP)
            ui = yield from show_event_list(ui)
        for _ in range(15):
            row_title = find(ui, lambda e: e.text == title and e.resource_id.endswith(":id/event_item_title"))
            subtitle = _subtitle_under(ui, row_title) if row_title is not None else None
            if subtitle is not None:
                break
            ui = yield Scroll("down", *(_list_center(ui)))
        else:
            raise ExpertStuck(f"no event titled {title!r} in the event list")
        if " \u00b7 " not in subtitle.text:
            raise ExpertStuck(f"no location shown under {title!r}")
        yield Finished(subtitle.text.split(" \u00b7 ", 1)[1])


@register_task
class SimpleCalendarNextEvent(_CalendarQuestion):
    """Which event comes next today (after 15:34 on the frozen clock)?"""

    name = "SimpleCalendarNextEvent"
    template = ("What is my next upcoming event in Simple Calendar Pro? Answer with the title only. If there are "
                "multiples titles, format your answer in a comma separated list.")
    difficulty = "easy"
    TIMES: ClassVar[tuple[str, ...]] = ("15:53", "16:00", "16:15", "17:00", "17:30", "18:30", "18:45", "19:00",
                                        "19:15", "20:00", "20:10", "20:40", "21:45", "22:35", "23:59")

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        clock = rng.choice(cls.TIMES)
        hh, mm = (int(x) for x in clock.split(":"))
        title = rng.choice(EVENT_TITLES)
        target = random_event(rng, day=DEVICE_NOW.day, hour=hh, minute=mm, title=title)
        start = target["start"]

        def keep(e: dict[str, Any]) -> bool:
            in_window = e["start"].date() == start.date() and DEVICE_NOW - dt.timedelta(minutes=4) <= e["start"] <= start
            return not in_window and e["title"] != title

        noise = noise_events(rng, rng.randint(8, 16), keep)
        return {"titles": [title], "events": _jsonable([target] + noise)}

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_calendar_day(ui, None)
        upcoming: list[tuple[dt.time, str]] = []
        for title in find_all(ui, id_is("event_item_title")):
            time_row = _subtitle_under(ui, title)
            if time_row is None:
                continue
            starts = _parse_clock(time_row.text.split(" \u2013 ")[0])
            if starts is not None and starts >= DEVICE_NOW.time():
                upcoming.append((starts, title.text))
        if not upcoming:
            raise ExpertStuck("no upcoming event today")
        first = min(t for t, _ in upcoming)
        yield Finished(", ".join(name for t, name in upcoming if t == first))


def _subtitle_under(ui: Any, title: Any) -> Any | None:
    """The event row's time/location line right under its ``title`` element, if it is on screen."""
    return find(ui, lambda e: e.resource_id.endswith(":id/event_item_time")
                and title.bounds[3] - 2 <= e.bounds[1] <= title.bounds[3] + 40 and e.bounds[3] - e.bounds[1] > 20)


def _list_center(ui: Any) -> tuple[int, int]:
    lists = find_all(ui, lambda e: e.scrollable)
    if not lists:
        raise ExpertStuck("no scrollable list on screen")
    return lists[0].center


def _parse_clock(text: str) -> dt.time | None:
    text = text.strip()
    for fmt in ("%I:%M %p", "%H:%M"):
        try:
            return dt.datetime.strptime(text, fmt).time()
        except ValueError:
            continue
    return None


__all__ = [
    "DEVICE_NOW",
    "EVENTS_URI",
    "SimpleCalendarAddOneEvent",
    "SimpleCalendarAddOneEventTomorrow",
    "SimpleCalendarAnyEventsOnDate",
    "SimpleCalendarDeleteEvents",
    "SimpleCalendarDeleteOneEvent",
    "SimpleCalendarEventsOnDate",
    "SimpleCalendarLocationOfEvent",
    "SimpleCalendarNextEvent",
    "read_events",
    "reset_calendar",
    "reworded_date",
]
