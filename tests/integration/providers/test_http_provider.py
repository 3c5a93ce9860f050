"""HttpHook, HttpOperator (SimpleHttpOperator) and HttpSensor at Airflow's http provider paths,
against a local HTTP server the tests start."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest
from sql_http_servers import HttpServer, define_connection

from statewright.providers.http.hooks.http import HttpHook, HttpResponseError
from statewright.providers.http.operators.http import HttpOperator, SimpleHttpOperator
from statewright.providers.http.sensors.http import HttpSensor
from statewright.sdk import DAG


def _basic(seen: dict[str, Any]) -> str:
    return base64.b64decode(seen["headers"]["authorization"].split()[1]).decode()


def test_hook_request_shape(http_server: HttpServer, web_conn: str) -> None:
    got = HttpHook(method="GET", http_conn_id=web_conn).run("echo", data={"q": "1"}).json()
    assert (got["method"], got["path"], got["query"]) == ("GET", "/echo", {"q": "1"})
    assert got["headers"]["x-team"] == "data" and "timeout" not in got["headers"]
    assert _basic(got) == "ada:pw-web-provider"
    posted = HttpHook(http_conn_id=web_conn).run("/echo", json={"a": 1},
                                                 headers={"X-Extra": "y"}).json()
    assert (posted["method"], json.loads(posted["body"])) == ("POST", {"a": 1})
    assert posted["headers"]["x-extra"] == "y" and posted["headers"]["x-team"] == "data"
    form = HttpHook(method="PUT", http_conn_id=web_conn).run("echo", data={"k": "v"}).json()
    assert form["body"] == "k=v"


def test_hook_errors_and_requests_names(http_server: HttpServer, web_conn: str) -> None:
    hook = HttpHook(method="GET", http_conn_id=web_conn)
    with pytest.raises(HttpResponseError, match=r"^503:Service Unavailable") as failed:
        hook.run("status/503")
    assert failed.value.status_code == 503
    unchecked = hook.run("status/404", extra_options={"check_response": False})
    assert (unchecked.ok, unchecked.reason, unchecked.status_code) == (False, "Not Found", 404)
    assert hook.run("echo").ok is True
    assert hook.url_from_endpoint("a/b") == f"{http_server.base}/a/b"
    with hook.get_conn() as client:
        assert isinstance(client, httpx.Client)
        assert client.get("echo").json()["headers"]["x-team"] == "data"
    assert hook.test_connection()[0] is True


def test_http_operator_check_filter_and_pagination(http_server: HttpServer,
                                                   web_conn: str) -> None:
    with DAG("http_ops"):
        text = SimpleHttpOperator(task_id="text", http_conn_id=web_conn, endpoint="echo",
                                  method="GET", data={"x": "1"})
        filtered = HttpOperator(task_id="f", http_conn_id=web_conn, endpoint="echo",
                                data=json.dumps({"n": 2}), headers={"Content-Type": "json"},
                                response_filter=lambda r: json.loads(r.json()["body"])["n"],
                                response_check=lambda r: r.ok)
        refused = HttpOperator(task_id="r", http_conn_id=web_conn, endpoint="echo",
                               method="GET", response_check=lambda response: False)
        pages = HttpOperator(
            task_id="p", http_conn_id=web_conn, endpoint="pages", method="GET",
            data={"page": "1"},
            pagination_function=lambda r: ({"data": {"page": str(r.json()["next"])}}
                                           if r.json()["next"] else None),
            response_filter=lambda responses: [i for r in responses for i in r.json()["items"]])
    assert json.loads(text.execute({}))["query"] == {"x": "1"}
    assert filtered.execute({}) == 2
    with pytest.raises(Exception, match="Response check returned False"):
        refused.execute({})
    assert pages.execute({}) == [10, 20, 30]
    assert [s["query"]["page"] for s in http_server.seen[-3:]] == ["1", "2", "3"]


def test_http_sensor_waits_for_the_endpoint(http_server: HttpServer, web_conn: str) -> None:
    with DAG("http_sensor", schedule=None, start_date=datetime(2025, 1, 1, tzinfo=UTC)) as dag:
        HttpSensor(task_id="ready", http_conn_id=web_conn, endpoint="after/ready/2",
                   request_params={"probe": "1"}, poke_interval=0.01, timeout=30,
                   response_check=lambda response: response.json()["ready"])
        HttpSensor(task_id="broken", http_conn_id=web_conn, endpoint="status/500",
                   poke_interval=0.01, timeout=30)
        HttpSensor(task_id="allowed", http_conn_id=web_conn, endpoint="status/503",
                   response_error_codes_allowlist=["503"], poke_interval=0.01, timeout=0.2,
                   soft_fail=True)
    run = dag.test()
    assert run.states == {"ready": "success", "broken": "failed", "allowed": "skipped"}
    assert http_server.counters["ready"] == 3  # two 404s ("not yet"), then the answer
    assert {s["query"].get("probe") for s in http_server.seen if "ready" in s["path"]} == {"1"}
    assert "500:Internal Server Error" in (run.ti("broken").state_message or "")


def test_connection_settings_from_the_extra(http_server: HttpServer,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    conn = define_connection(monkeypatch, "web_lenient", {
        "conn_type": "http", "host": f"http://127.0.0.1:{http_server.port}",
        "extra": {"check_response": False, "allow_redirects": False}})
    response = HttpHook(method="GET", http_conn_id=conn).run("status/500")
    assert response.status_code == 500  # the extra's check_response=False, as in Airflow


def test_deferrable_http_operator_sends_from_the_triggerer(http_server: HttpServer,
                                                          web_conn: str) -> None:
    with DAG("http_deferred", schedule=None, start_date=datetime(2025, 1, 1, tzinfo=UTC)) as dag:
        HttpOperator(task_id="get", http_conn_id=web_conn, endpoint="echo", method="GET",
                     data={"q": "deferred"}, deferrable=True,
                     response_filter=lambda r: [r.json()["query"], _basic(r.json())])
        HttpOperator(task_id="pages", http_conn_id=web_conn, endpoint="pages", method="GET",
                     data={"page": "1"}, deferrable=True,
                     pagination_function=lambda r: ({"data": {"page": str(r.json()["next"])}}
                                                    if r.json()["next"] else None),
                     response_filter=lambda rs: [i for r in rs for i in r.json()["items"]])
        HttpOperator(task_id="gone", http_conn_id=web_conn, endpoint="status/410",
                     method="GET", deferrable=True)
    run = dag.test()
    assert run.states == {"get": "success", "pages": "success", "gone": "failed"}
    assert run.ti("get").return_value == [{"q": "deferred"}, "ada:pw-web-provider"]
    assert run.ti("pages").return_value == [10, 20, 30]
    assert "410:Gone" in (run.ti("gone").state_message or "")
    for task_id in ("get", "pages", "gone"):
        assert "deferred" in [h["to_state"] for h in run.history if h.get("task_id") == task_id]


def test_deferrable_http_sensor_polls_from_the_triggerer(http_server: HttpServer,
                                                        web_conn: str) -> None:
    with DAG("http_sensor_deferred", schedule=None,
             start_date=datetime(2025, 1, 1, tzinfo=UTC)) as dag:
        HttpSensor(task_id="ready", http_conn_id=web_conn, endpoint="after/later/1",
                   request_params={"probe": "2"}, poke_interval=0.01, timeout=30,
                   deferrable=True, response_check=lambda response: response.json()["ready"])
    run = dag.test()
    assert run.states == {"ready": "success"}
    history = [h["to_state"] for h in run.history if h.get("task_id") == "ready"]
    assert "deferred" in history
    later = [s for s in http_server.seen if s["path"] == "/after/later/1"]
    assert len(later) >= 2 and {s["query"].get("probe") for s in later} == {"2"}
    assert all(s["method"] == "GET" and s["body"] == "" for s in later)
