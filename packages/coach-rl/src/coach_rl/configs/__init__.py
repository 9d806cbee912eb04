"""Run configurations: the YAML files shipped with coach-rl, and loading one by name or path with ``key=value`` overrides.

A run configuration is ONE flat mapping of keys. Each key is a field of :class:`LoopArguments` (what the
outer pipeline does: algorithm, policy model, SFT warm-up, evaluation) or of the config class of the run's
``algorithm`` (:func:`coach_rl.algorithms.config_class`: :class:`coach_rl.config.CoachConfig` for ``coach``,
``GRPOBaselineConfig`` for ``grpo``, ...; each is TRL's ``GRPOConfig`` plus the shared online-RL settings plus the
algorithm's own). A key that only other algorithms own is an error where it was written for this run's algorithm
(the file that sets ``algorithm``, a file extending it, the overrides) and is dropped, and listed in
``RunConfig.dropped``, where it comes from a file written for another algorithm (``main-grpo.yaml`` extends the Coach
config ``main.yaml``: Coach's ``critic_*`` keys are dropped).
Values are read by TRL's own parser (``trl.TrlParser``, an ``HfArgumentParser``) over both dataclasses, as
``--key=value`` arguments: ``"8"`` is ``8`` for an int field, ``"1e-5"`` a float, ``true``/``false`` (or
yes/no, 1/0) a bool, ``"a,b"`` or ``"[a, b]"`` a list, ``"null"`` None where the field allows it, a mapping or
JSON/YAML object text a dict field. A value that does not fit is a ``ValueError`` naming the key with the parser's
message, an unknown key a ``KeyError`` that suggests the closest names; ``coach-rl train --help-config`` lists
every key of the run's algorithm with its help. A YAML file may start from another with ``extends: NAME_OR_PATH``.

    >>> from coach_rl.configs import load_config
    >>> cfg = load_config("smoke", ["num_generations=2", "output_dir=/tmp/run"])   # doctest: +SKIP
    >>> cfg.loop.algorithm, cfg.coach.num_generations                               # doctest: +SKIP
    ('coach', 2)
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import enum
import json
import logging
import os
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Union

import yaml

__all__ = [
    "TRAIN_SEED_STRIDE",
    "LoopArguments",
    "RunConfig",
    "algorithm_config_class",
    "config_keys",
    "key_owners",
    "overrides_for",
    "instance_seed_ranges",
    "list_configs",
    "load_config",
    "parse_overrides",
    "read_config_file",
]


_EXTENDS = "extends"
_log = logging.getLogger(__name__)
TRAIN_SEED_STRIDE = 10_000
"""RL episode seeds of run seed ``s`` start at ``train_seed_offset + TRAIN_SEED_STRIDE * s``."""


@dataclass
class LoopArguments:
    """What the training pipeline around the trainers does: which algorithm, which policy, SFT warm-up, evaluation."""

    algorithm: str = field(
        default="coach",
        metadata={"help": "A registered algorithm (coach_rl.algorithms): coach (Android Coach: critic-scored K actions "
                          "per stored state, ACLOO), grpo (G trajectories per task instance, outcome reward), ppo "
                          "(V(s) critic, GAE), and any other module of coach_rl.algorithms."},
    )
    policy_model: str = field(
        default="tiny",
        metadata={"help": "Policy checkpoint (path), or `tiny` to build a small random Qwen2 policy locally with "
                          "a tokenizer trained on the sim's expert demos (no model hub needed)."},
    )
    tiny_hidden_size: int = field(default=64, metadata={"help": "Hidden size of the `tiny` policy."})
    tiny_num_layers: int = field(default=2, metadata={"help": "Transformer layers of the `tiny` policy."})
    tiny_num_heads: int = field(default=4, metadata={"help": "Attention heads of the `tiny` policy."})
    tiny_vocab_size: int = field(default=1024, metadata={"help": "Vocabulary size of the `tiny` policy's tokenizer."})
    policy_mode: str = field(
        default="xml",
        metadata={"help": "What the policy sees: xml (compressed UI text), screenshot, or both."},
    )
    action_format: str = field(
        default="index",
        metadata={"help": "How the policy writes actions: index (AndroidWorld JSON with element indexes, for small "
                          "text policies) or uitars (UI-TARS calls with coordinates)."},
    )
    max_history: int = field(default=2, metadata={"help": "Earlier steps shown in the policy prompt."})
    policy_action_space: bool = field(
        default=True,
        metadata={"help": "List the action formats in every prompt. A tiny policy fine-tuned on the format does not "
                          "need the list, and prompts get much shorter (index format only)."},
    )
    policy_max_label_chars: int | None = field(
        default=None, metadata={"help": "Cap on each element label in index-format prompts (None: the format's default)."},
    )
    sft_instances_per_task: int = field(
        default=0,
        metadata={"help": "Expert demonstrations per training task, for the SFT warm-up before RL and the critic's "
                          "pre-training (0: no demonstrations, no SFT)."},
    )
    sft_max_steps: int = field(default=100, metadata={"help": "Optimizer steps of the SFT warm-up (0: no SFT)."})
    sft_answer_noise: float = field(
        default=0.0,
        metadata={"help": "Share of the demonstrated answers the SFT warm-up sees replaced by a click on another "
                          "clickable element of the same screen (index format; drawn with the run's seed): a "
                          "deliberately noisy teacher, so that a warm-up trained long enough to read the goal still "
                          "leaves RL room (coach-rl README, 'The warm-up did not read the goal')."},
    )
    sft_learning_rate: float = field(default=1e-3, metadata={"help": "Learning rate of the SFT warm-up."})
    sft_batch_size: int = field(default=8, metadata={"help": "Examples per SFT optimizer step."})
    sft_seed_offset: int = field(
        default=500_000,
        metadata={"help": "Demonstration instances use seeds sft_seed_offset + i (disjoint from RL and eval seeds)."},
    )
    train_seed_offset: int = field(
        default=0,
        metadata={"help": "RL episodes use env seeds train_seed_offset + 10000 * seed + i (i counts the run's task "
                          "instances), disjoint from the demonstration and evaluation seeds."},
    )
    init_from: str | None = field(
        default=None,
        metadata={"help": "Start from a checkpoint folder (e.g. <warm-up run>/checkpoints/iter-000000, written by "
                          "`coach-rl warmup`): its policy, its critic (coach) and its evaluation before training. "
                          "SFT and critic pre-training are skipped; optimisers start fresh, the replay buffer empty."},
    )
    eval_instances_per_task: int = field(
        default=0, metadata={"help": "Held-out instances per task evaluated before and after training (0: none)."},
    )
    eval_seed_offset: int = field(
        default=1_000_000,
        metadata={"help": "Evaluation instances use seeds eval_seed_offset + i: task instances unseen in training."},
    )
    eval_tasks: list[str] | None = field(
        default=None, metadata={"help": "Tasks to evaluate on; None: the training tasks."},
    )
    eval_every: int = field(
        default=0, metadata={"help": "Also evaluate every this many iterations (0: only before and after)."},
    )
    max_env_steps: int | None = field(
        default=None,
        metadata={"help": "Stop at exactly this many environment steps, even before total_iterations (None: "
                          "total_iterations alone decides): the iteration that would pass it plays only the steps "
                          "left (episodes under way end there, truncated) and still updates. Compares algorithms "
                          "at one env-step budget (`coach-rl sweep`, tools/main_job.sh COMPARE=...). With "
                          "collector=ray the run stops after the round that reaches it (not exact)."},
    )
    eval_at_env_steps: list[int] | None = field(
        default=None,
        metadata={"help": "Also evaluate (greedy, and sampled with eval_samples_per_instance) after the first "
                          "iteration that reaches each of these env-step counts (eval_steps<N>.json, N the env "
                          "steps actually done), so that runs of different algorithms can be compared at matched "
                          "env steps (`coach-rl sweep` spaces them 1.25x apart)."},
    )
    eval_samples_per_instance: int = field(
        default=0,
        metadata={"help": "Besides the greedy evaluation, play every held-out instance this many times with the "
                          "policy sampling at its training temperature (0: greedy only). Greedy success of a small "
                          "policy moves in whole tasks; the sampled success rate sees a policy that got surer."},
    )
    validation_every: int = field(
        default=0,
        metadata={"help": "Beyond the paper (0: off, the paper's setting): keep the best policy by a VALIDATION "
                          "evaluation. Before training and every this many iterations (and after the last one) the "
                          "policy plays the validation instances sampling at its training temperature; the one with the "
                          "highest validation success (ties: the earlier) is kept in <output_dir>/best/, and the "
                          "evaluation after training, the report and `coach-rl eval --run` use it instead of the "
                          "last policy (against the forgetting after the peak, coach-rl README). Validation episodes "
                          "are counted apart (validation/env_steps), not in the env steps nor in max_env_steps' "
                          "budget, and their time not in the training wall time."},
    )
    validation_instances_per_task: int = field(
        default=2,
        metadata={"help": "With validation_every > 0: validation instances per evaluation task, seeds "
                          "validation_seed_offset + i (disjoint from the training, demonstration and held-out "
                          "evaluation seeds; checked when the configuration loads)."},
    )
    validation_samples_per_instance: int = field(
        default=4,
        metadata={"help": "With validation_every > 0: episodes per validation instance, the policy sampling at its "
                          "training temperature (the sampled success moves before the greedy one does). One "
                          "validation costs tasks x validation_instances_per_task x this many episodes."},
    )
    validation_seed_offset: int = field(
        default=2_000_000,
        metadata={"help": "Validation instances use seeds validation_seed_offset + i: never trained on, never in "
                          "the held-out evaluation (whose seeds start at eval_seed_offset)."},
    )
    early_stopping_patience: int = field(
        default=0,
        metadata={"help": "With validation_every > 0: stop training after this many validations in a row without a "
                          "new best (the best policy is still the one kept). 0: never stop early, run the whole "
                          "budget and keep the best."},
    )
    oracle_diagnostics: bool = field(
        default=True,
        metadata={"help": "On the simulated phone, record the scripted expert's action at every step (no learner "
                          "reads it) and log per iteration how the critic ranks the K actions (AUC, top-1) and how "
                          "often the advantages' signs agree with the expert (coach_rl.diagnostics). Off the sim it "
                          "does nothing."},
    )
    diagnostics_kl_states: int = field(
        default=16,
        metadata={"help": "Probe states (the first iteration's prompts) on which the KL divergence from the "
                          "warm-up policy to the current one is logged after every update (0: not measured)."},
    )
    eval_before: bool = field(default=True, metadata={"help": "Evaluate the policy before RL (after SFT)."})
    eval_after: bool = field(default=True, metadata={"help": "Evaluate the policy after RL."})
    env_threads: bool = field(
        default=False,
        metadata={"help": "Step the envs in threads: for envs that wait on devices (emulators, the sim's latency "
                          "model); the sim itself is CPU-bound and gains nothing."},
    )
    checkpoint_keep: int = field(default=2, metadata={"help": "Complete checkpoints kept in the run folder."})
    write_report: bool = field(default=True, metadata={"help": "Write report.md and plots at the end."})

    def validate(self) -> None:
        """Check the values; raises ``ValueError`` naming the bad key."""
        from coach_rl.algorithms import algorithm_names

        if self.algorithm not in algorithm_names():
            raise ValueError(f"algorithm must be one of {', '.join(algorithm_names())}, got {self.algorithm!r}")
        if self.policy_mode not in ("xml", "screenshot", "both"):
            raise ValueError(f"policy_mode must be xml, screenshot or both, got {self.policy_mode!r}")
        if self.action_format not in ("index", "uitars"):
            raise ValueError(f"action_format must be index or uitars, got {self.action_format!r}")
        if self.action_format == "index" and self.policy_mode == "screenshot":
            raise ValueError("action_format=index names UI elements: it needs policy_mode xml or both")
        if not self.policy_model:
            raise ValueError("policy_model must be a checkpoint path or 'tiny'")
        for name in ("tiny_hidden_size", "tiny_num_layers", "tiny_num_heads", "tiny_vocab_size",
                     "sft_batch_size", "checkpoint_keep"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)!r}")
        for name in ("max_history", "sft_instances_per_task", "sft_max_steps", "eval_instances_per_task", "sft_seed_offset",
                     "train_seed_offset", "eval_seed_offset", "eval_every", "eval_samples_per_instance",
                     "diagnostics_kl_states", "validation_every", "validation_seed_offset",
                     "validation_instances_per_task", "validation_samples_per_instance", "early_stopping_patience"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)!r}")
        if self.tiny_hidden_size % self.tiny_num_heads:
            raise ValueError(f"tiny_hidden_size ({self.tiny_hidden_size}) must be divisible by tiny_num_heads "
                             f"({self.tiny_num_heads})")
        if not 0.0 <= self.sft_answer_noise < 1.0:
            raise ValueError(f"sft_answer_noise must be in [0, 1), got {self.sft_answer_noise!r}")
        if self.sft_answer_noise and self.action_format != "index":
            raise ValueError("sft_answer_noise is for the index format (a wrong answer names another element)")
        if not self.sft_learning_rate > 0:
            raise ValueError(f"sft_learning_rate must be > 0, got {self.sft_learning_rate!r}")
        if self.policy_max_label_chars is not None and self.policy_max_label_chars < 1:
            raise ValueError(f"policy_max_label_chars must be >= 1 or null, got {self.policy_max_label_chars!r}")
        if not self.policy_action_space and self.action_format != "index":
            raise ValueError("policy_action_space=false is for the index format (UI-TARS prompts keep their list)")
        if self.max_env_steps is not None and self.max_env_steps < 1:
            raise ValueError(f"max_env_steps must be >= 1 or null, got {self.max_env_steps!r}")
        if self.eval_at_env_steps is not None:
            if any(n < 1 for n in self.eval_at_env_steps):
                raise ValueError(f"eval_at_env_steps must hold env-step counts >= 1, got {self.eval_at_env_steps!r}")
            if not self.eval_instances_per_task:
                raise ValueError("eval_at_env_steps evaluates on the held-out instances, but eval_instances_per_task "
                                 "is 0: set it too")
        if self.validation_every:
            for name in ("validation_instances_per_task", "validation_samples_per_instance"):
                if getattr(self, name) < 1:
                    raise ValueError(f"{name} must be >= 1 when validation_every > 0 (validation is on), got "
                                     f"{getattr(self, name)!r}")
        elif self.early_stopping_patience:
            raise ValueError(f"early_stopping_patience={self.early_stopping_patience!r} counts validations without "
                             "improvement, but validation_every is 0 (no validation): set validation_every too")


# -- values, read by TRL's parser ---------------------------------------------------------------------------
# The merged YAML + override mapping becomes ``--key=value`` arguments for TRL's own parser (``trl.TrlParser``, its
# ``HfArgumentParser``) over LoopArguments and the algorithm's config class: a value means what it means on TRL's command line, and
# one that does not fit gets the parser's message, naming the key. Around the parser, what it has no spelling for:
# null for a field that allows None (the parser has it for numbers only), an empty list, a mapping (dict fields),
# and the few TrainingArguments fields typed as a union of several types (the parser reads one type per field).

_NULLS = ("null", "none", "~", "")


def _members(tp: Any) -> list[Any]:
    """The types a field takes besides None: ``int | None`` -> [int], ``str | list[str]`` -> [str, list[str]]."""
    if typing.get_origin(tp) is Union or isinstance(tp, types.UnionType):
        return [a for a in typing.get_args(tp) if a is not type(None)]
    return [tp]


def _is_enum(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, enum.Enum)


def _is_mapping(tp: Any) -> bool:
    return tp is dict or typing.get_origin(tp) in (dict, Mapping)


def _or_text(read: Any) -> Any:
    """``read``, or the text itself where ``read`` rejects it (for a field typed ``X | str``)."""
    def read_or_text(text: str) -> Any:
        try:
            return read(text)
        except (ValueError, TypeError, argparse.ArgumentTypeError):
            return text
    return read_or_text


def _raise(message: str) -> None:
    raise ValueError(message)


def _config_parser(keys: Mapping[str, Any], cls: type) -> tuple[argparse.ArgumentParser, dict[str, argparse.Action]]:
    """TRL's parser over LoopArguments and the algorithm's config class ``cls`` (``keys``: their field types), and
    its action per key, set to read a configuration: no defaults (it returns just the keys given), no abbreviations,
    errors raised, not exits."""
    from trl import TrlParser

    parser = TrlParser((LoopArguments, cls), exit_on_error=False, allow_abbrev=False, add_help=False)
    parser.error = _raise  # argparse exits on some errors even with exit_on_error=False
    actions: dict[str, argparse.Action] = {}
    for action in parser._actions:
        action.default, action.required = argparse.SUPPRESS, False
        if action.option_strings[0] != f"--{action.dest}":
            continue  # the `--no_<key>` twin of a bool field
        actions[action.dest] = action
        members = _members(keys[action.dest])
        if len(members) < 2 or any(_is_mapping(m) or _is_enum(m) for m in members):
            continue
        # A union of several types (TrainingArguments' report_to, debug, pad_to_multiple_of, ...): HfArgumentParser
        # keeps one of them; read a list where the union has one, else the non-text type, else the text.
        lists = [typing.get_args(m)[0] for m in members if typing.get_origin(m) is list]
        other = next((m for m in members if m in (bool, int, float)), None)
        if lists:  # report_to: "a,b", "[a, b]" or one name give a list; debug: a list of DebugOption values
            action.nargs, action.const = "+", None
            action.type, action.choices = ((str, [m.value for m in lists[0]]) if _is_enum(lists[0])
                                           else (lists[0], None))
        elif other is not None:  # pad_to_multiple_of: an int, else the text (the parser picked text; bools it reads)
            action.type = _or_text(action.type if other is bool else other)
    return parser, actions


def _text(value: Any, action: argparse.Action, key: str) -> str:
    """One YAML value as command-line text for ``action``. A text field takes only text (an unquoted YAML ``no`` or
    ``1.0`` is not what was meant); an integral float (YAML ``3.0``) is an int's text for an int field."""
    if action.type is str and not isinstance(value, str):
        raise ValueError(f"{key} must be a string, got {value!r} ({type(value).__name__}); quote it in YAML")
    if isinstance(value, bool):
        return "true" if value else "false"
    if action.type is int and isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _mapping(value: Any, tp: Any, key: str) -> Any:
    """A dict field's value (the parser reads no mappings): a mapping, or JSON or YAML object text; other text stays
    text where the field takes text too (``deepspeed: dict | str``: a file path)."""
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            parsed = yaml.safe_load(value)
        if isinstance(parsed, dict):
            return parsed
        if str in _members(tp):
            return value
    raise ValueError(f"{key} must be a mapping (YAML or JSON object), got {value!r}")


