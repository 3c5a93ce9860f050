"""DockerHook and DockerOperator against a real Docker-API engine: Podman's API service
(``podman system service``), started by the ``docker_engine`` fixture with storage of its own
and a local image made from Debian's static busybox (there is no registry to pull from)."""

from __future__ import annotations

import json
import os
import pickle
import resource
import shutil
import subprocess
import tarfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from servers import run_airflow_dag, unavailable

from statewright.core.errors import StatewrightError

IMAGE = "localhost/busybox:latest"
BUSYBOX = "/bin/busybox"
APPLETS = ("sh", "echo", "cat", "cp", "ls", "sleep", "printf", "mkdir", "env")


@dataclass
class DockerEngine:
    url: str

    def client(self) -> Any:
        import docker

        return docker.APIClient(base_url=self.url, version="1.41", timeout=60)


def _busybox_image(base: Path, env: dict[str, str]) -> None:
    """A one-binary image: busybox and its applets' links, imported as ``IMAGE``."""
    rootfs = base / "rootfs.tar"
    with tarfile.open(rootfs, "w") as tar:
        for folder in ("bin", "tmp", "etc"):
            info = tarfile.TarInfo(folder)
            info.type, info.mode = tarfile.DIRTYPE, 0o1777 if folder == "tmp" else 0o755
            tar.addfile(info)
        tar.add(BUSYBOX, "bin/busybox")
        for applet in APPLETS:
            link = tarfile.TarInfo(f"bin/{applet}")
            link.type, link.linkname = tarfile.SYMTYPE, "busybox"
            tar.addfile(link)
    subprocess.run(["podman", "import", str(rootfs), IMAGE], env=env, check=True,
                   capture_output=True, timeout=120)


def _podman_config(base: Path) -> dict[str, str]:
    """Storage, run and temporary folders of this engine alone (vfs storage, cgroupfs, events
    in a file); limits no higher than this process's own, which a container may not raise."""
    nofile, nproc = (min(1024, resource.getrlimit(r)[1] % (1 << 62))
                     for r in (resource.RLIMIT_NOFILE, resource.RLIMIT_NPROC))
    limits = [f"nofile={nofile}:{nofile}", f"nproc={nproc}:{nproc}"]
    runtime = 'runtime = "runc"\n' if shutil.which("runc") else ""  # crun refuses hybrid cgroups
    (base / "containers.conf").write_text(
        f"[containers]\ndefault_ulimits = {json.dumps(limits)}\n[engine]\n{runtime}"
        f'cgroup_manager = "cgroupfs"\nevents_logger = "file"\ntmp_dir = "{base / "tmp"}"\n'
        f'volume_path = "{base / "volumes"}"\n')
    (base / "storage.conf").write_text(
        f'[storage]\ndriver = "vfs"\nrunroot = "{base / "run"}"\n'
        f'graphroot = "{base / "storage"}"\n')
    return dict(os.environ, CONTAINERS_CONF=str(base / "containers.conf"),
                CONTAINERS_STORAGE_CONF=str(base / "storage.conf"))


@pytest.fixture(scope="module")
def docker_engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DockerEngine]:
    if shutil.which("podman") is None or not os.path.exists(BUSYBOX):
        unavailable("podman or busybox is not installed (apt-get install -y podman runc "
                    "busybox-static)")
    base = tmp_path_factory.mktemp("podman")
    env = _podman_config(base)
    _busybox_image(base, env)
    socket_path = base / "podman.sock"
    url = f"unix://{socket_path}"
    with (base / "service.log").open("wb") as sink:
        proc = subprocess.Popen(["podman", "system", "service", "--time=0", url], env=env,
                                stdout=sink, stderr=subprocess.STDOUT)
    engine = DockerEngine(url)
    try:
        deadline = time.monotonic() + 60
        while not _answers(engine):
            if proc.poll() is not None or time.monotonic() > deadline:
                unavailable(f"podman's API service did not start: "
                            f"{(base / 'service.log').read_text()[-2000:]}")
            time.sleep(0.1)  # polling a server's start: no event to wait on
        yield engine
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        _remove_containers(base, env)


def _remove_containers(base: Path, env: dict[str, str]) -> None:
    """Every container of this engine, and the mounts they leave (each one's /dev/shm), gone:
    pytest can then delete the folder."""
    subprocess.run(["podman", "rm", "--all", "--force", "--time", "0"], env=env,
                   capture_output=True, timeout=120)
    prefix = str(base) + "/"
    with open("/proc/mounts") as mounts:
        left = [line.split()[1] for line in mounts if line.split()[1].startswith(prefix)]
    for mount_point in reversed(left):
        subprocess.run(["umount", mount_point], capture_output=True, timeout=60)


def _answers(engine: DockerEngine) -> bool:
    try:
        with engine.client() as client:
            return bool(client.ping())
    except Exception:
        return False


def _task_log(logs: Path, task_id: str) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(logs.rglob("*"))
                     if p.is_file() and task_id in str(p))


