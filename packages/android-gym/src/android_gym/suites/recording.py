"""The env's episode recorder: the running episode as a :class:`~android_gym.trajectory.Trajectory`.

:class:`~android_gym.envs.AndroidEnv` keeps one :class:`EpisodeRecorder`: every step is recorded with
what the agent saw before acting (compressed UI, hierarchy XML, the screenshot when screenshots are
kept), its raw output and the parsed action. Outcome verifiers read that trajectory; with
``record_dir`` each ended episode is also written as an AndroidLab trace folder.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

from android_gym.actions import Action
from android_gym.trajectory import Step, Trajectory

__all__ = ["EpisodeRecorder"]


class EpisodeRecorder:
    """Builds the current episode's trajectory; exports ended episodes to ``record_dir`` (AndroidLab format).

    ``keep_screenshots``: store each step's screenshot in the trajectory (always on with ``record_dir``:
    AndroidLab's ROR metric reads them).
    """

    def __init__(self, record_dir: str | os.PathLike[str] | None = None, keep_screenshots: bool = False):
        self.record_dir = Path(record_dir) if record_dir is not None else None
        self.keep_screenshots = bool(keep_screenshots) or self.record_dir is not None
        self.trajectory: Trajectory | None = None
        self.exported: list[Path] = []
        self._open = False

    def begin(self, task: Any, window: tuple[int, int], suite: str) -> Trajectory:
        """Start a new episode of ``task`` on a screen of ``window`` (width, height)."""
        self.trajectory = Trajectory(task=task.name, instruction=task.goal, seed=task.seed,
                                     info={"window": [int(window[0]), int(window[1])], "suite": suite,
                                           "params": dict(task.params)})
        self._open = True
        return self.trajectory

    def add_step(self, screen: Any, ui: Any, action: Action | None, response: str = "",
                 parse_error: str | None = None, info: dict[str, Any] | None = None) -> Step:
        """Record one decision taken on ``screen``/``ui`` (the observation before the action)."""
        if self.trajectory is None:
            raise RuntimeError("add_step() before begin()")
        step_info = {"activity": getattr(screen, "activity", None)}
        step_info.update(info or {})
        step = Step(ui=ui.text if ui is not None else "", action=action, response=response,
                    screenshot=screen.screenshot if self.keep_screenshots and screen is not None else None,
                    xml=screen.xml if screen is not None else None, parse_error=parse_error, info=step_info)
        self.trajectory.steps.append(step)
        return step

    def end(self, *, success: float, answer: str | None, truncated: bool, error: str | None = None,
            verified: bool = True) -> Path | None:
        """Close the episode with its outcome; export it when recording to a folder (once per episode)."""
        if self.trajectory is None or not self._open:
            return None
        self._open = False
        traj = self.trajectory
        traj.success = float(success)
        traj.answer = answer
        traj.truncated = bool(truncated)
        traj.error = error
        traj.info["success"] = float(success)
        traj.info["verified"] = bool(verified)
        if self.record_dir is None or not traj.steps:
            return None
        from android_gym.suites.androidlab import export_androidlab_trace

        try:
            folder = export_androidlab_trace(traj, self.record_dir)
        except (OSError, ValueError) as exc:  # recording must not kill a rollout
            warnings.warn(f"could not write the AndroidLab trace of {traj.task}: {exc}", RuntimeWarning,
                          stacklevel=2)
            return None
        self.exported.append(folder)
        return folder
