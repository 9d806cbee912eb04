"""The simulated Simple Calendar Pro and its tasks: month grid, editor and pickers, provider, experts, random agents."""

from __future__ import annotations

import datetime as dt

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.device_state import answers_match, normalize_answer, parse_rows, to_ms
from android_gym.tasks.sim import calendar as cal_tasks
from android_gym.tasks.sim.calendar import reworded_date

from .sim_ui import tap_on, texts, type_in, ui_of
from .task_checks import (
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

PKG = "com.simplemobiletools.calendar.pro"
URI = "content://com.android.calendar/events"
COLS = ["_id", "title", "description", "eventLocation", "dtstart", "dtend"]
NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ == cal_tasks.__name__)


def events(phone: SimPhone, where: str = "") -> list[dict]:
    cmd = f"content query --uri {URI} --projection {':'.join(COLS)}"
    if where:
        cmd += f" --where \"{where}\""
    return parse_rows(phone.shell(cmd), COLS)


# --- the app -------------------------------------------------------------------------------------------------


def tap_day(phone: SimPhone, day: dt.date, shown: tuple[int, int] = (2023, 10)) -> None:
    """Tap ``day``'s cell in the grid of the ``shown`` (year, month) (the cells carry no text: found by place)."""
    cells = [e for e in ui_of(phone).elements if e.resource_id == f"{PKG}:id/month_view_background"]
    start = cal_tasks.grid_start(*shown)
    phone.tap(*cells[(day - start).days].center)


def listed(phone: SimPhone) -> list[str]:
    """The app's elements as AndroidWorld lists them: description, else text, else the resource id's name."""
    from android_gym.replay import sim_ui_elements

    return [e.content_description or e.text or (e.resource_id or "").rsplit("/", 1)[-1] or e.class_name
            for e in sim_ui_elements(phone.dump()) if e.package_name == PKG]


def test_month_grid_and_day_pages_list_what_the_emulator_lists():
    """As the real SimpleCalendarDeleteEventsOnRelativeDay run lists them: the search bar, the pager, New Event, the
    month's arrows and title, 42 anonymous cells from September 24 (the 1st is a Sunday: a whole week before it);
    a day keeps the month in the tree and adds its own arrows, title and events list."""
    phone = SimPhone()
    phone.launch(PKG)
    bar = ["top_toolbar_search_icon", "Search", "Change view", "Settings", "More options"]
    month = ["top_left_arrow", "October", "top_right_arrow"] + ["month_view_background"] * 42
    assert listed(phone) == bar + ["androidx.viewpager.widget.b", "New Event"] + month
    assert cal_tasks.grid_start(2023, 10) == dt.date(2023, 9, 24)
    assert cal_tasks.grid_start(2023, 11) == dt.date(2023, 10, 29)
    tap_day(phone, dt.date(2023, 9, 25))
    assert listed(phone) == (["top_toolbar_search_icon", "Search", "Go to today", "Change view", "More options"]
                             + ["androidx.viewpager.widget.b"] * 2 + ["New Event"] + month
                             + ["top_left_arrow", "September 25 (Mon)", "top_right_arrow", "day_events"])
    tap_on(phone, text="More options")
    assert listed(phone)[-2:] == ["Settings", "About"]  # Settings moved from the bar into the menu
    phone.back()
    arrows = [e for e in ui_of(phone).elements if e.resource_id == f"{PKG}:id/top_right_arrow"]
    phone.long_press(*arrows[-1].center)  # a long press on the arrow works as a tap
    assert "September 26 (Tue)" in listed(phone)
    tap_on(phone, rid="top_toolbar_search_icon")
    assert listed(phone)[:5] == bar
    tap_on(phone, rid="top_right_arrow")
    assert "November" in listed(phone) and "Go to today" in listed(phone)
    tap_on(phone, text="Go to today")
    assert "October" in listed(phone)
    phone.swipe(900, 1200, 150, 1200)  # the pager turns the month
    assert "November" in listed(phone)
    phone.swipe(150, 1200, 900, 1200)
    assert "October" in listed(phone)


def test_day_page_shows_the_events_and_moves_by_day():
    phone = SimPhone()
    phone.launch(PKG)
    tap_day(phone, dt.date(2023, 10, 15))
    assert "Brunch with family" in texts(phone) and "October 15 (Sun)" in texts(phone)
    arrows = [e for e in ui_of(phone).elements if e.resource_id == f"{PKG}:id/top_right_arrow"]
    phone.tap(*arrows[-1].center)
    assert "October 16 (Mon)" in texts(phone) and "Brunch with family" not in texts(phone)


