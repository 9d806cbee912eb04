"""The sim's shell answers what AndroidWorld's set-up and checks send, and the apps' SQLite files track their state.

No android_world needed: the command lines here are the ones its adb_utils, file_utils and
sqlite_utils send (``if [ -f ... ]; then ... fi`` scripts, ``service call alarm``, ``date``,
``find -delete``, ``pm clear``, ``am stack list``, globs, ``sqlite3``, MediaStore ``content``).
"""

from __future__ import annotations

import sqlite3

import pytest

from android_gym.sim import SimDevice, SimPhone
from android_gym.sim.databases import build_database, read_table

CALENDAR = "com.simplemobiletools.calendar.pro"
EVENTS_DB = f"/data/data/{CALENDAR}/databases/events.db"
EXPENSE_DB = "/data/data/com.arduia.expense/databases/accounting.db"
SMS_DB = "/data/data/com.android.providers.telephony/databases/mmssms.db"


def run(phone: SimPhone, command: str) -> tuple[str, int]:
    out = phone.shell(command)
    return out, phone.last_status


def test_if_then_else_scripts_over_several_lines():
    phone = SimPhone()
    phone.files.write("/sdcard/Download/a.txt", "x")
    script = '''
  if [ -f "/sdcard/Download/a.txt" ]; then
      echo "Exists"
  else
      echo "Does not exist"
  fi
  '''
    assert run(phone, script) == ("Exists\n", 0)
    assert run(phone, script.replace("a.txt", "b.txt")) == ("Does not exist\n", 0)
    assert run(phone, 'if [ -d /sdcard/Download ]; then echo dir; fi; echo after') == ("dir\nafter\n", 0)
    assert run(phone, "if false; then echo a; elif true; then echo b; else echo c; fi") == ("b\n", 0)
    assert run(phone, "if true; then if false; then echo x; else echo inner; fi; fi") == ("inner\n", 0)
    out, status = run(phone, "if true; then echo a")
    assert status == 2 and "without 'fi'" in out
    assert run(phone, "[ a = a ] && echo same") == ("same\n", 0)
    assert run(phone, "test -z '' && [ ! -e /nope ] && echo ok") == ("ok\n", 0)


def test_date_timezone_and_clock_as_androidworld_sets_them():
    phone = SimPhone()
    assert run(phone, "service call alarm 3 s16 Europe/Paris")[0].startswith("Result: Parcel(")
    assert phone.shell("getprop persist.sys.timezone").strip() == "Europe/Paris"
    run(phone, "date 1020093023.15")  # MMDDhhmmYY.ss, what AndroidWorld's datetime_utils send
    assert phone.now().isoformat() == "2023-10-20T09:30:15"
    assert phone.shell("date +%Y-%m-%d").strip() == "2023-10-20"
    out, status = run(phone, "date 1399")
    assert status == 1 and "bad date" in out


def test_find_globs_copies_and_full_time_listing():
    phone = SimPhone()
    for name in ("a.txt", "b.md", "sub/c.txt"):
        phone.files.write(f"/sdcard/Documents/t/{name}", name)
    found = phone.shell("find /storage/emulated/0/Documents/t -type f").split()
    assert found == ["/storage/emulated/0/Documents/t/a.txt", "/storage/emulated/0/Documents/t/b.md",
                     "/storage/emulated/0/Documents/t/sub/c.txt"]
    assert phone.shell("find /sdcard/Documents/t -name '*.txt' -maxdepth 1").split() == ["/sdcard/Documents/t/a.txt"]
    assert sorted(phone.shell("ls /storage/emulated/0/Documents/t/*.txt").split()) == ["/sdcard/Documents/t/a.txt"]
    run(phone, "cp -a /sdcard/Documents/t/. /sdcard/Download/copy/")
    assert phone.files.read_text("/sdcard/Download/copy/sub/c.txt") == "sub/c.txt"
    line = phone.shell("ls /sdcard/Download/copy -ll -au").splitlines()[0]
    assert line.startswith("-rw-rw----") and ".000000000 +0000 a.txt" in line and len(line.split(None, 8)) == 9
    run(phone, "rm -r /storage/emulated/0/Documents/t/*")
    assert phone.files.listdir("/sdcard/Documents/t") == []
    run(phone, "find /sdcard/Download -mindepth 1 -type f -delete")
    assert phone.files.walk_files("/sdcard/Download") == []
    assert phone.shell("ls /sdcard/nothing/*") and phone.last_status == 1  # no match: the word stays, as in sh


