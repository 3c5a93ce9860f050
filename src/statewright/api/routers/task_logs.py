"""The log of one try, for the UI's log viewer: read on from a byte offset (``…/chunk``: a
follower sends the ``next_offset`` it was given, so nothing is sent twice) and downloaded whole
(``…/download``, as a file)."""

from __future__ import annotations

import os
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import FileResponse

from statewright.api import reads
from statewright.api import schemas as s
from statewright.api.deps import reading, settings_of
from statewright.api.errors import BadRequest
from statewright.core.states import TaskInstanceState as S

router = APIRouter(tags=["Task instances"])
_TI = "/dags/{dag_id}/dagRuns/{run_id}/taskInstances"
_ONE = _TI + "/{task_id}/logs/{try_number}"
_MAPPED = _TI + "/{task_id}/{map_index:int}/logs/{try_number}"
_MI = Annotated[int, Path(ge=0, description="The map index of a mapped task's instance.")]
_TRY = Annotated[int, Path(ge=1, description="The try (1 is the first).")]
_OFFSET = Annotated[int, Query(ge=0, le=2**53, description="Read on from this byte (the "
                               "next_offset of the previous chunk; 0: from the start).")]
_CHUNK = Annotated[int, Query(ge=1, le=5_000_000, description="At most this many bytes.")]
WRITING = frozenset({S.QUEUED, S.RUNNING, S.DEFERRED, S.RESTARTING, S.UP_FOR_RESCHEDULE,
                     S.AWAITING_INPUT})
"""The states in which the current try may still write to its log."""


def _file(request: Request, dag_id: str, run_id: str, task_id: str, try_number: int,
          map_index: int) -> tuple[str, Any]:
    with reading(request) as conn:
        return reads.task_log_file(conn, dag_id, run_id, task_id, try_number,
                                   logs_folder=settings_of(request).logs_folder,
                                   map_index=map_index)


@router.get(_MAPPED + "/chunk", response_model=s.TaskLogChunk)
def mapped_log_chunk(request: Request, dag_id: str, run_id: str, task_id: str, map_index: _MI,
                     try_number: _TRY, offset: _OFFSET = 0, max_bytes: _CHUNK = 1_000_000
                     ) -> s.TaskLogChunk:
    """The log of one try from ``offset``, in whole lines, with the offset to read on from and
    whether the try may still write more (``writing``: follow it)."""
    with reading(request) as conn:
        path, row, missing = reads.task_log_file_or_why(
            conn, dag_id, run_id, task_id, try_number,
            logs_folder=settings_of(request).logs_folder, map_index=map_index)
    writing = try_number == row.try_number and row.state in WRITING
    if path is None:  # no file (yet): an empty part saying why, which a follower reads on from
        return s.TaskLogChunk(dag_id=dag_id, dag_run_id=run_id, task_id=task_id,
                              map_index=map_index, try_number=try_number, offset=0,
                              next_offset=0, size=0, writing=writing, content="",
                              missing=missing)
    size = os.path.getsize(path)
    if offset > size:
        raise BadRequest(f"The log of try {try_number} has {size} bytes: offset {offset} is "
                         "past its end. Read from 0, or from the next_offset a chunk gave.")
    with open(path, "rb") as fh:
        fh.seek(offset)
        data = fh.read(max_bytes)
    end = offset + len(data)
    if data and not data.endswith(b"\n") and (end < size or writing):
        cut = data.rfind(b"\n") + 1  # a line being written is sent once it is whole
        if cut > 0:
            data = data[:cut]
    return s.TaskLogChunk(dag_id=dag_id, dag_run_id=run_id, task_id=task_id,
                          map_index=map_index, try_number=try_number, offset=offset,
                          next_offset=offset + len(data), size=size, writing=writing,
                          content=data.decode("utf-8", errors="replace"))


@router.get(_ONE + "/chunk", response_model=s.TaskLogChunk)
def log_chunk(request: Request, dag_id: str, run_id: str, task_id: str, try_number: _TRY,
              offset: _OFFSET = 0, max_bytes: _CHUNK = 1_000_000) -> s.TaskLogChunk:
    """The log of one try of the task instance (map index -1) from ``offset``."""
    return mapped_log_chunk(request, dag_id, run_id, task_id, -1, try_number, offset, max_bytes)


@router.get(_MAPPED + "/download", response_class=FileResponse,
            responses={200: {"content": {"text/plain": {}}}})
def mapped_log_download(request: Request, dag_id: str, run_id: str, task_id: str,
                        map_index: _MI, try_number: _TRY) -> FileResponse:
    """The whole log file of one try, as an attachment."""
    path, _ = _file(request, dag_id, run_id, task_id, try_number, map_index)
    index = f"_map{map_index}" if map_index >= 0 else ""
    name = f"{dag_id}__{run_id}__{task_id}{index}__try{try_number}.log"
    return FileResponse(path, media_type="text/plain; charset=utf-8",
                        filename="".join(c if c.isalnum() or c in "._-" else "_" for c in name))


@router.get(_ONE + "/download", response_class=FileResponse,
            responses={200: {"content": {"text/plain": {}}}})
def log_download(request: Request, dag_id: str, run_id: str, task_id: str,
                 try_number: _TRY) -> FileResponse:
    """The whole log file of one try of the task instance (map index -1), as an attachment."""
    return mapped_log_download(request, dag_id, run_id, task_id, -1, try_number)
