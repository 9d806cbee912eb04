"""The run report: ``report.md`` and PNG plots made from a run folder's ``metrics.jsonl`` and evaluation files.

Plots (in ``<run>/plots/``): rollout success rate and mean return per iteration, critic loss, cumulative
environment steps, and wall time per iteration split into its phases (environment, generation, reward,
critic, actor, checkpoint). ``report.md`` gives the configuration summary, the evaluation table(s)
before/after training with Wilson intervals, the change in success rate, the per-iteration table and
links to the plots, and to ``episodes/eval_<label>.html`` (android-gym's page of an evaluation's episodes)
for every evaluation whose episodes were saved in ``episodes/eval_<label>/``. Everything is recomputed from
files, so ``coach-rl report RUN`` can be re-run any time.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from coach_rl.evaluation import EvalReport
from coach_rl.run import RunDir

__all__ = ["PLOTS", "load_evaluations", "plot_metrics", "summarize_runs", "validation_section", "write_report"]

#: Plot file stem -> (title, y-axis label, metric keys drawn against the iteration).
PLOTS: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "success_rate": ("Rollout success rate", "success rate", ("rollout/success_rate",)),
    "returns": ("Return targets", "mean", ("rollout/return_mean", "rollout/outcome_mean")),
    "critic_loss": ("Critic loss", "loss", ("critic/loss", "critic/value_mse")),
    "env_steps": ("Environment steps (cumulative)", "steps", ("env_steps",)),
    "critic_ranking": ("Critic vs the sim oracle on the K sampled actions", "AUC / share", (
        "diag/critic_auc_within", "diag/critic_auc", "diag/critic_top1", "diag/critic_expert_share")),
    "advantage_agreement": ("Advantages vs the sim oracle", "share", (
        "diag/adv_sign_agreement", "diag/adv_weighted_agreement", "diag/adv_zero_share", "diag/rollout_expert_match")),
    "prm_on_rollouts": ("The PRM's r_p on the rollouts' own steps vs the sim oracle", "share / AUC", (
        "diag/prm_expert_agreement", "diag/prm_expert_majority", "diag/prm_expert_auc")),
    "advantage_scale": ("Advantage magnitude", "mean", (
        "diag/adv_abs_mean", "diag/adv_expert_mean", "diag/adv_other_mean")),
    "actor_step": ("Actor gradient norm", "norm", ("actor/grad_norm",)),
    "validation": ("Validation sampled success (validation_every)", "success rate", (
        "validation/success_rate", "validation/best_success_rate")),
    "policy_drift": ("KL(warm-up || policy) per token on probe states", "nats", ("diag/kl_to_warmup",)),
    "wall_time": ("Wall time per iteration", "seconds", (
        "time/env", "time/generation", "time/reward", "time/critic", "time/actor", "time/checkpoint")),
}


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def plot_metrics(records: Sequence[Mapping[str, Any]], out_dir: str | os.PathLike[str],
                 evaluations: Mapping[str, EvalReport] | None = None) -> list[Path]:
    """Draw :data:`PLOTS` from training records (``kind == "train"``) into ``out_dir``; returns the PNG paths.

    A plot whose metrics never appear is skipped. Evaluation success rates, when given, are drawn as
    horizontal reference lines with their CI on the success-rate plot.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    train = [r for r in records if r.get("kind") == "train" and _finite(r.get("iteration"))]
    train.sort(key=lambda r: r["iteration"])
    written: list[Path] = []
    for stem, (title, ylabel, keys) in PLOTS.items():
        series = {}
        for key in keys:
            pts = [(r["iteration"], r[key]) for r in train if _finite(r.get(key))]
            if pts:
                series[key] = pts
        evals = evaluations if stem == "success_rate" and evaluations else {}
        if not series and not evals:
            continue
        fig, ax = plt.subplots(figsize=(6, 3.6), dpi=100)
        if stem == "wall_time" and series:
            iters = sorted({i for pts in series.values() for i, _ in pts})
            bottom = [0.0] * len(iters)
            for key, pts in series.items():
                lookup = dict(pts)
                heights = [float(lookup.get(i, 0.0)) for i in iters]
                ax.bar(iters, heights, bottom=bottom, label=key.split("/", 1)[-1])
                bottom = [b + h for b, h in zip(bottom, heights)]
        else:
            for key, pts in series.items():
                xs, ys = zip(*pts)
                ax.plot(xs, ys, marker="o", markersize=3, label=key)
        for label, report in evals.items():
            m = report.overall
            line = ax.axhline(m.success_rate, linestyle="--", linewidth=1, label=f"eval {label}")
            ax.axhspan(m.ci_low, m.ci_high, alpha=0.12, color=line.get_color())
        ax.set_title(title)
        ax.set_xlabel("iteration")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        path = out / f"{stem}.png"
        fig.savefig(path)
        plt.close(fig)
        written.append(path)
    return written


