"""Clock tasks (com.google.android.deskclock): AndroidWorld and AndroidLab re-creations and sim-only tasks.

Set-up goes through the app's provider (``content delete|insert`` on
``content://com.google.android.deskclock/alarms``; deleting ``.../timers`` and ``.../stopwatch``
clears timers and resets the stopwatch, as clearing the app's data does on a real phone). Alarm
checks read that provider. The stopwatch and timer tasks are scored from the screen the way
AndroidWorld scores them (``uiautomator dump`` + ``cat``, ``dumpsys window`` for the DeskClock
activity): a running stopwatch shows "Pause" and "Lap", a paused one "Start" and the word
"Stopwatch" twice (title and tab), an entered timer ``00h 00m 00s``.
"""

from __future__ import annotations

import random
import re
from typing import Any, ClassVar

from android_gym.actions import OpenApp, Scroll
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import (
    content_delete,
    content_insert,
    content_query,
    foreground_activity,
    go_home,
    screen_nodes,
)
from android_gym.tasks.expert import (
    ExpertStuck,
    find,
    find_all,
    finish,
    id_is,
    scroll_to,
    tap,
    tap_id,
    tap_text,
    tap_where,
    text_is,
    type_into,
)
from android_gym.tasks.suites import SUITES_AW, SUITES_LAB

CLOCK_PKG = "com.google.android.deskclock"
AUTHORITY = "content://com.google.android.deskclock"
ALARMS_URI = f"{AUTHORITY}/alarms"
ALARM_COLUMNS = ["_id", "hour", "minutes", "enabled", "daysofweek", "label"]

WEEKDAYS = 31
WEEKEND = 96
EVERY_DAY = 127
ALARM_LABELS = ("Gym", "Work", "Pills", "Wake up", "School run", "Standup", "Yoga", "Call mom", "Laundry",
                "Trash day", "Flight", "Dentist")

Alarm = tuple[int, int, bool, int, str]  # hour (0-23), minutes, enabled, daysofweek mask, label


def time_text(hour: int, minutes: int) -> str:
    """An alarm time as the app shows it on a 12-hour phone: "3:05 PM"."""
    return f"{hour % 12 or 12}:{minutes:02d} {'AM' if hour < 12 else 'PM'}"


def alarm_rows(device: Any) -> list[dict[str, Any]]:
    """Every alarm from the provider, with ints for hour/minutes/enabled/daysofweek."""
    rows = content_query(device, ALARMS_URI, ALARM_COLUMNS)
    return [{"hour": int(r["hour"] or 0), "minutes": int(r["minutes"] or 0), "enabled": r["enabled"] == "1",
             "days": int(r["daysofweek"] or 0), "label": r["label"] or ""} for r in rows]


def reset_clock(device: Any, alarms: list[Alarm]) -> None:
    """Replace the alarms, clear timers, reset the stopwatch, force-stop Clock and go home."""
    content_delete(device, ALARMS_URI)
    for hour, minutes, enabled, days, label in alarms:
        binds = [("hour", "i", hour), ("minutes", "i", minutes), ("enabled", "i", int(enabled)),
                 ("daysofweek", "i", days)]
        if label:
            binds.append(("label", "s", label))
        content_insert(device, ALARMS_URI, binds)
    content_delete(device, f"{AUTHORITY}/timers")
    content_delete(device, f"{AUTHORITY}/stopwatch")
    go_home(device, CLOCK_PKG)


def random_alarms(rng: random.Random, n: int, avoid: tuple[tuple[int, int], ...] = ()) -> list[Alarm]:
    """``n`` alarms at distinct times (none in ``avoid``), some repeating, some labelled, some on."""
    taken = set(avoid)
    out: list[Alarm] = []
    while len(out) < n:
        hour, minutes = rng.randint(5, 22), rng.choice((0, 10, 15, 20, 30, 40, 45, 50))
        if (hour, minutes) in taken:
            continue
        taken.add((hour, minutes))
        days = rng.choice((0, 0, WEEKDAYS, WEEKEND, EVERY_DAY))
        label = rng.choice(ALARM_LABELS) if rng.random() < 0.4 else ""
        out.append((hour, minutes, rng.random() < 0.5, days, label))
    return out


def _is_deskclock(device: Any) -> bool:
    return "DeskClock" in foreground_activity(device)[1]


# --- expert pieces ------------------------------------------------------------------------------------

def _open_tab(ui: Any, tab: str):
    """Open Clock and select a bottom-navigation tab."""
    ui = yield OpenApp("Clock")
    ui = yield from tap_id(ui, f"tab_menu_{tab}", scroll=False)
    return ui


