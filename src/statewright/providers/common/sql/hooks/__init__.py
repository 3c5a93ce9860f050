"""``DbApiHook`` (``hooks.sql``)."""
