"""Expert demonstrations from the simulated phone, written in the policy's own prompt and answer format.

Every simulated task has a scripted expert (``task.expert(ui)``: a generator that yields actions and
receives the next screen). :func:`collect_demos` plays it on an ``AndroidEnv`` for many task instances
and records, for each step, the request the policy would have been given and the expert's action
written as the policy's answer (:meth:`coach_rl.policy.PolicyFormat.answer_for`): an index-format JSON
naming the tapped element, or a UI-TARS ``Action:`` line.

What runs on the phone is the answer read back through the policy's own parser, not the expert's
original action, so a demonstration only ever contains steps the policy can reproduce exactly, and only
episodes that still succeed are kept. (The one difference that matters: the index format's
``input_text`` presses Enter like AndroidWorld's, where the expert may type without it; a few tasks
lose their demonstrations to that, and the stats list them.) The expert's generator is driven directly
with the screens that follow, rather than through ``env.expert_action()``, which would re-plan after any
action that differs from its suggestion.

:meth:`DemoSet.examples` gives TRL SFT rows (conversational prompt + completion); :meth:`DemoSet.corpus`
gives text to train a tiny tokenizer on.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from android_gym.actions import Action, ActionFormatError, ActionParseError
from android_gym.trajectory import Step, Trajectory
from android_gym.xml import compress_xml
from coach_rl.policy import PolicyFormat, PolicyRequest, json_safe_messages
from coach_rl.prompting import _INDEX_RE, render_messages_text

__all__ = ["DemoRecord", "DemoSet", "DemoStats", "collect_demos", "noisy_answer"]

# Why an episode yields no demonstration (the keys of DemoStats.dropped).
_STUCK = "expert_stuck"
_UNEXPRESSIBLE = "unexpressible_action"
_FAILED = "not_successful"
_ERROR = "expert_error"


@dataclass
class DemoRecord:
    """One demonstrated step: the policy's request, the answer text and the action it reads back as."""

    request: PolicyRequest
    answer: str
    action: Action
    task: str
    seed: int
    step_index: int
    expert_action: Action


def noisy_answer(record: DemoRecord, rng: random.Random) -> str:
    """An index-format click on a clickable or checkable element of ``record``'s screen other than the one its
    answer names (the answer itself when the screen has no other): what a noisy teacher would have done there."""
    named = _INDEX_RE.search(record.answer)
    chosen = int(named.group(1)) if named else None
    others = [i for i, e in enumerate(record.request.elements or ())
              if (getattr(e, "clickable", False) or getattr(e, "checkable", False)) and i != chosen]
    if not others:
        return record.answer
    return json.dumps({"action_type": "click", "index": rng.choice(others)})


