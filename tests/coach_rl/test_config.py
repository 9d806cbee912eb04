"""CoachConfig: the paper's Table 5 defaults, CLI parsing with HfArgumentParser, and clear errors for bad values."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from transformers import HfArgumentParser
from trl import GRPOConfig

from coach_rl.algorithms.coach import CoachArguments
from coach_rl.algorithms.dgrpo import DGRPOArguments
from coach_rl.algorithms.distrl import DistRLArguments
from coach_rl.config import (
    CoachConfig,
    CriticArguments,
    OnlineRLArguments,
    QCriticArguments,
    ReplayActorArguments,
    TrainerConfig,
)
from coach_rl.distributed.arguments import DistributedArguments

# GRPOConfig itself triggers this transformers 5.x deprecation warning; it is not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:`gradient_checkpointing` is deprecated:FutureWarning")

# Android Coach Table 5 row -> (field, value)
TABLE5 = {
    "Max Prompt Length": ("max_prompt_length", 32768),
    "Max Response Length / Max New Tokens": ("max_completion_length", 512),
    "Train Batch Size": ("rollout_batch_size", 8),
    "Actor Learning Rate": ("learning_rate", 1e-6),
    "Gradient Clipping": ("max_grad_norm", 1.0),
    "Clip Ratio": ("epsilon", 0.2),
    "Sampling Temperature": ("temperature", 1.0),
    "Max Turns": ("max_turns", 25),
    "Max Pixels": ("max_pixels", 1270180),
    "Min Pixels": ("min_pixels", 256),
    "Process Reward Weight": ("w_p", 0.2),
    "Outcome Reward Weight": ("w_o", 1.0),
    "Discount factor": ("gamma", 0.95),
    "Critic Learning Rate": ("critic_learning_rate", 1e-5),
    "Critic Clip Range Value": ("critic_clip_range", 0.5),
    "Critic Warmup Ratio": ("critic_warmup_ratio", 0.1),
}


def _config(tmp_path: Path, **kwargs) -> CoachConfig:
    return CoachConfig(output_dir=str(tmp_path), report_to="none", use_cpu=True, **kwargs)


def test_defaults_carry_table5(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    for row, (name, value) in TABLE5.items():
        assert getattr(cfg, name) == value, f"Table 5 '{row}' -> {name}"
    assert cfg.num_generations == 4  # K: the paper's Figure 4 setting
    # derived defaults: as many envs as the batch (paper A.1), replay under output_dir
    assert cfg.num_envs == 8
    assert cfg.replay_dir == str(tmp_path / "replay")
    # GRPOConfig's own post-processing ran: one generation batch of 8 = 2 states x K=4 actions
    assert cfg.generation_batch_size == 8 and cfg.steps_per_generation == 1
    assert isinstance(cfg, GRPOConfig)


MIXINS = (OnlineRLArguments, CriticArguments, QCriticArguments, ReplayActorArguments, CoachArguments, DGRPOArguments,
          DistRLArguments, DistributedArguments)


def test_every_own_field_has_help_and_paper_defaults_cite_table5() -> None:
    own = {f.name for c in MIXINS for f in dataclasses.fields(c)}
    overridden = {f.name for f in dataclasses.fields(CoachConfig)} - own - set(GRPOConfig.__dataclass_fields__)
    assert not overridden, f"fields defined only on CoachConfig should be overrides, got {overridden}"
    fields = {f.name: f for f in dataclasses.fields(CoachConfig)}
    own &= set(fields)
    for name in own:
        assert fields[name].metadata.get("help"), f"{name} has no help"
    for _, (name, _value) in TABLE5.items():
        assert "Android Coach Table 5" in fields[name].metadata["help"], name


def test_mixin_fields_do_not_shadow_trl_fields() -> None:
    # a shared-group field with a TRL/Transformers name would silently change trainer behaviour
    trl_names = set(GRPOConfig.__dataclass_fields__)
    for mixin in MIXINS:
        clash = {f.name for f in dataclasses.fields(mixin)} & trl_names
        assert not clash, f"{mixin.__name__} shadows {clash}"


def test_hf_argument_parser_from_cli_strings(tmp_path: Path) -> None:
    parser = HfArgumentParser(CoachConfig)
    assert "Android Coach Table 5" in parser.format_help()  # help renders (no stray % for argparse)
    (cfg,) = parser.parse_args_into_dataclasses(
        [
            "--output_dir", str(tmp_path), "--report_to", "none", "--use_cpu",
            "--num_generations", "8",
            "--w_p", "0.5", "--gamma", "0.9",
            "--tasks", "ContactsAddContact", "ClockStopWatchRunning",
            "--env_kwargs", '{"seed": 3, "latency": false}',
            "--num_envs", "2", "--max_episode_steps", "10",
            "--use_prm", "--prm_model", "/models/prm",
            "--critic_updates_per_iteration", "3",
        ]
    )  # fmt: skip
    assert isinstance(cfg, CoachConfig)
    assert cfg.num_generations == 8 and cfg.w_p == 0.5 and cfg.gamma == 0.9
    assert cfg.tasks == ["ContactsAddContact", "ClockStopWatchRunning"]
    assert cfg.env_kwargs == {"seed": 3, "latency": False}
    assert cfg.num_envs == 2 and cfg.max_episode_steps == 10
    assert cfg.use_prm and cfg.prm_model == "/models/prm"
    assert cfg.critic_updates_per_iteration == 3


def test_serialises_to_json(tmp_path: Path) -> None:
    # trainers write args to checkpoints; our list/dict fields must survive
    cfg = _config(tmp_path, tasks=["a"], env_kwargs={"seed": 1})
    data = json.loads(cfg.to_json_string())
    assert data["tasks"] == ["a"] and data["env_kwargs"] == {"seed": 1} and data["w_o"] == 1.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"num_generations": 1}, "ACLOO.*needs K >= 2"),
        ({"num_generations": None}, "num_generations .* must be an integer >= 2"),
        ({"gamma": 1.5}, r"gamma must be in \[0, 1\]"),
        ({"w_p": float("nan")}, "w_p must be a finite number"),
        ({"w_o": -1.0}, "w_o must be >= 0"),
        ({"w_p": 0.0, "w_o": 0.0}, "both 0"),
        ({"min_pixels": 2_000_000}, "min_pixels .* must not exceed max_pixels"),
        ({"max_episode_steps": 30}, r"max_episode_steps \(30\) must not exceed max_turns \(25\)"),
        ({"max_turns": 0}, "max_turns must be an integer >= 1"),
        ({"use_prm": True}, "use_prm is set but prm_model is empty"),
        ({"use_prm": True, "prm_model": "judge", "prm_backend": "openai"}, "needs prm_base_url"),
        ({"prm_backend": "tgi"}, "prm_backend must be one of"),
        ({"outcome_verifier": "oracle"}, "outcome_verifier must be one of"),
        ({"outcome_verifier": "llm_judge"}, "needs verifier_model"),
        ({"env_kwargs": "{not json"}, "env_kwargs must be a JSON object"),
        ({"env_kwargs": "[1, 2]"}, "env_kwargs must be a dict"),
        ({"tasks": "ContactsAddContact"}, "tasks must be a list"),
        ({"critic_clip_range": 0.0}, "critic_clip_range must be > 0"),
        ({"critic_warmup_ratio": 1.0}, r"critic_warmup_ratio must be in \[0, 1\)"),
        ({"critic_pretrain_learning_rate": 0.0}, "critic_pretrain_learning_rate must be > 0"),
        ({"critic_updates_per_iteration": 0}, "critic_updates_per_iteration must be an integer >= 1 or None"),
        ({"epsilon": 0.0}, "epsilon must be > 0"),
        ({"checkpoint_every": -1}, "checkpoint_every must be an integer >= 0"),
    ],
)
def test_invalid_values_raise_clearly(tmp_path: Path, kwargs: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        _config(tmp_path, **kwargs)


def test_grpo_config_validation_still_runs(tmp_path: Path) -> None:
    # TRL: the generation batch (8 by default) must hold whole groups of K
    with pytest.raises(
        ValueError, match=r"generation_batch_size \(8\) must be divisible by num_generations \(3\)"
    ):
        _config(tmp_path, num_generations=3)
    with pytest.raises(ValueError, match="auto_find_batch_size is not supported"):
        _config(tmp_path, auto_find_batch_size=True)
    # and a consistent non-default K works
    assert _config(tmp_path, num_generations=2).num_generations == 2


def test_groups_are_reusable_by_a_baseline_config(tmp_path: Path) -> None:
    # how a GRPO/PPO baseline config will share the environment/reward/loop groups
    @dataclasses.dataclass
    class BaselineConfig(OnlineRLArguments, GRPOConfig):
        def __post_init__(self) -> None:
            self.validate_online_rl_arguments()
            super().__post_init__()
            self.resolve_online_rl_defaults(self.output_dir)

    (cfg,) = HfArgumentParser(BaselineConfig).parse_args_into_dataclasses(
        ["--output_dir", str(tmp_path), "--report_to", "none", "--use_cpu", "--rollout_batch_size", "4"]
    )
    assert cfg.num_envs == 4 and cfg.gamma == 0.95 and not hasattr(cfg, "critic_learning_rate")
    with pytest.raises(ValueError, match="gamma must be in"):
        BaselineConfig(output_dir=str(tmp_path), report_to="none", use_cpu=True, gamma=2.0)


# -- one config class per algorithm ---------------------------------------------------------------------------


def _own_mixins(cls: type) -> set[type]:
    """The mixins of MIXINS that ``cls`` has besides TrainerConfig's own (OnlineRLArguments, DistributedArguments)."""
    return {m for m in MIXINS if issubclass(cls, m) and not issubclass(TrainerConfig, m)}


