"""Simple Calendar Pro: AndroidWorld's SimpleCalendarAddRepeatingEvent re-created.

A daily or weekly event repeating forever: the editor's Repeat row sets the provider's ``rrule``
(``FREQ=DAILY``/``FREQ=WEEKLY``), which Simple Calendar's ``events.db`` stores as ``repeat_interval``
(86400 or 604800 seconds) and, for weekly events, ``repeat_rule`` (the start's weekday bit,
Monday = 1), with ``repeat_limit`` 0 (forever): what AndroidWorld's check compares.
"""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

from android_gym.actions import Finished
from android_gym.tasks.base import ExpertGenerator, register_task
from android_gym.tasks.sim.calendar import (
    _AddEventTask,
    add_event_expert,
)

RRULE_OF = {"daily": "FREQ=DAILY", "weekly": "FREQ=WEEKLY"}
"""AndroidWorld's ``repeat_rule`` word -> the rule the provider stores."""
LABEL_OF = {"daily": "Daily", "weekly": "Weekly"}
"""AndroidWorld's ``repeat_rule`` word -> the option the Repeat dialog shows."""


def add_repeating_event_expert(ui: Any, title: str, description: str, start: dt.datetime, minutes: int,
                               repeat: str):
    """New Event: title, description, start and end, Repeat (Daily/Weekly), Save."""
    return (yield from add_event_expert(ui, title, description, start, minutes, repeat=LABEL_OF[repeat]))


@register_task
class SimpleCalendarAddRepeatingEvent(_AddEventTask):
    """Create an event repeating daily or weekly, forever."""

    name = "SimpleCalendarAddRepeatingEvent"
    template = ("In Simple Calendar Pro, create a recurring calendar event titled '{event_title}' starting on "
                "{year}-{month}-{day} at {hour}h. The event recurs {repeat_rule}, forever, and lasts for "
                "{duration_mins} minutes each occurrence. The event description should be '{event_description}'.")

    difficulty = "easy"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        params = super().generate_random_params(rng)
        params["repeat_rule"] = rng.choice(sorted(RRULE_OF))
        return params

    def is_target(self, new: dict[str, Any]) -> bool:
        return super().is_target(new) and (new.get("rrule") or "") == RRULE_OF[self.params["repeat_rule"]]

    def expert(self, ui: Any) -> ExpertGenerator:
        start, minutes = self._target()
        yield from add_repeating_event_expert(ui, self.params["event_title"], self.params["event_description"],
                                              start, minutes, self.params["repeat_rule"])
        yield Finished()


__all__ = ["SimpleCalendarAddRepeatingEvent", "add_repeating_event_expert"]
