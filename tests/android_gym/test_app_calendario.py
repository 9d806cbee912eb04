"""The simulated Calendario (AndroidLab's calendar app): month page, event page, editor, its own event store,
and that it leaves AndroidWorld's Simple Calendar Pro alone."""

from __future__ import annotations

import datetime as dt

import pytest

from android_gym.sim import SimPhone
from android_gym.sim.apps.calendario import notification_label
from android_gym.tasks.device_state import parse_rows, to_ms

from .sim_ui import tap_on, texts, type_in, ui_of

PKG = "com.skuld.calendario"
URI = "content://com.skuld.calendario/events"
COLS = ["_id", "title", "note", "dtstart", "dtend", "allDay", "rrule", "reminders"]


def events(phone: SimPhone) -> list[dict]:
    return parse_rows(phone.shell(f"content query --uri {URI} --projection {':'.join(COLS)}"), COLS)


def add(phone: SimPhone, title: str, start: dt.datetime, minutes: int = 60, **extra: str) -> None:
    """Insert an event through the app's store (one-word titles)."""
    binds = [f"--bind title:s:{title}", f"--bind dtstart:l:{to_ms(start)}", f"--bind duration:i:{minutes}"]
    binds += [f"--bind {k}:s:{v}" for k, v in extra.items()]
    assert phone.shell(f"content insert --uri {URI} {' '.join(binds)}").strip() == ""


def test_month_page_lists_the_chosen_days_events_under_today():
    phone = SimPhone()
    add(phone, "work", dt.datetime(2023, 10, 15, 17, 0))
    add(phone, "Concert", dt.datetime(2023, 10, 21, 19, 0), 120)
    phone.launch(PKG)
    ui = ui_of(phone)
    cells = [e for e in ui.elements if e.resource_id == f"{PKG}:id/day_cell"]
    assert len(cells) == 31 and [c.content_desc for c in cells if c.selected] == ["October 15, 2023"]
    shown = texts(phone)
    assert "October 2023" in shown and "Today" in shown and "work" in shown and "5:00 PM - 6:00 PM" in shown
    assert "Concert" not in shown
    tap_on(phone, text="October 21, 2023")
    shown = texts(phone)
    assert "Saturday, October 21" in shown and "Concert" in shown and "7:00 PM - 9:00 PM" in shown
    assert "Today" not in shown and "work" not in shown
    tap_on(phone, text="Next month")
    assert "November 2023" in texts(phone)


def test_new_event_gets_the_default_notification_and_saves_through_the_pickers():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="New event")
    shown = texts(phone)
    assert "SAVE" in shown and "All-day" in shown and "30 minutes before" in shown and "Does not repeat" in shown
    assert shown.count("Today") == 2 and "4:00 PM" in shown and "5:00 PM" in shown  # next full hour, one hour
    type_in(phone, "title_input", "work")
    tap_on(phone, rid="start_time")
    type_in(phone, "input_hour", "05")
    tap_on(phone, text="OK")
    assert "5:00 PM" in texts(phone) and "6:00 PM" in texts(phone)  # the end moved with the start
    tap_on(phone, rid="start_date")
    tap_on(phone, text="Previous month")
    tap_on(phone, text="13 September 2023")
    tap_on(phone, text="OK")
    assert "Wed, Sep 13, 2023" in texts(phone)
    tap_on(phone, text="SAVE")
    assert phone.foreground_app.page == "main" and "No events" in texts(phone)  # back on today's page
    (row,) = events(phone)
    assert (row["title"], row["dtstart"], row["dtend"], row["allDay"], row["rrule"], row["reminders"]) == (
        "work", str(to_ms(dt.datetime(2023, 9, 13, 17))), str(to_ms(dt.datetime(2023, 9, 13, 18))), "0", "", "30")


def test_a_title_is_required():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="New event")
    tap_on(phone, text="SAVE")
    assert "Enter a title" in texts(phone) and events(phone) == []


