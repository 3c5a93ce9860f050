"""The task panel's XCom box shows values readably: a Decimal as its number with its type, a
DataFrame as a table of its first rows."""

from __future__ import annotations

from decimal import Decimal
from typing import Any
from urllib.parse import quote

from ui_harness import UiServer


def _store(ti: Any) -> Decimal:
    import pandas as pd

    ti.xcom_push(key="frame", value=pd.DataFrame({"sku": ["a", "b", "c"], "qty": [1, 2, 3]}))
    return Decimal("12.50")


def test_the_task_panel_shows_a_decimal_and_a_dataframe(page: Any, ui_server: UiServer) -> None:
    from statewright.sdk import DAG, PythonOperator

    with DAG("xcom_readable_ui") as dag:
        PythonOperator(task_id="store", python_callable=_store)
    run = dag.test(engine=ui_server.engine)
    assert run.state.value == "success"
    page.goto(f"{ui_server.url}/dags/xcom_readable_ui/runs/{quote(run.run_id, safe='')}")
    page.locator("#tis tbody tr[data-task-id='store']").click()
    page.locator("#panel-xcoms").wait_for()
    total = page.inner_text("#panel-xcoms tr[data-key='return_value']")
    assert "12.5" in total and "decimal.Decimal" in total and "__type" not in total
    table = page.locator("#panel-xcoms tr[data-key='frame'] .xcom-table table")
    assert table.locator("thead th").all_inner_texts() == ["sku", "qty"]
    assert table.locator("tbody tr").count() == 3
    assert table.locator("tbody tr").nth(1).locator("td").all_inner_texts() == ['"b"', "2"]
    assert "pandas.core.frame.DataFrame" in page.inner_text("#panel-xcoms tr[data-key='frame']")
