"""Evaluation metrics of Android agents (the paper's Table 4 and AndroidLab's): SR with Wilson CIs, Sub-SR, RRR, ROR, steps.

All metrics are computed from finished episodes (``android_gym.Trajectory``), so they work the same on
trajectories from a rollout collector, from a replay buffer or from a file:

- **SR** (success rate): share of episodes whose task score reached ``success_threshold`` (1.0 by
  default: a fully solved task), with a Wilson score interval (better than the normal interval for the
  small counts and the rates near 0 or 1 that agent evaluations have).
- **Sub-SR** (AndroidLab's sub-goal success rate): mean over episodes of the share of sub-goals met. An
  episode whose ``info["subgoals"]`` lists per-sub-goal results (booleans or scores) uses them; otherwise
  the task's score in [0, 1] stands for it (a task without declared sub-goals is one sub-goal, and
  partial-credit scores count partially).
- **RRR** (AndroidLab's reversed redundancy ratio): reference steps / agent steps, averaged over the
  SUCCESSFUL episodes that have a reference length (a human's in AndroidLab; here the scripted expert's
  on the same task instance, see :func:`expert_reference_steps`). 1.0 means as short as the reference.
- **ROR** (reasonable operation ratio): 1 - the share of operations after which the screen did not
  change (AndroidLab compares consecutive screenshots at 99.9% identical pixels; steps without
  screenshots compare the UI text). Terminal actions (``finished``/answer, ``wait``) are not operations.
- **Average steps**: actions per episode, the final ``finished`` included.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from android_gym.actions import Finished, Wait
from android_gym.trajectory import Step, Trajectory

__all__ = [
    "EvalReport",
    "TaskMetrics",
    "evaluate_policy",
    "evaluate_trajectories",
    "expert_reference_steps",
    "reasonable_operation_ratio",
    "screens_identical",
    "wilson_interval",
]

#: Two screenshots are "the same screen" when at least this share of their pixels are equal (AndroidLab: 99.9%).
SAME_SCREEN_PIXEL_SHARE = 0.999


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    r"""Wilson score interval of a binomial proportion ``successes / n`` (95% for ``z = 1.96``).

    .. math:: \frac{\hat p + z^2/2n \pm z \sqrt{\hat p (1-\hat p)/n + z^2/4n^2}}{1 + z^2/n}

    ``n = 0`` gives the uninformative ``(0.0, 1.0)``. Raises ``ValueError`` for counts outside ``[0, n]``.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be a non-negative integer, got {n!r}")
    if isinstance(successes, bool) or not isinstance(successes, (int, float, np.integer, np.floating)):
        raise ValueError(f"successes must be a number, got {successes!r}")
    if not math.isfinite(successes) or not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, n={n}], got {successes!r}")
    if not (math.isfinite(z) and z > 0):
        raise ValueError(f"z must be a positive number, got {z!r}")
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def screens_identical(before: Step | Any, after: Step | Any) -> bool:
    """Whether two observations show the same screen: screenshots >= 99.9% equal pixels, else equal UI text."""
    shot_a = getattr(before, "screenshot", None)
    shot_b = getattr(after, "screenshot", None)
    if shot_a is not None and shot_b is not None:
        a, b = np.asarray(shot_a), np.asarray(shot_b)
        if a.shape != b.shape:
            return False
        if a.size == 0:
            return True
        equal = (a == b).all(axis=-1) if a.ndim == 3 else (a == b)
        return float(equal.mean()) >= SAME_SCREEN_PIXEL_SHARE
    ui_a = before if isinstance(before, str) else getattr(before, "ui", None)
    ui_b = after if isinstance(after, str) else getattr(after, "ui", None)
    return ui_a == ui_b


def _is_operation(step: Step) -> bool:
    """Steps that are meant to change the screen (not ``finished``/answer, not ``wait``, not unparsed)."""
    return step.action is not None and not isinstance(step.action, (Finished, Wait))


