"""The run folder and checkpoint machinery under the training loop: atomic checkpoints, RNG and replay restore."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from android_gym.actions import Click, Finished
from android_gym.trajectory import Step, Trajectory
from coach_rl.replay import ReplayBuffer
from coach_rl.run import RunDir, capture_rng_state, restore_replay, restore_rng_state, snapshot_replay

from .stored import store


def _draws() -> tuple:
    return random.random(), float(np.random.rand()), float(torch.rand(1))


def test_rng_state_round_trip_through_a_weights_only_file(tmp_path: Path):
    random.seed(1)
    np.random.seed(2)
    torch.manual_seed(3)
    _draws()
    state = capture_rng_state()
    torch.save(state, tmp_path / "rng.pt")
    expected = [_draws() for _ in range(3)]
    _draws()
    restore_rng_state(torch.load(tmp_path / "rng.pt", weights_only=True))
    assert [_draws() for _ in range(3)] == expected
    with pytest.raises(ValueError, match="missing"):
        restore_rng_state({"python": state["python"]})


def test_checkpoints_publish_atomically_prune_and_survive_errors(tmp_path: Path):
    run = RunDir(tmp_path / "run", keep=2)
    assert run.latest_checkpoint() is None
    for i in range(1, 4):
        with run.checkpoint(i, {"env_steps": 10 * i}) as d:
            (d / "weights.bin").write_bytes(bytes([i]) * 100)
    assert run.latest_checkpoint() == run.checkpoint_path(3)
    assert [i for i, _ in run.complete_checkpoints()] == [2, 3]  # keep=2
    assert RunDir.read_manifest(run.latest_checkpoint())["env_steps"] == 30
    # an exception inside the block publishes nothing and leaves no temporary folder
    with pytest.raises(RuntimeError):
        with run.checkpoint(4) as d:
            (d / "weights.bin").write_bytes(b"half")
            raise RuntimeError("disk full")
    assert run.latest_checkpoint() == run.checkpoint_path(3)
    assert not any(p.name.startswith(".tmp") for p in run.checkpoints_dir.iterdir())
    # a LATEST pointing at a missing folder falls back to the newest complete checkpoint
    (run.checkpoints_dir / "LATEST").write_text("iter-000099\n")
    assert run.latest_checkpoint() == run.checkpoint_path(3)


def test_kill_9_while_saving_keeps_the_previous_checkpoint(tmp_path: Path):
    run = RunDir(tmp_path / "run")
    with run.checkpoint(1) as d:
        (d / "state.txt").write_text("one")
    script = textwrap.dedent(f"""
        import time
        from pathlib import Path
        from coach_rl.run import RunDir
        run = RunDir({str(run.path)!r})
        with run.checkpoint(2) as d:
            (d / "state.txt").write_text("two, half written")
            (Path({str(tmp_path)!r}) / "inside").write_text("1")
            time.sleep(60)
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.time() + 60
        while not (tmp_path / "inside").exists():
            assert proc.poll() is None and time.time() < deadline, "the writer did not reach its checkpoint"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert any(p.name.startswith(".tmp") for p in run.checkpoints_dir.iterdir())
    reopened = RunDir(run.path)
    assert reopened.latest_checkpoint() == run.checkpoint_path(1)
    assert (reopened.latest_checkpoint() / "state.txt").read_text() == "one"
    assert not any(p.name.startswith(".tmp") for p in run.checkpoints_dir.iterdir())


def test_metrics_log_and_truncate_for_resume(tmp_path: Path):
    run = RunDir(tmp_path / "run")
    run.log_metrics({"kind": "eval", "label": "before", "success_rate": 0.25})
    for i in range(1, 5):
        run.log_metrics({"kind": "train", "iteration": i, "loss": float(i), "arr": np.float32(0.5)})
    assert run.truncate_metrics(2) == 2
    records = run.read_metrics()
    assert [r.get("iteration") for r in records] == [None, 1, 2]
    assert run.read_metrics("eval")[0]["success_rate"] == 0.25
    run.write_config({"tasks": ("a", "b"), "lr": 1e-5, "path": tmp_path})
    assert run.read_config() == {"tasks": ["a", "b"], "lr": 1e-5, "path": str(tmp_path)}


