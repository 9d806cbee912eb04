"""Efficiency study: Android Coach (Single State Multiple Actions, K = 1, 2, 4, 8) vs the SSSA baselines GRPO and PPO.

Every variant starts from the SAME warmed-up policy per seed (one SFT run per seed, shared), trains on
the simulated phone with the ``emulator`` latency preset scaled by ``--latency-scale`` (so that env
interaction costs time as on an emulator, but the study fits in minutes), and stops at the first of
``--env-steps`` environment steps or ``--time-budget`` seconds of training wall time. Every
``--eval-every`` iterations the policy is evaluated greedily on held-out task instances (without
latency; evaluation time is not counted as training time). Output (``--out``): ``results.json`` with
every curve, the success at matched env steps and matched wall time, the training-time cost of K, and
``ssma_vs_sssa.png`` (success vs env steps, success vs wall time, seconds per iteration by phase). When every
evaluation also measured the sampled policy (``eval_samples_per_instance`` > 0, as in the ``main`` config), the
summary and plot are on the sampled success and ``summary_greedy`` holds the greedy one.

K = 1 cannot use ACLOO (its leave-one-out baseline needs a second action at the same state). Here K = 1
is the critic-only SSSA variant: the actor learns from the stored (state, action) pairs the rollout took,
with advantage ``Q(s, a) - mean Q`` over the sampled batch (the same critic, replay and PPO clip as
Coach, but one action per state and no extra sampling).

    .venv/bin/python tools/bench/ssma_vs_sssa.py                       # small: minutes on a laptop CPU
    .venv/bin/python tools/bench/ssma_vs_sssa.py --seeds 0 1 2 --env-steps 2000 --time-budget 1800 \\
        --variants coach-k1,coach-k2,coach-k4,coach-k8,grpo,ppo --eval-instances 10
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import torch  # noqa: E402

from android_gym.sim.latency import PRESETS  # noqa: E402
from coach_rl.components import build_policy_model, make_policy  # noqa: E402
from coach_rl.configs import load_config  # noqa: E402
from coach_rl.loop import TrainingLoop  # noqa: E402
from coach_rl.warmup import collect_run_demos  # noqa: E402

VARIANTS = ("coach-k1", "coach-k2", "coach-k4", "coach-k8", "coach-q", "coach-prm", "coach-prm-kl", "coach-prm-es",
            "coach-oracle", "grpo", "ppo", "dgrpo", "dgrpo-no-spa", "dgrpo-no-dapr", "dgrpo-no-fcf")
"""coach-kK: Android Coach with K actions per state and no PRM (r_p = 0); coach-q: K = 4 with the plain critic
value as advantage instead of ACLOO; coach-prm: K = 4 with the learned PRM of ``--prm`` (w_p = 0.2); coach-prm-kl:
coach-prm plus ``beta`` = KL_BETA times the KL to the starting policy (CoachConfig.beta); coach-prm-es: coach-prm
keeping the best policy by validation (``validation_every``, beyond the paper; see EARLY_STOP), whose last curve point
is the held-out evaluation of that policy (``policy_iteration``) rather than of the last one; coach-oracle:
K = 4 with the simulated phone's expert as the PRM (the upper bound); grpo / ppo: the SSSA baselines; dgrpo:
MobileRL's DGRPO (G = 4 episodes per instance) and its ablations without SPA, DAPR or FCF
(tools/bench/mobilerl_study.py reads these runs for its tables)."""
KL_BETA = 0.1
"""beta of the coach-prm-kl variant (beyond the paper): with Coach's raw-Q advantages (mean |A| 0.03-0.13 in the main
job) and the per-token KL to the warm-up it reached without an anchor (0.02-0.03), the anchor's pull is a quarter to
a half of the policy gradient's: strong enough to matter, too weak to freeze the policy (a choice, not a sweep)."""
PRM_FOLDER: list[str] = []  # set from --prm
EARLY_STOP: dict[str, int] = {"validation_every": 5, "validation_instances_per_task": 2,
                              "validation_samples_per_instance": 4}
"""Validation of the coach-prm-es variant (set from --validation-every/-instances/-samples): every 5 iterations (~210
env steps in the main setting, twice per held-out evaluation at --eval-every 10), 2 instances x 4 sampled episodes per
task on seeds of their own. early_stopping_patience stays 0: the run spends the whole budget and keeps the best, so the
study's matched env-step budget (the smallest any run reached) is not cut short by an early stop."""


