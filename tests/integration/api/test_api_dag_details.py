"""GET /dags/{dag_id}/details (doc_md sanitized, params, schedule in words and next runs,
default_args, owners), the operator's user-facing name, and a deferred task's trigger."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from api_helpers import run_url
from cryptography.fernet import MultiFernet
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from tests.noop import NoopOperator

from statewright.core.clock import utcnow
from statewright.crypto import generate_key, load_fernet
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.sdk import DAG, BaseOperator, Param, task
from statewright.sdk.triggers import DateTimeTrigger
from statewright.services.dag_view import DagViewCache
from statewright.services.executors.inprocess import InProcessExecutor
from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig
from statewright.services.worker import deferral

HOSTILE_DOC = """# Orders

Loads **orders** every weekday.

| col | meaning |
| --- | --- |
| id | the key |

<script>window.__xss = 1</script>
<img src=x onerror="window.__xss = 2">
[click](javascript:alert(1)) and [docs](https://example.org/docs)
"""


def docs_dag() -> DAG:
    with DAG("documented", schedule="0 6 * * 1-5", start_date=datetime(2026, 1, 1, tzinfo=UTC),
             doc_md=HOSTILE_DOC, tags=["sales"],
             params={"limit": Param(3, type="integer", description="rows to load"),
                     "region": Param("eu", type="string", enum=["eu", "us"],
                                     description="where")},
             default_args={"owner": "ana", "retries": 2,
                           "retry_delay": timedelta(minutes=5)}) as dag:
        @task
        def load() -> int:
            return 1

        load()
    return dag


def _store(engine: Engine, dag: DAG) -> None:
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, dag.serialize(), now=utcnow())
        dag_repo.set_paused(conn, dag.dag_id, False)


def _tags(html: str) -> list[tuple[str, list[str]]]:
    """Every element of ``html`` with its attribute names."""
    from html.parser import HTMLParser

    found: list[tuple[str, list[str]]] = []

    class Collect(HTMLParser):
        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            found.append((tag, [name for name, _ in attrs]))

    Collect().feed(html)
    return found


def test_details_render_doc_md_sanitized_and_explain_the_schedule(
        client: TestClient, engine: Engine) -> None:
    _store(engine, docs_dag())
    res = client.get("/api/v1/dags/documented/details")
    assert res.status_code == 200
    d = res.json()
    html = d["doc_md_html"]
    assert "<h1>Orders</h1>" in html and "<strong>orders</strong>" in html
    assert "<table>" in html and "<td>id</td>" in html
    tags = _tags(html)
    assert {t for t, _ in tags} <= {"h1", "p", "strong", "table", "thead", "tbody", "tr", "th",
                                    "td", "a"}
    assert not [a for _, attrs in tags for a in attrs if a.startswith("on")]
    assert "&lt;script&gt;window.__xss = 1&lt;/script&gt;" in html  # shown as text
    assert 'href="javascript' not in html
    assert 'href="https://example.org/docs" rel="noopener noreferrer"' in html
    assert d["doc_md"] == HOSTILE_DOC  # the source is given as it is, for clients to render
    assert d["timetable_description"] == "At 06:00, on weekdays (Monday to Friday) (UTC)"
    runs = [datetime.fromisoformat(t) for t in d["next_dagruns"]]
    assert len(runs) == 5 and runs == sorted(runs)
    assert all(r.weekday() < 5 and (r.hour, r.minute) == (6, 0) for r in runs)
    assert d["owners"] == ["ana"]
    assert d["default_args"] == {"owner": "ana", "retries": 2, "retry_delay": "0:05:00"}
    params = {p["name"]: p for p in d["param_details"]}
    assert params["limit"]["value"] == 3 and params["limit"]["description"] == "rows to load"
    assert params["limit"]["schema"] == {"type": "integer"}
    assert params["region"]["schema"]["enum"] == ["eu", "us"]
    assert d["tasks"][0]["operator"] == "_PythonDecoratedOperator"
    assert d["tasks"][0]["operator_name"] == "@task"
    grid = client.get("/api/v1/dags/documented/grid").json()
    assert grid["rows"][0]["operator_name"] == "@task"


def test_details_of_an_unknown_dag_is_404(client: TestClient) -> None:
    res = client.get("/api/v1/dags/nope/details")
    assert res.status_code == 404 and "No DAG with id 'nope'" in res.json()["detail"]


def test_a_dag_without_schedule_says_so(client: TestClient, engine: Engine) -> None:
    with DAG("manual_only") as dag:
        NoopOperator(task_id="t")
    _store(engine, dag)
    d = client.get("/api/v1/dags/manual_only/details").json()
    assert d["timetable_description"] == "Never on its own: runs only when triggered"
    assert d["next_dagruns"] == [] and d["owners"] == [] and d["default_args"] == {}
    assert d["doc_md_html"] is None and d["param_details"] == []


class WaitsTwoHours(BaseOperator):
    def execute(self, context: Any) -> Any:
        self.defer(trigger=DateTimeTrigger(datetime(2030, 1, 2, 3, 4, tzinfo=UTC)),
                   method_name="done", timeout=timedelta(hours=2))

    def done(self, context: Any, event: Any = None) -> Any:
        return event


@pytest.fixture
def cipher() -> Iterator[MultiFernet]:
    key = load_fernet(generate_key())
    deferral.install_cipher(key)
    yield key
    deferral.install_cipher(None)


def test_a_deferred_task_instance_describes_its_trigger(
        client: TestClient, engine: Engine, cipher: MultiFernet) -> None:
    with DAG("waiting") as dag:
        WaitsTwoHours(task_id="wait")
    _store(engine, dag)
    run_id = client.post("/api/v1/dags/waiting/dagRuns", json={}).json()["dag_run_id"]
    views = DagViewCache()
    scheduler = Scheduler(engine, InProcessExecutor(engine, dags={"waiting": dag}, views=views),
                          views=views, config=SchedulerConfig(idle_seconds=0.0))
    url = run_url("waiting", run_id) + "/taskInstances/wait"
    deadline = time.monotonic() + 20
    while client.get(url).json()["state"] != "deferred":
        assert time.monotonic() < deadline, client.get(url).json()
        scheduler.run_once()
    ti = client.get(url).json()
    trigger = ti["trigger"]
    assert trigger["classname"] == "DateTimeTrigger"
    assert trigger["classpath"].endswith("DateTimeTrigger")
    assert trigger["waits_for"] == "the time to reach 2030-01-02T03:04:00+00:00"
    assert trigger["next_method"] == "done" and trigger["triggerer_id"] is None
    timeout = datetime.fromisoformat(trigger["timeout"])
    started = datetime.fromisoformat(ti["start_date"])
    assert timedelta(hours=2) <= timeout - started < timedelta(hours=2, minutes=1)
    assert ti["operator_name"] == "WaitsTwoHours"
