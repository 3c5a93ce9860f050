"""Callables run in another Python environment, through dag.test() on SQLite and PostgreSQL:
ExternalPythonOperator with this interpreter, PythonVirtualenvOperator with virtual environments
built once per session under one cache folder, and Airflow's two branch examples, unedited."""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.sdk import DAG, task
from statewright.sdk.loader import load_dag_file
from statewright.sdk.operators import (
    BranchExternalPythonOperator,
    ExternalPythonOperator,
    PythonVirtualenvOperator,
    _virtualenv,
)

EXAMPLES = Path(__file__).parents[2] / "fixtures" / "airflow_examples"
# A small pure-Python package, not installed beside statewright: only the virtual environment
# that installs it can import it.
ISOLATED: dict[str, Any] = {"requirements": ["funcsigs==1.0.2"], "system_site_packages": False}


@pytest.fixture(scope="session")
def venv_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the session: each virtual environment is built once."""
    return tmp_path_factory.mktemp("venvs")


@pytest.fixture(scope="session")
def isolated_python(venv_cache: Path) -> Path:
    """The python of the cached ``ISOLATED`` environment, as the operator builds it (the tests
    below find it there and reuse it)."""
    with DAG("spec"):
        operator = PythonVirtualenvOperator(task_id="spec", python_callable=add,
                                            venv_cache_path=venv_cache, **ISOLATED)
    return _virtualenv.cached(operator.venv_spec(), venv_cache)


def _log(logs: Path, task_id: str) -> str:
    (found,) = logs.glob(f"**/task_id={task_id}/attempt=1.log")
    return found.read_text()


def add(a, b):
    import sys

    print(f"adding {a} and {b} in {sys.executable}")
    print("a line on stderr", file=sys.stderr)
    return {"total": a + b}


def test_the_return_value_reaches_xcom_and_the_next_task_and_output_the_log(
        engine: Engine, tmp_path: Path) -> None:
    with DAG("external_sum") as dag:
        summed = ExternalPythonOperator(task_id="add", python=sys.executable,
                                        python_callable=add, op_args=[2], op_kwargs={"b": 3})

        @task
        def double(result: dict) -> int:
            return result["total"] * 2

        double(summed.output)
    run = dag.test(engine=engine, logs_folder=tmp_path)
    assert run.states == {"add": "success", "double": "success"}
    assert run.ti("add").return_value == {"total": 5}
    assert run.ti("double").return_value == 10
    log = _log(tmp_path, "add")
    assert f"adding 2 and 3 in {sys.executable}" in log
    assert "a line on stderr" in log


def test_taskflow_decorators_pass_values_between_interpreters(engine: Engine) -> None:
    with DAG("external_taskflow") as dag:
        @task.external_python(python=sys.executable)
        def split(text: str) -> dict[str, int]:
            words = text.split()
            return {"words": len(words), "letters": sum(len(w) for w in words)}

        @task.external_python(python=sys.executable)
        def ratio(letters, words):
            return letters / words

        parts = split("one two three")
        ratio(parts["letters"], words=parts["words"])
    run = dag.test(engine=engine)
    assert run.state.value == "success", run.states
    assert run.ti("ratio").return_value == pytest.approx(11 / 3)


def test_a_failing_callable_fails_the_task_with_its_error(engine: Engine) -> None:
    def fail():
        raise ValueError("no data for today")

    with DAG("external_failure") as dag:
        failing = ExternalPythonOperator(task_id="fail", python=sys.executable,
                                         python_callable=fail)
        failing >> NoopOperator(task_id="after")
    run = dag.test(engine=engine)
    assert run.states == {"fail": "failed", "after": "upstream_failed"}
    message = run.ti("fail").state_message
    assert message.startswith("ExternalPythonError: fail() failed in ")
    assert "(exit code 1): ValueError: no data for today" in message
    assert "Last lines of its stderr: Traceback" in message


def test_a_branch_callable_skips_the_other_branch(engine: Engine) -> None:
    def choose(options):
        return options[1]

    with DAG("external_branch") as dag:
        branch = BranchExternalPythonOperator(task_id="choose", python=sys.executable,
                                              python_callable=choose, op_args=[["a", "b"]])
        a, b = NoopOperator(task_id="a"), NoopOperator(task_id="b")
        join = NoopOperator(task_id="join", trigger_rule="none_failed_min_one_success")
        branch >> [a, b] >> join
    run = dag.test(engine=engine)
    assert run.states == {"choose": "success", "a": "skipped", "b": "success",
                          "join": "success"}
    assert run.ti("choose").return_value == "b"


def test_a_virtualenv_installs_its_requirement_without_statewright(
        engine: Engine, venv_cache: Path, isolated_python: Path) -> None:
    def probe():
        import importlib.util
        import sys

        import funcsigs

        return {"funcsigs": funcsigs.__version__, "prefix": sys.prefix,
                "statewright": importlib.util.find_spec("statewright") is not None}

    with DAG("venv_probe") as dag:
        found = PythonVirtualenvOperator(task_id="probe", python_callable=probe,
                                         venv_cache_path=venv_cache, **ISOLATED)

        @task
        def version(result: dict) -> str:
            return result["funcsigs"]

        version(found.output)
    run = dag.test(engine=engine)
    assert run.states == {"probe": "success", "version": "success"}, run.ti("probe").state_message
    result = run.ti("probe").return_value
    assert result["statewright"] is False
    assert Path(result["prefix"]) == isolated_python.parent.parent
    assert run.ti("version").return_value == "1.0.2"


def test_a_branch_virtualenv_reuses_the_cached_environment(
        engine: Engine, venv_cache: Path, isolated_python: Path, tmp_path: Path) -> None:
    with DAG("venv_branch") as dag:
        @task.branch_virtualenv(venv_cache_path=str(venv_cache), **ISOLATED)
        def choose() -> str:
            import funcsigs  # noqa: F401  (installed there)

            return "installed"

        branch = choose()
        branch >> [NoopOperator(task_id="installed"), NoopOperator(task_id="missing")]
    run = dag.test(engine=engine, logs_folder=tmp_path)
    assert run.states == {"choose": "success", "installed": "success", "missing": "skipped"}
    log = _log(tmp_path, "choose")
    assert f"Reusing cached Python virtual environment in {isolated_python.parent.parent}" in log
    assert "Creating a virtual environment" not in log


def test_a_virtualenv_for_one_try_is_removed_after_it(engine: Engine) -> None:
    def where():
        import sys

        return [sys.prefix, sys.prefix != sys.base_prefix]

    with DAG("venv_once") as dag:
        PythonVirtualenvOperator(task_id="where", python_callable=where,
                                 system_site_packages=False)
    run = dag.test(engine=engine)
    prefix, in_a_venv = run.ti("where").return_value
    assert in_a_venv is True
    assert not Path(prefix).exists()


def test_a_serializer_missing_in_the_environment_is_named(
        engine: Engine, isolated_python: Path) -> None:
    def nothing():
        return None

    with DAG("external_serializer") as dag:  # that environment has funcsigs and nothing else
        ExternalPythonOperator(task_id="t", python=str(isolated_python), python_callable=nothing,
                               serializer="dill")
    run = dag.test(engine=engine)
    assert run.states == {"t": "failed"}
    assert (f"the serializer module 'dill' is not installed in {isolated_python}: install it "
            "there") in run.ti("t").state_message


@pytest.mark.parametrize("name", ["example_branch_operator.py",
                                  "example_branch_operator_decorator.py"])
def test_airflows_branch_examples_follow_one_task_of_each_branch(
        name: str, engine: Engine, venv_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unedited: their branch callables choose at random, so each run is checked for its
    shape (Airflow's recorded run is one of the 64 possible outcomes)."""
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    with monkeypatch.context() as patch:  # their VENV_CACHE_PATH is the temp folder
        patch.setattr(tempfile, "tempdir", str(venv_cache))
        loaded = load_dag_file(EXAMPLES / "standard" / name)
    assert loaded.error is None, loaded.error
    (dag,) = loaded.dags.values()
    run = dag.test(engine=engine)
    states = run.states
    assert run.state.value == "success", states
    for group in ("branch", "ext_py", "venv"):
        chosen = sorted(states[f"{group}_{x}"] for x in "abcd")
        assert chosen == ["skipped", "skipped", "skipped", "success"], (group, states)
    joins = {k: v for k, v in states.items() if re.fullmatch(r"join\w*", k)}
    assert set(joins.values()) == {"success"} and len(joins) == 3
