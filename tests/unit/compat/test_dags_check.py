"""`statewright dags check`: per file whether it loads, its DAGs, what statewright lacks."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from statewright.cli.main import cli
from statewright.compat.airflow.check import check_path
from statewright.compat.airflow.scan import scan_source

FILES = {
    "good.py": """
        import pendulum
        from airflow.sdk import DAG, task
        from airflow.providers.standard.operators.empty import EmptyOperator
        with DAG("good", schedule=None, start_date=pendulum.datetime(2024, 1, 1, tz="UTC")):
            @task.branch
            def pick():
                return "a"
            pick() >> [EmptyOperator(task_id="a"), EmptyOperator(task_id="b")]
    """,
    "provider.py": """
        from airflow.sdk import DAG
        from airflow.providers.google.cloud.operators.bigquery import BigQueryInsertJobOperator
    """,
    "name.py": """
        from airflow.sdk import DAG, ObjectStoragePath, get_parsing_context, task
        base = ObjectStoragePath("s3://bucket/")
    """,
    "mixed.py": """
        from airflow.sdk import DAG
        from statewright.sdk import EmptyOperator
        with DAG("mixed", schedule=None):
            EmptyOperator(task_id="e")
    """,
    "broken.py": "def broken(:\n",
    "_helper.py": "raise RuntimeError('not a DAG file: never imported')\n",
}


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    for name, source in FILES.items():
        (tmp_path / name).write_text(textwrap.dedent(source))
    return tmp_path


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args),
                              env={"STATEWRIGHT_AIRFLOW_COMPAT": "", **(env or {})})


def test_check_reports_each_file_through_the_compat_layer(folder: Path) -> None:
    report = {Path(f.path).name: f for f in check_path(folder, airflow=True).files}
    assert sorted(report) == ["broken.py", "good.py", "mixed.py", "name.py", "provider.py"]
    good = report["good.py"]
    assert good.loads and good.dags == {"good": 3} and good.missing == []
    assert "branching" in good.features
    provider = report["provider.py"]
    assert not provider.loads and "apache-airflow-providers-google" in (provider.error or "")
    assert provider.missing == ["airflow.providers.google.cloud.operators.bigquery (module)"]
    name = report["name.py"]
    assert not name.loads and name.missing == ["airflow.sdk.get_parsing_context"]
    assert "object storage" in name.features
    assert report["mixed.py"].loads and "imports both airflow and statewright" in \
        report["mixed.py"].notes[0]
    assert not report["broken.py"].loads and "SyntaxError" in (report["broken.py"].error or "")


def test_cli_json_and_summary(folder: Path) -> None:
    result = run("dags", "check", str(folder), "--airflow", "-o", "json")
    assert result.exit_code == 1  # not every file loads
    body = json.loads(result.output)
    assert body["summary"] == {"loading": 2, "total": 5}
    by_name = {Path(f["path"]).name: f for f in body["files"]}
    assert by_name["good.py"]["dags"] == {"good": 3}
    assert by_name["name.py"]["missing"] == ["airflow.sdk.get_parsing_context"]


def test_cli_table_says_what_is_missing_and_the_summary(folder: Path) -> None:
    result = run("dags", "check", str(folder), "--airflow")
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "2 of 5 files load" in text
    assert "SyntaxError" in text and "imports both airflow and statewright" in text


def test_without_the_layer_airflow_files_fail_and_say_how_to_check(folder: Path) -> None:
    body = json.loads(run("dags", "check", str(folder), "-o", "json").output)
    good = next(f for f in body["files"] if f["path"].endswith("good.py"))
    assert not good["loads"] and "STATEWRIGHT_AIRFLOW_COMPAT=true" in good["error"]
    assert any("--airflow" in note for note in good["notes"])
    switched = json.loads(run("dags", "check", str(folder), "-o", "json",
                              env={"STATEWRIGHT_AIRFLOW_COMPAT": "true"}).output)
    assert switched["summary"]["loading"] == 2


def test_one_file_and_all_loading_exits_zero(folder: Path) -> None:
    result = run("dags", "check", str(folder / "good.py"), "--airflow", "-o", "json")
    assert result.exit_code == 0 and json.loads(result.output)["summary"] == {
        "loading": 1, "total": 1}


def test_a_path_that_does_not_exist(tmp_path: Path) -> None:
    result = run("dags", "check", str(tmp_path / "nope"))
    assert result.exit_code != 0 and "is neither a file nor a folder" in result.output


def test_scan_finds_airflow_names_features_and_statewright_imports() -> None:
    scan = scan_source(textwrap.dedent("""
        import airflow.sdk
        from airflow.sdk import Param, TaskGroup
        from statewright.sdk import task
        x = task.expand(n=[1])
        cmd = "echo {{ ds }}"
    """))
    assert scan.airflow_imports == [("airflow.sdk", None), ("airflow.sdk", "Param"),
                                    ("airflow.sdk", "TaskGroup")]
    assert scan.imports_statewright
    assert {"params", "task groups", "dynamic task mapping", "Jinja templating"} <= scan.features


def test_an_example_plugins_import_is_known_where_the_plugins_folder_has_the_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = textwrap.dedent("""
        from airflow.example_dags.plugins.workday import AfterWorkdayTimetable
        from airflow.example_dags.plugins import event_listener
    """)
    monkeypatch.setenv("STATEWRIGHT_PLUGINS_FOLDER", str(tmp_path))
    assert scan_source(source).missing() == [
        "airflow.example_dags.plugins.workday (module)",
        "airflow.example_dags.plugins.event_listener"]
    (tmp_path / "workday.py").write_text("class AfterWorkdayTimetable: ...\n")
    (tmp_path / "event_listener.py").write_text("")
    assert scan_source(source).missing() == []
