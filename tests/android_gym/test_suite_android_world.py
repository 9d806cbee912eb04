"""The AndroidWorld adapter: its task contract run through AndroidEnv on the simulated phone behind adb.

Two layers. The contract tests need no ``android_world``: task classes written here the way
AndroidWorld writes its tasks (``template``, ``complexity``, ``app_names``, ``schema``, a seeded
``generate_random_params()`` on the global ``random``, ``initialize_task(env)``,
``is_successful(env)``, ``tear_down(env)``; adb through ``env.controller``, screens through
``env.get_state()``, answers through ``env.interaction_cache``) run on the sim behind sim-adbd, driven
by the real adb server and AdbDevice. The package tests run AndroidWorld's own registry, seeding and
task code when ``android_world`` is installed and are skipped with the reason otherwise.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import numpy as np
import pytest

from android_gym import AndroidEnv, Finished, OpenApp, Wait
from android_gym.adbd import SimAdbd
from android_gym.drivers import AdbDevice
from android_gym.sim import SimDevice, SimPhone
from android_gym.suites import (
    ANDROID_WORLD_INSTALL_HINT,
    AdbCommandError,
    AdbCommandRunner,
    AndroidWorldEnvAdapter,
    AndroidWorldSuite,
    android_world_available,
    android_world_params,
    ui_elements_from_xml,
)
from android_gym.tasks import get_task_class, instance_seed
from android_gym.xml import compress_xml

ADB = "/usr/bin/adb"
SETTINGS = "com.android.settings"
ANSWER_DIR = "/sdcard/Download/aw_contract"
needs_package = pytest.mark.skipif(not android_world_available(),
                                   reason="the android_world package is not installed (not on PyPI; see "
                                          "android_gym.suites.ANDROID_WORLD_INSTALL_HINT)")


# --- task classes written to AndroidWorld's contract ----------------------------------------------------
class _ContractTask:
    """What AndroidWorld's TaskEval base gives its tasks: params, goal, the initialized flag, tear-down."""

    template = ""
    complexity = 1.0
    app_names: tuple[str, ...] = ()
    schema: dict = {"type": "object", "properties": {}}
    torn_down: list[str] = []

    def __init__(self, params):
        self.initialized = False
        self._params = params

    @property
    def name(self) -> str:
        return type(self).__name__

    @property
    def params(self):
        return self._params

    @property
    def goal(self) -> str:
        return self.template.format(**self.params)

    @classmethod
    def set_device_time(cls, env) -> None:
        cls.device_time = "2023-10-15 15:34"

    def initialize_task(self, env) -> None:
        env.interaction_cache = ""
        if self.initialized:
            raise RuntimeError(f"{self.name}.initialize_task() is already called.")
        self.initialized = True

    def is_successful(self, env) -> float:
        if not self.initialized:
            raise RuntimeError("initialize_task() must be called before is_successful()")
        return 1.0

    def tear_down(self, env) -> None:
        _ContractTask.torn_down.append(self.name)
        self.initialized = False


def _adb(env, *args: str) -> str:
    """What adb_utils.issue_generic_request(args, env.controller) hands android_env's adb controller."""
    return env.controller.execute_command(list(args)).decode()


class WifiSwitch(_ContractTask):
    template = "Turn wifi {state}."
    complexity = 1.5
    app_names = ("settings",)
    schema = {"type": "object", "properties": {"state": {"type": "string"}}, "required": ["state"]}

    @classmethod
    def generate_random_params(cls):
        return {"state": random.choice(["on", "off"]), "noise": random.randint(0, 10**9)}

    def initialize_task(self, env) -> None:
        super().initialize_task(env)
        start = "0" if self.params["state"] == "on" else "1"
        _adb(env, "shell", "settings", "put", "global", "wifi_on", start)

    def is_successful(self, env) -> float:
        super().is_successful(env)
        want = "1" if self.params["state"] == "on" else "0"
        return 1.0 if _adb(env, "shell", "settings", "get", "global", "wifi_on").strip() == want else 0.0


