"""The simulated OpenTracks and its questions: the track list and statistics, the database in step with the app,
AndroidWorld's own set-up and scoring, experts and random agents."""

from __future__ import annotations

import datetime as dt
import logging

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.apps.opentracks import OPENTRACKS_DB, OPENTRACKS_PKG
from android_gym.sim.databases import read_table
from android_gym.sim.device import SimDevice
from android_gym.suites import android_world_available
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.sim import opentracks as opentracks_tasks

from .sim_ui import descs, tap_on, texts
from .task_checks import (
    android_world_instance,
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ == opentracks_tasks.__name__)
needs_android_world = pytest.mark.skipif(not android_world_available(),
                                         reason="the android_world package is not installed")


def _phone_with_tracks() -> SimPhone:
    phone = SimPhone()
    app = phone.apps[OPENTRACKS_PKG]
    app.add_track("Morning Run", "running", dt.datetime(2023, 10, 12, 8, 0), 45, 5000, "Easy pace")
    app.add_track("Long Ride", "cycling", dt.datetime(2023, 10, 14, 9, 30), 135, 40234)
    return phone


# --- the app -------------------------------------------------------------------------------------------------


def test_list_shows_newest_first_with_category_start_time_and_distance_then_statistics():
    phone = _phone_with_tracks()
    phone.launch(OPENTRACKS_PKG)
    shown = texts(phone)
    assert shown[:11] == ["OpenTracks", "Long Ride", "cycling", "Oct 14, 2023, 9:30 AM", "2:15:00", "25.00 mi",
                          "Morning Run", "running", "Oct 12, 2023, 8:00 AM", "45:00", "3.11 mi"]
    assert "running" in descs(phone)  # the activity icon
    tap_on(phone, text="Morning Run")
    shown = texts(phone)
    for value in ("Easy pace", "45:00", "3.11 mi", "4.14 mph"):
        assert value in shown
    assert "TrackRecordedActivity" in phone.shell("dumpsys window | grep mCurrentFocus")
    phone.back()
    tap_on(phone, text="Record")
    assert "Long Ride" in texts(phone) and len(phone.apps[OPENTRACKS_PKG].tracks) == 2


def test_database_follows_the_app_and_writes_reach_the_app():
    phone = _phone_with_tracks()
    rows = read_table(phone.files.read(OPENTRACKS_DB), "tracks")
    assert [(r["name"], r["category"], r["totaldistance"], r["totaltime"]) for r in rows] == [
        ("Morning Run", "running", 5000.0, 2_700_000), ("Long Ride", "cycling", 40234.0, 8_100_000)]
    phone.shell(f"sqlite3 {OPENTRACKS_DB} \"UPDATE tracks SET category = 'hiking' WHERE name = 'Long Ride'\"")
    assert phone.apps[OPENTRACKS_PKG].tracks[1]["category"] == "hiking"
    phone.shell(f'sqlite3 {OPENTRACKS_DB} "DELETE FROM tracks"')
    phone.launch(OPENTRACKS_PKG)
    assert "Start recording your first track." in texts(phone)
    phone.shell(f"pm clear {OPENTRACKS_PKG}")
    assert phone.shell(f'sqlite3 {OPENTRACKS_DB} "SELECT COUNT(*) FROM trackpoints"') == "0\n"


@needs_android_world
def test_androidworlds_own_set_up_fills_the_app_and_its_check_scores_the_answer():
    logging.getLogger("absl").setLevel(logging.ERROR)
    from android_world.task_evals.information_retrieval import activity_app_utils, proto_utils

    device = SimDevice()
    task, env, _ = android_world_instance("SportsTrackerTotalDistanceForCategoryOverInterval", 0, device)
    app = device.phone.apps[OPENTRACKS_PKG]
    assert len(app.tracks) == 22
    rows = activity_app_utils.list_rows(env)  # AndroidWorld's own read of the pulled database
    assert sorted(r.name for r in rows) == sorted(t["name"] for t in app.tracks)
    [expected] = proto_utils.get_expected_answer(task.aw_task.task)
    assert task.is_successful(device, str(round(expected) + 9)) == 1.0  # within its 10 m tolerance
    assert task.is_successful(device, str(round(expected) + 11)) == 0.0
    task.teardown(device)
    assert app.tracks == []


# --- tasks -----------------------------------------------------------------------------------------------


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES)
    assert len(NAMES) == 6


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_five_seeds(name):
    check_expert_solves(name)


def test_initial_state_is_not_a_success_and_initialize_is_repeatable():
    check_start_state(TASK_REGISTRY["SportsTrackerActivityDuration"](seed=4),
                      lambda device: sorted((t["name"], t["starttime"])
                                            for t in device.phone.apps[OPENTRACKS_PKG].tracks),
                      launch(OPENTRACKS_PKG))


def test_numeric_answers_need_the_right_number():
    device = SimDevice()
    duration = TASK_REGISTRY["SportsTrackerActivityDuration"](seed=3)
    duration.initialize(device)
    minutes = duration.params["expected"]
    assert duration.is_successful(device, str(minutes)) == 1.0
    assert duration.is_successful(device, str(minutes + 1)) == 0.0
    assert duration.is_successful(device, "about an hour") == 0.0
    longest = TASK_REGISTRY["SportsTrackerLongestDistanceActivity"](seed=3)
    assert longest.is_successful(device, str(longest.params["expected"] - 9)) == 1.0
    assert longest.is_successful(device, str(longest.params["expected"] - 20)) == 0.0


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=4)
