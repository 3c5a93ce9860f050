"""Fixtures of the triggerer tests: a fresh Fernet key per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cryptography.fernet import MultiFernet

from statewright.crypto import generate_key, load_fernet
from statewright.services.worker import deferral


@pytest.fixture
def cipher() -> Iterator[MultiFernet]:
    key = load_fernet(generate_key())
    deferral.install_cipher(key)
    yield key
    deferral.install_cipher(None)

