"""The grid: a DAG's runs (columns) by its tasks (rows), every cell a task instance.

A grid of 1,000 tasks by 25 runs has 25,000 cells: they are built as plain data and serialized
once (``grid_json``), never as 25,000 models; ``schemas.Grid`` documents the same shape.

``compact=True`` (``?format=compact``, what the web UI reads; ``schemas.CompactGrid``) encodes
each cell as an array in ``COMPACT_CELL_FIELDS`` order, its trailing nulls left out: the state as
an index into the body's ``states`` (``[state, state_name]`` pairs), the dates as epoch
milliseconds (UTC), computed by the database. No dict and no datetime is built per cell, and
the cells are tuples of plain values (which Python's garbage collector stops tracking): the grid
of 25,000 cells is a fifth of the default one's bytes, built in about a third of its time.

On SQLite the compact rows of the tasks with one plain cell in every run are written by the
database as JSON text (``grid_packed``, in the same one statement) and put in the answer as they
are (``JsonCells``, serialized by ``dumps``): no Python value is made per cell. The other rows
(mapped tasks, tasks missing from a run or no longer in the DAG) are read cell by cell in a
second statement, only when there are any.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic_core import to_json
from sqlalchemy import Connection

from statewright.api import schemas as s
from statewright.api.reads import _run_brief, _run_duration, _task_groups, dag_row
from statewright.api.version_reads import grid_versions, version_changes
from statewright.core.mapping import summary_state
from statewright.core.task_groups import summarize_group
from statewright.db.repositories import browse, grid_packed

Cell = dict[str, Any]
Row = dict[str, Any]
Packed = tuple[Any, ...]

COMPACT_CELL_FIELDS = ("state", "try_number", "max_tries", "start_date", "end_date", "duration",
                       "state_message", "map_count", "state_counts")
"""The positions of a compact cell's values (``state``: an index into the body's ``states``)."""
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)


def grid(conn: Connection, dag_id: str, *, limit: int, offset: int,
         compact: bool = False) -> dict[str, Any]:
    """The page of the grid (``schemas.Grid``'s shape, ``schemas.CompactGrid``'s when
    ``compact``): a fixed number of statements, whatever its size."""
    row = dag_row(conn, dag_id)
    runs, total = browse.runs_page(conn, dag_id, limit=limit + 1, offset=offset)
    before = runs[limit] if len(runs) > limit else None  # the run before the page's oldest
    runs = list(reversed(runs[:limit]))  # columns: oldest to newest
    column = {r.id: i for i, r in enumerate(runs)}
    serialized = row.serialized or {}
    rows: dict[str, Row] = {t["task_id"]: _row(t, len(runs)) for t in serialized.get("tasks", [])}
    is_flow = serialized.get("kind") == "flow"
    if compact and conn.dialect.name == "sqlite":
        encoder: _DictCells = _PackedCells()
        cells_versions, rest = _fill_json(rows, conn, list(column), encoder)
        if rest:  # mapped tasks, tasks missing from a run or no longer in the DAG
            cells_versions.update(_fill(rows, browse.grid_cells_compact(
                conn, list(column), task_ids=rest), column, encoder, is_flow=is_flow))
    else:
        encoder = _PackedCells() if compact else _DictCells()
        read = browse.grid_cells_compact if compact else browse.grid_cells
        cells_versions = _fill(rows, read(conn, list(column)), column, encoder, is_flow=is_flow)
    numbers = grid_versions(conn, runs, rows, cells_versions)
    changed = version_changes(runs, before)
    return encoder.finish({
        "dag_id": dag_id, "total_entries": total, "offset": offset, "limit": limit,
        "dag_runs": [s.GridRun(**_run_brief(r).model_dump(), run_type=r.run_type,
                               duration=_run_duration(r),
                               dag_version_number=numbers.get(r.dag_version_id),
                               version_changed=changed[i]).model_dump()
                     for i, r in enumerate(runs)],
        "rows": list(rows.values()),
        "task_groups": _groups(_task_groups(serialized), list(rows.values()), len(runs),
                               encoder.state_of),
    })


def _fill(rows: dict[str, Row], cells: Iterable[Any], column: dict[int, int],
          encoder: _DictCells, *, is_flow: bool) -> dict[str, int]:
    """Put each cell in its row (a task no longer in the DAG gets a row; a flow's task runs are
    in it); returns task → the newest version any of its cells ran."""
    n_runs = len(column)
    mapped: dict[tuple[str, int], list[Any]] = {}
    cells_versions: dict[str, int] = {}
    encode = encoder.cell
    for c in cells:
        run_id, task_id, map_index, *_, version = c  # grid_cells' columns (unpacked: faster)
        if version is not None and cells_versions.get(task_id, 0) < version:
            cells_versions[task_id] = version
        grid_row = rows.get(task_id)
        if grid_row is None:
            grid_row = rows[task_id] = _row({"task_id": task_id}, n_runs, in_dag=is_flow)
        if map_index >= 0 or grid_row["is_mapped"]:
            grid_row["is_mapped"] = True
            mapped.setdefault((task_id, column[run_id]), []).append(c)
            continue
        grid_row["instances"][column[run_id]] = encode(c)
    for (task_id, i), group in mapped.items():
        rows[task_id]["instances"][i] = encoder.mapped(group)
    return cells_versions


def _fill_json(rows: dict[str, Row], conn: Connection, run_ids: list[int],
               encoder: _PackedCells) -> tuple[dict[str, int], list[str]]:
    """The rows of the tasks with one plain cell in every run, as SQLite wrote them
    (``grid_packed``); returns task → the newest version its cells ran, and the tasks left for
    ``_fill`` (mapped ones, those missing from a run and those no longer in the DAG)."""
    states, packed = grid_packed.packed_grid_rows(conn, run_ids)
    for state, name in states:
        encoder.state(state, name)
    every = ",".join(map(str, range(len(run_ids))))
    versions: dict[str, int] = {}
    rest: list[str] = []
    for p in packed:
        if p.dag_version_id is not None:
            versions[p.task_id] = p.dag_version_id
        grid_row = rows.get(p.task_id)
        if grid_row is None or grid_row["is_mapped"] or p.max_map_index >= 0 or p.columns != every:
            rest.append(p.task_id)
            continue
        grid_row["instances"] = JsonCells(p.cells, p.state_indexes)
    return versions, rest


class JsonCells:
    """A row's compact cells as the database wrote them (JSON text), put in the answer as they
    are by ``dumps``. Read as a list, each cell is its state index alone: what the grid's
    groups and the DAG page read of them."""

    __slots__ = ("_cells", "_indexes", "json")

    def __init__(self, cells: str, state_indexes: str) -> None:
        self.json = "[" + cells + "]"
        self._indexes = state_indexes
        self._cells: list[tuple[int]] | None = None

    def _list(self) -> list[tuple[int]]:
        if self._cells is None:
            self._cells = [(int(i),) for i in self._indexes.split(",")]
        return self._cells

    def __len__(self) -> int:
        return len(self._list())

    def __getitem__(self, i: int) -> tuple[int]:
        return self._list()[i]

    def __iter__(self) -> Iterator[tuple[int]]:
        return iter(self._list())


_RAW = re.compile(rb'"\\u0000json(\d+)\\u0000"')


def dumps(value: Any) -> bytes:
    """``value`` as JSON (pydantic's serializer; an unknown type as its ``str``), with each
    ``JsonCells`` written as its JSON text."""
    raw: list[bytes] = []

    def fallback(v: Any) -> Any:
        if isinstance(v, JsonCells):
            raw.append(v.json.encode())
            return f"\x00json{len(raw) - 1}\x00"
        return str(v)

    out = to_json(value, fallback=fallback)
    return _RAW.sub(lambda m: raw[int(m.group(1))], out) if raw else out


def grid_json(grid_body: dict[str, Any]) -> bytes:
    """The grid as the API sends it."""
    return dumps(grid_body)


def grid_jsonable(grid_body: dict[str, Any]) -> Any:
    """The grid, compact (as the web UI reads it), for a page that embeds it (the UI's pages
    serialize it with pydantic's ``to_json``): a default body is encoded here; a compact one is
    kept."""
    return compact_grid(grid_body)


def compact_grid(grid_body: dict[str, Any]) -> dict[str, Any]:
    """A grid body (``grid``'s) in the compact encoding (``grid(..., compact=True)``'s)."""
    if "cell_fields" in grid_body:
        return grid_body
    encoder = _PackedCells()
    rows = [{**r, "instances": [None if c is None else encoder.pack(
        c, _epoch_ms(c["start_date"]), _epoch_ms(c["end_date"])) for c in r["instances"]]}
        for r in grid_body["rows"]]
    return encoder.finish({**grid_body, "rows": rows})


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


def _mapped_summary(cells: list[Any], seconds: Callable[[Any], float]) -> Cell:
    """A mapped task's instances in one run, summarized (``seconds``: a difference of two of
    their dates in seconds)."""
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
        "duration": seconds(max(ends) - min(starts)) if ended else None,
        "map_count": len(cells), "state_counts": dict(counts)}


def _epoch_ms(moment: datetime | None) -> int | None:
    """Milliseconds since 1970-01-01 UTC, rounded (as the database's in ``grid_cells_compact``)."""
    if moment is None:
        return None
    return ((moment - _EPOCH) // _MICROSECOND + 500) // 1000


class _DictCells:
    """Cells as dicts (the default encoding)."""

    def cell(self, c: Any) -> Any:
        return _cell(c)

    def mapped(self, cells: list[Any]) -> Any:
        """A mapped task's instances in one run (an unexpanded one shows as itself)."""
        if len(cells) == 1 and cells[0].map_index < 0:
            return self.cell(cells[0])
        return self.summary(cells)

    def summary(self, cells: list[Any]) -> Any:
        return _mapped_summary(cells, timedelta.total_seconds)

    def state_of(self, cell: Any) -> str:
        return str(cell["state"])

    def finish(self, body: dict[str, Any]) -> dict[str, Any]:
        return body


class _PackedCells(_DictCells):
    """Cells as arrays (``COMPACT_CELL_FIELDS``), read from ``browse.grid_cells_compact``."""

    def __init__(self) -> None:
        self.states: dict[tuple[str, str], int] = {}  # (state, state name) → its index
        self.names: list[str] = []  # index → state

    def state(self, state: str, name: str) -> int:
        index = self.states.get((state, name))
        if index is None:
            index = self.states[(state, name)] = len(self.names)
            self.names.append(state)
        return index

    def cell(self, c: Any) -> Packed:
        _, _, _, state, name, message, tries, max_tries, start, end, duration, _ = c
        index = self.state(state, name)
        if message is None and duration is not None:  # most cells: no trailing null to cut
            return (index, tries, max_tries, start, end, duration)
        return _trimmed([index, tries, max_tries, start, end, duration, message])

    def summary(self, cells: list[Any]) -> Packed:
        summary = _mapped_summary(cells, lambda ms: ms / 1000)  # its dates: epoch ms already
        return self.pack(summary, summary["start_date"], summary["end_date"])

    def pack(self, cell: Cell, start: int | None, end: int | None) -> Packed:
        """A cell dict, with its dates in epoch milliseconds."""
        return _trimmed([self.state(cell["state"], cell["state_name"]), cell["try_number"],
                         cell["max_tries"], start, end, cell["duration"], cell["state_message"],
                         cell["map_count"], cell["state_counts"]])

    def state_of(self, cell: Any) -> str:
        return self.names[int(cell[0])]

    def finish(self, body: dict[str, Any]) -> dict[str, Any]:
        return {**body, "cell_fields": list(COMPACT_CELL_FIELDS),
                "states": [list(pair) for pair in self.states]}


def _trimmed(values: list[Any]) -> Packed:
    """The values without their trailing nulls, as a tuple (of plain values, which the garbage
    collector stops tracking: the cells of a big grid do not make it scan the whole heap)."""
    while values[-1] is None:
        values.pop()
    return tuple(values)


def _groups(groups: list[s.TaskGroupInfo], rows: list[Row], n_runs: int,
            state_of: Callable[[Any], str]) -> list[dict[str, Any]]:
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
            summary = summarize_group(state_of(c) for r in members[g.group_id]
                                      if (c := r["instances"][i]) is not None)
            cells.append(None if summary is None else
                         {"state": summary.state.value, "counts": summary.counts})
        out.append({**g.model_dump(), "instances": cells})
    return out
