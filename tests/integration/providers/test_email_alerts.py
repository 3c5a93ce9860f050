"""Task alert mails (email=, email_on_failure, email_on_retry) sent by the task's process after a
try, through smtp_default, against a real SMTP server (servers.smtpd)."""

from __future__ import annotations

from pathlib import Path

import pytest
from servers import SmtpServer, run_airflow_dag

DAG_FILE = '''
from datetime import datetime, timedelta
from airflow.sdk import DAG, task
from airflow.providers.standard.operators.bash import BashOperator

default_args = {"email": ["oncall@example.org", "lead@example.org"], "retries": 1,
                "retry_delay": timedelta(seconds=0)}

with DAG("alert_dag", schedule=None, start_date=datetime(2026, 1, 1),
         default_args=default_args) as dag:
    @task
    def boom():
        raise ValueError("disk <full>")

    @task(email_on_retry=False)
    def quiet_retry():
        raise ValueError("no retry mail")

    @task(email_on_failure=False, email_on_retry=False)
    def silent():
        raise ValueError("no mail at all")

    @task(email=None)
    def nobody():
        raise ValueError("no addresses")

    ok = BashOperator(task_id="ok", bash_command="true")
    boom(); quiet_retry(); silent(); nobody()
'''


def test_failure_and_retry_mails_as_in_airflow(
        smtpd: SmtpServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    smtpd.clear()
    monkeypatch.setenv("STATEWRIGHT_CONN_SMTP_DEFAULT",
                       smtpd.uri(login=True, from_email="airflow@example.org"))
    result = run_airflow_dag(tmp_path, monkeypatch, DAG_FILE, "alert_dag", run_id="r1")
    assert result.states == {"boom": "failed", "quiet_retry": "failed", "silent": "failed",
                             "nobody": "failed", "ok": "success"}
    subjects = sorted(m[2]["Subject"] for m in smtpd.messages)
    assert subjects == [
        "Airflow alert: <TaskInstance: alert_dag.boom r1 [failed]>",
        "Airflow alert: <TaskInstance: alert_dag.boom r1 [up_for_retry]>",
        "Airflow alert: <TaskInstance: alert_dag.quiet_retry r1 [failed]>",
    ]
    assert all(m[1] == ["oncall@example.org", "lead@example.org"] for m in smtpd.messages)
    failed = next(m[2] for m in smtpd.messages
                  if m[2]["Subject"].endswith("boom r1 [failed]>"))
    body = failed.get_payload()[0].get_payload(decode=True).decode()
    assert "Try 2 out of 2" in body
    assert "ValueError: disk &lt;full&gt;" in body  # escaped in the HTML body


def test_an_unsendable_alert_leaves_the_outcome_and_is_noted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("STATEWRIGHT_CONN_SMTP_DEFAULT", raising=False)
    source = DAG_FILE.replace('"retries": 1', '"retries": 0')
    result = run_airflow_dag(tmp_path, monkeypatch, source, "alert_dag", run_id="r2")
    assert result.states["boom"] == "failed"
    notes = [h.get("message") or "" for h in result.history
             if h.get("task_id") == "boom"]
    assert any("alert mail to ['oncall@example.org', 'lead@example.org'] was not sent" in n
               for n in notes), notes
