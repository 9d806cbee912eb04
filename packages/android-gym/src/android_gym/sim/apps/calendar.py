"""Simple Calendar Pro (com.simplemobiletools.calendar.pro): month grid or event list, day pages,
an event editor with date/time picker dialogs and repetition, deletion with confirmation, and a search over
every event.

Pages: ``search`` (the bar's Search: a query field and the matching events under day headers),
``main`` (the month grid of the shown month, or the "Event list" view chosen through
"Change view"), ``day`` (one date's events, previous/next day, long-press to select several and
delete them), ``event`` (the editor for a new or existing event: Title, Location, Description,
start and end date/time rows opening picker dialogs, All-day switch, Repeat; Save and Delete in
the app bar). The month grid starts Sunday; dates and times follow the phone's 12/24-hour setting.

The main screen and the day pages are built as the real SimpleCalendarDeleteEventsOnRelativeDay run on
AndroidWorld's emulator lists them: Simple Mobile Tools' search bar (icon, "Search", "Change view" and "Settings",
or "Go to today" and "Change view" away from today, More options), the month ViewPager with its arrows, title
("October") and 42 clickable ``month_view_background`` cells that carry no text (the app draws the numbers and
events on a canvas), New Event; a day page keeps the month's pager in the tree and adds its own arrows, title
("September 25 (Mon)") and ``day_events`` list.

The time picker is Android's keyboard-input mode: an hour and a minute field (each keeps the
last two digits typed, so typing "09" into "04" gives "09") and AM/PM buttons in 12-hour mode.

Provider (authority ``com.android.calendar``), what tasks read and write through ``content``:
``content://com.android.calendar/events`` has one row per event:
``_id, calendar_id, title, description, eventLocation, dtstart, dtend, allDay, rrule, eventTimezone``
with ``dtstart``/``dtend`` in epoch milliseconds. Times are wall-clock times of the phone read as
UTC (the simulated phone's ``persist.sys.timezone`` is UTC), so 2023-10-15 15:34 is 1697384040000.
Insert accepts ``location`` as an alias of ``eventLocation`` and ``duration`` in minutes when
``dtend`` is missing; update and delete take ``--where``.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from android_gym.sim.app import App, Row, RowMatch, register_app
from android_gym.sim.apps.columns import from_ms, number_value, to_ms
from android_gym.sim.apps.search_bar import search_bar
from android_gym.sim.databases import build_database, read_table
from android_gym.sim.pickers import EventFormPickers
from android_gym.sim.view import (
    HORIZONTAL,
    Column,
    Dialog,
    EditText,
    Fab,
    ImageButton,
    ListItem,
    RadioButton,
    ScrollList,
    Switch,
    Text,
    Toolbar,
    View,
)
from android_gym.sim.widgets import MultiSelect

CALENDAR_PKG = "com.simplemobiletools.calendar.pro"
EVENTS_URI = "content://com.android.calendar/events"

MAIN_MENU = ("Go to date", "Print", "Add holidays", "Add contact birthdays", "Add contact anniversaries",
             "Import events from an .ics file", "Export events to an .ics file", "Settings", "About")
"""More options on the main screen, in the emulator's order."""

REPEAT_RULES: dict[str, str] = {
    "": "No repetition",
    "FREQ=DAILY": "Daily",
    "FREQ=WEEKLY": "Weekly",
    "FREQ=MONTHLY": "Monthly",
    "FREQ=YEARLY": "Yearly",
}
"""RRULE stored in the provider -> the label the Repeat row shows."""

EVENT_COLUMNS = ("_id", "calendar_id", "title", "description", "eventLocation", "dtstart", "dtend", "allDay",
                 "rrule", "eventTimezone")
"""The provider's columns, in the order ``content query`` prints them."""

