"""Credentials never leak: not into an exception, the command line's output, nor the
history database (which records a failed run's cause), with history on.

The server checks signatures (s3_auth_server). To get a failure recorded by a run (not
one refused when the store is opened, before any run), the server lets the run's first
K requests through unchecked (moto's INITIAL_NO_AUTH_ACTION_COUNT) and checks from its
first chunk PUT on: K is counted on a dry run of the same work into another prefix,
through a proxy, with checks off.
"""
import os
import re
import sqlite3
import subprocess
import traceback

import numpy as np
import pytest
import zarr

import tessera

from .conftest import apply_env

from fault_proxy import CHUNK_KEY  # noqa: E402

TESSERA_BIN = os.environ.get("TESSERA_BIN")
WRONG_SECRET = "wrongSecretValue/DoNotPrint+1234567890abcdefghij"
SESSION_TOKEN = "FwoGZXIvYXdzEDoNotPrintThisSessionToken0123456789abcdefXYZ+/="
CHUNK = re.compile(CHUNK_KEY)


@pytest.fixture
def guarded(s3_auth_server, request):
    """A bucket on the checking server; checks are on from the first request again after
    the test."""
    bucket = s3_auth_server.make_bucket(
        "creds-" + re.sub(r"[^a-z0-9]+", "-", request.node.name.lower()).strip("-")[:50])
    yield bucket
    s3_auth_server.require_auth(after=0)


def history_files(db):
    """The database file and whichever of its journals exist."""
    return [path for path in (db, f"{db}-wal", f"{db}-shm", f"{db}-journal")
            if os.path.exists(path)]


def assert_nowhere(secrets, texts, db):
    for secret in secrets:
        for text in texts:
            assert secret not in text
        for path in history_files(db):
            with open(path, "rb") as data:
                assert secret.encode() not in data.read(), path


def runs_of(db):
    """(label, status) of every run the database recorded."""
    connection = sqlite3.connect(db)
    try:
        return list(connection.execute("SELECT label, status FROM runs ORDER BY id"))
    finally:
        connection.close()


def checks_from_the_first_chunk_put(server, proxy, dry_run):
    """Runs dry_run() with checks off through `proxy`, then has the server check every
    request after as many as came before dry_run's first chunk PUT."""
    server.require_auth(after=None)
    proxy.reset_counters()
    dry_run()
    first = next(i for i, d in enumerate(proxy.history)
                 if d.method == "PUT" and CHUNK.search(d.target.split("?", 1)[0]))
    assert first >= 3, proxy.history  # the open probe, the target's checks, the marker
    server.require_auth(after=first)


@pytest.mark.parametrize("token", [False, True], ids=["wrong-secret", "wrong-secret+token"])
def test_a_run_refused_midway_leaks_no_credential(s3_auth_server, guarded, fault_proxy,
                                                 monkeypatch, capfd, tmp_path, token):
    """to_zarr with a wrong secret (and a session token) refused at its first chunk PUT:
    a StorageError naming the chunk and the refusal; neither the secret nor the token is
    in its text, its traceback, the process's stderr, or the history database, which
    recorded the failed run with its cause."""
    proxy = fault_proxy(seed=0, upstream=s3_auth_server.endpoint)
    apply_env(monkeypatch, s3_auth_server, endpoint=proxy.endpoint)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", WRONG_SECRET)
    if token:
        monkeypatch.setenv("AWS_SESSION_TOKEN", SESSION_TOKEN)
    db = str(tmp_path / "history.sqlite")
    monkeypatch.setenv("TESSERA_HISTORY", db)
    spec = tessera.Spec(work_dir=tmp_path, allowed_mem="100MB", max_workers=2, history=db)
    data = np.arange(1600.0).reshape(40, 40)

    def write(name):
        tessera.asarray(data, chunks=(10, 10), spec=spec).to_zarr(f"s3://{guarded}/{name}")

    checks_from_the_first_chunk_put(s3_auth_server, proxy, lambda: write("dry.zarr"))
    with pytest.raises(tessera.StorageError) as caught:
        write("out.zarr")
    message = str(caught.value)
    assert re.search(rf"S3 PUT s3://{guarded}/out\.zarr/c/\d+/\d+", message), message
    if token:
        assert "InvalidToken" in message, message  # moto knows no such session
    else:
        assert "403" in message and "SignatureDoesNotMatch" in message, message
    captured = capfd.readouterr()
    texts = [message, repr(caught.value), *map(str, caught.value.args),
             "".join(traceback.format_exception(caught.value)), captured.out, captured.err]
    runs = runs_of(db)
    assert [label for label, _ in runs] == ["to_zarr", "to_zarr"], runs
    assert runs[0][1] == "ok" and runs[1][1].startswith("failed: "), runs
    assert f"s3://{guarded}/out.zarr/c/" in runs[1][1], runs  # the cause, recorded
    assert_nowhere([WRONG_SECRET, SESSION_TOKEN, s3_auth_server.secret_access_key], texts, db)


