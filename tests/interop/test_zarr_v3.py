"""Zarr v3 (and sharding) interop between Tessera and zarr-python 3, TensorStore and
zarrs-python, proven both ways on random cases.

  (a) zarr-python writes (plain and sharded, every dtype, random codec chains, fill values
      and chunk key encodings; also through zarrs-python's codec pipeline): Tessera reads
      numpy's values, and so does TensorStore.
  (b) TensorStore writes (driver zarr3, with and without sharding_indexed, index at the
      start or the end): Tessera and zarr-python read numpy's values.
  (c) Tessera writes (tessera.to_zarr(..., zarr_format=3, shards=, compressor=, checksum=)):
      zarr-python, TensorStore and zarrs-python read its values; its zarr.json says what
      zarr-python's says for the same array; with deterministic codecs (bytes, crc32c; a
      sharded array's inner chunks [bytes] and index [bytes, crc32c]) its chunk and shard
      files are byte for byte zarr-python's, under the same keys. zarr-python lays a
      shard's inner chunks out in its compressed Morton order (dimension 0 varying
      fastest) and leaves out inner chunks equal to the fill value (index entry
      2^64-1, 2^64-1), the edge shard's chunks beyond the array included.
  (d) A partial read: one inner chunk's region of a 16 x 16-inner-chunk shard.
  Also the checked-in fixtures (src/storage/zarr/testdata/v3, fixtures.json), and the
  CLI: `tessera info --json` of a sharded array, `tessera rechunk` into v2, v3 and
  sharded v3.

The cases are random, from TESSERA_TEST_SEED (a new seed every run unless set); every
failure message names the seed, and TESSERA_TEST_SEED=<seed> replays the same cases.

The Tessera side is the Python module (`import tessera`, PYTHONPATH=<build>/python). Where
it cannot be imported its tests skip, unless TESSERA_PYTHON_MODULE names the folder it
must be imported from (the build sets it where the module is built; sanitized builds
build none). TensorStore's and zarrs-python's tests skip where they are not installed.
"""
import contextlib
import importlib
import json
import os
import sys
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
import zarr
from tessera_run import run_ok

SEED = int(os.environ.get("TESSERA_TEST_SEED", np.random.SeedSequence().entropy % 2**32))
REPLAY = f"[replay: TESSERA_TEST_SEED={SEED}]"
FIXTURES = Path(__file__).resolve().parents[2] / "src/storage/zarr/testdata/v3"

# zarr-python warns that sharding with codecs around it disables partial reads, and
# that consolidated metadata is not in the v3 spec: both as meant here.
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

DTYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64", "complex64", "complex128"]
TESSERA_WRITE_DTYPES = [d for d in DTYPES if d != "float16"]  # Tessera holds float16 as float32
EMPTY = 2**64 - 1


# --- the modules ----------------------------------------------------------------------

@pytest.fixture(scope="session")
def tessera():
    folder = os.environ.get("TESSERA_PYTHON_MODULE")
    if folder and folder not in sys.path:
        sys.path.insert(0, folder)
    try:
        return importlib.import_module("tessera")
    except ImportError as error:
        if folder:
            pytest.fail(f"TESSERA_PYTHON_MODULE={folder}, but tessera does not import: {error}")
        pytest.skip(f"the tessera Python module is not importable ({error}); "
                    "set PYTHONPATH=<build>/python")


@pytest.fixture
def spec(tessera, tmp_path):
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return tessera.Spec(work_dir=str(work), allowed_mem="200MB", max_workers=2)


@pytest.fixture(scope="session")
def tensorstore():
    return pytest.importorskip("tensorstore")


@pytest.fixture(scope="session")
def zarrs():
    return pytest.importorskip("zarrs")


# --- values ---------------------------------------------------------------------------

def read_dtype(dtype):
    """The dtype Tessera reads `dtype` as: float16 is held as float32."""
    return np.dtype("float32") if np.dtype(dtype) == np.float16 else np.dtype(dtype)


def assert_same(actual, expected, what):
    """Equal shape, dtype and values (NaN equal to NaN), or fails naming `what` and the
    seed."""
    actual = np.asarray(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} {REPLAY}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype} {REPLAY}"
    equal_nan = expected.dtype.kind in "fc"
    if not np.array_equal(actual, expected, equal_nan=equal_nan):
        wrong = np.argwhere(~((actual == expected) | (equal_nan & (actual != actual)
                                                      & (expected != expected))))
        first = tuple(wrong[0]) if wrong.size else ()
        pytest.fail(f"{what}: {len(wrong)} values differ, first at {first}: "
                    f"{actual[first]!r} != {expected[first]!r} {REPLAY}", pytrace=False)


def random_values(rng, dtype, shape):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.asarray(rng.integers(info.min, info.max, size=shape, dtype=dtype,
                                       endpoint=True))
    if dtype.kind == "f":
        values = np.asarray(rng.standard_normal(shape) * 100, dtype=dtype)
    else:
        parts = rng.standard_normal((2, *shape)) * 100
        values = np.asarray(parts[0] + 1j * parts[1], dtype=dtype)
    flat = values.reshape(-1)
    if flat.size > 3:  # a few special values
        flat[rng.integers(flat.size)] = np.nan
        flat[rng.integers(flat.size)] = -np.inf
    return values