def load_evaluations(run: RunDir | str | os.PathLike[str]) -> dict[str, EvalReport]:
    """The run's evaluation reports by label (``eval_before.json`` -> ``"before"``), in label order."""
    run = run if isinstance(run, RunDir) else RunDir(run)
    out = {}
    for path in sorted(run.path.glob("eval_*.json")):
        out[path.stem.removeprefix("eval_")] = EvalReport.from_dict(json.loads(path.read_text()))
    order = {"before": 0, "before_sampled": 1, "after": 3, "after_sampled": 4}
    return dict(sorted(out.items(), key=lambda kv: (order.get(kv[0], 2), kv[0])))


def summarize_runs(runs: Sequence[RunDir | str | os.PathLike[str]]) -> dict[str, Any]:
    """Before/after success rates of several runs (e.g. seeds of one config): per run, mean and std, the gain.

    ``gain_exceeds_spread`` is true when the mean gain (after - before, in success rate) is larger than the
    spread across runs: the larger of the std of the after-scores and the std of the per-run gains.
    """
    import statistics

    rows = []
    for item in runs:
        run = item if isinstance(item, RunDir) else RunDir(item)
        evals = load_evaluations(run)
        train = [r for r in run.read_metrics() if r.get("kind") == "train"]
        setup = next((r for r in run.read_metrics("setup")), {})
        last = max(train, key=lambda r: r.get("iteration", 0)) if train else {}
        row: dict[str, Any] = {"run": str(run.path), "iterations": last.get("iteration", 0),
                               "env_steps": last.get("env_steps", 0), "train_seconds": last.get("wall_time"),
                               "setup_seconds": setup.get("seconds")}
        for label in ("before", "after", "before_sampled", "after_sampled"):
            if label in evals:
                m = evals[label].overall
                row[label] = {"success_rate": m.success_rate, "ci_low": m.ci_low, "ci_high": m.ci_high,
                              "episodes": m.episodes, "sub_success_rate": m.sub_success_rate,
                              "average_steps": m.average_steps, "rrr": m.rrr, "ror": m.ror,
                              "steps_per_success": evals[label].meta.get("steps_per_success")}
        if "before" in row and "after" in row:
            row["gain"] = row["after"]["success_rate"] - row["before"]["success_rate"]
            solved = {t for t, m in evals["before"].per_task.items() if m.success_rate >= 1.0}
            row["tasks_lost"] = sorted(t for t in solved if evals["after"].per_task.get(t) is None
                                       or evals["after"].per_task[t].success_rate < 1.0)
        best = next(iter(run.read_metrics("best")), None)
        if best is not None:  # validation_every: the evaluation after training measured this iteration's policy
            row["best_iteration"] = best.get("best_iteration")
            row["best_validation_success_rate"] = best.get("best_validation_success_rate")
            row["stopped_early"] = best.get("stopped_early")
            row["validation_env_steps"] = best.get("validation/env_steps")
        if "before_sampled" in row and "after_sampled" in row:
            row["sampled_gain"] = row["after_sampled"]["success_rate"] - row["before_sampled"]["success_rate"]
        rows.append(row)

    def stats(values: list[float]) -> dict[str, float] | None:
        if not values:
            return None
        return {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0,
                "min": min(values), "max": max(values)}

    before = [r["before"]["success_rate"] for r in rows if "before" in r]
    after = [r["after"]["success_rate"] for r in rows if "after" in r]
    gains = [r["gain"] for r in rows if "gain" in r]
    out: dict[str, Any] = {"runs": rows, "before": stats(before), "after": stats(after), "gain": stats(gains)}
    if gains and len(gains) > 1:
        spread = max(out["after"]["std"], out["gain"]["std"])
        out["spread"] = spread
        out["gain_exceeds_spread"] = out["gain"]["mean"] > spread
    if any("best_iteration" in r for r in rows):
        out["best_iterations"] = [r.get("best_iteration") for r in rows]
    if any("tasks_lost" in r for r in rows):
        out["tasks_lost"] = sorted({t for r in rows for t in r.get("tasks_lost", [])})
    sampled_gains = [r["sampled_gain"] for r in rows if "sampled_gain" in r]
    if sampled_gains:
        out["sampled_before"] = stats([r["before_sampled"]["success_rate"] for r in rows if "before_sampled" in r])
        out["sampled_after"] = stats([r["after_sampled"]["success_rate"] for r in rows if "after_sampled" in r])
        out["sampled_gain"] = stats(sampled_gains)
        out["sampled_gain_positive_every_run"] = all(g > 0 for g in sampled_gains)
        if len(sampled_gains) > 1:
            # the main job's bar (issue 20): the mean sampled gain larger than twice the spread across seeds
            spread = max(out["sampled_after"]["std"], out["sampled_gain"]["std"])
            out["sampled_spread"] = spread
            out["sampled_gain_exceeds_twice_spread"] = out["sampled_gain"]["mean"] > 2 * spread
    return out


