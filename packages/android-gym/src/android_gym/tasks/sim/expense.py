"""Pro Expense tasks: AndroidWorld's add, delete and de-duplicate expense tasks re-created.

Set-up and checks go through the app's provider only (``content delete|insert|query --uri
content://com.arduia.expense/expenses``; ``amount`` in cents, ``category`` an id, dates epoch ms),
standing in for AndroidWorld's reads of the app's ``accounting.db``. Every task starts from an
expense list holding only its own rows; the rows the task does not target must survive unchanged.
New rows match on name and note after :func:`~android_gym.tasks.device_state.normalize_answer`
(case and punctuation aside), exact amount in cents and category.

Unlike AndroidWorld's delete tasks (whose list holds only the targets), the delete tasks here add
a few other expenses, so deleting everything does not pass.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any, ClassVar

from android_gym.actions import Finished, LongPress, OpenApp, Scroll
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import (
    content_delete,
    content_insert,
    content_query,
    force_stop,
    go_home,
    normalize_answer,
    to_ms,
)
from android_gym.tasks.expert import (
    ExpertStuck,
    find,
    find_all,
    id_is,
    scroll_to,
    tap,
    tap_id,
    tap_text,
    tap_where,
    type_into,
)
from android_gym.tasks.suites import SUITES_AW

EXPENSE_PACKAGE = "com.arduia.expense"
EXPENSE_APP = "Pro Expense"
EXPENSES_URI = "content://com.arduia.expense/expenses"
EXPENSE_FIELDS = ("expense_id", "name", "amount", "category", "note", "created_date")
CATEGORY_IDS: dict[str, int] = {
    "Others": 1, "Income": 2, "Food": 3, "Housing": 4, "Social": 5, "Entertainment": 6, "Transportation": 7,
    "Clothes": 8, "Health Care": 9, "Education": 10, "Donation": 11,
}
"""Category name -> the provider's category id (the simulated app's numbering)."""

EXPENSE_NAMES: dict[str, tuple[str, ...]] = {
    "Others": ("Pet Supplies", "Household Items", "Stationery", "Membership Fees", "Postage", "Phone Repair"),
    "Income": ("Freelance Payment", "Bonus", "Dividends", "Rental Income", "Consulting Fees", "Tax Refund"),
    "Food": ("Groceries", "Coffee", "Bakery Items", "Food Delivery", "Restaurant Meal", "Farmers Market"),
    "Housing": ("Rent Payment", "Utilities", "Home Insurance", "Furniture", "Cleaning Services", "Plumber"),
    "Social": ("Wedding Gift", "Birthday Present", "Night Out", "Party Supplies", "Club Dues", "Team Dinner"),
    "Entertainment": ("Concert Tickets", "Movie Night", "Video Games", "Museum Tickets", "Books", "Theater Show"),
    "Transportation": ("Taxi Fare", "Gas", "Parking Fees", "Car Maintenance", "Train Tickets", "Bike Repair"),
    "Clothes": ("New Jacket", "Shoes", "Jeans", "Sportswear", "Tailoring", "Laundry"),
    "Health Care": ("Doctor Visit", "Medications", "Dental Care", "Eyeglasses", "Gym Membership", "Vitamins"),
    "Education": ("Online Course", "Textbooks", "School Supplies", "Workshop Fee", "Tutoring", "Exam Fee"),
    "Donation": ("Charity", "Food Bank", "Animal Shelter", "Fundraiser", "Library Donation", "Disaster Relief"),
}
NOTES = ("Paid by card", "Monthly expense", "Split with roommate", "Urgent", "Bought online", "Cash payment",
         "Weekend plans", "Work related", "Gift for a friend", "Planned purchase", "Discount applied",
         "Recurring charge")


# --- shell helpers ----------------------------------------------------------------------------------------


def clear_expenses(device: Any) -> None:
    """Delete every expense."""
    content_delete(device, EXPENSES_URI)


def insert_expense(device: Any, row: dict[str, Any]) -> None:
    """Insert one expense dict (name, cents, category name, note, created ISO time)."""
    created = to_ms(dt.datetime.fromisoformat(row["created"]))
    content_insert(device, EXPENSES_URI, [
        ("name", "s", row["name"]), ("amount", "l", row["cents"]), ("category", "i", CATEGORY_IDS[row["category"]]),
        ("note", "s", row["note"]), ("created_date", "l", created), ("modified_date", "l", created),
    ])


def read_expenses(device: Any) -> list[dict[str, Any]]:
    """Every expense row with int amount/category/created_date."""
    rows = content_query(device, EXPENSES_URI, EXPENSE_FIELDS)
    for r in rows:
        for key in ("amount", "category", "created_date"):
            r[key] = int(r[key] or 0)
        r["name"] = r["name"] or ""
        r["note"] = r["note"] or ""
    return rows


def reset_expenses(device: Any, rows: list[dict[str, Any]]) -> None:
    """Start state: Pro Expense stopped, the home screen, exactly ``rows`` in the provider."""
    go_home(device, EXPENSE_PACKAGE)
    clear_expenses(device)
    for row in rows:
        insert_expense(device, row)


def row_key(row: dict[str, Any]) -> tuple[str, int, int, str, int]:
    """Identity of a stored expense: (name, cents, category id, note, created ms)."""
    return (row["name"], row["amount"], row["category"], row["note"], row["created_date"])


def param_key(row: dict[str, Any]) -> tuple[str, int, int, str, int]:
    """Identity of a task's expense parameter in the same shape as :func:`row_key`."""
    return (row["name"], row["cents"], CATEGORY_IDS[row["category"]], row["note"],
            to_ms(dt.datetime.fromisoformat(row["created"])))


