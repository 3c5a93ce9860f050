"""``EmailOperator``: send an email through an SMTP connection (Airflow's smtp provider;
``airflow.operators.email`` in Airflow 2). ``to``, ``subject``, ``html_content`` (a ``.html``
file name is read as a template), ``files`` and ``from_email`` are templated; ``conn_id`` is
``smtp_default`` unless given."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from statewright.providers.smtp.hooks.smtp import SmtpHook
from statewright.sdk.baseoperator import BaseOperator

__all__ = ["EmailOperator"]


class EmailOperator(BaseOperator):
    template_fields: ClassVar[Sequence[str]] = ("to", "from_email", "subject", "html_content",
                                                "files")
    template_fields_renderers: ClassVar[dict[str, str]] = {"html_content": "html"}
    template_ext: ClassVar[Sequence[str]] = (".html",)

    def __init__(self, *, to: list[str] | str, subject: str, html_content: str,
                 from_email: str | None = None, files: list[str] | None = None,
                 cc: list[str] | str | None = None, bcc: list[str] | str | None = None,
                 mime_subtype: str = "mixed", mime_charset: str = "utf-8",
                 conn_id: str = "smtp_default", custom_headers: dict[str, Any] | None = None,
                 auth_type: str = "basic", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.to = to
        self.subject = subject
        self.html_content = html_content
        self.from_email = from_email
        self.files = files or []
        self.cc = cc
        self.bcc = bcc
        self.mime_subtype = mime_subtype
        self.mime_charset = mime_charset
        self.conn_id = conn_id
        self.custom_headers = custom_headers
        self.auth_type = auth_type

    def execute(self, context: Any) -> None:
        with SmtpHook(smtp_conn_id=self.conn_id, auth_type=self.auth_type) as hook:
            hook.send_email_smtp(to=self.to, subject=self.subject,
                                 html_content=self.html_content, from_email=self.from_email,
                                 files=self.files, cc=self.cc, bcc=self.bcc,
                                 mime_subtype=self.mime_subtype,
                                 mime_charset=self.mime_charset,
                                 custom_headers=self.custom_headers)
