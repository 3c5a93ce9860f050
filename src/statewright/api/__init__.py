"""The REST API (FastAPI, under /api/v1) and the web UI: ``create_app`` builds both.

``statewright.api.server`` runs the app with uvicorn (``statewright api-server``, and a thread
of ``statewright standalone``).
"""

from statewright.api.app import API_PREFIX, create_app

__all__ = ["API_PREFIX", "create_app"]
