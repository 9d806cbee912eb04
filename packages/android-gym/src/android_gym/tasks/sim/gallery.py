"""Simple Gallery Pro: AndroidWorld's SaveCopyOfReceiptTaskEval re-created (copy a picture from DCIM into Download).

Set-up empties the phone's storage as AndroidWorld's does (every file under /sdcard deleted, folders
kept) and writes one receipt picture, a JPEG of a few lines of shop text drawn with Pillow, into
/sdcard/DCIM. The check is AndroidWorld's: a file of exactly that name exists in /sdcard/Download.

The expert opens the DCIM folder, turns the file names on ("Toggle filename visibility": the gallery shows
thumbnails only), opens the picture, "More options" -> "Copy to", walks the folder picker
from "Internal" into "Download", and confirms.
"""

from __future__ import annotations

import io
import random
from typing import Any, ClassVar

from android_gym.actions import OpenApp
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import force_stop, go_home
from android_gym.tasks.expert import ExpertStuck, find, finish, tap_text, text_is
from android_gym.tasks.sim.simple_draw import file_under
from android_gym.tasks.sim.vlc import push_bytes
from android_gym.tasks.suites import SUITES_AW

GALLERY_PACKAGE = "com.simplemobiletools.gallery.pro"
GALLERY_APP = "Simple Gallery Pro"
DCIM = "/storage/emulated/0/DCIM"
DOWNLOAD = "/storage/emulated/0/Download"

_SHOPS = ("Corner Hardware", "Green Grocer", "City Books", "Blue Bean Cafe", "Sparks Electronics")
_ITEMS = ("HDMI cable", "Notebook", "Coffee beans", "Desk lamp", "Batteries", "Phone case", "Tea towel")
_WORDS = ("alpha", "delta", "maple", "cedar", "harbor", "summit", "willow", "ember", "falcon", "meadow")


def receipt_jpeg(rng: random.Random) -> bytes:
    """A receipt picture: a shop's name and two to four dated lines with prices, black on white, as a JPEG."""
    from PIL import Image, ImageDraw

    lines = [rng.choice(_SHOPS), ""]
    for _ in range(rng.randint(2, 4)):
        lines.append(f"2023-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}  {rng.choice(_ITEMS)}  "
                     f"${rng.randint(100, 9999) / 100:.2f}")
    img = Image.new("RGB", (480, 120 + 28 * len(lines)), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((24, 40 + 28 * i), line, fill=(0, 0, 0))
    buf = io.BytesIO()
    img.save(buf, format="JPEG")
    return buf.getvalue()


def clear_storage(device: Any) -> None:
    """Every file on shared storage deleted (folders stay), as AndroidWorld's ``clear_device_storage``."""
    device.shell("find /storage/emulated/0/ -mindepth 1 -type f -delete")


def open_in_gallery(ui: Any, folder: str, file_name: str):
    """Open Simple Gallery Pro, the folder ``folder`` and the picture ``file_name`` in it; returns the ui."""
    ui = yield OpenApp(GALLERY_APP)
    ui = yield from tap_text(ui, folder)
    if find(ui, text_is(file_name)) is None:  # the gallery shows no file names until they are toggled on
        ui = yield from tap_text(ui, "Toggle filename visibility", scroll=False)
    ui = yield from tap_text(ui, file_name)
    if find(ui, text_is("More options")) is None:
        raise ExpertStuck(f"{file_name} did not open in the viewer")
    return ui


@register_task
class SaveCopyOfReceiptTaskEval(Task):
    """Copy a receipt picture from DCIM into Download under the same name (Simple Gallery Pro's Copy to)."""

    name = "SaveCopyOfReceiptTaskEval"
    template = "In Simple Gallery Pro, copy {file_name} in DCIM and save a copy with the same name in Download"
    difficulty = "hard"
    complexity = 1.6
    app_names: ClassVar[tuple[str, ...]] = ("simple gallery pro",)
    suites = SUITES_AW

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        stem = f"{rng.choice(_WORDS)}_{''.join(rng.choice('abcdefghjkmnpqrstuvwxyz23456789') for _ in range(4))}"
        return {"file_name": f"receipt_{stem}.jpg"}

    def initialize(self, device: Any) -> None:
        go_home(device, GALLERY_PACKAGE)
        clear_storage(device)
        device.shell(f"mkdir -p {DCIM} {DOWNLOAD}")
        push_bytes(device, f"{DCIM}/{self.params['file_name']}", receipt_jpeg(random.Random(self.seed)))

    def teardown(self, device: Any) -> None:
        force_stop(device, GALLERY_PACKAGE)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if file_under(device, DOWNLOAD, self.params["file_name"]) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_in_gallery(ui, "DCIM", self.params["file_name"])
        ui = yield from tap_text(ui, "More options", scroll=False)
        ui = yield from tap_text(ui, "Copy to", scroll=False)
        ui = yield from tap_text(ui, "Internal", scroll=False)
        ui = yield from tap_text(ui, "Download")
        ui = yield from tap_text(ui, "OK", scroll=False)
        yield from finish()


__all__ = ["SaveCopyOfReceiptTaskEval", "open_in_gallery", "receipt_jpeg"]
