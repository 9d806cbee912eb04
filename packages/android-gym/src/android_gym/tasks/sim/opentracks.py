"""OpenTracks questions: AndroidWorld's six SportsTracker information-retrieval tasks re-created.

Set-up writes the app's own database through the shell (``sqlite3
/data/data/de.dennisguse.opentracks/databases/database.db``, the ``tracks`` table AndroidWorld fills),
with the phone's date frozen at Sunday, October 15 2023 (so "this week" is Monday October 9 to
Sunday October 15). Every instance holds one or two target activities and about twenty others
from the two weeks before that never meet the question's condition, as AndroidWorld builds them.
Answers are scored AndroidWorld's way: categories as a comma-separated list naming each expected
one once, minutes and counts as integers, distances in metres within 10 m.

The experts read the track list as a person does: open OpenTracks and scroll the list (newest
first) until past the dates asked about, reading each row's category, start date, total time and
distance (miles, converted to metres), then answer.
"""

from __future__ import annotations

import datetime as dt
import random
import re
from collections.abc import Callable
from typing import Any, ClassVar

from android_gym.actions import Finished, OpenApp, Scroll
from android_gym.tasks.base import ExpertGenerator, Task, TaskError, register_task
from android_gym.tasks.device_state import answers_match, go_home, to_ms
from android_gym.tasks.expert import ExpertStuck, find, find_all, id_is, rows_in_view, within
from android_gym.tasks.sim.calendar import DEVICE_NOW
from android_gym.tasks.suites import SUITES_AW

OPENTRACKS_PACKAGE = "de.dennisguse.opentracks"
OPENTRACKS_APP = "OpenTracks"
OPENTRACKS_DB = "/data/data/de.dennisguse.opentracks/databases/database.db"
METERS_PER_MILE = 1609.34
DATE_FMT = "%B %d %Y"
WEEK = (dt.date(2023, 10, 9), dt.date(2023, 10, 15))
"""This week on the frozen phone (Monday to Sunday)."""

ACTIVITIES: dict[str, tuple[str, ...]] = {
    "running": ("Morning Run", "Evening Run", "Tempo Run", "Park Loop"),
    "cycling": ("Bike Commute", "Hill Repeats", "Coffee Ride", "Long Ride"),
    "swimming": ("Pool Laps", "Open Water Swim", "Swim Drills"),
    "hiking": ("Ridge Hike", "Forest Hike", "Summit Push"),
    "walking": ("Lunch Walk", "Dog Walk", "City Stroll"),
    "kayaking": ("River Paddle", "Lake Kayaking"),
    "skiing": ("Ski Day", "Powder Laps"),
    "climbing": ("Bouldering", "Crag Day"),
    "mountain biking": ("Singletrack Session", "Trail Riding"),
    "sailing": ("Harbor Sail", "Regatta Practice"),
}
TARGET_NAMES = ("Slow day", "Recovery day", "Quick outing", "Intense day", "Skill work", "Light Workout",
                "Laps around the lake", "Outdoor Adventure", "Lunch Break Fitness", "Quick Sweat")
DURATIONS = (15, 20, 30, 40, 45, 50, 60, 75, 80, 90, 105, 120, 135, 150, 180, 210, 240)
DISTANCES = (100, 300, 500, 800, 1000, 1200, 1500, 2000, 2500, 3000, 4000, 5000, 6000, 8000, 10000, 12000)


def shown_meters(meters: float) -> int:
    """The metres a distance is stored as: rounded to the 0.01 mile the app shows (as AndroidWorld stores it)."""
    return round(round(meters / METERS_PER_MILE, 2) * METERS_PER_MILE)


# --- set-up through the shell ------------------------------------------------------------------------------


def reset_tracks(device: Any, rows: list[dict[str, Any]]) -> None:
    """Start state: OpenTracks stopped on the home screen, its ``tracks`` table holding exactly ``rows``."""
    go_home(device, OPENTRACKS_PACKAGE)
    values = []
    for i, r in enumerate(rows):
        start = to_ms(dt.datetime.fromisoformat(r["start"]))
        total = r["minutes"] * 60_000
        speed = r["meters"] / (total / 1000)
        name = r["name"].replace("'", "''")
        values.append(f"('{name}', '', '{r['category']}', '{r['category']}', {start}, {start + total}, 0, "
                      f"{float(r['meters'])}, {total}, {total}, {speed}, {speed}, 0, 0, 0, 0, 0, X'{i + 1:032x}', 0)")
    sql = "DELETE FROM tracks;"
    if values:
        sql += ("INSERT INTO tracks (name, description, category, activity_type, starttime, stoptime, numpoints, "
                "totaldistance, totaltime, movingtime, avgspeed, avgmovingspeed, maxspeed, minelevation, maxelevation, "
                "elevationgain, elevationloss, uuid, starttime_offset) VALUES "
                + ", ".join(values) + ";")
    out = device.shell(f'sqlite3 {OPENTRACKS_DB} "{sql}"')
    if out.strip():
        raise TaskError(f"could not write the OpenTracks database: {out.strip()}")


