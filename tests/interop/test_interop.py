"""Zarr v2 interop between Tessera and zarr-python / xarray, proven both ways.

zarr-python writes, Tessera reads (zarr_tool dump): the bytes must equal numpy's.
Tessera writes (zarr_tool write), zarr-python reads: the bytes must equal numpy's, the
.zarray must say what zarr-python itself would write, every chunk must decode to the
bytes zarr-python stores for the same data (edge padding and order F included), and
the stored chunks must be exactly the blocks written.

The matrix: every dtype x every codec configuration (220 arrays of 23 x 17 in 5 x 4
chunks, so with partial edge chunks, and with three chunks never written), plus layout
cases ('/' separators, order F, big-endian, NaN / null / infinite fill values, 0-d, 1-d,
3-d and empty arrays, filters before the compressor). The matrix runs as one test per
codec, all 11 dtypes through one zarr_tool process (zarr_tool batch), which keeps the
suite fast under ASan too; a failure names every array that failed.

The values are a formula of the C-order flat index, computed by numpy here and by
zarr_tool (tests/interop/zarr_tool.cpp) in C++; both must agree bit for bit.
"""
import itertools
import json
import os
import subprocess
from dataclasses import dataclass

import numcodecs
import numpy as np
import pytest
import xarray as xr
import zarr

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float32", "float64"]

BLOSC_CNAMES = ["lz4", "lz4hc", "zstd", "blosclz", "zlib"]
BLOSC_SHUFFLES = {"noshuffle": numcodecs.Blosc.NOSHUFFLE, "shuffle": numcodecs.Blosc.SHUFFLE,
                  "bitshuffle": numcodecs.Blosc.BITSHUFFLE}

# name -> (zarr_tool --codec spec, the numcodecs compressor zarr-python uses, or None)
CODECS = {"none": ("none", None)}
for _cname in BLOSC_CNAMES:
    for _shuffle_name, _shuffle in BLOSC_SHUFFLES.items():
        CODECS[f"blosc-{_cname}-{_shuffle_name}"] = (
            f"blosc:{_cname}:5:{_shuffle_name}",
            numcodecs.Blosc(cname=_cname, clevel=5, shuffle=_shuffle))
CODECS["zstd"] = ("zstd:3", numcodecs.Zstd(level=3))
CODECS["lz4"] = ("lz4", numcodecs.LZ4(acceleration=1))
CODECS["zlib"] = ("zlib:6", numcodecs.Zlib(level=6))
CODECS["gzip"] = ("gzip:5", numcodecs.GZip(level=5))

DEFAULT = "default"


