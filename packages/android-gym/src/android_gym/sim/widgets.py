"""App-level widget behaviour that several simulated apps share, written once.

``MultiSelect`` is the long-press multi-select mode of list apps (Simple Calendar Pro, Pro Expense, Markor):
picked keys in order, a tap toggling a row, Back leaving the mode, and the "N selected" toolbar with Delete.
"""

from __future__ import annotations

from typing import Any

from android_gym.sim.view import ImageButton, Toolbar, View


class MultiSelect:
    """Mixin (list it before ``App``) for an app whose rows can be long-pressed into a multi-selection.

    The app keeps ``self.selection`` (a list of row keys, in pick order) and a ``delete_selected`` dialog.
    """

    selection: list[Any]
    dialog: Any

    def _toggle(self, key: Any) -> None:
        """Add ``key`` to the selection, or drop it when it is already there."""
        if key in self.selection:
            self.selection.remove(key)
        else:
            self.selection.append(key)

    def _clear_selection(self) -> None:
        """Leave the selection mode."""
        self.selection = []

    def on_back(self) -> bool:
        """System Back leaves the selection mode first (when no dialog is open), then behaves as the app's."""
        if self.dialog is None and self.selection:
            self.selection = []
            return True
        return super().on_back()  # type: ignore[misc]

    def selection_toolbar(self, back_desc: str, delete_id: str, toolbar_id: str) -> View:
        """The "N selected" bar: a close button (``back_desc``) and Delete, which asks through the dialog."""
        delete = ImageButton("Delete", lambda: self.show_dialog("delete_selected"),  # type: ignore[attr-defined]
                             resource_id=delete_id, icon="D")
        return Toolbar(f"{len(self.selection)} selected", on_back=self._clear_selection, back_desc=back_desc,
                       actions=[delete], resource_id=toolbar_id)

    @staticmethod
    def selection_check(checked: bool, resource_id: str) -> View:
        """The check box a row shows while the selection mode is on."""
        return View(cls="android.widget.CheckBox", checkable=True, checked=checked, width=48, height=48,
                    resource_id=resource_id)
