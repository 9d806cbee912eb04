"""Words that exist only in a video's frames: AndroidWorld's MarkorTranscribeVideo re-created.

A video in Download shows a few names one after the other, each for several seconds, as yellow letters
over random coloured noise that changes every frame (AndroidWorld draws them with OpenCV's Hershey font);
other videos in Download show one random string each. The goal: write the names, in order, as a comma
separated list into ``<video>_transcription.txt`` in Markor. AndroidWorld's check fuzzy-matches the file's
text with the names joined by commas (difflib ratio 0.9, case aside).

No accessibility node carries the names, so the expert reads the screen's pixels (``reads_pixels``): it
plays the video in VLC and taps the seek bar at evenly spaced points, keeping the player's frame from each
screenshot. One frame's letters are hard to read through the noise; so it measures how yellow each pixel is
(the noise averages to grey, the caption stays yellow), groups the frames that show the same caption (two
frames of different captions disagree on whole strokes, frames of one caption only on specks of noise),
averages each group and reads the average with Tesseract at a few scales, keeping the most frequent reading.
"""

from __future__ import annotations

import collections
import posixpath
import random
import re
from typing import Any, ClassVar

from android_gym.actions import Click, Finished, OpenApp
from android_gym.tasks.base import ExpertGenerator, Task, TaskError, register_task
from android_gym.tasks.device_state import force_stop
from android_gym.tasks.expert import ExpertStuck, find, id_is, tap
from android_gym.tasks.ocr import ocr_images
from android_gym.tasks.sim.gallery import clear_storage
from android_gym.tasks.sim.markor import (
    MARKOR_PACKAGE,
    create_note_expert,
    note_path,
    read_note,
    reset_markor,
)
from android_gym.tasks.sim.vlc import VLC_PACKAGE, find_video_row, push_bytes, video_file_name
from android_gym.tasks.suites import SUITES_AW

DOWNLOAD = "/storage/emulated/0/Download"
GIVEN_NAMES = ("Ava", "Charlie", "Daniel", "Emma", "Hana", "Ibrahim", "Isabella", "Leon", "Louis", "Mila", "Noa",
               "Omar", "Sarah", "Theo", "Willow", "Yusuf")
"""Names our re-creation's videos show (AndroidWorld draws its own from its list of common given names)."""

SEEK_POINTS = 8
"""Frames the expert takes with the seek bar (besides the one shown when the video opens)."""
_SAME_CAPTION = 2e-4
"""Largest share of pixels on which two frames of the same caption may disagree (stroke against no stroke)."""


# --- the video ------------------------------------------------------------------------------------------------


