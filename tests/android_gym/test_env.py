"""AndroidEnv on the simulated phone: the Gymnasium contract, parsing errors, experts, vector envs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import android_gym
from android_gym import Click, Finished, PressHome


def test_ids_registered_and_importable_by_module_prefix():
    for env_id in ("AndroidSim-v0", "AndroidWorld-v0", "AndroidLab-v0"):
        assert env_id in gym.registry
    env = gym.make("android_gym:AndroidSim-v0", task="SystemWifiTurnOff")
    obs, info = env.reset(seed=0)
    assert obs["instruction"] == info["goal"] and "wifi" in obs["instruction"].lower()
    env.close()


def test_check_env_passes():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff")
    check_env(env.unwrapped, skip_render_check=True)
    env.close()


def test_check_env_with_screenshots():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", screenshot=True, screen_size=(540, 1200))
    check_env(env.unwrapped, skip_render_check=True)
    obs, _ = env.reset(seed=1)
    assert obs["screenshot"].shape == (1200, 540, 3) and obs["screenshot"].dtype == np.uint8
    env.close()


def test_expert_solves_and_reward_is_task_score():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff")
    obs, info = env.reset(seed=3)
    assert info["success"] == 0.0
    total, steps, terminated = 0.0, 0, False
    while not terminated:
        obs, reward, terminated, truncated, info = env.step(env.unwrapped.expert_action())
        total += reward
        steps += 1
        assert not truncated, info
    assert info["success"] == 1.0 and total == 1.0
    env.close()


def test_same_seed_same_task_and_params():
    env = gym.make("AndroidSim-v0")
    first = [env.reset(seed=s)[1]["goal"] for s in range(5)]
    second = [env.reset(seed=s)[1]["goal"] for s in range(5)]
    assert first == second and len(set(first)) > 1
    env.close()


def test_task_by_option_and_unknown_task_errors():
    env = gym.make("AndroidSim-v0")
    _, info = env.reset(seed=0, options={"task": "SystemBluetoothTurnOn"})
    assert info["task"] == "SystemBluetoothTurnOn"
    with pytest.raises(KeyError, match="unknown task"):
        env.reset(options={"task": "NoSuchTask"})
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"tsk": "x"})
    env.close()


def test_parse_error_is_a_penalised_noop():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", invalid_action_penalty=-0.5)
    obs, _ = env.reset(seed=0)
    obs2, reward, terminated, truncated, info = env.step("Action: clack(start_box='(1,2)')")
    assert reward == -0.5 and not terminated and not truncated
    assert "parse_error" in info and "clack" in info["parse_error"]
    assert obs2["ui"] == obs["ui"]
    env.close()


def test_actions_as_text_object_and_dict():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff")
    env.reset(seed=0)
    for action in (PressHome(), {"type": "press_home"}, "Action: press_home()"):
        _, _, _, _, info = env.step(action)
        assert info["action"] == {"type": "press_home"}
    env.close()


def test_unknown_app_is_invalid_action_not_crash():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff")
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step({"type": "open_app", "app": "Definitely Not An App"})
    assert reward < 0 and "unknown app" in info["parse_error"] and not (terminated or truncated)
    env.close()


def test_truncated_at_step_budget_and_step_after_end_errors():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", max_steps=3)
    env.reset(seed=0)
    results = [env.step(Click(540, 1200)) for _ in range(3)]
    assert [r[3] for r in results] == [False, False, True]
    with pytest.raises(RuntimeError, match="reset"):
        env.step(Click(1, 1))
    env.close()


def test_max_steps_cap_caps_each_tasks_own_budget_and_never_raises_it():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", max_steps_cap=2)
    _, info = env.reset(seed=0)
    own = env.unwrapped.task.max_steps
    assert own > 2 and info["max_steps"] == 2
    results = [env.step(Click(540, 1200)) for _ in range(2)]
    assert [r[3] for r in results] == [False, True]
    env.close()
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff", max_steps_cap=own + 5)
    assert env.reset(seed=0)[1]["max_steps"] == own  # a cap above the budget leaves the budget
    env.close()
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="max_steps_cap must be a positive integer"):
            gym.make("AndroidSim-v0", task="SystemWifiTurnOff", max_steps_cap=bad)


def test_finished_terminates_with_zero_when_not_done():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff")
    env.reset(seed=0)
    _, reward, terminated, truncated, info = env.step(Finished())
    assert terminated and not truncated and reward == 0.0 and info["success"] == 0.0
    env.close()


def test_observation_carries_the_elements_the_ui_lists_and_info_the_xml():
    env = gym.make("AndroidSim-v0", task="SystemWifiTurnOff")
    obs, info = env.reset(seed=0)
    assert info["xml"].lstrip().startswith("<?xml") and "<hierarchy" in info["xml"]
    assert "elements" not in info  # one place for what the agent sees: the observation
    elements = obs["elements"]
    assert env.observation_space["elements"].contains(elements) and len(elements) > 3
    # the elements are the ones the UI text lists, in that order
    positions = [obs["ui"].index(f"[{e.id}]") for e in elements]
    assert positions == sorted(positions)
    sample = env.observation_space.sample()
    assert env.observation_space.contains(sample)
    env.close()


def test_android_world_suite_runs_sim_recreations():
    names = android_gym.list_tasks("android_world")
    assert "SystemWifiTurnOff" in names
    env = gym.make("AndroidWorld-v0", task="SystemWifiTurnOff")
    _, info = env.reset(seed=0)
    assert info["goal"].startswith("Turn wifi")
    env.close()


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec(mode):
    envs = gym.make_vec("AndroidSim-v0", num_envs=2, vectorization_mode=mode,
                        task="SystemWifiTurnOff")
    obs, infos = envs.reset(seed=[0, 1])
    assert len(obs["ui"]) == 2 and all(isinstance(u, str) and "Settings" in u for u in obs["ui"])
    assert all(len(e) > 3 and all(f"[{x.id}]" in u for x in e) for e, u in zip(obs["elements"], obs["ui"]))
    launcher = obs["ui"][0]
    obs, rewards, terminated, truncated, infos = envs.step(['Action: open_app(app_name="Settings")',
                                                            "Action: press_home()"])
    assert rewards.shape == (2,)
    # each env's current screen, not the first one (AsyncVectorEnv's shared memory hands back live values)
    assert "Network & internet" in obs["ui"][0] and obs["ui"][1] == launcher
    assert any(x.label == "Network & internet" for x in obs["elements"][0])
    assert obs["instruction"][0] == infos["goal"][0]
    envs.close()


def test_device_fault_truncates_with_error_and_next_reset_recovers():
    from android_gym.sim import SimDevice, SimPhone

    device = SimDevice(SimPhone(), faults=[(3, "crash"), (30, "crash")])
    env = android_gym.AndroidEnv(task="SystemWifiTurnOff", device=device, max_steps=50)
    env.reset(seed=0)  # the first crash hits during reset: it recovers and retries
    truncated, info, steps = False, {}, 0
    while not truncated and steps < 40:
        _, _, _, truncated, info = env.step(Click(540, 1200))
        steps += 1
    assert truncated and "DeviceCrashed" in info["error"]
    obs, info = env.reset(seed=1)
    assert device.health() and obs["ui"]
    _, _, _, truncated, info = env.step(PressHome())
    assert not truncated and "error" not in info
    env.close()
