"""``MySqlHook``."""