def caption_video(messages: list[str], seconds_each: int, rng: random.Random, fps: int = 10,
                  size: tuple[int, int] = (320, 240)) -> bytes:
    """An MP4 showing each message for ``seconds_each`` s in yellow letters over per-frame random noise."""
    import os
    import tempfile

    import cv2
    import numpy as np

    width, height = size
    gen = np.random.default_rng(rng.randrange(2**32))
    handle, path = tempfile.mkstemp(suffix=".mp4")
    os.close(handle)
    try:
        out = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"mp4v"), fps, (width, height))
        for message in messages:
            for _ in range(seconds_each * fps):
                frame = gen.integers(0, 256, (height, width, 3), dtype=np.uint8)
                cv2.putText(frame, message, (50, height // 2), cv2.FONT_HERSHEY_SIMPLEX, 1, (0, 255, 255), 2,
                            cv2.LINE_AA)
                out.write(frame)
        out.release()
        with open(path, "rb") as fh:
            return fh.read()
    finally:
        os.remove(path)


# --- reading the frames -----------------------------------------------------------------------------------------


def yellowness(frame: Any) -> Any:
    """How yellow each pixel of an RGB frame is: (R + G) / 2 - B, clipped to 0..255 (float32)."""
    import numpy as np

    f = np.asarray(frame, dtype=np.float32)
    return np.clip((f[..., 0] + f[..., 1]) / 2 - f[..., 2], 0, 255)


def _scaled(plane: Any, factor: float) -> Any:
    import cv2

    return plane if factor == 1 else cv2.resize(plane, None, fx=factor, fy=factor, interpolation=cv2.INTER_AREA)


def same_caption(a: Any, b: Any) -> bool:
    """Whether two frames' yellowness planes show the same caption: smoothed, they disagree (one clearly a
    stroke, the other clearly not) on almost no pixels; different captions disagree on whole strokes."""
    import cv2
    import numpy as np

    pa, pb = cv2.GaussianBlur(a, (0, 0), 2.0), cv2.GaussianBlur(b, (0, 0), 2.0)
    disagree = np.mean((pa > 150) & (pb < 60)) + np.mean((pb > 150) & (pa < 60))
    return bool(disagree < _SAME_CAPTION)


def read_caption(plane: Any) -> str:
    """The caption in an (averaged) yellowness plane: Tesseract's single-line readings over a few scales and
    smoothings, letters and digits only (specks of noise read as punctuation), and the reading most of them agree
    on, case aside (a capital I and a small i/l differ by a speck here); its most frequent spelling is returned."""
    import cv2
    import numpy as np

    crops = []
    for blur in (0.0, 1.0, 1.5):
        smooth = cv2.GaussianBlur(plane, (0, 0), blur) if blur else plane
        for factor in (0.6, 0.8, 1.0, 1.3):
            p = _scaled(smooth, factor)
            ys, xs = np.nonzero(p > 128)
            if not len(ys):
                continue
            margin = 20
            crop = p[max(0, ys.min() - margin):ys.max() + margin, max(0, xs.min() - margin):xs.max() + margin]
            crops.append((255 - crop).astype(np.uint8))
    return vote_reading(ocr_images(crops, psm=7))


def vote_reading(texts: list[str]) -> str:
    """The caption several Tesseract readings of it agree on: cleaned (:func:`_clean_reading`), grouped by shape
    (:func:`_shape_key`), the largest group's most frequent spelling ("" when nothing was read)."""
    readings = [cleaned for text in texts if (cleaned := _clean_reading(text))]
    if not readings:
        return ""
    votes = collections.Counter(_shape_key(r) for r in readings)
    best = max(votes, key=lambda key: (votes[key], -len(key)))
    return collections.Counter(r for r in readings if _shape_key(r) == best).most_common(1)[0][0]


def _clean_reading(text: str) -> str:
    """A Tesseract reading with letters and digits only, and "rn" read as the "m" it almost always is here: in
    Hershey letters at caption size noise fills the gap of an m's arches (measured: of 40 runs of MarkorTranscribeVideo
    seed 0, one read "William" as "Williarn" in 6 of its 12 crops), and none of the names AndroidWorld's captions are
    drawn from (``COMMON_GIVEN_NAMES``) holds an "rn"."""
    return re.sub(r"[^A-Za-z0-9]", "", text).replace("rn", "m")


def _shape_key(reading: str) -> str:
    """A reading with the letters Hershey's strokes make alike merged: case, and I / l / i / 1 (one upright)."""
    return re.sub(r"[il1|]", "l", reading.lower())


def read_captions(frames: list[Any]) -> list[str]:
    """The captions a video's frames (RGB crops of the player, in time order) show, in order.

    Consecutive frames of the same caption are averaged (the noise greys out) before reading. In OpenCV's
    Hershey letters a capital I and a small l are the same stroke; a caption starting with that stroke and
    otherwise lower case is read with a capital I when the other captions are capitalised too."""
    import numpy as np

    planes = [_scaled(yellowness(f), 0.5) for f in frames]
    groups: list[list[Any]] = []
    for plane in planes:
        if groups and same_caption(groups[-1][-1], plane):
            groups[-1].append(plane)
        else:
            groups.append([plane])
    captions: list[str] = []
    for caption in (read_caption(np.mean(g, axis=0)) for g in groups):
        # a caption whose frames fell into two groups (noise that happened to disagree) is read twice in a row;
        # the task's captions are distinct names, so a repeat is the same caption
        if caption and not (captions and _shape_key(captions[-1]) == _shape_key(caption)):
            captions.append(caption)
    capitalised = all(c[0].isupper() or c[0] == "l" for c in captions)
    return [("I" + c[1:]) if capitalised and c[0] == "l" and c[1:2].islower() else c for c in captions]


def player_frame(ui: Any) -> Any:
    """The player's picture in the screenshot (the surface between the top bar and the seek bar), RGB."""
    shot = getattr(ui, "screenshot", None)
    if shot is None:
        raise ExpertStuck("this expert reads the screen's pixels, but the observation has no screenshot")
    surface = find(ui, id_is("player_surface"))
    if surface is not None:
        x1, y1, x2, y2 = surface.bounds
    else:
        bar = find(ui, id_is("player_overlay_seekbar"))
        top = find(ui, id_is("player_overlay_title"))
        if bar is None or top is None:
            raise ExpertStuck("no video player on screen")
        x1, y1, x2, y2 = 0, top.bounds[3], shot.shape[1], bar.bounds[1]
    return shot[y1:y2, x1:x2]


def watch_video(ui: Any, title: str, seek_points: int = SEEK_POINTS):
    """Open VLC, play the video titled ``title`` and take its frame at ``seek_points`` evenly spaced points of
    the seek bar; returns (ui, frames in time order)."""
    ui = yield OpenApp("VLC")
    ui, _ = yield from find_video_row(ui, title)
    row = find(ui, lambda e: id_is("ml_item_title")(e) and e.text == title)
    if row is None:
        raise ExpertStuck(f"no video {title!r} in VLC's list")
    ui = yield tap(row)
    frames = [player_frame(ui)]
    for k in range(seek_points):
        bar = find(ui, id_is("player_overlay_seekbar"))
        if bar is None:
            raise ExpertStuck("the player has no seek bar")
        x1, y1, x2, y2 = bar.bounds
        ui = yield Click(int(x1 + (x2 - x1) * (k + 0.5) / seek_points), (y1 + y2) // 2)
        frames.append(player_frame(ui))
    return ui, frames


# --- the task --------------------------------------------------------------------------------------------------


@register_task
class MarkorTranscribeVideo(Task):
    """Watch a video in VLC and write the names it shows, comma separated, into a text file in Markor."""

    name = "MarkorTranscribeVideo"
    template = ("Transcribe the contents of video {video_name} by watching it in VLC player (located in Download) "
                "and writing the sequence of strings shown on each frame to the text file {file_name} in Markor as "
                'a comma separated list. For example, if the first frame shows the text "edna" and the second frame '
                'shows the text "pineapple", then the text file should contain only the following text: "edna, '
                'pineapple".')
    difficulty = "hard"
    complexity = 2.0
    app_names: ClassVar[tuple[str, ...]] = ("markor", "vlc")
    suites = SUITES_AW
    reads_pixels: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ("cv2",)  # the videos are written with OpenCV: the 'video' extra

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        messages = rng.sample(GIVEN_NAMES, rng.randint(2, 4))
        taken: set[str] = set()
        video = video_file_name(rng)
        taken.add(video)
        noise: list[str] = []
        n_noise = rng.randint(2, 5)
        while len(noise) < n_noise:
            name = video_file_name(rng)
            if name not in taken:
                taken.add(name)
                noise.append(name)
        return {"file_name": f"{video.split('.')[0]}_transcription.txt", "text": ",".join(messages),
                "messages": messages, "video_name": video, "noise_files": noise}

    def initialize(self, device: Any) -> None:
        reason = self.unavailable_reason()
        if reason is not None:
            raise TaskError(f"MarkorTranscribeVideo writes its videos with OpenCV: it {reason}")
        rng = random.Random(self.seed)
        reset_markor(device)
        force_stop(device, VLC_PACKAGE)
        clear_storage(device)
        push_bytes(device, f"{DOWNLOAD}/{self.params['video_name']}",
                   caption_video(self.params["messages"], 8, rng))
        for name in self.params["noise_files"]:
            word = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(10))
            push_bytes(device, f"{DOWNLOAD}/{name}", caption_video([word], rng.randint(3, 10), rng, fps=1))

    def teardown(self, device: Any) -> None:
        force_stop(device, MARKOR_PACKAGE, VLC_PACKAGE)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        import difflib

        content = read_note(device, note_path(self.params["file_name"]))
        if content is None:
            return 0.0
        ratio = difflib.SequenceMatcher(None, content.strip().lower(), self.params["text"].lower()).ratio()
        return 1.0 if ratio >= 0.9 else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        title = posixpath.splitext(self.params["video_name"])[0]
        ui, frames = yield from watch_video(ui, title)
        captions = read_captions(frames)
        if not captions:
            raise ExpertStuck(f"no captions read in {self.params['video_name']}")
        yield from create_note_expert(ui, self.params["file_name"], ", ".join(captions))
        yield Finished()


__all__ = ["MarkorTranscribeVideo", "caption_video", "read_captions", "same_caption", "yellowness"]
