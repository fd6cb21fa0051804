"""`--work-dir` (issue 14): the folder disk intermediates go under must exist, be a folder
and be writable, which is checked at planning, before anything is written; Tessera never
creates it. Inside it, only what Tessera made (a `tessera-<pid>-<start>-<n>` folder with
its marker) is ever removed: a user's folder or symlink named like a killed run's work
directory is left byte for byte, and so is what the link points at.
"""
import os
import subprocess

import numcodecs
import numpy as np
import pytest
import zarr
from tessera_run import tree

BLOSC = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)


def run(tessera_bin, *args):
    return subprocess.run([tessera_bin, *map(str, args)], capture_output=True, text=True,
                          timeout=120)


@pytest.fixture
def strips(tmp_path):
    """float64 (400, 400) in column strips (400, 10): into (10, 400) rows under 100 kB the
    plan needs an intermediate (on disk with --intermediate disk)."""
    values = np.random.default_rng(3).standard_normal((400, 400))
    path = tmp_path / "strips.zarr"
    array = zarr.open_array(str(path), mode="w", zarr_format=2, shape=values.shape, chunks=(400, 10),
                            dtype=values.dtype, compressor=BLOSC)
    array[...] = values
    return path, values


def rechunk_args(source, out, work, *extra):
    return ["rechunk", source, out, "--chunks", "10,400", "--allowed-mem", "250kB",
            "--intermediate", "disk", "--work-dir", work, "--quiet", *extra]


@pytest.mark.parametrize("plan_only", [False, True], ids=["run", "plan"])
def test_a_work_dir_that_is_a_file_is_refused_at_planning(tessera_bin, tmp_path, strips,
                                                          plan_only):
    source, _ = strips
    out = tmp_path / "out.zarr"
    work = tmp_path / "work"
    work.write_bytes(b"a user's file, not a folder")
    before = tree(tmp_path)
    result = run(tessera_bin, *rechunk_args(source, out, work, *(["--plan"] if plan_only else [])))
    assert result.returncode == 1, result.stdout
    assert f"work_dir {work} is a file, not a folder: name a folder for disk intermediates" \
        in result.stderr
    assert "filesystem error" not in result.stderr
    assert tree(tmp_path) == before  # no OUT, no OUT.partial; source and file unchanged


def test_a_missing_work_dir_is_refused_and_not_created(tessera_bin, tmp_path, strips):
    source, _ = strips
    out = tmp_path / "out.zarr"
    work = tmp_path / "missing" / "work"
    before = tree(tmp_path)
    result = run(tessera_bin, *rechunk_args(source, out, work))
    assert result.returncode == 1, result.stdout
    assert f"work_dir {work} does not exist: create it (mkdir -p {work})" in result.stderr
    assert tree(tmp_path) == before
    assert not (tmp_path / "missing").exists()


def test_calc_refuses_a_work_dir_that_is_a_file(tessera_bin, tmp_path, strips):
    source, _ = strips
    out = tmp_path / "out.zarr"
    work = tmp_path / "work"
    work.write_bytes(b"notes")
    before = tree(tmp_path)
    result = run(tessera_bin, "calc", "y = x * 2", "--input", f"x={source}", "--output", out,
                 "--allowed-mem", "10MB", "--work-dir", work, "--quiet")
    assert result.returncode == 1, result.stdout
    assert f"work_dir {work} is a file, not a folder" in result.stderr
    assert tree(tmp_path) == before


def test_user_folders_and_links_named_like_stale_work_dirs_survive(tessera_bin, tmp_path,
                                                                   strips):
    """A disk-tier run spills into `work`, where a user keeps a folder named like a killed
    run's work directory (no such process) and a symlink named like one pointing at
    another user folder: after the run both are there byte for byte, the link's target
    too, and the run's own work directory is gone."""
    source, values = strips
    out = tmp_path / "out.zarr"
    work = tmp_path / "work"
    user = work / "tessera-999999999-12345-1"
    (user / "a.zarr").mkdir(parents=True)
    (user / "a.zarr" / "0.0").write_bytes(b"user chunk")
    (user / "notes.txt").write_text("keep me")
    elsewhere = tmp_path / "results"
    (elsewhere / "sub").mkdir(parents=True)
    (elsewhere / "0.0").write_bytes(b"another user chunk")
    (elsewhere / "sub" / ".zarray").write_text("{}")
    os.symlink(elsewhere, work / "tessera-999999999-12345-2")
    work_before, elsewhere_before = tree(work), tree(elsewhere)

    plan = run(tessera_bin, *rechunk_args(source, out, work, "--plan"))
    assert plan.returncode == 0, plan.stderr
    assert "on local disk (work_dir)" in plan.stdout  # the run spills into `work`
    assert tree(work) == work_before
    result = run(tessera_bin, *rechunk_args(source, out, work))
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...], values)
    assert tree(work) == work_before
    assert tree(elsewhere) == elsewhere_before
