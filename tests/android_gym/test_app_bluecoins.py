"""The simulated Bluecoins (AndroidLab's expense tracker) and AndroidLab's 15 bluecoins tasks on it: the list, the
editor as AndroidLab's judges read it, the store's bad input, the experts on three seeds and the checks' bad paths."""

from __future__ import annotations

import pytest

from android_gym.sim import SimPhone
from android_gym.sim.apps.bluecoins import format_amount, format_date, number_pad, parse_amount
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import get_task_class
from android_gym.tasks.device_state import parse_rows
from android_gym.tasks.runner import run_expert
from android_gym.tasks.sim.bluecoins_androidlab import LAB_TRANSACTIONS, read_transactions

from .sim_ui import scroll_to_text, tap_on, texts, type_in, ui_of

PKG = "com.rammigsoftware.bluecoins"
URI = "content://com.rammigsoftware.bluecoins/transactions"
COLS = ["_id", "type", "amount", "date", "item", "category", "account", "notes"]
NAMES = [f"bluecoins_{n}" for n in range(1, 16)]


def rows(phone: SimPhone) -> list[dict]:
    return parse_rows(phone.shell(f"content query --uri {URI} --projection {':'.join(COLS)}"), COLS)


def add(phone: SimPhone, kind: str, amount: str, day: str, item: str = "x", notes: str = "") -> str:
    binds = f"--bind type:s:{kind} --bind amount:s:{amount} --bind date:s:{day} --bind item:s:{item}"
    if notes:
        binds += f" --bind notes:s:{notes}"
    return phone.shell(f"content insert --uri {URI} {binds}")


def editor(phone: SimPhone) -> dict[str, object]:
    """What AndroidLab's judges take from the editor: the first plain TextView, the date, the amount beside the
    clickable CNY, the last EditText and the first clickable "+"/"-"."""
    elements = ui_of(phone).elements
    plain = [e for e in elements if e.class_name.endswith("TextView") and not e.clickable and e.text
             and e.package == PKG]
    edits = [e for e in elements if e.class_name.endswith("EditText")]
    currency = next(e for e in elements if e.text == "CNY" and e.clickable)
    amount = next(e for e in edits if e.bounds[1] < currency.center[1] < e.bounds[3])
    sign = next(e.text for e in elements if e.clickable and e.text in ("+", "-"))
    months = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
              "November", "December")
    date = next(e.text for e in plain if any(m in e.text for m in months))
    return {"type": plain[0].text.split()[-1], "date": date, "amount": amount.text, "note": edits[-1].text,
            "sign": sign}


@pytest.mark.parametrize("cents,shown", [(40000, "400.00"), (1800000, "18000.00"), (79420, "794.20"), (314, "3.14"),
                                         (5, "0.05")])
def test_editor_amounts_show_two_decimals_without_grouping(cents, shown):
    assert format_amount(cents) == shown and parse_amount(shown) == cents


@pytest.mark.parametrize("typed,cents", [("512", 51200), ("3.14", 314), ("936.02", 93602), ("8000.5", 800050),
                                         ("0", None), ("", None), ("1.234", None), (".5", None), ("abc", None)])
def test_typed_amounts(typed, cents):
    assert parse_amount(typed) == cents


def test_number_pad_keeps_digits_and_one_point():
    assert number_pad("18,250") == "18250" and number_pad("3.1.4") == "3.14" and number_pad("-5 CNY") == "5"


def test_dates_read_as_the_judges_want():
    import datetime as dt

    assert format_date(dt.date(2024, 5, 11)) == "May 11, 2024" and format_date(dt.date(2024, 3, 8)) == "March 8, 2024"


def test_list_shows_days_newest_first_and_the_editor_what_the_judges_read():
    phone = SimPhone()
    phone.shell("date 051610002024.00")
    add(phone, "expense", "400", "2024-05-15", "Electricity")
    add(phone, "income", "18000", "2024-05-12", "Salary")
    phone.launch(PKG)
    shown = texts(phone)
    assert shown.index("Wednesday, May 15, 2024") < shown.index("Sunday, May 12, 2024")
    assert "-400.00 CNY" in shown and "+18,000.00 CNY" in shown
    tap_on(phone, text="Electricity")
    assert editor(phone) == {"type": "Expense", "date": "May 15, 2024", "amount": "400.00", "note": "Notes",
                             "sign": "-"}
    phone.back()
    tap_on(phone, text="Salary")
    assert editor(phone) == {"type": "Income", "date": "May 12, 2024", "amount": "18000.00", "note": "Notes",
                             "sign": "+"}
    assert any(e.hint == "Name of income" for e in ui_of(phone).elements)


