"""``DockerOperator``: a command in a container."""
