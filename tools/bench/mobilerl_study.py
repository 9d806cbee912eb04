"""MobileRL / ProRe study: DGRPO and its ablations next to GRPO, PPO and Android Coach; best-of-N per verifier.

Part 1 (training): every variant starts from the SAME warmed-up policy per seed (the SFT start of
``ssma_vs_sssa.warm_start``) and trains on the simulated phone until ``--env-steps`` environment steps. Every
``--eval-every`` iterations the policy is evaluated greedily on held-out instances. Reported per variant (mean and
std over seeds): final success, steps per successful evaluation episode, and the env steps needed to first reach
``--target`` success.

Part 2 (best-of-N, ProRe): from each seed's starting policy, ``coach_rl.evaluation.evaluate_best_of_n`` with
N in ``--best-of`` and each verifier of ``--verifiers`` (``judge``/``probing`` need ``--judge-model DIR``):
pass@1, best-of-N with the verifier, pass@N.

Output (``--out``): ``results.json`` and ``mobilerl_study.png``.

    .venv/bin/python tools/bench/mobilerl_study.py                      # tiny budget: checks it all runs
    .venv/bin/python tools/bench/mobilerl_study.py --seeds 0 1 2 --env-steps 2000 --eval-instances 10 \\
        --judge-model runs/judge --verifiers rule,judge,probing --best-of 1 4 8

The README numbers come from one shared run: ``ssma_vs_sssa.py --config study --init-from <warm-up checkpoint>``
trains every variant (its dgrpo* ones included) from the same start, and this script reads those runs and adds
best-of-N from that start:

    .venv/bin/python tools/bench/mobilerl_study.py --config study --from-study out/study/seed0 out/study/seed1 \
        out/study/seed2 --init-from out/study/warmup/checkpoints/iter-000000 --seeds 0 1 2 --eval-instances 10

``dgrpo_*`` settings are passed as overrides like any config key (``dgrpo_group_size=4``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402
from ssma_vs_sssa import BenchLoop, warm_start  # noqa: E402

from coach_rl.configs import load_config  # noqa: E402
from coach_rl.evaluation import best_of_n_verifier, evaluate_best_of_n, evaluate_policy  # noqa: E402

VARIANTS = ("dgrpo", "dgrpo-no-spa", "dgrpo-no-dapr", "dgrpo-no-fcf", "grpo", "ppo", "coach")


def variant_overrides(variant: str, group: int) -> list[str]:
    """Config overrides of a variant; DGRPO and GRPO both play ``group`` episodes per task instance."""
    dgrpo = ["algorithm=dgrpo", f"dgrpo_group_size={group}"]
    table = {
        "dgrpo": dgrpo, "dgrpo-no-spa": [*dgrpo, "dgrpo_spa=false"], "dgrpo-no-dapr": [*dgrpo, "dgrpo_dapr=false"],
        "dgrpo-no-fcf": [*dgrpo, "dgrpo_fcf=false"], "grpo": ["algorithm=grpo", f"num_generations={group}"],
        "ppo": ["algorithm=ppo"], "coach": ["algorithm=coach", "num_generations=4"],
    }
    if variant not in table:
        raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    return table[variant]


def _evaluate(loop: Any, curve: list[dict[str, Any]]) -> None:
    report, trajectories = evaluate_policy(loop.policy, loop.eval_tasks, loop.eval_seeds(), env_id=loop.args.env_id,
                                           num_envs=max(1, int(loop.args.num_envs)), with_reference=False)
    wins = [len(t.steps) for t in trajectories if float(t.success) >= 1.0]
    curve.append({"iteration": loop.state.iteration, "env_steps": loop.state.env_steps,
                  "success_rate": report.overall.success_rate,
                  "steps_per_success": statistics.fmean(wins) if wins else None})


def run_variant(base: str, variant: str, seed: int, start: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Train one variant from ``start`` until the env-step budget; its evaluation curve."""
    config = load_config(base, [
        *args.overrides, *variant_overrides(variant, args.group), f"seed={seed}", f"policy_model={start}",
        "sft_max_steps=0", f"output_dir={args.out / 'runs' / f'{variant}-seed{seed}'}",
        f"total_iterations={args.max_iterations}", f"eval_instances_per_task={args.eval_instances}",
        "eval_before=false", "eval_after=false", "write_report=false",
    ])
    loop = BenchLoop(config, progress=False, echo=lambda msg: None)
    curve: list[dict[str, Any]] = []
    try:
        loop.setup(resume=False)
        _evaluate(loop, curve)
        while loop.state.env_steps < args.env_steps and loop.state.iteration < args.max_iterations:
            loop.run_iteration()
            if loop.state.iteration % args.eval_every == 0:
                _evaluate(loop, curve)
        if curve[-1]["iteration"] != loop.state.iteration:
            _evaluate(loop, curve)
    finally:
        loop.close()
    return {"variant": variant, "seed": seed, "curve": curve, "env_steps": loop.state.env_steps,
            "iterations": loop.state.iteration, "train_seconds": loop.state.train_seconds}


