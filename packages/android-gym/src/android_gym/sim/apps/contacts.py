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
    return {"first": "", "last": "", "company": "", "email": "", "email_label": "Home", "date": "", "website": "",
            "phones": [{"number": "", "label": "Mobile"}]}


EMAIL_LABELS = ("Home", "Work", "Other", "Mobile")


def _ignore_typing(_value: str) -> None:
    """A label drop-down's field: typed text changes nothing (the label comes from its list)."""


def _gap(dp: float) -> View:
    """Vertical space in the editor (drawn, not in the dump)."""
    return View(cls="android.view.View", height=dp, layout_only=True)


def _icon(letter: str) -> View:
    """A field's leading icon column (drawn, not in the dump, as the real editor's icons)."""
    return View(cls="android.widget.ImageView", width=52, height=56.76, icon=letter or None, layout_only=True)


def _line(*children: View) -> View:
    """A row of the editor whose views the dump lists as the scroller's own (the row is layout only)."""
    return View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, layout_only=True,
                padding=(0.0, 0.0), children=list(children))


def _field(edit: View) -> View:
    edit.weight = 1
    edit.height = 56.76
    edit.resource_id, edit.key = "", edit.key or edit.resource_id
    return edit


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
        self.return_to: str | None = None

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
                   "email": email.strip(), "website": website.strip(), "phones": [],
                   "created": self.phone.now().date()}
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
    def _rows(self, q: str) -> list[View]:
        """The list rows for query ``q`` (letter headers when not searching)."""
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
        return items

    def build_main(self) -> View:
        """The contact list as the emulator's Contacts shows it: the search bar (menu and account buttons), the
        Phone/Email/Company filter chips, the list (or "No contacts yet"), the bottom navigation and the "Create
        contact" button. Listed breadth first: the button, the navigation, the chips' row, then the bar's
        buttons, the list, the chips."""
        items = self._rows("")
        if items:
            body: View = ScrollList(items, "main:list", resource_id="contact_list", dump_rank=3)
        else:
            body = View(cls="android.widget.FrameLayout", weight=1, dump_rank=3, children=[
                Text("No contacts yet", resource_id="android:id/text1", size=20, align="center",
                     padding=(24, 160), color="#444746")])
        search_bar = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=64, padding=(16, 8),
                          clickable=True, background="#e9eef6", on_click=self.open_search, dump_rank=2, children=[
                              ImageButton("Open navigation drawer", lambda: self.toast("No other labels"),
                                          icon="="),
                              View(cls="android.widget.TextView", text="Search contacts", layout_only=True,
                                   weight=1, height=48, padding=(16, 12), color="#444746"),
                              View(cls="android.widget.FrameLayout",
                                   content_desc="Signed in as Device\nAccount and settings.",
                                   resource_id="selected_account_disc", clickable=True, width=48, height=48,
                                   icon="D", on_click=lambda: self.toast("Device account"))])
        chips = View(cls="android.widget.HorizontalScrollView", resource_id="chips_container", scrollable=True,
                     height=48, dump_rank=1, children=[View(
                         cls="android.widget.LinearLayout", orientation=HORIZONTAL, padding=(16, 0), children=[
                             View(cls="android.widget.Button", text=label, clickable=True, checkable=True,
                                  width=width, height=48, background="#f8fafd",
                                  on_click=lambda: self.toast("No contacts in this filter"))
                             for label, width in (("Phone contacts", 152), ("Email contacts", 144),
                                                  ("Company", 96))])])
        nav = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=80, layout_only=True,
                   background="#f3f6fc", children=[
                       View(cls="android.widget.FrameLayout", content_desc="Contacts", resource_id="contacts",
                            weight=1, icon="C"),
                       View(cls="android.widget.FrameLayout", content_desc="Highlights", resource_id="highlights",
                            clickable=True, weight=1, icon="H", on_click=lambda: self.toast("No highlights yet")),
                       View(cls="android.widget.FrameLayout", content_desc="Fix & manage", resource_id="nav_manage",
                            clickable=True, weight=1, icon="F", on_click=lambda: self.toast("Nothing to fix")),
                   ])
        return Column(
            search_bar, chips, body, nav,
            Fab("Create contact", self.new_contact, resource_id="floating_action_button", icon="+"),
            cls="android.widget.FrameLayout", resource_id="contacts_container", weight=1,
        )

    def open_search(self) -> None:
        """The search bar: a search page with the query field focused."""
        self.query = ""
        self.push("search")
        self.phone.set_focus("contacts_search")

    def build_search(self) -> View:
        """Search: the query field, then the matching contacts."""
        q = self.query.strip().lower()
        items = self._rows(q) if q else []
        if q and not items:
            items = [Text(f"No results for \u201c{self.query.strip()}\u201d", resource_id="empty_list_text",
                          align="center", padding=(24, 32), color="#444746")]
        search = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, padding=(16.0, 8.0), children=[
            ImageButton("Navigate up", self.pop, icon="<"),
            EditText(self.query, self._set_query, hint="Search contacts", key="contacts_search",
                     resource_id="open_search_bar_text_view", weight=1),
            ImageButton("Clear search", self._clear_query, resource_id="search_close_button", icon="x")
            if self.query else None,
        ])
        search.children = [ch for ch in search.children if ch is not None]
        return Column(search, ScrollList(items, "search:list", resource_id="contact_list"),
                      cls="android.widget.FrameLayout", resource_id="contacts_container", weight=1)

    def _set_query(self, value: str) -> None:
        self.query = value
        self.scroll["search:list"] = 0

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
        self.return_to = None
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
                     "email_label": "Home", "date": "", "website": c["website"], "phones": phones}
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
        """The create/edit form over ``self.form``, laid out and listed as the emulator's Contacts editor: the app
        bar (Cancel, title, Save, More options), then in the scroller the photo, "Add picture", the name,
        company and phone fields (each phone with its label picker and, once filled, its delete button), the
        email with its label, "Significant date", then website and "Add phone" further down. The name row's
        "Show more name fields" and a phone's delete icon sit one level deeper, so they are listed last."""
        f = self.form
        title = "Create contact" if contact_id is None else "Edit contact"
        rows: list[View] = [
            _gap(20),
            _line(View(cls="android.widget.FrameLayout", content_desc="Add contact photo",
                       resource_id="photo_update_clickable", clickable=True, width=120, height=120, icon="+",
                       background="#d3e3fd", on_click=lambda: self.toast("No camera or photos on this phone"))),
            _line(Button("Add picture", lambda: self.toast("No camera or photos on this phone"),
                         resource_id="button_change_photo", background=None, width=102, height=48)),
            _gap(26),
            _line(_icon("P"), _field(EditText(f["first"], lambda v: self._set_form("first", v), hint="First name",
                                              key="editor_first", resource_id="first_name_edit", input_type="name")),
                  View(cls="android.widget.FrameLayout", width=56, height=56, children=[
                      Image("Show more name fields", resource_id="expansion_view", width=56, height=56,
                            icon="v")])),
            _gap(14),
            _line(_icon(""), _field(EditText(f["last"], lambda v: self._set_form("last", v), hint="Last name",
                                             key="editor_last", resource_id="last_name_edit", input_type="name")), _icon("")),
            _gap(22),
            _line(_icon("C"), _field(EditText(f["company"], lambda v: self._set_form("company", v), hint="Company",
                                              key="editor_company", resource_id="company_edit", input_type="name")), _icon("")),
        ]
        for i, ph in enumerate(f["phones"]):
            rows.append(_gap(22))
            # the field shows the number formatted as it is typed (the real editor's PhoneNumberFormattingTextWatcher:
            # "+14460177118" reads "+1 446-017-7118"); the sim keeps the number as typed
            rows.append(_line(_icon("T" if i == 0 else ""), _field(EditText(
                format_number(ph["number"]), lambda v, i=i: self._set_phone(i, v), hint="Phone", key=f"editor_phone_{i}",
                resource_id="phone_edit", input_type="phone")), _icon("")))
            rows.append(_gap(14))
            delete = None
            if ph["number"] or i:
                delete = View(cls="android.widget.FrameLayout", content_desc=f"Delete {ph['label']} Phone",
                              resource_id="delete_button_container", clickable=True, width=56, height=56,
                              on_click=lambda i=i: self._remove_phone_row(i), children=[
                                  Image("delete", resource_id="delete_button", width=56, height=56, icon="x")])
            rows.append(_line(_icon(""), *self._label_picker(ph["label"], "Phone", lambda i=i: self._pick_label(i), i),
                              delete or _icon("")))
        rows += [
            _gap(24),
            _line(_icon("@"), _field(EditText(f["email"], lambda v: self._set_form("email", v), hint="Email",
                                              key="editor_email", resource_id="email_edit")), _icon("")),
            _gap(14),
            _line(_icon(""), *self._label_picker(f["email_label"], "Email", self._pick_email_label), _icon("")),
            _gap(24),
            _line(_icon("D"), View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, weight=1,
                                   layout_only=True, children=[
                                       EditText(f["date"], lambda v: self._set_form("date", v),
                                                hint="Significant date", key="editor_date", weight=1, height=56.76),
                                       ImageButton("Show date picker", lambda: self.phone.set_focus("editor_date"),
                                                   resource_id="text_input_end_icon", icon="#")]), _icon("")),
            _gap(24),
            _line(_icon("W"), _field(EditText(f["website"], lambda v: self._set_form("website", v), hint="Website",
                                              key="editor_website", resource_id="website_edit")), _icon("")),
            _line(Button("Add phone", self._add_phone_row, resource_id="add_phone_button", background=None,
                         width=160)),
            _gap(24),
        ]
        toolbar = View(cls="android.view.ViewGroup", resource_id="toolbar", orientation=HORIZONTAL, height=64,
                       padding=(0.0, 4.0), background="#f8fafd", layout_only=True, children=[
                           ImageButton("Cancel", self._editor_back, icon="x", width=56, height=56),
                           Text(title, size=22, weight=1, max_lines=1, padding=(4, 12)),
                           Button("Save", lambda: self.save_form(contact_id), resource_id="toolbar_button",
                                  background="#0b57d0", color="#ffffff", width=88, height=48),
                           View(cls="android.widget.ImageView", content_desc="More options", clickable=True,
                                width=48, height=48, icon=":", on_click=lambda: self.show_dialog("editor_menu"))])
        return Column(
            toolbar,
            View(cls="android.widget.FrameLayout", weight=1, children=[
                ScrollList(rows, "editor:form", resource_id="contact_editor_scroller",
                           cls="android.widget.ScrollView", wrap_content=True)]),
            cls="android.widget.LinearLayout", resource_id="editor_root", weight=1,
        )

    @staticmethod
    def _label_picker(label: str, kind: str, on_click: Any, id_hint: int = 0) -> tuple[View, View]:
        """A label drop-down (the spinner, read out as "Mobile Phone", and its "Show dropdown menu" button). As on
        the emulator it is an editable field that takes no typing: Enter in the field above moves the focus to it;
        a tap opens the label list."""
        return (View(cls="android.widget.Spinner", text=label, content_desc=f"{label} {kind}", hint="Label",
                     clickable=True, focusable=True, width=171, height=56.76, padding=(12.0, 16.0), max_lines=1,
                     on_click=on_click, on_text=_ignore_typing, key=f"label_{kind}_{id_hint}",
                     input_type="dropdown"),
                View(cls="android.widget.ImageButton", content_desc="Show dropdown menu",
                     resource_id="text_input_end_icon", clickable=True, checkable=True, width=48, height=48,
                     icon="v", on_click=on_click))

    def dialog_editor_menu(self) -> View:
        """The editor's More options menu."""
        return Dialog("", Column(ListItem("Discard changes", "", self._discard, resource_id="menu_item",
                                          title_id="title"), resource_id="popup_menu"))

    def _pick_email_label(self) -> None:
        self.phone.set_focus(None)
        self.show_dialog("email_label")

    def dialog_email_label(self) -> View:
        """The email label picker."""
        options = [RadioButton(label == self.form["email_label"], lambda lb=label: self._set_email_label(lb),
                               text=label, resource_id="text1") for label in EMAIL_LABELS]
        return Dialog("Email label", Column(*options, resource_id="select_dialog_listview", padding=(16, 0)),
                      [("Cancel", self.close_dialog)], button_ids=NEGATIVE_POSITIVE)

    def _set_email_label(self, label: str) -> None:
        self.form["email_label"] = label
        self.close_dialog()

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
        if contact_id is None and self.return_to:  # opened from another app (the Phone): back to it
            caller, self.return_to = self.return_to, None
            self.pop()
            self.phone.launch(caller)
        elif contact_id is None:
            self.replace("detail", contact_id=c["_id"])
        else:
            self.pop()
        self.toast("Contact saved")

    # --- details --------------------------------------------------------------------------------
    def build_detail(self, contact_id: int) -> View:
        """A contact's details as the emulator's Contacts lists them (breadth first): the list fragment behind,
        the scroller, the app bar's Navigate up / Edit contact / Add to favorites / More options, the photo and
        the Call / Text / video actions, the name, "Contact info" with one row per number (read out as "Call
        Mobile +1 ...", holding the number, its label and a Text button), and the date it was added."""
        c = self.contact(contact_id)
        if c is None:
            return Column(Toolbar("", on_back=self.pop), Text("Contact not found", padding=(24, 24)), weight=1)
        name = self.shown_name(c)
        first_number = c["phones"][0]["number"] if c["phones"] else ""
        starred = bool(c.get("starred"))
        toolbar = View(cls="android.view.ViewGroup", orientation=HORIZONTAL, height=64, padding=(0.0, 4.0),
                       layout_only=True, children=[
                           ImageButton("Navigate up", self.pop, icon="<", width=56, height=56),
                           View(cls="android.view.View", weight=1, height=48, layout_only=True),
                           View(cls="android.widget.Button", content_desc="Edit contact",
                                resource_id="menu_insert_or_edit", clickable=True, focusable=True, width=48,
                                height=48, icon="E", on_click=lambda: self.edit_contact(contact_id)),
                           View(cls="android.widget.Button",
                                content_desc="Remove from favorites" if starred else "Add to favorites",
                                resource_id="menu_star", clickable=True, focusable=True, width=48, height=48,
                                icon="*", on_click=lambda: self._toggle_star(contact_id)),
                           View(cls="android.widget.ImageView", content_desc="More options", clickable=True,
                                focusable=True, width=48, height=48, icon=":",
                                on_click=lambda: self.show_dialog("detail_menu", contact_id=contact_id))])
        verbs = View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, padding=(26.0, 8.0),
                     layout_only=True, children=[
                         self._verb("Call", "Call", "verb_call", lambda: self._call(first_number)),
                         self._verb("Text", "Text", "verb_text", lambda: self._text(first_number)),
                         self._verb("Set up", "Set up Duo video calling", "verb_video",
                                    lambda: self.toast("No video calling app"))])
        header = View(cls="android.widget.LinearLayout", padding=(0.0, 8.0), children=[
            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, layout_only=True, padding=(140.0, 0.0),
                 children=[Image("Contact photo", resource_id="monogram_photo", icon=name[:1].upper(), width=100,
                                 height=100)]),
            View(cls="android.widget.LinearLayout", padding=(20.0, 20.0), children=[
                Text(name, resource_id="large_title", size=28, align="center", padding=(0, 4))]
                + ([Text(c["company"], resource_id="organization", size=16, color="#444746", align="center")]
                   if c["company"] else [])),
            verbs])
        info: list[View] = [Text("Contact info", resource_id="title", size=16, bold=True, padding=(32, 12))]
        for p in c["phones"]:
            shown = format_number(p["number"])
            info.append(View(cls="android.widget.RelativeLayout", content_desc=f"Call {p['label']} {shown}",
                             clickable=True, focusable=True, orientation=HORIZONTAL, padding=(16.0, 8.0),
                             on_click=lambda n=p["number"]: self._call(n), children=[
                                 View(cls="android.widget.LinearLayout", weight=1, layout_only=True, padding=(40, 0),
                                      children=[Text(shown, resource_id="header", size=16, padding=(16, 2)),
                                                Text(p["label"], resource_id="sub_header", size=14,
                                                     color="#444746", padding=(16, 2))]),
                                 View(cls="android.widget.Button", content_desc=f"Text {p['label']} {shown}",
                                      resource_id="icon_alternate", clickable=True, focusable=True, width=48,
                                      height=48, icon="M", on_click=lambda n=p["number"]: self._text(n))]))
        if c["email"]:
            info.append(ListItem(c["email"], "Email", None, icon="@", resource_id="email_row", title_id="header",
                                 subtitle_id="sub_header"))
        if c["website"]:
            info.append(ListItem(c["website"], "Website", None, icon="W", resource_id="website_row",
                                 title_id="header", subtitle_id="sub_header"))
        created = c.get("created")
        if created is not None:
            info.append(Text(f"Added {created:%b} {created.day}, {created.year}",
                             resource_id="contact_create_date_text", size=14, color="#444746", padding=(16, 12)))
        card = View(cls="android.widget.FrameLayout", padding=(16.0, 8.0), children=[
            View(cls="android.widget.LinearLayout", background="#f3f6fc", children=info)])
        return Column(
            View(cls="android.widget.ScrollView", resource_id="root", scrollable=True, weight=1,
                 scroll_key="detail:info", children=[toolbar, header, card]),
            View(cls="android.widget.FrameLayout", resource_id="contact_list_fragment", height=1, overlay=True,
                 dump_rank=-1),
            cls="android.widget.FrameLayout", resource_id="quickcontact_root", weight=1,
        )

    @staticmethod
    def _verb(label: str, desc: str, rid: str, on_click: Any) -> View:
        return View(cls="android.widget.TextView", text=label, content_desc=desc, resource_id=rid, clickable=True,
                    focusable=True, weight=1, height=81, align="center", icon=label[:1], size=14,
                    on_click=on_click)

    def _toggle_star(self, contact_id: int) -> None:
        c = self.contact(contact_id)
        if c is not None:
            c["starred"] = not c.get("starred")

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
