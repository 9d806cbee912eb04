"""The simulated Pro Expense and its tasks: home, logs, entry form, selection delete, provider, experts, random agents."""

from __future__ import annotations

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.device_state import parse_rows
from android_gym.tasks.sim import expense as expense_tasks
from android_gym.tasks.sim.crossapp import expenses_csv, parse_expenses_csv, without_reimbursable
from android_gym.tasks.sim.expense import read_expenses, row_key

from .sim_ui import descs, tap_on, texts, type_in, ui_of
from .task_checks import (
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

PKG = "com.arduia.expense"
URI = "content://com.arduia.expense/expenses"
COLS = ["expense_id", "name", "amount", "category", "note"]
NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ == expense_tasks.__name__)


def rows(phone: SimPhone, where: str = "") -> list[dict]:
    cmd = f"content query --uri {URI} --projection {':'.join(COLS)}"
    if where:
        cmd += f" --where \"{where}\""
    return parse_rows(phone.shell(cmd), COLS)


# --- the app -------------------------------------------------------------------------------------------------


def open_drawer(phone: SimPhone) -> None:
    """Tap Home's drawer button: the app bar's first button, with no label or description (as on the emulator)."""
    button = next(e for e in ui_of(phone).elements
                  if e.class_name.endswith("ImageButton") and not e.resource_id and not e.content_desc)
    phone.tap(*button.center)


def test_home_shows_week_totals_and_recent_then_logs_and_statistics():
    phone = SimPhone()
    phone.launch(PKG)
    shown = texts(phone)
    # this week (Sunday Oct 15 to Sunday Oct 22) holds no expense yet; the "+" button has no label
    assert shown[:8] == ["Home", "Totals", "OCT 15 - 22", "INCOME", "0", "USD", "OUTCOME", "0"]
    assert "Expenses in this Week" in shown and "Recent" in shown and "More" not in shown
    assert not any(e.text or e.content_desc for e in ui_of(phone).elements if e.resource_id.endswith("fb_main_add"))
    names = [e.text for e in ui_of(phone).elements if e.resource_id.endswith(":id/tv_name")]
    assert names[:3] == ["Restaurant Meal", "Stationery", "Charity"]  # newest first
    assert "Yesterday 2:25 PM" in shown and "38.8" in shown and "2023 Oct 13" in shown
    phone.shell(f"content insert --uri {URI} --bind name:s:Bonus --bind amount:l:50000 --bind category:i:2")
    phone.shell(f"content insert --uri {URI} --bind name:s:Lunch --bind amount:l:1250 --bind category:i:3")
    phone.launch(PKG)
    shown = texts(phone)
    assert shown[3:8] == ["INCOME", "500", "USD", "OUTCOME", "12.5"]  # income is not an expense
    assert "Today 3:34 PM" in shown
    open_drawer(phone)
    tap_on(phone, text="Expense Logs")
    assert "Expense Logs" in texts(phone) and "Oct 14, 2023" in texts(phone)
    phone.swipe(540, 2000, 540, 400, 300)
    phone.swipe(540, 2000, 540, 400, 300)
    assert "Rent Payment" in texts(phone)  # the oldest, at the bottom of the long list
    phone.back()
    open_drawer(phone)
    tap_on(phone, text="Statistics")
    assert texts(phone)[:3] == ["Statistics", "Income", "$4,700.00"]


def test_add_expense_through_the_form_with_validation():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, rid="fb_main_add")
    assert texts(phone)[:2] == ["Expense Entry", "15 Oct 2023 3:34 PM"] and not phone.keyboard_shown
    tap_on(phone, text="SAVE")
    assert "Please enter a name" in texts(phone)
    type_in(phone, "edt_name", "Bus ticket")
    type_in(phone, "edt_amount", "2.5x")
    assert "USD" in texts(phone)  # Amount's suffix once it has the focus
    pad = [e.content_desc for e in ui_of(phone).elements if ":id/key_pos_number_line" in e.resource_id]
    assert pad[:4] == ["1", "2", "3", "Dash"] and "Next" in descs(phone)  # Gboard's number pad
    tap_on(phone, text="SAVE")
    assert "Please enter a valid amount" in texts(phone)
    tap_on(phone, rid="edt_amount", long=True)
    phone.type_text("2.75")
    assert "Transportation" not in texts(phone)  # past the five categories that fit: the row scrolls sideways
    row = next(e for e in ui_of(phone).elements if e.resource_id.endswith(":id/rv_category"))
    phone.swipe(row.center[0] + 300, row.center[1], row.center[0] - 300, row.center[1], 300)
    tap_on(phone, text="Transportation")
    type_in(phone, "edt_note", "Airport shuttle")
    tap_on(phone, text="SAVE")
    assert "Expense saved" in texts(phone) and "Bus ticket" in texts(phone)
    row = rows(phone, "name = 'Bus ticket'")[0]
    assert (row["amount"], row["category"], row["note"]) == ("275", "7", "Airport shuttle")


