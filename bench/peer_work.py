"""The work of bench/compare_peers.py: the workloads' inputs, and what each tool does for
each workload, run in a child process of its own (`peer_work.py TOOL WORKLOAD DATA OUT
SCALE ALLOWED_MEM`). A child prints one JSON line: the seconds of its timed part
(opening the inputs to the last byte written or the result in RAM; not the interpreter's
start, imports, or making data) and, where its result is in RAM, a checksum of a sample of
it; a result written to OUT/result.zarr is checksummed by another child (`peer_work.py
checksum OUT`), so that its reading is not in the tool's peak RSS. The parent compares
the checksums across tools.

Sizes at scale s (chunks fixed, so the number of chunks grows with s):
  rechunk   float64 (10000, 10000 s), chunks (10000, 1000) -> (1000, 10000)   800 MB at 1
  dewpoint  two float32 (32 s, 4000, 4000), chunks (1, 4000, 4000)            2 x 2 GB at 1
            "-smooth": fields of sines (compress well), "-random": uniform noise
  meansum   mean over axis 0 and the total sum of float64 (10000 s, 5000),
            chunks (1000, 5000)                                               400 MB at 1
  matmul    float64 (n, n) @ (n, n), n = 4000 sqrt(s), chunks (1000, 1000)    2 x 128 MB at 1
  zarr-*    float64 (10000, 10000 s) written from / read into RAM; v2 chunks (1000, 1000),
            v3-sharded shards (2500, 2500) of inner chunks (250, 250)        800 MB at 1
Every array on disk is blosc-lz4 (level 5, byte shuffle)."""
import json
import math
import os
import sys
import time

from bench_util import make_data

BLOSC_V2 = {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}
DEW_POINT_FORMULA = ("td = ((1 / 273) - 0.0001844 * log((0.611 * exp(5423 * ((1 / 273) - (1 / t2)))"
                     " * rh / 100.0) / 0.611)) ** -1")


# ---- sizes ------------------------------------------------------------------------------

def rechunk_shape(scale):
    return (10000, max(1000, round(10000 * scale)))


def rechunk_target(scale):
    """The rechunk's target chunks: (1000, 10000), clipped to the array."""
    return (1000, min(10000, rechunk_shape(scale)[1]))


def dewpoint_shape(scale):
    return (max(1, round(32 * scale)), 4000, 4000)


def meansum_shape(scale):
    return (max(1000, round(10000 * scale)), 5000)


def matmul_n(scale):
    return max(1000, round(4000 * math.sqrt(scale) / 1000) * 1000)


def zarr_shape(scale):
    return (10000, max(2500, round(10000 * scale)))


def inputs_of(workload, data, scale):
    """The input arrays' paths of `workload` at `scale` under `data`."""
    tag = f"{scale:g}"
    if workload.startswith("dewpoint"):
        kind = workload.split("-")[1]
        return [os.path.join(data, f"dewpoint-{kind}-{name}-{tag}.zarr") for name in ("t2", "rh")]
    if workload == "matmul":
        return [os.path.join(data, f"matmul-{name}-{tag}.zarr") for name in ("a", "b")]
    if workload.startswith("zarr-read"):
        fmt = workload.split("-", 2)[2]
        return [os.path.join(data, f"zarr-{fmt}-{tag}.zarr")]
    if workload.startswith("zarr-write"):
        return []
    return [os.path.join(data, f"{workload}-{tag}.zarr")]


def logical_bytes(workload, scale):
    """Decoded bytes of the workload's inputs (for a write: of the array written)."""
    if workload == "rechunk":
        return math.prod(rechunk_shape(scale)) * 8
    if workload.startswith("dewpoint"):
        return 2 * math.prod(dewpoint_shape(scale)) * 4
    if workload == "meansum":
        return math.prod(meansum_shape(scale)) * 8
    if workload == "matmul":
        return 2 * matmul_n(scale) ** 2 * 8
    return math.prod(zarr_shape(scale)) * 8


# ---- inputs (written once with zarr-python, Zarr v2 or v3 sharded, blosc-lz4) -----------

def zarr_array(path, shape, chunks, dtype, fmt="v2", overwrite=True):
    import numcodecs
    import zarr
    if fmt == "v2":
        return zarr.create_array(path, shape=shape, chunks=chunks, dtype=dtype, zarr_format=2,
                                 compressors=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1),
                                 fill_value=0, overwrite=overwrite)
    return zarr.create_array(path, shape=shape, chunks=(250, 250), shards=(2500, 2500),
                             dtype=dtype, zarr_format=3, fill_value=0, overwrite=overwrite,
                             compressors=zarr.codecs.BloscCodec(cname="lz4", clevel=5,
                                                                shuffle="shuffle"))


