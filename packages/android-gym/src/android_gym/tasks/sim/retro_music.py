"""Retro Music tasks re-created from AndroidWorld: make a playlist, fill the playing queue, make a playlist of a
given length, make a playlist and export it.

Set-up, as AndroidWorld's: every file on shared storage is deleted, Retro Music's data is cleared,
and 15 songs (the task's songs and noise) are written to ``/sdcard/Music`` as tagged MP3s (silent,
three to five minutes; for the duration task the task's songs add up to 47.5 minutes). The checks
read Retro Music's databases with ``sqlite3`` in the shell (``playlist.db``: a playlist's songs in
``song_key`` order; ``music_playback_state.db``: the queue) and look for the exported ``.m3u``.
"""

from __future__ import annotations

import os
import random
import tempfile
from typing import Any

from android_gym.actions import Finished, LongPress, OpenApp, PressBack, Scroll, Type
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import go_home
from android_gym.tasks.expert import ExpertStuck, find, id_is, tap, tap_id, tap_text, text_is
from android_gym.tasks.suites import SUITES_AW

RETRO_PACKAGE = "code.name.monkey.retromusic"
PLAYLIST_DB = "/data/data/code.name.monkey.retromusic/databases/playlist.db"
PLAYBACK_DB = "/data/data/code.name.monkey.retromusic/databases/music_playback_state.db"
MUSIC_DIR = "/sdcard/Music"
SONGS = ("My Heart is Yours", "Endless Summer", "Whispering Wind", "Lost in the Echo", "Chasing Shadows",
         "Night Drive", "Echoes of Silence", "Bright Lights", "Moments", "Forever Young", "Rising Sun",
         "Silent Dreams", "City of Stars", "Moonlight Sonata", "Through the Storm", "Return to Paradise",
         "Voices in the Hall", "Under the Sky", "Dreamer's Awake", "Serenity Now", "Falling Feathers",
         "Orbiting Stars", "Reflections", "Beyond the Horizon", "Golden Days", "Twilight Calling")
THEMES = ("Chill Beats", "Morning Vibes", "Workout Energy", "Study Sessions", "Golden Oldies", "Indie Gems",
          "Rock Anthems", "Jazz Classics", "Party Mix", "Tranquil Tunes", "Disco Nights", "Acoustic Sessions")
ARTISTS = ("Ava", "Liam", "Mia", "Noah", "Zoe", "Omar", "Lena", "Ravi")


def titles(files: list[str]) -> list[str]:
    """Song titles of file names ("Night Drive.mp3" -> "Night Drive")."""
    return [f.split(".")[0] for f in files]


def _split(total: int, parts: int, rng: random.Random) -> list[int]:
    cuts = sorted(rng.randint(0, total) for _ in range(parts - 1))
    edges = [0, *cuts, total]
    return [edges[i + 1] - edges[i] for i in range(parts)]


def write_songs(device: Any, songs: list[tuple[str, str, int]]) -> None:
    """``adb push`` (file name, artist, duration ms) songs as tagged silent MP3s into ``/sdcard/Music``."""
    from android_gym.sim.apps.mp3 import silent_mp3

    device.shell(f"mkdir -p {MUSIC_DIR}")
    with tempfile.TemporaryDirectory(prefix="android_gym_songs_") as tmp:
        for name, artist, ms in songs:
            local = os.path.join(tmp, name)
            with open(local, "wb") as fh:
                fh.write(silent_mp3(name.split(".")[0], artist, ms))
            device.push(local, f"{MUSIC_DIR}/{name}")


def playlist_rows(device: Any) -> list[tuple[str, str, int]]:
    """(playlist name, song title, duration ms) of every playlist entry, each playlist's songs in order."""
    sql = ("SELECT pe.playlist_name, se.title, se.duration FROM PlaylistEntity pe JOIN SongEntity se "
           "ON pe.playlist_id = se.playlist_creator_id ORDER BY pe.playlist_name, se.song_key")
    out = device.shell(f'sqlite3 {PLAYLIST_DB} "{sql}"')
    rows = []
    for line in out.replace("\r", "").split("\n"):
        parts = line.rsplit("|", 2)
        if len(parts) == 3 and parts[2].strip().isdigit():
            rows.append((parts[0], parts[1], int(parts[2])))
    return rows


def playing_queue(device: Any) -> list[str]:
    """Titles in the playing queue, in order."""
    out = device.shell(f'sqlite3 {PLAYBACK_DB} "SELECT title FROM playing_queue"')
    return [line for line in out.replace("\r", "").split("\n") if line and not line.startswith("Error")]


def _song_on_screen(ui: Any, title: str):
    """Scroll the song list (down, then back up) until ``title`` shows; returns (ui, element)."""
    for direction in ("down", "up"):
        for _ in range(8):
            element = find(ui, text_is(title))
            if element is not None:
                return ui, element
            before = [e.text for e in ui.elements]
            ui = yield Scroll(direction)
            if [e.text for e in ui.elements] == before:
                break
    element = find(ui, text_is(title))
    if element is None:
        raise ExpertStuck(f"song {title!r} is not in the list")
    return ui, element


def select_songs(ui: Any, wanted: list[str]):
    """Open Retro Music's Songs and multi-select ``wanted`` in that order (long-press the first); returns the ui."""
    ui = yield OpenApp("Retro Music")
    for i, title in enumerate(wanted):
        ui, element = yield from _song_on_screen(ui, title)
        ui = yield (LongPress(*element.center) if i == 0 else tap(element))
    if find(ui, text_is(f"{len(wanted)} selected")) is None:
        raise ExpertStuck("the songs did not all get selected")
    return ui


