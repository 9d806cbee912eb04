"""The simulated OsmAnd and its AndroidWorld tasks: search by name or coordinates, favourites in favorites.gpx, map
markers in map_markers_db, planned routes saved as GPX tracks; AndroidWorld's own set-up and checks of OsmAndFavorite,
OsmAndMarker and OsmAndTrack; the experts and random agents."""

from __future__ import annotations

import sqlite3
import xml.etree.ElementTree as ET

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.apps.osmand import FAVORITES_GPX, GPX_NS, MARKERS_DB, OSMAND_PKG, PLACES, TRACKS_DIR
from android_gym.sim.device import SimDevice
from android_gym.suites import android_world_available
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.sim.osmand import favorite_points, marker_points, track_point_lists

from .sim_ui import tap_on, texts
from .task_checks import (
    android_world_instance,
    check_android_world_expert_solves,
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

NAMES = ["OsmAndFavorite", "OsmAndMarker", "OsmAndTrack"]
needs_android_world = pytest.mark.skipif(
    not android_world_available(),
    reason="the android_world package is not installed (tools/setup_env.sh installs it from ../shared/vendor)")


def search(phone: SimPhone, query: str, pick: str) -> None:
    tap_on(phone, text="Search")
    phone.type_text(query)
    tap_on(phone, text=pick)


def test_a_searched_place_becomes_a_favourite_in_favorites_gpx_and_a_marker_in_the_database():
    phone = SimPhone()
    phone.launch(OSMAND_PKG)
    assert phone.current_activity() == f"{OSMAND_PKG}/net.osmand.plus.activities.MapActivity"
    tap_on(phone, text="Search")
    phone.type_text("plank")
    shown = texts(phone)
    assert shown.index("Planken") < shown.index("Oberplanken")  # names starting with the query first
    tap_on(phone, text="Planken")
    assert "Village, Liechtenstein" in texts(phone)
    tap_on(phone, text="Add")
    assert "Add favorite" in texts(phone)
    tap_on(phone, text="Save")
    root = ET.fromstring(phone.files.read(FAVORITES_GPX))
    [wpt] = root.findall(f"{{{GPX_NS}}}wpt")
    assert wpt.findtext(f"{{{GPX_NS}}}name") == "Planken"
    assert (float(wpt.get("lat")), float(wpt.get("lon"))) == PLACES["Planken"][:2]
    search(phone, "47.2, 9.55", "47.20000, 9.55000")  # a typed point
    tap_on(phone, text="Marker")
    assert "47.20000, 9.55000" in texts(phone)  # the markers bar names the active marker
    assert phone.files.read(MARKERS_DB).startswith(b"SQLite format 3")  # built from the app's markers
    assert marker_points(SimDevice(phone)) == [(47.2, 9.55)]
    tap_on(phone, text="Back to menu")
    tap_on(phone, text="My Places")
    shown = texts(phone)
    assert "Planken" in shown and "47.20000, 9.55000" in shown


def test_plan_a_route_saves_a_gpx_track_through_the_points_in_order():
    phone = SimPhone()
    phone.launch(OSMAND_PKG)
    tap_on(phone, text="Back to menu")
    tap_on(phone, text="Plan a route")
    for name in ("Vaduz", "Schaan", "Eschen"):
        search(phone, name, name)
        tap_on(phone, text="Add point")
    assert "3 points" in texts(phone)
    tap_on(phone, text="Undo")
    search(phone, "Mauren", "Mauren")
    tap_on(phone, text="Add point")
    tap_on(phone, rid="save_button")
    tap_on(phone, rid="button1")
    [track] = phone.files.walk_files(TRACKS_DIR)
    points = [(float(p.get("lat")), float(p.get("lon")))
              for p in ET.fromstring(phone.files.read(track)).iter(f"{{{GPX_NS}}}trkpt")]
    assert points == [PLACES[n][:2] for n in ("Vaduz", "Schaan", "Mauren")]
    assert track_point_lists(SimDevice(phone)) == [points]
    phone.shell(f"pm clear {OSMAND_PKG}")
    assert phone.files.walk_files(TRACKS_DIR) == [] and phone.files.is_dir(TRACKS_DIR)


def test_the_markers_database_written_from_outside_is_what_the_app_shows(tmp_path):
    device = SimDevice()
    device.shell(f'sqlite3 {MARKERS_DB} "INSERT INTO map_markers (marker_id, marker_lat, marker_lon, marker_active, '
                 "marker_map_object_name) VALUES ('m1', 47.1, 9.5, 1, 'Somewhere');\"")
    device.phone.launch(OSMAND_PKG)
    assert "Somewhere" in texts(device.phone)
    local = tmp_path / "m.db"
    local.write_bytes(device.phone.files.read(MARKERS_DB))
    with sqlite3.connect(local) as conn:
        assert conn.execute("SELECT marker_lat, marker_lon FROM map_markers").fetchall() == [(47.1, 9.5)]


# --- AndroidWorld's own code on the app ------------------------------------------------------------------------


@needs_android_world
def test_androidworlds_checks_read_the_files_and_table_osmand_writes():
    device = SimDevice()
    app = device.phone.apps[OSMAND_PKG]
    app.add_favorite("old", 47.0, 9.0)
    favorite = android_world_instance("OsmAndFavorite", 0, device).task
    assert favorite_points(device) == []  # AndroidWorld's clean-up removed the points from the file
    assert favorite.is_successful(device) == 0.0
    app.add_favorite("elsewhere", 47.3, 9.6)
    assert favorite.is_successful(device) == 0.0
    name = favorite.params["location"].split(",")[0]
    app.add_favorite(f"{favorite.params['location']}", *PLACES[name][:2])
    assert favorite.is_successful(device) == 1.0
    favorite.teardown(device)
    assert app.favorites() == []

    marker = android_world_instance("OsmAndMarker", 1, device).task
    assert marker.is_successful(device) == 0.0
    app.add_marker("x", 47.0688832 + 0.01, 9.5061564)
    assert marker.is_successful(device) == 0.0

    track = android_world_instance("OsmAndTrack", 0, device).task
    waypoints = [PLACES[w.split(",")[0]][:2] for w in track.params["waypoints"]]
    app.save_track("reversed", [list(p) for p in reversed(waypoints)])
    assert track.is_successful(device) == 0.0
    app.save_track("in order", [list(p) for p in waypoints])
    assert track.is_successful(device) == 1.0
    track.teardown(device)
    assert app.tracks() == []


@needs_android_world
@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_androidworlds_instances_on_three_seeds(name):
    check_android_world_expert_solves(name)


# --- the re-creations ------------------------------------------------------------------------------------------


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, ["OsmAndFavorite", "OsmAndMarker"])
    cls = TASK_REGISTRY["OsmAndTrack"]
    assert cls(seed=0).goal.startswith("Save a track with waypoints ") and cls.difficulty == "hard"


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_five_seeds(name):
    check_expert_solves(name)


def test_initial_state_is_not_a_success_and_initialize_is_repeatable():
    def state(device: SimDevice) -> tuple:
        return favorite_points(device), marker_points(device), track_point_lists(device)

    def disturb(device: SimDevice) -> None:
        launch(OSMAND_PKG)(device)
        app = device.phone.apps[OSMAND_PKG]
        app.add_favorite("x", 47.1, 9.5)
        app.add_marker("x", 47.1, 9.5)
        app.save_track("x", [[47.1, 9.5], [47.2, 9.5]])

    for name in NAMES:
        check_start_state(TASK_REGISTRY[name](seed=3), state, disturb)


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=4)
