"""executor="dask": a plan's tasks on a distributed.LocalCluster of 2 worker processes.

Truth is the threads executor's result (and numpy's), the resources the scheduler itself
recorded for each task, and what the workers themselves wrote down as they ran."""

import os

import distributed
import numpy as np
import pytest

import tessera

from .workers_log import Log, kill_when_running, most_at_once, small_then_large

pytestmark = pytest.mark.timeout(300)

GB = 10**9


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=2,
        processes=True,
        resources={"MEMORY": 3 * GB},
        dashboard_address=None,
        memory_limit=0,
    ) as local:
        yield local


@pytest.fixture
def client(cluster):
    with distributed.Client(cluster) as connected:
        yield connected


def both(spec_args, build):
    """`build(spec)`'s value computed with the threads executor and with dask."""
    threads = build(tessera.Spec(executor="threads", **spec_args)).compute()
    dask = build(tessera.Spec(executor="dask", **spec_args)).compute()
    return threads, dask


def test_results_equal_the_threads_executors(client, tmp_path, rng):
    data = rng.standard_normal((60, 50))
    args = dict(work_dir=tmp_path, allowed_mem="200MB", history="off")

    def elementwise(spec):
        x = tessera.asarray(data, chunks=(20, 10), spec=spec)
        return tessera.exp(x) * 2 + x

    def reduction(spec):
        x = tessera.asarray(data, chunks=(7, 9), spec=spec)
        return tessera.mean(x * x, axis=0)

    def rechunk(spec):
        x = tessera.asarray(data, chunks=(60, 1), spec=spec)
        return (x + 1).rechunk((1, 50))

    def blocks(spec):
        x = tessera.asarray(data, chunks=(20, 25), spec=spec)
        return tessera.map_blocks(lambda b: np.cumsum(b, axis=1), x, dtype=np.float64)

    for build, expected in [
        (elementwise, np.exp(data) * 2 + data),
        (reduction, np.mean(data * data, axis=0)),
        (rechunk, data + 1),
        (blocks, np.concatenate([np.cumsum(data[:, :25], 1), np.cumsum(data[:, 25:], 1)], 1)),
    ]:
        threads, dask = both(args, build)
        np.testing.assert_array_equal(dask, threads)
        np.testing.assert_allclose(dask, expected, rtol=1e-12)


def test_to_zarr_and_from_zarr_through_dask_workers(client, tmp_path, rng):
    import zarr

    data = rng.integers(0, 1000, (40, 30)).astype(np.int32)
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="100MB", executor="dask", history="off")
    source = tmp_path / "in.zarr"
    stored = zarr.create_array(str(source), shape=data.shape, chunks=(40, 1), dtype=data.dtype,
                               zarr_format=3)
    stored[...] = data
    out = tmp_path / "out.zarr"
    tessera.from_zarr(str(source), spec=spec).rechunk((1, 30)).to_zarr(str(out))
    np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...], data)


class ResourcesSeen(distributed.diagnostics.plugin.SchedulerPlugin):
    """What the scheduler itself holds as each tessera task's resource restrictions."""

    def __init__(self):
        self.seen = {}

    async def start(self, scheduler):
        self.scheduler = scheduler

    def transition(self, key, start, finish, *args, **kwargs):
        if isinstance(key, str) and key.startswith("tessera-") and finish == "processing":
            task = self.scheduler.tasks.get(key)
            if task is not None:
                self.seen[key] = dict(task.resource_restrictions or {})


