"""The ``coach-rl`` command line: ``train``, ``sweep``, ``warmup``, ``sft``, ``eval``, ``irr``, ``report``, ``summarize`` and ``configs``.

Configurations are shipped YAML files chosen by name (``--config smoke``) or any YAML path, with
``key=value`` overrides after them (``coach-rl train --config main seed=2 output_dir=runs/s2``); every key
is a field of :class:`coach_rl.configs.LoopArguments` or of the run's algorithm's config class
(:class:`coach_rl.config.CoachConfig` for ``coach``, ...), its value read by TRL's parser (``trl.TrlParser``);
``--help-config [ALGORITHM]`` lists every key of that algorithm (default: the ``--config`` given before it, else
``coach``) with its help. ``coach-rl configs`` lists
the shipped files, ``coach-rl configs NAME`` prints one.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["build_parser", "main"]


def config_keys_help(width: int = 100, algorithm: str = "coach") -> str:
    """Every config key of ``algorithm`` with its default and the help its dataclass field carries, as TRL's own
    parser (``TrlParser`` over :class:`~coach_rl.configs.LoopArguments` and the algorithm's config class) reads them."""
    import textwrap

    from trl import TrlParser

    from coach_rl.algorithms import algorithm_names
    from coach_rl.configs import LoopArguments, algorithm_config_class

    cls = algorithm_config_class(algorithm)
    others = ", ".join(n for n in algorithm_names() if n != algorithm)
    lines = [f"config keys of algorithm={algorithm} ({cls.__module__}.{cls.__name__}; KEY=VALUE, or in the YAML "
             f"file; --help-config ALGORITHM for another: {others}):"]
    for action in TrlParser((LoopArguments, cls))._actions:
        if not action.option_strings or action.dest == "help" or action.help is None:
            continue
        text = " ".join(str(action.help).split()) or "(no help)"
        lines.append(f"  {action.dest} (default {action.default!r})")
        lines.extend(textwrap.wrap(text, width, initial_indent="      ", subsequent_indent="      "))
    return "\n".join(lines)


class _HelpWithConfigKeys(argparse.Action):
    """``--help-config [ALGORITHM]``: the command's help, then every config key of ALGORITHM (``grpo`` or
    ``algorithm=grpo``; default: the algorithm of a ``--config`` given before it, else ``coach``). Built only when
    asked: it imports TRL."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, **_: Any) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs="?", metavar="ALGORITHM",
                         help="show this help message, with every config key of ALGORITHM (default: the --config's "
                              "algorithm, else coach) and its help, and exit")

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option_string: Any = None) -> None:
        algorithm = str(values).partition("=")[2] if values and "=" in str(values) else values
        if not algorithm and getattr(namespace, "config", None):
            from coach_rl.configs import read_config_file

            try:
                algorithm = read_config_file(namespace.config)[0].get("algorithm")
            except (OSError, ValueError):
                algorithm = None
        parser.print_help()
        try:
            print("\n" + config_keys_help(algorithm=algorithm or "coach"))
        except ValueError as err:
            parser.exit(2, f"{parser.prog}: error: {err}\n")
        parser.exit()


def _add_config_args(parser: argparse.ArgumentParser, *, required: bool = True) -> None:
    parser.add_argument("--help-config", action=_HelpWithConfigKeys)
    parser.add_argument("--config", "-c", required=required, default=None,
                        help="shipped config name (see `coach-rl configs`) or a YAML path")
    parser.add_argument("overrides", nargs="*", metavar="KEY=VALUE",
                        help="config overrides, e.g. seed=2 num_generations=8 tasks=SystemWifiTurnOff,OpenAppTaskEval "
                             "(--help-config lists every key)")
    parser.add_argument("--output-dir", "-o", default=None, help="run folder (same as output_dir=...)")


def _plan_default(name: str) -> Any:
    """``coach-rl sweep``'s default for a :class:`coach_rl.sweep.SweepPlan` field: the plan's own (lists as text)."""
    import dataclasses

    from coach_rl.sweep import SweepPlan

    f = next(f for f in dataclasses.fields(SweepPlan) if f.name == name)
    value = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
    return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in value) if isinstance(value, list) else value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``coach-rl`` (sub-commands train, sft, eval, report, configs)."""
    parser = argparse.ArgumentParser(
        prog="coach-rl",
        description="Train Android GUI agents with Android Coach (critic-guided Single State Multiple Actions), "
                    "GRPO or PPO on TRL.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("train", help="run a training job (resumes from the run folder's latest checkpoint)")
    _add_config_args(p)
    p.add_argument("--fresh", action="store_true", help="start over even if the run folder has a checkpoint")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")

    p = sub.add_parser("warmup", help="only the set-up of a run: policy, SFT, critic pre-training, evaluation "
                                      "before; its checkpoint iter-000000 can start other runs (init_from=...)")
    _add_config_args(p)

    p = sub.add_parser("sft", help="build (or load) the policy and run only the SFT warm-up on expert demos")
    _add_config_args(p)
    p.add_argument("--save", default=None, help="where to save the policy (default: <output_dir>/sft_policy)")

    p = sub.add_parser("eval", help="evaluate a policy on held-out task instances (SR, Sub-SR, RRR, ROR, steps)")
    _add_config_args(p, required=False)
    p.add_argument("--policy", default=None, help="policy checkpoint folder (default: the config's policy_model)")
    p.add_argument("--run", default=None, help="a run folder: its config and its best policy by validation "
                   "(best/, with validation_every) or else its latest checkpoint's policy")
    p.add_argument("--tasks", default=None, help="comma-separated task names (default: the config's)")
    p.add_argument("--instances", type=int, default=None, help="instances per task (default eval_instances_per_task)")
    p.add_argument("--seed-offset", type=int, default=None, help="first instance seed (default eval_seed_offset)")
    p.add_argument("--sample", action="store_true", help="sample actions instead of greedy decoding")
    p.add_argument("--out", default=None, help="write the JSON report here")
    p.add_argument("--best-of", type=int, default=None, metavar="N",
                   help="ProRe best-of-N: N sampled attempts per task instance from the same start state, the "
                        "verifier picks one; reports pass@1, best-of-N and pass@N")
    p.add_argument("--verifier", default="rule", choices=("rule", "judge", "probing"),
                   help="who picks among the N attempts (with --best-of): the task's rule check, an LLM judge "
                        "over the trajectory, or ProRe's probing verifier (default rule)")
    p.add_argument("--judge-model", default=None, metavar="DIR",
                   help="local judge model folder for --verifier judge/probing (default: verifier_model)")
    p.add_argument("--judge-base-url", default=None, metavar="URL",
                   help="OpenAI-compatible server of the judge (default: verifier_base_url)")
    p.add_argument("--judge-model-name", default=None, metavar="NAME",
                   help="the judge's model name on that server (default: verifier_model)")

    p = sub.add_parser("irr", help="Iterative Reasoning Refinement (MobileRL): reasoning for action-only demos, "
                                   "kept when it leads to the expert's action; writes an SFT dataset")
    _add_config_args(p)
    p.add_argument("--tasks", default=None, help="comma-separated sim tasks whose expert demos to use "
                                                 "(default: the config's tasks)")
    p.add_argument("--instances", type=int, default=None, help="demo instances per task (default sft_instances_per_task)")
    p.add_argument("--androidcontrol", nargs="+", default=None, metavar="FILE",
                   help="AndroidControl-format episode files (.json/.jsonl) instead of the sim's demos")
    p.add_argument("--k", type=int, default=4, help="candidates per step and round (default 4)")
    p.add_argument("--rounds", type=int, default=3, help="at most this many rounds (default 3)")
    p.add_argument("--sft-steps", type=int, default=50, help="fine-tuning steps after each round (default 50)")
    p.add_argument("--sft-lr", type=float, default=None,
                   help="learning rate of the fine-tuning between rounds (default sft_learning_rate)")
    p.add_argument("--warmup-steps", type=int, default=0,
                   help="action-only SFT steps on the demos before round 0, at sft_learning_rate (MobileRL's first "
                        "stage; default 0)")
    p.add_argument("--out", default=None, help="output folder (default <output_dir>/irr)")

    p = sub.add_parser("report", help="(re)write report.md and plots of a run folder")
    p.add_argument("run", help="run folder")

    p = sub.add_parser("summarize", help="before/after success of several runs (seeds): mean, std, gain vs spread; "
                       "the best iteration by validation of runs with validation_every")
    p.add_argument("runs", nargs="+", help="run folders")
    p.add_argument("--out", default=None, help="also write the JSON summary here")

    p = sub.add_parser("sweep", help="a fair comparison: tune each algorithm's learning rate (and Coach's critic "
                                     "learning rate and w_p) on validation instances, then train every algorithm at "
                                     "its own best on exactly the same env-step budget for several seeds and report "
                                     "success against env steps (coach_rl.sweep)")
    p.add_argument("--config", "-c", required=True, help="shipped config name or YAML path every run starts from")
    p.add_argument("overrides", nargs="*", metavar="KEY=VALUE", help="config overrides for every run (e.g. the PRM)")
    p.add_argument("--init-from", required=True, help="the checkpoint every run starts from (a `coach-rl warmup`'s "
                                                      "<run>/checkpoints/iter-000000)")
    p.add_argument("--env-steps", type=int, required=True, help="the env-step budget of every run")
    p.add_argument("--out", required=True, help="sweep folder (runs, sweep.json, report.md, tuned/)")
    p.add_argument("--algorithms", default=_plan_default("algorithms"),
                   help="comma-separated labels: coach, coach_k1 (Coach's critic, one action per state), grpo, ppo, "
                        "dgrpo, or any registered algorithm (default: those five)")
    p.add_argument("--learning-rates", default=_plan_default("learning_rates"), help="the actor learning rates tried (default %(default)s)")
    p.add_argument("--critic-learning-rates", default=_plan_default("critic_learning_rates"),
                   help="the critic learning rates tried at the best learning rate (Coach; '' to skip; default %(default)s)")
    p.add_argument("--w-p", default=_plan_default("w_p"), help="the PRM weights tried at the best two (Coach; '' to skip; default %(default)s)")
    p.add_argument("--seeds", default=_plan_default("seeds"), help="the final runs' seeds (default %(default)s)")
    p.add_argument("--tune-seeds", "--tune-seed", default=_plan_default("tune_seeds"),
                   help="the tuning runs' seeds, none of --seeds; each setting is scored by the mean over them "
                        "(default %(default)s)")
    p.add_argument("--validation-instances", type=int, default=_plan_default("validation_instances"),
                   help="validation instances per task that score a tuning run (default %(default)s)")
    p.add_argument("--validation-samples", type=int, default=_plan_default("validation_samples"),
                   help="sampled episodes per validation instance (default %(default)s)")
    p.add_argument("--curve-points", type=int, default=_plan_default("curve_points"),
                   help="evaluations during each final run, 1.25x apart in env steps below the budget "
                        "(default %(default)s)")
    p.add_argument("--tune", action="append", default=[], metavar="LABEL:KEY=V1,V2",
                   help="a further tuning stage, after the built-in ones, repeatable and in order: algorithm LABEL "
                        "also tries each value of config field KEY at its best settings so far (e.g. "
                        "coach:actor_states_per_iteration=16,32,64 grpo:num_iterations=1,2,4; a key may come back, "
                        "e.g. coach:learning_rate=5e-5,1e-4,2e-4)")
    p.add_argument("--eval-samples", type=int, default=None,
                   help="sampled episodes per test instance at every evaluation (default: the config's)")
    p.add_argument("--jobs", type=int, default=max(1, os.cpu_count() or 1),
                   help="runs at a time, one torch thread each (default: the cores)")
    p.add_argument("--extend-edges", type=int, default=_plan_default("extend_edges"),
                   help="a best (critic) learning rate at the edge of its grid is tried one grid step further, up to "
                        "this many times (default %(default)s; 0: never)")
    p.add_argument("--write-configs", default=None, metavar="DIR",
                   help="also write the tuned configs (<config>-<algorithm>.yaml) into DIR")

    p = sub.add_parser("prm-data", help="PRM training rows from runs' own rollouts (their replay buffers), labelled "
                                        "by the episode's outcome, or by the sim expert to measure a PRM "
                                        "(coach_rl.prm_rollouts); coach-reward train-prm / eval read the folder")
    p.add_argument("runs", nargs="+", help="run folders (or their replay/ folders)")
    p.add_argument("--labels", choices=["outcome", "oracle"], default="outcome",
                   help="outcome: correct when the episode succeeded and the reply parsed (what a deployment knows; "
                        "default); oracle: the sim expert's next action (a diagnostic, to evaluate a PRM)")
    p.add_argument("--output", required=True, help="dataset folder to write")

    p = sub.add_parser("configs", help="list the shipped configs, or print one")
    p.add_argument("name", nargs="?", default=None)
    return parser


def _load(args: argparse.Namespace, extra: dict[str, str] | None = None):
    from coach_rl.configs import load_config

    overrides = list(args.overrides)
    if getattr(args, "output_dir", None):
        overrides.append(f"output_dir={args.output_dir}")
    for key, value in (extra or {}).items():
        overrides.append(f"{key}={value}")
    return load_config(args.config, overrides)


def _on_existing_ray_cluster(args: argparse.Namespace) -> bool:
    """Whether this ``train`` joins a running Ray cluster (collector=ray with ray_address), read from the raw config
    without building it (the supervising process imports neither torch nor Ray)."""
    from coach_rl.configs import parse_overrides, read_config_file

    try:
        raw, _ = read_config_file(args.config)
        raw.update(parse_overrides(args.overrides))
    except Exception:  # noqa: BLE001 - a broken config is reported by the run itself
        return False
    return raw.get("collector") == "ray" and bool(raw.get("ray_address"))


def _cmd_train(args: argparse.Namespace) -> int:
    from coach_rl.distributed.supervise import EXIT_HEAD_LOST, STATE_ENV, run_state, supervise

    if not os.environ.get(STATE_ENV) and _on_existing_ray_cluster(args):
        return supervise(args.argv)  # reports a head node lost even when Ray ends the driver itself
    from coach_rl.distributed.collector import RayHeadLost
    from coach_rl.loop import train

    config = _load(args)
    try:
        result = train(config, resume=not args.fresh, progress=False if args.no_progress else None)
    except RayHeadLost as err:
        spool = config.coach.spool_dir or Path(config.coach.output_dir) / "spool"
        print(f"coach-rl train: error: {err}. {run_state(config.coach.output_dir, spool)}", file=sys.stderr)
        return EXIT_HEAD_LOST
    summary = {
        "run_dir": str(result.run_dir), "iterations": result.state.iteration, "env_steps": result.state.env_steps,
        "episodes": result.state.episodes, "train_seconds": round(result.state.train_seconds, 2),
        "resumed_from": result.resumed_from,
        "success_before": result.eval_before.overall.success_rate if result.eval_before else None,
        "success_after": result.eval_after.overall.success_rate if result.eval_after else None,
        "report": str(result.report) if result.report else None,
    }
    if result.best_iteration is not None:  # validation_every: the policy the evaluation after measured
        summary["best_iteration"] = result.best_iteration
        summary["stopped_early"] = result.state.stopped_early
        summary["validation_env_steps"] = result.state.validation_env_steps
    print(json.dumps(summary, indent=2))
    return 0


def _cmd_warmup(args: argparse.Namespace) -> int:
    from coach_rl.loop import TrainingLoop

    config = _load(args)
    loop = TrainingLoop(config, progress=False)
    try:
        loop.setup(resume=True)
    finally:
        loop.close()
    checkpoint = loop.run.checkpoint_path(0)
    before = loop.eval_before.overall.success_rate if loop.eval_before else None
    print(json.dumps({"run_dir": str(loop.run.path), "checkpoint": str(checkpoint), "success_before": before,
                      "init_from": f"init_from={checkpoint}", **{k: v for k, v in loop.stats.items()
                                                                if isinstance(v, (int, float))}}, indent=2))
    return 0


def _cmd_sft(args: argparse.Namespace) -> int:
    from coach_rl.components import build_policy_model, make_policy
    from coach_rl.loop import TrainingLoop
    from coach_rl.sft import demo_accuracy
    from coach_rl.warmup import collect_run_demos

    config = _load(args)
    if not (config.loop.sft_instances_per_task and config.loop.sft_max_steps):
        raise SystemExit("sft_instances_per_task or sft_max_steps is 0: set both (e.g. sft_instances_per_task=8 "
                         "sft_max_steps=100) to run a warm-up")
    loop = TrainingLoop(config, progress=False)
    demos = collect_run_demos(config, loop.tasks)
    model, tokenizer = build_policy_model(config, demos)
    loop.model, loop.tokenizer = model, tokenizer
    loop.policy = make_policy(model, tokenizer, config)
    loop.sft(demos)
    accuracy = demo_accuracy(loop.policy, demos, limit=64)
    out = Path(args.save or os.path.join(config.coach.output_dir, "sft_policy"))
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)
    print(json.dumps({"saved": str(out), "examples": len(demos), "steps": loop.stats.get("sft_steps"),
                      "loss": loop.stats.get("sft_loss"), "demo_exact_match": accuracy.exact,
                      "demo_action_match": accuracy.action}, indent=2))
    return 0


def _cmd_eval(args: argparse.Namespace) -> int:
    from coach_rl.components import load_policy_model, make_policy, run_env_kwargs, run_training_tasks
    from coach_rl.configs import load_config
    from coach_rl.evaluation import evaluate_policy
    from coach_rl.run import RunDir

    policy_path = args.policy
    if args.run:
        run = RunDir(args.run)
        config = load_config(run.read_config(), list(args.overrides), drop_unowned=True)
        best = run.path / "best" / "policy"  # validation_every: the best policy by validation, not the last
        if policy_path is None and best.is_dir():
            policy_path = str(best)
        if policy_path is None:
            ckpt = run.latest_checkpoint()
            if ckpt is None:
                raise SystemExit(f"{args.run} has no checkpoint to evaluate")
            policy_path = str(ckpt / "actor" / "policy") if (ckpt / "actor" / "policy").is_dir() else str(ckpt / "policy")
    else:
        config = _load(args) if args.config else load_config(None, list(args.overrides))
    policy_path = policy_path or config.loop.policy_model
    if policy_path == "tiny":
        raise SystemExit("eval needs a trained policy: pass --policy PATH or --run RUN_DIR")
    model, tokenizer = load_policy_model(policy_path, config)
    policy = make_policy(model, tokenizer, config)
    tasks = args.tasks.split(",") if args.tasks else list(config.loop.eval_tasks or run_training_tasks(config))
    n = args.instances if args.instances is not None else (config.loop.eval_instances_per_task or 10)
    start = args.seed_offset if args.seed_offset is not None else config.loop.eval_seed_offset
    env_kwargs = run_env_kwargs(config)
    env_kwargs.pop("latency", None)
    if args.best_of is not None:
        report = _best_of_n(args, config, policy, tasks, list(range(start, start + n)), env_kwargs, str(policy_path))
    else:
        report, _ = evaluate_policy(policy, tasks, list(range(start, start + n)), env_id=config.coach.env_id,
                                    env_kwargs=env_kwargs, num_envs=int(config.coach.num_envs or 4),
                                    greedy=not args.sample, meta={"policy": str(policy_path)})
    print(report.markdown())
    if args.out:
        Path(args.out).write_text(report.to_json())
    return 0


def _judge_backend(args: argparse.Namespace, config: Any) -> Any:
    """The judge backend of ``--verifier judge/probing``: the flags, else the config's ``verifier_*`` fields."""
    if args.verifier == "rule":
        return None
    coach = config.coach
    base_url = args.judge_base_url or (coach.verifier_base_url if coach.verifier_backend == "openai" else None)
    model_dir = args.judge_model or (coach.verifier_model if not base_url else None)
    if base_url:
        from coach_reward.backends import OpenAIBackend

        name = args.judge_model_name or coach.verifier_model
        if not name:
            raise ValueError("--judge-base-url needs --judge-model-name (the judge's model name on the server)")
        return OpenAIBackend(base_url, name)
    if model_dir:
        from coach_reward.backends import TransformersBackend

        if not Path(model_dir).is_dir():
            raise FileNotFoundError(f"judge model folder not found: {model_dir}")
        return TransformersBackend.from_pretrained(model_dir, images="drop")
    raise ValueError(f"--verifier {args.verifier} needs a judge: --judge-model DIR or --judge-base-url URL "
                     "--judge-model-name NAME")


def _best_of_n(args: argparse.Namespace, config: Any, policy: Any, tasks: list[str], seeds: list[int],
               env_kwargs: dict[str, Any], policy_path: str) -> Any:
    """``eval --best-of N``: sampled attempts, the chosen verifier picks (coach_rl.evaluation.evaluate_best_of_n)."""
    from coach_rl.evaluation import best_of_n_verifier, evaluate_best_of_n

    if args.best_of < 1:
        raise ValueError(f"--best-of must be >= 1, got {args.best_of}")
    verifier = best_of_n_verifier(args.verifier, _judge_backend(args, config))
    report, _ = evaluate_best_of_n(policy, tasks, seeds, args.best_of, verifier, verifier_name=args.verifier,
                                   env_id=config.coach.env_id, env_kwargs=env_kwargs,
                                   num_envs=int(config.coach.num_envs or 4), greedy=False,
                                   meta={"policy": policy_path})
    return report


def _cmd_irr(args: argparse.Namespace) -> int:
    from coach_rl.components import build_policy_model, make_policy
    from coach_rl.demos import collect_demos
    from coach_rl.irr import (
        irr_steps_from_demos,
        irr_steps_from_expert_steps,
        iterative_reasoning_refinement,
        plot_match_rate,
        write_irr_dataset,
    )
    from coach_rl.sft import sft_warmup

    config = _load(args)
    loop, coach = config.loop, config.coach
    out = Path(args.out or os.path.join(coach.output_dir, "irr"))
    lr = args.sft_lr if args.sft_lr is not None else float(loop.sft_learning_rate)
    demos = None
    if args.androidcontrol:
        from coach_reward.prm_data import read_androidcontrol

        model, tokenizer = build_policy_model(config)
        policy = make_policy(model, tokenizer, config)
        steps, skipped = irr_steps_from_expert_steps(read_androidcontrol(args.androidcontrol, screenshots=False),
                                                     policy.format)
        if skipped:
            print(f"skipped {skipped} step(s) the policy's action format cannot express")
        if args.warmup_steps:
            raise ValueError("--warmup-steps trains on the sim's demos; with --androidcontrol warm the policy up first")
    else:
        tasks = args.tasks.split(",") if args.tasks else list(coach.tasks or [])
        if not tasks:
            raise ValueError("irr needs tasks: --tasks A,B or tasks=... in the config")
        n = args.instances or loop.sft_instances_per_task or 2
        from coach_rl.components import run_policy_format

        demos = collect_demos(run_policy_format(config), tasks, seeds=range(loop.sft_seed_offset, loop.sft_seed_offset + n))
        model, tokenizer = build_policy_model(config, demos)
        policy = make_policy(model, tokenizer, config)
        steps = irr_steps_from_demos(demos)
        if args.warmup_steps:
            sft_warmup(model, tokenizer, demos, max_steps=args.warmup_steps, learning_rate=float(loop.sft_learning_rate),
                       per_device_train_batch_size=int(loop.sft_batch_size), seed=int(coach.seed), policy=policy)
    result = iterative_reasoning_refinement(
        model, tokenizer, steps, fmt=policy.format, k=args.k, rounds=args.rounds, temperature=float(coach.temperature),
        max_new_tokens=policy.max_new_tokens, sft_steps=args.sft_steps, sft_learning_rate=lr,
        sft_batch_size=int(loop.sft_batch_size), seed=int(coach.seed))
    dataset = write_irr_dataset(result.rows, out / "irr_dataset.jsonl")
    plot = plot_match_rate(result, out / "irr_match_rate.png")
    (out / "irr_rounds.json").write_text(json.dumps(result.to_dict(), indent=2))
    model.save_pretrained(out / "policy")
    tokenizer.save_pretrained(out / "policy")
    print(json.dumps({"dataset": str(dataset), "plot": str(plot), "policy": str(out / "policy"),
                      "match_rates": result.match_rates, "rows": len(result.rows), "stopped": result.stopped},
                     indent=2))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from coach_rl.report import write_report

    if not Path(args.run).is_dir():
        raise SystemExit(f"no run folder at {args.run}")
    print(write_report(args.run))
    return 0


def _cmd_summarize(args: argparse.Namespace) -> int:
    from coach_rl.report import summarize_runs

    missing = [r for r in args.runs if not Path(r).is_dir()]
    if missing:
        raise SystemExit(f"no run folder at {', '.join(missing)}")
    summary = summarize_runs(args.runs)
    text = json.dumps(summary, indent=2)
    if args.out:
        Path(args.out).write_text(text)
    print(text)
    return 0


def _cmd_prm_data(args: argparse.Namespace) -> int:
    from coach_rl.prm_rollouts import rollout_prm_rows, save_rollout_prm_dataset

    missing = [r for r in args.runs if not Path(r).exists()]
    if missing:
        raise SystemExit(f"no run folder at {', '.join(missing)}")
    rows = rollout_prm_rows(args.runs, labels=args.labels)
    paths = save_rollout_prm_dataset(rows, args.output)
    correct = sum(bool(r["label"]) for r in rows)
    print(json.dumps({"rows": len(rows), "correct": correct, "labels": args.labels,
                      "episodes": len({(r["source"], r["episode_id"]) for r in rows}),
                      "output": {k: str(v) for k, v in paths.items()}}, indent=2))
    return 0


def _cmd_configs(args: argparse.Namespace) -> int:
    from coach_rl.configs import list_configs, read_config_file

    if args.name is None:
        print("\n".join(list_configs()))
        return 0
    import yaml

    data, source = read_config_file(args.name)
    print(f"# {source}")
    print(yaml.safe_dump(data, sort_keys=False), end="")
    return 0


def _floats(text: str, name: str) -> list[float]:
    try:
        return [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{name} must be comma-separated numbers, got {text!r}") from None


def _ints(text: str, name: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"{name} must be comma-separated integers, got {text!r}") from None


def _cmd_sweep(args: argparse.Namespace) -> int:
    import shutil

    from coach_rl.sweep import SweepPlan, run_sweep

    seeds = _ints(args.seeds, "--seeds")
    plan = SweepPlan(
        config=args.config, init_from=args.init_from, out=args.out, env_steps=args.env_steps,
        algorithms=[a.strip() for a in args.algorithms.split(",") if a.strip()],
        learning_rates=_floats(args.learning_rates, "--learning-rates"),
        critic_learning_rates=_floats(args.critic_learning_rates, "--critic-learning-rates"),
        w_p=_floats(args.w_p, "--w-p"), seeds=seeds, tune_seeds=_ints(args.tune_seeds, "--tune-seeds"),
        validation_instances=args.validation_instances, validation_samples=args.validation_samples,
        curve_points=args.curve_points, eval_samples=args.eval_samples, overrides=list(args.overrides),
        jobs=args.jobs, extend_edges=args.extend_edges, stages=list(args.tune))
    if not Path(plan.init_from).is_dir():
        raise FileNotFoundError(f"--init-from {plan.init_from} is not a checkpoint folder (make one with "
                                "`coach-rl warmup --config ...`)")
    run_sweep(plan, echo=lambda line: print(line, file=sys.stderr))
    if args.write_configs:
        for path in sorted((Path(args.out) / "tuned").glob("*.yaml")):
            shutil.copy(path, Path(args.write_configs) / path.name)
    print((Path(args.out) / "report.md").read_text())
    return 0


_COMMANDS = {"train": _cmd_train, "sweep": _cmd_sweep, "warmup": _cmd_warmup, "sft": _cmd_sft, "eval": _cmd_eval, "irr": _cmd_irr,
             "report": _cmd_report,
             "summarize": _cmd_summarize, "prm-data": _cmd_prm_data, "configs": _cmd_configs}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``coach-rl`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # TRL 1.16's GRPOConfig sets gradient_checkpointing, which transformers 5 renamed: a warning on every
    # config, about a setting the user did not make (activation_checkpointing takes the value either way)
    warnings.filterwarnings("ignore", message=r"`gradient_checkpointing(_kwargs)?` is deprecated", category=FutureWarning)
    warnings.filterwarnings("ignore", message=r"`is_gradient_checkpointing` is deprecated", category=FutureWarning)
    try:
        return _COMMANDS[args.command](args)
    except (KeyError, ValueError, FileNotFoundError, ConnectionError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        print(f"coach-rl {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
