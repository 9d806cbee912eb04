r"""A fair comparison of algorithms: each tuned on validation instances, then all trained on one env-step budget.

``coach-rl sweep`` answers "does Android Coach reach a success rate with fewer env steps than the baselines?" the
way a reviewer would ask it to be answered:

1. **tune** (on validation instances, never the test ones): every algorithm trains from the same starting
   checkpoint (``init_from``, e.g. a ``coach-rl warmup``) at every learning rate of the grid, on the budget, with a
   tuning seed of its own; each run is scored by its sampled success on the validation instances (seeds from
   ``validation_seed_offset``). Algorithms with a critic (Coach, Coach K = 1) then also sweep the critic's
   learning rate at their best learning rate, then the PRM weight ``w_p`` at both (coordinate search; the paper
   leaves both to the user). Further stages (``--tune LABEL:KEY=V1,V2``) try any other config field of one
   algorithm at its best settings so far, e.g. how hard each one learns from the env steps it paid for (Coach's
   ``actor_states_per_iteration``, the baselines' ``num_iterations``). A best learning rate at the edge of its grid
   is tried one step further, up to ``extend_edges`` times. Ties go to the setting listed first.
2. **final**: every algorithm at its own best setting, from the same checkpoint, on exactly the same env-step
   budget (``max_env_steps`` stops the collection at the budget, it never overshoots), for every seed, evaluated
   on the held-out test instances before training, at env-step points 1.25x apart and after the budget, so that
   "reaches X in N env steps" resolves a 1.25x difference.
3. **report** (``sweep.json``, ``report.md``): per algorithm, sampled and greedy success against env steps (mean
   and sd over seeds, and a Wilson interval over the pooled episodes), the env steps to reach the best baseline's
   final sampled success, training wall time by phase, policy replies and critic scores computed, and the
   wall time projected at emulator latency, and ``curves.png`` plots success against env steps (the sim's env time replaced by ``EMULATOR_SECONDS_PER_STEP`` per
   step). The chosen settings go to ``tuned/<config>-<algorithm>.yaml`` (``extends`` the config, with the
   sweep's provenance in comments); ``--write-configs DIR`` writes them there too (the shipped configs folder,
   where ``tools/main_job.sh COMPARE=...`` finds them).

Every run is a ``coach-rl train`` process in a folder of its own under ``--out``; re-running the same command
skips the runs already finished and resumes the others, so a killed sweep loses nothing.
"""

from __future__ import annotations

import json
import math
import os
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "ALGORITHMS",
    "EMULATOR_SECONDS_PER_STEP",
    "SweepPlan",
    "check_equal_budgets",
    "curve_points",
    "plot_curves",
    "run_sweep",
    "steps_to_reach",
]

ALGORITHMS: dict[str, dict[str, Any]] = {
    "coach": {"algorithm": "coach"},
    "coach_k1": {"algorithm": "coach_sssa"},
    "grpo": {"algorithm": "grpo"},
    "ppo": {"algorithm": "ppo"},
    "dgrpo": {"algorithm": "dgrpo"},
}
"""The compared algorithms by label: the config keys that make each (Coach's K is the config's num_generations;
``coach_k1`` is the critic with one action per state, the SSSA ablation). Any other registered algorithm name can be
given as its own label."""

def has_q_critic(algorithm: str) -> bool:
    """Whether ``algorithm``'s config has Android Coach's Q critic (:class:`coach_rl.config.QCriticArguments`: coach,
    coach_sssa): the critic with its own learning rate, whose returns use the PRM's r_p (w_p), tuned by the sweep."""
    from coach_rl.algorithms import config_class
    from coach_rl.arguments import QCriticArguments

    return issubclass(config_class(algorithm), QCriticArguments)


EMULATOR_SECONDS_PER_STEP = 1.1
"""Seconds an emulator spends on one env step in android-gym's ``emulator`` latency preset: the action (tap,
0.15 s), the UI dump (0.7 s) and the screenshot (0.25 s). Real AndroidWorld steps with settle waits take longer."""

_DONE = "sweep_done.json"
_SWEEP_KEYS = ("algorithm", "seed", "init_from", "output_dir", "max_env_steps", "eval_seed_offset", "eval_at_env_steps")
"""Config keys every run's command sets itself: neither an override nor a tuning stage may set them."""
_RATE_KEYS = ("learning_rate", "critic_learning_rate")
"""Grids searched on a log scale, extended past an edge that wins (``SweepPlan.extend_edges``)."""


