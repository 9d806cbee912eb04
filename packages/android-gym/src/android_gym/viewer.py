"""Look at episodes, not logs: one self-contained HTML page for recorded episodes (``android-gym view``).

:func:`load_episodes` reads what was recorded into :class:`ViewEpisode` objects:

- an android_gym trajectory file (:meth:`android_gym.trajectory.Trajectory.save`, what
  ``android-gym play --record episode.json.gz`` writes), or a folder of them;
- a coach-rl replay buffer folder (Parquet shards) or a single shard, read by :mod:`android_gym.replay_shards`
  (android-gym never imports coach-rl; reading Parquet needs pyarrow, the ``parquet`` extra);
- a coach-rl run folder: its evaluation episodes (``episodes/eval_<label>/``, trajectory files) and the
  newest episodes of its replay buffer (``replay/``);
- a real AndroidWorld episode (``run.py``'s ``.pkl.gz`` or an agent's JSON log with ``step_records``): it is
  replayed on the simulated phone (:mod:`android_gym.replay`) and each real step shown beside its sim twin.

:func:`render_html` turns episodes into one page that needs nothing else (screenshots are inlined as
data URIs, the script is inline): per step the screenshot with the acted-on element boxed (an SVG
overlay in screen coordinates), the compressed UI the model read, its reply and the parsed action, and
the step's numbers where the data has them: the env reward, ``r_p`` (process reward), ``r_o`` (outcome
reward), ``R_t`` (return target) and the critic's ``Q``. Steps change with the buttons or the left/right
arrow keys, episodes with the selector or page up/down. A step may carry a ``twin`` (the same step
elsewhere, e.g. a real episode's step beside its replay on the simulated phone), drawn beside it.

:func:`serve_view` serves a page on 127.0.0.1 (an ephemeral port unless one is given).
"""

from __future__ import annotations

import json
import math
import os
import threading
import warnings
from collections.abc import Iterable, Mapping, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from android_gym.episode_page import ViewEpisode, ViewStep, encode_image, render_html
from android_gym.replay_shards import SHARD_NAME, shard_files
from android_gym.trajectory import TRAJECTORY_FORMAT, Trajectory

__all__ = [
    "VALUE_SOURCES",
    "ViewEpisode",
    "ViewServer",
    "ViewStep",
    "default_page_path",
    "episode_from_trajectory",
    "load_episodes",
    "render_html",
    "serve_view",
    "write_view",
]

#: Names shown for step numbers, and where they are looked up (a coach-rl record's field, then ``step.info``).
VALUE_SOURCES: dict[str, tuple[str, ...]] = {
    "r_p": ("process_reward", "r_p"),
    "r_o": ("outcome_reward", "r_o"),
    "R_t": ("return_t", "R_t"),
    "Q": ("critic_q", "q_value", "Q", "q"),
}

_TRAJECTORY_SUFFIXES = (".json", ".json.gz")


# -- from recorded data ---------------------------------------------------------------------------------


def _action_geometry(action: Any) -> tuple[tuple[int, int] | None, tuple[int, int] | None]:
    """Where an action touches the screen (start point, end point), from its fields."""
    if action is None:
        return None, None
    x, y = getattr(action, "x", None), getattr(action, "y", None)
    point = (int(x), int(y)) if x is not None and y is not None else None
    ex, ey = getattr(action, "end_x", None), getattr(action, "end_y", None)
    end = (int(ex), int(ey)) if ex is not None and ey is not None else None
    return point, end


def _element_box(xml: str | None, point: tuple[int, int] | None) -> tuple[int, int, int, int] | None:
    """Bounds of the element under ``point`` in the step's hierarchy (None without a dump, a point or a hit)."""
    if not xml or point is None:
        return None
    from android_gym.xml import XMLParseError, compress_xml

    try:
        ui = compress_xml(xml)
    except (XMLParseError, ValueError):
        return None
    element = ui.element_at(*point, actionable=True) or ui.element_at(*point)
    return tuple(int(v) for v in element.bounds) if element is not None else None  # type: ignore[return-value]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _step_values(reward: float | None, record: Any, info: Mapping[str, Any]) -> dict[str, float | None]:
    """The step's numbers: env reward, then r_p / r_o / R_t / Q from the record or ``info`` where present."""
    out: dict[str, float | None] = {}
    if reward is not None:
        out["reward"] = _number(reward)
    for name, keys in VALUE_SOURCES.items():
        for key in keys:
            value = record.get(key) if isinstance(record, Mapping) else getattr(record, key, None)
            if value is None:
                value = info.get(key)
            if value is not None:
                out[name] = _number(value)  # NaN (e.g. an r_p the reward model could not give) shows as missing
                break
    return out


def _action_text(action: Any) -> str:
    if action is None:
        return ""
    return json.dumps(action.to_dict(), ensure_ascii=False)


