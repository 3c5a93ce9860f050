"""Browser tests: Playwright drives Debian's Chromium (/usr/bin/chromium) against the web UI
served by uvicorn on a free 127.0.0.1 port, over a temporary SQLite database.

Without Chromium the tests skip, except under ``CI=true`` where that is a failure. Playwright's
own browser downloads are never used.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ui_harness import UiServer, add_user, orders_dag, serving, sign_in

from statewright.config import load_settings
from statewright.db.engine import make_engine
from statewright.db.migrate import migrate

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def _chromium_or_skip() -> str:
    if os.path.exists(CHROMIUM) and os.access(CHROMIUM, os.X_OK):
        return CHROMIUM
    why = (f"Chromium is not installed at {CHROMIUM}: `apt-get install chromium` (scripts/"
           "bootstrap.sh does it when run as root)")
    if os.environ.get("CI") == "true":
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def ui_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    _chromium_or_skip()
    home = tmp_path_factory.mktemp("ui")
    settings = load_settings({"STATEWRIGHT_HOME": str(home),
                              "STATEWRIGHT_LOGS_FOLDER": str(home / "logs")})
    engine = make_engine(settings.database_url)
    migrate(engine)
    orders_dag(fail=False).test(engine=engine, logs_folder=settings.logs_folder)
    failed = orders_dag(fail=True).test(engine=engine, logs_folder=settings.logs_folder)
    headers = add_user(engine, "admin", "admin")
    with serving(engine, settings) as url:
        yield UiServer(url, engine, failed.run_id, headers, settings.logs_folder)
    engine.dispose()


@pytest.fixture(scope="module")
def browser(ui_server: UiServer) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=_chromium_or_skip(), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser: Any, ui_server: UiServer, tmp_path: Path) -> Iterator[Any]:
    """A page signed in as the admin."""
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    # Waits end when what they wait for happens; a minute (not Playwright's 30 s) only bounds a
    # page drawn on a loaded machine.
    context.set_default_timeout(60_000)
    sign_in(context, ui_server, "admin")
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
