"""``android-gym view``: episodes recorded by the env and by coach-rl, looked at in a real headless browser.

The pages are opened in Debian's chromium (driven by Playwright; the ``browser`` fixture in conftest.py) from a
file and from the real HTTP server ``--serve`` starts on 127.0.0.1; the tests skip, saying why, where chromium
or Playwright is missing (``.ci/run`` installs chromium, ``tools/requirements-dev.txt`` Playwright).
"""

from __future__ import annotations

import gzip
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from android_gym.actions import Click, Finished
from android_gym.cli import main
from android_gym.trajectory import Step, Trajectory
from android_gym.viewer import episode_from_trajectory, load_episodes, render_html

from .browser import images_loaded, open_page


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """A real episode the env recorded: the expert turning wifi off, written by ``android-gym play --record``."""
    path = tmp_path_factory.mktemp("play") / "wifi.json.gz"
    assert main(["play", "SystemWifiTurnOff", "--seed", "3", "--record", str(path)]) == 0
    return path


def _counter(page) -> str:
    return page.inner_text("#counter")


def test_trajectory_save_load_round_trip(tmp_path):
    shot = np.zeros((40, 20, 3), dtype=np.uint8)
    shot[5:10, 5:10] = (255, 0, 0)
    traj = Trajectory(task="T", instruction="do it", seed=4, success=1.0, answer="yes",
                      steps=[Step(ui="[n1] Button", action=Click(3, 4), response="Action: click", reward=0.5,
                                  screenshot=shot, xml="<hierarchy/>", info={"activity": "a/.b", "n": np.int64(3)}),
                             Step(ui="end", action=Finished("yes"))],
                      info={"final_screenshot": shot, "window": (20, 40)})
    for name in ("t.json", "t.json.gz"):
        path = traj.save(tmp_path / name)
        back = Trajectory.load(path)
        assert [s.to_dict() for s in back.steps] == [{**s.to_dict(), "info": dict(s.info, n=3)} if i == 0
                                                     else s.to_dict() for i, s in enumerate(traj.steps)]
        assert (back.task, back.instruction, back.seed, back.success, back.answer) == ("T", "do it", 4, 1.0, "yes")
        assert back.info["window"] == [20, 40]
        assert np.array_equal(back.steps[0].screenshot, shot) and back.steps[1].screenshot is None
        assert np.array_equal(back.info["final_screenshot"], shot)
    assert (tmp_path / "t.json.gz").read_bytes()[:2] == b"\x1f\x8b"


def test_load_errors_name_the_file_and_the_field(tmp_path):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"format": "something-else", "steps": []}))
    with pytest.raises(ValueError, match=r"other\.json: field 'format' is 'something-else'"):
        Trajectory.load(other)
    missing = tmp_path / "missing.json.gz"
    missing.write_bytes(gzip.compress(json.dumps({"format": "android_gym.trajectory", "version": 1,
                                                  "task": "T", "steps": []}).encode()))
    with pytest.raises(ValueError, match=r"missing\.json\.gz: field 'instruction' is missing"):
        Trajectory.load(missing)
    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    with pytest.raises(ValueError, match=r"notes\.txt: not an episode file"):
        load_episodes(notes)


def test_cli_view_refuses_other_files_with_the_reason(tmp_path, capsys):
    other = tmp_path / "log.json"
    other.write_text("[1, 2]")
    assert main(["view", str(other)]) == 2
    assert re.search(r"log\.json: field 'format' is 'list'", capsys.readouterr().err)


def test_view_of_an_env_recording_in_chromium(recorded, browser, tmp_path):
    out = tmp_path / "page.html"
    assert main(["view", str(recorded), "-o", str(out)]) == 0
    traj = Trajectory.load(recorded)
    n = len(traj.steps) + 1  # the steps, then the final screen
    page, errors = open_page(browser, out.as_uri())
    assert page.inner_text("#goal") == traj.instruction == "Turn wifi off."
    assert _counter(page) == f"step 1 / {n}"
    assert page.is_disabled("#prev") and not page.is_disabled("#next")
    widths = images_loaded(page)
    assert widths and all(w > 0 for w in widths)
    # every step: the parsed action and the UI the model read; clicks have their element boxed on the screenshot
    boxed = 0
    for i, step in enumerate(traj.steps):
        assert _counter(page) == f"step {i + 1} / {n}"
        assert json.loads(page.inner_text("pre.action")) == step.action.to_dict()
        assert page.inner_text("pre.ui") == step.ui
        assert all(w > 0 for w in images_loaded(page))
        if isinstance(step.action, Click):
            rect = page.locator("svg rect.target")
            box = rect.bounding_box()
            img = page.locator("img.shot").bounding_box()
            assert box is not None and box["width"] > 5 and box["height"] > 5
            # the box sits where the tap was, scaled from screen pixels to the image on the page
            width, height = traj.info["window"]
            cx = img["x"] + step.action.x * img["width"] / width
            cy = img["y"] + step.action.y * img["height"] / height
            assert box["x"] <= cx <= box["x"] + box["width"] and box["y"] <= cy <= box["y"] + box["height"]
            boxed += 1
        page.keyboard.press("ArrowRight")
    assert boxed >= 1
    assert "(end)" in _counter(page) and page.is_disabled("#next")
    page.keyboard.press("ArrowLeft")
    assert _counter(page) == f"step {n - 1} / {n}"
    page.click("#prev")
    assert _counter(page) == f"step {n - 2} / {n}"
    page.click("#next")
    assert _counter(page) == f"step {n - 1} / {n}"
    assert page.locator("td[data-name=reward]").inner_text() == "1.000"  # the finishing step's reward
    assert errors == []
    page.close()