def test_each_task_carries_its_ops_memory(client, tmp_path, rng):
    client.register_plugin(ResourcesSeen(), name="resources-seen")
    data = rng.standard_normal((40, 40))
    spec = tessera.Spec(
        work_dir=tmp_path,
        allowed_mem="2GB",
        memory_tiers=["300MB", "1.2GB"],
        executor="dask",
        history="off",
    )
    large = small_then_large(Log(tmp_path / "log"), spec, data, 10, 50_000_000, 900_000_000)
    plan = tessera.plan(large)
    sizes = {op.memory_size for op in plan.ops if op.num_tasks}
    assert sizes == {300 * 10**6, 1200 * 10**6}
    np.testing.assert_array_equal(large.compute(), (data + 1) * 2)
    seen = client.run_on_scheduler(
        lambda dask_scheduler: dask_scheduler.plugins["resources-seen"].seen
    )
    assert seen, "no tessera task reached the scheduler"
    submitted = sorted({restriction["MEMORY"] for restriction in seen.values()})
    assert submitted == [300 * 10**6, 1200 * 10**6]
    assert len(seen) == sum(op.num_tasks for op in plan.ops)

    # Without tiers, each task carries what the plan counts for its op.
    client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.plugins["resources-seen"].seen.clear())
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="2GB", executor="dask", history="off")
    large = small_then_large(Log(tmp_path / "log"), spec, data, 10, 50_000_000, 900_000_000)
    plan = tessera.plan(large)
    np.testing.assert_array_equal(large.compute(), (data + 1) * 2)
    seen = client.run_on_scheduler(
        lambda dask_scheduler: dask_scheduler.plugins["resources-seen"].seen
    )
    submitted = sorted({restriction["MEMORY"] for restriction in seen.values()})
    assert submitted == sorted({op.estimated_mem for op in plan.ops if op.num_tasks})
    assert submitted[0] < 10**8 and submitted[-1] > 9 * 10**8


def test_a_worker_declaring_too_little_memory_is_never_given_a_task(tmp_path, rng):
    log = Log(tmp_path / "log")
    with distributed.LocalCluster(
        n_workers=0, processes=True, dashboard_address=None, memory_limit=0
    ) as local:
        local.worker_spec["big"] = {
            "cls": distributed.Nanny,
            "options": {"nthreads": 2, "resources": {"MEMORY": 2 * GB}, "memory_limit": 0},
        }
        local.worker_spec["small"] = {
            "cls": distributed.Nanny,
            "options": {"nthreads": 2, "resources": {"MEMORY": 100 * 10**6}, "memory_limit": 0},
        }
        local.sync(local._correct_state)
        with distributed.Client(local) as connected:
            connected.wait_for_workers(2)
            addresses = {
                info["name"]: address
                for address, info in connected.scheduler_info(n_workers=-1)["workers"].items()
            }
            spec = tessera.Spec(
                work_dir=tmp_path,
                allowed_mem="1GB",
                executor="dask",
                executor_options={"client": connected},
                history="off",
            )
            data = rng.standard_normal((80, 10))
            x = tessera.asarray(data, chunks=(10, 10), spec=spec)
            y = tessera.map_blocks(log.wrap(lambda b: b - 1), x, extra_projected_mem=300_000_000)
            np.testing.assert_array_equal(y.compute(), data - 1)
            ran_on = {entry["worker"] for entry in log.entries()}
            assert ran_on == {addresses["big"]}

            # A task larger than every worker's MEMORY is refused before anything runs.
            huge = tessera.map_blocks(lambda b: b, x, extra_projected_mem=3 * GB)
            huge_spec_plan = tessera.Spec(
                work_dir=tmp_path,
                allowed_mem="4GB",
                executor="dask",
                executor_options={"client": connected},
                history="off",
            )
            z = tessera.map_blocks(
                lambda b: b, tessera.asarray(data, chunks=(10, 10), spec=huge_spec_plan),
                extra_projected_mem=3 * GB,
            )
            with pytest.raises(tessera.MemoryBudgetError, match="largest Dask worker offers 2.0 GB"):
                z.compute()
            del huge


def test_a_small_memory_op_runs_more_tasks_at_once_than_a_large_one(client, tmp_path, rng):
    log = Log(tmp_path / "log")
    spec = tessera.Spec(
        work_dir=tmp_path,
        allowed_mem="2GB",
        memory_tiers=["500MB", "2GB"],
        executor="dask",
        history="off",
    )
    data = rng.standard_normal((16, 16))
    large = small_then_large(log, spec, data, 2, 10**8, 14 * 10**8, seconds=0.4)
    np.testing.assert_array_equal(large.compute(), (data + 1) * 2)
    # Workers declare 3 GB and run 2 threads: 500 MB tasks 2 per worker, 2 GB tasks 1.
    small_at_once = most_at_once(log.entries("small"))
    large_at_once = most_at_once(log.entries("large"))
    assert small_at_once == 4
    assert large_at_once == 2


