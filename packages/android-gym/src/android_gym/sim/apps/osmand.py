"""OsmAnd (net.osmand): the offline map of Liechtenstein with search, favourites, map markers and planned routes.

AndroidWorld's set-up copies the Liechtenstein map onto the emulator; the sim models that map by its
named places (:data:`PLACES`: the country's towns and villages at OpenStreetMap's place nodes) and keeps
what the real app stores where the real app stores it:

- favourites in ``/sdcard/Android/data/net.osmand/files/favorites/favorites.gpx`` (GPX 1.1 ``wpt``
  points, name, time and OsmAnd's extensions), read back from the file every time, so a file written
  from outside (AndroidWorld's clean-up rewrites it) is what the app shows;
- map markers in the SQLite table ``map_markers`` of ``/data/data/net.osmand/databases/map_markers_db``;
- tracks saved from "Plan a route" as GPX files in ``/sdcard/Android/data/net.osmand/files/tracks``
  (one ``trk`` with one ``trkseg`` of the route's points, joined by straight lines).

Screens: the map (MapActivity; "Search", "Menu", zoom buttons; a tapped search result centres the map on
the place and opens its context menu with "Add" (favourite), "Marker", "Share" and "Directions"); the search
(place names, or "lat, lon" coordinates); the favourite editor; "My Places" (favourites, tracks, markers);
and "Plan a route" (the map with a centre cross: "Add point" adds the map's centre, search moves the map,
"Save" asks for the track's name). The map itself is a plain surface with no accessibility nodes, as the
real app's OpenGL map view.
"""

from __future__ import annotations

import math
import posixpath
import re
import unicodedata
import xml.etree.ElementTree as ET
from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.databases import build_database, read_table
from android_gym.sim.files import FileSystemError
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

OSMAND_PKG = "net.osmand"
FILES_DIR = "/sdcard/Android/data/net.osmand/files"
FAVORITES_GPX = f"{FILES_DIR}/favorites/favorites.gpx"
TRACKS_DIR = f"{FILES_DIR}/tracks"
MARKERS_DB = "/data/data/net.osmand/databases/map_markers_db"
GPX_NS = "http://www.topografix.com/GPX/1/1"
OSMAND_NS = "https://osmand.net"
CREATOR = "OsmAnd~ 4.6.13"

PLACES: dict[str, tuple[float, float, str]] = {
    "Balzers": (47.0688832, 9.5061564, "Village"),
    "Bendern": (47.2122151, 9.5062101, "Village"),
    "Eschen": (47.2107, 9.5226, "Village"),
    "Gamprin": (47.2203, 9.5094, "Village"),
    "Malbun": (47.1026191, 9.6083057, "Village"),
    "Mauren": (47.2196, 9.5435, "Village"),
    "Nendeln": (47.1973857, 9.5430636, "Village"),
    "Oberplanken": (47.1784977, 9.5450163, "Hamlet"),
    "Planken": (47.1858882, 9.5452201, "Village"),
    "Rotenboden": (47.1275785, 9.5387131, "Hamlet"),
    "Ruggell": (47.23976, 9.5262837, "Village"),
    "Schaan": (47.1663432, 9.5103085, "Town"),
    "Schaanwald": (47.2165476, 9.5699984, "Village"),
    "Schellenberg": (47.2310, 9.5468, "Village"),
    "Schönberg": (47.1303814, 9.5930117, "Hamlet"),
    "Steg": (47.1145, 9.5705, "Village"),
    "Triesen": (47.106997, 9.5274854, "Village"),
    "Triesenberg": (47.1181, 9.5433, "Village"),
    "Vaduz": (47.1410, 9.5209, "City"),
}
"""Named places of the Liechtenstein map: (latitude, longitude, kind), at OpenStreetMap's place nodes."""
COUNTRY = "Liechtenstein"
START_CENTER = (47.1410, 9.5209)
MAP_SPAN_DEG = (0.2, 0.15)
"""Latitude and longitude the map view spans (the whole country at the start zoom)."""

