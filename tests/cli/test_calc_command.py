"""`tessera calc EXPR --input NAME=STORE ... --output STORE` and `tessera plan`: results
read back by zarr-python equal numpy's on the same inputs; plan and --plan write nothing;
refusals point at the column of the expression, name what is wrong, exit 1 (2 for usage
errors) and leave nothing behind.

Tests marked AUTO use --allowed-mem auto (the default): they need planning to choose
allowed_mem (tessera::Finalize with Spec::kAutoAllowedMem), and skip, saying so, while
planning refuses auto.
"""
import json
import subprocess

import numcodecs
import numpy as np
import pytest
import zarr

DEW_POINT = "td = ((1/273) - 0.0001844*log(0.611*exp(5423*((1/273)-(1/t2)))*rh/100/0.611))**-1"
RNG = np.random.default_rng(11)


def run(tessera_bin, *args):
    return subprocess.run([tessera_bin, *map(str, args)], capture_output=True, text=True,
                          timeout=120)


def write_array(path, values, chunks, dims=None):
    array = zarr.open_array(str(path), mode="w", zarr_format=2, shape=values.shape, chunks=chunks,
                            dtype=values.dtype, compressor=numcodecs.Blosc(cname="lz4"))
    array[...] = values
    if dims:
        array.attrs["_ARRAY_DIMENSIONS"] = list(dims)
    return path


def leftovers(out):
    return [p for p in (out, out.with_name(out.name + ".tessera-partial")) if p.exists()]


@pytest.fixture
def weather(tmp_path):
    """t2 (K) and rh (%) as float32 (30, 17, 11), chunks (8, 5, 4), ragged."""
    t2 = (RNG.random((30, 17, 11)) * 60 + 250).astype(np.float32)
    rh = (RNG.random((30, 17, 11)) * 90 + 10).astype(np.float32)
    write_array(tmp_path / "t2.zarr", t2, (8, 5, 4), dims=("time", "lat", "lon"))
    write_array(tmp_path / "rh.zarr", rh, (8, 5, 4))
    return tmp_path / "t2.zarr", t2, tmp_path / "rh.zarr", rh


def dew_point(t2, rh):
    """The formula evaluated by numpy on the float32 inputs (numpy 2 keeps float32)."""
    t2 = t2.astype(np.float64)
    rh = rh.astype(np.float64)
    return ((1 / 273) - 0.0001844 * np.log(0.611 * np.exp(5423 * ((1 / 273) - (1 / t2))) *
                                           rh / 100 / 0.611)) ** -1


def test_dew_point(tessera_bin, tmp_path, weather):
    t2_path, t2, rh_path, rh = weather
    out = tmp_path / "td.zarr"
    result = run(tessera_bin, "calc", DEW_POINT, "--input", f"t2={t2_path}", "--input",
                 f"rh={rh_path}", "--output", out, "--allowed-mem", "50MB", "--quiet")
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert f"Wrote {out}" in result.stdout and "measured max" in result.stdout
    written = zarr.open_array(str(out), mode="r")
    assert written.dtype == np.float32
    assert written.chunks == (8, 5, 4)
    np.testing.assert_allclose(written[...], dew_point(t2, rh), rtol=2e-5)
    assert written.attrs["long_name"] == "td"
    assert written.attrs["tessera_expression"] == DEW_POINT
    assert written.attrs["_ARRAY_DIMENSIONS"] == ["time", "lat", "lon"]