def _read_values(raw: Mapping[str, Any], keys: Mapping[str, Any], cls: type) -> dict[str, Any]:
    """``raw``'s values as TRL's parser reads them (``keys``: the field types of LoopArguments and ``cls``);
    ``ValueError`` naming a bad key."""
    parser, actions = _config_parser(keys, cls)
    direct: dict[str, Any] = {}  # what the parser has no spelling for
    argv: list[str] = []
    for key, value in raw.items():
        tp, action = keys[key], actions[key]
        if type(None) in typing.get_args(tp) and (
                value is None or (isinstance(value, str) and value.strip().lower() in _NULLS)):
            direct[key] = None
        elif any(_is_mapping(m) for m in _members(tp)):
            direct[key] = _mapping(value, tp, key)
        elif action.nargs == "+":  # a list field: a YAML list, or "a,b" / "[a, b]" text, as separate values
            if isinstance(value, str):
                text = value.strip()
                value = yaml.safe_load(text) if text.startswith("[") else [v.strip() for v in text.split(",") if v.strip()]
            items = list(value) if isinstance(value, (list, tuple)) else [value]
            if not items:
                direct[key] = []
            else:
                argv += [f"--{key}", *(_text(v, action, f"{key}[{i}]") for i, v in enumerate(items))]
        else:
            argv.append(f"--{key}={_text(value, action, key)}")
    try:
        namespace, rest = parser.parse_known_args(argv)
    except argparse.ArgumentError as err:
        key = (err.argument_name or "").split("/")[0].lstrip("-")
        action = actions.get(key)
        kind = {"int": "an integer", "float": "a number", "string_to_bool": "true or false"}.get(
            getattr(getattr(action, "type", None), "__name__", ""))
        if kind and action.nargs != "+":
            raise ValueError(f"{key} must be {kind}, got {raw[key]!r} (TrlParser: {err.message})") from None
        raise ValueError(f"{key}: {err.message}") from None
    if rest:
        raise ValueError(f"config values the parser did not read: {rest}")
    return {key: direct[key] if key in direct else getattr(namespace, key) for key in raw}


