"""A DAG's schedule for people: the description in words and the next runs it will create."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from statewright.core.timetables import DagRunInfo, describe_timetable
from statewright.db.repositories import dags as dag_repo
from statewright.services.scheduler.dag_schedule import schedule_spec
from statewright.services.scheduler.dagrun_creation import stored_info

__all__ = ["next_executions", "schedule_words"]


def schedule_words(serialized: Any) -> str:
    """The DAG's schedule in one sentence (the UI's DAG header)."""
    schedule = serialized.get("schedule") if isinstance(serialized, dict) else None
    if isinstance(schedule, dict) and "assets" in schedule:
        if "partitions" in schedule:
            return f"Once per partition of {schedule.get('summary', '')[len('partitions of '):]}"
        return f"When these assets are updated: {schedule.get('summary', '')}"
    try:
        return describe_timetable(schedule_spec(serialized).timetable)
    except Exception as exc:  # a stored schedule the processor would reject now
        return f"Unreadable schedule ({exc})"


def next_executions(conn: Any, dag_id: str, *, count: int,
                    now: datetime) -> dict[str, Any] | None:
    """The description and the next ``count`` runs of ``dag_id`` (None: no such DAG)."""
    row = dag_repo.get_dag(conn, dag_id)
    if row is None:
        return None
    runs: list[DagRunInfo] = []
    if row.next_dagrun_create_after is not None:
        spec = schedule_spec(row.serialized)
        info: DagRunInfo | None = stored_info(row)
        key_of = getattr(spec.timetable, "partition_key_of", None)
        while info is not None and len(runs) < count:
            if key_of is not None and info.partition_key is None:
                info = DagRunInfo(info.logical_date, info.data_interval_start,
                                  info.data_interval_end, info.run_after,
                                  key_of(info.logical_date), info.logical_date)
            runs.append(info)
            nxt = spec.timetable.next_run(last_automated=info, start_date=spec.start_date,
                                          end_date=spec.end_date, catchup=True, now=now)
            info = nxt if nxt is not None and nxt.logical_date > info.logical_date else None
    return {"dag_id": dag_id, "description": schedule_words(row.serialized),
            "summary": row.schedule_summary, "paused": bool(row.is_paused),
            "runs": [{"logical_date": r.logical_date,
                      "data_interval_start": r.data_interval_start,
                      "data_interval_end": r.data_interval_end, "run_after": r.run_after,
                      "partition_key": r.partition_key} for r in runs]}
