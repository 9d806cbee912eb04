"""OpenTracks (de.dennisguse.opentracks): recorded sports activities with name, category, start, time and distance.

Pages: ``main`` (the track list, newest first: each row shows the activity's name, its category, its
start date and time, its total time and its distance; "Record" cannot start here, there is no GPS) and
``detail`` (one track's statistics: category, description, start, total and moving time, distance,
average speed, elevation gain and loss). Distances are shown in miles with two decimals and speeds in
mph, as on AndroidWorld's emulator (imperial units); times as ``H:MM:SS`` (``MM:SS`` under an hour).

Database: the real app's ``/data/data/de.dennisguse.opentracks/databases/database.db`` with its
``tracks`` table (the columns AndroidWorld's ``sqlite_schema_utils.SportsActivity`` reads and writes),
and its empty ``trackpoints`` and ``markers`` tables. ``starttime``/``stoptime`` are epoch
milliseconds of the phone's wall clock read as UTC, ``totaltime``/``movingtime`` milliseconds,
``totaldistance`` metres.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.apps.columns import from_ms, to_ms
from android_gym.sim.databases import build_database, read_table
from android_gym.sim.view import (
    HORIZONTAL,
    Column,
    Fab,
    Image,
    ImageButton,
    ScrollList,
    Text,
    Toolbar,
    View,
)

OPENTRACKS_PKG = "de.dennisguse.opentracks"
OPENTRACKS_DB = "/data/data/de.dennisguse.opentracks/databases/database.db"
METERS_PER_MILE = 1609.34

TRACK_COLUMNS: dict[str, Any] = {
    "name": "", "description": "", "category": "", "starttime": 0, "stoptime": 0, "numpoints": 0,
    "totaldistance": 0.0, "totaltime": 0, "movingtime": 0, "avgspeed": 0.0, "avgmovingspeed": 0.0, "maxspeed": 0.0,
    "minelevation": 0.0, "maxelevation": 0.0, "elevationgain": 0.0, "icon": None, "uuid": None,
    "elevationloss": 0.0, "starttime_offset": 0, "activity_type": "",
}
"""Every column of the ``tracks`` table but ``_id``, with the value a new track gets."""

OPENTRACKS_SCHEMA = (
    "CREATE TABLE android_metadata (locale TEXT)",
    "CREATE TABLE tracks (_id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, description TEXT, category TEXT, "
    "starttime INTEGER, stoptime INTEGER, numpoints INTEGER, totaldistance FLOAT, totaltime INTEGER, "
    "movingtime INTEGER, avgspeed FLOAT, avgmovingspeed FLOAT, maxspeed FLOAT, minelevation FLOAT, "
    "maxelevation FLOAT, elevationgain FLOAT, icon TEXT, uuid BLOB, elevationloss FLOAT, starttime_offset INTEGER, "
    "activity_type TEXT)",
    "CREATE TABLE trackpoints (_id INTEGER PRIMARY KEY AUTOINCREMENT, trackid INTEGER NOT NULL, longitude INTEGER, "
    "latitude INTEGER, time INTEGER, altitude FLOAT, accuracy FLOAT, speed FLOAT, bearing FLOAT, sensor_heartrate "
    "FLOAT, sensor_cadence FLOAT, sensor_distance FLOAT, sensor_power FLOAT, elevation_gain FLOAT, elevation_loss "
    "FLOAT, type TEXT, FOREIGN KEY (trackid) REFERENCES tracks(_id) ON UPDATE CASCADE ON DELETE CASCADE)",
    "CREATE TABLE markers (_id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT, description TEXT, category TEXT, "
    "icon TEXT, trackid INTEGER NOT NULL, length FLOAT, duration INTEGER, longitude INTEGER, latitude INTEGER, "
    "time INTEGER, altitude FLOAT, accuracy FLOAT, bearing FLOAT, photourl TEXT, FOREIGN KEY (trackid) REFERENCES "
    "tracks(_id) ON UPDATE CASCADE ON DELETE CASCADE)",
    "CREATE INDEX trackpoints_trackid_index ON trackpoints(trackid)",
    "CREATE UNIQUE INDEX tracks_uuid_index ON tracks(uuid)",
)
"""OpenTracks' SQLite tables (AndroidWorld's SportsTracker questions write and read ``tracks``)."""

_INT_COLUMNS = {k for k, v in TRACK_COLUMNS.items() if isinstance(v, int)}
_FLOAT_COLUMNS = {k for k, v in TRACK_COLUMNS.items() if isinstance(v, float)}


def format_duration(ms: int) -> str:
    """A total time as the app shows it: "1:30:00", or "45:00" under an hour."""
    seconds = int(ms) // 1000
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60:02d}:{rest % 60:02d}"


def format_distance(meters: float) -> str:
    """A distance in miles with two decimals ("2.49 mi")."""
    return f"{meters / METERS_PER_MILE:.2f} mi"


def format_start(ms: int) -> str:
    """A start time: "Oct 12, 2023, 8:00 AM"."""
    when = from_ms(ms)
    return (f"{when.strftime('%b')} {when.day}, {when.year}, {when.hour % 12 or 12}:{when.minute:02d} "
            f"{'AM' if when.hour < 12 else 'PM'}")


@register_app
class OpenTracksApp(App):
    """OpenTracks' track list and track statistics over plain track dicts (the ``tracks`` table's columns)."""

    package = OPENTRACKS_PKG
    label = "OpenTracks"
    activity = "de.dennisguse.opentracks.TrackListActivity"
    main_page = "main"
    icon_color = "#2e7d32"
    databases = (OPENTRACKS_DB,)

    def setup(self) -> None:
        self.tracks: list[dict[str, Any]] = []
        self.next_id = 1

    def clear_data(self) -> None:
        """``pm clear``: no recorded tracks."""
        self.setup()

    def current_activity(self) -> str:
        if self.page == "detail":
            return "de.dennisguse.opentracks.TrackRecordedActivity"
        return self.activity

    # --- database ----------------------------------------------------------------------------------
    def dump_database(self, path: str) -> bytes:
        """``database.db`` with the ``tracks`` table built from the app's tracks (no track points or markers)."""
        return build_database(OPENTRACKS_SCHEMA, {"tracks": [dict(t) for t in self.tracks]})

    def load_database(self, path: str, data: bytes) -> None:
        """Replace the tracks with the rows of a written ``database.db``."""
        tracks = []
        for r in read_table(data, "tracks"):
            track: dict[str, Any] = {"_id": int(r["_id"])}
            for col, default in TRACK_COLUMNS.items():
                value = r.get(col, default)
                if col in _INT_COLUMNS:
                    value = int(value or 0)
                elif col in _FLOAT_COLUMNS:
                    value = float(value or 0.0)
                track[col] = value
            track["name"] = str(track["name"] or "")
            track["category"] = str(track["category"] or "")
            tracks.append(track)
        self.tracks = tracks
        self.next_id = max((t["_id"] for t in tracks), default=0) + 1

    # --- data ----------------------------------------------------------------------------------------
    def add_track(self, name: str, category: str, start: dt.datetime, minutes: float, meters: float,
                  description: str = "") -> int:
        """Store a finished track (as a recording would) and return its ``_id``."""
        start_ms = to_ms(start)
        total = int(minutes * 60_000)
        speed = meters / (total / 1000) if total else 0.0
        track = {"_id": self.next_id, **TRACK_COLUMNS, "name": name, "category": category, "activity_type": category,
                 "description": description, "starttime": start_ms, "stoptime": start_ms + total, "totaltime": total,
                 "movingtime": total, "totaldistance": float(meters), "avgspeed": speed, "avgmovingspeed": speed,
                 "uuid": self.next_id.to_bytes(16, "big")}
        self.next_id += 1
        self.tracks.append(track)
        return track["_id"]

    def _track(self, track_id: int) -> dict[str, Any] | None:
        return next((t for t in self.tracks if t["_id"] == track_id), None)

    def newest_first(self) -> list[dict[str, Any]]:
        """Tracks in the list's order: the latest start first."""
        return sorted(self.tracks, key=lambda t: (-t["starttime"], -t["_id"]))

    # --- pages ---------------------------------------------------------------------------------------
    def _row(self, t: dict[str, Any]) -> View:
        tid = t["_id"]
        texts = Column(
            Text(t["name"], resource_id="track_list_item_name", size=17, bold=True, max_lines=2, padding=(0, 2)),
            Text(t["category"], resource_id="track_list_item_category", size=14, color="#444746", padding=(0, 1)),
            Text(format_start(t["starttime"]), resource_id="track_list_item_date", size=14, color="#444746",
                 padding=(0, 1)),
            cls="android.widget.LinearLayout", weight=1, padding=(8, 8),
        )
        figures = Column(
            Text(format_duration(t["totaltime"]), resource_id="track_list_item_time", size=15, align="end",
                 padding=(0, 2)),
            Text(format_distance(t["totaldistance"]), resource_id="track_list_item_distance", size=15, align="end",
                 padding=(0, 2)),
            cls="android.widget.LinearLayout", width=120, padding=(4, 8),
        )
        return View(cls="android.widget.LinearLayout", resource_id="track_list_item", orientation=HORIZONTAL,
                    clickable=True, focusable=True, on_click=lambda i=tid: self.push("detail", track_id=i),
                    min_height=72, padding=(12.0, 0.0),
                    children=[Image(t["category"], resource_id="track_list_item_icon", icon=(t["category"] or "?")[:1]
                                    .upper(), width=40, height=40), texts, figures])

    def build_main(self) -> View:
        rows = [self._row(t) for t in self.newest_first()]
        if not rows:
            rows = [Text("Start recording your first track.", resource_id="track_list_empty_view", align="center",
                         padding=(24, 48), color="#5f6368")]
        return Column(
            Toolbar("OpenTracks", resource_id="track_list_toolbar", actions=[
                ImageButton("Search", lambda: self.toast("Search is not available"), resource_id="track_list_search",
                            icon="?"),
                ImageButton("More options", lambda: self.toast("No options"), icon=":")]),
            ScrollList(rows, "main:tracks", resource_id="track_list"),
            Fab("Record", lambda: self.toast("GPS is not available"), resource_id="track_list_fab_action", icon="o"),
            cls="androidx.coordinatorlayout.widget.CoordinatorLayout", resource_id="track_list_coordinator",
            weight=1,
        )

    def build_detail(self, track_id: int) -> View:
        t = self._track(track_id)
        if t is None:
            return Column(Toolbar("Track", on_back=self.pop), Text("This track was deleted", padding=(24, 24)),
                          weight=1)
        mph = t["avgspeed"] * 3600 / METERS_PER_MILE
        fields = [("Category", t["category"] or "-", "stats_activity_type"),
                  ("Description", t["description"] or "-", "stats_description"),
                  ("Start", format_start(t["starttime"]), "stats_start_datetime"),
                  ("Total time", format_duration(t["totaltime"]), "stats_total_time_value"),
                  ("Moving time", format_duration(t["movingtime"]), "stats_moving_time_value"),
                  ("Distance", format_distance(t["totaldistance"]), "stats_distance_value"),
                  ("Average speed", f"{mph:.2f} mph", "stats_average_speed_value"),
                  ("Elevation gain", f"{t['elevationgain'] * 3.28084:.0f} ft", "stats_elevation_gain_value"),
                  ("Elevation loss", f"{t['elevationloss'] * 3.28084:.0f} ft", "stats_elevation_loss_value")]
        rows = [Column(Text(label, size=12, color="#5f6368", padding=(16, 2)),
                       Text(value, size=18, resource_id=rid, padding=(16, 2)), padding=(0, 6))
                for label, value, rid in fields]
        return Column(Toolbar(t["name"], on_back=self.pop, resource_id="track_detail_toolbar"),
                      ScrollList(rows, "detail:stats", resource_id="track_detail_stats",
                                 cls="android.widget.ScrollView"),
                      cls="android.widget.LinearLayout", weight=1)
