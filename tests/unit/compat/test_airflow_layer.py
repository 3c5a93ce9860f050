"""The Airflow compatibility layer: alias modules, lazy names, clear errors, no shadowing."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

import statewright.sdk
from statewright.compat import airflow as compat
from statewright.compat.airflow import AirflowModuleMissing, AirflowNameMissing
from statewright.compat.airflow.adapt import original_of
from statewright.sdk.loader import load_dag_file


@pytest.fixture
def layer() -> Iterator[None]:
    with compat.activated():
        yield


def write(tmp_path: Path, name: str, source: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(source))
    return path


def test_airflow_names_are_statewrights_objects(layer: None) -> None:
    from airflow import DAG as airflow2_dag
    from airflow.exceptions import AirflowSkipException
    from airflow.models.baseoperator import BaseOperator
    from airflow.providers.standard.operators.empty import EmptyOperator
    from airflow.providers.standard.sensors.time_delta import TimeDeltaSensor
    from airflow.sdk import DAG, chain, task
    from airflow.utils.trigger_rule import TriggerRule

    from statewright.core.trigger_rules import TriggerRule as OurTriggerRule
    from statewright.sdk.sensors import TimeDeltaSensor as OurTimeDeltaSensor

    # Airflow 3's modules hand out statewright's classes; Airflow 2's, the same classes taking
    # Airflow 2's argument spellings too (statewright.compat.airflow.adapt).
    assert DAG is statewright.sdk.DAG and original_of(airflow2_dag) is statewright.sdk.DAG
    assert task is statewright.sdk.task and chain is statewright.sdk.chain
    assert original_of(BaseOperator) is statewright.sdk.BaseOperator
    assert EmptyOperator is statewright.sdk.EmptyOperator
    assert AirflowSkipException is statewright.sdk.SkipTask
    assert TriggerRule is OurTriggerRule and TimeDeltaSensor is OurTimeDeltaSensor


def test_a_renamed_name_resolves_to_statewrights_spelling(layer: None) -> None:
    from airflow.exceptions import AirflowException
    from airflow.operators.dummy import DummyOperator

    from statewright.core.errors import StatewrightError

    assert AirflowException is StatewrightError
    assert original_of(DummyOperator) is statewright.sdk.EmptyOperator


def test_names_resolve_lazily_so_new_statewright_names_work(
        layer: None, monkeypatch: pytest.MonkeyPatch) -> None:
    sentinel = type("Later", (), {})
    monkeypatch.setattr(statewright.sdk, "NameAddedLater", sentinel, raising=False)
    from airflow.sdk import NameAddedLater  # type: ignore[attr-defined]

    assert NameAddedLater is sentinel


def test_a_name_statewright_lacks_names_module_name_and_docs(layer: None) -> None:
    with pytest.raises(AirflowNameMissing) as caught:
        from airflow.sdk import get_parsing_context  # noqa: F401
    message = str(caught.value)
    assert "'get_parsing_context'" in message and "airflow.sdk" in message
    assert "docs/coming-from-airflow.md" in message


def test_a_provider_statewright_lacks_names_the_provider_package(layer: None) -> None:
    with pytest.raises(AirflowModuleMissing) as caught:
        import airflow.providers.google.cloud.operators.bigquery  # noqa: F401
    message = str(caught.value)
    assert "apache-airflow-providers-google" in message and "airflow.providers.google" in message
    assert "docs/coming-from-airflow.md" in message
    with pytest.raises(ImportError, match=r"module airflow\.kubernetes\.secret"):
        from airflow.kubernetes.secret import Secret  # noqa: F401


def test_hasattr_on_an_alias_module_stays_a_question(layer: None) -> None:
    import airflow.sdk

    assert not hasattr(airflow.sdk, "_private_thing")
    assert hasattr(airflow.sdk, "DAG")


def test_a_plugins_folder_module_goes_with_the_layer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``airflow.example_dags.plugins.X`` (a plugins-folder file) is the layer's, like an alias:
    it leaves ``sys.modules`` when the layer does, and is loaded afresh next time."""
    write(tmp_path, "shout.py", "WORD = 'hi'\n")
    monkeypatch.setenv("STATEWRIGHT_PLUGINS_FOLDER", str(tmp_path))
    with compat.activated():
        from airflow.example_dags.plugins import shout  # type: ignore[import-not-found]

        assert shout.WORD == "hi"
    assert "airflow.example_dags.plugins.shout" not in sys.modules
    write(tmp_path, "shout.py", "WORD = 'again'\n")
    with compat.activated():
        from airflow.example_dags.plugins import shout as again  # type: ignore[import-not-found]

        assert again.WORD == "again"
    assert not [m for m in sys.modules if m.split(".")[0] == "airflow"]


def test_the_layer_is_off_outside_dag_code() -> None:
    assert not compat.is_active()
    with pytest.raises(ModuleNotFoundError):
        import airflow.sdk  # noqa: F401
    assert not [m for m in sys.modules if m.split(".")[0] == "airflow"]


