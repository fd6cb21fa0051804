#!/usr/bin/python3
"""Writes the fuzzers' seed corpora (run with the Python that has numcodecs and zarr):
    /usr/bin/python3 fuzz/make_corpus.py
corpus/metadata: .zarray and .zattrs documents written by zarr-python (2.x), Zarr v3
    zarr.json documents of arrays and groups copied from zarr-python 3's fixtures
    (src/storage/zarr/testdata/v3, written by make_fixtures.py), and regression inputs.
corpus/chunk: numcodecs frames behind fuzz_chunk_decode's 7-byte codec header, shards
    (whole, or one inner chunk to splice) behind its 6-byte sharded-array header, and
    shard indexes behind its 5-byte index header (the layouts: fuzz_chunk_decode.cpp).
corpus/expression: calculator expressions (`tessera calc`), good and bad.
corpus/graph: plan graphs as the graph codec writes them (CBOR; the format:
    src/plan/graph_codec.cpp), with no stored source (none would exist when fuzzing).
corpus/s3_response: S3 ListObjectsV2 and error bodies shaped as AWS's documentation shows
    them (our own values), and AWS credentials and config files (fuzz_s3_response tries
    every seed as all three).
Each seed is a few KB at most, so the repository stays small.
"""
import os
import shutil
import struct
import tempfile

import numcodecs
import numpy as np
import zarr

HERE = os.path.dirname(os.path.abspath(__file__))
V3_FIXTURES = os.path.join(HERE, "..", "src", "storage", "zarr", "testdata", "v3")
CNAMES = ["lz4", "lz4hc", "zstd", "blosclz", "zlib"]


def header(codec_index, param1, param2=0, param3=0, decoded_size=0, round_trip=False):
    first = codec_index | (0x80 if round_trip else 0)  # fuzz_chunk_decode's codec modes
    return bytes([first, param1, param2, param3]) + struct.pack("<I", decoded_size)[:3]


def write(folder, name, data):
    with open(os.path.join(HERE, "corpus", folder, name), "wb") as out:
        out.write(data)


def metadata_corpus():
    work = tempfile.mkdtemp()
    try:
        arrays = {
            "blosc_f8": dict(shape=(100, 50), chunks=(10, 25), dtype="<f8"),
            "zstd_f4_nan": dict(shape=(7,), chunks=(3,), dtype="<f4", fill_value=np.nan,
                                compressor=numcodecs.Zstd(level=3), dimension_separator="/"),
            "lz4_i2_big_f": dict(shape=(4, 5, 6), chunks=(2, 5, 3), dtype=">i2", fill_value=-7,
                                 order="F", compressor=numcodecs.LZ4()),
            "none_b1_0d": dict(shape=(), dtype="|b1", fill_value=True, compressor=None),
            "gzip_u8_filters": dict(shape=(1000,), chunks=(100,), dtype="<u8", fill_value=None,
                                    compressor=numcodecs.GZip(level=5),
                                    filters=[numcodecs.Zlib(level=1)]),
        }
        for name, kwargs in arrays.items():
            path = os.path.join(work, name)
            array = zarr.open(path, mode="w", **kwargs)
            shutil.copy(os.path.join(path, ".zarray"),
                        os.path.join(HERE, "corpus", "metadata", name + ".zarray"))
            if name == "blosc_f8":
                array.attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
                array.attrs["units"] = "K"
                shutil.copy(os.path.join(path, ".zattrs"),
                            os.path.join(HERE, "corpus", "metadata", name + ".zattrs"))
    finally:
        shutil.rmtree(work)


