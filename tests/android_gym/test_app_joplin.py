"""The simulated Joplin and its tasks: note list, side menu, search, note view and edit, joplin.sqlite in step
with the app both ways, AndroidWorld's own set-up and check on it, experts and random agents."""

from __future__ import annotations

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.suites import android_world_available
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.runner import run_expert
from android_gym.tasks.sim import joplin as joplin_tasks

from .sim_ui import tap_on, texts, type_in, ui_of
from .task_checks import (
    android_world_instance,
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

PKG = "net.cozic.joplin"
DB = "/data/data/net.cozic.joplin/databases/joplin.sqlite"
NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ == joplin_tasks.__name__)


def sql(phone: SimPhone, query: str) -> list[str]:
    return phone.shell(f'sqlite3 {DB} "{query}"').splitlines()


def test_note_list_puts_open_todos_first_with_their_check_boxes():
    phone = SimPhone()
    phone.launch(PKG)
    assert f"{PKG}/{PKG}.MainActivity" in phone.shell("dumpsys window | grep mCurrentFocus")
    shown = texts(phone)
    assert shown[:2] == ["All notes", "Try the to-do check box"]
    boxes = [e for e in ui_of(phone).elements if e.resource_id.endswith(":id/todo_checkbox")]
    assert len(boxes) == 1 and not boxes[0].checked
    phone.tap(*boxes[0].center)
    assert sql(phone, "SELECT title FROM notes WHERE todo_completed > 0") == ["Try the to-do check box"]


def test_side_menu_search_view_and_edit_reach_the_database():
    phone = SimPhone()
    phone.shell(f"sqlite3 {DB} \"INSERT INTO folders (id, title, created_time, updated_time) VALUES "
                f"('f1', 'Work', 1, 1); INSERT INTO notes (id, parent_id, title, body, created_time, updated_time) "
                f"VALUES ('n1', 'f1', 'Standup', 'Ship the beta', 1, 1)\"")
    phone.launch(PKG)
    tap_on(phone, text="Side menu")
    assert texts(phone)[1:4] == ["All notes", "Welcome!", "Work"]
    tap_on(phone, text="Work")
    assert "Standup" in texts(phone) and "Try the to-do check box" not in texts(phone)
    tap_on(phone, text="Search")
    type_in(phone, "search_query", "beta")
    tap_on(phone, text="Standup")
    assert "Ship the beta" in texts(phone)
    tap_on(phone, text="Edit")
    type_in(phone, "note_body_input", " on Friday")
    assert sql(phone, "SELECT body FROM notes WHERE id='n1'") == ["Ship the beta on Friday"]
    assert sql(phone, "SELECT title FROM notes_normalized WHERE id='n1'") == ["standup"]


def test_new_todo_from_the_button_and_pm_clear():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="New to-do")
    phone.type_text("Buy stamps")
    assert sql(phone, "SELECT title, is_todo FROM notes WHERE title='Buy stamps'") == ["Buy stamps|1"]
    phone.shell(f"pm clear {PKG}")
    assert sql(phone, "SELECT count(*) FROM notes") == ["0"] and phone.apps[PKG].folders == []


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES)
    assert len(NAMES) == 4


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_five_seeds(name):
    check_expert_solves(name)


def test_initial_state_is_not_a_success_and_initialize_is_repeatable():
    def notes(device: SimDevice) -> list[str]:
        return sorted(device.shell(f'sqlite3 {DB} "SELECT title, body, is_todo FROM notes"').splitlines())

    check_start_state(TASK_REGISTRY["NotesTodoItemCount"](seed=4), notes, launch(PKG))


def test_wrong_answers_score_zero():
    task = TASK_REGISTRY["NotesRecipeIngredientCount"](seed=1)
    assert task.is_successful(SimDevice(), task.params["ingredient_quantity"]) == 1.0
    assert task.is_successful(SimDevice(), "5 cups") == 0.0
    todo = TASK_REGISTRY["NotesIsTodo"](seed=1)
    assert todo.is_successful(SimDevice(), "False" if todo.params["answer"] == "True" else "True") == 0.0


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=4)


@pytest.mark.skipif(not android_world_available(), reason="the android_world package is not installed")
def test_androidworlds_own_setup_fills_the_app_and_its_check_scores_the_expert():
    device = SimDevice()
    task, _, suite = android_world_instance("NotesTodoItemCount", 0, device)
    app = device.phone.apps[PKG]
    folder = next(f["id"] for f in app.folders if f["title"] == task.params["folder"])
    assert len(app.notes) == 103 and sum(n["is_todo"] for n in app.notes if n["parent_id"] == folder) == 3
    assert task.is_successful(device, "4") == 0.0 and task.is_successful(device, "3") == 1.0
    task.teardown(device)  # AndroidWorld's tear_down clears Joplin's tables through sqlite3
    assert app.notes == [] and app.folders == []
    result = run_expert(suite.instance("NotesTodoItemCount", 0, 0), device)
    assert result.success == 1.0 and result.answer == "3"
