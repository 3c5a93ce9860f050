"""The log viewer's reads: a try's log read on from a byte offset in whole lines (nothing sent
twice), downloaded whole as a file, and bad offsets, tries and task instances answered 4xx."""

from __future__ import annotations

from api_helpers import run_url
from fastapi.testclient import TestClient
from sqlalchemy import Engine, update

from statewright.db.engine import transaction
from statewright.db.tables import task_instance


def _base(run: tuple[str, str], task: str = "extract") -> str:
    return f"{run_url(*run)}/taskInstances/{task}/logs"


def test_a_log_is_read_on_from_an_offset_without_repeats(
        client: TestClient, failed_run: tuple[str, str]) -> None:
    whole = client.get(f"{_base(failed_run)}/1").json()["content"]
    first = client.get(f"{_base(failed_run)}/1/chunk", params={"max_bytes": 300}).json()
    assert first["offset"] == 0 and 0 < first["next_offset"] <= 300 < first["size"]
    assert first["content"].endswith("\n") and whole.startswith(first["content"])
    assert first["writing"] is False and first["size"] == len(whole.encode())
    parts, offset = [first["content"]], first["next_offset"]
    while offset < first["size"]:
        chunk = client.get(f"{_base(failed_run)}/1/chunk",
                           params={"offset": offset, "max_bytes": 300}).json()
        assert chunk["offset"] == offset and chunk["next_offset"] > offset
        parts.append(chunk["content"])
        offset = chunk["next_offset"]
    assert "".join(parts) == whole  # every byte once, in order
    end = client.get(f"{_base(failed_run)}/1/chunk", params={"offset": offset}).json()
    assert end["content"] == "" and end["next_offset"] == offset


def test_a_running_try_sends_only_whole_lines(client: TestClient, engine: Engine,
                                              failed_run: tuple[str, str]) -> None:
    log = client.get(f"{_base(failed_run)}/2").json()
    with transaction(engine) as conn:
        conn.execute(update(task_instance).where(task_instance.c.task_id == "extract")
                     .values(state="running"))
    logs_folder = client.app.state.settings.logs_folder  # type: ignore[attr-defined]
    with open(logs_folder / log["path"], "ab") as fh:
        fh.write(b"[t] INFO still writ")
    chunk = client.get(f"{_base(failed_run)}/2/chunk").json()
    assert chunk["writing"] is True and chunk["content"] == log["content"]
    assert chunk["next_offset"] == log["size"] and chunk["size"] == log["size"] + 19
    with open(logs_folder / log["path"], "ab") as fh:
        fh.write(b"ing\n")
    more = client.get(f"{_base(failed_run)}/2/chunk",
                      params={"offset": chunk["next_offset"]}).json()
    assert more["content"] == "[t] INFO still writing\n"
    older = client.get(f"{_base(failed_run)}/1/chunk").json()
    assert older["writing"] is False  # an earlier try writes no more


def test_a_log_downloads_whole_as_a_file(client: TestClient,
                                         failed_run: tuple[str, str]) -> None:
    whole = client.get(f"{_base(failed_run)}/1").json()["content"]
    answer = client.get(f"{_base(failed_run)}/1/download")
    assert answer.status_code == 200 and answer.text == whole
    disposition = answer.headers["content-disposition"]
    assert disposition.startswith("attachment;") and "extract__try1.log" in disposition
    assert answer.headers["content-type"].startswith("text/plain")


def test_bad_log_reads_are_refused(client: TestClient, failed_run: tuple[str, str]) -> None:
    size = client.get(f"{_base(failed_run)}/1").json()["size"]
    past = client.get(f"{_base(failed_run)}/1/chunk", params={"offset": size + 1})
    assert past.status_code == 422 and "past its end" in past.json()["detail"]
    assert client.get(f"{_base(failed_run)}/1/chunk", params={"offset": -1}).status_code == 422
    assert client.get(f"{_base(failed_run)}/1/chunk",
                      params={"max_bytes": 0}).status_code == 422
    assert client.get(f"{_base(failed_run)}/9/chunk").status_code == 404
    assert client.get(f"{_base(failed_run)}/0/download").status_code == 422
    assert client.get(f"{_base(failed_run)}/9/download").status_code == 404
    assert client.get(f"{_base(failed_run, 'nope')}/1/download").status_code == 404
    assert client.get(f"{_base(failed_run)}/1/chunk".replace("extract", "extract/3")
                      ).status_code == 404
    unknown = client.get(f"{_base(('etl', 'no_such_run'))}/1/chunk")
    assert unknown.status_code == 404 and "no_such_run" in unknown.json()["detail"]


def test_a_try_without_a_log_file_is_an_empty_part_saying_why(
        client: TestClient, failed_run: tuple[str, str]) -> None:
    """An EmptyOperator's try runs no process (the scheduler sets it to success), so it has no
    log file; a try whose file is gone reads the same: 200, empty, and the reason."""
    logs_folder = client.app.state.settings.logs_folder  # type: ignore[attr-defined]
    log = client.get(f"{_base(failed_run)}/1").json()
    (logs_folder / log["path"]).unlink()
    chunk = client.get(f"{_base(failed_run)}/1/chunk")
    assert chunk.status_code == 200, chunk.text
    body = chunk.json()
    assert body["content"] == "" and body["size"] == 0 and body["next_offset"] == 0
    assert body["writing"] is False and "No log file for try 1" in body["missing"]
    assert client.get(f"{_base(failed_run)}/1/download").status_code == 404  # nothing to send
    assert client.get(f"{_base(failed_run)}/9/chunk").status_code == 404  # no such try