def best_of_n(base: str, seed: int, start: Path, args: argparse.Namespace) -> list[dict[str, Any]]:
    """ProRe best-of-N of the starting policy for every N and verifier."""
    from coach_rl.components import build_policy_model, make_policy

    config = load_config(base, [*args.overrides, f"seed={seed}", f"policy_model={start}"])
    model, tokenizer = build_policy_model(config)
    policy = make_policy(model, tokenizer, config)
    backend = None
    if args.judge_model:
        from coach_reward.backends import TransformersBackend

        backend = TransformersBackend.from_pretrained(str(args.judge_model), images="drop")
    tasks = list(config.loop.eval_tasks or config.coach.tasks)
    if args.tasks:
        unknown = sorted(set(args.tasks) - set(tasks))
        if unknown:
            raise SystemExit(f"mobilerl_study: --tasks not among the config's evaluation tasks: {', '.join(unknown)}")
        tasks = [t for t in tasks if t in args.tasks]
    seeds = list(range(config.loop.eval_seed_offset, config.loop.eval_seed_offset + args.eval_instances))
    out = []
    for name in args.verifiers:
        if name != "rule" and backend is None:
            print(f"best-of-N: skipping --verifiers {name} (needs --judge-model)", file=sys.stderr)
            continue
        for n in args.best_of:
            torch.manual_seed(seed)
            started = time.perf_counter()
            report, _ = evaluate_best_of_n(policy, tasks, seeds, n, _verifier(name, backend, args),
                                           verifier_name=name, env_id=config.coach.env_id,
                                           num_envs=max(1, int(config.coach.num_envs or 1)))
            episodes = [e for g in report.instances for e in g["episodes"]]
            out.append({"seed": seed, "verifier": name, "n": n, **report.overall.to_dict(),
                        "abstained": sum(bool(e["abstained"]) for e in episodes) / max(1, len(episodes)),
                        "seconds": time.perf_counter() - started})
            print(f"best-of-N seed {seed} {name}@{n}: pass@1 {report.overall.pass_at_1:.3f}, best-of-N "
                  f"{report.overall.best_of_n:.3f}, pass@N {report.overall.pass_at_n:.3f}, verifier accuracy "
                  f"{report.overall.verifier_accuracy:.3f} ({out[-1]['seconds']:.0f} s)", file=sys.stderr, flush=True)
    return out


def _verifier(name: str, backend: Any, args: argparse.Namespace) -> Any:
    """The best-of-N verifier ``name``, with the judge's output and prompt caps and the probing budget of ``args``."""
    if name == "rule":
        return best_of_n_verifier(name)
    if name == "judge":
        return best_of_n_verifier(name, backend, max_new_tokens=args.judge_max_new_tokens,
                                  max_prompt_tokens=args.judge_max_prompt_tokens)
    from coach_reward.probing import BackendProbeAgent

    agent = BackendProbeAgent(backend, max_new_tokens=args.judge_max_new_tokens, max_ui_chars=args.probe_max_ui_chars)
    return best_of_n_verifier(name, backend, max_new_tokens=args.judge_max_new_tokens, evaluator=agent,
                              max_probes=args.probe_max_probes, probe_steps=args.probe_steps)


