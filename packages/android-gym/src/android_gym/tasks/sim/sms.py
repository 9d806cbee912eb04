"""Simple SMS Messenger tasks (com.simplemobiletools.smsmessenger): AndroidWorld re-creations.

Set-up clears ``content://sms`` and inserts received (``content://sms/inbox``) and sent
(``content://sms/sent``) messages with dates relative to the device clock (``date +%s``); contacts
go through the contacts provider; the clipboard is set with ``am broadcast -a clipper.set -e text``
(the Clipper receiver AndroidWorld-style harnesses install). Checks follow AndroidWorld: a message
to the number with the body was sent within the last five minutes of device time and Simple SMS
Messenger is in front. Bodies are compared after normalising case, whitespace and trailing
punctuation; numbers on digits.
"""

from __future__ import annotations

import random
import re
from typing import Any

from android_gym.actions import LongPress, OpenApp, PressBack
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import (
    content_delete,
    content_insert,
    content_query,
    device_time_ms,
    force_stop,
    foreground_package,
    go_home,
    set_clipboard,
)
from android_gym.tasks.expert import (
    ExpertStuck,
    finish,
    id_is,
    scroll_to,
    tap,
    tap_id,
    tap_text,
    text_is,
    type_into,
)
from android_gym.tasks.sim.contacts import digits, random_names, random_phone_number, set_contacts
from android_gym.tasks.suites import SUITES_AW

SMS_PKG = "com.simplemobiletools.smsmessenger"
SMS_COLUMNS = ["_id", "address", "date", "type", "body"]
RECENT_MS = 5 * 60 * 1000

MESSAGES = (
    "Running ten minutes late, start without me.",
    "Can you pick up bread and eggs on the way home?",
    "The package arrived, it's on the porch.",
    "Happy birthday! Hope you have a great day.",
    "Meeting moved to 3 PM in room 204.",
    "Don't forget the book club on Thursday.",
    "Parking is on the second level tonight.",
    "The plumber comes tomorrow between 9 and 11.",
    "Thanks for dinner, it was lovely.",
    "Can we push our call to Monday?",
    "I left the keys under the blue pot.",
    "Flight lands at 6:40, terminal B.",
    "Bring a jacket, it gets cold after sunset.",
    "The kids have a half day on Friday.",
    "Rent is due on the first, same as always.",
    "Grab two tickets for the 8 PM show please.",
    "Yoga is cancelled this week.",
    "The report is in the shared folder now.",
    "Let's try the new ramen place on Elm Street.",
    "Remember to water the tomatoes.",
    "Call me when you get a minute.",
    "The train is delayed by twenty minutes.",
    "Your order number is 58213.",
    "See you at the trailhead at 7.",
)
EVENT_ADDRESSES = (
    "221 Pine St, Seattle, WA 98101",
    "48 Harbor Rd, Portland, ME 04101",
    "1600 Lakeview Dr, Madison, WI 53703",
    "77 Market St, San Diego, CA 92101",
    "310 Oak Ave, Austin, TX 78701",
    "9 Riverside Blvd, Savannah, GA 31401",
    "512 Maple Ln, Boulder, CO 80302",
    "1450 Grand Ave, Des Moines, IA 50309",
)
GLITCH_TEXT = "Sorry, there was a glitch, what was the last message you sent me?"


def normalise_body(text: str) -> str:
    """Case-folded, whitespace-collapsed text without trailing punctuation (the body comparison rule)."""
    return re.sub(r"[\s.!?,;:]+$", "", " ".join(text.split()).casefold())


def sms_rows(device: Any, box: str) -> list[dict[str, Any]]:
    """Messages of ``box`` ("inbox", "sent" or "" for all), newest first: address, date (int), type, body."""
    uri = "content://sms" + (f"/{box}" if box else "")
    return [{"address": r["address"] or "", "date": int(r["date"] or 0), "type": int(r["type"] or 0),
             "body": r["body"] or ""} for r in content_query(device, uri, SMS_COLUMNS)]


def was_sent(device: Any, number: str, body: str) -> bool:
    """A message with ``body`` went to ``number`` within the last five minutes of device time."""
    now = device_time_ms(device)
    return any(digits(m["address"]) == digits(number) and normalise_body(m["body"]) == normalise_body(body)
               and now - m["date"] <= RECENT_MS for m in sms_rows(device, "sent"))


def add_sms(device: Any, box: str, number: str, body: str, date_ms: int, read: bool = False) -> None:
    """Store a received ("inbox") or sent ("sent") message dated ``date_ms``."""
    content_insert(device, f"content://sms/{box}", [("address", "s", number), ("body", "s", body),
                                                    ("date", "l", date_ms), ("read", "i", int(read))])


def reset_sms(device: Any) -> None:
    """Delete every message and force-stop the app."""
    content_delete(device, "content://sms")
    force_stop(device, SMS_PKG)


