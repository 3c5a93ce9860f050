"""What the API and the UI show, built from the repositories' rows into response bodies.

Every function takes an open connection (a read snapshot) and answers with a schema object, or
raises ``NotFound`` saying what is missing and where to look.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import Connection

from statewright.api import schemas as s
from statewright.api.errors import NotFound
from statewright.core.limits import InputLimits, InputTooLarge, check_value
from statewright.core.states import RUN_UNFINISHED
from statewright.db.repositories import browse, dag_versions, favorites, transitions_log
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import import_errors as import_error_repo
from statewright.db.repositories import runs as run_repo
from statewright.db.repositories import task_instances as ti_repo
from statewright.db.repositories import xcoms as xcom_repo
from statewright.services.secrets.masks import redactor_for_task_instance
from statewright.services.timetable_view import schedule_words
from statewright.services.worker.log_paths import log_path_for

RECENT_RUNS = 10
UNFINISHED_RUN_STATES = frozenset(s_.value for s_ in RUN_UNFINISHED)


def _q(value: str) -> str:
    return quote(value, safe="")


# -- DAGs -----------------------------------------------------------------------------------


def _run_brief(r: Any) -> s.RunBrief:
    return s.RunBrief(dag_run_id=r.run_id, state=r.state, state_name=r.state_name,
                      run_after=r.run_after, logical_date=r.logical_date,
                      start_date=r.start_date, end_date=r.end_date)


def _dag(row: Any, runs: Sequence[Any]) -> dict[str, Any]:
    recent = [_run_brief(r) for r in runs]
    return dict(
        dag_id=row.dag_id, kind="flow" if row.kind == "flow" else "dag",
        description=row.description, fileloc=row.fileloc,
        dag_display_name=getattr(row, "dag_display_name", None)
        or (getattr(row, "serialized", None) or {}).get("dag_display_name") or row.dag_id,
        is_paused=bool(row.is_paused), is_active=bool(row.is_active),
        schedule=row.schedule_summary, tags=list(row.tags or []),
        max_active_runs=row.max_active_runs, max_active_tasks=row.max_active_tasks,
        fail_stop=bool(row.fail_stop), next_dagrun=row.next_dagrun,
        next_dagrun_create_after=row.next_dagrun_create_after,
        last_parsed_at=row.last_parsed_at,
        last_run_state=recent[0].state if recent else None,
        last_run=recent[0] if recent else None, recent_runs=recent,
    )


def list_dags(conn: Connection, *, limit: int, offset: int, paused: bool | None,
              tags: Sequence[str], dag_id_pattern: str | None, owners: Sequence[str] = (),
              last_run_state: str | None = None, username: str | None = None,
              is_favorite: bool | None = None) -> s.DagCollection:
    """A page of DAGs; with ``username``, each says whether that user starred it, and
    ``is_favorite`` keeps only the starred (true) or the other (false) DAGs."""
    uid = favorites.user_id(conn, username) if username else None
    extra = [] if is_favorite is None else [favorites.is_favorite_condition(uid, is_favorite)]
    rows, total = browse.dags_page(conn, limit=limit, offset=offset, paused=paused, tags=tags,
                                   dag_id_pattern=dag_id_pattern, owners=owners,
                                   last_run_state=last_run_state, extra=extra)
    recent = browse.recent_runs(conn, [r.dag_id for r in rows], RECENT_RUNS)
    starred = favorites.starred(conn, uid, [r.dag_id for r in rows]) if uid is not None else set()
    return s.DagCollection(
        dags=[s.Dag(**_dag(r, recent.get(r.dag_id, [])), owners=list(r.owners or []),
                    is_favorite=r.dag_id in starred) for r in rows], total_entries=total)


def dag_row(conn: Connection, dag_id: str) -> Any:
    row = dag_repo.get_dag(conn, dag_id)
    if row is None:
        raise NotFound(f"No DAG with id {dag_id!r}. GET /api/v1/dags lists the known DAGs and "
                       "GET /api/v1/importErrors the DAG files that failed to import.")
    return row


def get_dag(conn: Connection, dag_id: str) -> s.DagDetail:
    row = dag_row(conn, dag_id)
    runs = browse.recent_runs(conn, [dag_id], RECENT_RUNS).get(dag_id, [])
    ser = row.serialized or {}
    tasks, deps, groups = dag_structure(ser)
    return s.DagDetail(
        **_dag(row, runs), owners=list(ser.get("owners") or []), doc_md=ser.get("doc_md"),
        timezone=ser.get("timezone"),
        start_date=ser.get("start_date"), end_date=ser.get("end_date"),
        catchup=ser.get("catchup"), params=dict(ser.get("params") or {}), tasks=tasks,
        dependencies=deps, task_groups=groups, schedule_description=schedule_words(ser),
    )


def dag_structure(ser: dict[str, Any]
                  ) -> tuple[list[s.Task], list[s.Dependency], list[s.TaskGroupInfo]]:
    """The tasks, dependencies and task groups of a serialized DAG (of any version)."""
    tasks = [
        s.Task(task_id=t["task_id"], operator=t.get("operator", ""),
               operator_name=t.get("operator_name") or t.get("operator"),
               upstream=list(t.get("upstream", [])), downstream=list(t.get("downstream", [])),
               trigger_rule=str(t.get("trigger_rule", "all_success")),
               retries=int(t.get("retries", 0)), retry_delay=t.get("retry_delay"),
               retry_exponential_backoff=bool(t.get("retry_exponential_backoff", False)),
               execution_timeout=t.get("execution_timeout"), pool=t.get("pool"),
               queue=t.get("queue"), priority_weight=t.get("priority_weight"),
               is_sensor=bool(t.get("is_sensor", False)),
               deferrable=bool(t.get("deferrable", False)),
               is_setup=bool(t.get("is_setup", False)),
               is_teardown=bool(t.get("is_teardown", False)),
               on_failure_fail_dagrun=bool(t.get("on_failure_fail_dagrun", False)),
               task_group=t.get("task_group"))
        for t in ser.get("tasks", [])
    ]
    labels = {(e["upstream"], e["downstream"]): e["label"] for e in ser.get("edge_info", [])}
    deps = [s.Dependency(source=up, target=t.task_id, label=labels.get((up, t.task_id)))
            for t in tasks for up in t.upstream]
    return tasks, deps, _task_groups(ser)


def list_import_errors(conn: Connection, *, limit: int, offset: int) -> s.ImportErrorCollection:
    rows = import_error_repo.list_all(conn)
    return s.ImportErrorCollection(
        import_errors=[s.ImportErrorEntry(import_error_id=r.id, filename=r.filename,
                                          stack_trace=r.stacktrace, timestamp=r.timestamp)
                       for r in rows[offset:offset + limit]],
        total_entries=len(rows))


# -- DAG runs -------------------------------------------------------------------------------


def _run_duration(r: Any, now: datetime | None = None) -> float | None:
    if r.start_date is None:
        return None
    end = r.end_date or now
    return None if end is None else max((end - r.start_date).total_seconds(), 0.0)


_SHOWN_CONF = InputLimits(max_depth=128, max_items=1_000_000)
"""A stored conf deeper than this is not shown (JSON answers cannot nest it)."""


def dag_run(r: Any, counts: dict[str, int] | None = None) -> s.DagRun:
    """The run as answered; a run that cannot be shown whole (its conf stored before the input
    limits, too deep to answer) is answered without it and with ``read_error`` saying why."""
    conf, error = dict(r.conf or {}), None
    try:
        check_value(conf, _SHOWN_CONF, what="its conf", check_bytes=False)
    except InputTooLarge as exc:
        conf, error = {}, f"this run cannot be shown whole: {str(exc).split('; ')[0]}"
    return s.DagRun(
        dag_id=r.dag_id, dag_run_id=r.run_id, run_type=r.run_type, state=r.state,
        state_name=r.state_name, state_message=r.state_message, logical_date=r.logical_date,
        data_interval_start=r.data_interval_start, data_interval_end=r.data_interval_end,
        run_after=r.run_after, queued_at=r.queued_at, start_date=r.start_date,
        end_date=r.end_date, duration=_run_duration(r), conf=conf,
        triggered_by=r.triggered_by, clear_number=r.clear_number or 0,
        partition_key=getattr(r, "partition_key", None), task_instance_states=counts,
        read_error=error,
    )


def run_row(conn: Connection, dag_id: str, run_id: str) -> Any:
    run = run_repo.get_by_run_id(conn, dag_id, run_id)
    if run is None:
        dag_row(conn, dag_id)
        raise NotFound(f"DAG {dag_id!r} has no run {run_id!r}. GET /api/v1/dags/{dag_id}/dagRuns "
                       "lists its runs.")
    return run


def list_runs(conn: Connection, dag_id: str, *, limit: int, offset: int,
              states: Sequence[str], order_by: str) -> s.DagRunCollection:
    dag_row(conn, dag_id)
    rows, total = browse.runs_page(conn, dag_id, limit=limit, offset=offset, states=states,
                                   order_by=order_by)
    return s.DagRunCollection(dag_runs=[dag_run(r) for r in rows], total_entries=total)


def get_run(conn: Connection, dag_id: str, run_id: str) -> s.DagRun:
    run = run_row(conn, dag_id, run_id)
    return dag_run(run, browse.task_instance_counts(conn, run.id))


def run_history(conn: Connection, dag_id: str, run_id: str) -> s.TransitionCollection:
    run_row(conn, dag_id, run_id)
    rows = transitions_log.for_run(conn, dag_id, run_id)
    return s.TransitionCollection(transitions=[_transition(r) for r in rows],
                                  total_entries=len(rows))


# -- task instances ---------------------------------------------------------------------------


def _ti(r: Any) -> dict[str, Any]:
    return dict(
        dag_id=r.dag_id, dag_run_id=r.run_id, task_id=r.task_id, map_index=r.map_index,
        rendered_map_index=r.rendered_map_index,
        state=r.state, state_name=r.state_name, state_message=r.state_message,
        try_number=r.try_number, max_tries=r.max_tries, operator=r.operator, pool=r.pool,
        queue=r.queue, priority_weight=r.priority_weight, hostname=r.hostname, pid=r.pid,
        scheduled_at=r.scheduled_at, queued_at=r.queued_at, start_date=r.start_date,
        end_date=r.end_date, duration=r.duration, last_heartbeat_at=r.last_heartbeat_at,
        next_retry_at=r.next_retry_at, reschedule_date=r.reschedule_date,
        trigger_id=r.trigger_id, trigger_timeout=r.trigger_timeout,
    )


def list_task_instances(conn: Connection, dag_id: str, run_id: str
                        ) -> s.TaskInstanceCollection:
    run = run_row(conn, dag_id, run_id)
    rows = _in_dag_order(conn, dag_id, ti_repo.by_run(conn, run.id))
    return s.TaskInstanceCollection(task_instances=[s.TaskInstance(**_ti(r)) for r in rows],
                                    total_entries=len(rows))


def _in_dag_order(conn: Connection, dag_id: str, rows: list[Any]) -> list[Any]:
    ser = dag_repo.get_serialized(conn, dag_id) or {}
    order = {t["task_id"]: i for i, t in enumerate(ser.get("tasks", []))}
    return sorted(rows, key=lambda r: (order.get(r.task_id, len(order)), r.id))


def ti_row(conn: Connection, dag_id: str, run_id: str, task_id: str, map_index: int = -1,
           *, any_index: bool = False) -> tuple[Any, Any]:
    """The run and the task instance ``(task_id, map_index)``; ``any_index``: the first
    instance of the task when it has none of that map index."""
    run = run_row(conn, dag_id, run_id)
    row = ti_repo.get_by_key(conn, run.id, task_id, map_index)
    if row is None:
        instances = ti_repo.mapped_instances(conn, run.id, task_id)
        if instances and any_index:
            return run, instances[0]
        base = f"/api/v1/dags/{dag_id}/dagRuns/{run_id}/taskInstances"
        if instances:
            indexes = [r.map_index for r in instances]
            raise NotFound(
                f"Task {task_id!r} of run {run_id!r} is mapped: it has {len(instances)} task "
                f"instances, map indexes {indexes[0]} to {indexes[-1]}; there is none of map "
                f"index {map_index}. Add the map index to the URL "
                f"({base}/{task_id}/{indexes[0]}); {base}/{task_id}/listMapped lists them.")
        raise NotFound(f"Run {run_id!r} of DAG {dag_id!r} has no task {task_id!r}. GET "
                       f"{base} lists its tasks.")
    return run, row


def list_mapped_task_instances(conn: Connection, dag_id: str, run_id: str, task_id: str
                               ) -> s.TaskInstanceCollection:
    run = run_row(conn, dag_id, run_id)
    rows = ti_repo.mapped_instances(conn, run.id, task_id)
    if not rows:
        raise NotFound(f"Run {run_id!r} of DAG {dag_id!r} has no task {task_id!r}. GET "
                       f"/api/v1/dags/{dag_id}/dagRuns/{run_id}/taskInstances lists its tasks.")
    return s.TaskInstanceCollection(task_instances=[s.TaskInstance(**_ti(r)) for r in rows],
                                    total_entries=len(rows))


def _log_url(dag_id: str, run_id: str, task_id: str, try_number: int,
             map_index: int = -1) -> str:
    index = f"/{map_index}" if map_index >= 0 else ""
    return (f"/api/v1/dags/{_q(dag_id)}/dagRuns/{_q(run_id)}/taskInstances/{_q(task_id)}"
            f"{index}/logs/{try_number}")


def get_task_instance(conn: Connection, dag_id: str, run_id: str, task_id: str,
                      map_index: int = -1, *, any_index: bool = False,
                      trigger_cipher: Any = False) -> s.TaskInstanceDetail:
    """``trigger_cipher``: describe a deferred one's trigger, its arguments decrypted with this
    cipher (None: without its arguments); False: not at all."""
    _, row = ti_row(conn, dag_id, run_id, task_id, map_index, any_index=any_index)
    index = row.map_index
    tries: list[s.Try] = []
    history = ti_repo.history_of(conn, row.id)
    numbers = dag_versions.numbers(
        conn, [h.dag_version_id for h in history] + [row.dag_version_id])
    for h in history:
        tries.append(s.Try(
            dag_version_number=numbers.get(h.dag_version_id),
            try_number=h.try_number, state=h.state, state_name=h.state_name,
            state_message=h.state_message, hostname=h.hostname, pid=h.pid,
            start_date=h.start_date, end_date=h.end_date, duration=h.duration, error=h.error,
            traceback=h.traceback,
            log_url=_log_url(dag_id, run_id, task_id, h.try_number, index)))
    seen = {t.try_number for t in tries}
    if row.try_number > 0 and row.try_number not in seen:
        tries.append(s.Try(
            dag_version_number=numbers.get(row.dag_version_id),
            try_number=row.try_number, state=row.state, state_name=row.state_name,
            state_message=row.state_message, hostname=row.hostname, pid=row.pid,
            start_date=row.start_date, end_date=row.end_date, duration=row.duration,
            current=True, log_url=_log_url(dag_id, run_id, task_id, row.try_number, index)))
    tries.sort(key=lambda t: t.try_number)
    task = next((t for t in (dag_repo.get_serialized(conn, dag_id) or {}).get("tasks", [])
                 if t["task_id"] == task_id), {})
    trigger = None
    if trigger_cipher is not False and row.state == "deferred":
        from statewright.api.ti_trigger import trigger_info

        trigger = trigger_info(conn, row, trigger_cipher)
    from statewright.api.dag_details import render_doc_md

    return s.TaskInstanceDetail(**_ti(row), tries=tries, trigger=trigger,
                                operator_name=task.get("operator_name") or row.operator,
                                doc_md_html=render_doc_md(task.get("doc_md")))


def _transition(r: Any) -> s.Transition:
    return s.Transition(task_id=r.task_id, map_index=r.map_index, from_state=r.from_state,
                        to_state=r.to_state,
                        name=r.name, message=r.message, actor=r.actor,
                        try_number=r.try_number, at=r.at)


def task_instance_history(conn: Connection, dag_id: str, run_id: str, task_id: str,
                          map_index: int = -1) -> s.TransitionCollection:
    _, row = ti_row(conn, dag_id, run_id, task_id, map_index)
    rows = transitions_log.for_task_instance(conn, row.id)
    return s.TransitionCollection(transitions=[_transition(r) for r in rows],
                                  total_entries=len(rows))


def xcom_entries(conn: Connection, dag_id: str, run_id: str, task_id: str,
                 map_index: int = -1, cipher: Any = None) -> s.XComCollection:
    """``cipher`` reads what the tries registered for masking (None: every value hidden)."""
    _, row = ti_row(conn, dag_id, run_id, task_id, map_index)
    shown = redactor_for_task_instance(conn, row.id, cipher)  # secrets are shown as ***
    entries = [_xcom_entry(r, shown, dag_id, run_id, task_id, row.map_index)
               for r in xcom_repo.entries(conn, row.dag_run_id, task_id, row.map_index)]
    return s.XComCollection(xcom_entries=entries, total_entries=len(entries))


def _xcom_entry(r: Any, shown: Any, dag_id: str, run_id: str, task_id: str,
                map_index: int) -> s.XComEntry:
    """The stored value (secrets masked), its type and its readable rendering."""
    from statewright.sdk import serde
    from statewright.sdk.xcom_backend import XComResult, resolve_xcom_backend

    raw = shown(r.value)
    result = XComResult(r.key, raw, dag_id, run_id, task_id, map_index)
    try:
        readable = resolve_xcom_backend().orm_deserialize_value(result)
    except Exception:  # a backend that fails here: the serializer's own rendering
        readable = serde.render(raw)
    return s.XComEntry(key=r.key, value=shown(readable), type=serde.type_name(raw), raw=raw,
                       timestamp=r.created_at)


def run_log(conn: Connection, dag_id: str, run_id: str, *, logs_folder: Path | None,
            max_bytes: int) -> s.RunLog:
    """A flow run's own log file (``flow_run.log`` in the run's log folder)."""
    run_row(conn, dag_id, run_id)  # 404 for an unknown run
    template = log_path_for(logs_folder, dag_id, run_id, "{task_id}", 1)
    path = (os.path.join(template.split("task_id={task_id}")[0], "flow_run.log")
            if template else None)
    if path is None or not os.path.isfile(path):  # a DAG run, or a flow run run elsewhere
        return s.RunLog(dag_id=dag_id, dag_run_id=run_id, path=None, size=0, truncated=False,
                        content="")
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        if size > max_bytes:
            fh.seek(size - max_bytes)
        data = fh.read(max_bytes)
    return s.RunLog(dag_id=dag_id, dag_run_id=run_id, path=_log_name(path, logs_folder),
                    size=size, truncated=size > max_bytes,
                    content=data.decode("utf-8", errors="replace"))


def _log_name(path: str, logs_folder: Path | None) -> str:
    """A log file as the API shows it: its path under the logs folder, never the server's
    absolute path (a file elsewhere shows its name only)."""
    if logs_folder is not None:
        try:
            return str(Path(path).resolve().relative_to(Path(logs_folder).resolve()))
        except ValueError:
            pass
    return Path(path).name


def task_log(conn: Connection, dag_id: str, run_id: str, task_id: str, try_number: int, *,
             logs_folder: Path | None, max_bytes: int, map_index: int = -1) -> s.TaskLog:
    path = task_log_file(conn, dag_id, run_id, task_id, try_number, logs_folder=logs_folder,
                         map_index=map_index)[0]
    size = os.path.getsize(path)
    with open(path, "rb") as fh:
        if size > max_bytes:
            fh.seek(size - max_bytes)
        data = fh.read(max_bytes)
    return s.TaskLog(dag_id=dag_id, dag_run_id=run_id, task_id=task_id, try_number=try_number,
                     path=_log_name(path, logs_folder), size=size, truncated=size > max_bytes,
                     content=data.decode("utf-8", errors="replace"))


def task_log_file(conn: Connection, dag_id: str, run_id: str, task_id: str, try_number: int, *,
                  logs_folder: Path | None, map_index: int = -1) -> tuple[str, Any]:
    """The log file of one try and the task instance's row, or NotFound saying why."""
    path, row, missing = task_log_file_or_why(conn, dag_id, run_id, task_id, try_number,
                                              logs_folder=logs_folder, map_index=map_index)
    if path is None:
        raise NotFound(missing)
    return path, row


