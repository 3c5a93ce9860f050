"""A flow run's task-run log files: every line reaches its try's file, in order and at once
(unbuffered), while the handler keeps only a few descriptors open however many tries write."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from statewright.flows import run_logs


def _record(task_run_id: int, msg: str) -> logging.LogRecord:
    record = logging.LogRecord("statewright.task_runs", logging.INFO, __file__, 1, msg, None,
                               None)
    record.task_run_id = task_run_id
    return record


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_many_tries_write_their_lines_with_few_descriptors(tmp_path: Path) -> None:
    template = str(tmp_path / "run" / "task_id={task_id}" / "attempt={try_number}.log")
    handler = run_logs.TaskRunLogFiles(template)
    n = 3 * run_logs._OPEN_FILES
    for i in range(n):
        handler.try_started(i, f"t{i}", 1)
    before = _open_descriptors()
    for line in range(3):
        for i in range(n):
            handler.handle(_record(i, f"line {line} of t{i} é"))
            if i == 0:  # written through at once, not held in a buffer
                text = (tmp_path / "run" / "task_id=t0" / "attempt=1.log").read_text()
                assert text.endswith(f"INFO - line {line} of t0 é\n")
    assert _open_descriptors() - before <= run_logs._OPEN_FILES
    for i in range(n):
        lines = (tmp_path / "run" / f"task_id=t{i}" / "attempt=1.log").read_text().splitlines()
        assert [ln.split(" - ", 1)[1] for ln in lines] == [
            f"line {k} of t{i} é" for k in range(3)]
    handler.close()
    assert _open_descriptors() <= before
    handler.handle(_record(5, "after close"))  # opened again, not lost
    assert "after close" in (tmp_path / "run" / "task_id=t5" / "attempt=1.log").read_text()
    handler.close()