def test_new_transaction_through_the_form_type_sign_and_date_picker():
    phone = SimPhone()
    phone.shell("date 051610002024.00")
    phone.launch(PKG)
    assert "No transactions" in texts(phone)
    tap_on(phone, text="Add transaction")
    assert editor(phone)["type"] == "Expense" and editor(phone)["date"] == "May 16, 2024"
    assert any(e.hint == "Payee or item purchased" for e in ui_of(phone).elements)
    tap_on(phone, text="Save")
    assert "Enter an amount" in texts(phone) and rows(phone) == []
    type_in(phone, "amount", "18,250")
    tap_on(phone, rid="transaction_type")
    tap_on(phone, text="Income")
    assert editor(phone)["type"] == "Income" and editor(phone)["sign"] == "+"
    tap_on(phone, text="+")  # the sign flips the type back
    assert editor(phone)["type"] == "Expense" and editor(phone)["sign"] == "-"
    tap_on(phone, text="-")
    type_in(phone, "notes", "bonus")
    tap_on(phone, rid="date_row")
    tap_on(phone, text="Previous month")
    tap_on(phone, text="8 April 2024")
    tap_on(phone, text="OK")
    assert editor(phone) == {"type": "Income", "date": "April 8, 2024", "amount": "18250", "note": "bonus",
                             "sign": "+"}
    tap_on(phone, text="Save")
    assert phone.foreground_app.page == "main" and "+18,250.00 CNY" in texts(phone)
    (row,) = rows(phone)
    assert (row["type"], row["amount"], row["date"], row["notes"], row["category"], row["account"]) == (
        "income", "18250.00", "2024-04-08", "bonus", "Other income", "Cash")


def test_editing_replaces_the_amount_and_delete_asks_first():
    phone = SimPhone()
    add(phone, "expense", "400", "2024-05-15", "Electricity")
    add(phone, "expense", "12.80", "2024-05-06", "Breakfast")
    phone.launch(PKG)
    tap_on(phone, text="Electricity")
    tap_on(phone, rid="amount", long=True)  # selects the whole amount
    phone.type_text("500")
    tap_on(phone, rid="category_row")
    tap_on(phone, text="Housing")
    tap_on(phone, text="Save")
    assert "-500.00 CNY" in texts(phone)
    electricity = next(r for r in rows(phone) if r["item"] == "Electricity")
    assert (electricity["amount"], electricity["category"], electricity["date"]) == ("500.00", "Housing",
                                                                                     "2024-05-15")
    tap_on(phone, text="Breakfast")
    tap_on(phone, text="Delete")
    tap_on(phone, text="Cancel")
    assert len(rows(phone)) == 2
    tap_on(phone, text="Delete")
    tap_on(phone, text="Delete")  # the dialog's button
    assert [r["item"] for r in rows(phone)] == ["Electricity"]


def test_store_rejects_what_the_app_cannot_hold_and_pm_clear_empties_it():
    phone = SimPhone()
    assert "type is one of" in add(phone, "transfer", "5", "2024-05-01")
    assert "positive number" in add(phone, "expense", "-5", "2024-05-01")
    assert "positive number" in add(phone, "expense", "1.234", "2024-05-01")
    assert "YYYY-MM-DD" in add(phone, "expense", "5", "05/01/2024")
    assert "payee" in phone.shell(f"content insert --uri {URI} --bind type:s:expense --bind amount:s:5 "
                                  "--bind date:s:2024-05-01 --bind payee:s:x")
    assert "needs" in phone.shell(f"content insert --uri {URI} --bind type:s:expense --bind amount:s:5")
    assert "unknown Bluecoins uri" in phone.shell("content query --uri content://com.rammigsoftware.bluecoins/items")
    assert rows(phone) == []
    assert add(phone, "expense", "5", "2024-05-01").strip() == ""
    assert "positive number" in phone.shell(f"content update --uri {URI} --bind amount:s:0")
    assert rows(phone)[0]["amount"] == "5.00"
    phone.shell(f"pm clear {PKG}")
    assert rows(phone) == []


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_every_bluecoins_task(name, seed):
    task = get_task_class(name)(seed=seed)
    device = SimDevice()
    task.initialize(device)
    assert task.is_successful(device, "") == 0.0
    assert run_expert(task, device).success == 1.0


def test_start_state_is_the_book_on_may_16_2024():
    task = get_task_class("bluecoins_6")(seed=0)
    device = SimDevice()
    task.initialize(device)
    assert device.phone.now().date().isoformat() == "2024-05-16"
    assert len(read_transactions(device)) == len(LAB_TRANSACTIONS)


