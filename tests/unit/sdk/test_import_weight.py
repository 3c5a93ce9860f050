"""What a process pays to import the SDK or the API: the libraries only some DAGs or pages use
are loaded when they are first used, not by every process (each task process, the DAG-file
importer, the API's process)."""

from __future__ import annotations

import json
import subprocess
import sys

LAZY = ("httpx", "rich", "pygments", "markdown_it", "jsonschema")


def _loaded_after(code: str) -> dict[str, bool]:
    probe = (f"import sys\n{code}\n"
             f"import json; print(json.dumps({{m: m in sys.modules for m in {LAZY!r}}}))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         check=True, timeout=120)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_importing_the_sdk_loads_no_http_client_nor_schema_validator() -> None:
    loaded = _loaded_after("import statewright.sdk, statewright.sdk.sensors, "
                           "statewright.sdk.triggers, statewright.sdk.hooks")
    assert not any(loaded.values()), loaded


def test_the_api_and_a_task_process_load_them_only_when_used() -> None:
    loaded = _loaded_after("import statewright.api.app, "
                           "statewright.services.worker.task_runner")
    assert not any(loaded.values()), loaded


def test_the_http_names_still_import_from_their_packages() -> None:
    loaded = _loaded_after(
        "from statewright.sdk.hooks import HttpHook\n"
        "from statewright.sdk.sensors import HttpSensor\n"
        "from statewright.sdk.triggers import HttpTrigger\n"
        "from statewright.sdk.http_hook import HttpHook as H\n"
        "from statewright.sdk.sensors.http import HttpSensor as S\n"
        "from statewright.sdk.triggers.http import HttpTrigger as T\n"
        "assert (HttpHook, HttpSensor, HttpTrigger) == (H, S, T)\n"
        "from statewright.sdk.sensors import *\n"
        "assert HttpSensor is S")
    assert loaded["httpx"]


def test_a_missing_name_is_still_an_attribute_error() -> None:
    import pytest

    import statewright.sdk.hooks as hooks
    import statewright.sdk.sensors as sensors
    import statewright.sdk.triggers as triggers

    for module in (hooks, sensors, triggers):
        with pytest.raises(AttributeError, match="no attribute 'Nope'"):
            module.Nope  # noqa: B018


def test_doc_md_and_run_input_still_work_after_a_lazy_load() -> None:
    from statewright.api.dag_details import render_doc_md
    from statewright.services.flows.run_input import input_problem

    assert render_doc_md("# Title\n\n~~gone~~ | a |\n") is not None
    assert "<h1>Title</h1>" in (render_doc_md("# Title") or "")
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert input_problem({"n": 1}, schema) is None
    problem = input_problem({"n": "x"}, schema)
    assert problem is not None and "n" in problem
