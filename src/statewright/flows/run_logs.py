"""Task runs' log files: what ``get_run_logger()`` (and ``log_prints``) says inside a task run
goes to the file of its try, where the web UI and the API read task logs."""

from __future__ import annotations

import logging
import os
import threading
from typing import Any

_FORMAT = logging.Formatter("[%(asctime)s] %(levelname)s - %(message)s")


class TaskRunLogFiles(logging.Handler):
    """One handler per flow run: a record of a task run's logger goes to its try's file."""

    def __init__(self, template: str) -> None:
        super().__init__()
        self.template = template
        self.tries: dict[int, tuple[str, int]] = {}  # task run id → (task id, try number)
        self._files: dict[str, Any] = {}
        self._files_lock = threading.Lock()
        self.setFormatter(_FORMAT)

    def try_started(self, task_run_id: int, task_id: str, try_number: int) -> None:
        self.tries[task_run_id] = (task_id, try_number)

    def emit(self, record: logging.LogRecord) -> None:
        key = self.tries.get(getattr(record, "task_run_id", -1))
        if key is None:
            return
        path = self.template.format(task_id=key[0], try_number=key[1])
        try:
            with self._files_lock:
                fh = self._files.get(path)
                if fh is None:
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    fh = self._files[path] = open(path, "a", encoding="utf-8")
                fh.write(self.format(record) + "\n")
                fh.flush()
        except OSError:
            self.handleError(record)

    def close(self) -> None:
        with self._files_lock:
            for fh in self._files.values():
                fh.close()
            self._files.clear()
        super().close()


def attach(template: str | None) -> TaskRunLogFiles | None:
    if template is None:
        return None
    handler = TaskRunLogFiles(template)
    logger = logging.getLogger("statewright.task_runs")
    logger.addHandler(handler)
    if logger.level == logging.NOTSET or logger.level > logging.INFO:
        logger.setLevel(logging.INFO)
    return handler


def detach(handler: TaskRunLogFiles | None) -> None:
    if handler is not None:
        logging.getLogger("statewright.task_runs").removeHandler(handler)
        handler.close()