def _shows_time(e: Any, when: str) -> bool:
    """Whether element ``e`` is an alarm's time showing ``when`` ("3:00 PM"; the app writes a hair space)."""
    return id_is("digital_clock")(e) and e.text.replace("\u200a", " ") == when.replace("\u200a", " ")


def _expand_alarm(ui: Any, when: str):
    """Scroll to the alarm showing ``when`` and expand its card; returns the next ui.

    The card's expand arrow sits on its top line, above the time; when the list's top edge cuts it off,
    the list is scrolled back a little until it shows.
    """

    def is_clock(e: Any) -> bool:
        return _shows_time(e, when)

    def arrow_of(clock: Any, ui_now: Any) -> Any | None:
        above = [e for e in find_all(ui_now, text_is("Expand alarm")) if e.bounds[3] <= clock.bounds[1] + 2]
        return max(above, key=lambda e: e.bounds[1]) if above else None

    ui, clock = yield from scroll_to(ui, is_clock)
    arrow = arrow_of(clock, ui)
    for _ in range(3):
        if arrow is not None:
            break
        lst = next((e for e in ui.elements if e.scrollable), None)
        ui = yield Scroll("up", *(lst.center if lst else (None, None)))
        ui, clock = yield from scroll_to(ui, is_clock)
        arrow = arrow_of(clock, ui)
    if arrow is None:
        raise ExpertStuck(f"no expand arrow above the {when} alarm")
    return (yield tap(arrow))


def _clear_of_fab(ui: Any, predicate: Any, max_scrolls: int = 8, locate: Any = None):
    """Scroll the alarm list until an element matching ``predicate`` (or the one ``locate(ui)`` returns) shows
    clear of the floating "Add alarm" button (which covers the bottom of the list, so a tap there would add
    an alarm); returns (ui, element)."""
    for _ in range(max_scrolls):
        element = locate(ui) if locate is not None else find(ui, predicate)
        fab = find(ui, text_is("Add alarm"))
        if element is not None and (fab is None or not _overlap(element.bounds, fab.bounds)):
            return ui, element
        lst = next((e for e in ui.elements if e.scrollable), None)
        ui = yield Scroll("down", *(lst.center if lst else (None, None)))
    raise ExpertStuck("the element stays under the Add alarm button")


def _overlap(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _tap_in_card(ui: Any, text: str):
    """Tap the element showing ``text`` on an alarm card, clear of the floating button; returns the next ui."""
    ui, element = yield from _clear_of_fab(ui, text_is(text))
    return (yield tap(element))


def _set_alarm(ui: Any, hour: int, minutes: int, label: str = "", collapse: bool = True):
    """On the Alarm tab: Add alarm, enter the time (and a label), collapse the new card unless not
    ``collapse``; returns the next ui."""
    ui = yield from tap_text(ui, "Add alarm")
    ui = yield from type_into(ui, str(hour % 12 or 12), resource_id="material_hour_text_input")
    ui = yield from type_into(ui, f"{minutes:02d}", resource_id="material_minute_text_input")
    ui = yield from tap_text(ui, "PM" if hour >= 12 else "AM", scroll=False)
    ui = yield from tap_text(ui, "OK", scroll=False)
    if label:
        ui = yield from _tap_in_card(ui, "Add label")
        ui = yield from type_into(ui, label, resource_id="label_input_field")
        ui = yield from tap_text(ui, "OK", scroll=False)
    # The new alarm opens expanded; collapse it, as a person does, so the list shows it as a card
    # (AndroidLab's judges read an expanded card's time only up to its "Delete" button).
    if collapse:
        ui = yield from _tap_in_card(ui, "Collapse alarm")
    return ui


def _switch_off(ui: Any, wanted: Any = None, max_rounds: int = 20):
    """Turn off every checked alarm switch (or those for which ``wanted(switch, ui)``), scrolling down the list."""
    last_text = None
    for _ in range(max_rounds):
        on = [e for e in ui.elements if id_is("onoff")(e) and e.checked and (wanted is None or wanted(e, ui))]
        if on:
            ui = yield tap(on[0])
            continue
        if ui.text == last_text:
            return ui
        last_text = ui.text
        lst = next((e for e in ui.elements if e.scrollable), None)
        ui = yield Scroll("down", *(lst.center if lst else (None, None)))
    raise ExpertStuck("alarm switches keep appearing")


# --- AndroidWorld ---------------------------------------------------------------------------------------

class _ClockTask(Task):
    """Shared set-up: known alarms, no timers, stopwatch reset, Clock force-stopped, home screen."""

    app_names = ("clock",)

    def alarms(self) -> list[Alarm]:
        return [tuple(a) for a in self.params.get("alarms", [])]  # type: ignore[misc]

    def initialize(self, device: Any) -> None:
        reset_clock(device, self.alarms())


@register_task
class ClockStopWatchPausedVerify(_ClockTask):
    """AndroidWorld: the stopwatch (reset, so paused at 00:00) is shown paused on the Stopwatch tab."""

    name = "ClockStopWatchPausedVerify"
    template = "Pause the stopwatch."
    difficulty = "easy"
    complexity = 1.0
    suites = SUITES_AW

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        if not _is_deskclock(device):
            return 0.0
        nodes = screen_nodes(device)
        start = any(n.content_desc == "Start" for n in nodes)
        stopwatch = sum(1 for n in nodes if n.content_desc == "Stopwatch" or n.text == "Stopwatch")
        return float(start and stopwatch == 2)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "stopwatch")
        running = [e for e in ui.elements if e.content_desc == "Pause"]
        if running:
            ui = yield tap(running[0])
        yield from finish()


