"""The simulated Broccoli and its tasks: list, editor, details, delete, search, its database both ways, experts,
AndroidWorld's own set-up and checks on it, random agents."""

from __future__ import annotations

import logging
import sqlite3

import pytest

from android_gym.agents import RandomAgent
from android_gym.sim import SimPhone
from android_gym.sim.device import SimDevice
from android_gym.suites import android_world_available
from android_gym.tasks.base import TASK_REGISTRY
from android_gym.tasks.runner import run_expert
from android_gym.tasks.sim import broccoli as broccoli_tasks
from android_gym.tasks.sim.broccoli import (
    parse_recipes_text,
    read_recipes,
    recipe_key,
    recipes_text,
    reset_recipes,
)

from .sim_ui import reveal_rid, tap_on, texts, type_in, ui_of
from .task_checks import (
    android_world_instance,
    android_world_metadata,
    check_android_world_tasks,
    check_expert_solves,
    check_random_agent_rarely_succeeds,
    check_start_state,
    launch,
)

PKG = "com.flauschcode.broccoli"
DB = "/data/data/com.flauschcode.broccoli/databases/broccoli"
NAMES = sorted(n for n, c in TASK_REGISTRY.items() if c.__module__ == broccoli_tasks.__name__)
needs_android_world = pytest.mark.skipif(
    not android_world_available(),
    reason="the android_world package is not installed (tools/setup_env.sh installs it from ../shared/vendor)")

SOUP = {"title": "Leek Soup", "description": "Creamy and green.", "servings": "4 servings",
        "preparationTime": "40 mins", "source": "", "ingredients": "leeks\npotatoes", "directions": "Sweat. Blend."}


def sql(phone: SimPhone, statement: str) -> str:
    return phone.shell(f'sqlite3 {DB} "{statement}"')


def shown_titles(phone: SimPhone) -> list[str]:
    return [e.text for e in ui_of(phone).elements if e.resource_id.endswith(":id/card_text_view_title")]


# --- the app -----------------------------------------------------------------------------------------------------


def test_a_fresh_install_is_empty_and_the_editor_creates_a_recipe_with_validation():
    phone = SimPhone()
    phone.launch(PKG)
    assert "Create your first recipe and start your collection!" in texts(phone)
    assert phone.current_activity() == f"{PKG}/.MainActivity"
    tap_on(phone, text="New Recipe")
    assert phone.current_activity().endswith("recipe.crud.CreateAndEditRecipeActivity")
    tap_on(phone, text="Save")
    assert "Please add a title." in texts(phone)
    for rid, key in (("new_title", "title"), ("new_description", "description"), ("new_servings", "servings"),
                     ("new_preparation_time", "preparationTime"), ("new_ingredients", "ingredients"),
                     ("new_directions", "directions")):
        reveal_rid(phone, rid)  # the emulator's taller keyboard covers the fields below the one typed in
        type_in(phone, rid, SOUP[key])
    tap_on(phone, text="Save")
    shown = texts(phone)
    assert "The recipe has been saved." in shown
    assert {"Leek Soup", "4 servings", "40 mins", "Creamy and green.", "\u2022 leeks", "\u2022 potatoes",
            "Sweat. Blend."} <= set(shown)
    # the row is in the database at the real path, every text column '' rather than NULL when left empty
    stored = read_recipes(SimDevice(phone))
    assert [recipe_key(r) for r in stored] == [recipe_key(SOUP)] and stored[0]["favorite"] == 0
    assert sql(phone, "SELECT recipeId, source IS NULL, imageName FROM recipes").strip() == "1|0|"
    phone.back()
    assert shown_titles(phone) == ["Leek Soup"]


def test_details_favorite_edit_and_delete_with_confirmation():
    phone = SimPhone()
    reset_recipes(SimDevice(phone), [SOUP, {**SOUP, "title": "Apple Pie", "description": "Sweet."}])
    phone.launch(PKG)
    assert shown_titles(phone) == ["Apple Pie", "Leek Soup"]  # ordered by title
    tap_on(phone, text="Leek Soup")
    tap_on(phone, text="Mark as favorite")
    assert sql(phone, "SELECT favorite FROM recipes WHERE title = 'Leek Soup'").strip() == "1"
    tap_on(phone, text="Edit")
    tap_on(phone, rid="new_servings", long=True)
    phone.type_text("2 servings")
    tap_on(phone, text="Save")
    assert "2 servings" in texts(phone)
    assert sql(phone, "SELECT servings FROM recipes WHERE title = 'Leek Soup'").strip() == "2 servings"
    tap_on(phone, text="More options")
    tap_on(phone, text="Delete")
    assert "Delete this recipe?" in texts(phone)
    tap_on(phone, text="Cancel")
    assert len(read_recipes(SimDevice(phone))) == 2
    tap_on(phone, text="More options")
    tap_on(phone, text="Delete")
    tap_on(phone, rid="button1")
    assert "The recipe has been deleted." in texts(phone) and shown_titles(phone) == ["Apple Pie"]
    assert [r["title"] for r in read_recipes(SimDevice(phone))] == ["Apple Pie"]


