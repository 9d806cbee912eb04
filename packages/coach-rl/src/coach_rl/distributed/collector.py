"""``RayCollector``: device workers as Ray actors, with the API of :class:`coach_rl.rollout.RolloutCollector`.

``collect(n_episodes, seeds=, task_options=, greedy=) -> RolloutBatch``; ``publish_policy(model, version)``;
``close()``. Two modes:

- synchronous (``async_collection=False``): rounds; each round gives one episode to every live worker and waits
  for the slowest, as the in-process collector does;
- asynchronous (default): every worker always has an episode in flight, between and during ``collect`` calls;
  ``collect(n)`` returns as soon as ``n`` finished episodes are there. The episodes still running carry on with
  the policy they started with, so each trajectory records its ``policy_version``; the learner's version minus
  that is its staleness. Trajectories staler than ``max_staleness`` are dropped or down-weighted
  (each of their records' ``sample_weight``), and the batch reports the staleness distribution.

Each worker runs the reward pipeline itself and sends back the trajectory with its
:class:`coach_rl.records.StepRecord` list (built from the episode's typed policy turns); the driver only names
the episode (``episode_id``) and sets the staleness weight.

Faults: a device failure inside an episode is the env's business (truncated step, reboot/reconnect at the next
reset); a reset that keeps failing makes the worker replace its device; a worker process that dies is restarted
by Ray (``max_restarts``). An episode whose worker died (its process, or its whole node) is *lost*: the driver
never received its steps, so it is dropped and counted (``ray/lost_episodes``, ``batch.lost``), never returned
as a trajectory without records, and its seed and options go back to the front of the queue for another worker.
The collector watches the cluster's nodes: it logs a lost node (and the workers it held) and a node that joins;
Ray places the workers again on free device slots; a worker Ray gave up on after its node was lost is started
anew. With no ``device_resource`` slot left in the cluster it waits, saying so, and ``collect`` raises after
``ray_node_wait_s`` seconds. A head node whose GCS refuses connections for ``ray_head_lost_s`` seconds (15) is
the cluster lost:
``collect`` and ``publish_policy`` raise :class:`RayHeadLost` (see :mod:`coach_rl.distributed.supervise` for
when Ray ends the driver first). Every trajectory (with its records) is written to the spool folder the moment it
reaches the driver (see :class:`coach_rl.distributed.spool.TrajectorySpool`) and removed from it by
:meth:`RayCollector.acknowledge`.
"""

from __future__ import annotations

import collections
import logging
import math
import os
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from android_gym.trajectory import Trajectory
from coach_rl.distributed.arguments import (
    INFERENCE_MODES,
    STALE_POLICIES,
    WEIGHT_TRANSPORTS,
    DistributedArguments,
)
from coach_rl.distributed.spool import TrajectorySpool
from coach_rl.distributed.supervise import head_lost_advice
from coach_rl.distributed.weights import cpu_state_dict, write_shared_weights
from coach_rl.distributed.worker import DeviceWorker, InferenceServer
from coach_rl.records import StepRecord
from coach_rl.rollout import EpisodeFailure, RolloutBatch, RolloutStats, per_episode

__all__ = ["DistributedRolloutBatch", "RayCollector", "RayHeadLost", "ensure_ray"]

logger = logging.getLogger(__name__)

_RECOVERY_TIMEOUT_S = 300.0
"""How long a worker Ray is restarting may stay unreachable before it counts as dead."""
_NODE_CHECK_S = 1.0
"""How often the result thread compares the cluster's nodes with its last look."""
_HEAD_LOST_S = 15.0
"""The default ``ray_head_lost_s``: how long the head's GCS port may refuse connections before collect() reports the
head lost (Ray itself aborts the driver after 60 s without its GCS, with a message that names neither the run nor
what to do)."""


class RayHeadLost(RuntimeError):
    """The Ray head node (its GCS) is gone, and the cluster with it: the run stops; run it again on a new cluster."""

    def __init__(self, gcs_address: str, detail: str) -> None:
        super().__init__(f"lost the Ray head node: its GCS at {gcs_address} {detail}, so the cluster is gone (workers, "
                         f"objects). {head_lost_advice()}")
        self.gcs_address = gcs_address


_RUNTIME_ENV = {"env_vars": {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}}


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError('collector="ray" needs Ray: pip install "coach-rl[ray]"') from exc
    return ray


def ensure_ray(address: str | None = None, num_cpus: int | None = None,
               resources: Mapping[str, float] | None = None) -> bool:
    """Connect this process to Ray: a new local cluster (``address=None``) or an existing one; True if started here.

    A process already connected keeps its cluster. Workers get ``OMP_NUM_THREADS=1``.
    """
    ray = _ray()
    if ray.is_initialized():
        return False
    if address is None:
        ray.init(num_cpus=num_cpus, resources=dict(resources or {}), include_dashboard=False,
                 runtime_env=_RUNTIME_ENV, log_to_driver=False)
        return True
    _check_auth(address)
    try:
        ray.init(address=address, runtime_env=_RUNTIME_ENV, log_to_driver=False)
    except ray.exceptions.AuthenticationError as exc:
        raise ConnectionError(_auth_message(address, str(exc))) from exc
    return True


