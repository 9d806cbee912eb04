"""Second held-out set of real AndroidWorld episodes (``data/real_episodes_heldout2``, see its PROVENANCE.md).

Episodes of agents without a language model (an RND exploration agent tapping a grid of points) keep AndroidWorld's
``State.ui_elements`` and the ``JSONAction`` performed per step instead of T3A's ``before_element_list`` and the
model's reply; the replay reads both.
"""

from __future__ import annotations

import gzip
import hashlib
import pickle
from pathlib import Path

from android_gym.replay import load_real_episodes

DATA = Path(__file__).parent / "data"
HELDOUT2 = DATA / "real_episodes_heldout2"
OTHER_PARTS = [DATA / "real_episodes", DATA / "real_episodes_heldout"]


def test_episodes_with_state_ui_elements_and_json_actions_are_read(tmp_path):
    element = {"text": "Clock", "content_description": "Clock", "class_name": "android.widget.TextView",
               "resource_name": None, "is_clickable": True, "bbox_pixels": None}
    data = [{"goal": "Run the stopwatch.", "task_template": "ClockStopWatchRunning", "is_successful": float("nan"),
             "seed": 7, "episode_data": {
                 "ui_elements": [[element], [element, element]],
                 "android_action": [{"action_type": "click", "index": None, "x": 900, "y": 400, "text": None},
                                    {"action_type": "navigate_home", "direction": None}]}}]
    path = tmp_path / "ClockStopWatchRunning_0.pkl.gz"
    path.write_bytes(gzip.compress(pickle.dumps(data), mtime=0))
    (episode,) = load_real_episodes(path)
    assert (episode.task, episode.seed, episode.success) == ("ClockStopWatchRunning", 7, None)
    assert [len(s.elements) for s in episode.steps] == [1, 2]
    assert episode.steps[0].elements[0]["text"] == "Clock"
    assert [s.action for s in episode.steps] == [{"action_type": "click", "x": 900, "y": 400},
                                                  {"action_type": "navigate_home"}]
    assert all(s.action_error is None for s in episode.steps)


def test_the_heldout2_episodes_read_with_their_steps_and_actions():
    files = sorted(HELDOUT2.glob("*.pkl.gz"))
    assert [f.name.split("_0_")[0] for f in files] == [
        "BrowserMaze", "CameraTakePhoto", "ClockStopWatchRunning", "ContactsAddContact"]
    for path in files:
        (episode,) = load_real_episodes(path)
        assert episode.format == "android_world_pickle" and episode.meta["agent_name"] == "rnd_agent"
        assert episode.steps and all(s.elements and s.action for s in episode.steps), path.name
        assert episode.no_steps_reason is None and episode.success == 0.0


def test_the_heldout2_part_shares_no_file_with_the_other_parts():
    def digest(path: Path) -> str:
        return hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest()

    mine = {digest(p) for p in HELDOUT2.glob("*.gz")}
    others = {digest(p) for part in OTHER_PARTS for p in part.glob("*.gz")}
    assert mine and not mine & others
    assert sum(p.stat().st_size for p in HELDOUT2.iterdir()) < 1_500_000
