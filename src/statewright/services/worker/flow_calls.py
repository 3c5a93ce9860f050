"""Task calls of flows on Celery workers (``CeleryTaskRunner``): ``statewright celery-worker
--flow-calls``.

A message names one call: the function and its arguments (cloudpickled, base64 in the JSON
message), a reply key and the Redis URL to reply to. The worker runs the call in a process of
its own pool (a call that crashes its process ends in an error reply, never the worker) and
pushes the result, or the exception, to the reply key, where the flow's thread waits. The flow's
process records the task run's states, as for every runner. The messages carry code: start the
worker with ``--flow-calls`` only on a broker that only trusted flows write to.
"""

from __future__ import annotations

import concurrent.futures as cf
import logging
import multiprocessing
import threading

from celery import Celery

from statewright.flows.task_runners import FLOW_CALL_TASK, REPLY_PREFIX, error_reply, reply_of

log = logging.getLogger("statewright.worker.flow_calls")
REPLY_TTL_SECONDS = 3600


class FlowCalls:
    def __init__(self, processes: int) -> None:
        self.processes = max(1, processes)
        self._pool: cf.ProcessPoolExecutor | None = None
        self._lock = threading.Lock()

    def _executor(self) -> cf.ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = cf.ProcessPoolExecutor(
                    self.processes, mp_context=multiprocessing.get_context("spawn"))
            return self._pool

    def run(self, payload: str) -> bytes:
        try:
            return self._executor().submit(reply_of, payload).result()
        except cf.process.BrokenProcessPool as exc:
            with self._lock:  # the call's process died: a new pool for the next calls
                self._pool = None
            return error_reply(RuntimeError(f"the task call's process died ({exc})"))

    def register(self, app: Celery) -> None:
        calls = self

        @app.task(name=FLOW_CALL_TASK, acks_late=True, ignore_result=True)
        def run_flow_task_call(payload: str, reply_key: str, reply_url: str) -> None:
            import redis

            reply = calls.run(payload)
            client = redis.Redis.from_url(reply_url)
            try:
                key = REPLY_PREFIX + reply_key
                client.rpush(key, reply)
                client.expire(key, REPLY_TTL_SECONDS)
            finally:
                client.close()

    def stop(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
                self._pool = None


def register_flow_calls(app: Celery, processes: int) -> FlowCalls:
    calls = FlowCalls(processes)
    calls.register(app)
    log.info("accepting flows' task calls (%s)", FLOW_CALL_TASK)
    return calls


__all__ = ["FlowCalls", "register_flow_calls"]
