"""`tessera rechunk IN OUT --chunks ... --allowed-mem ...`: every result is checked against
zarr-python reading the target and numpy holding the source's values; --plan runs
nothing and writes nothing; refusals name what is wrong and leave nothing behind.
"""
import os
import re
import shlex
import subprocess
import sys

import numcodecs
import re

import numpy as np
import pytest
import xarray as xr
import zarr
from tessera_run import assert_memory_promise, last_run, run_measured, run_ok


def run(tessera_bin, *args):
    return subprocess.run([tessera_bin, *map(str, args)], capture_output=True, text=True,
                          timeout=60)


def write_source(path, values, chunks, compressor, dims=None):
    """A Zarr array at `path` holding `values` (written by zarr-python)."""
    array = zarr.open_array(str(path), mode="w", zarr_format=2, shape=values.shape, chunks=chunks,
                            dtype=values.dtype, compressor=compressor)
    array[...] = values
    if dims:
        array.attrs["_ARRAY_DIMENSIONS"] = list(dims)
    return path


def partial(out):
    return out.with_name(out.name + ".tessera-partial")


def leftovers(out):
    """What a run that failed or ran nothing must not leave: OUT and OUT.tessera-partial."""
    return [p for p in (out, partial(out)) if p.exists()]


BLOSC = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
RNG = np.random.default_rng(7)


@pytest.fixture
def series(tmp_path):
    """float32 (96, 23, 19), a whole time series per chunk (96, 4, 5), ragged in lat and lon;
    blosc lz4; dimension names. Its values are (mostly) distinct, so any misplaced
    element shows."""
    values = (RNG.standard_normal((96, 23, 19)) * 10 + 280).astype(np.float32)
    return write_source(tmp_path / "series.zarr", values, (96, 4, 5), BLOSC,
                        dims=("time", "lat", "lon")), values


# (shape, dtype, source chunks, --chunks, expected target chunks, source compressor,
#  --intermediate, --allowed-mem)
CASES = [
    ((203, 151), "<f8", (203, 4), "5,-1", (5, 151), BLOSC, "auto", "100kB"),
    ((203, 151), "<i4", (7, 151), "-1,6", (203, 6), None, "memory", "60kB"),
    ((203, 151), ">f8", (203, 4), "9,10", (9, 10), BLOSC, "disk", "150kB"),
    ((40, 13, 17), "<f4", (40, 3, 4), "6,13,17", (6, 13, 17), None, "auto", "40kB"),
    ((40, 13, 17), "<u2", (3, 13, 17), "40,2,-1", (40, 2, 17), BLOSC, "disk", "100kB"),
    ((40, 13, 17), "<f4", (40, 3, 4), "7,5,6", (7, 5, 6), numcodecs.Zstd(level=1), "memory",
     "300kB"),
]


@pytest.mark.parametrize("shape,dtype,source_chunks,chunks,expected,compressor,tier,mem", CASES,
                         ids=[f"{len(c[0])}d-{c[1]}-{c[6]}-{c[3]}" for c in CASES])
def test_rechunk_equals_source(tessera_bin, tmp_path, shape, dtype, source_chunks, chunks,
                               expected, compressor, tier, mem):
    values = (RNG.random(shape) * 60000).astype(dtype)  # fits every dtype of CASES
    source = write_source(tmp_path / "in.zarr", values, source_chunks, compressor)
    out = tmp_path / "out.zarr"
    work = tmp_path / "work"
    work.mkdir()

    args = [source, out, "--chunks", chunks, "--allowed-mem", mem, "--intermediate", tier,
            "--work-dir", work, "--workers", 2]
    if tier != "auto":  # an intermediate, when the plan has one, is in that tier
        plan = run(tessera_bin, "rechunk", *args, "--plan")
        if "with no intermediate" not in plan.stdout:
            assert {"memory": "in RAM", "disk": "on local disk"}[tier] in plan.stdout, plan.stdout
    result = run(tessera_bin, "rechunk", *args)
    assert result.returncode == 0, result.stderr

    target = zarr.open_array(str(out), mode="r")
    assert target.chunks == expected
    assert target.shape == shape
    assert target.dtype == values.dtype  # byte order included
    assert target.compressor == compressor  # the source's codec by default
    np.testing.assert_array_equal(target[...], values)
    assert not partial(out).exists()
    assert list(work.iterdir()) == []  # intermediates are removed


