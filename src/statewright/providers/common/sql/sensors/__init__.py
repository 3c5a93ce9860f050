"""``SqlSensor`` (``sensors.sql``)."""
