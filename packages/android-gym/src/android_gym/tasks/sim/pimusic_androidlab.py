"""AndroidLab's 12 Pi Music Player tasks (``pimusic_1`` to ``pimusic_12``) re-created on the simulated Pi Music Player.

Every task starts from the home screen with the app stopped and its data cleared, shared storage holding just
the twelve songs of :data:`LAB_SONGS` (tagged MP3s in ``/sdcard/Music``, the sim's media store) and a
"Favorite" playlist (:data:`FAVORITE`); pimusic_10 starts with a song playing. The library is the one
AndroidLab's answers describe: 12 songs, 4 by Pink Floyd, "Wish You Were Here" on the album "Pulse Live",
Pink Floyd's longest lasting 1:21:03, "Dark Side Of The Moon" and "Future sounds" second and fourth by
title, Eason Chan's three lasting 11:50 together, "PINK BLOOD" first in Favorite, "Lightship" by Sonny
Boy. The other titles, artists, albums and durations are this model's choice.

Checks read the app's state (``content query --uri content://com.Project100Pi.themusicplayer/...``): the
answers of the six questions are computed from its library, the playback, sort orders and playlists of
the six operations from its player, lists and playlists; pimusic_8 also wants Pink Floyd's page on screen,
as the task is about that page.
"""

from __future__ import annotations

import os
import random
import re
import tempfile
from typing import Any, ClassVar

from android_gym.actions import Click, Finished, OpenApp
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import (
    content_insert,
    content_query,
    force_stop,
    go_home,
    normalize_answer,
    screen_nodes,
)
from android_gym.tasks.expert import ExpertStuck, find, find_all, id_is, tap_id, tap_text, type_into
from android_gym.tasks.suites import SUITES_LAB

PIMUSIC_PACKAGE = "com.Project100Pi.themusicplayer"
PIMUSIC_APP = "Pi Music Player"
URI = f"content://{PIMUSIC_PACKAGE}"
MUSIC_DIR = "/sdcard/Music"

LAB_SONGS: tuple[tuple[str, str, str, int], ...] = (
    ("Another Brick in the Wall", "Pink Floyd", "The Wall", 5 * 60 + 59),
    ("Dark Side Of The Moon", "Pink Floyd", "Pulse Live", 3600 + 21 * 60 + 3),
    ("Dust in the Wind", "Kansas", "Point of Know Return", 3 * 60 + 26),
    ("Future sounds", "Nightwave Studio", "Future sounds", 2 * 60 + 58),
    ("Lightship", "Sonny Boy", "Lightship", 3 * 60 + 40),
    ("Lonely Christmas", "Eason Chan", "Lonely Christmas", 4 * 60 + 12),
    ("PINK BLOOD", "Hikaru Utada", "PINK BLOOD", 3 * 60 + 57),
    ("Shape of My Heart", "Sting", "Ten Summoner's Tales", 4 * 60 + 38),
    ("Ten Years", "Eason Chan", "Black, White & Grey", 3 * 60 + 25),
    ("Time", "Pink Floyd", "The Dark Side of the Moon", 6 * 60 + 53),
    ("Under Mount Fuji", "Eason Chan", "What's Going On...?", 4 * 60 + 13),
    ("Wish You Were Here", "Pink Floyd", "Pulse Live", 6 * 60 + 35),
)
"""(title, artist, album, seconds) of every song the tasks start with."""

FAVORITE = ("PINK BLOOD", "Lightship", "Time")
"""The "Favorite" playlist, in order."""

PLAYING = ("Shape of My Heart", 31)
"""pimusic_10: the song playing at the start and where (seconds)."""


def song_path(title: str) -> str:
    """Where a song of :data:`LAB_SONGS` is stored."""
    return f"{MUSIC_DIR}/{title}.mp3"


