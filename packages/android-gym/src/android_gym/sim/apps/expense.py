"""Pro Expense (com.arduia.expense): expenses with name, amount, category, note and date.

Pages: ``main`` (home as the emulator lists it: this week's INCOME and OUTCOME totals, "Expenses in
this Week", the newest expenses under "Recent", the drawer button and a "+" button, neither labelled),
``logs`` (every expense, newest first, under date headers, reached from the navigation drawer's
"Expense Logs"; long-press a row to start selecting, tap rows to add them, Delete in the app bar asks
for confirmation), ``detail`` (one expense with Edit and Delete), ``entry`` (the form: Name, Amount on
Gboard's number pad, a sideways-scrolling row of category names, Note; SAVE) and ``statistics``
(totals per category).

Provider (authority ``com.arduia.expense``; the real app keeps a Room database ``accounting.db``,
which the simulated app exposes as a content provider instead):
``content://com.arduia.expense/expenses`` has one row per expense:
``expense_id, name, amount, category, note, created_date, modified_date`` where ``amount`` is in
cents (integer), ``category`` is an id of :data:`CATEGORIES` (1 Others, 2 Income, 3 Food,
4 Housing, 5 Social, 6 Entertainment, 7 Transportation, 8 Clothes, 9 Health Care, 10 Education,
11 Donation) and the dates are epoch milliseconds (the phone's wall clock read as UTC).
Insert needs ``name`` and ``amount``; ``category`` defaults to 1, the dates to the phone's time.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from android_gym.sim.app import App, Row, RowMatch, register_app
from android_gym.sim.apps.columns import from_ms, number_value, to_ms
from android_gym.sim.databases import build_database, read_table
from android_gym.sim.view import (
    HORIZONTAL,
    Button,
    Column,
    Dialog,
    EditText,
    Fab,
    ImageButton,
    ListItem,
    ScrollList,
    Text,
    Toolbar,
    View,
)
from android_gym.sim.widgets import MultiSelect

EXPENSE_PKG = "com.arduia.expense"
EXPENSES_URI = "content://com.arduia.expense/expenses"

CATEGORIES: dict[int, str] = {
    1: "Others", 2: "Income", 3: "Food", 4: "Housing", 5: "Social", 6: "Entertainment", 7: "Transportation",
    8: "Clothes", 9: "Health Care", 10: "Education", 11: "Donation",
}
"""Category id (the provider's ``category`` column) -> the name the app shows."""

EXPENSE_COLUMNS = ("expense_id", "name", "amount", "category", "note", "created_date", "modified_date")

# A factory-fresh phone's expenses: (day of October 2023, "HH:MM", name, cents, category id, note).
DEFAULT_EXPENSES: tuple[tuple[int, str, str, int, int, str], ...] = (
    (1, "09:12", "Rent Payment", 145000, 4, "October rent"),
    (2, "18:40", "Groceries", 8645, 3, "Weekly shopping"),
    (3, "08:05", "Public Transit Pass", 9000, 7, "Monthly pass"),
    (4, "20:15", "Streaming Services", 1599, 6, "Family plan"),
    (5, "13:30", "Coffee", 475, 3, "Flat white"),
    (6, "19:00", "Dinner Party", 6420, 5, "Potluck supplies"),
    (7, "11:20", "Shoes", 8999, 8, "Running shoes"),
    (8, "10:00", "Salary", 420000, 2, "September salary"),
    (9, "17:45", "Gas", 5230, 7, "Full tank"),
    (10, "12:10", "Textbooks", 7450, 10, "Statistics course"),
    (11, "16:35", "Medications", 2315, 9, "Allergy tablets"),
    (12, "21:05", "Charity", 2500, 11, "Food bank"),
    (13, "09:50", "Stationery", 1240, 1, "Notebooks and pens"),
    (14, "14:25", "Restaurant Meal", 3880, 3, "Lunch with Sam"),
)


_CHIP_ORDER: tuple[tuple[int, str], ...] = ((3, "Food"), (2, "Income"), (4, "Housing"), (5, "Social"),
                                           (6, "Entertainment"), (7, "Transportation"), (8, "Clothes"),
                                           (9, "Health Care"), (10, "Education"), (11, "Donation"), (1, "Others"))
"""The entry form's row of categories, in the emulator's order (the first five fit the screen)."""


def _plain_amount(cents: int) -> str:
    """An amount as Pro Expense's home screen shows it beside "USD": "285.07", "442.5", "0"."""
    return f"{cents / 100:.2f}".rstrip("0").rstrip(".")


def format_amount(cents: int) -> str:
    """"$1,234.50" for 123450 cents."""
    return f"${cents / 100:,.2f}"


def parse_amount(text: str) -> int | None:
    """Cents for a typed amount ("12", "12.5", "$1,234.56"); None when it is not a positive amount."""
    cleaned = text.strip().replace("$", "").replace(",", "")
    try:
        value = float(cleaned)
    except ValueError:
        return None
    if not value > 0 or value > 1e9:
        return None
    return int(round(value * 100))


def _category_id(value: Any) -> int:
    if isinstance(value, str) and not value.strip().lstrip("-").isdigit():
        for cid, name in CATEGORIES.items():
            if name.lower() == value.strip().lower():
                return cid
        raise ValueError(f"unknown expense category {value!r}; known: {list(CATEGORIES.values())}")
    cid = number_value(value, "category", "expense")
    if cid not in CATEGORIES:
        raise ValueError(f"unknown expense category id {cid}; known ids: {sorted(CATEGORIES)}")
    return cid


EXPENSE_DB = "/data/data/com.arduia.expense/databases/accounting.db"
EXPENSE_SCHEMA = (
    "CREATE TABLE android_metadata (locale TEXT)",
    "CREATE TABLE IF NOT EXISTS `expense` (`expense_id` INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, `name` TEXT, "
    "`amount` INTEGER NOT NULL, `category` INTEGER NOT NULL, `note` TEXT, `created_date` INTEGER NOT NULL, "
    "`modified_date` INTEGER NOT NULL)",
)
"""Pro Expense's Room table (what AndroidWorld's expense tasks read and write)."""


@register_app
class ProExpenseApp(MultiSelect, App):
    """Pro Expense over a list of plain expense dicts (see the module docstring for the provider)."""

    package = EXPENSE_PKG
    label = "Pro Expense"
    activity = ".ui.MainActivity"
    main_page = "main"
    authorities = ("com.arduia.expense",)
    icon_color = "#00897b"

    databases = (EXPENSE_DB,)

    def clear_data(self) -> None:
        """``pm clear``: no expenses."""
        self.expenses = []
        self.next_id = 1

    def dump_database(self, path: str) -> bytes:
        """accounting.db with Pro Expense's ``expense`` table (amounts in cents, times in epoch ms)."""
        return build_database(EXPENSE_SCHEMA, {"expense": [dict(e) for e in self.expenses]})

    def load_database(self, path: str, data: bytes) -> None:
        """Replace the expenses with the rows of a written accounting.db."""
        rows = read_table(data, "expense")
        self.expenses = [{"expense_id": int(r["expense_id"]), "name": str(r["name"] or ""),
                          "amount": int(r["amount"] or 0), "category": int(r["category"] or 0),
                          "note": str(r["note"] or ""), "created_date": int(r["created_date"] or 0),
                          "modified_date": int(r["modified_date"] or 0)} for r in rows]
        self.next_id = max((e["expense_id"] for e in self.expenses), default=0) + 1
        self.selection = [i for i in self.selection if self._expense(i) is not None]

    def setup(self) -> None:
        self.expenses: list[dict[str, Any]] = []
        self.next_id = 1
        for day, clock, name, cents, category, note in DEFAULT_EXPENSES:
            hh, mm = (int(x) for x in clock.split(":"))
            self._add(name, cents, category, note, to_ms(dt.datetime(2023, 10, day, hh, mm)))
        self._reset_ui()

    def _reset_ui(self) -> None:
        self.selection: list[int] = []
        self.form: dict[str, Any] = {}

    def on_open(self) -> None:
        self._reset_ui()

    # --- data --------------------------------------------------------------------------------------
    def _add(self, name: str, cents: int, category: int, note: str, created: int) -> int:
        expense_id = self.next_id
        self.next_id += 1
        self.expenses.append({"expense_id": expense_id, "name": name, "amount": int(cents), "category": category,
                              "note": note, "created_date": int(created), "modified_date": int(created)})
        return expense_id

    def _expense(self, expense_id: int | None) -> dict[str, Any] | None:
        return next((e for e in self.expenses if e["expense_id"] == expense_id), None)

    def newest_first(self) -> list[dict[str, Any]]:
        """Expenses ordered as the app lists them: newest first, then by id (newest added first)."""
        return sorted(self.expenses, key=lambda e: (-e["created_date"], -e["expense_id"]))

    # --- rows --------------------------------------------------------------------------------------
    def _row(self, e: dict[str, Any], selectable: bool) -> View:
        eid = e["expense_id"]
        when = from_ms(e["created_date"])
        subtitle = f"{CATEGORIES.get(e['category'], 'Others')} \u00b7 {when.strftime('%b')} {when.day}"
        selected = eid in self.selection
        if self.selection and selectable:
            click = lambda i=eid: self._toggle(i)  # noqa: E731
        else:
            click = lambda i=eid: self.push("detail", expense_id=i)  # noqa: E731
        row = ListItem(e["name"], subtitle, click, on_long_click=(lambda i=eid: self._toggle(i)) if selectable else None,
                       resource_id="cl_expense_item", title_id="tv_name", subtitle_id="tv_category",
                       icon=CATEGORIES.get(e["category"], "O")[:1],
                       trailing=Text(format_amount(e["amount"]), resource_id="tv_amount", size=16, bold=True,
                                     max_lines=1, padding=(4, 16), width=130, align="end"))
        if self.selection and selectable:
            row.children.insert(0, self.selection_check(selected, "cb_select"))
        row.selected = selected
        return row

    # --- pages -------------------------------------------------------------------------------------
    def build_main(self) -> View:
        """Home as the emulator's Pro Expense lists it (ExpenseAddMultiple runs): the "Add expense" button (no
        description), the drawer button, "Home", then the list: "Totals" for this week (Sunday to Sunday) with
        INCOME and OUTCOME, each an amount beside "USD", "Expenses in this Week" (its chart is not listed), "Recent"
        and the newest expenses (name, "Today 4:00 PM" / "Yesterday ..." / "2023 Oct 10", amount, "USD")."""
        now = self.phone.now()
        start = (now - dt.timedelta(days=(now.weekday() + 1) % 7)).date()
        end = start + dt.timedelta(days=7)
        span = f"{start.strftime('%b').upper()} {start.day} - " + (
            str(end.day) if end.month == start.month else f"{end.strftime('%b').upper()} {end.day}")
        week = [e for e in self.expenses if start <= from_ms(e["created_date"]).date() <= end]
        income = sum(e["amount"] for e in week if e["category"] == 2)
        outcome = sum(e["amount"] for e in week if e["category"] != 2)

        def flat(*children: View, **kw: Any) -> View:  # a layout the dump leaves out: its children a level up
            return View(cls="android.widget.LinearLayout", layout_only=True, children=list(children), **kw)

        def amount(value: int, rid: str, symbol_id: str, size: float) -> View:
            return flat(Text(_plain_amount(value), resource_id=rid, size=size, bold=True, padding=(0, 0), width=None),
                        Text("USD", resource_id=symbol_id, size=14, padding=(4, 6), width=40),
                        orientation=HORIZONTAL, height=size * 1.3)

        totals = flat(
            Text("Totals", resource_id="tv_expense_in_out_title", size=18, bold=True, padding=(24, 0), height=24),
            Text(span, resource_id="tv_date_range", size=14, padding=(24, 2), height=26),
            flat(Text("INCOME", resource_id="tv_income", size=12, padding=(40, 0), height=14),
                 flat(amount(income, "tv_income_value", "tv_income_symobol", 26), padding=(40, 0)),
                 Text("OUTCOME", resource_id="tv_outcome", size=12, padding=(40, 0), height=14),
                 flat(amount(outcome, "tv_outcome_value", "tv_outcome_symbol", 26), padding=(40, 0)),
                 padding=(0, 16)),
            height=236)
        chart = flat(Text("Expenses in this Week", resource_id="tv_title", size=18, bold=True, padding=(24, 0),
                          height=24),
                     Text(span, resource_id="tv_date_range", size=14, padding=(24, 2), height=26),
                     View(cls="android.view.View", height=150, layout_only=True), height=279)
        header = Text("Recent", resource_id="tv_recent_lists", size=18, bold=True, padding=(24, 0), height=36)
        rows = [self._recent_row(e, now) for e in self.newest_first()[:10]]
        items = [totals, chart, header, *rows]
        drawer = View(cls="android.widget.ImageButton", clickable=True, focusable=True, width=56, height=56,
                      icon="=", on_click=lambda: self.show_dialog("drawer"))
        bar = View(cls="android.view.ViewGroup", orientation=HORIZONTAL, height=56, background="#ffffff",
                   children=[drawer, Text("Home", size=20, padding=(16, 14), weight=1)])
        fab = Fab("", self.new_expense, resource_id="fb_main_add")  # no description on the emulator
        page = View(cls="android.widget.FrameLayout", weight=1, children=[
            bar, View(cls="android.widget.FrameLayout", weight=1, children=[
                ScrollList(items, "main:home", resource_id="rv_home", cls="androidx.recyclerview.widget.RecyclerView")])])
        # the button is a child of the page's root, the bar a level deeper and the list one more: listed in that
        # order, as there
        return Column(View(cls="android.widget.FrameLayout", weight=1, children=[page]), fab,
                      cls="androidx.drawerlayout.widget.DrawerLayout", resource_id="dl_main", weight=1,
                      layout_only=True)

    def _recent_row(self, e: dict[str, Any], now: dt.datetime) -> View:
        when = from_ms(e["created_date"])
        clock = f"{when.hour % 12 or 12}:{when.minute:02d} {'AM' if when.hour < 12 else 'PM'}"
        days = (now.date() - when.date()).days
        said = (f"Today {clock}" if days == 0 else f"Yesterday {clock}" if days == 1
                else f"{when.year} {when.strftime('%b')} {when.day}")
        eid = e["expense_id"]
        return View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=71, clickable=True,
                    on_click=lambda i=eid: self.push("detail", expense_id=i), padding=(24, 0), children=[
                        View(cls="android.widget.ImageView", width=56, height=48, layout_only=True,
                             icon=CATEGORIES.get(e["category"], "O")[:1]),
                        View(cls="android.widget.LinearLayout", weight=1, layout_only=True, padding=(16, 12),
                             children=[Text(e["name"], resource_id="tv_name", size=16, max_lines=1, padding=(0, 0),
                                            height=22),
                                       Text(said, resource_id="tv_date", size=13, padding=(0, 0), height=16)]),
                        Text(_plain_amount(e["amount"]), resource_id="tv_amount", size=18, bold=True, padding=(0, 0),
                             width=56, align="end"),
                        Text("USD", resource_id="tv_currency_symbol", size=14, padding=(4, 0), width=28)])

    def _open_logs(self) -> None:
        self.selection = []
        self.push("logs")

    def build_logs(self) -> View:
        items: list[View] = []
        last_day: dt.date | None = None
        for e in self.newest_first():
            day = from_ms(e["created_date"]).date()
            if day != last_day:
                items.append(Text(f"{day.strftime('%b')} {day.day}, {day.year}", resource_id="tv_date_header",
                                  size=14, bold=True, color="#00897b", padding=(16, 10)))
                last_day = day
            items.append(self._row(e, selectable=True))
        if not items:
            items = [Text("No expenses yet", resource_id="tv_no_data", align="center", padding=(24, 48),
                          color="#5f6368")]
        if self.selection:
            toolbar = self.selection_toolbar("Close", delete_id="delete", toolbar_id="tb_expense")
        else:
            toolbar = Toolbar("Expense Logs", on_back=self.pop, resource_id="tb_expense")
        return Column(toolbar, ScrollList(items, "logs:list", resource_id="rv_expense"),
                      Fab("Add expense", self.new_expense, resource_id="fb_expense_add"),
                      cls="android.widget.RelativeLayout", resource_id="cl_expense_logs", weight=1)

    def build_detail(self, expense_id: int) -> View:
        e = self._expense(expense_id)
        if e is None:
            return Column(Toolbar("Expense", on_back=self.pop), Text("This expense was deleted", padding=(24, 24)),
                          weight=1)
        when = from_ms(e["created_date"])
        clock = f"{when.hour % 12 or 12}:{when.minute:02d} {'AM' if when.hour < 12 else 'PM'}"
        fields = [("Name", e["name"], "tv_name_value"), ("Amount", format_amount(e["amount"]), "tv_amount_value"),
                  ("Category", CATEGORIES.get(e["category"], "Others"), "tv_category_value"),
                  ("Note", e["note"] or "-", "tv_note_value"),
                  ("Date", f"{when.strftime('%b')} {when.day}, {when.year} {clock}", "tv_date_value")]
        rows = [Column(Text(label, size=12, color="#5f6368", padding=(16, 2)),
                       Text(value, size=18, resource_id=rid, padding=(16, 2)), padding=(0, 8))
                for label, value, rid in fields]
        return Column(
            Toolbar("Expense", on_back=self.pop, actions=[
                ImageButton("Edit", lambda: self.edit_expense(expense_id), resource_id="edit", icon="E"),
                ImageButton("Delete", lambda: self.show_dialog("delete_one", expense_id=expense_id),
                            resource_id="delete", icon="D"),
            ], resource_id="tb_detail"),
            ScrollList(rows, "detail:fields", resource_id="sv_detail", cls="android.widget.ScrollView"),
            cls="android.widget.LinearLayout", resource_id="cl_detail", weight=1,
        )

    def build_statistics(self) -> View:
        totals: dict[int, int] = {}
        for e in self.expenses:
            totals[e["category"]] = totals.get(e["category"], 0) + e["amount"]
        rows = [ListItem(CATEGORIES[c], format_amount(t), None, resource_id="cl_statistic_item",
                         title_id="tv_category", subtitle_id="tv_total")
                for c, t in sorted(totals.items(), key=lambda kv: -kv[1])]
        return Column(Toolbar("Statistics", on_back=self.pop, resource_id="tb_statistics"),
                      ScrollList(rows or [Text("No data", padding=(24, 24))], "statistics:list",
                                 resource_id="rv_statistics"),
                      cls="android.widget.LinearLayout", weight=1)

    # --- the entry form ------------------------------------------------------------------------------
    def new_expense(self) -> None:
        """Open an empty entry form (category Others)."""
        self.selection = []
        self.form = {"expense_id": None, "name": "", "amount": "", "category": 1, "note": ""}
        self.push("entry", expense_id=None)
        self.phone.set_focus("expense_name", keyboard=False)  # Name has the focus, Gboard stays down

    def edit_expense(self, expense_id: int) -> None:
        """Open the entry form on an existing expense."""
        e = self._expense(expense_id)
        if e is None:
            return
        self.form = {"expense_id": expense_id, "name": e["name"], "amount": f"{e['amount'] / 100:.2f}",
                     "category": e["category"], "note": e["note"]}
        self.push("entry", expense_id=expense_id)

    def _set(self, key: str, value: Any) -> None:
        self.form[key] = value

    def build_entry(self, expense_id: int | None) -> View:
        """The entry form as the emulator's Pro Expense lists it (ExpenseAddMultiple runs): the up button (no
        description), "Expense Entry" and the date and time, Time and Calendar, then Name, Amount ("USD" after it
        once it has the focus or a value), the categories' row, Note, SAVE and the lock, then the categories' names.
        The focused field, while empty, lists its placeholder first. The form opens with Name focused, no keyboard;
        Amount takes Gboard's number pad."""
        f = self.form
        now = self.phone.now()
        when = f"{now.day} {now.strftime('%b')} {now.year} {now.hour % 12 or 12}:{now.minute:02d} " + (
            "AM" if now.hour < 12 else "PM")

        def flat(*children: View, **kw: Any) -> View:
            return View(cls="android.widget.LinearLayout", layout_only=True, children=list(children), **kw)

        def field(key: str, hint: str, rid: str, height: float = 56, suffix: bool = False, **kw: Any) -> list[View]:
            """The field, and over it (listed before it, drawn beneath it) its placeholder while it has the focus
            and no text; ``suffix``: "USD" over its end once it has the focus or a value (listed after it)."""
            box = EditText(f[key], lambda v, k=key: self._set(k, v), hint=hint, resource_id=rid, key=f"expense_{key}",
                           min_height=height, **kw)
            parts = [box]
            if self.phone.focus == f"expense_{key}" and not f[key]:
                parts.append(Text("", resource_id="textinput_placeholder", height=height, padding=(0, 0), overlay=True,
                                  dump_rank=-1))
            if suffix and (self.phone.focus == f"expense_{key}" or f[key]):
                parts.append(Text("USD", resource_id="textinput_suffix_text", size=16, padding=(0, 16), height=height,
                                  align="end", overlay=True))
            return [View(cls="android.widget.LinearLayout", layout_only=True, children=parts)]

        amount_box = field("amount", "Amount", "edt_amount", suffix=True, input_type="number", ime_action="Next")
        chips = ScrollList([View(cls="android.widget.FrameLayout", clickable=True, orientation=HORIZONTAL,
                                 on_click=lambda c=cid: self._pick_category(c), children=[
                                     Text(name, resource_id="tv_name", size=16, padding=(12, 8), max_lines=1)])
                            for cid, name in _CHIP_ORDER], "entry:categories", resource_id="rv_category",
                           cls="androidx.recyclerview.widget.RecyclerView", orientation=HORIZONTAL, height=46)
        up = View(cls="android.widget.ImageButton", clickable=True, focusable=True, width=56, height=56, icon="<",
                  on_click=self.pop)
        bar = View(cls="android.view.ViewGroup", orientation=HORIZONTAL, height=56, children=[
            up, flat(Text("Expense Entry" if expense_id is None else "Update Expense", size=20, padding=(16, 0)),
                     Text(when, size=14, padding=(16, 0)), weight=1),
            View(cls="android.widget.TextView", content_desc="Time", resource_id="time", clickable=True, width=48,
                 height=48, icon="T", on_click=lambda: self.toast("Time")),
            View(cls="android.widget.TextView", content_desc="Calendar", resource_id="calendar", clickable=True,
                 width=48, height=48, icon="C", on_click=lambda: self.toast("Calendar"))])
        form = View(cls="android.widget.LinearLayout", padding=(24, 16), weight=1, children=[
            *field("name", "Name", "edt_name", ime_action="Next"), *amount_box, chips,
            *field("note", "Note", "edt_note", height=95, multiline=True),
            flat(Button("SAVE" if expense_id is None else "UPDATE", self.save, resource_id="btn_save", weight=1),
                 View(cls="androidx.cardview.widget.CardView", resource_id="cv_lock", clickable=True, width=50,
                      height=44, icon="L", on_click=lambda: None), orientation=HORIZONTAL, height=56)])
        return Column(bar, View(cls="android.widget.FrameLayout", weight=1, children=[form]),
                      cls="android.widget.LinearLayout", resource_id="cl_entry", weight=1, layout_only=True)

    def _pick_category(self, cid: int) -> None:
        self.form["category"] = cid

    def save(self) -> None:
        """Validate the form and store the expense; toasts say what is wrong."""
        f = self.form
        name = f["name"].strip()
        if not name:
            self.toast("Please enter a name")
            return
        cents = parse_amount(f["amount"])
        if cents is None:
            self.toast("Please enter a valid amount")
            return
        now_ms = to_ms(self.phone.now().replace(microsecond=0))
        existing = self._expense(f["expense_id"])
        if existing is not None:
            existing.update({"name": name, "amount": cents, "category": f["category"], "note": f["note"].strip(),
                             "modified_date": now_ms})
            self.toast("Expense updated")
        else:
            self._add(name, cents, f["category"], f["note"].strip(), now_ms)
            self.toast("Expense saved")
        self.form = {}
        self.phone.set_focus(None)
        self.pop()

    # --- dialogs ---------------------------------------------------------------------------------------
    def dialog_drawer(self) -> View:
        entries = (("Home", self._drawer_home), ("Expense Logs", self._drawer_logs),
                   ("Statistics", self._drawer_statistics))
        body = Column(*[ListItem(label, "", cb, resource_id="nav_item", min_height=52) for label, cb in entries],
                      resource_id="nv_main")
        return Dialog("Pro Expense", body, [])

    def _drawer_home(self) -> None:
        self.pages = [(self.main_page, {})]
        self.close_dialog()

    def _drawer_logs(self) -> None:
        self._drawer_home()
        self._open_logs()

    def _drawer_statistics(self) -> None:
        self._drawer_home()
        self.push("statistics")

    def dialog_delete_one(self, expense_id: int) -> View:
        return Dialog("Delete", "Are you sure you want to delete this expense?",
                      [("Cancel", self.close_dialog), ("Delete", lambda: self._delete_one(expense_id))],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _delete_one(self, expense_id: int) -> None:
        self.expenses = [e for e in self.expenses if e["expense_id"] != expense_id]
        self.close_dialog()
        self.pop()
        self.toast("Deleted")

    def dialog_delete_selected(self) -> View:
        n = len(self.selection)
        return Dialog("Delete", f"Are you sure you want to delete {n} expense{'s' if n != 1 else ''}?",
                      [("Cancel", self.close_dialog), ("Delete", self._delete_selected)],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _delete_selected(self) -> None:
        chosen = set(self.selection)
        self.expenses = [e for e in self.expenses if e["expense_id"] not in chosen]
        self.selection = []
        self.close_dialog()
        self.toast("Deleted")

    # --- content provider -------------------------------------------------------------------------------
    @staticmethod
    def _check_uri(uri: str) -> None:
        rest = uri.split("://", 1)[-1]
        path = rest.split("/", 1)[1] if "/" in rest else ""
        if path.split("/")[0] not in ("expenses", "expense"):
            raise ValueError(f"unknown Pro Expense uri {uri!r}; use {EXPENSES_URI}")

    def content_query(self, uri: str) -> list[Row]:
        self._check_uri(uri)
        return [{k: e[k] for k in EXPENSE_COLUMNS} for e in sorted(self.expenses, key=lambda e: e["expense_id"])]

    def content_insert(self, uri: str, values: Row) -> str:
        self._check_uri(uri)
        unknown = set(values) - set(EXPENSE_COLUMNS)
        if unknown:
            raise ValueError(f"unknown expense column(s) {sorted(unknown)}; known: {list(EXPENSE_COLUMNS)}")
        if not values.get("name") or values.get("amount") is None:
            raise ValueError("an expense needs name and amount (cents)")
        created = values.get("created_date")
        created_ms = number_value(created, "created_date", "expense") if created is not None else to_ms(
            self.phone.now().replace(microsecond=0))
        expense_id = self._add(str(values["name"]), number_value(values["amount"], "amount", "expense"),
                               _category_id(values.get("category", 1)), str(values.get("note") or ""), created_ms)
        if values.get("modified_date") is not None:
            self.expenses[-1]["modified_date"] = number_value(values["modified_date"], "modified_date", "expense")
        return f"{EXPENSES_URI}/{expense_id}"

    def content_update(self, uri: str, values: Row, match: RowMatch) -> int:
        self._check_uri(uri)
        ids = {r["expense_id"] for r in self.content_query(uri) if match(r)}
        for e in self.expenses:
            if e["expense_id"] not in ids:
                continue
            for key, value in values.items():
                if key in ("amount", "created_date", "modified_date"):
                    e[key] = number_value(value, key, "expense")
                elif key == "category":
                    e[key] = _category_id(value)
                elif key in ("name", "note"):
                    e[key] = "" if value is None else str(value)
        return len(ids)

    def content_delete(self, uri: str, match: RowMatch) -> int:
        self._check_uri(uri)
        ids = {r["expense_id"] for r in self.content_query(uri) if match(r)}
        self.expenses = [e for e in self.expenses if e["expense_id"] not in ids]
        self.selection = [i for i in self.selection if i not in ids]
        return len(ids)
