r"""Rewards in the loop: the process reward model and the outcome verifier of a run, and the records they fill.

Android Coach trains its critic on returns that integrate process rewards (paper §3.2; Table 5: w_p = 0.2,
w_o = 1, gamma = 0.95). This module turns a run config into the two reward sources and applies them:

* :func:`build_process_reward_model`: ``use_prm`` + ``prm_model`` on ``prm_backend`` (a local transformers
  folder, an OpenAI-compatible server at ``prm_base_url``, or vLLM) gives a
  ``coach_reward.ProcessRewardModel``; ``prm_model: sim-oracle`` gives :class:`SimOracle`, the expert of the
  simulated phone as a perfect judge (the upper bound a learned PRM is measured against).
* :func:`build_outcome_verifier`: ``outcome_verifier`` = ``rule`` (the task's own check, recorded by the env),
  ``llm_judge``, ``last_screen``, ``vote`` (majority of rule, LLM judge and last-screen judge) or ``probing``
  (ProRe), the judges on ``verifier_backend``.
* :class:`RewardPipeline`: the outcome at the end of each episode (the device still shows its end state), then
  for every round of finished episodes ONE batched PRM call over all their steps, the returns
  (:func:`coach_rl.returns.coach_returns`) and the :class:`coach_rl.records.StepRecord` of every step, built
  in one place (:func:`step_records`) from the trajectory, the collector's :class:`coach_rl.records.PolicyTurn`
  of each step and the rewards.

**Failures never stop training and are never a silent 0.** A PRM call that raises is retried
``retries`` times; steps the judge answered with no readable verdict are asked again; a step still without a
score gets ``r_p = NaN`` (a warning, a count in the metrics) and the return fills it with the rule of
:func:`coach_rl.returns.fill_missing_process_rewards`. A verifier that fails after its retries falls back to
the task's recorded check, with the failure in the trajectory's ``verifier`` reason and the metrics.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from android_gym.trajectory import Trajectory
from coach_rl.records import PolicyTurn, StepRecord
from coach_rl.returns import coach_returns

__all__ = [
    "SIM_ORACLE",
    "RewardPipeline",
    "RewardStats",
    "SimOracle",
    "build_outcome_verifier",
    "build_process_reward_model",
    "build_reward_pipeline",
    "score_trajectory",
    "step_records",
]

SIM_ORACLE = "sim-oracle"
"""``prm_model`` value that makes the simulated phone's scripted expert the process reward model."""


@dataclass
class RewardStats:
    """Counters of the reward sources over one collection (``rewards/...`` in metrics.jsonl)."""

    prm_calls: int = 0
    prm_steps: int = 0
    prm_retries: int = 0
    prm_missing: int = 0
    prm_nonfinite: int = 0
    """PRM scores that came back NaN/inf (each asked again, then missing; also ``nonfinite/prm``)."""
    prm_candidates: int = 0
    verifier_calls: int = 0
    verifier_retries: int = 0
    verifier_failures: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, float]:
        """Flat ``rewards/<name>`` metrics."""
        return {f"rewards/{k}": float(getattr(self, k)) for k in self.__dataclass_fields__}


