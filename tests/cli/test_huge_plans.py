"""Planning cost does not grow with the number of chunks (issue 14): a crafted `.zarray`
of shape (2^50, 80) in (10, 20) chunks, 4.5 x 10^14 of them, is planned by `rechunk
--plan` and `calc --plan` at once. The subprocess timeout is generous (a planner that
walks every chunk would take days); the task counts are worked out by hand.
"""
import json
import subprocess

import pytest

ROWS = 2 ** 50


@pytest.fixture
def huge(tmp_path):
    path = tmp_path / "huge.zarr"
    path.mkdir()
    (path / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [ROWS, 80], "chunks": [10, 20], "dtype": "<f8",
        "compressor": None, "fill_value": 0.0, "order": "C", "filters": None}))
    return path


def run(tessera_bin, *args):
    return subprocess.run([tessera_bin, *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def test_rechunk_plan_of_two_to_the_fifty_rows(tessera_bin, tmp_path, huge):
    out = tmp_path / "out.zarr"
    result = run(tessera_bin, "rechunk", huge, out, "--chunks", "20,10", "--allowed-mem",
                 "100MB", "--plan")
    assert result.returncode == 0, result.stderr
    tasks = -(-ROWS // 20) * 4  # (20, 20) regions: the last of 4 rows (2^50 = 20 q + 4)
    assert f"{tasks:,} tasks" in result.stdout, result.stdout
    assert "Nothing was run (--plan)" in result.stdout
    assert not out.exists()


def test_rechunk_plan_through_an_intermediate(tessera_bin, tmp_path, huge):
    out = tmp_path / "out.zarr"
    for tier in ("auto", "disk"):
        result = run(tessera_bin, "rechunk", huge, out, "--chunks", "100000,1",
                     "--allowed-mem", "10MB", "--intermediate", tier, "--work-dir", tmp_path,
                     "--plan")
        assert result.returncode == 0, result.stderr
        assert "in 2 stages" in result.stdout, result.stdout
    assert not out.exists()


def test_calc_plan_of_two_to_the_fifty_rows(tessera_bin, tmp_path, huge):
    out = tmp_path / "out.zarr"
    result = run(tessera_bin, "calc", "y = x * 2 + 1", "--input", f"x={huge}", "--output", out,
                 "--allowed-mem", "100MB", "--plan")
    assert result.returncode == 0, result.stderr
    assert f"1 op, {-(-ROWS // 10) * 4} tasks" in result.stdout, result.stdout
    assert not out.exists()
