"""Contacts tasks (com.google.android.contacts): AndroidWorld and AndroidLab re-creations and sim-only tasks.

Set-up and checks go through the shell only: ``content delete|insert|query`` on
``content://com.android.contacts/...`` (AndroidWorld reads ``content://contacts/phones/`` with the
projection ``display_name:number``, so does this module), ``uiautomator dump`` + ``cat`` for tasks
that AndroidWorld scores from the screen, ``dumpsys window`` for the foreground app.

Answers of question tasks about phone numbers are compared on digits only; a leading country code
may be left out (the last ten digits must then match).
"""

from __future__ import annotations

import random
import re
from typing import Any

from android_gym.actions import OpenApp, Scroll, Type
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import (
    content_delete,
    content_insert,
    content_query,
    foreground_activity,
    foreground_package,
    go_home,
    screen_nodes,
)
from android_gym.tasks.expert import (
    ExpertStuck,
    finish,
    hint_is,
    id_is,
    scroll_to,
    tap,
    tap_text,
    tap_where,
    text_is,
    type_into,
)
from android_gym.tasks.suites import SUITES_AW, SUITES_LAB

CONTACTS_PKG = "com.google.android.contacts"
PHONES_URI = "content://com.android.contacts/data/phones"
CONTACTS_URI = "content://com.android.contacts/contacts"
LEGACY_PHONES_URI = "content://contacts/phones/"

GIVEN_NAMES = (
    "Aaliyah", "Adrian", "Aisha", "Alejandro", "Amara", "Andrei", "Anika", "Bruno", "Camille", "Carmen",
    "Chidi", "Dara", "Diego", "Elif", "Emeka", "Esther", "Felix", "Greta", "Hamza", "Hana", "Ines",
    "Ivy", "Jamal", "Joanna", "Kai", "Kenji", "Lara", "Leila", "Lucas", "Malik", "Marta", "Mateus",
    "Nadia", "Naveen", "Nora", "Omar", "Priya", "Quentin", "Rafael", "Rania", "Sakura", "Selin",
    "Sven", "Tariq", "Thea", "Uma", "Victor", "Wen", "Yara", "Zoe",
)
FAMILY_NAMES = (
    "Abebe", "Alvarez", "Bakker", "Banerjee", "Castillo", "Costa", "Dubois", "Eriksson", "Fischer",
    "Gallo", "Haddad", "Ivanova", "Jensen", "Kim", "Kowalczyk", "Larsen", "Mendes", "Nakamura",
    "Nguyen", "Okonkwo", "Ortiz", "Park", "Quinn", "Reyes", "Sato", "Schmidt", "Silva", "Tanaka",
    "Usman", "Varga", "Weber", "Yilmaz", "Zhou",
)


def random_phone_number(rng: random.Random) -> str:
    """A North-American style number with the +1 country code, as AndroidWorld generates them."""
    return "+1" + "".join(rng.choice("0123456789") for _ in range(10))


def random_names(rng: random.Random, n: int, exclude: tuple[str, ...] = ()) -> list[str]:
    """``n`` distinct "Given Family" names, none equal to (or sharing a given name with) ``exclude``."""
    taken_given = {e.split()[0] for e in exclude if e}
    names: list[str] = []
    while len(names) < n:
        given = rng.choice(GIVEN_NAMES)
        if given in taken_given:
            continue
        taken_given.add(given)
        names.append(f"{given} {rng.choice(FAMILY_NAMES)}")
    return names


def digits(number: str) -> str:
    """Only the digits of ``number``."""
    return re.sub(r"\D", "", number)


def same_number(a: str, b: str) -> bool:
    """Digit-equal numbers, or equal last ten digits when both have at least ten (country code optional)."""
    da, db = digits(a), digits(b)
    if not da or not db:
        return False
    return da == db or (len(da) >= 10 and len(db) >= 10 and da[-10:] == db[-10:])


# --- contacts through the provider ------------------------------------------------------------------

def list_contacts(device: Any) -> list[tuple[str, str]]:
    """(display_name, number digits) of every phone number, read the way AndroidWorld reads them."""
    return [(r["display_name"] or "", digits(r["number"] or ""))
            for r in content_query(device, LEGACY_PHONES_URI, ["display_name", "number"])]


