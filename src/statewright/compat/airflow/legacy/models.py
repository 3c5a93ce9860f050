"""``airflow.models.XCom``: in Airflow 2 the configured XCom backend class (``[core]
xcom_backend``), here the class ``STATEWRIGHT_XCOM_BACKEND`` names (``BaseXCom`` by default). Its
``serialize_value`` / ``deserialize_value`` work; reading stored values of other runs from the
database (``XCom.get_one``, ``get_many``) is not offered: use ``ti.xcom_pull``."""

from __future__ import annotations

from typing import Any

__all__ = ["XCom"]  # noqa: F822 (read by __getattr__)


def __getattr__(name: str) -> Any:
    if name == "XCom":
        from statewright.sdk.xcom_backend import resolve_xcom_backend

        return resolve_xcom_backend()
    raise AttributeError(name)