def test_leaving_the_editor_with_changes_asks_to_discard_them():
    phone = SimPhone()
    phone.launch(PKG)
    tap_on(phone, text="New Recipe")
    tap_on(phone, text="Navigate up")  # nothing typed: just closes
    assert "Recipes" in texts(phone)
    tap_on(phone, text="New Recipe")
    type_in(phone, "new_title", "Half a recipe")
    phone.back()  # hides the keyboard
    phone.back()
    assert "Discard changes?" in texts(phone)
    tap_on(phone, text="Cancel")
    assert "Half a recipe" in texts(phone)
    tap_on(phone, text="Navigate up")
    tap_on(phone, text="Discard")
    assert read_recipes(SimDevice(phone)) == [] and "Recipes" in texts(phone)


def test_search_filters_and_the_drawer_shows_favorites():
    phone = SimPhone()
    rows = [{**SOUP, "title": t, "description": d} for t, d in
            (("Pea Soup", "green"), ("Tomato Soup", "red"), ("Pancakes", "sweet"))]
    reset_recipes(SimDevice(phone), rows)
    sql(phone, "UPDATE recipes SET favorite = 1 WHERE title = 'Pancakes'")
    phone.launch(PKG)
    tap_on(phone, text="Search")
    phone.type_text("soup")
    assert shown_titles(phone) == ["Pea Soup", "Tomato Soup"]
    phone.type_text("x")
    assert "No recipes found." in texts(phone)
    phone.back()  # keyboard
    phone.back()  # search
    assert shown_titles(phone) == ["Pancakes", "Pea Soup", "Tomato Soup"]
    tap_on(phone, text="Open navigation drawer")
    tap_on(phone, text="Favorites")
    assert "Favorites" in texts(phone) and shown_titles(phone) == ["Pancakes"]


