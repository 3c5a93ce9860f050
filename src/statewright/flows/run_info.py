"""``prefect.runtime`` (``statewright.flows.runtime`` answers it, with these three): ``flow_run``,
``task_run`` and ``deployment`` of the code calling,
read when an attribute is read (``flow_run.name``, ``flow_run.parameters``, …); outside a run
``None`` (and ``{}`` for parameters), as in Prefect."""

from __future__ import annotations

from typing import Any

from statewright.flows.context import flow_run_ctx, task_run_ctx

__all__ = ["deployment", "flow_run", "task_run"]


def _flow() -> Any:
    task = task_run_ctx.get()
    return task.flow_run_context if task is not None else flow_run_ctx.get()


class _FlowRun:
    @property
    def id(self) -> int | None:
        ctx = _flow()
        return None if ctx is None else ctx.flow_run.id

    @property
    def name(self) -> str | None:
        ctx = _flow()
        return None if ctx is None else ctx.flow_run.name

    @property
    def flow_name(self) -> str | None:
        ctx = _flow()
        return None if ctx is None else ctx.flow_run.flow_name

    @property
    def parameters(self) -> dict[str, Any]:
        ctx = _flow()
        return {} if ctx is None else dict(ctx.flow_run.parameters)

    @property
    def run_count(self) -> int:
        ctx = _flow()
        return 0 if ctx is None else ctx.flow_run.run_count

    @property
    def tags(self) -> list[str]:
        ctx = _flow()
        return [] if ctx is None else list(getattr(ctx.flow, "tags", None) or [])


class _TaskRun:
    @property
    def id(self) -> int | None:
        ctx = task_run_ctx.get()
        return None if ctx is None else ctx.task_run.id

    @property
    def name(self) -> str | None:
        ctx = task_run_ctx.get()
        return None if ctx is None else ctx.task_run.name

    @property
    def task_name(self) -> str | None:
        ctx = task_run_ctx.get()
        return None if ctx is None else ctx.task.name

    @property
    def parameters(self) -> dict[str, Any]:
        ctx = task_run_ctx.get()
        return {} if ctx is None else dict(ctx.parameters)

    @property
    def run_count(self) -> int:
        ctx = task_run_ctx.get()
        return 0 if ctx is None else ctx.task_run.run_count


class _Deployment:
    """A flow run's deployment is not known to its process here: ``None``, as in Prefect for
    a run that no deployment made."""

    id: str | None = None
    name: str | None = None
    version: str | None = None
    parameters: dict[str, Any] = {}


flow_run = _FlowRun()
task_run = _TaskRun()
deployment = _Deployment()
