"""Pi Music Player (com.Project100Pi.themusicplayer), the music app AndroidLab runs its 12 ``pimusic_*`` tasks on.

Where each fact comes from (no UI dump of this app is available here, so everything the sources do not fix
is marked as this model's choice):

- Package ``com.Project100Pi.themusicplayer``: AndroidLab's ``evaluation/config/pimusic.yaml`` and
  ``templates/packages.py``.
- From AndroidLab's judges (``evaluation/tasks/pimusic/pimusic.py``), which read the compressed XML of the
  screens: the main page has tabs whose labels read "TRACKS", "ARTISTS" and "PLAYLISTS", the shown one
  flagged selected (pimusic_7, 8, 9, 12); a song list shows, per song and in this order, plain text views
  for the title, the artist and the duration ("4:12", "1:21:03"; pimusic_8, 12); the sort dialog is titled
  "Sort By" (pimusic_8, 12); an artist's page and a playlist's page are headed by a layout (not a text
  view) described by the artist's or playlist's name, "Pink Floyd", "Favorite" (pimusic_7, 8: a collapsing
  toolbar); the player page shows the song's title and the elapsed time ("1:27") as plain text views and
  one text view that names both the "Now Playing list" and the "Equalizer" (pimusic_7, 10, 11); a new
  playlist's name is listed as a plain text view on the PLAYLISTS tab (pimusic_9).
- The library is the sim's media store: every ``.mp3`` on shared storage outside ``Android/``, with
  title, artist, album and duration read from the file (:mod:`android_gym.sim.apps.mp3`), as Retro Music
  reads it.

This model's choices: the launcher label "Pi Music Player"; the ALBUMS tab; the toolbar; the resource
ids; a tab as a clickable text view; the header of the TRACKS tab ("12 Songs", "Shuffle all"); the
artist page's song count; the sort dialog's fields (Title, Artist, Album, Duration) and its Ascending /
Descending choice, kept per list (the TRACKS tab, every artist page, every album page); TRACKS sorted by
title ascending until changed; durations shown as m:ss, or h:mm:ss from an hour; a tap on a song playing
its list from that song and showing the mini player (title and artist, a play/pause button; a tap on it
opens the player); the player's text "Swipe left for the Now Playing list, swipe right for the
Equalizer" (the swipes do that); seeking to whole seconds; playback going on while the app's screens are
closed (``am force-stop`` drops the pages, not the player); a song that reaches its end staying there,
paused; the playlist dialog ("Create Playlist", "Playlist name", Cancel/Create) and its toasts.

State served to task checks (a sim convenience: the real app exports no provider), authority
``com.Project100Pi.themusicplayer``: ``/songs`` (``_id, title, artist, album, duration, path``; query),
``/playlists`` (``_id, name, songs``: the songs' paths joined by ``|``; query, insert, delete),
``/playback`` (one row ``path, title, artist, playing, position``: 1/0 and ms; query, update of ``path``,
``playing``, ``position``) and ``/sort`` (``list, field, order``: ``tracks`` or ``artist:<name>`` or
``album:<name>``, a field of :data:`SORT_FIELDS`, asc | desc; query).
"""

from __future__ import annotations

import posixpath
from typing import Any

from android_gym.sim.app import App, Row, RowMatch, register_app
from android_gym.sim.apps.mp3 import clock_text, media_fields
from android_gym.sim.view import (
    HORIZONTAL,
    Button,
    Column,
    Dialog,
    EditText,
    Image,
    ImageButton,
    ListItem,
    RadioButton,
    ScrollList,
    SeekBar,
    Spacer,
    Text,
    Toolbar,
    View,
)

PIMUSIC_PKG = "com.Project100Pi.themusicplayer"
AUTHORITY = PIMUSIC_PKG
SORT_FIELDS: dict[str, str] = {"title": "Title", "artist": "Artist", "album": "Album", "duration": "Duration"}
"""Sort field -> its label in the Sort By dialog."""
DEFAULT_SORT = ("title", "asc")
TABS = (("tracks", "TRACKS"), ("albums", "ALBUMS"), ("artists", "ARTISTS"), ("playlists", "PLAYLISTS"))
NOW_PLAYING_HINT = "Swipe left for the Now Playing list, swipe right for the Equalizer"
EQUALIZER_PRESETS = ("Normal", "Classical", "Dance", "Jazz", "Pop", "Rock")