def reasonable_operation_ratio(trajectory: Trajectory) -> float | None:
    """ROR of one episode: share of operations after which the screen changed (None: no judgeable operation).

    The screen after step ``i`` is step ``i + 1``'s observation; after the last step it is
    ``trajectory.info["final_ui"]`` / ``["final_screenshot"]`` when present (otherwise that step is not judged).
    An unparsable reply is an operation that changed nothing (AndroidLab counts it as unreasonable).
    """
    steps = trajectory.steps
    judged = unchanged = 0
    final = None
    if "final_ui" in trajectory.info or "final_screenshot" in trajectory.info:
        final = Step(ui=trajectory.info.get("final_ui", ""), action=None,
                     screenshot=trajectory.info.get("final_screenshot"))
    for i, step in enumerate(steps):
        if step.action is None and step.parse_error is not None:
            judged += 1
            unchanged += 1
            continue
        if not _is_operation(step):
            continue
        after = steps[i + 1] if i + 1 < len(steps) else final
        if after is None:
            continue
        judged += 1
        unchanged += screens_identical(step, after)
    return None if judged == 0 else 1.0 - unchanged / judged


def _sub_goal_score(trajectory: Trajectory) -> float:
    subgoals = trajectory.info.get("subgoals")
    if subgoals:
        values = [float(v) for v in subgoals]
        if not all(0.0 <= v <= 1.0 for v in values):
            raise ValueError(f"info['subgoals'] of a {trajectory.task!r} episode must hold scores in [0, 1]")
        return float(np.mean(values))
    return float(min(1.0, max(0.0, trajectory.success)))


@dataclass
class TaskMetrics:
    """Metrics of one group of episodes (one task, or all tasks for the overall row)."""

    episodes: int
    successes: int
    success_rate: float
    ci_low: float
    ci_high: float
    sub_success_rate: float
    average_steps: float
    rrr: float | None
    """Mean reference/agent step ratio over successful episodes with a reference; None when there is none."""
    ror: float | None
    """Share of judged operations that changed the screen; None when no operation could be judged."""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict of the fields."""
        return asdict(self)


@dataclass
class EvalReport:
    """Per-task and overall metrics of an evaluation, plus the macro (mean over tasks) success rate."""

    overall: TaskMetrics
    per_task: dict[str, TaskMetrics]
    macro_success_rate: float
    confidence: float = 0.95
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-friendly dict (what ``coach-rl eval`` writes)."""
        return {
            "overall": self.overall.to_dict(),
            "per_task": {k: v.to_dict() for k, v in self.per_task.items()},
            "macro_success_rate": self.macro_success_rate,
            "confidence": self.confidence,
            "meta": dict(self.meta),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> EvalReport:
        """Rebuild a report written by :meth:`to_dict` (e.g. read back from ``eval_*.json``)."""
        try:
            return cls(
                overall=TaskMetrics(**data["overall"]),
                per_task={k: TaskMetrics(**v) for k, v in data["per_task"].items()},
                macro_success_rate=float(data["macro_success_rate"]),
                confidence=float(data.get("confidence", 0.95)),
                meta=dict(data.get("meta", {})),
            )
        except (KeyError, TypeError) as err:
            raise ValueError(f"not an EvalReport dict: {err}") from err

    def to_json(self) -> str:
        """The report as indented JSON."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    def markdown(self) -> str:
        """A Markdown table: one row per task and an overall row (SR with its CI in percent)."""
        pct = round(self.confidence * 100)

        def fmt(x: float | None) -> str:
            return "-" if x is None else f"{x:.2f}"

        lines = [
            f"| task | episodes | SR % ({pct}% CI) | Sub-SR % | RRR | ROR | avg steps |",
            "|---|---|---|---|---|---|---|",
        ]
        rows = [*sorted(self.per_task.items()), ("**overall**", self.overall)]
        for name, m in rows:
            lines.append(
                f"| {name} | {m.episodes} | {100 * m.success_rate:.1f} ({100 * m.ci_low:.1f}-{100 * m.ci_high:.1f}) "
                f"| {100 * m.sub_success_rate:.1f} | {fmt(m.rrr)} | {fmt(m.ror)} | {m.average_steps:.2f} |"
            )
        return "\n".join(lines)


def _z_for(confidence: float) -> float:
    """Two-sided normal quantile for a confidence level in (0, 1)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    from statistics import NormalDist

    return NormalDist().inv_cdf(0.5 + confidence / 2)


def _reference_for(trajectory: Trajectory, reference_steps: Mapping[Any, float] | None) -> float | None:
    if not reference_steps:
        return None
    for key in ((trajectory.task, trajectory.seed), trajectory.task):
        if key in reference_steps:
            value = float(reference_steps[key])
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"reference_steps[{key!r}] must be a positive number, got {value!r}")
            return value
    return None


