"""Airflow's google provider, the Cloud Storage part (see ``cloud.hooks.gcs``)."""
