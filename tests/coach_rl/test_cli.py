"""Run configurations (shipped YAML by name or path, typed key=value overrides) and the coach-rl command line."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from coach_rl.algorithms import algorithm_names, config_class
from coach_rl.cli import main
from coach_rl.config import CoachConfig
from coach_rl.configs import LoopArguments, config_keys, list_configs, load_config, parse_overrides

pytestmark = pytest.mark.filterwarnings("ignore:`gradient_checkpointing` is deprecated:FutureWarning")


def test_shipped_configs_load_and_validate(tmp_path: Path):
    names = list_configs()
    assert {"smoke", "main"} <= set(names)
    for name in names:
        cfg = load_config(name, [f"output_dir={tmp_path / name}"])
        assert cfg.loop.algorithm in algorithm_names()
        assert type(cfg.coach) is config_class(cfg.loop.algorithm)
        assert isinstance(cfg.coach, CoachConfig) == (cfg.loop.algorithm == "coach")
        assert cfg.coach.bf16 is False and cfg.coach.use_cpu  # CPU-friendly defaults on this machine


def test_overrides_are_typed_against_the_fields(tmp_path: Path):
    cfg = load_config("smoke", [
        "num_generations=4", "learning_rate=1e-5", "tasks=SystemWifiTurnOff,OpenAppTaskEval", "eval_tasks=[A, B]",
        "env_kwargs={\"latency\": \"emulator\"}", "policy_action_space=false",
        "algorithm=ppo", f"output_dir={tmp_path}", "critic_batch_size=3", "--max-history=0",
    ])
    assert cfg.coach.num_generations == 4 and cfg.coach.learning_rate == 1e-5
    assert cfg.coach.tasks == ["SystemWifiTurnOff", "OpenAppTaskEval"]
    assert cfg.loop.eval_tasks == ["A", "B"]
    assert cfg.coach.env_kwargs == {"latency": "emulator"}
    assert cfg.loop.policy_action_space is False
    assert cfg.loop.algorithm == "ppo" and cfg.loop.max_history == 0
    assert cfg.coach.critic_batch_size == 3 and cfg.coach.output_dir == str(tmp_path)
    assert cfg.coach.replay_dir == str(tmp_path / "replay")
    # a mapping works as well as a file, and to_dict() round-trips to an equal configuration
    again = load_config(cfg.to_dict())
    assert not cfg.differences(again)


@pytest.mark.parametrize(("override", "error", "match"), [
    ("num_generation=4", KeyError, "did you mean num_generations"),
    ("learning_rate=fast", ValueError, "learning_rate must be a number"),
    ("num_generations=2.5", ValueError, "num_generations"),
    ("policy_action_space=maybe", ValueError, "policy_action_space must be true or false"),
    ("algorithm=dpo", ValueError, "algorithm must be one of"),
    ("num_generations=1", ValueError, "K >= 2"),
    ("lr_scheduler_type=wobbly", ValueError, "lr_scheduler_type"),
    ("env_kwargs=[1, 2]", ValueError, "env_kwargs"),
    ("tiny_hidden_size=33", ValueError, "divisible"),
    ("sft_answer_noise=1.5", ValueError, r"sft_answer_noise must be in \[0, 1\)"),
    ("action_format=uitars & policy_action_space=true & sft_answer_noise=0.2", ValueError,
     "sft_answer_noise is for the index format"),
])
def test_bad_keys_and_values_name_the_problem(override: str, error: type, match: str, tmp_path: Path):
    with pytest.raises(error, match=match):
        load_config("smoke", [*override.split(" & "), f"output_dir={tmp_path}"])


def test_config_files_by_path_with_extends(tmp_path: Path):
    base = tmp_path / "base.yaml"
    base.write_text(yaml.safe_dump({"extends": "smoke", "seed": 5, "total_iterations": 7}))
    child = tmp_path / "child.yaml"
    child.write_text(yaml.safe_dump({"extends": "base.yaml", "seed": 9}))
    cfg = load_config(str(child), [f"output_dir={tmp_path / 'run'}"])
    assert cfg.coach.seed == 9 and cfg.coach.total_iterations == 7  # child > base > smoke
    assert cfg.loop.policy_model == "tiny"  # from smoke
    with pytest.raises(FileNotFoundError, match="did you mean smoke"):
        load_config("smok")
    (tmp_path / "cycle.yaml").write_text("extends: cycle.yaml\n")
    with pytest.raises(ValueError, match="cycle"):
        load_config(str(tmp_path / "cycle.yaml"))
    (tmp_path / "list.yaml").write_text("- 1\n- 2\n")
    with pytest.raises(ValueError, match="mapping"):
        load_config(str(tmp_path / "list.yaml"))


def test_loop_arguments_do_not_shadow_trainer_fields():
    loop = {f.name for f in dataclasses.fields(LoopArguments)}
    assert not loop & set(CoachConfig.__dataclass_fields__)
    keys = config_keys()
    assert "algorithm" in keys and "num_generations" in keys and "critic_learning_rate" in keys
    assert parse_overrides(["a=b=c", "--x-y=1"]) == {"a": "b=c", "x_y": "1"}
    with pytest.raises(ValueError, match="key=value"):
        parse_overrides(["novalue"])


def test_cli_configs_and_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    assert main(["configs"]) == 0
    assert "smoke" in capsys.readouterr().out.split()
    assert main(["configs", "smoke"]) == 0
    printed = capsys.readouterr().out
    assert "algorithm: coach" in printed and yaml.safe_load(printed)["policy_model"] == "tiny"
    assert main(["train", "--config", "smoke", "num_generation=3", "-o", str(tmp_path)]) == 2
    assert "did you mean num_generations" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="no run folder"):
        main(["report", str(tmp_path / "missing")])
    with pytest.raises(SystemExit):
        main(["eval", "--config", "smoke", "-o", str(tmp_path)])  # a tiny policy must be trained first


def test_cli_report_on_a_run_folder(capsys: pytest.CaptureFixture[str], tmp_path: Path):
    from coach_rl.run import RunDir

    run = RunDir(tmp_path / "run")
    run.log_metrics({"kind": "train", "iteration": 1, "env_steps": 12, "rollout/success_rate": 0.5})
    assert main(["report", str(run.path)]) == 0
    assert Path(capsys.readouterr().out.strip()).name == "report.md"
    assert json.loads(json.dumps(run.read_metrics()))[0]["env_steps"] == 12


def test_help_config_lists_every_key_with_the_help_its_field_carries(capsys):
    import dataclasses
    import itertools

    from coach_rl.cli import main
    from coach_rl.configs import LoopArguments, algorithm_config_class, config_keys

    with pytest.raises(SystemExit) as done:
        main(["train", "--help-config"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "usage: coach-rl train" in out and "config keys of algorithm=coach (coach_rl.algorithms.coach.CoachConfig" in out
    listed = {line.split(" (default ")[0].strip() for line in out.splitlines() if " (default " in line
              and line.startswith("  ") and not line.startswith("      ")}
    assert set(config_keys()) <= listed | {"help"}
    for cls, name in ((algorithm_config_class(), "w_p"), (algorithm_config_class(), "max_turns"),
                      (algorithm_config_class(), "actor_states_per_iteration"),
                      (LoopArguments, "oracle_diagnostics")):
        field = next(f for f in dataclasses.fields(cls) if f.name == name)
        words = " ".join(field.metadata["help"].split())
        lines = out[out.index(f"  {name} (default "):].splitlines()[1:]
        wrapped = [line for line in itertools.takewhile(lambda line: line.startswith("      "), lines)]
        assert " ".join(" ".join(wrapped).split()) == words  # the key's help, as its field carries it


@pytest.mark.parametrize("how", [["--help-config", "grpo"], ["--help-config", "algorithm=grpo"],
                                 ["-c", "main-grpo", "--help-config"]])
def test_help_config_lists_the_keys_of_the_chosen_algorithm(capsys, how):
    from coach_rl.cli import main
    from coach_rl.configs import config_keys

    with pytest.raises(SystemExit) as done:
        main(["train", *how])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "config keys of algorithm=grpo (coach_rl.algorithms.grpo.GRPOBaselineConfig" in out
    listed = {line.split(" (default ")[0].strip() for line in out.splitlines() if " (default " in line
              and line.startswith("  ") and not line.startswith("      ")}
    assert set(config_keys("grpo")) <= listed | {"help"}
    assert not {k for k in listed if k.startswith(("critic_", "coach_", "dgrpo_", "distrl_"))
                and k not in config_keys("grpo")}  # no critic key (the loop's critic_pretrain_* are everyone's)
    assert "critic_learning_rate" not in listed and "critic_learning_rate" in config_keys("ppo")
