"""AndroidLab's 15 MAPS.ME tasks (``map_1`` to ``map_15``) re-created on the simulated MAPS.ME.

The task texts are AndroidLab's, verbatim (:mod:`android_gym.sim.apps.mapsme`). Every task starts from the home
screen with MAPS.ME's data cleared (``pm clear``: no Home, no Work, no route). The user stands at the app's fixed
position (:data:`android_gym.sim.apps.mapsme.MY_LOCATION`).

Checks read the app's stored state: map_11 the saved places (``content query --uri
content://com.mapswithme.maps.pro/saved_places``): Work is OpenAI's office at "18th Street, 3180" and Home is
still unset; map_12-15 the route (``content://com.mapswithme.maps.pro/route``): from "My location" to the named
place, in any mode, with navigation started. Query tasks (map_1-10) compare the answer with what the app's data
gives: the route table for the bus stop pairs, the search's nearest restaurant, hotel and IKEA and the routes to
them; an answer must state the expected time (and distance) and no other, name the expected place, or pick the
faster mode.
"""

from __future__ import annotations

import random
import re
from typing import Any, ClassVar

from android_gym.actions import Finished, OpenApp
from android_gym.sim.apps.mapsme import (
    MODES,
    MY_LOCATION_NAME,
    PLACES,
    fold,
    format_duration,
    format_route_distance,
    route_info,
    search,
)
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import content_query, force_stop, go_home, normalize_answer
from android_gym.tasks.expert import id_is, tap_id, tap_text, tap_where, text_is, type_into
from android_gym.tasks.suites import SUITES_LAB

MAPSME_PACKAGE = "com.mapswithme.maps.pro"
MAPSME_APP = "MAPS.ME"
SAVED_PLACES_URI = "content://com.mapswithme.maps.pro/saved_places"
ROUTE_URI = "content://com.mapswithme.maps.pro/route"
SAVED_FIELDS = ("kind", "name", "address")
ROUTE_FIELDS = ("start", "finish", "mode", "navigating")

STANFORD_OVAL = "Stanford Campus Oval"
OXFORD_UNIVERSITY = "Oxford Street & University Avenue"
COAST_AVENUE = "2700 Coast Avenue"
ROUTE_51 = "Route 51"


# --- device helpers ---------------------------------------------------------------------------------------


def read_saved_places(device: Any) -> dict[str, dict[str, str]]:
    """MAPS.ME's Home and Work, by kind ("home", "work"), as dicts of strings."""
    rows = content_query(device, SAVED_PLACES_URI, SAVED_FIELDS)
    return {str(r["kind"]): {k: (r[k] or "") for k in SAVED_FIELDS} for r in rows}


def read_route(device: Any) -> dict[str, str] | None:
    """MAPS.ME's current route (start, finish, mode, navigating), or None."""
    rows = content_query(device, ROUTE_URI, ROUTE_FIELDS)
    return {k: (rows[0][k] or "") for k in ROUTE_FIELDS} if rows else None


def nearest(query: str) -> str:
    """The first (nearest) search result for ``query``."""
    hits = search(query)
    if not hits:
        raise ValueError(f"MAPS.ME's search finds nothing for {query!r}")
    return hits[0]


def fold_answer(text: str | None) -> str:
    """An answer without accents, normalised ("Teléferic" -> "teleferic")."""
    return normalize_answer(fold(text or ""))


_DURATION = re.compile(r"(?i)\b(?:(\d+)\s*(?:hours?|hrs?|h)\b\s*(?:and\s*)?)?(?:(\d+)\s*(?:minutes?|mins?)\b)?")
_DISTANCE = re.compile(r"(?i)\b(\d+(?:\.\d+)?)\s*(km|kilometers?|kilometres?|m|meters?|metres?)\b")


def durations_in(answer: str | None) -> list[int]:
    """The durations an answer states, in minutes ("12 hr 58 min" gives 778, "9min" gives 9)."""
    return [int(m.group(1) or 0) * 60 + int(m.group(2) or 0) for m in _DURATION.finditer(answer or "")
            if m.group(1) or m.group(2)]


def distances_in(answer: str | None) -> list[float]:
    """The distances an answer states, in km ("7.0 km" gives 7.0, "450 m" gives 0.45)."""
    return [float(value) / (1 if unit.lower().startswith("k") else 1000)
            for value, unit in _DISTANCE.findall(answer or "")]


def place_key(name: str) -> str:
    """The part of a place's name an answer must hold to name it ("The Clement Hotel - All Inclusive" -> "clement
    hotel", "Teléferic Barcelona" -> "teleferic barcelona")."""
    return fold_answer(name.split(" - ")[0]).removeprefix("the ")