def _row(rng: random.Random, category: str, day: dt.date, name: str | None = None,
         minutes: int | None = None, meters: int | None = None) -> dict[str, Any]:
    start = dt.datetime.combine(day, dt.time(rng.randint(6, 20), rng.choice((0, 15, 30, 45))))
    return {"name": name or rng.choice(ACTIVITIES.get(category, ("Workout",))), "category": category,
            "start": start.isoformat(timespec="minutes"), "minutes": minutes or rng.choice(DURATIONS),
            "meters": shown_meters(meters if meters is not None else rng.choice(DISTANCES))}


def _noise(rng: random.Random, n: int, keep: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    while len(out) < n:
        day = DEVICE_NOW.date() - dt.timedelta(days=rng.randint(0, 14))
        row = _row(rng, rng.choice(list(ACTIVITIES)), day, minutes=rng.randint(5, 290),
                   meters=rng.randint(0, 20000))
        if keep(row):
            out.append(row)
    return out


def _day(row: dict[str, Any]) -> dt.date:
    return dt.datetime.fromisoformat(row["start"]).date()


# --- reading the list ----------------------------------------------------------------------------------------


def parse_minutes(text: str) -> float:
    """Minutes of a shown total time ("1:30:00" or "45:00")."""
    parts = [int(p) for p in text.strip().split(":")]
    if len(parts) == 3:
        return parts[0] * 60 + parts[1] + parts[2] / 60
    return parts[0] + parts[1] / 60


def parse_meters(text: str) -> float:
    """Metres of a shown distance ("2.49 mi")."""
    m = re.match(r"([\d.]+) mi", text.strip())
    if m is None:
        raise ExpertStuck(f"cannot read the distance {text!r}")
    return float(m.group(1)) * METERS_PER_MILE


Track = tuple[str, str, dt.date, float, float]
"""(name, category, start day, minutes, metres) of a row read from the list."""


def _shown_tracks(ui: Any, first_page: bool, at_end: bool) -> list[Track]:
    """The rows on screen whole (``rows_in_view``: none the list's edges may cut)."""
    tracks = []
    for row in rows_in_view(ui, "track_list", "track_list_item", first_page=first_page, at_end=at_end,
                            what="track list"):
        parts = {e.resource_id.rpartition("/")[2]: e.text for e in ui.elements
                 if within(e.bounds, row.bounds) and e.text}
        try:
            day = dt.datetime.strptime(parts["track_list_item_date"].split(", ")[0] + " " +
                                       parts["track_list_item_date"].split(", ")[1], "%b %d %Y").date()
            tracks.append((parts["track_list_item_name"], parts.get("track_list_item_category", ""), day,
                           parse_minutes(parts["track_list_item_time"]), parse_meters(parts["track_list_item_distance"])))
        except (KeyError, IndexError, ValueError):
            continue
    return tracks


def read_track_list(ui: Any, since: dt.date | None = None):
    """Open OpenTracks and scroll its list until a row older than ``since`` (or the end); returns (ui, rows)."""
    ui = yield OpenApp(OPENTRACKS_APP)
    seen: list[Track] = []
    for scrolls in range(15):
        if find(ui, id_is("track_list_empty_view")) is not None:
            return ui, seen
        for track in _shown_tracks(ui, first_page=scrolls == 0, at_end=False):
            if track not in seen:
                seen.append(track)
        if since is not None and seen and seen[-1][2] < since:
            return ui, seen
        lists = find_all(ui, id_is("track_list"))
        before = [(e.text, e.bounds) for e in find_all(ui, id_is("track_list_item_name"))]
        ui = yield Scroll("down", *lists[0].center)
        if [(e.text, e.bounds) for e in find_all(ui, id_is("track_list_item_name"))] == before:  # the end
            for track in _shown_tracks(ui, first_page=False, at_end=True):
                if track not in seen:
                    seen.append(track)
            return ui, seen
    raise ExpertStuck("the track list did not end after 15 scrolls")


def _same(category: str, wanted: str) -> bool:
    return category.strip().lower() == wanted.strip().lower()


def _date(params: dict[str, Any], key: str) -> dt.date:
    return dt.datetime.strptime(params[key], DATE_FMT).date()


# --- tasks ---------------------------------------------------------------------------------------------------


class _TracksQuestion(Task):
    """A question answered from OpenTracks; the instance's rows are ``rows``, the answer in ``expected``."""

    app_names = ("open tracks sports tracker",)
    suites = SUITES_AW
    answer_task = True
    tolerance: ClassVar[float] = 0.5
    """How far a numeric answer may be from the expected number (10 m for distances)."""

    def initialize(self, device: Any) -> None:
        reset_tracks(device, self.params["rows"])

    def teardown(self, device: Any) -> None:
        go_home(device, OPENTRACKS_PACKAGE)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        expected = self.params["expected"]
        if isinstance(expected, list):
            return 1.0 if answers_match(answer, expected) else 0.0
        try:
            return 1.0 if answer is not None and abs(float(answer.strip()) - expected) < self.tolerance else 0.0
        except ValueError:
            return 0.0

    @staticmethod
    def _params(rng: random.Random, targets: list[dict[str, Any]], keep: Callable[[dict[str, Any]], bool],
                expected: Any, **extra: Any) -> dict[str, Any]:
        rows = targets + _noise(rng, 20, keep)
        rng.shuffle(rows)
        return {**extra, "expected": expected, "rows": rows}

    def oldest_day(self) -> dt.date | None:
        """The oldest start day the question is about (the expert stops reading past it)."""
        return WEEK[0]

    def answer_from(self, tracks: list[Track]) -> str:
        """The answer an expert gives from the rows it read."""
        raise NotImplementedError

    def expert(self, ui: Any) -> ExpertGenerator:
        ui, tracks = yield from read_track_list(ui, self.oldest_day())
        yield Finished(self.answer_from(tracks))


def _week_day(rng: random.Random) -> dt.date:
    return WEEK[0] + dt.timedelta(days=rng.randint(0, 6))


def _in_week(day: dt.date) -> bool:
    return WEEK[0] <= day <= WEEK[1]


@register_task
class SportsTrackerActivitiesCountForWeek(_TracksQuestion):
    """Two activities of a category this week; how many?"""

    name = "SportsTrackerActivitiesCountForWeek"
    template = ("How many {category} activities did I do this week in the OpenTracks app? Express your answer as a "
                "single integer.")
    difficulty = "easy"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        category = rng.choice(list(ACTIVITIES))
        n = rng.randint(1, 3)
        targets = [_row(rng, category, _week_day(rng), name=name) for name in rng.sample(TARGET_NAMES, n)]
        return cls._params(rng, targets, lambda r: not (r["category"] == category and _in_week(_day(r))), n,
                           category=category)

    def answer_from(self, tracks: list[Track]) -> str:
        return str(sum(1 for t in tracks if _same(t[1], self.params["category"]) and _in_week(t[2])))


@register_task
class SportsTrackerActivitiesOnDate(_TracksQuestion):
    """Two activities of different categories on a day; which categories?"""

    name = "SportsTrackerActivitiesOnDate"
    template = ("What activities did I do {date} in the OpenTracks app? Answer with the category only. If there are "
                "multiples categories, format your answer in a comma separated list.")
    difficulty = "hard"
    complexity = 2.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        day = DEVICE_NOW.date() - dt.timedelta(days=rng.randint(0, 10))
        categories = rng.sample(list(ACTIVITIES), 2)
        targets = [_row(rng, c, day, name=rng.choice(TARGET_NAMES)) for c in categories]
        return cls._params(rng, targets, lambda r: _day(r) != day, categories, date=day.strftime(DATE_FMT))

    def oldest_day(self) -> dt.date | None:
        return _date(self.params, "date")

    def answer_from(self, tracks: list[Track]) -> str:
        day = _date(self.params, "date")
        return ", ".join(dict.fromkeys(t[1] for t in tracks if t[2] == day))


@register_task
class SportsTrackerActivityDuration(_TracksQuestion):
    """One activity of a category on a day; how many minutes did it last?"""

    name = "SportsTrackerActivityDuration"
    template = ("How long was my {category} activity {date} in the OpenTracks app? Express your answer in minutes as "
                "a single integer.")
    difficulty = "easy"
    complexity = 1.2

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        day = DEVICE_NOW.date() - dt.timedelta(days=rng.randint(0, 10))
        category = rng.choice(list(ACTIVITIES))
        target = _row(rng, category, day, name=rng.choice(TARGET_NAMES))
        return cls._params(rng, [target], lambda r: not (_day(r) == day and r["category"] == category),
                           target["minutes"], category=category, date=day.strftime(DATE_FMT))

    def oldest_day(self) -> dt.date | None:
        return _date(self.params, "date")

    def answer_from(self, tracks: list[Track]) -> str:
        day = _date(self.params, "date")
        found = [t[3] for t in tracks if t[2] == day and _same(t[1], self.params["category"])]
        if not found:
            raise ExpertStuck(f"no {self.params['category']} activity on {day}")
        return str(round(found[0]))


@register_task
class SportsTrackerLongestDistanceActivity(_TracksQuestion):
    """The longest distance of a category's activities this week, in metres."""

    name = "SportsTrackerLongestDistanceActivity"
    template = ("What was the longest distance covered in a {category} activity in the OpenTracks app this week? "
                "Express your answer in meters as a single integer.")
    difficulty = "easy"
    tolerance = 10.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        category = rng.choice(list(ACTIVITIES))
        target = _row(rng, category, _week_day(rng), name=rng.choice(TARGET_NAMES))
        return cls._params(rng, [target], lambda r: not (r["category"] == category and _in_week(_day(r))
                                                         and r["meters"] >= target["meters"]),
                           target["meters"], category=category)

    def answer_from(self, tracks: list[Track]) -> str:
        found = [t[4] for t in tracks if _same(t[1], self.params["category"]) and _in_week(t[2])]
        if not found:
            raise ExpertStuck(f"no {self.params['category']} activity this week")
        return str(round(max(found)))


@register_task
class SportsTrackerTotalDistanceForCategoryOverInterval(_TracksQuestion):
    """Two activities of a category on the first day of an interval; their total distance in metres."""

    name = "SportsTrackerTotalDistanceForCategoryOverInterval"
    template = ("What was the total distance covered for {category} activities in the OpenTracks app from "
                "{start_date} to {end_date}? Express your answer in meters as a single integer.")
    difficulty = "hard"
    complexity = 2.2
    tolerance = 10.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        start = dt.date(2023, 10, rng.randint(1, 9))
        end = dt.date(2023, 10, rng.randint(10, 15))
        category = rng.choice(list(ACTIVITIES))
        targets = [_row(rng, category, start, name=n) for n in rng.sample(TARGET_NAMES, 2)]
        return cls._params(rng, targets, lambda r: not (r["category"] == category and start <= _day(r) <= end),
                           sum(t["meters"] for t in targets), category=category,
                           start_date=start.strftime(DATE_FMT), end_date=end.strftime(DATE_FMT))

    def oldest_day(self) -> dt.date | None:
        return _date(self.params, "start_date")

    def answer_from(self, tracks: list[Track]) -> str:
        start, end = _date(self.params, "start_date"), _date(self.params, "end_date")
        return str(round(sum(t[4] for t in tracks if _same(t[1], self.params["category"]) and start <= t[2] <= end)))


@register_task
class SportsTrackerTotalDurationForCategoryThisWeek(_TracksQuestion):
    """Two activities of a category this week; their total duration in minutes."""

    name = "SportsTrackerTotalDurationForCategoryThisWeek"
    template = ("What was the total duration of {category} activities in the OpenTracks app this week? Express your "
                "answer in minutes as a single integer.")
    difficulty = "hard"
    complexity = 1.6

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        category = rng.choice(list(ACTIVITIES))
        targets = [_row(rng, category, _week_day(rng), name=n) for n in rng.sample(TARGET_NAMES, 2)]
        return cls._params(rng, targets, lambda r: not (r["category"] == category and _in_week(_day(r))),
                           sum(t["minutes"] for t in targets), category=category)

    def answer_from(self, tracks: list[Track]) -> str:
        return str(round(sum(t[3] for t in tracks if _same(t[1], self.params["category"]) and _in_week(t[2]))))


__all__ = [
    "OPENTRACKS_DB",
    "SportsTrackerActivitiesCountForWeek",
    "SportsTrackerActivitiesOnDate",
    "SportsTrackerActivityDuration",
    "SportsTrackerLongestDistanceActivity",
    "SportsTrackerTotalDistanceForCategoryOverInterval",
    "SportsTrackerTotalDurationForCategoryThisWeek",
    "read_track_list",
    "reset_tracks",
]
