"""Futures of submitted task runs (Prefect's ``PrefectFuture``), ``wait`` and ``as_completed``."""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from statewright.flows.states import Pending, State


class TaskRunFuture:
    """A task run submitted to the flow's task runner."""

    def __init__(self, future: cf.Future[State], task_name: str) -> None:
        self._future = future
        self.task_name = task_name
        self.task_run_id: int | None = None

    @property
    def state(self) -> State:
        """The task run's state now (Pending until it has finished)."""
        if self._future.done():
            return self._future.result()
        return Pending()

    def wait(self, timeout: float | None = None) -> None:
        cf.wait([self._future], timeout=timeout)

    def result(self, timeout: float | None = None, raise_on_failure: bool = True) -> Any:
        try:
            state = self._future.result(timeout=timeout)
        except cf.TimeoutError:
            raise TimeoutError(
                f"Task run {self.task_name!r} did not finish within {timeout} seconds."
            ) from None
        return state.result(raise_on_failure=raise_on_failure)

    def done(self) -> bool:
        return self._future.done()

    def add_done_callback(self, fn: Any) -> None:
        self._future.add_done_callback(lambda _f: fn(self))

    def __repr__(self) -> str:
        return f"TaskRunFuture(task={self.task_name!r}, state={self.state!r})"


class PrefectFutureList(list[TaskRunFuture]):
    """The futures of ``Task.map``: a list with ``wait()`` and ``result()``."""

    def wait(self, timeout: float | None = None) -> None:
        wait(list(self), timeout=timeout)

    def result(self, timeout: float | None = None, raise_on_failure: bool = True) -> list[Any]:
        return [f.result(timeout=timeout, raise_on_failure=raise_on_failure) for f in self]


@dataclass(frozen=True)
class DoneAndNotDoneFutures:
    done: set[TaskRunFuture]
    not_done: set[TaskRunFuture]


def wait(futures: Iterable[TaskRunFuture], timeout: float | None = None) -> DoneAndNotDoneFutures:
    """Wait for futures to finish (Prefect's ``wait``); returns which did and which did not."""
    futures = list(futures)
    for f in futures:
        if not isinstance(f, TaskRunFuture):
            raise TypeError(f"wait() takes futures of submitted task runs; got {f!r}.")
    by_inner = {f._future: f for f in futures}
    done, not_done = cf.wait(list(by_inner), timeout=timeout)
    return DoneAndNotDoneFutures({by_inner[d] for d in done}, {by_inner[n] for n in not_done})


def as_completed(futures: Iterable[TaskRunFuture], timeout: float | None = None
                 ) -> Iterator[TaskRunFuture]:
    by_inner = {f._future: f for f in futures}
    for inner in cf.as_completed(list(by_inner), timeout=timeout):
        yield by_inner[inner]
