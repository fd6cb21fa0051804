#!/usr/bin/python3
"""Reductions of a Zarr array: Tessera vs Dask vs numpy in memory.

Generates once (kept in --workdir, regenerated when the version, shape, chunks or codec
differ) a float32 Zarr array of random normal values, shape (20000, 20000) (1.6 GB), chunks
(2000, 2000) (16 MB), blosc lz4 level 5 with byte shuffle (or no compression, --codec
none), reads its files once so every tool reads from the page cache, then runs each
scenario with each tool, every run in a fresh process so each peak RSS (the child's own
ru_maxrss, from wait4) is that run's own, and prints a markdown table.

Scenarios (numpy's dtypes: float32 in, float32 out):
  mean0  mean over axis 0 (one value per column)     sum    sum over every axis
  sum0   sum over axis 0                             mean1  mean over axis 1
  max    max over every axis                         std0   standard deviation, axis 0

Tools:
  tessera  bench reduce_bench: from_zarr, the reduction, compute() into memory (planned
           as rounds of partial reductions under a Spec; --threads workers)
  dask     da.from_zarr, the same reduction, .compute() with the threaded scheduler,
           num_workers = --threads
  numpy    the whole array loaded into RAM first (not timed), then np.mean(x, axis=0),
           np.sum(x), ...: the in-memory limit (no reading, no decoding), not a competitor

Every tool's result is saved (.npy, not timed) and compared with a float64 reference
computed from the array: each element within 1e-5 of its scale (for sums and means the
same reduction of |x|), and Tessera's with numpy's within the same tolerance.

Run with the system Python (numpy, zarr 2, numcodecs and dask live there):
  /usr/bin/python3 bench/compare_reduce.py --bench build-bench/bench/reduce_bench
  /usr/bin/python3 bench/compare_reduce.py --bench ... --codec none --repeat 1

See bench/README.md.
"""
import argparse
import json
import os
import shutil
import sys
import time

from bench_util import cpu_seconds, format_size, measure, python_child, read_files, stored_bytes

SHAPE = (20000, 20000)
CHUNKS = (2000, 2000)
SEED = 20240611
INPUT_VERSION = 1  # bump when the generated values change: stale inputs are regenerated
SCENARIOS = ("mean0", "sum", "sum0", "mean1", "max", "std0")
TOOLS = ("tessera", "dask", "numpy")
TOLERANCE = 1e-5  # of the scale of each result element
# codec name -> a function building the numcodecs compressor
CODECS = {
    "blosc-lz4": lambda numcodecs: numcodecs.Blosc(cname="lz4", clevel=5,
                                                   shuffle=numcodecs.Blosc.SHUFFLE),
    "none": lambda numcodecs: None,
}


# ---- the reductions, once for numpy and dask arrays alike --------------------------------

def reduce(scenario, x, module):
    """The scenario's reduction of `x`; `module` is numpy or dask.array."""
    if scenario == "mean0":
        return module.mean(x, axis=0)
    if scenario == "sum":
        return module.sum(x)
    if scenario == "sum0":
        return module.sum(x, axis=0)
    if scenario == "mean1":
        return module.mean(x, axis=1)
    if scenario == "max":
        return module.max(x)
    return module.std(x, axis=0)  # std0


def reference(scenario, x):
    """(float64 result, scale of each element) for the check."""
    import numpy as np
    if scenario in ("max", "std0"):
        exact = (np.max(x) if scenario == "max" else np.std(x, axis=0, dtype=np.float64))
        exact = np.asarray(exact, dtype=np.float64)
        return exact, np.maximum(np.abs(exact), np.finfo(np.float32).tiny)
    axis = {"mean0": 0, "sum0": 0, "mean1": 1, "sum": None}[scenario]
    total = np.sum(x, axis=axis, dtype=np.float64)
    magnitude = np.zeros_like(total)
    for begin in range(0, x.shape[0], CHUNKS[0]):  # |x| a row block at a time
        block = np.abs(x[begin:begin + CHUNKS[0]])
        if axis == 1:
            magnitude[begin:begin + CHUNKS[0]] = np.sum(block, axis=1, dtype=np.float64)
        else:
            magnitude += np.sum(block, axis=axis, dtype=np.float64)
    if scenario.startswith("mean"):
        count = x.shape[axis]
        total, magnitude = total / count, magnitude / count
    return total, magnitude