def same_entry(stored: dict[str, Any], wanted: dict[str, Any], notes: tuple[str, ...] = ()) -> bool:
    """A stored row entered for ``wanted``: name, amount, category and note (or one of ``notes``) agree."""
    accepted = {normalize_answer(wanted["note"]), *(normalize_answer(n) for n in notes)}
    return (normalize_answer(stored["name"]) == normalize_answer(wanted["name"])
            and stored["amount"] == wanted["cents"] and stored["category"] == CATEGORY_IDS[wanted["category"]]
            and normalize_answer(stored["note"]) in accepted)


def unchanged_plus(device: Any, before: list[dict[str, Any]], added: list[dict[str, Any]],
                   alt_notes: dict[int, tuple[str, ...]] | None = None) -> bool:
    """The stored rows are exactly ``before`` plus one row entered for each of ``added``."""
    rows = read_expenses(device)
    remaining = [row_key(r) for r in rows]
    for key in (param_key(r) for r in before):
        if key not in remaining:
            return False
        remaining.remove(key)
    new_rows = [r for r in rows if row_key(r) in remaining]
    if len(new_rows) != len(added):
        return False
    for i, wanted in enumerate(added):
        match = next((r for r in new_rows if same_entry(r, wanted, (alt_notes or {}).get(i, ()))), None)
        if match is None:
            return False
        new_rows.remove(match)
    return True


# --- parameters ------------------------------------------------------------------------------------------