def task_log_file_or_why(conn: Connection, dag_id: str, run_id: str, task_id: str,
                         try_number: int, *, logs_folder: Path | None, map_index: int = -1
                         ) -> tuple[str | None, Any, str]:
    """(the log file, the row, "") of a try, or (None, the row, why it has no file); NotFound
    when the task instance or the try does not exist."""
    _, row = ti_row(conn, dag_id, run_id, task_id, map_index)
    if try_number < 1 or try_number > row.try_number:
        have = (f"its tries are 1 to {row.try_number}" if row.try_number
                else "it has not started a try yet")
        raise NotFound(f"Task {task_id!r} of run {run_id!r} has no try {try_number}: {have}.")
    path: str | None = None
    for h in ti_repo.history_of(conn, row.id):
        if h.try_number == try_number and h.log_path:
            path = h.log_path
    if path is None:
        path = log_path_for(logs_folder, dag_id, run_id, task_id, try_number, row.map_index)
    if path is None or not os.path.isfile(path):
        where = f" (expected at {_log_name(path, logs_folder)})" if path else ""
        return None, row, (f"No log file for try {try_number} of task {task_id!r} in run "
                           f"{run_id!r}{where}. The try may have run on another machine, been "
                           "stopped before it began, or its log was removed; an "
                           "EmptyOperator's try runs no process and writes none.")
    return path, row, ""


# -- grid (api/grid_reads.py) ------------------------------------------------------------


def _task_groups(ser: dict[str, Any]) -> list[s.TaskGroupInfo]:
    return [s.TaskGroupInfo(group_id=g["group_id"], label=g.get("label") or g["group_id"],
                            parent=g.get("parent"), tooltip=g.get("tooltip") or "",
                            ui_color=g.get("ui_color"), ui_fgcolor=g.get("ui_fgcolor"))
            for g in ser.get("task_groups", [])]
# -- health -------------------------------------------------------------------------------------


def job_health(info: dict[str, Any] | None, now: datetime, threshold: timedelta
               ) -> s.ComponentHealth | None:
    if info is None:
        return None
    latest = info["running_latest_heartbeat"]
    healthy = latest is not None and now - latest <= threshold
    return s.ComponentHealth(status="healthy" if healthy else "unhealthy",
                             latest_heartbeat=info["latest_heartbeat"],
                             running_jobs=info["running_jobs"])
