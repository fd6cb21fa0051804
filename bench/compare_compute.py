#!/usr/bin/python3
"""Lazy-array pipelines from Zarr to Zarr: Tessera vs Dask vs numpy in memory.

Generates two float32 Zarr inputs once (t2 in about [230, 310] K and rh in [1, 100] %,
shape (S, 4000, 4000), chunks (1, 4000, 4000), blosc lz4 level 5 with byte shuffle, as
bench/compare_io.py writes), then runs each scenario with each tool, every run in a
fresh process so each peak RSS (ru_maxrss) is that run's own, and prints a markdown table.

Scenarios:
  dewpoint       es = 0.611*exp(5423*((1/273)-(1/t2))); e = es*rh/100;
                 td = ((1/273) - 0.0001844*log(e/0.611))**-1        (float32, to Zarr)
  negate_astype  (-t2).astype(float64).astype(float32)               (float32, to Zarr)
  negate_int32   (-t2).astype(int32)                                  (int32, to Zarr)
  copy           +t2: read, decode, encode, write; the I/O floor of the others

Tools:
  tessera      bench compute_bench: from_zarr, the expression, to_zarr (fused, under a Spec)
  dask         da.from_zarr, the same expression, .to_zarr(compute=True), threaded
               scheduler with num_workers = --threads
  numpy        the inputs loaded into RAM first (not timed), then the formula over slabs
               of one chunk each on a ThreadPoolExecutor of --threads threads; writes
               nothing
  dask-tuned, numpy-tuned
               the same with glibc malloc keeping freed memory (MALLOC_MMAP_MAX_=0,
               MALLOC_TRIM_THRESHOLD_=1e12): temporaries reuse pages already faulted in

Run with the system Python (numpy, zarr 2, numcodecs and dask live there):
  /usr/bin/python3 bench/compare_compute.py --bench build/bench/compute_bench
  /usr/bin/python3 bench/compare_compute.py --bench ... --s 4 --scenarios dewpoint

See bench/README.md.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from bench_util import format_size, stored_bytes, peak_rss_bytes, cpu_seconds

ROWS = COLUMNS = 4000
CHUNK_ELEMENTS = ROWS * COLUMNS
INPUT_VERSION = 1  # bump when the generated fields change: stale inputs are regenerated
SEED = 20240611
SCENARIOS = ("dewpoint", "negate_astype", "negate_int32", "copy")
TOOLS = ("tessera", "dask", "dask-tuned", "numpy", "numpy-tuned")
# "-tuned": the same child with glibc malloc told to keep freed memory (no mmap for large
# blocks, no trimming), so chunk-sized numpy temporaries reuse pages already faulted in
# instead of mapping, zeroing and unmapping 64 MB for every one.
TUNED_MALLOC = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": str(10**12)}

# codec name -> (compute_bench --codec, a function building the numcodecs compressor)
CODECS = {
    "blosc-lz4": ("blosc:lz4:5:shuffle",
                  lambda numcodecs: numcodecs.Blosc(cname="lz4", clevel=5,
                                                    shuffle=numcodecs.Blosc.SHUFFLE)),
    "none": ("none", lambda numcodecs: None),
}




# ---- the pipelines, once for numpy and dask arrays alike -------------------------------

def dewpoint(t2, rh, log, exp):
    es = 0.611 * exp(5423 * ((1 / 273) - (1 / t2)))
    e = es * rh / 100
    return ((1 / 273) - 0.0001844 * log(e / 0.611)) ** -1


def pipeline(scenario, inputs, module):
    """The scenario's output from its inputs; `module` is numpy or dask.array."""
    if scenario == "dewpoint":
        return dewpoint(inputs[0], inputs[1], module.log, module.exp)
    x = inputs[0]
    if scenario == "negate_astype":
        return (-x).astype("float64").astype("float32")
    if scenario == "negate_int32":
        return (-x).astype("int32")
    return +x


def scenario_inputs(scenario):
    return ("t2", "rh") if scenario == "dewpoint" else ("t2",)


# ---- the inputs: smooth fields plus noise, one chunk at a time -------------------------