def _traj(n: int, tag: int) -> Trajectory:
    steps = [Step(ui=f"screen {tag}-{i}", action=Click(i, tag)) for i in range(n - 1)]
    steps.append(Step(ui=f"screen {tag}-end", action=Finished()))
    return Trajectory(task="T", instruction=f"task {tag}", steps=steps, success=float(tag % 2), seed=tag)


def test_replay_restore_brings_back_evicted_and_drops_newer_shards(tmp_path: Path):
    buf = ReplayBuffer(tmp_path / "replay", capacity=9)
    for tag in range(3):
        store(buf, _traj(3, tag))
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    state = snapshot_replay(buf, ckpt)
    expected = [(s.instruction, s.ui, s.return_t) for s in buf.states()]
    for tag in range(3, 6):  # evicts the three shards the checkpoint holds
        store(buf, _traj(3, tag))
    assert not set(state["shards"]) & set(p.name for p in (tmp_path / "replay").iterdir())
    restored_state = restore_replay(tmp_path / "replay", ckpt)
    again = ReplayBuffer(tmp_path / "replay", capacity=9)
    again.load_state_dict(restored_state)
    assert [(s.instruction, s.ui, s.return_t) for s in again.states()] == expected
    # the numbering continues where the checkpoint left it, so the next shard sorts last
    store(again, _traj(2, 9))
    assert again.trajectory_ids()[-1].startswith(f"{state['next_seq']:010d}-")


# -- the loop's own logic (no training) ---------------------------------------------------------------------

_quiet_trl = pytest.mark.filterwarnings("ignore:`gradient_checkpointing` is deprecated:FutureWarning")


@_quiet_trl
def test_rollout_plan_is_a_function_of_the_iteration(tmp_path: Path):
    from coach_reward.tiny_models import build_tiny_causal_lm
    from coach_rl.algorithms import build_algorithm
    from coach_rl.configs import load_config
    from coach_rl.loop import TrainingLoop

    cfg = load_config("smoke", [f"output_dir={tmp_path / 'a'}", "tasks=A,B,C", "rollout_batch_size=4"])
    loop = TrainingLoop(cfg, progress=False)
    loop.algorithm = build_algorithm("coach", cfg, *build_tiny_causal_lm(seed=0))
    seeds, options = loop.rollout_plan(2)
    assert seeds == [4, 5, 6, 7]
    assert [o["task"] for o in options] == ["B", "C", "A", "B"]  # round-robin continues across iterations
    assert loop.rollout_plan(2) == (seeds, options)
    grpo = TrainingLoop(load_config("smoke", [f"output_dir={tmp_path / 'b'}", "algorithm=grpo", "tasks=A,B",
                                              "rollout_batch_size=4", "num_generations=2"]), progress=False)
    grpo.algorithm = build_algorithm("grpo", grpo.config, *build_tiny_causal_lm(seed=0))
    assert grpo.algorithm.episodes_per_instance == 2
    seeds, options = grpo.rollout_plan(1)
    assert seeds == [0, 0, 1, 1] and [o["task"] for o in options] == ["A", "A", "B", "B"]  # G=2 per instance


@_quiet_trl
def test_resume_refuses_a_different_configuration(tmp_path: Path):
    from coach_rl.configs import load_config
    from coach_rl.loop import TrainingLoop

    run = RunDir(tmp_path / "run")
    run.write_config(load_config("smoke", [f"output_dir={run.path}", "seed=1"]).to_dict())
    with run.checkpoint(0) as d:
        (d / "loop_state.pt").write_bytes(b"")
    loop = TrainingLoop(load_config("smoke", [f"output_dir={run.path}", "seed=2"]), progress=False)
    with pytest.raises(ValueError, match="different configuration.*seed: 1 -> 2"):
        loop.setup()


