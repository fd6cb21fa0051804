#!/usr/bin/python3
"""matmul of two Zarr arrays into a Zarr array: Tessera vs Dask vs numpy in RAM.

Writes two float64 random arrays with zarr-python (default: (4000, 4000) x (4000, 4000)
in (1000, 1000) chunks, raw), then computes C = A @ B, written to Zarr (raw), by:

  tessera  compute_tool (tests/interop/compute_tool.cpp): from_zarr, matmul, to_zarr
           under --allowed-mem (its plan's contraction slabs are printed)
  dask     da.from_zarr(a) @ da.from_zarr(b), to_zarr; threaded scheduler
  numpy    zarr-python reads both whole, np.matmul, writes the result (no budget)

Each run is a fresh process measured alone (wall time, its own peak RSS from wait4); the
fastest of --repeat runs is kept. Results are compared with numpy's on sampled rows.
All three use the machine's BLAS (numpy/dask: numpy's; Tessera: OpenBLAS, one thread
per task, tasks in parallel).

  /usr/bin/python3 bench/compare_linalg.py --tool build/tests/tessera_compute_tool
  /usr/bin/python3 bench/compare_linalg.py --tool ... --n 2000 --chunk 500 --allowed-mem 40MB
"""
import argparse
import json
import os
import shutil
import sys
import tempfile

from bench_util import format_size, measure


def run(command, stdin=None):
    """(stdout, wall seconds, peak RSS bytes) of one run; exits when it fails."""
    code, out, err, wall, rss, _ = measure(command, stdin=stdin)
    if code != 0:
        sys.exit(f"{command[:3]} failed ({code}): {err[-2000:]}")
    return out, wall, rss


CHILD = r"""
import sys, numpy as np, zarr
mode, a_path, b_path, out_path, workers = sys.argv[1:6]
if mode == "dask":
    import dask, dask.array as da
    c = da.from_zarr(a_path) @ da.from_zarr(b_path)
    with dask.config.set(scheduler="threads", num_workers=int(workers)):
        c.to_zarr(out_path, compressor=None, overwrite=True)
else:
    c = np.matmul(zarr.open(a_path, "r")[...], zarr.open(b_path, "r")[...])
    zarr.save_array(out_path, c, chunks=zarr.open(a_path, "r").chunks, compressor=None)
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True, help="tessera_compute_tool")
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--chunk", type=int, default=1000)
    parser.add_argument("--allowed-mem", default="100MB")
    parser.add_argument("--workers", type=int, default=os.cpu_count())
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--dir", default=None)
    args = parser.parse_args()
    import numpy as np
    import zarr

    work = tempfile.mkdtemp(dir=args.dir, prefix="compare_linalg.")
    try:
        rng = np.random.default_rng(0)
        paths = {}
        for name in ("a", "b"):
            paths[name] = os.path.join(work, f"{name}.zarr")
            zarr.save_array(paths[name], rng.random((args.n, args.n)),
                            chunks=(args.chunk, args.chunk), compressor=None)
        rows = rng.choice(args.n, size=8, replace=False)
        truth = zarr.open(paths["a"], "r")[...][rows] @ zarr.open(paths["b"], "r")[...]
        results = []
        for tool in ("tessera", "dask", "numpy"):
            out = os.path.join(work, f"c-{tool}.zarr")
            best = None
            for _ in range(args.repeat):
                shutil.rmtree(out, ignore_errors=True)
                if tool == "tessera":
                    job = {"allowed_mem": args.allowed_mem, "max_workers": args.workers,
                           "inputs": {"a": {"zarr": paths["a"]}, "b": {"zarr": paths["b"]}},
                           "steps": [{"out": "c", "fn": "matmul", "args": ["a", "b"]}],
                           "outputs": {"c": {"zarr": out, "compressor": "none"}}}
                    stdout, wall, rss = run([args.tool, "job"], json.dumps(job))
                    report = json.loads(stdout)
                    if "error" in report:
                        sys.exit(f"tessera: {report['error']}")
                    plan = report["plans"][0]
                    [op] = [op for op in plan["ops"] if op["kind"] == "contract"]
                    [ran] = [ran for ran in plan["report"] if ran["name"] == op["name"]]
                    note = (f"{op['tasks']} tasks, {op['contraction_steps']} slabs, projected "
                            f"{format_size(op['projected_mem'])}, measured "
                            f"{format_size(ran['measured_mem_max'])}")
                else:
                    _, wall, rss = run([sys.executable, "-c", CHILD, tool, paths["a"],
                                            paths["b"], out, str(args.workers)])
                    note = f"{args.workers} threads" if tool == "dask" else "in RAM"
                if best is None or wall < best[0]:
                    best = (wall, rss, note)
            error = np.max(np.abs(zarr.open(out, "r")[...][rows] - truth) / np.abs(truth))
            results.append((tool, *best, error))
        print(f"matmul ({args.n}, {args.n}) x ({args.n}, {args.n}) float64, chunks "
              f"({args.chunk}, {args.chunk}), {args.workers} workers, tessera allowed_mem "
              f"{args.allowed_mem}")
        print(f"{'tool':<8} {'wall s':>8} {'peak RSS':>11} {'max rel err':>12}  notes")
        for tool, wall, rss, note, error in results:
            print(f"{tool:<8} {wall:8.2f} {format_size(rss):>11} {error:12.1e}  {note}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
