"""Logging and metrics shared by every component."""
