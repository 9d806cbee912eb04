"""`UIElement`: one on-screen element that survived compression, with a stable short id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["UIElement", "UnknownElementError"]


class UnknownElementError(KeyError):
    """No element with the requested id is on this screen; the message lists the ids that are."""

    def __init__(self, element_id: str, known: list[str]):
        self.element_id = element_id
        shown = ", ".join(known[:20]) + (f", ... ({len(known)} in all)" if len(known) > 20 else "")
        self.message = (
            f"no element with id {element_id!r} on this screen; known ids: {shown}"
            if known
            else f"no element with id {element_id!r}: this screen has no elements"
        )
        super().__init__(self.message)

    def __str__(self) -> str:
        return self.message


@dataclass(frozen=True)
class UIElement:
    """An element an agent can see or act on: identity, geometry, labels and state flags.

    ``bounds`` are the visible bounds ``(x1, y1, x2, y2)`` (clipped to ancestors and the screen unless
    compression kept off-screen elements); ``class_name`` is the full Android class; ``parent_id`` is
    the nearest surviving ancestor element (None at the top); ``index_path`` locates the source node
    in the dump (see `UINode.index_path`).
    """

    id: str
    bounds: tuple[int, int, int, int]
    text: str
    content_desc: str
    hint: str
    class_name: str
    resource_id: str
    package: str
    clickable: bool
    long_clickable: bool
    scrollable: bool
    checkable: bool
    checked: bool
    editable: bool
    focusable: bool
    focused: bool
    selected: bool
    enabled: bool
    password: bool
    parent_id: str | None
    depth: int
    index_path: tuple[int, ...]

    @property
    def center(self) -> tuple[int, int]:
        """The point to tap: the middle of the visible bounds (integer pixels)."""
        x1, y1, x2, y2 = self.bounds
        return ((x1 + x2) // 2, (y1 + y2) // 2)

    @property
    def short_class(self) -> str:
        """The class name's last dotted segment (``android.widget.Switch`` -> ``Switch``)."""
        return self.class_name.rpartition(".")[2]

    @property
    def label(self) -> str:
        """Text and content-desc merged (each once): what a user reads for this element."""
        if self.text and self.content_desc and self.text != self.content_desc:
            return f"{self.text} {self.content_desc}"
        return self.text or self.content_desc

    @property
    def short_resource_id(self) -> str:
        """The resource id without its ``package:id/`` prefix."""
        return self.resource_id.rpartition(":id/")[2]

    @property
    def actions(self) -> tuple[str, ...]:
        """What can be done to it, as words: click, long-click, scroll, check, input."""
        out = []
        if self.clickable:
            out.append("click")
        if self.long_clickable:
            out.append("long-click")
        if self.scrollable:
            out.append("scroll")
        if self.checkable:
            out.append("check")
        if self.editable:
            out.append("input")
        return tuple(out)

    @property
    def states(self) -> tuple[str, ...]:
        """Its state as words: checked/unchecked (when checkable), selected, focused, password, disabled."""
        out = []
        if self.checkable or self.checked:
            out.append("checked" if self.checked else "unchecked")
        if self.selected:
            out.append("selected")
        if self.focused:
            out.append("focused")
        if self.password:
            out.append("password")
        if not self.enabled:
            out.append("disabled")
        return tuple(out)

    def contains(self, x: float, y: float) -> bool:
        """Whether the point lies inside the bounds (left/top inclusive, right/bottom exclusive, like Android)."""
        x1, y1, x2, y2 = self.bounds
        return x1 <= x < x2 and y1 <= y < y2

    def to_dict(self) -> dict[str, Any]:
        """A compact JSON-friendly dict of the whitelisted fields; empty strings and lists are left out."""
        d: dict[str, Any] = {"id": self.id, "class": self.short_class}
        if self.text:
            d["text"] = self.text
        if self.content_desc:
            d["desc"] = self.content_desc
        if self.hint:
            d["hint"] = self.hint
        if self.resource_id:
            d["rid"] = self.short_resource_id
        d["bounds"] = list(self.bounds)
        actions = self.actions
        if actions:
            d["actions"] = list(actions)
        states = self.states
        if states:
            d["states"] = list(states)
        if self.parent_id is not None:
            d["parent"] = self.parent_id
        return d
