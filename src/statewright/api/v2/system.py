"""``/api/v2`` config (admins, when ``STATEWRIGHT_EXPOSE_CONFIG`` allows; secrets hidden),
jobs (the scheduler and triggerer heartbeats of ``/api/v1/jobs``), plugins and providers."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from datetime import datetime
from functools import cache, partial
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import PlainTextResponse

from statewright import providers as provider_root
from statewright.api.auth.permissions import ADMIN
from statewright.api.deps import Offset, settings_of
from statewright.api.errors import ApiError, NotFound
from statewright.api.routers import triggers as v1_triggers
from statewright.api.v2 import schemas_system as v2
from statewright.api.v2.common import NOT_FOUND, PageLimit
from statewright.api.v2.row_filters import OrderBy, every, order
from statewright.api.v2.row_filters import When as _When
from statewright.api.v2.versions import wants_text
from statewright.sdk import plugins as plugin_registry

config = APIRouter(tags=["Config"])
jobs = APIRouter(tags=["Job"])
plugins = APIRouter(tags=["Plugin"])
providers = APIRouter(tags=["Provider"])

HIDDEN = "< hidden >"
_SENSITIVE = {"database_url", "fernet_key", "secret_key", "celery_broker_url"}
_SECTIONS = (("api_auth", ("jwt_", "session_", "login_", "secret_key", "api_token")),
             ("api", ("api_", "test_connection", "expose_config", "input_limits")),
             ("celery", ("celery_",)), ("triggerer", ("triggerer_",)),
             ("dag_processor", ("dag_processor_", "dag_file_processor_", "dags_folder")),
             ("database", ("database_",)), ("logging", ("logs_folder",)),
             ("scheduler", ("scheduler_", "heartbeat_", "zombie_", "queued_", "late_",
                            "max_dagruns_", "shutdown_")))


class _Forbidden(ApiError):
    status_code = 403


def _section_of(name: str) -> str:
    return next((s for s, heads in _SECTIONS if name.startswith(heads)), "core")


def _sections(request: Request) -> dict[str, dict[str, str]]:
    """statewright's settings by Airflow-like section (a setting's env var is
    ``STATEWRIGHT_`` and its key in capitals); secrets hidden."""
    if settings_of(request).expose_config == "false":
        raise _Forbidden("Your statewright administrator chose not to expose the configuration, "
                         "most likely for security reasons (STATEWRIGHT_EXPOSE_CONFIG).")
    out: dict[str, dict[str, str]] = {}
    settings = settings_of(request)
    for f in dataclasses.fields(settings):
        if f.name == "extra":
            continue
        value = getattr(settings, f.name)
        shown = HIDDEN if f.name in _SENSITIVE and value else _text(value)
        out.setdefault(_section_of(f.name), {})[f.name] = shown
    return out


def _text(value: Any) -> str:
    if isinstance(value, tuple):
        return ",".join(map(str, value))
    if isinstance(value, bool):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return ",".join(f"{k}={v}" for k, v in dataclasses.asdict(value).items())
    return "" if value is None else str(value)


def _answer(request: Request, sections: dict[str, dict[str, str]]) -> Any:
    if wants_text(request):
        return PlainTextResponse("\n".join(
            f"[{name}]\n" + "".join(f"{k} = {v}\n" for k, v in options.items())
            for name, options in sections.items()))
    return v2.Config(sections=[v2.ConfigSection(name=name, options=[
        v2.ConfigOption(key=k, value=v) for k, v in options.items()])
        for name, options in sections.items()])


_CONFIG_ERRORS: dict[int | str, dict[str, Any]] = {
    **NOT_FOUND, 403: {"description": "Forbidden"}, 406: {"description": "Not Acceptable"},
    200: {"content": {"text/plain": {}}}}


@config.get("/config", response_model=v2.Config, openapi_extra=ADMIN, responses=_CONFIG_ERRORS)
def get_config(request: Request, section: Annotated[str | None, Query()] = None) -> Any:
    """statewright's settings by section (``section``: one), JSON or ``text/plain``."""
    sections = _sections(request)
    if section is not None:
        if section not in sections:
            raise NotFound(f"Section {section} not found.")
        sections = {section: sections[section]}
    return _answer(request, sections)


@config.get("/config/section/{section}/option/{option}", response_model=v2.Config,
            openapi_extra=ADMIN, responses=_CONFIG_ERRORS)
def get_config_value(request: Request, section: str, option: str) -> Any:
    """One setting."""
    sections = _sections(request)
    if option not in sections.get(section, {}):
        raise NotFound(f"Option [{section}/{option}] not found.")
    return _answer(request, {section: {option: sections[section][option]}})


_JOB_TYPES = {"scheduler": "SchedulerJob", "triggerer": "TriggererJob",
              "dag_processor": "DagProcessorJob"}
_JOB_STATES = {"running": "running", "stopped": "success"}
_JOB_ORDER = {k: k for k in ("id", "state", "job_type", "start_date", "end_date",
                             "latest_heartbeat", "hostname", "dag_id", "executor_class",
                             "unixname")}


