"""zarr-python 2's default for new Zarr v2 arrays, which the suites' sources were written
with: Blosc(lz4, level 5, byte shuffle). zarr-python 3 writes v2 arrays with Zstd(level
0) unless told otherwise, whose codec contexts a task must hold, so the suites name the
compressor they mean (`compressor=V2_DEFAULT_COMPRESSOR`)."""

import numcodecs

V2_DEFAULT_COMPRESSOR = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
