"""`tessera rechunk` against zarr-python: the 800 MB transpose-like rechunk with its
intermediate in RAM and partly on disk, random small cases, and a killed run's leftovers.

Every target is read back with zarr-python and compared with the numpy array the source
was written from; every run's report must show each op's measured peak task memory at or
below its projection; intermediates must appear on disk only when the plan says so, and
never outlive the run.

ctest sets TESSERA_BIN (see tests/CMakeLists.txt). To run by hand:
  TESSERA_BIN=build/src/cli/tessera /usr/bin/python3 -m pytest -q tests/interop/test_rechunk.py
The random cases are drawn from TESSERA_TEST_SEED (printed with every failure; set it to
reproduce) and scale with TESSERA_TEST_CASES; `-k case07` runs one of them.
"""
import os
import re
import signal
import subprocess
import threading
import time

import numcodecs
import numpy as np
import pytest
import zarr
from tessera_run import assert_memory_promise, last_run, run_measured

SEED = int(os.environ.get("TESSERA_TEST_SEED", "20240611"))
# The number of random cases scales with TESSERA_TEST_CASES (e.g. 10 for a long soak).
SCALE = float(os.environ.get("TESSERA_TEST_CASES", "1"))

BLOSC = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)
ZSTD = numcodecs.Zstd(level=1)

BIG_SHAPE = (10000, 10000)  # float64: 800 MB
BIG_SOURCE_CHUNKS = (10000, 1000)
BIG_TARGET_CHUNKS = (1000, 10000)
BIG_ARGS = ["--chunks", "1000,10000", "--allowed-mem", "400MB", "--workers", "2"]


def run(tessera_bin, *args, timeout=120, history=None):
    """`tessera rechunk ARGS`; the result also has the process's peak RSS, and with
    `history` (a database path) the run records its exact figures there."""
    return run_measured(tessera_bin, "rechunk", *args, timeout=timeout, history=history)


def partial(out):
    return out.with_name(out.name + ".tessera-partial")


# ---- what the CLI prints ----------------------------------------------------------------

UNITS = {"B": 1, "kB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "PB": 10**15}
SIZE = r"(\d+(?:\.\d+)?) (B|kB|MB|GB|TB|PB)"


def size_bytes(number, unit):
    return float(number) * UNITS[unit]


def plan_table(stdout):
    """{op name: (its output column: "memory", "disk", "memory+disk" or "target", its
    projected bytes per task)} from the op table under "Plan: ..." of `--plan`."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Plan:"))
    table = {}
    for line in lines[start + 2:]:  # past "Plan: ..." and the table's header
        if not line.strip():
            break
        match = re.match(r"^\s+(\S+)\s+\S+\s+\d+\s+" + SIZE + r"\s+(\S+)", line)
        assert match, f"unexpected plan table row {line!r} in:\n{stdout}"
        table[match.group(1)] = (match.group(4), size_bytes(match.group(2), match.group(3)))
    assert table, stdout
    return table


def plan_outputs(stdout):
    return {op: output for op, (output, _) in plan_table(stdout).items()}


def report_ops(stdout):
    """{op: projected bytes per task} from a run's report: the table whose header names
    "projected/task", up to the "Total ..." line, as printed (4 significant digits)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if "projected/task" in line)
    ops = {}
    for line in lines[start + 1:]:
        if line.startswith("Total"):
            break
        sizes = re.findall(SIZE, line)
        assert len(sizes) == 2, f"unexpected report row {line!r} in:\n{stdout}"
        ops[line.split()[0]] = size_bytes(*sizes[0])
    assert ops, stdout
    return ops


def assert_measured_within_projected(tessera_bin, result, history, plan_stdout=None):
    """Each op's largest task, its Buffers and its footprint (measured + unaccounted), at or
    below its projection, and the process's peak RSS within total_mem: the exact integers
    the history database recorded for the run. With `plan_stdout`, the run projected what
    --plan printed, op by op (both as printed)."""
    assert_memory_promise(last_run(tessera_bin, history), result.peak_rss_bytes)
    if plan_stdout is not None:
        planned = {op: projected for op, (_, projected) in plan_table(plan_stdout).items()}
        assert report_ops(result.stdout) == planned, (plan_stdout, result.stdout)


def smallest_allowed_mem(stdout_or_stderr):
    match = re.search(r"the smallest allowed_mem that would run it is (\d+)", stdout_or_stderr)
    assert match, stdout_or_stderr
    return int(match.group(1))


# ---- watching the work dir while a run goes on ------------------------------------------

