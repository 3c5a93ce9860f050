"""The web UI's static files (scripts, styles, the vendored libraries), served so that a browser
fetches each version of a file once.

A page names every file with its content's version (``/static/app.js?v=<hash>``, through the
templates' ``url_for('static', path=…)``). A request carrying the file's current version is
answered with ``Cache-Control: public, max-age=31536000, immutable``: the browser keeps it and
asks again only for a new version, which an upgrade gives a new address. A request without a
version, or with an old one, is answered with ``no-cache``: the browser may keep it but asks
first, with the ``ETag``, and gets a 304 when nothing changed. Without these headers a browser
guessed how long a file stays fresh from its modification time: scripts were asked for again
on many opens of a page, or an upgraded page ran a script it had kept from before.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from jinja2 import pass_context
from starlette.datastructures import URL, QueryParams
from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates
from starlette.types import Scope

__all__ = ["IMMUTABLE", "REVALIDATE", "STATIC_DIR", "StaticAssets", "install_versioned_urls",
           "version_of"]

STATIC_DIR = Path(__file__).resolve().parent / "static"
IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"
_VERSIONS: dict[str, tuple[int, int, str]] = {}  # path → (mtime_ns, size, version)


def version_of(full: Path) -> str | None:
    """The first 16 hex digits of the SHA-256 of the file's content (None when there is no such
    file), read again only when the file's modification time or size changed."""
    try:
        stat = full.stat()
    except OSError:
        return None
    key = str(full)
    known = _VERSIONS.get(key)
    if known is not None and known[:2] == (stat.st_mtime_ns, stat.st_size):
        return known[2]
    version = hashlib.sha256(full.read_bytes()).hexdigest()[:16]
    _VERSIONS[key] = (stat.st_mtime_ns, stat.st_size, version)
    return version


class StaticAssets(StaticFiles):
    """``StaticFiles`` (ETag, Last-Modified, 304) with a ``Cache-Control`` per request."""

    def file_response(self, full_path: str | os.PathLike[str], stat_result: os.stat_result,
                      scope: Scope, status_code: int = 200) -> Response:
        response = super().file_response(full_path, stat_result, scope, status_code)
        asked = _query_version(scope)
        fresh = asked is not None and asked == version_of(Path(full_path))
        response.headers["Cache-Control"] = IMMUTABLE if fresh else REVALIDATE
        return response


def _query_version(scope: Scope) -> str | None:
    return QueryParams(scope.get("query_string", b"")).get("v")


def install_versioned_urls(templates: Jinja2Templates, directory: Path) -> None:
    """Make the templates' ``url_for('static', path=…)`` add the file's version (``?v=…``)."""

    @pass_context
    def url_for(context: dict[str, Any], name: str, /, **path_params: Any) -> URL:
        url = context["request"].url_for(name, **path_params)
        if name != "static":
            return url  # type: ignore[no-any-return]
        version = version_of(directory / str(path_params.get("path", "")))
        return url if version is None else url.include_query_params(v=version)  # type: ignore[no-any-return]

    templates.env.globals["url_for"] = url_for
