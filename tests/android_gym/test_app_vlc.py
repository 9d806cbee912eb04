"""The simulated VLC and its playlist tasks: the media library scan, the Add to playlist dialog, playlists, the
medialibrary database both ways, AndroidWorld's own set-up and check on it, experts and random agents."""

from __future__ import annotations

import sqlite3

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.apps.vlc import VLC_DB, VLC_PKG, mp4_duration_ms, tiny_mp4
from android_gym.sim.device import SimDevice
from android_gym.suites import android_world_available
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.sim import vlc as vlc_tasks
from android_gym.tasks.sim.vlc import read_playlists, reset_vlc

from .sim_ui import scroll_to_text, tap_on, texts, ui_of
from .task_checks import (
    android_world_instance,
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ == vlc_tasks.__name__)
needs_android_world = pytest.mark.skipif(
    not android_world_available(),
    reason="the android_world package is not installed (tools/setup_env.sh installs it from ../shared/vendor)")
FILES = [("scene_2_HD_copy.mp4", 42_000), ("clip_7_raw.mp4", 185_000), ("Moment_3_4K_final.mp4", 20_000)]


def sql(phone: SimPhone, statement: str) -> str:
    return phone.shell(f'sqlite3 {VLC_DB} "{statement}"')


def titles(phone: SimPhone) -> list[str]:
    return [e.text for e in ui_of(phone).elements if e.resource_id.endswith(":id/ml_item_title")]


def add_via_menu(phone: SimPhone, title: str, playlist: str, create: bool) -> None:
    ui = ui_of(phone)
    row = next(e for e in ui.elements if e.text == title)
    more = next(e for e in ui.elements if e.content_desc == "More Actions" and e.bounds[1] <= row.bounds[3]
                and e.bounds[3] >= row.bounds[1])
    phone.tap(*more.center)
    tap_on(phone, text="Add to playlist")
    if create:
        tap_on(phone, rid="dialog_playlist_name")
        phone.type_text(playlist)
        phone.back()  # the keyboard
        tap_on(phone, text="Create")
    else:
        tap_on(phone, text=playlist)


# --- the app -----------------------------------------------------------------------------------------------------


def test_the_library_lists_the_videos_on_storage_with_their_lengths():
    phone = SimPhone()
    reset_vlc(SimDevice(phone), FILES)
    phone.launch(VLC_PKG)
    assert phone.current_activity() == f"{VLC_PKG}/.gui.MainActivity"
    assert titles(phone) == ["clip_7_raw", "Moment_3_4K_final", "scene_2_HD_copy"]  # by title, case aside
    assert {"3:05", "0:20", "0:42"} <= set(texts(phone))
    rows = sql(phone, "SELECT filename, type, duration FROM Media ORDER BY filename").split()
    # the column's COLLATE NOCASE orders case aside, as the library's own queries do
    assert rows == ["clip_7_raw.mp4|1|185000", "Moment_3_4K_final.mp4|1|20000", "scene_2_HD_copy.mp4|1|42000"]
    assert sql(phone, "SELECT mrl FROM File WHERE media_id = (SELECT id_media FROM Media WHERE filename = "
                      "'clip_7_raw.mp4')").strip() == "file:///storage/emulated/0/VLCVideos/clip_7_raw.mp4"
    # a file written while VLC is open shows up; one deleted disappears
    phone.files.write("/sdcard/Movies/later.mp4", tiny_mp4(5_000))
    phone.shell("rm /sdcard/VLCVideos/clip_7_raw.mp4")
    assert titles(phone) == ["later", "Moment_3_4K_final", "scene_2_HD_copy"]
    tap_on(phone, text="later")
    assert phone.current_activity().endswith(".gui.video.VideoPlayerActivity") and "0:05" in texts(phone)


