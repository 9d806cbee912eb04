"""AndroidWorld's three Chrome tasks re-created: a page (task.html in Download) whose script says "Success!".

Each task writes a page to ``Download/task.html``; the agent opens it from Files ("Open with" Chrome)
and works the page. The simulated Chrome runs the page in a real web engine (headless chromium,
:mod:`android_gym.sim.apps.chrome`), so the page's own script decides, and the check is AndroidWorld's:
Chrome is in front and some element on screen reads "Success!".

- ``BrowserMultiply``: a number shows; "Click Me" shows the next, five in all, then a field asks for
  their product.
- ``BrowserMaze``: a grid of cells (walls black, the goal green, the player an X in the top-left cell);
  Up/Down/Left/Right move the X; reaching the goal succeeds.
- ``BrowserDraw``: three colour swatches at the top, a canvas and a palette of colour buttons; drawing
  with all three colours and pressing Submit succeeds (the page reads the canvas's pixels).

The pages here are our own, built like AndroidWorld's (which run on the sim through
:class:`~android_gym.suites.android_world_sim.AndroidWorldSimSuite`). The experts read the page as an agent
does: numbers and buttons from the accessibility tree; the maze's walls and the colours from the
screenshot's pixels (``reads_pixels``), since the page gives them no text.
"""

from __future__ import annotations

import math
import random
import re
from collections import deque
from collections.abc import Callable
from typing import Any, ClassVar

from android_gym.actions import Finished, OpenApp, Swipe
from android_gym.tasks.base import ExpertGenerator, Task, TaskError, register_task
from android_gym.tasks.device_state import force_stop, foreground_package, screen_nodes
from android_gym.tasks.expert import ExpertStuck, find, tap, tap_text, type_into
from android_gym.tasks.sim.gallery import clear_storage
from android_gym.tasks.sim.vlc import push_bytes
from android_gym.tasks.suites import SUITES_AW

CHROME_PACKAGE = "com.android.chrome"
FILES_PACKAGE = "com.google.android.documentsui"
TASK_PAGE = "/storage/emulated/0/Download/task.html"
WEB_VIEW = "android.webkit.WebView"
PREAMBLE = "Open the file task.html in Downloads in the file manager; when prompted open it with Chrome."

_RNG_JS = """
let rngState = (%d >>> 0);
function rand() {  /* a linear congruential generator, so the page is the same for a seed */
  rngState = (Math.imul(rngState, 1103515245) + 12345) >>> 0;
  return rngState / 4294967296;
}
"""

MULTIPLY_PAGE = """<!DOCTYPE html>
<html><head><title>Memory Task</title>
<style>
  body { font-family: sans-serif; text-align: center; margin-top: 40px; }
  #shown { font-size: 48px; margin-bottom: 16px; }
  button { font-size: 24px; padding: 10px 20px; }
  #ask input, #ask button { font-size: 18px; padding: 5px; }
</style></head>
<body>
  <div id="shown"></div>
  <button id="more">Click Me</button>
  <div id="ask" style="display: none"><input id="answer" type="number" placeholder="Enter the product">
    <button id="check">Submit</button></div>
  <div id="verdict"></div>
<script>%s
  const values = [];
  let presses = 0;
  function showNext() {
    const v = 1 + Math.floor(rand() * 10);
    values.push(v);
    document.getElementById('shown').textContent = String(v);
  }
  document.getElementById('more').addEventListener('click', () => {
    presses += 1;
    if (presses < 5) { showNext(); return; }
    document.getElementById('more').style.display = 'none';
    document.getElementById('shown').style.display = 'none';
    document.getElementById('ask').style.display = 'block';
  });
  document.getElementById('check').addEventListener('click', () => {
    const want = values.reduce((a, b) => a * b, 1);
    const got = Number(document.getElementById('answer').value);
    document.getElementById('verdict').innerHTML = got === want ? '<h2>Success!</h2>' : '<h2>Try again</h2>';
  });
  showNext();
</script></body></html>
"""

