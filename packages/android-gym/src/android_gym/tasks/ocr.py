"""Reading words off the screen's pixels, for experts whose tasks put text only in pictures.

Some AndroidWorld tasks hand the agent words that exist only as pixels (a receipt photo, a table of
expenses in a JPEG): no accessibility node carries them, so a screen-reading expert cannot find them in
the UI tree. Such experts (``Task.reads_pixels``) get the screenshot with each observation
(:class:`ScreenUI`) and read it with Tesseract, the OCR engine (Debian's ``tesseract-ocr`` package, run
as its command-line program), as a person would read the picture on the screen.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["OCR_INSTALL_HINT", "ScreenUI", "ocr_available", "ocr_image", "ocr_images", "read_screen_text"]

OCR_INSTALL_HINT = "reading text off the screen needs Tesseract: apt-get install tesseract-ocr"


def ocr_available() -> bool:
    """Whether the ``tesseract`` program is installed."""
    return shutil.which("tesseract") is not None


class ScreenUI:
    """An observation with its pixels: the compressed UI (every attribute of it) plus ``screenshot`` (HxWx3)."""

    def __init__(self, ui: Any, screenshot: Any):
        self._ui = ui
        self.screenshot = screenshot

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ui, name)

    def __iter__(self):
        return iter(self._ui)

    def __len__(self) -> int:
        return len(self._ui)

    def __contains__(self, item: object) -> bool:
        return item in self._ui

    def __repr__(self) -> str:
        return f"ScreenUI({self._ui!r})"


def read_screen_text(screenshot: Any, box: tuple[int, int, int, int] | None = None, timeout: float = 60.0) -> str:
    """The text Tesseract reads in ``box`` (x1, y1, x2, y2) of the screenshot (all of it when None), line by line.

    Raises RuntimeError when Tesseract is not installed or fails.
    """
    from PIL import Image

    img = Image.fromarray(screenshot)
    if box is not None:
        img = img.crop(box)
    return ocr_image(img, psm=6, timeout=timeout)


def ocr_image(image: Any, psm: int = 6, timeout: float = 60.0) -> str:
    """What Tesseract reads in an image (a Pillow image or an array, read as grey) with page segmentation mode
    ``psm`` (6: a block of lines, 7: one line). Raises RuntimeError when Tesseract is not installed or fails."""
    from PIL import Image

    if not ocr_available():
        raise RuntimeError(OCR_INSTALL_HINT)
    img = image if isinstance(image, Image.Image) else Image.fromarray(image)
    buf = io.BytesIO()
    img.convert("L").save(buf, format="PNG")
    done = subprocess.run(["tesseract", "stdin", "stdout", "--psm", str(psm), "-l", "eng"], input=buf.getvalue(),
                          capture_output=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"tesseract failed ({done.returncode}): {done.stderr.decode('utf-8', 'replace')[-300:]}")
    return done.stdout.decode("utf-8", "replace")


def ocr_images(images: Sequence[Any], psm: int = 6, timeout: float = 60.0) -> list[str]:
    """What Tesseract reads in each of ``images`` (as :func:`ocr_image` would), in one Tesseract run.

    Tesseract reads a list of image files as the pages of one document, each page on its own, and separates the
    pages' texts with a form feed. Loading the English model is most of a short reading's cost, so readers of many
    small crops (a video's captions over several scales) pay it once instead of once per crop.
    """
    from PIL import Image

    if not images:
        return []
    if not ocr_available():
        raise RuntimeError(OCR_INSTALL_HINT)
    with tempfile.TemporaryDirectory(prefix="ocr_") as tmp:
        paths = []
        for i, image in enumerate(images):
            img = image if isinstance(image, Image.Image) else Image.fromarray(image)
            path = Path(tmp) / f"{i:05d}.png"
            img.convert("L").save(path, format="PNG")
            paths.append(str(path))
        listing = Path(tmp) / "pages.txt"
        listing.write_text("\n".join(paths) + "\n", encoding="utf-8")
        done = subprocess.run(["tesseract", str(listing), "stdout", "--psm", str(psm), "-l", "eng"],
                              capture_output=True, timeout=timeout * len(paths), check=False)
    if done.returncode != 0:
        raise RuntimeError(f"tesseract failed ({done.returncode}): {done.stderr.decode('utf-8', 'replace')[-300:]}")
    pages = done.stdout.decode("utf-8", "replace").split("\f")
    if len(pages) != len(paths):
        raise RuntimeError(f"tesseract read {len(pages)} pages from a list of {len(paths)} images")
    return pages
