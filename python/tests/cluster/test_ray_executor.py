"""executor="ray": a plan's tasks as Ray tasks (ray.init with 2 CPUs, on this machine).

Truth is the threads executor's result (and numpy's), the resources Ray itself assigned
to each task, and what the workers wrote down as they ran."""

import os

import numpy as np
import pytest

import tessera

from .workers_log import Log, cluster_spec, kill_when_running, most_at_once, small_then_large

ray = pytest.importorskip("ray")

pytestmark = pytest.mark.timeout(300)

GB = 10**9


@pytest.fixture(scope="module", autouse=True)
def ray_cluster():
    _start_ray()
    # Both worker processes up before the tests count what runs at once.
    ray.get([ray.remote(lambda: __import__("time").sleep(0.5)).remote() for _ in range(2)])
    yield
    ray.shutdown()


def _start_ray():
    ray.init(
        num_cpus=2,
        _memory=4 * GB,
        object_store_memory=200 * 10**6,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}},
    )


def test_results_equal_the_threads_executors(tmp_path, rng):
    data = rng.standard_normal((50, 40))
    args = dict(work_dir=tmp_path, allowed_mem="200MB", history="off")

    def elementwise(spec):
        return tessera.sqrt(tessera.abs(tessera.asarray(data, chunks=(10, 20), spec=spec))) - 1

    def reduction(spec):
        return tessera.sum(tessera.asarray(data, chunks=(9, 7), spec=spec), axis=1)

    def rechunk(spec):
        return (tessera.asarray(data, chunks=(50, 1), spec=spec) * 2).rechunk((1, 40))

    def blocks(spec):
        x = tessera.asarray(data, chunks=(25, 40), spec=spec)
        return tessera.map_blocks(lambda b: b[::-1], x)

    for build, expected in [
        (elementwise, np.sqrt(np.abs(data)) - 1),
        (reduction, data.sum(axis=1)),
        (rechunk, data * 2),
        (blocks, np.concatenate([data[:25][::-1], data[25:][::-1]])),
    ]:
        threads = build(tessera.Spec(executor="threads", **args)).compute()
        on_ray = build(tessera.Spec(executor="ray", **args)).compute()
        np.testing.assert_array_equal(on_ray, threads)
        np.testing.assert_allclose(on_ray, expected, rtol=1e-12)


def test_each_task_is_given_its_ops_memory(tmp_path, rng):
    log = Log(tmp_path / "log")
    spec = cluster_spec("ray", tmp_path, "2GB", total_mem="8GB", memory_tiers=["300MB", "1.5GB"])
    data = rng.standard_normal((8, 8))
    large = small_then_large(log, spec, data, 2, 10**8, 10**9)
    np.testing.assert_array_equal(large.compute(), (data + 1) * 2)
    for label, size in [("small", 300 * 10**6), ("large", 1500 * 10**6)]:
        entries = log.entries(label)
        assert len(entries) == 4
        assert {entry["worker"]["resources"].get("memory") for entry in entries} == {size}


def test_a_small_memory_op_runs_more_tasks_at_once_than_a_large_one(tmp_path, rng):
    log = Log(tmp_path / "log")
    spec = cluster_spec("ray", tmp_path, "3GB", total_mem="8GB", memory_tiers=["1GB", "3GB"])
    data = rng.standard_normal((8, 8))
    large = small_then_large(log, spec, data, 2, 10**8, 2 * GB, seconds=1.0)
    np.testing.assert_array_equal(large.compute(), (data + 1) * 2)
    # 2 CPUs, 4 GB: 1 GB tasks run 2 at once, 3 GB tasks one at a time.
    assert most_at_once(log.entries("small")) == 2
    assert most_at_once(log.entries("large")) == 1


def test_workers_measurements_reach_history_and_the_next_plan(tmp_path, rng):
    history = tmp_path / "history.db"
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="200MB", executor="ray", history=history)
    data = rng.standard_normal((60, 60))

    def build():
        x = tessera.asarray(data, chunks=(10, 60), spec=spec)
        return tessera.map_blocks(lambda b: np.sort(b, axis=1), x)

    assert all(op.learned_run == 0 for op in tessera.plan(build()).ops)
    np.testing.assert_array_equal(build().compute(), np.sort(data, axis=1))
    rows = tessera.history(db=history)
    rows = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    assert {row["executor"] for row in rows} == {"ray"}
    ran = [row for row in rows if row["tasks"] > 0]
    assert ran and all(row["measured_mem_max"] > 0 for row in ran)
    after = tessera.plan(build())
    learned = [op for op in after.ops if op.learned_run != 0]
    assert learned and {op.learned_run for op in learned} == {rows[0]["run"]}


def test_a_worker_killed_mid_run_does_not_fail_the_run(tmp_path, rng):
    log = Log(tmp_path / "log")
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="200MB", executor="ray", history="off")
    data = rng.standard_normal((20, 10))
    x = tessera.asarray(data, chunks=(1, 10), spec=spec)
    y = tessera.map_blocks(
        log.wrap(lambda b: b * 7, "slow", 0.05, first_waits_to_be_killed=True), x
    )
    killer = kill_when_running(log, "slow")
    result = y.compute()
    killer.join()
    killed = killer.killed
    np.testing.assert_array_equal(result, data * 7)
    assert killed
    # The killed call never ended; its task ran again elsewhere.
    assert len(log.entries("slow")) == 20
    assert len(log.entries("slow", started=True)) > 20
    assert killed[0] not in {entry["pid"] for entry in log.entries("slow")}


def test_without_ray_init_is_a_clear_error(tmp_path):
    ray.shutdown()
    try:
        spec = tessera.Spec(work_dir=tmp_path, allowed_mem="100MB", executor="ray", history="off")
        with pytest.raises(tessera.InvalidArgument, match="call ray.init"):
            tessera.ones((4, 4), chunks=(2, 2), spec=spec).compute()
    finally:
        _start_ray()
