"""Creating DAG runs (manual triggers, schedules, backfills) with their task instances."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection

from statewright.config import max_tis_per_run
from statewright.core.errors import StatewrightError
from statewright.core.params import validate_run_conf
from statewright.core.partitions import check_partition_key
from statewright.core.timetables import DagRunInfo
from statewright.core.transitions import Who
from statewright.db import transition as door
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import import_errors
from statewright.db.repositories import partitions as partition_repo
from statewright.db.repositories import runs as run_repo
from statewright.sdk.params import conf_overrides_params
from statewright.services.dag_view import DagView


class DagNotFound(StatewrightError):
    pass


class RunAlreadyExists(StatewrightError):
    pass


class RunTooBig(StatewrightError):
    """A run with more task instances than ``max_tis_per_run`` allows."""


def run_size_error(dag_id: str, tasks: int, limit: int | None = None) -> str | None:
    """Why a run of a DAG of ``tasks`` tasks may not be created, or None when it may."""
    limit = max_tis_per_run() if limit is None else limit
    if tasks <= limit:
        return None
    return (f"DAG {dag_id!r} has {tasks:,} tasks, more than the {limit:,} task instances a "
            "run may have (STATEWRIGHT_MAX_TIS_PER_RUN). Split the DAG, or raise the limit if "
            "this machine and database can carry such runs.")


def check_run_size(view: DagView, limit: int | None = None) -> None:
    """Refuse a run of a DAG with more tasks than ``limit`` (``STATEWRIGHT_MAX_TIS_PER_RUN``)."""
    error = run_size_error(view.dag_id, len(view.tasks), limit)
    if error is not None:
        raise RunTooBig(f"{error} Nothing was created.")


def check_run_conf(view: DagView, conf: Mapping[str, Any] | None) -> None:
    """Raise ``ParamValidationError`` when ``conf`` does not satisfy the DAG's params."""
    validate_run_conf(view.raw.get("params_spec") or {}, conf, where=f"DAG {view.dag_id!r}",
                      conf_overrides_params=conf_overrides_params())


def check_logical_date_free(conn: Connection, dag_id: str, logical_date: datetime | None) -> None:
    """A DAG has at most one run per logical date, as in Airflow 3: a run at a logical date
    the DAG has a run at already is refused with ``RunAlreadyExists``."""
    if logical_date is None:
        return
    taken = run_repo.get_by_logical_date(conn, dag_id, logical_date)
    if taken is not None:
        at = logical_date.astimezone(UTC).isoformat()
        raise RunAlreadyExists(
            f"DAG {dag_id!r} already has a run at logical date {at} ({taken.run_id!r}); a DAG "
            "has one run per logical date. Pick another logical date, or clear that run to "
            "run it again.")


def manual_run_id(now: datetime) -> str:
    return f"manual__{now.isoformat()}"


def create_run(
    conn: Connection,
    view: DagView,
    *,
    now: datetime,
    actor: Who,
    run_type: str = "manual",
    run_id: str | None = None,
    conf: Mapping[str, Any] | None = None,
    logical_date: datetime | None = None,
    data_interval: tuple[datetime, datetime] | None = None,
    run_after: datetime | None = None,
    partition_key: str | None = None,
    one_per_logical_date: bool = True,
) -> int:
    """Insert a queued run and its task instances (state none); returns the run's key.
    ``one_per_logical_date=False`` (``dag.test``'s runs) skips the logical date's check.

    ``conf`` is validated against the DAG's params first (``ParamValidationError`` naming each
    bad param; nothing is created)."""
    check_run_conf(view, conf)
    partition_date = None if partition_key is None else partition_date_of(view, partition_key)
    run_id = run_id or manual_run_id(now)
    if run_repo.get_by_run_id(conn, view.dag_id, run_id) is not None:
        raise RunAlreadyExists(
            f"DAG {view.dag_id!r} already has a run {run_id!r}; pick another run id.")
    # A logical date given is checked; one left out takes the trigger's time (Airflow 3 leaves
    # it empty), so two runs triggered at one instant do not collide.
    if one_per_logical_date:
        check_logical_date_free(conn, view.dag_id, logical_date)
    if run_type == "manual":
        logical_date = logical_date if logical_date is not None else now
        data_interval = data_interval or manual_data_interval(view, logical_date)
    run_pk = door.create_dag_run(
        conn, dag_id=view.dag_id, run_id=run_id, run_type=run_type, actor=actor, now=now,
        logical_date=logical_date,
        data_interval_start=data_interval[0] if data_interval else None,
        data_interval_end=data_interval[1] if data_interval else None,
        run_after=run_after, conf=conf,
    )
    door.create_task_instances(conn, dag_run_id=run_pk, dag_id=view.dag_id, run_id=run_id,
                               rows=view.rows_in_run(view.task_rows(), logical_date, run_type),
                               actor=actor, now=now)
    if partition_key is not None:
        partition_repo.set_run_partitions(conn, {run_pk: (partition_key, partition_date)})
    return run_pk


