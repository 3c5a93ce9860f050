"""Task runners (Prefect's names): where a flow's submitted task runs execute.

``ThreadPoolTaskRunner`` (the default) runs them on threads of the flow's process.
``ProcessPoolTaskRunner`` runs each task's function in a pool of processes: its arguments and
its result cross to the other process with cloudpickle, and an argument that cannot is refused
by name. Either way the flow's process records the task run's states.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures as cf
import inspect
import multiprocessing
import os
import threading
import uuid
from typing import Any

import cloudpickle


class TaskArgumentNotSerializable(TypeError):
    """A task's argument cannot be sent to the process that would run it."""


class ThreadPoolTaskRunner:
    def __init__(self, max_workers: int | None = None) -> None:
        if max_workers is not None and max_workers < 1:
            raise ValueError(f"max_workers must be ≥ 1; got {max_workers!r}.")
        self.max_workers = max_workers


class ConcurrentTaskRunner(ThreadPoolTaskRunner):
    """Prefect 2's name of the thread runner (Prefect 3 keeps it as an alias)."""


class SequentialTaskRunner(ThreadPoolTaskRunner):
    """Prefect 2's runner of one task call at a time: the thread runner with one worker."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)


class RemoteTaskRunner(ThreadPoolTaskRunner):
    """A runner whose task functions run elsewhere: ``call`` sends one and returns its result
    (or raises its exception); the flow's threads wait for the calls."""

    def call(self, task_name: str, fn: Any, params: dict[str, Any]) -> Any:
        raise NotImplementedError


def payload_of(task_name: str, fn: Any, params: dict[str, Any]) -> bytes:
    """The call as bytes for another process; an argument that cannot go is named."""
    for name, value in params.items():
        try:
            cloudpickle.dumps(value)
        except Exception as exc:
            raise TaskArgumentNotSerializable(
                f"Task {task_name!r}: argument {name!r} ({type(value).__name__}) cannot be "
                f"sent to another process ({type(exc).__name__}: {exc}). Pass a value that "
                "pickles, or run this task on the default ThreadPoolTaskRunner."
            ) from None
    try:
        return bytes(cloudpickle.dumps((fn, params)))
    except Exception as exc:
        raise TaskArgumentNotSerializable(
            f"Task {task_name!r}: its function cannot be sent to another process "
            f"({type(exc).__name__}: {exc}).") from None


