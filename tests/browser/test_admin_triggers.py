"""The Triggers page in a real browser: triggerers with heartbeat, load and capacity; triggers
with their triggerer and their arguments (sensitive values masked, all set as text); and the
Import errors page's expandable tracebacks."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from ui_harness import UiServer

from statewright.config import load_settings
from statewright.core.clock import utcnow
from statewright.crypto import encrypt_json
from statewright.db.engine import transaction
from statewright.db.repositories import import_errors
from statewright.db.repositories import jobs as job_repo
from statewright.db.repositories import triggers as trigger_repo
from statewright.services.worker.deferral import load_cipher


def test_triggerers_and_their_triggers(page: Any, ui_server: UiServer) -> None:
    assert ui_server.logs_folder is not None
    cipher = load_cipher(load_settings({"STATEWRIGHT_HOME": str(ui_server.logs_folder.parent)}))
    now = utcnow()
    kwargs = encrypt_json(cipher, {"url": "<b>https://x.test</b>", "password": "pw-9731"})
    with transaction(ui_server.engine) as conn:
        alive = job_repo.register(conn, job_type="triggerer", hostname="trig-host", pid=41,
                                  capacity=4, now=now)
        job_repo.register(conn, job_type="triggerer", hostname="gone-host", pid=42,
                          capacity=9, now=now - timedelta(hours=2))
        [held, _] = trigger_repo.insert_many(conn, [("pkg.mod.WaitTrigger", kwargs),
                                                    ("pkg.mod.Other", "garbled")], now)
        conn.execute(trigger_repo.trigger.update().where(trigger_repo.tr.id == held)
                     .values(triggerer_id=alive))

    page.goto(ui_server.url + "/triggers")
    job = page.locator(f"#jobs tr[data-id='{alive}']")
    job.wait_for()
    assert "trig-host" in job.inner_text() and "alive" in job.inner_text()
    assert job.locator(".op-bar .seg").count() == 1  # 1 held of 4
    assert "dead" in page.locator("#jobs tbody").inner_text()

    row = page.locator(f"#triggers tr[data-id='{held}']")
    assert "WaitTrigger" in row.inner_text() and "trig-host" in row.inner_text()
    code = row.locator("code.kwargs")
    assert "<b>https://x.test</b>" in code.inner_text() and '"password": "***"' in code.inner_text()
    assert "pw-9731" not in page.content()
    assert "cannot be decrypted" in page.locator("#triggers tbody").inner_text()
    assert "none (orphaned)" in row.inner_text()
    assert "1 trigger(s) not claimed" in page.locator("#unassigned").inner_text()

    job.locator("button.held").click()  # what this triggerer holds
    page.locator("#trigger-filter").filter(has_text=f"triggerer #{alive} holds").wait_for()
    assert page.locator("#triggers tbody tr").count() == 1
    page.locator("#trigger-filter button").click()
    assert page.locator("#triggers tbody tr").count() == 2


def test_import_errors_expand_to_their_traceback_as_text(page: Any, ui_server: UiServer) -> None:
    with transaction(ui_server.engine) as conn:
        for i in range(4):
            trace = f"Traceback:\n  <img src=x onerror=alert({i})>\nSyntaxError"
            import_errors.record(conn, f"/dags/broken_{i}.py", trace, utcnow())
    page.goto(ui_server.url + "/import-errors")
    last = page.locator("li.error-card", has_text="broken_3.py")
    trace = last.locator("pre.trace")
    assert not trace.is_visible()  # the first three are open, the rest closed
    last.locator("summary").click()
    trace.wait_for(state="visible")
    assert "<img src=x onerror=alert(3)>" in trace.inner_text()
    assert page.locator("pre.trace img").count() == 0
