"""A multi-node Ray cluster on one machine: a head and device nodes, each its own ``ray start --block`` process.

What the multi-node tests and ``tools/bench/distributed_scaling.py`` run, and a way to rehearse the README's
multi-machine recipe on one host: every node gets its own temp dir and free ports on 127.0.0.1, token
authentication is shared through the environment, and a node is stopped by killing its process tree (``ray stop``
would stop every Ray process on the machine).
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["LocalRayCluster", "free_ports"]


def free_ports(n: int) -> list[int]:
    """``n`` TCP ports free on 127.0.0.1 right now."""
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class LocalRayCluster:
    """Head and device nodes as separate ``ray start --block`` processes under ``root`` (see the module docstring).

    ``token``: the auth token every node and driver share (``env`` carries ``RAY_AUTH_MODE=token`` and
    ``RAY_AUTH_TOKEN``); a new random one by default, or None to keep this process's own ``RAY_AUTH_*`` settings.
    """

    def __init__(self, root: str | os.PathLike[str], *, token: str | None = "", object_store_memory: int = 100_000_000,
                 start_timeout: float = 90.0) -> None:
        self.root = Path(root)
        self.env = {**os.environ, "OMP_NUM_THREADS": "1", "RAY_USAGE_STATS_ENABLED": "0"}
        self.env.pop("RAY_ADDRESS", None)
        if token is not None:
            self.token = token or secrets.token_hex(32)
            self.env.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=self.token)
        self.object_store_memory = int(object_store_memory)
        self.start_timeout = float(start_timeout)
        self.nodes: dict[str, subprocess.Popen] = {}
        self.address = ""

    def _start(self, name: str, extra: list[str], env: dict[str, str] | None = None) -> subprocess.Popen:
        ports = free_ports(6)
        ray_bin = str(Path(sys.executable).with_name("ray"))
        args = [ray_bin, "start", "--block", "--node-ip-address=127.0.0.1", "--num-cpus=0", "--disable-usage-stats",
                f"--temp-dir={self.root / name}", f"--node-manager-port={ports[0]}",
                f"--object-manager-port={ports[1]}", f"--metrics-export-port={ports[2]}",
                f"--dashboard-agent-listen-port={ports[3]}", f"--dashboard-agent-grpc-port={ports[4]}",
                f"--runtime-env-agent-port={ports[5]}", f"--object-store-memory={self.object_store_memory}", *extra]
        log = (self.root / f"{name}.log").open("w")
        proc = subprocess.Popen(args, env=env or self.env, stdout=log, stderr=subprocess.STDOUT,
                                start_new_session=True)
        self.nodes[name] = proc
        return proc

    def start_head(self, port: int | None = None, *, fast_health_checks: bool = False) -> None:
        """The head, on ``port`` (a free one when None), without device slots. ``fast_health_checks``: the GCS
        declares a node dead after 5 missed 1 s health checks instead of Ray's slower default."""
        port = port or free_ports(1)[0]
        client, dashboard = free_ports(2)
        env = dict(self.env)
        if fast_health_checks:
            env.update(RAY_health_check_period_ms="1000", RAY_health_check_failure_threshold="5")
        self._start("head", ["--head", f"--port={port}", f"--ray-client-server-port={client}",
                             f"--dashboard-port={dashboard}", "--include-dashboard=false", "--resources={}"], env)
        self.address = f"127.0.0.1:{port}"
        self.wait_started("head")

    def start_device_node(self, name: str, slots: int, wait: bool = True) -> None:
        """A node declaring ``slots`` ``android_device`` resources, joined to the head."""
        self._start(name, [f"--address={self.address}", f'--resources={{"android_device": {slots}}}'])
        if wait:
            self.wait_started(name)

    def wait_started(self, name: str) -> None:
        """Wait until node ``name`` says it started; a RuntimeError with the end of its log when it does not."""
        deadline = time.monotonic() + self.start_timeout
        log = self.root / f"{name}.log"
        while time.monotonic() < deadline:
            if "Ray runtime started" in log.read_text(errors="replace"):
                return
            if self.nodes[name].poll() is not None:
                break
            time.sleep(0.2)
        raise RuntimeError(f"ray node {name} did not start:\n{log.read_text(errors='replace')[-3000:]}")

    def processes(self, name: str) -> list[Any]:
        """Every live process of a node: its ``ray start``, the GCS/raylet/agents and the workers the raylet
        started (workers run in their own process group, so the tree is walked, not the group)."""
        import psutil

        try:
            root = psutil.Process(self.nodes[name].pid)
            return [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def device_workers(self, name: str) -> int:
        """DeviceWorker actor processes running on a node."""
        import psutil

        count = 0
        for proc in self.processes(name):
            try:
                count += any("DeviceWorker" in part for part in [proc.name(), *proc.cmdline()])
            except psutil.Error:
                pass
        return count

    def cpu_seconds(self) -> dict[str, float]:
        """CPU seconds used so far by each node's processes (its ``ray start``, raylet, workers...)."""
        import psutil

        out = {}
        for name in self.nodes:
            total = 0.0
            for proc in self.processes(name):
                try:
                    t = proc.cpu_times()
                    total += t.user + t.system
                except psutil.Error:
                    pass
            out[name] = total
        return out

    def kill(self, name: str) -> None:
        """SIGKILL every process of the node (the host dies)."""
        import psutil

        for proc in self.processes(name):
            try:
                proc.kill()
            except psutil.Error:
                pass
        try:
            os.killpg(self.nodes[name].pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.nodes[name].wait(timeout=30)

    def teardown(self) -> None:
        """Kill every node."""
        for name in list(self.nodes):
            self.kill(name)