def new_playlist_with_selection(ui: Any, name: str):
    """From a song selection: Add to playlist, New playlist…, type ``name``, Create; returns the ui."""
    ui = yield from tap_text(ui, "Add to playlist", scroll=False)
    ui = yield from tap_text(ui, "New playlist\u2026", scroll=False)
    field = find(ui, id_is("actionNewPlaylist"))
    if field is None:
        raise ExpertStuck("the New playlist dialog did not open")
    ui = yield Type(name, *field.center)
    if find(ui, text_is("Create")) is None:
        ui = yield PressBack()
    return (yield from tap_text(ui, "Create", scroll=False))


class _RetroTask(Task):
    """Shared set-up: clean storage and app data, then the task's and the noise songs in /sdcard/Music."""

    app_names = ("retro music",)
    suites = SUITES_AW
    difficulty = "medium"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        files = [f"{name}.mp3" for name in rng.sample(SONGS, 15)]
        n = rng.randint(2, 5)
        return {"playlist_name": f"{rng.choice(THEMES)} {rng.randint(1, 999)}", "files": files[:n],
                "noise_files": files[n:]}

    @property
    def goal(self) -> str:
        return self.template.format(names=", ".join(titles(self.params["files"])), **self.params)

    def _durations(self, rng: random.Random) -> list[int]:
        return [rng.randint(3 * 60_000, 5 * 60_000) for _ in self.params["files"]]

    def initialize(self, device: Any) -> None:
        device.shell("find /storage/emulated/0/ -mindepth 1 -type f -delete")
        device.shell(f"pm clear {RETRO_PACKAGE}")
        go_home(device, RETRO_PACKAGE)
        rng = random.Random(self.seed)
        songs = [(f, rng.choice(ARTISTS), ms) for f, ms in zip(self.params["files"], self._durations(rng))]
        songs += [(f, rng.choice(ARTISTS), rng.randint(3 * 60_000, 5 * 60_000)) for f in self.params["noise_files"]]
        write_songs(device, songs)

    def _playlist_is(self, device: Any, expected: list[str]) -> bool:
        name = self.params["playlist_name"].strip().lower()
        rows = [r for r in playlist_rows(device) if r[0].strip().lower() == name]
        return [r[1] for r in rows] == expected


@register_task
class RetroCreatePlaylist(_RetroTask):
    """A playlist with the given name holding exactly the given songs, in order."""

    name = "RetroCreatePlaylist"
    template = 'Create a playlist in Retro Music titled "{playlist_name}" with the following songs, in order: {names}'
    complexity = 2.4

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if self._playlist_is(device, titles(self.params["files"])) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from select_songs(ui, titles(self.params["files"]))
        yield from new_playlist_with_selection(ui, self.params["playlist_name"])
        yield Finished()


@register_task
class RetroPlayingQueue(_RetroTask):
    """The playing queue holds exactly the given songs, in order."""

    name = "RetroPlayingQueue"
    template = "Add the following songs, in order, {names} to my playing queue in Retro music."
    complexity = 3.2
    difficulty = "easy"

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if playing_queue(device) == titles(self.params["files"]) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from select_songs(ui, titles(self.params["files"]))
        yield from tap_text(ui, "Add to playing queue", scroll=False)
        yield Finished()


@register_task
class RetroSavePlaylist(_RetroTask):
    """Make the playlist, then export it: half the score for each, as AndroidWorld scores it."""

    name = "RetroSavePlaylist"
    template = ('Create a playlist in Retro Music titled "{playlist_name}" with the following songs, in order: '
                "{names}. Then export the playlist to the Downloads directory on the device.")
    complexity = 5.0
    difficulty = "hard"

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        made = self._playlist_is(device, titles(self.params["files"]))
        path = f"/sdcard/Download/{self.params['playlist_name']}.m3u"
        exported = "Exists" in device.shell(f'if [ -f "{path}" ]; then echo Exists; else echo Missing; fi')
        return (float(made) + float(exported)) / 2.0

    def expert(self, ui: Any) -> ExpertGenerator:
        name = self.params["playlist_name"]
        ui = yield from select_songs(ui, titles(self.params["files"]))
        ui = yield from new_playlist_with_selection(ui, name)
        ui = yield from tap_text(ui, "Playlists", scroll=False)
        ui = yield from tap_text(ui, name)
        ui = yield from tap_id(ui, "action_playlist_menu", scroll=False)
        yield from tap_text(ui, "Save as file", scroll=False)
        yield Finished()


@register_task
class RetroPlaylistDuration(_RetroTask):
    """A playlist with the given name whose songs last between 45 and 50 minutes (and no other playlist)."""

    name = "RetroPlaylistDuration"
    template = ('Create a playlist in Retro Music titled "{playlist_name}" with a duration between 45 and 50 minutes '
                "using the provided songs.")
    complexity = 3.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        files = [f"{name}.mp3" for name in rng.sample(SONGS, 15)]
        n = rng.randint(9, 11)
        return {"playlist_name": f"{rng.choice(THEMES)} {rng.randint(1, 999)}", "files": files[:n],
                "noise_files": files[n:]}

    def _durations(self, rng: random.Random) -> list[int]:
        return _split(int(47.5 * 60_000), len(self.params["files"]), rng)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        rows = playlist_rows(device)
        if not rows or any(r[0] != self.params["playlist_name"] for r in rows):
            return 0.0
        return 1.0 if 45 * 60_000 <= sum(r[2] for r in rows) <= 50 * 60_000 else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from select_songs(ui, titles(self.params["files"]))
        yield from new_playlist_with_selection(ui, self.params["playlist_name"])
        yield Finished()