def _auth_message(address: str, detail: str) -> str:
    mode = os.environ.get("RAY_AUTH_MODE")
    source = ("RAY_AUTH_TOKEN" if os.environ.get("RAY_AUTH_TOKEN") else
              f"RAY_AUTH_TOKEN_PATH={os.environ['RAY_AUTH_TOKEN_PATH']}" if os.environ.get("RAY_AUTH_TOKEN_PATH")
              else "~/.ray/auth_token")
    now = (f"RAY_AUTH_MODE={mode!r} and the token from {source}" if mode else
           "RAY_AUTH_MODE unset (Ray turns token authentication on only for a cluster it finds itself, "
           "ray_address=auto on the head)")
    return (f"the Ray cluster at {address} refused this driver ({detail}). The cluster uses token authentication "
            f"(Ray >= 2.59 turns it on for `ray start --head` when a token exists); this process has {now}. Set "
            "RAY_AUTH_MODE=token and the head's token, RAY_AUTH_TOKEN=<token> or RAY_AUTH_TOKEN_PATH=<file> "
            "(`ray get-auth-token` prints it on the head), in the environment of the driver and of every "
            "`ray start`.")


def _check_auth(address: str) -> None:
    """Fail fast, naming the token, when the GCS at ``address`` ('host:port') rejects this process's credentials.

    ``ray.init`` itself retries for about 20 s and then reports only a ConnectionError; a GCS client answers at
    once. The probe uses Ray's internal ``GcsClient``: when it is not there (another Ray version), nothing is checked.
    """
    if address == "auto" or address.startswith("ray://") or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    try:  # nothing listening: ray.init reports that; the GCS client would retry for 40 s first
        socket.create_connection((host.strip("[]"), int(port)), timeout=3).close()
    except (OSError, ValueError):
        return
    ray = _ray()
    try:
        from ray._raylet import GcsClient
    except ImportError:  # pragma: no cover - depends on the Ray version
        return
    try:
        GcsClient(address=address).internal_kv_get(b"coach_rl_probe", None, timeout=5)
    except ray.exceptions.AuthenticationError as exc:
        raise ConnectionError(_auth_message(address, str(exc))) from exc
    except Exception:  # noqa: BLE001 - anything else is ray.init's to report
        return


def _wait_for_slots(resource: str, wait_s: float) -> bool:
    """Whether the cluster has a ``resource`` slot, waiting up to ``wait_s`` seconds (saying so) for a node with one.

    A driver restarted while every device node is down waits for one to come back instead of failing at once.
    """
    ray = _ray()
    deadline = time.monotonic() + wait_s
    if ray.cluster_resources().get(resource, 0) > 0:
        return True
    if wait_s > 0:
        logger.warning("[coach-rl] ray: no live node has a %r slot yet; waiting up to %g s (ray_node_wait_s) for a "
                       "device node to join", resource, wait_s)
    while time.monotonic() < deadline:
        time.sleep(min(1.0, max(0.0, deadline - time.monotonic())))
        if ray.cluster_resources().get(resource, 0) > 0:
            return True
    return False


@dataclass
class DistributedRolloutBatch(RolloutBatch):
    """A :class:`RolloutBatch` plus what distributed collection adds: ids, staleness, metrics."""

    uids: list[str] = field(default_factory=list)
    """Spool id of each trajectory (pass the batch to :meth:`RayCollector.acknowledge`)."""
    staleness: list[int] = field(default_factory=list)
    """Learner version minus the acting version, per returned trajectory."""
    dropped_stale: int = 0
    """Trajectories dropped for being staler than ``max_staleness``."""
    lost: list[dict[str, Any]] = field(default_factory=list)
    """Episodes lost since the previous batch (their worker or node died): uid, worker, node, seed, error."""
    metrics: dict[str, float] = field(default_factory=dict)
    """Flat metrics: ``collector/staleness_mean``, ``..._max``, ``collector/staleness_<k>`` counts, drops, faults."""


@dataclass
class _Episode:
    uid: str
    worker: int
    seed: int | None
    options: dict[str, Any] | None
    greedy: bool
    version: int
    number: int


