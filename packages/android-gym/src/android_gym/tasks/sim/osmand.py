"""OsmAnd: AndroidWorld's three map tasks re-created (a favourite, a map marker, a track through named places).

Set-up, as AndroidWorld's: no favourites (the points of favorites.gpx removed), no markers (the
``map_markers`` table emptied), no tracks (the tracks folder emptied). The checks read what OsmAnd
stores, through the shell: favorites.gpx under the app's files, the ``map_markers`` table of its
markers database, the GPX files of its tracks folder. A location is a place of the Liechtenstein map
("Vaduz, Liechtenstein") or a "lat, lon" pair; a point matches it within 0.001 degrees, as AndroidWorld's
checks match.

The experts search for the place (or the coordinates) and use the context menu's "Add" (then Save) or
"Marker"; for a track, "Plan a route" from the menu, then for each waypoint a search that moves the map
there and "Add point", then Save.
"""

from __future__ import annotations

import random
import unicodedata
import xml.etree.ElementTree as ET
from typing import Any, ClassVar

from android_gym.actions import OpenApp
from android_gym.sim.apps.osmand import (
    COUNTRY,
    FAVORITES_GPX,
    GPX_NS,
    MARKERS_DB,
    OSMAND_PKG,
    PLACES,
    TRACKS_DIR,
    format_coordinates,
    parse_coordinates,
)
from android_gym.tasks.base import ExpertGenerator, Task, TaskError, register_task
from android_gym.tasks.device_state import force_stop, go_home
from android_gym.tasks.expert import ExpertStuck, find, finish, id_is, tap_id, tap_text, type_into
from android_gym.tasks.suites import SUITES_AW

OSMAND_APP = "OsmAnd"
TOLERANCE_DEG = 0.001
_NS = {"gpx": GPX_NS}


def place_name(location: str) -> str:
    """"Vaduz, Liechtenstein" -> "Vaduz" (a coordinates string stays as it is)."""
    return location.removesuffix(f", {COUNTRY}")


def location_point(location: str) -> tuple[float, float] | None:
    """The point a location names: its coordinates, or the map's place of that name."""
    point = parse_coordinates(location)
    if point is not None:
        return point
    place = PLACES.get(place_name(location))
    return None if place is None else place[:2]


def near(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Both coordinates within :data:`TOLERANCE_DEG`."""
    return abs(a[0] - b[0]) < TOLERANCE_DEG and abs(a[1] - b[1]) < TOLERANCE_DEG


def random_location(rng: random.Random) -> str:
    """A place of the map, named ("Schaan, Liechtenstein") or by its coordinates, half the time each."""
    name = rng.choice(sorted(PLACES))
    lat, lon, _ = PLACES[name]
    return f"{name}, {COUNTRY}" if rng.random() < 0.5 else f"{lat}, {lon}"


def _gpx(device: Any, path: str) -> ET.Element | None:
    out = device.shell(f"cat '{path}'")
    if "No such file" in out or not out.strip():
        return None
    try:
        return ET.fromstring(out)
    except ET.ParseError:
        return None


def favorite_points(device: Any) -> list[tuple[str, float, float]]:
    """(name, lat, lon) of each favourite in favorites.gpx."""
    root = _gpx(device, FAVORITES_GPX)
    if root is None:
        return []
    return [((w.findtext("gpx:name", "", _NS) or ""), float(w.get("lat", "nan")), float(w.get("lon", "nan")))
            for w in root.findall("gpx:wpt", _NS)]


def marker_points(device: Any) -> list[tuple[float, float]]:
    """(lat, lon) of each row of the ``map_markers`` table."""
    out = device.shell(f'sqlite3 {MARKERS_DB} "SELECT marker_lat, marker_lon FROM map_markers;"')
    points = []
    for line in out.strip().splitlines():
        try:
            lat, lon = line.split("|")
            points.append((float(lat), float(lon)))
        except ValueError:
            raise TaskError(f"unexpected map_markers row {line!r}") from None
    return points


def track_point_lists(device: Any) -> list[list[tuple[float, float]]]:
    """The track points (in order) of each GPX file in the tracks folder."""
    names = [n for n in device.shell(f"ls -1 {TRACKS_DIR}").splitlines() if n.strip().endswith(".gpx")]
    tracks = []
    for name in names:
        root = _gpx(device, f"{TRACKS_DIR}/{name.strip()}")
        if root is not None:
            tracks.append([(float(p.get("lat", "nan")), float(p.get("lon", "nan")))
                           for p in root.iterfind("gpx:trk/gpx:trkseg/gpx:trkpt", _NS)])
    return tracks


def reset_osmand(device: Any) -> None:
    """OsmAnd stopped, with no favourites, markers or tracks (the folders kept)."""
    go_home(device, OSMAND_PKG)
    device.shell(f"rm -rf {TRACKS_DIR}/*")
    device.shell(f"rm -f {FAVORITES_GPX}")
    out = device.shell(f'sqlite3 {MARKERS_DB} "DELETE FROM map_markers;"')
    if out.strip():
        raise TaskError(f"could not clear OsmAnd's markers: {out.strip()}")


def typeable(text: str) -> str:
    """``text`` without its accents ("Schönberg" -> "Schonberg"): what ``adb shell input text`` can type on a device
    with no broadcast input method (it drops other characters), and what OsmAnd's accent-blind search still finds."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def search_and_select(ui: Any, location: str):
    """Search for ``location`` from the map and tap its result (the map centres on it); returns the ui."""
    ui = yield from tap_text(ui, "Search", scroll=False)
    ui = yield from type_into(ui, typeable(location), resource_id="searchEditText")
    point = parse_coordinates(location)
    label = format_coordinates(*point) if point is not None else place_name(location)
    return (yield from tap_text(ui, label))


class _OsmTask(Task):
    app_names: ClassVar[tuple[str, ...]] = ("osmand",)
    suites = SUITES_AW

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"location": random_location(rng)}

    def initialize(self, device: Any) -> None:
        reset_osmand(device)

    def teardown(self, device: Any) -> None:
        force_stop(device, OSMAND_PKG)

    def target(self) -> tuple[float, float]:
        point = location_point(self.params["location"])
        if point is None:
            raise TaskError(f"{self.params['location']!r} is not a place of the map nor coordinates")
        return point


