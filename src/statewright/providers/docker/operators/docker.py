"""``DockerOperator``: run a command in a container (Airflow's docker provider).

As Airflow's: ``image`` (pulled when the engine lacks it, or always with ``force_pull``),
``command`` and ``entrypoint`` (a string starting with ``[`` is read as a Python list),
``environment``, ``private_environment`` (not templated, its values masked in the logs),
``env_file`` (``KEY=value`` lines), ``docker_url`` (one URL or a list; ``DOCKER_HOST``, else
``unix://var/run/docker.sock``), ``api_version``, the TLS arguments, ``docker_conn_id`` (a registry
login), ``mounts`` (``docker.types.Mount`` or its keyword dicts), ``mount_tmp_dir`` (a temporary
host directory bind-mounted at ``tmp_dir``, named by ``AIRFLOW_TMP_DIR``; dropped with a warning
when the engine cannot mount it), ``network_mode``, ``user``, ``working_dir``, ``cpus``,
``mem_limit``, ``shm_size``, ``dns``, ``extra_hosts``, ``port_bindings``, ``ulimits``, ``labels``
and the other container settings. Every line the container writes (stdout and stderr) goes to the
task log. A non-zero exit status fails the try (``skip_on_exit_code`` statuses skip the task).
The XCom is the last line, every line with ``xcom_all``, or with ``retrieve_output`` the pickle
at ``retrieve_output_path`` in the container. ``auto_remove``: ``never``, ``success`` or
``force``; Airflow 2's ``True``/``False`` mean ``success``/``never``, and Airflow 2's
``volumes`` (``"host:container[:ro]"``) become bind mounts.
"""

from __future__ import annotations

import ast
import contextlib
import io
import os
import pickle
import socket
import tarfile
import threading
from collections.abc import Container, Iterable, Sequence
from functools import cached_property
from tempfile import TemporaryDirectory
from typing import TYPE_CHECKING, Any, ClassVar

from statewright.core.errors import StatewrightError
from statewright.providers.docker.exceptions import (
    DockerContainerFailedException,
    DockerContainerFailedSkipException,
)
from statewright.providers.docker.hooks.docker import DEFAULT_TIMEOUT_SECONDS, DockerHook
from statewright.sdk import masking
from statewright.sdk.baseoperator import BaseOperator

if TYPE_CHECKING:
    from docker import APIClient

__all__ = ["DockerOperator", "fetch_logs", "run_attached", "stringify"]

_AUTO_REMOVE = ("never", "success", "force")
STREAM_GRACE = 5.0
"""Seconds a finished container's output may take to end before its stream is shut (the engine
holds all of it once the container has exited; Podman may keep the stream open for good)."""


def stringify(line: str | bytes) -> str:
    return line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line


def fetch_logs(log_stream: Iterable[str | bytes], log: Any) -> list[str]:
    """Each line of the stream to ``log`` as it comes; the lines (right-stripped)."""
    lines: list[str] = []
    buffer = ""
    for chunk in log_stream:
        buffer += stringify(chunk)
        *complete, buffer = buffer.split("\n")
        for line in complete:
            log.info("%s", line.rstrip())
            lines.append(line.rstrip())
    if buffer:
        log.info("%s", buffer.rstrip())
        lines.append(buffer.rstrip())
    return lines


def run_attached(cli: APIClient, container_id: str, tty: bool,
                 log: Any) -> tuple[list[str], int]:
    """Start the container and log its lines as they come; its lines and exit status.

    The output is attached before the start, so no line is lost. Once the container has
    exited, its output gets ``STREAM_GRACE`` seconds to end; then the stream is shut (an
    engine may keep a finished container's stream open)."""
    from docker.utils.socket import frames_iter

    sock = cli.attach_socket(container_id, params={"stdout": 1, "stderr": 1, "stream": 1})
    raw = getattr(sock, "_sock", sock)  # the socket under the SDK's SocketIO
    read = threading.Event()
    ended: dict[str, Any] = {}

    def wait() -> None:
        try:
            ended["status"] = cli.wait(container_id)["StatusCode"]
        except BaseException as exc:
            ended["error"] = exc
        if not read.wait(STREAM_GRACE):
            with contextlib.suppress(OSError):
                raw.shutdown(socket.SHUT_RDWR)

    try:
        cli.start(container_id)
        waiter = threading.Thread(target=wait, name=f"docker-wait-{container_id[:12]}",
                                  daemon=True)
        waiter.start()
        lines = fetch_logs((data for _, data in frames_iter(sock, tty)), log)
        read.set()
        waiter.join()
    finally:
        read.set()
        sock.close()
        raw.close()
    if "error" in ended:
        raise ended["error"]
    return lines, int(ended["status"])


