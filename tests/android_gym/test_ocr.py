"""android_gym.tasks.ocr: Tesseract on pictures, one image at a time and many in one run."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from android_gym.tasks.ocr import ocr_image, ocr_images

cv2 = pytest.importorskip("cv2", reason="the test pictures are drawn with OpenCV")
pytestmark = pytest.mark.skipif(shutil.which("tesseract") is None,
                                reason="Tesseract is not installed (apt-get install tesseract-ocr; .ci/run installs it)")


def word(text: str, scale: float = 2.0) -> np.ndarray:
    """Black letters on white, one line."""
    img = np.full((90, 60 + 36 * len(text)), 255, np.uint8)
    cv2.putText(img, text, (20, 65), cv2.FONT_HERSHEY_SIMPLEX, scale, 0, 3)
    return img


def test_many_images_in_one_run_read_as_each_alone_in_order():
    blank = np.full((80, 300), 255, np.uint8)
    images = [word("Willow"), blank, word("Omar 42", 1.5), word("Charlie"), blank]
    together = ocr_images(images, psm=7)
    assert together == [ocr_image(img, psm=7) for img in images]
    # (a blank line-mode page is not always read as nothing: Tesseract guesses at it, the same guess either way)
    assert [together[i].strip() for i in (0, 2, 3)] == ["Willow", "Omar 42", "Charlie"]


def test_no_images_runs_nothing():
    assert ocr_images([]) == []