@pytest.fixture
def strips(tmp_path):
    """float64 (203, 151) in column strips (203, 4), blosc lz4: into (9, 10) chunks under
    60 kB the plan needs an intermediate."""
    values = RNG.standard_normal((203, 151))
    return write_source(tmp_path / "strips.zarr", values, (203, 4), BLOSC, dims=("y", "x"))


def test_plan_prints_stages_and_writes_nothing(tessera_bin, tmp_path, strips):
    out = tmp_path / "tiles.zarr"
    work = tmp_path / "work"
    work.mkdir()
    result = run(tessera_bin, "rechunk", strips, out, "--chunks", "9,10", "--allowed-mem",
                 "60kB", "--work-dir", work, "--plan")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert f"Source {strips}" in text
    assert "(203, 151) (y, x)" in text
    assert "float64" in text and "(203, 4)" in text
    assert f"Target {out}" in text
    assert "(9, 10)" in text
    assert "(the source's)" in text
    assert "allowed_mem    60.0 kB" in text
    assert f"work_dir       {work}" in text
    assert "in 2 stages" in text  # the planner's explanation, stage by stage
    assert "  1. " in text and "  2. " in text
    assert "Nothing was run (--plan)" in text
    assert not leftovers(out)
    assert list(work.iterdir()) == []


def test_explain_prints_the_plan_after_every_pass(tessera_bin, tmp_path, strips):
    out = tmp_path / "tiles.zarr"
    result = run(tessera_bin, "rechunk", strips, out, "--chunks", "9,10", "--allowed-mem",
                 "60kB", "--explain")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "Planner passes:" in text
    passes = re.findall(r"^== (\w+)", text, re.MULTILINE)
    assert passes[0] == "prune" and "fusion" in passes and passes[-1] == "memory_sizes"
    assert re.search(r"^== lowering \([0-9.]+ s\)$", text, re.MULTILINE)
    assert ": 2 stages" in text  # the rechunk's stages, one group
    assert "Nothing was run (--plan)" in text  # --explain implies --plan
    assert not leftovers(out)
    disabled = subprocess.run([tessera_bin, "rechunk", str(strips), str(out), "--chunks", "9,10",
                               "--allowed-mem", "60kB", "--explain"], capture_output=True,
                              text=True, timeout=60,
                              env={**os.environ, "TESSERA_DISABLE_PASSES": "history,fusion"})
    assert disabled.returncode == 0, disabled.stderr
    assert "== history (off)" in disabled.stdout and "== fusion (off)" in disabled.stdout


def test_allowed_mem_auto_plans_and_runs_at_the_smallest_budget(tessera_bin, tmp_path, strips):
    """--allowed-mem auto: one command finds the budget, says it, and runs within it."""
    out = tmp_path / "tiles.zarr"
    plan = run(tessera_bin, "rechunk", strips, out, "--chunks", "9,10", "--allowed-mem", "auto",
               "--plan")
    assert plan.returncode == 0, plan.stderr
    match = re.search(r"allowed_mem +auto -> .*\nPlan:.*?\nallowed_mem auto: .*? \((\d+) bytes\)",
                      plan.stdout, re.S)
    assert match, plan.stdout
    budget = int(match.group(1))
    assert not leftovers(out)
    history = tmp_path / "history.sqlite"
    result = run_measured(tessera_bin, "rechunk", strips, out, "--chunks", "9,10",
                          "--allowed-mem", "auto", "--total-mem", "200MB", "--quiet",
                          history=history)
    assert result.returncode == 0, result.stderr
    # The run was planned with the same budget, and every task measured within it: its
    # Buffers and its footprint, as exact integers; the process within total_mem.
    recorded = last_run(tessera_bin, history)
    assert recorded["allowed_mem"] == budget
    assert recorded["total_mem"] == 200_000_000
    assert recorded["ops"]
    assert_memory_promise(recorded, result.peak_rss_bytes, budget=budget)
    back = zarr.open(str(out), mode="r")
    np.testing.assert_array_equal(back[...], zarr.open(str(strips), mode="r")[...])
    assert back.chunks == (9, 10)


