"""Errors of the REST API: each answer is ``{"detail": "what was wrong and what to do"}``.

``NotFound`` → 404, ``Conflict`` → 409; a body that does not validate → 422 with every problem
in one sentence (and the pydantic list under ``errors``); ``InvalidTransition`` → 409 naming
the edge; params that do not satisfy their schemas → 400 with ``errors`` (``param``, ``msg``);
other statewright errors (a control that cannot be done) → 409.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from statewright.core.errors import InvalidTransition, StatewrightError
from statewright.core.params import ParamValidationError

log = logging.getLogger(__name__)


class ApiError(Exception):
    status_code = 400

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class NotFound(ApiError):
    status_code = 404


class Conflict(ApiError):
    status_code = 409


class BadRequest(ApiError):
    status_code = 422


def _location(loc: Sequence[Any]) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header"):
        where, rest = parts[0], parts[1:]
        return f"{where} field {'.'.join(rest)!r}" if rest else f"the request {where}"
    return ".".join(parts)


def _kind(value: Any) -> str:
    return {str: "string", bool: "boolean", int: "number", float: "number", list: "list",
            dict: "JSON object"}.get(type(value), "value")


def describe_validation(errors: Sequence[dict[str, Any]]) -> str:
    """One readable sentence for pydantic's errors."""
    problems: list[str] = []
    for e in errors:
        kind = e.get("type", "")
        where = _location(e.get("loc", ()))
        if kind == "json_invalid":
            reason = (e.get("ctx") or {}).get("error", "invalid JSON")
            problems.append(f"the body is not valid JSON ({reason}); send a JSON object with "
                            "Content-Type: application/json")
        elif kind == "extra_forbidden":
            problems.append(f"{where} is not a known field; remove it")
        elif kind == "missing":
            problems.append(f"{where} is required")
        elif kind == "timezone_aware":
            problems.append(f"{where} needs a timezone, e.g. 2026-01-01T00:00:00Z")
        elif kind in ("model_attributes_type", "dict_type") and tuple(e.get("loc", ())) == (
                "body",):
            problems.append("the body must be a JSON object")
        else:
            # The rejected value is never echoed: it may be a password, and answers are kept
            # (the audit log records the detail of every refused change).
            given = e.get("input")
            shown = f" (got a {_kind(given)})" if given is not None else ""
            problems.append(f"{where}: {e.get('msg', 'invalid')}{shown}")
    return "Invalid request: " + "; ".join(problems) + ". Nothing was changed."


def _json(status: int, detail: str, **extra: Any) -> JSONResponse:
    return JSONResponse({"detail": detail, **extra}, status_code=status)


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return _json(exc.status_code, exc.detail)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = [{k: v for k, v in e.items() if k in ("type", "loc", "msg")}
                  for e in exc.errors()]
        return _json(422, describe_validation(exc.errors()), errors=errors)

    @app.exception_handler(InvalidTransition)
    async def _edge(_: Request, exc: InvalidTransition) -> JSONResponse:
        return _json(409, str(exc), edge={"entity": exc.entity, "from": exc.frm, "to": exc.to,
                                          "actor": exc.actor})

    @app.exception_handler(ParamValidationError)
    async def _params(_: Request, exc: ParamValidationError) -> JSONResponse:
        return _json(400, str(exc), errors=[{"param": p.param, "msg": p.message}
                                            for p in exc.problems])

    @app.exception_handler(StatewrightError)
    async def _domain(_: Request, exc: StatewrightError) -> JSONResponse:
        return _json(409, str(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = str(exc.detail)
        if exc.status_code == 404 and detail == "Not Found":
            detail = f"No such path {request.url.path!r}; the API is described at /api/docs."
        response = _json(exc.status_code, detail)
        for key, value in (exc.headers or {}).items():
            response.headers[key] = value
        return response
