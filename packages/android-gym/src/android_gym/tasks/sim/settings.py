"""Settings tasks: AndroidWorld's Wi-Fi, Bluetooth and brightness tasks re-created, plus a few sim-only ones.

Set-up and checks use only the shell (``settings put|get``, ``am force-stop``, ``input keyevent``),
as AndroidWorld does, so they run unchanged on the simulated phone and on an emulator. The
AndroidWorld conventions are kept: Wi-Fi counts as on for ``wifi_on`` 1 or 2, minimum brightness is
``screen_brightness`` 1, and the ``*Verify`` variants start in the goal state.
"""

from __future__ import annotations

import random
import re
from typing import Any, ClassVar

from android_gym.actions import Click, Finished, OpenApp, PressBack
from android_gym.tasks.base import ExpertGenerator, Task, TaskError, register_task
from android_gym.tasks.device_state import getprop, go_home, read_setting, write_setting
from android_gym.tasks.expert import ExpertStuck, find, scroll_to, tap, tap_text, text_is
from android_gym.tasks.suites import SUITES_AW, SUITES_SIM

SETTINGS_PACKAGE = "com.android.settings"
WIFI_LABEL = "Wi\u2011Fi"  # Android writes Wi-Fi with a non-breaking hyphen


# --- expert helpers ------------------------------------------------------------------------------


def open_settings_page(ui: Any, *path: str):
    """Open Settings and tap through ``path`` (texts), scrolling lists as needed; returns the ui."""
    ui = yield OpenApp("Settings")
    for label in path:
        ui = yield from tap_text(ui, label)
    return ui


def switch_in_row(ui: Any, label: str) -> Any:
    """The Switch element on the same row as the text ``label`` (its vertical span overlaps)."""
    title = find(ui, text_is(label))
    if title is None:
        raise ExpertStuck(f"no row titled {label!r} on screen")
    _, y1, _, y2 = title.bounds
    for e in ui.elements:
        if e.class_name == "android.widget.Switch":
            _, sy1, _, sy2 = e.bounds
            if sy1 < y2 and y1 < sy2:
                return e
    raise ExpertStuck(f"no switch on the row {label!r}")


def set_switch(ui: Any, label: str, on: bool):
    """Tap the switch on row ``label`` if it is not already ``on``; returns the ui."""
    ui, _ = yield from scroll_to(ui, text_is(label))
    switch = switch_in_row(ui, label)
    if switch.checked != on:
        ui = yield tap(switch)
    return ui


WIFI_PATH = ("Network & internet", "Internet")
BLUETOOTH_PATH = ("Connected devices", "Bluetooth")


def toggle_wifi_expert(ui: Any, on: bool):
    """Settings > Network & internet > Internet > Wi-Fi switch."""
    ui = yield from open_settings_page(ui, *WIFI_PATH)
    return (yield from set_switch(ui, WIFI_LABEL, on))


def toggle_bluetooth_expert(ui: Any, on: bool):
    """Settings > Connected devices > Bluetooth > Use Bluetooth."""
    ui = yield from open_settings_page(ui, *BLUETOOTH_PATH)
    return (yield from set_switch(ui, "Use Bluetooth", on))


