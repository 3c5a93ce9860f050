"""The values a try registered for masking, kept (encrypted) with its outcome, so that the UI
and the API hide them when they show the task instance's XCom."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from cryptography.fernet import MultiFernet
from sqlalchemy import Connection

from statewright.core.errors import StatewrightError
from statewright.crypto import FernetKeyError
from statewright.db.repositories import task_masks
from statewright.sdk import masking

__all__ = ["EXTRA_MASKS", "redactor_for_task_instance", "store_masks"]

EXTRA_MASKS = "masks"
log = logging.getLogger("statewright.worker")


def store_masks(conn: Connection, results: Sequence[Any], *, now: datetime) -> int:
    """In the worker's transaction that applies the outcomes. Without a usable key the values
    are not kept (masking by key name still applies) and the worker says so."""
    rows = [(r.ti_id, r.try_number, list((r.extra or {}).get(EXTRA_MASKS) or ()))
            for r in results]
    rows = [row for row in rows if row[2]]
    if not rows:
        return 0
    from statewright.services.worker.deferral import current_cipher

    try:
        cipher = current_cipher()
    except FernetKeyError as exc:
        log.warning("the values tries registered for masking are not kept: %s", exc)
        return 0
    return task_masks.store(conn, cipher, rows, now=now)


def redactor_for_task_instance(conn: Connection, ti_id: int,
                               cipher: MultiFernet | None) -> Callable[[Any], Any]:
    """How the UI and the API show the task instance's values: secrets of this process,
    sensitive keys and what its tries registered, masked. When those cannot be read (no key, a
    wrong key) every value is hidden."""
    try:
        registered = task_masks.for_task_instance(conn, cipher, ti_id)
    except StatewrightError as exc:
        log.warning("task instance %s: masks unreadable (%s); its values are hidden", ti_id, exc)
        return lambda value: masking.MASK
    return lambda value: masking.redact(value, secrets=registered)
