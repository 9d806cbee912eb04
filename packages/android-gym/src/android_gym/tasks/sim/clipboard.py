"""AndroidWorld's SystemCopyToClipboard re-created: put a given text on the phone's clipboard.

The set-up puts a marker on the clipboard with Clipper's broadcast (``am broadcast -a clipper.set``) and the
check reads it back (``clipper.get``), as AndroidWorld does. The expert does what a person does without a
Copy button at hand: type the text into a field that keeps no data (the launcher's app search), press and
hold it to select the text, and choose Copy.
"""

from __future__ import annotations

import random
import re
from typing import Any

from android_gym.actions import Click, Finished, LongPress, PressHome
from android_gym.tasks.base import ExpertGenerator, Task, TaskError, register_task
from android_gym.tasks.device_state import go_home, normalize_answer, set_clipboard
from android_gym.tasks.expert import ExpertStuck, find, id_is, tap_text, type_into
from android_gym.tasks.suites import SUITES_AW

RESET_MARK = "~~~RESET~~~"
"""What the set-up leaves on the clipboard (AndroidWorld's own marker)."""
TEXTS = ("1234 Elm St, Springfield, IL", "Acme Corp, Suite 200", "john.doe@example.com", "Jane's Flower Shop",
         "Order #4821 ships Monday", "Wi-Fi password: sunflower42", "Meet at Gate B12", "+1 415 555 0134")


def read_clipboard(device: Any) -> str:
    """The clipboard's text through Clipper's ``clipper.get`` broadcast."""
    out = device.shell("am broadcast -a clipper.get")
    m = re.search(r'data="(.*)"', out, re.DOTALL)
    if m is None:
        raise TaskError(f"the clipboard could not be read: {out.strip()!r}")
    return m.group(1)


def copy_text_expert(ui: Any, text: str):
    """Home, the launcher's search panel, type ``text`` in its field, long-press it (selects all), Copy."""
    ui = yield PressHome()
    bar, icon = find(ui, id_is("search_container_hotseat")), find(ui, id_is("g_icon"))
    if bar is None or icon is None:
        raise ExpertStuck("the home screen's search bar is not there")
    ui = yield Click(icon.bounds[2] + 8, (bar.bounds[1] + bar.bounds[3]) // 2)  # the bar's text, not its icons
    ui = yield from type_into(ui, text, resource_id="input")
    field = find(ui, id_is("input"))
    if field is None:
        raise ExpertStuck("the launcher's search field is gone")
    ui = yield LongPress(*field.center)
    return (yield from tap_text(ui, "Copy", scroll=False))


@register_task
class SystemCopyToClipboard(Task):
    """Copy a given text to the clipboard."""

    name = "SystemCopyToClipboard"
    template = "Copy the following text to the clipboard: {clipboard_content}"
    difficulty = "easy"
    complexity = 1.0
    app_names = ("clipper",)
    suites = SUITES_AW

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"clipboard_content": rng.choice(TEXTS)}

    def initialize(self, device: Any) -> None:
        go_home(device)
        set_clipboard(device, RESET_MARK)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        got = read_clipboard(device)
        return 1.0 if normalize_answer(got) == normalize_answer(self.params["clipboard_content"]) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        yield from copy_text_expert(ui, self.params["clipboard_content"])
        yield Finished()


__all__ = ["SystemCopyToClipboard", "copy_text_expert", "read_clipboard"]
