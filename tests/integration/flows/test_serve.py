"""flow.serve(...): the scheduler creates the flow's runs like a DAG's; the serving process
starts each in a process of its own, which adopts the queued run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Engine
from tests.integration.flows.conftest import run_history, runs

from statewright.db.engine import read_snapshot
from statewright.db.repositories import runs as run_repo
from statewright.flows import flow
from statewright.flows.serving import ADOPT_ENV, deployment_of, start_queued_runs
from statewright.services.flows.recorder import DbBackend
from statewright.services.scheduler.dagrun_creation import DagRunCreation


@flow
def nightly(greeting: str = "hi") -> str:
    return greeting * 2


def test_a_served_flow_gets_scheduled_runs_that_its_process_adopts(
        engine: Engine, recorded: DbBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    deployment = deployment_of(nightly, name="nightly-deploy", cron=None, interval=60,
                               parameters={"greeting": "yo"}, description=None, tags=None,
                               paused=False)
    recorded.register_deployment(deployment)
    later = datetime.now(UTC) + timedelta(minutes=2)
    assert DagRunCreation().create_due_runs(engine, later) == 1
    (queued,) = runs(engine)
    assert (queued.dag_id, queued.state, queued.run_type) == ("nightly", "queued", "scheduled")
    with read_snapshot(engine) as conn:  # the scheduler does not start a flow's run itself
        assert run_repo.queued_runs_to_start(conn) == []

    launched: list[tuple[list[str], dict[str, str]]] = []
    assert start_queued_runs(recorded, deployment, lambda cmd, env: launched.append((cmd, env)))
    (cmd, env), = launched
    assert cmd[-2:] == ["statewright.flows.entry", deployment.entrypoint]
    assert env[ADOPT_ENV] == str(queued.id)

    monkeypatch.setenv(ADOPT_ENV, env[ADOPT_ENV])  # what the started process does
    assert nightly(greeting="yo") == "yoyo"
    (run,) = runs(engine)
    assert (run.id, run.state, run.state_name) == (queued.id, "success", "Completed")
    assert [s for s, _n in run_history(engine)] == ["queued", "running", "success"]


def test_serve_refuses_bad_schedules_and_parameters() -> None:
    def make(**kw: Any) -> Any:
        base: dict[str, Any] = {"name": None, "cron": None, "interval": None,
                                "parameters": None, "description": None, "tags": None,
                                "paused": False}
        return deployment_of(nightly, **{**base, **kw})

    with pytest.raises(ValueError, match="not both"):
        make(cron="* * * * *", interval=5)
    with pytest.raises(ValueError, match="positive"):
        make(interval=0)
    with pytest.raises(TypeError, match="nightly"):
        make(parameters={"nope": 1})


def test_a_bad_cron_is_refused_when_registered(engine: Engine, recorded: DbBackend) -> None:
    deployment = deployment_of(nightly, name=None, cron="not a cron", interval=None,
                               parameters=None, description=None, tags=None, paused=False)
    with pytest.raises(Exception, match="cron"):
        recorded.register_deployment(deployment)


def test_serve_registers_the_schedule_and_serves_until_interrupted(
        engine: Engine, recorded: DbBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    from statewright.db.repositories import dags as dag_repo
    from statewright.db.repositories import flows as flow_repo

    def interrupt(_seconds: float) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("statewright.flows.serving.sleep", interrupt)
    nightly.serve("nightly-cron", cron="0 3 * * *", parameters={"greeting": "hey"})
    with read_snapshot(engine) as conn:
        row = dag_repo.get_dag(conn, "nightly")
        deployment = flow_repo.deployment_of(conn, "nightly")
    assert (row.kind, row.schedule_summary, row.is_paused) == ("flow", "0 3 * * *", False)
    assert row.next_dagrun_create_after is not None
    assert (deployment.name, deployment.parameters) == ("nightly-cron", {"greeting": "hey"})
    assert deployment.entrypoint.endswith("test_serve.py:nightly")
