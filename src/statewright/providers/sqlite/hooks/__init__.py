"""``SqliteHook``."""
