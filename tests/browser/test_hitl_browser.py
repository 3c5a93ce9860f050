"""The "Required actions" page in Chromium: the form built from a request's params, its
options as buttons, values shown as text, a refused response's reason shown, a response
resuming the task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.hitl_helpers import drive
from ui_harness import UiServer

from statewright.db.repositories import hitl as hitl_repo
from statewright.sdk import DAG, HITLOperator, Param


def test_required_actions_page(page: Any, ui_server: UiServer, tmp_path: Path) -> None:
    with DAG("hitl_ui") as dag:
        HITLOperator(task_id="review", subject="Review <b>the numbers</b>",
                     body="Totals:\n<i>42</i>", options=["Accept", "Send back"],
                     params={"count": Param(2, type="integer", minimum=1,
                                            description="<b>how many</b>"),
                             "region": Param("eu", enum=["eu", "us"])})
        HITLOperator(task_id="tags", subject="Pick tags", options=["a", "b", "c"],
                     multiple=True)
    d = drive(ui_server.engine, dag, tmp_path)
    d.settle()
    page.goto(ui_server.url + "/required-actions")
    card = page.locator("article.hitl-card[data-task='review']")
    card.wait_for()
    assert "Review <b>the numbers</b>" in card.inner_text()  # text, not HTML
    assert card.locator("b").count() == 0 and card.locator("i").count() == 0
    assert "<b>how many</b>" in card.inner_text()
    assert card.locator("select option").all_inner_texts() == ["eu", "us"]
    assert card.locator("input[type=number]").input_value() == "2"
    # a value the schema refuses: the API's reason is shown, nothing is written
    card.locator("input[type=number]").fill("0")
    card.get_by_role("button", name="Accept").click()
    card.locator(".hitl-error").filter(has_text="count").wait_for()
    assert d.states()["review"] == "awaiting_input"
    card.locator("input[type=number]").fill("5")
    card.locator("select").select_option("us")
    card.get_by_role("button", name="Send back").click()
    card.locator(".hitl-done").wait_for()
    with ui_server.engine.connect() as conn:
        row = hitl_repo.get(conn, d.ti("review").id)
    assert row.chosen_options == ["Send back"]
    assert row.params_input == {"count": 5, "region": "us"}
    assert row.responded_by == "user:admin"
    # several options: check boxes and one Respond button
    tags = page.locator("article.hitl-card[data-task='tags']")
    tags.locator("input[value=a]").check()
    tags.locator("input[value=c]").check()
    tags.get_by_role("button", name="Respond").click()
    tags.locator(".hitl-done").wait_for()
    d.settle()
    assert d.states() == {"review": "success", "tags": "success"}
    assert d.value("tags")["chosen_options"] == ["a", "c"]
    page.reload()
    page.get_by_text("Nothing is waiting for a response.").wait_for()