# (Into (9, 10) a disk intermediate would cost more than reading some strips twice, so
# forced to disk that plan has none; into rows every strip would be read by every task.)
@pytest.mark.parametrize("tier,where,chunks", [("memory", "in RAM", "9,10"),
                                               ("disk", "on local disk", "2,151")])
def test_plan_shows_the_forced_intermediate_tier(tessera_bin, tmp_path, strips, tier, where,
                                                 chunks):
    result = run(tessera_bin, "rechunk", strips, tmp_path / "out.zarr", "--chunks", chunks,
                 "--allowed-mem", "150kB", "--intermediate", tier, "--plan")
    assert result.returncode == 0, result.stderr
    assert f"intermediates  {tier}" in result.stdout
    assert "writes an intermediate in chunks" in result.stdout and where in result.stdout


def test_report_and_xarray_in_a_group(tessera_bin, tmp_path):
    """IN is a variable of a group; OUT another variable of it: the report shows memory per
    op, and xarray opens the target with its dimension names and the source's values. The
    group's name has quotes and a dollar sign: the printed commands must still work."""
    group_path = tmp_path / "it's \"$HOME\" t2m.zarr"
    values = (RNG.standard_normal((48, 9, 11)) * 5 + 280).astype(np.float32)
    xr.Dataset({"t2m": (("time", "lat", "lon"), values)}).to_zarr(
        str(group_path), mode="w", zarr_format=2, consolidated=False,
        encoding={"t2m": {"chunks": (48, 2, 3), "compressors": (BLOSC,)}})
    out = group_path / "t2m_by_time"

    result = run(tessera_bin, "rechunk", group_path / "t2m", out, "--chunks", "5,-1,-1",
                 "--allowed-mem", "50kB", "--quiet")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""  # --quiet: no progress
    text = result.stdout
    assert "projected/task" in text and "measured max" in text
    # Per op, how many of its tasks ran at once: at least one, at most the run's most.
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if "projected/task" in line)
    assert lines[header].split()[:4] == ["op", "tasks", "at", "once"], lines[header]
    most = int(re.search(r"at most (\d+) tasks? at once", text).group(1))
    rows = lines[header + 1:next(i for i, line in enumerate(lines) if line.startswith("Total"))]
    assert rows, text
    for row in rows:
        assert 1 <= int(row.split()[2]) <= most, text
    assert "process peak RSS" in text
    assert f"Wrote {out} (Zarr v2, shape (48, 9, 11), chunks (5, 9, 11)" in text

    dataset = xr.open_zarr(str(group_path), consolidated=False)
    assert dataset["t2m_by_time"].dims == ("time", "lat", "lon")
    np.testing.assert_array_equal(dataset["t2m_by_time"].values, values)
    assert zarr.open_array(str(out), mode="r").chunks == (5, 9, 11)

    # The printed ways to open it work as printed, in a shell.
    commands = [line.strip() for line in text.splitlines()
                if line.strip().startswith("python3 -c")]
    assert len(commands) == 2 and "zarr.open(" in commands[0] and "xr.open_zarr(" in commands[1]
    for command in commands:
        command = shlex.quote(sys.executable) + command.removeprefix("python3")
        opened = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                                timeout=60)
        assert opened.returncode == 0, opened.stderr
        assert "t2m_by_time" in opened.stdout or "(48, 9, 11)" in opened.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [group_path.name]  # nothing created


