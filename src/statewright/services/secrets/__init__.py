"""Connections and variables on the service side: the database store handed to the SDK, the
relay that answers a task process's lookups in its worker, and the operations the CLI and the
API share (add, list, import, export, rotate)."""