MAZE_PAGE = """<!DOCTYPE html>
<html><head><title>Maze Puzzle</title>
<style>
  .line { display: flex; }
  .square { width: 110px; height: 110px; border: 1px solid black; display: flex; align-items: center;
            justify-content: center; font-size: 56px; }
  .blocked { background: black; }
  .target { background: green; }
  .pad button { font-size: 30px; padding: 15px 28px; margin: 10px 5px 0 0; }
</style></head>
<body>
  <div id="grid"></div>
  <div class="pad"><button data-d="up">Up</button><button data-d="down">Down</button>
    <button data-d="left">Left</button><button data-d="right">Right</button></div>
<script>%s
  const N = 4;
  const open = [];
  for (let r = 0; r < N; r++) { open.push(new Array(N).fill(false)); }
  /* a random monotone path from the top-left to the bottom-right cell, then some other open cells */
  let r = 0, c = 0;
  open[0][0] = true;
  while (r < N - 1 || c < N - 1) {
    if (r === N - 1) c++; else if (c === N - 1) r++; else if (rand() < 0.5) r++; else c++;
    open[r][c] = true;
  }
  for (let i = 0; i < N; i++) for (let j = 0; j < N; j++) if (!open[i][j] && rand() < 0.35) open[i][j] = true;
  const me = { r: 0, c: 0 };
  function draw() {
    const grid = document.getElementById('grid');
    grid.innerHTML = '';
    for (let i = 0; i < N; i++) {
      const line = document.createElement('div');
      line.className = 'line';
      for (let j = 0; j < N; j++) {
        const cell = document.createElement('div');
        cell.className = 'square';
        if (!open[i][j]) cell.classList.add('blocked');
        else if (i === me.r && j === me.c) cell.textContent = 'X';
        else if (i === N - 1 && j === N - 1) cell.classList.add('target');
        line.appendChild(cell);
      }
      grid.appendChild(line);
    }
  }
  const step = { up: [-1, 0], down: [1, 0], left: [0, -1], right: [0, 1] };
  document.querySelectorAll('.pad button').forEach(b => b.addEventListener('click', () => {
    const [dr, dc] = step[b.dataset.d];
    const nr = me.r + dr, nc = me.c + dc;
    if (nr < 0 || nc < 0 || nr >= N || nc >= N || !open[nr][nc]) return;
    me.r = nr; me.c = nc;
    draw();
    if (nr === N - 1 && nc === N - 1) document.body.innerHTML = '<h1>Success!</h1>';
  }));
  draw();
</script></body></html>
"""

