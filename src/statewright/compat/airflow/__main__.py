"""``python -m statewright.compat.airflow FILE [ARG ...]``: run an Airflow DAG file as a script
with the compatibility layer on, as ``python FILE`` runs it with Airflow (for the
``if __name__ == "__main__": dag.test()`` at the end of many DAG files)."""

from __future__ import annotations

import sys

from statewright.compat._script import run_as_main
from statewright.compat.airflow import install


def main(argv: list[str]) -> int:
    return run_as_main(install, argv, __doc__.strip() if __doc__ else "")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
