"""DAPR's buffer and negative pruning, FCF's task weights: hand-worked cases, resume, bad input."""

from __future__ import annotations

import math

import pytest

from coach_rl.curriculum import FailureCurriculum
from coach_rl.positive_replay import PositiveReplay, ReplayTrajectory, prune_negatives
from coach_rl.records import StepRecord


def _traj(eid: str, adv: float, group: str = "Clock:1", n: int = 1) -> ReplayTrajectory:
    steps = [StepRecord(episode_id=eid, step_index=i, num_steps=n, task=group.split(":")[0], group=group,
                        prompt=[{"role": "user", "content": "p"}], prompt_text=f"p{i}", response=f"r{i}",
                        outcome_reward=1.0) for i in range(n)]
    return ReplayTrajectory(eid, group, group.split(":")[0], adv, steps, behaviour_logps=[[-0.5]] * n)


def test_top_kappa_positive_trajectories_enter_and_the_best_leave_first():
    replay = PositiveReplay(capacity=3, top_fraction=0.25, mix=0.5)
    batch = [_traj(f"e{i}", a) for i, a in enumerate([1.2, -0.3, 0.8, 0.4, -1.0, 0.1, 0.0, 0.9])]
    # ceil(0.25 * 8) = 2: the two highest advantages, 1.2 (e0) and 0.9 (e7)
    assert replay.add_iteration(batch) == ["e0", "e7"]
    # a group of 3 with one positive: ceil(0.75) = 1 -> only the positive; negatives never enter
    assert replay.add_iteration([_traj("n0", -1.0), _traj("n1", -0.5), _traj("p0", 0.3)]) == ["p0"]
    # a fourth entry overflows capacity 3: the lowest advantage (p0, 0.3) leaves, not the newcomer 0.5
    assert replay.add_iteration([_traj("q0", 0.5), _traj("q1", -0.5), _traj("q2", -0.5), _traj("q3", -0.5)]) == ["q0"]
    assert [t.episode_id for t in replay.items] == ["e0", "e7", "q0"]
    replay.set_advantage("q0", 2.0)  # re-scored against a newer group: now the best
    # gamma * M = 0.5 * 5 -> at most 2 drawn, highest current advantage first; drawn ones leave the buffer
    assert [t.episode_id for t in replay.draw(5)] == ["q0", "e0"]
    assert [t.episode_id for t in replay.items] == ["e7"]
    assert replay.draw(1) == []  # floor(0.5 * 1) = 0
    with pytest.raises(ValueError, match="behaviour_logps"):
        replay.add_iteration([ReplayTrajectory("x", "g", "t", 1.0, [])])
    with pytest.raises(ValueError, match="top_fraction"):
        PositiveReplay(top_fraction=0.0)


def test_replay_state_round_trips_exactly():
    replay = PositiveReplay(capacity=4)
    replay.add_iteration([_traj("a", 1.0, n=2), _traj("b", -1.0)])
    other = PositiveReplay(capacity=4)
    other.load_state_dict(replay.state_dict())
    assert other.items == replay.items and other.items[0].steps[1].prompt_text == "p1"
    assert other.add_iteration([_traj("c", 0.5), _traj("d", -0.5), _traj("e", -0.5), _traj("f", -0.5)]) == ["c"]
    assert other.items[1].inserted == 2  # the counter resumed
    with pytest.raises(ValueError, match="capacity"):
        PositiveReplay(capacity=5).load_state_dict(replay.state_dict())


def test_negatives_pruned_to_two_per_positive_most_off_policy_first():
    adv = [1.0, -0.5, -0.2, -0.9, -0.1, 0.0, -0.4]
    kls = [0.0, 0.3, 0.1, 0.3, 0.05, 9.0, 0.2]
    # 1 positive -> at most 2 negatives out of 5: drop 3, by KL descending: idx 3 (0.3, A -0.9) before idx 1
    # (0.3, A -0.5) on the lower advantage, then idx 6 (0.2); the zero-advantage idx 5 stays
    assert prune_negatives(adv, kls) == [0, 2, 4, 5]
    assert prune_negatives(adv, kls, max_ratio=5) == list(range(7))
    assert prune_negatives([-1.0, -2.0], [0.0, 0.0]) == []  # no positive: no negative survives
    with pytest.raises(ValueError, match="one entry per trajectory"):
        prune_negatives([1.0], [])


def test_failure_curriculum_by_hand():
    fcf = FailureCurriculum()  # patience 2, cooldown 3, removal at f = 3
    tasks = ["Cold", "Gone", "Back"]
    # epoch 1: all three fail
    for t in tasks:
        fcf.observe(t, [0.0, 0.0])
    fcf.end_epoch()
    assert fcf.weights(tasks) == {"Cold": 1.0, "Gone": 1.0, "Back": 1.0}  # f = 1: no cooldown yet
    # epoch 2: all fail again -> f = 2, cooldown with weight exp(-2)
    for t in tasks:
        fcf.observe(t, [0.0])
    fcf.end_epoch()
    assert fcf.weights(tasks) == pytest.approx({t: math.exp(-2) for t in tasks})
    # epoch 3: Gone fails a third time (removed), Back succeeds once (reset), Cold not played (cooldown 3 -> 2)
    fcf.observe("Gone", [0.0])
    fcf.observe("Back", [0.0, 1.0])
    summary = fcf.end_epoch()
    assert summary == {"fcf/cooling": 1.0, "fcf/removed": 1.0, "fcf/observed": 2.0}
    assert fcf.weights(tasks) == pytest.approx({"Cold": math.exp(-2), "Gone": 0.0, "Back": 1.0})
    fcf.end_epoch()  # epoch 4: cooldown 1 left
    assert fcf.weight("Cold") == pytest.approx(math.exp(-2))
    # resume mid-history: a fresh curriculum loading the state continues identically
    resumed = FailureCurriculum()
    resumed.load_state_dict(fcf.state_dict())
    for c in (fcf, resumed):
        c.end_epoch()  # epoch 5: cooldown over, f stays 2
    assert resumed.weights(tasks) == fcf.weights(tasks) == {"Cold": 1.0, "Gone": 0.0, "Back": 1.0}
    resumed.observe("Cold", [0.0])
    resumed.end_epoch()  # the history was kept: one more failure makes f = 3 -> removed
    assert resumed.weight("Cold") == 0.0 and resumed.weight("NeverSeen") == 1.0
    with pytest.raises(ValueError, match="NaN"):
        fcf.observe("Cold", [float("nan")])
    with pytest.raises(ValueError, match="patience"):
        FailureCurriculum(patience=4, remove_after=3)
