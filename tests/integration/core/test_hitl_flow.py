"""Tasks awaiting input end to end (scheduler + in-process worker, injected clock), on SQLite
and PostgreSQL: the request recorded, no slot held, the response resuming the try, the
timeout taking the defaults or failing, bad responses refused with nothing written."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from tests.hitl_helpers import drive

from statewright.core.transitions import Actor, Person
from statewright.db.repositories import hitl as hitl_repo
from statewright.db.repositories import pools as pool_repo
from statewright.db.repositories import transitions_log
from statewright.db.tables import task_instance
from statewright.sdk import DAG, Param, task
from statewright.sdk.operators.hitl import (
    ApprovalOperator,
    HITLBranchOperator,
    HITLEntryOperator,
    HITLOperator,
)
from statewright.services import hitl as hitl_service

ALICE = hitl_service.Responder("alice", ("operator",), Person(Actor.API, "alice"))


def _respond(d: Any, task_id: str, options: list[str], params: dict[str, Any] | None = None,
             who: hitl_service.Responder = ALICE) -> Any:
    return hitl_service.respond(d.engine, d.dag.dag_id, d.run_id, task_id,
                                chosen_options=options, params_input=params, responder=who,
                                now=d.clock())


def _row_count(engine: Engine) -> int:
    from statewright.db.tables_hitl import hitl_detail

    with engine.connect() as conn:
        return int(conn.execute(select(func.count()).select_from(hitl_detail)).scalar_one())


def test_a_response_resumes_the_try_and_is_its_result(engine: Engine, tmp_path: Path) -> None:
    with DAG("hitl_choose") as dag:
        ask = HITLOperator(task_id="ask", subject="Pick {{ dag.dag_id }}", body="why",
                           options=["a", "b"])

        @task
        def after(choice: Any) -> Any:
            return choice["chosen_options"]

        after(ask.output)
    d = drive(engine, dag, tmp_path)
    d.settle()
    assert d.states() == {"ask": "awaiting_input", "after": "none"}
    assert d.run_state() == "running"  # waiting for a person is not a deadlock
    with engine.connect() as conn:
        req = hitl_repo.get(conn, d.ti("ask").id)
        assert req.subject == "Pick hitl_choose" and req.options == ["a", "b"]
        # no slot: awaiting input is not counted against a pool
        assert pool_repo.slot_stats(conn)["default_pool"].occupied == 0
    resumed = _respond(d, "ask", ["b"])
    assert resumed.responded_by == "user:alice" and resumed.chosen_options == ["b"]
    assert d.states()["ask"] == "scheduled"
    d.settle()
    assert d.states() == {"ask": "success", "after": "success"}
    assert d.value("after") == ["b"]
    assert d.value("ask")["responded_by_user"] == {"id": "alice", "name": "alice"}
    assert d.ti("ask").try_number == 1  # the resume continues the same try
    with engine.connect() as conn:
        hist = [h for h in transitions_log.for_run(conn, "hitl_choose", d.run_id)
                if h.task_id == "ask"]
    edge = next(h for h in hist if h.from_state == "awaiting_input")
    assert (edge.to_state, edge.actor) == ("scheduled", "user:alice")


def test_a_response_to_a_task_not_awaiting_input_is_409_and_writes_nothing(
        engine: Engine, tmp_path: Path) -> None:
    with DAG("hitl_twice") as dag:
        HITLOperator(task_id="ask", subject="s", options=["a", "b"])
    d = drive(engine, dag, tmp_path)
    d.settle()
    _respond(d, "ask", ["a"])
    with pytest.raises(hitl_service.AlreadyResponded, match="not awaiting input"):
        _respond(d, "ask", ["b"])
    with engine.connect() as conn:
        assert hitl_repo.get(conn, d.ti("ask").id).chosen_options == ["a"]
    d.settle()
    with pytest.raises(hitl_service.NotAwaitingInput):
        _respond(d, "ask", ["b"])


def test_bad_responses_name_the_field_and_write_nothing(engine: Engine, tmp_path: Path) -> None:
    with DAG("hitl_form") as dag:
        HITLEntryOperator(task_id="form", subject="Fill",
                          params={"count": Param(1, type="integer", minimum=1),
                                  "name": Param("x", type="string")})
    d = drive(engine, dag, tmp_path)
    d.settle()
    with pytest.raises(hitl_service.InvalidResponse) as bad:
        _respond(d, "form", ["OK"], {"count": "three"})
    assert bad.value.problems[0][0] == "count"
    with pytest.raises(hitl_service.InvalidResponse, match="chosen_options"):
        _respond(d, "form", ["nope"])
    with pytest.raises(hitl_service.InvalidResponse, match="'extra'"):
        _respond(d, "form", ["OK"], {"extra": 1})
    with engine.connect() as conn:
        assert hitl_repo.get(conn, d.ti("form").id).responded_at is None
    assert d.states() == {"form": "awaiting_input"}
    _respond(d, "form", ["OK"], {"count": 3})
    d.settle()
    assert d.value("form")["params_input"] == {"count": 3, "name": "x"}


def test_only_the_named_respondents_may_respond(engine: Engine, tmp_path: Path) -> None:
    with DAG("hitl_who") as dag:
        ApprovalOperator(task_id="approve", subject="ok?",
                         assigned_users=[{"id": "bob", "name": "bob"}, "admin"])
    d = drive(engine, dag, tmp_path)
    d.settle()
    with pytest.raises(hitl_service.NotAllowed, match="'alice' may not respond"):
        _respond(d, "approve", ["Approve"])
    assert d.states() == {"approve": "awaiting_input"}
    admin = hitl_service.Responder("carol", ("admin",), Person(Actor.API, "carol"))
    _respond(d, "approve", ["Approve"], who=admin)
    d.settle()
    assert d.states() == {"approve": "success"}


def test_two_responses_at_once_exactly_one_wins(engine: Engine, tmp_path: Path) -> None:
    with DAG("hitl_race") as dag:
        HITLOperator(task_id="ask", subject="s", options=["a", "b"])
    d = drive(engine, dag, tmp_path)
    d.settle()
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def one(option: str) -> None:
        barrier.wait()
        try:
            _respond(d, "ask", [option])
            outcomes.append("won")
        except hitl_service.NotAwaitingInput:
            outcomes.append("409")

    threads = [threading.Thread(target=one, args=(o,)) for o in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["409", "won"]
    with engine.connect() as conn:
        hist = [h for h in transitions_log.for_run(conn, "hitl_race", d.run_id)
                if h.from_state == "awaiting_input"]
    assert len(hist) == 1


def test_the_timeout_takes_the_defaults(engine: Engine, tmp_path: Path) -> None:
    with DAG("hitl_default") as dag:
        HITLOperator(task_id="ask", subject="s", options=["a", "b"], defaults="b",
                     response_timeout=timedelta(minutes=5))
    d = drive(engine, dag, tmp_path)
    d.settle()
    d.clock.advance(minutes=4)
    d.settle()
    assert d.states() == {"ask": "awaiting_input"}
    d.clock.advance(minutes=2)
    d.settle()
    assert d.states() == {"ask": "success"}
    assert d.value("ask")["chosen_options"] == ["b"] and d.value("ask")["timedout"] is True
    with engine.connect() as conn:
        row = hitl_repo.get(conn, d.ti("ask").id)
    assert row.timed_out and row.responded_by is None


def test_the_timeout_without_defaults_fails_the_try(engine: Engine, tmp_path: Path) -> None:
    with DAG("hitl_no_default") as dag:
        HITLOperator(task_id="ask", subject="s", options=["a"],
                     response_timeout=timedelta(seconds=30))
    d = drive(engine, dag, tmp_path)
    d.settle()
    d.clock.advance(seconds=31)
    d.settle()
    assert d.states() == {"ask": "failed"}
    assert "HITLTimeoutError" in (d.ti("ask").state_message or "")
    assert d.run_state() == "failed"


def test_reject_skips_downstream_and_a_branch_follows_the_choice(
        engine: Engine, tmp_path: Path) -> None:
    with DAG("hitl_gate") as dag:
        gate = ApprovalOperator(task_id="gate", subject="go?")
        pick = HITLBranchOperator(task_id="pick", subject="which?", options=["one", "two"],
                                  options_mapping={"one": "t1"}, trigger_rule="all_done")

        @task
        def t1() -> int:
            return 1

        @task
        def two() -> int:
            return 2

        after_gate = t1.override(task_id="after_gate")()
        gate >> after_gate
        gate >> pick >> [t1(), two()]
    d = drive(engine, dag, tmp_path)
    d.settle()
    _respond(d, "gate", ["Reject"])
    d.settle()
    states = d.states()
    assert states["gate"] == "success" and states["after_gate"] == "skipped"
    assert states["pick"] == "skipped"  # direct downstream of a rejection


def test_a_branch_follows_the_mapped_choice(engine: Engine, tmp_path: Path) -> None:
    with DAG("hitl_branch") as dag:
        pick = HITLBranchOperator(task_id="pick", subject="which?", options=["one", "two"],
                                  options_mapping={"one": "t1"})

        @task
        def t1() -> int:
            return 1

        @task
        def two() -> int:
            return 2

        pick >> [t1(), two()]
    d = drive(engine, dag, tmp_path)
    d.settle()
    _respond(d, "pick", ["one"])
    d.settle()
    assert d.states() == {"pick": "success", "t1": "success", "two": "skipped"}


def test_clearing_a_task_awaiting_input_asks_again(engine: Engine, tmp_path: Path) -> None:
    from statewright.services.controls import clear_task_instances

    with DAG("hitl_clear") as dag:
        HITLOperator(task_id="ask", subject="s", options=["a"])
    d = drive(engine, dag, tmp_path)
    d.settle()
    clear_task_instances(engine, d.run_id, dag_id="hitl_clear", task_regexes=["^ask$"],
                         actor=Person(Actor.USER, "bob"), now=d.clock())
    with engine.connect() as conn:
        assert conn.execute(select(task_instance.c.next_method)).scalar_one() is None
    d.settle()
    assert d.states() == {"ask": "awaiting_input"}
    assert d.ti("ask").try_number == 2
    assert _row_count(engine) == 1  # the new try's request replaced the old one


def test_pause_for_input_returns_the_validated_model(engine: Engine, tmp_path: Path) -> None:
    from pydantic import BaseModel, Field

    from statewright.sdk import pause_for_input

    class Shipment(BaseModel):
        carrier: str
        boxes: int = Field(default=1, ge=1, description="How many boxes")

    calls: list[str] = []

    with DAG("hitl_pause") as dag:
        @task
        def ship() -> dict[str, Any]:
            calls.append("ran")
            got = pause_for_input(Shipment, subject="Shipping details")
            assert isinstance(got, Shipment)
            return {"carrier": got.carrier, "boxes": got.boxes}

        ship()
    d = drive(engine, dag, tmp_path)
    d.settle()
    assert d.states() == {"ship": "awaiting_input"}
    with engine.connect() as conn:
        req = hitl_repo.get(conn, d.ti("ship").id)
    assert req.subject == "Shipping details"
    assert set(req.params) == {"carrier", "boxes"}
    with pytest.raises(hitl_service.InvalidResponse) as bad:
        _respond(d, "ship", ["Submit"], {"carrier": "post", "boxes": 0})
    assert bad.value.problems[0][0] == "boxes"
    with pytest.raises(hitl_service.InvalidResponse, match="'carrier': a value is required"):
        _respond(d, "ship", ["Submit"], {})
    _respond(d, "ship", ["Submit"], {"carrier": "post", "boxes": 3})
    d.settle()
    assert d.states() == {"ship": "success"}
    assert d.value("ship") == {"carrier": "post", "boxes": 3}
    assert len(calls) == 2 and d.ti("ship").try_number == 1  # ran again, in the same try


def test_dag_test_takes_the_defaults_at_the_timeout_and_names_tasks_left_waiting(
        engine: Engine) -> None:
    with DAG("hitl_dag_test") as dag:
        HITLOperator(task_id="ask", subject="s", options=["a", "b"], defaults=["a"],
                     response_timeout=timedelta(milliseconds=200))
    res = dag.test(engine=engine)
    assert res.states == {"ask": "success"}
    assert res.ti("ask").return_value["chosen_options"] == ["a"]
    with DAG("hitl_dag_test_stuck") as stuck:
        HITLOperator(task_id="ask", subject="s", options=["a"])
    with pytest.raises(RuntimeError, match="ask await\\(s\\) a person's input"):
        stuck.test(engine=engine)


def test_cancelling_the_run_skips_a_task_awaiting_input(engine: Engine, tmp_path: Path) -> None:
    from statewright.services.controls import cancel_run

    with DAG("hitl_cancel") as dag:
        HITLOperator(task_id="ask", subject="s", options=["a"])
    d = drive(engine, dag, tmp_path)
    d.settle()
    cancel_run(engine, d.run_id, dag_id="hitl_cancel", actor=Person(Actor.USER, "bob"),
               now=d.clock())
    assert d.states() == {"ask": "skipped"} and d.run_state() == "cancelled"
    with pytest.raises(hitl_service.NotAwaitingInput):
        _respond(d, "ask", ["a"])
