"""``DockerHook``: a ``docker.APIClient`` to a Docker-API engine."""
