"""Airflow's amazon provider transfers: local files and SFTP to and from S3."""
