"""A serialized DAG whose data has dict keys of mixed types (Airflow 3.3's
example_params_ui_tutorial: values_display={None: ..., 1: ...}) has a hash, as JSON sees it."""

from __future__ import annotations

from statewright.db.repositories.dags import dag_hash


def test_mixed_keys_hash_as_json_text() -> None:
    mixed = {"params": {"p": {"values_display": {None: "none", 1: "one"}}}}
    as_json = {"params": {"p": {"values_display": {"null": "none", "1": "one"}}}}
    assert dag_hash(mixed) == dag_hash(as_json)
    assert dag_hash({"b": 1, "a": 2}) == dag_hash({"a": 2, "b": 1})
