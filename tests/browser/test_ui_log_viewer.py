"""The log viewer on the task-instance page, read from what is drawn: numbered lines, the level
filter, search with highlight and next/previous, wrap, download of the whole file, and follow
(a running try's new lines appear, each byte fetched once: every read starts where the last
one ended)."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, quote, urlparse

import httpx
from playwright.sync_api import expect
from sqlalchemy import update
from ui_harness import UiServer

from statewright.db.engine import transaction
from statewright.db.tables import task_instance


def _page_url(ui_server: UiServer) -> str:
    run = quote(ui_server.failed_run_id, safe="")
    return f"{ui_server.url}/dags/orders/runs/{run}/tasks/check"


def _shown(page: Any) -> list[dict[str, Any]]:
    return page.eval_on_selector_all(
        "#panel-log .log-line", "rs => rs.filter(r => !r.hidden).map(r => ({n: +r.dataset.line,"
        " level: +r.dataset.level, ln: r.querySelector('.ln').textContent,"
        " text: r.querySelector('.lt').textContent}))")


def test_levels_search_wrap_and_download(page: Any, ui_server: UiServer) -> None:
    page.goto(_page_url(ui_server))
    page.locator("#panel-log .log-line").first.wait_for()
    lines = _shown(page)
    assert [x["n"] for x in lines] == list(range(1, len(lines) + 1))
    assert all(x["ln"] == str(x["n"]) for x in lines)
    assert any("checking the amount column" in x["text"] for x in lines)
    starting = next(x for x in lines if "starting orders.check" in x["text"])
    assert starting["level"] == 20
    tb = [x for x in lines if x["text"].startswith("ValueError")]
    assert tb and all(x["level"] == 40 for x in tb)  # a traceback keeps its ERROR level

    page.select_option("#log-level", "40")
    errors = _shown(page)
    assert errors and len(errors) < len(lines) and all(x["level"] >= 40 for x in errors)
    assert not any("starting orders.check" in x["text"] for x in errors)
    page.select_option("#log-level", "0")
    assert len(_shown(page)) == len(lines)

    hits = sum(x["text"].lower().count("amount") for x in lines)
    assert hits >= 2
    page.fill("#log-search", "AMOUNT")
    expect(page.locator("#log-matches")).to_have_text(f"1 of {hits}")
    assert page.locator("#panel-log mark.hit").count() == hits
    assert page.locator("#panel-log mark.hit").first.text_content() == "amount"
    page.click("#log-next")
    expect(page.locator("#log-matches")).to_have_text(f"2 of {hits}")
    assert page.locator("#panel-log mark.hit").nth(1).get_attribute("class") == "hit current"
    page.click("#log-prev")
    page.click("#log-prev")  # before the first: the last
    expect(page.locator("#log-matches")).to_have_text(f"{hits} of {hits}")
    page.fill("#log-search", "no such text at all")
    expect(page.locator("#log-matches")).to_have_text("no match")

    white = "document.querySelector('#panel-log .lt').parentNode && " \
            "getComputedStyle(document.querySelector('#panel-log .lt')).whiteSpace"
    assert page.evaluate(white) == "pre-wrap"
    page.uncheck("#log-wrap")
    assert page.evaluate(white) == "pre"

    with page.expect_download() as info:
        page.click("#log-download")
    download = info.value
    assert re.fullmatch(r"orders__.+__check__try2\.log", download.suggested_filename)
    body = download.path().read_text(encoding="utf-8")
    assert body.count("\n") == len(lines) and "checking the amount column" in body


def _offset(url: str) -> int:
    return int(parse_qs(urlparse(url).query)["offset"][0])


def test_follow_shows_new_lines_of_a_running_try_once(page: Any, ui_server: UiServer) -> None:
    log = httpx.get(f"{ui_server.url}/api/v1/dags/orders/dagRuns/"
                    f"{quote(ui_server.failed_run_id, safe='')}/taskInstances/check/logs/2",
                    headers=ui_server.headers).json()
    assert ui_server.logs_folder is not None
    path = ui_server.logs_folder / log["path"]
    where = (task_instance.c.dag_id == "orders") & (task_instance.c.task_id == "check") & (
        task_instance.c.run_id == ui_server.failed_run_id)
    with transaction(ui_server.engine) as conn:
        conn.execute(update(task_instance).where(where).values(state="running"))
    offsets: list[int] = []
    page.on("request", lambda r: offsets.append(_offset(r.url))
            if "/logs/2/chunk" in r.url else None)
    try:
        page.goto(_page_url(ui_server))
        page.locator("#panel-log .log-line").first.wait_for()
        expect(page.locator("#log-follow")).to_be_checked()  # a running try is followed
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("[now] WARNING statewright.task: a new line while it runs\n")
        new = page.locator("#panel-log .log-line.lvl-warning", has_text="a new line while it runs")
        new.wait_for(timeout=30_000)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write("[now] INFO statewright.task: and another\n")
        page.locator("#panel-log .log-line", has_text="and another").wait_for(timeout=30_000)
        assert new.count() == 1
    finally:
        with transaction(ui_server.engine) as conn:
            conn.execute(update(task_instance).where(where).values(state="failed"))
    assert offsets[0] == 0 and offsets[1] == log["size"]
    assert offsets == sorted(offsets) and len(set(offsets[:3])) == len(offsets[:3])
