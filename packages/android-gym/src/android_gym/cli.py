"""``android-gym``: list tasks, play a task with the expert or a random agent, record the episode, serve a simulated adbd."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def _cmd_tasks(args: argparse.Namespace) -> int:
    from android_gym.tasks import get_task_class, list_tasks

    names = list_tasks(args.suite)
    if args.json:
        rows = []
        for name in names:
            cls = get_task_class(name)
            rows.append({"name": name, "difficulty": cls.difficulty, "apps": list(cls.app_names),
                         "answer_task": cls.answer_task, "template": cls.template})
        print(json.dumps(rows, indent=1))
    else:
        for name in names:
            cls = get_task_class(name)
            print(f"{name:45s} {cls.difficulty:7s} {', '.join(cls.app_names)}")
        print(f"{len(names)} tasks in suite {args.suite!r}", file=sys.stderr)
    return 0


def _save_recording(frames: list, path: Path, fps: float) -> None:
    from PIL import Image

    images = [Image.fromarray(f).resize((f.shape[1] // 3, f.shape[0] // 3)) for f in frames]
    if path.suffix.lower() == ".gif":
        images[0].save(path, save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0)
    else:
        path.mkdir(parents=True, exist_ok=True)
        for i, image in enumerate(images):
            image.save(path / f"frame_{i:03d}.png")


def _cmd_play(args: argparse.Namespace) -> int:
    import gymnasium as gym

    import android_gym  # noqa: F401  (registers the env ids)
    from android_gym.agents import RandomAgent

    record = args.record is not None
    env = gym.make(args.env, task=args.task, screenshot=record, render_mode="ansi")
    agent = RandomAgent(seed=args.seed)
    total_success = 0.0
    for episode in range(args.episodes):
        obs, info = env.reset(seed=args.seed + episode)
        frames = [obs["screenshot"]] if record else []
        print(f"episode {episode}: {info['task']}: {info['goal']}")
        done = False
        while not done:
            if args.agent == "expert":
                action = env.unwrapped.expert_action()
            else:
                action = agent.act(env.unwrapped._ui)
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
            if record:
                frames.append(obs["screenshot"])
            note = f" parse_error={info['parse_error']}" if "parse_error" in info else ""
            print(f"  step {info['step']:2d}: {json.dumps(info.get('action'))} reward={reward:+.2f}{note}")
        total_success += info["success"]
        status = "success" if info["success"] > 0 else ("truncated" if truncated else "failed")
        print(f"  -> {status} (score {info['success']:.2f}) in {info['step']} steps")
        if record:
            out = Path(args.record)
            if args.episodes > 1:
                out = out.with_name(f"{out.stem}_{episode}{out.suffix}")
            _save_recording(frames, out, fps=2)
            print(f"  recorded {len(frames)} frames to {out}")
    print(f"success rate: {total_success / args.episodes:.2f} over {args.episodes} episode(s)")
    env.close()
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="android-gym", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    tasks = sub.add_parser("tasks", help="list the tasks of a suite")
    tasks.add_argument("--suite", default="sim", help="sim, android_world or androidlab")
    tasks.add_argument("--json", action="store_true", help="print JSON with templates and difficulty")
    tasks.set_defaults(func=_cmd_tasks)

    play = sub.add_parser("play", help="play tasks with the expert or a random agent on the simulated phone")
    play.add_argument("task", nargs="?", default=None, help="task name (default: random tasks of the suite)")
    play.add_argument("--env", default="AndroidSim-v0", help="environment id")
    play.add_argument("--agent", choices=["expert", "random"], default="expert")
    play.add_argument("--episodes", type=int, default=1)
    play.add_argument("--seed", type=int, default=0)
    play.add_argument("--record", default=None, help="save screenshots as an animated .gif, or PNG frames into a folder")
    play.set_defaults(func=_cmd_play)

    from android_gym.adbd.cli import add_sim_adbd_parser

    add_sim_adbd_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (KeyError, ValueError, NotImplementedError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"android-gym: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
