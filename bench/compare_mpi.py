#!/usr/bin/env python3
"""Tessera's MPI executor against Dask distributed, on 1, 2 and 4 ranks (workers): one table.

    bench/.venv/bin/python bench/compare_mpi.py                        # the whole matrix
    bench/.venv/bin/python bench/compare_mpi.py --workloads rechunk --ranks 2 --repeat 1
    bench/.venv/bin/python bench/compare_mpi.py --scale 0.1 --dewpoint-scale 0.1 --repeat 1   # quick

Workloads (inputs from bench/peer_work.py, written once into --data, blosc-lz4 Zarr v2;
outputs blosc-lz4 Zarr v2):
  rechunk          the seed rechunk at --scale: float64 (10000, 10000 s), chunks
                   (10000, 1000) -> (1000, 10000), 800 MB at 1
  dewpoint-random  the dew point (peer_work.DEW_POINT_FORMULA) over two float32
                   (32 s, 4000, 4000) fields of noise at --dewpoint-scale (default 0.25)
Tools:
  tessera  `mpirun -np N tessera rechunk|calc ... --executor mpi`, each rank wrapped in
           /usr/bin/time for its own peak RSS; tiers (rechunk): "ram" = `--intermediate
           memory` (intermediates in the ranks' memory), "disk" = `--intermediate disk`
           (intermediates in the shared --work-dir); the dew point has no intermediate ("-")
  dask     Dask distributed: LocalCluster(n_workers=N, threads_per_worker=max(1, cores // N),
           memory_limit=RAM / N), from_zarr / to_zarr; the rechunk by P2P
           (array.rechunk.method = p2p), tiers "ram" (distributed.p2p.storage.disk = False)
           and "disk" (P2P's default: shards in the workers' local directory, under --work)
Columns: wall seconds (median of --repeat; Tessera: the whole mpirun command, MPI start
included; Dask: from opening the inputs to the last chunk written, the cluster already up),
setup (Tessera: wall minus the run's own "Total"; Dask: starting the cluster, not in wall),
peak RSS per rank/worker (Tessera: each rank's ru_maxrss from /usr/bin/time; Dask: each
worker process's RSS sampled every 50 ms with psutil), the largest and the sum over ranks,
largest of the runs; a cross-check (Tessera: the peak RSS its MPI summary reports per rank;
Dask: the workers' own ru_maxrss); bytes moved (Tessera: blocks fetched + rebalanced +
replicated + results gathered, from its MPI summary; Dask: what P2P's comm buffers
processed, from the workers' metrics); checksum: a sample of the output (its corners, read
by zarr-python in another process, peer_work.sample_sum) against the first row's.
Every run is appended to --results as a JSON line. See bench/README.md."""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peer_work  # noqa: E402  (imports no numpy at module level: the parent stays small)
from bench_util import read_files  # noqa: E402

WORKLOADS = ("rechunk", "dewpoint-random")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1", "TESSERA_PROGRESS": "0",
           "TESSERA_HISTORY": "off"}
TESSERA_TIERS = {"ram": "memory", "disk": "disk"}
UNITS = {"B": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12}
SIZE = r"(\d+(?:\.\d+)?) (B|kB|MB|GB|TB)"
MPI_LINE = re.compile(
    rf"MPI: (\d+) ranks?; blocks fetched {SIZE}, replicated {SIZE}, rebalanced {SIZE}, "
    rf"dropped {SIZE}, spilled {SIZE}, results gathered {SIZE}; (\d+) directory decisions?; "
    rf"(\d+) tasks? moved after a failure")
RANK_LINE = re.compile(rf"^\s+rank (\d+): (\d+) tasks?, peak RSS {SIZE}, largest task {SIZE}, "
                       rf"held at most {SIZE}, memory {SIZE}", re.M)
TOTAL_LINE = re.compile(rf"^Total (\d+(?:\.\d+)?) s; process peak RSS {SIZE}"
                        rf"(?:.*?; at most (\d+) tasks? at once)?", re.M)


def size(number, unit):
    return int(round(float(number) * UNITS[unit]))


def format_size(num_bytes):
    if num_bytes is None:
        return "-"
    for unit, factor in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if num_bytes >= factor:
            return f"{num_bytes / factor:.1f} {unit}"
    return f"{num_bytes:.0f} B"


