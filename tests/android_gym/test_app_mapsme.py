"""The simulated MAPS.ME (AndroidLab's map app) and AndroidLab's 15 map tasks on it: search, the place page, route
planning and navigation, "My places" as AndroidLab's judges read them, the stores' bad input, the experts on three
seeds and the checks' bad paths."""

from __future__ import annotations

import pytest

from android_gym.sim import SimPhone
from android_gym.sim.apps.mapsme import (
    MY_LOCATION,
    MY_LOCATION_NAME,
    PLACES,
    distance_km,
    fold,
    format_distance,
    format_duration,
    format_route_distance,
    route_info,
    search,
)
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import get_task_class
from android_gym.tasks.device_state import parse_rows
from android_gym.tasks.runner import run_expert
from android_gym.tasks.sim.mapsme_androidlab import distances_in, durations_in, read_route, read_saved_places

from .sim_ui import tap_on, texts, ui_of

PKG = "com.mapswithme.maps.pro"
SAVED = "content://com.mapswithme.maps.pro/saved_places"
ROUTE = "content://com.mapswithme.maps.pro/route"
NAMES = [f"map_{n}" for n in range(1, 16)]


def rows(phone: SimPhone, uri: str, cols: list[str]) -> list[dict]:
    return parse_rows(phone.shell(f"content query --uri {uri} --projection {':'.join(cols)}"), cols)


def search_and_open(phone: SimPhone, query: str, name: str) -> None:
    phone.launch(PKG)
    tap_on(phone, rid="search_frame")
    phone.type_text(query)
    tap_on(phone, text=name, rid="title")


def siblings_of(phone: SimPhone, text: str) -> list[str]:
    """The texts that share the row of the element showing ``text`` (AndroidLab's judges read a title's siblings)."""
    ui = ui_of(phone)
    title = next(e for e in ui.elements if e.text == text)
    row = next(e for e in ui.elements if e.clickable and e.bounds[1] <= title.center[1] <= e.bounds[3]
               and e.bounds[0] <= title.center[0] <= e.bounds[2])
    return [e.text for e in ui.elements if e.text and row.bounds[1] <= e.center[1] <= row.bounds[3]]


@pytest.mark.parametrize("minutes,shown", [(8, "8 min"), (247, "4 hr 7 min"), (778, "12 hr 58 min"), (120, "2 hr")])
def test_durations_read_as_the_judges_answers(minutes, shown):
    assert format_duration(minutes) == shown and durations_in(shown) == [minutes]


def test_distances_show_one_decimal_below_10_km_and_whole_km_above():
    assert format_route_distance(7_000) == "7.0 km" and format_route_distance(73_000) == "73 km"
    assert format_route_distance(450) == "450 m" and format_distance(0.227) == "227 m"
    assert format_distance(distance_km(MY_LOCATION, (PLACES["OpenAI"].lat, PLACES["OpenAI"].lon))) == "50.6 km"
    assert distances_in("7.0 km, 8 min") == [7.0] and distances_in("450 m") == [0.45]


def test_the_data_gives_the_answers_androidlab_expects():
    oval, oxford = "Stanford Campus Oval", "Oxford Street & University Avenue"
    walk = route_info(oval, oxford, "pedestrian")
    assert (format_route_distance(walk.metres), format_duration(walk.minutes)) == ("73 km", "12 hr 58 min")
    assert format_duration(route_info(oxford, oval, "bicycle").minutes) == "4 hr 7 min"  # either way
    drive = route_info("2700 Coast Avenue", "Route 51", "vehicle")
    assert (format_route_distance(drive.metres), format_duration(drive.minutes)) == ("7.0 km", "8 min")
    assert [leg.line for leg in route_info("2700 Coast Avenue", "Route 51", "transit").legs] == ["824", "EB"]
    for a, b in ((oval, oxford), ("2700 Coast Avenue", "Route 51")):
        assert route_info(a, b, "transit").minutes < route_info(a, b, "bicycle").minutes
    assert search("restaurant")[0] == "Teléferic Barcelona" and search("hotel")[0] == "The Clement Hotel - All Inclusive"
    assert route_info(MY_LOCATION_NAME, "Teléferic Barcelona", "pedestrian").minutes == 3
    assert search("IKEA")[0] == "IKEA" and route_info(MY_LOCATION_NAME, "IKEA", "vehicle").minutes == 9
    assert route_info(oval, oval, "vehicle") is None and route_info(MY_LOCATION_NAME, "IKEA", "transit") is None


