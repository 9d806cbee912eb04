"""AndroidLab's 15 Bluecoins tasks (``bluecoins_1`` to ``bluecoins_15``) re-created on the simulated Bluecoins.

The task texts are AndroidLab's, verbatim (:mod:`android_gym.sim.apps.bluecoins`). Every task starts from the
home screen, Bluecoins stopped, the phone's clock at Thursday, May 16 2024, 10:00 (the data is of May 2024 and
bluecoins_5 asks about "this week"), and the same book, :data:`LAB_TRANSACTIONS`, whose days make the query
answers AndroidLab's judges expect true: 11,400.00 CNY spent on May 10; 388.88 CNY on May 3 for a cake ("Buying
cake"); three transactions on May 6, 69.51 CNY in all; 60.12 CNY of taxis this week (May 14 and today; a taxi on
May 6 and one on May 9 are earlier weeks, whether a week starts on Sunday or Monday). The edit tasks find what
their judges look for when the editor opens: the one expense of May 15 at 400.00 (bluecoins_11), the income of
May 12 at 18000.00 (12), the one transaction of May 13, an expense (13), the one transaction of May 2, an income
(14), the expense of May 12 at 794.20 (15).

Checks read the app's transactions (``content query --uri content://com.rammigsoftware.bluecoins/transactions``):
the others must stay as they were and exactly the asked-for one is added or changed. Query tasks compare the
answer with the number (or the words) the book gives. A "note" is the editor's Notes field; bluecoins_7 and 10
("mark it as 'salary'", "marked as 'eating'") take the word in the notes or as the item.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from typing import Any, ClassVar

from android_gym.actions import Finished, LongPress, OpenApp, Type
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import (
    content_delete,
    content_insert,
    content_query,
    force_stop,
    go_home,
    normalize_answer,
)
from android_gym.tasks.expert import (
    ExpertStuck,
    find_all,
    id_is,
    scroll_to,
    tap,
    tap_id,
    tap_text,
    text_is,
    type_into,
    within,
)
from android_gym.tasks.sim.calendar import pick_date
from android_gym.tasks.suites import SUITES_LAB

BLUECOINS_PACKAGE = "com.rammigsoftware.bluecoins"
BLUECOINS_APP = "Bluecoins"
BLUECOINS_URI = "content://com.rammigsoftware.bluecoins/transactions"
FIELDS = ("_id", "type", "amount", "date", "item", "category", "account", "notes")
KEY_FIELDS = FIELDS[1:]
TODAY = dt.date(2024, 5, 16)
PHONE_DATE = "051610002024.00"
"""``date`` argument setting the phone's clock to May 16 2024, 10:00 (a Thursday)."""


def _t(kind: str, amount: str, day: str, item: str, category: str, notes: str = "") -> dict[str, str]:
    return {"type": kind, "amount": amount, "date": day, "item": item, "category": category, "account": "Cash",
            "notes": notes}


LAB_TRANSACTIONS: tuple[dict[str, str], ...] = (
    _t("income", "6500.00", "2024-04-30", "Salary", "Salary", "April"),
    _t("expense", "99.00", "2024-05-01", "Mobile phone bill", "Bills & Utilities"),
    _t("income", "1200.00", "2024-05-02", "Freelance work", "Other income", "Logo design"),
    _t("expense", "15.00", "2024-05-03", "Breakfast", "Food & Drinks"),
    _t("expense", "388.88", "2024-05-03", "Cake", "Food & Drinks", "Buying cake"),
    _t("expense", "12.80", "2024-05-06", "Breakfast", "Food & Drinks"),
    _t("expense", "23.71", "2024-05-06", "Taxi", "Transportation", "To the office"),
    _t("expense", "33.00", "2024-05-06", "Lunch", "Food & Drinks"),
    _t("expense", "18.00", "2024-05-09", "Taxi", "Transportation", "Airport"),
    _t("expense", "9800.00", "2024-05-10", "Laptop", "Shopping"),
    _t("expense", "1600.00", "2024-05-10", "Rent", "Housing", "May rent"),
    _t("income", "18000.00", "2024-05-12", "Salary", "Salary"),
    _t("expense", "794.20", "2024-05-12", "Supermarket", "Food & Drinks", "Weekly groceries"),
    _t("expense", "200.00", "2024-05-13", "Red packet", "Others"),
    _t("expense", "27.50", "2024-05-14", "Taxi", "Transportation", "Home"),
    _t("expense", "400.00", "2024-05-15", "Electricity bill", "Bills & Utilities"),
    _t("expense", "32.62", "2024-05-16", "Taxi", "Transportation", "Client visit"),
)
"""The book every AndroidLab Bluecoins task starts with."""


