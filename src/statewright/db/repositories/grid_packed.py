"""The grid's compact cells written by SQLite itself: one row per task, its cells as JSON text.

Reading 25,000 task instances as Python rows costs more than all else the grid does (most of it
in making their values Python objects); SQLite writes each task's cells as one JSON text
(``json_array`` per cell, ``group_concat`` per task) and the caller puts the text in the answer
as it is. Only SQLite: the caller reads other databases cell by cell.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, text

_SQL = """
WITH states AS (
  SELECT state, state_name, row_number() OVER (ORDER BY state, state_name) - 1 AS i
  FROM (SELECT DISTINCT state, state_name FROM task_instance WHERE dag_run_id IN ({ids}))
), cells AS (
  SELECT task_id, map_index, dag_version_id, state, state_name, try_number AS t,
         max_tries AS mt, duration AS d, substr(state_message, 1, :chars) AS m,
         CAST(round((julianday(start_date) - 2440587.5) * 86400000) AS INTEGER) AS s,
         CAST(round((julianday(end_date) - 2440587.5) * 86400000) AS INTEGER) AS e,
         CASE dag_run_id {columns} END AS col
  FROM task_instance WHERE dag_run_id IN ({ids})
), packed AS (
  SELECT c.task_id, c.map_index, c.dag_version_id, c.col, st.i,
    CASE WHEN c.m IS NOT NULL THEN json_array(st.i, c.t, c.mt, c.s, c.e, c.d, c.m)
         WHEN c.d IS NOT NULL THEN json_array(st.i, c.t, c.mt, c.s, c.e, c.d)
         WHEN c.e IS NOT NULL THEN json_array(st.i, c.t, c.mt, c.s, c.e)
         WHEN c.s IS NOT NULL THEN json_array(st.i, c.t, c.mt, c.s)
         ELSE json_array(st.i, c.t, c.mt) END AS cell
  FROM cells AS c JOIN states AS st ON st.state = c.state AND st.state_name = c.state_name
  ORDER BY c.task_id, c.col
)
SELECT task_id, max(map_index), max(dag_version_id), group_concat(col), group_concat(i),
       group_concat(cell),
       (SELECT json_group_array(json_array(state, state_name))
        FROM (SELECT state, state_name FROM states ORDER BY i))
FROM packed GROUP BY task_id
"""


@dataclass(frozen=True, slots=True)
class PackedRow:
    """A task's cells in the runs given: ``columns`` (each cell's run, as its index in the runs
    given), ``state_indexes`` (each cell's index into the states) and ``cells`` (the cells as
    JSON arrays, comma-separated, in the same order), with its highest map index and the newest
    DAG version any of them ran."""

    task_id: str
    max_map_index: int
    dag_version_id: int | None
    columns: str
    state_indexes: str
    cells: str


def packed_grid_rows(conn: Connection, dag_run_ids: Sequence[int], message_chars: int = 200
                     ) -> tuple[list[tuple[str, str]], Iterator[PackedRow]]:
    """The ``[state, state_name]`` pairs the cells index, and one ``PackedRow`` per task with a
    task instance in the runs (SQLite only; one statement). A cell is as
    ``grid_cells_compact``'s: ``[state index, try_number, max_tries, start ms, end ms,
    duration, state_message]`` without its trailing nulls, the message cut to
    ``message_chars``."""
    if not dag_run_ids:
        return [], iter(())
    ids = ", ".join(str(int(i)) for i in dag_run_ids)
    columns = " ".join(f"WHEN {int(r)} THEN {i}" for i, r in enumerate(dag_run_ids))
    rows = conn.execute(text(_SQL.format(ids=ids, columns=columns)),
                        {"chars": message_chars}).all()
    if not rows:
        return [], iter(())
    states = [(str(s), str(n)) for s, n in json.loads(rows[0][6])]
    return states, (PackedRow(r[0], int(r[1]), r[2], str(r[3]), str(r[4]), str(r[5]))
                    for r in rows)