def write_lab_songs(device: Any) -> None:
    """``adb push`` :data:`LAB_SONGS` as tagged silent MP3s (each half a second over its whole seconds)."""
    from android_gym.sim.apps.mp3 import silent_mp3

    device.shell(f"mkdir -p {MUSIC_DIR}")
    with tempfile.TemporaryDirectory(prefix="android_gym_pimusic_") as tmp:
        for title, artist, album, seconds in LAB_SONGS:
            local = os.path.join(tmp, f"{title}.mp3")
            with open(local, "wb") as fh:
                fh.write(silent_mp3(title, artist, seconds * 1000 + 500, album=album))
            device.push(local, song_path(title))


# --- reading the app's state ---------------------------------------------------------------------------------


def library(device: Any) -> list[dict[str, Any]]:
    """Every song the app lists: title, artist, album, duration (ms), path."""
    rows = content_query(device, f"{URI}/songs", ("title", "artist", "album", "duration", "path"))
    return [{**r, "duration": int(r["duration"] or 0)} for r in rows]


def playlists(device: Any) -> dict[str, list[str]]:
    """``{playlist name: [song path, ...]}``."""
    rows = content_query(device, f"{URI}/playlists", ("name", "songs"))
    return {r["name"] or "": [p for p in (r["songs"] or "").split("|") if p] for r in rows}


def playback(device: Any) -> dict[str, Any]:
    """The player: ``path``, ``title``, ``artist``, ``playing`` (bool), ``position`` (ms)."""
    rows = content_query(device, f"{URI}/playback", ("path", "title", "artist", "playing", "position"))
    if not rows:
        return {"path": "", "title": "", "artist": "", "playing": False, "position": 0}
    r = rows[0]
    return {"path": r["path"] or "", "title": r["title"] or "", "artist": r["artist"] or "",
            "playing": r["playing"] == "1", "position": int(r["position"] or 0)}


def sort_orders(device: Any) -> dict[str, tuple[str, str]]:
    """``{list: (field, order)}`` of the lists whose sort order was set (``tracks`` is always there)."""
    rows = content_query(device, f"{URI}/sort", ("list", "field", "order"))
    return {r["list"] or "": (r["field"] or "", r["order"] or "") for r in rows}


# --- answers -------------------------------------------------------------------------------------------------

_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen".split())}


def numbers_in(text: str) -> list[int]:
    """The whole numbers an answer states, in digits or words up to fifteen ("four songs" -> [4])."""
    out = []
    for word in re.findall(r"\d+|[a-z]+", (text or "").lower()):
        if word.isdigit():
            out.append(int(word))
        elif word in _NUMBER_WORDS:
            out.append(_NUMBER_WORDS[word])
    return out