class FileAnswer(_ContractTask):
    """An information-retrieval-shaped task: the answer is in a file; the check pulls the file."""

    template = "What number is written in {folder}/answer.txt?"
    complexity = 0.5
    app_names = ("files",)

    @classmethod
    def generate_random_params(cls):
        return {"number": random.randint(100, 999), "folder": ANSWER_DIR}

    def initialize_task(self, env) -> None:
        super().initialize_task(env)
        _adb(env, "shell", "mkdir", "-p", ANSWER_DIR)
        _adb(env, "shell", "echo", f"'{self.params['number']}'", ">", f"{ANSWER_DIR}/answer.txt")

    def is_successful(self, env) -> float:
        super().is_successful(env)
        with env.controller.pull_file(f"{ANSWER_DIR}/answer.txt") as local:
            truth = Path(local, "answer.txt").read_text().strip()
        return 1.0 if env.interaction_cache.strip() == truth else 0.0


class OpenSettings(_ContractTask):
    """Checked from the screen, as AndroidWorld's clock tasks do: ``env.get_state().ui_elements``."""

    template = "Open the Settings app."

    @classmethod
    def generate_random_params(cls):
        return {}

    def initialize_task(self, env) -> None:
        super().initialize_task(env)
        _adb(env, "shell", "input", "keyevent", "3")

    def is_successful(self, env) -> float:
        super().is_successful(env)
        elements = env.get_state(wait_to_stabilize=False).ui_elements
        return 1.0 if any(e.package_name == SETTINGS for e in elements) else 0.0


REGISTRY = {cls.__name__: cls for cls in (WifiSwitch, FileAnswer, OpenSettings)}


# --- the sim behind sim-adbd, driven through a private adb server -------------------------------------------

@pytest.fixture()
def sim_over_adb(host_adb):
    phone = SimPhone()
    adbd = SimAdbd(SimDevice(phone), port=0, console_port=0, adb_server_port=host_adb.server_port,
                   auth_token_path=host_adb.token_path, announce=True).start()
    device = AdbDevice(adbd.serial, adb_port=host_adb.server_port, console_token_path=host_adb.token_path,
                       timeout=5.0)
    yield phone, device
    device.close()
    adbd.stop()


def contract_env(device, **kwargs) -> AndroidEnv:
    return AndroidEnv(suite="android_world", device=device, task_source=AndroidWorldSuite(registry=REGISTRY),
                      **kwargs)


# --- adb command lines ----------------------------------------------------------------------------------------
def test_runner_runs_adb_command_lines_like_the_adb_client(sim_over_adb, tmp_path):
    phone, device = sim_over_adb
    runner = AdbCommandRunner(device)
    # adb joins shell arguments with spaces and the device sh reads the line: quoting is the caller's
    runner.execute_command(["shell", "echo", "'two  words'", ">", "/sdcard/Download/t.txt"])
    assert runner.execute_command("shell cat /sdcard/Download/t.txt") == b"two  words\n"
    assert phone.files.read_text("/sdcard/Download/t.txt") == "two  words\n"
    with pytest.raises(AdbCommandError, match="status 1") as failed:
        runner.execute_command(["shell", "cat", "/sdcard/missing.txt"])
    assert failed.value.returncode == 1 and b"missing.txt" in failed.value.output
    with pytest.raises(AdbCommandError, match="status 127"):
        runner.execute_command(["shell", "no-such-binary"])

    blob = bytes(range(256)) * 300
    local = tmp_path / "blob.bin"
    local.write_bytes(blob)
    assert b"1 file pushed" in runner.execute_command(["push", str(local), "/sdcard/Download/blob.bin"])
    back = tmp_path / "back.bin"
    runner.execute_command(["pull", "/sdcard/Download/blob.bin", str(back)])
    assert back.read_bytes() == blob
    with pytest.raises(AdbCommandError, match="failed to stat remote object"):
        runner.execute_command(["pull", "/sdcard/Download/none.bin", str(tmp_path / "none")])

    assert runner.execute_command(["root"]) == b"adbd cannot run as root in production builds\n"
    assert device.serial in runner.execute_command(["devices"], device_specific=False).decode()
    assert runner.execute_command(["emu", "avd", "name"]).strip() == b"Pixel_6_API_33"  # the emulator console
    with pytest.raises(AdbCommandError, match="supported: shell"):
        runner.execute_command(["reverse", "tcp:1", "tcp:2"])
    with pytest.raises(ValueError, match="at least one argument"):
        runner.execute_command([])


