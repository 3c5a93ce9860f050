"""Settings, read from the environment (``STATEWRIGHT_*``) with embedded defaults."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TypeVar

from statewright.core.errors import ConfigurationError
from statewright.core.limits import InputLimits

N = TypeVar("N", int, float)


def _int(env: Mapping[str, str], key: str, default: int) -> int:
    raw = env.get(key)
    if raw is None or raw == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise ConfigurationError(
            f"{key}={raw!r} is not a whole number; set it to e.g. {default}.") from None


def _float(env: Mapping[str, str], key: str, default: float) -> float:
    raw = env.get(key)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ConfigurationError(
            f"{key}={raw!r} is not a number; set it to e.g. {default}.") from None


def _non_negative(env: Mapping[str, str], key: str, default: float) -> float:
    value = _float(env, key, default)
    if value < 0:
        raise ConfigurationError(f"{key}={value:g} is negative; set it to 0 or more seconds, "
                                 f"e.g. {default:g}.")
    return value


def _bool(env: Mapping[str, str], key: str, default: bool) -> bool:
    raw = env.get(key)
    if raw is None or raw == "":
        return default
    if raw.lower() in {"1", "true", "yes", "on"}:
        return True
    if raw.lower() in {"0", "false", "no", "off"}:
        return False
    raise ConfigurationError(f"{key}={raw!r} is not a boolean; use true or false.")


def _named(env: Mapping[str, str], name: str, *, section: str) -> str:
    """The variable a setting is read from: ``STATEWRIGHT_<NAME>`` when it is set, else
    Airflow's ``AIRFLOW__<SECTION>__<NAME>`` when that is, so a team's environment carries
    over; error messages name the variable that was read."""
    ours = f"STATEWRIGHT_{name}"
    theirs = f"AIRFLOW__{section}__{name}"
    return theirs if env.get(ours) in (None, "") and env.get(theirs) not in (None, "") else ours


def _positive(env: Mapping[str, str], key: str, read: Callable[..., N], default: N) -> N:
    value = read(env, key, default)
    if value <= 0:
        raise ConfigurationError(f"{key}={env.get(key)!r} must be greater than 0; "
                                 f"set it to e.g. {default}.")
    return value


DAGS_ARE_PAUSED_AT_CREATION = True
"""Airflow's default for ``[core] dags_are_paused_at_creation`` (the test suite turns it off)."""
EXECUTORS = ("local", "celery")
EXPOSE_CONFIG = ("false", "true", "non-sensitive-only")


def _choice(env: Mapping[str, str], key: str, choices: tuple[str, ...], default: str) -> str:
    raw = (env.get(key) or "").strip().lower()
    if not raw:
        return default
    if raw not in choices:
        raise ConfigurationError(f"{key}={env.get(key)!r} is not one of {', '.join(choices)}; "
                                 f"set it to e.g. {default}.")
    return raw


