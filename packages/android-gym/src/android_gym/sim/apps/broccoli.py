"""Broccoli (com.flauschcode.broccoli): a recipe collection with a list, recipe details and an editor.

Pages: ``recipes`` (the main list, "All recipes" or "Favorites": one card per recipe showing its
title and the first line of its description, ordered by title; a Search field in the app bar filters
by title, description, source and ingredients; the navigation drawer; the "New Recipe" FAB),
``details`` (one recipe: servings, time, description, source, its ingredients and its numbered
directions; "Mark as favorite", "Edit", and "More options" with Share, Duplicate and Delete, which
asks "Delete this recipe?") and ``editor`` (the create-and-edit form: Title, Description, Source,
Servings, Time, Ingredients, Directions; "Save" in the app bar; leaving with changes asks "Discard
changes?").

Database (what AndroidWorld's recipe tasks pull, change and push back): Room's
``/data/data/com.flauschcode.broccoli/databases/broccoli``, schema version 1 of the real app:
``recipes(recipeId, title, imageName, description, servings, preparationTime, source, ingredients,
directions, favorite)``, ``categories(categoryId, name)``, ``recipes_with_categories(recipeId,
categoryId)`` and the FTS4 index ``recipes_fts`` kept by Room's triggers. Empty text fields are
stored as ``''`` (as the app's entity defaults them), never NULL. The real app has no content provider.
"""

from __future__ import annotations

from typing import Any

from android_gym.sim.app import App, register_app
from android_gym.sim.databases import build_database, read_table
from android_gym.sim.view import (
    HORIZONTAL,
    Button,
    Column,
    Dialog,
    EditText,
    Fab,
    Image,
    ImageButton,
    ListItem,
    ScrollList,
    Text,
    Toolbar,
    View,
)

BROCCOLI_PKG = "com.flauschcode.broccoli"
BROCCOLI_DB = "/data/data/com.flauschcode.broccoli/databases/broccoli"

RECIPE_TEXT_FIELDS = ("title", "imageName", "description", "servings", "preparationTime", "source", "ingredients",
                      "directions")
RECIPE_COLUMNS = ("recipeId", *RECIPE_TEXT_FIELDS, "favorite")
"""The ``recipes`` table's columns, in the real schema's order."""

BROCCOLI_SCHEMA = (
    "CREATE TABLE android_metadata (locale TEXT)",
    "CREATE TABLE IF NOT EXISTS `recipes` (`recipeId` INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, `title` TEXT, "
    "`imageName` TEXT, `description` TEXT, `servings` TEXT, `preparationTime` TEXT, `source` TEXT, "
    "`ingredients` TEXT, `directions` TEXT, `favorite` INTEGER NOT NULL)",
    "CREATE TABLE IF NOT EXISTS `categories` (`categoryId` INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, `name` TEXT)",
    "CREATE TABLE IF NOT EXISTS `recipes_with_categories` (`recipeId` INTEGER NOT NULL, `categoryId` INTEGER NOT "
    "NULL, PRIMARY KEY(`recipeId`, `categoryId`), FOREIGN KEY(`recipeId`) REFERENCES `recipes`(`recipeId`) ON "
    "UPDATE NO ACTION ON DELETE CASCADE , FOREIGN KEY(`categoryId`) REFERENCES `categories`(`categoryId`) ON "
    "UPDATE NO ACTION ON DELETE CASCADE )",
    "CREATE INDEX IF NOT EXISTS `index_recipes_with_categories_recipeId` ON `recipes_with_categories` (`recipeId`)",
    "CREATE INDEX IF NOT EXISTS `index_recipes_with_categories_categoryId` ON `recipes_with_categories` "
    "(`categoryId`)",
    "CREATE VIRTUAL TABLE IF NOT EXISTS `recipes_fts` USING FTS4(`title` TEXT, `description` TEXT, `source` TEXT, "
    "`ingredients` TEXT, tokenize=unicode61 `tokenchars=#`, content=`recipes`)",
    "CREATE TRIGGER IF NOT EXISTS room_fts_content_sync_recipes_fts_BEFORE_UPDATE BEFORE UPDATE ON `recipes` BEGIN "
    "DELETE FROM `recipes_fts` WHERE `docid`=OLD.`rowid`; END",
    "CREATE TRIGGER IF NOT EXISTS room_fts_content_sync_recipes_fts_BEFORE_DELETE BEFORE DELETE ON `recipes` BEGIN "
    "DELETE FROM `recipes_fts` WHERE `docid`=OLD.`rowid`; END",
    "CREATE TRIGGER IF NOT EXISTS room_fts_content_sync_recipes_fts_AFTER_UPDATE AFTER UPDATE ON `recipes` BEGIN "
    "INSERT INTO `recipes_fts`(`docid`, `title`, `description`, `source`, `ingredients`) VALUES (NEW.`rowid`, "
    "NEW.`title`, NEW.`description`, NEW.`source`, NEW.`ingredients`); END",
    "CREATE TRIGGER IF NOT EXISTS room_fts_content_sync_recipes_fts_AFTER_INSERT AFTER INSERT ON `recipes` BEGIN "
    "INSERT INTO `recipes_fts`(`docid`, `title`, `description`, `source`, `ingredients`) VALUES (NEW.`rowid`, "
    "NEW.`title`, NEW.`description`, NEW.`source`, NEW.`ingredients`); END",
    "CREATE TABLE IF NOT EXISTS room_master_table (id INTEGER PRIMARY KEY,identity_hash TEXT)",
    "INSERT OR REPLACE INTO room_master_table (id,identity_hash) VALUES(42, '1548e88f42d976a4b4915ca1cfa71e00')",
)
"""Broccoli's Room database, version 1 (the recipes table AndroidWorld's ``Recipe`` rows mirror)."""