# --- tasks -------------------------------------------------------------------------------------------------


class _LabMapsMe(Task):
    """An AndroidLab MAPS.ME task: no parameters, MAPS.ME's data cleared, the home screen."""

    app_names = ("maps.me",)
    suites = SUITES_LAB
    difficulty = "medium"
    complexity = 1.5

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {}

    def initialize(self, device: Any) -> None:
        go_home(device, MAPSME_PACKAGE)
        device.shell(f"pm clear {MAPSME_PACKAGE}")

    def teardown(self, device: Any) -> None:
        force_stop(device, MAPSME_PACKAGE)


def tap_result(ui: Any, name: str):
    """Tap the search result titled ``name`` (not the query field, which may read the same); returns the ui."""
    is_title, is_name = id_is("title"), text_is(name)
    return (yield from tap_where(ui, lambda e: is_title(e) and is_name(e)))


def open_place(ui: Any, query: str, name: str):
    """Open MAPS.ME, search ``query`` and open the result ``name``'s place page; returns the ui."""
    ui = yield OpenApp(MAPSME_APP)
    ui = yield from tap_id(ui, "search_frame", scroll=False)
    ui = yield from type_into(ui, query, resource_id="query")
    return (yield from tap_result(ui, name))


def plan_route(ui: Any, start: str, finish: str):
    """Open MAPS.ME's route planning and choose ``start`` and ``finish`` through its search; returns the ui."""
    ui = yield OpenApp(MAPSME_APP)
    ui = yield from tap_id(ui, "routing", scroll=False)
    for point, name in (("start_point", start), ("finish_point", finish)):
        ui = yield from tap_id(ui, point, scroll=False)
        ui = yield from type_into(ui, name, resource_id="query")
        ui = yield from tap_result(ui, name)
    return ui


def choose_mode(ui: Any, mode: str):
    """Tap a travel mode's button on the route planning screen; returns the ui."""
    return (yield from tap_text(ui, MODES[mode], scroll=False))


# --- questions ---------------------------------------------------------------------------------------------


class _Question(_LabMapsMe):
    """A question the app's data answers; the expert shows where and answers :meth:`answer`."""

    answer_task = True

    def answer(self) -> str:
        """The right answer, as the app shows it."""
        raise NotImplementedError

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if answer and self.answered(answer) else 0.0

    def answered(self, answer: str) -> bool:
        """Whether ``answer`` is right."""
        raise NotImplementedError


class _RouteQuestion(_Question):
    """Time (and distance) of a route between two bus stops in one mode."""

    complexity = 2.0
    START: ClassVar[str] = ""
    FINISH: ClassVar[str] = ""
    MODE: ClassVar[str] = ""
    WITH_DISTANCE: ClassVar[bool] = True

    def route(self) -> Any:
        """The route the question is about."""
        info = route_info(self.START, self.FINISH, self.MODE)
        if info is None:
            raise ValueError(f"no {self.MODE} route from {self.START} to {self.FINISH}")
        return info

    def answer(self) -> str:
        info = self.route()
        time = format_duration(info.minutes)
        return f"{format_route_distance(info.metres)}, {time}" if self.WITH_DISTANCE else time

    def answered(self, answer: str) -> bool:
        info = self.route()
        if set(durations_in(answer)) != {info.minutes}:
            return False
        if not self.WITH_DISTANCE:
            return True
        given = distances_in(answer)
        (shown,) = distances_in(format_route_distance(info.metres))
        return bool(given) and all(abs(km - shown) < 0.051 for km in given)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from plan_route(ui, self.START, self.FINISH)
        if self.MODE != "vehicle":
            yield from choose_mode(ui, self.MODE)
        yield Finished(self.answer())


@register_task
class MapsMeLab1(_RouteQuestion):
    """map_1: walking from the Stanford Campus Oval stop to Oxford Street & University Avenue: 73 km, 12 hr 58 min."""

    name = "map_1"
    template = ("Check the walking distance and time between Bus Stop of Stanford Campus Oval and Bus Stop of Oxford "
                "Street & University Avenue")
    START, FINISH, MODE = STANFORD_OVAL, OXFORD_UNIVERSITY, "pedestrian"


@register_task
class MapsMeLab2(_RouteQuestion):
    """map_2: driving from the 2700 Coast Avenue stop to the Route 51 stop: 7.0 km, 8 min."""

    name = "map_2"
    template = "Check the driving distance and time between Bus stop of 2700 Coast Avenue and Bus Stop Route 51"
    START, FINISH, MODE = COAST_AVENUE, ROUTE_51, "vehicle"