DRAW_PAGE = """<!DOCTYPE html>
<html><head><title>Color Challenge</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { text-align: center; font-size: 14px; }
  #wanted div { display: inline-block; width: 50px; height: 50px; margin: 5px; }
  canvas { border: 1px solid black; touch-action: none; }
  #palette { display: flex; flex-wrap: wrap; justify-content: center; max-width: 300px; margin: 0 auto; }
  #palette button { width: 30px; height: 30px; margin: 3px; border: none; }
  .actions button { margin: 5px; padding: 5px 10px; font-size: 14px; }
</style></head>
<body>
  <div id="wanted"></div>
  <canvas id="board" width="300" height="300"></canvas>
  <p>Available Colors:</p>
  <div id="palette"></div>
  <div class="actions"><button id="wipe">Clear</button><button id="done">Submit</button></div>
  <p id="verdict"></p>
<script>%s
  const colours = ['#ff0000', '#00ff00', '#0000ff', '#ffff00', '#ff00ff', '#00ffff', '#800000', '#008000',
                   '#000080', '#808000', '#800080', '#008080', '#ffa500', '#ff1493', '#4b0082', '#228b22'];
  const pool = colours.slice();
  const wanted = [];
  for (let i = 0; i < 3; i++) wanted.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]);
  wanted.forEach(col => { const d = document.createElement('div'); d.style.background = col;
                          document.getElementById('wanted').appendChild(d); });
  const board = document.getElementById('board');
  const pen = board.getContext('2d');
  colours.forEach(col => { const b = document.createElement('button'); b.style.background = col;
                           b.addEventListener('click', () => { pen.strokeStyle = col; });
                           document.getElementById('palette').appendChild(b); });
  let down = false, last = null;
  function at(e) { const r = board.getBoundingClientRect();
                   return [(e.clientX - r.left) * board.width / r.width, (e.clientY - r.top) * board.height / r.height]; }
  board.addEventListener('mousedown', e => { down = true; last = at(e); });
  board.addEventListener('mousemove', e => { if (!down) return; const p = at(e); pen.beginPath();
                                             pen.moveTo(last[0], last[1]); pen.lineTo(p[0], p[1]); pen.stroke(); last = p; });
  ['mouseup', 'mouseout'].forEach(k => board.addEventListener(k, () => { down = false; }));
  document.getElementById('wipe').addEventListener('click', () => pen.clearRect(0, 0, board.width, board.height));
  const hex = v => v.toString(16).padStart(2, '0');
  document.getElementById('done').addEventListener('click', () => {
    const px = pen.getImageData(0, 0, board.width, board.height).data;
    const used = new Set();
    for (let i = 0; i < px.length; i += 4) used.add('#' + hex(px[i]) + hex(px[i + 1]) + hex(px[i + 2]));
    document.getElementById('verdict').textContent = wanted.every(c => used.has(c)) ? 'Success!' : '';
  });
</script></body></html>
"""


# --- set-up and check ---------------------------------------------------------------------------------------


def chrome_shows_success(device: Any) -> bool:
    """AndroidWorld's check: Chrome is the app in front and an element on screen reads exactly "Success!"."""
    if foreground_package(device) != CHROME_PACKAGE:
        return False
    return any(node.text == "Success!" for node in screen_nodes(device))


# --- expert building blocks ----------------------------------------------------------------------------------


def web_view(ui: Any) -> Any:
    """The page's WebView node on screen."""
    view = find(ui, lambda e: e.class_name == WEB_VIEW or e.class_name.endswith(".WebView"))
    if view is None:
        raise ExpertStuck("no web page on screen")
    return view


def web_nodes(ui: Any) -> list[Any]:
    """The page's elements on screen (nodes inside the WebView's box)."""
    x1, y1, x2, y2 = web_view(ui).bounds
    return [e for e in ui.elements if e.class_name != WEB_VIEW and not e.class_name.endswith(".WebView")
            and x1 <= e.bounds[0] and e.bounds[2] <= x2 and y1 <= e.bounds[1] and e.bounds[3] <= y2]


def open_task_page(ui: Any):
    """Open Files (on Downloads), tap task.html and pick Chrome in the "Open with" chooser; returns the ui."""
    ui = yield OpenApp("Files")
    ui = yield from tap_text(ui, "task.html")
    if find(ui, lambda e: e.text == "Chrome") is not None:
        ui = yield from tap_text(ui, "Chrome", scroll=False)
    if find(ui, lambda e: e.text == "Just once") is not None:
        ui = yield from tap_text(ui, "Just once", scroll=False)
    web_view(ui)
    return ui


def screenshot_of(ui: Any) -> Any:
    shot = getattr(ui, "screenshot", None)
    if shot is None:
        raise ExpertStuck("this expert reads the screen's pixels, but the observation has no screenshot")
    return shot


def pixel(shot: Any, x: float, y: float) -> tuple[int, int, int]:
    r, g, b = shot[int(y), int(x)][:3]
    return int(r), int(g), int(b)


