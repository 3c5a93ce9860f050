"""The DAG details page and ``GET /dags/{dag_id}/details``: doc_md as sanitized Markdown, the
params with their defaults and descriptions, the schedule in words and its next runs,
default_args, owners, tags and the file.

doc_md comes from a DAG file, so it is rendered by markdown-it-py with raw HTML turned off and
the result passed through nh3 (Ammonia) with an allowlist of tags and attributes: no script,
no style, no event handler, links only to http(s) and mailto with ``rel="noopener noreferrer"``.
"""

from __future__ import annotations

import functools
import re
from datetime import datetime
from typing import Any

import nh3
from sqlalchemy import Connection

from statewright.api import reads
from statewright.api import schemas as s
from statewright.core.errors import DagDefinitionError
from statewright.core.schedules import DagRunInfo
from statewright.services.scheduler.dag_schedule import schedule_spec
from statewright.services.timetable_view import schedule_words

NEXT_RUNS = 5
_TAGS = {"a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "dl", "dt", "em",
         "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "li", "ol", "p", "pre", "s", "strong",
         "sub", "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul"}
_ATTRIBUTES = {"a": {"href", "title"}, "abbr": {"title"}, "td": {"style"}, "th": {"style"},
               "ol": {"start"}, "code": {"class"}}
_ALIGN = re.compile(r'\s*style="text-align:\s*(left|right|center);?"')


@functools.cache
def _markdown() -> Any:
    """The renderer, made on first use: markdown-it-py is 2 MiB in the API's process, which
    may never render a DAG's doc_md."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table") \
        .enable("strikethrough")


def render_doc_md(text: str | None) -> str | None:
    """Markdown → HTML that is safe to put into the page."""
    if not text:
        return None
    html = _markdown().render(text)
    clean = nh3.clean(html, tags=_TAGS, attributes=_ATTRIBUTES, url_schemes={"http", "https",
                                                                            "mailto"},
                      link_rel="noopener noreferrer", filter_style_properties={"text-align"})
    # a table column's alignment as a class: the page's CSP refuses style attributes
    return _ALIGN.sub(lambda m: f' class="align-{m.group(1)}"', clean)


def _next_runs(serialized: dict[str, Any], first: DagRunInfo | None, now: datetime
               ) -> list[datetime]:
    """The next ``NEXT_RUNS`` logical dates: from the DAG's next run as the scheduler set it
    (or, before it has, as its timetable gives it at ``now``)."""
    try:
        spec = schedule_spec(serialized)
    except DagDefinitionError:  # a schedule the scheduler rejects: no runs after the first
        return [] if first is None else [first.logical_date]
    if first is None and spec.timetable.periodic:
        first = spec.timetable.next_run(
            last_automated=None, start_date=spec.start_date, end_date=spec.end_date,
            catchup=False, now=now)
    if first is None:
        return []
    runs, info = [first.logical_date], first
    while len(runs) < NEXT_RUNS:
        nxt = spec.timetable.next_run(last_automated=info, start_date=spec.start_date,
                                              end_date=spec.end_date, catchup=True, now=now)
        if nxt is None or nxt.logical_date <= info.logical_date:
            break
        runs.append(nxt.logical_date)
        info = nxt
    return runs


def _params(serialized: dict[str, Any]) -> list[s.ParamInfo]:
    spec = serialized.get("params_spec") or {}
    return [s.ParamInfo(name=name, value=p.get("value"), has_default=bool(p.get("has_default",
                                                                                 True)),
                        description=p.get("description"), schema=p.get("schema") or {})
            for name, p in spec.items()]


def dag_details(conn: Connection, dag_id: str, now: datetime,
                detail: s.DagDetail | None = None) -> s.DagDetails:
    """The DAG's details; ``detail``: its ``reads.get_dag`` when the caller has read it already
    (the DAG page: its 1,000 tasks are not read and validated twice)."""
    row = reads.dag_row(conn, dag_id)
    ser = dict(row.serialized or {})
    detail = detail if detail is not None else reads.get_dag(conn, dag_id)
    first = None
    if row.next_dagrun is not None:
        first = DagRunInfo(row.next_dagrun, row.next_dagrun_data_interval_start or row.next_dagrun,
                           row.next_dagrun_data_interval_end or row.next_dagrun,
                           row.next_dagrun_create_after or row.next_dagrun)
    return s.DagDetails(
        **detail.model_dump(), doc_md_html=render_doc_md(ser.get("doc_md")),
        timetable_summary=row.schedule_summary or (ser.get("schedule") if isinstance(
            ser.get("schedule"), str) else None),
        timetable_description=schedule_words(ser),
        next_dagruns=_next_runs(ser, first, now),
        default_args=dict(ser.get("default_args") or {}), param_details=_params(ser))
