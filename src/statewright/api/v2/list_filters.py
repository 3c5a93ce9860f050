"""Airflow's list filters as ``/api/v2`` takes them: date and number ranges (``start_date_gte``,
``duration_lt``…), id patterns (``dag_id_pattern``, ``run_id_prefix_pattern``…), states as
Airflow names them and ``order_by``; turned into ``browse_filtered.Filters``."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Query

from statewright.api.errors import ApiError
from statewright.core.states import DagRunState, TaskInstanceState
from statewright.db.repositories.browse_filtered import unknown_orders

Range = tuple[str, str, Any]
Pattern = tuple[str, str, str]
RANGE_OPS = ("gte", "gt", "lte", "lt")

_RUN_NEAREST = {"running": ["paused"], "failed": ["cancelled"]}
_TI_NEAREST = {"failed": ["cancelled"], "scheduled": ["paused"], "restarting": ["shutdown"]}
_NO_STATE = ("none", "no_status", "null")


def _aware(value: Any) -> Any:
    if isinstance(value, datetime) and value.tzinfo is None:
        return value.replace(tzinfo=UTC)  # a date without a zone is UTC, as in Airflow
    return value


def _signed(fn: Callable[..., Any], names: Sequence[str], kind: Any) -> Callable[..., Any]:
    fn.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=None,
                          annotation=Annotated[kind | None, Query()]) for n in names])
    return fn


def ranges(*fields: str, kind: Any = datetime, ops: Sequence[str] = RANGE_OPS
           ) -> Callable[..., list[Range]]:
    """A dependency taking ``{field}_{op}`` query parameters; answers ``(field, op, bound)``."""
    names = [f"{f}_{op}" for f in fields for op in ops]

    def given(**bounds: Any) -> list[Range]:
        out = []
        for name, bound in bounds.items():
            if bound is not None:
                field, op = name.rsplit("_", 1)
                out.append((field, op, _aware(bound)))
        return out

    return _signed(given, names, kind)


def patterns(**fields: str) -> Callable[..., list[Pattern]]:
    """A dependency taking ``{name}_pattern`` (part of the value) and ``{name}_prefix_pattern``
    (its start) for each ``name → field``; ``%`` around a pattern is dropped."""
    names = [f"{n}_{kind}" for n in fields for kind in ("pattern", "prefix_pattern")]

    def given(**texts: Any) -> list[Pattern]:
        out = []
        for name, text in texts.items():
            cleaned = (text or "").strip("%")
            if cleaned:
                prefix = name.endswith("_prefix_pattern")
                base = name.removesuffix("_prefix_pattern" if prefix else "_pattern")
                out.append((fields[base], "prefix" if prefix else "contains", cleaned))
        return out

    return _signed(given, names, str)


def order(order_by: Sequence[str] | None, columns: Mapping[str, Any], default: Sequence[str]
          ) -> list[str]:
    """``order_by`` checked against the fields it may name (400 naming the wrong one)."""
    wanted = [o for o in (order_by or default) if o]
    bad = unknown_orders(wanted, columns)
    if bad:
        raise ApiError(f"Ordering with '{bad[0].lstrip('-')}' is disallowed or the attribute "
                       f"does not exist on the model; use one of {', '.join(sorted(columns))} "
                       "(prefix '-' for descending)")
    return wanted


def run_states(states: Sequence[str | None] | None) -> list[str]:
    """Airflow's run states with the statewright states answered as each (``running`` also
    finds ``paused`` runs); statewright's exact states are taken too."""
    known = {s.value for s in DagRunState}
    bad = [s for s in states or [] if s is not None and s not in known]
    if bad:
        raise ApiError(f"Invalid value for state: {', '.join(map(str, bad))}; use one of "
                       f"{', '.join(sorted(known))}")
    return [x for s in states or [] if s for x in [s, *_RUN_NEAREST.get(s, [])]]


def ti_states(states: Sequence[str | None] | None) -> list[str]:
    """Airflow's task instance states (``none``/``no_status``/null: not yet scheduled) with the
    statewright states answered as each; statewright's exact states are taken too."""
    known = {s.value for s in TaskInstanceState}
    out: list[str] = []
    for s in states or []:
        if s is None or s in _NO_STATE:
            out.append(TaskInstanceState.NONE.value)
        elif s in known:
            out += [s, *_TI_NEAREST.get(s, [])]
        else:
            raise ApiError(f"Invalid value for state: {s}; use one of "
                           f"{', '.join(sorted(known))} or no_status")
    return out


def one_or_all(value: str) -> list[str] | None:
    """``~`` (every DAG, run or task) as no filter; any other value as a list of one."""
    return None if value == "~" else [value]


def matching(**given: Sequence[Any] | None) -> dict[str, Sequence[Any]]:
    """The value filters given (``None`` or empty: not filtered)."""
    return {k: v for k, v in given.items() if v}