def _group_metrics(trajs: Sequence[Trajectory], threshold: float, z: float,
                   reference_steps: Mapping[Any, float] | None) -> TaskMetrics:
    n = len(trajs)
    wins = [t.success >= threshold for t in trajs]
    k = int(sum(wins))
    low, high = wilson_interval(k, n, z)
    ratios = []
    for t, won in zip(trajs, wins):
        ref = _reference_for(t, reference_steps)
        if won and ref is not None and len(t.steps) > 0:
            ratios.append(ref / len(t.steps))
    rors = [r for r in (reasonable_operation_ratio(t) for t in trajs) if r is not None]
    # ROR pools operations over episodes only through episode means: long failing episodes must not dominate.
    return TaskMetrics(
        episodes=n,
        successes=k,
        success_rate=k / n if n else 0.0,
        ci_low=low,
        ci_high=high,
        sub_success_rate=float(np.mean([_sub_goal_score(t) for t in trajs])) if n else 0.0,
        average_steps=float(np.mean([len(t.steps) for t in trajs])) if n else 0.0,
        rrr=float(np.mean(ratios)) if ratios else None,
        ror=float(np.mean(rors)) if rors else None,
    )


def evaluate_trajectories(
    trajectories: Iterable[Trajectory],
    *,
    reference_steps: Mapping[Any, float] | None = None,
    success_threshold: float = 1.0,
    confidence: float = 0.95,
    meta: Mapping[str, Any] | None = None,
) -> EvalReport:
    """Table 4 metrics per task and overall from finished episodes.

    ``reference_steps`` maps ``(task, seed)`` or ``task`` to the reference step count used by RRR (the
    ``(task, seed)`` entry wins). ``success_threshold`` is the task score that counts as solved.
    """
    trajs = list(trajectories)
    bad = [i for i, t in enumerate(trajs) if not isinstance(t, Trajectory)]
    if bad:
        raise TypeError(f"trajectories[{bad[0]}] is a {type(trajs[bad[0]]).__name__}, not an android_gym Trajectory")
    if not trajs:
        raise ValueError("no trajectories to evaluate")
    if not (isinstance(success_threshold, (int, float)) and 0 < success_threshold <= 1):
        raise ValueError(f"success_threshold must be in (0, 1], got {success_threshold!r}")
    for i, t in enumerate(trajs):
        if not (isinstance(t.success, (int, float)) and math.isfinite(t.success)):
            raise ValueError(f"trajectories[{i}] ({t.task!r}) has a non-numeric success {t.success!r}")
    z = _z_for(confidence)
    by_task: dict[str, list[Trajectory]] = {}
    for t in trajs:
        by_task.setdefault(str(t.task), []).append(t)
    per_task = {name: _group_metrics(group, success_threshold, z, reference_steps)
                for name, group in sorted(by_task.items())}
    return EvalReport(
        overall=_group_metrics(trajs, success_threshold, z, reference_steps),
        per_task=per_task,
        macro_success_rate=float(np.mean([m.success_rate for m in per_task.values()])),
        confidence=confidence,
        meta=dict(meta or {}),
    )