@dataclass
class SweepPlan:
    """What a sweep runs; every list is in the order it is tried and reported."""

    config: str
    init_from: str
    out: str
    env_steps: int
    algorithms: list[str] = field(default_factory=lambda: list(ALGORITHMS))
    learning_rates: list[float] = field(default_factory=lambda: [1e-5, 4e-5, 1e-4, 2e-4, 4e-4])
    critic_learning_rates: list[float] = field(default_factory=lambda: [1e-5, 3e-5, 1e-4])
    w_p: list[float] = field(default_factory=lambda: [0.0, 0.2, 0.5])
    seeds: list[int] = field(default_factory=lambda: [0, 1, 2])
    tune_seeds: list[int] = field(default_factory=lambda: [100])
    """Every setting is trained once per tuning seed and scored by the mean: more than one guards against a setting
    that won on one seed and collapses on others."""
    validation_instances: int = 4
    validation_samples: int = 4
    curve_points: int = 4
    eval_samples: int | None = None
    overrides: list[str] = field(default_factory=list)
    jobs: int = 2
    extend_edges: int = 2
    stages: list[str] = field(default_factory=list)
    """Further coordinate stages after the built-in ones, ``LABEL:KEY=V1,V2,...`` each, in order: the algorithm
    ``LABEL`` also tries each value of the config field ``KEY`` at its best settings so far (e.g.
    ``coach:actor_states_per_iteration=16,32,64`` or ``grpo:num_iterations=1,2,4``: how hard each learns from
    the env steps it paid for). A key may come back in a later stage (``coach:learning_rate=...`` again)."""

    def extra_stages(self, label: str) -> list[tuple[str, list[Any]]]:
        """``stages`` of ``label`` as ``(key, values)``, values read as YAML scalars read them (int, float, text)."""
        out = []
        for spec in self.stages:
            who, _, rest = spec.partition(":")
            key, eq, values = rest.partition("=")
            if not (who and key and eq and values.strip()):
                raise ValueError(f"a tuning stage is LABEL:KEY=V1,V2,..., got {spec!r}")
            if who.strip() == label:
                out.append((key.strip(), [_scalar(v) for v in values.split(",") if v.strip()]))
        return out

    def check(self) -> list[str]:
        """Errors for a plan that cannot run; warnings (returned) for one that is not a fair sweep as it stands."""
        if self.env_steps < 1:
            raise ValueError(f"env_steps must be >= 1, got {self.env_steps}")
        if not self.algorithms:
            raise ValueError("no algorithms to compare")
        if not self.learning_rates or any(not (lr > 0) for lr in self.learning_rates):
            raise ValueError(f"learning rates must be > 0, got {self.learning_rates}")
        if not self.tune_seeds or len(set(self.tune_seeds)) != len(self.tune_seeds):
            raise ValueError(f"tune_seeds must be distinct seeds, at least one, got {self.tune_seeds}")
        for tune_seed in self.tune_seeds:
            if tune_seed in self.seeds:
                raise ValueError(f"the tuning seed {tune_seed} is one of the final seeds {self.seeds}: tuning must "
                                 "not train the runs it then reports")
        if self.jobs < 1:
            raise ValueError(f"jobs must be >= 1, got {self.jobs}")
        if self.extend_edges < 0:
            raise ValueError(f"extend_edges must be >= 0, got {self.extend_edges}")
        for spec in self.stages:
            label = spec.partition(":")[0].strip()
            if label not in self.algorithms:
                raise ValueError(f"the tuning stage {spec!r} names {label!r}, which is not one of the algorithms "
                                 f"compared ({', '.join(self.algorithms)})")
        for label in self.algorithms:
            for key, _values in self.extra_stages(label):
                if key in _SWEEP_KEYS:
                    raise ValueError(f"{key} is set by the sweep itself; a tuning stage cannot try values of it")
        for key in (*_SWEEP_KEYS, "learning_rate"):
            if any(o.split("=", 1)[0] == key for o in self.overrides):
                raise ValueError(f"{key} is set by the sweep itself; it cannot be an override")
        warnings = []
        lrs = sorted(self.learning_rates)
        if len(lrs) < 4 or lrs[-1] / lrs[0] < 10:
            warnings.append(f"the learning-rate grid {self.learning_rates} has fewer than 4 values or spans less "
                            "than 10x: not a sweep that shows each algorithm at its best")
        if len(self.seeds) < 3:
            warnings.append(f"{len(self.seeds)} final seed(s): a comparison needs at least 3")
        return warnings


def _scalar(text: str) -> Any:
    """A stage value as YAML reads a scalar: ``16`` an int, ``1e-4`` / ``0.2`` a float, anything else the text."""
    text = text.strip()
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


