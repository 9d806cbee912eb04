"""Evaluation metrics against hand-computed numbers: Wilson CIs, SR/Sub-SR/RRR/ROR/steps, per task and overall."""

from __future__ import annotations

import math

import numpy as np
import pytest

from android_gym.actions import Click, Finished, OpenApp, PressBack, Wait
from android_gym.trajectory import Step, Trajectory
from coach_rl.evaluation import (
    EvalReport,
    evaluate_trajectories,
    expert_reference_steps,
    reasonable_operation_ratio,
    screens_identical,
    wilson_interval,
)


def _traj(task: str, uis: list[str], actions: list, success: float, seed: int = 0, **info) -> Trajectory:
    steps = [Step(ui=u, action=a) for u, a in zip(uis, actions)]
    return Trajectory(task=task, instruction="do it", steps=steps, success=success, seed=seed, info=info)


def test_wilson_matches_hand_values():
    # 8/10 at 95%: p=0.8, z^2=3.8415; centre=(0.8+0.19207)/1.38415, half=1.96*sqrt(0.016+0.0096037)/1.38415
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4)
    assert high == pytest.approx(0.9433, abs=1e-4)
    # 0/n and n/n stay inside [0, 1] and are not degenerate
    low0, high0 = wilson_interval(0, 20)
    assert low0 == 0.0 and high0 == pytest.approx(3.8415 / (20 + 3.8415), abs=1e-4)
    low1, high1 = wilson_interval(20, 20)
    assert high1 == 1.0 and low1 == pytest.approx(1 - high0, abs=1e-12)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    # symmetric in successes <-> failures
    a, b = wilson_interval(3, 17)
    c, d = wilson_interval(14, 17)
    assert a == pytest.approx(1 - d) and b == pytest.approx(1 - c)


@pytest.mark.parametrize("args", [(11, 10), (-1, 10), (1, -1), (float("nan"), 3), (True, 3)])
def test_wilson_rejects_bad_counts(args):
    with pytest.raises(ValueError):
        wilson_interval(*args)


def test_ror_counts_unchanged_operations_only():
    # ops: open_app (a->b changed), click (b->b unchanged), back (b->c changed); wait and finished are not ops
    t = _traj("T", ["a", "b", "b", "c", "c"], [OpenApp("Clock"), Click(1, 2), PressBack(), Wait(), Finished()], 1.0)
    assert reasonable_operation_ratio(t) == pytest.approx(2 / 3)
    # an unparsed reply counts as an unreasonable operation
    t.steps.insert(0, Step(ui="a", action=None, parse_error="bad"))
    assert reasonable_operation_ratio(t) == pytest.approx(2 / 4)
    # a last operation without a following screen is not judged, unless final_ui is given
    t2 = _traj("T", ["a", "b"], [OpenApp("Clock"), Click(3, 3)], 0.0)
    assert reasonable_operation_ratio(t2) == 1.0
    t2.info["final_ui"] = "b"
    assert reasonable_operation_ratio(t2) == pytest.approx(0.5)
    assert reasonable_operation_ratio(_traj("T", ["a"], [Finished()], 1.0)) is None


def test_screens_identical_uses_pixels_at_999_per_mille():
    a = np.zeros((100, 100, 3), np.uint8)
    b = a.copy()
    b[0, :5] = 255  # 5 of 10000 pixels differ: 99.95% equal -> same screen
    assert screens_identical(Step(ui="x", action=None, screenshot=a), Step(ui="y", action=None, screenshot=b))
    b[1, :20] = 255  # 25 differ: 99.75% -> different
    assert not screens_identical(Step(ui="x", action=None, screenshot=a), Step(ui="x", action=None, screenshot=b))
    assert screens_identical(Step(ui="x", action=None), Step(ui="x", action=None))