@dataclass(frozen=True)
class Settings:
    home: Path
    database_url: str
    dags_folder: Path
    logs_folder: Path
    parallelism: int = 8
    """Worker processes of the local executor."""
    scheduler_idle_seconds: float = 1.0
    """Longest sleep of the scheduler loop when no event wakes it."""
    heartbeat_seconds: float = 5.0
    zombie_threshold_seconds: float = 60.0
    shutdown_grace_seconds: float = 20.0
    """On SIGTERM: how long running tries get to stop before they are killed (Interrupted)."""
    queued_timeout_seconds: float = 600.0
    database_wait_seconds: float = 120.0
    """A service (scheduler, triggerer, DAG processor, worker) that starts while its database is
    unreachable tries again, with backoff, for this long before it exits."""
    dags_are_paused_at_creation: bool = DAGS_ARE_PAUSED_AT_CREATION
    """A new DAG starts paused unless its ``is_paused_upon_creation`` says otherwise
    (Airflow's ``[core] dags_are_paused_at_creation``, on by default)."""
    load_examples: bool = False
    fernet_key: str | None = None
    triggerer_capacity: int = 1000
    triggerer_health_threshold_seconds: float = 30.0
    """A triggerer silent for this long is dead: other triggerers take over its triggers."""
    triggerer_max_claims_per_loop: int = 1000
    api_host: str = "127.0.0.1"
    api_port: int = 8080
    dag_file_processor_timeout: float = 30.0
    """Seconds one DAG file may take to import before its process is killed."""
    dag_processor_parallelism: int = 2
    """DAG files imported at the same time, each in its own process."""
    dag_processor_interval_seconds: float = 5.0
    """How often the DAG processor looks for new, changed and deleted files."""
    max_dagruns_to_create_per_loop: int = 1000
    """DAGs whose scheduled run is due that one scheduler loop handles."""
    default_pool_slots: int = 128
    """Slots of ``default_pool`` when the scheduler has to create it."""
    late_run_threshold_seconds: float = 60.0
    """A run queued for longer than this is named Late."""
    late_task_threshold_seconds: float = 60.0
    """A task instance scheduled or queued for longer than this is named Late."""
    executor: str = "local"
    """``local`` (task processes of the scheduler's process) or ``celery`` (Celery workers)."""
    celery_broker_url: str = "redis://127.0.0.1:6379/0"
    """The Celery broker: ``redis://…`` or ``amqp://…`` (RabbitMQ)."""
    celery_visibility_timeout: float = 3600.0
    """Redis broker: seconds before a message taken by a worker that never acknowledged it
    (the worker died) is delivered again. Longer than the longest try."""
    max_map_length: int = 1024
    """The most task instances one mapped task may expand to (more fails the task)."""
    max_tis_per_run: int = 200_000
    """The most task instances a triggered run may start with: a bigger DAG's trigger is
    refused (nothing created) rather than slowing every other run."""
    secret_key: str | None = None
    """Signs the API's JWTs; by default a key generated once into ``$STATEWRIGHT_HOME``."""
    jwt_expiration_seconds: int = 86400
    """How long a JWT from ``POST /api/v1/auth/token`` is accepted."""
    session_lifetime_seconds: int = 43200
    """How long a web UI login lasts."""
    api_cors_origins: tuple[str, ...] = ()
    """Origins allowed to call the API from a browser (none by default: CORS closed)."""
    api_max_body_bytes: int = 1_048_576
    """Largest request body the API accepts (413 beyond)."""
    login_max_failures_per_user: int = 5
    login_max_failures_per_address: int = 20
    login_failure_window_seconds: float = 300.0
    """A subject (account and address, or address) quiet this long after its last wait
    starts counting failed logins again from zero."""
    login_backoff_seconds: float = 1.0
    """The first wait after the free attempts; doubled at each further attempt."""
    login_backoff_max_seconds: float = 900.0
    login_hash_concurrency: int = 2
    """Password checks (argon2id) run at the same time, off the event loop; others queue."""
    api_trusted_proxies: tuple[str, ...] = ()
    """Addresses or networks of reverse proxies whose X-Forwarded-For / -Proto are believed
    (none by default: the peer of the connection is the client)."""
    api_token_default_days: int = 90
    """Lifetime of an API token created without one (0: until revoked)."""
    files_group_readable: bool = False
    """$STATEWRIGHT_HOME 0750 and its files 0640 (default 0700 and 0600)."""
    input_limits: InputLimits = field(default_factory=InputLimits)
    """Depth, size and items of what callers send (conf, params, XCom values, HITL responses,
    JSON bodies): ``STATEWRIGHT_MAX_INPUT_DEPTH`` (64), ``_BYTES`` (1 MiB), ``_ITEMS``
    (10,000). Beyond them: a 422 naming the limit, or a try that fails with it."""
    test_connection: bool = False
    """``POST /connections/test`` answers (Airflow's ``[core] test_connection``, off by
    default: a test reaches out from the server to the host it is given)."""
    expose_config: str = "false"
    """``GET /api/v2/config`` answers (admins only; Airflow's ``[api] expose_config``):
    ``false`` (default), ``true`` or ``non-sensitive-only``; secrets are always hidden."""
    extra: dict[str, str] = field(default_factory=dict)

    def with_overrides(self, **kwargs: object) -> Settings:
        return replace(self, **kwargs)  # type: ignore[arg-type]