class SimOracle:
    """The simulated phone's expert as a process reward model: r_p = 1 when the action is the expert's, else 0.

    At every step the collector asks the env's scripted expert for its next action in the state the policy
    acted in (``env.unwrapped.expert_action()``, which re-plans when the policy left its plan) and keeps it in
    the step's :attr:`coach_rl.records.PolicyTurn.expert_action`; this scorer compares the policy's action with it by the PRM dataset's own
    rule (:func:`coach_reward.prm_data.match_actions`: same type, points within ``tolerance`` x screen width,
    same text). A step where the expert had no answer (stuck) has no score (NaN).
    """

    needs_expert = True

    def __init__(self, tolerance: float = 0.14) -> None:
        """``tolerance``: largest distance between the two actions' points, as a fraction of the screen width."""
        if not (isinstance(tolerance, (int, float)) and math.isfinite(tolerance) and tolerance >= 0):
            raise ValueError(f"tolerance must be a finite fraction of the screen width >= 0, got {tolerance!r}")
        self.tolerance = float(tolerance)

    def __repr__(self) -> str:
        return f"SimOracle(tolerance={self.tolerance})"

    @staticmethod
    def check_env(env: Any) -> None:
        """A ValueError unless ``env`` runs on the simulated phone with a scripted expert."""
        from android_gym.sim.device import SimDevice

        base = getattr(env, "unwrapped", env)
        device = getattr(base, "device", None)
        if not isinstance(device, SimDevice) or not callable(getattr(base, "expert_action", None)):
            raise ValueError(
                f"prm_model={SIM_ORACLE!r} scores actions against the simulated phone's scripted expert, but this env "
                f"runs on {type(device).__name__}: use the sim (AndroidSim-v0, or device='sim'), or a learned PRM "
                "(prm_model=<folder or server model>)")

    def score(self, trajectory: Trajectory, turns: Sequence[PolicyTurn]) -> list[float]:
        """r_p of each step of ``trajectory`` (NaN where the expert gave no action in that step's turn)."""
        from coach_reward.prm_data import match_actions

        _check_turns(trajectory, turns)
        width = int(trajectory.info.get("screen_width") or 1080)
        out = []
        for step, turn in zip(trajectory.steps, turns):
            expert = turn.expert_action
            if expert is None:
                out.append(math.nan)
                continue
            verdict = match_actions(step.action, expert, screen_width=width, tolerance=self.tolerance)
            out.append(1.0 if verdict.match else 0.0)
        return out


def _judge_backend(kind: str, model: str, base_url: str | None, what: str, device: Any = "cpu") -> Any:
    """The coach_reward backend ``kind`` serving ``model`` (a clear error for an unknown kind); a local
    (``transformers``) model is loaded on ``device``, the run's."""
    from coach_reward.backends import OpenAIBackend, TransformersBackend, VLLMBackend

    if kind == "transformers":
        return TransformersBackend.from_pretrained(model, device=str(device))
    if kind == "openai":
        if not base_url:
            raise ValueError(f"{what}_backend='openai' needs {what}_base_url (the server's base URL)")
        return OpenAIBackend(base_url, model)
    if kind == "vllm":
        return VLLMBackend(model)
    raise ValueError(f"{what}_backend must be transformers, openai or vllm, got {kind!r}")


def _device(args: Any) -> str:
    """The run's device (``CoachConfig.device``: the GPU unless ``use_cpu``) for the local judge models."""
    return str(getattr(args, "device", "cpu"))


def build_process_reward_model(args: Any) -> Any:
    """The run's process reward model from ``use_prm``/``prm_model``/``prm_backend``/``prm_base_url`` (None: off)."""
    if not args.use_prm:
        return None
    if args.prm_model == SIM_ORACLE:
        return SimOracle()
    if args.prm_backend == "transformers":
        from coach_reward.prm_training import load_prm

        # a folder saved by coach_reward's train_prm carries its prompt settings (prm_config.json)
        return load_prm(args.prm_model, device=_device(args), batch_size=16, max_new_tokens=args.prm_max_new_tokens)
    from coach_reward.prm import ProcessRewardModel

    return ProcessRewardModel(_judge_backend(args.prm_backend, args.prm_model, args.prm_base_url, "prm", _device(args)),
                              max_new_tokens=args.prm_max_new_tokens)