def test_report_per_task_and_overall_hand_numbers():
    trajs = [
        # Wifi: 2 of 3 solved; lengths 4, 5, 10; reference 4 -> RRR over successes = mean(4/4, 4/5) = 0.9
        _traj("Wifi", ["a", "b", "c", "d"], [OpenApp("Settings"), Click(1, 1), Click(2, 2), Finished()], 1.0, seed=1),
        _traj("Wifi", ["a", "b", "b", "c", "d"], [OpenApp("Settings"), Click(0, 0), Click(1, 1), Click(2, 2),
                                                  Finished()], 1.0, seed=2),
        _traj("Wifi", ["a"] * 10, [Click(5, 5)] * 10, 0.0, seed=3),
        # Alarm: 1 of 2, partial credit 0.5 on the failure, declared sub-goals on the success
        _traj("Alarm", ["a", "b", "c"], [OpenApp("Clock"), Click(1, 1), Finished()], 1.0, seed=1,
              subgoals=[True, True]),
        _traj("Alarm", ["a", "b", "c"], [OpenApp("Clock"), Click(1, 1), Finished()], 0.5, seed=2,
              subgoals=[True, False, False, False]),
    ]
    report = evaluate_trajectories(trajs, reference_steps={"Wifi": 4, ("Alarm", 1): 3})
    wifi, alarm, overall = report.per_task["Wifi"], report.per_task["Alarm"], report.overall
    assert (wifi.episodes, wifi.successes) == (3, 2)
    assert wifi.success_rate == pytest.approx(2 / 3)
    assert (wifi.ci_low, wifi.ci_high) == pytest.approx(wilson_interval(2, 3), abs=1e-5)  # z 1.95996 vs 1.96
    assert wifi.rrr == pytest.approx(0.9)
    assert wifi.average_steps == pytest.approx(19 / 3)
    assert wifi.sub_success_rate == pytest.approx(2 / 3)
    # ROR per episode: 1.0 (3 ops changed), 2/3 (one unchanged of 3 judged: a->b, b->b, b->c... click(2,2): c->d)
    # episode 2: ops open(a->b) click(b->b) click(b->c) click(c->d) -> 3/4; episode 3: 9 judged, all unchanged -> 0
    assert wifi.ror == pytest.approx(np.mean([1.0, 3 / 4, 0.0]))
    assert alarm.successes == 1 and alarm.rrr == pytest.approx(1.0)
    assert alarm.sub_success_rate == pytest.approx((1.0 + 0.25) / 2)
    assert overall.episodes == 5 and overall.successes == 3
    assert overall.success_rate == pytest.approx(0.6)
    assert overall.rrr == pytest.approx(np.mean([1.0, 0.8, 1.0]))
    assert report.macro_success_rate == pytest.approx((2 / 3 + 1 / 2) / 2)
    # JSON round trip and the markdown table
    again = EvalReport.from_dict(__import__("json").loads(report.to_json()))
    assert again.per_task["Wifi"] == wifi and again.overall == overall
    table = report.markdown()
    assert "| Wifi | 3 | 66.7 (" in table and "**overall**" in table


def test_success_threshold_and_bad_input():
    trajs = [_traj("T", ["a"], [Finished()], 0.8), _traj("T", ["a"], [Finished()], 1.0)]
    assert evaluate_trajectories(trajs).overall.successes == 1
    assert evaluate_trajectories(trajs, success_threshold=0.75).overall.successes == 2
    with pytest.raises(ValueError, match="no trajectories"):
        evaluate_trajectories([])
    with pytest.raises(TypeError, match="not an android_gym Trajectory"):
        evaluate_trajectories([{"task": "T"}])
    with pytest.raises(ValueError, match="reference_steps"):
        evaluate_trajectories(trajs, reference_steps={"T": 0})
    with pytest.raises(ValueError, match="subgoals"):
        evaluate_trajectories([_traj("T", ["a"], [Finished()], 1.0, subgoals=[2.0])])
    report = evaluate_trajectories(trajs, confidence=0.5)
    assert report.overall.ci_high - report.overall.ci_low < evaluate_trajectories(trajs).overall.ci_high - \
        evaluate_trajectories(trajs).overall.ci_low
    assert not math.isnan(report.overall.average_steps)


def test_expert_reference_steps_on_the_sim():
    refs = expert_reference_steps(["SystemWifiTurnOff", "OpenAppTaskEval"], [0, 1])
    assert refs[("SystemWifiTurnOff", 0)] == 5 and refs[("SystemWifiTurnOff", 1)] == 5
    assert refs[("OpenAppTaskEval", 0)] == 2
