"""Imported at start-up: installs the ``prefect`` alias when STATEWRIGHT_PREFECT_COMPAT=true."""

from __future__ import annotations

from statewright.compat.prefect import enabled, install

if enabled():
    install()
