#!/usr/bin/env python3
"""The same work from Python on Tessera, Dask (threads, plain and with glibc told to keep
freed memory), Cubed (threads) and numpy in RAM, in one run, printing one table of wall
time and peak RSS. Each (tool, workload) runs in a fresh process under GNU time.

    .venv/bin/python bench/python_compare.py                  # the issue's sizes (scale 1)
    .venv/bin/python bench/python_compare.py --scale 0.25 --repeat 1

Workloads (their inputs written once with zarr-python, Zarr v2, blosc-lz4; every tool
writes its result the same way):
  rechunk    the seed rechunk: float64 (10000 x scale, 10000), chunks (.., 1000) to (1000, 10000)
  dewpoint   seed-003's dew point over two float32 (32 x scale, 4000, 4000) inputs, 64 MB chunks
  meansum    mean over axis 0 and the total sum of a float64 (10000 x scale, 5000) array
"tessera-cli" is the same work through the `tessera` command (C++ alone, no Python):
the rechunk as `tessera rechunk`, the dew point as `tessera calc`; the command has no
form for mean-and-sum. Its binary: $TESSERA_BIN, else `tessera` on PATH, else the build's.
Needs PYTHONPATH with the tessera package (build/python) or an installed one."""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BLOSC = {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1}
TOOLS = ["tessera", "tessera-cli", "dask", "dask-keep", "cubed", "numpy"]
WORKLOADS = ["rechunk", "dewpoint", "meansum"]
KEEP_FREED = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 40)}


def shapes(scale):
    return {
        "rechunk": ((max(1000, int(10000 * scale)), 10000), "float64"),
        "dewpoint": ((max(1, int(32 * scale)), 4000, 4000), "float32"),
        "meansum": ((max(1000, int(10000 * scale)), 5000), "float64"),
    }


def make_inputs(data, scale):
    import numcodecs
    import numpy as np
    import zarr
    rng = np.random.default_rng(0)
    shape, dtype = shapes(scale)["rechunk"]
    sources = {"rechunk": [(shape, (shape[0], 1000))], "meansum": [(shapes(scale)["meansum"][0], (1000, 5000))],
               "dewpoint": [(shapes(scale)["dewpoint"][0], (1, 4000, 4000))] * 2}
    for workload, arrays in sources.items():
        _, dtype = shapes(scale)[workload]
        for index, (shape, chunks) in enumerate(arrays):
            path = os.path.join(data, f"{workload}-{index}.zarr")
            if os.path.exists(path):
                continue
            array = zarr.create_array(path, shape=shape, chunks=chunks, dtype=dtype, zarr_format=2,
                                      compressors=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1))
            low, high = (250, 310) if (workload, index) == ("dewpoint", 0) else (10, 100)
            for start in range(0, shape[0], chunks[0]):
                block = (array[start:start + chunks[0]].shape)
                array[start:start + chunks[0]] = rng.uniform(low, high, block).astype(dtype)


def target_for(path, shape, chunks, dtype):
    import numcodecs
    import zarr
    return zarr.create_array(path, shape=shape, chunks=chunks, dtype=dtype, zarr_format=2,
                             compressors=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1),
                             overwrite=True)


def dew_point(xp, t2, rh):
    es = 0.611 * xp.exp(5423 * ((1 / 273) - (1 / t2)))
    e_vap = (es * rh) / 100.0
    return ((1 / 273) - 0.0001844 * xp.log(e_vap / 0.611)) ** -1


def child(tool, workload, data, out, allowed_mem):
    source = [os.path.join(data, f"{workload}-{i}.zarr") for i in range(2)]
    result = os.path.join(out, "result.zarr")
    if tool == "tessera":
        import tessera
        spec = tessera.Spec(work_dir=out, allowed_mem=allowed_mem)
        arrays = [tessera.from_zarr(p, spec=spec) for p in source if os.path.exists(p)]
        if workload == "rechunk":
            arrays[0].rechunk((1000, arrays[0].shape[1])).to_zarr(result)
        elif workload == "dewpoint":
            dew_point(tessera, *arrays).to_zarr(result)
        else:
            tessera.compute(tessera.mean(arrays[0], axis=0), tessera.sum(arrays[0]))
    elif tool in ("dask", "dask-keep"):
        import dask
        import dask.array as da
        dask.config.set(scheduler="threads")
        arrays = [da.from_zarr(p) for p in source if os.path.exists(p)]
        if workload == "rechunk":
            x = arrays[0].rechunk((1000, arrays[0].shape[1]))
            da.store(x, target_for(result, x.shape, (1000, x.shape[1]), x.dtype), lock=False)
        elif workload == "dewpoint":
            x = dew_point(da, *arrays)
            da.store(x, target_for(result, x.shape, x.chunksize, x.dtype), lock=False)
        else:
            dask.compute(arrays[0].mean(axis=0), arrays[0].sum())
    elif tool == "cubed":
        import cubed
        import cubed.array_api as xp
        spec = cubed.Spec(work_dir=out, allowed_mem=allowed_mem, executor_name="threads")
        arrays = [cubed.from_zarr(p, spec=spec) for p in source if os.path.exists(p)]
        if workload == "rechunk":
            x = arrays[0].rechunk((1000, arrays[0].shape[1]))
            cubed.store(x, target_for(result, x.shape, (1000, x.shape[1]), x.dtype))
        elif workload == "dewpoint":
            x = dew_point(xp, *arrays)
            cubed.store(x, target_for(result, x.shape, x.chunksize, x.dtype))
        else:
            cubed.compute(xp.mean(arrays[0], axis=0), xp.sum(arrays[0]))
    else:  # numpy in RAM: read whole, compute, write whole
        import numpy as np
        import zarr
        arrays = [zarr.open_array(p, mode="r")[...] for p in source if os.path.exists(p)]
        if workload == "rechunk":
            target_for(result, arrays[0].shape, (1000, arrays[0].shape[1]), arrays[0].dtype)[...] = arrays[0]
        elif workload == "dewpoint":
            x = dew_point(np, *arrays)
            target_for(result, x.shape, (1,) + x.shape[1:], x.dtype)[...] = x
        else:
            arrays[0].mean(axis=0), arrays[0].sum()