def test_bare_array_report_says_how_to_open_it(tessera_bin, tmp_path, series):
    source, values = series
    out = tmp_path / "bare.zarr"
    result = run(tessera_bin, "rechunk", source, out, "--chunks", "96,10,10",
                 "--allowed-mem", "300kB", "--quiet")
    assert result.returncode == 0, result.stderr
    assert "zarr.open(" in result.stdout
    assert "xr.open_zarr(" not in result.stdout.replace("to open the result with xr.open_zarr", "")
    target = zarr.open_array(str(out), mode="r")
    assert target.attrs["_ARRAY_DIMENSIONS"] == ["time", "lat", "lon"]
    np.testing.assert_array_equal(target[...], values)


@pytest.mark.parametrize("consolidated", [False, True])
def test_a_stray_zarr_json_beside_out_is_no_group(tessera_bin, tmp_path, series, consolidated):
    """A folder whose zarr.json is someone else's file, not Zarr's: the array is written
    into it as a bare array, with no group to update or to name; asked to consolidate,
    the run refuses, naming the file, and leaves no array."""
    source, values = series
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "zarr.json").write_text('{"hello": 1}')
    out = folder / "out"
    args = ["rechunk", source, out, "--chunks", "96,10,10", "--allowed-mem", "300kB", "--quiet"]
    result = run(tessera_bin, *args, *(["--consolidated"] if consolidated else []))
    if consolidated:
        assert result.returncode != 0
        assert "zarr.json" in result.stderr and "node_type" in result.stderr, result.stderr
        assert not out.exists()
    else:
        assert result.returncode == 0, result.stderr
        assert "zarr.open(" in result.stdout
        assert "of the group" not in result.stdout
        np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...], values)
    assert (folder / "zarr.json").read_text() == '{"hello": 1}'


@pytest.mark.parametrize("codec,expected", [
    ("raw", None),
    ("none", None),
    ("zstd", numcodecs.Zstd(level=1)),
    ("blosc-lz4", BLOSC),
])
def test_codec_option(tessera_bin, tmp_path, series, codec, expected):
    source, values = series
    out = tmp_path / "out.zarr"
    result = run(tessera_bin, "rechunk", source, out, "--chunks", "10,-1,-1",
                 "--allowed-mem", "300kB", "--codec", codec, "--quiet")
    assert result.returncode == 0, result.stderr
    target = zarr.open_array(str(out), mode="r")
    assert target.compressor == expected
    np.testing.assert_array_equal(target[...], values)


def test_existing_out_needs_overwrite(tessera_bin, tmp_path, series):
    source, values = series
    out = tmp_path / "out.zarr"
    write_source(out, np.zeros((4, 4), np.int8), (2, 2), None)
    before = sorted(p.name for p in out.rglob("*"))

    result = run(tessera_bin, "rechunk", source, out, "--chunks", "10,10,10",
                 "--allowed-mem", "200kB")
    assert result.returncode == 1
    assert "already exists" in result.stderr and "--overwrite" in result.stderr
    assert sorted(p.name for p in out.rglob("*")) == before  # untouched
    assert not partial(out).exists()

    # --plan writes nothing, so it plans anyway and says what the run will need.
    result = run(tessera_bin, "rechunk", source, out, "--chunks", "10,10,10",
                 "--allowed-mem", "200kB", "--plan")
    assert result.returncode == 0, result.stderr
    assert "exists; the run will refuse to replace it unless --overwrite" in result.stdout
    assert sorted(p.name for p in out.rglob("*")) == before

    result = run(tessera_bin, "rechunk", source, out, "--chunks", "10,10,10",
                 "--allowed-mem", "200kB", "--overwrite", "--quiet")
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...], values)


