"""``PostgresHook``."""
