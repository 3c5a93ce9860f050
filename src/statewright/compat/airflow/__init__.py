"""Airflow DAG files, unedited, on statewright.

With ``STATEWRIGHT_AIRFLOW_COMPAT=true`` (or ``install()`` in a script or a test), a DAG file's
``from airflow.sdk import DAG, task`` — and the other Airflow modules whose names statewright has
(``names.MODULES``) — gets statewright's own objects. A name or module statewright lacks makes
that file fail to import with an error naming it (``AirflowNameMissing``,
``AirflowModuleMissing``); other files load as usual.

Exports ``install``, ``uninstall``, ``activated``, ``is_active``, ``enabled`` and the two errors.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from statewright.compat.airflow.errors import AirflowModuleMissing, AirflowNameMissing
from statewright.compat.airflow.hook import activated, install, is_active, uninstall
from statewright.core.errors import ConfigurationError

ENV_VAR = "STATEWRIGHT_AIRFLOW_COMPAT"

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