# -- the config object ------------------------------------------------------------------------------------


def algorithm_config_class(algorithm: str = "coach") -> type:
    """The config class of ``algorithm`` (:func:`coach_rl.algorithms.config_class`); a ValueError naming the known
    algorithms."""
    from coach_rl.algorithms import algorithm_names, config_class

    if not isinstance(algorithm, str) or algorithm not in algorithm_names():
        raise ValueError(f"algorithm must be one of {', '.join(algorithm_names())}, got {algorithm!r}")
    return config_class(algorithm)


def _field_types(cls: type) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    return {f.name: hints[f.name] for f in dataclasses.fields(cls) if f.init}


def config_keys(algorithm: str = "coach") -> dict[str, Any]:
    """Every key a run configuration of ``algorithm`` accepts, with its type (LoopArguments' fields and those of the
    algorithm's config class)."""
    cls = algorithm_config_class(algorithm)
    keys = _field_types(cls)
    loop = _field_types(LoopArguments)
    clash = set(keys) & set(loop)
    if clash:  # pragma: no cover - guarded by a test
        raise RuntimeError(f"LoopArguments shadows {cls.__name__} fields {sorted(clash)}")
    keys.update(loop)
    return keys


def key_owners() -> dict[str, list[str]]:
    """Which algorithms accept each key that not every algorithm accepts (``{key: [algorithm, ...]}``)."""
    from coach_rl.algorithms import algorithm_names

    per = {name: set(config_keys(name)) for name in algorithm_names()}
    everyone = set.intersection(*per.values())
    owners: dict[str, list[str]] = {}
    for name, keys in per.items():
        for key in sorted(keys - everyone):
            owners.setdefault(key, []).append(name)
    return owners