def episode_from_trajectory(
    trajectory: Trajectory,
    *,
    title: str | None = None,
    source: str = "",
    records: Sequence[Any] | None = None,
    image_width: int | None = 480,
) -> ViewEpisode:
    """A :class:`ViewEpisode` of an android_gym ``Trajectory``.

    ``records`` are per-step objects or dicts with ``process_reward`` / ``outcome_reward`` / ``return_t``
    (coach-rl's ``StepRecord``), which win over the same numbers in ``step.info``. Screenshots are scaled
    to ``image_width`` pixels wide (None keeps them as they are); boxes stay in screen coordinates.
    """
    if not isinstance(trajectory, Trajectory):
        raise TypeError(f"expected an android_gym Trajectory, got {type(trajectory).__name__}")
    if records is not None and len(records) != len(trajectory.steps):
        raise ValueError(f"{len(records)} records for a trajectory of {len(trajectory.steps)} steps")
    window = trajectory.info.get("window")
    steps = []
    for i, step in enumerate(trajectory.steps):
        encoded = encode_image(step.screenshot, image_width)
        size = tuple(int(v) for v in window) if window else (encoded[1] if encoded else None)
        point, end = _action_geometry(step.action)
        notes = []
        activity = step.info.get("activity")
        if activity:
            notes.append(f"activity: {activity}")
        if step.info.get("error"):
            notes.append(f"error: {step.info['error']}")
        steps.append(ViewStep(
            index=i, ui=step.ui, response=step.response, action=_action_text(step.action),
            parse_error=step.parse_error, image=encoded[0] if encoded else None,
            size=size, box=_element_box(step.xml, point), point=point, end=end,  # type: ignore[arg-type]
            values=_step_values(step.reward, records[i] if records is not None else None, step.info), notes=notes,
        ))
    final_shot = trajectory.info.get("final_screenshot")
    final_ui = trajectory.info.get("final_ui")
    if final_shot is not None or final_ui:
        encoded = encode_image(final_shot, image_width)
        steps.append(ViewStep(index=len(steps), ui=str(final_ui or ""), label="end",
                              image=encoded[0] if encoded else None, size=encoded[1] if encoded else None,
                              notes=["the screen after the last action"]))
    outcome: dict[str, Any] = {"success": trajectory.success, "steps": len(trajectory.steps)}
    for key in ("answer", "seed", "error"):
        if getattr(trajectory, key) is not None:
            outcome[key] = getattr(trajectory, key)
    if trajectory.truncated:
        outcome["truncated"] = True
    name = title or f"{trajectory.task}" + (f" (seed {trajectory.seed})" if trajectory.seed is not None else "")
    return ViewEpisode(title=name, instruction=trajectory.instruction, source=source, outcome=outcome, steps=steps)


# -- reading files and folders --------------------------------------------------------------------------


def _is_trajectory_file(path: Path) -> bool:
    return path.is_file() and path.name.endswith(_TRAJECTORY_SUFFIXES)


def _trajectory_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if _is_trajectory_file(p))


def _replay_episodes(shards: Sequence[Path], image_width: int | None) -> list[ViewEpisode]:
    """Episodes of coach-rl replay shards, read by :mod:`android_gym.replay_shards` (read-only; no coach-rl).

    A shard the run's buffer evicted between listing and reading is skipped with a warning.
    """
    from android_gym.replay_shards import read_shard

    out = []
    for shard in shards:
        try:
            trajectory, records = read_shard(shard)
        except ValueError:
            if shard.exists():
                raise
            warnings.warn(f"{shard}: evicted by the run's replay buffer while the viewer read it; skipped",
                          RuntimeWarning, stacklevel=3)
            continue
        trajectory_id = shard.name.removesuffix(".parquet")
        out.append(episode_from_trajectory(
            trajectory, records=records, image_width=image_width, source=str(shard),
            title=f"replay {trajectory_id}: {trajectory.task}",
        ))
    return out


def _trajectory_episodes(files: Iterable[Path], image_width: int | None, prefix: str = "") -> list[ViewEpisode]:
    out = []
    for path in files:
        trajectory = Trajectory.load(path)
        title = f"{prefix}{trajectory.task}" + (f" (seed {trajectory.seed})" if trajectory.seed is not None else "")
        out.append(episode_from_trajectory(trajectory, title=title, source=str(path), image_width=image_width))
    return out


def _real_episodes(src: Path, image_width: int | None, first_error: Exception | None) -> list[ViewEpisode]:
    """A real AndroidWorld episode file, replayed on the sim and shown beside its sim twin (:mod:`android_gym.replay`)."""
    from android_gym.replay import load_real_episodes, replay_episode

    try:
        real = load_real_episodes(src)
    except ValueError as exc:
        raise (first_error or exc) from None
    pages = []
    for episode in real:
        result, page = replay_episode(episode, image_width=image_width)
        if page is None:
            raise ValueError(f"{episode.source}: a real {episode.task} episode that cannot be replayed on the sim: "
                             f"{result['reason']}")
        pages.append(page)
    return pages


def _looks_like_run(folder: Path) -> bool:
    return (folder / "replay").is_dir() or (folder / "episodes").is_dir() or (folder / "metrics.jsonl").is_file()