def seekbar_tap(element: Any, fraction: float) -> Click:
    """A tap on a horizontal SeekBar at ``fraction`` of its track (16 dp margins assumed at both ends).

    The ends (0 and 1) are tapped at the bar's own edges: a SeekBar clamps a touch in its padding to
    the nearest end, so this hits them whatever the screen density (the margin guess is in 420 dpi pixels).
    """
    x1, y1, x2, y2 = element.bounds
    if fraction <= 0.0:
        return Click(x1 + 1, (y1 + y2) // 2)
    if fraction >= 1.0:
        return Click(x2 - 2, (y1 + y2) // 2)
    margin = min(42, (x2 - x1) // 10)
    x = x1 + margin + fraction * (x2 - x1 - 2 * margin)
    x = min(max(x, x1 + 1), x2 - 2)
    return Click(int(round(x)), (y1 + y2) // 2)


def _on_off(rng: random.Random) -> str:
    return "on" if rng.choice([True, False]) else "off"


# --- switch-backed settings ---------------------------------------------------------------------------


class SwitchSettingTask(Task):
    """Turn a setting that a Settings switch controls on or off, checked with ``settings get``.

    Subclasses name the ``setting`` (namespace, key), the values the switch writes, the pages that
    lead to it and its row label. The setting starts opposite to the goal unless ``start_on`` says
    otherwise (the ``*Verify`` variants start in the goal state); ``fixed`` pins the goal.
    """

    difficulty = "easy"
    complexity = 1.0
    app_names = ("settings",)
    setting: ClassVar[tuple[str, str]] = ("global", "")
    on_value: ClassVar[str] = "1"
    off_value: ClassVar[str] = "0"
    also_on: ClassVar[tuple[str, ...]] = ()
    page_path: ClassVar[tuple[str, ...]] = ()
    switch_label: ClassVar[str] = ""
    start_on: ClassVar[bool | None] = None
    fixed: ClassVar[str | None] = None

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"on_or_off": cls.fixed or _on_off(rng)}

    def target_on(self) -> bool:
        """Whether the goal is to turn the setting on."""
        return (self.fixed or self.params["on_or_off"]) == "on"

    def initialize(self, device: Any) -> None:
        go_home(device, SETTINGS_PACKAGE)
        start = self.start_on if self.start_on is not None else not self.target_on()
        write_setting(device, *self.setting, self.on_value if start else self.off_value)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        value = read_setting(device, *self.setting)
        wanted = (self.on_value, *self.also_on) if self.target_on() else (self.off_value,)
        return 1.0 if value in wanted else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_settings_page(ui, *self.page_path)
        yield from set_switch(ui, self.switch_label, self.target_on())
        yield Finished()


class WifiToggleTask(SwitchSettingTask):
    """Turn Wi-Fi on or off (AndroidWorld: ``settings get global wifi_on``; "on" is 1 or 2)."""

    template = "Turn wifi {on_or_off}."
    suites = SUITES_AW
    setting = ("global", "wifi_on")
    also_on = ("2",)
    page_path = WIFI_PATH
    switch_label = WIFI_LABEL


@register_task
class SystemWifiTurnOn(WifiToggleTask):
    """Wi-Fi starts off; turn it on."""

    name = "SystemWifiTurnOn"
    start_on = False
    fixed = "on"


@register_task
class SystemWifiTurnOff(WifiToggleTask):
    """Wi-Fi starts on; turn it off."""

    name = "SystemWifiTurnOff"
    start_on = True
    fixed = "off"


@register_task
class SystemWifiTurnOnVerify(WifiToggleTask):
    """Wi-Fi is already on; the agent must check and leave it on."""

    name = "SystemWifiTurnOnVerify"
    start_on = True
    fixed = "on"


@register_task
class SystemWifiTurnOffVerify(WifiToggleTask):
    """Wi-Fi is already off; the agent must check and leave it off."""

    name = "SystemWifiTurnOffVerify"
    start_on = False
    fixed = "off"


class BluetoothToggleTask(SwitchSettingTask):
    """Turn Bluetooth on or off (``settings get global bluetooth_on`` is 1 or 0)."""

    template = "Turn bluetooth {on_or_off}."
    suites = SUITES_AW
    setting = ("global", "bluetooth_on")
    page_path = BLUETOOTH_PATH
    switch_label = "Use Bluetooth"


@register_task
class SystemBluetoothTurnOn(BluetoothToggleTask):
    """Bluetooth starts off; turn it on."""

    name = "SystemBluetoothTurnOn"
    start_on = False
    fixed = "on"


@register_task
class SystemBluetoothTurnOff(BluetoothToggleTask):
    """Bluetooth starts on; turn it off."""

    name = "SystemBluetoothTurnOff"
    start_on = True
    fixed = "off"


@register_task
class SystemBluetoothTurnOnVerify(BluetoothToggleTask):
    """Bluetooth is already on; verify."""

    name = "SystemBluetoothTurnOnVerify"
    start_on = True
    fixed = "on"


@register_task
class SystemBluetoothTurnOffVerify(BluetoothToggleTask):
    """Bluetooth is already off; verify."""

    name = "SystemBluetoothTurnOffVerify"
    start_on = False
    fixed = "off"


# --- brightness ------------------------------------------------------------------------------------


class _BrightnessToggle(Task):
    """Set brightness to the max (255) or min (1) value through Settings > Display."""

    template = "Turn brightness to the {max_or_min} value."
    difficulty = "easy"
    complexity = 1.0
    app_names = ("settings",)
    suites = SUITES_AW
    start: ClassVar[str] = "max"
    fixed: ClassVar[str] = "max"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"max_or_min": cls.fixed}

    def initialize(self, device: Any) -> None:
        go_home(device, SETTINGS_PACKAGE)
        write_setting(device, "system", "screen_brightness_mode", 0)
        write_setting(device, "system", "screen_brightness", 255 if self.start == "max" else 1)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        try:
            level = int(read_setting(device, "system", "screen_brightness"))
        except ValueError:
            return 0.0
        return 1.0 if level == (255 if self.params["max_or_min"] == "max" else 1) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui, bar = yield from open_brightness_slider(ui)
        yield seekbar_tap(bar, 1.0 if self.params["max_or_min"] == "max" else 0.0)
        yield Finished()


@register_task
class SystemBrightnessMax(_BrightnessToggle):
    """Brightness starts at the minimum; set it to the maximum."""

    name = "SystemBrightnessMax"
    start = "min"
    fixed = "max"


@register_task
class SystemBrightnessMin(_BrightnessToggle):
    """Brightness starts at the maximum; set it to the minimum."""

    name = "SystemBrightnessMin"
    start = "max"
    fixed = "min"


@register_task
class SystemBrightnessMaxVerify(_BrightnessToggle):
    """Brightness is already at the maximum; verify."""

    name = "SystemBrightnessMaxVerify"
    start = "max"
    fixed = "max"


@register_task
class SystemBrightnessMinVerify(_BrightnessToggle):
    """Brightness is already at the minimum; verify."""

    name = "SystemBrightnessMinVerify"
    start = "min"
    fixed = "min"


# --- composite ---------------------------------------------------------------------------------------


@register_task
class TurnOffWifiAndTurnOnBluetooth(Task):
    """Wi-Fi on and Bluetooth off at the start; half credit for each part done (as in AndroidWorld)."""

    name = "TurnOffWifiAndTurnOnBluetooth"
    template = "Turn off WiFi, then enable bluetooth"
    difficulty = "medium"
    complexity = 2.0
    app_names = ("settings",)
    suites = SUITES_AW

    def initialize(self, device: Any) -> None:
        go_home(device, SETTINGS_PACKAGE)
        write_setting(device, "global", "wifi_on", 1)
        write_setting(device, "global", "bluetooth_on", 0)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        wifi = 1.0 if read_setting(device, "global", "wifi_on") == "0" else 0.0
        bt = 1.0 if read_setting(device, "global", "bluetooth_on") == "1" else 0.0
        return (wifi + bt) / 2.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from toggle_wifi_expert(ui, False)
        ui = yield PressBack()
        ui = yield PressBack()
        ui = yield from tap_text(ui, "Connected devices")
        ui = yield from tap_text(ui, "Bluetooth")
        yield from set_switch(ui, "Use Bluetooth", True)
        yield Finished()


# --- sim-only tasks ----------------------------------------------------------------------------------


@register_task
class SimBrightnessPercent(Task):
    """Set brightness to a given percentage (within 3 points), read back as round(level * 100 / 255)."""

    name = "SimBrightnessPercent"
    template = "Set the screen brightness to {percent}%."
    difficulty = "medium"
    complexity = 1.5
    app_names = ("settings",)
    suites = SUITES_SIM
    TOLERANCE: ClassVar[int] = 3

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"percent": rng.choice(range(10, 91, 5))}

    def initialize(self, device: Any) -> None:
        go_home(device, SETTINGS_PACKAGE)
        start = 255 if self.params["percent"] < 50 else 13
        write_setting(device, "system", "screen_brightness_mode", 0)
        write_setting(device, "system", "screen_brightness", start)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        try:
            level = int(read_setting(device, "system", "screen_brightness"))
        except ValueError:
            return 0.0
        return 1.0 if abs(round(level * 100 / 255) - int(self.params["percent"])) <= self.TOLERANCE else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        target = int(self.params["percent"])
        ui = yield from open_settings_page(ui, "Display")
        fraction = target / 100.0
        for _ in range(4):
            ui, bar = yield from open_brightness_slider(ui, settings_open=True)
            ui = yield seekbar_tap(bar, fraction)
            ui = yield PressBack()  # closes the brightness dialog: the row's percentage shows again
            shown = _percent_summary(ui)
            if shown is None or abs(shown - target) <= 1:
                break
            fraction = min(1.0, max(0.0, fraction + (target - shown) / 100.0))
        yield Finished()


def open_brightness_slider(ui: Any, settings_open: bool = False):
    """Settings > Display > "Brightness level": System UI's brightness dialog; returns (ui, its slider).
    With ``settings_open`` the Display page is already on screen."""
    if not settings_open:
        ui = yield from open_settings_page(ui, "Display")
    ui = yield from tap_text(ui, "Brightness level")
    bar = find(ui, lambda e: e.class_name == "android.widget.SeekBar")
    if bar is None:
        raise ExpertStuck("the brightness dialog did not open")
    return ui, bar


def _percent_summary(ui: Any) -> int | None:
    """The percentage shown under "Brightness level", if visible."""
    elements = ui.elements
    for i, e in enumerate(elements):
        if (e.text or "").strip() == "Brightness level":
            for nxt in elements[i + 1:i + 3]:
                m = re.fullmatch(r"(\d+)%", (nxt.text or "").strip())
                if m:
                    return int(m.group(1))
    return None


@register_task
class SimDarkTheme(SwitchSettingTask):
    """Turn the dark theme on or off (``settings get secure ui_night_mode``: 2 dark, 1 light)."""

    name = "SimDarkTheme"
    template = "Turn {on_or_off} the dark theme."
    suites = SUITES_SIM
    setting = ("secure", "ui_night_mode")
    on_value = "2"
    off_value = "1"
    page_path = ("Display",)
    switch_label = "Dark theme"


@register_task
class SimAirplaneMode(SwitchSettingTask):
    """Turn airplane mode on or off (``settings get global airplane_mode_on``)."""

    name = "SimAirplaneMode"
    template = "Turn airplane mode {on_or_off}."
    suites = SUITES_SIM
    setting = ("global", "airplane_mode_on")
    page_path = ("Network & internet",)
    switch_label = "Airplane mode"


def android_version_answered(device: Any, answer: str | None) -> bool:
    """The answer names the version ``getprop ro.build.version.release`` reports (as a whole number token)."""
    if not answer:
        return False
    version = getprop(device, "ro.build.version.release")
    if not version:
        raise TaskError("the device did not report ro.build.version.release")
    return version in re.findall(r"\d+(?:\.\d+)*", answer)


@register_task
class SimAndroidVersionQuestion(Task):
    """Answer task: read the Android version in About emulated device; checked against ``getprop ro.build.version.release``."""

    name = "SimAndroidVersionQuestion"
    template = "What Android version is this phone running? Answer with the version number only."
    difficulty = "easy"
    complexity = 1.0
    app_names = ("settings",)
    suites = SUITES_SIM
    answer_task = True

    def initialize(self, device: Any) -> None:
        go_home(device, SETTINGS_PACKAGE)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if android_version_answered(device, answer) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_settings_page(ui, "About emulated device")
        ui, _ = yield from scroll_to(ui, text_is("Android version"))
        elements = ui.elements
        for i, e in enumerate(elements):
            if (e.text or "").strip() == "Android version" and i + 1 < len(elements):
                yield Finished(elements[i + 1].text.strip())
                return
        raise ExpertStuck("the Android version value is not on screen")