def multiply_expert(ui: Any):
    """Read the number, press "Click Me", five times; type the product into the field and Submit."""
    numbers: list[int] = []
    for _ in range(5):
        shown = [e for e in web_nodes(ui) if re.fullmatch(r"\d+", e.text or "")]
        if not shown:
            raise ExpertStuck("no number on the page")
        numbers.append(int(shown[0].text))
        ui = yield from tap_text(ui, "Click Me", scroll=False)
    field = find(ui, lambda e: e.class_name.endswith("EditText"))
    if field is None:
        raise ExpertStuck("the page did not ask for the product")
    ui = yield from type_into(ui, str(math.prod(numbers)), predicate=lambda e: e.class_name.endswith("EditText"))
    return (yield from tap_text(ui, "Submit", scroll=False))


def _is_wall(rgb: tuple[int, int, int]) -> bool:
    return max(rgb) < 60


def _is_goal(rgb: tuple[int, int, int]) -> bool:
    r, g, b = rgb
    return g > 90 and r < 60 and b < 60


def maze_expert(ui: Any):
    """Read the grid off the screenshot (the X's cell gives the cell size; walls black, the goal green), find a
    shortest path with a breadth-first search and press the direction buttons along it."""
    shot = screenshot_of(ui)
    me = find(ui, lambda e: e.text == "X")
    up = find(ui, lambda e: e.text == "Up")
    if me is None or up is None:
        raise ExpertStuck("no maze on the page")
    x1, y1, x2, y2 = me.bounds
    size = x2 - x1
    n = max(1, round((up.bounds[1] - y1) / size))
    cells: dict[tuple[int, int], str] = {}
    for r in range(n):
        for c in range(n):
            rgb = pixel(shot, x1 + (c + 0.25) * size, y1 + (r + 0.25) * size)  # off the centre's X
            cells[(r, c)] = "wall" if _is_wall(rgb) else "goal" if _is_goal(rgb) else "open"
    goals = [p for p, kind in cells.items() if kind == "goal"]
    if not goals:
        raise ExpertStuck("no goal cell in the maze")
    moves = {"Up": (-1, 0), "Down": (1, 0), "Left": (0, -1), "Right": (0, 1)}
    came: dict[tuple[int, int], tuple[tuple[int, int], str] | None] = {(0, 0): None}
    queue = deque([(0, 0)])
    while queue:
        here = queue.popleft()
        for name, (dr, dc) in moves.items():
            there = (here[0] + dr, here[1] + dc)
            if there in cells and cells[there] != "wall" and there not in came:
                came[there] = (here, name)
                queue.append(there)
    if goals[0] not in came:
        raise ExpertStuck("no way through the maze")
    path: list[str] = []
    at = goals[0]
    while came[at] is not None:
        at, name = came[at]  # type: ignore[misc]
        path.append(name)
    for name in reversed(path):
        ui = yield from tap_text(ui, name, scroll=False)
    return ui


def _runs(shot: Any, y: int, x1: int, x2: int, min_len: int) -> list[tuple[tuple[int, int, int], int, int]]:
    """Runs of one non-white, non-black colour at least ``min_len`` px long along row ``y`` (colour, start, end)."""
    out = []
    start = x1
    current = pixel(shot, x1, y)
    for x in range(x1 + 1, x2 + 1):
        rgb = pixel(shot, x, y) if x < x2 else None
        if rgb != current:
            if current is not None and x - start >= min_len and min(current) < 235 and max(current) > 20:
                out.append((current, start, x))
            start, current = x, rgb
    return out


