"""The asset events a starting try sees: the events that triggered its run
(``triggering_asset_events``) and the recent events of its task's inlets (``inlet_events``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection

from statewright.db.repositories import asset_events as event_repo
from statewright.db.repositories import assets as asset_repo

ASSET_TRIGGERED = "asset_triggered"


def add_asset_events(conn: Connection, workloads: Sequence[Any],
                     plan: Sequence[tuple[Any, Any]]) -> None:
    """Fill ``Workload.assets``; reads nothing for tries that need none."""
    triggered = [w.dag_run_id for w in workloads if w.run_type == ASSET_TRIGGERED]
    by_run = event_repo.triggering_events(conn, triggered) if triggered else {}
    views = {row.id: view for row, view in plan}
    # The run's partition came with the task instance's row (``ti_repo.workloads``).
    partitions = {row.dag_run_id: (row.partition_key, row.partition_date)
                  for row, _ in plan if row.partition_key is not None}
    for w in workloads:
        view = views.get(w.ti_id)
        task = view.tasks.get(w.task_id) if view is not None else None
        inlets = (task.raw.get("inlets") if task is not None else None) or []
        data: dict[str, Any] = {}
        if w.dag_run_id in by_run:
            data["triggering"] = by_run[w.dag_run_id]
        if inlets:
            names = [i["asset"]["name"] if "asset" in i else i["asset_ref"]["name"]
                     for i in inlets if "asset" in i or "asset_ref" in i]
            data["inlets"] = event_repo.recent_events_of(
                conn, names, [i["alias"] for i in inlets if "alias" in i])
            data["inlet_assets"] = [
                {"name": row.name, "uri": row.uri, "group": row.group}
                for row in (asset_repo.get_by_name_or_uri(conn, i["asset_ref"]["name"])
                            for i in inlets if "asset_ref" in i) if row is not None]
        if w.dag_run_id in partitions:
            key, date = partitions[w.dag_run_id]
            data["partition"] = {"key": key, "date": date}
        if data:
            w.assets = data
