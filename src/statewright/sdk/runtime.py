"""Running one try of one task from in-memory inputs; the worker persists the outcome.

``execute_task`` never touches a database and never runs callbacks (the worker does both). It
resolves the task's XComArg inputs, enforces ``execution_timeout`` when it can (main thread,
POSIX signals), calls ``task.execute(context)`` and maps how that ended to a ``TaskOutcome``.
"""

from __future__ import annotations

import inspect
import logging
import signal
import threading
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from statewright.sdk.asset_metadata import collect_metadata, yields_metadata
from statewright.sdk.assets import OutletEventAccessors, outlet_report
from statewright.sdk.baseoperator import BaseOperator
from statewright.sdk.context import Context, build_context, current_context
from statewright.sdk.exceptions import (
    FailTask,
    RescheduleTask,
    SkipTask,
    TaskAwaitingInput,
    TaskDeferred,
    TaskTimeout,
)
from statewright.sdk.expandinput import LazyXComSequence
from statewright.sdk.loader import dag_code_imports
from statewright.sdk.operators.trigger_dagrun import TRIGGER_REQUESTS
from statewright.sdk.retry_policy import EXTRA_KEY as POLICY_EXTRA_KEY
from statewright.sdk.retry_policy import policy_report
from statewright.sdk.templating import rendering
from statewright.sdk.xcom_arg import has_references, resolve_references

__all__ = ["OutcomeKind", "TaskOutcome", "build_context", "execute_task", "resume_task"]

log = logging.getLogger("statewright.task")
_MAX_ERROR_CHARS = 2000


class OutcomeKind:
    """The kinds of ``TaskOutcome.kind`` (an open set of strings: more may be added)."""

    SUCCESS = "success"
    SKIPPED = "skipped"
    FAILED = "failed"  # may be retried
    FAIL_NO_RETRY = "fail_no_retry"
    TIMED_OUT = "timed_out"  # execution_timeout passed; may be retried
    DEFERRED = "deferred"  # waits on a trigger; ``extra["deferral"]`` says which
    UP_FOR_RESCHEDULE = "up_for_reschedule"  # a sensor pokes again later; ``extra["reschedule"]``
    AWAITING_INPUT = "awaiting_input"  # waits for a person; ``extra["hitl"]`` says what is asked


@dataclass
class TaskOutcome:
    """How one try ended, in plain data the worker can persist.

    ``message`` is a short human reason (a skip reason; a timeout) for the state message.
    """

    kind: str
    return_value: Any = None
    skip_task_ids: list[str] = field(default_factory=list)
    error: str | None = None
    traceback: str | None = None
    message: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    exception: BaseException | None = field(default=None, repr=False, compare=False)
    """The exception that ended the try (for failure hooks); never sent to the worker."""


def upstream_xcoms(xcoms: dict[str, Any], mapped: Any = ()) -> dict[str, Any]:
    """Upstream return values as a task reads them: a mapped upstream's as a sequence of its
    instances' values in map-index order."""
    return {k: LazyXComSequence.from_pairs(v) if k in mapped else v for k, v in xcoms.items()}


def execute_task(task: BaseOperator, context: Context) -> TaskOutcome:
    """Run ``task.execute(context)`` once and describe the result. A mapped task is first
    unmapped: the operator of this map index is built (and becomes the context's task).

    KeyboardInterrupt and SystemExit propagate; every other exception becomes an outcome.
    """
    return _run(task, context, lambda t: t.execute(context))


def resume_task(
    task: BaseOperator, context: Context, next_method: str, next_kwargs: Any
) -> TaskOutcome:
    """Continue a deferred try in ``next_method`` with the stored kwargs (and the event).

    ``__fail__`` fails the try with the error the triggerer recorded (a trigger timeout or a
    trigger failure); the try may be retried as any failure.
    """
    from statewright.sdk import serde

    try:
        kwargs = {str(k): serde.deserialize(v, path=f"next_kwargs[{k!r}]")
                  for k, v in dict(next_kwargs or {}).items()}
    except Exception as exc:
        return _failure(OutcomeKind.FAILED, exc)
    return _run(task, context, lambda t: t.resume_execution(next_method, kwargs, context))


def _run(task: BaseOperator, context: Context, call: Any) -> TaskOutcome:
    ti = context["ti"]
    ti.skipped_task_ids.clear()
    ti.rendered_fields = None
    outcome = _outcome(task, context, call)
    if ti.rendered_fields:  # a task without template fields stores no row
        outcome.extra["rendered_fields"] = ti.rendered_fields
    name = _rendered_map_index(context)
    if name is not None:
        outcome.extra["rendered_map_index"] = name
    if outcome.kind == OutcomeKind.SUCCESS:
        outcome = _with_outlets(task, context, outcome)
    if outcome.kind in (OutcomeKind.SUCCESS, OutcomeKind.DEFERRED) and context.get(
            TRIGGER_REQUESTS):  # runs a TriggerDagRunOperator asks its worker to create
        outcome.extra["dag_run_requests"] = list(context[TRIGGER_REQUESTS])
    if ti.pushed:  # stored with the outcome, whatever it is (as Airflow writes them at once)
        outcome.extra["xcoms"] = dict(ti.pushed)
    return outcome