def overrides_for(algorithm: str, overrides: Sequence[str]) -> tuple[list[str], list[str]]:
    """``key=value`` ``overrides`` split into those a run of ``algorithm`` takes and those only other algorithms have
    (e.g. Coach's ``critic_*`` for GRPO), for tools that pass one set of overrides to runs of several algorithms. A
    key no algorithm has is kept, so that loading the run reports it."""
    keys, owners = config_keys(algorithm), key_owners()
    kept, left_out = [], []
    for item in overrides:
        key = next(iter(parse_overrides([item])))
        (kept if key in keys or key not in owners else left_out).append(item)
    return kept, left_out


@dataclass
class RunConfig:
    """A resolved run configuration: the pipeline's :class:`LoopArguments`, the algorithm's config and the keys that
    were set explicitly (by the file, ``extends`` chain or overrides), already type-checked."""

    loop: LoopArguments
    coach: Any
    """The config of the run's algorithm (``coach_rl.algorithms.config_class(loop.algorithm)``: a
    :class:`coach_rl.config.CoachConfig` for ``coach``; each a TRL ``GRPOConfig`` + online RL + the algorithm's own
    settings). The name is older than the per-algorithm configs and kept."""
    explicit: dict[str, Any]
    source: str = "<dict>"
    dropped: list[str] = field(default_factory=list)
    """Keys the config's files set for another algorithm, which this run's algorithm does not have (not read)."""

    def to_dict(self) -> dict[str, Any]:
        """What ``config.yaml`` holds: every LoopArguments/online-RL key and every key of the algorithm's own settings
        (those of its config class beyond :class:`coach_rl.config.TrainerConfig`) plus the other keys set explicitly.

        Feeding it back to :func:`load_config` gives an equal configuration.
        """
        from coach_rl.arguments import OnlineRLArguments, TrainerConfig

        out: dict[str, Any] = {f.name: getattr(self.loop, f.name) for f in dataclasses.fields(LoopArguments)}
        for f in dataclasses.fields(OnlineRLArguments):
            out[f.name] = getattr(self.coach, f.name)
        shared = {f.name for f in dataclasses.fields(TrainerConfig)}
        for f in dataclasses.fields(self.coach):
            if f.name not in shared:
                out[f.name] = getattr(self.coach, f.name)
        for key in self.explicit:
            if key not in out:
                value = getattr(self.coach, key)
                out[key] = value.value if isinstance(value, enum.Enum) else value
        for key in ("output_dir", "seed", "num_generations", "learning_rate"):
            out[key] = getattr(self.coach, key)
        return _plain(out)

    def differences(self, other: RunConfig, ignore: Sequence[str] = ()) -> dict[str, tuple[Any, Any]]:
        """Keys whose values differ between two configurations (``{key: (self_value, other_value)}``)."""
        a, b = self.to_dict(), other.to_dict()
        return {k: (a.get(k), b.get(k)) for k in sorted(set(a) | set(b))
                if k not in ignore and a.get(k) != b.get(k)}


