"""Airflow's docker provider: ``DockerHook`` and ``DockerOperator`` on the ``docker`` SDK, for any
engine answering the Docker API (Docker, or Podman's ``podman system service``)."""
