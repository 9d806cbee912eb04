"""The simulated Simple Draw Pro and its drawing task: strokes on the canvas, undo, the Save as dialog and folder
picker writing real image files, AndroidWorld's own set-up and check on it, the expert and random agents."""

from __future__ import annotations

import io

import pytest
from PIL import Image

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.apps.simple_draw import DRAW_PKG
from android_gym.sim.device import SimDevice
from android_gym.suites import android_world_available
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.sim.simple_draw import file_under

from .sim_ui import scroll_to_text, tap_on, texts, ui_of
from .task_checks import (
    android_world_instance,
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

NAME = "SimpleDrawProCreateDrawing"
needs_android_world = pytest.mark.skipif(
    not android_world_available(),
    reason="the android_world package is not installed (tools/setup_env.sh installs it from ../shared/vendor)")


def canvas_bounds(phone: SimPhone) -> tuple[int, int, int, int]:
    return next(e.bounds for e in ui_of(phone).elements if e.resource_id.endswith(":id/my_canvas"))


def draw_diagonal(phone: SimPhone) -> None:
    x1, y1, x2, y2 = canvas_bounds(phone)
    phone.swipe(x1 + 100, y1 + 100, x2 - 100, y2 - 100)


def test_swipes_on_the_canvas_draw_strokes_that_undo_and_redo_and_show_on_screen():
    phone = SimPhone()
    phone.launch(DRAW_PKG)
    assert phone.current_activity() == f"{DRAW_PKG}/.activities.MainActivity"
    x1, y1, x2, y2 = canvas_bounds(phone)
    cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
    assert phone.screenshot()[cy, cx].tolist() == [255, 255, 255]
    draw_diagonal(phone)
    app = phone.apps[DRAW_PKG]
    assert len(app.strokes) == 1 and app.strokes[0]["color"] == "#000000"
    shot = phone.screenshot()
    assert max(shot[cy - 3:cy + 4, cx - 3:cx + 4].reshape(-1, 3).sum(axis=1)) < 100  # the stroke crosses the middle
    tap_on(phone, text="Undo")
    assert app.strokes == [] and phone.screenshot()[cy, cx].tolist() == [255, 255, 255]
    tap_on(phone, text="Redo")
    assert len(app.strokes) == 1
    tap_on(phone, text="Change color")
    tap_on(phone, text="Red")
    draw_diagonal(phone)
    assert app.strokes[-1]["color"] == "#e53935"


def test_save_as_writes_a_real_png_in_simple_draw_then_remembers_the_folder_and_asks_before_overwriting():
    phone = SimPhone()
    phone.launch(DRAW_PKG)
    draw_diagonal(phone)
    tap_on(phone, text="Save as")
    shown = texts(phone)
    assert "Internal/Simple Draw" in shown and any(t.startswith("image_2023_") for t in shown)
    assert next(e for e in ui_of(phone).elements if e.text == "PNG").checked
    tap_on(phone, rid="button1")
    assert "File saved successfully" in texts(phone)
    [saved] = phone.files.walk_files("/sdcard/Simple Draw")
    img = Image.open(io.BytesIO(phone.files.read(saved)))
    assert img.format == "PNG" and img.size == (1080, 1600)
    assert img.getpixel((540, 800)) == (0, 0, 0) and img.getpixel((10, 1590)) == (255, 255, 255)
    tap_on(phone, text="Save as")  # the same name and folder again: asks first
    tap_on(phone, rid="button1")
    assert any("already exists. Overwrite?" in t for t in texts(phone))
    tap_on(phone, text="Yes")
    assert phone.files.walk_files("/sdcard/Simple Draw") == [saved]


def test_the_folder_picker_moves_the_save_to_pictures_as_svg_and_an_empty_name_is_refused():
    phone = SimPhone()
    phone.launch(DRAW_PKG)
    draw_diagonal(phone)
    tap_on(phone, text="Save as")
    tap_on(phone, rid="save_image_filename", long=True)
    phone.type_text(" ")
    phone.shell("input keyevent 67")  # delete: the field is empty
    phone.back()
    tap_on(phone, rid="button1")
    assert "Filename cannot be empty" in texts(phone)
    tap_on(phone, rid="save_image_filename")
    phone.type_text("sketch")
    phone.back()
    tap_on(phone, text="SVG")
    tap_on(phone, rid="save_image_path")
    assert "Select a folder" in texts(phone)
    tap_on(phone, text="Internal")
    scroll_to_text(phone, "Pictures")  # below Android 13's other public folders
    tap_on(phone, text="Pictures")
    assert "> Pictures" in texts(phone)
    phone.back()  # Back in the picker goes up a folder first
    scroll_to_text(phone, "Pictures")
    assert "> Pictures" not in texts(phone) and "Pictures" in texts(phone)
    tap_on(phone, text="Pictures")
    tap_on(phone, rid="button1")
    assert "Internal/Pictures" in texts(phone)
    tap_on(phone, rid="button1")
    svg = phone.files.read_text("/sdcard/Pictures/sketch.svg")
    assert svg.startswith("<svg") and "<path d=\"M" in svg
    assert file_under(SimDevice(phone), "/storage/emulated/0/Pictures", "sketch.svg")
    phone.shell(f"pm clear {DRAW_PKG}")
    assert phone.apps[DRAW_PKG].strokes == [] and phone.apps[DRAW_PKG].last_folder == ""


# --- AndroidWorld's own code on the app ------------------------------------------------------------------------


@needs_android_world
def test_androidworlds_check_wants_the_exact_name_in_pictures():
    device = SimDevice()
    task = android_world_instance(NAME, 2, device).task
    name = task.params["file_name"]
    stem, ext = name.rsplit(".", 1)
    assert task.is_successful(device) == 0.0
    other = "jpg" if ext != "jpg" else "png"
    device.phone.files.write(f"/sdcard/Pictures/{stem}.{other}", b"x")  # another extension
    device.phone.files.write(f"/sdcard/Simple Draw/{name}", b"x")  # the default folder, not Pictures
    assert task.is_successful(device) == 0.0
    device.phone.files.write(f"/sdcard/Pictures/{name}", b"x")
    assert task.is_successful(device) == 1.0


# --- the re-creation -------------------------------------------------------------------------------------------


def test_task_name_template_and_budget_match_androidworld(realdata):
    check_android_world_tasks(realdata, [NAME])


def test_expert_solves_task_on_five_seeds():
    check_expert_solves(NAME)


def test_initial_state_is_not_a_success_and_initialize_is_repeatable():
    def state(device: SimDevice) -> tuple[str, int]:
        return device.shell("find /storage/emulated/0/Pictures -type f"), len(device.phone.apps[DRAW_PKG].strokes)

    def disturb(device: SimDevice) -> None:
        launch(DRAW_PKG)(device)
        device.phone.swipe(200, 800, 800, 1200)
        device.phone.files.write("/sdcard/Pictures/old.png", b"x")

    check_start_state(TASK_REGISTRY[NAME](seed=4), state, disturb)


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds([NAME], lambda seed: RandomAgent(seed=seed), episodes=6)
