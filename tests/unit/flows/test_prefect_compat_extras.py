"""What real Prefect files use beside @flow and @task, in memory: allow_failure, Prefect 2's
task runner names, blocks, variables, artifacts, events, concurrency, the alias's modules."""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterator

import pytest

from statewright.flows import MemoryBackend, allow_failure, flow, task, use_backend
from statewright.flows import extras as flow_extras
from statewright.flows.artifacts import artifacts_of, create_markdown_artifact
from statewright.flows.blocks import JSON, Block, Secret, String
from statewright.flows.concurrency.sync import ConcurrencySlotAcquisitionError, concurrency
from statewright.flows.task_runners import ConcurrentTaskRunner, SequentialTaskRunner
from statewright.flows.variables import Variable


@pytest.fixture
def memory() -> Iterator[MemoryBackend]:
    backend = MemoryBackend()
    flow_extras.memory = flow_extras.MemoryExtras()
    use_backend(lambda: backend)
    yield backend
    use_backend(None)


def test_allow_failure_runs_the_downstream_task_with_the_upstream_exception(
        memory: MemoryBackend) -> None:
    @task
    def boom() -> int:
        raise ValueError("upstream broke")

    @task
    def after(x: object) -> str:
        return f"got {type(x).__name__}: {x}"

    @task
    def blocked(x: object) -> str:
        return "ran"

    @flow
    def pipeline() -> tuple[object, object, object]:
        up = boom.submit()
        a = after(allow_failure(up))
        waited = after.submit(1, wait_for=[allow_failure(up)]).result()
        b = blocked.submit(up)
        b.wait()
        return a, waited, b.state.name

    a, waited, blocked_name = pipeline()
    assert a == "got ValueError: upstream broke"
    assert waited == "got int: 1"
    assert blocked_name == "NotReady"  # without allow_failure the call does not run


def test_map_and_submit_with_return_state_give_final_states(memory: MemoryBackend) -> None:
    @task
    def add_42(x: int | None) -> int:
        assert x is not None
        return x + 42

    @flow
    def f() -> tuple[list[int], list[str], str]:
        states = add_42.map([4, None, 6], return_state=True)
        one = add_42.submit(None, return_state=True)
        return ([s.result() for s in states if s.is_completed()], [s.name for s in states],
                one.name)

    assert f() == ([46, 48], ["Completed", "Failed", "Completed"], "Failed")


def test_prefect_2_task_runner_names_are_the_thread_runner() -> None:
    assert ConcurrentTaskRunner(max_workers=3).max_workers == 3
    assert SequentialTaskRunner().max_workers == 1


def test_a_secret_block_saves_loads_and_refuses_a_second_save_without_overwrite(
        memory: MemoryBackend) -> None:
    Secret(value="s3cr3t").save("api-key")
    loaded = Secret.load("api-key")
    assert loaded.get() == "s3cr3t"
    assert "s3cr3t" not in repr(loaded)  # shown masked, as Prefect's SecretStr
    with pytest.raises(ValueError, match="already exists"):
        Secret(value="other").save("api-key")
    Secret(value={"user": "u"}).save("api-key", overwrite=True)
    assert Secret.load("api-key").get() == {"user": "u"}
    with pytest.raises(ValueError, match="Unable to find block document named nope for block "
                                         "type secret"):
        Secret.load("nope")
    String(value="hello").save("greeting")
    JSON(value={"a": [1, 2]}).save("cfg")
    assert String.load("greeting").value == "hello"
    assert JSON.load("cfg").value == {"a": [1, 2]}


def test_a_custom_block_keeps_its_typed_fields_and_loads_by_type_slash_name(
        memory: MemoryBackend) -> None:
    class WarehouseConfig(Block):
        host: str = "localhost"
        port: int = 5432

    WarehouseConfig(host="db.internal", port=6543).save("prod")
    block = WarehouseConfig.load("prod")
    assert (block.host, block.port) == ("db.internal", 6543)
    assert WarehouseConfig.get_block_type_slug() == "warehouse-config"
    generic = Block.load("warehouse-config/prod")
    assert isinstance(generic, WarehouseConfig) and generic.port == 6543


def test_variables_keep_json_values_and_refuse_overwrite_unless_asked(
        memory: MemoryBackend) -> None:
    assert Variable.get("missing", default="d") == "d"
    Variable.set("threshold", 7)
    Variable.set("label", "plain text")
    Variable.set("config", '{"debug": true}')  # a string that is JSON stays a string
    assert Variable.get("threshold") == 7 and Variable.get("label") == "plain text"
    assert Variable.get("config") == '{"debug": true}'
    with pytest.raises(ValueError, match="already exists"):
        Variable.set("threshold", 8)
    Variable.set("threshold", 8, overwrite=True)
    assert Variable.get("threshold") == 8


