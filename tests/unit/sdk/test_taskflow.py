from __future__ import annotations

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG, EmptyOperator, XComArg, chain, dag, task


def test_task_ids_edges_and_repeated_calls():
    with DAG("d") as d:

        @task
        def extract():
            return [1, 2, 3]

        @task(retries=2)
        def total(values, factor=1):
            return sum(values) * factor

        first = extract()
        again = extract()
        third = extract()
        out = total(first, factor=2)

    assert isinstance(first, XComArg)
    assert d.task_ids == ["extract", "extract__1", "extract__2", "total"]
    assert (again.operator.task_id, third.operator.task_id) == ("extract__1", "extract__2")
    assert out.operator.upstream_task_ids == {"extract"}
    assert out.operator.retries == 2
    assert d.get_task("extract").downstream_task_ids == {"total"}


def test_xcomargs_inside_lists_dicts_and_items(run):
    with DAG("d") as d:

        @task
        def numbers():
            return {"a": 1, "b": 2}

        @task
        def word():
            return "x"

        @task
        def combine(items, mapping, single):
            return {"items": items, "mapping": mapping, "single": single}

        n = numbers()
        w = word()
        c = combine([w, 5], {"k": n["b"]}, single=n)

    assert c.operator.upstream_task_ids == {"numbers", "word"}
    outcome = run(d, "combine", xcoms={"numbers": {"a": 1, "b": 2}, "word": "x"})
    assert outcome.kind == "success", outcome.error
    assert outcome.return_value == {
        "items": ["x", 5],
        "mapping": {"k": 2},
        "single": {"a": 1, "b": 2},
    }
    # the task keeps its references: another run resolves anew
    assert isinstance(c.operator.op_kwargs["single"], XComArg)


def test_missing_upstream_value_resolves_to_none(run):
    with DAG("d") as d:

        @task
        def up():
            return None

        @task
        def down(value):
            return value is None

        down(up())
    assert run(d, "down", xcoms={}).return_value is True


def test_xcomarg_dependency_operators():
    with DAG("d"):

        @task
        def a():
            return 1

        end = EmptyOperator(task_id="end")
        start = EmptyOperator(task_id="start")
        x = a()
        x >> end
        start >> x
        chain(x, EmptyOperator(task_id="after"))
    assert x.operator.downstream_task_ids == {"end", "after"}
    assert x.operator.upstream_task_ids == {"start"}


def test_override_and_task_id_argument():
    with DAG("d") as d:

        @task(task_id="custom")
        def f():
            return 1

        f()
        f.override(task_id="other", retries=4)()
    assert d.task_ids == ["custom", "other"]
    assert d.get_task("other").retries == 4


def test_context_arguments_and_missing_arguments(run):
    with DAG("d", params={"size": 2}) as d:

        @task
        def uses_context(x, ti=None, params=None, ds=None):
            return [x, ti.task_id, params["size"], ds]

        uses_context(1)

        @task
        def needs_two(a, b):
            return a + b

        with pytest.raises(DagDefinitionError, match="missing argument"):
            needs_two(1)
        with pytest.raises(DagDefinitionError, match="unexpected keyword"):
            needs_two(1, 2, c=3)

    assert run(d, "uses_context").return_value == [1, "uses_context", 2, "2024-03-01"]


def test_multiple_outputs(run):
    with DAG("d") as d:

        @task(multiple_outputs=True)
        def pair():
            return {"left": 1, "right": 2}

        @task
        def inferred() -> dict[str, int]:
            return {"n": 1}

        @task(multiple_outputs=True)
        def wrong():
            return [1, 2]

        pair()
        inferred()
        wrong()
    assert d.get_task("inferred").multiple_outputs is True
    assert run(d, "pair").return_value == {"left": 1, "right": 2}
    outcome = run(d, "wrong")
    assert outcome.kind == "failed" and "multiple_outputs" in outcome.error


def test_dag_decorator_params_and_registration(run):
    @dag(schedule="@daily", tags=["tf"])
    def my_pipeline(size: int = 3):
        """Doc of the pipeline."""

        @task
        def double(n):
            return n * 2

        double(size)

    built = my_pipeline()
    assert built.dag_id == "my_pipeline"
    assert built.params == {"size": 3}
    assert built.doc_md == "Doc of the pipeline."
    assert built.fileloc.endswith("test_taskflow.py")
    assert run(built, "double").return_value == 6
    assert run(built, "double", conf={"size": 10}).return_value == 20


def test_dag_decorator_validates_on_return():
    @dag
    def cyclic():
        a = EmptyOperator(task_id="a")
        b = EmptyOperator(task_id="b")
        a >> b >> a

    with pytest.raises(DagDefinitionError, match="cycle"):
        cyclic()


def test_task_bash(run):
    with DAG("d") as d:

        @task.bash
        def say(word):
            return f"echo {word}"

        @task
        def word():
            return "hello"

        say(word())

        @task.bash
        def nothing():
            return "   "

        nothing()
    assert d.get_task("say").upstream_task_ids == {"word"}
    assert run(d, "say", xcoms={"word": "hello"}).return_value == "hello"
    outcome = run(d, "nothing")
    assert outcome.kind == "failed" and "non-empty string" in outcome.error


def test_task_branch_and_short_circuit(run):
    with DAG("d") as d:

        @task.branch
        def choose():
            return "left"

        @task.short_circuit
        def check():
            return 0

        left, right = EmptyOperator(task_id="left"), EmptyOperator(task_id="right")
        after = EmptyOperator(task_id="after")
        choose() >> [left, right]
        check() >> after
    outcome = run(d, "choose")
    assert (outcome.kind, outcome.return_value, outcome.skip_task_ids) == (
        "success",
        "left",
        ["right"],
    )
    outcome = run(d, "check")
    assert (outcome.kind, outcome.return_value, outcome.skip_task_ids) == ("success", 0, ["after"])


def test_xcomarg_in_classic_operator_fields(run):
    from statewright.sdk import BashOperator, PythonOperator

    with DAG("d") as d:
        produce = PythonOperator(task_id="produce", python_callable=lambda: "hello")
        consume = PythonOperator(
            task_id="consume",
            python_callable=lambda value, word: f"{value} {word}",
            op_args=[produce.output],
            op_kwargs={"word": "world"},
        )
        shout = BashOperator(task_id="shout", bash_command=consume.output)
    assert consume.upstream_task_ids == {"produce"}
    assert shout.upstream_task_ids == {"consume"}
    assert run(d, "consume", xcoms={"produce": "hello"}).return_value == "hello world"
    outcome = run(d, "shout", xcoms={"consume": "echo loud"})
    assert (outcome.kind, outcome.return_value) == ("success", "loud")
    assert isinstance(shout.bash_command, XComArg)  # resolved for the run only
