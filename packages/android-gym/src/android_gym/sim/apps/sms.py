"""Simple SMS Messenger (com.simplemobiletools.smsmessenger): conversations, threads and the SMS provider.

Pages: ``main`` (conversations, newest first, with the contact name when the number is in Contacts,
a snippet and a date; unread ones bold; "New conversation" FAB), ``thread`` (message bubbles, oldest
at the top and scrolled to the newest, a "Type a message…" field and a "Send" button labelled
SMS; long-press a bubble for Copy to clipboard / Forward / Delete), ``new`` (an "Add Contact or
Number…" field and the contacts to pick from).

Provider (authority ``sms``), what tasks read and write through ``content``, columns in Android's
order: ``_id, thread_id, address, person, date, date_sent, read, status, type, subject, body,
seen`` (``type`` 1 = inbox, 2 = sent; ``date`` epoch ms of the phone's clock, UTC), rows newest
first. ``content://sms`` lists every message, ``content://sms/inbox`` and ``content://sms/sent``
one box. Insert into a box (``address``, ``body``, optional ``date``/``read``) to receive or record
a message; delete clears messages.
"""

from __future__ import annotations

import calendar
import datetime as _dt
import re
from typing import Any

from android_gym.sim.app import App, Row, RowMatch, register_app
from android_gym.sim.apps.columns import int_column
from android_gym.sim.apps.search_bar import search_bar
from android_gym.sim.databases import build_database, read_table
from android_gym.sim.view import (
    HORIZONTAL,
    Column,
    Dialog,
    EditText,
    Fab,
    ImageButton,
    ListItem,
    ScrollList,
    Spacer,
    Text,
    Toolbar,
    View,
)

SMS_PKG = "com.simplemobiletools.smsmessenger"
CONTACTS_AUTHORITY = "com.android.contacts"
NEGATIVE_POSITIVE = ("android:id/button2", "android:id/button1")  # AlertDialog ids of (No, Yes)
TYPE_INBOX = 1
TYPE_SENT = 2
BOXES = {"inbox": TYPE_INBOX, "sent": TYPE_SENT}
_BOTTOM = 10**9  # a scroll offset past the end: the layout clamps it to the last message

# (address, [(minutes before the phone's start time, type, body)]) of a factory-fresh phone.
DEFAULT_THREADS: tuple[tuple[str, tuple[tuple[int, int, str], ...]], ...] = (
    ("+14155550112", ((190, TYPE_INBOX, "Are we still on for the farmers market on Saturday?"),
                      (185, TYPE_SENT, "Yes! Meet you at the entrance at 9."))),
    ("+16175550190", ((1500, TYPE_SENT, "Can you send me the slides from today?"),
                      (1490, TYPE_INBOX, "Sure, sending them tonight."))),
    ("+18885550100", ((3000, TYPE_INBOX, "Your verification code is 482913. It expires in 10 minutes."),)),
)


def digits_of(number: str) -> str:
    """Only the digits of a phone number."""
    return re.sub(r"\D", "", number)


def same_number(a: str, b: str) -> bool:
    """Two phone numbers are the same line: equal digits, or equal last 10 digits (country code optional)."""
    da, db = digits_of(a), digits_of(b)
    if not da or not db:
        return a.strip().lower() == b.strip().lower()
    if da == db:
        return True
    return len(da) >= 10 and len(db) >= 10 and da[-10:] == db[-10:]


