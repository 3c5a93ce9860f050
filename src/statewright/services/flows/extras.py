"""The recorder's answers to what a Prefect file asks beside states (request ``extra``):
blocks and variables (variables, encrypted at rest), artifacts (XCom rows of the task run, or
of the flow run under ``FLOW_RUN_TASK_ID``), events (audit log rows), pools and their
leases (global concurrency limits) and reads of flow runs (``get_client``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, insert, select

from statewright.db.repositories import pools as pool_repo
from statewright.db.repositories import variables as var_repo
from statewright.db.repositories import xcoms
from statewright.db.tables import dag_run
from statewright.db.tables_auth import audit_log

FLOW_RUN_TASK_ID = "__flow_run__"
"""The XCom task id of artifacts created in a flow's body (not in a task run)."""


def _cipher() -> Any:
    from statewright.services.worker.deferral import current_cipher

    return current_cipher()


def _var_get(conn: Connection, arg: Any, now: datetime) -> str | None:
    record = var_repo.get(conn, _cipher(), str(arg))
    return None if record is None else record.val


def _var_put(conn: Connection, arg: Any, now: datetime) -> bool:
    key, value, description = arg
    return var_repo.put(conn, _cipher(), key, value, now=now, description=description,
                        keep_description=True)


def _var_delete(conn: Connection, arg: Any, now: datetime) -> bool:
    return var_repo.delete_one(conn, str(arg))


def _artifact(conn: Connection, arg: Any, now: datetime) -> None:
    run_pk, task_id, key, payload = arg
    xcoms.set_values(conn, [(run_pk, task_id or FLOW_RUN_TASK_ID, -1, key, payload)], now)


def _artifacts(conn: Connection, arg: Any, now: datetime) -> list[dict[str, Any]]:
    from statewright.db.tables import xcom

    rows = conn.execute(select(xcom.c.task_id, xcom.c.key, xcom.c.value, xcom.c.created_at)
                        .where(xcom.c.dag_run_id == int(arg), xcom.c.key.like("artifact:%"))
                        .order_by(xcom.c.id)).all()
    return [{"task_run": None if r.task_id == FLOW_RUN_TASK_ID else r.task_id,
             **(r.value or {})} for r in rows]


def _event(conn: Connection, arg: Any, now: datetime) -> None:
    name, dag_id, resource, payload = arg
    conn.execute(insert(audit_log).values(
        at=now, username=None, action="flow.event", method="EMIT", path=name, dag_id=dag_id,
        target=resource, outcome="success", status_code=0,
        detail=json.dumps(payload, default=str)))


def _pool(conn: Connection, arg: Any, now: datetime) -> int | None:
    row = pool_repo.get(conn, str(arg))
    return None if row is None else int(row.slots)


def _flow_runs(conn: Connection, arg: Any, now: datetime) -> list[dict[str, Any]]:
    query = select(dag_run).order_by(dag_run.c.id.desc()).limit(int(arg.get("limit") or 200))
    if arg.get("id") is not None:
        query = query.where(dag_run.c.id == int(arg["id"]))
    if arg.get("dag_id") is not None:
        query = query.where(dag_run.c.dag_id == arg["dag_id"])
    return [dict(r._mapping) for r in conn.execute(query).all()]


def _run_deployment(conn: Connection, arg: Any, now: datetime) -> dict[str, Any]:
    """``"flow/deployment"`` → a manual run of the served flow with the parameters as conf,
    started by the scheduler through the deployment's serving process."""
    from statewright.core.transitions import Actor
    from statewright.db.repositories import flows as flow_repo
    from statewright.services.dag_runs import trigger_dag

    name, parameters = arg
    flow_name, _, deployment = str(name).partition("/")
    row = flow_repo.deployment_of(conn, flow_name)
    if row is None or (deployment and row.name != deployment):
        raise LookupError(f"Deployment {name!r} not found: serve the flow first "
                          "(flow.serve(name=...)), and name it 'flow-name/deployment-name'.")
    pk, run_id = trigger_dag(conn, flow_name, now=now, actor=Actor.WORKER,
                             conf={**(row.parameters or {}), **(parameters or {})})
    return {"id": pk, "run_id": run_id}


def _lease_take(conn: Connection, arg: Any, now: datetime) -> list[int] | None:
    """Take ``occupy`` slots of each pool named, or none (None) when one has not enough free;
    expired leases (their process died) are dropped first. The pools' rows are locked (SQLite:
    writes are serialized), so two processes cannot both take the last slot."""
    from datetime import timedelta

    from sqlalchemy import delete, func

    from statewright.db.tables import pool
    from statewright.db.tables_flows import concurrency_lease as lease

    names, occupy, holder, seconds = arg
    rows = conn.execute(select(pool.c.name, pool.c.slots).where(pool.c.name.in_(names))
                        .with_for_update()).all()
    conn.execute(delete(lease).where(lease.c.pool.in_(names), lease.c.expires_at <= now))
    used = dict(conn.execute(select(lease.c.pool, func.sum(lease.c.slots))
                             .where(lease.c.pool.in_(names)).group_by(lease.c.pool)).all())
    if any(int(used.get(r.name) or 0) + occupy > r.slots for r in rows):
        return None
    expires = now + timedelta(seconds=seconds)
    ids: list[int] = []
    for r in rows:
        key = conn.execute(insert(lease).values(pool=r.name, slots=occupy, holder=holder,
                                                expires_at=expires)).inserted_primary_key
        assert key is not None
        ids.append(int(key[0]))
    return ids


def _lease_release(conn: Connection, arg: Any, now: datetime) -> None:
    from sqlalchemy import delete

    from statewright.db.tables_flows import concurrency_lease as lease

    if arg:
        conn.execute(delete(lease).where(lease.c.id.in_(list(arg))))


HANDLERS: dict[str, Callable[[Connection, Any, datetime], Any]] = {
    "var_get": _var_get, "var_put": _var_put, "var_delete": _var_delete,
    "artifact": _artifact, "artifacts": _artifacts, "event": _event, "pool": _pool,
    "flow_runs": _flow_runs, "run_deployment": _run_deployment,
    "lease_take": _lease_take, "lease_release": _lease_release,
}


def handle(conn: Connection, arg: tuple[str, Any], now: datetime) -> Any:
    name, payload = arg
    if name not in HANDLERS:
        raise ValueError(f"{name!r} is not an extra request of the flow recorder.")
    return HANDLERS[name](conn, payload, now)
