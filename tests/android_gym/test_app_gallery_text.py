"""AndroidWorld's tasks whose words exist only in pictures (ExpenseAddMultipleFromGallery,
RecipeAddMultipleRecipesFromImage, MarkorTranscribeReceipt): the experts read the gallery's screenshot with
Tesseract; AndroidWorld's own set-up writes the pictures and its own checks score what the experts entered."""

from __future__ import annotations

import shutil

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.apps.gallery import GALLERY_PKG
from android_gym.sim.device import SimDevice
from android_gym.suites import android_world_available
from android_gym.tasks.base import get_task_class
from android_gym.tasks.ocr import ScreenUI, read_screen_text
from android_gym.tasks.runner import observe_ui, run_expert
from android_gym.tasks.sim.gallery_text import cents_of, parse_blocks, read_picture, text_picture

from .sim_ui import tap_on
from .task_checks import (
    check_android_world_expert_solves,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
)

NAMES = ["ExpenseAddMultipleFromGallery", "RecipeAddMultipleRecipesFromImage", "MarkorTranscribeReceipt"]
needs_ocr = pytest.mark.skipif(shutil.which("tesseract") is None,
                               reason="Tesseract is not installed (apt-get install tesseract-ocr; .ci/run installs it)")
needs_android_world = pytest.mark.skipif(
    not android_world_available(),
    reason="the android_world package is not installed (tools/setup_env.sh installs it from ../shared/vendor)")


def test_blocks_read_off_a_picture_parse_with_wrapped_values_and_loose_field_names():
    text = ("Expense: Video Games\n\namount dollars: $378.89\ncategory_name: Entertainment\nnote: A need\n"
            "Expense: Rental Income\namount_dollars: $241.8\ncategory name: Income\nnote: Remember to\n"
            "transfer funds\n")
    blocks = parse_blocks(text, "Expense", ("amount_dollars", "category_name", "note"))
    assert blocks == [
        {"title": "Video Games", "amount_dollars": "$378.89", "category_name": "Entertainment", "note": "A need"},
        {"title": "Rental Income", "amount_dollars": "$241.8", "category_name": "Income",
         "note": "Remember to transfer funds"}]
    assert [cents_of(b["amount_dollars"]) for b in blocks] == [37889, 24180]


def test_the_tree_has_no_words_of_the_picture_and_an_expert_needs_the_screenshot():
    phone = SimPhone()
    phone.files.write("/sdcard/DCIM/note.jpg", text_picture(["Expense: Quiet Cafe", " note: oat milk"]), 5)
    phone.launch(GALLERY_PKG)
    tap_on(phone, text="DCIM")
    tap_on(phone, text="Toggle filename visibility")
    tap_on(phone, text="note.jpg")
    device = SimDevice(phone)
    assert "Quiet Cafe" not in phone.dump()
    assert not isinstance(observe_ui(device), ScreenUI)
    seen = observe_ui(device, pixels=True)
    assert isinstance(seen, ScreenUI) and seen.screenshot.shape == (phone.height, phone.width, 3)
    assert seen.elements == observe_ui(device).elements  # the same tree, with its pixels
    if shutil.which("tesseract") is not None:
        assert "Quiet Cafe" in read_picture(seen) and "oat milk" in read_screen_text(seen.screenshot)


@needs_ocr
@needs_android_world
@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_androidworlds_instances_on_three_seeds(name):
    check_android_world_expert_solves(name)


@needs_ocr
@needs_android_world
def test_androidworlds_expense_picture_is_read_and_logged():
    from android_gym.suites.android_world_sim import AndroidWorldSimSuite

    suite = AndroidWorldSimSuite(["ExpenseAddMultipleFromGallery"])
    device = SimDevice()
    suite.attach(device)
    task = suite.instance("ExpenseAddMultipleFromGallery", 5, 0)
    assert task.reads_pixels
    result = run_expert(task, device)
    assert result.success == 1.0


@needs_ocr
@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_five_seeds(name):
    check_expert_solves(name)


@needs_ocr
def test_receipt_transcription_recreation_is_solved_and_not_solved_at_its_start():
    task = get_task_class("MarkorTranscribeReceipt")(seed=7)
    device = SimDevice()
    task.initialize(device)
    assert task.is_successful(device) == 0.0
    assert run_expert(get_task_class("MarkorTranscribeReceipt")(seed=7), SimDevice()).success == 1.0


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=3)


@needs_ocr
@needs_android_world
def test_the_env_hands_a_pixel_reading_expert_its_screenshots():
    import gymnasium as gym

    env = gym.make("AndroidWorld-v0", task="MarkorTranscribeReceipt")
    env.reset(seed=3)
    done = False
    while not done:
        _, reward, terminated, truncated, _ = env.step(env.unwrapped.expert_action())
        done = terminated or truncated
    assert terminated and reward == 1.0
    env.close()