@dataclass
class DemoStats:
    """What :func:`collect_demos` did: episodes tried and kept, steps kept, episodes dropped by reason."""

    episodes: int = 0
    kept: int = 0
    steps: int = 0
    env_steps: int = 0
    seconds: float = 0.0
    dropped: Counter = field(default_factory=Counter)
    dropped_tasks: dict[str, Counter] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-friendly form for logs and reports."""
        return {"episodes": self.episodes, "kept": self.kept, "steps": self.steps, "env_steps": self.env_steps,
                "seconds": round(self.seconds, 3), "dropped": dict(self.dropped),
                "dropped_tasks": {t: dict(c) for t, c in self.dropped_tasks.items()}, "errors": self.errors[:20]}


@dataclass
class DemoSet:
    """Successful expert episodes in a policy's format: ``records`` (one per step), ``trajectories``, ``stats``."""

    format: PolicyFormat
    records: list[DemoRecord] = field(default_factory=list)
    trajectories: list[Trajectory] = field(default_factory=list)
    stats: DemoStats = field(default_factory=DemoStats)

    def __len__(self) -> int:
        return len(self.records)

    def examples(self, policy: Any = None, *, answer_noise: float = 0.0, seed: int = 0) -> list[dict[str, Any]]:
        """TRL SFT rows ``{"prompt": messages, "completion": [assistant answer]}`` (+ ``images`` with screenshots).

        ``policy`` (an ``HFPolicy`` or a ``PolicyFormat``) decides the prompts; by default the format the
        demonstrations were collected with. Pass the policy when it fits prompts to a token budget
        (``max_prompt_tokens``), so SFT prompts equal rollout prompts. ``answer_noise`` (index format only)
        replaces that share of the answers, drawn with ``seed``, by a click on another clickable element of the
        same screen: a deliberately imperfect teacher (:func:`noisy_answer`).
        """
        if not 0.0 <= answer_noise < 1.0:
            raise ValueError(f"answer_noise must be in [0, 1), got {answer_noise!r}")
        if answer_noise and self.format.action_format != "index":
            raise ValueError("answer_noise needs the index action format (a wrong answer names another element)")
        rng = random.Random(seed)
        build = _message_builder(policy if policy is not None else self.format)
        rows = []
        for record in self.records:
            messages = build(record.request)
            answer = record.answer
            if answer_noise and rng.random() < answer_noise:
                answer = noisy_answer(record, rng)
            row: dict[str, Any] = {
                "prompt": json_safe_messages(messages),
                "completion": [{"role": "assistant", "content": answer}],
            }
            images = [p["image"] for m in messages if not isinstance(m["content"], str)
                      for p in m["content"] if p.get("type") == "image" and p.get("image") is not None]
            if images:
                row["images"] = images
            rows.append(row)
        return rows

    def corpus(self) -> list[str]:
        """Plain texts (rendered prompts and answers) to train a tokenizer on, one per step."""
        build = _message_builder(self.format)
        texts = []
        for record in self.records:
            texts.append(render_messages_text(build(record.request)))
            texts.append(record.answer)
        return texts

    def tasks(self) -> list[str]:
        """Names of the tasks with at least one kept episode, sorted."""
        return sorted({t.task for t in self.trajectories})


def _message_builder(policy: Any):
    if hasattr(policy, "messages_for"):
        return policy.messages_for
    if isinstance(policy, PolicyFormat):
        return policy.messages
    raise TypeError(f"expected an HFPolicy (with messages_for) or a PolicyFormat, got {type(policy).__name__}")


def _format_of(policy: Any) -> PolicyFormat:
    if isinstance(policy, PolicyFormat):
        return policy
    fmt = getattr(policy, "format", None)
    if isinstance(fmt, PolicyFormat):
        return fmt
    raise TypeError(f"policy must be a PolicyFormat or a policy with a .format PolicyFormat, got {type(policy).__name__}")


def collect_demos(
    policy: Any,
    tasks: Sequence[str] | None = None,
    seeds: Iterable[int] = (0,),
    *,
    env: gym.Env | None = None,
    suite: str = "sim",
    env_kwargs: Mapping[str, Any] | None = None,
) -> DemoSet:
    """Play each task's expert once per seed and keep the successful episodes as demonstrations.

    Args:
        policy: a ``PolicyFormat`` or a policy with one (``HFPolicy.format``): the answer format and the
            screen view (``mode`` "screenshot"/"both" makes the env capture screenshots).
        tasks: task names (default: every task of ``suite``).
        seeds: one episode per (task, seed); the seed picks the task instance as in ``env.reset(seed=...)``,
            so evaluation on other seeds uses held-out instances.
        env: an ``AndroidEnv`` to play on (default: a new ``AndroidSim-v0`` made with ``env_kwargs``,
            closed afterwards).
        suite: the task suite for the default task list and the default env.
        env_kwargs: extra arguments for the default env.

    Returns:
        A :class:`DemoSet`; ``stats.dropped`` counts episodes without a demonstration by reason
        (expert stuck, an action the format cannot express, an unsuccessful episode, an expert error).
    """
    fmt = _format_of(policy)
    seeds = [int(s) for s in seeds]
    if not seeds:
        raise ValueError("seeds is empty: give at least one seed per task")
    own_env = env is None
    if env is None:
        kwargs = {"suite": suite, "screenshot": fmt.mode != "xml", **dict(env_kwargs or {})}
        env = gym.make("AndroidSim-v0", **kwargs)
    elif fmt.mode != "xml" and not getattr(env.unwrapped, "screenshot", False):
        raise ValueError(f"mode={fmt.mode!r} needs screenshots: make the env with screenshot=True")
    if tasks is None:
        from android_gym.tasks import list_tasks

        tasks = list_tasks(suite)
    demos = DemoSet(format=fmt)
    started = time.perf_counter()
    try:
        for task in tasks:
            for seed in seeds:
                _play_expert(env, fmt, task, seed, demos)
    finally:
        if own_env:
            env.close()
    demos.stats.seconds = time.perf_counter() - started
    return demos