def seed_threads(device: Any, threads: list[list[Any]], now_ms: int) -> None:
    """Insert background conversations: [number, body, minutes ago, box] each."""
    for number, body, minutes_ago, box in threads:
        add_sms(device, box, number, body, now_ms - int(minutes_ago) * 60_000, read=True)


def random_threads(rng: random.Random, n: int, oldest_first_minutes: int = 60) -> list[list[Any]]:
    """``n`` background conversations with strangers, at least ``oldest_first_minutes`` old."""
    out = []
    for i in range(n):
        out.append([random_phone_number(rng), rng.choice(MESSAGES), oldest_first_minutes + 37 * (i + 1),
                    rng.choice(("inbox", "inbox", "sent"))])
    return out


# --- expert pieces ------------------------------------------------------------------------------------

def _send_in_thread(ui: Any, message: str):
    ui = yield from type_into(ui, message, resource_id="thread_type_message")
    ui = yield from tap_id(ui, "thread_send_message", scroll=False)
    return ui


def _new_thread_with_number(ui: Any, number: str):
    ui = yield from tap_id(ui, "conversations_fab")
    ui = yield from type_into(ui, number, resource_id="new_conversation_address")
    ui = yield from tap_id(ui, "new_conversation_confirm", scroll=False)
    return ui


def _open_conversation(ui: Any, title: str):
    """From the conversation list, or from a thread the app reopened in (another thread: back to the list first)."""
    if any(id_is("thread_type_message")(e) for e in ui.elements):
        if any(text_is(title)(e) for e in ui.elements if e.bounds[1] < 300):
            return ui
        ui = yield PressBack()
    ui, row = yield from scroll_to(ui, lambda e: text_is(title)(e) and id_is("conversation_address")(e))
    return (yield tap(row))


def _bubbles(ui: Any, sent: bool) -> list[Any]:
    """Message bubbles on screen: sent ones sit on the right half, received ones start at the left edge."""
    width = max((e.bounds[2] for e in ui.elements), default=1080)
    out = [e for e in ui.elements if id_is("thread_message_body")(e)]
    return [e for e in out if (e.bounds[0] > width * 0.15) == sent]


class _SmsTask(Task):
    """AndroidWorld's SimpleSMSSendSms contract: a message to ``number`` with ``message``, sent from the app."""

    app_names = ("simple sms messenger",)
    suites = SUITES_AW

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"number": random_phone_number(rng), "message": rng.choice(MESSAGES),
                "threads": random_threads(rng, rng.randint(2, 4))}

    def initialize(self, device: Any) -> None:
        reset_sms(device)
        seed_threads(device, self.params.get("threads", []), device_time_ms(device))
        go_home(device)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        in_app = foreground_package(device) == SMS_PKG
        return float(in_app and was_sent(device, self.params["number"], self.params["message"]))


@register_task
class SimpleSmsSend(_SmsTask):
    """AndroidWorld: start a conversation with a number and send a message."""

    name = "SimpleSmsSend"
    template = "Send a text message using Simple SMS Messenger to {number} with message: {message}"
    difficulty = "medium"
    complexity = 2.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Simple SMS Messenger")
        ui = yield from _new_thread_with_number(ui, self.params["number"])
        ui = yield from _send_in_thread(ui, self.params["message"])
        yield from finish()


@register_task
class SimpleSmsReply(_SmsTask):
    """AndroidWorld: reply in the conversation with a number, among a few other conversations."""

    name = "SimpleSmsReply"
    template = "Reply to {number} with message: {message} in Simple SMS Messenger"
    difficulty = "easy"
    complexity = 1.5

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        params = super().generate_random_params(rng)
        n = rng.randint(1, 5)
        threads = [[random_phone_number(rng), rng.choice(MESSAGES), 3 + 4 * i, "inbox"] for i in range(n)]
        threads.insert(rng.randint(0, n), [params["number"], rng.choice(MESSAGES), 2 + 4 * rng.randint(0, n), "inbox"])
        params["threads"] = threads
        return params

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Simple SMS Messenger")
        ui = yield from _open_conversation(ui, self.params["number"])
        ui = yield from _send_in_thread(ui, self.params["message"])
        yield from finish()


@register_task
class SimpleSmsReplyMostRecent(_SmsTask):
    """AndroidWorld: reply to whoever texted last (the top conversation)."""

    name = "SimpleSmsReplyMostRecent"
    template = "Reply to the most recent text message using Simple SMS Messenger with message: {message}"
    difficulty = "medium"
    complexity = 1.5

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        params = super().generate_random_params(rng)
        others = [m for m in MESSAGES if m != params["message"]]
        threads = [[random_phone_number(rng), rng.choice(others), 5 + 3 * i, "inbox"]
                   for i in range(rng.randint(0, 5))]
        threads.append([params["number"], rng.choice(others), 1, "inbox"])
        params["threads"] = threads
        return params

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Simple SMS Messenger")
        rows = [e for e in ui.elements if id_is("conversation_address")(e)]
        if not rows:
            raise ExpertStuck("no conversations listed")
        ui = yield tap(min(rows, key=lambda e: e.bounds[1]))
        ui = yield from _send_in_thread(ui, self.params["message"])
        yield from finish()


