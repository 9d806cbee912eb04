"""Google Clock (com.google.android.deskclock): Alarm, Clock, Timer and Stopwatch tabs.

* Alarm: cards sorted by time with an on/off switch; tapping a card's time or the "Add alarm" FAB
  (floating over the bottom of the list) opens the "Enter time" picker (Hour and Minute fields, AM/PM);
  the expand arrow (top right of a card) shows the repeat days (S M T W T F S), "Add label", the alarm
  sound (a list of Android's alarm sounds), "Vibrate" and "Delete". Times carry the real app's hair
  space before AM/PM; a label and the sound are read out as "Label ..." / "Ringtone ...".
* Clock: the current time and date, world clocks, "Add city".
* Settings (More options): Style (Analog/Digital), Home time zone, Silence after.
* Timer: a keypad (digits shift in from the right into ``00h 00m 00s``), "Delete" and a "Start" FAB;
  a started timer counts down with the phone's simulated clock (Pause/Resume, Reset, "Add timer").
* Stopwatch: "Start", then "Pause" and "Lap"; paused shows "Start" and "Reset". Time follows the
  phone's simulated clock.

AndroidWorld's runs (``SimPhone.android_world_emulator``, set by the AndroidWorld suite) get the Clock of AndroidWorld's
emulator instead (:meth:`ClockApp.build_main` and :meth:`ClockApp.build_cities`): Google Clock's five tabs described
by their names (with Bedtime), opening on its Clock tab after its data is cleared, the digital clock and date read
out, world clocks as "+8h" ahead, a city search that lists its results only after the next input, at the emulator's
bounds. AndroidLab's tasks keep the layout above (written from AndroidLab's Clock).

State for task checks is served by a content provider (authorities ``com.google.android.deskclock``
and AOSP's ``com.android.deskclock``), readable with ``content query``:

* ``content://com.google.android.deskclock/alarms``: ``_id, hour, minutes, enabled, daysofweek,
  vibrate, label, ringtone`` with AOSP's ClockContract meaning (hour 0-23; ``daysofweek`` a bit mask,
  Monday = 1, Tuesday = 2, ... Sunday = 64). Insert, update and delete work.
* ``content://com.google.android.deskclock/timers``: ``_id, length, remaining, state, label``
  (milliseconds; state ``running``/``paused``/``expired``). Delete removes timers.
* ``content://com.google.android.deskclock/stopwatch``: one row ``state`` (``reset``/``running``/
  ``paused``), ``elapsed`` (ms), ``laps``. Delete resets the stopwatch.
* ``content://com.google.android.deskclock/cities``: the Clock tab's world clocks, ``_id, name`` (a
  name from :data:`CITIES`). Insert and delete work.
* ``content://com.google.android.deskclock/settings``: the settings page's values, ``name, value``:
  ``clock_style`` (digital | analog), ``home_time_zone`` (a city, "" for the phone's zone),
  ``auto_silence`` (minutes, -1 never). Delete puts them back to their defaults.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from android_gym.sim.app import App, Row, RowMatch, register_app
from android_gym.sim.apps.columns import int_column
from android_gym.sim.view import (
    HORIZONTAL,
    Button,
    CheckBox,
    Column,
    Dialog,
    EditText,
    ImageButton,
    ListItem,
    RadioButton,
    ScrollList,
    Spacer,
    Switch,
    Text,
    View,
)

CLOCK_PKG = "com.google.android.deskclock"
NEGATIVE_POSITIVE = ("android:id/button2", "android:id/button1")  # AlertDialog ids of (Cancel, OK)
TABS = ("alarm", "clock", "timer", "stopwatch")
TAB_TITLES = {"alarm": "Alarm", "clock": "Clock", "timer": "Timer", "stopwatch": "Stopwatch", "bedtime": "Bedtime"}
GOOGLE_TABS = (*TABS, "bedtime")
"""The bottom navigation of the Clock on AndroidWorld's emulator (Google Clock): a fifth tab, Bedtime."""
PRIVACY_NOTICE = "You can find the privacy policy here"
"""What Google Clock's first start after its data is cleared shows over its app bar until the next input (the
second held-out source's tuning run ClockStopWatchRunning of 2025-12-13T21:50, step 3; gone at its step 6)."""

# Day order on an alarm card (Sunday first, as the US locale shows) with ClockContract bits (Monday = 1).
DAYS: tuple[tuple[str, str, int], ...] = (
    ("S", "Sunday", 64), ("M", "Monday", 1), ("T", "Tuesday", 2), ("W", "Wednesday", 4),
    ("T", "Thursday", 8), ("F", "Friday", 16), ("S", "Saturday", 32),
)
WEEKDAYS_MASK = 1 | 2 | 4 | 8 | 16
WEEKEND_MASK = 32 | 64
EVERY_DAY_MASK = 127

# World clocks: name, country, offset from UTC in hours on the frozen date (Oct 2023, summer time).
CITIES: tuple[tuple[str, str, float], ...] = (
    ("Amsterdam", "Netherlands", 2), ("Barcelona", "Spain", 2), ("Beijing", "China", 8),
    ("Berlin", "Germany", 2), ("Cairo", "Egypt", 3), ("Chicago", "United States", -5),
    ("Dubai", "United Arab Emirates", 4), ("Hong Kong", "China", 8), ("London", "United Kingdom", 1),
    ("Los Angeles", "United States", -7), ("Mexico City", "Mexico", -6), ("Moscow", "Russia", 3),
    ("Mumbai", "India", 5.5), ("New York", "United States", -4), ("Paris", "France", 2),
    ("Rome", "Italy", 2), ("São Paulo", "Brazil", -3), ("Seoul", "South Korea", 9),
    ("Singapore", "Singapore", 8), ("Sydney", "Australia", 11), ("Tokyo", "Japan", 9),
    ("Toronto", "Canada", -4),
)
DEFAULT_RINGTONE = "Default (Cesium)"
RINGTONES: tuple[str, ...] = (
    "Silent", DEFAULT_RINGTONE, "Argon", "Carbon", "Cesium", "Helium", "Krypton", "Neon", "Osmium", "Oxygen",
    "Platinum", "Promethium", "Scandium",
)
"""The alarm sounds to pick from: Android's alarm ringtones (named after elements), with the default first."""
SILENCE_AFTER: dict[str, str] = {
    "1": "1 minute", "5": "5 minutes", "10": "10 minutes", "15": "15 minutes", "20": "20 minutes",
    "25": "25 minutes", "-1": "Never",
}
"""Settings > Silence after: stored value (minutes, -1 never) and what the app shows."""
DEFAULT_PREFS: dict[str, str] = {"clock_style": "digital", "home_time_zone": "", "auto_silence": "10"}
LOCAL_UTC_OFFSET = 0.0  # the phone's home time zone: UTC, as `getprop persist.sys.timezone` reports

DEFAULT_ALARMS: tuple[tuple[int, int, bool, int, str], ...] = (
    (7, 0, False, WEEKDAYS_MASK, ""),
    (8, 30, False, WEEKEND_MASK, ""),
)