EDITOR_FIELDS: tuple[tuple[str, str, str, bool], ...] = (
    ("title", "Title", "new_title", False),
    ("description", "Description", "new_description", True),
    ("source", "Source", "new_source", False),
    ("servings", "Servings", "new_servings", False),
    ("preparationTime", "Time", "new_preparation_time", False),
    ("ingredients", "Ingredients", "new_ingredients", True),
    ("directions", "Directions", "new_directions", True),
)
"""The editor's fields: (recipe key, hint, resource id, multi-line)."""

_ACTIVITIES = {
    "recipes": ".MainActivity",
    "details": "com.flauschcode.broccoli.recipe.details.RecipeDetailsActivity",
    "editor": "com.flauschcode.broccoli.recipe.crud.CreateAndEditRecipeActivity",
}


def _text(value: Any) -> str:
    return "" if value is None else str(value)


@register_app
class BroccoliApp(App):
    """Broccoli over a list of recipe dicts keyed by the ``recipes`` table's columns."""

    package = BROCCOLI_PKG
    label = "Broccoli"
    activity = ".MainActivity"
    main_page = "recipes"
    icon_color = "#558b2f"

    databases = (BROCCOLI_DB,)

    # --- lifecycle and data ------------------------------------------------------------------------------
    def setup(self) -> None:
        """A fresh install: no recipes, no categories."""
        self.recipes: list[dict[str, Any]] = []
        self.categories: list[dict[str, Any]] = []
        self.recipe_categories: list[dict[str, Any]] = []
        self.next_id = 1
        self._reset_ui()

    def clear_data(self) -> None:
        """``pm clear``: the fresh install's empty collection."""
        self.setup()

    def _reset_ui(self) -> None:
        self.form: dict[str, Any] = {}
        self.query: str | None = None
        self.show_favorites = False

    def on_open(self) -> None:
        self._reset_ui()

    def current_activity(self) -> str:
        return _ACTIVITIES.get(self.page, self.activity)

    def add_recipe(self, **fields: Any) -> int:
        """Store a recipe (missing text fields empty, not favorite) and return its id."""
        recipe_id = self.next_id
        self.next_id += 1
        row = {"recipeId": recipe_id, **{k: _text(fields.get(k)) for k in RECIPE_TEXT_FIELDS},
               "favorite": int(bool(fields.get("favorite", 0)))}
        self.recipes.append(row)
        return recipe_id

    def recipe(self, recipe_id: int | None) -> dict[str, Any] | None:
        """The recipe with this id, or None."""
        return next((r for r in self.recipes if r["recipeId"] == recipe_id), None)

    def listed(self) -> list[dict[str, Any]]:
        """The recipes the list shows: by title (case aside, then id), favorites only or filtered by the search."""
        rows = [r for r in self.recipes if r["favorite"]] if self.show_favorites else list(self.recipes)
        if self.query:
            q = self.query.strip().lower()
            rows = [r for r in rows if any(q in r[k].lower() for k in ("title", "description", "source",
                                                                       "ingredients"))]
        return sorted(rows, key=lambda r: (r["title"].lower(), r["recipeId"]))

    # --- the database ------------------------------------------------------------------------------------
    def dump_database(self, path: str) -> bytes:
        """The ``broccoli`` Room file built from the recipes (and categories)."""
        return build_database(BROCCOLI_SCHEMA, {
            "recipes": [{k: r[k] for k in RECIPE_COLUMNS} for r in sorted(self.recipes, key=lambda r: r["recipeId"])],
            "categories": [dict(c) for c in self.categories],
            "recipes_with_categories": [dict(rc) for rc in self.recipe_categories],
        })

    def load_database(self, path: str, data: bytes) -> None:
        """Replace the collection with the rows of a written ``broccoli`` file."""
        rows = read_table(data, "recipes")
        self.recipes = [{"recipeId": int(r["recipeId"]), **{k: _text(r.get(k)) for k in RECIPE_TEXT_FIELDS},
                         "favorite": int(r.get("favorite") or 0)} for r in rows]
        try:
            self.categories = [{"categoryId": int(c["categoryId"]), "name": _text(c["name"])}
                               for c in read_table(data, "categories")]
            self.recipe_categories = [{"recipeId": int(rc["recipeId"]), "categoryId": int(rc["categoryId"])}
                                      for rc in read_table(data, "recipes_with_categories")]
        except ValueError:
            self.categories, self.recipe_categories = [], []
        ids = {r["recipeId"] for r in self.recipes}
        self.recipe_categories = [rc for rc in self.recipe_categories if rc["recipeId"] in ids]
        self.next_id = max(ids, default=0) + 1
        # Pages of recipes that no longer exist close, as the real activities finish on a missing recipe.
        while self.page in ("details", "editor") and self.page_args.get("recipe_id") is not None \
                and self.recipe(self.page_args["recipe_id"]) is None and self.pop():
            pass

    # --- the list ----------------------------------------------------------------------------------------
    def _card(self, r: dict[str, Any]) -> View:
        rid = r["recipeId"]
        texts = Column(
            Text(r["title"], resource_id="card_text_view_title", size=20, max_lines=2, padding=(8, 8)),
            Text(r["description"], resource_id="card_text_view_description", size=14, color="#444746",
                 max_lines=1, padding=(8, 4)) if r["description"] else None,
            cls="android.widget.RelativeLayout", weight=1,
        )
        return View(cls="androidx.cardview.widget.CardView", orientation=HORIZONTAL, height=100, clickable=True,
                    focusable=True, on_click=lambda i=rid: self.open_details(i), padding=(8.0, 4.0),
                    children=[Image(resource_id="card_image", icon="B", width=100, height=92), texts])

    def build_recipes(self) -> View:
        title = "Favorites" if self.show_favorites else "Recipes"
        if self.query is not None:
            toolbar = View(cls="android.view.ViewGroup", resource_id="toolbar", orientation=HORIZONTAL, height=64,
                           padding=(4.0, 8.0), background="#f8fafd", children=[
                               ImageButton("Collapse", self._close_search, icon="<"),
                               EditText(self.query, self._set_query, hint=f"Search in {title.lower()}",
                                        resource_id="search_src_text", key="broccoli_search", weight=1,
                                        background=None)])
        else:
            toolbar = Toolbar(title, on_back=lambda: self.show_dialog("drawer"), back_desc="Open navigation drawer",
                              resource_id="toolbar", actions=[
                                  ImageButton("Search", self._open_search, resource_id="action_search", icon="S")])
        cards = [self._card(r) for r in self.listed()]
        if not cards:
            if self.recipes and (self.query or self.show_favorites):
                message = "No recipes found."
            else:
                message = "Create your first recipe and start your collection!"
            cards = [Text(message, resource_id="text_recipes", size=20, align="center", padding=(24, 48),
                          color="#5f6368")]
        return Column(
            toolbar,
            ScrollList(cards, "recipes:list", resource_id="recycler_view"),
            Fab("New Recipe", self.new_recipe, resource_id="fab"),
            cls="androidx.drawerlayout.widget.DrawerLayout", resource_id="drawer_layout", weight=1,
        )

    def _open_search(self) -> None:
        self.query = ""
        self.scroll.pop("recipes:list", None)
        self.focus("broccoli_search")

    def _close_search(self) -> None:
        self.query = None
        self.phone.set_focus(None)

    def _set_query(self, value: str) -> None:
        self.query = value
        self.scroll.pop("recipes:list", None)

    def on_back(self) -> bool:
        """Back closes the search first; in the editor with changes it asks before discarding them."""
        if self.dialog is None and self.page == "recipes" and self.query is not None:
            self._close_search()
            return True
        if self.dialog is None and self.page == "editor" and self._form_changed():
            self.phone.set_focus(None)
            self.show_dialog("discard")
            return True
        return super().on_back()

    def dialog_drawer(self) -> View:
        entries = (("All recipes", lambda: self._drawer(False)), ("Favorites", lambda: self._drawer(True)))
        body = Column(*[ListItem(label, "", cb, resource_id="design_menu_item_text", min_height=52)
                        for label, cb in entries], resource_id="nav_view")
        return Dialog("Broccoli", body, [])

    def _drawer(self, favorites: bool) -> None:
        self.pages = [(self.main_page, {})]
        self.show_favorites = favorites
        self.query = None
        self.scroll.pop("recipes:list", None)
        self.close_dialog()

    # --- details -----------------------------------------------------------------------------------------
    def open_details(self, recipe_id: int) -> None:
        """Show one recipe."""
        self.phone.set_focus(None)
        self.push("details", recipe_id=recipe_id)

    def build_details(self, recipe_id: int) -> View:
        r = self.recipe(recipe_id)
        if r is None:
            return Column(Toolbar("", on_back=self.pop), Text("This recipe was deleted", padding=(24, 24)), weight=1)
        rows: list[View | None] = [
            Image("Recipe photo", resource_id="image", icon="B", width=360, height=180),
            Text(r["title"], resource_id="details_title", size=26, bold=True, padding=(16, 8)),
        ]
        facts = [(r["servings"], "details_servings", "Servings"), (r["preparationTime"], "details_preparation_time",
                                                                    "Time")]
        for value, rid, label in facts:
            if value:
                rows.append(View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, children=[
                    Image(label, icon=label[:1], width=32, height=32),
                    Text(value, resource_id=rid, size=16, weight=1, padding=(8, 4))]))
        if r["description"]:
            rows.append(Text(r["description"], resource_id="details_description", size=16, padding=(16, 8)))
        if r["source"]:
            rows.append(Text(r["source"], resource_id="details_source", size=14, color="#0b57d0", padding=(16, 4)))
        ingredients = [ln for ln in r["ingredients"].splitlines() if ln.strip()]
        if ingredients:
            rows.append(Text("Ingredients", resource_id="details_ingredients_header", size=20, bold=True,
                             padding=(16, 12)))
            rows.extend(Text(f"\u2022 {ln.strip()}", resource_id="ingredient_text", size=16, padding=(24, 4))
                        for ln in ingredients)
        directions = [ln for ln in r["directions"].splitlines() if ln.strip()]
        if directions:
            rows.append(Text("Directions", resource_id="details_directions_header", size=20, bold=True,
                             padding=(16, 12)))
            rows.extend(View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, children=[
                Text(f"{i}", resource_id="direction_number", size=16, bold=True, width=40, padding=(16, 4)),
                Text(ln.strip(), resource_id="direction_text", size=16, weight=1, padding=(8, 4))])
                for i, ln in enumerate(directions, 1))
        favorite = ("Remove from favorites" if r["favorite"] else "Mark as favorite")
        return Column(
            Toolbar(r["title"], on_back=self.pop, resource_id="toolbar", actions=[
                ImageButton(favorite, lambda: self._toggle_favorite(recipe_id), resource_id="action_favorite",
                            icon="*"),
                ImageButton("Edit", lambda: self.edit_recipe(recipe_id), resource_id="action_edit", icon="E"),
                ImageButton("More options", lambda: self.show_dialog("details_menu", recipe_id=recipe_id), icon=":"),
            ]),
            ScrollList([v for v in rows if v is not None], "details:content", resource_id="details_scroll",
                       cls="androidx.core.widget.NestedScrollView"),
            cls="androidx.coordinatorlayout.widget.CoordinatorLayout", weight=1,
        )

    def _toggle_favorite(self, recipe_id: int) -> None:
        r = self.recipe(recipe_id)
        if r is not None:
            r["favorite"] = 0 if r["favorite"] else 1

    def dialog_details_menu(self, recipe_id: int) -> View:
        """The More options menu of a recipe."""
        items = [ListItem(label, "", cb, resource_id="menu_item", title_id="title")
                 for label, cb in (("Share", self._share), ("Duplicate", lambda: self._duplicate(recipe_id)),
                                   ("Delete", lambda: self.show_dialog("delete", recipe_id=recipe_id)))]
        return Dialog("", Column(*items, resource_id="popup_menu"))

    def _share(self) -> None:
        self.close_dialog()
        self.toast("Sharing is not available")

    def _duplicate(self, recipe_id: int) -> None:
        """Open the editor on a copy of the recipe (saved only when the user saves it)."""
        r = self.recipe(recipe_id)
        self.close_dialog()
        if r is not None:
            self._open_editor(None, r)

    def dialog_delete(self, recipe_id: int) -> View:
        return Dialog("", "Delete this recipe?", [("Cancel", self.close_dialog),
                                                  ("Delete", lambda: self.delete_recipe(recipe_id))],
                      button_ids=["android:id/button2", "android:id/button1"])

    def delete_recipe(self, recipe_id: int) -> None:
        """Delete a recipe (confirmed) and go back to the list."""
        self.recipes = [r for r in self.recipes if r["recipeId"] != recipe_id]
        self.recipe_categories = [rc for rc in self.recipe_categories if rc["recipeId"] != recipe_id]
        self.close_dialog()
        while self.page != self.main_page and self.pop():
            pass
        self.toast("The recipe has been deleted.")

    # --- the editor --------------------------------------------------------------------------------------
    def new_recipe(self) -> None:
        """The FAB: an empty editor."""
        self._open_editor(None, None)

    def edit_recipe(self, recipe_id: int) -> None:
        """The details' Edit: the editor on that recipe."""
        self._open_editor(recipe_id, self.recipe(recipe_id))

    def _open_editor(self, recipe_id: int | None, source: dict[str, Any] | None) -> None:
        self.phone.set_focus(None)
        values = {k: (source[k] if source else "") for k, _, _, _ in EDITOR_FIELDS}
        self.form = {"recipe_id": recipe_id, "values": values, "initial": dict(values),
                     "imageName": source["imageName"] if source else "",
                     "favorite": source["favorite"] if source and recipe_id is not None else 0}
        self.push("editor", recipe_id=recipe_id)

    def _form_changed(self) -> bool:
        return bool(self.form) and self.form["values"] != self.form["initial"]

    def _set_field(self, key: str, value: str) -> None:
        self.form["values"][key] = value

    def build_editor(self, recipe_id: int | None) -> View:
        values = self.form.get("values", {})
        items: list[View] = [Image("Recipe photo", resource_id="new_image", icon="+", width=360, height=140)]
        for key, hint, rid, multiline in EDITOR_FIELDS:
            items.append(EditText(values.get(key, ""), lambda v, k=key: self._set_field(k, v), hint=hint,
                                  resource_id=rid, multiline=multiline))
        title = "New Recipe" if recipe_id is None else "Edit Recipe"
        return Column(
            Toolbar(title, on_back=self._close_editor, back_desc="Navigate up", resource_id="toolbar", actions=[
                Button("Save", self.save, resource_id="button_save_recipe", background=None)]),
            ScrollList(items, "editor:form", resource_id="editor_scroll", cls="androidx.core.widget.NestedScrollView"),
            cls="androidx.coordinatorlayout.widget.CoordinatorLayout", weight=1,
        )

    def _close_editor(self) -> None:
        if self._form_changed():
            self.phone.set_focus(None)
            self.show_dialog("discard")
        else:
            self.form = {}
            self.phone.set_focus(None)
            self.pop()

    def dialog_discard(self) -> View:
        return Dialog("", "Discard changes?", [("Cancel", self.close_dialog), ("Discard", self._discard)],
                      button_ids=["android:id/button2", "android:id/button1"])

    def _discard(self) -> None:
        self.form = {}
        self.close_dialog()
        self.pop()

    def save(self) -> None:
        """Store the form (a title is required): a new recipe opens its details, an edit returns to them."""
        f = self.form
        values = {k: v.strip() for k, v in f["values"].items()}
        if not values["title"]:
            self.toast("Please add a title.")
            return
        self.phone.set_focus(None)
        existing = self.recipe(f["recipe_id"])
        if existing is not None:
            existing.update(values)
            self.form = {}
            self.pop()
        else:
            recipe_id = self.add_recipe(**values, imageName=f.get("imageName", ""))
            self.form = {}
            self.replace("details", recipe_id=recipe_id)
        self.toast("The recipe has been saved.")
