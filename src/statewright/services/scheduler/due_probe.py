"""The first statement of a pass's probe, built once and bound to each pass's clock.

Building the steps' ``due(now)`` queries and the statement over them took most of an idle
pass's CPU (about 1.5 of 2 ms), though only the times in them change from pass to pass. A step
whose ``due_moves_with_now`` is true promises that its ``due(now)`` is one query whose only
values that depend on ``now`` are times that move with it (``now``, ``now - threshold``, …).
Its query is built once, at two clocks a day apart: the values that stayed the same are kept,
the times that moved by that day become named parameters bound at each pass to ``now`` plus
their offset, and anything else (the query's shape or another value changed) keeps the step
asked at every pass, as a step without the promise is. While every step that is asked gives a
bool, the whole statement is built once for that set of steps.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Select, bindparam, func, select
from sqlalchemy.sql import visitors
from sqlalchemy.sql.elements import BindParameter
from sqlalchemy.sql.visitors import ExternallyTraversible

from statewright.db.repositories import runs as run_repo

_T0 = datetime(2000, 1, 1, tzinfo=UTC)
_DAY = timedelta(days=1)
_NO_OPTS: dict[str, Any] = {}

Moving = list[tuple[str, timedelta]]
"""The parameters of a built query that move with the clock: name, offset from ``now``."""


class DueProbe:
    """The statement of ``first_read`` for one scheduler's steps (kept across its passes)."""

    def __init__(self) -> None:
        self._clauses: dict[int, tuple[Any, tuple[Any, Moving] | None]] = {}  # None: ask
        self._statements: dict[tuple[Any, ...], tuple[Any, Moving]] = {}

    def statement(self, steps: Sequence[Any], now: datetime, postgres: bool
                  ) -> tuple[Any, dict[str, datetime], list[int], set[int]]:
        """(statement, its parameters for ``now``, the step indexes of its ``s{i}`` columns,
        the step indexes already known due)."""
        due: set[int] = set()
        built: dict[int, tuple[Any, Moving]] = {}
        asked: dict[int, Any] = {}
        for i, step in enumerate(steps):
            clause = self._built(step) if getattr(step, "due_moves_with_now", False) else None
            if clause is not None:
                built[i] = clause
                continue
            check = getattr(step, "due", None)
            answer = True if check is None else check(now)
            if isinstance(answer, Select):
                asked[i] = answer.exists()
            elif isinstance(answer, bool):
                due.update((i,) if answer else ())
            else:
                asked[i] = answer
        key = (postgres, *((i, id(steps[i])) for i in built))
        if asked:  # a query asked this pass: the statement is this pass's own
            stmt, moving = _select(built, asked, postgres)
        else:
            if key not in self._statements:
                self._statements[key] = _select(built, {}, postgres)
            stmt, moving = self._statements[key]
        params = {name: now + offset for name, offset in moving}
        return stmt, params, [*built, *asked], due

    def _built(self, step: Any) -> tuple[Any, Moving] | None:
        # the step is kept with its query: no other step can take its id while it is cached
        known = self._clauses.get(id(step))
        if known is None or known[0] is not step:
            known = self._clauses[id(step)] = (step, _bind_clock(step, f"due{len(self._clauses)}"))
        return known[1]


def _select(built: dict[int, tuple[Any, Moving]], asked: dict[int, Any], postgres: bool
            ) -> tuple[Any, Moving]:
    columns = [run_repo.queued_runs_query().exists().label("queued"),
               *(c.label(f"s{i}") for i, (c, _) in built.items()),
               *(c.label(f"s{i}") for i, c in asked.items())]
    if postgres:
        columns += [func.set_config("enable_seqscan", "off", True).label("seqscan"),
                    func.set_config("enable_bitmapscan", "off", True).label("bitmapscan")]
    return select(*columns), [m for _, moving in built.values() for m in moving]


def _bind_clock(step: Any, prefix: str) -> tuple[Any, Moving] | None:
    """The step's query with its clock's times as named parameters, or None (ask it each
    pass) when its two builds differ otherwise."""
    a, b = step.due(_T0), step.due(_T0 + _DAY)
    if not (_is_query(a) and _is_query(b)):
        return None
    a, b = (q.exists() if isinstance(q, Select) else q for q in (a, b))
    clause: ExternallyTraversible = a
    ka, kb = a._generate_cache_key(), b._generate_cache_key()
    if ka is None or kb is None or ka.key != kb.key:
        return None
    binds_a, binds_b = _binds(a), _binds(b)
    if len(binds_a) != len(binds_b):
        return None
    moving: dict[int, tuple[str, timedelta]] = {}  # by id(bind)
    for x, y in zip(binds_a, binds_b, strict=True):
        if isinstance(x.value, datetime) and y.value == x.value + _DAY:
            moving[id(x)] = (f"{prefix}_{len(moving)}", x.value - _T0)
        elif x.value != y.value or x.callable is not None:
            return None
    if not moving:
        return a, []

    def replace(element: ExternallyTraversible) -> ExternallyTraversible | None:
        if isinstance(element, BindParameter) and id(element) in moving:
            return bindparam(moving[id(element)][0], type_=element.type)
        return None

    new = visitors.replacement_traverse(clause, _NO_OPTS, replace)  # type: ignore[call-overload]
    return new, list(moving.values())


def _is_query(answer: Any) -> bool:
    return answer is not None and not isinstance(answer, bool)


def _binds(clause: Any) -> list[BindParameter[Any]]:
    return [e for e in visitors.iterate(clause) if isinstance(e, BindParameter)]
