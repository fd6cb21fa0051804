"""The `tessera` command: help, version, `info` on arrays and groups, errors and exit codes.

Exit codes: 0 success (--help and --version included), 1 an error while running
("tessera: error: ..." on stderr), 2 a usage error (usage text on stderr).
"""
import json
import os
import subprocess

import numcodecs
import numpy as np
import pytest
import xarray as xr
import zarr
from tessera_run import run_ok
from zarr_v2 import V2_DEFAULT_COMPRESSOR


def run(tessera_bin, *args):
    return subprocess.run([tessera_bin, *map(str, args)], capture_output=True, text=True,
                          timeout=60)


def stored_chunk_bytes(path):
    """Sum of the sizes of the chunk files of the array at `path`."""
    total = 0
    for directory, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(directory, name))
                     for name in files if not name.startswith("."))
    return total


@pytest.fixture
def compressed_array(tmp_path):
    """float64 (100, 60) in (30, 25) chunks (4 x 3 blocks, partial edges), blosc lz4, NaN
    fill, dimension names; 5 of the 12 chunks are never written."""
    path = tmp_path / "compressed.zarr"
    array = zarr.open_array(str(path), mode="w", zarr_format=2, shape=(100, 60), chunks=(30, 25),
                            dtype="<f8", fill_value=np.nan, write_empty_chunks=True,
                            compressor=numcodecs.Blosc(cname="lz4", clevel=5,
                                                       shuffle=numcodecs.Blosc.SHUFFLE))
    array.attrs["_ARRAY_DIMENSIONS"] = ["lat", "lon"]
    array[:60, :] = np.arange(60 * 60, dtype=np.float64).reshape(60, 60) % 7
    array[60:90, :25] = 1.0
    assert array.nchunks_initialized == 7
    return path


@pytest.fixture
def raw_array(tmp_path):
    """Uncompressed big-endian int32 (10, 10) in (4, 4) chunks, fill 0, every chunk."""
    path = tmp_path / "raw.zarr"
    array = zarr.open_array(str(path), mode="w", zarr_format=2, shape=(10, 10), chunks=(4, 4), dtype=">i4",
                            fill_value=0, compressor=None, order="F",
                            dimension_separator="/")
    array[...] = np.arange(100, dtype=np.int32).reshape(10, 10)
    return path


def test_help_lists_commands(tessera_bin):
    result = run(tessera_bin, "--help")
    assert result.returncode == 0
    assert "info" in result.stdout
    assert "--version" in result.stdout
    assert result.stderr == ""


def test_version(tessera_bin):
    result = run(tessera_bin, "--version")
    assert result.returncode == 0
    assert result.stdout.strip() == "tessera 0.1.0"


def test_info_help(tessera_bin):
    result = run(tessera_bin, "info", "--help")
    assert result.returncode == 0
    assert "STORE" in result.stdout
    assert "--json" in result.stdout


def test_info_text_compressed_array(tessera_bin, compressed_array):
    result = run(tessera_bin, "info", compressed_array)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert str(compressed_array) in text
    assert "(100, 60)" in text
    assert "float64 (<f8)" in text
    assert "(30, 25)" in text
    assert "(4, 3) blocks" in text
    assert "7 of 12" in text
    assert "blosc" in text and "lz4" in text
    assert "NaN" in text
    assert "(lat, lon)" in text
    assert "48.0 kB (48000 bytes)" in text
    assert f"({stored_chunk_bytes(compressed_array)} bytes)" in text
    assert "x\n" in text  # the compression ratio, e.g. "5.31x"