@_quiet_trl
def test_a_run_saved_before_per_algorithm_configs_is_the_same_configuration(tmp_path: Path):
    """Runs used to write Coach's critic keys into every config.yaml, whatever the algorithm: such a GRPO run is
    still the same configuration as its command gives now (they are dropped), and another seed still is not."""
    from coach_rl import checkpoints
    from coach_rl.configs import load_config

    run = RunDir(tmp_path / "run")
    now = load_config("main-grpo", [f"output_dir={run.path}"])
    coach = load_config("main", [f"output_dir={run.path}"]).to_dict()
    critic = {k: v for k, v in coach.items() if k not in now.to_dict()}
    assert {"critic_learning_rate", "coach_advantage", "critic_pretrain_steps"} <= set(critic)
    run.write_config({**now.to_dict(), **critic})  # what the older runs wrote
    checkpoints.check_resume_config(run, now)
    with pytest.raises(ValueError, match="different configuration.*seed: 0 -> 3"):
        checkpoints.check_resume_config(run, load_config("main-grpo", [f"output_dir={run.path}", "seed=3"]))


# What runs wrote for the keys LoopArguments held before they moved to the configs of coach and coach_sssa (the
# smoke config's values): every config.yaml had them, whatever its algorithm.
_OLD_LOOP_KEYS = {"critic_pretrain_samples": 4, "critic_pretrain_contrast": 2, "critic_pretrain_screen_negatives": False,
                  "critic_pretrain_rollouts": 0, "critic_pretrain_labels": "match", "actor_states_per_iteration": 4}


@_quiet_trl
@pytest.mark.parametrize("algorithm", ["coach", "coach_sssa", "grpo", "ppo"])
def test_a_run_saved_while_the_loop_held_the_critic_data_and_actor_state_keys_resumes(tmp_path: Path, algorithm):
    """critic_pretrain_samples/_contrast/_screen_negatives/_rollouts/_labels and actor_states_per_iteration were
    LoopArguments fields; a run folder written then resumes: coach and coach_sssa read them from their own config
    now (a changed value is still a different configuration), the other algorithms drop them."""
    from coach_rl import checkpoints
    from coach_rl.configs import load_config

    run = RunDir(tmp_path / "run")
    now = load_config("smoke", [f"algorithm={algorithm}", f"output_dir={run.path}"])
    owns = algorithm in ("coach", "coach_sssa")
    assert (set(_OLD_LOOP_KEYS) <= set(now.to_dict())) is owns
    run.write_config({**now.to_dict(), **_OLD_LOOP_KEYS})
    checkpoints.check_resume_config(run, now)
    saved = load_config(run.read_config(), drop_unowned=True)
    assert (set(_OLD_LOOP_KEYS) & set(saved.dropped)) == (set() if owns else set(_OLD_LOOP_KEYS))
    if owns:
        run.write_config({**now.to_dict(), **_OLD_LOOP_KEYS, "actor_states_per_iteration": 8})
        with pytest.raises(ValueError, match="different configuration.*actor_states_per_iteration: 8 -> 4"):
            checkpoints.check_resume_config(run, now)


@_quiet_trl
def test_critic_pretrain_examples_label_by_expert_action_match(tmp_path: Path):
    from coach_rl.components import build_policy_model, make_policy
    from coach_rl.configs import load_config
    from coach_rl.loop import TrainingLoop
    from coach_rl.warmup import collect_run_demos

    cfg = load_config("smoke", [f"output_dir={tmp_path}", "tasks=OpenAppTaskEval", "sft_instances_per_task=2",
                                "critic_pretrain_samples=3"])
    loop = TrainingLoop(cfg, progress=False)
    demos = collect_run_demos(cfg, loop.tasks)
    loop.model, loop.tokenizer = build_policy_model(cfg, demos)
    loop.policy = make_policy(loop.model, loop.tokenizer, cfg)
    torch.manual_seed(0)
    examples = loop.critic_pretrain_examples(demos)
    states = {loop.policy.prompt_text_for(r.request) for r in demos.records}
    assert {s for s, _, _ in examples} == states  # the policy's own prompts: what the critic scores online
    positives = [(s, a) for s, a, y in examples if y == 1]
    assert {(loop.policy.prompt_text_for(r.request), r.answer) for r in demos.records} <= set(positives)
    for state, answer, label in examples:  # every label agrees with parsing the answer against the expert's
        record = next(r for r in demos.records if loop.policy.prompt_text_for(r.request) == state)
        _, action = loop.policy.format.parse(answer, record.request)
        assert label == int(action == record.action)
    assert len(examples) > len(demos.records)  # an untrained policy's samples are (mostly wrong) negatives


