"""``flow.serve(...)``: register the flow's schedule, then start the runs the scheduler creates.

The deployment and the schedule go to the database (through the backend); the scheduler creates
the flow's scheduled runs like a DAG's (queued); this process starts each queued run of the
flow in a process of its own (``python -m statewright.flows.entry``), which adopts the run.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from statewright.flows.backend import Backend, Deployment
from statewright.flows.runtime import open_backend

if TYPE_CHECKING:
    from statewright.flows.flows import Flow

log = logging.getLogger("statewright.flows.serve")
ADOPT_ENV = "STATEWRIGHT_FLOW_RUN_PK"
PARAMETERS_ENV = "STATEWRIGHT_FLOW_PARAMETERS"
sleep = time.sleep
"""How ``serve`` waits between polls: replaced here, not ``time.sleep`` for the whole process."""


def deployment_of(flow: Flow[..., Any], *, name: str | None, cron: str | None,
                  interval: float | timedelta | None, parameters: dict[str, Any] | None,
                  description: str | None, tags: Iterable[str] | None,
                  paused: bool) -> Deployment:
    """The deployment ``serve`` registers; a bad schedule or parameters are refused here."""
    if cron is not None and interval is not None:
        raise ValueError("serve() takes cron= or interval=, not both.")
    seconds = interval.total_seconds() if isinstance(interval, timedelta) else interval
    if seconds is not None and seconds <= 0:
        raise ValueError(f"serve(interval=...) must be a positive number of seconds; got "
                         f"{interval!r}.")
    params = dict(parameters or {})
    flow.bind((), params)  # parameters the flow does not take are refused now
    try:
        json.dumps(params)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"serve(parameters=...) must be JSON values: {exc}.") from None
    source = inspect.getsourcefile(flow.fn)
    if source is None:
        raise ValueError(f"Flow {flow.name!r} has no source file: serve() needs one to start "
                         "its runs.")
    return Deployment(flow.name, name or flow.name, f"{os.path.abspath(source)}:"
                      f"{flow.fn.__name__}", params, cron, seconds, description,
                      tuple(tags or ()), paused)


def start_queued_runs(backend: Backend, deployment: Deployment,
                      launch: Callable[[list[str], dict[str, str]], Any] | None = None) -> int:
    """Start every queued run of the flow in a process of its own; returns how many."""
    launch = launch or (lambda cmd, env: subprocess.Popen(cmd, env=env))
    started = 0
    for run in backend.queued_runs(deployment.flow_name):
        env = {**os.environ, ADOPT_ENV: str(run.run_pk),
               PARAMETERS_ENV: json.dumps({**deployment.parameters, **run.parameters})}
        launch([sys.executable, "-m", "statewright.flows.entry", deployment.entrypoint], env)
        started += 1
    return started


def serve_flow(flow: Flow[..., Any], *, name: str | None, cron: str | None,
               interval: float | timedelta | None, parameters: dict[str, Any] | None,
               description: str | None, tags: Iterable[str] | None, paused: bool,
               poll_seconds: float = 5.0) -> None:
    deployment = deployment_of(flow, name=name, cron=cron, interval=interval,
                               parameters=parameters, description=description, tags=tags,
                               paused=paused)
    backend = open_backend()
    started: list[subprocess.Popen[bytes]] = []

    def launch(cmd: list[str], env: dict[str, str]) -> None:
        started.append(subprocess.Popen(cmd, env=env))

    try:
        backend.register_deployment(deployment)
        log.info("serving %s (%s); waiting for its scheduled runs", deployment.name,
                 deployment.cron or f"every {deployment.interval_seconds}s")
        while True:
            start_queued_runs(backend, deployment, launch)
            started[:] = [p for p in started if p.poll() is None]  # finished ones reaped
            sleep(poll_seconds)
    except KeyboardInterrupt:
        log.info("stopped serving %s", deployment.name)
    finally:
        backend.close(finished=True)