def _fmt(value: Any, digits: int = 3) -> str:
    if _finite(value):
        return f"{value:.{digits}g}" if abs(value) < 1e5 else f"{value:.0f}"
    return "-"


def _episodes_page(run: RunDir, label: str) -> Path | None:
    """``episodes/eval_<label>.html``, android-gym's page of the evaluation's saved episodes (None without them)."""
    from android_gym.viewer import write_view

    folder = run.path / "episodes" / f"eval_{label}"
    if not folder.is_dir():
        return None
    try:
        return write_view(folder, folder.with_suffix(".html"), title=f"evaluation {label}")
    except ValueError:  # a folder without trajectory files
        return None


def validation_section(validations: Sequence[Mapping[str, Any]], best: Mapping[str, Any] | None) -> list[str]:
    """report.md's lines on ``validation_every``: which iteration's policy was kept, and the validation curve."""
    lines = ["## Validation (best policy kept)", ""]
    last = validations[-1]
    kept = best.get("best_iteration") if best else last.get("validation/best_iteration")
    score = best.get("best_validation_success_rate") if best else last.get("validation/best_success_rate")
    stopped = bool(best.get("stopped_early")) if best else bool(last.get("validation/stopped_early"))
    lines += [f"Best iteration: **{kept}** (validation sampled success {100 * float(score or 0.0):.1f}%); the "
              "evaluation after training measured its policy (`best/policy`), not the last one"
              + (", and training stopped early (early_stopping_patience)." if stopped else "."),
              f"Validation episodes: {int(last.get('validation/env_steps', 0))} env steps, not counted in the "
              "training env steps.", "",
              "| iteration | env steps | validation SR | CI | episodes | best so far |", "|---|---|---|---|---|---|"]
    for r in validations:
        lines.append(f"| {r.get('iteration')} | {int(r.get('env_steps', 0))} | "
                     f"{100 * float(r.get('validation/success_rate', 0.0)):.1f}% | "
                     f"[{100 * float(r.get('validation/ci_low', 0.0)):.1f}, "
                     f"{100 * float(r.get('validation/ci_high', 0.0)):.1f}] | {r.get('validation/episodes')} | "
                     f"{r.get('validation/best_iteration')} |")
    lines.append("")
    return lines


