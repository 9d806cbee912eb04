"""Words that exist only in pictures: AndroidWorld's three tasks that read a JPEG or PNG in Simple Gallery Pro.

- ``ExpenseAddMultipleFromGallery``: expenses.jpg in DCIM lists three expenses ("Expense: name" blocks
  with amount, category and note); log them in Pro Expense. Older pictures of other expenses lie beside it.
- ``RecipeAddMultipleRecipesFromImage``: recipes.jpg lists three recipes; add them to Broccoli.
- ``MarkorTranscribeReceipt``: receipt.png is a shop's receipt; write its transactions, under the header
  "Date, Item, Amount", into receipt.md in Markor.

No accessibility node carries these words, so the experts read the screen's pixels (``reads_pixels``):
they open the picture in the gallery's viewer and read it with Tesseract (:mod:`android_gym.tasks.ocr`),
then parse what they read and type it in. Set-up writes the pictures with Pillow (the lines drawn in
DejaVu Sans, black on white) after emptying the phone's storage, as AndroidWorld's set-up does.
"""

from __future__ import annotations

import difflib
import io
import random
import re
from typing import Any, ClassVar

from android_gym.actions import Finished, OpenApp
from android_gym.sim.apps.expense import CATEGORIES
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import force_stop
from android_gym.tasks.expert import ExpertStuck, find, text_is
from android_gym.tasks.ocr import read_screen_text
from android_gym.tasks.sim.broccoli import (
    BROCCOLI_APP,
    BROCCOLI_PACKAGE,
    GOAL_FIELDS,
    _AddRecipes,
    add_recipe_expert,
)
from android_gym.tasks.sim.expense import (
    EXPENSE_PACKAGE,
    add_expense_expert,
    random_expenses,
    reset_expenses,
    unchanged_plus,
)
from android_gym.tasks.sim.gallery import GALLERY_PACKAGE, clear_storage, open_in_gallery
from android_gym.tasks.sim.markor import (
    MARKOR_PACKAGE,
    create_note_expert,
    loose_lines,
    note_path,
    read_note,
    reset_markor,
)
from android_gym.tasks.sim.vlc import push_bytes
from android_gym.tasks.suites import SUITES_AW

DCIM = "/storage/emulated/0/DCIM"
EXPENSE_FIELDS = ("amount_dollars", "category_name", "note")
RECEIPT_HEADER = "Date, Item, Amount"
_ITEMS = (("USB hub", 8, 40), ("Laptop sleeve", 15, 45), ("HDMI cable", 5, 25), ("Desk lamp", 20, 80),
          ("Phone charger", 10, 35), ("Noise-cancelling headphones", 60, 200), ("SD card", 8, 30))
_SHOPS = (("Circuit Corner", "Parts for every project"), ("Byte Bazaar", "Small prices, big bytes"),
          ("Gizmo Garage", "Your gadget stop"))


# --- pictures of text --------------------------------------------------------------------------------------