def _in(value: datetime | None, gte: datetime | None, gt: datetime | None,
        lte: datetime | None, lt: datetime | None) -> bool:
    if value is None:
        return not (gte or gt or lte or lt)
    return not ((gte and value < gte) or (gt and value <= gt) or (lte and value > lte)
                or (lt and value >= lt))


@jobs.get("/jobs", response_model=v2.JobCollection)
def get_jobs(
    request: Request, is_alive: Annotated[bool | None, Query()] = None,
    start_date_gte: _When = None, start_date_gt: _When = None, start_date_lte: _When = None,
    start_date_lt: _When = None, end_date_gte: _When = None, end_date_gt: _When = None,
    end_date_lte: _When = None, end_date_lt: _When = None, limit: PageLimit = 50,
    offset: Offset = 0, order_by: OrderBy = None,
    job_state: Annotated[str | None, Query()] = None,
    job_type: Annotated[str | None, Query()] = None,
    hostname: Annotated[str | None, Query()] = None,
    executor_class: Annotated[str | None, Query()] = None,
) -> v2.JobCollection:
    """The scheduler and triggerer jobs with their heartbeats (``job_type`` as Airflow names
    them: ``SchedulerJob``, ``TriggererJob``)."""
    ours = {v: k for k, v in _JOB_TYPES.items()}.get(job_type or "", job_type)
    fetch = partial(v1_triggers.list_jobs, request, ours, hostname, is_alive)
    rows = [v2.Job(id=j.id, job_type=_JOB_TYPES.get(j.job_type, j.job_type),
                   state=_JOB_STATES.get(j.state, j.state), start_date=j.start_date,
                   end_date=j.end_date, latest_heartbeat=j.latest_heartbeat,
                   hostname=j.hostname, executor_class=None, unixname=None)
            for j in every(fetch, "jobs")]
    rows = [j for j in rows
            if (job_state is None or j.state == job_state)
            and (executor_class is None or j.executor_class == executor_class)
            and _in(j.start_date, start_date_gte, start_date_gt, start_date_lte, start_date_lt)
            and _in(j.end_date, end_date_gte, end_date_gt, end_date_lte, end_date_lt)]
    rows = order(rows, order_by, _JOB_ORDER, "id")
    return v2.JobCollection(jobs=rows[offset:offset + limit], total_entries=len(rows))


@plugins.get("/plugins", response_model=v2.PluginCollection)
def get_plugins(request: Request, limit: PageLimit = 50, offset: Offset = 0
                ) -> v2.PluginCollection:
    """The plugins loaded (macros, timetables, listeners; statewright serves no views)."""
    plugin_registry.load_plugins()
    rows = [v2.Plugin(
        name=p.name or p.__name__, source=p.__module__,
        macros=[f"{m.__module__}.{m.__name__}" for m in p.macros],
        timetables=[f"{t.__module__}.{t.__qualname__}" for t in p.timetables],
        listeners=[getattr(x, "__name__", None) or type(x).__name__ for x in p.listeners])
        for p in plugin_registry.registered()]
    return v2.PluginCollection(plugins=rows[offset:offset + limit], total_entries=len(rows))


@plugins.get("/plugins/importErrors", response_model=v2.PluginImportErrorCollection)
def import_errors(request: Request) -> v2.PluginImportErrorCollection:
    """The plugin files (or entry points) that failed to load, with their error."""
    plugin_registry.load_plugins()
    errors = plugin_registry.plugin_errors()
    return v2.PluginImportErrorCollection(
        import_errors=[v2.PluginImportError(source=s, error=e) for s, e in errors.items()],
        total_entries=len(errors))


@cache
def _providers(version: str) -> list[v2.Provider]:
    """statewright's providers at Airflow's paths: ``airflow.providers.<name>`` is
    ``statewright.providers.<name>`` (``common.sql`` is ``common-sql``)."""
    out = []
    for info in pkgutil.iter_modules(provider_root.__path__):
        module = importlib.import_module(f"{provider_root.__name__}.{info.name}")
        subs = [s.name for s in pkgutil.iter_modules(module.__path__) if s.ispkg] \
            if info.name == "common" else [None]
        for sub in subs:
            name = f"{info.name}.{sub}" if sub else info.name
            doc = (importlib.import_module(f"{provider_root.__name__}.{name}").__doc__ or "")
            out.append(v2.Provider(
                package_name=f"apache-airflow-providers-{name.replace('.', '-')}",
                description=doc.strip().split("\n")[0] or f"statewright's {name} provider",
                version=version))
    return out


@providers.get("/providers", response_model=v2.ProviderCollection)
def get_providers(request: Request, limit: PageLimit = 50, offset: Offset = 0
                  ) -> v2.ProviderCollection:
    """statewright's built-in providers under Airflow's package names, at statewright's
    version."""
    rows = _providers(request.app.version)
    return v2.ProviderCollection(providers=rows[offset:offset + limit], total_entries=len(rows))
