"""The simulated Tasks app (org.tasks) and its questions: the list and its options, the editor, the database in
step with the app, AndroidWorld's own set-up and scoring, experts and random agents."""

from __future__ import annotations

import logging

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.apps.tasks import TASKS_DB, TASKS_PKG, due_ms
from android_gym.sim.databases import read_table
from android_gym.sim.device import SimDevice
from android_gym.suites import android_world_available
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.sim import tasks_app as tasks_tasks

from .sim_ui import descs, tap_on, texts, type_in
from .task_checks import (
    android_world_instance,
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ == tasks_tasks.__name__)
needs_android_world = pytest.mark.skipif(not android_world_available(),
                                         reason="the android_world package is not installed")


def _phone_with_tasks() -> SimPhone:
    import datetime as dt

    phone = SimPhone()
    app = phone.apps[TASKS_PKG]
    app.add_task("Water plants", 0, due_ms(dt.date(2023, 10, 16), dt.time(17, 0)))
    app.add_task("Pay rent", 3, due_ms(dt.date(2023, 10, 14)))
    done = app.add_task("Call mum", 1, due_ms(dt.date(2023, 10, 12)))
    app.tasks[-1]["completed"] = due_ms(dt.date(2023, 10, 12), dt.time(9, 0))
    hidden = app.add_task("Plan trip", 2, due_ms(dt.date(2023, 10, 20)))
    app.tasks[-1]["hideUntil"] = due_ms(dt.date(2023, 10, 18))
    assert (done, hidden) == (3, 4)
    return phone


# --- the app -------------------------------------------------------------------------------------------------


def test_list_shows_open_tasks_by_due_date_and_the_options_show_completed_and_hidden():
    phone = _phone_with_tasks()
    phone.launch(TASKS_PKG)
    shown = texts(phone)
    assert shown[:5] == ["My Tasks", "Pay rent", "Oct 14, 2023", "Water plants", "Oct 16, 2023, 5:00 PM"]
    assert "Call mum" not in shown and "Plan trip" not in shown
    assert "High priority" in descs(phone) and "None priority" in descs(phone)
    tap_on(phone, text="More options")
    tap_on(phone, text="Show completed")
    assert "Call mum" in texts(phone) and "Plan trip" not in texts(phone)
    tap_on(phone, text="More options")
    tap_on(phone, text="Show hidden")
    shown = texts(phone)
    assert shown.index("Plan trip") < shown.index("Call mum")  # completed tasks come last
    assert phone.shell("dumpsys window | grep mCurrentFocus").count("com.todoroo.astrid.activity.MainActivity") == 1


def test_checking_a_task_completes_it_and_the_editor_saves_and_deletes():
    phone = _phone_with_tasks()
    phone.launch(TASKS_PKG)
    tap_on(phone, text="None priority")  # Pay rent's check box
    app = phone.apps[TASKS_PKG]
    assert app.tasks[1]["completed"] > 0 and "Pay rent" not in texts(phone)
    tap_on(phone, text="Water plants")
    assert "Oct 16, 2023, 5:00 PM" in texts(phone)
    type_in(phone, "title", " today")
    tap_on(phone, text="Low")
    tap_on(phone, text="Save")
    assert app.tasks[0]["title"] == "Water plants today" and app.tasks[0]["importance"] == 2
    tap_on(phone, text="Create task")
    type_in(phone, "title", "Buy milk")
    tap_on(phone, text="Save")
    assert [t["title"] for t in app.tasks][-1] == "Buy milk"
    tap_on(phone, text="Buy milk")
    tap_on(phone, text="Delete task")
    tap_on(phone, text="Delete")
    assert "Buy milk" not in [t["title"] for t in app.tasks]


def test_database_follows_the_app_and_writes_reach_the_app():
    phone = _phone_with_tasks()
    rows = read_table(phone.files.read(TASKS_DB), "tasks")
    assert [(r["title"], r["importance"], r["order"]) for r in rows][:2] == [("Water plants", 0, None),
                                                                             ("Pay rent", 3, None)]
    assert phone.shell(f'sqlite3 {TASKS_DB} "SELECT title FROM tasks WHERE completed > 0"') == "Call mum\n"
    phone.shell(f"sqlite3 {TASKS_DB} \"UPDATE tasks SET importance = 0 WHERE title = 'Pay rent'\"")
    assert phone.apps[TASKS_PKG].tasks[1]["importance"] == 0
    phone.shell(f"pm clear {TASKS_PKG}")
    assert phone.shell(f'sqlite3 {TASKS_DB} "SELECT COUNT(*) FROM tasks"') == "0\n"


@needs_android_world
def test_androidworlds_own_set_up_fills_the_app_and_its_check_scores_the_answer():
    logging.getLogger("absl").setLevel(logging.ERROR)
    from android_world.task_evals.information_retrieval import proto_utils, task_app_utils

    device = SimDevice()
    task, env, _ = android_world_instance("TasksDueOnDate", 1, device)
    app = device.phone.apps[TASKS_PKG]
    assert len(app.tasks) == 23
    rows = task_app_utils.list_rows(env)  # AndroidWorld's own read of the pulled database
    assert sorted(r.title for r in rows) == sorted(t["title"] for t in app.tasks)
    expected = proto_utils.get_expected_answer(task.aw_task.task)
    assert task.is_successful(device, ", ".join(expected)) == 1.0
    assert task.is_successful(device, ", ".join(expected[:2])) == 0.0
    task.teardown(device)
    assert app.tasks == []


# --- tasks -----------------------------------------------------------------------------------------------


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES)
    assert len(NAMES) == 6


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_five_seeds(name):
    check_expert_solves(name)


@pytest.mark.parametrize("name", ["TasksDueOnDate", "TasksCompletedTasksForDate"])
def test_initial_state_is_not_a_success_and_initialize_is_repeatable(name):
    check_start_state(TASK_REGISTRY[name](seed=4),
                      lambda device: sorted((t["title"], t["dueDate"]) for t in device.phone.apps[TASKS_PKG].tasks),
                      launch(TASKS_PKG))


def test_wrong_or_partial_answers_fail():
    task = TASK_REGISTRY["TasksDueOnDate"](seed=3)
    device = SimDevice()
    task.initialize(device)
    titles = task.params["titles"]
    assert task.is_successful(device, ", ".join(titles)) == 1.0
    assert task.is_successful(device, ", ".join(titles[:2])) == 0.0
    assert task.is_successful(device, ", ".join(titles + ["Walk the dog"])) == 0.0
    count = TASK_REGISTRY["TasksDueNextWeek"](seed=3)
    assert count.is_successful(device, str(count.params["count"] + 1)) == 0.0


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=4)