_WHERE_KEYS = ("output_dir", "replay_dir", "logging_dir")
"""Config keys that say where a run's files lie, not how it trains."""


def _value(config: Any, key: str) -> Any:
    """A run config's value of ``key``, a loop field or a CoachConfig (TRL) one."""
    return getattr(config.loop, key) if hasattr(config.loop, key) else getattr(config.coach, key, None)


def algorithm_overrides(label: str) -> dict[str, Any]:
    """The config keys of an algorithm label (:data:`ALGORITHMS`, or a registered algorithm's own name)."""
    return dict(ALGORITHMS.get(label, {"algorithm": label}))


def curve_points(budget: int, n: int, ratio: float = 1.25) -> list[int]:
    """``n`` evaluation points below the budget, each ``ratio`` times fewer env steps than the next (ascending)."""
    points = {max(1, round(budget / ratio ** k)) for k in range(1, n + 1)}
    return sorted(p for p in points if p < budget)


def _short(value: Any) -> str:
    """A setting's value as folder names and reports show it (a float in its shortest form)."""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _slug(settings: Mapping[str, Any]) -> str:
    return "-".join(f"{k}{_short(v)}" for k, v in settings.items()) or "default"


def _settings_text(settings: Mapping[str, Any]) -> str:
    """``key=value, ...`` as a report shows settings."""
    return ", ".join(f"{k}={_short(v)}" for k, v in settings.items())


def _fmt(value: Any) -> str:
    """A value as YAML and ``key=value`` read it back (a float always with a point: YAML 1.1 reads 4e-05 as text)."""
    if isinstance(value, float):
        text = f"{value:.12f}".rstrip("0")
        return text + "0" if text.endswith(".") else text
    return str(value)


@dataclass
class Job:
    """One ``coach-rl train`` run of the sweep."""

    stage: str
    label: str
    settings: dict[str, Any]
    seed: int
    path: Path
    overrides: list[str]

    def done(self) -> dict[str, Any] | None:
        marker = self.path / _DONE
        return json.loads(marker.read_text()) if marker.is_file() else None