def phone_rows(device: Any) -> list[dict[str, str]]:
    """Every phone row: contact_id, display_name, label and number (NULL read as "")."""
    return [{k: v or "" for k, v in r.items()}
            for r in content_query(device, PHONES_URI, ["contact_id", "display_name", "label", "number"])]


def contact_names(device: Any) -> list[str]:
    """Display names of every contact, sorted."""
    return sorted(r["display_name"] or "" for r in content_query(device, CONTACTS_URI, ["display_name"]))


def set_contacts(device: Any, roster: list[tuple[str, str, str]]) -> None:
    """Replace every contact with ``roster`` of (display name, number, label)."""
    content_delete(device, CONTACTS_URI)
    for name, number, label in roster:
        content_insert(device, PHONES_URI, [("display_name", "s", name), ("number", "s", number),
                                            ("label", "s", label)])


def random_roster(rng: random.Random, n: int, exclude: tuple[str, ...] = ()) -> list[tuple[str, str, str]]:
    """``n`` random contacts (name, +1 number, label), mostly Mobile."""
    labels = ("Mobile", "Mobile", "Mobile", "Home", "Work")
    return [(name, random_phone_number(rng), rng.choice(labels)) for name in random_names(rng, n, exclude)]


# --- expert pieces ------------------------------------------------------------------------------------

_NUMBER_TEXT = re.compile(r"^\+?[\d(][\d\-\s().]{5,}$")  # "+1 650-555-0134", "(223) 311-44"


def _open_contact(ui: Any, name: str):
    """From the contacts list, scroll to ``name`` and open it."""
    ui, element = yield from scroll_to(ui, lambda e: text_is(name)(e) and not id_is("open_search_bar_text_view")(e))
    ui = yield tap(element)
    return ui


def _delete_contact(ui: Any, name: str):
    """Open Contacts, then the contact ``name``: More options > Delete, and confirm."""
    ui = yield OpenApp("Contacts")
    ui = yield from _open_contact(ui, name)
    ui = yield from tap_text(ui, "More options")
    ui = yield from tap_text(ui, "Delete")
    return (yield from tap_text(ui, "Delete"))


def _fill_new_contact(ui: Any, first: str, last: str, phone: str):
    """Tap "Create contact" and fill the name and phone fields."""
    ui = yield from tap_text(ui, "Create contact")
    ui = yield from type_into(ui, first, predicate=hint_is("First name"))
    if last:
        ui = yield from type_into(ui, last, predicate=hint_is("Last name"))
    ui = yield from type_into(ui, phone, predicate=hint_is("Phone"))
    return ui


def _read_number(ui: Any) -> str:
    for element in ui.elements:
        text = (element.text or "").strip()
        if _NUMBER_TEXT.match(text):
            return text
    raise ExpertStuck("no phone number on the contact's screen")


class _ContactsTask(Task):
    """Shared set-up: a known roster of contacts, Contacts force-stopped, the home screen showing."""

    app_names = ("contacts",)

    def roster(self) -> list[tuple[str, str, str]]:
        """The contacts this instance starts with."""
        return [tuple(r) for r in self.params.get("roster", [])]  # type: ignore[misc]

    def initialize(self, device: Any) -> None:
        set_contacts(device, self.roster())
        go_home(device, CONTACTS_PKG)


@register_task
class ContactsAddContact(_ContactsTask):
    """AndroidWorld: add a contact with a name and number."""

    name = "ContactsAddContact"
    template = "Create a new contact for {name}. Their number is {number}."
    difficulty = "easy"
    complexity = 2.0
    suites = SUITES_AW

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        name = random_names(rng, 1)[0]
        return {"name": name, "number": random_phone_number(rng), "roster": random_roster(rng, 14, (name,))}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return float((self.params["name"], digits(self.params["number"])) in list_contacts(device))

    def expert(self, ui: Any) -> ExpertGenerator:
        first, _, last = self.params["name"].partition(" ")
        ui = yield OpenApp("Contacts")
        ui = yield from _fill_new_contact(ui, first, last, self.params["number"])
        ui = yield from tap_text(ui, "Save")
        yield from finish()


