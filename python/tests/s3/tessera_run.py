"""One Tessera run in a process of its own, for tests that run several failing runs at
once (each against its own fault proxy: the engine reads AWS_ENDPOINT_URL from the
process's environment). Not a test module.

    python tessera_run.py '{"op": "write", "url": "s3://b/out.zarr", "shape": [40, 40],
                            "chunks": [10, 10]}'

ops: "write" (values(shape) to_zarr url), "copy" (from_zarr source, to_zarr url), "read"
(from_zarr url, compute). Options: zarr_format, overwrite, resume, work_dir,
allowed_mem, max_workers. Prints one JSON line: {"ok": true, ...} or {"ok": false,
"type": the exception's class, "tessera": whether it is one of Tessera's errors,
"storage_error", "message", "traceback"}.
"""
import json
import sys
import time
import traceback

import numpy as np


def values(shape, offset=0.0):
    """The array a "write" writes: distinct, exactly representable float64 values."""
    return np.arange(int(np.prod(shape)), dtype="float64").reshape(shape) * 0.5 + offset


def spec_of(job):
    import tessera
    return tessera.Spec(work_dir=job["work_dir"], allowed_mem=job.get("allowed_mem", "100MB"),
                        max_workers=job.get("max_workers", 2))


def run(job):
    import tessera
    spec = spec_of(job)
    options = {name: job[name] for name in ("zarr_format", "overwrite", "resume")
               if name in job}
    if job["op"] == "write":
        data = values(job["shape"], job.get("offset", 0.0))
        tessera.asarray(data, chunks=tuple(job["chunks"]), spec=spec).to_zarr(
            job["url"], **options)
        return {}
    if job["op"] == "copy":
        tessera.from_zarr(job["source"], spec=spec).to_zarr(job["url"], **options)
        return {}
    if job["op"] == "read":
        result = tessera.from_zarr(job["url"], spec=spec).compute()
        return {"returned": True, "shape": list(result.shape), "sum": float(result.sum())}
    raise ValueError(f"unknown op {job['op']!r}")


def main():
    job = json.loads(sys.argv[1])
    import tessera
    errors = (tessera.Error, tessera.StorageError, tessera.FormatError)
    start = time.monotonic()
    try:
        outcome = {"ok": True, **run(job)}
    except Exception as error:  # what the test asserts on
        outcome = {"ok": False, "type": type(error).__name__,
                   "tessera": isinstance(error, errors),
                   "storage_error": isinstance(error, tessera.StorageError),
                   "os_error": isinstance(error, OSError),
                   "message": str(error),
                   "traceback": "".join(traceback.format_exception(error))}
    outcome["seconds"] = time.monotonic() - start
    print(json.dumps(outcome), flush=True)


if __name__ == "__main__":
    main()
