"""Hooks and operators for external systems, at the paths of Airflow's providers:
``statewright.providers.common.sql.operators.sql`` is
``airflow.providers.common.sql.operators.sql``.

Providers sit beside the SDK: they may use client libraries (SQLAlchemy engines to the user's
databases, httpx), never statewright's own database or services.
"""