@register_task
class ClockStopWatchRunning(_ClockTask):
    """AndroidWorld: the stopwatch runs (Pause and Lap on screen)."""

    name = "ClockStopWatchRunning"
    template = "Run the stopwatch."
    difficulty = "easy"
    complexity = 1.0
    suites = SUITES_AW

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        if not _is_deskclock(device):
            return 0.0
        descs = {n.content_desc for n in screen_nodes(device)}
        return float("Pause" in descs and "Lap" in descs)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "stopwatch")
        ui = yield from tap_text(ui, "Start", scroll=False)
        yield from finish()


def _timer_entered(device: Any, hours: int, minutes: int, seconds: int) -> bool:
    if not _is_deskclock(device):
        return False
    text = f"{hours:02d}h {minutes:02d}m {seconds:02d}s"
    desc = f"{hours} hours, {minutes} minutes, {seconds} seconds"
    return any(n.text == text or n.content_desc == desc for n in screen_nodes(device))


def _enter_timer(ui: Any, hours: int, minutes: int, seconds: int):
    ui = yield from _open_tab(ui, "timer")
    for d in f"{hours:02d}{minutes:02d}{seconds:02d}".lstrip("0"):
        ui = yield from tap_id(ui, f"timer_setup_digit_{d}", scroll=False)
    return ui


@register_task
class ClockTimerEntry(_ClockTask):
    """AndroidWorld: type a duration on the Timer keypad without starting it."""

    name = "ClockTimerEntry"
    template = "Create a timer with {hours} hours, {minutes} minutes, and {seconds} seconds. Do not start the timer."
    difficulty = "easy"
    complexity = 2.0
    suites = SUITES_AW

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"hours": rng.randint(0, 23), "minutes": rng.randint(0, 59), "seconds": rng.randint(0, 59)}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        p = self.params
        return float(_timer_entered(device, p["hours"], p["minutes"], p["seconds"]))

    def expert(self, ui: Any) -> ExpertGenerator:
        p = self.params
        ui = yield from _enter_timer(ui, p["hours"], p["minutes"], p["seconds"])
        yield from finish()


# --- sim-only -----------------------------------------------------------------------------------------

@register_task
class ClockAddLabeledAlarm(_ClockTask):
    """Sim-only: a new alarm at a given time with a label (time picker, then "Add label")."""

    name = "ClockAddLabeledAlarm"
    template = 'Set an alarm for {time} with the label "{label}" in the Clock app.'
    difficulty = "medium"
    complexity = 3.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        hour, minutes = rng.randint(0, 23), rng.choice(range(0, 60, 5))
        return {"time": time_text(hour, minutes), "hour": hour, "minutes": minutes,
                "label": rng.choice(ALARM_LABELS),
                "alarms": random_alarms(rng, rng.randint(2, 4), avoid=((hour, minutes),))}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        p = self.params
        rows = alarm_rows(device)
        new = [r for r in rows if (r["hour"], r["minutes"]) == (p["hour"], p["minutes"])]
        return float(len(rows) == len(self.alarms()) + 1 and len(new) == 1 and new[0]["enabled"]
                     and new[0]["label"].strip().lower() == p["label"].lower())

    def expert(self, ui: Any) -> ExpertGenerator:
        p = self.params
        ui = yield from _open_tab(ui, "alarm")
        ui = yield from _set_alarm(ui, p["hour"], p["minutes"], p["label"])
        yield from finish()