@register_task
class MapsMeLab3(_RouteQuestion):
    """map_3: riding (a bike) from the Stanford Campus Oval stop to Oxford Street & University Avenue: 4 hr 7 min."""

    name = "map_3"
    template = ("Check the riding time between Bus Stop of Stanford Campus Oval and Bus Stop of Oxford Street & "
                "University Avenue")
    START, FINISH, MODE = STANFORD_OVAL, OXFORD_UNIVERSITY, "bicycle"
    WITH_DISTANCE = False


@register_task
class MapsMeLab4(_Question):
    """map_4: public transport from 2700 Coast Avenue to Route 51 takes subway 824, then subway EB."""

    name = "map_4"
    template = "Check the route by public transportation between Bus stop of 2700 Coast Avenue and Bus Stop Route 51"
    complexity = 2.0

    def legs(self) -> tuple[Any, ...]:
        """The route's lines."""
        info = route_info(COAST_AVENUE, ROUTE_51, "transit")
        return info.legs if info else ()

    def answer(self) -> str:
        return " and ".join(f"{leg.kind.lower()} {leg.line}" for leg in self.legs())

    def answered(self, answer: str) -> bool:
        words = fold_answer(answer).split()
        return bool(self.legs()) and all(leg.line.lower() in words for leg in self.legs())

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from plan_route(ui, COAST_AVENUE, ROUTE_51)
        yield from choose_mode(ui, "transit")
        yield Finished(self.answer())


_TRANSIT_WORDS = ("public transport", "transit", "subway", "metro")
_RIDING_WORDS = ("riding", "ride", "bike", "bicycle", "cycling")


class _Compare(_Question):
    """Which of riding and public transport is faster between two bus stops."""

    complexity = 2.0
    START: ClassVar[str] = ""
    FINISH: ClassVar[str] = ""

    def faster(self) -> str:
        """"transit" or "bicycle", whichever route is shorter in time."""
        ride = route_info(self.START, self.FINISH, "bicycle")
        transit = route_info(self.START, self.FINISH, "transit")
        if ride is None or transit is None:
            raise ValueError(f"no riding or transit route from {self.START} to {self.FINISH}")
        return "transit" if transit.minutes < ride.minutes else "bicycle"

    def answer(self) -> str:
        return "public transportation" if self.faster() == "transit" else "riding"

    def answered(self, answer: str) -> bool:
        text = f" {fold_answer(answer)} "
        first = {}
        for mode, words in (("transit", _TRANSIT_WORDS), ("bicycle", _RIDING_WORDS)):
            spots = [text.find(f" {w}") for w in words if f" {w}" in text]
            if spots:
                first[mode] = min(spots)
        if not first:
            return False
        return min(first, key=lambda m: first[m]) == self.faster()  # the mode named first is the one picked

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from plan_route(ui, self.START, self.FINISH)
        ui = yield from choose_mode(ui, "bicycle")
        yield from choose_mode(ui, "transit")
        yield Finished(self.answer())


@register_task
class MapsMeLab5(_Compare):
    """map_5: between 2700 Coast Avenue and Route 51, public transport (21 min) beats riding (27 min)."""

    name = "map_5"
    template = ("Compare which takes less time to travel between Bus stop of 2700 Coast Avenue and Bus Stop Route 51, "
                "by riding or by public transportation?")
    START, FINISH = COAST_AVENUE, ROUTE_51


@register_task
class MapsMeLab6(_Compare):
    """map_6: between the Stanford Campus Oval and Oxford Street & University Avenue, public transport beats
    riding."""

    name = "map_6"
    template = ("Compare which takes less time to travel between Bus Stop of Stanford Campus Oval and Bus Stop of "
                "Oxford Street & University Avenue, by riding or by public transportation?")
    START, FINISH = STANFORD_OVAL, OXFORD_UNIVERSITY


