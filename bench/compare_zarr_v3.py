#!/usr/bin/env python3
"""Zarr v2 / v3 / v3-sharded read and write: Tessera vs zarr-python vs zarrs-python vs
TensorStore, in one run.

For every format (v2, v3, v3-sharded) x codec (blosc-lz4, zstd, none) x op (write, read)
this times each tool on the same float64 array, each run in a fresh process (its wall
time of the operation alone, and its own peak RSS from wait4), and prints a markdown table
with the fastest tool of each row in bold and Tessera's ratio to the best other tool.

Every writer writes its own copy; every reader reads the copy zarr-python wrote, so all
readers decode the same bytes. Run with the project's .venv (zarr 3, zarrs, tensorstore):

  .venv/bin/python bench/compare_zarr_v3.py --bench build/bench/zarr_io_bench
  .venv/bin/python bench/compare_zarr_v3.py --shape 2000,2000 --repeat 1 --verify

See bench/README.md.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from bench_util import format_size, make_data, measure, read_files, stored_bytes


FORMATS = ("v2", "v3", "v3-sharded")
TOOLS = ("tessera", "zarr-python", "zarrs", "tensorstore")
OPS = ("write", "read")

# One setting per codec, used by every tool (zarr_io_bench.cpp's named codecs mean the
# same). blosc-lz4: blosc, cname lz4, clevel 5, byte shuffle, typesize 8 (the itemsize),
# automatic block size. zstd: level 3, no content checksum. In v2 these are numcodecs'
# Blosc / Zstd compressors; in v3 the codecs [bytes (little endian), blosc | zstd], no crc32c.
CODECS = {
    "blosc-lz4": {
        "v2": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
        "v3": {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5,
                                                   "shuffle": "shuffle", "typesize": 8,
                                                   "blocksize": 0}},
    },
    "zstd": {
        "v2": {"id": "zstd", "level": 3},  # numcodecs' Zstd checksum defaults to False
        "v3": {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
    },
    "none": {"v2": None, "v3": None},
}


def parse_shape(text):
    return [int(extent) for extent in text.split(",")]


# ---- child processes: one operation each ----------------------------------------------

def layout(args):
    """(chunks of the chunk grid, inner chunks or None) of args.format."""
    if args.format == "v3-sharded":
        return parse_shape(args.shards), parse_shape(args.inner)
    return parse_shape(args.chunks), None


def configure_zarr(args, zarrs):
    """zarr-python's config for this run: its thread pool and async concurrency, and for
    zarrs-python the Rust codec pipeline (strict: an array zarrs cannot handle is an error,
    not a silent fall-back to the Python pipeline)."""
    import zarr
    settings = {"threading.max_workers": args.workers,
                "async.concurrency": args.concurrency,
                "array.write_empty_chunks": True}
    if zarrs:
        import zarrs as _  # noqa: F401  (fails early when the package is missing)
        settings["codec_pipeline.path"] = "zarrs.ZarrsCodecPipeline"
        settings["codec_pipeline.strict"] = True
    zarr.config.set(settings)
    return zarr


def zarr_compressor(args):
    spec = CODECS[args.codec]["v2" if args.format == "v2" else "v3"]
    if spec is None:
        return None
    if args.format == "v2":
        import numcodecs
        return numcodecs.get_codec(spec)
    import zarr.codecs
    if spec["name"] == "blosc":
        return zarr.codecs.BloscCodec(**spec["configuration"])
    return zarr.codecs.ZstdCodec(**spec["configuration"])


def child_zarr_write(args, zarrs=False):
    zarr = configure_zarr(args, zarrs)
    shape = parse_shape(args.shape)
    chunks, inner = layout(args)
    data = make_data(shape)  # not timed
    kwargs = {"zarr_format": 2 if args.format == "v2" else 3,
              "compressors": zarr_compressor(args), "filters": None}
    if inner is None:
        kwargs["chunks"] = chunks
    else:
        kwargs.update(chunks=inner, shards=chunks)
    start = time.perf_counter()
    array = zarr.create_array(store=args.dir, shape=shape, dtype="<f8", fill_value=0.0,
                              overwrite=True, **kwargs)
    array[...] = data
    return {"seconds": time.perf_counter() - start, "logical_bytes": data.nbytes}


def child_zarr_read(args, zarrs=False):
    zarr = configure_zarr(args, zarrs)
    start = time.perf_counter()
    data = zarr.open_array(args.dir, mode="r")[...]
    seconds = time.perf_counter() - start
    check_values(args, data, "read")
    return {"seconds": seconds, "logical_bytes": data.nbytes}


def ts_spec(args):
    kvstore = {"driver": "file", "path": args.dir}
    shape = parse_shape(args.shape)
    chunks, inner = layout(args)
    if args.format == "v2":
        compressor = CODECS[args.codec]["v2"]
        return {"driver": "zarr", "kvstore": kvstore,
                "metadata": {"shape": shape, "chunks": chunks, "dtype": "<f8",
                             "compressor": compressor, "filters": None, "order": "C",
                             "fill_value": 0.0, "dimension_separator": "."}}
    codecs = [{"name": "bytes", "configuration": {"endian": "little"}}]
    if CODECS[args.codec]["v3"] is not None:
        codecs.append(CODECS[args.codec]["v3"])
    if inner is not None:
        codecs = [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": inner, "codecs": codecs,
            "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                             {"name": "crc32c"}],
            "index_location": "end"}}]
    return {"driver": "zarr3", "kvstore": kvstore,
            "metadata": {"shape": shape, "data_type": "float64",
                         "chunk_grid": {"name": "regular",
                                        "configuration": {"chunk_shape": chunks}},
                         "chunk_key_encoding": {"name": "default"},
                         "fill_value": 0.0, "codecs": codecs}}


def child_tensorstore_write(args):
    import tensorstore as ts
    data = make_data(parse_shape(args.shape))  # not timed
    start = time.perf_counter()
    store = ts.open(ts_spec(args), create=True, delete_existing=True).result()
    store.write(data).result()
    return {"seconds": time.perf_counter() - start, "logical_bytes": data.nbytes}


def child_tensorstore_read(args):
    import tensorstore as ts
    driver = "zarr" if args.format == "v2" else "zarr3"
    start = time.perf_counter()
    store = ts.open({"driver": driver, "kvstore": {"driver": "file", "path": args.dir}},
                    open=True, read=True).result()
    data = store.read().result()
    seconds = time.perf_counter() - start
    check_values(args, data, "read")
    return {"seconds": seconds, "logical_bytes": data.nbytes}


def check_values(args, data, what):
    if args.verify:
        import numpy as np
        expected = make_data(list(data.shape))
        if data.dtype != expected.dtype or not np.array_equal(data, expected):
            raise SystemExit(f"{args.child} {args.dir}: values {what} differ")


def child_check(args):
    """Reads args.dir with plain zarr-python (default pipeline), compares every value, and
    describes the array as zarr-python sees it (not timed)."""
    import zarr
    array = zarr.open_array(args.dir, mode="r")
    args.verify = True
    check_values(args, array[...], "read back by zarr-python")
    metadata = array.metadata
    if metadata.zarr_format == 2:
        described = {"zarr_format": 2, "chunks": list(metadata.chunks),
                     "compressor": None if metadata.compressor is None
                     else metadata.compressor.get_config()}
    else:
        described = {"zarr_format": 3, "chunks": list(array.chunks),
                     "shards": None if array.shards is None else list(array.shards),
                     "codecs": [codec.to_dict() for codec in metadata.codecs]}
    return {"seconds": 0.0, "logical_bytes": array.nbytes, "described": described}


CHILDREN = {
    "zarr-python-write": child_zarr_write,
    "zarr-python-read": child_zarr_read,
    "zarrs-write": lambda args: child_zarr_write(args, zarrs=True),
    "zarrs-read": lambda args: child_zarr_read(args, zarrs=True),
    "tensorstore-write": child_tensorstore_write,
    "tensorstore-read": child_tensorstore_read,
    "check": child_check,
}


def run_child(args):
    print(json.dumps(CHILDREN[args.child](args)))


# ---- the parent: runs every operation in a fresh process, prints the tables ----------
# It imports neither numpy nor zarr, so it stays small (Linux carries a parent's RSS at
# fork into the child's ru_maxrss).

def tool_command(args, tool, op, fmt, codec, directory):
    """The command running `op` with `tool`; tool "check" is child_check."""
    if tool == "tessera":
        command = [args.bench, "--op", op, "--dir", directory,
                   "--threads", str(args.threads)]
        if op == "write":
            command += ["--shape", args.shape, "--codec", codec,
                        "--zarr-format", "2" if fmt == "v2" else "3"]
            if fmt == "v3-sharded":
                command += ["--chunks", args.inner, "--shards", args.shards]
            else:
                command += ["--chunks", args.chunks]
        elif args.verify:
            command.append("--verify")
        return command
    child = "check" if tool == "check" else f"{tool}-{op}"
    command = [sys.executable, os.path.abspath(__file__), "--child", child,
               "--dir", directory, "--format", fmt, "--codec", codec,
               "--shape", args.shape, "--chunks", args.chunks, "--inner", args.inner,
               "--shards", args.shards, "--workers", str(args.workers),
               "--concurrency", str(args.concurrency)]
    if args.verify:
        command.append("--verify")
    return command


def run_once(command, what):
    """Runs one operation in a fresh process; returns its JSON with peak_rss_bytes (the
    child's own, from wait4)."""
    os.sync()  # earlier runs' dirty pages are written back before this one is timed
    code, stdout, stderr, _, peak_rss, cpu = measure(command)
    if code != 0:
        sys.exit(f"{what} failed ({code}): {' '.join(command)}\n{stderr}")
    result = json.loads(stdout.strip().splitlines()[-1])
    result["peak_rss_bytes"] = peak_rss
    result["cpu_seconds"] = cpu  # the whole process's (interpreter start and imports too)
    return result


def summarize(runs):
    """Median seconds of the runs, the largest peak RSS."""
    seconds = statistics.median(run["seconds"] for run in runs)
    return {"seconds": seconds, "runs": [run["seconds"] for run in runs],
            "cpu_runs": [run["cpu_seconds"] for run in runs],
            "logical_bytes": runs[0]["logical_bytes"],
            "gbps": runs[0]["logical_bytes"] / 1e9 / seconds,
            "peak_rss_bytes": max(run["peak_rss_bytes"] for run in runs)}


def bench_case(args, fmt, codec, work, results, stored, described):
    case = os.path.join(work, f"{fmt}-{codec}")
    shutil.rmtree(case, ignore_errors=True)  # nothing stale from an earlier run
    os.makedirs(case)
    copies = {tool: os.path.join(case, f"{tool}.zarr") for tool in args.tools}
    reference = os.path.join(case, "zarr-python.zarr")
    try:
        if "write" in args.ops:
            runs = {tool: [] for tool in args.tools}
            for _ in range(args.repeat):  # rounds, so load drifts hit every tool alike
                for tool in args.tools:
                    shutil.rmtree(copies[tool], ignore_errors=True)  # not timed
                    runs[tool].append(run_once(
                        tool_command(args, tool, "write", fmt, codec, copies[tool]),
                        f"{tool} write {fmt} {codec}"))
            for tool in args.tools:
                results[(fmt, codec, "write", tool)] = summarize(runs[tool])
                stored[(fmt, codec, tool)] = stored_bytes(copies[tool])
                if args.verify:  # every writer's copy, read back by zarr-python
                    check = run_once(tool_command(args, "check", "read", fmt, codec,
                                                  copies[tool]),
                                     f"zarr-python reading {tool}'s {fmt} {codec}")
                    described[(fmt, codec, tool)] = check["described"]
        if "read" in args.ops:
            if not os.path.exists(reference):  # zarr-python did not write above
                run_once(tool_command(args, "zarr-python", "write", fmt, codec, reference),
                         f"zarr-python write {fmt} {codec} (the readers' input)")
            read_files(reference)  # in the page cache for every reader alike
            runs = {tool: [] for tool in args.tools}
            for _ in range(args.repeat):
                for tool in args.tools:
                    runs[tool].append(run_once(
                        tool_command(args, tool, "read", fmt, codec, reference),
                        f"{tool} read {fmt} {codec}"))
            for tool in args.tools:
                results[(fmt, codec, "read", tool)] = summarize(runs[tool])
    finally:
        shutil.rmtree(case, ignore_errors=True)


def print_tables(args, results, stored, described):
    first = next(iter(results.values()))
    print(f"float64 array {args.shape} ({format_size(first['logical_bytes'])}); chunks "
          f"{args.chunks} (v2, v3); v3-sharded: shards {args.shards} of inner chunks "
          f"{args.inner}; {os.cpu_count()} CPUs; median of {args.repeat} run(s), each in "
          f"a fresh process; peak RSS: the largest of the runs. Bold: the fastest tool.\n")
    header = "| format | codec | op |"
    rule = "|---|---|---|"
    for tool in args.tools:
        header += f" {tool} s | {tool} GB/s | {tool} RSS MB |"
        rule += "---:|---:|---:|"
    if "tessera" in args.tools and len(args.tools) > 1:
        header += " Tessera vs best peer |"
        rule += "---:|"
    print(header)
    print(rule)
    for fmt in args.formats:
        for codec in args.codecs:
            for op in args.ops:
                row = {tool: results[(fmt, codec, op, tool)] for tool in args.tools}
                fastest = min(row, key=lambda tool: row[tool]["seconds"])
                line = f"| {fmt} | {codec} | {op} |"
                for tool in args.tools:
                    seconds = f"{row[tool]['seconds']:.3f}"
                    gbps = f"{row[tool]['gbps']:.2f}"
                    if tool == fastest:
                        seconds, gbps = f"**{seconds}**", f"**{gbps}**"
                    line += (f" {seconds} | {gbps} | "
                             f"{row[tool]['peak_rss_bytes'] / 1e6:.0f} |")
                if "tessera" in args.tools and len(args.tools) > 1:
                    best_peer = min(row[tool]["seconds"] for tool in row if tool != "tessera")
                    line += f" {best_peer / row['tessera']['seconds']:.2f}x |"
                print(line)
    if args.repeat > 1:
        print_fastest(args, results)
    if stored:
        print("\nStored bytes of each writer's copy (chunk or shard files; metadata left out):\n")
        print("| format | codec | " + " | ".join(args.tools) + " |")
        print("|---|---|" + "---:|" * len(args.tools))
        for fmt in args.formats:
            for codec in args.codecs:
                print(f"| {fmt} | {codec} | " + " | ".join(
                    format_size(stored[(fmt, codec, tool)]) for tool in args.tools) + " |")
    if described:
        print("\nEvery writer's copy read back by zarr-python, every value equal; its "
              "metadata as zarr-python sees it:\n")
        for (fmt, codec, tool), text in described.items():
            print(f"- {fmt} {codec} {tool}: {json.dumps(text)}")


def print_fastest(args, results):
    """The fastest run of each tool: less disturbed by other load than the median."""
    print(f"\nFastest of the {args.repeat} runs of each tool, seconds (bold: the fastest "
          "tool):\n")
    ratio = "tessera" in args.tools and len(args.tools) > 1
    print("| format | codec | op | " + " | ".join(args.tools) +
          (" | Tessera vs best peer |" if ratio else " |"))
    print("|---|---|---|" + "---:|" * (len(args.tools) + ratio))
    for fmt in args.formats:
        for codec in args.codecs:
            for op in args.ops:
                best = {tool: min(results[(fmt, codec, op, tool)]["runs"])
                        for tool in args.tools}
                fastest = min(best, key=best.get)
                cells = [f"**{best[tool]:.3f}**" if tool == fastest else f"{best[tool]:.3f}"
                         for tool in args.tools]
                if ratio:
                    peer = min(seconds for tool, seconds in best.items() if tool != "tessera")
                    cells.append(f"{peer / best['tessera']:.2f}x")
                print(f"| {fmt} | {codec} | {op} | " + " | ".join(cells) + " |")


def find_bench():
    """The most recently built build*/bench/zarr_io_bench of this checkout."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    candidates = [os.path.join(root, entry, "bench", "zarr_io_bench")
                  for entry in os.listdir(root) if entry.startswith("build")]
    candidates = [path for path in candidates if os.access(path, os.X_OK)]
    return max(candidates, key=os.path.getmtime) if candidates else None


def split_choices(parser, text, choices, option):
    values = text.split(",")
    for value in values:
        if value not in choices:
            parser.error(f"{option}: unknown {value!r}; choose from {', '.join(choices)}")
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bench", help="path of the built zarr_io_bench "
                                        "(default: the newest build*/bench/zarr_io_bench)")
    parser.add_argument("--shape", default="10000,10000")
    parser.add_argument("--chunks", default="1000,1000", help="chunks of v2 and v3")
    parser.add_argument("--inner", default="250,250", help="inner chunks of v3-sharded")
    parser.add_argument("--shards", default="2500,2500",
                        help="shards of v3-sharded (multiples of --inner)")
    parser.add_argument("--formats", default=",".join(FORMATS))
    parser.add_argument("--codecs", default=",".join(CODECS))
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--tools", default=",".join(TOOLS))
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of each operation (fresh processes); the median is shown")
    parser.add_argument("--threads", type=int, default=0,
                        help="Tessera's threads (0 = hardware concurrency)")
    parser.add_argument("--workers", type=int, default=os.cpu_count(),
                        help="zarr-python's and zarrs' threading.max_workers")
    parser.add_argument("--concurrency", type=int, default=10,
                        help="zarr-python's async.concurrency")
    parser.add_argument("--dir", help="work directory (default: a fresh temporary one)")
    parser.add_argument("--verify", action="store_true",
                        help="check every value read, and read every writer's copy back "
                             "with zarr-python (not timed)")
    parser.add_argument("--json", help="also write the raw results to this file")
    parser.add_argument("--child", choices=CHILDREN, help=argparse.SUPPRESS)
    parser.add_argument("--format", help=argparse.SUPPRESS)
    parser.add_argument("--codec", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        run_child(args)
        return
    args.formats = split_choices(parser, args.formats, FORMATS, "--formats")
    args.codecs = split_choices(parser, args.codecs, CODECS, "--codecs")
    args.ops = split_choices(parser, args.ops, OPS, "--ops")
    args.tools = split_choices(parser, args.tools, TOOLS, "--tools")
    args.repeat = max(1, args.repeat)
    if "tessera" in args.tools:
        args.bench = args.bench or find_bench()
        if not args.bench:
            parser.error("zarr_io_bench not found: build it and pass --bench PATH")
        args.bench = os.path.abspath(args.bench)
    for extent, inner in zip(parse_shape(args.shards), parse_shape(args.inner)):
        if extent % inner != 0:
            parser.error(f"--shards {args.shards} must be multiples of --inner {args.inner}")

    work = args.dir or tempfile.mkdtemp(prefix="tessera-compare-zarr-v3-")
    os.makedirs(work, exist_ok=True)
    results, stored, described = {}, {}, {}
    try:
        for fmt in args.formats:
            for codec in args.codecs:
                bench_case(args, fmt, codec, work, results, stored, described)
    finally:
        if not args.dir:
            shutil.rmtree(work, ignore_errors=True)
    print_tables(args, results, stored, described)
    if args.json:
        with open(args.json, "w") as file:
            json.dump([{"format": fmt, "codec": codec, "op": op, "tool": tool, **result}
                       for (fmt, codec, op, tool), result in results.items()]
                      + [{"format": fmt, "codec": codec, "tool": tool, "stored_bytes": size}
                         for (fmt, codec, tool), size in stored.items()], file, indent=2)


if __name__ == "__main__":
    main()