def load_episodes(
    path: str | os.PathLike[str],
    *,
    max_episodes: int | None = 50,
    image_width: int | None = 480,
) -> list[ViewEpisode]:
    """Read the recorded episodes at ``path`` (see the module docstring for what it reads).

    ``max_episodes`` caps a replay buffer at its newest episodes (None: all). Anything else raises
    ``ValueError`` naming the file and what it lacks.
    """
    src = Path(path)
    if not src.exists():
        raise ValueError(f"{src}: no such file or folder")
    if max_episodes is not None and max_episodes < 1:
        raise ValueError(f"max_episodes must be a positive number or None, got {max_episodes!r}")

    def newest(shards: list[Path]) -> list[Path]:
        return shards[-max_episodes:] if max_episodes else shards

    if src.is_file():
        if SHARD_NAME.match(src.name):
            return _replay_episodes([src], image_width)
        if src.name.endswith(_TRAJECTORY_SUFFIXES):
            try:
                return _trajectory_episodes([src], image_width)
            except ValueError as exc:
                if "field 'format'" not in str(exc):
                    raise
                return _real_episodes(src, image_width, exc)
        if src.name.endswith((".pkl", ".pkl.gz")):
            return _real_episodes(src, image_width, None)
        raise ValueError(f"{src}: not an episode file android-gym view reads: an android_gym trajectory "
                         f"({' or '.join(_TRAJECTORY_SUFFIXES)}, field 'format' = {TRAJECTORY_FORMAT!r}), a "
                         "coach-rl replay shard (NNNNNNNNNN-<12 hex>.parquet) or a real AndroidWorld episode "
                         "(.pkl.gz, or a JSON log with step_records)")
    if _looks_like_run(src):
        episodes: list[ViewEpisode] = []
        eval_root = src / "episodes"
        if eval_root.is_dir():
            for folder in sorted(p for p in eval_root.iterdir() if p.is_dir()):
                episodes += _trajectory_episodes(_trajectory_files(folder), image_width, prefix=f"{folder.name}: ")
        if (src / "replay").is_dir():
            episodes += _replay_episodes(newest(shard_files(src / "replay")), image_width)
        if not episodes:
            raise ValueError(f"{src}: a run folder without recorded episodes (no trajectory files in "
                             "episodes/<label>/ and no shards in replay/)")
        return episodes
    shards = shard_files(src)
    files = _trajectory_files(src)
    if not shards and not files:
        raise ValueError(f"{src}: a folder without episodes android-gym view reads (android_gym trajectory "
                         f"files {' / '.join(_TRAJECTORY_SUFFIXES)}, coach-rl replay shards, or a coach-rl run folder)")
    return _trajectory_episodes(files, image_width) + _replay_episodes(newest(shards), image_width)


# -- the page -------------------------------------------------------------------------------------------


def default_page_path(path: str | os.PathLike[str]) -> Path:
    """Where the page of ``path`` goes by default: ``<name>.html`` beside a file, ``<folder>/episodes.html``."""
    src = Path(path)
    if src.is_dir():
        return src / "episodes.html"
    name = src.name
    for suffix in (".json.gz", ".json", ".parquet", ".pkl.gz", ".pkl"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return src.with_name(name + ".html")


def write_view(
    path: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    title: str | None = None,
    max_episodes: int | None = 50,
    image_width: int | None = 480,
) -> Path:
    """Write the page of the episodes at ``path`` to ``out`` (default: ``<path>.html`` beside it); returns it."""
    src = Path(path)
    episodes = load_episodes(src, max_episodes=max_episodes, image_width=image_width)
    target = Path(out) if out is not None else default_page_path(src)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(render_html(episodes, title=title or f"episodes: {src.name}"), encoding="utf-8")
    return target


class ViewServer:
    """A page served over HTTP on a local address in a background thread; ``url`` says where, ``close()`` stops it."""

    def __init__(self, page: str, host: str = "127.0.0.1", port: int = 0) -> None:
        """Serve ``page`` at ``/`` (and ``/index.html``) on ``host:port`` (port 0: an ephemeral one)."""
        body = page.encode("utf-8")

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path.split("?", 1)[0] not in ("/", "/index.html"):
                    self.send_error(404, "only / is served")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.send_header("Cache-Control", "no-store")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (http.server's signature)
                pass

        self._server = ThreadingHTTPServer((host, port), Handler)
        self._server.daemon_threads = True
        self.host, self.port = self._server.server_address[:2]
        self._thread = threading.Thread(target=self._server.serve_forever, name="android-gym-view", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        """The page's address."""
        return f"http://{self.host}:{self.port}/"

    def close(self) -> None:
        """Stop serving and release the port."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ViewServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def serve_view(page: str, *, host: str = "127.0.0.1", port: int = 0) -> ViewServer:
    """Start serving ``page`` (see :class:`ViewServer`)."""
    return ViewServer(page, host, port)
