#!/usr/bin/env python3
"""Writes the Zarr v3 fixtures of Tessera's v3 / sharding reader tests with zarr-python 3.

Run with the project's virtual environment (zarr-python 3.1.6, numpy 2, google-crc32c):
    .venv/bin/python src/storage/zarr/testdata/v3/make_fixtures.py
It deletes and rewrites everything in this folder except itself: one subdirectory per
fixture (a Zarr v3 array or group written by zarr-python to a LocalStore, some then
edited or corrupted by this script), `<name>.raw` with each readable array's expected
values, and the manifest `fixtures.json`. At the end it reads every valid fixture back
with zarr-python and asserts the values equal the .raw files (and that every shard
written has the index this script expects), so a run that finishes is a checked run.

fixtures.json: {"generator": ..., "fixtures": [entry, ...]}, one entry per array or group:
  name         the fixture's name; `path` is its directory relative to this folder (a
               group's member arrays are entries of their own, named "<group>__<member>")
  kind         "array" or "group"
  shape        the array's shape ([] for 0-d)
  dtype        Tessera's dtype name (the Zarr v3 data_type) of the array
  read_dtype   the dtype Tessera reads it as and the .raw holds: dtype, except float16,
               which Tessera reads (and the .raw holds) as float32
  raw          "<name>.raw": the values, little-endian, C order, read_dtype (bool: one
               byte 0 or 1); null for fixtures that must fail
  fill_value   the zarr.json fill_value, as JSON text (e.g. "\"NaN\"", "-3", "[1.5, -2.0]",
               "\"0x7fc00001\"")
  inner_chunks the chunk shape Tessera reports: the (innermost) inner chunk shape of a
               sharded array, else the chunk_grid's chunk_shape
  shards       the shard shape (the chunk_grid's chunk_shape) of a sharded array, else null
  sharding_levels  for nested sharding, the chunk shapes outermost first, e.g.
               [[8, 8], [4, 4], [2, 2]]; else null
  codecs       the names of the top-level codecs, in order
  stored_keys  the store keys (files) of the fixture, zarr.json documents excepted, sorted;
               chunks (and shards) entirely equal to the fill value are not written
  empty_inner_chunks  for sharded arrays, the number of index entries that are
               (2^64-1, 2^64-1) over all stored shards
  expect_error null, or a substring (compare case-insensitively) that the error Tessera
               raises must contain
  error_on     "open" (metadata is invalid: from_zarr / opening fails) or "read" (the
               metadata is valid, reading the data fails); null when expect_error is null

Nested sharding (a sharding_indexed codec inside a sharding_indexed codec's codecs)
is written by zarr-python 3.1.6 itself: create_array(serializer=ShardingCodec(
chunk_shape=..., codecs=[ShardingCodec(...)]), chunks=<outer shard shape>).

Hex fill values ("0x7fc00001" etc., Zarr v3's raw-bits form for floats) are written by
editing zarr.json after zarr-python wrote the array with the numerically equal fill (a
NaN for a NaN bit pattern), so the chunks equal to the fill were left unwritten.

The corrupt shard fixtures are copies of a valid fixture whose shard is rewritten here:
the index is parsed, edited and re-encoded (its crc32c recomputed, unless the fixture is
about a wrong crc32c), so each fixture is wrong in exactly one way.
"""
import json
import os
import shutil
import struct
import sys
import warnings

import google_crc32c
import numpy as np
import zarr
from zarr.codecs import (BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, ShardingCodec,
                         TransposeCodec, ZstdCodec)
from zarr.storage import LocalStore

try:
    import tensorstore
except ImportError:  # optional: checks the fixtures with a second reader
    tensorstore = None

HERE = os.path.dirname(os.path.abspath(__file__))
SIZE_LIMIT = 300 * 1024  # bytes of fixture files in all, this script excepted
EMPTY = 2**64 - 1

# zarr-python warns that consolidated metadata is not in the v3 spec and that nested
# sharding disables partial reads: both are what these fixtures mean to write.
warnings.filterwarnings("ignore", category=UserWarning, module="zarr")


# --- values ---------------------------------------------------------------------------