class _Nearest(_Question):
    """The nearest place of a kind (the search's first result), and maybe the time to get there."""

    QUERY: ClassVar[str] = ""
    MODE: ClassVar[str] = ""
    """The mode whose time is asked for; "" when only the place is."""
    NAME_ASKED: ClassVar[bool] = True

    def place(self) -> str:
        """The nearest place's name."""
        return nearest(self.QUERY)

    def minutes(self) -> int:
        """The time to the place in :attr:`MODE`."""
        info = route_info(MY_LOCATION_NAME, self.place(), self.MODE)
        if info is None:
            raise ValueError(f"no {self.MODE} route to {self.place()}")
        return info.minutes

    def answer(self) -> str:
        parts = [self.place()] if self.NAME_ASKED else []
        if self.MODE:
            parts.append(format_duration(self.minutes()))
        return ", ".join(parts)

    def answered(self, answer: str) -> bool:
        if self.NAME_ASKED:
            text = f" {fold_answer(answer)} "
            others = [n for n in PLACES if PLACES[n].kind == PLACES[self.place()].kind and n != self.place()]
            if f" {place_key(self.place())} " not in text or any(f" {place_key(n)} " in text for n in others):
                return False
        return not self.MODE or set(durations_in(answer)) == {self.minutes()}

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_place(ui, self.QUERY, self.place())
        if self.MODE:
            ui = yield from tap_text(ui, "Route to", scroll=False)
            if self.MODE != "vehicle":
                yield from choose_mode(ui, self.MODE)
        yield Finished(self.answer())


@register_task
class MapsMeLab7(_Nearest):
    """map_7: the nearest restaurant is Teléferic Barcelona."""

    name = "map_7"
    template = "Check the nearest restaurant and tell me what is it"
    QUERY = "restaurant"


@register_task
class MapsMeLab8(_Nearest):
    """map_8: the nearest restaurant, Teléferic Barcelona, is a 3 min walk."""

    name = "map_8"
    template = "Check the nearest restaurant, and tell me the time it will take to walk to the restaurant."
    QUERY = "restaurant"
    MODE = "pedestrian"


@register_task
class MapsMeLab9(_Nearest):
    """map_9: the nearest hotel is The Clement Hotel - All Inclusive."""

    name = "map_9"
    template = "Check the nearest hotel, tell me what is it"
    QUERY = "hotel"


@register_task
class MapsMeLab10(_Nearest):
    """map_10: the nearest IKEA is a 9 min drive."""

    name = "map_10"
    template = "Check the nearest IKEA, and tell me how long it will take to drive to the IKEA"
    QUERY = "IKEA"
    MODE = "vehicle"
    NAME_ASKED = False


# --- operations ---------------------------------------------------------------------------------------------


@register_task
class MapsMeLab11(_LabMapsMe):
    """map_11: Work becomes OpenAI's office (18th Street, 3180); Home stays unset."""

    name = "map_11"
    template = "Add the address of openai to my Work place"

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        saved = read_saved_places(device)
        work = saved.get("work")
        ok = work is not None and work["name"] == "OpenAI" and work["address"] == PLACES["OpenAI"].address
        return 1.0 if ok and "home" not in saved else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_place(ui, "OpenAI", "OpenAI")
        ui = yield from tap_text(ui, "Add to Work")
        ui = yield from tap_text(ui, "Navigate up", scroll=False)
        yield from tap_text(ui, "My places", scroll=False)
        yield Finished()


class _Navigate(_LabMapsMe):
    """Navigate from the user's position to :attr:`DESTINATION` (route planned and started, any mode)."""

    DESTINATION: ClassVar[str] = ""
    QUERY: ClassVar[str] = ""

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        route = read_route(device)
        ok = (route is not None and route["start"] == MY_LOCATION_NAME and route["finish"] == self.DESTINATION
              and route["mode"] in MODES and route["navigating"] == "1")
        return 1.0 if ok else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_place(ui, self.QUERY or self.DESTINATION, self.DESTINATION)
        ui = yield from tap_text(ui, "Route to", scroll=False)
        yield from tap_text(ui, "Start", scroll=False)
        yield Finished()


@register_task
class MapsMeLab12(_Navigate):
    """map_12: navigate from "My location" to Stanford University."""

    name = "map_12"
    template = "Navigate from my location to Stanford University"
    DESTINATION = "Stanford University"


@register_task
class MapsMeLab13(_Navigate):
    """map_13: navigate from "My location" to University South (a Palo Alto neighbourhood)."""

    name = "map_13"
    template = "Navigate from my location to University South"
    DESTINATION = "University South"


@register_task
class MapsMeLab14(_Navigate):
    """map_14: navigate from "My location" to OpenAI."""

    name = "map_14"
    template = "Navigate from my location to OpenAI"
    DESTINATION = "OpenAI"


@register_task
class MapsMeLab15(_Navigate):
    """map_15: navigate from "My location" to the University of California, Berkeley."""

    name = "map_15"
    template = "Navigate from my location to University of California, Berkeley"
    DESTINATION = "University of California, Berkeley"