def random_fill(rng, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.bool_(rng.random() < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        choice = rng.integers(4)
        value = [0, int(info.min), int(info.max),
                 int(rng.integers(info.min, info.max, endpoint=True, dtype=dtype))][choice]
        return dtype.type(value)
    part = np.dtype(f"f{dtype.itemsize // 2}") if dtype.kind == "c" else dtype

    def one():
        return part.type([np.nan, np.inf, -np.inf, 0.0, rng.standard_normal() * 10,
                          -1.5][rng.integers(6)])
    if dtype.kind == "c":
        return dtype.type(complex(one(), one()))
    return one()


def fill_json(value):
    """A fill value as Zarr v3's JSON says it (numbers; "NaN", "Infinity", "-Infinity";
    [re, im] for complex)."""
    value = np.asarray(value)[()]
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.complexfloating):
        return [fill_json(value.real), fill_json(value.imag)]
    number = float(value)
    if np.isnan(number):
        return "NaN"
    if np.isinf(number):
        return "Infinity" if number > 0 else "-Infinity"
    return number


def fill_bits(value, dtype):
    return np.asarray(value, dtype=np.dtype(dtype)).tobytes()


def grid_of(shape, block):
    return tuple(-(-n // b) for n, b in zip(shape, block))


def block_regions(shape, block):
    """Every block's region (a tuple of slices), C order."""
    grid = grid_of(shape, block)
    for linear in range(int(np.prod(grid, dtype=np.int64))):
        index = np.unravel_index(linear, grid) if grid else ()
        yield tuple(slice(int(i) * b, min((int(i) + 1) * b, n))
                    for i, b, n in zip(index, block, shape))


# --- codec chains ---------------------------------------------------------------------

BLOSC_CNAMES = ["lz4", "lz4hc", "blosclz", "zstd", "zlib"]
BLOSC_SHUFFLES = ["noshuffle", "shuffle", "bitshuffle"]


def bytes_codec(dtype, endian="little"):
    if np.dtype(dtype).itemsize == 1 or np.dtype(dtype).kind == "b":
        return {"name": "bytes"}  # no endianness for one-byte types, as zarr-python writes
    return {"name": "bytes", "configuration": {"endian": endian}}


def random_array_to_bytes_chain(rng, dtype, ndim):
    """[transpose?] bytes [compressor?] [crc32c?] as v3 codec JSON."""
    chain = []
    if ndim > 1 and rng.random() < 0.3:
        chain.append({"name": "transpose",
                      "configuration": {"order": [int(i) for i in rng.permutation(ndim)]}})
    chain.append(bytes_codec(dtype, "big" if rng.random() < 0.25 else "little"))
    kind = rng.integers(5)
    if kind == 1:
        chain.append({"name": "blosc", "configuration": {
            "typesize": np.dtype(dtype).itemsize,
            "cname": BLOSC_CNAMES[rng.integers(len(BLOSC_CNAMES))],
            "clevel": int(rng.integers(1, 10)),
            "shuffle": BLOSC_SHUFFLES[rng.integers(3)], "blocksize": 0}})
    elif kind == 2:
        chain.append({"name": "zstd", "configuration": {"level": int(rng.integers(0, 10)),
                                                        "checksum": bool(rng.random() < 0.5)}})
    elif kind == 3:
        chain.append({"name": "gzip", "configuration": {"level": int(rng.integers(0, 10))}})
    if rng.random() < 0.3:
        chain.append({"name": "crc32c"})
    return chain


def sharding_codec(inner, codecs, index_codecs, index_location):
    return {"name": "sharding_indexed", "configuration": {
        "chunk_shape": list(inner), "codecs": codecs, "index_codecs": index_codecs,
        "index_location": index_location}}


def random_index_codecs(rng):
    codecs = [{"name": "bytes",
               "configuration": {"endian": "big" if rng.random() < 0.2 else "little"}}]
    if rng.random() < 0.6:
        codecs.append({"name": "crc32c"})
    return codecs


def codec_summary(codecs):
    names = []
    for codec in codecs:
        if codec["name"] == "sharding_indexed":
            config = codec["configuration"]
            names.append("shard[" + codec_summary(config["codecs"]) + "|index-"
                         + config["index_location"]
                         + ("-crc" if len(config["index_codecs"]) > 1 else "") + "]")
        elif codec["name"] == "bytes":
            names.append("be" if codec.get("configuration", {}).get("endian") == "big" else "le")
        elif codec["name"] == "blosc":
            config = codec["configuration"]
            names.append(f"blosc-{config['cname']}-{config['shuffle']}")
        else:
            names.append(codec["name"])
    return "+".join(names)


def split_chain(codecs):
    """(filters, serializer, compressors) of a v3 codec chain, as zarr-python takes it."""
    position = next(i for i, c in enumerate(codecs) if c["name"] in ("bytes", "sharding_indexed"))
    return codecs[:position], codecs[position], codecs[position + 1:]


# --- cases ----------------------------------------------------------------------------

@dataclass
class Case:
    tag: str
    index: int
    dtype: str
    shape: tuple
    inner: tuple
    shards: tuple | None
    fill: object
    codecs: list
    key_encoding: dict = field(default_factory=lambda: {"name": "default",
                                                        "configuration": {"separator": "/"}})
    blank: float = 0.2  # the share of inner chunks (and shards) left equal to the fill value

    @property
    def id(self):
        shape = "x".join(map(str, self.shape)) or "0d"
        sharded = f"-s{'x'.join(map(str, self.shards))}" if self.shards else ""
        return f"{self.index}-{self.dtype}-{shape}{sharded}-{codec_summary(self.codecs)}"

    @property
    def chunk_grid(self):
        return {"name": "regular", "configuration": {
            "chunk_shape": list(self.shards or self.inner)}}

    def values(self):
        """The case's values: random, some inner chunks (and whole shards) set to the fill
        value so they are not stored; the same for the same seed."""
        rng = np.random.default_rng([SEED, zlib.crc32(self.tag.encode()), self.index, 1])
        values = random_values(rng, self.dtype, self.shape)
        for region in block_regions(self.shape, self.inner):
            if rng.random() < self.blank:
                values[region] = self.fill
        if self.shards:
            for region in block_regions(self.shape, self.shards):
                if rng.random() < self.blank:
                    values[region] = self.fill
        return values

    def metadata(self):
        """The zarr.json of the case (what TensorStore is told to create)."""
        return {"zarr_format": 3, "node_type": "array", "shape": list(self.shape),
                "data_type": self.dtype, "chunk_grid": self.chunk_grid,
                "chunk_key_encoding": self.key_encoding, "fill_value": fill_json(self.fill),
                "codecs": self.codecs}


KEY_ENCODINGS = [{"name": "default", "configuration": {"separator": "/"}},
                 {"name": "default", "configuration": {"separator": "."}},
                 {"name": "v2", "configuration": {"separator": "."}},
                 {"name": "v2", "configuration": {"separator": "/"}}]


def random_layout(rng, sharded, max_ndim=3):
    """(shape, inner chunks, shard shape or None): 0 to 3 dimensions (0 only unsharded),
    extents to 20, inner chunks up to the extent (sometimes past it), shards 1 to 3
    inner chunks per dimension, so with partial edge shards."""
    ndim = int(rng.integers(1 if sharded else 0, max_ndim + 1))
    shape = tuple(int(rng.integers(1, 21 if ndim < 3 else 9)) for _ in range(ndim))
    inner = tuple(int(rng.integers(1, n + 2)) for n in shape)
    shards = tuple(c * int(rng.integers(1, 4)) for c in inner) if sharded else None
    return shape, inner, shards


def random_case(tag, index, dtypes=DTYPES, sharded=None, index_location=None):
    rng = np.random.default_rng([SEED, zlib.crc32(tag.encode()), index])
    dtype = dtypes[index % len(dtypes)] if index < len(dtypes) else dtypes[rng.integers(len(dtypes))]
    sharded = bool(rng.random() < 0.5) if sharded is None else sharded
    shape, inner, shards = random_layout(rng, sharded)
    chain = random_array_to_bytes_chain(rng, dtype, len(shape))
    if sharded:
        location = index_location or ("start" if rng.random() < 0.5 else "end")
        chain = [sharding_codec(inner, chain, random_index_codecs(rng), location)]
    return Case(tag, index, dtype, shape, inner, shards, random_fill(rng, dtype), chain,
                KEY_ENCODINGS[rng.integers(len(KEY_ENCODINGS))])


def cases(tag, count, **options):
    made = [random_case(tag, index, **options) for index in range(count)]
    return [pytest.param(case, id=case.id) for case in made]


# (a) 28 zarr-python cases: every dtype twice, about half sharded.
ZARR_PYTHON_CASES = cases("zarr-python", 28)
ZARRS_CASES = cases("zarrs", 8)
# (b) TensorStore: plain, sharded with the index at the end, at the start.
TENSORSTORE_CASES = [pytest.param(*p.values, id=f"{kind}-{p.id}") for kind, params in [
    ("plain", cases("tensorstore-plain", 6, sharded=False)),
    ("end", cases("tensorstore-end", 6, sharded=True, index_location="end")),
    ("start", cases("tensorstore-start", 6, sharded=True, index_location="start"))]
    for p in params]


# --- writers and readers --------------------------------------------------------------

@contextlib.contextmanager
def codec_pipeline(pipeline):
    """zarr-python's default codec pipeline, or zarrs-python's ("zarrs")."""
    if pipeline == "zarrs":
        with zarr.config.set({"codec_pipeline.path": "zarrs.ZarrsCodecPipeline"}):
            yield
    else:
        yield


def write_with_zarr_python(path, case, values=None, pipeline=None):
    filters, serializer, compressors = split_chain(case.codecs)
    with codec_pipeline(pipeline):
        array = zarr.create_array(
            str(path), shape=case.shape, dtype=case.dtype, chunks=tuple(case.shards or case.inner),
            filters=filters, serializer=serializer, compressors=compressors,
            fill_value=case.fill, chunk_key_encoding=case.key_encoding, zarr_format=3)
        array[...] = case.values() if values is None else values
    return array


def read_with_zarr_python(path, pipeline=None):
    with codec_pipeline(pipeline):
        return zarr.open_array(str(path), mode="r")[...]


def tensorstore_spec(path):
    return {"driver": "zarr3", "kvstore": {"driver": "file", "path": str(path)}}


def write_with_tensorstore(tensorstore, path, case, values):
    store = tensorstore.open({**tensorstore_spec(path), "metadata": case.metadata()},
                             create=True, delete_existing=True).result()
    store[...] = values
    return store


def read_with_tensorstore(tensorstore, path):
    return tensorstore.open(tensorstore_spec(path), read=True).result().read().result()


def read_with_tessera(tessera, spec, path, dtype):
    x = tessera.from_zarr(str(path), spec=spec)
    assert x.dtype == read_dtype(dtype), f"{path}: dtype {x.dtype} {REPLAY}"
    return np.asarray(x)


def stored_files(path):
    """{key: bytes} of every file of the array at `path` but its zarr.json."""
    files = {}
    for root, _, names in os.walk(path):
        for name in names:
            if name != "zarr.json":
                full = os.path.join(root, name)
                with open(full, "rb") as file:
                    files[os.path.relpath(full, path).replace(os.sep, "/")] = file.read()
    return files


def load_metadata(path):
    with open(os.path.join(path, "zarr.json")) as file:
        return json.load(file)


# --- (a) zarr-python writes -----------------------------------------------------------

@pytest.mark.parametrize("case", ZARR_PYTHON_CASES)
def test_tessera_reads_zarr_python(tessera, spec, tmp_path, case):
    values = case.values()
    write_with_zarr_python(tmp_path / "a.zarr", case, values)
    assert_same(read_with_tessera(tessera, spec, tmp_path / "a.zarr", case.dtype),
                values.astype(read_dtype(case.dtype)), f"Tessera reading {case.id}")


@pytest.mark.parametrize("case", ZARR_PYTHON_CASES)
def test_tensorstore_reads_zarr_python(tensorstore, tmp_path, case):
    values = case.values()
    write_with_zarr_python(tmp_path / "a.zarr", case, values)
    assert_same(read_with_tensorstore(tensorstore, tmp_path / "a.zarr"), values,
                f"TensorStore reading {case.id}")
    assert_same(read_with_zarr_python(tmp_path / "a.zarr"), values,
                f"zarr-python reading back {case.id}")


@pytest.mark.parametrize("case", ZARRS_CASES)
def test_zarr_python_and_tensorstore_read_zarrs_python(zarrs, tensorstore, tmp_path, case):
    """zarrs-python's pipeline writes the cases as zarr-python's does (the references
    agree with each other)."""
    values = case.values()
    write_with_zarr_python(tmp_path / "a.zarr", case, values, pipeline="zarrs")
    assert_same(read_with_zarr_python(tmp_path / "a.zarr"), values,
                f"zarr-python reading zarrs' {case.id}")
    assert_same(read_with_tensorstore(tensorstore, tmp_path / "a.zarr"), values,
                f"TensorStore reading zarrs' {case.id}")


@pytest.mark.parametrize("case", ZARRS_CASES)
def test_tessera_reads_zarrs_python(tessera, zarrs, spec, tmp_path, case):
    values = case.values()
    write_with_zarr_python(tmp_path / "a.zarr", case, values, pipeline="zarrs")
    assert_same(read_with_tessera(tessera, spec, tmp_path / "a.zarr", case.dtype),
                values.astype(read_dtype(case.dtype)), f"Tessera reading zarrs' {case.id}")


# --- (b) TensorStore writes -----------------------------------------------------------

@pytest.mark.parametrize("case", TENSORSTORE_CASES)
def test_zarr_python_reads_tensorstore(tensorstore, tmp_path, case):
    values = case.values()
    write_with_tensorstore(tensorstore, tmp_path / "t.zarr", case, values)
    assert_same(read_with_zarr_python(tmp_path / "t.zarr"), values,
                f"zarr-python reading TensorStore's {case.id}")


@pytest.mark.parametrize("case", TENSORSTORE_CASES)
def test_tessera_reads_tensorstore(tessera, tensorstore, spec, tmp_path, case):
    values = case.values()
    write_with_tensorstore(tensorstore, tmp_path / "t.zarr", case, values)
    assert_same(read_with_tessera(tessera, spec, tmp_path / "t.zarr", case.dtype),
                values.astype(read_dtype(case.dtype)), f"Tessera reading TensorStore's {case.id}")


# --- (c) Tessera writes ---------------------------------------------------------------

# Tessera's compressor= names and the v3 codecs zarr-python writes for them (None: the
# configuration is Tessera's to choose; only the codec's name is checked).
TESSERA_COMPRESSORS = {
    "none": [],
    "zstd:3": [{"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
    "gzip:5": [{"name": "gzip", "configuration": {"level": 5}}],
    "zstd": None,
    "gzip": None,
    "blosc-lz4": None,
}


@dataclass
class WriteCase:
    index: int
    dtype: str
    shape: tuple
    chunks: tuple
    shards: tuple | None
    compressor: str
    checksum: bool

    @property
    def id(self):
        shape = "x".join(map(str, self.shape)) or "0d"
        sharded = f"-s{'x'.join(map(str, self.shards))}" if self.shards else ""
        return (f"{self.index}-{self.dtype}-{shape}-c{'x'.join(map(str, self.chunks))}"
                f"{sharded}-{self.compressor}{'+crc32c' if self.checksum else ''}")

    @property
    def deterministic(self):
        """Codecs whose output zarr-python's must equal byte for byte: [bytes] and
        [bytes, crc32c]; sharded, inner [bytes] and index [bytes, crc32c]."""
        return self.compressor == "none" and not (self.shards and self.checksum)

    def values(self):
        """Random values in which every chunk holds a value other than 0, False and NaN,
        so that no chunk is entirely a default fill value and left out by one writer only
        (inner chunks past the array's end, in edge shards, are all fill)."""
        rng = np.random.default_rng([SEED, zlib.crc32(b"tessera-write"), self.index, 1])
        values = random_values(rng, self.dtype, self.shape)
        for region in block_regions(self.shape, self.chunks):
            first = tuple(r.start for r in region)
            values[first] = True if np.dtype(self.dtype).kind == "b" else 1
        return values

    def write(self, tessera, spec, path, values=None):
        x = tessera.asarray(self.values() if values is None else values, chunks=self.chunks,
                            spec=spec)
        options = dict(zarr_format=3, compressor=self.compressor, checksum=self.checksum)
        if self.shards:
            options["shards"] = self.shards
        tessera.to_zarr(x, str(path), **options)


def random_write_case(index, compressor=None, sharded=None, checksum=None):
    rng = np.random.default_rng([SEED, zlib.crc32(b"tessera-write"), index])
    dtypes = TESSERA_WRITE_DTYPES
    dtype = dtypes[index % len(dtypes)] if index < len(dtypes) else dtypes[rng.integers(len(dtypes))]
    sharded = bool(rng.random() < 0.5) if sharded is None else sharded
    shape, chunks, shards = random_layout(rng, sharded)
    names = list(TESSERA_COMPRESSORS)
    compressor = compressor or names[rng.integers(len(names))]
    checksum = bool(rng.random() < 0.4) if checksum is None else checksum
    return WriteCase(index, dtype, shape, chunks, shards, compressor, checksum)


def write_cases(start, count, **options):
    made = [random_write_case(start + i, **options) for i in range(count)]
    return [pytest.param(case, id=case.id) for case in made]


TESSERA_WRITE_CASES = write_cases(0, 26)
# Deterministic codecs: plain [bytes] / [bytes, crc32c], and sharded [bytes] inside.
DETERMINISTIC_CASES = (write_cases(100, 8, compressor="none", sharded=False)
                       + write_cases(200, 10, compressor="none", sharded=True, checksum=False))


def expected_codecs(case):
    """The codecs zarr-python writes for the case, or None where Tessera's choice of
    configuration is not pinned (then only the names are compared)."""
    compressors = TESSERA_COMPRESSORS[case.compressor]
    if compressors is None:
        return None
    chain = [bytes_codec(case.dtype), *compressors]
    if case.checksum:
        chain.append({"name": "crc32c"})
    if case.shards:
        return [sharding_codec(case.chunks, chain,
                               [{"name": "bytes", "configuration": {"endian": "little"}},
                                {"name": "crc32c"}], "end")]
    return chain


def normalized_codecs(codecs, dtype):
    """Codec JSON with the spec's defaults said: bytes' endianness dropped for one-byte
    types (either is valid there), a missing index_location "end", a missing zstd
    checksum false."""
    out = []
    for codec in codecs:
        codec = json.loads(json.dumps(codec))
        config = codec.get("configuration")
        if codec["name"] == "bytes" and np.dtype(dtype).itemsize == 1:
            codec.pop("configuration", None)
        elif codec["name"] == "zstd" and config is not None:
            config.setdefault("checksum", False)
        elif codec["name"] == "sharding_indexed":
            config.setdefault("index_location", "end")
            config["codecs"] = normalized_codecs(config["codecs"], dtype)
            config["index_codecs"] = normalized_codecs(config["index_codecs"], "uint64")
        if codec.get("configuration") == {}:
            codec.pop("configuration")
        out.append(codec)
    return out


def normalized_key_encoding(encoding):
    default = "/" if encoding["name"] == "default" else "."
    return {"name": encoding["name"],
            "separator": encoding.get("configuration", {}).get("separator", default)}


def zarr_python_twin(path, case, values, fill_value):
    """What zarr-python writes for the case's array: same shape, dtype, chunks, shards,
    fill value and codecs (zarr-python's own defaults for the compressor's settings)."""
    chain = expected_codecs(case)
    if chain is None:  # unpinned compressor configuration: its name only
        chain = [bytes_codec(case.dtype)]
        if case.shards:
            chain = [sharding_codec(case.chunks, chain,
                                    [{"name": "bytes", "configuration": {"endian": "little"}},
                                     {"name": "crc32c"}], "end")]
    filters, serializer, compressors = split_chain(chain)
    array = zarr.create_array(str(path), shape=case.shape, dtype=case.dtype,
                              chunks=tuple(case.shards or case.chunks), filters=filters,
                              serializer=serializer, compressors=compressors,
                              fill_value=fill_value, zarr_format=3)
    array[...] = values
    return array


@pytest.mark.parametrize("case", TESSERA_WRITE_CASES)
def test_zarr_python_reads_tessera(tessera, spec, tmp_path, case):
    values = case.values()
    case.write(tessera, spec, tmp_path / "t.zarr", values)
    array = zarr.open_array(str(tmp_path / "t.zarr"), mode="r")
    assert array.metadata.zarr_format == 3, REPLAY
    assert array.shape == case.shape and array.dtype == np.dtype(case.dtype), REPLAY
    assert array.chunks == case.chunks, f"chunks {array.chunks} {REPLAY}"
    assert array.shards == case.shards, f"shards {array.shards} {REPLAY}"
    assert_same(array[...], values, f"zarr-python reading Tessera's {case.id}")
    names = [codec["name"] for codec in load_metadata(tmp_path / "t.zarr")["codecs"]]
    if case.shards:
        assert names == ["sharding_indexed"], f"{names} {REPLAY}"
        names = [c["name"] for c in shard_configuration(tmp_path / "t.zarr")["codecs"]]
    compressor = {"none": [], "blosc-lz4": ["blosc"]}.get(case.compressor,
                                                           [case.compressor.split(":")[0]])
    assert names == ["bytes", *compressor, *(["crc32c"] if case.checksum else [])], (
        f"{names} {REPLAY}")


@pytest.mark.parametrize("case", TESSERA_WRITE_CASES)
def test_tensorstore_reads_tessera(tessera, tensorstore, spec, tmp_path, case):
    values = case.values()
    case.write(tessera, spec, tmp_path / "t.zarr", values)
    assert_same(read_with_tensorstore(tensorstore, tmp_path / "t.zarr"), values,
                f"TensorStore reading Tessera's {case.id}")


@pytest.mark.parametrize("case", TESSERA_WRITE_CASES[:8])
def test_zarrs_python_reads_tessera(tessera, zarrs, spec, tmp_path, case):
    values = case.values()
    case.write(tessera, spec, tmp_path / "t.zarr", values)
    assert_same(read_with_zarr_python(tmp_path / "t.zarr", pipeline="zarrs"), values,
                f"zarrs-python reading Tessera's {case.id}")


def shard_configuration(path):
    return load_metadata(path)["codecs"][0]["configuration"]


def check_metadata_matches(ours, theirs, case):
    """Tessera's zarr.json against zarr-python's for the same array: equal shape,
    data_type, chunk_grid, chunk_key_encoding, fill value (bit for bit, as zarr-python
    parses it) and codecs (up to the spec's defaults, normalized_codecs)."""
    mine, reference = load_metadata(ours), load_metadata(theirs)
    assert mine["zarr_format"] == 3 and mine["node_type"] == "array", f"{mine} {REPLAY}"
    for key in ("shape", "data_type", "chunk_grid"):
        assert mine[key] == reference[key], f"{key}: {mine[key]} != {reference[key]} {REPLAY}"
    assert normalized_key_encoding(mine["chunk_key_encoding"]) == normalized_key_encoding(
        reference["chunk_key_encoding"]), f"{mine['chunk_key_encoding']} {REPLAY}"
    our_fill = zarr.open_array(str(ours), mode="r").metadata.fill_value
    their_fill = zarr.open_array(str(theirs), mode="r").metadata.fill_value
    assert fill_bits(our_fill, case.dtype) == fill_bits(their_fill, case.dtype), (
        f"fill_value {mine['fill_value']!r} != {reference['fill_value']!r} {REPLAY}")
    if expected_codecs(case) is not None:
        assert normalized_codecs(mine["codecs"], case.dtype) == normalized_codecs(
            reference["codecs"], case.dtype), (
            f"codecs\n ours:   {mine['codecs']}\n theirs: {reference['codecs']} {REPLAY}")
    assert not mine.get("storage_transformers"), REPLAY


@pytest.mark.parametrize("case", TESSERA_WRITE_CASES)
def test_tessera_metadata_matches_zarr_python(tessera, spec, tmp_path, case):
    values = case.values()
    case.write(tessera, spec, tmp_path / "tessera.zarr", values)
    fill = zarr.open_array(str(tmp_path / "tessera.zarr"), mode="r").metadata.fill_value
    zarr_python_twin(tmp_path / "zarr.zarr", case, values, fill)
    check_metadata_matches(tmp_path / "tessera.zarr", tmp_path / "zarr.zarr", case)


@pytest.mark.parametrize("case", DETERMINISTIC_CASES)
def test_tessera_files_equal_zarr_python(tessera, spec, tmp_path, case):
    assert case.deterministic
    values = case.values()
    case.write(tessera, spec, tmp_path / "tessera.zarr", values)
    fill = zarr.open_array(str(tmp_path / "tessera.zarr"), mode="r").metadata.fill_value
    zarr_python_twin(tmp_path / "zarr.zarr", case, values, fill)
    check_metadata_matches(tmp_path / "tessera.zarr", tmp_path / "zarr.zarr", case)
    ours, theirs = stored_files(tmp_path / "tessera.zarr"), stored_files(tmp_path / "zarr.zarr")
    assert sorted(ours) == sorted(theirs), f"keys {sorted(ours)} != {sorted(theirs)} {REPLAY}"
    for key in sorted(theirs):
        if ours[key] != theirs[key]:
            detail = ""
            if case.shards:
                detail = (f"\n index ours:   {shard_index(ours[key], case).tolist()}"
                          f"\n index theirs: {shard_index(theirs[key], case).tolist()}")
            pytest.fail(f"{case.id}: {key} differs ({len(ours[key])} bytes, zarr-python's "
                        f"{len(theirs[key])}){detail} {REPLAY}", pytrace=False)


def shard_index(data, case):
    """The (offset, nbytes) rows of a shard's index, [bytes, crc32c] at the end."""
    count = int(np.prod(grid_of(case.shards, case.chunks)))
    return np.frombuffer(data[len(data) - 16 * count - 4:len(data) - 4], dtype="<u8").reshape(
        count, 2)


# --- (d) a partial read ---------------------------------------------------------------

def test_tessera_reads_one_inner_chunk_of_a_large_shard(tessera, spec, tmp_path):
    """One shard of 16 x 16 inner chunks (64 x 64 int32 in 4 x 4): an inner chunk's region,
    a region across inner chunks and one element read right. (That only the needed
    byte ranges are read is counted by the C++ tests.)"""
    rng = np.random.default_rng([SEED, 4])
    values = rng.integers(-2**31, 2**31, size=(64, 64), dtype=np.int32)
    array = zarr.create_array(str(tmp_path / "big.zarr"), shape=(64, 64), dtype="int32",
                              chunks=(4, 4), shards=(64, 64), compressors=[{"name": "zstd",
                              "configuration": {"level": 1, "checksum": False}}])
    array[...] = values
    assert sorted(stored_files(tmp_path / "big.zarr")) == ["c/0/0"]
    x = tessera.from_zarr(str(tmp_path / "big.zarr"), spec=spec)
    assert x.shape == (64, 64)
    for region in [(slice(8, 12), slice(20, 24)), (slice(3, 9), slice(30, 35)),
                   (slice(60, 64), slice(0, 4)), (13, 17)]:
        assert_same(np.asarray(x[region]), values[region], f"x[{region}]")


# --- the checked-in fixtures ----------------------------------------------------------

def fixture_entries():
    with open(FIXTURES / "fixtures.json") as file:
        entries = json.load(file)["fixtures"]
    return [pytest.param(entry, id=entry["name"]) for entry in entries if entry["kind"] == "array"]


FIXTURE_ENTRIES = fixture_entries()


def fixture_values(entry):
    return np.fromfile(FIXTURES / entry["raw"], dtype=np.dtype(entry["read_dtype"]).newbyteorder(
        "<")).reshape(entry["shape"]).astype(entry["read_dtype"])


@pytest.mark.parametrize("entry", FIXTURE_ENTRIES)
def test_zarr_python_reads_fixture(entry):
    """The fixtures are what they say (make_fixtures.py checks as much when it runs)."""
    if entry["expect_error"] is not None:
        pytest.skip("an invalid fixture (zarr-python refuses some, not all)")
    values = zarr.open_array(str(FIXTURES / entry["path"]), mode="r")[...]
    assert_same(values.astype(entry["read_dtype"]), fixture_values(entry), entry["name"])


@pytest.mark.parametrize("entry", FIXTURE_ENTRIES)
def test_tessera_reads_fixture(tessera, spec, entry):
    path = str(FIXTURES / entry["path"])
    expect = entry["expect_error"]
    if expect is None:
        x = tessera.from_zarr(path, spec=spec)
        assert list(x.shape) == entry["shape"]
        assert_same(np.asarray(x), fixture_values(entry), entry["name"])
        return
    with pytest.raises(Exception) as error:
        x = tessera.from_zarr(path, spec=spec)
        if entry["error_on"] == "open":
            pytest.fail(f"{entry['name']}: from_zarr accepted invalid metadata")
        np.asarray(x)
    assert expect.lower() in str(error.value).lower(), (
        f"{entry['name']}: the error must say {expect!r}: {error.value}")


def test_tessera_reads_fixture_groups(tessera, spec):
    """The members of the groups, consolidated or not, by their paths."""
    for group in ("group_plain", "group_consolidated"):
        for member in ("a", "b", "sub/c"):
            entry = next(e.values[0] for e in FIXTURE_ENTRIES
                         if e.values[0]["path"] == f"{group}/{member}")
            x = tessera.from_zarr(str(FIXTURES / entry["path"]), spec=spec)
            assert_same(np.asarray(x), fixture_values(entry), entry["name"])


# --- the CLI --------------------------------------------------------------------------

def sharded_source(path, values, chunks=(2, 3), shards=(4, 6)):
    array = zarr.create_array(str(path), shape=values.shape, dtype=values.dtype, chunks=chunks,
                              shards=shards, fill_value=-1, compressors=[
                                  {"name": "zstd", "configuration": {"level": 3,
                                                                     "checksum": False}}])
    array[...] = values
    return path


def cli_values():
    rng = np.random.default_rng([SEED, 5])
    return rng.integers(-1000, 1000, size=(13, 11), dtype=np.int16)


def test_cli_info_reports_shards(tessera_bin, tmp_path):
    path = sharded_source(tmp_path / "s.zarr", cli_values())
    info = json.loads(run_ok(tessera_bin, "info", path, "--json").stdout)
    assert info["zarr_format"] == 3
    assert info["shape"] == [13, 11]
    assert info["dtype"] == "int16"
    assert info["chunks"] == [2, 3]  # the inner chunks
    assert info["shards"] == [4, 6]
    assert info["codecs"], info


def test_cli_info_of_unsharded_v3_array(tessera_bin, tmp_path):
    array = zarr.create_array(str(tmp_path / "p.zarr"), shape=(5, 4), dtype="float32",
                              chunks=(2, 4))
    array[...] = 1.5
    info = json.loads(run_ok(tessera_bin, "info", tmp_path / "p.zarr", "--json").stdout)
    assert info["zarr_format"] == 3 and info["chunks"] == [2, 4]
    assert info.get("shards") is None


@pytest.mark.parametrize("target", [
    pytest.param(dict(chunks=(5, 4), shards=None, zarr_format=2), id="v2"),
    pytest.param(dict(chunks=(5, 4), shards=None, zarr_format=3), id="v3"),
    pytest.param(dict(chunks=(3, 2), shards=(6, 8), zarr_format=3), id="v3-sharded"),
])
def test_cli_rechunks_sharded_v3(tessera_bin, tmp_path, target):
    values = cli_values()
    source = sharded_source(tmp_path / "in.zarr", values)
    out = tmp_path / "out.zarr"
    args = ["rechunk", source, out, "--chunks", ",".join(map(str, target["chunks"])),
            "--zarr-format", target["zarr_format"], "--allowed-mem", "100MB",
            "--work-dir", tmp_path, "--workers", 2, "--quiet"]
    if target["shards"]:
        args += ["--shards", ",".join(map(str, target["shards"]))]
    run_ok(tessera_bin, *args)
    array = zarr.open_array(str(out), mode="r")
    assert array.metadata.zarr_format == target["zarr_format"]
    assert array.chunks == target["chunks"]
    assert array.shards == target["shards"]
    assert (out / (".zarray" if target["zarr_format"] == 2 else "zarr.json")).exists()
    np.testing.assert_array_equal(array[...], values, err_msg=REPLAY)


def test_cli_rechunks_v2_into_sharded_v3(tessera_bin, tmp_path):
    values = cli_values()
    source = zarr.create_array(str(tmp_path / "in.zarr"), shape=values.shape, dtype=values.dtype,
                               chunks=(13, 2), zarr_format=2)
    source[...] = values
    out = tmp_path / "out.zarr"
    run_ok(tessera_bin, "rechunk", tmp_path / "in.zarr", out, "--chunks", "4,4", "--shards",
           "8,8", "--zarr-format", 3, "--allowed-mem", "100MB", "--work-dir", tmp_path,
           "--workers", 2, "--quiet")
    array = zarr.open_array(str(out), mode="r")
    assert array.metadata.zarr_format == 3
    assert array.chunks == (4, 4) and array.shards == (8, 8)
    np.testing.assert_array_equal(array[...], values, err_msg=REPLAY)


# --- the cases themselves -------------------------------------------------------------

def test_cases_cover_what_they_mean_to():
    made = [p.values[0] for p in ZARR_PYTHON_CASES]
    assert {c.dtype for c in made} == set(DTYPES)
    assert any(c.shards for c in made) and any(not c.shards for c in made)
    for params in (ZARR_PYTHON_CASES, ZARRS_CASES, TENSORSTORE_CASES, TESSERA_WRITE_CASES,
                   DETERMINISTIC_CASES):
        assert len({p.id for p in params}) == len(params)
    locations = {c.codecs[0]["configuration"]["index_location"]
                 for c in (p.values[0] for p in TENSORSTORE_CASES) if c.shards}
    assert locations == {"start", "end"}
    writes = [p.values[0] for p in TESSERA_WRITE_CASES]
    assert {c.dtype for c in writes} == set(TESSERA_WRITE_DTYPES)
    for case in (p.values[0] for p in ZARR_PYTHON_CASES + TENSORSTORE_CASES):
        if case.shards:
            assert all(s % c == 0 for s, c in zip(case.shards, case.inner)), case.id
    assert all(p.values[0].deterministic for p in DETERMINISTIC_CASES)
