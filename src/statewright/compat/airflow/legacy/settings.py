"""``airflow.settings`` and ``airflow.configuration.conf`` as DAG files read them, answered from
statewright's settings (``statewright.config``): ``settings.DAGS_FOLDER``, ``AIRFLOW_HOME``,
``PLUGINS_FOLDER``, ``TIMEZONE``; ``conf.get("core", "dags_folder")`` and the other options of
``_OPTIONS``. ``AIRFLOW__SECTION__KEY`` environment variables win, as in Airflow; an option
neither has is a ConfigurationError unless a ``fallback`` is given."""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC
from typing import Any

from statewright.config import Settings, load_settings
from statewright.core.errors import ConfigurationError

__all__ = ["AIRFLOW_HOME", "DAGS_FOLDER", "PLUGINS_FOLDER", "TIMEZONE",  # noqa: F822 (read
           "AirflowConfig", "conf"]                                       # by __getattr__)

_NOTSET: Any = object()


def _plugins(s: Settings) -> str:
    from statewright.sdk.plugins import plugins_folder

    return str(plugins_folder())


def _catchup(s: Settings) -> str:
    from statewright.compat.airflow.adapt import airflow2_defaults

    return str(airflow2_defaults())


_OPTIONS: dict[tuple[str, str], Callable[[Settings], str]] = {
    ("core", "dags_folder"): lambda s: str(s.dags_folder),
    ("core", "airflow_home"): lambda s: str(s.home),
    ("core", "plugins_folder"): _plugins,
    ("core", "executor"): lambda s: "CeleryExecutor" if s.executor == "celery" else "LocalExecutor",
    ("core", "default_timezone"): lambda s: "utc",
    ("core", "load_examples"): lambda s: str(s.load_examples),
    ("core", "parallelism"): lambda s: str(s.parallelism),
    ("core", "dags_are_paused_at_creation"): lambda s: str(s.dags_are_paused_at_creation),
    ("core", "max_active_tasks_per_dag"): lambda s: "16",
    ("core", "dag_concurrency"): lambda s: "16",
    ("core", "max_active_runs_per_dag"): lambda s: "16",
    ("core", "dagbag_import_timeout"): lambda s: str(s.dag_file_processor_timeout),
    ("logging", "base_log_folder"): lambda s: str(s.logs_folder),
    ("scheduler", "catchup_by_default"): _catchup,
    ("webserver", "base_url"): lambda s: f"http://{s.api_host}:{s.api_port}",
    ("api", "base_url"): lambda s: f"http://{s.api_host}:{s.api_port}",
}
"""(section, key) → its value, from statewright's settings. Secrets (the database URL, the
Fernet key, broker URLs) are left out on purpose: DAG code does not read them here."""

_TRUE = {"true", "t", "1", "yes", "on"}
_FALSE = {"false", "f", "0", "no", "off"}


class AirflowConfig:
    """The parts of Airflow's ``conf`` (``AirflowConfigParser``) DAG files use."""

    def get(self, section: str, key: str, fallback: Any = _NOTSET, **_: Any) -> Any:
        section, key = section.lower(), key.lower()
        env = os.environ.get(f"AIRFLOW__{section.upper()}__{key.upper()}")
        if env is not None:
            return env
        option = _OPTIONS.get((section, key))
        if option is not None:
            return option(load_settings())
        if fallback is not _NOTSET:
            return fallback
        raise ConfigurationError(
            f"Airflow option [{section}] {key} has no statewright equivalent; give a fallback "
            f"(conf.get({section!r}, {key!r}, fallback=...)) or set "
            f"AIRFLOW__{section.upper()}__{key.upper()}.")

    def getboolean(self, section: str, key: str, fallback: Any = _NOTSET, **kw: Any) -> Any:
        value = self.get(section, key, fallback, **kw)
        if isinstance(value, bool) or value is None:
            return value
        text = str(value).strip().lower().split("#")[0].strip()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise ConfigurationError(f"Airflow option [{section}] {key}={value!r} is not a boolean.")

    def getint(self, section: str, key: str, fallback: Any = _NOTSET, **kw: Any) -> Any:
        value = self.get(section, key, fallback, **kw)
        return value if value is None else int(value)

    def getfloat(self, section: str, key: str, fallback: Any = _NOTSET, **kw: Any) -> Any:
        value = self.get(section, key, fallback, **kw)
        return value if value is None else float(value)

    def has_option(self, section: str, key: str) -> bool:
        return self.get(section, key, fallback=None) is not None

    def getsection(self, section: str) -> dict[str, Any]:
        return {key: self.get(sec, key) for (sec, key) in _OPTIONS if sec == section.lower()}


conf = AirflowConfig()

_SETTINGS: dict[str, Callable[[], Any]] = {
    "DAGS_FOLDER": lambda: conf.get("core", "dags_folder"),
    "AIRFLOW_HOME": lambda: conf.get("core", "airflow_home"),
    "PLUGINS_FOLDER": lambda: conf.get("core", "plugins_folder"),
    "TIMEZONE": lambda: UTC,
}


def __getattr__(name: str) -> Any:
    """``settings.DAGS_FOLDER`` and the others: read when asked (the environment may change)."""
    if name in _SETTINGS:
        return _SETTINGS[name]()
    raise AttributeError(name)
