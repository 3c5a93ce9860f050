"""Flow runs' services: the recorder (states through the one door, heartbeats, crashes)."""
