"""Google Contacts (com.google.android.contacts): a sorted contact list with search, a create/edit form,
contact details (call, text, edit, delete) and the contacts content provider.

Pages: ``main`` (search field, contacts grouped under letter headers, "Create contact" FAB),
``editor`` (First name, Last name, Company, phone rows with a label picker, Email, Website; Save in
the app bar, "Discard changes?" on Back when edited), ``detail`` (name, Call/Text/Video actions, phone,
email and website rows, "Edit contact" and "More options" -> Delete with a confirmation dialog).

Provider (authorities ``com.android.contacts`` and the legacy ``contacts``), what tasks read and
write through ``content``:

* ``content://com.android.contacts/data/phones`` and ``content://contacts/phones``: one row per
  phone number: ``_id, contact_id, display_name, number, type, label`` (``type`` is Android's
  ``Phone.TYPE_*`` code: 1 Home, 2 Mobile, 3 Work, 7 Other, 12 Main; ``label`` its name). Insert
  with ``display_name`` (or ``given_name``/``family_name``), ``number`` and ``label`` or ``type``
  creates a contact, or adds a number to ``contact_id`` when given. Update changes ``number``/``label``.
* ``content://com.android.contacts/contacts``: one row per contact: ``_id, display_name,
  given_name, family_name, has_phone_number, company, email, website``. Delete removes whole contacts.
"""

from __future__ import annotations

from typing import Any

from android_gym.sim.app import App, Row, RowMatch, register_app
from android_gym.sim.view import (
    HORIZONTAL,
    Button,
    Column,
    Dialog,
    EditText,
    Fab,
    Image,
    ImageButton,
    ListItem,
    RadioButton,
    ScrollList,
    Text,
    Toolbar,
    View,
)

CONTACTS_PKG = "com.google.android.contacts"
SMS_PKG = "com.simplemobiletools.smsmessenger"
DIALER_PKG = "com.google.android.dialer"

PHONE_TYPES: dict[str, int] = {"Mobile": 2, "Home": 1, "Work": 3, "Main": 12, "Other": 7}
"""Phone label -> Android ``ContactsContract.CommonDataKinds.Phone.TYPE_*`` code, in picker order."""
NEGATIVE_POSITIVE = ("android:id/button2", "android:id/button1")  # AlertDialog ids of (Cancel, OK)
PHONE_LABELS: dict[int, str] = {code: label for label, code in PHONE_TYPES.items()}

# The contacts a factory-fresh simulated phone holds (tasks replace them through the provider).
DEFAULT_CONTACTS: tuple[tuple[str, str, str, str], ...] = (
    ("Adam", "Kowalski", "+12025550143", "Mobile"),
    ("Beatriz", "Santos", "+13125550178", "Mobile"),
    ("Chloe", "Martin", "+14155550112", "Home"),
    ("Daniel", "Okafor", "+16175550190", "Mobile"),
    ("Elena", "Petrova", "+12065550134", "Work"),
    ("Farah", "Haddad", "+17135550167", "Mobile"),
    ("Gabriel", "Rossi", "+13055550121", "Mobile"),
    ("Hiro", "Tanaka", "+15035550186", "Home"),
    ("Isabel", "Moreno", "+17025550159", "Mobile"),
    ("Jonas", "Berg", "+16125550140", "Work"),
    ("Keisha", "Brown", "+14045550173", "Mobile"),
    ("Liam", "O'Connor", "+16465550128", "Mobile"),
    ("Mei", "Lin", "+14085550195", "Mobile"),
    ("Nikhil", "Rao", "+19725550116", "Work"),
    ("Olivia", "Wright", "+13105550152", "Home"),
    ("Pavel", "Novak", "+15125550107", "Mobile"),
    ("Rosa", "Delgado", "+12135550164", "Mobile"),
    ("Samir", "Aziz", "+17185550183", "Other"),
    ("Tessa", "Lund", "+18015550131", "Mobile"),
    ("Yusuf", "Demir", "+16195550148", "Mobile"),
)


