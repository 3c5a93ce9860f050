"""Durable flow runs (``@flow(durable=True)``): a crashed run resumes where it stopped.

Every task call of a durable run that completes is recorded with its result, in the same
transaction as its final state: the call's position (its task run name, ``fetch-3``: the task
and the how-many-th call of it), a digest of its arguments and the result (a JSON value in the
database, or a file of the result storage written with pickle). A resumed run runs the flow
function again from its start; each task call at a recorded position returns the recorded
result instead of running, so a completed call's side effect happens once. A call whose
arguments differ from the recorded call at its position stops the resume with an error that
names the call: the flow's code or its inputs changed since the crash, and the recorded results
no longer stand for this run. The call that was running at the crash runs again (a new try).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import TYPE_CHECKING, Any

from statewright.flows import results
from statewright.flows.backend import CacheEntry, Change, Step
from statewright.flows.states import Completed, Failed, State

if TYPE_CHECKING:
    from statewright.flows.context import FlowRunContext, TaskRunContext
    from statewright.flows.tasks import Task

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


class DurableReplayMismatch(Exception):
    """A resumed durable run called a task with other arguments than the recorded call."""


def step_key(run_id: str, task_run_name: str) -> str:
    return f"durable:{run_id}:{task_run_name}"


def inputs_digest(parameters: dict[str, Any]) -> str:
    """The arguments' digest: their JSON form (another value: its type and its repr, without
    memory addresses)."""
    def stable(value: Any) -> str:
        kind = type(value)
        return f"{kind.__module__}.{kind.__qualname__}:{_ADDRESS.sub('', repr(value))}"

    text = json.dumps(parameters, sort_keys=True, default=stable, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def replayed(ctx: FlowRunContext, task: Task[..., Any], name: str,
             parameters: dict[str, Any]) -> State | None:
    """The recorded call's Completed state at this position of a resumed run, or None (no
    record: the call runs). Raises DurableReplayMismatch when the arguments differ."""
    if not ctx.handle.replay:
        return None
    hit, stored = ctx.backend.cache_get(CacheEntry(
        ctx.flow.name, task.task_key, step_key(ctx.handle.run_id, name)))
    if not hit or not isinstance(stored, dict) or "inputs" not in stored:
        return None
    if stored["inputs"] != inputs_digest(parameters):
        raise DurableReplayMismatch(
            f"Resuming flow run {ctx.handle.run_id!r}: the task call {name!r} (task "
            f"{task.name!r}) is made with other arguments than the call recorded at that "
            "position before the crash, so the recorded results no longer stand for this "
            "run. The flow's code or its inputs changed: start a new run instead.")
    failed = stored.get("failed")
    if failed is not None:
        error = results.load(failed["error"]) if failed.get("error") is not None else None
        return Failed(name=failed.get("name") or "Failed", message=failed.get("message"),
                      data=error)
    return Completed(data=results.load(stored["result"]), message="Replayed: the result "
                     "recorded before the crash (durable resume)")


def step(ctx: FlowRunContext, tctx: TaskRunContext, change: Change, state: State
         ) -> Step | str:
    """The record of a completed call (its result) or a failed one (its exception: a resume
    replays the failure, as the flow saw it), or why it cannot be recorded."""
    task, run = tctx.task, tctx.task_run
    options = results.options_for(task, ctx.flow)
    key = step_key(ctx.handle.run_id, run.name)
    record: dict[str, Any] = {"inputs": inputs_digest(tctx.parameters)}
    try:
        if state.is_completed():
            record["result"] = results.store(
                results.ResultOptions(True, options.storage, options.serializer), key,
                state.data)
        else:
            record["failed"] = {"name": state.name, "message": state.message,
                                "error": _stored_error(options, key, state)}
    except (results.ResultNotStored, OSError) as exc:
        return (f"Durable flow {ctx.flow.name!r}: the result of task run {run.name!r} cannot "
                f"be recorded ({exc}); a durable flow's task results must be JSON or "
                "picklable.")
    entry = CacheEntry(ctx.flow.name, task.task_key, key, record, run_id=ctx.handle.run_id,
                       try_number=run.run_count)
    return Step(change, entry)


def _stored_error(options: results.ResultOptions, key: str, state: State) -> Any:
    """The failed call's exception, pickled (its message as a RuntimeError when it cannot be)."""
    error = state.data if isinstance(state.data, BaseException) else None
    where = results.ResultOptions(True, options.storage, "pickle")
    try:
        return results.store(where, key + ".error", error) if error is not None else None
    except results.ResultNotStored:
        return results.store(where, key + ".error", RuntimeError(state.message or "failed"))