class WorkDirWatcher:
    """Lists everything under `root` every `interval` seconds on a thread, from start()
    until stop(), and remembers every file and directory it saw (relative paths)."""

    def __init__(self, root, interval=0.005):
        self.root = str(root)
        self.interval = interval
        self.files = set()
        self.dirs = set()
        self.scans = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def scan(self):
        # os.walk ignores directories that vanish under it (its onerror is None).
        for directory, dirnames, filenames in os.walk(self.root):
            relative = os.path.relpath(directory, self.root)
            self.dirs.update(os.path.normpath(os.path.join(relative, d)) for d in dirnames)
            self.files.update(os.path.normpath(os.path.join(relative, f)) for f in filenames)
        self.scans += 1

    def _loop(self):
        while not self._stop.is_set():
            self.scan()
            self._stop.wait(self.interval)

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._stop.set()
        self._thread.join()
        self.scan()


def run_watched(tessera_bin, work, *args, timeout=300, history=None):
    """Runs `tessera rechunk ARGS` while watching `work`; returns (result, watcher)."""
    watcher = WorkDirWatcher(work).start()
    try:
        result = run(tessera_bin, *args, timeout=timeout, history=history)
    finally:
        watcher.stop()
    return result, watcher


# ---- the 800 MB case ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def big_source(tmp_path_factory):
    """10000 x 10000 float64 uniform random in [0, 1), written once by zarr-python in chunks
    (10000, 1000), blosc lz4: (path, values)."""
    values = np.random.default_rng([SEED, 800]).random(BIG_SHAPE)
    path = tmp_path_factory.mktemp("big") / "source.zarr"
    array = zarr.open_array(str(path), mode="w", zarr_format=2, shape=BIG_SHAPE, chunks=BIG_SOURCE_CHUNKS,
                            dtype="<f8", compressor=BLOSC)
    array[...] = values
    return path, values


def assert_equal(actual, expected):
    """Exact equality (NaN equal to NaN), with numpy's detailed message on a mismatch."""
    if not np.array_equal(actual, expected, equal_nan=actual.dtype.kind == "f"):
        np.testing.assert_array_equal(actual, expected)
    assert actual.shape == expected.shape


def assert_big_target(out, values):
    target = zarr.open_array(str(out), mode="r")
    assert target.shape == BIG_SHAPE
    assert target.chunks == BIG_TARGET_CHUNKS
    assert target.dtype == np.dtype("<f8")
    assert target.compressor == BLOSC  # the source's codec by default
    step = BIG_TARGET_CHUNKS[0]
    for start in range(0, BIG_SHAPE[0], step):  # a slab at a time: less RAM than whole
        assert_equal(target[start:start + step], values[start:start + step])
    assert not partial(out).exists()


def test_big_intermediate_in_memory(tessera_bin, tmp_path, big_source):
    """With total_mem 8 GB the 800 MB intermediate fits in RAM: the plan says so, and no
    file ever appears in the work dir while it runs."""
    source, values = big_source
    out = tmp_path / "target.zarr"
    work = tmp_path / "work"
    work.mkdir()
    args = [source, out, *BIG_ARGS, "--total-mem", "8GB", "--work-dir", work]

    plan = run(tessera_bin, *args, "--plan")
    assert plan.returncode == 0, plan.stderr
    tiers = plan_outputs(plan.stdout)
    intermediates = {op: tier for op, tier in tiers.items() if tier != "target"}
    assert intermediates, plan.stdout  # (10000, 1000) -> (1000, 10000) needs one in 400 MB
    assert set(intermediates.values()) == {"memory"}, plan.stdout
    assert not out.exists() and list(work.iterdir()) == []

    history = tmp_path / "history.sqlite"
    result, watcher = run_watched(tessera_bin, work, *args, "--quiet", history=history)
    assert result.returncode == 0, result.stderr
    assert watcher.scans > 10, watcher.scans
    assert watcher.files == set(), sorted(watcher.files)
    assert watcher.dirs == set(), sorted(watcher.dirs)
    assert_measured_within_projected(tessera_bin, result, history, plan.stdout)
    assert list(work.iterdir()) == []
    assert_big_target(out, values)


def test_big_intermediate_partly_on_disk(tessera_bin, tmp_path, big_source):
    """With total_mem 1500 MB (800 MB for two tasks, the buffer pool, and less than 800 MB
    left) part of the intermediate goes to the work dir during the run, and is gone after."""
    source, values = big_source
    out = tmp_path / "target.zarr"
    work = tmp_path / "work"
    work.mkdir()
    args = [source, out, *BIG_ARGS, "--total-mem", "1500MB", "--work-dir", work]

    plan = run(tessera_bin, *args, "--plan")
    assert plan.returncode == 0, plan.stderr
    tiers = {tier for tier in plan_outputs(plan.stdout).values() if tier != "target"}
    assert tiers and all("disk" in tier for tier in tiers), plan.stdout

    history = tmp_path / "history.sqlite"
    result, watcher = run_watched(tessera_bin, work, *args, "--quiet", history=history)
    assert result.returncode == 0, result.stderr
    spilled = [path for path in watcher.files if path.startswith("tessera-")]
    assert spilled, (sorted(watcher.dirs), result.stdout)
    assert all(re.match(r"tessera-\d+-\d+-\d+/", path) for path in spilled), sorted(spilled)[:5]
    # chunk files under their final names ("3.7"), not only files being written
    assert any(re.fullmatch(r"\d+(\.\d+)*", os.path.basename(path)) for path in spilled), \
        sorted(spilled)[:5]
    assert_measured_within_projected(tessera_bin, result, history, plan.stdout)
    assert list(work.iterdir()) == []
    assert_big_target(out, values)


