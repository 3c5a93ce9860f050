"""Template hardening (issue 36, part 7): ``macros`` exposes Airflow's functions and classes,
never a module (``macros.uuid.os``, ``macros.json.codecs.sys`` reached ``os`` and ``sys``), and a
``shell_quote`` filter keeps a value someone typed one shell word in a ``bash_command``."""

from __future__ import annotations

import subprocess
import types
from datetime import UTC, datetime
from typing import Any, ClassVar

import jinja2
import pytest

from statewright.sdk import DAG, BaseOperator
from statewright.sdk.runtime import build_context
from statewright.sdk.templating import TemplateRenderError, rendering

LOGICAL_DATE = datetime(2024, 3, 5, 6, 0, tzinfo=UTC)


class Echo(BaseOperator):
    template_fields: ClassVar[tuple[str, ...]] = ("value",)

    def __init__(self, *, value: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.value = value

    def execute(self, context: Any) -> Any:
        return self.value


def _render(value: Any, conf: dict[str, Any] | None = None) -> Any:
    with DAG("d") as dag:
        task = Echo(task_id="t", value=value)
    context = build_context(dag, task, run_id="manual__1", logical_date=LOGICAL_DATE,
                            data_interval_start=LOGICAL_DATE, data_interval_end=LOGICAL_DATE,
                            conf=conf, try_number=1, max_tries=0, xcoms={})
    with rendering(task, context):
        return task.value


@pytest.mark.parametrize("path", [
    "macros.uuid.os", "macros.json.codecs.sys", "macros.time.sys", "macros.dateutil.tz.os",
    "macros.random.__self__", "macros.ds_add.__globals__", "macros.json.decoder",
])
def test_templates_cannot_reach_a_module_through_macros(path: str) -> None:
    with pytest.raises((TemplateRenderError, jinja2.exceptions.UndefinedError,
                        jinja2.exceptions.SecurityError)):
        value = _render("{{ " + path + " }}")
        assert "module" not in str(value), value  # rendered at all: must not be a module
        raise TemplateRenderError(f"{path} rendered {value!r}")


def _reachable(root: object, depth: int) -> list[tuple[str, object]]:
    found, frontier = [], [("macros", root)]
    for _ in range(depth):
        nxt = []
        for name, obj in frontier:
            for attr in dir(obj):
                if attr.startswith("__"):
                    continue  # the sandbox refuses these
                try:
                    value = getattr(obj, attr)
                except Exception:
                    continue
                nxt.append((f"{name}.{attr}", value))
        found.extend(nxt)
        frontier = [(n, v) for n, v in nxt if not isinstance(v, (str, int, float, bytes))]
    return found


def test_no_attribute_path_from_macros_leads_to_a_module() -> None:
    from statewright.sdk.macros import template_macros

    modules = [name for name, value in _reachable(template_macros(), 3)
               if isinstance(value, types.ModuleType)]
    assert modules == []


def test_airflow_s_documented_macros_still_work_in_templates() -> None:
    text = ("{{ macros.datetime(2020, 1, 2).year }} {{ macros.timedelta(days=1).days }} "
            "{{ macros.ds_add(ds, 7) }} {{ macros.ds_format(ds, '%Y-%m-%d', '%d/%m') }} "
            "{{ macros.json.loads(macros.json.dumps({'a': 1})).a }} "
            "{{ macros.uuid.uuid4() | string | length }} {{ macros.uuid.UUID(int=0) }} "
            "{{ macros.dateutil.relativedelta.relativedelta(months=1).months }} "
            "{{ macros.dateutil.parser.parse('2024-01-02').day }} "
            "{{ macros.dateutil.tz.gettz('UTC') is not none }} "
            "{{ macros.random() < 1 }} {{ macros.time.time() > 0 }} "
            "{{ macros.time.strftime('%Y', macros.time.gmtime(0)) }}")
    assert _render(text) == ("2020 1 2024-03-12 05/03 1 36 "
                             "00000000-0000-0000-0000-000000000000 1 2 True True True 1970")


def test_macros_cannot_be_changed_from_a_template_or_code() -> None:
    from statewright.sdk.macros import template_macros

    ns = template_macros()
    with pytest.raises(AttributeError, match="cannot be changed"):
        ns.ds_add = print
    assert template_macros().ds_add is not print


def test_shell_quote_keeps_an_operator_supplied_value_one_word() -> None:
    evil = "x'; touch /tmp/pwned; echo '$(id)`id`"
    command = _render("echo {{ dag_run.conf['name'] | shell_quote }}", conf={"name": evil})
    out = subprocess.run(["bash", "-c", command], capture_output=True, text=True, check=True)
    assert out.stdout == evil + "\n"
    from statewright.sdk.templating import shell_quote

    assert shell_quote(None) == "''" and shell_quote(3) == "3"