def field_slice(name, index):
    """Slice `index` of input `name`: a few smooth waves (separable, so cheap) that drift
    from slice to slice, plus Gaussian noise; float32."""
    import numpy as np
    rng = np.random.default_rng([SEED, index, 0 if name == "t2" else 1])
    y = np.linspace(0.0, 1.0, ROWS, dtype=np.float32)
    x = np.linspace(0.0, 1.0, COLUMNS, dtype=np.float32)
    phase = np.float32(0.15 * index)
    sin, cos = np.sin, np.cos
    two_pi = np.float32(2 * np.pi)
    # sin(a x + b y) = sin(a x) cos(b y) + cos(a x) sin(b y)
    ax, by = two_pi * 1.3 * x + phase, two_pi * 0.8 * y
    cx, dy = two_pi * 3.0 * x, two_pi * 2.0 * y + phase
    large = np.outer(cos(by), sin(ax)) + np.outer(sin(by), cos(ax))
    small = np.outer(cos(dy), sin(cx)) + np.outer(sin(dy), cos(cx))
    noise = rng.standard_normal((ROWS, COLUMNS), dtype=np.float32)
    if name == "t2":
        values = 270 + 25 * large + 10 * small + 0.5 * noise
        return np.clip(values, 230, 310, out=values).astype(np.float32)
    values = 55 + 35 * large + 8 * small + 2 * noise
    return np.clip(values, 1, 100, out=values).astype(np.float32)


def ensure_inputs(work, slices):
    """Writes t2.zarr and rh.zarr in `work` unless ones of this shape and version are
    there; returns their paths."""
    import numcodecs
    import zarr
    paths = {}
    for name in ("t2", "rh"):
        path = os.path.join(work, f"{name}.zarr")
        paths[name] = path
        try:
            existing = zarr.open_array(path, mode="r")
            if (existing.shape == (slices, ROWS, COLUMNS)
                    and existing.attrs.get("compare_compute_version") == INPUT_VERSION):
                continue
        except Exception:  # missing or unreadable: written below
            pass
        start = time.perf_counter()
        array = zarr.open_array(path, mode="w", shape=(slices, ROWS, COLUMNS),
                                chunks=(1, ROWS, COLUMNS), dtype="<f4",
                                compressor=CODECS["blosc-lz4"][1](numcodecs))
        for index in range(slices):
            array[index] = field_slice(name, index)
        array.attrs["compare_compute_version"] = INPUT_VERSION
        print(f"generated {path}: {format_size(stored_bytes(path))} stored, "
              f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    return paths


# ---- child processes: one run each, reporting their own peak RSS ----------------------

def child_dask(args):
    import dask
    import dask.array as da
    import numcodecs
    dask.config.set(scheduler="threads", num_workers=args.threads)
    inputs = [da.from_zarr(path) for path in args.inputs]
    result = pipeline(args.scenario, inputs, da)
    cpu = cpu_seconds()
    start = time.perf_counter()
    result.to_zarr(args.out, overwrite=True, compute=True,
                   compressor=CODECS[args.codec][1](numcodecs))
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "cpu_seconds": cpu_seconds() - cpu,
            "input_bytes": sum(array.nbytes for array in inputs),
            "output_bytes": result.nbytes}


def child_numpy(args):
    from concurrent.futures import ThreadPoolExecutor
    import numpy as np
    import zarr
    inputs = [zarr.open_array(path, mode="r")[...] for path in args.inputs]  # not timed
    slabs = inputs[0].shape[0]
    cpu = cpu_seconds()
    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.threads) as pool:
        results = list(pool.map(
            lambda k: pipeline(args.scenario, [array[k] for array in inputs], np),
            range(slabs)))
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "cpu_seconds": cpu_seconds() - cpu,
            "input_bytes": sum(array.nbytes for array in inputs),
            "output_bytes": sum(result.nbytes for result in results)}


def child_generate(args):
    return {"paths": ensure_inputs(args.out, args.s)}


def child_verify(args):
    errors, picks = verify(args.scenario, dict(zip(("t2", "rh"), args.inputs)),
                           dict(item.split("=", 1) for item in args.outputs),
                           args.verify_chunks)
    return {"max_rel_error": errors, "chunks": picks}


