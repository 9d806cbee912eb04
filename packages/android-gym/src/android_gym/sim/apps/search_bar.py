"""Simple Mobile Tools' top search bar (MySearchMenu), as Simple Gallery Pro and Simple Calendar Pro show it on
AndroidWorld's emulator: an icon (the search glass, or Back on an inner page), the query field with its hint
("Search folders", "Search in DCIM"), the page's action buttons and "More options".

The emulator lists the actions as Buttons known by their content descriptions and the icon and "More options"
as ImageViews; the bar's own layouts are not listed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from android_gym.sim.view import HORIZONTAL, Callback, EditText, View


def bar_button(desc: str, rid: str, on_click: Callback | None, cls: str = "android.widget.Button") -> View:
    """One action of the bar: a 48dp button known by its content description (an ActionMenuItemView)."""
    return View(cls=cls, content_desc=desc, resource_id=rid, on_click=on_click, clickable=True, focusable=True,
                width=48, height=48, icon=desc[:1])


def search_bar(icon_desc: str, on_icon: Callback | None, hint: str, query: str, on_query: Callable[[str], Any],
               actions: Sequence[tuple[str, str, Callback | None]], on_more: Callback | None, *,
               key: str, on_field: Callback | None = None) -> View:
    """The bar: icon (``icon_desc``: "Search", "Back" or none), the query field showing ``hint`` while empty (a tap
    on it runs ``on_field`` when given), ``actions`` as (content description, resource id, callback) and "More
    options". The bar's layouts are left out of the dump, so its items list before the page's content."""
    icon = View(cls="android.widget.ImageView", content_desc=icon_desc, resource_id="top_toolbar_search_icon",
                on_click=on_icon, clickable=True, focusable=True, width=40, height=48, icon="<" if icon_desc == "Back"
                else "Q")
    field = EditText(query, on_query, hint=hint, key=key, resource_id="top_toolbar_search", weight=1, height=48,
                     background=None, on_click=on_field)
    more = View(cls="android.widget.ImageView", content_desc="More options", on_click=on_more, clickable=True,
                focusable=True, long_clickable=True, width=40, height=48, icon=":")
    row = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=48, padding=(16.0, 0.0),
               layout_only=True, children=[icon, field, View(width=16, height=1, layout_only=True),
                         *(bar_button(d, r, cb) for d, r, cb in actions), more])
    return View(cls="android.widget.RelativeLayout", resource_id="top_app_bar_layout", height=64, padding=(0.0, 8.0),
                background="#f8fafd", layout_only=True, children=[row])


__all__ = ["bar_button", "search_bar"]
