"""Run configuration values are read by TRL's own parser (``trl.TrlParser``), and a bad one never exits the process."""

from __future__ import annotations

from pathlib import Path

import pytest

from coach_rl.configs import load_config

pytestmark = pytest.mark.filterwarnings("ignore:`gradient_checkpointing` is deprecated:FutureWarning")


def test_values_go_through_trl_parser(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from trl import TrlParser

    seen: list[list[str]] = []
    parse = TrlParser.parse_known_args

    def spy(self, args=None, namespace=None):
        seen.append(list(args))
        return parse(self, args, namespace)

    monkeypatch.setattr(TrlParser, "parse_known_args", spy)
    cfg = load_config("smoke", ["num_generations=4", "tasks=SystemWifiTurnOff,OpenAppTaskEval", "eval_tasks=[A, B]",
                                "eval_at_env_steps=100,200", "eval_before=n", "learning_rate=1e-5",
                                "lr_scheduler_type=cosine", "report_to=tensorboard,wandb", f"output_dir={tmp_path}"])
    argv = seen[-1]
    assert "--num_generations=4" in argv and "--eval_before=n" in argv and "--learning_rate=1e-5" in argv
    tasks = argv.index("--tasks")
    assert argv[tasks + 1: tasks + 3] == ["SystemWifiTurnOff", "OpenAppTaskEval"]  # a list field's values, one each
    assert cfg.coach.num_generations == 4 and cfg.coach.learning_rate == 1e-5
    assert cfg.coach.tasks == ["SystemWifiTurnOff", "OpenAppTaskEval"] and cfg.loop.eval_tasks == ["A", "B"]
    assert cfg.loop.eval_at_env_steps == [100, 200] and cfg.loop.eval_before is False  # "n": the parser's no
    assert cfg.explicit["lr_scheduler_type"] == "cosine" and cfg.coach.report_to == ["tensorboard", "wandb"]
    # YAML values (a file's, a mapping's) take the same road, typed as YAML gave them
    again = load_config(cfg.to_dict())
    assert not cfg.differences(again)


@pytest.mark.parametrize(("override", "match"), [
    ("num_generations=abc", "num_generations must be an integer, got 'abc' \\(TrlParser: invalid int value: 'abc'\\)"),
    ("learning_rate=fast", "learning_rate must be a number, got 'fast' \\(TrlParser: invalid float value: 'fast'\\)"),
    ("use_prm=maybe", "use_prm must be true or false, got 'maybe' \\(TrlParser: Truthy value expected: got maybe"),
    ("lr_scheduler_type=wobbly", "lr_scheduler_type: invalid choice: 'wobbly' \\(choose from 'linear'"),
    ("log_level=loud", "log_level: invalid choice: 'loud'"),  # the choices TrainingArguments' field metadata lists
    ("eval_at_env_steps=100,many", "eval_at_env_steps: invalid int value: 'many'"),
])
def test_a_bad_value_is_the_parsers_message_naming_the_key_and_never_exits(override: str, match: str,
                                                                          tmp_path: Path):
    try:
        with pytest.raises(ValueError, match=match):
            load_config("smoke", [override, f"output_dir={tmp_path}"])
    except SystemExit as err:  # argparse's default on a bad value: must not reach a caller of load_config
        pytest.fail(f"load_config exited the process ({err!r}) on {override}")


def test_what_the_parser_has_no_spelling_for(tmp_path: Path):
    cfg = load_config("smoke", {"output_dir": str(tmp_path), "init_from": "null", "actor_states_per_iteration": None,
                                "eval_tasks": [], "env_kwargs": "{latency: emulator}", "total_iterations": 3.0})
    assert cfg.loop.init_from is None and cfg.coach.actor_states_per_iteration is None and cfg.loop.eval_tasks == []
    assert cfg.coach.env_kwargs == {"latency": "emulator"} and cfg.explicit["total_iterations"] == 3
    with pytest.raises(ValueError, match="policy_model must be a string, got 5 .*quote it in YAML"):
        load_config("smoke", {"policy_model": 5})  # the parser would take "5" as text; YAML meant a number
    with pytest.raises(ValueError, match="liger_kernel_config must be a mapping"):
        load_config("smoke", {"liger_kernel_config": "[1, 2]"})  # a dict field that takes no text


# -- a run config holds the keys of its algorithm ---------------------------------------------------------------


def test_a_key_of_another_algorithm_set_for_this_one_is_an_error_naming_its_owners(tmp_path: Path):
    with pytest.raises(KeyError, match="critic_learning_rate is a setting of coach, coach_sssa, distrl, ppo .*"
                                       "this run's algorithm is grpo"):
        load_config("smoke", ["algorithm=grpo", "critic_learning_rate=1e-4", f"output_dir={tmp_path}"])
    own = tmp_path / "grpo.yaml"  # written for grpo in the file itself
    own.write_text("algorithm: grpo\ncritic_batch_size: 4\n")
    with pytest.raises(KeyError, match=f"critic_batch_size is a setting of .* \\(set in {own}\\); .* is grpo"):
        load_config(str(own))
    child = tmp_path / "child.yaml"  # a file extending a grpo config is written for grpo too
    child.write_text(f"extends: {own.name}\nlearning_rate: 0.001\n")
    with pytest.raises(KeyError, match="critic_batch_size is a setting of"):
        load_config(str(child))
    with pytest.raises(KeyError, match="dgrpo_group_size is a setting of dgrpo"):
        load_config("smoke", {"algorithm": "ppo", "dgrpo_group_size": 4})
    with pytest.raises(KeyError, match="unknown config key.*'critic_learnig_rate'"):  # no algorithm has it
        load_config("smoke", ["critic_learnig_rate=1"])


def test_keys_inherited_from_a_config_for_another_algorithm_are_dropped_and_recorded(tmp_path: Path, caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="coach_rl.configs"):
        cfg = load_config("main-grpo", [f"output_dir={tmp_path}"])  # extends main, a Coach config with critic_* keys
    assert type(cfg.coach).__name__ == "GRPOBaselineConfig" and not hasattr(cfg.coach, "critic_learning_rate")
    assert {"critic_learning_rate", "critic_pretrain_steps", "critic_action_targets"} <= set(cfg.dropped)
    assert "critic_learning_rate" not in cfg.explicit and "critic_learning_rate" not in cfg.to_dict()
    assert any("critic_learning_rate" in r.getMessage() and "dropped" in r.getMessage() for r in caplog.records)
    # a Coach file switched to another algorithm by an override: its Coach keys were written for Coach
    cfg = load_config("smoke", ["algorithm=ppo", f"output_dir={tmp_path}"])
    # PPO's V has critic_* too: kept; Coach's replay actor's actor_states_per_iteration is not PPO's
    assert cfg.dropped == ["actor_states_per_iteration"] and cfg.coach.critic_learning_rate == 5e-4
    assert load_config("main-ppo", [f"output_dir={tmp_path}"]).dropped == [
        "critic_pretrain_steps", "critic_pretrain_samples", "critic_pretrain_contrast", "critic_pretrain_learning_rate",
        "critic_pretrain_balanced", "critic_action_targets", "actor_states_per_iteration"]
    # the same config keeps them under Coach, and Coach K = 1 (which sets its own actor_states_per_iteration)
    assert load_config("main", [f"output_dir={tmp_path}"]).dropped == []
    k1 = load_config("main-coach_k1", [f"output_dir={tmp_path}"])
    assert k1.dropped == [] and k1.coach.actor_states_per_iteration == 16 and k1.coach.critic_pretrain_samples == 4


@pytest.mark.parametrize("override", ["actor_states_per_iteration=16", "critic_pretrain_samples=2",
                                      "critic_pretrain_labels=prm", "critic_pretrain_rollouts=1"])
@pytest.mark.parametrize("algorithm", ["grpo", "ppo", "dgrpo", "distrl"])
def test_the_q_critic_and_replay_actor_keys_are_not_other_algorithms_settings(tmp_path: Path, algorithm, override):
    """The critic pre-training data (QCriticArguments) and the replay actor's states (ReplayActorArguments) are read
    by coach and coach_sssa only: given to another algorithm they are an error naming their owners."""
    key = override.split("=")[0]
    with pytest.raises(KeyError, match=f"{key} is a setting of coach, coach_sssa .*algorithm is {algorithm}"):
        load_config("smoke", [f"algorithm={algorithm}", f"output_dir={tmp_path}", override])
    with pytest.raises(KeyError, match=f"{key} is a setting of coach, coach_sssa"):  # in a file written for it too
        load_config({"algorithm": algorithm, key: override.split("=")[1]})
    for owner in ("coach", "coach_sssa"):
        cfg = load_config("smoke", [f"algorithm={owner}", f"output_dir={tmp_path}", override])
        assert str(getattr(cfg.coach, key)) == override.split("=")[1] and not hasattr(cfg.loop, key)


def test_a_saved_config_of_an_older_run_loads_with_other_algorithms_keys_dropped(tmp_path: Path):
    saved = {**load_config("smoke", [f"output_dir={tmp_path}"]).to_dict(), "algorithm": "grpo"}  # as runs wrote it
    with pytest.raises(KeyError, match="is a setting of"):
        load_config(saved)
    cfg = load_config(saved, drop_unowned=True)
    assert "critic_learning_rate" in cfg.dropped and "coach_advantage" in cfg.dropped
    assert not cfg.differences(load_config("smoke", ["algorithm=grpo", f"output_dir={tmp_path}"]))
    with pytest.raises(KeyError, match="is a setting of"):  # never the overrides'
        load_config(saved, ["critic_batch_size=2"], drop_unowned=True)


def test_every_config_round_trips_through_to_dict(tmp_path: Path):
    from coach_rl.algorithms import algorithm_names

    for algorithm in ("coach", "coach_sssa", "grpo", "ppo", "dgrpo", "distrl"):
        assert algorithm in algorithm_names()
        cfg = load_config("main", [f"algorithm={algorithm}", f"output_dir={tmp_path}"])
        again = load_config(cfg.to_dict())
        assert type(again.coach) is type(cfg.coach) and not cfg.differences(again) and again.dropped == []


def test_overrides_for_leaves_out_only_other_algorithms_keys():
    """One set of overrides for runs of several algorithms (the sweep, the main job's COMPARE): a run gets the keys
    its algorithm has; another algorithm's key is left out; a key no algorithm has stays, so loading reports it."""
    from coach_rl.configs import overrides_for

    given = ["learning_rate=1e-4", "coach_q_source=sim-oracle", "critic_learning_rate=1e-5", "no_such_key=1"]
    assert overrides_for("grpo", given) == (["learning_rate=1e-4", "no_such_key=1"],
                                            ["coach_q_source=sim-oracle", "critic_learning_rate=1e-5"])
    assert overrides_for("coach", given) == (given, [])
