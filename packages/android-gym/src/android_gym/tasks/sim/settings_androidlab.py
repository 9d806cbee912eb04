"""AndroidLab's Settings tasks (``setting_*``) re-created on the simulated Settings app.

Names are AndroidLab task ids and templates its task texts, verbatim. Each task starts from the
home screen with Settings force-stopped and the settings it is about put in the opposite state;
checks read the state through the shell the way AndroidLab's ``adb_query`` lines do (``settings
get``, ``settings list system``, ``getprop``, ``dumpsys window``). AndroidLab marks some operations
``query_detect`` (setting_0, 9, 10): they are answer tasks here too, as in its config, but they are
scored on the device state. Question tasks compare the answer with what the device reports
(``getprop``), after :func:`~android_gym.tasks.device_state.normalize_answer`.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from typing import Any, ClassVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from android_gym.actions import Finished, LongPress, OpenApp, PressBack, Type
from android_gym.tasks.base import ExpertGenerator, Task, TaskError, register_task
from android_gym.tasks.device_state import (
    device_time_ms,
    foreground_package,
    from_ms,
    getprop,
    go_home,
    normalize_answer,
    read_setting,
    write_setting,
)
from android_gym.tasks.expert import ExpertStuck, find, id_is, scroll_to, tap_text, text_is
from android_gym.tasks.sim.settings import (
    BLUETOOTH_PATH,
    SETTINGS_PACKAGE,
    WIFI_PATH,
    BluetoothToggleTask,
    SimAirplaneMode,
    SimDarkTheme,
    SwitchSettingTask,
    android_version_answered,
    open_settings_page,
    seekbar_tap,
)
from android_gym.tasks.suites import SUITES_LAB

LANGUAGE_NAMES: dict[str, tuple[str, ...]] = {
    "en": ("english",), "es": ("spanish", "espanol", "espa\u00f1ol"), "zh": ("chinese", "\u4e2d\u6587"),
    "fr": ("french", "fran\u00e7ais"), "de": ("german", "deutsch"), "ja": ("japanese", "\u65e5\u672c\u8a9e"),
}
"""Language code -> words an answer may use for it (whole words, case-insensitive)."""

TIME_ZONE_NAMES: dict[str, tuple[str, ...]] = {
    "UTC": ("utc", "gmt", "greenwich mean time", "coordinated universal time", "gmt 00 00", "utc 00 00"),
    "GMT": ("utc", "gmt", "greenwich mean time", "gmt 00 00"),
}
"""Time-zone id -> names an answer may give for it; other ids match by id or city (``America/New_York``: "new york")."""


class _LabSettings(Task):
    """An AndroidLab Settings task: no parameters, Settings force-stopped and the home screen at the start."""

    app_names = ("settings",)
    suites = SUITES_LAB
    difficulty = "easy"
    complexity = 1.5

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {}

    def initialize(self, device: Any) -> None:
        go_home(device, SETTINGS_PACKAGE)


class _LabSwitch(_LabSettings, SwitchSettingTask):
    """A switch-backed AndroidLab setting (the goal is fixed by the task text)."""

    def initialize(self, device: Any) -> None:
        SwitchSettingTask.initialize(self, device)


# --- switches ----------------------------------------------------------------------------------------------


@register_task
class SettingLab0(_LabSwitch, SimAirplaneMode):
    """setting_0: airplane mode on (AndroidLab reads ``settings get global airplane_mode_on``)."""

    name = "setting_0"
    template = "Turn on airplane mode of my phone"
    answer_task = True
    fixed = "on"


@register_task
class SettingLab1(_LabSwitch):
    """setting_1: "Turn on Wi-Fi automatically" off (``settings get global wifi_wakeup_enabled`` is 0)."""

    name = "setting_1"
    template = "I do not want turn on wifi automatically, turn it off"
    complexity = 2.5
    difficulty = "medium"
    setting = ("global", "wifi_wakeup_enabled")
    page_path = (*WIFI_PATH, "Network preferences")
    switch_label = "Turn on Wi\u2011Fi automatically"
    fixed = "off"


@register_task
class SettingLab3(_LabSwitch, BluetoothToggleTask):
    """setting_3: Bluetooth off (``settings get global bluetooth_on`` is 0)."""

    name = "setting_3"
    template = "Turn off my bluetooth"
    fixed = "off"


@register_task
class SettingLab5(_LabSwitch):
    """setting_5: battery percentage in the status bar (``settings get system status_bar_show_battery_percent``)."""

    name = "setting_5"
    template = "Show battery percentage in status bar"
    setting = ("system", "status_bar_show_battery_percent")
    page_path = ("Battery",)
    switch_label = "Battery percentage"
    fixed = "on"


@register_task
class SettingLab7(_LabSwitch, SimDarkTheme):
    """setting_7: dark theme on (``settings get secure ui_night_mode`` is 2)."""

    name = "setting_7"
    template = "Turn my phone to Dark theme"
    fixed = "on"


@register_task
class SettingLab13(_LabSwitch):
    """setting_13: ring vibration off (``settings get system vibrate_when_ringing`` is 0)."""

    name = "setting_13"
    template = "Turn off Ring vibration"
    complexity = 2.0
    difficulty = "medium"
    setting = ("system", "vibrate_when_ringing")
    page_path = ("Sound & vibration", "Vibration & haptics")
    switch_label = "Ring vibration"
    fixed = "off"


# --- sliders -------------------------------------------------------------------------------------------------


class _LabSlider(_LabSettings):
    """Drag a Settings slider to an end; the setting starts at the other end (or mid-way)."""

    setting: ClassVar[tuple[str, str]] = ("system", "")
    start_value: ClassVar[int] = 0
    page: ClassVar[str] = ""
    slider_desc: ClassVar[str] = ""
    fraction: ClassVar[float] = 0.0

    def initialize(self, device: Any) -> None:
        super().initialize(device)
        write_setting(device, *self.setting, self.start_value)

    def level(self, device: Any) -> int | None:
        """The setting as a number (None when unset or not a number)."""
        try:
            return int(read_setting(device, *self.setting))
        except ValueError:
            return None

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_settings_page(ui, self.page)
        desc = self.slider_desc
        dialog = desc == "Brightness level"  # the row opens System UI's brightness dialog, whose slider it is
        if dialog:
            ui = yield from tap_text(ui, desc)
            desc = ""

        def is_slider(e: Any) -> bool:
            return e.class_name == "android.widget.SeekBar" and (not desc or e.content_desc == desc)

        ui, bar = yield from scroll_to(ui, is_slider)
        yield seekbar_tap(bar, self.fraction)
        if dialog:  # close it: the page shows the new level under the row again
            yield PressBack()
        yield Finished()


@register_task
class SettingLab8(_LabSlider):
    """setting_8: brightness level 0% (the slider's bottom writes ``screen_brightness`` 1, shown as 0%)."""

    name = "setting_8"
    template = "Change my Brightness level to 0%"
    setting = ("system", "screen_brightness")
    start_value = 153
    page = "Display"
    slider_desc = "Brightness level"
    fraction = 0.0

    def initialize(self, device: Any) -> None:
        super().initialize(device)
        write_setting(device, "system", "screen_brightness_mode", 0)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        level = self.level(device)
        return 1.0 if level is not None and round(level * 100 / 255) == 0 else 0.0


def _volume(device: Any, stream: str) -> int | None:
    """``volume_<stream>_speaker`` from ``settings list system``, as AndroidLab greps it."""
    for line in device.shell("settings list system").splitlines():
        key, _, value = line.partition("=")
        if key.strip() == f"volume_{stream}_speaker":
            try:
                return int(value.strip())
            except ValueError:
                return None
    return None


@register_task
class SettingLab9(_LabSlider):
    """setting_9: ring & notification volume to 0 (``volume_ring_speaker``)."""

    name = "setting_9"
    template = "I need to close down my Ring & notification volume to 0%"
    answer_task = True
    setting = ("system", "volume_ring_speaker")
    start_value = 5
    page = "Sound & vibration"
    slider_desc = "Ring & notification volume"
    fraction = 0.0

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if _volume(device, "ring") == 0 else 0.0


ALARM_VOLUME_MAX = 7


@register_task
class SettingLab10(_LabSlider):
    """setting_10: alarm volume to its maximum, 7 (``volume_alarm_speaker``)."""

    name = "setting_10"
    template = "Set my alarm volume to max"
    answer_task = True
    setting = ("system", "volume_alarm_speaker")
    start_value = 3
    page = "Sound & vibration"
    slider_desc = "Alarm volume"
    fraction = 1.0

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if _volume(device, "alarm") == ALARM_VOLUME_MAX else 0.0


# --- dialogs -------------------------------------------------------------------------------------------------


@register_task
class SettingLab2(_LabSettings):
    """setting_2: private DNS hostname dns.google (``private_dns_mode`` hostname, ``private_dns_specifier``)."""

    name = "setting_2"
    template = "set private DNS to dns.google"
    difficulty = "medium"
    complexity = 2.0
    HOST: ClassVar[str] = "dns.google"

    def initialize(self, device: Any) -> None:
        super().initialize(device)
        write_setting(device, "global", "private_dns_mode", "opportunistic")
        write_setting(device, "global", "private_dns_specifier", "dns.example.net")

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        mode = read_setting(device, "global", "private_dns_mode")
        host = read_setting(device, "global", "private_dns_specifier")
        return 1.0 if mode == "hostname" and host.lower() == self.HOST else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_settings_page(ui, "Network & internet", "Private DNS")
        ui = yield from tap_text(ui, "Private DNS provider hostname", scroll=False)
        ui = yield from _replace_text(ui, "private_dns_mode_provider_hostname", self.HOST)
        yield from tap_text(ui, "Save", scroll=False)
        yield Finished()


@register_task
class SettingLab4(_LabSettings):
    """setting_4: Bluetooth device name "my AVD" (``settings get secure bluetooth_name``); Bluetooth starts on."""

    name = "setting_4"
    template = 'change my bluetooth device name to "my AVD"'
    difficulty = "medium"
    complexity = 2.0
    NAME: ClassVar[str] = "my AVD"

    def initialize(self, device: Any) -> None:
        super().initialize(device)
        write_setting(device, "global", "bluetooth_on", 1)
        write_setting(device, "secure", "bluetooth_name", "Pixel 6")

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if read_setting(device, "secure", "bluetooth_name") == self.NAME else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_settings_page(ui, *BLUETOOTH_PATH, "Device name")
        ui = yield from _replace_text(ui, "edittext", self.NAME)
        yield from tap_text(ui, "Rename", scroll=False)
        yield Finished()


def _replace_text(ui: Any, resource_id: str, text: str):
    """Long-press a field (selecting its text, if any) and type ``text`` over it; returns the next ui."""
    field = find(ui, id_is(resource_id))
    if field is None:
        raise ExpertStuck(f"no field {resource_id!r} on screen")
    x, y = field.center
    ui = yield LongPress(int(x), int(y))
    return (yield Type(text))


# --- languages -----------------------------------------------------------------------------------------------


@register_task
class SettingLab15(_LabSettings):
    """setting_15: Espa\u00f1ol (Estados Unidos) second in the languages list (system ``system_locales`` is
    ``<first>,es-US``); the phone starts with English (United States) alone."""

    name = "setting_15"
    template = "Add Espa\u00f1ol (Estados Unidos) as second favorite languages"
    difficulty = "medium"
    complexity = 2.5
    LOCALE: ClassVar[str] = "es-US"

    def initialize(self, device: Any) -> None:
        super().initialize(device)
        write_setting(device, "system", "system_locales", "en-US")

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        tags = [t.strip() for t in read_setting(device, "system", "system_locales").split(",")]
        return 1.0 if len(tags) >= 2 and tags[1] == self.LOCALE else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_settings_page(ui, "System", "Languages & input", "Languages", "Add a language",
                                           "Espa\u00f1ol", "Estados Unidos")
        yield Finished()


# --- app and questions ---------------------------------------------------------------------------------------


@register_task
class SettingLab21(_LabSettings):
    """setting_21: Settings in front (``dumpsys window``)."""

    name = "setting_21"
    template = "Open settings"
    complexity = 1.0

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if foreground_package(device) == SETTINGS_PACKAGE else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        yield OpenApp("Settings")
        yield Finished()


_OFFSET = re.compile(r"\b(?:gmt|utc)\s*([+-\u2212])\s*(\d{1,2})(?::?(\d{2}))?", re.IGNORECASE)


def _stated_offsets(answer: str) -> list[int]:
    """UTC offsets in minutes an answer states ("GMT+05:30" gives 330, "UTC-4" gives -240)."""
    out = []
    for sign, hours, minutes in _OFFSET.findall(answer):
        value = int(hours) * 60 + int(minutes or 0)
        out.append(-value if sign in "-\u2212" else value)
    return out


def _utc_offset_minutes(zone: str, when: dt.datetime) -> int | None:
    """The zone's UTC offset in minutes at the naive UTC time ``when``; None when the zone is unknown here."""
    try:
        info = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return 0 if zone in TIME_ZONE_NAMES else None
    offset = when.replace(tzinfo=dt.timezone.utc).astimezone(info).utcoffset()
    return None if offset is None else int(offset.total_seconds() // 60)


class _LabQuestion(_LabSettings):
    """A question answered from a Settings page and checked against a system property; no answer scores 0."""

    answer_task = True
    prop: ClassVar[str] = ""

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if answer and self.answered(device, answer) else 0.0

    def answered(self, device: Any, answer: str) -> bool:
        """Whether the (non-empty) answer is right for the device."""
        raise NotImplementedError

    def truth(self, device: Any) -> str:
        """The property the answer is checked against (TaskError when the device does not report it)."""
        value = getprop(device, self.prop)
        if not value:
            raise TaskError(f"the device did not report {self.prop}")
        return value

    def value_below(self, ui: Any, title: str) -> str:
        """The text right after the row titled ``title`` (its summary)."""
        elements = ui.elements
        for i, e in enumerate(elements):
            if text_is(title)(e) and i + 1 < len(elements):
                return (elements[i + 1].text or "").strip()
        raise ExpertStuck(f"no row {title!r} on screen")


@register_task
class SettingLab14(_LabQuestion):
    """setting_14 (question): the time zone, shown under System > Date & time (``getprop persist.sys.timezone``)."""

    name = "setting_14"
    template = "What is my time zone"
    complexity = 1.5
    prop = "persist.sys.timezone"

    def answered(self, device: Any, answer: str) -> bool:
        zone = self.truth(device)
        names = TIME_ZONE_NAMES.get(zone) or (zone.lower(), zone.rsplit("/", 1)[-1].replace("_", " ").lower())
        said = normalize_answer(answer)
        named = any(normalize_answer(n) and normalize_answer(n) in said for n in names)
        stated = _stated_offsets(answer)
        expected = _utc_offset_minutes(zone, from_ms(device_time_ms(device)))
        if expected is not None and any(m != expected for m in stated):
            return False  # "GMT+1" names GMT but is another zone
        return named or (expected is not None and expected in stated)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_settings_page(ui, "System")
        yield Finished(self.value_below(ui, "Date & time"))


@register_task
class SettingLab16(_LabQuestion):
    """setting_16 (question): the primary language, under System > Languages & input (``persist.sys.locale``)."""

    name = "setting_16"
    template = "What is the primary language of my phone"
    complexity = 2.0
    prop = "persist.sys.locale"

    def answered(self, device: Any, answer: str) -> bool:
        code = re.split(r"[-_]", self.truth(device))[0].lower()
        words = LANGUAGE_NAMES.get(code, (code,))
        return any(re.search(rf"\b{re.escape(w)}\b", answer.lower()) for w in words)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_settings_page(ui, "System", "Languages & input")
        yield Finished(self.value_below(ui, "Languages"))


@register_task
class SettingLab17(_LabQuestion):
    """setting_17 (question): the Android version (AndroidLab reads ``getprop ro.build.version.release``)."""

    name = "setting_17"
    template = "Check Android Version"
    complexity = 1.5
    prop = "ro.build.version.release"

    def answered(self, device: Any, answer: str) -> bool:
        return android_version_answered(device, answer)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_settings_page(ui, "About emulated device")
        ui, _ = yield from scroll_to(ui, text_is("Android version"))
        yield Finished(self.value_below(ui, "Android version"))
