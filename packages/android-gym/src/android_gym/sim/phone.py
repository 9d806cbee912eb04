"""``SimPhone``: a small Android-like phone in Python, driven by the same shell commands as a real one.

It holds installed apps (every ``@register_app`` class in :mod:`android_gym.sim.apps` by default),
the foreground app and recents, system settings, an in-memory /sdcard, a frozen clock that ticks
a little per input, focus and the soft keyboard, the clipboard, toasts, and the windows a
uiautomator dump shows (app, dialog, keyboard, status bar; the navigation is by gestures, as on the AndroidWorld
emulator, so the bottom strip has no buttons). Every input rebuilds
the frame from app state; dumps and screenshots are cached until the next change.
"""

from __future__ import annotations

import copy
import datetime as _dt
import functools
import importlib
import pickle
import pkgutil
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from android_gym.sim.app import APP_REGISTRY, App
from android_gym.sim.constants import LAUNCHER_PACKAGE, START_TIME
from android_gym.sim.files import FileSystem
from android_gym.sim.fling import scroll_travel
from android_gym.sim.hierarchy import XML_FOOTER, XML_HEADER, Entry, Window, collect, to_xml, xml_nodes
from android_gym.sim.keyboard import IME_PACKAGE, KEYBOARD_HEIGHT_DP, KEYBOARD_MAX_SHARE, build_keyboard
from android_gym.sim.shade import build_shade, wifi_desc
from android_gym.sim.shell import Shell
from android_gym.sim.view import HORIZONTAL, Bounds, Button, Image, Text, View, layout, measure

SYSTEMUI_PACKAGE = "com.android.systemui"
POPUP_WINDOW_CLASS = "android.widget.PopupWindow$PopupDecorView"  # a popup (the text toolbar): no modal window
SPOKEN_CLOCK_OFFSET = _dt.timedelta(hours=-4)
"""The status bar clock's content description on the AndroidWorld emulator reads the time in the zone the image
booted in (US Eastern, daylight time in Oct 2023: "11:34" beside a shown "15:34" in every real episode of
tests/android_gym/data/real_episodes; the host's zone, it differs on other hosts: ``SimPhone.spoken_clock_offset``)."""
STATUS_BAR_DP = 48.75  # 128 px at 420 dpi: the Pixel 6 image's status bar (with its display cutout)
BRIGHTNESS_DIALOG = 3  # ``shade`` while System UI's brightness dialog is up
GESTURE_BAR_DP = 24.0  # 63 px: the gesture navigation handle's strip
SYSTEM_NOTIFICATIONS = ("Android System notification: ", "Settings notification: Virtual SD card")
"""The notification icons the AndroidWorld emulator's status bar shows, in its order: the Android System group
(whose summary has no text, so its description ends in ": "; the shade lists it as "Android System" with
"Serial console enabled") and then the virtual SD card. Emulator runs disagree; this is the common case: 12 of
the 21 real episodes in tests/android_gym/data/real_episodes (101 of their 179 app screens) show exactly these
two; 3 show the Android System icon alone, 3 the SD card then "Android System notification: Serial console
enabled" (the ungrouped notification), 2 that pair the other way round, 1 the SD card then the group."""
MOBILE_SIGNAL_DESC = "Phone signal full."
"""The mobile signal icon's description on the AndroidWorld emulator in 12 of the 21 real episodes (the others:
"Phone two bars.", "one bar", "three bars": the emulated signal strength varies from run to run)."""
TICK_MS = 2000  # simulated time per input event
TOAST_TICKS = 2  # a toast stays for this many input events
LONG_PRESS_MS = 500
TOUCH_SLOP = 24  # px a finger may move and still tap
BACK_GESTURE_DP = 24.0  # a horizontal swipe starting this close to a side edge is the system's Back gesture

DEFAULT_SETTINGS: dict[str, dict[str, str]] = {
    "global": {"wifi_on": "1", "bluetooth_on": "0", "airplane_mode_on": "0", "mobile_data": "1",
               "auto_time": "0", "adb_enabled": "1", "device_name": "Pixel 6", "stay_on_while_plugged_in": "0",
               "window_animation_scale": "0.0", "transition_animation_scale": "0.0",
               "animator_duration_scale": "0.0", "zen_mode": "0"},
    "system": {"screen_brightness": "102", "screen_brightness_mode": "0", "screen_off_timeout": "2147483647",
               "font_scale": "1.0", "time_12_24": "12", "accelerometer_rotation": "1", "volume_ring": "5",
               "volume_music": "7", "volume_alarm": "6", "haptic_feedback_enabled": "1"},
    "secure": {"ui_night_mode": "1", "location_mode": "3", "android_id": "9774d56d682e549c",
               "default_input_method": "com.google.android.inputmethod.latin/"
                                       "com.android.inputmethod.latin.LatinIME",
               "bluetooth_name": "Pixel 6", "accessibility_enabled": "0"},
}

KEYCODES: dict[str, int] = {
    "KEYCODE_HOME": 3, "KEYCODE_BACK": 4, "KEYCODE_DPAD_UP": 19, "KEYCODE_DPAD_DOWN": 20,
    "KEYCODE_VOLUME_UP": 24, "KEYCODE_VOLUME_DOWN": 25, "KEYCODE_POWER": 26, "KEYCODE_TAB": 61,
    "KEYCODE_SPACE": 62, "KEYCODE_ENTER": 66, "KEYCODE_DEL": 67, "KEYCODE_MENU": 82, "KEYCODE_SEARCH": 84,
    "KEYCODE_ESCAPE": 111, "KEYCODE_FORWARD_DEL": 112, "KEYCODE_MOVE_HOME": 122, "KEYCODE_MOVE_END": 123,
    "KEYCODE_APP_SWITCH": 187, "KEYCODE_WAKEUP": 224, "KEYCODE_SLEEP": 223,
}


def _input_event(method: Callable[..., None]) -> Callable[..., None]:
    """Wrap a public input method: time ticks once per outermost input and the frame is rebuilt after it."""

    @functools.wraps(method)
    def wrapper(self: SimPhone, *args: Any, **kwargs: Any) -> None:
        outer = self._input_depth == 0
        if outer:
            self._tick()
        self._input_depth += 1
        try:
            method(self, *args, **kwargs)
        finally:
            self._input_depth -= 1
            if outer:
                self.invalidate()

    return wrapper


def discover_apps() -> dict[str, type[App]]:
    """Import every module of :mod:`android_gym.sim.apps` and return the app registry (package -> class)."""
    import android_gym.sim.apps as apps_pkg

    for info in sorted(pkgutil.iter_modules(apps_pkg.__path__), key=lambda m: m.name):
        importlib.import_module(f"{apps_pkg.__name__}.{info.name}")
    return dict(APP_REGISTRY)