_UNIT = {"h": 3600, "hour": 3600, "hours": 3600, "hr": 3600, "hrs": 3600, "m": 60, "min": 60, "mins": 60,
         "minute": 60, "minutes": 60, "s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1}


def durations_in(text: str) -> list[int]:
    """The durations an answer states, in seconds: "1:21:03", "11:50", "1 hour, 21 minutes and 3 seconds"."""
    text = (text or "").lower()
    found = []
    for m in re.finditer(r"\b(\d+):([0-5]\d)(?::([0-5]\d))?\b", text):
        a, b, c = m.group(1), m.group(2), m.group(3)
        found.append(int(a) * 3600 + int(b) * 60 + int(c) if c else int(a) * 60 + int(b))
    rest = re.sub(r"\b\d+:[0-5]\d(?::[0-5]\d)?\b", " ", text)
    total, seen = 0, False
    for m in re.finditer(r"(\d+)\s*(hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)\b", rest):
        total += int(m.group(1)) * _UNIT[m.group(2)]
        seen = True
    if seen:
        found.append(total)
    return found


# --- tasks ---------------------------------------------------------------------------------------------------


class _LabPiMusic(Task):
    """An AndroidLab Pi Music Player task: no parameters; the library of :data:`LAB_SONGS`, the Favorite playlist."""

    app_names = ("pi music player",)
    suites = SUITES_LAB
    difficulty = "easy"
    complexity = 2.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {}

    def initialize(self, device: Any) -> None:
        device.shell("find /storage/emulated/0/ -mindepth 1 -type f -delete")
        device.shell(f"pm clear {PIMUSIC_PACKAGE}")
        go_home(device, PIMUSIC_PACKAGE)
        write_lab_songs(device)
        content_insert(device, f"{URI}/playlists",
                       [("name", "s", "Favorite"), ("songs", "s", "|".join(song_path(t) for t in FAVORITE))])

    def teardown(self, device: Any) -> None:
        force_stop(device, PIMUSIC_PACKAGE)


def _open_tab(ui: Any, label: str) -> ExpertGenerator:
    ui = yield OpenApp(PIMUSIC_APP)
    if label != "TRACKS":
        ui = yield from tap_text(ui, label, scroll=False)
    return ui


def _open_player(ui: Any) -> ExpertGenerator:
    return (yield from tap_id(ui, "miniPlayer", scroll=False))


def _sort(ui: Any, field: str, order: str) -> ExpertGenerator:
    ui = yield from tap_id(ui, "sortButton", scroll=False)
    for label in (field, order, "OK"):
        ui = yield from tap_text(ui, label, scroll=False)
    return ui


def _rows(ui: Any) -> list[tuple[str, str, str]]:
    """(title, artist, duration) of the song rows on screen, top to bottom."""
    titles, artists, times = (find_all(ui, id_is(r)) for r in ("songName", "artistName", "songDuration"))
    return [(t.text, a.text, d.text) for t, a, d in zip(titles, artists, times)]


def _seconds(clock: str) -> int:
    parts = [int(p) for p in clock.split(":")]
    return sum(p * 60 ** i for i, p in enumerate(reversed(parts)))


def _spoken(seconds: int) -> str:
    h, m, s = seconds // 3600, seconds % 3600 // 60, seconds % 60
    parts = [f"{n} {unit}{'s' if n != 1 else ''}" for n, unit in ((h, "hour"), (m, "minute"), (s, "second")) if n]
    return (", ".join(parts[:-1]) + " and " + parts[-1]) if len(parts) > 1 else (parts[0] if parts else "0 seconds")


class _Question(_LabPiMusic):
    """A question about the library; the answer is checked against the songs the app lists."""

    answer_task = True

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if answer and self.answered(library(device), answer) else 0.0

    def answered(self, songs: list[dict[str, Any]], answer: str) -> bool:
        """Whether the (non-empty) answer is right for the library ``songs``."""
        raise NotImplementedError


@register_task
class PiMusicLab1(_Question):
    """pimusic_1 (question): how many songs the library holds (12)."""

    name = "pimusic_1"
    template = "Tell me how many songs do I have in total?"
    complexity = 1.0

    def answered(self, songs: list[dict[str, Any]], answer: str) -> bool:
        return numbers_in(answer) == [len(songs)]

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(PIMUSIC_APP)
        count = find(ui, id_is("songCount"))
        if count is None:
            raise ExpertStuck("the TRACKS tab shows no song count")
        yield Finished(count.text.lower())


@register_task
class PiMusicLab2(_Question):
    """pimusic_2 (question): how many songs are by Pink Floyd (4)."""

    name = "pimusic_2"
    template = "Help me check how many Pink Floyd's songs do I have?"
    complexity = 1.5

    def answered(self, songs: list[dict[str, Any]], answer: str) -> bool:
        return numbers_in(answer) == [sum(s["artist"] == "Pink Floyd" for s in songs)]

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "ARTISTS")
        ui = yield from tap_text(ui, "Pink Floyd")
        count = find(ui, id_is("headerSubtitle"))
        if count is None:
            raise ExpertStuck("Pink Floyd's page shows no song count")
        yield Finished(f"You have {count.text.lower()} by Pink Floyd")


