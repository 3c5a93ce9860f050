"""More TaskFlow: @task.sensor, edge labels (Label), pendulum datetimes."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pendulum
import pytest

from statewright.core.errors import DagDefinitionError
from statewright.sdk import DAG, EmptyOperator, Label, PokeReturnValue, TaskGroup, dag, task
from statewright.sdk.decorators_sensor import DecoratedSensorOperator

# -- @task.sensor ------------------------------------------------------------------------------


def test_task_sensor_builds_a_sensor_with_the_sensor_arguments():
    with DAG("d") as d:
        @task.sensor(poke_interval=60, timeout=3600, mode="reschedule")
        def wait_for_upstream() -> PokeReturnValue:
            return PokeReturnValue(is_done=True, xcom_value="xcom_value")

        wait_for_upstream()
    sensor = d.get_task("wait_for_upstream")
    assert isinstance(sensor, DecoratedSensorOperator) and sensor.is_sensor
    assert (sensor.mode, sensor.poke_interval, sensor.timeout) == ("reschedule", 60.0, 3600.0)
    assert d.serialize()["tasks"][0]["is_sensor"] is True


def test_task_sensor_done_returns_the_poke_value(run):
    with DAG("d") as d:
        @task.sensor(poke_interval=1)
        def ready(n):
            return PokeReturnValue(is_done=True, xcom_value={"n": n})

        ready(3)
    outcome = run(d, "ready")
    assert (outcome.kind, outcome.return_value) == ("success", {"n": 3})


def test_task_sensor_bool_result_and_reschedule(run):
    with DAG("d") as d:
        @task.sensor(mode="reschedule", poke_interval=30)
        def not_yet():
            return False

        @task.sensor
        def yes():
            return True

        not_yet()
        yes()
    assert run(d, "not_yet").kind == "up_for_reschedule"
    assert (run(d, "yes").kind, run(d, "yes").return_value) == ("success", None)


def test_task_sensor_bad_arguments_are_refused():
    with DAG("d"):
        @task.sensor(mode="sometimes")
        def a():
            return True

        with pytest.raises(DagDefinitionError, match="mode"):
            a()

        @task.sensor(multiple_outputs=True)
        def b():
            return True

        with pytest.raises(DagDefinitionError, match="multiple_outputs"):
            b()

        @task.sensor(deferrable=True)
        def c():
            return True

        with pytest.raises(DagDefinitionError, match=r"no trigger to defer to.*reschedule"):
            c()


# -- Label -------------------------------------------------------------------------------------


def test_labels_make_the_edge_and_are_recorded():
    with DAG("d") as d:
        a, b, c, e = (EmptyOperator(task_id=x) for x in "abce")
        a >> Label("yes") >> b
        b << Label("also") << c
        [a, c] >> Label("fan in") >> e
    assert b.upstream_task_ids == {"a", "c"}
    assert e.upstream_task_ids == {"a", "c"}
    assert d.get_edge_info("a", "b") == {"label": "yes"}
    assert d.get_edge_info("c", "b") == {"label": "also"}
    assert d.serialize()["edge_info"] == [
        {"upstream": "a", "downstream": "b", "label": "yes"},
        {"upstream": "a", "downstream": "e", "label": "fan in"},
        {"upstream": "c", "downstream": "b", "label": "also"},
        {"upstream": "c", "downstream": "e", "label": "fan in"},
    ]


def test_labels_with_taskflow_outputs_groups_and_lists():
    @task
    def check():
        return 1

    with DAG("d") as d:
        start = check()
        with TaskGroup("g") as g:
            x = EmptyOperator(task_id="x")
            y = EmptyOperator(task_id="y")
        end1, end2 = EmptyOperator(task_id="end1"), EmptyOperator(task_id="end2")
        start >> Label("go") >> g >> Label("then") >> [end1, end2]
    assert x.upstream_task_ids == y.upstream_task_ids == {"check"}
    assert end1.upstream_task_ids == {"g.x", "g.y"}
    assert d.get_edge_info("check", "g.y") == {"label": "go"}
    assert d.get_edge_info("g.x", "end2") == {"label": "then"}


def test_labels_in_chain():
    from statewright.sdk import chain

    with DAG("d") as d:
        a, b, c = (EmptyOperator(task_id=x) for x in "abc")
        chain(a, Label("one"), b, Label("two"), c)
    assert (b.upstream_task_ids, c.upstream_task_ids) == ({"a"}, {"b"})
    assert d.get_edge_info("a", "b") == {"label": "one"}
    assert d.get_edge_info("b", "c") == {"label": "two"}


@pytest.mark.parametrize("bad", ["", None, 3])
def test_a_label_must_be_a_non_empty_string(bad):
    with pytest.raises(DagDefinitionError, match="Label"):
        Label(bad)


# -- pendulum --------------------------------------------------------------------------------


def test_pendulum_datetimes_are_accepted_and_stored_as_plain_datetimes():
    with DAG("d", start_date=pendulum.datetime(2021, 1, 1, tz="Europe/Paris"),
             end_date=pendulum.datetime(2022, 1, 1, tz="UTC"), schedule="@daily") as d:
        EmptyOperator(task_id="a")
    assert type(d.start_date) is datetime and d.start_date.tzinfo == ZoneInfo("Europe/Paris")
    assert d.timezone == ZoneInfo("Europe/Paris")
    assert d.end_date == datetime(2022, 1, 1, tzinfo=UTC)
    data = d.serialize()
    assert (data["timezone"], data["start_date"]) == ("Europe/Paris", "2020-12-31T23:00:00+00:00")


def test_pendulum_in_default_args_and_a_pendulum_timezone():
    @dag(schedule=None, default_args={"start_date": pendulum.datetime(2021, 1, 1, tz="UTC"),
                                      "retry_delay": pendulum.duration(minutes=5)},
         timezone=pendulum.timezone("Asia/Tokyo"))
    def tz_dag():
        EmptyOperator(task_id="a")

    d = tz_dag()
    assert d.timezone == ZoneInfo("Asia/Tokyo")
    assert d.start_date == datetime(2021, 1, 1, tzinfo=UTC)
    assert d.get_task("a").retry_delay == timedelta(minutes=5)
