"""Authentication, authorization and the audit log of the REST API and the web UI.

``authorize`` is the one dependency installed on the whole app: every route is authenticated
unless it declares ``x-permission: public``, and needs the permission it declares or, when it
declares none, the one its method implies (reads: viewer; writes: operator). ``install`` adds
the auth routes, the login page, the error handlers, the audit log writer and the hardening
middleware.
"""

from __future__ import annotations

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from sqlalchemy import Engine

from statewright.api.auth import admin, audit, dependency, hardening, routes, ui
from statewright.api.auth.dependency import authorize
from statewright.api.auth.login import TooManyAttempts
from statewright.api.auth.permissions import document_permissions
from statewright.api.ui.views import TEMPLATES
from statewright.config import Settings

__all__ = ["authorize", "install"]


def install(app: FastAPI, *, engine: Engine, settings: Settings, api_prefix: str) -> None:
    document_permissions(app)
    dependency.install_handlers(app)

    @app.exception_handler(TooManyAttempts)
    async def _too_many(_: Request, exc: TooManyAttempts) -> JSONResponse:
        return JSONResponse({"detail": exc.detail}, status_code=429,
                            headers={"Retry-After": str(exc.retry_after)})

    app.include_router(routes.router, prefix=api_prefix)
    app.include_router(admin.router, prefix=api_prefix)
    app.include_router(ui.router)
    if ui.auth_context not in TEMPLATES.context_processors:
        TEMPLATES.context_processors.append(ui.auth_context)
    app.add_middleware(hardening.BodyLimit, limit=settings.api_max_body_bytes)
    app.add_middleware(audit.AuditLog, engine=engine)
    hardening.install_outer(app, settings)
