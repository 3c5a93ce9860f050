"""``Metadata`` yielded by a generator task, and the ``pre_execute`` / ``post_execute`` hooks,
in the runtime alone (no database)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG, Asset, AssetAlias, BashOperator, Metadata, PythonOperator, task

OUT = Asset(name="out", uri="s3://bucket/out")
OTHER = Asset(name="other", uri="s3://bucket/other")
ALIAS = AssetAlias("my-alias")


@pytest.mark.parametrize(("args", "message"), [
    (("s3://bucket/out",), "asset must be an Asset"),
    ((ALIAS,), "asset must be an Asset"),
    ((OUT, ["not", "a", "dict"]), "extra must be a dict"),
    ((OUT, {"when": object()}), "extra must be plain JSON"),
    ((OUT, {}, "my-alias"), "alias must be an AssetAlias"),
])
def test_metadata_refuses_bad_arguments(args: tuple[Any, ...], message: str) -> None:
    with pytest.raises(DagDefinitionError, match=message):
        Metadata(*args)


def test_metadata_is_a_value() -> None:
    assert Metadata(OUT, {"a": 1}) == Metadata(OUT, {"a": 1})
    assert Metadata(OUT, {"a": 1}) != Metadata(OUT, {"a": 2})
    assert Metadata(OUT).extra == {} and Metadata(OUT).alias is None
    assert "alias=" in repr(Metadata(OUT, alias=ALIAS))


def test_a_generator_task_attaches_the_extra_it_yields(run: Any) -> None:
    with DAG("d") as dag:
        @task(outlets=[OUT])
        def produce() -> Iterator[Any]:
            yield Metadata(OUT, {"rows": 3})
            yield "not metadata"  # logged and ignored
            yield Metadata(OUT, {"bytes": 10})

        produce()
    outcome = run(dag, "produce")
    assert outcome.kind == "success", outcome.traceback
    assert outcome.return_value is None  # a generator without ``return``
    assert outcome.extra["asset_events"]["extras"] == {"out": {"rows": 3, "bytes": 10}}


def test_the_generators_return_value_is_the_tasks(run: Any) -> None:
    def produce() -> Iterator[Any]:
        yield Metadata(OUT, {"rows": 3})
        return {"done": True}

    with DAG("d") as dag:
        PythonOperator(task_id="p", python_callable=produce, outlets=[OUT])
    outcome = run(dag, "p")
    assert outcome.kind == "success" and outcome.return_value == {"done": True}


def test_metadata_with_an_alias_resolves_the_alias(run: Any) -> None:
    with DAG("d") as dag:
        @task(outlets=[ALIAS])
        def produce() -> Iterator[Any]:
            yield Metadata(OTHER, {"k": "v"}, alias=ALIAS)

        produce()
    events = run(dag, "produce").extra["asset_events"]
    assert [(e["alias"], e["asset"]["name"], e["extra"]) for e in events["aliased"]] == [
        ("my-alias", "other", {"k": "v"})]


def test_a_generator_that_raises_fails_the_try(run: Any) -> None:
    with DAG("d") as dag:
        @task(outlets=[OUT])
        def produce() -> Iterator[Any]:
            yield Metadata(OUT, {"rows": 3})
            raise RuntimeError("half way")

        produce()
    outcome = run(dag, "produce")
    assert outcome.kind == "failed" and "half way" in (outcome.error or "")
    assert "asset_events" not in outcome.extra


def test_a_plain_function_returning_a_generator_is_not_run_for_metadata(run: Any) -> None:
    """Only a generator *function* is run to its end (Airflow's rule); a generator returned by
    a plain function is a return value, which cannot be stored."""
    with DAG("d") as dag:
        PythonOperator(task_id="p", python_callable=lambda: (m for m in [Metadata(OUT)]),
                       outlets=[OUT])
    outcome = run(dag, "p")
    assert outcome.kind == "failed" and "generator" in (outcome.error or "")


# -- pre_execute / post_execute ---------------------------------------------------------------


def test_hooks_run_around_execute_with_its_result(run: Any) -> None:
    calls: list[Any] = []

    def post(context: Any, result: Any) -> None:
        calls.append(("post", result))
        context["outlet_events"][OUT].extra = {"from": "post"}

    with DAG("d") as dag:
        BashOperator(task_id="b", bash_command="echo hello", outlets=[OUT],
                     pre_execute=lambda context: calls.append(("pre", context["ti"].task_id)),
                     post_execute=post)
    outcome = run(dag, "b")
    assert outcome.kind == "success", outcome.traceback
    assert calls == [("pre", "b"), ("post", "hello")]
    assert outcome.extra["asset_events"]["extras"] == {"out": {"from": "post"}}


def test_a_failing_pre_execute_hook_stops_the_task(run: Any) -> None:
    ran: list[str] = []

    def refuse(context: Any) -> None:
        raise ValueError("not today")

    with DAG("d") as dag:
        PythonOperator(task_id="p", python_callable=lambda: ran.append("ran"),
                       pre_execute=refuse)
    outcome = run(dag, "p")
    assert outcome.kind == "failed" and "not today" in (outcome.error or "") and ran == []


def test_overridden_hook_methods_are_called(run: Any) -> None:
    class Audited(PythonOperator):
        seen: list[Any] = []

        def pre_execute(self, context: Any) -> None:
            self.seen.append("pre")

        def post_execute(self, context: Any, result: Any = None) -> None:
            self.seen.append(("post", result))

    with DAG("d") as dag:
        Audited(task_id="a", python_callable=lambda: 42)
    assert run(dag, "a").return_value == 42
    assert Audited.seen == ["pre", ("post", 42)]


def test_a_hook_must_be_callable() -> None:
    with DAG("d"), pytest.raises(DagDefinitionError, match="post_execute must be a callable"):
        BashOperator(task_id="b", bash_command=":", post_execute="print")
