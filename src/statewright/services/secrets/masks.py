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

__all__ = ["EXTRA_MASKS", "mask_results", "redactor_for_task_instance", "store_masks"]

EXTRA_MASKS = "masks"
# What a try reports that is stored to be shown (its outcome's other parts: see mask_results).
_SHOWN_EXTRAS = ("rendered_fields", "notes", "hook_errors")


def mask_results(results: Sequence[Any]) -> None:
    """Mask, in place and before anything is stored, what a try reports to be shown: its error
    and traceback (the state message, the try's history row), the template fields it rendered,
    and its hooks' errors and notes. Masked: the values the try registered (its connections'
    passwords, ``mask_secret``), those of this process, and values under sensitive names, as
    in the try's log. XCom values are stored as the task gave them (downstream tasks read them)
    and masked where they are shown."""
    for r in results:
        extra = r.extra if isinstance(r.extra, dict) else {}
        secrets = [s for s in extra.get(EXTRA_MASKS) or () if isinstance(s, str)]
        r.error = masking.redact(r.error, secrets=secrets)
        r.traceback = masking.redact(r.traceback, secrets=secrets)
        for key in _SHOWN_EXTRAS:
            if extra.get(key):
                extra[key] = masking.redact(extra[key], secrets=secrets)
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
