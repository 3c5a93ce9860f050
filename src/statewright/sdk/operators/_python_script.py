"""Running a Python function in another interpreter: its source, the script that calls it there,
and the subprocess whose output goes to the task log.

As in Airflow, the function travels as source code (``inspect.getsource``, dedented, without its
``@task...`` decorator), its arguments and its return value as pickles (``pickle``, ``dill`` or
``cloudpickle``) in files of a temporary folder. The other interpreter needs neither statewright
nor Airflow: only the serializer's module.
"""

from __future__ import annotations

import ast
import collections
import importlib
import inspect
import logging
import os
import pickle
import signal
import subprocess
import textwrap
import threading
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

SERIALIZERS = ("pickle", "dill", "cloudpickle")
STDERR_TAIL_LINES = 20
_TASK_DECORATOR_NAMES = frozenset({"task", "setup", "teardown"})

log = logging.getLogger("statewright.task")


class CallableSourceError(ValueError):
    """The function cannot be sent to another interpreter (no source, not a ``def``)."""


class SerializerError(RuntimeError):
    """Arguments or a result could not be (de)serialized with the chosen serializer here."""


# -- the function's source ----------------------------------------------------------------------


def check_function(function: Any) -> None:
    """Raise CallableSourceError unless ``function`` is a ``def`` function whose source is there."""
    if not isinstance(function, types.FunctionType) or function.__name__ == "<lambda>":
        raise CallableSourceError(
            f"python_callable must be a function defined with def (its source is run in the "
            f"other interpreter), got {function!r}")
    if inspect.isgeneratorfunction(function) or inspect.isasyncgenfunction(function):
        raise CallableSourceError(
            f"python_callable {function.__name__!r} uses yield, which is not supported: return "
            "the value instead")
    function_source(function)


def function_source(function: Callable[..., Any]) -> tuple[str, str]:
    """The dedented source of ``function`` without its task decorators (``@task.virtualenv(...)``,
    ``@setup``...; other decorators stay, as in Airflow), and the name its ``def`` gives it."""
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError) as exc:
        raise CallableSourceError(
            f"the source of python_callable {getattr(function, '__name__', function)!r} cannot "
            f"be read ({exc}): define it with def in a file") from None
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise CallableSourceError(
            f"the source of python_callable {function.__name__!r} does not parse once dedented "
            f"({exc.msg}, line {exc.lineno})") from None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise CallableSourceError(
            f"python_callable {function.__name__!r} is not a function defined with def")
    lines = source.splitlines(keepends=True)
    drop: set[int] = set()
    for decorator in node.decorator_list:
        if _is_task_decorator(decorator):
            drop.update(range(decorator.lineno - 1, (decorator.end_lineno or decorator.lineno)))
    kept = "".join(line for number, line in enumerate(lines) if number not in drop)
    return kept, node.name


def _is_task_decorator(node: ast.expr) -> bool:
    if isinstance(node, ast.Call):
        node = node.func
    names: list[str] = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return bool(_TASK_DECORATOR_NAMES.intersection(names))


# -- the script -----------------------------------------------------------------------------------

_SCRIPT_HEAD = '''\
from __future__ import annotations

import sys

try:
    import {serializer}
except ImportError:
    _message = ("the serializer module {serializer!r} is not installed in %s: install it there "
                "(add it to requirements) or choose another serializer" % sys.executable)
    with open(sys.argv[4], "a") as _file:
        _file.write(_message)
    sys.exit(1)

# Strings of string_args, one a line (Airflow's global of the same name).
with open(sys.argv[3]) as _file:
    virtualenv_string_args = [_line.strip() for _line in _file]

'''

_SCRIPT_CALL = '''

if {has_args}:
    with open(sys.argv[1], "rb") as _file:
        _arguments = {serializer}.load(_file)
else:
    _arguments = {{"args": [], "kwargs": {{}}}}

try:
    _result = {name}(*_arguments["args"], **_arguments["kwargs"])
    import inspect as _inspect
    if _inspect.isawaitable(_result):
        import asyncio as _asyncio
        _result = _asyncio.run(_result)
except Exception as _error:
    with open(sys.argv[4], "a") as _file:
        _file.write("%s: %s" % (type(_error).__name__, _error))
    raise

with open(sys.argv[2], "wb") as _file:
    if _result is not None:
        {serializer}.dump(_result, _file)
'''


