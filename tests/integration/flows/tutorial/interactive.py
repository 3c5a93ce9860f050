# Prefect 3's interactive workflows (docs: "Interactive workflows" and "Pause and resume"),
# unchanged: a flow that waits for a built-in type, one that waits for a pydantic model, and an
# async one that awaits its tasks and the pause (a RunInput).
from prefect import flow, get_run_logger, task
from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput
from pydantic import BaseModel


@flow
def greet_user():
    logger = get_run_logger()

    user = pause_flow_run(wait_for_input=str)

    logger.info(f"Hello, {user}!")
    return user


class User(BaseModel):
    name: str
    age: int


@flow
def greet_user_model():
    user = pause_flow_run(wait_for_input=User)
    return f"Hello, {user.name}! You are {user.age}."


class Approval(RunInput):
    approved: bool


@task
async def marvin_setup():
    return "a raft of ducks walk into a bar..."


@task
async def marvin_punchline():
    return "it's a wonder none of them ducked!"


@flow
async def inspiring_joke():
    setup = await marvin_setup()
    decision = await pause_flow_run(wait_for_input=Approval, timeout=600)
    if not decision.approved:
        return setup
    return f"{setup} {await marvin_punchline()}"
