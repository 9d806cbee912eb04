"""Files (DocumentsUI) tasks re-created from AndroidWorld: delete a file, move a file between folders of /sdcard.

Set-up, as AndroidWorld's: every file on shared storage is deleted (folders stay), then the target
file and up to 20 "noise" files named like the folder's usual contents are written with ``echo``;
the checks read ``find`` under the folders. Unlike AndroidWorld's checks (which only look at the
target), the noise files must survive here too, so deleting or moving a whole folder does not pass.
"""

from __future__ import annotations

import posixpath
import random
from typing import Any

from android_gym.actions import Finished, LongPress, OpenApp
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import go_home
from android_gym.tasks.expert import ExpertStuck, find, id_is, scroll_to, tap_text, tap_where, text_is
from android_gym.tasks.suites import SUITES_AW

FILES_PACKAGE = "com.google.android.documentsui"
STORAGE = "/storage/emulated/0"
STORAGE_ROOT = "sdk_gphone64_x86_64"
"""The storage root as Files shows it on the emulator (AndroidWorld's goals call it sdk_gphone_x86_64)."""

FOLDER_FILES: dict[str, tuple[str, ...]] = {
    "Alarms": ("morning_alarm.mp3", "wake_up.mp3", "early_alarm.mp3", "weekend_alarm.mp3"),
    "Audiobooks": ("history_lecture.mp3", "mystery_novel.mp3", "adventure_story.mp3", "language_lessons.mp3"),
    "DCIM": ("holiday_photos.jpg", "road_trip.jpg", "mountain_hike.jpg", "graduation_ceremony.jpg"),
    "Documents": ("resume.pdf", "annual_report.pdf", "meeting_notes.pdf", "invoice_details.pdf"),
    "Download": ("sample_pdf.pdf", "test_download.zip", "image_file.png", "music_album.zip"),
    "Movies": ("action_film.mp4", "documentary.mp4", "animation_kids.mp4", "drama_series.mp4"),
    "Music": ("jazz_song.mp3", "pop_hit.mp3", "folk_tunes.mp3", "hip_hop_beats.mp3"),
    "Notifications": ("new_message.mp3", "app_alert.mp3", "email_received.mp3", "traffic_info.mp3"),
    "Pictures": ("sunset.jpg", "beach_day.jpg", "city_night.jpg", "pets_playing.jpg"),
    "Podcasts": ("tech_talk.mp3", "comedy_show.mp3", "health_series.mp3", "travel_tips.mp3"),
    "Recordings": ("lecture_capture.mp3", "meeting_audio.mp3", "book_reading.mp3", "personal_notes.mp3"),
    "Ringtones": ("custom_tone.mp3", "vintage_bell.mp3", "modern_beep.mp3", "nature_sounds.mp3"),
}
"""Shared-storage folders and the kind of files each holds (names for targets and noise)."""
WORDS = ("quick", "happy", "brave", "calm", "bright", "eager", "neat", "witty", "bold", "fancy")
NOUNS = ("apple", "river", "tiger", "cloud", "forest", "rocket", "garden", "island", "candle", "bridge")


def variant_name(name: str, rng: random.Random, code_chars: str = "abcdefghijkmnpqrstuvwxyzABCDEFGH23456789") -> str:
    """``name`` with a date, a random code (4 of ``code_chars``) or a meaningful word before or after its stem
    (extension kept), as AndroidWorld's ``generate_modified_file_name`` varies file names."""
    stem, ext = posixpath.splitext(name)
    kind = rng.choice(("date", "random", "word"))
    if kind == "date":
        mod = f"2023_{rng.randint(1, 10):02d}_{rng.randint(1, 28):02d}"
    elif kind == "random":
        mod = "".join(rng.choice(code_chars) for _ in range(4))
    else:
        mod = rng.choice(("backup", "copy", "final", "edited"))
    return f"{mod}_{stem}{ext}" if rng.random() < 0.5 else f"{stem}_{mod}{ext}"


def noise_names(target: str, candidates: tuple[str, ...] | list[str], rng: random.Random) -> list[str]:
    """1 to 20 file names like ``candidates`` (sometimes like ``target``), never ``target`` itself."""
    want = rng.randint(1, 20)
    names: set[str] = set()
    while len(names) < want:
        base = rng.choice(list(candidates)) if rng.random() < 0.85 else target
        name = variant_name(base, rng)
        if name != target:
            names.add(name)
    return sorted(names)


def folder_path(folder: str) -> str:
    """The folder's absolute path on shared storage."""
    return posixpath.join(STORAGE, folder)


def files_under(device: Any, folder: str) -> set[str]:
    """Paths of every file under ``folder`` (recursively), relative to it, as ``find`` lists them."""
    base = folder_path(folder)
    out = device.shell(f"find {base} -type f")
    if "No such file" in out:
        return set()
    return {line[len(base) + 1:] for line in out.replace("\r", "").split("\n") if line.startswith(base + "/")}


