"""The on-disk replay buffer: persistence, returns, eviction, sampling, datasets interop, crash safety, resume."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time

import datasets
import numpy as np
import pyarrow.parquet as pq
import pytest
from PIL import Image

from android_gym.actions import Click, Finished, Scroll, Type
from android_gym.trajectory import Step, Trajectory
from coach_rl.replay import REPLAY_COLUMNS, ReplayBuffer
from coach_rl.returns import coach_returns

from .stored import store


def make_trajectory(k: int, n: int = 3, *, shots: bool = True, success: float = 1.0) -> Trajectory:
    steps = []
    for i in range(n - 1):
        steps.append(Step(
            ui=f"[n{i}] Button ;click ; Item {k}.{i} ;;: bounds: [0,0][100,100]",
            action=Click(10 + i, 20 + k),
            response=f"Thought: tap item {i}\nAction: click(start_box='<|box_start|>({10 + i},{20 + k})<|box_end|>')",
            reward=0.0,
            screenshot=np.full((12, 8, 3), (k * 7 + i) % 256, dtype=np.uint8) if shots else None,
            xml=f"<hierarchy rotation='0'><node text='{k}.{i}'/></hierarchy>",
            info={"target": f"Button 'Item {k}.{i}'"},
        ))
    steps.append(Step(ui="done screen", action=Finished("answer"), response="Thought: done\nAction: finished(content='answer')",
                      parse_error=None))
    return Trajectory(task=f"task_{k % 3}", instruction=f"Do thing number {k}", steps=steps, success=success,
                      answer="answer", seed=k)


def test_add_persists_rows_with_returns_from_process_and_outcome_rewards(tmp_path):
    buf = ReplayBuffer(tmp_path, capacity=100)
    traj = make_trajectory(1, n=4, success=1.0)
    tid = store(buf, traj, policy_version=3, process_rewards=[0.0, 1.0, 0.0, 0.0])
    assert len(buf) == 4 and buf.num_trajectories == 1 and buf.trajectory_ids() == [tid]
    files = list(tmp_path.glob("*.parquet"))
    assert [f.name for f in files] == [f"{tid}.parquet"]
    table = pq.read_table(files[0])
    assert tuple(table.column_names) == REPLAY_COLUMNS
    rows = table.to_pylist()
    expected = coach_returns([0.0, 1.0, 0.0, 0.0], 1.0, w_p=0.2, w_o=1.0, gamma=0.95)
    assert [r["return_t"] for r in rows] == pytest.approx(expected)
    assert [r["process_reward"] for r in rows] == [0.0, 1.0, 0.0, 0.0]
    assert {r["outcome_reward"] for r in rows} == {1.0} and {r["policy_version"] for r in rows} == {3}
    assert rows[0]["action"] == '{"type": "click", "x": 10, "y": 21}'
    assert rows[0]["screenshot"]["bytes"].startswith(b"\x89PNG") and rows[3]["screenshot"] is None
    assert [r["step_index"] for r in rows] == [0, 1, 2, 3] and {r["num_steps"] for r in rows} == {4}


def test_records_are_stored_as_given_and_bad_input_is_refused(tmp_path):
    buf = ReplayBuffer(tmp_path)
    store(buf, make_trajectory(0, n=2), process_rewards=[1, float("nan")], outcome_reward=0.0)
    steps = list(buf.states())
    # the missing r_p (NaN) is stored as missing; the return filled it with the episode's mean scored r_p (1.0)
    assert steps[0].process_reward == 1.0 and np.isnan(steps[1].process_reward)
    assert [s.return_t for s in steps] == pytest.approx(coach_returns([1.0, 1.0], 0.0))
    assert steps[0].record().process_reward_missing is False and steps[1].record().process_reward_missing
    good = make_trajectory(0, n=2)
    records = [s.record() for s in steps]
    with pytest.raises(ValueError, match="one StepRecord per step"):
        buf.add(good, records[:1])
    with pytest.raises(ValueError, match="step order"):
        buf.add(good, records[::-1])
    with pytest.raises(ValueError, match="no steps"):
        buf.add(Trajectory(task="t", instruction="i"), [])
    with pytest.raises(TypeError, match="Trajectory"):
        buf.add({"task": "t"}, records)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"records\[0\] must be a coach_rl.records.StepRecord"):
        buf.add(good, [{"x": 1}, {"y": 2}])  # type: ignore[list-item]
    assert len(buf) == 2  # nothing half-added by the failed calls
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_round_trip_back_to_an_android_gym_trajectory(tmp_path):
    buf = ReplayBuffer(tmp_path)
    original = make_trajectory(5, n=3)
    original.steps[1].action = Type("hello", submit=True)
    original.steps[1].parse_error = "typed into nothing"
    tid = store(buf, original, policy_version=2)
    back = ReplayBuffer(tmp_path).load_trajectory(tid)
    records = ReplayBuffer(tmp_path).load_records(tid)
    assert (back.task, back.instruction, back.success, back.answer, back.seed) == (
        original.task, original.instruction, original.success, original.answer, original.seed)
    for a, b in zip(original.steps, back.steps):
        assert (a.ui, a.action, a.response, a.reward, a.xml, a.parse_error) == (
            b.ui, b.action, b.response, b.reward, b.xml, b.parse_error)
        if a.screenshot is None:
            assert b.screenshot is None
        else:
            assert np.array_equal(a.screenshot, b.screenshot)
        assert b.info == a.info  # the step's own annotations, no training fields
    assert [r.step_index for r in records] == [0, 1, 2] and {r.policy_version for r in records} == {2}
    assert [r.response for r in records] == [s.response for s in original.steps]
    with pytest.raises(KeyError):
        buf.load_trajectory("nope")
    with pytest.raises(KeyError):
        buf.load_records("nope")


def test_capacity_evicts_whole_oldest_trajectories(tmp_path):
    buf = ReplayBuffer(tmp_path, capacity=10)
    ids = [store(buf, make_trajectory(k, n=3)) for k in range(5)]
    assert len(buf) == 9 and buf.trajectory_ids() == ids[2:]
    assert sorted(p.name for p in tmp_path.glob("*.parquet")) == [f"{i}.parquet" for i in ids[2:]]
    assert [s.instruction for s in buf.states()][::3] == ["Do thing number 2", "Do thing number 3", "Do thing number 4"]
    with pytest.raises(ValueError, match="capacity"):
        store(buf, make_trajectory(9, n=11))
    # A smaller capacity on reopening trims the folder too.
    small = ReplayBuffer(tmp_path, capacity=4)
    assert small.trajectory_ids() == ids[4:] and len(small) == 3


def test_sample_steps_is_seeded_uniform_and_carries_history(tmp_path):
    buf = ReplayBuffer(tmp_path)
    for k in range(6):
        store(buf, make_trajectory(k, n=4))
    a = buf.sample_steps(10, np.random.default_rng(0))
    b = buf.sample_steps(10, 0)
    assert [(s.trajectory_id, s.step_index) for s in a] == [(s.trajectory_id, s.step_index) for s in b]
    keys = [(s.trajectory_id, s.step_index) for s in buf.sample_steps(24, random.Random(1))]
    assert len(set(keys)) == 24  # without replacement: every step once
    with pytest.raises(ValueError, match="distinct"):
        buf.sample_steps(25, 0)
    assert len(buf.sample_steps(40, 0, replace=True)) == 40
    step = next(s for s in a if s.step_index == 2)
    assert step.history == [("tap item 0", f"click(start_box='<|box_start|>(10,{20 + int(step.instruction.split()[-1])})"
                                           "<|box_end|>')"),
                            ("tap item 1", f"click(start_box='<|box_start|>(11,{20 + int(step.instruction.split()[-1])})"
                                           "<|box_end|>')")]
    assert step.screenshot is not None and step.screenshot_array().shape == (12, 8, 3)
    assert buf.sample_steps(3, 0, with_screenshots=False)[0].screenshot is None
    with_xml = buf.sample_steps(len(buf), 0, with_xml=True)
    assert all((s.xml is None) == (s.step_index == 3) for s in with_xml)
    assert all(s.xml.startswith("<hierarchy") for s in with_xml if s.xml is not None)
    assert all(s.xml is None for s in a)  # heavy columns only on request


def test_states_iterates_every_step_in_order(tmp_path):
    buf = ReplayBuffer(tmp_path)
    for k in range(3):
        store(buf, make_trajectory(k, n=2))
    states = list(buf.states())
    assert [(s.instruction, s.step_index) for s in states] == [
        (f"Do thing number {k}", i) for k in range(3) for i in range(2)]
    assert states[0].history == [] and len(states[1].history) == 1
    assert isinstance(states[0].action, Click) and isinstance(states[1].action, Finished)


def test_reopening_continues_the_buffer(tmp_path):
    first = ReplayBuffer(tmp_path)
    ids = [store(first, make_trajectory(k)) for k in range(3)]
    again = ReplayBuffer(tmp_path)
    assert again.trajectory_ids() == ids and len(again) == 9
    new = store(again, make_trajectory(7))
    assert new > ids[-1]  # ids sort in insertion order
    assert again.trajectory_ids() == ids + [new]


def test_external_user_opens_the_folder_with_datasets(tmp_path):
    buf = ReplayBuffer(tmp_path / "replay")
    for k in range(3):
        store(buf, make_trajectory(k, n=3), policy_version=k)
    cache = tmp_path / "hf_cache"
    by_files = datasets.load_dataset("parquet", data_files=buf.data_files(), split="train", cache_dir=str(cache))
    by_dir = datasets.load_dataset("parquet", data_dir=str(tmp_path / "replay"), split="train", cache_dir=str(cache))
    for ds in (by_files, by_dir):
        assert ds.num_rows == 9
        assert isinstance(ds.features["screenshot"], datasets.Image)
        image = ds[0]["screenshot"]
        assert isinstance(image, Image.Image) and image.size == (8, 12)
        assert ds[2]["screenshot"] is None
        assert sorted(set(ds["policy_version"])) == [0, 1, 2]
    ours = buf.to_dataset()
    assert ours.num_rows == 9 and isinstance(ours.features["screenshot"], datasets.Image)
    assert ours["return_t"] == pytest.approx(by_files["return_t"])
    raw = ours.cast_column("screenshot", datasets.Image(decode=False))[0]["screenshot"]
    assert raw["bytes"].startswith(b"\x89PNG")
    light = buf.to_dataset(with_screenshots=False)
    assert "screenshot" not in light.column_names and light.num_rows == 9
    assert ReplayBuffer(tmp_path / "empty").to_dataset().num_rows == 0


def test_leftover_temp_files_are_removed_and_corrupt_shards_set_aside(tmp_path):
    buf = ReplayBuffer(tmp_path)
    ids = [store(buf, make_trajectory(k)) for k in range(2)]
    (tmp_path / ".tmp-deadbeef0000-123").write_bytes(b"PAR1 torn write")
    (tmp_path / "0000000099-abcdefabcdef.parquet").write_bytes(b"not parquet at all")
    with pytest.warns(UserWarning, match="unreadable"):
        reopened = ReplayBuffer(tmp_path)
    assert reopened.trajectory_ids() == ids
    names = sorted(p.name for p in tmp_path.iterdir())
    assert ".tmp-deadbeef0000-123" not in names
    assert ".corrupt-0000000099-abcdefabcdef.parquet" in names


def test_read_only_reads_another_runs_buffer_without_touching_it(tmp_path):
    """A live writer's temp file, a shard past the capacity, an unreadable shard: a read-only open keeps them all."""
    buf = ReplayBuffer(tmp_path, capacity=100)
    ids = [store(buf, make_trajectory(k)) for k in range(3)]
    (tmp_path / ".tmp-deadbeef0000-123").write_bytes(b"PAR1 a write in progress")
    (tmp_path / "0000000099-abcdefabcdef.parquet").write_bytes(b"not parquet at all")
    before = sorted(p.name for p in tmp_path.iterdir())
    with pytest.warns(UserWarning, match="skipped"):
        reader = ReplayBuffer(tmp_path, capacity=1, read_only=True)
    assert reader.trajectory_ids() == ids and len(list(reader.states())) == 9
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    with pytest.raises(PermissionError, match="read_only"):
        store(reader, make_trajectory(9))
    with pytest.raises(FileNotFoundError, match="no replay buffer"):
        ReplayBuffer(tmp_path / "missing", read_only=True)


