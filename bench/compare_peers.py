#!/usr/bin/env python3
"""Every workload on every tool, at three sizes, in one run: Tessera against its peers.

    bench/run_peers                                   # sets up, builds, runs everything
    bench/run_peers --sizes 0.25,1 --repeat 3 --workloads rechunk,meansum
    bench/run_peers --report-only                     # the table and plot from runs.jsonl

Tools (each run a fresh process; seconds are its timed part, peak RSS its own ru_maxrss):
  tessera       the Python module (build-bench/python), Spec(allowed_mem=--allowed-mem)
  tessera-cli   the `tessera` command (rechunk, calc): C++ alone; seconds of the whole process
  dask          Dask 2026.8, threaded scheduler
  dask-keep     the same with glibc told to keep freed memory (MALLOC_MMAP_THRESHOLD_=32MiB,
                MALLOC_TRIM_THRESHOLD_=1TiB): the tuned Dask
  cubed         Cubed on its threads executor, the same allowed_mem
  numpy         numpy through zarr-python: read whole, compute, write whole (all timed)
  numpy-ram     numpy on data already in RAM: only the computation timed, nothing
                written: the in-memory floor (both skipped where 3x the inputs would
                not fit in RAM)
  tessera-ram   Tessera on the same numpy arrays in RAM (asarray, no copy, in the
                inputs' chunks), timed as numpy-ram: "vs numpy" compares the two
  zarr-python, zarrs, tensorstore   the Zarr read and write rows
  memcpy, raw-read   the machine's floor: one copy of the decoded bytes between buffers
                already faulted in; reading the input files (page cache) into a buffer
Workloads and sizes: bench/peer_work.py. Medians of --repeat runs; "vs best peer" is the
fastest peer's median over the tool's (above 1: faster than every peer; peers are Dask,
tuned Dask and Cubed, or zarr-python, zarrs and TensorStore); "vs numpy" numpy-ram's median over
tessera-ram's (1: Tessera as fast as numpy on the same data in RAM). Every tool's result is checksummed on a sample and compared with the
others'. Writes RESULTS/peers.md (the tables) and RESULTS/peers.png (seconds per GB
against size), and appends every run to RESULTS/runs.jsonl."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peer_work  # noqa: E402
from bench_util import measure, read_files  # noqa: E402

COMPUTE_TOOLS = ["tessera", "tessera-cli", "dask", "dask-keep", "cubed", "numpy", "numpy-ram"]
ZARR_TOOLS = ["tessera", "zarr-python", "zarrs", "tensorstore"]
FLOORS = ["memcpy", "raw-read"]
IN_RAM = ["numpy", "numpy-ram", "tessera-ram"]  # hold the inputs whole in RAM
PEERS = {"dask", "dask-keep", "cubed", "zarr-python", "zarrs", "tensorstore"}
WORKLOADS = {
    "rechunk": COMPUTE_TOOLS + FLOORS,
    "dewpoint-smooth": COMPUTE_TOOLS + ["tessera-ram"] + FLOORS,
    "dewpoint-random": COMPUTE_TOOLS + ["tessera-ram"] + FLOORS,
    "meansum": [t for t in COMPUTE_TOOLS if t != "tessera-cli"] + ["tessera-ram"] + FLOORS,
    "matmul": [t for t in COMPUTE_TOOLS if t != "tessera-cli"] + ["tessera-ram"] + FLOORS,
    "zarr-write-v2": ZARR_TOOLS + ["memcpy"],
    "zarr-read-v2": ZARR_TOOLS + FLOORS,
    "zarr-write-v3-sharded": ZARR_TOOLS + ["memcpy"],
    "zarr-read-v3-sharded": ZARR_TOOLS + FLOORS,
}
KEEP_FREED = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 40)}


def parse_bytes(text):
    units = {"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "b": 1}
    lowered = text.strip().lower()
    for unit, factor in units.items():
        if lowered.endswith(unit):
            return int(float(lowered[:-len(unit)]) * factor)
    return int(lowered)


def ram_bytes():
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def tessera_binary():
    for candidate in (os.environ.get("TESSERA_BIN"), os.path.join(HERE, "..", "build-bench", "src", "cli", "tessera"),
                      shutil.which("tessera")):
        if candidate and os.path.exists(candidate):
            return candidate
    sys.exit("no tessera command: set TESSERA_BIN or build build-bench (bench/run_peers does)")


def cli_command(workload, inputs, out, scale, allowed_mem):
    common = ["--allowed-mem", allowed_mem, "--work-dir", out, "--quiet", "--codec", "blosc-lz4"]
    result = os.path.join(out, "result.zarr")
    if workload == "rechunk":
        chunks = ",".join(map(str, peer_work.rechunk_target(scale)))
        return [tessera_binary(), "rechunk", inputs[0], result, "--chunks", chunks] + common
    return [tessera_binary(), "calc", peer_work.DEW_POINT_FORMULA, "--input", f"t2={inputs[0]}",
            "--input", f"rh={inputs[1]}", "--output", result] + common


def run_once(tool, workload, scale, args):
    """One run; a dict for runs.jsonl."""
    record = {"tool": tool, "workload": workload, "scale": scale, "allowed_mem": args.allowed_mem}
    out = tempfile.mkdtemp(prefix=f"run-{tool}-", dir=args.data)
    env = dict(os.environ, TESSERA_HISTORY="off", TESSERA_PROGRESS="0")
    if tool == "dask-keep":
        env.update(KEEP_FREED)
    inputs = peer_work.inputs_of(workload, args.data, scale)
    worker = [sys.executable, os.path.join(HERE, "peer_work.py")]
    if tool == "tessera-cli":
        command = cli_command(workload, inputs, out, scale, args.allowed_mem)
    else:
        command = worker + [tool, workload, args.data, out, str(scale), args.allowed_mem]
    subprocess.run(["sync"], check=False)
    if args.drop_caches:
        # Every run from the same state: free memory plentiful, the inputs (only) cached.
        with open("/proc/sys/vm/drop_caches", "w") as caches:
            caches.write("3\n")
        warm(workload, args.data, scale)
    code, stdout, stderr, wall, rss, _ = measure(command, env=env)
    record["peak_rss"] = rss
    if code != 0:
        lines = stderr.strip().splitlines()
        record["error"] = lines[-1][:200] if lines else f"exit {code}"
    else:
        record.update(json.loads(stdout.strip().splitlines()[-1]) if tool != "tessera-cli"
                      else {"seconds": wall})
        if record.get("checksum") is None and os.path.exists(os.path.join(out, "result.zarr")):
            check = subprocess.run(worker + ["checksum", out], capture_output=True, text=True, env=env)
            record["checksum"] = json.loads(check.stdout)["checksum"] if check.returncode == 0 else None
    shutil.rmtree(out, ignore_errors=True)
    return record


def warm(workload, data, scale):
    """Reads the inputs' files once, so the first tool of a round finds them cached as
    the others do (where they fit in the page cache)."""
    for path in peer_work.inputs_of(workload, data, scale):
        read_files(path)


def fits_in_ram(tool, workload, scale):
    return tool not in IN_RAM or 3 * peer_work.logical_bytes(workload, scale) < 0.8 * ram_bytes()


def run_all(args, log):
    for scale in args.sizes:
        for workload in args.workloads:
            start = time.perf_counter()
            # In a child: the parent never imports numpy or zarr, so its RSS stays small
            # (a child's ru_maxrss starts from its parent's RSS at fork).
            subprocess.run([sys.executable, os.path.join(HERE, "peer_work.py"), "make-inputs",
                            workload, args.data, str(scale)], check=True)
            print(f"inputs of {workload} at {scale:g}: {time.perf_counter() - start:.0f} s", flush=True)
        # One run not kept: the first run after the inputs are written pays for the state
        # they leave (write-back, a full page cache to reclaim), whichever tool it is.
        warm(args.workloads[0], args.data, scale)
        run_once(next(t for t in WORKLOADS[args.workloads[0]] if t in args.tools), args.workloads[0], scale, args)
        for repeat in range(args.repeat):
            for workload in args.workloads:
                warm(workload, args.data, scale)
                tools = [t for t in WORKLOADS[workload] if t in args.tools]
                # Each round starts one tool later, so no tool always runs first.
                for tool in tools[repeat % len(tools):] + tools[:repeat % len(tools)]:
                    if not fits_in_ram(tool, workload, scale):
                        continue
                    record = run_once(tool, workload, scale, args)
                    record["repeat"] = repeat
                    log.write(json.dumps(record) + "\n")
                    log.flush()
                    shown = record.get("error") or f"{record['seconds']:.2f} s"
                    print(f"  {scale:g} {workload} {tool} #{repeat + 1}: {shown}, "
                          f"{record['peak_rss'] / 1e6:.0f} MB", flush=True)


# ---- the report ---------------------------------------------------------------------

def summarize(records, allowed_mem):
    """{(workload, scale, tool): row}: median seconds, max peak RSS, checksum, errors."""
    grouped = {}
    for record in records:
        if record.get("allowed_mem") != allowed_mem:
            continue
        grouped.setdefault((record["workload"], record["scale"], record["tool"]), []).append(record)
    rows = {}
    for key, runs in grouped.items():
        done = [r for r in runs if "seconds" in r]
        rows[key] = {"seconds": statistics.median(r["seconds"] for r in done) if done else None,
                     "runs": len(done), "peak_rss": max(r["peak_rss"] for r in runs),
                     "checksum": next((r.get("checksum") for r in done if r.get("checksum") is not None), None),
                     "error": next((r["error"] for r in runs if "error" in r), None)}
    return rows


def checksum_agrees(row, reference):
    if row["checksum"] is None or reference is None:
        return ""
    close = abs(row["checksum"] - reference) <= 1e-5 * max(1.0, abs(reference))
    return "ok" if close else "DIFFERS"


def report(rows, allowed_mem, results):
    # allowed_mem is per task (as Cubed's) and a task runs on each core: the process's
    # budget is allowed_mem x cores.
    budget = parse_bytes(allowed_mem) * os.cpu_count()
    lines = [f"allowed_mem {allowed_mem} per task (Tessera's and Cubed's), {os.cpu_count()} tasks at once: "
             f"a budget of {budget / 1e9:g} GB; seconds: median of the runs; peak RSS: the largest", ""]
    summary = ["| workload | size | input GB | Tessera s | best peer | peer s | vs best peer | "
               "vs numpy | Tessera RSS / budget |", "|---|---:|---:|---:|---|---:|---:|---:|---:|"]
    table = ["| workload | size | tool | runs | seconds | s per GB | vs best peer | peak RSS MB | "
             "RSS / budget | checksum |", "|---|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for workload in WORKLOADS:
        for scale in sorted({s for (w, s, _) in rows if w == workload}):
            gigabytes = peer_work.logical_bytes(workload, scale) / 1e9
            here = {tool: rows[(workload, scale, tool)] for tool in WORKLOADS[workload]
                    if (workload, scale, tool) in rows}
            peers = [(row["seconds"], tool) for tool, row in here.items() if tool in PEERS and row["seconds"]]
            best_seconds, best_tool = min(peers) if peers else (None, "")
            reference = next((row["checksum"] for tool, row in here.items()
                              if tool in ("numpy", "zarr-python") and row["checksum"] is not None),
                             next((row["checksum"] for row in here.values() if row["checksum"] is not None), None))
            for tool, row in here.items():
                if row["seconds"] is None:
                    table.append(f"| {workload} | {scale:g} | {tool} | 0 | failed: {row['error']} | | | | | |")
                    continue
                versus = f"{best_seconds / row['seconds']:.2f}x" if best_seconds else ""
                table.append(f"| {workload} | {scale:g} | {tool} | {row['runs']} | {row['seconds']:.3f} | "
                             f"{row['seconds'] / gigabytes:.3f} | {versus} | {row['peak_rss'] / 1e6:.0f} | "
                             f"{row['peak_rss'] / budget:.2f} | {checksum_agrees(row, reference)} |")
            tessera = here.get("tessera", {}).get("seconds")
            numpy_seconds = here.get("numpy-ram", {}).get("seconds")
            in_ram = here.get("tessera-ram", {}).get("seconds")
            if tessera:
                peer = f"{best_seconds:.3f} | {best_seconds / tessera:.2f}x" if best_seconds else " | "
                floor = f"{numpy_seconds / in_ram:.2f}x" if numpy_seconds and in_ram else ""
                summary.append(f"| {workload} | {scale:g} | {gigabytes:.2f} | {tessera:.3f} | {best_tool} | "
                               f"{peer} | {floor} | {here['tessera']['peak_rss'] / budget:.2f} |")
    text = "\n".join(lines + ["## Tessera against the best peer", ""] + summary +
                     ["", "## Every tool", ""] + table) + "\n"
    with open(os.path.join(results, "peers.md"), "w") as file:
        file.write(text)
    print(text)
    plot(rows, os.path.join(results, "peers.png"))


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot (bench/run_peers installs it)")
        return
    workloads = [w for w in WORKLOADS if any(key[0] == w for key in rows)]
    columns = 3
    figure, axes = plt.subplots((len(workloads) + columns - 1) // columns, columns,
                                figsize=(15, 4.2 * ((len(workloads) + columns - 1) // columns)), squeeze=False)
    every_tool = list(dict.fromkeys(COMPUTE_TOOLS + IN_RAM + ZARR_TOOLS + FLOORS))
    colour = {tool: matplotlib.colormaps["tab20"](index) for index, tool in enumerate(every_tool)}
    for axis, workload in zip(axes.flat, workloads):
        sizes = sorted({peer_work.logical_bytes(workload, s) / 1e9 for (w, s, _) in rows if w == workload})
        for tool in WORKLOADS[workload]:
            points = sorted((peer_work.logical_bytes(workload, s) / 1e9, row["seconds"] / (peer_work.logical_bytes(workload, s) / 1e9))
                            for (w, s, t), row in rows.items() if w == workload and t == tool and row["seconds"])
            if points:
                style = "--" if tool in FLOORS else "-"
                axis.plot([p[0] for p in points], [p[1] for p in points], style, marker="o", label=tool,
                          color=colour[tool], linewidth=2.5 if tool.startswith("tessera") else 1.2)
        axis.set_xscale("log")
        axis.set_xticks(sizes, [f"{size:.2g}" for size in sizes])
        axis.minorticks_off()
        axis.set_title(workload)
        axis.set_xlabel("input GB")
        axis.set_ylabel("seconds per GB")
        axis.set_ylim(bottom=0)
        axis.legend(fontsize=7)
    for axis in list(axes.flat)[len(workloads):]:
        axis.axis("off")
    figure.tight_layout()
    figure.savefig(path, dpi=90)
    print(f"plot: {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="0.25,1,4", help="scales: a quarter, one and four times")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--tools", default=",".join(dict.fromkeys(COMPUTE_TOOLS + IN_RAM + ZARR_TOOLS + FLOORS)))
    parser.add_argument("--allowed-mem", default="1GB")
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "tessera-peers"),
                        help="where inputs are kept between runs (needs about 40 GB at size 4)")
    parser.add_argument("--results", default=os.path.join(HERE, "results"))
    parser.add_argument("--report-only", action="store_true")
    parser.add_argument("--drop-caches", action="store_true",
                        help="before each run drop the page cache (needs root), then read its inputs "
                        "once: every run starts from the same state")
    args = parser.parse_args()
    args.sizes = [float(s) for s in args.sizes.split(",")]
    args.workloads = args.workloads.split(",")
    args.tools = set(args.tools.split(","))
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        sys.exit(f"unknown workload {unknown[0]!r}: choose from {', '.join(WORKLOADS)}")
    if args.drop_caches and not os.access("/proc/sys/vm/drop_caches", os.W_OK):
        sys.exit("--drop-caches needs root (it writes /proc/sys/vm/drop_caches); run without it")
    os.makedirs(args.data, exist_ok=True)
    os.makedirs(args.results, exist_ok=True)
    log_path = os.path.join(args.results, "runs.jsonl")
    if not args.report_only:
        with open(log_path, "a") as log:
            run_all(args, log)
    with open(log_path) as log:
        records = [json.loads(line) for line in log if line.strip()]
    report(summarize(records, args.allowed_mem), args.allowed_mem, args.results)


if __name__ == "__main__":
    main()
