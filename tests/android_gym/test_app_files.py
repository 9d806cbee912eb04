"""The simulated Files app (DocumentsUI) and its tasks: folders of /sdcard as the shell sees them, selection,
delete with confirmation, Move to / Copy to through the picker, the experts, a random agent, and AndroidWorld's
own file tasks on it."""

from __future__ import annotations

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.suites import android_world_available
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.sim import files as files_tasks
from android_gym.tasks.sim.files import files_under

from .sim_ui import tap_on, texts
from .task_checks import (
    check_android_world_expert_solves,
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

PKG = "com.google.android.documentsui"
NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ == files_tasks.__name__)


def _phone_with_music() -> SimPhone:
    phone = SimPhone()
    phone.shell("mkdir -p /sdcard/Music/Live; echo one > /sdcard/Music/b_song.mp3; echo two > /sdcard/Music/A_song.mp3")
    phone.launch(PKG)
    tap_on(phone, text="Show roots")
    tap_on(phone, text="sdk_gphone64_x86_64")  # the storage root as the emulator's Files names it
    tap_on(phone, text="Music")
    return phone


def test_opens_on_downloads_and_browses_storage_folders_with_breadcrumbs_and_back():
    phone = SimPhone()
    phone.shell("echo x > /sdcard/Download/report.pdf")
    phone.shell(f"monkey -p {PKG} -c android.intent.category.LAUNCHER 1")
    assert phone.current_activity() == f"{PKG}/com.android.documentsui.files.FilesActivity"
    shown = texts(phone)
    assert {"Downloads", "Files in Downloads", "report.pdf"} <= set(shown)  # the title, the header, the grid
    phone = _phone_with_music()
    shown = texts(phone)
    assert shown.index("Live") < shown.index("A_song.mp3") < shown.index("b_song.mp3")  # folders first, by name
    tap_on(phone, text="Live")
    assert "No items" in texts(phone)
    phone.back()
    assert "A_song.mp3" in texts(phone)
    tap_on(phone, text="Live")
    tap_on(phone, text="sdk_gphone64_x86_64", rid="breadcrumb_text")
    assert {"Music", "Download", "Pictures"} <= set(texts(phone))


def test_select_and_delete_asks_first_and_the_shell_sees_the_file_gone():
    phone = _phone_with_music()
    tap_on(phone, text="b_song.mp3", long=True)
    assert "1 selected" in texts(phone)
    tap_on(phone, text="A_song.mp3")  # a tap adds to the selection
    assert "2 selected" in texts(phone)
    tap_on(phone, text="A_song.mp3")
    tap_on(phone, text="Delete")
    assert 'Delete "b_song.mp3"?' in texts(phone)  # as the emulator's DocumentsUI asks
    tap_on(phone, text="CANCEL")
    assert "b_song.mp3" in phone.shell("ls /sdcard/Music")
    tap_on(phone, text="Delete")
    tap_on(phone, text="OK")
    assert phone.shell("ls /storage/emulated/0/Music").split() == ["A_song.mp3", "Live"]
    assert "b_song.mp3" not in texts(phone)


def test_move_and_copy_through_the_picker():
    phone = _phone_with_music()
    tap_on(phone, text="A_song.mp3", long=True)
    tap_on(phone, text="More options")
    tap_on(phone, text="Move to\u2026")
    assert phone.current_activity().endswith("PickActivity") and "Move to Music" in texts(phone)
    tap_on(phone, text="Live")
    tap_on(phone, text="MOVE")
    assert phone.shell("find /sdcard/Music -type f").split() == ["/sdcard/Music/Live/A_song.mp3",
                                                                 "/sdcard/Music/b_song.mp3"]
    tap_on(phone, text="b_song.mp3", long=True)
    tap_on(phone, text="More options")
    tap_on(phone, text="Copy to\u2026")
    phone.back()  # up to the top of storage
    tap_on(phone, text="Download")
    tap_on(phone, text="COPY")
    assert phone.shell("cat /sdcard/Download/b_song.mp3") == phone.shell("cat /sdcard/Music/b_song.mp3") == "one\n"


# --- tasks -----------------------------------------------------------------------------------------------


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES)
    assert NAMES == ["FilesDeleteFile", "FilesMoveFile"]


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_three_seeds(name):
    check_expert_solves(name, seeds=3)


@pytest.mark.parametrize("name", NAMES)
def test_initial_state_is_not_a_success_and_initialize_is_repeatable(name):
    task = TASK_REGISTRY[name](seed=2)
    folder = task.params.get("subfolder") or task.params["source_folder"]
    check_start_state(task, lambda device: sorted(files_under(device, folder)), launch(PKG))


def test_removing_the_whole_folder_does_not_pass():
    device = SimDevice()
    delete = TASK_REGISTRY["FilesDeleteFile"](seed=0)
    delete.initialize(device)
    device.shell(f"rm -r /sdcard/{delete.params['subfolder']}")
    assert delete.is_successful(device) == 0.0
    move = TASK_REGISTRY["FilesMoveFile"](seed=0)
    move.initialize(device)
    src, dst = move.params["source_folder"], move.params["destination_folder"]
    device.shell(f"mv /sdcard/{src}/{move.params['file_name']} /sdcard/{dst}/")
    assert move.is_successful(device) == 1.0


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=5)


# --- AndroidWorld's own tasks --------------------------------------------------------------------------------


@pytest.mark.skipif(not android_world_available(), reason="the android_world package is not installed")
@pytest.mark.parametrize("name", ["FilesDeleteFile", "FilesMoveFile"])
def test_androidworlds_file_tasks_are_solved_and_not_free(name):
    check_android_world_expert_solves(name)
