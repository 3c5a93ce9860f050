"""Task runners (Prefect's names): where a flow's submitted task runs execute.

``ThreadPoolTaskRunner`` (the default) runs them on threads of the flow's process.
``ProcessPoolTaskRunner`` runs each task's function in a pool of processes: its arguments and
its result cross to the other process with cloudpickle, and an argument that cannot is refused
by name. Either way the flow's process records the task run's states.
"""

from __future__ import annotations

import concurrent.futures as cf
import multiprocessing
from typing import Any

import cloudpickle


class TaskArgumentNotSerializable(TypeError):
    """A task's argument cannot be sent to the process that would run it."""


class ThreadPoolTaskRunner:
    def __init__(self, max_workers: int | None = None) -> None:
        if max_workers is not None and max_workers < 1:
            raise ValueError(f"max_workers must be ≥ 1; got {max_workers!r}.")
        self.max_workers = max_workers


class ProcessPoolTaskRunner(ThreadPoolTaskRunner):
    """Task functions run in a pool of ``max_workers`` processes."""

    def __init__(self, max_workers: int | None = None) -> None:
        super().__init__(max_workers)
        self._pool: cf.ProcessPoolExecutor | None = None

    def call(self, task_name: str, fn: Any, params: dict[str, Any]) -> Any:
        for name, value in params.items():
            try:
                cloudpickle.dumps(value)
            except Exception as exc:
                raise TaskArgumentNotSerializable(
                    f"Task {task_name!r}: argument {name!r} ({type(value).__name__}) cannot be "
                    f"sent to another process ({type(exc).__name__}: {exc}). Pass a value that "
                    "pickles, or run this task on the default ThreadPoolTaskRunner."
                ) from None
        if self._pool is None:
            self._pool = cf.ProcessPoolExecutor(
                max_workers=self.max_workers, mp_context=multiprocessing.get_context("spawn"))
        payload = cloudpickle.dumps((fn, params))
        return cloudpickle.loads(self._pool.submit(_invoke, payload).result())

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def _invoke(payload: bytes) -> bytes:
    fn, params = cloudpickle.loads(payload)
    return bytes(cloudpickle.dumps(fn(**params)))
