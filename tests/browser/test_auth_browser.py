"""The web UI's login in Chromium, controls per role, and values from DAG files, confs and logs
rendered as text: <script> and <img onerror> in each, and nothing runs."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import httpx
from playwright.sync_api import expect
from ui_harness import UiServer, add_user, sign_in

from statewright.core.clock import utcnow
from statewright.db.engine import transaction
from statewright.db.repositories import dags as dag_repo
from statewright.sdk import DAG, PythonOperator

SCRIPT = "<script>window.__xss = 'script'</script>"
IMG = "<img src=x onerror=\"window.__xss = 'img'\">"
SVG_ID = "<svg onload=window.__xss=1>"  # an id with no slash, so it can be in a URL path
IMG_ID = "<img src=x onerror=window.__xss=2>"


def test_log_in_see_who_and_log_out(browser: Any, ui_server: UiServer) -> None:
    add_user(ui_server.engine, "olga", "operator")
    context = browser.new_context()
    page = context.new_page()
    page.goto(ui_server.url + "/import-errors")
    assert page.url.startswith(ui_server.url + "/login?next=")
    page.fill("#login-username", "olga")
    page.fill("#login-password", "wrong-password")
    page.click("#login-submit")
    assert page.inner_text("#login-error") == "Wrong username or password."
    page.fill("#login-password", "password-olga")
    page.click("#login-submit")
    page.wait_for_url(ui_server.url + "/import-errors")
    assert page.inner_text("#user-name") == "olga" and page.inner_text("#user-role") == "operator"
    cookie = next(c for c in context.cookies() if c["name"] == "statewright_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
    assert page.evaluate("document.cookie") == ""  # not readable by scripts
    page.click("#logout")
    page.wait_for_url(ui_server.url + "/login")
    page.goto(ui_server.url + "/")
    assert "/login" in page.url
    context.close()


def test_a_viewer_is_offered_no_controls(browser: Any, ui_server: UiServer) -> None:
    add_user(ui_server.engine, "vera", "viewer")
    context = browser.new_context()
    sign_in(context, ui_server, "vera")
    page = context.new_page()
    page.goto(ui_server.url + "/")
    page.locator("#dag-rows tr[data-dag-id='orders']").wait_for()
    assert not page.locator("button[data-trigger='orders']").is_visible()
    page.goto(f"{ui_server.url}/dags/orders/runs/{quote(ui_server.failed_run_id, safe='')}")
    page.locator("#tis tbody tr").first.wait_for()
    assert not page.locator("#run-actions").is_visible()
    assert page.inner_text("#user-role") == "viewer"
    context.close()


def _explode() -> None:
    print(f"log line {SCRIPT}")
    print(f"log line {IMG}")
    raise ValueError(f"bad value {IMG}")


def _hostile_dag(engine: Any, logs_folder: Any) -> str:
    """A DAG whose description, docs and params carry HTML, with a task that logs it; stored
    once more under ids that carry HTML (as a DAG file of another tool could have them)."""
    with DAG("hostile", description=SCRIPT, doc_md=IMG, params={"p": IMG}) as dag:
        PythonOperator(task_id="explode", python_callable=_explode, doc_md=SCRIPT)
    run = dag.test(engine=engine, logs_folder=logs_folder, conf={"note": SCRIPT, "html": IMG,
                                        "breakout": "</script><script>window.__xss=4</script>"})
    serialized = dag.serialize()
    serialized["dag_id"] = IMG_ID
    serialized["tasks"][0]["task_id"] = SVG_ID
    with transaction(engine) as conn:
        dag_repo.upsert_dag(conn, serialized, now=utcnow())
    return run.run_id


def test_html_from_dags_confs_and_logs_is_text(browser: Any, ui_server: UiServer) -> None:
    run_id = _hostile_dag(ui_server.engine, ui_server.logs_folder)
    httpx.post(f"{ui_server.url}/api/v1/dags/{quote(IMG_ID, safe='')}/dagRuns",
               json={"dag_run_id": "r_html", "conf": {"note": SCRIPT}},
               headers=ui_server.headers).raise_for_status()
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    sign_in(context, ui_server, "admin")
    page = context.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    run_q = quote(run_id, safe="")
    pages = ["/", "/dags/hostile", f"/dags/hostile/runs/{run_q}",
             f"/dags/hostile/runs/{run_q}/tasks/explode",
             f"/dags/{quote(IMG_ID, safe='')}", f"/dags/{quote(IMG_ID, safe='')}/runs/r_html",
             "/event-logs"]
    for path in pages:
        page.goto(ui_server.url + path)
        page.wait_for_load_state("networkidle")
        assert page.evaluate("window.__xss") is None, path
        assert page.locator("img[src='x'], svg[onload]").count() == 0, path
    page.goto(f"{ui_server.url}/dags/hostile/runs/{run_q}/tasks/explode")
    log = page.locator("#panel-log")
    log.wait_for()
    # A locator assertion, not wait_for_function: a string predicate that has to be polled
    # is evaluated with eval(), which the page's Content-Security-Policy forbids.
    expect(log).not_to_contain_text("Loading")
    assert SCRIPT in log.inner_text() and IMG in log.inner_text()
    assert IMG in page.inner_text("#panel-message")
    page.goto(ui_server.url + "/dags/hostile")
    assert SCRIPT in page.inner_text("main")  # the description, as text
    page.goto(ui_server.url + "/")
    page.locator(f"#dag-rows tr[data-dag-id='{IMG_ID}']").wait_for()
    assert IMG_ID in page.inner_text("#dag-rows")
    assert page.evaluate("window.__xss") is None and dialogs == []
    context.close()