def _study_runs(folders: list[Path]) -> list[dict[str, Any]]:
    """The per-run results of ssma_vs_sssa.py output folders, with its coach-k4 named coach."""
    runs = []
    for folder in folders:
        path = next((p for p in (folder / "results.json", folder / "results.partial.json") if p.is_file()), None)
        if path is None:
            raise SystemExit(f"mobilerl_study: no results.json or results.partial.json in {folder}")
        for run in json.loads(path.read_text())["results"]:
            runs.append({**run, "variant": "coach" if run["variant"] == "coach-k4" else run["variant"]})
    return runs


def _stats(values: list[float]) -> dict[str, float | None]:
    values = [v for v in values if v is not None]
    if not values:
        return {"mean": None, "std": None}
    return {"mean": statistics.fmean(values), "std": statistics.stdev(values) if len(values) > 1 else 0.0}


def summarize(results: list[dict[str, Any]], bon: list[dict[str, Any]], target: float) -> dict[str, Any]:
    """Per variant: final success, steps per success, env steps to reach ``target``; best-of-N per (verifier, N)."""
    out: dict[str, Any] = {"target_success": target, "variants": {}, "best_of_n": {}}
    for variant in dict.fromkeys(r["variant"] for r in results):
        runs = [r for r in results if r["variant"] == variant]
        reach = [next((p["env_steps"] for p in r["curve"] if p["success_rate"] >= target), None) for r in runs]
        out["variants"][variant] = {
            "seeds": [r["seed"] for r in runs],
            "start_success": _stats([r["curve"][0]["success_rate"] for r in runs]),
            "final_success": _stats([r["curve"][-1]["success_rate"] for r in runs]),
            "steps_per_success": _stats([r["curve"][-1]["steps_per_success"] for r in runs]),
            "env_steps_to_target": _stats(reach), "reached_target": sum(x is not None for x in reach),
        }
    for row in bon:
        key = f"{row['verifier']}@{row['n']}"
        out["best_of_n"].setdefault(key, []).append(row)
    metrics = ("pass_at_1", "best_of_n", "pass_at_n", "verifier_accuracy", "verifier_failures", "abstained", "seconds")
    out["best_of_n"] = {k: {m: _stats([r.get(m) for r in rows]) for m in metrics}
                        for k, rows in out["best_of_n"].items()}
    return out