# --- device helpers ---------------------------------------------------------------------------------------


def read_transactions(device: Any) -> list[dict[str, str]]:
    """Every Bluecoins transaction as a dict of strings ("" for missing text)."""
    rows = content_query(device, BLUECOINS_URI, FIELDS)
    return [{k: (r[k] or "") for k in FIELDS} for r in rows]


def reset_bluecoins(device: Any, transactions: tuple[dict[str, str], ...] = LAB_TRANSACTIONS) -> None:
    """Start state: Bluecoins stopped, the home screen, the clock at :data:`TODAY`, exactly ``transactions``."""
    go_home(device, BLUECOINS_PACKAGE)
    device.shell(f"date {PHONE_DATE}")
    content_delete(device, BLUECOINS_URI)
    for t in transactions:
        content_insert(device, BLUECOINS_URI, [(k, "s", t[k]) for k in KEY_FIELDS])


def _key(t: dict[str, str]) -> tuple[str, ...]:
    return tuple(t[k] for k in KEY_FIELDS)


_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_DATE = re.compile(r"(?i)\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}(?:st|nd|rd|th)?"
                   r"(?:,?\s*\d{4})?|\b\d{4}-\d{2}-\d{2}\b|\b(?:19|20)\d{2}\b")
"""Dates an answer may repeat ("May 6, 2024", "2024-05-06", "2024"), left out when counting."""


def numbers_in(answer: str | None) -> list[float]:
    """The numbers an answer states ("11,400.00 CNY" gives 11400.0)."""
    return [float(m.replace(",", "")) for m in _NUMBER.findall(answer or "")]


def _amount(value: str) -> float:
    try:
        return float(value)
    except ValueError:
        return -1.0


# --- tasks -------------------------------------------------------------------------------------------------


class _LabBluecoins(Task):
    """An AndroidLab Bluecoins task: no parameters, Bluecoins stopped, :data:`LAB_TRANSACTIONS`, May 16 2024."""

    app_names = ("bluecoins",)
    suites = SUITES_LAB
    difficulty = "medium"
    complexity = 2.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {}

    def initialize(self, device: Any) -> None:
        reset_bluecoins(device)

    def teardown(self, device: Any) -> None:
        force_stop(device, BLUECOINS_PACKAGE)

    def book_unchanged_but(self, device: Any, changed: dict[str, str] | None) -> list[dict[str, str]] | None:
        """The rows that are not in the starting book, when every starting row but ``changed`` is still there."""
        rows = read_transactions(device)
        remaining = [_key(r) for r in rows]
        for t in LAB_TRANSACTIONS:
            if t is changed:
                continue
            if _key(t) not in remaining:
                return None
            remaining.remove(_key(t))
        return [r for r in rows if _key(r) in remaining]


# --- questions ---------------------------------------------------------------------------------------------


def _show_day(ui: Any, day: dt.date):
    """Open Bluecoins and scroll its list until the header of ``day`` shows; returns the ui."""
    ui = yield OpenApp(BLUECOINS_APP)
    ui, _ = yield from scroll_to(ui, text_is(f"{day.strftime('%A')}, {day.strftime('%B')} {day.day}, {day.year}"))
    return ui


class _Question(_LabBluecoins):
    """A question about the book; the expert shows the day it is about and answers ``ANSWER``."""

    answer_task = True
    complexity = 1.5
    DAY: ClassVar[dt.date] = TODAY
    ANSWER: ClassVar[str] = ""

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        if self.book_unchanged_but(device, None) != []:
            return 0.0
        return 1.0 if self.answered(answer) else 0.0

    def answered(self, answer: str | None) -> bool:
        """Whether ``answer`` is right."""
        raise NotImplementedError

    def expert(self, ui: Any) -> ExpertGenerator:
        yield from _show_day(ui, self.DAY)
        yield Finished(self.ANSWER)