def parse_summary(stdout):
    """Tessera's run summary (rank 0's stdout): {"own_seconds", "moved": {...},
    "reported_rss": [per rank], ...}; keys missing where a line is missing."""
    parsed = {}
    total = TOTAL_LINE.search(stdout)
    if total:
        parsed["own_seconds"] = float(total.group(1))
        if total.group(4):
            parsed["max_tasks_at_once"] = int(total.group(4))
    mpi = MPI_LINE.search(stdout)
    if mpi:
        groups = mpi.groups()
        names = ("fetched", "replicated", "rebalanced", "dropped", "spilled", "gathered")
        parsed["ranks_reported"] = int(groups[0])
        parsed["moved"] = {name: size(groups[1 + 2 * i], groups[2 + 2 * i]) for i, name in enumerate(names)}
        parsed["directory_decisions"] = int(groups[13])
        parsed["tasks_moved_after_failure"] = int(groups[14])
    ranks = RANK_LINE.findall(stdout)
    if ranks:
        ranks.sort(key=lambda r: int(r[0]))
        parsed["rank_tasks"] = [int(r[1]) for r in ranks]
        parsed["reported_rss"] = [size(r[2], r[3]) for r in ranks]
        parsed["largest_task"] = [size(r[4], r[5]) for r in ranks]
        parsed["held_max"] = [size(r[6], r[7]) for r in ranks]
    return parsed


def moved_bytes(moved):
    """What the memory manager moved: fetched + rebalanced + replicated + gathered."""
    return sum(moved[k] for k in ("fetched", "rebalanced", "replicated", "gathered"))


# ---- the binary -----------------------------------------------------------------------

