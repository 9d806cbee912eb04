"""The same task episode in-process and through the real adb give the same observations and reward; the CLI."""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
import time

import pytest

from android_gym.actions import Action, Finished, Wait
from android_gym.adbd import HostAdb, SimAdbd, find_adb
from android_gym.adbd.cli import add_sim_adbd_parser, parse_faults, run_sim_adbd
from android_gym.device import action_to_commands
from android_gym.sim import SimDevice, SimPhone
from android_gym.tasks import get_task_class
from android_gym.xml import compress_xml

needs_adb = pytest.mark.skipif(find_adb() is None, reason="the adb binary is not installed (apt-get install adb)")
DUMP_TRAILER = "UI hierchary dumped to: /dev/tty\n"


@pytest.fixture(scope="module")
def adb(tmp_path_factory):
    if find_adb() is None:
        pytest.skip("the adb binary is not installed (apt-get install adb)")
    with HostAdb(home=tmp_path_factory.mktemp("adb_home")) as host:
        yield host


class AdbShellDevice:
    """Just enough of a device for tasks, over the adb binary: shell commands, dumps, actions as shell commands."""

    def __init__(self, adb: HostAdb, serial: str, screen_size: tuple[int, int]):
        self.adb, self.serial, self.screen_size = adb, serial, screen_size
        self.commands: list[str] = []

    def shell(self, command: str, timeout: float | None = None) -> str:
        self.commands.append(command)
        return self.adb.text("-s", self.serial, "shell", command)

    def dump(self) -> str:
        out = self.adb.text("-s", self.serial, "exec-out", "uiautomator dump /dev/tty")
        assert out.endswith(DUMP_TRAILER)
        return out[: -len(DUMP_TRAILER)]

    def execute(self, action: Action) -> None:
        if isinstance(action, Wait):
            self.shell("sleep 1")  # what SimDevice does in-process: one simulated second
            return
        for command in action_to_commands(action, self.screen_size):
            self.shell(command)


def play_expert(task_name: str, seed: int, device, observe, act) -> tuple[list[str], float, list[Action]]:
    """Initialise the task, run its expert from the observations, score it; the XML of every observation."""
    task = get_task_class(task_name)(seed=seed)
    task.initialize(device)
    xmls = [observe()]
    expert = task.expert(compress_xml(xmls[-1], screen_size=(1080, 2400)))
    action, actions, answer = next(expert), [], None
    for _ in range(task.max_steps + 5):
        actions.append(action)
        if isinstance(action, Finished):
            answer = action.text
            break
        act(action)
        xmls.append(observe())
        action = expert.send(compress_xml(xmls[-1], screen_size=(1080, 2400)))
    return xmls, float(task.is_successful(device, answer)), actions


@needs_adb
@pytest.mark.parametrize("task_name", ["ContactsAddContact", "ClockAddLabeledAlarm", "SimpleSmsSend"])
def test_episode_in_process_and_over_adb_agree(adb: HostAdb, task_name: str):
    local = SimDevice(SimPhone(seed=0))
    xml_local, reward_local, actions_local = play_expert(task_name, 11, local, lambda: local.observe().xml,
                                                         local.execute)
    remote_phone = SimPhone(seed=0)
    with SimAdbd(remote_phone) as server:
        adb.connect(server.serial)
        remote = AdbShellDevice(adb, server.serial, (1080, 2400))
        xml_remote, reward_remote, actions_remote = play_expert(task_name, 11, remote, remote.dump, remote.execute)
        adb.run("disconnect", server.serial)
    assert reward_local == reward_remote == 1.0
    assert actions_local == actions_remote
    assert len(xml_local) == len(xml_remote) > 2
    assert xml_local == xml_remote
    assert any(c.startswith("input ") for c in remote.commands)
    assert remote_phone.state_bytes() == local.phone.state_bytes()


def test_parse_faults_reads_rates_and_schedules():
    plan = parse_faults("crash=0.01, hang=0.002,disconnect@7", seed=3)
    assert plan.rates == {"crash": 0.01, "hang": 0.002} and plan.schedule == [(7, "disconnect")]
    with pytest.raises(ValueError, match="KIND=RATE or KIND@CALL"):
        parse_faults("crash")
    with pytest.raises(ValueError, match="not a number"):
        parse_faults("crash=often")
    with pytest.raises(ValueError, match="unknown"):
        parse_faults("explode=0.1")


def test_cli_parser_runs_the_server_with_a_task(tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="android-gym")
    add_sim_adbd_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["sim-adbd", "--port", "0", "--console-port", "0", "--no-announce",
                              "--task", "SystemWifiTurnOff", "--seed", "2", "--latency", "zero",
                              "--faults", "slow=0.0", "--auth-token-path", str(tmp_path / "token")])
    assert args.func is run_sim_adbd
    stop = threading.Event()
    result: list[int] = []
    thread = threading.Thread(target=lambda: result.append(run_sim_adbd(args, stop=stop)))
    thread.start()
    out = ""
    deadline = time.monotonic() + 10
    while "snapshots:" not in out and time.monotonic() < deadline:
        time.sleep(0.05)
        out += capsys.readouterr().out
    stop.set()
    thread.join(10)
    out += capsys.readouterr().out
    assert result == [0]
    assert "serial: 127.0.0.1:" in out and "task: SystemWifiTurnOff" in out and "sim-adbd stopped" in out


@needs_adb
def test_cli_process_serves_adb_until_sigterm(adb: HostAdb, tmp_path):
    proc = subprocess.Popen(
        [sys.executable, "-m", "android_gym.adbd", "--port", "0", "--task", "SystemWifiTurnOff", "--seed", "1",
         "--auth-token-path", str(tmp_path / "token")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stdout.readline()
        assert first.startswith("serial: "), first + proc.stderr.read()
        serial = first.split()[1]
        adb.connect(serial)
        assert adb.text("-s", serial, "shell", "settings get global wifi_on").strip() == "1"
        assert adb.text("-s", serial, "shell", "echo via-cli") == "via-cli\n"
        adb.run("disconnect", serial)
    finally:
        proc.terminate()
        out, _err = proc.communicate(timeout=10)
    assert proc.returncode == 0 and "sim-adbd stopped" in out
