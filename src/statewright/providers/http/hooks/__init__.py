"""``HttpHook`` (``hooks.http``)."""
