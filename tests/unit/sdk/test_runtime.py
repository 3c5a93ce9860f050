from __future__ import annotations

import logging
import os
from datetime import datetime, timedelta

import pytest

from statewright.sdk import (
    DAG,
    AirflowFailException,
    AirflowSkipException,
    BashOperator,
    BranchPythonOperator,
    EmptyOperator,
    FailTask,
    PythonOperator,
    ShortCircuitOperator,
    SkipTask,
    get_current_context,
)
from statewright.sdk.runtime import build_context, execute_task


def _python_dag(callable_, **kwargs):
    with DAG("d", params={"p": 1, "q": 2}) as dag:
        PythonOperator(task_id="t", python_callable=callable_, **kwargs)
    return dag


def test_python_operator_args_and_named_context_keys(run):
    def f(a, b, *, c, ti, params, ds):
        return [a, b, c, ti.task_id, params, ds]

    dag = _python_dag(f, op_args=[1, 2], op_kwargs={"c": 3})
    outcome = run(dag, "t", conf={"q": 20, "extra": True})
    assert outcome.kind == "success", outcome.traceback
    assert outcome.return_value == [1, 2, 3, "t", {"p": 1, "q": 20, "extra": True}, "2024-03-01"]


def test_python_operator_var_kwargs_get_whole_context(run):
    seen = {}

    def f(**context):
        seen.update(context)

    run(_python_dag(f, op_kwargs={"mine": 1}), "t")
    expected = {
        "dag", "task", "ti", "dag_run", "params", "logical_date", "ds", "ds_nodash", "ts",
        "data_interval_start", "data_interval_end", "run_id", "conf", "try_number", "mine",
    }  # fmt: skip
    assert expected <= set(seen)
    assert seen["ds_nodash"] == "20240301"
    assert seen["ts"] == "2024-03-01T06:00:00+00:00"
    assert seen["dag_run"].run_id == "manual__1" and seen["dag_run"].conf == {}
    assert (seen["ti"].dag_id, seen["ti"].run_id, seen["ti"].try_number) == ("d", "manual__1", 1)


def test_positional_argument_clashing_with_context_key_fails(run):
    def f(ds):
        return ds

    outcome = run(_python_dag(f, op_args=["x"]), "t")
    assert outcome.kind == "failed" and "'ds'" in outcome.error


def test_exceptions_map_to_outcomes(run):
    def boom():
        raise ValueError("boom\nsecond line")

    outcome = run(_python_dag(boom), "t")
    assert outcome.kind == "failed"
    assert outcome.error == "ValueError: boom second line"
    assert "Traceback" in outcome.traceback and "boom" in outcome.traceback

    def skip():
        raise AirflowSkipException("nothing to do")

    outcome = run(_python_dag(skip), "t")
    assert (outcome.kind, outcome.message, outcome.error) == ("skipped", "nothing to do", None)

    def fail():
        raise AirflowFailException("bad input")

    outcome = run(_python_dag(fail), "t")
    assert (outcome.kind, outcome.error) == ("fail_no_retry", "FailTask: bad input")
    assert SkipTask is AirflowSkipException and FailTask is AirflowFailException


def test_keyboard_interrupt_and_system_exit_propagate(run):
    def interrupt():
        raise KeyboardInterrupt

    def leave():
        raise SystemExit(3)

    with pytest.raises(KeyboardInterrupt):
        run(_python_dag(interrupt), "t")
    with pytest.raises(SystemExit):
        run(_python_dag(leave), "t")


def test_unstorable_return_value(run):
    outcome = run(_python_dag(lambda: object()), "t")
    assert outcome.kind == "failed"
    assert outcome.error.startswith(
        "task 't' returned a value of type object (value: object of type object cannot be "
        "serialized;")
    assert outcome.error.endswith("that cannot be stored as JSON; return plain data (str, int, "
                                  "float, bool, None, list, dict) or a supported type (see XCom "
                                  "values in docs/concepts.md) instead")
    outcome = run(_python_dag(lambda: {"ok": [1, (2, len)]}), "t")
    assert "of type builtin_function_or_method" in outcome.error
    assert "value['ok'][1][1]: object of type builtin_function_or_method" in outcome.error


def test_return_value_is_stored_as_serialized(run):
    assert run(_python_dag(lambda: (1, "a")), "t").return_value == {
        "__type": "tuple", "value": [1, "a"]}
    assert run(_python_dag(lambda: datetime(2024, 1, 1)), "t").return_value == {
        "__type": "datetime", "value": "2024-01-01T00:00:00"}
    assert run(_python_dag(lambda: float("nan")), "t").return_value == {
        "__type": "float", "value": "nan"}
    assert run(_python_dag(lambda: [1, {"a": None}]), "t").return_value == [1, {"a": None}]
    assert run(_python_dag(lambda: 5, do_xcom_push=False), "t").return_value is None


