"""ExternalPythonOperator, PythonVirtualenvOperator and their decorators: arguments, the callable's
source, the script that calls it, and the virtual environment cache (without building one)."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG, task
from statewright.sdk.operators import (
    BranchExternalPythonOperator,
    BranchPythonVirtualenvOperator,
    ExternalPythonOperator,
    PythonVirtualenvOperator,
    _virtualenv,
)
from statewright.sdk.operators._python_script import (
    SerializerError,
    build_script,
    function_source,
    load_result,
)
from statewright.sdk.operators.python_env import ExternalPythonError


def plain(x, y=1):
    return x + y


def _generator():
    yield 1


def _external(**kwargs: Any) -> ExternalPythonOperator:
    with DAG("d"):
        return ExternalPythonOperator(**{"task_id": "t", "python": sys.executable,
                                         "python_callable": plain, **kwargs})


def _venv(**kwargs: Any) -> PythonVirtualenvOperator:
    with DAG("d"):
        return PythonVirtualenvOperator(**{"task_id": "t", "python_callable": plain, **kwargs})


# -- argument errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(("python", "said"), [
    (3, "python must be the path of a Python interpreter"),
    (None, "python must be the path of a Python interpreter"),
    ("  ", "python must be the path of a Python interpreter"),
])
def test_python_must_be_a_path(python: Any, said: str) -> None:
    with pytest.raises(DagDefinitionError, match=said):
        _external(python=python)


def test_python_may_be_a_path_object() -> None:
    assert _external(python=Path(sys.executable)).python == sys.executable


@pytest.mark.parametrize(("callable_", "said"), [
    (lambda: 1, "must be a function defined with def"),
    (len, "must be a function defined with def"),
    (_generator, "uses yield"),
])
def test_the_callable_must_be_a_def_function(callable_: Any, said: str) -> None:
    with pytest.raises(DagDefinitionError, match=said):
        _external(python_callable=callable_)
    with pytest.raises(DagDefinitionError, match=said):
        _venv(python_callable=callable_)


def test_a_function_without_source_is_refused_when_defined() -> None:
    namespace: dict[str, Any] = {}
    exec("def made_here():\n    return 1\n", namespace)
    with pytest.raises(DagDefinitionError, match="source of python_callable 'made_here' cannot"):
        _external(python_callable=namespace["made_here"])


@pytest.mark.parametrize(("kwargs", "said"), [
    ({"requirements": 5}, "requirements must be a string or a list of strings"),
    ({"requirements": ["ok", 1]}, "requirements must be a string or a list of strings"),
    ({"requirements": {"a": "b"}}, "requirements must be a string or a list of strings"),
    ({"pip_install_options": "--quiet"}, "pip_install_options must be a list of strings"),
    ({"index_urls": 7}, "index_urls must be a string or a list of strings"),
    ({"python_version": 3.11}, "python_version must be a string"),
    ({"python_version": "2.7", "op_args": [1]}, "cannot be passed to another major Python"),
    ({"system_site_packages": "no"}, "system_site_packages must be True or False"),
    ({"venv_cache_path": 3}, "venv_cache_path must be a folder path"),
])
def test_virtualenv_argument_errors(kwargs: dict[str, Any], said: str) -> None:
    with pytest.raises(DagDefinitionError, match=said):
        _venv(**kwargs)


@pytest.mark.parametrize(("kwargs", "said"), [
    ({"serializer": "json"}, "unsupported serializer 'json'"),
    ({"serializer": "dill", "use_dill": True}, "both use_dill and serializer are set"),
    ({"string_args": "one"}, "string_args must be a list of strings"),
    ({"skip_on_exit_code": "3"}, "skip_on_exit_code must be an int"),
    ({"skip_on_exit_code": [3, True]}, "skip_on_exit_code must be an int"),
    ({"env_vars": {"A": 1}}, "env_vars must be a dict of strings to strings"),
    ({"inherit_env": None}, "inherit_env must be True or False"),
    ({"requirements": ["x"]}, "unknown argument"),  # not an ExternalPythonOperator argument
])
def test_shared_argument_errors(kwargs: dict[str, Any], said: str) -> None:
    with pytest.raises(DagDefinitionError, match=said):
        _external(**kwargs)


def test_a_refused_task_is_not_added_to_the_dag() -> None:
    with DAG("d") as d, pytest.raises(DagDefinitionError):
        ExternalPythonOperator(task_id="t", python=7, python_callable=plain)
    assert d.task_ids == []


def test_defaults_and_serializer_choices() -> None:
    op = _external()
    assert (op.serializer, op.string_args, op.skip_on_exit_code, op.env_vars, op.inherit_env) \
        == ("pickle", [], (), None, True)
    assert _external(use_dill=True).serializer == "dill"
    assert _external(serializer="cloudpickle").serializer == "cloudpickle"
    assert _external(skip_on_exit_code=3).skip_on_exit_code == (3,)
    assert _venv(requirements="pandas").requirements == ["pandas"]
    assert _venv(index_urls="https://a").index_urls == ["https://a"]
    assert "python" in ExternalPythonOperator.template_fields
    assert {"requirements", "index_urls", "venv_cache_path"} <= set(
        PythonVirtualenvOperator.template_fields)


# -- the callable's source and the script ---------------------------------------------------------


def test_the_source_loses_its_task_decorator_but_keeps_others() -> None:
    def keep(function: Any) -> Any:
        return function

    with DAG("d"):
        @keep
        @task.virtualenv(
            requirements=["funcsigs"],
            system_site_packages=False,
        )
        def inner(a):
            return a * 2

    source, name = function_source(inner.function)
    assert name == "inner"
    assert source == "@keep\ndef inner(a):\n    return a * 2\n"


def test_the_name_comes_from_the_def_line() -> None:
    def original():
        return 1

    original.__name__ = "renamed"
    assert function_source(original)[1] == "original"


def _run_script(tmp_path: Path, script: str, args: Any = None, string_args: str = "",
                flags: tuple[str, ...] = ()) -> tuple[subprocess.CompletedProcess[str], Path, Path]:
    files = [tmp_path / n for n in ("in.pkl", "out.pkl", "strings.txt", "error.txt")]
    if args is not None:
        files[0].write_bytes(pickle.dumps(args))
    files[2].write_text(string_args)
    (tmp_path / "script.py").write_text(script)
    done = subprocess.run([sys.executable, *flags, str(tmp_path / "script.py"), *map(str, files)],
                          capture_output=True, text=True, timeout=60)
    return done, files[1], files[3]


def test_the_script_calls_the_function_with_its_arguments(tmp_path: Path) -> None:
    source = textwrap.dedent('''\
        def f(a, b, *, c):
            return {"sum": a + b + c, "strings": virtualenv_string_args}
        ''')
    script = build_script(source, "f", "pickle", has_args=True)
    done, out, error = _run_script(tmp_path, script, {"args": [1, 2], "kwargs": {"c": 3}},
                                   string_args="x\ny \n")
    assert done.returncode == 0, done.stderr
    assert pickle.loads(out.read_bytes()) == {"sum": 6, "strings": ["x", "y"]}
    assert not error.exists()


def test_the_script_runs_an_async_function_and_writes_nothing_for_none(tmp_path: Path) -> None:
    source = "async def f():\n    print('ran')\n"
    done, out, _ = _run_script(tmp_path, build_script(source, "f", "pickle", has_args=False))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ran\n"
    assert out.read_bytes() == b""


def test_the_script_records_the_error_of_a_failing_function(tmp_path: Path) -> None:
    source = "def f():\n    raise KeyError('missing')\n"
    done, out, error = _run_script(tmp_path, build_script(source, "f", "pickle", has_args=False))
    assert done.returncode == 1
    assert error.read_text() == "KeyError: 'missing'"
    assert "Traceback" in done.stderr and not out.exists()


def test_the_script_names_a_serializer_missing_there(tmp_path: Path) -> None:
    source = "def f():\n    return 1\n"
    script = build_script(source, "f", "cloudpickle", has_args=False)
    # -S: without site-packages, where cloudpickle is installed, as in a bare environment
    done, _, error = _run_script(tmp_path, script, flags=("-S",))
    assert done.returncode == 1
    assert error.read_text() == (
        f"the serializer module 'cloudpickle' is not installed in {sys.executable}: install it "
        "there (add it to requirements) or choose another serializer")


def test_build_script_refuses_what_it_cannot_write() -> None:
    with pytest.raises(ValueError, match="unknown serializer"):
        build_script("def f(): pass\n", "f", "marshal", has_args=False)
    with pytest.raises(ValueError, match="not a function name"):
        build_script("def f(): pass\n", "f()", "pickle", has_args=False)


def test_a_result_that_needs_a_module_missing_here_is_explained() -> None:
    needs_module = b"cmodule_missing_here\nThing\n."  # a pickle naming another module's class
    with pytest.raises(SerializerError, match="needs the module 'module_missing_here' to be read"):
        load_result("dill", needs_module)
    assert load_result("dill", pickle.dumps({"a": 1.5})) == {"a": 1.5}
    assert load_result("pickle", b"") is None


# -- running in this interpreter (no virtual environment) ---------------------------------------


def test_a_timeout_ends_the_other_process(run: Any, tmp_path: Path) -> None:
    def wait_forever(pid_file):
        import os
        import time

        with open(pid_file, "w") as file:
            file.write(str(os.getpid()))
        while True:
            time.sleep(1)

    with DAG("d") as d:
        ExternalPythonOperator(task_id="t", python=sys.executable, python_callable=wait_forever,
                               op_args=[str(tmp_path / "pid")], execution_timeout=2)
    outcome = run(d, "t")
    assert outcome.kind == "timed_out"
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_plain_context_keys_and_templates_dict_reach_the_callable(run: Any) -> None:
    def report(ds, templates_dict, dag=None, **kwargs):
        return {"ds": ds, "query": templates_dict["query"], "dag": dag,
                "run_id": kwargs["run_id"], "has_ti": "ti" in kwargs}

    with DAG("d") as d:
        ExternalPythonOperator(task_id="t", python=sys.executable, python_callable=report,
                               templates_dict={"query": "select '{{ ds }}'"})
    outcome = run(d, "t")
    assert outcome.kind == "success", outcome.error
    assert outcome.return_value == {"ds": "2024-03-01", "query": "select '2024-03-01'",
                                    "dag": None, "run_id": "manual__1", "has_ti": False}


def test_skip_on_exit_code_skips_and_another_code_fails(run: Any) -> None:
    def leave(code):
        import sys

        sys.exit(code)

    with DAG("d") as d:
        ExternalPythonOperator(task_id="skips", python=sys.executable, python_callable=leave,
                               op_args=[3], skip_on_exit_code=[3, 4])
        ExternalPythonOperator(task_id="fails", python=sys.executable, python_callable=leave,
                               op_args=[5], skip_on_exit_code=[3, 4])
    assert run(d, "skips").kind == "skipped"
    failed = run(d, "fails")
    assert failed.kind == "failed"
    assert failed.error.startswith(f"{ExternalPythonError.__name__}: leave() failed in ")
    assert "(exit code 5)" in failed.error


def test_env_vars_and_inherit_env(run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FROM_PARENT", "inherited")

    def read_env():
        import os

        return [os.environ.get("FROM_PARENT"), os.environ.get("GIVEN")]

    with DAG("d") as d:
        ExternalPythonOperator(task_id="inherits", python=sys.executable,
                               python_callable=read_env, env_vars={"GIVEN": "yes"})
        ExternalPythonOperator(task_id="clean", python=sys.executable, python_callable=read_env,
                               env_vars={"GIVEN": "yes"}, inherit_env=False)
    assert run(d, "inherits").return_value == ["inherited", "yes"]
    assert run(d, "clean").return_value == [None, "yes"]


def test_a_relative_or_missing_python_fails_the_task(run: Any, tmp_path: Path) -> None:
    with DAG("d") as d:
        ExternalPythonOperator(task_id="relative", python="bin/python", python_callable=plain,
                               op_args=[1])
        ExternalPythonOperator(task_id="missing", python=str(tmp_path / "python"),
                               python_callable=plain, op_args=[1])
    assert "must be an absolute path" in run(d, "relative").error
    assert "must exist" in run(d, "missing").error


def test_arguments_that_cannot_be_pickled_are_named(run: Any) -> None:
    with DAG("d") as d:
        ExternalPythonOperator(task_id="t", python=sys.executable, python_callable=plain,
                               op_kwargs={"x": 1, "y": (i for i in range(2))})
    error = run(d, "t").error
    assert "the keyword argument(s) ['y']" in error


def test_a_branch_variant_returns_its_choice(run: Any) -> None:
    def choose():
        return "left"

    with DAG("d") as d:
        branch = BranchExternalPythonOperator(task_id="b", python=sys.executable,
                                              python_callable=choose)
        ExternalPythonOperator(task_id="left", python=sys.executable, python_callable=plain,
                               op_args=[1])
        ExternalPythonOperator(task_id="right", python=sys.executable, python_callable=plain,
                               op_args=[1])
        branch >> [d.get_task("left"), d.get_task("right")]
    outcome = run(d, "b")
    assert outcome.kind == "success", outcome.error
    assert outcome.return_value == "left"


# -- decorators -----------------------------------------------------------------------------------


def test_the_decorators_make_the_operators() -> None:
    with DAG("d"):
        @task.external_python(python=sys.executable)
        def a() -> dict[str, int]:
            return {"x": 1}

        @task.branch_external_python(python=sys.executable)
        def b():
            return "a"

        @task.virtualenv(requirements=["funcsigs"])
        def c() -> dict[str, int]:
            return {"x": 1}

        @task.branch_virtualenv(requirements=["funcsigs"], venv_cache_path="/tmp/venvs")
        def e():
            return "a"

        ops = [f().operator for f in (a, b, c, e)]
    assert [type(op).__mro__[1] for op in ops] == [
        ExternalPythonOperator, BranchExternalPythonOperator, PythonVirtualenvOperator,
        BranchPythonVirtualenvOperator]
    assert [op.custom_operator_name for op in ops] == [
        "@task.external_python", "@task.branch_external_python", "@task.virtualenv",
        "@task.branch_virtualenv"]
    assert [op.multiple_outputs for op in ops] == [True, False, True, False]
    assert ops[3].venv_cache_path == "/tmp/venvs"


def test_a_decorated_lambda_is_refused() -> None:
    with DAG("d"), pytest.raises(DagDefinitionError, match="defined with def"):
        task.external_python(lambda: 1, python=sys.executable, task_id="from_lambda")()


# -- the virtual environment, without building one ----------------------------------------------


def test_the_serializer_is_added_to_an_isolated_environment() -> None:
    assert _venv(requirements=["b", "a"]).requirements_list() == ["a", "b"]
    assert _venv(requirements=["b"], serializer="dill").requirements_list() == ["b"]
    isolated = _venv(requirements=["b"], serializer="dill", system_site_packages=False)
    assert isolated.requirements_list() == ["b", "dill"]
    cloud = _venv(serializer="cloudpickle", system_site_packages=False,
                  requirements=["cloudpickle"])
    assert cloud.requirements_list() == ["cloudpickle"]


def test_the_cache_hash_follows_what_the_environment_holds() -> None:
    base = _venv(requirements=["b", "a"]).venv_spec()
    assert base.python == sys.executable
    assert base.cache_hash() == _venv(requirements=["a", "b"]).venv_spec().cache_hash()
    others = [_venv(requirements=["a"]), _venv(requirements=["a", "b"], system_site_packages=False),
              _venv(requirements=["a", "b"], pip_install_options=["--pre"]),
              _venv(requirements=["a", "b"], index_urls=["https://index"])]
    hashes = {base.cache_hash(), *(op.venv_spec().cache_hash() for op in others)}
    assert len(hashes) == 5
    assert json.loads(base.cache_text())["requirements"] == ["a", "b"]


def test_index_urls_become_pip_options() -> None:
    assert _virtualenv._index_options(None) == []
    assert _virtualenv._index_options(["https://a", "https://b", "https://c"]) == [
        "--index-url", "https://a", "--extra-index-url", "https://b",
        "--extra-index-url", "https://c"]


def test_a_missing_python_version_is_named() -> None:
    with pytest.raises(_virtualenv.VirtualenvError, match=r"no python1\.99 on the PATH"):
        _virtualenv.base_python("1.99")


def test_the_cache_reuses_a_complete_environment_and_rebuilds_others(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Path] = []

    def fake_create(spec: _virtualenv.VenvSpec, path: Path) -> Path:
        path.mkdir(parents=True, exist_ok=True)
        (path / "made").write_text(str(len(built)))
        built.append(path)
        return path / "bin" / "python"

    monkeypatch.setattr(_virtualenv, "create", fake_create)
    spec = _virtualenv.VenvSpec(python=sys.executable, requirements=("a",),
                                system_site_packages=True)
    first = _virtualenv.cached(spec, tmp_path / "cache")
    again = _virtualenv.cached(spec, tmp_path / "cache")
    assert first == again == tmp_path / "cache" / f"venv-{spec.cache_hash()}" / "bin" / "python"
    assert len(built) == 1
    (first.parent.parent / _virtualenv.MARKER).unlink()  # a build that did not complete
    _virtualenv.cached(spec, tmp_path / "cache")
    assert len(built) == 2
    assert (first.parent.parent / "made").read_text() == "1"


def test_a_failed_build_leaves_no_environment_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_create(spec: _virtualenv.VenvSpec, path: Path) -> Path:
        path.mkdir(parents=True)
        raise _virtualenv.VirtualenvError("installing the requirements failed")

    monkeypatch.setattr(_virtualenv, "create", failing_create)
    spec = _virtualenv.VenvSpec(python=sys.executable, requirements=("a",),
                                system_site_packages=True)
    with pytest.raises(_virtualenv.VirtualenvError):
        _virtualenv.cached(spec, tmp_path)
    assert not (tmp_path / f"venv-{spec.cache_hash()}").exists()