def test_new_event_through_the_form_and_picker_dialogs():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="New Event")
    type_in(phone, "event_title", "Dentist follow-up")
    type_in(phone, "event_location", "Downtown")
    tap_on(phone, rid="event_start_date")
    tap_on(phone, text="Next month")
    assert "November 2023" in texts(phone)
    tap_on(phone, text="Previous month")
    tap_on(phone, text="20 October 2023")
    assert "Fri, Oct 20" in texts(phone)
    tap_on(phone, text="OK")
    tap_on(phone, rid="event_start_time")
    type_in(phone, "input_hour", "09")  # "04" + "09": the field keeps the last two digits
    type_in(phone, "input_minute", "30")
    tap_on(phone, text="AM")
    tap_on(phone, text="OK")
    assert "Fri, Oct 20, 2023" in texts(phone) and "9:30 AM" in texts(phone)
    assert "10:30 AM" in texts(phone)  # the end moved with the start, keeping one hour
    tap_on(phone, rid="event_end_time")
    type_in(phone, "input_minute", "45")
    tap_on(phone, text="OK")
    tap_on(phone, text="Save")
    assert "Event added successfully" in texts(phone)
    row = events(phone, "title = 'Dentist follow-up'")[0]
    assert row["eventLocation"] == "Downtown"
    assert int(row["dtstart"]) == to_ms(dt.datetime(2023, 10, 20, 9, 30))
    assert int(row["dtend"]) == to_ms(dt.datetime(2023, 10, 20, 10, 45))


def test_time_picker_rejects_invalid_times_and_form_checks_title_and_order():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="New Event")
    tap_on(phone, text="Save")
    assert "Title cannot be empty" in texts(phone)
    type_in(phone, "event_title", "Call")
    tap_on(phone, rid="event_end_time")
    type_in(phone, "input_hour", "7")  # "05" + "7" -> "57", not an hour
    tap_on(phone, text="OK")
    assert "Enter a valid time" in texts(phone) and "Type in time" in texts(phone)
    type_in(phone, "input_hour", "01")
    tap_on(phone, text="PM")
    tap_on(phone, text="OK")  # ends 1:00 PM, before the 4:00 PM start
    tap_on(phone, text="Save")
    assert "The event cannot end earlier than it starts" in texts(phone)
    assert events(phone, "title = 'Call'") == []


def test_delete_with_confirmation_and_multi_select_delete():
    phone = SimPhone()
    phone.shell(f"content insert --uri {URI} --bind title:s:Standup --bind dtstart:l:{to_ms(dt.datetime(2023, 10, 16, 9))}"
                " --bind duration:i:15")
    phone.shell(f"content insert --uri {URI} --bind title:s:Lunch --bind dtstart:l:{to_ms(dt.datetime(2023, 10, 16, 12))}")
    phone.launch(PKG)
    tap_day(phone, dt.date(2023, 10, 16))
    assert texts(phone).count("Standup") == 1 and "9:00 AM \u2013 9:15 AM" in texts(phone)
    tap_on(phone, text="Standup")
    tap_on(phone, text="Delete")
    tap_on(phone, text="No")
    assert events(phone, "title = 'Standup'")
    tap_on(phone, text="Delete")
    tap_on(phone, text="Yes")
    assert events(phone, "title = 'Standup'") == [] and "Lunch" in texts(phone)
    phone.shell(f"content insert --uri {URI} --bind title:s:Gym --bind dtstart:l:{to_ms(dt.datetime(2023, 10, 16, 18))}")
    tap_on(phone, text="Lunch", long=True)
    assert "1 selected" in texts(phone)
    tap_on(phone, text="Gym")
    tap_on(phone, text="Delete")
    assert "Are you sure you want to delete these 2 events?" in texts(phone)
    tap_on(phone, text="Yes")
    assert events(phone, "dtstart >= 1697414400000 AND dtstart < 1697500800000") == []


def test_event_list_view_and_24_hour_setting():
    phone = SimPhone()
    phone.shell("settings put system time_12_24 24")
    phone.launch(PKG)
    tap_on(phone, text="Change view")
    tap_on(phone, text="Simple event list")
    shown = texts(phone)
    assert "Monday, October 2, 2023" in shown and "09:00 \u2013 09:30 \u00b7 Zoom meeting" in shown
    phone.swipe(540, 1800, 540, 600, 300)
    assert "Monday, October 2, 2023" not in texts(phone)
    phone.shell(f"am force-stop {PKG}")
    phone.launch(PKG)
    assert any(e.resource_id.endswith(":id/calendar_events_list") for e in ui_of(phone).elements)  # view remembered