CHILDREN = {"dask": child_dask, "numpy": child_numpy, "generate": child_generate,
            "verify": child_verify}


def run_child(args):
    result = CHILDREN[args.child](args)
    result["peak_rss_bytes"] = peak_rss_bytes()
    print(json.dumps(result))


def python_child(child, *arguments):
    """Runs this script as child `child` once; returns its JSON line. The parent never
    imports numpy or zarr itself: a child's ru_maxrss starts from its parent's RSS at
    fork (Linux keeps the high-water mark across execve), so the parent stays small."""
    command = [sys.executable, os.path.abspath(__file__), "--child", child, *arguments]
    completed = subprocess.run(command, capture_output=True, text=True)
    sys.stderr.write(completed.stderr)
    if completed.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({completed.returncode})")
    return json.loads(completed.stdout.strip().splitlines()[-1])


# ---- the parent: every run in a fresh process, then the table --------------------------

def run_json(command, repeat, out=None, env=None):
    """Runs `command` `repeat` times, each in a fresh process after the previous output is
    removed and dirty pages are flushed (os.sync, not timed); keeps the fastest run (the
    one least disturbed by other load) and the largest peak RSS."""
    best = None
    peak = 0
    for _ in range(repeat):
        if out:
            shutil.rmtree(out, ignore_errors=True)
        os.sync()
        completed = subprocess.run(command, capture_output=True, text=True, env=env)
        if completed.returncode != 0:
            sys.exit(f"{' '.join(command)} failed ({completed.returncode}):\n"
                     f"{completed.stderr}")
        result = json.loads(completed.stdout.strip().splitlines()[-1])
        peak = max(peak, result["peak_rss_bytes"])
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    best["peak_rss_bytes"] = peak
    return best


def run_tool(args, tool, scenario, paths, out):
    inputs = [paths[name] for name in scenario_inputs(scenario)]
    if tool == "tessera":
        command = [args.bench, "--scenario", scenario, "--out", out,
                   "--allowed-mem", args.allowed_mem, "--reserved-mem", args.reserved_mem,
                   "--threads", str(args.threads), "--codec", CODECS[args.codec][0]]
        if args.pool:
            command += ["--pool", args.pool]
        if scenario == "dewpoint":
            command += ["--t2", inputs[0], "--rh", inputs[1]]
        else:
            command += ["--x", inputs[0]]
        return run_json(command, args.repeat, out)
    child = tool.removesuffix("-tuned")
    env = {**os.environ, **TUNED_MALLOC} if tool.endswith("-tuned") else None
    command = [sys.executable, os.path.abspath(__file__), "--child", child,
               "--scenario", scenario, "--out", out, "--threads", str(args.threads),
               "--codec", args.codec, "--inputs", *inputs]
    return run_json(command, args.repeat, out if child == "dask" else None, env)


def verify(scenario, paths, outputs, sample):
    """Compares each tool's output on `sample` chunks (spread over the array) with
    numpy's result on the same chunks (float32 results: rtol 1e-5; integer ones: equal).
    Returns ({tool: max relative error}, the chunks compared); exits on a mismatch."""
    import numpy as np
    import zarr
    inputs = [zarr.open_array(paths[name], mode="r") for name in scenario_inputs(scenario)]
    slabs = inputs[0].shape[0]
    picks = sorted({round(i * (slabs - 1) / max(sample - 1, 1)) for i in range(sample)})
    errors = {}
    for tool, out in sorted(outputs.items()):
        written = zarr.open_array(out, mode="r")
        worst = 0.0
        for k in picks:
            expected = pipeline(scenario, [array[k] for array in inputs], np)
            actual = written[k]
            if actual.dtype != expected.dtype:
                sys.exit(f"verify {scenario}/{tool}: dtype {actual.dtype}, "
                         f"expected {expected.dtype}")
            if np.issubdtype(expected.dtype, np.integer):
                if not np.array_equal(actual, expected):
                    sys.exit(f"verify {scenario}/{tool}: chunk {k} differs")
                continue
            if not np.allclose(actual, expected, rtol=1e-5, atol=0, equal_nan=True):
                bad = np.argwhere(~np.isclose(actual, expected, rtol=1e-5, atol=0))[0]
                sys.exit(f"verify {scenario}/{tool}: chunk {k} at {tuple(bad)}: "
                         f"{actual[tuple(bad)]!r} vs {expected[tuple(bad)]!r}")
            with np.errstate(divide="ignore", invalid="ignore"):
                relative = np.abs(actual.astype(np.float64) - expected) / np.abs(expected)
            worst = max(worst, float(np.nanmax(relative)))
        errors[tool] = worst
    return errors, picks


