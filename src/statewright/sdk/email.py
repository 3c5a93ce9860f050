"""Email from DAG code and task alerts (Airflow's ``airflow.utils.email`` and the task
arguments ``email``, ``email_on_failure``, ``email_on_retry``).

``send_email(to, subject, html_content, ...)`` sends through an SMTP connection
(``smtp_default`` unless ``conn_id`` is given): see ``statewright.providers.smtp``.

A task given ``email=`` (one address, several separated by commas or semicolons, or a list)
mails those addresses when a try fails (``email_on_failure``, true by default) and when it is
to be retried (``email_on_retry``, true by default), as Airflow does, through ``smtp_default``.
The task's process sends it, like a callback, once the try has ended; a mail that cannot be
sent is logged and noted in the state history, and never changes the try's outcome.
"""

from __future__ import annotations

import html
import socket
from collections.abc import Iterable
from typing import Any

from statewright.core.errors import DagDefinitionError

__all__ = ["send_email"]

DEFAULT_CONN_ID = "smtp_default"


def send_email(to: str | Iterable[str], subject: str, html_content: str,
               files: list[str] | None = None, dryrun: bool = False,
               cc: str | Iterable[str] | None = None, bcc: str | Iterable[str] | None = None,
               mime_subtype: str = "mixed", mime_charset: str = "utf-8",
               conn_id: str | None = None, custom_headers: dict[str, Any] | None = None,
               **kwargs: Any) -> None:
    """Send an HTML email through the SMTP connection ``conn_id`` (``smtp_default``); the
    sender is ``from_email=`` or the connection's extra ``from_email``."""
    from statewright.providers.smtp.hooks.smtp import SmtpHook

    hook = SmtpHook(smtp_conn_id=conn_id or DEFAULT_CONN_ID)
    arguments = {"to": to, "subject": subject, "html_content": html_content, "files": files,
                 "cc": cc, "bcc": bcc, "mime_subtype": mime_subtype,
                 "mime_charset": mime_charset, "custom_headers": custom_headers,
                 "from_email": kwargs.get("from_email")}
    if dryrun:
        hook.send_email_smtp(dryrun=True, **arguments)
        return
    with hook:
        hook.send_email_smtp(**arguments)


# -- task alerts ----------------------------------------------------------------------------------


def email_args(email: Any, on_failure: Any, on_retry: Any,
               where: str) -> tuple[str | list[str] | None, bool, bool]:
    """Check a task's ``email``, ``email_on_failure`` and ``email_on_retry``."""
    if email is not None and not isinstance(email, str) and not (
            isinstance(email, (list, tuple, set)) and all(isinstance(e, str) for e in email)):
        raise DagDefinitionError(f"{where}: email must be an address or a list of addresses, "
                                 f"got {email!r}.")
    for name, value in (("email_on_failure", on_failure), ("email_on_retry", on_retry)):
        if not isinstance(value, bool):
            raise DagDefinitionError(f"{where}: {name} must be True or False, got {value!r}.")
    addresses = email if email is None or isinstance(email, str) else list(email)
    return addresses, on_failure, on_retry


def alert_wanted(task: Any, state: str) -> bool:
    """Whether a try of ``task`` ending in ``state`` mails its ``email`` addresses."""
    if not getattr(task, "email", None):
        return False
    if state == "failed":
        return bool(getattr(task, "email_on_failure", False))
    if state == "up_for_retry":
        return bool(getattr(task, "email_on_retry", False))
    return False


def send_alert_email(task: Any, context: Any, state: str, exception: Any) -> None:
    """Mail the task's ``email`` addresses that a try ended ``state`` (failed, up_for_retry)."""
    ti = context.get("ti") if hasattr(context, "get") else None
    dag_id = getattr(ti, "dag_id", None) or getattr(getattr(task, "dag", None), "dag_id", "?")
    run_id = getattr(ti, "run_id", "?")
    try_number = getattr(ti, "try_number", 1)
    max_tries = getattr(ti, "max_tries", getattr(task, "retries", 0))
    subject = f"Airflow alert: <TaskInstance: {dag_id}.{task.task_id} {run_id} [{state}]>"
    error = html.escape(f"{type(exception).__name__}: {exception}" if exception is not None
                        else "(no exception)").replace("\n", "<br>")
    body = (f"Try {try_number} out of {max_tries + 1}<br>"
            f"Exception:<br>{error}<br>"
            f"Task: {html.escape(task.task_id)} in DAG {html.escape(str(dag_id))}, run "
            f"{html.escape(str(run_id))}<br>"
            f"Host: {html.escape(socket.gethostname())}<br>")
    send_email(task.email, subject, body, conn_id=DEFAULT_CONN_ID)
