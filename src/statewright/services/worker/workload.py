"""Starting tries: queued → running through the door, and the message a task process needs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Connection

from statewright.core.states import TI
from statewright.core.transitions import Actor
from statewright.db import transition as door
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import xcoms as xcom_repo
from statewright.db.repositories.prev_runs import PREV_SUCCESS_KEYS
from statewright.services.dag_view import DagView, DagViewCache
from statewright.services.worker.asset_inputs import add_asset_events
from statewright.services.worker.log_paths import log_path_for
from statewright.services.xcom_purge import purge_values


@dataclass
class Workload:
    """One try of one task instance, as handed to a task process (plain, picklable data)."""

    ti_id: int
    dag_id: str
    run_id: str
    task_id: str
    dag_run_id: int
    try_number: int
    max_tries: int
    fileloc: str | None
    logical_date: datetime | None
    data_interval_start: datetime | None
    data_interval_end: datetime | None
    conf: dict[str, Any]
    run_type: str
    xcoms: dict[str, Any] = field(default_factory=dict)
    pushed: dict[str, dict[str, Any]] = field(default_factory=dict)
    """What direct upstream tasks pushed under keys of their own: task id -> key -> value."""
    next_method: str | None = None
    next_kwargs: Any = None
    log_path: str | None = None
    execution_timeout: float | None = None
    first_poke_at: datetime | None = None
    poke_count: int = 0
    prev_success: dict[str, datetime | None] = field(default_factory=dict)
    """The ``prev_*_success`` context values (the DAG's previous successful run)."""
    map_index: int = -1
    mapped_upstreams: frozenset[str] = frozenset()
    """Upstream tasks that are mapped: their ``xcoms`` entry is the list of their instances'
    values in map-index order."""
    assets: dict[str, Any] = field(default_factory=dict)
    """Asset events for the context: ``triggering`` (of an asset-triggered run), ``inlets``."""
    dag_version_id: int | None = None
    """The DAG version the try runs (for its history row when it ends)."""


def start_tries(
    conn: Connection,
    ti_ids: Sequence[int],
    *,
    now: datetime,
    hostname: str,
    pids: Mapping[int, int],
    views: DagViewCache,
    logs_folder: Path | None,
    actor: Actor = Actor.EXECUTOR,
    fences: Mapping[int, int] | None = None,
) -> list[Workload]:
    """Move queued task instances to running (a new try, or the same try when resuming) and
    return their workloads. Task instances no longer queued are left out (lost race).

    ``fences`` maps a task instance to the try number it had when it was queued (what a
    message carried): one queued at another try is left out, so a stale or duplicated
    message never starts a try. The change itself is fenced on the try number that was read."""
    fences = fences or {}
    rows = [r for r in ti_repo.workloads(conn, ti_ids) if r.state == TI.QUEUED.value
            and fences.get(r.id, r.try_number) == r.try_number]
    if not rows:
        return []
    # In the order asked (the scheduler's: priority weight first), not the database's order
    # of the rows: ``dag.test()`` runs a group's tries one after another in this order.
    asked = {pk: i for i, pk in enumerate(ti_ids)}
    rows.sort(key=lambda r: asked[r.id])
    by_pk = {r.id: r for r in rows}
    fresh = [r.id for r in rows if not _continues_try(r)]
    resuming = [r.id for r in rows if _continues_try(r)]
    values: dict[str, Any] = {"hostname": hostname}
    if pids:  # each started try's process, in the state change itself
        values["pid"] = door.PerRow({r.id: pids[r.id] for r in rows if r.id in pids})
    versions: dict[int, int | None] = {}  # each started try → the DAG version it runs
    if fresh:
        versions.update(door.set_task_instance_state(
            conn, [], fenced=[(pk, by_pk[pk].try_number) for pk in fresh], frm=TI.QUEUED,
            to=TI.RUNNING, actor=actor, now=now, increment_try=True, values=values).versions)
    if resuming:
        from statewright.core.states import StateName

        deferred = [pk for pk in resuming if by_pk[pk].next_method]
        rescheduled = [pk for pk in resuming if not by_pk[pk].next_method]
        for ids, name in ((deferred, StateName.RESUMING), (rescheduled, None)):
            if ids:
                versions.update(door.set_task_instance_state(
                    conn, [], fenced=[(pk, by_pk[pk].try_number) for pk in ids],
                    frm=TI.QUEUED, to=TI.RUNNING, actor=actor, now=now, name=name,
                    values=values).versions)
    started = versions.keys()
    rows = [r for r in rows if r.id in started]
    if not rows:
        return []
    hashes = {r.dag_id: r.dag_hash for r in rows}
    out: list[Workload] = []
    wanted: list[tuple[int, str]] = []
    plan: list[tuple[Any, DagView]] = []
    for r in rows:
        view = views.get(r.dag_id, hashes[r.dag_id],
                         lambda d=r.dag_id: dag_repo.get_serialized(conn, d))
        plan.append((r, view))
        task = view.tasks.get(r.task_id)
        for up in (task.upstream if task else ()):
            wanted.append((r.dag_run_id, up))
    # A new try (a retry) starts without what the previous try stored (Airflow clears the task
    # instance's XComs when a try starts); a resumed or rescheduled try keeps them.
    retried = [(r.dag_run_id, r.task_id, r.map_index) for r in rows
               if not _continues_try(r) and r.try_number >= 1]
    purge_values(conn, retried)  # what the XCom backend keeps outside the database
    xcom_repo.clear_tasks(conn, retried)
    stored = xcom_repo.get_values(conn, wanted)
    for r, view in plan:
        task = view.tasks.get(r.task_id)
        continues = _continues_try(r)
        try_number = r.try_number + (0 if continues else 1)
        xcoms, pushed = _upstream_values(view, task.upstream if task else (), r.dag_run_id,
                                         stored)
        out.append(Workload(
            ti_id=r.id, dag_id=r.dag_id, run_id=r.run_id, task_id=r.task_id,
            dag_run_id=r.dag_run_id, try_number=try_number, max_tries=r.max_tries,
            fileloc=view.fileloc, logical_date=r.logical_date,
            data_interval_start=r.data_interval_start, data_interval_end=r.data_interval_end,
            conf=dict(r.conf or {}), run_type=r.run_type, xcoms=xcoms, pushed=pushed,
            next_method=r.next_method, next_kwargs=r.next_kwargs,
            log_path=log_path_for(logs_folder, r.dag_id, r.run_id, r.task_id, try_number,
                                  r.map_index),
            execution_timeout=task.execution_timeout if task else None,
            first_poke_at=r.first_poke_at if continues else None,
            poke_count=int(r.poke_count or 0) if continues else 0,
            prev_success={key: getattr(r, key) for key in PREV_SUCCESS_KEYS},
            map_index=r.map_index, dag_version_id=versions[r.id],
            mapped_upstreams=frozenset(u for u in xcoms if u in view.mapped),
        ))
    add_asset_events(conn, out, plan)
    return out


def fail_unstartable(conn: Connection, ti_id: int, *, fence: int | None, now: datetime,
                     actor: Actor, error: BaseException) -> bool:
    """End a queued task instance whose try could not start even alone (its DAG's stored form
    or an upstream's value cannot be read): ``failed``, with the error as the message, and no
    retry (its next try would meet the same error, and a try that never started never counts
    towards the retries). True when it was still queued (at ``fence``)."""
    detail = str(getattr(error, "orig", None) or error).splitlines()[0][:300]
    message = f"the try could not start: {type(error).__name__}: {detail}"
    fenced = [(ti_id, fence)] if fence is not None else None
    result = door.set_task_instance_state(
        conn, [] if fenced else [ti_id], fenced=fenced, frm=TI.QUEUED, to=TI.FAILED,
        actor=actor, now=now, message=message)
    return bool(result.changed)


_RETURN = "return_value"


def _upstream_values(view: DagView, upstream: Sequence[str], run_pk: int,
                     stored: Mapping[tuple[int, str], dict[int, dict[str, Any]]]
                     ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """What a try reads of its direct upstreams: return values (a mapped upstream's: its
    instances' ``[map index, value]`` pairs in map-index order) and values pushed under other
    keys (a mapped upstream's: per key, the list of its instances' values)."""
    xcoms: dict[str, Any] = {}
    pushed: dict[str, dict[str, Any]] = {}
    for up in upstream:
        by_index = stored.get((run_pk, up), {})
        if up in view.mapped:
            ordered = [by_index[m] for m in sorted(by_index) if m >= 0]
            xcoms[up] = [[m, by_index[m][_RETURN]] for m in sorted(by_index)
                         if m >= 0 and _RETURN in by_index[m]]
            keys = {k for v in ordered for k in v if k != _RETURN}
            if keys:
                pushed[up] = {k: [v[k] for v in ordered if k in v] for k in sorted(keys)}
            continue
        values = by_index.get(-1, {})
        if _RETURN in values:
            xcoms[up] = values[_RETURN]
        own = {k: v for k, v in values.items() if k != _RETURN}
        if own:
            pushed[up] = own
    return xcoms, pushed


def _continues_try(row: Any) -> bool:
    """A resumed deferral (``next_method`` set) or a rescheduled sensor (``first_poke_at``
    set) continues its try: the try number is not incremented (Airflow)."""
    return bool(row.next_method) or row.first_poke_at is not None