def test_state_dict_resume_drops_rollouts_after_the_checkpoint(tmp_path):
    buf = ReplayBuffer(tmp_path, capacity=9)
    for k in range(3):
        store(buf, make_trajectory(k))
    checkpoint = buf.state_dict()
    assert checkpoint["num_steps"] == 9 and checkpoint["next_seq"] == 3
    late = [store(buf, make_trajectory(k)) for k in (10, 11)]  # evicts the two oldest of the checkpoint
    resumed = ReplayBuffer(tmp_path, capacity=9)
    report = resumed.load_state_dict(checkpoint)
    assert sorted(report.dropped) == sorted(f"{i}.parquet" for i in late)
    assert len(report.missing) == 2 and report.missing == checkpoint["shards"][:2]
    assert resumed.trajectory_ids() == [checkpoint["shards"][2].removesuffix(".parquet")]
    nxt = store(resumed, make_trajectory(12))
    assert nxt.startswith("0000000003-") and nxt not in late  # numbering as at the checkpoint; ids stay unique
    with pytest.raises(ValueError, match="state_dict"):
        resumed.load_state_dict({"format": "other"})


_WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, sys.argv[3])
    import numpy as np
    from stored import store
    from android_gym.actions import Click, Finished
    from android_gym.trajectory import Step, Trajectory
    from coach_rl.replay import ReplayBuffer

    buf = ReplayBuffer(sys.argv[1], capacity=10_000)
    rng = np.random.default_rng(int(sys.argv[2]))
    print("ready", len(buf), flush=True)
    k = 0
    while True:
        steps = [Step(ui=f"screen {i}", action=Click(i, i), response="Action: click(start_box='(1,1)')",
                      screenshot=rng.integers(0, 256, size=(300, 200, 3), dtype=np.uint8)) for i in range(4)]
        steps.append(Step(ui="end", action=Finished()))
        store(buf, Trajectory(task="crash", instruction=f"trajectory {k}", steps=steps, success=1.0))
        k += 1
        print("added", k, flush=True)