def test_provider_insert_update_delete_and_errors():
    phone = SimPhone()
    phone.shell(f"content delete --uri {URI}")
    assert phone.shell(f"content query --uri {URI}").strip() == "No result found."
    start = to_ms(dt.datetime(2023, 10, 18, 14))
    phone.shell(f"content insert --uri {URI} --bind title:s:'Review, final' --bind location:s:'Room 4' "
                f"--bind description:s:'Bring notes' --bind dtstart:l:{start} --bind duration:i:45")
    row = events(phone)[0]
    assert row["title"] == "Review, final" and row["eventLocation"] == "Room 4"  # ", " inside a value parses
    assert int(row["dtend"]) - int(row["dtstart"]) == 45 * 60_000
    phone.shell(f"content update --uri {URI} --bind eventLocation:s:Online --where \"title LIKE 'Review%'\"")
    assert events(phone)[0]["eventLocation"] == "Online"
    out = phone.shell(f"content insert --uri {URI} --bind title:s:X --bind color:i:3 --bind dtstart:l:1")
    assert "unknown calendar event column" in out and "color" in out
    assert "needs dtstart" in phone.shell(f"content insert --uri {URI} --bind title:s:X")
    assert "unknown calendar uri" in phone.shell("content query --uri content://com.android.calendar/calendars")
    phone.shell(f"content delete --uri {URI} --where \"title = 'Review, final'\"")
    assert events(phone) == []


def test_snapshot_restores_calendar_data_and_page():
    device = SimDevice()
    device.shell(f"monkey -p {PKG} -c android.intent.category.LAUNCHER 1")
    device.snapshot_save("before")
    device.shell(f"content delete --uri {URI}")
    assert events(device.phone) == []
    device.snapshot_load("before")
    assert len(events(device.phone)) == 16
    assert device.observe().package == PKG


# --- tasks -----------------------------------------------------------------------------------------------


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES)
    assert len(NAMES) == 8


def test_goals_read_like_androidworld():
    goal = TASK_REGISTRY["SimpleCalendarAddOneEvent"](seed=3).goal
    assert goal.startswith("In Simple Calendar Pro, create a calendar event on 2023-10-")
    tomorrow = TASK_REGISTRY["SimpleCalendarAddOneEventTomorrow"](seed=3)
    assert tomorrow.params["day"] == 16 and "{" not in tomorrow.goal
    import random

    rng = random.Random(0)
    said = {reworded_date(dt.date(2023, 10, 16), rng) for _ in range(60)}
    assert said == {"tomorrow", "Monday", "this Monday", "October 16", "October 16 2023"}
    assert {reworded_date(dt.date(2023, 10, 27), rng) for _ in range(40)} == {
        "the Friday after next", "October 27", "October 27 2023"}


def test_answer_rule():
    assert normalize_answer("  Dan's  Birthday-Party! ") == "dan s birthday party"
    assert answers_match("Team lunch, concert", ["Concert", "Team Lunch"])
    assert answers_match("team lunch.", ["Team lunch"])
    assert not answers_match("Team lunch", ["Team lunch", "Concert"])
    assert not answers_match("Team lunch, Concert, Concert", ["Team lunch", "Concert"])
    assert not answers_match(None, ["Concert"]) and not answers_match("", ["Concert"])


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_five_seeds(name):
    check_expert_solves(name)


@pytest.mark.parametrize("name", NAMES)
def test_initial_state_is_not_a_success_and_initialize_is_repeatable(name):
    def events_without_ids(device: SimDevice) -> list[dict]:
        return [{k: v for k, v in r.items() if k != "_id"} for r in events(device.phone)]

    check_start_state(TASK_REGISTRY[name](seed=4), events_without_ids, launch(PKG))


def test_wrong_answers_and_wrong_edits_score_zero():
    task = TASK_REGISTRY["SimpleCalendarAnyEventsOnDate"](seed=1)
    device = SimDevice()
    task.initialize(device)
    titles = task.params["titles"]
    assert task.is_successful(device, ", ".join(titles)) == 1.0
    assert task.is_successful(device, ", ".join(titles[:2])) == 0.0
    delete = TASK_REGISTRY["SimpleCalendarDeleteEvents"](seed=1)
    delete.initialize(device)
    device.shell(f"content delete --uri {URI}")  # deleting everything also deletes the other days
    assert delete.is_successful(device) == 0.0


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed))
