"""AndroidLab: its real task YAMLs as env tasks, verifier-scored episodes, and trace folders its evaluator reads.

The trace checks use a reader written from AndroidLab's offline evaluator (``generate_result.py``
and ``evaluation/task.py``): how it finds trace folders and task ids, which fields of each
``trace.jsonl`` line it reads, where it looks for the XML and screenshot files, how it reads answers,
and its ROR formula.
"""

from __future__ import annotations

import json
import math
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from android_gym import (
    AndroidEnv,
    Click,
    Drag,
    Finished,
    LongPress,
    OpenApp,
    PressBack,
    PressEnter,
    PressHome,
    Scroll,
    Swipe,
    Type,
    Wait,
)
from android_gym.adbd import HostAdb, SimAdbd
from android_gym.drivers import AdbDevice
from android_gym.sim import SimDevice, SimPhone
from android_gym.suites import (
    AndroidLabSuite,
    androidlab_metrics,
    androidlab_parsed_action,
    export_androidlab_traces,
    load_androidlab_tasks,
)
from android_gym.tasks import get_task_class
from android_gym.trajectory import Step, Trajectory
from android_gym.xml import compress_xml

ADB = "/usr/bin/adb"
CLOCK = "com.google.android.deskclock"


@pytest.fixture(scope="module")
def lab_dir(realdata) -> Path:
    return realdata / "tasks" / "androidlab"


# --- a reader written from AndroidLab's evaluator ---------------------------------------------------------------
def find_all_traces(folder: Path) -> dict[str, dict[str, str]]:
    """generate_result.find_all_traces_files: task id = the first two '_' fields of each folder name."""
    traces = {}
    for name in os.listdir(folder):
        parts = name.split("_")
        task_id = f"{parts[0]}_{parts[1]}"
        root = os.path.join(folder, name)
        traces[task_id] = {"task_id": task_id, "trace_file": os.path.join(root, "traces", "trace.jsonl"),
                           "xml_path": os.path.join(root, "xml"), "trace_root": root}
    return traces


def read_trace(trace: dict[str, str]) -> list[dict]:
    """Evaluation_Task._evaluate_single_task's walk: each line's XML and screenshot as it resolves them."""
    steps, last, repeats = [], None, 0
    with open(trace["trace_file"], encoding="utf-8") as f:
        for raw in f:
            line = json.loads(raw)
            current = json.dumps(line["parsed_action"])
            if current == last:
                repeats += 1
                if repeats > 5:
                    break
            else:
                repeats, last = 0, current
            xml_name = (line["xml"] if line["ac_xml"] is None else line["ac_xml"]).split("/")[-1]
            xml_path = os.path.join(trace["xml_path"], xml_name)
            assert os.path.exists(xml_path), f"XML file not found: {xml_path}"
            image_path = os.path.join(trace["trace_root"], "Screen", line["image"].split("/")[-1])
            steps.append({"line": line, "xml_path": xml_path, "image_path": image_path})
    return steps


def model_answer(line: dict) -> str | None:
    """SingleTask.check_answer: the answer of a finish line, from kwargs.message (or input)."""
    action = line["parsed_action"]
    if action.get("action") != "finish" and action.get("type") != "finish":
        return None
    return action["kwargs"]["message"] if "kwargs" in action else action["input"]


def androidlab_ror(image_paths: list[str], length: int) -> float:
    """compute_image_similarity + add_metrics' reasonable operation ratio."""
    same = 0
    if len(image_paths) > 2:
        images = [np.array(Image.open(p)) for p in image_paths[:-1]]
        for a, b in zip(images, images[1:]):
            either = np.logical_or(a != 255, b != 255)
            if np.sum(np.logical_and(a == b, either).astype(np.float32)) / np.sum(either.astype(np.float32)) > 0.999:
                same += 1
    return 1.0 if length - 1 == 0 else 1 - same / (length - 1)


