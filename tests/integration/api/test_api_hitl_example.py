"""Airflow's ``example_hitl_operator.py`` runs to the end with its responses given through the
REST API: once with its imports changed to statewright's, once unedited through the
compatibility layer; on SQLite and PostgreSQL. The responder is recorded as the actor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from tests.airflow_examples import UNEDITED, airflow_example
from tests.hitl_helpers import drive

from statewright.db.repositories import transitions_log
from statewright.sdk.loader import load_dag_file

FIRST = ("wait_for_input", "wait_for_option", "wait_for_multiple_options",
         "wait_for_default_option")


def _url(d: Any, task_id: str) -> str:
    return f"/api/v1/dags/{d.dag.dag_id}/dagRuns/{d.run_id}/taskInstances/{task_id}/hitlDetails"


def _load(path: Path) -> Any:
    loaded = load_dag_file(path)
    assert loaded.error is None, loaded.error
    return loaded.dags["example_hitl_operator"]


@pytest.mark.parametrize("how", ["imports_changed", "unedited"])
def test_example_hitl_operator_completes_with_responses_through_the_api(
        how: str, engine: Engine, client: TestClient, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    if how == "unedited":
        monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
        dag = _load(UNEDITED / "standard" / "example_hitl_operator.py")
    else:
        dag = _load(airflow_example("standard/example_hitl_operator.py"))
    d = drive(engine, dag, tmp_path)
    d.settle()
    assert {t: d.states()[t] for t in FIRST} == dict.fromkeys(FIRST, "awaiting_input")
    pending = client.get("/api/v1/hitlDetails", params={"response_received": False}).json()
    assert sorted(h["task_instance"]["task_id"] for h in pending["hitl_details"]) == sorted(FIRST)

    d.clock.advance(seconds=2)  # wait_for_default_option's response_timeout is 1 second
    d.settle()
    assert d.states()["wait_for_default_option"] == "success"

    answers = {"wait_for_input": {"chosen_options": ["OK"],
                                  "params_input": {"information": "all there"}},
               "wait_for_option": {"chosen_options": ["option 2"]},
               "wait_for_multiple_options": {"chosen_options": ["option 4", "option 6"]}}
    for task_id, body in answers.items():
        r = client.patch(_url(d, task_id), json=body)
        assert r.status_code == 200, r.text
        assert r.json()["responded_by"] == "user:admin"
    d.settle()
    assert d.states()["valid_input_and_options"] == "awaiting_input"
    detail = client.get(_url(d, "valid_input_and_options")).json()
    assert "Input: all there" in detail["body"]  # rendered from the responses above
    assert "['option 4', 'option 6']" in detail["body"]
    assert "['option 7']" in detail["body"]  # the default taken at the timeout
    assert client.patch(_url(d, "valid_input_and_options"),
                        json={"chosen_options": ["Approve"]}).status_code == 200
    d.settle()
    assert client.post(_url(d, "choose_a_branch_to_run"),
                       json={"chosen_options": ["task_2"]}).status_code == 200
    d.settle()
    assert d.run_state() == "success"
    states = d.states()
    assert (states["task_1"], states["task_2"], states["task_3"]) == (
        "skipped", "success", "skipped")
    with engine.connect() as conn:
        actors = {h.task_id: h.actor for h in transitions_log.for_run(conn, d.dag.dag_id,
                                                                      d.run_id)
                  if h.from_state == "awaiting_input"}
    assert actors["wait_for_option"] == "user:admin"
    assert actors["wait_for_default_option"] == "scheduler"