SMS_DB = "/data/data/com.android.providers.telephony/databases/mmssms.db"
SMS_SCHEMA = (
    "CREATE TABLE android_metadata (locale TEXT)",
    "CREATE TABLE sms (_id INTEGER PRIMARY KEY, thread_id INTEGER, address TEXT, person INTEGER, date INTEGER, "
    "date_sent INTEGER DEFAULT 0, protocol INTEGER, read INTEGER DEFAULT 0, status INTEGER DEFAULT -1, type INTEGER, "
    "reply_path_present INTEGER, subject TEXT, body TEXT, service_center TEXT, locked INTEGER DEFAULT 0, "
    "sub_id INTEGER DEFAULT -1, error_code INTEGER DEFAULT -1, creator TEXT, seen INTEGER DEFAULT 0)",
    "CREATE TABLE threads (_id INTEGER PRIMARY KEY AUTOINCREMENT, date INTEGER DEFAULT 0, message_count INTEGER "
    "DEFAULT 0, recipient_ids TEXT, snippet TEXT, snippet_cs INTEGER DEFAULT 0, read INTEGER DEFAULT 1, archived "
    "INTEGER DEFAULT 0, type INTEGER DEFAULT 0, error INTEGER DEFAULT 0, has_attachment INTEGER DEFAULT 0)",
)
"""The telephony provider's ``sms`` table (AndroidWorld clears it with ``sqlite3 ... "DELETE FROM sms;"``)."""


