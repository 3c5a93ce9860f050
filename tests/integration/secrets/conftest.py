"""Fixtures of the connections and variables tests: a Fernet key installed for the test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from cryptography.fernet import MultiFernet

from statewright.crypto import generate_key, load_fernet
from statewright.sdk import masking, secrets
from statewright.services.worker.deferral import install_cipher, installed_cipher


@pytest.fixture
def fernet_key() -> str:
    return generate_key()


@pytest.fixture
def cipher(fernet_key: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[MultiFernet]:
    # The key of every process of the test, as a deployment gives it (DAG-import children
    # started from the environment read it there).
    monkeypatch.setenv("STATEWRIGHT_FERNET_KEY", fernet_key)
    before = installed_cipher()
    c = load_fernet(fernet_key)
    install_cipher(c)
    secrets.clear_cache()
    masking.reset_masks()
    yield c
    install_cipher(before)
    secrets.install_store(None)
    secrets.clear_cache()
    masking.reset_masks()
