#!/usr/bin/python3
"""Zarr write/read throughput and peak RSS: Tessera vs zarr-python, in the same run.

For each codec (blosc-lz4 and none by default) this writes then reads the same float64
array with Tessera (bench zarr_io_bench) and with zarr-python, each operation in a fresh
process so each peak RSS is that operation's own, and prints a markdown table. A numpy
copy of an array of the same size is the memory-bandwidth bound.

Run with the system Python (zarr-python, numcodecs and numpy live there):
  /usr/bin/python3 bench/compare_io.py --bench build/bench/zarr_io_bench
  /usr/bin/python3 bench/compare_io.py --bench ... --shape 2000,2000 --chunks 500,500

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

from bench_util import format_size, make_data, peak_rss_bytes, stored_bytes


# codec name -> (zarr_io_bench --codec, a function building the numcodecs compressor)
CODECS = {
    "blosc-lz4": ("blosc:lz4:5:shuffle",
                  lambda numcodecs: numcodecs.Blosc(cname="lz4", clevel=5,
                                                    shuffle=numcodecs.Blosc.SHUFFLE)),
    "blosc-zstd": ("blosc:zstd:5:shuffle",
                   lambda numcodecs: numcodecs.Blosc(cname="zstd", clevel=5,
                                                     shuffle=numcodecs.Blosc.SHUFFLE)),
    "zstd": ("zstd:3", lambda numcodecs: numcodecs.Zstd(level=3)),
    "none": ("none", lambda numcodecs: None),
}



# ---- child processes: one operation each, reporting their own peak RSS ---------------

def child_zarr_write(args):
    import numcodecs
    import zarr
    shape = tuple(int(extent) for extent in args.shape.split(","))
    chunks = tuple(int(extent) for extent in args.chunks.split(","))
    data = make_data(shape)  # not timed
    start = time.perf_counter()
    array = zarr.open_array(args.dir, mode="w", shape=shape, chunks=chunks, dtype="<f8",
                            compressor=CODECS[args.codec][1](numcodecs),
                            write_empty_chunks=True)
    array[...] = data
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "logical_bytes": data.nbytes}


def child_zarr_read(args):
    import zarr
    start = time.perf_counter()
    data = zarr.open_array(args.dir, mode="r")[...]
    seconds = time.perf_counter() - start
    if args.verify:
        import numpy as np
        assert np.array_equal(data, make_data(data.shape)), "zarr read: values differ"
    return {"seconds": seconds, "logical_bytes": data.nbytes}


def child_numpy_copy(args):
    import numpy as np
    shape = tuple(int(extent) for extent in args.shape.split(","))
    source = np.ones(shape, dtype="<f8")  # touched, so the copy measures bandwidth only
    target = np.zeros(shape, dtype="<f8")
    target[...] = 1.0
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        np.copyto(target, source)
        best = min(best, time.perf_counter() - start)
    return {"seconds": best, "logical_bytes": source.nbytes}


CHILDREN = {"zarr-write": child_zarr_write, "zarr-read": child_zarr_read,
            "numpy-copy": child_numpy_copy}


def run_child(args):
    result = CHILDREN[args.child](args)
    result["peak_rss_bytes"] = peak_rss_bytes()
    print(json.dumps(result))


# ---- the parent: runs every operation in a fresh process, prints the table -----------

REPEAT = 1  # set from --repeat


def run_json(command):
    """Runs `command` REPEAT times, each in a fresh process; keeps the fastest run (the
    one least disturbed by other load) and the largest peak RSS."""
    best = None
    peak = 0
    for _ in range(REPEAT):
        completed = subprocess.run(command, capture_output=True, text=True)
        if completed.returncode != 0:
            sys.exit(f"{' '.join(command)} failed ({completed.returncode}):\n"
                     f"{completed.stderr}")
        result = json.loads(completed.stdout.strip().splitlines()[-1])
        peak = max(peak, result["peak_rss_bytes"])
        if best is None or result["seconds"] < best["seconds"]:
            best = result
    best["peak_rss_bytes"] = peak
    return best


def python_child(args, child, directory, codec):
    command = [sys.executable, os.path.abspath(__file__), "--child", child,
               "--dir", directory, "--shape", args.shape, "--chunks", args.chunks,
               "--codec", codec]
    if args.verify:
        command.append("--verify")
    return run_json(command)


def tessera_op(args, op, directory, codec):
    command = [args.bench, "--op", op, "--dir", directory, "--threads", str(args.threads)]
    if op == "write":
        command += ["--shape", args.shape, "--chunks", args.chunks,
                    "--codec", CODECS[codec][0]]
    elif args.verify:
        command.append("--verify")
    return run_json(command)



def find_bench():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for entry in sorted(os.listdir(root)):
        candidate = os.path.join(root, entry, "bench", "zarr_io_bench")
        if entry.startswith("build") and os.access(candidate, os.X_OK):
            return candidate
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", help="path of the built zarr_io_bench")
    parser.add_argument("--shape", default="10000,10000")
    parser.add_argument("--chunks", default="1000,1000")
    parser.add_argument("--codecs", default="blosc-lz4,none",
                        help=f"comma-separated, from {', '.join(CODECS)}")
    parser.add_argument("--threads", type=int, default=0,
                        help="Tessera threads (0 = hardware concurrency)")
    parser.add_argument("--dir", help="work directory (default: a fresh temporary one)")
    parser.add_argument("--verify", action="store_true",
                        help="check every value read (not timed)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run each operation this many times (fresh processes), keep "
                             "the fastest")
    parser.add_argument("--json", help="also write the raw results to this file")
    parser.add_argument("--child", choices=CHILDREN, help=argparse.SUPPRESS)
    parser.add_argument("--codec", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        run_child(args)
        return
    global REPEAT
    REPEAT = max(1, args.repeat)
    args.bench = args.bench or find_bench()
    if not args.bench:
        sys.exit("zarr_io_bench not found: build it and pass --bench PATH")
    codecs = args.codecs.split(",")
    for codec in codecs:
        if codec not in CODECS:
            sys.exit(f"unknown codec {codec!r}; choose from {', '.join(CODECS)}")

    work = args.dir or tempfile.mkdtemp(prefix="tessera-compare-io-")
    os.makedirs(work, exist_ok=True)
    rows = []
    try:
        for codec in codecs:
            ours = os.path.join(work, f"tessera-{codec}.zarr")
            theirs = os.path.join(work, f"zarr-{codec}.zarr")
            for op in ("write", "read"):
                # each reads back its own files, just written: both from the page cache
                zarr_result = python_child(args, f"zarr-{op}", theirs, codec)
                tessera_result = tessera_op(args, op, ours, codec)
                zarr_result["stored_bytes"] = stored_bytes(theirs)
                tessera_result["stored_bytes"] = stored_bytes(ours)
                for tool, result in (("tessera", tessera_result), ("zarr-python", zarr_result)):
                    rows.append({**result, "codec": codec, "op": op, "tool": tool,
                                 "speedup": zarr_result["seconds"] / result["seconds"]})
            shutil.rmtree(ours, ignore_errors=True)
            shutil.rmtree(theirs, ignore_errors=True)
        copy = python_child(args, "numpy-copy", work, "none")
        rows.append({**copy, "codec": "-", "op": "copy (memory bound)", "tool": "numpy",
                     "stored_bytes": None, "speedup": None})
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)

    threads = args.threads or os.cpu_count()
    print(f"float64 array {args.shape} in chunks {args.chunks} "
          f"({format_size(rows[0]['logical_bytes'])}); Tessera threads: {threads}; "
          f"CPUs: {os.cpu_count()}; best of {REPEAT} run(s)\n")
    print("| codec | op | tool | seconds | GB/s | peak RSS | speedup vs zarr-python | stored |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for row in rows:
        gbps = row["logical_bytes"] / 1e9 / row["seconds"]
        speedup = "-" if row["speedup"] is None else f"{row['speedup']:.2f}x"
        stored = "-" if row["stored_bytes"] is None else format_size(row["stored_bytes"])
        print(f"| {row['codec']} | {row['op']} | {row['tool']} | {row['seconds']:.3f} | "
              f"{gbps:.2f} | {format_size(row['peak_rss_bytes'])} | {speedup} | {stored} |")
    if args.json:
        with open(args.json, "w") as file:
            json.dump(rows, file, indent=2)


if __name__ == "__main__":
    main()
