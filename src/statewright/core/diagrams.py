"""Render the state machines (``core.transitions``) as the Markdown page docs/state-machines.md.

The page is generated: ``python -m statewright.core.diagrams > docs/state-machines.md``. A test
fails when the committed page and the tables disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any

from statewright.core.states import (
    RUN,
    RUN_NAMES_BY_TYPE,
    RUN_TERMINAL,
    TI,
    TI_NAMES_BY_TYPE,
    TI_TERMINAL,
)
from statewright.core.transitions import DAG_RUN_EDGES, TASK_INSTANCE_EDGES, Edge


def _node(state: StrEnum) -> str:
    return state.value.upper()


def _mermaid(edges: Mapping[Any, Edge[Any]], initial: StrEnum,
             terminal: frozenset[Any], *, seed_only: bool) -> str:
    lines = ["```mermaid", "stateDiagram-v2", f"    [*] --> {_node(initial)}"]
    for (frm, to), edge in sorted(edges.items(), key=lambda kv: (kv[0][0].value, kv[0][1].value)):
        if seed_only and not edge.seed:
            continue
        lines.append(f"    {_node(frm)} --> {_node(to)}: {edge.reason}")
    for state in sorted(terminal, key=lambda s: s.value):
        lines.append(f"    {_node(state)} --> [*]")
    lines.append("```")
    return "\n".join(lines)


def _table(edges: Mapping[Any, Edge[Any]]) -> str:
    rows = ["| from | to | who may take it | seed | reason |", "| --- | --- | --- | --- | --- |"]
    for (frm, to), edge in sorted(edges.items(), key=lambda kv: (kv[0][0].value, kv[0][1].value)):
        actors = ", ".join(sorted(a.value for a in edge.actors))
        rows.append(f"| `{frm.value}` | `{to.value}` | {actors} | {'yes' if edge.seed else ''} "
                    f"| {edge.reason} |")
    return "\n".join(rows)


def _names(names: Mapping[Any, frozenset[Any]]) -> str:
    rows = ["| type | names it may carry |", "| --- | --- |"]
    for state, allowed in names.items():
        rows.append(f"| `{state.value}` | {', '.join(sorted(n.value for n in allowed))} |")
    return "\n".join(rows)


def render() -> str:
    """The whole page."""
    parts = [
        "# State machines",
        "",
        "<!-- Generated from statewright/core/transitions.py and states.py by "
        "`python -m statewright.core.diagrams`; do not edit by hand. -->",
        "",
        "Every state change goes through one door (`statewright.db.transition`), which checks the "
        "edge against these tables, applies it as a compare-and-set and records it in the state "
        "history with the actor who asked for it. An edge that is not listed here is refused with "
        "`InvalidTransition`.",
        "",
        "## Task instance",
        "",
        f"Terminal states: {', '.join(f'`{s.value}`' for s in sorted(TI_TERMINAL))}. A terminal "
        "state is left only by a person (clear, mark), except `removed → none` when a task comes "
        "back to its DAG.",
        "",
        "### The seed edges",
        "",
        _mermaid(TASK_INSTANCE_EDGES, TI.NONE, TI_TERMINAL, seed_only=True),
        "",
        "### Every allowed edge",
        "",
        _table(TASK_INSTANCE_EDGES),
        "",
        "### State names",
        "",
        "The type drives the logic; the name is what a person reads.",
        "",
        _names(TI_NAMES_BY_TYPE),
        "",
        "## DAG run",
        "",
        f"Terminal states: {', '.join(f'`{s.value}`' for s in sorted(RUN_TERMINAL))}.",
        "",
        _mermaid(DAG_RUN_EDGES, RUN.QUEUED, RUN_TERMINAL, seed_only=False),
        "",
        _table(DAG_RUN_EDGES),
        "",
        "### State names",
        "",
        _names(RUN_NAMES_BY_TYPE),
        "",
    ]
    return "\n".join(parts)


if __name__ == "__main__":
    print(render(), end="")
