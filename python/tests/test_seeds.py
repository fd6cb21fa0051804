"""The examples of ../shared/seeds/000, 002 and 003, as their authors wrote them for Cubed
but for the import (`import tessera as cubed`, `import tessera.array_api as xp`), with
their printed figures checked against Tessera's own plan."""

import contextlib
import io
import re

import numpy as np
import pytest
import zarr

import tessera as cubed
import tessera.array_api as xp


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the seeds' work_dir="tmp"
    (tmp_path / "tmp").mkdir()
    return tmp_path


def test_seed_000_memory_is_checked_when_the_plan_is_finalized(in_tmp):
    # Building never raises for memory: only planning (after fusion) does.
    spec = cubed.Spec(work_dir="tmp", allowed_mem=100)  # not enough memory!
    a = xp.asarray([[1, 2, 3], [4, 5, 6], [7, 8, 9]], chunks=(2, 2), spec=spec)
    b = xp.asarray([[1, 1, 1], [1, 1, 1], [1, 1, 1]], chunks=(2, 2), spec=spec)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        try:
            c = xp.add(a, b)
            c.compute()
        except ValueError as e:
            print(e)
    # A 2 x 2 int64 block of each input and of the result: 96 bytes fit in 100, so
    # Tessera runs what Cubed refused (its projection counted 192).
    assert cubed.plan(c).max_projected_mem == 96
    np.testing.assert_array_equal(c.compute(), np.arange(1, 10).reshape(3, 3) + 1)
    assert printed.getvalue() == ""

    small = cubed.Spec(work_dir="tmp", allowed_mem=50)
    c = xp.add(xp.asarray([[1, 2, 3], [4, 5, 6], [7, 8, 9]], chunks=(2, 2), spec=small),
               xp.asarray([[1, 1, 1], [1, 1, 1], [1, 1, 1]], chunks=(2, 2), spec=small))
    with contextlib.redirect_stdout(printed):
        try:
            c.compute()
        except ValueError as e:
            print(e)
    assert re.match(r"Projected blockwise memory \(96\) exceeds allowed_mem \(50\), "
                    r"including reserved_mem \(0\)", printed.getvalue()), printed.getvalue()

    # this should pass, since c can be fused into an op that takes 700 bytes
    # (ones is 100, conversion to int32 is 400, conversion to int8 is 100, write is 100)
    spec = cubed.Spec(allowed_mem=800, reserved_mem=0)
    a = xp.ones((100,), dtype=xp.int8, chunks=(100,), spec=spec)
    b = xp.astype(a, xp.int32)
    c = xp.astype(b, xp.int8)
    c.compute()
    assert cubed.plan(c).max_projected_mem <= 800


def test_seed_002_a_rechunk_that_fits_in_memory_stays_in_memory(in_tmp):
    spec = cubed.Spec(work_dir="tmp", allowed_mem="400MB")
    # 80MB chunks
    a = cubed.random.random((10000, 10000), chunks=(10000, 1000), spec=spec)
    b = a.rechunk((1000, 10000))
    b.visualize(optimize_graph=True)
    values = b.compute()
    plan = cubed.plan(b)
    # No intermediate on disk: Tessera generates the random values straight into the new
    # chunks (a counter-based generator: the same values whatever the chunks).
    assert all(op.tier != "disk" for op in plan.ops), plan.summary()
    assert plan.max_projected_mem <= 400_000_000
    assert values.shape == (10000, 10000)
    np.testing.assert_array_equal(values[:, :1000], a[:, :1000].compute())
    assert not any((in_tmp / "tmp").rglob("*.zarr")), "the rechunk wrote an intermediate"


def test_seed_003_scaling_memory_up_until_the_plan_fits(in_tmp):
    rng = np.random.default_rng(3)
    t2_store, rh_store = str(in_tmp / "t2.zarr"), str(in_tmp / "rh.zarr")
    for store, values in ((t2_store, rng.uniform(250, 310, (8, 400, 400))),
                          (rh_store, rng.uniform(10, 100, (8, 400, 400)))):
        array = zarr.create_array(store, shape=values.shape, chunks=(1, 400, 400),
                                  dtype="float32", zarr_format=2)
        array[...] = values.astype("float32")

    def _create_spec(memory_mb):
        return cubed.Spec(work_dir="tmp", allowed_mem=f"{memory_mb}MB"), None

    opt_fn = None
    max_retries, dry_run = 3, False
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        memory_mb = 100
        for attempt in range(max_retries):
            spec, _ = _create_spec(memory_mb)
            print(f"Attempt {attempt + 1}: Using {memory_mb} MB memory")

            t2 = cubed.from_zarr(t2_store, spec=spec)
            rh = cubed.from_zarr(rh_store, spec=spec)

            # Compute dew point using Cubed's lazy array API
            es = 0.611 * xp.exp(5423 * ((1 / 273) - (1 / t2)))  # saturation vapor pressure
            e_vap = (es * rh) / 100.0  # vapor pressure
            tdps = ((1 / 273) - 0.0001844 * xp.log(e_vap / 0.611)) ** -1  # dew point in K

            if dry_run:
                # Visualize the computation graph
                tdps.visualize("dew_point_derivation_dag", optimize_function=opt_fn)
                break

            # Check projected memory before executing
            finalized_plan = cubed.plan(tdps, optimize_function=opt_fn)
            max_projected = finalized_plan.max_projected_mem
            allowed = memory_mb * 1024 * 1024  # Convert MB to bytes

            if max_projected <= allowed:
                print(
                    f"Memory OK: projected {max_projected / 1024 / 1024:.1f} MB <= allowed {memory_mb} MB"
                )
                break
            else:
                needed_mb = (max_projected / 1024 / 1024) + 512
                new_memory = int((needed_mb + 99) // 100 * 100)
                print(f"Scaling up: {memory_mb} MB → {new_memory} MB")
                memory_mb = new_memory
        else:
            raise RuntimeError(f"Failed after {max_retries} attempts to find sufficient memory")
    plan = cubed.plan(tdps)
    assert f"Memory OK: projected {plan.max_projected_mem / 1024 / 1024:.1f} MB" in printed.getvalue()
    t2v = zarr.open_array(t2_store, mode="r")[...].astype("float64")
    rhv = zarr.open_array(rh_store, mode="r")[...].astype("float64")
    es = 0.611 * np.exp(5423 * ((1 / 273) - (1 / t2v)))
    expected = ((1 / 273) - 0.0001844 * np.log(es * rhv / 100.0 / 0.611)) ** -1
    np.testing.assert_allclose(tdps.compute(), expected, rtol=2e-5)
