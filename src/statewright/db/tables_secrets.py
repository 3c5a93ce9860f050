"""Tables of connections and variables (secrets encrypted at rest).

A connection's ``password`` and ``extra`` and a variable's ``val`` hold Fernet tokens, never
plaintext (see ``repositories/connections.py`` and ``repositories/variables.py``); so do the
values a try registered for masking (``task_instance_mask``: what the UI and the API hide when
they show that task instance's XCom).
"""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Integer, String, Table, Text, UniqueConstraint

from statewright.db.tables import UTCDateTime, metadata

connection = Table(
    "connection",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("conn_id", String(250), nullable=False, unique=True),
    Column("conn_type", String(500), nullable=False),
    Column("description", Text, nullable=True),
    Column("host", String(500), nullable=True),
    Column("schema", String(500), nullable=True),
    Column("login", Text, nullable=True),
    Column("password", Text, nullable=True),  # Fernet token
    Column("port", Integer, nullable=True),
    Column("extra", Text, nullable=True),  # Fernet token of the JSON text
    Column("updated_at", UTCDateTime, nullable=False),
)

variable = Table(
    "variable",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("key", String(250), nullable=False, unique=True),
    Column("val", Text, nullable=True),  # Fernet token
    Column("description", Text, nullable=True),
    Column("updated_at", UTCDateTime, nullable=False),
)

task_instance_mask = Table(
    "task_instance_mask",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("task_instance_id", Integer, ForeignKey("task_instance.id", ondelete="CASCADE"),
           nullable=False),
    Column("try_number", Integer, nullable=False),
    Column("secrets", Text, nullable=False),  # Fernet token of a JSON list of strings
    Column("created_at", UTCDateTime, nullable=False),
    UniqueConstraint("task_instance_id", "try_number"),
)