def run_command(command, timeout, env=None):
    """Runs `command` in a session of its own; returns (returncode, stdout, stderr), or None
    when it ran past `timeout` seconds: then SIGTERM (mpirun passes it to its ranks), and
    10 s later SIGKILL to the whole process group."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=env, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
        return process.returncode, stdout, stderr
    except subprocess.TimeoutExpired:
        process.terminate()
        try:
            process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        process.communicate()
        return None


def has_mpi(binary):
    try:
        out = subprocess.run([binary, "rechunk", "--help"], capture_output=True, text=True, timeout=30)
    except OSError:
        return False
    return "mpi" in out.stdout


def tessera_binary(requested):
    if requested:
        if not os.path.exists(requested):
            sys.exit(f"no tessera command at {requested}")
        if not has_mpi(requested):
            sys.exit(f"{requested} has no --executor mpi (built before the MPI executor?)")
        return os.path.abspath(requested)
    root = os.path.dirname(HERE)
    for candidate in ("build-bench", "build"):
        path = os.path.join(root, candidate, "src", "cli", "tessera")
        if os.path.exists(path):
            if has_mpi(path):
                return path
            print(f"note: {path} has no --executor mpi; trying the next build", file=sys.stderr)
    sys.exit("no tessera command with --executor mpi: build build-bench/ (or build/), or pass --tessera")


# ---- one Tessera run under mpirun --------------------------------------------------------

def tessera_command(args, workload, scale, out, run_dir, tier):
    inputs = peer_work.inputs_of(workload, args.data, scale)
    result = os.path.join(out, "result.zarr")
    common = ["--allowed-mem", args.allowed_mem, "--executor", "mpi", "--overwrite", "--work-dir", run_dir]
    if workload == "rechunk":
        chunks = ",".join(map(str, peer_work.rechunk_target(scale)))
        return [args.tessera, "rechunk", inputs[0], result, "--chunks", chunks,
                "--intermediate", TESSERA_TIERS[tier]] + common
    return [args.tessera, "calc", peer_work.DEW_POINT_FORMULA, "--input", f"t2={inputs[0]}",
            "--input", f"rh={inputs[1]}", "--output", result] + common


def run_tessera(args, workload, scale, ranks, tier, run_dir):
    out = os.path.join(run_dir, "out")
    rss_dir = os.path.join(run_dir, "rss")
    os.makedirs(out)
    os.makedirs(rss_dir)
    command = tessera_command(args, workload, scale, out, run_dir, tier)
    # Each rank runs under GNU time, which writes the rank's own peak RSS (KiB) to a file
    # named by the rank: $0 is rss_dir, "$@" the tessera command (no quoting to get wrong).
    wrapper = 'exec /usr/bin/time -f "%M" -o "$0/rss.$OMPI_COMM_WORLD_RANK" "$@"'
    full = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(ranks),
            "sh", "-c", wrapper, rss_dir] + command
    env = dict(os.environ, **MPI_ENV)
    record = {"command": command}
    start = time.perf_counter()
    done = run_command(full, args.timeout, env)
    if done is None:
        record["error"] = f"timed out after {args.timeout} s"
        return record, out
    record["wall"] = time.perf_counter() - start
    returncode, stdout, stderr = done
    parsed = parse_summary(stdout)
    record.update(parsed)
    rss = []
    for rank in range(ranks):
        try:
            with open(os.path.join(rss_dir, f"rss.{rank}")) as file:
                lines = [line for line in file.read().split("\n") if line.strip()]
            rss.append(int(lines[-1]) * 1024)  # KiB; a failed command's file starts with a status line
        except (OSError, ValueError, IndexError):
            rss.append(None)
    record["rss"] = rss
    if returncode != 0:
        tail = (stderr.strip() or stdout.strip()).splitlines()
        record["error"] = (tail[-1][:300] if tail else "") + f" (exit {returncode})"
        return record, out
    if "own_seconds" in parsed:
        record["setup"] = record["wall"] - parsed["own_seconds"]
    if "moved" in parsed:
        record["moved_bytes"] = moved_bytes(parsed["moved"])
    else:
        record["note"] = "no MPI summary in tessera's output"
    return record, out


# ---- one Dask run (a child process of its own) ------------------------------------------

def run_dask(args, workload, scale, workers, tier, run_dir):
    out = os.path.join(run_dir, "out")
    os.makedirs(out)
    command = [sys.executable, os.path.abspath(__file__), "--child-dask", workload, str(scale),
               str(workers), tier, args.data, out, os.path.join(run_dir, "dask")]
    record = {}
    start = time.perf_counter()
    done = run_command(command, args.timeout)
    if done is None:
        record["error"] = f"timed out after {args.timeout} s"
        return record, out
    record["process_seconds"] = time.perf_counter() - start
    returncode, stdout, stderr = done
    lines = stdout.strip().splitlines()
    if returncode != 0 or not lines:
        tail = stderr.strip().splitlines()
        record["error"] = (tail[-1][:300] if tail else "") + f" (exit {returncode})"
        return record, out
    record.update(json.loads(lines[-1]))
    return record, out


def child_dask(workload, scale, workers, tier, data, out, local_directory):
    """Runs in its own process: starts a LocalCluster, runs the workload once, prints one
    JSON line."""
    import logging
    import resource
    import threading

    import dask
    import dask.array as da
    import psutil
    from distributed import Client, LocalCluster

    scale, workers = float(scale), int(workers)
    cores = os.cpu_count()
    threads = max(1, cores // workers)
    memory_limit = psutil.virtual_memory().total // workers
    os.makedirs(local_directory, exist_ok=True)
    start = time.perf_counter()
    cluster = LocalCluster(n_workers=workers, threads_per_worker=threads, memory_limit=memory_limit,
                           processes=True, local_directory=local_directory, dashboard_address=None,
                           silence_logs=logging.ERROR)
    client = Client(cluster)
    client.wait_for_workers(workers)
    setup = time.perf_counter() - start
    pids = client.run(os.getpid)
    processes = {address: psutil.Process(pid) for address, pid in pids.items()}
    peaks = {address: 0 for address in processes}
    stop = threading.Event()

    def sample():
        while True:
            for address, process in processes.items():
                try:
                    peaks[address] = max(peaks[address], process.memory_info().rss)
                except psutil.Error:
                    pass
            if stop.wait(0.05):
                return

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    inputs = peer_work.inputs_of(workload, data, scale)
    result = os.path.join(out, "result.zarr")
    config = {"array.rechunk.method": "p2p", "distributed.p2p.storage.disk": tier != "ram"}
    with dask.config.set(config):
        start = time.perf_counter()
        arrays = [da.from_zarr(path) for path in inputs]
        if workload == "rechunk":
            x = arrays[0].rechunk(peer_work.rechunk_target(scale))
        else:
            x = peer_work.dew_point(da, *arrays)
        layers = list(x.dask.layers)
        da.to_zarr(x, peer_work.zarr_array(result, x.shape, x.chunksize, x.dtype))
        wall = time.perf_counter() - start
    stop.set()
    sampler.join()

    def p2p_bytes(dask_worker):
        return [[list(map(str, key)), value] for key, value in dask_worker.digests_total.items()
                if isinstance(key, tuple) and key and key[0] == "p2p" and key[-1] == "bytes"]

    def own_maxrss():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024

    metrics = client.run(p2p_bytes)
    maxrss = client.run(own_maxrss)
    order = sorted(processes)
    # ("p2p", span, "background-comms", "process", "bytes"): shards the comm buffers sent
    # to their workers (the sending worker included); ("p2p", span, "foreground",
    # "disk-read", "bytes"): shards read back from the workers' disks (disk tier only).
    comm = sum(v for m in metrics.values() for k, v in m if k[2] == "background-comms" and k[3] == "process")
    disk = sum(v for m in metrics.values() for k, v in m if k[3] == "disk-read")
    client.close()
    cluster.close()
    print(json.dumps({
        "wall": wall, "setup": setup, "threads_per_worker": threads, "memory_limit": memory_limit,
        "rss": [peaks[a] for a in order], "reported_rss": [maxrss[a] for a in order],
        "client_maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "p2p": any("p2p" in name for name in layers), "moved_bytes": int(comm) if comm else None,
        "p2p_disk_bytes": int(disk), "p2p_metrics": {a: metrics[a] for a in order}}))


# ---- the matrix --------------------------------------------------------------------------

def configs(args, workload):
    """(tool, ranks, tier) in table order; the first row is every other row's reference."""
    rows = []
    for tool in args.tools:
        for ranks in args.ranks:
            if workload != "rechunk":
                rows.append((tool, ranks, "-"))
                continue
            for tier in (args.tessera_tiers if tool == "tessera" else args.dask_tiers):
                rows.append((tool, ranks, tier))
    return rows


