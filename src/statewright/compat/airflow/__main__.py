"""``python -m statewright.compat.airflow FILE [ARG ...]``: run an Airflow DAG file as a script
with the compatibility layer on, as ``python FILE`` runs it with Airflow (for the
``if __name__ == "__main__": dag.test()`` at the end of many DAG files)."""

from __future__ import annotations

import runpy
import sys

from statewright.compat.airflow import install


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__.strip() if __doc__ else "", file=sys.stderr)
        return 2
    install()
    sys.argv = list(argv)
    runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