class Sweep:
    """Runs a :class:`SweepPlan` (see the module docstring); ``echo`` gets one line per event."""

    def __init__(self, plan: SweepPlan, echo: Callable[[str], None] = print) -> None:
        self.plan = plan
        self.out = Path(plan.out)
        self.echo = echo
        self.warnings = plan.check()
        self.points = curve_points(plan.env_steps, plan.curve_points)
        self._base: dict[str, dict[str, Any]] = {}

    # -- runs -----------------------------------------------------------------------------------------

    def overrides(self, label: str) -> list[str]:
        """The plan's overrides that ``label``'s algorithm has: one of another algorithm's keys (``critic_*`` for
        GRPO) is left out of its runs, as a run config of that algorithm would reject it."""
        from coach_rl.configs import overrides_for

        return overrides_for(algorithm_overrides(label)["algorithm"], self.plan.overrides)[0]

    def base(self, label: str) -> dict[str, Any]:
        """The swept config's own values for ``label`` (before any tuned setting)."""
        if label not in self._base:
            from coach_rl.configs import load_config

            overrides = [*self.overrides(label), *(f"{k}={_fmt(v)}" for k, v in algorithm_overrides(label).items())]
            config = load_config(self.plan.config, overrides)
            values = config.to_dict()
            # to_dict leaves out TRL's fields at their defaults; a stage may tune one (num_iterations)
            for key, _ in self.plan.extra_stages(label):
                if key not in values:
                    if not hasattr(config.coach, key):
                        raise ValueError(f"the tuning stage of {label} names {key!r}, which is no config field")
                    values[key] = getattr(config.coach, key)
            self._base[label] = values
        return self._base[label]

    def job(self, stage: str, label: str, settings: Mapping[str, Any], seed: int) -> Job:
        plan = self.plan
        # a tuning run is named by its learning rate and the later keys that differ from the config's own values,
        # so a later stage's try of the config's value is the run the earlier stage already made
        named = {k: v for k, v in settings.items() if k == "learning_rate" or self.base(label).get(k) != v}
        folder = self.out / stage / label / _slug(named)
        if stage != "tune":  # the final runs of one setting, one folder per seed
            folder = folder / f"seed{seed}"
        elif seed != plan.tune_seeds[0]:  # a further tuning seed's run of a setting, beside the first one's
            folder = folder.with_name(f"{folder.name}-tuneseed{seed}")
        keys = {**algorithm_overrides(label), **settings}
        overrides = [*self.overrides(label), *(f"{k}={_fmt(v)}" for k, v in keys.items()), f"seed={seed}",
                     f"init_from={plan.init_from}", f"max_env_steps={plan.env_steps}", "total_iterations=100000",
                     f"output_dir={folder}", "write_report=false"]
        if stage == "tune":  # scored on validation instances: disjoint from the test ones the final runs report
            overrides += [f"eval_seed_offset={self.base(label)['validation_seed_offset']}",
                          f"eval_instances_per_task={plan.validation_instances}",
                          f"eval_samples_per_instance={plan.validation_samples}", "eval_before=false"]
        else:
            if self.points:
                overrides.append("eval_at_env_steps=" + ",".join(str(p) for p in self.points))
            if plan.eval_samples is not None:
                overrides.append(f"eval_samples_per_instance={plan.eval_samples}")
        return Job(stage, label, dict(settings), seed, folder, overrides)

    def run_jobs(self, jobs: Sequence[Job]) -> None:
        """Run the unfinished jobs, ``plan.jobs`` at a time, each a ``coach-rl train`` process with one torch thread.

        A finished run is reused only when it was trained with the configuration the job asks for now: a run folder
        is named by the settings that differ from the swept config, so after the config changed the same name can
        mean another run (a ValueError names the folder and the keys)."""
        for job in jobs:
            if job.done() is not None:
                self.check_reused(job)
        todo = [j for j in jobs if j.done() is None]
        running: list[tuple[Job, subprocess.Popen, Any, float]] = []
        env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
        failed: list[str] = []
        try:
            self._run(todo, running, env, failed)
        finally:  # a sweep stopped (Ctrl-C, an error) stops its runs too: a second sweep must not race orphans
            for _job, proc, log, _ in running:
                if proc.poll() is None:
                    proc.terminate()
                    proc.wait()
                log.close()
        if failed:
            raise RuntimeError("sweep runs failed: " + "; ".join(failed))

    def check_reused(self, job: Job) -> None:
        """Refuse a finished run whose saved ``config.yaml`` differs from what ``job`` would train now."""
        saved = job.path / "config.yaml"
        if not saved.is_file():
            return
        from coach_rl.configs import load_config

        want, ran = load_config(self.plan.config, job.overrides), load_config(str(saved), drop_unowned=True)
        # to_dict lists a TRL field only when set explicitly: a key one side leaves at its default is no difference
        # and where the run folder lies (a sweep folder moved or linked elsewhere) is not what the run trained with
        differences = {k: pair for k, pair in want.differences(ran, ignore=_WHERE_KEYS).items()
                       if _value(want, k) != _value(ran, k)}
        if differences:
            keys = ", ".join(f"{k} (this sweep: {now!r}, the run: {then!r})" for k, (now, then) in differences.items())
            raise ValueError(f"{job.path} was trained with another configuration than this sweep asks for: {keys}. "
                             "The swept config or the overrides changed since; use a new --out, or delete that run")

    def _run(self, todo: list[Job], running: list[tuple[Job, subprocess.Popen, Any, float]], env: dict[str, str],
             failed: list[str]) -> None:
        while todo or running:
            while todo and len(running) < self.plan.jobs:
                job = todo.pop(0)
                job.path.parent.mkdir(parents=True, exist_ok=True)
                log = open(job.path.parent / f"{job.path.name}.log", "a", encoding="utf-8")  # noqa: SIM115
                cmd = [sys.executable, "-m", "coach_rl.cli", "train", "--config", self.plan.config, *job.overrides,
                       "--no-progress"]
                log.write(f"$ {shlex.join(cmd)}\n")
                log.flush()
                self.echo(f"[sweep] {job.stage} {job.label} {_slug(job.settings)} seed {job.seed}: {job.path}")
                running.append((job, subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env), log,
                                time.perf_counter()))
            time.sleep(0.5)
            for item in list(running):
                job, proc, log, started = item
                if proc.poll() is None:
                    continue
                running.remove(item)
                log.close()
                if proc.returncode != 0:
                    failed.append(f"{job.path} (exit {proc.returncode}; log {job.path.parent / job.path.name}.log)")
                    continue
                (job.path / _DONE).write_text(json.dumps({"seconds": time.perf_counter() - started,
                                                          "settings": job.settings, "seed": job.seed}))

    # -- tuning ---------------------------------------------------------------------------------------

    def score(self, job: Job) -> float:
        """A tuning run's validation score: its sampled success on the validation instances after the budget."""
        report = job.path / ("eval_after_sampled.json" if self.plan.validation_samples else "eval_after.json")
        return float(json.loads(report.read_text())["overall"]["success_rate"])

    def trial(self, label: str, settings: Mapping[str, Any]) -> list[Job]:
        """The tuning runs of one setting: one per tuning seed."""
        return [self.job("tune", label, settings, seed) for seed in self.plan.tune_seeds]

    def trial_score(self, trial: Sequence[Job]) -> float:
        """A setting's validation score: the mean over its tuning seeds."""
        return statistics.fmean(self.score(j) for j in trial)

    def tune(self, label: str) -> dict[str, Any]:
        """Coordinate search on validation instances: learning rate, then (critic algorithms) critic lr, then w_p,
        then the plan's further stages of ``label``."""
        plan = self.plan
        stages: list[tuple[str, list[Any]]] = [("learning_rate", plan.learning_rates)]
        if has_q_critic(algorithm_overrides(label)["algorithm"]):
            stages += [("critic_learning_rate", plan.critic_learning_rates), ("w_p", plan.w_p)]
        stages += plan.extra_stages(label)
        best: dict[str, Any] = {}
        tried: list[dict[str, Any]] = []
        for key, values in stages:
            if not values:
                continue
            values = list(values)
            if key in best and best[key] not in values:  # a key tuned before: its incumbent competes (its run exists)
                values.insert(0, best[key])
            if len(set(values)) == 1:  # one candidate: nothing to choose, so no validation runs are spent on it
                best[key] = values[0]
                self.echo(f"[sweep] {label}: {key} = {values[0]!r} (the only value given: not tuned)")
                continue
            trials = [self.trial(label, {**best, key: v}) for v in values]
            self.run_jobs([j for t in trials for j in t])
            scored = [(self.trial_score(t), i, t) for i, t in enumerate(trials)]
            top = max(scored, key=lambda t: (t[0], -t[1]))
            # a best learning rate at the edge of the grid may not be the best: go one step further (the grid's own
            # ratio between its two outermost values on that side), up to plan.extend_edges times
            for _ in range(plan.extend_edges if key in _RATE_KEYS and len(set(values)) > 1 else 0):
                ordered = sorted(set(values))
                v = top[2][0].settings[key]
                if v == ordered[-1]:
                    new = v * v / ordered[-2]
                elif v == ordered[0]:
                    new = v * v / ordered[1]
                else:
                    break
                self.echo(f"[sweep] {label}: the best {key} {v:g} is the grid's edge: trying {new:g} too")
                values.append(new)
                trials.append(self.trial(label, {**best, key: new}))
                self.run_jobs(trials[-1])
                scored.append((self.trial_score(trials[-1]), len(trials) - 1, trials[-1]))
                top = max(scored, key=lambda t: (t[0], -t[1]))
            for s, _, t in scored:
                tried.append({"settings": t[0].settings, "validation_sampled_success": s,
                              "per_tune_seed": [self.score(j) for j in t], "run": str(t[0].path)})
            best = dict(top[2][0].settings)
            self.echo(f"[sweep] {label}: {key} = {best[key]!r} (validation sampled success {top[0]:.3f})")
        unique = {t["run"]: t for t in tried}  # a run a later stage reused is listed once, with its full settings
        return {"best": best, "tried": list(unique.values())}

    # -- the whole sweep --------------------------------------------------------------------------------

    def run(self) -> dict[str, Any]:
        plan = self.plan
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "plan.json").write_text(json.dumps(asdict(plan), indent=2))
        for warning in self.warnings:
            self.echo(f"[sweep] warning: {warning}")
        for label in plan.algorithms:  # a config or stage key that cannot load fails now, before any run
            self.base(label)
        tuned = {label: self.tune(label) for label in plan.algorithms}
        finals = {label: [self.job("final", label, tuned[label]["best"], s) for s in plan.seeds]
                  for label in plan.algorithms}
        self.run_jobs([j for jobs in finals.values() for j in jobs])
        result = summarize(finals, plan, tuned, self.points)
        result["warnings"] = self.warnings
        (self.out / "sweep.json").write_text(json.dumps(result, indent=2))
        (self.out / "report.md").write_text(markdown(result))
        plot_curves(result, self.out / "curves.png")
        written = write_tuned_configs(result, self.out / "tuned")
        self.echo(f"[sweep] wrote {self.out / 'sweep.json'}, {self.out / 'report.md'} and "
                  f"{len(written)} tuned configs in {self.out / 'tuned'}")
        return result