def random_expense(rng: random.Random, taken: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
    """A realistic expense of early October 2023 (before the frozen "now") whose name is not in ``taken``."""
    while True:
        category = rng.choice(list(CATEGORY_IDS))
        name = rng.choice(EXPENSE_NAMES[category])
        if name not in taken:
            break
    created = dt.datetime(2023, 10, rng.randint(1, 14), rng.randint(7, 22), rng.randint(0, 59))
    return {"name": name, "cents": rng.randint(1000, 50000), "category": category, "note": rng.choice(NOTES),
            "created": created.isoformat(timespec="minutes")}


def random_expenses(rng: random.Random, n: int, taken: set[str] | None = None) -> list[dict[str, Any]]:
    """``n`` expenses with distinct names, none in ``taken``."""
    names = set(taken or ())
    out = []
    for _ in range(n):
        row = random_expense(rng, names)
        names.add(row["name"])
        out.append(row)
    return out


def describe(row: dict[str, Any]) -> str:
    """How a goal states an expense: "name: Coffee, amount: 12.50, category: Food, note: Paid by card"."""
    return f"name: {row['name']}, amount: {row['cents'] / 100:.2f}, category: {row['category']}, note: {row['note']}"


# --- expert building blocks -------------------------------------------------------------------------------


def open_drawer(ui: Any):
    """Open Pro Expense's navigation drawer: the app bar's first button (an icon with no label or description)."""

    def drawer_button(e: Any) -> bool:
        return ((e.class_name or "").endswith("ImageButton") and e.clickable and not (e.text or e.content_desc)
                and not id_is("fb_main_add")(e))

    return (yield from tap_where(ui, drawer_button, scroll=False))


def open_logs(ui: Any):
    """Open Pro Expense and its "Expense Logs" list (the navigation drawer's entry; Home lists only the newest)."""
    ui = yield OpenApp(EXPENSE_APP)
    ui = yield from open_drawer(ui)
    return (yield from tap_text(ui, "Expense Logs", scroll=False))


def visible_rows(ui: Any) -> list[tuple[Any, str, str, str]]:
    """(row element, name, category/date line, amount) for each fully shown expense row."""
    out = []
    for row in find_all(ui, id_is("cl_expense_item")):
        x1, y1, x2, y2 = row.bounds

        def inside(e: Any, rid: str, b: tuple[int, int, int, int] = (x1, y1, x2, y2)) -> bool:
            return e.resource_id.endswith(f":id/{rid}") and b[1] <= e.center[1] < b[3]

        name = find(ui, lambda e: inside(e, "tv_name"))
        sub = find(ui, lambda e: inside(e, "tv_category"))
        amount = find(ui, lambda e: inside(e, "tv_amount"))
        if name is not None and sub is not None and amount is not None:
            out.append((row, name.text, sub.text, amount.text))
    return out


def pick_category(ui: Any, category: str):
    """Tap ``category`` in the entry form's row of category names, scrolling the row sideways to it (five fit)."""

    def chip(e: Any) -> bool:
        return e.text == category and id_is("tv_name")(e)

    rows = find_all(ui, id_is("rv_category"))
    if not rows:
        raise ExpertStuck("the entry form's categories are not on screen")
    ui, element = yield from scroll_to(ui, chip, direction="right", at=rows[0].center)
    return (yield tap(element))


def add_expense_expert(ui: Any, row: dict[str, Any], app_open: bool = False):
    """Fill the entry form (Home's add button) for ``row`` (name, amount, category, note) and SAVE."""
    if not app_open:
        ui = yield OpenApp(EXPENSE_APP)
    ui = yield from tap_id(ui, "fb_main_add", scroll=False)  # the round "+" button, no label or description
    ui = yield from type_into(ui, row["name"], resource_id="edt_name")
    ui = yield from type_into(ui, f"{row['cents'] / 100:.2f}", resource_id="edt_amount")
    ui = yield from pick_category(ui, row["category"])
    ui = yield from type_into(ui, row["note"], resource_id="edt_note")
    return (yield from tap_text(ui, "Save"))


def find_row(ui: Any, name: str, selected: bool | None = None):
    """Scroll the logs to the row named ``name`` (optionally in the given selection state); returns (ui, row)."""

    def match(e: Any) -> bool:
        return e.text == name and e.resource_id.endswith(":id/tv_name")

    ui, title = yield from scroll_to(ui, match)
    for row, row_name, _, _ in visible_rows(ui):
        if row_name == name and (selected is None or row.selected == selected):
            return ui, row
    ui = yield from _nudge(ui)
    for row, row_name, _, _ in visible_rows(ui):
        if row_name == name and (selected is None or row.selected == selected):
            return ui, row
    raise ExpertStuck(f"expense row {name!r} is not fully on screen")


def select_rows(ui: Any, names: list[str]):
    """Select the rows named ``names`` in the logs (long-press the first, tap the rest), scrolling down."""
    remaining = set(names)
    selecting = False
    for _ in range(40):
        if not remaining:
            return ui
        target = next((row for row, name, _, _ in visible_rows(ui) if name in remaining and not row.selected), None)
        if target is None:
            ui = yield from _nudge(ui)
            continue
        remaining.discard(next(name for row, name, _, _ in visible_rows(ui) if row is target))
        ui = yield (tap(target) if selecting else LongPress(*target.center))
        selecting = True
    raise ExpertStuck(f"could not select the expenses {sorted(remaining)}")


def _nudge(ui: Any):
    lists = find_all(ui, lambda e: e.scrollable)
    if not lists:
        raise ExpertStuck("no list to scroll")
    return (yield Scroll("down", *lists[0].center))


# --- tasks -------------------------------------------------------------------------------------------------


class _ExpenseTask(Task):
    app_names = ("pro expense",)
    suites = SUITES_AW

    def start_rows(self) -> list[dict[str, Any]]:
        """Every expense the task starts with."""
        return list(self.params.get("targets_present", [])) + list(self.params.get("noise", []))

    def initialize(self, device: Any) -> None:
        rows = self.start_rows()
        order = list(range(len(rows)))
        random.Random(repr(self.params.get("noise"))).shuffle(order)
        reset_expenses(device, [rows[i] for i in order])

    def teardown(self, device: Any) -> None:
        force_stop(device, EXPENSE_PACKAGE)


class _AddExpenses(_ExpenseTask):
    """Add the described expenses; the existing ones must stay."""

    difficulty = "easy"
    n_rows: ClassVar[int] = 1
    param_name: ClassVar[str] = "expense"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        targets = random_expenses(rng, cls.n_rows)
        noise = random_expenses(rng, 10, {t["name"] for t in targets})
        return {cls.param_name: "; ".join(describe(t) for t in targets), "targets": targets, "noise": noise}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if unchanged_plus(device, self.params["noise"], self.params["targets"]) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        for i, row in enumerate(self.params["targets"]):
            ui = yield from add_expense_expert(ui, row, app_open=i > 0)
        yield Finished()


@register_task
class ExpenseAddSingle(_AddExpenses):
    """Add one expense."""

    name = "ExpenseAddSingle"
    template = "Add the following expenses into the arduia pro expense: {expense}"
    complexity = 2.0


@register_task
class ExpenseAddMultiple(_AddExpenses):
    """Add three expenses."""

    name = "ExpenseAddMultiple"
    template = "Add the following expenses into the arduia pro expense: {expenses}"
    difficulty = "medium"
    complexity = 5.0
    n_rows = 3
    param_name = "expenses"


class _DeleteExpenses(_ExpenseTask):
    """Delete the named expenses; the others must stay."""

    difficulty = "easy"
    complexity = 2.0
    n_rows: ClassVar[int] = 1
    param_name: ClassVar[str] = "expense"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        targets = random_expenses(rng, cls.n_rows)
        noise = random_expenses(rng, rng.randint(4, 7), {t["name"] for t in targets})
        return {cls.param_name: ", ".join(t["name"] for t in targets), "targets_present": targets, "noise": noise}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        remaining = sorted(row_key(r) for r in read_expenses(device))
        return 1.0 if remaining == sorted(param_key(r) for r in self.params["noise"]) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        names = [t["name"] for t in self.params["targets_present"]]
        ui = yield from open_logs(ui)
        if len(names) == 1:
            ui, row = yield from find_row(ui, names[0])
            ui = yield tap(row)
            ui = yield from tap_text(ui, "Delete", scroll=False)
        else:
            ui = yield from select_rows(ui, names)
            ui = yield from tap_text(ui, "Delete", scroll=False)
        yield from tap_id(ui, "android:id/button1", scroll=False)  # the dialog's Delete
        yield Finished()


@register_task
class ExpenseDeleteSingle(_DeleteExpenses):
    """Delete one named expense."""

    name = "ExpenseDeleteSingle"
    template = "Delete the following expenses from arduia pro expense: {expense}."


@register_task
class ExpenseDeleteMultiple(_DeleteExpenses):
    """Delete three named expenses."""

    name = "ExpenseDeleteMultiple"
    template = "Delete the following expenses from arduia pro expense: {expenses}."
    n_rows = 3
    param_name = "expenses"


@register_task
class ExpenseDeleteDuplicates(_ExpenseTask):
    """One expense is stored twice; delete one copy and nothing else."""

    name = "ExpenseDeleteDuplicates"
    template = ("Delete all but one of any expenses in arduia pro expense that are exact duplicates, ensuring at "
                "least one instance of each unique expense remains.")
    difficulty = "medium"
    complexity = 2.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        rows = random_expenses(rng, 6)
        target = rows.pop()
        return {"targets_present": [target, dict(target)], "noise": rows}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        remaining = sorted(row_key(r) for r in read_expenses(device))
        expected = sorted(param_key(r) for r in self.params["noise"] + self.params["targets_present"][:1])
        return 1.0 if remaining == expected else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_logs(ui)
        for _ in range(10):
            seen: set[tuple[str, str, str]] = set()
            for row, name, sub, amount in visible_rows(ui):
                if (name, sub, amount) in seen:  # copies share a date, so they sit next to each other
                    ui = yield tap(row)
                    ui = yield from tap_text(ui, "Delete", scroll=False)
                    yield from tap_id(ui, "android:id/button1", scroll=False)
                    yield Finished()
                    return
                seen.add((name, sub, amount))
            ui = yield from _nudge(ui)
        raise ExpertStuck("no duplicate expenses found")


__all__ = [
    "CATEGORY_IDS",
    "EXPENSES_URI",
    "ExpenseAddMultiple",
    "ExpenseAddSingle",
    "ExpenseDeleteDuplicates",
    "ExpenseDeleteMultiple",
    "ExpenseDeleteSingle",
    "add_expense_expert",
    "read_expenses",
    "reset_expenses",
    "unchanged_plus",
]
