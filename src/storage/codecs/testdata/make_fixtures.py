#!/usr/bin/python3
"""Writes the numcodecs fixtures that codec_test.cpp decodes (independent truth).

Run with the system Python, which has numcodecs (the `python3` on PATH may not):

    /usr/bin/python3 src/storage/codecs/testdata/make_fixtures.py

For each codec configuration it writes `<name>.enc`, numcodecs' encoding of one of a few
small raw inputs (`<input>.raw`), and lists them in fixtures.json:

    {"numcodecs": "0.11.0", "fixtures": [
        {"name": ..., "codec": <numcodecs get_config()>, "itemsize": n,
         "raw": "<input>.raw", "encoded": "<name>.enc"}, ...]}

Inputs are deterministic. GZip output embeds the current time in this numcodecs version, so
rerunning the script changes the gzip files' mtime bytes only.
"""

import json
import os
import sys

import numcodecs
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def make_inputs():
    """Small raw inputs (a few KB): each is (bytes, numpy dtype used to encode it)."""
    rng = np.random.default_rng(20240611)
    smooth = (np.sin(np.arange(512) * 0.01) * 1000.0).astype("<f8")
    counts = (np.arange(1000) // 7 % 50).astype("<i4")
    ramp = (np.arange(777) * 3).astype("<i2")
    noise = rng.integers(0, 256, size=1501, dtype=np.uint8)
    return {
        "smooth_f8": smooth,
        "counts_i4": counts,
        "ramp_i2": ramp,
        "noise_u1": noise,
        "empty_u1": np.zeros(0, dtype=np.uint8),
    }


def configs():
    """(name, codec, input name) for every fixture."""
    out = []
    shuffles = {0: "noshuffle", 1: "shuffle", 2: "bitshuffle"}
    for cname in ["lz4", "lz4hc", "zstd", "blosclz", "zlib"]:
        for shuffle, shuffle_name in shuffles.items():
            codec = numcodecs.Blosc(cname=cname, clevel=5, shuffle=shuffle)
            out.append((f"blosc_{cname}_{shuffle_name}_smooth_f8", codec, "smooth_f8"))
    out += [
        ("blosc_lz4_autoshuffle_noise_u1", numcodecs.Blosc(shuffle=-1), "noise_u1"),
        ("blosc_lz4_autoshuffle_counts_i4", numcodecs.Blosc(shuffle=-1), "counts_i4"),
        ("blosc_zstd_blocksize_counts_i4",
         numcodecs.Blosc(cname="zstd", clevel=3, shuffle=1, blocksize=1024), "counts_i4"),
        ("blosc_lz4_level0_smooth_f8", numcodecs.Blosc(clevel=0), "smooth_f8"),
        ("blosc_lz4_shuffle_ramp_i2", numcodecs.Blosc(), "ramp_i2"),
        ("blosc_lz4_shuffle_noise_u1", numcodecs.Blosc(), "noise_u1"),
        ("blosc_lz4_shuffle_empty_u1", numcodecs.Blosc(), "empty_u1"),
    ]
    for level, name in [(1, "smooth_f8"), (3, "counts_i4"), (-5, "noise_u1"), (19, "ramp_i2"),
                        (1, "empty_u1")]:
        out.append((f"zstd_{level}_{name}".replace("-", "m"), numcodecs.Zstd(level=level), name))
    for acceleration, name in [(1, "smooth_f8"), (10, "counts_i4"), (1, "noise_u1"),
                               (1, "empty_u1")]:
        out.append((f"lz4_{acceleration}_{name}", numcodecs.LZ4(acceleration=acceleration), name))
    for codec_type in [numcodecs.Zlib, numcodecs.GZip]:
        for level, name in [(1, "smooth_f8"), (9, "counts_i4"), (5, "noise_u1"),
                            (1, "empty_u1")]:
            codec = codec_type(level=level)
            out.append((f"{codec.codec_id}_{level}_{name}", codec, name))
    return out


def main():
    inputs = make_inputs()
    for name, array in inputs.items():
        with open(os.path.join(HERE, name + ".raw"), "wb") as f:
            f.write(array.tobytes())
    fixtures = []
    for name, codec, input_name in configs():
        array = inputs[input_name]
        encoded = bytes(codec.encode(array))
        # numcodecs 0.11's Blosc and Zstd decoders reject frames of 0 decoded bytes (they
        # read a 0 size as an error), so empty fixtures are not round-tripped here.
        if array.nbytes:
            decoded = np.frombuffer(codec.decode(encoded), dtype=np.uint8)
            assert decoded.tobytes() == array.tobytes(), name
        with open(os.path.join(HERE, name + ".enc"), "wb") as f:
            f.write(encoded)
        fixtures.append({"name": name, "codec": codec.get_config(),
                         "itemsize": int(array.dtype.itemsize),
                         "raw": input_name + ".raw", "encoded": name + ".enc"})
    manifest = {"numcodecs": numcodecs.__version__, "fixtures": fixtures}
    with open(os.path.join(HERE, "fixtures.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(f"wrote {len(fixtures)} fixtures to {HERE}", file=sys.stderr)


if __name__ == "__main__":
    main()