def plot(results: list[dict[str, Any]], bon: list[dict[str, Any]], path: Path) -> None:
    """Success vs env steps per variant (every seed), and best-of-N success vs N per verifier."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), dpi=100)
    for variant in dict.fromkeys(r["variant"] for r in results):
        color = None
        for i, r in enumerate(x for x in results if x["variant"] == variant):
            (line,) = axes[0].plot([p["env_steps"] for p in r["curve"]], [p["success_rate"] for p in r["curve"]],
                                   marker="o", markersize=3, color=color, label=variant if i == 0 else None)
            color = line.get_color()
    axes[0].set_xlabel("environment steps")
    axes[0].set_ylabel("held-out success rate")
    axes[0].legend(fontsize=7)
    for verifier in dict.fromkeys(r["verifier"] for r in bon):
        rows = [r for r in bon if r["verifier"] == verifier]
        ns = sorted({r["n"] for r in rows})
        axes[1].plot(ns, [statistics.fmean(r["best_of_n"] for r in rows if r["n"] == n) for n in ns], marker="o",
                     label=f"best-of-N ({verifier})")
    if bon:
        ns = sorted({r["n"] for r in bon})
        axes[1].plot(ns, [statistics.fmean(r["pass_at_n"] for r in bon if r["n"] == n) for n in ns], "k--",
                     label="pass@N")
        axes[1].plot(ns, [statistics.fmean(r["pass_at_1"] for r in bon if r["n"] == n) for n in ns], "k:",
                     label="pass@1")
    axes[1].set_xlabel("N attempts per task instance")
    axes[1].set_ylabel("success")
    axes[1].legend(fontsize=7)
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default="smoke", help="base run config (name or path); default smoke")
    parser.add_argument("--variants", default=",".join(VARIANTS), help=f"comma-separated, from {', '.join(VARIANTS)}")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--group", type=int, default=4, help="G: episodes per task instance of DGRPO and GRPO")
    parser.add_argument("--env-steps", type=int, default=96, help="env-step budget per run")
    parser.add_argument("--max-iterations", type=int, default=50)
    parser.add_argument("--eval-instances", type=int, default=2, help="held-out instances per task")
    parser.add_argument("--eval-every", type=int, default=2, help="iterations between evaluations")
    parser.add_argument("--target", type=float, default=0.5, help="success rate whose env-step cost is reported")
    parser.add_argument("--best-of", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--verifiers", default="rule", help="comma-separated from rule, judge, probing")
    parser.add_argument("--judge-model", type=Path, default=None, help="judge model folder for judge/probing")
    parser.add_argument("--judge-max-new-tokens", type=int, default=256,
                        help="judge/probing: output budget of each model call (default 256)")
    parser.add_argument("--judge-max-prompt-tokens", type=int, default=None,
                        help="judge: fit each episode into this many prompt tokens (default: the judge's char budget)")
    parser.add_argument("--probe-max-probes", type=int, default=3, help="probing: probes per episode (default 3)")
    parser.add_argument("--probe-steps", type=int, default=10, help="probing: actions per probe (default 10)")
    parser.add_argument("--probe-max-ui-chars", type=int, default=6000,
                        help="probing: cut each screen shown to the probe agent (default 6000)")
    parser.add_argument("--tasks", default=None,
                        help="best-of-N: comma-separated subset of the config's evaluation tasks (default all)")
    parser.add_argument("--skip-training", action="store_true", help="only the best-of-N part")
    parser.add_argument("--init-from", type=Path, default=None,
                        help="a coach-rl checkpoint (e.g. `coach-rl warmup` output) whose policy is every seed's start, "
                             "instead of an SFT per seed")
    parser.add_argument("--from-study", type=Path, nargs="+", default=None, metavar="DIR",
                        help="train nothing: take the training runs from tools/bench/ssma_vs_sssa.py output folders "
                             "(results.json, or results.partial.json of an unfinished one), whose dgrpo* variants share "
                             "the start, budget and evaluation of its Coach/GRPO/PPO runs; coach-k4 is reported as coach")
    parser.add_argument("--out", type=Path, default=Path("out/bench_mobilerl"))
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="config overrides for every run")
    args = parser.parse_args(argv)
    args.verifiers = [v.strip() for v in args.verifiers.split(",") if v.strip()]
    args.tasks = [t.strip() for t in args.tasks.split(",") if t.strip()] if args.tasks else None
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    for v in variants:
        variant_overrides(v, args.group)
    args.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    bon: list[dict[str, Any]] = []
    if args.from_study:
        results = [r for r in _study_runs(args.from_study) if r["variant"] in variants]
        print(f"{len(results)} training runs from {', '.join(map(str, args.from_study))}", file=sys.stderr)
    for seed in args.seeds:
        if args.init_from is not None:
            start = args.init_from / "policy"
            if not start.is_dir():
                raise SystemExit(f"mobilerl_study: {args.init_from} holds no policy/ folder")
        else:
            start = warm_start(args.config, seed, args.out, list(args.overrides))
        for variant in [] if args.skip_training or args.from_study else variants:
            result = run_variant(args.config, variant, seed, start, args)
            results.append(result)
            print(f"{variant} seed {seed}: {result['env_steps']} env steps, success "
                  f"{result['curve'][0]['success_rate']:.2f} -> {result['curve'][-1]['success_rate']:.2f}",
                  file=sys.stderr, flush=True)
        bon.extend(best_of_n(args.config, seed, start, args))
    summary = summarize(results, bon, args.target)
    out = {"settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
           "machine": {"python": platform.python_version(), "torch": torch.__version__, "cpus": os.cpu_count()},
           "seconds": time.perf_counter() - started, "summary": summary, "results": results, "best_of_n": bon}
    (args.out / "results.json").write_text(json.dumps(out, indent=2, default=str))
    plot(results, bon, args.out / "mobilerl_study.png")
    print(json.dumps({"summary": summary, "seconds": out["seconds"], "out": str(args.out)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
