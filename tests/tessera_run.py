"""Running the built programs from the Python suites, with the exit code always checked.

    from tessera_run import run_ok
    info = json.loads(run_ok(tessera_bin, "info", path, "--json").stdout)

run_ok fails the test, showing stderr, unless the program exits 0; with quiet=True (the
default) its stderr must also be empty, so a sanitizer's report or a stray warning is
never passed over while the test reads stdout.
"""
import hashlib
import json
import os
import shutil
import subprocess
import tempfile


def run(program, *args, timeout=60, **options):
    return subprocess.run([str(program), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, **options)


def run_ok(program, *args, quiet=True, timeout=60, **options):
    result = run(program, *args, timeout=timeout, **options)
    command = " ".join(map(str, args))
    assert result.returncode == 0, f"`{command}` exited {result.returncode}: {result.stderr}"
    if quiet:
        assert result.stderr == "", f"`{command}` wrote to stderr: {result.stderr}"
    return result


TIME = shutil.which("time") or "/usr/bin/time"  # GNU time (Debian package "time")


def run_measured(program, *args, timeout=120, history=None, env=None):
    """Runs the program like run(), and also measures the process's peak RSS: the result
    has peak_rss_bytes. It is GNU time's figure for the program, run as time's child:
    a child forked from this Python process would carry the interpreter's own resident
    size into its ru_maxrss (Linux keeps the pre-exec high-water mark). With `history` (a
    database path) the run records its history there (TESSERA_HISTORY), for last_run()."""
    environment = dict(os.environ if env is None else env)
    if history is not None:
        environment["TESSERA_HISTORY"] = str(history)
    command = [str(program), *map(str, args)]
    with tempfile.NamedTemporaryFile(mode="r") as peak:
        result = subprocess.run([TIME, "-f", "%M", "-o", peak.name, *command],
                                capture_output=True, text=True, env=environment,
                                timeout=timeout)
        kib = peak.read().strip().splitlines()
    result.args = command
    assert kib and kib[-1].isdigit(), f"GNU time gave no peak RSS for {command}: {kib}"
    result.peak_rss_bytes = int(kib[-1]) * 1024  # KiB
    return result


def last_run(program, database):
    """The newest run recorded in the history `database`, as `tessera history --json`
    gives it: exact integers (projected_mem, measured_mem_max, footprint_mem_max,
    total_mem, peak_rss_bytes, ...)."""
    result = run_ok(program, "history", "--json", "--runs", 1, "--db", database)
    runs = json.loads(result.stdout)["runs"]
    assert len(runs) == 1, result.stdout
    return runs[0]


# Pages a task's thread may touch for the runtime's own bookkeeping that no projection
# counts yet: the same named allowance as tests/support/task_bounds.hpp
# (docs/memory-model.md, "Unaccounted memory").
RUNTIME_BOOKKEEPING_BYTES = 128 * 1024

# The programs run under AddressSanitizer (ctest sets it for a TESSERA_SANITIZE build):
# its allocator, shadow and quarantine touch pages and RSS no program of ours does, so
# footprints and peak RSS are checked on the native build only; Buffers everywhere.
SANITIZED = os.environ.get("TESSERA_SANITIZED", "0") == "1"


def op_memory_problems(op, budget=None):
    """What one op's figures break, as messages: its largest task's Buffers
    (measured_mem_max) above its projection (or `budget` when lower), or its largest
    footprint (measured + unaccounted, footprint_mem_max) above that plus the runtime's
    bookkeeping (natively only), compared as exact integers."""
    bound = op["projected_mem"] if budget is None else min(op["projected_mem"], budget)
    limits = [("measured_mem_max", bound)]
    if not SANITIZED:
        limits.append(("footprint_mem_max", bound + RUNTIME_BOOKKEEPING_BYTES))
    return [f"op {op['name']}: {field} {op[field]} > {limit} (projected "
            f"{op['projected_mem']}, unaccounted max {op['unaccounted_mem_max']})"
            for field, limit in limits if op[field] > limit]


def assert_memory_promise(recorded, peak_rss_bytes=None, budget=None):
    """Every op of the recorded run within its projection (op_memory_problems); the
    process's peak RSS at or below the run's total_mem."""
    problems = []
    for op in recorded["ops"]:
        problems += op_memory_problems(op, budget)
    total = recorded["total_mem"]
    for name, peak in (("recorded peak RSS", recorded["peak_rss_bytes"]),
                       ("peak RSS of the process", peak_rss_bytes)):
        if peak is not None and peak > total and not SANITIZED:
            problems.append(f"{name} {peak} > total_mem {total}")
    assert not problems, "\n".join(problems)


def tree(root):
    """Every entry under `root`, links not followed: relative path -> the sha256 of a
    file's bytes, "link to TARGET" or "directory" (a link at `root` itself: {".": ...}).
    Equal before and after means byte for byte unchanged."""
    if os.path.islink(root):
        return {".": "link to " + os.readlink(root)}
    entries = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = os.path.join(folder, name)
            key = os.path.relpath(path, root)
            if os.path.islink(path):
                entries[key] = "link to " + os.readlink(path)
            elif os.path.isfile(path):
                with open(path, "rb") as file:
                    entries[key] = hashlib.sha256(file.read()).hexdigest()
            else:
                entries[key] = "directory"
    return entries