def dewpoint_slice(kind, name, k, rng):
    import numpy as np
    if kind == "random":
        low, high = (250, 310) if name == "t2" else (10, 100)
        return rng.uniform(low, high, (4000, 4000)).astype(np.float32)
    i = np.arange(4000, dtype=np.float32)[:, None]
    j = np.arange(4000, dtype=np.float32)[None, :]
    if name == "t2":
        return (275 + 25 * np.sin(i / 300 + k / 5) * np.cos(j / 400)).astype(np.float32)
    return (55 + 40 * np.sin(i / 250) * np.sin(j / 350 + k / 7)).astype(np.float32)


def make_inputs(workload, data, scale):
    """Writes the workload's inputs under `data` unless they are there already."""
    import numpy as np
    paths = inputs_of(workload, data, scale)
    if all(os.path.exists(os.path.join(p, "zarr.json")) or os.path.exists(os.path.join(p, ".zarray"))
           for p in paths):
        return
    rng = np.random.default_rng(20261203)
    if workload == "rechunk":
        shape = rechunk_shape(scale)
        array = zarr_array(paths[0] + ".tmp", shape, (10000, 1000), "float64")
        for start in range(0, shape[1], 1000):
            stop = min(shape[1], start + 1000)
            array[:, start:stop] = rng.standard_normal((shape[0], stop - start))
    elif workload.startswith("dewpoint"):
        kind = workload.split("-")[1]
        shape = dewpoint_shape(scale)
        for name, path in zip(("t2", "rh"), paths):
            array = zarr_array(path + ".tmp", shape, (1, 4000, 4000), "float32")
            for k in range(shape[0]):
                array[k] = dewpoint_slice(kind, name, k, rng)
            os.rename(path + ".tmp", path)
        return
    elif workload == "meansum":
        shape = meansum_shape(scale)
        array = zarr_array(paths[0] + ".tmp", shape, (1000, 5000), "float64")
        for start in range(0, shape[0], 1000):
            array[start:start + 1000] = rng.uniform(0, 1, (min(1000, shape[0] - start), 5000))
    elif workload == "matmul":
        n = matmul_n(scale)
        for path in paths:
            array = zarr_array(path + ".tmp", (n, n), (1000, 1000), "float64")
            for start in range(0, n, 1000):
                array[start:start + 1000] = rng.uniform(-1, 1, (1000, n))
            os.rename(path + ".tmp", path)
        return
    else:  # zarr-read-FORMAT: the values every zarr-write workload writes
        shape = zarr_shape(scale)
        array = zarr_array(paths[0] + ".tmp", shape, (1000, 1000), "float64",
                           fmt=workload.split("-", 2)[2])
        array[...] = make_data(shape)
    os.rename(paths[0] + ".tmp", paths[0])


# ---- checksums: a sample of a result, the same for every tool ---------------------------

def sample_sum(array):
    """Sum (float64) of the corners of `array` (numpy or zarr): the first and the last
    256 along every axis."""
    import itertools
    import numpy as np
    total = 0.0
    ends = [[slice(0, min(256, n)), slice(max(0, n - 256), n)] for n in array.shape]
    for corner in itertools.product(*ends):
        total += float(np.asarray(array[corner], dtype=np.float64).sum())
    return total


def meansum_checksum(mean, total):
    return float(total) + float(mean[:256].sum()) + float(mean[-256:].sum())


def result_checksum(out):
    import zarr
    return sample_sum(zarr.open_array(os.path.join(out, "result.zarr"), mode="r"))


# ---- the tools ------------------------------------------------------------------------

def dew_point(xp, t2, rh):
    es = 0.611 * xp.exp(5423 * ((1 / 273) - (1 / t2)))
    e_vap = (es * rh) / 100.0
    return ((1 / 273) - 0.0001844 * xp.log(e_vap / 0.611)) ** -1


def lazy_work(tool, workload, inputs, result, allowed_mem, work_dir, scale):
    """Tessera, Dask or Cubed: the workload as their lazy arrays. Returns a checksum
    (meansum) or None (the result is at `result`)."""
    if tool == "tessera":
        import tessera as lib
        spec = lib.Spec(work_dir=work_dir, allowed_mem=allowed_mem)
        arrays = [lib.from_zarr(p, spec=spec) for p in inputs]
        xp, store = lib, lambda x: x.to_zarr(result, zarr_format=2)
        reduce = lambda a, b: lib.compute(a, b)  # noqa: E731
    elif tool.startswith("dask"):
        import dask
        import dask.array as lib
        dask.config.set(scheduler="threads")
        arrays = [lib.from_zarr(p) for p in inputs]
        xp, reduce = lib, lambda a, b: dask.compute(a, b)  # noqa: E731
        store = lambda x: lib.store(  # noqa: E731
            x, zarr_array(result, x.shape, x.chunksize, x.dtype), lock=False)
    else:
        import cubed
        import cubed.array_api as xp
        spec = cubed.Spec(work_dir=work_dir, allowed_mem=allowed_mem, executor_name="threads")
        arrays = [cubed.from_zarr(p, spec=spec) for p in inputs]
        store = lambda x: cubed.store(x, zarr_array(result, x.shape, x.chunksize, x.dtype))  # noqa: E731
        reduce = lambda a, b: cubed.compute(a, b)  # noqa: E731
    if workload == "rechunk":
        store(arrays[0].rechunk(rechunk_target(scale)))
    elif workload.startswith("dewpoint"):
        store(dew_point(xp, *arrays))
    elif workload == "matmul":
        store(xp.matmul(arrays[0], arrays[1]))
    else:
        return meansum_checksum(*reduce(xp.mean(arrays[0], axis=0), xp.sum(arrays[0])))
    return None


