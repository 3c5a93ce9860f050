"""Jinja templating of task fields, as Airflow does it, in a sandboxed environment.

Each name in an operator's ``template_fields`` is rendered in the task's process just before it
runs: strings are Jinja templates (a string ending in one of ``template_ext`` names a template
file, found in the DAG file's folder or the DAG's ``template_searchpath``); lists, tuples, sets
and dict values are rendered item by item; an object with ``template_fields`` of its own has
those rendered (on a copy). XComArgs and DAG params are resolved, not rendered.

Undefined names are errors (``StrictUndefined``, unless the DAG sets ``template_undefined``);
every error names the task, the field and what was wrong, and no field is changed unless every
field rendered. ``render_template_as_native_obj=True`` renders to Python objects (Jinja's
native types) instead of strings.
"""

from __future__ import annotations

import copy
import math
import os
import shlex
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, cast

import jinja2
import jinja2.exceptions
import jinja2.nativetypes
import jinja2.sandbox

from statewright.core.errors import DagDefinitionError
from statewright.sdk import masking
from statewright.sdk.xcom_arg import DagParam, XComArg, iter_leaves

if TYPE_CHECKING:
    from statewright.sdk.baseoperator import BaseOperator
    from statewright.sdk.dag import DAG

__all__ = [
    "MAX_RENDERED_CHARS",
    "SandboxedEnvironment",
    "SandboxedNativeEnvironment",
    "TemplateRenderError",
    "check_templates",
    "create_template_env",
    "literal",
    "redact_rendered",
    "render_task_fields",
    "render_template",
    "rendered_for_storage",
    "rendering",
]

MAX_RENDERED_CHARS = 4096
"""A rendered value longer than this is stored (and shown) truncated, as Airflow's
``max_templated_field_length``."""


class LiteralValue:
    """A template field value passed on as it is, not rendered (``literal(value)``)."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"literal({self.value!r})"


def literal(value: Any) -> LiteralValue:
    """Mark ``value`` (a string that looks like a template, a dict of them) as not to render."""
    return LiteralValue(value)


class TemplateRenderError(Exception):
    """A template field could not be rendered; the message names the task, field and cause."""


# -- the environment ----------------------------------------------------------------------------


def _ds(value: datetime | None) -> str | None:
    return value.strftime("%Y-%m-%d") if value is not None else None


def _ds_nodash(value: datetime | None) -> str | None:
    return value.strftime("%Y%m%d") if value is not None else None


def _ts(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _ts_nodash(value: datetime | None) -> str | None:
    return value.strftime("%Y%m%dT%H%M%S") if value is not None else None


def _ts_nodash_with_tz(value: datetime | None) -> str | None:
    return value.isoformat().replace("-", "").replace(":", "") if value is not None else None


def shell_quote(value: Any) -> str:
    """``{{ params.name | shell_quote }}``: the value as one shell word, quoted so that a
    value someone typed (a conf, a param) can never run a command of its own in a
    ``bash_command``."""
    return shlex.quote("" if value is None else str(value))


FILTERS = {"ds": _ds, "ds_nodash": _ds_nodash, "ts": _ts, "ts_nodash": _ts_nodash,
           "ts_nodash_with_tz": _ts_nodash_with_tz, "shell_quote": shell_quote}


class _EnvironmentMixin:
    """Airflow's filters (``ds``, ``ts``, ...); attributes starting with one ``_`` readable."""

    filters: dict[str, Any]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.filters.update(FILTERS)

    def is_safe_attribute(self, obj: Any, attr: str, value: Any) -> bool:
        if attr.startswith("__"):
            return False
        return not jinja2.sandbox.is_internal_attribute(obj, attr)


class SandboxedEnvironment(_EnvironmentMixin, jinja2.sandbox.SandboxedEnvironment):
    """Renders to strings; templates cannot reach Python internals."""


class SandboxedNativeEnvironment(_EnvironmentMixin, jinja2.sandbox.SandboxedEnvironment):
    """Renders to Python objects (``render_template_as_native_obj``), sandboxed as well."""

    code_generator_class = jinja2.nativetypes.NativeCodeGenerator
    template_class = jinja2.nativetypes.NativeTemplate
    concat = staticmethod(jinja2.nativetypes.native_concat)  # type: ignore[assignment]


def searchpath(dag: DAG | None) -> list[str]:
    """Where template files are looked for: the DAG file's folder, then template_searchpath."""
    paths: list[str] = []
    if dag is not None:
        fileloc = getattr(dag, "fileloc", None)
        if fileloc:
            paths.append(os.path.dirname(os.path.abspath(fileloc)))
        extra = getattr(dag, "template_searchpath", None)
        if isinstance(extra, str):
            extra = [extra]
        paths.extend(str(p) for p in extra or ())
    return paths