class BenchLoop(TrainingLoop):
    """A training loop without checkpoints (the study never resumes)."""

    def save_checkpoint(self) -> Path:
        return self.run.path


def _latency(scale: float) -> dict[str, float] | None:
    if scale <= 0:
        return None
    return {op: seconds * scale for op, seconds in PRESETS["emulator"].items()}


def _variant_overrides(variant: str) -> list[str]:
    if variant == "coach-q":
        return ["algorithm=coach", "num_generations=4", "coach_advantage=q"]
    if variant == "coach-oracle":
        return ["algorithm=coach", "num_generations=4", "use_prm=true", "prm_model=sim-oracle"]
    if variant in ("coach-prm", "coach-prm-kl", "coach-prm-es"):
        if not PRM_FOLDER:
            raise ValueError(f"variant {variant} needs --prm PATH (a PRM folder saved by coach-reward, e.g. the main "
                             "job's runs/main_job/prm)")
        return ["algorithm=coach", "num_generations=4", "use_prm=true", f"prm_model={PRM_FOLDER[0]}",
                "prm_max_new_tokens=20"] + ([f"beta={KL_BETA}"] if variant == "coach-prm-kl" else []) + (
                    [f"{k}={v}" for k, v in EARLY_STOP.items()] if variant == "coach-prm-es" else [])
    if variant.startswith("coach-k"):
        k = int(variant.removeprefix("coach-k"))
        if k == 1:  # critic-only SSSA: the stored action, advantage Q - mean Q (coach_rl.algorithms.coach_sssa)
            return ["algorithm=coach_sssa"]
        return ["algorithm=coach", f"num_generations={k}"]
    if variant.startswith("dgrpo"):
        dgrpo = ["algorithm=dgrpo", "dgrpo_group_size=4"]
        ablation = {"dgrpo": [], "dgrpo-no-spa": ["dgrpo_spa=false"], "dgrpo-no-dapr": ["dgrpo_dapr=false"],
                    "dgrpo-no-fcf": ["dgrpo_fcf=false"]}
        if variant in ablation:
            return dgrpo + ablation[variant]
    if variant == "grpo":
        return ["algorithm=grpo", "num_generations=4"]  # G = 4 rollouts per task instance (paper A.3)
    if variant == "ppo":
        return ["algorithm=ppo"]
    raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")


def warm_start(base: str, seed: int, out: Path, overrides: list[str]) -> Path:
    """SFT the starting policy of ``seed`` once (shared by every variant); returns its folder."""
    target = out / f"start-seed{seed}"
    if (target / "config.json").is_file():
        return target
    config = load_config(base, [*overrides, f"seed={seed}", f"output_dir={out / 'tmp-start'}"])
    loop = TrainingLoop(config, progress=False)
    demos = collect_run_demos(config, loop.tasks)
    model, tokenizer = build_policy_model(config, demos)
    loop.model, loop.tokenizer = model, tokenizer
    loop.policy = make_policy(model, tokenizer, config)
    if config.loop.sft_instances_per_task and config.loop.sft_max_steps:
        loop.sft(demos)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


