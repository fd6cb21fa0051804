"""`tessera history`: what recent runs projected and measured per op, read from the history
database that every run writes (TESSERA_HISTORY). The cases that populate it run
`tessera rechunk` twice; the others check the errors and edge cases without any run.
"""
import hashlib
import json
import os
import shutil
import stat
import subprocess
import tempfile

import numpy as np
import pytest
import zarr
from zarr_v2 import V2_DEFAULT_COMPRESSOR


def run(tessera_bin, *args, history):
    """Runs tessera with TESSERA_HISTORY=`history` (a path, or "off")."""
    environment = dict(os.environ, TESSERA_HISTORY=str(history))
    return subprocess.run([tessera_bin, *map(str, args)], capture_output=True, text=True,
                          timeout=60, env=environment)


def history_json(tessera_bin, database, *args):
    result = run(tessera_bin, "history", "--json", *args, history=database)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture
def two_runs(tessera_bin, tmp_path):
    """A history database holding two `tessera rechunk` runs of one (200, 150) float64
    array from chunks (200, 5) to (5, 150), in two stages."""
    source = tmp_path / "source.zarr"
    array = zarr.open_array(str(source), mode="w", zarr_format=2, compressor=V2_DEFAULT_COMPRESSOR, shape=(200, 150), chunks=(200, 5),
                            dtype="<f8")
    array[...] = np.arange(200 * 150, dtype="<f8").reshape(200, 150)
    database = tmp_path / "history.sqlite"
    for attempt in range(2):
        result = run(tessera_bin, "rechunk", source, tmp_path / f"target-{attempt}.zarr",
                     "--chunks", "5,-1", "--allowed-mem", "100kB", "--quiet",
                     history=database)
        assert result.returncode == 0, result.stderr
    assert database.is_file(), "runs record their history in TESSERA_HISTORY"
    return database


def test_lists_both_runs_newest_first_with_projected_and_measured_ops(tessera_bin, two_runs):
    document = history_json(tessera_bin, two_runs)
    assert document["database"] == str(two_runs)
    runs = document["runs"]
    assert len(runs) == 2
    assert runs[0]["id"] > runs[1]["id"]
    for recorded in runs:
        assert "rechunk" in recorded["label"]
        assert recorded["status"] == "ok"
        assert recorded["seconds"] > 0
        assert recorded["allowed_mem"] == 100_000
        assert recorded["ops"], "every op of the plan is recorded"
        for op in recorded["ops"]:
            assert op["kind"] == "rechunk"
            assert op["tasks"] > 0
            assert op["projected_mem"] > 0
            assert op["estimated_mem"] > 0
            assert op["measured_mem_max"] > 0
            assert op["measured_mem_p95"] <= op["measured_mem_max"]
            assert op["footprint_mem_max"] >= op["measured_mem_max"]
    # The same plan run twice: the same steps, so the same fingerprints, in plan order.
    assert [op["fingerprint"] for op in runs[0]["ops"]] == \
        [op["fingerprint"] for op in runs[1]["ops"]]
    assert [op["index"] for op in runs[0]["ops"]] == sorted(op["index"] for op in runs[0]["ops"])


def test_text_shows_each_run_and_its_ops(tessera_bin, two_runs):
    runs = history_json(tessera_bin, two_runs)["runs"]
    result = run(tessera_bin, "history", history=two_runs)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    for recorded in runs:
        assert f"run {recorded['id']}  {recorded['started_at']}" in text
        for op in recorded["ops"]:
            assert op["name"] in text
            assert op["fingerprint"][:12] in text
    assert text.index(f"run {runs[0]['id']} ") < text.index(f"run {runs[1]['id']} ")
    for column in ("projected", "estimate", "measured max", "measured p95", "unaccounted max"):
        assert column in text