def build_script(source: str, name: str, serializer: str, *, has_args: bool) -> str:
    """The script run as ``python script.py ARGS.pkl RESULT.pkl STRING_ARGS.txt ERROR.txt``."""
    if serializer not in SERIALIZERS:
        raise ValueError(f"unknown serializer {serializer!r}")
    if not name.isidentifier():
        raise ValueError(f"{name!r} is not a function name")
    return (_SCRIPT_HEAD.format(serializer=serializer) + source.rstrip() + "\n"
            + _SCRIPT_CALL.format(serializer=serializer, name=name, has_args=has_args))


# -- serializing on this side -----------------------------------------------------------------


def _module(serializer: str) -> Any:
    """The serializer's module here; plain ``pickle`` when it is not installed here (its format
    is what ``dill`` and ``cloudpickle`` read and write for plain data)."""
    if serializer == "pickle":
        return pickle
    try:
        return importlib.import_module(serializer)
    except ImportError:
        return pickle


def dump_arguments(serializer: str, args: Sequence[Any], kwargs: dict[str, Any]) -> bytes:
    module = _module(serializer)
    try:
        return bytes(module.dumps({"args": list(args), "kwargs": kwargs}))
    except Exception as exc:
        bad = [key for key, value in kwargs.items() if not _dumps_ok(module, value)]
        what = f"the keyword argument(s) {bad}" if bad else "the arguments"
        hint = "" if module is not pickle or serializer == "pickle" else (
            f" ({serializer} is not installed here, so plain pickle was used: install it here)")
        raise SerializerError(
            f"{what} of the callable cannot be serialized with {module.__name__}: "
            f"{type(exc).__name__}: {exc}{hint}") from exc


def _dumps_ok(module: Any, value: Any) -> bool:
    try:
        module.dumps(value)
    except Exception:
        return False
    return True


def load_result(serializer: str, data: bytes) -> Any:
    if not data:
        return None
    try:
        return _module(serializer).loads(data)
    except ModuleNotFoundError as exc:
        raise SerializerError(
            f"the callable's return value needs the module {exc.name!r} to be read here, where "
            f"it is not installed (serializer {serializer!r}): install it here too, or return "
            "plain data") from exc


# -- the subprocess -----------------------------------------------------------------------------


class StreamedProcess:
    """Run a command; each line of its stdout and stderr goes to the task log as it comes."""

    def __init__(self, command: Sequence[str], *, env: dict[str, str] | None = None,
                 cwd: str | None = None) -> None:
        self.command = list(command)
        self.env = env
        self.cwd = cwd
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self._process: subprocess.Popen[bytes] | None = None

    def run(self) -> int:
        """The exit code; the process group is ended if this is interrupted (a timeout)."""
        with subprocess.Popen(self.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=self.env, cwd=self.cwd,
                              start_new_session=True) as process:
            self._process = process
            assert process.stdout is not None and process.stderr is not None
            reader = threading.Thread(target=self._pump, args=(process.stderr, self.stderr_tail),
                                      daemon=True)
            reader.start()
            try:
                self._pump(process.stdout, None)
                process.wait()
                reader.join()
            finally:
                self.kill()
                self._process = None
        return process.returncode

    @staticmethod
    def _pump(stream: IO[bytes], tail: collections.deque[str] | None) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", errors="backslashreplace").rstrip()
            log.info("%s", line)
            if tail is not None:
                tail.append(line)

    def kill(self) -> None:
        """End the process and its children (SIGTERM, then SIGKILL); a no-op once it exited."""
        process = self._process
        if process is None or process.poll() is not None:
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(process.pid, sig)
            except ProcessLookupError:
                return
            try:
                process.wait(timeout=5.0)
                return
            except subprocess.TimeoutExpired:
                continue


def read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="backslashreplace").strip()
    except FileNotFoundError:
        return ""