def find_bench():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for entry in sorted(os.listdir(root)):
        candidate = os.path.join(root, entry, "bench", "compute_bench")
        if entry.startswith("build") and os.access(candidate, os.X_OK):
            return candidate
    return None


def print_tables(args, rows, paths, checks):
    threads = args.threads
    slices = args.s
    input_size = slices * CHUNK_ELEMENTS * 4
    print(f"inputs: 2 x float32 ({slices}, {ROWS}, {COLUMNS}) in chunks (1, {ROWS}, "
          f"{COLUMNS}), {format_size(input_size)} each "
          f"(stored, blosc-lz4: t2 {format_size(stored_bytes(paths['t2']))}, "
          f"rh {format_size(stored_bytes(paths['rh']))}); output codec {args.codec}; "
          f"threads {threads}; CPUs {os.cpu_count()}; best of {args.repeat} run(s)")
    print(f"Tessera spec: allowed_mem {args.allowed_mem}, reserved_mem {args.reserved_mem}, "
          f"workers {threads}\n")
    print("| scenario | tool | seconds | CPU seconds | GB/s in | peak RSS | speedup vs dask | "
          "vs dask-tuned | budget (reserved + workers x allowed) | RSS within budget |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for row in rows:
        gbps = row["input_bytes"] / 1e9 / row["seconds"]
        speedup = "-" if row.get("speedup") is None else f"{row['speedup']:.2f}x"
        tuned = ("-" if row.get("speedup_tuned") is None
                 else f"{row['speedup_tuned']:.2f}x")
        budget = within = "-"
        if row["tool"] == "tessera":
            budget = format_size(row["budget_bytes"])
            within = "yes" if row["peak_rss_bytes"] <= row["budget_bytes"] else "**no**"
        print(f"| {row['scenario']} | {row['tool']} | {row['seconds']:.2f} | "
              f"{row['cpu_seconds']:.2f} | {gbps:.2f} | "
              f"{format_size(row['peak_rss_bytes'])} | {speedup} | {tuned} | {budget} | "
              f"{within} |")

    tessera_rows = [row for row in rows if row["tool"] == "tessera"]
    if tessera_rows:
        print("\nTessera's plan vs what ran (per op; measured = peak chunk memory a task "
              "held, reserved_mem included):\n")
        print("| scenario | op | fused | tasks | projected | measured max | median | "
              "measured / projected | op seconds |")
        print("|---|---|---|---:|---:|---:|---:|---:|---:|")
        for row in tessera_rows:
            for op in row["ops"]:
                fused = " -> ".join(op.get("fused", [])) or "-"
                print(f"| {row['scenario']} | {op['name']} | {fused} | {op['tasks']} | "
                      f"{format_size(op['projected_mem'])} | "
                      f"{format_size(op['measured_mem_max'])} | "
                      f"{format_size(op['measured_mem_median'])} | "
                      f"{op['measured_over_projected']:.2f} | {op['seconds']:.2f} |")
        print()
        for row in tessera_rows:
            print(f"{row['scenario']}: max_projected_mem "
                  f"{format_size(row['max_projected_mem'])}, peak RSS "
                  f"{format_size(row['peak_rss_bytes'])} (baseline "
                  f"{format_size(row['baseline_rss_bytes'])}, buffer pool capacity "
                  f"{format_size(row['buffer_pool_capacity'])}) vs budget "
                  f"{format_size(row['budget_bytes'])}")
    for scenario, (errors, picks) in checks.items():
        described = ", ".join(f"{tool} max rel. error {error:.1e}"
                              for tool, error in errors.items())
        print(f"verified {scenario} on chunks {picks} against numpy: {described}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", help="path of the built compute_bench")
    parser.add_argument("--s", type=int, default=32,
                        help="slices (chunks) per input; 32 -> 2.05 GB each")
    parser.add_argument("--scenarios", default="dewpoint,negate_astype",
                        help=f"comma-separated, from {', '.join(SCENARIOS)}")
    parser.add_argument("--tools", default="tessera,dask,dask-tuned,numpy",
                        help=f"comma-separated, from {', '.join(TOOLS)}")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads of every tool (0 = CPU count)")
    parser.add_argument("--allowed-mem", default="512MB", help="Tessera's allowed_mem")
    parser.add_argument("--reserved-mem", default="100MB", help="Tessera's reserved_mem")
    parser.add_argument("--pool", help="Tessera's buffer pool capacity (size; default: the "
                                        "library's)")
    parser.add_argument("--codec", default="blosc-lz4", choices=CODECS,
                        help="codec of the outputs (the inputs are always blosc-lz4)")
    parser.add_argument("--dir", help="work directory; inputs there of the same --s are "
                                      "reused (default: a fresh temporary one)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each tool this many times (fresh processes), keep the "
                             "fastest")
    parser.add_argument("--verify-chunks", type=int, default=3,
                        help="chunks of each output compared with numpy (0: no check)")
    parser.add_argument("--json", help="also write the raw results to this file")
    parser.add_argument("--child", choices=CHILDREN, help=argparse.SUPPRESS)
    parser.add_argument("--scenario", help=argparse.SUPPRESS)
    parser.add_argument("--inputs", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--outputs", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.threads = args.threads or os.cpu_count()

    if args.child:
        run_child(args)
        return
    args.repeat = max(1, args.repeat)
    scenarios = args.scenarios.split(",")
    tools = args.tools.split(",")
    for scenario in scenarios:
        if scenario not in SCENARIOS:
            sys.exit(f"unknown scenario {scenario!r}; choose from {', '.join(SCENARIOS)}")
    for tool in tools:
        if tool not in TOOLS:
            sys.exit(f"unknown tool {tool!r}; choose from {', '.join(TOOLS)}")
    if "tessera" in tools:
        args.bench = args.bench or find_bench()
        if not args.bench:
            sys.exit("compute_bench not found: build it and pass --bench PATH")

    work = args.dir or tempfile.mkdtemp(prefix="tessera-compare-compute-")
    os.makedirs(work, exist_ok=True)
    rows = []
    checks = {}
    try:
        paths = python_child("generate", "--out", work, "--s", str(args.s))["paths"]
        for scenario in scenarios:
            results = {}
            outputs = {}
            for tool in tools:
                out = os.path.join(work, f"{scenario}-{tool}.zarr")
                results[tool] = run_tool(args, tool, scenario, paths, out)
                if not tool.startswith("numpy"):
                    outputs[tool] = out
            if args.verify_chunks > 0 and outputs:
                checked = python_child(
                    "verify", "--scenario", scenario,
                    "--verify-chunks", str(args.verify_chunks),
                    "--inputs", *[paths[name] for name in scenario_inputs(scenario)],
                    "--outputs", *[f"{tool}={out}" for tool, out in outputs.items()])
                checks[scenario] = (checked["max_rel_error"], checked["chunks"])
            for out in outputs.values():
                shutil.rmtree(out, ignore_errors=True)
            dask_seconds = results["dask"]["seconds"] if "dask" in results else None
            tuned_seconds = (results["dask-tuned"]["seconds"] if "dask-tuned" in results
                             else None)
            for tool in tools:
                result = results[tool]
                rows.append({**result, "scenario": scenario, "tool": tool,
                             "speedup": dask_seconds / result["seconds"] if dask_seconds
                             else None,
                             "speedup_tuned": tuned_seconds / result["seconds"]
                             if tuned_seconds else None})
        print_tables(args, rows, paths, checks)
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"rows": rows,
                       "verified": {scenario: {"max_rel_error": errors, "chunks": picks}
                                    for scenario, (errors, picks) in checks.items()}},
                      file, indent=2)


if __name__ == "__main__":
    main()
