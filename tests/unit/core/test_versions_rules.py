"""What counts as a new DAG version."""

from __future__ import annotations

from statewright.core.versions import (
    VersionKey,
    code_hash,
    needs_new_version,
    next_version_number,
    structure_hash,
)


def test_structure_ignores_the_files_location_only() -> None:
    base = {"dag_id": "d", "tasks": [{"task_id": "a"}], "fileloc": "/a/d.py"}
    assert structure_hash(base) == structure_hash({**base, "fileloc": "/b/d.py"})
    assert structure_hash(base) != structure_hash({**base, "tasks": [{"task_id": "b"}]})
    assert structure_hash(base) != structure_hash({**base, "description": "x"})


def test_a_version_when_new_or_changed() -> None:
    key = VersionKey(structure_hash({"dag_id": "d"}), code_hash("x = 1\n"))
    assert needs_new_version(None, key)
    assert not needs_new_version(key, VersionKey(key.structure_hash, key.code_hash))
    assert needs_new_version(key, VersionKey(key.structure_hash, code_hash("x = 2\n")))
    assert next_version_number(None) == 1 and next_version_number(4) == 5
