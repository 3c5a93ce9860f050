"""``airflow.utils.dates.days_ago`` and ``cron_presets``, and
``airflow.utils.decorators.apply_defaults``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

__all__ = ["apply_defaults", "cron_presets", "days_ago"]

cron_presets: dict[str, str] = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@quarterly": "0 0 1 */3 *",
    "@yearly": "0 0 1 1 *",
}
"""Airflow 2's ``airflow.utils.dates.cron_presets``: preset → cron expression."""

F = TypeVar("F", bound=Callable[..., Any])

now: Callable[[], datetime] = lambda: datetime.now(UTC)  # noqa: E731
"""The clock ``days_ago`` reads (tests replace it)."""


def days_ago(n: int, hour: int = 0, minute: int = 0, second: int = 0,
             microsecond: int = 0) -> datetime:
    """Airflow 2's ``days_ago``: today at ``hour:minute:second`` UTC, ``n`` days back (so a
    start date written with it moves forward every day, as it did in Airflow 2)."""
    today = now().astimezone(UTC).replace(hour=hour, minute=minute, second=second,
                                          microsecond=microsecond)
    return today - timedelta(days=n)


def apply_defaults(func: F) -> F:
    """Airflow 1.10's operator ``__init__`` decorator: statewright applies ``default_args`` to
    every operator's ``__init__`` already, so this returns ``func`` unchanged."""
    return func
