"""Building blocks for scripted experts: find elements in what the agent sees and act on them.

Each ``yield from`` helper yields one or more actions and returns the observation that followed
the last one, so experts read as a sequence of steps::

    ui = yield from tap_text(ui, "Display")
    ui = yield from type_into(ui, resource_id="title", text="Groceries")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from android_gym.actions import Action, Click, Finished, LongPress, PressBack, Scroll, Type

Predicate = Callable[[Any], bool]


class ExpertStuck(RuntimeError):
    """The expert could not find what it needed on screen (a bug in the task, app or expert)."""


def text_is(text: str, exact: bool = True) -> Predicate:
    """Predicate: the element's text or content description equals (or contains) ``text``, case-insensitively."""
    wanted = text.strip().lower()

    def match(element: Any) -> bool:
        for value in (element.text or "", element.content_desc or ""):
            value = value.strip().lower()
            if (value == wanted) if exact else (wanted in value):
                return True
        return False

    return match


def id_is(resource_id: str) -> Predicate:
    """Predicate: the element's resource id is ``resource_id`` or ends with ``:id/<resource_id>``."""

    def match(element: Any) -> bool:
        rid = element.resource_id or ""
        return rid == resource_id or rid.endswith(":id/" + resource_id)

    return match


def hint_is(hint: str) -> Predicate:
    """Predicate: an editable field whose hint is ``hint`` (case-insensitively), for fields without a resource id."""
    wanted = hint.strip().lower()

    def match(element: Any) -> bool:
        return bool(element.editable) and (element.hint or "").strip().lower() == wanted

    return match


def find(ui: Any, predicate: Predicate) -> Any | None:
    """First element of ``ui.elements`` matching ``predicate``, or None."""
    for element in ui.elements:
        if predicate(element):
            return element
    return None


def find_all(ui: Any, predicate: Predicate) -> list[Any]:
    return [e for e in ui.elements if predicate(e)]


def within(inner: tuple[int, int, int, int], outer: tuple[int, int, int, int]) -> bool:
    """Whether the box ``inner`` lies inside the box ``outer`` (both as left, top, right, bottom)."""
    return outer[0] <= inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2] and inner[3] <= outer[3]


def rows_in_view(ui: Any, list_id: str, row_id: str, *, first_page: bool, at_end: bool, what: str) -> list[Any]:
    """The row elements (``row_id``) of the scrolled list ``list_id`` on screen, leaving out those the list's
    edges may cut: at its top once it has scrolled (they were read lower down before), at its bottom until its
    end (they are read after the next scroll). Raises ExpertStuck naming ``what`` when the list is not shown."""
    lists = find_all(ui, id_is(list_id))
    if not lists:
        raise ExpertStuck(f"the {what} is not on screen")
    top, bottom = lists[0].bounds[1], lists[0].bounds[3]
    return [row for row in find_all(ui, id_is(row_id))
            if not (row.bounds[1] <= top and not first_page) and not (row.bounds[3] >= bottom and not at_end)]


def scroll_to(ui: Any, predicate: Predicate, direction: str = "down", max_scrolls: int = 12,
              at: tuple[int, int] | None = None):
    """Scroll until an element matching ``predicate`` is visible; returns (ui, element)."""
    element = find(ui, predicate)
    if element is None and keyboard_visible(ui):
        # What is looked for may sit under the soft keyboard (a dialog's buttons on a small screen):
        # hide it first, as a person would, before scrolling anything.
        ui = yield PressBack()
        element = find(ui, predicate)
    scrolls = 0
    while element is None:
        if scrolls >= max_scrolls:
            raise ExpertStuck(f"element not found after {max_scrolls} scrolls {direction}")
        target = at or _scrollable_center(ui, direction)
        ui = yield Scroll(direction, *(target or (None, None)))
        scrolls += 1
        element = find(ui, predicate)
    return ui, element


IME_PACKAGES = ("com.google.android.inputmethod.latin", "com.android.inputmethod.latin")


def keyboard_visible(ui: Any) -> bool:
    """Whether the soft keyboard is on screen (any element of a known input-method package)."""
    return any((e.package or "") in IME_PACKAGES for e in ui.elements)


def _scrollable_center(ui: Any, direction: str = "down") -> tuple[int, int] | None:
    """Centre of the topmost scrollable element: the last in document order, so a dialog's scrolling
    body wins over the page it covers (which takes no touches while the dialog is open). Scrolling up or down
    skips horizontal rows (a row of filter chips nested in the page scrolls sideways only)."""
    vertical = direction in ("up", "down")
    for element in reversed(ui.elements):
        if element.scrollable and not (vertical and (element.class_name or "").endswith("HorizontalScrollView")):
            return element.center
    return None


def tap(element: Any) -> Action:
    """A click at the element's centre."""
    x, y = element.center
    return Click(int(x), int(y))


def tap_where(ui: Any, predicate: Predicate, scroll: bool = True, long: bool = False):
    """Find (scrolling down if needed) and tap the matching element; returns the next ui."""
    if scroll:
        ui, element = yield from scroll_to(ui, predicate)
    else:
        element = find(ui, predicate)
        if element is None:
            raise ExpertStuck("element to tap is not on screen")
    x, y = element.center
    ui = yield (LongPress(int(x), int(y)) if long else Click(int(x), int(y)))
    return ui


def tap_text(ui: Any, text: str, exact: bool = True, scroll: bool = True, long: bool = False):
    """Tap the element showing ``text`` (scrolling to it when needed); returns the next ui."""
    try:
        return (yield from tap_where(ui, text_is(text, exact), scroll=scroll, long=long))
    except ExpertStuck as exc:
        raise ExpertStuck(f"no element with text {text!r} on screen") from exc


def tap_id(ui: Any, resource_id: str, scroll: bool = True, long: bool = False):
    """Tap the element with ``resource_id`` (scrolling to it when needed); returns the next ui."""
    try:
        return (yield from tap_where(ui, id_is(resource_id), scroll=scroll, long=long))
    except ExpertStuck as exc:
        raise ExpertStuck(f"no element with resource id {resource_id!r} on screen") from exc


def type_into(ui: Any, text: str, resource_id: str | None = None, predicate: Predicate | None = None,
              submit: bool = False):
    """Type ``text`` into a field (tapping it first); without a target, into the focused field."""
    if resource_id is None and predicate is None:
        return (yield Type(text, submit=submit))
    ui, element = yield from scroll_to(ui, predicate or id_is(resource_id or ""))
    x, y = element.center
    return (yield Type(text, int(x), int(y), submit=submit))


def finish(answer: str | None = None):
    """Yield the final ``Finished`` action (with the answer for question tasks)."""
    yield Finished(answer)


PERMISSION_ALLOW = "While using the app"
"""The button of Android's runtime-permission pop-up that grants the permission."""


def grant_permission_popup(ui: Any):
    """Tap "While using the app" while a runtime-permission pop-up shows (nothing otherwise); returns the ui."""
    for _ in range(3):
        element = find(ui, text_is(PERMISSION_ALLOW))
        if element is None:
            break
        ui = yield tap(element)
    return ui
