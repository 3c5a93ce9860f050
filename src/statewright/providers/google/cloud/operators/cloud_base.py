"""``GoogleCloudBaseOperator``: the base of the google provider's operators (Airflow's name)."""

from __future__ import annotations

from statewright.sdk.baseoperator import BaseOperator

__all__ = ["GoogleCloudBaseOperator"]


class GoogleCloudBaseOperator(BaseOperator):
    """A ``BaseOperator``; the google provider's operators derive from it."""
