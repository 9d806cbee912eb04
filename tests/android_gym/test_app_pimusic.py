"""The simulated Pi Music Player and AndroidLab's 12 pimusic tasks on it: the experts, what the screens list for
AndroidLab's judges, sorting, playlists, the player, the checks and the app's state URIs."""

from __future__ import annotations

import pytest

from android_gym.sim.apps.mp3 import clock_text
from android_gym.sim.apps.pi_music import NOW_PLAYING_HINT
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import get_task_class
from android_gym.tasks.device_state import parse_rows
from android_gym.tasks.runner import run_expert
from android_gym.tasks.sim.pimusic_androidlab import durations_in, numbers_in, song_path

from .sim_ui import scroll_to_text, tap_on, texts, type_in, ui_of

PKG = "com.Project100Pi.themusicplayer"
URI = f"content://{PKG}"
NAMES = [f"pimusic_{i}" for i in range(1, 13)]


def started(name: str = "pimusic_1") -> tuple[SimDevice, object]:
    """A device in the start state of ``name`` (the library, Favorite) and the task."""
    task = get_task_class(name)(seed=0)
    device = SimDevice()
    task.initialize(device)
    return device, task


def plain_texts(phone) -> list[str]:
    """Texts of the non-clickable, unselected TextViews, top to bottom: what AndroidLab's song/info readers take."""
    return [e.text for e in ui_of(phone).elements if e.class_name == "android.widget.TextView" and not e.clickable
            and not e.selected and e.package == PKG]


def song_rows(phone) -> list[tuple[str, str, str]]:
    """(title, artist, duration) of the rows on screen."""
    els = ui_of(phone).elements
    cols = [[e.text for e in els if e.resource_id == f"{PKG}:id/{rid}"] for rid in ("songName", "artistName",
                                                                                    "songDuration")]
    return list(zip(*cols))


def playback(phone) -> dict:
    cols = ["path", "title", "artist", "playing", "position"]
    return parse_rows(phone.shell(f"content query --uri {URI}/playback"), cols)[0]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_every_task_and_the_start_state_does_not(name, seed):
    task = get_task_class(name)(seed=seed)
    device = SimDevice()
    task.initialize(device)
    assert task.params == {}
    assert task.is_successful(device, None) == 0.0
    assert device.observe().package == "com.google.android.apps.nexuslauncher"
    result = run_expert(task, device)
    assert result.success == 1.0, (name, [a.to_dict() for a in result.actions])
    assert result.steps <= task.max_steps


def test_library_holds_the_songs_androidlabs_answers_describe():
    device, _ = started()
    phone = device.phone
    phone.launch(PKG)
    assert "12 Songs" in texts(phone)
    tabs = {e.text: e for e in ui_of(phone).elements if e.text in ("TRACKS", "ALBUMS", "ARTISTS", "PLAYLISTS")}
    assert set(tabs) == {"TRACKS", "ALBUMS", "ARTISTS", "PLAYLISTS"}
    assert [t for t, e in tabs.items() if e.selected] == ["TRACKS"] and all(e.clickable for e in tabs.values())
    titles = [r[0] for r in song_rows(phone)]
    assert titles[1] == "Dark Side Of The Moon" and titles[3] == "Future sounds"  # by title, ascending
    assert ("Lightship", "Sonny Boy", "3:40") in song_rows(phone)
    tap_on(phone, "ARTISTS")
    assert [e.text for e in ui_of(phone).elements if e.selected] == ["ARTISTS"]
    tap_on(phone, "Pink Floyd")
    header = [e for e in ui_of(phone).elements if e.content_desc == "Pink Floyd"]
    assert len(header) == 1 and header[0].class_name == "android.widget.FrameLayout" and not header[0].clickable
    assert "4 Songs" in texts(phone)
    assert max(song_rows(phone), key=lambda r: durations_in(r[2])[0])[2] == "1:21:03"
    phone.back()
    tap_on(phone, "Eason Chan")
    assert sum(durations_in(r[2])[0] for r in song_rows(phone)) == 11 * 60 + 50


def test_sort_dialog_orders_each_list_on_its_own():
    device, _ = started()
    phone = device.phone
    phone.launch(PKG)
    tap_on(phone, rid="sortButton")
    assert "Sort By" in plain_texts(phone)
    tap_on(phone, "Duration")
    tap_on(phone, "Cancel")
    assert song_rows(phone)[0][0] == "Another Brick in the Wall"  # cancelled: still by title
    tap_on(phone, rid="sortButton")
    for label in ("Duration", "Ascending", "OK"):
        tap_on(phone, label)
    seconds = [durations_in(r[2])[0] for r in song_rows(phone)]
    assert len(seconds) >= 8 and seconds == sorted(seconds)
    # AndroidLab reads title, artist and duration as three consecutive plain texts per song
    shown = plain_texts(phone)
    first = shown.index(song_rows(phone)[0][0])
    assert shown[first:first + 6] == [*song_rows(phone)[0], *song_rows(phone)[1]]
    tap_on(phone, "ARTISTS")
    tap_on(phone, "Pink Floyd")
    assert [r[0] for r in song_rows(phone)][0] == "Another Brick in the Wall"  # the artist page keeps its own order
    tap_on(phone, rid="sortButton")
    for label in ("Duration", "Descending", "OK"):
        tap_on(phone, label)
    assert [r[2] for r in song_rows(phone)] == ["1:21:03", "6:53", "6:35", "5:59"]
    rows = parse_rows(phone.shell(f"content query --uri {URI}/sort"), ["list", "field", "order"])
    assert {(r["list"], r["field"], r["order"]) for r in rows} == {("tracks", "duration", "asc"),
                                                                  ("artist:Pink Floyd", "duration", "desc")}