@register_task
class ClockTurnOffAllAlarms(_ClockTask):
    """Sim-only: switch every alarm off without deleting any."""

    name = "ClockTurnOffAllAlarms"
    template = "Turn off all alarms in the Clock app."
    difficulty = "easy"
    complexity = 2.5

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        alarms = random_alarms(rng, rng.randint(3, 6))
        for i in rng.sample(range(len(alarms)), 2):  # at least two are on
            h, m, _, d, lb = alarms[i]
            alarms[i] = (h, m, True, d, lb)
        return {"alarms": alarms}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        rows = alarm_rows(device)
        same = sorted((r["hour"], r["minutes"]) for r in rows) == sorted((a[0], a[1]) for a in self.alarms())
        return float(same and not any(r["enabled"] for r in rows))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        ui = yield from _switch_off(ui)
        yield from finish()


@register_task
class ClockDeleteAlarm(_ClockTask):
    """Sim-only: delete the alarm at a given time (expand its card, Delete)."""

    name = "ClockDeleteAlarm"
    template = "Delete the {time} alarm in the Clock app."
    difficulty = "easy"
    complexity = 2.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        alarms = random_alarms(rng, rng.randint(3, 6))
        hour, minutes = rng.choice(alarms)[:2]
        return {"time": time_text(hour, minutes), "hour": hour, "minutes": minutes, "alarms": alarms}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        p = self.params
        left = sorted((r["hour"], r["minutes"]) for r in alarm_rows(device))
        expected = sorted((a[0], a[1]) for a in self.alarms() if (a[0], a[1]) != (p["hour"], p["minutes"]))
        return float(left == expected)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        ui = yield from _expand_alarm(ui, self.params["time"])
        ui = yield from _tap_in_card(ui, "Delete")
        yield from finish()


# --- AndroidLab ---------------------------------------------------------------------------------------

LAB_ALARMS: list[Alarm] = [
    (7, 30, True, 0, ""),
    (9, 0, False, 0, ""),
    (16, 0, True, WEEKDAYS, ""),
]
"""The alarms AndroidLab's clock tasks start from, as its question tasks' answers describe them: two on
(clock_13), the earliest on at 7:30 AM (clock_10), one at 9 AM that is off (clock_14), one at 4 PM that is
on, vibrates and does not ring every day (clock_11, clock_12)."""

CITIES_URI = f"{AUTHORITY}/cities"
SETTINGS_URI = f"{AUTHORITY}/settings"


class _LabClock(_ClockTask):
    suites = SUITES_LAB
    cities: ClassVar[tuple[str, ...]] = ()
    """World clocks on the Clock tab at the start."""

    def alarms(self) -> list[Alarm]:
        return list(LAB_ALARMS)

    def initialize(self, device: Any) -> None:
        super().initialize(device)
        content_delete(device, SETTINGS_URI)  # the settings page's defaults
        content_delete(device, CITIES_URI)
        for name in self.cities:
            content_insert(device, CITIES_URI, [("name", "s", name)])


def lab_alarms_unchanged(device: Any, but: tuple[int, int] | None = None) -> bool:
    """Whether the start alarms (except the one at ``but``) are all there as they were."""
    now = {(r["hour"], r["minutes"]): (r["enabled"], r["days"], r["label"]) for r in alarm_rows(device)}
    return all(now.get((h, m)) == (e, d, lb) for h, m, e, d, lb in LAB_ALARMS if (h, m) != but)


@register_task
class ClockLab1(_LabClock):
    """AndroidLab clock_1: a 3 PM alarm labelled "meeting"."""

    name = "clock_1"
    template = 'Set an alarm for 3PM with the label "meeting" using Clock.'
    difficulty = "medium"
    complexity = 3.0

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return float(any((r["hour"], r["minutes"]) == (15, 0) and r["enabled"]
                         and r["label"].strip().lower() == "meeting" for r in alarm_rows(device)))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        ui = yield from _set_alarm(ui, 15, 0, "meeting")
        yield from finish()


@register_task
class ClockLab7(_LabClock):
    """AndroidLab clock_7: every alarm off, none deleted."""

    name = "clock_7"
    template = "Turn off all alarms"
    difficulty = "easy"
    complexity = 2.0

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        rows = alarm_rows(device)
        return float(len(rows) == len(LAB_ALARMS) and not any(r["enabled"] for r in rows))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        ui = yield from _switch_off(ui)
        yield from finish()