def chunk_corpus():
    rng = np.random.default_rng(0)
    smooth = (np.repeat(np.arange(128), 8) * 0.5).astype("<f8").tobytes()  # compressible
    noise = rng.integers(0, 256, size=600, dtype="u1").tobytes()  # blosc stores it raw
    counts = (np.arange(4096, dtype="<u2") % 97).tobytes()
    for cname_index, cname in enumerate(CNAMES):
        for shuffle in (0, 1, 2):
            codec = numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle)
            frame = codec.encode(np.frombuffer(smooth, dtype="<f8"))
            write("chunk", f"blosc_{cname}_shuffle{shuffle}",
                  header(0, cname_index, 5, (shuffle + 1) | (3 << 2), len(smooth)) + frame)
    write("chunk", "blosc_lz4_incompressible",
          header(0, 0, 5, 1, len(noise)) + numcodecs.Blosc(cname="lz4").encode(noise))
    write("chunk", "zstd_3", header(1, 6, decoded_size=len(counts)) +
          numcodecs.Zstd(level=3).encode(counts))
    write("chunk", "lz4_1", header(2, 0, decoded_size=len(counts)) +
          numcodecs.LZ4().encode(counts))
    write("chunk", "zlib_6", header(3, 7, decoded_size=len(smooth)) +
          numcodecs.Zlib(level=6).encode(smooth))
    write("chunk", "gzip_1", header(4, 2, decoded_size=len(counts)) +
          numcodecs.GZip(level=1).encode(counts))
    # Round-trip mode seeds: raw bytes for each codec.
    for codec_index in range(5):
        write("chunk", f"roundtrip_{codec_index}",
              header(codec_index, 3, 5, 1 | (1 << 2), 0, round_trip=True) + counts[:512])


# zarr.json documents of the v3 fixtures used as metadata seeds (fixture path -> seed
# name): every data type family, fill values in hex and as NaN/Infinity, both key
# encodings, transpose, every bytes-to-bytes codec, sharding (index at either end,
# with and without crc32c, nested), documents Tessera refuses, and groups with and
# without consolidated metadata.
V3_METADATA_SEEDS = {
    "bool_gzip_fill_true": "v3_bool_gzip",
    "complex64_hex_fill": "v3_c64_hex_fill",
    "complex128_nan_inf_fill_bigendian_gzip": "v3_c128_nan_inf_big",
    "float16_hex_fill": "v3_f16_hex_fill",
    "float32_hex_fill_nan_payload": "v3_f32_nan_payload",
    "float64_neg_inf_fill_dims": "v3_f64_dims",
    "int32_transpose_zstd_checksum_dims": "v3_i32_transpose_zstd",
    "int64_3d_transpose_bigendian_blosc_zstd_bitshuffle": "v3_i64_blosc_bitshuffle",
    "uint16_v2_slash_blosc_noshuffle": "v3_u16_v2_keys",
    "uint32_0d": "v3_u32_0d",
    "shard_u8_1d_gzip_index_nocrc": "v3_shard_u8_nocrc",
    "shard_i16_transpose_bigendian_crc_index_start_bigendian": "v3_shard_i16_start_big",
    "shard_f16_hex_fill_edge": "v3_shard_f16",
    "shard_c128_dot_keys": "v3_shard_c128",
    "shard_nested_i16": "v3_shard_nested",
    "invalid_shard_not_divisible": "v3_bad_shard_not_divisible",
    "invalid_unknown_codec": "v3_bad_unknown_codec",
    "group_plain": "v3_group",
    "group_consolidated": "v3_group_consolidated",
}

# Hand-written seeds: a float16 fill value no half holds (read back rounded to one).
V3_METADATA_TEXTS = {
    "v3_f16_fill_rounded": '{"zarr_format": 3, "node_type": "array", "shape": [4], '
                           '"data_type": "float16", "chunk_grid": {"name": "regular", '
                           '"configuration": {"chunk_shape": [2]}}, "fill_value": 0.1, '
                           '"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}',
}

