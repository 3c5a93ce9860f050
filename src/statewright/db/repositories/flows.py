"""Queries on flows: the flow's ``dag`` row, ``flow_run`` rows, heartbeats, deployments."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, insert, select, update

from statewright.core.states import TI
from statewright.db.repositories.dags import dag_hash
from statewright.db.tables import dag, dag_run, task_instance
from statewright.db.tables_flows import flow_deployment, flow_run

FLOW = "flow"


def ensure_flow(conn: Connection, name: str, *, fileloc: str | None, description: str | None,
                now: datetime, entrypoint: str | None = None,
                params_spec: Mapping[str, Any] | None = None) -> None:
    """The flow's ``dag`` row (kind ``flow``), created the first time the flow runs; its
    ``entrypoint`` (``file:function``, what the scheduler starts for a triggered run) and its
    parameters' spec (the trigger form) kept up to date."""
    row = conn.execute(select(dag.c.serialized).where(dag.c.dag_id == name)).first()
    if row is not None:
        old = dict(row.serialized or {})
        new = dict(old)
        if entrypoint is not None:
            new["entrypoint"] = entrypoint
        if params_spec is not None:
            new["params_spec"] = dict(params_spec)
        if new != old:
            conn.execute(update(dag).where(dag.c.dag_id == name).values(serialized=new))
        return
    serialized: dict[str, Any] = {"dag_id": name, "kind": FLOW, "fileloc": fileloc,
                                  "description": description, "tasks": [],
                                  "entrypoint": entrypoint,
                                  **({"params_spec": dict(params_spec)} if params_spec else {})}
    conn.execute(insert(dag).values(
        dag_id=name, fileloc=fileloc, description=description, serialized=serialized,
        dag_hash=dag_hash(serialized), kind=FLOW, is_paused=False, is_active=True,
        max_active_runs=16, max_active_tasks=16, fail_stop=False, tags=[],
        last_parsed_at=now))


def insert_flow_run(conn: Connection, values: Mapping[str, Any]) -> None:
    """The run's ``flow_run`` row; a run started again (resumed after a suspension) keeps its
    row, with the new processes."""
    pk = values["dag_run_id"]
    if conn.execute(select(flow_run.c.dag_run_id).where(flow_run.c.dag_run_id == pk)
                    ).first() is None:
        conn.execute(insert(flow_run).values(**values))
    else:
        conn.execute(update(flow_run).where(flow_run.c.dag_run_id == pk).values(**{
            k: v for k, v in values.items() if k != "dag_run_id"}))


def task_ids_of_run(conn: Connection, run_pk: int) -> frozenset[str]:
    return frozenset(conn.execute(select(task_instance.c.task_id).where(
        task_instance.c.dag_run_id == run_pk)).scalars())


def task_run_to_run_again(conn: Connection, run_pk: int, task_id: str) -> Any:
    """A resumed durable run's task instance of that name that runs again (left ``none`` or
    ``up_for_retry`` by the crash), with its state; None when there is none."""
    c = task_instance.c
    return conn.execute(select(c.id, c.state).where(
        c.dag_run_id == run_pk, c.task_id == task_id, c.map_index == -1,
        c.state.in_((TI.NONE.value, TI.UP_FOR_RETRY.value)))).first()


def tries_to_run_again(conn: Connection, run_pk: int) -> dict[str, int]:
    """A resumed durable run's task runs that run again (``none`` / ``up_for_retry``): name →
    the tries they have had."""
    c = task_instance.c
    return {str(r.task_id): int(r.try_number) for r in conn.execute(
        select(c.task_id, c.try_number).where(
            c.dag_run_id == run_pk, c.map_index == -1,
            c.state.in_((TI.NONE.value, TI.UP_FOR_RETRY.value))))}


def durable_runs_with_retries_left(conn: Connection, run_pks: Collection[int]
                                   ) -> dict[int, int]:
    """Durable runs among ``run_pks`` whose flow's retries are not used up: pk → resumes."""
    c = flow_run.c
    return {int(r.dag_run_id): int(r.resumes) for r in conn.execute(
        select(c.dag_run_id, c.resumes).where(
            c.dag_run_id.in_(list(run_pks)), c.durable.is_(True), c.resumes < c.retries))}


def count_resume(conn: Connection, run_pk: int) -> None:
    conn.execute(update(flow_run).where(flow_run.c.dag_run_id == run_pk)
                 .values(resumes=flow_run.c.resumes + 1))


def want_input(conn: Connection, run_pk: int, key: str, schema: Any) -> None:
    """A pause under way: its key and the JSON schema of the input it waits for."""
    conn.execute(update(flow_run).where(flow_run.c.dag_run_id == run_pk).values(
        wanted_input={"key": key, "schema": schema}))


def give_input(conn: Connection, run_pk: int, key: str, value: Any) -> None:
    """The pause ``key`` is resumed with ``value``; the run waits for nothing more."""
    row = get_flow_run(conn, run_pk)
    inputs = dict(row.pause_inputs or {}) if row is not None else {}
    inputs[key] = value
    conn.execute(update(flow_run).where(flow_run.c.dag_run_id == run_pk).values(
        wanted_input=None, pause_inputs=inputs))