@pytest.mark.parametrize("spelling", ["same", "slash", "dot"])
def test_out_equal_to_in_is_refused(tessera_bin, series, spelling):
    source, values = series
    out = {"same": str(source), "slash": f"{source}/",
           "dot": f"{source.parent}/./{source.name}"}[spelling]
    result = run(tessera_bin, "rechunk", source, out, "--chunks", "10,10,10",
                 "--allowed-mem", "200kB", "--overwrite")
    assert result.returncode == 1
    assert "OUT is IN" in result.stderr
    np.testing.assert_array_equal(zarr.open_array(str(source), mode="r")[...], values)


def test_out_inside_in_or_containing_it_is_refused(tessera_bin, tmp_path, series):
    source, _ = series
    result = run(tessera_bin, "rechunk", source, source / "x", "--chunks", "10,10,10",
                 "--allowed-mem", "200kB")
    assert result.returncode == 1 and "inside IN" in result.stderr
    assert not (source / "x").exists()
    result = run(tessera_bin, "rechunk", source, tmp_path, "--chunks", "10,10,10",
                 "--allowed-mem", "200kB", "--overwrite")
    assert result.returncode == 1 and "inside OUT" in result.stderr


def test_budget_too_small(tessera_bin, tmp_path, series):
    source, _ = series
    out = tmp_path / "out.zarr"
    result = run(tessera_bin, "rechunk", source, out, "--chunks", "96,10,10",
                 "--allowed-mem", "1kB")
    assert result.returncode == 1
    assert result.stderr.startswith("tessera: error: Projected blockwise memory (")
    assert "allowed_mem" in result.stderr
    assert not leftovers(out)
    # --plan refuses the same way.
    result = run(tessera_bin, "rechunk", source, out, "--chunks", "96,10,10",
                 "--allowed-mem", "1kB", "--plan")
    assert result.returncode == 1
    assert result.stderr.startswith("tessera: error: Projected blockwise memory (")
    assert not leftovers(out)


@pytest.mark.parametrize("args,message", [
    (["--chunks", "10,10"], "gives 2 values but IN has 3 dimensions"),
    (["--chunks", "10,10,10,10"], "gives 4 values"),
    (["--chunks", "0,10,10"], "dimension 0 (time) must be >= 1"),
    (["--chunks", "10,-2,10"], "dimension 1 (lat) must be >= 1"),
    (["--chunks", "10,ten,10"], "\"ten\" is not a whole number"),
    (["--chunks", ""], "is not a whole number"),
    (["--chunks", "10,10,10", "--allowed-mem", "lots"], "--allowed-mem"),
    (["--chunks", "10,10,10", "--allowed-mem", "0"], "--allowed-mem"),
    (["--chunks", "10,10,10", "--reserved-mem=-5MB"], "--reserved-mem"),
    (["--chunks", "10,10,10", "--reserved-mem", "300kB"], "must exceed --reserved-mem"),
    (["--chunks", "10,10,10", "--total-mem", "100kB"], "--total-mem"),
    (["--chunks", "10,10,10", "--codec", "snappy"], "--codec"),
])
def test_bad_values_are_clear_errors(tessera_bin, tmp_path, series, args, message):
    source, _ = series
    out = tmp_path / "out.zarr"
    full = ["--allowed-mem", "200kB", *args] if "--allowed-mem" not in args else args
    result = run(tessera_bin, "rechunk", source, out, *full)
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.startswith("tessera: error: ")
    assert message in result.stderr
    assert not leftovers(out)


@pytest.mark.parametrize("args", [
    ["--chunks", "10,10,10", "--allowed-mem", "200kB", "--intermediate", "ssd"],
    ["--chunks", "10,10,10", "--allowed-mem", "200kB", "--executor", "gpu"],
    ["--chunks", "10,10,10", "--allowed-mem", "200kB", "--workers=-1"],
    ["--allowed-mem", "200kB", "--chunks"],
    ["--allowed-mem", "200kB"],
    ["--chunks", "10,10,10"],
], ids=["intermediate", "executor", "workers", "chunks-without-value", "no-chunks",
        "no-allowed-mem"])