def test_serve_answers_on_localhost_and_the_page_works(recorded, browser):
    proc = subprocess.Popen([sys.executable, "-m", "android_gym.cli", "view", str(recorded), "--serve"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:(\d+)/)", line)
        assert match, (line, proc.stderr.read() if proc.poll() is not None else "")
        assert int(match.group(2)) > 0
        page, errors = open_page(browser, match.group(1))
        assert _counter(page).startswith("step 1 / ")
        assert all(w > 0 for w in images_loaded(page))
        page.click("#next")
        assert _counter(page).startswith("step 2 / ")
        assert errors == []
        page.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _coach_run(tmp_path: Path, recorded: Path) -> tuple[Path, Trajectory]:
    """A coach-rl run folder: one replay-buffer episode with its records, one saved evaluation episode."""
    pytest.importorskip("coach_rl", reason="coach-rl not installed: no replay buffers to read")
    from coach_rl.records import StepRecord
    from coach_rl.replay import ReplayBuffer

    traj = Trajectory.load(recorded)
    n = len(traj.steps)
    records = [StepRecord(episode_id="", step_index=i, num_steps=n, task=traj.task, group=f"{traj.task}:{traj.seed}",
                          prompt=[], prompt_text=step.ui, response=step.response or "Action: ...",
                          process_reward=float("nan") if i == 1 else 0.25 * i, outcome_reward=1.0,
                          return_t=1.0 + i / 10, success=1.0, env_reward=step.reward, instruction=traj.instruction,
                          ui=step.ui, action=json.dumps(step.action.to_dict()))
               for i, step in enumerate(traj.steps)]
    run = tmp_path / "run"
    ReplayBuffer(run / "replay", capacity=1000).add(traj, records)
    traj.save(run / "episodes" / "eval_after" / "000-SystemWifiTurnOff-3.json.gz")
    return run, traj


def test_view_of_a_coach_rl_run_reads_replay_and_evaluation_episodes(recorded, browser, tmp_path):
    run, traj = _coach_run(tmp_path, recorded)
    leftover = run / "replay" / ".tmp-0123456789ab-99"  # what a writer in the middle of a save has on disk
    leftover.write_bytes(b"partial")
    episodes = load_episodes(run)
    assert leftover.exists()  # the viewer never opens the run's own buffer folder (opening one tidies it)
    assert [e.title.split(":")[0] for e in episodes] == ["eval_after", episodes[1].title.split(":")[0]]
    assert episodes[1].title.startswith("replay ")
    values = [s.values for s in episodes[1].steps]
    assert values[0]["r_p"] == 0.0 and values[1]["r_p"] is None and values[2]["r_p"] == 0.5  # NaN r_p: missing
    assert [v["R_t"] for v in values] == pytest.approx([1.0 + i / 10 for i in range(len(traj.steps))])
    assert {v["r_o"] for v in values} == {1.0}

    assert main(["view", str(run)]) == 0
    page, errors = open_page(browser, (run / "episodes.html").as_uri())
    assert page.locator("#episode option").count() == 2
    assert all(w > 0 for w in images_loaded(page))
    page.keyboard.press("PageDown")  # to the replay episode
    assert page.locator("#episode").input_value() == "1"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert _counter(page).startswith("step 3 / ")
    cells = {name: page.locator(f"td[data-name='{name}']").inner_text() for name in ("r_p", "r_o", "R_t")}
    assert cells == {"r_p": "0.500", "r_o": "1.000", "R_t": "1.200"}
    page.keyboard.press("ArrowLeft")
    assert page.locator("td[data-name='r_p']").inner_text() == "\u2013"  # missing r_p shows as a dash
    assert errors == []
    page.close()


def test_critic_q_and_twins_are_shown_where_the_data_has_them(browser, tmp_path):
    shot = np.full((200, 100, 3), 200, dtype=np.uint8)
    traj = Trajectory(task="T", instruction="goal <script>alert(1)</script>", steps=[
        Step(ui="[a] Button", action=Click(50, 50), screenshot=shot, info={"critic_q": 0.75})])
    episode = episode_from_trajectory(traj)
    twin = episode_from_trajectory(traj).steps[0]
    twin.notes = ["sim twin"]
    episode.steps[0].twin = twin
    episode.labels = ("real", "sim")
    assert episode.steps[0].values["Q"] == 0.75 and not math.isnan(episode.steps[0].values["Q"])
    out = tmp_path / "twin.html"
    out.write_text(render_html([episode]), encoding="utf-8")
    page, errors = open_page(browser, out.as_uri())
    assert page.inner_text("#goal") == traj.instruction  # shown as text, never run
    assert page.locator("img.shot").count() == 2 and all(w > 0 for w in images_loaded(page))
    assert [h.inner_text() for h in page.locator(".pane h3").all()] == ["real", "sim"]
    assert page.locator("td[data-name=Q]").first.inner_text() == "0.750"
    assert page.locator("svg circle.touch").count() == 2
    assert errors == []
    page.close()


def test_run_report_links_the_evaluation_episodes_page(recorded, browser, tmp_path):
    run, traj = _coach_run(tmp_path, recorded)
    from coach_rl.evaluation import evaluate_trajectories
    from coach_rl.report import write_report

    (run / "eval_after.json").write_text(evaluate_trajectories([traj]).to_json())
    report = write_report(run).read_text()
    assert "[eval_after.html](episodes/eval_after.html)" in report
    page, errors = open_page(browser, (run / "episodes" / "eval_after.html").as_uri())
    assert page.inner_text("#goal") == traj.instruction and _counter(page).startswith("step 1 / ")
    assert all(w > 0 for w in images_loaded(page))
    assert errors == []
    page.close()


def test_android_gym_reads_replay_buffers_without_coach_rl(recorded, tmp_path):
    """The viewer reads a run's replay shards with android-gym's own reader: coach-rl blocked, same episodes."""
    run, traj = _coach_run(tmp_path, recorded)
    script = f"""
import json, math, sys
sys.modules["coach_rl"] = None  # as if coach-rl were not installed
sys.modules["coach_reward"] = None
from android_gym.viewer import load_episodes
assert len(load_episodes({str(run / "episodes" / "eval_after")!r})) == 1
(episode,) = load_episodes({str(run / "replay")!r})
print(json.dumps({{"title": episode.title, "r_p": [s.values.get("r_p") for s in episode.steps],
                  "R_t": [s.values.get("R_t") for s in episode.steps], "actions": [s.action for s in episode.steps],
                  "images": sum(s.image is not None for s in episode.steps)}}))
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    assert seen["title"].startswith("replay ") and seen["title"].endswith(traj.task)
    assert seen["r_p"][0] == 0.0 and seen["r_p"][1] is None and seen["r_p"][2] == 0.5
    assert seen["R_t"] == pytest.approx([1.0 + i / 10 for i in range(len(traj.steps))])
    assert seen["actions"] == [json.dumps(s.action.to_dict()) for s in traj.steps]
    assert seen["images"] == len(traj.steps)


def test_replay_shard_reader_agrees_with_coach_rl_replay_buffer(recorded, tmp_path):
    """android_gym.replay_shards reads back what coach-rl's own ReplayBuffer reads from the same shard."""
    from android_gym.replay_shards import read_shard, shard_files
    from coach_rl.replay import ReplayBuffer

    run, _ = _coach_run(tmp_path, recorded)
    (shard,) = shard_files(run / "replay")
    ours, records = read_shard(shard)
    buffer = ReplayBuffer(run / "replay", capacity=1000)
    (trajectory_id,) = buffer.trajectory_ids()
    theirs = buffer.load_trajectory(trajectory_id)
    assert (ours.task, ours.instruction, ours.success, ours.seed, ours.answer, ours.truncated) == (
        theirs.task, theirs.instruction, theirs.success, theirs.seed, theirs.answer, theirs.truncated)
    assert len(ours.steps) == len(theirs.steps) > 1
    for a, b in zip(ours.steps, theirs.steps):
        assert (a.ui, a.action, a.response, a.reward, a.xml, a.parse_error, a.info) == (
            b.ui, b.action, b.response, b.reward, b.xml, b.parse_error, b.info)
        assert np.array_equal(a.screenshot, b.screenshot)
    for mine, record in zip(records, buffer.load_records(trajectory_id)):
        for key in ("process_reward", "outcome_reward", "return_t"):
            want = getattr(record, key)
            assert (math.isnan(mine[key]) and math.isnan(want)) or mine[key] == want


def test_replay_shard_reader_names_a_file_that_is_not_a_shard(tmp_path):
    from android_gym.replay_shards import read_shard

    bad = tmp_path / "0000000000-0123456789ab.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(ValueError, match="0000000000-0123456789ab.parquet: not a readable Parquet file"):
        read_shard(bad)
    with pytest.raises(ValueError, match="not a readable Parquet file"):
        load_episodes(tmp_path)
