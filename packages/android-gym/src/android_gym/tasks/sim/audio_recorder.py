"""Audio Recorder tasks re-created from AndroidWorld: record a clip, record a clip and save it under a name.

The recordings are files in the app's folder on /sdcard; the checks list it with ``ls -ll`` (name,
size, time), as AndroidWorld's ``get_file_list_with_metadata`` does. Recording one clip means
exactly one new or changed non-empty file. The named task wants ``<file_name>.m4a``: AndroidWorld's
names already end in ``.m4a`` and the app adds its extension to what is typed, so the file is
``<name>.m4a.m4a``, which is what AndroidWorld's own check looks for.
"""

from __future__ import annotations

import random
from typing import Any

from android_gym.actions import Finished, LongPress, OpenApp, PressBack, Type
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import go_home
from android_gym.tasks.expert import (
    ExpertStuck,
    find,
    grant_permission_popup,
    id_is,
    tap_id,
    tap_text,
    text_is,
)
from android_gym.tasks.sim.files import variant_name
from android_gym.tasks.suites import SUITES_AW

RECORDER_PACKAGE = "com.dimowner.audiorecorder"
RECORDS_DIR = "/storage/emulated/0/Android/data/com.dimowner.audiorecorder/files/Music/records"
TOPICS = ("interview", "meeting", "lecture", "session", "note", "conference", "webinar", "workshop", "seminar",
          "briefing", "discussion", "talk", "presentation", "training", "memo", "narration", "journal", "diary",
          "debate", "review")


def recordings(device: Any) -> set[tuple[str, int, str]]:
    """(name, size, time) of each regular file in the recordings folder, from ``ls -ll``."""
    out = device.shell(f"ls {RECORDS_DIR} -ll -au")
    rows = set()
    for line in out.replace("\r", "").split("\n"):
        if line.startswith("-"):
            parts = line.split(None, 8)
            if len(parts) == 9:
                rows.add((parts[8].strip(), int(parts[4]), " ".join(parts[5:7])))
    return rows


def record_clip(ui: Any):
    """Open Audio Recorder (past its welcome screen and permission pop-up), record and stop; returns the ui."""
    ui = yield OpenApp("Audio Recorder")
    if find(ui, text_is("Get started")) is not None:
        ui = yield from tap_text(ui, "Get started", scroll=False)
    ui = yield from tap_id(ui, "btn_record", scroll=False)
    ui = yield from grant_permission_popup(ui)
    if find(ui, id_is("btn_record_stop")) is None:
        raise ExpertStuck("the recording did not start")
    return (yield from tap_id(ui, "btn_record_stop", scroll=False))


class _RecorderTask(Task):
    app_names = ("audio recorder",)
    suites = SUITES_AW
    difficulty = "easy"

    def initialize(self, device: Any) -> None:
        device.shell(f"mkdir -p {RECORDS_DIR}; rm -rf {RECORDS_DIR}/*")
        go_home(device, RECORDER_PACKAGE)
        self.before = sorted(recordings(device))


@register_task
class AudioRecorderRecordAudio(_RecorderTask):
    """Record one clip; exactly one new non-empty recording is a success."""

    name = "AudioRecorderRecordAudio"
    template = "Record an audio clip using Audio Recorder app and save it."
    complexity = 1.2

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        before = {tuple(r) for r in getattr(self, "before", ())}
        new = [r for r in recordings(device) if r[1] > 0 and r not in before]
        return 1.0 if len(new) == 1 else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        yield from record_clip(ui)
        yield Finished()


@register_task
class AudioRecorderRecordAudioWithFileName(_RecorderTask):
    """Record one clip and rename it to the given name."""

    name = "AudioRecorderRecordAudioWithFileName"
    template = 'Record an audio clip and save it with name "{file_name}" using Audio Recorder app.'
    complexity = 2.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"file_name": variant_name(rng.choice(TOPICS) + ".m4a", rng), "text": ""}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        wanted = self.params["file_name"] + ".m4a"
        return 1.0 if any(name == wanted and size > 0 for name, size, _ in recordings(device)) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from record_clip(ui)
        ui = yield from tap_id(ui, "txt_name", scroll=False)
        field = find(ui, id_is("input_name"))
        if field is None:
            raise ExpertStuck("the Rename dialog did not open")
        ui = yield LongPress(*field.center)  # selects the default name
        ui = yield Type(self.params["file_name"])
        if find(ui, text_is("Save")) is None:  # the keyboard covers the dialog's buttons: hide it
            ui = yield PressBack()
        yield from tap_text(ui, "Save", scroll=False)
        yield Finished()
