"""Crash safety: a real `tessera rechunk` / `tessera calc` killed with SIGKILL at random
moments. After each kill the source is byte-for-byte unchanged, OUT exists only when it
is complete and equal to an uninterrupted run's, and `--resume` (rechunk) or a rerun
(calc) either finishes with the same values and files as the uninterrupted run or
refuses clearly, changing nothing.

The invariants speak of OUT and of what lies beside it, never of the names Tessera gives
its partial output: those are Tessera's business. The kill delays come from
TESSERA_TEST_SEED (printed, so a failure can be replayed).
"""
import hashlib
import os
import random
import signal
import subprocess
import time

import numcodecs
import numpy as np
import pytest
import zarr
from tessera_run import SANITIZED

KILLS_RECHUNK = 12
KILLS_CALC = 5


def seed():
    value = int(os.environ.get("TESSERA_TEST_SEED", str(int(time.time()) % 100000)))
    print(f"TESSERA_TEST_SEED={value}")
    return value


def checksums(root):
    """{relative path: sha256} of every file under `root` (hidden ones included)."""
    sums = {}
    for folder, _, files in os.walk(root):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                sums[os.path.relpath(path, root)] = hashlib.sha256(f.read()).hexdigest()
    return sums


def files_under(root):
    return sorted(checksums(root)) if os.path.isdir(root) else []


def run(args, timeout=120):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout)


def run_killed(args, delay):
    """Starts `args`, sends SIGKILL after `delay` seconds; returns the exit status (-9 when
    the kill landed, 0 when the run had already finished)."""
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        process.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGKILL)
    return process.wait(timeout=60)


def assert_out_complete_or_absent(out, reference_values, reference_files, context):
    """OUT does not exist, or it is the finished result: the same files (no temporary
    files or markers) and the same values as an uninterrupted run."""
    if not out.exists():
        return
    assert files_under(out) == reference_files, f"{context}: OUT exists but is not complete"
    np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...], reference_values,
                                  err_msg=f"{context}: OUT exists with other values")


def refused_clearly(result, out, reference_values, reference_files, what, context):
    """After a resume or rerun: False when it succeeded; True when it refused clearly
    (exit 1 with a message) and left OUT complete or absent; fails the test otherwise."""
    if result.returncode == 0:
        return False
    assert result.returncode == 1, f"{context}: {what} exit {result.returncode}"
    assert result.stderr.strip(), f"{context}: the {what} refused without a word"
    assert_out_complete_or_absent(out, reference_values, reference_files, context)
    return True


def assert_no_temporaries(out, context):
    stray = [name for name in files_under(out) if "tessera-tmp" in name]
    assert not stray, f"{context}: temporary files in the finished OUT: {stray}"


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """float32 (3000, 1600) in whole-column strips (3000, 32), blosc lz4, written by
    zarr-python: 19 MB that a small budget rechunks in stages through disk, in about a
    second on a loaded 2-core machine."""
    root = tmp_path_factory.mktemp("crash")
    values = (np.random.default_rng(11).standard_normal((3000, 1600)) * 50).astype(np.float32)
    path = root / "in.zarr"
    array = zarr.open_array(str(path), mode="w", zarr_format=2, shape=values.shape, chunks=(3000, 32),
                            dtype=values.dtype,
                            compressor=numcodecs.Blosc(cname="lz4", clevel=5))
    array[...] = values
    return path, values


def rechunk_args(tessera_bin, source_path, out, work):
    return [tessera_bin, "rechunk", str(source_path), str(out), "--chunks", "30,1600",
            "--allowed-mem", "4MB", "--intermediate", "disk", "--work-dir", str(work),
            "--workers", "2", "--quiet"]


