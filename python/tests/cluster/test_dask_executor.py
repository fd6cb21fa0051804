"""executor="dask": a plan's tasks on a distributed.LocalCluster of 2 worker processes.

Truth is the threads executor's result (and numpy's), the resources the scheduler itself
recorded for each task, and what the workers themselves wrote down as they ran."""

import os

import dask
import distributed
import numpy as np
import pytest

import tessera

from .workers_log import Log, cluster_spec, kill_when_running, most_at_once, small_then_large

pytestmark = pytest.mark.timeout(300)

GB = 10**9


@pytest.fixture(scope="module")
def cluster():
    # A task whose worker dies ends at once as KilledWorker (Dask retries none itself), so
    # that the tests see Tessera's own resubmission.
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), distributed.LocalCluster(
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

    def scan(spec):
        return tessera.cumulative_sum(tessera.asarray(data, chunks=(8, 6), spec=spec), axis=1)

    for build, expected in [
        (scan, np.cumsum(data, axis=1)),
        (elementwise, np.exp(data) * 2 + data),
        (reduction, np.mean(data * data, axis=0)),
        (rechunk, data + 1),
        (blocks, np.concatenate([np.cumsum(data[:, :25], 1), np.cumsum(data[:, 25:], 1)], 1)),
    ]:
        threads, dask = both(args, build)
        np.testing.assert_array_equal(dask, threads)
        np.testing.assert_allclose(dask, expected, rtol=1e-12, atol=1e-9)


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
    spec = cluster_spec("dask", tmp_path, "2GB", total_mem="8GB", memory_tiers=["300MB", "1.2GB"])
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
    client.run_on_scheduler(
        lambda dask_scheduler: dask_scheduler.plugins["resources-seen"].seen.clear()
    )
    spec = cluster_spec("dask", tmp_path, "2GB", total_mem="8GB")
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
        # Not the default client: the run uses the one it is given, on that client's loop.
        with distributed.Client(local, set_as_default=False) as connected:
            connected.wait_for_workers(2)
            addresses = {
                info["name"]: address
                for address, info in connected.scheduler_info(n_workers=-1)["workers"].items()
            }
            options = {"client": connected}
            spec = cluster_spec("dask", tmp_path, "1GB", total_mem="8GB", executor_options=options)
            data = rng.standard_normal((80, 10))
            x = tessera.asarray(data, chunks=(10, 10), spec=spec)
            y = tessera.map_blocks(log.wrap(lambda b: b - 1), x, extra_projected_mem=300_000_000)
            np.testing.assert_array_equal(y.compute(), data - 1)
            ran_on = {entry["worker"] for entry in log.entries()}
            assert ran_on == {addresses["big"]}

            # A task larger than every worker's MEMORY: the run is refused before any runs.
            spec = cluster_spec("dask", tmp_path, "4GB", total_mem="8GB", executor_options=options)
            x = tessera.asarray(data, chunks=(10, 10), spec=spec)
            z = tessera.map_blocks(log.wrap(lambda b: b), x, extra_projected_mem=3 * GB)
            calls = len(log.entries(started=True))
            refused = "largest Dask worker offers 2.0 GB"
            with pytest.raises(tessera.MemoryBudgetError, match=refused):
                z.compute()
            assert len(log.entries(started=True)) == calls


def test_a_small_memory_op_runs_more_tasks_at_once_than_a_large_one(client, tmp_path, rng):
    log = Log(tmp_path / "log")
    spec = cluster_spec("dask", tmp_path, "2GB", total_mem="8GB", memory_tiers=["500MB", "2GB"])
    data = rng.standard_normal((16, 16))
    large = small_then_large(log, spec, data, 2, 10**8, 14 * 10**8, seconds=1.0)
    np.testing.assert_array_equal(large.compute(), (data + 1) * 2)
    # Workers declare 3 GB and run 2 threads: 500 MB tasks up to 2 per worker (4 in all),
    # 2 GB tasks 1 per worker, never more (the scheduler holds them to MEMORY).
    small_at_once = most_at_once(log.entries("small"))
    large_at_once = most_at_once(log.entries("large"))
    assert large_at_once <= 2
    assert small_at_once >= 3 and small_at_once > large_at_once


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
    y = tessera.map_blocks(
        log.wrap(lambda b: b * 5, "slow", 0.05, first_waits_to_be_killed=True), x
    )
    killer = kill_when_running(log, "slow")
    result = y.compute()
    killer.join()
    np.testing.assert_array_equal(result, data * 5)
    assert len(killer.killed) == 1 and not _alive(killer.killed[0])
    # The killed call never ended; its task (KilledWorker) was submitted again by Tessera.
    ended = log.entries("slow")
    assert len(ended) == 40 and killer.killed[0] not in {entry["pid"] for entry in ended}
    assert len(log.entries("slow", started=True)) > 40


def _alive(pid):
    """Whether `pid` runs (a zombie its nanny has not reaped yet counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][:1] != "Z"
    except FileNotFoundError:
        return False


def test_no_client_is_a_clear_error(tmp_path):
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="100MB", executor="dask", history="off")
    x = tessera.ones((4, 4), chunks=(2, 2), spec=spec)
    with pytest.raises(tessera.InvalidArgument, match="needs a distributed.Client"):
        x.compute()


def test_unknown_option_is_refused(client, tmp_path):
    spec = cluster_spec("dask", tmp_path, "100MB", executor_options={"workers": 3})
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
    # Threads as workers, in this very process: the plan is remade beside the client's,
    # with allowed_mem "auto" (each side searching budgets, passing plans over), and the
    # remade plans never touch the client's intermediates.
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as local, distributed.Client(local) as connected:
        connected.register_plugin(ResourcesSeen(), name="resources-seen")
        spec = cluster_spec("dask", tmp_path, "auto")
        data = rng.standard_normal((30, 20))
        x = tessera.asarray(data, chunks=(30, 2), spec=spec)
        y = tessera.max((x * 2).rechunk((3, 20)), axis=1)
        assert any(op.tier == "disk" for op in tessera.plan(y).ops)
        np.testing.assert_array_equal(y.compute(), (data * 2).max(axis=1))
        seen = connected.run_on_scheduler(
            lambda dask_scheduler: dask_scheduler.plugins["resources-seen"].seen
        )
        assert seen and all(restriction == {} for restriction in seen.values())
