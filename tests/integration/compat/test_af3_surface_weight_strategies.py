"""Priority weight strategies named by their dotted path (Airflow 3.3): a plugin registers the
class, the plugins folder is on sys.path (a plugin imports its package by its own name), and a
DAG file's ``weight_rule="my_plugins.strategies.MyStrategy"`` resolves to it; ``WeightRule``
names the built-in rules. The scheduler's weight of a new task instance comes from the class."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from statewright.sdk import WeightRule, plugins
from statewright.sdk.loader import load_dag_file
from statewright.services.dag_view import DagView

STRATEGY = '''
from airflow.task.priority_strategy import PriorityWeightStrategy

class MyStrategy(PriorityWeightStrategy):
    def get_weight(self, ti):
        return 42
'''
PLUGIN = '''
from airflow.plugins_manager import AirflowPlugin
from my_plugins.strategies import MyStrategy

class MyPlugin(AirflowPlugin):
    name = "my_plugin"
    priority_weight_strategies = [MyStrategy]
'''
DAG_FILE = '''
from datetime import datetime
from airflow.sdk import DAG, WeightRule
from airflow.providers.standard.operators.empty import EmptyOperator
from airflow.utils.weight_rule import WeightRule as OldWeightRule

with DAG("weights", schedule=None, start_date=datetime(2025, 1, 1)):
    EmptyOperator(task_id="custom", weight_rule="my_plugins.strategies.MyStrategy",
                  priority_weight=5)
    EmptyOperator(task_id="absolute", weight_rule=WeightRule.ABSOLUTE, priority_weight=7)
    EmptyOperator(task_id="upstream", weight_rule=OldWeightRule.UPSTREAM)
'''


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "plugins" / "my_plugins").mkdir(parents=True)
    (tmp_path / "plugins" / "my_plugins" / "__init__.py").write_text("")
    (tmp_path / "plugins" / "my_plugins" / "strategies.py").write_text(STRATEGY)
    (tmp_path / "plugins" / "register.py").write_text(PLUGIN)
    (tmp_path / "dags").mkdir()
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    monkeypatch.setenv("STATEWRIGHT_PLUGINS_FOLDER", str(tmp_path / "plugins"))
    monkeypatch.setattr(sys, "path", list(sys.path))
    plugins.reset_plugins()
    try:
        yield tmp_path
    finally:
        plugins.reset_plugins()
        for name in [m for m in sys.modules if m == "my_plugins" or m.startswith("my_plugins.")]:
            del sys.modules[name]


def test_a_dotted_path_names_a_plugins_strategy(folders: Path) -> None:
    path = folders / "dags" / "weights.py"
    path.write_text(textwrap.dedent(DAG_FILE))
    loaded = load_dag_file(path)
    assert loaded.error is None, loaded.error
    assert plugins.plugin_errors() == {}
    dag = loaded.dags["weights"]
    assert dag.task_dict["custom"].weight_rule == "my_plugins.strategies.MyStrategy"
    assert dag.task_dict["absolute"].weight_rule == "absolute"
    rows = {r["task_id"]: r["priority_weight"] for r in DagView(dag.serialize()).task_rows()}
    assert rows == {"custom": 42, "absolute": 7, "upstream": 1}


def test_an_unregistered_path_is_an_import_error(folders: Path) -> None:
    path = folders / "dags" / "bad.py"
    path.write_text(DAG_FILE.replace("my_plugins.strategies.MyStrategy",
                                     "my_plugins.strategies.Nowhere"))
    loaded = load_dag_file(path)
    assert loaded.error is not None and "my_plugins.strategies.Nowhere" in loaded.error


def test_weight_rule_enum() -> None:
    assert WeightRule.DOWNSTREAM == "downstream" and str(WeightRule.UPSTREAM) == "upstream"
    assert WeightRule.is_valid("absolute") and not WeightRule.is_valid("sideways")
    assert WeightRule.all_weight_rules() == {"downstream", "upstream", "absolute"}
