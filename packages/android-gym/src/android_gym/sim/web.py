"""A real web engine for the simulated Chrome: Debian's chromium, headless, driven over its DevTools pipe.

:class:`WebEngine` starts ``chromium --headless --remote-debugging-pipe`` (the DevTools protocol as
NUL-terminated JSON on file descriptors 3 and 4, so no WebSocket library and no Playwright are needed)
and keeps one page sized like the phone's screen. :class:`WebPage` loads HTML, runs its scripts as a
browser does, and gives back what the sim's Chrome shows: a screenshot, and the page's visible elements
(text, role, box on screen) as the accessibility tree a phone's Chrome reports. Taps, drags and typed
text go to the page as mouse and keyboard input, so the page's own event handlers run.

The chromium binary is ``$ANDROID_GYM_CHROMIUM`` or the first of ``chromium``, ``chromium-browser``,
``google-chrome`` on PATH (Debian: ``apt-get install chromium``); :func:`web_engine_available` says
whether one is there.
"""

from __future__ import annotations

import base64
import fcntl
import io
import json
import os
import select
import shutil
import subprocess
import tempfile
import threading
import time
import weakref
from typing import Any

__all__ = ["CHROMIUM_INSTALL_HINT", "WebEngine", "WebEngineError", "WebPage", "chromium_path", "web_engine_available"]

CHROMIUM_INSTALL_HINT = "the simulated Chrome runs pages in a real browser: apt-get install chromium"
_ARGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
         "--disable-extensions", "--disable-background-networking", "--disable-sync", "--mute-audio",
         "--hide-scrollbars", "--remote-debugging-pipe", "--force-color-profile=srgb", "--font-render-hinting=none")


class WebEngineError(RuntimeError):
    """The browser is missing, died, or answered a command with an error."""


def chromium_path() -> str | None:
    """The chromium binary to run, or None when none is installed."""
    env = os.environ.get("ANDROID_GYM_CHROMIUM")
    if env:
        return env if os.access(env, os.X_OK) else None
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def web_engine_available() -> bool:
    """Whether a chromium binary is installed for the simulated Chrome."""
    return chromium_path() is not None


def _stop(proc: subprocess.Popen, fds: list[int], profile: str) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
    shutil.rmtree(profile, ignore_errors=True)


