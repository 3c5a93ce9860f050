"""XCom values as Airflow 3 passes them, through real ``dag.test()`` runs on SQLite and
PostgreSQL: each type a task returns reaches the next task as the same type and value (TaskFlow
arguments, ``xcom_pull``, pushed keys, templates, ``multiple_outputs``, mapping over a returned
tuple), the database row holds the tagged JSON, and a value that cannot be stored fails its
try with a message naming the type and the task."""

from __future__ import annotations

import dataclasses
import math
import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import attrs
import numpy as np
import pandas as pd
import pydantic
from sqlalchemy import Engine, select

from statewright.db.tables import xcom
from statewright.sdk import DAG, PythonOperator, task


@dataclasses.dataclass
class Order:
    id: int
    amount: Decimal
    placed: datetime


@attrs.frozen
class Box:
    size: int
    tags: tuple[str, ...]


class Customer(pydantic.BaseModel):
    name: str
    since: date


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"sku": ["a", "b"], "price": [Decimal("1.10"), Decimal("2.25")],
                         "qty": [1, 2], "ratio": [0.1 + 0.2, math.nan]})


def _same(expected: Any) -> Callable[[Any], None]:
    def check(value: Any) -> None:
        assert type(value) is type(expected), (type(value), type(expected))
        assert value == expected, (value, expected)
    return check


def _same_array(expected: np.ndarray) -> Callable[[Any], None]:
    def check(value: Any) -> None:
        assert isinstance(value, np.ndarray) and value.dtype == expected.dtype
        np.testing.assert_array_equal(value, expected)
    return check


def _same_frame(value: Any) -> None:
    assert isinstance(value, pd.DataFrame)
    pd.testing.assert_frame_equal(value, _frame())


def _same_series(value: Any) -> None:
    assert isinstance(value, pd.Series)
    pd.testing.assert_series_equal(value, pd.Series([1.5, 2.5], name="s"))


CASES: dict[str, tuple[Callable[[], Any], Callable[[Any], None]]] = {
    name: (make, check or _same(make())) for name, make, check in [
        ("decimal", lambda: Decimal("12.50"), None),
        ("datetime_aware", lambda: datetime(2026, 3, 28, 9, tzinfo=ZoneInfo("Europe/Paris")),
         None),
        ("datetime_naive", lambda: datetime(2026, 1, 2, 3, 4, 5), None),
        ("date", lambda: date(2026, 1, 2), None),
        ("time", lambda: time(8, 30), None),
        ("timedelta", lambda: timedelta(hours=1, microseconds=5), None),
        ("tuple", lambda: (1, "a", (Decimal(2),)), None),
        ("set", lambda: {"x", "y"}, None),
        ("frozenset", lambda: frozenset({1, 2}), None),
        ("uuid", lambda: uuid.UUID("12345678-1234-5678-1234-567812345678"), None),
        ("bytes", lambda: b"\x00\x01raw", None),
        ("nan_and_inf", lambda: [math.inf, -math.inf], None),
        ("int_keys", lambda: {1: "one", 2: "two"}, None),
        ("dataclass", lambda: Order(7, Decimal("9.99"), datetime(2026, 1, 1, tzinfo=UTC)), None),
        ("attrs", lambda: Box(3, ("fragile",)), None),
        ("pydantic", lambda: Customer(name="Ada", since=date(2020, 5, 1)), None),
        ("numpy_int", lambda: np.int64(42), None),
        ("numpy_float", lambda: np.float32(0.5), None),
        ("numpy_array", lambda: np.arange(6, dtype=np.int16).reshape(2, 3),
         _same_array(np.arange(6, dtype=np.int16).reshape(2, 3))),
        ("dataframe", _frame, _same_frame),
        ("series", lambda: pd.Series([1.5, 2.5], name="s"), _same_series),
        ("plain", lambda: {"a": [1, 2.5, None, True, "s"]}, None),
    ]
}


def _receive(name: str) -> Callable[[Any], bool]:
    def receive(value: Any) -> bool:
        CASES[name][1](value)
        return True
    return receive