def _outcome(task: BaseOperator, context: Context, call: Any) -> TaskOutcome:
    ti = context["ti"]
    try:
        if task.is_mapped:
            task = _unmap(task, context)
        with dag_code_imports(), current_context(context), \
                rendering(task, context) as rendered, _resolved_inputs(task, context), \
                _timeout(task):
            ti.rendered_fields = rendered
            value = _call_with_hooks(task, context, call)
        return _success(task, ti, value)
    except TaskDeferred as exc:
        log.info("Task %s deferred to %s (resumes in %s)", task.task_id, exc.classpath,
                 exc.method_name)
        return _deferred(exc)
    except TaskAwaitingInput as exc:
        log.info("Task %s awaits input (resumes in %s)", task.task_id, exc.method_name)
        return TaskOutcome(kind=OutcomeKind.AWAITING_INPUT, extra={"hitl": {
            "request": exc.request, "method_name": exc.method_name, "kwargs": exc.kwargs,
            "timeout": exc.timeout.total_seconds() if exc.timeout is not None else None}})
    except RescheduleTask as exc:
        log.info("Task %s rescheduled to %s", task.task_id, exc.reschedule_date.isoformat())
        return TaskOutcome(kind=OutcomeKind.UP_FOR_RESCHEDULE, extra={"reschedule": {
            "reschedule_date": exc.reschedule_date, "first_poke_at": exc.first_poke_at,
            "poke_count": exc.poke_count}})
    except SkipTask as exc:
        reason = _one_line(str(exc)) or None
        log.info("Task %s skipped%s", task.task_id, f": {reason}" if reason else "")
        return TaskOutcome(kind=OutcomeKind.SKIPPED, message=reason)
    except FailTask as exc:
        log.exception("Task %s failed without retry", task.task_id)
        return _failure(OutcomeKind.FAIL_NO_RETRY, exc)
    except TaskTimeout as exc:
        log.error("Task %s timed out", task.task_id)
        _call_on_kill(task)
        outcome = _failure(OutcomeKind.TIMED_OUT, exc)
        outcome.message = outcome.error
        return _with_policy(task, context, outcome, exc)
    except Exception as exc:
        log.exception("Task %s failed", task.task_id)
        outcome = _failure(OutcomeKind.FAILED, exc)
        trigger_traceback = getattr(exc, "trigger_traceback", None)
        if trigger_traceback:
            outcome.traceback = (f"{outcome.traceback}\nThe trigger's traceback:\n"
                                 f"{trigger_traceback}")
        return _with_policy(task, context, outcome, exc)


def _with_policy(task: BaseOperator, context: Context, outcome: TaskOutcome,
                 exc: BaseException) -> TaskOutcome:
    """A failure the task's retry policy has a say on carries its decision to the worker."""
    report = policy_report(task, exc, context)
    if report is not None:
        outcome.extra[POLICY_EXTRA_KEY] = report
    return outcome


def _call_with_hooks(task: BaseOperator, context: Context, call: Any) -> Any:
    """Airflow's order: the ``pre_execute=`` hook and an overridden ``pre_execute``, the call
    (a generator task run to its end, its ``Metadata`` applied to the outlet events), then the
    ``post_execute=`` hook and an overridden ``post_execute``, given the result."""
    if "outlet_events" not in context:
        context["outlet_events"] = OutletEventAccessors()
    events = context["outlet_events"]
    _run_hook(getattr(task, "_pre_execute_hook", None), events, context)
    if _overrides(task, "pre_execute"):
        _run_hook(task.pre_execute, events, context)
    value = call(task)
    if yields_metadata(task, value):
        value = collect_metadata(value, events)
    _run_hook(getattr(task, "_post_execute_hook", None), events, context, value)
    if _overrides(task, "post_execute"):
        _run_hook(task.post_execute, events, context, value)
    return value


def _overrides(task: Any, name: str) -> bool:
    return getattr(type(task), name, None) not in (None, getattr(BaseOperator, name))


def _run_hook(hook: Any, events: Any, *args: Any) -> None:
    """Call a pre/post-execute hook; a generator hook's ``Metadata`` go to the events."""
    if hook is None:
        return
    result = hook(*args)
    if inspect.isgenerator(result):
        collect_metadata(result, events)