def test_ui_elements_follow_androidworlds_reading_of_a_dump(sim_over_adb):
    _, device = sim_over_adb
    xml = device.observe().xml
    elements = ui_elements_from_xml(xml)
    import xml.etree.ElementTree as ET

    assert len(elements) == sum(1 for _ in ET.fromstring(xml).iter()) - 1  # every node but the root
    boxed = [e for e in elements if e.bbox_pixels is not None]
    assert boxed and all(e.bbox_pixels.x_max >= e.bbox_pixels.x_min for e in boxed)
    assert any(e.is_clickable for e in elements) and all(e.is_visible for e in elements)
    with pytest.raises(ValueError, match="not XML"):
        ui_elements_from_xml("<hierarchy><node")


def test_env_adapter_state_actions_and_answers(sim_over_adb):
    phone, device = sim_over_adb
    env = AndroidWorldEnvAdapter(device)
    state = env.reset(go_home=True)
    assert state.pixels.shape == (2400, 1080, 3) and state.pixels.dtype == np.uint8
    if android_world_available():  # the accessibility forest (android_world's protos) is rebuilt from the same
        # dump: one node per element, behind adb too; without android_world the adapter has no forest to give
        assert sum(len(w.tree.nodes) for w in state.forest.windows) == len(state.ui_elements)
    else:
        assert state.forest is None
    index = next(i for i, e in enumerate(state.ui_elements) if (e.text or e.content_description) == "Settings")
    env.execute_action({"action_type": "click", "index": index})
    assert phone.current_activity().startswith(SETTINGS)
    env.execute_action({"action_type": "navigate_home"})
    env.execute_action({"action_type": "open_app", "app_name": "Settings"})
    assert env.foreground_activity_name.startswith(SETTINGS)
    env.execute_action({"action_type": "answer", "text": "42"})
    env.execute_action({"action_type": "status", "goal_status": "complete"})
    assert env.interaction_cache == "42"
    assert env.device_screen_size == env.logical_screen_size == (1080, 2400) and env.orientation == 0
    with pytest.raises(ValueError, match="invalid element index"):
        env.execute_action({"action_type": "click", "index": 10_000})
    env.hide_automation_ui()
    assert device.shell("settings get system pointer_location").strip() == "0"


# --- the contract through AndroidEnv ----------------------------------------------------------------------------
def test_params_follow_androidworlds_seeding_and_leave_global_random_alone(sim_over_adb):
    _, device = sim_over_adb
    env = contract_env(device)
    random.seed(1234)
    before = random.getstate()
    obs, info = env.reset(seed=7, options={"task": "WifiSwitch", "instance": 3})
    assert random.getstate() == before
    seed = instance_seed(7, "WifiSwitch", 3)
    random.seed(seed)
    expected = WifiSwitch.generate_random_params()
    expected["seed"] = seed
    assert info["params"] == expected == android_world_params(WifiSwitch, seed)
    assert obs["instruction"] == f"Turn wifi {expected['state']}." == info["goal"]
    assert info["max_steps"] == 15  # int(10 * complexity)
    assert sorted(env.task_names) == sorted(REGISTRY)
    env.close()


def test_success_needs_the_state_and_the_agent_saying_done(sim_over_adb):
    phone, device = sim_over_adb
    env = contract_env(device)
    for seed in range(20):  # a seed whose instance asks for "off" (the sim re-creation's expert turns it off)
        _, info = env.reset(seed=seed, options={"task": "WifiSwitch", "instance": 0})
        if info["params"]["state"] == "off":
            break
    assert device.shell("settings get global wifi_on").strip() == "1"
    expert = get_task_class("SystemWifiTurnOff")(seed=0).expert(compress_xml(info["xml"], screen_size=(1080, 2400)))
    action = next(expert)
    for _ in range(info["max_steps"]):
        obs, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
        action = expert.send(compress_xml(info["xml"], screen_size=(1080, 2400)))
    assert terminated and not truncated and reward == 1.0 == info["success"]
    assert [type(s.action).__name__ for s in env.trajectory.steps][-1] == "Finished"

    # the same end state without the agent saying it is done scores nothing
    _, info = env.reset(seed=seed, options={"task": "WifiSwitch", "instance": 0})
    assert WifiSwitch.torn_down[-1:] == ["WifiSwitch"]  # the previous episode's tear_down ran at this reset
    device.shell("settings put global wifi_on 0")
    for _ in range(info["max_steps"]):
        _, reward, terminated, truncated, info = env.step(Wait())
    assert truncated and not terminated and reward == 0.0 == info["success"]
    env.close()