def test_recents_tasks_and_pm_clear():
    phone = SimPhone()
    phone.shell("monkey -p com.google.android.deskclock 1")
    visible = phone.shell("am stack list | grep -E visible=true")
    assert "topActivity=ComponentInfo{com.google.android.deskclock/" in visible
    recents = phone.shell("dumpsys activity recents")
    ids = [w[3:] for w in recents.split() if w.startswith("id=")]
    assert ids
    for task_id in ids:
        phone.shell(f"am stack remove {task_id}")
    assert phone.recents == [] and phone.foreground == "com.google.android.apps.nexuslauncher"
    assert phone.apps["com.arduia.expense"].expenses
    assert phone.shell("pm clear com.arduia.expense") == "Success\n"
    assert phone.apps["com.arduia.expense"].expenses == []
    phone.shell("pm clear com.android.providers.contacts")  # the contacts provider's data: the Contacts app's
    assert phone.apps["com.google.android.contacts"].contacts == []
    assert run(phone, "pm clear com.example.none")[1] == 1


def test_app_databases_follow_the_app_and_written_files_reach_it(tmp_path):
    device = SimDevice()
    phone = device.phone
    calendar = phone.apps[CALENDAR]
    rows = read_table(phone.files.read(EVENTS_DB), "events")
    assert [r["title"] for r in rows] == [e["title"] for e in calendar.events]
    phone.shell(f"content delete --uri content://com.android.calendar/events --where \"title='{rows[0]['title']}'\"")
    assert len(read_table(phone.files.read(EVENTS_DB), "events")) == len(rows) - 1  # the file follows the app

    local = tmp_path / "events.db"
    device.pull(EVENTS_DB, str(local))
    with sqlite3.connect(local) as conn:
        conn.execute("DELETE FROM events")
        conn.execute("INSERT INTO events (start_ts, end_ts, title, location, description, reminder_1_minutes, "
                     "reminder_2_minutes, reminder_3_minutes, reminder_1_type, reminder_2_type, reminder_3_type, "
                     "repeat_interval, repeat_rule, repeat_limit, repetition_exceptions, attendees, import_id, "
                     "time_zone, flags, event_type, parent_id, last_updated, source, availability, color, type) "
                     "VALUES (1697371200, 1697374800, 'Dentist', 'Main St', '', -1, -1, -1, 0, 0, 0, 604800, 1, 0, "
                     "'[]', '', '', 'UTC', 0, 1, 0, 0, 'x', 0, 0, 0)")
    device.push(str(local), EVENTS_DB)  # the app reads the pushed file, as Simple Calendar would after a restart
    assert [(e["title"], e["eventLocation"], e["rrule"]) for e in calendar.events] == [("Dentist", "Main St",
                                                                                        "FREQ=WEEKLY")]

    phone.snapshot_save("s")
    phone.shell(f'sqlite3 {EXPENSE_DB} "DELETE FROM expense WHERE amount > 0;"')
    assert phone.apps["com.arduia.expense"].expenses == []
    phone.snapshot_load("s")  # a restored snapshot serves its own state from the database paths again
    assert read_table(phone.files.read(EXPENSE_DB), "expense")
    assert phone.shell(f'sqlite3 {EXPENSE_DB} "SELECT count(*) FROM expense;"').strip().isdigit()
    out, status = run(phone, f'sqlite3 {SMS_DB} "SELECT * FROM nope;"')
    assert status == 1 and "no such table" in out


def test_incoming_texts_and_media_store():
    device = SimDevice()
    phone = device.phone
    assert device.console.command("sms send +15550001111 Running late") == "OK\r\n"
    sms = phone.apps["com.simplemobiletools.smsmessenger"]
    assert sms.messages[-1]["address"] == "+15550001111" and sms.messages[-1]["type"] == 1
    assert "Running late" in phone.shell(f'sqlite3 {SMS_DB} "SELECT body FROM sms WHERE type = 1;"')
    phone.files.write("/sdcard/Download/receipt.png", b"png")
    phone.files.write("/sdcard/Download/notes.txt", b"txt")
    rows = phone.shell("content query --uri content://media/external/images/media --projection _display_name")
    assert rows.strip() == "Row: 0 _display_name=receipt.png"
    phone.shell("content delete --uri content://media/external/downloads")
    assert phone.files.walk_files("/sdcard/Download") == []


def test_database_helpers_reject_what_is_not_a_database():
    data = build_database(["CREATE TABLE t (a INTEGER, b TEXT)"], {"t": [{"a": 1, "b": "x"}]})
    assert read_table(data, "t") == [{"a": 1, "b": "x"}]
    with pytest.raises(ValueError, match="cannot read table"):
        read_table(b"not a database at all" * 10, "t")
