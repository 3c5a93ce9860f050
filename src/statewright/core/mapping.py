"""Dynamic task mapping: how many task instances a mapped task expands to (Airflow 3 semantics).

Pure. A mapped task carries an *expand input* (serialized by the SDK as plain data): for
``.expand(**mapped)`` one source per argument, expanded as their cross product (the last argument
varies fastest, as ``itertools.product``); for ``.expand_kwargs(...)`` one source whose every
item is the keyword arguments of one instance. A source is a literal list or dict (its length is
known when the DAG is parsed), an upstream task's output (known when that task has run; a mapped
upstream's output is the list of its instances' values in map-index order), or a combination
(``XComArg.map`` keeps the length, ``zip`` takes the shortest, or the longest with a
``fillvalue``, ``concat`` adds the lengths).

The scheduler expands a mapped task once its dependencies are met:

- a total length of 0 → the mapped task is ``skipped`` (Airflow's rule);
- a length above ``max_map_length`` → ``failed`` with a message saying so;
- a value that is not a list or a dict → ``failed`` naming the upstream and the type;
- otherwise ``n`` task instances, map indexes ``0 .. n-1``.

A task instance's identity is ``(dag run, task id, map index)``; an unmapped task's map index is
``-1``. An expand input can be shared by several tasks (a mapped task group takes one expand
input for every task inside it): nothing here depends on which task carries it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

__all__ = [
    "DEFAULT_MAX_MAP_LENGTH",
    "UNMAPPED",
    "Expansion",
    "ExpansionOutcome",
    "MappingError",
    "decide_expansion",
    "expand_input_upstreams",
    "source_length",
    "ti_label",
    "value_length",
]

UNMAPPED = -1
DEFAULT_MAX_MAP_LENGTH = 1024


class MappingError(Exception):
    """A value that cannot be mapped over; the message names where it came from and its type."""


class ExpansionOutcome(StrEnum):
    EXPAND = "expand"
    SKIP = "skip"
    FAIL = "fail"


@dataclass(frozen=True)
class Expansion:
    """What to do with a mapped task whose dependencies are met."""

    outcome: ExpansionOutcome
    length: int = 0
    message: str | None = None


def ti_label(task_id: str, map_index: int) -> str:
    """``task`` for an unmapped task instance, ``task[3]`` for map index 3."""
    return task_id if map_index < 0 else f"{task_id}[{map_index}]"


def value_length(value: Any, where: str) -> int:
    """The number of items of a list or dict to map over; anything else is a ``MappingError``."""
    if isinstance(value, (list, tuple, dict)):
        return len(value)
    raise MappingError(
        f"{where} is a {type(value).__name__}, not a list or a dict, so it cannot be mapped "
        "over; return a list (one task instance per item) or a dict (one per key)"
    )


def _upstream_where(spec: Mapping[str, Any]) -> str:
    key = spec.get("key")
    item = f"[{key!r}]" if key is not None else ""
    return f"the output of upstream task {spec['task_id']!r}{item}"


def source_length(spec: Mapping[str, Any], values: Mapping[str, Any]) -> int:
    """Length of one serialized source. ``values`` maps upstream task ids to their output
    (a mapped upstream: the list of its instances' values); a missing upstream is empty."""
    kind = spec["kind"]
    if kind == "literal":
        return int(spec["length"])
    if kind == "xcom":
        if spec["task_id"] not in values:
            return 0
        value = values[spec["task_id"]]
        key = spec.get("key")
        if key is not None:
            if not isinstance(value, Mapping):
                raise MappingError(
                    f"the output of upstream task {spec['task_id']!r} is a "
                    f"{type(value).__name__}, so its item {key!r} cannot be mapped over")
            if key not in value:
                return 0
            value = value[key]
        return value_length(value, _upstream_where(spec))
    if kind == "map":
        return source_length(spec["arg"], values)
    lengths = [source_length(s, values) for s in spec["args"]]
    if kind == "zip":
        if not lengths:
            return 0
        return max(lengths) if spec.get("fill") else min(lengths)
    if kind == "concat":
        return sum(lengths)
    raise ValueError(f"unknown mapping source kind {kind!r}")


def expand_input_upstreams(expand_input: Mapping[str, Any]) -> list[str]:
    """The upstream task ids whose outputs an expand input reads, in first-seen order."""
    out: list[str] = []

    def walk(spec: Mapping[str, Any]) -> None:
        if spec["kind"] == "xcom":
            if spec["task_id"] not in out:
                out.append(spec["task_id"])
        elif spec["kind"] == "map":
            walk(spec["arg"])
        elif spec["kind"] in ("zip", "concat"):
            for s in spec["args"]:
                walk(s)

    for spec in _sources(expand_input):
        walk(spec)
    return out


def _sources(expand_input: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if expand_input["type"] == "dict":
        return list(expand_input["value"].values())
    return [expand_input["value"]]


def total_length(expand_input: Mapping[str, Any], values: Mapping[str, Any]) -> int:
    """The number of task instances: the product of the arguments' lengths (``expand``) or
    the length of the list of keyword sets (``expand_kwargs``)."""
    return math.prod(source_length(s, values) for s in _sources(expand_input))


def decide_expansion(
    task_id: str,
    expand_input: Mapping[str, Any],
    values: Mapping[str, Any],
    *,
    max_map_length: int = DEFAULT_MAX_MAP_LENGTH,
) -> Expansion:
    """Expand, skip (nothing to map over) or fail (too long; not a list or dict)."""
    try:
        n = total_length(expand_input, values)
    except MappingError as exc:
        return Expansion(ExpansionOutcome.FAIL, message=f"task {task_id!r}: {exc}")
    if n == 0:
        return Expansion(ExpansionOutcome.SKIP, message="mapped over an empty list or dict: "
                         "no task instance to run")
    if n > max_map_length:
        return Expansion(ExpansionOutcome.FAIL, length=n, message=(
            f"task {task_id!r} would expand to {n} task instances, more than max_map_length "
            f"({max_map_length}); map over fewer items or raise max_map_length "
            "(STATEWRIGHT_MAX_MAP_LENGTH)"))
    return Expansion(ExpansionOutcome.EXPAND, length=n)


# The state a mapped task's instances show together (Airflow's mapped summary): the first of
# this order that any instance is in.
_SUMMARY_ORDER = ("failed", "upstream_failed", "up_for_retry", "up_for_reschedule", "queued",
                  "scheduled", "deferred", "awaiting_input", "running", "restarting", "shutdown",
                  "none",
                  "success", "skipped", "removed")


def summary_state(states: Sequence[str]) -> str:
    """The one state a mapped task's instances are shown with (a failure first, then what is
    still to happen, then success)."""
    present = set(states)
    for state in _SUMMARY_ORDER:
        if state in present:
            return state
    return states[0] if states else "none"


def index_in_product(index: int, lengths: Sequence[int]) -> list[int]:
    """The position in each argument of the ``index``-th combination of their cross product
    (the last argument varies fastest)."""
    out = [0] * len(lengths)
    for i in range(len(lengths) - 1, -1, -1):
        length = lengths[i]
        if length < 1:
            raise IndexError(f"map index {index} of an empty cross product")
        out[i] = index % length
        index //= length
    return out
