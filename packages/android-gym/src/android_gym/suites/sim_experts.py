"""Which of AndroidWorld's tasks the simulated phone runs, and the scripted expert of each (no android_world needed).

:data:`SIM_TASKS` lists the AndroidWorld tasks whose apps the sim models; :func:`reason_not_on_sim` says why any other
one does not run there; :func:`sim_expert_task` gives our re-creation (:mod:`android_gym.tasks.sim`) of a task for
an AndroidWorld instance's own parameters, whose expert reads the screen and acts. Both the AndroidWorld suites
(:mod:`android_gym.suites.android_world`) and the sim suite (:mod:`android_gym.suites.android_world_sim`) read it.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Mapping
from typing import Any

from android_gym.sim.apps.columns import from_ms
from android_gym.tasks.base import Task, get_task_class

__all__ = ["NOT_ON_SIM", "SIM_TASKS", "expert_class", "reason_not_on_sim", "sim_expert_task"]


SIM_TASKS: tuple[str, ...] = (
    "ClockStopWatchPausedVerify", "ClockStopWatchRunning", "ClockTimerEntry",
    "ContactsAddContact", "ContactsNewContactDraft",
    "ExpenseAddMultiple", "ExpenseAddSingle", "ExpenseDeleteDuplicates", "ExpenseDeleteDuplicates2",
    "ExpenseDeleteMultiple", "ExpenseDeleteMultiple2", "ExpenseDeleteSingle",
    "MarkorAddNoteHeader", "MarkorChangeNoteContent", "MarkorCreateFolder", "MarkorCreateNote",
    "MarkorCreateNoteAndSms", "MarkorCreateNoteFromClipboard", "MarkorDeleteAllNotes", "MarkorDeleteNewestNote",
    "MarkorDeleteNote", "MarkorEditNote", "MarkorMoveNote",
    "RecipeAddMultipleRecipes", "RecipeAddMultipleRecipesFromMarkor", "RecipeAddMultipleRecipesFromMarkor2",
    "RecipeAddSingleRecipe", "RecipeDeleteDuplicateRecipes", "RecipeDeleteDuplicateRecipes2",
    "RecipeDeleteDuplicateRecipes3", "RecipeDeleteMultipleRecipes", "RecipeDeleteMultipleRecipesWithConstraint",
    "RecipeDeleteMultipleRecipesWithNoise", "RecipeDeleteSingleRecipe", "RecipeDeleteSingleWithRecipeWithNoise",
    "SimpleCalendarAddOneEvent", "SimpleCalendarAddOneEventInTwoWeeks", "SimpleCalendarAddOneEventRelativeDay",
    "SimpleCalendarAddOneEventTomorrow", "SimpleCalendarAnyEventsOnDate", "SimpleCalendarDeleteEvents",
    "SimpleCalendarDeleteEventsOnRelativeDay", "SimpleCalendarDeleteOneEvent", "SimpleCalendarEventsOnDate",
    "SimpleCalendarLocationOfEvent", "SimpleCalendarNextEvent",
    "SimpleSmsReply", "SimpleSmsReplyMostRecent", "SimpleSmsResend", "SimpleSmsSend", "SimpleSmsSendClipboardContent",
    "SimpleSmsSendReceivedAddress",
    "SystemBluetoothTurnOff", "SystemBluetoothTurnOffVerify", "SystemBluetoothTurnOn", "SystemBluetoothTurnOnVerify",
    "SystemBrightnessMax", "SystemBrightnessMaxVerify", "SystemBrightnessMin", "SystemBrightnessMinVerify",
    "SystemWifiTurnOff", "SystemWifiTurnOffVerify", "SystemWifiTurnOn", "SystemWifiTurnOnVerify",
    "TurnOffWifiAndTurnOnBluetooth",
    "TasksCompletedTasksForDate", "TasksDueNextWeek", "TasksDueOnDate", "TasksHighPriorityTasks",
    "TasksHighPriorityTasksDueOnDate", "TasksIncompleteTasksOnDate",
    "SportsTrackerActivitiesCountForWeek", "SportsTrackerActivitiesOnDate", "SportsTrackerActivityDuration",
    "SportsTrackerLongestDistanceActivity", "SportsTrackerTotalDistanceForCategoryOverInterval",
    "SportsTrackerTotalDurationForCategoryThisWeek",
    "SimpleCalendarAddRepeatingEvent", "SimpleCalendarEventOnDateAtTime", "SimpleCalendarEventsInNextWeek",
    "SimpleCalendarEventsInTimeRange", "SimpleCalendarFirstEventAfterStartTime", "SimpleCalendarNextMeetingWithPerson",
    "MarkorMergeNotes", "SystemCopyToClipboard", "ExpenseAddMultipleFromMarkor",
    "NotesIsTodo", "NotesMeetingAttendeeCount", "NotesRecipeIngredientCount", "NotesTodoItemCount",
    "OpenAppTaskEval", "TurnOnWifiAndOpenApp",
    "CameraTakePhoto", "CameraTakeVideo",
    "FilesDeleteFile", "FilesMoveFile",
    "AudioRecorderRecordAudio", "AudioRecorderRecordAudioWithFileName",
    "RetroCreatePlaylist", "RetroPlayingQueue", "RetroPlaylistDuration", "RetroSavePlaylist",
    "VlcCreatePlaylist", "VlcCreateTwoPlaylists",
    "SimpleDrawProCreateDrawing",
    "SaveCopyOfReceiptTaskEval",
    "OsmAndFavorite", "OsmAndMarker", "OsmAndTrack",
    "ExpenseAddMultipleFromGallery", "RecipeAddMultipleRecipesFromImage", "MarkorTranscribeReceipt",
    "MarkorTranscribeVideo",
    "BrowserDraw", "BrowserMaze", "BrowserMultiply",
)
"""AndroidWorld tasks that run on the sim with AndroidWorld's code and that a scripted expert solves (the README
table, made by ``tools/android_world_sim_table.py``, records the expert's success on each)."""