def checksum(out):
    done = subprocess.run([sys.executable, os.path.join(HERE, "peer_work.py"), "checksum", out],
                          capture_output=True, text=True)
    if done.returncode != 0:
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])["checksum"]


def scale_of(args, workload):
    return args.scale if workload == "rechunk" else args.dewpoint_scale


def run_all(args, log):
    records = []
    for workload in args.workloads:
        scale = scale_of(args, workload)
        start = time.perf_counter()
        subprocess.run([sys.executable, os.path.join(HERE, "peer_work.py"), "make-inputs", workload,
                        args.data, str(scale)], check=True)
        print(f"inputs of {workload} at {scale:g}: {time.perf_counter() - start:.1f} s", file=sys.stderr)
    for repeat in range(args.repeat):
        for workload in args.workloads:
            scale = scale_of(args, workload)
            for path in peer_work.inputs_of(workload, args.data, scale):
                read_files(path)  # every run finds the inputs in the page cache
            rows = configs(args, workload)
            shift = repeat % len(rows)  # each round starts one row later
            for tool, ranks, tier in rows[shift:] + rows[:shift]:
                run_dir = tempfile.mkdtemp(prefix=f"{tool}-{ranks}-", dir=args.work)
                subprocess.run(["sync"], check=False)
                runner = run_tessera if tool == "tessera" else run_dask
                record, out = runner(args, workload, scale, ranks, tier, run_dir)
                record.update({"workload": workload, "scale": scale, "tool": tool, "ranks": ranks,
                               "tier": tier, "repeat": repeat, "allowed_mem": args.allowed_mem,
                               "tessera": args.tessera, "time": time.strftime("%Y-%m-%dT%H:%M:%S")})
                if "error" not in record:
                    record["checksum"] = checksum(out)
                shutil.rmtree(run_dir, ignore_errors=True)
                log.write(json.dumps(record) + "\n")
                log.flush()
                records.append(record)
                shown = record.get("error") or f"{record['wall']:.2f} s"
                print(f"  {workload} {tool} x{ranks} {tier} #{repeat + 1}: {shown}", file=sys.stderr, flush=True)
    return records


# ---- the table ---------------------------------------------------------------------------

def agrees(value, reference):
    if value is None or reference is None:
        return "?"
    return "ok" if abs(value - reference) <= 1e-5 * max(1.0, abs(reference)) else "DIFFERS"


