"""A served flow's deployment and schedule: the flow's ``dag`` row gets a schedule that the
scheduler reads like a DAG's (``services/scheduler/dag_schedule``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection

from statewright.core.timetables import serialize_timetable
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import flows as flow_repo
from statewright.flows.backend import Deployment
from statewright.services.scheduler.dag_schedule import next_fields, schedule_spec


def serialized_flow(d: Deployment, now: datetime) -> dict[str, Any]:
    schedule: Any = d.cron if d.cron is not None else (
        {"timedelta_seconds": d.interval_seconds} if d.interval_seconds is not None else None)
    return {"dag_id": d.flow_name, "kind": flow_repo.FLOW, "fileloc":
            d.entrypoint.rpartition(":")[0], "description": d.description, "tasks": [],
            "tags": list(d.tags), "schedule": schedule, "timezone": "UTC",
            "start_date": now.isoformat(), "catchup": False}


def register_deployment(conn: Connection, d: Deployment, now: datetime) -> None:
    """Store the deployment and the flow's schedule; its next run is computed now."""
    flow_repo.ensure_flow(conn, d.flow_name, fileloc=d.entrypoint.rpartition(":")[0],
                          description=d.description, now=now)
    existing = dag_repo.get_serialized(conn, d.flow_name) or {}
    serialized = serialized_flow(d, now)
    if existing.get("schedule") == serialized["schedule"] and existing.get("start_date"):
        serialized["start_date"] = existing["start_date"]  # the schedule did not change
    spec = schedule_spec(serialized)  # a bad cron is refused here, with its reason
    summary = d.cron or (f"every {d.interval_seconds:g}s" if d.interval_seconds else None)
    dag_repo.upsert_dag(conn, serialized, now=now, schedule_summary=summary,
                        timetable=serialize_timetable(spec.timetable))
    flow_repo.mark_flow(conn, d.flow_name, paused=d.paused)
    dag_repo.set_next_dagrun(conn, d.flow_name, next_fields(spec.next_info(None, now)))
    flow_repo.upsert_deployment(conn, dag_id=d.flow_name, name=d.name,
                                entrypoint=d.entrypoint, parameters=d.parameters, now=now)