# --- loading the task YAMLs -------------------------------------------------------------------------------------
def test_loads_all_138_tasks_with_human_steps(lab_dir):
    specs = load_androidlab_tasks(lab_dir)  # the run_*.yaml agent configs beside them are skipped
    assert len(specs) == 138 and len({s.task_id for s in specs}) == 138
    apps = {s.app for s in specs}
    assert len(apps) == 9
    assert sum(s.is_query for s in specs) == 45
    human = json.loads((lab_dir / "ground_truth_length.json").read_text())
    assert all(s.human_steps == human[s.task_id] for s in specs)
    clock_1 = next(s for s in specs if s.task_id == "clock_1")
    assert clock_1.instruction == 'Set an alarm for 3PM with the label "meeting" using Clock.'
    assert clock_1.package == CLOCK and clock_1.max_steps() == math.ceil(3 * human["clock_1"])
    setting_0 = next(s for s in specs if s.task_id == "setting_0")
    assert setting_0.adb_query == "adb shell settings get global airplane_mode_on"
    assert [s.task_id for s in load_androidlab_tasks(lab_dir / "zoom.yaml")] == [f"zoom_{i}" for i in range(1, 6)]


def test_bad_task_files_name_the_problem(tmp_path, lab_dir):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_androidlab_tasks(tmp_path / "nowhere")
    (tmp_path / "a.yaml").write_text("APP: x\npackage: com.x\ntasks:\n  - task: do it\n")
    with pytest.raises(ValueError, match=r"a\.yaml: task #0 has no 'task_id'"):
        load_androidlab_tasks(tmp_path / "a.yaml")
    (tmp_path / "a.yaml").write_text("APP: x\ntasks:\n  - task_id: clock_1\n    task: again\n")
    with pytest.raises(ValueError, match="task id 'clock_1' appears in both"):
        load_androidlab_tasks([lab_dir / "clock.yaml", tmp_path / "a.yaml"])
    (tmp_path / "a.yaml").write_text("APP: [unclosed\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        load_androidlab_tasks(tmp_path / "a.yaml")
    (tmp_path / "a.yaml").write_text("agent:\n  name: x\n")
    with pytest.raises(ValueError, match="no AndroidLab tasks found"):
        load_androidlab_tasks(tmp_path / "a.yaml")
    (tmp_path / "h.json").write_text('{"x_1": 0}')
    with pytest.raises(ValueError, match="must be a positive number"):
        load_androidlab_tasks(lab_dir / "zoom.yaml", human_steps=tmp_path / "h.json")


def test_budget_without_human_steps_is_androidlabs_max_rounds(tmp_path):
    (tmp_path / "t.yaml").write_text('APP: clock\npackage: com.google.android.deskclock\ntasks:\n'
                                     '  - task_id: clock_99\n    task: "Use {braces} as text"\n'
                                     '    metric_type: query_detect\n')
    suite = AndroidLabSuite(tmp_path, step_factor=2.0)
    task = suite.task_class("clock_99")(seed=0)
    assert task.max_steps == 25 and task.goal == "Use {braces} as text" and task.answer_task
    assert AndroidLabSuite(tmp_path, human_steps={"clock_99": 4}, step_factor=2.0).task_class("clock_99")(
        seed=0).max_steps == 8
    with pytest.raises(KeyError, match="did you mean clock_99"):
        suite.task_class("clock_9")


# --- the YAML tasks in AndroidLab-v0 ------------------------------------------------------------------------------
class CountingVerifier:
    """A duck-typed outcome verifier: success when the alarm list holds a 3:00 PM alarm labelled meeting."""

    def __init__(self):
        self.calls = []

    def verify(self, trajectory, *, device=None, task=None):
        self.calls.append((trajectory, device, task))
        alarms = device.shell("content query --uri content://com.google.android.deskclock/alarms")
        ok = "hour=15" in alarms and "meeting" in alarms

        class Verdict:
            score = 1.0 if ok else 0.0

        return Verdict()


def test_yaml_tasks_on_a_device_are_scored_by_the_verifier_or_not_at_all(lab_dir):
    env = AndroidEnv(suite="androidlab", device=SimDevice(SimPhone()), tasks_path=lab_dir, task_source="androidlab")
    assert len(env.task_names) == 138 and env.task_names[0] == "bluecoins_1"
    obs, info = env.reset(seed=0, options={"task": "clock_1"})
    assert obs["instruction"] == 'Set an alarm for 3PM with the label "meeting" using Clock.'
    assert info["activity"].startswith(CLOCK)  # AndroidLab's in_app mode: the task starts in its app
    human = json.loads((lab_dir / "ground_truth_length.json").read_text())
    assert info["params"] == {} and info["max_steps"] == math.ceil(3 * human["clock_1"])
    _, reward, terminated, _, info = env.step('finish(message="done")')
    assert terminated and reward == 0.0 and info["success"] == 0.0 and info["verified"] is False
    assert env.trajectory.info["verified"] is False and env.trajectory.answer == "done"
    env.close()

    verifier = CountingVerifier()
    env = AndroidEnv(suite="androidlab", tasks_path=lab_dir, task_source="androidlab", verifier=verifier,
                     task="clock_1")
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(Finished())
    assert terminated and reward == 0.0 and "verified" not in info
    # the re-creation's scripted expert does the work; the YAML task has no check, the verifier decides
    _, info = env.reset(seed=0)
    expert = get_task_class("clock_1")(seed=0).expert(compress_xml(info["xml"], screen_size=(1080, 2400)))
    action = next(expert)
    for _ in range(30):
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
        action = expert.send(compress_xml(info["xml"], screen_size=(1080, 2400)))
    assert terminated and reward == 1.0 == info["success"]
    trajectory, device, task = verifier.calls[-1]
    assert device is env.device and task.name == "clock_1" and isinstance(trajectory.steps[-1].action, Finished)
    assert len(trajectory.steps) == info["step"]
    env.close()

    env = AndroidEnv(suite="androidlab", tasks_path=lab_dir / "clock.yaml", task_source="androidlab",
                     verifier=lambda trajectory, device, task: 0.5)
    env.reset(seed=0)
    assert env.step(Finished())[1] == 0.5
    with pytest.raises(TypeError, match="verifier must have verify"):
        AndroidEnv(suite="androidlab", tasks_path=lab_dir, verifier=3)
    with pytest.raises(ValueError, match="needs tasks_path"):
        AndroidEnv(suite="androidlab", task_source="androidlab")
    with pytest.raises(ValueError, match="tasks_path= is for AndroidLab"):
        AndroidEnv(suite="sim", tasks_path=lab_dir)


def test_sim_maps_yaml_ids_to_the_recreations_and_skips_the_rest(lab_dir, tmp_path):
    with pytest.warns(RuntimeWarning, match=r"18 of 138 AndroidLab tasks have no simulated re-creation.*clock_16"):
        env = AndroidEnv(suite="androidlab", tasks_path=lab_dir)
    assert "clock_1" in env.task_names and "setting_0" in env.task_names and "clock_16" not in env.task_names
    assert {"bluecoins_1", "pimusic_1", "map_1", "cantook_1"} <= set(env.task_names)
    assert set(env.task_names) <= set(AndroidEnv(suite="androidlab").task_names)
    with pytest.warns(RuntimeWarning):
        only_clock = AndroidEnv(suite="androidlab", tasks_path=[lab_dir / "clock.yaml"])
    assert only_clock.task_names and all(n.startswith("clock_") for n in only_clock.task_names)
    unknown = tmp_path / "other.yaml"  # every one of AndroidLab's apps has re-creations now: an app of our own
    unknown.write_text("APP: other\npackage: com.example.other\ntasks:\n" + "".join(
        f"  - task_id: other_{i}\n    task: Do thing {i}.\n    metric_type: operation\n" for i in (1, 2)))
    with pytest.raises(ValueError, match="none of the 2 AndroidLab tasks"):
        AndroidEnv(suite="androidlab", tasks_path=unknown)
    env.close()
    only_clock.close()


# --- traces -------------------------------------------------------------------------------------------------------
def run_expert(env: AndroidEnv, task: str, seed: int = 0) -> dict:
    env.reset(seed=seed, options={"task": task})
    for _ in range(60):
        _, reward, terminated, truncated, info = env.step(env.expert_action())
        if terminated or truncated:
            return info
    raise AssertionError(f"{task}: the expert did not finish")


def test_recorded_sim_episodes_are_traces_androidlabs_evaluator_reads(lab_dir, tmp_path):
    out = tmp_path / "logs" / "evaluation" / "our-agent"
    with pytest.warns(RuntimeWarning):
        env = AndroidEnv(suite="androidlab", tasks_path=lab_dir, record_dir=out)
    infos = {task: run_expert(env, task) for task in ("clock_1", "setting_0", "setting_14")}
    assert all(info["success"] == 1.0 for info in infos.values())
    traces = find_all_traces(out)
    assert set(traces) == {"clock_1", "setting_0", "setting_14"}
    assert {str(Path(info["trace_dir"])) for info in infos.values()} == {t["trace_root"] for t in traces.values()}

    steps = read_trace(traces["clock_1"])
    assert len(steps) == infos["clock_1"]["step"]
    first, last = steps[0]["line"], steps[-1]["line"]
    assert first["prompt"] == first["target"] == 'Set an alarm for 3PM with the label "meeting" using Clock.'
    assert steps[1]["line"]["prompt"] == "** XML **" and first["window"] == [1080, 2400]
    assert first["trace_id"] == Path(traces["clock_1"]["trace_root"]).name and first["ac_xml"] is None
    assert [s["line"]["index"] for s in steps] == list(range(len(steps)))
    assert last["parsed_action"] == {"operation": "finish", "action": "finish", "kwargs": {"message": None}}
    assert {s["line"]["parsed_action"]["action"] for s in steps[:-1]} <= {"Tap", "Type", "Swipe", "Launch",
                                                                          "Press Back", "Press Enter", "Long Press"}
    for step in steps:
        root = ET.parse(step["xml_path"]).getroot()
        assert root.tag == "hierarchy" and root.find("node") is not None
        image = Image.open(step["image_path"])
        assert image.format == "PNG" and image.size == (1080, 2400)
        assert step["line"]["current_activity"] and step["line"]["current_response"]
    assert CLOCK in open(steps[-1]["xml_path"], encoding="utf-8").read()

    # setting_0's judge reads the adb_query output at every step: airplane mode ends on
    commands = [s["line"]["command"]["adb shell settings get global airplane_mode_on"]
                for s in read_trace(traces["setting_0"])]
    assert commands[0] == "0" and commands[-1] == "1"
    # a query task: the answer is the finish message
    answer_line = read_trace(traces["setting_14"])[-1]["line"]
    assert model_answer(answer_line) == env.trajectory.answer and answer_line["target"] == "What is my time zone"

    ror = androidlab_ror([s["image_path"] for s in steps], len(steps))
    trajectory = env.recorder.exported and env.trajectory
    assert 0.0 < ror <= 1.0 and trajectory is not None
    env.close()


def test_export_from_trajectories_and_metrics_agree_with_the_evaluator(lab_dir, tmp_path):
    env = AndroidEnv(suite="androidlab", task=["clock_1", "setting_0"], screenshot=True)
    trajectories = []
    for task in ("clock_1", "setting_0", "setting_0"):
        run_expert(env, task)
        trajectories.append(env.trajectory)
    env.reset(seed=0, options={"task": "clock_1"})
    for _ in range(3):
        env.step(Wait())
    env.step(PressBack())
    env.step(Finished(text="gave up"))
    trajectories.append(env.trajectory)
    env.close()
    assert [t.success for t in trajectories] == [1.0, 1.0, 1.0, 0.0]

    folders = export_androidlab_traces(trajectories, tmp_path / "agent")
    assert len(folders) == 4 and len({f.name for f in folders}) == 4  # repeated runs get distinct folders
    human = json.loads((lab_dir / "ground_truth_length.json").read_text())
    metrics = androidlab_metrics(trajectories, human)
    assert metrics["SR"] == 75.0 and metrics["successes"] == 3
    expected_rrr = [human[t.task] / len(t.steps) for t in trajectories[:3]]
    assert metrics["RRR"] == pytest.approx(100 * sum(expected_rrr) / 3)
    rors = []
    for folder, trajectory in zip(folders, trajectories):
        steps = read_trace({"trace_file": str(folder / "traces" / "trace.jsonl"), "xml_path": str(folder / "xml"),
                            "trace_root": str(folder)})
        assert len(steps) == len(trajectory.steps)
        rors.append(androidlab_ror([s["image_path"] for s in steps], len(steps)))
    assert metrics["ROR"] == pytest.approx(100 * sum(rors) / len(rors))
    assert rors[3] < 1.0  # waiting on an unchanged screen is not a reasonable operation
    assert model_answer(read_trace({"trace_file": str(folders[3] / "traces" / "trace.jsonl"),
                                    "xml_path": str(folders[3] / "xml"), "trace_root": str(folders[3])})[-1]["line"]
                        ) == "gave up"


def test_export_needs_xml_and_warns_without_screenshots(tmp_path):
    no_xml = Trajectory(task="clock_1", instruction="x", steps=[Step(ui="", action=Finished())])
    with pytest.raises(ValueError, match="without hierarchy XML"):
        export_androidlab_traces([no_xml], tmp_path)
    xml = '<hierarchy rotation="0"><node bounds="[0,0][1080,2400]" /></hierarchy>'
    blind = Trajectory(task="clock_1", instruction="x", steps=[Step(ui="", action=Click(1, 2), xml=xml)])
    with pytest.warns(RuntimeWarning, match="no screenshot"):
        (folder,) = export_androidlab_traces([blind], tmp_path)
    line = json.loads((folder / "traces" / "trace.jsonl").read_text())
    assert line["image"].endswith(".png") and line["parsed_action"]["action"] == "Tap"
    with pytest.raises(ValueError, match="bad task id"):
        export_androidlab_traces([Trajectory(task="../x", instruction="x")], tmp_path)


def test_parsed_actions_use_androidlabs_vocabulary():
    size = (1080, 2400)
    assert androidlab_parsed_action(Click(10, 20)) == {"operation": "do", "action": "Tap",
                                                       "kwargs": {"element": [10, 20]}}
    assert androidlab_parsed_action(LongPress(1, 2))["action"] == "Long Press"
    assert androidlab_parsed_action(Type("hi", submit=True)) == {"operation": "do", "action": "Type",
                                                                 "kwargs": {"text": "hi"}}
    assert androidlab_parsed_action(Swipe(540, 1200, 540, 768))["kwargs"] == {"element": [540, 1200],
                                                                             "direction": "up", "dist": 216}
    assert androidlab_parsed_action(Scroll("down"), size)["kwargs"]["direction"] == "up"  # finger moves up
    assert androidlab_parsed_action(Drag(0, 0, 500, 10))["kwargs"]["direction"] == "right"
    assert androidlab_parsed_action(OpenApp("Clock"))["kwargs"] == {"package": CLOCK}
    assert [androidlab_parsed_action(a)["action"] for a in (PressEnter(), PressBack(), PressHome(), Wait())] == [
        "Press Enter", "Press Back", "Press Home", "Wait"]
    assert androidlab_parsed_action(Finished("42")) == {"operation": "finish", "action": "finish",
                                                        "kwargs": {"message": "42"}}
    assert androidlab_parsed_action(None, parse_error="bad")["kwargs"] == {"error": "bad"}


def test_parse_errors_are_recorded_steps():
    env = AndroidEnv(suite="androidlab", task="clock_1")
    env.reset(seed=0)
    _, reward, _, _, info = env.step("do(action=")
    assert "parse_error" in info and reward < 0
    step = env.trajectory.steps[-1]
    assert step.action is None and step.parse_error and step.response == "do(action=" and step.xml
    env.close()


# --- the YAML tasks on the sim behind adb ---------------------------------------------------------------------------
def test_yaml_tasks_run_on_an_adb_device(lab_dir, tmp_path, monkeypatch):
    if not os.access(ADB, os.X_OK):
        pytest.skip(f"{ADB} not installed (apt-get install adb)")
    monkeypatch.setenv("ADBUTILS_ADB_PATH", ADB)
    with HostAdb(adb=ADB, home=tmp_path / "home") as host:
        token = str(tmp_path / "home" / ".emulator_console_auth_token")
        adbd = SimAdbd(SimDevice(SimPhone()), port=0, console_port=0, adb_server_port=host.server_port,
                       auth_token_path=token, announce=True).start()
        try:
            device = AdbDevice(adbd.serial, adb_port=host.server_port, console_token_path=token, timeout=5.0)
            env = AndroidEnv(suite="androidlab", device=device, tasks_path=lab_dir / "setting.yaml",
                             record_dir=tmp_path / "traces", task="setting_0")
            _, info = env.reset(seed=0)
            assert info["activity"].startswith("com.android.settings")
            env.step(Wait())
            _, reward, terminated, _, info = env.step(Finished())
            assert terminated and reward == 0.0 and info["verified"] is False
            (trace,) = find_all_traces(tmp_path / "traces").values()
            lines = [s["line"] for s in read_trace(trace)]
            assert [line["command"] for line in lines] == [{"adb shell settings get global airplane_mode_on": "0"}] * 2
            env.close()
        finally:
            adbd.stop()


def test_fast_png_encoder_round_trips():
    import io

    from android_gym.suites.androidlab import encode_png

    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, size=(37, 23, 3), dtype=np.uint8)
    grey = rng.integers(0, 256, size=(5, 9), dtype=np.uint8)
    for image in (rgb, grey):
        decoded = Image.open(io.BytesIO(encode_png(image)))
        assert decoded.format == "PNG" and np.array_equal(np.array(decoded), image)
    with pytest.raises(ValueError, match="HxWx3 or HxW"):
        encode_png(np.zeros((2, 2, 4), dtype=np.uint8))