def draw_expert(ui: Any):
    """Read the three swatches' colours above the canvas, then per colour tap the palette button of that colour
    and draw a line across its own band of the canvas; Submit."""
    shot = screenshot_of(ui)
    view = web_view(ui)
    canvas = next((e for e in web_nodes(ui) if not e.text and e.bounds[3] - e.bounds[1] > 300
                   and e.bounds[2] - e.bounds[0] > 300), None)
    if canvas is None:
        raise ExpertStuck("no canvas on the page")
    band_y = (view.bounds[1] + canvas.bounds[1]) // 2
    wanted = [rgb for rgb, _, _ in _runs(shot, band_y, view.bounds[0], view.bounds[2], 40)]
    if len(wanted) < 3:
        raise ExpertStuck(f"found {len(wanted)} colours to draw with")
    buttons = [e for e in web_nodes(ui) if e.class_name.endswith("Button") and not e.text
               and e.bounds[1] > canvas.bounds[3]]
    if not buttons:
        raise ExpertStuck("no colour buttons on the page")
    cx1, cy1, cx2, cy2 = canvas.bounds
    for i, rgb in enumerate(wanted):
        button = min(buttons, key=lambda b: sum((p - q) ** 2 for p, q in zip(pixel(shot, *b.center), rgb)))
        ui = yield tap(button)
        y = cy1 + (cy2 - cy1) * (i + 1) // (len(wanted) + 1)
        ui = yield Swipe(cx1 + (cx2 - cx1) // 8, y, cx2 - (cx2 - cx1) // 8, y + (cy2 - cy1) // 10)
    return (yield from tap_text(ui, "Submit", scroll=False))


# --- tasks ---------------------------------------------------------------------------------------------------


class _BrowserTask(Task):
    suites = SUITES_AW
    app_names: ClassVar[tuple[str, ...]] = ("chrome",)
    difficulty = "medium"
    complexity = 2.0
    page: ClassVar[str] = ""
    action: ClassVar[str] = ""
    solve: ClassVar[Callable[[Any], ExpertGenerator]]
    """The expert's work on the opened page (the page is opened from Files first, as the goal says)."""
    template = ""

    @property
    def goal(self) -> str:
        return f"{PREAMBLE} {self.action}"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        return {"browser_task_seed": rng.randint(0, 2**32 - 1)}

    @classmethod
    def unavailable_reason(cls) -> str | None:
        """Chromium missing: the simulated Chrome has no engine to run the task's page in."""
        from android_gym.sim.web import CHROMIUM_INSTALL_HINT, web_engine_available

        return None if web_engine_available() else f"needs chromium ({CHROMIUM_INSTALL_HINT})"

    def initialize(self, device: Any) -> None:
        from android_gym.sim.web import CHROMIUM_INSTALL_HINT, web_engine_available

        if not web_engine_available():
            raise TaskError(f"{self.name}: {CHROMIUM_INSTALL_HINT}")
        force_stop(device, CHROME_PACKAGE, FILES_PACKAGE)
        clear_storage(device)
        device.shell(f"pm clear {CHROME_PACKAGE}")
        html = self.page % (_RNG_JS % int(self.params["browser_task_seed"]))
        push_bytes(device, TASK_PAGE, html.encode())

    def teardown(self, device: Any) -> None:
        force_stop(device, CHROME_PACKAGE, FILES_PACKAGE)

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield from open_task_page(ui)
        yield from self.solve(ui)
        yield Finished()

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if chrome_shows_success(device) else 0.0


@register_task
class BrowserMultiply(_BrowserTask):
    """Press "Click Me" five times, remembering the numbers shown, and enter their product."""

    name = "BrowserMultiply"
    complexity = 2.2
    page = MULTIPLY_PAGE
    action = "Then click the button 5 times, remember the numbers displayed, and enter their product in the form."
    solve = staticmethod(multiply_expert)


@register_task
class BrowserMaze(_BrowserTask):
    """Move the X through the maze to the bottom-right cell with the direction buttons."""

    name = "BrowserMaze"
    page = MAZE_PAGE
    reads_pixels: ClassVar[bool] = True
    action = "Then navigate the X to the bottom-right cell, by using the direction buttons."
    solve = staticmethod(maze_expert)


@register_task
class BrowserDraw(_BrowserTask):
    """Draw on the canvas with the three colours shown at the top and press Submit."""

    name = "BrowserDraw"
    page = DRAW_PAGE
    reads_pixels: ClassVar[bool] = True
    action = "Then create a drawing using the three colors shown at the top and hit submit."
    solve = staticmethod(draw_expert)


__all__ = ["BrowserDraw", "BrowserMaze", "BrowserMultiply", "chrome_shows_success", "web_nodes"]
