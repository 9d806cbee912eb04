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
    assert cfg.loop.init_from is None and cfg.loop.actor_states_per_iteration is None and cfg.loop.eval_tasks == []
    assert cfg.coach.env_kwargs == {"latency": "emulator"} and cfg.explicit["total_iterations"] == 3
    with pytest.raises(ValueError, match="policy_model must be a string, got 5 .*quote it in YAML"):
        load_config("smoke", {"policy_model": 5})  # the parser would take "5" as text; YAML meant a number
    with pytest.raises(ValueError, match="liger_kernel_config must be a mapping"):
        load_config("smoke", {"liger_kernel_config": "[1, 2]"})  # a dict field that takes no text