# ---- child processes: one job each, reporting their own peak RSS through wait4 -----------

def child_generate(args):
    """Writes the input unless one of this shape, chunks, codec and version is there. One
    row of chunks at a time, so the child holds 160 MB."""
    import numcodecs
    import numpy as np
    import zarr
    stamp = {"version": INPUT_VERSION, "seed": SEED, "codec": args.codec}
    try:
        existing = zarr.open_array(args.x, mode="r")
        if (existing.shape == SHAPE and existing.chunks == CHUNKS
                and existing.attrs.get("compare_reduce") == stamp):
            return {"generated": False}
    except Exception:  # missing or unreadable: written below
        pass
    start = time.perf_counter()
    array = zarr.open_array(args.x, mode="w", shape=SHAPE, chunks=CHUNKS, dtype="<f4",
                            compressor=CODECS[args.codec](numcodecs))
    for index, begin in enumerate(range(0, SHAPE[0], CHUNKS[0])):
        rng = np.random.default_rng([SEED, index])
        array[begin:begin + CHUNKS[0]] = rng.standard_normal(
            (min(CHUNKS[0], SHAPE[0] - begin), SHAPE[1]), dtype=np.float32)
    array.attrs["compare_reduce"] = stamp
    return {"generated": True, "seconds": time.perf_counter() - start}


def child_warm(args):
    return {"bytes": read_files(args.x)}


def child_dask(args):
    import dask
    import dask.array as da
    import numpy as np
    dask.config.set(scheduler="threads", num_workers=args.threads)
    x = da.from_zarr(args.x)  # opening (metadata) not timed, as for Tessera
    cpu = cpu_seconds()
    start = time.perf_counter()
    result = np.asarray(reduce(args.scenario, x, da).compute())
    seconds = time.perf_counter() - start
    cpu = cpu_seconds() - cpu
    np.save(args.save, result.astype(np.float64))
    return {"seconds": seconds, "cpu_seconds": cpu, "dtype": str(result.dtype),
            "checksum": float(np.sum(result, dtype=np.float64))}


def child_numpy(args):
    import numpy as np
    import zarr
    x = zarr.open_array(args.x, mode="r")[...]  # into RAM, not timed
    cpu = cpu_seconds()
    start = time.perf_counter()
    result = np.asarray(reduce(args.scenario, x, np))
    seconds = time.perf_counter() - start
    cpu = cpu_seconds() - cpu
    np.save(args.save, result.astype(np.float64))
    return {"seconds": seconds, "cpu_seconds": cpu, "dtype": str(result.dtype),
            "checksum": float(np.sum(result, dtype=np.float64))}


def child_verify(args):
    """Every saved result against the float64 reference, and Tessera's against numpy's:
    the largest |difference| / scale over the result's elements."""
    import numpy as np
    import zarr
    x = zarr.open_array(args.x, mode="r")[...]
    exact, scale = reference(args.scenario, x)
    results = {}
    for item in args.outputs:
        tool, path = item.split("=", 1)
        results[tool] = np.load(path)
    errors, problems = {}, []
    for tool, values in results.items():
        if values.shape != exact.shape:
            problems.append(f"{tool}: shape {values.shape}, expected {exact.shape}")
            continue
        errors[tool] = float(np.max(np.abs(values - exact) / scale))
    tessera_vs_numpy = None
    if "tessera" in results and "numpy" in results and not problems:
        tessera_vs_numpy = float(np.max(np.abs(results["tessera"] - results["numpy"]) / scale))
        if tessera_vs_numpy > TOLERANCE:
            problems.append(f"tessera vs numpy: {tessera_vs_numpy:.2e} of the scale")
    problems += [f"{tool} vs float64: {error:.2e} of the scale"
                 for tool, error in errors.items() if error > TOLERANCE]
    return {"errors": errors, "tessera_vs_numpy": tessera_vs_numpy, "problems": problems}


CHILDREN = {"generate": child_generate, "warm": child_warm, "dask": child_dask,
            "numpy": child_numpy, "verify": child_verify}


def run_child(args):
    print(json.dumps(CHILDREN[args.child](args)))


# ---- the parent: never loads data; every run in a fresh process ----------------------------

def tool_command(args, tool, scenario, x, save):
    if tool == "tessera":
        return [args.bench, "--scenario", scenario, "--x", x, "--save", save,
                "--allowed-mem", args.allowed_mem, "--reserved-mem", args.reserved_mem,
                "--threads", str(args.threads)]
    return [sys.executable, os.path.abspath(__file__), "--child", tool, "--scenario", scenario,
            "--x", x, "--save", save, "--threads", str(args.threads)]


