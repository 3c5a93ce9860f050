"""``/api/v2/eventLogs``: statewright's audit log (admin only, as ``/api/v1/eventLogs``) in
Airflow's shape, with Airflow's filters; ``extra`` holds the method, path, outcome and detail.
The audit log records API actions, not task events: the task filters are refused (400)."""

from __future__ import annotations

import json
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request

from statewright.api.auth.permissions import ADMIN
from statewright.api.deps import Offset, reading
from statewright.api.errors import NotFound
from statewright.api.v2 import schemas as v2
from statewright.api.v2.common import NOT_FOUND, PageLimit
from statewright.api.v2.row_filters import OrderBy, Pattern, Prefix, sort_spec
from statewright.api.v2.row_filters import When as _When
from statewright.db.repositories import audit as audit_repo

router = APIRouter(tags=["Event Log"])

_ORDER = {"id": "id", "event_log_id": "id", "dttm": "at", "when": "at", "dag_id": "dag_id",
          "owner": "username", "event": "action"}
_Str = Annotated[str | None, Query()]
_Strings = Annotated[list[str] | None, Query()]


def event_log(r: Any) -> v2.EventLog:
    """An audit row in Airflow's shape."""
    return v2.EventLog(
        event_log_id=r.id, when=r.at, dag_id=r.dag_id, event=r.action, owner=r.username,
        extra=json.dumps({"method": r.method, "path": r.path, "target": r.target,
                          "outcome": r.outcome, "status_code": r.status_code,
                          "detail": r.detail}))


def _split(values: list[str] | None) -> tuple[str, ...]:
    return tuple(v.strip() for value in values or [] for v in value.split(",") if v.strip())


@router.get("/eventLogs", response_model=v2.EventLogCollection, openapi_extra=ADMIN)
def get_event_logs(
    request: Request, limit: PageLimit = 50, offset: Offset = 0, order_by: OrderBy = None,
    dag_id: _Str = None, owner: _Str = None, event: _Str = None,
    excluded_events: _Strings = None, included_events: _Strings = None,
    before: _When = None, after: _When = None,
    dag_id_pattern: Pattern = None, dag_id_prefix_pattern: Prefix = None,
    owner_pattern: Pattern = None, owner_prefix_pattern: Prefix = None,
    event_pattern: Pattern = None, event_prefix_pattern: Prefix = None,
) -> v2.EventLogCollection:
    """The audit log (``id`` order by default, as Airflow; ``order_by=-when`` for the newest
    first)."""
    f = audit_repo.AuditFilter(
        dag_id=dag_id, username=owner, action=event, included=_split(included_events),
        excluded=_split(excluded_events), at=(after, None, before, None), patterns={
            "dag_id": (dag_id_pattern, dag_id_prefix_pattern),
            "username": (owner_pattern, owner_prefix_pattern),
            "action": (event_pattern, event_prefix_pattern)})
    with reading(request) as conn:
        rows, total = audit_repo.page_filtered(conn, f, order=sort_spec(order_by, _ORDER, "id"),
                                               limit=limit, offset=offset)
    return v2.EventLogCollection(event_logs=[event_log(r) for r in rows], total_entries=total)


@router.get("/eventLogs/{event_log_id}", response_model=v2.EventLog, openapi_extra=ADMIN,
            responses=NOT_FOUND)
def get_event_log(request: Request, event_log_id: Annotated[int, Path(ge=1, le=2**31 - 1)]
                  ) -> v2.EventLog:
    """One entry of the audit log."""
    with reading(request) as conn:
        row = audit_repo.one(conn, event_log_id)
    if row is None:
        raise NotFound(f"The Event Log with id: `{event_log_id}` not found")
    return event_log(row)
