"""What a deferred task instance waits for: its trigger's class, arguments (secrets masked) and
timeout, described in words for the task-instance panel."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from cryptography.fernet import MultiFernet
from sqlalchemy import Connection

from statewright.api import schemas as s
from statewright.core.errors import StatewrightError
from statewright.crypto import decrypt_json
from statewright.db.repositories import triggers as trigger_repo
from statewright.sdk import serde
from statewright.services.secrets.masks import redactor_for_task_instance

log = logging.getLogger(__name__)


def _when(value: Any) -> str:
    return value.isoformat() if isinstance(value, datetime) else str(value)


def _waits_for(classname: str, kwargs: Mapping[str, Any]) -> str:
    """The wait in words for the triggers people use most; the arguments for any other."""
    if "moment" in kwargs:
        return f"the time to reach {_when(kwargs['moment'])}"
    if classname in ("FileTrigger", "DirectoryFileTrigger") and "filepath" in kwargs:
        return f"a file matching {kwargs['filepath']} (checked every " \
               f"{kwargs.get('poke_interval', 5)} s)"
    if classname == "FileDeleteTrigger" and "filepath" in kwargs:
        return f"{kwargs['filepath']} to be deleted"
    if classname == "HttpTrigger":
        return f"the HTTP answer of {kwargs.get('method', 'GET')} " \
               f"{kwargs.get('endpoint') or kwargs.get('url') or ''}".rstrip()
    if classname == "ExternalTaskTrigger":
        return f"task {kwargs.get('external_task_id') or '(the whole DAG)'} of DAG " \
               f"{kwargs.get('external_dag_id')} to reach {kwargs.get('allowed_states')}"
    shown = ", ".join(f"{k}={_when(v)}" for k, v in kwargs.items())
    return f"its condition ({shown})" if shown else "its condition"


def trigger_info(conn: Connection, ti: Any, cipher: MultiFernet | None) -> s.TriggerInfo | None:
    """The trigger of the deferred task instance row ``ti`` (None when it has none)."""
    if ti.trigger_id is None:
        return None
    rows = trigger_repo.get_many(conn, [ti.trigger_id])
    if not rows:
        return None
    row = rows[0]
    classname = row.classpath.rsplit(".", 1)[-1]
    kwargs: dict[str, Any] | None = None
    if cipher is not None:
        try:
            raw = serde.deserialize(decrypt_json(cipher, row.kwargs), path="kwargs")
            kwargs = dict(raw) if isinstance(raw, Mapping) else {"value": raw}
        except (StatewrightError, ValueError, TypeError) as exc:
            log.warning("trigger %s: kwargs unreadable (%s)", row.id, exc)
    shown: Callable[[Any], Any] = redactor_for_task_instance(conn, ti.id, cipher)
    masked = shown(kwargs) if kwargs is not None else None
    return s.TriggerInfo(
        trigger_id=row.id, classpath=row.classpath, classname=classname,
        kwargs={str(k): _when(v) if isinstance(v, datetime) else v
                for k, v in masked.items()} if isinstance(masked, Mapping) else None,
        waits_for=_waits_for(classname, masked) if isinstance(masked, Mapping)
        else "(its arguments cannot be read with this server's key)",
        created_date=row.created_date, triggerer_id=row.triggerer_id,
        timeout=ti.trigger_timeout, next_method=ti.next_method)