def instance_seed_ranges(config: RunConfig) -> dict[str, range]:
    """The env seeds each part of a run plays (per task): ``demonstration`` (SFT, critic pre-training),
    ``training`` (RL rollouts: at most ``rollout_batch_size`` instances per iteration, so an upper bound),
    ``evaluation`` (held out, before/after training) and ``validation`` (empty unless ``validation_every``)."""
    loop, coach = config.loop, config.coach
    demos = loop.sft_instances_per_task or 2  # coach_rl.warmup.collect_run_demos: a tiny tokenizer needs some text
    train_start = loop.train_seed_offset + TRAIN_SEED_STRIDE * int(coach.seed)
    validation = loop.validation_instances_per_task if loop.validation_every else 0
    return {
        "demonstration": range(loop.sft_seed_offset, loop.sft_seed_offset + demos),
        "training": range(train_start, train_start + int(coach.total_iterations) * int(coach.rollout_batch_size)),
        "evaluation": range(loop.eval_seed_offset, loop.eval_seed_offset + loop.eval_instances_per_task),
        "validation": range(loop.validation_seed_offset, loop.validation_seed_offset + validation),
    }


def _check_validation_seeds(config: RunConfig) -> None:
    """The validation instances must be none of the ones trained on, demonstrated or held out for evaluation."""
    ranges = instance_seed_ranges(config)
    mine = ranges["validation"]
    fields = {"demonstration": "sft_seed_offset", "training": "train_seed_offset and seed",
              "evaluation": "eval_seed_offset"}
    for part, other in ranges.items():
        if part != "validation" and mine and other and mine.start < other.stop and other.start < mine.stop:
            raise ValueError(
                f"the validation seeds [{mine.start}, {mine.stop}) (validation_seed_offset, "
                f"validation_instances_per_task) overlap the {part} seeds [{other.start}, {other.stop}) "
                f"({fields[part]}): pick a validation_seed_offset outside them")


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, enum.Enum):
        return value.value
    return value


