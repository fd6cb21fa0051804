#!/usr/bin/env python3
"""Tessera on a Dask cluster against Dask's own graph and Tessera's threads executor: one table.

    .venv/bin/python bench/compare_dask_executor.py                      # both workloads, 3 runs
    .venv/bin/python bench/compare_dask_executor.py --scale 0.1 --dewpoint-scale 0.05 --repeat 1

Workloads (inputs from bench/peer_work.py, written once into --data, blosc-lz4 Zarr v2):
  rechunk          the seed rechunk at --scale: float64 (10000, 10000 s), chunks
                   (10000, 1000) -> (1000, 10000), 800 MB at 1
  dewpoint-random  the dew point over two float32 (32 s, 4000, 4000) fields at --dewpoint-scale
Tools, each in a fresh process:
  tessera-dask     Spec(executor="dask") on a LocalCluster of 2 worker processes, 1 thread each,
                   each declaring MEMORY = RAM / 2 (the documented resource), intermediates in
                   --work
  dask             Dask's own graph of the same computation on the same cluster: da.from_zarr,
                   the rechunk by P2P (array.rechunk.method = p2p), da.to_zarr
  tessera-threads  Spec(executor="threads", max_workers=2) in one process
Columns: wall seconds (median of --repeat, from opening the inputs to the last chunk written,
the cluster already up), peak RSS per worker process (the largest, sampled every 50 ms with
psutil; tessera-threads: its one process), the client process's own peak, and a checksum of
the output (peer_work.sample_sum, read by zarr-python) against the first row's."""
import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peer_work  # noqa: E402
from compare_mpi import checksum, format_size  # noqa: E402

TOOLS = ("tessera-dask", "dask", "tessera-threads")
WORKLOADS = ("rechunk", "dewpoint-random")


class PeakSampler:
    """The peak RSS of some processes, sampled every 50 ms."""

    def __init__(self, pids):
        import psutil

        self.processes = {pid: psutil.Process(pid) for pid in pids}
        self.peaks = {pid: 0 for pid in pids}
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            for pid, process in self.processes.items():
                try:
                    self.peaks[pid] = max(self.peaks[pid], process.memory_info().rss)
                except Exception:  # noqa: BLE001  (a process gone)
                    pass
            if self.stop.wait(0.05):
                return

    def finish(self):
        self.stop.set()
        self.thread.join()
        return list(self.peaks.values())


def child(tool, workload, scale, data, out, work):
    import resource

    import psutil

    inputs = peer_work.inputs_of(workload, data, scale)
    result = os.path.join(out, "result.zarr")
    client = cluster = None
    if tool != "tessera-threads":
        from distributed import Client, LocalCluster

        memory = psutil.virtual_memory().total // 2
        cluster = LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            memory_limit=memory,
            resources={"MEMORY": memory},
            local_directory=work,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
        client = Client(cluster)
        client.wait_for_workers(2)
        pids = list(client.run(os.getpid).values())
    else:
        pids = [os.getpid()]
    sampler = PeakSampler(pids)
    start = time.perf_counter()
    if tool == "dask":
        import dask
        import dask.array as da

        with dask.config.set({"array.rechunk.method": "p2p"}):
            arrays = [da.from_zarr(path) for path in inputs]
            if workload == "rechunk":
                x = arrays[0].rechunk(peer_work.rechunk_target(scale))
            else:
                x = peer_work.dew_point(da, *arrays)
            da.to_zarr(x, peer_work.zarr_array(result, x.shape, x.chunksize, x.dtype))
    else:
        import tessera

        spec = tessera.Spec(
            work_dir=work,
            allowed_mem="1GB",
            executor="dask" if tool == "tessera-dask" else "threads",
            max_workers=2,
            history="off",
        )
        arrays = [tessera.from_zarr(path, spec=spec) for path in inputs]
        if workload == "rechunk":
            x = arrays[0].rechunk(peer_work.rechunk_target(scale))
        else:
            x = peer_work.dew_point(tessera, *arrays)
        x.to_zarr(result, zarr_format=2)
    wall = time.perf_counter() - start
    peaks = sampler.finish()
    if client is not None:
        client.close()
        cluster.close()
    print(json.dumps({
        "wall": wall,
        "worker_rss": max(peaks),
        "client_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=WORKLOADS)
    parser.add_argument("--tools", nargs="+", default=list(TOOLS), choices=TOOLS)
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--dewpoint-scale", type=float, default=0.25)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", default=os.path.join(tempfile.gettempdir(), "tessera-bench-data"))
    parser.add_argument("--work", default=tempfile.gettempdir())
    parser.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        tool, workload, scale, data, out, work = args.child
        child(tool, workload, float(scale), data, out, work)
        return
    rows = {}
    for workload in args.workloads:
        scale = args.scale if workload == "rechunk" else args.dewpoint_scale
        subprocess.run([sys.executable, os.path.join(HERE, "peer_work.py"), "make-inputs",
                        workload, args.data, str(scale)], check=True)
        for repeat in range(args.repeat):
            for tool in args.tools:
                run_dir = tempfile.mkdtemp(prefix=f"{tool}-", dir=args.work)
                out = os.path.join(run_dir, "out")
                os.makedirs(out)
                done = subprocess.run(
                    [sys.executable, os.path.abspath(__file__), "--child", tool, workload,
                     str(scale), args.data, out, run_dir],
                    capture_output=True, text=True, env={**os.environ, "TESSERA_PROGRESS": "0"})
                row = rows.setdefault((workload, scale, tool), {"walls": [], "worker": 0,
                                                                 "client": 0, "checksum": None,
                                                                 "error": None})
                if done.returncode != 0:
                    row["error"] = (done.stderr.strip().splitlines() or ["?"])[-1][:200]
                    print(f"{workload} {tool}: {row['error']}", file=sys.stderr)
                    continue
                record = json.loads(done.stdout.strip().splitlines()[-1])
                row["walls"].append(record["wall"])
                row["worker"] = max(row["worker"], record["worker_rss"])
                row["client"] = max(row["client"], record["client_rss"])
                row["checksum"] = checksum(out)
                subprocess.run(["rm", "-rf", run_dir], check=False)
                print(f"{workload} {tool} run {repeat + 1}: {record['wall']:.2f} s",
                      file=sys.stderr)
    print("| workload | tool | runs | wall s (median) | peak RSS per worker | client peak RSS "
          "| checksum |")
    print("|---|---|---:|---:|---:|---:|---|")
    reference = {}
    for (workload, scale, tool), row in rows.items():
        if row["error"] and not row["walls"]:
            print(f"| {workload} ({scale:g}) | {tool} | 0 | - | - | - | error: {row['error']} |")
            continue
        reference.setdefault(workload, row["checksum"])
        expected = reference[workload]
        agrees = (row["checksum"] is not None and expected is not None
                  and abs(row["checksum"] - expected) <= 1e-6 * max(1.0, abs(expected)))
        print(f"| {workload} ({scale:g}) | {tool} | {len(row['walls'])} | "
              f"{statistics.median(row['walls']):.2f} | {format_size(row['worker'])} | "
              f"{format_size(row['client'])} | {'ok' if agrees else 'DIFFERS'} |")


if __name__ == "__main__":
    main()
