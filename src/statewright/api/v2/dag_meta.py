"""``/api/v2`` DAG stats (runs per DAG and state), DAG warnings (statewright records none),
DAG tags, and one import error by id."""

from __future__ import annotations

from typing import Annotated, get_args

from fastapi import APIRouter, Path, Query, Request

from statewright.api.deps import Offset, reading
from statewright.api.errors import NotFound
from statewright.api.routers import dags as v1_dags
from statewright.api.v2 import adapt
from statewright.api.v2 import schemas as v2
from statewright.api.v2 import schemas_system as v2s
from statewright.api.v2.common import NOT_FOUND, PageLimit
from statewright.api.v2.row_filters import OrderBy, Pattern, Prefix, every, listed, order
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import runs as run_repo

stats = APIRouter(tags=["DagStats"])
warnings = APIRouter(tags=["DagWarning"])
tags = APIRouter(tags=["DAG"])
import_errors = APIRouter(tags=["Import Error"])

_STATES: tuple[v2.RunState, ...] = get_args(v2.RunState)


def _name(row: object) -> str:
    ser = getattr(row, "serialized", None) or {}
    return str(ser.get("dag_display_name") or getattr(row, "dag_id", ""))


@stats.get("/dagStats", response_model=v2s.DagStatsCollection)
def get_dag_stats(request: Request, dag_ids: Annotated[list[str] | None, Query()] = None
                  ) -> v2s.DagStatsCollection:
    """How many runs each DAG has in each of Airflow's run states (statewright's other states
    counted as their nearest: ``paused`` as running, ``cancelled`` as failed)."""
    with reading(request) as conn:
        dags = [d for d in dag_repo.list_dags(conn) if not dag_ids or d.dag_id in dag_ids]
        counts = run_repo.count_by_dag_and_state(conn, [d.dag_id for d in dags])
    out = []
    for d in dags:
        per: dict[str, int] = dict.fromkeys(_STATES, 0)
        for state, n in counts.get(d.dag_id, {}).items():
            per[adapt.run_state(state)] += n
        out.append(v2s.DagStats(dag_id=d.dag_id, dag_display_name=_name(d), stats=[
            v2s.DagStatsState(state=s, count=per[s]) for s in _STATES]))
    return v2s.DagStatsCollection(dags=out, total_entries=len(out))


_WARNING_ORDER = {k: k for k in ("dag_id", "warning_type", "message", "timestamp")}


@warnings.get("/dagWarnings", response_model=v2s.DagWarningCollection)
def list_dag_warnings(
    request: Request,
    dag_id: Annotated[str | None, Query()] = None,
    warning_type: Annotated[str | None, Query()] = None,
    limit: PageLimit = 50,
    offset: Offset = 0,
    order_by: OrderBy = None,
) -> v2s.DagWarningCollection:
    """Always empty: statewright refuses what Airflow warns about (a DAG naming a pool that
    does not exist waits in the pool; an asset conflict is an import error)."""
    rows: list[v2s.DagWarning] = order([], order_by, _WARNING_ORDER, "dag_id")
    return v2s.DagWarningCollection(dag_warnings=rows, total_entries=0)


@tags.get("/dagTags", response_model=v2s.DagTagCollection)
def get_dag_tags(request: Request, limit: PageLimit = 50, offset: Offset = 0,
                 order_by: OrderBy = None, tag_name_pattern: Pattern = None,
                 tag_name_prefix_pattern: Prefix = None) -> v2s.DagTagCollection:
    """The tags of the DAGs, each once."""
    with reading(request) as conn:
        names = sorted({str(t) for d in dag_repo.list_dags(conn) for t in (d.tags or [])})
    rows, total = listed([{"name": n} for n in names], lambda r: r["name"], tag_name_pattern,
                         tag_name_prefix_pattern, order_by, {"name": "name"}, limit, offset,
                         "name")
    return v2s.DagTagCollection(tags=[r["name"] for r in rows], total_entries=total)


@import_errors.get("/importErrors/{import_error_id}", response_model=v2.ImportError_,
                   responses=NOT_FOUND)
def get_import_error(request: Request,
                     import_error_id: Annotated[int, Path(ge=1, le=2**31 - 1)]
                     ) -> v2.ImportError_:
    """One DAG file's import error."""
    found = next((e for e in every(lambda **page: v1_dags.list_import_errors(request, **page),
                                   "import_errors") if e.import_error_id == import_error_id),
                 None)
    if found is None:
        raise NotFound(f"The ImportError with import_error_id: `{import_error_id}` was not "
                       "found")
    return v2.ImportError_(import_error_id=found.import_error_id, timestamp=found.timestamp,
                           filename=found.filename, bundle_name="dags-folder",
                           stack_trace=found.stack_trace)