def test_every_type_reaches_the_next_task_as_it_was_returned(engine: Engine) -> None:
    """Task A returns the value, task B (a TaskFlow argument) asserts its type and value."""
    with DAG("xcom_types") as dag:
        for name, (make, _) in CASES.items():
            produced = task(task_id=f"give_{name}")(make)()
            task(task_id=f"take_{name}")(_receive(name))(produced)
    result = dag.test(engine=engine)
    failed = {k: v.state_message for k, v in result.task_instances.items()
              if v.state.value != "success"}
    assert not failed
    assert result.ti("give_decimal").return_value == Decimal("12.50")  # read back for you
    with engine.connect() as conn:
        rows = {r.task_id: r.value for r in conn.execute(
            select(xcom.c.task_id, xcom.c.value).where(xcom.c.key == "return_value"))}
    assert rows["give_decimal"] == {"__type": "decimal", "value": "12.50"}
    assert rows["give_dataclass"]["__classname__"] == f"{__name__}.Order"
    assert rows["give_plain"] == {"a": [1, 2.5, None, True, "s"]}  # plain JSON stays plain


def _push_and_template(ti: Any) -> Decimal:
    ti.xcom_push(key="tax", value=Decimal("0.20"))
    ti.xcom_push(key="orders", value=[Order(1, Decimal("5"), datetime(2026, 1, 1, tzinfo=UTC))])
    return Decimal("12.50")


def _pull(ti: Any, rendered: str) -> str:
    total = ti.xcom_pull(task_ids="money")
    tax = ti.xcom_pull(task_ids="money", key="tax")
    orders = ti.xcom_pull(task_ids="money", key="orders")
    assert (total, tax) == (Decimal("12.50"), Decimal("0.20")) and type(tax) is Decimal
    assert isinstance(orders[0], Order) and orders[0].amount == Decimal("5")
    assert rendered == "12.50 0.20"  # a template pulls the value, shown as str() shows it
    return str(total * (1 + tax))


def test_pushed_values_pulls_and_templates_read_the_original_types(engine: Engine) -> None:
    with DAG("xcom_push_types") as dag:
        money = PythonOperator(task_id="money", python_callable=_push_and_template)
        pull = PythonOperator(
            task_id="pull", python_callable=_pull, op_kwargs={"rendered": (
                "{{ ti.xcom_pull(task_ids='money') }} "
                "{{ ti.xcom_pull(task_ids='money', key='tax') }}")})
        money >> pull
    result = dag.test(engine=engine)
    assert result.states == {"money": "success", "pull": "success"}, result.ti("pull")
    assert result.ti("pull").return_value == "15.0000"


def test_multiple_outputs_and_mapping_over_a_returned_tuple(engine: Engine) -> None:
    with DAG("xcom_mapping_types") as dag:
        @task(multiple_outputs=True)
        def split() -> dict[str, Any]:
            return {"prices": (Decimal("1.5"), Decimal("2.5"), Decimal("4")),
                    "when": date(2026, 2, 1)}

        @task
        def double(price: Decimal, when: date) -> Decimal:
            assert type(price) is Decimal and type(when) is date
            return price * 2

        @task
        def total(doubled: Any) -> Decimal:
            values = list(doubled)
            assert all(type(v) is Decimal for v in values), values
            return sum(values, Decimal(0))

        parts = split()
        total(double.partial(when=parts["when"]).expand(price=parts["prices"]))
    result = dag.test(engine=engine)
    assert result.state.value == "success", {k: v.state_message for k, v in
                                            result.task_instances.items()}
    assert sorted(k for k in result.task_instances if k.startswith("double")) == [
        "double[0]", "double[1]", "double[2]"]
    assert result.ti("total").return_value == Decimal("16.0")