def test_database_written_from_outside_reaches_the_app_and_pm_clear_empties_it():
    phone = SimPhone()
    phone.launch(PKG)
    sql(phone, "INSERT INTO recipes (title, description, servings, preparationTime, source, ingredients, "
               "directions, favorite, imageName) VALUES ('Flatbread', 'Quick', '2', '10 mins', '', 'flour', "
               "'Knead. Bake.', 0, '')")
    assert shown_titles(phone) == ["Flatbread"]  # the open list shows the row written to the file
    schema = sql(phone, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").split()
    assert {"recipes", "categories", "recipes_with_categories", "recipes_fts", "room_master_table"} <= set(schema)
    # Room's FTS triggers keep the search index in step with rows written into the file
    assert sql(phone, "SELECT count(*) FROM recipes_fts WHERE recipes_fts MATCH 'flatbread'").strip() == "1"
    phone.shell(f"am force-stop {PKG}")
    phone.shell(f"am start -n {PKG}/{PKG}.MainActivity")
    assert phone.current_activity() == f"{PKG}/.MainActivity" and shown_titles(phone) == ["Flatbread"]
    phone.shell(f"pm clear {PKG}")
    assert read_recipes(SimDevice(phone)) == []


def test_recipe_text_forms_round_trip():
    """Both forms a goal or recipes.txt uses ("|" table, "Recipe: ..." blocks) parse back to the fields listed."""
    rows = [{**SOUP, "ingredients": "leeks, potatoes"}, {**SOUP, "title": 'Cauliflower "Rice"', "ingredients": "n/a",
                                                         "directions": "Pulse: then fry."}]
    wanted = [{k: v for k, v in r.items() if k != "source"} for r in rows]
    for form in ("csv", "text_block"):
        assert parse_recipes_text(recipes_text(rows, form)) == wanted, form


# --- AndroidWorld's own code on the app ------------------------------------------------------------------------


@needs_android_world
def test_androidworlds_sqlite_utils_read_and_write_the_recipes_table():
    from android_world.task_evals.utils import sqlite_schema_utils, sqlite_utils

    from android_gym.suites.android_world_sim import AndroidWorldSimSuite

    logging.getLogger("absl").setLevel(logging.ERROR)
    device = SimDevice()
    env = AndroidWorldSimSuite(["RecipeAddSingleRecipe"]).attach(device)
    app = device.phone.apps[PKG]
    recipe = sqlite_schema_utils.Recipe(title="Miso Soup", description="Warm", servings="2 servings",
                                        preparationTime="10 mins", ingredients="miso", directions="Stir.")
    sqlite_utils.insert_rows_to_remote_db([recipe], "recipeId", "recipes", DB, "broccoli app", env)
    assert [(r["recipeId"], r["title"], r["source"]) for r in app.recipes] == [(1, "Miso Soup", "")]
    rows = sqlite_utils.get_rows_from_remote_device("recipes", DB, sqlite_schema_utils.Recipe, env)
    assert rows == [sqlite_schema_utils.Recipe(**{**recipe.__dict__, "recipeId": 1})]
    sqlite_utils.delete_all_rows_from_table("recipes", DB, env, "broccoli app")
    assert app.recipes == []


@needs_android_world
@pytest.mark.parametrize("name", ["RecipeDeleteDuplicateRecipes", "RecipeAddSingleRecipe"])
def test_androidworlds_check_rejects_near_misses(name):
    """AndroidWorld's own is_successful on states an agent could leave: only the right change scores."""
    device = SimDevice()
    task = android_world_instance(name, 1, device).task
    phone = device.phone
    target = task.params["row_objects"][0]
    if name == "RecipeDeleteDuplicateRecipes":
        ids = [r["recipeId"] for r in phone.apps[PKG].recipes if r["title"] == target.title
               and r["description"] == target.description and r["servings"] == target.servings]
        sql(phone, f"DELETE FROM recipes WHERE recipeId IN ({ids[-2]}, {ids[-1]})")  # both copies
        assert task.is_successful(device) == 0.0
        task.initialize(device)
        ids = [r["recipeId"] for r in phone.apps[PKG].recipes][-2:]
        sql(phone, f"DELETE FROM recipes WHERE recipeId = {ids[0]}")  # one copy
        assert task.is_successful(device) == 1.0
    else:
        values = dict(target.__dict__)
        values.pop("recipeId")
        phone.apps[PKG].add_recipe(**{**values, "directions": "Boil everything."})  # other directions
        assert task.is_successful(device) == 0.0
        phone.apps[PKG].recipes.pop()
        phone.apps[PKG].add_recipe(**{**values, "title": values["title"].lower()})  # case does not matter
        assert task.is_successful(device) == 1.0


# --- the re-creations ----------------------------------------------------------------------------------------------


def test_task_names_templates_and_budgets_match_androidworld(realdata):
    # AndroidWorld itself gives RecipeAddMultipleRecipes 60 steps (complexity 6) for a 34-step optimum, under the
    # twice-the-optimum rule the other re-creations keep; the re-creation keeps AndroidWorld's budget.
    check_android_world_tasks(realdata, [n for n in NAMES if n != "RecipeAddMultipleRecipes"])
    meta = android_world_metadata(realdata)["RecipeAddMultipleRecipes"]
    cls = TASK_REGISTRY["RecipeAddMultipleRecipes"]
    assert (cls.template, cls.difficulty, cls.complexity) == (meta["task_template"], meta["difficulty"], 6.0)
    assert len(NAMES) == 12


@pytest.mark.parametrize("name", NAMES)
def test_expert_solves_task_on_five_seeds(name):
    check_expert_solves(name)


@pytest.mark.parametrize("name", NAMES)
def test_initial_state_is_not_a_success_and_initialize_is_repeatable(name):
    check_start_state(TASK_REGISTRY[name](seed=4), lambda device: sorted(recipe_key(r) for r in read_recipes(device)),
                      launch(PKG))


def test_deleting_everything_or_a_favorite_copy_fails():
    device = SimDevice()
    multi = TASK_REGISTRY["RecipeDeleteMultipleRecipesWithNoise"](seed=3)
    multi.initialize(device)
    device.shell(f'sqlite3 {DB} "DELETE FROM recipes"')
    assert multi.is_successful(device) == 0.0
    add = TASK_REGISTRY["RecipeAddSingleRecipe"](seed=3)
    result = run_expert(add, device)
    assert result.success == 1.0
    device.shell(f'sqlite3 {DB} "UPDATE recipes SET favorite = 1 WHERE recipeId = (SELECT max(recipeId) FROM '
                 'recipes)"')
    assert add.is_successful(device) == 0.0


def test_the_database_file_is_a_real_sqlite_file(tmp_path):
    phone = SimPhone()
    reset_recipes(SimDevice(phone), [SOUP])
    local = tmp_path / "broccoli"
    SimDevice(phone).pull(DB, str(local))
    with sqlite3.connect(local) as conn:
        assert conn.execute("SELECT title, directions FROM recipes").fetchall() == [("Leek Soup", "Sweat. Blend.")]


def test_random_agent_rarely_succeeds():
    check_random_agent_rarely_succeeds(NAMES, lambda seed: RandomAgent(seed=seed), episodes=3)