def heartbeat(conn: Connection, run_pks: Collection[int], now: datetime) -> None:
    """The recorder is alive: its runs and their running task instances are not lost."""
    if not run_pks:
        return
    conn.execute(update(flow_run).where(flow_run.c.dag_run_id.in_(list(run_pks)))
                 .values(last_heartbeat_at=now))
    conn.execute(update(task_instance).where(task_instance.c.dag_run_id.in_(list(run_pks)),
                                             task_instance.c.state == TI.RUNNING.value)
                 .values(last_heartbeat_at=now))


def run_state(conn: Connection, run_pk: int) -> tuple[str, str]:
    row = conn.execute(select(dag_run.c.state, dag_run.c.state_name)
                       .where(dag_run.c.id == run_pk)).one()
    return str(row.state), str(row.state_name)


def running_task_instances(conn: Connection, run_pks: Collection[int]) -> list[Any]:
    c = task_instance.c
    return list(conn.execute(select(c.id, c.try_number, c.dag_run_id).where(
        c.dag_run_id.in_(list(run_pks)), c.state == TI.RUNNING.value)).all())


def runs_in_states(conn: Connection, run_pks: Collection[int], states: Collection[str]
                   ) -> list[Any]:
    return list(conn.execute(select(dag_run.c.id, dag_run.c.state).where(
        dag_run.c.id.in_(list(run_pks)), dag_run.c.state.in_(list(states)))).all())


def lost_runs(conn: Connection, heartbeat_before: datetime, states: Collection[str]
              ) -> list[Any]:
    """Flow runs whose recorder stopped heartbeating while they were unfinished."""
    return list(conn.execute(lost_runs_query(heartbeat_before, states)).all())


def lost_runs_query(heartbeat_before: datetime, states: Collection[str]) -> Any:
    return (select(dag_run.c.id, dag_run.c.state)
            .join(flow_run, flow_run.c.dag_run_id == dag_run.c.id)
            .where(flow_run.c.last_heartbeat_at < heartbeat_before,
                   dag_run.c.state.in_(list(states))))


def child_runs(conn: Connection, parent_run_pk: int) -> list[Any]:
    return list(conn.execute(select(flow_run).where(
        flow_run.c.parent_dag_run_id == parent_run_pk).order_by(flow_run.c.dag_run_id)).all())


def get_flow_run(conn: Connection, run_pk: int) -> Any:
    return conn.execute(select(flow_run).where(flow_run.c.dag_run_id == run_pk)).first()


def list_flows(conn: Connection) -> list[Any]:
    return list(conn.execute(select(dag.c.dag_id, dag.c.fileloc, dag.c.is_paused,
                                    dag.c.schedule_summary).where(dag.c.kind == FLOW)
                             .order_by(dag.c.dag_id)).all())


def upsert_deployment(conn: Connection, *, dag_id: str, name: str, entrypoint: str,
                      parameters: Mapping[str, Any], now: datetime) -> None:
    c = flow_deployment.c
    row = conn.execute(select(c.id).where(c.dag_id == dag_id, c.name == name)).first()
    if row is None:
        conn.execute(insert(flow_deployment).values(
            dag_id=dag_id, name=name, entrypoint=entrypoint, parameters=dict(parameters),
            created_at=now, updated_at=now))
    else:
        conn.execute(update(flow_deployment).where(c.id == row.id).values(
            entrypoint=entrypoint, parameters=dict(parameters), updated_at=now))


def deployment_of(conn: Connection, dag_id: str) -> Any:
    c = flow_deployment.c
    return conn.execute(select(flow_deployment).where(c.dag_id == dag_id)
                        .order_by(c.updated_at.desc())).first()


def queued_flow_runs(conn: Connection, limit: int = 50) -> list[Any]:
    """Queued runs of flows (a served flow's schedule created them): to be started."""
    return list(conn.execute(
        select(dag_run.c.id, dag_run.c.dag_id, dag_run.c.run_id, dag_run.c.conf)
        .join(dag, dag.c.dag_id == dag_run.c.dag_id)
        .where(dag.c.kind == FLOW, dag_run.c.state == "queued", dag.c.is_paused.is_(False))
        .order_by(dag_run.c.queued_at, dag_run.c.id).limit(limit)).all())


def mark_flow(conn: Connection, name: str, *, paused: bool) -> None:
    """Keep the row a flow's (``upsert_dag`` writes DAGs' columns) and set its pause."""
    conn.execute(update(dag).where(dag.c.dag_id == name).values(kind=FLOW, is_paused=paused))


def runs_to_launch(conn: Connection, limit: int = 50) -> list[Any]:
    """Queued flow runs with the flow's serialized row (its recorded ``entrypoint``)."""
    return list(conn.execute(
        select(dag_run.c.id, dag_run.c.dag_id, dag_run.c.run_id, dag_run.c.conf,
               dag_run.c.queued_at, dag.c.serialized)
        .join(dag, dag.c.dag_id == dag_run.c.dag_id).where(*_to_launch())
        .order_by(dag_run.c.queued_at, dag_run.c.id).limit(limit)).all())


def runs_to_launch_query() -> Any:
    """The runs of ``runs_to_launch`` (a query for an ``EXISTS``)."""
    return (select(dag_run.c.id).join(dag, dag.c.dag_id == dag_run.c.dag_id)
            .where(*_to_launch()))


def _to_launch() -> tuple[Any, ...]:
    return dag.c.kind == FLOW, dag_run.c.state == "queued", dag.c.is_paused.is_(False)
