"""How far a finger's swipe moves a scrolling list: the drag itself, then the fling it leaves behind.

Android's lists (RecyclerView, NestedScrollView, ScrollView) follow the finger once it has moved past the touch
slop (8 dp; the drag is the finger's travel less the slop), and on release fling at the velocity the finger had:
``OverScroller``'s spline, whose distance for a velocity v (px/s) is

    d(v) = F * C * exp(r / (r - 1) * ln(0.35 * v / (F * C)))

with F = 0.015 (``ViewConfiguration.getScrollFriction``), C = 9.80665 * 39.37 * dpi * 0.84 (gravity in inches
per second squared at the screen's density), r = ln(0.78) / ln(0.9); below 50 dp/s nothing flings, above
8,000 dp/s the velocity is capped (``ViewConfiguration``'s minimum and maximum fling velocities). ``input swipe``
moves the finger at a constant speed, so its velocity is the swipe's length over its duration (300 ms unless
given, which is also what AndroidWorld's ``scroll`` uses).

The real episodes in tests/android_gym/data/real_episodes show it on the emulator (420 dpi) in Settings' home
page, whose list scrolls under a collapsing header (see ``App.collapsing_header``): AndroidWorld's ``scroll``
without an index, a 1,200 px swipe from the screen's middle to its top, moved the rows 2,187, 2,205 and 2,210 px
(three runs: SystemBrightnessMaxVerify_base_gpt-4-turbo step 1, SystemBrightnessMin_base_gpt-4o-mini_gemini
step 1, SystemBrightnessMin_base_gpt-4.1-mini step 8; "Wallpaper & style" from y 2,672 to 485 / 467 / 462), and
its ``scroll`` on the home page's list (index 3, 770-2,337 px: a 783 px swipe from its middle to its top) 1,221
px (SystemBrightnessMin_base_o4-mini step 13: "Battery" from 1,748 to 527); of that, the header took 421 px
each time (the list's top went from 770 to 349). The spline at the swipes' mean finger speed gives 2,239 and
1,267 px (30-50 px more than seen); the velocity Android reads from the injected events is a little under the
mean, and ``VELOCITY_FACTOR`` = 0.975, fitted to the four scrolls, gives 2,193 and 1,245 px (within 25 px of
each). This package's own ``Scroll`` (a 900 px swipe in 300 ms, ``android_gym.device.scroll_gesture``) moves a
list 1,495 px, a 900 px ``Drag`` (1,500 ms) 917 px.
"""

from __future__ import annotations

import math

SCROLL_FRICTION = 0.015
INFLEXION = 0.35
DECELERATION_RATE = math.log(0.78) / math.log(0.9)
TOUCH_SLOP_DP = 8.0
MIN_FLING_DP_S = 50.0
MAX_FLING_DP_S = 8000.0
VELOCITY_FACTOR = 0.975
"""The share of the finger's mean speed a list flings with (fitted to the real episodes, see the module notes)."""


def fling_distance(velocity: float, dpi: float) -> float:
    """How far (px) a list flings at ``velocity`` px/s on a screen of ``dpi`` dots per inch (Android's spline)."""
    scale = dpi / 160.0
    v = min(abs(velocity), MAX_FLING_DP_S * scale)
    if v < MIN_FLING_DP_S * scale:
        return 0.0
    physical = SCROLL_FRICTION * 9.80665 * 39.37 * dpi * 0.84
    return physical * math.exp(DECELERATION_RATE / (DECELERATION_RATE - 1.0) * math.log(INFLEXION * v / physical))


def scroll_travel(finger: float, duration_ms: float, dpi: float) -> int:
    """How far (px, signed like ``finger``) a swipe of ``finger`` px over ``duration_ms`` moves a list: the drag
    past the touch slop plus the fling at release."""
    slop = TOUCH_SLOP_DP * dpi / 160.0
    drag = max(0.0, abs(finger) - slop)
    if drag <= 0:
        return 0
    velocity = VELOCITY_FACTOR * abs(finger) * 1000.0 / max(1.0, duration_ms)
    return int(round(math.copysign(drag + fling_distance(velocity, dpi), finger)))