MARKER_COLUMNS = ("marker_id", "marker_lat", "marker_lon", "marker_description", "marker_active", "marker_added",
                  "marker_visited", "group_name", "group_key", "marker_color", "marker_next_key", "marker_disabled",
                  "marker_selected", "marker_map_object_name", "title")
MARKERS_SCHEMA = (
    "CREATE TABLE android_metadata (locale TEXT)",
    "CREATE TABLE map_markers (marker_id TEXT PRIMARY KEY, marker_lat DOUBLE, marker_lon DOUBLE, "
    "marker_description TEXT, marker_active INTEGER, marker_added LONG, marker_visited LONG, group_name TEXT, "
    "group_key TEXT, marker_color INTEGER, marker_next_key TEXT, marker_disabled INTEGER, marker_selected INTEGER, "
    "marker_map_object_name TEXT, title TEXT)",
    "CREATE TABLE map_markers_groups (group_name TEXT, group_marker_id TEXT PRIMARY KEY, group_type INTEGER, "
    "group_disabled INTEGER, categories TEXT)",
)
"""OsmAnd's map-markers database (the columns AndroidWorld's ``OsmAndMapMarker`` reads)."""

_COORDS = re.compile(r"^\s*(-?\d{1,2}(?:\.\d+)?)\s*[,;\s]\s*(-?\d{1,3}(?:\.\d+)?)\s*$")


