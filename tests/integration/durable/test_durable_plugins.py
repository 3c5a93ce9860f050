"""Plugins: a broken plugin file is an import error naming it (the others load, the DAG
processor goes on); a listener that raises is logged and the state change stands; macros,
timetables, priority-weight strategies and entry points register (SQLite and PostgreSQL)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from tests.noop import NoopOperator

from statewright.core.errors import DagDefinitionError
from statewright.core.schedules import Timetable
from statewright.db.tables import import_error
from statewright.sdk import DAG, macros, plugins, task
from statewright.services import listeners
from statewright.services.dag_processor.processor import DagProcessor

GOOD = '''
import sys

from statewright.sdk.plugins import PriorityWeightStrategy, StatewrightPlugin

heard = []

def on_task_instance_success(previous_state, task_instance):
    heard.append(("success", previous_state, task_instance.task_id))

def on_task_instance_failed(previous_state, task_instance, error):
    heard.append(("failed", task_instance.task_id, error))

def on_dag_run_success(dag_run, msg):
    heard.append(("run", dag_run.run_id, dag_run.state))

class Loud:
    @staticmethod
    def on_task_instance_running(previous_state, task_instance):
        raise RuntimeError("listener broke")

def shout(text):
    return text.upper()

class Ten(PriorityWeightStrategy):
    def get_weight(self, ti):
        return 10

class GoodPlugin(StatewrightPlugin):
    name = "good"
    listeners = [Loud, sys.modules[__name__]]
    macros = [shout]
    priority_weight_strategies = [Ten]
'''


@pytest.fixture
def plugin_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "good.py").write_text(GOOD)
    (folder / "broken.py").write_text("raise ValueError('broken at import')\n")
    monkeypatch.setenv("STATEWRIGHT_PLUGINS_FOLDER", str(folder))
    plugins.reset_plugins()
    yield folder
    plugins.reset_plugins()


def test_a_broken_plugin_is_an_error_naming_its_file_and_the_others_load(
        plugin_folder: Path, engine: Engine, tmp_path: Path) -> None:
    plugins.load_plugins()
    errors = plugins.plugin_errors()
    assert list(errors) == [str(plugin_folder / "broken.py")]
    assert "broken at import" in errors[str(plugin_folder / "broken.py")]
    assert macros.good.shout("a") == "A"  # type: ignore[attr-defined]
    dags = tmp_path / "dags"
    dags.mkdir()
    DagProcessor(engine, dags).run_once()
    with engine.connect() as conn:
        rows = conn.execute(select(import_error.c.filename, import_error.c.stacktrace)).all()
    assert [(r.filename, "broken at import" in r.stacktrace) for r in rows] == [
        (str(plugin_folder / "broken.py"), True)]


def test_a_listener_that_raises_is_logged_and_the_state_change_stands(
        plugin_folder: Path, engine: Engine, caplog: pytest.LogCaptureFixture) -> None:
    with DAG("pl_listen", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
        NoopOperator(task_id="a", weight_rule="statewright_plugins.good.Ten")
    with caplog.at_level(logging.ERROR, logger="statewright.services.listeners"):
        run = dag.test(engine=engine)
    assert run.state.value == "success" and run.states == {"a": "success"}
    assert any("listener broke" in (r.exc_text or "") or "raised" in r.getMessage()
               for r in caplog.records)
    import statewright_plugins.good as good  # type: ignore[import-not-found]

    assert ("success", "running", "a") in good.heard
    assert ("run", run.run_id, "success") in good.heard


def test_weight_rule_names_only_strategies_a_plugin_registers(plugin_folder: Path) -> None:
    with pytest.raises(DagDefinitionError, match=r"no\.such\.Strategy"):
        NoopOperator(task_id="x", weight_rule="no.such.Strategy")
    with pytest.raises(DagDefinitionError, match="weight_rule"):
        NoopOperator(task_id="y", weight_rule="sideways")


def test_plugin_timetables_and_entry_points_register(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("STATEWRIGHT_PLUGINS_FOLDER", str(tmp_path / "none"))
    plugins.reset_plugins()

    class Every(Timetable):  # no type_name: registered by its class path
        pass

    class TimetablePlugin(plugins.StatewrightPlugin):
        name = "tt"
        timetables = [Every]

    class _EntryPoint:
        name, value = "tt", "pkg:TimetablePlugin"

        def load(self) -> type[plugins.StatewrightPlugin]:
            return TimetablePlugin

    seen_groups: list[str] = []

    def entry_points(group: str) -> list[_EntryPoint]:
        seen_groups.append(group)
        return [_EntryPoint()] if group == "statewright.plugins" else []

    monkeypatch.setattr("importlib.metadata.entry_points", entry_points)
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    try:
        plugins.load_plugins()
        assert seen_groups == ["statewright.plugins", "airflow.plugins"]
        key = f"{Every.__module__}.{Every.__qualname__}"
        assert Timetable._registry[key] is Every
    finally:
        Timetable._registry.pop(f"{Every.__module__}.{Every.__qualname__}", None)
        plugins.reset_plugins()


def test_hook_calls_follow_airflows_listener_api(engine: Engine) -> None:
    from statewright.db.transition import ENTITY_RUN, ENTITY_TI, TransitionEvent

    now = datetime(2024, 1, 1).astimezone()
    ti = dict(entity=ENTITY_TI, entity_id=1, dag_id="d", run_id="r", task_id="t", name="x",
              try_number=1, actor="worker", at=now, map_index=-1)
    events = [TransitionEvent(frm="queued", to="running", **ti),  # type: ignore[arg-type]
              TransitionEvent(frm="running", to="failed", **ti),  # type: ignore[arg-type]
              TransitionEvent(frm="none", to="skipped", **ti),  # type: ignore[arg-type]
              TransitionEvent(ENTITY_RUN, 2, "d", "r", None, "queued", "running", "Running",
                              None, "scheduler", now)]
    calls = listeners.hook_calls(events)
    assert [c[0] for c in calls] == ["on_task_instance_running", "on_task_instance_failed",
                                     "on_dag_run_running"]
    assert calls[1][1]["previous_state"] == "running" and "error" in calls[1][1]
    assert calls[2][1]["dag_run"].run_id == "r"


def test_plugin_macros_reach_templates(plugin_folder: Path, engine: Engine) -> None:
    seen = []
    with DAG("pl_macro", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
        @task
        def t(x: str) -> None:
            seen.append(x)
        t("{{ macros.good.shout('hi') }}")
    plugins.load_plugins()
    dag.test(engine=engine)
    assert seen == ["HI"]


def test_a_failed_listener_hears_the_error(plugin_folder: Path, engine: Engine) -> None:
    with DAG("pl_fail", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
        @task
        def boom() -> None:
            raise ValueError("disk full")
        boom()
    assert dag.test(engine=engine).state.value == "failed"
    import statewright_plugins.good as good  # type: ignore[import-not-found]

    (failed,) = [h for h in good.heard if h[0] == "failed"]
    assert failed[1] == "boom" and "disk full" in failed[2]


def test_listeners_stop_reading_through_an_engine_its_owner_closed(tmp_path: Path) -> None:
    """A closed engine is forgotten (it would reopen connections nobody closes), and
    ``dag.test()`` gives back the engine listeners read through before it."""
    from statewright.db.engine import make_engine
    from statewright.services import listeners

    first = make_engine(f"sqlite:///{tmp_path / 'a.db'}")
    second = make_engine(f"sqlite:///{tmp_path / 'b.db'}")
    try:
        listeners.install(first)
        with listeners.installed(second):
            assert listeners._engine is second
        assert listeners._engine is first
        listeners.forget(first)
        assert listeners._engine is None
    finally:
        first.dispose()
        second.dispose()