def test_add_to_playlist_creates_then_appends_and_the_playlist_page_reorders():
    phone = SimPhone()
    reset_vlc(SimDevice(phone), FILES)
    phone.launch(VLC_PKG)
    add_via_menu(phone, "scene_2_HD_copy", "Road Trips Marathon", create=True)
    add_via_menu(phone, "clip_7_raw", "Road Trips Marathon", create=False)
    assert read_playlists(SimDevice(phone)) == [("Road Trips Marathon", "scene_2_HD_copy.mp4", 0),
                                                ("Road Trips Marathon", "clip_7_raw.mp4", 1)]
    tap_on(phone, text="Playlists")
    assert "2 tracks" in texts(phone)
    tap_on(phone, text="Road Trips Marathon")
    assert phone.current_activity().endswith(".gui.HeaderMediaListActivity")
    assert titles(phone) == ["scene_2_HD_copy", "clip_7_raw"]  # playlist order, not by title
    tap_on(phone, text="More Actions")  # (the last row's)
    tap_on(phone, text="Move up")
    assert titles(phone) == ["clip_7_raw", "scene_2_HD_copy"]
    assert sql(phone, "SELECT nb_video, duration FROM Playlist").strip() == "2|227000"
    tap_on(phone, text="More Actions")
    tap_on(phone, text="Remove from playlist")
    assert read_playlists(SimDevice(phone)) == [("Road Trips Marathon", "clip_7_raw.mp4", 0)]
    tap_on(phone, text="Delete playlist")
    tap_on(phone, rid="button1")
    assert read_playlists(SimDevice(phone)) == [] and "No playlists yet" in texts(phone)


def test_the_create_button_needs_a_name_and_browse_shows_the_folder():
    phone = SimPhone()
    reset_vlc(SimDevice(phone), FILES)
    phone.launch(VLC_PKG)
    tap_on(phone, text="More Actions")
    tap_on(phone, text="Add to playlist")
    tap_on(phone, text="Create")
    assert "Please enter a playlist name" in texts(phone) and read_playlists(SimDevice(phone)) == []
    phone.back()
    tap_on(phone, text="Browse")
    tap_on(phone, text="Internal memory")
    scroll_to_text(phone, "VLCVideos")  # below Android 13's other public folders
    tap_on(phone, text="VLCVideos")
    assert titles(phone) == ["clip_7_raw", "Moment_3_4K_final", "scene_2_HD_copy"]


def test_database_written_from_outside_reaches_the_app_and_a_rescan_finds_deleted_media():
    phone = SimPhone()
    reset_vlc(SimDevice(phone), FILES)
    phone.launch(VLC_PKG)
    sql(phone, "INSERT INTO Playlist (name, creation_date) VALUES ('Comedy Specials', 0); "
               "INSERT INTO PlaylistMediaRelation (media_id, playlist_id, position) VALUES (2, 1, 0), (1, 1, 1)")
    tap_on(phone, text="Playlists")
    tap_on(phone, text="Comedy Specials")
    first, second = sql(phone, "SELECT title FROM Media WHERE id_media IN (2, 1) ORDER BY id_media DESC").split()
    assert titles(phone) == [first, second]
    # the library's own trigger keeps positions dense when an item goes
    sql(phone, "DELETE FROM PlaylistMediaRelation WHERE position = 0")
    assert sql(phone, "SELECT media_id, position FROM PlaylistMediaRelation").strip() == "1|0"
    # AndroidWorld empties Media; VLC finds the files again (new ids) when it next shows the library
    sql(phone, "DELETE FROM Media")
    phone.shell(f"am force-stop {VLC_PKG}")
    phone.shell(f"monkey -p {VLC_PKG} -c android.intent.category.LAUNCHER 1")
    assert len(titles(phone)) == 3
    assert sql(phone, "SELECT min(id_media) FROM Media").strip() == "4"
    phone.shell(f"pm clear {VLC_PKG}")
    assert read_playlists(SimDevice(phone)) == [] and phone.apps[VLC_PKG].media == []


