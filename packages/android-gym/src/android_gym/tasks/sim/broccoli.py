"""Broccoli recipe tasks: AndroidWorld's add, delete, constrained-delete and de-duplicate recipe tasks re-created.

Set-up and checks go through Broccoli's database at the real app's path with the ``sqlite3`` shell
command (the app has no content provider; AndroidWorld pulls and pushes the same file). Every task
starts with the recipe list holding only its own rows; rows the task does not target must survive
unchanged. Added recipes match on title, description, servings, time, source, ingredients and
directions after :func:`~android_gym.tasks.device_state.normalize_answer` (case, spacing and
punctuation aside) and must not be favorites.

The experts read the screen: add experts type each recipe into the editor (from the goal, or from
``recipes.txt`` read in Markor's editor); delete experts find each target's card by title, open it
when the title alone does not decide (a constraint on the directions, duplicates), read the details
and delete through More options > Delete.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable
from typing import Any, ClassVar

from android_gym.actions import Finished, OpenApp, PressBack, Scroll
from android_gym.tasks.base import ExpertGenerator, Task, register_task
from android_gym.tasks.device_state import force_stop, go_home, normalize_answer, quote
from android_gym.tasks.expert import ExpertStuck, find, find_all, id_is, tap, tap_id, tap_text, type_into
from android_gym.tasks.sim.markor import MARKOR_PACKAGE, editor_text, open_in_browser, reset_markor
from android_gym.tasks.suites import SUITES_AW

BROCCOLI_PACKAGE = "com.flauschcode.broccoli"
BROCCOLI_APP = "Broccoli"
BROCCOLI_DB = "/data/data/com.flauschcode.broccoli/databases/broccoli"
RECIPE_FIELDS = ("title", "description", "servings", "preparationTime", "source", "ingredients", "directions")
"""What a recipe parameter holds (the ``recipes`` columns a person types)."""
GOAL_FIELDS = ("title", "description", "servings", "preparationTime", "ingredients", "directions")
"""The fields a goal or ``recipes.txt`` lists for each recipe, in that order."""
MARKOR_FILE = "recipes.txt"
EDITOR_IDS = {"title": "new_title", "description": "new_description", "source": "new_source",
              "servings": "new_servings", "preparationTime": "new_preparation_time",
              "ingredients": "new_ingredients", "directions": "new_directions"}

# Our own recipe book for the re-creations: (title, directions naming their ingredients).
DISHES: tuple[tuple[str, str], ...] = (
    ("Harvest Lentil Stew", "Simmer red lentils with carrots, celery and cumin in stock until soft."),
    ("Lemon Herb Couscous", "Pour boiling stock over couscous, rest five minutes, fluff with parsley and lemon."),
    ("Smoky Black Bean Burgers", "Mash black beans with oats and smoked paprika, shape patties and pan-fry."),
    ("Miso Glazed Aubergine", "Halve the aubergine, brush with miso and honey, roast until caramelised."),
    ("Sesame Soba Bowl", "Boil soba noodles, toss with sesame oil, edamame, scallions and soy sauce."),
    ("Roasted Pepper Soup", "Roast red peppers and onions, blend with stock and a splash of cream."),
    ("Coconut Chickpea Curry", "Fry onion with garam masala, add chickpeas, coconut milk and spinach."),
    ("Mushroom Barley Risotto", "Toast pearl barley, add mushrooms and stock ladle by ladle, finish with thyme."),
    ("Peach Oat Crumble", "Slice peaches into a dish, cover with oats, butter and brown sugar, bake."),
    ("Crispy Tofu Tacos", "Coat tofu in cornstarch, fry until crisp, serve in tortillas with slaw and lime."),
    ("Garlic Green Beans", "Blanch green beans, then toss in a hot pan with garlic and almonds."),
    ("Baked Salmon Parcels", "Wrap salmon with lemon slices and dill in foil, bake for fifteen minutes."),
    ("Spinach Ricotta Cannelloni", "Fill cannelloni with spinach and ricotta, cover with tomato sauce, bake."),
    ("Honey Mustard Chicken", "Brush chicken thighs with honey and mustard, roast with potatoes."),
    ("Zesty Quinoa Tabbouleh", "Mix cooked quinoa with parsley, mint, tomatoes, cucumber and lemon juice."),
    ("Ginger Pork Stir Fry", "Stir-fry pork strips with ginger, broccoli and oyster sauce over high heat."),
    ("Sweetcorn Fritters", "Stir sweetcorn into a flour and egg batter, fry spoonfuls until golden."),
    ("Blueberry Yogurt Parfait", "Layer yogurt, blueberries and granola in a glass, drizzle with honey."),
    ("Pumpkin Sage Gnocchi", "Brown butter with sage, toss with gnocchi and roasted pumpkin cubes."),
    ("Tomato Egg Shakshuka", "Simmer tomatoes with peppers and paprika, crack in eggs, cover until set."),
    ("Apple Cinnamon Porridge", "Cook oats in milk with grated apple and cinnamon, stir until creamy."),
    ("Beetroot Feta Salad", "Slice roasted beetroot, scatter feta, walnuts and rocket, dress with vinegar."),
    ("Cajun Shrimp Skillet", "Season shrimp with cajun spice, sear with corn and peppers, squeeze lime over."),
    ("Cheddar Leek Tart", "Soften leeks in butter, spread on pastry with cheddar and egg, bake."),
    ("Chilli Bean Nachos", "Spoon chilli beans over tortilla chips, top with cheese and grill until bubbling."),
    ("Cod and Chorizo Bake", "Lay cod on sliced chorizo and potatoes, splash with wine and roast."),
    ("Courgette Lemon Pasta", "Fry grated courgette with garlic, toss with pasta, lemon zest and parmesan."),
    ("Cranberry Turkey Wrap", "Spread cranberry sauce on a wrap, add sliced turkey and lettuce, roll tight."),
    ("Fennel Orange Salad", "Shave fennel thinly, add orange segments and olives, dress with olive oil."),
    ("Halloumi Veggie Skewers", "Thread halloumi, courgette and onion on skewers, grill and brush with oil."),
    ("Katsu Chicken Rice", "Bread chicken in panko, fry until golden, serve on rice with curry sauce."),
    ("Leek Potato Soup", "Sweat leeks and potatoes in butter, add stock, simmer and blend smooth."),
    ("Maple Roasted Carrots", "Toss carrots with maple syrup and thyme, roast until tender and sticky."),
    ("Pea Mint Risotto", "Stir rice with stock until creamy, fold in peas, mint and a knob of butter."),
    ("Pear Walnut Salad", "Slice pears over mixed leaves with walnuts and blue cheese, add vinaigrette."),
    ("Ratatouille Bake", "Layer aubergine, courgette and tomatoes with herbs, bake until soft."),
    ("Satay Noodle Salad", "Whisk peanut butter with soy and lime, toss with noodles and cucumber."),
    ("Spiced Carrot Muffins", "Fold grated carrots and mixed spice into batter, bake in muffin cases."),
    ("Thai Basil Beef", "Stir-fry minced beef with chilli, garlic and basil, serve with a fried egg."),
    ("Tuna Sweetcorn Melt", "Mix tuna with sweetcorn and mayo, pile on toast, cover with cheese, grill."),
)
DESCRIPTIONS = ("Comforting food for a rainy evening.", "Ready before the kettle boils twice.",
                "A weekend favourite for the whole family.")
SERVINGS = ("1 serving", "2 servings", "4 servings", "5-6 servings")
PREP_TIMES = ("15 mins", "25 mins", "40 mins", "1 hrs", "90 mins")
AMOUNTS = ("to taste", "see the method", "a handful each", "as you like", "measured by eye", "none listed")
EXTRAS = ("Serve warm.", "Keeps for two days in the fridge.", "Add chilli if you like heat.")
INGREDIENT_WORDS = ("lentils", "carrots", "garlic", "lemon", "honey", "tomatoes", "eggs", "parsley", "stock",
                    "butter", "onion", "chickpeas")
"""Ingredients the constrained-delete re-creation asks about (each named in several dishes' directions)."""


# --- the database through the shell ------------------------------------------------------------------------------


def _literal(value: Any) -> str:
    return "'" + str(value).replace("'", "''") + "'"


def insert_sql(rows: list[dict[str, Any]]) -> str:
    """INSERT statements for recipe dicts (text fields as given, empty image, not favorite)."""
    cols = ", ".join(RECIPE_FIELDS)
    return "".join(f"INSERT INTO recipes ({cols}, imageName, favorite) VALUES "
                   f"({', '.join(_literal(r.get(k, '')) for k in RECIPE_FIELDS)}, '', 0);" for r in rows)


def run_sql(device: Any, sql: str) -> str:
    """Run ``sql`` on Broccoli's database with the device's ``sqlite3``; an error message raises."""
    out = device.shell(f"sqlite3 {BROCCOLI_DB} {quote(sql)}")
    if out.startswith("Error") or "no such table" in out:
        raise RuntimeError(f"sqlite3 on {BROCCOLI_DB} failed: {out.strip()}")
    return out


def reset_recipes(device: Any, rows: list[dict[str, Any]]) -> None:
    """Start state: Broccoli stopped, the home screen, exactly ``rows`` stored (in order, ids from 1)."""
    go_home(device, BROCCOLI_PACKAGE)
    run_sql(device, "DELETE FROM recipes; DELETE FROM sqlite_sequence WHERE name = 'recipes';" + insert_sql(rows))


def read_recipes(device: Any) -> list[dict[str, Any]]:
    """Every stored recipe (recipeId, the text fields, favorite), read hex-encoded so any text survives."""
    cols = ", ".join(f"hex({k})" for k in RECIPE_FIELDS)
    out = run_sql(device, f"SELECT recipeId, favorite, {cols} FROM recipes ORDER BY recipeId;")
    rows = []
    for line in out.splitlines():
        parts = line.split("|")
        if len(parts) != 2 + len(RECIPE_FIELDS):
            continue
        row: dict[str, Any] = {"recipeId": int(parts[0]), "favorite": int(parts[1] or 0)}
        for key, value in zip(RECIPE_FIELDS, parts[2:]):
            row[key] = bytes.fromhex(value).decode("utf-8")
        rows.append(row)
    return rows


def recipe_key(row: dict[str, Any]) -> tuple[str, ...]:
    """Identity of a recipe for "unchanged" checks: its exact text fields."""
    return tuple(str(row.get(k, "")) for k in RECIPE_FIELDS)


def same_recipe(stored: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """A stored row entered for ``wanted``: every text field agrees (case, spacing, punctuation aside), no favorite."""
    return not stored.get("favorite") and all(
        normalize_answer(str(stored.get(k, ""))) == normalize_answer(str(wanted.get(k, ""))) for k in RECIPE_FIELDS)


# --- text forms of recipes (goals and recipes.txt) ---------------------------------------------------------------


def recipes_text(rows: list[dict[str, Any]], form: str) -> str:
    """Recipes as a "|"-separated table with a header line (``csv``) or as "Recipe: title" blocks (``text_block``)."""
    if form == "csv":
        return "\n".join(["|".join(GOAL_FIELDS)] + ["|".join(str(r.get(k, "")) for k in GOAL_FIELDS) for r in rows])
    blocks = []
    for r in rows:
        lines = [f"Recipe: {r['title']}"] + [f" {k}: {r.get(k, '')}" for k in GOAL_FIELDS if k != "title"]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def parse_recipes_text(text: str) -> list[dict[str, str]]:
    """Recipe dicts from either text form (a table under its header line, or "Recipe: title" blocks)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    if not lines:
        return []
    header = [h.strip() for h in lines[0].split("|")]
    if "title" in header and len(header) > 1:
        out = []
        for line in lines[1:]:
            cells = line.split("|")
            if len(cells) == len(header):
                out.append({h: c.strip() for h, c in zip(header, cells)})
        return out
    recipes: list[dict[str, str]] = []
    for line in lines:
        key, sep, value = line.strip().partition(": ")
        if not sep:
            key, value = line.strip().rstrip(":"), ""
        if line[:1] != " " and key.lower() in ("recipe", "title"):
            recipes.append({"title": value.strip()})
        elif recipes and key in RECIPE_FIELDS:
            recipes[-1][key] = value.strip()
    return recipes


# --- parameters ----------------------------------------------------------------------------------------------------


def random_recipe(rng: random.Random) -> dict[str, str]:
    """One of :data:`DISHES` with a random description, servings, time, ingredient note and closing tip."""
    title, directions = rng.choice(DISHES)
    return {"title": title, "description": rng.choice(DESCRIPTIONS), "servings": rng.choice(SERVINGS),
            "preparationTime": rng.choice(PREP_TIMES), "source": "", "ingredients": rng.choice(AMOUNTS),
            "directions": f"{directions} {rng.choice(EXTRAS)}"}


def random_recipes(rng: random.Random, n: int, keep: Callable[[dict[str, str]], bool] = lambda r: True,
                   distinct_titles: bool = False, avoid: tuple[dict[str, str], ...] = ()) -> list[dict[str, str]]:
    """``n`` different recipes passing ``keep`` (with ``distinct_titles``, no two share a title), none in ``avoid``."""
    out: list[dict[str, str]] = []
    for _ in range(10_000):
        if len(out) == n:
            return out
        r = random_recipe(rng)
        taken = out + list(avoid)
        if not keep(r) or r in taken or (distinct_titles and any(t["title"] == r["title"] for t in taken)):
            continue
        out.append(r)
    raise ValueError(f"could not draw {n} recipes")


# --- expert building blocks ---------------------------------------------------------------------------------------


def visible_cards(ui: Any) -> list[tuple[Any, str, str]]:
    """(title element, title, description) for each recipe card on screen, top to bottom."""
    cards: list[tuple[Any, str, str]] = []
    for e in ui.elements:
        if id_is("card_text_view_title")(e):
            cards.append((e, e.text, ""))
        elif id_is("card_text_view_description")(e) and cards and not cards[-1][2]:
            title_el, title, _ = cards[-1]
            cards[-1] = (title_el, title, e.text)
    return cards


def _list_signature(ui: Any) -> tuple[tuple[str, int], ...]:
    return tuple((title, el.bounds[1]) for el, title, _ in visible_cards(ui))


def _scroll_list(ui: Any, direction: str):
    lists = find_all(ui, id_is("recycler_view"))
    if not lists:
        raise ExpertStuck("no recipe list on screen")
    return (yield Scroll(direction, *lists[0].center))


def find_cards(ui: Any, match: Callable[[str, str], bool], max_scrolls: int = 16):
    """Scroll the list (down to its end, then back up) until a card ``match``es (title, description); (ui, cards)."""
    direction = "down"
    for _ in range(max_scrolls):
        cards = [c for c in visible_cards(ui) if match(c[1], c[2])]
        if cards:
            return ui, cards
        before = _list_signature(ui)
        ui = yield from _scroll_list(ui, direction)
        if _list_signature(ui) == before:
            if direction == "up":
                break
            direction = "up"
    raise ExpertStuck("no matching recipe card in the list")


def details_fields(ui: Any) -> dict[str, str]:
    """A recipe's fields as its details page shows them (empty when not shown)."""
    def one(rid: str) -> str:
        e = find(ui, id_is(rid))
        return e.text if e is not None else ""

    title = find(ui, id_is("details_title"))
    return {
        "title": title.text if title is not None else "",
        "description": one("details_description"), "servings": one("details_servings"),
        "preparationTime": one("details_preparation_time"), "source": one("details_source"),
        "ingredients": "\n".join(e.text.lstrip("\u2022").strip() for e in find_all(ui, id_is("ingredient_text"))),
        "directions": "\n".join(e.text for e in find_all(ui, id_is("direction_text"))),
    }


def read_details(ui: Any):
    """The open recipe's fields, scrolling its page down once when the directions are below the fold; (ui, fields)."""
    fields = details_fields(ui)
    if not fields["directions"] and find(ui, id_is("details_scroll")) is not None:
        ui = yield Scroll("down", *find(ui, id_is("details_scroll")).center)
        fields = {k: v or details_fields(ui)[k] for k, v in fields.items()}
    return ui, fields


def delete_open_recipe(ui: Any):
    """On a recipe's details: More options, Delete, and confirm."""
    ui = yield from tap_text(ui, "More options", scroll=False)
    ui = yield from tap_where_menu(ui, "Delete")
    return (yield from tap_id(ui, "android:id/button1", scroll=False))


def tap_where_menu(ui: Any, label: str):
    """Tap the popup menu entry ``label``."""
    item = find(ui, lambda e: e.text == label and e.resource_id.endswith(":id/title"))
    if item is None:
        raise ExpertStuck(f"no menu entry {label!r}")
    return (yield tap(item))


def delete_cards(ui: Any, title: str, count: int, decide: Callable[[dict[str, str]], bool] | None = None,
                 description: str | None = None):
    """Delete ``count`` recipes titled ``title`` (and described ``description``, when given) for which
    ``decide(details)`` holds (without ``decide``, any such card); the list stays where it was between visits."""
    def match(t: str, d: str) -> bool:
        return t == title and (description is None or d == description)

    tried: set[int] = set()
    deleted = 0
    for _ in range(40):
        if deleted == count:
            return ui
        ui, cards = yield from find_cards(ui, match)
        fresh = [c for c in cards if c[0].bounds[1] not in tried]
        if not fresh:
            before = _list_signature(ui)
            ui = yield from _scroll_list(ui, "down")
            if _list_signature(ui) == before:
                raise ExpertStuck(f"no further recipe {title!r} to check")
            tried = set()
            continue
        element = fresh[0][0]
        ui = yield tap(element)
        if decide is not None:
            ui, fields = yield from read_details(ui)
            if not decide(fields):
                tried.add(element.bounds[1])
                ui = yield PressBack()
                continue
        ui = yield from delete_open_recipe(ui)
        deleted += 1
        tried = set()
    raise ExpertStuck(f"could not delete {count} recipe(s) {title!r}")


def add_recipe_expert(ui: Any, recipe: dict[str, Any]):
    """From the recipe list: New Recipe, type each non-empty field, Save, and back to the list."""
    ui = yield from tap_text(ui, "New Recipe", scroll=False)
    for key in RECIPE_FIELDS:
        value = str(recipe.get(key, "") or "")
        if value:
            ui = yield from type_into(ui, value, resource_id=EDITOR_IDS[key])
    ui = yield from tap_id(ui, "button_save_recipe", scroll=False)
    if find(ui, id_is("details_title")) is None:
        raise ExpertStuck(f"the recipe {recipe.get('title')!r} was not saved")
    return (yield PressBack())


# --- tasks ---------------------------------------------------------------------------------------------------------


class _RecipeTask(Task):
    app_names: ClassVar[tuple[str, ...]] = ("broccoli app",)
    suites = SUITES_AW
    n_rows: ClassVar[int] = 1
    n_noise: ClassVar[int] = 0

    def start_rows(self) -> list[dict[str, Any]]:
        """The recipes stored before the task starts, in insertion order."""
        return list(self.params.get("noise", []))

    def initialize(self, device: Any) -> None:
        reset_recipes(device, self.start_rows())

    def teardown(self, device: Any) -> None:
        force_stop(device, BROCCOLI_PACKAGE)


class _AddRecipes(_RecipeTask):
    """Add the listed recipes; the stored ones must stay as they are."""

    difficulty = "medium"
    n_noise = 10
    param_name: ClassVar[str] = "recipes"

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        targets = random_recipes(rng, cls.n_rows)
        noise = random_recipes(rng, cls.n_noise, avoid=tuple(targets))
        form = rng.choice(["csv", "text_block"])
        return {cls.param_name: recipes_text(targets, form), "targets": targets, "noise": noise,
                "text_representation_type": form}

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        rows = read_recipes(device)
        remaining = [recipe_key(r) for r in rows]
        for key in (recipe_key(r) for r in self.params["noise"]):
            if key not in remaining:
                return 0.0
            remaining.remove(key)
        new_rows = [r for r in rows if recipe_key(r) in remaining]
        if len(new_rows) != len(self.params["targets"]):
            return 0.0
        for wanted in self.params["targets"]:
            match = next((r for r in new_rows if same_recipe(r, wanted)), None)
            if match is None:
                return 0.0
            new_rows.remove(match)
        return 1.0

    def wanted(self, ui: Any):
        """The recipes the expert adds and the ui it leaves (a generator, as reading them may take actions)."""
        yield from ()
        return ui, list(self.params["targets"])

    def expert(self, ui: Any) -> ExpertGenerator:
        ui, recipes = yield from self.wanted(ui)
        if not recipes:
            raise ExpertStuck("no recipes to add")
        ui = yield OpenApp(BROCCOLI_APP)
        for recipe in recipes:
            ui = yield from add_recipe_expert(ui, recipe)
        yield Finished()


@register_task
class RecipeAddSingleRecipe(_AddRecipes):
    """Add one recipe given in the goal."""

    name = "RecipeAddSingleRecipe"
    template = "Add the following recipes into the Broccoli app:\n{recipe}"
    difficulty = "easy"
    complexity = 2.4
    param_name = "recipe"


@register_task
class RecipeAddMultipleRecipes(_AddRecipes):
    """Add three recipes given in the goal."""

    name = "RecipeAddMultipleRecipes"
    template = "Add the following recipes into the Broccoli app: {recipes}"
    complexity = 6.0
    n_rows = 3


class _FromMarkor(_AddRecipes):
    """Add the recipes listed in Markor's recipes.txt (read in Markor's editor)."""

    difficulty = "hard"
    complexity = 6.0
    n_rows = 3
    app_names = ("broccoli app", "markor")

    def file_rows(self) -> list[dict[str, Any]]:
        """The recipes written to recipes.txt."""
        return list(self.params["targets"])

    def initialize(self, device: Any) -> None:
        super().initialize(device)
        text = recipes_text(self.file_rows(), self.params.get("text_representation_type", "csv"))
        reset_markor(device, {MARKOR_FILE: text})

    def teardown(self, device: Any) -> None:
        force_stop(device, BROCCOLI_PACKAGE, MARKOR_PACKAGE)

    def keep(self, recipe: dict[str, str]) -> bool:
        """Whether the goal asks for this recipe of the file."""
        return True

    def wanted(self, ui: Any):
        ui = yield OpenApp("Markor")
        ui = yield from open_in_browser(ui, MARKOR_FILE)
        recipes = [r for r in parse_recipes_text(editor_text(ui)) if self.keep(r)]
        return ui, recipes


@register_task
class RecipeAddMultipleRecipesFromMarkor(_FromMarkor):
    """Add every recipe of recipes.txt."""

    name = "RecipeAddMultipleRecipesFromMarkor"
    template = "Add the recipes from recipes.txt in Markor to the Broccoli recipe app."


@register_task
class RecipeAddMultipleRecipesFromMarkor2(_FromMarkor):
    """Add the recipes of a long recipes.txt that take a given time."""

    name = "RecipeAddMultipleRecipesFromMarkor2"
    template = ("Add the recipes from recipes.txt in Markor that take {prep_time} to prepare into the Broccoli "
                "recipe app.")
    n_noise = 40

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        prep_time = rng.choice(PREP_TIMES)
        targets = random_recipes(rng, cls.n_rows, lambda r: r["preparationTime"] == prep_time)
        noise = random_recipes(rng, cls.n_noise, lambda r: r["preparationTime"] != prep_time)
        order = list(range(len(targets) + len(noise)))
        rng.shuffle(order)
        return {"targets": targets, "noise": noise, "prep_time": prep_time, "file_order": order,
                "text_representation_type": rng.choice(["csv", "text_block"])}

    def file_rows(self) -> list[dict[str, Any]]:
        rows = list(self.params["targets"]) + list(self.params["noise"])
        order = self.params.get("file_order") or list(range(len(rows)))
        return [rows[i] for i in order]

    def keep(self, recipe: dict[str, str]) -> bool:
        return recipe.get("preparationTime", "").strip() == str(self.params["prep_time"]).strip()


class _DeleteRecipes(_RecipeTask):
    """Delete the named recipes; every other one must stay."""

    template = "Delete the following recipes from Broccoli app: {titles}."

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        rows = random_recipes(rng, cls.n_rows + cls.n_noise, distinct_titles=True)
        noise, targets = rows[:cls.n_noise], rows[cls.n_noise:]
        return {"titles": ", ".join(t["title"] for t in targets), "targets": targets, "noise": noise}

    def start_rows(self) -> list[dict[str, Any]]:
        return list(self.params.get("noise", [])) + list(self.params["targets"])

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        remaining = sorted(recipe_key(r) for r in read_recipes(device))
        return 1.0 if remaining == sorted(recipe_key(r) for r in self.keep_rows()) else 0.0

    def keep_rows(self) -> list[dict[str, Any]]:
        """The recipes that must remain."""
        return list(self.params.get("noise", []))

    def decide(self) -> Callable[[dict[str, str]], bool] | None:
        """What the details of a card with a target's title must show for the expert to delete it (None: any)."""
        return None

    def expert(self, ui: Any) -> ExpertGenerator:
        ui = yield OpenApp(BROCCOLI_APP)
        counts = Counter(t["title"] for t in self.params["targets"])
        for title, count in counts.items():
            ui = yield from delete_cards(ui, title, count, self.decide())
        yield Finished()


@register_task
class RecipeDeleteSingleRecipe(_DeleteRecipes):
    """Delete the only recipe."""

    name = "RecipeDeleteSingleRecipe"
    complexity = 1.0


@register_task
class RecipeDeleteSingleWithRecipeWithNoise(_DeleteRecipes):
    """Delete one recipe among thirty."""

    name = "RecipeDeleteSingleWithRecipeWithNoise"
    complexity = 2.0
    n_noise = 29


@register_task
class RecipeDeleteMultipleRecipes(_DeleteRecipes):
    """Delete all three recipes."""

    name = "RecipeDeleteMultipleRecipes"
    complexity = 2.4
    n_rows = 3


@register_task
class RecipeDeleteMultipleRecipesWithNoise(_DeleteRecipes):
    """Delete three recipes among thirty-two."""

    name = "RecipeDeleteMultipleRecipesWithNoise"
    difficulty = "medium"
    complexity = 3.4
    n_rows = 3
    n_noise = 29


@register_task
class RecipeDeleteMultipleRecipesWithConstraint(_DeleteRecipes):
    """Delete the recipes whose directions name an ingredient."""

    name = "RecipeDeleteMultipleRecipesWithConstraint"
    template = "Delete the recipes from Broccoli app that use {ingredient} in the directions."
    difficulty = "hard"
    complexity = 4.0
    n_rows = 3
    n_noise = 29

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        ingredient = rng.choice(INGREDIENT_WORDS)
        noise = random_recipes(rng, cls.n_noise, lambda r: ingredient not in r["directions"].lower())
        targets = random_recipes(rng, cls.n_rows, lambda r: ingredient in r["directions"].lower())
        return {"ingredient": ingredient, "targets": targets, "noise": noise}

    def decide(self) -> Callable[[dict[str, str]], bool] | None:
        ingredient = str(self.params["ingredient"]).lower()
        return lambda fields: ingredient in fields["directions"].lower()


class _DeleteDuplicates(_RecipeTask):
    """One recipe is stored twice; delete one copy and nothing else."""

    template = ("Delete all but one of any recipes in the Broccoli app that are exact duplicates, ensuring at "
                "least one instance of each unique recipe remains")
    n_variants: ClassVar[int] = 0

    @classmethod
    def generate_random_params(cls, rng: random.Random) -> dict[str, Any]:
        rows = random_recipes(rng, cls.n_noise - cls.n_variants + 1)
        target = rows.pop()
        variants = random_recipes(rng, cls.n_variants, lambda r: r["title"] == target["title"],
                                  avoid=(target, *rows))
        return {"targets": [target, dict(target)], "noise": rows + variants}

    def start_rows(self) -> list[dict[str, Any]]:
        return list(self.params.get("noise", [])) + list(self.params["targets"])

    def is_successful(self, device: Any, answer: str | None = None) -> float:
        remaining = sorted(recipe_key(r) for r in read_recipes(device))
        expected = sorted(recipe_key(r) for r in self.params["noise"] + self.params["targets"][:1])
        return 1.0 if remaining == expected else 0.0

    def expert(self, ui: Any) -> ExpertGenerator:
        target = self.params["targets"][0]

        def identical(fields: dict[str, str]) -> bool:
            return all(fields[k].strip() == str(target.get(k, "")).strip() for k in RECIPE_FIELDS)

        ui = yield OpenApp(BROCCOLI_APP)
        # The list shows title and description; the copies sit among same-titled variants, so open and compare.
        ui = yield from tap_text(ui, "Search", scroll=False)
        ui = yield from type_into(ui, target["title"], resource_id="search_src_text", submit=True)
        yield from delete_cards(ui, target["title"], 1, identical, description=target.get("description", ""))
        yield Finished()


@register_task
class RecipeDeleteDuplicateRecipes(_DeleteDuplicates):
    """Six recipes, one of them twice."""

    name = "RecipeDeleteDuplicateRecipes"
    complexity = 1.0
    n_noise = 5


@register_task
class RecipeDeleteDuplicateRecipes2(_DeleteDuplicates):
    """Eleven recipes, one twice and a few variants of it."""

    name = "RecipeDeleteDuplicateRecipes2"
    difficulty = "medium"
    complexity = 2.4
    n_noise = 10
    n_variants = 4


@register_task
class RecipeDeleteDuplicateRecipes3(_DeleteDuplicates):
    """Thirty recipes, one twice and several variants of it sharing its description."""

    name = "RecipeDeleteDuplicateRecipes3"
    difficulty = "medium"
    complexity = 3.4
    n_noise = 30
    n_variants = 6


__all__ = [
    "BROCCOLI_DB",
    "RECIPE_FIELDS",
    "add_recipe_expert",
    "parse_recipes_text",
    "read_recipes",
    "recipes_text",
    "reset_recipes",
]
