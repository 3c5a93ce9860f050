"""New DAGs start paused, as in Airflow (``[core] dags_are_paused_at_creation``, default on).

The suite turns the default off (tests/conftest.py); these tests turn it back on.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine
from tests.integration.scheduling.conftest import Harness
from tests.integration.scheduling.test_dag_processor_files import dag_file, dags, processor, write

import statewright.config
from statewright.cli.app import App
from statewright.cli.main import _start_examples
from statewright.config import Settings, load_settings
from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import audit
from statewright.db.repositories import dags as dag_repo
from statewright.db.repositories import runs as run_repo
from statewright.services.dag_processor.sync import PAUSED_AT_CREATION


@pytest.fixture
def airflow_default(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped default (the suite runs with it off)."""
    monkeypatch.setattr(statewright.config, "DAGS_ARE_PAUSED_AT_CREATION",
                        Settings.dags_are_paused_at_creation)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "dags").mkdir()
    return tmp_path / "dags"


def test_the_default_is_airflows_and_both_variables_set_it(airflow_default: None) -> None:
    assert Settings.dags_are_paused_at_creation is True
    assert load_settings({}).dags_are_paused_at_creation is True
    airflow = "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION"
    ours = "STATEWRIGHT_DAGS_ARE_PAUSED_AT_CREATION"
    assert load_settings({airflow: "False"}).dags_are_paused_at_creation is False
    assert load_settings({ours: "false"}).dags_are_paused_at_creation is False
    assert load_settings({ours: "true", airflow: "false"}).dags_are_paused_at_creation is True
    with pytest.raises(Exception, match=airflow):
        load_settings({airflow: "maybe"})


def _audit(engine: Engine, dag_id: str) -> list[Any]:
    with engine.connect() as conn:
        rows, _ = audit.page(conn, limit=50, offset=0, dag_id=dag_id)
    return rows


def test_a_new_dag_starts_paused_with_an_audit_row_and_its_own_flag_wins(
        engine: Engine, folder: Path, airflow_default: None) -> None:
    write(folder, "p.py", dag_file("fresh") + dag_file(
        "eager", extra=", is_paused_upon_creation=False") + dag_file(
        "shy", extra=", is_paused_upon_creation=True"))
    paused = load_settings({}).dags_are_paused_at_creation
    processor(engine, folder, paused_at_creation=paused).run_once()
    rows = dags(engine)
    assert rows["fresh"].is_paused and rows["shy"].is_paused
    assert not rows["eager"].is_paused
    fresh = _audit(engine, "fresh")
    assert [(r.action, r.username) for r in fresh] == [(PAUSED_AT_CREATION, "dag_processor")]
    assert "dags_are_paused_at_creation" in fresh[0].detail
    assert "is_paused_upon_creation" in _audit(engine, "shy")[0].detail
    assert _audit(engine, "eager") == []


def test_an_existing_dag_is_not_paused_again_when_parsed_again(
        engine: Engine, folder: Path, airflow_default: None) -> None:
    path = write(folder, "p.py", dag_file("kept"))
    proc = processor(engine, folder, paused_at_creation=True)
    proc.run_once()
    with transaction(engine) as conn:
        dag_repo.set_paused(conn, "kept", False)  # a person unpauses it
    write(folder, path.name, dag_file("kept", tasks=("a", "b")))  # a changed file
    proc.run_once()
    assert not dags(engine)["kept"].is_paused
    assert len(_audit(engine, "kept")) == 1  # only the creation's row


def test_the_setting_off_creates_dags_unpaused_without_audit_rows(
        engine: Engine, folder: Path) -> None:
    write(folder, "p.py", dag_file("free"))
    processor(engine, folder, paused_at_creation=False).run_once()
    assert not dags(engine)["free"].is_paused
    assert _audit(engine, "free") == []


def test_standalone_examples_are_unpaused_and_triggered_once(
        engine: Engine, tmp_path: Path, airflow_default: None) -> None:
    url = engine.url.render_as_string(hide_password=False)
    app = App(load_settings({"STATEWRIGHT_HOME": str(tmp_path / "home"),
                             "STATEWRIGHT_DATABASE_URL": url,
                             "STATEWRIGHT_DAGS_FOLDER": str(tmp_path / "none")}))
    assert app.settings.dags_are_paused_at_creation
    stop = threading.Event()
    stop.set()  # the background processor thread ends at once
    try:
        _start_examples(app, stop).join(timeout=60)
        rows = dags(engine)
        assert rows and all(not r.is_paused for r in rows.values())
        with engine.connect() as conn:
            assert all(len(run_repo.list_runs(conn, d, 5)) == 1 for d in rows)
        harness = Harness(engine, utcnow())  # a scheduler whose executor ends tries at once
        harness.loop()
        assert harness.runs("example_hello")[0].state == "success"
        actions = [r.action for r in _audit(engine, "example_hello")]
        assert sorted(actions) == ["paused_at_creation", "unpause"]
        with transaction(engine) as conn:  # a user pauses it; a restart keeps that
            dag_repo.set_paused(conn, "example_hello", True)
        _start_examples(app, stop).join(timeout=60)
        assert dags(engine)["example_hello"].is_paused
    finally:
        app.close()


def test_dag_test_runs_a_dag_whatever_the_setting(airflow_default: None,
                                                  tmp_path: Path) -> None:
    from statewright.sdk.loader import load_dag_file

    path = write(tmp_path, "t.py", dag_file("tested", tasks=("a", "b")))
    result = load_dag_file(path).dags["tested"].test()
    assert result.state.value == "success"


@pytest.mark.parametrize("env, args, expected", [
    ({}, [], False),
    ({"STATEWRIGHT_LOAD_EXAMPLES": "true"}, [], True),
    ({"STATEWRIGHT_LOAD_EXAMPLES": "true"}, ["--no-examples"], False),
    ({}, ["--examples"], True),
])
def test_standalone_loads_the_examples_per_flag_else_setting(
        cli_run: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str],
        args: list[str], expected: bool) -> None:
    started: dict[str, Any] = {}
    monkeypatch.setattr("statewright.cli.commands.users.initial_admin", lambda app: None)
    monkeypatch.setattr("statewright.cli.main._run_services",
                        lambda app, **kw: started.update(kw))
    out = cli_run({"STATEWRIGHT_HOME": str(tmp_path / "home"), **env}, "standalone", *args)
    assert out.exit_code == 0, out.output
    assert started["examples"] is expected