@dataclass
class RenderedFrame:
    """One rendered moment: the laid-out windows, visible nodes in draw order and the editable fields."""

    windows: list[Window]
    entries: list[Entry]
    editables: dict[str, View]
    app_area: Bounds
    dialog_area: Bounds | None
    keyboard_area: Bounds | None
    _xml: str | None = None
    screenshot: Any = None
    extra: dict[str, Any] = field(default_factory=dict)
    known_xml: list[tuple[int, int, str]] = field(default_factory=list)
    """(start, end, nodes XML) of whole windows in ``entries`` whose XML is already known (reused windows)."""

    @property
    def xml(self) -> str:
        """The uiautomator dump of this frame (built once)."""
        if self._xml is None:
            if not self.known_xml:
                self._xml = to_xml(self.entries)
            else:
                parts = [XML_HEADER]
                pos = 0
                for start, end, nodes in self.known_xml:
                    parts.append(xml_nodes(self.entries[pos:start]))
                    parts.append(nodes)
                    pos = end
                parts.append(xml_nodes(self.entries[pos:]))
                parts.append(XML_FOOTER)
                self._xml = "".join(parts)
        return self._xml


@dataclass(slots=True)
class _ReusedWindow:
    """A laid-out system window with its visible nodes and their XML, reused while its inputs stay the same."""

    window: Window
    entries: list[Entry]
    nodes_xml: str


