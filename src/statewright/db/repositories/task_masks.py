"""The values each try registered for masking, encrypted: the UI and the API hide them when they
show the task instance's XCom (a value registered in the task's process is not otherwise known
to the API server)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from cryptography.fernet import MultiFernet
from sqlalchemy import Connection, delete, insert, select

from statewright.db.repositories.secret_values import UndecryptableRows, decrypt, encrypt
from statewright.db.tables_secrets import task_instance_mask

__all__ = ["for_task_instance", "store"]

t = task_instance_mask.c


def store(conn: Connection, cipher: MultiFernet,
          rows: Sequence[tuple[int, int, Sequence[str]]], *, now: datetime) -> int:
    """Keep (task instance id, try number, values); a try reported twice keeps its last."""
    rows = [r for r in rows if r[2]]
    if not rows:
        return 0
    for ti_id, try_number, _ in rows:
        conn.execute(delete(task_instance_mask).where(
            t.task_instance_id == ti_id, t.try_number == try_number))
    conn.execute(insert(task_instance_mask), [
        {"task_instance_id": ti_id, "try_number": try_number, "created_at": now,
         "secrets": encrypt(cipher, json.dumps(sorted(set(values))))}
        for ti_id, try_number, values in rows])
    return len(rows)


def for_task_instance(conn: Connection, cipher: MultiFernet | None, ti_id: int) -> list[str]:
    """Every value the task instance's tries registered; raises ``UndecryptableRows`` when
    there are some and the cipher (None: no key) cannot read them."""
    values: set[str] = set()
    for row in conn.execute(select(task_instance_mask).where(t.task_instance_id == ti_id)):
        where = ("task_instance_mask", row.id, str(ti_id))
        if cipher is None:
            raise UndecryptableRows([where])
        text = decrypt(cipher, row.secrets, where=where)
        values.update(json.loads(text or "[]"))
    return sorted(values)