def test_a_real_airflow_package_is_never_shadowed_outside_dag_loading(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = tmp_path / "site" / "airflow"
    real.mkdir(parents=True)
    (real / "__init__.py").write_text("REAL = True\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    try:
        import airflow

        assert airflow.REAL is True
        with compat.activated():
            import airflow as during

            assert during is not airflow and original_of(during.DAG) is statewright.sdk.DAG
        import airflow as after

        assert after is airflow and sys.modules["airflow"] is airflow
    finally:
        sys.modules.pop("airflow", None)


def test_install_keeps_the_layer_on_until_uninstall() -> None:
    compat.install()
    try:
        with compat.activated():
            pass
        assert compat.is_active()
        from airflow.sdk import DAG

        assert DAG is statewright.sdk.DAG
    finally:
        compat.uninstall()
    assert not compat.is_active() and "airflow.sdk" not in sys.modules


def test_the_switch_loads_an_unedited_airflow_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "af.py", """
        from datetime import datetime
        from airflow.sdk import DAG, task
        from airflow.providers.standard.operators.bash import BashOperator
        with DAG("af", schedule=None, start_date=datetime(2024, 1, 1)):
            @task
            def one():
                return 1
            one() >> BashOperator(task_id="echo", bash_command="echo hi")
    """)
    off = load_dag_file(path)
    assert off.error is not None and "STATEWRIGHT_AIRFLOW_COMPAT=true" in off.error
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    on = load_dag_file(path)
    assert on.error is None and on.dags["af"].task_ids == ["one", "echo"]
    assert not compat.is_active()


def test_a_bad_switch_value_is_the_files_error(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "maybe")
    result = load_dag_file(write(tmp_path, "a.py", "from airflow.sdk import DAG\n"))
    assert result.error is not None
    assert "STATEWRIGHT_AIRFLOW_COMPAT='maybe' is not a boolean" in result.error


def test_a_missing_name_fails_only_its_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    bad = load_dag_file(write(tmp_path, "bad.py", """
        from airflow.sdk import DAG, get_parsing_context
    """))
    provider = load_dag_file(write(tmp_path, "provider.py", """
        from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
    """))
    good = load_dag_file(write(tmp_path, "good.py", """
        from airflow.sdk import DAG
        from airflow.providers.standard.operators.empty import EmptyOperator
        with DAG("good", schedule=None):
            EmptyOperator(task_id="e")
    """))
    assert bad.error and "AirflowNameMissing" in bad.error and "get_parsing_context" in bad.error
    assert "bad.py" in bad.error and "compat/airflow" not in bad.error  # the file's frame only
    assert provider.error and "apache-airflow-providers-cncf-kubernetes" in provider.error
    assert good.error is None and list(good.dags) == ["good"]


def test_a_file_importing_both_airflow_and_statewright_gets_one_set_of_objects(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    result = load_dag_file(write(tmp_path, "mixed.py", """
        from airflow.sdk import DAG
        from statewright.sdk import EmptyOperator, task
        with DAG("mixed", schedule=None):
            @task
            def a():
                return 1
            a() >> EmptyOperator(task_id="b")
    """))
    assert result.error is None
    assert isinstance(result.dags["mixed"], statewright.sdk.DAG)


def test_airflow_imports_inside_a_task_body_work_when_it_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STATEWRIGHT_AIRFLOW_COMPAT", "true")
    result = load_dag_file(write(tmp_path, "inner.py", """
        from airflow.sdk import dag, task

        @dag(schedule=None)
        def inner():
            @task
            def which_date():
                from airflow.sdk import get_current_context
                return get_current_context()["ds"]
            which_date()

        inner()
    """))
    assert result.error is None, result.error
    run = result.dags["inner"].test(logical_date=datetime(2025, 1, 6, tzinfo=UTC))
    assert run.states == {"which_date": "success"}
    assert run.ti("which_date").return_value == "2025-01-06"


def test_star_import_gives_the_public_names(layer: None) -> None:
    names: dict[str, object] = {}
    exec("from airflow.sdk import *", names)
    assert names["DAG"] is statewright.sdk.DAG and names["task"] is statewright.sdk.task
    exceptions: dict[str, object] = {}
    exec("from airflow.exceptions import *", exceptions)
    assert "AirflowSkipException" in exceptions and "AirflowException" in exceptions
    import airflow.sdk

    assert "DAG" in dir(airflow.sdk)


def test_a_dag_file_runs_as_a_script_with_its_own_dag_test(tmp_path: Path) -> None:
    path = write(tmp_path, "script.py", """
        import sys
        from airflow.sdk import DAG, task
        with DAG("script", schedule=None) as dag:
            @task
            def one():
                return 1
            one()
        if __name__ == "__main__":
            print("ran", dag.test().state.value, sys.argv[1:])
    """)
    env = {k: v for k, v in os.environ.items() if k != "STATEWRIGHT_AIRFLOW_COMPAT"}
    done = subprocess.run([sys.executable, "-m", "statewright.compat.airflow", str(path), "x"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert "ran success ['x']" in done.stdout
    usage = subprocess.run([sys.executable, "-m", "statewright.compat.airflow"],
                           capture_output=True, text=True, timeout=60, env=env)
    assert usage.returncode == 2 and "python -m statewright.compat.airflow FILE" in usage.stderr
