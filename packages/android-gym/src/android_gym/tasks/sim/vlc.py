"""VLC playlists: AndroidWorld's two playlist tasks re-created (a playlist of given videos, in a given order).

Set-up leaves VLC's media library without playlists or media rows (``sqlite3`` on its
``vlc_media.db``, as AndroidWorld clears those tables) and writes the instance's videos, the wanted
ones and as many others, as MP4 files into ``/sdcard/VLCVideos``; VLC finds them when it starts.
The check reads the playlist back from the database the way AndroidWorld's does: the playlist named
as asked (case aside) holds exactly the files asked for, at positions 0, 1, 2, ... in the goal's order.

The expert works the Video tab as a person does: for each file in order it finds the row showing
the file's title (the name without ``.mp4``), opens its "More Actions", "Add to playlist", and either
types the new playlist's name and presses Enter (the first file) or taps the playlist in the dialog.
"""

from __future__ import annotations

import os
import random
import tempfile
from typing import Any, ClassVar

from android_gym.actions import Finished, OpenApp, Scroll
from android_gym.tasks.base import ExpertGenerator, Task, TaskError, register_task
from android_gym.tasks.device_state import force_stop, go_home
from android_gym.tasks.expert import ExpertStuck, find, find_all, id_is, tap, tap_text, type_into
from android_gym.tasks.sim.files import variant_name
from android_gym.tasks.suites import SUITES_AW

VLC_PACKAGE = "org.videolan.vlc"
VLC_APP = "VLC"
VLC_DB = "/data/data/org.videolan.vlc/app_db/vlc_media.db"
VIDEOS_DIR = "/storage/emulated/0/VLCVideos"

PLAYLIST_QUERY = (
    "SELECT Playlist.name, Media.filename, PlaylistMediaRelation.position FROM PlaylistMediaRelation "
    "INNER JOIN Playlist ON Playlist.id_playlist = PlaylistMediaRelation.playlist_id "
    "INNER JOIN Media ON Media.id_media = PlaylistMediaRelation.media_id "
    "ORDER BY Playlist.name, PlaylistMediaRelation.position"
)
"""The join AndroidWorld's check reads: (playlist name, media file name, position) rows."""

_PREFIXES = ("clip", "footage", "scene", "recording", "highlight", "moment", "episode")
_SUFFIXES = ("", "HD", "4K", "raw", "export")
_THEMES = ("Adventure", "Comedy", "Daily Routines", "Documentary Insights", "Epic Moments", "Family Gatherings",
           "Fitness Challenges", "Gaming Sessions", "How To", "Mystery and Thrills", "Recipe Collection",
           "Road Trips", "Summer Highlights", "Tech Reviews", "Travel Guide", "Ultimate Fails")
_QUALIFIERS = ("Essentials", "Favorites", "Marathon", "Playlist", "Series", "Specials", "Ultimate Collection")


def video_file_name(rng: random.Random) -> str:
    """A video file name as AndroidWorld draws them: ``scene_15_raw.mp4`` with a date, code or word added."""
    base = f"{rng.choice(_PREFIXES)}_{rng.randint(1, 99)}_{rng.choice(_SUFFIXES)}"
    return variant_name(base + ".mp4", rng,
                        code_chars="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")


def playlist_name(rng: random.Random) -> str:
    """A playlist name as AndroidWorld draws them ("Road Trips Marathon")."""
    return f"{rng.choice(_THEMES)} {rng.choice(_QUALIFIERS)}"


def distinct_names(rng: random.Random, n: int, taken: set[str]) -> list[str]:
    """``n`` video file names not in ``taken`` nor repeated (added to ``taken``)."""
    out: list[str] = []
    while len(out) < n:
        name = video_file_name(rng)
        if name not in taken:
            taken.add(name)
            out.append(name)
    return out


# --- set-up and reading back through the shell -----------------------------------------------------------------


def push_bytes(device: Any, remote: str, data: bytes) -> None:
    """``adb push`` of ``data`` to ``remote`` (``SimDevice.push`` or ``AdbDevice.push``)."""
    handle, local = tempfile.mkstemp(suffix=os.path.splitext(remote)[1])
    try:
        with os.fdopen(handle, "wb") as fh:
            fh.write(data)
        device.push(local, remote)
    finally:
        os.remove(local)


