"""Which permission each route needs: declared on the route (``openapi_extra``), or derived
from its path and method when it declares none (``core.auth.derived_permission``). The OpenAPI
document states it for every operation under ``x-permission``, so clients and tests read the
same table the server uses."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from starlette.routing import BaseRoute

from statewright.core.auth import Permission, derived_permission, least_role

KEY = "x-permission"


def declare(permission: Permission) -> dict[str, Any]:
    """``openapi_extra`` of a route that needs ``permission`` whatever its method."""
    return {KEY: permission.value}


PUBLIC = declare(Permission.PUBLIC)
AUTHENTICATED = declare(Permission.AUTHENTICATED)
ADMIN = declare(Permission.ADMIN)


def route_permission(route: BaseRoute | None, method: str) -> Permission:
    """The permission a request for ``route`` with ``method`` needs."""
    extra = getattr(route, "openapi_extra", None) or {}
    declared = extra.get(KEY)
    if declared is not None:
        return Permission(declared)
    return derived_permission(str(getattr(route, "path", "")), method)


def document_permissions(app: FastAPI) -> None:
    """Every operation of the OpenAPI document says its permission and the least role."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = build()
        for path, item in schema.get("paths", {}).items():
            for method, operation in item.items():
                if not isinstance(operation, dict) or "responses" not in operation:
                    continue
                perm = Permission(operation.get(KEY) or derived_permission(path, method).value)
                operation[KEY] = perm.value
                role = least_role(perm)
                if role is not None:
                    operation.setdefault("security", [{"bearer": []}, {"session": []}])
                    operation["responses"].setdefault(
                        "401", {"description": "No valid credentials"})
                    operation["responses"].setdefault(
                        "403", {"description": f"Needs the role {role.value} or higher"})
                    operation["description"] = (operation.get("description", "") +
                                                f"\n\nNeeds the role **{role.value}**.").strip()
                else:
                    operation["security"] = []
        _document_errors(schema)
        schema.setdefault("components", {}).setdefault("securitySchemes", {}).update({
            "bearer": {"type": "http", "scheme": "bearer",
                       "description": "A JWT from POST /api/v1/auth/token, or an API token"},
            "session": {"type": "apiKey", "in": "cookie", "name": "statewright_session"},
        })
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]


_ERROR = {"type": "object", "required": ["detail"], "title": "Error",
          "properties": {"detail": {"type": "string", "description": "What was wrong and what "
                                                                      "to do."}}}
_INVALID = {"type": "object", "required": ["detail"], "title": "InvalidRequest",
            "properties": {"detail": {"type": "string"},
                           "errors": {"type": "array", "items": {"type": "object"},
                                      "description": "pydantic's list of problems"}}}


def _document_errors(schema: dict[str, Any]) -> None:
    """Errors answer ``{"detail": "..."}`` (422: and ``errors``): the document says so, in place
    of FastAPI's default validation error schema."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    components["HTTPValidationError"] = _INVALID
    components["Error"] = _ERROR
    for item in schema.get("paths", {}).values():
        for operation in item.values():
            for code, response in operation.get("responses", {}).items():
                if code.startswith(("4", "5")) and code != "503" and "content" not in response:
                    response["content"] = {"application/json": {
                        "schema": {"$ref": "#/components/schemas/Error"}}}