class _LabTurnOffOne(_LabClock):
    """Switch off the alarm at ``when`` (hour, minutes); the others keep their state."""

    difficulty = "easy"
    complexity = 1.5
    when: ClassVar[tuple[int, int]] = (0, 0)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        state = {(r["hour"], r["minutes"]): r["enabled"] for r in alarm_rows(device)}
        expected = {(h, m): (e and (h, m) != self.when) for h, m, e, _, _ in LAB_ALARMS}
        return float(state == expected)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        shown = time_text(*self.when)

        def at_time(switch: Any, ui_now: Any) -> bool:
            clock = _clock_of(switch, ui_now)
            return clock is not None and _shows_time(clock, shown)

        ui = yield from _switch_off(ui, at_time)
        yield from finish()


def _clock_of(switch: Any, ui: Any) -> Any | None:
    """The alarm time (``digital_clock``) on the same card row as an on/off ``switch``."""
    return next((e for e in ui.elements if id_is("digital_clock")(e)
                 and abs(e.center[1] - switch.center[1]) < (e.bounds[3] - e.bounds[1])), None)


def _read_alarms(ui: Any, max_scrolls: int = 6):
    """Scroll through the Alarm tab and collect {shown time: switched on}; returns (ui, that dict)."""
    seen: dict[str, bool] = {}
    for _ in range(max_scrolls):
        before = len(seen)
        for switch in (e for e in ui.elements if id_is("onoff")(e)):
            clock = _clock_of(switch, ui)
            if clock is not None:
                seen[clock.text.replace("\u200a", " ")] = bool(switch.checked)
        if seen and len(seen) == before:
            return ui, seen
        lst = next((e for e in ui.elements if e.scrollable), None)
        if lst is None:
            return ui, seen
        ui = yield Scroll("down", *lst.center)
    return ui, seen


def _clock_minutes(text: str) -> int | None:
    """Minutes after midnight of a time such as "7:30 AM", "7 am" or "19:30"; None when there is none."""
    m = re.search(r"\b(\d{1,2})(?:[:.](\d{2}))?\s*([ap])\.?\s*m\b", text, re.IGNORECASE)
    if m is not None:
        hour = int(m.group(1)) % 12 + (12 if m.group(3).lower() == "p" else 0)
        return hour * 60 + int(m.group(2) or 0) if int(m.group(1)) <= 12 else None
    m = re.search(r"\b(\d{1,2})[:.](\d{2})\b", text)
    if m is not None and int(m.group(1)) < 24:
        return int(m.group(1)) * 60 + int(m.group(2))
    return None


@register_task
class ClockLab9(_LabTurnOffOne):
    """AndroidLab clock_9: the 4 PM alarm off, the others unchanged."""

    name = "clock_9"
    template = "Turn off the alarm at 4PM"
    when = (16, 0)


@register_task
class ClockLab26(_LabTurnOffOne):
    """AndroidLab clock_26: the 7:30 AM alarm off, the others unchanged."""

    name = "clock_26"
    template = "Close my 7:30AM alarm"
    when = (7, 30)


@register_task
class ClockLab10(_LabClock):
    """AndroidLab clock_10 (question): the earliest alarm that is on, read from the provider; any time format."""

    name = "clock_10"
    template = "What is my earliest alarm which is open?"
    difficulty = "easy"
    complexity = 1.5
    answer_task = True

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        on = [r["hour"] * 60 + r["minutes"] for r in alarm_rows(device) if r["enabled"]]
        given = _clock_minutes(answer or "")
        return float(bool(on) and given == min(on))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        ui, alarms = yield from _read_alarms(ui)
        on = [t for t, enabled in alarms.items() if enabled and _clock_minutes(t) is not None]
        if not on:
            raise ExpertStuck("no alarm is on")
        yield from finish(min(on, key=lambda t: _clock_minutes(t) or 0))


NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


@register_task
class ClockLab13(_LabClock):
    """AndroidLab clock_13 (question): how many alarms are on, counted in the provider; digits or words."""

    name = "clock_13"
    template = "How many alarms have been turned on?"
    difficulty = "easy"
    complexity = 1.5
    answer_task = True

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        count = sum(1 for r in alarm_rows(device) if r["enabled"])
        words = re.findall(r"[a-z]+|\d+", (answer or "").lower())
        said = [int(w) if w.isdigit() else NUMBER_WORDS.index(w) for w in words if w.isdigit() or w in NUMBER_WORDS]
        return float(said[:1] == [count])

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        ui, alarms = yield from _read_alarms(ui)
        yield from finish(str(sum(alarms.values())))


@register_task
class ClockLab18(_LabClock):
    """AndroidLab clock_18: 1 h 15 min on the Timer keypad, not started."""

    name = "clock_18"
    template = "Set a countdown timer for 1 hour 15 minutes but do not start it"
    difficulty = "medium"
    complexity = 2.0

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        timers = content_query(device, f"{AUTHORITY}/timers", ["_id"])
        return float(not timers and _timer_entered(device, 1, 15, 0))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _enter_timer(ui, 1, 15, 0)
        yield from finish()


