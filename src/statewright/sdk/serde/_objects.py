"""Instances of classes: pydantic models, classes with ``serialize()``, dataclasses, attrs.

Written as ``{"__type": "object", "__classname__": "module.Class", "__version__": n,
"value": data}``, as Airflow's serde does: the class's ``__version__`` (0 without one) is kept,
and the class is imported by its qualified name on read, when the allowed-classes rule lets it
(see ``_allowed``). Which way a class is rebuilt is decided on read, in Airflow's order: a
pydantic model is validated from its fields, a class with ``deserialize(data, version)`` gets
its data, a dataclass or attrs class is called with its ``__init__`` fields. Unlike Airflow's,
the fields of a dataclass or attrs instance are written one level at a time, so nested
dataclasses keep their types.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

from statewright.sdk.serde._allowed import check_allowed
from statewright.sdk.serde._core import (
    CLASSNAME,
    TYPE_KEY,
    VERSION,
    SerializationError,
    Walk,
    deserialize_value,
)


def qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def encode(value: Any, walk: Walk) -> dict[str, Any] | None:
    """The tagged form of an instance of a class that says how to write it, else ``None``."""
    cls = type(value)
    data: Any
    if _is_pydantic(cls):
        data = walk.inner(value.model_dump(mode="python", round_trip=True))
    elif callable(getattr(value, "serialize", None)):
        data = walk.inner(value.serialize())
    elif dataclasses.is_dataclass(cls):
        data = walk.inner({f.name: getattr(value, f.name) for f in dataclasses.fields(value)
                           if f.init})
    elif _is_attrs(cls):
        import attrs

        data = walk.inner({a.alias or a.name: getattr(value, a.name) for a in attrs.fields(cls)
                           if a.init})
    else:
        return None
    if "<locals>" in cls.__qualname__:
        raise SerializationError(
            f"{walk.path}: object of type {cls.__qualname__} cannot be serialized: the class "
            "is defined inside a function, so it cannot be imported to read the value back; "
            "define it at module level", cls.__qualname__)
    return {TYPE_KEY: "object", CLASSNAME: qualname(cls),
            VERSION: int(getattr(cls, "__version__", 0) or 0), "value": data}


def _is_pydantic(cls: type) -> bool:
    return any(c.__module__.startswith("pydantic.") and c.__name__ == "BaseModel"
               for c in cls.__mro__)


def _is_attrs(cls: type) -> bool:
    return hasattr(cls, "__attrs_attrs__")


def import_class(classname: str) -> Any:
    """The class named ``module.Qual.Name``, when the allowed-classes rule allows it."""
    check_allowed(classname)
    module_name, _, attr = classname.rpartition(".")
    while module_name:
        try:
            obj: Any = importlib.import_module(module_name)
            break
        except ModuleNotFoundError:  # a nested class: one more dot belongs to the qualname
            module_name, _, outer = module_name.rpartition(".")
            attr = f"{outer}.{attr}"
        except ImportError as exc:
            raise SerializationError(f"the class {classname!r} cannot be imported: "
                                     f"{exc}") from exc
    else:
        raise SerializationError(f"the class {classname!r} cannot be imported")
    try:
        for part in attr.split("."):
            obj = getattr(obj, part)
    except AttributeError:
        raise SerializationError(f"the class {classname!r} cannot be imported: "
                                 f"{module_name} has no {attr}") from None
    return obj


def _read_object(data: dict[str, Any], raw: Any) -> Any:
    classname = data[CLASSNAME]
    version = int(data.get(VERSION, 0))
    cls = import_class(classname)
    value = deserialize_value(raw)
    try:
        return _rebuild(cls, classname, version, value)
    except SerializationError:
        raise
    except Exception as exc:  # the class's own code refused the data
        raise SerializationError(
            f"{classname} could not be rebuilt from its data: {type(exc).__name__}: "
            f"{' '.join(str(exc).split())}") from exc


def _rebuild(cls: Any, classname: str, version: int, value: Any) -> Any:
    if _is_pydantic(cls):
        return cls.model_validate(value)
    reader = getattr(cls, "deserialize", None)
    if callable(reader):
        return reader(value, version)
    if dataclasses.is_dataclass(cls) or _is_attrs(cls):
        known = int(getattr(cls, "__version__", 0) or 0)
        if version > known:
            raise SerializationError(
                f"{classname} was written at version {version}, newer than the class's "
                f"__version__ {known}")
        if not isinstance(value, dict):
            raise SerializationError(f"the fields of {classname} are not a dict")
        return cls(**value)
    raise SerializationError(
        f"{classname} has no deserialize(data, version) method and is not a dataclass, attrs "
        "class or pydantic model, so it cannot be read back")


READERS: dict[str, Any] = {"object": _read_object}
