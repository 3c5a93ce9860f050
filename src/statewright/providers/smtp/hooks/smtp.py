"""``SmtpHook``: send mail through an ``smtp`` connection (Airflow's smtp provider).

The connection gives ``host``, ``port``, ``login`` and ``password`` (AUTH when a login is set);
its extra: ``from_email`` (the sender when none is given), ``disable_ssl`` (false: the
connection is SMTP over SSL, port 465 by default), ``disable_tls`` (false: STARTTLS after
connecting), ``timeout`` (30 s) and ``retry_limit`` (5 connection attempts). Use it as a
context manager, as in Airflow::

    with SmtpHook(smtp_conn_id="smtp_default") as hook:
        hook.send_email_smtp(to="a@example.org", subject="Hi", html_content="<b>hi</b>")

The password is handed to ``smtplib`` only; it is never logged.
"""

from __future__ import annotations

import os
import re
import smtplib
import ssl
from collections.abc import Iterable
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.utils import formatdate
from typing import Any, ClassVar

from statewright.core.errors import StatewrightError
from statewright.sdk.basehook import BaseHook
from statewright.sdk.connection import Connection

__all__ = ["SmtpHook", "build_mime_message", "get_email_address_list"]

_TRUE = ("true", "1", "yes", "on")


def get_email_address_list(addresses: str | Iterable[str] | None) -> list[str]:
    """``"a@x, b@y; c@z"`` or a list → the addresses (Airflow's rule: commas and semicolons)."""
    if addresses is None:
        return []
    if isinstance(addresses, str):
        return [a.strip() for a in re.split(r"[,;]", addresses) if a.strip()]
    return [a.strip() for a in addresses if a and a.strip()]


def build_mime_message(mail_from: str | None, to: str | Iterable[str], subject: str,
                       html_content: str, files: Iterable[str] | None = None,
                       cc: str | Iterable[str] | None = None,
                       bcc: str | Iterable[str] | None = None, mime_subtype: str = "mixed",
                       mime_charset: str = "utf-8",
                       custom_headers: dict[str, Any] | None = None,
                       ) -> tuple[MIMEMultipart, list[str]]:
    """The message (HTML body, files attached) and every recipient (to, cc and bcc)."""
    to_list = get_email_address_list(to)
    msg = MIMEMultipart(mime_subtype)
    msg["Subject"] = subject
    if mail_from:
        msg["From"] = mail_from
    msg["To"] = ", ".join(to_list)
    recipients = list(to_list)
    if cc:
        cc_list = get_email_address_list(cc)
        msg["CC"] = ", ".join(cc_list)
        recipients += cc_list
    if bcc:
        recipients += get_email_address_list(bcc)  # in the envelope only, not in a header
    msg["Date"] = formatdate(localtime=True)
    msg.attach(MIMEText(html_content, "html", mime_charset))
    for path in files or ():
        name = os.path.basename(path)
        with open(path, "rb") as handle:
            part = MIMEApplication(handle.read(), Name=name)
        part["Content-Disposition"] = f'attachment; filename="{name}"'
        part["Content-ID"] = f"<{name}>"
        msg.attach(part)
    for header, value in (custom_headers or {}).items():
        msg[header] = value
    return msg, recipients