def test_execution_timeout(run):
    import time

    outcome = run(_python_dag(lambda: time.sleep(5), execution_timeout=0.2), "t")
    assert outcome.kind == "timed_out"
    assert outcome.error.startswith("TaskTimeout: task 't' ran longer than")


def test_get_current_context(run):
    outcome = run(_python_dag(lambda: get_current_context()["ti"].task_id), "t")
    assert outcome.return_value == "t"
    with pytest.raises(RuntimeError):
        get_current_context()


def test_xcom_pull_like_airflow(run):
    def f(ti):
        return {
            "one": ti.xcom_pull(task_ids="up"),
            "many": ti.xcom_pull(task_ids=["up", "missing"]),
            "key": ti.xcom_pull(task_ids="up", key="k"),
            "own": ti.xcom_pull(),
            "default": ti.xcom_pull(task_ids="missing", default="d"),
        }

    outcome = run(_python_dag(f), "t", xcoms={"up": {"k": 7}})
    assert outcome.return_value == {
        "one": {"k": 7},
        "many": [{"k": 7}, None],
        "key": 7,
        "own": None,
        "default": "d",
    }


def test_context_without_logical_date():
    with DAG("d") as dag:
        t = EmptyOperator(task_id="t")
    context = build_context(
        dag, t, run_id="r", logical_date=None, data_interval_start=None,
        data_interval_end=None, conf=None, try_number=2, max_tries=3, xcoms={},
        extra={"custom": 1},
    )  # fmt: skip
    assert "ds" not in context and context["logical_date"] is None
    assert (context["custom"], context["try_number"], context["ti"].max_tries) == (1, 2, 3)
    assert execute_task(t, context).kind == "success"


# -- bash ---------------------------------------------------------------------------------------


def _bash(command, **kwargs):
    with DAG("d") as dag:
        BashOperator(task_id="b", bash_command=command, **kwargs)
    return dag


def test_bash_success_returns_last_line_and_logs_output(run, caplog):
    with caplog.at_level(logging.INFO, logger="statewright.task"):
        outcome = run(_bash("echo first; echo err >&2; echo last"), "b")
    assert (outcome.kind, outcome.return_value) == ("success", "last")
    assert {"first", "err", "last"} <= {r.getMessage() for r in caplog.records}


def test_bash_exit_codes(run):
    outcome = run(_bash("exit 99"), "b")
    assert outcome.kind == "skipped" and "99" in outcome.message
    outcome = run(_bash("exit 3", skip_on_exit_code=[3, 4]), "b")
    assert outcome.kind == "skipped"
    outcome = run(_bash("exit 99", skip_on_exit_code=None), "b")
    assert outcome.kind == "failed" and "exit code 99" in outcome.error
    outcome = run(_bash("echo hi; exit 2"), "b")
    assert outcome.kind == "failed"
    assert outcome.error == (
        "BashCommandError: Bash command failed. The command returned a non-zero exit code 2."
    )


def test_bash_env_cwd_and_output_processor(run, tmp_path, monkeypatch):
    monkeypatch.setenv("FROM_PARENT", "parent")
    outcome = run(_bash('echo "${FROM_PARENT:-unset}-$MINE"', env={"MINE": "m"}), "b")
    assert outcome.return_value == "unset-m"
    outcome = run(_bash('echo "$FROM_PARENT-$MINE"', env={"MINE": "m"}, append_env=True), "b")
    assert outcome.return_value == "parent-m"
    outcome = run(_bash("pwd", cwd=str(tmp_path)), "b")
    assert outcome.return_value == str(tmp_path)
    outcome = run(_bash("echo $STATEWRIGHT_CTX_DAG_ID.$STATEWRIGHT_CTX_TASK_ID"), "b")
    assert outcome.return_value == "d.b"
    outcome = run(_bash("echo 3", output_processor=int), "b")
    assert outcome.return_value == 3
    outcome = run(_bash("pwd", cwd=str(tmp_path / "missing")), "b")
    assert outcome.kind == "failed" and "does not exist" in outcome.error


def test_bash_timeout_kills_the_command(run, tmp_path):
    marker = tmp_path / "marker"
    outcome = run(_bash(f"sleep 5; touch {marker}", execution_timeout=0.3), "b")
    assert outcome.kind == "timed_out" and "TaskTimeout" in outcome.error
    assert not marker.exists()
    assert os.listdir(tmp_path) == []