def formula(dtype, shape):
    """The fixture's values before blanking: a function of the C-order flat index."""
    count = int(np.prod(shape, dtype=np.int64))
    flat = np.arange(count, dtype=np.int64)
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        values = flat % 3 == 0
    elif dtype.kind == "f":
        values = (np.fmod(flat.astype(np.float64) * 0.37, 101.0) - 50.5).astype(dtype)
    elif dtype.kind == "c":
        real = np.fmod(flat.astype(np.float64) * 0.37, 101.0) - 50.5
        imag = np.fmod(flat.astype(np.float64) * 1.25, 17.0) - 8.0
        values = (real + 1j * imag).astype(dtype)
    else:
        values = (flat * 7919 - 12345).astype(dtype)  # wraps
    return values.reshape(shape)


def bits_value(dtype, bits):
    """The scalar of `dtype` whose bit pattern is the unsigned integer `bits`."""
    dtype = np.dtype(dtype)
    return np.array(bits, dtype=f"<u{dtype.itemsize}").view(dtype.newbyteorder("<"))[()]


def fill_scalar(spec):
    """The fill value as a numpy scalar of the array's dtype, hex bit patterns exact."""
    dtype = np.dtype(spec["dtype"])
    fill = spec.get("fill_json", spec.get("fill", 0))
    if isinstance(fill, str) and fill.startswith("0x"):
        return bits_value(dtype, int(fill, 16))
    if isinstance(fill, list):  # complex, each part a float or a hex bit pattern
        part = np.dtype(f"f{dtype.itemsize // 2}")
        pair = np.array([bits_value(part, int(p, 16)) if isinstance(p, str) and p.startswith("0x")
                         else part.type({"NaN": np.nan, "Infinity": np.inf,
                                         "-Infinity": -np.inf}.get(p, p)) for p in fill],
                        dtype=part)
        return pair.view(dtype)[0]  # the bits of both parts kept
    return dtype.type(fill)