def test_answers_reach_interaction_cache_and_checks_can_pull_files(sim_over_adb):
    phone, device = sim_over_adb
    env = contract_env(device)
    _, info = env.reset(seed=3, options={"task": "FileAnswer"})
    number = info["params"]["number"]
    assert phone.files.read_text(f"{ANSWER_DIR}/answer.txt").strip() == str(number)
    _, reward, terminated, _, info = env.step(f'{{"action_type": "answer", "text": "{number}"}}')
    assert terminated and reward == 1.0
    env.reset(seed=3, options={"task": "FileAnswer"})
    _, reward, terminated, _, _ = env.step(Finished(text=str(number + 1)))
    assert terminated and reward == 0.0
    env.close()
    assert WifiSwitch.torn_down[-1] == "FileAnswer"  # close() tears the last episode down


def test_screen_checks_read_ui_elements(sim_over_adb):
    _, device = sim_over_adb
    env = contract_env(device)
    env.reset(seed=0, options={"task": "OpenSettings"})
    _, reward, _, _, _ = env.step(Finished())
    assert reward == 0.0
    env.reset(seed=0, options={"task": "OpenSettings"})
    env.step(OpenApp("Settings"))
    _, reward, terminated, _, info = env.step(Finished())
    assert terminated and reward == 1.0 and info["activity"].startswith(SETTINGS)
    env.close()


def test_a_failing_check_ends_the_episode_with_zero_and_the_reason(sim_over_adb):
    class Broken(OpenSettings):
        def is_successful(self, env) -> float:
            _adb(env, "shell", "cat", "/no/such/file")
            return 1.0

    _, device = sim_over_adb
    env = AndroidEnv(suite="android_world", device=device, task_source=AndroidWorldSuite(registry={"Broken": Broken}))
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(Finished())
    assert terminated and not truncated and reward == 0.0
    assert info["error"].startswith("task check failed: AdbCommandError") and info["verified"] is False
    env.close()


def test_unknown_task_names_and_task_sources_give_clear_errors(sim_over_adb):
    _, device = sim_over_adb
    with pytest.raises(KeyError, match="did you mean WifiSwitch"):
        contract_env(device, task="WifiSwich")
    with pytest.raises(ValueError, match="task_source must be one of"):
        AndroidEnv(suite="android_world", device=device, task_source="androidworld")

def test_missing_package_gives_clear_errors_and_the_recreations(sim_over_adb, monkeypatch):
    """Without android_world (hidden here when it is installed): install hints, or the re-creations with a note."""
    _, device = sim_over_adb
    monkeypatch.setitem(sys.modules, "android_world", None)  # "import android_world" now raises ImportError
    assert not android_world_available()
    with pytest.raises(ImportError, match="pip install git\\+https://github.com/google-research/android_world"):
        AndroidEnv(suite="android_world", device=device, task_source="android_world")
    with pytest.raises(ImportError, match="task_source='recreations'"):
        AndroidEnv(suite="android_world", device=device, task="ExpenseDeleteMultiple2")  # not re-created
    with pytest.warns(RuntimeWarning, match="simulated re-creations of SystemWifiTurnOff"):
        env = AndroidEnv(suite="android_world", device=device, task="SystemWifiTurnOff")
    assert env.task_names == ["SystemWifiTurnOff"]
    assert "emulator" in ANDROID_WORLD_INSTALL_HINT and "android_env" in ANDROID_WORLD_INSTALL_HINT
    with pytest.warns(RuntimeWarning, match="re-creations of AndroidWorld's tasks because the android_world "
                                            "package is not installed"):
        sim_env = AndroidEnv(suite="android_world")
    assert len(sim_env.task_names) >= 50
    sim_env.close()