def test_info_json_compressed_array(tessera_bin, compressed_array):
    result = run(tessera_bin, "info", compressed_array, "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    stored = stored_chunk_bytes(compressed_array)
    assert info["kind"] == "array"
    assert info["shape"] == [100, 60]
    assert info["dtype"] == "float64"
    assert info["typestr"] == "<f8"
    assert info["chunks"] == [30, 25]
    assert info["order"] == "C"
    assert info["grid"] == [4, 3]
    assert info["chunks_stored"] == 7
    assert info["chunks_expected"] == 12
    assert info["compressor"]["id"] == "blosc"
    assert info["compressor"]["cname"] == "lz4"
    assert info["compressor"]["shuffle"] == 1
    assert info["codec"] != "none"
    assert info["filters"] == []
    assert info["fill_value"] == "NaN"
    assert info["dimension_names"] == ["lat", "lon"]
    assert info["logical_bytes"] == 100 * 60 * 8
    assert info["stored_bytes"] == stored
    # the ratio covers the stored chunks only: 7 full chunks of 30 * 25 doubles
    assert info["compression_ratio"] == pytest.approx(7 * 30 * 25 * 8 / stored)


def test_info_uncompressed_big_endian_array(tessera_bin, raw_array):
    result = run(tessera_bin, "info", raw_array, "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert info["dtype"] == "int32"
    assert info["typestr"] == ">i4"
    assert info["order"] == "F"
    assert info["dimension_separator"] == "/"
    assert info["codec"] == "none"
    assert info["compressor"] is None
    assert info["fill_value"] == 0
    assert info["dimension_names"] is None
    assert info["chunks_stored"] == info["chunks_expected"] == 9
    assert info["stored_bytes"] == 9 * 4 * 4 * 4  # uncompressed: full chunks, edges padded
    assert info["compression_ratio"] == pytest.approx(1.0)

    text = run_ok(tessera_bin, "info", raw_array).stdout
    assert "int32 (>i4)" in text
    assert "codec" in text and "none" in text
    assert "1.00x" in text


def test_info_array_with_no_chunks(tessera_bin, tmp_path):
    path = tmp_path / "empty.zarr"
    zarr.open_array(str(path), mode="w", zarr_format=2, compressor=V2_DEFAULT_COMPRESSOR, shape=(1000,), chunks=(100,), dtype="u1")
    info = json.loads(run_ok(tessera_bin, "info", path, "--json").stdout)
    assert info["chunks_stored"] == 0
    assert info["chunks_expected"] == 10
    assert info["stored_bytes"] == 0
    assert info["compression_ratio"] is None
    assert "n/a" in run_ok(tessera_bin, "info", path).stdout


def test_info_group(tessera_bin, tmp_path):
    path = tmp_path / "dataset.zarr"
    dataset = xr.Dataset({"t2m": (("time", "lat"), np.zeros((4, 3), dtype=np.float32)),
                          "count": (("lat",), np.arange(3, dtype=np.int16))})
    dataset.to_zarr(str(path), consolidated=False, mode="w", zarr_format=2)
    group = zarr.open_group(str(path), mode="a")
    sub = group.create_group("extra")
    sub.create_dataset("mask", shape=(5, 5), chunks=(2, 2), dtype="bool")

    result = run(tessera_bin, "info", path)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "Zarr group" in text
    for name in ("t2m", "count", "lat", "extra/mask"):
        assert name in text
    assert "float32 (<f4)" in text
    assert "(time, lat)" in text

    info = json.loads(run_ok(tessera_bin, "info", path, "--json").stdout)
    assert info["kind"] == "group"
    arrays = {array["name"]: array for array in info["arrays"]}
    assert set(arrays) == {"count", "extra/mask", "t2m"}
    assert arrays["t2m"]["shape"] == [4, 3]
    assert arrays["t2m"]["dtype"] == "float32"
    assert arrays["t2m"]["dimension_names"] == ["time", "lat"]
    assert arrays["extra/mask"]["chunks"] == [2, 2]
    assert arrays["extra/mask"]["dtype"] == "bool"
    assert info["groups"] == ["extra"]


def test_info_group_with_link_cycle(tessera_bin, tmp_path):
    """A symbolic link back to the group is walked once, not forever."""
    path = tmp_path / "g.zarr"
    group = zarr.open_group(str(path), mode="w", zarr_format=2)
    group.create_dataset("a", shape=(4,), chunks=(2,), dtype="i2")
    group.create_group("sub")
    os.symlink(path, path / "sub" / "loop")
    result = run(tessera_bin, "info", path, "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert [array["name"] for array in info["arrays"]] == ["a"]
    assert info["groups"] == ["sub"]


def test_info_member_array_path(tessera_bin, tmp_path):
    path = tmp_path / "dataset.zarr"
    xr.Dataset({"v": (("x",), np.arange(5.0))}).to_zarr(str(path), consolidated=False, zarr_format=2)
    info = json.loads(run_ok(tessera_bin, "info", path / "v", "--json").stdout)
    assert info["kind"] == "array"
    assert info["dimension_names"] == ["x"]


def test_nonexistent_path(tessera_bin, tmp_path):
    missing = tmp_path / "nope.zarr"
    result = run(tessera_bin, "info", missing)
    assert result.returncode == 1
    assert result.stderr.startswith("tessera: error: ")
    assert str(missing) in result.stderr
    assert "no such" in result.stderr.lower()
    assert result.stdout == ""
    assert not missing.exists()  # info never creates anything


def test_path_is_a_file(tessera_bin, raw_array):
    result = run(tessera_bin, "info", raw_array / ".zarray")
    assert result.returncode == 1
    assert "not a directory" in result.stderr


def test_directory_without_zarr_metadata(tessera_bin, tmp_path):
    result = run(tessera_bin, "info", tmp_path)
    assert result.returncode == 1
    assert str(tmp_path) in result.stderr
    assert ".zarray" in result.stderr


@pytest.mark.parametrize("content", [
    "{not json",
    '{"zarr_format": 2}',
    '{"zarr_format": 2, "shape": [10], "chunks": [0], "dtype": "<f8", "compressor": null, '
    '"fill_value": 0, "filters": null, "order": "C"}',
    '{"zarr_format": 2, "shape": [10], "chunks": [5], "dtype": "<f3", "compressor": null, '
    '"fill_value": 0, "filters": null, "order": "C"}',
    "",
], ids=["syntax", "missing-keys", "zero-chunk", "bad-dtype", "empty"])
def test_corrupt_zarray(tessera_bin, raw_array, content):
    (raw_array / ".zarray").write_text(content)
    result = run(tessera_bin, "info", raw_array)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("tessera: error: ")
    assert str(raw_array / ".zarray") in result.stderr
    assert "Traceback" not in result.stderr and "terminate" not in result.stderr


def test_corrupt_member_in_group(tessera_bin, tmp_path):
    path = tmp_path / "g.zarr"
    group = zarr.open_group(str(path), mode="w", zarr_format=2)
    group.create_dataset("good", shape=(4,), chunks=(2,), dtype="i2")
    group.create_dataset("bad", shape=(4,), chunks=(2,), dtype="i2")
    (path / "bad" / ".zarray").write_text("[]")
    result = run(tessera_bin, "info", path)
    assert result.returncode == 1
    assert str(path / "bad" / ".zarray") in result.stderr


@pytest.mark.parametrize("args", [
    ["--no-such-option"],
    ["frobnicate"],
    ["info"],
    ["info", "a.zarr", "--no-such-option"],
    ["info", "a.zarr", "b.zarr"],
    [],
], ids=["unknown-option", "unknown-command", "missing-store", "unknown-info-option",
        "extra-argument", "no-command"])
def test_usage_errors(tessera_bin, args):
    result = run(tessera_bin, *args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stderr.startswith("tessera: error: ")
    assert "Usage" in result.stderr or "usage" in result.stderr
    assert result.stdout == ""


# ---- tessera sample -------------------------------------------------------------------

def expected_sample(shape, seed, dtype):
    """The sample field computed independently with numpy: 280 + 12*sin(2*pi*(i/n + 0.1*dim))
    per dimension + 0.5*(u - 0.5), u from splitmix64(seed + golden * (flat index + 1))."""
    grids = np.meshgrid(*[np.arange(n, dtype=np.float64) for n in shape], indexing="ij")
    value = np.full(shape, 280.0)
    for dim, grid in enumerate(grids):
        value += 12 * np.sin(2 * np.pi * (grid / max(shape[dim], 1) + 0.1 * dim))
    with np.errstate(over="ignore"):
        flat = np.arange(int(np.prod(shape)), dtype=np.uint64)
        z = np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15) * (flat + np.uint64(1))
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    noise = (z >> np.uint64(11)).astype(np.float64) * 2.0**-53 - 0.5
    value += 0.5 * noise.reshape(shape)
    return value.astype(dtype)


def test_sample_writes_a_group_xarray_opens(tessera_bin, tmp_path):
    out = tmp_path / "t2m.zarr"
    result = run(tessera_bin, "sample", out, "--shape", "30,7,9", "--chunks", "30,4,4",
                 "--dtype", "float64", "--seed", "42")
    assert result.returncode == 0, result.stderr
    assert "wrote" in result.stdout and "6 chunks" in result.stdout  # 1 x 2 x 3 blocks
    dataset = xr.open_zarr(str(out), consolidated=False)
    assert dataset["t2m"].dims == ("time", "lat", "lon")
    array = zarr.open_array(str(out / "t2m"), mode="r")
    assert array.chunks == (30, 4, 4)
    # libm's sin and numpy's may differ in the last bit.
    np.testing.assert_allclose(array[...], expected_sample((30, 7, 9), 42, np.float64),
                               rtol=1e-14, atol=0)


def test_sample_plain_array_with_codec_and_dims(tessera_bin, tmp_path):
    out = tmp_path / "a.zarr"
    result = run(tessera_bin, "sample", out, "--shape", "50,20", "--chunks", "16,16",
                 "--dtype", "int16", "--codec", "zstd", "--variable", "", "--dims", "y,x",
                 "--zarr-format", "2")
    assert result.returncode == 0, result.stderr
    array = zarr.open_array(str(out), mode="r")
    assert array.compressor.codec_id == "zstd"
    assert array.attrs["_ARRAY_DIMENSIONS"] == ["y", "x"]
    np.testing.assert_array_equal(array[...], expected_sample((50, 20), 0, np.int16))


def test_sample_writes_sharded_zarr_v3(tessera_bin, tmp_path):
    out = tmp_path / "s.zarr"
    result = run(tessera_bin, "sample", out, "--shape", "20,10", "--chunks", "5,5",
                 "--shards", "10,10", "--dtype", "float32", "--codec", "zstd:3")
    assert result.returncode == 0, result.stderr
    assert "Zarr v3" in result.stdout and "2 shards" in result.stdout
    array = zarr.open_array(str(out / "t2m"), mode="r")
    assert array.metadata.zarr_format == 3
    assert array.chunks == (5, 5) and array.shards == (10, 10)
    assert zarr.open_group(str(out), mode="r").metadata.zarr_format == 3
    np.testing.assert_allclose(array[...], expected_sample((20, 10), 0, np.float32), rtol=1e-6)


def test_sample_refuses_to_overwrite_without_flag(tessera_bin, tmp_path):
    out = tmp_path / "keep.zarr"
    assert run(tessera_bin, "sample", out, "--shape", "4,4", "--chunks", "2,2").returncode == 0
    before = sorted(p.name for p in out.rglob("*"))
    result = run(tessera_bin, "sample", out, "--shape", "8,8")
    assert result.returncode == 1
    assert "already exists" in result.stderr and "--overwrite" in result.stderr
    assert sorted(p.name for p in out.rglob("*")) == before
    assert run(tessera_bin, "sample", out, "--shape", "8,8", "--overwrite").returncode == 0
    assert zarr.open_array(str(out / "t2m"), mode="r").shape == (8, 8)


def test_sample_overwrite_never_removes_a_non_zarr_folder(tessera_bin, tmp_path):
    precious = tmp_path / "notes"
    precious.mkdir()
    (precious / "thesis.txt").write_text("years of work")
    result = run(tessera_bin, "sample", precious, "--shape", "4,4", "--overwrite")
    assert result.returncode == 1
    assert "not a Zarr store" in result.stderr
    assert (precious / "thesis.txt").read_text() == "years of work"


def test_sample_small_integer_types_saturate(tessera_bin, tmp_path):
    out = tmp_path / "i8.zarr"
    result = run(tessera_bin, "sample", out, "--shape", "20,5", "--dtype", "int8", "--variable", "")
    assert result.returncode == 0, result.stderr
    values = zarr.open_array(str(out), mode="r")[...]
    expected = np.clip(expected_sample((20, 5), 0, np.float64), -128, 127).astype(np.int8)
    np.testing.assert_array_equal(values, expected)


@pytest.mark.parametrize("args, message", [
    (["--shape", "10,-1"], "--shape"),
    (["--shape", "10,x"], "--shape"),
    (["--shape", "10,10", "--chunks", "0,5"], "--chunks"),
    (["--shape", "10,10", "--dtype", "float16"], "unknown dtype"),
    (["--shape", "10,10", "--codec", "snappy"], "snappy"),
    (["--shape", "10,10", "--dims", "a,b,c"], "--dims"),
])
def test_sample_bad_options_are_clear_errors(tessera_bin, tmp_path, args, message):
    result = run(tessera_bin, "sample", tmp_path / "bad.zarr", *args)
    assert result.returncode == 1, result.stdout
    assert message in result.stderr
    assert "Traceback" not in result.stderr and "terminate" not in result.stderr
