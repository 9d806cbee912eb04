"""smart_resize and the coordinate spaces, checked against numbers worked out by hand."""

from __future__ import annotations

import pytest

from android_gym.actions.coords import (
    MAX_PIXELS,
    MIN_PIXELS,
    coordinate_space,
    point_from_value,
    smart_resize,
)
from android_gym.actions.types import ActionParseError

PHONE = (1080, 2400)  # (width, height)


def test_defaults_are_ui_tars_processor_limits() -> None:
    assert MIN_PIXELS == 100 * 28 * 28 == 78_400
    assert MAX_PIXELS == 16384 * 28 * 28 == 12_845_056


def test_smart_resize_rounds_each_side_to_nearest_multiple_of_28() -> None:
    # 2400/28 = 85.71 -> 86 * 28 = 2408; 1080/28 = 38.57 -> 39 * 28 = 1092; area 2,629,536 is in range.
    assert smart_resize(2400, 1080) == (2408, 1092)
    # Ties go to the even multiple, as Python's round() in Qwen's processor does:
    # 70/28 = 2.5 -> 2 -> 56; 98/28 = 3.5 -> 4 -> 112.
    assert smart_resize(70, 280, min_pixels=28 * 28) == (56, 280)
    assert smart_resize(98, 280, min_pixels=28 * 28) == (112, 280)


def test_smart_resize_shrinks_to_max_pixels_rounding_down() -> None:
    # max 784,000: scale = sqrt(2400*1080/784000) = 1.8183; 2400/1.8183/28 = 47.14 -> 47*28 = 1316;
    # 1080/1.8183/28 = 21.21 -> 21*28 = 588. 1316*588 = 773,808 <= 784,000.
    h, w = smart_resize(2400, 1080, max_pixels=1000 * 28 * 28)
    assert (h, w) == (1316, 588)
    assert h * w <= 1000 * 28 * 28


def test_smart_resize_grows_to_min_pixels_rounding_up() -> None:
    # 100x50: 4*28 x 2*28 = 6,272 < 78,400; scale = sqrt(78400/5000) = 3.9598;
    # 100*3.9598/28 = 14.14 -> 15*28 = 420; 50*3.9598/28 = 7.07 -> 8*28 = 224.
    assert smart_resize(100, 50) == (420, 224)
    # Tiny image: 10x10 -> scale 28 -> exactly 10 patches a side.
    assert smart_resize(10, 10) == (280, 280)


@pytest.mark.parametrize(
    "args, message",
    [
        ((0, 100), "height must be a positive integer"),
        ((100, -1), "width must be a positive integer"),
        ((100, 100.5), "width must be a positive integer"),
        ((10, 2010), "aspect ratio"),
    ],
)
def test_smart_resize_rejects_bad_sizes(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        smart_resize(*args)


def test_smart_resize_rejects_min_above_max() -> None:
    with pytest.raises(ValueError, match="min_pixels .* larger than max_pixels"):
        smart_resize(100, 100, min_pixels=1000, max_pixels=999)


def test_smart_resize_space_maps_back_through_resized_width() -> None:
    space = coordinate_space("smart_resize", screen_size=PHONE)
    assert space.frame == (1092.0, 2408.0)
    # x * W / w_resized: 546 * 1080 / 1092 = 540; 1204 * 2400 / 2408 = 1200.
    assert space.to_screen(546, 1204) == (540, 1200)
    assert space.from_screen(540, 1200) == (546, 1204)


def test_smart_resize_space_uses_image_size_and_pixel_limits() -> None:
    # The model saw a 540x1200 copy of a 1080x2400 screen, with max 1000 patches:
    # 1200/28 = 42.86 -> 43*28 = 1204, 540/28 = 19.29 -> 19*28 = 532; area 640,528 < 784,000.
    space = coordinate_space("smart_resize", screen_size=PHONE, image_size=(540, 1200),
                             max_pixels=1000 * 28 * 28)
    assert space.frame == (532.0, 1204.0)
    # 266 * 1080 / 532 = 540; 602 * 2400 / 1204 = 1200.
    assert space.to_screen(266, 602) == (540, 1200)


def test_relative1000_space() -> None:
    space = coordinate_space("relative1000", screen_size=PHONE)
    assert space.to_screen(500, 250) == (540, 600)
    assert space.to_screen(1000, 1000) == (1079, 2399)  # clamped onto the screen
    assert space.from_screen(540, 600) == (500, 250)
    # 1 * 1080 / 1000 = 1.08 -> 1; 2.5 * 2400 / 1000 = 6.0; 62.5 * 1.08 = 67.5 -> 68 (half up).
    assert space.to_screen(1, 2.5) == (1, 6)
    assert space.to_screen(62.5, 0) == (68, 0)


def test_absolute_space_is_identity_and_clamps() -> None:
    assert coordinate_space("auto").to_screen(5000.4, -3) == (5000, -3)  # no screen: nothing to clamp to
    space = coordinate_space("absolute", screen_size=PHONE)
    assert space.to_screen(5000, -3) == (1079, 0)
    assert space.to_screen(10.5, 10.49) == (11, 10)


def test_absolute_space_scales_from_a_downscaled_image() -> None:
    space = coordinate_space("absolute", screen_size=PHONE, image_size=(540, 1200))
    assert space.to_screen(100, 300) == (200, 600)
    assert space.from_screen(200, 600) == (100, 300)


@pytest.mark.parametrize("kind", ["relative1000", "smart_resize"])
def test_spaces_that_need_the_screen_say_so(kind: str) -> None:
    with pytest.raises(ValueError, match="needs screen_size"):
        coordinate_space(kind)


def test_unknown_space_and_bad_sizes() -> None:
    with pytest.raises(ValueError, match="coordinates must be one of"):
        coordinate_space("pixels")
    with pytest.raises(ValueError, match="screen_size must be"):
        coordinate_space("absolute", screen_size=(1080,))


@pytest.mark.parametrize(
    "value, expected",
    [
        ("<|box_start|>(100,200)<|box_end|>", (100, 200)),
        ("<|box_start|>(100,200),(300,400)<|box_end|>", (200, 300)),
        ("(100,200)", (100, 200)),
        ("[100, 200, 300, 400]", (200, 300)),
        ("<point>100 200</point>", (100, 200)),
        ("<bbox>100 200 300 400</bbox>", (200, 300)),
        ("21, 246, 21, 246", (21, 246)),
        ("12.5 7.25", (12.5, 7.25)),
        ([1, 2], (1, 2)),
        ((1, 2, 3, 4), (2, 3)),
    ],
)
def test_point_from_value_forms(value: object, expected: tuple[float, float]) -> None:
    assert point_from_value(value) == expected


@pytest.mark.parametrize(
    "value, message",
    [
        ("", "is empty"),
        ("[]", "is empty"),
        ("(1,2,3)", "has 3 numbers: expected 2"),
        ("<point>x y</point>", "not a point or box"),
        (None, "is missing"),
        ([1, "2"], "only numbers"),
        ({"x": 1}, "must be a point or box"),
        ("9" * 400 + " 5", "not a finite number"),
        ([float("inf"), 5], "not a finite number"),
    ],
)
def test_point_from_value_errors(value: object, message: str) -> None:
    with pytest.raises(ActionParseError, match=message):
        point_from_value(value, "start_box")
