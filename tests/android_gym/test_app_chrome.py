"""The simulated Chrome: pages from the phone's storage run in a real web engine (Debian's chromium, headless, over
its DevTools pipe); the screen is the browser's rendering, the tree is the page's elements, taps, swipes and typing
reach the page's scripts. AndroidWorld's three Chrome tasks (BrowserMultiply, BrowserMaze, BrowserDraw) run with
its own set-up and check. Skipped, saying why, where chromium is not installed (.ci/run installs it)."""

from __future__ import annotations

import copy
import shutil

import pytest

from android_gym.sim import SimPhone
from android_gym.sim.apps.chrome import CHROME_PKG
from android_gym.sim.device import SimDevice
from android_gym.sim.web import web_engine_available
from android_gym.suites import android_world_available
from android_gym.tasks.base import TaskError, get_task_class
from android_gym.tasks.runner import run_expert

from .sim_ui import tap_on, texts, ui_of
from .task_checks import android_world_instance, check_android_world_expert_solves, check_expert_solves

NAMES = ["BrowserDraw", "BrowserMaze", "BrowserMultiply"]
needs_chromium = pytest.mark.skipif(
    not web_engine_available(),
    reason="chromium is not installed: the simulated Chrome runs pages in it (apt-get install chromium; .ci/run does)")
needs_android_world = pytest.mark.skipif(
    not android_world_available(),
    reason="the android_world package is not installed (tools/setup_env.sh installs it from ../shared/vendor)")

PAGE = """<!DOCTYPE html><html><head><title>Counter</title></head><body>
<p id="count">pressed 0 times</p><button id="b">Press</button>
<input id="name" placeholder="Your name"><p id="hello"></p>
<script>
let n = 0;
document.getElementById('b').onclick = () => { n++; document.getElementById('count').textContent = 'pressed ' + n + ' times'; };
document.getElementById('name').oninput = e => { document.getElementById('hello').textContent = 'Hello ' + e.target.value; };
</script></body></html>"""


def open_page(phone: SimPhone, html: str, name: str = "page.html") -> None:
    phone.files.write(f"/sdcard/Download/{name}", html.encode(), 1)
    phone.launch("com.google.android.documentsui")
    tap_on(phone, text=name)
    assert "Open with" in texts(phone)
    tap_on(phone, text="Chrome")


@needs_chromium
def test_a_pages_script_runs_and_taps_and_typing_reach_it():
    phone = SimPhone()
    open_page(phone, PAGE)
    assert phone.current_activity().startswith(CHROME_PKG + "/")
    shown = texts(phone)
    assert "file:///sdcard/Download/page.html" in shown and "pressed 0 times" in shown
    tap_on(phone, text="Press")
    tap_on(phone, text="Press")
    assert "pressed 2 times" in texts(phone)
    field = next(e for e in ui_of(phone).elements if e.class_name == "android.widget.EditText")
    assert field.text == "Your name" or field.hint == "Your name"
    phone.tap(*field.center)
    assert phone.keyboard_shown
    phone.type_text("Ada")
    assert "Hello Ada" in texts(phone)
    shot = phone.screenshot()  # the browser's own rendering: dark text pixels on the page's white
    assert shot.shape == (phone.height, phone.width, 3) and shot.min() < 60


@needs_chromium
def test_a_snapshot_keeps_the_address_and_a_restore_loads_the_page_afresh():
    phone = SimPhone()
    open_page(phone, PAGE)
    tap_on(phone, text="Press")
    state = copy.deepcopy(phone.app(CHROME_PKG).state())
    assert "_engine" not in state and state["url"] == "file:///sdcard/Download/page.html"
    phone.app(CHROME_PKG).load_state(state)
    phone.invalidate()
    assert "pressed 0 times" in texts(phone)


@needs_chromium
def test_force_stop_ends_the_browser_process():
    phone = SimPhone()
    open_page(phone, PAGE)
    assert "Press" in texts(phone)  # the page is on screen: its browser runs
    engine = phone.app(CHROME_PKG).engine
    assert engine is not None and engine.alive
    phone.force_stop(CHROME_PKG)
    assert not engine.alive