def test_runs_limits_to_the_most_recent(tessera_bin, two_runs):
    newest = history_json(tessera_bin, two_runs)["runs"][0]
    runs = history_json(tessera_bin, two_runs, "--runs", 1)["runs"]
    assert [recorded["id"] for recorded in runs] == [newest["id"]]


def test_op_filters_by_name_kind_or_fingerprint_prefix(tessera_bin, two_runs):
    runs = history_json(tessera_bin, two_runs)["runs"]
    first_op = runs[0]["ops"][0]
    by_prefix = history_json(tessera_bin, two_runs, "--op", first_op["fingerprint"][:8])["runs"]
    assert len(by_prefix) == 2  # the same step in both runs
    for recorded in by_prefix:
        assert [op["fingerprint"] for op in recorded["ops"]] == [first_op["fingerprint"]]
    by_name = history_json(tessera_bin, two_runs, "--op", first_op["name"])["runs"]
    assert by_name and all(op["name"] == first_op["name"]
                           for recorded in by_name for op in recorded["ops"])
    by_kind = history_json(tessera_bin, two_runs, "--op", "rechunk")["runs"]
    assert by_kind == runs
    assert history_json(tessera_bin, two_runs, "--op", "no-such-op")["runs"] == []
    text = run(tessera_bin, "history", "--op", "no-such-op", history=two_runs)
    assert text.returncode == 0
    assert 'no op matching "no-such-op"' in text.stdout


def test_history_off_is_an_error_saying_how_to_enable_it(tessera_bin):
    result = run(tessera_bin, "history", history="off")
    assert result.returncode == 1
    assert "history is switched off" in result.stderr
    assert "TESSERA_HISTORY" in result.stderr and "--db" in result.stderr


def test_missing_database_is_reported_and_not_created(tessera_bin, tmp_path):
    database = tmp_path / "never-written.sqlite"
    for args, history in ((("history",), database),
                          (("history", "--db", database), "off")):
        result = run(tessera_bin, *args, history=history)
        assert result.returncode == 1
        assert f"no history yet at {database}: run a computation first" in result.stderr
        assert list(tmp_path.iterdir()) == []


def test_empty_history_says_so(tessera_bin, tmp_path):
    database = tmp_path / "history.sqlite"
    database.touch()  # an empty file is an empty SQLite database
    result = run(tessera_bin, "history", history=database)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"no runs recorded yet in {database}\n"
    assert history_json(tessera_bin, database)["runs"] == []


def test_damaged_database_is_an_error_and_left_alone(tessera_bin, tmp_path):
    database = tmp_path / "history.sqlite"
    garbage = bytes(range(32, 127)) * 40
    database.write_bytes(garbage)
    result = run(tessera_bin, "history", history=database)
    assert result.returncode == 1
    assert f"history database {database} is damaged" in result.stderr
    assert "cannot read the history database" in result.stderr
    assert database.read_bytes() == garbage


@pytest.mark.parametrize("runs", ["0", "-1", "x", "2.5"])
def test_bad_runs_is_a_usage_error(tessera_bin, tmp_path, runs):
    result = run(tessera_bin, "history", f"--runs={runs}", "--db", tmp_path / "h.sqlite",
                 history="off")
    assert result.returncode == 2
    assert "--runs" in result.stderr
    assert "at least 1" in result.stderr


def as_unprivileged():
    """subprocess arguments that run a child as nobody when this process is root (as CI
    runs): root ignores permission bits, so a read-only file would not be read-only."""
    if os.geteuid() == 0:
        return {"user": "nobody", "group": "nogroup", "extra_groups": []}
    return {}


@pytest.mark.parametrize("folder_writable", [False, True], ids=["read-only-folder",
                                                                 "writable-folder"])
