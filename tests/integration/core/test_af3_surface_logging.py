"""``self.log`` of operators, sensors and hooks (Airflow's LoggingMixin) reaches the try's log."""

from __future__ import annotations

import logging
import textwrap
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from statewright.sdk import DAG, BaseHook, BaseOperator
from statewright.sdk.loader import load_dag_file
from statewright.sdk.logging_mixin import LoggingMixin
from statewright.sdk.sensors import BaseSensorOperator


class _Hook(BaseHook):
    def __init__(self) -> None:  # does not call BaseHook.__init__: .log still works
        pass

    def fetch(self) -> int:
        self.log.info("hook fetched %s rows", 3)
        return 3


class _Greet(BaseOperator):
    def execute(self, context: Any) -> int:
        self.log.info("hello %s from %s", "world", context["ti"].task_id)
        self.log.warning("careful")
        return _Hook().fetch()


class _Ready(BaseSensorOperator):
    def poke(self, context: Any) -> bool:
        self.log.info("poking %s", self.task_id)
        return True


def _log_text(folder: Path, task_id: str) -> str:
    files = [p for p in folder.rglob("*") if p.is_file() and task_id in str(p)]
    assert files, f"no log of {task_id} under {folder}: {list(folder.rglob('*'))}"
    return "".join(p.read_text() for p in files)


def test_logger_names_follow_airflow() -> None:
    op = _Greet(task_id="a")
    assert isinstance(op.log, logging.Logger)
    assert op.log.name == f"statewright.task.operators.{__name__}._Greet"
    assert op.log is op.log
    assert _Greet(task_id="b", logger_name="mine").log.name == "statewright.task.operators.mine"
    assert _Hook().log.name == f"statewright.task.hooks.{__name__}._Hook"
    assert BaseHook(logger_name="db").log.name == "statewright.task.hooks.db"

    class Plain(LoggingMixin):
        pass

    assert Plain().log.name == f"{__name__}.Plain"


def test_self_log_lines_appear_in_the_task_log(tmp_path: Path) -> None:
    with DAG("logging_dag", schedule=None) as dag:
        _Greet(task_id="greet") >> _Ready(task_id="ready", poke_interval=1, timeout=10)
    result = dag.test(logs_folder=tmp_path)
    assert result.states == {"greet": "success", "ready": "success"}
    greet = _log_text(tmp_path, "greet")
    assert "hello world from greet" in greet
    assert "WARNING" in greet and "careful" in greet
    assert "hook fetched 3 rows" in greet
    assert f"statewright.task.operators.{__name__}._Greet" in greet
    assert "poking ready" in _log_text(tmp_path, "ready")
    assert "hello world" not in _log_text(tmp_path, "ready")


def test_airflow_logging_mixin_in_an_unedited_file(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    path = tmp_path / "dags" / "custom_log.py"
    path.parent.mkdir()
    path.write_text(textwrap.dedent('''
        from airflow.sdk import DAG, BaseOperator
        from airflow.utils.log.logging_mixin import LoggingMixin

        class Helper(LoggingMixin):
            def run(self):
                self.log.info("helper ran")

        class Custom(BaseOperator):
            def execute(self, context):
                Helper().run()
                self.log.info("custom value %s", 42)

        with DAG("custom_log", schedule=None):
            Custom(task_id="custom")
    '''))
    loaded = load_dag_file(path)
    assert loaded.error is None, loaded.error
    logs = tmp_path / "logs"
    result = loaded.dags["custom_log"].test(logs_folder=logs,
                                            logical_date=datetime(2025, 1, 1, tzinfo=UTC))
    assert result.states == {"custom": "success"}
    text = _log_text(logs, "custom")
    assert "custom value 42" in text and "helper ran" in text