@register_task
class SimpleSmsResend(_SmsTask):
    """AndroidWorld: send again the last message sent to a contact (who asked for it)."""

    name = "SimpleSmsResend"
    template = "Resend the message I just sent to {name} in Simple SMS Messenger"
    difficulty = "medium"
    complexity = 2.0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        params = super().generate_random_params(rng)
        params["name"] = random_names(rng, 1)[0]
        return params

    def initialize(self, device: Any) -> None:
        super().initialize(device)
        set_contacts(device, [(self.params["name"], self.params["number"], "Mobile")])
        now = device_time_ms(device)
        add_sms(device, "sent", self.params["number"], self.params["message"], now - 3 * 60_000, read=True)
        add_sms(device, "inbox", self.params["number"], GLITCH_TEXT, now - 2 * 60_000)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        if foreground_package(device) != SMS_PKG:
            return 0.0
        sent = [m for m in sms_rows(device, "sent") if digits(m["address"]) == digits(self.params["number"])]
        same = [m for m in sent if normalise_body(m["body"]) == normalise_body(self.params["message"])]
        return float(len(sent) == 2 and len(same) == 2)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Simple SMS Messenger")
        ui = yield from _open_conversation(ui, self.params["name"])
        mine = _bubbles(ui, sent=True)
        if not mine:
            raise ExpertStuck("no sent message in the conversation")
        x, y = mine[-1].center
        ui = yield LongPress(int(x), int(y))
        ui = yield from tap_text(ui, "Copy to clipboard", scroll=False)
        ui = yield from tap_id(ui, "thread_type_message", long=True, scroll=False)
        ui = yield from tap_text(ui, "Paste", scroll=False)
        ui = yield from tap_id(ui, "thread_send_message", scroll=False)
        yield from finish()


@register_task
class SimpleSmsSendClipboardContent(_SmsTask):
    """AndroidWorld: send the clipboard's text to a number (paste with long-press -> Paste)."""

    name = "SimpleSmsSendClipboardContent"
    template = "Send a message to {number} with the clipboard content in Simple SMS Messenger"
    difficulty = "easy"
    complexity = 2.0

    def initialize(self, device: Any) -> None:
        super().initialize(device)
        set_clipboard(device, self.params["message"])

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp("Simple SMS Messenger")
        ui = yield from _new_thread_with_number(ui, self.params["number"])
        ui = yield from tap_id(ui, "thread_type_message", long=True, scroll=False)
        ui = yield from tap_text(ui, "Paste", scroll=False)
        ui = yield from tap_id(ui, "thread_send_message", scroll=False)
        yield from finish()


@register_task
class SimpleSmsSendReceivedAddress(_SmsTask):
    """AndroidWorld: forward the address one contact texted to another contact."""

    name = "SimpleSmsSendReceivedAddress"
    template = "Text the address of the event to {name1} that {name2} just sent me in Simple SMS Messenger"
    difficulty = "medium"
    complexity = 2.5

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        params = super().generate_random_params(rng)
        name1, name2 = random_names(rng, 2)
        params.update(name1=name1, name2=name2, name2_number=random_phone_number(rng),
                      message=rng.choice(EVENT_ADDRESSES))
        return params

    def initialize(self, device: Any) -> None:
        super().initialize(device)
        p = self.params
        set_contacts(device, [(p["name1"], p["number"], "Mobile"), (p["name2"], p["name2_number"], "Mobile")])
        add_sms(device, "inbox", p["name2_number"], p["message"], device_time_ms(device) - 60_000)

    def expert(self, ui: Any) -> ExpertGenerator:
        p = self.params
        ui = yield OpenApp("Simple SMS Messenger")
        ui = yield from _open_conversation(ui, p["name2"])
        received = _bubbles(ui, sent=False)
        if not received:
            raise ExpertStuck("no received message in the conversation")
        address = received[-1].text
        ui = yield from tap_text(ui, "Back", scroll=False)
        ui = yield from tap_id(ui, "conversations_fab")
        ui = yield from type_into(ui, p["name1"], resource_id="new_conversation_address")
        ui, row = yield from scroll_to(ui, lambda e: text_is(p["name1"])(e) and id_is("item_contact_name")(e))
        ui = yield tap(row)
        ui = yield from _send_in_thread(ui, address)
        yield from finish()
