"""Simple Draw Pro: AndroidWorld's SimpleDrawProCreateDrawing re-created (draw, then save under a given name).

Set-up empties the phone's storage as AndroidWorld's does (every file under /sdcard deleted, folders
kept) and leaves the app with a fresh install's settings. The check is AndroidWorld's: a file with
exactly the asked name exists anywhere under /sdcard/Pictures.

The expert draws a stroke across the canvas, opens "Save as", replaces the proposed file name with
the asked name's stem, picks the asked extension, walks the folder picker from "Internal" into
"Pictures", and confirms.
"""

from __future__ import annotations

import random
from typing import Any, ClassVar

from android_gym.actions import Drag, Finished, LongPress, OpenApp, Type
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import force_stop, go_home
from android_gym.tasks.expert import ExpertStuck, find, id_is, tap_id, tap_text
from android_gym.tasks.sim.files import variant_name
from android_gym.tasks.suites import SUITES_AW

DRAW_PACKAGE = "com.simplemobiletools.draw.pro"
DRAW_APP = "Simple Draw Pro"
PICTURES = "/storage/emulated/0/Pictures"

_WORDS = ("lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit")
_ADJECTIVES = ("quick", "lazy", "ready", "bright", "calm", "brave", "gentle", "happy", "silly", "clever")
_NOUNS = ("penguin", "river", "mountain", "lantern", "garden", "rocket", "violin", "harbor", "meadow", "falcon")


def drawing_file_name(rng: random.Random) -> str:
    """A file name as AndroidWorld draws them: ``elit_QIO1_ready_penguin.svg``."""
    base = f"{rng.choice(_ADJECTIVES)}_{rng.choice(_NOUNS)}"
    stem = variant_name(base, rng, code_chars="ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
    return f"{rng.choice(_WORDS)}_{stem}{rng.choice(('.png', '.svg', '.jpg'))}"


def file_under(device: Any, folder: str, name: str) -> bool:
    """Whether a file or folder called ``name`` is anywhere under ``folder`` (``find``, as AndroidWorld looks)."""
    out = device.shell(f"find {folder} -type f -o -type d")
    return any(line.rstrip("/").rsplit("/", 1)[-1] == name for line in out.splitlines())


@register_task
class SimpleDrawProCreateDrawing(Task):
    """Draw something and save it as a named PNG, SVG or JPG in Pictures."""

    name = "SimpleDrawProCreateDrawing"
    template = ("Create a new drawing in Simple Draw Pro. Name it {file_name}. Save it in the Pictures folder "
                "within the sdk_gphone_x86_64 storage area.")
    difficulty = "easy"
    complexity = 1.8
    app_names: ClassVar[tuple[str, ...]] = ("simple draw pro",)
    suites = SUITES_AW

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"file_name": drawing_file_name(rng), "text": ""}

    def initialize(self, device: Any) -> None:
        go_home(device, DRAW_PACKAGE)
        device.shell("find /storage/emulated/0/ -mindepth 1 -type f -delete")
        device.shell(f"pm clear {DRAW_PACKAGE}")

    def teardown(self, device: Any) -> None:
        force_stop(device, DRAW_PACKAGE)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if file_under(device, PICTURES, self.params["file_name"]) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        stem, _, ext = self.params["file_name"].rpartition(".")
        ui = yield OpenApp(DRAW_APP)
        canvas = find(ui, id_is("my_canvas"))
        if canvas is None:
            raise ExpertStuck("no canvas on screen")
        x1, y1, x2, y2 = canvas.bounds
        ui = yield Drag(x1 + (x2 - x1) // 4, y1 + (y2 - y1) // 3, x1 + 3 * (x2 - x1) // 4, y1 + 2 * (y2 - y1) // 3)
        ui = yield from tap_text(ui, "Save as", scroll=False)
        field = find(ui, id_is("save_image_filename"))
        if field is None:
            raise ExpertStuck("the Save as dialog has no file name field")
        ui = yield LongPress(*field.center)  # select the proposed name, so typing replaces it
        ui = yield Type(stem)
        ui = yield from tap_id(ui, f"save_image_radio_{ext.lower()}")
        path = find(ui, id_is("save_image_path"))
        if path is None or path.text != "Internal/Pictures":
            ui = yield from tap_id(ui, "save_image_path")
            ui = yield from tap_text(ui, "Internal", scroll=False)
            ui = yield from tap_text(ui, "Pictures")
            ui = yield from tap_id(ui, "android:id/button1", scroll=False)
        ui = yield from tap_id(ui, "android:id/button1", scroll=False)
        if find(ui, id_is("save_image_filename")) is not None:
            raise ExpertStuck("the drawing was not saved")
        yield Finished()


__all__ = ["SimpleDrawProCreateDrawing", "drawing_file_name", "file_under"]