@_quiet_trl
def test_critic_pretrain_screen_negatives_add_other_goals_answers_on_shared_screens(tmp_path: Path):
    from coach_rl.components import build_policy_model, make_policy
    from coach_rl.configs import load_config
    from coach_rl.loop import TrainingLoop
    from coach_rl.prompting import screen_index_target
    from coach_rl.warmup import collect_run_demos

    examples = {}
    for flag in (False, True):
        cfg = load_config("smoke", [f"output_dir={tmp_path}", "tasks=[SystemWifiTurnOff,SystemBluetoothTurnOff]",
                                    "sft_instances_per_task=1", "critic_pretrain_samples=0",
                                    "critic_pretrain_contrast=0", f"critic_pretrain_screen_negatives={flag}"])
        loop = TrainingLoop(cfg, progress=False)
        demos = collect_run_demos(cfg, loop.tasks)
        loop.model, loop.tokenizer = build_policy_model(cfg, demos)
        loop.policy = make_policy(loop.model, loop.tokenizer, cfg)
        examples[flag] = loop.critic_pretrain_examples(demos)
    assert all(label == 1 for _, _, label in examples[False])  # only the expert's answers without the option
    extra = [e for e in examples[True] if e not in examples[False]]
    assert extra and all(label == 0 for _, _, label in extra)  # the other task's choices are wrong here
    # on the Settings page each task's answer is offered to the other, aimed at the same row
    named = {(s.split("## Task\n")[1].split("\n")[0], screen_index_target(s, a)) for s, a, _ in extra}
    wifi = {t for g, t in named if g.startswith("Turn wifi")}
    bluetooth = {t for g, t in named if g.startswith("Turn bluetooth")}
    assert any(t and "Connected devices" in t for t in wifi)
    assert any(t and "Network & internet" in t for t in bluetooth)


@_quiet_trl
def test_critic_pretrain_rollouts_label_the_policys_own_states_by_the_sim_expert(tmp_path: Path):
    from coach_rl.configs import load_config
    from coach_rl.loop import TrainingLoop

    cfg = load_config("smoke", [f"output_dir={tmp_path}", "tasks=[SystemWifiTurnOff,OpenAppTaskEval]",
                                "sft_instances_per_task=1", "critic_pretrain_samples=2", "critic_pretrain_steps=2",
                                "critic_pretrain_rollouts=1", "eval_instances_per_task=0", "max_turns=3",
                                "max_episode_steps=3"])
    loop = TrainingLoop(cfg, progress=False)
    loop.setup()
    assert loop.stats["critic_pretrain_rollout_examples"] > 0  # the warm-up used them
    examples = loop.rollout_state_examples(1)
    assert {y for _, _, y in examples} <= {0, 1} and any(y == 1 for _, _, y in examples)
    states = {s for s, _, _ in examples}
    assert all(s.startswith("<|im_start|>") and "## Screen" in s for s in states)  # the policy's own prompts
    # the positives are the expert's answers: at each state, exactly the replies the oracle reads as its action
    by_state: dict[str, list[tuple[str, int]]] = {}
    for state, reply, label in examples:
        by_state.setdefault(state, []).append((reply, label))
    assert all(any(label == 1 for _, label in rows) for rows in by_state.values())
    loop.close()