def test_the_database_file_is_a_real_sqlite_file_and_mp4_lengths_round_trip(tmp_path):
    assert mp4_duration_ms(tiny_mp4(93_500)) == 93_500 and mp4_duration_ms(b"not a video") == -1
    phone = SimPhone()
    reset_vlc(SimDevice(phone), FILES[:1])
    phone.launch(VLC_PKG)
    local = tmp_path / "vlc_media.db"
    SimDevice(phone).pull(VLC_DB, str(local))
    with sqlite3.connect(local) as conn:
        assert conn.execute("SELECT filename, title FROM Media").fetchall() == [("scene_2_HD_copy.mp4",
                                                                                "scene_2_HD_copy")]
        assert conn.execute("SELECT db_model_version FROM Settings").fetchone()[0] > 0


# --- AndroidWorld's own code on the app ------------------------------------------------------------------------


@needs_android_world
def test_androidworlds_setup_writes_real_videos_and_its_check_wants_the_exact_order():
    device = SimDevice()
    task = android_world_instance("VlcCreatePlaylist", 1, device).task
    files = task.params["files"]
    on_disk = device.shell("ls /sdcard/VLCVideos").split()
    assert sorted(on_disk) == sorted(files + task.params["noise_files"])
    device.shell(f"monkey -p {VLC_PKG} -c android.intent.category.LAUNCHER 1")
    app = device.phone.apps[VLC_PKG]
    # the videos are AndroidWorld's OpenCV MP4s: the library reads their real lengths (20 s to 3 min at 1 fps)
    assert all(20_000 <= m["duration"] <= 180_000 for m in app.media), [m["duration"] for m in app.media]
    ids = {m["filename"]: m["id_media"] for m in app.media}
    pid = app.create_playlist(task.params["playlist_name"].upper())  # case does not matter
    for name in reversed(files):
        app.add_to_playlist(pid, ids[name])
    assert task.is_successful(device) == 0.0  # wrong order
    app.relations = []
    for name in files:
        app.add_to_playlist(pid, ids[name])
    assert task.is_successful(device) == 1.0
    app.add_to_playlist(pid, ids[task.params["noise_files"][0]])
    assert task.is_successful(device) == 0.0  # one file too many


# --- the re-creations ----------------------------------------------------------------------------------------------


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES)
    assert NAMES == ["VlcCreatePlaylist", "VlcCreateTwoPlaylists"]


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_five_seeds(name):
    check_expert_solves(name)


@pytest.mark.parametrize("name", NAMES)
def test_initial_state_is_not_a_success_and_initialize_is_repeatable(name):
    check_start_state(TASK_REGISTRY[name](seed=4), lambda device: (device.shell("ls /sdcard/VLCVideos"),
                                                                   read_playlists(device)), launch(VLC_PKG))


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=3)


def test_the_player_shows_the_videos_decoded_frame_and_its_seek_bar_moves_through_it(tmp_path):
    """A real MP4 (red for 4 s, then blue for 4 s): the player's surface shows the frame at the position, and a tap
    on the seek bar jumps there (what an agent watching a video reads: MarkorTranscribeVideo's captions)."""
    cv2 = pytest.importorskip("cv2", reason="video frames are decoded with OpenCV")
    import numpy as np

    path = str(tmp_path / "two.mp4")
    out = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"mp4v"), 2, (160, 120))
    for colour in ((0, 0, 255), (255, 0, 0)):  # BGR: red, then blue
        for _ in range(8):
            out.write(np.full((120, 160, 3), colour, dtype=np.uint8))
    out.release()
    phone = SimPhone()
    phone.files.write("/sdcard/Movies/two.mp4", (tmp_path / "two.mp4").read_bytes(), 1)
    phone.launch(VLC_PKG)
    tap_on(phone, text="two")
    assert "0:08" in texts(phone)

    def centre() -> list[int]:
        return phone.screenshot()[phone.height // 2, phone.width // 2].tolist()

    r, g, b = centre()
    assert r > 200 and b < 60
    bar = next(e for e in ui_of(phone).elements if e.resource_id.endswith(":id/player_overlay_seekbar"))
    x1, y1, x2, y2 = bar.bounds
    phone.tap(x1 + (x2 - x1) * 3 // 4, (y1 + y2) // 2)
    assert phone.apps[VLC_PKG].position_ms() >= 4000
    r, g, b = centre()
    assert b > 200 and r < 60