def test_a_command_refused_midway_leaks_no_credential(s3_auth_server, guarded, fault_proxy,
                                                     tmp_path):
    """`tessera rechunk` of a local array into s3:// with a wrong secret and a session
    token, refused at its first chunk PUT: it fails naming the chunk; neither the secret
    nor the token is in its stdout, its stderr or the history database, which recorded
    the failed run."""
    assert TESSERA_BIN, "TESSERA_BIN names the tessera command"
    local = tmp_path / "local.zarr"
    array = zarr.create_array(store=str(local), shape=(40, 40), chunks=(10, 10),
                              dtype="float64")
    array[...] = np.arange(1600.0).reshape(40, 40)
    proxy = fault_proxy(seed=0, upstream=s3_auth_server.endpoint)
    db = str(tmp_path / "history.sqlite")
    env = s3_auth_server.merged_env(endpoint=proxy.endpoint, AWS_SECRET_ACCESS_KEY=WRONG_SECRET,
                                    AWS_SESSION_TOKEN=SESSION_TOKEN, TESSERA_HISTORY=db,
                                    TESSERA_PROGRESS="0")
    outputs = []

    def rechunk(name):
        completed = subprocess.run(
            [TESSERA_BIN, "rechunk", str(local), f"s3://{guarded}/{name}", "--chunks", "10,10",
             "--allowed-mem", "64MB"], capture_output=True, text=True, timeout=300, env=env)
        outputs.extend([completed.stdout, completed.stderr])
        return completed

    checks_from_the_first_chunk_put(
        s3_auth_server, proxy, lambda: rechunk("dry.zarr").check_returncode())
    failed = rechunk("out.zarr")
    assert failed.returncode != 0, failed.stdout
    assert re.search(rf"s3://{guarded}/out\.zarr/c/\d+/\d+", failed.stderr), failed.stderr
    assert "InvalidToken" in failed.stderr, failed.stderr
    runs = runs_of(db)
    assert len(runs) == 2 and runs[0][1] == "ok" and runs[1][1].startswith("failed: "), runs
    assert f"s3://{guarded}/out.zarr/c/" in runs[1][1], runs
    assert_nowhere([WRONG_SECRET, SESSION_TOKEN, s3_auth_server.secret_access_key], outputs,
                   db)


@pytest.mark.parametrize("how", ["python", "cli"])
def test_a_run_that_succeeds_records_no_credential(s3_auth_server, guarded, monkeypatch,
                                                  capfd, tmp_path, how):
    """A successful run against the checking server, history on: the run is recorded,
    and the secret of the key that signed it is nowhere in the database nor the output."""
    apply_env(monkeypatch, s3_auth_server)
    db = str(tmp_path / "history.sqlite")
    monkeypatch.setenv("TESSERA_HISTORY", db)
    data = np.arange(600.0).reshape(20, 30)
    url = f"s3://{guarded}/ok.zarr"
    texts = []
    if how == "python":
        spec = tessera.Spec(work_dir=tmp_path, allowed_mem="100MB", max_workers=2, history=db)
        tessera.asarray(data, chunks=(10, 10), spec=spec).to_zarr(url)
        np.testing.assert_array_equal(tessera.from_zarr(url, spec=spec).compute(), data)
        captured = capfd.readouterr()
        texts += [captured.out, captured.err]
    else:
        assert TESSERA_BIN, "TESSERA_BIN names the tessera command"
        local = tmp_path / "local.zarr"
        array = zarr.create_array(store=str(local), shape=data.shape, chunks=(10, 10),
                                  dtype=data.dtype)
        array[...] = data
        completed = subprocess.run(
            [TESSERA_BIN, "rechunk", str(local), url, "--chunks", "10,15", "--allowed-mem",
             "64MB"], capture_output=True, text=True, timeout=300,
            env={**os.environ, "TESSERA_PROGRESS": "0"})
        assert completed.returncode == 0, completed.stderr
        texts += [completed.stdout, completed.stderr]
    assert "ok.zarr/zarr.json" in s3_auth_server.list_keys(guarded)
    runs = runs_of(db)
    assert runs and all(status == "ok" for _, status in runs), runs
    assert_nowhere([s3_auth_server.secret_access_key], texts, db)
