"""AndroidWorld's own task classes on the simulated phone: its set-up, its seeds, its ``is_successful``.

Needs the ``android_world`` package (``tools/setup_env.sh`` installs it from ../shared/vendor; skipped
with the reason otherwise). A fast subset runs in-process and through sim-adbd with the real adb binary;
the slow test runs every task of ``SIM_TASKS`` over three seeds.
"""

from __future__ import annotations

import logging
import shutil

import gymnasium as gym
import pytest

from android_gym import AndroidEnv
from android_gym.actions import Click
from android_gym.adbd import SimAdbd
from android_gym.agents import RandomAgent
from android_gym.sim import SimDevice, SimPhone
from android_gym.sim.web import web_engine_available
from android_gym.suites import AdbCommandError, android_world_available
from android_gym.tasks.runner import run_expert, run_policy

pytestmark = pytest.mark.skipif(
    not android_world_available(),
    reason="the android_world package is not installed (not on PyPI; tools/setup_env.sh installs it from "
           "../shared/vendor/android_world when that folder exists)")

ADB = "/usr/bin/adb"
FAST = ["SystemWifiTurnOff", "ClockTimerEntry", "ContactsAddContact", "MarkorCreateNote",
        "SimpleCalendarAddOneEvent", "ExpenseDeleteDuplicates", "SimpleSmsSend", "TasksDueOnDate",
        "SportsTrackerTotalDistanceForCategoryOverInterval", "RecipeAddSingleRecipe", "RecipeDeleteDuplicateRecipes2",
        "SimpleCalendarEventsInNextWeek", "CameraTakeVideo", "VlcCreatePlaylist", "SimpleDrawProCreateDrawing",
        "ContactsNewContactDraft"]


@pytest.fixture(autouse=True)
def _quiet_absl():
    logging.getLogger("absl").setLevel(logging.ERROR)


def sim_suite(names=None):
    from android_gym.suites.android_world_sim import AndroidWorldSimSuite

    return AndroidWorldSimSuite(names)


def test_android_world_v0_on_the_sim_runs_androidworlds_own_task_code():
    env = gym.make("AndroidWorld-v0", task="SimpleCalendarAddOneEvent")
    _, info = env.reset(seed=4)
    task = env.unwrapped.task
    assert type(task.aw_task).__module__ == "android_world.task_evals.single.calendar.calendar"
    assert info["goal"] == task.aw_task.goal and info["max_steps"] == int(10 * task.aw_task.complexity)
    phone = env.unwrapped.device.phone
    # AndroidWorld's set-up wrote its events into Simple Calendar's database; the app shows exactly those rows
    titles = sorted(e["title"] for e in phone.apps["com.simplemobiletools.calendar.pro"].events)
    assert titles == sorted(r.title for r in task.params["noise_row_objects"])
    done = False
    while not done:
        _, reward, terminated, truncated, info = env.step(env.unwrapped.expert_action())
        done = terminated or truncated
    assert terminated and reward == 1.0
    env.close()


def test_recreations_stay_available_and_unknown_tasks_say_why():
    env = AndroidEnv(suite="android_world", task="SystemWifiTurnOff", task_source="recreations")
    env.reset(seed=0)
    assert not hasattr(env.task, "aw_task")
    env.close()
    with pytest.raises(ValueError, match="BrowserDrawing: not an AndroidWorld task"):
        sim_suite(["BrowserDrawing"])


@pytest.mark.parametrize("name", FAST)
def test_expert_solves_androidworlds_instance_in_process(name):
    suite = sim_suite([name])
    for seed in (0, 1):
        device = SimDevice()
        suite.attach(device)
        task = suite.instance(name, seed, 0)
        result = run_expert(task, device)
        assert result.finished and result.success == 1.0, (name, seed, task.goal)
        # the same end state without the agent's actions scores nothing: AndroidWorld's check reads the state
        fresh = SimDevice()
        suite.attach(fresh)
        again = suite.instance(name, seed, 0)
        again.initialize(fresh)
        assert again.is_successful(fresh) == (1.0 if name.endswith("Verify") else 0.0)


def test_random_agent_rarely_solves_androidworlds_tasks():
    names = list(FAST)
    suite = sim_suite(names)
    wins = runs = 0
    for name in names:
        for episode in range(2):
            device = SimDevice()
            suite.attach(device)
            task = suite.instance(name, 100 + episode, 0)
            wins += run_policy(task, device, RandomAgent(seed=episode), max_steps=min(task.max_steps, 10)).success == 1
            runs += 1
    assert wins / runs <= 0.15, f"a random agent solved {wins}/{runs}"


