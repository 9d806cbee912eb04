"""The simulated Audio Recorder and its tasks: welcome screen, permission, recordings as files in the app's folder
on /sdcard, rename and delete, the experts, a random agent, and AndroidWorld's own recorder tasks on it."""

from __future__ import annotations

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.suites import android_world_available
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.sim import audio_recorder as recorder_tasks
from android_gym.tasks.sim.audio_recorder import RECORDS_DIR, recordings

from .sim_ui import descs, tap_on, texts
from .task_checks import (
    check_android_world_expert_solves,
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

PKG = "com.dimowner.audiorecorder"
NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ == recorder_tasks.__name__)


def test_welcome_then_record_stop_writes_an_m4a_the_shell_lists():
    phone = SimPhone()
    phone.shell(f"am start -n {PKG}/{PKG}.app.welcome.WelcomeActivity")
    assert phone.current_activity().endswith("WelcomeActivity") and "Get started" in texts(phone)
    tap_on(phone, text="Get started")
    assert phone.current_activity().endswith("app.main.MainActivity")
    tap_on(phone, text="Record")
    assert phone.shell(f"ls {RECORDS_DIR}") == ""  # nothing until Stop
    tap_on(phone, text="Stop recording")
    (name, size, _), = _rows(phone)
    assert name == "Record-1.m4a" and size > 0
    assert phone.files.read(f"{RECORDS_DIR}/{name}")[4:8] == b"ftyp"
    phone.shell(f"am force-stop {PKG}")
    phone.launch(PKG)
    assert "Get started" not in texts(phone)  # the welcome screen shows once


def _rows(phone: SimPhone) -> list[tuple[str, int, str]]:
    out = phone.shell(f"ls {RECORDS_DIR} -ll -au")
    return [(p[8], int(p[4]), p[5]) for p in (line.split(None, 8) for line in out.splitlines()) if len(p) == 9]


def test_rename_keeps_the_extension_and_the_list_renames_and_deletes():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="Get started")
    for _ in range(2):
        tap_on(phone, text="Record")
        tap_on(phone, text="Stop recording")
    tap_on(phone, rid="txt_name")
    assert "Record-2" in texts(phone)
    tap_on(phone, rid="input_name", long=True)  # selects the name
    phone.type_text("Record-1")
    tap_on(phone, text="Save")
    assert "File with this name already exists" in texts(phone)
    tap_on(phone, rid="input_name", long=True)
    phone.type_text("standup notes")
    tap_on(phone, text="Save")
    assert phone.shell(f"ls {RECORDS_DIR}").split("\n")[:2] == ["Record-1.m4a", "standup notes.m4a"]
    tap_on(phone, text="Records")
    assert texts(phone)[1] == "standup notes.m4a"  # newest first
    tap_on(phone, text="More")  # the last row's: the older Record-1
    assert "Record-1.m4a" in texts(phone)
    tap_on(phone, text="Delete")
    tap_on(phone, text="Delete")
    assert phone.shell(f"ls {RECORDS_DIR}") == "standup notes.m4a\n"


def test_without_the_microphone_permission_record_asks_first():
    phone = SimPhone()
    phone.shell(f"pm clear {PKG}")
    phone.launch(PKG)
    tap_on(phone, text="Get started")
    tap_on(phone, text="Record")
    assert "Allow Audio Recorder to record audio?" in texts(phone)
    tap_on(phone, text="Don't allow")
    assert "Record" in descs(phone)
    phone.shell(f"pm grant {PKG} android.permission.RECORD_AUDIO")
    tap_on(phone, text="Record")
    assert "Stop recording" in descs(phone)


# --- tasks -----------------------------------------------------------------------------------------------


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES)
    assert NAMES == ["AudioRecorderRecordAudio", "AudioRecorderRecordAudioWithFileName"]


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_three_seeds(name):
    check_expert_solves(name, seeds=3)


@pytest.mark.parametrize("name", NAMES)
def test_initial_state_is_not_a_success_and_initialize_is_repeatable(name):
    check_start_state(TASK_REGISTRY[name](seed=3), lambda device: sorted(recordings(device)), launch(PKG))


def test_an_empty_file_or_the_name_without_the_apps_extension_fails():
    device = SimDevice()
    plain = TASK_REGISTRY["AudioRecorderRecordAudio"](seed=0)
    plain.initialize(device)
    device.shell(f"touch {RECORDS_DIR}/empty.m4a")
    assert plain.is_successful(device) == 0.0
    named = TASK_REGISTRY["AudioRecorderRecordAudioWithFileName"](seed=0)
    named.initialize(device)
    device.shell(f"echo x > {RECORDS_DIR}/{named.params['file_name']}")
    assert named.is_successful(device) == 0.0


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=5)


# --- AndroidWorld's own tasks --------------------------------------------------------------------------------


@pytest.mark.skipif(not android_world_available(), reason="the android_world package is not installed")
@pytest.mark.parametrize("name", ["AudioRecorderRecordAudio", "AudioRecorderRecordAudioWithFileName"])
def test_androidworlds_recorder_tasks_are_solved_and_not_free(name):
    check_android_world_expert_solves(name)