def _font(size: int) -> Any:
    from PIL import ImageFont

    for name in ("DejaVuSans.ttf", "LiberationSans-Regular.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    return ImageFont.load_default(size)


def text_picture(lines: list[str], size: int = 24, fmt: str = "JPEG", width: int | None = None) -> bytes:
    """The lines drawn black on white (blank lines as half-height gaps), as a JPEG or PNG."""
    from PIL import Image, ImageDraw

    font = _font(size)
    line_h = int(size * 1.35)
    text_w = max((font.getbbox(line)[2] for line in lines if line.strip()), default=0)
    height = 40 + sum(line_h if line.strip() else line_h // 2 for line in lines)
    img = Image.new("RGB", (max(width or 0, text_w + 40), height), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    y = 20
    for line in lines:
        if line.strip():
            draw.text((20, y), line, fill=(0, 0, 0), font=font)
            y += line_h
        else:
            y += line_h // 2
    buf = io.BytesIO()
    img.save(buf, format=fmt)
    return buf.getvalue()


def _wrap(value: str, width: int = 60) -> list[str]:
    import textwrap

    return textwrap.wrap(value, width) or [""]


def block_lines(kind: str, title: str, fields: list[tuple[str, str]]) -> list[str]:
    """One "Kind: title" block with a " field: value" line per field (long values wrapped), then a blank line."""
    lines = [f"{kind}: {title}"]
    for key, value in fields:
        wrapped = _wrap(value)
        lines.append(f" {key}: {wrapped[0]}")
        lines.extend(wrapped[1:])
    return [*lines, ""]


# --- reading them back ------------------------------------------------------------------------------------------


def _key(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


def parse_blocks(text: str, kind: str, fields: tuple[str, ...]) -> list[dict[str, str]]:
    """"Kind: title" blocks read off a picture: each block's title and fields; a line that starts no field
    continues the one before (a wrapped value). Field names match loosely (OCR may read "_" as a space)."""
    wanted = {_key(f): f for f in fields}
    blocks: list[dict[str, str]] = []
    last = ""
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if not line:
            continue
        head, sep, value = line.partition(":")
        if sep and _key(head) == _key(kind):
            blocks.append({"title": value.strip()})
            last = "title"
        elif sep and blocks and _key(head) in wanted:
            last = wanted[_key(head)]
            blocks[-1][last] = value.strip()
        elif blocks and last:
            blocks[-1][last] = f"{blocks[-1][last]} {line}".strip()
    return blocks


def read_picture(ui: Any) -> str:
    """The text of the picture open in the gallery's viewer (the screen between its app bar and its bottom actions,
    or the screen's bottom edge when they are not shown)."""
    shot = getattr(ui, "screenshot", None)
    if shot is None:
        raise ExpertStuck("this expert reads the screen's pixels, but the observation has no screenshot")
    bar = find(ui, text_is("More options"))
    if bar is None:
        raise ExpertStuck("no picture open in the gallery's viewer")
    actions = find(ui, text_is("Toggle favorite"))
    bottom = actions.bounds[1] - 8 if actions is not None else shot.shape[0]
    try:
        return read_screen_text(shot, (0, bar.bounds[3] + 8, shot.shape[1], bottom))
    except RuntimeError as exc:
        raise ExpertStuck(str(exc)) from exc


def read_gallery_picture(ui: Any, file_name: str):
    """Open ``file_name`` in DCIM in the gallery and read it; returns (ui, text)."""
    ui = yield from open_in_gallery(ui, "DCIM", file_name)
    return ui, read_picture(ui)


def cents_of(value: str) -> int | None:
    """"$378.89", "$271.6" or "$40" (or an OCR reading of it) as cents."""
    m = re.search(r"(\d[\d,]*)(?:\.(\d{1,2}))?\b", value)
    if m is None:
        return None
    return int(m.group(1).replace(",", "")) * 100 + int((m.group(2) or "0").ljust(2, "0"))


def category_of(value: str) -> str:
    """The app's category closest to what was read."""
    names = list(CATEGORIES.values())
    return (difflib.get_close_matches(value.strip(), names, n=1, cutoff=0.0) or [value.strip()])[0]


# --- tasks ---------------------------------------------------------------------------------------------------------


class _PictureTask(Task):
    suites = SUITES_AW
    reads_pixels: ClassVar[bool] = True


@register_task
class ExpenseAddMultipleFromGallery(_PictureTask):
    """Log in Pro Expense the three expenses listed in a picture (expenses.jpg) in the gallery."""

    name = "ExpenseAddMultipleFromGallery"
    template = "Add the expenses from expenses.jpg in Simple Gallery Pro to pro expense."
    difficulty = "hard"
    complexity = 6.0
    app_names: ClassVar[tuple[str, ...]] = ("pro expense", "simple gallery pro")

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        rows = random_expenses(rng, 3 + 8 + 6)
        return {"targets": rows[:3], "noise": rows[3:11], "old_pictures": [rows[11:14], rows[14:]]}

    @staticmethod
    def picture(rows: list[dict[str, Any]]) -> bytes:
        lines: list[str] = []
        for r in rows:
            lines += block_lines("Expense", r["name"], [("amount_dollars", f"${r['cents'] / 100:.2f}"),
                                                        ("category_name", r["category"]), ("note", r["note"])])
        return text_picture(lines)

    def initialize(self, device: Any) -> None:
        reset_expenses(device, self.params["noise"])
        force_stop(device, GALLERY_PACKAGE)
        clear_storage(device)
        push_bytes(device, f"{DCIM}/expenses.jpg", self.picture(self.params["targets"]))
        for i, rows in enumerate(self.params.get("old_pictures", ())):
            push_bytes(device, f"{DCIM}/old_expenses_{i}.jpg", self.picture(rows))

    def teardown(self, device: Any) -> None:
        force_stop(device, EXPENSE_PACKAGE, GALLERY_PACKAGE)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        return 1.0 if unchanged_plus(device, self.params["noise"], self.params["targets"]) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui, text = yield from read_gallery_picture(ui, "expenses.jpg")
        rows = []
        for block in parse_blocks(text, "Expense", EXPENSE_FIELDS):
            cents = cents_of(block.get("amount_dollars", ""))
            if cents is None or not block.get("title"):
                raise ExpertStuck(f"could not read an expense in expenses.jpg: {block}")
            rows.append({"name": block["title"], "cents": cents, "category": category_of(block.get("category_name", "")),
                         "note": block.get("note", "")})
        if not rows:
            raise ExpertStuck(f"no expenses read in expenses.jpg: {text!r}")
        for row in rows:
            ui = yield from add_expense_expert(ui, row)
        yield Finished()


@register_task
class RecipeAddMultipleRecipesFromImage(_PictureTask, _AddRecipes):
    """Add to Broccoli the three recipes listed in a picture (recipes.jpg) in the gallery."""

    name = "RecipeAddMultipleRecipesFromImage"
    template = "Add the recipes from recipes.jpg in Simple Gallery Pro to the Broccoli recipe app."
    difficulty = "hard"
    complexity = 6.0
    n_rows = 3
    app_names: ClassVar[tuple[str, ...]] = ("broccoli app", "simple gallery pro")

    def initialize(self, device: Any) -> None:
        super().initialize(device)
        force_stop(device, GALLERY_PACKAGE)
        clear_storage(device)
        lines: list[str] = []
        for r in self.params["targets"]:
            lines += block_lines("Recipe", r["title"], [(k, str(r.get(k, ""))) for k in GOAL_FIELDS if k != "title"])
        push_bytes(device, f"{DCIM}/recipes.jpg", text_picture(lines))

    def teardown(self, device: Any) -> None:
        force_stop(device, BROCCOLI_PACKAGE, GALLERY_PACKAGE)

    def wanted(self, ui: Any):
        ui, text = yield from read_gallery_picture(ui, "recipes.jpg")
        recipes = parse_blocks(text, "Recipe", tuple(k for k in GOAL_FIELDS if k != "title"))
        if not recipes:
            raise ExpertStuck(f"no recipes read in recipes.jpg: {text!r}")
        return ui, recipes

    def expert(self, ui: Any) -> ExpertGenerator:
        ui, recipes = yield from self.wanted(ui)
        ui = yield OpenApp(BROCCOLI_APP)
        for recipe in recipes:
            ui = yield from add_recipe_expert(ui, recipe)
        yield Finished()


def receipt_transactions(rng: random.Random, n: int) -> list[str]:
    """``n`` receipt lines "2023-05-17, HDMI cable, $12.40"."""
    lines = []
    for _ in range(n):
        item, low, high = rng.choice(_ITEMS)
        lines.append(f"2023-{rng.randint(1, 10):02d}-{rng.randint(1, 28):02d}, {item}, "
                     f"${rng.uniform(low, high):.2f}")
    return lines


@register_task
class MarkorTranscribeReceipt(_PictureTask):
    """Write a receipt picture's transactions (under "Date, Item, Amount") into receipt.md in Markor."""

    name = "MarkorTranscribeReceipt"
    template = ("Create a file in Markor, called receipt.md with the transactions from the receipt.png. Use Simple "
                'Gallery to view the receipt. Please enter transactions in csv format including the header "Date, '
                'Item, Amount".')
    difficulty = "medium"
    complexity = 1.8
    app_names: ClassVar[tuple[str, ...]] = ("simple gallery pro", "markor")

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        shop, slogan = rng.choice(_SHOPS)
        transactions = receipt_transactions(rng, rng.randint(1, 5))
        return {"file_name": "receipt.md", "text": "\n".join([RECEIPT_HEADER, *transactions]),
                "shop": shop, "slogan": slogan}

    def initialize(self, device: Any) -> None:
        reset_markor(device)
        force_stop(device, GALLERY_PACKAGE)
        clear_storage(device)
        lines = [self.params.get("shop", _SHOPS[0][0]), self.params.get("slogan", _SHOPS[0][1]), "",
                 *self.params["text"].splitlines(), "", "Thank you for shopping with us!"]
        push_bytes(device, f"{DCIM}/receipt.png", text_picture(lines, size=20, fmt="PNG", width=500))

    def teardown(self, device: Any) -> None:
        force_stop(device, MARKOR_PACKAGE, GALLERY_PACKAGE)

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        content = read_note(device, note_path(self.params["file_name"]))
        return 1.0 if content is not None and loose_lines(content) == loose_lines(self.params["text"]) else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        ui, text = yield from read_gallery_picture(ui, "receipt.png")
        rows = [" ".join(line.split()) for line in text.splitlines()
                if re.match(r"^\s*\d{4}-\d{2}-\d{2}\s*,", line)]
        if not rows:
            raise ExpertStuck(f"no transactions read on the receipt: {text!r}")
        yield from create_note_expert(ui, "receipt.md", "\n".join([RECEIPT_HEADER, *rows]))
        yield Finished()


__all__ = ["ExpenseAddMultipleFromGallery", "MarkorTranscribeReceipt", "RecipeAddMultipleRecipesFromImage",
           "parse_blocks", "text_picture"]
