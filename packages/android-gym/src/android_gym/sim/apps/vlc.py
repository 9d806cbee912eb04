"""VLC for Android (org.videolan.vlc): the media library of the phone's videos and audio, playlists, a player.

Pages: ``main`` with the bottom navigation "Video" (every video the media library found on /sdcard,
by title; a row plays its video, its "More Actions" button opens Play, Add to playlist, Information
and Delete), "Audio" (the audio files), "Browse" (Internal memory's folders and media files),
"Playlists" (each playlist with how many items it holds) and "More"; ``playlist`` (one playlist's
items in order, each with "More Actions": Play, Move up, Move down, Remove from playlist; "Delete
playlist" in the app bar) and ``player`` (the video player: title, position and length, play/pause).
"Add to playlist" is a dialog listing the playlists (a tap appends the media to that one) above a
"Playlist name" field and "Create".

The media library scans storage as the app does when it starts or resumes: every video or audio file
under /sdcard becomes a ``Media`` row (title: the file name without its extension; duration read
from the MP4's ``mvhd`` box), files that are gone are marked missing and left out of the lists.

Database (what AndroidWorld's VLC tasks clear and read): the medialibrary's
``/data/data/org.videolan.vlc/app_db/vlc_media.db`` with its ``Media``, ``File``, ``Playlist`` and
``PlaylistMediaRelation`` tables (positions from 0, kept dense by the library's triggers) and its
``Settings`` row. Rows written into the file from outside (AndroidWorld deletes every playlist and
media row before a task) reach the app; media deleted there are found again by the next scan.
"""

from __future__ import annotations

import posixpath
import struct
from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.apps.columns import to_ms
from android_gym.sim.databases import build_database, read_table
from android_gym.sim.view import (
    HORIZONTAL,
    Button,
    Column,
    Dialog,
    EditText,
    Image,
    ImageButton,
    ListItem,
    ScrollList,
    SeekBar,
    Text,
    Toolbar,
    View,
)

VLC_PKG = "org.videolan.vlc"
VLC_DB = "/data/data/org.videolan.vlc/app_db/vlc_media.db"
VIDEO_EXTENSIONS = (".mp4", ".m4v", ".mkv", ".webm", ".avi", ".mov", ".3gp")
AUDIO_EXTENSIONS = (".mp3", ".m4a", ".ogg", ".oga", ".flac", ".wav", ".opus")
TYPE_VIDEO, TYPE_AUDIO = 1, 2
"""The medialibrary's ``IMedia::Type`` values stored in ``Media.type``."""
STORAGE_ROOT = "/sdcard"
MRL_ROOT = "file:///storage/emulated/0"
MODEL_VERSION = 37
"""The media library's database model version written to ``Settings.db_model_version``."""