def format_number(number: str) -> str:
    """A phone number as the real Contacts shows it on a US phone, formatted while typed (NANP layout).

    Digits only are grouped as the number grows: up to 7 as a local number ("555-0134"), 8 to 10 with the
    area code in brackets ("(876) 543-21", "(650) 555-0134"), after a leading national prefix 1 always so
    ("1 (234) 567-8"), and "+1" numbers as "+1 650-555-0134"; spaces, dashes, dots and brackets typed in
    the number are regrouped so. Anything else (a leading 0, other country codes, more digits than a US
    number has, letters or other marks) is shown as stored.
    """
    text = number.strip()
    bare = "".join(ch for ch in text if ch not in " -().")
    if bare.startswith("+"):
        digits = bare[1:]
        if digits.isdigit() and len(digits) == 11 and digits[0] == "1":
            return f"+1 {digits[1:4]}-{digits[4:7]}-{digits[7:]}"
        return text
    if not bare.isdigit() or bare[0] == "0":
        return text
    prefix, national = ("1 ", bare[1:]) if bare[0] == "1" else ("", bare)
    if len(national) > 10 or (prefix and not national):
        return text
    if not prefix and len(national) <= 7:
        return national if len(national) <= 3 else f"{national[:3]}-{national[3:]}"
    if len(national) <= 3:
        return prefix + national
    area, rest = national[:3], national[3:]
    return f"{prefix}({area}) {rest[:3]}" + (f"-{rest[3:]}" if len(rest) > 3 else "")


def display_name(first: str, last: str) -> str:
    """The name Contacts shows: given name then family name, either may be empty."""
    return " ".join(p for p in (first.strip(), last.strip()) if p)


def split_name(name: str) -> tuple[str, str]:
    """Split a display name into (given, family) at the first space, as the editor's name fields hold it."""
    name = " ".join(name.split())
    first, _, last = name.partition(" ")
    return first, last


def label_of(value: Any) -> str:
    """A phone label from a provider value: a label name ("work", "Mobile") or a ``TYPE_*`` code ("3")."""
    text = str(value).strip()
    if text.isdigit():
        code = int(text)
        if code not in PHONE_LABELS:
            raise ValueError(f"unknown phone type {code}; known: {PHONE_LABELS}")
        return PHONE_LABELS[code]
    for label in PHONE_TYPES:
        if label.lower() == text.lower():
            return label
    raise ValueError(f"unknown phone label {value!r}; known: {', '.join(PHONE_TYPES)}")


def _empty_form() -> dict[str, Any]:
    return {"first": "", "last": "", "company": "", "email": "", "website": "",
            "phones": [{"number": "", "label": "Mobile"}]}