""")


def _start_writer(directory, seed: int) -> subprocess.Popen:
    here = os.path.dirname(os.path.abspath(__file__))
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(directory), str(seed), here],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("ready"):
        proc.kill()
        raise AssertionError(f"the writer did not start: {line!r} {proc.stderr.read() if proc.stderr else ''}")
    return proc


def _check_whole(directory) -> ReplayBuffer:
    """Reopen after a crash: every shard complete and readable, no temp file left, sampling works."""
    buf = ReplayBuffer(directory, capacity=10_000)
    assert len(buf) == 5 * buf.num_trajectories
    assert not [p for p in directory.iterdir() if p.name.startswith(".tmp-")]
    for path in buf.data_files():
        assert pq.read_table(path).num_rows == 5
    assert {s.num_steps for s in buf.sample_steps(len(buf), 0, with_screenshots=False)} <= {5}
    return buf


@pytest.mark.slow
def test_kill_minus_nine_while_adding_loses_at_most_the_trajectory_being_written(tmp_path):
    directory = tmp_path / "replay"
    directory.mkdir()

    # 1. Killed in the middle of a write: as soon as the writer's temp file appears.
    torn = []
    for seed in range(4):
        proc = _start_writer(directory, seed)
        before = len(list(directory.glob("*.parquet")))
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not any(p.name.startswith(".tmp-") for p in directory.iterdir()):
                pass
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        torn.append(any(p.name.startswith(".tmp-") for p in directory.iterdir()))
        buf = _check_whole(directory)
        assert buf.num_trajectories - before in (0, 1)  # the one in flight landed whole, or not at all
        if torn[-1]:
            break
    assert any(torn), "never caught the writer mid-write"  # the test really exercised a torn temp file

    # 2. Killed at a random moment after several adds: everything it reported is there.
    committed = _check_whole(directory).num_trajectories
    proc = _start_writer(directory, 10)
    try:
        reported = 0
        deadline = time.monotonic() + 60
        while reported < 3 and time.monotonic() < deadline:
            reported = int(proc.stdout.readline().split()[1])  # type: ignore[union-attr]
        time.sleep(random.Random(0).uniform(0.0, 0.05))
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    buf = _check_whole(directory)
    assert reported >= 3 and buf.num_trajectories - committed >= reported
    store(buf, make_trajectory(0))  # and the folder keeps working
    assert ReplayBuffer(directory, capacity=10_000).num_trajectories == buf.num_trajectories


def test_screenshot_inputs_are_checked(tmp_path):
    buf = ReplayBuffer(tmp_path)
    traj = make_trajectory(0, n=2)
    traj.steps[0].screenshot = np.zeros((4, 4, 3), dtype=np.float32)
    with pytest.raises(ValueError, match="uint8"):
        store(buf, traj)
    traj.steps[0].screenshot = b"GIF89a..."
    with pytest.raises(ValueError, match="PNG"):
        store(buf, traj)
    traj.steps[0].screenshot = Image.new("RGB", (3, 5))
    store(buf, traj)
    assert next(buf.states(with_screenshots=True)).screenshot_array().shape == (5, 3, 3)


def test_bad_construction_arguments(tmp_path):
    with pytest.raises(ValueError, match="capacity"):
        ReplayBuffer(tmp_path, capacity=0)
    with pytest.raises(TypeError, match="rng"):
        buf = ReplayBuffer(tmp_path)
        store(buf, make_trajectory(0))
        buf.sample_steps(1, "seed")


def test_scroll_and_none_actions_survive(tmp_path):
    buf = ReplayBuffer(tmp_path)
    traj = make_trajectory(0, n=3)
    traj.steps[0].action = Scroll("down")
    traj.steps[1].action = None
    traj.steps[1].parse_error = "no action found"
    store(buf, traj)
    steps = list(buf.states())
    assert steps[0].action == Scroll("down") and steps[1].action is None
    assert steps[1].parse_error == "no action found"
    assert steps[2].history[1][1].startswith("click(")  # the raw reply is what the policy said


def test_a_stored_state_rebuilds_its_policy_prompt(tmp_path):
    buf = ReplayBuffer(tmp_path)
    store(buf, make_trajectory(4, n=3))
    step = list(buf.states(with_screenshots=True))[1]
    text = step.policy_messages()[0]["content"]
    assert "Do thing number 4" in text and step.ui in text
    assert "Step 1\nThought: tap item 0\nAction: click(start_box='<|box_start|>(10,24)<|box_end|>')" in text
    parts = step.policy_messages(mode="both")[0]["content"]
    images = [p for p in parts if p["type"] == "image"]
    assert len(images) == 1 and images[0]["image"].size == (8, 12)