def manual_data_interval(view: DagView, at: datetime) -> tuple[datetime, datetime] | None:
    """The data interval of a manual run at ``at``: the timetable's
    ``infer_manual_data_interval`` (None when the schedule cannot be read or it raises)."""
    from statewright.services.scheduler.dag_schedule import schedule_spec

    try:
        start, end = schedule_spec(view.raw).timetable.infer_manual_data_interval(at)
        info = DagRunInfo(run_after=at, data_interval=(start, end)).normalized()
        return info.data_interval_start, info.data_interval_end
    except Exception:
        return None


def partition_date_of(view: DagView, partition_key: str) -> datetime | None:
    """The date of a partition key given for a run of ``view``'s DAG (None: a key that is not
    a time); PartitionKeyError when the key does not match the DAG's timetable."""
    from statewright.services.scheduler.dag_schedule import schedule_spec

    return check_partition_key(schedule_spec(view.raw).timetable, partition_key)


@dataclass(frozen=True)
class RunSpec:
    """A run for ``create_runs``."""

    view: DagView
    run_id: str
    run_type: str
    logical_date: datetime | None = None
    data_interval: tuple[datetime, datetime] | None = None
    run_after: datetime | None = None
    conf: Mapping[str, Any] | None = None
    triggered_by: str | None = None
    task_rows: Sequence[Mapping[str, Any]] | None = None
    partition_key: str | None = None
    partition_date: datetime | None = None


def create_runs(conn: Connection, specs: Sequence[RunSpec], *, now: datetime,
                actor: Who) -> list[int]:
    """Insert many queued runs and their task instances at once (scheduled runs, backfills).

    The caller has checked that no run id exists yet (``create_run`` checks one by one).
    Returns the runs' keys in the order given.
    """
    keys = door.create_dag_runs(conn, [
        door.NewDagRun(
            dag_id=s.view.dag_id, run_id=s.run_id, run_type=s.run_type,
            task_rows=s.view.rows_in_run(
                s.task_rows if s.task_rows is not None else s.view.task_rows(),
                s.logical_date, s.run_type),
            logical_date=s.logical_date,
            data_interval_start=s.data_interval[0] if s.data_interval else None,
            data_interval_end=s.data_interval[1] if s.data_interval else None,
            run_after=s.run_after, conf=s.conf, triggered_by=s.triggered_by)
        for s in specs
    ], actor=actor, now=now)
    partition_repo.set_run_partitions(conn, {
        pk: (s.partition_key, s.partition_date)
        for pk, s in zip(keys, specs, strict=True) if s.partition_key is not None})
    return keys


def trigger_dag(
    conn: Connection,
    dag_id: str,
    *,
    now: datetime,
    actor: Who,
    conf: Mapping[str, Any] | None = None,
    run_id: str | None = None,
    logical_date: datetime | None = None,
    partition_key: str | None = None,
) -> tuple[int, str]:
    """Create a manual run of ``dag_id``; returns (key, run_id). A ``partition_key`` that does
    not match the DAG's timetable raises PartitionKeyError, a DAG with more tasks than
    ``max_tis_per_run`` RunTooBig (nothing is created)."""
    row = dag_repo.get_dag(conn, dag_id)
    if row is None or not row.is_active:
        refused = import_errors.naming_dag(conn, dag_id)
        if refused is not None:
            why = next(p for p in refused.stacktrace.split("\n\n") if f"DAG {dag_id!r} " in p)
            raise DagNotFound(f"DAG {dag_id!r} is not loaded (see `statewright dags errors`): "
                              f"{why}")
        raise DagNotFound(
            f"No DAG with id {dag_id!r} is known. Run `statewright dags list` to see the DAGs "
            "found in the DAGs folder, and `statewright dags errors` for files that failed to "
            "import.")
    view = DagView(row.serialized, row.dag_hash)
    check_run_size(view)
    run_id = run_id or manual_run_id(now)
    pk = create_run(conn, view, now=now, actor=actor, run_id=run_id, conf=conf,
                    logical_date=logical_date, partition_key=partition_key)
    return pk, run_id
