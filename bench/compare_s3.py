#!/usr/bin/env python3
"""Zarr on S3: Tessera vs zarr-python 3 + obstore vs zarr-python 3 + s3fs, write and read.

Starts moto's S3-compatible server on loopback (tests/s3/s3_server.py), then writes and
reads the same array (default float64, 800 MB, chunks of 8 MB, uncompressed) through
s3:// with each tool, every operation in a fresh process, and prints one markdown table:
seconds, MB/s and peak RSS of each run's process, and the requests in flight each tool was
allowed (and, with --measure-in-flight, the most seen at once through a counting proxy).

  .venv/bin/python bench/compare_s3.py                                # 800 MB, every tool
  .venv/bin/python bench/compare_s3.py --size-mb 80 --tools zarr-obstore,zarr-s3fs --verify

Tessera's rows run the Python module (`tessera`, PYTHONPATH=build*/python found by
itself) on s3:// URLs. Options: --help.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from bench_util import PERIOD, STEP, format_size, measure

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "s3"))
from s3_server import S3Server  # noqa: E402

TOOLS = ("tessera", "zarr-obstore", "zarr-s3fs", "boto3")
OPS = ("write", "read")
BUCKET = "bench"

# Tessera's requests in flight are its tasks at once (each task's reads and writes go one
# after another): Spec(max_workers=N), admitted by memory as always.
TESSERA_IO_CONCURRENCY_SPEC = "max_workers"

# One codec setting per name: Tessera's compressor spec, and zarr-python 3's codec.
CODECS = {
    "none": (None, None),
    "blosc-lz4": ("blosc-lz4", {"name": "blosc", "configuration": {
        "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "blocksize": 0}}),
    "zstd": ("zstd:3", {"name": "zstd", "configuration": {"level": 3, "checksum": False}}),
}


def parse_shape(text):
    return tuple(int(extent) for extent in text.split(","))


def make_values(shape, dtype):
    """Element i (C order) holds (i % 9973) * 0.001 (bench_util.make_data's values), made
    in the array's own dtype a block at a time (no float64 copy of a float32 array)."""
    import numpy as np
    data = np.empty(shape, dtype=dtype)
    flat = data.reshape(-1)
    block = 1 << 22
    for start in range(0, flat.size, block):
        index = np.arange(start, min(start + block, flat.size), dtype=np.int64)
        flat[start:start + index.size] = (index % PERIOD) * STEP
    return data


def check_values(args, data, what):
    if args.verify:
        import numpy as np
        expected = make_values(data.shape, args.dtype)
        if data.dtype != expected.dtype or not np.array_equal(data, expected):
            raise SystemExit(f"{args.child} {args.url}: values {what} differ")


def split_url(url):
    bucket, _, prefix = url.removeprefix("s3://").partition("/")
    return bucket, prefix


# ---- child processes: one operation each ---------------------------------------------------
# Each reads the endpoint and credentials from the environment the parent gives it
# (S3Server.merged_env: AWS_ENDPOINT_URL, keys, region).

def tessera_spec(args):
    import tessera
    options = {"allowed_mem": args.allowed_mem}
    if args.threads:
        options["max_workers"] = args.threads
    if args.tessera_io_concurrency:
        options[TESSERA_IO_CONCURRENCY_SPEC] = args.tessera_io_concurrency
    return tessera.Spec(**options)


def child_tessera_write(args):
    import tessera
    data = make_values(parse_shape(args.shape), args.dtype)  # not timed
    spec = tessera_spec(args)
    start = time.perf_counter()
    tessera.asarray(data, chunks=parse_shape(args.chunks), spec=spec).to_zarr(
        args.url, compressor=CODECS[args.codec][0], zarr_format=3)
    return {"seconds": time.perf_counter() - start, "logical_bytes": data.nbytes}


def child_tessera_read(args):
    import tessera
    spec = tessera_spec(args)
    start = time.perf_counter()
    data = tessera.from_zarr(args.url, spec=spec).compute()
    seconds = time.perf_counter() - start
    check_values(args, data, "read")
    return {"seconds": seconds, "logical_bytes": data.nbytes}


def zarr_store(args, route, read_only=False):
    """zarr-python 3's store at args.url through obstore or s3fs, configured with the
    async concurrency and thread pool of the options."""
    import zarr
    zarr.config.set({"async.concurrency": args.concurrency,
                     "threading.max_workers": args.threads or None,
                     "array.write_empty_chunks": True})
    endpoint = os.environ["AWS_ENDPOINT_URL"]
    region = os.environ["AWS_REGION"]
    key, secret = os.environ["AWS_ACCESS_KEY_ID"], os.environ["AWS_SECRET_ACCESS_KEY"]
    if route == "obstore":
        import obstore.store
        bucket, prefix = split_url(args.url)
        store = obstore.store.S3Store(
            bucket, prefix=prefix, endpoint=endpoint, access_key_id=key,
            secret_access_key=secret, region=region, virtual_hosted_style_request=False,
            client_options={"allow_http": True})
        return zarr.storage.ObjectStore(store, read_only=read_only)
    return zarr.storage.FsspecStore.from_url(
        args.url, read_only=read_only,
        storage_options={"endpoint_url": endpoint, "key": key, "secret": secret,
                         "client_kwargs": {"region_name": region},
                         "use_listings_cache": False})


def child_zarr_write(args, route):
    import zarr
    shape = parse_shape(args.shape)
    data = make_values(shape, args.dtype)  # not timed
    codec = CODECS[args.codec][1]
    start = time.perf_counter()
    array = zarr.create_array(store=zarr_store(args, route), shape=shape,
                              chunks=parse_shape(args.chunks), dtype=data.dtype,
                              fill_value=0, compressors=codec, filters=None,
                              zarr_format=3, overwrite=True)
    array[...] = data
    return {"seconds": time.perf_counter() - start, "logical_bytes": data.nbytes}


def child_zarr_read(args, route):
    import zarr
    start = time.perf_counter()
    data = zarr.open_array(store=zarr_store(args, route, read_only=True), mode="r")[...]
    seconds = time.perf_counter() - start
    check_values(args, data, "read")
    return {"seconds": seconds, "logical_bytes": data.nbytes}


def boto3_client(args):
    import boto3
    from botocore.config import Config
    return boto3.session.Session().client("s3", config=Config(
        s3={"addressing_style": "path"}, max_pool_connections=args.concurrency))


def raw_objects(args):
    """(count, bytes per object) of the boto3 floor: the array's bytes in objects of one
    chunk's size (the last one shorter)."""
    import numpy as np
    shape, chunks = parse_shape(args.shape), parse_shape(args.chunks)
    itemsize = np.dtype(args.dtype).itemsize
    total = int(np.prod(shape)) * itemsize
    size = int(np.prod(chunks)) * itemsize
    return (total + size - 1) // size, size, total


def child_boto3_write(args):
    """The transport's floor: PUT the array's bytes as chunk-sized objects, args.concurrency
    at a time, no Zarr and no codec."""
    import concurrent.futures
    data = make_values(parse_shape(args.shape), args.dtype)  # not timed
    view = memoryview(data.reshape(-1)).cast("B")
    count, size, total = raw_objects(args)
    s3 = boto3_client(args)
    bucket, prefix = split_url(args.url)
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
        list(pool.map(lambda i: s3.put_object(Bucket=bucket, Key=f"{prefix}/{i}",
                                              Body=bytes(view[i * size:(i + 1) * size])),
                      range(count)))
    return {"seconds": time.perf_counter() - start, "logical_bytes": total}


def child_boto3_read(args):
    import concurrent.futures

    import numpy as np
    count, size, total = raw_objects(args)
    s3 = boto3_client(args)
    bucket, prefix = split_url(args.url)
    start = time.perf_counter()
    out = np.empty(total, dtype=np.uint8)

    def get(i):
        piece = s3.get_object(Bucket=bucket, Key=f"{prefix}/{i}")["Body"].read()
        target = memoryview(out)[i * size:min((i + 1) * size, total)]
        if len(piece) != len(target):
            raise SystemExit(f"object {i}: {len(piece)} bytes, not {len(target)}")
        target[:] = piece

    with concurrent.futures.ThreadPoolExecutor(args.concurrency) as pool:
        list(pool.map(get, range(count)))
    seconds = time.perf_counter() - start
    check_values(args, out.view(args.dtype).reshape(parse_shape(args.shape)), "read")
    return {"seconds": seconds, "logical_bytes": total}


def child_admin(args):
    """Not timed: make the bucket, or delete every object under args.url's prefix."""
    s3 = boto3_client(args)
    bucket, prefix = split_url(args.url)
    if args.admin == "make-bucket":
        try:
            s3.create_bucket(Bucket=bucket)
        except s3.exceptions.BucketAlreadyOwnedByYou:
            pass
        return {"seconds": 0.0, "logical_bytes": 0}
    deleted = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket,
                                                             Prefix=prefix + "/"):
        keys = [{"Key": item["Key"]} for item in page.get("Contents", [])]
        if keys:
            s3.delete_objects(Bucket=bucket, Delete={"Objects": keys, "Quiet": True})
            deleted += len(keys)
    return {"seconds": 0.0, "logical_bytes": 0, "deleted": deleted}


