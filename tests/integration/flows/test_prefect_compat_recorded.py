"""Blocks, variables, artifacts, events, concurrency limits and the client, recorded in the
database through the flow recorder (the test database: SQLite, or PostgreSQL in CI)."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select

from statewright.db.engine import transaction
from statewright.db.repositories import pools as pool_repo
from statewright.db.tables import xcom
from statewright.db.tables_auth import audit_log
from statewright.db.tables_secrets import variable
from statewright.flows import flow, get_client, task
from statewright.flows.artifacts import (
    create_link_artifact,
    create_markdown_artifact,
    create_table_artifact,
)
from statewright.flows.blocks import Secret
from statewright.flows.concurrency.sync import concurrency
from statewright.flows.context import flow_run_ctx
from statewright.flows.deployments import run_deployment
from statewright.flows.events import emit_event
from statewright.flows.variables import Variable
from statewright.services.flows.recorder import DbBackend


def _run_pk() -> int:
    ctx = flow_run_ctx.get()
    assert ctx is not None
    return ctx.flow_run.id


def test_a_secret_block_is_stored_encrypted_and_loads_in_another_flow_run(
        engine: Engine, recorded: DbBackend) -> None:
    @flow
    def save() -> None:
        Secret(value="hunter2-at-rest").save("warehouse-password", overwrite=True)

    @flow
    def load() -> str:
        return str(Secret.load("warehouse-password").get())

    save()
    assert load() == "hunter2-at-rest"
    with engine.connect() as conn:
        row = conn.execute(select(variable.c.val).where(
            variable.c.key == "prefect-block/secret/warehouse-password")).one()
    assert "hunter2" not in row.val  # encrypted at rest, as every variable


def test_variables_are_statewright_variables(engine: Engine, recorded: DbBackend) -> None:
    @flow
    def f() -> object:
        Variable.set("batch-size", 50, overwrite=True)
        return Variable.get("batch-size")

    assert f() == 50
    with engine.connect() as conn:
        assert conn.execute(select(variable.c.key).where(
            variable.c.key == "batch-size")).one()


def test_artifacts_are_xcom_rows_of_their_task_run_or_flow_run(
        engine: Engine, recorded: DbBackend) -> None:
    @task
    def publish() -> None:
        create_table_artifact([{"sku": "a", "qty": 2}], key="inventory")
        create_link_artifact("https://example.org/r", link_text="report")

    @flow
    def reporting() -> int:
        publish()
        create_markdown_artifact("**done**", key="summary")
        return _run_pk()

    run_pk = reporting()
    with engine.connect() as conn:
        rows = conn.execute(select(xcom.c.task_id, xcom.c.key, xcom.c.value)
                            .where(xcom.c.dag_run_id == run_pk).order_by(xcom.c.id)).all()
    got = [(r.task_id, r.key, r.value["type"], r.value["data"]) for r in rows
           if r.key.startswith("artifact:")]
    assert got[0] == ("publish-0", "artifact:inventory", "table", [{"sku": "a", "qty": 2}])
    assert got[1][0] == "publish-0" and got[1][2:] == ("link", "[report](https://example.org/r)")
    assert got[2] == ("__flow_run__", "artifact:summary", "markdown", "**done**")
    with get_client(sync_client=True) as client:
        assert [a["key"] for a in client.read_artifacts(run_pk)] == [
            "inventory", None, "summary"]


def test_an_emitted_event_is_an_audit_log_row(engine: Engine, recorded: DbBackend) -> None:
    @flow(name="emitter")
    def f() -> None:
        emit_event("orders.loaded", resource={"prefect.resource.id": "orders.table"},
                   payload={"rows": 3})

    f()
    with engine.connect() as conn:
        row = conn.execute(select(audit_log).where(audit_log.c.action == "flow.event")).one()
    assert (row.path, row.dag_id, row.target) == ("orders.loaded", "emitter", "orders.table")
    assert '"rows": 3' in row.detail
    with pytest.raises(ValueError, match=r"prefect\.resource\.id"):
        emit_event("x", resource={})


def test_a_concurrency_limit_is_a_pool_and_the_client_reads_flow_runs(
        engine: Engine, recorded: DbBackend) -> None:
    with transaction(engine) as conn:
        pool_repo.set_pool(conn, "warehouse", 2)

    @flow
    def limited() -> int:
        from statewright.flows.concurrency import slots

        with concurrency("warehouse", occupy=2):
            assert slots("warehouse") == 2
        assert slots("warehouse") == 0
        return _run_pk()

    run_pk = limited()
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(run_pk)
        assert run.state is not None and run.state.name == "Completed"
        assert run.state.is_completed() and run.flow_name == "limited"
        assert run_pk in [r.id for r in client.read_flow_runs(limit=10)]


def test_a_concurrency_lease_of_another_process_holds_the_slot_until_released_or_expired(
        engine: Engine, recorded: DbBackend) -> None:
    from sqlalchemy import update

    from statewright.db.tables_flows import concurrency_lease

    with transaction(engine) as conn:
        pool_repo.set_pool(conn, "warehouse", 1)
    other = recorded.request("extra", ("lease_take", (["warehouse"], 1, "other-host:1", 60)))
    assert other is not None  # another process holds the only slot
    assert recorded.request("extra", ("lease_take", (["warehouse"], 1, "x:2", 60))) is None
    with pytest.raises(TimeoutError):
        with concurrency("warehouse", timeout_seconds=0.05):
            pass  # pragma: no cover - the slot is taken
    recorded.request("extra", ("lease_release", other))
    with concurrency("warehouse", timeout_seconds=5):
        with engine.connect() as conn:
            (held,) = conn.execute(select(concurrency_lease)).all()
        assert held.holder.endswith(f":{__import__('os').getpid()}")
    other = recorded.request("extra", ("lease_take", (["warehouse"], 1, "dead:3", 60)))
    with transaction(engine) as conn:  # its process died: the lease runs out
        conn.execute(update(concurrency_lease).values(
            expires_at=held.expires_at.replace(year=2000)))
    with concurrency("warehouse", timeout_seconds=5):
        pass
    with engine.connect() as conn:
        assert conn.execute(select(concurrency_lease)).all() == []


def test_run_deployment_of_an_unknown_deployment_says_so(recorded: DbBackend) -> None:
    @flow
    def parent() -> None:
        run_deployment("no-such-flow/nightly")

    state = parent(return_state=True)
    assert state.is_failed()
    with pytest.raises(LookupError, match="Deployment 'no-such-flow/nightly' not found"):
        state.result()


@flow
def nightly_report(greeting: str = "hi") -> str:
    return greeting * 2


def test_run_deployment_creates_a_run_of_the_deployment_and_waits_for_it(
        engine: Engine, recorded: DbBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from tests.integration.flows.conftest import runs

    from statewright.flows.serving import ADOPT_ENV, deployment_of

    recorded.register_deployment(deployment_of(
        nightly_report, name="nightly", cron=None, interval=3600,
        parameters={"greeting": "hi"}, description=None, tags=None, paused=False))
    first = run_deployment("nightly-report/nightly", parameters={"greeting": "yo"}, timeout=0)
    assert first.state is not None and not first.state.is_final()
    (queued,) = runs(engine)
    assert (queued.id, queued.state, queued.conf) == (first.id, "queued", {"greeting": "yo"})

    waited: list[object] = []
    waiter = threading.Thread(target=lambda: waited.append(run_deployment(
        "nightly-report/nightly", poll_interval=0.02)))
    waiter.start()
    second = threading.Event()
    while not second.wait(0.01):  # the waiter's run exists once its request is answered
        if len(runs(engine)) == 2:
            second.set()
    created = runs(engine)[1]
    monkeypatch.setenv(ADOPT_ENV, str(created.id))  # what the serving process's child does
    assert nightly_report(**created.conf) == "hihi"
    waiter.join(10)
    (run,) = waited
    assert run.id == created.id and run.state.name == "Completed"  # type: ignore[attr-defined]
