"""The simulated Simple SMS Messenger and its tasks: threads, the SMS provider, intents, experts and random agents."""

from __future__ import annotations

import random

import pytest

from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.device_state import parse_rows
from android_gym.tasks.runner import run_expert
from android_gym.tasks.sim import sms as sms_tasks
from android_gym.tasks.sim.sms import normalise_body

from .sim_ui import tap_on, texts, ui_of
from .task_checks import (
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
    random_policy,
)

PKG = "com.simplemobiletools.smsmessenger"
NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ == sms_tasks.__name__)
COLS = ["address", "type", "read", "body"]
CODE = "Your verification code is 482913. It expires in 10 minutes."


def messages(phone: SimPhone, box: str = "") -> list[dict[str, str]]:
    uri = "content://sms" + (f"/{box}" if box else "")
    return parse_rows(phone.shell(f"content query --uri {uri} --projection {':'.join(COLS)}"), COLS)


# --- the app ---------------------------------------------------------------------------------------

def test_conversations_newest_first_with_contact_names():
    phone = SimPhone()
    phone.shell("content insert --uri content://sms/inbox --bind address:s:+16175550190 "
                "--bind body:s:'Running late, sorry'")
    phone.launch(PKG)
    titles = [e.text for e in ui_of(phone).elements if e.resource_id.endswith("conversation_address")]
    assert titles[0] == "Daniel Okafor"  # +16175550190 is a contact; its new message is the newest
    assert "+18885550100" in titles  # an unknown sender shows as the number
    assert "Running late, sorry" in texts(phone)
    assert messages(phone, "inbox")[0]["read"] == "0"
    tap_on(phone, text="Daniel Okafor")
    assert messages(phone, "inbox")[0]["read"] == "1"
    bodies = [e.text for e in ui_of(phone).elements if e.resource_id.endswith("thread_message_body")]
    assert bodies[-1] == "Running late, sorry"  # opened at the newest message


def test_send_in_a_thread_records_a_sent_message_at_device_time():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="Chloe Martin")
    tap_on(phone, rid="thread_type_message")
    phone.type_text("See you, there, at 9")
    tap_on(phone, rid="thread_send_message")
    sent = parse_rows(phone.shell("content query --uri content://sms/sent --projection address:date:body"),
                      ["address", "date", "body"])[0]
    assert sent["address"] == "+14155550112" and sent["body"] == "See you, there, at 9"
    now_ms = int(phone.shell("date +%s")) * 1000
    assert 0 <= now_ms - int(sent["date"]) < 10_000
    field = next(e for e in ui_of(phone).elements if e.resource_id.endswith("thread_type_message"))
    assert field.text == "Type a message\u2026"  # cleared, the hint shows again


def test_new_conversation_by_number_and_by_contact_pick():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, rid="conversations_fab")
    phone.type_text("+15550001111")
    tap_on(phone, rid="new_conversation_confirm")
    assert phone.apps[PKG].page == "thread"
    tap_on(phone, rid="thread_type_message")
    phone.type_text("hi")
    tap_on(phone, rid="thread_send_message")
    phone.back()
    phone.back()
    tap_on(phone, rid="conversations_fab")
    phone.type_text("tanaka")
    names = [e.text for e in ui_of(phone).elements if e.resource_id.endswith("item_contact_name")]
    assert names == ["Hiro Tanaka"]
    tap_on(phone, text="Hiro Tanaka")
    assert "Hiro Tanaka" in texts(phone)
    tap_on(phone, rid="thread_type_message")
    phone.type_text("hello Hiro")
    tap_on(phone, rid="thread_send_message")
    assert [(m["address"], m["body"]) for m in messages(phone, "sent")[:2]] == [
        ("+15035550186", "hello Hiro"), ("+15550001111", "hi")]