def test_read_only_database_is_listed_and_reported(tessera_bin, two_runs, folder_writable):
    """Issue 14: a history database the user may only read (0444, in a folder they may or
    may not write) is listed by `tessera history` and rendered by `tessera report`, and
    its bytes are left exactly as they were."""
    expected = history_json(tessera_bin, two_runs)  # read by its owner: the truth
    with tempfile.TemporaryDirectory() as scratch:  # under /tmp: nobody can reach it
        top = os.path.join(scratch, "top")
        folder = os.path.join(top, "db")
        reports = os.path.join(top, "reports")
        os.makedirs(folder)
        os.makedirs(reports)
        database = os.path.join(folder, "history.sqlite")
        shutil.copyfile(two_runs, database)
        with open(database, "rb") as file:
            checksum = hashlib.sha256(file.read()).hexdigest()
        os.chmod(database, 0o444)
        os.chmod(folder, 0o777 if folder_writable else 0o555)
        os.chmod(reports, 0o777)
        os.chmod(top, 0o755)
        os.chmod(scratch, 0o755)
        try:
            environment = dict(os.environ, TESSERA_HISTORY="off")
            listed = subprocess.run([tessera_bin, "history", "--json", "--db", database],
                                    capture_output=True, text=True, timeout=60,
                                    env=environment, **as_unprivileged())
            assert listed.returncode == 0, listed.stderr
            assert "warning" not in listed.stderr, listed.stderr
            document = json.loads(listed.stdout)
            assert document["runs"] == expected["runs"]
            report = os.path.join(reports, "last.svg")
            rendered = subprocess.run([tessera_bin, "report", "last", "-o", report, "--db",
                                       database], capture_output=True, text=True, timeout=60,
                                      env=environment, **as_unprivileged())
            assert rendered.returncode == 0, rendered.stderr
            assert os.path.getsize(report) > 0
            with open(database, "rb") as file:
                assert hashlib.sha256(file.read()).hexdigest() == checksum
            assert stat.S_IMODE(os.stat(database).st_mode) == 0o444
            if not folder_writable:
                assert os.listdir(folder) == ["history.sqlite"]
        finally:
            os.chmod(folder, 0o755)  # so that the folder can be removed


def test_two_processes_writing_at_once_are_both_recorded(tessera_bin, tmp_path):
    """Two `tessera rechunk` processes started together on one history database: both
    runs are there afterwards, each with all its ops."""
    source = tmp_path / "source.zarr"
    array = zarr.open_array(str(source), mode="w", zarr_format=2, compressor=V2_DEFAULT_COMPRESSOR, shape=(400, 300), chunks=(400, 5),
                            dtype="<f8")
    array[...] = np.arange(400 * 300, dtype="<f8").reshape(400, 300)
    database = tmp_path / "history.sqlite"
    environment = dict(os.environ, TESSERA_HISTORY=str(database))
    processes = [
        subprocess.Popen([tessera_bin, "rechunk", str(source), str(tmp_path / f"t{i}.zarr"),
                          "--chunks", "5,-1", "--allowed-mem", "200kB", "--quiet"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env=environment)
        for i in range(2)]
    for process in processes:
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
        assert "warning" not in stderr, stderr
    runs = history_json(tessera_bin, database)["runs"]
    assert len(runs) == 2
    assert all(recorded["status"] == "ok" for recorded in runs)
    assert len(runs[0]["ops"]) == len(runs[1]["ops"]) > 0


def test_measure_reserved_prints_the_process_baseline(tessera_bin):
    result = subprocess.run([tessera_bin, "measure-reserved", "--json", "--workers", "2"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["workers"] == 2
    # A whole number of MiB, at least the size of a process with its libraries loaded.
    assert document["reserved_mem"] % (1 << 20) == 0
    assert 4 << 20 <= document["reserved_mem"] < 1 << 30
    text = subprocess.run([tessera_bin, "measure-reserved", "--executor", "sync"],
                          capture_output=True, text=True, timeout=60)
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("reserved_mem: ")
    assert "sync executor with 1 worker\n" in text.stdout
    assert "--reserved-mem " in text.stdout
