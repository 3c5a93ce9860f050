"""Prefect's artifacts (``prefect.artifacts``): Markdown, tables, links, progress and images
published from a task run or a flow run.

Each is stored with its run: an XCom row of the task run (``artifact:<key>``, or
``artifact:<type>-<n>`` without a key) — the UI's task-instance panel and the XCom API list it —
or, created in a flow's body, of the flow run under the task id ``__flow_run__``. Outside any run
it is kept in the process only.
"""

from __future__ import annotations

import itertools
import re
import threading
import uuid
from typing import Any

from statewright.flows import extras

__all__ = ["create_image_artifact", "create_link_artifact", "create_markdown_artifact",
           "create_progress_artifact", "create_table_artifact", "update_progress_artifact"]

_KEY = re.compile(r"^[a-z0-9-]+$")
_counter = itertools.count(1)
_lock = threading.Lock()
_ids: dict[uuid.UUID, tuple[Any, ...]] = {}


def _create(type_: str, data: Any, key: str | None, description: str | None) -> uuid.UUID:
    if key is not None and not _KEY.match(key):
        raise ValueError("Artifact key must only contain lowercase letters, numbers, and "
                         f"dashes; got {key!r}.")
    run_pk, task_id, _flow = extras.run_keys()
    artifact_id = uuid.uuid4()
    with _lock:
        xkey = f"artifact:{key}" if key else f"artifact:{type_}-{next(_counter)}"
    value = {"id": str(artifact_id), "type": type_, "key": key, "description": description,
             "data": data}
    extras.call("artifact", (run_pk, task_id, xkey, value))
    _ids[artifact_id] = (run_pk, task_id, xkey, value)
    return artifact_id


def create_markdown_artifact(markdown: str, key: str | None = None,
                             description: str | None = None) -> uuid.UUID:
    return _create("markdown", str(markdown), key, description)


def create_table_artifact(table: dict[str, list[Any]] | list[dict[str, Any]] | list[list[Any]],
                          key: str | None = None, description: str | None = None) -> uuid.UUID:
    if not isinstance(table, dict | list):
        raise TypeError(f"A table artifact is a dict of columns or a list of rows; got "
                        f"{type(table).__name__}.")
    return _create("table", table, key, description)


def create_link_artifact(link: str, link_text: str | None = None, key: str | None = None,
                         description: str | None = None) -> uuid.UUID:
    text = f"[{link_text}]({link})" if link_text else link
    return _create("link", text, key, description)


def create_image_artifact(image_url: str, key: str | None = None,
                          description: str | None = None) -> uuid.UUID:
    return _create("image", image_url, key, description)


def create_progress_artifact(progress: float, key: str | None = None,
                             description: str | None = None) -> uuid.UUID:
    return _create("progress", float(progress), key, description)


def update_progress_artifact(artifact_id: uuid.UUID, progress: float,
                             description: str | None = None) -> uuid.UUID:
    if artifact_id not in _ids:
        raise ValueError(f"No progress artifact {artifact_id} was created in this process.")
    run_pk, task_id, xkey, value = _ids[artifact_id]
    value = {**value, "data": float(progress),
             "description": description if description is not None else value["description"]}
    extras.call("artifact", (run_pk, task_id, xkey, value))
    _ids[artifact_id] = (run_pk, task_id, xkey, value)
    return artifact_id


def artifacts_of(run_pk: int) -> list[dict[str, Any]]:
    """The artifacts of a flow run (its own and its task runs'), in creation order."""
    found: list[dict[str, Any]] = extras.call("artifacts", run_pk)
    return found
