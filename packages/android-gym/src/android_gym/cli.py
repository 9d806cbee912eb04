"""``android-gym``: list tasks, play a task with the expert or a random agent, record the episode, look at recorded
episodes, serve a simulated adbd."""

from __future__ import annotations

import argparse
import json
import sys
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def _cmd_tasks(args: argparse.Namespace) -> int:
    from android_gym.tasks import get_task_class, list_tasks, unavailable_tasks

    names = list_tasks(args.suite, include_unavailable=True)
    cannot = unavailable_tasks(args.suite)  # listed too, each with why it cannot be set up here
    if args.json:
        rows = []
        for name in names:
            cls = get_task_class(name)
            rows.append({"name": name, "difficulty": cls.difficulty, "apps": list(cls.app_names),
                         "answer_task": cls.answer_task, "template": cls.template,
                         "unavailable": cannot.get(name)})
        print(json.dumps(rows, indent=1))
    else:
        for name in names:
            cls = get_task_class(name)
            note = f"  (unavailable here: {cannot[name]})" if name in cannot else ""
            print(f"{name:45s} {cls.difficulty:7s} {', '.join(cls.app_names)}{note}")
        extra = f"; {len(cannot)} cannot be set up on this machine (said beside each)" if cannot else ""
        print(f"{len(names)} tasks in suite {args.suite!r}{extra}", file=sys.stderr)
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


_TRAJECTORY_SUFFIXES = (".json", ".json.gz")


def _split_suffix(name: str) -> tuple[str, str]:
    """``name`` without and with its (double, for ``.json.gz``) suffix."""
    for suffix in (".json.gz", ".gif", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)], suffix
    return name, ""