# The events a factory-fresh phone holds (tasks replace them through the provider):
# (day of October 2023, start "HH:MM", minutes, title, location, description).
DEFAULT_EVENTS: tuple[tuple[int, str, int, str, str, str], ...] = (
    (2, "09:00", 30, "Team standup", "Zoom meeting", "Daily sync with the platform team"),
    (3, "12:30", 60, "Lunch with Priya", "Riverside Restaurant", "Catch up about the new role"),
    (5, "18:00", 90, "Yoga class", "The gym", "Bring a mat"),
    (7, "10:00", 120, "Farmers market", "City Park", "Apples, honey and bread"),
    (9, "14:00", 60, "Dentist", "Downtown", "Routine check-up"),
    (11, "16:00", 45, "Project review", "Conference Room A", "Q4 roadmap review"),
    (13, "19:30", 150, "Movie night", "Sarah's apartment", "Bring snacks"),
    (15, "11:00", 60, "Brunch with family", "The Coffee Bean", "Mom's favourite place"),
    (17, "08:30", 30, "Car service", "Local garage", "Oil change and tyre check"),
    (18, "13:00", 60, "Design critique", "Conference Room A", "Review the onboarding flow"),
    (20, "17:00", 120, "Book club", "Local library", "Discuss chapters 5-9"),
    (22, "09:30", 240, "Hiking trip", "State Park", "Meet at the north trailhead"),
    (24, "15:00", 60, "Budget planning", "Online", "Prepare the November budget"),
    (26, "20:00", 90, "Concert", "School auditorium", "Jazz quartet"),
    (28, "10:00", 180, "Volunteer cleanup", "The beach", "Gloves provided"),
    (30, "12:00", 60, "Quarterly review", "Conference Room A", "Numbers for Q3"),
)


CALENDAR_DB = "/data/data/com.simplemobiletools.calendar.pro/databases/events.db"
_EVENT_COLUMNS = (
    "`id` INTEGER PRIMARY KEY AUTOINCREMENT", "`start_ts` INTEGER NOT NULL", "`end_ts` INTEGER NOT NULL",
    "`title` TEXT NOT NULL", "`location` TEXT NOT NULL", "`description` TEXT NOT NULL",
    "`reminder_1_minutes` INTEGER NOT NULL", "`reminder_2_minutes` INTEGER NOT NULL",
    "`reminder_3_minutes` INTEGER NOT NULL", "`reminder_1_type` INTEGER NOT NULL", "`reminder_2_type` INTEGER NOT NULL",
    "`reminder_3_type` INTEGER NOT NULL", "`repeat_interval` INTEGER NOT NULL", "`repeat_rule` INTEGER NOT NULL",
    "`repeat_limit` INTEGER NOT NULL", "`repetition_exceptions` TEXT NOT NULL", "`attendees` TEXT NOT NULL",
    "`import_id` TEXT NOT NULL", "`time_zone` TEXT NOT NULL", "`flags` INTEGER NOT NULL",
    "`event_type` INTEGER NOT NULL", "`parent_id` INTEGER NOT NULL", "`last_updated` INTEGER NOT NULL",
    "`source` TEXT NOT NULL", "`availability` INTEGER NOT NULL", "`color` INTEGER NOT NULL", "`type` INTEGER NOT NULL",
)
CALENDAR_SCHEMA = ("CREATE TABLE android_metadata (locale TEXT)",
                   f"CREATE TABLE `events` ({', '.join(_EVENT_COLUMNS)})")
"""Simple Calendar Pro's Room ``events`` table (what AndroidWorld's calendar tasks read and write)."""
_REPEAT_SECONDS = {"FREQ=DAILY": 86400, "FREQ=WEEKLY": 604800, "FREQ=MONTHLY": 2592001, "FREQ=YEARLY": 31536000}
_FLAG_ALL_DAY = 1


def _event_row(e: dict[str, Any]) -> dict[str, Any]:
    """One sim event as a row of Simple Calendar's table (weekly repeats carry the start's weekday bit)."""
    freq = (e["rrule"] or "").split(";")[0]
    interval = _REPEAT_SECONDS.get(freq, 0)
    rule = 1 << from_ms(e["dtstart"]).weekday() if freq == "FREQ=WEEKLY" else 0
    return {"id": e["_id"], "start_ts": e["dtstart"] // 1000, "end_ts": e["dtend"] // 1000, "title": e["title"],
            "location": e["eventLocation"], "description": e["description"], "reminder_1_minutes": -1,
            "reminder_2_minutes": -1, "reminder_3_minutes": -1, "reminder_1_type": 0, "reminder_2_type": 0,
            "reminder_3_type": 0, "repeat_interval": interval, "repeat_rule": rule, "repeat_limit": 0,
            "repetition_exceptions": "[]", "attendees": "", "import_id": "", "time_zone": "UTC",
            "flags": _FLAG_ALL_DAY if e["allDay"] else 0, "event_type": 1, "parent_id": 0, "last_updated": 0,
            "source": "simple-calendar", "availability": 0, "color": 0, "type": 0}