def test_playlists_are_created_by_name_and_bad_names_are_refused():
    device, task = started("pimusic_9")
    phone = device.phone
    phone.launch(PKG)
    tap_on(phone, "PLAYLISTS")
    tap_on(phone, rid="createPlaylist")
    tap_on(phone, "Create")  # empty name
    assert "Create Playlist" in texts(phone) and task.is_successful(device) == 0.0
    type_in(phone, "playlistNameInput", "favorite")  # taken, whatever the case
    tap_on(phone, "Create")
    assert task.is_successful(device) == 0.0
    assert "Create Playlist" in texts(phone)  # still open
    tap_on(phone, "Cancel")
    tap_on(phone, rid="createPlaylist")  # a fresh, empty field
    type_in(phone, "playlistNameInput", "Creepy")
    tap_on(phone, "Create")
    assert "Creepy" in plain_texts(phone) and task.is_successful(device) == 1.0
    assert [e.text for e in ui_of(phone).elements if e.selected] == ["PLAYLISTS"]
    assert "Playlist name" not in texts(phone)
    phone.shell(f"content delete --uri {URI}/playlists --where \"name='Favorite'\"")
    assert task.is_successful(device) == 0.0  # the playlist it started with must stay


def test_player_pauses_seeks_and_names_the_now_playing_list_and_equalizer():
    device, task = started("pimusic_10")
    phone = device.phone
    assert playback(phone)["title"] == "Shape of My Heart" and playback(phone)["playing"] == "1"
    phone.launch(PKG)
    tap_on(phone, rid="miniPlayer")
    shown = plain_texts(phone)
    assert "Shape of My Heart" in shown and "4:38" in shown and NOW_PLAYING_HINT in shown
    assert "Now Playing list" in NOW_PLAYING_HINT and "Equalizer" in NOW_PLAYING_HINT
    bar = next(e for e in ui_of(phone).elements if e.resource_id == f"{PKG}:id/seekBar")
    x1, y1, x2, y2 = bar.bounds
    phone.tap(x1 + round(87 / 278 * (x2 - x1)), (y1 + y2) // 2)
    assert "1:27" in plain_texts(phone)
    assert task.is_successful(device) == 0.0  # still playing: it moves on
    tap_on(phone, "Pause")
    assert task.is_successful(device) == 0.0  # paused, but past 1:27 by now
    phone.tap(x1 + round(87 / 278 * (x2 - x1)), (y1 + y2) // 2)
    tap_on(phone, "Play")
    tap_on(phone, "Pause")
    assert task.is_successful(device) == 0.0  # played on a little
    phone.tap(x1 + round(87 / 278 * (x2 - x1)), (y1 + y2) // 2)
    assert "1:27" in plain_texts(phone) and task.is_successful(device) == 1.0
    for _ in range(3):
        phone.advance_clock(60_000)
    assert task.is_successful(device) == 1.0 and "1:27" in plain_texts(phone)  # paused stays put
    phone.swipe(900, 1200, 100, 1200, 200)
    assert "Now Playing list" in texts(phone) and "Shape of My Heart" in texts(phone)
    phone.back()
    phone.swipe(100, 1200, 900, 1200, 200)
    assert "Equalizer" in texts(phone) and "Rock" in texts(phone)


def test_wrong_paths_fail_the_operation_checks():
    device, task = started("pimusic_11")
    phone = device.phone
    phone.launch(PKG)
    scroll_to_text(phone, "Lonely Christmas")
    tap_on(phone, "Lonely Christmas")
    assert task.is_successful(device) == 0.0
    tap_on(phone, rid="miniPlayer")
    tap_on(phone, "Previous")
    assert playback(phone)["title"] == "Lightship" and task.is_successful(device) == 1.0  # the queue's song before
    tap_on(phone, "Pause")
    assert task.is_successful(device) == 0.0

    device, task = started("pimusic_7")
    phone = device.phone
    phone.launch(PKG)
    tap_on(phone, "PLAYLISTS")
    tap_on(phone, "Favorite")
    assert len([e for e in ui_of(phone).elements if e.content_desc == "Favorite"]) == 1
    tap_on(phone, "Lightship")  # the second song
    assert task.is_successful(device) == 0.0
    tap_on(phone, "PINK BLOOD")
    tap_on(phone, rid="miniPlayer")
    assert "PINK BLOOD" in plain_texts(phone) and task.is_successful(device) == 1.0

    device, task = started("pimusic_8")
    phone = device.phone
    phone.launch(PKG)
    tap_on(phone, rid="sortButton")
    for label in ("Duration", "Descending", "OK"):
        tap_on(phone, label)
    assert task.is_successful(device) == 0.0  # the TRACKS tab, not Pink Floyd's songs
    tap_on(phone, "ARTISTS")
    tap_on(phone, "Pink Floyd")
    assert task.is_successful(device) == 0.0  # on the page, but not sorted
    tap_on(phone, rid="sortButton")
    for label in ("Duration", "Descending", "OK"):
        tap_on(phone, label)
    assert task.is_successful(device) == 1.0
    phone.back()
    assert task.is_successful(device) == 0.0  # sorted, but the page was left

    device, task = started("pimusic_12")
    phone = device.phone
    phone.launch(PKG)
    tap_on(phone, rid="sortButton")
    for label in ("Duration", "Descending", "OK"):
        tap_on(phone, label)
    assert task.is_successful(device) == 0.0


@pytest.mark.parametrize("name,right,wrong", [
    ("pimusic_1", ["12 songs", "You have twelve songs", "12"], ["11 songs", "12 or 13", "none"]),
    ("pimusic_2", ["4 songs", "four", "There are 4 Pink Floyd songs"], ["5", "3 songs", "4 or 5"]),
    ("pimusic_3", ["Pulse Live", "It is on the album 'Pulse Live'."], ["The Wall", "Pulse", "Pulse Live or The Wall"]),
    ("pimusic_4", ["1 hour, 21 minutes and 3 seconds", "1:21:03", "81 minutes 3 seconds"],
     ["6:53", "1 hour 21 minutes", "1:21:03 or 6:53"]),
    ("pimusic_5", ["The second song is 'Dark Side Of The Moon' and the fourth song is 'Future sounds'",
                   "Future sounds, Dark Side of the Moon"],
     ["Dark Side Of The Moon", "Dust in the Wind and Lightship", "Dark Side Of The Moon, Dust in the Wind, Future sounds"]),
    ("pimusic_6", ["11 minutes and 50 seconds", "11:50", "710 seconds"], ["11 minutes", "12:50", "4:12"]),
])
def test_answers_are_checked_against_the_library(name, right, wrong):
    device, task = started(name)
    for answer in right:
        assert task.is_successful(device, answer) == 1.0, answer
    for answer in [*wrong, "", None]:
        assert task.is_successful(device, answer) == 0.0, answer
    device.shell(f"rm '{song_path('Time')}'")  # one Pink Floyd song fewer: the truth follows the device
    if name == "pimusic_1":
        assert task.is_successful(device, "11 songs") == 1.0 and task.is_successful(device, "12 songs") == 0.0
    if name == "pimusic_2":
        assert task.is_successful(device, "3 songs") == 1.0


def test_answer_parsers():
    assert numbers_in("You have twelve songs, 3 of them new") == [12, 3]
    assert durations_in("1:21:03") == [4863] and durations_in("11 minutes and 50 seconds") == [710]
    assert durations_in("1 hour, 21 minutes and 3 seconds") == [4863] and durations_in("no idea") == []
    assert clock_text(4863999) == "1:21:03" and clock_text(87500) == "1:27" and clock_text(-5) == "0:00"


def test_state_uris_refuse_bad_input_and_pm_clear_resets():
    device, _ = started("pimusic_10")
    phone = device.phone
    assert "unknown Pi Music Player uri" in phone.shell(f"content query --uri {URI}/albums")
    assert "no column" in phone.shell(f"content update --uri {URI}/playback --bind volume:i:3")
    assert "no song file" in phone.shell(f"content update --uri {URI}/playback --bind path:s:/sdcard/none.mp3")
    assert "0 or 1" in phone.shell(f"content update --uri {URI}/playback --bind playing:s:yes")
    assert "no song file" in phone.shell(f"content insert --uri {URI}/playlists --bind name:s:X "
                                         "--bind songs:s:/sdcard/none.mp3")
    assert "new, non-empty name" in phone.shell(f"content insert --uri {URI}/playlists --bind name:s:Favorite")
    assert "insert only" in phone.shell(f"content insert --uri {URI}/songs --bind name:s:X")
    assert len(parse_rows(phone.shell(f"content query --uri {URI}/songs --projection title"), ["title"])) == 12
    phone.shell(f"pm clear {PKG}")
    assert parse_rows(phone.shell(f"content query --uri {URI}/playlists --projection name"), ["name"]) == []
    assert playback(phone)["path"] in ("", None) and playback(phone)["playing"] == "0"
    assert "nothing is in the player" in phone.shell(f"content update --uri {URI}/playback --bind playing:i:1")