class ProcessPoolTaskRunner(RemoteTaskRunner):
    """Task functions run in a pool of ``max_workers`` processes."""

    def __init__(self, max_workers: int | None = None) -> None:
        super().__init__(max_workers)
        self._pool: cf.ProcessPoolExecutor | None = None

    def call(self, task_name: str, fn: Any, params: dict[str, Any]) -> Any:
        payload = payload_of(task_name, fn, params)
        if self._pool is None:
            self._pool = cf.ProcessPoolExecutor(
                max_workers=self.max_workers, mp_context=multiprocessing.get_context("spawn"))
        return cloudpickle.loads(self._pool.submit(invoke, payload).result())

    def shutdown(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


def invoke(payload: bytes) -> bytes:
    """Run a call made by ``payload_of``; its result as bytes."""
    fn, params = cloudpickle.loads(payload)
    value = fn(**params)
    if inspect.iscoroutine(value):  # an async task's coroutine runs in this process
        value = asyncio.run(value)
    return bytes(cloudpickle.dumps(value))


FLOW_CALL_TASK = "statewright.run_flow_task_call"
"""The Celery task of ``statewright celery-worker --flow-calls`` that runs one task call."""
REPLY_PREFIX = "statewright:flow-call:"


class CeleryTaskRunner(RemoteTaskRunner):
    """Task calls run on ``statewright celery-worker --flow-calls`` processes: each call is a
    message to the Celery ``queue`` (a Redis broker: ``broker_url``, default
    ``STATEWRIGHT_CELERY_BROKER_URL``); the worker runs the function in a process of its pool
    and puts the result (or the exception) back on Redis, where the flow's thread waits for it.
    The flow's process records the task run's states, as with any runner. ``max_workers``:
    calls in flight at once (threads of the flow waiting); ``timeout``: seconds to wait for a
    reply (None: no limit)."""

    def __init__(self, broker_url: str | None = None, queue: str = "default",
                 max_workers: int | None = None, timeout: float | None = None) -> None:
        super().__init__(max_workers)
        url = broker_url or os.environ.get("STATEWRIGHT_CELERY_BROKER_URL",
                                           "redis://127.0.0.1:6379/0")
        if not url.startswith(("redis://", "rediss://")):
            raise ValueError(f"CeleryTaskRunner needs a Redis broker (redis://...), where the "
                             f"results come back; got {url!r}.")
        self.broker_url, self.queue, self.timeout = url, queue, timeout
        self._app: Any = None
        self._redis: Any = None
        self._lock = threading.Lock()

    def _clients(self) -> tuple[Any, Any]:
        with self._lock:
            if self._app is None:
                import redis
                from celery import Celery

                app = Celery("statewright-flows", broker=self.broker_url, set_as_current=False)
                app.conf.update(task_serializer="json", accept_content=["json"],
                                result_backend=None, task_ignore_result=True)
                self._app = app  # the reply waits as long as the call runs
                self._redis = redis.Redis.from_url(self.broker_url, socket_timeout=None)
            return self._app, self._redis

    def call(self, task_name: str, fn: Any, params: dict[str, Any]) -> Any:
        payload = base64.b64encode(payload_of(task_name, fn, params)).decode()
        app, client = self._clients()
        reply = uuid.uuid4().hex
        app.send_task(FLOW_CALL_TASK, args=[payload, reply, self.broker_url], queue=self.queue,
                      routing_key=self.queue, ignore_result=True,
                      argsrepr=f"({task_name})")
        got = client.blpop([REPLY_PREFIX + reply], timeout=self.timeout or 0)
        if got is None:
            raise TimeoutError(f"Task {task_name!r}: no reply from a Celery worker on queue "
                               f"{self.queue!r} within {self.timeout} s (is "
                               "`statewright celery-worker --flow-calls` running?).")
        ok, value = cloudpickle.loads(got[1])
        if ok:
            return cloudpickle.loads(value)
        raise value

    def shutdown(self) -> None:
        with self._lock:
            if self._app is not None:
                self._app.close()
                self._redis.close()
            self._app = self._redis = None


def reply_of(payload_b64: str) -> bytes:
    """What a worker puts back for one call: ``(True, result bytes)`` or ``(False, error)``."""
    try:
        return bytes(cloudpickle.dumps((True, invoke(base64.b64decode(payload_b64)))))
    except Exception as exc:
        return error_reply(exc)


def error_reply(exc: BaseException) -> bytes:
    try:
        return bytes(cloudpickle.dumps((False, exc)))
    except Exception:
        return bytes(cloudpickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}"))))


class DaskTaskRunner(RemoteTaskRunner):
    """Task calls on a ``dask.distributed`` cluster, as prefect-dask's runner: a
    ``LocalCluster`` of worker processes made for the flow run (``cluster_class`` and
    ``cluster_kwargs`` choose another), or the running cluster at ``address``. Each call is one
    Dask task (its function and arguments sent with cloudpickle, as to any process); Dask runs
    it again on another worker when its worker dies. The flow's process records the task run's
    states, as with every runner. ``max_workers``: calls in flight at once."""

    def __init__(self, cluster_class: Any = None, cluster_kwargs: dict[str, Any] | None = None,
                 address: str | None = None, client_kwargs: dict[str, Any] | None = None,
                 adapt_kwargs: dict[str, Any] | None = None,
                 max_workers: int | None = None) -> None:
        super().__init__(max_workers)
        if address is not None and cluster_class is not None:
            raise ValueError("DaskTaskRunner takes an address or a cluster_class, not both.")
        self.cluster_class, self.address = cluster_class, address
        self.cluster_kwargs = dict(cluster_kwargs or {})
        self.client_kwargs = dict(client_kwargs or {})
        self.adapt_kwargs = dict(adapt_kwargs or {})
        self._client: Any = None
        self._cluster: Any = None
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        """The ``distributed.Client`` (connected on first use)."""
        with self._lock:
            if self._client is None:
                from distributed import Client, LocalCluster

                address = self.address
                if address is None:
                    make = self.cluster_class or LocalCluster
                    if isinstance(make, str):  # "dask_kubernetes.KubeCluster"
                        module, _, name = make.rpartition(".")
                        make = getattr(__import__(module, fromlist=[name]), name)
                    self._cluster = make(**self.cluster_kwargs)
                    if self.adapt_kwargs:
                        self._cluster.adapt(**self.adapt_kwargs)
                    address = self._cluster
                self._client = Client(address, **self.client_kwargs)
            return self._client

    def call(self, task_name: str, fn: Any, params: dict[str, Any]) -> Any:
        payload = payload_of(task_name, fn, params)
        future = self.client.submit(invoke, payload, pure=False,
                                    key=f"{task_name}-{uuid.uuid4().hex[:8]}")
        return cloudpickle.loads(future.result())

    def shutdown(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
            if self._cluster is not None:
                self._cluster.close()
            self._client = self._cluster = None