def _rendered_map_index(context: Context) -> str | None:
    """The name ``map_index_template`` gives this instance, rendered with the context after the
    try (as Airflow, so the task may add what the template reads); ``None`` without one."""
    template = getattr(context["task"], "map_index_template", None)
    if not template or context["ti"].map_index < 0:
        return None
    from jinja2.sandbox import SandboxedEnvironment

    try:
        name = SandboxedEnvironment().from_string(template).render(**context)
    except Exception as exc:
        log.warning("map_index_template %r could not be rendered: %s", template, exc)
        return None
    return name.strip()[:250] or None


def _with_outlets(task: BaseOperator, context: Context, outcome: TaskOutcome) -> TaskOutcome:
    """A success reports its asset events (recorded by the worker with the state change)."""
    try:
        report = outlet_report(task, context)
    except Exception as exc:  # an extra that is not JSON: the try fails, saying why
        return _failure(OutcomeKind.FAILED, exc)
    if report is not None:
        outcome.extra["asset_events"] = report
    return outcome


def _deferred(exc: TaskDeferred) -> TaskOutcome:
    return TaskOutcome(kind=OutcomeKind.DEFERRED, extra={"deferral": {
        "classpath": exc.classpath,
        "trigger_kwargs": exc.trigger_kwargs,
        "method_name": exc.method_name,
        "kwargs": exc.kwargs,
        "timeout": exc.timeout.total_seconds() if exc.timeout is not None else None,
    }})


def _success(task: BaseOperator, ti: Any, value: Any) -> TaskOutcome:
    if not task.do_xcom_push:
        value = None
    if task.multiple_outputs and value is not None:
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            raise_type = type(value).__name__
            return _failure(
                OutcomeKind.FAILED,
                TypeError(
                    f"task {task.task_id!r} has multiple_outputs=True, so it must return a dict "
                    f"with string keys; it returned a {raise_type}"
                ),
            )
    stored, problem = _store(ti, value)
    if problem is not None:
        return TaskOutcome(
            kind=OutcomeKind.FAILED,
            error=f"task {task.task_id!r} returned {problem} that cannot be stored as JSON; "
            "return plain data (str, int, float, bool, None, list, dict) or a supported type "
            "(see XCom values in docs/concepts.md) instead",
        )
    return TaskOutcome(
        kind=OutcomeKind.SUCCESS, return_value=stored, skip_task_ids=list(ti.skipped_task_ids)
    )


def _store(ti: Any, value: Any) -> tuple[Any, str | None]:
    """The value as the XCom backend stores it, or a description of why it cannot be."""
    from statewright.sdk.context import XCOM_RETURN_KEY, store_xcom

    if value is None:
        return None, None
    try:
        return store_xcom(ti, XCOM_RETURN_KEY, value), None
    except Exception as exc:
        name = getattr(exc, "type_name", None) or type(value).__name__
        return None, f"a value of type {name} ({_one_line(str(exc))})"


def _failure(kind: str, exc: BaseException) -> TaskOutcome:
    name = type(exc).__name__
    text = _one_line(str(exc))
    return TaskOutcome(
        kind=kind,
        error=f"{name}: {text}" if text else name,
        traceback="".join(traceback.format_exception(exc)),
        exception=exc,
    )


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _MAX_ERROR_CHARS else text[: _MAX_ERROR_CHARS - 3] + "..."


def _call_on_kill(task: BaseOperator) -> None:
    try:
        task.on_kill()
    except Exception:
        log.exception("on_kill of task %s failed", task.task_id)


def _unmap(task: Any, context: Context) -> BaseOperator:
    """The operator of this task instance's map index (see ``MappedOperator.unmap``)."""
    with current_context(context):
        real: BaseOperator = task.unmap(context)
    context["task"] = real
    context["ti"].task = real
    return real


@contextmanager
def _resolved_inputs(task: BaseOperator, context: Context) -> Iterator[None]:
    """Swap XComArgs / DagParams in the task's template fields for their values, then back."""
    originals: dict[str, Any] = {}
    try:
        for name in task.template_fields:
            value = getattr(task, name, None)
            if has_references(value):
                resolved = resolve_references(value, context)
                originals[name] = value
                setattr(task, name, resolved)
        yield
    finally:
        for name, value in originals.items():
            setattr(task, name, value)


@contextmanager
def _timeout(task: BaseOperator) -> Iterator[None]:
    """Raise TaskTimeout in this thread when the task runs past its execution_timeout."""
    timeout = task.execution_timeout
    usable = (
        timeout is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return
    assert timeout is not None
    seconds = timeout.total_seconds()

    def _on_alarm(signum: int, frame: Any) -> None:
        raise TaskTimeout(
            f"task {task.task_id!r} ran longer than its execution_timeout of {seconds:g}s"
        )

    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