@register_task
class PiMusicLab3(_Question):
    """pimusic_3 (question): the album of "Wish You Were Here" (Pulse Live)."""

    name = "pimusic_3"
    template = "What is the album name of the song Wish You Were Here?"
    complexity = 1.5

    def answered(self, songs: list[dict[str, Any]], answer: str) -> bool:
        albums = {s["album"] for s in songs if s["title"] == "Wish You Were Here"}
        said = f" {normalize_answer(answer)} "
        others = {s["album"] for s in songs} - albums
        return len(albums) == 1 and f" {normalize_answer(next(iter(albums)))} " in said and not any(
            f" {normalize_answer(a)} " in said for a in others)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(PIMUSIC_APP)
        ui = yield from tap_text(ui, "Wish You Were Here")
        ui = yield from _open_player(ui)
        album = find(ui, id_is("playAlbumName"))
        if album is None:
            raise ExpertStuck("the player shows no album")
        yield Finished(album.text)


@register_task
class PiMusicLab4(_Question):
    """pimusic_4 (question): how long Pink Floyd's longest song lasts (1:21:03)."""

    name = "pimusic_4"
    template = "What is the duration time of the longest song by Pink Floyd?"

    def answered(self, songs: list[dict[str, Any]], answer: str) -> bool:
        longest = max((s["duration"] // 1000 for s in songs if s["artist"] == "Pink Floyd"), default=None)
        stated = durations_in(answer)
        return longest is not None and bool(stated) and all(d == longest for d in stated)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "ARTISTS")
        ui = yield from tap_text(ui, "Pink Floyd")
        ui = yield from _sort(ui, "Duration", "Descending")
        rows = _rows(ui)
        if not rows:
            raise ExpertStuck("Pink Floyd's page lists no songs")
        seconds = _seconds(rows[0][2])
        yield Finished(f"{rows[0][2]} ({_spoken(seconds)})")


@register_task
class PiMusicLab5(_Question):
    """pimusic_5 (question): the second and fourth songs by title (Dark Side Of The Moon, Future sounds)."""

    name = "pimusic_5"
    template = "Sort the songs by title in ascending order. What are the second and fourth songs?"

    def answered(self, songs: list[dict[str, Any]], answer: str) -> bool:
        ordered = [s["title"] for s in sorted(songs, key=lambda s: (s["title"].lower(), s["path"]))]
        if len(ordered) < 4:
            return False
        said = f" {normalize_answer(answer)} "
        named = [t for t in ordered if f" {normalize_answer(t)} " in said]
        return sorted(named) == sorted([ordered[1], ordered[3]])

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(PIMUSIC_APP)
        ui = yield from _sort(ui, "Title", "Ascending")
        rows = _rows(ui)
        if len(rows) < 4:
            raise ExpertStuck("fewer than four songs on screen")
        yield Finished(f"The second song is '{rows[1][0]}' and the fourth song is '{rows[3][0]}'")


@register_task
class PiMusicLab6(_Question):
    """pimusic_6 (question): how long Eason Chan's songs last together (11:50)."""

    name = "pimusic_6"
    template = "What is the total duration time of all of Eason Chan's songs?"

    def answered(self, songs: list[dict[str, Any]], answer: str) -> bool:
        eason = [s["duration"] // 1000 for s in songs if s["artist"] == "Eason Chan"]
        stated = durations_in(answer)
        return bool(eason) and bool(stated) and stated[-1] == sum(eason)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "ARTISTS")
        ui = yield from tap_text(ui, "Eason Chan")
        total = sum(_seconds(d) for _, artist, d in _rows(ui) if artist == "Eason Chan")
        if not total:
            raise ExpertStuck("Eason Chan's page lists no songs")
        yield Finished(f"{_spoken(total)} in total")


# --- operations ----------------------------------------------------------------------------------------------


@register_task
class PiMusicLab7(_LabPiMusic):
    """pimusic_7: the first song of Favorite (PINK BLOOD) is playing."""

    name = "pimusic_7"
    template = "Play the first song in 'Favorite' playlist."

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        favorite = playlists(device).get("Favorite") or []
        now = playback(device)
        return 1.0 if favorite and now["path"] == favorite[0] and now["playing"] else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "PLAYLISTS")
        ui = yield from tap_text(ui, "Favorite")
        rows = find_all(ui, id_is("songRow"))
        if not rows:
            raise ExpertStuck("the Favorite playlist lists no songs")
        x, y = rows[0].center
        ui = yield Click(int(x), int(y))
        yield from _open_player(ui)
        yield Finished()