@register_task
class ClockLab27(_LabClock):
    """AndroidLab clock_27: a 3 PM alarm."""

    name = "clock_27"
    template = "Set an alarm at 3PM"
    difficulty = "medium"
    complexity = 2.0

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return float(any((r["hour"], r["minutes"]) == (15, 0) and r["enabled"] for r in alarm_rows(device)))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        ui = yield from _set_alarm(ui, 15, 0)
        yield from finish()


def alarm_details(device: Any) -> list[dict[str, Any]]:
    """Every alarm with its vibrate flag and sound besides :func:`alarm_rows`' columns."""
    rows = content_query(device, ALARMS_URI, [*ALARM_COLUMNS, "vibrate", "ringtone"])
    return [{"hour": int(r["hour"] or 0), "minutes": int(r["minutes"] or 0), "enabled": r["enabled"] == "1",
             "days": int(r["daysofweek"] or 0), "label": r["label"] or "", "vibrate": r["vibrate"] == "1",
             "ringtone": r["ringtone"] or ""} for r in rows]


def _toggle_days(ui: Any, names: tuple[str, ...]):
    """On an expanded card, tap the repeat-day buttons ``names`` ("Monday", ...); returns the next ui."""
    for name in names:
        ui, button = yield from _clear_of_fab(ui, lambda e, n=name: e.content_desc == n and id_is("day_button")(e))
        ui = yield tap(button)
    return ui


class _LabNewAlarm(_LabClock):
    """Add one alarm: at ``when`` (hour 0-23, minutes), on, with ``days``, ``label``; the start alarms stay."""

    difficulty = "medium"
    complexity = 3.0
    when: ClassVar[tuple[int, int]] = (0, 0)
    days: ClassVar[int] = 0
    label: ClassVar[str] = ""
    day_names: ClassVar[tuple[str, ...]] = ()

    def wanted(self, row: dict[str, Any]) -> bool:
        return (row["enabled"] and row["days"] == self.days
                and row["label"].strip().lower() == self.label.lower())

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        new = [r for r in alarm_details(device) if (r["hour"], r["minutes"]) == self.when]
        return float(len(new) == 1 and self.wanted(new[0]) and lab_alarms_unchanged(device)
                     and len(alarm_rows(device)) == len(LAB_ALARMS) + 1)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        if self.day_names:
            ui = yield from _set_alarm(ui, *self.when, self.label, collapse=False)
            ui = yield from _toggle_days(ui, self.day_names)
            ui = yield from _tap_in_card(ui, "Collapse alarm")
        else:
            ui = yield from _set_alarm(ui, *self.when, self.label)
        # End with the whole new card in view, its repeat line too (the list's end lies under the button).
        shown = time_text(*self.when)

        def summary(ui_now: Any) -> Any | None:
            clock = next((e for e in ui_now.elements if _shows_time(e, shown)), None)
            return None if clock is None else next(
                (e for e in ui_now.elements if id_is("days_of_week")(e) and abs(e.bounds[1] - clock.bounds[3]) < 8),
                None)

        ui, _ = yield from _clear_of_fab(ui, None, locate=summary)
        yield from finish()


WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")


@register_task
class ClockLab2(_LabNewAlarm):
    """AndroidLab clock_2: a 6:45 AM alarm that does not vibrate and rings Argon."""

    name = "clock_2"
    template = "Set an alarm for 6:45AM, disable vibrate and change ring song to Argon"
    difficulty = "hard"
    complexity = 4.0
    when = (6, 45)

    def wanted(self, row: dict[str, Any]) -> bool:
        return super().wanted(row) and not row["vibrate"] and row["ringtone"] == "Argon"

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        ui = yield from _set_alarm(ui, *self.when, collapse=False)
        ui = yield from _tap_in_card(ui, "Vibrate")
        ui = yield from _tap_in_card(ui, "Default (Cesium)")
        ui = yield from tap_text(ui, "Argon")
        # End on the open card with its sound and vibration showing, down to its Delete button.
        ui, _ = yield from _clear_of_fab(ui, text_is("Delete"))
        yield from finish()


@register_task
class ClockLab3(_LabNewAlarm):
    """AndroidLab clock_3: a 7 AM alarm repeating Monday to Friday."""

    name = "clock_3"
    template = "Help me set an alarm every Monday to Friday, 7AM in morning"
    when = (7, 0)
    days = WEEKDAYS
    day_names = WEEKDAY_NAMES