def run_variant(base: str, variant: str, seed: int, start: Path, args: argparse.Namespace,
                overrides: list[str]) -> dict[str, Any]:
    """Train one variant from ``start`` until the env-step or time budget; returns its curve and timings.

    ``start`` is a policy folder, or a coach-rl checkpoint (``--init-from``: policy and pre-trained critic).
    """
    latency = _latency(args.latency_scale)
    env_kwargs = json.dumps({"latency": latency} if latency else {})
    origin = [f"init_from={start}"] if (start / "MANIFEST.json").is_file() else [f"policy_model={start}"]
    config = load_config(base, [
        *overrides, *_variant_overrides(variant), f"seed={seed}", *origin,
        "sft_max_steps=0", f"output_dir={args.out / 'runs' / f'{variant}-seed{seed}'}",
        f"total_iterations={args.max_iterations}", f"eval_instances_per_task={args.eval_instances}",
        "eval_before=false", "eval_after=false", "write_report=false", f"env_kwargs={env_kwargs}",
        f"env_threads={'true' if latency else 'false'}",
    ])
    loop = BenchLoop(config, progress=False, echo=lambda msg: None)
    curve: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    try:
        loop.setup(resume=False)

        def point_of(report: Any, sampled: Path, steps_per_success: float | None) -> dict[str, Any]:
            point = {"iteration": loop.state.iteration, "env_steps": loop.state.env_steps,
                     "train_seconds": loop.state.train_seconds, "success_rate": report.overall.success_rate,
                     "steps_per_success": steps_per_success,
                     "per_task": {name: task.success_rate for name, task in report.per_task.items()}}
            if sampled.is_file():  # eval_samples_per_instance > 0: the sampled policy's success beside the greedy
                s = json.loads(sampled.read_text())
                point.update({"sampled_success_rate": s["overall"]["success_rate"],
                              "sampled_ci": [s["overall"]["ci_low"], s["overall"]["ci_high"]],
                              "sampled_per_task": {n: t["success_rate"] for n, t in s.get("per_task", {}).items()}})
            return point

        def evaluate() -> None:
            report, trajectories = loop.evaluate_episodes(f"iter{loop.state.iteration:04d}")
            wins = [len(t.steps) for t in trajectories if float(t.success) >= 1.0]
            curve.append(point_of(report, loop.run.path / f"eval_iter{loop.state.iteration:04d}_sampled.json",
                                  statistics.fmean(wins) if wins else None))

        if loop.eval_before is not None:  # --init-from a checkpoint that saved its evaluation of these instances
            spp = loop.eval_before.meta.get("steps_per_success")
            curve.append(point_of(loop.eval_before, loop.run.path / "eval_before_sampled.json",
                                  spp if isinstance(spp, (int, float)) and math.isfinite(spp) else None))
        else:
            evaluate()
        while (loop.state.env_steps < args.env_steps and loop.state.train_seconds < args.time_budget
               and loop.state.iteration < args.max_iterations):
            records.append(loop.run_iteration())
            if loop.state.iteration % args.eval_every == 0:
                evaluate()
        if curve[-1]["iteration"] != loop.state.iteration:
            evaluate()
        best = loop.restore_best()  # validation_every (coach-prm-es): the policy kept is the best by validation
        if best is not None:
            report, trajectories = loop.evaluate_episodes("best")
            wins = [len(t.steps) for t in trajectories if float(t.success) >= 1.0]
            point = point_of(report, loop.run.path / "eval_best_sampled.json", statistics.fmean(wins) if wins else None)
            curve.append({**point, "policy_iteration": best})  # same env steps as the last point: it wins there
    finally:
        loop.close()
    phases = ("time/rollout", "time/env", "time/generation", "time/critic", "time/actor")
    per_iteration = {p: statistics.fmean(r.get(p, 0.0) for r in records) if records else 0.0 for p in phases}
    return {"variant": variant, "seed": seed, "curve": curve, "iterations": loop.state.iteration,
            "env_steps": loop.state.env_steps, "train_seconds": loop.state.train_seconds,
            "update_seconds_per_iteration": per_iteration["time/critic"] + per_iteration["time/actor"],
            "seconds_per_iteration": per_iteration,
            "rollout_success": [r["rollout/success_rate"] for r in records],
            "diagnostics": diagnostics_means(records),
            **({"best_iteration": best, "validation_env_steps": loop.state.validation_env_steps,
                "validation_curve": loop.state.validations} if best is not None else {})}


def diagnostics_means(records: list[dict[str, Any]]) -> dict[str, float]:
    """Per run, the mean over iterations of every oracle diagnostic (``diag/*``, coach_rl.diagnostics), the actor's
    gradient norm, and the last KL to the warm-up: the study's diagnostics columns."""
    out: dict[str, float] = {}
    keys = sorted({k for r in records for k in r if k.startswith("diag/")} | {"actor/grad_norm"})
    for key in keys:
        values = [float(r[key]) for r in records if isinstance(r.get(key), (int, float)) and math.isfinite(r[key])]
        if values:
            out[key] = statistics.fmean(values)
    kls = [r["diag/kl_to_warmup"] for r in records if isinstance(r.get("diag/kl_to_warmup"), (int, float))]
    if kls:
        out["diag/kl_to_warmup_last"] = float(kls[-1])
    return out


def headline_metric(results: list[dict[str, Any]]) -> str:
    """The study's headline: the sampled policy's success when every evaluation measured it (it moves before a
    tiny policy's greedy success flips whole tasks), else the greedy success."""
    points = [p for r in results for p in r["curve"]]
    return "sampled_success_rate" if points and all("sampled_success_rate" in p for p in points) else "success_rate"


def _at(curve: list[dict[str, Any]], key: str, budget: float, metric: str = "success_rate") -> float:
    """``metric`` of the last evaluation at or before ``budget`` on axis ``key`` (a step function)."""
    best = curve[0][metric]
    for point in curve:
        if point[key] <= budget:
            best = point[metric]
    return best