def run_sweep(plan: SweepPlan, echo: Callable[[str], None] = print) -> dict[str, Any]:
    """Tune, train and report a :class:`SweepPlan` (the module docstring); returns what ``sweep.json`` holds."""
    return Sweep(plan, echo).run()


# -- results ------------------------------------------------------------------------------------------------


def check_equal_budgets(runs: Mapping[str, Sequence[Mapping[str, Any]]], budget: int) -> None:
    """Raise unless every run of every algorithm spent exactly ``budget`` env steps (the comparison's one rule)."""
    off = [f"{label} {r['run']}: {r['env_steps']}" for label, rows in runs.items() for r in rows
           if int(r["env_steps"]) != int(budget)]
    if off:
        raise RuntimeError(f"unequal env-step budgets (every run must spend exactly {budget}): " + ", ".join(off))


def _wilson(successes: float, n: int) -> tuple[float, float]:
    from coach_rl.evaluation import wilson_interval

    return wilson_interval(successes, n) if n else (math.nan, math.nan)


def _run_row(path: Path) -> dict[str, Any]:
    """One final run: its curve (env steps -> greedy/sampled success and episodes), time by phase, model calls."""
    from coach_rl.report import load_evaluations
    from coach_rl.run import RunDir

    run = RunDir(path)
    train = [r for r in run.read_metrics() if r.get("kind") == "train"]
    curve: dict[int, dict[str, Any]] = {}
    for label, report in load_evaluations(run).items():
        sampled = label.endswith("_sampled")
        base = label.removesuffix("_sampled")
        steps = 0 if base == "before" else int(report.meta.get("env_steps", 0))
        point = curve.setdefault(steps, {"env_steps": steps})
        m = report.overall
        point["sampled" if sampled else "greedy"] = {"success_rate": m.success_rate, "episodes": m.episodes}
    config = run.read_config()
    k = int(config.get("num_generations", 1) or 1)
    algorithm = config.get("algorithm")
    phases: dict[str, float] = {}
    for r in train:
        for key, value in r.items():
            if key.startswith("time/") and isinstance(value, (int, float)) and key != "time/iteration_compute":
                phases[key[5:]] = phases.get(key[5:], 0.0) + float(value)
    env_steps = int(train[-1]["env_steps"]) if train else 0
    states = sum(float(r.get("actor/states", 0.0)) for r in train)
    if algorithm == "coach":  # K replies sampled per stored state and each scored by the critic
        update_replies, critic_scores = states * k, states * k
    elif algorithm == "coach_sssa":  # the stored actions are re-scored, none sampled
        update_replies, critic_scores = 0.0, states
    else:
        update_replies, critic_scores = 0.0, 0.0
    wall = float(train[-1].get("wall_time", 0.0)) if train else 0.0
    return {
        "run": str(path), "env_steps": env_steps, "iterations": len(train), "wall_seconds": wall,
        "phases": phases, "curve": [curve[s] for s in sorted(curve)],
        "policy_replies": env_steps + update_replies, "critic_scores": critic_scores,
        "emulator_wall_seconds": wall - phases.get("env", 0.0) + EMULATOR_SECONDS_PER_STEP * env_steps,
    }