def test_androidworlds_waits_are_skipped_on_the_in_process_sim_only():
    """AndroidWorld sleeps while a real device applies a change (SMS set-up: 10 s); the in-process sim applies it
    before the command returns, so its task code sees a clock whose sleep yields at once, and only during the call."""
    import time

    from android_world.task_evals.single import sms
    from android_world.task_evals.utils import sqlite_utils

    from android_gym.suites.android_world import _sim_clock

    seen = []
    suite = sim_suite(["SimpleSmsSend"])
    device = SimDevice()
    suite.attach(device)
    task = suite.instance("SimpleSmsSend", 0, 0)
    original = type(task.aw_task).initialize_task

    def spy(self, env):
        seen.append((sms.time, sqlite_utils.time))
        return original(self, env)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(type(task.aw_task), "initialize_task", spy)
        task.initialize(device)
    assert seen and all(clock is not time and clock.time is time.time for clock in seen[0])
    assert sms.time is time and sqlite_utils.time is time  # restored after the call
    with _sim_clock(object()):  # any other device (a real phone, an emulator) keeps AndroidWorld's waits
        assert sms.time is time
    with _sim_clock(device), _sim_clock(SimDevice()):  # nested (threads stepping several sims)
        assert sms.time is not time
    assert sms.time is time


def test_the_accessibility_forest_is_the_screen_androidworld_reads():
    """env.get_state().forest is android_env's forest of the same nodes as the dump; AndroidWorld's own
    forest_to_ui_elements finds the new-contact form's fields by their hints (what ContactsNewContactDraft reads)."""
    from android_world.env import representation_utils

    from android_gym.actions import OpenApp, Type
    from android_gym.tasks.expert import find, hint_is, text_is
    from android_gym.tasks.runner import observe_ui

    device = SimDevice()
    env = sim_suite(["ContactsNewContactDraft"]).attach(device)
    device.execute(OpenApp("Contacts"))
    device.execute(Click(*find(observe_ui(device), text_is("Create contact")).center))
    device.execute(Click(*find(observe_ui(device), hint_is("First name")).center))
    device.execute(Type("Alice"))
    state = env.get_state()
    kinds = {w.window_type for w in state.forest.windows}
    assert {1, 2, 3} <= kinds  # the app, the keyboard (input method) and System UI
    nodes = [n for w in state.forest.windows for n in w.tree.nodes]
    assert len(nodes) == len(state.ui_elements)
    ids = {n.unique_id for n in nodes}
    assert all(c in ids for n in nodes for c in n.child_ids)
    elements = representation_utils.forest_to_ui_elements(state.forest)
    first = [e for e in elements if e.hint_text == "First name"]
    assert [e.text for e in first] == ["Alice"] and first[0].is_editable and first[0].is_focused
    assert [e.text for e in elements if e.hint_text == "Last name"] == ["Last name"]  # empty: its hint
    assert env.controller.get_a11y_forest() == state.forest


# --- through sim-adbd, with AndroidWorld's adb utilities going through the real adb binary ---------------------

@pytest.mark.parametrize("name", ["SimpleCalendarDeleteOneEvent", "MarkorCreateNote", "SystemBluetoothTurnOn",
                                  "TasksHighPriorityTasks", "RecipeDeleteMultipleRecipes", "FilesMoveFile",
                                  "AudioRecorderRecordAudioWithFileName", "VlcCreatePlaylist", "SimpleDrawProCreateDrawing",
                                  pytest.param("NotesRecipeIngredientCount", marks=pytest.mark.slow),
                                  pytest.param("BrowserMultiply", marks=pytest.mark.skipif(
                                      not web_engine_available(), reason="chromium is not installed")),
                                  pytest.param("BrowserMaze", marks=[pytest.mark.slow, pytest.mark.skipif(
                                      not web_engine_available(), reason="chromium is not installed")])])
def test_androidworlds_tasks_run_on_the_sim_behind_adb(host_adb, name):
    from android_gym.drivers import AdbDevice

    phone = SimPhone()
    adbd = SimAdbd(SimDevice(phone), port=0, console_port=0, adb_server_port=host_adb.server_port,
                   auth_token_path=host_adb.token_path, announce=True).start()
    device = AdbDevice(adbd.serial, adb_port=host_adb.server_port, console_token_path=host_adb.token_path,
                       timeout=10.0)
    try:
        env = AndroidEnv(suite="android_world", device=device, task_source=sim_suite([name]), task=name)
        _, info = env.reset(seed=2)
        done = False
        while not done:
            _, reward, terminated, truncated, info = env.step(env.expert_action())
            done = terminated or truncated
        assert "error" not in info, info.get("error")
        assert terminated and reward == 1.0
        env.close()
    finally:
        device.close()
        adbd.stop()