def fold(text: str) -> str:
    """Lower case without accents ("Teléferic" -> "teleferic"), how the maps' searches compare (OsmAnd's, MAPS.ME's)."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.lower()) if not unicodedata.combining(c))


def parse_coordinates(text: str) -> tuple[float, float] | None:
    """``"47.19, 9.54"`` as (lat, lon) when both are in range, else None (what the search box reads as a point)."""
    m = _COORDS.match(text)
    if not m:
        return None
    lat, lon = float(m.group(1)), float(m.group(2))
    return (lat, lon) if -90 <= lat <= 90 and -180 <= lon <= 180 else None


def format_coordinates(lat: float, lon: float) -> str:
    """A point as OsmAnd writes it in its menus (five decimals)."""
    return f"{lat:.5f}, {lon:.5f}"


def distance_km(a: tuple[float, float], b: tuple[float, float]) -> float:
    """Great-circle distance in km."""
    lat1, lon1, lat2, lon2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371.0 * math.asin(min(1.0, math.sqrt(h)))


def _distance_text(km: float) -> str:
    return f"{km:.1f} km" if km >= 1 else f"{round(km * 1000)} m"


def _gpx_root() -> ET.Element:
    return ET.Element(f"{{{GPX_NS}}}gpx", {"version": "1.1", "creator": CREATOR})


def _gpx_bytes(root: ET.Element) -> bytes:
    ET.register_namespace("", GPX_NS)
    ET.register_namespace("osmand", OSMAND_NS)
    ET.indent(root, space="  ")
    return b"<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>\n" + ET.tostring(root, encoding="utf-8")


@register_app
class OsmAndApp(App):
    """OsmAnd over the Liechtenstein map (state: the map's centre, the selected point, markers, a route being planned)."""

    package = OSMAND_PKG
    label = "OsmAnd"
    activity = "net.osmand.plus.activities.MapActivity"
    main_page = "map"
    icon_color = "#ff8800"
    databases = (MARKERS_DB,)

    def setup(self) -> None:
        self.center = START_CENTER
        self.selected: dict[str, Any] | None = None
        self.markers: list[dict[str, Any]] = []
        self.next_marker = 1
        self.query = ""
        self.plan: list[list[float]] | None = None
        self.form: dict[str, str] = {}
        self.phone.files.mkdir(TRACKS_DIR)
        self.phone.files.mkdir(posixpath.dirname(FAVORITES_GPX))

    def clear_data(self) -> None:
        """``pm clear``: no markers; the app's files (favourites, tracks) go too, the folders stay."""
        fs = self.phone.files
        for path in fs.walk_files(FILES_DIR):
            if path.endswith(".gpx"):
                fs.remove(path)
        self.setup()

    def on_open(self) -> None:
        self.selected = None
        self.query = ""
        self.plan = None
        self.form = {}

    def current_activity(self) -> str:
        return self.activity

    # --- favourites: the GPX file is the store -----------------------------------------------------------
    def _favorites_tree(self) -> ET.Element:
        try:
            return ET.fromstring(self.phone.files.read(FAVORITES_GPX))
        except (FileSystemError, ET.ParseError):
            return _gpx_root()

    def favorites(self) -> list[dict[str, Any]]:
        """The favourites in the file: name, lat, lon."""
        out = []
        for wpt in self._favorites_tree().findall(f"{{{GPX_NS}}}wpt"):
            name = wpt.find(f"{{{GPX_NS}}}name")
            try:
                out.append({"name": name.text if name is not None and name.text else "",
                            "lat": float(wpt.get("lat", "nan")), "lon": float(wpt.get("lon", "nan"))})
            except ValueError:
                continue
        return out

    def add_favorite(self, name: str, lat: float, lon: float, description: str = "") -> None:
        """Append a point to favorites.gpx (default group), as OsmAnd saves a favourite."""
        root = self._favorites_tree()
        wpt = ET.SubElement(root, f"{{{GPX_NS}}}wpt", {"lat": repr(lat), "lon": repr(lon)})
        ET.SubElement(wpt, f"{{{GPX_NS}}}time").text = self.phone.now().strftime("%Y-%m-%dT%H:%M:%SZ")
        ET.SubElement(wpt, f"{{{GPX_NS}}}name").text = name
        if description:
            ET.SubElement(wpt, f"{{{GPX_NS}}}desc").text = description
        ext = ET.SubElement(wpt, f"{{{GPX_NS}}}extensions")
        for key, value in (("icon", "special_star"), ("background", "circle"), ("color", "#eecc22")):
            ET.SubElement(ext, f"{{{OSMAND_NS}}}{key}").text = value
        self.phone.files.write(FAVORITES_GPX, _gpx_bytes(root), self.phone.clock_ms)

    def _is_favorite(self, lat: float, lon: float) -> bool:
        return any(abs(f["lat"] - lat) < 1e-7 and abs(f["lon"] - lon) < 1e-7 for f in self.favorites())

    # --- markers: a SQLite table ---------------------------------------------------------------------------
    def dump_database(self, path: str) -> bytes:
        """``map_markers_db`` with the markers' rows."""
        return build_database(MARKERS_SCHEMA, {"map_markers": [dict(m) for m in self.markers]})

    def load_database(self, path: str, data: bytes) -> None:
        """Replace the markers with the rows of a written ``map_markers_db``."""
        self.markers = [{c: r.get(c) for c in MARKER_COLUMNS} for r in read_table(data, "map_markers")]

    def add_marker(self, name: str, lat: float, lon: float) -> None:
        """A new active marker at the point (first in the markers list)."""
        marker_id = f"{lat:.6f},{lon:.6f},{self.next_marker}"
        self.next_marker += 1
        self.markers.insert(0, {
            "marker_id": marker_id, "marker_lat": lat, "marker_lon": lon,
            "marker_description": f"marker#{name}", "marker_active": 1, "marker_added": self.phone.clock_ms,
            "marker_visited": 0, "group_name": "", "group_key": "", "marker_color": len(self.markers) % 5,
            "marker_next_key": "", "marker_disabled": 0, "marker_selected": 0, "marker_map_object_name": name,
            "title": ""})

    # --- tracks --------------------------------------------------------------------------------------------
    def tracks(self) -> list[str]:
        """Track files (GPX) in the tracks folder and its sub-folders, by name."""
        return sorted((p for p in self.phone.files.walk_files(TRACKS_DIR) if p.endswith(".gpx")),
                      key=lambda p: posixpath.basename(p).lower())

    def save_track(self, name: str, points: list[list[float]]) -> str:
        """Write the planned route as ``tracks/<name>.gpx``: one track, one segment, the points in order."""
        root = _gpx_root()
        meta = ET.SubElement(root, f"{{{GPX_NS}}}metadata")
        ET.SubElement(meta, f"{{{GPX_NS}}}name").text = name
        trk = ET.SubElement(root, f"{{{GPX_NS}}}trk")
        ET.SubElement(trk, f"{{{GPX_NS}}}name").text = name
        seg = ET.SubElement(trk, f"{{{GPX_NS}}}trkseg")
        for lat, lon in points:
            ET.SubElement(seg, f"{{{GPX_NS}}}trkpt", {"lat": repr(lat), "lon": repr(lon)})
        path = f"{TRACKS_DIR}/{name}.gpx"
        self.phone.files.write(path, _gpx_bytes(root), self.phone.clock_ms)
        return path

    # --- search --------------------------------------------------------------------------------------------
    def search_results(self, query: str) -> list[dict[str, Any]]:
        """Places whose name contains the query (the query's ", Liechtenstein" ignored; case and accents folded, as
        OsmAnd's search does: "Schonberg" finds Schönberg), or the typed point."""
        text = query.strip()
        if not text:
            return []
        point = parse_coordinates(text)
        if point is not None:
            return [{"name": format_coordinates(*point), "lat": point[0], "lon": point[1], "kind": "Coordinates"}]
        key = fold(text).removesuffix(f", {fold(COUNTRY)}").strip()
        hits = [{"name": name, "lat": lat, "lon": lon, "kind": kind}
                for name, (lat, lon, kind) in PLACES.items() if key in fold(name)]
        return sorted(hits, key=lambda h: (not fold(h["name"]).startswith(key), h["name"]))

    def _set_query(self, value: str) -> None:
        self.query = value

    def _select(self, hit: dict[str, Any]) -> None:
        self.center = (hit["lat"], hit["lon"])
        self.pop()
        if self.plan is None:
            self.selected = dict(hit)
        self.phone.set_focus(None)

    # --- pages ---------------------------------------------------------------------------------------------
    def _to_screen(self, lat: float, lon: float) -> tuple[float, float] | None:
        """A point as fractions of the map view (the centre at 0.5, 0.5), or None off the map."""
        x = 0.5 + (lon - self.center[1]) / MAP_SPAN_DEG[1]
        y = 0.5 - (lat - self.center[0]) / MAP_SPAN_DEG[0]
        return (x, y) if 0.0 <= x <= 1.0 and 0.0 <= y <= 1.0 else None

    def _map_surface(self) -> View:
        """The map: places as grey dots, favourites yellow, markers orange, a planned route blue, a centre cross."""
        drawing: list[tuple[str, float, tuple[tuple[float, float], ...]]] = []

        def dot(lat: float, lon: float, color: str, size: float) -> None:
            p = self._to_screen(lat, lon)
            if p is not None:
                drawing.append((color, size, ((p[0] - size / 1000, p[1]), (p[0] + size / 1000, p[1]))))

        for lat, lon, _ in PLACES.values():
            dot(lat, lon, "#9e9e9e", 8)
        for f in self.favorites():
            dot(f["lat"], f["lon"], "#eecc22", 14)
        for m in self.markers:
            dot(float(m["marker_lat"]), float(m["marker_lon"]), "#ff6d00", 14)
        route = [p for p in (self._to_screen(lat, lon) for lat, lon in self.plan or []) if p is not None]
        if len(route) >= 2:
            drawing.append(("#1976d2", 4, tuple(route)))
        for lat, lon in self.plan or []:
            dot(lat, lon, "#1976d2", 10)
        if self.plan is not None or self.selected is not None:
            drawing.append(("#d32f2f", 2, ((0.47, 0.5), (0.53, 0.5))))
            drawing.append(("#d32f2f", 2, ((0.5, 0.48), (0.5, 0.52))))
        return View(cls="android.view.SurfaceView", resource_id="MapView", weight=1, background="#f1eee8",
                    focusable=True, drawing=tuple(drawing))

    def build_map(self) -> View:
        top = Row(ImageButton("Search", self._open_search, resource_id="map_search_button", icon="Q"),
                  View(cls="android.view.View", weight=1, height=1),
                  ImageButton("Configure map", lambda: self.toast("Map style: OsmAnd"), resource_id="map_layers_button",
                              icon="L"),
                  resource_id="top_widgets_panel", padding=(8, 8))
        children: list[View | None] = [top]
        active = [m for m in self.markers if m.get("marker_active")]
        if active:
            m = active[0]
            km = distance_km(self.center, (float(m["marker_lat"]), float(m["marker_lon"])))
            children.append(Row(Text(str(m.get("marker_map_object_name") or ""), resource_id="map_marker_address_1",
                                     weight=1, max_lines=1),
                                Text(_distance_text(km), resource_id="map_marker_dist_1"),
                                resource_id="map_markers_top_bar", padding=(16, 8), background="#fff8e1"))
        children.append(self._map_surface())
        if self.plan is not None:
            children.append(self._plan_panel())
        elif self.selected is not None:
            children.append(self._context_menu(self.selected))
        else:
            children.append(Row(
                ImageButton("Back to menu", lambda: self.show_dialog("menu"), resource_id="map_menu_button", icon="="),
                ImageButton("Directions", lambda: self.toast("Set a destination first"),
                            resource_id="map_route_info_button", icon="^"),
                View(cls="android.view.View", weight=1, height=1),
                ImageButton("Zoom in", lambda: None, resource_id="map_zoom_in_button", icon="+"),
                ImageButton("Zoom out", lambda: None, resource_id="map_zoom_out_button", icon="-"),
                resource_id="bottom_controls_container", padding=(8, 8)))
        return Column(*children, cls="android.widget.FrameLayout", resource_id="MapHudLayout", weight=1)

    def _context_menu(self, hit: dict[str, Any]) -> View:
        lat, lon = hit["lat"], hit["lon"]
        subtitle = format_coordinates(lat, lon) if hit["kind"] == "Coordinates" else f"{hit['kind']}, {COUNTRY}"
        favorite = self._is_favorite(lat, lon)
        buttons = Row(
            Button("Edit" if favorite else "Add", lambda: self._open_favorite(hit), resource_id="context_menu_fav_button",
                   background=None, weight=1),
            Button("Marker", lambda: self._add_marker(hit), resource_id="context_menu_marker_button", background=None,
                   weight=1),
            Button("Share", lambda: self.toast("Sharing is not available"), resource_id="context_menu_share_button",
                   background=None, weight=1),
            Button("Directions", lambda: self.toast("Routing data is not available offline"),
                   resource_id="context_menu_route_button", background=None, weight=1),
            resource_id="context_menu_buttons")
        return Column(
            Row(Text(hit["name"], resource_id="context_menu_line1", size=20, weight=1, max_lines=2),
                ImageButton("Close", self._close_menu, resource_id="context_menu_close_btn_view", icon="x")),
            Text(subtitle, resource_id="context_menu_line2", size=14, color="#5f6368"),
            buttons, cls="android.widget.LinearLayout", resource_id="context_menu_main", padding=(16, 8),
            background="#ffffff")

    def _close_menu(self) -> None:
        self.selected = None

    def _open_search(self) -> None:
        self.query = ""
        self.push("search")
        self.focus("searchEditText")

    def build_search(self) -> View:
        hits = self.search_results(self.query)
        rows = [ListItem(h["name"], h["kind"] if h["kind"] == "Coordinates" else
                         f"{h['kind']} \u2022 {_distance_text(distance_km(self.center, (h['lat'], h['lon'])))}",
                         lambda h=h: self._select(h), resource_id="searchListItemLayout", title_id="title",
                         subtitle_id="type_name", icon="P") for h in hits]
        if self.query.strip() and not rows:
            rows = [Text("Nothing found", resource_id="empty_search", padding=(24, 24), color="#5f6368")]
        bar = Row(ImageButton("Back", self.pop, icon="<"),
                  EditText(self.query, self._set_query, hint="Search", key="searchEditText",
                           resource_id="searchEditText", weight=1),
                  resource_id="toolbar", padding=(4, 8))
        return Column(bar, ScrollList(rows, "search:results", resource_id="list"),
                      cls="android.widget.LinearLayout", resource_id="search_container", weight=1)

    # --- favourites ------------------------------------------------------------------------------------------
    def _open_favorite(self, hit: dict[str, Any]) -> None:
        if self._is_favorite(hit["lat"], hit["lon"]):
            self.toast("This place is already in My Favorites")
            return
        self.form = {"name": hit["name"], "description": ""}
        self.push("favorite", lat=hit["lat"], lon=hit["lon"])

    def _set_form(self, key: str, value: str) -> None:
        self.form[key] = value

    def build_favorite(self, lat: float, lon: float) -> View:
        return Column(
            Toolbar("Add favorite", on_back=self.pop, resource_id="toolbar", back_desc="Close"),
            Text("Name", size=12, color="#5f6368", padding=(16, 4)),
            EditText(self.form.get("name", ""), lambda v: self._set_form("name", v), hint="Name",
                     resource_id="name_edit"),
            Text("Description", size=12, color="#5f6368", padding=(16, 4)),
            EditText(self.form.get("description", ""), lambda v: self._set_form("description", v), hint="Description",
                     resource_id="description_edit"),
            ListItem("Favorites", "Group", None, resource_id="group_row", title_id="group_name"),
            Text(format_coordinates(lat, lon), resource_id="coordinates", size=14, color="#5f6368", padding=(16, 8)),
            View(cls="android.view.View", weight=1, height=1),
            Row(Button("Cancel", self.pop, resource_id="dismiss_button", background=None),
                View(cls="android.view.View", weight=1, height=1),
                Button("Save", lambda: self._save_favorite(lat, lon), resource_id="right_bottom_button"),
                resource_id="buttons_container", padding=(16, 8)),
            cls="android.widget.LinearLayout", resource_id="main_view", weight=1)

    def _save_favorite(self, lat: float, lon: float) -> None:
        name = self.form.get("name", "").strip()
        if not name:
            self.toast("Name is empty")
            return
        self.add_favorite(name, lat, lon, self.form.get("description", "").strip())
        self.form = {}
        self.phone.set_focus(None)
        self.pop()
        self.toast(f"Favorite point {name} added")

    def _add_marker(self, hit: dict[str, Any]) -> None:
        self.add_marker(hit["name"], hit["lat"], hit["lon"])
        self.selected = None
        self.toast("Map marker added")

    # --- the main menu and My Places -----------------------------------------------------------------------
    def dialog_menu(self) -> View:
        entries = (("My Places", lambda: self._menu_to("places")), ("Search", self._menu_search),
                   ("Plan a route", self._start_plan), ("Configure map", lambda: self._menu_toast("Map style: OsmAnd")),
                   ("Settings", lambda: self._menu_toast("Settings are not available")))
        items = [ListItem(label, "", cb, resource_id="menu_item", title_id="title", min_height=52)
                 for label, cb in entries]
        return Dialog("OsmAnd", Column(*items, resource_id="drawer_list"))

    def _menu_to(self, page: str) -> None:
        self.close_dialog()
        self.push(page)

    def _menu_search(self) -> None:
        self.close_dialog()
        self._open_search()

    def _menu_toast(self, text: str) -> None:
        self.close_dialog()
        self.toast(text)

    def build_places(self) -> View:
        rows: list[View] = [Text("Favorites", bold=True, padding=(16, 8), resource_id="header")]
        rows += [ListItem(f["name"], format_coordinates(f["lat"], f["lon"]), None, resource_id="favorite_item",
                          title_id="favourite_label", subtitle_id="favourite_distance", icon="*")
                 for f in self.favorites()]
        rows.append(Text("Tracks", bold=True, padding=(16, 8), resource_id="header"))
        rows += [ListItem(posixpath.basename(p)[:-4], "", None, resource_id="track_item", title_id="title", icon="T")
                 for p in self.tracks()]
        rows.append(Text("Markers", bold=True, padding=(16, 8), resource_id="header"))
        rows += [ListItem(str(m.get("marker_map_object_name") or ""),
                          format_coordinates(float(m["marker_lat"]), float(m["marker_lon"])), None,
                          resource_id="marker_item", title_id="title", icon="F") for m in self.markers]
        return Column(Toolbar("My Places", on_back=self.pop, resource_id="toolbar"),
                      ScrollList(rows, "places:list", resource_id="list"),
                      cls="android.widget.LinearLayout", resource_id="places_container", weight=1)

    # --- Plan a route ----------------------------------------------------------------------------------------
    def _start_plan(self) -> None:
        self.close_dialog()
        self.selected = None
        self.plan = []

    def _plan_panel(self) -> View:
        points = self.plan or []
        return Column(
            Row(Text("Plan a route", size=20, bold=True, weight=1, resource_id="plan_route_title"),
                ImageButton("Close", lambda: self.show_dialog("plan_exit"), resource_id="close_button", icon="x")),
            Text(f"{len(points)} point{'s' if len(points) != 1 else ''}", resource_id="measurement_points_text",
                 size=14, color="#5f6368"),
            Text(f"Map centre: {format_coordinates(*self.center)}", resource_id="map_center_text", size=14,
                 color="#5f6368"),
            Row(ImageButton("Undo", self._plan_undo, resource_id="undo_point_button", icon="<", enabled=bool(points)),
                View(cls="android.view.View", weight=1, height=1),
                Button("Add point", self._plan_add, resource_id="add_point_button"),
                Button("Save", self._plan_save, resource_id="save_button", enabled=len(points) >= 2),
                resource_id="measure_mode_controls"),
            cls="android.widget.LinearLayout", resource_id="main_view", padding=(16, 8), background="#ffffff")

    def _plan_add(self) -> None:
        assert self.plan is not None
        self.plan.append([self.center[0], self.center[1]])

    def _plan_undo(self) -> None:
        if self.plan:
            self.plan.pop()

    def _plan_save(self) -> None:
        if not self.plan or len(self.plan) < 2:
            self.toast("Add at least two points")
            return
        self.form = {"name": f"Plan a route {self.phone.now().strftime('%Y-%m-%d_%H-%M')}"}
        self.show_dialog("save_track")

    def dialog_save_track(self) -> View:
        body = Column(Text("File name", size=12, color="#5f6368", padding=(24, 2)),
                      EditText(self.form.get("name", ""), lambda v: self._set_form("name", v), hint="File name",
                               resource_id="name_edit"),
                      Text("Folder: Tracks", size=14, color="#5f6368", padding=(24, 4), resource_id="folder_name"),
                      resource_id="save_track_holder")
        return Dialog("Save as new track", body, [("Cancel", self.close_dialog), ("Save", self._write_track)],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _write_track(self) -> None:
        name = self.form.get("name", "").strip()
        if not name or any(c in name for c in '/\\:*?"<>|'):
            self.toast("Invalid file name")
            return
        if self.phone.files.exists(f"{TRACKS_DIR}/{name}.gpx"):
            self.toast("A track with this name already exists")
            return
        self.save_track(name, list(self.plan or []))
        self.plan = None
        self.form = {}
        self.close_dialog()
        self.phone.set_focus(None)
        self.toast(f"Track {name} saved")

    def dialog_plan_exit(self) -> View:
        return Dialog("Exit without saving?", "The route you planned will be lost.",
                      [("Cancel", self.close_dialog), ("Exit", self._exit_plan)],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _exit_plan(self) -> None:
        self.plan = None
        self.close_dialog()

    def on_back(self) -> bool:
        """Back closes a dialog, then a page; on the map it closes the context menu or asks before leaving a plan."""
        if self.dialog is None and len(self.pages) <= 1:
            if self.plan is not None:
                self.show_dialog("plan_exit")
                return True
            if self.selected is not None:
                self.selected = None
                return True
        return super().on_back()
