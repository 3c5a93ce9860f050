"""The import server: a lost server is started again; its children leave nothing behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from statewright.services.dag_processor.importer import ImportServer

GOOD = ("from statewright.sdk import DAG, EmptyOperator\n"
        "with DAG('srv'):\n    EmptyOperator(task_id='a')\n")


def test_a_lost_server_is_started_again(tmp_path: Path) -> None:
    path = tmp_path / "srv.py"
    path.write_text(GOOD)
    server = ImportServer()
    try:
        first = server.import_files([str(path)], timeout=10, parallelism=1)[str(path)]
        assert first.error is None and [d["dag_id"] for d in first.dags] == ["srv"]
        assert server._process is not None
        server._process.kill()
        server._process.wait(5)
        again = server.import_files([str(path)], timeout=10, parallelism=1)[str(path)]
        assert again.error is None and [d["dag_id"] for d in again.dags] == ["srv"]
    finally:
        server.close()
    assert server._process is None


def test_output_of_dag_files_does_not_reach_the_caller(
        tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "loud.py"
    path.write_text("print('LOUD OUTPUT')\nimport sys\nprint('LOUD ERR', file=sys.stderr)\n" + GOOD)
    server = ImportServer()
    try:
        outcome = server.import_files([str(path)], timeout=10, parallelism=1)[str(path)]
    finally:
        server.close()
    assert outcome.error is None
    captured = capfd.readouterr()
    assert "LOUD" not in captured.out and "LOUD" not in captured.err
