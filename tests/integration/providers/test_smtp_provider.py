"""SmtpHook, EmailOperator, SmtpNotifier and airflow.utils.email.send_email against a real SMTP
server (servers.smtpd, aiosmtpd)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from servers import SMTP_PASSWORD, SmtpServer, run_airflow_dag

from statewright.core.errors import StatewrightError
from statewright.providers.smtp.hooks.smtp import SmtpHook
from statewright.sdk.email import send_email


@pytest.fixture
def mail(smtpd: SmtpServer, monkeypatch: pytest.MonkeyPatch) -> SmtpServer:
    smtpd.clear()
    monkeypatch.setenv("STATEWRIGHT_CONN_SMTP_DEFAULT",
                       smtpd.uri(login=True, from_email="airflow@example.org"))
    monkeypatch.setenv("STATEWRIGHT_CONN_SMTP_NOFROM", smtpd.uri())
    return smtpd


def test_hook_logs_in_sends_to_cc_and_bcc_with_files_and_logs_no_password(
        mail: SmtpServer, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    report = tmp_path / "report.csv"
    report.write_text("a,b\n")
    caplog.set_level(logging.DEBUG)
    with SmtpHook() as hook:
        hook.send_email_smtp(to="a@example.org; b@example.org", cc=["c@example.org"],
                             bcc="d@example.org", subject="Numbers",
                             html_content="<b>see attached</b>", files=[str(report)],
                             custom_headers={"X-Run": "r1"})
    assert mail.logins == ["mailer"]
    [(sender, recipients, message)] = mail.messages
    assert sender == "airflow@example.org"
    assert recipients == ["a@example.org", "b@example.org", "c@example.org", "d@example.org"]
    assert message["To"] == "a@example.org, b@example.org" and message["CC"] == "c@example.org"
    assert message["Bcc"] is None and message["X-Run"] == "r1"
    assert message["Subject"] == "Numbers"
    parts = message.get_payload()
    assert isinstance(parts, list)
    assert parts[0].get_content_type() == "text/html"
    assert parts[1].get_filename() == "report.csv"
    assert parts[1].get_payload(decode=True) == b"a,b\n"
    assert SMTP_PASSWORD not in caplog.text


def test_a_sender_is_required_and_dryrun_sends_nothing(mail: SmtpServer) -> None:
    with pytest.raises(StatewrightError, match="from_email"):
        send_email("a@example.org", "s", "b", conn_id="smtp_nofrom")
    send_email("a@example.org", "s", "b", conn_id="smtp_nofrom", from_email="me@example.org")
    send_email("a@example.org", "s", "b", dryrun=True)
    assert [m[0] for m in mail.messages] == ["me@example.org"]


def test_a_wrong_password_fails(mail: SmtpServer, monkeypatch: pytest.MonkeyPatch) -> None:
    import smtplib

    monkeypatch.setenv("STATEWRIGHT_CONN_SMTP_BAD",
                       f"smtp://mailer:wrong@127.0.0.1:{mail.port}?disable_ssl=true"
                       "&disable_tls=true&retry_limit=1")
    with pytest.raises(smtplib.SMTPAuthenticationError):
        SmtpHook(smtp_conn_id="smtp_bad").get_conn()


DAG_FILE = '''
from datetime import datetime
from airflow.sdk import DAG, task
from airflow.providers.smtp.operators.smtp import EmailOperator
from airflow.providers.smtp.notifications.smtp import SmtpNotifier
from airflow.utils.email import send_email

with DAG("mail_dag", schedule=None, start_date=datetime(2026, 1, 1)) as dag:
    report = EmailOperator(task_id="report", to="team@example.org",
                           subject="Run {{ run_id }}", html_content="<p>{{ params.n }}</p>",
                           params={"n": 7},
                           on_success_callback=SmtpNotifier(to="ops@example.org",
                                                            subject="{{ ti.task_id }} done"))

    @task
    def in_code():
        send_email(to=["code@example.org"], subject="from code", html_content="hi")

    report >> in_code()
'''


def test_email_operator_notifier_and_send_email_in_an_airflow_dag_file(
        mail: SmtpServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = run_airflow_dag(tmp_path, monkeypatch, DAG_FILE, "mail_dag", run_id="r9")
    assert result.states == {"report": "success", "in_code": "success"}
    got = {m[1][0]: m[2] for m in mail.messages}
    assert got["team@example.org"]["Subject"] == "Run r9"
    assert b"<p>7</p>" in got["team@example.org"].get_payload()[0].get_payload(decode=True)
    assert got["ops@example.org"]["Subject"] == "report done"
    assert got["code@example.org"]["Subject"] == "from code"


def test_testing_an_smtp_connection(smtpd: SmtpServer) -> None:
    from statewright.sdk.connection import Connection
    from statewright.services.secrets.admin import test_connection as check_connection

    assert check_connection(Connection(conn_id="mail", uri=smtpd.uri(login=True))) == (
        True, "Connection successfully tested")
    bad = Connection(conn_id="mail", uri=f"smtp://mailer:{SMTP_PASSWORD}x@127.0.0.1:"
                                         f"{smtpd.port}?disable_ssl=true&disable_tls=true")
    ok, message = check_connection(bad)
    assert not ok and SMTP_PASSWORD not in message
