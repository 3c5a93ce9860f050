"""``SmtpNotifier``: a notifier (a task or DAG callback) that sends an email (Airflow's smtp
provider). Its ``to``, ``from_email``, ``subject``, ``html_content`` and ``files`` are rendered
with the callback's context."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from statewright.providers.smtp.hooks.smtp import SmtpHook
from statewright.sdk.notifier import BaseNotifier

__all__ = ["SmtpNotifier", "send_smtp_notification"]

DEFAULT_SUBJECT = "Airflow alert: {{ ti.dag_id }}.{{ ti.task_id }} {{ ti.run_id }}"
DEFAULT_HTML = ("Try {{ ti.try_number }} of task {{ ti.task_id }} in DAG {{ ti.dag_id }} "
                "(run {{ ti.run_id }}).<br>{{ exception if exception else '' }}")


class SmtpNotifier(BaseNotifier):
    template_fields: Sequence[str] = ("from_email", "to", "subject", "html_content", "files",
                                      "cc", "bcc")

    def __init__(self, *, to: str | Iterable[str], from_email: str | None = None,
                 subject: str | None = None, html_content: str | None = None,
                 files: list[str] | None = None, cc: str | Iterable[str] | None = None,
                 bcc: str | Iterable[str] | None = None, mime_subtype: str = "mixed",
                 mime_charset: str = "utf-8", custom_headers: dict[str, Any] | None = None,
                 smtp_conn_id: str = "smtp_default", auth_type: str = "basic") -> None:
        super().__init__()
        self.to = to
        self.from_email = from_email
        self.subject = subject or DEFAULT_SUBJECT
        self.html_content = html_content or DEFAULT_HTML
        self.files = files
        self.cc = cc
        self.bcc = bcc
        self.mime_subtype = mime_subtype
        self.mime_charset = mime_charset
        self.custom_headers = custom_headers
        self.smtp_conn_id = smtp_conn_id
        self.auth_type = auth_type

    def notify(self, context: Any) -> None:
        with SmtpHook(smtp_conn_id=self.smtp_conn_id, auth_type=self.auth_type) as hook:
            hook.send_email_smtp(to=self.to, subject=self.subject,
                                 html_content=self.html_content, from_email=self.from_email,
                                 files=self.files, cc=self.cc, bcc=self.bcc,
                                 mime_subtype=self.mime_subtype,
                                 mime_charset=self.mime_charset,
                                 custom_headers=self.custom_headers)


send_smtp_notification = SmtpNotifier