def test_killed_run_leftovers_are_cleaned(tessera_bin, tmp_path, big_source):
    """SIGKILL a disk-tier rechunk once its intermediate has files: its work folder stays
    behind and OUT does not exist. The next run with the same work dir removes the folder
    and writes the right array."""
    source, values = big_source
    out = tmp_path / "target.zarr"
    work = tmp_path / "work"
    work.mkdir()
    args = [source, out, *BIG_ARGS, "--intermediate", "disk", "--work-dir", work, "--quiet"]

    process = subprocess.Popen([tessera_bin, "rechunk", *map(str, args)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        # A file of the intermediate itself, inside the work folder (beside its marker).
        while not any(files for folder, _, files in os.walk(work)
                      if os.path.dirname(folder) != str(work) and folder != str(work)):
            assert process.poll() is None, "the run ended before it wrote an intermediate"
            assert time.monotonic() < deadline, "no intermediate file within 120 s"
            time.sleep(0.005)
        process.send_signal(signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    assert process.returncode == -signal.SIGKILL

    leftovers = sorted(p.name for p in work.iterdir())
    assert leftovers and all(re.fullmatch(r"tessera-\d+-\d+-\d+", name) for name in leftovers), \
        leftovers
    assert not out.exists()  # at most OUT.partial

    history = tmp_path / "history.sqlite"
    result = run(tessera_bin, *args, history=history)
    assert result.returncode == 0, result.stderr
    assert_measured_within_projected(tessera_bin, result, history)
    assert list(work.iterdir()) == []  # the killed run's folder too
    assert_big_target(out, values)


# ---- random small cases ------------------------------------------------------------------

DTYPES = ["<f8", ">f8", "<f4", ">f4", "|i1", "<i2", ">i4", "<i8", "|u1", "<u2", ">u4", "<u8",
          "|b1"]
COMPRESSORS = {"blosc-lz4": BLOSC, "zstd": ZSTD, "none": None}
CASES = max(1, round(30 * SCALE))


def random_values(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.5
    if dtype.kind == "f":
        return (rng.standard_normal(shape) * 1000).astype(dtype)
    info = np.iinfo(dtype)
    native = dtype.newbyteorder("=")
    return rng.integers(info.min, info.max, size=shape, dtype=native, endpoint=True).astype(dtype)


def random_fill(rng, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return bool(rng.integers(2))
    if dtype.kind == "f":
        return [0.0, float(np.nan), -1.5, 1e30][rng.integers(4)]
    info = np.iinfo(dtype)
    return [0, int(info.max), int(info.min), 7][rng.integers(4)]


def make_case(index):
    """Case `index`, drawn from its own seed: shape, chunks, dtype, codecs, options."""
    rng = np.random.default_rng([SEED, index])
    ndim = int(rng.integers(1, 5))
    limit = {1: 3000, 2: 80, 3: 22, 4: 11}[ndim]
    shape = tuple(1 if rng.random() < 0.2 else int(rng.integers(2, limit + 1))
                  for _ in range(ndim))
    source_chunks = tuple(int(rng.integers(1, n + 1)) for n in shape)
    target_chunks = tuple(-1 if rng.random() < 0.15 else int(rng.integers(1, n + 1))
                          for n in shape)
    dtype = DTYPES[rng.integers(len(DTYPES))]
    return {
        "index": index,
        "shape": shape,
        "source_chunks": source_chunks,
        "target_chunks": target_chunks,
        "dtype": dtype,
        "fill": random_fill(rng, dtype),
        "order": "F" if rng.random() < 0.25 else "C",
        "compressor": list(COMPRESSORS)[rng.integers(len(COMPRESSORS))],
        # None: leave --codec out (the source's)
        "codec": [None, "blosc-lz4", "zstd", "raw"][rng.integers(4)],
        # the source written only up to this fraction of dimension 0: chunks beyond are
        # never stored and read as fill_value
        "written": 1.0 if rng.random() < 0.7 else float(rng.uniform(0.0, 0.9)),
        "intermediate": ["auto", "memory", "disk"][rng.integers(3)],
        "workers": int(rng.integers(1, 4)),
        "executor": "sync" if rng.random() < 0.2 else "threads",
        "headroom": float(rng.uniform(1.0, 4.0)),  # the random larger allowed_mem / N
        "values_seed": [SEED, index, 1],
    }


def case_id(case):
    shape = "x".join(map(str, case["shape"]))
    return f"case{case['index']:02d}-{shape}-{case['dtype'].strip('<>|')}-{case['intermediate']}"


CASE_LIST = [make_case(i) for i in range(CASES)]


@pytest.mark.parametrize("case", CASE_LIST, ids=[case_id(c) for c in CASE_LIST])
def test_random_rechunk_equals_numpy(tessera_bin, tmp_path, case):
    """The target zarr-python reads equals the source's values (fill_value where the
    source has no chunk), keeps shape, dtype and fill_value, has the chunks and codec
    asked for, and no task measured more than projected; at the smallest allowed_mem the
    planner says would run it and at a random larger one."""
    try:
        check_random_case(tessera_bin, tmp_path, case)
    except AssertionError as error:
        raise AssertionError(f"TESSERA_TEST_SEED={SEED} (set it to reproduce), case "
                             f"{case}: {error}") from error


def check_random_case(tessera_bin, tmp_path, case):
    shape, dtype, fill = case["shape"], np.dtype(case["dtype"]), case["fill"]
    values = random_values(np.random.default_rng(case["values_seed"]), shape, dtype)
    expected = np.full(shape, fill, dtype=dtype)
    written = tuple([slice(0, round(shape[0] * case["written"]))] + [slice(None)] * (len(shape) - 1))
    expected[written] = values[written]

    source = tmp_path / "source.zarr"
    array = zarr.open_array(str(source), mode="w", zarr_format=2, shape=shape, chunks=case["source_chunks"],
                            dtype=dtype, fill_value=fill, order=case["order"],
                            compressor=COMPRESSORS[case["compressor"]])
    array[written] = values[written]
    np.testing.assert_array_equal(array[...], expected)  # zarr-python's own view of it

    out = tmp_path / "target.zarr"
    work = tmp_path / "work"
    work.mkdir()
    options = ["--chunks", ",".join(map(str, case["target_chunks"])),
               "--intermediate", case["intermediate"], "--workers", case["workers"],
               "--executor", case["executor"], "--work-dir", work]
    if case["codec"]:
        options += ["--codec", case["codec"]]

    # The smallest budget that runs it, from the refusal of a budget far too small.
    probe = run(tessera_bin, source, out, *options, "--allowed-mem", "1B", "--plan")
    assert probe.returncode == 1, (probe.stdout, probe.stderr)
    smallest = smallest_allowed_mem(probe.stderr)
    assert not out.exists() and not partial(out).exists()

    expected_chunks = tuple(n if c == -1 else c for n, c in zip(shape, case["target_chunks"]))
    expected_compressor = (COMPRESSORS[case["compressor"]] if case["codec"] is None
                           else {"blosc-lz4": BLOSC, "zstd": ZSTD, "raw": None}[case["codec"]])
    for allowed in (smallest, int(smallest * case["headroom"])):
        budget = [*options, "--allowed-mem", allowed, "--overwrite"]
        plan = run(tessera_bin, source, out, *budget, "--plan")
        assert plan.returncode == 0, (allowed, plan.stderr)
        if case["intermediate"] != "auto":  # a forced tier is the only one intermediates get
            tiers = {tier for tier in plan_outputs(plan.stdout).values() if tier != "target"}
            assert tiers <= {case["intermediate"]}, plan.stdout
        history = tmp_path / f"history-{allowed}.sqlite"
        result = run(tessera_bin, source, out, *budget, "--quiet", history=history)
        assert result.returncode == 0, (allowed, result.stderr)
        assert_measured_within_projected(tessera_bin, result, history, plan.stdout)
        target = zarr.open_array(str(out), mode="r")
        assert target.shape == shape
        assert target.chunks == expected_chunks
        assert target.dtype == dtype  # byte order included
        assert target.compressor == expected_compressor
        np.testing.assert_array_equal(target[...], expected)
        assert not partial(out).exists()
        assert list(work.iterdir()) == []
        # as zarr-python reads both back (a float32 fill is stored rounded to float32)
        source_fill = zarr.open_array(str(source), mode="r").fill_value
        if isinstance(fill, float) and np.isnan(fill):
            assert target.fill_value is not None and np.isnan(target.fill_value), \
                f"fill_value {target.fill_value!r}, source's NaN"
        else:
            assert target.fill_value == source_fill, \
                f"fill_value {target.fill_value!r}, source's {source_fill!r}"