def create_template_env(dag: DAG | None, *, native: bool | None = None) -> jinja2.Environment:
    """The sandboxed Jinja environment of ``dag``'s templates (a default one without a DAG)."""
    if native is None:
        native = bool(getattr(dag, "render_template_as_native_obj", False))
    options: dict[str, Any] = {
        "undefined": getattr(dag, "template_undefined", None) or jinja2.StrictUndefined,
        "extensions": ["jinja2.ext.do"],
        "loader": jinja2.FileSystemLoader(searchpath(dag)),
        "cache_size": 0,
    }
    options.update(getattr(dag, "jinja_environment_kwargs", None) or {})
    cls = SandboxedNativeEnvironment if native else SandboxedEnvironment
    env = cls(**options)
    env.filters.update(getattr(dag, "user_defined_filters", None) or {})
    return env


def check_template_arguments(dag: DAG, where: str) -> None:
    """The DAG's templating arguments have the types Airflow takes (checked at parse time)."""
    paths = dag.template_searchpath
    if paths is not None and not isinstance(paths, str) and not (
            isinstance(paths, Sequence) and all(isinstance(p, str) for p in paths)):
        raise DagDefinitionError(f"{where}: template_searchpath must be a folder or a list of "
                                 f"folders, got {paths!r}.")
    for name in ("user_defined_macros", "user_defined_filters", "jinja_environment_kwargs"):
        value = getattr(dag, name)
        if value is not None and not isinstance(value, Mapping):
            raise DagDefinitionError(f"{where}: {name} must be a dict, got {value!r}.")
    filters = dag.user_defined_filters or {}
    for key, fn in filters.items():
        if not callable(fn):
            raise DagDefinitionError(f"{where}: user_defined_filters[{key!r}] must be callable.")
    undefined = dag.template_undefined
    if undefined is not None and not (isinstance(undefined, type)
                                      and issubclass(undefined, jinja2.Undefined)):
        raise DagDefinitionError(f"{where}: template_undefined must be a jinja2.Undefined "
                                 f"class such as jinja2.StrictUndefined, got {undefined!r}.")
    if not isinstance(dag.render_template_as_native_obj, bool):
        raise DagDefinitionError(f"{where}: render_template_as_native_obj must be True or "
                                 "False.")


# -- rendering ----------------------------------------------------------------------------------


def _template_ext(task: Any) -> tuple[str, ...]:
    return tuple(getattr(task, "template_ext", ()) or ())


def render_template(content: Any, context: Mapping[str, Any], env: jinja2.Environment, *,
                    template_ext: Sequence[str] = (), seen: set[int] | None = None) -> Any:
    """``content`` rendered: strings as templates, containers item by item (a copy)."""
    seen = set() if seen is None else seen
    if isinstance(content, LiteralValue):
        return content.value
    if isinstance(content, str):
        if template_ext and content.endswith(tuple(template_ext)):
            return env.get_template(content).render(context)
        return env.from_string(content).render(context)
    if isinstance(content, (XComArg, DagParam)):
        return content.resolve(context)
    if isinstance(content, tuple):
        items = [render_template(v, context, env, template_ext=template_ext, seen=seen)
                 for v in content]
        return type(content)(*items) if hasattr(content, "_fields") else type(content)(items)
    if isinstance(content, list):
        return [render_template(v, context, env, template_ext=template_ext, seen=seen)
                for v in content]
    if isinstance(content, dict):
        return {k: render_template(v, context, env, template_ext=template_ext, seen=seen)
                for k, v in content.items()}
    if isinstance(content, (set, frozenset)):
        return type(content)(render_template(v, context, env, template_ext=template_ext,
                                             seen=seen) for v in content)
    if getattr(content, "template_fields", None) and id(content) not in seen:
        seen.add(id(content))
        nested = copy.copy(content)
        for name in nested.template_fields:
            value = getattr(nested, name)
            setattr(nested, name, render_template(
                value, context, env, template_ext=_template_ext(nested), seen=seen))
        return nested
    return content


def _describe_error(exc: Exception) -> str:
    if isinstance(exc, jinja2.TemplateNotFound):
        return f"template file {exc.name!r} was not found"
    if isinstance(exc, jinja2.TemplateSyntaxError):
        where = f"{exc.filename or exc.name or 'template'}, line {exc.lineno}"
        return f"template syntax error in {where}: {exc.message}"
    if isinstance(exc, jinja2.exceptions.SecurityError):
        return f"blocked by the template sandbox: {exc}"
    if isinstance(exc, jinja2.UndefinedError):
        return f"{exc} (not in the template context)"
    return f"{type(exc).__name__}: {exc}"


def render_task_fields(task: BaseOperator, context: Mapping[str, Any],
                       env: jinja2.Environment | None = None) -> dict[str, Any]:
    """Every template field of ``task`` rendered; the task itself is not changed.

    Raises TemplateRenderError naming the task and the field at the first field that fails.
    """
    if not task.template_fields:
        return {}  # nothing to render: no environment is built (the common no-op task)
    if env is None:
        env = cast(jinja2.Environment, _EnvOnFirstUse(task.dag))
    jinja_context = dict(context)
    macros = getattr(task.dag, "user_defined_macros", None) or {}
    jinja_context.update(macros)
    rendered: dict[str, Any] = {}
    for name in task.template_fields:
        value = getattr(task, name, None)
        try:
            rendered[name] = render_template(value, jinja_context, env,
                                             template_ext=_template_ext(task))
        except Exception as exc:
            if isinstance(exc, jinja2.TemplateNotFound):
                paths = ", ".join(searchpath(task.dag)) or "none"
                detail = f"{_describe_error(exc)} (searched: {paths})"
            else:
                detail = _describe_error(exc)
            raise TemplateRenderError(
                f"task {task.task_id!r}, field {name!r}: {detail}") from exc
    return rendered