@pytest.mark.parametrize("name,right,wrong", [
    ("bluecoins_1", "11,400.00 CNY", ["9,800.00 CNY", "11,400.00 or 9,800.00", "None"]),
    ("bluecoins_2", "Buying cake", ["Breakfast", "I don't know"]),
    ("bluecoins_3", "You spent 69.51 CNY on May 6, 2024", ["69.5", "33.00 CNY"]),
    ("bluecoins_4", "3 transactions on May 6, 2024", ["two", "4", "May 6, 2024"]),
    ("bluecoins_5", "60.12", ["27.50 CNY", "78.12"]),
])
def test_questions_want_the_books_answer(name, right, wrong):
    task = get_task_class(name)(seed=0)
    device = SimDevice()
    task.initialize(device)
    assert task.is_successful(device, right) == 1.0
    for answer in wrong:
        assert task.is_successful(device, answer) == 0.0, answer
    add(device.phone, "expense", "1", "2024-05-16")  # a question must leave the book alone
    assert task.is_successful(device, right) == 0.0


def _editor_on(phone: SimPhone, item: str) -> None:
    phone.launch(PKG)
    scroll_to_text(phone, item)
    tap_on(phone, text=item)


def test_new_transaction_checks_fail_on_a_wrong_amount_date_type_or_note():
    device = SimDevice()
    task = get_task_class("bluecoins_10")(seed=0)  # May 14 2024, expense 256, "eating"
    task.initialize(device)
    phone = device.phone
    add(phone, "expense", "256", "2024-05-14", "Meal", "eating")
    assert task.is_successful(device) == 1.0
    for wrong in (("expense", "265", "2024-05-14", "eating"), ("income", "256", "2024-05-14", "eating"),
                  ("expense", "256", "2024-05-15", "eating"), ("expense", "256", "2024-05-14", "drinks")):
        task.initialize(device)
        add(phone, wrong[0], wrong[1], wrong[2], "Meal", wrong[3])
        assert task.is_successful(device) == 0.0, wrong
    task.initialize(device)
    add(phone, "expense", "256", "2024-05-14", "Meal", "eating")
    add(phone, "expense", "256", "2024-05-14", "Meal", "eating")  # twice
    assert task.is_successful(device) == 0.0
    task7 = get_task_class("bluecoins_7")(seed=0)
    task7.initialize(device)
    add(phone, "income", "8000", "2024-05-16", "salary")  # "mark it as 'salary'": the item may carry it
    assert task7.is_successful(device) == 1.0
    task9 = get_task_class("bluecoins_9")(seed=0)
    task9.initialize(device)
    add(phone, "income", "3.14", "2024-03-08", "Weixin_red_packet")  # "as the note": the item does not
    assert task9.is_successful(device) == 0.0


def test_edit_checks_want_the_one_transaction_changed_in_place():
    device = SimDevice()
    task = get_task_class("bluecoins_11")(seed=0)  # May 15's expense: 400.00 -> 500
    task.initialize(device)
    phone = device.phone
    add(phone, "expense", "500", "2024-05-15", "Electricity bill")  # a new one beside the old: not an edit
    assert task.is_successful(device) == 0.0
    task.initialize(device)
    phone.shell(f"content update --uri {URI} --bind amount:s:500 --where \"date='2024-05-15'\"")
    assert task.is_successful(device) == 1.0
    phone.shell(f"content update --uri {URI} --bind amount:s:1 --where \"item='Laptop'\"")  # and another changed
    assert task.is_successful(device) == 0.0
    task.initialize(device)
    phone.shell(f"content update --uri {URI} --bind amount:s:500 --bind date:s:2024-05-16 "
                "--where \"date='2024-05-15'\"")
    assert task.is_successful(device) == 0.0  # the date was to stay
    task13 = get_task_class("bluecoins_13")(seed=0)
    task13.initialize(device)
    _editor_on(phone, "Red packet")
    type_in(phone, "notes", "Gift")
    tap_on(phone, text="Save")
    assert task13.is_successful(device) == 0.0  # still an expense
    _editor_on(phone, "Red packet")
    tap_on(phone, text="-")
    tap_on(phone, text="Save")
    assert task13.is_successful(device) == 1.0 and editor_texts_gone(phone)


def editor_texts_gone(phone: SimPhone) -> bool:
    """Back on the list after Save: no editor on screen."""
    return not any(e.text == "CNY" for e in ui_of(phone).elements)
