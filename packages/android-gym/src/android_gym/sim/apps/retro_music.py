"""Retro Music (code.name.monkey.retromusic): the songs on /sdcard, playlists, the playing queue.

The library is what MediaStore would index: every ``.mp3`` on shared storage (outside ``Android/``),
with title, artist, album and duration read from the file (:mod:`android_gym.sim.apps.mp3`; a file
without tags shows its name). Pages: ``main`` with tabs Songs (by title; tap plays the list from that
song; each row's "More options" menu: Play next, Add to playing queue, Add to playlist…; long-press
starts a multi-selection whose bar adds the picked songs, in the order picked, to the queue or a
playlist), Albums, Artists and Playlists ("New playlist" in the bar), ``playlist`` (its songs in
order and total length; its menu: Play, Add to playing queue, Rename, Save as file, Delete),
``player`` (now playing, previous/play/next, "Playing queue") and ``queue``.

Databases, at the real app's paths with its Room/SQLite schemas, built from this state on every
read and loaded back when written: ``playlist.db`` (``PlaylistEntity``, ``SongEntity``; a
playlist's order is ``song_key`` order) and ``music_playback_state.db`` (``playing_queue`` and
``original_playing_queue``). "Save as file" writes ``/sdcard/Download/<playlist>.m3u``.
"""

from __future__ import annotations

import posixpath
import zlib
from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.apps.mp3 import clock_text, media_fields
from android_gym.sim.databases import build_database, read_table
from android_gym.sim.view import (
    Button,
    Column,
    Dialog,
    EditText,
    ImageButton,
    ListItem,
    Row,
    ScrollList,
    Text,
    Toolbar,
    View,
)
from android_gym.sim.widgets import MultiSelect

RETRO_PKG = "code.name.monkey.retromusic"
PLAYLIST_DB = "/data/data/code.name.monkey.retromusic/databases/playlist.db"
PLAYBACK_DB = "/data/data/code.name.monkey.retromusic/databases/music_playback_state.db"
DOWNLOAD_DIR = "/sdcard/Download"
STORAGE_PREFIX = "/storage/emulated/0"

PLAYLIST_SCHEMA = (
    "CREATE TABLE android_metadata (locale TEXT)",
    "CREATE TABLE IF NOT EXISTS `PlaylistEntity` (`playlist_id` INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "
    "`playlist_name` TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS `SongEntity` (`song_key` INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "
    "`playlist_creator_id` INTEGER NOT NULL, `id` INTEGER NOT NULL, `title` TEXT NOT NULL, `track_number` INTEGER "
    "NOT NULL, `year` INTEGER NOT NULL, `duration` INTEGER NOT NULL, `data` TEXT NOT NULL, `date_modified` INTEGER "
    "NOT NULL, `album_id` INTEGER NOT NULL, `album_name` TEXT NOT NULL, `artist_id` INTEGER NOT NULL, `artist_name` "
    "TEXT NOT NULL, `composer` TEXT, `album_artist` TEXT)",
    "CREATE UNIQUE INDEX IF NOT EXISTS `index_SongEntity_playlist_creator_id_id` ON `SongEntity` "
    "(`playlist_creator_id`, `id`)",
    "CREATE TABLE IF NOT EXISTS `HistoryEntity` (`id` INTEGER NOT NULL, `title` TEXT NOT NULL, `track_number` "
    "INTEGER NOT NULL, `year` INTEGER NOT NULL, `duration` INTEGER NOT NULL, `data` TEXT NOT NULL, `date_modified` "
    "INTEGER NOT NULL, `album_id` INTEGER NOT NULL, `album_name` TEXT NOT NULL, `artist_id` INTEGER NOT NULL, "
    "`artist_name` TEXT NOT NULL, `composer` TEXT, `album_artist` TEXT, `time_played` INTEGER NOT NULL, "
    "PRIMARY KEY(`id`))",
)
"""Retro Music's Room tables in ``playlist.db`` (the ones AndroidWorld reads, plus the play history)."""

