"""Phone (com.google.android.dialer, Google's dialer on the emulator): favourites, recents, contacts, dial pad.

Pages: ``main`` (tabs Favorites / Recents / Contacts along the bottom and a "key pad" button),
``dialpad`` (the number typed so far, digit keys 0-9 * #, backspace, the call button) and ``call``
(the in-call screen: number or contact name, elapsed time, "End call"). Contacts are read from the
Contacts app's own state, so the two always agree. Every call placed is added to the call log,
which the Recents tab lists newest first (``pm clear`` empties it).
"""

from __future__ import annotations

from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.view import (
    Button,
    Column,
    Fab,
    ImageButton,
    ListItem,
    Row,
    ScrollList,
    Text,
    Toolbar,
    View,
)

DIALER_PKG = "com.google.android.dialer"
CONTACTS_PKG = "com.google.android.contacts"
TABS = (("favorites", "Favorites", "tab_speed_dial"), ("recents", "Recents", "tab_call_history"),
        ("contacts", "Contacts", "tab_contacts"))
KEYS = (("1", "one"), ("2", "two"), ("3", "three"), ("4", "four"), ("5", "five"), ("6", "six"),
        ("7", "seven"), ("8", "eight"), ("9", "nine"), ("*", "star"), ("0", "zero"), ("#", "pound"))
"""Dial-pad keys and their resource ids (as the real dialer names them)."""