class _Amount(_Question):
    """The answer states ``TOTAL`` and no other amount (a date or a count may come with it)."""

    TOTAL: ClassVar[float] = 0.0

    def answered(self, answer: str | None) -> bool:
        numbers = numbers_in(_DATE.sub(" ", answer or ""))
        others = [n for n in numbers if abs(n - self.TOTAL) >= 0.005]
        return len(others) < len(numbers) and not [n for n in others if n != int(n) or n >= 10]


@register_task
class BluecoinsLab1(_Amount):
    """bluecoins_1: the expenses of May 10 2024 add up to 11,400.00 CNY."""

    name = "bluecoins_1"
    template = "Could you tell me how much I spent on May 10, 2024?"
    DAY = dt.date(2024, 5, 10)
    TOTAL = 11400.00
    ANSWER = "11,400.00 CNY"


@register_task
class BluecoinsLab2(_Question):
    """bluecoins_2: the 388.88 CNY of May 3 2024 was for buying a cake."""

    name = "bluecoins_2"
    template = "What was the reason behind the 388.88 CNY I spent on May 3, 2024?"
    DAY = dt.date(2024, 5, 3)
    ANSWER = "Buying cake"

    def answered(self, answer: str | None) -> bool:
        return "cake" in normalize_answer(answer or "").split()


@register_task
class BluecoinsLab3(_Amount):
    """bluecoins_3: the three expenses of May 6 2024 add up to 69.51 CNY."""

    name = "bluecoins_3"
    template = "How much did I shell out in total on May 6, 2024?"
    DAY = dt.date(2024, 5, 6)
    TOTAL = 69.51
    ANSWER = "69.51 CNY"


@register_task
class BluecoinsLab4(_Question):
    """bluecoins_4: May 6 2024 holds three transactions."""

    name = "bluecoins_4"
    template = "How many transactions did I make all together on May 6, 2024?"
    DAY = dt.date(2024, 5, 6)
    ANSWER = "Three transactions"

    def answered(self, answer: str | None) -> bool:
        words = normalize_answer(answer or "").split()
        counts = numbers_in(_DATE.sub(" ", answer or ""))
        return ("three" in words or counts == [3.0]) and not {"one", "two", "four", "five"} & set(words)


@register_task
class BluecoinsLab5(_Amount):
    """bluecoins_5: this week's taxis (May 14 and today, May 16 2024) cost 60.12 CNY."""

    name = "bluecoins_5"
    template = "What's the total amount I spent on taxis this week?"
    DAY = dt.date(2024, 5, 14)
    TOTAL = 60.12
    ANSWER = "60.12 CNY"


# --- new transactions -------------------------------------------------------------------------------------


class _NewTransaction(_LabBluecoins):
    """Add one transaction (:meth:`wanted` says what it must be); the book must stay as it was."""

    KIND: ClassVar[str] = "expense"
    AMOUNT: ClassVar[str] = ""
    DAY: ClassVar[dt.date | None] = None
    NOTE: ClassVar[str] = ""
    NOTE_AS_ITEM: ClassVar[bool] = False
    """Whether the note may be given as the item instead ("mark it as 'salary'")."""

    def wanted(self, row: dict[str, str]) -> bool:
        """Whether the added row is the asked-for one."""
        if row["type"] != self.KIND or abs(_amount(row["amount"]) - float(self.AMOUNT)) > 0.005:
            return False
        if row["date"] != (self.DAY or TODAY).isoformat():
            return False
        if self.NOTE:
            given = {normalize_answer(row["notes"])} | ({normalize_answer(row["item"])} if self.NOTE_AS_ITEM else set())
            return normalize_answer(self.NOTE) in given
        return True

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        added = self.book_unchanged_but(device, None)
        return 1.0 if added is not None and len(added) == 1 and self.wanted(added[0]) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(BLUECOINS_APP)
        ui = yield from tap_text(ui, "Add transaction", scroll=False)
        if self.KIND == "income":
            ui = yield from choose_type(ui, "Income")
        ui = yield from type_into(ui, self.AMOUNT, resource_id="amount")
        if self.NOTE:
            ui = yield from type_into(ui, self.NOTE, resource_id="notes")
        if self.DAY is not None:
            ui = yield from pick_date(ui, "date_row", self.DAY)
        yield from save(ui)
        yield Finished()


