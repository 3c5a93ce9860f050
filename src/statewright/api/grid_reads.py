"""The grid: a DAG's runs (columns) by its tasks (rows), every cell a task instance.

A grid of 1,000 tasks by 25 runs has 25,000 cells: they are built as plain dicts and serialized
once (``grid_json``), never as 25,000 models; ``schemas.Grid`` documents the same shape.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from pydantic_core import to_json, to_jsonable_python
from sqlalchemy import Connection

from statewright.api import schemas as s
from statewright.api.reads import _run_brief, _run_duration, _task_groups, dag_row
from statewright.api.version_reads import grid_versions, version_changes
from statewright.core.mapping import summary_state
from statewright.core.task_groups import summarize_group
from statewright.db.repositories import browse

Cell = dict[str, Any]
Row = dict[str, Any]


def grid(conn: Connection, dag_id: str, *, limit: int, offset: int) -> dict[str, Any]:
    """The page of the grid (``schemas.Grid``'s shape): a fixed number of statements,
    whatever its size."""
    row = dag_row(conn, dag_id)
    runs, total = browse.runs_page(conn, dag_id, limit=limit + 1, offset=offset)
    before = runs[limit] if len(runs) > limit else None  # the run before the page's oldest
    runs = list(reversed(runs[:limit]))  # columns: oldest to newest
    column = {r.id: i for i, r in enumerate(runs)}
    serialized = row.serialized or {}
    is_flow = serialized.get("kind") == "flow"  # its task runs unfold as it runs
    rows: dict[str, Row] = {t["task_id"]: _row(t, len(runs)) for t in serialized.get("tasks", [])}
    mapped: dict[tuple[str, int], list[Any]] = {}
    cells_versions: dict[str, int] = {}  # task → the newest version any of its cells ran
    for c in browse.grid_cells(conn, list(column)):
        if c.dag_version_id is not None:
            cells_versions[c.task_id] = max(cells_versions.get(c.task_id, 0), c.dag_version_id)
        grid_row = rows.get(c.task_id)
        if grid_row is None:
            grid_row = rows[c.task_id] = _row({"task_id": c.task_id}, len(runs), in_dag=is_flow)
        if grid_row["is_mapped"] or c.map_index >= 0:
            grid_row["is_mapped"] = True
            mapped.setdefault((c.task_id, column[c.dag_run_id]), []).append(c)
            continue
        grid_row["instances"][column[c.dag_run_id]] = _cell(c)
    for (task_id, i), cells in mapped.items():
        rows[task_id]["instances"][i] = _mapped_cell(cells)
    numbers = grid_versions(conn, runs, rows, cells_versions)
    changed = version_changes(runs, before)
    return {
        "dag_id": dag_id, "total_entries": total, "offset": offset, "limit": limit,
        "dag_runs": [s.GridRun(**_run_brief(r).model_dump(), run_type=r.run_type,
                               duration=_run_duration(r),
                               dag_version_number=numbers.get(r.dag_version_id),
                               version_changed=changed[i]).model_dump()
                     for i, r in enumerate(runs)],
        "rows": list(rows.values()),
        "task_groups": _groups(_task_groups(serialized), list(rows.values()), len(runs)),
    }


def grid_json(grid_body: dict[str, Any]) -> bytes:
    """The grid as the API sends it."""
    return to_json(grid_body)


def grid_jsonable(grid_body: dict[str, Any]) -> Any:
    """The grid with its dates as text (for a page that embeds it)."""
    return to_jsonable_python(grid_body)


def _row(t: dict[str, Any], n_runs: int, *, in_dag: bool = True) -> Row:
    return {"task_id": t["task_id"], "is_mapped": "expand_input" in t,
            "operator": t.get("operator"),
            "operator_name": t.get("operator_name") or t.get("operator"),
            "role": ("setup" if t.get("is_setup") else
                     "teardown" if t.get("is_teardown") else None),
            "in_dag": in_dag, "version_number": None, "task_group": t.get("task_group"),
            "instances": [None] * n_runs}


def _cell(c: Any) -> Cell:
    return {"state": c.state, "state_name": c.state_name, "state_message": c.state_message,
            "try_number": c.try_number, "max_tries": c.max_tries, "start_date": c.start_date,
            "end_date": c.end_date, "duration": c.duration, "map_count": None,
            "state_counts": None}


def _mapped_cell(cells: list[Any]) -> Cell:
    """A mapped task's instances in one run, summarized (an unexpanded one shows as itself)."""
    if len(cells) == 1 and cells[0].map_index < 0:
        return _cell(cells[0])
    counts = Counter(c.state for c in cells)
    state = summary_state([c.state for c in cells])
    first = next(c for c in cells if c.state == state)
    starts = [c.start_date for c in cells if c.start_date is not None]
    ends = [c.end_date for c in cells if c.end_date is not None]
    ended = bool(starts) and len(ends) == len(cells)
    return {
        "state": state, "state_name": first.state_name,
        "state_message": f"{len(cells)} mapped task instances: " + ", ".join(
            f"{n} {st}" for st, n in counts.most_common()),
        "try_number": max(c.try_number for c in cells),
        "max_tries": max(c.max_tries for c in cells),
        "start_date": min(starts) if starts else None,
        "end_date": max(ends) if ends and len(ends) == len(cells) else None,
        "duration": (max(ends) - min(starts)).total_seconds() if ended else None,
        "map_count": len(cells), "state_counts": dict(counts)}


def _groups(groups: list[s.TaskGroupInfo], rows: list[Row], n_runs: int) -> list[dict[str, Any]]:
    """Each group with its state per run, over the tasks in it and in its nested groups."""
    parent = {g.group_id: g.parent for g in groups}
    members: dict[str, list[Row]] = {g.group_id: [] for g in groups}
    for grid_row in rows:
        group = grid_row["task_group"]
        while group is not None and group in members:
            members[group].append(grid_row)
            group = parent[group]
    out = []
    for g in groups:
        cells: list[dict[str, Any] | None] = []
        for i in range(n_runs):
            summary = summarize_group(c["state"] for r in members[g.group_id]
                                      if (c := r["instances"][i]) is not None)
            cells.append(None if summary is None else
                         {"state": summary.state.value, "counts": summary.counts})
        out.append({**g.model_dump(), "instances": cells})
    return out
