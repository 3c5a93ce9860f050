"""Alembic environment. Migrations are frozen: they never import application code."""

from __future__ import annotations

from alembic import context

config = context.config
connection = config.attributes.get("connection")
target_metadata = config.attributes.get("target_metadata")  # only for autogenerate checks


def run() -> None:
    if connection is None:
        raise RuntimeError("statewright migrations run through `statewright db migrate`")
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


run()