@register_task
class ContactsNewContactDraft(_ContactsTask):
    """AndroidWorld: fill the new-contact form (name, phone, phone label) and leave it unsaved on screen."""

    name = "ContactsNewContactDraft"
    template = ("Go to the new contact screen and enter the following details: First Name: {first}, Last Name: "
                "{last}, Phone: {phone}, Phone Label: {phone_label}. Do NOT hit save.")
    difficulty = "easy"
    complexity = 2.0
    suites = SUITES_AW

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        first, last = random_names(rng, 1)[0].split(" ", 1)
        phone = f"{rng.randint(200, 999)}-{rng.randint(200, 999)}-{rng.randint(1000, 9999)}"
        return {"first": first, "last": last, "phone": phone, "phone_label": rng.choice(["Home", "Work"]),
                "roster": random_roster(rng, 12, (f"{first} {last}",))}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        p = self.params
        if any(name == f"{p['first']} {p['last']}" for name, _ in list_contacts(device)):
            return 0.0  # it was saved
        if foreground_package(device) != CONTACTS_PKG:
            return 0.0
        found = {"first": False, "last": False, "phone": False, "label": False}
        for node in screen_nodes(device):  # fields found by their hint, as AndroidWorld finds them
            hint, text = node.hint, node.text.strip()
            if hint == "First name" and text.lower() == p["first"].lower():
                found["first"] = True
            elif hint == "Last name" and text.lower() == p["last"].lower():
                found["last"] = True
            elif hint == "Phone" and digits(text) == digits(p["phone"]):
                found["phone"] = True
            elif text == p["phone_label"] and node.content_desc == f"{p['phone_label']} Phone":
                found["label"] = True
        return float(all(found.values()))

    def expert(self, ui: Any) -> ExpertGenerator:
        p = self.params
        ui = yield OpenApp("Contacts")
        ui = yield from _fill_new_contact(ui, p["first"], p["last"], p["phone"])
        ui = yield from tap_where(ui, _phone_label_picker)
        ui = yield from tap_where(ui, lambda e: e.checkable and text_is(p["phone_label"])(e))  # the picker's option
        yield from finish()


@register_task
class ContactsDeleteContact(_ContactsTask):
    """Sim-only: delete one named contact (details -> More options -> Delete -> confirm)."""

    name = "ContactsDeleteContact"
    template = "Delete the contact {name} from the Contacts app."
    difficulty = "easy"
    complexity = 2.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        roster = random_roster(rng, 16)
        return {"name": rng.choice(roster)[0], "roster": roster}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        expected = sorted(n for n, _, _ in self.roster() if n != self.params["name"])
        return float(contact_names(device) == expected)

    def expert(self, ui: Any) -> ExpertGenerator:
        yield from _delete_contact(ui, self.params["name"])
        yield from finish()


@register_task
class ContactsEditNumber(_ContactsTask):
    """Sim-only: replace a contact's phone number (edit form: select the old number, type the new one)."""

    name = "ContactsEditNumber"
    template = "Change the phone number of {name} to {number} in the Contacts app."
    difficulty = "medium"
    complexity = 2.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        roster = random_roster(rng, 16)
        return {"name": rng.choice(roster)[0], "number": random_phone_number(rng), "roster": roster}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        numbers = [n for name, n in list_contacts(device) if name == self.params["name"]]
        return float(numbers == [digits(self.params["number"])])

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Contacts")
        ui = yield from _open_contact(ui, self.params["name"])
        ui = yield from tap_text(ui, "Edit contact")
        ui = yield from tap_where(ui, hint_is("Phone"), long=True)
        ui = yield Type(self.params["number"])
        ui = yield from tap_text(ui, "Save")
        yield from finish()


def number_answer_matches(answer: str | None, number: str) -> bool:
    """The answer contains the phone number: same digits, country code optional."""
    if not answer:
        return False
    candidates = re.findall(r"\+?\d[\d\-\s().]{5,}\d", answer) or [answer]
    return any(same_number(c, number) for c in candidates)


@register_task
class ContactsPhoneNumberQuery(_ContactsTask):
    """Sim-only question: read a contact's phone number from its details page."""

    name = "ContactsPhoneNumberQuery"
    template = "What is the phone number of {name}? Look it up in the Contacts app."
    difficulty = "easy"
    complexity = 1.5
    answer_task = True

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        roster = random_roster(rng, 16)
        return {"name": rng.choice(roster)[0], "roster": roster}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        number = next(n for name, n, _ in self.roster() if name == self.params["name"])
        return float(number_answer_matches(answer, number))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Contacts")
        ui = yield from _open_contact(ui, self.params["name"])
        yield from finish(_read_number(ui))


# --- AndroidLab re-creations ------------------------------------------------------------------------