def _first_reach(curve: list[dict[str, Any]], key: str, target: float, metric: str = "success_rate") -> float | None:
    """The ``key`` value (env steps or seconds) of the first evaluation at or above ``target`` (None: never)."""
    for point in curve:
        if point[metric] >= target - 1e-9:
            return point[key]
    return None


def _mean_curve(runs: list[dict[str, Any]], key: str, metric: str = "success_rate") -> list[dict[str, Any]]:
    """The mean over seeds of the runs' step-function curves, at every evaluation point of any of them: a seed
    that has not improved yet counts with its current success, so no seed is dropped from a cost."""
    xs = sorted({p[key] for r in runs for p in r["curve"]})
    return [{key: x, metric: statistics.fmean(_at(r["curve"], key, x, metric) for r in runs)} for x in xs]


def summarize(results: list[dict[str, Any]], metric: str = "success_rate") -> dict[str, Any]:
    """Per variant: final success, success at the matched budgets, the cost of reaching a common success rate,
    and the update cost relative to K = 1/2; success is ``metric`` of each evaluation (greedy or sampled)."""
    by_variant: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_variant.setdefault(r["variant"], []).append(r)
    # matched budgets: the smallest env-step count and training time that every run reached
    step_budget = min(r["env_steps"] for r in results)
    time_budget = min(r["train_seconds"] for r in results)
    # the common target: the highest success that every variant's mean-over-seeds curve reaches, above the start
    start = statistics.fmean(r["curve"][0][metric] for r in results)
    best = {v: max(p[metric] for p in _mean_curve(runs, "env_steps", metric)) for v, runs in by_variant.items()}
    target = min(best.values())
    out: dict[str, Any] = {"matched_env_steps": step_budget, "matched_train_seconds": time_budget,
                           "metric": metric,
                           "target_success": target if target > start else None, "variants": {}}
    for variant, runs in by_variant.items():
        def mean_std(values: list[float]) -> dict[str, float]:
            return {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0}

        out["variants"][variant] = {
            "seeds": [r["seed"] for r in runs],
            "final_success": mean_std([r["curve"][-1][metric] for r in runs]),
            "success_at_matched_env_steps": mean_std([_at(r["curve"], "env_steps", step_budget, metric) for r in runs]),
            "success_at_matched_time": mean_std([_at(r["curve"], "train_seconds", time_budget, metric) for r in runs]),
            "start_success": mean_std([r["curve"][0][metric] for r in runs]),
            "update_seconds_per_iteration": mean_std([r["update_seconds_per_iteration"] for r in runs]),
            "train_seconds_per_env_step": mean_std([r["train_seconds"] / max(1, r["env_steps"]) for r in runs]),
            "diagnostics": {key: mean_std([r["diagnostics"][key] for r in runs if key in r.get("diagnostics", {})])
                            for key in sorted({k for r in runs for k in r.get("diagnostics", {})})},
        }
        # the first evaluation above the run's own start: with a tiny greedy policy success moves in whole tasks
        first_gain = [next((p["env_steps"] for p in r["curve"] if p[metric] > r["curve"][0][metric]
                            + 1e-9), None) for r in runs]
        out["variants"][variant]["env_steps_to_first_gain"] = {
            "per_seed": first_gain, "seeds_with_gain": sum(x is not None for x in first_gain),
            "mean": statistics.fmean(x for x in first_gain if x is not None) if any(first_gain) else None}
        if out["target_success"] is not None:  # the paper's headline: env steps (and time) to reach the same success
            for key, name in (("env_steps", "env_steps_to_target"), ("train_seconds", "train_seconds_to_target")):
                # "mean": where the mean-over-seeds curve first reaches the target; "per_seed": each seed's own
                # first evaluation at or above it (None: not within the budget)
                out["variants"][variant][name] = {
                    "mean": _first_reach(_mean_curve(runs, key, metric), key, out["target_success"], metric),
                    "per_seed": [_first_reach(r["curve"], key, out["target_success"], metric) for r in runs]}
    # the paper's headline (1.4x), pair by pair: for every Coach variant with K >= 2 and each baseline, the highest
    # success both mean curves reach, and the baseline's cost to reach it over Coach's, in env steps and seconds
    out["efficiency"] = {}
    for variant in [v for v in VARIANTS if v.startswith("coach-") and v != "coach-k1" and v in by_variant]:
        for baseline in [b for b in ("grpo", "ppo") if b in by_variant]:
            pair = (by_variant[variant], by_variant[baseline])
            common = min(best[variant], best[baseline])
            if common <= start + 1e-9:
                continue
            entry: dict[str, Any] = {"target_success": common}
            for key in ("env_steps", "train_seconds"):
                coach, other = (_first_reach(_mean_curve(runs, key, metric), key, common, metric) for runs in pair)
                entry[f"{variant}_{key}"], entry[f"{baseline}_{key}"] = coach, other
                entry[f"{key}_ratio"] = other / coach if coach and other else None
            # the goal, literally: the success the baseline ENDS at (mean over seeds), the env steps Coach's
            # mean curve needs to reach it, and the env steps the baseline spent (its runs' mean budget)
            end = statistics.fmean(r["curve"][-1][metric] for r in by_variant[baseline])
            spent = statistics.fmean(r["curve"][-1]["env_steps"] for r in by_variant[baseline])
            reach = _first_reach(_mean_curve(by_variant[variant], "env_steps", metric), "env_steps", end, metric)
            entry[f"{baseline}_final_success"] = end
            entry[f"{variant}_env_steps_to_{baseline}_final"] = reach
            entry[f"{baseline}_env_steps_spent"] = spent
            entry["env_steps_saving"] = spent / reach if reach else None
            out["efficiency"][f"{variant} vs {baseline}"] = entry
    ref = next((v for v in ("coach-k1", "coach-k2") if v in out["variants"]), None)
    if ref:
        base = out["variants"][ref]["train_seconds_per_env_step"]["mean"]
        for stats in out["variants"].values():
            stats[f"time_cost_vs_{ref}"] = stats["train_seconds_per_env_step"]["mean"] / base if base else None
    return out