@register_task
class PiMusicLab8(_LabPiMusic):
    """pimusic_8: Pink Floyd's page, on screen, sorted by duration, longest first."""

    name = "pimusic_8"
    template = "Sort Pink Floyd's songs by duration time in descending order."

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        if sort_orders(device).get("artist:Pink Floyd") != ("duration", "desc"):
            return 0.0
        shown = any(n.package == PIMUSIC_PACKAGE and n.content_desc == "Pink Floyd"
                    and n.resource_id.endswith(":id/collapsingToolbar") for n in screen_nodes(device))
        return 1.0 if shown else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "ARTISTS")
        ui = yield from tap_text(ui, "Pink Floyd")
        yield from _sort(ui, "Duration", "Descending")
        yield Finished()


@register_task
class PiMusicLab9(_LabPiMusic):
    """pimusic_9: a playlist named Creepy exists (and Favorite is kept)."""

    name = "pimusic_9"
    template = "Create a playlist named 'Creepy' for me."

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        lists = playlists(device)
        favorite = [song_path(t) for t in FAVORITE]
        return 1.0 if set(lists) == {"Favorite", "Creepy"} and lists["Favorite"] == favorite else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from _open_tab(ui, "PLAYLISTS")
        ui = yield from tap_id(ui, "createPlaylist", scroll=False)
        ui = yield from type_into(ui, "Creepy", resource_id="playlistNameInput")
        yield from tap_text(ui, "Create", scroll=False)
        yield Finished()


@register_task
class PiMusicLab10(_LabPiMusic):
    """pimusic_10: the song that was playing (Shape of My Heart) is paused at 1:27."""

    name = "pimusic_10"
    template = "Pause the currently playing song and seek to 1 minute and 27 seconds."
    complexity = 2.5
    TARGET_S: ClassVar[int] = 87

    def initialize(self, device: Any) -> None:
        super().initialize(device)
        title, seconds = PLAYING
        device.shell(f"content update --uri {URI}/playback --bind path:s:'{song_path(title)}' --bind playing:i:1 "
                     f"--bind position:l:{seconds * 1000}")

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        now = playback(device)
        ok = now["path"] == song_path(PLAYING[0]) and not now["playing"] and now["position"] // 1000 == self.TARGET_S
        return 1.0 if ok else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(PIMUSIC_APP)
        ui = yield from _open_player(ui)
        ui = yield from tap_text(ui, "Pause", scroll=False)
        bar, total = find(ui, id_is("seekBar")), find(ui, id_is("totalTime"))
        if bar is None or total is None:
            raise ExpertStuck("the player shows no seek bar")
        x1, y1, x2, y2 = bar.bounds
        x = x1 + round(self.TARGET_S / _seconds(total.text) * (x2 - x1))
        yield Click(int(x), int((y1 + y2) // 2))
        yield Finished()


@register_task
class PiMusicLab11(_LabPiMusic):
    """pimusic_11: Lightship by Sonny Boy is playing."""

    name = "pimusic_11"
    template = "Play Lightship by Sonny Boy."
    complexity = 1.5

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        now = playback(device)
        return 1.0 if now["title"] == "Lightship" and now["artist"] == "Sonny Boy" and now["playing"] else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(PIMUSIC_APP)
        ui = yield from tap_text(ui, "Lightship")
        yield from _open_player(ui)
        yield Finished()


@register_task
class PiMusicLab12(_LabPiMusic):
    """pimusic_12: the TRACKS tab is sorted by duration, shortest first."""

    name = "pimusic_12"
    template = "Sort the songs by duration time in ascending order."
    complexity = 1.5

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if sort_orders(device).get("tracks") == ("duration", "asc") else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(PIMUSIC_APP)
        yield from _sort(ui, "Duration", "Ascending")
        yield Finished()
