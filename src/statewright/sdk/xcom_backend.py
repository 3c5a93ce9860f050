"""XCom backends (Airflow's ``BaseXCom``): how a task's values are written to and read from
storage. The database keeps what ``serialize_value`` returns (JSON data).

The backend is named by ``STATEWRIGHT_XCOM_BACKEND`` (Airflow's ``[core] xcom_backend``), a
dotted path to a subclass of :class:`BaseXCom`; the default is ``BaseXCom`` itself, which
stores values with :mod:`statewright.sdk.serde`. It runs in the task's process:
``serialize_value`` when a task returns or pushes a value, ``deserialize_value`` when a task
reads one (``xcom_pull``, an XComArg, a template), and ``orm_deserialize_value`` in the API
server for the XCom views (a readable rendering that needs no class of the task's code).

:class:`XComObjectStorageBackend` (Airflow's common.io backend) writes values larger than a
threshold to files under a path and keeps only a reference in the database.
"""

from __future__ import annotations

import functools
import importlib
import os
from dataclasses import dataclass
from typing import Any

from statewright.sdk import serde

__all__ = ["BaseXCom", "XComResult", "resolve_xcom_backend"]

BACKEND_SETTING = "STATEWRIGHT_XCOM_BACKEND"


@dataclass(frozen=True)
class XComResult:
    """A stored XCom as a backend reads it (Airflow's ``XComResult``): ``value`` is what
    ``serialize_value`` returned."""

    key: str
    value: Any
    dag_id: str | None = None
    run_id: str | None = None
    task_id: str | None = None
    map_index: int = -1


class BaseXCom:
    """The default backend, and the base class of custom ones: values are stored as
    :func:`statewright.sdk.serde.serialize` writes them."""

    XCOM_RETURN_KEY = "return_value"

    @staticmethod
    def serialize_value(value: Any, *, key: str | None = None, task_id: str | None = None,
                        dag_id: str | None = None, run_id: str | None = None,
                        map_index: int | None = None) -> Any:
        """The JSON data to store for ``value``."""
        return serde.serialize(value)

    @staticmethod
    def deserialize_value(result: Any) -> Any:
        """The value stored as ``result.value``."""
        return serde.deserialize(result.value)

    @staticmethod
    def orm_deserialize_value(result: Any) -> Any:
        """What the API and UI show for ``result.value``: readable JSON, no class imported."""
        return serde.render(result.value)

    @classmethod
    def purge(cls, result: Any, *args: Any) -> None:
        """Remove what the value keeps outside the database (nothing here)."""


def resolve_xcom_backend() -> type[BaseXCom]:
    """The backend class ``STATEWRIGHT_XCOM_BACKEND`` names (``BaseXCom`` when unset)."""
    return _backend(os.environ.get(BACKEND_SETTING) or "")


@functools.cache
def _backend(path: str) -> type[BaseXCom]:
    if not path:
        return BaseXCom
    module_name, _, name = path.rpartition(".")
    if not module_name:
        raise ValueError(f"{BACKEND_SETTING}={path!r} is not a dotted path to a class")
    if module_name.startswith("airflow."):
        from statewright.sdk.loader import dag_code_imports

        with dag_code_imports():  # Airflow's module names, through the compat layer
            module = importlib.import_module(module_name)
    else:
        module = importlib.import_module(module_name)
    cls = getattr(module, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseXCom)):
        raise TypeError(f"{BACKEND_SETTING}={path!r} names {cls!r}, which is not a subclass "
                        "of BaseXCom")
    return cls


def __getattr__(name: str) -> Any:
    if name == "XComObjectStorageBackend":  # its own module, loaded when asked for
        from statewright.sdk.xcom_objectstorage import XComObjectStorageBackend

        return XComObjectStorageBackend
    raise AttributeError(name)
