"""``HttpSensor``."""
