"""Run AndroidLab's own offline evaluator over a folder of exported traces; print each task's result as JSON.

Started by test_androidlab_own_evaluator.py in a subprocess whose working folder is the vendored
Android-Lab checkout (its evaluator opens files by relative path). It does what its
``generate_result.evaluate_input_dir`` does for one agent folder, with its own ``AppConfig``,
``Evaluation_Task`` and judges, but only for the task ids given and only for operation tasks: its
query tasks call an LLM judge over the network, which these machines cannot reach.

    python androidlab_evaluator.py TRACES_FOLDER OUTPUT_FOLDER TASK_ID...
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import os
import sys
import uuid
from glob import glob


def _unique_node_names() -> None:
    """Make AndroidLab's node names unique within a tree, so a run is repeatable.

    Its XML compression names every node ``"n"`` + the first 4 hex digits of ``uuid.uuid4()``; two
    siblings that draw the same name become one list in the ``xmltodict`` tree its judges walk, and the
    judges then miss those nodes' texts (about 1 screen in 200 of a run of the re-created tasks, so now
    and then a passing task failed). The digits come from a counter here instead; nothing else changes.
    """
    counter = itertools.count()
    uuid.uuid4 = lambda: uuid.UUID(int=(next(counter) % 0x10000) << 112)


def main() -> int:
    """Evaluate, then print ``{task_id: result dict}`` as one JSON line on stdout."""
    sys.dont_write_bytecode = True  # the vendored folder is read-only input
    sys.path.insert(0, os.getcwd())
    _unique_node_names()
    traces_folder, output_folder, *task_ids = sys.argv[1:]
    with contextlib.redirect_stdout(io.StringIO()):  # its modules print while importing
        from evaluation.configs import AppConfig
        from evaluation.task import Evaluation_Task
        from generate_result import find_all_traces_files

    args = argparse.Namespace(judge_model="glm4", api_base="", api_key="", output_folder=output_folder)
    traces = find_all_traces_files(traces_folder)
    wanted = set(task_ids)
    os.makedirs(output_folder, exist_ok=True)
    log = io.StringIO()
    with contextlib.redirect_stdout(log):
        for config_path in sorted(glob("evaluation/config/*.yaml")):
            config = AppConfig(config_path, output_dir=output_folder)
            task = Evaluation_Task(config, traces, args, detail=True)
            task.task_list = [t for t in task.task_list if t.get("task_id") in wanted
                              and config.metrics_type.get(t.get("task_id")) != "query_detect"]
            if task.task_list:
                task.evaluate(max_workers=1)
    results = {}
    path = os.path.join(output_folder, "results.jsonl")
    if os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                results[row["task_id"]] = row["result"]
    print(json.dumps({"results": results, "log": log.getvalue()[-4000:]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
