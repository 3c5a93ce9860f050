"""Calling a missed deadline's callback (in the process that runs user code).

The callable is the one the DAG file gave its ``DeadlineAlert`` (found on the loaded DAG by the
alert's position), or else imported from its path. It is called with the alert's ``kwargs`` and
a ``context`` (as Airflow does): ``{"dag_run": {...}, "deadline": {...}}``. An
``AsyncCallback``'s coroutine is run to its end here, with ``asyncio.run``.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import traceback
from typing import Any

log = logging.getLogger("statewright.callbacks")


def resolve_callable(path: str, dag: Any, alert_index: int) -> Any:
    """The alert's callable: from the loaded DAG when it has that alert, else by import."""
    alerts = getattr(dag, "deadline", None) or []
    if 0 <= alert_index < len(alerts):
        callback = alerts[alert_index].callback
        if callback.callback_callable is not None and callback.path == path:
            return callback.callback_callable
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            target: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            target = getattr(target, name)
        return target
    raise ImportError(f"cannot import the deadline callback {path!r}")


def run_deadline_callback(request: Any, dag: Any, report: Any) -> Any:
    deadline = request.deadline
    spec = deadline["callback"]
    context = {
        "dag_run": {"dag_id": request.dag_id, "run_id": request.run_id,
                    "logical_date": request.logical_date, "conf": dict(request.conf)},
        "deadline": {"id": deadline["id"], "deadline_time": deadline["deadline_time"],
                     "reference": deadline["reference"]},
    }
    report.calls = 1
    try:
        fn = resolve_callable(spec["path"], dag, int(deadline["alert_index"]))
        result = fn(**dict(spec.get("kwargs") or {}), context=context)
        if inspect.isawaitable(result):
            asyncio.run(_wait(result))
    except Exception as exc:
        log.error("deadline callback %s of DAG %s raised:\n%s", spec["path"], request.dag_id,
                  traceback.format_exc())
        report.errors.append(f"deadline callback {spec['path']} raised {type(exc).__name__}: "
                             f"{exc}; the run's state is unchanged")
    report.ok = not report.errors
    return report


async def _wait(awaitable: Any) -> Any:
    return await awaitable