_QUEUE_COLUMNS = ("(_id LONG NOT NULL, title TEXT NOT NULL, track INT NOT NULL, year INT NOT NULL, duration LONG NOT "
                  "NULL, _data TEXT NOT NULL, date_modified LONG NOT NULL, album_id LONG NOT NULL, album TEXT NOT "
                  "NULL, artist_id LONG NOT NULL, artist TEXT NOT NULL, composer TEXT, album_artist TEXT)")
PLAYBACK_SCHEMA = (
    "CREATE TABLE android_metadata (locale TEXT)",
    f"CREATE TABLE IF NOT EXISTS playing_queue {_QUEUE_COLUMNS}",
    f"CREATE TABLE IF NOT EXISTS original_playing_queue {_QUEUE_COLUMNS}",
)
"""The playback service's queue store (``music_playback_state.db``)."""


@register_app
class RetroMusicApp(MultiSelect, App):
    """Retro Music over the MP3s of /sdcard, plain playlists (lists of song paths) and a queue of paths."""

    package = RETRO_PKG
    label = "Retro Music"
    activity = ".activities.MainActivity"
    main_page = "main"
    icon_color = "#f4511e"
    databases = (PLAYLIST_DB, PLAYBACK_DB)

    def setup(self) -> None:
        self.playlists: list[dict[str, Any]] = []  # {"id", "name", "songs": [path, ...]}
        self.next_playlist_id = 1
        self.queue: list[str] = []
        self.position = 0
        self.playing = False
        self.media_ids: dict[str, int] = {}
        self.meta: dict[str, list[Any]] = {}  # path -> [size, mtime, title, artist, album, duration_ms]
        self._reset_ui()

    def _reset_ui(self) -> None:
        self.tab = "songs"
        self.selection: list[str] = []
        self.draft = ""

    def clear_data(self) -> None:
        """``pm clear``: no playlists, an empty queue."""
        self.setup()

    def on_open(self) -> None:
        self._reset_ui()
        self._ensure_databases()

    def _ensure_databases(self) -> None:
        """Re-create a database file someone deleted (the real app opens, and so creates, both on start)."""
        fs = self.phone.files
        for path in self.databases:
            if path in fs.generated and not fs.exists(path):
                fs.mkdir(posixpath.dirname(path))
                fs.files[path] = b""

    # --- the library (MediaStore) --------------------------------------------------------------------
    def _info(self, path: str) -> list[Any]:
        cached = media_fields(self.phone.files, path, self.meta)
        if path not in self.media_ids:
            self.media_ids[path] = len(self.media_ids) + 1000
        return cached

    def songs(self) -> list[dict[str, Any]]:
        """Every song of the library, sorted by title (then path), as dicts."""
        fs = self.phone.files
        paths = [p for p in fs.walk_files("/sdcard") if p.lower().endswith(".mp3") and not p.startswith("/sdcard/Android/")]
        out = [self.song(p) for p in paths]
        return sorted(out, key=lambda s: (s["title"].lower(), s["path"]))

    def song(self, path: str) -> dict[str, Any]:
        """One song's fields (title, artist, album, duration ms, MediaStore id, date modified)."""
        size, mtime, title, artist, album, duration = self._info(path)
        return {"path": path, "id": self.media_ids[path], "title": title, "artist": artist, "album": album,
                "duration": duration, "date_modified": mtime // 1000}

    def _exists(self, path: str) -> bool:
        return self.phone.files.is_file(path)

    # --- playlists and queue -------------------------------------------------------------------------
    def playlist(self, playlist_id: int) -> dict[str, Any] | None:
        """The playlist with ``playlist_id``, or None."""
        return next((p for p in self.playlists if p["id"] == playlist_id), None)

    def create_playlist(self, name: str, songs: list[str]) -> dict[str, Any] | None:
        """A new playlist called ``name`` holding ``songs``; None (with a toast) for an empty or taken name."""
        name = name.strip()
        if not name:
            self.toast("Playlist name can't be empty")
            return None
        if any(p["name"] == name for p in self.playlists):
            self.toast("Playlist exists")
            return None
        playlist = {"id": self.next_playlist_id, "name": name, "songs": []}
        self.next_playlist_id += 1
        self.playlists.append(playlist)
        self.add_to_playlist(playlist, songs, quiet=True)
        self.toast(f"Created playlist {name}")
        return playlist

    def add_to_playlist(self, playlist: dict[str, Any], songs: list[str], quiet: bool = False) -> None:
        """Append ``songs`` not yet in ``playlist`` (a song is in a playlist once)."""
        added = 0
        for path in songs:
            if path not in playlist["songs"]:
                playlist["songs"].append(path)
                added += 1
        if not quiet:
            self.toast(f"Added {added} song{'s' if added != 1 else ''} to {playlist['name']}")

    def enqueue(self, songs: list[str]) -> None:
        """Add ``songs`` to the end of the playing queue (an empty queue starts with them)."""
        if not self.queue:
            self.position = 0
        self.queue.extend(songs)
        self._ensure_databases()
        self.toast(f"Added {len(songs)} song{'s' if len(songs) != 1 else ''} to the playing queue")

    def play_next(self, songs: list[str]) -> None:
        """Insert ``songs`` right after the current song."""
        at = self.position + 1 if self.queue else 0
        self.queue[at:at] = songs
        self._ensure_databases()
        self.toast("Added to the playing queue")

    def play(self, songs: list[str], index: int = 0) -> None:
        """Replace the queue with ``songs`` and play from ``index``."""
        if not songs:
            return
        self.queue = list(songs)
        self.position = index
        self.playing = True
        self._ensure_databases()

    def save_as_file(self, playlist: dict[str, Any]) -> str:
        """Write ``playlist`` as an M3U file into Download; returns its path."""
        lines = ["#EXTM3U"]
        for path in playlist["songs"]:
            if self._exists(path):
                s = self.song(path)
                lines.append(f"#EXTINF:{s['duration'] // 1000},{s['artist']} - {s['title']}")
                lines.append(STORAGE_PREFIX + path[len("/sdcard"):])
        target = posixpath.join(DOWNLOAD_DIR, f"{playlist['name']}.m3u")
        self.phone.files.write(target, "\n".join(lines) + "\n", self.phone.clock_ms)
        self.toast(f"Saved playlist to {target.replace('/sdcard/', '')}")
        return target

    # --- databases -----------------------------------------------------------------------------------
    def _song_row(self, path: str) -> dict[str, Any]:
        s = self.song(path)
        return {"id": s["id"], "title": s["title"], "track_number": 0, "year": 0, "duration": s["duration"],
                "data": STORAGE_PREFIX + path[len("/sdcard"):], "date_modified": s["date_modified"],
                "album_id": zlib.crc32(s["album"].encode()) % 100000, "album_name": s["album"],
                "artist_id": zlib.crc32(s["artist"].encode()) % 100000, "artist_name": s["artist"], "composer": None,
                "album_artist": None}

    def dump_database(self, path: str) -> bytes:
        """playlist.db or music_playback_state.db built from the playlists / the queue."""
        if path == PLAYLIST_DB:
            lists, songs = [], []
            for p in self.playlists:
                lists.append({"playlist_id": p["id"], "playlist_name": p["name"]})
                for song_path in p["songs"]:
                    if self._exists(song_path):
                        songs.append({"song_key": len(songs) + 1, "playlist_creator_id": p["id"],
                                      **self._song_row(song_path)})
            return build_database(PLAYLIST_SCHEMA, {"PlaylistEntity": lists, "SongEntity": songs})
        if path == PLAYBACK_DB:
            rows = []
            for song_path in self.queue:
                if self._exists(song_path):
                    r = self._song_row(song_path)
                    rows.append({"_id": r["id"], "title": r["title"], "track": 0, "year": 0, "duration": r["duration"],
                                 "_data": r["data"], "date_modified": r["date_modified"], "album_id": r["album_id"],
                                 "album": r["album_name"], "artist_id": r["artist_id"], "artist": r["artist_name"],
                                 "composer": None, "album_artist": None})
            return build_database(PLAYBACK_SCHEMA, {"playing_queue": rows, "original_playing_queue": rows})
        return super().dump_database(path)

    def _path_of(self, data: str) -> str:
        return self.phone.files.norm(str(data or ""))

    def load_database(self, path: str, data: bytes) -> None:
        """Replace the playlists (playlist.db) or the queue (music_playback_state.db) with a written file's rows."""
        if path == PLAYLIST_DB:
            lists = read_table(data, "PlaylistEntity")
            songs = sorted(read_table(data, "SongEntity"), key=lambda r: int(r["song_key"]))
            self.playlists = [{"id": int(r["playlist_id"]), "name": str(r["playlist_name"]), "songs": []}
                              for r in lists]
            by_id = {p["id"]: p for p in self.playlists}
            for r in songs:
                owner = by_id.get(int(r["playlist_creator_id"]))
                if owner is not None:
                    owner["songs"].append(self._path_of(r["data"]))
            self.next_playlist_id = max((p["id"] for p in self.playlists), default=0) + 1
        elif path == PLAYBACK_DB:
            self.queue = [self._path_of(r["_data"]) for r in read_table(data, "playing_queue")]
            self.position = min(self.position, max(0, len(self.queue) - 1))
        else:
            super().load_database(path, data)
        self._ensure_databases()  # a push replaces the whole databases folder; the app re-creates the other file

    # --- pages ---------------------------------------------------------------------------------------
    TABS = (("songs", "Songs"), ("albums", "Albums"), ("artists", "Artists"), ("playlists", "Playlists"))

    def _set_tab(self, tab: str) -> None:
        self.tab = tab
        self.selection = []

    def _song_item(self, s: dict[str, Any], on_click: Any, menu: Any, selectable: bool) -> View:
        path = s["path"]
        if self.selection and selectable:
            on_click = lambda p=path: self._toggle(p)  # noqa: E731
        row = ListItem(s["title"], f"{s['artist']} \u2022 {clock_text(s['duration'])}", on_click,
                       resource_id="songItem", title_id="title", subtitle_id="text", icon="M",
                       on_long_click=(lambda p=path: self._toggle(p)) if selectable else None,
                       trailing=ImageButton("More options", menu, resource_id="menu", icon=":"))
        if self.selection and selectable:
            row.children.insert(0, self.selection_check(path in self.selection, "check"))
        row.selected = path in self.selection
        return row

    def build_main(self) -> View:
        songs = self.songs()
        items: list[View]
        actions: list[View] = [ImageButton("Search", lambda: self.toast("Search"), resource_id="action_search",
                                           icon="Q")]
        if self.tab == "songs":
            paths = [s["path"] for s in songs]
            items = [self._song_item(s, (lambda i=i: self._play_from(paths, i)),
                                     (lambda p=s["path"]: self.show_dialog("song_menu", path=p)), True)
                     for i, s in enumerate(songs)]
            if items:
                items.insert(0, Button("Shuffle all", lambda: self._play_from(paths, 0), resource_id="shuffleButton",
                                       background="#fbe9e7"))
        elif self.tab in ("albums", "artists"):
            key = "album" if self.tab == "albums" else "artist"
            groups: dict[str, list[dict[str, Any]]] = {}
            for s in songs:
                groups.setdefault(s[key], []).append(s)
            items = [ListItem(name, f"{len(group)} song{'s' if len(group) != 1 else ''}",
                              (lambda g=[x["path"] for x in group]: self._play_from(g, 0)),
                              resource_id="albumItem" if key == "album" else "artistItem", title_id="title",
                              subtitle_id="text", icon=name[:1])
                     for name, group in sorted(groups.items(), key=lambda kv: kv[0].lower())]
        else:
            actions.insert(0, ImageButton("New playlist", lambda: self._new_playlist_dialog([]),
                                          resource_id="action_new_playlist", icon="+"))
            items = [ListItem(p["name"], f"{len(p['songs'])} song{'s' if len(p['songs']) != 1 else ''}",
                              (lambda i=p["id"]: self.push("playlist", playlist_id=i)), resource_id="playlistItem",
                              title_id="title", subtitle_id="text", icon="P")
                     for p in sorted(self.playlists, key=lambda p: p["name"].lower())]
        if not items:
            empty = {"songs": "No songs", "playlists": "No playlists"}.get(self.tab, "Nothing here")
            items = [Text(empty, resource_id="empty", align="center", padding=(24, 48), color="#5f6368")]
        if self.selection and self.tab == "songs":
            toolbar = self.selection_toolbar("Close", delete_id="action_delete_from_device", toolbar_id="toolbar")
            toolbar.children = [c for c in toolbar.children if c.content_desc != "Delete"]
            toolbar.children.append(ImageButton("Add to playing queue", self._queue_selection,
                                                resource_id="action_add_to_playing_queue", icon="Q"))
            toolbar.children.append(ImageButton("Add to playlist", lambda: self.show_dialog(
                "add_to_playlist", paths=list(self.selection)), resource_id="action_add_to_playlist", icon="+"))
        else:
            toolbar = Toolbar("Retro Music", actions=actions, resource_id="toolbar")
        tabs = Row(*[Button(label, (lambda t=tab: self._set_tab(t)), resource_id=f"action_{tab}", weight=1,
                            background="#fbe9e7" if self.tab == tab else None, selected=self.tab == tab, size=12)
                     for tab, label in self.TABS], resource_id="bottomNavigationView", height=64, background="#fafafa")
        return Column(toolbar, ScrollList(items, f"main:{self.tab}", resource_id="recycler_view"), self._mini_player(),
                      tabs, cls="android.widget.FrameLayout", resource_id="drawer_layout", weight=1)

    def _mini_player(self) -> View | None:
        if not self.queue:
            return None
        current = self.queue[min(self.position, len(self.queue) - 1)]
        title = self.song(current)["title"] if self._exists(current) else posixpath.basename(current)
        return Row(Text(title, resource_id="miniPlayerTitle", weight=1, max_lines=1, padding=(16, 12)),
                   ImageButton("Pause" if self.playing else "Play", self._toggle_play, resource_id="miniPlayerPlayPauseButton",
                               icon="=" if self.playing else ">"),
                   ImageButton("Open player", lambda: self.push("player"), resource_id="miniPlayerExpand", icon="^"),
                   resource_id="miniPlayerFragment", height=56, background="#f5f5f5")

    def _play_from(self, paths: list[str], index: int) -> None:
        self.selection = []
        self.play(paths, index)

    def _toggle_play(self) -> None:
        self.playing = not self.playing

    def _queue_selection(self) -> None:
        picked = list(self.selection)
        self.selection = []
        self.enqueue(picked)

    def build_playlist(self, playlist_id: int) -> View:
        p = self.playlist(playlist_id)
        if p is None:
            return Column(Toolbar("Playlist", on_back=self.pop), Text("This playlist was deleted", padding=(24, 24)),
                          weight=1)
        present = [path for path in p["songs"] if self._exists(path)]
        total = sum(self.song(path)["duration"] for path in present)
        items: list[View] = [Text(f"{len(present)} song{'s' if len(present) != 1 else ''} \u2022 {clock_text(total)}",
                                  resource_id="playlistInfo", color="#5f6368", padding=(16, 8))]
        for i, path in enumerate(present):
            items.append(self._song_item(self.song(path), (lambda i=i: self._play_from(present, i)),
                                         (lambda q=path: self.show_dialog("playlist_song_menu", playlist_id=playlist_id,
                                                                          path=q)), False))
        return Column(
            Toolbar(p["name"], on_back=self.pop, actions=[ImageButton(
                "More options", lambda: self.show_dialog("playlist_menu", playlist_id=playlist_id),
                resource_id="action_playlist_menu", icon=":")], resource_id="toolbar"),
            ScrollList(items, "playlist:songs", resource_id="recyclerView"),
            self._mini_player(),
            cls="android.widget.LinearLayout", resource_id="playlist_root", weight=1,
        )

    def build_player(self) -> View:
        if not self.queue:
            return Column(Toolbar("Now playing", on_back=self.pop), Text("Nothing is playing", padding=(24, 24)),
                          weight=1)
        current = self.queue[min(self.position, len(self.queue) - 1)]
        s = self.song(current) if self._exists(current) else {"title": posixpath.basename(current), "artist": "",
                                                               "duration": 0}
        return Column(
            Toolbar("", on_back=self.pop, actions=[ImageButton("Playing queue", lambda: self.push("queue"),
                                                               resource_id="action_playing_queue", icon="Q")]),
            View(cls="android.widget.ImageView", content_desc="Album art", resource_id="image", height=320,
                 background="#ffccbc"),
            Text(s["title"], resource_id="title", size=22, align="center", bold=True),
            Text(s["artist"], resource_id="text", align="center", color="#5f6368"),
            Text(f"0:00 / {clock_text(s['duration'])}", resource_id="songTotalTime", align="center", color="#5f6368"),
            Row(ImageButton("Previous", lambda: self._skip(-1), resource_id="previousButton", icon="<"),
                ImageButton("Pause" if self.playing else "Play", self._toggle_play, resource_id="playPauseButton",
                            icon="=" if self.playing else ">", width=72, height=72),
                ImageButton("Next", lambda: self._skip(1), resource_id="nextButton", icon=">"),
                padding=(96, 16)),
            cls="android.widget.LinearLayout", resource_id="player_root", weight=1,
        )

    def _skip(self, step: int) -> None:
        if self.queue:
            self.position = (self.position + step) % len(self.queue)

    def build_queue(self) -> View:
        items: list[View] = []
        for i, path in enumerate(self.queue):
            title = self.song(path)["title"] if self._exists(path) else posixpath.basename(path)
            items.append(ListItem(title, "Now playing" if i == self.position else "", (lambda i=i: self._jump(i)),
                                  resource_id="queueItem", title_id="title", subtitle_id="text", icon=str(i + 1),
                                  trailing=ImageButton("Remove from playing queue", (lambda i=i: self._dequeue(i)),
                                                       resource_id="menu", icon="x")))
        if not items:
            items = [Text("The queue is empty", resource_id="empty", padding=(24, 24))]
        return Column(Toolbar("Playing queue", on_back=self.pop, actions=[ImageButton(
                          "Clear queue", self._clear_queue, resource_id="action_clear_playing_queue", icon="C")],
                          resource_id="toolbar"),
                      ScrollList(items, "queue:list", resource_id="recycler_view"),
                      cls="android.widget.LinearLayout", resource_id="queue_root", weight=1)

    def _jump(self, index: int) -> None:
        self.position = index
        self.playing = True

    def _dequeue(self, index: int) -> None:
        if 0 <= index < len(self.queue):
            del self.queue[index]
            if index < self.position:
                self.position -= 1
            self.position = min(self.position, max(0, len(self.queue) - 1))

    def _clear_queue(self) -> None:
        self.queue = []
        self.position = 0
        self.playing = False

    # --- dialogs ---------------------------------------------------------------------------------------
    @staticmethod
    def _menu(title: str, entries: list[tuple[str, Any]]) -> View:
        items = [ListItem(label, "", cb, resource_id="menu_item", title_id="title", min_height=48)
                 for label, cb in entries]
        return Dialog(title, Column(*items, resource_id="menu_list"), [])

    def dialog_song_menu(self, path: str) -> View:
        title = self.song(path)["title"] if self._exists(path) else posixpath.basename(path)
        return self._menu(title, [
            ("Play next", lambda: self._close_then(self.play_next, [path])),
            ("Add to playing queue", lambda: self._close_then(self.enqueue, [path])),
            ("Add to playlist\u2026", lambda: self.show_dialog("add_to_playlist", paths=[path])),
            ("Details", lambda: self.show_dialog("details", path=path)),
        ])

    def _close_then(self, action: Any, arg: Any) -> None:
        self.close_dialog()
        action(arg)

    def dialog_details(self, path: str) -> View:
        s = self.song(path)
        lines = [f"File name: {posixpath.basename(path)}", f"Title: {s['title']}", f"Artist: {s['artist']}",
                 f"Album: {s['album']}", f"Length: {clock_text(s['duration'])}"]
        return Dialog("Details", Column(*[Text(line, padding=(24, 4)) for line in lines]),
                      [("OK", self.close_dialog)], button_ids=["android:id/button1"])

    def dialog_add_to_playlist(self, paths: list[str]) -> View:
        entries: list[tuple[str, Any]] = [("New playlist\u2026", lambda: self._new_playlist_dialog(paths))]
        for p in sorted(self.playlists, key=lambda p: p["name"].lower()):
            entries.append((p["name"], lambda p=p: self._add_and_close(p, paths)))
        return self._menu("Add to playlist", entries)

    def _add_and_close(self, playlist: dict[str, Any], paths: list[str]) -> None:
        self.close_dialog()
        self.selection = []
        self.add_to_playlist(playlist, paths)

    def _new_playlist_dialog(self, paths: list[str]) -> None:
        self.draft = ""
        self.show_dialog("new_playlist", paths=list(paths))

    def dialog_new_playlist(self, paths: list[str]) -> View:
        field = EditText(self.draft, self._set_draft, hint="Playlist name", resource_id="actionNewPlaylist")
        return Dialog("New playlist", Column(field, padding=(16, 4)),
                      [("Cancel", self.close_dialog), ("Create", lambda: self._create(paths))],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _set_draft(self, value: str) -> None:
        self.draft = value

    def _create(self, paths: list[str]) -> None:
        if self.create_playlist(self.draft, paths) is not None:
            self.draft = ""
            self.selection = []
            self.close_dialog()
            self.phone.set_focus(None)

    def dialog_playlist_menu(self, playlist_id: int) -> View:
        p = self.playlist(playlist_id)
        if p is None:
            return self._menu("Playlist", [])
        return self._menu(p["name"], [
            ("Play", lambda: self._close_then(lambda s: self.play(s), [q for q in p["songs"] if self._exists(q)])),
            ("Add to playing queue", lambda: self._close_then(self.enqueue,
                                                              [q for q in p["songs"] if self._exists(q)])),
            ("Rename", lambda: self._rename_dialog(playlist_id)),
            ("Save as file", lambda: self._close_then(self.save_as_file, p)),
            ("Delete", lambda: self.show_dialog("delete_playlist", playlist_id=playlist_id)),
        ])

    def _rename_dialog(self, playlist_id: int) -> None:
        p = self.playlist(playlist_id)
        self.draft = p["name"] if p else ""
        self.show_dialog("rename_playlist", playlist_id=playlist_id)

    def dialog_rename_playlist(self, playlist_id: int) -> View:
        field = EditText(self.draft, self._set_draft, hint="Playlist name", resource_id="actionNewPlaylist")
        return Dialog("Rename playlist", Column(field, padding=(16, 4)),
                      [("Cancel", self.close_dialog), ("Rename", lambda: self._rename(playlist_id))],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _rename(self, playlist_id: int) -> None:
        p = self.playlist(playlist_id)
        name = self.draft.strip()
        if p is None or not name:
            return
        p["name"] = name
        self.close_dialog()
        self.phone.set_focus(None)

    def dialog_delete_playlist(self, playlist_id: int) -> View:
        p = self.playlist(playlist_id)
        return Dialog("Delete playlist", f"Delete the playlist {p['name'] if p else ''}?",
                      [("Cancel", self.close_dialog), ("Delete", lambda: self._delete_playlist(playlist_id))],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _delete_playlist(self, playlist_id: int) -> None:
        self.playlists = [p for p in self.playlists if p["id"] != playlist_id]
        self.close_dialog()
        self.pop()

    def dialog_playlist_song_menu(self, playlist_id: int, path: str) -> View:
        return self._menu(self.song(path)["title"] if self._exists(path) else posixpath.basename(path), [
            ("Play next", lambda: self._close_then(self.play_next, [path])),
            ("Add to playing queue", lambda: self._close_then(self.enqueue, [path])),
            ("Remove from playlist", lambda: self._remove_from_playlist(playlist_id, path)),
        ])

    def _remove_from_playlist(self, playlist_id: int, path: str) -> None:
        p = self.playlist(playlist_id)
        if p is not None and path in p["songs"]:
            p["songs"].remove(path)
        self.close_dialog()
