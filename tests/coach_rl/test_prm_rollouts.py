"""PRM rows from a run's own rollouts (coach_rl.prm_rollouts, `coach-rl prm-data`): labels from the outcome or the
sim expert, and exactly the prompt the run scores r_p with."""

from __future__ import annotations

import dataclasses
import json

import pytest

from android_gym.actions import Click, Finished
from android_gym.trajectory import Step, Trajectory
from coach_reward.prm import StepInput
from coach_reward.prm_data import load_prm_dataset, step_input_from_row
from coach_reward.prm_training import prm_prompt_builder
from coach_rl.cli import main
from coach_rl.prm_rollouts import rollout_prm_rows
from coach_rl.replay import ReplayBuffer
from coach_rl.rewards import score_trajectory

from .stored import turns_for


def episode(k: int, success: float, *, unparsed_at: int | None = None) -> Trajectory:
    steps = []
    for i in range(2):
        if i == unparsed_at:
            steps.append(Step(ui=f"[n{i}] Button ;click ; Item {k}.{i} ;;", action=None, response="tap it please",
                              parse_error="no action found"))
        else:
            steps.append(Step(ui=f"[n{i}] Button ;click ; Item {k}.{i} ;;", action=Click(10 + i, 20 + k),
                              response=f'{{"action_type": "click", "index": {i}}}'))
    steps.append(Step(ui="done screen", action=Finished(), response='{"action_type": "status", "goal_status": "complete"}'))
    return Trajectory(task="SystemWifiTurnOff", instruction=f"Turn Wi-Fi off ({k})", steps=steps, success=success, seed=k)


def store(buf: ReplayBuffer, traj: Trajectory, expert_match: list[float] | None) -> None:
    records = score_trajectory(traj, turns_for(traj), [0.0] * len(traj.steps), traj.success, "pending")
    if expert_match is not None:
        records = [dataclasses.replace(r, expert_match=m) for r, m in zip(records, expert_match)]
    buf.add(traj, records)


@pytest.fixture
def run(tmp_path):
    folder = tmp_path / "run"
    buf = ReplayBuffer(folder / "replay", capacity=100)
    store(buf, episode(1, 1.0), [1.0, 0.0, 1.0])
    store(buf, episode(2, 0.0, unparsed_at=1), [1.0, 0.0, 0.0])
    return folder


def test_outcome_labels_follow_the_episode_and_an_unparsed_reply_is_wrong(run):
    rows = rollout_prm_rows([run])
    by_episode: dict[str, list[dict]] = {}
    for row in rows:
        by_episode.setdefault(row["instruction"], []).append(row)
    assert [r["label"] for r in by_episode["Turn Wi-Fi off (1)"]] == [True, True, True]
    assert [r["label"] for r in by_episode["Turn Wi-Fi off (2)"]] == [False, False, False]
    unparsed = by_episode["Turn Wi-Fi off (2)"][1]
    assert unparsed["action_type"] == "invalid" and unparsed["match_reason"] == "outcome: the reply did not parse"
    assert unparsed["action_text"] == "tap it please" and unparsed["parse_error"] == "no action found"
    assert by_episode["Turn Wi-Fi off (2)"][0]["match_reason"] == "outcome: the episode failed"
    assert [r["step_index"] for r in by_episode["Turn Wi-Fi off (1)"]] == [0, 1, 2]
    assert json.loads(by_episode["Turn Wi-Fi off (1)"][0]["action_json"]) == {"type": "click", "x": 10, "y": 21}


def test_oracle_labels_are_the_expert_match_and_steps_without_one_are_refused(run, tmp_path):
    rows = rollout_prm_rows([run / "replay"], labels="oracle")
    assert [r["label"] for r in rows] == [True, False, True, True, False, False]
    bare = tmp_path / "bare"
    store(ReplayBuffer(bare), episode(3, 1.0), None)
    with pytest.raises(ValueError, match="has no expert_match"):
        rollout_prm_rows([bare], labels="oracle")
    with pytest.raises(ValueError, match="labels must be one of"):
        rollout_prm_rows([run], labels="vibes")  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError, match="replay"):
        rollout_prm_rows([tmp_path / "nowhere"])


def test_each_row_gives_the_prm_the_prompt_the_run_scores_rp_with(run):
    """The run builds r_p's input from the trajectory (coach_rl.rewards): the Action objects of this and earlier
    steps, or the raw reply where none parsed. A row read back must give the PRM the very same messages."""
    build = prm_prompt_builder("compact", max_ui_chars=150)
    rows = rollout_prm_rows([run])
    buf = ReplayBuffer(run / "replay", capacity=100)
    runtime = []
    for trajectory_id in buf.trajectory_ids():
        traj = buf.load_trajectory(trajectory_id)
        for t, step in enumerate(traj.steps):
            earlier = [s.action if s.action is not None else s.response for s in traj.steps[:t]]
            runtime.append(StepInput(instruction=traj.instruction, ui=step.ui, history=earlier,
                                     action=step.action if step.action is not None else step.response))
    assert len(runtime) == len(rows) == 6
    for expected, row in zip(runtime, rows):
        assert build(step_input_from_row(row, screenshot=False)) == build(expected)


def test_reading_a_run_leaves_its_buffer_whole_and_the_cli_writes_a_prm_dataset(run, tmp_path, capsys):
    before = sorted(p.name for p in (run / "replay").iterdir())
    out = tmp_path / "prm-data"
    assert main(["prm-data", str(run), "--output", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rows"] == 6 and report["correct"] == 3 and report["episodes"] == 2
    assert sorted(p.name for p in (run / "replay").iterdir()) == before
    data = load_prm_dataset(out)
    assert len(data) == 6 and sum(data["label"]) == 3 and set(data["source"]) == {f"rollout:{run.as_posix()}"}
    with pytest.raises(SystemExit, match="no run folder"):
        main(["prm-data", str(tmp_path / "missing"), "--output", str(out)])
