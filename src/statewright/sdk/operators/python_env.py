"""Python callables run in another Python environment (Airflow's standard provider names).

``ExternalPythonOperator`` runs the callable with an interpreter that exists already (``python``,
say a virtual environment's ``bin/python``); ``PythonVirtualenvOperator`` makes a virtual
environment, installs ``requirements`` into it and runs the callable there. Their ``Branch…``
variants follow the task id(s) the callable returns, as ``BranchPythonOperator`` does.

The callable is sent as source code: it must be a ``def`` function that imports what it uses
inside its body and reads no variable from around it. It receives ``op_args`` and ``op_kwargs``,
``templates_dict`` and, as in Airflow, the plain-value context keys its signature names (``ds``,
``ts``, ``run_id``...); its return value comes back pickled and is stored like PythonOperator's.
The other interpreter needs neither statewright nor Airflow. Each line the process prints (stdout
or stderr) goes to the task log.
"""

from __future__ import annotations

import abc
import os
import sys
import tempfile
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, ClassVar

from statewright.core.errors import DagDefinitionError
from statewright.sdk.branch import BaseBranchOperator
from statewright.sdk.exceptions import SkipTask
from statewright.sdk.operators import _virtualenv
from statewright.sdk.operators._python_script import (
    SERIALIZERS,
    CallableSourceError,
    StreamedProcess,
    build_script,
    check_function,
    dump_arguments,
    function_source,
    load_result,
    log,
    read_text,
)
from statewright.sdk.operators.python import PythonOperator, determine_kwargs

__all__ = [
    "BranchExternalPythonOperator",
    "BranchPythonVirtualenvOperator",
    "ExternalPythonOperator",
    "PythonVirtualenvOperator",
]

# Airflow's context keys that travel to the other interpreter whatever is installed there: plain
# strings and numbers (keys that hold objects of statewright or pendulum do not).
SERIALIZABLE_CONTEXT_KEYS = frozenset({
    "ds", "ds_nodash", "expanded_ti_count", "map_index_template", "next_ds", "next_ds_nodash",
    "prev_ds", "prev_ds_nodash", "run_id", "task_instance_key_str", "task_reschedule_count",
    "test_mode", "tomorrow_ds", "tomorrow_ds_nodash", "ts", "ts_nodash", "ts_nodash_with_tz",
    "yesterday_ds", "yesterday_ds_nodash",
})
_PLAIN = (str, int, float, bool, type(None))


class ExternalPythonError(Exception):
    """The callable failed in the other interpreter (its process exited with an error)."""


class _BasePythonEnvOperator(PythonOperator):
    """What ExternalPythonOperator and PythonVirtualenvOperator share: the call itself."""

    def __init__(
        self,
        *,
        python_callable: Callable[..., Any],
        serializer: str | None = None,
        use_dill: bool = False,
        string_args: Iterable[str] | None = None,
        expect_airflow: bool = True,
        skip_on_exit_code: int | Container[int] | None = None,
        env_vars: Mapping[str, str] | None = None,
        inherit_env: bool = True,
        **kwargs: Any,
    ) -> None:
        super().__init__(python_callable=python_callable, **kwargs)
        where = f"task {self.task_id!r}"
        try:
            check_function(python_callable)
        except CallableSourceError as exc:
            raise DagDefinitionError(f"{where}: {exc}.") from None
        self.serializer = _serializer(serializer, use_dill, where)
        self.string_args = _string_args(string_args, where)
        self.expect_airflow = _bool(expect_airflow, f"{where}: expect_airflow")
        self.skip_on_exit_code = _exit_codes(skip_on_exit_code, where)
        self.env_vars = _env_vars(env_vars, where)
        self.inherit_env = _bool(inherit_env, f"{where}: inherit_env")
        self._running: StreamedProcess | None = None

    # -- what subclasses give ---------------------------------------------------------------------

    @abc.abstractmethod
    def _interpreter(self) -> AbstractContextManager[Path]:
        """The python to run the callable with, for the time of the call."""

    # -- the call ---------------------------------------------------------------------------------

    def execute_callable(self, context: Mapping[str, Any]) -> Any:
        kwargs = self.callable_kwargs(context)
        with self._interpreter() as python:
            return self._call_with(python, kwargs)

    def callable_kwargs(self, context: Mapping[str, Any]) -> dict[str, Any]:
        """The keyword arguments of the call: ``op_kwargs``, ``templates_dict`` and the plain
        context keys the callable names (all of them for ``**kwargs``)."""
        plain = {}
        for key in SERIALIZABLE_CONTEXT_KEYS & context.keys():
            value = context[key]
            value = getattr(value, "__wrapped__", value)  # a lazy context value, resolved
            if isinstance(value, _PLAIN):
                plain[key] = value
        merged = {**plain, "templates_dict": self.templates_dict, **self.op_kwargs}
        return determine_kwargs(self.python_callable, self.op_args, merged)

    def _call_with(self, python: Path, kwargs: dict[str, Any]) -> Any:
        source, name = function_source(self.python_callable)
        has_args = bool(self.op_args or kwargs)
        with tempfile.TemporaryDirectory(prefix="statewright-python-call") as tmp:
            folder = Path(tmp)
            arguments, result, string_args, error = (
                folder / "arguments.pkl", folder / "result.pkl", folder / "string_args.txt",
                folder / "error.txt")
            if has_args:
                log.info("Use %r as serializer.", self.serializer)
                arguments.write_bytes(dump_arguments(self.serializer, self.op_args, kwargs))
            string_args.write_text("\n".join(map(str, self.string_args)), encoding="utf-8")
            script = folder / "script.py"
            script.write_text(build_script(source, name, self.serializer, has_args=has_args),
                              encoding="utf-8")
            process = StreamedProcess(
                [str(python), "-u", str(script), str(arguments), str(result), str(string_args),
                 str(error)], env=self._env())
            self._running = process
            try:
                code = process.run()
            finally:
                self._running = None
            self._check_exit(code, name, python, read_text(error), list(process.stderr_tail))
            return load_result(self.serializer, result.read_bytes() if result.exists() else b"")

    def _check_exit(self, code: int, name: str, python: Path, error: str,
                    stderr_tail: Sequence[str]) -> None:
        if code in self.skip_on_exit_code:
            raise SkipTask(f"Process exited with code {code}. Skipping.")
        if code != 0:
            message = f"{name}() failed in {python} (exit code {code})"
            message += f": {error}" if error else ""
            if stderr_tail:
                message += "\nLast lines of its stderr:\n" + "\n".join(stderr_tail)
            raise ExternalPythonError(message)

    def _env(self) -> dict[str, str]:
        env = dict(os.environ) if self.inherit_env else {}
        env.update(self.env_vars or {})
        return env

    def on_kill(self) -> None:
        running = self._running
        if running is not None:
            running.kill()


