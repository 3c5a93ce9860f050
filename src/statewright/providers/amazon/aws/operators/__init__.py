"""Airflow's provider package at its path, answered by statewright's own code."""