def write_report(run: RunDir | str | os.PathLike[str], *, title: str | None = None) -> Path:
    """Write ``report.md`` and ``plots/*.png`` for a run folder; returns the report's path."""
    run = run if isinstance(run, RunDir) else RunDir(run)
    records = run.read_metrics()
    evaluations = load_evaluations(run)
    plots = plot_metrics(records, run.path / "plots", evaluations)
    try:
        config = run.read_config()
    except FileNotFoundError:
        config = {}
    train = sorted((r for r in records if r.get("kind") == "train"), key=lambda r: r.get("iteration", 0))

    lines = [f"# {title or 'coach-rl run report'}", ""]
    if config:
        keys = ("algorithm", "policy_model", "tasks", "num_generations", "rollout_batch_size", "total_iterations",
                "learning_rate", "critic_learning_rate", "seed")
        lines += ["## Configuration", "", "| key | value |", "|---|---|"]
        lines += [f"| {k} | `{config[k]}` |" for k in keys if k in config]
        lines += ["", f"Full configuration: `{run.config_path.name}`.", ""]
    if evaluations:
        lines += ["## Evaluation", ""]
        for label, report in evaluations.items():
            meta = report.meta
            seeds = meta.get("seeds") or []
            extra = f" ({len(seeds)} instance(s) per task)" if seeds else ""
            lines += [f"### {label}{extra}", "", report.markdown(), ""]
            page = _episodes_page(run, label)
            if page is not None:
                lines += [f"Episodes: [{page.name}](episodes/{page.name}) (every step's screenshot, UI, reply and action).",
                          ""]
        for before, after, what in (("before", "after", "Greedy success"),
                                    ("before_sampled", "after_sampled", "Sampled success")):
            if before in evaluations and after in evaluations:
                b, a = evaluations[before].overall, evaluations[after].overall
                lines += [f"{what} {100 * b.success_rate:.1f}% -> {100 * a.success_rate:.1f}% "
                          f"({100 * (a.success_rate - b.success_rate):+.1f} points).", ""]
    validations = sorted((r for r in records if r.get("kind") == "validation"), key=lambda r: r.get("iteration", 0))
    best = next((r for r in records if r.get("kind") == "best"), None)
    if validations:
        lines += validation_section(validations, best)
    if train:
        last = train[-1]
        lines += ["## Training", "",
                  f"{len(train)} iteration(s), {int(last.get('env_steps', 0))} environment steps, "
                  f"{int(last.get('episodes', 0))} episodes, {_fmt(last.get('wall_time'), 4)} s of training wall time.",
                  ""]
        cols = [("iteration", "iter"), ("env_steps", "env steps"), ("rollout/success_rate", "rollout SR"),
                ("rollout/return_mean", "mean R"), ("critic/loss", "critic loss"), ("actor/loss", "actor loss"),
                ("diag/critic_auc_within", "critic AUC"), ("diag/adv_sign_agreement", "adv sign ok"),
                ("actor/grad_norm", "grad norm"), ("diag/kl_to_warmup", "KL to warm-up"), ("time/iteration", "seconds")]
        lines += ["| " + " | ".join(c for _, c in cols) + " |", "|" + "---|" * len(cols)]
        for r in train:
            lines.append("| " + " | ".join(_fmt(r.get(k), 4) for k, _ in cols) + " |")
        lines.append("")
    if plots:
        lines += ["## Plots", ""]
        lines += [f"![{p.stem}](plots/{p.name})" for p in plots]
        lines.append("")
    path = run.path / "report.md"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path