class ExternalPythonOperator(_BasePythonEnvOperator):
    """Run the callable with the interpreter ``python`` (an absolute path), which exists already.

    ``serializer`` (``pickle``, ``dill`` or ``cloudpickle``) must be importable there;
    ``string_args`` reach the callable as the global list ``virtualenv_string_args``; an exit code
    in ``skip_on_exit_code`` skips the task; ``env_vars`` are added to the process's environment,
    which is this one's unless ``inherit_env=False``.
    """

    template_fields: ClassVar[Sequence[str]] = (*PythonOperator.template_fields, "python")

    def __init__(self, *, python: str | os.PathLike[str], python_callable: Callable[..., Any],
                 expect_pendulum: bool = False, **kwargs: Any) -> None:
        super().__init__(python_callable=python_callable, **kwargs)
        if isinstance(python, os.PathLike):
            python = os.fspath(python)
        if not isinstance(python, str) or not python.strip():
            raise DagDefinitionError(
                f"task {self.task_id!r}: python must be the path of a Python interpreter (a "
                f"string such as '/opt/venv/bin/python'), got {python!r}.")
        self.python = python
        self.expect_pendulum = _bool(expect_pendulum, f"task {self.task_id!r}: expect_pendulum")

    @contextmanager
    def _interpreter(self) -> Iterator[Path]:
        python = Path(self.python)
        if not python.is_absolute():
            raise ValueError(f"Python Path '{python}' must be an absolute path.")
        if not python.exists():
            raise ValueError(f"Python Path '{python}' must exist.")
        if not python.is_file():
            raise ValueError(f"Python Path '{python}' must be a file.")
        yield python