def expert_reference_steps(
    tasks: Sequence[str],
    seeds: Sequence[int],
    *,
    env_id: str = "android_gym:AndroidSim-v0",
    env_kwargs: Mapping[str, Any] | None = None,
    max_episode_steps: int | None = None,
) -> dict[tuple[str, int], int]:
    """The scripted expert's step count on each ``(task, seed)`` instance: the reference length of RRR.

    Runs the env's ``expert_action()`` from ``reset(seed=seed, options={"task": task})``; instances the
    expert does not solve get no entry.
    """
    import gymnasium as gym

    kwargs = dict(env_kwargs or {})
    kwargs.pop("task", None)
    if max_episode_steps is not None:
        kwargs["max_steps"] = max_episode_steps
    env = gym.make(env_id, task=list(tasks), disable_env_checker=True, **kwargs)
    out: dict[tuple[str, int], int] = {}
    try:
        for task in tasks:
            for seed in seeds:
                env.reset(seed=int(seed), options={"task": task})
                steps, done, info = 0, False, {}
                while not done:
                    _, _, terminated, truncated, info = env.step(env.unwrapped.expert_action())
                    steps += 1
                    done = terminated or truncated
                if info.get("success", 0.0) >= 1.0:
                    out[(task, int(seed))] = steps
    finally:
        env.close()
    return out


def evaluate_policy(
    policy: Any,
    tasks: Sequence[str],
    seeds: Sequence[int],
    *,
    env_id: str = "android_gym:AndroidSim-v0",
    env_kwargs: Mapping[str, Any] | None = None,
    num_envs: int = 4,
    max_episode_steps: int | None = None,
    greedy: bool = True,
    with_reference: bool = True,
    meta: Mapping[str, Any] | None = None,
) -> tuple[EvalReport, list[Trajectory]]:
    """Play every ``(task, seed)`` instance once with ``policy`` (greedy by default) and compute the metrics.

    Episodes run in ``num_envs`` environments in lockstep through :class:`coach_rl.rollout.RolloutCollector`
    (one batched generation per step). RRR's reference is the scripted expert on the same instances
    (``with_reference``; sim envs only). Returns the report and the trajectories.
    """
    from coach_rl.envs import make_envs
    from coach_rl.rollout import RolloutCollector

    if not tasks or not seeds:
        raise ValueError("evaluate_policy needs at least one task and one seed")
    instances = [(task, int(seed)) for task in tasks for seed in seeds]
    kwargs = dict(env_kwargs or {})
    if max_episode_steps is not None:
        kwargs["max_steps"] = max_episode_steps
    envs = make_envs(env_id, min(num_envs, len(instances)), tasks=list(tasks), env_kwargs=kwargs)
    try:
        collector = RolloutCollector(envs, policy, keep_xml=False)
        batch = collector.collect(
            len(instances),
            seeds=[seed for _, seed in instances],
            task_options=[{"task": task} for task, _ in instances],
            greedy=greedy,
        )
    finally:
        for env in envs:
            env.close()
    trajectories = list(batch.trajectories)
    refs = None
    if with_reference:
        refs = expert_reference_steps(tasks, seeds, env_id=env_id, env_kwargs=env_kwargs,
                                      max_episode_steps=max_episode_steps)
    info = {"tasks": list(tasks), "seeds": [int(s) for s in seeds], "greedy": greedy, **dict(meta or {})}
    return evaluate_trajectories(trajectories, reference_steps=refs, meta=info), trajectories


# -- Best-of-N with an outcome verifier (ProRe) --

__all__ += ["BEST_OF_N_VERIFIERS", "BestOfNMetrics", "BestOfNReport", "best_of_n_verifier", "evaluate_best_of_n"]

BEST_OF_N_VERIFIERS: tuple[str, ...] = ("rule", "judge", "probing")
"""Verifiers ``coach-rl eval --best-of N --verifier`` can pick with: the task's rule check, an LLM judge over the
trajectory, ProRe's probing verifier."""


def best_of_n_verifier(kind: str, backend: Any = None, *, max_new_tokens: int = 256, **options: Any) -> Any:
    """The ``coach_reward`` verifier named ``kind`` (``rule``, ``judge``, ``probing``); the last two need a ``backend``.

    ``options`` go to the judge's or the probing verifier's constructor (``max_prompt_tokens=``, ``max_probes=`` ...).
    """
    from coach_reward.probing import ProbingVerifier
    from coach_reward.verifiers import LLMJudgeVerifier, RuleVerifier

    if kind not in BEST_OF_N_VERIFIERS:
        raise ValueError(f"unknown verifier {kind!r}; choose one of {', '.join(BEST_OF_N_VERIFIERS)}")
    if kind == "rule":
        return RuleVerifier()
    if backend is None:
        raise ValueError(f"verifier {kind!r} needs a judge model: a local folder or an OpenAI-compatible server")
    if kind == "judge":
        return LLMJudgeVerifier(backend, max_new_tokens=max_new_tokens, **options)
    return ProbingVerifier(backend, max_new_tokens=max_new_tokens, **options)