@pytest.mark.parametrize("expression,expected", [
    ("mean(t2, axis=0)", lambda t2, rh: t2.mean(axis=0)),
    ("sum(t2 - 273.15, 0)", lambda t2, rh: (t2 - np.float32(273.15)).sum(axis=0)),
    ("max(rh, axis=(0, -1), keepdims=True)", lambda t2, rh: rh.max(axis=(0, 2), keepdims=True)),
    ("std(t2, axis=0, correction=1)", lambda t2, rh: t2.astype(np.float64).std(axis=0, ddof=1)),
    ("where(t2 > 280, t2 - 273.15, nan)", lambda t2, rh: np.where(t2 > 280, t2 - 273.15, np.nan)),
    ("where((rh > 50) & ~(t2 < 260), 1, 0.5)",
     lambda t2, rh: np.where((rh > 50) & ~(t2 < 260), 1, 0.5)),
    ("-t2**2 / 1e4 + maximum(rh, 50) // 3", lambda t2, rh: -t2 ** 2 / 1e4 + np.maximum(rh, 50) // 3),
])
def test_matches_numpy(tessera_bin, tmp_path, weather, expression, expected):
    t2_path, t2, rh_path, rh = weather
    out = tmp_path / "out.zarr"
    # After "--" EXPR may start with '-' (before it, that reads as an option).
    result = run(tessera_bin, "calc", "--input", f"t2={t2_path}", "--input", f"rh={rh_path}",
                 "--output", out, "--allowed-mem", "50MB", "--quiet", "--", expression)
    assert result.returncode == 0, result.stderr
    written = zarr.open_array(str(out), mode="r")
    truth = np.asarray(expected(t2, rh))
    assert written.shape == truth.shape
    np.testing.assert_allclose(written[...], truth, rtol=2e-5, atol=1e-6)


def test_reduction_over_axis_0_keeps_the_other_chunks(tessera_bin, tmp_path, weather):
    t2_path, t2, _, _ = weather
    out = tmp_path / "mean.zarr"
    result = run(tessera_bin, "calc", "t_mean = mean(t2, axis=0)", "--input", f"t2={t2_path}",
                 "--output", out, "--allowed-mem", "50MB", "--codec", "raw", "--quiet")
    assert result.returncode == 0, result.stderr
    written = zarr.open_array(str(out), mode="r")
    assert written.shape == (17, 11) and written.chunks == (5, 4)
    assert written.compressor is None
    assert "_ARRAY_DIMENSIONS" not in written.attrs  # shape differs from every input
    np.testing.assert_allclose(written[...], t2.mean(axis=0), rtol=1e-5)


@pytest.mark.parametrize("command", [["plan"], ["calc", "--plan"]])
def test_plan_writes_nothing(tessera_bin, tmp_path, weather, command):
    t2_path, _, rh_path, _ = weather
    out = tmp_path / "td.zarr"
    result = run(tessera_bin, *command, DEW_POINT, "--input", f"t2={t2_path}", "--input",
                 f"rh={rh_path}", "--output", out, "--allowed-mem", "10MB")
    assert result.returncode == 0, result.stderr
    assert "Nothing was run" in result.stdout
    assert "allowed_mem    10.0 MB per task" in result.stdout
    assert "the smallest allowed_mem that runs this plan" in result.stdout
    assert "Plan: " in result.stdout and "Input t2 = " in result.stdout
    assert not leftovers(out)


def test_plan_without_output(tessera_bin, weather):
    t2_path, _, _, _ = weather
    result = run(tessera_bin, "plan", "sum(t2, axis=0)", "--input", f"t2={t2_path}",
                 "--allowed-mem", "1MB")
    assert result.returncode == 0, result.stderr
    assert "planned as an in-memory result" in result.stdout
    assert "Reduction sum" in result.stdout


def test_plan_with_auto_allowed_mem(tessera_bin, tmp_path, weather):  # AUTO
    t2_path, _, rh_path, _ = weather
    out = tmp_path / "td.zarr"
    result = run(tessera_bin, "plan", DEW_POINT, "--input", f"t2={t2_path}", "--input",
                 f"rh={rh_path}", "--output", out)
    assert result.returncode == 0, result.stderr
    assert "allowed_mem    auto -> " in result.stdout
    assert "(the smallest found that runs this plan" in result.stdout
    assert not leftovers(out)


def test_calc_with_auto_allowed_mem(tessera_bin, tmp_path, weather):  # AUTO
    t2_path, t2, rh_path, rh = weather
    out = tmp_path / "td.zarr"
    result = run(tessera_bin, "calc", DEW_POINT, "--input", f"t2={t2_path}", "--input",
                 f"rh={rh_path}", "--output", out, "--allowed-mem", "auto",
                 "--memory-tiers", "1MB,64MB", "--quiet")
    assert result.returncode == 0, result.stderr
    np.testing.assert_allclose(zarr.open_array(str(out), mode="r")[...], dew_point(t2, rh),
                               rtol=2e-5)


def test_expression_errors_point_at_the_column(tessera_bin, tmp_path, weather):
    t2_path, _, _, _ = weather
    out = tmp_path / "td.zarr"
    result = run(tessera_bin, "calc", "td = 1 / lg(t2)", "--input", f"t2={t2_path}",
                 "--output", out, "--allowed-mem", "10MB")
    assert result.returncode == 1, result.stderr
    assert result.stderr == (
        'tessera: error: expression error at column 10: unknown function "lg"; '
        'did you mean "log"?\n'
        "  td = 1 / lg(t2)\n"
        "           ^\n")
    assert not leftovers(out)


@pytest.mark.parametrize("expression,column,message", [
    ("t2 + rhh", 6, 'unknown name "rhh"'),
    ("(t2 + 1", 1, "is never closed"),
    ("t2 +", 5, "the expression ends"),
    ("t2 * 1e", 6, "the exponent has no digits"),
    ("sum(t2, axes=0)", 9, 'did you mean "axis"?'),
    ("log(t2, 2)", 9, "takes at most 1 positional"),
    ("1 / 273", 1, "uses no input array"),
    ("t2 + small", 4, "broadcast"),
])
def test_expression_errors(tessera_bin, tmp_path, weather, expression, column, message):
    t2_path, _, _, _ = weather
    small = write_array(tmp_path / "small.zarr", np.ones(3, dtype=np.float32), (3,))
    out = tmp_path / "out.zarr"
    for command in (["calc", "--output", out], ["plan"]):
        result = run(tessera_bin, *command, expression, "--input", f"t2={t2_path}",
                     "--input", f"small={small}", "--allowed-mem", "10MB")
        assert result.returncode == 1, (result.stdout, result.stderr)
        assert result.stderr.startswith(f"tessera: error: expression error at column {column}: ")
        assert message in result.stderr
        lines = result.stderr.splitlines()
        assert lines[-1] == "  " + " " * (column - 1) + "^"
        assert not leftovers(out)


def test_argument_errors(tessera_bin, tmp_path, weather):
    t2_path, _, rh_path, _ = weather
    out = tmp_path / "out.zarr"
    cases = [
        (["--input", str(t2_path)], "expected NAME=STORE"),
        (["--input", f"t2={t2_path}", "--input", f"t2={rh_path}"], "given twice"),
        (["--input", f"2t={t2_path}"], "cannot be a name"),
        (["--input", f"t2={tmp_path / 'missing.zarr'}"], "no such file or directory"),
        (["--input", f"t2={t2_path}", "--allowed-mem", "lots"], "--allowed-mem"),
        (["--input", f"t2={t2_path}", "--codec", "snappy"], "--codec"),
    ]
    for args, message in cases:
        result = run(tessera_bin, "calc", "t2 * 2", *args, "--output", out)
        assert result.returncode == 1, (args, result.stdout, result.stderr)
        assert result.stderr.startswith("tessera: error: ") and message in result.stderr, args
        assert not leftovers(out)


def test_output_must_not_be_an_input_or_exist(tessera_bin, tmp_path, weather):
    t2_path, _, _, _ = weather
    before = sorted(p.name for p in t2_path.iterdir())
    for output, message in [(t2_path, "--output is --input t2"),
                            (t2_path / "inner", "lies inside --input t2"),
                            (tmp_path, "lies inside --output")]:
        result = run(tessera_bin, "calc", "t2 * 2", "--input", f"t2={t2_path}", "--output",
                     output, "--allowed-mem", "10MB")
        assert result.returncode == 1 and message in result.stderr, result.stderr
    assert sorted(p.name for p in t2_path.iterdir()) == before

    out = tmp_path / "out.zarr"
    first = run(tessera_bin, "calc", "t2 * 2", "--input", f"t2={t2_path}", "--output", out,
                "--allowed-mem", "10MB", "--quiet")
    assert first.returncode == 0, first.stderr
    again = run(tessera_bin, "calc", "t2 * 3", "--input", f"t2={t2_path}", "--output", out,
                "--allowed-mem", "10MB")
    assert again.returncode == 1 and "already exists; pass --overwrite" in again.stderr
    replaced = run(tessera_bin, "calc", "t2 * 3", "--input", f"t2={t2_path}", "--output", out,
                   "--allowed-mem", "10MB", "--overwrite", "--quiet")
    assert replaced.returncode == 0, replaced.stderr
    assert json.loads((out / ".zattrs").read_text())["tessera_expression"] == "t2 * 3"


@pytest.mark.parametrize("args", [
    ["calc", "--input", "t2=x.zarr", "--output", "o.zarr"],  # no EXPR
    ["calc", "t2 * 2", "--input", "t2=x.zarr"],              # no --output
    ["plan", "t2 * 2", "--plan"],                            # --plan is calc's
    ["calc", "t2", "--output", "o.zarr", "--workers=-1"],
], ids=["no-expr", "no-output", "plan-flag-on-plan", "workers"])
def test_usage_errors(tessera_bin, tmp_path, args):
    result = subprocess.run([tessera_bin, *args], capture_output=True, text=True, timeout=60,
                            cwd=tmp_path)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert f"tessera {args[0]}" in result.stderr
    assert not (tmp_path / "o.zarr").exists()
