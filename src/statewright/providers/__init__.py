"""Hooks and operators for external systems, at the paths of Airflow's providers:
``statewright.providers.common.sql.operators.sql`` is
``airflow.providers.common.sql.operators.sql``.

Providers sit beside the SDK: they may use client libraries (SQLAlchemy engines to the user's
databases, httpx), never statewright's own database or services.
"""

from __future__ import annotations

HOOK_MODULES: dict[str, str] = {
    "smtp": "statewright.providers.smtp.hooks.smtp",
    "aws": "statewright.providers.amazon.aws.hooks.s3",
    "s3": "statewright.providers.amazon.aws.hooks.s3",
    "google_cloud_platform": "statewright.providers.google.cloud.hooks.gcs",
    "postgres": "statewright.providers.postgres.hooks.postgres",
    "mysql": "statewright.providers.mysql.hooks.mysql",
    "mariadb": "statewright.providers.mysql.hooks.mysql",
    "sqlite": "statewright.providers.sqlite.hooks.sqlite",
    "http": "statewright.providers.http.hooks.http",
    "https": "statewright.providers.http.hooks.http",
}
"""Connection type → the module whose hook serves it (imported to test a connection; the
SSH hooks read their connection when made, so an unsaved ssh connection has no test yet)."""


def load_hook_for(conn_type: str | None) -> None:
    """Import the hook module of ``conn_type``, when one is listed (its hook registers itself)."""
    import importlib

    module = HOOK_MODULES.get(conn_type or "")
    if module is not None:
        importlib.import_module(module)