@register_task
class ClockLab5(_LabNewAlarm):
    """AndroidLab clock_5: a one-off 10:30 AM alarm (tomorrow, the phone's time being 3:34 PM)."""

    name = "clock_5"
    template = "Help me set an alarm at 10:30AM tomorrow"
    complexity = 2.0
    when = (10, 30)


@register_task
class ClockLab6(_LabNewAlarm):
    """AndroidLab clock_6: a 10:30 PM weekend alarm labelled "Watch Football Games"."""

    name = "clock_6"
    template = 'I need to set a 10:30PM clock every weekend, and label it as "Watch Football Games" to remind me'
    difficulty = "hard"
    complexity = 4.0
    when = (22, 30)
    days = WEEKEND
    label = "Watch Football Games"
    day_names = ("Saturday", "Sunday")


@register_task
class ClockLab4(_LabClock):
    """AndroidLab clock_4: the 9 AM alarm rings every day (and is on); the other alarms stay."""

    name = "clock_4"
    template = "Change my clock at 9AM, make it ring everyday"
    difficulty = "medium"
    complexity = 3.0

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        nine = [r for r in alarm_rows(device) if (r["hour"], r["minutes"]) == (9, 0)]
        return float(len(nine) == 1 and nine[0]["enabled"] and nine[0]["days"] == EVERY_DAY
                     and lab_alarms_unchanged(device, but=(9, 0)) and len(alarm_rows(device)) == len(LAB_ALARMS))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        ui = yield from _expand_alarm(ui, time_text(9, 0))
        ui = yield from _toggle_days(ui, ("Sunday", *WEEKDAY_NAMES, "Saturday"))

        def nine_switch(switch: Any, ui_now: Any) -> bool:
            clock = _clock_of(switch, ui_now)
            return clock is not None and _shows_time(clock, time_text(9, 0))

        switch = next((e for e in ui.elements if id_is("onoff")(e) and not e.checked and nine_switch(e, ui)), None)
        if switch is not None:
            ui = yield tap(switch)
        ui = yield from _tap_in_card(ui, "Collapse alarm")
        yield from finish()


@register_task
class ClockLab8(_LabClock):
    """AndroidLab clock_8: every alarm later than 2 PM deleted, the earlier ones kept."""

    name = "clock_8"
    template = "Delete all alarms after 2PM"
    difficulty = "medium"
    complexity = 2.5

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        left = sorted((r["hour"], r["minutes"]) for r in alarm_rows(device))
        return float(left == sorted((h, m) for h, m, *_ in LAB_ALARMS if (h, m) <= (14, 0)))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        for hour, minutes, *_ in sorted(LAB_ALARMS, reverse=True):
            if (hour, minutes) <= (14, 0):
                break
            ui = yield from _expand_alarm(ui, time_text(hour, minutes))
            ui = yield from _tap_in_card(ui, "Delete")
        yield from finish()


@register_task
class ClockLab15(_LabClock):
    """AndroidLab clock_15: London and Barcelona among the world clocks."""

    name = "clock_15"
    template = "Add London and Barcelona time in clock"
    difficulty = "medium"
    complexity = 2.5

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        names = [r["name"] for r in content_query(device, CITIES_URI, ["name"])]
        return float(sorted(names) == ["Barcelona", "London"])

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "clock")
        for city in ("London", "Barcelona"):
            ui = yield from tap_text(ui, "Add city", scroll=False)
            ui = yield from type_into(ui, city, resource_id="search_src_text")
            ui = yield from tap_where(ui, lambda e, c=city: id_is("city_name")(e) and e.text == c)
        yield from finish()


@register_task
class ClockLab17(_LabClock):
    """AndroidLab clock_17: Barcelona removed from the world clocks (London stays)."""

    name = "clock_17"
    template = "Delete Barcelona time from clock"
    difficulty = "medium"
    complexity = 2.0
    cities = ("London", "Barcelona")

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return float([r["name"] for r in content_query(device, CITIES_URI, ["name"])] == ["London"])

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "clock")
        ui = yield from tap_text(ui, "Barcelona", long=True)
        ui = yield from tap_text(ui, "Remove", scroll=False)
        yield from finish()


@register_task
class ClockLab25(_LabClock):
    """AndroidLab clock_25: Clock open (its tabs showing)."""

    name = "clock_25"
    template = "Open clock app"
    difficulty = "easy"
    complexity = 1.0

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return float(_is_deskclock(device))

    def expert(self, ui: Any) -> ExpertGenerator:
        yield OpenApp("Clock")
        yield from finish()