class PythonVirtualenvOperator(_BasePythonEnvOperator):
    """Make a virtual environment, install ``requirements`` into it, run the callable there.

    The environment is made from ``python<python_version>`` (this interpreter by default), with
    the system site packages unless ``system_site_packages=False`` (then ``dill`` or
    ``cloudpickle`` is added to the requirements when it is the serializer). With
    ``venv_cache_path`` it is kept there under a hash of what it holds and reused; without, it is
    made in a temporary folder and removed after the try. Other arguments: see
    ExternalPythonOperator.
    """

    template_fields: ClassVar[Sequence[str]] = (
        *PythonOperator.template_fields, "requirements", "index_urls", "venv_cache_path")
    template_ext: ClassVar[Sequence[str]] = (".txt",)  # requirements="requirements.txt"

    def __init__(
        self,
        *,
        python_callable: Callable[..., Any],
        requirements: str | Iterable[str] | None = None,
        python_version: str | None = None,
        system_site_packages: bool = True,
        pip_install_options: Sequence[str] | None = None,
        index_urls: str | Sequence[str] | None = None,
        venv_cache_path: str | os.PathLike[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(python_callable=python_callable, **kwargs)
        where = f"task {self.task_id!r}"
        self.requirements = _strings(requirements, f"{where}: requirements", single_ok=True)
        self.python_version = _python_version(python_version, bool(self.op_args or self.op_kwargs),
                                              where)
        self.system_site_packages = _bool(system_site_packages, f"{where}: system_site_packages")
        self.pip_install_options = _strings(pip_install_options, f"{where}: pip_install_options")
        self.index_urls = None if index_urls is None else _strings(
            index_urls, f"{where}: index_urls", single_ok=True)
        if venv_cache_path is not None and not isinstance(venv_cache_path, (str, os.PathLike)):
            raise DagDefinitionError(
                f"{where}: venv_cache_path must be a folder path, got {venv_cache_path!r}.")
        self.venv_cache_path = venv_cache_path

    def requirements_list(self) -> list[str]:
        """The requirements installed, sorted; the serializer's package is added when the
        environment does not see the system site packages (Airflow's rule)."""
        requirements = [str(r) for r in self.requirements]
        if not self.system_site_packages and self.serializer != "pickle" \
                and self.serializer not in requirements:
            requirements.append(self.serializer)
        return sorted(requirements)

    def venv_spec(self) -> _virtualenv.VenvSpec:
        return _virtualenv.VenvSpec(
            python=_virtualenv.base_python(self.python_version),
            requirements=tuple(self.requirements_list()),
            system_site_packages=self.system_site_packages,
            pip_install_options=tuple(self.pip_install_options),
            index_urls=None if self.index_urls is None else tuple(self.index_urls),
        )

    @contextmanager
    def _interpreter(self) -> Iterator[Path]:
        spec = self.venv_spec()
        if self.venv_cache_path:
            yield _virtualenv.cached(spec, Path(os.fspath(self.venv_cache_path)))
            return
        with tempfile.TemporaryDirectory(prefix="venv") as tmp:
            yield _virtualenv.create(spec, Path(tmp))


class BranchExternalPythonOperator(BaseBranchOperator, ExternalPythonOperator):
    """ExternalPythonOperator whose callable returns the task id(s) to follow; the other direct
    downstream tasks are skipped."""

    def choose_branch(self, context: Any) -> Any:
        return ExternalPythonOperator.execute(self, context)


class BranchPythonVirtualenvOperator(BaseBranchOperator, PythonVirtualenvOperator):
    """PythonVirtualenvOperator whose callable returns the task id(s) to follow; the other direct
    downstream tasks are skipped."""

    def choose_branch(self, context: Any) -> Any:
        return PythonVirtualenvOperator.execute(self, context)


# -- argument checks ------------------------------------------------------------------------------


def _bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise DagDefinitionError(f"{what} must be True or False, got {value!r}.")
    return value


def _serializer(serializer: Any, use_dill: Any, where: str) -> str:
    if _bool(use_dill, f"{where}: use_dill"):
        if serializer is not None:
            raise DagDefinitionError(
                f"{where}: both use_dill and serializer are set; set only serializer "
                "(use_dill=True means serializer='dill').")
        return "dill"
    if serializer is None:
        return "pickle"
    if serializer not in SERIALIZERS:
        raise DagDefinitionError(
            f"{where}: unsupported serializer {serializer!r}; expected one of "
            f"{', '.join(map(repr, SERIALIZERS))}.")
    return str(serializer)


def _strings(value: Any, what: str, *, single_ok: bool = False) -> list[str]:
    """A list of strings from None, a list (tuple, set) of strings, or one string."""
    if value is None:
        return []
    if isinstance(value, str):
        if single_ok:
            return [value]
        raise DagDefinitionError(f"{what} must be a list of strings, got the string {value!r}.")
    if isinstance(value, Iterable) and not isinstance(value, (bytes, Mapping)):
        items = list(value)
        if all(isinstance(item, str) for item in items):
            return items
    kind = "a string or a list of strings" if single_ok else "a list of strings"
    raise DagDefinitionError(f"{what} must be {kind}, got {value!r}.")


def _string_args(value: Any, where: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
        raise DagDefinitionError(
            f"{where}: string_args must be a list of strings (each one line of "
            f"virtualenv_string_args), got {value!r}.")
    return [str(item) for item in value]


def _exit_codes(value: Any, where: str) -> Container[int]:
    if value is None:
        return ()
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        codes = list(value)
        if all(isinstance(c, int) and not isinstance(c, bool) for c in codes):
            return tuple(codes)
    raise DagDefinitionError(
        f"{where}: skip_on_exit_code must be an int, a list of ints or None, got {value!r}.")


def _env_vars(value: Any, where: str) -> dict[str, str] | None:
    if value is None:
        return None
    if isinstance(value, Mapping) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return dict(value)
    raise DagDefinitionError(
        f"{where}: env_vars must be a dict of strings to strings, got {value!r}.")


def _python_version(value: Any, has_args: bool, where: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise DagDefinitionError(
            f"{where}: python_version must be a string such as '3.12', got {value!r}.")
    if value[0] != str(sys.version_info.major) and has_args:
        raise DagDefinitionError(
            f"{where}: op_args and op_kwargs cannot be passed to another major Python version "
            f"({value} here, {sys.version_info.major} running); use string_args.")
    return value
