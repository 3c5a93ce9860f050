"""Command groups of the CLI, one module per area; ``main`` registers each module's commands."""

MODULES = ("scheduling", "triggers", "controls", "diagnose", "celery", "templating", "secrets",
           "airflow", "assets", "flows", "users", "hitl", "versions",
           "timetables", "durable")