def test_a_value_that_cannot_be_stored_fails_its_try_naming_type_and_task() -> None:
    with DAG("xcom_unstorable") as dag:
        @task
        def opens_a_file() -> Any:
            return {"handle": open}  # a builtin function: no form for it

        @task
        def pushes_a_lock(ti: Any = None) -> None:
            import threading

            ti.xcom_push(key="lock", value=threading.Lock())

        opens_a_file()
        pushes_a_lock()
    result = dag.test()
    assert result.states == {"opens_a_file": "failed", "pushes_a_lock": "failed"}
    message = result.ti("opens_a_file").state_message or ""
    assert message.startswith("task 'opens_a_file' returned a value of type "
                              "builtin_function_or_method (value['handle']: object of type")
    assert "cannot be stored as JSON" in message
    lock = result.ti("pushes_a_lock").state_message or ""
    assert "task 'pushes_a_lock': xcom_push('lock', ...) got a value of type lock" in lock


EXECUTOR_DAG = '''
import dataclasses
from decimal import Decimal
from statewright.sdk import DAG, task


@dataclasses.dataclass
class Batch:
    id: int
    total: Decimal


with DAG("xcom_types_executor"):
    @task(queue=QUEUE)
    def make():
        return Batch(1, Decimal("2.50")), (Decimal("1.1"), Decimal("2.2"))

    @task(queue=QUEUE)
    def parts():
        return (Decimal("1.5"), Decimal("2.5"))

    @task(queue=QUEUE)
    def double(x):
        assert type(x) is Decimal, type(x)
        return x * 2

    @task(queue=QUEUE)
    def check(pair, doubled):
        batch, amounts = pair
        assert isinstance(batch, Batch) and type(batch.total) is Decimal, batch
        assert amounts == (Decimal("1.1"), Decimal("2.2")), amounts
        assert list(doubled) == [Decimal("3.0"), Decimal("5.0")], doubled
        return batch.total + sum(amounts)

    check(make(), double.expand(x=parts()))
'''
"""A DAG file whose values (a dataclass of the file itself, Decimals, a tuple mapped over)
cross task processes: the Celery tests use it too."""


def check_executor_run(engine: Engine, run_pk: int) -> None:
    """Every task of the run succeeded and ``check`` stored the sum as a Decimal."""
    from statewright.db.repositories import task_instances as ti_repo
    from statewright.db.repositories import xcoms as xcom_repo

    with engine.connect() as conn:
        tis = ti_repo.by_run(conn, run_pk)
        stored = xcom_repo.get_return_values(conn, [(run_pk, "check")])
    assert {(t.task_id, t.map_index, t.state) for t in tis if t.state != "success"} == set(), [
        (t.task_id, t.state_message) for t in tis]
    assert stored[(run_pk, "check")] == {"__type": "decimal", "value": "5.80"}


def test_values_cross_local_executor_task_processes(engine: Engine, tmp_path: Any) -> None:
    import threading

    from statewright.core.clock import utcnow
    from statewright.core.transitions import Actor
    from statewright.db.engine import transaction
    from statewright.db.repositories import runs as run_repo
    from statewright.services.dag_processor import DagProcessor
    from statewright.services.dag_runs import trigger_dag
    from statewright.services.dag_view import DagViewCache
    from statewright.services.executors.local import LocalExecutor
    from statewright.services.scheduler.scheduler import Scheduler, SchedulerConfig

    (tmp_path / "dags").mkdir()
    (tmp_path / "dags" / "types.py").write_text(EXECUTOR_DAG.replace("QUEUE", "'default'"))
    DagProcessor(engine, tmp_path / "dags").run_once()
    views = DagViewCache()
    executor = LocalExecutor(engine, parallelism=2, views=views, logs_folder=tmp_path / "logs",
                             heartbeat_seconds=0.5)
    executor.start()
    scheduler = Scheduler(engine, executor, views=views,
                          config=SchedulerConfig(idle_seconds=0.1))
    stop = threading.Event()
    thread = threading.Thread(target=scheduler.run_forever, args=(stop,), daemon=True)
    thread.start()
    try:
        with transaction(engine) as conn:
            run_pk, _ = trigger_dag(conn, "xcom_types_executor", now=utcnow(),
                                         actor=Actor.USER)
        for _ in range(600):  # the run ends within 60 s
            with engine.connect() as conn:
                if run_repo.get(conn, run_pk).state in ("success", "failed"):
                    break
            stop.wait(0.1)
    finally:
        stop.set()
        thread.join(10)
        executor.stop()
    check_executor_run(engine, run_pk)