@_quiet_trl
@pytest.mark.slow
@pytest.mark.parametrize("algorithm", ["grpo", "ppo"])
def test_baselines_train_checkpoint_and_resume_exactly(tmp_path: Path, algorithm: str):
    from coach_rl.configs import load_config
    from coach_rl.loop import TrainingLoop

    def config(out: Path):
        return load_config("smoke", [f"output_dir={out}", f"algorithm={algorithm}", "total_iterations=2",
                                     "eval_instances_per_task=0", "num_generations=2", "sft_max_steps=2"])

    def clean(record: dict) -> dict:
        return {k: v for k, v in record.items()
                if not (k.startswith(("time/", "cpu/")) or k == "wall_time" or "seconds" in k)}

    full = TrainingLoop(config(tmp_path / "full"), progress=False)
    full.setup()
    first = full.run_iteration()
    second = full.run_iteration()
    full.close()
    assert first["rollout/episodes"] == 4 and first["actor/steps"] >= 1
    if algorithm == "grpo":
        assert first["grpo/groups"] == 2  # 4 episodes = 2 task instances x G=2
    else:
        assert "value/loss" in first and "ppo/advantage_mean" in first

    part = TrainingLoop(config(tmp_path / "part"), progress=False)
    part.setup()
    assert clean(part.run_iteration()) == clean(first)
    part.close()
    resumed = TrainingLoop(config(tmp_path / "part"), progress=False)
    resumed.setup()  # from the checkpoint of iteration 1
    assert resumed.resumed_from == 1
    assert clean(resumed.run_iteration()) == clean(second)
    resumed.close()


@_quiet_trl
def test_critic_pretrain_examples_can_be_labelled_by_the_prm(tmp_path: Path):
    """critic_pretrain_labels=prm: the PRM judges every candidate (paper Appendix B); the expert's answer stays 1."""
    from coach_reward.prm import ProcessRewardModel
    from coach_reward.tiny_models import build_tiny_causal_lm, scripted_backend
    from coach_rl.components import build_policy_model, make_policy
    from coach_rl.configs import load_config
    from coach_rl.critic_data import critic_pretrain_examples
    from coach_rl.loop import TrainingLoop
    from coach_rl.warmup import collect_run_demos

    cfg = load_config("smoke", [f"output_dir={tmp_path}", "tasks=OpenAppTaskEval", "sft_instances_per_task=1",
                                "critic_pretrain_samples=2"])
    loop = TrainingLoop(cfg, progress=False)
    demos = collect_run_demos(cfg, loop.tasks)
    model, tok = build_policy_model(cfg, demos)
    policy = make_policy(model, tok, cfg)
    judge_model, judge_tok = build_tiny_causal_lm(seed=3)
    for verdict, label in (("True", 1), ("False", 0)):
        prm = ProcessRewardModel(scripted_backend(judge_model, judge_tok, f"judgment: {verdict}"), use_logprobs=False)
        torch.manual_seed(0)
        examples = critic_pretrain_examples(policy, demos, samples=2, contrast=1, labels="prm", prm=prm)
        experts = {(policy.prompt_text_for(r.request), r.answer) for r in demos.records}
        judged = [y for s, a, y in examples if (s, a) not in experts]
        assert judged and set(judged) == {label}
        assert all(y == 1 for s, a, y in examples if (s, a) in experts)
    with pytest.raises(ValueError, match="needs the run's process reward model"):
        critic_pretrain_examples(policy, demos, labels="prm", prm=None)


def test_the_rollout_plan_follows_the_algorithms_curriculum(tmp_path: Path):
    """DGRPO's Failure Curriculum Filtering decides which tasks are played (a removed task never is)."""
    from coach_reward.tiny_models import build_tiny_causal_lm
    from coach_rl.algorithms import build_algorithm
    from coach_rl.configs import load_config
    from coach_rl.loop import TrainingLoop

    cfg = load_config("smoke", [f"output_dir={tmp_path}", "tasks=A,B,C", "rollout_batch_size=12", "algorithm=dgrpo",
                                "dgrpo_group_size=2"])
    loop = TrainingLoop(cfg, progress=False)
    loop.algorithm = build_algorithm("dgrpo", cfg, *build_tiny_causal_lm(seed=0))
    assert loop._task_weights() is None  # nothing failed yet: round-robin
    assert [o["task"] for o in loop.rollout_plan(1)[1]][::2] == ["A", "B", "C", "A", "B", "C"]
    curriculum = loop.algorithm.curriculum
    for _ in range(12):  # task A never succeeds, epoch after epoch, until the curriculum removes it
        curriculum.observe("A", [0.0, 0.0])
        curriculum.observe("B", [1.0, 0.0])
        curriculum.observe("C", [1.0, 1.0])
        curriculum.end_epoch()
    assert curriculum.weight("A") == 0.0
    seeds, options = loop.rollout_plan(3)
    tasks = [o["task"] for o in options]
    assert "A" not in tasks and set(tasks) <= {"B", "C"} and len(tasks) == 12
    assert loop.rollout_plan(3) == (seeds, options)  # a function of the iteration: resume-safe


