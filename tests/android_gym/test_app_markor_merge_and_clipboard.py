"""MarkorMergeNotes and SystemCopyToClipboard re-created: the UI paths their experts take, scoring, random agents."""

from __future__ import annotations

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.sim.clipboard import RESET_MARK, read_clipboard
from android_gym.tasks.sim.markor import note_path, write_note

from .sim_ui import tap_on, texts, type_in
from .task_checks import check_android_world_tasks, check_expert_solves, check_random_agent_rarely_succeeds

NAMES = ["MarkorMergeNotes", "SystemCopyToClipboard"]


def test_launcher_search_text_long_pressed_and_copied_lands_on_the_clipboard():
    phone = SimPhone()
    tap_on(phone, text="Search")
    type_in(phone, "input", "Acme Corp, Suite 200")  # the search panel's field
    tap_on(phone, rid="input", long=True)
    assert "Copy" in texts(phone)
    tap_on(phone, text="Copy")
    assert read_clipboard(SimDevice(phone)) == "Acme Corp, Suite 200"


def test_new_markor_note_without_extension_when_the_extension_field_is_cut():
    phone = SimPhone()
    phone.launch("net.gsantner.markor")
    tap_on(phone, text="Create a new file or folder")
    type_in(phone, "new_file_dialog__name", "GZk2Lp0a")
    tap_on(phone, rid="new_file_dialog__ext", long=True)
    tap_on(phone, text="Cut")
    tap_on(phone, text="OK")
    assert "GZk2Lp0a" in phone.shell("ls /sdcard/Documents/Markor").split()


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_five_seeds(name):
    check_expert_solves(name)


def test_start_states_and_wrong_results_score_zero():
    device = SimDevice()
    copy = TASK_REGISTRY["SystemCopyToClipboard"](seed=1)
    copy.initialize(device)
    assert read_clipboard(device) == RESET_MARK and copy.is_successful(device) == 0.0
    merge = TASK_REGISTRY["MarkorMergeNotes"](seed=1)
    merge.initialize(device)
    assert merge.is_successful(device) == 0.0
    p = merge.params
    path = note_path(p["new_file_name"])
    write_note(device, path, "\n".join(p[f"file{i}_content"] for i in (1, 2, 3)))  # no blank lines between
    assert merge.is_successful(device) == 0.0
    write_note(device, path, "\n\n".join(p[f"file{i}_content"] for i in (3, 2, 1)))  # wrong order
    assert merge.is_successful(device) == 0.0
    write_note(device, path, "\n\n".join(p[f"file{i}_content"] for i in (1, 2, 3)))
    assert merge.is_successful(device) == 1.0


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=5)
