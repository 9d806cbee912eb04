"""What a run is made of, from its config: its tasks, its envs' settings, its policy, and the collector playing it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from coach_rl.configs import TRAIN_SEED_STRIDE, RunConfig
from coach_rl.envs import make_envs

__all__ = [
    "build_collector",
    "build_policy_model",
    "load_policy_model",
    "make_policy",
    "run_env_kwargs",
    "run_policy_format",
    "run_training_tasks",
]


def run_training_tasks(config: RunConfig) -> list[str]:
    """The run's training tasks: the config's ``tasks``, else every task of its env's suite."""
    if config.coach.tasks:
        return list(config.coach.tasks)
    from android_gym.tasks import list_tasks

    suite = (config.coach.env_kwargs or {}).get("suite", "sim")
    return list_tasks(suite)


def run_env_kwargs(config: RunConfig) -> dict[str, Any]:
    """The keyword arguments every env of the run is made with (step budget or ``max_turns`` cap, screenshots)."""
    kwargs = dict(config.coach.env_kwargs or {})
    steps = config.coach.max_episode_steps
    if steps is not None:
        kwargs["max_steps"] = steps
    else:  # each task's own budget, capped at max_turns (Table 5's Max Turns)
        kwargs["max_steps_cap"] = config.coach.max_turns
    kwargs.setdefault("screenshot", config.loop.policy_mode != "xml")
    return kwargs


def run_policy_format(config: RunConfig) -> Any:
    """The run's :class:`coach_rl.policy.PolicyFormat`: prompt mode, action format, history and pixel bounds."""
    from coach_rl.policy import PolicyFormat

    loop = config.loop
    args = config.coach
    # the parser maps smart-resized coordinates back with the same pixel bounds as the processor (Table 5)
    kwargs: dict[str, Any] = {"mode": loop.policy_mode, "action_format": loop.action_format,
                              "max_history": loop.max_history, "min_pixels": args.min_pixels,
                              "max_pixels": args.max_pixels}
    if loop.policy_max_label_chars is not None:
        kwargs["max_label_chars"] = loop.policy_max_label_chars
    if not loop.policy_action_space:
        kwargs["action_space"] = ()
    return PolicyFormat(**kwargs)


def make_policy(model: Any, processing_class: Any, config: RunConfig, *, version: int = 0) -> Any:
    """The :class:`coach_rl.policy.HFPolicy` of a run: its prompt format and the sampling settings of the config."""
    from coach_rl.policy import HFPolicy

    args = config.coach
    image_processor = getattr(processing_class, "image_processor", None)
    if image_processor is not None and hasattr(image_processor, "max_pixels"):
        # the screenshots the policy sees are smart-resized within the run's pixel bounds (Table 5)
        image_processor.min_pixels, image_processor.max_pixels = args.min_pixels, args.max_pixels
    return HFPolicy(
        model, processing_class, format=run_policy_format(config),
        max_new_tokens=int(args.max_completion_length or 128), temperature=float(args.temperature),
        top_p=float(args.top_p), max_prompt_tokens=args.max_prompt_length, batch_size=max(1, int(args.num_envs or 1)),
        version=version,
    )


def build_policy_model(config: RunConfig, demos: Any = None) -> tuple[Any, Any]:
    """The policy model and tokenizer: loaded from ``policy_model``, or built (``tiny``) on the demos' text; on the
    run's device."""
    loop = config.loop
    if loop.policy_model != "tiny":
        return load_policy_model(loop.policy_model, config)
    from coach_reward.tiny_models import build_tiny_causal_lm

    corpus = demos.corpus() if demos is not None else None
    model, tokenizer = build_tiny_causal_lm(
        vocab_size=loop.tiny_vocab_size, hidden_size=loop.tiny_hidden_size, num_layers=loop.tiny_num_layers,
        num_heads=loop.tiny_num_heads, seed=int(config.coach.seed), corpus=corpus,
    )
    return model.to(config.coach.device), tokenizer


def load_policy_model(path: str | os.PathLike[str], config: RunConfig) -> tuple[Any, Any]:
    """A saved policy and its tokenizer, on the run's device (``config.coach.device``: the GPU unless ``use_cpu``).

    Every model of a run starts where the policy is: the critic is copied from its backbone, the baselines' actor
    steps and the rollouts run on the model's device. Loading on the CPU and leaving it there trained GRPO and the
    critic on the CPU of a GPU machine."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model = AutoModelForCausalLM.from_pretrained(path)
    return model.to(config.coach.device), AutoTokenizer.from_pretrained(path)


def build_collector(config: RunConfig, tasks: list[str], policy: Any, rewards: Any,
                    run_path: Path) -> tuple[list[Any], Any]:
    """The envs and the collector that plays ``policy`` in them with the run's ``rewards`` (``collector=ray``: no
    envs here, one Ray actor per device)."""
    from coach_rl.rollout import RolloutCollector

    args = config.coach
    if args.collector == "ray":  # (Coach's critic_prm_candidates needs the local collector: CoachConfig checks it)
        return [], _ray_collector(config, tasks, policy, rewards, run_path)
    envs = make_envs(args.env_id, int(args.num_envs), tasks=tasks, env_kwargs=run_env_kwargs(config))
    try:
        return envs, RolloutCollector(envs, policy, rewards=rewards, keep_xml=False, threads=config.loop.env_threads)
    except BaseException:
        for env in envs:
            env.close()
        raise


def _ray_collector(config: RunConfig, tasks: list[str], policy: Any, rewards: Any, run_path: Path) -> Any:
    """``collector=ray``: one Ray actor per device, each playing whole episodes with the run's rewards."""
    from coach_rl.distributed import RayCollector, SimDeviceSpec
    from coach_rl.distributed.supervise import record_driver

    args = config.coach
    kwargs = {**run_env_kwargs(config), "task": list(tasks)}
    device = SimDeviceSpec(kwargs, env_id=args.env_id)
    spool = args.spool_dir or str(run_path / "spool")
    collector = RayCollector.from_config(device, policy, args, spool_dir=spool,
                                         collector_kwargs={"rewards": rewards, "keep_xml": False},
                                         base_seed=config.loop.train_seed_offset + TRAIN_SEED_STRIDE * int(args.seed))
    record_driver(run_path, spool, collector.gcs_address)  # for `coach-rl train`'s report of a lost head
    return collector