def build_outcome_verifier(args: Any) -> Any:
    """The run's outcome verifier from ``outcome_verifier`` and the ``verifier_*`` fields (None: the task's check)."""
    kind = args.outcome_verifier
    if kind == "rule":
        return None  # the env records the task's own check at the end of the episode
    from coach_reward.probing import ProbingVerifier
    from coach_reward.verifiers import LastScreenshotJudge, LLMJudgeVerifier, MajorityVote, RuleVerifier

    backend = _judge_backend(args.verifier_backend, args.verifier_model, args.verifier_base_url, "verifier",
                             _device(args))
    if kind == "llm_judge":
        return LLMJudgeVerifier(backend)
    if kind == "last_screen":
        return LastScreenshotJudge(backend)
    if kind == "vote":
        return MajorityVote([RuleVerifier(use_recorded=True), LLMJudgeVerifier(backend), LastScreenshotJudge(backend)])
    if kind == "probing":
        return ProbingVerifier(backend)
    raise ValueError(f"outcome_verifier must be rule, llm_judge, last_screen, vote or probing, got {kind!r}")


def _check_turns(trajectory: Trajectory, turns: Sequence[PolicyTurn]) -> None:
    """A ValueError unless ``turns`` are the trajectory's policy turns, one per step."""
    if len(turns) != len(trajectory.steps):
        raise ValueError(f"{len(turns)} policy turns for a trajectory of {len(trajectory.steps)} steps")
    for i, turn in enumerate(turns):
        if not isinstance(turn, PolicyTurn):
            raise TypeError(f"turns[{i}] must be a coach_rl.records.PolicyTurn, got {type(turn).__name__}")


def step_records(trajectory: Trajectory, turns: Sequence[PolicyTurn], process_rewards: Sequence[float],
                 returns: Sequence[float], outcome_reward: float, episode_id: str,
                 candidate_labels: Sequence[Sequence[tuple[str, float]]] | None = None) -> list[StepRecord]:
    """The :class:`StepRecord` of every step: the env's step, the policy's turn there, its r_p and R_t.

    The one place records are built; ``returns`` come from :func:`coach_rl.returns.coach_returns`;
    ``candidate_labels`` (one list per step, :meth:`RewardPipeline.candidate_labels`) the judged extra actions.
    """
    _check_turns(trajectory, turns)
    n = len(trajectory.steps)
    if len(process_rewards) != n or len(returns) != n:
        raise ValueError(f"{len(process_rewards)} process rewards and {len(returns)} returns for a trajectory of "
                         f"{n} steps")
    if candidate_labels is None:
        candidate_labels = [[] for _ in range(n)]
    if len(candidate_labels) != n:
        raise ValueError(f"{len(candidate_labels)} candidate label lists for a trajectory of {n} steps")
    group = f"{trajectory.task}:{trajectory.seed}"
    return [StepRecord(
        episode_id=episode_id, step_index=i, num_steps=n, task=str(trajectory.task), group=group,
        prompt=list(turn.prompt), prompt_text=turn.prompt_text, response=step.response or "",
        token_ids=list(turn.token_ids) if turn.token_ids is not None else None,
        token_logprobs=list(turn.token_logprobs) if turn.token_logprobs is not None else None,
        policy_version=int(turn.policy_version), process_reward=float(r_p), outcome_reward=float(outcome_reward),
        return_t=float(r_t), success=float(trajectory.success), env_reward=float(step.reward),
        parse_error=step.parse_error, truncated=bool(trajectory.truncated), instruction=str(trajectory.instruction),
        ui=step.ui or "",
        action=json.dumps(step.action.to_dict(), ensure_ascii=False) if step.action is not None else None,
        expert_match=turn.expert_match, oracle=turn.oracle, candidate_labels=[(str(t), float(y)) for t, y in cands],
    ) for i, (step, turn, r_p, r_t, cands) in enumerate(zip(trajectory.steps, turns, process_rewards, returns,
                                                              candidate_labels))]