def test_artifacts_are_kept_with_their_run_and_bad_keys_refused(memory: MemoryBackend) -> None:
    @task
    def report() -> None:
        create_markdown_artifact("# Report", key="daily-report", description="d")

    @flow
    def f() -> int:
        report()
        create_markdown_artifact("flow level")
        with pytest.raises(ValueError, match="lowercase letters, numbers, and dashes"):
            create_markdown_artifact("x", key="Bad_Key")
        from statewright.flows.context import flow_run_ctx

        ctx = flow_run_ctx.get()
        assert ctx is not None
        return ctx.flow_run.id

    run_pk = f()
    found = artifacts_of(run_pk)
    assert [(a["task_run"], a["key"], a["data"]) for a in found] == [
        ("report-0", "daily-report", "# Report"), (None, None, "flow level")]


def test_a_concurrency_limit_holds_its_slots_for_the_block(memory: MemoryBackend) -> None:
    flow_extras.memory.pools["db"] = 1
    inside = threading.Event()
    release = threading.Event()
    order: list[str] = []

    def holder() -> None:
        with concurrency("db"):
            inside.set()
            release.wait(5)
            order.append("first out")

    t = threading.Thread(target=holder)
    t.start()
    assert inside.wait(5)
    with pytest.raises(TimeoutError):
        with concurrency("db", timeout_seconds=0.05):
            pass  # pragma: no cover - never entered: the only slot is held
    release.set()
    with concurrency("db", timeout_seconds=5):
        order.append("second in")
    t.join()
    assert order == ["first out", "second in"]
    with concurrency("no-such-limit"):
        pass  # a limit that does not exist does not hold the block (Prefect's default)
    with pytest.raises(ConcurrencySlotAcquisitionError):
        with concurrency("no-such-limit", strict=True):
            pass  # pragma: no cover
    with pytest.raises(ConcurrencySlotAcquisitionError, match="has 1"):
        with concurrency("db", occupy=2):
            pass  # pragma: no cover


@pytest.mark.parametrize("module,names", [
    ("prefect.blocks.system", ["Secret", "String", "JSON"]),
    ("prefect.blocks.core", ["Block"]),
    ("prefect.artifacts", ["create_markdown_artifact", "create_table_artifact",
                           "create_link_artifact"]),
    ("prefect.concurrency.sync", ["concurrency"]),
    ("prefect.concurrency.asyncio", ["concurrency"]),
    ("prefect.events", ["emit_event"]),
    ("prefect.deployments", ["run_deployment"]),
    ("prefect.client.schemas.objects", ["Flow", "FlowRun"]),
    ("prefect.client.orchestration", ["get_client"]),
    ("prefect.utilities.annotations", ["allow_failure"]),
    ("prefect.task_runners", ["ConcurrentTaskRunner"]),
    ("prefect.variables", ["Variable"]),
    ("prefect", ["allow_failure", "get_client", "flow", "task"]),
])
def test_the_prefect_alias_answers_the_modules_real_files_import(
        module: str, names: list[str]) -> None:
    from statewright.compat import prefect as alias

    alias.install()
    try:
        mod = importlib.import_module(module)
        assert all(hasattr(mod, n) for n in names)
    finally:
        alias.uninstall()


def test_prefect_runtime_reads_the_run_of_the_code_calling(memory: MemoryBackend) -> None:
    from statewright.flows.run_info import deployment, flow_run, task_run

    @task
    def inner() -> tuple[object, object]:
        return task_run.name, flow_run.parameters

    @flow(flow_run_name="run-{n}")
    def outer(n: int = 3) -> tuple[object, ...]:
        return (flow_run.name, flow_run.flow_name, task_run.name, *inner())

    assert outer() == ("run-3", "outer", None, "inner-0", {"n": 3})
    assert (flow_run.name, flow_run.parameters, deployment.name) == (None, {}, None)


def test_prefect_exceptions_and_task_input_hash_resolve() -> None:
    from statewright.compat import prefect as alias

    alias.install()
    try:
        exc = importlib.import_module("prefect.exceptions")
        tasks = importlib.import_module("prefect.tasks")
        runtime = importlib.import_module("prefect.runtime")
        assert issubclass(exc.ObjectNotFound, ValueError) and callable(tasks.task_input_hash)
        assert runtime.flow_run.name is None
        prefect = importlib.import_module("prefect")
        assert prefect.runtime.task_run.name is None  # `from prefect import runtime` too
        import statewright.flows

        assert statewright.flows.runtime.open_backend  # the alias took nothing's place
    finally:
        alias.uninstall()
