"""The simulated Simple Gallery Pro and its AndroidWorld task: folders and pictures read from shared storage and
shown in screenshots, Copy to / Move to through the folder picker, AndroidWorld's own set-up and check of
SaveCopyOfReceiptTaskEval, the expert and random agents."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image

from android_gym.agents import RandomAgent
from android_gym.replay import sim_ui_elements
from android_gym.sim import SimPhone
from android_gym.sim.apps.gallery import GALLERY_PKG
from android_gym.sim.device import SimDevice
from android_gym.suites import android_world_available
from android_gym.tasks.base import TASK_REGISTRY, get_task_class
from android_gym.tasks.sim.simple_draw import file_under

from .sim_ui import scroll_to_text, tap_on, texts
from .task_checks import (
    android_world_instance,
    check_android_world_expert_solves,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

NAME = "SaveCopyOfReceiptTaskEval"
needs_android_world = pytest.mark.skipif(
    not android_world_available(),
    reason="the android_world package is not installed (tools/setup_env.sh installs it from ../shared/vendor)")


def red_jpeg() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (400, 300), (230, 20, 20)).save(buf, format="JPEG")
    return buf.getvalue()


def test_folders_hold_media_newest_first_and_the_viewer_shows_the_picture():
    phone = SimPhone()
    phone.files.write("/sdcard/DCIM/old.jpg", red_jpeg(), 10)
    phone.files.write("/sdcard/DCIM/new.png", red_jpeg(), 20)
    phone.files.write("/sdcard/DCIM/notes.txt", b"not a picture", 30)
    phone.files.write("/sdcard/Movies/clip.mp4", b"\x00", 5)
    phone.files.write("/sdcard/Android/data/x/cache.jpg", red_jpeg(), 40)  # app data: not listed
    phone.launch(GALLERY_PKG)
    shown = texts(phone)
    assert shown.index("DCIM") < shown.index("Movies") and "x" not in shown and "cache" not in shown
    assert shown[shown.index("DCIM") + 1] == "2"
    tap_on(phone, text="DCIM")
    assert "new.png" not in texts(phone)  # thumbnails only, as on the emulator
    tap_on(phone, text="Toggle filename visibility")
    shown = texts(phone)
    assert shown.index("new.png") < shown.index("old.jpg") and "notes.txt" not in shown
    tap_on(phone, text="old.jpg")
    assert phone.current_activity().endswith(".activities.ViewPagerActivity")
    assert 'resource-id="com.simplemobiletools.gallery.pro:id/gestures_view"' in phone.dump()
    r, g, b = phone.screenshot()[phone.height // 2, phone.width // 2].tolist()
    assert r > 180 and g < 80 and b < 80  # the file's own pixels, not a placeholder
    tap_on(phone, text="Properties")
    shown = texts(phone)
    assert shown[shown.index("Path") + 1] == "/storage/emulated/0/DCIM"
    assert shown[shown.index("Resolution") + 1] == "400 x 300 (0.1MP)"
    assert shown[shown.index("Last modified") + 1] == "01.01.1970, 12:00 AM"  # the phone's 12-hour clock


def test_the_screens_list_what_the_emulator_lists():
    """The search bar, its actions and the grids in the order AndroidWorld's emulator lists them (the real
    SaveCopyOfReceiptTaskEval run): no thumbnails, no names under pictures, a header per day in "Show all folders
    content", the bar collapsing on a scroll."""
    phone = SimPhone()
    phone.files.write("/sdcard/DCIM/a.jpg", red_jpeg(), 1_752_961_860)  # 2025-07-19 21:51 UTC
    phone.launch(GALLERY_PKG)

    def listed() -> list[str]:
        return [e.content_description or e.text or (e.resource_id or "").rsplit("/", 1)[-1]
                for e in sim_ui_elements(phone.dump()) if e.package_name == GALLERY_PKG]

    assert listed() == ["directories_coordinator", "Search", "Search folders", "Open camera",
                        "Show all folders content", "More options", "DCIM", "1"]
    tap_on(phone, text="DCIM")
    assert listed() == ["media_coordinator", "Back", "Search in DCIM", "Toggle filename visibility", "Sort by",
                        "More options", "media_item_holder"]
    tap_on(phone, text="More options")
    assert listed()[:3] == ["Filter media", "Change view type", "Temporarily show hidden"]
    phone.back()
    tap_on(phone, text="Back")
    tap_on(phone, text="Show all folders content")
    assert listed() == ["media_coordinator", "Search", "Search files", "Toggle filename visibility",
                        "Switch to folder view", "More options", "19.07.2025", "media_item_holder"]
    phone.swipe(540, 1800, 540, 600)
    assert listed() == ["media_coordinator", "19.07.2025", "media_item_holder"]
    phone.swipe(540, 600, 540, 1800)
    tap_on(phone, text="Switch to folder view")
    assert "Search folders" in listed()
    tap_on(phone, text="DCIM")
    tap_on(phone, rid="media_item_holder")
    assert listed() == ["", "a.jpg", "Rotate", "Properties", "More options", "Toggle favorite", "Edit", "Share",
                        "Delete", "gestures_view", "subsampling_view"]


