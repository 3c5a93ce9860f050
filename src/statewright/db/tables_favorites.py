"""The DAGs each user starred in the DAG list (favourites)."""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Index, Integer, String, Table

from statewright.db.tables import UTCDateTime, metadata

dag_favorite = Table(
    "dag_favorite",
    metadata,
    Column("user_id", Integer, ForeignKey("auth_user.id", ondelete="CASCADE"), primary_key=True),
    Column("dag_id", String(250), ForeignKey("dag.dag_id", ondelete="CASCADE"), primary_key=True),
    Column("created_at", UTCDateTime, nullable=False),
    Index(None, "dag_id"),
)
