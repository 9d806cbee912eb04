"""Tasks (org.tasks, the Tasks.org to-do app): tasks with a title, priority, due date, notes and completion.

Pages: ``main`` ("My Tasks": open tasks ordered by due date, then priority; each row has a check
box whose description names the priority, the title and the due date; "More options" has the
checkable "Show completed" and "Show hidden" entries, off at first as in the app: completed tasks
and tasks hidden until a later time are left out until they are switched on; tapping a check box
completes or re-opens the task; "Create task" opens the editor) and ``edit`` (one task: title,
due date, priority chips High/Medium/Low/None, notes, a Completed check box; Save keeps the edits,
Delete removes the task).

Database: the real app's Room file ``/data/data/org.tasks/databases/database`` with its ``tasks``
table (the columns AndroidWorld's ``sqlite_schema_utils.Task`` reads and writes). ``importance`` is
0 High, 1 Medium, 2 Low, 3 None; ``dueDate``, ``hideUntil``, ``completed``, ``created`` and
``modified`` are epoch milliseconds of the phone's wall clock read as UTC (0: none). A due time of
midnight is shown as a date alone.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.apps.columns import from_ms, to_ms
from android_gym.sim.databases import build_database, read_table
from android_gym.sim.view import (
    HORIZONTAL,
    Button,
    CheckBox,
    Column,
    Dialog,
    EditText,
    Fab,
    ImageButton,
    Row,
    ScrollList,
    Text,
    Toolbar,
    View,
)

TASKS_PKG = "org.tasks"
TASKS_DB = "/data/data/org.tasks/databases/database"
PRIORITIES: dict[int, str] = {0: "High", 1: "Medium", 2: "Low", 3: "None"}
"""``importance`` -> the priority the app shows."""
PRIORITY_COLORS = {0: "#d93025", 1: "#f29900", 2: "#1a73e8", 3: "#80868b"}

TASK_COLUMNS: dict[str, Any] = {
    "title": "", "importance": 2, "dueDate": 0, "hideUntil": 0, "created": 0, "modified": 0, "completed": 0,
    "deleted": 0, "notes": None, "estimatedSeconds": 0, "elapsedSeconds": 0, "timerStart": 0,
    "notificationFlags": 0, "lastNotified": 0, "recurrence": None, "repeat_from": 0, "calendarUri": None,
    "remoteId": "", "collapsed": 0, "parent": 0, "order": None, "read_only": 0,
}
"""Every column of the ``tasks`` table but ``_id``, with the value a new task gets."""

TASKS_SCHEMA = (
    "CREATE TABLE android_metadata (locale TEXT)",
    "CREATE TABLE IF NOT EXISTS `tasks` (`_id` INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, `title` TEXT, "
    "`importance` INTEGER NOT NULL, `dueDate` INTEGER NOT NULL, `hideUntil` INTEGER NOT NULL, "
    "`created` INTEGER NOT NULL, `modified` INTEGER NOT NULL, `completed` INTEGER NOT NULL, "
    "`deleted` INTEGER NOT NULL, `notes` TEXT, `estimatedSeconds` INTEGER NOT NULL, "
    "`elapsedSeconds` INTEGER NOT NULL, `timerStart` INTEGER NOT NULL, `notificationFlags` INTEGER NOT NULL, "
    "`lastNotified` INTEGER NOT NULL, `recurrence` TEXT, `repeat_from` INTEGER NOT NULL DEFAULT 0, "
    "`calendarUri` TEXT, `remoteId` TEXT, `collapsed` INTEGER NOT NULL, `parent` INTEGER NOT NULL, "
    "`order` INTEGER, `read_only` INTEGER NOT NULL DEFAULT 0)",
    "CREATE INDEX IF NOT EXISTS `t_rid` ON `tasks` (`remoteId`)",
    "CREATE INDEX IF NOT EXISTS `active_and_visible` ON `tasks` (`completed`, `deleted`, `hideUntil`)",
)
"""Tasks.org's Room table of tasks (what AndroidWorld's Tasks questions write and read)."""

_INT_COLUMNS = {k for k, v in TASK_COLUMNS.items() if isinstance(v, int)}


def format_due(ms: int) -> str:
    """How a row shows a due date: "Oct 16, 2023", with ", 5:00 PM" when it has a time of day."""
    when = from_ms(ms)
    day = f"{when.strftime('%b')} {when.day}, {when.year}"
    if when.hour == 0 and when.minute == 0:
        return day
    return f"{day}, {when.hour % 12 or 12}:{when.minute:02d} {'AM' if when.hour < 12 else 'PM'}"


@register_app
class TasksApp(App):
    """Tasks.org's task list and editor over plain task dicts (the ``tasks`` table's columns)."""

    package = TASKS_PKG
    label = "Tasks"
    activity = "com.todoroo.astrid.activity.MainActivity"
    main_page = "main"
    icon_color = "#1a73e8"
    databases = (TASKS_DB,)

    def setup(self) -> None:
        self.tasks: list[dict[str, Any]] = []
        self.next_id = 1
        self.show_completed = False
        self.show_hidden = False
        self.form: dict[str, Any] = {}

    def clear_data(self) -> None:
        """``pm clear``: no tasks, the list's options back to their defaults."""
        self.setup()

    def on_open(self) -> None:
        self.form = {}

    # --- database ----------------------------------------------------------------------------------
    def dump_database(self, path: str) -> bytes:
        """The ``database`` file with the ``tasks`` table built from the app's tasks."""
        return build_database(TASKS_SCHEMA, {"tasks": [dict(t) for t in self.tasks]})

    def load_database(self, path: str, data: bytes) -> None:
        """Replace the tasks with the rows of a written ``database`` file."""
        tasks = []
        for r in read_table(data, "tasks"):
            task = {"_id": int(r["_id"])}
            for col, default in TASK_COLUMNS.items():
                value = r.get(col, default)
                task[col] = int(value or 0) if col in _INT_COLUMNS else value
            task["title"] = str(task["title"] or "")
            tasks.append(task)
        self.tasks = tasks
        self.next_id = max((t["_id"] for t in tasks), default=0) + 1

    # --- data ----------------------------------------------------------------------------------------
    def add_task(self, title: str, importance: int = 2, due_ms: int = 0, notes: str | None = None) -> int:
        """Create a task now (the phone's clock) and return its ``_id``."""
        now = to_ms(self.phone.now().replace(microsecond=0))
        task = {"_id": self.next_id, **TASK_COLUMNS, "title": title, "importance": importance, "dueDate": due_ms,
                "notes": notes, "created": now, "modified": now}
        self.next_id += 1
        self.tasks.append(task)
        return task["_id"]

    def _task(self, task_id: int | None) -> dict[str, Any] | None:
        return next((t for t in self.tasks if t["_id"] == task_id), None)

    def visible_tasks(self) -> list[dict[str, Any]]:
        """The list's tasks in order: not deleted, completed ones only when shown, hidden ones only when shown."""
        now = to_ms(self.phone.now())
        shown = [t for t in self.tasks if not t["deleted"]
                 and (self.show_completed or not t["completed"])
                 and (self.show_hidden or t["hideUntil"] <= now)]
        return sorted(shown, key=lambda t: (bool(t["completed"]), t["dueDate"] == 0, t["dueDate"], t["importance"],
                                            t["title"].lower(), t["_id"]))

    def toggle_complete(self, task_id: int) -> None:
        """The row's check box: complete an open task (now) or re-open a completed one."""
        task = self._task(task_id)
        if task is None:
            return
        now = to_ms(self.phone.now().replace(microsecond=0))
        task["completed"] = 0 if task["completed"] else now
        task["modified"] = now

    # --- the list --------------------------------------------------------------------------------------
    def _row(self, t: dict[str, Any]) -> View:
        tid = t["_id"]
        priority = PRIORITIES.get(t["importance"], "None")
        box = CheckBox(bool(t["completed"]), lambda i=tid: self.toggle_complete(i), resource_id="completeBox",
                       content_desc=f"{priority} priority", width=56, color=PRIORITY_COLORS.get(t["importance"]))
        texts = Column(
            Text(t["title"], resource_id="title", size=16, max_lines=2, padding=(0, 2),
                 color="#80868b" if t["completed"] else "#1f1f1f"),
            Text(format_due(t["dueDate"]), resource_id="due_date", size=13, padding=(0, 2),
                 color="#d93025" if t["dueDate"] < to_ms(self.phone.now()) and not t["completed"] else "#5f6368")
            if t["dueDate"] else None,  # overdue in red
            cls="android.widget.LinearLayout", weight=1, padding=(4, 8),
        )
        return View(cls="android.widget.LinearLayout", resource_id="task_row", orientation=HORIZONTAL,
                    clickable=True, focusable=True, on_click=lambda i=tid: self.edit_task(i), min_height=60,
                    padding=(8.0, 0.0), children=[box, texts])

    def build_main(self) -> View:
        rows = [self._row(t) for t in self.visible_tasks()]
        if not rows:
            rows = [Text("No tasks", resource_id="empty", align="center", padding=(24, 48), color="#5f6368")]
        return Column(
            Toolbar("My Tasks", resource_id="toolbar", actions=[
                ImageButton("More options", lambda: self.show_dialog("list_menu"), icon=":")]),
            ScrollList(rows, "main:tasks", resource_id="recycler_view"),
            Fab("Create task", self.new_task, resource_id="fab"),
            cls="androidx.coordinatorlayout.widget.CoordinatorLayout", resource_id="task_list_coordinator",
            weight=1,
        )

    def dialog_list_menu(self) -> View:
        """The list's More options: Show completed, Show hidden (check boxes)."""
        items = [
            CheckBox(self.show_completed, self._toggle_completed, text="Show completed", resource_id="menu_item",
                     padding=(16, 4)),
            CheckBox(self.show_hidden, self._toggle_hidden, text="Show hidden", resource_id="menu_item",
                     padding=(16, 4)),
        ]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def _toggle_completed(self) -> None:
        self.show_completed = not self.show_completed
        self.close_dialog()

    def _toggle_hidden(self) -> None:
        self.show_hidden = not self.show_hidden
        self.close_dialog()

    # --- the editor ------------------------------------------------------------------------------------
    def new_task(self) -> None:
        """Open an empty editor (priority Low, no due date)."""
        self.form = {"_id": None, "title": "", "importance": 2, "notes": "", "completed": 0, "dueDate": 0}
        self.push("edit", task_id=None)

    def edit_task(self, task_id: int) -> None:
        """Open the editor on a task."""
        t = self._task(task_id)
        if t is None:
            return
        self.form = {"_id": task_id, "title": t["title"], "importance": t["importance"], "notes": t["notes"] or "",
                     "completed": t["completed"], "dueDate": t["dueDate"]}
        self.push("edit", task_id=task_id)

    def _set(self, key: str, value: Any) -> None:
        self.form[key] = value

    def _toggle_form_completed(self) -> None:
        self.form["completed"] = 0 if self.form.get("completed") else to_ms(self.phone.now().replace(microsecond=0))

    def build_edit(self, task_id: int | None) -> View:
        f = self.form
        if not f:
            return Column(Toolbar("Task", on_back=self.pop), Text("This task was deleted", padding=(24, 24)),
                          weight=1)
        chips = [Button(name, lambda i=i: self._set("importance", i), resource_id=f"priority_{name.lower()}",
                        background="#c2e7ff" if f["importance"] == i else None, height=48, selected=f["importance"] == i)
                 for i, name in PRIORITIES.items()]
        due = format_due(f["dueDate"]) if f["dueDate"] else "No due date"
        fields = [
            Row(CheckBox(bool(f["completed"]), self._toggle_form_completed, content_desc="Completed", width=56,
                         resource_id="completeBox"),
                EditText(f["title"], lambda v: self._set("title", v), hint="Task name", resource_id="title",
                         weight=1), padding=(8, 4)),
            Text("Due date", size=12, color="#5f6368", padding=(16, 2)),
            Text(due, resource_id="due_date", size=16, padding=(16, 6)),
            Text("Priority", size=12, color="#5f6368", padding=(16, 2)),
            Row(*chips, resource_id="priority_row", padding=(8, 4)),
            Text("Notes", size=12, color="#5f6368", padding=(16, 2)),
            EditText(f["notes"], lambda v: self._set("notes", v), hint="Notes", resource_id="notes"),
        ]
        actions = [ImageButton("Save", self._save, resource_id="save", icon="S")]
        if task_id is not None:
            actions.insert(0, ImageButton("Delete task", lambda: self.show_dialog("delete", task_id=task_id),
                                          resource_id="delete", icon="D"))
        return Column(Toolbar("", on_back=self.pop, actions=actions, resource_id="toolbar"),
                      ScrollList(fields, "edit:fields", resource_id="task_edit_scroll", cls="android.widget.ScrollView"),
                      cls="android.widget.LinearLayout", resource_id="task_edit", weight=1)

    def _save(self) -> None:
        f = self.form
        title = f["title"].strip()
        if not title:
            self.toast("A task needs a name")
            return
        now = to_ms(self.phone.now().replace(microsecond=0))
        task = self._task(f["_id"])
        if task is None:
            task = self._task(self.add_task(title, f["importance"], f["dueDate"], f["notes"] or None))
        if task is not None:
            task.update({"title": title, "importance": f["importance"], "notes": f["notes"] or None,
                         "completed": f["completed"], "modified": now})
        self.form = {}
        self.phone.set_focus(None)
        self.pop()

    def dialog_delete(self, task_id: int) -> View:
        """Confirm deleting a task."""
        return Dialog("", "Delete this task?", [("Cancel", self.close_dialog), ("Delete", lambda: self._delete(task_id))],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _delete(self, task_id: int) -> None:
        self.tasks = [t for t in self.tasks if t["_id"] != task_id]
        self.form = {}
        self.close_dialog()
        self.pop()


def due_ms(day: dt.date, clock: dt.time | None = None) -> int:
    """The ``dueDate`` of ``day`` at ``clock`` (midnight, a date alone, when None)."""
    return to_ms(dt.datetime.combine(day, clock or dt.time(0, 0)))