@dataclass(frozen=True)
class Case:
    dtype: str
    codec: str = "none"
    shape: tuple = (23, 17)  # 5 x 5 blocks of (5, 4): the last row and column are partial
    chunks: tuple = (5, 4)
    order: str = "C"
    byteorder: str = "<"
    separator: str = "."
    fill: object = DEFAULT  # DEFAULT: NaN for floats, -3 signed, 7 unsigned, True for bool
    missing: str = "some"  # which blocks are never written: "some", "none" or "all"
    filters: tuple = ()  # CODECS names applied, in order, before the compressor

    @property
    def id(self):
        parts = [self.dtype, self.codec, "x".join(map(str, self.shape)) or "0d"]
        if self.chunks != (5, 4):
            parts.append("c" + "x".join(map(str, self.chunks)))
        if self.order != "C":
            parts.append("order" + self.order)
        if self.byteorder != "<":
            parts.append("bigendian")
        if self.separator != ".":
            parts.append("slash")
        if self.fill is not DEFAULT:
            parts.append(f"fill{self.fill}")
        if self.missing != "some":
            parts.append(f"missing-{self.missing}")
        if self.filters:
            parts.append("filters-" + "+".join(self.filters))
        return "-".join(parts)

    @property
    def fill_value(self):
        if self.fill is not DEFAULT:
            return self.fill
        kind = np.dtype(self.dtype).kind
        return {"f": float("nan"), "i": -3, "u": 7, "b": True}[kind]

    @property
    def numpy_dtype(self):
        dtype = np.dtype(self.dtype)
        return dtype.newbyteorder(self.byteorder) if dtype.itemsize > 1 else dtype

    @property
    def numcodecs_filters(self):
        return [CODECS[name][1] for name in self.filters]

    @property
    def grid(self):
        return tuple(-(-extent // chunk) for extent, chunk in zip(self.shape, self.chunks))

    @property
    def num_blocks(self):
        return int(np.prod(self.grid, dtype=np.int64))

    @property
    def skipped(self):
        """Linear (C-order) indices of the blocks that are never written."""
        if self.missing == "none":
            return ()
        if self.missing == "all":
            return tuple(range(self.num_blocks))
        # an interior block, the first edge block of the last column, the corner block
        return tuple(sorted({block for block in (1, 7, self.num_blocks - 1)
                             if 0 <= block < self.num_blocks}))

    def blocks(self):
        """(linear index, region as a tuple of slices) of every block, C order."""
        for linear in range(self.num_blocks):
            index = np.unravel_index(linear, self.grid) if self.grid else ()
            yield linear, tuple(slice(int(b) * c, min((int(b) + 1) * c, n))
                                for b, c, n in zip(index, self.chunks, self.shape))


def formula(dtype, shape):
    """The values zarr_tool writes: a function of the C-order flat index."""
    count = int(np.prod(shape, dtype=np.int64))
    flat = np.arange(count, dtype=np.int64)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        values = flat % 3 == 0
    elif dtype.kind == "f":
        values = (np.fmod(flat.astype(np.float64) * 0.37, 101.0) - 50.5).astype(dtype)
    else:
        values = (flat * 7919 - 12345).astype(dtype)  # wraps, as C++'s conversion does
    return values.reshape(shape)


def expected_values(case):
    data = formula(case.dtype, case.shape)
    fill = 0 if case.fill_value is None else case.fill_value
    for linear, region in case.blocks():
        if linear in case.skipped:
            data[region] = fill
    return data


def read_with_zarr(array, case):
    """array[...], with missing blocks zeroed when the fill value is null: zarr-python
    leaves them uninitialized then, where Tessera reads zeros."""
    data = array[...]
    if case.fill_value is None:
        for linear, region in case.blocks():
            if linear in case.skipped:
                data[region] = 0
    return data


def fill_text(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if np.isnan(value):
            return "NaN"
        if np.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
    return repr(value)


def native_bytes(array):
    """C-order bytes in native byte order, the layout zarr_tool dump writes."""
    array = np.asarray(array)
    return np.ascontiguousarray(array.astype(array.dtype.newbyteorder("="))).tobytes()


def run(args):
    result = subprocess.run([str(arg) for arg in args], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, (
        f"{' '.join(map(str, args))} exited {result.returncode}\n"
        f"stdout: {result.stdout}\nstderr: {result.stderr}")
    return result.stdout


def write_with_zarr(path, case):
    array = zarr.open_array(
        str(path), mode="w", zarr_format=2, shape=case.shape, chunks=case.chunks, dtype=case.numpy_dtype,
        compressor=CODECS[case.codec][1], filters=case.numcodecs_filters or None,
        fill_value=case.fill_value, order=case.order,
        dimension_separator=case.separator, write_empty_chunks=True)
    data = formula(case.dtype, case.shape)
    for linear, region in case.blocks():
        if linear not in case.skipped:
            array[region] = data[region]
    return array


def write_options(case):
    """zarr_tool write's options for the case, by long name without the dashes."""
    return {"dtype": case.dtype, "shape": ",".join(map(str, case.shape)),
            "chunks": ",".join(map(str, case.chunks)), "codec": CODECS[case.codec][0],
            "filters": ",".join(CODECS[name][0] for name in case.filters),
            "order": case.order, "byteorder": case.byteorder, "separator": case.separator,
            "fill": fill_text(case.fill_value),
            "skip-blocks": ",".join(map(str, case.skipped))}


def write_with_tessera(zarr_tool, path, case, *extra):
    args = [zarr_tool, "write", path]
    for name, value in write_options(case).items():
        args += [f"--{name}", value]
    return json.loads(run([*args, *extra]))["chunks_written"]


def load_dump(out, meta):
    return np.fromfile(out, dtype=np.dtype(meta["dtype"])).reshape(meta["shape"])


def dump_with_tessera(zarr_tool, store, out, array_path=""):
    extra = ["--path", array_path] if array_path else []
    meta = json.loads(run([zarr_tool, "dump", store, out, *extra]))
    return load_dump(out, meta), meta


def run_batch(zarr_tool, jobs):
    """zarr_tool batch: every job in one process. One result per job, in order: what
    write or dump prints, or {"error": ...}."""
    result = subprocess.run([zarr_tool, "batch"], input=json.dumps(jobs), capture_output=True,
                            text=True, timeout=300)
    results = [json.loads(line) for line in result.stdout.splitlines()]
    assert result.returncode in (0, 1) and len(results) == len(jobs), (
        f"zarr_tool batch exited {result.returncode} after {len(results)} of {len(jobs)} "
        f"jobs\nstderr: {result.stderr}")
    assert result.returncode == int(any("error" in item for item in results))
    return results


def write_job(store, case):
    return {"command": "write", "store": str(store), **write_options(case)}


def dump_job(store, out):
    return {"command": "dump", "store": str(store), "out": str(out)}


def check_each(batch, check):
    """check(index, case) for every case of the batch; then fails naming every case
    that failed and why, so one bad dtype does not hide another."""
    failures = []
    for index, case in enumerate(batch):
        try:
            check(index, case)
        except Exception as error:  # noqa: BLE001 - reported below, with the case
            failures.append(f"{case.id}: {type(error).__name__}: {error}")
    if failures:
        pytest.fail(f"{len(failures)} of {len(batch)} failed:\n" + "\n\n".join(failures),
                    pytrace=False)


def chunk_files(path):
    """Stored chunk keys of the array at `path` ('/'-joined, metadata excluded)."""
    keys = set()
    for directory, _, files in os.walk(path):
        for name in files:
            if not name.startswith("."):
                keys.add(os.path.relpath(os.path.join(directory, name), path).replace(os.sep, "/"))
    return keys


# Every dtype x every codec, on the default 23 x 17 array (partial edge chunks, three
# chunks missing).
MATRIX = [Case(dtype, codec) for codec in CODECS for dtype in DTYPES]


LAYOUT_CASES = [
    Case("float32", "blosc-zstd-bitshuffle", separator="/"),
    Case("uint16", "none", separator="/"),
    Case("bool", "zlib", separator="/"),
    Case("float64", "blosc-lz4-shuffle", order="F"),
    Case("int32", "none", order="F"),
    Case("uint8", "gzip", order="F"),
    Case("bool", "none", order="F"),
    Case("float64", "none", byteorder=">"),
    Case("float32", "zstd", byteorder=">"),
    Case("int64", "blosc-lz4-bitshuffle", byteorder=">"),
    Case("uint32", "lz4", byteorder=">"),
    Case("int16", "zlib", byteorder=">"),
    Case("uint64", "blosc-blosclz-shuffle", byteorder=">"),
    Case("float64", "blosc-zstd-shuffle", order="F", byteorder=">", separator="/"),
    Case("int32", "none", order="F", byteorder=">", separator="/"),
    Case("float64", "lz4", shape=(101,), chunks=(10,)),
    Case("int8", "none", shape=(101,), chunks=(10,), separator="/"),
    Case("float32", "blosc-lz4hc-bitshuffle", shape=(7, 6, 5), chunks=(3, 4, 2)),
    Case("uint16", "none", shape=(7, 6, 5), chunks=(3, 4, 2), order="F", byteorder=">"),
    Case("float64", "none", shape=(), chunks=(), missing="none"),
    Case("int32", "zstd", shape=(), chunks=()),
    Case("float64", "blosc-lz4-shuffle", shape=(0, 5), chunks=(2, 2)),
    Case("float64", "zlib", shape=(3, 4), chunks=(10, 10)),
    Case("int16", "none", shape=(3, 4), chunks=(10, 10), order="F"),
    Case("float64", "none", fill=None),
    Case("int32", "blosc-zstd-shuffle", fill=None),
    Case("float32", "none", fill=float("inf")),
    Case("float64", "gzip", fill=float("-inf")),
    Case("float64", "blosc-lz4-shuffle", fill=0.0),
    Case("uint64", "none", fill=2**64 - 1),
    Case("int64", "none", fill=-2**63),
    Case("bool", "none", fill=False),
    Case("float64", "blosc-lz4-shuffle", missing="none"),
    Case("uint8", "none", missing="none"),
    Case("float64", "zstd", missing="all"),
    Case("int8", "none", missing="all"),
    # Filters that are codecs, then a compressor (or several filters): each stage's
    # decoded size is known only by its bound.
    Case("float64", "blosc-lz4-shuffle", filters=("zlib",)),
    Case("int32", "zstd", filters=("lz4",)),
    Case("uint16", "none", filters=("gzip", "lz4")),
    Case("float32", "gzip", filters=("zstd",), order="F"),
    Case("int64", "zlib", filters=("blosc-zstd-bitshuffle",), byteorder=">"),
    Case("uint8", "lz4", filters=("zlib", "zlib"), separator="/"),
    Case("float64", "blosc-zstd-shuffle", filters=("lz4", "gzip"), shape=(7, 6, 5),
         chunks=(3, 4, 2)),
]

CASES = MATRIX + LAYOUT_CASES

# What each test runs: one batch per codec for the matrix (its 11 dtypes in one zarr_tool
# process), one batch per layout case.
BATCHES = ([pytest.param([case for case in MATRIX if case.codec == codec], id=f"matrix-{codec}")
            for codec in CODECS]
           + [pytest.param([case], id=case.id) for case in LAYOUT_CASES])


def test_cases_cover_every_dtype_and_codec():
    assert len(MATRIX) == len(DTYPES) * len(CODECS) == 220
    assert {(case.dtype, case.codec) for case in MATRIX} == set(itertools.product(DTYPES, CODECS))
    for case in MATRIX:
        # partial edge chunks in every dimension, and chunks never written
        assert all(extent % chunk for extent, chunk in zip(case.shape, case.chunks)), case.id
        assert case.skipped and len(case.skipped) < case.num_blocks, case.id
    assert len({case.id for case in CASES}) == len(CASES)
    assert sorted(case.id for batch in BATCHES for case in batch.values[0]) == sorted(
        case.id for case in CASES)


def case_dir(tmp_path, case):
    return tmp_path / case.id


@pytest.mark.parametrize("batch", BATCHES)
def test_tessera_reads_zarr_python(zarr_tool, tmp_path, batch):
    written = [write_with_zarr(case_dir(tmp_path, case) / "a.zarr", case) for case in batch]
    results = run_batch(zarr_tool, [
        dump_job(case_dir(tmp_path, case) / "a.zarr", case_dir(tmp_path, case) / "dump.bin")
        for case in batch])

    def check(index, case):
        meta = results[index]
        assert "error" not in meta, meta.get("error")
        data = load_dump(case_dir(tmp_path, case) / "dump.bin", meta)
        assert meta["dtype"] == case.dtype
        assert tuple(meta["shape"]) == case.shape
        assert native_bytes(data) == native_bytes(read_with_zarr(written[index], case))
        assert native_bytes(data) == native_bytes(expected_values(case))

    check_each(batch, check)


@pytest.mark.parametrize("batch", BATCHES)
def test_zarr_python_reads_tessera(zarr_tool, tmp_path, batch):
    results = run_batch(zarr_tool, [write_job(case_dir(tmp_path, case) / "a.zarr", case)
                                    for case in batch])

    def check(index, case):
        assert "error" not in results[index], results[index].get("error")
        check_zarr_python_reads(case_dir(tmp_path, case) / "a.zarr", case,
                                results[index]["chunks_written"])

    check_each(batch, check)


def check_zarr_python_reads(store, case, chunks_written):
    array = zarr.open_array(str(store), mode="r")
    assert array.shape == case.shape
    assert array.chunks == case.chunks
    assert array.dtype == case.numpy_dtype
    assert array.order == case.order
    assert array.compressor == CODECS[case.codec][1]
    assert list(array.filters or []) == case.numcodecs_filters
    if case.fill_value is None:
        assert array.fill_value is None
    elif isinstance(case.fill_value, float) and np.isnan(case.fill_value):
        assert np.isnan(array.fill_value)
    else:
        assert array.fill_value == case.fill_value
    assert native_bytes(read_with_zarr(array, case)) == native_bytes(expected_values(case))

    assert chunks_written == case.num_blocks - len(case.skipped)
    if case.separator == "." and case.shape:
        # zarr 2.13 counts only top-level keys, so '/' separators and 0-d arrays are
        # counted from the files below instead.
        assert array.nchunks_initialized == chunks_written
    assert len(chunk_files(store)) == chunks_written


@pytest.mark.parametrize("batch", BATCHES)
def test_tessera_chunks_match_zarr_python(zarr_tool, tmp_path, batch):
    """Same data, same metadata: the .zarray documents are equal and every chunk
    decodes to the same bytes (edge padding with the fill value, order F, byte order)."""
    results = run_batch(zarr_tool, [write_job(case_dir(tmp_path, case) / "tessera.zarr", case)
                                    for case in batch])

    def check(index, case):
        assert "error" not in results[index], results[index].get("error")
        theirs = case_dir(tmp_path, case) / "zarr.zarr"
        write_with_zarr(theirs, case)
        check_chunks_match(case_dir(tmp_path, case) / "tessera.zarr", theirs, case)

    check_each(batch, check)


def without_default_zstd_checksum(metadata):
    """`metadata` with numcodecs' default "checksum": false left out of its zstd configs:
    numcodecs 0.13 and later write the key, Tessera (like earlier numcodecs) leaves the
    default unsaid; both read the same."""
    def clean(config):
        if isinstance(config, dict) and config.get("id") == "zstd" and config.get("checksum") is False:
            return {key: value for key, value in config.items() if key != "checksum"}
        return config
    cleaned = dict(metadata)
    cleaned["compressor"] = clean(metadata.get("compressor"))
    if metadata.get("filters"):
        cleaned["filters"] = [clean(f) for f in metadata["filters"]]
    return cleaned


def check_chunks_match(ours, theirs, case):
    with open(ours / ".zarray") as file:
        our_metadata = json.load(file)
    with open(theirs / ".zarray") as file:
        their_metadata = json.load(file)
    our_codec = their_codec = CODECS[case.codec][1]
    assert our_metadata == without_default_zstd_checksum(their_metadata)

    def decoded(compressor, path):
        """The chunk's bytes through the whole pipeline: compressor, then filters last
        to first."""
        data = path.read_bytes()
        for codec in [compressor, *reversed(case.numcodecs_filters)]:
            if codec is not None:
                data = bytes(codec.decode(data))
        return data

    assert chunk_files(ours) == chunk_files(theirs)
    for key in sorted(chunk_files(ours)):
        assert decoded(our_codec, ours / key) == decoded(their_codec, theirs / key), key


def test_xarray_opens_tessera_group(zarr_tool, tmp_path):
    """A group written by Tessera, with a data variable and two coordinate arrays,
    opens in xarray with its dimension names, coordinates and values."""
    store = tmp_path / "dataset.zarr"
    temp = Case("float64", "blosc-lz4-shuffle")
    write_with_tessera(zarr_tool, store, temp, "--group", "--path", "temp", "--dims", "y,x")
    y = Case("float64", "none", shape=(23,), chunks=(23,), missing="none")
    x = Case("float64", "zstd", shape=(17,), chunks=(17,), missing="none")
    write_with_tessera(zarr_tool, store, y, "--path", "y", "--dims", "y")
    write_with_tessera(zarr_tool, store, x, "--path", "x", "--dims", "x")

    opened = [xr.open_zarr(str(store), consolidated=False),
              xr.open_dataset(str(store), engine="zarr", consolidated=False)]
    for dataset in opened:
        with dataset:
            assert dataset["temp"].dims == ("y", "x")
            assert dict(dataset.sizes) == {"y": 23, "x": 17}
            assert set(dataset.coords) == {"x", "y"}
            np.testing.assert_array_equal(dataset["x"].values, formula("float64", (17,)))
            np.testing.assert_array_equal(dataset["y"].values, formula("float64", (23,)))
            # NaN fill: missing blocks are NaN in xarray as in zarr
            np.testing.assert_array_equal(dataset["temp"].values, expected_values(temp))


def test_xarray_reads_integer_variable_exactly(zarr_tool, tmp_path):
    store = tmp_path / "dataset.zarr"
    counts = Case("int32", "zstd", missing="none")
    write_with_tessera(zarr_tool, store, counts, "--group", "--path", "counts",
                       "--dims", "row,col")
    with xr.open_zarr(str(store), consolidated=False, mask_and_scale=False) as dataset:
        variable = dataset["counts"]
        assert variable.dims == ("row", "col")
        assert variable.dtype == np.int32
        np.testing.assert_array_equal(variable.values, formula("int32", (23, 17)))


def test_tessera_reads_xarray_dataset(zarr_tool, tmp_path):
    """xarray writes a dataset; Tessera reads its variable and dimension names."""
    store = tmp_path / "from_xarray.zarr"
    values = formula("float32", (12, 10))
    dataset = xr.Dataset({"t2m": (("lat", "lon"), values)},
                         coords={"lat": np.arange(12.0), "lon": np.arange(10.0)})
    dataset.to_zarr(str(store), consolidated=False, mode="w", zarr_format=2,
                    encoding={"t2m": {"chunks": (5, 4), "compressors": (numcodecs.Zstd(level=1),)}})

    data, meta = dump_with_tessera(zarr_tool, store, tmp_path / "t2m.bin", "t2m")
    assert meta["dimension_names"] == ["lat", "lon"]
    assert native_bytes(data) == native_bytes(values)
    lat, meta = dump_with_tessera(zarr_tool, store, tmp_path / "lat.bin", "lat")
    assert meta["dimension_names"] == ["lat"]
    np.testing.assert_array_equal(lat, np.arange(12.0))


def test_dump_reports_missing_array(zarr_tool, tmp_path):
    result = subprocess.run([zarr_tool, "dump", str(tmp_path / "absent.zarr"),
                             str(tmp_path / "out.bin")], capture_output=True, text=True)
    assert result.returncode == 1
    assert "absent.zarr" in result.stderr
