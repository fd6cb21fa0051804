#!/usr/bin/python3
"""Writes the fuzzers' seed corpora (run with the Python that has numcodecs and zarr):
    /usr/bin/python3 fuzz/make_corpus.py
corpus/metadata: .zarray and .zattrs documents written by zarr-python.
corpus/chunk: numcodecs frames behind fuzz_chunk_decode's 7-byte header (see there).
corpus/expression: calculator expressions (`tessera calc`), good and bad.
"""
import os
import shutil
import struct
import tempfile

import numcodecs
import numpy as np
import zarr

HERE = os.path.dirname(os.path.abspath(__file__))
CNAMES = ["lz4", "lz4hc", "zstd", "blosclz", "zlib"]


def header(codec_index, param1, param2=0, param3=0, decoded_size=0, round_trip=False):
    first = codec_index | (0x80 if round_trip else 0)
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


if __name__ == "__main__":
    for folder in ("metadata", "chunk", "expression"):
        os.makedirs(os.path.join(HERE, "corpus", folder), exist_ok=True)
    metadata_corpus()
    chunk_corpus()
    expression_corpus()
