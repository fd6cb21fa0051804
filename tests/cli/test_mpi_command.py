"""`tessera rechunk --executor mpi` under a real mpirun (2 and 3 ranks on this machine):
the output equals the source and is printed once, by rank 0; a job killed with SIGKILL
(mpirun and every rank) and rerun with --resume finishes with the same values, skipping
the chunks the killed job had finished. Skipped where mpirun or the mpi executor is
missing (a build without MPI)."""
import os
import random
import re
import shutil
import signal
import subprocess
import time

import numcodecs
import numpy as np
import pytest
import zarr

MPIRUN = shutil.which("mpirun")
# OpenMPI refuses root and more ranks than cores unless told; other MPIs ignore these.
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", TESSERA_PROGRESS="0")


@pytest.fixture(scope="module")
def mpi_bin(tessera_bin):
    if MPIRUN is None:
        pytest.skip("mpirun not found")
    probe = subprocess.run([tessera_bin, "rechunk", "--help"], capture_output=True, text=True)
    if "mpi" not in probe.stdout:
        pytest.skip("this tessera was built without the mpi executor")
    return tessera_bin


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    """float64 (6000, 1500) in whole-column strips (6000, 50), blosc lz4: 72 MB that a
    small budget rechunks in two stages."""
    root = tmp_path_factory.mktemp("mpi")
    values = np.random.default_rng(5).standard_normal((6000, 1500))
    path = root / "in.zarr"
    array = zarr.open_array(str(path), mode="w", zarr_format=2, shape=values.shape,
                            chunks=(6000, 50), dtype=values.dtype,
                            compressor=numcodecs.Blosc(cname="lz4", clevel=5))
    array[...] = values
    return path, values


def files_beside(out):
    """Files in folders named like OUT plus a suffix (where a run keeps OUT until done)."""
    count = 0
    for entry in out.parent.iterdir():
        if entry.name.startswith(out.name + ".") and entry.is_dir():
            count += sum(len(files) for _, _, files in os.walk(entry))
    return count


def descendants(pid):
    """Every process below `pid` (from /proc): mpirun's ranks, which Open MPI puts in
    process groups of their own, so that a kill of mpirun's group alone misses them."""
    children = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, frontier = [], [pid]
    while frontier:
        below = children.get(frontier.pop(), [])
        found += below
        frontier += below
    return found


def kill_job(job):
    """SIGKILL mpirun and every rank at once, as a scheduler ends a job, and waits until
    none of them runs any more."""
    os.kill(job.pid, signal.SIGSTOP)  # no new ranks, no signal forwarding meanwhile
    ranks = descendants(job.pid)
    for pid in ranks:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    os.killpg(job.pid, signal.SIGKILL)
    job.wait(timeout=60)
    deadline = time.monotonic() + 60
    while any(os.path.exists(f"/proc/{pid}") and not zombie(pid) for pid in ranks):
        assert time.monotonic() < deadline, "the killed ranks did not exit"
        time.sleep(0.01)


def zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def mpi_rechunk(tessera_bin, ranks, source_path, out, *extra):
    return [MPIRUN, "-np", str(ranks), tessera_bin, "rechunk", str(source_path), str(out),
            "--chunks", "10,1500", "--allowed-mem", "8MB", "--executor", "mpi", *extra]


def test_mpi_rechunk_equals_the_source_and_rank_0_alone_reports(mpi_bin, tmp_path, source):
    source_path, values = source
    out = tmp_path / "out.zarr"
    result = subprocess.run(mpi_rechunk(mpi_bin, 3, source_path, out), capture_output=True,
                            text=True, env=MPI_ENV, timeout=300)
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...], values)
    assert result.stdout.count("Wrote ") == 1, result.stdout
    assert "MPI: 3 ranks" in result.stdout, result.stdout
    for rank in range(3):
        assert f"  rank {rank}: " in result.stdout, result.stdout


def test_killed_mpi_job_resumes_without_redoing_finished_chunks(mpi_bin, tmp_path, source):
    source_path, values = source
    work = tmp_path / "work"
    work.mkdir()
    # One task at a time per rank, each writing slowly (gzip level 9): a kill lands mid-run.
    args = ["--intermediate", "disk", "--work-dir", str(work), "--quiet", "--workers", "1",
            "--codec", "gzip:9"]
    seed = int(os.environ.get("TESSERA_TEST_SEED", str(int(time.time()) % 100000)))
    print(f"TESSERA_TEST_SEED={seed}")
    rng = random.Random(seed)
    resumed_some = False
    for kill in range(4):
        out = tmp_path / f"kill{kill}.zarr"
        job = subprocess.Popen(mpi_rechunk(mpi_bin, 2, source_path, out, *args),
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=MPI_ENV,
                               start_new_session=True)
        # Killed once a random number of OUT's 600 chunks are written (in whatever Tessera
        # keeps beside OUT until it is complete): past a task's ~46, so that some task is
        # done, and mostly before the end.
        threshold = rng.randint(60, 400)
        deadline = time.monotonic() + 120
        while job.poll() is None and time.monotonic() < deadline and \
                files_beside(out) < threshold:
            time.sleep(0.005)
        if job.poll() is None:
            kill_job(job)
        job.wait(timeout=60)
        if out.exists():  # the array was in place before the kill: complete, nothing to resume
            np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...], values)
            continue
        again = subprocess.run(mpi_rechunk(mpi_bin, 2, source_path, out, *args, "--resume"),
                               capture_output=True, text=True, env=MPI_ENV, timeout=300)
        assert again.returncode == 0, again.stderr
        np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...], values)
        skipped = [int(n) for n in re.findall(r"\((\d+) resumed\)", again.stdout)]
        resumed_some = resumed_some or any(n > 0 for n in skipped)
    assert resumed_some, "no kill landed after a finished chunk: the resume redid everything"