@register_app
class SmsMessengerApp(App):
    """Simple SMS Messenger over ``self.messages`` (plain dicts, the ``content://sms`` rows)."""

    package = SMS_PKG
    label = "Simple SMS Messenger"
    activity = ".activities.MainActivity"
    authorities = ("sms",)
    icon_color = "#1a73e8"

    PAGE_ACTIVITIES: dict[str, str] = {
        "main": ".activities.MainActivity",
        "thread": ".activities.ThreadActivity",
        "new": ".activities.NewConversationActivity",
    }

    databases = (SMS_DB,)
    data_packages = ("com.android.providers.telephony",)

    def clear_data(self) -> None:
        """``pm clear``: no messages, threads or drafts."""
        self.messages = []
        self.threads = {}
        self.drafts = {}
        self.next_id = 1

    def dump_database(self, path: str) -> bytes:
        """mmssms.db of the telephony provider: its ``sms`` table with every message."""
        rows = [{k: v for k, v in self._row(m).items() if k != "seen"} | {"seen": 1, "locked": 0, "sub_id": 1,
                                                                             "error_code": 0, "protocol": 0}
                for m in self.messages]
        threads = [{"_id": tid, "date": msgs[-1]["date"], "message_count": len(msgs), "recipient_ids": str(tid),
                    "snippet": msgs[-1]["body"], "read": int(all(m["read"] for m in msgs))}
                   for tid, msgs in ((m[-1]["thread_id"], m) for _, m in self.conversations())]
        return build_database(SMS_SCHEMA, {"sms": rows, "threads": threads})

    def load_database(self, path: str, data: bytes) -> None:
        """Replace the messages with the rows of a written mmssms.db (threads follow the addresses)."""
        rows = read_table(data, "sms")
        self.messages, self.threads = [], {}
        for r in sorted(rows, key=lambda r: int(r["_id"])):
            kind = int(r.get("type") or TYPE_INBOX)
            self.messages.append({"_id": int(r["_id"]), "thread_id": self.thread_id(str(r["address"] or "")),
                                  "address": str(r["address"] or ""), "body": str(r["body"] or ""),
                                  "date": int(r.get("date") or 0), "type": kind if kind in (1, 2) else TYPE_INBOX,
                                  "read": int(r.get("read") or 0)})
        self.next_id = max((m["_id"] for m in self.messages), default=0) + 1

    def setup(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.threads: dict[str, int] = {}
        self.next_id = 1
        self.drafts: dict[str, str] = {}
        self.new_query = ""
        start = self.now_epoch_ms()
        for address, msgs in DEFAULT_THREADS:
            for minutes_ago, kind, body in msgs:
                self.add_message(address, body, kind, date=start - minutes_ago * 60_000, read=True)

    def on_open(self) -> None:
        self.new_query = ""

    def current_activity(self) -> str:
        return self.PAGE_ACTIVITIES.get(self.page, self.activity)

    # --- data -----------------------------------------------------------------------------------
    def now_epoch_ms(self) -> int:
        """The phone's clock as epoch milliseconds (its wall-clock time read as UTC)."""
        now = self.phone.now()
        return calendar.timegm(now.timetuple()) * 1000 + now.microsecond // 1000

    def thread_id(self, address: str) -> int:
        """The conversation id of ``address`` (numbers that are the same line share one)."""
        for known, tid in self.threads.items():
            if same_number(known, address):
                return tid
        tid = len(self.threads) + 1
        self.threads[address] = tid
        return tid

    def add_message(self, address: str, body: str, kind: int, date: int | None = None,
                    read: bool = True) -> dict[str, Any]:
        """Store a message (``kind`` 1 received, 2 sent) and return its row."""
        if kind not in (TYPE_INBOX, TYPE_SENT):
            raise ValueError(f"message type must be 1 (inbox) or 2 (sent), got {kind}")
        address = address.strip()
        if not address:
            raise ValueError("a message needs a non-empty address")
        msg = {"_id": self.next_id, "thread_id": self.thread_id(address), "address": address, "body": body,
               "date": self.now_epoch_ms() if date is None else int(date), "type": kind,
               "read": 1 if read or kind == TYPE_SENT else 0}
        self.next_id += 1
        self.messages.append(msg)
        return msg

    def _ordered(self, msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(msgs, key=lambda m: (m["date"], m["_id"]))

    def conversations(self) -> list[tuple[str, list[dict[str, Any]]]]:
        """(address, messages oldest first) per conversation, the most recent conversation first."""
        by_thread: dict[int, list[dict[str, Any]]] = {}
        for m in self.messages:
            by_thread.setdefault(m["thread_id"], []).append(m)
        convs = [(self._ordered(ms)[-1]["address"], self._ordered(ms)) for ms in by_thread.values()]
        return sorted(convs, key=lambda c: (c[1][-1]["date"], c[1][-1]["_id"]), reverse=True)

    def contact_names(self) -> list[tuple[str, str]]:
        """(display name, number) of the phone's contacts, read from the contacts provider if installed."""
        for app in self.phone.apps.values():
            if CONTACTS_AUTHORITY in getattr(app, "authorities", ()):
                rows = app.content_query(f"content://{CONTACTS_AUTHORITY}/data/phones")
                return [(str(r.get("display_name") or ""), str(r.get("number") or "")) for r in rows]
        return []

    def name_for(self, address: str, contacts: list[tuple[str, str]] | None = None) -> str:
        """The contact name for ``address`` (looked up in ``contacts`` or the provider), else the address."""
        for name, number in self.contact_names() if contacts is None else contacts:
            if name and same_number(number, address):
                return name
        return address

    @staticmethod
    def _utc(ms: int) -> _dt.datetime:
        return _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc)

    def _day_label(self, date_ms: int) -> str:
        """The date header above a day's messages in a thread: "Today" or "Oct 14"."""
        when, now = self._utc(date_ms), self._utc(self.now_epoch_ms())
        if when.date() == now.date():
            return "Today"
        return when.strftime("%b ") + str(when.day) if when.year == now.year else when.strftime("%m/%d/%Y")

    def _when(self, date_ms: int) -> str:
        """The time a conversation row shows: "3:34 PM" today, "Oct 14" this year, else the full date."""
        when, now = self._utc(date_ms), self._utc(self.now_epoch_ms())
        if when.date() == now.date():
            return f"{when.hour % 12 or 12}:{when.minute:02d} {'AM' if when.hour < 12 else 'PM'}"
        if when.year == now.year:
            return when.strftime("%b ") + str(when.day)
        return when.strftime("%m/%d/%Y")

    # --- conversation list ----------------------------------------------------------------------
    def build_main(self) -> View:
        """The conversation list, most recent first, and the New conversation FAB."""
        rows: list[View] = []
        contacts = self.contact_names()
        for address, msgs in self.conversations():
            last = msgs[-1]
            unread = any(not m["read"] for m in msgs)
            name = self.name_for(address, contacts)
            row = ListItem(name, last["body"].replace("\n", " "), lambda a=address: self.open_thread(a),
                           icon=name[:1].upper() if name[:1].isalpha() else "#", resource_id="conversation_frame",
                           title_id="conversation_address", subtitle_id="conversation_body_short",
                           trailing=Text(self._when(last["date"]), resource_id="conversation_date", size=12,
                                         color="#444746", padding=(8, 8)),
                           min_height=72)
            if unread:
                row.children[-2].children[0].bold = True
            rows.append(row)
        if rows:
            content = ScrollList(rows, "main:conversations", resource_id="conversations_list")
        else:  # two levels down on the emulator, so the search bar's items list first
            content = View(cls="android.widget.RelativeLayout", resource_id="main_holder", weight=1, children=[
                View(cls="android.widget.LinearLayout", children=[
                    Text("No stored conversations have been found", resource_id="no_conversations_placeholder",
                         align="center", padding=(24, 48), color="#444746"),
                    Text("Start a conversation", resource_id="no_conversations_placeholder_2", align="center",
                         color="#0b57d0", clickable=True, focusable=True, on_click=self.new_conversation)])])
        bar = search_bar("Search", None, "Search", "", lambda _v: None, [
            ("Settings", "settings", self.close_dialog), ("About", "about", self.close_dialog)],
            lambda: self.show_dialog("main_menu"), key="sms_search")
        # the emulator's FAB has no content description and lists right after the coordinator
        fab = Fab("", self.new_conversation, resource_id="conversations_fab", icon="+")
        fab.dump_rank = 1
        return Column(bar, content, fab, cls="android.widget.ScrollView", resource_id="main_coordinator",
                      scrollable=True, weight=1)

    def dialog_main_menu(self) -> View:
        """The main More options menu."""
        items = [ListItem(t, "", self._mark_all_read if t == "Mark all as read" else self.close_dialog,
                          resource_id="menu_item", title_id="title")
                 for t in ("Mark all as read", "Archived conversations")]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def _mark_all_read(self) -> None:
        for m in self.messages:
            m["read"] = 1
        self.close_dialog()

    # --- thread ---------------------------------------------------------------------------------
    def open_thread(self, address: str) -> None:
        """Show the conversation with ``address`` scrolled to its newest message; it becomes read."""
        for m in self.messages:
            if same_number(m["address"], address):
                m["read"] = 1
        known = next((m["address"] for m in self.messages if same_number(m["address"], address)), address)
        self.phone.set_focus(None)
        self.push("thread", address=known)
        self.scroll["thread:messages"] = _BOTTOM

    def _draft(self, address: str) -> str:
        return self.drafts.get(address, "")

    def _set_draft(self, address: str, value: str) -> None:
        self.drafts[address] = value

    def build_thread(self, address: str) -> View:
        """One conversation: dated bubbles (sent on the right) and the compose row."""
        msgs = self._ordered([m for m in self.messages if same_number(m["address"], address)])
        items: list[View] = []
        last_day = None
        for m in msgs:
            day = self._day_label(m["date"])
            if day != last_day:
                last_day = day
                items.append(Text(day, resource_id="thread_date_time", size=12, color="#444746", align="center",
                                  padding=(16, 8)))
            sent = m["type"] == TYPE_SENT
            bubble = View(cls="android.widget.TextView", text=m["body"], resource_id="thread_message_body",
                          clickable=True, focusable=True, long_clickable=True, size=16, padding=(14.0, 10.0),
                          background="#0b57d0" if sent else "#e9eef6", color="#ffffff" if sent else "#1f1f1f",
                          weight=3, on_long_click=lambda mid=m["_id"]: self.show_dialog("message_actions",
                                                                                        message_id=mid))
            side = Spacer(height=1, weight=1)
            items.append(View(cls="android.widget.RelativeLayout", orientation=HORIZONTAL,
                              resource_id="thread_message_holder", padding=(12.0, 4.0),
                              children=[side, bubble] if sent else [bubble, side]))
        title = self.name_for(address)
        draft = self._draft(address)
        compose = View(cls="android.widget.RelativeLayout", orientation=HORIZONTAL, resource_id="message_holder",
                       padding=(8.0, 8.0), background="#f8fafd", children=[
                           View(cls="android.widget.ImageView", content_desc="Attachment",
                                resource_id="thread_add_attachment", clickable=True, focusable=True, width=40, height=56,
                                icon="+", on_click=lambda: None),
                           EditText(draft, lambda v: self._set_draft(address, v), hint="Type a message\u2026",
                                    key="thread_type_message", resource_id="thread_type_message", multiline=True,
                                    weight=1, on_click=self._scroll_to_newest, input_type="sentence"),
                           # the emulator's send button: a Button reading "SMS", described "OK", clickable
                           # only once there is something to send
                           View(cls="android.widget.Button", text="SMS", content_desc="OK",
                                resource_id="thread_send_message", clickable=bool(draft.strip()), focusable=True,
                                enabled=bool(draft.strip()), width=72, height=56, align="center", bold=True,
                                on_click=lambda: self.send(address)),
                       ])
        # the bar's items list before the messages on the emulator: its layout is left out of the dump
        bar = Toolbar(title, on_back=self.pop, resource_id="thread_toolbar", back_desc="Back", actions=[
                ImageButton("Dial number", lambda: self.toast(f"Calling {address}\u2026"), resource_id="dial_number",
                            icon="T", cls="android.widget.Button"),
                ImageButton("Add Person", lambda: None, resource_id="manage_people", icon="+",
                            cls="android.widget.Button"),
                View(cls="android.widget.ImageView", content_desc="More options", clickable=True, focusable=True,
                     long_clickable=True, width=40, height=48, icon=":",
                     on_click=lambda: self.show_dialog("thread_menu", address=address)),
            ])
        bar.layout_only = True
        return Column(
            bar,
            ScrollList(items, "thread:messages", resource_id="thread_messages_list"),
            compose,
            cls="android.widget.LinearLayout", resource_id="thread_coordinator", weight=1,
        )

    def _scroll_to_newest(self) -> None:
        self.scroll["thread:messages"] = _BOTTOM

    def send(self, address: str) -> None:
        """The Send button: store the draft as a sent message and clear the field."""
        body = self._draft(address)
        if not body.strip():
            return
        self.add_message(address, body.rstrip("\n"), TYPE_SENT)
        self.drafts[address] = ""
        self.scroll["thread:messages"] = _BOTTOM

    def _message(self, message_id: int) -> dict[str, Any] | None:
        return next((m for m in self.messages if m["_id"] == message_id), None)

    def dialog_message_actions(self, message_id: int) -> View:
        """Long-press on a bubble: Copy to clipboard, Forward, Delete."""
        items = [ListItem(label, "", cb, resource_id="menu_item", title_id="title") for label, cb in (
            ("Copy to clipboard", lambda: self._copy(message_id)),
            ("Forward", lambda: self._forward(message_id)),
            ("Delete", lambda: self.show_dialog("delete_message", message_id=message_id)),
        )]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def _copy(self, message_id: int) -> None:
        m = self._message(message_id)
        self.close_dialog()
        if m is not None:
            self.phone.set_clipboard(m["body"])
            self.toast("Copied to clipboard")

    def _forward(self, message_id: int) -> None:
        m = self._message(message_id)
        self.close_dialog()
        if m is not None:
            self.new_conversation(forward=m["body"])

    def dialog_delete_message(self, message_id: int) -> View:
        """Confirm deleting one message."""
        return Dialog("", "Are you sure you want to delete 1 item?",
                      [("No", self.close_dialog), ("Yes", lambda: self._delete_message(message_id))],
                      button_ids=NEGATIVE_POSITIVE)

    def _delete_message(self, message_id: int) -> None:
        self.messages = [m for m in self.messages if m["_id"] != message_id]
        self.close_dialog()
        if self.page == "thread" and not any(same_number(m["address"], self.page_args["address"])
                                             for m in self.messages):
            self.pop()

    def dialog_thread_menu(self, address: str) -> View:
        """The thread's More options menu."""
        items = [ListItem(label, "", cb, resource_id="menu_item", title_id="title") for label, cb in (
            ("Delete", lambda: self.show_dialog("delete_thread", address=address)),
            ("Mark as unread", lambda: self._mark_unread(address)),
        )]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def dialog_delete_thread(self, address: str) -> View:
        """Confirm deleting a whole conversation."""
        return Dialog("", "Are you sure you want to delete all messages of this conversation?",
                      [("No", self.close_dialog), ("Yes", lambda: self._delete_thread(address))],
                      button_ids=NEGATIVE_POSITIVE)

    def _delete_thread(self, address: str) -> None:
        self.messages = [m for m in self.messages if not same_number(m["address"], address)]
        self.close_dialog()
        while self.page != "main" and self.pop():
            pass

    def _mark_unread(self, address: str) -> None:
        msgs = [m for m in self.messages if same_number(m["address"], address) and m["type"] == TYPE_INBOX]
        if msgs:
            self._ordered(msgs)[-1]["read"] = 0
        self.close_dialog()
        while self.page != "main" and self.pop():
            pass

    # --- new conversation -----------------------------------------------------------------------
    def new_conversation(self, forward: str = "") -> None:
        """The FAB (or Forward): pick a contact or type a number."""
        self.new_query = ""
        self.push("new", forward=forward)
        self.phone.set_focus("new_conversation_address")

    def _address_done(self) -> None:
        """Done on the address field does nothing there: the keyboard stays up (the real episode's next list)."""
        self.phone.keyboard_shown = True

    def _set_new_query(self, value: str) -> None:
        self.new_query = value
        self.scroll["new:contacts"] = 0

    def start_conversation(self, address: str, forward: str = "") -> None:
        """Open (or create) the thread with ``address``, carrying a forwarded text into its draft."""
        address = address.strip()
        if not address:
            return
        self.pop()
        if forward:
            self.drafts[address] = forward
        self.open_thread(address)
        # the emulator keeps the keyboard up, now on the message field
        self.phone.set_focus("thread_type_message")

    def build_new(self, forward: str = "") -> View:
        """New conversation: a number/contact field and the matching contacts."""
        q = self.new_query.strip().lower()
        qd = digits_of(q)
        contacts = sorted(self.contact_names(), key=lambda c: c[0].lower())
        items = [ListItem(name or number, number, lambda n=number: self.start_conversation(n, forward),
                          icon=(name or "#")[:1].upper(), resource_id="item_contact_frame",
                          title_id="item_contact_name", subtitle_id="item_contact_number")
                 for name, number in contacts
                 if not q or q in name.lower() or (qd and qd in digits_of(number))]
        if items:
            body: View = ScrollList(items, "new:contacts", resource_id="contacts_list", weight=1)
        else:
            body = Text("No contacts found", resource_id="no_contacts_placeholder", padding=(24, 24), color="#444746",
                        weight=1)
        # the confirm tick (an ImageView with no description) shows once something is typed; Enter does not confirm
        # on the emulator. The letter fast-scroller lies over the tick's row at the right edge, so a tap on it
        # lands on the tick
        def confirm() -> None:
            if q:
                self.start_conversation(self.new_query, forward)

        field: list[View] = [EditText(self.new_query, self._set_new_query, hint="Add Contact or Number\u2026",
                                      key="new_conversation_address", resource_id="new_conversation_address",
                                      weight=1, ime_action="Done", input_type="sentence",
                                      on_submit=self._address_done)]  # Gboard's action key reads Done there
        if q:
            field.append(View(cls="android.widget.ImageView", resource_id="new_conversation_confirm", clickable=True,
                              focusable=True, width=42, height=42, icon="\u2713", on_click=confirm))
        field.append(View(cls="android.widget.LinearLayout", resource_id="contacts_letter_fastscroller",
                          clickable=True, focusable=True, width=28, height=42, on_click=confirm))
        return Column(
            Toolbar("New conversation", on_back=self._close_new, resource_id="new_conversation_toolbar",
                    back_desc="Back"),
            View(cls="android.widget.RelativeLayout", orientation=HORIZONTAL, padding=(12.0, 8.0), children=field),
            View(cls="android.widget.RelativeLayout", weight=1, children=[body]),
            cls="android.widget.LinearLayout", resource_id="new_conversation_holder", weight=1,
        )

    def _close_new(self) -> None:
        self.phone.set_focus(None)
        self.pop()

    # --- intents --------------------------------------------------------------------------------
    def handle_intent(self, action: str | None, data: str | None, extras: dict[str, str]) -> bool:
        """``SENDTO``/``VIEW`` with ``sms:``/``smsto:`` data opens the thread (``sms_body`` fills the draft)."""
        if not data:
            return False
        scheme, _, number = data.partition(":")
        if scheme.lower() not in ("sms", "smsto", "mms", "mmsto") or not number.strip():
            return False
        number = number.strip().lstrip("/")
        if self.pages:
            self.pages = self.pages[:1]
        else:
            self.open()
        if extras.get("sms_body"):
            self.drafts[number] = extras["sms_body"]
        self.open_thread(number)
        return True

    # --- content provider -----------------------------------------------------------------------
    @staticmethod
    def _box(uri: str) -> int | None:
        rest = uri.split("://", 1)[-1]
        authority, _, path = rest.partition("/")
        if authority != "sms":
            raise ValueError(f"unknown sms uri {uri!r}")
        box = path.strip("/").split("/")[0]
        if box == "":
            return None
        if box in BOXES:
            return BOXES[box]
        raise ValueError(f"unknown sms box {box!r} in {uri!r}; use content://sms, content://sms/inbox or "
                         "content://sms/sent")

    @staticmethod
    def _row(m: dict[str, Any]) -> Row:
        return {"_id": m["_id"], "thread_id": m["thread_id"], "address": m["address"], "person": None,
                "date": m["date"], "date_sent": m["date"] if m["type"] == TYPE_INBOX else 0, "read": m["read"],
                "status": -1, "type": m["type"], "subject": None, "body": m["body"], "seen": 1}

    def content_query(self, uri: str) -> list[Row]:
        box = self._box(uri)
        msgs = [m for m in self.messages if box is None or m["type"] == box]
        return [self._row(m) for m in sorted(msgs, key=lambda m: (m["date"], m["_id"]), reverse=True)]

    def content_insert(self, uri: str, values: Row) -> str:
        box = self._box(uri)
        kind = box if box is not None else int_column(values, "type", TYPE_INBOX)
        if "address" not in values or "body" not in values:
            raise ValueError("inserting a message needs `address` and `body`")
        m = self.add_message(str(values["address"]), str(values["body"]), kind,
                             date=int_column(values, "date", self.now_epoch_ms()),
                             read=bool(int_column(values, "read", 1 if kind == TYPE_SENT else 0)))
        self.phone.invalidate()
        return f"content://sms/{m['_id']}"

    def content_update(self, uri: str, values: Row, match: RowMatch) -> int:
        box = self._box(uri)
        n = 0
        for m in self.messages:
            if (box is None or m["type"] == box) and match(self._row(m)):
                if "read" in values:
                    m["read"] = int_column(values, "read", m["read"])
                if "body" in values:
                    m["body"] = str(values["body"])
                n += 1
        self.phone.invalidate()
        return n

    def content_delete(self, uri: str, match: RowMatch) -> int:
        box = self._box(uri)
        keep = [m for m in self.messages if not ((box is None or m["type"] == box) and match(self._row(m)))]
        n = len(self.messages) - len(keep)
        self.messages = keep
        if not self.messages:
            self.threads = {}
        if self.page == "thread" and not any(same_number(m["address"], self.page_args["address"])
                                             for m in self.messages) and not self._draft(
                                                 self.page_args["address"]):
            self.pages = self.pages[:1]
        self.phone.invalidate()
        return n