def test_copy_to_and_move_to_go_through_the_folder_picker():
    phone = SimPhone()
    phone.files.write("/sdcard/DCIM/a.jpg", red_jpeg(), 10)
    phone.files.mkdir("/sdcard/Download")
    phone.files.mkdir("/sdcard/Pictures")
    phone.launch(GALLERY_PKG)
    tap_on(phone, text="DCIM")
    tap_on(phone, text="Toggle filename visibility")
    tap_on(phone, text="a.jpg")
    tap_on(phone, text="More options")
    tap_on(phone, text="Copy to")
    assert "Select a folder" in texts(phone) and "> DCIM" in texts(phone)  # it starts at the file's folder
    tap_on(phone, rid="button1")
    assert "Source and destination cannot be the same" in texts(phone)
    tap_on(phone, text="More options")
    tap_on(phone, text="Copy to")
    tap_on(phone, text="Internal")
    tap_on(phone, text="Download")
    tap_on(phone, rid="button1")
    assert "Files copied successfully" in texts(phone)
    assert phone.files.read("/sdcard/Download/a.jpg") == phone.files.read("/sdcard/DCIM/a.jpg")
    tap_on(phone, text="More options")
    tap_on(phone, text="Move to")
    phone.back()  # Back in the picker goes up a folder
    scroll_to_text(phone, "Pictures")  # below Android 13's other public folders
    tap_on(phone, text="Pictures")
    tap_on(phone, rid="button1")
    assert "Files moved successfully" in texts(phone)
    assert not phone.files.exists("/sdcard/DCIM/a.jpg") and phone.files.exists("/sdcard/Pictures/a.jpg")
    assert phone.current_activity().endswith(".activities.MediaActivity")


# --- AndroidWorld's own code on the app ------------------------------------------------------------------------


@needs_android_world
def test_androidworlds_setup_pushes_its_receipt_and_its_check_wants_the_copy_in_download():
    device = SimDevice()
    task = android_world_instance(NAME, 1, device).task
    name = task.params["file_name"]
    assert device.phone.files.walk_files("/sdcard/DCIM") == [f"/sdcard/DCIM/{name}"]
    receipt = Image.open(io.BytesIO(device.phone.files.read(f"/sdcard/DCIM/{name}")))
    assert receipt.format == "JPEG" and receipt.size[0] == 500  # AndroidWorld's own receipt picture
    assert task.is_successful(device) == 0.0
    device.phone.files.write(f"/sdcard/Pictures/{name}", b"x")
    assert task.is_successful(device) == 0.0
    device.phone.files.write(f"/sdcard/Download/{name}", b"x")
    assert task.is_successful(device) == 1.0


@needs_android_world
def test_expert_solves_androidworlds_instances_on_three_seeds():
    check_android_world_expert_solves(NAME)


# --- the re-creation -------------------------------------------------------------------------------------------


@needs_android_world
def test_task_template_is_androidworlds_and_difficulty_and_budget_its_metadata(realdata):
    from android_world.task_evals.single.simple_gallery_pro import SaveCopyOfReceiptTaskEval

    meta = {t["task_name"]: t for t in json.loads(
        (realdata / "tasks" / "android_world" / "task_metadata.json").read_text())}[NAME]
    cls = get_task_class(NAME)
    assert cls.template == SaveCopyOfReceiptTaskEval.template  # the goal the class gives (the metadata's is older)
    assert cls.difficulty == meta["difficulty"] and cls.complexity == SaveCopyOfReceiptTaskEval.complexity
    assert int(10 * cls.complexity) >= 2 * int(meta["optimal_steps"])


def test_expert_solves_task_on_five_seeds():
    check_expert_solves(NAME)


def test_initial_state_is_not_a_success_and_initialize_is_repeatable():
    def state(device: SimDevice) -> tuple[str, str]:
        return (device.shell("find /storage/emulated/0/DCIM -type f"),
                device.shell("find /storage/emulated/0/Download -type f"))

    def disturb(device: SimDevice) -> None:
        launch(GALLERY_PKG)(device)
        device.phone.files.write("/sdcard/Download/old.jpg", b"x")

    task = TASK_REGISTRY[NAME](seed=4)
    check_start_state(task, state, disturb)
    assert not file_under(SimDevice(), "/storage/emulated/0/Download", task.params["file_name"])


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds([NAME], lambda seed: RandomAgent(seed=seed), episodes=6)
