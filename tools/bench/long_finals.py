"""Issue 36 part 2 (packages/coach-rl/docs/studies/2026-11-28-long-tasks.md): the final runs only, no tuning.

`coach-rl sweep`'s own final jobs, summary, report and plot on the long config, for the settings tuned by `coach-rl sweep` on the main job (2026-11-28-fair-comparison.md). A later full `coach-rl sweep`
with the same --out reuses these runs when its tuning picks the same settings. Run from the repository root; re-running
resumes (finished runs are skipped); `--summarize-only` rewrites sweep.json/report.md/curves.png from the
finished runs."""
import json
import sys

from coach_rl.sweep import Sweep, SweepPlan, markdown, plot_curves, summarize

SETTINGS = {"coach": {"learning_rate": 1e-4, "critic_learning_rate": 3.333333e-06, "w_p": 0.2},
            "grpo": {"learning_rate": 2e-4}}
plan = SweepPlan(config="long", init_from="runs/long/warmup700/checkpoints/iter-000000", out="runs/long/sweep",
                 env_steps=1280, algorithms=list(SETTINGS), seeds=[0, 1, 2], curve_points=3, eval_samples=2, jobs=2,
                 overrides=["use_prm=true", "prm_model=runs/long/prm", "prm_max_new_tokens=20"])
sweep = Sweep(plan)
sweep.out.mkdir(parents=True, exist_ok=True)
finals = {label: [sweep.job("final", label, s, seed) for seed in plan.seeds] for label, s in SETTINGS.items()}
order = [j for i in range(3) for label in SETTINGS for j in finals[label][i:i + 1]]
if "--summarize-only" not in sys.argv:
    sweep.run_jobs(order)
done = {label: [j for j in jobs if j.done()] for label, jobs in finals.items()}
tuned = {label: {"best": s, "tried": []} for label, s in SETTINGS.items()}
result = summarize(done, plan, tuned, sweep.points)
result["provenance"]["command"] = "python tools/bench/long_finals.py (final runs only: " + " ".join(
    f"{label} {' '.join(f'{k}={v:g}' for k, v in s.items())};" for label, s in SETTINGS.items()) + " no tuning runs)"
result["warnings"] = ["no tuning on this task set: each algorithm at its settings tuned by coach-rl sweep on the main "
                      "job's tasks (2026-11-28-fair-comparison.md)"]
(sweep.out / "sweep.json").write_text(json.dumps(result, indent=2))
(sweep.out / "report.md").write_text(markdown(result))
plot_curves(result, sweep.out / "curves.png")
print("wrote", sweep.out)