@register_task
class OsmAndFavorite(_OsmTask):
    """Save a place (by name or coordinates) as a favourite."""

    name = "OsmAndFavorite"
    template = "Add a favorite location marker for {location} in the OsmAnd maps app."
    difficulty = "medium"
    complexity = 1.3

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        location = self.params["location"]
        return float(any(location in name or near((lat, lon), self.target())
                         for name, lat, lon in favorite_points(device)))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(OSMAND_APP)
        ui = yield from search_and_select(ui, self.params["location"])
        ui = yield from tap_id(ui, "context_menu_fav_button", scroll=False)
        ui = yield from tap_text(ui, "Save", scroll=False)
        yield from finish()


@register_task
class OsmAndMarker(_OsmTask):
    """Put a map marker on a place (by name or coordinates)."""

    name = "OsmAndMarker"
    template = "Add a location marker for {location} in the OsmAnd maps app."
    difficulty = "hard"
    complexity = 2.0

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return float(any(near(p, self.target()) for p in marker_points(device)))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(OSMAND_APP)
        ui = yield from search_and_select(ui, self.params["location"])
        ui = yield from tap_text(ui, "Marker", scroll=False)
        yield from finish()


@register_task
class OsmAndTrack(_OsmTask):
    """Save a track through two to four named places, in the order given."""

    name = "OsmAndTrack"
    template = "Save a track with waypoints {waypoints_text} in the OsmAnd maps app in the same order as listed."
    difficulty = "hard"
    complexity = 12.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        waypoints = [f"{n}, {COUNTRY}" for n in rng.sample(sorted(PLACES), rng.randint(2, 4))]
        return {"waypoints": waypoints, "track_name": f"{waypoints[0]} to {waypoints[-1]}"}

    @property
    def goal(self) -> str:
        return self.template.format(waypoints_text=", ".join(self.params["waypoints"]))

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        targets = [location_point(w) for w in self.params["waypoints"]]
        if any(t is None for t in targets):
            raise TaskError(f"a waypoint of {self.params['waypoints']} is not a place of the map")
        for points in track_point_lists(device):
            want = iter(targets)
            current = next(want)
            for p in points:
                if current is not None and near(p, current):
                    current = next(want, None)
            if current is None:
                return 1.0
        return 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(OSMAND_APP)
        ui = yield from tap_text(ui, "Back to menu", scroll=False)
        ui = yield from tap_text(ui, "Plan a route", scroll=False)
        for waypoint in self.params["waypoints"]:
            ui = yield from search_and_select(ui, waypoint)
            ui = yield from tap_text(ui, "Add point", scroll=False)
        ui = yield from tap_id(ui, "save_button", scroll=False)
        ui = yield from tap_id(ui, "android:id/button1", scroll=False)
        if find(ui, id_is("name_edit")) is not None:
            raise ExpertStuck("the track was not saved (its name dialog is still open)")
        yield from finish()


__all__ = ["OsmAndFavorite", "OsmAndMarker", "OsmAndTrack", "location_point", "reset_osmand"]
