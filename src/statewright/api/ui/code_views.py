"""The code view of a DAG: the source of its file at a chosen version, highlighted on the server
by Pygments (which escapes the code: nothing from the file is ever taken as HTML)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup

from statewright.api import reads, version_reads
from statewright.api.deps import reading
from statewright.api.errors import NotFound

router = APIRouter(include_in_schema=False)


def highlighted(source: str) -> Markup:
    """The source as HTML: Pygments escapes every token (``<``, ``&``, quotes). Pygments (2
    MiB) is loaded by the first code page shown, not by the API's process at start."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    return Markup(highlight(source, PythonLexer(), HtmlFormatter(linenos="table")))


@router.get("/dags/{dag_id}/code", response_class=HTMLResponse)
def code_page(request: Request, dag_id: str,
              version: Annotated[int | None, Query(ge=1)] = None) -> Response:
    from statewright.api.ui.views import _not_found, _page

    try:
        with reading(request) as conn:
            dag = reads.get_dag(conn, dag_id)
            versions = version_reads.list_versions(conn, dag_id)
            source = version_reads.get_source(conn, dag_id, version)
    except NotFound as exc:
        return _not_found(request, exc)
    return _page(request, "code.html", title=f"Code · {dag_id} · statewright", page="dag_code",
                 dag=dag, versions=versions.dag_versions, source=source,
                 code=highlighted(source.content))