CHILDREN = {
    "tessera-write": child_tessera_write,
    "tessera-read": child_tessera_read,
    "zarr-obstore-write": lambda args: child_zarr_write(args, "obstore"),
    "zarr-obstore-read": lambda args: child_zarr_read(args, "obstore"),
    "zarr-s3fs-write": lambda args: child_zarr_write(args, "s3fs"),
    "zarr-s3fs-read": lambda args: child_zarr_read(args, "s3fs"),
    "boto3-write": child_boto3_write,
    "boto3-read": child_boto3_read,
    "admin": child_admin,
}


# ---- the parent: the server, every operation in a fresh process, the table -------------------
# It imports neither numpy nor zarr nor boto3 (a child's ru_maxrss starts from its
# parent's RSS at fork), and runs the counting proxy in a process of its own too.

def find_tessera_path():
    """A build*/python holding the tessera package (the newest), or None."""
    candidates = [os.path.join(ROOT, entry, "python") for entry in os.listdir(ROOT)
                  if entry.startswith("build")]
    candidates = [path for path in candidates
                  if os.path.exists(os.path.join(path, "tessera", "__init__.py"))]
    return max(candidates, key=os.path.getmtime) if candidates else None


class InFlightCounter:
    """tests/s3/fault_proxy.py in a process of its own, injecting nothing: every tool's
    requests go through it, and it counts the most in flight at once."""

    def __init__(self, upstream):
        self.process = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "tests", "s3", "fault_proxy.py"),
             "--upstream", upstream], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True)
        self.endpoint = json.loads(self.process.stdout.readline())["endpoint"]

    def ask(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def close(self):
        self.process.stdin.close()
        self.process.wait(30)


def child_command(args, child, url, extra=()):
    command = [sys.executable, os.path.abspath(__file__), "--child", child, "--url", url,
               "--shape", args.shape, "--chunks", args.chunks, "--dtype", args.dtype,
               "--codec", args.codec, "--concurrency", str(args.concurrency),
               "--threads", str(args.threads), "--allowed-mem", args.allowed_mem]
    if args.tessera_io_concurrency:
        command += ["--tessera-io-concurrency", str(args.tessera_io_concurrency)]
    if args.verify:
        command.append("--verify")
    return command + list(extra)


def run_child(args, env, child, url, counter=None, extra=()):
    """Runs one child; returns its JSON with peak_rss_bytes (its own, from wait4) and, with
    a counter, max_in_flight; or {"error": ...} when it fails."""
    if counter is not None:
        counter.ask("reset")
    code, stdout, stderr, _, peak_rss, _ = measure(child_command(args, child, url, extra),
                                                   env=env)
    if code != 0:
        lines = [line for line in stderr.strip().splitlines() if line.strip()]
        return {"error": f"exit {code}: {lines[-1] if lines else '(no output)'}"}
    result = json.loads(stdout.strip().splitlines()[-1])
    result["peak_rss_bytes"] = peak_rss
    if counter is not None:
        result["max_in_flight"] = counter.ask("stats")["max_in_flight"]
    return result


def setting_in_flight(args, tool):
    if tool == "tessera":
        if args.tessera_io_concurrency:
            return str(args.tessera_io_concurrency)
        return "engine default"
    return str(args.concurrency)  # zarr's async.concurrency, or boto3's threads


def summarize(runs):
    good = [run for run in runs if "error" not in run]
    if not good:
        return {"error": runs[0]["error"]}
    seconds = statistics.median(run["seconds"] for run in good)
    summary = {"seconds": seconds, "runs": [run["seconds"] for run in good],
               "logical_bytes": good[0]["logical_bytes"],
               "mbps": good[0]["logical_bytes"] / 1e6 / seconds,
               "peak_rss_bytes": max(run["peak_rss_bytes"] for run in good)}
    if "max_in_flight" in good[0]:
        summary["max_in_flight"] = max(run["max_in_flight"] for run in good)
    if len(good) < len(runs):
        summary["failed_runs"] = len(runs) - len(good)
    return summary


def bench(args, env, counter):
    results = {}
    check(run_child(args, env, "admin", f"s3://{BUCKET}/-", extra=["--admin", "make-bucket"]),
          "making the bucket")

    def clear(url):  # not timed
        check(run_child(args, env, "admin", url, extra=["--admin", "delete-prefix"]),
              f"deleting {url}")

    if "write" in args.ops:
        runs = {tool: [] for tool in args.tools}
        for round_number in range(args.repeat):
            # rounds, each starting one tool later, so drifts hit every tool alike
            order = args.tools[round_number % len(args.tools):] + \
                args.tools[:round_number % len(args.tools)]
            for tool in order:
                url = f"s3://{BUCKET}/{tool}.zarr"
                clear(url)
                runs[tool].append(run_child(args, env, f"{tool}-write", url, counter))
                clear(url)  # the server keeps no more than one copy besides the readers'
        for tool in args.tools:
            results[(tool, "write")] = summarize(runs[tool])
    if "read" in args.ops:
        reference = f"s3://{BUCKET}/reference.zarr"  # every Zarr reader reads these bytes
        raw = f"s3://{BUCKET}/raw"
        clear(reference)
        check(run_child(args, env, "zarr-obstore-write", reference),
              "writing the readers' input (zarr-python + obstore)")
        if "boto3" in args.tools:
            clear(raw)
            check(run_child(args, env, "boto3-write", raw), "writing boto3's objects")
        runs = {tool: [] for tool in args.tools}
        for round_number in range(args.repeat):
            order = args.tools[round_number % len(args.tools):] + \
                args.tools[:round_number % len(args.tools)]
            for tool in order:
                url = raw if tool == "boto3" else reference
                runs[tool].append(run_child(args, env, f"{tool}-read", url, counter))
        for tool in args.tools:
            results[(tool, "read")] = summarize(runs[tool])
        clear(reference)
        clear(raw)
    return results


def check(result, what):
    if "error" in result:
        sys.exit(f"compare_s3.py: {what} failed: {result['error']}")
    return result


def print_table(args, results, measured):
    import math
    itemsize = {"float32": 4, "float64": 8}[args.dtype]
    shape, chunks = parse_shape(args.shape), parse_shape(args.chunks)
    print(f"{args.dtype} array {shape} ({format_size(math.prod(shape) * itemsize)}) in "
          f"chunks {chunks} ({format_size(math.prod(chunks) * itemsize)} each), Zarr v3, "
          f"codec {args.codec}; moto's S3 server on loopback; {os.cpu_count()} CPUs; "
          f"median of {args.repeat} run(s), each in a fresh process; peak RSS: the "
          f"process's own, the largest of the runs"
          + ("; through a counting proxy" if measured else "") + ".\n")
    header = "| tool | op | requests in flight allowed |"
    rule = "|---|---|---|"
    if measured:
        header += " most in flight seen |"
        rule += "---:|"
    header += " s | MB/s | peak RSS MB |"
    rule += "---:|---:|---:|"
    print(header)
    print(rule)
    errors = []
    for op in args.ops:
        for tool in args.tools:
            result = results[(tool, op)]
            line = f"| {tool} | {op} | {setting_in_flight(args, tool)} |"
            if "error" in result:
                line += " - |" if measured else ""
                line += " failed | - | - |"
                errors.append(f"{tool} {op}: {result['error']}")
            else:
                if measured:
                    line += f" {result['max_in_flight']} |"
                line += (f" {result['seconds']:.2f} | {result['mbps']:.0f} | "
                         f"{result['peak_rss_bytes'] / 1e6:.0f} |")
            print(line)
    notes = {
        "tessera": "the tessera module: asarray(values).to_zarr(url) / from_zarr(url)"
                   ".compute()",
        "zarr-obstore": "zarr-python 3 (ObjectStore over obstore's S3Store)",
        "zarr-s3fs": "zarr-python 3 (FsspecStore over s3fs)",
        "boto3": "boto3 put_object/get_object of the chunks' bytes on a thread pool, no "
                 "Zarr: the server's and the transport's floor",
    }
    print()
    for tool in args.tools:
        print(f"- {tool}: {notes[tool]}")
    for error in errors:
        print(f"- failed: {error}")


def default_layout(args):
    """Shape (rows, --columns) of about --size-mb, chunks of about --chunk-mb (1000 rows
    by as many columns as make it)."""
    itemsize = {"float32": 4, "float64": 8}[args.dtype]
    rows = max(1, round(args.size_mb * 1e6 / (args.columns * itemsize)))
    chunk_rows = min(rows, 1000)
    chunk_columns = max(1, min(args.columns,
                               round(args.chunk_mb * 1e6 / (chunk_rows * itemsize))))
    return f"{rows},{args.columns}", f"{chunk_rows},{chunk_columns}"


def split_choices(parser, text, choices, option):
    values = [value for value in text.split(",") if value]
    for value in values:
        if value not in choices:
            parser.error(f"{option}: unknown {value!r}; choose from {', '.join(choices)}")
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=800,
                        help="array size in MB (10^6 bytes), default 800")
    parser.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    parser.add_argument("--columns", type=int, default=10000,
                        help="the array's second extent (the first follows from --size-mb)")
    parser.add_argument("--chunk-mb", type=float, default=8, help="chunk size in MB")
    parser.add_argument("--shape", help="a,b: overrides --size-mb and --columns")
    parser.add_argument("--chunks", help="a,b: overrides --chunk-mb")
    parser.add_argument("--codec", choices=sorted(CODECS), default="none")
    parser.add_argument("--tools", default=",".join(TOOLS),
                        help=f"comma-separated, from {', '.join(TOOLS)}")
    parser.add_argument("--ops", default="write,read", help="write, read or both")
    parser.add_argument("--concurrency", type=int, default=10,
                        help="zarr-python's async.concurrency (requests in flight; zarr's "
                             "default 10) and boto3's threads")
    parser.add_argument("--tessera-io-concurrency", type=int, default=0,
                        help="Tessera's requests in flight (0: the engine's default, one "
                             f"per core), as Spec({TESSERA_IO_CONCURRENCY_SPEC}=...)")
    parser.add_argument("--threads", type=int, default=0,
                        help="Tessera's max_workers and zarr's threading.max_workers "
                             "(0: their defaults)")
    parser.add_argument("--allowed-mem", default="1GB", help="Tessera's allowed_mem")
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs of each operation (fresh processes); the median is shown")
    parser.add_argument("--measure-in-flight", action="store_true",
                        help="route every tool through a counting proxy (its own process) "
                             "and report the most requests in flight at once (slower)")
    parser.add_argument("--verify", action="store_true",
                        help="every reader checks every value (not timed)")
    parser.add_argument("--json", help="also write the raw results to this file")
    parser.add_argument("--child", choices=CHILDREN, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--admin", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if not args.shape or not args.chunks:
        shape, chunks = default_layout(args)
        args.shape = args.shape or shape
        args.chunks = args.chunks or chunks
    if args.child:
        print(json.dumps(CHILDREN[args.child](args)))
        return
    args.tools = split_choices(parser, args.tools, TOOLS, "--tools")
    args.ops = split_choices(parser, args.ops, OPS, "--ops")
    args.repeat = max(1, args.repeat)

    extra = {}
    if "tessera" in args.tools:
        path = find_tessera_path()
        if path:
            extra["PYTHONPATH"] = os.pathsep.join(
                filter(None, [path, os.environ.get("PYTHONPATH")]))
    extra["TESSERA_PROGRESS"] = "0"
    counter = None
    with S3Server(stop_timeout=30) as server:
        try:
            endpoint = server.endpoint
            if args.measure_in_flight:
                counter = InFlightCounter(server.endpoint)
                endpoint = counter.endpoint
            env = server.merged_env(endpoint=endpoint, **extra)
            start = time.perf_counter()
            results = bench(args, env, counter)
            elapsed = time.perf_counter() - start
        finally:
            if counter is not None:
                counter.close()
    print_table(args, results, args.measure_in_flight)
    print(f"\n(all runs: {elapsed:.0f} s)")
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"options": {key: value for key, value in vars(args).items()
                                   if key not in ("child", "url", "admin")},
                       "results": [{"tool": tool, "op": op, **result}
                                   for (tool, op), result in results.items()]},
                      out, indent=1)


if __name__ == "__main__":
    main()