def test_killed_rechunk_leaves_source_and_out_intact_and_resumes(tessera_bin, tmp_path, source):
    source_path, values = source
    before = checksums(source_path)
    rng = random.Random(seed())

    # The uninterrupted run: what every finished OUT must equal.
    reference = tmp_path / "reference.zarr"
    work = tmp_path / "work"
    work.mkdir()
    duration = None
    for attempt in range(2):  # the faster of two runs: the first may find cold caches
        started = time.monotonic()
        result = run(rechunk_args(tessera_bin, source_path, reference, work) +
                     (["--overwrite"] if attempt else []))
        elapsed = time.monotonic() - started
        duration = elapsed if duration is None else min(duration, elapsed)
        assert result.returncode == 0, result.stderr
        # Under ASan a footprint warning is expected (tessera_run.SANITIZED); nothing else.
        assert all(SANITIZED and line.startswith("tessera: warning:")
                   for line in result.stderr.splitlines()), result.stderr
    reference_files = files_under(reference)
    reference_values = zarr.open_array(str(reference), mode="r")[...]
    np.testing.assert_array_equal(reference_values, values)
    assert zarr.open_array(str(reference), mode="r").chunks == (30, 1600)
    print(f"uninterrupted rechunk: {duration:.2f} s, {len(reference_files)} files")

    landed = 0
    for kill in range(KILLS_RECHUNK):
        folder = tmp_path / f"kill{kill}"
        folder.mkdir()
        (folder / "work").mkdir()
        out = folder / "out.zarr"
        args = rechunk_args(tessera_bin, source_path, out, folder / "work")
        delay = rng.uniform(0.01, duration * 0.9)
        context = f"kill {kill} after {delay:.3f} s"
        status = run_killed(args, delay)
        assert status in (0, -signal.SIGKILL), f"{context}: exit status {status}"
        landed += status == -signal.SIGKILL
        assert checksums(source_path) == before, f"{context}: the source changed"
        assert_out_complete_or_absent(out, reference_values, reference_files, context)

        result = run(args + ["--resume"])
        assert checksums(source_path) == before, f"{context}, resumed: the source changed"
        if refused_clearly(result, out, reference_values, reference_files, "resume", context):
            continue  # a clear message, no crash, and nothing half-written at OUT
        context += ", resumed"
        assert out.exists(), context
        assert_no_temporaries(out, context)
        assert files_under(out) == reference_files, context
        np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...],
                                      reference_values, err_msg=context)
        # Nothing of the interrupted run is left beside OUT.
        assert sorted(p.name for p in folder.iterdir()) == ["out.zarr", "work"], context
    print(f"{landed} of {KILLS_RECHUNK} kills landed before the run finished")
    assert landed >= KILLS_RECHUNK // 3, "too few kills landed mid-run to test anything"


def test_killed_calc_leaves_inputs_intact_and_never_a_partial_out(tessera_bin, tmp_path,
                                                                  source):
    source_path, values = source
    before = checksums(source_path)
    rng = random.Random(seed() + 1)

    def calc_args(out, work):
        return [tessera_bin, "calc", "y = sqrt(abs(x)) * 2 + x", "--input", f"x={source_path}",
                "--output", str(out), "--allowed-mem", "4MB", "--work-dir", str(work),
                "--workers", "2", "--quiet"]

    reference = tmp_path / "reference.zarr"
    (tmp_path / "work").mkdir()
    started = time.monotonic()
    result = run(calc_args(reference, tmp_path / "work"))
    duration = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    reference_files = files_under(reference)
    reference_values = zarr.open_array(str(reference), mode="r")[...]
    expected = np.sqrt(np.abs(values)) * np.float32(2) + values
    np.testing.assert_allclose(reference_values, expected, rtol=1e-6)

    landed = 0
    for kill in range(KILLS_CALC):
        folder = tmp_path / f"kill{kill}"
        folder.mkdir()
        (folder / "work").mkdir()
        out = folder / "y.zarr"
        delay = rng.uniform(0.01, duration * 0.9)
        context = f"calc kill {kill} after {delay:.3f} s"
        status = run_killed(calc_args(out, folder / "work"), delay)
        assert status in (0, -signal.SIGKILL), f"{context}: exit status {status}"
        landed += status == -signal.SIGKILL
        assert checksums(source_path) == before, f"{context}: the input changed"
        assert_out_complete_or_absent(out, reference_values, reference_files, context)

        # calc has no --resume: a rerun (with --overwrite when OUT was finished) either
        # finishes identically or refuses clearly.
        rerun = calc_args(out, folder / "work") + (["--overwrite"] if out.exists() else [])
        result = run(rerun)
        assert checksums(source_path) == before, f"{context}, rerun: the input changed"
        if refused_clearly(result, out, reference_values, reference_files, "rerun", context):
            continue
        context += ", rerun"
        assert_no_temporaries(out, context)
        assert files_under(out) == reference_files, context
        np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...],
                                      reference_values, err_msg=context)
        assert sorted(p.name for p in folder.iterdir()) == ["work", "y.zarr"], context
    print(f"{landed} of {KILLS_CALC} calc kills landed before the run finished")