def test_detail_edit_and_delete_with_confirmation():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="Charity")
    assert "Donation" in texts(phone) and "Food bank" in texts(phone) and "$25.00" in texts(phone)
    tap_on(phone, text="Edit")
    tap_on(phone, rid="edt_amount", long=True)
    phone.type_text("30")
    tap_on(phone, text="UPDATE")
    assert rows(phone, "name = 'Charity'")[0]["amount"] == "3000"
    tap_on(phone, text="Delete")
    tap_on(phone, text="Cancel")
    assert rows(phone, "name = 'Charity'")
    tap_on(phone, text="Delete")
    tap_on(phone, rid="button1")
    assert rows(phone, "name = 'Charity'") == [] and "Deleted" in texts(phone)


def test_multi_select_delete_in_the_logs():
    phone = SimPhone()
    phone.launch(PKG)
    open_drawer(phone)
    tap_on(phone, text="Expense Logs")
    tap_on(phone, text="Stationery", long=True)
    assert "1 selected" in texts(phone)
    tap_on(phone, text="Medications")
    tap_on(phone, text="Stationery")  # tapping again unselects
    tap_on(phone, text="Charity")
    tap_on(phone, text="Delete")
    assert "Are you sure you want to delete 2 expenses?" in texts(phone)
    tap_on(phone, rid="button1")
    left = {r["name"] for r in rows(phone)}
    assert "Stationery" in left and not {"Medications", "Charity"} & left and len(left) == 12
    assert "Expense Logs" in texts(phone)


def test_provider_insert_update_delete_and_errors():
    phone = SimPhone()
    phone.shell(f"content delete --uri {URI}")
    assert phone.shell(f"content query --uri {URI}").strip() == "No result found."
    phone.shell(f"content insert --uri {URI} --bind name:s:'Tea, green' --bind amount:l:450 "
                "--bind category:s:Food --bind created_date:l:1696150000000")
    row = rows(phone)[0]
    assert (row["name"], row["amount"], row["category"]) == ("Tea, green", "450", "3")
    phone.shell(f"content update --uri {URI} --bind note:s:Matcha --where \"amount < 1000\"")
    assert rows(phone)[0]["note"] == "Matcha"
    assert "unknown expense column" in phone.shell(f"content insert --uri {URI} --bind name:s:A --bind price:l:1")
    assert "needs name and amount" in phone.shell(f"content insert --uri {URI} --bind name:s:A")
    assert "unknown expense category" in phone.shell(
        f"content insert --uri {URI} --bind name:s:A --bind amount:l:1 --bind category:s:Pets")
    assert "unknown Pro Expense uri" in phone.shell("content query --uri content://com.arduia.expense/budgets")
    phone.shell(f"content delete --uri {URI} --where \"name LIKE 'Tea%'\"")
    assert rows(phone) == []


def test_csv_note_round_trip_in_androidworlds_format():
    data = [{"name": "Taxi Fare", "cents": 1230, "category": "Transportation", "note": "Late night. Reimbursable."}]
    text = expenses_csv(data)
    assert text.splitlines() == ["name|amount_dollars|category_name|note",
                                 "Taxi Fare|$12.3|Transportation|Late night. Reimbursable."]
    assert parse_expenses_csv(text) == data
    assert without_reimbursable(data[0]["note"]) == "Late night"


# --- tasks -----------------------------------------------------------------------------------------------


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES + ["ExpenseAddMultipleFromMarkor"])
    assert len(NAMES) == 5


@pytest.mark.parametrize("name", NAMES + ["ExpenseAddMultipleFromMarkor"])
def test_expert_solves_task_on_five_seeds(name):
    check_expert_solves(name)


@pytest.mark.parametrize("name", NAMES + ["ExpenseAddMultipleFromMarkor"])
def test_initial_state_is_not_a_success_and_initialize_is_repeatable(name):
    check_start_state(TASK_REGISTRY[name](seed=4), lambda device: sorted(row_key(r) for r in read_expenses(device)),
                      launch(PKG))


def test_deleting_both_duplicates_or_everything_fails():
    task = TASK_REGISTRY["ExpenseDeleteDuplicates"](seed=2)
    device = SimDevice()
    task.initialize(device)
    name = task.params["targets_present"][0]["name"]
    device.shell(f"content delete --uri {URI} --where \"name = '{name}'\"")
    assert task.is_successful(device) == 0.0
    multi = TASK_REGISTRY["ExpenseDeleteMultiple"](seed=2)
    multi.initialize(device)
    device.shell(f"content delete --uri {URI}")
    assert multi.is_successful(device) == 0.0


def test_added_expense_must_match_amount_and_category():
    task = TASK_REGISTRY["ExpenseAddSingle"](seed=1)
    device = SimDevice()
    task.initialize(device)
    t = task.params["targets"][0]
    base = f"content insert --uri {URI} --bind name:s:'{t['name'].upper()}' --bind note:s:'{t['note']}!' "
    device.shell(base + f"--bind amount:l:{t['cents'] + 1} --bind category:s:'{t['category']}'")
    assert task.is_successful(device) == 0.0
    device.shell(f"content delete --uri {URI} --where \"amount = {t['cents'] + 1}\"")
    device.shell(base + f"--bind amount:l:{t['cents']} --bind category:s:'{t['category']}'")
    assert task.is_successful(device) == 1.0  # case and punctuation of name and note do not matter


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed))