def test_a_run_killed_between_its_greedy_and_sampled_evaluation_after_does_both_again(tmp_path: Path):
    """The evaluation after writes eval_after.json, then eval_after_sampled.json; a kill in between left the resumed
    run with the greedy one alone (a sweep then had no validation score to read)."""
    from coach_rl.loop import train

    overrides = [f"output_dir={tmp_path}", "total_iterations=1", "sft_max_steps=2", "eval_samples_per_instance=1"]
    first = train("smoke", overrides, progress=False)
    sampled = tmp_path / "eval_after_sampled.json"
    assert sampled.is_file() and first.eval_after is not None
    sampled.unlink()  # what a kill right after the greedy evaluation leaves
    again = train("smoke", overrides, progress=False)
    assert again.resumed_from == 1 and sampled.is_file()
    assert json.loads(sampled.read_text())["overall"]["episodes"] == 2


@_quiet_trl
def test_coach_execute_best_of_plays_the_critics_pick_while_training_never_in_evaluation(tmp_path: Path):
    from coach_rl.configs import load_config
    from coach_rl.loop import TrainingLoop

    cfg = load_config("smoke", [f"output_dir={tmp_path}", "tasks=[SystemWifiTurnOff,OpenAppTaskEval]",
                                "coach_execute_best_of=3", "total_iterations=1", "max_turns=3", "max_episode_steps=3"])
    loop = TrainingLoop(cfg, progress=False)
    loop.setup()
    assert loop.algorithm.reply_chooser.samples == 3 and loop.algorithm.reply_chooser.critic is loop.critic
    record = loop.run_iteration()
    loop.close()
    assert record["rollout/choice_replies"] == 2 * record["rollout/steps"]
    assert 0.0 <= record["rollout/chose_other_rate"] <= 1.0
    assert not any(k.startswith("eval") and "choice" in k for k in record)
    with pytest.raises(KeyError, match="coach_execute_best_of"):  # Coach's own: coach_sssa trains on what it executed
        load_config("smoke", ["algorithm=coach_sssa", "coach_execute_best_of=3"])
    with pytest.raises(ValueError, match="coach_execute_best_of"):
        load_config("smoke", ["coach_execute_best_of=0"])
    with pytest.raises(ValueError, match="collector=ray"):
        load_config("smoke", ["coach_execute_best_of=2", "collector=ray"])


@_quiet_trl
def test_a_moved_run_folder_resumes_where_it_stopped(tmp_path: Path):
    """A run folder copied elsewhere (another disk) resumes there: its own path and the replay buffer inside it moved
    with it. A replay buffer outside the folder that changes is still a different configuration."""
    import shutil

    from coach_rl import checkpoints
    from coach_rl.configs import load_config
    from coach_rl.loop import TrainingLoop

    def config(out: Path, *more: str):
        return load_config("smoke", [f"output_dir={out}", "total_iterations=2", "eval_instances_per_task=0", *more])

    def clean(record: dict) -> dict:
        return {k: v for k, v in record.items()
                if not (k.startswith(("time/", "cpu/")) or k == "wall_time" or "seconds" in k or k == "actor/step_time")}

    full = TrainingLoop(config(tmp_path / "full"), progress=False)
    full.setup()
    full.run_iteration()
    second = full.run_iteration()
    full.close()
    first = TrainingLoop(config(tmp_path / "a"), progress=False)
    first.setup()
    first.run_iteration()
    first.close()
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    moved = TrainingLoop(config(tmp_path / "b"), progress=False)
    moved.setup()
    assert moved.resumed_from == 1
    assert clean(moved.run_iteration()) == clean(second)
    moved.close()
    run = RunDir(tmp_path / "b")
    with pytest.raises(ValueError, match="different configuration.*replay_dir"):
        checkpoints.check_resume_config(run, config(tmp_path / "b", f"replay_dir={tmp_path / 'elsewhere'}"))