def score_trajectory(trajectory: Trajectory, turns: Sequence[PolicyTurn], process_rewards: Sequence[float],
                     outcome_reward: float, episode_id: str, *, w_p: float = 0.2, w_o: float = 1.0,
                     gamma: float = 0.95,
                     candidate_labels: Sequence[Sequence[tuple[str, float]]] | None = None) -> list[StepRecord]:
    """The records of one ended trajectory: its returns from its rewards (NaN r_p: missing), then :func:`step_records`.

    Nothing is written into the trajectory: r_p and R_t live in the records only (returns are computed here
    and nowhere else).
    """
    if len(process_rewards) != len(trajectory.steps):
        raise ValueError(f"{len(process_rewards)} process rewards for a trajectory of {len(trajectory.steps)} steps")
    returns = coach_returns(list(process_rewards), outcome_reward, w_p=w_p, w_o=w_o, gamma=gamma)
    return step_records(trajectory, turns, [float(r) for r in process_rewards], returns, outcome_reward, episode_id,
                        candidate_labels)


@dataclass
class RewardPipeline:
    """Outcome at each episode's end, then batched process rewards, returns and records (see the module docstring).

    Args:
        prm: a ``coach_reward.ProcessRewardModel`` (anything with ``score_batch``), a :class:`SimOracle`, a
            callable ``prm(trajectory) -> one number per step``, or None (r_p = 0).
        verifier: a ``coach_reward`` outcome verifier (``verify(trajectory, device=, task=)``), a callable
            ``verifier(trajectory) -> number``, or None (the env's recorded task check).
        w_p, w_o, gamma: the return's weights and discount.
        retries: extra attempts for a failing PRM call, for unreadable PRM verdicts and for a failing verifier.
        retry_wait: seconds before the first retry (doubling each time).
    """

    prm: Any = None
    verifier: Any = None
    w_p: float = 0.2
    w_o: float = 1.0
    gamma: float = 0.95
    retries: int = 2
    retry_wait: float = 0.5
    oracle_diagnostics: bool = False
    """Record the sim expert's action and the state's oracle at every step on the simulated phone (diagnostics that
    no learner reads: :mod:`coach_rl.diagnostics`)."""
    stats: RewardStats = field(default_factory=RewardStats)
    nonfinite: Any = field(default=None, repr=False, compare=False)
    """The :class:`coach_rl.nonfinite.NonFiniteMonitor` counting NaN/inf PRM scores (the training loop shares its own)."""
    _warned: set[str] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        prm, verifier = self.prm, self.verifier
        if prm is not None and not (callable(getattr(prm, "score_batch", None)) or isinstance(prm, SimOracle)
                                    or callable(prm)):
            raise TypeError("prm must be a ProcessRewardModel (score_batch), a SimOracle or a callable trajectory -> "
                            "rewards")
        if verifier is not None and not (callable(getattr(verifier, "verify", None)) or callable(verifier)):
            raise TypeError("verifier must be an outcome verifier (verify) or a callable trajectory -> reward")
        if isinstance(self.retries, bool) or not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"retries must be an integer >= 0, got {self.retries!r}")
        if not (isinstance(self.retry_wait, (int, float)) and self.retry_wait >= 0):
            raise ValueError(f"retry_wait must be a number of seconds >= 0, got {self.retry_wait!r}")
        coach_returns([0.0], 0.0, w_p=self.w_p, w_o=self.w_o, gamma=self.gamma)  # checks weights and discount now

    def fork(self) -> RewardPipeline:
        """A pipeline with the same reward models and settings and its own counters and warnings: one per device
        thread of a worker that drives several devices (each episode's reward time and verifier failures are
        read as differences of these counters, which another thread's episode would change meanwhile). The
        models themselves are shared; ``coach_reward``'s local backends serialise their generation calls."""
        return replace(self, stats=RewardStats(), _warned=set())

    @property
    def needs_expert(self) -> bool:
        """Whether the collector must record the sim expert's action at every step (``SimOracle`` as the PRM)."""
        return bool(getattr(self.prm, "needs_expert", False))

    def check_envs(self, envs: Sequence[Any]) -> None:
        """A clear error now (not mid-run) when a reward source cannot work with these envs."""
        if isinstance(self.prm, SimOracle):
            for env in envs:
                SimOracle.check_env(env)

    # -- outcome --------------------------------------------------------------------------------------

    def _warn(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            warnings.warn(message, RuntimeWarning, stacklevel=3)

    def _retrying(self, call: Callable[[], Any], counter: str) -> Any:
        """``call()`` with up to ``retries`` more attempts on an exception (the last exception is raised)."""
        wait = float(self.retry_wait)
        for attempt in range(self.retries + 1):
            try:
                return call()
            except Exception:
                if attempt == self.retries:
                    raise
                setattr(self.stats, counter, getattr(self.stats, counter) + 1)
                time.sleep(wait)
                wait *= 2

    def outcome(self, trajectory: Trajectory, *, device: Any = None, task: Any = None) -> tuple[float, str | None]:
        """r_o of an ended episode: the verifier's score on the device in its end state, or the recorded check."""
        if self.verifier is None:
            return float(trajectory.success), None
        t0 = time.perf_counter()
        self.stats.verifier_calls += 1
        try:
            if callable(getattr(self.verifier, "verify", None)):
                verdict = self._retrying(lambda: self.verifier.verify(trajectory, device=device, task=task),
                                         "verifier_retries")
                score, reason = float(verdict.score), str(getattr(verdict, "reason", ""))
            else:
                score, reason = float(self._retrying(lambda: self.verifier(trajectory), "verifier_retries")), None
            if not math.isfinite(score):
                raise ValueError(f"the verifier gave a non-finite score {score!r}")
            return score, reason
        except Exception as err:  # a failing verifier must not lose the episode: fall back to the task's check
            self.stats.verifier_failures += 1
            self._warn("verifier", f"the outcome verifier failed ({type(err).__name__}: {err}); using the task's "
                       "recorded check for such episodes (counted in rewards/verifier_failures)")
            return float(trajectory.success), f"verifier failed ({type(err).__name__}: {err}); used the recorded success"
        finally:
            self.stats.seconds += time.perf_counter() - t0

    # -- process rewards ------------------------------------------------------------------------------

    def process_rewards(self, trajectories: Sequence[Trajectory],
                        turns: Sequence[Sequence[PolicyTurn]]) -> list[list[float]]:
        """r_p of every step of every trajectory, with ONE batched PRM call for all of them (NaN: missing).

        ``turns``: each trajectory's policy turns (the PRM is shown their thoughts; the sim oracle their
        expert actions)."""
        if len(turns) != len(trajectories):
            raise ValueError(f"{len(turns)} lists of policy turns for {len(trajectories)} trajectories")
        for trajectory, episode_turns in zip(trajectories, turns):
            _check_turns(trajectory, episode_turns)
        sizes = [len(t.steps) for t in trajectories]
        if self.prm is None:
            return [[0.0] * n for n in sizes]
        t0 = time.perf_counter()
        try:
            if isinstance(self.prm, SimOracle):
                values = [self.prm.score(t, episode_turns) for t, episode_turns in zip(trajectories, turns)]
            elif callable(getattr(self.prm, "score_batch", None)):
                flat = self._score_batched(trajectories, turns)
                values, start = [], 0
                for n in sizes:
                    values.append(flat[start:start + n])
                    start += n
            else:
                values = [self._score_callable(t) for t in trajectories]
        finally:
            self.stats.seconds += time.perf_counter() - t0
        missing = sum(1 for row in values for v in row if math.isnan(v))
        self.stats.prm_steps += sum(sizes)
        self.stats.prm_missing += missing
        if missing:
            self._warn("prm_missing", f"the process reward model gave no usable score for {missing} step(s); their "
                       "r_p is missing (NaN in the replay, counted in rewards/prm_missing) and returns use the mean "
                       "of the episode's scored steps")
        return values

    def _score_callable(self, trajectory: Trajectory) -> list[float]:
        n = len(trajectory.steps)
        try:
            values = [float(v) for v in self._retrying(lambda: list(self.prm(trajectory)), "prm_retries")]
            self.stats.prm_calls += 1
        except Exception as err:
            self._warn("prm_error", f"the process reward model failed ({type(err).__name__}: {err})")
            return [math.nan] * n
        if len(values) != n:
            self._warn("prm_length", f"the process reward model gave {len(values)} rewards for {n} steps")
            return [math.nan] * n
        self._count_nonfinite(trajectory.instruction, sum(1 for v in values if not math.isfinite(v)), len(values))
        return [v if math.isfinite(v) else math.nan for v in values]

    def _count_nonfinite(self, where: str, bad: int, total: int) -> None:
        """Count PRM scores that were NaN/inf (``rewards/prm_nonfinite``, ``nonfinite/prm``); a call with nothing
        finite lengthens the streak that stops the run (``nonfinite_patience``)."""
        from coach_rl.nonfinite import monitor_of

        monitor = monitor_of(self)
        if not bad:
            monitor.ok("prm")
            return
        self.stats.prm_nonfinite += bad
        monitor.bad("prm", f"task {where!r}", f"the process reward model gave {bad} NaN/inf score(s) of {total} (used "
                    "as missing r_p)", count=bad, streak=bad == total)

    def _score_batched(self, trajectories: Sequence[Trajectory], turns: Sequence[Sequence[PolicyTurn]]) -> list[float]:
        """One ``score_batch`` over all steps; unreadable verdicts asked again; NaN where none came."""
        from coach_reward.prm import StepInput

        inputs = []
        for trajectory, episode_turns in zip(trajectories, turns):
            for t, (step, turn) in enumerate(zip(trajectory.steps, episode_turns)):
                earlier = [s.action if s.action is not None else s.response for s in trajectory.steps[:t]]
                inputs.append(StepInput(
                    instruction=trajectory.instruction, action=step.action if step.action is not None else step.response,
                    screenshot=step.screenshot, ui=step.ui, history=earlier, thought=turn.thought))
        values = [math.nan] * len(inputs)
        todo = list(range(len(inputs)))
        wait = float(self.retry_wait)
        for attempt in range(self.retries + 1):
            if not todo:
                break
            if attempt:
                self.stats.prm_retries += 1
                time.sleep(wait)
                wait *= 2
            try:
                scores = self.prm.score_batch([inputs[i] for i in todo])
                self.stats.prm_calls += 1
            except Exception as err:
                self._warn("prm_error", f"the process reward model failed ({type(err).__name__}: {err}); retrying")
                continue
            if len(scores) != len(todo):
                self._warn("prm_length", f"the process reward model answered {len(scores)} of {len(todo)} steps")
                continue
            left = []
            nonfinite = 0
            for i, score in zip(todo, scores):
                p = float(score.p_correct)
                nonfinite += int(not math.isfinite(p))
                if getattr(score, "verdict", True) is None or not math.isfinite(p):
                    left.append(i)  # no readable verdict: ask again
                else:
                    values[i] = p
            self._count_nonfinite(inputs[todo[0]].instruction, nonfinite, len(todo))
            todo = left
        return values

    # -- records --------------------------------------------------------------------------------------

    def finish(self, trajectories: Sequence[Trajectory], turns: Sequence[Sequence[PolicyTurn]],
               episode_ids: Sequence[str]) -> list[list[StepRecord]]:
        """Process rewards (one batch), returns and records of ended, outcome-scored trajectories.

        ``turns``: each trajectory's :class:`PolicyTurn` list (one per step). Each trajectory must carry
        ``info["outcome_reward"]`` (set by :meth:`outcome`'s caller). r_p and R_t go into the records only.
        """
        if len(episode_ids) != len(trajectories):
            raise ValueError(f"{len(episode_ids)} episode ids for {len(trajectories)} trajectories")
        process = self.process_rewards(trajectories, turns)
        candidates = self.candidate_labels(trajectories, turns)
        return [score_trajectory(trajectory, episode_turns, rewards, float(trajectory.info["outcome_reward"]),
                                 episode_id, w_p=self.w_p, w_o=self.w_o, gamma=self.gamma, candidate_labels=labels)
                for trajectory, episode_turns, rewards, episode_id, labels
                in zip(trajectories, turns, process, episode_ids, candidates)]

    def candidate_labels(self, trajectories: Sequence[Trajectory],
                         turns: Sequence[Sequence[PolicyTurn]]) -> list[list[list[tuple[str, float]]]]:
        """The PRM's label of every extra reply sampled at each step (:attr:`PolicyTurn.candidates`), one batched call.

        ``(reply, 1.0)`` when the PRM judges the candidate correct (p_correct >= 0.5, as the critic's pre-training
        labels), ``(reply, 0.0)`` when not; candidates it cannot judge are left out. The sim oracle labels by the
        expert match; with no PRM there are no labels. Per trajectory, per step, a list (empty without candidates).
        """
        out: list[list[list[tuple[str, float]]]] = [[[] for _ in t.steps] for t in trajectories]
        jobs: list[tuple[int, int, str, Any]] = []  # (trajectory, step, reply, StepInput)
        if self.prm is None:
            return out
        for k, (trajectory, episode_turns) in enumerate(zip(trajectories, turns)):
            for t, (step, turn) in enumerate(zip(trajectory.steps, episode_turns)):
                for text, action in turn.candidates:
                    if isinstance(self.prm, SimOracle):
                        if turn.expert_action is None:
                            continue
                        from coach_reward.prm_data import match_actions

                        width = int(trajectory.info.get("screen_width") or 1080)
                        ok = action is not None and match_actions(action, turn.expert_action, screen_width=width,
                                                                  tolerance=self.prm.tolerance).match
                        out[k][t].append((text, 1.0 if ok else 0.0))
                    elif callable(getattr(self.prm, "score_batch", None)):
                        from coach_reward.prm import StepInput
                        from coach_rl.prompting import split_thought_action

                        earlier = [s.action if s.action is not None else s.response for s in trajectory.steps[:t]]
                        thought, _ = split_thought_action(text)
                        jobs.append((k, t, text, StepInput(
                            instruction=trajectory.instruction, action=action if action is not None else text,
                            screenshot=step.screenshot, ui=step.ui, history=earlier, thought=thought)))
        if not jobs:
            return out
        t0 = time.perf_counter()
        try:
            scores = self._retrying(lambda: self.prm.score_batch([job[3] for job in jobs]), "prm_retries")
            self.stats.prm_calls += 1
        except Exception as err:  # no labels this round: the critic trains on the executed actions alone
            self._warn("prm_candidates", f"the process reward model failed on the candidate actions "
                       f"({type(err).__name__}: {err}); they get no label this round")
            return out
        finally:
            self.stats.seconds += time.perf_counter() - t0
        self.stats.prm_candidates += len(jobs)
        for (k, t, text, _), score in zip(jobs, scores):
            p = float(score.p_correct)
            if getattr(score, "verdict", True) is not None and math.isfinite(p):
                out[k][t].append((text, 1.0 if p >= 0.5 else 0.0))
        return out


def build_reward_pipeline(args: Any) -> RewardPipeline:
    """The :class:`RewardPipeline` of a run config's CoachConfig (PRM, verifier, weights, retries)."""
    return RewardPipeline(build_process_reward_model(args), build_outcome_verifier(args), w_p=args.w_p, w_o=args.w_o,
                          gamma=args.gamma, retries=int(args.reward_retries))
