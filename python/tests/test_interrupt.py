"""Ctrl-C: SIGINT to a Python process computing stops the run promptly, raises
KeyboardInterrupt, and leaves no output in place."""

import os
import signal
import subprocess
import sys
import time

SCRIPT = r"""
import sys, time
import tessera
spec = tessera.Spec(work_dir=sys.argv[2], allowed_mem="20MB", max_workers=2)
x = tessera.random.random((40000, 4000), chunks=(500, 500), spec=spec)
y = tessera.sqrt(tessera.exp(x) + 1) * tessera.log1p(x)
print("running", flush=True)
start = time.monotonic()
try:
    y.to_zarr(sys.argv[1])
except KeyboardInterrupt:
    print(f"interrupted after {time.monotonic() - start:.2f} s", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""


def test_sigint_stops_a_long_run_within_a_second_and_leaves_no_output(tmp_path):
    out = tmp_path / "out.zarr"
    environment = dict(os.environ, TESSERA_HISTORY="off")
    process = subprocess.Popen([sys.executable, "-c", SCRIPT, str(out), str(tmp_path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=environment)
    assert process.stdout.readline().strip() == "running"
    time.sleep(1.0)  # well into the run (it takes many seconds)
    assert process.poll() is None, process.stderr.read()
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    stopped = time.monotonic() - sent
    assert process.returncode == 3, (stdout, stderr)
    assert "interrupted" in stdout
    assert stopped < 1.0, f"stopped {stopped:.2f} s after SIGINT"
    assert not out.exists(), "an interrupted run left its output in place"
