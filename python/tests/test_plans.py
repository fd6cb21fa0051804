"""Planning from Python: the plan's figures, MemoryBudgetError as a ValueError raised by
planning only, Spec's sizes, and Zarr read and written as zarr-python does."""

import re

import numpy as np
import pytest
import zarr

import tessera


def test_spec_takes_sizes_as_ints_or_strings_and_auto(tmp_path):
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="400MB", reserved_mem=100_000_000)
    assert spec.allowed_mem == 400_000_000 and spec.reserved_mem == 100_000_000
    assert spec.work_dir == str(tmp_path)
    assert tessera.Spec(allowed_mem="auto").allowed_mem == "auto"
    assert tessera.Spec().allowed_mem == "auto"
    with pytest.raises(ValueError, match="allowed_mem"):
        tessera.Spec(allowed_mem="100MB", reserved_mem="200MB")
    with pytest.raises(ValueError):
        tessera.Spec(allowed_mem="lots")
    with pytest.raises(ValueError):
        tessera.Spec(allowed_mem=True)


def test_the_plan_reports_its_memory_before_anything_runs(tmp_path):
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="10MB", max_workers=2)
    x = tessera.ones((1000, 1000), chunks=(100, 100), spec=spec)
    y = tessera.sqrt(x * 2 + 1)
    plan = tessera.plan(y)
    # One fused op of 100 tasks, each holding a 100 x 100 float64 result block (80 kB)
    # and its tiles.
    assert [op.kind for op in plan.ops] == ["elementwise"]
    assert plan.num_tasks == 100 and plan.ops[0].num_tasks == 100
    assert 80_000 <= plan.max_projected_mem <= 10_000_000
    assert plan.required_allowed_mem == plan.max_projected_mem
    assert "elementwise" in plan.summary()
    path = plan.visualize(tmp_path / "plan")
    assert path.endswith(".dot") and "digraph" in open(path).read()
    assert y.plan().num_tasks == 100


def test_auto_plans_at_the_smallest_budget(tmp_path):
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="auto")
    x = tessera.ones((1000, 1000), chunks=(100, 100), spec=spec) + 1
    plan = tessera.plan(x)
    assert plan.allowed_mem == plan.required_allowed_mem


def test_memory_budget_error_is_a_value_error_raised_by_planning_only(tmp_path):
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem=1000)
    x = tessera.ones((1000, 1000), chunks=(100, 100), spec=spec) + 1  # building is fine
    with pytest.raises(ValueError) as caught:
        x.compute()
    assert isinstance(caught.value, tessera.MemoryBudgetError)
    message = str(caught.value)
    assert re.search(r"Projected blockwise memory \(\d+\) exceeds allowed_mem \(1000\), "
                     r"including reserved_mem \(0\)", message), message
    assert "the smallest allowed_mem that would run it is" in message
    with pytest.raises(tessera.MemoryBudgetError):
        tessera.plan(x)


def test_to_zarr_is_read_by_zarr_python_3(tmp_path, rng):
    values = rng.random((30, 20))
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="50MB")
    x = tessera.asarray(values, chunks=(7, 8), spec=spec)
    # An array from no stored source is written as Zarr v3 unless told otherwise.
    (x * 2).to_zarr(tmp_path / "out.zarr")
    stored = zarr.open_array(str(tmp_path / "out.zarr"), mode="r")
    assert stored.metadata.zarr_format == 3 and stored.chunks == (7, 8)
    np.testing.assert_array_equal(stored[...], values * 2)
    tessera.to_zarr(x, tmp_path / "again.zarr", zarr_format=2)
    again = zarr.open_array(str(tmp_path / "again.zarr"), mode="r")
    assert again.metadata.zarr_format == 2
    np.testing.assert_array_equal(again[...], values)
    # A rechunk of a stored array keeps its format; shards= writes a sharded v3 array.
    y = tessera.from_zarr(tmp_path / "again.zarr", spec=spec).rechunk((10, 10))
    y.to_zarr(tmp_path / "kept.zarr")
    assert zarr.open_array(str(tmp_path / "kept.zarr"), mode="r").metadata.zarr_format == 2
    tessera.to_zarr(y, tmp_path / "sharded.zarr", shards=(20, 20), compressor="zstd",
                    checksum=True)
    sharded = zarr.open_array(str(tmp_path / "sharded.zarr"), mode="r")
    assert sharded.metadata.zarr_format == 3
    assert sharded.chunks == (10, 10) and sharded.shards == (20, 20)
    np.testing.assert_array_equal(sharded[...], values)
    with pytest.raises(ValueError, match="multiples"):
        tessera.to_zarr(y, tmp_path / "bad.zarr", shards=(15, 20))
    with pytest.raises(ValueError, match="Zarr v3"):
        tessera.to_zarr(y, tmp_path / "bad.zarr", shards=(20, 20), zarr_format=2)
    assert not (tmp_path / "bad.zarr").exists()


def test_from_zarr_reads_what_zarr_python_3_wrote(tmp_path, rng):
    values = rng.integers(0, 100, size=(25, 13)).astype("int32")
    array = zarr.create_array(str(tmp_path / "in.zarr"), shape=values.shape, chunks=(10, 5),
                              dtype="int32", zarr_format=2)
    array[...] = values
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="50MB")
    x = tessera.from_zarr(tmp_path / "in.zarr", spec=spec)
    assert x.shape == (25, 13) and x.chunksize == (10, 5) and x.dtype == np.int32
    np.testing.assert_array_equal(tessera.sum(x, axis=1).compute(), values.sum(axis=1))


def test_errors_name_what_was_wrong(spec):
    with pytest.raises(ValueError, match="broadcast"):
        tessera.ones((3, 4), spec=spec) + tessera.ones((5,), spec=spec)
    with pytest.raises(OSError):
        tessera.from_zarr("/nonexistent/array.zarr", spec=spec)
    with pytest.raises(ValueError, match="dtype"):
        tessera.ones((3,), dtype="not-a-dtype", spec=spec)


def test_history_returns_what_each_op_projected_and_measured(tmp_path):
    database = tmp_path / "history.sqlite"
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="20MB", history=database, max_workers=2)
    x = tessera.ones((400, 400), chunks=(100, 100), spec=spec) * 3
    tessera.sum(x, axis=0).compute()
    rows = tessera.history(db=database)
    records = rows.to_dict("records") if hasattr(rows, "to_dict") else rows
    assert records, "the run was not recorded"
    assert {row["run"] for row in records} == {records[0]["run"]}
    for row in records:
        assert row["status"] == "ok" and row["allowed_mem"] == 20_000_000
        assert 0 < row["measured_mem_max"] <= row["projected_mem"], row
    with pytest.raises(OSError, match="no history"):
        tessera.history(db=tmp_path / "missing.sqlite")


def test_a_notebook_run_shows_a_tqdm_bar_counting_every_task(spec, monkeypatch, capsys):
    pytest.importorskip("tqdm")
    monkeypatch.setenv("TESSERA_PROGRESS", "tqdm")  # as in a notebook
    x = tessera.ones((40, 40), chunks=(10, 10), spec=spec) + 1
    total = tessera.plan(x).num_tasks
    x.compute()
    bar = capsys.readouterr().err
    assert f"{total}/{total}" in bar and "tessera" in bar
    monkeypatch.setenv("TESSERA_PROGRESS", "0")
    x.compute()
    assert capsys.readouterr().err == ""