def reset_vlc(device: Any, files: list[tuple[str, int]]) -> None:
    """Start state: VLC stopped, no playlists or media rows, exactly ``files`` (name, length ms) in VLCVideos."""
    from android_gym.sim.apps.vlc import tiny_mp4

    go_home(device, VLC_PACKAGE)
    device.shell(f"rm -rf {VIDEOS_DIR}; mkdir -p {VIDEOS_DIR}")
    out = device.shell(f'sqlite3 {VLC_DB} "DELETE FROM PlaylistMediaRelation; DELETE FROM Playlist; '
                       'DELETE FROM File; DELETE FROM Media;"')
    if out.strip():
        raise TaskError(f"could not clear VLC's media library: {out.strip()}")
    for name, length_ms in files:
        push_bytes(device, f"{VIDEOS_DIR}/{name}", tiny_mp4(length_ms))


def read_playlists(device: Any) -> list[tuple[str, str, int]]:
    """(playlist name, media file name, position) of every playlist item, as AndroidWorld's check reads them."""
    out = device.shell(f'sqlite3 {VLC_DB} "{PLAYLIST_QUERY}"')
    rows = []
    for line in out.splitlines():
        parts = line.rsplit("|", 2)
        if len(parts) == 3 and parts[2].strip().lstrip("-").isdigit():
            rows.append((parts[0], parts[1], int(parts[2])))
    return rows


def playlist_matches(rows: list[tuple[str, str, int]], name: str, files: list[str]) -> bool:
    """AndroidWorld's rule: the rows of the playlist called ``name`` (case aside) are ``files`` at 0, 1, ..."""
    mine = [(f, pos) for n, f, pos in rows if n.strip().lower() == name.strip().lower()]
    return sorted(mine, key=lambda r: r[1]) == [(f, i) for i, f in enumerate(files)]


# --- expert building blocks ------------------------------------------------------------------------------------


def _titles(ui: Any) -> list[Any]:
    return find_all(ui, id_is("ml_item_title"))