ANDROIDLAB_ROSTER: list[tuple[str, str, str]] = [
    ("AAA", "+1 650-555-0134", "Mobile"),
    ("ABC", "22331144", "Mobile"),  # AndroidLab's answer to contacts_12: "22331144 or (223) 311-44"
    ("Chen Wei", "+1 408-555-0112", "Work"),
    ("Li Na", "+1 415-555-0190", "Mobile"),
    ("Maria Lopez", "+1 212-555-0147", "Home"),
    ("Xu Ming", "+1 617-555-0163", "Mobile"),
]


class _AndroidLabContacts(_ContactsTask):
    suites = SUITES_LAB

    def roster(self) -> list[tuple[str, str, str]]:
        return list(ANDROIDLAB_ROSTER)


@register_task
class ContactsLab1(_AndroidLabContacts):
    """AndroidLab contacts_1: add John with a mobile number."""

    name = "contacts_1"
    template = "Add John as a contacts and set his mobile phone number to be 12345678"
    difficulty = "medium"
    complexity = 2.0

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return float(any(r["display_name"].strip().lower() == "john" and digits(r["number"]) == "12345678"
                         and r["label"] == "Mobile" for r in phone_rows(device)))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Contacts")
        ui = yield from _fill_new_contact(ui, "John", "", "12345678")
        ui = yield from tap_text(ui, "Save")
        yield from finish()


@register_task
class ContactsLab11(_AndroidLabContacts):
    """AndroidLab contacts_11: delete the contact AAA."""

    name = "contacts_11"
    template = "Delete contacts AAA"
    difficulty = "medium"
    complexity = 1.5

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return float(contact_names(device) == sorted(n for n, _, _ in ANDROIDLAB_ROSTER if n != "AAA"))

    def expert(self, ui: Any) -> ExpertGenerator:
        yield from _delete_contact(ui, "AAA")
        yield from finish()


@register_task
class ContactsLab4(_AndroidLabContacts):
    """AndroidLab contacts_4: a new contact "Chen" whose company is Tsinghua University (the roster stays)."""

    name = "contacts_4"
    template = "Add a contacts named Chen, whose company is Tsinghua University"
    difficulty = "medium"
    complexity = 2.0
    COMPANY = "Tsinghua University"

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        rows = content_query(device, CONTACTS_URI, ["display_name", "company"])
        names = sorted(r["display_name"] or "" for r in rows)
        chen = [r for r in rows if (r["display_name"] or "").strip().lower() == "chen"]
        return float(names == sorted([*(n for n, _, _ in ANDROIDLAB_ROSTER), "Chen"]) and len(chen) == 1
                     and " ".join((chen[0]["company"] or "").split()).lower() == self.COMPANY.lower())

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Contacts")
        ui = yield from tap_text(ui, "Create contact")
        ui = yield from type_into(ui, "Chen", predicate=hint_is("First name"))
        ui = yield from type_into(ui, self.COMPANY, predicate=hint_is("Company"))
        ui = yield from tap_text(ui, "Save")
        yield from finish()


@register_task
class ContactsLab12(_AndroidLabContacts):
    """AndroidLab contacts_12 (question): ABC's phone number."""

    name = "contacts_12"
    template = "What is ABC's phone number"
    difficulty = "easy"
    complexity = 1.0
    answer_task = True

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return float(number_answer_matches(answer, "22331144"))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Contacts")
        ui = yield from _open_contact(ui, "ABC")
        yield from finish(_read_number(ui))


def _phone_label_picker(e: Any) -> bool:
    """The editor's label drop-down of a phone number (read out as "Mobile Phone")."""
    return e.class_name.endswith("Spinner") and (e.content_desc or "").endswith(" Phone")


def _empty_phone_field(e: Any) -> bool:
    """An editor phone field with no number in it yet (it shows its hint)."""
    return hint_is("Phone")(e) and not any(ch.isdigit() for ch in e.text or "")


def _empty_row_label_picker(ui: Any, max_scrolls: int = 6):
    """Scroll the editor until its empty phone row and that row's label picker (right under the field) both
    show; returns (ui, the picker)."""
    for _ in range(max_scrolls):
        field = next((f for f in ui.elements if _empty_phone_field(f)), None)
        if field is not None:
            below = [e for e in ui.elements if _phone_label_picker(e) and e.bounds[1] >= field.bounds[3] - 4]
            if below:
                return ui, min(below, key=lambda e: e.bounds[1])
        lst = next((e for e in ui.elements if e.scrollable), None)
        ui = yield Scroll("down", *(lst.center if lst else (None, None)))
    raise ExpertStuck("no label picker under the empty phone field")


