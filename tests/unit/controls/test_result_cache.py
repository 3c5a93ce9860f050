"""Result caching (Prefect's Cached) with the in-process executor and a manual clock."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from statewright.db.repositories import task_cache as cache_repo
from statewright.db.repositories import xcoms as xcom_repo
from statewright.sdk import DAG, task
from statewright.sdk.caching import task_input_hash

CALLS: list[Any] = []


@pytest.fixture(autouse=True)
def _reset() -> None:
    CALLS.clear()


def _dag(key_fn: Any = task_input_hash, expiration: Any = timedelta(hours=1)) -> DAG:
    @task
    def source() -> int:
        return 21

    @task(cache_key_fn=key_fn, cache_expiration=expiration)
    def double(x: int) -> int:
        CALLS.append(x)
        return x * 2

    with DAG("cached") as dag:
        double(source())
    return dag


def _value(h: Any, task_id: str) -> Any:
    run = h.run()
    with h.engine.connect() as conn:
        return xcom_repo.get_return_values(conn, [(run.id, task_id)]).get((run.id, task_id))


def test_a_cache_hit_completes_the_task_as_cached_without_running_it(
        harness: Any, check_history: Any, edges_of: Any) -> None:
    h = harness(_dag())
    h.new_run("r1")
    h.loop()
    assert CALLS == [21] and h.tis()["double"].state_name == "Success"
    with h.engine.connect() as conn:
        [entry] = cache_repo.entries(conn, "cached", "double")
    assert (entry.value, entry.run_id, entry.try_number) == (42, "r1", 1)
    assert timedelta(minutes=59) < entry.expires_at - h.clock() <= timedelta(hours=1)

    h.new_run("r2")
    h.loop()
    ti = h.tis()["double"]
    assert (ti.state, ti.state_name) == ("success", "Cached")
    assert CALLS == [21]  # the task did not run again
    assert _value(h, "double") == 42
    assert edges_of(h.ti_history("double"))[-1] == ("running", "success", "Cached", "worker")
    check_history(h.history())


def test_an_expired_entry_is_not_used(harness: Any) -> None:
    h = harness(_dag(expiration=timedelta(minutes=5)))
    h.new_run("r1")
    h.loop()
    h.clock.advance(timedelta(minutes=6))
    h.new_run("r2")
    h.loop()
    assert CALLS == [21, 21] and h.tis()["double"].state_name == "Success"


def test_a_cache_key_function_that_raises_runs_the_task_and_touches_no_cache(
        harness: Any) -> None:
    def broken(context: Any, arguments: dict[str, Any]) -> str:
        raise KeyError("no key")

    h = harness(_dag(key_fn=broken))
    h.new_run("r1")
    h.loop()
    ti = h.tis()["double"]
    assert (ti.state, ti.state_name, CALLS) == ("success", "Success", [21])
    with h.engine.connect() as conn:
        assert cache_repo.entries(conn, "cached") == []
    [note] = [r for r in h.ti_history("double") if r.from_state == r.to_state]
    assert note.actor == "worker"
    assert note.message.startswith("cache_key_fn of task 'double' raised KeyError: 'no key'; "
                                   "the task runs without the cache")


def test_a_cache_key_that_is_not_a_string_is_reported(harness: Any) -> None:
    h = harness(_dag(key_fn=lambda context, arguments: 7))
    h.new_run("r1")
    h.loop()
    assert h.tis()["double"].state == "success" and CALLS == [21]
    [note] = [r for r in h.ti_history("double") if r.from_state == r.to_state]
    assert "returned 7; a cache key must be a non-empty string" in note.message


def test_the_key_sees_the_call_arguments_with_upstream_results(harness: Any) -> None:
    seen: list[Any] = []

    def key(context: Any, arguments: dict[str, Any]) -> str:
        seen.append(arguments)
        return f"x={arguments['x']}"

    h = harness(_dag(key_fn=key))
    h.new_run("r1")
    h.loop()
    assert seen == [{"x": 21}]


def test_cache_expiration_needs_a_key_function() -> None:
    from statewright.core.errors import DagDefinitionError

    with pytest.raises(DagDefinitionError, match="cache_expiration is set but cache_key_fn"):
        _dag(key_fn=None)


def test_task_input_hash_is_stable_and_declines_what_json_cannot_hold() -> None:
    assert task_input_hash({}, {"a": 1, "b": [2]}) == task_input_hash({}, {"b": [2], "a": 1})
    assert task_input_hash({}, {"a": 1}) != task_input_hash({}, {"a": 2})
    assert task_input_hash({}, {"a": object()}) is None