def _auto_remove(value: Any) -> str:
    if value is True:
        return "success"
    if value is False:
        return "never"
    if value not in _AUTO_REMOVE:
        raise ValueError(f"Invalid `auto_remove` value {value!r}, expected one of 'never', "
                         "'success', or 'force'.")
    return str(value)


def _env_file_values(text: str) -> dict[str, str]:
    """``KEY=value`` lines (``export``, comments and quotes as in a ``.env`` file)."""
    values: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        values[key.strip()] = value
    return values


class DockerOperator(BaseOperator):
    template_fields: ClassVar[Sequence[str]] = ("image", "command", "environment", "env_file",
                                                "container_name", "mounts", "docker_conn_id")
    template_fields_renderers: ClassVar[dict[str, str]] = {"env_file": "yaml"}
    template_ext: ClassVar[Sequence[str]] = (".sh", ".bash", ".env")

    def __init__(self, *, image: str, api_version: str | None = None,
                 command: str | list[str] | None = None, container_name: str | None = None,
                 cpus: float = 1.0, docker_url: str | list[str] | None = None,
                 environment: dict[str, Any] | None = None,
                 private_environment: dict[str, Any] | None = None,
                 env_file: str | None = None, force_pull: bool = False,
                 mem_limit: float | str | None = None, host_tmp_dir: str | None = None,
                 network_mode: str | None = None, tls_ca_cert: str | None = None,
                 tls_client_cert: str | None = None, tls_client_key: str | None = None,
                 tls_verify: bool = True, tls_hostname: str | bool | None = None,
                 tls_ssl_version: str | None = None, mount_tmp_dir: bool = True,
                 tmp_dir: str = "/tmp/airflow", user: str | int | None = None,
                 mounts: list[Any] | None = None, entrypoint: str | list[str] | None = None,
                 working_dir: str | None = None, xcom_all: bool = False,
                 docker_conn_id: str | None = None, dns: list[str] | None = None,
                 dns_search: list[str] | None = None, auto_remove: Any = "never",
                 shm_size: int | None = None, tty: bool = False, hostname: str | None = None,
                 privileged: bool = False, cap_add: Iterable[str] | None = None,
                 extra_hosts: dict[str, str] | None = None, retrieve_output: bool = False,
                 retrieve_output_path: str | None = None,
                 timeout: int = DEFAULT_TIMEOUT_SECONDS, device_requests: list[Any] | None = None,
                 log_opts_max_size: str | None = None, log_opts_max_file: str | None = None,
                 ipc_mode: str | None = None,
                 skip_on_exit_code: int | Container[int] | None = None,
                 port_bindings: dict[Any, Any] | None = None, ulimits: list[Any] | None = None,
                 labels: dict[str, str] | list[str] | None = None,
                 volumes: list[str] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.auto_remove = _auto_remove(auto_remove)
        self.image = image
        self.api_version = api_version
        self.command = command
        self.container_name = container_name
        self.cpus = cpus
        self.docker_url = docker_url or os.environ.get("DOCKER_HOST") \
            or "unix://var/run/docker.sock"
        self.environment = dict(environment or {})
        self._private_environment = dict(private_environment or {})
        self.env_file = env_file
        self.force_pull = force_pull
        self.mem_limit = mem_limit
        self.host_tmp_dir = host_tmp_dir
        self.network_mode = network_mode
        self.tls_ca_cert, self.tls_client_cert = tls_ca_cert, tls_client_cert
        self.tls_client_key, self.tls_verify = tls_client_key, tls_verify
        self.tls_hostname, self.tls_ssl_version = tls_hostname, tls_ssl_version
        self.mount_tmp_dir = mount_tmp_dir
        self.tmp_dir = tmp_dir
        self.user = user
        self.mounts = [*(mounts or []), *(_volume_mount(v) for v in volumes or ())]
        self.entrypoint = entrypoint
        self.working_dir = working_dir
        self.xcom_all = xcom_all
        self.docker_conn_id = docker_conn_id
        self.dns, self.dns_search = dns, dns_search
        self.shm_size = shm_size
        self.tty = tty
        self.hostname = hostname
        self.privileged = privileged
        self.cap_add = cap_add
        self.extra_hosts = extra_hosts
        self.retrieve_output = retrieve_output
        self.retrieve_output_path = retrieve_output_path
        self.timeout = timeout
        self.device_requests = device_requests
        self.log_opts_max_size, self.log_opts_max_file = log_opts_max_size, log_opts_max_file
        self.ipc_mode = ipc_mode
        self.skip_on_exit_code: Container[int] = (
            skip_on_exit_code if isinstance(skip_on_exit_code, Container)
            else () if skip_on_exit_code is None else (skip_on_exit_code,))
        self.port_bindings = dict(port_bindings or {})
        if self.port_bindings and self.network_mode == "host":
            raise ValueError("Port bindings is not supported in the host network mode")
        self.ulimits = list(ulimits or [])
        self.labels = labels
        self.container: dict[str, Any] | None = None

    @cached_property
    def hook(self) -> DockerHook:
        tls = DockerHook.construct_tls_config(
            ca_cert=self.tls_ca_cert, client_cert=self.tls_client_cert,
            client_key=self.tls_client_key, verify=self.tls_verify,
            assert_hostname=self.tls_hostname, ssl_version=self.tls_ssl_version)
        return DockerHook(docker_conn_id=self.docker_conn_id, base_url=self.docker_url,
                          version=self.api_version, tls=tls, timeout=self.timeout)

    @property
    def cli(self) -> APIClient:
        return self.hook.api_client

    def execute(self, context: Any) -> Any:
        masking.mask_secret(self._private_environment)
        try:
            return self._execute()
        finally:
            if self.hook.client_created:
                self.cli.close()

    def _execute(self) -> Any:
        self.mounts = [_mount(m) for m in self.mounts]
        if self.force_pull or not self.cli.images(name=self.image):
            self._pull()
        self.log.info("Starting docker container from image %s", self.image)
        if not self.mount_tmp_dir:
            return self._run_image_with_mounts(self.mounts, add_tmp_variable=False)
        from docker.errors import APIError
        from docker.types import Mount

        with TemporaryDirectory(prefix="airflowtmp", dir=self.host_tmp_dir) as host_tmp:
            try:
                return self._run_image_with_mounts(
                    [*self.mounts, Mount(self.tmp_dir, host_tmp, "bind")], add_tmp_variable=True)
            except APIError as exc:
                if host_tmp not in str(exc):
                    raise
                self.log.warning(
                    "Using remote engine or docker-in-docker and mounting temporary volume from "
                    "host is not supported. Falling back to `mount_tmp_dir=False` mode. You can "
                    "set `mount_tmp_dir` parameter to False to disable mounting and remove the "
                    "warning")
                return self._run_image_with_mounts(self.mounts, add_tmp_variable=False)

    def _pull(self) -> None:
        self.log.info("Pulling docker image %s", self.image)
        latest: dict[str, str] = {}
        for output in self.cli.pull(self.image, stream=True, decode=True):
            if isinstance(output, dict) and output.get("error"):
                raise StatewrightError(f"cannot pull the image {self.image!r}: "
                                       f"{output['error']}")
            if isinstance(output, dict) and "status" in output:
                key = output.get("id", "")
                if latest.get(key) != output["status"]:
                    self.log.info("%s", f"{key}: {output['status']}" if key else output["status"])
                    latest[key] = output["status"]
            elif isinstance(output, str):
                self.log.info("%s", output)

    def _run_image_with_mounts(self, mounts: list[Any], add_tmp_variable: bool) -> Any:
        from docker.types import LogConfig

        if add_tmp_variable:
            self.environment["AIRFLOW_TMP_DIR"] = self.tmp_dir
        else:
            self.environment.pop("AIRFLOW_TMP_DIR", None)
        log_config = {k: v for k, v in (("max-size", self.log_opts_max_size),
                                        ("max-file", self.log_opts_max_file)) if v is not None}
        env_file = _env_file_values(self.env_file) if self.env_file else {}
        cli = self.cli
        self.container = cli.create_container(
            command=self.format_command(self.command), name=self.container_name,
            environment={**env_file, **self.environment, **self._private_environment},
            ports=list(self.port_bindings),
            host_config=cli.create_host_config(
                auto_remove=False, mounts=mounts, network_mode=self.network_mode,
                shm_size=self.shm_size, dns=self.dns, dns_search=self.dns_search,
                cpu_shares=round(self.cpus * 1024), port_bindings=self.port_bindings,
                mem_limit=self.mem_limit, cap_add=self.cap_add, extra_hosts=self.extra_hosts,
                privileged=self.privileged, device_requests=self.device_requests,
                log_config=LogConfig(config=log_config), ipc_mode=self.ipc_mode,
                ulimits=self.ulimits),
            image=self.image, user=self.user, entrypoint=self.format_command(self.entrypoint),
            working_dir=self.working_dir, tty=self.tty, hostname=self.hostname,
            labels=self.labels)
        container_id = self.container["Id"]
        exited = False
        try:
            lines, status = run_attached(cli, container_id, self.tty, self.log)
            exited = True
            if status in self.skip_on_exit_code:
                raise DockerContainerFailedSkipException(
                    f"Docker container returned exit code {status}. Skipping.", logs=lines)
            if status != 0:
                raise DockerContainerFailedException(
                    f"Docker container failed with exit code {status}", logs=lines)
            if self.retrieve_output:
                return self._attempt_to_retrieve_result()
            if self.do_xcom_push and lines:
                return lines if self.xcom_all else lines[-1]
            return None
        finally:
            # A container still running (the try timed out) is left to on_kill, which stops it.
            if self.auto_remove == "force" or (self.auto_remove == "success" and exited):
                self._remove(container_id)

    def _remove(self, container_id: str) -> None:
        from docker.errors import APIError

        try:
            self.cli.remove_container(container_id, force=True)
        except APIError as exc:  # never hides the try's own outcome
            self.log.warning("Failed to remove docker container %s: %s", container_id, exc)

    def _attempt_to_retrieve_result(self) -> Any:
        """The object pickled at ``retrieve_output_path`` in the container, or None."""
        from docker.errors import APIError

        assert self.container is not None
        try:
            archive, stat = self.cli.get_archive(self.container["Id"], self.retrieve_output_path)
        except APIError:
            return None
        if stat["size"] == 0:
            return None
        with io.BytesIO(b"".join(archive)) as buffer, tarfile.open(fileobj=buffer) as tar:
            member = tar.extractfile(stat["name"])
            return None if member is None else pickle.load(member)  # as Airflow: a pickle

    @staticmethod
    def format_command(command: str | list[str] | None) -> str | list[str] | None:
        if isinstance(command, str) and command.strip().startswith("["):
            parsed: list[str] = ast.literal_eval(command)
            return parsed
        return command

    @staticmethod
    def unpack_environment_variables(env_str: str) -> dict[str, str]:
        return _env_file_values(env_str)

    def on_kill(self) -> None:
        if not self.hook.client_created or self.container is None:
            return
        from docker.errors import APIError

        self.log.info("Stopping docker container")
        try:
            self.cli.stop(self.container["Id"])
        except APIError as exc:  # already removed ("force")
            self.log.info("Failed to stop docker container %s: %s", self.container["Id"], exc)
        if self.auto_remove == "force":
            self._remove(self.container["Id"])


def _mount(value: Any) -> Any:
    from docker.types import Mount

    if isinstance(value, Mount) or (isinstance(value, dict) and "Target" in value):
        return value
    if isinstance(value, dict):
        return Mount(**value)
    raise TypeError(f"mounts: expected docker.types.Mount or a dict of its arguments, got "
                    f"{value!r}")


def _volume_mount(spec: str) -> dict[str, Any]:
    """Airflow 2's ``volumes=["/host:/container[:ro]"]`` as a bind mount."""
    source, _, rest = str(spec).partition(":")
    target, _, mode = rest.partition(":")
    if not source or not target:
        raise ValueError(f"volumes: expected 'host_path:container_path[:ro]', got {spec!r}")
    return {"target": target, "source": source, "type": "bind", "read_only": mode == "ro"}
