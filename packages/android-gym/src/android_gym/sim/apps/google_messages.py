"""Google Messages (com.google.android.apps.messaging), as the AndroidWorld emulator shows it: not the default SMS app.

On the emulator the home screen's dock has Google's Messages, while AndroidWorld's SMS tasks use Simple SMS
Messenger, the default SMS app. Opened, Messages shows only its prompt to become the default (the real
ContactsAddContact episode's second step): its fragment containers, the home list, "To use Messages, make it
your default SMS app", "Set default SMS app" and More options. The sim keeps Simple SMS Messenger the default,
so the button and the menu say so instead of switching.
"""

from __future__ import annotations

from android_gym.sim.app import App, register_app
from android_gym.sim.view import HORIZONTAL, View

MESSAGES_PKG = "com.google.android.apps.messaging"
STAYS_DEFAULT = "Simple SMS Messenger stays the default SMS app on this phone"


@register_app
class GoogleMessagesApp(App):
    """One screen: the prompt to make Messages the default SMS app."""

    package = MESSAGES_PKG
    label = "Messages"
    activity = "com.google.android.apps.messaging.ui.ConversationListActivity"
    icon_color = "#0b57d0"

    def build_main(self) -> View:
        """The prompt, listed breadth first as on the emulator (the empty fragment containers, the home list,
        the prompt's text and button, then the app bar's More options, which the tree holds after them)."""
        def container(rid: str) -> View:
            return View(cls="android.view.ViewGroup", resource_id=rid, height=1, overlay=True)

        home = View(cls="android.widget.ScrollView", resource_id="home_fragment_container", scrollable=True,
                    weight=1, dump_rank=1, children=[
                        View(cls="android.widget.LinearLayout", layout_only=True, padding=(16.0, 8.0), children=[
                            View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, height=56,
                                 dump_rank=1, children=[
                                     View(cls="android.widget.TextView", text="Messages", weight=1, height=48,
                                          size=22, padding=(8.0, 10.0), layout_only=True),
                                     View(cls="android.widget.ImageView", content_desc="More options",
                                          clickable=True, focusable=True, width=48, height=48, icon=":",
                                          on_click=lambda: self.toast(STAYS_DEFAULT))]),
                            View(cls="android.view.View", height=400, layout_only=True),
                            View(cls="android.widget.LinearLayout", children=[
                                View(cls="android.widget.TextView",
                                     text="To use Messages, make it your default SMS app",
                                     resource_id="set_as_default_sub_text", size=15, align="center",
                                     padding=(8.0, 8.0)),
                                View(cls="android.widget.LinearLayout", orientation=HORIZONTAL, layout_only=True,
                                     padding=(100.0, 8.0), children=[
                                         View(cls="android.widget.Button", text="Set default SMS app",
                                              resource_id="set_as_default_button", clickable=True, focusable=True,
                                              weight=1, height=48, background="#0b57d0", color="#ffffff",
                                              align="center", on_click=lambda: self.toast(STAYS_DEFAULT))])])])])
        return View(cls="android.widget.FrameLayout", resource_id="main_container", weight=1, children=[
            home,
            *(container(rid) for rid in ("conversation_placeholder_container", "conversation_fragment_container",
                                         "contact_picker_fragment_container", "group_name_edit_fragment_container")),
        ])
