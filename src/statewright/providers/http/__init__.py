"""Airflow's http provider: ``HttpHook``."""
