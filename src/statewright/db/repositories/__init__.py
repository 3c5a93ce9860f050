"""Named query functions, one module per entity. Services call these; they hold no SQL."""