def _aggregate(rows: Sequence[Mapping[str, Any]], points: Sequence[int], budget: int) -> list[dict[str, Any]]:
    """Mean/sd over seeds and a pooled Wilson interval at each evaluation point (0, the points, the budget)."""
    out = []
    for x in [0, *points, budget]:
        entry: dict[str, Any] = {"env_steps": x}
        for kind in ("sampled", "greedy"):
            values, wins, n, actual = [], 0.0, 0, []
            for row in rows:
                curve = row["curve"]
                # the evaluation at this point: before (0), the first at or past a point, the final one (budget)
                point = curve[0] if x == 0 else curve[-1] if x == budget else next(
                    (c for c in curve if c["env_steps"] >= x and c["env_steps"] != 0), None)
                if point is None or kind not in point:
                    continue
                m = point[kind]
                actual.append(int(point["env_steps"]))
                values.append(m["success_rate"])
                wins += m["success_rate"] * m["episodes"]
                n += int(m["episodes"])
            if values:
                low, high = _wilson(round(wins), n)
                entry[kind] = {"mean": statistics.fmean(values), "sd": statistics.stdev(values) if len(values) > 1
                               else 0.0, "per_seed": values, "ci_low": low, "ci_high": high, "episodes": n}
                # the env steps the evaluations were at (the first after the iteration that reached the point)
                entry["actual_env_steps"] = max(actual)
        out.append(entry)
    return out


def steps_to_reach(curve: Sequence[Mapping[str, Any]], target: float, kind: str = "sampled") -> int | None:
    """The env steps at the first evaluation whose mean ``kind`` success reaches ``target`` (None: never): the most any
    seed had spent there (``actual_env_steps``), so an iteration that ran past an evaluation point is counted."""
    for point in curve:
        if kind in point and point[kind]["mean"] >= target - 1e-12:
            return int(point.get("actual_env_steps", point["env_steps"]))
    return None