def write_files(device: Any, folder: str, names: list[str], rng: random.Random) -> None:
    """Create ``names`` in ``folder``, each holding a short random line (as AndroidWorld's ``create_file``)."""
    base = folder_path(folder)
    device.shell(f"mkdir -p {base}")
    for name in names:
        text = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(20))
        device.shell(f"echo '{text}' > '{base}/{name}'")


def clear_storage(device: Any) -> None:
    """Delete every file on shared storage (folders stay), as AndroidWorld's set-up does; stop Files and go home."""
    device.shell(f"find {STORAGE}/ -mindepth 1 -type f -delete")
    go_home(device, FILES_PACKAGE)


def open_storage_folder(ui: Any, folder: str):
    """Open Files, the sdk_gphone_x86_64 root from the roots drawer, then ``folder``; returns the ui."""
    ui = yield OpenApp("Files")
    ui = yield from tap_text(ui, "Show roots", scroll=False)
    ui = yield from tap_text(ui, STORAGE_ROOT, scroll=False)
    return (yield from tap_where(ui, _item_named(folder)))


def _item_named(name: str) -> Any:
    """An item of the folder (its name's id), not a filter chip or the breadcrumb of the same text ("Documents")."""
    return lambda e: text_is(name)(e) and id_is("title")(e)


def select_file(ui: Any, name: str):
    """Long-press ``name`` in the open folder (scrolling to it) to select it; returns the ui."""
    ui, element = yield from scroll_to(ui, _item_named(name))
    ui = yield LongPress(*element.center)
    if find(ui, text_is("1 selected")) is None:
        raise ExpertStuck(f"{name} did not get selected")
    return ui


class _FilesTask(Task):
    app_names = ("files",)
    suites = SUITES_AW
    difficulty = "medium"


@register_task
class FilesDeleteFile(_FilesTask):
    """Delete one file from a folder; the folder's other files stay."""

    name = "FilesDeleteFile"
    template = ("Delete the file {file_name} from the Android filesystem located in the {subfolder} folder within "
                "the sdk_gphone_x86_64 storage area.")
    complexity = 2.2

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        subfolder = rng.choice(sorted(FOLDER_FILES))
        ext = posixpath.splitext(FOLDER_FILES[subfolder][0])[1]
        file_name = f"{rng.choice(WORDS)}_{rng.choice(NOUNS)}{ext}"
        return {"file_name": file_name, "subfolder": subfolder,
                "noise_candidates": list(FOLDER_FILES[subfolder]),
                "noise": noise_names(file_name, FOLDER_FILES[subfolder], rng)}

    def initialize(self, device: Any) -> None:
        clear_storage(device)
        rng = random.Random(self.seed)
        write_files(device, self.params["subfolder"], [self.params["file_name"], *self.params["noise"]], rng)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        left = files_under(device, self.params["subfolder"])
        return 1.0 if self.params["file_name"] not in left and set(self.params.get("noise", ())) <= left else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_storage_folder(ui, self.params["subfolder"])
        ui = yield from select_file(ui, self.params["file_name"])
        ui = yield from tap_text(ui, "Delete", scroll=False)
        yield from tap_text(ui, "OK", scroll=False)
        yield Finished()


@register_task
class FilesMoveFile(_FilesTask):
    """Move one file from a folder to another; the source folder's other files stay."""

    name = "FilesMoveFile"
    template = ("Move the file {file_name} from {source_folder} within the sdk_gphone_x86_64 storage area to the "
                "{destination_folder} within the same sdk_gphone_x86_64 storage area in the Android filesystem.")
    complexity = 2.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        source = rng.choice(sorted(FOLDER_FILES))
        destination = rng.choice([f for f in sorted(FOLDER_FILES) if f != source])
        file_name = rng.choice(FOLDER_FILES[destination])
        return {"file_name": file_name, "source_folder": source, "destination_folder": destination,
                "noise_candidates": list(FOLDER_FILES[source]),
                "noise": noise_names(file_name, FOLDER_FILES[source], rng)}

    def initialize(self, device: Any) -> None:
        clear_storage(device)
        rng = random.Random(self.seed)
        write_files(device, self.params["source_folder"], [*self.params["noise"], self.params["file_name"]], rng)
        device.shell(f"mkdir -p {folder_path(self.params['destination_folder'])}")

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        name = self.params["file_name"]
        source = files_under(device, self.params["source_folder"])
        moved = name not in source and name in files_under(device, self.params["destination_folder"])
        return 1.0 if moved and set(self.params.get("noise", ())) <= source else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_storage_folder(ui, self.params["source_folder"])
        ui = yield from select_file(ui, self.params["file_name"])
        ui = yield from tap_text(ui, "More options", scroll=False)
        ui = yield from tap_text(ui, "Move to\u2026", scroll=False)
        ui = yield from tap_text(ui, STORAGE_ROOT, scroll=False)  # the picker's breadcrumb: back to the top
        ui = yield from tap_text(ui, self.params["destination_folder"])
        yield from tap_text(ui, "MOVE", scroll=False)
        yield Finished()