class SimPhone:
    """A simulated Android 13 phone (Pixel 6 geometry by default).

    ``apps``: app classes or packages to install (None: every registered app). ``latency`` and
    ``faults`` are kept for the device wrapper (:class:`android_gym.sim.device.SimDevice`), which
    applies them; the phone itself is instant and never fails.
    """

    def __init__(self, width: int = 1080, height: int = 2400, density: int = 420, seed: int = 0,
                 latency: Any = None, faults: Any = None, apps: Iterable[type[App] | str] | None = None):
        if width < 320 or height < 480:
            raise ValueError(f"screen {width}x{height} is too small (min 320x480)")
        if density < 120:
            raise ValueError(f"density {density} is too low (min 120)")
        self.width = width
        self.height = height
        self.density = density
        self.scale = density / 160.0
        self.seed = seed
        self.latency = latency
        self.faults = faults
        self.rng = random.Random(seed)
        self.status_bar_height = round(STATUS_BAR_DP * self.scale)
        self.nav_bar_height = round(GESTURE_BAR_DP * self.scale)
        self.keyboard_height = min(round(KEYBOARD_HEIGHT_DP * self.scale), round(KEYBOARD_MAX_SHARE * height))
        registry = discover_apps()
        classes: list[type[App]] = []
        if apps is None:
            classes = list(registry.values())
        else:
            for a in apps:
                if isinstance(a, str):
                    if a not in registry:
                        raise ValueError(f"no simulated app with package {a!r}; known: {sorted(registry)}")
                    classes.append(registry[a])
                else:
                    classes.append(a)
            if LAUNCHER_PACKAGE in registry and all(c.package != LAUNCHER_PACKAGE for c in classes):
                classes.insert(0, registry[LAUNCHER_PACKAGE])
        self.snapshots: dict[str, bytes] = {}
        self._input_depth = 0
        self._reset_system_state()
        self.apps: dict[str, App] = {}
        for cls in sorted(classes, key=lambda c: c.package):
            self.apps[cls.package] = cls(self)
        if LAUNCHER_PACKAGE not in self.apps:
            raise ValueError("the launcher app is not installed")
        self._serve_databases()
        self.apps[LAUNCHER_PACKAGE].open()
        self._frame: RenderedFrame | None = None
        # What this emulator image shows whatever the task: its standing notifications' status bar icons (in order)
        # and its mobile signal. Emulator runs differ in both; the replay of a real episode copies its first
        # screen's (android_gym.replay.follow_real_device), a task never changes them.
        self.standing_notifications: tuple[str, ...] = SYSTEM_NOTIFICATIONS
        self.mobile_signal = MOBILE_SIGNAL_DESC
        # Also the host's: the zone the status bar clock's description reads the time in (the second held-out
        # source's emulator said "08:34" beside "15:34" in one run of 2025-12-13, "15:34" in another), and whether
        # the emulator's Wi-Fi reaches the internet (its status bar icon then lacks "No internet").
        self.spoken_clock_offset = SPOKEN_CLOCK_OFFSET
        self.wifi_internet = False
        # Whether this phone stands in for AndroidWorld's emulator (the AndroidWorld suite sets it): apps whose version
        # there differs from the one the sim models first show that version (Clock: Google Clock's layout; the sim's
        # own and AndroidLab's tasks keep AndroidLab's).
        self.android_world_emulator = False
        # Status bar, navigation bar and keyboard, keyed on everything they are built from (frames share them:
        # nothing changes a view or entry of a built frame).
        self._system_windows: dict[tuple, _ReusedWindow] = {}
        self.last_status = 0
        self._shell = Shell(self)

    # --- system state ----------------------------------------------------------------------------
    def _reset_system_state(self) -> None:
        self.settings: dict[str, dict[str, str]] = copy.deepcopy(DEFAULT_SETTINGS)
        self.files = FileSystem()
        self.clock_ms = 0
        self.foreground = LAUNCHER_PACKAGE
        self.recents: list[str] = []
        self.focus: str | None = None
        self.keyboard_shown = False
        self.keyboard_shift = False
        self.keyboard_symbols = False
        self.ime_composing = ""
        """The word typed on Gboard's keys since the last space, Enter or focus change (``input text`` composes
        nothing): Gboard's header shows its suggestions instead of its shortcuts while there is one."""
        self._shift_pending = False  # set_focus on a field the current frame does not hold yet
        # Gboard left up with no field to type into: after Enter in the launcher's search panel the emulator's
        # keyboard stays (its row of digits, Enter) and an app opened from the results opens under it; Back,
        # Home, a dialog or popup, or a field taking the focus ends it (MarkorMoveNote's real runs)
        self.ime_detached = False
        self.selection = False
        self.text_toolbar = False
        self.clipboard = ""
        self.timezone = "UTC"
        self.toasts: list[tuple[str, int]] = []
        self.shade = 0  # the notification shade: 0 closed, 1 open, 2 with Quick Settings expanded
        self.shade_toggled: set[str] = set()
        """Notifications whose Expand/Collapse was tapped: shown the other way from their default."""
        self.ticks = 0
        self.version = 0

    def now(self) -> _dt.datetime:
        """The simulated wall-clock time (frozen start in Oct 2023, advancing a little per input)."""
        return START_TIME + _dt.timedelta(milliseconds=self.clock_ms)

    def advance_clock(self, ms: int) -> None:
        """Move the simulated clock forward (``sleep`` and alarms use it)."""
        self.clock_ms += max(0, int(ms))
        front = self.apps.get(self.foreground)
        if front is not None and front.running:
            front.on_time_passed()
        self.invalidate()

    def settings_get(self, namespace: str, key: str) -> str | None:
        """A system setting as a string, or None when unset (``settings get`` prints "null")."""
        return self._namespace(namespace).get(key)

    def settings_put(self, namespace: str, key: str, value: str) -> None:
        """Write a system setting (apps and the status bar read it on the next frame)."""
        self._namespace(namespace)[key] = str(value)
        self.invalidate()

    def settings_delete(self, namespace: str, key: str) -> bool:
        """Remove a setting; True when it existed."""
        existed = self._namespace(namespace).pop(key, None) is not None
        self.invalidate()
        return existed

    def _namespace(self, namespace: str) -> dict[str, str]:
        try:
            return self.settings[namespace]
        except KeyError:
            raise ValueError(f"unknown settings namespace {namespace!r}; use system, secure or global") from None

    def app(self, package: str) -> App:
        """The installed app with this package (ValueError naming the installed ones otherwise)."""
        try:
            return self.apps[package]
        except KeyError:
            raise ValueError(f"package {package!r} is not installed; installed: {sorted(self.apps)}") from None

    def app_by_label(self, label: str) -> App | None:
        """The installed app whose launcher label matches ``label`` (case-insensitive), if any."""
        key = label.strip().lower()
        for a in self.apps.values():
            if a.label.lower() == key:
                return a
        return None

    @property
    def foreground_app(self) -> App:
        """The app whose window is on screen."""
        return self.apps[self.foreground]

    def current_activity(self) -> str:
        """``package/.Activity`` of the foreground window."""
        a = self.foreground_app
        act = a.current_activity()
        return f"{a.package}/{act}"

    # --- app switching ----------------------------------------------------------------------------
    def launch(self, package: str, fresh: bool = False, from_shell: bool = False) -> None:
        """Bring ``package`` to the front (cold-starting it unless it is running, or when ``fresh``).

        With ``from_shell`` (an activity started from the shell, ``am start`` or ``monkey``, as AndroidWorld's
        ``open_app`` does) the notification shade or System UI's dialog stays over it, as on the emulator (a launch
        from the phone's own UI closes the shade), and a running app whose main activity is single-task
        (``App.launch_clears_top``: Settings) comes back on its main page, as the emulator's Settings came back on its
        homepage, scrolled as it was left, after ``open_app``."""
        a = self.app(package)
        if not from_shell:
            self.shade = 0
        if fresh or not a.running or a.opened_by_system:
            a.open()
        elif from_shell and getattr(a, "launch_clears_top", False):
            while a.pop():
                pass
        self._switch_to(package)

    def _switch_to(self, package: str) -> None:
        if self.foreground != package:
            self._drop_focus()
            self.text_toolbar = False
        self.foreground = package
        if package != LAUNCHER_PACKAGE:
            if package in self.recents:
                self.recents.remove(package)
            self.recents.append(package)
        self.invalidate()

    def force_stop(self, package: str) -> None:
        """``am force-stop``: the app loses its UI state; if it was in front the launcher shows."""
        a = self.app(package)
        a.stop()
        if package in self.recents:
            self.recents.remove(package)
        if self.foreground == package:
            self.home()
        self.invalidate()

    def clear_app_data(self, package: str) -> None:
        """``pm clear``: the app (or the app behind a system provider package) is stopped and its data emptied."""
        a = self.app_for_package(package)
        self.force_stop(a.package)
        fresh = type(a)(self)
        fresh.clear_data()
        self.apps[a.package] = fresh
        self.invalidate()

    def _serve_databases(self) -> None:
        """Let the file system build each app's database files from that app's current state when read."""
        for pkg, a in self.apps.items():
            for db_path in a.databases:
                self.files.generate(db_path, lambda pkg=pkg, db_path=db_path: self.apps[pkg].dump_database(db_path))

    def app_for_package(self, package: str) -> App:
        """The app that owns ``package``'s data: the app itself, or the app serving that system provider."""
        if package in self.apps:
            return self.apps[package]
        for a in self.apps.values():
            if package in a.data_packages:
                return a
        raise ValueError(f"package {package!r} is not installed")

    def receive_sms(self, number: str, body: str) -> None:
        """An incoming text (the emulator console's ``sms send``): it lands in the SMS provider's inbox."""
        app = next((a for a in self.apps.values() if "sms" in a.authorities), None)
        if app is None:
            raise ValueError("no SMS app is installed to receive the message")
        app.content_insert("content://sms/inbox", {"address": number, "body": body, "read": 0})
        self.invalidate()

    def file_changed(self, path: str) -> None:
        """A file (or folder) was written from outside the apps (push, cp): apps whose data lives there reload it."""
        norm = self.files.norm(path)
        for a in self.apps.values():
            for db_path in a.databases:
                if db_path == norm or db_path.startswith(norm.rstrip("/") + "/"):
                    written = self.files.files.get(db_path)  # the written bytes, not a rebuild from the app
                    if written:
                        a.load_database(db_path, written)
        self.invalidate()

    def home(self) -> None:
        """Go to the launcher's home screen."""
        self.shade = 0
        self.ime_detached = False
        self._drop_focus()
        launcher = self.apps[LAUNCHER_PACKAGE]
        launcher.open()
        self._switch_to(LAUNCHER_PACKAGE)

    def show_recents(self) -> None:
        """The Overview screen (the launcher's recents page)."""
        self.ime_detached = False
        self._drop_focus()
        launcher = self.apps[LAUNCHER_PACKAGE]
        launcher.open()
        if hasattr(launcher, "build_recents"):
            launcher.push("recents")
        self._switch_to(LAUNCHER_PACKAGE)

    def back(self) -> None:
        """System Back: close the shade, hide the keyboard or text toolbar first, else the app's back, else leave
        the app."""
        if self.shade:
            self.shade = 0
        elif self.text_toolbar:
            self.text_toolbar = False
        elif self.keyboard_shown:
            self.keyboard_shown = False
        elif self.ime_detached:
            self.ime_detached = False
        elif not self.foreground_app.on_back():
            if self.foreground != LAUNCHER_PACKAGE:
                self._drop_focus()
                self.foreground_app.stop()
                if self.foreground in self.recents:
                    self.recents.remove(self.foreground)
                self.home()
        self.invalidate()

    # --- the notification shade ----------------------------------------------------------------
    def close_shade(self) -> None:
        """Close the notification shade."""
        self.shade = 0
        self.invalidate()

    def open_from_shade(self, package: str, action: str | None = None) -> None:
        """A shade button that opens an app (Manage, the Silent header): close the shade, launch ``package``
        (with the intent ``action``, as the emulator's System UI sends one, when given)."""
        self.shade = 0
        if package in self.apps:
            if action is None or not self.apps[package].handle_intent(action, None, {}):
                self.launch(package)
            else:  # a page System UI started in a task of its own: the app's icon later opens its main page
                self.apps[package].opened_by_system = True
                self._switch_to(package)
        self.invalidate()

    def toggle_shade_group(self, name: str) -> None:
        """A notification's Expand or Collapse button: show it the other way."""
        self.shade_toggled ^= {name}
        self.invalidate()

    def status_clock(self) -> tuple[str, str]:
        """The status bar clock: (shown, read out), the latter in the emulator's boot zone."""
        now = self.now()
        spoken = now + self.spoken_clock_offset
        if self.settings["system"].get("time_12_24") == "24":
            return now.strftime("%H:%M"), spoken.strftime("%H:%M")
        return f"{now.hour % 12 or 12}:{now.minute:02d}", f"{spoken.hour % 12 or 12}:{spoken.minute:02d}"

    # --- toasts, focus, text --------------------------------------------------------------------
    def toast(self, text: str) -> None:
        """Show a Toast for the next couple of inputs."""
        self.toasts.append((str(text), self.ticks + TOAST_TICKS))
        self.invalidate()

    def set_focus(self, key: str | None, keyboard: bool = True, shift: bool | None = None) -> None:
        """Focus the editable field with identity ``key`` (None clears focus) and show the keyboard. ``shift``
        sets Gboard's Shift instead of reading it off the field (a note opened with its cursor before its text)."""
        if key is not None:
            self.ime_detached = False
        if key is not None and shift is not None:
            self._shift_pending = False
            self.keyboard_shift, self.keyboard_symbols = shift, False
        elif key is not None and self._frame is not None and key in self._frame.editables:
            self._auto_shift(self._frame.editables.get(key))
        else:  # a field of a page not built yet (an editor opening focused): Shift follows it once it is
            self._shift_pending = key is not None
            if key is not None:
                self.keyboard_shift = self.keyboard_symbols = False
        self.focus = key
        self.ime_composing = ""
        self.keyboard_shown = bool(key) and keyboard
        self.selection = False
        self.text_toolbar = False
        self.invalidate()

    def _auto_shift(self, field: View | None) -> None:
        """Gboard's Shift as a field is tapped: on for an empty field that capitalises words (names) or sentences
        (a note's or a message's text), else off. Text put in with ``input text`` does not move it (Gboard does not
        see it), as the real episodes show."""
        self.keyboard_shift = field is not None and field.input_type in ("name", "sentence") and not field.text
        self.keyboard_symbols = False

    def _drop_focus(self) -> None:
        self.focus = None
        self.ime_composing = ""
        self.keyboard_shown = False
        self.selection = False
        self.text_toolbar = False
        self.keyboard_shift = False
        self.keyboard_symbols = False

    def focused_field(self) -> View | None:
        """The focused editable view of the current frame, if any."""
        if self.focus is None:
            return None
        return self.frame.editables.get(self.focus)

    @_input_event
    def type_text(self, text: str) -> None:
        """Type ``text`` into the focused field (replacing a selection); no field focused: nothing happens."""
        self.ime_composing = ""
        fieldv = self.focused_field()
        if fieldv is None or fieldv.on_text is None or not fieldv.enabled:
            return
        for i, part in enumerate(text.split("\n")):
            if i:
                self._enter()
                fieldv = self.focused_field()
                if fieldv is None or fieldv.on_text is None:
                    return
            if part:
                new = part if self.selection else fieldv.text + part
                self.selection = False
                self.text_toolbar = False
                fieldv.on_text(new)
                self.invalidate()
                fieldv = self.focused_field()
                if fieldv is None:
                    return

    def _delete(self) -> None:
        fieldv = self.focused_field()
        if fieldv is None or fieldv.on_text is None:
            return
        new = "" if self.selection else fieldv.text[:-1]
        self.selection = False
        self.text_toolbar = False
        fieldv.on_text(new)
        self.invalidate()

    def _enter(self) -> None:
        fieldv = self.focused_field()
        if fieldv is None:
            return
        if fieldv.on_submit is not None:
            self.keyboard_shown = False
            fieldv.on_submit()
            self._caps_after_enter(fieldv, fieldv.text)
        elif fieldv.max_lines != 1 and fieldv.on_text is not None:
            new = ("" if self.selection else fieldv.text) + "\n"
            fieldv.on_text(new)
            self.selection = False
            self._caps_after_enter(fieldv, new)
        else:  # a single-line field: Enter moves to the next field down (Android's focus search), else closes
            keys = list(self.frame.editables)
            at = keys.index(self.focus) if self.focus in keys else -1
            if 0 <= at < len(keys) - 1:
                nxt = keys[at + 1]
                self._auto_shift(self.frame.editables[nxt])
                self.focus = nxt
                self.selection = False
                self.text_toolbar = False
            else:
                self.keyboard_shown = False
        self.invalidate()

    def _caps_after_enter(self, fieldv: View, text: str) -> None:
        """Gboard looks at the field again after Enter: Shift is on at the start of a line of a field that
        capitalises (a new line of a note, as the real episodes show), off after text (a number typed into
        a message's address, then Done)."""
        if self.keyboard_shown and self.focus is not None:
            self.keyboard_shift = fieldv.input_type in ("name", "sentence") and (not text or text.endswith("\n"))

    def _toolbar_action(self, name: str) -> None:
        fieldv = self.focused_field()
        self.text_toolbar = False
        if fieldv is None:
            return
        if name == "Select all":
            self.selection = bool(fieldv.text)
            self.text_toolbar = self.selection
        elif name in ("Copy", "Cut"):
            if self.selection:
                self.clipboard = fieldv.text
                if name == "Cut" and fieldv.on_text is not None:
                    fieldv.on_text("")
                self.selection = False
        elif name == "Paste" and fieldv.on_text is not None and self.clipboard:
            new = self.clipboard if self.selection else fieldv.text + self.clipboard
            self.selection = False
            fieldv.on_text(new)
        self.invalidate()

    def set_clipboard(self, text: str) -> None:
        """Put ``text`` on the clipboard (apps' Copy buttons use this)."""
        self.clipboard = str(text)

    # --- input events -----------------------------------------------------------------------------
    def _tick(self) -> None:
        # Time passes per input; the frame is not dropped here so the input hits what was on screen, unless the app
        # in front was still loading what an input before asked for (``loading``; Google Clock's city search lists
        # its results after the screen AndroidWorld reads right after a keystroke, before the next tap lands).
        self.ticks += 1
        self.clock_ms += TICK_MS
        front = self.apps.get(self.foreground)
        if front is not None and getattr(front, "loading", False):
            front.loading = False
            self.invalidate()
        if self.toasts:
            self.toasts = [(t, until) for t, until in self.toasts if until >= self.ticks]

    def invalidate(self) -> None:
        """Mark the screen as changed: the next dump or screenshot rebuilds the frame."""
        self._frame = None
        self.version += 1

    def _hit(self, x: int, y: int) -> Entry | None:
        """The topmost-deepest visible node under (x, y) that reacts to touch."""
        frame = self.frame
        da = frame.dialog_area
        for e in reversed(frame.entries):
            x1, y1, x2, y2 = e.bounds
            if not (x1 <= x < x2 and y1 <= y < y2):
                continue
            if da is not None and e.window == "app":
                return None  # the dialog is modal: the page beneath gets nothing
            v = e.view
            if (v.clickable or v.on_click is not None or v.on_text is not None or v.on_seek is not None
                    or v.on_touch is not None):
                return e
        return None

    @_input_event
    def tap(self, x: int, y: int) -> None:
        """A single tap at screen pixel (x, y)."""
        frame = self.frame
        da = frame.dialog_area
        e = self._hit(x, y)
        on_toolbar = e is not None and e.window == "toolbar"  # the text toolbar floats above a dialog
        if da is not None and not on_toolbar and frame.app_area[1] <= y < frame.app_area[3] and not (
                da[0] <= x < da[2] and da[1] <= y < da[3]):
            if self.text_toolbar:
                self.text_toolbar = False
            self.foreground_app.close_dialog()  # tap outside a dialog cancels it
            self.invalidate()
            return
        if e is None:
            if self.text_toolbar:
                self.text_toolbar = False
                self.invalidate()
            if self.shade == BRIGHTNESS_DIALOG:  # a tap beside the slider closes the dialog
                self.shade = 0
                self.invalidate()
            return
        v = e.view
        if not v.enabled:
            return
        if e.window != "toolbar":
            self.text_toolbar = False
        if v.on_seek is not None:
            x1, _, x2, _ = e.bounds
            pad = v.padding[0] * self.scale
            span = max(1.0, (x2 - x1) - 2 * pad)
            v.on_seek(min(1.0, max(0.0, (x - x1 - pad) / span)))
        elif v.on_text is not None or v.cls == "android.widget.EditText":
            key = self._identity_of(v)
            if key is not None:
                self._auto_shift(v)
                self.focus = key
                self.keyboard_shown = True
                self.selection = False
            if v.on_touch is not None:
                v.on_touch(x, y)
            elif v.on_click is not None:
                v.on_click()
        elif v.on_touch is not None:
            v.on_touch(x, y)
        elif v.on_click is not None:
            v.on_click()
        self.invalidate()

    @_input_event
    def long_press(self, x: int, y: int) -> None:
        """Press and hold: on a text field it selects the text and shows the Cut/Copy/Paste/Select all toolbar."""
        frame = self.frame
        for e in reversed(frame.entries):
            x1, y1, x2, y2 = e.bounds
            if not (x1 <= x < x2 and y1 <= y < y2):
                continue
            if frame.dialog_area is not None and e.window == "app":
                return
            v = e.view
            if v.on_text is not None:
                key = self._identity_of(v)
                self.focus = key
                self.keyboard_shown = True
                self.selection = bool(v.text)
                self.text_toolbar = True
                self.invalidate()
                return
            if v.on_long_click is not None:
                v.on_long_click()
                self.invalidate()
                return
            if v.long_clickable or v.clickable:
                return

    @_input_event
    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        """``input swipe``: a stationary long swipe is a long press, a short one a tap, otherwise a fling/scroll."""
        dx, dy = x2 - x1, y2 - y1
        if abs(dx) <= TOUCH_SLOP and abs(dy) <= TOUCH_SLOP:
            if duration_ms >= LONG_PRESS_MS:
                self.long_press(x1, y1)
            else:
                self.tap(x1, y1)
            return
        if y1 >= self.height - self.nav_bar_height and dy < 0 and abs(dy) >= abs(dx) and not self.shade:
            self.home()  # up from the gesture bar: the system's home gesture, before any app sees the finger
            return
        edge = BACK_GESTURE_DP * self.scale
        if (abs(dx) > abs(dy) and ((x1 < edge and dx > 0) or (x1 >= self.width - edge and dx < 0))
                and not self._on_seek_bar(x1, y1)):
            self.back()  # inwards from a side edge: gesture navigation's Back (AndroidWorld's swipes start there)
            return
        frame = self.frame
        start = None
        for e in reversed(frame.entries):
            bx1, by1, bx2, by2 = e.bounds
            if bx1 <= x1 < bx2 and by1 <= y1 < by2:
                if frame.dialog_area is not None and e.window == "app":
                    break
                if e.view.on_drag is not None:  # a web page takes the finger's path
                    e.view.on_drag(x1, y1, x2, y2)
                    self.invalidate()
                    return
                if e.view.on_stroke is not None:  # a drawing surface takes the finger's path
                    w, h = max(1, bx2 - bx1), max(1, by2 - by1)
                    e.view.on_stroke((x1 - bx1) / w, (y1 - by1) / h, min(max(x2 - bx1, 0), w) / w,
                                     min(max(y2 - by1, 0), h) / h)
                    self.invalidate()
                    return
                if e.view.on_seek is not None and abs(dx) >= abs(dy):
                    self.tap(min(max(x2, bx1), bx2 - 1), (by1 + by2) // 2)
                    return
                if e.view.scroll_key is not None and e.view.scrollable and abs(dy) >= abs(dx):
                    start = e
                    break
                if (e.view.scroll_key is not None and e.view.scrollable and e.view.orientation == HORIZONTAL
                        and abs(dx) > abs(dy)):  # a list laid out as a row scrolls sideways
                    owner = self.apps.get(e.package) or self.foreground_app
                    key = e.view.scroll_key
                    owner.scroll[key] = max(0, owner.scroll.get(key, 0) - scroll_travel(dx, duration_ms, self.density))
                    self.invalidate()
                    return
        if start is not None:
            owner = self.apps.get(start.package)
            if owner is None and start.window in ("app", "dialog"):
                owner = self.foreground_app  # a page shown under another package's name (Settings' search)
            if owner is not None:
                key = start.view.scroll_key
                assert key is not None
                self._scroll_list(owner, key, -scroll_travel(dy, duration_ms, self.density))
                owner.on_list_dragged(key)
                self.invalidate()
                return
        direction = ("up" if dy < 0 else "down") if abs(dy) >= abs(dx) else ("left" if dx < 0 else "right")
        if self.shade == BRIGHTNESS_DIALOG:  # the dialog takes no swipes, but a finger put down beside it closes it
            seek = next((e for e in frame.entries if e.window == "shade" and e.view.on_seek is not None), None)
            panel = None if seek is None else min(
                (e.bounds for e in frame.entries if e.window == "shade" and e.bounds[1] > 0
                 and e.bounds[0] <= seek.bounds[0] and e.bounds[1] <= seek.bounds[1]
                 and e.bounds[2] >= seek.bounds[2] and e.bounds[3] >= seek.bounds[3]),
                key=lambda b: (b[2] - b[0]) * (b[3] - b[1]), default=seek.bounds)
            if y1 < self.status_bar_height and direction == "down":
                self.shade = 1  # from the status bar: the notification shade comes down in its place
                self.shade_toggled.clear()
            elif panel is None or not (panel[0] <= x1 < panel[2] and panel[1] <= y1 < panel[3]):
                self.shade = 0  # as the emulator's runs show: a scroll from the middle of the screen closes it
            self.invalidate()
            return
        if self.shade:  # down expands Quick Settings, up closes the shade
            self.shade = 2 if direction == "down" else 0 if direction == "up" else self.shade
            self.invalidate()
            return
        launcher_home = self.foreground == LAUNCHER_PACKAGE and self.foreground_app.page == "home"
        if direction == "down" and frame.dialog_area is None and (y1 < self.status_bar_height or launcher_home):
            self._drop_focus()
            self.shade = 1  # from the status bar, or anywhere on the home screen (the Pixel launcher's gesture)
            self.shade_toggled.clear()  # System UI forgets what was expanded by hand when the panel closed
            self.invalidate()
            return
        if frame.dialog_area is None and y1 >= self.status_bar_height:
            if self.foreground_app.on_swipe(direction):
                self.invalidate()

    @staticmethod
    def _scroll_list(owner: App, key: str, travel: int) -> None:
        """Move list ``key`` by ``travel`` px (positive: its content moves up, revealing what is below), sharing
        the travel with a collapsing header above it as a CoordinatorLayout does: going down the header collapses
        before the list scrolls, going up the list scrolls back to its top before the header expands."""
        header = owner.collapsing_header(key)
        offset = owner.scroll.get(key, 0)
        if header is None:
            owner.scroll[key] = max(0, offset + travel)
            return
        header_key, height = header
        collapsed = owner.scroll.get(header_key, 0)
        if travel > 0:
            taken = min(travel, height - collapsed)
            owner.scroll[header_key] = collapsed + taken
            owner.scroll[key] = offset + travel - taken
        else:
            left = offset + travel  # below 0: what the list could not take goes to the header
            owner.scroll[key] = max(0, left)
            owner.scroll[header_key] = max(0, collapsed + min(0, left))

    def _on_seek_bar(self, x: int, y: int) -> bool:
        """Whether (x, y) is on a view that keeps its drags from the Back gesture: a seek bar (Android's SeekBar
        excludes its thumb from system gestures), a drawing surface or a web page (the sim's keep their strokes)."""
        return any((e.view.on_seek is not None or e.view.on_stroke is not None or e.view.on_drag is not None)
                   and e.bounds[0] <= x < e.bounds[2] and e.bounds[1] <= y < e.bounds[3]
                   for e in self.frame.entries)

    @_input_event
    def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1500) -> None:
        """``input draganddrop``: a slow swipe (lists scroll, seek bars follow; held in place it is a long press)."""
        self.swipe(x1, y1, x2, y2, duration_ms)

    @_input_event
    def keyevent(self, code: int | str) -> None:
        """``input keyevent``: Home, Back, Enter, Delete, Overview and a few more (others are ignored)."""
        if isinstance(code, str):
            name = code.strip().upper()
            if name.isdigit():
                num = int(name)
            else:
                if not name.startswith("KEYCODE_"):
                    name = "KEYCODE_" + name
                if name not in KEYCODES:
                    raise ValueError(f"unknown keycode {code!r}")
                num = KEYCODES[name]
        else:
            num = int(code)
        if num == 3:
            self.home()
        elif num in (4, 111):
            self.back()
        elif num == 66:
            self._enter()
        elif num == 67:
            self._delete()
        elif num == 62:
            self.type_text(" ")
        elif num == 187:
            self.show_recents()
        self.invalidate()

    def _identity_of(self, view: View) -> str | None:
        for key, v in self.frame.editables.items():
            if v is view:
                return key
        return view.identity

    def _ime_press(self, name: str) -> None:
        composing = self.ime_composing
        if name == "back":
            self.back()
            return
        if name == "shift":
            self.keyboard_shift = not self.keyboard_shift
        elif name == "symbols":
            self.keyboard_symbols = not self.keyboard_symbols
        elif name == "delete":
            self._delete()
            self.ime_composing = composing[:-1]
        elif name == "enter":
            self._enter()
            self.ime_composing = ""
        elif name == "suggestion":  # the typed word, Gboard's first suggestion: kept, followed by a space
            self.type_text(" ")
        self.invalidate()

    def _ime_type(self, ch: str) -> None:
        composing = self.ime_composing
        self.type_text(ch)
        if self.keyboard_shift:
            self.keyboard_shift = False
        if self.focused_field() is not None:
            self.ime_composing = composing + ch if ch.isalpha() else ""

    # --- frame building -----------------------------------------------------------------------
    @property
    def frame(self) -> RenderedFrame:
        """The current frame (windows, visible nodes), rebuilt only after a change."""
        if self._frame is None:
            self._frame = self._build_frame()
        return self._frame

    def dump(self) -> str:
        """The uiautomator hierarchy XML of the screen."""
        return self.frame.xml

    def _build_frame(self) -> RenderedFrame:
        if self.shade:
            return self._shade_frame()
        app = self.foreground_app
        if not app.running:
            app.open()
        root = app.build()
        dialog = app.build_dialog()
        fab = None
        if root.children and root.children[-1].key == "__fab__":
            fab = root.children.pop()
        editables: dict[str, View] = {}
        n = 0
        for tree in (root, dialog):
            if tree is None:
                continue
            for v in tree.walk():
                if v.on_text is not None or v.cls == "android.widget.EditText":
                    key = v.identity or f"__edit{n}"
                    n += 1
                    editables.setdefault(key, v)
        focused = editables.get(self.focus) if self.focus is not None else None
        if focused is None:
            if self.focus is not None:
                self._drop_focus()
        else:
            focused.focused = True
            if self._shift_pending:
                self._auto_shift(focused)
        self._shift_pending = False
        kb = self.keyboard_shown and focused is not None
        W, H, s = self.width, self.height, self.scale
        top = self.status_bar_height
        bottom = H - self.nav_bar_height
        kb_area = None
        if not kb and self.ime_detached:  # the app in front makes room for it, as for a keyboard of its own
            bottom = H - self.keyboard_height
        if kb:  # the keyboard window reaches the bottom edge (it holds the navigation strip's Back)
            kb_area = (0, H - self.keyboard_height, W, H)
            bottom = H - self.keyboard_height
        area = (0, top, W, bottom)
        pkg = app.window_package()
        windows: list[Window] = []

        content = View(cls="android.widget.FrameLayout", resource_id="android:id/content", children=[root])
        decor = View(cls="android.widget.FrameLayout", children=[
            View(cls="android.widget.LinearLayout", children=[content])])
        decor.bounds = (0, 0, W, H)
        decor.children[0].bounds = (0, 0, W, H)
        content.bounds = area
        layout(root, 0, top, W, bottom - top, s, app.scroll)
        if fab is not None:
            m = round(16 * s)
            fw = round((fab.width or 56) * s)
            fab.bounds = (W - m - fw, bottom - m - fw, W - m, bottom - m)
            content.children.append(fab)
        windows.append(Window(decor, pkg, (0, 0, W, H), "app"))

        dialog_area = None
        if dialog is not None:
            dw = min(W - round(48 * s), round(560 * s))
            dh = min(measure(dialog, dw, s), bottom - top - round(48 * s))
            dx = (W - dw) // 2
            dy = top + (bottom - top - dh) // 2
            layout(dialog, dx, dy, dw, dh, s, app.scroll)
            dialog_area = (dx, dy, dx + dw, dy + dh)
            dialog_root = View(cls="android.widget.FrameLayout", children=[dialog])
            dialog_root.bounds = dialog_area
            windows.append(Window(dialog_root, pkg, dialog_area, "dialog"))

        if self.text_toolbar and focused is not None:
            labels = (["Cut", "Copy"] if self.selection else []) + (["Paste"] if self.clipboard else []) + (
                ["Select all"] if focused.text and not self.selection else [])
            if labels:
                items = [Button(lb, (lambda name=lb: self._toolbar_action(name)), background=None, height=48,
                                padding=(12, 8)) for lb in labels]
                bar = View(cls=POPUP_WINDOW_CLASS, orientation=HORIZONTAL, height=48, background="#ffffff",
                           children=items)
                bw = min(W - round(32 * s), sum(round((len(lb) * 14 * 0.52 + 24) * s) for lb in labels))
                bh = round(48 * s)
                fx1, fy1, fx2, fy2 = focused.bounds
                by = fy1 - bh - round(8 * s)
                if by < top:
                    by = min(fy2 + round(8 * s), bottom - bh)
                bx = min(max(0, fx1), W - bw)
                layout(bar, bx, by, bw, bh, s)
                windows.append(Window(bar, pkg, (0, 0, W, H), "toolbar"))

        # Windows above the app's: the keyboard, a toast, the status and navigation bars. The system ones are
        # reused with their nodes and XML while what they show stays the same.
        reused: list[_ReusedWindow | None] = [None] * len(windows)
        if not kb and self.ime_detached:
            # Gboard left up without a field (see ime_detached)
            kb_area = (0, H - self.keyboard_height, W, H)
            ime = self._system_window(("keyboard", False, False, "Enter", "visible_password", kb_area),
                                      lambda: self._keyboard("Enter", "visible_password", kb_area))
            windows.append(ime.window)
            reused.append(ime)
        elif kb and kb_area is not None:
            kind = focused.input_type if focused is not None else ""
            if focused is not None and focused.ime_action:
                enter_label = focused.ime_action
            elif focused is not None and focused.on_submit is not None:
                enter_label = "Search"
            else:
                enter_label = "Next" if kind == "name" else "Enter"
            suggest = self.ime_composing if kind in ("", "name", "sentence") and not focused.password else ""
            ime = self._system_window(("keyboard", self.keyboard_shift, self.keyboard_symbols, enter_label, kind,
                                       kb_area, suggest), lambda: self._keyboard(enter_label, kind, kb_area, suggest))
            windows.append(ime.window)
            reused.append(ime)

        if self.toasts:
            text = self.toasts[-1][0]
            tw = min(W - round(64 * s), round((len(text) * 14 * 0.52 + 40) * s))
            th = round(48 * s)
            tv = View(cls="android.widget.Toast", text=text, background="#303030", color="#ffffff", size=14,
                      align="center", padding=(16.0, 12.0))
            ty = bottom - th - round(64 * s)
            layout(tv, (W - tw) // 2, ty, tw, th, s)
            windows.append(Window(tv, pkg, (0, 0, W, H), "toast"))
            reused.append(None)

        bar = self._status_bar()
        windows.append(bar.window)
        reused.append(bar)
        entries: list[Entry] = []
        known: list[tuple[int, int, str]] = []
        fresh: list[Window] = []
        for window, r in zip(windows, reused):
            if r is None:
                fresh.append(window)
                continue
            if fresh:
                entries += collect(fresh)
                fresh = []
            known.append((len(entries), len(entries) + len(r.entries), r.nodes_xml))
            entries += r.entries
        if fresh:
            entries += collect(fresh)
        return RenderedFrame(windows, entries, editables, area, dialog_area, kb_area, known_xml=known)

    def _shade_frame(self) -> RenderedFrame:
        """The frame while the notification shade is open: its window alone (it covers the screen). The brightness
        dialog (``shade`` 3, Settings' "Brightness level") is System UI's slider over the screen with the status
        bar after it, the app beneath hidden."""
        W, H = self.width, self.height
        view = build_shade(self, self.shade)
        layout(view, 0, 0, W, H, self.scale)
        windows = [Window(view, SYSTEMUI_PACKAGE, (0, 0, W, H), "shade")]
        if self.shade == BRIGHTNESS_DIALOG:
            windows.append(self._status_bar().window)
        return RenderedFrame(windows, collect(windows), {}, (0, self.status_bar_height, W, H), None, None)

    def show_brightness_dialog(self) -> None:
        """System UI's brightness dialog (what Settings' "Brightness level" opens): a tap outside it or Back
        closes it."""
        self._drop_focus()
        self.shade = BRIGHTNESS_DIALOG
        self.invalidate()

    def _system_window(self, key: tuple, build: Callable[[], Window]) -> _ReusedWindow:
        """The system window for ``key``: made by ``build()`` the first time, then reused with its nodes and XML."""
        got = self._system_windows.get(key)
        if got is None:
            if len(self._system_windows) >= 64:  # the clock makes new keys every minute: stay bounded
                self._system_windows.clear()
            window = build()
            entries = collect([window])
            got = self._system_windows[key] = _ReusedWindow(window, entries, xml_nodes(entries))
        return got

    def _keyboard(self, enter_label: str, kind: str, kb_area: Bounds, composing: str = "") -> Window:
        kview = build_keyboard(self.keyboard_shift, self.keyboard_symbols, enter_label, self._ime_type,
                               self._ime_press, digits_row=kind in ("phone", "dropdown", "visible_password"), say=self.toast,
                               number_pad=kind == "number", composing=composing)
        layout(kview, kb_area[0], kb_area[1], self.width, kb_area[3] - kb_area[1], self.scale)
        return Window(kview, IME_PACKAGE, kb_area, "keyboard")

    def _status_bar(self) -> _ReusedWindow:
        clock, said = self.status_clock()
        g = self.settings["global"]
        airplane = g.get("airplane_mode_on") == "1"
        wifi = g.get("wifi_on") == "1" and not airplane
        zen = g.get("zen_mode", "0") != "0"
        return self._system_window(("status", clock, said, airplane, wifi, self.standing_notifications,
                                    self.mobile_signal, zen, self.wifi_internet),
                                   lambda: self._build_status_bar(clock, said, airplane, wifi, zen))

    def _build_status_bar(self, clock: str, said: str, airplane: bool, wifi: bool, zen: bool = False) -> Window:
        """The status bar as the emulator's accessibility tree lists it: the clock, the notification icons, "Do
        Not Disturb" while it is on (an ImageView without a resource name, left of the signal icons: the second
        held-out source's tuning runs of 2025-12-13T21:50), the Wi-Fi signal (when on), the mobile signal, the
        battery; without Wi-Fi the mobile signal holds a "No internet" data-type icon (nested one level deeper, so
        listed last). No Bluetooth icon: Android 13 shows it only while a device is connected, and the emulator has
        none (the real SystemBrightnessMin run of o4-mini starts with Bluetooth on and no icon)."""
        s, W, h = self.scale, self.width, self.status_bar_height
        left: list[View] = [Text(clock, resource_id="com.android.systemui:id/clock", size=14, max_lines=1,
                                 content_desc=said, padding=(0, 0), width=40)]
        left += [Image(desc, width=22, height=22, icon="!") for desc in self.standing_notifications]
        icons: list[View] = []
        if zen:
            icons.append(Image("Do Not Disturb", width=22, height=22, icon="z"))
        if airplane:
            icons.append(Image("Airplane mode.", resource_id="com.android.systemui:id/airplane", width=20,
                               height=20, icon="A"))
        if wifi:
            icons.append(View(cls="android.widget.FrameLayout", content_desc=wifi_desc(self),
                              resource_id="com.android.systemui:id/wifi_combo", width=22, height=22,
                              drawing=(("#1f1f1f", 2.0, ((0.05, 0.3), (0.95, 0.3), (0.5, 0.8), (0.05, 0.3))),)))
        if not airplane:  # the signal's triangle at the right of its box (its type icon, if any, on the left)
            tri = 0.0 if wifi else 0.7
            icons.append(View(cls="android.widget.FrameLayout", content_desc=self.mobile_signal,
                              resource_id="com.android.systemui:id/mobile_combo", width=44, height=22,
                              drawing=(("#1f1f1f", 2.0, ((tri + 0.05 * (1 - tri), 0.8), (0.95, 0.2), (0.95, 0.8),
                                                         (tri + 0.05 * (1 - tri), 0.8))),),
                              children=[] if wifi else [
                                  Image("No internet", resource_id="com.android.systemui:id/mobile_type",
                                        width=30, height=16, icon="4G")]))
        icons.append(View(cls="android.widget.LinearLayout", content_desc="Battery 100 percent.",
                          resource_id="com.android.systemui:id/battery", width=28, height=22,
                          drawing=(("#1f1f1f", 6.0, ((0.5, 0.32), (0.5, 0.68))),)))
        bar = View(cls="android.widget.FrameLayout", resource_id="com.android.systemui:id/status_bar_container",
                   background="#f8fafd", orientation=HORIZONTAL, padding=(16.0, 0.0), children=[
                       View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, weight=1, children=left),
                       View(cls="android.widget.LinearLayout", orientation=HORIZONTAL,
                            resource_id="com.android.systemui:id/system_icons", children=icons),
                   ])
        layout(bar, 0, 0, W, h, s)
        self._place_status_icons(left, icons)
        return Window(bar, SYSTEMUI_PACKAGE, (0, 0, W, h), "status")

    def _place_status_icons(self, left: list[View], icons: list[View]) -> None:
        """Give the status bar's elements the bounds the emulator reports for them (every real episode in
        tests/android_gym/data/real_episodes agrees, at 1080 px wide): the clock 50-148 px and each notification
        icon 58 px after it, spanning the bar's height from y 1; on the right, the battery 986-1006 (the bar's
        height again), the mobile signal 39 px left of it after a 16 px gap, the Wi-Fi signal 46 px left of that,
        both 58 px high, centred (y 35-93), and "Do Not Disturb" 57 px left of them (the same height). Without
        Wi-Fi the mobile signal is 117 px wide, its "No internet" type icon its left 78 px (y 43-85). The clock keeps its real width whatever the time (the real runs show
        "15:34"-style 24-hour times). Airplane mode and Bluetooth icons, which no real run shows, keep the widths
        the layout gave them, left of the rest. Pixels of the Pixel 6 (2.625 px per dp) scale with this phone."""
        k, W, h = self.scale / 2.625, self.width, self.status_bar_height

        def px(v: float) -> int:
            return round(v * k)

        x = px(50)
        for i, view in enumerate(left):
            w = px(98) if i == 0 else px(58)
            view.bounds = (x, px(1), x + w, h)
            x += w
        right = W - px(74)
        for view in reversed(icons):
            rid = view.resource_id.rsplit("/", 1)[-1]
            if rid == "battery":
                view.bounds, right = (right - px(20), px(1), right, h), right - px(20) - px(16)
                continue
            if rid == "mobile_combo" and view.children:
                w = px(117)
                kid = view.children[0]
                kid.bounds = (right - w, px(43), right - w + px(78), px(85))
            else:
                if not rid and view.content_desc == "Do Not Disturb":
                    rid = "dnd"
                w = {"mobile_combo": px(39), "wifi_combo": px(46), "dnd": px(57)}.get(
                    rid, view.bounds[2] - view.bounds[0])
            y1, y2 = (px(35), px(93)) if rid in ("mobile_combo", "wifi_combo", "dnd") else view.bounds[1::2]
            view.bounds = (right - w, y1, right, y2)
            right -= w

    # --- shell and pixels -------------------------------------------------------------------------
    def shell(self, command: str) -> str:
        """Run a shell command line the way ``adb shell`` would and return its text output.

        The exit status is kept in ``last_status`` (0 success, 127 unknown command, ...).
        """
        return self.exec_out(command).decode("utf-8", "replace")

    def exec_out(self, command: str) -> bytes:
        """Run a command line and return raw stdout bytes (``exec-out screencap -p`` gives PNG bytes)."""
        if not isinstance(command, str):
            raise TypeError(f"shell command must be a str, got {type(command).__name__}")
        result = self._shell.run(command)
        self.last_status = result.status
        return result.output

    def screenshot(self):  # -> np.ndarray
        """The screen as an HxWx3 uint8 array rendered from the current frame (cached until it changes)."""
        frame = self.frame
        if frame.screenshot is None:
            from android_gym.sim.render import render_frame

            frame.screenshot = render_frame(self, frame)
        return frame.screenshot

    def screenshot_png(self) -> bytes:
        """The screenshot encoded as PNG (what ``screencap -p`` prints)."""
        frame = self.frame
        png = frame.extra.get("png")
        if png is None:
            import io

            from PIL import Image as PILImage

            buf = io.BytesIO()
            PILImage.fromarray(self.screenshot()).save(buf, format="PNG", compress_level=1)
            png = frame.extra["png"] = buf.getvalue()
        return png

    # --- snapshots ------------------------------------------------------------------------------
    _SYSTEM_FIELDS = ("settings", "files", "clock_ms", "foreground", "recents", "focus", "keyboard_shown",
                      "keyboard_shift", "keyboard_symbols", "ime_composing", "ime_detached", "selection", "text_toolbar", "clipboard", "toasts",
                      "ticks", "rng", "timezone", "shade", "shade_toggled")

    def state_bytes(self) -> bytes:
        """The whole device state (system and every app's data and pages) pickled."""
        state = {
            "system": {name: getattr(self, name) for name in self._SYSTEM_FIELDS},
            "apps": {pkg: a.state() for pkg, a in self.apps.items()},
        }
        return pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)

    def load_state_bytes(self, data: bytes) -> None:
        """Restore a state produced by :meth:`state_bytes`."""
        state = pickle.loads(data)  # noqa: S301 - our own snapshot bytes, never external input
        for name, value in state["system"].items():
            setattr(self, name, value)
        for pkg, app_state in state["apps"].items():
            if pkg in self.apps:
                self.apps[pkg].load_state(app_state)
        self._serve_databases()
        self.invalidate()

    def snapshot_save(self, name: str) -> None:
        """Save the whole device state under ``name`` (overwrites)."""
        if not name:
            raise ValueError("snapshot name must be non-empty")
        self.snapshots[name] = self.state_bytes()

    def snapshot_load(self, name: str) -> None:
        """Restore the state saved under ``name``."""
        try:
            data = self.snapshots[name]
        except KeyError:
            raise KeyError(f"no snapshot named {name!r}; saved: {sorted(self.snapshots)}") from None
        self.load_state_bytes(data)

    def snapshot_list(self) -> list[str]:
        """Names of saved snapshots, sorted."""
        return sorted(self.snapshots)

    def snapshot_delete(self, name: str) -> None:
        """Forget a saved snapshot."""
        if self.snapshots.pop(name, None) is None:
            raise KeyError(f"no snapshot named {name!r}")

    def reset(self) -> None:
        """Factory reset: system state and every app's data back to their initial values."""
        self._reset_system_state()
        for pkg, a in list(self.apps.items()):
            self.apps[pkg] = type(a)(self)
        self.apps[LAUNCHER_PACKAGE].open()
        self._serve_databases()
        self.invalidate()
