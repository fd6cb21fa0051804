#!/usr/bin/python3
"""Writes the .zarray/.zattrs fixtures of zarr_metadata_test.cpp with zarr-python.

Run with the Python that has zarr 2.x and numcodecs (on our machines /usr/bin/python3):
    /usr/bin/python3 src/storage/zarr/testdata/make_fixtures.py
Each fixture is the metadata of one array created by zarr.open; the test parses them
and checks the values listed in the test next to each name.
"""
import os
import shutil
import tempfile

import numcodecs
import numpy as np
import zarr

HERE = os.path.dirname(os.path.abspath(__file__))

ARRAYS = {
    "f8_blosc_default": dict(shape=(100, 50), chunks=(10, 25), dtype="<f8"),
    "f4_nan_zstd": dict(shape=(7,), chunks=(3,), dtype="<f4", fill_value=np.nan,
                        compressor=numcodecs.Zstd(level=3)),
    "i2_bigendian_lz4_f_order": dict(shape=(4, 5, 6), chunks=(2, 5, 3), dtype=">i2",
                                     fill_value=-7, order="F",
                                     compressor=numcodecs.LZ4(acceleration=2)),
    "u8_max_zlib_slash": dict(shape=(10, 10), chunks=(5, 5), dtype="<u8",
                              fill_value=np.iinfo(np.uint64).max,
                              compressor=numcodecs.Zlib(level=6), dimension_separator="/"),
    "b1_uncompressed_0d": dict(shape=(), dtype="|b1", fill_value=True, compressor=None),
    "i8_gzip_zlib_filter": dict(shape=(1000,), chunks=(100,), dtype="<i8", fill_value=None,
                                compressor=numcodecs.GZip(level=5),
                                filters=[numcodecs.Zlib(level=1)]),
    "u1_blosc_zstd_bitshuffle": dict(shape=(64, 64), chunks=(64, 64), dtype="|u1",
                                     fill_value=255,
                                     compressor=numcodecs.Blosc(cname="zstd", clevel=9,
                                                                shuffle=2, blocksize=4096)),
    "f8_neg_inf_autoshuffle_dot": dict(shape=(3, 3), chunks=(2, 2), dtype=">f8",
                                       fill_value=-np.inf, dimension_separator=".",
                                       compressor=numcodecs.Blosc(
                                           shuffle=numcodecs.Blosc.AUTOSHUFFLE)),
    "i1_chunk_larger_than_shape": dict(shape=(5,), chunks=(100,), dtype="|i1",
                                       fill_value=-128, dimension_separator="."),
    "u4_empty_shape": dict(shape=(0, 3), chunks=(1, 3), dtype="<u4", fill_value=0,
                           dimension_separator="."),
    "c16_blosc": dict(shape=(4,), chunks=(2,), dtype="<c16"),
    # float16: a storage type, held as float32.
    "f2_blosc": dict(shape=(4,), chunks=(2,), dtype="<f2"),
    # Unsupported by Tessera: the parser must reject each with a clear FormatError.
    "unsupported_delta_filter": dict(shape=(10,), chunks=(5,), dtype="<f8",
                                     filters=[numcodecs.Delta(dtype="<f8")]),
    "unsupported_datetime": dict(shape=(4,), chunks=(2,), dtype="<M8[ns]"),
    "unsupported_bytes": dict(shape=(4,), chunks=(2,), dtype="|S10", fill_value=b""),
}


def main():
    work = tempfile.mkdtemp()
    try:
        for name, kwargs in ARRAYS.items():
            path = os.path.join(work, name + ".zarr")
            array = zarr.open(path, mode="w", **kwargs)
            if name == "f8_blosc_default":
                array.attrs["_ARRAY_DIMENSIONS"] = ["y", "x"]
                array.attrs["units"] = "K"
                array.attrs["long_name"] = "2 m temperature \u00b0"
                array.attrs["valid_range"] = [-100.5, 60]
                shutil.copy(os.path.join(path, ".zattrs"),
                            os.path.join(HERE, name + ".zattrs"))
            shutil.copy(os.path.join(path, ".zarray"), os.path.join(HERE, name + ".zarray"))
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