def table(args, records):
    lines = [f"{os.cpu_count()} cores; allowed_mem {args.allowed_mem}; tessera: {args.tessera}; "
             f"median of {args.repeat} run(s); RSS: largest of the runs", "",
             "| workload | tool | ranks | tier | runs | wall s | setup s | peak RSS max/rank | "
             "peak RSS sum | reported RSS max | moved | checksum |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for workload in args.workloads:
        scale = scale_of(args, workload)
        rows = configs(args, workload)
        runs = {row: [r for r in records if r["workload"] == workload and (r["tool"], r["ranks"], r["tier"]) == row]
                for row in rows}
        reference = next((r["checksum"] for row in rows for r in runs[row]
                          if r.get("checksum") is not None), None)
        name = f"{workload} ({scale:g})"
        for (tool, ranks, tier) in rows:
            done = [r for r in runs[(tool, ranks, tier)] if "error" not in r]
            label = "tessera mpi" if tool == "tessera" else "dask p2p" if workload == "rechunk" else "dask"
            if not done:
                errors = [r.get("error", "") for r in runs[(tool, ranks, tier)]]
                lines.append(f"| {name} | {label} | {ranks} | {tier} | 0 | failed: {errors[0] if errors else ''} "
                             "| | | | | | |")
                continue

            def median(key):
                values = [r[key] for r in done if r.get(key) is not None]
                return statistics.median(values) if values else None

            def largest(values):
                values = [v for v in values if v is not None]
                return max(values) if values else None

            rss_max = largest(largest(r.get("rss", [])) for r in done)
            rss_sum = largest(sum(v for v in r.get("rss", []) if v) if r.get("rss") else None for r in done)
            reported = largest(largest(r.get("reported_rss", [])) for r in done)
            setup = median("setup")
            moved = median("moved_bytes")
            checks = {agrees(r.get("checksum"), reference) for r in done}
            check = "DIFFERS" if "DIFFERS" in checks else "?" if "?" in checks else "ok"
            lines.append(f"| {name} | {label} | {ranks} | {tier} | {len(done)} | {median('wall'):.2f} | "
                         f"{'-' if setup is None else f'{setup:.2f}'} | {format_size(rss_max)} | "
                         f"{format_size(rss_sum)} | {format_size(reported)} | {format_size(moved)} | {check} |")
    return "\n".join(lines)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--child-dask":
        child_dask(*sys.argv[2:9])
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="from: " + ", ".join(WORKLOADS))
    parser.add_argument("--ranks", default="1,2,4", help="MPI ranks / Dask worker processes")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each row (the median is shown)")
    parser.add_argument("--tools", default="tessera,dask")
    parser.add_argument("--tessera-tiers", default="ram,disk", help="the rechunk's tiers for Tessera")
    parser.add_argument("--dask-tiers", default="ram,disk",
                        help="the rechunk's tiers for Dask P2P (ram: p2p.storage.disk False; disk: P2P's default)")
    parser.add_argument("--scale", type=float, default=1.0, help="the rechunk's size (1: 800 MB)")
    parser.add_argument("--dewpoint-scale", type=float, default=0.25,
                        help="the dew point's size (1: 2 x 2 GB of inputs; 0.25: 8 slices, 2 x 512 MB)")
    parser.add_argument("--allowed-mem", default="1GB", help="Tessera's --allowed-mem")
    parser.add_argument("--data", default="/root/peers-data", help="inputs (made there when missing, kept)")
    parser.add_argument("--work", help="outputs and intermediates (default: a temporary folder under /root, removed after)")
    parser.add_argument("--tessera", help="the tessera command (default: build-bench/, else build/, "
                        "the first with --executor mpi)")
    parser.add_argument("--results", default=os.path.join(HERE, "results", "mpi-runs.jsonl"),
                        help="every run appended as a JSON line")
    parser.add_argument("--timeout", type=int, default=600, help="seconds one run may take")
    args = parser.parse_args()
    args.workloads = args.workloads.split(",")
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        sys.exit(f"unknown workload {unknown[0]!r}: choose from {', '.join(WORKLOADS)}")
    args.ranks = [int(n) for n in args.ranks.split(",")]
    args.tools = [t for t in args.tools.split(",") if t]
    args.tessera_tiers = args.tessera_tiers.split(",")
    args.dask_tiers = args.dask_tiers.split(",")
    if any(t not in ("tessera", "dask") for t in args.tools):
        sys.exit("--tools: tessera, dask")
    if any(t not in ("ram", "disk") for t in args.tessera_tiers + args.dask_tiers):
        sys.exit("tiers: ram, disk")
    if "tessera" in args.tools:
        args.tessera = tessera_binary(args.tessera)
        for program in ("mpirun", "/usr/bin/time"):
            if not shutil.which(program):
                sys.exit(f"{program} is missing")
    # The children import these; check once here, in a child (the parent stays small).
    check = subprocess.run([sys.executable, "-c", "import zarr, numcodecs, dask, distributed, psutil"],
                           capture_output=True, text=True)
    if check.returncode != 0:
        sys.exit(f"{sys.executable} lacks a module ({check.stderr.strip().splitlines()[-1]}): "
                 "run with bench/.venv/bin/python (bench/run_peers makes it)")
    os.makedirs(args.data, exist_ok=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.results)), exist_ok=True)
    temporary = args.work is None
    args.work = tempfile.mkdtemp(prefix="compare-mpi-", dir="/root") if temporary else args.work
    os.makedirs(args.work, exist_ok=True)
    try:
        with open(args.results, "a") as log:
            records = run_all(args, log)
    finally:
        if temporary:
            shutil.rmtree(args.work, ignore_errors=True)
    print(table(args, records))


if __name__ == "__main__":
    main()