def _event_from_row(r: dict[str, Any]) -> dict[str, Any]:
    """A sim event from a row of Simple Calendar's table."""
    freq = next((f for f, secs in _REPEAT_SECONDS.items() if secs == int(r.get("repeat_interval") or 0)), "")
    return {"_id": int(r["id"]), "title": str(r["title"] or ""), "description": str(r["description"] or ""),
            "eventLocation": str(r["location"] or ""), "dtstart": int(r["start_ts"]) * 1000,
            "dtend": int(r["end_ts"]) * 1000, "allDay": int(bool(int(r.get("flags") or 0) & _FLAG_ALL_DAY)),
            "rrule": freq}


@register_app
class SimpleCalendarApp(EventFormPickers, MultiSelect, App):
    """Simple Calendar Pro over a list of plain event dicts (see the module docstring for the provider)."""

    package = CALENDAR_PKG
    label = "Simple Calendar Pro"
    activity = ".activities.MainActivity"
    main_page = "main"
    authorities = ("com.android.calendar",)
    icon_color = "#f57c00"

    databases = (CALENDAR_DB,)

    def clear_data(self) -> None:
        """``pm clear``: no events."""
        self.events = []
        self.next_id = 1

    def dump_database(self, path: str) -> bytes:
        """events.db with Simple Calendar Pro's ``events`` table (times in epoch seconds, its repeat encoding)."""
        return build_database(CALENDAR_SCHEMA, {"events": [_event_row(e) for e in self.events]})

    def load_database(self, path: str, data: bytes) -> None:
        """Replace the events with the rows of a written events.db."""
        self.events = [_event_from_row(r) for r in read_table(data, "events")]
        self.next_id = max((e["_id"] for e in self.events), default=0) + 1
        self.selection = [i for i in self.selection if any(e["_id"] == i for e in self.events)]

    def setup(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.next_id = 1
        for day, start, minutes, title, location, description in DEFAULT_EVENTS:
            hh, mm = (int(x) for x in start.split(":"))
            begin = dt.datetime(2023, 10, day, hh, mm)
            self._add_event(title, description, location, to_ms(begin),
                            to_ms(begin + dt.timedelta(minutes=minutes)))
        self.view_mode = "month"
        self._reset_ui()

    def _reset_ui(self) -> None:
        today = self.phone.now().date()
        self.shown_year = today.year
        self.shown_month = today.month
        self.selection: list[int] = []
        self.form: dict[str, Any] = {}
        self.picker: dict[str, Any] = {}
        self.query = ""

    def on_open(self) -> None:
        self._reset_ui()

    def current_activity(self) -> str:
        return ".activities.EventActivity" if self.page == "event" else self.activity

    # --- data ------------------------------------------------------------------------------------
    def _add_event(self, title: str, description: str, location: str, start_ms: int, end_ms: int,
                   all_day: int = 0, rrule: str = "") -> int:
        event_id = self.next_id
        self.next_id += 1
        self.events.append({"_id": event_id, "title": title, "description": description, "eventLocation": location,
                            "dtstart": int(start_ms), "dtend": int(end_ms), "allDay": int(all_day),
                            "rrule": rrule})
        return event_id

    def _event(self, event_id: int | None) -> dict[str, Any] | None:
        return next((e for e in self.events if e["_id"] == event_id), None)

    def events_on(self, day: dt.date) -> list[dict[str, Any]]:
        """Events starting on ``day`` (or spanning it), sorted by start time then title."""
        start = to_ms(dt.datetime.combine(day, dt.time()))
        end = start + 86_400_000
        found = [e for e in self.events if e["dtstart"] < end and max(e["dtend"], e["dtstart"] + 1) > start]
        return sorted(found, key=lambda e: (e["dtstart"], e["title"].lower(), e["_id"]))

    # --- formatting ------------------------------------------------------------------------------
    def fmt_time(self, when: dt.datetime | dt.time) -> str:
        """"3:30 PM" (12-hour setting) or "15:30"."""
        if self._h24():
            return f"{when.hour:02d}:{when.minute:02d}"
        suffix = "AM" if when.hour < 12 else "PM"
        return f"{when.hour % 12 or 12}:{when.minute:02d} {suffix}"

    @staticmethod
    def fmt_date(day: dt.date) -> str:
        """"Fri, Oct 20, 2023"."""
        return f"{day.strftime('%a')}, {day.strftime('%b')} {day.day}, {day.year}"

    def _span(self, event: dict[str, Any]) -> str:
        if event["allDay"]:
            return "All day"
        return f"{self.fmt_time(from_ms(event['dtstart']))} \u2013 {self.fmt_time(from_ms(event['dtend']))}"

    def _event_row(self, event: dict[str, Any], selectable: bool) -> View:
        eid = event["_id"]
        subtitle = self._span(event)
        if event["eventLocation"]:
            subtitle += f" \u00b7 {event['eventLocation']}"
        selected = eid in self.selection
        row = ListItem(
            event["title"], subtitle,
            (lambda e=eid: self._toggle(e)) if self.selection else (lambda e=eid: self.open_event(e)),
            on_long_click=(lambda e=eid: self._toggle(e)) if selectable else None,
            resource_id="event_item_holder", title_id="event_item_title", subtitle_id="event_item_time",
            icon="o",
            trailing=self.selection_check(selected, "event_item_check") if self.selection else None,
        )
        row.selected = selected
        return row

    # --- navigation helpers ------------------------------------------------------------------------
    def open_day(self, day: dt.date) -> None:
        """Show the day page of ``day``."""
        self.selection = []
        self.push("day", date=day.isoformat())

    def open_event(self, event_id: int) -> None:
        """Open the editor on an existing event."""
        event = self._event(event_id)
        if event is None:
            return
        start, end = from_ms(event["dtstart"]), from_ms(event["dtend"])
        self.form = {"event_id": event_id, "title": event["title"], "location": event["eventLocation"],
                     "description": event["description"], "start": start.isoformat(timespec="minutes"),
                     "end": end.isoformat(timespec="minutes"), "all_day": bool(event["allDay"]),
                     "rrule": event["rrule"]}
        self.push("event", event_id=event_id)

    def new_event(self, day: str | None = None) -> None:
        """Open the editor on a new event starting at the next full hour (on ``day`` when given)."""
        now = self.phone.now()
        start = now.replace(minute=0, second=0, microsecond=0) + dt.timedelta(hours=1)
        if day is not None:
            start = dt.datetime.combine(dt.date.fromisoformat(day), start.time())
        end = start + dt.timedelta(hours=1)
        self.form = {"event_id": None, "title": "", "location": "", "description": "",
                     "start": start.isoformat(timespec="minutes"), "end": end.isoformat(timespec="minutes"),
                     "all_day": False, "rrule": ""}
        self.selection = []
        self.push("event", event_id=None)

    def _shift_month(self, delta: int) -> None:
        month = self.shown_month - 1 + delta
        self.shown_year += month // 12
        self.shown_month = month % 12 + 1

    # --- pages -----------------------------------------------------------------------------------
    def build_main(self) -> View:
        if self.view_mode == "list":
            return self._build_event_list()
        return self._build_month()

    def _bar(self, showing_today: bool, on_icon: Any = None) -> View:
        """The search bar over every view: the icon, "Search", then "Change view" and "Settings", or "Go to today"
        and "Change view" while the shown month or day is not today's (then Settings moves to More options)."""
        actions = [("Change view", "change_view", lambda: self.show_dialog("change_view"))]
        if showing_today:
            actions.append(("Settings", "settings", lambda: self.toast("Settings are not available")))
        else:
            actions.insert(0, ("Go to today", "go_to_today", self._go_today))
        return search_bar("", on_icon or self.open_search, "Search", "", lambda _v: self.open_search(), actions,
                          lambda: self.show_dialog("main_menu"), key="calendar_bar_search", on_field=self.open_search)

    def _showing_today(self) -> bool:
        """Whether the shown day (day page) or month (month grid) is today's; the event list counts as today's."""
        today = self.phone.now().date()
        if self.page == "day":
            return self.pages[-1][1]["date"] == today.isoformat()
        return self.view_mode == "list" or (self.shown_year, self.shown_month) == (today.year, today.month)

    def _go_today(self) -> None:
        today = self.phone.now().date()
        self.shown_year, self.shown_month = today.year, today.month
        self.scroll.pop("main:list", None)
        if self.page == "day":
            self._move_day(today, 0)

    @staticmethod
    def grid_start(year: int, month: int) -> dt.date:
        """The first day the month grid shows: the Sunday before the 1st (a whole week before when the 1st is a
        Sunday, as the app draws October 2023: its first row is September 24-30)."""
        first = dt.date(year, month, 1)
        return first - dt.timedelta(days=(first.weekday() + 1) % 7 or 7)

    def _pager(self, header: list[View], body: list[View], **kw: Any) -> View:
        """A ViewPager page (the emulator lists the pager as a clickable scrolling ``b``): the navigation row
        (previous arrow, title, next arrow) over the page's body."""
        nav = View(cls="android.widget.RelativeLayout", orientation=HORIZONTAL, height=54, layout_only=True,
                   children=header)
        return View(cls="androidx.viewpager.widget.b", clickable=True, focusable=True, scrollable=True, children=[
            Column(nav, *body, layout_only=True, weight=1)], **kw)

    @staticmethod
    def _arrow(rid: str, on_click: Any, icon: str) -> View:
        """A navigation arrow: an ImageView without a description (a long press works as a tap, as on the
        emulator, where the arrows have no long-press action)."""
        return View(cls="android.widget.ImageView", resource_id=rid, on_click=on_click, on_long_click=on_click,
                    clickable=True, focusable=True, width=56, height=54, icon=icon)

    def _month_pager(self) -> View:
        year, month = self.shown_year, self.shown_month
        today = self.phone.now().date()
        title = dt.date(year, month, 1).strftime("%B") + ("" if year == today.year else f" {year}")
        header = [self._arrow("top_left_arrow", lambda: self._shift_month(-1), "<"),
                  Text(title, resource_id="top_value", content_desc=title, size=18, bold=True, align="center",
                       weight=1, max_lines=1, padding=(0, 14), clickable=True, focusable=True,
                       on_click=lambda: None),  # listed as clickable; what the emulator's title opens is not known
                  self._arrow("top_right_arrow", lambda: self._shift_month(1), ">")]
        start = self.grid_start(year, month)
        rows = [View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, layout_only=True, weight=1,
                     children=[self._day_cell(start + dt.timedelta(days=7 * week + col), month, today)
                               for col in range(7)]) for week in range(6)]
        letters = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=28, layout_only=True,
                       children=[Text(d, size=12, align="center", weight=1, color="#5f6368", padding=(0, 6),
                                      layout_only=True) for d in ("S", "M", "T", "W", "T", "F", "S")])
        return self._pager(header, [letters, Column(*rows, layout_only=True, weight=1)], weight=1)

    def _build_month(self) -> View:
        """The month grid as the emulator lists it: the search bar, the pager, New Event, the month's arrows and
        title, then 42 anonymous day cells (the app draws numbers and events on a canvas: none are listed)."""
        bar = self._selection_toolbar() if self.selection else self._bar(self._showing_today())
        return Column(bar, self._month_pager(), Fab("New Event", self.new_event, resource_id="calendar_fab"),
                      cls="android.widget.RelativeLayout", resource_id="calendar_coordinator", weight=1,
                      layout_only=True)

    def _day_cell(self, day: dt.date, month: int, today: dt.date) -> View:
        """One cell: a clickable ``month_view_background``; its number and events are drawn, not listed."""
        events = self.events_on(day)
        colour = "#1f1f1f" if day.month == month else "#9aa0a6"
        labels = [Text(e["title"], size=10, max_lines=1, padding=(2, 1), color="#ffffff", background="#f57c00",
                       layout_only=True) for e in events[:2]]
        if len(events) > 2:
            labels.append(Text(f"+{len(events) - 2}", size=10, max_lines=1, padding=(2, 1), color="#5f6368",
                               layout_only=True))
        return View(cls="android.view.View", clickable=True, focusable=True, weight=1,
                    resource_id="month_view_background", background="#fde7d4" if day == today else None,
                    on_click=lambda d=day: self.open_day(d), children=[
                        Text(str(day.day), size=14, bold=day == today, align="center", padding=(0, 2), color=colour,
                             layout_only=True),
                        *labels,
                    ])

    def _build_event_list(self) -> View:
        items: list[View] = []
        by_day: dict[dt.date, list[dict[str, Any]]] = {}
        for e in sorted(self.events, key=lambda e: (e["dtstart"], e["title"].lower(), e["_id"])):
            by_day.setdefault(from_ms(e["dtstart"]).date(), []).append(e)
        for day, events in by_day.items():
            items.append(Text(f"{day.strftime('%A')}, {day.strftime('%B')} {day.day}, {day.year}", size=14,
                              bold=True, color="#f57c00", padding=(16, 12), resource_id="event_section_title"))
            items.extend(self._event_row(e, selectable=True) for e in events)
        if not items:
            items = [Text("No upcoming events", resource_id="calendar_empty_list_placeholder", padding=(24, 48),
                          align="center")]
        toolbar = self._selection_toolbar() if self.selection else self._bar(True)
        return Column(toolbar, ScrollList(items, "main:list", resource_id="calendar_events_list"),
                      Fab("New Event", self.new_event, resource_id="calendar_fab"),
                      cls="android.widget.RelativeLayout", resource_id="calendar_coordinator", weight=1)

    def _selection_toolbar(self) -> View:
        return self.selection_toolbar("Done", delete_id="cab_delete", toolbar_id="cab_toolbar")

    def build_day(self, date: str) -> View:
        """A day as the emulator lists it: the month's pager stays in the tree under the day's (both listed), the
        day's arrows and title ("September 25 (Mon)") and its events list (listed even when empty)."""
        day = dt.date.fromisoformat(date)
        today = self.phone.now().date()
        items: list[View] = [self._event_row(e, selectable=True) for e in self.events_on(day)]
        header = [self._arrow("top_left_arrow", lambda: self._move_day(day, -1), "<"),
                  Text(f"{day.strftime('%B')} {day.day} ({day.strftime('%a')})", resource_id="top_value", size=18,
                       bold=True, align="center", weight=1, max_lines=1, padding=(0, 14), clickable=True,
                       focusable=True, on_click=lambda: None),
                  self._arrow("top_right_arrow", lambda: self._move_day(day, 1), ">")]
        events = ScrollList(items, "day:events", resource_id="day_events", wrap_content=bool(items))
        bar = self._selection_toolbar() if self.selection else self._bar(day == today, on_icon=self.pop)
        content_px = self.phone.height - self.phone.status_bar_height - self.phone.nav_bar_height
        pager_dp = (content_px - round(64 * self.phone.scale)) / self.phone.scale
        day_pager = self._pager(header, [events], height=pager_dp, overlay=True, background="#ffffff")
        return Column(bar, self._month_pager(), day_pager,
                      Fab("New Event", lambda: self.new_event(date), resource_id="calendar_fab"),
                      cls="android.widget.RelativeLayout", resource_id="day_holder", weight=1, layout_only=True)

    def dialog_main_menu(self) -> View:
        """More options, as the emulator lists it (Settings only while the bar has no room for it); the sim
        carries out none of them."""
        labels = [label for label in MAIN_MENU if label != "Settings" or not self._showing_today()]
        items = [ListItem(label, "", lambda t=label: self._menu_then(t), resource_id="menu_item", title_id="title",
                          min_height=48) for label in labels]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def _menu_then(self, label: str) -> None:
        self.close_dialog()
        self.toast(f"{label} is not available")

    def on_swipe(self, direction: str) -> bool:
        """A sideways swipe over the pager turns the month (or the day), as the ViewPager does."""
        if self.dialog is not None or direction not in ("left", "right") or self.page not in ("main", "day"):
            return False
        step = 1 if direction == "left" else -1
        if self.page == "day":
            self._move_day(dt.date.fromisoformat(self.pages[-1][1]["date"]), step)
        elif self.view_mode == "month":
            self._shift_month(step)
        return True

    def open_search(self) -> None:
        """The toolbar's Search: a query field over every event's title, location and description."""
        self.query = ""
        self.selection = []
        self.push("search")
        self.phone.set_focus("calendar_search")

    def _set_query(self, value: str) -> None:
        self.query = value
        self.scroll.pop("search:results", None)

    def build_search(self) -> View:
        """Search results: matching events under their day's header, in time order (what the real app lists)."""
        q = self.query.strip().lower()
        items: list[View] = []
        if q:
            found = [e for e in self.events
                     if q in e["title"].lower() or q in e["eventLocation"].lower() or q in e["description"].lower()]
            by_day: dict[dt.date, list[dict[str, Any]]] = {}
            for e in sorted(found, key=lambda e: (e["dtstart"], e["title"].lower(), e["_id"])):
                by_day.setdefault(from_ms(e["dtstart"]).date(), []).append(e)
            for day, events in by_day.items():
                items.append(Text(f"{day.strftime('%A')}, {day.strftime('%B')} {day.day}, {day.year}", size=14,
                                  bold=True, color="#f57c00", padding=(16, 12), resource_id="event_section_title"))
                items.extend(self._event_row(e, selectable=False) for e in events)
            if not items:
                items = [Text("No items found", resource_id="search_placeholder", padding=(24, 48), align="center")]
        else:
            items = [Text("Start typing to search", resource_id="search_placeholder", padding=(24, 48),
                          align="center", color="#5f6368")]
        bar = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=56, padding=(8.0, 4.0),
                   resource_id="top_toolbar_search_holder", children=[
                       ImageButton("Back", self.pop, resource_id="top_toolbar_search_icon", icon="<"),
                       EditText(self.query, self._set_query, hint="Search", key="calendar_search",
                                resource_id="top_toolbar_search", weight=1),
                   ])
        return Column(bar, ScrollList(items, "search:results", resource_id="search_results_list"),
                      cls="android.widget.RelativeLayout", resource_id="search_holder", weight=1)

    def _move_day(self, day: dt.date, delta: int) -> None:
        self.selection = []
        target = day + dt.timedelta(days=delta)
        self.pages[-1] = ("day", {"date": target.isoformat()})
        self.scroll.pop("day:events", None)

    # --- the event editor ----------------------------------------------------------------------------
    def _set_form(self, key: str, value: Any) -> None:
        self.form[key] = value

    def build_event(self, event_id: int | None) -> View:
        f = self.form
        start = dt.datetime.fromisoformat(f["start"])
        end = dt.datetime.fromisoformat(f["end"])
        actions = []
        if event_id is not None:
            actions.append(ImageButton("Delete", lambda: self.show_dialog("delete_event"), resource_id="delete",
                                       icon="D"))
        actions.append(ImageButton("Save", self.save_event, resource_id="save", icon="S"))

        def row(label_date: str, label_time: str, which: str) -> View:
            children = [
                View(cls="android.widget.TextView", text=label_date, resource_id=f"event_{which}_date",
                     clickable=True, focusable=True, weight=1, height=52, padding=(16.0, 14.0),
                     on_click=lambda: self.open_date_picker(which)),
            ]
            if not f["all_day"]:
                children.append(View(cls="android.widget.TextView", text=label_time,
                                     resource_id=f"event_{which}_time", clickable=True, focusable=True, width=140,
                                     height=52, padding=(16.0, 14.0), align="end",
                                     on_click=lambda: self.open_time_picker(which)))
            return View(cls="android.widget.RelativeLayout", orientation=HORIZONTAL, height=52, children=children)

        form: list[View] = [
            EditText(f["title"], lambda v: self._set_form("title", v), hint="Title", resource_id="event_title"),
            EditText(f["location"], lambda v: self._set_form("location", v), hint="Location",
                     resource_id="event_location"),
            EditText(f["description"], lambda v: self._set_form("description", v), hint="Description",
                     resource_id="event_description", multiline=True),
            ListItem("All-day", "", self._toggle_all_day, resource_id="event_all_day_holder",
                     trailing=Switch(bool(f["all_day"]), self._toggle_all_day, resource_id="event_all_day")),
            row(self.fmt_date(start.date()), self.fmt_time(start), "start"),
            row(self.fmt_date(end.date()), self.fmt_time(end), "end"),
            ListItem("Repeat", REPEAT_RULES.get(f["rrule"], "Custom"), lambda: self.show_dialog("repeat"),
                     resource_id="event_repetition_holder", subtitle_id="event_repetition", icon="R"),
        ]
        title = "Edit Event" if event_id is not None else "New Event"
        return Column(Toolbar(title, on_back=self.pop, actions=actions, resource_id="event_toolbar"),
                      ScrollList(form, "event:form", resource_id="event_scrollview",
                                 cls="android.widget.ScrollView"),
                      cls="android.widget.RelativeLayout", resource_id="event_coordinator", weight=1)

    def _toggle_all_day(self) -> None:
        self.form["all_day"] = not self.form["all_day"]

    def save_event(self) -> None:
        """Validate the form and write the event (new or edited); toasts say what is wrong."""
        f = self.form
        title = f["title"].strip()
        if not title:
            self.toast("Title cannot be empty")
            return
        start = dt.datetime.fromisoformat(f["start"])
        end = dt.datetime.fromisoformat(f["end"])
        if f["all_day"]:
            start = dt.datetime.combine(start.date(), dt.time())
            end = dt.datetime.combine(end.date(), dt.time()) + dt.timedelta(days=1)
        if end < start:
            self.toast("The event cannot end earlier than it starts")
            return
        values = {"title": title, "description": f["description"], "eventLocation": f["location"].strip(),
                  "dtstart": to_ms(start), "dtend": to_ms(end), "allDay": int(bool(f["all_day"])),
                  "rrule": f["rrule"]}
        event = self._event(f["event_id"])
        if event is not None:
            event.update(values)
            self.toast("Event updated successfully")
        else:
            self._add_event(values["title"], values["description"], values["eventLocation"], values["dtstart"],
                            values["dtend"], values["allDay"], values["rrule"])
            self.toast("Event added successfully")
        self.form = {}
        self.pop()

    def dialog_repeat(self) -> View:
        current = self.form.get("rrule", "")
        options = [RadioButton(rule == current, (lambda r=rule: self._set_repeat(r)), text=label,
                               resource_id="dialog_radio_button") for rule, label in REPEAT_RULES.items()]
        return Dialog("Repeat", Column(*options, resource_id="dialog_radio_group", padding=(16, 0)),
                      [("Cancel", self.close_dialog)], button_ids=["android:id/button2"])

    def _set_repeat(self, rule: str) -> None:
        self.form["rrule"] = rule
        self.close_dialog()

    def dialog_delete_event(self) -> View:
        return Dialog("", "Are you sure you want to delete this event?",
                      [("No", self.close_dialog), ("Yes", self._delete_current)],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _delete_current(self) -> None:
        event_id = self.form.get("event_id")
        self.events = [e for e in self.events if e["_id"] != event_id]
        self.form = {}
        self.close_dialog()
        self.pop()
        self.toast("Event deleted")

    def dialog_delete_selected(self) -> View:
        n = len(self.selection)
        what = "this event" if n == 1 else f"these {n} events"
        return Dialog("", f"Are you sure you want to delete {what}?",
                      [("No", self.close_dialog), ("Yes", self._delete_selected)],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _delete_selected(self) -> None:
        chosen = set(self.selection)
        self.events = [e for e in self.events if e["_id"] not in chosen]
        self.selection = []
        self.close_dialog()
        self.toast("Events deleted")

    def dialog_change_view(self) -> View:
        options = [RadioButton(self.view_mode == mode, (lambda m=mode: self._set_view(m)), text=label,
                               resource_id="dialog_radio_button")
                   for mode, label in (("month", "Month view"), ("list", "Simple event list"))]
        return Dialog("Change view", Column(*options, resource_id="dialog_radio_group", padding=(16, 0)),
                      [("Cancel", self.close_dialog)], button_ids=["android:id/button2"])

    def _set_view(self, mode: str) -> None:
        self.view_mode = mode
        self.selection = []
        self.scroll.pop("main:list", None)
        self.close_dialog()

    # --- content provider ------------------------------------------------------------------------------
    @staticmethod
    def _check_uri(uri: str) -> None:
        rest = uri.split("://", 1)[-1]
        path = rest.split("/", 1)[1] if "/" in rest else ""
        if path.split("/")[0] != "events":
            raise ValueError(f"unknown calendar uri {uri!r}; use {EVENTS_URI}")

    def content_query(self, uri: str) -> list[Row]:
        self._check_uri(uri)
        rows = []
        for e in sorted(self.events, key=lambda e: e["_id"]):
            rows.append({"_id": e["_id"], "calendar_id": 1, "title": e["title"], "description": e["description"],
                         "eventLocation": e["eventLocation"], "dtstart": e["dtstart"], "dtend": e["dtend"],
                         "allDay": e["allDay"], "rrule": e["rrule"] or None, "eventTimezone": "UTC"})
        return rows

    def content_insert(self, uri: str, values: Row) -> str:
        self._check_uri(uri)
        unknown = set(values) - set(EVENT_COLUMNS) - {"location", "duration"}
        if unknown:
            raise ValueError(f"unknown calendar event column(s) {sorted(unknown)}; known: {list(EVENT_COLUMNS)}")
        if "dtstart" not in values:
            raise ValueError("a calendar event needs dtstart (epoch ms)")
        start = number_value(values["dtstart"], "dtstart", "calendar event")
        if values.get("dtend") is not None:
            end = number_value(values["dtend"], "dtend", "calendar event")
        else:
            end = start + number_value(values.get("duration", 60), "duration", "calendar event") * 60_000
        event_id = self._add_event(str(values.get("title") or ""), str(values.get("description") or ""),
                                   str(values.get("eventLocation", values.get("location")) or ""), start, end,
                                   number_value(values.get("allDay", 0), "allDay", "calendar event"),
                                   str(values.get("rrule") or ""))
        return f"{EVENTS_URI}/{event_id}"

    def content_update(self, uri: str, values: Row, match: RowMatch) -> int:
        self._check_uri(uri)
        ids = {r["_id"] for r in self.content_query(uri) if match(r)}
        for e in self.events:
            if e["_id"] not in ids:
                continue
            for key, value in values.items():
                key = "eventLocation" if key == "location" else key
                if key in ("dtstart", "dtend", "allDay"):
                    e[key] = number_value(value, key, "calendar event")
                elif key in ("title", "description", "eventLocation", "rrule"):
                    e[key] = "" if value is None else str(value)
        return len(ids)

    def content_delete(self, uri: str, match: RowMatch) -> int:
        self._check_uri(uri)
        ids = {r["_id"] for r in self.content_query(uri) if match(r)}
        self.events = [e for e in self.events if e["_id"] not in ids]
        self.selection = [i for i in self.selection if i not in ids]
        return len(ids)