def summarize(finals: Mapping[str, Sequence[Job]], plan: SweepPlan, tuned: Mapping[str, Any],
              points: Sequence[int]) -> dict[str, Any]:
    """The comparison of the final runs (see the module docstring); checks the budgets first."""
    rows = {label: [_run_row(j.path) for j in jobs] for label, jobs in finals.items()}
    check_equal_budgets(rows, plan.env_steps)
    algorithms: dict[str, Any] = {}
    for label, runs in rows.items():
        curve = _aggregate(runs, points, plan.env_steps)
        means = {key: statistics.fmean(r[key] for r in runs)
                 for key in ("wall_seconds", "emulator_wall_seconds", "policy_replies", "critic_scores")}
        algorithms[label] = {
            "settings": tuned[label]["best"], "tuning": tuned[label]["tried"], "curve": curve,
            "final": curve[-1], **means,
            "phases": {k: statistics.fmean(r["phases"].get(k, 0.0) for r in runs)
                       for k in sorted({k for r in runs for k in r["phases"]})},
            "runs": runs,
        }
    # the sampled success when every run measured it (it moves before the greedy one does), else the greedy one
    metric = "sampled" if all("sampled" in a["final"] for a in algorithms.values()) else "greedy"
    baselines = [label for label in algorithms if not algorithm_overrides(label)["algorithm"].startswith("coach")]
    target = None
    if baselines:
        best = max(baselines, key=lambda b: algorithms[b]["final"][metric]["mean"])
        target = {"algorithm": best, "metric": metric, "success": algorithms[best]["final"][metric]["mean"]}
        for a in algorithms.values():
            a["steps_to_best_baseline"] = steps_to_reach(a["curve"], target["success"], metric)
    return {"config": plan.config, "init_from": plan.init_from, "env_steps": plan.env_steps, "seeds": plan.seeds,
            "tune_seeds": plan.tune_seeds, "curve_points": list(points), "metric": metric, "best_baseline": target,
            "emulator_seconds_per_step": EMULATOR_SECONDS_PER_STEP, "algorithms": algorithms,
            "provenance": _provenance(plan)}