def test_each_algorithm_has_its_config_class_with_only_its_mixins() -> None:
    from coach_rl.algorithms import config_class

    expected = {
        "coach": ("CoachConfig", {CriticArguments, QCriticArguments, ReplayActorArguments, CoachArguments}),
        "coach_sssa": ("CoachSSSAConfig", {CriticArguments, QCriticArguments, ReplayActorArguments}),
        "grpo": ("GRPOBaselineConfig", set()),
        "ppo": ("PPOBaselineConfig", {CriticArguments}),
        "dgrpo": ("DGRPOConfig", {DGRPOArguments}),
        "distrl": ("DistRLConfig", {DistRLArguments, CriticArguments}),
    }
    for algorithm, (name, mixins) in expected.items():
        cls = config_class(algorithm)
        assert cls.__name__ == name and cls.__module__ == f"coach_rl.algorithms.{algorithm}", algorithm
        assert issubclass(cls, TrainerConfig) and issubclass(cls, GRPOConfig), algorithm
        assert _own_mixins(cls) == mixins, algorithm
        fields = {f.name for f in dataclasses.fields(cls)}
        shared = {f.name for f in dataclasses.fields(TrainerConfig)}
        mixin_fields = {f.name for m in mixins for f in dataclasses.fields(m)}
        assert fields == shared | mixin_fields, f"{name} has fields beyond TrainerConfig and its mixins"
    assert config_class("coach") is CoachConfig  # coach_rl.config.CoachConfig: the same class, importable as before
    import coach_rl

    assert coach_rl.CoachConfig is CoachConfig