DEW_POINT_FORMULA = ("td = ((1 / 273) - 0.0001844 * log((0.611 * exp(5423 * ((1 / 273) - (1 / t2)))"
                     " * rh / 100.0) / 0.611)) ** -1")


def cli_command(workload, data, out, allowed_mem):
    """The `tessera` command doing `workload`, or None where it has no form for it."""
    binary = (os.environ.get("TESSERA_BIN") or shutil.which("tessera")
              or os.path.join(os.path.dirname(__file__), "..", "build", "src", "cli", "tessera"))
    source = [os.path.join(data, f"{workload}-{i}.zarr") for i in range(2)]
    result = os.path.join(out, "result.zarr")
    common = ["--allowed-mem", allowed_mem, "--work-dir", out, "--quiet", "--codec", "blosc-lz4"]
    if workload == "rechunk":
        columns = shapes(1)["rechunk"][0][1]
        return [binary, "rechunk", source[0], result, "--chunks", f"1000,{columns}"] + common
    if workload == "dewpoint":
        return [binary, "calc", DEW_POINT_FORMULA, "--input", f"t2={source[0]}",
                "--input", f"rh={source[1]}", "--output", result] + common
    return None


def measure(tool, workload, data, allowed_mem):
    out = tempfile.mkdtemp(prefix=f"bench-{tool}-{workload}-", dir=data)
    env = dict(os.environ, TESSERA_HISTORY="off", TESSERA_PROGRESS="0")
    if tool == "dask-keep":
        env.update(KEEP_FREED)
    with tempfile.NamedTemporaryFile(mode="r") as peak:
        start = time.perf_counter()
        if tool == "tessera-cli":
            command = cli_command(workload, data, out, allowed_mem)
            if command is None:
                shutil.rmtree(out, ignore_errors=True)
                return None, None, "n/a"
        else:
            command = [sys.executable, __file__, "--child", tool, workload, "--data", data,
                       "--out", out, "--allowed-mem", allowed_mem]
        run = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", peak.name] + command,
                             capture_output=True, text=True, env=env)
        seconds = time.perf_counter() - start
        kib = peak.read().split()
    shutil.rmtree(out, ignore_errors=True)
    if run.returncode != 0:
        return None, None, run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "failed"
    return seconds, int(kib[-1]) * 1024, None


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", default=None, help="where inputs are kept (default: a temp dir)")
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--allowed-mem", default="1GB")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(*args.child, args.data, args.out, args.allowed_mem)
        return
    data = args.data or tempfile.mkdtemp(prefix="tessera-python-bench-")
    os.makedirs(data, exist_ok=True)
    make_inputs(data, args.scale)
    rows = []
    for workload in args.workloads.split(","):
        for tool in args.tools.split(","):
            runs = [measure(tool, workload, data, args.allowed_mem) for _ in range(args.repeat)]
            failed = [error for _, _, error in runs if error]
            if failed:
                rows.append((workload, tool, None, None, failed[0]))
                continue
            rows.append((workload, tool, statistics.median(s for s, _, _ in runs),
                         max(r for _, r, _ in runs), None))
    print(f"\nscale {args.scale}, allowed_mem {args.allowed_mem}, median of {args.repeat}, peak RSS (max)")
    print(f"| {'workload':9} | {'tool':11} | {'seconds':>8} | {'vs best':>7} | {'peak RSS':>9} |")
    print(f"|{'-' * 11}|{'-' * 13}|{'-' * 10}|{'-' * 9}|{'-' * 11}|")
    for workload in args.workloads.split(","):
        done = [r for r in rows if r[0] == workload and r[2] is not None]
        best = min((r[2] for r in done), default=None)
        for _, tool, seconds, rss, error in (r for r in rows if r[0] == workload):
            if error == "n/a":
                print(f"| {workload:9} | {tool:11} | {'n/a':>8} | {'':7} | {'':9} |")
            elif error:
                print(f"| {workload:9} | {tool:11} | {'failed':>8} | {'':7} | {'':9} |  {error[:60]}")
            else:
                print(f"| {workload:9} | {tool:11} | {seconds:8.2f} | {seconds / best:6.2f}x | "
                      f"{rss / 1e6:7.0f}MB |")
    if not args.data:
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
