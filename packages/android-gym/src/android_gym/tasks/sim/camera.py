"""Camera tasks re-created from AndroidWorld: take one photo, take one video.

Set-up empties the camera's folders (``/sdcard/Pictures`` and ``/sdcard/Movies``, the ones
AndroidWorld lists) and clears the Camera's data, so its permission pop-up shows on the first start;
success is exactly one new file in the folder, read with ``ls`` as AndroidWorld reads it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from android_gym.actions import Finished, OpenApp
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import go_home
from android_gym.tasks.expert import ExpertStuck, find, grant_permission_popup, id_is, tap, tap_id
from android_gym.tasks.suites import SUITES_AW

CAMERA_PACKAGE = "com.android.camera2"
PHOTOS_DIR = "/sdcard/Pictures"
VIDEOS_DIR = "/sdcard/Movies"


def list_folder(device: Any, folder: str) -> set[str]:
    """Names in ``folder`` as ``ls`` prints them (empty when the folder is empty or missing)."""
    out = device.shell(f"ls {folder}")
    if "No such file" in out:
        return set()
    return {line.strip() for line in out.replace("\r", "").split("\n") if line.strip()}


def reset_camera(device: Any) -> None:
    """Empty the photo and video folders, clear the Camera's data (permissions) and go home."""
    for folder in (PHOTOS_DIR, VIDEOS_DIR):
        device.shell(f"mkdir -p {folder}; rm -rf {folder}/*")
    device.shell(f"pm clear {CAMERA_PACKAGE}")
    go_home(device, CAMERA_PACKAGE)


def open_camera(ui: Any, mode: str):
    """Open Camera, grant its permissions and switch to ``mode`` ("Camera" or "Video"); returns the ui."""
    ui = yield OpenApp("Camera")
    ui = yield from grant_permission_popup(ui)
    button = find(ui, id_is("mode_camera" if mode == "Camera" else "mode_video"))
    if button is None:
        raise ExpertStuck("the Camera's mode switcher is not on screen")
    if not button.selected:
        ui = yield tap(button)
    return ui


class _CameraTask(Task):
    """One new file in ``folder`` after the episode is a success."""

    folder: ClassVar[str] = PHOTOS_DIR
    difficulty = "easy"
    complexity = 1.0
    app_names = ("camera",)
    suites = SUITES_AW

    def initialize(self, device: Any) -> None:
        reset_camera(device)
        self.before = sorted(list_folder(device, self.folder))

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        before = set(getattr(self, "before", ()))
        return 1.0 if len(list_folder(device, self.folder) - before) == 1 else 0.0


@register_task
class CameraTakePhoto(_CameraTask):
    """Take exactly one photo."""

    name = "CameraTakePhoto"
    template = "Take one photo."
    folder = PHOTOS_DIR

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_camera(ui, "Camera")
        yield from tap_id(ui, "shutter_button", scroll=False)
        yield Finished()


@register_task
class CameraTakeVideo(_CameraTask):
    """Record exactly one video (start and stop)."""

    name = "CameraTakeVideo"
    template = "Take one video."
    difficulty = "medium"
    folder = VIDEOS_DIR

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_camera(ui, "Video")
        ui = yield from tap_id(ui, "shutter_button", scroll=False)
        if find(ui, id_is("recording_time")) is None:
            raise ExpertStuck("the recording did not start")
        yield from tap_id(ui, "shutter_button", scroll=False)
        yield Finished()
