"""The FastAPI application: the REST API under /api/v1, the web UI, /metrics."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from fastapi import Depends, FastAPI, Request, Response
from sqlalchemy import Engine

from statewright.api import auth
from statewright.api.errors import install_handlers
from statewright.api.routers import ROUTERS
from statewright.api.ui.static_assets import STATIC_DIR, StaticAssets
from statewright.config import Settings, load_settings
from statewright.db.engine import make_engine

API_PREFIX = "/api/v1"

_DESCRIPTION = """\
The REST API of statewright. Resource names follow Apache Airflow 3's: DAGs, DAG runs, task
instances. Every state a task instance or run shows carries a *type* (`state`, one of Airflow's)
and a *name* (`state_name`, e.g. `Crashed`, `AwaitingRetry`, `Late`); every change is in the
history with the actor who made it. Errors answer `{"detail": "..."}`.
"""


def create_app(engine: Engine | None = None, settings: Settings | None = None) -> FastAPI:
    """Build the app on ``engine`` (default: the settings' database)."""
    settings = settings or load_settings()
    engine = engine or make_engine(settings.database_url)
    app = FastAPI(
        title="statewright",
        version=_version(),
        description=_DESCRIPTION,
        openapi_url=None,  # served by api.auth.ui, behind a login like every route
        docs_url=None,
        redoc_url=None,
        dependencies=[Depends(auth.authorize)],
    )
    app.state.engine = engine
    from statewright.services import listeners

    listeners.install(engine)  # plugins' listeners hear the changes people make here
    app.state.settings = settings
    install_handlers(app)
    for router in ROUTERS:
        app.include_router(router, prefix=API_PREFIX)
    from statewright.api import v2
    from statewright.api.auth.routes import root_router

    for router in v2.ROUTERS:  # Airflow 3.3's REST API (docs/api.md)
        app.include_router(router, prefix=v2.PREFIX, dependencies=v2.DEPENDENCIES)
    app.include_router(root_router)
    _install_metrics(app)
    from statewright.api.ui.views import router as ui_router

    app.include_router(ui_router)
    from statewright.api.ui.browse_views import router as browse_router

    app.include_router(browse_router)
    from statewright.api.docs import router as docs_router

    app.include_router(docs_router)
    app.mount("/static", StaticAssets(directory=STATIC_DIR), name="static")
    from statewright.api.limits import JsonBodyLimits

    app.add_middleware(JsonBodyLimits, limits=settings.input_limits)
    auth.install(app, engine=engine, settings=settings, api_prefix=API_PREFIX)
    return app


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("statewright")
    except PackageNotFoundError:
        return "0"


def _install_metrics(app: FastAPI) -> None:
    """``/metrics`` (Prometheus) and a request counter and latency histogram per route."""
    from prometheus_client import CONTENT_TYPE_LATEST

    from statewright.observability import metrics

    requests = metrics.counter("api_requests", "REST API and UI requests",
                               ["method", "route", "status"])
    latency = metrics.histogram("api_request_seconds", "Time to answer a request",
                                ["method", "route"])

    @app.middleware("http")
    async def _measure(request: Request,
                       call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        start = time.perf_counter()
        response = await call_next(request)
        route = _route_template(request)
        if route is not None and route != "/metrics":
            latency.labels(request.method, route).observe(time.perf_counter() - start)
            requests.labels(request.method, route, str(response.status_code)).inc()
        return response

    @app.get("/metrics", include_in_schema=False)
    def _metrics() -> Response:
        return Response(metrics.render(), media_type=CONTENT_TYPE_LATEST)


def _route_template(request: Request) -> str | None:
    """The matched route's template (``/api/v1/dags/{dag_id}``): a label of bounded size."""
    path = getattr(request.scope.get("route"), "path", None)
    if path is None:
        return None
    if request.url.path.startswith(API_PREFIX + "/") and not path.startswith(API_PREFIX):
        path = API_PREFIX + path  # routes of an included router may carry no prefix
    return str(path)