class WebEngine:
    """One headless chromium process and the DevTools session of its page (thread-safe: one command at a time)."""

    def __init__(self, timeout: float = 30.0):
        binary = chromium_path()
        if binary is None:
            raise WebEngineError(CHROMIUM_INSTALL_HINT)
        self.timeout = timeout
        self._lock = threading.RLock()
        self._next_id = 0
        self._buffer = b""
        self._events: list[dict[str, Any]] = []
        profile = tempfile.mkdtemp(prefix="android-gym-chromium-")
        to_child_r, to_child_w = os.pipe()
        from_child_r, from_child_w = os.pipe()

        def wire() -> None:  # the DevTools pipe: the browser reads fd 3 and writes fd 4 (both inheritable)
            high_r = fcntl.fcntl(to_child_r, fcntl.F_DUPFD, 10)
            high_w = fcntl.fcntl(from_child_w, fcntl.F_DUPFD, 10)
            os.dup2(high_r, 3)
            os.dup2(high_w, 4)

        self._proc = subprocess.Popen(  # noqa: S603 - a fixed argument list, no shell
            [binary, *_ARGS, f"--user-data-dir={profile}", "about:blank"], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=wire,  # noqa: PLW1509
            close_fds=False)  # our other descriptors are close-on-exec; 3 and 4 are the pipe
        os.close(to_child_r)
        os.close(from_child_w)
        self._w, self._r = to_child_w, from_child_r
        self._finalizer = weakref.finalize(self, _stop, self._proc, [to_child_w, from_child_r], profile)
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page.enable", "Runtime.enable"):
            self.send(domain, session=True)

    def close(self) -> None:
        """Stop the browser (also done when the engine is garbage-collected or the interpreter exits)."""
        self._finalizer()

    @property
    def alive(self) -> bool:
        return self._finalizer.alive and self._proc.poll() is None

    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WebEngineError("chromium did not answer in time")
            ready, _, _ = select.select([self._r], [], [], left)
            if not ready:
                continue
            chunk = os.read(self._r, 1 << 20)
            if not chunk:
                raise WebEngineError("chromium closed its DevTools pipe (it exited)")
            self._buffer += chunk
        raw, _, self._buffer = self._buffer.partition(b"\0")
        return json.loads(raw)

    def send(self, method: str, params: dict[str, Any] | None = None, session: bool = False) -> dict[str, Any]:
        """Run one DevTools command (on the page's session when ``session``) and return its result."""
        with self._lock:
            if not self.alive:
                raise WebEngineError("chromium is not running")
            self._next_id += 1
            msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = self.session
            data = json.dumps(msg).encode() + b"\0"
            while data:
                data = data[os.write(self._w, data):]
            deadline = time.monotonic() + self.timeout
            while True:
                reply = self._read_message(deadline)
                if reply.get("id") == self._next_id:
                    if "error" in reply:
                        raise WebEngineError(f"{method}: {reply['error'].get('message', reply['error'])}")
                    return reply.get("result", {})
                if "method" in reply:
                    self._events.append(reply)
                    del self._events[:-200]

    def clear_events(self) -> None:
        """Forget the events received so far (before a command whose event is awaited)."""
        with self._lock:
            self._events.clear()

    def wait_event(self, method: str, timeout: float = 10.0) -> dict[str, Any] | None:
        """The first event ``method`` of the page's session seen (already received or arriving), or None."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                for i, ev in enumerate(self._events):
                    if ev.get("method") == method:
                        del self._events[: i + 1]
                        return ev
                try:
                    reply = self._read_message(deadline)
                except WebEngineError:
                    return None
                if "method" in reply:
                    self._events.append(reply)


_ELEMENTS_JS = r"""
(() => {
  const out = [];
  const visible = (el, r) => {
    if (r.width <= 0 || r.height <= 0) return false;
    const s = getComputedStyle(el);
    return s.visibility !== 'hidden' && s.display !== 'none' && parseFloat(s.opacity || '1') > 0;
  };
  const ownText = (el) => Array.from(el.childNodes).filter(n => n.nodeType === 3)
      .map(n => n.textContent).join(' ').replace(/\s+/g, ' ').trim();
  const walk = (el, depth) => {
    const r = el.getBoundingClientRect();
    const tag = el.tagName.toLowerCase();
    if (tag === 'script' || tag === 'style' || tag === 'head') return;
    if (!visible(el, r) && tag !== 'body') return;
    let role = '', text = '';
    if (tag === 'button' || (tag === 'input' && ['button', 'submit'].includes(el.type))) {
      role = 'button'; text = (el.innerText || el.value || '').trim();
    } else if (tag === 'input' || tag === 'textarea') {
      role = 'textbox'; text = el.value || '';
    } else if (tag === 'canvas') {
      role = 'canvas';
    } else if (tag === 'a') {
      role = 'link'; text = (el.innerText || '').trim();
    } else {
      text = ownText(el);
      role = text ? 'text' : '';
    }
    if (role) {
      out.push({role, text, tag, depth, hint: el.getAttribute('placeholder') || '',
                focused: document.activeElement === el, disabled: !!el.disabled,
                box: [r.left, r.top, r.right, r.bottom]});
    }
    if (role === 'button' || role === 'textbox') return;
    for (const c of el.children) walk(c, depth + 1);
  };
  walk(document.body, 0);
  return JSON.stringify({elements: out, width: window.innerWidth, height: window.innerHeight,
                         title: document.title});
})()
"""


class WebPage:
    """The page a :class:`WebEngine` shows, sized ``width`` x ``height`` screen pixels at ``density`` (px per CSS px)."""

    def __init__(self, engine: WebEngine, width: int, height: int, density: float):
        self.engine = engine
        self.width, self.height, self.density = width, height, density
        self.engine.send("Emulation.setDeviceMetricsOverride", {
            "width": round(width / density), "height": round(height / density), "deviceScaleFactor": density,
            "mobile": True, "screenWidth": round(width / density), "screenHeight": round(height / density)},
            session=True)
        self.title = ""

    def _eval(self, expression: str) -> Any:
        result = self.engine.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=True)
        if "exceptionDetails" in result:
            raise WebEngineError(f"script error: {result['exceptionDetails'].get('text', '')}")
        return result.get("result", {}).get("value")

    def load_html(self, html: str) -> None:
        """Show ``html`` as a page (its scripts run; resolved once the page's load event fired)."""
        frame = self.engine.send("Page.getFrameTree", session=True)["frameTree"]["frame"]["id"]
        self.engine.clear_events()
        self.engine.send("Page.navigate", {"url": "about:blank"}, session=True)
        self.engine.wait_event("Page.loadEventFired", timeout=10)
        self.engine.send("Page.setDocumentContent", {"frameId": frame, "html": html}, session=True)
        self.settle()

    def settle(self) -> None:
        """Let the page's pending work (timers of 0 ms, layout, a frame) run before it is read."""
        self.engine.send("Runtime.evaluate", {"expression": "new Promise(r => requestAnimationFrame(() => "
                                              "setTimeout(r, 0)))", "awaitPromise": True}, session=True)

    def elements(self) -> dict[str, Any]:
        """The page's visible elements: ``{"elements": [{role, text, box (CSS px)...}], "width", "height"}``."""
        return json.loads(self._eval(_ELEMENTS_JS))

    def screenshot(self) -> Any:
        """The page as the screen shows it: an RGB Pillow image of ``width`` x ``height`` pixels."""
        from PIL import Image

        data = self.engine.send("Page.captureScreenshot", {"format": "png"}, session=True)["data"]
        img = Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB")
        if img.size != (self.width, self.height):
            img = img.resize((self.width, self.height))
        return img

    def _mouse(self, kind: str, x: float, y: float, buttons: int) -> None:
        self.engine.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left",
                                                      "buttons": buttons, "clickCount": 1}, session=True)

    def tap(self, x: float, y: float) -> None:
        """A tap at CSS pixel (x, y) of the viewport: mouse down and up there (a click)."""
        self._mouse("mousePressed", x, y, 1)
        self._mouse("mouseReleased", x, y, 0)
        self.settle()

    def drag(self, x1: float, y1: float, x2: float, y2: float, steps: int = 12) -> None:
        """A finger dragged from (x1, y1) to (x2, y2), CSS pixels: mouse down, moves along the line, up."""
        self._mouse("mousePressed", x1, y1, 1)
        for i in range(1, steps + 1):
            t = i / steps
            self._mouse("mouseMoved", x1 + (x2 - x1) * t, y1 + (y2 - y1) * t, 1)
        self._mouse("mouseReleased", x2, y2, 0)
        self.settle()

    def scroll(self, x: float, y: float, dx: float, dy: float) -> None:
        """Scroll the content under CSS pixel (x, y) by (dx, dy) CSS pixels (a finger flick moves it the other way)."""
        self.engine.send("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": x, "y": y, "deltaX": dx,
                                                      "deltaY": dy}, session=True)
        self.settle()

    def draws_at(self, x: float, y: float) -> bool:
        """Whether the element under CSS pixel (x, y) takes a finger's path itself (a canvas) rather than scrolling."""
        return bool(self._eval(f"(() => {{ const e = document.elementFromPoint({x:.1f}, {y:.1f}); "
                               "return !!e && e.tagName === 'CANVAS'; })()"))

    def insert_text(self, text: str) -> None:
        """Type ``text`` into the focused element."""
        if text:
            self.engine.send("Input.insertText", {"text": text}, session=True)
            self.settle()

    def key(self, key: str, code: int) -> None:
        """Press and release one key (e.g. "Enter", 13; "Backspace", 8) on the focused element."""
        for kind in ("keyDown", "keyUp"):
            params = {"type": kind, "key": key, "code": key, "windowsVirtualKeyCode": code,
                      "nativeVirtualKeyCode": code}
            if kind == "keyDown" and key == "Enter":
                params["text"] = "\r"
            self.engine.send("Input.dispatchKeyEvent", params, session=True)
        self.settle()

    def select_all(self) -> None:
        """Select the focused field's text."""
        self._eval("(() => { const e = document.activeElement; if (e && e.select) e.select(); })()")
