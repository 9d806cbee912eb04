"""The simulated Camera and Phone (dialer) apps and the Camera tasks: captures on /sdcard, the permission pop-up,
the dial pad and call log, the experts, a random agent, and AndroidWorld's own camera and open-app tasks on them."""

from __future__ import annotations

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.suites import android_world_available
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.sim import camera as camera_tasks
from android_gym.tasks.sim.camera import list_folder

from .sim_ui import descs, tap_on, texts
from .task_checks import (
    check_android_world_expert_solves,
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

CAMERA = "com.android.camera2"
DIALER = "com.google.android.dialer"
NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ == camera_tasks.__name__)


# --- Camera ------------------------------------------------------------------------------------------------


def test_shutter_writes_a_jpeg_to_pictures_and_video_mode_records_to_movies():
    phone = SimPhone()
    assert phone.shell("am start -n com.android.camera2/com.android.camera.CameraLauncher").startswith("Starting")
    assert phone.current_activity() == "com.android.camera2/com.android.camera.CameraActivity"
    tap_on(phone, text="Shutter")
    photos = phone.shell("ls /sdcard/Pictures").split()
    assert len(photos) == 1 and photos[0].startswith("IMG_20231015_") and photos[0].endswith(".jpg")
    assert phone.files.read(f"/sdcard/Pictures/{photos[0]}")[:2] == b"\xff\xd8"  # a real JPEG
    tap_on(phone, text="Video")
    tap_on(phone, text="Start recording")
    assert phone.shell("ls /sdcard/Movies") == ""  # nothing is written until the recording stops
    assert "Stop recording" in descs(phone)
    tap_on(phone, text="Stop recording")
    videos = phone.shell("ls /sdcard/Movies").split()
    assert len(videos) == 1 and videos[0].startswith("VID_") and videos[0].endswith(".mp4")
    assert f"Filmstrip: {videos[0]}" in descs(phone)


def test_pm_clear_brings_the_permission_popup_and_denied_camera_takes_nothing():
    phone = SimPhone()
    phone.shell(f"pm clear {CAMERA}")
    phone.launch(CAMERA)
    assert "While using the app" in texts(phone)
    tap_on(phone, text="Don't allow")
    tap_on(phone, text="Shutter")
    assert phone.shell("ls /sdcard/Pictures") == ""
    tap_on(phone, text="Grant permission")
    tap_on(phone, text="While using the app")
    tap_on(phone, text="Shutter")
    assert len(phone.shell("ls /sdcard/Pictures").split()) == 1
    phone.shell(f"pm revoke {CAMERA} android.permission.CAMERA")
    phone.shell(f"am force-stop {CAMERA}")
    phone.launch(CAMERA)
    assert "Only this time" in texts(phone)


# --- Phone (dialer) ----------------------------------------------------------------------------------------


def test_dial_pad_places_a_call_that_recents_lists_with_the_contacts_name():
    phone = SimPhone()
    phone.launch(DIALER)
    assert phone.current_activity() == f"{DIALER}/com.google.android.dialer.extensions.GoogleDialtactsActivity"
    tap_on(phone, text="Contacts")
    contacts = phone.apps["com.google.android.contacts"]
    first = contacts.sorted_contacts()[0]
    name, number = contacts.shown_name(first), first["phones"][0]["number"]
    assert name in texts(phone)
    tap_on(phone, text="key pad")
    for digit in "5550100":
        tap_on(phone, text=digit)
    tap_on(phone, rid="deleteButton")
    assert "555010" in texts(phone)
    tap_on(phone, text="dial")
    assert phone.current_activity().endswith("InCallActivity") and "555010" in texts(phone)
    tap_on(phone, text="End call")
    phone.back()
    tap_on(phone, text="Recents")
    assert "Outgoing \u00b7 555010" in texts(phone)
    phone.shell(f"am start -a android.intent.action.DIAL -d tel:{number}")
    assert name in texts(phone)  # the dial pad names the contact behind the number


def test_phone_opens_on_contacts_and_creates_a_contact_there_as_the_emulator_does():
    """As AndroidWorld's emulator shows it: Phone opens on the Contacts tab; with no contacts it offers "Create
    new contact", which opens Google Contacts' editor; saving comes back to the tab, now listing the contact."""
    phone = SimPhone()
    phone.app("com.google.android.contacts").clear_data()
    phone.launch(DIALER)
    assert "Your contacts are just a tap away here" in texts(phone)
    assert {"Favorites", "Recents", "Contacts", "Voicemail", "Start voice search"} <= set(descs(phone))
    tap_on(phone, text="Create new contact")
    assert phone.foreground == "com.google.android.contacts" and "First name" in texts(phone)
    contacts = phone.apps["com.google.android.contacts"]
    contacts.form.update(first="Ada", last="Byron")
    contacts.form["phones"][0]["number"] = "+15550100"
    tap_on(phone, text="Save")
    assert phone.foreground == DIALER
    assert "Ada Byron" in texts(phone) and "Quick contact for Ada Byron" in descs(phone)
    assert "Your contacts are just a tap away here" not in texts(phone)


# --- tasks -----------------------------------------------------------------------------------------------


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES)
    assert NAMES == ["CameraTakePhoto", "CameraTakeVideo"]


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_three_seeds(name):
    check_expert_solves(name, seeds=3)


@pytest.mark.parametrize("name", NAMES)
def test_initial_state_is_not_a_success_and_initialize_is_repeatable(name):
    task = TASK_REGISTRY[name](seed=1)
    check_start_state(task, lambda device: (sorted(list_folder(device, task.folder)), device.phone.apps[CAMERA].granted),
                      launch(CAMERA))


def test_two_captures_or_the_wrong_kind_fail():
    device = SimDevice()
    photo = TASK_REGISTRY["CameraTakePhoto"](seed=0)
    photo.initialize(device)
    device.shell("echo x > /sdcard/Movies/VID_1.mp4")
    assert photo.is_successful(device) == 0.0
    device.shell("echo x > /sdcard/Pictures/IMG_1.jpg; echo y > /sdcard/Pictures/IMG_2.jpg")
    assert photo.is_successful(device) == 0.0


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=6)


# --- AndroidWorld's own tasks --------------------------------------------------------------------------------


@pytest.mark.skipif(not android_world_available(), reason="the android_world package is not installed")
@pytest.mark.parametrize("name", ["CameraTakePhoto", "CameraTakeVideo", "OpenAppTaskEval", "TurnOnWifiAndOpenApp"])
def test_androidworlds_camera_and_open_app_tasks_are_solved_and_not_free(name):
    check_android_world_expert_solves(name, start_must_score_zero=False)


def test_open_app_goals_now_draw_every_androidworld_app():
    from android_gym.tasks.sim.system import AW_OPEN_APP_NAMES, installed_app_names

    assert installed_app_names() == list(AW_OPEN_APP_NAMES)