@register_app
class ContactsApp(App):
    """Google Contacts: contacts are plain dicts in ``self.contacts``; the editor works on ``self.form``."""

    package = CONTACTS_PKG
    label = "Contacts"
    activity = "com.android.contacts.activities.PeopleActivity"
    authorities = ("com.android.contacts", "contacts")
    data_packages = ("com.android.providers.contacts",)
    icon_color = "#1a73e8"

    PAGE_ACTIVITIES: dict[str, str] = {
        "main": "com.android.contacts.activities.PeopleActivity",
        "editor": "com.android.contacts.activities.ContactEditorActivity",
        "detail": "com.android.contacts.activities.QuickContactActivity",
    }

    def clear_data(self) -> None:
        """``pm clear com.android.providers.contacts``: no contacts."""
        self.contacts = []

    def setup(self) -> None:
        self.contacts: list[dict[str, Any]] = []
        self.next_id = 1
        self.next_phone_id = 1
        for first, last, number, label in DEFAULT_CONTACTS:
            self.add_contact(first, last, [(number, label)])
        self.query = ""
        self.form: dict[str, Any] = _empty_form()
        self.form_saved: dict[str, Any] = _empty_form()

    def on_open(self) -> None:
        self.query = ""
        self.form = _empty_form()

    def current_activity(self) -> str:
        return self.PAGE_ACTIVITIES.get(self.page, self.activity)

    # --- data -----------------------------------------------------------------------------------
    def add_contact(self, first: str, last: str, phones: list[tuple[str, str]], company: str = "",
                    email: str = "", website: str = "") -> dict[str, Any]:
        """Create a contact with (number, label) phones and return it."""
        contact = {"_id": self.next_id, "first": first.strip(), "last": last.strip(), "company": company.strip(),
                   "email": email.strip(), "website": website.strip(), "phones": []}
        self.next_id += 1
        for number, label in phones:
            self._add_phone(contact, number, label)
        self.contacts.append(contact)
        return contact

    def _add_phone(self, contact: dict[str, Any], number: str, label: str) -> None:
        contact["phones"].append({"_id": self.next_phone_id, "number": number.strip(), "label": label})
        self.next_phone_id += 1

    def contact(self, contact_id: int) -> dict[str, Any] | None:
        """The contact with ``_id`` ``contact_id``, or None."""
        for c in self.contacts:
            if c["_id"] == contact_id:
                return c
        return None

    def sorted_contacts(self) -> list[dict[str, Any]]:
        """Contacts in list order: by display name, case-insensitively (nameless ones by number last)."""
        def key(c: dict[str, Any]) -> tuple[int, str]:
            name = display_name(c["first"], c["last"])
            if name:
                return (0, name.lower())
            return (1, c["phones"][0]["number"] if c["phones"] else "")
        return sorted(self.contacts, key=key)

    @staticmethod
    def shown_name(c: dict[str, Any]) -> str:
        """What the list shows for a contact: its name, else its first number, else "(No name)"."""
        name = display_name(c["first"], c["last"])
        if name:
            return name
        if c["phones"]:
            return c["phones"][0]["number"]
        return c["email"] or "(No name)"

    # --- list page ------------------------------------------------------------------------------
    def build_main(self) -> View:
        """The contact list: search field, letter headers, rows, the Create contact FAB."""
        q = self.query.strip().lower()
        digits = "".join(ch for ch in q if ch.isdigit())
        items: list[View] = []
        header = None
        for c in self.sorted_contacts():
            name = self.shown_name(c)
            if q and q not in name.lower() and not (
                    digits and any(digits in "".join(ch for ch in p["number"] if ch.isdigit())
                                   for p in c["phones"])):
                continue
            letter = name[:1].upper() if name[:1].isalpha() else "#"
            if letter != header and not q:
                header = letter
                items.append(Text(letter, resource_id="header_text", size=14, bold=True, color="#0b57d0",
                                  padding=(24, 8)))
            row = ListItem(name, "", lambda cid=c["_id"]: self.open_contact(cid), icon=name[:1].upper(),
                           resource_id="contact_row", title_id="cliv_name_textview")
            row.find(lambda v: v.resource_id == "cliv_name_textview").content_desc = name  # read out as the name
            items.append(row)
        if not items:
            items.append(Text("No contacts" if not q else f"No results for \u201c{self.query.strip()}\u201d",
                              resource_id="empty_list_text", align="center", padding=(24, 32), color="#444746"))
        search = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, padding=(16.0, 8.0), children=[
            EditText(self.query, self._set_query, hint="Search contacts", key="contacts_search",
                     resource_id="open_search_bar_text_view", weight=1),
            ImageButton("Clear search", self._clear_query, resource_id="search_close_button", icon="x")
            if self.query else None,
        ])
        search.children = [ch for ch in search.children if ch is not None]
        return Column(
            search,
            Text("Contacts", resource_id="toolbar_title", size=22, padding=(24, 8)) if not q else None,
            ScrollList(items, "main:list", resource_id="contact_list"),
            Fab("Create contact", self.new_contact, resource_id="floating_action_button", icon="+"),
            cls="android.widget.FrameLayout", resource_id="contacts_container", weight=1,
        )

    def _set_query(self, value: str) -> None:
        self.query = value
        self.scroll["main:list"] = 0

    def _clear_query(self) -> None:
        self.query = ""
        self.phone.set_focus("contacts_search")

    def open_contact(self, contact_id: int) -> None:
        """Show a contact's details."""
        self.phone.set_focus(None)
        self.push("detail", contact_id=contact_id)

    # --- editor ---------------------------------------------------------------------------------
    def new_contact(self) -> None:
        """The "Create contact" FAB: an empty form."""
        self.form = _empty_form()
        self.form_saved = _empty_form()
        self.phone.set_focus(None)
        self.push("editor", contact_id=None)

    def handle_intent(self, action: str | None, data: str | None, extras: dict[str, str]) -> bool:
        """``am start -a android.intent.action.INSERT -t vnd.android.cursor.dir/contact -e name N -e phone P``:
        the "Create contact" editor filled in from the extras (AndroidWorld adds contacts this way)."""
        if action != "android.intent.action.INSERT":
            return False
        if not self.running:
            self.open()
        self.new_contact()
        first, _, last = extras.get("name", "").strip().partition(" ")
        self.form.update(first=first, last=last, company=extras.get("company", ""), email=extras.get("email", ""))
        self.form["phones"][0]["number"] = extras.get("phone", "")
        return True

    def edit_contact(self, contact_id: int) -> None:
        """Open the editor on an existing contact."""
        c = self.contact(contact_id)
        if c is None:
            return
        phones = [{"number": p["number"], "label": p["label"]} for p in c["phones"]] or [
            {"number": "", "label": "Mobile"}]
        self.form = {"first": c["first"], "last": c["last"], "company": c["company"], "email": c["email"],
                     "website": c["website"], "phones": phones}
        self.form_saved = {**self.form, "phones": [dict(p) for p in phones]}
        self.push("editor", contact_id=contact_id)

    def _set_form(self, field_name: str, value: str) -> None:
        self.form[field_name] = value

    def _set_phone(self, index: int, value: str) -> None:
        self.form["phones"][index]["number"] = value

    def _add_phone_row(self) -> None:
        self.form["phones"].append({"number": "", "label": "Mobile"})

    def _remove_phone_row(self, index: int) -> None:
        if len(self.form["phones"]) > 1:
            del self.form["phones"][index]
        else:
            self.form["phones"][0]["number"] = ""
        self.phone.set_focus(None)

    def form_dirty(self) -> bool:
        """True when the editor form differs from what it was opened with."""
        return self.form != self.form_saved

    def build_editor(self, contact_id: int | None) -> View:
        """The create/edit form over ``self.form`` (Save in the app bar, Cancel goes back)."""
        f = self.form
        title = "Create contact" if contact_id is None else "Edit contact"
        fields: list[View] = [
            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, padding=(16.0, 12.0), children=[
                Image("Add contact photo", resource_id="photo", icon="+", width=64, height=64),
                Text("Add picture", resource_id="add_photo_text", color="#0b57d0", padding=(16, 20), weight=1),
            ]),
            self._field_row("P", EditText(f["first"], lambda v: self._set_form("first", v), hint="First name",
                                          key="editor_first", resource_id="first_name_edit", weight=1)),
            self._field_row("", EditText(f["last"], lambda v: self._set_form("last", v), hint="Last name",
                                         key="editor_last", resource_id="last_name_edit", weight=1)),
            self._field_row("C", EditText(f["company"], lambda v: self._set_form("company", v), hint="Company",
                                          key="editor_company", resource_id="company_edit", weight=1)),
        ]
        for i, ph in enumerate(f["phones"]):
            fields.append(self._field_row("T" if i == 0 else "", EditText(
                ph["number"], lambda v, i=i: self._set_phone(i, v), hint="Phone", key=f"editor_phone_{i}",
                resource_id="phone_edit", weight=1),
                ImageButton("Delete", lambda i=i: self._remove_phone_row(i), resource_id="delete_button",
                            icon="x") if ph["number"] or i else None))
            fields.append(View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, padding=(72.0, 0.0),
                               children=[View(cls="android.widget.Spinner", text=ph["label"],
                                              content_desc=f"{ph['label']} Phone", resource_id="spinner",
                                              clickable=True, focusable=True, height=48, width=120,
                                              padding=(8.0, 8.0), max_lines=1,
                                              on_click=lambda i=i: self._pick_label(i))]))
        fields.append(View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, padding=(72.0, 0.0),
                           children=[Button("Add phone", self._add_phone_row, resource_id="add_phone_button",
                                            background=None, width=160)]))
        fields.append(self._field_row("@", EditText(f["email"], lambda v: self._set_form("email", v), hint="Email",
                                                    key="editor_email", resource_id="email_edit", weight=1)))
        fields.append(self._field_row("W", EditText(f["website"], lambda v: self._set_form("website", v),
                                                    hint="Website", key="editor_website", resource_id="website_edit",
                                                    weight=1)))
        return Column(
            Toolbar(title, on_back=self._editor_back, back_desc="Cancel", resource_id="editor_toolbar",
                    actions=[Button("Save", lambda: self.save_form(contact_id), resource_id="toolbar_button",
                                    background="#0b57d0", color="#ffffff", width=96)]),
            ScrollList(fields, "editor:form", resource_id="editor_scroll"),
            cls="android.widget.LinearLayout", resource_id="editor_root", weight=1,
        )

    @staticmethod
    def _field_row(icon: str, field: View, trailing: View | None = None) -> View:
        return View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, padding=(16.0, 6.0), children=[
            c for c in (Image(icon=icon or " ", width=40, height=40), field, trailing) if c is not None])

    def _pick_label(self, index: int) -> None:
        self.phone.set_focus(None)
        self.show_dialog("phone_label", index=index)

    def dialog_phone_label(self, index: int) -> View:
        """The phone label picker of phone row ``index``."""
        current = self.form["phones"][index]["label"] if index < len(self.form["phones"]) else "Mobile"
        options = [RadioButton(label == current, lambda lb=label: self._set_label(index, lb), text=label,
                               resource_id="text1")
                   for label in PHONE_TYPES]
        return Dialog("Phone label", Column(*options, resource_id="select_dialog_listview", padding=(16, 0)),
                      [("Cancel", self.close_dialog)], button_ids=NEGATIVE_POSITIVE)

    def _set_label(self, index: int, label: str) -> None:
        if index < len(self.form["phones"]):
            self.form["phones"][index]["label"] = label
        self.close_dialog()

    def _editor_back(self) -> None:
        if self.form_dirty():
            self.phone.set_focus(None)
            self.show_dialog("discard")
        else:
            self.pop()

    def on_back(self) -> bool:
        if self.dialog is None and self.page == "editor" and self.form_dirty():
            self.show_dialog("discard")
            return True
        return super().on_back()

    def dialog_discard(self) -> View:
        """Leaving an edited form: keep editing or discard."""
        return Dialog("Discard changes?", None, [("Cancel", self.close_dialog), ("Discard", self._discard)],
                      button_ids=NEGATIVE_POSITIVE)

    def _discard(self) -> None:
        self.close_dialog()
        self.form = _empty_form()
        self.form_saved = _empty_form()
        self.pop()

    def save_form(self, contact_id: int | None) -> None:
        """Save the editor: create or update the contact, then show its details."""
        f = self.form
        phones = [(p["number"].strip(), p["label"]) for p in f["phones"] if p["number"].strip()]
        if not (f["first"].strip() or f["last"].strip() or phones or f["email"].strip() or f["company"].strip()
                or f["website"].strip()):
            self.phone.set_focus(None)
            self.pop()
            self.toast("Empty contact discarded")
            return
        if contact_id is None:
            c = self.add_contact(f["first"], f["last"], phones, f["company"], f["email"], f["website"])
        else:
            c = self.contact(contact_id)
            if c is None:
                self.pop()
                return
            c.update(first=f["first"].strip(), last=f["last"].strip(), company=f["company"].strip(),
                     email=f["email"].strip(), website=f["website"].strip())
            c["phones"] = []
            for number, label in phones:
                self._add_phone(c, number, label)
        self.form_saved = {**f, "phones": [dict(p) for p in f["phones"]]}
        self.phone.set_focus(None)
        if contact_id is None:
            self.replace("detail", contact_id=c["_id"])
        else:
            self.pop()
        self.toast("Contact saved")

    # --- details --------------------------------------------------------------------------------
    def build_detail(self, contact_id: int) -> View:
        """A contact's details: name, Call/Text/Video, numbers, Edit contact and More options."""
        c = self.contact(contact_id)
        if c is None:
            return Column(Toolbar("", on_back=self.pop), Text("Contact not found", padding=(24, 24)), weight=1)
        name = self.shown_name(c)
        first_number = c["phones"][0]["number"] if c["phones"] else ""
        actions = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, padding=(16.0, 8.0), children=[
            self._action("Call", lambda: self._call(first_number), "call_button", enabled=bool(first_number)),
            self._action("Text", lambda: self._text(first_number), "text_button", enabled=bool(first_number)),
            self._action("Video", lambda: self.toast("No video app"), "video_button", enabled=bool(first_number)),
        ])
        rows: list[View] = [
            View(cls="android.widget.FrameLayout", height=120, children=[
                Image("Contact photo", resource_id="photo", icon=name[:1].upper(), width=96, height=96)]),
            Text(name, resource_id="large_title", size=28, align="center", padding=(24, 8)),
            Text(c["company"], resource_id="organization", size=16, color="#444746", align="center")
            if c["company"] else None,
            actions,
            Text("Contact info", resource_id="header", size=16, bold=True, padding=(24, 12)),
        ]
        for p in c["phones"]:
            shown = format_number(p["number"])
            rows.append(ListItem(shown, p["label"], lambda n=p["number"]: self._call(n), icon="T",
                                 resource_id="phone_row", title_id="header", subtitle_id="sub_header",
                                 content_desc=f"Call {p['label']} {shown}",
                                 trailing=ImageButton(f"Send message to {shown}",
                                                      lambda n=p["number"]: self._text(n),
                                                      resource_id="third_icon", icon="M")))
        if c["email"]:
            rows.append(ListItem(c["email"], "Email", None, icon="@", resource_id="email_row", title_id="header",
                                 subtitle_id="sub_header"))
        if c["website"]:
            rows.append(ListItem(c["website"], "Website", None, icon="W", resource_id="website_row",
                                 title_id="header", subtitle_id="sub_header"))
        return Column(
            Toolbar("", on_back=self.pop, resource_id="toolbar", actions=[
                ImageButton("Favorite", lambda: None, resource_id="menu_star", icon="*"),
                ImageButton("Edit contact", lambda: self.edit_contact(contact_id), resource_id="menu_edit",
                            icon="E"),
                ImageButton("More options", lambda: self.show_dialog("detail_menu", contact_id=contact_id),
                            icon=":"),
            ]),
            ScrollList([r for r in rows if r is not None], "detail:info", resource_id="detail_scroll"),
            cls="android.widget.LinearLayout", resource_id="quickcontact_root", weight=1,
        )

    @staticmethod
    def _action(label: str, on_click: Any, rid: str, enabled: bool) -> View:
        return View(cls="android.widget.LinearLayout", weight=1, children=[
            Button(label, on_click if enabled else None, resource_id=rid, enabled=enabled, background="#d3e3fd")])

    def _call(self, number: str) -> None:
        """The Call action (and a tap on a number): the phone app's in-call screen when it is installed."""
        if not number:
            return
        dialer = self.phone.apps.get(DIALER_PKG)
        if dialer is None:
            self.toast(f"Calling {number}\u2026")
            return
        self.phone.launch(DIALER_PKG)
        dialer.place_call(number)
        self.phone.invalidate()

    def _text(self, number: str) -> None:
        """The Text action: open the SMS app on a conversation with ``number`` when it is installed."""
        if not number:
            return
        sms = self.phone.apps.get(SMS_PKG)
        if sms is None:
            self.toast("No messaging app installed")
            return
        self.phone.launch(SMS_PKG)
        sms.handle_intent("android.intent.action.SENDTO", f"smsto:{number}", {})
        self.phone.invalidate()

    def dialog_detail_menu(self, contact_id: int) -> View:
        """The More options menu of the details page."""
        items = [ListItem(label, "", cb, resource_id="menu_item", title_id="title")
                 for label, cb in (("Share", lambda: self._share(contact_id)),
                                   ("Delete", lambda: self.show_dialog("delete", contact_id=contact_id)),
                                   ("Help & feedback", self.close_dialog))]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def _share(self, contact_id: int) -> None:
        self.close_dialog()
        self.toast("Sharing is not available")

    def dialog_delete(self, contact_id: int) -> View:
        """The delete confirmation."""
        return Dialog("Delete this contact?", "This contact will be permanently deleted from this device.",
                      [("Cancel", self.close_dialog), ("Delete", lambda: self.delete_contact(contact_id))],
                      button_ids=NEGATIVE_POSITIVE)

    def delete_contact(self, contact_id: int) -> None:
        """Delete a contact (confirmed in the dialog) and go back to the list."""
        self.contacts = [c for c in self.contacts if c["_id"] != contact_id]
        self.close_dialog()
        while self.page != "main" and self.pop():
            pass
        self.toast("1 contact deleted")

    # --- content provider -----------------------------------------------------------------------
    @staticmethod
    def _path(uri: str) -> str:
        rest = uri.split("://", 1)[-1]
        authority, _, path = rest.partition("/")
        path = path.strip("/")
        if authority == "contacts" and path in ("phones", "people/phones"):
            return "data/phones"
        if authority == "contacts" and path == "people":
            return "contacts"
        if path in ("data/phones", "contacts", "raw_contacts"):
            return "contacts" if path == "raw_contacts" else path
        raise ValueError(f"unknown contacts uri {uri!r}; use content://com.android.contacts/data/phones "
                         "or content://com.android.contacts/contacts")

    def _phone_rows(self) -> list[Row]:
        rows: list[Row] = []
        for c in self.sorted_contacts():
            name = display_name(c["first"], c["last"])
            for p in c["phones"]:
                rows.append({"_id": p["_id"], "contact_id": c["_id"], "display_name": name, "number": p["number"],
                             "type": PHONE_TYPES[p["label"]], "label": p["label"]})
        return rows

    def _contact_rows(self) -> list[Row]:
        return [{"_id": c["_id"], "display_name": display_name(c["first"], c["last"]), "given_name": c["first"],
                 "family_name": c["last"], "has_phone_number": int(bool(c["phones"])), "company": c["company"],
                 "email": c["email"], "website": c["website"]} for c in self.sorted_contacts()]

    def content_query(self, uri: str) -> list[Row]:
        path = self._path(uri)
        return self._phone_rows() if path == "data/phones" else self._contact_rows()

    def content_insert(self, uri: str, values: Row) -> str:
        path = self._path(uri)
        if "given_name" in values or "family_name" in values:
            first, last = str(values.get("given_name", "")), str(values.get("family_name", ""))
        else:
            first, last = split_name(str(values.get("display_name", values.get("name", ""))))
        number = str(values.get("number", values.get("data1", ""))).strip()
        label = label_of(values.get("label", values.get("type", "Mobile")))
        if path == "data/phones":
            if not number:
                raise ValueError("inserting a phone row needs a non-empty `number`")
            if "contact_id" in values:
                c = self.contact(int(values["contact_id"]))
                if c is None:
                    raise ValueError(f"no contact with _id {values['contact_id']}")
                self._add_phone(c, number, label)
                return f"content://com.android.contacts/data/{c['phones'][-1]['_id']}"
            c = self.add_contact(first, last, [(number, label)], str(values.get("company", "")),
                                 str(values.get("email", "")))
            self.phone.invalidate()
            return f"content://com.android.contacts/data/{c['phones'][-1]['_id']}"
        if not (first or last):
            raise ValueError("inserting a contact needs `display_name` or `given_name`/`family_name`")
        c = self.add_contact(first, last, [(number, label)] if number else [], str(values.get("company", "")),
                             str(values.get("email", "")))
        self.phone.invalidate()
        return f"content://com.android.contacts/contacts/{c['_id']}"

    def content_update(self, uri: str, values: Row, match: RowMatch) -> int:
        path = self._path(uri)
        changed = 0
        if path == "data/phones":
            by_phone_id = {r["_id"]: r for r in self._phone_rows()}
            for c in self.contacts:
                for p in c["phones"]:
                    if match(by_phone_id[p["_id"]]):
                        if "number" in values:
                            p["number"] = str(values["number"]).strip()
                        if "label" in values or "type" in values:
                            p["label"] = label_of(values.get("label", values.get("type")))
                        changed += 1
        else:
            rows = {r["_id"]: r for r in self._contact_rows()}
            for c in self.contacts:
                if match(rows[c["_id"]]):
                    if "display_name" in values:
                        c["first"], c["last"] = split_name(str(values["display_name"]))
                    for key, attr in (("given_name", "first"), ("family_name", "last"), ("company", "company"),
                                      ("email", "email"), ("website", "website")):
                        if key in values:
                            c[attr] = str(values[key]).strip()
                    changed += 1
        self.phone.invalidate()
        return changed

    def content_delete(self, uri: str, match: RowMatch) -> int:
        path = self._path(uri)
        deleted = 0
        if path == "data/phones":
            rows = {r["_id"]: r for r in self._phone_rows()}
            for c in self.contacts:
                keep = [p for p in c["phones"] if not match(rows[p["_id"]])]
                deleted += len(c["phones"]) - len(keep)
                c["phones"] = keep
        else:
            rows = {r["_id"]: r for r in self._contact_rows()}
            keep_contacts = [c for c in self.contacts if not match(rows[c["_id"]])]
            deleted = len(self.contacts) - len(keep_contacts)
            self.contacts = keep_contacts
        if deleted and self.page == "detail" and self.contact(self.page_args.get("contact_id", -1)) is None:
            self.pages = self.pages[:1]
        self.phone.invalidate()
        return deleted
