"""Best-of-N selection: order of preference, deterministic ties, verifier failures, on real verifiers."""

from __future__ import annotations

import pytest

from android_gym.actions import Click, Finished
from android_gym.trajectory import Step, Trajectory
from coach_reward.probing import ProbingVerifier
from coach_reward.selection import CandidateScore, score_candidates, select_best
from coach_reward.tiny_models import scripted_backend
from coach_reward.verifiers import LLMJudgeVerifier, RuleVerifier, Verdict

YES = "<analysis>Wi-Fi shows on.</analysis> <ans>yes</ans>"
GARBLED = "<analysis>I cannot tell whether"


def attempt(success: float, clicks: int) -> Trajectory:
    steps = [Step(ui="[1] Switch 'Wi-Fi' off", action=Click(960, 340)) for _ in range(clicks)]
    return Trajectory(task="SystemWifiTurnOn", instruction="Turn on Wi-Fi", success=success,
                      steps=steps + [Step(ui="[1] Switch 'Wi-Fi' on", action=Finished())])


def test_rule_scores_pick_the_shortest_success_then_the_first():
    candidates = [attempt(0.0, 0), attempt(1.0, 3), attempt(1.0, 1), attempt(1.0, 1)]
    choice = select_best(candidates, RuleVerifier(use_recorded=True))
    assert choice.index == 2 and "tied with 2" in choice.reason
    assert [s.score for s in choice.scores] == [0.0, 1.0, 1.0, 1.0]
    assert choice.chosen.verdict.success


def test_a_failing_verifier_is_recorded_and_never_wins(tiny_lm):
    candidates = [attempt(1.0, 1), attempt(0.0, 2)]
    # ProbingVerifier needs each episode's device: without one it raises for every candidate
    probing = ProbingVerifier(scripted_backend(*tiny_lm, YES))
    scores = score_candidates(candidates, probing)
    assert all(s.verdict is None and "needs the device" in s.error for s in scores)
    choice = select_best(candidates, scores=scores)
    assert choice.index == 0 and "failed on every candidate" in choice.reason
    # one candidate without verdict, one with a low score: the verdict wins
    mixed = [scores[0], CandidateScore(Verdict(0.1, False, "unlikely"))]
    assert select_best(candidates, scores=mixed).index == 1
    assert scores[0].to_dict()["error"].startswith("VerificationError")


def test_judge_verdicts_and_abstentions(tiny_lm):
    candidates = [attempt(0.0, 2), attempt(1.0, 1)]
    judge = LLMJudgeVerifier(scripted_backend(*tiny_lm, YES), use_logprobs=False, max_new_tokens=24)
    choice = select_best(candidates, judge)
    assert [s.score for s in choice.scores] == [1.0, 1.0] and choice.index == 1  # a tie: the shorter one
    abstaining = LLMJudgeVerifier(scripted_backend(*tiny_lm, GARBLED), use_logprobs=False, max_new_tokens=24)
    abstained = score_candidates(candidates[:1], abstaining)[0]
    assert abstained.abstained and abstained.score == 0.5
    # a decided "no" (0.0) still loses to nothing else, but an abstention loses to a decided verdict of equal score
    decided = CandidateScore(Verdict(0.5, False, "even odds", {"source": "logprobs"}))
    assert select_best([candidates[0], candidates[0]], scores=[abstained, decided]).index == 1
    # every attempt undecided: the first is kept, not the shortest (a judge that cannot tell, such as a 135M model
    # that never answers yes/no, must not turn best-of-N into "pick whichever gave up soonest")
    undecided = select_best(candidates, scores=[abstained, abstained])
    assert undecided.index == 0 and "kept the first" in undecided.reason


def test_bad_calls_are_refused():
    with pytest.raises(ValueError, match="no candidates"):
        select_best([], RuleVerifier(use_recorded=True))
    with pytest.raises(ValueError, match="either a verifier or"):
        select_best([attempt(1.0, 0)])
    with pytest.raises(ValueError, match="devices has 2 entries for 1"):
        score_candidates([attempt(1.0, 0)], RuleVerifier(use_recorded=True), devices=[None, None])
    with pytest.raises(TypeError, match="verify"):
        score_candidates([attempt(1.0, 0)], object())
