"""What counts as a new DAG version (pure: no I/O).

A DAG gets a new version when its structure changes (anything in its serialized form but the
file it was read from) or when the source code of its file changes. Parsing the same file
again with nothing changed costs nothing: no row, no copy per run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_NOT_STRUCTURE = frozenset({"fileloc"})


def structure_hash(serialized: Mapping[str, Any]) -> str:
    """The hash of a serialized DAG's structure (its file's location left out)."""
    body = {k: v for k, v in serialized.items() if k not in _NOT_STRUCTURE}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


def code_hash(source_code: str) -> str:
    return hashlib.sha256(source_code.encode()).hexdigest()


@dataclass(frozen=True)
class VersionKey:
    """What identifies a version's content."""

    structure_hash: str
    code_hash: str


def needs_new_version(latest: VersionKey | None, current: VersionKey) -> bool:
    """True when the DAG has no version yet, or its structure or code differs from the latest."""
    return latest is None or latest != current


def next_version_number(latest_number: int | None) -> int:
    return 1 if latest_number is None else latest_number + 1