HAIR_SPACE = "\u200a"
"""What the real Clock puts between the time and AM/PM: its 12-hour pattern is the locale's "h:mm a" with
the space swapped for a hair space (so the smaller AM/PM sits close), and that is the text its views hold."""


def format_time(hour: int, minutes: int, twenty_four: bool = False) -> str:
    """A time as the app's clocks show it: "7:30\u200aAM" (a hair space), or "07:30" on a 24-hour phone."""
    if twenty_four:
        return f"{hour:02d}:{minutes:02d}"
    return f"{hour % 12 or 12}:{minutes:02d}{HAIR_SPACE}{'AM' if hour < 12 else 'PM'}"


def days_summary(mask: int) -> str:
    """The repeat line of an alarm card: "Every day", "Mon, Wed", ... or "" for a one-off alarm."""
    if mask == EVERY_DAY_MASK:
        return "Every day"
    if mask == WEEKDAYS_MASK:
        return "Mon, Tue, Wed, Thu, Fri"
    if mask == WEEKEND_MASK:
        return "Sat, Sun"
    order = ((1, "Mon"), (2, "Tue"), (4, "Wed"), (8, "Thu"), (16, "Fri"), (32, "Sat"), (64, "Sun"))
    return ", ".join(name for bit, name in order if mask & bit)