class RayCollector:
    """Collect episodes on device workers (Ray actors); see the module docstring.

    Args:
        device: a device description (:class:`~coach_rl.distributed.devices.SimDeviceSpec`, ``AdbDeviceSpec``,
            ``EmulatorDeviceSpec``): worker ``i`` opens its own device from it.
        policy: the policy the workers copy (``inference="worker"``) or the inference actor holds
            (``"actor"``); an :class:`~coach_rl.policy.HFPolicy` on CPU, or any picklable Policy.
        collector_kwargs: passed to each worker's :class:`~coach_rl.rollout.RolloutCollector` (``prm``,
            ``verifier``, ``w_p``, ``w_o``, ``gamma``, ``keep_xml``...).
        base_seed: seed of the first episode a worker starts on its own (async mode, nothing queued).
        The other arguments are the fields of :class:`~coach_rl.distributed.arguments.DistributedArguments`.
    """

    def __init__(
        self,
        device: Any,
        policy: Any,
        *,
        num_workers: int = 4,
        ray_address: str | None = None,
        ray_num_cpus: int | None = None,
        ray_node_wait_s: float = 600.0,
        ray_head_lost_s: float = _HEAD_LOST_S,
        devices_per_worker: int = 1,
        device_resource: str = "android_device",
        worker_num_cpus: float = 0.0,
        worker_max_restarts: int = 3,
        max_env_replacements: int = 2,
        async_collection: bool = True,
        spool_dir: str | None = None,
        inference: str = "worker",
        inference_num_gpus: float = 0.0,
        inference_batch_wait_s: float = 0.005,
        weight_transport: str = "object_store",
        weights_dir: str | None = None,
        max_staleness: int = 4,
        stale_policy: str = "drop",
        stale_weight_decay: float = 0.5,
        collector_kwargs: dict[str, Any] | None = None,
        base_seed: int = 0,
        task_options: dict[str, Any] | None = None,
    ) -> None:
        """Start (or join) Ray, place the workers and, in actor mode, the inference server."""
        args = DistributedArguments(
            collector="ray", num_workers=num_workers, ray_address=ray_address, ray_num_cpus=ray_num_cpus,
            ray_node_wait_s=ray_node_wait_s, ray_head_lost_s=ray_head_lost_s, devices_per_worker=devices_per_worker,
            device_resource=device_resource,
            worker_num_cpus=worker_num_cpus, worker_max_restarts=worker_max_restarts,
            max_env_replacements=max_env_replacements, async_collection=async_collection, spool_dir=spool_dir,
            inference=inference, inference_num_gpus=inference_num_gpus, inference_batch_wait_s=inference_batch_wait_s,
            weight_transport=weight_transport, weights_dir=weights_dir, max_staleness=max_staleness,
            stale_policy=stale_policy, stale_weight_decay=stale_weight_decay)
        args.validate_distributed_arguments()
        assert inference in INFERENCE_MODES and stale_policy in STALE_POLICIES and weight_transport in WEIGHT_TRANSPORTS
        if not callable(getattr(device, "open", None)):
            raise TypeError(f"device must be a device spec with open(index) (SimDeviceSpec...), got {type(device).__name__}")
        if not callable(getattr(policy, "act", None)):
            raise TypeError(f"policy must have act(requests, greedy=...), got {type(policy).__name__}")
        if devices_per_worker > 1 and inference == "worker" and getattr(policy, "model", None) is not None:
            raise ValueError("devices_per_worker > 1 plays several episodes at once in one process, which would load "
                             "published weights into a policy copy other episodes are using: use inference='actor' "
                             "(one inference actor for every device), or devices_per_worker=1")
        ray = _ray()
        self.args = args
        self.started_ray = ensure_ray(ray_address, ray_num_cpus,
                                      {device_resource: float(num_workers)} if device_resource else None)
        if device_resource and not _wait_for_slots(device_resource, ray_node_wait_s):
            raise ValueError(f"the Ray cluster declares no {device_resource!r} resource, so no worker could be placed "
                             f"(waited ray_node_wait_s={ray_node_wait_s:g} s for a node with one): start nodes with "
                             f"--resources '{{\"{device_resource}\": N}}' or set device_resource=''")
        self.version = int(getattr(policy, "version", 0))
        self._weights: Any = None
        self.spool = TrajectorySpool(spool_dir) if spool_dir else None
        self.run_id = uuid.uuid4().hex[:8]
        self.base_seed = int(base_seed)
        self.default_options = dict(task_options) if task_options else None
        self._next_seed = self.base_seed
        self._counter = 0
        self._queue: deque[tuple[int | None, dict[str, Any] | None, bool]] = deque()
        self._ready: deque[tuple[str, tuple[Trajectory, list[StepRecord]]]] = deque()
        self._failures: list[EpisodeFailure] = []
        self._stats: list[dict[str, Any]] = []
        self._inflight: dict[Any, _Episode] = {}
        self._probes: dict[Any, tuple[int, float]] = {}
        self._recovering: set[int] = set()
        self._dead: set[int] = set()
        self._errors_in_row = [0] * num_workers
        self._probe_later: list[tuple[int, float, float]] = []
        self.worker_failures = 0
        self.lost_episodes = 0
        """Episodes lost so far (worker or node died before the driver had them)."""
        self._lost: list[dict[str, Any]] = []
        self._worker_node: dict[int, str] = {}  # worker -> the Ray node its last episode ran on
        self._slots: dict[str, float] | None = None  # alive node -> device slots, at the last look
        self._node_names: dict[str, str] = {}
        self.lost_nodes: list[str] = []
        """Ray node ids lost while this collector ran, in order."""
        self.joined_nodes: list[str] = []
        """Ray node ids with device slots that joined after the collector started."""
        self._no_slots_since: float | None = None
        self._next_node_check = 0.0
        self._gcs_address = str(ray.get_runtime_context().gcs_address or "")
        self._head_lost_since: float | None = None
        self._head_lost = False  # RayHeadLost was raised: close() leaves Ray alone
        self._cond = threading.Condition()
        self._stop = threading.Event()
        self._streaming = False  # async mode: set by the first collect(); from then on workers never stop
        self._pump_error: BaseException | None = None
        self.server = None
        policy_ref = self._policy_ref = ray.put(policy)  # kept: Ray re-reads it to restart a worker
        if inference == "actor":
            self.server = ray.remote(InferenceServer).options(
                num_gpus=inference_num_gpus, num_cpus=0, max_concurrency=max(16, 4 * num_workers),
                max_restarts=worker_max_restarts, runtime_env=_RUNTIME_ENV).remote(policy_ref, inference_batch_wait_s)
            policy_ref = None
        self._actor_options: dict[str, Any] = {"num_cpus": worker_num_cpus, "max_restarts": worker_max_restarts,
                                               "max_task_retries": 0, "runtime_env": _RUNTIME_ENV}
        self._worker_args = (device, policy_ref, self.server, dict(collector_kwargs or {}), max_env_replacements)
        self._per_process = int(devices_per_worker)
        self._handles: list[Any] = []
        self.workers: list[Any] = [None] * num_workers
        """The actor handle of each device (several devices share one with ``devices_per_worker`` > 1)."""
        for group in range(math.ceil(num_workers / self._per_process)):
            self._handles.append(None)
            self._start_actor(group)
        self._check_nodes()
        if self.spool is not None:
            self._ready.extend(self.spool.pending())  # a restarted driver delivers what the last one spooled
        self._pump = threading.Thread(target=self._pump_loop, name="ray-collector-pump", daemon=True)
        self._pump.start()

    @classmethod
    def from_config(cls, device: Any, policy: Any, config: Any, **overrides: Any) -> RayCollector:
        """A collector with the :class:`DistributedArguments` fields of ``config`` (e.g. ``config.coach``)."""
        if config.collector != "ray":
            raise ValueError(f"RayCollector.from_config needs collector='ray', got {config.collector!r}")
        kwargs: dict[str, Any] = {
            "num_workers": config.num_workers, "ray_address": config.ray_address, "ray_num_cpus": config.ray_num_cpus,
            "ray_node_wait_s": config.ray_node_wait_s, "ray_head_lost_s": config.ray_head_lost_s,
            "device_resource": config.device_resource, "worker_num_cpus": config.worker_num_cpus,
            "worker_max_restarts": config.worker_max_restarts, "max_env_replacements": config.max_env_replacements,
            "devices_per_worker": config.devices_per_worker, "async_collection": config.async_collection,
            "spool_dir": config.spool_dir, "inference": config.inference,
            "inference_num_gpus": config.inference_num_gpus, "inference_batch_wait_s": config.inference_batch_wait_s,
            "weight_transport": config.weight_transport, "weights_dir": config.weights_dir,
            "max_staleness": config.max_staleness, "stale_policy": config.stale_policy,
            "stale_weight_decay": config.stale_weight_decay,
        }
        kwargs.update(overrides)
        return cls(device, policy, **kwargs)

    # -- public -----------------------------------------------------------------------------------------

    @property
    def gcs_address(self) -> str:
        """The GCS ('host:port') of the Ray cluster this collector runs on."""
        return self._gcs_address

    @property
    def num_workers(self) -> int:
        """Devices, i.e. workers in the sense of one device each (dead ones included)."""
        return len(self.workers)

    @property
    def num_processes(self) -> int:
        """Worker processes (Ray actors): ``num_workers / devices_per_worker``, rounded up."""
        return len(self._handles)

    def publish_policy(self, model: Any, version: int) -> None:
        """Make ``version`` the policy of every episode started from now on (``model=None``: version only)."""
        ray = _ray()
        if isinstance(version, bool) or not isinstance(version, int) or version < self.version:
            raise ValueError(f"version must be an integer >= the current {self.version}, got {version!r}")
        self._check_head()
        if model is None:
            weights = None
        elif self.args.weight_transport == "shared_dir":
            weights = write_shared_weights(model, self.args.weights_dir, version)  # type: ignore[arg-type]
        else:
            weights = ray.put(cpu_state_dict(model))
        with self._cond:
            self.version, self._weights = int(version), weights
            targets = [self.server] if self.server is not None else self._live_handles()
            for target in targets:
                target.set_policy.remote(self.version, weights)  # queued behind the worker's running episode

    def collect(self, n_episodes: int, *, seeds: int | Sequence[int | None] | None = None,
                task_options: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None = None,
                greedy: bool = False, timeout: float | None = None) -> DistributedRolloutBatch:
        """``n_episodes`` finished episodes (see the module docstring for the two modes and what seeds mean)."""
        if isinstance(n_episodes, bool) or not isinstance(n_episodes, int) or n_episodes < 0:
            raise ValueError(f"n_episodes must be an integer >= 0, got {n_episodes!r}")
        seed_list = per_episode(seeds, n_episodes, "seeds", base_int=True)
        option_list = per_episode(task_options, n_episodes, "task_options")
        started = time.perf_counter()
        deadline = None if timeout is None else started + timeout
        with self._cond:
            if isinstance(task_options, Mapping):
                self.default_options = dict(task_options)
            self._queue.extend((s, o, bool(greedy)) for s, o in zip(seed_list, option_list))
            batch = DistributedRolloutBatch(policy_version=self.version)
            while len(batch.trajectories) < n_episodes:
                if self.args.async_collection:
                    self._streaming = True
                    self._fill_all()
                    self._take(batch, n_episodes)
                    if len(batch.trajectories) < n_episodes:
                        self._wait(deadline)
                else:
                    self._sync_round(batch, n_episodes, deadline)
            self._finish_batch(batch, time.perf_counter() - started)
        return batch

    def acknowledge(self, batch_or_uids: Any) -> int:
        """The learner holds these trajectories for good (checkpointed): drop them from the spool, and from what this
        collector would still deliver (a resumed driver acknowledges what its checkpoint already holds)."""
        uids = batch_or_uids.uids if isinstance(batch_or_uids, DistributedRolloutBatch) else list(batch_or_uids)
        held = set(uids)
        with self._cond:
            kept = [item for item in self._ready if item[0] not in held]
            if len(kept) != len(self._ready):
                self._ready.clear()
                self._ready.extend(kept)
        return self.spool.acknowledge(uids) if self.spool is not None else 0

    def _check_head(self) -> None:
        """Raise :class:`RayHeadLost` when the head is lost (waiting out the rest of the grace period first), before a
        call into Ray's object store: Ray ends a driver whose node's object store died (a driver attached to the
        head's raylet), without a word on its stderr."""
        with self._cond:
            while self._head_lost_since is not None and self._pump_error is None:
                left = self.args.ray_head_lost_s - (time.monotonic() - self._head_lost_since)
                if left <= 0:
                    self._head_lost = True
                    raise RayHeadLost(self._gcs_address,
                                      f"has refused connections for {self.args.ray_head_lost_s:g} s")
                self._cond.wait(timeout=min(1.0, left))

    def worker_info(self, timeout: float = _RECOVERY_TIMEOUT_S) -> list[dict[str, Any]]:
        """Each live worker's counters (episodes, device replacements, restarted, pid, host), once workers Ray is
        restarting are back (up to ``timeout`` seconds)."""
        ray = _ray()
        with self._cond:
            self._cond.wait_for(lambda: not (self._recovering or self._probe_later) or self._pump_error is not None,
                                timeout=timeout)
            calls = [w.info.remote(i % self._per_process) for i, w in enumerate(self.workers) if i not in self._dead]
        return ray.get(calls)

    def inference_batch_sizes(self) -> list[int]:
        """Requests per generation call of the inference actor (empty in worker mode)."""
        return [] if self.server is None else _ray().get(self.server.batch_sizes.remote())

    def close(self) -> None:
        """Stop the workers (episodes in flight are abandoned, spooled ones stay) and a Ray cluster started here."""
        ray = _ray()
        self._stop.set()
        if self._pump.is_alive():
            self._pump.join(timeout=10)
        if not ray.is_initialized() or not self.workers:
            return
        if self._head_lost:  # the cluster is gone: a call would wait for the GCS or end the process
            self.workers, self._handles, self._inflight, self._probes = [], [], {}, {}
            return
        try:
            ray.get([w.close.remote() for w in self._live_handles()], timeout=10)
        except Exception:  # noqa: BLE001 - a worker that cannot close is killed below
            pass
        for w in self._handles + ([self.server] if self.server is not None else []):
            ray.kill(w, no_restart=True)
        self.workers, self._handles, self._inflight, self._probes = [], [], {}, {}
        if self.started_ray:
            ray.shutdown()

    def __enter__(self) -> RayCollector:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- internals (called with self._cond held) ----------------------------------------------------------

    def _start_actor(self, group: int) -> Any:
        """Start the actor of devices ``group * devices_per_worker ...`` (one slot of ``device_resource`` each)."""
        first = group * self._per_process
        count = min(self._per_process, len(self.workers) - first)
        options = {**self._actor_options, "max_concurrency": count}
        if self.args.device_resource:
            options["resources"] = {self.args.device_resource: count}
        handle = _ray().remote(DeviceWorker).options(**options).remote(first, *self._worker_args, count=count)
        self._handles[group] = handle
        for i in range(first, first + count):
            self.workers[i] = handle
        return handle

    def _live_handles(self) -> list[Any]:
        """One handle per actor that still has a live device."""
        return [h for g, h in enumerate(self._handles)
                if any(i not in self._dead for i in range(g * self._per_process,
                                                          min((g + 1) * self._per_process, len(self.workers))))]

    def _alive(self) -> list[int]:
        return [i for i in range(len(self.workers)) if i not in self._dead]

    def _busy(self) -> set[int]:
        return {e.worker for e in self._inflight.values()} | self._recovering

    def _free(self) -> list[int]:
        busy = self._busy()
        return [i for i in self._alive() if i not in busy]

    def _next_spec(self) -> tuple[int | None, dict[str, Any] | None, bool]:
        if self._queue:
            return self._queue.popleft()
        seed = self._next_seed
        self._next_seed += 1
        return seed, self.default_options, False

    def _submit(self, worker: int, spec: tuple[int | None, dict[str, Any] | None, bool]) -> Any:
        seed, options, greedy = spec
        self._counter += 1
        uid = f"{self.run_id}-w{worker}-e{self._counter}"
        ref = self.workers[worker].run_episode.remote(seed, options, greedy, worker % self._per_process)
        self._inflight[ref] = _Episode(uid, worker, seed, options, greedy, self.version, self._counter)
        self._cond.notify_all()  # wakes an idle result thread at once
        return ref

    def _fill_all(self) -> None:
        for i in self._free():
            self._submit(i, self._next_spec())

    def _wait(self, deadline: float | None) -> None:
        """Sleep until the pump thread reports something (or a deadline, a pump failure, every worker dead, no
        device slot left for ``ray_node_wait_s``)."""
        if self._pump_error is not None:
            raise RuntimeError("the collector's result thread failed") from self._pump_error
        if self._head_lost_since is not None and \
                time.monotonic() - self._head_lost_since >= self.args.ray_head_lost_s:
            self._head_lost = True
            raise RayHeadLost(self._gcs_address, f"has refused connections for "
                                                 f"{time.monotonic() - self._head_lost_since:.0f} s")
        if self._no_slots_since is not None:
            waited = time.monotonic() - self._no_slots_since
            if waited >= self.args.ray_node_wait_s:
                resource = self.args.device_resource or "CPU"
                lost = ", ".join(self._node_names.get(n, n) for n in self.lost_nodes) or "none seen"
                raise RuntimeError(
                    f"no live Ray node has a {resource!r} slot: waited {waited:.0f} s (ray_node_wait_s="
                    f"{self.args.ray_node_wait_s:g}) for a device node to join; nodes lost: {lost}. Start one with "
                    f"`ray start --address=<head host:port> --resources='{{\"{resource}\": N}}'` (with the "
                    "cluster's RAY_AUTH_MODE/RAY_AUTH_TOKEN) and run again: the run resumes from its checkpoint")
        if not (self._inflight or self._probes or self._probe_later or self._ready):
            raise RuntimeError("every device worker is dead (Ray gave up restarting them)")
        remaining = None if deadline is None else deadline - time.perf_counter()
        if remaining is not None and remaining <= 0:
            raise TimeoutError("collect() timed out waiting for the device workers")
        self._cond.wait(timeout=1.0 if remaining is None else min(1.0, remaining))

    def _sync_round(self, batch: DistributedRolloutBatch, n: int, deadline: float | None) -> None:
        """One round: an episode on every free live worker (as many as still needed), then wait for all of them."""
        self._take(batch, n)  # spooled ones from a previous driver come first
        need = n - len(batch.trajectories)
        if need <= 0:
            return
        free = self._free()
        while not free:  # workers Ray is restarting come back first
            self._wait(deadline)
            free = self._free()
        round_refs = [self._submit(i, self._next_spec()) for i in free[:need]]
        while any(ref in self._inflight for ref in round_refs):  # a synchronous round waits for its slowest episode
            self._wait(deadline)
        self._take(batch, n)

    def _take(self, batch: DistributedRolloutBatch, n: int) -> None:
        """Move ready trajectories into ``batch``, applying the staleness bound."""
        while self._ready and len(batch.trajectories) < n:
            uid, (trajectory, records) = self._ready.popleft()
            staleness = self.version - int(trajectory.info.get("policy_version", self.version))
            if staleness > self.args.max_staleness and self.args.stale_policy == "drop":
                batch.dropped_stale += 1
                batch.staleness.append(staleness)
                if self.spool is not None:
                    self.spool.acknowledge([uid])
                continue
            excess = max(0, staleness - self.args.max_staleness)
            trajectory.info["staleness"] = staleness
            weight = self.args.stale_weight_decay ** excess
            for record in records:  # the worker scored the episode; the driver names it and weighs its staleness
                record.episode_id, record.sample_weight = uid, weight
            batch.trajectories.append(trajectory)
            batch.records.extend(records)
            batch.uids.append(uid)
            batch.staleness.append(staleness)

    def _pump_loop(self) -> None:
        """Background thread: receive every finished episode the moment it is done, spool it, keep workers busy."""
        ray = _ray()
        while not self._stop.is_set():
            if not ray.is_initialized():  # shut down under a collector never closed: a Ray call would start one
                return
            if time.monotonic() >= self._next_node_check:
                self._next_node_check = time.monotonic() + _NODE_CHECK_S
                self._check_nodes()
            with self._cond:
                now = time.monotonic()
                due = [p for p in self._probe_later if p[2] <= now]
                self._probe_later = [p for p in self._probe_later if p[2] > now]
                for worker, since, _ in due:
                    self._start_probe(worker, since)
                refs = list(self._inflight) + list(self._probes)
                if not refs:
                    self._cond.wait(0.05)  # _submit() notifies
                    continue
            try:
                done, _ = ray.wait(refs, num_returns=1, timeout=0.05)
                if not done:
                    continue
                done, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
                with self._cond:
                    for ref in done:
                        if ref in self._probes:
                            self._probe_done(ref)
                        elif ref in self._inflight:
                            self._episode_done(ref, self._inflight.pop(ref))
                    if self.args.async_collection and self._streaming and not self._stop.is_set():
                        self._fill_all()
                    self._cond.notify_all()
            except BaseException as exc:  # noqa: BLE001 - surfaced by the next collect()
                with self._cond:
                    self._pump_error = exc
                    self._cond.notify_all()
                return

    def _episode_done(self, ref: Any, episode: _Episode) -> None:
        ray = _ray()
        try:
            result = ray.get(ref)
        except ray.exceptions.RayError as exc:
            self.worker_failures += 1
            self._errors_in_row[episode.worker] += 1
            node = self._worker_node.get(episode.worker)
            where = f" on node {self._node_names.get(node, node)}" if node else ""
            self._lose(episode, f"worker {episode.worker}{where} died during the episode: {type(exc).__name__}: "
                                f"{str(exc)[:300]}", again=True)
            self._start_probe(episode.worker)
            return
        self._errors_in_row[episode.worker] = 0
        if result["stats"]:
            self._stats.append(result["stats"])
        if result["trajectory"] is None:
            self._failures.append(EpisodeFailure(episode=episode.number, seed=episode.seed, options=episode.options,
                                                 env_index=episode.worker, error=result["error"]))
            return
        trajectory = result["trajectory"]
        records = list(result["records"])
        if trajectory.info.get("node_id"):
            self._worker_node[episode.worker] = str(trajectory.info["node_id"])
        if not trajectory.steps or len(records) != len(trajectory.steps):  # the learner needs one record per step
            self._lose(episode, f"worker {episode.worker} returned {len(trajectory.steps)} steps with "
                                f"{len(records)} records", again=False)
            return
        trajectory.info.setdefault("policy_version", episode.version)
        self._deliver(episode, trajectory, records)

    def _lose(self, episode: _Episode, error: str, *, again: bool) -> None:
        """Count an episode the driver never fully received; ``again``: its seed and options go first in the queue."""
        self.lost_episodes += 1
        self._lost.append({"uid": episode.uid, "worker": episode.worker, "node_id": self._worker_node.get(
            episode.worker), "seed": episode.seed, "options": episode.options, "error": error})
        if again:
            self._queue.appendleft((episode.seed, episode.options, episode.greedy))

    def _deliver(self, episode: _Episode, trajectory: Trajectory, records: list[StepRecord]) -> None:
        """Spool the episode (its trajectory and the StepRecords the worker built) and queue it for collect()."""
        trajectory.info["episode_uid"] = episode.uid
        if self.spool is not None:
            self.spool.put(episode.uid, (trajectory, records))  # durable before anything else looks at it
        self._ready.append((episode.uid, (trajectory, records)))

    def _start_probe(self, worker: int, since: float | None = None) -> None:
        """A worker failed: wait (without blocking) until Ray has it back, then re-send the policy."""
        limit = self.args.worker_max_restarts
        if limit >= 0 and self._errors_in_row[worker] > limit + 1:  # Ray has given up on it too
            self._retire(worker)
            return
        self._recovering.add(worker)
        handle = self.workers[worker]
        self._probes[handle.info.remote(worker % self._per_process)] = (worker, time.monotonic() if since is None
                                                                          else since, handle)

    def _probe_done(self, ref: Any) -> None:
        ray = _ray()
        worker, since, handle = self._probes.pop(ref)
        try:
            info = ray.get(ref)
        except ray.exceptions.RayError as exc:
            if handle is not self.workers[worker]:  # another device of its process had it started anew already
                self._start_probe(worker)
            elif isinstance(exc, ray.exceptions.ActorDiedError):
                self._retire(worker)
            else:
                self._probe_unavailable(worker, since)
            return
        self._probe_ok(worker, info)

    def _probe_unavailable(self, worker: int, since: float) -> None:
        """The worker is still restarting (ActorUnavailableError) or waiting for a slot: ask again shortly."""
        if self._no_slots_since is not None:
            since = time.monotonic()  # nowhere to place it: ray_node_wait_s bounds this wait, not the timeout
        if time.monotonic() - since > _RECOVERY_TIMEOUT_S:
            self._retire(worker)
        else:
            self._probe_later.append((worker, since, time.monotonic() + 0.5))

    def _probe_ok(self, worker: int, info: dict[str, Any]) -> None:
        """The worker answers: note its node (saying so when it moved) and send it the current policy."""
        self._recovering.discard(worker)
        node = str(info.get("node_id") or "")
        if node and self._worker_node.get(worker) not in (None, node):
            logger.warning("[coach-rl] ray: worker %d placed again, on node %s", worker,
                           self._node_names.get(node, node))
        if node:
            self._worker_node[worker] = node
        self.workers[worker].set_policy.remote(self.version, self._weights)

    def _retire(self, worker: int) -> None:
        """Ray gave up on ``worker``: start it anew when its node was lost (the host, not the worker, failed),
        else count it dead."""
        ray = _ray()
        node = self._worker_node.get(worker)
        if node is not None and (node in self.lost_nodes or node not in self._alive_nodes()):
            try:
                ray.kill(self.workers[worker], no_restart=True)
            except Exception:  # noqa: BLE001 - a dead actor cannot be killed twice
                pass
            group = worker // self._per_process
            self._start_actor(group)
            logger.warning("[coach-rl] ray: worker %d is started anew (Ray gave up restarting it after its node %s "
                           "was lost); it runs as soon as a device slot is free", worker,
                           self._node_names.get(node, node))
            for i in range(group * self._per_process, min((group + 1) * self._per_process, len(self.workers))):
                self._errors_in_row[i] = 0  # the others' calls on the old actor fail and re-probe the new one
                self._worker_node.pop(i, None)
            self._start_probe(worker)
            return
        self._dead.add(worker)
        self._recovering.discard(worker)

    def _head_reachable(self) -> bool:
        """Whether the head's GCS port accepts connections; logs (once) when it stops and when it is back."""
        host, _, port = self._gcs_address.rpartition(":")
        if not host or not port.isdigit():
            return True
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=2).close()
        except OSError:
            with self._cond:
                if self._head_lost_since is None:
                    self._head_lost_since = time.monotonic()
                    logger.warning("[coach-rl] ray: the head node's GCS at %s refuses connections; collect() stops "
                                   "with an error if it is not back within %g s (ray_head_lost_s)", self._gcs_address,
                                   self.args.ray_head_lost_s)
                self._cond.notify_all()
            return False
        with self._cond:
            if self._head_lost_since is not None:
                logger.warning("[coach-rl] ray: the head node's GCS at %s answers again", self._gcs_address)
                self._head_lost_since = None
        return True

    def _alive_nodes(self) -> set[str]:
        try:
            return {str(n["NodeID"]) for n in _ray().nodes() if n.get("Alive")}
        except Exception:  # noqa: BLE001 - the GCS is unreachable: count no node as alive
            return set()

    def _check_nodes(self) -> None:
        """Compare the cluster's nodes with the last look: log lost and joined device nodes, track the slots left."""
        ray = _ray()
        if not self._head_reachable():
            return  # ray.nodes() would block until Ray gives up on the GCS
        try:
            nodes = ray.nodes()
        except Exception:  # noqa: BLE001 - the GCS briefly unreachable: look again next time
            return
        resource = self.args.device_resource
        slots = {str(n["NodeID"]): float(n.get("Resources", {}).get(resource, 0.0)) if resource else 1.0
                 for n in nodes if n.get("Alive")}
        slots = {node: n for node, n in slots.items() if n > 0}
        what = repr(resource) if resource else "worker"
        with self._cond:
            self._node_names.update({str(n["NodeID"]): f"{str(n['NodeID'])[:12]} ({n.get('NodeManagerAddress', '?')})"
                                     for n in nodes})
            previous, self._slots = self._slots, slots
            if previous is not None:
                for node in sorted(previous.keys() - slots.keys()):
                    self.lost_nodes.append(node)
                    workers = sorted(w for w, n in self._worker_node.items() if n == node)
                    logger.warning("[coach-rl] ray: lost node %s, which had %g %s slots; its workers %s lose their "
                                   "episodes in flight (played again by other workers) and wait for a free slot",
                                   self._node_names[node], previous[node], what, workers)
                for node in sorted(slots.keys() - previous.keys()):
                    self.joined_nodes.append(node)
                    logger.warning("[coach-rl] ray: node %s joined with %g %s slots", self._node_names[node],
                                   slots[node], what)
            total = sum(slots.values())
            if total <= 0 and self._no_slots_since is None:
                self._no_slots_since = time.monotonic()
                logger.warning("[coach-rl] ray: no live node has a %s slot left; waiting up to %g s (ray_node_wait_s) "
                               "for a device node to join", what, self.args.ray_node_wait_s)
            elif total > 0 and self._no_slots_since is not None:
                logger.warning("[coach-rl] ray: %g %s slots again after %.0f s without", total, what,
                               time.monotonic() - self._no_slots_since)
                self._no_slots_since = None
            self._cond.notify_all()

    def _finish_batch(self, batch: DistributedRolloutBatch, seconds: float) -> None:
        stats = RolloutStats()
        names = {f.name for f in fields(RolloutStats)} - {"wall_seconds"}
        for s in self._stats:
            for name in names:
                if name in s and isinstance(s[name], (int, float)):
                    setattr(stats, name, getattr(stats, name) + s[name])
        self._stats = []
        stats.wall_seconds = seconds
        stats.episodes = len(batch.trajectories)
        stats.successes = float(sum(t.success for t in batch.trajectories))
        stats.truncated = sum(1 for t in batch.trajectories if t.truncated)
        stats.reset_failures += len(self._failures)
        batch.stats = stats
        batch.failures, self._failures = self._failures, []
        batch.lost, self._lost = self._lost, []
        counts = collections.Counter(batch.staleness)
        metrics: dict[str, float] = {
            "collector/staleness_mean": float(sum(batch.staleness) / len(batch.staleness)) if batch.staleness else 0.0,
            "collector/staleness_max": float(max(batch.staleness, default=0)),
            "collector/dropped_stale": float(batch.dropped_stale),
            "collector/worker_failures": float(self.worker_failures),
            "collector/workers_alive": float(len(self._alive())),
            "ray/workers_placed": float(len([i for i in self._alive() if i not in self._recovering])),
            "ray/worker_processes": float(len(self._handles)),
            "ray/lost_episodes": float(len(batch.lost)),
            "ray/nodes_lost": float(len(self.lost_nodes)),
            "ray/nodes_joined": float(len(self.joined_nodes)),
            "ray/device_slots": float(sum((self._slots or {}).values())),
            "collector/trajectories_per_minute": (60.0 * len(batch.trajectories) / seconds if seconds > 0 else math.nan),
        }
        for k, c in sorted(counts.items()):
            metrics[f"collector/staleness_{k}"] = float(c)
        batch.metrics = metrics