def summaries(results: list[dict[str, Any]]) -> dict[str, Any]:
    """``summary`` on the headline metric, and ``summary_greedy`` beside it when the headline is the sampled one."""
    metric = headline_metric(results)
    out = {"summary": summarize(results, metric)}
    if metric != "success_rate":
        out["summary_greedy"] = summarize(results)
    return out


def plot(results: list[dict[str, Any]], path: Path, metric: str = "success_rate") -> None:
    """Success vs env steps and vs training time (the mean over seeds as a step line, each seed faint behind it),
    and seconds per iteration by phase."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2), dpi=100)
    variants = sorted({r["variant"] for r in results}, key=lambda v: VARIANTS.index(v) if v in VARIANTS else 99)
    for variant in variants:
        runs = [r for r in results if r["variant"] == variant]
        for ax, key in ((axes[0], "env_steps"), (axes[1], "train_seconds")):
            mean = _mean_curve(runs, key, metric)
            (line,) = ax.step([p[key] for p in mean], [p[metric] for p in mean], where="post", linewidth=2,
                              label=f"{variant} ({len(runs)} seeds)")
            for r in runs:
                ax.step([p[key] for p in r["curve"]], [p[metric] for p in r["curve"]], where="post",
                        color=line.get_color(), alpha=0.25, linewidth=1)
    axes[0].set_xlabel("environment steps")
    axes[1].set_xlabel("training wall time (s)")
    for ax in axes[:2]:
        ax.set_ylabel("held-out success rate" + (" (sampled policy)" if metric.startswith("sampled") else " (greedy)"))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    phases = ("time/env", "time/generation", "time/critic", "time/actor")
    bottom = [0.0] * len(variants)
    for phase in phases:
        heights = [statistics.fmean(r["seconds_per_iteration"][phase] for r in results if r["variant"] == v)
                   for v in variants]
        axes[2].bar(variants, heights, bottom=bottom, label=phase.split("/")[1])
        bottom = [b + h for b, h in zip(bottom, heights)]
    axes[2].set_ylabel("seconds per iteration")
    axes[2].legend(fontsize=7)
    axes[2].tick_params(axis="x", rotation=30)
    fig.suptitle("SSMA (Android Coach, K actions per state) vs SSSA (GRPO, PPO) on the simulated phone")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="smoke", help="base run config (name or path); default smoke")
    parser.add_argument("--variants", default="coach-k1,coach-k2,coach-k4,grpo,ppo",
                        help=f"comma-separated, from {', '.join(VARIANTS)}")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--env-steps", type=int, default=96, help="env-step budget per run")
    parser.add_argument("--time-budget", type=float, default=120.0, help="training wall-time budget per run (s)")
    parser.add_argument("--max-iterations", type=int, default=50)
    parser.add_argument("--latency-scale", type=float, default=0.05,
                        help="scale of the emulator latency preset (0: no latency)")
    parser.add_argument("--eval-instances", type=int, default=2, help="held-out instances per task per evaluation")
    parser.add_argument("--eval-every", type=int, default=2, help="iterations between evaluations")
    parser.add_argument("--init-from", type=Path, default=None,
                        help="start every run from this coach-rl checkpoint (e.g. the main job's warm-up: "
                             "runs/main_job/warmup/checkpoints/iter-000000) instead of an SFT per seed")
    parser.add_argument("--out", type=Path, default=Path("out/bench_ssma_vs_sssa"))
    parser.add_argument("--merge", type=Path, nargs="+", default=None, metavar="DIR",
                        help="train nothing: combine the results.json of earlier runs (e.g. one process per seed, run "
                             "side by side on several cores) into one summary and plot in --out")
    parser.add_argument("--prm", type=Path, default=None,
                        help="PRM folder for the coach-prm variants (saved by coach-reward; the main job's runs/main_job/prm); "
                             "`sim-oracle` for the sim's expert as the PRM")
    parser.add_argument("--validation-every", type=int, default=EARLY_STOP["validation_every"],
                        help="coach-prm-es: iterations between validations (validation_every)")
    parser.add_argument("--validation-instances", type=int, default=EARLY_STOP["validation_instances_per_task"],
                        help="coach-prm-es: validation instances per task (validation_instances_per_task)")
    parser.add_argument("--validation-samples", type=int, default=EARLY_STOP["validation_samples_per_instance"],
                        help="coach-prm-es: sampled episodes per validation instance (validation_samples_per_instance)")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="config overrides for every run")
    args = parser.parse_args(argv)
    if args.prm is not None:
        PRM_FOLDER[:] = [str(args.prm)]
    EARLY_STOP.update(validation_every=args.validation_every, validation_instances_per_task=args.validation_instances,
                      validation_samples_per_instance=args.validation_samples)
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    for v in variants:
        _variant_overrides(v)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.merge:
        return merge(args.merge, args.out)
    torch.set_num_threads(1)
    started = time.perf_counter()
    machine = {"python": platform.python_version(), "torch": torch.__version__, "cpus": os.cpu_count()}
    results = []
    for seed in args.seeds:
        start = args.init_from or warm_start(args.config, seed, args.out, list(args.overrides))
        for variant in variants:
            t0 = time.perf_counter()
            result = run_variant(args.config, variant, seed, start, args, list(args.overrides))
            result["wall_seconds"] = time.perf_counter() - t0
            results.append(result)
            (args.out / "results.partial.json").write_text(json.dumps({"settings": {
                k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
                "machine": machine, "seconds": time.perf_counter() - started, "results": results}))
            print(f"{variant} seed {seed}: {result['iterations']} iterations, {result['env_steps']} env steps, "
                  f"{result['train_seconds']:.1f} s training, success {result['curve'][0]['success_rate']:.2f} -> "
                  f"{result['curve'][-1]['success_rate']:.2f}", file=sys.stderr, flush=True)
    out = {"settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
           "machine": machine, "seconds": time.perf_counter() - started, **summaries(results), "results": results}
    return write_results(out, args.out)


def merge(folders: list[Path], out_dir: Path) -> int:
    """Combine the ``results.json`` of several runs (their seeds) into one summary, JSON and plot."""
    parts = []
    for folder in folders:  # a finished run's results.json, or the results.partial.json of one still running
        path = next((p for p in (folder / "results.json", folder / "results.partial.json") if p.is_file()), None)
        if path is None:
            raise SystemExit(f"ssma_vs_sssa: no results.json or results.partial.json in {folder}")
        parts.append(json.loads(path.read_text()))
    results = [r for part in parts for r in part["results"]]
    out = {"settings": {"merged_from": [str(f) for f in folders], "runs": [p["settings"] for p in parts]},
           "machine": parts[0].get("machine"), "seconds": sum(p.get("seconds", 0.0) for p in parts),
           **summaries(results), "results": results}
    return write_results(out, out_dir)


def write_results(out: dict[str, Any], out_dir: Path) -> int:
    """``results.json`` and the plot on the headline metric in ``out_dir``; the summary as JSON on stdout."""
    (out_dir / "results.json").write_text(json.dumps(out, indent=2))
    plot(out["results"], out_dir / "ssma_vs_sssa.png", out["summary"]["metric"])
    print(json.dumps({"summary": out["summary"], "seconds": out["seconds"], "out": str(out_dir)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