class _EnvOnFirstUse:
    """The DAG's environment, built when a field first renders a string or a file: the fields
    of most tasks hold none (a ``@task``'s empty ``op_args``), and building a sandboxed Jinja
    environment is a good part of a no-op try's cost."""

    def __init__(self, dag: DAG | None) -> None:
        self._dag = dag
        self._env: jinja2.Environment | None = None

    def __getattr__(self, name: str) -> Any:
        if self._env is None:
            self._env = create_template_env(self._dag)
        return getattr(self._env, name)


@contextmanager
def rendering(task: BaseOperator, context: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """Render every template field onto ``task`` for the try, and put the originals back after.

    Yields what is to be recorded (``rendered_for_storage`` of each field). Nothing is set on
    the task unless every field rendered.
    """
    rendered = render_task_fields(task, context)
    originals = {name: getattr(task, name, None) for name in rendered}
    try:
        for name, value in rendered.items():
            setattr(task, name, value)
        yield {name: rendered_for_storage(value) for name, value in rendered.items()}
    finally:
        for name, value in originals.items():
            setattr(task, name, value)


class Templater:
    """Airflow's templating attributes and methods of an operator (a mixin of BaseOperator)."""

    template_fields: ClassVar[Sequence[str]] = ()
    # A template field whose value ends in one of these names a template file.
    template_ext: ClassVar[Sequence[str]] = ()
    # How the UI of Airflow shows each field ("bash", "json", "sql", ...): kept for compatibility.
    template_fields_renderers: ClassVar[dict[str, str]] = {}

    def get_template_env(self) -> jinja2.Environment:
        """The Jinja environment of this task's DAG (sandboxed)."""
        return create_template_env(getattr(self, "dag", None))

    def render_template(self, content: Any, context: Mapping[str, Any],
                        jinja_env: jinja2.Environment | None = None) -> Any:
        """``content`` rendered with ``context`` (strings, files, containers)."""
        return render_template(content, context, jinja_env or self.get_template_env(),
                               template_ext=_template_ext(self))

    def render_template_fields(self, context: Mapping[str, Any],
                               jinja_env: jinja2.Environment | None = None) -> None:
        """Render this task's template fields in place (the runtime renders a try's fields
        itself and puts the originals back after the try)."""
        task: Any = self
        for name, value in render_task_fields(task, context, jinja_env).items():
            setattr(self, name, value)


# -- storing and showing ------------------------------------------------------------------------


def redact_rendered(value: Any) -> Any:
    """The one place every rendered value passes before it is stored or shown.

    Registered secrets (connection passwords, sensitive variables, ``mask_secret`` values) are
    replaced by ``***``, and so is every value under a sensitive key.
    """
    return masking.redact(value)


def _plain(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # JSON (and a PostgreSQL json column) has no NaN or Infinity
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        if len(value) > MAX_RENDERED_CHARS:
            return (f"Truncated ({len(value)} characters; the first {MAX_RENDERED_CHARS} are "
                    f"shown): {value[:MAX_RENDERED_CHARS]}")
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((_plain(v) for v in value), key=repr)
    return _plain(str(value))


def rendered_for_storage(value: Any) -> Any:
    """``value`` as plain JSON data (other objects as their text), through the redaction."""
    if value is None:  # a field left unset (most of an operator's): once per field per try
        return None
    return redact_rendered(_plain(value))


# -- parse-time checks --------------------------------------------------------------------------


def _strings(value: Any) -> Iterator[str]:
    """The strings inside ``value`` (not those inside a ``literal``)."""
    return (item for item in iter_leaves(value) if isinstance(item, str))


def check_templates(dag: DAG) -> None:
    """Report template syntax errors at parse time, with the task's file and line.

    A template file that is not there yet is reported when the task runs (it may be created
    later), not here.
    """
    env: jinja2.Environment | None = None
    for task in dag.task_dict.values():
        for name in task.template_fields:
            for text in _strings(getattr(task, name, None)):
                if not ("{" in text or text.endswith(_template_ext(task))):
                    continue
                env = env or create_template_env(dag)
                _check_one(env, dag, task, name, text)


def _check_one(env: jinja2.Environment, dag: DAG, task: BaseOperator, field: str,
               text: str) -> None:
    try:
        if text.endswith(_template_ext(task)):
            try:
                env.get_template(text)
            except jinja2.TemplateNotFound:
                return
        else:
            env.parse(text)
    except jinja2.TemplateSyntaxError as exc:
        filename, line = task.__dict__.get("defined_at", ("", 0))
        where = f" (task defined at {filename}:{line})" if filename else ""
        raise DagDefinitionError(
            f"DAG {dag.dag_id!r}: task {task.task_id!r}, field {field!r}: "
            f"{_describe_error(exc)}{where}.") from None