# Inputs that once failed fuzz_zarr_metadata (kept as regression seeds; see the report
# in the commit that added them).
METADATA_REGRESSIONS = {
    # A complex fill with a NaN part did not equal itself (ZarrMetadata's operator==).
    "regress_complex_nan_fill": '{"zarr_format": 3, "node_type": "array", "shape": [5, 4], '
                                '"data_type": "complex64", "chunk_grid": {"name": "regular", '
                                '"configuration": {"chunk_shape": [2, 2]}}, '
                                '"fill_value": ["0x3f800000", "0x7fc00001"], '
                                '"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]}',
    # "endian": "big" for a 1-byte type read back as little after writing.
    "regress_u8_big_endian": '{"zarr_format": 3, "node_type": "array", "shape": [4], '
                             '"data_type": "uint8", "chunk_grid": {"name": "regular", '
                             '"configuration": {"chunk_shape": [2]}}, "fill_value": 0, '
                             '"codecs": [{"name": "bytes", "configuration": {"endian": "big"}}]}',
    # dimension_names [""] read back as no names after writing ([null]).
    "regress_empty_dimension_name": '{"zarr_format": 3, "node_type": "array", "shape": [4], '
                                    '"data_type": "uint8", "chunk_grid": {"name": "regular", '
                                    '"configuration": {"chunk_shape": [2]}}, "fill_value": 0, '
                                    '"codecs": ["bytes"], "dimension_names": [""]}',
    # Two crc32c in index_codecs: zarr-python writes both (8 checksum bytes), Tessera's
    # index layout had room for one; now refused when parsed.
    "regress_index_two_crc32c": '{"zarr_format": 3, "node_type": "array", "shape": [4], '
                                '"data_type": "uint8", "chunk_grid": {"name": "regular", '
                                '"configuration": {"chunk_shape": [4]}}, "fill_value": 0, '
                                '"codecs": [{"name": "sharding_indexed", "configuration": '
                                '{"chunk_shape": [2], "codecs": ["bytes"], "index_codecs": '
                                '[{"name": "bytes", "configuration": {"endian": "little"}}, '
                                '"crc32c", "crc32c"]}}]}',
    # A v2 complex128 array: the harness encoded its 16-byte fill into 8 bytes.
    "regress_v2_c16": '{"chunks": [10, 25], "compressor": null, "dtype": "<c16", '
                      '"fill_value": 0.0, "filters": null, "order": "C", "shape": [100, 50], '
                      '"zarr_format": 2}',
    # 2^40 inner chunks per shard: ZarrArray::Open allocated the write order of all (now
    # refused when parsed: at most 2^22 inner chunks per shard).
    "regress_huge_shard": '{"zarr_format": 3, "node_type": "array", "shape": [1099511627776], '
                          '"data_type": "uint8", "chunk_grid": {"name": "regular", '
                          '"configuration": {"chunk_shape": [1099511627776]}}, "fill_value": 0, '
                          '"codecs": [{"name": "sharding_indexed", "configuration": '
                          '{"chunk_shape": [1], "codecs": ["bytes"]}}]}',
}


def v3_metadata_corpus():
    for fixture, name in V3_METADATA_SEEDS.items():
        shutil.copy(os.path.join(V3_FIXTURES, fixture, "zarr.json"),
                    os.path.join(HERE, "corpus", "metadata", name + ".json"))
    shutil.copy(os.path.join(V3_FIXTURES, "group_consolidated", "sub", "zarr.json"),
                os.path.join(HERE, "corpus", "metadata", "v3_subgroup.json"))
    for name, text in {**V3_METADATA_TEXTS, **METADATA_REGRESSIONS}.items():
        write("metadata", name + ".json", text.encode())


# ---- Shards for fuzz_chunk_decode's sharded-array and shard-index modes ----

def _crc32c_table():
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        table.append(crc)
    return table


CRC32C_TABLE = _crc32c_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc = (crc >> 8) ^ CRC32C_TABLE[(crc ^ byte) & 0xFF]
    return crc ^ 0xFFFFFFFF


# fuzz_chunk_decode's kGeometries (shape, shard, middle, leaf) and kDTypes (numpy dtype,
# stored item size; code 6 is float32 stored as float16).
GEOMETRIES = [
    ((13,), (8,), (4,), (2,)),
    ((7, 9), (4, 6), (2, 6), (2, 3)),
    ((3, 5, 4), (2, 4, 4), (2, 2, 4), (1, 2, 2)),
    ((), (), (), ()),
]
DTYPES = ["u1", "b1", "i2", "i4", "f4", "f8", "f2", "c8"]
INNER_NONE, INNER_ZSTD, INNER_BLOSC, INNER_CRC = range(4)