def test_usage_errors(tessera_bin, tmp_path, series, args):
    source, _ = series
    out = tmp_path / "out.zarr"
    result = run(tessera_bin, "rechunk", source, out, *args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "tessera rechunk" in result.stderr  # the usage text
    assert not leftovers(out)


def test_bad_sources(tessera_bin, tmp_path):
    out = tmp_path / "out.zarr"
    args = ["--chunks", "10", "--allowed-mem", "1MB"]
    result = run(tessera_bin, "rechunk", tmp_path / "missing.zarr", out, *args)
    assert result.returncode == 1 and "no such file or directory" in result.stderr

    plain = tmp_path / "plain"
    plain.mkdir()
    result = run(tessera_bin, "rechunk", plain, out, *args)
    assert result.returncode == 1 and str(plain) in result.stderr

    group = zarr.open_group(str(tmp_path / "g.zarr"), mode="w", zarr_format=2)
    group.create_dataset("u10", shape=(4,), chunks=(2,), dtype="f4")
    result = run(tessera_bin, "rechunk", tmp_path / "g.zarr", out, *args)
    assert result.returncode == 1
    assert "is a Zarr group" in result.stderr and "g.zarr/u10" in result.stderr
    assert not leftovers(out)


def test_sync_executor_and_resume_flag(tessera_bin, tmp_path, series):
    source, values = series
    out = tmp_path / "out.zarr"
    result = run(tessera_bin, "rechunk", source, out, "--chunks", "12,-1,7",
                 "--allowed-mem", "100kB", "--executor", "sync", "--workers", 1, "--resume",
                 "--quiet")
    assert result.returncode == 0, result.stderr
    target = zarr.open_array(str(out), mode="r")
    assert target.chunks == (12, 23, 7)
    np.testing.assert_array_equal(target[...], values)


def test_resume_refuses_a_folder_tessera_did_not_mark(tessera_bin, tmp_path, series):
    """A finished array moved to OUT.tessera-partial by hand carries no marker of the run
    that wrote it: --resume refuses it and leaves it as it is (a real interrupted run is
    resumed in test_output_ownership.py)."""
    source, values = series
    out = tmp_path / "out.zarr"
    args = [source, out, "--chunks", "10,-1,-1", "--allowed-mem", "200kB", "--quiet"]
    assert run(tessera_bin, "rechunk", *args).returncode == 0
    out.rename(partial(out))
    (partial(out) / "3.0.0").unlink()
    before = sorted((p.name, p.read_bytes()) for p in partial(out).iterdir())

    result = run(tessera_bin, "rechunk", *args, "--resume")
    assert result.returncode == 1
    assert "was not made by Tessera" in result.stderr and "move or delete" in result.stderr
    assert sorted((p.name, p.read_bytes()) for p in partial(out).iterdir()) == before
    assert not out.exists()


def test_xarray_reads_zeros_as_zeros(tessera_bin, tmp_path):
    """The target keeps the source's fill_value (NaN, as xarray wrote it) and its other
    attributes: xarray masks in the target exactly what it masks in the source, so a real
    zero stays a zero (a 0.0 fill_value would turn it into NaN)."""
    group_path = tmp_path / "g.zarr"
    values = np.arange(12, dtype=np.float32).reshape(3, 4)  # values[0, 0] == 0.0
    dataset = xr.Dataset({"a": (("y", "x"), values, {"units": "K"})})
    dataset.to_zarr(str(group_path), mode="w", zarr_format=2, consolidated=False,
                    encoding={"a": {"chunks": (3, 1)}})
    result = run(tessera_bin, "rechunk", group_path / "a", group_path / "b", "--chunks", "1,-1",
                 "--allowed-mem", "1MB", "--quiet")
    assert result.returncode == 0, result.stderr
    source = zarr.open_array(str(group_path / "a"), mode="r")
    target = zarr.open_array(str(group_path / "b"), mode="r")
    assert np.isnan(source.fill_value) and np.isnan(target.fill_value)
    assert target.attrs["units"] == "K"
    dataset = xr.open_zarr(str(group_path), consolidated=False)
    np.testing.assert_array_equal(dataset["b"].values, values)
    assert dataset["b"].attrs["units"] == "K"


def test_help(tessera_bin):
    result = run(tessera_bin, "rechunk", "--help")
    assert result.returncode == 0
    for option in ("--chunks", "--allowed-mem", "--plan", "--intermediate", "--codec",
                   "--overwrite"):
        assert option in result.stdout
    assert "rechunk" in run_ok(tessera_bin, "--help").stdout


def op_sizes(plan_stdout):
    """{op: (projected bytes, size bytes)} from the op table of --plan with memory tiers,
    as printed."""
    units = {"B": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9}
    lines = plan_stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Plan:"))
    header = lines[start + 1]
    assert "projected" in header and "size" in header, plan_stdout
    sizes = {}
    for line in lines[start + 2:]:
        match = re.match(r"^\s+(\S+)\s+\S+\s+\d+\s+([\d.]+) (B|kB|MB|GB)\s+([\d.]+) (B|kB|MB|GB)",
                         line)
        if not match:
            break
        sizes[match.group(1)] = (float(match.group(2)) * units[match.group(3)],
                                 float(match.group(4)) * units[match.group(5)])
    assert sizes, plan_stdout
    return sizes


def test_memory_tiers_give_each_op_the_smallest_that_fits_and_the_run_equals_the_source(
        tessera_bin, tmp_path, strips):
    """--memory-tiers 10kB,50kB,100kB: the plan names each op's size, the smallest tier at
    or above its projection (hand-picked from the printed projections, which lie far from
    the tiers); the run writes the source's values in the asked chunks, every task within
    its projection, the process within total_mem. A tier list too small for an op is
    refused, naming the op and the largest tier, and writes nothing."""
    tiers = [10_000, 50_000, 100_000]
    out = tmp_path / "tiles.zarr"
    args = [strips, out, "--chunks", "9,10", "--allowed-mem", "200kB", "--memory-tiers",
            "10kB,50kB,100kB", "--total-mem", "200MB", "--intermediate", "memory"]
    plan = run_ok(tessera_bin, "rechunk", *args, "--plan")
    assert "memory_tiers   10.0 kB, 50.0 kB, 100.0 kB" in plan.stdout, plan.stdout
    sizes = op_sizes(plan.stdout)
    assert len(sizes) == 2, plan.stdout  # an intermediate: two copies of different sizes
    for op, (projected, size) in sizes.items():
        assert size == min(tier for tier in tiers if tier >= projected), (op, plan.stdout)
    assert len({size for _, size in sizes.values()}) == 2, plan.stdout
    assert not leftovers(out)

    history = tmp_path / "history.sqlite"
    result = run_measured(tessera_bin, "rechunk", *args, "--quiet", history=history)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    back = zarr.open_array(str(out), mode="r")
    assert back.chunks == (9, 10)
    np.testing.assert_array_equal(back[...], zarr.open_array(str(strips), mode="r")[...])
    recorded = last_run(tessera_bin, history)
    assert {op["name"] for op in recorded["ops"]} == set(sizes)
    assert_memory_promise(recorded, result.peak_rss_bytes)

    small = tmp_path / "small.zarr"
    refused = run(tessera_bin, "rechunk", strips, small, "--chunks", "9,10", "--allowed-mem",
                  "200kB", "--memory-tiers", "1kB,2kB")
    assert refused.returncode == 1
    assert "more than the largest memory tier (2.0 kB)" in refused.stderr, refused.stderr
    assert "add a larger tier" in refused.stderr, refused.stderr
    assert not leftovers(small)