def choose_type(ui: Any, label: str):
    """Pick Expense or Income in the editor's type drop-down; returns the ui."""
    ui = yield from tap_id(ui, "transaction_type", scroll=False)
    return (yield from tap_text(ui, label, scroll=False))


def retype(ui: Any, resource_id: str, text: str):
    """Replace a field's text: long-press it (selecting all of it) and type ``text``; returns the ui."""
    ui, field = yield from scroll_to(ui, id_is(resource_id))
    if field.text and field.text != field.hint:
        ui = yield LongPress(*field.center)
        return (yield Type(text))
    return (yield from type_into(ui, text, resource_id=resource_id))


def save(ui: Any):
    """Tap the editor's Save; returns the ui."""
    return (yield from tap_text(ui, "Save", scroll=False))


@register_task
class BluecoinsLab6(_NewTransaction):
    """bluecoins_6: an expense of 512 CNY (today)."""

    name = "bluecoins_6"
    template = "Log an expenditure of 512 CNY in the books."
    AMOUNT = "512"


@register_task
class BluecoinsLab7(_NewTransaction):
    """bluecoins_7: an income of 8000 CNY (today) marked "salary"."""

    name = "bluecoins_7"
    template = "Record an income of 8000 CNY in the books, and mark it as 'salary'."
    KIND = "income"
    AMOUNT = "8000"
    NOTE = "salary"
    NOTE_AS_ITEM = True


@register_task
class BluecoinsLab8(_NewTransaction):
    """bluecoins_8: an expense of 768 CNY on May 11 2024."""

    name = "bluecoins_8"
    template = "Note down an expense of 768 CNY for May 11, 2024."
    AMOUNT = "768"
    DAY = dt.date(2024, 5, 11)


@register_task
class BluecoinsLab9(_NewTransaction):
    """bluecoins_9: an income of 3.14 CNY on March 8 2024 with the note "Weixin red packet"."""

    name = "bluecoins_9"
    template = "For March 8, 2024, jot down an income of 3.14 CNY with 'Weixin red packet' as the note."
    complexity = 2.5
    KIND = "income"
    AMOUNT = "3.14"
    DAY = dt.date(2024, 3, 8)
    NOTE = "Weixin red packet"


@register_task
class BluecoinsLab10(_NewTransaction):
    """bluecoins_10: an expense of 256 CNY on May 14 2024 marked "eating"."""

    name = "bluecoins_10"
    template = "For May 14, 2024, record an expenditure of 256 CNY, marked as 'eating'."
    complexity = 2.5
    AMOUNT = "256"
    DAY = dt.date(2024, 5, 14)
    NOTE = "eating"
    NOTE_AS_ITEM = True


# --- edits ----------------------------------------------------------------------------------------------------


def _find(kind: str, day: str, amount: str | None = None) -> dict[str, str]:
    found = [t for t in LAB_TRANSACTIONS if t["type"] == kind and t["date"] == day
             and (amount is None or t["amount"] == amount)]
    if len(found) != 1:
        raise ValueError(f"LAB_TRANSACTIONS holds {len(found)} {kind}s on {day}")
    return found[0]


class _Edit(_LabBluecoins):
    """Change the transaction ``TARGET`` by ``CHANGES`` (its other fields but the category stay as they were); every
    other transaction must stay as it was."""

    TARGET: ClassVar[dict[str, str]] = {}
    CHANGES: ClassVar[dict[str, str]] = {}
    NEW_DAY: ClassVar[dt.date | None] = None
    NEW_KIND: ClassVar[str] = ""

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        changed = self.book_unchanged_but(device, self.TARGET)
        if changed is None or len(changed) != 1:
            return 0.0
        row, wanted = changed[0], {**self.TARGET, **self.CHANGES}
        for key in KEY_FIELDS:
            if key == "category":
                continue  # a new type resets it to the type's first category
            if key == "amount":
                if abs(_amount(row[key]) - float(wanted[key])) > 0.005:
                    return 0.0
            elif normalize_answer(row[key]) != normalize_answer(wanted[key]):
                return 0.0
        return 1.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(BLUECOINS_APP)
        ui = yield from open_transaction(ui, self.TARGET)
        if self.NEW_KIND:
            ui = yield from choose_type(ui, self.NEW_KIND)
        if "amount" in self.CHANGES:
            ui = yield from retype(ui, "amount", self.CHANGES["amount"])
        if "notes" in self.CHANGES:
            ui = yield from retype(ui, "notes", self.CHANGES["notes"])
        if self.NEW_DAY is not None:
            ui = yield from pick_date(ui, "date_row", self.NEW_DAY)
        yield from save(ui)
        yield Finished()