def clock_setting(device: Any, name: str) -> str:
    """A value of Clock's settings page (``clock_style``, ``home_time_zone``, ``auto_silence``)."""
    rows = content_query(device, SETTINGS_URI, ["name", "value"])
    return next((r["value"] or "" for r in rows if r["name"] == name), "")


class _LabClockSetting(_LabClock):
    """Pick ``choice`` for the settings row ``row`` (More options > Settings); ``setting`` must become ``value``."""

    difficulty = "medium"
    complexity = 2.0
    row: ClassVar[str] = ""
    choice: ClassVar[str] = ""
    setting: ClassVar[str] = ""
    value: ClassVar[str] = ""

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return float(clock_setting(device, self.setting) == self.value)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Clock")
        ui = yield from tap_text(ui, "More options", scroll=False)
        ui = yield from tap_text(ui, "Settings", scroll=False)
        ui = yield from tap_text(ui, self.row)
        ui = yield from tap_where(ui, lambda e: id_is("text1")(e) and e.text == self.choice)
        yield from finish()


@register_task
class ClockLab22(_LabClockSetting):
    """AndroidLab clock_22: the clock style is Analog."""

    name = "clock_22"
    template = "Set alarm style to Analog"
    row, choice, setting, value = "Style", "Analog", "clock_style", "analog"


@register_task
class ClockLab23(_LabClockSetting):
    """AndroidLab clock_23: the home time zone is Tokyo's."""

    name = "clock_23"
    template = "Change home time zone to Tokyo in clock"
    row, choice, setting, value = "Home time zone", "Tokyo", "home_time_zone", "Tokyo"


@register_task
class ClockLab24(_LabClockSetting):
    """AndroidLab clock_24: alarms go silent after 5 minutes."""

    name = "clock_24"
    template = "Modify silence after to 5 minutes"
    row, choice, setting, value = "Silence after", "5 minutes", "auto_silence", "5"


def yes_or_no(answer: str | None) -> bool | None:
    """A yes/no answer: True for yes, False for no ("no", "not"), None when it says neither or both."""
    words = set(re.findall(r"[a-z]+", (answer or "").lower()))
    yes = bool(words & {"yes", "yeah", "yep"})
    no = bool(words & {"no", "not", "nope"})
    return yes if yes != no else None


class _LabClockQuestion(_LabClock):
    """A yes/no question about the alarm at ``when``, answered from the alarm list."""

    difficulty = "easy"
    complexity = 1.5
    answer_task = True
    when: ClassVar[tuple[int, int]] = (0, 0)

    def truth(self, alarm: dict[str, Any] | None) -> bool:
        raise NotImplementedError

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        alarm = next((r for r in alarm_details(device) if (r["hour"], r["minutes"]) == self.when), None)
        said = yes_or_no(answer)
        return float(said is not None and said == self.truth(alarm))


@register_task
class ClockLab11(_LabClockQuestion):
    """AndroidLab clock_11 (question): is the 4 PM alarm set for every day?"""

    name = "clock_11"
    template = "Is there an alarm set on 4PM everyday?"
    when = (16, 0)

    def truth(self, alarm: dict[str, Any] | None) -> bool:
        return alarm is not None and alarm["days"] == EVERY_DAY

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        shown = time_text(*self.when)
        ui, clock = yield from scroll_to(ui, lambda e: _shows_time(e, shown))
        summary = next((e for e in ui.elements if id_is("days_of_week")(e)
                        and abs(e.bounds[1] - clock.bounds[3]) < 8), None)
        yield from finish("Yes" if summary is not None and summary.text == "Every day" else "No")


@register_task
class ClockLab12(_LabClockQuestion):
    """AndroidLab clock_12 (question): does the 4 PM alarm vibrate?"""

    name = "clock_12"
    template = "Does my alarm at 4PM turn on vibrate?"
    complexity = 2.0
    when = (16, 0)

    def truth(self, alarm: dict[str, Any] | None) -> bool:
        return alarm is not None and alarm["vibrate"]

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        ui = yield from _expand_alarm(ui, time_text(*self.when))
        ui, vibrate = yield from _clear_of_fab(ui, lambda e: id_is("vibrate_onoff")(e))
        yield from finish("Yes" if vibrate.checked else "No")


@register_task
class ClockLab14(_LabClockQuestion):
    """AndroidLab clock_14 (question): is the 9 AM alarm on?"""

    name = "clock_14"
    template = "Have my alarm at 9AM been turned on?"
    when = (9, 0)

    def truth(self, alarm: dict[str, Any] | None) -> bool:
        return alarm is not None and alarm["enabled"]

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "alarm")
        ui, alarms = yield from _read_alarms(ui)
        yield from finish("Yes" if alarms.get(time_text(*self.when)) else "No")