def format_hms(ms: int) -> str:
    """A running timer: "1:02:03", "2:03" or "0:05"."""
    total = max(0, ms) // 1000
    h, rem = divmod(total, 3600)
    m, s = divmod(rem, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def format_stopwatch(ms: int) -> str:
    """The stopwatch face: "00:05.00" (minutes:seconds.hundredths), with hours once past an hour."""
    ms = max(0, ms)
    h, rem = divmod(ms, 3_600_000)
    m, rem = divmod(rem, 60_000)
    s, rem = divmod(rem, 1000)
    face = f"{m:02d}:{s:02d}.{rem // 10:02d}"
    return f"{h}:{face}" if h else face


def timer_setup_parts(digits: str) -> tuple[int, int, int]:
    """(hours, minutes, seconds) from keypad digits, which fill ``hhmmss`` from the right."""
    d = digits.rjust(6, "0")[-6:]
    return int(d[0:2]), int(d[2:4]), int(d[4:6])


@register_app
class ClockApp(App):
    """Google Clock. Alarms, timers and the stopwatch are plain data; time comes from ``phone.clock_ms``."""

    package = CLOCK_PKG
    label = "Clock"
    activity = "com.android.deskclock.DeskClock"
    authorities = ("com.google.android.deskclock", "com.android.deskclock")
    icon_color = "#0b57d0"

    def setup(self) -> None:
        self.chosen_tab = ""  # "" until a tab is picked: then :attr:`tab` is the app's first tab
        self.notice_tick = -1  # Google Clock: the input after which the first start's privacy notice shows
        self.notice_shown = False
        self.loading = False  # Google Clock's city search: results of the last keystroke not listed yet
        self.alarms: list[dict[str, Any]] = []
        self.next_alarm_id = 1
        for hour, minutes, enabled, mask, label in DEFAULT_ALARMS:
            self.add_alarm(hour, minutes, enabled=enabled, days=mask, label=label)
        self.expanded: int | None = None
        self.picker = {"hour": "", "minute": "", "pm": False}
        self.label_draft = ""
        self.cities: list[str] = []
        self.city_query = ""
        self.timer_digits = ""
        self.timers: list[dict[str, Any]] = []
        self.next_timer_id = 1
        self.timer_setup = True
        self.stopwatch = {"state": "reset", "accumulated": 0, "started": 0, "laps": []}
        self.prefs = dict(DEFAULT_PREFS)

    def on_open(self) -> None:
        self.expanded = None
        self.city_query = ""
        self.timer_digits = ""  # an unstarted keypad entry does not survive a restart
        if self.google and not self.notice_shown:  # the first start since the data was cleared
            self.notice_shown = True
            self.notice_tick = self.phone.ticks

    @property
    def google(self) -> bool:
        """Whether this is the Clock of AndroidWorld's emulator (Google Clock's layout; see the module's doc)."""
        return bool(getattr(self.phone, "android_world_emulator", False))

    @property
    def tab(self) -> str:
        """The bottom-navigation tab shown: the one picked last, else the first the app opens on (Google Clock on
        AndroidWorld's emulator opens on its Clock tab after its data is cleared, a tuning run of the second
        held-out source; AndroidLab's on Alarm)."""
        return self.chosen_tab or ("clock" if self.google else "alarm")

    @tab.setter
    def tab(self, value: str) -> None:
        self.chosen_tab = value

    # --- time -----------------------------------------------------------------------------------
    @property
    def now_ms(self) -> int:
        """The phone's simulated clock in ms since boot (the stopwatch and timers run on it)."""
        return int(self.phone.clock_ms)

    def _twenty_four(self) -> bool:
        return self.phone.settings_get("system", "time_12_24") == "24"

    def stopwatch_elapsed(self) -> int:
        """Milliseconds on the stopwatch now."""
        sw = self.stopwatch
        if sw["state"] == "running":
            return sw["accumulated"] + self.now_ms - sw["started"]
        return sw["accumulated"]

    def timer_remaining(self, t: dict[str, Any]) -> int:
        """Milliseconds left on timer ``t`` now (negative once expired)."""
        if t["state"] == "running":
            return t["remaining"] - (self.now_ms - t["started"])
        return t["remaining"]

    # --- shell of every tab ---------------------------------------------------------------------
    def build_main(self) -> View:
        """The current tab's content between the app bar and the bottom navigation."""
        if self.google:
            return self._google_main()
        body = getattr(self, f"_tab_{self.tab}")()
        tabs = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=80,
                    resource_id="bottom_navigation", background="#f0f4f9", children=[
                        # the selected tab takes no click (only focus), as the real navigation bar reports it
                        View(cls="android.widget.FrameLayout", text=TAB_TITLES[t], resource_id=f"tab_menu_{t}",
                             clickable=t != self.tab, focusable=True, selected=t == self.tab, weight=1, size=12,
                             align="center", icon=TAB_TITLES[t][:1],
                             on_click=None if t == self.tab else lambda t=t: self.select_tab(t))
                        for t in TABS])
        return Column(
            View(cls="android.view.ViewGroup", orientation=HORIZONTAL, height=64, resource_id="toolbar",
                 padding=(4.0, 8.0), children=[
                     Text(TAB_TITLES[self.tab], resource_id="action_bar_title", size=22, weight=1, max_lines=1),
                     ImageButton("More options", lambda: self.show_dialog("overflow"), icon=":")]),
            body,
            tabs,
            cls="android.widget.LinearLayout", resource_id="desk_clock_pager", weight=1,
        )

    @staticmethod
    def _fab(content_desc: str, on_click: Any, icon: str, overlay: bool = False) -> View:
        """The centred floating button above the bottom navigation (a Fab would cover the tabs); ``overlay``
        draws it over the bottom of the view above instead of below it."""
        return View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=96, padding=(0.0, 12.0),
                    overlay=overlay, children=[Spacer(weight=1),
                              ImageButton(content_desc, on_click, resource_id="fab", icon=icon, width=72, height=72,
                                          background="#c2e7ff"),
                              Spacer(weight=1)])

    def select_tab(self, tab: str) -> None:
        """Switch the bottom-navigation tab."""
        if tab not in (GOOGLE_TABS if self.google else TABS):
            raise ValueError(f"unknown Clock tab {tab!r}")
        self.tab = tab
        self.expanded = None
        self.phone.set_focus(None)

    # --- Google Clock (AndroidWorld's emulator) -----------------------------------------------------
    def _px(self, v: float) -> int:
        """Pixels of the 1080 x 2400, 420 dpi emulator scaled to this phone's density."""
        return round(v * self.phone.scale / 2.625)

    def _app_height(self) -> int:
        phone = self.phone
        return phone.height - phone.status_bar_height - phone.nav_bar_height

    def _google_main(self) -> View:
        """Google Clock's main screen as AndroidWorld's emulator lists it (the second held-out source's tuning run
        ClockStopWatchRunning of 2025-12-13T21:50): the title ("Clock"), "More options" (an ImageView), the
        floating button (a Button with id ``fab``, "Add city" on this tab), the five tabs described by their names
        (Alarm, Clock, Timer, Stopwatch, Bedtime; the selected one takes no click), then the tab's content. Each at
        the emulator's bounds (the tabs 216 px wide over the bottom 210 px, the button 252 px square 42 px above
        them), so taps at the same points hit the same views. The other tabs keep the content the sim models; their
        floating button moves to the same place (it is one view of the activity on the real app)."""
        px, W, H = self._px, self.phone.width, self._app_height()
        bar_top = H - px(210)
        body = self._tab_clock_google() if self.tab == "clock" else (
            Column() if self.tab == "bedtime" else getattr(self, f"_tab_{self.tab}")())
        fab = self._detach_fab(body)
        for node in body.walk():  # the sim's spacers are layouts Android leaves out of the tree, not empty leaves
            if node.cls == "android.view.View" and not (node.children or node.text or node.content_desc
                                                        or node.on_click or node.clickable):
                node.layout_only = True
        title = TAB_TITLES[self.tab]
        children: list[View] = [
            Text(title, resource_id="action_bar_title", size=22, max_lines=1, padding=(0, 0),
                 place=(px(63), px(47), px(63 + 30 * len(title)), px(120))),
            View(cls="android.widget.ImageView", content_desc="More options", resource_id="overflow_action_button",
                 clickable=True, focusable=True, icon=":", on_click=lambda: self.show_dialog("overflow"),
                 place=(W - px(105), px(20), W, px(146))),
        ]
        if fab is not None:
            fab.cls = "android.widget.Button"
            side = px(252)
            fab.place = ((W - side) // 2, bar_top - px(42) - side, (W + side) // 2, bar_top - px(42))
            children.append(fab)
        for i, t in enumerate(GOOGLE_TABS):
            children.append(View(
                cls="android.widget.FrameLayout", content_desc=TAB_TITLES[t], resource_id=f"tab_menu_{t}",
                clickable=t != self.tab, focusable=True, selected=t == self.tab, size=12, align="center",
                icon=TAB_TITLES[t][:1], background="#f0f4f9",
                on_click=None if t == self.tab else lambda t=t: self.select_tab(t),
                place=(i * W // len(GOOGLE_TABS), bar_top, (i + 1) * W // len(GOOGLE_TABS), H)))
        body.place = (0, px(146), W, bar_top)
        children.append(body)
        if self.notice_tick == self.phone.ticks:  # a level deeper than the tab's first views, listed after them
            children.append(View(cls="android.widget.FrameLayout", place=(px(417), px(54), px(919), px(97)),
                                 children=[Text(PRIVACY_NOTICE, resource_id="body", size=12, max_lines=1,
                                                padding=(0, 0))]))
        return View(cls="android.widget.FrameLayout", resource_id="desk_clock_pager", absolute=True, weight=1,
                    children=children)

    @staticmethod
    def _detach_fab(body: View) -> View | None:
        """Take the tab's floating button out of its content (left as room of the same size) for the shell."""
        for node in body.walk():
            for i, child in enumerate(node.children):
                if child.resource_id == "fab":
                    node.children[i] = View(cls="android.view.View", width=child.width, height=child.height,
                                            layout_only=True)
                    return child
        return None

    def _tab_clock_google(self) -> View:
        """Google Clock's Clock tab: the time and the date, each read out ("Sunday, October 15"), then each world
        clock's name, how far ahead or behind it is ("+8h", "8 hours ahead") and its time."""
        px, now, W = self._px, self.phone.now(), self.phone.width
        shown = format_time(now.hour, now.minute, self._twenty_four())
        date = now.strftime("%a, %b ") + str(now.day)
        rows: list[View] = [
            View(cls="android.view.View", layout_only=True, height=22 / 2.625),
            Text(shown, resource_id="digital_clock", content_desc=shown, size=56, max_lines=1, padding=(24, 0),
                 height=299 / 2.625),
            Text(date, resource_id="date_and_next_alarm", content_desc=now.strftime("%A, %B ") + str(now.day),
                 size=16, max_lines=1, padding=(24, 0), height=60 / 2.625),
            View(cls="android.view.View", layout_only=True, height=187 / 2.625),
        ]
        for name in self.cities:
            diff = next((o for c, _, o in CITIES if c == name), 0.0) - LOCAL_UTC_OFFSET
            t = now + _dt.timedelta(hours=diff)
            there = format_time(t.hour, t.minute, self._twenty_four())
            hours = f"{abs(diff):g}"
            ahead = (f"{'+' if diff > 0 else '-'}{hours}h", f"{hours} hour{'s' if abs(diff) != 1 else ''} "
                     f"{'ahead' if diff > 0 else 'behind'}") if diff else ("", "")
            rows.append(View(cls="android.widget.FrameLayout", absolute=True, height=159 / 2.625,
                             on_long_click=lambda n=name: self.show_dialog("remove_city", city=n), children=[
                                 Text(name, resource_id="city_name", size=16, max_lines=1, padding=(0, 0),
                                      place=(px(84), px(22), px(84 + 28 * len(name)), px(82))),
                                 *([Text(ahead[0], resource_id="hours_ahead", content_desc=ahead[1], size=14,
                                         max_lines=1, padding=(0, 0), place=(px(84), px(82), px(146), px(137)))]
                                   if diff else []),
                                 Text(there, resource_id="digital_clock", content_desc=there, size=40, max_lines=1,
                                      padding=(0, 0), place=(px(540), 0, W - px(84), px(159)))]))
        rows.append(ImageButton("Add city", self.open_city_picker, resource_id="fab", icon="+"))  # to the shell
        return Column(*rows, weight=1)

    def _build_cities_google(self) -> View:
        """Google Clock's city search as AndroidWorld's emulator lists it: Back, the field (its hint "Search for a
        city"), "Clear text" once something is typed, and "Search for a city" in the middle until results show.
        They show only from the input after a keystroke (:attr:`loading`): right after one the emulator still listed
        the empty view (twice in the tuning run), yet a tap at the top of the list then picked a city. A city
        matches when its name starts with the query."""
        px, W = self._px, self.phone.width
        q = self.city_query.strip().lower()
        clear = px(147) if q else 0
        children: list[View] = [
            ImageButton("Back", self._close_cities, icon="<", place=(0, px(10), px(147), px(157))),
            EditText(self.city_query, self._set_city_query, hint="Search for a city", key="city_search",
                     resource_id="open_search_view_edit_text", on_submit=lambda: None,
                     place=(px(147), px(21), W - clear, px(147))),
        ]
        if q:
            children.append(ImageButton("Clear text", lambda: self._set_city_query(""), icon="x",
                                        resource_id="open_search_view_clear_button",
                                        place=(W - clear, px(21), W, px(147))))
        items = [ListItem(name, country, lambda n=name: self.add_city(n), resource_id="city_item",
                          title_id="city_name", subtitle_id="city_country", min_height=184 / 2.625)
                 for name, country, _ in sorted(CITIES) if q and name.lower().startswith(q)]
        if not q or self.loading:
            children.append(Text("Search for a city", resource_id="search_empty_view", size=16, align="center",
                                 padding=(0, 0), place=(px(383), px(517), px(698), px(886))))
        elif items:
            children.append(ScrollList(items, "cities:list", resource_id="search_results",
                                       place=(0, px(147), W, self._app_height())))
        else:
            children.append(Text("No results", resource_id="search_empty_view", size=16, align="center",
                                 padding=(0, 0), place=(px(383), px(517), px(698), px(886))))
        return View(cls="android.widget.FrameLayout", absolute=True, weight=1, children=children)

    def dialog_overflow(self) -> View:
        """The More options menu: Settings opens the settings page, the other entries only close it."""
        items = [ListItem(t, "", self._open_settings if t == "Settings" else self.close_dialog,
                          resource_id="menu_item", title_id="title")
                 for t in ("Screen saver", "Settings", "Send feedback", "Help")]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    # --- settings -------------------------------------------------------------------------------
    def _open_settings(self) -> None:
        self.close_dialog()
        self.push("settings")

    def home_zone_summary(self) -> str:
        """The Home time zone row's value: "(GMT+9:00) Tokyo", or the phone's own zone when none is set."""
        city = self.prefs["home_time_zone"]
        offset = next((o for c, _, o in CITIES if c == city), LOCAL_UTC_OFFSET) if city else LOCAL_UTC_OFFSET
        hours, minutes = int(abs(offset)), int(round(abs(offset) % 1 * 60))
        zone = f"(GMT{'-' if offset < 0 else '+'}{hours}:{minutes:02d})"
        return f"{zone} {city}" if city else f"{zone} Coordinated Universal Time"

    def build_settings(self) -> View:
        """Clock's settings page: the clock style, home time zone and how long an alarm rings."""
        p = self.prefs
        silence = SILENCE_AFTER[p["auto_silence"]]
        rows: list[View] = [
            Text("Clock", resource_id="category_title", size=14, color="#0b57d0", padding=(24, 12)),
            ListItem("Style", p["clock_style"].capitalize(), lambda: self.show_dialog("clock_style"),
                     resource_id="clock_style"),
            ListItem("Home time zone", self.home_zone_summary(), lambda: self.show_dialog("home_time_zone"),
                     resource_id="home_time_zone"),
            Text("Alarms", resource_id="category_title", size=14, color="#0b57d0", padding=(24, 12)),
            ListItem("Silence after", silence, lambda: self.show_dialog("auto_silence"), resource_id="auto_silence"),
        ]
        return Column(
            View(cls="android.view.ViewGroup", orientation=HORIZONTAL, height=64, resource_id="toolbar",
                 padding=(4.0, 8.0), children=[
                     ImageButton("Navigate up", self.pop, icon="<"),
                     Text("Settings", resource_id="action_bar_title", size=22, weight=1, max_lines=1)]),
            ScrollList(rows, "settings:list", resource_id="recycler_view"),
            cls="android.widget.LinearLayout", weight=1,
        )

    def _choice(self, title: str, key: str, options: list[tuple[str, str]]) -> View:
        """A settings choice dialog: one radio button per (value, label); a tap stores it and closes."""
        buttons = [RadioButton(self.prefs[key] == value, lambda v=value: self._set_pref(key, v), text=label,
                               resource_id="text1") for value, label in options]
        return Dialog(title, Column(*buttons, resource_id="select_dialog_listview"),
                      [("Cancel", self.close_dialog)], button_ids=NEGATIVE_POSITIVE[:1])

    def _set_pref(self, key: str, value: str) -> None:
        self.prefs[key] = value
        self.close_dialog()

    def dialog_clock_style(self) -> View:
        return self._choice("Style", "clock_style", [("analog", "Analog"), ("digital", "Digital")])

    def dialog_home_time_zone(self) -> View:
        return self._choice("Home time zone", "home_time_zone", [(c, c) for c, _, _ in CITIES])

    def dialog_auto_silence(self) -> View:
        return self._choice("Silence after", "auto_silence", list(SILENCE_AFTER.items()))

    # --- alarms ---------------------------------------------------------------------------------
    def add_alarm(self, hour: int, minutes: int, enabled: bool = True, days: int = 0, label: str = "",
                  vibrate: bool = True) -> dict[str, Any]:
        """Create an alarm (hour 0-23) and return it."""
        if not (0 <= hour <= 23 and 0 <= minutes <= 59):
            raise ValueError(f"invalid alarm time {hour}:{minutes:02d} (hour 0-23, minutes 0-59)")
        if not 0 <= days <= EVERY_DAY_MASK:
            raise ValueError(f"daysofweek must be a bit mask in 0..127, got {days}")
        alarm = {"_id": self.next_alarm_id, "hour": hour, "minutes": minutes, "enabled": bool(enabled),
                 "days": days, "label": label, "vibrate": bool(vibrate), "ringtone": DEFAULT_RINGTONE}
        self.next_alarm_id += 1
        self.alarms.append(alarm)
        return alarm

    def alarm(self, alarm_id: int) -> dict[str, Any] | None:
        """The alarm with ``_id`` ``alarm_id``, or None."""
        for a in self.alarms:
            if a["_id"] == alarm_id:
                return a
        return None

    def sorted_alarms(self) -> list[dict[str, Any]]:
        """Alarms in list order: by time of day."""
        return sorted(self.alarms, key=lambda a: (a["hour"], a["minutes"], a["_id"]))

    def _tab_alarm(self) -> View:
        cards = [self._alarm_card(a) for a in self.sorted_alarms()]
        if not cards:
            cards = [Text("No alarms", resource_id="alarms_empty_view", align="center", color="#444746",
                          padding=(24, 48))]
        cards.append(Spacer(height=96))  # room at the end of the list to scroll the last card above the button
        # The "Add alarm" button floats over the bottom of the list, as in the real app (so a dump shows the
        # list's bounds running under it).
        return Column(
            ScrollList(cards, "main:alarms", resource_id="alarm_recycler_view"),
            self._fab("Add alarm", self.new_alarm, "+", overlay=True),
            weight=1,
        )

    def _alarm_card(self, a: dict[str, Any]) -> View:
        aid = a["_id"]
        expanded = self.expanded == aid
        time_text = format_time(a["hour"], a["minutes"], self._twenty_four())
        summary = days_summary(a["days"]) or ("Not scheduled" if not a["enabled"] else self._next_day_word(a))
        # In the order a dump lists them: the label line with the expand arrow at the top right, then the time
        # with the repeat days under it, then the on/off switch at the right of both.
        if expanded:
            label: View = View(cls="android.widget.TextView", text=a["label"] or "Add label",
                               resource_id="edit_label", clickable=True, focusable=True, size=14, weight=1,
                               content_desc=f"Label {a['label']}" if a["label"] else "No label specified",
                               padding=(0.0, 12.0), on_click=lambda: self.edit_label(aid))
        elif a["label"]:
            label = Text(a["label"], resource_id="label", size=14, color="#444746", padding=(0, 12), weight=1,
                         content_desc=f"Label {a['label']}")
        else:
            label = Spacer(weight=1)
        parts: list[View | None] = [
            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, children=[
                label,
                ImageButton("Collapse alarm" if expanded else "Expand alarm", lambda: self.toggle_expand(aid),
                            resource_id="arrow", icon="v"),
            ]),
            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, children=[
                Column(
                    View(cls="android.widget.TextView", text=time_text, resource_id="digital_clock", clickable=True,
                         focusable=True, size=40, padding=(0.0, 4.0), on_click=lambda: self.edit_alarm_time(aid)),
                    Text(summary, resource_id="days_of_week", size=14, color="#444746", padding=(0, 8)),
                    weight=1),
                Switch(a["enabled"], lambda: self.toggle_alarm(aid), resource_id="onoff"),
            ]),
        ]
        if expanded:
            days = [View(cls="android.widget.ToggleButton", text=letter, content_desc=name, resource_id="day_button",
                         checkable=True, checked=bool(a["days"] & bit), clickable=True, focusable=True, weight=1,
                         height=48, align="center", on_click=lambda bit=bit: self.toggle_day(aid, bit))
                    for letter, name, bit in DAYS]
            parts += [
                View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, resource_id="repeat_days",
                     children=days),
                View(cls="android.widget.TextView", text=a["ringtone"], resource_id="choose_ringtone",
                     content_desc=f"Ringtone {a['ringtone']}", clickable=True, focusable=True, icon="R",
                     min_height=48, padding=(0.0, 12.0),
                     on_click=lambda: self.show_dialog("ringtone", alarm_id=aid)),
                CheckBox(a["vibrate"], lambda: self.toggle_vibrate(aid), text="Vibrate", resource_id="vibrate_onoff"),
                View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, children=[
                    Button("Delete", lambda: self.delete_alarm(aid), resource_id="delete", background=None)]),
            ]
        # The card itself takes no touch (the time, switch, arrow and rows inside do), so a dump lists its
        # views straight under the list, one alarm after another.
        return View(cls="android.widget.FrameLayout", resource_id="alarm_card", padding=(16.0, 8.0),
                    background="#f0f4f9", children=[Column(*parts, cls="android.widget.LinearLayout")])

    def _next_day_word(self, a: dict[str, Any]) -> str:
        now = self.phone.now()
        return "Today" if (a["hour"], a["minutes"]) > (now.hour, now.minute) else "Tomorrow"

    def toggle_expand(self, alarm_id: int) -> None:
        """Expand or collapse an alarm card."""
        self.expanded = None if self.expanded == alarm_id else alarm_id

    def toggle_alarm(self, alarm_id: int) -> None:
        """The card's on/off switch."""
        a = self.alarm(alarm_id)
        if a is None:
            return
        a["enabled"] = not a["enabled"]
        if a["enabled"]:
            self.toast(self._alarm_set_message(a))

    def toggle_day(self, alarm_id: int, bit: int) -> None:
        """Toggle one repeat day of an alarm."""
        a = self.alarm(alarm_id)
        if a is not None:
            a["days"] ^= bit

    def toggle_vibrate(self, alarm_id: int) -> None:
        """The expanded card's Vibrate check box."""
        a = self.alarm(alarm_id)
        if a is not None:
            a["vibrate"] = not a["vibrate"]

    def delete_alarm(self, alarm_id: int) -> None:
        """The expanded card's Delete button (no confirmation, as in the real app)."""
        self.alarms = [a for a in self.alarms if a["_id"] != alarm_id]
        if self.expanded == alarm_id:
            self.expanded = None
        self.toast("Alarm deleted")

    def _alarm_set_message(self, a: dict[str, Any]) -> str:
        now = self.phone.now()
        target = now.replace(hour=a["hour"], minute=a["minutes"], second=0, microsecond=0)
        if target <= now:
            target += _dt.timedelta(days=1)
        minutes = int((target - now).total_seconds() // 60) + (1 if (target - now).seconds % 60 else 0)
        h, m = divmod(minutes, 60)
        hs = f"{h} hour{'s' if h != 1 else ''}"
        ms = f"{m} minute{'s' if m != 1 else ''}"
        if h and m:
            return f"Alarm set for {hs} and {ms} from now."
        return f"Alarm set for {hs if h else ms} from now."

    # time picker
    def new_alarm(self) -> None:
        """The "Add alarm" FAB: an empty "Enter time" picker."""
        self.picker = {"hour": "", "minute": "", "pm": False}
        self.show_dialog("time_picker", alarm_id=None)

    def edit_alarm_time(self, alarm_id: int) -> None:
        """Tapping a card's time: the picker filled with the alarm's time."""
        a = self.alarm(alarm_id)
        if a is None:
            return
        if self._twenty_four():
            hour = str(a["hour"])
        else:
            hour = str(a["hour"] % 12 or 12)
        self.picker = {"hour": hour, "minute": f"{a['minutes']:02d}", "pm": a["hour"] >= 12}
        self.show_dialog("time_picker", alarm_id=alarm_id)

    def _set_picker(self, key: str, value: str) -> None:
        self.picker[key] = value

    def _set_pm(self, pm: bool) -> None:
        self.picker["pm"] = pm

    def dialog_time_picker(self, alarm_id: int | None) -> View:
        """The "Enter time" picker: Hour and Minute fields, AM/PM (12-hour phones), Cancel/OK."""
        p = self.picker
        fields = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, padding=(24.0, 8.0), children=[
            Column(EditText(p["hour"], lambda v: self._set_picker("hour", v), hint="Hour", key="picker_hour",
                            resource_id="material_hour_text_input"),
                   Text("Hour", resource_id="material_label", size=12, color="#444746", padding=(4, 2)),
                   weight=1),
            Text(":", size=36, padding=(8, 0), width=40),
            Column(EditText(p["minute"], lambda v: self._set_picker("minute", v), hint="Minute",
                            key="picker_minute", resource_id="material_minute_text_input"),
                   Text("Minute", resource_id="material_label", size=12, color="#444746", padding=(4, 2)),
                   weight=1),
        ])
        if not self._twenty_four():
            fields.children.append(Column(
                RadioButton(not p["pm"], lambda: self._set_pm(False), text="AM", resource_id="material_clock_period_am_button"),
                RadioButton(p["pm"], lambda: self._set_pm(True), text="PM", resource_id="material_clock_period_pm_button"),
                resource_id="material_clock_period_toggle", width=96))
        return Dialog("Enter time", fields, [("Cancel", self.close_dialog),
                                             ("OK", lambda: self.confirm_time(alarm_id))],
                      button_ids=["material_timepicker_cancel_button", "material_timepicker_ok_button"])

    def confirm_time(self, alarm_id: int | None) -> None:
        """The picker's OK: validate the fields, then create or update the alarm."""
        hour_s, minute_s = self.picker["hour"].strip(), self.picker["minute"].strip()
        if not hour_s.isdigit() or not (minute_s.isdigit() or minute_s == ""):
            self.toast("Enter a valid time")
            return
        hour, minutes = int(hour_s), int(minute_s or "0")
        if self._twenty_four():
            ok = 0 <= hour <= 23
        else:
            ok = 1 <= hour <= 12
            hour = hour % 12 + (12 if self.picker["pm"] else 0)
        if not ok or not 0 <= minutes <= 59:
            self.toast("Enter a valid time")
            return
        self.phone.set_focus(None)
        self.close_dialog()
        if alarm_id is None:
            a = self.add_alarm(hour, minutes)
        else:
            a = self.alarm(alarm_id)
            if a is None:
                return
            a.update(hour=hour, minutes=minutes, enabled=True)
        self.expanded = a["_id"]
        self.toast(self._alarm_set_message(a))

    # alarm sound
    def dialog_ringtone(self, alarm_id: int) -> View:
        """The alarm sound list (Android's alarm sounds); a tap picks one and closes it."""
        items = [ListItem(name, "", lambda n=name: self.set_ringtone(alarm_id, n), resource_id="ringtone_item",
                          title_id="ringtone_name") for name in RINGTONES]
        return Dialog("Alarm sound", Column(*items, resource_id="ringtone_list"), [("Cancel", self.close_dialog)],
                      button_ids=NEGATIVE_POSITIVE[:1])

    def set_ringtone(self, alarm_id: int, name: str) -> None:
        """Give an alarm the sound ``name`` (one of :data:`RINGTONES`)."""
        if name not in RINGTONES:
            raise ValueError(f"unknown alarm sound {name!r}; known: {', '.join(RINGTONES)}")
        a = self.alarm(alarm_id)
        if a is not None:
            a["ringtone"] = name
        self.close_dialog()

    # label dialog
    def edit_label(self, alarm_id: int) -> None:
        """"Add label": a dialog with a text field."""
        a = self.alarm(alarm_id)
        if a is None:
            return
        self.label_draft = a["label"]
        self.show_dialog("label", alarm_id=alarm_id)
        self.phone.set_focus("alarm_label")

    def _set_label_draft(self, value: str) -> None:
        self.label_draft = value

    def dialog_label(self, alarm_id: int) -> View:
        """The alarm label dialog."""
        return Dialog("Label", EditText(self.label_draft, self._set_label_draft, hint="Label", key="alarm_label",
                                        resource_id="label_input_field",
                                        on_submit=lambda: self.confirm_label(alarm_id)),
                      [("Cancel", self.close_dialog), ("OK", lambda: self.confirm_label(alarm_id))],
                      button_ids=NEGATIVE_POSITIVE)

    def confirm_label(self, alarm_id: int) -> None:
        """The label dialog's OK (or Enter): store the label."""
        a = self.alarm(alarm_id)
        if a is not None:
            a["label"] = self.label_draft.strip()
        self.phone.set_focus(None)
        self.close_dialog()

    # --- world clock ----------------------------------------------------------------------------
    def _tab_clock(self) -> View:
        now = self.phone.now()
        rows: list[View] = [
            Text(format_time(now.hour, now.minute, self._twenty_four()), resource_id="digital_clock", size=56,
                 align="center", padding=(16, 16)),
            Text(now.strftime("%a, %b ") + str(now.day), resource_id="date", size=16, align="center",
                 color="#444746"),
        ]
        for name in self.cities:
            offset = next((o for c, _, o in CITIES if c == name), 0.0)
            t = now + _dt.timedelta(hours=offset - LOCAL_UTC_OFFSET)
            diff = offset - LOCAL_UTC_OFFSET
            rel = "Today" if t.date() == now.date() else ("Tomorrow" if t.date() > now.date() else "Yesterday")
            hrs = f"{abs(diff):g} hr"
            sub = f"{rel}, {hrs} {'ahead' if diff > 0 else 'behind'}" if diff else rel
            rows.append(ListItem(name, sub, None, resource_id="world_clock", title_id="city_name",
                                 subtitle_id="city_day", on_long_click=lambda n=name: self.show_dialog(
                                     "remove_city", city=n),
                                 trailing=Text(format_time(t.hour, t.minute, self._twenty_four()),
                                               resource_id="digital_clock", size=24, padding=(8, 8))))
        return Column(
            ScrollList(rows, "main:cities", resource_id="cities"),
            self._fab("Add city", self.open_city_picker, "+"),
            weight=1,
        )

    def open_city_picker(self) -> None:
        """The Add city button: a searchable city list."""
        self.city_query = ""
        self.push("cities")
        self.phone.set_focus("city_search")

    def _set_city_query(self, value: str) -> None:
        self.city_query = value
        self.scroll["cities:list"] = 0
        self.loading = self.google and bool(value.strip())

    def build_cities(self) -> View:
        """The city search page of the Clock tab."""
        if self.google:
            return self._build_cities_google()
        q = self.city_query.strip().lower()
        items = [ListItem(name, country, lambda n=name: self.add_city(n), resource_id="city_item",
                          title_id="city_name", subtitle_id="city_country")
                 for name, country, _ in CITIES if not q or q in name.lower()]
        return Column(
            View(cls="android.view.ViewGroup", orientation=HORIZONTAL, height=64, padding=(4.0, 8.0),
                 resource_id="toolbar", children=[
                     ImageButton("Navigate up", self._close_cities, icon="<"),
                     EditText(self.city_query, self._set_city_query, hint="Search for a city", key="city_search",
                              resource_id="search_src_text", weight=1)]),
            ScrollList(items or [Text("No results", padding=(24, 24))], "cities:list", resource_id="cities_list"),
            weight=1,
        )

    def _close_cities(self) -> None:
        self.phone.set_focus(None)
        self.pop()

    def add_city(self, name: str) -> None:
        """Add a world clock and return to the Clock tab."""
        if name not in self.cities:
            self.cities.append(name)
        self._close_cities()

    def dialog_remove_city(self, city: str) -> View:
        """Long-press on a world clock: remove it."""
        return Dialog(f"Remove {city}?", None, [("Cancel", self.close_dialog),
                                                 ("Remove", lambda: self._remove_city(city))],
                      button_ids=NEGATIVE_POSITIVE)

    def _remove_city(self, name: str) -> None:
        self.cities = [c for c in self.cities if c != name]
        self.close_dialog()

    # --- timer ----------------------------------------------------------------------------------
    def _tab_timer(self) -> View:
        if not self.timer_setup and self.timers:
            return self._timer_running()
        h, m, s = timer_setup_parts(self.timer_digits)
        key_height = self._keypad_row_height()
        keys: list[View] = []
        layout = (("1", "2", "3"), ("4", "5", "6"), ("7", "8", "9"), ("00", "0", "del"))
        for row in layout:
            cells: list[View] = []
            for k in row:
                if k == "del":
                    cells.append(ImageButton("Delete", self._timer_delete_digit, resource_id="timer_setup_delete",
                                             icon="<", weight=1, width=None, height=key_height))
                else:
                    cells.append(Button(k, lambda k=k: self._timer_digit(k), resource_id=f"timer_setup_digit_{k}",
                                        background=None, weight=1, height=key_height))
            keys.append(View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, padding=(32.0, 0.0),
                             children=cells))
        body: list[View | None] = [
            Spacer(height=24),
            View(cls="android.widget.TextView", text=f"{h:02d}h {m:02d}m {s:02d}s",
                 content_desc=f"{h} hours, {m} minutes, {s} seconds", resource_id="timer_setup_time", size=44,
                 align="center", height=96),
            Spacer(height=16),
            *keys,
            Spacer(weight=1),
        ]
        if self.timers:
            body.insert(0, View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, children=[
                Button("Cancel", self._timer_back_to_list, resource_id="timer_cancel", background=None)]))
        if self.timer_digits.strip("0"):
            body.append(self._fab("Start", self.start_timer, ">"))
        else:
            body.append(Spacer(height=96))
        return Column(*body, weight=1)

    def _keypad_row_height(self) -> float:
        """The timer keypad's row height in dp: 88, or less on a screen too short for four such rows
        between the time display and the Start button (the real keypad shrinks to fit as well)."""
        phone = self.phone
        screen_dp = (phone.height - phone.status_bar_height - phone.nav_bar_height) / phone.scale
        spare = screen_dp - 64 - 80 - (24 + 96 + 16 + 96) - (48 if self.timers else 0)
        return max(36.0, min(88.0, spare / 4))

    def _timer_digit(self, k: str) -> None:
        digits = (self.timer_digits + k).lstrip("0")
        if len(digits) <= 6:
            self.timer_digits = digits

    def _timer_delete_digit(self) -> None:
        self.timer_digits = self.timer_digits[:-1]

    def _timer_back_to_list(self) -> None:
        self.timer_digits = ""
        self.timer_setup = False

    def start_timer(self) -> None:
        """The keypad's Start FAB: create a running timer from the digits."""
        h, m, s = timer_setup_parts(self.timer_digits)
        length = ((h * 60 + m) * 60 + s) * 1000
        if length <= 0:
            return
        self.timers.append({"_id": self.next_timer_id, "length": length, "remaining": length, "state": "running",
                            "started": self.now_ms, "label": ""})
        self.next_timer_id += 1
        self.timer_digits = ""
        self.timer_setup = False

    def _timer_running(self) -> View:
        cards: list[View] = []
        for t in self.timers:
            left = self.timer_remaining(t)
            state = "expired" if left <= 0 else t["state"]
            tid = t["_id"]
            cards.append(View(cls="android.widget.FrameLayout", resource_id="timer_item", padding=(16.0, 16.0),
                              background="#f0f4f9", children=[Column(
                                  Text(t["label"] or "Timer", resource_id="timer_label", size=14, color="#444746"),
                                  Text(format_hms(max(0, left)) if state != "expired" else "Time's up",
                                       resource_id="timer_time_text", size=48, align="center", padding=(0, 12)),
                                  View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, children=[
                                      Button("Reset", lambda tid=tid: self.reset_timer(tid), resource_id="reset_add",
                                             background=None) if state != "running" else
                                      Button("+1:00", lambda tid=tid: self.add_minute(tid), resource_id="reset_add",
                                             background=None),
                                      Spacer(weight=1),
                                      ImageButton("Pause" if state == "running" else "Start",
                                                  lambda tid=tid: self.toggle_timer(tid), resource_id="play_pause",
                                                  icon="||" if state == "running" else ">"),
                                      ImageButton("Delete", lambda tid=tid: self.delete_timer(tid),
                                                  resource_id="timer_delete", icon="x"),
                                  ]),
                              )]))
        return Column(
            ScrollList(cards, "main:timers", resource_id="timer_view_pager"),
            self._fab("Add timer", self._timer_new, "+"),
            weight=1,
        )

    def _timer_new(self) -> None:
        self.timer_digits = ""
        self.timer_setup = True

    def _timer(self, timer_id: int) -> dict[str, Any] | None:
        return next((t for t in self.timers if t["_id"] == timer_id), None)

    def toggle_timer(self, timer_id: int) -> None:
        """Pause a running timer or resume a paused one."""
        t = self._timer(timer_id)
        if t is None:
            return
        if t["state"] == "running":
            t["remaining"] = self.timer_remaining(t)
            t["state"] = "paused"
        else:
            if t["remaining"] <= 0:
                t["remaining"] = t["length"]
            t["state"] = "running"
            t["started"] = self.now_ms

    def add_minute(self, timer_id: int) -> None:
        """A running timer's +1:00 button."""
        t = self._timer(timer_id)
        if t is not None:
            t["remaining"] += 60_000
            t["length"] += 60_000

    def reset_timer(self, timer_id: int) -> None:
        """A paused timer's Reset button: back to its full length, paused."""
        t = self._timer(timer_id)
        if t is not None:
            t["remaining"] = t["length"]
            t["state"] = "paused"

    def delete_timer(self, timer_id: int) -> None:
        """Remove a timer; with none left the keypad shows again."""
        self.timers = [t for t in self.timers if t["_id"] != timer_id]
        if not self.timers:
            self.timer_setup = True
            self.timer_digits = ""

    # --- stopwatch ------------------------------------------------------------------------------
    def _tab_stopwatch(self) -> View:
        sw = self.stopwatch
        elapsed = self.stopwatch_elapsed()
        laps = [ListItem(f"# {i + 1}", format_stopwatch(lap), None, resource_id="lap_item", title_id="lap_number",
                         subtitle_id="lap_time")
                for i, lap in reversed(list(enumerate(sw["laps"])))]
        controls: list[View] = [Spacer(weight=1)]
        if sw["state"] == "running":
            controls.append(ImageButton("Lap", self.lap, resource_id="stopwatch_lap", icon="L", width=64, height=64))
            controls.append(Spacer(height=1, weight=0.3))
            controls.append(ImageButton("Pause", self.toggle_stopwatch, resource_id="fab", icon="||", width=96,
                                        height=96))
        else:
            if sw["state"] == "paused":
                controls.append(ImageButton("Reset", self.reset_stopwatch, resource_id="stopwatch_reset", icon="R",
                                            width=64, height=64))
                controls.append(Spacer(height=1, weight=0.3))
            controls.append(ImageButton("Start", self.toggle_stopwatch, resource_id="fab", icon=">", width=96,
                                        height=96))
        controls.append(Spacer(weight=1))
        return Column(
            View(cls="android.widget.TextView", text=format_stopwatch(elapsed), resource_id="stopwatch_time_text",
                 size=56, align="center", height=160),
            ScrollList(laps, "main:laps", resource_id="laps_list"),
            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=112, children=controls),
            weight=1,
        )

    def toggle_stopwatch(self) -> None:
        """Start or pause the stopwatch."""
        sw = self.stopwatch
        if sw["state"] == "running":
            sw["accumulated"] = self.stopwatch_elapsed()
            sw["state"] = "paused"
        else:
            sw["started"] = self.now_ms
            sw["state"] = "running"

    def lap(self) -> None:
        """Record a lap (the time since the previous lap) while running."""
        sw = self.stopwatch
        if sw["state"] == "running":
            done = sum(sw["laps"])
            sw["laps"].append(self.stopwatch_elapsed() - done)

    def reset_stopwatch(self) -> None:
        """Back to 00:00.00 with no laps."""
        self.stopwatch = {"state": "reset", "accumulated": 0, "started": 0, "laps": []}

    # --- content provider -----------------------------------------------------------------------
    @staticmethod
    def _table(uri: str) -> str:
        rest = uri.split("://", 1)[-1]
        _, _, path = rest.partition("/")
        table = path.strip("/").split("/")[0]
        if table in ("alarms", "alarm_templates"):
            return "alarms"
        if table in ("timers", "stopwatch", "cities", "settings"):
            return table
        raise ValueError(f"unknown clock uri {uri!r}; tables: alarms, timers, stopwatch, cities, settings")

    def _alarm_row(self, a: dict[str, Any]) -> Row:
        return {"_id": a["_id"], "hour": a["hour"], "minutes": a["minutes"], "enabled": int(a["enabled"]),
                "daysofweek": a["days"], "vibrate": int(a["vibrate"]), "label": a["label"],
                "ringtone": a["ringtone"]}

    def content_query(self, uri: str) -> list[Row]:
        table = self._table(uri)
        if table == "alarms":
            return [self._alarm_row(a) for a in self.sorted_alarms()]
        if table == "timers":
            rows = []
            for t in self.timers:
                left = self.timer_remaining(t)
                rows.append({"_id": t["_id"], "length": t["length"], "remaining": max(0, left),
                             "state": "expired" if left <= 0 else t["state"], "label": t["label"]})
            return rows
        if table == "cities":
            return [{"_id": i, "name": name} for i, name in enumerate(self.cities, 1)]
        if table == "settings":
            return [{"name": k, "value": v} for k, v in self.prefs.items()]
        return [{"_id": 1, "state": self.stopwatch["state"], "elapsed": self.stopwatch_elapsed(),
                 "laps": len(self.stopwatch["laps"])}]

    def content_insert(self, uri: str, values: Row) -> str:
        if self._table(uri) == "cities":
            name = str(values.get("name", ""))
            if name not in {c for c, _, _ in CITIES}:
                raise ValueError(f"unknown city {name!r}; known: {', '.join(c for c, _, _ in CITIES)}")
            if name not in self.cities:
                self.cities.append(name)
            self.phone.invalidate()
            return f"content://{CLOCK_PKG}/cities/{self.cities.index(name) + 1}"
        if self._table(uri) != "alarms":
            raise ValueError(f"insert is only supported on content://{CLOCK_PKG}/alarms, not {uri}")
        if "hour" not in values:
            raise ValueError("inserting an alarm needs `hour` (0-23)")
        a = self.add_alarm(int_column(values, "hour", 0), int_column(values, "minutes", 0),
                           enabled=bool(int_column(values, "enabled", 1)), days=int_column(values, "daysofweek", 0),
                           label=str(values.get("label", "")), vibrate=bool(int_column(values, "vibrate", 1)))
        self.phone.invalidate()
        return f"content://{CLOCK_PKG}/alarms/{a['_id']}"

    def content_update(self, uri: str, values: Row, match: RowMatch) -> int:
        if self._table(uri) != "alarms":
            raise ValueError(f"update is only supported on content://{CLOCK_PKG}/alarms, not {uri}")
        changed = 0
        for a in self.alarms:
            if not match(self._alarm_row(a)):
                continue
            hour, minutes = int_column(values, "hour", a["hour"]), int_column(values, "minutes", a["minutes"])
            if not (0 <= hour <= 23 and 0 <= minutes <= 59):
                raise ValueError(f"invalid alarm time {hour}:{minutes:02d}")
            a.update(hour=hour, minutes=minutes, enabled=bool(int_column(values, "enabled", int(a["enabled"]))),
                     days=int_column(values, "daysofweek", a["days"]), vibrate=bool(int_column(values, "vibrate", int(a["vibrate"]))),
                     label=str(values.get("label", a["label"])), ringtone=str(values.get("ringtone", a["ringtone"])))
            changed += 1
        self.phone.invalidate()
        return changed

    def content_delete(self, uri: str, match: RowMatch) -> int:
        table = self._table(uri)
        if table == "alarms":
            keep = [a for a in self.alarms if not match(self._alarm_row(a))]
            n = len(self.alarms) - len(keep)
            self.alarms = keep
            if self.expanded is not None and self.alarm(self.expanded) is None:
                self.expanded = None
        elif table == "timers":
            rows = {r["_id"]: r for r in self.content_query(uri)}
            keep = [t for t in self.timers if not match(rows[t["_id"]])]
            n = len(self.timers) - len(keep)
            self.timers = keep
            if not self.timers:
                self.timer_setup = True
                self.timer_digits = ""
        elif table == "settings":
            rows = self.content_query(uri)
            n = 0
            for r in rows:
                if match(r):
                    self.prefs[r["name"]] = DEFAULT_PREFS[r["name"]]
                    n += 1
        elif table == "cities":
            rows = self.content_query(uri)
            keep = [r["name"] for r in rows if not match(r)]
            n = len(rows) - len(keep)
            self.cities = keep
        else:
            n = 1 if match(self.content_query(uri)[0]) else 0
            if n:
                self.reset_stopwatch()
        self.phone.invalidate()
        return n
