"""The API docs: Swagger UI at ``/api/docs`` and ReDoc at ``/api/redoc``, from assets shipped in
a Python package (``fastapi-offline``), never a CDN: they work on a machine without internet.

The pages hold no inline script (our ``static/api_docs.js`` starts Swagger UI), so the CSP keeps
``script-src 'self'``; it allows inline styles, which both viewers set from their scripts."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, HTTPException
from fastapi import Path as PathParam
from fastapi.responses import FileResponse, HTMLResponse, Response

from statewright.api.auth.ui import OPENAPI_PATH

router = APIRouter(include_in_schema=False)
ASSETS = "/api/docs/assets"
_ASSET_FILES = {"swagger-ui-bundle.js", "swagger-ui.css", "redoc.standalone.js", "favicon.png"}
CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
       "worker-src 'self' blob:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; "
       "form-action 'self'")

_SWAGGER = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>statewright API</title>
<link rel="icon" type="image/png" href="{ASSETS}/favicon.png">
<link rel="stylesheet" href="{ASSETS}/swagger-ui.css">
</head><body>
<p style="margin:8px 16px;font-family:sans-serif"><a href="/api/redoc">ReDoc</a> ·
<a href="{OPENAPI_PATH}">openapi.json</a> · <a href="/">web UI</a></p>
<div id="swagger-ui" data-openapi-url="{OPENAPI_PATH}"></div>
<script src="{ASSETS}/swagger-ui-bundle.js"></script>
<script src="/static/api_docs.js"></script>
</body></html>
"""

_REDOC = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>statewright API · ReDoc</title>
<link rel="icon" type="image/png" href="{ASSETS}/favicon.png">
</head><body style="margin:0">
<redoc spec-url="{OPENAPI_PATH}"></redoc>
<script src="{ASSETS}/redoc.standalone.js"></script>
</body></html>
"""


def asset_folder() -> Path:
    """The folder of the packaged Swagger UI and ReDoc files."""
    return Path(str(files("fastapi_offline") / "static"))


def _page(html: str) -> HTMLResponse:
    return HTMLResponse(html, headers={"Content-Security-Policy": CSP})


@router.get("/api/docs", response_class=HTMLResponse)
def swagger_ui() -> Response:
    return _page(_SWAGGER)


@router.get("/api/redoc", response_class=HTMLResponse)
def redoc() -> Response:
    return _page(_REDOC)


@router.get(ASSETS + "/{name}")
def docs_asset(name: Annotated[str, PathParam()]) -> Response:
    """A file of the viewers (behind the login like the pages; cached for a day)."""
    if name not in _ASSET_FILES:
        raise HTTPException(404, f"No API docs asset {name!r}.")
    return FileResponse(asset_folder() / name, headers={"Cache-Control": "private, max-age=86400"})