def regions(shape, block, indices):
    """The regions (tuples of slices) of the blocks with the given C-order linear indices
    of the grid of `block`-shaped blocks over `shape`."""
    grid = tuple(-(-n // b) for n, b in zip(shape, block))
    out = []
    for linear in indices:
        index = np.unravel_index(linear, grid)
        out.append(tuple(slice(int(i) * b, min((int(i) + 1) * b, n))
                         for i, b, n in zip(index, block, shape)))
    return out


def expected_values(spec):
    values = formula(spec["dtype"], spec["shape"])
    fill = fill_scalar(spec)
    for patch in spec.get("patch", ()):  # (flat index, value) set after the formula
        values.reshape(-1)[patch[0]] = patch[1]
    for region in regions(spec["shape"], spec["inner"], spec.get("blank", ())):
        values[region] = fill
    if spec.get("shards"):
        for region in regions(spec["shape"], spec["shards"], spec.get("blank_shards", ())):
            values[region] = fill
    return values


def raw_bytes(values):
    values = np.asarray(values)
    if values.dtype == np.float16:
        values = values.astype(np.float32)
    return np.ascontiguousarray(values.astype(values.dtype.newbyteorder("<"))).tobytes()


def read_dtype(dtype):
    return "float32" if dtype == "float16" else dtype


# --- the fixtures ---------------------------------------------------------------------
# Each: dtype, shape, inner (chunk shape; the innermost inner chunk of sharded arrays),
# shards (shard shape) or absent, codec arguments of create_array, fill (what zarr-python
# is given), fill_json (what zarr.json says instead, written after), blank (C-order
# indices of the inner-chunk grid over the array set to the fill value, so not written),
# blank_shards (likewise for whole shards).

def sharding(inner, codecs, index_codecs=None, index_location="end"):
    return ShardingCodec(chunk_shape=inner, codecs=codecs,
                         index_codecs=index_codecs or [BytesCodec(), Crc32cCodec()],
                         index_location=index_location)


ARRAYS = {
    "bool_gzip_fill_true": dict(
        dtype="bool", shape=(7, 9), inner=(3, 4), fill=True,
        compressors=[GzipCodec(level=5)], blank=[0, 8]),
    "int8_blosc_lz4_1d": dict(
        dtype="int8", shape=(20,), inner=(6,), fill=-3,
        compressors=[BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")], blank=[1]),
    "int16_bigendian_dot": dict(
        dtype="int16", shape=(7, 9), inner=(4, 4), fill=7,
        serializer=BytesCodec(endian="big"), compressors=None,
        chunk_key_encoding={"name": "default", "separator": "."}, blank=[2]),
    "int32_transpose_zstd_checksum_dims": dict(
        dtype="int32", shape=(7, 9), inner=(3, 4), fill=-1,
        filters=[TransposeCodec(order=(1, 0))],
        compressors=[ZstdCodec(level=3, checksum=True)],
        dimension_names=["y", None],
        attributes={"units": "m", "scale": [1, 2.5], "nested": {"a": None, "b": "\u00b0C"}},
        blank=[4]),
    "int64_3d_transpose_bigendian_blosc_zstd_bitshuffle": dict(
        dtype="int64", shape=(13, 11, 3), inner=(5, 4, 2), fill=123456789012,
        filters=[TransposeCodec(order=(2, 0, 1))], serializer=BytesCodec(endian="big"),
        compressors=[BloscCodec(cname="zstd", clevel=3, shuffle="bitshuffle")],
        blank=[0, 5]),
    "uint8_v2_dot_crc32c": dict(
        dtype="uint8", shape=(7, 9), inner=(2, 5), fill=255,
        compressors=[Crc32cCodec()], chunk_key_encoding={"name": "v2", "separator": "."},
        blank=[3]),
    "uint16_v2_slash_blosc_noshuffle": dict(
        dtype="uint16", shape=(7, 9), inner=(3, 3), fill=0,
        compressors=[BloscCodec(cname="blosclz", clevel=5, shuffle="noshuffle", typesize=2)],
        chunk_key_encoding={"name": "v2", "separator": "/"}, blank=[0]),
    "uint32_0d": dict(
        dtype="uint32", shape=(), inner=(), fill=42, compressors=[ZstdCodec(level=1)]),
    "uint32_0d_unwritten": dict(
        dtype="uint32", shape=(), inner=(), fill=4000000000, compressors=None, blank=[0]),
    "uint64_3d_gzip_max_fill": dict(
        dtype="uint64", shape=(13, 11, 3), inner=(7, 6, 3), fill=2**64 - 1,
        compressors=[GzipCodec(level=1)], blank=[3]),
    "float16_nan_blosc": dict(
        dtype="float16", shape=(7, 9), inner=(3, 3), fill=float("nan"),
        compressors=[BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")], blank=[4]),
    "float16_hex_fill": dict(
        dtype="float16", shape=(7, 9), inner=(4, 5), fill=float("nan"), fill_json="0x7e00",
        compressors=None, blank=[1]),
    "float32_hex_fill_nan_payload": dict(
        dtype="float32", shape=(7, 9), inner=(4, 5), fill=float("nan"),
        fill_json="0x7fc00001", compressors=[ZstdCodec(level=1)], blank=[0, 3]),
    "float32_inf_fill_1d": dict(
        dtype="float32", shape=(20,), inner=(7,), fill=float("inf"), compressors=None,
        blank=[2]),
    "float64_neg_inf_fill_dims": dict(
        dtype="float64", shape=(7, 9), inner=(3, 4), fill=float("-inf"),
        compressors=[GzipCodec(level=5)], dimension_names=["row", "col"],
        patch=[(5, float("nan")), (6, float("inf"))], blank=[8]),
    "float64_3d_zero_fill_blosc_zstd": dict(
        dtype="float64", shape=(13, 11, 3), inner=(4, 4, 3), fill=0.0,
        compressors=[BloscCodec(cname="zstd", clevel=5, shuffle="shuffle")], blank=[0]),
    "float64_hex_fill_two": dict(
        dtype="float64", shape=(7, 9), inner=(7, 3), fill=2.0, fill_json="0x4000000000000000",
        compressors=None, blank=[1]),
    "complex64_fill_zstd": dict(
        dtype="complex64", shape=(7, 9), inner=(3, 4), fill=complex(1.5, -2.0),
        compressors=[ZstdCodec(level=5)], blank=[1]),
    "complex64_hex_fill": dict(
        dtype="complex64", shape=(5, 4), inner=(2, 2), fill=complex(1.0, float("nan")),
        fill_json=["0x3f800000", "0x7fc00001"], compressors=None, blank=[2]),
    "complex128_nan_inf_fill_bigendian_gzip": dict(
        dtype="complex128", shape=(11,), inner=(4,), fill=complex(float("nan"), float("inf")),
        serializer=BytesCodec(endian="big"), compressors=[GzipCodec(level=6)], blank=[1]),
    # --- sharded ---
    "shard_f32_default_end_zstd": dict(  # zarr-python's shards= path: index [bytes, crc32c] at the end
        dtype="float32", shape=(7, 9), inner=(2, 3), shards=(4, 6), fill=float("nan"),
        compressors=[ZstdCodec(level=3)], use_shards_argument=True,
        blank=[1], blank_shards=[3]),
    "shard_i32_3d_start_index_nocrc_blosc": dict(
        dtype="int32", shape=(13, 11, 3), inner=(3, 4, 3), shards=(6, 8, 3), fill=-7,
        serializer=sharding((3, 4, 3), [BytesCodec(), BloscCodec(cname="lz4", clevel=5,
                                                                   shuffle="shuffle")],
                            index_codecs=[BytesCodec()], index_location="start"),
        blank=[0, 7], blank_shards=[5]),
    "shard_u8_1d_gzip_index_nocrc": dict(
        dtype="uint8", shape=(50,), inner=(4,), shards=(12,), fill=9,
        serializer=sharding((4,), [BytesCodec(), GzipCodec(level=5)],
                            index_codecs=[BytesCodec()]),
        blank=[2], blank_shards=[1]),
    "shard_i16_transpose_bigendian_crc_index_start_bigendian": dict(
        dtype="int16", shape=(7, 9), inner=(2, 3), shards=(4, 6), fill=-5,
        serializer=sharding((2, 3), [TransposeCodec(order=(1, 0)), BytesCodec(endian="big"),
                                     Crc32cCodec()],
                            index_codecs=[BytesCodec(endian="big"), Crc32cCodec()],
                            index_location="start"),
        blank=[4]),
    "shard_f64_one_shard_uncompressed": dict(
        dtype="float64", shape=(9, 8), inner=(3, 4), shards=(9, 8), fill=0.5,
        serializer=sharding((3, 4), [BytesCodec()]), blank=[3]),
    "shard_f16_hex_fill_edge": dict(
        dtype="float16", shape=(7, 9), inner=(3, 3), shards=(6, 9), fill=1.0,
        fill_json="0x3c00",
        serializer=sharding((3, 3), [BytesCodec(), ZstdCodec(level=1)]), blank=[1]),
    "shard_c128_dot_keys": dict(
        dtype="complex128", shape=(5, 6), inner=(2, 2), shards=(4, 4), fill=complex(0, 0),
        serializer=sharding((2, 2), [BytesCodec(), GzipCodec(level=1)]),
        chunk_key_encoding={"name": "default", "separator": "."}, blank=[0]),
    "shard_bool_zstd": dict(
        dtype="bool", shape=(10, 10), inner=(5, 5), shards=(10, 10), fill=False,
        serializer=sharding((5, 5), [BytesCodec(), ZstdCodec(level=1)]), blank=[3]),
    "shard_nested_i16": dict(
        dtype="int16", shape=(8, 12), inner=(2, 2), shards=(8, 8), fill=0,
        levels=[(8, 8), (4, 4), (2, 2)],
        serializer=sharding((4, 4), [sharding((2, 2), [BytesCodec(), ZstdCodec(level=1)],
                                              index_location="start")]),
        blank=[0, 13]),
}

# Group fixtures: (group attributes, {member path: array spec or None for a subgroup,
# with "attributes"}), written twice: plain and consolidated (zarr.consolidate_metadata).
GROUP_MEMBERS = {
    "a": dict(dtype="int16", shape=(5, 4), inner=(2, 2), fill=0, compressors=None,
              attributes={"role": "a"}, blank=[1]),
    "b": dict(dtype="float32", shape=(6,), inner=(2,), shards=(4,), fill=float("nan"),
              compressors=None, use_shards_argument=True),
    "sub": None,
    "sub/c": dict(dtype="uint8", shape=(3, 3), inner=(3, 3), fill=1, compressors=None),
}
GROUPS = {"group_plain": False, "group_consolidated": True}

# Invalid fixtures: name -> (base fixture, how it is broken, expected error substring,
# "open" or "read").
INVALID = {
    "invalid_storage_transformers": ("float32_inf_fill_1d", "storage_transformers",
                                     "storage_transformers", "open"),
    "invalid_unknown_codec": ("float32_inf_fill_1d", "unknown_codec", "foo_codec", "open"),
    "invalid_dtype_datetime": (None, "datetime", "numpy.datetime64", "open"),
    "invalid_dtype_foo": ("float32_inf_fill_1d", "dtype_foo", "foo", "open"),
    "invalid_shard_not_divisible": ("shard_f32_default_end_zstd", "not_divisible", "divisible",
                                    "open"),
    "invalid_shard_index_past_end": ("shard_f64_one_shard_uncompressed", "past_end", "shard",
                                     "read"),
    "invalid_shard_overlap": ("shard_f64_one_shard_uncompressed", "overlap", "overlap", "read"),
    "invalid_shard_index_crc32c": ("shard_f64_one_shard_uncompressed", "index_crc", "crc32c",
                                   "read"),
    "invalid_shard_truncated": ("shard_i32_3d_start_index_nocrc_blosc", "truncated", "shard",
                                "read"),
    "invalid_chunk_crc32c": ("uint8_v2_dot_crc32c", "chunk_crc", "crc32c", "read"),
}


# --- writing --------------------------------------------------------------------------

def create(store, spec, path=None):
    """Creates the array of `spec` with zarr-python (at `path` inside a group store)."""
    kwargs = dict(shape=spec["shape"], dtype=spec["dtype"], fill_value=spec["fill"],
                  zarr_format=3)
    for key in ("filters", "compressors", "serializer", "chunk_key_encoding",
                "dimension_names", "attributes"):
        if key in spec:
            kwargs[key] = spec[key]
    if isinstance(spec.get("serializer"), ShardingCodec) and "compressors" not in spec:
        kwargs["compressors"] = None  # else zarr-python adds zstd after the sharding codec
    if spec.get("use_shards_argument"):
        kwargs["chunks"], kwargs["shards"] = spec["inner"], spec["shards"]
    else:
        kwargs["chunks"] = spec.get("shards") or spec["inner"] or ()
    if path is None:
        return zarr.create_array(store, **kwargs)
    del kwargs["zarr_format"]  # the group's
    return store.create_array(path, **kwargs)


def write_values(array, spec):
    values = expected_values(spec)
    if spec["shape"] == () and 0 in spec.get("blank", ()):
        return  # the one chunk is never written
    array[...] = values


def edit_json(directory, edit):
    path = os.path.join(directory, "zarr.json")
    with open(path) as file:
        metadata = json.load(file)
    edit(metadata)
    with open(path, "w") as file:
        json.dump(metadata, file, indent=2)
        file.write("\n")


def stored_keys(directory):
    keys = []
    for root, _, files in os.walk(directory):
        for name in files:
            if name != "zarr.json":
                keys.append(os.path.relpath(os.path.join(root, name), directory)
                            .replace(os.sep, "/"))
    return sorted(keys)


# --- shard index ----------------------------------------------------------------------

def shard_config(metadata):
    codec = metadata["codecs"][0]
    assert codec["name"] == "sharding_indexed", codec
    return codec["configuration"]


def index_layout(config, shard_shape):
    """(entry count, bytes of the encoded index, numpy dtype of its words, crc32c?)."""
    per_shard = [s // c for s, c in zip(shard_shape, config["chunk_shape"])]
    count = int(np.prod(per_shard, dtype=np.int64))
    names = [c["name"] for c in config["index_codecs"]]
    assert names in (["bytes"], ["bytes", "crc32c"]), names
    endian = config["index_codecs"][0].get("configuration", {}).get("endian", "little")
    crc = names[-1] == "crc32c"
    return count, count * 16 + 4 * crc, np.dtype(">u8" if endian == "big" else "<u8"), crc


def read_index(data, config, shard_shape):
    """The (count, 2) index of the shard bytes `data`, its crc32c checked."""
    count, size, words, crc = index_layout(config, shard_shape)
    at_start = config.get("index_location", "end") == "start"
    encoded = data[:size] if at_start else data[len(data) - size:]
    if crc:
        assert struct.unpack("<I", encoded[-4:])[0] == google_crc32c.value(encoded[:-4])
    return np.frombuffer(encoded[:count * 16], dtype=words).reshape(count, 2).astype(np.uint64)


def encode_index(index, config, shard_shape, break_crc=False):
    _, _, words, crc = index_layout(config, shard_shape)
    encoded = np.ascontiguousarray(index.astype(words)).tobytes()
    if crc:
        checksum = google_crc32c.value(encoded) ^ (1 if break_crc else 0)
        encoded += struct.pack("<I", checksum)
    return encoded


def replace_index(data, index, config, shard_shape, break_crc=False):
    _, size, _, _ = index_layout(config, shard_shape)
    encoded = encode_index(index, config, shard_shape, break_crc)
    if config.get("index_location", "end") == "start":
        return encoded + data[size:]
    return data[:len(data) - size] + encoded


def check_shard_indexes(directory, metadata):
    """Every stored shard's index: entries in bounds, not overlapping, outside the index;
    returns the number of empty entries."""
    config = shard_config(metadata)
    shard_shape = metadata["chunk_grid"]["configuration"]["chunk_shape"]
    _, size, _, _ = index_layout(config, shard_shape)
    at_start = config.get("index_location", "end") == "start"
    empty = 0
    for key in stored_keys(directory):
        with open(os.path.join(directory, key), "rb") as file:
            data = file.read()
        index = read_index(data, config, shard_shape)
        used = []
        for offset, nbytes in index:
            if offset == EMPTY and nbytes == EMPTY:
                empty += 1
                continue
            lo, hi = (size, len(data)) if at_start else (0, len(data) - size)
            assert lo <= offset and offset + nbytes <= hi, (key, offset, nbytes)
            used.append((int(offset), int(offset + nbytes)))
        used.sort()
        assert all(a[1] <= b[0] for a, b in zip(used, used[1:])), (key, used)
    return empty


# --- corruption -----------------------------------------------------------------------

def first_shard(directory):
    return os.path.join(directory, stored_keys(directory)[0])


def corrupt(directory, how):
    with open(os.path.join(directory, "zarr.json")) as file:
        metadata = json.load(file)
    if how == "storage_transformers":
        edit_json(directory, lambda m: m.update(
            storage_transformers=[{"name": "chunk_manifest_json",
                                   "configuration": {"manifest": "manifest.json"}}]))
        return
    if how == "unknown_codec":
        edit_json(directory, lambda m: m["codecs"].append(
            {"name": "foo_codec", "configuration": {"level": 1}}))
        return
    if how == "dtype_foo":
        edit_json(directory, lambda m: m.update(data_type="foo"))
        return
    if how == "not_divisible":
        edit_json(directory, lambda m: shard_config(m).update(chunk_shape=[3, 3]))
        return
    if how == "chunk_crc":
        path = os.path.join(directory, stored_keys(directory)[0])
        with open(path, "rb") as file:
            data = bytearray(file.read())
        data[0] ^= 0x01  # a data byte: the stored crc32c no longer matches
        with open(path, "wb") as file:
            file.write(bytes(data))
        return
    config = shard_config(metadata)
    shard_shape = metadata["chunk_grid"]["configuration"]["chunk_shape"]
    path = first_shard(directory)
    with open(path, "rb") as file:
        data = file.read()
    index = read_index(data, config, shard_shape).copy()
    written = [i for i in range(len(index)) if index[i, 0] != EMPTY]
    if how == "past_end":
        # the last written inner chunk now ends 8 bytes past the end of the shard
        last = max(written, key=lambda i: index[i, 0])
        index[last, 0] = len(data) + 8 - index[last, 1]
        data = replace_index(data, index, config, shard_shape)
    elif how == "overlap":
        # the second inner chunk (in file order) starts one byte inside the first; its
        # length unchanged, it stays inside the shard's data
        by_offset = sorted(written, key=lambda i: index[i, 0])
        index[by_offset[1], 0] = index[by_offset[0], 0] + 1
        data = replace_index(data, index, config, shard_shape)
    elif how == "index_crc":
        data = replace_index(data, index, config, shard_shape, break_crc=True)
    elif how == "truncated":
        assert config.get("index_location") == "start"
        _, size, _, _ = index_layout(config, shard_shape)
        data = data[:size + (len(data) - size) // 2]  # index intact, data cut in the middle
    else:
        raise ValueError(how)
    with open(path, "wb") as file:
        file.write(data)


# --- the manifest ---------------------------------------------------------------------

def codec_names(metadata):
    return [codec["name"] for codec in metadata["codecs"]]


TESSERA_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                  "uint64", "float16", "float32", "float64", "complex64", "complex128"}


def chunking(metadata):
    """(inner chunk shape, shard shape or None, sharding levels or None) from zarr.json:
    the levels are the chunk shapes outermost first when sharding is nested."""
    levels = [metadata["chunk_grid"]["configuration"]["chunk_shape"]]
    codecs = metadata["codecs"]
    while codecs and codecs[0]["name"] == "sharding_indexed":
        levels.append(codecs[0]["configuration"]["chunk_shape"])
        codecs = codecs[0]["configuration"]["codecs"]
    if len(levels) == 1:
        return levels[0], None, None
    return levels[-1], levels[0], (levels if len(levels) > 2 else None)


def array_entry(name, path, spec, expect_error=None, error_on=None):
    directory = os.path.join(HERE, path)
    with open(os.path.join(directory, "zarr.json")) as file:
        metadata = json.load(file)
    inner, shards, levels = chunking(metadata)
    data_type = metadata["data_type"]
    dtype = data_type if isinstance(data_type, str) and data_type in TESSERA_DTYPES else None
    entry = {
        "name": name, "path": path, "kind": "array", "shape": list(metadata["shape"]),
        "dtype": dtype, "read_dtype": dtype and read_dtype(dtype),
        "raw": None, "fill_value": json.dumps(metadata["fill_value"]),
        "inner_chunks": inner, "shards": shards, "sharding_levels": levels,
        "codecs": codec_names(metadata), "stored_keys": stored_keys(directory),
        "empty_inner_chunks": None,
        "expect_error": expect_error, "error_on": error_on,
    }
    if expect_error is None:
        assert inner == list(spec["inner"]), (name, inner)
        entry["raw"] = name + ".raw"
        with open(os.path.join(HERE, entry["raw"]), "wb") as file:
            file.write(raw_bytes(expected_values(spec)))
        grid = int(np.prod([-(-n // c) for n, c in zip(spec["shape"], shards or inner)]))
        if shards is None:  # the chunks equal to the fill value were not written
            assert len(entry["stored_keys"]) == grid - len(spec.get("blank", ())), name
        else:
            assert len(entry["stored_keys"]) == grid - len(spec.get("blank_shards", ())), name
            empty = check_shard_indexes(directory, metadata)
            if levels is None:  # of nested shards, only the outer index is checked
                entry["empty_inner_chunks"] = empty
    return entry


# --- main -----------------------------------------------------------------------------

def clean():
    for name in os.listdir(HERE):
        path = os.path.join(HERE, name)
        if name == os.path.basename(__file__):
            continue
        if os.path.isdir(path):
            shutil.rmtree(path)
        else:
            os.remove(path)


def write_array(name, spec):
    directory = os.path.join(HERE, name)
    array = create(LocalStore(directory), spec)
    write_values(array, spec)
    if "fill_json" in spec:
        edit_json(directory, lambda m: m.update(fill_value=spec["fill_json"]))
    return directory


def write_group(name, consolidated, entries):
    directory = os.path.join(HERE, name)
    root = zarr.create_group(LocalStore(directory), zarr_format=3,
                             attributes={"title": name, "consolidated": consolidated})
    members = {}
    for member, spec in GROUP_MEMBERS.items():
        if spec is None:
            root.create_group(member, attributes={"level": member.count("/") + 1})
            members[member] = "group"
            continue
        write_values(create(root, spec, member), spec)
        members[member] = "array"
    if consolidated:
        zarr.consolidate_metadata(LocalStore(directory))
    entries.append({"name": name, "path": name, "kind": "group", "members": members,
                    "consolidated": consolidated, "expect_error": None, "error_on": None})
    for member, spec in GROUP_MEMBERS.items():
        if spec is not None:
            entries.append(array_entry(f"{name}__{member.replace('/', '__')}",
                                       f"{name}/{member}", spec))


def write_invalid(name, base, how, expect, error_on, entries):
    directory = os.path.join(HERE, name)
    if base is None:  # datetime: written as such by zarr-python
        spec = dict(dtype="datetime64[ns]", shape=(4,), inner=(2,), fill=0, compressors=None)
        zarr.create_array(LocalStore(directory), shape=(4,), chunks=(2,),
                          dtype="datetime64[ns]", compressors=None, zarr_format=3)[...] = (
            np.arange(4).astype("datetime64[ns]"))
        entries.append(array_entry(name, name, spec, expect, error_on))
        return
    shutil.copytree(os.path.join(HERE, base), directory)
    corrupt(directory, how)
    entries.append(array_entry(name, name, ARRAYS[base], expect, error_on))


def verify(entries):
    """Every valid array reads back with zarr-python (and TensorStore, where it is
    installed) to its .raw; every group opens with
    its members; the invalid metadata fixtures are refused by zarr-python too (where it
    checks: it does not check shard index bounds or overlaps)."""
    for entry in entries:
        path = os.path.join(HERE, entry["path"])
        if entry["kind"] == "group":
            group = zarr.open_group(LocalStore(path, read_only=True), mode="r",
                                    use_consolidated=entry["consolidated"])
            assert group.metadata.zarr_format == 3
            names = {key for key, _ in group.members(max_depth=None)}
            assert names == set(entry["members"]), (entry["name"], names)
            continue
        if entry["expect_error"] is not None:
            try:
                zarr.open_array(LocalStore(path, read_only=True), mode="r")[...]
                refused = None
            except Exception as error:  # noqa: BLE001 - reported
                refused = f"{type(error).__name__}: {str(error)[:100]}"
            print(f"  zarr-python on {entry['name']}: "
                  f"{'refuses: ' + refused if refused else 'reads it (no error)'}")
            continue
        array = zarr.open_array(LocalStore(path, read_only=True), mode="r")
        assert array.shape == tuple(entry["shape"]), entry["name"]
        assert str(array.dtype) == entry["dtype"], (entry["name"], array.dtype)
        with open(os.path.join(HERE, entry["raw"]), "rb") as file:
            raw = file.read()
        assert raw_bytes(array[...]) == raw, f"{entry['name']}: values differ from .raw"
        assert len(raw) == int(np.prod(entry["shape"], dtype=np.int64)) * np.dtype(
            entry["read_dtype"]).itemsize
        if entry["sharding_levels"] is None:
            assert list(array.chunks) == entry["inner_chunks"], (entry["name"], array.chunks)
            assert (None if array.shards is None else list(array.shards)) == entry["shards"]
        if tensorstore is not None:
            store = tensorstore.open({"driver": "zarr3",
                                      "kvstore": {"driver": "file", "path": path}},
                                     read=True).result()
            assert raw_bytes(store.read().result()) == raw, f"{entry['name']}: TensorStore"


def folder_size():
    total = 0
    for root, _, files in os.walk(HERE):
        for name in files:
            if name != os.path.basename(__file__):
                total += os.path.getsize(os.path.join(root, name))
    return total


def main():
    assert zarr.__version__.startswith("3."), zarr.__version__
    clean()
    entries = []
    for name, spec in ARRAYS.items():
        write_array(name, spec)
        entries.append(array_entry(name, name, spec))
    for name, consolidated in GROUPS.items():
        write_group(name, consolidated, entries)
    for name, (base, how, expect, error_on) in INVALID.items():
        write_invalid(name, base, how, expect, error_on, entries)
    with open(os.path.join(HERE, "fixtures.json"), "w") as file:
        json.dump({"generator": f"make_fixtures.py, zarr-python {zarr.__version__}, "
                                f"numpy {np.__version__}",
                   "fixtures": entries}, file, indent=1)
        file.write("\n")
    verify(entries)
    size = folder_size()
    print(f"{len(entries)} fixtures, {size} bytes")
    assert size <= SIZE_LIMIT, f"fixtures take {size} bytes, more than {SIZE_LIMIT}"


if __name__ == "__main__":
    sys.exit(main())