def test_an_algorithm_config_validates_only_its_own_mixins(tmp_path: Path) -> None:
    from coach_rl.algorithms.grpo import GRPOBaselineConfig
    from coach_rl.algorithms.ppo import PPOBaselineConfig

    kw = {"output_dir": str(tmp_path), "report_to": "none", "use_cpu": True}
    with pytest.raises(TypeError, match="critic_learning_rate"):
        GRPOBaselineConfig(critic_learning_rate=1e-4, **kw)  # not one of its fields at all
    with pytest.raises(ValueError, match="critic_learning_rate must be"):
        PPOBaselineConfig(critic_learning_rate=-1.0, **kw)
    with pytest.raises(ValueError, match="GRPOBaselineConfig does not read it"):
        GRPOBaselineConfig(beta=0.1, **kw)
    assert GRPOBaselineConfig(**kw).num_generations == 4 and not GRPOBaselineConfig(**kw).pretrains_critic()
    assert CoachConfig(critic_pretrain_steps=3, **kw).critic_pretrain_needs_demos()
    from coach_rl.algorithms.coach_sssa import CoachSSSAConfig

    # the critic's pre-training data (QCriticArguments) and the replay actor's states (ReplayActorArguments)
    for cls in (CoachConfig, CoachSSSAConfig):
        for bad, message in (({"critic_pretrain_samples": -1}, "critic_pretrain_samples must be >= 0"),
                             ({"critic_pretrain_contrast": -1}, "critic_pretrain_contrast must be >= 0"),
                             ({"critic_pretrain_rollouts": -2}, "critic_pretrain_rollouts must be >= 0"),
                             ({"critic_pretrain_labels": "vote"}, "critic_pretrain_labels must be one of"),
                             ({"actor_states_per_iteration": 0}, "actor_states_per_iteration must be >= 1 or null")):
            with pytest.raises(ValueError, match=message):
                cls(**bad, **kw)
    for key in ("critic_pretrain_samples", "actor_states_per_iteration"):
        with pytest.raises(TypeError, match=key):
            GRPOBaselineConfig(**{key: 2}, **kw)