def find_video_row(ui: Any, title: str, max_scrolls: int = 14):
    """Scroll the media list (down to its end, then up) until the row titled ``title`` shows whole; (ui, its More
    Actions button)."""
    direction = "down"
    for _ in range(max_scrolls):
        lists = find_all(ui, id_is("media_list"))
        if not lists:
            raise ExpertStuck("no media list on screen")
        element = find(ui, lambda e: id_is("ml_item_title")(e) and e.text == title)
        if element is not None:
            more = _row_more_button(ui, element)
            if more is not None:
                return ui, more
            # the row is cut by the list's edge: scroll it into view
            top, bottom = lists[0].bounds[1], lists[0].bounds[3]
            ui = yield Scroll("down" if element.center[1] > (top + bottom) // 2 else "up", *lists[0].center)
            continue
        before = [(e.text, e.bounds) for e in _titles(ui)]
        ui = yield Scroll(direction, *lists[0].center)
        if [(e.text, e.bounds) for e in _titles(ui)] == before:
            if direction == "up":
                break
            direction = "up"
    raise ExpertStuck(f"no video {title!r} in VLC's list")


def _row_more_button(ui: Any, title_element: Any) -> Any | None:
    """The "More Actions" button on the same row as a title (None when the list's edge cuts it off)."""
    top, bottom = title_element.bounds[1], title_element.bounds[3]
    for e in find_all(ui, id_is("item_more")):
        if e.bounds[1] <= bottom and e.bounds[3] >= top:
            return e
    return None


def add_to_playlist_expert(ui: Any, file_name: str, playlist: str, create: bool):
    """From the Video tab: the file's row, More Actions, Add to playlist, then create ``playlist`` or pick it."""
    title = file_name.rsplit(".", 1)[0]
    ui, more = yield from find_video_row(ui, title)
    ui = yield tap(more)
    ui = yield from tap_text(ui, "Add to playlist", scroll=False)
    if create:
        # Enter in the name field creates the playlist, as "Create" does
        ui = yield from type_into(ui, playlist, resource_id="dialog_playlist_name", submit=True)
    else:
        ui = yield from tap_text(ui, playlist)
    return ui


def create_playlist_expert(ui: Any, playlist: str, files: list[str]):
    """Build ``playlist`` from ``files`` in order (the first one creates it); returns the ui."""
    for i, name in enumerate(files):
        ui = yield from add_to_playlist_expert(ui, name, playlist, create=i == 0)
    return ui


# --- tasks -----------------------------------------------------------------------------------------------------


class _VlcTask(Task):
    app_names: ClassVar[tuple[str, ...]] = ("vlc",)
    suites = SUITES_AW
    difficulty = "medium"

    def start_files(self) -> list[str]:
        """Every video written to VLCVideos, wanted and others alike."""
        raise NotImplementedError

    def initialize(self, device: Any) -> None:
        rng = random.Random(repr(sorted(self.params.items())))
        files = sorted(self.start_files())
        reset_vlc(device, [(name, rng.randint(20, 180) * 1000) for name in files])

    def teardown(self, device: Any) -> None:
        force_stop(device, VLC_PACKAGE)


@register_task
class VlcCreatePlaylist(_VlcTask):
    """One playlist of two to five videos, among as many other videos."""

    name = "VlcCreatePlaylist"
    template = ('Create a playlist titled "{playlist_name}" with the following files in VLC (located in Internal '
                'Memory/VLCVideos), in order: {files}')
    complexity = 2.8

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        n = rng.randint(2, 5)
        taken: set[str] = set()
        return {"playlist_name": playlist_name(rng), "files": distinct_names(rng, n, taken),
                "noise_files": distinct_names(rng, n, taken)}

    @property
    def goal(self) -> str:
        return self.template.format(playlist_name=self.params["playlist_name"], files=", ".join(self.params["files"]))

    def start_files(self) -> list[str]:
        return list(self.params["files"]) + list(self.params.get("noise_files", []))

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if playlist_matches(read_playlists(device), self.params["playlist_name"], self.params["files"]) \
            else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(VLC_APP)
        yield from create_playlist_expert(ui, self.params["playlist_name"], list(self.params["files"]))
        yield Finished()


@register_task
class VlcCreateTwoPlaylists(_VlcTask):
    """Two playlists, each of two to five videos; half credit for each one right."""

    name = "VlcCreateTwoPlaylists"
    # AndroidWorld's metadata template (its goal, below, words the two requests as its task class does).
    template = ('Create a playlist titled "{playlist_name1}" with the following files in VLC, in order: {files1}. '
                'And then, Create a playlist titled "{playlist_name2}" with the following files in VLC (located in '
                'Internal Memory/VLCVideos), in order: {files1}')
    complexity = 4.8

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        taken: set[str] = set()
        params: dict[str, Any] = {}
        for i in (1, 2):
            n = rng.randint(2, 5)
            params[f"playlist_name{i}"] = playlist_name(rng)
            params[f"files{i}"] = distinct_names(rng, n, taken)
            params[f"noise_files{i}"] = distinct_names(rng, n, taken)
        return params

    @property
    def goal(self) -> str:
        p = self.params
        return (f'Create a playlist titled "{p["playlist_name1"]}" with the following files in VLC (located in '
                f'Internal Memory/VLCVideos), in order: {", ".join(p["files1"])}. And then, create a playlist titled '
                f'"{p["playlist_name2"]}" with the following files in VLC, in order: {", ".join(p["files2"])}.')

    def start_files(self) -> list[str]:
        p = self.params
        return sorted(set(p["files1"]) | set(p["files2"]) | set(p.get("noise_files1", []))
                      | set(p.get("noise_files2", [])))

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        rows = read_playlists(device)
        p = self.params
        return (playlist_matches(rows, p["playlist_name1"], p["files1"])
                + playlist_matches(rows, p["playlist_name2"], p["files2"])) / 2

    def expert(self, ui: Any) -> ExpertGenerator:
        p = self.params
        ui = yield OpenApp(VLC_APP)
        same = p["playlist_name1"].strip().lower() == p["playlist_name2"].strip().lower()
        ui = yield from create_playlist_expert(ui, p["playlist_name1"], list(p["files1"]))
        if same:  # one name for both: the second list goes on the end of the same playlist
            for name in p["files2"]:
                ui = yield from add_to_playlist_expert(ui, name, p["playlist_name1"], create=False)
        else:
            yield from create_playlist_expert(ui, p["playlist_name2"], list(p["files2"]))
        yield Finished()


__all__ = ["VLC_DB", "VlcCreatePlaylist", "VlcCreateTwoPlaylists", "read_playlists", "reset_vlc"]
