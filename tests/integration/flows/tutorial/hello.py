# Prefect 3's tutorial flows (docs: "Write and run flows", "Write and run tasks"), unchanged.
from prefect import flow, task
from prefect.futures import wait


@task
def create_message():
    msg = "Hello from task"
    return msg


@flow
def something_else():
    result = 10
    return result


@task(log_prints=True)
def square(x):
    print(f"squaring {x}")
    return x * x


@flow(log_prints=True)
def hello_world():
    sub_flow_message = something_else()
    task_message = create_message()
    new_message = task_message + str(sub_flow_message)
    print(new_message)
    futures = square.map([1, 2, 3])
    wait(futures)
    return new_message, [f.result() for f in futures]


if __name__ == "__main__":
    print("RESULT", hello_world())
