"""Runs' log files: what ``get_run_logger()`` (and ``log_prints``) says inside a task run goes
to the file of its try, where the web UI and the API read task logs; what the flow run itself
says (its start, prints in the flow's body, its final state) goes to ``flow_run.log`` in the
run's folder, beside its task runs' folders."""

from __future__ import annotations

import logging
import os
import threading
from collections import OrderedDict
from datetime import datetime

from statewright.sdk.masking import redact


class _Formatter(logging.Formatter):
    """``[2026-01-01 12:00:00,123456] INFO - message``: microseconds, so that the lines of a
    run's files interleave in the order they were written."""

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return datetime.fromtimestamp(record.created).strftime("%Y-%m-%d %H:%M:%S,%f")


_FORMAT = _Formatter("[%(asctime)s] %(levelname)s - %(message)s")
_STAMP = len("[2026-01-01 12:00:00,123456]")
FLOW_RUN_LOG = "flow_run.log"
_OPEN_FILES = 16
"""Descriptors a flow run's handler keeps open, the most recently written files: a flow of
thousands of task runs holds no more than this, and the lines of the tries running now do not
open their file each (an ``open()`` per line was most of a log line's cost)."""
_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)


def flow_run_log_path(template: str) -> str:
    """The flow run's own log file, from its task runs' path template."""
    return os.path.join(template.split("task_id={task_id}")[0], FLOW_RUN_LOG)


class TaskRunLogFiles(logging.Handler):
    """One handler per flow run: a record of a task run's logger goes to its try's file."""

    def __init__(self, template: str, flow_run_pk: int | None = None) -> None:
        super().__init__()
        self.template = template
        self.flow_run_pk = flow_run_pk
        self.tries: dict[int, tuple[str, int]] = {}  # task run id → (task id, try number)
        self._fds: OrderedDict[str, int] = OrderedDict()  # path → descriptor, LRU order
        self._files_lock = threading.Lock()
        self.setFormatter(_FORMAT)

    def try_started(self, task_run_id: int, task_id: str, try_number: int) -> None:
        self.tries[task_run_id] = (task_id, try_number)

    def emit(self, record: logging.LogRecord) -> None:
        key = self.tries.get(getattr(record, "task_run_id", -1))
        if key is not None:
            path = self.template.format(task_id=key[0], try_number=key[1])
        elif (not hasattr(record, "task_run_id") and self.flow_run_pk is not None
              and getattr(record, "flow_run_id", None) == self.flow_run_pk):
            path = flow_run_log_path(self.template)
        else:
            return
        line = (str(redact(self.format(record))) + "\n").encode("utf-8", "surrogateescape")
        try:
            # Unbuffered appends (a reader sees each line at once) to one of at most
            # ``_OPEN_FILES`` descriptors kept: a flow run of thousands of task runs would
            # otherwise hold a descriptor per try until it ends (and run out of them).
            with self._files_lock:
                os.write(self._fd(path), line)
        except OSError:
            self.handleError(record)

    def _fd(self, path: str) -> int:
        fds = self._fds
        fd = fds.get(path)
        if fd is not None:
            fds.move_to_end(path)
            return fd
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, _FLAGS, 0o666)
        fds[path] = fd
        if len(fds) > _OPEN_FILES:
            os.close(fds.popitem(last=False)[1])
        return fd

    def close(self) -> None:
        with self._files_lock:
            while self._fds:
                os.close(self._fds.popitem()[1])
        super().close()


_LOGGERS = ("statewright.task_runs", "statewright.flow_runs")


def attach(template: str | None, flow_run_pk: int | None = None) -> TaskRunLogFiles | None:
    if template is None:
        return None
    handler = TaskRunLogFiles(template, flow_run_pk)
    for name in _LOGGERS:
        logger = logging.getLogger(name)
        logger.addHandler(handler)
        if logger.level == logging.NOTSET or logger.level > logging.INFO:
            logger.setLevel(logging.INFO)
    return handler


def detach(handler: TaskRunLogFiles | None) -> None:
    if handler is not None:
        for name in _LOGGERS:
            logging.getLogger(name).removeHandler(handler)
        handler.close()


def run_log_lines(run_folder: str) -> list[str]:
    """Every line a flow run logged, its own and its task runs' tries', in time order; a task
    run's line is prefixed with the task run and try (``fetch-0 #1``). A record's continuation
    lines (a traceback) stay with it."""
    records: list[tuple[str, int, str]] = []
    sources = [(os.path.join(run_folder, FLOW_RUN_LOG), "")]
    if os.path.isdir(run_folder):
        for task_dir in sorted(os.listdir(run_folder)):
            if not task_dir.startswith("task_id="):
                continue
            folder = os.path.join(run_folder, task_dir)
            for name in sorted(os.listdir(folder)):
                if name.startswith("attempt=") and name.endswith(".log"):
                    label = f"{task_dir[len('task_id='):]} #{name[len('attempt='):-4]} "
                    sources.append((os.path.join(folder, name), label))
    for order, (path, label) in enumerate(sources):
        for record in _records(path):
            records.append((record[:_STAMP], order, label + record if label else record))
    records.sort(key=lambda r: (r[0], r[1]))
    return [r[2] for r in records]


def _records(path: str) -> list[str]:
    """A log file's records: a line starting with ``[`` and its continuation lines."""
    if not os.path.isfile(path):
        return []
    out: list[str] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh.read().splitlines():
            if line.startswith("[") or not out:
                out.append(line)
            else:
                out[-1] += "\n" + line
    return out
