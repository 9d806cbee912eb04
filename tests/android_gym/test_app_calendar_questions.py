"""Simple Calendar Pro's search, repeating events and the time-window questions: re-creations and experts."""

from __future__ import annotations

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.sim import calendar_questions, calendar_repeating
from android_gym.tasks.sim.calendar_questions import parse_time_text

from .sim_ui import tap_on, texts, type_in
from .task_checks import (
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

PKG = "com.simplemobiletools.calendar.pro"
URI = "content://com.android.calendar/events"
NAMES = sorted(n for n, c in TASK_REGISTRY.items()
               if c.__module__ in (calendar_questions.__name__, calendar_repeating.__name__))


def test_search_lists_matching_events_under_their_day():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="Search")
    assert "Start typing to search" in texts(phone)
    type_in(phone, "top_toolbar_search", "conference room")  # matches the location, any case
    shown = texts(phone)
    assert shown.index("Wednesday, October 11, 2023") < shown.index("Project review")
    assert "Design critique" in shown and "Quarterly review" in shown and "Book club" not in shown
    type_in(phone, "top_toolbar_search", "no such event")
    assert "No items found" in texts(phone)


def test_repeat_row_writes_the_rule_to_provider_and_database():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="New Event")
    type_in(phone, "event_title", "Standup")
    tap_on(phone, rid="event_repetition_holder")
    tap_on(phone, text="Weekly")
    assert "Weekly" in texts(phone)
    tap_on(phone, rid="save")
    out = phone.shell(f"content query --uri {URI} --projection title:rrule --where \"title='Standup'\"")
    assert "rrule=FREQ=WEEKLY" in out
    rows = phone.shell("sqlite3 /data/data/com.simplemobiletools.calendar.pro/databases/events.db "
                       "\"SELECT repeat_interval, repeat_rule, repeat_limit FROM events WHERE title='Standup'\"")
    assert rows.strip() == "604800|64|0"  # Sunday October 15 2023: Simple Calendar's Sunday bit, forever


def test_androidworld_time_forms_parse():
    assert [parse_time_text(t).strftime("%H:%M") for t in ("21:45", "3:15pm", "12pm", "12am", "9:45am")] == [
        "21:45", "15:15", "12:00", "00:00", "09:45"]


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES)
    assert len(NAMES) == 6


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_five_seeds(name):
    check_expert_solves(name)


@pytest.mark.parametrize("name", ["SimpleCalendarEventsInNextWeek", "SimpleCalendarAddRepeatingEvent"])
def test_initial_state_is_not_a_success_and_initialize_is_repeatable(name):
    def titles(device: SimDevice) -> list[str]:
        return sorted(line for line in device.shell(f"content query --uri {URI} --projection title").splitlines())

    check_start_state(TASK_REGISTRY[name](seed=4), titles, launch(PKG))


def test_wrong_answers_score_zero():
    device = SimDevice()
    at_time = TASK_REGISTRY["SimpleCalendarFirstEventAfterStartTime"](seed=2)
    at_time.initialize(device)
    assert at_time.is_successful(device, at_time.params["title"]) == 1.0
    assert at_time.is_successful(device, at_time.params["title"] + ", Haircut") == 0.0
    meeting = TASK_REGISTRY["SimpleCalendarNextMeetingWithPerson"](seed=2)
    assert meeting.is_successful(device, meeting.params["when"][0]) == 1.0
    assert meeting.is_successful(device, meeting.params["date"]) == 0.0


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=4)
