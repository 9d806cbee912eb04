"""``DistributedArguments``: the settings of distributed collection (a mixin for CoachConfig; the lead mixes it in).

Defaults follow DistRL (Wang et al. 2024, Section 4: asynchronous workers, one learner, policy versions) and
keep a single machine usable: ``collector="local"`` is the in-process :class:`coach_rl.rollout.RolloutCollector`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["COLLECTORS", "INFERENCE_MODES", "STALE_POLICIES", "WEIGHT_TRANSPORTS", "DistributedArguments"]

COLLECTORS = ("local", "ray")
INFERENCE_MODES = ("worker", "actor")
STALE_POLICIES = ("drop", "downweight")
WEIGHT_TRANSPORTS = ("object_store", "shared_dir")


@dataclass
class DistributedArguments:
    """Where episodes are played and how the policy reaches the device workers."""

    # -- which collector ---------------------------------------------------------------------------------
    collector: str = field(
        default="local", metadata={"help": "local: the envs step inside the training process; ray: one Ray actor per "
                                           "device (coach-rl[ray]), on this machine or a cluster."})
    num_workers: int = field(
        default=4, metadata={"help": "Device workers (Ray actors), one device each (DistRL ran 32 emulators)."})
    ray_address: str | None = field(
        default=None, metadata={"help": "None: start a local Ray cluster (or reuse the one this process started); "
                                        "'auto' or 'host:port': join an existing cluster (`ray start --head`)."})
    ray_num_cpus: int | None = field(
        default=None, metadata={"help": "CPUs of the local cluster started when ray_address is None (None: all)."})
    ray_node_wait_s: float = field(
        default=600.0, metadata={"help": "When no live Ray node declares a device_resource slot (every device node "
                                         "lost), how long collect() waits, saying so, for one to join before it "
                                         "raises an error naming the lost nodes; 0: give up at once."})
    ray_head_lost_s: float = field(
        default=15.0, metadata={"help": "How long the head node's GCS port may refuse connections before collect() "
                                        "reports the head lost (RayHeadLost; `coach-rl train` exits 3 naming its "
                                        "checkpoint). Ray itself ends a driver after 60 s without its GCS."})
    devices_per_worker: int = field(
        default=1, metadata={"help": "Devices one worker process (Ray actor) drives, each in its own thread: a host's "
                                     "emulators or simulated phones need num_workers / devices_per_worker processes "
                                     "instead of one each. Each device still takes one device_resource slot; with a "
                                     "policy that has weights, use inference=actor."})
    device_resource: str = field(
        default="android_device", metadata={"help": "Custom Ray resource each worker needs one unit of, so workers land "
                                                     "on hosts that declared device slots ('' for none). A local "
                                                     "cluster declares num_workers of it."})
    worker_num_cpus: float = field(
        default=0.0, metadata={"help": "CPUs a worker reserves: 0 by default, since workers mostly wait on devices; "
                                       "raise it when each worker holds a CPU policy copy that generates."})
    worker_max_restarts: int = field(
        default=3, metadata={"help": "Times Ray restarts a worker process that died (its in-flight episode comes back "
                                     "truncated with the error); -1: without limit."})
    max_env_replacements: int = field(
        default=2, metadata={"help": "Times in a row a worker replaces its device (new env, emulator restart) when a "
                                     "reset fails, before it reports the episode as failed."})
    # -- collection mode --------------------------------------------------------------------------------
    async_collection: bool = field(
        default=True, metadata={"help": "True: workers never stop and collect() returns as soon as enough episodes "
                                        "finished (DistRL's asynchronous mode); False: synchronous rounds over the "
                                        "workers."})
    spool_dir: str | None = field(
        default=None, metadata={"help": "Folder where each finished trajectory is written atomically the moment it "
                                        "reaches the driver; a restarted driver delivers what is there first. None: "
                                        "<output_dir>/spool when the loop sets it, else no spool."})
    # -- policy and staleness ---------------------------------------------------------------------------
    inference: str = field(
        default="worker", metadata={"help": "worker: each worker holds a CPU copy of the policy; actor: one inference "
                                            "actor (GPU) answers all workers, batching their requests."})
    inference_num_gpus: float = field(
        default=0.0, metadata={"help": "GPUs of the inference actor (inference=actor)."})
    inference_batch_wait_s: float = field(
        default=0.005, metadata={"help": "How long the inference actor waits to batch requests of several workers."})
    weight_transport: str = field(
        default="object_store", metadata={"help": "object_store: weights published through Ray's object store (small "
                                                  "models); shared_dir: written to weights_dir, a folder every node "
                                                  "mounts, and loaded from there (large models)."})
    weights_dir: str | None = field(
        default=None, metadata={"help": "Shared folder for weight_transport=shared_dir (NFS or similar)."})
    max_staleness: int = field(
        default=4, metadata={"help": "Oldest policy version accepted, in versions behind the latest published "
                                     "(DistRL learns off-policy from slightly stale data)."})
    stale_policy: str = field(
        default="drop", metadata={"help": "drop: trajectories staler than max_staleness are discarded (and counted); "
                                          "downweight: kept with weight stale_weight_decay ** (staleness - max_staleness) "
                                          "(StepRecord.sample_weight), which scales the steps' advantages in "
                                          "GRPO, PPO and DistRL updates."})
    stale_weight_decay: float = field(
        default=0.5, metadata={"help": "Per-version weight decay beyond max_staleness (stale_policy=downweight)."})

    def validate_distributed_arguments(self) -> None:
        """A ValueError naming the first bad field."""
        _one_of(self.collector, COLLECTORS, "collector")
        _one_of(self.inference, INFERENCE_MODES, "inference")
        _one_of(self.stale_policy, STALE_POLICIES, "stale_policy")
        _one_of(self.weight_transport, WEIGHT_TRANSPORTS, "weight_transport")
        for name, minimum in (("num_workers", 1), ("devices_per_worker", 1), ("max_staleness", 0),
                              ("max_env_replacements", 0),
                              ("worker_max_restarts", -1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
        if not 0 < self.stale_weight_decay <= 1:
            raise ValueError(f"stale_weight_decay must be in (0, 1], got {self.stale_weight_decay!r}")
        if self.weight_transport == "shared_dir" and not self.weights_dir:
            raise ValueError("weight_transport=shared_dir needs weights_dir (a folder every node mounts)")
        if isinstance(self.ray_node_wait_s, bool) or not isinstance(self.ray_node_wait_s, (int, float)) \
                or not self.ray_node_wait_s >= 0:
            raise ValueError(f"ray_node_wait_s must be a number of seconds >= 0, got {self.ray_node_wait_s!r}")
        if isinstance(self.ray_head_lost_s, bool) or not isinstance(self.ray_head_lost_s, (int, float)) \
                or not self.ray_head_lost_s > 0:
            raise ValueError(f"ray_head_lost_s must be a number of seconds > 0, got {self.ray_head_lost_s!r}")
        if self.worker_num_cpus < 0 or self.inference_num_gpus < 0 or self.inference_batch_wait_s < 0:
            raise ValueError("worker_num_cpus, inference_num_gpus and inference_batch_wait_s must be >= 0")


def _one_of(value: Any, allowed: tuple[str, ...], name: str) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
