from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.sdk import _dag_context
from statewright.sdk.loader import get_task, load_dag_file

GOOD = """
from datetime import datetime
from statewright.sdk import DAG, EmptyOperator, dag, task
import helper_module

top = DAG("top_level", schedule="@daily", start_date=datetime(2024, 1, 1))
EmptyOperator(task_id="only", dag=top)

def build():
    with DAG("from_with_block") as inner:
        EmptyOperator(task_id="a") >> EmptyOperator(task_id=helper_module.NAME)

build()

@dag
def decorated():
    @task
    def hello():
        return "hi"
    hello()

decorated()
unused = DAG("never_entered")  # a plain top-level DAG object is collected too
"""


def _write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


def test_loads_every_dag_of_a_good_file(tmp_path, monkeypatch):
    monkeypatch.delitem(sys.modules, "helper_module", raising=False)
    _write(tmp_path, "helper_module.py", "NAME = 'from_helper'\n")
    path = _write(tmp_path, "pipelines.py", GOOD)
    result = load_dag_file(path)
    assert result.error is None
    assert sorted(result.dags) == ["decorated", "from_with_block", "never_entered", "top_level"]
    for loaded in result.dags.values():
        assert loaded.fileloc == str(path.resolve())
    assert get_task(result.dags["from_with_block"], "from_helper").upstream_task_ids == {"a"}
    with pytest.raises(DagDefinitionError):
        get_task(result.dags["top_level"], "missing")
    assert str(tmp_path) not in sys.path
    assert result.dags["top_level"].serialize()["tasks"][0]["task_id"] == "only"
    sys.modules.pop("helper_module", None)


def test_file_that_raises_gives_traceback_and_no_dags(tmp_path):
    path = _write(
        tmp_path,
        "broken.py",
        """
        from statewright.sdk import DAG, EmptyOperator

        with DAG("half_built"):
            EmptyOperator(task_id="a")
            raise RuntimeError("cannot reach the warehouse")
        """,
    )
    result = load_dag_file(path)
    assert result.dags == {}
    assert result.error is not None
    assert result.error.startswith("Traceback (most recent call last):")
    assert "broken.py" in result.error and "line 6" in result.error
    assert result.error.rstrip().endswith("RuntimeError: cannot reach the warehouse")
    assert "importlib" not in result.error
    assert _dag_context.current_dag() is None


def test_syntax_error_and_definition_error(tmp_path):
    result = load_dag_file(_write(tmp_path, "syntax.py", "def broken(:\n"))
    assert result.dags == {} and "SyntaxError" in result.error
    cyclic = """
        from statewright.sdk import DAG, EmptyOperator
        with DAG("cyclic"):
            a = EmptyOperator(task_id="a")
            b = EmptyOperator(task_id="b")
            a >> b >> a
        """
    result = load_dag_file(_write(tmp_path, "cyclic.py", cyclic))
    assert result.dags == {} and "a >> b >> a" in result.error


def test_plain_dag_with_cycle_is_an_error(tmp_path):
    text = """
        from statewright.sdk import DAG, EmptyOperator
        d = DAG("plain")
        a = EmptyOperator(task_id="a", dag=d)
        b = EmptyOperator(task_id="b", dag=d)
        a >> b >> a
        """
    result = load_dag_file(_write(tmp_path, "plain.py", text))
    assert result.dags == {} and "cycle" in result.error


def test_duplicate_dag_ids_in_one_file(tmp_path):
    text = """
        from statewright.sdk import DAG
        with DAG("twice"):
            pass
        with DAG("twice"):
            pass
        """
    result = load_dag_file(_write(tmp_path, "dup.py", text))
    assert result.dags == {}
    assert "'twice'" in result.error and "more than once" in result.error


def test_two_files_with_the_same_basename(tmp_path):
    text = """
        from statewright.sdk import DAG
        VALUE = {value!r}
        dag = DAG(VALUE)
        """
    first = _write(tmp_path / "one", "dags.py", text.format(value="first"))
    second = _write(tmp_path / "two", "dags.py", text.format(value="second"))
    r1 = load_dag_file(first)
    r2 = load_dag_file(second)
    assert list(r1.dags) == ["first"] and list(r2.dags) == ["second"]
    assert r1.dags["first"].fileloc.endswith("one/dags.py")
    assert r2.dags["second"].fileloc.endswith("two/dags.py")
    # a changed file is imported anew
    first.write_text(textwrap.dedent(text.format(value="changed")))
    assert list(load_dag_file(first).dags) == ["changed"]


def test_missing_file(tmp_path):
    result = load_dag_file(tmp_path / "nope.py")
    assert result.dags == {} and "does not exist" in result.error