# -- branching ----------------------------------------------------------------------------------


def _branch_dag(result):
    with DAG("d") as dag:
        branch = BranchPythonOperator(task_id="branch", python_callable=lambda: result)
        a, b, c, join = (EmptyOperator(task_id=i) for i in ("a", "b", "c", "join"))
        elsewhere = EmptyOperator(task_id="elsewhere")
        branch >> [a, b, c]
        [a, b, c] >> join
        elsewhere >> join
    return dag


@pytest.mark.parametrize(
    ("choice", "skipped"),
    [("a", ["b", "c"]), (["a", "c"], ["b"]), (None, ["a", "b", "c"]), ({"b"}, ["a", "c"])],
)
def test_branch_skips_direct_downstream_not_chosen(run, choice, skipped):
    outcome = run(_branch_dag(choice), "branch")
    assert outcome.kind == "success"
    assert outcome.skip_task_ids == skipped
    expected = sorted(choice) if isinstance(choice, set) else choice
    assert outcome.return_value == expected


@pytest.mark.parametrize(
    ("choice", "skipped"), [("join", ["a", "b", "c"]), (["a", "elsewhere"], ["b", "c"])]
)
def test_branch_accepts_tasks_of_the_dag_that_are_not_next_like_airflow(run, choice, skipped):
    outcome = run(_branch_dag(choice), "branch")
    assert outcome.kind == "success"
    assert outcome.skip_task_ids == skipped


@pytest.mark.parametrize("choice", ["nope", ["a", "nope"], 5])
def test_branch_rejects_tasks_that_are_not_in_the_dag(run, choice):
    outcome = run(_branch_dag(choice), "branch")
    assert outcome.kind == "failed"
    assert outcome.skip_task_ids == []
    if choice == 5:
        assert "int" in outcome.error
    else:
        assert "nope" in outcome.error


def test_branch_to_a_task_that_leads_to_a_direct_join(run):
    with DAG("d") as dag:
        branch = BranchPythonOperator(task_id="branch", python_callable=lambda: "task1")
        task1, join, other = (EmptyOperator(task_id=i) for i in ("task1", "join", "other"))
        branch >> [task1, join, other]
        task1 >> join
    assert run(dag, "branch").skip_task_ids == ["other"]


def _short_circuit_dag(result, ignore):
    # check >> direct >> later; later waits for `side` too and runs when all its upstreams are done
    with DAG("d") as dag:
        check = ShortCircuitOperator(
            task_id="check",
            python_callable=lambda: result,
            ignore_downstream_trigger_rules=ignore,
        )
        direct = EmptyOperator(task_id="direct")
        later = EmptyOperator(task_id="later", trigger_rule="all_done")
        side = EmptyOperator(task_id="side")
        check >> direct >> later
        side >> later
    return dag


def test_short_circuit_ignoring_trigger_rules_skips_everything_downstream(run):
    outcome = run(_short_circuit_dag(False, True), "check")
    assert (outcome.kind, outcome.return_value) == ("success", False)
    assert outcome.skip_task_ids == ["direct", "later"]


def test_short_circuit_respecting_trigger_rules_skips_direct_only(run):
    outcome = run(_short_circuit_dag([], False), "check")
    assert (outcome.kind, outcome.return_value) == ("success", [])
    assert outcome.skip_task_ids == ["direct"]


def test_short_circuit_truthy_skips_nothing(run):
    for ignore in (True, False):
        outcome = run(_short_circuit_dag("go", ignore), "check")
        assert (outcome.kind, outcome.return_value, outcome.skip_task_ids) == (
            "success",
            "go",
            [],
        )


def test_empty_operator(run):
    with DAG("d") as dag:
        EmptyOperator(task_id="e", execution_timeout=timedelta(seconds=5))
    outcome = run(dag, "e")
    assert (outcome.kind, outcome.return_value, outcome.error) == ("success", None, None)


def test_short_circuit_leaves_always_and_teardown_tasks_out_of_its_skip(run):
    with DAG("d") as dag:
        check = ShortCircuitOperator(task_id="check", python_callable=lambda: False)
        direct = EmptyOperator(task_id="direct")
        notify = EmptyOperator(task_id="notify", trigger_rule="always")
        teardown = EmptyOperator(task_id="teardown").as_teardown()
        check >> [direct, notify] >> teardown
    assert run(dag, "check").skip_task_ids == ["direct"]
