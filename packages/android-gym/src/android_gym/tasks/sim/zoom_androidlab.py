"""AndroidLab's five Zoom tasks (``zoom_1`` to ``zoom_5``) re-created on the simulated Zoom (signed out).

Three fill the Join a meeting form and, as their text says, leave the Join button to the user: the check
reads the screen (``uiautomator dump``), which must still be Zoom's join form showing the meeting ID (grouped
as Zoom shows it, "123 456 7890"), the name and the join options asked for. Two change a setting: the check
reads Zoom's preferences (``content query --uri content://us.zoom.videomeetings/settings``). Every task starts
from the home screen with Zoom stopped and its settings at their defaults.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from android_gym.actions import Finished, OpenApp
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import content_query, force_stop, go_home, screen_nodes
from android_gym.tasks.expert import tap_id, tap_text, type_into
from android_gym.tasks.suites import SUITES_LAB

ZOOM_PACKAGE = "us.zoom.videomeetings"
ZOOM_APP = "Zoom"
ZOOM_SETTINGS_URI = "content://us.zoom.videomeetings/settings"
DEFAULTS = {"auto_connect_audio": "off", "reaction_skin_tone": "default"}


def zoom_settings(device: Any) -> dict[str, str]:
    """Zoom's preferences as ``{name: value}``."""
    return {r["name"]: r["value"] or "" for r in content_query(device, ZOOM_SETTINGS_URI, ("name", "value"))}


class _LabZoom(Task):
    """An AndroidLab Zoom task: no parameters; Zoom's data cleared (``pm clear``: default settings), the home screen."""

    app_names = ("zoom",)
    suites = SUITES_LAB
    difficulty = "easy"
    complexity = 1.5

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {}

    def initialize(self, device: Any) -> None:
        go_home(device, ZOOM_PACKAGE)
        device.shell(f"pm clear {ZOOM_PACKAGE}")

    def teardown(self, device: Any) -> None:
        force_stop(device, ZOOM_PACKAGE)


# --- the join form ---------------------------------------------------------------------------------------


def _grouped(digits: str) -> str:
    return f"{digits[:3]} {digits[3:6]} {digits[6:]}"


class _JoinForm(_LabZoom):
    """Fill Zoom's join form (``MEETING_ID``, ``NAME``, the join options) and stop before Join."""

    MEETING_ID: ClassVar[str] = ""
    NAME: ClassVar[str | None] = None
    NO_AUDIO: ClassVar[bool] = False
    NO_VIDEO: ClassVar[bool] = False

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        nodes = [n for n in screen_nodes(device) if n.package == ZOOM_PACKAGE]

        def node(rid: str) -> Any | None:
            return next((n for n in nodes if n.resource_id == f"{ZOOM_PACKAGE}:id/{rid}"), None)

        field, name = node("edtConfNumber"), node("edtScreenName")
        audio, video = node("chkNoAudio"), node("chkNoVideo")
        if field is None or name is None or audio is None or video is None:
            return 0.0  # not on the join form (or it was left by Join)
        ok = field.text == _grouped(self.MEETING_ID)
        if self.NAME is not None:
            ok = ok and name.text == self.NAME
        if self.NO_AUDIO or self.NO_VIDEO:
            ok = ok and audio.checked == self.NO_AUDIO and video.checked == self.NO_VIDEO
        return 1.0 if ok else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(ZOOM_APP)
        ui = yield from tap_text(ui, "Join a meeting", scroll=False)
        ui = yield from type_into(ui, self.MEETING_ID, resource_id="edtConfNumber")
        if self.NAME is not None:
            ui = yield from type_into(ui, self.NAME, resource_id="edtScreenName")
        if self.NO_AUDIO:
            ui = yield from tap_id(ui, "chkNoAudio")
        if self.NO_VIDEO:
            ui = yield from tap_id(ui, "chkNoVideo")
        yield Finished()


@register_task
class ZoomLab1(_JoinForm):
    """zoom_1: the join form holds meeting 1234567890."""

    name = "zoom_1"
    template = "Join meeting 1234567890. (You should not click join button, and leave it to user)"
    MEETING_ID = "1234567890"


@register_task
class ZoomLab2(_JoinForm):
    """zoom_2: the join form holds meeting 0987654321 and the name Alice."""

    name = "zoom_2"
    template = ("Join meeting 0987654321, and set my name as 'Alice'. (You should not click join button, and leave it "
                "to user)")
    complexity = 2.0
    MEETING_ID = "0987654321"
    NAME = "Alice"


@register_task
class ZoomLab3(_JoinForm):
    """zoom_3: the join form holds meeting 1234567890 with Don't Connect To Audio and Turn Off My Video on."""

    name = "zoom_3"
    template = ("I need to join meeting 1234567890 without audio and video. (You should not click join button, and "
                "leave it to user)")
    complexity = 2.0
    MEETING_ID = "1234567890"
    NO_AUDIO = True
    NO_VIDEO = True


# --- settings --------------------------------------------------------------------------------------------


class _Setting(_LabZoom):
    """One Zoom preference must end as ``VALUE``; the other stays at its default."""

    KEY: ClassVar[str] = ""
    VALUE: ClassVar[str] = ""

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if zoom_settings(device) == {**DEFAULTS, self.KEY: self.VALUE} else 0.0


@register_task
class ZoomLab4(_Setting):
    """zoom_4: Settings > Meetings > Auto-connect to audio is "WiFi or cellular data"."""

    name = "zoom_4"
    template = "Set auto connect to audio when wifi is connected in zoom settings."
    complexity = 2.0
    KEY = "auto_connect_audio"
    VALUE = "wifi_or_cellular"

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(ZOOM_APP)
        for text in ("Settings", "Meetings", "Auto-connect to audio", "WiFi or cellular data"):
            ui = yield from tap_text(ui, text, scroll=False)
        yield Finished()


@register_task
class ZoomLab5(_Setting):
    """zoom_5: Settings > General > Reaction skin tone is Medium-light."""

    name = "zoom_5"
    template = "Change my reaction skin to Medium-light in zoom settings."
    complexity = 2.0
    KEY = "reaction_skin_tone"
    VALUE = "medium_light"

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(ZOOM_APP)
        for text in ("Settings", "General", "Reaction skin tone", "Medium-light"):
            ui = yield from tap_text(ui, text, scroll=False)
        yield Finished()
