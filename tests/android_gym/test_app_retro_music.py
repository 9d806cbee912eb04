"""The simulated Retro Music and its tasks: the library read from MP3s on /sdcard (tags, real durations), playlists
and the playing queue in step with the app's SQLite databases both ways, export, the experts, a random agent, and
AndroidWorld's own Retro Music tasks on it (their set-up needs ffmpeg)."""

from __future__ import annotations

import os

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.apps.mp3 import read_mp3, silent_mp3
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.sim import retro_music as retro_tasks
from android_gym.tasks.sim.retro_music import PLAYBACK_DB, PLAYLIST_DB, playing_queue, playlist_rows

from .sim_ui import tap_on, texts
from .task_checks import (
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

PKG = "code.name.monkey.retromusic"
NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ == retro_tasks.__name__)
SONGS = (("Night Drive", "Ava", 200_016), ("Moments", "Liam", 185_040), ("Bright Lights", "Ava", 240_984))
"""(title, artist, ms): lengths in whole 72 ms frames of the silent MP3s."""


def _phone_with_songs(tmp_path) -> SimPhone:
    phone = SimPhone()
    device = SimDevice(phone=phone)
    for title, artist, ms in SONGS:
        local = tmp_path / f"{title}.mp3"
        local.write_bytes(silent_mp3(title, artist, ms))
        device.push(str(local), f"/sdcard/Music/{title}.mp3")
    phone.shell("echo 'not music' > /sdcard/Music/readme.txt")
    return phone


def test_mp3_reader_gets_tags_and_duration_from_the_frames():
    info = read_mp3(silent_mp3("Endless Summer", "Zoe", 183_456))
    assert (info.title, info.artist, info.duration_ms) == ("Endless Summer", "Zoe", 183_456)
    assert read_mp3(b"plain text") is None


def test_songs_tab_lists_the_library_by_title_with_artist_and_length(tmp_path):
    phone = _phone_with_songs(tmp_path)
    phone.shell(f"am start -n {PKG}/.activities.MainActivity")
    shown = texts(phone)
    assert [t for t in shown if t in {s[0] for s in SONGS}] == ["Bright Lights", "Moments", "Night Drive"]
    assert "Ava \u2022 3:20" in shown and "readme" not in " ".join(shown)
    tap_on(phone, text="Artists")
    assert "Ava" in texts(phone) and "2 songs" in texts(phone)


def test_selection_makes_a_playlist_in_pick_order_that_the_database_holds(tmp_path):
    phone = _phone_with_songs(tmp_path)
    phone.launch(PKG)
    tap_on(phone, text="Night Drive", long=True)
    tap_on(phone, text="Bright Lights")
    assert "2 selected" in texts(phone)
    tap_on(phone, text="Add to playlist")
    tap_on(phone, text="New playlist\u2026")
    tap_on(phone, rid="actionNewPlaylist")
    phone.type_text("Road Trip")
    tap_on(phone, text="Create")
    device = SimDevice(phone=phone)
    assert playlist_rows(device) == [("Road Trip", "Night Drive", 200_016), ("Road Trip", "Bright Lights", 240_984)]
    tap_on(phone, text="Playlists")
    tap_on(phone, text="Road Trip")
    assert "2 songs \u2022 7:21" in texts(phone)
    tap_on(phone, rid="action_playlist_menu")
    tap_on(phone, text="Save as file")
    m3u = phone.shell("cat '/sdcard/Download/Road Trip.m3u'")
    assert m3u.startswith("#EXTM3U\n#EXTINF:200,Ava - Night Drive\n/storage/emulated/0/Music/Night Drive.mp3\n")


def test_database_writes_reach_the_app_and_a_folder_wipe_is_survived(tmp_path):
    phone = _phone_with_songs(tmp_path)
    app = phone.apps[PKG]
    app.create_playlist("Mine", ["/sdcard/Music/Moments.mp3"])
    phone.shell(f'sqlite3 {PLAYLIST_DB} "UPDATE PlaylistEntity SET playlist_name = \'Renamed\'"')
    assert [p["name"] for p in app.playlists] == ["Renamed"]
    phone.shell(f'sqlite3 {PLAYLIST_DB} "DELETE FROM SongEntity"')
    assert app.playlists[0]["songs"] == []
    local = tmp_path / "playlist.db"
    local.write_bytes(phone.files.read(PLAYLIST_DB))
    phone.shell(f"rm -r {os.path.dirname(PLAYLIST_DB)}/*")  # AndroidWorld's push replaces the whole folder
    SimDevice(phone=phone).push(str(local), PLAYLIST_DB)
    assert playing_queue(SimDevice(phone=phone)) == []  # the queue's database is there again


def test_song_menu_and_selection_fill_the_playing_queue_in_order(tmp_path):
    phone = _phone_with_songs(tmp_path)
    phone.launch(PKG)
    tap_on(phone, text="Moments", long=True)
    tap_on(phone, text="Night Drive")
    tap_on(phone, text="Add to playing queue")
    device = SimDevice(phone=phone)
    assert playing_queue(device) == ["Moments", "Night Drive"]
    tap_on(phone, rid="menu")  # the last row's menu: Night Drive
    tap_on(phone, text="Play next")
    assert playing_queue(device) == ["Moments", "Night Drive", "Night Drive"]
    tap_on(phone, text="Open player")
    tap_on(phone, text="Playing queue")
    tap_on(phone, text="Clear queue")
    assert playing_queue(device) == []
    phone.shell(f"pm clear {PKG}")
    assert phone.shell(f'sqlite3 {PLAYBACK_DB} "SELECT count(*) FROM playing_queue"') == "0\n"


# --- tasks -----------------------------------------------------------------------------------------------


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES)
    assert len(NAMES) == 4


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_three_seeds(name):
    check_expert_solves(name, seeds=3)


@pytest.mark.parametrize("name", ["RetroCreatePlaylist", "RetroPlayingQueue"])
def test_initial_state_is_not_a_success_and_initialize_is_repeatable(name):
    check_start_state(TASK_REGISTRY[name](seed=3),
                      lambda device: (sorted(device.shell("ls /sdcard/Music").split("\n")), playlist_rows(device),
                                      playing_queue(device)), launch(PKG))


def test_wrong_order_or_extra_songs_fail():
    device = SimDevice()
    task = TASK_REGISTRY["RetroCreatePlaylist"](seed=1)
    task.initialize(device)
    app = device.phone.apps[PKG]
    paths = [f"/sdcard/Music/{f}" for f in task.params["files"]]
    app.create_playlist(task.params["playlist_name"], list(reversed(paths)))
    assert task.is_successful(device) == 0.0
    app.playlists[0]["songs"] = paths + [f"/sdcard/Music/{task.params['noise_files'][0]}"]
    assert task.is_successful(device) == 0.0
    app.playlists[0]["songs"] = paths
    assert task.is_successful(device) == 1.0


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=3)