def numpy_compute(workload, arrays):
    """The workload by numpy on arrays in RAM: the result, or (mean, total) for meansum."""
    import numpy as np
    if workload == "rechunk":
        return np.copy(arrays[0])  # a rechunk in RAM is one copy
    if workload.startswith("dewpoint"):
        return dew_point(np, *arrays)
    if workload == "matmul":
        return arrays[0] @ arrays[1]
    return arrays[0].mean(axis=0), arrays[0].sum()


def tessera_ram_work(workload, inputs, allowed_mem, work_dir):
    """Tessera on data already in RAM, as numpy-ram: the inputs read first by zarr-python
    (not timed), then shared with Tessera (asarray, no copy) in the inputs' chunks and the
    workload computed into numpy. Returns (seconds, checksum)."""
    import tessera
    import zarr
    stored = [zarr.open_array(p, mode="r") for p in inputs]
    arrays = [a[...] for a in stored]
    spec = tessera.Spec(work_dir=work_dir, allowed_mem=allowed_mem)
    start = time.perf_counter()
    xs = [tessera.asarray(a, chunks=s.chunks, spec=spec) for a, s in zip(arrays, stored)]
    if workload == "meansum":
        mean, total = tessera.compute(tessera.mean(xs[0], axis=0), tessera.sum(xs[0]))
        return time.perf_counter() - start, meansum_checksum(mean, total)
    out = tessera.matmul(*xs) if workload == "matmul" else dew_point(tessera, *xs)
    values = out.compute()
    return time.perf_counter() - start, sample_sum(values)


def numpy_work(tool, workload, inputs, result, scale):
    """numpy. "numpy": through zarr-python, read whole, compute, write whole, all timed.
    "numpy-ram": the inputs read first (not timed), only the computation timed, nothing
    written. Returns (seconds, checksum): the checksum of a result kept in RAM, None for
    one written to `result`."""
    import zarr
    start = time.perf_counter()
    arrays = [zarr.open_array(p, mode="r")[...] for p in inputs]
    if tool == "numpy-ram":
        start = time.perf_counter()
    # Through zarr-python a rechunk is the write itself: no copy in RAM first.
    x = arrays[0] if (tool, workload) == ("numpy", "rechunk") else numpy_compute(workload, arrays)
    if workload == "meansum":
        return time.perf_counter() - start, meansum_checksum(*x)
    if tool == "numpy-ram":
        return time.perf_counter() - start, sample_sum(x)
    chunks = {"rechunk": rechunk_target(scale), "matmul": (1000, 1000)}.get(workload, (1,) + x.shape[1:])
    zarr_array(result, x.shape, chunks, x.dtype)[...] = x
    return time.perf_counter() - start, None


def zarr_tool(tool, workload, inputs, result, scale):
    """zarr-python (default pipeline), zarrs (its Rust pipeline) or TensorStore: the
    zarr-read-* and zarr-write-* workloads. Returns (seconds, checksum)."""
    fmt = workload.split("-", 2)[2]
    if tool == "tensorstore":
        import tensorstore as ts
        if workload.startswith("zarr-read"):
            start = time.perf_counter()
            store = ts.open({"driver": "zarr" if fmt == "v2" else "zarr3",
                             "kvstore": {"driver": "file", "path": inputs[0]}}, open=True).result()
            data = store.read().result()
            return time.perf_counter() - start, sample_sum(data)
        shape = zarr_shape(scale)
        data = make_data(shape)
        start = time.perf_counter()
        store = ts.open(tensorstore_spec(result, shape, fmt), create=True, delete_existing=True).result()
        store.write(data).result()
        return time.perf_counter() - start, None
    import zarr
    config = {"threading.max_workers": os.cpu_count()}
    if tool == "zarrs":
        import zarrs  # noqa: F401
        config.update({"codec_pipeline.path": "zarrs.ZarrsCodecPipeline", "codec_pipeline.strict": True})
    zarr.config.set(config)
    if workload.startswith("zarr-read"):
        start = time.perf_counter()
        data = zarr.open_array(inputs[0], mode="r")[...]
        return time.perf_counter() - start, sample_sum(data)
    shape = zarr_shape(scale)
    data = make_data(shape)
    start = time.perf_counter()
    zarr_array(result, shape, (1000, 1000), "float64", fmt=fmt)[...] = data
    return time.perf_counter() - start, None