class ShardLayout:
    def __init__(self, dtype=0, geometry=1, at_end=True, checksum=True, index_big=False,
                 inner=INNER_NONE, crc_after=False, nested=False, big=False, transpose=False):
        self.__dict__.update(locals())
        del self.__dict__["self"]

    def header(self, splice=False, fix=False, threads2=False, shard=0, entry=0, region=0):
        byte1 = (self.at_end | self.checksum << 1 | self.index_big << 2 | self.inner << 3 |
                 self.crc_after << 5 | self.nested << 6 | splice << 7)
        byte2 = self.dtype | self.geometry << 3 | self.big << 5 | fix << 6 | threads2 << 7
        byte3 = shard | self.transpose << 4
        return bytes([0x40, byte1, byte2, byte3, entry, region])

    def index(self, entries):
        """A shard's index of (offset, nbytes) pairs, then its crc32c."""
        order = ">" if self.index_big else "<"
        pairs = b"".join(struct.pack(order + "QQ", *pair) for pair in entries)
        return pairs + (struct.pack("<I", crc32c(pairs)) if self.checksum else b"")

    def shard(self, chunks):
        """A shard holding encoded inner `chunks` (None: empty) in order, with its index."""
        index_size = 16 * len(chunks) + (4 if self.checksum else 0)
        offset = 0 if self.at_end else index_size
        entries, data = [], b""
        for chunk in chunks:
            if chunk is None:
                entries.append((2**64 - 1, 2**64 - 1))
                continue
            entries.append((offset + len(data), len(chunk)))
            data += chunk
        index = self.index(entries)
        return data + index if self.at_end else index + data

    def leaf(self, values):
        """One innermost chunk of `values` (its full shape), encoded."""
        stored = np.dtype(DTYPES[self.dtype]).newbyteorder(">" if self.big else "<")
        array = values.astype(stored)
        if self.transpose:
            array = array.T
        raw = np.ascontiguousarray(array).tobytes()
        if self.inner == INNER_ZSTD:
            raw = numcodecs.Zstd(level=3).encode(raw)
        elif self.inner == INNER_BLOSC:
            raw = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1).encode(
                np.frombuffer(raw, dtype="u%d" % stored.itemsize))
        if self.inner == INNER_CRC or self.crc_after:
            raw = bytes(raw) + struct.pack("<I", crc32c(raw))
        return bytes(raw)

    def whole_shard(self, seed):
        """Shard c/0/... (all inside the array) of values from `seed`: an index and every
        inner chunk, the first left empty."""
        _, shard, middle, leaf = GEOMETRIES[self.geometry]
        rng = np.random.default_rng(seed)

        def leaves(shape):
            grid = [s // c for s, c in zip(shape, leaf)]
            count = int(np.prod(grid)) if grid else 1
            return [self.leaf(rng.integers(0, 100, size=leaf)) for _ in range(count)]

        if not self.nested:
            chunks = leaves(shard)
            chunks[0] = None
            return self.shard(chunks)
        outer = [self.shard(leaves(middle)) for _ in range(
            int(np.prod([s // m for s, m in zip(shard, middle)])) if shard else 1)]
        return self.shard(outer)


def shard_corpus():
    whole = {
        "shard_i2_end_crc_zstd": ShardLayout(dtype=2, inner=INNER_ZSTD),
        "shard_f4_1d_start_blosc": ShardLayout(dtype=4, geometry=0, at_end=False,
                                               checksum=False, inner=INNER_BLOSC),
        "shard_u1_3d_bigindex_crc": ShardLayout(dtype=0, geometry=2, index_big=True,
                                                inner=INNER_CRC),
        "shard_f8_0d": ShardLayout(dtype=5, geometry=3),
        "shard_i2_nested_zstd_crc": ShardLayout(dtype=2, nested=True, inner=INNER_ZSTD,
                                                crc_after=True),
        "shard_c8_1d_start_big": ShardLayout(dtype=7, geometry=0, at_end=False, big=True),
        "shard_f2_zstd_transpose": ShardLayout(dtype=6, inner=INNER_ZSTD, transpose=True),
        "shard_b1_1d": ShardLayout(dtype=1, geometry=0, checksum=False),
    }
    for seed, (name, layout) in enumerate(whole.items()):
        write("chunk", name, layout.header(region=seed * 37 % 256) + layout.whole_shard(seed))
    # Splice mode: one inner chunk (a nested shard for nested sharding) in a valid shard.
    rng = np.random.default_rng(1)
    layout = ShardLayout(dtype=3, inner=INNER_ZSTD, crc_after=True)
    write("chunk", "splice_i4_zstd_crc", layout.header(splice=True, entry=1, region=5) +
          layout.leaf(rng.integers(-50, 50, size=(2, 3))))
    layout = ShardLayout(dtype=4, geometry=2, inner=INNER_CRC, transpose=True)
    write("chunk", "splice_f4_3d_crc_transpose",
          layout.header(splice=True, threads2=True, entry=3, region=9) +
          layout.leaf(rng.normal(size=(1, 2, 2))))
    layout = ShardLayout(dtype=0, geometry=0, nested=True, inner=INNER_BLOSC, at_end=False)
    write("chunk", "splice_u1_nested_blosc",
          layout.header(splice=True, threads2=True, shard=1, entry=1, region=3) +
          layout.shard([layout.leaf(rng.integers(0, 9, size=(2,))) for _ in range(2)]))
    # Shard index mode: a valid index (crc32c, at the end) of a shard with room for it,
    # and builder round trips.
    layout = ShardLayout(checksum=True)
    entries = [(0, 10), (2**64 - 1, 2**64 - 1), (10, 0), (10, 30)]
    write("chunk", "index_end_crc", bytes([0xC0, 0x03 | 1 << 5, 4, 40, 0]) + layout.index(entries))
    layout = ShardLayout(checksum=False, at_end=False, index_big=True)
    entries = [(48, 5), (53, 7), (2**64 - 1, 2**64 - 1)]
    write("chunk", "index_start_big", bytes([0xC0, 0x04 | 1 << 5, 3, 12, 0]) + layout.index(entries))
    write("chunk", "builder_end_crc", bytes([0xC0, 0x13, 9, 0, 0]) +
          bytes([0x20, 0x85, 0x00, 0x80, 0xFF, 0x83, 0x01, 0x90, 0x81, 0x02]))
    write("chunk", "builder_start", bytes([0xC0, 0x10, 5, 0, 0]) + bytes([0x00, 0x81, 0x82]))
    # Regressions: ShardIndex::Decode accepted an index larger than its shard (an 8-byte
    # shard, index at the end: its data bytes wrapped around below zero), and the input
    # the fuzzer found (a negative shard size).
    write("chunk", "regress_index_larger_than_shard",
          bytes([0xC0, 0x01, 1, 8, 0]) + struct.pack("<QQ", 0, 4))
    write("chunk", "regress_index_negative_shard_size",
          bytes.fromhex("ff64617268675f696e3200000000000000675f817d"))


EXPRESSIONS = {
    "dew_point": "td = ((1/273) - 0.0001844*log(0.611*exp(5423*((1/273)-(1/t2)))*rh/100/0.611))**-1",
    "power_signs": "-x**2 + x**-1 - 2**3**2 + ~m",
    "reductions": "mean(x, axis=(0, -1), keepdims=True) - std(x, 0, correction=1) + argmax(x)",
    "where": "where((t > 273.15) & ~isnan(t), t - 273.15, nan)",
    "logic": "not a < 3 or b >= 2 and c != 1e-3",
    "calls": "maximum(arctan2(y, x), hypot(x, y)) // 2 % 3 + astype(m, float32)",
    "keywords_bad": "sum(x, axes=0) + lg(t2) + (1e",
    "numbers": "1 + 2.5 + .5 + 1. + 1e-3 + 2E+2 + True + None + pi + inf",
}


def expression_corpus():
    for name, text in EXPRESSIONS.items():
        write("expression", name, text.encode())


def cbor(value):
    """The CBOR of a dict, list, str, bytes, bool, None or int (what the codec writes)."""
    def head(major, length):
        if length < 24:
            return bytes([major << 5 | length])
        for extra, size in ((24, 1), (25, 2), (26, 4), (27, 8)):
            if length < 1 << (8 * size):
                return bytes([major << 5 | extra]) + length.to_bytes(size, "big")
        raise ValueError(length)
    if value is None:
        return b"\xf6"
    if isinstance(value, bool):
        return b"\xf5" if value else b"\xf4"
    if isinstance(value, int):
        return head(0, value) if value >= 0 else head(1, -1 - value)
    if isinstance(value, str):
        return head(3, len(value.encode())) + value.encode()
    if isinstance(value, bytes):
        return head(2, len(value)) + value
    if isinstance(value, list):
        return head(4, len(value)) + b"".join(cbor(item) for item in value)
    return head(5, len(value)) + b"".join(cbor(k) + cbor(v) for k, v in sorted(value.items()))


def double_bits(value):
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def node(kind, op, dtype, shape, chunks, inputs=(), **detail):
    return dict(kind=kind, op=op, dtype=dtype, shape=list(shape), chunks=list(chunks),
                inputs=list(inputs), **detail)


def graph(nodes, outputs):
    return cbor({"format": "tessera-graph", "version": 1, "nodes": nodes,
                 "outputs": [{"node": index, "target": None} for index in outputs]})


def graph_corpus():
    data = np.arange(6, dtype="<f8").reshape(2, 3).tobytes()
    write("graph", "elementwise", graph([
        node("in_memory", "asarray", "float64", (2, 3), (1, 3), data=data),
        node("constant", "ones", "float64", (2, 3), (1, 3), value={"float": double_bits(1.0)}),
        node("binary", "add", "float64", (2, 3), (1, 3), (0, 1)),
        node("arange", "arange", "int16", (3,), (2,), start=double_bits(0.5),
             step=double_bits(1.0)),
        node("astype", "astype", "float32", (3,), (2,), (3,)),
        node("unary", "exp", "float32", (3,), (2,), (4,)),
        node("astype", "astype", "float64", (3,), (2,), (5,)),
        node("broadcast", "broadcast_to", "float64", (2, 3), (1, 2), (6,)),
        node("binary", "greater", "bool", (2, 3), (1, 3), (2, 7)),
        node("where", "where", "float64", (2, 3), (1, 3), (8, 2, 7)),
    ], [9, 2]))
    write("graph", "planned_alone", graph([
        node("random", "random", "float64", (4, 6), (2, 3), seed=7),
        node("astype", "astype", "float64", (4, 6), (2, 3), (0,)),
        node("rechunk", "rechunk", "float64", (4, 6), (4, 1), (1,)),
        node("reduce", "sum", "float64", (6,), (1,), (2,), reduction="sum", axes=[0],
             keepdims=False, correction=double_bits(0.0)),
        node("gather", "gather", "float64", (6, 4), (3, 2), (1,),
             index_map={"join_axis": 0, "sources": [{
                 "axes": [[1, 0, 1, 1, 0, None], [0, 3, -1, 1, 0, [3, 1, 0, 2]]],
                 "fixed": [-1, -1], "begin": 0, "end": 6}]}),
        node("contract", "matmul", "float64", (4, 4), (2, 2), (1, 4),
             contraction={"num_batch": 0, "a_dims": [0, -1], "b_dims": [-1, 1]}),
        node("reshape", "reshape", "float64", (4, 2, 3), (2, 1, 3), (1,)),
        node("constant", "full", "complex128", (), (),
             value={"complex": [double_bits(1.5), double_bits(-2.0)]}),
    ], [3, 5, 6, 7]))


S3_NAMESPACE = 'xmlns="http://s3.amazonaws.com/doc/2006-03-01/"'
S3_RESPONSES = {
    "list_aws.xml": f"""<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult {S3_NAMESPACE}>
  <Name>tessera-era5</Name>
  <Prefix>t2m.zarr/</Prefix>
  <KeyCount>3</KeyCount>
  <MaxKeys>1000</MaxKeys>
  <Delimiter>/</Delimiter>
  <IsTruncated>false</IsTruncated>
  <Contents>
    <Key>t2m.zarr/.zarray</Key>
    <LastModified>2024-03-18T09:21:44.000Z</LastModified>
    <ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag>
    <ChecksumAlgorithm>CRC32</ChecksumAlgorithm>
    <Size>412</Size>
    <Owner><ID>75aa57f09aa0c8caeab4f8c24e99d10f</ID><DisplayName>data-team</DisplayName></Owner>
    <StorageClass>STANDARD</StorageClass>
  </Contents>
  <CommonPrefixes><Prefix>t2m.zarr/0/</Prefix></CommonPrefixes>
  <CommonPrefixes><Prefix>t2m.zarr/1/</Prefix></CommonPrefixes>
</ListBucketResult>
""",
    "list_truncated_url.xml": f"""<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult {S3_NAMESPACE}><Name>b</Name><Prefix>dir%2F</Prefix>
<ContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</ContinuationToken>
<NextContinuationToken>1Xn8+/dc0aVzPcQnh8nE4Ow/fJ1Pw==</NextContinuationToken>
<KeyCount>2</KeyCount><MaxKeys>2</MaxKeys><EncodingType>url</EncodingType>
<IsTruncated>true</IsTruncated>
<Contents><Key>dir/a+b%2Bc%0A%e2%82%ac</Key><Size>9223372036854775807</Size></Contents>
<Contents><Key>dir/c/0/0</Key><Size>0</Size></Contents>
</ListBucketResult>
""",
    "list_empty.xml": "<ListBucketResult><Name>b</Name><Prefix/><KeyCount>0</KeyCount>"
                      "<IsTruncated>false</IsTruncated></ListBucketResult>",
    "list_xml_corners.xml": "\ufeff<?xml version='1.0'?><!-- c -->\n<ListBucketResult a = 'x &amp; y'>"
                            "<Future><Contents><Key>skipped</Key></Contents><x/></Future>"
                            "<?pi data?><Contents><Key>a&amp;b &lt;c&gt; &#65;&#x1F600;&#13;"
                            "<![CDATA[<&>]]>\r\n</Key><Size> 7 </Size><Empty/></Contents >"
                            "</ListBucketResult>\n",
    "error_no_such_key.xml": """<?xml version="1.0" encoding="UTF-8"?>
<Error>
  <Code>NoSuchKey</Code>
  <Message>The specified key does not exist.</Message>
  <Key>t2m.zarr/0/7</Key>
  <RequestId>8C5E9B0D1A2F3E44</RequestId>
  <HostId>c2VjcmV0LWhvc3QtaWQtZm9yLXRlc3Rpbmc=</HostId>
</Error>
""",
    "error_signature.xml": "<Error><Code>SignatureDoesNotMatch</Code><Message>The request "
                           "signature we calculated does not match the signature you provided."
                           "</Message><AWSAccessKeyId>AKIAEXAMPLEEXAMPLE12</AWSAccessKeyId>"
                           "<StringToSign>AWS4-HMAC-SHA256\n20240318T092144Z</StringToSign>"
                           "<RequestId>4442587FB7D0A2F9</RequestId></Error>",
    "error_slow_down.xml": "<Error><Code>SlowDown</Code><Message>Please reduce your request "
                           "rate &amp; retry.</Message><RequestId>1</RequestId></Error>",
    "credentials.ini": "# AWS credentials\r\n[default]\r\naws_access_key_id = AKIATESSERAEXAMPLE01\r\n"
                       "aws_secret_access_key = tEsSeRaSeCrEtEXAMPLEKEY\r\n\r\n"
                       "; staging\r\n[dev]\r\nAWS_Access_Key_ID=DEVID\r\n"
                       "aws_secret_access_key = a=b=c\r\naws_session_token =\r\n",
    "config.ini": "[default]\nregion = us-west-2\nservices = local\n\n"
                  "[profile dev]  # a note\n\tregion\t=\teu-west-2\n"
                  "endpoint_url = http://127.0.0.1:9000/\n"
                  "s3 =\n  addressing_style = path\n  max_concurrent_requests = 20\n"
                  "[services local]\ns3 =\n  endpoint_url = http://127.0.0.1:9000\n",
}


def s3_response_corpus():
    for name, text in S3_RESPONSES.items():
        write("s3_response", name, text.encode())


if __name__ == "__main__":
    for folder in ("metadata", "chunk", "expression", "graph", "s3_response"):
        os.makedirs(os.path.join(HERE, "corpus", folder), exist_ok=True)
    metadata_corpus()
    v3_metadata_corpus()
    chunk_corpus()
    shard_corpus()
    expression_corpus()
    graph_corpus()
    s3_response_corpus()
