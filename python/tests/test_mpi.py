"""Spec(executor="mpi") from Python under a real mpirun (2 ranks on this machine), MPI
started by the program before Tessera (as mpi4py does: MPI_Init_thread, called here
through ctypes so that the test needs no mpi4py build): every rank computes the numpy
result; MPI started at MPI_THREAD_SINGLE is refused, saying what to change. Skipped
where mpirun, libmpi or the mpi executor is missing."""
import ctypes.util
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

MPIRUN = shutil.which("mpirun")
LIBMPI = ctypes.util.find_library("mpi")
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1", TESSERA_PROGRESS="0")

SCRIPT = textwrap.dedent("""
    import ctypes, sys
    import numpy as np
    level = {"multiple": 3, "single": 0}[sys.argv[1]]
    libmpi = ctypes.CDLL(%(libmpi)r, mode=ctypes.RTLD_GLOBAL)
    provided = ctypes.c_int(-1)
    assert libmpi.MPI_Init_thread(None, None, level, ctypes.byref(provided)) == 0
    import tessera
    spec = tessera.Spec(allowed_mem="4MB", executor="mpi", history="off", max_workers=1,
                        executor_options={"min_replicas": 2})
    values = np.random.default_rng(3).standard_normal((400, 300))
    try:
        x = tessera.asarray(values, chunks=(50, 300), spec=spec)
        got = (x - tessera.mean(x, axis=0)).compute()
        np.testing.assert_allclose(got, values - values.mean(axis=0), rtol=1e-12, atol=1e-12)
        print("computed", flush=True)
    except tessera.InvalidArgument as error:
        print("refused:", error, flush=True)
    libmpi.MPI_Finalize()
""")


@pytest.fixture
def script(tmp_path):
    if MPIRUN is None or LIBMPI is None:
        pytest.skip("mpirun or libmpi not found")
    probe = subprocess.run(
        [sys.executable, "-c", "import tessera; tessera.ones((2, 2), chunks=(1, 2), spec="
         "tessera.Spec(allowed_mem='1MB', executor='mpi', history='off')).compute()"],
        capture_output=True, text=True, env=MPI_ENV, timeout=120)
    if "was not built" in probe.stderr:
        pytest.skip("this tessera was built without the mpi executor")
    path = tmp_path / "mpi_job.py"
    path.write_text(SCRIPT % {"libmpi": LIBMPI})
    return path


def run(script, level):
    return subprocess.run([MPIRUN, "-np", "2", sys.executable, str(script), level],
                          capture_output=True, text=True, env=MPI_ENV, timeout=300)


def test_every_rank_computes_numpys_result_with_mpi_started_by_the_program(script):
    result = run(script, "multiple")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("computed") == 2, (result.stdout, result.stderr)


def test_mpi_started_single_threaded_is_refused_saying_what_to_change(script):
    result = run(script, "single")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("refused:") == 2, (result.stdout, result.stderr)
    assert "MPI_THREAD_SERIALIZED" in result.stdout
    assert "MPI_THREAD_MULTIPLE" in result.stdout