def test_copy_paste_forward_and_delete_a_message():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="+18885550100")
    tap_on(phone, text=CODE, rid="thread_message_body", long=True)
    tap_on(phone, text="Copy to clipboard")
    tap_on(phone, rid="thread_type_message", long=True)
    tap_on(phone, text="Paste")
    field = next(e for e in ui_of(phone).elements if e.resource_id.endswith("thread_type_message"))
    assert field.text.startswith("Your verification code is 482913")
    tap_on(phone, text=CODE, rid="thread_message_body", long=True)
    tap_on(phone, text="Forward")
    assert phone.apps[PKG].page == "new"
    phone.type_text("+15550002222")
    tap_on(phone, rid="new_conversation_confirm")
    field = next(e for e in ui_of(phone).elements if e.resource_id.endswith("thread_type_message"))
    assert field.text.startswith("Your verification code")  # forwarded text waits in the draft
    phone.back()
    phone.back()
    tap_on(phone, text="+18885550100")
    tap_on(phone, text=CODE, rid="thread_message_body", long=True)
    tap_on(phone, text="Delete")
    tap_on(phone, text="Yes")
    assert all(m["address"] != "+18885550100" for m in messages(phone))
    assert phone.apps[PKG].page == "main"  # the conversation is gone


def test_sendto_intent_opens_a_thread_with_the_body_drafted():
    phone = SimPhone()
    out = phone.shell("am start -a android.intent.action.SENDTO -d sms:+15551234567 -e sms_body 'Hi there'")
    assert out.startswith("Starting: Intent")
    assert phone.foreground == PKG and phone.apps[PKG].page == "thread"
    field = next(e for e in ui_of(phone).elements if e.resource_id.endswith("thread_type_message"))
    assert field.text == "Hi there"


def test_provider_boxes_where_and_errors():
    phone = SimPhone()
    phone.shell("content delete --uri content://sms")
    assert phone.shell("content query --uri content://sms") == "No result found.\n"
    phone.shell("content insert --uri content://sms/inbox --bind address:s:+1555 --bind body:s:'a, b=c' "
                "--bind date:l:1697300000000")
    phone.shell("content insert --uri content://sms/sent --bind address:s:+1555 --bind body:s:reply")
    assert [(m["type"], m["body"]) for m in messages(phone)] == [("2", "reply"), ("1", "a, b=c")]
    assert messages(phone, "inbox")[0]["body"] == "a, b=c"
    assert len(messages(phone, "sent")) == 1
    out = phone.shell("content query --uri content://sms --where \"type=2\" --projection body")
    assert out == "Row: 0 body=reply\n"
    assert "unknown sms box" in phone.shell("content query --uri content://sms/draft")
    assert "needs `address` and `body`" in phone.shell("content insert --uri content://sms/inbox --bind body:s:x")


def test_body_normalisation_rule():
    assert normalise_body("  Hello,   World!! ") == "hello, world"
    assert normalise_body("Meeting moved to 3 PM.") == normalise_body("meeting moved to 3 pm")
    assert normalise_body("a.b") != normalise_body("ab")


# --- tasks ------------------------------------------------------------------------------------------

def test_task_names_templates_and_budgets_match_androidworld(realdata):
    check_android_world_tasks(realdata, NAMES)
    assert len(NAMES) == 6


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_five_seeds(name):
    check_expert_solves(name)


@pytest.mark.parametrize("name", NAMES)
def test_initial_state_is_not_a_success_and_initialize_is_repeatable(name):
    query = "content query --uri content://sms --projection address:type:body"
    check_start_state(TASK_REGISTRY[name](seed=2), lambda device: device.shell(query), launch(PKG))


def test_sending_outside_the_app_or_the_wrong_text_does_not_count():
    task = TASK_REGISTRY["SimpleSmsSend"](seed=5)
    device = SimDevice()
    assert run_expert(task, device).success == 1.0
    device.shell("input keyevent 3")
    assert task.is_successful(device) == 0.0  # AndroidWorld also wants the app in front
    other = TASK_REGISTRY["SimpleSmsSend"]({"number": task.params["number"], "message": "Something else"})
    device.shell(f"monkey -p {PKG} -c android.intent.category.LAUNCHER 1")
    assert other.is_successful(device) == 0.0


def test_resend_needs_exactly_one_more_copy():
    task = TASK_REGISTRY["SimpleSmsResend"](seed=1)
    device = SimDevice()
    assert run_expert(task, device).success == 1.0
    p = task.params
    device.shell(f"content insert --uri content://sms/sent --bind address:s:{p['number']} "
                 f"--bind body:s:'{p['message'].replace(chr(39), '')}'")
    assert task.is_successful(device) == 0.0


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: random_policy(random.Random(seed)), step_cap=15)
