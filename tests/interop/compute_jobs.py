"""Running compute_tool (tests/interop/compute_tool.cpp) from the property tests."""
import json
import subprocess

import pytest


def run_jobs(tool, jobs, seed_note):
    """One `compute_tool batch` process for all `jobs`; one result per job. A crash fails
    the test with `seed_note` (how to reproduce), the tool's stderr and the job it
    stopped at."""
    process = subprocess.run([tool, "batch"], input=json.dumps(jobs), capture_output=True,
                             text=True, timeout=900)
    lines = process.stdout.splitlines()
    if process.returncode != 0 or len(lines) != len(jobs):
        stopped = jobs[len(lines)] if len(lines) < len(jobs) else None
        pytest.fail(f"{seed_note}: compute_tool batch exited {process.returncode} after "
                    f"{len(lines)} of {len(jobs)} jobs\nstderr: {process.stderr[-4000:]}\n"
                    f"the job it stopped at: {json.dumps(stopped)}")
    return [json.loads(line) for line in lines]