@dataclass
class BestOfNMetrics:
    """Best-of-N results over a set of task instances (one task's, or all of them)."""

    instances: int
    """Task instances, each played N times from the same start state."""
    episodes: int
    pass_at_1: float
    """Expected success of one attempt: the mean success over all N x instances episodes."""
    pass_at_n: float
    """Share of instances with at least one successful attempt (what a perfect verifier would reach)."""
    best_of_n: float
    """Share of instances whose attempt picked by the verifier succeeded."""
    verifier_accuracy: float
    """Share of episodes where the verifier's success flag equals the task's own check (failures count wrong)."""
    verifier_failures: int
    """Episodes on which the verifier raised or returned no usable verdict."""
    same_start: float
    """Share of instances whose N attempts started on the identical screen."""

    def to_dict(self) -> dict[str, Any]:
        """Plain dict."""
        return asdict(self)


@dataclass
class BestOfNReport:
    """:func:`evaluate_best_of_n`'s result: ``overall`` and ``per_task`` metrics, each instance's picks, meta."""

    n: int
    verifier: str
    overall: BestOfNMetrics
    per_task: dict[str, BestOfNMetrics]
    instances: list[dict[str, Any]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict."""
        return {"n": self.n, "verifier": self.verifier, "overall": self.overall.to_dict(),
                "per_task": {t: m.to_dict() for t, m in self.per_task.items()}, "instances": self.instances,
                "meta": self.meta}

    def to_json(self) -> str:
        """The report as indented JSON."""
        return json.dumps(self.to_dict(), indent=2)

    def markdown(self) -> str:
        """A table: per task and overall, pass@1, best-of-N with the verifier, pass@N, verifier accuracy."""
        lines = [f"Best-of-{self.n} with the {self.verifier} verifier",
                 "", f"| task | instances | pass@1 | best-of-{self.n} | pass@{self.n} | verifier acc. | verifier failures |",
                 "|---|---:|---:|---:|---:|---:|---:|"]
        rows = [*self.per_task.items(), ("**overall**", self.overall)]
        for name, m in rows:
            lines.append(f"| {name} | {m.instances} | {m.pass_at_1:.3f} | {m.best_of_n:.3f} | {m.pass_at_n:.3f} | "
                         f"{m.verifier_accuracy:.3f} | {m.verifier_failures} |")
        return "\n".join(lines)


class _VerdictAtEpisodeEnd:
    """Scores each episode with the verifier as it ends (device still in its end state) and keeps the score."""

    def __init__(self, verifier: Any) -> None:
        self.verifier = verifier

    def verify(self, trajectory: Trajectory, *, device: Any = None, task: Any = None) -> Any:
        from coach_reward.selection import score_candidates
        from coach_reward.verifiers import Verdict

        score = score_candidates([trajectory], self.verifier, devices=[device], tasks=[task])[0]
        trajectory.info["_selection_score"] = score
        return score.verdict if score.verdict is not None else Verdict(0.0, False, f"verifier failed: {score.error}")


def _best_of_n_metrics(groups: Sequence[dict[str, Any]], threshold: float) -> BestOfNMetrics:
    episodes = [e for g in groups for e in g["episodes"]]
    if not groups:
        return BestOfNMetrics(0, 0, 0.0, 0.0, 0.0, 0.0, 0, 0.0)
    return BestOfNMetrics(
        instances=len(groups), episodes=len(episodes),
        pass_at_1=sum(e["success"] for e in episodes) / len(episodes),
        pass_at_n=sum(any(e["success"] for e in g["episodes"]) for g in groups) / len(groups),
        best_of_n=sum(g["episodes"][g["picked"]]["success"] for g in groups) / len(groups),
        verifier_accuracy=sum(e["verdict_success"] == e["success"] for e in episodes) / len(episodes),
        verifier_failures=sum(e["verifier_error"] is not None for e in episodes),
        same_start=sum(g["same_start"] for g in groups) / len(groups),
    )


def evaluate_best_of_n(
    policy: Any,
    tasks: Sequence[str],
    seeds: Sequence[int],
    n: int,
    verifier: Any,
    *,
    verifier_name: str | None = None,
    env_id: str = "android_gym:AndroidSim-v0",
    env_kwargs: Mapping[str, Any] | None = None,
    num_envs: int = 4,
    max_episode_steps: int | None = None,
    greedy: bool = False,
    success_threshold: float = 1.0,
    meta: Mapping[str, Any] | None = None,
) -> tuple[BestOfNReport, list[Trajectory]]:
    """ProRe's best-of-N on every ``(task, seed)`` instance: N attempts, the verifier picks one.

    Every attempt resets the env with the instance's seed, which restores the env's clean device snapshot and
    sets the instance up again from the seed, so the N attempts start from the same state (``same_start``
    checks the first screens). The verifier scores each attempt when it ends, on its device (so rule checks
    and probing see the end state; a verifier failure is recorded, never replaced by the true outcome), and
    :func:`coach_reward.selection.select_best` picks. Success is the task's own check. Attempts are sampled
    (``greedy=False``): greedy attempts would all be the same.
    """
    from coach_reward.selection import select_best
    from coach_rl.envs import make_envs
    from coach_rl.rollout import RolloutCollector

    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"n (attempts per task instance) must be a positive integer, got {n!r}")
    if not tasks or not seeds:
        raise ValueError("evaluate_best_of_n needs at least one task and one seed")
    if not callable(getattr(verifier, "verify", None)):
        raise TypeError(f"verifier must be a coach_reward outcome verifier (verify), got {type(verifier).__name__}")
    instances = [(task, int(seed)) for task in tasks for seed in seeds]
    kwargs = dict(env_kwargs or {})
    if max_episode_steps is not None:
        kwargs["max_steps"] = max_episode_steps
    total = len(instances) * n
    envs = make_envs(env_id, min(num_envs, total), tasks=list(tasks), env_kwargs=kwargs)
    try:
        collector = RolloutCollector(envs, policy, verifier=_VerdictAtEpisodeEnd(verifier), keep_xml=False)
        batch = collector.collect(total, seeds=[seed for _, seed in instances for _ in range(n)],
                                  task_options=[{"task": task} for task, _ in instances for _ in range(n)],
                                  greedy=greedy)
    finally:
        for env in envs:
            env.close()
    if batch.failures:
        raise RuntimeError(f"{len(batch.failures)} attempt(s) could not start (env resets failed): "
                           f"{batch.failures[0]}")
    trajectories = sorted(batch.trajectories, key=lambda t: int(t.info["episode"]))
    groups: list[dict[str, Any]] = []
    for k, (task, seed) in enumerate(instances):
        candidates = trajectories[k * n:(k + 1) * n]
        scores = [t.info.pop("_selection_score") for t in candidates]
        selection = select_best(candidates, scores=scores)
        episodes = [{"success": float(t.success) >= success_threshold, "steps": len(t.steps),
                     "score": s.score, "verdict_success": bool(s.verdict is not None and s.verdict.success),
                     "abstained": s.abstained, "verifier_error": s.error} for t, s in zip(candidates, scores)]
        first_screens = {t.steps[0].ui if t.steps else None for t in candidates}
        groups.append({"task": task, "seed": seed, "picked": selection.index, "reason": selection.reason,
                       "same_start": len(first_screens) == 1, "episodes": episodes})
    by_task: dict[str, list[dict[str, Any]]] = {}
    for g in groups:
        by_task.setdefault(g["task"], []).append(g)
    report = BestOfNReport(
        n=n, verifier=verifier_name or type(verifier).__name__,
        overall=_best_of_n_metrics(groups, success_threshold),
        per_task={t: _best_of_n_metrics(gs, success_threshold) for t, gs in by_task.items()},
        instances=groups,
        meta={"tasks": list(tasks), "seeds": [int(s) for s in seeds], "greedy": greedy, **dict(meta or {})},
    )
    return report, trajectories
