"""What a device shows at one moment: the hierarchy XML, optionally the pixels, and the foreground app."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Screen:
    """One observation of a device.

    ``xml`` is a uiautomator hierarchy dump; ``screenshot`` is HxWx3 uint8 (None when not captured);
    ``activity`` is ``package/.Activity`` of the foreground window when known.
    """

    xml: str
    width: int
    height: int
    screenshot: np.ndarray | None = None
    activity: str | None = None
    package: str | None = None
    extras: dict = field(default_factory=dict)
