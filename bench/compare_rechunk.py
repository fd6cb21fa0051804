#!/usr/bin/python3
"""Rechunking a Zarr array into another Zarr array: Tessera vs Dask vs numpy in RAM.

Writes the source once per codec with zarr-python (default: 10000 x 10000 float64 random
normal, 800 MB, in chunks (10000, 1000)), then rechunks it to (1000, 10000), the target
written with the same codec, by:

  tessera-ram   `tessera rechunk` with --total-mem 8GB: the intermediate stays in RAM
  tessera-disk  `tessera rechunk --intermediate disk`: the intermediate goes to --work-dir
  dask          da.from_zarr(src).rechunk(chunks).to_zarr(dst), threaded scheduler,
                num_workers = --workers
  numpy         zarr-python reads the whole source into RAM, then writes it to a target
                created with the new chunks (a reference: no budget at all)

Each measurement runs in a fresh process (the parent never loads data), after the source's
files were read once (page cache warm for every tool alike), the previous output removed
and dirty pages flushed; the fastest of --repeat runs is kept, with the largest peak RSS
(the child's own ru_maxrss, from wait4). Every output is spot-checked against the source
(--verify-chunks target chunks, compared exactly) before it is removed.

Run with the system Python (numpy, zarr 2, numcodecs and dask live there):
  /usr/bin/python3 bench/compare_rechunk.py --tessera build/src/cli/tessera
  /usr/bin/python3 bench/compare_rechunk.py --shape 2000,2000 --source-chunks 2000,200 \\
      --target-chunks 200,2000 --allowed-mem 40MB --repeat 1          # quick

See bench/README.md.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

from bench_util import format_size, measure, python_child, read_files, stored_bytes

SEED = 20240611
SOURCE_VERSION = 1  # bump when the generated values change: stale sources are regenerated
TOOLS = ("tessera-ram", "tessera-disk", "dask", "numpy")
# codec name -> (tessera --codec, a function building the numcodecs compressor)
CODECS = {
    "blosc-lz4": ("blosc:lz4:5:shuffle",
                  lambda numcodecs: numcodecs.Blosc(cname="lz4", clevel=5,
                                                    shuffle=numcodecs.Blosc.SHUFFLE)),
    "none": ("raw", lambda numcodecs: None),
}
UNITS = {"B": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
SIZE = r"(\d+(?:\.\d+)?) (B|kB|MB|GB|TB)"


def parse_shape(text):
    return tuple(int(extent) for extent in text.split(","))



def parse_size(number, unit):
    return float(number) * UNITS[unit]



# ---- child processes: one job each -------------------------------------------------------

def child_generate(args):
    """Writes the source for args.codec unless one with the same shape, chunks, codec and
    version is there. Row block by row block, so the child holds one block at a time."""
    import numcodecs
    import numpy as np
    import zarr
    shape, chunks = parse_shape(args.shape), parse_shape(args.source_chunks)
    stamp = {"version": SOURCE_VERSION, "seed": SEED, "codec": args.codec}
    try:
        existing = zarr.open_array(args.src, mode="r")
        if (existing.shape == shape and existing.chunks == chunks
                and existing.attrs.get("compare_rechunk") == stamp):
            return {"generated": False}
    except Exception:  # missing or unreadable: written below
        pass
    start = time.perf_counter()
    array = zarr.open_array(args.src, mode="w", shape=shape, chunks=chunks, dtype="<f8",
                            compressor=CODECS[args.codec][1](numcodecs))
    # One block of whole source chunks along the last dimension at a time.
    step = chunks[-1]
    for index, begin in enumerate(range(0, shape[-1], step)):
        rng = np.random.default_rng([SEED, index])
        block = rng.standard_normal(shape[:-1] + (min(step, shape[-1] - begin),))
        array[..., begin:begin + block.shape[-1]] = block
    array.attrs["compare_rechunk"] = stamp
    return {"generated": True, "seconds": time.perf_counter() - start}


def child_dask(args):
    import dask
    import dask.array as da
    import numcodecs
    dask.config.set(scheduler="threads", num_workers=args.workers)
    start = time.perf_counter()
    source = da.from_zarr(args.src)
    source.rechunk(parse_shape(args.target_chunks)).to_zarr(
        args.out, overwrite=True, compute=True, compressor=CODECS[args.codec][1](numcodecs))
    return {"seconds": time.perf_counter() - start}


def child_numpy(args):
    import numcodecs
    import zarr
    start = time.perf_counter()
    values = zarr.open_array(args.src, mode="r")[...]
    target = zarr.open_array(args.out, mode="w", shape=values.shape,
                             chunks=parse_shape(args.target_chunks), dtype=values.dtype,
                             compressor=CODECS[args.codec][1](numcodecs))
    target[...] = values
    return {"seconds": time.perf_counter() - start}


def child_verify(args):
    """Compares `--verify-chunks` target chunks (spread over the grid) of every output with
    the source's values at the same place, exactly; checks shape, chunks and codec."""
    import numcodecs
    import numpy as np
    import zarr
    source = zarr.open_array(args.src, mode="r")
    chunks = parse_shape(args.target_chunks)
    grid = [-(-n // c) for n, c in zip(source.shape, chunks)]
    count = int(np.prod(grid))
    picks = sorted({round(i * (count - 1) / max(args.verify_chunks - 1, 1))
                    for i in range(args.verify_chunks)})
    regions = []
    for flat in picks:
        position = np.unravel_index(flat, grid)
        regions.append(tuple(slice(p * c, min((p + 1) * c, n))
                             for p, c, n in zip(position, chunks, source.shape)))
    expected = [source[region] for region in regions]
    compressor = CODECS[args.codec][1](numcodecs)
    problems = []
    for item in args.outputs:
        tool, out = item.split("=", 1)
        target = zarr.open_array(out, mode="r")
        if (target.shape, target.chunks, target.dtype) != (source.shape, chunks, source.dtype):
            problems.append(f"{tool}: shape {target.shape}, chunks {target.chunks}, dtype "
                            f"{target.dtype}")
            continue
        if target.compressor != compressor:
            problems.append(f"{tool}: compressor {target.compressor!r}, expected "
                            f"{compressor!r}")
        for region, values in zip(regions, expected):
            if not np.array_equal(target[region], values):
                problems.append(f"{tool}: values differ in {region}")
    return {"problems": problems, "chunks": [int(p) for p in picks]}


def child_warm(args):
    """Reads every file of the source once (bytes only), so it sits in the page cache."""
    return {"bytes": read_files(args.src)}


CHILDREN = {"generate": child_generate, "dask": child_dask, "numpy": child_numpy,
            "verify": child_verify, "warm": child_warm}


def run_child(args):
    print(json.dumps(CHILDREN[args.child](args)))


# ---- the parent: never loads data; every run in a fresh process ----------------------------

def tessera_command(args, tool, src, out, work, codec, plan=False):
    command = [args.tessera, "rechunk", src, out, "--chunks", args.target_chunks,
               "--allowed-mem", args.allowed_mem, "--workers", str(args.workers),
               "--codec", CODECS[codec][0], "--work-dir", work, "--overwrite"]
    if tool == "tessera-ram":
        command += ["--total-mem", args.total_mem]
    else:
        command += ["--intermediate", "disk"]
    return command + (["--plan"] if plan else ["--quiet"])


def tessera_plan(args, tool, src, out, work, codec):
    """What --plan projects: the largest task, each op's tier, what of the intermediate
    stays in RAM."""
    code, stdout, stderr, *_ = measure(tessera_command(args, tool, src, out, work, codec, True))
    if code != 0:
        sys.exit(f"tessera --plan failed ({code}):\n{stderr}")
    largest = re.search(r"largest task projects " + SIZE, stdout)
    in_ram = 0.0
    whole = re.search(r"all of it in RAM \(" + SIZE + r"\)", stdout)
    first = re.search(r"its first " + SIZE + r" in RAM", stdout)
    for match in (whole, first):
        if match:
            in_ram += parse_size(*match.groups())
    tiers = re.findall(r"^\s+\S+\s+rechunk\s+\d+\s+" + SIZE + r"\s+(\S+)", stdout, re.M)
    return {"max_projected_task": parse_size(*largest.groups()) if largest else None,
            "intermediate_in_ram": in_ram,
            "tiers": [tier for _, _, tier in tiers if tier != "target"]}


def report_ops(stdout):
    """Per op of a run's report (the table under the header naming "projected/task"):
    name, projected bytes per task, measured peak bytes of a task, seconds."""
    lines = stdout.splitlines()
    start = next((i for i, line in enumerate(lines) if "projected/task" in line), len(lines))
    ops = []
    for line in lines[start + 1:]:
        if line.startswith("Total"):
            break
        sizes = re.findall(SIZE, line)
        ops.append({"name": line.split()[0],
                    "projected": parse_size(*sizes[0]) if sizes else None,
                    "measured": parse_size(*sizes[1]) if len(sizes) > 1 else None,
                    "seconds": float(line.split()[-1])})
    return ops


def run_tool(args, tool, src, out, work, codec):
    """Best of --repeat fresh runs of `tool`: {seconds, cpu_seconds, peak_rss_bytes, ...}."""
    if tool.startswith("tessera"):
        command = tessera_command(args, tool, src, out, work, codec)
    else:
        command = [sys.executable, os.path.abspath(__file__), "--child", tool, "--src", src,
                   "--out", out, "--target-chunks", args.target_chunks, "--codec", codec,
                   "--workers", str(args.workers)]
    best, peak = None, 0
    for _ in range(args.repeat):
        shutil.rmtree(out, ignore_errors=True)
        os.sync()
        code, stdout, stderr, wall, rss, cpu = measure(command)
        if code != 0:
            sys.exit(f"{' '.join(command)} failed ({code}):\n{stderr}")
        result = {"wall_seconds": wall, "cpu_seconds": cpu, "peak_rss_bytes": rss}
        if tool.startswith("tessera"):
            result["seconds"] = wall  # the whole process: open, plan, run, write, clean up
            total = re.search(r"^Total ([\d.]+) s; process peak RSS " + SIZE, stdout, re.M)
            result["report_seconds"] = float(total.group(1)) if total else None
            result["report_peak_rss"] = parse_size(*total.groups()[1:]) if total else None
            result["ops"] = report_ops(stdout)
            leftovers = os.listdir(work)
            if leftovers:
                sys.exit(f"{tool}: {work} still holds {leftovers} after the run")
        else:
            result["seconds"] = json.loads(stdout.strip().splitlines()[-1])["seconds"]
        peak = max(peak, rss)
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    best["peak_rss_bytes"] = peak
    return best


def find_tessera():
    """The newest build*/src/cli/tessera of this checkout that knows `rechunk`."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates = []
    for entry in os.listdir(root):
        path = os.path.join(root, entry, "src", "cli", "tessera")
        if entry.startswith("build") and os.access(path, os.X_OK):
            candidates.append((os.path.getmtime(path), path))
    for _, path in sorted(candidates, reverse=True):
        if subprocess.run([path, "rechunk", "--help"], capture_output=True).returncode == 0:
            return path
    return None


def print_table(args, rows, stored, checks):
    shape, source_chunks = parse_shape(args.shape), parse_shape(args.source_chunks)
    logical = 8
    for extent in shape:
        logical *= extent
    scenario = f"{args.source_chunks} -> {args.target_chunks}".replace(",", " x ")
    print(f"source: float64 {shape} random normal ({format_size(logical)}) in chunks "
          f"{source_chunks}, stored "
          + ", ".join(f"{codec} {format_size(size)}" for codec, size in stored.items())
          + f"; target chunks {parse_shape(args.target_chunks)}, same codec; "
          f"workers {args.workers}; CPUs {os.cpu_count()}; best of {args.repeat} run(s)")
    print(f"Tessera: --allowed-mem {args.allowed_mem} --workers {args.workers}; tessera-ram "
          f"--total-mem {args.total_mem}, tessera-disk --intermediate disk\n")
    print("| scenario | codec | tool | seconds | CPU seconds | peak RSS | Tessera projected "
          "(tasks + intermediate in RAM) | speedup vs Dask |")
    print("|---|---|---|---:|---:|---:|---|---:|")
    for row in rows:
        projected = "-"
        if row.get("plan"):
            plan = row["plan"]
            task = plan["max_projected_task"] or 0
            total = args.workers * task + plan["intermediate_in_ram"]
            projected = (f"{format_size(total)} = {args.workers} x {format_size(task)} + "
                         f"{format_size(plan['intermediate_in_ram'])} "
                         f"({'/'.join(plan['tiers']) or 'no intermediate'})")
        speedup = "-" if row.get("speedup") is None else f"{row['speedup']:.2f}x"
        print(f"| {scenario} | {row['codec']} | {row['tool']} | {row['seconds']:.2f} | "
              f"{row['cpu_seconds']:.2f} | {format_size(row['peak_rss_bytes'])} | "
              f"{projected} | {speedup} |")
    tessera_rows = [row for row in rows if row["tool"].startswith("tessera")]
    if tessera_rows:
        print("\nTessera's report per op (projected per task, measured peak of a task):\n")
        print("| codec | tool | op | projected/task | measured peak | within | op seconds |")
        print("|---|---|---|---:|---:|---|---:|")
        for row in tessera_rows:
            for op in row["ops"]:
                projected, measured = op["projected"], op["measured"]
                within = ("?" if projected is None or measured is None
                          else "yes" if measured <= projected else "**no**")
                print(f"| {row['codec']} | {row['tool']} | {op['name']} | "
                      f"{format_size(projected) if projected is not None else '?'} | "
                      f"{format_size(measured) if measured is not None else '?'} | "
                      f"{within} | {op['seconds']:.2f} |")
    print()
    for codec, (picks, tools) in checks.items():
        print(f"verified {codec}: target chunks {picks} of {', '.join(tools)} equal the source")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tessera", help="the built tessera command (default: the newest "
                                          "build*/src/cli/tessera that has rechunk)")
    parser.add_argument("--shape", default="10000,10000")
    parser.add_argument("--source-chunks", default="10000,1000")
    parser.add_argument("--target-chunks", default="1000,10000")
    parser.add_argument("--codecs", default="blosc-lz4,none",
                        help=f"comma-separated, from {', '.join(CODECS)}")
    parser.add_argument("--tools", default=",".join(TOOLS),
                        help=f"comma-separated, from {', '.join(TOOLS)}")
    parser.add_argument("--workers", type=int, default=2,
                        help="Tessera's --workers and Dask's num_workers")
    parser.add_argument("--allowed-mem", default="400MB", help="Tessera's --allowed-mem")
    parser.add_argument("--total-mem", default="8GB", help="Tessera's --total-mem for "
                                                           "tessera-ram")
    parser.add_argument("--dir", default="/tmp/tessera-bench-rechunk",
                        help="where the sources (kept, reused) and the outputs (removed) go")
    parser.add_argument("--repeat", type=int, default=2,
                        help="runs per tool, each a fresh process; the fastest is kept")
    parser.add_argument("--verify-chunks", type=int, default=3,
                        help="target chunks of each output compared with the source")
    parser.add_argument("--keep-sources", action=argparse.BooleanOptionalAction, default=True,
                        help="keep the generated sources in --dir for the next run")
    parser.add_argument("--json", help="also write the raw results to this file")
    parser.add_argument("--child", choices=CHILDREN, help=argparse.SUPPRESS)
    parser.add_argument("--src", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    parser.add_argument("--codec", help=argparse.SUPPRESS)
    parser.add_argument("--outputs", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        run_child(args)
        return
    args.repeat = max(1, args.repeat)
    codecs, tools = args.codecs.split(","), args.tools.split(",")
    for codec in codecs:
        if codec not in CODECS:
            sys.exit(f"unknown codec {codec!r}; choose from {', '.join(CODECS)}")
    for tool in tools:
        if tool not in TOOLS:
            sys.exit(f"unknown tool {tool!r}; choose from {', '.join(TOOLS)}")
    if any(tool.startswith("tessera") for tool in tools):
        args.tessera = args.tessera or find_tessera()
        if not args.tessera:
            sys.exit("no tessera with `rechunk` found: build tessera_cli, pass --tessera PATH")

    os.makedirs(args.dir, exist_ok=True)
    work = os.path.join(args.dir, "work")  # Tessera's --work-dir
    os.makedirs(work, exist_ok=True)
    rows, stored, checks = [], {}, {}
    outputs = {}
    try:
        for codec in codecs:
            src = os.path.join(args.dir, f"source-{codec}.zarr")
            generated = python_child(__file__, "generate", "--src", src,
                                     "--codec", codec, "--shape", args.shape,
                                     "--source-chunks", args.source_chunks)
            if generated["generated"]:
                print(f"generated {src} in {generated['seconds']:.1f} s", file=sys.stderr)
            stored[codec] = stored_bytes(src)
            python_child(__file__, "warm", "--src", src)  # page cache warm for all tools
            results = {}
            outputs = {}
            for tool in tools:
                out = os.path.join(args.dir, f"target-{codec}-{tool}.zarr")
                outputs[tool] = out
                results[tool] = run_tool(args, tool, src, out, work, codec)
                if tool.startswith("tessera"):
                    results[tool]["plan"] = tessera_plan(args, tool, src, out, work, codec)
                print(f"{codec} {tool}: {results[tool]['seconds']:.2f} s, peak RSS "
                      f"{format_size(results[tool]['peak_rss_bytes'])}", file=sys.stderr)
            if args.verify_chunks > 0:
                checked = python_child(__file__, "verify", "--src", src, "--codec", codec,
                                       "--target-chunks", args.target_chunks,
                                       "--verify-chunks", args.verify_chunks, "--outputs",
                                       *[f"{tool}={out}" for tool, out in outputs.items()])
                if checked["problems"]:
                    sys.exit(f"verify {codec}: " + "; ".join(checked["problems"]))
                checks[codec] = (checked["chunks"], list(outputs))
            for out in outputs.values():
                shutil.rmtree(out, ignore_errors=True)
            outputs = {}
            dask_seconds = results["dask"]["seconds"] if "dask" in results else None
            for tool in tools:
                rows.append({**results[tool], "codec": codec, "tool": tool,
                             "speedup": dask_seconds / results[tool]["seconds"]
                             if dask_seconds else None})
            if not args.keep_sources:
                shutil.rmtree(src, ignore_errors=True)
    finally:
        for out in outputs.values():
            shutil.rmtree(out, ignore_errors=True)
            shutil.rmtree(out + ".partial", ignore_errors=True)
        shutil.rmtree(work, ignore_errors=True)
    print_table(args, rows, stored, checks)
    if args.json:
        with open(args.json, "w") as file:
            json.dump({"rows": rows, "stored": stored,
                       "verified": {codec: {"chunks": picks, "tools": names}
                                    for codec, (picks, names) in checks.items()}},
                      file, indent=2)


if __name__ == "__main__":
    main()
