"""Applying the tries that wait: deferred to a trigger, or rescheduled by a sensor.

The supervising worker applies each in the transaction that applies the other outcomes:

- **deferred**: insert the trigger (classpath, kwargs encrypted with Fernet as the serialized
  data ``TaskDeferred`` made, see ``crypto.encrypt_serialized``, created_date) and
  move running → deferred with ``trigger_id``, ``next_method``, ``next_kwargs`` and
  ``trigger_timeout`` (now + timeout), fenced on the try. A lost race deletes the trigger again.
- **up_for_reschedule**: running → up_for_reschedule with ``reschedule_date``, the try's
  ``first_poke_at`` and ``poke_count``, and one ``task_reschedule`` row.

Neither ends the try: the next pick-up continues it (see ``workload.start_tries``).

The Fernet key: ``install_cipher`` (the CLI does it at start, so a missing or wrong key stops
the worker with a clear error), else ``STATEWRIGHT_FERNET_KEY``, else, for the embedded SQLite
default, the key file under ``$STATEWRIGHT_HOME``. Without a key the try fails; kwargs are
never written in plaintext.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from cryptography.fernet import MultiFernet
from sqlalchemy import Connection

from statewright.config import Settings, load_settings
from statewright.core.states import TI, TaskInstanceState
from statewright.core.transitions import Actor
from statewright.crypto import FernetKeyError, encrypt_serialized, ensure_key_file, load_fernet
from statewright.db import transition as door
from statewright.db.repositories import reschedules as reschedule_repo
from statewright.db.repositories import triggers as trigger_repo

log = logging.getLogger("statewright.worker.deferral")

DEFERRED = "deferred"
UP_FOR_RESCHEDULE = "up_for_reschedule"
AWAITING_INPUT = "awaiting_input"  # see services.worker.awaiting_input
KINDS = frozenset({DEFERRED, UP_FOR_RESCHEDULE, AWAITING_INPUT})

_cipher: MultiFernet | None = None
_cipher_lock = threading.Lock()


# -- the key --------------------------------------------------------------------------------


def load_cipher(settings: Settings | None = None) -> MultiFernet:
    """The cipher for trigger kwargs, from the settings (see the module docstring)."""
    s = settings or load_settings()
    if s.fernet_key:
        return load_fernet(s.fernet_key)
    if s.database_url.startswith("sqlite"):
        return load_fernet(ensure_key_file(s.home))
    raise FernetKeyError(
        "STATEWRIGHT_FERNET_KEY is not set. With a database other than the embedded SQLite, "
        "every worker and triggerer must share one key: make one with `statewright config "
        "fernet-key` and set it in STATEWRIGHT_FERNET_KEY for all of them.")


def install_cipher(cipher: MultiFernet | None) -> None:
    """Use ``cipher`` in this process (None: load it from the settings when first needed)."""
    global _cipher
    with _cipher_lock:
        _cipher = cipher


def installed_cipher() -> MultiFernet | None:
    """The cipher installed in this process, if any (nothing is loaded)."""
    with _cipher_lock:
        return _cipher


def current_cipher() -> MultiFernet:
    global _cipher
    with _cipher_lock:
        if _cipher is None:
            _cipher = load_cipher()
        return _cipher


@contextlib.contextmanager
def using_cipher(cipher: MultiFernet) -> Iterator[None]:
    """Use ``cipher`` for the duration of the block (``dag.test()``)."""
    global _cipher
    with _cipher_lock:
        before, _cipher = _cipher, cipher
    try:
        yield
    finally:
        with _cipher_lock:
            _cipher = before


def dag_test_cipher(*, temporary: bool) -> contextlib.AbstractContextManager[None]:
    """For ``dag.test()`` on its temporary database: a throw-away key unless one is set."""
    import os

    from statewright.crypto import FERNET_KEY_SETTING, generate_key

    if temporary and _cipher is None and not os.environ.get(FERNET_KEY_SETTING):
        return using_cipher(load_fernet(generate_key()))
    return contextlib.nullcontext()


# -- applying ---------------------------------------------------------------------------------


def apply_waiting(
    conn: Connection, results: Sequence[Any], *, now: datetime, actor: Actor = Actor.WORKER
) -> tuple[dict[int, TaskInstanceState], list[Any]]:
    """Apply deferred and rescheduled tries. Returns the states reached and the results that
    could not be applied as such (no key: turned into failures for the caller to apply)."""
    reached: dict[int, TaskInstanceState] = {}
    deferred = [r for r in results if r.kind == DEFERRED]
    rescheduled = [r for r in results if r.kind == UP_FOR_RESCHEDULE]
    failed: list[Any] = []
    if deferred:
        try:
            cipher = current_cipher()
        except FernetKeyError as exc:
            log.error("cannot store triggers: %s", exc)
            failed = [replace(r, kind="failed", error=f"the task deferred, but its trigger "
                              f"cannot be stored: {exc}") for r in deferred]
        else:
            reached.update(_apply_deferred(conn, deferred, cipher, now, actor))
    reached.update(_apply_rescheduled(conn, rescheduled, now, actor))
    from statewright.services.worker.awaiting_input import apply_awaiting_input

    reached.update(apply_awaiting_input(
        conn, [r for r in results if r.kind == AWAITING_INPUT], now=now, actor=actor))
    return reached, failed


def _apply_deferred(conn: Connection, results: Sequence[Any], cipher: MultiFernet,
                    now: datetime, actor: Actor) -> dict[int, TaskInstanceState]:
    specs = [r.extra["deferral"] for r in results]
    # The kwargs are serialized already (``TaskDeferred``): stored as they are, so that the
    # triggerer deserializes them once (rows stored before, serialized twice, still read).
    trigger_ids = trigger_repo.insert_many(
        conn, [(d["classpath"], encrypt_serialized(cipher, d["trigger_kwargs"])) for d in specs],
        now)
    rows = []
    for r, d, trigger_id in zip(results, specs, trigger_ids, strict=True):
        timeout = d.get("timeout")
        rows.append({
            "id": r.ti_id, "try_number": r.try_number, "trigger_id": trigger_id,
            "next_method": d["method_name"], "next_kwargs": dict(d.get("kwargs") or {}),
            "trigger_timeout": None if timeout is None else now + timedelta(seconds=timeout),
        })
    trigger_repo.set_deferral_fields(conn, rows)
    res = door.set_task_instance_state(
        conn, [], fenced=[(r.ti_id, r.try_number) for r in results], frm=TI.RUNNING,
        to=TI.DEFERRED, actor=actor, now=now)
    if res.lost:
        lost_triggers = [row["trigger_id"] for row in rows if row["id"] in res.lost]
        trigger_repo.delete_many(conn, lost_triggers)
        log.warning("deferral of %s lost a race (%s); their triggers were removed",
                    sorted(res.lost), res.lost)
    changed = set(res.changed)  # a list: ``in`` on it per result was quadratic in the batch
    for r, d in zip(results, specs, strict=True):
        if r.ti_id in changed:
            log.info("%s.%s run %s try %s deferred to %s", r.dag_id, r.task_id, r.run_id,
                     r.try_number, d["classpath"])
    return {pk: TI.DEFERRED for pk in res.changed}


def _apply_rescheduled(conn: Connection, results: Sequence[Any], now: datetime,
                       actor: Actor) -> dict[int, TaskInstanceState]:
    if not results:
        return {}
    rows = []
    for r in results:
        spec = r.extra["reschedule"]
        rows.append({"id": r.ti_id, "try_number": r.try_number,
                     "reschedule_date": spec["reschedule_date"],
                     "first_poke_at": spec.get("first_poke_at") or r.start_date or now,
                     "poke_count": int(spec.get("poke_count") or 0)})
    reschedule_repo.set_reschedule_fields(conn, rows)
    res = door.set_task_instance_state(
        conn, [], fenced=[(r.ti_id, r.try_number) for r in results], frm=TI.RUNNING,
        to=TI.UP_FOR_RESCHEDULE, actor=actor, now=now)
    changed = set(res.changed)
    reschedule_repo.add(conn, [
        {"task_instance_id": r.ti_id, "try_number": r.try_number,
         "start_date": r.start_date or now, "end_date": now,
         "duration": (now - (r.start_date or now)).total_seconds(),
         "reschedule_date": row["reschedule_date"]}
        for r, row in zip(results, rows, strict=True) if r.ti_id in changed
    ])
    return {pk: TI.UP_FOR_RESCHEDULE for pk in res.changed}