@register_task
class ContactsLab3(_AndroidLabContacts):
    """AndroidLab contacts_3: a new contact "Xu" with work number 12345678 and mobile number 87654321."""

    name = "contacts_3"
    template = ("Add a contacts whose name is Xu, set the working phone number to be 12345678 and mobile phone "
                "number to be 87654321")
    difficulty = "hard"
    complexity = 3.0

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        xu = sorted((digits(r["number"]), r["label"]) for r in phone_rows(device)
                    if r["display_name"].strip().lower() == "xu")
        return float(xu == [("12345678", "Work"), ("87654321", "Mobile")]
                     and len(contact_names(device)) == len(ANDROIDLAB_ROSTER) + 1)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Contacts")
        ui = yield from tap_text(ui, "Create contact")
        ui = yield from type_into(ui, "Xu", predicate=hint_is("First name"))
        ui = yield from type_into(ui, "12345678", predicate=hint_is("Phone"))
        ui = yield from tap_where(ui, _phone_label_picker)
        ui = yield from tap_text(ui, "Work", scroll=False)
        ui = yield from tap_text(ui, "Add phone")
        ui = yield from type_into(ui, "87654321", predicate=_empty_phone_field)
        ui = yield from tap_text(ui, "Save")
        yield from finish()


@register_task
class ContactsLab6(_AndroidLabContacts):
    """AndroidLab contacts_6: ABC gets a second number, 00112233 labelled Work."""

    name = "contacts_6"
    template = "Add a work phone number 00112233 to contacts ABC"
    difficulty = "medium"
    complexity = 2.5

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        abc = sorted((digits(r["number"]), r["label"]) for r in phone_rows(device) if r["display_name"] == "ABC")
        return float(abc == [("00112233", "Work"), ("22331144", "Mobile")])

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Contacts")
        ui = yield from _open_contact(ui, "ABC")
        ui = yield from tap_text(ui, "Edit contact", scroll=False)
        ui = yield from tap_text(ui, "Add phone")
        # Label the new (empty) row first: its label picker sits right under its field.
        ui, spinner = yield from _empty_row_label_picker(ui)
        ui = yield tap(spinner)
        ui = yield from tap_text(ui, "Work", scroll=False)
        ui = yield from type_into(ui, "00112233", predicate=_empty_phone_field)
        ui = yield from tap_text(ui, "Save")
        yield from finish()


@register_task
class ContactsLab8(_AndroidLabContacts):
    """AndroidLab contacts_8: ABC's website is abc.github.com."""

    name = "contacts_8"
    template = "Set contacts ABC's website to be abc.github.com"
    difficulty = "medium"
    complexity = 2.0

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        rows = content_query(device, CONTACTS_URI, ["display_name", "website"])
        abc = [r for r in rows if r["display_name"] == "ABC"]
        return float(len(abc) == 1 and (abc[0]["website"] or "").strip().lower() == "abc.github.com"
                     and len(rows) == len(ANDROIDLAB_ROSTER))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Contacts")
        ui = yield from _open_contact(ui, "ABC")
        ui = yield from tap_text(ui, "Edit contact", scroll=False)
        ui = yield from type_into(ui, "abc.github.com", predicate=hint_is("Website"))
        ui = yield from tap_text(ui, "Save")
        yield from finish()


@register_task
class ContactsLab10(_AndroidLabContacts):
    """AndroidLab contacts_10: a call to ABC (the phone app's in-call screen up, ABC's number dialled)."""

    name = "contacts_10"
    template = "Call ABC"
    difficulty = "easy"
    complexity = 1.5

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        if "InCallActivity" not in foreground_activity(device)[1]:
            return 0.0
        return float(any(n.resource_id.endswith("contactgrid_contact_name") and n.text == "ABC"
                         for n in screen_nodes(device)))

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Contacts")
        ui = yield from _open_contact(ui, "ABC")
        ui = yield from tap_text(ui, "Call", scroll=False)
        yield from finish()


__all__ = [
    "CONTACTS_PKG",
    "contact_names",
    "digits",
    "list_contacts",
    "number_answer_matches",
    "phone_rows",
    "random_names",
    "random_phone_number",
    "same_number",
    "set_contacts",
]