def load_settings(env: Mapping[str, str] | None = None) -> Settings:
    env = os.environ if env is None else env
    home = Path(env.get("STATEWRIGHT_HOME") or Path.home() / ".statewright").expanduser()
    database_url = env.get("STATEWRIGHT_DATABASE_URL") or f"sqlite:///{home / 'statewright.db'}"
    dags_folder = Path(env.get("STATEWRIGHT_DAGS_FOLDER") or "dags").expanduser().absolute()
    logs_folder = Path(env.get("STATEWRIGHT_LOGS_FOLDER") or home / "logs").expanduser()
    return Settings(
        home=home,
        database_url=database_url,
        dags_folder=dags_folder,
        logs_folder=logs_folder,
        parallelism=_int(env, "STATEWRIGHT_PARALLELISM", 8),
        scheduler_idle_seconds=_float(env, "STATEWRIGHT_SCHEDULER_IDLE_SECONDS", 1.0),
        heartbeat_seconds=_float(env, "STATEWRIGHT_HEARTBEAT_SECONDS", 5.0),
        zombie_threshold_seconds=_float(env, "STATEWRIGHT_ZOMBIE_THRESHOLD_SECONDS", 60.0),
        shutdown_grace_seconds=_non_negative(env, "STATEWRIGHT_SHUTDOWN_GRACE_SECONDS", 20.0),
        queued_timeout_seconds=_float(env, "STATEWRIGHT_QUEUED_TIMEOUT_SECONDS", 600.0),
        database_wait_seconds=_non_negative(env, "STATEWRIGHT_DATABASE_WAIT_SECONDS", 120.0),
        dags_are_paused_at_creation=_bool(
            env, _named(env, "DAGS_ARE_PAUSED_AT_CREATION", section="CORE"),
            DAGS_ARE_PAUSED_AT_CREATION),
        load_examples=_bool(env, "STATEWRIGHT_LOAD_EXAMPLES", False),
        fernet_key=env.get("STATEWRIGHT_FERNET_KEY") or None,
        triggerer_capacity=_int(env, "STATEWRIGHT_TRIGGERER_CAPACITY", 1000),
        triggerer_health_threshold_seconds=_positive(
            env, "STATEWRIGHT_TRIGGERER_HEALTH_THRESHOLD_SECONDS", _float, 30.0),
        triggerer_max_claims_per_loop=_positive(
            env, "STATEWRIGHT_TRIGGERER_MAX_CLAIMS_PER_LOOP", _int, 1000),
        api_host=env.get("STATEWRIGHT_API_HOST") or "127.0.0.1",
        api_port=_int(env, "STATEWRIGHT_API_PORT", 8080),
        dag_file_processor_timeout=_positive(
            env, "STATEWRIGHT_DAG_FILE_PROCESSOR_TIMEOUT", _float, 30.0),
        dag_processor_parallelism=_positive(
            env, "STATEWRIGHT_DAG_PROCESSOR_PARALLELISM", _int, 2),
        dag_processor_interval_seconds=_positive(
            env, "STATEWRIGHT_DAG_PROCESSOR_INTERVAL_SECONDS", _float, 5.0),
        max_dagruns_to_create_per_loop=_positive(
            env, "STATEWRIGHT_MAX_DAGRUNS_TO_CREATE_PER_LOOP", _int, 1000),
        default_pool_slots=_int(env, "STATEWRIGHT_DEFAULT_POOL_SLOTS", 128),
        late_run_threshold_seconds=_positive(
            env, "STATEWRIGHT_LATE_RUN_THRESHOLD_SECONDS", _float, 60.0),
        late_task_threshold_seconds=_positive(
            env, "STATEWRIGHT_LATE_TASK_THRESHOLD_SECONDS", _float, 60.0),
        executor=_choice(env, "STATEWRIGHT_EXECUTOR", EXECUTORS, "local"),
        celery_broker_url=env.get("STATEWRIGHT_CELERY_BROKER_URL")
        or "redis://127.0.0.1:6379/0",
        celery_visibility_timeout=_positive(
            env, "STATEWRIGHT_CELERY_VISIBILITY_TIMEOUT", _float, 3600.0),
        max_map_length=_positive(env, "STATEWRIGHT_MAX_MAP_LENGTH", _int, 1024),
        max_tis_per_run=max_tis_per_run(env),
        input_limits=input_limits(env),
        test_connection=_test_connection(env),
        expose_config=_choice(env, "STATEWRIGHT_EXPOSE_CONFIG", EXPOSE_CONFIG, "false"),
        **_auth_settings(env),
    )