def _count(n: int) -> str:
    return f"{n} Song{'s' if n != 1 else ''}"


@register_app
class PiMusicApp(App):
    """Pi Music Player over the MP3s of /sdcard: tabs, artist/album/playlist pages, sorting, a player (module doc)."""

    package = PIMUSIC_PKG
    label = "Pi Music Player"
    activity = "com.Project100Pi.themusicplayer.ui.activity.MainActivity"
    main_page = "main"
    authorities = (AUTHORITY,)
    icon_color = "#e53935"

    def setup(self) -> None:
        self.playlists: list[dict[str, Any]] = []  # {"id", "name", "songs": [path, ...]}
        self.next_playlist_id = 1
        self.sorts: dict[str, list[str]] = {}  # list key -> [field, "asc" | "desc"]
        self.queue: list[str] = []
        self.index = 0
        self.playing = False
        self.position_ms = 0  # where playback was when it last started, paused or seeked
        self.since_ms = 0  # the phone's clock at that moment
        self.meta: dict[str, list[Any]] = {}  # path -> [size, mtime, title, artist, album, duration ms]
        self.media_ids: dict[str, int] = {}
        self._reset_ui()

    def _reset_ui(self) -> None:
        self.tab = "tracks"
        self.draft = ""
        self.sort_draft: list[str] = list(DEFAULT_SORT)

    def clear_data(self) -> None:
        """``pm clear``: no playlists, nothing playing, the default sort orders."""
        self.setup()

    def on_open(self) -> None:
        self._reset_ui()

    def current_activity(self) -> str:
        return {"player": "com.Project100Pi.themusicplayer.ui.activity.PlayActivity"}.get(self.page, self.activity)

    # --- the library (the media store) -----------------------------------------------------------------
    def _info(self, path: str) -> list[Any]:
        cached = media_fields(self.phone.files, path, self.meta)
        if path not in self.media_ids:
            self.media_ids[path] = len(self.media_ids) + 1
        return cached

    def song(self, path: str) -> dict[str, Any]:
        """One song's fields: path, id, title, artist, album, duration (ms)."""
        _, _, title, artist, album, duration = self._info(path)
        return {"path": path, "id": self.media_ids[path], "title": title, "artist": artist, "album": album,
                "duration": duration}

    def songs(self) -> list[dict[str, Any]]:
        """Every song on shared storage, by title then path."""
        fs = self.phone.files
        paths = [p for p in fs.walk_files("/sdcard") if p.lower().endswith(".mp3") and not p.startswith("/sdcard/Android/")]
        return sorted((self.song(p) for p in paths), key=lambda s: (s["title"].lower(), s["path"]))

    def _exists(self, path: str) -> bool:
        return self.phone.files.is_file(path)

    # --- sorting -----------------------------------------------------------------------------------------
    def sort_of(self, key: str) -> tuple[str, str]:
        """(field, "asc" | "desc") of the list ``key`` (``tracks``, ``artist:<name>``, ``album:<name>``)."""
        field, order = self.sorts.get(key, DEFAULT_SORT)
        return field, order

    def sorted_songs(self, songs: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
        """``songs`` in the order the list ``key`` is sorted by."""
        field, order = self.sort_of(key)

        def value(s: dict[str, Any]) -> Any:
            return s[field] if field == "duration" else str(s[field]).lower()

        return sorted(songs, key=lambda s: (value(s), s["title"].lower(), s["path"]), reverse=order == "desc")

    def _open_sort(self, key: str) -> None:
        self.sort_draft = list(self.sort_of(key))
        self.show_dialog("sort", key=key)

    def dialog_sort(self, key: str) -> View:
        field, order = self.sort_draft
        rows: list[View] = [RadioButton(f == field, (lambda f=f: self._draft_sort(0, f)), text=label,
                                        resource_id="sortField") for f, label in SORT_FIELDS.items()]
        rows.append(View(cls="android.view.View", height=1, background="#e0e0e0", layout_only=True))
        rows += [RadioButton(o == order, (lambda o=o: self._draft_sort(1, o)), text=label, resource_id="sortOrder")
                 for o, label in (("asc", "Ascending"), ("desc", "Descending"))]
        return Dialog("Sort By", Column(*rows, padding=(16, 0)),
                      [("Cancel", self.close_dialog), ("OK", lambda: self._apply_sort(key))],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _draft_sort(self, slot: int, value: str) -> None:
        self.sort_draft[slot] = value

    def _apply_sort(self, key: str) -> None:
        self.sorts[key] = list(self.sort_draft)
        self.close_dialog()

    # --- playback ----------------------------------------------------------------------------------------
    def current(self) -> str | None:
        """Path of the song in the player, or None when the queue is empty."""
        if not self.queue:
            return None
        return self.queue[min(self.index, len(self.queue) - 1)]

    def _duration(self, path: str | None) -> int:
        return self.song(path)["duration"] if path is not None and self._exists(path) else 0

    def elapsed_ms(self) -> int:
        """Where playback is now: the song's end at most."""
        pos = self.position_ms
        if self.playing:
            pos += max(0, self.phone.clock_ms - self.since_ms)
        duration = self._duration(self.current())
        return min(pos, duration) if duration else pos

    def play(self, paths: list[str], index: int) -> None:
        """Replace the queue with ``paths`` and play from ``index`` at its start."""
        if not paths:
            return
        self.queue = list(paths)
        self.index = max(0, min(index, len(paths) - 1))
        self._start(0)

    def _start(self, position_ms: int) -> None:
        self.position_ms = position_ms
        self.since_ms = self.phone.clock_ms
        self.playing = True

    def pause(self) -> None:
        """Pause where playback is."""
        self.position_ms = self.elapsed_ms()
        self.since_ms = self.phone.clock_ms
        self.playing = False

    def toggle_play(self) -> None:
        """The play/pause button."""
        if self.current() is None:
            return
        if self.playing:
            self.pause()
        else:
            at = self.elapsed_ms()
            self._start(0 if at >= self._duration(self.current()) else at)

    def seek(self, fraction: float) -> None:
        """Move playback to ``fraction`` of the song, to a whole second."""
        duration = self._duration(self.current())
        self.position_ms = min(duration, round(max(0.0, min(1.0, fraction)) * duration / 1000) * 1000)
        self.since_ms = self.phone.clock_ms

    def skip(self, step: int) -> None:
        """Previous / next song of the queue (wrapping), from its start."""
        if self.queue:
            self.index = (self.index + step) % len(self.queue)
            if self.playing:
                self._start(0)
            else:
                self.position_ms = 0

    def on_time_passed(self) -> None:
        if self.playing and self.elapsed_ms() >= self._duration(self.current()) > 0:
            self.pause()

    # --- playlists ---------------------------------------------------------------------------------------
    def playlist(self, playlist_id: int) -> dict[str, Any] | None:
        """The playlist with ``playlist_id``, or None."""
        return next((p for p in self.playlists if p["id"] == playlist_id), None)

    def create_playlist(self, name: str, songs: list[str] | None = None) -> dict[str, Any] | None:
        """A new playlist ``name`` (with ``songs``); None, with a toast, for an empty or taken name."""
        name = name.strip()
        if not name:
            self.toast("Please enter a playlist name")
            return None
        if any(p["name"].lower() == name.lower() for p in self.playlists):
            self.toast("Playlist already exists")
            return None
        playlist = {"id": self.next_playlist_id, "name": name, "songs": list(dict.fromkeys(songs or []))}
        self.next_playlist_id += 1
        self.playlists.append(playlist)
        return playlist

    def _new_playlist_dialog(self) -> None:
        self.draft = ""
        self.show_dialog("new_playlist")

    def dialog_new_playlist(self) -> View:
        field = EditText(self.draft, self._set_draft, hint="Playlist name", resource_id="playlistNameInput",
                         on_submit=self._create)
        return Dialog("Create Playlist", Column(field, padding=(16, 4)),
                      [("Cancel", self.close_dialog), ("Create", self._create)],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _set_draft(self, value: str) -> None:
        self.draft = value

    def _create(self) -> None:
        if self.create_playlist(self.draft) is not None:
            self.toast(f"Playlist {self.draft.strip()} created")
            self.draft = ""
            self.close_dialog()
            self.phone.set_focus(None)

    def dialog_song_menu(self, path: str) -> View:
        title = self.song(path)["title"] if self._exists(path) else posixpath.basename(path)
        entries: list[tuple[str, Any]] = [("Play", lambda: self._close_then_play(path)),
                                          ("Add to playlist", lambda: self.show_dialog("add_to_playlist", path=path))]
        items = [ListItem(label, "", cb, resource_id="menuItem", min_height=48) for label, cb in entries]
        return Dialog(title, Column(*items), [])

    def _close_then_play(self, path: str) -> None:
        self.close_dialog()
        self.play([path], 0)

    def dialog_add_to_playlist(self, path: str) -> View:
        items = [ListItem(p["name"], _count(len(p["songs"])), (lambda p=p: self._add_to(p, path)),
                          resource_id="playlistRow", min_height=48) for p in self.playlists]
        if not items:
            items = [Text("No playlists yet", padding=(24, 12))]
        return Dialog("Add to playlist", Column(*items), [("Cancel", self.close_dialog)],
                      button_ids=["android:id/button2"])

    def _add_to(self, playlist: dict[str, Any], path: str) -> None:
        if path in playlist["songs"]:
            self.toast("Song is already in the playlist")
        else:
            playlist["songs"].append(path)
            self.toast(f"Added to {playlist['name']}")
        self.close_dialog()

    # --- shared views ------------------------------------------------------------------------------------
    def _song_row(self, s: dict[str, Any], paths: list[str], i: int) -> View:
        texts = Column(Text(s["title"], resource_id="songName", max_lines=1, padding=(0, 2)),
                       Text(s["artist"], resource_id="artistName", size=14, color="#616161", max_lines=1,
                            padding=(0, 2)),
                       cls="android.widget.LinearLayout", weight=1, padding=(12, 8))
        return View(cls="android.widget.RelativeLayout", resource_id="songRow", orientation=HORIZONTAL,
                    clickable=True, focusable=True, on_click=lambda: self.play(paths, i), min_height=64,
                    padding=(8.0, 0.0), children=[
                        Image(icon="M", resource_id="albumArt", width=44, height=44),
                        texts,
                        Text(clock_text(s["duration"]), resource_id="songDuration", size=14, color="#616161",
                             padding=(4, 20)),
                        ImageButton("More options", lambda p=s["path"]: self.show_dialog("song_menu", path=p),
                                    resource_id="songMenu", icon=":", width=40)])

    def _song_list(self, songs: list[dict[str, Any]], scroll_key: str, header: list[View] | None = None) -> View:
        paths = [s["path"] for s in songs]
        items = list(header or []) + [self._song_row(s, paths, i) for i, s in enumerate(songs)]
        if not songs:
            items.append(Text("No songs found", resource_id="emptyText", align="center", padding=(24, 48)))
        return ScrollList(items, scroll_key, resource_id="recyclerView")

    def _mini_player(self) -> View | None:
        path = self.current()
        if path is None:
            return None
        s = self.song(path) if self._exists(path) else {"title": posixpath.basename(path), "artist": ""}
        return View(cls="android.widget.RelativeLayout", resource_id="miniPlayer", orientation=HORIZONTAL,
                    clickable=True, focusable=True, on_click=lambda: self.push("player"), height=64,
                    background="#fce4ec", padding=(8.0, 0.0), children=[
                        Image(icon="M", resource_id="miniAlbumArt", width=44, height=44),
                        Column(Text(s["title"], resource_id="miniSongName", max_lines=1, padding=(0, 2)),
                               Text(s["artist"], resource_id="miniArtistName", size=14, color="#616161",
                                    max_lines=1, padding=(0, 2)),
                               cls="android.widget.LinearLayout", weight=1, padding=(12, 8)),
                        ImageButton("Pause" if self.playing else "Play", self.toggle_play,
                                    resource_id="miniPlayPause", icon="=" if self.playing else ">")])

    def _header_page(self, name: str, subtitle: str, sort_key: str, songs: list[dict[str, Any]],
                     scroll_key: str) -> View:
        """An artist's or playlist's page: a collapsing header described by ``name``, then its songs."""
        head = View(cls="android.widget.FrameLayout", resource_id="collapsingToolbar", content_desc=name,
                    background="#fce4ec", children=[
                        View(cls="android.view.ViewGroup", resource_id="toolbar", orientation=HORIZONTAL, height=56,
                             padding=(4.0, 4.0), children=[
                                 ImageButton("Navigate up", self.pop, icon="<"), Spacer(weight=1),
                                 *([ImageButton("Sort", lambda: self._open_sort(sort_key), resource_id="sortButton",
                                                icon="S")] if sort_key else [])]),
                        Text(name, resource_id="headerTitle", size=24, bold=True, max_lines=1, padding=(16, 4)),
                        Text(subtitle, resource_id="headerSubtitle", size=14, color="#616161", padding=(16, 8))])
        return Column(head, self._song_list(songs, scroll_key), self._mini_player(),
                      cls="android.widget.LinearLayout", resource_id="pageRoot", weight=1)

    # --- the main page -----------------------------------------------------------------------------------
    def _set_tab(self, tab: str) -> None:
        self.tab = tab

    def build_main(self) -> View:
        songs = self.songs()
        actions: list[View] = [ImageButton("Search", None, resource_id="searchButton", icon="Q")]
        if self.tab == "tracks":
            actions.append(ImageButton("Sort", lambda: self._open_sort("tracks"), resource_id="sortButton", icon="S"))
        toolbar = Toolbar("Pi Music Player", actions=actions, resource_id="toolbar", background="#fce4ec")
        tabs = View(cls="android.widget.HorizontalScrollView", resource_id="tabLayout", orientation=HORIZONTAL,
                    height=48, background="#fce4ec", children=[
                        View(cls="android.widget.TextView", text=label, clickable=True, focusable=True,
                             selected=self.tab == tab, on_click=(lambda t=tab: self._set_tab(t)), weight=1,
                             height=48, align="center", bold=True, size=13, resource_id="tabText",
                             color="#c62828" if self.tab == tab else "#616161")
                        for tab, label in TABS])
        if self.tab == "tracks":
            ordered = self.sorted_songs(songs, "tracks")
            header = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, min_height=48,
                          padding=(8.0, 0.0), children=[
                              Text(_count(len(songs)), resource_id="songCount", weight=1, padding=(8, 14),
                                   color="#616161"),
                              Button("Shuffle all", lambda: self.play([s["path"] for s in ordered], 0),
                                     resource_id="shuffleAll", background=None)])
            body = self._song_list(ordered, "main:tracks", [header])
        else:
            body = ScrollList(self._group_rows(songs), f"main:{self.tab}", resource_id="recyclerView")
        fab = None
        if self.tab == "playlists":
            fab = Button("Create Playlist", self._new_playlist_dialog, resource_id="createPlaylist",
                         background="#ffcdd2")
        return Column(toolbar, tabs, body, fab, self._mini_player(), cls="android.widget.LinearLayout",
                      resource_id="mainRoot", weight=1)

    def _group_rows(self, songs: list[dict[str, Any]]) -> list[View]:
        if self.tab == "playlists":
            rows = [ListItem(p["name"], _count(len([q for q in p["songs"] if self._exists(q)])),
                             (lambda i=p["id"]: self.push("playlist", playlist_id=i)), resource_id="playlistRow",
                             title_id="playlistName", subtitle_id="playlistCount", icon="P")
                    for p in self.playlists]
            return rows or [Text("No playlists", resource_id="emptyText", align="center", padding=(24, 48))]
        key = "album" if self.tab == "albums" else "artist"
        groups: dict[str, list[dict[str, Any]]] = {}
        for s in songs:
            groups.setdefault(s[key], []).append(s)
        page = "album" if key == "album" else "artist"
        rows = [ListItem(name, _count(len(group)), (lambda n=name: self.push(page, group=n)),
                         resource_id=f"{page}Row", title_id=f"{page}Name", subtitle_id=f"{page}Count", icon=name[:1])
                for name, group in sorted(groups.items(), key=lambda kv: kv[0].lower())]
        return rows or [Text("No songs found", resource_id="emptyText", align="center", padding=(24, 48))]

    # --- artist, album and playlist pages ----------------------------------------------------------------
    def build_artist(self, group: str) -> View:
        songs = [s for s in self.songs() if s["artist"] == group]
        key = f"artist:{group}"
        return self._header_page(group, _count(len(songs)), key, self.sorted_songs(songs, key), "artist:songs")

    def build_album(self, group: str) -> View:
        songs = [s for s in self.songs() if s["album"] == group]
        key = f"album:{group}"
        return self._header_page(group, _count(len(songs)), key, self.sorted_songs(songs, key), "album:songs")

    def build_playlist(self, playlist_id: int) -> View:
        p = self.playlist(playlist_id)
        if p is None:
            return Column(Toolbar("Playlist", on_back=self.pop), Text("This playlist was deleted", padding=(24, 24)),
                          weight=1)
        songs = [self.song(q) for q in p["songs"] if self._exists(q)]
        return self._header_page(p["name"], _count(len(songs)), "", songs, "playlist:songs")

    # --- the player ----------------------------------------------------------------------------------------
    def build_player(self) -> View:
        path = self.current()
        if path is None:
            return Column(Toolbar("Now Playing", on_back=self.pop), Text("Nothing is playing", padding=(24, 24)),
                          weight=1)
        s = self.song(path) if self._exists(path) else {"title": posixpath.basename(path), "artist": "", "album": "",
                                                        "duration": 0}
        elapsed, duration = self.elapsed_ms(), max(1, s["duration"])
        top = View(cls="android.view.ViewGroup", resource_id="playToolbar", orientation=HORIZONTAL, height=56,
                   padding=(4.0, 4.0), children=[
                       ImageButton("Navigate up", self.pop, icon="<"), Spacer(weight=1),
                       ImageButton("Now Playing list", lambda: self.push("queue"), resource_id="nowPlayingList",
                                   icon="Q"),
                       ImageButton("Equalizer", lambda: self.push("equalizer"), resource_id="equalizer", icon="E")])
        times = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=32, padding=(16.0, 0.0),
                     children=[Text(clock_text(elapsed), resource_id="currentTime", size=13, padding=(0, 4)),
                               Spacer(weight=1),
                               Text(clock_text(s["duration"]), resource_id="totalTime", size=13, padding=(0, 4))])
        controls = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=80, padding=(24.0, 4.0),
                        children=[
                            ImageButton("Shuffle", None, resource_id="shuffle", icon="x"), Spacer(weight=1),
                            ImageButton("Previous", lambda: self.skip(-1), resource_id="previous", icon="<"),
                            ImageButton("Pause" if self.playing else "Play", self.toggle_play, resource_id="playPause",
                                        icon="=" if self.playing else ">", width=72, height=72),
                            ImageButton("Next", lambda: self.skip(1), resource_id="next", icon=">"),
                            Spacer(weight=1), ImageButton("Repeat", None, resource_id="repeat", icon="r")])
        return Column(
            top,
            View(cls="android.widget.ImageView", content_desc="Album art", resource_id="playAlbumArt", height=300,
                 background="#f8bbd0"),
            Text(s["title"], resource_id="playSongName", size=22, bold=True, align="center", max_lines=1),
            Text(s["artist"], resource_id="playArtistName", align="center", color="#616161", max_lines=1),
            Text(s["album"], resource_id="playAlbumName", size=14, align="center", color="#616161", max_lines=1),
            SeekBar(elapsed, duration, self.seek, resource_id="seekBar", padding=(0, 0)),
            times,
            controls,
            Spacer(weight=1),
            Text(NOW_PLAYING_HINT, resource_id="swipeHint", size=13, align="center", color="#9e9e9e", padding=(16, 12)),
            cls="android.widget.LinearLayout", resource_id="playRoot", weight=1)

    def on_swipe(self, direction: str) -> bool:
        if self.page != "player" or self.dialog is not None or direction not in ("left", "right"):
            return False
        self.push("queue" if direction == "left" else "equalizer")
        return True

    def build_queue(self) -> View:
        items: list[View] = []
        for i, path in enumerate(self.queue):
            s = self.song(path) if self._exists(path) else {"title": posixpath.basename(path), "artist": ""}
            items.append(ListItem(s["title"], "Now playing" if i == self.index else s["artist"],
                                  (lambda i=i: self._jump(i)), resource_id="queueRow", title_id="queueSongName",
                                  subtitle_id="queueArtistName", icon=str(i + 1)))
        if not items:
            items = [Text("The Now Playing list is empty", resource_id="emptyText", padding=(24, 24))]
        return Column(Toolbar("Now Playing list", on_back=self.pop, resource_id="toolbar"),
                      ScrollList(items, "queue:list", resource_id="recyclerView"),
                      cls="android.widget.LinearLayout", weight=1)

    def _jump(self, index: int) -> None:
        self.index = index
        self._start(0)

    def build_equalizer(self) -> View:
        items = [ListItem(name, "", None, resource_id="presetRow") for name in EQUALIZER_PRESETS]
        return Column(Toolbar("Equalizer", on_back=self.pop, resource_id="toolbar"),
                      ScrollList(items, "equalizer:list", resource_id="recyclerView"),
                      cls="android.widget.LinearLayout", weight=1)

    # --- the state for task checks (a sim convenience) ---------------------------------------------------
    @staticmethod
    def _table(uri: str) -> str:
        rest = uri.split("://", 1)[-1]
        table = rest.split("/", 1)[1] if "/" in rest else ""
        if table not in ("songs", "playlists", "playback", "sort"):
            raise ValueError(f"unknown Pi Music Player uri {uri!r}; use content://{AUTHORITY}/songs, /playlists, "
                             "/playback or /sort")
        return table

    def content_query(self, uri: str) -> list[Row]:
        table = self._table(uri)
        if table == "songs":
            return [{"_id": s["id"], "title": s["title"], "artist": s["artist"], "album": s["album"],
                     "duration": s["duration"], "path": s["path"]} for s in self.songs()]
        if table == "playlists":
            return [{"_id": p["id"], "name": p["name"], "songs": "|".join(p["songs"])} for p in self.playlists]
        if table == "sort":
            return [{"list": k, "field": v[0], "order": v[1]} for k, v in sorted(self.sorts.items())] or \
                [{"list": "tracks", "field": DEFAULT_SORT[0], "order": DEFAULT_SORT[1]}]
        path = self.current()
        s = self.song(path) if path is not None and self._exists(path) else {"title": "", "artist": ""}
        return [{"path": path or "", "title": s["title"], "artist": s["artist"], "playing": int(self.playing),
                 "position": self.elapsed_ms()}]

    def content_insert(self, uri: str, values: Row) -> str:
        if self._table(uri) != "playlists":
            raise ValueError("Pi Music Player: insert only into /playlists (--bind name:s:... [--bind songs:s:a|b])")
        songs = [self.phone.files.norm(p) for p in str(values.get("songs") or "").split("|") if p.strip()]
        missing = [p for p in songs if not self._exists(p)]
        if missing:
            raise ValueError(f"Pi Music Player: no song file {missing[0]}")
        playlist = self.create_playlist(str(values.get("name") or ""), songs)
        if playlist is None:
            raise ValueError("Pi Music Player: a playlist needs a new, non-empty name")
        return f"content://{AUTHORITY}/playlists/{playlist['id']}"

    def content_delete(self, uri: str, match: RowMatch) -> int:
        if self._table(uri) != "playlists":
            raise ValueError("Pi Music Player: delete only from /playlists")
        doomed = {r["_id"] for r in self.content_query(uri) if match(r)}
        self.playlists = [p for p in self.playlists if p["id"] not in doomed]
        return len(doomed)

    def content_update(self, uri: str, values: Row, match: RowMatch) -> int:
        if self._table(uri) != "playback":
            raise ValueError("Pi Music Player: update only /playback (path, playing, position)")
        unknown = set(values) - {"path", "playing", "position"}
        if unknown:
            raise ValueError(f"Pi Music Player: /playback has no column {sorted(unknown)[0]}")
        if not any(match(r) for r in self.content_query(uri)):
            return 0
        if "path" in values:
            path = self.phone.files.norm(str(values["path"]))
            if not self._exists(path):
                raise ValueError(f"Pi Music Player: no song file {path}")
            self.queue, self.index = [path], 0
        if self.current() is None:
            raise ValueError("Pi Music Player: nothing is in the player; bind path first")
        try:
            position = int(values.get("position", self.elapsed_ms()))
            playing = bool(int(values.get("playing", int(self.playing))))
        except (TypeError, ValueError) as exc:
            raise ValueError("Pi Music Player: playing is 0 or 1 and position whole milliseconds") from exc
        self.position_ms = max(0, min(position, self._duration(self.current())))
        self.since_ms = self.phone.clock_ms
        self.playing = playing
        return 1