def test_editing_from_the_event_page_and_back_to_it():
    phone = SimPhone()
    add(phone, "work", dt.datetime(2023, 10, 15, 17, 0))
    phone.launch(PKG)
    tap_on(phone, text="work")
    page = texts(phone)
    assert page[:4] == ["work", "Today", "5:00 PM - 6:00 PM", "Does not repeat"] and "30 minutes before" in page
    tap_on(phone, text="Edit")
    assert "Edit event" in texts(phone)
    tap_on(phone, rid="end_time")
    type_in(phone, "input_hour", "07")
    tap_on(phone, text="OK")
    tap_on(phone, rid="repeat_row")
    tap_on(phone, text="Daily")
    tap_on(phone, text="Remove notification")
    tap_on(phone, text="Add notification")
    tap_on(phone, text="5 minutes before")
    tap_on(phone, text="Add notification")
    tap_on(phone, text="10 minutes before")
    type_in(phone, "note_input", "computer")
    tap_on(phone, text="SAVE")
    page = texts(phone)
    assert page[:4] == ["work", "Today", "5:00 PM - 7:00 PM", "Daily"], page
    assert "5 minutes before" in page and "10 minutes before" in page and "computer" in page
    assert "30 minutes before" not in page
    (row,) = events(phone)
    assert (row["rrule"], row["reminders"], row["note"]) == ("FREQ=DAILY", "5,10", "computer")
    assert row["dtend"] == str(to_ms(dt.datetime(2023, 10, 15, 19)))


def test_all_day_and_delete():
    phone = SimPhone()
    add(phone, "exam", dt.datetime(2023, 10, 20, 9, 0), 120)
    add(phone, "trip", dt.datetime(2023, 10, 20, 12, 0))
    phone.launch(PKG)
    tap_on(phone, text="October 20, 2023")
    tap_on(phone, text="exam")
    assert "Fri, Oct 20, 2023" in texts(phone)
    tap_on(phone, text="Edit")
    tap_on(phone, rid="all_day_switch")
    assert not any(e.resource_id.endswith(":id/start_time") for e in ui_of(phone).elements)
    tap_on(phone, text="SAVE")
    assert "All-day" in texts(phone)
    exam = next(r for r in events(phone) if r["title"] == "exam")
    assert (exam["allDay"], exam["dtstart"], exam["dtend"]) == (
        "1", str(to_ms(dt.datetime(2023, 10, 20))), str(to_ms(dt.datetime(2023, 10, 21))))
    tap_on(phone, text="Navigate up")
    tap_on(phone, text="trip")
    tap_on(phone, text="Delete")
    tap_on(phone, text="Delete")  # the dialog's button
    assert [r["title"] for r in events(phone)] == ["exam"]


def test_store_is_its_own_and_rejects_what_the_app_cannot_hold():
    phone = SimPhone()
    before = phone.shell("content query --uri content://com.android.calendar/events")
    add(phone, "work", dt.datetime(2023, 10, 15, 17, 0), reminders="5,10", rrule="FREQ=WEEKLY")
    assert phone.shell("content query --uri content://com.android.calendar/events") == before  # Simple Calendar
    (row,) = events(phone)
    assert (row["reminders"], row["rrule"]) == ("5,10", "FREQ=WEEKLY")
    out = phone.shell(f"content insert --uri {URI} --bind title:s:x --bind dtstart:l:0 --bind rrule:s:FREQ=HOURLY")
    assert "FREQ=HOURLY" in out
    out = phone.shell(f"content insert --uri {URI} --bind title:s:x --bind dtstart:l:0 --bind location:s:here")
    assert "location" in out
    assert phone.shell(f"content delete --uri {URI} --where \"title='work'\"").strip() == ""
    assert events(phone) == []


@pytest.mark.parametrize("minutes,label", [(0, "At time of event"), (1, "1 minute before"),
                                           (30, "30 minutes before"), (60, "1 hour before"), (120, "2 hours before"),
                                           (1440, "1 day before")])
def test_notification_labels(minutes, label):
    assert notification_label(minutes) == label