VLC_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS Settings(db_model_version UNSIGNED INTEGER NOT NULL, "
    "max_task_attempts UNSIGNED INTEGER NOT NULL, max_link_task_attempts UNSIGNED INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS Media(id_media INTEGER PRIMARY KEY AUTOINCREMENT, type INTEGER, "
    "subtype INTEGER NOT NULL DEFAULT 0, duration INTEGER DEFAULT -1, last_position REAL DEFAULT -1, "
    "last_time INTEGER DEFAULT -1, play_count UNSIGNED INTEGER, last_played_date UNSIGNED INTEGER, "
    "insertion_date UNSIGNED INTEGER, release_date UNSIGNED INTEGER, title TEXT COLLATE NOCASE, "
    "filename TEXT COLLATE NOCASE, is_favorite BOOLEAN NOT NULL DEFAULT 0, is_present BOOLEAN NOT NULL DEFAULT 1, "
    "device_id INTEGER, nb_playlists UNSIGNED INTEGER NOT NULL DEFAULT 0, folder_id UNSIGNED INTEGER, "
    "import_type UNSIGNED INTEGER NOT NULL DEFAULT 0, group_id UNSIGNED INTEGER, "
    "forced_title BOOLEAN NOT NULL DEFAULT 0, artist_id UNSIGNED INTEGER, genre_id UNSIGNED INTEGER, "
    "track_number UNSIGNED INTEGER, album_id UNSIGNED INTEGER, disc_number UNSIGNED INTEGER, lyrics TEXT)",
    "CREATE INDEX IF NOT EXISTS media_types_idx ON Media(type, subtype, is_present)",
    "CREATE TABLE IF NOT EXISTS File(id_file INTEGER PRIMARY KEY AUTOINCREMENT, media_id UNSIGNED INT DEFAULT NULL, "
    "playlist_id UNSIGNED INT DEFAULT NULL, mrl TEXT, type UNSIGNED INTEGER, "
    "last_modification_date UNSIGNED INT, size UNSIGNED INT, folder_id UNSIGNED INTEGER, "
    "is_removable BOOLEAN NOT NULL, is_external BOOLEAN NOT NULL, is_network BOOLEAN NOT NULL, "
    "FOREIGN KEY(media_id) REFERENCES Media(id_media) ON DELETE CASCADE, "
    "FOREIGN KEY(playlist_id) REFERENCES Playlist(id_playlist) ON DELETE CASCADE)",
    "CREATE INDEX IF NOT EXISTS file_media_id_index ON File(media_id)",
    "CREATE TABLE IF NOT EXISTS Playlist(id_playlist INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT COLLATE NOCASE, "
    "file_id UNSIGNED INT DEFAULT NULL, creation_date UNSIGNED INT NOT NULL, artwork_mrl TEXT, "
    "nb_video UNSIGNED INT NOT NULL DEFAULT 0, nb_audio UNSIGNED INT NOT NULL DEFAULT 0, "
    "nb_unknown UNSIGNED INT NOT NULL DEFAULT 0, duration UNSIGNED INT NOT NULL DEFAULT 0, "
    "FOREIGN KEY (file_id) REFERENCES File(id_file) ON DELETE CASCADE)",
    "CREATE TABLE IF NOT EXISTS PlaylistMediaRelation(media_id INTEGER, mrl STRING, playlist_id INTEGER, "
    "position INTEGER, FOREIGN KEY(media_id) REFERENCES Media(id_media) ON DELETE SET NULL, "
    "FOREIGN KEY(playlist_id) REFERENCES Playlist(id_playlist) ON DELETE CASCADE)",
    "CREATE INDEX IF NOT EXISTS playlist_position_pl_id_index ON PlaylistMediaRelation(playlist_id, position)",
    "CREATE TRIGGER IF NOT EXISTS update_playlist_order_on_insert AFTER INSERT ON PlaylistMediaRelation "
    "WHEN new.position IS NOT NULL BEGIN UPDATE PlaylistMediaRelation SET position = position + 1 "
    "WHERE playlist_id = new.playlist_id AND position >= new.position AND rowid != new.rowid; END",
    "CREATE TRIGGER IF NOT EXISTS update_playlist_order_on_delete AFTER DELETE ON PlaylistMediaRelation "
    "BEGIN UPDATE PlaylistMediaRelation SET position = position - 1 WHERE playlist_id = old.playlist_id "
    "AND position > old.position; END",
)
"""The medialibrary tables VLC's tasks touch, in its SQL (the FTS, album, artist and thumbnail tables are left out)."""

MEDIA_COLUMNS = ("id_media", "type", "duration", "play_count", "insertion_date", "title", "filename", "is_favorite",
                 "is_present", "last_position")
"""The ``Media`` columns the app keeps (the others take the schema's defaults)."""

_ACTIVITIES = {
    "main": ".gui.MainActivity",
    "playlist": ".gui.HeaderMediaListActivity",
    "player": ".gui.video.VideoPlayerActivity",
}
TABS = ("video", "audio", "browse", "playlists", "more")
TAB_TITLES = {"video": "Video", "audio": "Audio", "browse": "Browse", "playlists": "Playlists", "more": "More"}


