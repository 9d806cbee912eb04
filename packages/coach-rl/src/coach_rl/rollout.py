"""Online rollouts: N envs in lockstep, one batched generation per step, rewards and returns, replay writes.

:class:`RolloutCollector` plays episodes on several ``AndroidEnv`` instances at once (paper Algorithm 1,
step 1). At every step it asks the policy about all active envs in ONE :meth:`Policy.act` call, then
steps each env with its action (one after another, or in threads for envs that wait on real devices, whose
resets then overlap too).
An env whose episode ends starts the next pending episode straight away, so no env idles while episodes
remain.

Rewards come from a :class:`coach_rl.rewards.RewardPipeline`: when an episode ends, the outcome reward r_o
from its verifier (default: the task's own check, ``info["success"]``, recorded by the env) while the device
still shows the end state; when the call's episodes are all done, the process rewards r_p of all their steps in
ONE batched PRM call, the return targets ``R_t = w_p sum_{tau>=t} gamma^(T-tau) r_p^tau + w_o r_o`` and one
:class:`coach_rl.records.StepRecord` per step (:attr:`RolloutBatch.records`). The trajectories then go to the
replay buffer with their records, each written atomically.

What the policy was given and produced at each step (prompt, templated prompt, thought, token ids and
log-probs, policy version; the sim expert's action for the sim oracle) is kept typed, one
:class:`coach_rl.records.PolicyTurn` per step beside the trajectory, and handed to the reward pipeline, which
builds the records from trajectory + turns + rewards. None of it rides in ``step.info``.

Device failures never stop collection: the env reports them as a truncated step with ``info["error"]``
(that trajectory ends truncated with ``trajectory.error`` set, and is kept); an exception from ``env.step``
itself ends the episode the same way; a reset that fails is recorded in :attr:`RolloutBatch.failures` and the env moves on to the
next episode (after ``max_reset_failures`` failures in a row the env is taken out of this collection).

The trajectories are android_gym ``Trajectory`` objects annotated in ``step.info`` (see :data:`STEP_INFO_KEYS`)
and ``trajectory.info`` (see :data:`TRAJECTORY_INFO_KEYS`); learners read only the records.
"""

from __future__ import annotations

import math
import time
import uuid
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Protocol

from android_gym.actions import Finished
from android_gym.trajectory import Step, Trajectory
from coach_rl.diagnostics import StateOracle
from coach_rl.policy import Policy, PolicyOutput, PolicyRequest
from coach_rl.records import PolicyTurn, StepRecord
from coach_rl.rewards import RewardPipeline

__all__ = [
    "STEP_INFO_KEYS",
    "TRAJECTORY_INFO_KEYS",
    "EpisodeFailure",
    "RolloutBatch",
    "RolloutCollector",
    "ReplyChooser",
    "RolloutStats",
]

STEP_INFO_KEYS: tuple[str, ...] = ("target",)
"""The one key the collector puts in each ``step.info``: ``target``, what an index-format answer's element was
(``TextView 'Display'``, None otherwise). It is part of the episode's history, not training data: the policy's
next prompts read it from the earlier steps to say what an index pointed at (demonstrations record it the same
way), and it is kept in the replay's ``info`` column for exported traces. Everything a learner or the reward
pipeline needs is in the step's :class:`~coach_rl.records.PolicyTurn` and :class:`~coach_rl.records.StepRecord`;
a device failure is ``trajectory.error`` (always the last step's)."""

TRAJECTORY_INFO_KEYS: tuple[str, ...] = (
    "episode", "env_index", "options", "success", "outcome_reward", "policy_version", "replay_id", "verifier",
    "screen_width",
)
"""Keys the collector puts in ``trajectory.info`` (bookkeeping and reports; per-step r_p and R_t are in the
records only): the ``episode`` number in the collect call, the ``env_index`` it ran on, the reset ``options``,
the env's recorded ``success``, ``outcome_reward`` (r_o: the verifier's score, read by the reward pipeline and
shown by evaluation), the ``policy_version`` at its start, the ``replay_id`` it was stored under (None without a
buffer), the ``verifier``'s reason (or None) and the device's ``screen_width`` (for coordinate tolerances)."""

# Text no action reader accepts (inside the env's text action space): stepping an env with it takes the env's
# invalid-action path (penalty, no device input, info["parse_error"]), what a reply the policy could not parse
# deserves. (The raw reply itself could read as a valid action in another format and move the device.)
UNPARSEABLE_ACTION = "<the model's reply did not parse as an action>"


