"""Task callbacks and state hooks, run in the task's process around one try.

Airflow's task callbacks, with Airflow's names — ``on_execute_callback`` (before the task runs),
``on_success_callback``, ``on_failure_callback``, ``on_retry_callback``, ``on_skipped_callback``
— and Prefect-style state hooks (``on_state={"failed": fn, "Cached": fn}``,
``on_state_change=[fn]``) run in the task process, which holds no database session:

- hooks of ``running`` (named Running, Retrying or Resuming) fire before the task runs (not on a
  cache hit: the task does not run);
- once the task has returned or raised, the task process predicts the state the try ends in with
  the same rule as its worker (``core.retry.is_eligible_to_retry`` with the try number and the
  task instance's ``max_tries``; a retry policy that said ``fail`` fails it) and fires that
  state's callbacks and hooks. Before it does, it
  asks its worker whether the try still runs in the database: a try that was cancelled, cleared
  or marked meanwhile fires no end hook (so a cancelled run's failure hooks never fire);
- each hook receives one argument: the task's context with ``previous_state``,
  ``previous_state_name``, ``state``, ``state_name``, ``exception`` (or ``None``) and ``reason``.

Airflow's alert mails (``email=`` with ``email_on_failure`` / ``email_on_retry``) are sent
with the failure and retry callbacks (``statewright.sdk.email``).

A hook that raises is logged in the task's log and recorded in the state history (a row that
changes nothing, attributed to the worker); it never changes the try's outcome. When the worker's
decision differs from the one the hooks ran for (a lost race), that too is recorded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, Engine

from statewright.core.retry import POLICY_FAIL, decision_from_report, is_eligible_to_retry
from statewright.core.states import TI, StateName, TaskInstanceState, default_ti_name
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.repositories import task_instances as ti_repo
from statewright.sdk import email
from statewright.services.worker import caching

log = logging.getLogger("statewright.task")

EXTRA_HOOK_ERRORS = "hook_errors"
EXTRA_HOOKS_RAN_FOR = "hooks_ran_for"
EXTRA_NOTES = "notes"
_CALLBACK_OF = {
    TI.SUCCESS: "on_success_callback",
    TI.FAILED: "on_failure_callback",
    TI.UP_FOR_RETRY: "on_retry_callback",
    TI.SKIPPED: "on_skipped_callback",
}
_NAMED_KINDS = {"cached": StateName.CACHED, "timed_out": StateName.TIMED_OUT}


@dataclass(frozen=True)
class TryStateQuery:
    """Sent by a task process to its worker: does my try still run in the database?"""

    ti_id: int
    try_number: int


@dataclass(frozen=True)
class TryState:
    running: bool
    state: str
    name: str


# -- the task process's side --------------------------------------------------------------------


def run_try(task: Any, context: Any, w: Any, execute: Callable[[Any, Any, Any], Any],
            ask: Callable[[Any], Any] | None) -> Any:
    """Run one try with its cache, callbacks and hooks; returns the ``TaskOutcome`` whose
    ``extra`` carries what the worker records (hook errors, the cache key, notes)."""
    from statewright.sdk.runtime import TaskOutcome

    decision = caching.decide(task, context, ask)
    hooks_errors: list[str] = []
    if decision.hit:
        outcome = TaskOutcome(kind="cached", return_value=decision.value)
    else:
        running = _running_name(w)
        _fire(task, context, hooks_errors, TI.RUNNING, running, previous=(TI.QUEUED, None),
              exception=None, callback="on_execute_callback")
        outcome = execute(task, context, w)
    extra = dict(getattr(outcome, "extra", None) or {})
    notes = [decision.problem] if decision.problem else []
    store = caching.store_info(task, decision)
    if store is not None and outcome.kind == "success":
        extra[caching.EXTRA_KEY] = store
    predicted = predict(outcome.kind, task, w, extra.get("retry_policy"))
    if predicted is not None and _has_end_hooks(task, *predicted):
        still = ask(TryStateQuery(w.ti_id, w.try_number)) if ask is not None else None
        if isinstance(still, TryState) and not still.running:
            notes.append(f"hooks of {predicted[0].value} not run: the try no longer runs "
                         f"(it is {still.state}, named {still.name})")
            log.warning(notes[-1])
        else:
            state, name = predicted
            previous = (TI.RUNNING, _running_name(w))
            _fire(task, context, hooks_errors, state, name, previous=previous,
                  exception=getattr(outcome, "exception", None),
                  callback=_CALLBACK_OF.get(state), reason=outcome.error or outcome.message)
            _send_alert(task, context, hooks_errors, state,
                        getattr(outcome, "exception", None))
            extra[EXTRA_HOOKS_RAN_FOR] = [state.value, name.value]
    if hooks_errors:
        extra[EXTRA_HOOK_ERRORS] = hooks_errors
    if notes:
        extra[EXTRA_NOTES] = notes
    outcome.extra = extra
    return outcome


def predict(kind: str, task: Any, w: Any, policy: Any = None
            ) -> tuple[TaskInstanceState, StateName] | None:
    """The state and name the worker will give the try that ended with ``kind`` (``policy``:
    its retry policy's reported decision, if any)."""
    if kind in ("success", "cached"):
        return TI.SUCCESS, _NAMED_KINDS.get(kind, StateName.SUCCESS)
    if kind == "skipped":
        return TI.SKIPPED, StateName.SKIPPED
    if kind == "fail_no_retry":
        return TI.FAILED, StateName.FAILED
    if kind in ("failed", "timed_out"):
        retry = is_eligible_to_retry(int(getattr(task, "retries", 0) or 0), max(w.try_number, 1),
                                     max_tries=w.max_tries)
        decision = decision_from_report(policy)
        retry = retry and not (decision is not None and decision.action == POLICY_FAIL)
        state = TI.UP_FOR_RETRY if retry else TI.FAILED
        return state, _NAMED_KINDS.get(kind, default_ti_name(state))
    try:
        state = TI(kind)
    except ValueError:
        return None
    return state, default_ti_name(state)


def _running_name(w: Any) -> StateName:
    if getattr(w, "next_method", None):
        return StateName.RESUMING
    return default_ti_name(TI.RUNNING, w.try_number)


def _has_end_hooks(task: Any, state: TaskInstanceState, name: StateName) -> bool:
    callback = _CALLBACK_OF.get(state)
    return bool((callback and getattr(task, callback, None)) or _state_hooks(task, state, name)
                or email.alert_wanted(task, state.value))


def _state_hooks(task: Any, state: TaskInstanceState, name: StateName) -> list[Any]:
    on_state = getattr(task, "on_state", None) or {}
    hooks = list(on_state.get(state.value, ()))
    if name.value != state.value:
        hooks += list(on_state.get(name.value, ()))
    return hooks + list(getattr(task, "on_state_change", None) or ())


def _fire(task: Any, context: Any, errors: list[str], state: TaskInstanceState, name: StateName,
          *, previous: tuple[TaskInstanceState, StateName | None], exception: Any,
          callback: str | None, reason: str | None = None) -> None:
    hook_context = type(context)(context)
    hook_context["previous_state"] = previous[0].value
    hook_context["previous_state_name"] = (previous[1] or default_ti_name(previous[0])).value
    hook_context["state"] = state.value
    hook_context["state_name"] = name.value
    hook_context["exception"] = exception
    hook_context["reason"] = reason
    calls: list[tuple[str, Any]] = []
    if callback:
        calls += [(callback, fn) for fn in getattr(task, callback, None) or ()]
    calls += [(f"state hook ({name.value})", fn) for fn in _state_hooks(task, state, name)]
    for label, fn in calls:
        fn_name = getattr(fn, "__qualname__", None) or repr(fn)
        try:
            fn(hook_context)
        except Exception as exc:
            message = (f"{label} {fn_name} raised {type(exc).__name__}: {exc}; "
                       "the try's outcome is unchanged")
            log.exception("%s of task %s raised", label, task.task_id)
            errors.append(message)


def _send_alert(task: Any, context: Any, errors: list[str], state: TaskInstanceState,
                exception: Any) -> None:
    """Airflow's alert mail (``email=``, ``email_on_failure``, ``email_on_retry``)."""
    if not email.alert_wanted(task, state.value):
        return
    try:
        email.send_alert_email(task, context, state.value, exception)
    except Exception as exc:
        log.exception("the %s alert mail of task %s was not sent", state.value, task.task_id)
        errors.append(f"the {state.value} alert mail to {task.email} was not sent: "
                      f"{type(exc).__name__}: {exc}; the try's outcome is unchanged")


# -- the worker's side --------------------------------------------------------------------------


def answer(engine: Engine, request: Any, *, now: datetime) -> Any:
    """Answer a task process's question (cache lookup, try state, a connection or a
    variable) from the database."""
    from statewright.services.secrets import relay
    from statewright.services.worker import task_state

    if isinstance(request, relay.SecretRequest):
        return relay.answer(engine, request)
    if isinstance(request, task_state.StateRequest):
        return task_state.answer(engine, request, now=now)
    with engine.connect() as conn:
        if isinstance(request, caching.CacheLookup):
            return caching.lookup(conn, request, now)
        if isinstance(request, TryStateQuery):
            row = ti_repo.get(conn, request.ti_id)
            if row is None:
                return TryState(False, "missing", "")
            running = row.state == TI.RUNNING.value and row.try_number == request.try_number
            return TryState(running, row.state, row.state_name)
    raise TypeError(f"unknown request from a task process: {request!r}")


def record_reports(conn: Connection, results: Sequence[Any],
                   reached: dict[int, TaskInstanceState], *, now: datetime,
                   actor: Actor = Actor.WORKER) -> int:
    """Record in the state history what the task processes reported beside their outcome:
    hooks that raised, notes, and hooks that ran for another state than the one applied."""
    notes: list[tuple[int, str]] = []
    for r in results:
        extra = r.extra or {}
        texts = [*extra.get(EXTRA_NOTES, ()), *extra.get(EXTRA_HOOK_ERRORS, ())]
        ran_for = extra.get(EXTRA_HOOKS_RAN_FOR)
        if ran_for and reached.get(r.ti_id) is not TI(ran_for[0]):
            actual = reached.get(r.ti_id)
            what = f"ended {actual.value}" if actual else "lost the race (its state had changed)"
            texts.append(f"try {r.try_number} ran its {ran_for[0]} ({ran_for[1]}) hooks, but the "
                         f"try {what}")
        notes += [(r.ti_id, t) for t in texts]
    _note_each(conn, notes, now=now, actor=actor)
    return len(notes)


def _note_each(conn: Connection, notes: Iterable[tuple[int, str]], *, now: datetime,
               actor: Actor) -> None:
    # one history row per note (several notes of one task instance keep their order)
    for note in notes:
        door.note_task_instances(conn, [note], actor=actor, now=now)
