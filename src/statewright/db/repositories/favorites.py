"""Favourite DAGs: a star per DAG per user."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, Connection, delete, insert, select
from sqlalchemy.exc import IntegrityError

from statewright.db.tables import dag
from statewright.db.tables_auth import auth_user
from statewright.db.tables_favorites import dag_favorite

c = dag_favorite.c


def user_id(conn: Connection, username: str) -> int | None:
    value = conn.execute(select(auth_user.c.id).where(auth_user.c.username == username)).scalar()
    return None if value is None else int(value)


def add(conn: Connection, uid: int, dag_id: str, now: datetime) -> bool:
    """Star ``dag_id`` for the user; False when it was starred already."""
    try:
        with conn.begin_nested():
            conn.execute(insert(dag_favorite).values(user_id=uid, dag_id=dag_id, created_at=now))
    except IntegrityError:
        return False
    return True


def remove(conn: Connection, uid: int, dag_id: str) -> bool:
    """Unstar ``dag_id``; False when it was not starred."""
    done = conn.execute(delete(dag_favorite).where(c.user_id == uid, c.dag_id == dag_id))
    return bool(done.rowcount)


def starred(conn: Connection, uid: int, dag_ids: Sequence[str]) -> set[str]:
    """Which of ``dag_ids`` the user starred."""
    if not dag_ids:
        return set()
    rows = conn.execute(select(c.dag_id).where(c.user_id == uid, c.dag_id.in_(list(dag_ids))))
    return {r.dag_id for r in rows}


def is_favorite_condition(uid: int | None, wanted: bool) -> ColumnElement[bool]:
    """A WHERE condition on the DAG table: the DAG is (``wanted``) or is not starred by the
    user (an unknown user has starred nothing)."""
    exists = select(c.dag_id).where(c.user_id == (uid or -1), c.dag_id == dag.c.dag_id).exists()
    return exists if wanted else ~exists
