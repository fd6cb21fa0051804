"""Running the built programs from the Python suites, with the exit code always checked.

    from tessera_run import run_ok
    info = json.loads(run_ok(tessera_bin, "info", path, "--json").stdout)

run_ok fails the test, showing stderr, unless the program exits 0; with quiet=True (the
default) its stderr must also be empty, so a sanitizer's report or a stray warning is
never passed over while the test reads stdout.
"""
import json
import os
import subprocess
import tempfile
import threading


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


def run_measured(program, *args, timeout=120, history=None, env=None):
    """Runs the program like run(), and also measures the process's peak RSS: the result
    has peak_rss_bytes (from wait4 of this child alone). With `history` (a database path)
    the run records its history there (TESSERA_HISTORY), for last_run()."""
    environment = dict(os.environ if env is None else env)
    if history is not None:
        environment["TESSERA_HISTORY"] = str(history)
    command = [str(program), *map(str, args)]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, env=environment)
        timer = threading.Timer(timeout, process.kill)
        timer.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result = subprocess.CompletedProcess(command, process.returncode,
                                             out.read().decode(), err.read().decode())
    result.peak_rss_bytes = usage.ru_maxrss * 1024  # Linux reports KiB
    return result


def last_run(program, database):
    """The newest run recorded in the history `database`, as `tessera history --json`
    gives it: exact integers (projected_mem, measured_mem_max, footprint_mem_max,
    total_mem, peak_rss_bytes, ...)."""
    result = run_ok(program, "history", "--json", "--runs", 1, "--db", database)
    runs = json.loads(result.stdout)["runs"]
    assert len(runs) == 1, result.stdout
    return runs[0]


def assert_memory_promise(recorded, peak_rss_bytes=None, budget=None):
    """Every op of the recorded run: its largest task's Buffers (measured_mem_max) and its
    largest footprint (measured + unaccounted, footprint_mem_max) at or below its
    projection (and `budget` when given), compared as exact integers; the process's peak
    RSS at or below the run's total_mem."""
    problems = []
    for op in recorded["ops"]:
        bound = op["projected_mem"] if budget is None else min(op["projected_mem"], budget)
        for field in ("measured_mem_max", "footprint_mem_max"):
            if op[field] > bound:
                problems.append(f"op {op['name']}: {field} {op[field]} > {bound} "
                                f"(projected {op['projected_mem']}, unaccounted max "
                                f"{op['unaccounted_mem_max']})")
    total = recorded["total_mem"]
    for name, peak in (("recorded peak RSS", recorded["peak_rss_bytes"]),
                       ("peak RSS of the process", peak_rss_bytes)):
        if peak is not None and peak > total:
            problems.append(f"{name} {peak} > total_mem {total}")
    assert not problems, "\n".join(problems)
