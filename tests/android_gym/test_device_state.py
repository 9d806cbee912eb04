"""Device-state helpers of the task checks: ``content query`` parsing by hand-written outputs, then the helpers on a simulated phone."""

from __future__ import annotations

import datetime as dt

import pytest

from android_gym.sim.device import SimDevice
from android_gym.tasks.base import TaskError
from android_gym.tasks.device_state import (
    answers_match,
    content_delete,
    content_insert,
    content_query,
    device_time_ms,
    foreground_activity,
    foreground_package,
    from_ms,
    getprop,
    go_home,
    normalize_answer,
    parse_rows,
    quote,
    read_setting,
    screen_nodes,
    set_clipboard,
    to_ms,
    write_setting,
)

EVENTS = "content://com.android.calendar/events"
LAUNCHER = "com.google.android.apps.nexuslauncher"

# --- parse_rows on outputs written the way Android's `content query` prints them ----------------------


def test_rows_split_on_the_projection_columns_even_when_values_hold_commas_and_equals():
    out = ("Row: 0 _id=7, title=Lunch, with Priya, note=a=b, c=d, body=Hi, body=you\n"
           "Row: 1 _id=8, title=x, note=, body=\n")
    rows = parse_rows(out, ["_id", "title", "note", "body"])
    assert rows == [
        {"_id": "7", "title": "Lunch, with Priya", "note": "a=b, c=d", "body": "Hi, body=you"},
        {"_id": "8", "title": "x", "note": "", "body": ""},
    ]


def test_null_is_none_and_the_text_null_inside_a_value_is_kept():
    rows = parse_rows("Row: 0 label=NULL, body=NULL and void\n", ["label", "body"])
    assert rows == [{"label": None, "body": "NULL and void"}]


def test_values_may_span_lines_and_rows_are_numbered_in_order():
    out = "Row: 0 _id=1, body=first line\nsecond line\nRow: 1 _id=2, body=Row: 5 is text\n"
    assert parse_rows(out, ["_id", "body"]) == [
        {"_id": "1", "body": "first line\nsecond line"},
        {"_id": "2", "body": "Row: 5 is text"},
    ]
    out = "Row: 0 note=two\nlines, _id=4\n"  # a newline inside a middle column
    assert parse_rows(out, ["note", "_id"]) == [{"note": "two\nlines", "_id": "4"}]


def test_no_result_found_is_an_empty_list():
    assert parse_rows("No result found.\n", ["_id"]) == []


def test_lines_before_the_first_row_are_skipped():
    out = "WARNING: linker: unused DT entry\nRow: 0 _id=3\n"
    assert parse_rows(out, ["_id"]) == [{"_id": "3"}]


@pytest.mark.parametrize("out", [
    "Error while accessing provider:nope\njava.lang.IllegalArgumentException: Unknown authority nope\n",
    "content: unknown calendar uri 'content://com.android.calendar/x'\n",
    "",
])
def test_errors_and_unexpected_text_raise_task_error(out):
    with pytest.raises(TaskError, match="content query failed"):
        parse_rows(out, ["_id"])


def test_a_row_without_the_expected_columns_names_the_missing_one():
    with pytest.raises(TaskError, match="'title'"):
        parse_rows("Row: 0 _id=1, name=x\n", ["_id", "title"])
    with pytest.raises(TaskError, match="expected column '_id'"):
        parse_rows("Row: 0 title=x\n", ["_id"])
    with pytest.raises(ValueError, match="columns"):
        parse_rows("No result found.\n", [])


# --- the helpers on a simulated phone ---------------------------------------------------------------------


@pytest.fixture
def device() -> SimDevice:
    return SimDevice()


def test_insert_query_delete_round_trip_with_awkward_text(device):
    content_delete(device, EVENTS)
    title = "Dinner, at 8 = late? it's \"fine\""
    start = dt.datetime(2023, 10, 20, 19, 30)
    content_insert(device, EVENTS, [("title", "s", title), ("dtstart", "l", to_ms(start)),
                                    ("dtend", "l", to_ms(start) + 3_600_000), ("description", "s", "a\nb")])
    content_insert(device, EVENTS, [("title", "s", "Other"), ("dtstart", "l", 0)])
    rows = content_query(device, EVENTS, ["title", "dtstart", "rrule", "description"], where="dtstart > 0")
    assert rows == [{"title": title, "dtstart": str(to_ms(start)), "rrule": None, "description": "a\nb"}]
    assert from_ms(rows[0]["dtstart"]) == start
    sorted_titles = [r["title"] for r in content_query(device, EVENTS, ["title"], sort="title ASC")]
    assert sorted_titles == sorted(sorted_titles)
    content_delete(device, EVENTS, where="title = 'Other'")
    assert [r["title"] for r in content_query(device, EVENTS, ["title"])] == [title]
    content_delete(device, EVENTS)
    assert content_query(device, EVENTS, ["_id"]) == []


def test_provider_errors_become_task_errors(device):
    with pytest.raises(TaskError, match="content insert on content://com.android.calendar/events failed"):
        content_insert(device, EVENTS, [("no_such_column", "s", "x"), ("dtstart", "l", 0)])
    with pytest.raises(TaskError, match="Unknown authority"):
        content_query(device, "content://no.such.provider/x", ["_id"])
    with pytest.raises(ValueError, match="plain column names"):
        content_query(device, EVENTS, ["title; rm -rf /"])
    with pytest.raises(ValueError, match="at least one bind"):
        content_insert(device, EVENTS, [])


def test_settings_read_back_what_was_written(device):
    write_setting(device, "global", "wifi_on", 0)
    assert read_setting(device, "global", "wifi_on") == "0"
    assert read_setting(device, "system", "no_such_key") == "null"
    with pytest.raises(ValueError, match="namespace"):
        read_setting(device, "vendor", "x")
    assert getprop(device, "ro.build.version.release") == "13"


def test_foreground_and_go_home(device):
    device.shell("monkey -p com.android.settings 1")
    package, activity = foreground_activity(device)
    assert package == "com.android.settings" and activity.startswith("com.android.settings.")
    go_home(device, "com.android.settings")
    assert foreground_package(device) == LAUNCHER
    device.shell("monkey -p com.android.settings 1")
    assert any(n.text == "Network & internet" for n in screen_nodes(device))  # cold start: main list again


def test_device_time_and_clipboard(device):
    now = device_time_ms(device)
    assert now % 1000 == 0 and 0 <= now - to_ms(dt.datetime(2023, 10, 15, 15, 34)) < 60_000  # the frozen date
    set_clipboard(device, "it's a \"test\"")
    assert 'data="it\'s a "test""' in device.shell("am broadcast -a clipper.get")


def test_quote_leaves_safe_words_alone():
    assert quote("content://a/b") == "content://a/b"
    assert quote("it's") == "'it'\"'\"'s'"


def test_answers_are_compared_after_normalising():
    assert normalize_answer("  Dan's  Birthday-Party! ") == "dan s birthday party"
    assert answers_match("Team lunch, concert", ["Concert", "Team Lunch"])
    assert not answers_match("Team lunch", ["Team lunch", "Concert"])
    assert not answers_match(None, ["x"])
