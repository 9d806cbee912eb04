r"""The training loop of paper Algorithm 1 around the pieces: rollout -> returns -> critic update -> actor update.

:class:`TrainingLoop` runs a whole configured run (:class:`coach_rl.configs.RunConfig`) in its run folder
(:class:`coach_rl.run.RunDir`):

1. **policy**: a checkpoint, or (``policy_model: tiny``) a small Qwen2 built locally whose tokenizer is
   trained on the sim's expert demonstrations; optionally an SFT warm-up on those demonstrations and the
   critic's pre-training (:mod:`coach_rl.warmup`), or the policy and critic of another run (``init_from``);
2. **evaluation before** RL on held-out task instances (:mod:`coach_rl.held_out`);
3. **iterations**, each rollout -> rewards -> update -> checkpoint -> log -> evaluate:

   - **rollout**: the policy plays ``rollout_batch_size`` episodes in ``num_envs`` envs in lockstep
     (:class:`coach_rl.rollout.RolloutCollector`);
   - **rewards**: the run's :class:`coach_rl.rewards.RewardPipeline` (outcome verifier at each episode's end,
     the process reward model in one batch per round, the returns ``R_t``) turns them into
     :class:`coach_rl.records.StepRecord` objects, which go to the replay buffer;
   - **update**: the configured :class:`coach_rl.algorithms.Algorithm` (``algorithm: coach | grpo | ppo | ...``,
     looked up in the registry, never branched on here) learns from the records;
   - **checkpoint** (every ``checkpoint_every``): the policy, the algorithm's own state (optimisers,
     critic...), the replay buffer's state (its shards hard-linked), loop counters and every RNG state;
     **log**: a record in ``metrics.jsonl``; **evaluate** every ``eval_every`` iterations and at the
     ``eval_at_env_steps`` points; ``max_env_steps`` stops the collection at exactly that budget;
   - **validate** (``validation_every``, beyond the paper, off by default): sampled success on validation
     instances of their own, before training and every ``validation_every`` iterations, before that iteration's
     checkpoint; the best policy so far is kept in ``best/`` (and linked into every checkpoint);
4. **evaluation after** (of the best policy by validation when ``validation_every`` is set) and ``report.md``.

**Exact resume.** Starting a run whose folder has a checkpoint continues from it (the configuration must
be the same, except where it runs: ``ray_address`` may name a new cluster). All randomness the loop draws comes from
generators that the checkpoint saves (Python, NumPy and torch global states, the critic's and the actor's
own generators, the loop's NumPy generator for replay sampling) and every episode's seed is a function of
the iteration, so the iterations after a resume produce the same numbers as an uninterrupted run (on the
same machine and torch build). The checkpoint of iteration 0 is written right after the warm-up and the
evaluation before training, so a run killed at any later moment never redoes them.

This module says what happens when; the pieces live in modules named for them: :mod:`coach_rl.components` (the
run's tasks, env settings, policy and collector), :mod:`coach_rl.warmup`, :mod:`coach_rl.rollout_plan` (which
episodes an iteration plays), :mod:`coach_rl.rollout_metrics`, :mod:`coach_rl.checkpoints` (what a checkpoint holds,
the run-folder files beside it), :mod:`coach_rl.validation` (and ``best/``) and :mod:`coach_rl.held_out`.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from coach_rl import checkpoints, components, held_out, validation, warmup
from coach_rl.algorithms import Algorithm, UpdateContext, build_algorithm
from coach_rl.configs import RunConfig, load_config
from coach_rl.evaluation import EvalReport
from coach_rl.rollout_metrics import rollout_metrics, rollout_oracle_metrics
from coach_rl.rollout_plan import rollout_plan, task_probabilities
from coach_rl.run import RunDir, restore_replay, restore_rng_state

if TYPE_CHECKING:
    from android_gym.trajectory import Trajectory

__all__ = ["LoopState", "TrainResult", "TrainingLoop", "train"]


@dataclass
class LoopState:
    """Counters of the outer loop, saved with every checkpoint."""

    iteration: int = 0
    """Iterations completed."""
    env_steps: int = 0
    episodes: int = 0
    train_seconds: float = 0.0
    """Wall time spent in iterations (rollout + updates + checkpoints), summed over resumes."""
    policy_version: int = 0
    successes: int = 0
    """Successful training episodes so far."""
    validation_env_steps: int = 0
    """Env steps of the validation episodes (``validation_every``): counted apart, never in ``env_steps``."""
    validation_seconds: float = 0.0
    """Wall time of the validations, never in ``train_seconds``."""
    validations: list[list[float]] = field(default_factory=list)
    """The validation curve: ``[iteration, sampled success rate]`` per validation, in order."""
    best_iteration: int | None = None
    """The iteration whose policy had the highest validation success so far (ties: the earlier); in ``best/``."""
    best_score: float | None = None
    """Its validation success rate."""
    validations_since_best: int = 0
    """Validations in a row without a new best (``early_stopping_patience`` stops at that many)."""
    stopped_early: bool = False
    """Whether ``early_stopping_patience`` ended the run before its budget."""
    acknowledged: list[str] = field(default_factory=list)
    """Spool ids of the batch this checkpoint holds (collectors with a spool): a run resumed from it acknowledges them
    again, so a driver killed between the checkpoint and the acknowledgement never delivers that batch twice."""


@dataclass
class TrainResult:
    """What :func:`train` did: the run folder, final counters, evaluations before/after, the report path."""

    run_dir: Path
    state: LoopState
    eval_before: EvalReport | None = None
    eval_after: EvalReport | None = None
    report: Path | None = None
    resumed_from: int | None = None
    """The iteration of the checkpoint the run continued from (None: it started fresh)."""
    seconds: float = 0.0
    stats: dict[str, Any] = field(default_factory=dict)
    best_iteration: int | None = None
    """With ``validation_every``: the iteration whose policy the evaluation after training measured (None: off)."""

    @property
    def success_gain(self) -> float | None:
        """Overall success rate after minus before (None without both evaluations)."""
        if self.eval_before is None or self.eval_after is None:
            return None
        return self.eval_after.overall.success_rate - self.eval_before.overall.success_rate


# -- the loop ---------------------------------------------------------------------------------------------


class TrainingLoop:
    """One training run: builds (or restores) everything from a :class:`RunConfig` and runs Algorithm 1.

    Use :func:`train` for the whole pipeline; the object exposes the pieces (``policy``, ``critic``,
    ``actor``, ``replay``, ``state``) for tests and benchmarks, and :meth:`run_iteration` for one step.
    """

    def __init__(self, config: RunConfig, *, progress: bool | None = None,
                 echo: Callable[[str], None] | None = None) -> None:
        """Prepare the run folder of ``config`` (nothing is built until :meth:`setup`)."""
        if not isinstance(config, RunConfig):
            raise TypeError(f"config must be a coach_rl.configs.RunConfig (load_config(...)), got {type(config).__name__}")
        self.config = config
        self.args = config.coach
        self.loop = config.loop
        self.run = RunDir(self.args.output_dir, keep=config.loop.checkpoint_keep)
        self.progress = sys.stderr.isatty() if progress is None else bool(progress)
        self.echo = echo or (lambda msg: print(msg, file=sys.stderr, flush=True))
        self.tasks = components.run_training_tasks(config)
        self.eval_tasks = list(config.loop.eval_tasks or self.tasks)
        self.state = LoopState()
        self.rng = np.random.default_rng(int(self.args.seed))
        self.envs: list[Any] = []
        self.policy: Any = None
        self.model: Any = None
        self.tokenizer: Any = None
        self.replay: Any = None
        self.collector: Any = None
        self.rewards: Any = None  # coach_rl.rewards.RewardPipeline
        self.algorithm: Algorithm | None = None
        self.resumed_from: int | None = None
        self.eval_before: EvalReport | None = None
        self.eval_after: EvalReport | None = None
        self.stats: dict[str, Any] = {}
        self.trackers: Any = None  # coach_rl.trackers.Trackers, opened by setup()
        self._drift: Any = None  # coach_rl.diagnostics.PolicyDrift, built at the first iteration
        self._since_checkpoint: list[str] = []  # spool ids delivered since the last checkpoint
        self.policy_iteration: int | None = None
        """After :meth:`restore_best`: the iteration whose policy the model holds (evaluations record it)."""

    # -- set-up ------------------------------------------------------------------------------------------

    def setup(self, *, resume: bool = True) -> None:
        """Build everything: from the latest checkpoint when ``resume`` finds one, else fresh (warm-up + eval)."""
        torch.set_num_threads(max(1, int(os.environ.get("OMP_NUM_THREADS", torch.get_num_threads()))))
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # "Writing model shards" bars on every checkpoint
        if self.config.dropped:  # keys a base config set for another algorithm (coach_rl.configs.load_config)
            self.echo(f"[coach-rl] config {self.config.source}: {', '.join(self.config.dropped)} dropped (set for "
                      f"another algorithm; {self.loop.algorithm} does not read them)")
        checkpoint = self.run.latest_checkpoint() if resume else None
        if checkpoint is not None:
            checkpoints.check_resume_config(self.run, self.config)
        self._open_trackers(checkpoint)
        if checkpoint is not None:
            self._restore(checkpoint)
            return
        self._fresh()

    def _open_trackers(self, checkpoint: Path | None) -> None:
        """TensorBoard / W&B as ``report_to`` says (checked before any work, so a missing package fails fast)."""
        from coach_rl.trackers import open_trackers

        resumed = int(checkpoint.name.rpartition("-")[2]) if checkpoint is not None else None
        self.trackers = open_trackers(self.args.report_to, self.run.path, config=self.config.to_dict(),
                                      resumed_from=resumed, logging_dir=getattr(self.args, "logging_dir", None))

    def _log(self, record: dict[str, Any]) -> None:
        """One metrics record: appended to ``metrics.jsonl`` (the source of truth), then to the trackers."""
        self.run.log_metrics(record)
        if self.trackers:
            self.trackers.log(record)

    def _fresh(self) -> None:
        started = time.perf_counter()
        cpu_started = time.process_time()
        checkpoints.clear_run_folder(self.run, Path(self.args.replay_dir))  # an earlier run in the same folder
        self.run.write_config(self.config.to_dict())
        from transformers import set_seed

        set_seed(int(self.args.seed))
        if self.loop.init_from:
            self._warm_start(Path(self.loop.init_from))
        else:
            self._warm_up()
        if self.eval_before is None and self.loop.eval_before and self.loop.eval_instances_per_task:
            self.eval_before = self.evaluate("before")
        if self.loop.validation_every:  # the starting policy is a candidate too: RL must beat it to replace it
            self.validate()
        self.stats["setup_seconds"] = time.perf_counter() - started
        self.stats["setup_cpu_seconds"] = time.process_time() - cpu_started
        self._log({"kind": "setup", "seconds": self.stats["setup_seconds"],
                              "cpu_seconds": self.stats["setup_cpu_seconds"], **{
            k: v for k, v in self.stats.items() if k.startswith(("sft_", "critic_pretrain_"))}})
        self.save_checkpoint()

    def _warm_up(self) -> None:
        """Demonstrations, the policy (built or loaded), SFT, the trainers, critic pre-training."""
        demos = None
        needs_demos = (self.loop.policy_model == "tiny" or self.loop.sft_instances_per_task
                       or self.args.critic_pretrain_needs_demos())
        if needs_demos:
            t0 = time.perf_counter()
            demos = warmup.collect_run_demos(self.config, self.tasks)
            self.stats["demos"] = {**demos.stats.as_dict(), "records": len(demos)}
            self.echo(f"[coach-rl] {len(demos)} demonstration steps from {demos.stats.kept} expert episodes "
                      f"({time.perf_counter() - t0:.1f} s)")
        self.model, self.tokenizer = components.build_policy_model(self.config, demos)
        self.policy = components.make_policy(self.model, self.tokenizer, self.config)
        if self.loop.sft_instances_per_task and self.loop.sft_max_steps:
            self.sft(demos)
        self._build_components()
        if self.args.pretrains_critic() and self.critic is not None:
            self._critic_pretrain(demos)

    def _warm_start(self, checkpoint: Path) -> None:
        """Policy, critic and evaluation-before from another run's checkpoint (``init_from``); fresh optimisers."""
        self.model, self.tokenizer = components.load_policy_model(warmup.init_from_policy(checkpoint), self.config)
        self.policy = components.make_policy(self.model, self.tokenizer, self.config)
        self._build_components()
        # an algorithm with a critic starts from the other run's critic when it has one
        self.algorithm.load_critic(checkpoint / checkpoints.ALGORITHM_DIR) or self.algorithm.load_critic(checkpoint)
        reused = warmup.reuse_eval_before(checkpoint, self.run.path, self.config, self.eval_tasks, self.eval_seeds())
        if reused is not None:  # same policy, same held-out instances: the same evaluation before training
            self.eval_before, entry = reused
            self._log(entry)
        self.echo(f"[coach-rl] started from {checkpoint}")

    def sft(self, demos: Any) -> None:
        """SFT of the policy on the demonstrations (:func:`coach_rl.warmup.sft_warm_up`); stats ``sft_*``."""
        self.stats.update(warmup.sft_warm_up(self.model, self.tokenizer, self.policy, demos, self.config, self.echo))

    def critic_pretrain_examples(self, demos: Any) -> list[tuple[str, str, int]]:
        """The critic's pre-training triples (:func:`coach_rl.warmup.critic_examples`), PRM labels by the run's PRM."""
        prm = self.rewards.prm if self.rewards is not None else None
        return warmup.critic_examples(self.config, self.policy, demos, prm)

    def rollout_state_examples(self, episodes_per_task: int) -> list[tuple[str, str, int]]:
        """Triples at the states the warmed-up policy reaches (:func:`coach_rl.warmup.rollout_state_examples`)."""
        return warmup.rollout_state_examples(self.config, self.tasks, self.policy, self.collector, self.rewards,
                                             episodes_per_task)

    def _critic_pretrain(self, demos: Any) -> None:
        """The critic's pre-training on the demos (and ``critic_pretrain_rollouts``); stats ``critic_pretrain_*``."""
        t0 = time.perf_counter()
        examples = self.critic_pretrain_examples(demos)
        if self.args.critic_pretrain_rollouts:
            visited = self.rollout_state_examples(self.args.critic_pretrain_rollouts)
            self.stats["critic_pretrain_rollout_examples"] = len(visited)
            examples += visited
        self.stats.update(warmup.pretrain_critic(self.critic, examples, self.config, self.echo, started=t0))

    @property
    def critic(self) -> Any:
        """The algorithm's critic (Q or V) when it has one (critic pre-training, warm starts), else None."""
        return self.algorithm.critic if self.algorithm is not None else None

    def _build_components(self) -> None:
        """Replay, rewards, envs, collector and the algorithm around ``self.model`` (fresh optimisers)."""
        from coach_rl.nonfinite import attach_loop
        from coach_rl.replay import ReplayBuffer
        from coach_rl.rewards import build_reward_pipeline

        self.replay = ReplayBuffer(self.args.replay_dir, capacity=self.args.replay_size)
        self.rewards = build_reward_pipeline(self.args)
        self.envs, self.collector = components.build_collector(self.config, self.tasks, self.policy, self.rewards,
                                                               self.run.path)
        self.algorithm = build_algorithm(self.loop.algorithm, self.config, self.model, self.tokenizer)
        if self.algorithm.prm_candidates:  # extra replies per collected state for the PRM to label (Coach's critic)
            self.collector.candidates = int(self.algorithm.prm_candidates)
        self.nonfinite = attach_loop(self)  # one NaN/inf monitor: policy, rewards, actor and critic (nonfinite/*)
        self.rewards.oracle_diagnostics = bool(self.loop.oracle_diagnostics)
        if self.loop.oracle_diagnostics:
            self.algorithm.use_oracle_format(components.run_policy_format(self.config))

    # -- checkpoints --------------------------------------------------------------------------------------

    def save_checkpoint(self) -> Path:
        """Write the checkpoint of the current iteration atomically (:func:`coach_rl.checkpoints.write_checkpoint`)."""
        from coach_rl.nonfinite import check_weights

        check_weights([self.model, self.critic], self.state.iteration)  # never overwrite a good model by a NaN one
        manifest = {"algorithm": self.loop.algorithm, **asdict(self.state)}
        return checkpoints.write_checkpoint(self.run, self.state, manifest, model=self.model, tokenizer=self.tokenizer,
                                            algorithm=self.algorithm, replay=self.replay, loop_rng=self.rng,
                                            stats=self.stats, eval_before=self.eval_before)

    def _restore(self, checkpoint: Path) -> None:
        saved = checkpoints.read_loop_state(checkpoint)
        self.state = LoopState(**saved["state"])
        self.stats = dict(saved.get("stats", {}))
        self.model, self.tokenizer = components.load_policy_model(checkpoint / checkpoints.POLICY_DIR, self.config)
        self.policy = components.make_policy(self.model, self.tokenizer, self.config,
                                             version=self.state.policy_version)
        restore_replay(self.args.replay_dir, checkpoint)  # before the buffer opens (it would evict to capacity)
        self._build_components()
        self.replay.load_state_dict(json.loads((checkpoint / "replay_state.json").read_text()))
        acknowledge = getattr(self.collector, "acknowledge", None)
        if acknowledge is not None and self.state.acknowledged:  # the checkpoint holds them: never deliver them again
            acknowledge(self.state.acknowledged)
        self.algorithm.load(checkpoint / checkpoints.ALGORITHM_DIR)
        self.eval_before = checkpoints.restore_eval_before(checkpoint, self.run.path)
        checkpoints.restore_best_folder(self.run.path, checkpoint)
        self.run.truncate_metrics(self.state.iteration)
        self.rng.bit_generator.state = saved["loop_rng"]
        restore_rng_state(saved["rng"])  # last: building trainers above re-seeds the global RNGs
        self.resumed_from = self.state.iteration
        self.echo(f"[coach-rl] resumed {self.run.path} from iteration {self.state.iteration} "
                  f"({self.state.env_steps} env steps so far)")

    # -- validation (validation_every: keep the best policy) ---------------------------------------------

    def validation_seeds(self) -> list[int]:
        """Seeds of the validation instances: none trained on, demonstrated or in the held-out evaluation."""
        return validation.validation_seeds(self.config)

    def validation_due(self, iteration: int) -> bool:
        """Whether the policy after ``iteration`` is validated: every ``validation_every`` and after the last one."""
        every = int(self.loop.validation_every)
        return bool(every) and (iteration % every == 0 or self.finished(iteration))

    def validate(self) -> dict[str, Any]:
        """Sampled success of the current policy on the validation instances; kept in ``best/`` when it is the best.

        Validating changes nothing the training draws (:func:`coach_rl.validation.sample_validation`). Its episodes
        count in ``validation_env_steps``, never in ``env_steps`` or the ``max_env_steps`` budget.
        """
        t0 = time.perf_counter()
        state = self.state
        report, episodes = validation.sample_validation(self.policy, self.config, self.eval_tasks, state.iteration,
                                                        state.env_steps)
        score = float(report.overall.success_rate)
        if validation.note_validation(state, score, episodes, int(self.loop.early_stopping_patience)):
            validation.save_best(self.run.path, self.model, self.tokenizer, state, report)
        seconds = time.perf_counter() - t0
        state.validation_seconds += seconds
        record = validation.validation_record(state, report, seconds)
        self._log(record)
        self.echo(f"[coach-rl] validation after iteration {state.iteration}: sampled success {100 * score:.1f}% over "
                  f"{report.overall.episodes} episodes; best {100 * state.best_score:.1f}% "
                  f"(iteration {state.best_iteration})"
                  + ("; stopping early" if state.stopped_early else ""))
        return record

    def restore_best(self) -> int | None:
        """Load the best policy by validation into the model (the evaluation after training then measures it).

        The last policy is validated first when it was not (a caller running its own loop); returns the best
        iteration, or None when validation is off.
        """
        if not self.loop.validation_every:
            return None
        if not self.state.validations or int(self.state.validations[-1][0]) != self.state.iteration:
            self.validate()
        best = self.state.best_iteration
        if best is not None and best != self.state.iteration:
            validation.load_best_policy(self.model, self.run.path)
        self.policy_iteration = best
        if not any(r.get("kind") == "best" for r in self.run.read_metrics("best")):
            self._log(validation.best_record(self.state))
        self.echo(f"[coach-rl] kept the policy of iteration {best} (validation sampled success "
                  f"{100 * (self.state.best_score or 0.0):.1f}%) of {self.state.iteration}"
                  + (", stopped early" if self.state.stopped_early else ""))
        return best

    # -- one iteration ------------------------------------------------------------------------------------

    def rollout_plan(self, iteration: int) -> tuple[list[int], list[dict[str, Any]]]:
        """Seeds and tasks of this iteration's episodes (:func:`coach_rl.rollout_plan.rollout_plan`), weighed by the
        algorithm's curriculum: a function of the iteration only (resume-safe)."""
        return rollout_plan(self.config, self.tasks, iteration, self.algorithm.episodes_per_instance,
                            self._task_weights())

    def _task_weights(self) -> np.ndarray | None:
        """Sampling probabilities over the training tasks from the algorithm's curriculum (None: round-robin)."""
        return task_probabilities(self.algorithm.task_weights(self.tasks), self.tasks)

    def run_iteration(self) -> dict[str, Any]:
        """One iteration of Algorithm 1, stage by stage; returns (and logs) its metrics record."""
        started, cpu_started = time.perf_counter(), time.process_time()
        iteration = self.state.iteration + 1
        reward_stats, nonfinite_before = dict(self.rewards.stats.as_dict()), self.nonfinite.snapshot()
        batch = self._collect(iteration)  # 1. rollouts, with their rewards and returns
        t_store = time.perf_counter()
        self._store(batch)  # 2. the replay buffer
        record: dict[str, Any] = {"kind": "train", "iteration": iteration}
        record.update(self._rollout_record(batch, reward_stats, time.perf_counter() - started, t_store))
        record.update(self._update(batch, iteration, nonfinite_before))  # 3. the algorithm learns
        self._publish()  # 4. workers holding a copy of the policy get the new weights
        self._advance(iteration, batch, record)
        record["time/iteration_compute"] = time.perf_counter() - started
        validation_seconds = self._validation_stage(iteration, record)  # 5. the best policy so far, early stop
        checkpoint_seconds = self._checkpoint_stage(iteration, started, validation_seconds)  # 6.
        record.update({
            "env_steps": self.state.env_steps, "episodes": self.state.episodes,
            "policy_version": self.state.policy_version, "wall_time": self.state.train_seconds,
            "time/checkpoint": checkpoint_seconds,
            "time/iteration": time.perf_counter() - started - validation_seconds,
            "cpu/iteration": time.process_time() - cpu_started,
        })
        self._log(record)  # 7. metrics.jsonl and the trackers
        return record

    def _collect(self, iteration: int) -> Any:
        """This iteration's episodes: the rollout plan's seeds, stopped at the env-step budget when one is left."""
        seeds, options = self.rollout_plan(iteration)
        left = self.steps_left()  # stop at the budget, not past it (the in-process collector; Ray's ends its round)
        budget = {"max_steps": left} if left is not None and getattr(self.collector, "exact_budget", False) else {}
        if self.algorithm.reply_chooser is not None:  # e.g. Coach executing its critic's pick of several replies
            budget["choose"] = self.algorithm.reply_chooser
        batch = self.collector.collect(len(seeds), seeds=seeds, task_options=options, greedy=False, **budget)
        self._since_checkpoint.extend(getattr(batch, "uids", None) or [])
        return batch

    def _store(self, batch: Any) -> None:
        """Each trajectory with its step records into the replay buffer (atomically per trajectory)."""
        trajectories = list(batch.trajectories)
        by_episode: dict[str, list[Any]] = {}
        for record in batch.records:
            by_episode.setdefault(record.episode_id, []).append(record)
        if len(by_episode) != len(trajectories):
            raise RuntimeError(f"the collector gave {len(trajectories)} trajectories but records of {len(by_episode)}")
        for trajectory, records in zip(trajectories, by_episode.values()):
            if len(records) != len(trajectory.steps):
                raise RuntimeError(f"a trajectory of {len(trajectory.steps)} steps came with {len(records)} records")
            trajectory.info["replay_id"] = self.replay.add(trajectory, records)

    def _rollout_record(self, batch: Any, reward_stats: dict[str, Any], rollout_seconds: float,
                        t_store: float) -> dict[str, Any]:
        """The rollout's metrics: success and steps, the collector's own, the reward calls, the oracle's view."""
        out = rollout_metrics(batch, rollout_seconds)
        out["time/replay"] = time.perf_counter() - t_store
        out.update({k: v for k, v in getattr(batch, "metrics", {}).items() if isinstance(v, (int, float))})
        out.update({k: v - reward_stats[k] for k, v in self.rewards.stats.as_dict().items()})
        uses_prm = self.rewards is not None and self.rewards.prm is not None
        out.update(rollout_oracle_metrics(batch.records, prm=uses_prm))
        return out

    def _update(self, batch: Any, iteration: int, nonfinite_before: Any) -> dict[str, Any]:
        """The algorithm's update on this iteration's records, its NaN/inf events and the KL to the warm-up policy."""
        drift = self._policy_drift(batch.records)  # built from the policy before its first update
        t0 = time.perf_counter()
        context = UpdateContext(replay=self.replay, rng=self.rng, iteration=iteration,
                                policy_version=int(self.policy.version))
        out = dict(self.algorithm.update(batch.records, context))
        out.update(self.nonfinite.metrics(since=nonfinite_before))  # this iteration's NaN/inf events, rollout too
        out.setdefault("time/actor", time.perf_counter() - t0)
        if drift is not None:
            t_kl = time.perf_counter()
            out["diag/kl_to_warmup"] = drift.kl(self.model)
            out["time/diagnostics"] = time.perf_counter() - t_kl
        return out

    def _publish(self) -> None:
        """A new policy version; collectors whose workers hold their own copy of the policy get its weights."""
        self.policy.version += 1
        publish = getattr(self.collector, "publish_policy", None)
        if publish is not None:
            publish(self.model, int(self.policy.version))

    def _advance(self, iteration: int, batch: Any, record: Mapping[str, Any]) -> None:
        """The run's counters after this iteration."""
        self.state.iteration = iteration
        self.state.env_steps += int(record["rollout/steps"])
        self.state.episodes += len(batch.trajectories)
        self.state.successes += int(record["rollout/successes"])
        self.state.policy_version = int(self.policy.version)

    def _validation_stage(self, iteration: int, record: dict[str, Any]) -> float:
        """Validation when due (before the checkpoint, which then holds the best policy and an early stop); seconds."""
        seconds = 0.0
        if self.validation_due(iteration):
            t_val = time.perf_counter()
            record.update({k: v for k, v in self.validate().items() if k.startswith("validation/")})
            seconds = time.perf_counter() - t_val
        if self.loop.validation_every:
            record["validation/env_steps"] = self.state.validation_env_steps
            record["validation/best_iteration"] = self.state.best_iteration
        record["time/validation"] = seconds
        return seconds

    def _checkpoint_stage(self, iteration: int, started: float, validation_seconds: float) -> float:
        """A checkpoint every ``checkpoint_every`` iterations and at the end (the collector may then forget what it
        holds); adds the iteration's training time to the run's; the checkpoint's seconds."""
        every = int(self.args.checkpoint_every)
        if not ((every and iteration % every == 0) or self.finished(iteration)):
            self.state.train_seconds += time.perf_counter() - started - validation_seconds
            return 0.0
        t1 = time.perf_counter()
        self.state.train_seconds += time.perf_counter() - started - validation_seconds
        self.state.acknowledged = list(self._since_checkpoint)
        self.save_checkpoint()
        acknowledge = getattr(self.collector, "acknowledge", None)
        if acknowledge is not None:  # checkpointed: the collector's spool may forget these trajectories
            acknowledge(self.state.acknowledged)
        self._since_checkpoint = []
        seconds = time.perf_counter() - t1
        self.state.train_seconds += seconds
        return seconds

    def _policy_drift(self, records: Sequence[Any]) -> Any:
        """The KL probe (:class:`coach_rl.diagnostics.PolicyDrift`): built once from the first iteration's prompts
        while the policy is still the warm-up's, kept in the run folder so a resumed run measures against it."""
        n = int(self.loop.diagnostics_kl_states)
        if not n:
            return None
        if self._drift is None:
            from coach_rl.diagnostics import PolicyDrift

            path = self.run.path / checkpoints.DRIFT_PROBE_NAME
            if path.is_file():
                self._drift = PolicyDrift.load(path)
            else:
                prompts = list(dict.fromkeys(r.prompt_text for r in records if r.prompt_text))[:n]
                if not prompts:
                    return None
                self._drift = PolicyDrift.build(self.model, self.tokenizer, prompts,
                                                max_new_tokens=int(self.args.max_completion_length or 32))
                self._drift.save(path)
        return self._drift

    # -- evaluation ---------------------------------------------------------------------------------------

    def eval_seeds(self) -> list[int]:
        """Seeds of the held-out evaluation instances (the same before and after training)."""
        return held_out.eval_seeds(self.config)

    def evaluate(self, label: str) -> EvalReport:
        """Greedy evaluation on the held-out instances; writes ``eval_<label>.json`` and a metrics record."""
        return self.evaluate_episodes(label)[0]

    def evaluate_episodes(self, label: str) -> tuple[EvalReport, list[Trajectory]]:
        """:meth:`evaluate`, also giving the evaluation's episodes (:func:`coach_rl.held_out.evaluate_held_out`)."""
        return held_out.evaluate_held_out(self.policy, self.config, self.eval_tasks, label, self.run.path,
                                          iteration=self.state.iteration, env_steps=self.state.env_steps,
                                          policy_iteration=self.policy_iteration, log=self._log, echo=self.echo)

    # -- the whole run ------------------------------------------------------------------------------------

    def steps_left(self) -> int | None:
        """Env steps left in the ``max_env_steps`` budget (None: no budget)."""
        budget = self.loop.max_env_steps
        return None if budget is None else max(0, int(budget) - self.state.env_steps)

    def evaluation_due(self) -> bool:
        """Whether an ``eval_at_env_steps`` point has been reached that no evaluation covers yet."""
        return held_out.evaluation_due(self.run.path, self.loop.eval_at_env_steps, self.state.env_steps)

    def finished(self, iteration: int | None = None) -> bool:
        """Whether the run is done after ``iteration`` (default: the last one completed): total_iterations reached,
        or the env-step budget ``max_env_steps`` spent, or ``early_stopping_patience`` validations without a new best."""
        done = self.state.iteration if iteration is None else iteration
        budget = self.loop.max_env_steps
        return (done >= int(self.args.total_iterations) or (budget is not None and self.state.env_steps >= budget)
                or self.state.stopped_early)

    def train(self) -> TrainResult:
        """Run the remaining iterations, then the evaluation after training and the report."""
        started = time.perf_counter()
        total = int(self.args.total_iterations)
        bar = None
        if self.progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=total, initial=self.state.iteration, desc=f"{self.loop.algorithm} iterations",
                       dynamic_ncols=True)
        try:
            while not self.finished():
                record = self.run_iteration()
                if bar is not None:
                    bar.update(1)
                    bar.set_postfix(sr=f"{record['rollout/success_rate']:.2f}", steps=record["env_steps"])
                every = self.loop.eval_every
                if every and self.state.iteration % every == 0 and not self.finished():
                    self.evaluate(f"iter{self.state.iteration:04d}")
                if self.evaluation_due() and not self.finished():  # eval_at_env_steps (the last: evaluation after)
                    self.evaluate(f"steps{self.state.env_steps:06d}")
        finally:
            if bar is not None:
                bar.close()
        best = self.restore_best()  # validation_every: the evaluation after measures the best policy, not the last
        after = self.run.path / "eval_after.json"
        if self.loop.eval_after and self.loop.eval_instances_per_task:
            sampled = self.run.path / "eval_after_sampled.json"
            complete = after.is_file() and (sampled.is_file() or not self.loop.eval_samples_per_instance)
            # a run killed between the greedy and the sampled evaluation after does both again
            if complete and self.resumed_from is not None and self.resumed_from == self.state.iteration:
                self.eval_after = EvalReport.from_dict(json.loads(after.read_text()))
            else:
                self.eval_after = self.evaluate("after")
        report = None
        if self.loop.write_report:
            from coach_rl.report import write_report

            report = write_report(self.run)
        return TrainResult(run_dir=self.run.path, state=self.state, eval_before=self.eval_before,
                           eval_after=self.eval_after, report=report, resumed_from=self.resumed_from,
                           seconds=time.perf_counter() - started, stats=dict(self.stats), best_iteration=best)

    def close(self) -> None:
        """Close the envs and the trackers."""
        for env in self.envs:
            env.close()
        self.envs = []
        close = getattr(self.collector, "close", None)
        if close is not None:
            close()
        if self.trackers is not None:
            self.trackers.close()


def train(config: RunConfig | str, overrides: Sequence[str] | None = None, *, resume: bool = True,
          progress: bool | None = None, echo: Callable[[str], None] | None = None) -> TrainResult:
    """Run a configured training job end to end (see the module docstring); resumes when a checkpoint exists.

    ``config`` is a :class:`RunConfig` or a config name/path for :func:`coach_rl.configs.load_config`
    (with ``overrides``). ``resume=False`` starts over in the same folder.
    """
    if not isinstance(config, RunConfig):
        config = load_config(config, overrides)
    elif overrides:
        raise ValueError("overrides apply when config is a name or path; edit the RunConfig instead")
    loop = TrainingLoop(config, progress=progress, echo=echo)
    try:
        loop.setup(resume=resume)
        return loop.train()
    finally:
        loop.close()
