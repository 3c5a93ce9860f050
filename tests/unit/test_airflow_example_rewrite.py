"""The test-time rewrite of Airflow's example files (``tests/airflow_examples.py``): only the
Airflow import lines change, by the table; anything it cannot rewrite is named, never skipped."""

from __future__ import annotations

import pytest
from tests.airflow_examples import (
    AIRFLOW_TO_STATEWRIGHT,
    UNEDITED,
    UnmappedAirflowImport,
    airflow_example,
    airflow_imports,
    with_statewright_imports,
)

USED = [  # the unedited files that tests run through statewright's own SDK
    "core/example_asset_alias.py", "core/example_asset_alias_with_no_taskflow.py",
    "core/example_asset_decorator.py", "core/example_asset_with_watchers.py",
    "core/example_assets.py", "core/example_branch_labels.py",
    "core/example_dynamic_task_mapping.py",
    "core/example_dynamic_task_mapping_with_no_taskflow_operators.py",
    "core/example_task_group.py", "core/example_task_group_decorator.py",
    "core/example_xcomargs.py", "core/tutorial.py", "core/tutorial_taskflow_api.py",
    "standard/example_sensor_decorator.py",
]


@pytest.mark.parametrize("name", USED)
def test_only_airflow_import_lines_change_and_by_the_table(name: str) -> None:
    before = (UNEDITED / name).read_text().splitlines()
    after = airflow_example(name).read_text().splitlines()
    assert airflow_imports("\n".join(before)), f"{name} imports nothing from Airflow"
    assert airflow_imports("\n".join(after)) == []
    assert len(after) == len(before)
    changed = [(b, a) for b, a in zip(before, after, strict=True) if b != a]
    assert changed
    for b, a in changed:
        airflow_module = b.split()[1]
        assert b.startswith("from airflow") and b.endswith(a.split(" import ", 1)[1])
        assert a == b.replace(airflow_module, AIRFLOW_TO_STATEWRIGHT[airflow_module], 1)


def test_an_unmapped_airflow_module_is_named_with_its_line() -> None:
    text = "import pendulum\nfrom airflow.providers.http.operators.http import HttpOperator\n"
    with pytest.raises(UnmappedAirflowImport, match=r"x\.py, line 2: .*"
                       r"'airflow\.providers\.http\.operators\.http'"):
        with_statewright_imports(text, source="x.py")


def test_the_bare_airflow_package_is_not_guessed() -> None:
    with pytest.raises(UnmappedAirflowImport, match="'airflow'"):
        with_statewright_imports("from airflow import DAG\n")


def test_import_as_is_rewritten_but_a_plain_import_is_refused() -> None:
    assert (with_statewright_imports("def f():\n    import airflow.sdk as sdk  # authoring\n")
            == "def f():\n    import statewright.sdk as sdk  # authoring\n")
    with pytest.raises(UnmappedAirflowImport, match="without 'as NAME'"):
        with_statewright_imports("import airflow.sdk\n", source="y.py")


def test_an_airflow_import_the_line_rewrite_misses_fails_the_rewrite() -> None:
    with pytest.raises(AssertionError, match=r"still imports \['airflow\.sdk'\]"):
        with_statewright_imports("x = 1; from airflow.sdk import DAG\n", source="z.py")


def test_lines_that_are_not_import_statements_are_kept() -> None:
    text = ('"""An example.\n\nfrom airflow.sdk import DAG\n"""\n'
            'URL = "https://airflow.apache.org"\nfrom airflow.sdk import (\n    DAG,\n)\n')
    assert with_statewright_imports(text) == text.replace(
        "from airflow.sdk import (", "from statewright.sdk import (")
