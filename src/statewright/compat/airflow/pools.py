"""Airflow's pool export file (``airflow pools export``), read and written.

The file is one JSON object: pool name → ``{"slots": N, "description": "...",
"include_deferred": bool}`` (``include_deferred`` may be absent, as in files from Airflow
before 2.7). Reading checks every entry first and reports each bad one, so a caller imports
all of a file or nothing of it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from statewright.core.errors import StatewrightError

MAX_NAME = 256


class PoolFileError(StatewrightError):
    """A pool export file that cannot be imported; ``problems`` has one line per cause."""

    def __init__(self, source: str, problems: list[str]) -> None:
        self.problems = problems
        lines = "\n".join(f"  - {p}" for p in problems)
        super().__init__(f"{source}: nothing was imported, because\n{lines}")


@dataclass(frozen=True)
class PoolSpec:
    name: str
    slots: int
    description: str | None
    include_deferred: bool


def parse_pool_export(text: str, source: str = "pool file") -> list[PoolSpec]:
    """The pools of an Airflow pool export, or PoolFileError listing every bad entry."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PoolFileError(source, [f"not valid JSON: {exc}"]) from None
    if not isinstance(data, dict):
        raise PoolFileError(source, [
            f"expected a JSON object of pool name → {{\"slots\": N, \"description\": ...}} "
            f"(what `airflow pools export` writes), got a {type(data).__name__}"])
    pools: list[PoolSpec] = []
    problems: list[str] = []
    for name, entry in data.items():
        spec, problem = _entry(name, entry)
        if problem:
            problems.append(f"pool {name!r}: {problem}")
        elif spec is not None:
            pools.append(spec)
    if problems:
        raise PoolFileError(source, problems)
    return pools


def _entry(name: str, entry: Any) -> tuple[PoolSpec | None, str | None]:
    if not name.strip() or len(name) > MAX_NAME:
        return None, f"a pool name must be 1 to {MAX_NAME} characters long"
    if not isinstance(entry, dict):
        return None, f"expected an object with slots and description, got {entry!r}"
    unknown = sorted(set(entry) - {"slots", "description", "include_deferred"})
    if unknown:
        return None, f"unknown key(s) {', '.join(unknown)}"
    if "slots" not in entry:
        return None, "slots is missing"
    slots = entry["slots"]
    if slots == -1:
        return None, ("slots is -1 (unlimited in Airflow); statewright pools have a number of "
                      "slots: give one, e.g. 1000")
    if isinstance(slots, bool) or not isinstance(slots, int) or slots < 0:
        return None, f"slots must be a whole number of 0 or more, got {slots!r}"
    description = entry.get("description")
    if description is not None and not isinstance(description, str):
        return None, f"description must be text, got {description!r}"
    deferred = entry.get("include_deferred", False)
    if not isinstance(deferred, bool):
        return None, f"include_deferred must be true or false, got {deferred!r}"
    return PoolSpec(name, slots, description, deferred), None


def format_pool_export(pools: Iterable[PoolSpec]) -> str:
    """The pools as ``airflow pools export`` writes them (sorted keys, indent 4)."""
    return json.dumps({p.name: {"slots": p.slots, "description": p.description,
                                "include_deferred": p.include_deferred} for p in pools},
                      sort_keys=True, indent=4)
