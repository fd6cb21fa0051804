"""What the comparison scripts (compare_*.py) share: sizes, stored bytes, this process's
peak RSS and CPU time, running a child process and reading its own rusage."""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def format_size(num_bytes, digits=2):
    for unit, factor in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if num_bytes >= factor:
            return f"{num_bytes / factor:.{digits}f} {unit}"
    return f"{num_bytes:.0f} B"


def stored_bytes(path):
    """Bytes of the chunk (shard) files under `path`; metadata (.zarray, .zattrs, zarr.json)
    and other files starting with '.' left out."""
    total = 0
    for directory, _, files in os.walk(path):
        total += sum(os.path.getsize(os.path.join(directory, name))
                     for name in files if not name.startswith(".") and name != "zarr.json")
    return total


# The float64 array every Zarr I/O benchmark writes: element i (C order) holds
# (i % 9973) * 0.001, as zarr_io_bench.cpp writes it.
PERIOD = 9973
STEP = 0.001
FILL_BLOCK = 1 << 22  # elements generated at a time, so generation adds little to RSS


def make_data(shape):
    import numpy as np
    data = np.empty(shape, dtype="<f8")
    flat = data.reshape(-1)
    for start in range(0, flat.size, FILL_BLOCK):
        index = np.arange(start, min(start + FILL_BLOCK, flat.size), dtype=np.int64)
        flat[start:start + index.size] = (index % PERIOD) * STEP
    return data


def read_files(path):
    """Reads every file under `path` once (bytes only, so they sit in the page cache);
    returns the bytes read."""
    total = 0
    for directory, _, files in os.walk(path):
        for name in files:
            with open(os.path.join(directory, name), "rb") as file:
                while chunk := file.read(1 << 24):
                    total += len(chunk)
    return total


def peak_rss_bytes():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def cpu_seconds():
    """User + system CPU time of this process (all its threads) so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(command, env=None, stdin=None):
    """Runs `command` once (with `stdin`, a string, as its input when given); returns
    (returncode, stdout, stderr, wall seconds, peak RSS bytes, CPU seconds) of that child
    alone (wait4: its own rusage)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, env=env,
                                   stdin=None if stdin is None else subprocess.PIPE)
        if stdin is not None:
            process.stdin.write(stdin.encode())
            process.stdin.close()
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (process.returncode, out.read().decode(), err.read().decode(), wall,
                usage.ru_maxrss * 1024, usage.ru_utime + usage.ru_stime)


def python_child(script, child, *arguments):
    """Runs `script --child CHILD ARGUMENTS...` with this interpreter once; returns the
    JSON of its last stdout line, exits when it fails. The child does the work that needs
    numpy or zarr, so the parent stays small (a child's ru_maxrss starts from its parent's
    RSS at fork: Linux keeps the high-water mark across execve)."""
    command = [sys.executable, os.path.abspath(script), "--child", child, *map(str, arguments)]
    code, stdout, stderr, *_ = measure(command)
    sys.stderr.write(stderr)
    if code != 0:
        sys.exit(f"{' '.join(command)} failed ({code})")
    return json.loads(stdout.strip().splitlines()[-1])
