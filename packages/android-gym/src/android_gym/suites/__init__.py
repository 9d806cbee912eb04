"""Benchmark task suites on real devices: AndroidWorld's own package, AndroidLab's YAML tasks and traces.

- :mod:`.android_world`: AndroidWorld's registry, seeding and checks through an ``env`` adapter over
  our drivers (needs the ``android_world`` package; a clear ImportError says how to install it).
- :mod:`.android_world_sim`: AndroidWorld's own tasks on the simulated phone (the apps it models), with
  scripted experts; what ``AndroidWorld-v0`` runs on the sim when ``android_world`` is installed.
- :mod:`.androidlab`: AndroidLab task YAMLs as env tasks (scored by a pluggable verifier), trace
  folders its offline evaluator reads, and its SR/RRR/ROR metrics.
- :mod:`.sources`: which tasks an env runs for its suite and device.
- :mod:`.recording`: the env's per-episode trajectory and trace export.
"""

from android_gym.suites.android_world import (
    ANDROID_WORLD_INSTALL_HINT,
    AdbCommandError,
    AdbCommandRunner,
    AndroidWorldControllerAdapter,
    AndroidWorldEnvAdapter,
    AndroidWorldSuite,
    AndroidWorldTask,
    android_world_available,
    android_world_params,
    require_android_world,
    ui_elements_from_xml,
)
from android_gym.suites.android_world_sim import (
    NOT_ON_SIM,
    SIM_TASKS,
    AndroidWorldSimSuite,
    reason_not_on_sim,
)
from android_gym.suites.androidlab import (
    AndroidLabSuite,
    AndroidLabTask,
    AndroidLabTaskSpec,
    androidlab_metrics,
    androidlab_parsed_action,
    export_androidlab_trace,
    export_androidlab_traces,
    load_androidlab_tasks,
)
from android_gym.suites.recording import EpisodeRecorder
from android_gym.suites.sources import TASK_SOURCES, RegisteredTasks, TaskSource, resolve_task_source

__all__ = [
    "ANDROID_WORLD_INSTALL_HINT",
    "NOT_ON_SIM",
    "SIM_TASKS",
    "TASK_SOURCES",
    "AdbCommandError",
    "AdbCommandRunner",
    "AndroidLabSuite",
    "AndroidLabTask",
    "AndroidLabTaskSpec",
    "AndroidWorldControllerAdapter",
    "AndroidWorldEnvAdapter",
    "AndroidWorldSimSuite",
    "AndroidWorldSuite",
    "AndroidWorldTask",
    "EpisodeRecorder",
    "RegisteredTasks",
    "TaskSource",
    "android_world_available",
    "android_world_params",
    "androidlab_metrics",
    "androidlab_parsed_action",
    "export_androidlab_trace",
    "export_androidlab_traces",
    "load_androidlab_tasks",
    "reason_not_on_sim",
    "require_android_world",
    "resolve_task_source",
    "ui_elements_from_xml",
]