def test_search_ignores_accents_and_case_and_lists_nearest_first():
    assert fold("Teléferic") == "teleferic" and search("TELEFERIC") == ["Teléferic Barcelona"]
    assert search("") == [] and search("no such place") == []
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, rid="search_frame")
    phone.type_text("restaurant")
    shown = texts(phone)
    assert shown.index("Teléferic Barcelona") < shown.index("Cascal") and "227 m" in shown
    phone.type_text("zzz")
    assert "No results found" in texts(phone)


def test_add_to_work_and_my_places_lists_what_the_judge_reads():
    phone = SimPhone()
    search_and_open(phone, "openai", "OpenAI")
    assert {"OpenAI", "Office", "18th Street, 3180", "50.6 km"} <= set(texts(phone))
    tap_on(phone, text="Add to Work")
    phone.back()
    tap_on(phone, text="My places")
    shown = texts(phone)
    assert "My places" in shown
    assert siblings_of(phone, "Work") == ["Work", "18th Street, 3180 • 50.6 km"]
    assert siblings_of(phone, "Home") == ["Home", "Add address"]
    assert rows(phone, SAVED, ["kind", "name", "address"]) == [
        {"kind": "work", "name": "OpenAI", "address": "18th Street, 3180"}]
    tap_on(phone, text="Home")  # an unset row opens the search, and a result becomes Home
    phone.type_text("stanford university")
    tap_on(phone, text="Stanford University", rid="title")
    assert siblings_of(phone, "Home")[1].startswith("450 Jane Stanford Way, Stanford • ")
    phone.shell(f"pm clear {PKG}")
    assert rows(phone, SAVED, ["kind"]) == []


def test_route_planning_modes_transit_lines_and_navigation():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="Route")
    assert "My location" in texts(phone) and "Choose a start point and a destination" in texts(phone)
    tap_on(phone, text="Start")  # disabled without a destination
    assert read_route_rows(phone)[0]["navigating"] == "0"
    tap_on(phone, rid="start_point")
    phone.type_text("2700 coast")
    tap_on(phone, text="2700 Coast Avenue", rid="title")
    tap_on(phone, rid="finish_point")
    phone.type_text("route 51")
    tap_on(phone, text="Route 51", rid="title")
    assert {"8 min", "7.0 km"} <= set(texts(phone))
    tap_on(phone, text="Transit")
    legs = [(e.content_desc, e.text) for e in ui_of(phone).elements if e.resource_id.endswith(":id/line_number")]
    assert legs == [("Subway", "824"), ("Subway", "EB")] and "21 min" in texts(phone)
    tap_on(phone, text="Swap start and destination")
    assert read_route_rows(phone)[0]["start"] == "Route 51"
    tap_on(phone, rid="start_point")
    tap_on(phone, text=MY_LOCATION_NAME, rid="title")
    tap_on(phone, text="Transit")
    assert "Public transport is not available for this route" in texts(phone)
    tap_on(phone, text="Walking")
    tap_on(phone, text="Start")
    assert read_route_rows(phone) == [{"start": "My location", "finish": "2700 Coast Avenue", "mode": "pedestrian",
                                       "navigating": "1"}]
    assert "2700 Coast Avenue" in texts(phone) and "Stop" in texts(phone)
    tap_on(phone, text="Stop")
    assert read_route_rows(phone) == [] and "Route" in texts(phone)


def read_route_rows(phone: SimPhone) -> list[dict]:
    return rows(phone, ROUTE, ["start", "finish", "mode", "navigating"])


def test_stores_reject_what_the_app_cannot_hold():
    phone = SimPhone()
    assert "known place" in phone.shell(f"content insert --uri {SAVED} --bind kind:s:work --bind name:s:Nowhere")
    assert "home or work" in phone.shell(f"content insert --uri {SAVED} --bind kind:s:school --bind name:s:OpenAI")
    assert "takes kind and name" in phone.shell(f"content insert --uri {SAVED} --bind kind:s:work")
    assert "mode is one of" in phone.shell(f"content insert --uri {ROUTE} --bind start:s:OpenAI "
                                           "--bind finish:s:IKEA --bind mode:s:plane")
    assert "known place" in phone.shell(f"content insert --uri {ROUTE} --bind start:s:Mars --bind finish:s:IKEA "
                                        "--bind mode:s:vehicle")
    assert "navigating is 0 or 1" in phone.shell(f"content insert --uri {ROUTE} --bind start:s:OpenAI "
                                                 "--bind finish:s:IKEA --bind mode:s:vehicle --bind navigating:s:2")
    assert "unknown MAPS.ME uri" in phone.shell("content query --uri content://com.mapswithme.maps.pro/bookmarks")
    assert rows(phone, SAVED, ["kind"]) == [] and read_route_rows(phone) == []
    assert phone.shell(f"content insert --uri {SAVED} --bind kind:s:home --bind name:s:IKEA").strip() == ""
    assert rows(phone, SAVED, ["kind", "name"]) == [{"kind": "home", "name": "IKEA"}]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_every_map_task(name, seed):
    task = get_task_class(name)(seed=seed)
    device = SimDevice()
    task.initialize(device)
    assert task.is_successful(device, "") == 0.0
    assert run_expert(task, device).success == 1.0