def tensorstore_spec(path, shape, fmt):
    kvstore = {"driver": "file", "path": path}
    if fmt == "v2":
        return {"driver": "zarr", "kvstore": kvstore,
                "metadata": {"shape": list(shape), "chunks": [1000, 1000], "dtype": "<f8",
                             "compressor": BLOSC_V2, "filters": None, "order": "C",
                             "fill_value": 0.0, "dimension_separator": "."}}
    inner = [{"name": "bytes", "configuration": {"endian": "little"}},
             {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle",
                                                 "typesize": 8, "blocksize": 0}}]
    codecs = [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": [250, 250], "codecs": inner,
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "end"}}]
    return {"driver": "zarr3", "kvstore": kvstore,
            "metadata": {"shape": list(shape), "data_type": "float64", "fill_value": 0.0,
                         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2500, 2500]}},
                         "chunk_key_encoding": {"name": "default"}, "codecs": codecs}}


def floor_work(tool, workload, data, scale):
    """The machine's floors: "memcpy" copies the workload's decoded bytes once between
    buffers already faulted in (of at most 1 GB, reused); "raw-read" reads the files of its inputs (from the page
    cache) into one buffer. Returns seconds."""
    import numpy as np
    if tool == "memcpy":
        # Through buffers of at most 1 GB, so that the floor of a workload larger than
        # RAM is measured too.
        size = logical_bytes(workload, scale)
        piece = min(size, 1 << 30)
        source = np.ones(piece, dtype=np.uint8)
        target = np.ones(piece, dtype=np.uint8)
        start = time.perf_counter()
        for offset in range(0, size, piece):
            count = min(piece, size - offset)
            np.copyto(target[:count], source[:count])
        return time.perf_counter() - start
    files = [os.path.join(directory, name) for path in inputs_of(workload, data, scale)
             for directory, _, names in os.walk(path) for name in names]
    buffer = bytearray(max([os.path.getsize(f) for f in files] + [0]))
    view = memoryview(buffer)
    start = time.perf_counter()
    for name in files:
        with open(name, "rb", buffering=0) as file:
            file.readinto(view)
    return time.perf_counter() - start


def main():
    if sys.argv[1] == "checksum":  # peer_work.py checksum OUT: of OUT/result.zarr
        print(json.dumps({"checksum": result_checksum(sys.argv[2])}))
        return
    if sys.argv[1] == "make-inputs":  # peer_work.py make-inputs WORKLOAD DATA SCALE
        make_inputs(sys.argv[2], sys.argv[3], float(sys.argv[4]))
        return
    tool, workload, data, out, scale, allowed_mem = sys.argv[1:7]
    scale = float(scale)
    inputs = inputs_of(workload, data, scale)
    result = os.path.join(out, "result.zarr")
    checksum = None
    if tool in ("memcpy", "raw-read"):
        print(json.dumps({"seconds": floor_work(tool, workload, data, scale)}))
        return
    if tool == "tessera-ram":
        seconds, checksum = tessera_ram_work(workload, inputs, allowed_mem, out)
    elif tool.startswith("numpy"):
        seconds, checksum = numpy_work(tool, workload, inputs, result, scale)
    elif tool in ("zarr-python", "zarrs", "tensorstore"):
        seconds, checksum = zarr_tool(tool, workload, inputs, result, scale)
    elif tool == "tessera" and workload.startswith("zarr-"):
        import tessera
        fmt = workload.split("-", 2)[2]
        if workload.startswith("zarr-read"):
            start = time.perf_counter()
            values = tessera.from_zarr(inputs[0]).compute()
            seconds, checksum = time.perf_counter() - start, sample_sum(values)
        else:
            shape = zarr_shape(scale)
            values = make_data(shape)
            start = time.perf_counter()
            x = tessera.asarray(values, chunks=(250, 250) if fmt == "v3-sharded" else (1000, 1000))
            x.to_zarr(result, zarr_format=3 if fmt == "v3-sharded" else 2,
                      shards=(2500, 2500) if fmt == "v3-sharded" else None)
            seconds = time.perf_counter() - start
    else:
        start = time.perf_counter()
        checksum = lazy_work(tool, workload, inputs, result, allowed_mem, out, scale)
        seconds = time.perf_counter() - start
    print(json.dumps({"seconds": seconds, "checksum": checksum}))


if __name__ == "__main__":
    main()