# -- files and names --------------------------------------------------------------------------------------


def list_configs() -> list[str]:
    """Names of the configurations shipped with coach-rl (``load_config(name)`` loads one)."""
    root = resources.files(__name__)
    return sorted(p.name[:-5] for p in root.iterdir() if p.name.endswith(".yaml"))


def _resolve(name_or_path: str | os.PathLike[str], relative_to: Path | None = None) -> tuple[str, str]:
    """(text, source) of a config given as a path or a shipped name."""
    text_name = os.fspath(name_or_path)
    candidates = [Path(text_name)]
    if relative_to is not None and not Path(text_name).is_absolute():
        candidates.insert(0, relative_to / text_name)
    for path in candidates:
        if path.is_file():
            return path.read_text(encoding="utf-8"), str(path.resolve())
    stem = text_name[:-5] if text_name.endswith(".yaml") else text_name
    if "/" not in stem and os.sep not in stem:
        shipped = resources.files(__name__) / f"{stem}.yaml"
        if shipped.is_file():
            return shipped.read_text(encoding="utf-8"), f"coach_rl.configs:{stem}"
    names = list_configs()
    close = difflib.get_close_matches(stem, names, n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise FileNotFoundError(
        f"no config file {text_name!r} and no shipped config of that name (shipped: {', '.join(names)}){hint}"
    )


def read_config_file(name_or_path: str | os.PathLike[str], _seen: tuple[str, ...] = ()) -> tuple[dict[str, Any], str]:
    """The raw mapping of a config file or shipped name, with its ``extends`` chain merged (later keys win)."""
    layers, source = _read_layers(name_or_path, _seen)
    data: dict[str, Any] = {}
    for _, layer in layers:
        data.update(layer)
    return data, source


def _read_layers(name_or_path: str | os.PathLike[str],
                 _seen: tuple[str, ...] = ()) -> tuple[list[tuple[str, dict[str, Any]]], str]:
    """The ``extends`` chain of a config file as ``(source, mapping)`` layers, the furthest base first."""
    relative_to = Path(_seen[-1]).parent if _seen and not _seen[-1].startswith("coach_rl.configs:") else None
    text, source = _resolve(name_or_path, relative_to)
    if source in _seen:
        raise ValueError(f"config 'extends' cycle: {' -> '.join((*_seen, source))}")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise ValueError(f"config {source} is not valid YAML: {err}") from err
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError(f"config {source} must be a mapping of key: value, got {type(data).__name__}")
    parent = data.pop(_EXTENDS, None)
    layers = _read_layers(parent, (*_seen, source))[0] if parent is not None else []
    return [*layers, (source, data)], source


def parse_overrides(overrides: Sequence[str] | Mapping[str, Any] | None) -> dict[str, Any]:
    """``["a=1", "b=x"]`` (CLI style) or a mapping -> a dict of raw values (types are checked by :func:`load_config`)."""
    if overrides is None:
        return {}
    if isinstance(overrides, Mapping):
        return dict(overrides)
    if isinstance(overrides, str):
        raise TypeError("overrides must be a list of 'key=value' strings or a mapping, not one string")
    out: dict[str, Any] = {}
    for item in overrides:
        if not isinstance(item, str) or "=" not in item:
            raise ValueError(f"override {item!r} must look like key=value")
        key, value = item.split("=", 1)
        key = key.strip().lstrip("-").replace("-", "_")
        if not key:
            raise ValueError(f"override {item!r} has an empty key")
        out[key] = value
    return out


def load_config(
    name_or_path: str | os.PathLike[str] | Mapping[str, Any] | None = None,
    overrides: Sequence[str] | Mapping[str, Any] | None = None,
    *,
    drop_unowned: bool = False,
) -> RunConfig:
    """Load a run configuration: a shipped name (``smoke``, ``main``...), a YAML path or a mapping, plus overrides.

    The ``algorithm`` key picks the config class (:func:`coach_rl.algorithms.config_class`). Every key is checked
    against :func:`config_keys` of that algorithm: a key no algorithm has raises ``KeyError`` with suggestions; a key
    only other algorithms have raises ``KeyError`` naming them where it was written for this run's algorithm (the
    overrides, a file whose ``algorithm`` at that point of the ``extends`` chain is this run's) and is dropped,
    listed in ``RunConfig.dropped`` and logged, where a file written for another algorithm set it.
    ``drop_unowned=True`` drops such keys of the file or mapping itself too (never the overrides'): for the
    ``config.yaml`` of a run saved before the configs were per algorithm, which holds Coach's critic keys whatever
    the algorithm. Each value is read by TRL's parser (``ValueError`` naming the key when it does not fit; never
    ``SystemExit``). Defaults that suit this machine are filled in when not given: ``use_cpu`` when CUDA is absent
    (and then ``bf16: false``), ``report_to: none``. Then ``LoopArguments`` and the config class validate the values.
    """
    if name_or_path is None:
        layers, source = [], "<defaults>"
    elif isinstance(name_or_path, Mapping):
        raw = dict(name_or_path)
        raw.pop(_EXTENDS, None)
        layers, source = [("<dict>", raw)], "<dict>"
    else:
        layers, source = _read_layers(name_or_path)
    layers = [*layers, ("the overrides", parse_overrides(overrides))]

    # Where each key's value comes from, and which algorithm that layer was written for (the `algorithm` in effect
    # once it is applied): the overrides are for the run's own algorithm, whatever they say.
    raw: dict[str, Any] = {}
    origin: dict[str, tuple[str, Any]] = {}
    default_algorithm = LoopArguments.algorithm
    for n, (where, layer) in enumerate(layers):
        raw.update(layer)
        written_for = raw.get("algorithm", default_algorithm)
        for key in layer:
            origin[key] = (where, written_for if n < len(layers) - 1 else None)
    algorithm = raw.get("algorithm", default_algorithm)
    cls = algorithm_config_class(algorithm)

    keys = config_keys(algorithm)
    owners = key_owners() if any(key not in keys for key in raw) else {}
    unknown, foreign, dropped = [], [], []
    for key in raw:
        if key in keys:
            continue
        if key not in owners:
            unknown.append(key)
            continue
        where, written_for = origin[key]
        lenient = drop_unowned and where != "the overrides"
        if lenient or (written_for is not None and written_for != algorithm):
            dropped.append(key)
        else:
            foreign.append(f"{key} is a setting of {', '.join(owners[key])} (set in {where}); this run's algorithm "
                           f"is {algorithm}")
    if unknown:
        msgs = []
        for k in unknown:
            close = difflib.get_close_matches(k, list(keys), n=3)
            msgs.append(f"{k!r}" + (f" (did you mean {', '.join(close)}?)" if close else ""))
        raise KeyError(f"unknown config key(s) in {source}: {'; '.join(msgs)}")
    if foreign:
        raise KeyError("; ".join(foreign) + f" (coach-rl train --help-config algorithm={algorithm} lists its keys)")
    for key in dropped:
        del raw[key]
    if dropped:
        _log.info("config %s: keys of other algorithms dropped (algorithm %s does not read them): %s", source,
                  algorithm, ", ".join(dropped))
    values = _read_values(raw, keys, cls)

    loop_names = {f.name for f in dataclasses.fields(LoopArguments)}
    loop = LoopArguments(**{k: v for k, v in values.items() if k in loop_names})
    loop.validate()
    coach_kwargs = {k: v for k, v in values.items() if k not in loop_names}
    import torch

    if not torch.cuda.is_available():
        coach_kwargs.setdefault("use_cpu", True)
    if coach_kwargs.get("use_cpu"):
        coach_kwargs.setdefault("bf16", False)  # TRL turns bf16 on by default; on CPU it is slow and imprecise
    coach_kwargs.setdefault("report_to", "none")
    coach_kwargs.setdefault("output_dir", os.path.join("runs", "coach-rl"))
    coach = cls(**coach_kwargs)
    config = RunConfig(loop=loop, coach=coach, explicit=values, source=source, dropped=dropped)
    _check_validation_seeds(config)
    return config
