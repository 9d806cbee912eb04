"""Tasks: the contract (``base``), expert building blocks (``expert``) and the built-in suites."""

from android_gym.tasks.base import (
    DIFFICULTIES,
    TASK_REGISTRY,
    Task,
    TaskError,
    get_task_class,
    instance_seed,
    list_tasks,
    register_task,
    unavailable_tasks,
)

__all__ = [
    "DIFFICULTIES",
    "TASK_REGISTRY",
    "Task",
    "TaskError",
    "get_task_class",
    "instance_seed",
    "list_tasks",
    "register_task",
    "unavailable_tasks",
]