def test_without_chromium_chrome_says_why_and_the_tasks_refuse_to_start(monkeypatch):
    monkeypatch.setenv("ANDROID_GYM_CHROMIUM", "/nonexistent/chromium")
    phone = SimPhone()
    open_page(phone, PAGE)
    assert any("apt-get install chromium" in t for t in texts(phone))
    with pytest.raises(TaskError, match="apt-get install chromium"):
        get_task_class("BrowserMultiply")(seed=0).initialize(SimDevice())


@needs_chromium
@pytest.mark.parametrize("name", NAMES)
def test_recreation_is_solved_by_its_expert_and_not_at_its_start(name):
    task = get_task_class(name)(seed=3)
    device = SimDevice()
    task.initialize(device)
    assert task.is_successful(device) == 0.0
    task.teardown(device)
    result = run_expert(get_task_class(name)(seed=3), SimDevice())
    assert result.success == 1.0 and result.steps <= task.max_steps


@needs_chromium
@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_the_recreation_on_five_seeds(name):
    check_expert_solves(name)


@needs_chromium
@needs_android_world
@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_androidworlds_instances_on_three_seeds(name):
    """AndroidWorld's own page (its task.html with its seed), its set-up through the sim's shell and its check
    (Chrome in front, an element reading "Success!")."""
    check_android_world_expert_solves(name, seeds=3)


@needs_chromium
@needs_android_world
def test_androidworlds_page_says_nothing_until_it_is_solved():
    device = SimDevice()
    task = android_world_instance("BrowserMultiply", 4, device).task
    phone = device.phone
    assert phone.files.is_file("/sdcard/Download/task.html")
    open_page(phone, phone.files.read("/sdcard/Download/task.html").decode(), "task.html")
    assert task.is_successful(device) == 0.0
    assert "Click Me" in texts(phone)
    task.teardown(device)


def test_chromium_lookup_follows_the_environment(monkeypatch):
    from android_gym.sim.web import chromium_path

    monkeypatch.setenv("ANDROID_GYM_CHROMIUM", "/nonexistent/chromium")
    assert chromium_path() is None
    monkeypatch.delenv("ANDROID_GYM_CHROMIUM")
    assert chromium_path() == (shutil.which("chromium") or shutil.which("chromium-browser")
                               or shutil.which("google-chrome"))


@needs_chromium
def test_a_swipe_scrolls_a_long_page_and_draws_on_a_canvas():
    long_page = ("<html><head><meta name='viewport' content='width=device-width'></head><body>"
                 + "".join(f"<p style='height: 120px'>Line {i}</p>" for i in range(40))
                 + "<canvas id='c' width='200' height='200' style='border: 1px solid black'></canvas>"
                 "<p id='ink'>not drawn</p><script>const c = document.getElementById('c'); const g = c.getContext('2d');"
                 "let last = null; c.onmousedown = e => { last = [e.offsetX, e.offsetY]; };"
                 "c.onmousemove = e => { if (!last) return; g.beginPath(); g.moveTo(...last); g.lineTo(e.offsetX, "
                 "e.offsetY); g.stroke(); last = [e.offsetX, e.offsetY]; "
                 "document.getElementById('ink').textContent = 'drawn'; };"
                 "c.onmouseup = () => { last = null; };</script></body></html>")
    phone = SimPhone()
    open_page(phone, long_page)
    assert "Line 0" in texts(phone) and "Line 39" not in texts(phone)
    for _ in range(12):  # to the page's end (scrolling stops there)
        phone.swipe(phone.width // 2, phone.height * 3 // 4, phone.width // 2, phone.height // 4)
    assert "Line 0" not in texts(phone) and "Line 39" in texts(phone)
    canvas = next(e for e in ui_of(phone).elements if e.class_name == "android.view.View" and e.clickable)
    x1, y1, x2, y2 = canvas.bounds
    phone.swipe(x1 + 20, (y1 + y2) // 2, x2 - 20, (y1 + y2) // 2 + 10)
    assert "drawn" in texts(phone)
