"""`actionable_nodes`: the one definition of "an agent can act on it" that tests and the benchmark share."""

from __future__ import annotations

from android_gym.xml import actionable_nodes, parse_ui


def dump(*nodes: str, size: str = "[0,0][1000,2000]") -> str:
    return f'<hierarchy rotation="0"><node class="android.widget.FrameLayout" bounds="{size}">{"".join(nodes)}</node></hierarchy>'


def test_flags_and_editable_classes_count_labels_and_focus_do_not():
    tree = parse_ui(dump(
        '<node class="android.widget.Button" clickable="true" bounds="[0,0][100,100]"/>',
        '<node class="android.view.View" long-clickable="true" bounds="[0,100][100,200]"/>',
        '<node class="androidx.recyclerview.widget.RecyclerView" scrollable="true" bounds="[0,200][100,300]"/>',
        '<node class="android.widget.CheckBox" checkable="true" bounds="[0,300][100,400]"/>',
        '<node class="android.widget.EditText" bounds="[0,400][100,500]"/>',
        '<node class="com.app.CodeInput" editable="true" bounds="[0,500][100,600]"/>',
        '<node class="android.widget.TextView" text="Label" focusable="true" selected="true" bounds="[0,600][100,700]"/>',
        '<node class="android.widget.Switch" checked="true" bounds="[0,700][100,800]"/>',
    ))  # fmt: skip
    assert actionable_nodes(tree) == [1, 2, 3, 4, 5, 6]


def test_bounds_must_be_valid_and_meet_the_screen():
    tree = parse_ui(dump(
        '<node class="android.widget.Button" clickable="true" bounds="[10,10][10,90]"/>',  # zero width
        '<node class="android.widget.Button" clickable="true"/>',  # no bounds
        '<node class="android.widget.Button" clickable="true" bounds="[1000,0][1200,100]"/>',  # right of it
        '<node class="android.widget.Button" clickable="true" bounds="[-50,1950][50,2100]"/>',  # partly on it
        '<node class="android.widget.Button" clickable="true" bounds="[0,-300][100,0]"/>',  # above it
    ))  # fmt: skip
    assert actionable_nodes(tree) == [4]
    assert actionable_nodes(tree, screen_size=(2000, 2000)) == [3, 4], "an explicit screen size wins"


def test_without_a_screen_every_valid_node_counts():
    tree = parse_ui(
        '<hierarchy><node class="android.widget.FrameLayout">'
        '<node class="android.widget.Button" clickable="true" bounds="[5000,5000][5100,5100]"/>'
        '<node class="android.widget.Button" clickable="true"/></node></hierarchy>'
    )
    assert tree.screen_size is None, "the root has no bounds and the hierarchy no size"
    assert actionable_nodes(tree) == [1]