def mp4_duration_ms(data: bytes) -> int:
    """The duration an MP4's movie header (``mvhd``) gives, in milliseconds (-1 when there is none)."""
    at = data.find(b"mvhd")
    if at < 0 or len(data) < at + 32:
        return -1
    version = data[at + 4]
    try:
        if version == 1:
            timescale, duration = struct.unpack(">IQ", data[at + 24:at + 36])
        else:
            timescale, duration = struct.unpack(">II", data[at + 16:at + 24])
    except struct.error:
        return -1
    return int(duration * 1000 // timescale) if timescale else -1


def tiny_mp4(duration_ms: int) -> bytes:
    """The smallest MP4 a media library accepts as a video of ``duration_ms``: ``ftyp`` and a ``moov`` with ``mvhd``."""
    def box(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", 8 + len(body)) + kind + body

    mvhd = box(b"mvhd", bytes(4) + struct.pack(">IIII", 0, 0, 1000, max(0, duration_ms)) + struct.pack(">IH", 0x10000, 0x100)
               + bytes(10) + struct.pack(">9I", 0x10000, 0, 0, 0, 0x10000, 0, 0, 0, 0x40000000) + bytes(24)
               + struct.pack(">I", 2))
    return box(b"ftyp", b"isom" + struct.pack(">I", 0x200) + b"isomiso2mp41") + box(b"moov", mvhd)


def format_duration(ms: int) -> str:
    """How VLC shows a length: "0:42", "3:05", "1:02:03" ("" when unknown)."""
    if ms < 0:
        return ""
    total = ms // 1000
    hours, rest = divmod(total, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def media_kind(name: str) -> int:
    """``Media.type`` of a file name (0: not media)."""
    lower = name.lower()
    if lower.endswith(VIDEO_EXTENSIONS):
        return TYPE_VIDEO
    if lower.endswith(AUDIO_EXTENSIONS):
        return TYPE_AUDIO
    return 0


def mrl_of(path: str) -> str:
    """The ``file://`` MRL of a path under /sdcard (as the library stores it)."""
    return MRL_ROOT + path[len(STORAGE_ROOT):] if path.startswith(STORAGE_ROOT + "/") else "file://" + path


def path_of(mrl: str) -> str | None:
    """The /sdcard path of a ``file://`` MRL (None for other MRLs)."""
    if mrl.startswith(MRL_ROOT + "/"):
        return STORAGE_ROOT + mrl[len(MRL_ROOT):]
    if mrl.startswith("file:///sdcard/"):
        return mrl[len("file://"):]
    return None


@register_app
class VlcApp(App):
    """VLC over a media library (media and playlists as plain dicts) built from the files on /sdcard."""

    package = VLC_PKG
    label = "VLC"
    activity = ".gui.MainActivity"
    main_page = "main"
    icon_color = "#ff8800"
    databases = (VLC_DB,)

    # --- lifecycle and data -------------------------------------------------------------------------------
    def setup(self) -> None:
        """A set-up install (past the welcome screens): an empty library and the VLCVideos folder."""
        self.media: list[dict[str, Any]] = []
        self.playlists: list[dict[str, Any]] = []
        self.relations: list[dict[str, Any]] = []
        self.next_media = 1
        self.next_playlist = 1
        self.phone.files.mkdir(f"{STORAGE_ROOT}/VLCVideos")
        self._reset_ui()

    def clear_data(self) -> None:
        """``pm clear``: the library and its playlists are gone (the files stay)."""
        self.media, self.playlists, self.relations = [], [], []
        self.next_media = self.next_playlist = 1
        self._reset_ui()

    def _reset_ui(self) -> None:
        self.tab = "video"
        self.name_field = ""
        self.playing: dict[str, Any] = {}

    def on_open(self) -> None:
        self._reset_ui()
        self.scan()

    def current_activity(self) -> str:
        return _ACTIVITIES.get(self.page, self.activity)

    def build(self) -> View:
        self.scan()  # the library follows storage while the app is in front (it rescans on resume)
        return super().build()

    def scan(self) -> None:
        """Add a ``Media`` row for each new media file under /sdcard; mark those whose file is gone missing."""
        fs = self.phone.files
        files = [p for p in fs.walk_files(STORAGE_ROOT) if media_kind(p) and "/Android/" not in p]
        known = {m["path"]: m for m in self.media if m.get("path")}
        for m in self.media:
            m["is_present"] = int(m.get("path") in files) if m.get("path") else m["is_present"]
        now = to_ms(self.phone.now()) // 1000
        for path in files:
            if path in known:
                continue
            name = posixpath.basename(path)
            kind = media_kind(name)
            self.media.append({
                "id_media": self.next_media, "type": kind, "duration": mp4_duration_ms(fs.read(path))
                if kind == TYPE_VIDEO else -1, "play_count": 0, "insertion_date": now,
                "title": posixpath.splitext(name)[0], "filename": name, "is_favorite": 0, "is_present": 1,
                "last_position": -1.0, "path": path, "size": len(fs.read(path)),
            })
            self.next_media += 1

    def media_item(self, media_id: int | None) -> dict[str, Any] | None:
        """The media row with this id, or None."""
        return next((m for m in self.media if m["id_media"] == media_id), None)

    def listed(self, kind: int) -> list[dict[str, Any]]:
        """The present media of a type, by title (case aside), as the Video and Audio tabs list them."""
        rows = [m for m in self.media if m["type"] == kind and m["is_present"]]
        return sorted(rows, key=lambda m: (m["title"].lower(), m["id_media"]))

    def playlist(self, playlist_id: int | None) -> dict[str, Any] | None:
        """The playlist with this id, or None."""
        return next((p for p in self.playlists if p["id_playlist"] == playlist_id), None)

    def playlist_items(self, playlist_id: int) -> list[dict[str, Any]]:
        """The relations of a playlist in position order."""
        return sorted((r for r in self.relations if r["playlist_id"] == playlist_id), key=lambda r: r["position"])

    def create_playlist(self, name: str) -> int:
        """A new empty playlist called ``name``; its id."""
        pid = self.next_playlist
        self.next_playlist += 1
        self.playlists.append({"id_playlist": pid, "name": name, "creation_date": to_ms(self.phone.now()) // 1000})
        return pid

    def add_to_playlist(self, playlist_id: int, media_id: int) -> None:
        """Append a media at the end of a playlist."""
        m = self.media_item(media_id)
        position = len(self.playlist_items(playlist_id))
        self.relations.append({"media_id": media_id, "mrl": mrl_of(m["path"]) if m and m.get("path") else None,
                               "playlist_id": playlist_id, "position": position})

    def _renumber(self, playlist_id: int) -> None:
        for i, r in enumerate(self.playlist_items(playlist_id)):
            r["position"] = i

    # --- the database --------------------------------------------------------------------------------------
    def dump_database(self, path: str) -> bytes:
        """``vlc_media.db`` built from the library: media, their files, playlists and their items."""
        media_rows, file_rows = [], []
        for m in sorted(self.media, key=lambda m: m["id_media"]):
            media_rows.append({k: m.get(k) for k in MEDIA_COLUMNS})
            if m.get("path"):
                file_rows.append({"media_id": m["id_media"], "mrl": mrl_of(m["path"]), "type": 1,
                                  "last_modification_date": m["insertion_date"], "size": m.get("size", 0),
                                  "is_removable": 0, "is_external": 0, "is_network": 0})
        playlist_rows = []
        for p in sorted(self.playlists, key=lambda p: p["id_playlist"]):
            items = [self.media_item(r["media_id"]) for r in self.playlist_items(p["id_playlist"])]
            playlist_rows.append({**p, "nb_video": sum(1 for m in items if m and m["type"] == TYPE_VIDEO),
                                  "nb_audio": sum(1 for m in items if m and m["type"] == TYPE_AUDIO),
                                  "duration": sum(max(0, m["duration"]) for m in items if m)})
        relation_rows = [dict(r) for p in self.playlists for r in self.playlist_items(p["id_playlist"])]
        relation_rows += [dict(r) for r in self.relations if self.playlist(r["playlist_id"]) is None]
        return build_database(VLC_SCHEMA, {
            "Settings": [{"db_model_version": MODEL_VERSION, "max_task_attempts": 2, "max_link_task_attempts": 6}],
            "Media": media_rows, "File": file_rows, "Playlist": playlist_rows,
            "PlaylistMediaRelation": relation_rows,
        })

    def load_database(self, path: str, data: bytes) -> None:
        """Replace the library with the rows of a written ``vlc_media.db``."""
        files = {}
        try:
            files = {int(f["media_id"]): f["mrl"] for f in read_table(data, "File") if f.get("media_id") is not None}
        except ValueError:
            pass
        media = []
        for r in read_table(data, "Media"):
            mid = int(r["id_media"])
            old = self.media_item(mid)
            file_path = path_of(files.get(mid) or "") or (old or {}).get("path")
            if file_path is None and r.get("filename"):  # no File row: where the library had found that name
                file_path = next((m["path"] for m in self.media if m["filename"] == r["filename"]), None)
            media.append({
                "id_media": mid, "type": int(r.get("type") or 0), "duration": int(r.get("duration") or -1),
                "play_count": int(r.get("play_count") or 0), "insertion_date": int(r.get("insertion_date") or 0),
                "title": str(r.get("title") or ""), "filename": str(r.get("filename") or ""),
                "is_favorite": int(r.get("is_favorite") or 0), "is_present": int(r.get("is_present", 1) or 0),
                "last_position": float(r.get("last_position") or -1), "path": file_path,
                "size": (old or {}).get("size", 0),
            })
        self.media = media
        self.playlists = [{"id_playlist": int(p["id_playlist"]), "name": str(p.get("name") or ""),
                           "creation_date": int(p.get("creation_date") or 0)} for p in read_table(data, "Playlist")]
        self.relations = [{"media_id": None if r.get("media_id") is None else int(r["media_id"]), "mrl": r.get("mrl"),
                           "playlist_id": int(r["playlist_id"]), "position": int(r.get("position") or 0)}
                          for r in read_table(data, "PlaylistMediaRelation") if r.get("playlist_id") is not None]
        self.next_media = max([m["id_media"] for m in media] + [self.next_media - 1]) + 1
        self.next_playlist = max([p["id_playlist"] for p in self.playlists] + [self.next_playlist - 1]) + 1
        if self.page == "playlist" and self.playlist(self.page_args.get("playlist_id")) is None:
            self.pages = [(self.main_page, {})]

    # --- the main screen ----------------------------------------------------------------------------------
    def build_main(self) -> View:
        body = getattr(self, f"_tab_{self.tab}")()
        nav = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=80,
                   resource_id="navigation", background="#f5f5f5", children=[
                       View(cls="android.widget.FrameLayout", text=TAB_TITLES[t], resource_id=f"nav_{t}",
                            content_desc=TAB_TITLES[t], clickable=True, focusable=True, selected=t == self.tab,
                            weight=1, size=12, align="center", icon=TAB_TITLES[t][:1],
                            on_click=lambda t=t: self.select_tab(t))
                       for t in TABS])
        return Column(
            Toolbar(TAB_TITLES[self.tab], resource_id="main_toolbar", background="#ff8800",
                    actions=[ImageButton("Search", lambda: self.toast("Search is not available"), icon="?")]),
            body, nav, cls="android.widget.LinearLayout", resource_id="coordinator", weight=1)

    def select_tab(self, tab: str) -> None:
        """Switch the bottom-navigation tab."""
        if tab not in TABS:
            raise ValueError(f"unknown VLC tab {tab!r}")
        self.tab = tab
        self.scroll.pop(f"main:{tab}", None)

    def _media_row(self, m: dict[str, Any], menu: str = "media_menu", **menu_args: Any) -> View:
        mid = m["id_media"]
        subtitle = format_duration(m["duration"])
        texts = Column(
            Text(m["title"], resource_id="ml_item_title", size=16, max_lines=2, padding=(0, 2)),
            Text(subtitle, resource_id="ml_item_time", size=13, color="#5f6368", padding=(0, 2)) if subtitle else None,
            cls="android.widget.LinearLayout", weight=1, padding=(12, 8))
        more = ImageButton("More Actions", lambda: self.show_dialog(menu, media_id=mid, **menu_args),
                           resource_id="item_more", icon=":")
        return View(cls="android.widget.LinearLayout", resource_id="ml_item", orientation=HORIZONTAL,
                    clickable=True, focusable=True, long_clickable=True, on_click=lambda: self.play(mid),
                    on_long_click=lambda: self.show_dialog(menu, media_id=mid, **menu_args), min_height=72,
                    padding=(12.0, 0.0),
                    children=[Image(resource_id="ml_item_thumbnail", icon="V" if m["type"] == TYPE_VIDEO else "A",
                                    width=96, height=56), texts, more])

    def _media_tab(self, kind: int, empty: str) -> View:
        rows = [self._media_row(m) for m in self.listed(kind)]
        if not rows:
            rows = [Text(empty, resource_id="empty", align="center", padding=(24, 48), color="#5f6368")]
        return ScrollList(rows, f"main:{'video' if kind == TYPE_VIDEO else 'audio'}", resource_id="media_list")

    def _tab_video(self) -> View:
        return self._media_tab(TYPE_VIDEO, "No video files found")

    def _tab_audio(self) -> View:
        return self._media_tab(TYPE_AUDIO, "No audio files found")

    def _tab_browse(self) -> View:
        rows = [Text("Storages", size=13, bold=True, color="#ff8800", padding=(16, 8)),
                ListItem("Internal memory", "", lambda: self.browse(STORAGE_ROOT), resource_id="browser_item",
                         title_id="title", icon="D")]
        return ScrollList(rows, "main:browse", resource_id="network_list")

    def _folder_rows(self, fs: Any, folder: str) -> list[View]:
        names = fs.listdir(folder) if fs.is_dir(folder) else []
        rows: list[View] = []
        for name in sorted((n for n in names if fs.is_dir(f"{folder}/{n}") and not n.startswith(".")), key=str.lower):
            path = f"{folder}/{name}"
            count = sum(1 for n in fs.listdir(path) if not n.startswith("."))
            rows.append(ListItem(name, f"{count} item{'s' if count != 1 else ''}" if count else "Empty",
                                 lambda p=path: self.browse(p), resource_id="browser_item", title_id="title",
                                 subtitle_id="text", icon="D"))
        for name in sorted((n for n in names if fs.is_file(f"{folder}/{n}") and media_kind(n)), key=str.lower):
            m = next((m for m in self.media if m.get("path") == f"{folder}/{name}"), None)
            if m is not None:
                rows.append(self._media_row(m))
        if not rows:
            rows.append(Text("Empty directory", resource_id="empty", align="center", padding=(24, 48), color="#5f6368"))
        return rows

    def browse(self, folder: str) -> None:
        """Open a folder of Internal memory."""
        self.push("folder", folder=folder)

    def build_folder(self, folder: str) -> View:
        title = "Internal memory" if folder == STORAGE_ROOT else posixpath.basename(folder)
        return Column(Toolbar(title, on_back=self.pop, resource_id="main_toolbar", background="#ff8800"),
                      ScrollList(self._folder_rows(self.phone.files, folder), "folder:list", resource_id="network_list"),
                      cls="android.widget.LinearLayout", weight=1)

    def _tab_playlists(self) -> View:
        rows: list[View] = []
        for p in sorted(self.playlists, key=lambda p: (p["name"].lower(), p["id_playlist"])):
            n = len(self.playlist_items(p["id_playlist"]))
            rows.append(ListItem(p["name"], f"{n} track{'s' if n != 1 else ''}",
                                 lambda i=p["id_playlist"]: self.push("playlist", playlist_id=i),
                                 resource_id="playlist_item", title_id="title", subtitle_id="subtitle", icon="P"))
        if not rows:
            rows = [Text("No playlists yet", resource_id="empty", align="center", padding=(24, 48), color="#5f6368")]
        return ScrollList(rows, "main:playlists", resource_id="playlist_list")

    def _tab_more(self) -> View:
        rows = [Text("History", size=16, padding=(16, 12)), Text("Streams", size=16, padding=(16, 12)),
                Text(f"VLC for Android, media library model {MODEL_VERSION}", size=13, color="#5f6368",
                     padding=(16, 12))]
        return ScrollList(rows, "main:more", resource_id="more_list")

    # --- the media menu and the playlist dialog ------------------------------------------------------------
    def dialog_media_menu(self, media_id: int) -> View:
        """A media's More Actions: Play, Add to playlist, Information, Delete."""
        entries = (("Play", lambda: self.play(media_id)),
                   ("Add to playlist", lambda: self.show_dialog("add_to_playlist", media_id=media_id)),
                   ("Information", lambda: self.show_dialog("info", media_id=media_id)),
                   ("Delete", lambda: self.show_dialog("delete", media_id=media_id)))
        items = [ListItem(label, "", cb, resource_id="context_option", title_id="context_option_title")
                 for label, cb in entries]
        m = self.media_item(media_id)
        return Dialog(m["title"] if m else "", Column(*items, resource_id="ctx_list"))

    def dialog_add_to_playlist(self, media_id: int) -> View:
        """Append the media to a listed playlist, or create one from the name typed."""
        rows: list[View | None] = [
            ListItem(p["name"], f"{len(self.playlist_items(p['id_playlist']))} tracks",
                     lambda i=p["id_playlist"]: self._add_existing(i, media_id), resource_id="playlist_row",
                     title_id="title", subtitle_id="subtitle", min_height=48)
            for p in sorted(self.playlists, key=lambda p: (p["name"].lower(), p["id_playlist"]))]
        rows.append(EditText(self.name_field, self._set_name, hint="Playlist name", resource_id="dialog_playlist_name",
                             on_submit=lambda: self._create(media_id)))
        rows.append(Button("Create", lambda: self._create(media_id), resource_id="dialog_playlist_save"))
        return Dialog("Add to playlist", Column(*rows, resource_id="dialog_playlist"))

    def _set_name(self, value: str) -> None:
        self.name_field = value

    def _add_existing(self, playlist_id: int, media_id: int) -> None:
        p = self.playlist(playlist_id)
        self.add_to_playlist(playlist_id, media_id)
        self.close_dialog()
        self.phone.set_focus(None)
        self.toast(f"Added to {p['name'] if p else 'playlist'}")

    def _create(self, media_id: int) -> None:
        name = self.name_field.strip()
        if not name:
            self.toast("Please enter a playlist name")
            return
        existing = next((p for p in self.playlists if p["name"].lower() == name.lower()), None)
        pid = existing["id_playlist"] if existing else self.create_playlist(name)
        self.name_field = ""
        self._add_existing(pid, media_id)

    def dialog_info(self, media_id: int) -> View:
        m = self.media_item(media_id) or {}
        lines = [f"File: {m.get('filename', '')}", f"Length: {format_duration(m.get('duration', -1))}",
                 f"Location: {posixpath.dirname(m.get('path') or '')}"]
        return Dialog("Information", Column(*[Text(s, resource_id="info_line", size=14, padding=(24, 4))
                                              for s in lines]), [("OK", self.close_dialog)])

    def dialog_delete(self, media_id: int) -> View:
        m = self.media_item(media_id) or {}
        return Dialog("", f"Delete {m.get('filename', 'this file')}?",
                      [("Cancel", self.close_dialog), ("Delete", lambda: self._delete_media(media_id))],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _delete_media(self, media_id: int) -> None:
        """Delete the media's file (the library drops the row and its playlist entries)."""
        m = self.media_item(media_id)
        if m and m.get("path") and self.phone.files.exists(m["path"]):
            self.phone.files.remove(m["path"])
        self.media = [x for x in self.media if x["id_media"] != media_id]
        touched = {r["playlist_id"] for r in self.relations if r["media_id"] == media_id}
        self.relations = [r for r in self.relations if r["media_id"] != media_id]
        for pid in touched:
            self._renumber(pid)
        self.close_dialog()

    # --- a playlist -------------------------------------------------------------------------------------
    def build_playlist(self, playlist_id: int) -> View:
        p = self.playlist(playlist_id)
        if p is None:
            return Column(Toolbar("Playlist", on_back=self.pop), Text("This playlist was deleted", padding=(24, 24)),
                          weight=1)
        rows: list[View] = []
        for r in self.playlist_items(playlist_id):
            m = self.media_item(r["media_id"])
            if m is not None and m["is_present"]:
                rows.append(self._media_row(m, "item_menu", playlist_id=playlist_id, position=r["position"]))
        if not rows:
            rows = [Text("This playlist is empty", resource_id="empty", align="center", padding=(24, 48),
                         color="#5f6368")]
        n = len(self.playlist_items(playlist_id))
        return Column(
            Toolbar(p["name"], on_back=self.pop, resource_id="main_toolbar", background="#ff8800", actions=[
                ImageButton("Delete playlist", lambda: self.show_dialog("delete_playlist", playlist_id=playlist_id),
                            resource_id="ml_menu_delete", icon="D")]),
            Text(f"{n} track{'s' if n != 1 else ''}", resource_id="playlist_count", size=13, color="#5f6368",
                 padding=(16, 6)),
            ScrollList(rows, "playlist:items", resource_id="songs"),
            cls="android.widget.LinearLayout", weight=1)

    def dialog_item_menu(self, media_id: int, playlist_id: int, position: int) -> View:
        """A playlist item's More Actions: Play, Move up, Move down, Remove from playlist."""
        entries = (("Play", lambda: self.play(media_id)),
                   ("Move up", lambda: self._move(playlist_id, position, -1)),
                   ("Move down", lambda: self._move(playlist_id, position, 1)),
                   ("Remove from playlist", lambda: self._remove_item(playlist_id, position)))
        items = [ListItem(label, "", cb, resource_id="context_option", title_id="context_option_title")
                 for label, cb in entries]
        m = self.media_item(media_id)
        return Dialog(m["title"] if m else "", Column(*items, resource_id="ctx_list"))

    def _move(self, playlist_id: int, position: int, step: int) -> None:
        items = self.playlist_items(playlist_id)
        other = position + step
        if 0 <= other < len(items):
            items[position]["position"], items[other]["position"] = other, position
        self.close_dialog()

    def _remove_item(self, playlist_id: int, position: int) -> None:
        items = self.playlist_items(playlist_id)
        if 0 <= position < len(items):
            self.relations.remove(items[position])
            self._renumber(playlist_id)
        self.close_dialog()

    def dialog_delete_playlist(self, playlist_id: int) -> View:
        p = self.playlist(playlist_id) or {}
        return Dialog("", f"Delete {p.get('name', 'this playlist')}?",
                      [("Cancel", self.close_dialog), ("Delete", lambda: self._delete_playlist(playlist_id))],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _delete_playlist(self, playlist_id: int) -> None:
        self.playlists = [p for p in self.playlists if p["id_playlist"] != playlist_id]
        self.relations = [r for r in self.relations if r["playlist_id"] != playlist_id]
        self.close_dialog()
        self.pop()

    # --- the player ---------------------------------------------------------------------------------------
    def play(self, media_id: int) -> None:
        """Open the player on a media from its start (its play count goes up)."""
        m = self.media_item(media_id)
        if m is None:
            return
        m["play_count"] = m.get("play_count", 0) + 1
        self.playing = {"media_id": media_id, "started": self.phone.clock_ms, "offset": 0, "paused": False}
        self.close_dialog()
        self.push("player", media_id=media_id)

    def position_ms(self) -> int:
        """Where the player is in the media now (it stops at the end)."""
        p = self.playing
        m = self.media_item(p.get("media_id"))
        if m is None:
            return 0
        pos = p["offset"] + (0 if p["paused"] else self.phone.clock_ms - p["started"])
        return min(pos, m["duration"]) if m["duration"] >= 0 else pos

    def toggle_pause(self) -> None:
        """Pause or resume the player."""
        p = self.playing
        if not p:
            return
        if p["paused"]:
            p.update(paused=False, started=self.phone.clock_ms)
        else:
            p.update(paused=True, offset=self.position_ms())

    def seek(self, fraction: float) -> None:
        """Jump to ``fraction`` of the media (the seek bar), playing on from there unless paused."""
        m = self.media_item(self.playing.get("media_id"))
        if m is None or m["duration"] <= 0:
            return
        self.playing.update(offset=int(fraction * m["duration"]), started=self.phone.clock_ms)

    def _frame_picture(self, m: dict[str, Any]) -> str:
        """The video's frame now on the player's surface (``path#t=MS``), '' for audio or a missing file."""
        path = m.get("path") or ""
        if not path.lower().endswith(VIDEO_EXTENSIONS) or not self.phone.files.is_file(path):
            return ""
        return f"{path}#t={self.position_ms()}"

    def build_player(self, media_id: int) -> View:
        m = self.media_item(media_id) or {"title": "", "duration": -1}
        paused = self.playing.get("paused", False)
        return Column(
            Toolbar(m["title"], on_back=self.pop, resource_id="player_overlay_toolbar", title_id="player_overlay_title",
                    background="#000000"),
            View(cls="android.view.SurfaceView", resource_id="player_surface", weight=1, background="#000000",
                 picture=self._frame_picture(m)),
            SeekBar(self.position_ms(), max(1, m["duration"]), self.seek, resource_id="player_overlay_seekbar",
                    background="#000000"),
            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=48, background="#000000",
                 children=[Text(format_duration(self.position_ms()), resource_id="player_overlay_time",
                                color="#ffffff", size=13),
                           View(cls="android.view.View", weight=1, height=1),
                           Text(format_duration(m["duration"]), resource_id="player_overlay_length",
                                color="#ffffff", size=13)]),
            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=72, background="#000000",
                 children=[View(cls="android.view.View", weight=1, height=1),
                           ImageButton("Play" if paused else "Pause", self.toggle_pause,
                                       resource_id="player_overlay_play", icon=">" if paused else "="),
                           View(cls="android.view.View", weight=1, height=1)]),
            cls="android.widget.FrameLayout", resource_id="player_root", weight=1, background="#000000")