def test_workers_measurements_reach_history_and_the_next_plan(client, tmp_path, rng):
    history = tmp_path / "history.db"
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="200MB", executor="dask", history=history)
    data = rng.standard_normal((100, 100))

    def build():
        x = tessera.asarray(data, chunks=(10, 100), spec=spec)
        return tessera.map_blocks(lambda b: np.sort(b, axis=1), x, dtype=np.float64)

    assert all(op.learned_run == 0 for op in tessera.plan(build()).ops)
    np.testing.assert_array_equal(build().compute(), np.sort(data, axis=1))
    rows = tessera.history(db=history)
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    assert {row["executor"] for row in rows} == {"dask"}
    ran = [row for row in rows if row["tasks"] > 0]
    assert ran and all(row["measured_mem_max"] > 0 for row in ran)
    after = tessera.plan(build())
    learned = [op for op in after.ops if op.learned_run != 0]
    assert learned and {op.learned_run for op in learned} == {rows[0]["run"]}


def test_a_worker_killed_mid_run_does_not_fail_the_run(client, tmp_path, rng):
    log = Log(tmp_path / "log")
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="200MB", executor="dask", history="off")
    data = rng.standard_normal((40, 10))
    x = tessera.asarray(data, chunks=(1, 10), spec=spec)
    y = tessera.map_blocks(log.wrap(lambda b: b * 5, "slow", 0.2), x)
    victim = next(iter(client.run(os.getpid).values()))
    killer = kill_when_running(log, "slow", pick=lambda pids: victim if victim in pids else None)
    result = y.compute()
    killer.join()
    assert killer.killed == [victim]
    np.testing.assert_array_equal(result, data * 5)
    assert not _alive(victim)
    # A call on the killed worker never ended; its task ran again elsewhere.
    ended = log.entries("slow")
    assert len(ended) == 40 and victim not in {entry["pid"] for entry in ended}
    assert len(log.entries("slow", started=True)) > 40


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_no_client_is_a_clear_error(tmp_path):
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="100MB", executor="dask", history="off")
    x = tessera.ones((4, 4), chunks=(2, 2), spec=spec)
    with pytest.raises(tessera.InvalidArgument, match="needs a distributed.Client"):
        x.compute()


def test_unknown_option_is_refused(client, tmp_path):
    spec = tessera.Spec(
        work_dir=tmp_path,
        allowed_mem="100MB",
        executor="dask",
        executor_options={"workers": 3},
        history="off",
    )
    with pytest.raises(tessera.InvalidArgument, match="has no option 'workers'"):
        tessera.ones((4, 4), chunks=(2, 2), spec=spec).compute()


def test_a_kernel_error_on_a_worker_is_raised_as_itself(client, tmp_path):
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="100MB", executor="dask", history="off")

    def broken(block):
        raise KeyError("no such band")

    x = tessera.map_blocks(broken, tessera.ones((4, 4), chunks=(2, 2), spec=spec))
    with pytest.raises(KeyError, match="no such band"):
        x.compute()


def test_workers_declaring_no_memory_get_tasks_without_resources(tmp_path, rng):
    # Threads as workers, in this very process: the plan is remade beside the client's.
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as local, distributed.Client(local) as connected:
        connected.register_plugin(ResourcesSeen(), name="resources-seen")
        spec = tessera.Spec(work_dir=tmp_path, allowed_mem="100MB", executor="dask", history="off")
        data = rng.standard_normal((30, 20))
        x = tessera.asarray(data, chunks=(10, 5), spec=spec)
        np.testing.assert_array_equal(tessera.max(x, axis=1).compute(), data.max(axis=1))
        seen = connected.run_on_scheduler(
            lambda dask_scheduler: dask_scheduler.plugins["resources-seen"].seen
        )
        assert seen and all(restriction == {} for restriction in seen.values())