def open_transaction(ui: Any, target: dict[str, str]):
    """On the list, scroll to ``target``'s day, then to its row (item and signed amount), and tap it; returns the ui."""
    sign = "-" if target["type"] == "expense" else "+"
    shown = f"{sign}{float(target['amount']):,.2f} CNY"
    day = dt.date.fromisoformat(target["date"])
    ui, _ = yield from scroll_to(ui, text_is(f"{day.strftime('%A')}, {day.strftime('%B')} {day.day}, {day.year}"))
    ui, _ = yield from scroll_to(ui, text_is(shown))
    for row in find_all(ui, id_is("transaction_row")):
        inside = [e for e in ui.elements if within(e.bounds, row.bounds)]
        if any(e.text == shown for e in inside) and any(e.text == target["item"] for e in inside):
            return (yield tap(row))
    raise ExpertStuck(f"no row for {target['item']} {shown} on screen")


@register_task
class BluecoinsLab11(_Edit):
    """bluecoins_11: the expense of May 15 2024 (400.00) becomes 500 CNY."""

    name = "bluecoins_11"
    template = "Adjust the expenditure on May 15, 2024, to 500 CNY."
    TARGET = _find("expense", "2024-05-15")
    CHANGES = {"amount": "500"}


@register_task
class BluecoinsLab12(_Edit):
    """bluecoins_12: the income of May 12 2024 (18000.00) moves to May 10 2024 at 18,250 CNY."""

    name = "bluecoins_12"
    template = ("Shift the income entry from May 12th, 2024, to May 10th, 2024, and update the amount to 18,250 "
                "CNY.")
    complexity = 2.5
    TARGET = _find("income", "2024-05-12")
    CHANGES = {"amount": "18250", "date": "2024-05-10"}
    NEW_DAY = dt.date(2024, 5, 10)


@register_task
class BluecoinsLab13(_Edit):
    """bluecoins_13: the one transaction of May 13 2024, an expense, becomes an income noted "Gift"."""

    name = "bluecoins_13"
    template = "Switch the May 13, 2024, transaction from 'expense' to 'income' and add 'Gift' as the note."
    complexity = 2.5
    TARGET = _find("expense", "2024-05-13")
    CHANGES = {"type": "income", "notes": "Gift"}
    NEW_KIND = "Income"


@register_task
class BluecoinsLab14(_Edit):
    """bluecoins_14: the income of May 2 2024 becomes an expense of 520 CNY noted "Wrong Operation"."""

    name = "bluecoins_14"
    template = ("Change the type of the transaction on May 2, 2024, from 'income' to 'expense', adjust the amount "
                "to 520 CNY, and change the note to 'Wrong Operation'.")
    complexity = 3.0
    TARGET = _find("income", "2024-05-02")
    CHANGES = {"type": "expense", "amount": "520", "notes": "Wrong Operation"}
    NEW_KIND = "Expense"


@register_task
class BluecoinsLab15(_Edit):
    """bluecoins_15: the expense of May 12 2024 (794.20) moves to May 13 2024 at 936.02 noted "Grocery Shopping"."""

    name = "bluecoins_15"
    template = ("Move the expense entry from May 12, 2024, to May 13, 2024, adjust the amount to 936.02 CNY, and "
                "update the note to 'Grocery Shopping'.")
    complexity = 3.0
    TARGET = _find("expense", "2024-05-12")
    CHANGES = {"date": "2024-05-13", "amount": "936.02", "notes": "Grocery Shopping"}
    NEW_DAY = dt.date(2024, 5, 13)