class ReplyChooser(Protocol):
    """Picks which of ``samples`` sampled replies each state executes (e.g. Coach's critic: the highest Q).

    Called once per collection step with the requests and, per request, its ``samples`` replies (the policy's own
    first sample first); returns one index per request. Used only while training (``collect(..., choose=...)``),
    never in evaluation, and costs policy and chooser calls, not env steps.
    """

    samples: int

    def __call__(self, requests: Sequence[PolicyRequest], replies: Sequence[Sequence[PolicyOutput]]) -> list[int]:
        """One index into each request's replies."""
        ...


@dataclass
class EpisodeFailure:
    """An episode that never started: its reset failed (the device could not be brought up)."""

    episode: int
    seed: int | None
    options: dict[str, Any] | None
    env_index: int
    error: str


@dataclass
class RolloutStats:
    """Counts and timings of one :meth:`RolloutCollector.collect` call (times in seconds)."""

    episodes: int = 0
    env_steps: int = 0
    successes: float = 0.0
    truncated: int = 0
    env_errors: int = 0
    reset_failures: int = 0
    parse_errors: int = 0
    verifier_errors: int = 0
    generate_calls: int = 0
    generated_tokens: int = 0
    choice_replies: int = 0
    """Extra replies sampled for a :class:`ReplyChooser` (never executed; ``coach_execute_best_of``)."""
    chose_other: int = 0
    """Steps whose executed reply is not the policy's first sample (the chooser preferred another)."""
    envs_disabled: int = 0
    wall_seconds: float = 0.0
    env_seconds: float = 0.0
    generation_seconds: float = 0.0
    choice_seconds: float = 0.0
    reward_seconds: float = 0.0
    replay_seconds: float = 0.0

    @property
    def success_rate(self) -> float:
        """Mean outcome success over the episodes that ran (NaN when none did)."""
        return self.successes / self.episodes if self.episodes else math.nan

    @property
    def env_steps_per_second(self) -> float:
        """Env steps per second of wall time, generation and rewards included."""
        return self.env_steps / self.wall_seconds if self.wall_seconds > 0 else math.nan

    def as_dict(self) -> dict[str, float | int]:
        """A flat dict for metrics logs (rates included)."""
        out: dict[str, float | int] = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["success_rate"] = self.success_rate
        out["env_steps_per_second"] = self.env_steps_per_second
        return out


@dataclass
class RolloutBatch:
    """What one collection produced: ``trajectories`` (in episode order), ``failures``, ``stats``."""

    trajectories: list[Trajectory] = field(default_factory=list)
    records: list[StepRecord] = field(default_factory=list)
    """One :class:`StepRecord` per step of the trajectories, in the same order: what learners read."""
    failures: list[EpisodeFailure] = field(default_factory=list)
    stats: RolloutStats = field(default_factory=RolloutStats)
    policy_version: int = 0

    def __len__(self) -> int:
        return len(self.trajectories)

    def steps(self) -> Iterator[tuple[Trajectory, Step]]:
        """Every ``(trajectory, step)`` pair, trajectory by trajectory, in step order."""
        for trajectory in self.trajectories:
            for step in trajectory.steps:
                yield trajectory, step

    @property
    def success_rate(self) -> float:
        """Mean outcome success of the trajectories (NaN when there are none)."""
        return self.stats.success_rate

    @property
    def replay_ids(self) -> list[str]:
        """Replay ids of the stored trajectories, in episode order."""
        return [t.info["replay_id"] for t in self.trajectories if t.info.get("replay_id")]


@dataclass
class _Slot:
    """One env's running episode."""

    episode: int
    observation: dict[str, Any]
    info: dict[str, Any]
    trajectory: Trajectory
    screen_size: tuple[int, int] | None
    env_records: bool = False
    """Whether the env records the episode itself (``env.unwrapped.trajectory``): its steps are annotated."""
    turns: list[PolicyTurn] = field(default_factory=list)
    """The policy's turn at each step of ``trajectory`` (same length, same order)."""


