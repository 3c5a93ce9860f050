"""What a flow run says, as Prefect 3 says it: on the console and in the run's log files.

A top-level flow run logs its start (flow and run name, run id, the UI's link when a server
answers), each task run's start and final state, a failed try's exception with its traceback,
``print`` under ``log_prints``, and its own final state::

    12:00:00.101 | INFO    | Flow run 'crimson-fox' - Beginning flow run 'crimson-fox' for ...
    12:00:00.180 | INFO    | Task run 'fetch-0' - Finished in state Completed()
    12:00:00.250 | INFO    | Flow run 'crimson-fox' - Finished in state Completed()

The level is ``PREFECT_LOGGING_LEVEL`` (or ``STATEWRIGHT_LOGGING_LEVEL``; default INFO);
``PREFECT_LOGGING_TO_CONSOLE=false`` keeps the console quiet (the log files still get every
line). Secrets registered with the masker never reach either: each line is redacted.
"""

from __future__ import annotations

import logging
import os
import socket
import sys
import traceback
from typing import TYPE_CHECKING, Any

from statewright.sdk.masking import redact

if TYPE_CHECKING:
    from statewright.flows.context import FlowRunContext, TaskRunContext
    from statewright.flows.states import State

FLOW_LOGGER = "statewright.flow_runs"
TASK_LOGGER = "statewright.task_runs"
_FORMAT = "%(asctime)s.%(msecs)03d | %(levelname)-7s | %(run_label)s - %(message)s"
_DATE_FORMAT = "%H:%M:%S"
_FALSE = {"0", "false", "no", "off"}


class RunFormatter(logging.Formatter):
    """Prefect's line: time, level, which run, the message; every line masked."""

    def __init__(self) -> None:
        super().__init__(_FORMAT, _DATE_FORMAT)

    def format(self, record: logging.LogRecord) -> str:
        record.run_label = run_label(record)
        return str(redact(super().format(record)))


def run_label(record: logging.LogRecord) -> str:
    task_run = getattr(record, "task_run_name", None)
    if task_run is not None:
        return f"Task run {task_run!r}"
    flow_run = getattr(record, "flow_run_name", None)
    if flow_run is not None:
        return f"Flow run {flow_run!r}"
    return record.name


def logging_level() -> int:
    name = (os.environ.get("PREFECT_LOGGING_LEVEL")
            or os.environ.get("STATEWRIGHT_LOGGING_LEVEL") or "INFO")
    level = logging.getLevelName(name.strip().upper())
    return level if isinstance(level, int) else logging.INFO


def _to_console() -> bool:
    value = (os.environ.get("PREFECT_LOGGING_TO_CONSOLE")
             or os.environ.get("STATEWRIGHT_LOGGING_TO_CONSOLE") or "true")
    return value.strip().lower() not in _FALSE


def attach() -> logging.Handler | None:
    """The console handler of a top-level flow run (None when the console is off)."""
    level = logging_level()
    for name in (FLOW_LOGGER, TASK_LOGGER):
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET or logger.level > level:
            logger.setLevel(level)
    if not _to_console():
        return None
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(RunFormatter())
    handler.setLevel(level)
    for name in (FLOW_LOGGER, TASK_LOGGER):
        logging.getLogger(name).addHandler(handler)
    return handler


def detach(handler: logging.Handler | None) -> None:
    if handler is None:
        return
    for name in (FLOW_LOGGER, TASK_LOGGER):
        logging.getLogger(name).removeHandler(handler)
    handler.flush()


# -- the engine's lines ------------------------------------------------------------------------

def _flow_logger(ctx: FlowRunContext) -> logging.LoggerAdapter[logging.Logger]:
    return logging.LoggerAdapter(logging.getLogger(FLOW_LOGGER), {
        "flow_run_id": ctx.flow_run.id, "flow_run_name": ctx.flow_run.name,
        "flow_name": ctx.flow.name})


def _task_line(tctx: TaskRunContext, level: int, msg: str, *args: Any) -> None:
    """A task run's line: a record handled as ``Logger.log`` would, without looking up the
    caller's frame (the engine's lines need no source line; two lines per task run, looking it
    up was a good part of their cost)."""
    logger = logging.getLogger(TASK_LOGGER)
    if not logger.isEnabledFor(level):
        return
    logger.handle(logger.makeRecord(TASK_LOGGER, level, __file__, 0, msg, args, None, extra={
        "task_run_id": tctx.task_run.id, "task_run_name": tctx.task_run.name,
        "flow_run_id": tctx.task_run.flow_run_id, "task_name": tctx.task.name}))


def flow_run_started(ctx: FlowRunContext, ui_url: str | None) -> None:
    log = _flow_logger(ctx)
    log.info("Beginning flow run %r for flow %r", ctx.flow_run.name, ctx.flow.name)
    if ctx.handle.run_id != ctx.flow_run.name:
        log.info("Flow run id %s", ctx.handle.run_id)
    if ui_url is not None:
        log.info("View at %s", ui_url)


def flow_run_failed(ctx: FlowRunContext, exc: BaseException, retry: str | None) -> None:
    suffix = f" - {retry}" if retry else ""
    _flow_logger(ctx).error("Encountered exception during execution: %r%s\n%s", exc, suffix,
                            _traceback(exc))


def flow_run_finished(ctx: FlowRunContext, state: State) -> None:
    level = logging.INFO if state.is_completed() else logging.ERROR
    _flow_logger(ctx).log(level, "Finished in state %s", state_text(state))


def task_run_started(tctx: TaskRunContext) -> None:
    _task_line(tctx, logging.INFO, "Created task run %r for task %r", tctx.task_run.name,
               tctx.task.name)


def task_try_failed(tctx: TaskRunContext, exc: BaseException, retry: str | None) -> None:
    what = retry or "Retries are exhausted"
    _task_line(tctx, logging.ERROR, "Task run failed with exception: %r - %s\n%s", exc, what,
               _traceback(exc))


def task_run_finished(tctx: TaskRunContext, state: State) -> None:
    level = logging.ERROR if state.is_failed() or state.is_crashed() else logging.INFO
    _task_line(tctx, level, "Finished in state %s", state_text(state))


def state_text(state: State) -> str:
    """Prefect's short form: ``Completed()``, ``Failed('message')``, ``Cached(type=COMPLETED)``."""
    parts = [repr(state.message)] if state.message else []
    if state.name.lower() != state.type.value.lower():
        parts.append(f"type={state.type.value}")
    return f"{state.name}({', '.join(parts)})"


def _traceback(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)).rstrip()


def ui_link(dag_id: str, run_id: str, settings: Any | None = None) -> str | None:
    """The run's page when a server answers at the configured address (a 50 ms probe)."""
    if settings is None:
        from statewright.config import load_settings

        settings = load_settings()
    host = "127.0.0.1" if settings.api_host in ("0.0.0.0", "::", "") else settings.api_host
    try:
        with socket.create_connection((host, settings.api_port), timeout=0.05):
            pass
    except OSError:
        return None
    from urllib.parse import quote

    return f"http://{host}:{settings.api_port}/dags/{quote(dag_id)}/runs/{quote(run_id)}"
