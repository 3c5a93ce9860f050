"""Airflow DAG files, unedited, on statewright.

With ``STATEWRIGHT_AIRFLOW_COMPAT=true`` (or ``install()`` in a script or a test), a DAG file's
``from airflow.sdk import DAG, task`` — and the other Airflow modules whose names statewright has
(``names.MODULES``) — gets statewright's own objects. A name or module statewright lacks makes
that file fail to import with an error naming it (``AirflowNameMissing``,
``AirflowModuleMissing``); other files load as usual.

Airflow 2 files load too: ``airflow2.py`` maps their older modules, names and arguments onto
Airflow 3's, and every task's context has Airflow 2's keys (``legacy/context.py``).

Exports ``install``, ``uninstall``, ``activated``, ``is_active``, ``enabled`` and the two errors.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from statewright.compat.airflow.errors import AirflowModuleMissing, AirflowNameMissing
from statewright.compat.airflow.hook import activated, install, is_active, uninstall
from statewright.core.errors import ConfigurationError
from statewright.sdk.context import add_context_extension

ENV_VAR = "STATEWRIGHT_AIRFLOW_COMPAT"


def _airflow2_keys(context: Mapping[str, Any]) -> Mapping[str, Any]:
    from statewright.compat.airflow.legacy.context import airflow2_context

    return airflow2_context(context)


add_context_extension(_airflow2_keys)  # Airflow 2's context keys, in every task's context

__all__ = [
    "ENV_VAR",
    "AirflowModuleMissing",
    "AirflowNameMissing",
    "activated",
    "enabled",
    "install",
    "is_active",
    "uninstall",
]


def enabled(env: Mapping[str, str] | None = None) -> bool:
    """Whether ``STATEWRIGHT_AIRFLOW_COMPAT`` turns the layer on (true/false, 1/0, yes/no,
    on/off); a ConfigurationError for any other value."""
    raw = (os.environ if env is None else env).get(ENV_VAR, "").strip().lower()
    if raw in {"", "0", "false", "no", "off"}:
        return False
    if raw in {"1", "true", "yes", "on"}:
        return True
    raise ConfigurationError(f"{ENV_VAR}={raw!r} is not a boolean; use true or false.")
