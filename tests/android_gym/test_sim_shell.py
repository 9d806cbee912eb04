"""The simulated phone's shell surface: each supported command and how failures read."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from android_gym.sim import SimPhone


@pytest.fixture()
def phone() -> SimPhone:
    return SimPhone()


def test_unknown_command_answers_like_sh_with_status_127(phone):
    assert phone.shell("frobnicate --now") == "/system/bin/sh: frobnicate: inaccessible or not found\n"
    assert phone.last_status == 127
    phone.shell("echo ok")
    assert phone.last_status == 0


def test_settings_get_put_delete_list(phone):
    assert phone.shell("settings get global wifi_on") == "1\n"
    phone.shell("settings put global wifi_on 0")
    assert phone.shell("settings get global wifi_on").strip() == "0"
    assert phone.shell("settings get system no_such_key").strip() == "null"
    phone.shell("settings put secure my_key hello")
    assert "my_key=hello" in phone.shell("settings list secure").splitlines()
    assert phone.shell("settings delete secure my_key").startswith("Deleted 1")
    assert phone.shell("settings get secure my_key").strip() == "null"
    phone.shell("settings get bogus wifi_on")
    assert phone.last_status != 0


def test_content_query_settings_provider_with_where_projection_sort(phone):
    out = phone.shell("content query --uri content://settings/global --where \"name='wifi_on'\"")
    assert out.startswith("Row: 0 ") and "name=wifi_on" in out and "value=1" in out
    out = phone.shell("content query --uri content://settings/system --projection name:value "
                      "--where \"name LIKE 'volume%'\" --sort \"name DESC\"")
    lines = out.strip().splitlines()
    assert [ln.split()[2] for ln in lines] == ["name=volume_ring,", "name=volume_music,", "name=volume_alarm,"]
    assert phone.shell("content query --uri content://settings/global --where \"name='nope'\"") == \
        "No result found.\n"
    phone.shell("content query --uri content://no.such.authority/x")
    assert phone.last_status != 0


def test_content_insert_update_delete_on_settings(phone):
    phone.shell("content insert --uri content://settings/system --bind name:s:my_flag --bind value:i:3")
    assert phone.shell("settings get system my_flag").strip() == "3"
    phone.shell("content update --uri content://settings/system --bind value:s:4 --where \"name='my_flag'\"")
    assert phone.shell("settings get system my_flag").strip() == "4"
    phone.shell("content delete --uri content://settings/system --where \"name='my_flag'\"")
    assert phone.shell("settings get system my_flag").strip() == "null"


def test_monkey_am_start_force_stop_and_dumpsys(phone):
    out = phone.shell("monkey -p com.android.settings -c android.intent.category.LAUNCHER 1")
    assert "Events injected: 1" in out
    assert "mCurrentFocus=Window{" in phone.shell("dumpsys window")
    assert "com.android.settings/com.android.settings.Settings}" in phone.shell("dumpsys window")
    assert "mFocusedApp=ActivityRecord{" in phone.shell("dumpsys window | grep mFocusedApp")
    phone.shell("am force-stop com.android.settings")
    assert "nexuslauncher" in phone.shell("dumpsys window | grep mCurrentFocus")
    assert phone.shell("am start -n com.android.settings/.Settings").startswith("Starting: Intent")
    assert phone.foreground == "com.android.settings"
    phone.shell("monkey -p com.not.installed -c android.intent.category.LAUNCHER 1")
    assert phone.last_status != 0
    phone.shell("am start -n com.not.installed/.Main")
    assert phone.last_status != 0


def test_input_commands_move_the_ui(phone):
    phone.shell("monkey -p com.android.settings 1")
    before = phone.dump()
    phone.shell("input swipe 540 1800 540 900 300")
    assert phone.dump() != before
    phone.shell("input keyevent KEYCODE_BACK")
    assert phone.foreground == "com.google.android.apps.nexuslauncher"
    phone.shell("input keyevent 3")
    phone.shell("input tap 99999 99999")  # off screen: nothing happens, no error
    assert phone.last_status == 0
    phone.shell("input tap x y")
    assert phone.last_status != 0
    phone.shell("input keyevent KEYCODE_NOT_A_KEY")
    assert phone.last_status != 0


def test_input_text_decodes_percent_s_and_quotes(phone):
    phone.launch("com.android.settings")
    phone.app("com.android.settings").push("search")
    phone.shell("input text 'it'\\''s%sa\\%s%stest'")
    assert phone.focused_field().text == "it's a\\  test"  # like Android: only %s is decoded, no escapes


def test_uiautomator_dump_writes_file_and_prints_the_real_message(phone):
    assert phone.shell("uiautomator dump") == "UI hierchary dumped to: /sdcard/window_dump.xml\n"
    assert phone.shell("cat /sdcard/window_dump.xml") == phone.dump()
    out = phone.shell("uiautomator dump /sdcard/x/ui.xml")
    assert out.strip().endswith("/sdcard/x/ui.xml")
    assert phone.files.read_text("/sdcard/x/ui.xml").startswith("<?xml")


def test_screencap_png_bytes_and_file(phone):
    png = phone.exec_out("screencap -p")
    img = Image.open(io.BytesIO(png))
    assert img.size == (1080, 2400)
    assert np.array_equal(np.asarray(img.convert("RGB")), phone.screenshot())
    phone.shell("screencap -p /sdcard/s.png")
    assert phone.files.read("/sdcard/s.png") == png


def test_wm_getprop_date_pm(phone):
    assert phone.shell("wm size") == "Physical size: 1080x2400\n"
    assert phone.shell("wm density") == "Physical density: 420\n"
    assert phone.shell("getprop ro.build.version.sdk").strip() == "33"
    assert phone.shell("getprop sys.boot_completed").strip() == "1"
    assert "[ro.product.model]: [Pixel 6]" in phone.shell("getprop")
    assert phone.shell("date").strip() == "Sun Oct 15 15:34:00 UTC 2023"
    assert phone.shell("date +%Y-%m-%d").strip() == "2023-10-15"
    pkgs = phone.shell("pm list packages").split()
    assert "package:com.android.settings" in pkgs and "package:com.android.systemui" in pkgs
    assert "package:com.android.systemui" not in phone.shell("pm list packages -3").split()


def test_files_echo_redirect_cat_ls_cp_mv_rm_mkdir_touch(phone):
    phone.shell("mkdir -p /sdcard/Notes/sub")
    phone.shell("echo hello world > /sdcard/Notes/a.md")
    phone.shell("echo more >> /sdcard/Notes/a.md")
    assert phone.shell("cat /sdcard/Notes/a.md") == "hello world\nmore\n"
    assert phone.shell("cat /storage/emulated/0/Notes/a.md") == "hello world\nmore\n"
    phone.shell("cp /sdcard/Notes/a.md /sdcard/Notes/b.md")
    phone.shell("mv /sdcard/Notes/b.md /sdcard/Notes/sub/")
    phone.shell("touch /sdcard/Notes/empty.txt")
    assert phone.shell("ls /sdcard/Notes").split() == ["a.md", "empty.txt", "sub"]
    assert phone.shell("ls /sdcard/Notes/sub").split() == ["b.md"]
    phone.shell("rm /sdcard/Notes/sub")
    assert phone.last_status != 0  # a directory needs -r
    phone.shell("rm -r /sdcard/Notes/sub && echo gone")
    assert phone.shell("ls /sdcard/Notes").split() == ["a.md", "empty.txt"]
    assert "No such file" in phone.shell("cat /sdcard/nope.txt")
    assert phone.last_status == 1
    phone.shell("rm -f /sdcard/nope.txt")
    assert phone.last_status == 0
    assert phone.shell("ls /sdcard/Notes | wc -l").strip() == "2"


def test_sequencing_and_pipes(phone):
    assert phone.shell("echo a; echo b") == "a\nb\n"
    assert phone.shell("false && echo no") == ""
    assert phone.shell("false || echo yes") == "yes\n"
    assert phone.shell("getprop | grep -c ro.build") .strip().isdigit()
    assert phone.shell("printf x") .startswith("/system/bin/sh: printf")


def test_sleep_advances_the_clock_without_sleeping(phone):
    start = phone.now()
    phone.shell("sleep 60")
    assert (phone.now() - start).total_seconds() == 60


def test_svc_and_cmd_toggle_radios(phone):
    phone.shell("svc wifi disable")
    assert phone.shell("settings get global wifi_on").strip() == "0"
    phone.shell("svc bluetooth enable")
    assert phone.shell("settings get global bluetooth_on").strip() == "1"
    phone.shell("cmd connectivity airplane-mode enable")
    assert phone.shell("settings get global airplane_mode_on").strip() == "1"


def test_am_start_with_action_opens_the_declared_page(phone):
    assert "act=android.settings.WIFI_SETTINGS" in phone.shell("am start -a android.settings.WIFI_SETTINGS")
    assert phone.current_activity() == "com.android.settings/.Settings$NetworkProviderSettingsActivity"
    phone.shell("am start -a android.intent.action.NOTHING_HANDLES_THIS")
    assert phone.last_status == 1