def run_tool(args, tool, scenario, x, save):
    """Best of --repeat fresh runs: the JSON of the fastest (`seconds` and `cpu_seconds` of
    the timed stretch, measured inside the child), with the largest peak RSS of the runs."""
    command = tool_command(args, tool, scenario, x, save)
    best, peak = None, 0
    for _ in range(args.repeat):
        code, stdout, stderr, _, rss, _ = measure(command)
        if code != 0:
            sys.exit(f"{' '.join(command)} failed ({code}):\n{stderr}")
        result = json.loads(stdout.strip().splitlines()[-1])
        peak = max(peak, rss)
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    best["peak_rss_bytes"] = peak
    print(f"{scenario} {tool}: {best['seconds']:.3f} s, peak RSS {format_size(peak)}",
          file=sys.stderr)
    return best


def find_bench():
    """The newest build*/bench/reduce_bench of this checkout."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates = []
    for entry in os.listdir(root):
        path = os.path.join(root, entry, "bench", "reduce_bench")
        if entry.startswith("build") and os.access(path, os.X_OK):
            candidates.append((os.path.getmtime(path), path))
    return max(candidates)[1] if candidates else None


def print_tables(args, rows, stored, checks):
    logical = SHAPE[0] * SHAPE[1] * 4
    print(f"input: float32 {SHAPE} random normal ({format_size(logical)}) in chunks {CHUNKS} "
          f"({format_size(CHUNKS[0] * CHUNKS[1] * 4)}), {args.codec} "
          f"({format_size(stored)} stored), read from the page cache; threads "
          f"{args.threads}; CPUs {os.cpu_count()}; best of {args.repeat} run(s)")
    print(f"Tessera spec: allowed_mem {args.allowed_mem}, reserved_mem {args.reserved_mem}, "
          f"workers {args.threads}; numpy: the array in RAM before the clock starts (the "
          f"in-memory limit)\n")
    print("| scenario | tool | seconds | CPU seconds | GB/s | peak RSS | speedup vs Dask | "
          "checksum (sum of the result) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        speedup = "-" if row.get("speedup") is None else f"{row['speedup']:.2f}x"
        tool = "numpy (in memory)" if row["tool"] == "numpy" else row["tool"]
        print(f"| {row['scenario']} | {tool} | {row['seconds']:.3f} | "
              f"{row['cpu_seconds']:.2f} | {logical / 1e9 / row['seconds']:.2f} | "
              f"{format_size(row['peak_rss_bytes'])} | {speedup} | {row['checksum']:.6g} |")

    tessera_rows = [row for row in rows if row["tool"] == "tessera"]
    if tessera_rows:
        print("\nTessera's plan vs what ran (per op; measured = peak chunk memory a task held, "
              "reserved_mem included; busy = tasks' seconds / (op seconds x workers)):\n")
        print("| scenario | op | kind | tasks | projected | measured max | measured / projected "
              "| op seconds | busy |")
        print("|---|---|---|---:|---:|---:|---:|---:|---:|")
        for row in tessera_rows:
            for op in row["ops"]:
                busy = (op["task_seconds_sum"] / (op["seconds"] * row["workers"])
                        if op["seconds"] > 0 else 0.0)
                print(f"| {row['scenario']} | {op['name']} | {op['kind']} | {op['tasks']} | "
                      f"{format_size(op['projected_mem'])} | "
                      f"{format_size(op['measured_mem_max'])} | "
                      f"{op['measured_over_projected']:.2f} | {op['seconds']:.3f} | "
                      f"{busy:.0%} |")
        print()
        for row in tessera_rows:
            within = "within" if row["peak_rss_bytes"] <= row["budget_bytes"] else "**above**"
            print(f"{row['scenario']}: max_projected_mem "
                  f"{format_size(row['max_projected_mem'])}; peak RSS "
                  f"{format_size(row['peak_rss_bytes'])}, {within} the budget "
                  f"{format_size(row['budget_bytes'])} (reserved + workers x allowed)")
    print()
    for scenario, checked in checks.items():
        described = ", ".join(f"{tool} {error:.1e}" for tool, error in checked["errors"].items())
        versus = ("" if checked["tessera_vs_numpy"] is None
                  else f"; tessera vs numpy {checked['tessera_vs_numpy']:.1e}")
        print(f"verified {scenario}: largest |error| / scale vs float64 (tolerance "
              f"{TOLERANCE:g}): {described}{versus}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", help="the built reduce_bench (default: the newest "
                                        "build*/bench/reduce_bench)")
    parser.add_argument("--scenarios", default="mean0,sum",
                        help=f"comma-separated, from {', '.join(SCENARIOS)}")
    parser.add_argument("--tools", default=",".join(TOOLS),
                        help=f"comma-separated, from {', '.join(TOOLS)}")
    parser.add_argument("--threads", type=int, default=2,
                        help="Tessera's workers, Dask's num_workers (0 = CPU count)")
    parser.add_argument("--allowed-mem", default="512MB", help="Tessera's allowed_mem")
    parser.add_argument("--reserved-mem", default="100MB", help="Tessera's reserved_mem")
    parser.add_argument("--codec", default="blosc-lz4", choices=CODECS,
                        help="codec of the generated input")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per tool, each a fresh process; the fastest is kept")
    parser.add_argument("--workdir", default="/tmp/tessera-bench-reduce",
                        help="where the input is generated (kept, reused) and results saved")
    parser.add_argument("--verify", action=argparse.BooleanOptionalAction, default=True,
                        help="compare every result with a float64 reference")
    parser.add_argument("--json", help="also write the raw results to this file")
    parser.add_argument("--child", choices=CHILDREN, help=argparse.SUPPRESS)
    parser.add_argument("--scenario", help=argparse.SUPPRESS)
    parser.add_argument("--x", help=argparse.SUPPRESS)
    parser.add_argument("--save", help=argparse.SUPPRESS)
    parser.add_argument("--outputs", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.threads = args.threads or os.cpu_count()

    if args.child:
        run_child(args)
        return
    args.repeat = max(1, args.repeat)
    scenarios, tools = args.scenarios.split(","), args.tools.split(",")
    for scenario in scenarios:
        if scenario not in SCENARIOS:
            sys.exit(f"unknown scenario {scenario!r}; choose from {', '.join(SCENARIOS)}")
    for tool in tools:
        if tool not in TOOLS:
            sys.exit(f"unknown tool {tool!r}; choose from {', '.join(TOOLS)}")
    if "tessera" in tools:
        args.bench = args.bench or find_bench()
        if not args.bench:
            sys.exit("reduce_bench not found: build it and pass --bench PATH")

    os.makedirs(args.workdir, exist_ok=True)
    x = os.path.join(args.workdir, f"x-{args.codec}.zarr")
    generated = python_child(__file__, "generate", "--x", x, "--codec", args.codec)
    if generated["generated"]:
        print(f"generated {x} in {generated['seconds']:.1f} s", file=sys.stderr)
    python_child(__file__, "warm", "--x", x)  # page cache warm for every tool alike
    results_dir = os.path.join(args.workdir, "results")
    os.makedirs(results_dir, exist_ok=True)
    rows, checks, problems = [], {}, []
    try:
        for scenario in scenarios:
            results, saved = {}, {}
            for tool in tools:
                saved[tool] = os.path.join(results_dir, f"{scenario}-{tool}.npy")
                results[tool] = run_tool(args, tool, scenario, x, saved[tool])
            if args.verify:
                checks[scenario] = python_child(
                    __file__, "verify", "--scenario", scenario, "--x", x, "--outputs",
                    *[f"{tool}={path}" for tool, path in saved.items()])
                problems += [f"{scenario}: {problem}"
                             for problem in checks[scenario]["problems"]]
            dtypes = {tool: result["dtype"] for tool, result in results.items()}
            if len(set(dtypes.values())) > 1:
                problems.append(f"{scenario}: result dtypes differ: {dtypes}")
            dask_seconds = results["dask"]["seconds"] if "dask" in results else None
            for tool in tools:
                rows.append({**results[tool], "scenario": scenario, "tool": tool,
                             "speedup": dask_seconds / results[tool]["seconds"]
                             if dask_seconds else None})
    finally:
        shutil.rmtree(results_dir, ignore_errors=True)
    print_tables(args, rows, stored_bytes(x), checks)
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"rows": rows, "verified": checks}, file, indent=2)
    if problems:
        sys.exit("verification failed: " + "; ".join(problems))


if __name__ == "__main__":
    main()