@needs_package
def test_the_sim_runs_androidworlds_tasks_and_the_recreations_can_be_forced_on_adb(sim_over_adb):
    from android_gym.suites.android_world_sim import SIM_TASKS

    _, device = sim_over_adb
    sim_env = AndroidEnv(suite="android_world")
    assert sim_env.task_names == sorted(SIM_TASKS)
    recreations = AndroidEnv(suite="android_world", task_source="recreations")
    assert len(recreations.task_names) >= 50 and "SystemWifiTurnOff" in recreations.task_names
    forced = AndroidEnv(suite="android_world", device=device, task_source="recreations")
    assert forced.task_names == recreations.task_names
    recreations.close()
    _, info = forced.reset(seed=1, options={"task": "SystemWifiTurnOff"})
    assert info["goal"] and forced.expert_action() is not None
    sim_env.close()
    forced.close()


def test_adb_requests_need_android_env(sim_over_adb, monkeypatch):
    monkeypatch.setitem(sys.modules, "android_env.components.adb_call_parser", None)  # as if it were missing
    _, device = sim_over_adb
    with pytest.raises(ImportError, match="AdbRequest protos need android_env"):
        AndroidWorldEnvAdapter(device).controller.execute_adb_call(object())


# --- AndroidWorld's own package ---------------------------------------------------------------------------------
@needs_package
def test_package_registry_is_androidworlds_116_tasks(realdata):
    suite = AndroidWorldSuite()
    metadata = json.loads((realdata / "tasks" / "android_world" / "task_metadata.json").read_text())
    listed = {row["task_name"] for row in metadata}
    assert len(suite.names()) == 116
    assert set(suite.names()) <= listed


@needs_package
def test_package_params_equal_its_own_create_suite():
    from android_world import suite_utils

    suite = AndroidWorldSuite()
    names = ["SystemWifiTurnOff", "ContactsAddContact", "SimpleSmsSend", "MarkorCreateNote", "ExpenseAddSingle",
             "SimpleCalendarAddOneEvent", "ClockTimerEntry", "RecipeAddSingleRecipe"]
    theirs = suite_utils.create_suite(suite.registry, n_task_combinations=2, seed=30, tasks=names)
    for name in names:
        for i in range(2):
            ours = suite.instance(name, 30, i)
            assert ours.params == theirs[name][i].params, (name, i)
            assert ours.goal == theirs[name][i].goal
            assert ours.max_steps == int(10 * theirs[name][i].complexity)


@needs_package
def test_package_task_runs_through_the_env_on_the_sim_over_adb(sim_over_adb):
    from android_world.env import interface

    _, device = sim_over_adb
    env = AndroidEnv(suite="android_world", device=device, task_source="android_world", task="SystemWifiTurnOff")
    assert isinstance(env.task_source.env, interface.AsyncEnv)
    _, info = env.reset(seed=30, options={"instance": 0})
    assert device.shell("settings get global wifi_on").strip() == "1"  # AndroidWorld's own set-up turned it on
    assert info["goal"] == "Turn wifi off." and info["max_steps"] == 10
    expert = get_task_class("SystemWifiTurnOff")(seed=0).expert(compress_xml(info["xml"], screen_size=(1080, 2400)))
    action = next(expert)
    for _ in range(10):
        _, reward, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            break
        action = expert.send(compress_xml(info["xml"], screen_size=(1080, 2400)))
    assert terminated and reward == 1.0
    env.close()


@needs_package
def test_package_adb_helpers_and_checks_run_through_the_controller(sim_over_adb):
    """AndroidWorld's own adb_utils build android_env AdbRequest protos; the controller executes them."""
    from android_world.env import adb_utils

    phone, device = sim_over_adb
    suite = AndroidWorldSuite()
    controller = suite.attach(device).controller
    assert adb_utils.get_screen_size(controller) == (1080, 2400)
    adb_utils.launch_app("settings", controller)
    assert phone.current_activity().startswith(SETTINGS)
    adb_utils.press_home_button(controller)
    assert not phone.current_activity().startswith(SETTINGS)
    adb_utils.toggle_airplane_mode("on", controller)
    assert adb_utils.check_airplane_mode(controller) is True
    adb_utils.toggle_airplane_mode("off", controller)
    assert adb_utils.check_airplane_mode(controller) is False
    assert SETTINGS in adb_utils.get_all_package_names(controller)

    # a real task's own set-up and check, on the device state it looks for
    task = suite.instance("SystemWifiTurnOff", 30, 0)
    task.initialize(device)
    assert task.is_successful(device) == 0.0
    device.shell("settings put global wifi_on 0")
    assert task.is_successful(device) == 1.0