_APP_NOT_MODELLED = "the sim does not model {app} yet"
NOT_ON_SIM: dict[str, str] = {}
"""Why an AndroidWorld task does not run here (every task of AndroidWorld's registry runs on the sim now)."""

APP_OF_PREFIX: tuple[tuple[str, str], ...] = ()
"""The app of each AndroidWorld task family the sim does not model (by task-name prefix)."""


def reason_not_on_sim(name: str) -> str:
    """Why AndroidWorld's task ``name`` does not run on the sim ('' when it is in :data:`SIM_TASKS`)."""
    if name in SIM_TASKS:
        return ""
    if name in NOT_ON_SIM:
        return NOT_ON_SIM[name]
    for prefix, app in APP_OF_PREFIX:
        if name.startswith(prefix):
            return _APP_NOT_MODELLED.format(app=app)
    return "not checked on the sim yet"


def _expense_rows(rows: Any) -> list[dict[str, Any]]:
    """AndroidWorld's ``Expense`` rows as our re-creations' expense dicts (cents, category name, ISO time)."""
    out = []
    for row in rows or ():
        when = from_ms(row.created_date)
        out.append({"name": row.name, "cents": int(row.amount), "category": row.category_name, "note": row.note or "",
                    "created": when.strftime("%Y-%m-%dT%H:%M")})
    return out


def _expense_added(params: Mapping[str, Any]) -> dict[str, Any]:
    return {"targets": _expense_rows(params["row_objects"]), "noise": _expense_rows(params.get("noise_row_objects"))}


def _expense_deleted(params: Mapping[str, Any]) -> dict[str, Any]:
    return {"targets_present": _expense_rows(params["row_objects"]),
            "noise": _expense_rows(params.get("noise_row_objects"))}


_RECIPE_FIELDS = ("title", "description", "servings", "preparationTime", "source", "ingredients", "directions")


def _recipe_rows(rows: Any) -> list[dict[str, Any]]:
    """AndroidWorld's ``Recipe`` rows as our re-creations' recipe dicts (the text fields a person types)."""
    return [{k: str(getattr(row, k) or "") for k in _RECIPE_FIELDS} for row in rows or ()]


def _recipes(params: Mapping[str, Any]) -> dict[str, Any]:
    return {"targets": _recipe_rows(params["row_objects"]), "noise": _recipe_rows(params.get("noise_row_objects"))}


def _day_question(params: Mapping[str, Any]) -> dict[str, Any]:
    return {"date_iso": _dt.datetime.strptime(params["date"], "%B %d %Y").date().isoformat()}


def _renamed_note(params: Mapping[str, Any]) -> dict[str, Any]:
    return {"file_name": params["original_name"]}


_EXPERT_OF: dict[str, str] = {
    "SimpleCalendarAddOneEventInTwoWeeks": "SimpleCalendarAddOneEvent",
    "SimpleCalendarAddOneEventRelativeDay": "SimpleCalendarAddOneEvent",
    "SimpleCalendarDeleteEventsOnRelativeDay": "SimpleCalendarDeleteEvents",
    "ExpenseDeleteDuplicates2": "ExpenseDeleteDuplicates",
    "ExpenseDeleteMultiple2": "ExpenseDeleteMultiple",
}
"""AndroidWorld tasks whose expert is another task's re-creation (the same actions on differently worded goals)."""

_PARAMS: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
    "ExpenseDeleteMultiple2": _expense_deleted,
    "MarkorAddNoteHeader": _renamed_note, "MarkorChangeNoteContent": _renamed_note,
    "ExpenseAddSingle": _expense_added, "ExpenseAddMultiple": _expense_added,
    "ExpenseDeleteSingle": _expense_deleted, "ExpenseDeleteMultiple": _expense_deleted,
    "SimpleCalendarAnyEventsOnDate": _day_question, "SimpleCalendarEventsOnDate": _day_question,
    **{name: _recipes for name in (
        "RecipeAddMultipleRecipes", "RecipeAddMultipleRecipesFromMarkor", "RecipeAddMultipleRecipesFromMarkor2",
        "RecipeAddSingleRecipe", "RecipeDeleteDuplicateRecipes", "RecipeDeleteDuplicateRecipes2",
        "RecipeDeleteDuplicateRecipes3", "RecipeDeleteMultipleRecipes", "RecipeDeleteMultipleRecipesWithConstraint",
        "RecipeDeleteMultipleRecipesWithNoise", "RecipeDeleteSingleRecipe", "RecipeDeleteSingleWithRecipeWithNoise")},
}
"""Parameters an expert reads that AndroidWorld names or encodes differently, derived from its instance's params."""


def expert_class(name: str) -> type[Task]:
    """The re-creation whose scripted expert solves AndroidWorld's task ``name``."""
    return get_task_class(_EXPERT_OF.get(name, name))


def sim_expert_task(name: str, params: Mapping[str, Any]) -> Task:
    """Our re-creation of ``name`` carrying AndroidWorld's instance ``params`` (its expert solves that instance).

    AndroidWorld's parameters override the re-creation's (with :data:`_PARAMS` translating the ones
    that differ in name or form); those only the re-creation has (its own set-up data) keep their
    seed-0 values, and the experts do not read them for what AndroidWorld set up.
    """
    cls = expert_class(name)
    merged = dict(cls(seed=0).params)
    merged.update({k: v for k, v in params.items() if k != "seed"})
    translate = _PARAMS.get(name)
    if translate is not None:
        merged.update(translate(params))
    return cls(merged, seed=params.get("seed"))