def _play_expert(env: gym.Env, fmt: PolicyFormat, task: str, seed: int, demos: DemoSet) -> None:
    """One expert episode; appends its records and trajectory to ``demos`` when it succeeds."""
    from android_gym.tasks.expert import ExpertStuck

    stats = demos.stats
    stats.episodes += 1
    base = env.unwrapped
    screen_size = tuple(base.device.screen_size)
    obs, info = env.reset(seed=seed, options={"task": task})
    trajectory = Trajectory(task=task, instruction=obs["instruction"], seed=seed)
    records: list[DemoRecord] = []
    reason = None
    try:
        generator = base.task.expert(_compressed(info, base, screen_size))
        expert = next(generator)
        while True:
            request = PolicyRequest.from_observation(obs, trajectory.steps, screen_size)
            try:
                answer = fmt.answer_for(expert, request, type_presses_enter=True)
            except ActionFormatError as err:
                reason = _UNEXPRESSIBLE
                stats.errors.append(f"{task}/{seed}: {err}")
                break
            _, action = fmt.parse(answer, request)
            if isinstance(action, ActionParseError):  # the format's writer and reader disagree: a bug
                raise AssertionError(f"answer {answer!r} for {expert!r} does not parse back: {action}")
            records.append(DemoRecord(request, answer, action, task, seed, len(trajectory.steps), expert))
            obs, reward, terminated, truncated, info = env.step(action)
            stats.env_steps += 1
            trajectory.steps.append(Step(
                ui=request.ui or "", action=action, response=answer, reward=float(reward),
                screenshot=request.screenshot, parse_error=info.get("parse_error"),
                info={"target": fmt.target(answer, request), "expert_action": expert.to_dict()}))
            if terminated or truncated:
                trajectory.success = float(info.get("success", 0.0))
                trajectory.truncated = bool(truncated and not terminated)
                trajectory.answer = getattr(action, "text", None) if terminated else None
                trajectory.error = info.get("error")
                if trajectory.success < 1.0:
                    reason = _FAILED
                break
            expert = generator.send(_compressed(info, base, screen_size))
    except ExpertStuck as err:
        reason = _STUCK
        stats.errors.append(f"{task}/{seed}: {err}")
    except StopIteration:
        reason = _ERROR
        stats.errors.append(f"{task}/{seed}: the expert stopped without finishing")
    if reason is not None:
        stats.dropped[reason] += 1
        stats.dropped_tasks.setdefault(task, Counter())[reason] += 1
        return
    stats.kept += 1
    stats.steps += len(records)
    demos.records.extend(records)
    demos.trajectories.append(trajectory)


def _compressed(info: Mapping[str, Any], base: Any, screen_size: tuple[int, int]) -> Any:
    """The screen as the expert reads it (the env's own compression of the current hierarchy dump)."""
    return compress_xml(info["xml"], style=base.ui_style, screen_size=screen_size)