DAG_FILE = """
from datetime import datetime
from airflow import DAG
from airflow.providers.docker.operators.docker import DockerOperator

with DAG("docker_dag", start_date=datetime(2024, 1, 1), schedule=None, catchup=False) as dag:
    common = dict(image="{image}", docker_url="{url}", labels={{"test": "{label}"}})
    DockerOperator(task_id="hello", auto_remove="success", private_environment={{
                       "SECRET_TOKEN": "hunter2-private-value"}},
                   environment={{"GREETING": "hi-{{{{ run_id }}}}"}},
                   command=["sh", "-c", "echo first; "
                            "echo $GREETING $SECRET_TOKEN; echo $AIRFLOW_TMP_DIR"], **common)
    DockerOperator(task_id="lines", xcom_all=True, mount_tmp_dir=False, network_mode="none",
                   command="sh -c 'echo a; echo b; echo tmp=$AIRFLOW_TMP_DIR'", **common)
    DockerOperator(task_id="fails", auto_remove="force", command="sh -c 'echo bad >&2; exit 3'",
                   **common)
    DockerOperator(task_id="skips", skip_on_exit_code=5, auto_remove="force",
                   command="sh -c 'exit 5'", **common)
    DockerOperator(task_id="kept", command="['sh', '-c', 'echo kept']", **common)
"""


def _containers(engine: DockerEngine, label: str) -> list[str]:
    with engine.client() as client:
        found = client.containers(all=True, filters={"label": f"test={label}"})
    return sorted(name.lstrip("/") for c in found for name in c["Names"])


def test_an_airflow_dag_runs_containers_their_lines_in_the_task_log(
        docker_engine: DockerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    label = uuid.uuid4().hex
    source = DAG_FILE.format(image=IMAGE, url=docker_engine.url, label=label)
    logs = tmp_path / "logs"
    result = run_airflow_dag(tmp_path, monkeypatch, source, "docker_dag", run_id="r1",
                             logs_folder=logs)
    assert result.states == {"hello": "success", "lines": "success", "fails": "failed",
                             "skips": "skipped", "kept": "success"}
    assert result.ti("hello").return_value == "/tmp/airflow"  # the last line; tmp dir mounted
    assert result.ti("lines").return_value == ["a", "b", "tmp="]  # every line; no tmp dir
    assert result.ti("kept").return_value == "kept"  # a "[...]" string is a list
    assert "exit code 3" in (result.ti("fails").state_message or "")
    hello = _task_log(logs, "hello")
    assert "first" in hello
    assert "hi-r1 ***" in hello  # templated environment; the private one masked
    assert "hunter2-private-value" not in hello
    assert "bad" in _task_log(logs, "fails")  # standard error too
    # "success" removed the container that succeeded, "force" those that did not; "never"
    # (the default) keeps its container.
    kept = _containers(docker_engine, label)
    assert len(kept) == 2  # "lines" and "kept"


def test_airflow_2_module_volumes_auto_remove_true_and_retrieve_output(
        docker_engine: DockerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    label = uuid.uuid4().hex
    data = tmp_path / "data"
    data.mkdir()
    (data / "result.pickle").write_bytes(pickle.dumps({"rows": 3, "ok": True}))
    source = f"""
from datetime import datetime
from airflow import DAG
from airflow.operators.docker_operator import DockerOperator

with DAG("docker_v2", start_date=datetime(2024, 1, 1), schedule_interval=None) as dag:
    DockerOperator(task_id="result", image="{IMAGE}", docker_url="{docker_engine.url}",
                   volumes=["{data}:/data:ro"], auto_remove=True, labels={{"test": "{label}"}},
                   command="sh -c 'cp /data/result.pickle /tmp/out.pickle'",
                   retrieve_output=True, retrieve_output_path="/tmp/out.pickle")
"""
    result = run_airflow_dag(tmp_path, monkeypatch, source, "docker_v2")
    assert result.states == {"result": "success"}
    assert result.ti("result").return_value == {"rows": 3, "ok": True}
    assert _containers(docker_engine, label) == []


def test_a_try_past_its_execution_timeout_stops_its_container(
        docker_engine: DockerEngine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    label = uuid.uuid4().hex
    source = f"""
from datetime import datetime, timedelta
from airflow import DAG
from airflow.providers.docker.operators.docker import DockerOperator

with DAG("docker_timeout", start_date=datetime(2024, 1, 1), schedule=None) as dag:
    DockerOperator(task_id="slow", image="{IMAGE}", docker_url="{docker_engine.url}",
                   labels={{"test": "{label}"}}, auto_remove="success", command="sleep 600",
                   execution_timeout=timedelta(seconds=20))
"""
    result = run_airflow_dag(tmp_path, monkeypatch, source, "docker_timeout")
    assert result.states == {"slow": "failed"}
    assert result.ti("slow").state_name == "TimedOut"
    with docker_engine.client() as client:  # on_kill stopped it; "success" keeps it then
        found = client.containers(all=True, filters={"label": f"test={label}"})
    assert len(found) == 1 and found[0]["State"] != "running", found


def test_a_missing_image_or_engine_fails_with_a_clear_error(
        docker_engine: DockerEngine, tmp_path: Path) -> None:
    from statewright.providers.docker.hooks.docker import DockerHook
    from statewright.providers.docker.operators.docker import DockerOperator

    op = DockerOperator(task_id="nope", image="localhost/no-such-image:1",
                        docker_url=docker_engine.url, command="true")
    with pytest.raises(Exception, match="no-such-image"):
        op.execute({})
    with pytest.raises(StatewrightError, match="Failed to establish connection"):
        _ = DockerHook(base_url=f"unix://{tmp_path / 'absent.sock'}").api_client
    with pytest.raises(ValueError, match="auto_remove"):
        DockerOperator(task_id="bad", image=IMAGE, auto_remove="sometimes")