class SmtpHook(BaseHook):
    conn_name_attr: ClassVar[str] = "smtp_conn_id"
    default_conn_name: ClassVar[str] = "smtp_default"
    conn_type: ClassVar[str] = "smtp"
    hook_name: ClassVar[str] = "SMTP"

    def __init__(self, smtp_conn_id: str = "smtp_default", auth_type: str = "basic") -> None:
        super().__init__()
        if auth_type != "basic":
            raise ValueError(f"SmtpHook: auth_type {auth_type!r} is not supported here "
                             "(only 'basic': the connection's login and password)")
        self.smtp_conn_id = smtp_conn_id
        self.auth_type = auth_type
        self.smtp_client: smtplib.SMTP | None = None
        self._conn: Connection | None = None

    @property
    def conn(self) -> Connection:
        if self._conn is None:
            self._conn = self.get_connection(self.smtp_conn_id)
        return self._conn

    def _extra(self, key: str, default: Any = None) -> Any:
        return self.conn.extra_dejson.get(key, default)

    def _flag(self, key: str) -> bool:
        value = self._extra(key, False)
        return value.strip().lower() in _TRUE if isinstance(value, str) else bool(value)

    @property
    def from_email(self) -> str | None:
        return self._extra("from_email")

    @property
    def use_ssl(self) -> bool:
        return not self._flag("disable_ssl")

    @property
    def use_tls(self) -> bool:
        return not self._flag("disable_tls")

    @property
    def timeout(self) -> float:
        return float(self._extra("timeout", 30))

    @property
    def retry_limit(self) -> int:
        return max(1, int(self._extra("retry_limit", 5)))

    def get_conn(self) -> SmtpHook:
        """Connect (and log in when the connection has a login); returns the hook."""
        if self.smtp_client is not None:
            return self
        last: Exception | None = None
        for attempt in range(1, self.retry_limit + 1):
            try:
                self.smtp_client = self._build_client()
                break
            except (smtplib.SMTPServerDisconnected, OSError) as exc:
                last = exc
                self.log.warning("Could not connect to the SMTP server %s:%s (attempt %d of %d)"
                                 ": %s", self.conn.host, self.conn.port, attempt,
                                 self.retry_limit, exc)
        if self.smtp_client is None:
            raise StatewrightError(f"Unable to connect to the SMTP server of connection "
                                   f"{self.smtp_conn_id!r}: {last}")
        if self.conn.login:
            try:
                self.smtp_client.login(self.conn.login, self.conn.password or "")
            except BaseException:
                self.smtp_client.close()
                self.smtp_client = None
                raise
        return self

    def _build_client(self) -> smtplib.SMTP:
        host = self.conn.host or "localhost"
        port = self.conn.port or 0
        client: smtplib.SMTP
        if self.use_ssl:
            client = smtplib.SMTP_SSL(host, port, timeout=self.timeout,
                                      context=ssl.create_default_context())
        else:
            client = smtplib.SMTP(host, port, timeout=self.timeout)
            if self.use_tls:
                client.starttls(context=ssl.create_default_context())
        return client

    def __enter__(self) -> SmtpHook:
        return self.get_conn()

    def __exit__(self, *exc: object) -> None:
        if self.smtp_client is not None:
            try:
                self.smtp_client.quit()
            except smtplib.SMTPException:
                self.smtp_client.close()
            self.smtp_client = None

    def test_connection(self) -> tuple[bool, str]:
        try:
            with self as hook:
                assert hook.smtp_client is not None
                status = hook.smtp_client.noop()[0]
            return (True, "Connection successfully tested") if status == 250 else (
                False, f"Failed to establish connection: NOOP answered {status}")
        except Exception as exc:
            return False, str(exc)

    def send_email_smtp(self, *, to: str | Iterable[str], subject: str, html_content: str,
                        from_email: str | None = None, files: list[str] | None = None,
                        dryrun: bool = False, cc: str | Iterable[str] | None = None,
                        bcc: str | Iterable[str] | None = None, mime_subtype: str = "mixed",
                        mime_charset: str = "utf-8",
                        custom_headers: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """Send one HTML message to ``to``, ``cc`` and ``bcc`` with ``files`` attached."""
        sender = from_email or self.from_email
        if not sender:
            raise StatewrightError(f"You should provide `from_email` or define it in the "
                                   f"connection (extra from_email of {self.smtp_conn_id!r})")
        msg, recipients = build_mime_message(sender, to, subject, html_content, files, cc,
                                             bcc, mime_subtype, mime_charset, custom_headers)
        if dryrun:
            return
        self.get_conn()
        for attempt in range(1, self.retry_limit + 1):
            assert self.smtp_client is not None
            try:
                self.smtp_client.sendmail(sender, recipients, msg.as_string())
                break
            except smtplib.SMTPServerDisconnected:
                if attempt == self.retry_limit:
                    raise
                self.smtp_client = None  # connect again
                self.get_conn()
        self.log.info("Sent an email to %s: %s", ", ".join(recipients), subject)