def per_episode(value: Any, n: int, name: str, *, base_int: bool = False) -> list[Any]:
    """One value per episode from None, an int base seed (``base + i``), one dict for all, or a sequence."""
    if value is None:
        return [None] * n
    if base_int and isinstance(value, int) and not isinstance(value, bool):
        return [value + i for i in range(n)]
    if isinstance(value, Mapping):
        return [dict(value) for _ in range(n)]
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"{name} must be {'an int, ' if base_int else 'a dict, '}a sequence (one per episode) or None")
    if len(value) != n:
        raise ValueError(f"{name} has {len(value)} entries for {n} episodes")
    return list(value)


class RolloutCollector:
    """Collect episodes from ``envs`` with ``policy`` (see the module docstring).

    Args:
        envs: ``AndroidEnv`` instances (``gym.make("AndroidSim-v0", ...)``); one episode runs on each at a time.
        policy: a :class:`~coach_rl.policy.Policy` (``HFPolicy``...).
        replay: a :class:`~coach_rl.replay.ReplayBuffer` to write finished trajectories to (None: none).
        rewards: the :class:`~coach_rl.rewards.RewardPipeline` (PRM, verifier, return weights); when None, one is
            built from ``prm``, ``verifier``, ``w_p``, ``w_o`` and ``gamma``:
        prm: process rewards: a ``coach_reward.ProcessRewardModel`` (``score_batch``; r_p = p_correct), a
            :class:`~coach_rl.rewards.SimOracle` or a callable ``prm(trajectory) -> one number per step``.
            None: r_p = 0.
        verifier: the outcome reward: a ``coach_reward`` outcome verifier (``verify(trajectory, device=,
            task=)`` returning a ``Verdict``; called before the env resets, so the device still shows the end
            state) or a callable ``verifier(trajectory) -> number``. None: the env's recorded success (the
            task's own rule check).
        w_p, w_o, gamma: the return's weights and discount (paper Table 5 defaults).
        threads: step and reset the envs in threads (for envs that wait on devices; the sim is CPU-bound).
        keep_xml: keep each step's hierarchy XML (``step.xml``; stored in the replay buffer).
        max_reset_failures: resets failing in a row after which an env is left out of the collection.
        candidates: extra replies sampled at every state while collecting (never executed, no env step), kept on
            the step's :class:`~coach_rl.records.PolicyTurn` when they differ from the executed reply and from each
            other, for the reward pipeline to label (``critic_prm_candidates``). 0: none (the paper).
    """

    exact_budget = True
    """``collect(max_steps=...)`` stops at exactly that many env steps (the loop's ``max_env_steps``)."""

    def __init__(
        self,
        envs: Sequence[Any],
        policy: Policy,
        *,
        replay: Any = None,
        rewards: RewardPipeline | None = None,
        prm: Any = None,
        verifier: Any = None,
        w_p: float = 0.2,
        w_o: float = 1.0,
        gamma: float = 0.95,
        threads: bool = False,
        keep_xml: bool = True,
        max_reset_failures: int = 3,
        candidates: int = 0,
    ) -> None:
        """Set up the collector; see the class docstring for the arguments."""
        if isinstance(envs, (str, bytes)) or not isinstance(envs, Sequence) or not envs:
            raise ValueError("envs must be a non-empty sequence of envs")
        if not callable(getattr(policy, "act", None)):
            raise TypeError(f"policy must have act(requests, greedy=...), got {type(policy).__name__}")
        if rewards is None:
            rewards = RewardPipeline(prm, verifier, w_p=w_p, w_o=w_o, gamma=gamma)
        elif prm is not None or verifier is not None:
            raise ValueError("pass either rewards= (a RewardPipeline) or prm=/verifier=, not both")
        elif not isinstance(rewards, RewardPipeline):
            raise TypeError(f"rewards must be a coach_rl.rewards.RewardPipeline, got {type(rewards).__name__}")
        if replay is not None and not callable(getattr(replay, "add", None)):
            raise TypeError(f"replay must be a ReplayBuffer (with add), got {type(replay).__name__}")
        if isinstance(max_reset_failures, bool) or not isinstance(max_reset_failures, int) or max_reset_failures < 1:
            raise ValueError(f"max_reset_failures must be a positive integer, got {max_reset_failures!r}")
        rewards.check_envs(envs)
        self.envs = list(envs)
        self.policy = policy
        self.replay = replay
        self.rewards = rewards
        self._sim_envs: dict[int, bool] = {}
        self.threads = bool(threads)
        self.keep_xml = bool(keep_xml)
        self.max_reset_failures = max_reset_failures
        if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 0:
            raise ValueError(f"candidates must be an integer >= 0, got {candidates!r}")
        self.candidates = candidates

    # -- public -----------------------------------------------------------------------------------------

    def collect(
        self,
        n_episodes: int,
        *,
        seeds: int | Sequence[int | None] | None = None,
        task_options: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None = None,
        greedy: bool = False,
        max_steps: int | None = None,
        choose: ReplyChooser | None = None,
    ) -> RolloutBatch:
        """Play ``n_episodes`` episodes and return them with their rewards, returns and timings.

        Args:
            n_episodes: how many episodes to play (spread over the envs).
            seeds: the reset seed of each episode: a sequence (one per episode) or an int ``s`` (episode
                ``i`` uses ``s + i``); None resets unseeded.
            task_options: the reset ``options`` (``{"task": name}``, ``{"task": ..., "instance": k}``): one
                dict for every episode or one per episode.
            greedy: argmax decoding (evaluation) instead of sampling.
            max_steps: an env-step budget for this call (None: none). Once it is spent no env steps again: the
                episodes still running end there, truncated (``info["budget_cut"]``; their outcome is scored on
                the state they reached), and the episodes not yet started, or started but not yet stepped, are not
                played. This is how a comparison stops every algorithm at exactly the same env steps.
            choose: sample ``choose.samples`` replies per state (one batched call) and execute the one ``choose``
                picks instead of the policy's single sample (None, or greedy: the policy's reply, the paper).
                The executed reply is then no longer a plain policy sample: only for learners that do not
                train on the executed reply's log-probabilities (Coach resamples K actions per stored state).
        """
        if isinstance(n_episodes, bool) or not isinstance(n_episodes, int) or n_episodes < 0:
            raise ValueError(f"n_episodes must be an integer >= 0, got {n_episodes!r}")
        if max_steps is not None and (isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1):
            raise ValueError(f"max_steps must be a positive integer or None, got {max_steps!r}")
        if choose is not None:
            samples = getattr(choose, "samples", None)
            if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1 or not callable(choose):
                raise TypeError(f"choose must be a ReplyChooser (callable, with samples >= 1), got {choose!r}")
        seed_list = per_episode(seeds, n_episodes, "seeds", base_int=True)
        option_list = per_episode(task_options, n_episodes, "task_options")
        batch = RolloutBatch(policy_version=int(getattr(self.policy, "version", 0)))
        stats = batch.stats
        started = time.perf_counter()
        pending = deque(range(n_episodes))
        slots: list[_Slot | None] = [None] * len(self.envs)
        enabled = [True] * len(self.envs)
        finished: dict[int, tuple[Trajectory, list[PolicyTurn]]] = {}
        pool = ThreadPoolExecutor(max_workers=len(self.envs)) if self.threads and len(self.envs) > 1 else None
        try:
            for i, slot in self._start_many(list(range(len(self.envs))), pending, seed_list, option_list, batch,
                                            enabled, pool).items():
                slots[i] = slot
            while any(slot is not None for slot in slots):
                active = [i for i, slot in enumerate(slots) if slot is not None]
                if max_steps is not None and max_steps - stats.env_steps < len(active):
                    keep = max(0, max_steps - stats.env_steps)  # the budget: these envs take the last steps
                    pending.clear()
                    for i in active[keep:]:
                        slot = slots[i]
                        assert slot is not None
                        if slot.trajectory.steps:  # an episode under way ends here, truncated
                            slot.trajectory.info["budget_cut"] = True
                            finished[slot.episode] = (self._finish(i, slot, ("budget",), batch), slot.turns)
                        slots[i] = None
                    active = active[:keep]
                    if not active:
                        break
                requests = [self._request(slots[i]) for i in active]  # type: ignore[arg-type]
                t0 = time.perf_counter()
                outputs = self.policy.act(requests, greedy=greedy)
                stats.generation_seconds += time.perf_counter() - t0
                stats.generate_calls += 1
                if len(outputs) != len(requests):
                    raise RuntimeError(f"the policy answered {len(outputs)} of {len(requests)} requests")
                if choose is not None and choose.samples > 1 and not greedy:
                    outputs = self._choose(choose, requests, outputs, stats)
                extras = self._candidates(requests, outputs, stats) if self.candidates and not greedy else None
                t0 = time.perf_counter()
                if pool is not None:
                    results = list(pool.map(lambda pair: self._step_env(*pair), zip(active, outputs)))
                else:
                    results = [self._step_env(i, out) for i, out in zip(active, outputs)]
                stats.env_seconds += time.perf_counter() - t0
                ended = []
                for j, (i, request, output, result) in enumerate(zip(active, requests, outputs, results)):
                    slot = slots[i]
                    assert slot is not None
                    done = self._record(slot, request, output, result, batch, extras[j] if extras else ())
                    if done:
                        finished[slot.episode] = (self._finish(i, slot, result, batch), slot.turns)
                        ended.append(i)
                for i, slot in self._start_many(ended, pending, seed_list, option_list, batch, enabled,
                                                pool).items():
                    slots[i] = slot
        finally:
            if pool is not None:
                pool.shutdown(wait=True)
            stats.wall_seconds = time.perf_counter() - started
        batch.trajectories = [finished[k][0] for k in sorted(finished)]
        self._score_and_store(batch, [finished[k][1] for k in sorted(finished)])
        return batch

    def _choose(self, choose: ReplyChooser, requests: list[PolicyRequest], outputs: Sequence[PolicyOutput],
                stats: Any) -> list[PolicyOutput]:
        """``choose.samples - 1`` more replies per request (one batched call), and the one ``choose`` picks of each."""
        n = choose.samples - 1
        t0 = time.perf_counter()
        more = self.policy.act([request for request in requests for _ in range(n)], greedy=False)
        stats.generation_seconds += time.perf_counter() - t0
        stats.generate_calls += 1
        stats.choice_replies += len(more)
        if len(more) != n * len(requests):
            raise RuntimeError(f"the policy answered {len(more)} of {n * len(requests)} requests")
        groups = [[output, *more[j * n:(j + 1) * n]] for j, output in enumerate(outputs)]
        t0 = time.perf_counter()
        picks = list(choose(requests, groups))
        stats.choice_seconds += time.perf_counter() - t0
        if len(picks) != len(groups):
            raise RuntimeError(f"the reply chooser picked {len(picks)} replies for {len(groups)} states")
        chosen = []
        for group, pick in zip(groups, picks):
            if isinstance(pick, bool) or not isinstance(pick, int) or not 0 <= pick < len(group):
                raise RuntimeError(f"the reply chooser picked {pick!r}, not an index into {len(group)} replies")
            stats.chose_other += int(group[pick].text != group[0].text)
            # the executed reply's tokens are counted when its step is recorded; here the ones never executed
            stats.generated_tokens += sum(int(out.num_tokens) for k, out in enumerate(group) if k != pick)
            chosen.append(group[pick])
        return chosen

    def _candidates(self, requests: list[PolicyRequest], outputs: Sequence[PolicyOutput],
                    stats: Any) -> list[list[tuple[str, Any]]]:
        """``self.candidates`` more sampled replies per request (one batched call): per request, the ``(reply,
        parsed action or None)`` pairs that differ from the executed reply and from each other."""
        n = self.candidates
        t0 = time.perf_counter()
        more = self.policy.act([request for request in requests for _ in range(n)], greedy=False)
        stats.generation_seconds += time.perf_counter() - t0
        stats.generate_calls += 1
        out: list[list[tuple[str, Any]]] = []
        for j, output in enumerate(outputs):
            seen = {output.text.strip()}
            kept: list[tuple[str, Any]] = []
            for extra in more[j * n:(j + 1) * n]:
                if extra.text.strip() not in seen:
                    seen.add(extra.text.strip())
                    kept.append((extra.text, extra.action if extra.error is None else None))
            out.append(kept)
        return out

    def _score_and_store(self, batch: RolloutBatch, turns: list[list[PolicyTurn]]) -> None:
        """Process rewards (one batched call), returns and records of the finished episodes; replay writes."""
        stats = batch.stats
        t0 = time.perf_counter()
        before = self.rewards.stats.seconds
        ids = [uuid.uuid4().hex[:12] for _ in batch.trajectories]
        episode_records = self.rewards.finish(batch.trajectories, turns, ids)
        stats.reward_seconds += self.rewards.stats.seconds - before
        for trajectory, records in zip(batch.trajectories, episode_records):
            trajectory.info["replay_id"] = None
            if self.replay is not None:
                t1 = time.perf_counter()
                trajectory.info["replay_id"] = self.replay.add(trajectory, records)
                stats.replay_seconds += time.perf_counter() - t1
            batch.records.extend(records)
        stats.wall_seconds += time.perf_counter() - t0

    # -- episode life -----------------------------------------------------------------------------------

    def _start_many(self, indices: list[int], pending: deque, seeds: list[Any], options: list[Any],
                    batch: RolloutBatch, enabled: list[bool], pool: ThreadPoolExecutor | None) -> dict[int, _Slot | None]:
        """Reset the envs ``indices`` into the next pending episodes; None for an env with nothing left to play.

        Episodes are handed out in the order of ``indices`` (so the assignment is the same with and without
        threads); with a thread pool the resets of one round run at the same time, which matters when each
        waits seconds on a device. A failed reset is recorded and its env tries the next pending episode in
        the following round, until ``max_reset_failures`` in a row take the env out.
        """
        out: dict[int, _Slot | None] = {}
        failures_in_row = dict.fromkeys(indices, 0)
        todo = list(indices)
        while todo:
            assigned = []
            for i in todo:
                if pending and enabled[i]:
                    assigned.append((i, pending.popleft()))
                else:
                    out[i] = None
            t0 = time.perf_counter()
            if pool is not None and len(assigned) > 1:
                results = list(pool.map(lambda pair: self._reset_env(*pair, seeds, options), assigned))
            else:
                results = [self._reset_env(i, episode, seeds, options) for i, episode in assigned]
            batch.stats.env_seconds += time.perf_counter() - t0
            todo = []
            for (i, episode), result in zip(assigned, results):
                if isinstance(result, _Slot):
                    out[i] = result
                    continue
                opts = options[episode]
                batch.failures.append(EpisodeFailure(episode, seeds[episode], dict(opts) if opts else None, i, result))
                batch.stats.reset_failures += 1
                failures_in_row[i] += 1
                if failures_in_row[i] >= self.max_reset_failures:
                    enabled[i] = False
                    batch.stats.envs_disabled += 1
                todo.append(i)
        return out

    def _reset_env(self, index: int, episode: int, seeds: list[Any], options: list[Any]) -> _Slot | str:
        """Reset env ``index`` into ``episode``: its slot, or the error text when the device could not be brought up."""
        env = self.envs[index]
        seed, opts = seeds[episode], options[episode]
        try:
            observation, info = env.reset(seed=seed, options=dict(opts) if opts is not None else None)
        except Exception as err:  # a device that cannot be brought up: recorded by the caller, collecting goes on
            return f"{type(err).__name__}: {err}"
        recorded = getattr(env.unwrapped, "trajectory", None)
        env_records = isinstance(recorded, Trajectory) and not recorded.steps
        if env_records:  # the env records the episode: the collector annotates that record, no second copy
            trajectory = recorded
            trajectory.info["instance_seed"] = trajectory.seed
            trajectory.seed = seed  # the reset seed names the instance for evaluation and GRPO groups
        else:
            trajectory = Trajectory(task=str(info.get("task", (opts or {}).get("task", ""))),
                                    instruction=observation["instruction"], seed=seed)
        trajectory.info.update(episode=episode, env_index=index, options=dict(opts) if opts else None,
                               policy_version=int(getattr(self.policy, "version", 0)))
        size = getattr(getattr(env.unwrapped, "device", None), "screen_size", None)
        trajectory.info["screen_width"] = int(size[0]) if size is not None else None
        return _Slot(episode, observation, info, trajectory, tuple(size) if size is not None else None, env_records)

    def _on_sim(self, index: int) -> bool:
        """Whether env ``index`` runs on the simulated phone with a scripted expert (the oracle diagnostics need one)."""
        known = self._sim_envs.get(index)
        if known is None:
            from android_gym.sim.device import SimDevice

            base = getattr(self.envs[index], "unwrapped", self.envs[index])
            known = isinstance(getattr(base, "device", None), SimDevice) and callable(getattr(base, "expert_action", None))
            self._sim_envs[index] = known
        return known

    def _request(self, slot: _Slot) -> PolicyRequest:
        return PolicyRequest.from_observation(slot.observation, slot.trajectory.steps, slot.screen_size)

    def _step_env(self, index: int, output: PolicyOutput) -> tuple[Any, ...]:
        """``env.step`` with the parsed action; an exception comes back as ``("raised", message)``.

        The last item is the sim expert's action in the state acted in (None unless the PRM is the sim oracle,
        or when the expert was stuck)."""
        action = output.action if output.action is not None else UNPARSEABLE_ACTION
        env = self.envs[index]
        if not env.action_space.contains(action):
            raise TypeError(f"the policy produced {action!r}, which env {index}'s action space {env.action_space} "
                            "does not contain")
        expert = None
        if self.rewards.needs_expert or (self.rewards.oracle_diagnostics and self._on_sim(index)):
            try:
                expert = env.unwrapped.expert_action()
            except Exception:  # an expert that cannot re-plan from here: this step gets no oracle score (NaN)
                expert = None
        try:
            return ("ok", *env.step(action), expert)
        except Exception as err:  # an env that fails outside its own device-error handling: end the episode
            return ("raised", f"{type(err).__name__}: {err}", expert)

    def _record(self, slot: _Slot, request: PolicyRequest, output: PolicyOutput, result: tuple[Any, ...],
                batch: RolloutBatch, candidates: Sequence[tuple[str, Any]] = ()) -> bool:
        """Annotate the step the env recorded (or record it, for envs that keep no record); True when it ended."""
        stats = batch.stats
        stats.env_steps += 1
        stats.generated_tokens += int(output.num_tokens)
        steps = slot.trajectory.steps
        if slot.env_records and len(steps) == len(request.history) + 1:
            step = steps[-1]  # what the env recorded of this decision (ui, xml, screenshot, activity)
        else:
            step = Step(ui=slot.observation.get("ui") or "", action=None,
                        screenshot=slot.observation.get("screenshot"), xml=slot.info.get("xml"))
            steps.append(step)
        step.action, step.response, step.parse_error = output.action, output.text, output.error
        if not self.keep_xml:
            step.xml = None
        step.info["target"] = output.target  # the next prompts' history says what this index pointed at
        oracle_json, expert_match = None, None
        if result[-1] is not None and self.rewards.oracle_diagnostics:
            oracle = StateOracle(result[-1], tuple(request.elements or ()), slot.screen_size)
            oracle_json, expert_match = oracle.to_json(), float(oracle.matches(output.action))
        slot.turns.append(PolicyTurn(
            prompt=output.prompt, prompt_text=output.prompt_text, thought=output.thought or "",
            num_tokens=int(output.num_tokens), token_ids=output.token_ids, token_logprobs=output.token_logprobs,
            policy_version=int(getattr(self.policy, "version", 0)), expert_action=result[-1], oracle=oracle_json,
            expert_match=expert_match, candidates=list(candidates)))
        if output.error is not None:
            stats.parse_errors += 1
        if result[0] == "raised":
            slot.trajectory.error = result[1]
            stats.env_errors += 1
            return True
        _, observation, reward, terminated, truncated, info, _expert = result
        step.reward = float(reward)
        if output.error is None and info.get("parse_error"):  # parsed, but the device could not perform it
            step.parse_error = str(info["parse_error"])
        if info.get("error"):
            slot.trajectory.error = str(info["error"])
            stats.env_errors += 1
        slot.observation, slot.info = observation, info
        return bool(terminated or truncated)

    def _finish(self, index: int, slot: _Slot, result: tuple[Any, ...], batch: RolloutBatch) -> Trajectory:
        """Close the ended episode and score its outcome while the device still shows its end state."""
        stats = batch.stats
        trajectory = slot.trajectory
        last = trajectory.steps[-1]
        terminated = result[0] == "ok" and bool(result[3])
        trajectory.truncated = not terminated
        recorded = float(slot.info.get("success", 0.0)) if terminated else 0.0
        trajectory.success = recorded
        trajectory.info["success"] = recorded
        if terminated and isinstance(last.action, Finished):
            trajectory.answer = last.action.text
        stats.episodes += 1
        stats.truncated += int(trajectory.truncated)
        base = self.envs[index].unwrapped
        failures = self.rewards.stats.verifier_failures
        t0 = time.perf_counter()
        outcome, reason = self.rewards.outcome(trajectory, device=getattr(base, "device", None),
                                               task=getattr(base, "task", None))
        stats.reward_seconds += time.perf_counter() - t0
        stats.verifier_errors += self.rewards.stats.verifier_failures - failures
        stats.successes += recorded if self.rewards.verifier is None else outcome
        trajectory.info.update(outcome_reward=outcome, verifier=reason)
        return trajectory