def _cmd_view(args: argparse.Namespace) -> int:
    from android_gym.viewer import default_page_path, load_episodes, render_html, serve_view

    src = Path(args.path)
    episodes = load_episodes(src, max_episodes=args.max_episodes or None, image_width=args.image_width or None)
    page = render_html(episodes, title=args.title or f"episodes: {src.resolve().name}")
    if not args.serve:
        out = Path(args.out) if args.out else default_page_path(src)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(page, encoding="utf-8")
        print(f"wrote {out} ({len(episodes)} episode(s), {sum(len(e.steps) for e in episodes)} steps)")
        return 0
    server = serve_view(page, port=args.port)
    print(f"serving {len(episodes)} episode(s) at {server.url} (Ctrl-C stops)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


def _cmd_replay(args: argparse.Namespace) -> int:
    """Replay each file's episodes; a file that is not an episode file is reported (name and why) and skipped.

    Exit 0 when at least one episode was replayed, 1 when none was (android_world missing, no file readable, or
    no episode replayable), 2 for a bad command line.
    """
    from android_gym.replay import replay_episodes
    from android_gym.suites.android_world import ANDROID_WORLD_INSTALL_HINT, android_world_available

    if not android_world_available():
        print("android-gym replay: sets each task up with AndroidWorld's own task classes; "
              + ANDROID_WORLD_INSTALL_HINT.split(" Then start an emulator")[0], file=sys.stderr)
        return 1
    summary = replay_episodes(args.episodes, args.out, image_width=args.image_width or None,
                              resync=not args.no_resync)
    for bad in summary["unreadable_files"]:
        print(f"skipped {bad['source']}: {bad['reason']}", file=sys.stderr)

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{100 * value:.0f}%"

    for result in summary["episodes"]:
        if not result.get("replayed"):
            print(f"{result['task']}: not replayed ({result['source']}): {result['reason']}")
            continue
        print(f"{result['task']}: {result['steps_replayed']} steps; elements {pct(result['element_agreement'])} "
              f"(multiset {pct(result['element_multiset_agreement'])}, labels {pct(result['label_agreement'])}, "
              f"without the status bar {pct(result['screen_agreement'])}), "
              f"actions {pct(result['action_agreement'])}, real success {result['real_success']} vs sim "
              f"{result['sim_success']}, first divergence at step {result['first_divergence']}; {result['page']}")
        if "per_screen" in result:
            screen = result["per_screen"]
            print(f"  re-synchronised: per screen {pct(screen['in_order'])} in order (multiset "
                  f"{pct(screen['multiset'])}), sim counterpart on {pct(screen['counterpart'])} of the real screens; "
                  f"path parts at step {result['first_path_divergence']} ({result['first_path_divergence_reason']}), "
                  f"{len(result['path_divergences'])} time(s)")
    if "per_screen" in summary:
        print("per screen, re-synchronised (steps; elements in order, as a multiset; real screens with a sim "
              "counterpart; in order and as a multiset on those):")

        def line(name: str, screen: Mapping[str, Any]) -> str:
            return (f"  {name}: {screen['steps']} steps; {pct(screen['in_order'])}, {pct(screen['multiset'])}; "
                    f"{pct(screen['counterpart'])}; {pct(screen['in_order_with_counterpart'])}, "
                    f"{pct(screen['multiset_with_counterpart'])}")

        for group in ("per_app", "per_screen_type"):
            for name, screen in summary["per_screen"][group].items():
                print(line(f"{group[4:].replace('_', ' ')} {name}", screen))
        screen, path = summary["per_screen"]["overall"], summary["path_divergence"]
        print(line("overall", screen))
        print(f"path divergence: median {path['median_steps_before_first_divergence']} step(s) before the first "
              f"(episodes without one count their length; the first where there is one: median step "
              f"{path['median_first_divergence']}; the sim's expert: median {path['median_expert_steps']} steps for "
              "the same task instances); "
              f"{path['episodes_without_divergence']} episode(s) without one; "
              f"{path['divergences']} in all, by reason "
              + (", ".join(f"{k} {v}" for k, v in path["reasons"].items()) or "none"))
    overall = summary["overall"]
    print(f"overall: {overall['replayed']} of {overall['episodes']} episode(s) replayed; elements "
          f"{pct(overall['element_agreement'])} (multiset {pct(overall['element_multiset_agreement'])}, without "
          f"the status bar {pct(overall['screen_agreement'])}), actions {pct(overall['action_agreement'])}, outcomes "
          f"{pct(overall['outcome_agreement'])}; summary in {Path(args.out) / 'summary.json'}"
          + (f"; {len(summary['unreadable_files'])} file(s) skipped as not episode files"
             if summary["unreadable_files"] else ""))
    if overall["replayed"] == 0:
        print("android-gym replay: no episode could be replayed", file=sys.stderr)
        return 1
    return 0


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
                steps = env.unwrapped.trajectory.steps
                if steps:  # the env records what was seen and done; the reward is known only now
                    steps[-1].reward = float(reward)
            note = f" parse_error={info['parse_error']}" if "parse_error" in info else ""
            print(f"  step {info['step']:2d}: {json.dumps(info.get('action'))} reward={reward:+.2f}{note}")
        total_success += info["success"]
        status = "success" if info["success"] > 0 else ("truncated" if truncated else "failed")
        print(f"  -> {status} (score {info['success']:.2f}) in {info['step']} steps")
        if record:
            out = Path(args.record)
            if args.episodes > 1:
                stem, suffix = _split_suffix(out.name)
                out = out.with_name(f"{stem}_{episode}{suffix}")
            if out.name.endswith(_TRAJECTORY_SUFFIXES):
                trajectory = env.unwrapped.trajectory
                trajectory.info["final_screenshot"] = obs["screenshot"]
                trajectory.info["final_ui"] = obs["ui"]
                trajectory.save(out)
                print(f"  recorded the episode ({len(trajectory.steps)} steps) to {out}; "
                      f"look at it with: android-gym view {out}")
            else:
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
    play.add_argument("--record", default=None,
                      help="save the episode: a .json or .json.gz name keeps the whole trajectory (screenshots, UI, "
                           "actions; `android-gym view` shows it), a .gif name an animation, anything else PNG frames "
                           "in that folder")
    play.set_defaults(func=_cmd_play)

    view = sub.add_parser("view", help="one HTML page for recorded episodes (trajectory files, coach-rl replay "
                                       "buffers or run folders)")
    view.add_argument("path", help="a trajectory file (.json/.json.gz), a folder of them, a coach-rl replay "
                                   "buffer folder or shard, or a coach-rl run folder")
    view.add_argument("-o", "--out", default=None,
                      help="the page to write (default: <file>.html beside a file, <folder>/episodes.html)")
    view.add_argument("--serve", action="store_true", help="serve the page on 127.0.0.1 instead of writing it")
    view.add_argument("--port", type=int, default=0, help="port for --serve (default: an ephemeral one)")
    view.add_argument("--max-episodes", type=int, default=50,
                      help="newest replay-buffer episodes to show (0: all; default 50)")
    view.add_argument("--image-width", type=int, default=480,
                      help="screenshot width in the page, pixels (0: as recorded; default 480)")
    view.add_argument("--title", default=None, help="the page's title")
    view.set_defaults(func=_cmd_view)

    replay = sub.add_parser("replay", help="replay real AndroidWorld episodes on the simulated phone and compare "
                                           "them step by step (needs android_world)",
                            description="Replay real AndroidWorld episodes on the simulated phone and compare them "
                                        "step by step. Needs the android_world package (not on PyPI; see the README's "
                                        "replay section). A file that is not an episode file is reported and skipped; "
                                        "the exit status is 0 when at least one episode was replayed, else 1.")
    replay.add_argument("episodes", nargs="+", help="AndroidWorld episode pickles (.pkl.gz) or agent JSON logs "
                                                    "with step_records")
    replay.add_argument("-o", "--out", default="replay_out", help="folder for summary.json and the pages "
                                                                  "(default: replay_out)")
    replay.add_argument("--image-width", type=int, default=360, help="screen width in the pages, pixels")
    replay.add_argument("--no-resync", action="store_true",
                        help="skip the second, re-synchronised replay (per-screen fidelity and path divergence)")
    replay.set_defaults(func=_cmd_replay)

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