@register_app
class DialerApp(App):
    """The Phone app over a plain call log and the Contacts app's contacts."""

    package = DIALER_PKG
    label = "Phone"
    activity = "com.google.android.dialer.extensions.GoogleDialtactsActivity"
    main_page = "main"
    icon_color = "#1a73e8"

    def setup(self) -> None:
        self.tab = "favorites"
        self.digits = ""
        self.calls: list[dict[str, Any]] = []
        self.call_started: int | None = None

    def clear_data(self) -> None:
        """``pm clear``: an empty call log."""
        self.setup()

    def on_open(self) -> None:
        self.tab = "favorites"
        self.digits = ""

    def current_activity(self) -> str:
        if self.page == "call":
            return "com.android.incallui.InCallActivity"
        return self.activity

    # --- contacts and calls ---------------------------------------------------------------------
    def _contacts(self) -> list[tuple[str, str, bool]]:
        """(shown name, first number, starred) for each contact of the Contacts app, in its list order."""
        app = self.phone.apps.get(CONTACTS_PKG)
        if app is None:
            return []
        out = []
        for c in app.sorted_contacts():
            number = c["phones"][0]["number"] if c.get("phones") else ""
            out.append((app.shown_name(c), number, bool(c.get("starred"))))
        return out

    def _name_for(self, number: str) -> str:
        wanted = "".join(ch for ch in number if ch.isdigit())[-10:]
        for name, num, _ in self._contacts():
            if wanted and "".join(ch for ch in num if ch.isdigit())[-10:] == wanted:
                return name
        return ""

    def place_call(self, number: str) -> None:
        """Dial ``number``: log it and show the in-call screen (an empty number does nothing)."""
        number = number.strip()
        if not number:
            self.toast("Enter a number")
            return
        self.calls.append({"number": number, "name": self._name_for(number), "date": self.phone.clock_ms})
        self.call_started = self.phone.clock_ms
        self.push("call", number=number)

    def end_call(self) -> None:
        """Hang up: back to the page the call was placed from."""
        self.call_started = None
        self.pop()

    def handle_intent(self, action: str | None, data: str | None, extras: dict[str, str]) -> bool:
        """``am start -a android.intent.action.DIAL -d tel:NUMBER``: the dial pad with the number filled in."""
        if action in ("android.intent.action.DIAL", "android.intent.action.VIEW") and (data or "").startswith("tel:"):
            if not self.running:
                self.open()
            self.digits = (data or "")[4:]
            self.push("dialpad")
            return True
        return False

    # --- pages ---------------------------------------------------------------------------------
    def _set_tab(self, tab: str) -> None:
        self.tab = tab
        self.scroll = {}

    def build_main(self) -> View:
        if self.tab == "favorites":
            starred = [c for c in self._contacts() if c[2]]
            items = [ListItem(name, number, (lambda n=number: self.place_call(n)), resource_id="contact_tile",
                              title_id="contact_tile_name", subtitle_id="contact_tile_number", icon=name[:1])
                     for name, number, _ in starred]
            body = items or [Text("No favorites yet", resource_id="empty_list_view_message", align="center",
                                  padding=(24, 32), color="#5f6368")]
        elif self.tab == "recents":
            rows = []
            for call in reversed(self.calls):
                title = call["name"] or call["number"]
                rows.append(ListItem(title, f"Outgoing \u00b7 {call['number']}",
                                     (lambda n=call["number"]: self.place_call(n)), resource_id="call_log_row",
                                     title_id="primary_text", subtitle_id="phone_number", icon="R"))
            body = rows or [Text("Your call history is empty. Make a call.", resource_id="empty_list_view_message",
                                 align="center", padding=(24, 32), color="#5f6368")]
        else:
            body = [ListItem(name, number, (lambda n=number: self.place_call(n)), resource_id="contact_row",
                             title_id="cliv_name_textview", subtitle_id="cliv_number_textview", icon=name[:1])
                    for name, number, _ in self._contacts()]
            body = body or [Text("No contacts", resource_id="empty_list_view_message", align="center",
                                 padding=(24, 32), color="#5f6368")]
        tabs = Row(*[Button(label, (lambda t=tab: self._set_tab(t)), resource_id=rid, weight=1,
                            background="#d3e3fd" if self.tab == tab else None, selected=self.tab == tab)
                     for tab, label, rid in TABS],
                   resource_id="bottom_navigation_view", height=64, background="#f8fafd")
        return Column(
            Toolbar("Phone", actions=[ImageButton("Search contacts", lambda: self._set_tab("contacts"),
                                                  resource_id="open_search_bar", icon="Q")],
                    resource_id="toolbar"),
            ScrollList(body, f"main:{self.tab}", resource_id="list"),
            Fab("key pad", self._open_dialpad, resource_id="dialpad_fab", icon="#"),
            tabs,
            cls="android.widget.FrameLayout", resource_id="main_layout", weight=1,
        )

    def _open_dialpad(self) -> None:
        self.digits = ""
        self.push("dialpad")

    def _press(self, key: str) -> None:
        if len(self.digits) < 32:
            self.digits += key

    def _backspace(self) -> None:
        self.digits = self.digits[:-1]

    def build_dialpad(self) -> View:
        name = self._name_for(self.digits) if self.digits else ""
        grid = [Row(*[Button(label, (lambda k=label: self._press(k)), resource_id=rid, weight=1, height=72,
                             background=None, size=28)
                      for label, rid in KEYS[i:i + 3]], padding=(24, 0))
                for i in range(0, len(KEYS), 3)]
        return Column(
            Toolbar("", on_back=self.pop, resource_id="dialpad_toolbar"),
            Row(View(cls="android.widget.EditText", text=self.digits, resource_id="digits", weight=1, height=72,
                     size=32, align="center", focusable=True),
                ImageButton("backspace", self._backspace, resource_id="deleteButton", icon="<"),
                padding=(16, 8)),
            Text(name, resource_id="dialpad_contact_name", align="center", color="#5f6368") if name else None,
            Column(*grid, resource_id="dialpad_view", weight=1),
            Row(ImageButton("dial", lambda: self.place_call(self.digits),
                            resource_id="dialpad_floating_action_button", icon="C", width=72, height=72),
                padding=(160, 16)),
            cls="android.widget.LinearLayout", resource_id="dialpad_layout", weight=1,
        )

    def build_call(self, number: str) -> View:
        seconds = max(0, (self.phone.clock_ms - (self.call_started or self.phone.clock_ms)) // 1000)
        return Column(
            Text(self._name_for(number) or number, resource_id="contactgrid_contact_name", size=32,
                 align="center", padding=(16, 48)),
            Text(f"Calling\u2026 {seconds // 60:02d}:{seconds % 60:02d}", resource_id="contactgrid_status_text",
                 align="center", color="#5f6368"),
            View(cls="android.view.View", weight=1),
            Row(ImageButton("End call", self.end_call, resource_id="incall_end_call", icon="X", width=72, height=72),
                padding=(160, 32)),
            cls="android.widget.LinearLayout", resource_id="incall_root", weight=1, background="#202124",
        )

    def on_back(self) -> bool:
        """Back during a call leaves the in-call screen up (hang up with End call)."""
        if self.page == "call" and self.dialog is None:
            return True
        return super().on_back()