def test_androidworlds_database_round_trip_reaches_the_app():
    """AndroidWorld's sqlite_utils pull the app's database, change it and push it back; the app shows the change."""
    from android_world.task_evals.single.calendar import calendar_utils
    from android_world.task_evals.utils import sqlite_schema_utils, sqlite_utils

    device = SimDevice()
    env = sim_suite(["SimpleCalendarAddOneEvent"]).attach(device)
    calendar = device.phone.apps["com.simplemobiletools.calendar.pro"]
    calendar_utils.clear_calendar_db(env)
    assert calendar.events == []
    event = sqlite_schema_utils.CalendarEvent(start_ts=1697371200, end_ts=1697374800, title="Dentist",
                                              location="Main St", description="checkup")
    calendar_utils.add_events([event], env)
    assert [(e["title"], e["dtstart"]) for e in calendar.events] == [("Dentist", 1697371200_000)]
    rows = sqlite_utils.get_rows_from_remote_device(calendar_utils.EVENTS_TABLE, calendar_utils.DB_PATH,
                                                    sqlite_schema_utils.CalendarEvent, env)
    assert [(r.title, r.location, r.start_ts) for r in rows] == [("Dentist", "Main St", 1697371200)]
    with pytest.raises(AdbCommandError, match="no such table"):
        env.controller.execute_command(["shell", "sqlite3", calendar_utils.DB_PATH, "'SELECT * FROM nope'"])


@pytest.mark.slow
def test_every_sim_task_is_solved_by_its_expert_and_unsolved_at_its_start():
    """Per task: AndroidWorld's instance of suite seed 0 scores 0 right after its set-up (1 for most *Verify tasks,
    whose goal state is the start), and the expert then solves it. One set-up per task: some take seconds
    (AndroidWorld encodes the Retro tasks' MP3s with ffmpeg and MarkorTranscribeVideo's videos frame by frame).
    tools/android_world_sim_table.py runs the experts on three seeds for the README table."""
    from android_gym.suites.android_world_sim import SIM_TASKS

    failures = []
    suite = sim_suite()
    for name in SIM_TASKS:
        if name.startswith("Retro") and shutil.which("ffmpeg") is None:
            continue  # AndroidWorld's set-up encodes MP3s through pydub, which needs ffmpeg (.ci/run installs it)
        device = SimDevice()
        suite.attach(device)
        task = suite.instance(name, 0, 0)
        if task.reads_pixels and shutil.which("tesseract") is None:
            continue  # its expert reads the picture's words with Tesseract (.ci/run installs it)
        if name.startswith("Browser") and not web_engine_available():
            continue  # the simulated Chrome runs AndroidWorld's page in chromium (.ci/run installs it)
        task.initialize(device)
        # the *Verify tasks start in their goal state, except the stopwatch's: its check reads the stopwatch screen
        expected = 1.0 if name.endswith("Verify") and name != "ClockStopWatchPausedVerify" else 0.0
        if task.is_successful(device) != expected:
            failures.append(f"{name} seed 0: scored {1 - expected} before any action")
        result = run_expert(task, device, initialize=False)
        if result.success != 1.0:
            failures.append(f"{name} seed 0: {task.goal!r} scored {result.success}")
    assert not failures, "\n".join(failures)


def test_two_envs_setting_up_at_once_keep_their_own_temporary_files(monkeypatch):
    """AndroidWorld's set-up writes fixed names under the temporary folder (``old_expenses_0.jpg``...), pushes
    them and removes them: two envs on one host (two test workers, two envs of one trainer) removed each other's
    files (``FileNotFoundError: /tmp/old_expenses_6.jpg does not exist``). Here two envs set up the same instance in
    two threads, both writing every picture before either pushes and removes it; each keeps its own folder."""
    import tempfile
    import threading

    from android_world.task_evals.utils import user_data_generation
    from android_world.utils import file_utils

    name = "ExpenseAddMultipleFromGallery"
    together = threading.Barrier(2, timeout=60)
    copy = file_utils.copy_data_to_device
    folders = {}

    def copy_when_both_wrote(local, remote, env, *args, **kwargs):
        folders.setdefault(threading.current_thread().name, set()).add(str(user_data_generation._TMP))
        together.wait()  # both envs have written this file; now each pushes (and then removes) its own
        return copy(local, remote, env, *args, **kwargs)

    monkeypatch.setattr(file_utils, "copy_data_to_device", copy_when_both_wrote)
    pictures, errors = {}, []

    def set_up(key):
        try:
            suite = sim_suite([name])
            device = SimDevice(SimPhone())
            suite.attach(device)
            task = suite.instance(name, 6, 0)
            task.initialize(device)
            pictures[key] = sorted(p for p in device.phone.files.listdir("/sdcard/DCIM") if p.endswith(".jpg"))
            task.teardown(device)
        except BaseException as exc:  # noqa: BLE001 - reported below
            together.abort()
            errors.append(f"{key}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=set_up, args=(key,), name=key) for key in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not errors, errors
    assert folders["a"].isdisjoint(folders["b"]) and tempfile.gettempdir() not in folders["a"] | folders["b"]
    assert pictures["a"] == pictures["b"] and "old_expenses_0.jpg" in pictures["a"], pictures
    assert file_utils.get_local_tmp_directory() == tempfile.gettempdir()  # outside a task's code: the usual folder
