"""Android's own date and time pickers, as an event form's start and end fields open them.

Both pickers edit ``self.form[which]`` (an ISO ``YYYY-MM-DDTHH:MM`` string; ``which`` is "start" or "end") of
the app mixing this in; choosing a new start moves the end by as much, so the duration stays. The date picker is
the Material calendar dialog (month name, previous/next month, one cell per day, Cancel/OK); the time picker is
the keyboard-input mode of Android's TimePickerDialog (hour and minute fields, AM/PM in 12-hour mode, Cancel/OK).
They are system dialogs, so their resource ids (``android:id/...``) are the same in every app that opens them:
Simple Calendar Pro and AndroidLab's Calendario here.
"""

from __future__ import annotations

import calendar as _calendar
import datetime as dt
from typing import Any

from android_gym.sim.view import HORIZONTAL, Column, Dialog, EditText, ImageButton, RadioButton, Text, View


class EventFormPickers:
    """Date and time picker dialogs for ``self.form["start"]`` / ``self.form["end"]`` (mixed into an App).

    The app keeps ``self.form`` (its editor's state) and ``self.picker`` (the open picker's state).
    """

    form: dict[str, Any]
    picker: dict[str, Any]

    def _h24(self) -> bool:
        """Whether the phone's clock setting is 24-hour (``settings system time_12_24``)."""
        return self.phone.settings_get("system", "time_12_24") == "24"

    def open_date_picker(self, which: str) -> None:
        """Show the date picker for the start or end date."""
        current = dt.datetime.fromisoformat(self.form[which])
        self.picker = {"which": which, "year": current.year, "month": current.month, "day": current.day}
        self.phone.set_focus(None)
        self.show_dialog("date_picker")

    def open_time_picker(self, which: str) -> None:
        """Show the time picker (keyboard input mode) for the start or end time."""
        current = dt.datetime.fromisoformat(self.form[which])
        h24 = self._h24()
        hour = current.hour if h24 else (current.hour % 12 or 12)
        self.picker = {"which": which, "hour": f"{hour:02d}", "minute": f"{current.minute:02d}",
                       "pm": current.hour >= 12}
        self.phone.set_focus(None)
        self.show_dialog("time_picker")

    def dialog_date_picker(self) -> View:
        p = self.picker
        year, month, chosen = p["year"], p["month"], p["day"]
        days = _calendar.monthrange(year, month)[1]
        shown = dt.date(year, month, min(chosen, days))
        first_col = (dt.date(year, month, 1).weekday() + 1) % 7
        rows: list[View] = []
        for week in range(6):
            cells: list[View] = []
            for col in range(7):
                n = week * 7 + col - first_col + 1
                if 1 <= n <= days:
                    cells.append(View(cls="android.view.View", text=str(n), clickable=True, focusable=True,
                                      content_desc=f"{n} {shown.strftime('%B')} {year}", selected=n == chosen,
                                      checked=n == chosen, weight=1, height=44, align="center", size=14,
                                      background="#f57c00" if n == chosen else None,
                                      on_click=lambda n=n: self._pick_day(n)))
                else:
                    cells.append(View(cls="android.view.View", weight=1, height=44))
            if week >= 4 and all(not c.text for c in cells):
                continue
            rows.append(View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=44, children=cells))
        body = Column(
            Text(f"{shown.strftime('%a')}, {shown.strftime('%b')} {shown.day}", resource_id="date_picker_header_date",
                 size=28, padding=(24, 8)),
            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=48, padding=(8.0, 0.0),
                 children=[
                     ImageButton("Previous month", lambda: self._picker_month(-1), resource_id="prev", icon="<"),
                     Text(f"{shown.strftime('%B')} {year}", resource_id="month_name", size=15, align="center",
                          weight=1, max_lines=1, padding=(0, 12)),
                     ImageButton("Next month", lambda: self._picker_month(1), resource_id="next", icon=">"),
                 ]),
            Column(*rows, cls="android.widget.ListView", resource_id="android:id/month_view", padding=(8, 0)),
            resource_id="android:id/date_picker_header",
        )
        return Dialog("", body, [("Cancel", self.close_dialog), ("OK", self._apply_date)],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _pick_day(self, n: int) -> None:
        self.picker["day"] = n

    def _picker_month(self, delta: int) -> None:
        p = self.picker
        month = p["month"] - 1 + delta
        p["year"] += month // 12
        p["month"] = month % 12 + 1
        p["day"] = min(p["day"], _calendar.monthrange(p["year"], p["month"])[1])

    def _apply_date(self) -> None:
        p = self.picker
        which = p["which"]
        old = dt.datetime.fromisoformat(self.form[which])
        new = old.replace(year=p["year"], month=p["month"], day=p["day"])
        self._apply(which, old, new)

    def _apply(self, which: str, old: dt.datetime, new: dt.datetime) -> None:
        if which == "start":
            end = dt.datetime.fromisoformat(self.form["end"])
            self.form["end"] = (end + (new - old)).isoformat(timespec="minutes")  # keep the duration
        self.form[which] = new.isoformat(timespec="minutes")
        self.picker = {}
        self.close_dialog()

    def _set_digits(self, key: str, value: str) -> None:
        digits = "".join(c for c in value if c.isdigit())
        self.picker[key] = digits[-2:]

    def dialog_time_picker(self) -> View:
        p = self.picker
        h24 = self._h24()
        # The hour and minute fields share what the separator and AM/PM leave, so AM/PM stays on a narrow screen.
        fields = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=72, padding=(24.0, 4.0),
                      resource_id="android:id/input_block", children=[
                          EditText(p["hour"], lambda v: self._set_digits("hour", v), hint="hour",
                                   resource_id="android:id/input_hour", key="picker_hour", weight=1, size=28,
                                   height=64),
                          Text(":", size=28, padding=(6, 8), resource_id="android:id/input_separator"),
                          EditText(p["minute"], lambda v: self._set_digits("minute", v), hint="minute",
                                   resource_id="android:id/input_minute", key="picker_minute", weight=1, size=28,
                                   height=64),
                      ])
        if not h24:
            fields.children.append(Column(
                RadioButton(not p["pm"], lambda: self._set_pm(False), text="AM", resource_id="android:id/am_label",
                            height=32),
                RadioButton(p["pm"], lambda: self._set_pm(True), text="PM", resource_id="android:id/pm_label",
                            height=32),
                resource_id="android:id/am_pm_spinner", width=96, padding=(8, 0)))
        body = Column(Text("Type in time", resource_id="android:id/top_label", size=14, color="#5f6368",
                           padding=(24, 8)), fields, resource_id="android:id/time_picker")
        return Dialog("", body, [("Cancel", self.close_dialog), ("OK", self._apply_time)],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _set_pm(self, pm: bool) -> None:
        self.picker["pm"] = pm

    def _apply_time(self) -> None:
        p = self.picker
        h24 = self._h24()
        try:
            hour, minute = int(p["hour"] or "-1"), int(p["minute"] or "-1")
        except ValueError:
            hour, minute = -1, -1
        valid_hour = 0 <= hour <= 23 if h24 else 1 <= hour <= 12
        if not valid_hour or not 0 <= minute <= 59:
            self.toast("Enter a valid time")
            return
        if not h24:
            hour = hour % 12 + (12 if p["pm"] else 0)
        which = p["which"]
        old = dt.datetime.fromisoformat(self.form[which])
        self.phone.set_focus(None)
        self._apply(which, old, old.replace(hour=hour, minute=minute))
