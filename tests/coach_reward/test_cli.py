"""The coach-reward command line: build data, train, evaluate, judge, serve; help and clear errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from android_gym.actions import Click, Finished
from android_gym.trajectory import Step, Trajectory
from coach_reward.cli import build_parser, main
from coach_reward.prm_data import load_prm_dataset


@pytest.mark.parametrize("command", ["build-prm-data", "train-prm", "eval", "judge", "serve", "convert-gguf", "demo"])
def test_every_command_has_help(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    assert "usage: coach-reward " + command in capsys.readouterr().out


def test_no_command_prints_help(capsys):
    assert main([]) == 2
    assert "build-prm-data" in capsys.readouterr().out
    assert build_parser().prog == "coach-reward"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "data"
    assert main(["build-prm-data", "--output", str(out), "--tasks", "SystemWifiTurnOn,ClockAddLabeledAlarm",
                 "--k", "4", "--quiet"]) == 0
    return out


def test_build_prm_data_from_the_sim(built, capsys):
    data = load_prm_dataset(built)
    assert (built / "hf").is_dir() and (built / "prm.parquet").is_file()
    assert set(data["task"]) == {"SystemWifiTurnOn", "ClockAddLabeledAlarm"}
    assert sum(data["label"]) * 2 == len(data)


def test_build_prm_data_from_androidcontrol_files(tmp_path, capsys):
    episode = {"goal": "Open the settings", "accessibility_trees": [
        [{"class_name": "android.widget.TextView", "text": "Settings", "is_clickable": True, "bounds": [0, 0, 500, 200]},
         {"class_name": "android.widget.TextView", "text": "Clock", "is_clickable": True, "bounds": [0, 900, 500, 1100]}]
    ] * 2, "screenshot_widths": [1080, 1080], "screenshot_heights": [2400, 2400],
        "actions": [{"action_type": "click", "x": 250, "y": 100}]}
    (tmp_path / "ep.json").write_text(json.dumps(episode))
    out = tmp_path / "ac"
    assert main(["build-prm-data", "--source", "androidcontrol", "--episodes", str(tmp_path / "ep.json"),
                 "--output", str(out), "--quiet", "--no-parquet"]) == 0
    assert set(load_prm_dataset(out)["source"]) == {"androidcontrol"}
    assert not (out / "prm.parquet").exists()
    assert "rows" in capsys.readouterr().out


def test_train_eval_and_judge_a_tiny_prm(built, tmp_path, capsys):
    model = tmp_path / "prm"
    assert main(["train-prm", "--data", str(built), "--output", str(model), "--tiny", "--max-steps", "2",
                 "--learning-rate", "1e-3", "--max-ui-chars", "200", "--test-tasks", "ClockAddLabeledAlarm",
                 "--json", str(tmp_path / "train.json"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "held-out tasks (1): ClockAddLabeledAlarm" in out and "trained 2 steps" in out
    assert json.loads((tmp_path / "train.json").read_text())["steps"] == 2

    assert main(["eval", "--prm", str(model), "--data", str(built), "--test-tasks", "ClockAddLabeledAlarm",
                 "--limit", "6", "--max-new-tokens", "12", "--json", str(tmp_path / "eval.json"), "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "PRM on 6 steps" in out and "majority-class baseline" in out
    report = json.loads((tmp_path / "eval.json").read_text())
    assert report["metrics"]["n"] == 6 and len(report["scores"]) == 6

    step = {"instruction": "Turn on Wi-Fi", "ui": "[n1] Switch ;click check ; unchecked ;;Wi-Fi: bounds: [0,0][100,100]",
            "history": ["open_app(app_name='Settings')"], "thought": "I tap the switch.",
            "action": "click(start_box='<|box_start|>(50,50)<|box_end|>')"}
    (tmp_path / "step.json").write_text(json.dumps(step))
    assert main(["judge", "--step", str(tmp_path / "step.json"), "--prm", str(model), "--max-new-tokens", "12"]) == 0
    judged = json.loads(capsys.readouterr().out)
    assert 0.0 <= judged["p_correct"] <= 1.0 and judged["source"] in ("logprobs", "text", "neutral")


def _trajectories(path: Path) -> None:
    steps = [Step(ui="[n1] Button ;click ; OK", action=Click(1, 1)), Step(ui="done", action=Finished())]
    lines = [Trajectory(task="t", instruction="Press OK", steps=steps, success=s, info={"label": lab}).to_dict()
             for s, lab in ((1.0, True), (1.0, False), (0.0, False))]
    path.write_text("\n".join(json.dumps(t) for t in lines) + "\n")


def test_judge_and_eval_outcome_verifiers(tmp_path, capsys):
    _trajectories(tmp_path / "trajs.jsonl")
    assert main(["eval", "--verifier", "recorded", "--trajectories", str(tmp_path / "trajs.jsonl")]) == 0
    assert "verifier on 3 episodes" in capsys.readouterr().out
    one = tmp_path / "one.json"
    one.write_text(json.dumps(json.loads((tmp_path / "trajs.jsonl").read_text().splitlines()[0])))
    assert main(["judge", str(one), "--verifier", "recorded"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["success"] is True and verdict["details"]["source"] == "recorded"


def test_errors_are_clear_and_exit_2(tmp_path, capsys):
    cases = [
        (["build-prm-data", "--output", str(tmp_path / "x"), "--tasks", "NoSuchTask", "--quiet"], "unknown task"),
        (["build-prm-data", "--output", str(tmp_path / "x"), "--source", "androidcontrol"], "needs --episodes"),
        (["build-prm-data", "--output", str(tmp_path / "x"), "--sampler", "backend"], "a model is required"),
        (["train-prm", "--data", str(tmp_path / "missing"), "--output", str(tmp_path / "m"), "--tiny"],
         "PRM dataset not found"),
        (["eval", "--data", "x"], "give --prm"),
        (["eval", "--verifier", "recorded", "--trajectories", str(tmp_path / "none.jsonl")], "trajectory file not found"),
        (["judge"], "give a trajectory file"),
        (["judge", str(tmp_path / "t.json"), "--verifier", "llm", "--base-url", "http://127.0.0.1:9/v1"],
         "trajectory file not found"),
        (["serve", "--model", str(tmp_path / "nope")], "model folder not found"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert f"coach-reward {argv[0]}: error:" in err and message in err, (argv, err)


def test_serve_answers_openai_requests(tiny_model_dir):
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "coach_reward.cli", "serve", "--model", str(tiny_model_dir),
                             "--port", "0", "--model-name", "tiny"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)
    try:
        line = proc.stdout.readline()
        assert line.startswith("serving 'tiny' at http://127.0.0.1:"), line + proc.stderr.read()
        url = line.split(" at ", 1)[1].strip()
        deadline = time.time() + 30
        while True:
            try:
                with urllib.request.urlopen(url + "/models", timeout=5) as resp:
                    body = json.loads(resp.read())
                break
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.2)
        assert [m["id"] for m in body["data"]] == ["tiny"]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