def max_tis_per_run(env: Mapping[str, str] | None = None) -> int:
    """``STATEWRIGHT_MAX_TIS_PER_RUN`` (default 200,000): read where a run is triggered."""
    return _positive(os.environ if env is None else env, "STATEWRIGHT_MAX_TIS_PER_RUN", _int,
                     200_000)


def input_limits(env: Mapping[str, str] | None = None) -> InputLimits:
    """The input limits (``STATEWRIGHT_MAX_INPUT_DEPTH``, ``_BYTES``, ``_ITEMS``): read where
    a workload is built as well as by the API."""
    env = os.environ if env is None else env
    return InputLimits(
        max_depth=_positive(env, "STATEWRIGHT_MAX_INPUT_DEPTH", _int, 64),
        max_bytes=_positive(env, "STATEWRIGHT_MAX_INPUT_BYTES", _int, 1_048_576),
        max_items=_positive(env, "STATEWRIGHT_MAX_INPUT_ITEMS", _int, 10_000))


def _test_connection(env: Mapping[str, str]) -> bool:
    """``STATEWRIGHT_TEST_CONNECTION`` (Airflow's ``AIRFLOW__CORE__TEST_CONNECTION``):
    ``Enabled``/true turns the connection test on; ``Disabled`` (default) or ``Hidden`` off."""
    raw = (env.get("STATEWRIGHT_TEST_CONNECTION") or "").strip().lower()
    if raw in ("enabled",):
        return True
    if raw in ("disabled", "hidden"):
        return False
    return _bool(env, "STATEWRIGHT_TEST_CONNECTION", False)


def _auth_settings(env: Mapping[str, str]) -> dict[str, object]:
    origins = [o.strip() for o in (env.get("STATEWRIGHT_API_CORS_ORIGINS") or "").split(",")]
    return dict(
        secret_key=env.get("STATEWRIGHT_SECRET_KEY") or None,
        jwt_expiration_seconds=_positive(env, "STATEWRIGHT_JWT_EXPIRATION_SECONDS", _int, 86400),
        session_lifetime_seconds=_positive(
            env, "STATEWRIGHT_SESSION_LIFETIME_SECONDS", _int, 43200),
        api_cors_origins=tuple(o for o in origins if o),
        api_max_body_bytes=_positive(env, "STATEWRIGHT_API_MAX_BODY_BYTES", _int, 1_048_576),
        login_max_failures_per_user=_positive(
            env, "STATEWRIGHT_LOGIN_MAX_FAILURES_PER_USER", _int, 5),
        login_max_failures_per_address=_positive(
            env, "STATEWRIGHT_LOGIN_MAX_FAILURES_PER_ADDRESS", _int, 20),
        login_failure_window_seconds=_positive(
            env, "STATEWRIGHT_LOGIN_FAILURE_WINDOW_SECONDS", _float, 300.0),
        login_backoff_seconds=_positive(env, "STATEWRIGHT_LOGIN_BACKOFF_SECONDS", _float, 1.0),
        login_backoff_max_seconds=_positive(
            env, "STATEWRIGHT_LOGIN_BACKOFF_MAX_SECONDS", _float, 900.0),
        login_hash_concurrency=_positive(env, "STATEWRIGHT_LOGIN_HASH_CONCURRENCY", _int, 2),
        api_trusted_proxies=_list(env, "STATEWRIGHT_API_TRUSTED_PROXIES"),
        api_token_default_days=_int(env, "STATEWRIGHT_API_TOKEN_DEFAULT_DAYS", 90),
        files_group_readable=_bool(env, "STATEWRIGHT_FILES_GROUP_READABLE", False),
    )


def _list(env: Mapping[str, str], key: str) -> tuple[str, ...]:
    return tuple(v.strip() for v in (env.get(key) or "").split(",") if v.strip())