def test_navigation_screens_show_my_location_the_destination_and_start():
    for name, destination in (("map_12", "Stanford University"), ("map_13", "University South"),
                              ("map_14", "OpenAI"), ("map_15", "University of California, Berkeley")):
        device = SimDevice()
        get_task_class(name)(seed=0).initialize(device)
        phone = device.phone
        search_and_open(phone, destination, destination)
        tap_on(phone, text="Route to")
        assert {MY_LOCATION_NAME, destination, "Start"} <= set(texts(phone)), name


@pytest.mark.parametrize("name,right,wrong", [
    ("map_1", ["73 km, 12 hr 58 min", "It is 73 km and takes 12 hours 58 minutes"],
     ["73 km", "12 hr 58 min", "66 km, 58 min", "73 km, 12 hr 58 min or 4 hr 7 min"]),
    ("map_2", ["7.0 km, 8 min", "7 km and 8 minutes"], ["7.4 km, 27 min", "8 min"]),
    ("map_3", ["4 hr 7 min", "about 4 hours 7 minutes"], ["12 hr 58 min", "4 hr"]),
    ("map_4", ["subway 824 and subway EB", "Take 824, then EB"], ["subway 824", "bus 22"]),
    ("map_5", ["public transportation", "Public transport is faster than riding"],
     ["riding", "Riding takes less time than public transportation", "both"]),
    ("map_6", ["public transportation"], ["bike"]),
    ("map_7", ["Teléferic Barcelona", "the nearest is Teleferic Barcelona"], ["Cascal", "Teleferic Barcelona or Cascal"]),
    ("map_8", ["Teléferic Barcelona, about 3min"], ["Teléferic Barcelona", "Teléferic Barcelona, 5 min", "3 min"]),
    ("map_9", ["The Clement Hotel - All Inclusive", "Clement Hotel"], ["Hotel Avante", "a hotel"]),
    ("map_10", ["9min", "It takes 9 minutes by car"], ["10 min", "IKEA", "9 min or 1 hr"]),
])
def test_questions_want_the_datas_answer(name, right, wrong):
    task = get_task_class(name)(seed=0)
    device = SimDevice()
    task.initialize(device)
    for answer in right:
        assert task.is_successful(device, answer) == 1.0, answer
    for answer in [*wrong, None]:
        assert task.is_successful(device, answer) == 0.0, answer


def test_work_check_wants_openai_as_work_and_home_unset():
    device = SimDevice()
    task = get_task_class("map_11")(seed=0)
    task.initialize(device)
    phone = device.phone
    phone.shell(f"content insert --uri {SAVED} --bind kind:s:home --bind name:s:OpenAI")  # Home, not Work
    assert task.is_successful(device) == 0.0
    task.initialize(device)
    phone.shell(f"content insert --uri {SAVED} --bind kind:s:work --bind name:s:IKEA")
    assert task.is_successful(device) == 0.0
    phone.shell(f"content insert --uri {SAVED} --bind kind:s:work --bind name:s:OpenAI")
    assert task.is_successful(device) == 1.0 and read_saved_places(device)["work"]["address"] == "18th Street, 3180"
    phone.shell(f"content insert --uri {SAVED} --bind kind:s:home --bind name:s:OpenAI")  # and Home changed too
    assert task.is_successful(device) == 0.0


def test_navigation_check_wants_the_route_from_my_location_started():
    device = SimDevice()
    task = get_task_class("map_14")(seed=0)  # OpenAI
    task.initialize(device)
    phone = device.phone

    def route(start: str, finish: str, navigating: str) -> float:
        phone.shell(f"content insert --uri {ROUTE} --bind start:s:'{start}' --bind finish:s:{finish} "
                    f"--bind mode:s:vehicle --bind navigating:s:{navigating}")
        return task.is_successful(device)

    assert route("My location", "OpenAI", "0") == 0.0  # planned, not started
    assert route("IKEA", "OpenAI", "1") == 0.0  # not from my location
    assert route("My location", "IKEA", "1") == 0.0  # elsewhere
    assert route("My location", "OpenAI", "1") == 1.0
    assert read_route(device)["finish"] == "OpenAI"
    phone.shell(f"pm clear {PKG}")
    assert task.is_successful(device) == 0.0
