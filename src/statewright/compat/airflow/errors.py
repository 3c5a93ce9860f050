"""The errors a DAG file meets when it uses an Airflow name or module statewright lacks."""

from __future__ import annotations

from statewright.compat.airflow.airflow2 import MOVED_MODULES
from statewright.compat.airflow.names import DOCS_PAGE, provider_package


class AirflowNameMissing(ImportError):
    """``from airflow.X import Name`` where statewright has no ``Name``.

    An ImportError (not an AttributeError), so that the import statement reports this message
    rather than Python's generic "cannot import name".
    """

    def __init__(self, module: str, attribute: str) -> None:
        self.airflow_module = module
        self.attribute = attribute
        super().__init__(
            f"statewright has no equivalent of the Airflow name {attribute!r} imported from "
            f"{module}; this file cannot load through the Airflow compatibility layer. "
            f"{DOCS_PAGE} says what statewright offers instead.",
            name=module,
        )


class AirflowModuleMissing(ModuleNotFoundError):
    """``import airflow.X`` where statewright answers for no ``airflow.X``."""

    def __init__(self, module: str) -> None:
        self.airflow_module = module
        moved = MOVED_MODULES.get(module)
        package = provider_package(moved or module)
        what = (f"the Airflow provider package {package} (module {moved or module})" if package
                else f"the Airflow module {moved or module}")
        if moved is not None:
            what += f", where Airflow 2's {module} moved"
        super().__init__(
            f"statewright has no equivalent of {what}; this file cannot load through the "
            f"Airflow compatibility layer. {DOCS_PAGE} lists what is supported.",
            name=module,
        )