def _provenance(plan: SweepPlan) -> dict[str, Any]:
    here = Path(__file__).resolve().parent  # the commit of the code that ran, not of the folder it ran in
    try:
        commit = subprocess.run(["git", "-C", str(here), "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False).stdout.strip() or None
    except OSError:
        commit = None
    return {"date": time.strftime("%Y-%m-%d"), "commit": commit, "command": "coach-rl sweep " + shlex.join(
        [f"--config={plan.config}", f"--init-from={plan.init_from}", f"--env-steps={plan.env_steps}",
         "--algorithms=" + ",".join(plan.algorithms),
         "--learning-rates=" + ",".join(f"{v:g}" for v in plan.learning_rates),
         "--critic-learning-rates=" + ",".join(f"{v:g}" for v in plan.critic_learning_rates),
         "--w-p=" + ",".join(f"{v:g}" for v in plan.w_p), "--seeds=" + ",".join(map(str, plan.seeds)),
         "--tune-seeds=" + ",".join(map(str, plan.tune_seeds)),
         f"--extend-edges={plan.extend_edges}", *(f"--tune={spec}" for spec in plan.stages),
         *plan.overrides])}


def _pct(entry: Mapping[str, Any] | None) -> str:
    if not entry:
        return "-"
    return (f"{100 * entry['mean']:.1f} +- {100 * entry['sd']:.1f} "
            f"[{100 * entry['ci_low']:.1f}, {100 * entry['ci_high']:.1f}]")


def markdown(result: Mapping[str, Any]) -> str:
    """report.md of a sweep: settings chosen, final success, steps to the best baseline, costs, the curves."""
    lines = [f"# Sweep: {result['config']} at {result['env_steps']} env steps, seeds {result['seeds']}", ""]
    for w in result.get("warnings", []):
        lines.append(f"> warning: {w}")
    target = result.get("best_baseline")
    if target:
        lines += ["", f"Best baseline: {target['algorithm']}, final {target['metric']} success "
                      f"{100 * target['success']:.1f}%.", ""]
    lines += ["| algorithm | tuned settings (validation) | sampled after | greedy after | env steps to best baseline "
              "| wall s | at emulator latency s | policy replies | critic scores |", "|---|---|---|---|---|---|---|---|---|"]
    for label, a in result["algorithms"].items():
        settings = _settings_text(a["settings"])
        reach = a.get("steps_to_best_baseline")
        reach = "no baseline ran" if not target else reach if reach is not None else "not reached"
        lines.append(f"| {label} | {settings} | {_pct(a['final'].get('sampled'))} | {_pct(a['final'].get('greedy'))} "
                     f"| {reach} | {a['wall_seconds']:.0f} "
                     f"| {a['emulator_wall_seconds']:.0f} | {a['policy_replies']:.0f} | {a['critic_scores']:.0f} |")
    metric = result.get("metric", "sampled")
    lines += ["", f"{metric.capitalize()} success (mean +- sd over seeds [Wilson 95% over pooled episodes]) against "
                  "env steps:", ""]
    xs = [p["env_steps"] for p in next(iter(result["algorithms"].values()))["curve"]]
    lines += ["| algorithm | " + " | ".join(str(x) for x in xs) + " |", "|---|" + "---|" * len(xs)]
    for label, a in result["algorithms"].items():
        lines.append(f"| {label} | " + " | ".join(f"{_pct(p.get(metric))} @{p.get('actual_env_steps', '-')}"
                                                  for p in a["curve"]) + " |")
    lines += ["", "(@N: the most env steps any seed had spent at that evaluation: evaluations follow the iteration "
                  "that reaches a point.)"]
    lines += ["", "Tuning (validation sampled success of each setting tried, the mean over tuning seeds "
                  f"{', '.join(map(str, result['tune_seeds']))}):", ""]
    for label, a in result["algorithms"].items():
        tried = "; ".join(_settings_text(t["settings"])
                          + f": {100 * t['validation_sampled_success']:.1f}%" for t in a["tuning"])
        lines.append(f"- {label}: {tried or 'not tuned: one value was given for every setting'}")
    p = result["provenance"]
    lines += ["", f"Made by `{p['command']}` on {p['date']} at commit {p['commit']}.", ""]
    return "\n".join(lines)


def plot_curves(result: Mapping[str, Any], path: str | os.PathLike[str]) -> Path:
    """``curves.png``: each algorithm's success (mean over seeds, Wilson band) against the env steps spent."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    metric = result.get("metric", "sampled")
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for label, a in result["algorithms"].items():
        points = [p for p in a["curve"] if metric in p]
        xs = [p.get("actual_env_steps", p["env_steps"]) for p in points]
        ax.plot(xs, [100 * p[metric]["mean"] for p in points], marker="o", label=label)
        ax.fill_between(xs, [100 * p[metric]["ci_low"] for p in points], [100 * p[metric]["ci_high"] for p in points],
                        alpha=0.12)
    target = result.get("best_baseline")
    if target:
        ax.axhline(100 * target["success"], color="grey", linestyle=":", linewidth=1,
                   label=f"best baseline's final ({target['algorithm']})")
    ax.set_xlabel("env steps")
    ax.set_ylabel(f"{metric} success on test instances (%)")
    tuned = all(a.get("tuning") for a in result["algorithms"].values())  # tuning runs behind every setting shown
    how = "every algorithm at its own tuned settings" if tuned else "settings NOT tuned on this config"
    ax.set_title(f"{result['config']}: {how}, {len(result['seeds'])} seeds")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path)
    plt.close(fig)
    return path


def write_tuned_configs(result: Mapping[str, Any], folder: str | os.PathLike[str]) -> list[Path]:
    """One YAML per algorithm, ``<config>-<label>.yaml``: ``extends`` the swept config with the chosen settings."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    p = result["provenance"]
    written = []
    for label, a in result["algorithms"].items():
        keys = {**algorithm_overrides(label), **a["settings"]}
        if a["tuning"]:
            text = [f"# {label} at its own best settings on `{result['config']}`, chosen by `coach-rl sweep` on validation",
                    f"# instances (never the test ones) at a budget of {result['env_steps']} env steps, tuning seeds "
                    f"{', '.join(map(str, result['tune_seeds']))}; {p['date']}, commit {p['commit']}.",
                    "# Validation sampled success of each setting tried (mean over the tuning seeds):",
                    *(f"#   {_settings_text(t['settings'])}: "
                      f"{t['validation_sampled_success']:.3f}" for t in a["tuning"])]
        else:
            text = [f"# {label} on `{result['config']}` at the settings `coach-rl sweep` was given (one value each: NOT "
                    f"tuned); {p['date']}, commit {p['commit']}."]
        text.append(f"extends: {result['config']}")
        text += [f"{k}: {_fmt(v)}" for k, v in keys.items()]
        path = folder / f"{Path(str(result['config'])).stem}-{label}.yaml"
        path.write_text("\n".join(text) + "\n")
        written.append(path)
    return written
