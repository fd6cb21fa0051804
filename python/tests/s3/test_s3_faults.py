"""Tessera's S3 store through injected faults on chunk requests only (GET and PUT of Zarr
chunk keys, fault_proxy.CHUNK_KEY), past the store-open probe:

- one fault kind at a time at a rate of 0.25: every run's output equals its numpy source,
  every chunk is stored and read exactly once untouched, and each kind was injected;
- every chunk request failing (rate 1.0): a clear StorageError naming the bucket, the
  chunk's key, the status (or the connection) and the 8 attempts; a read returns no
  data, a write leaves no array documents;
- a write failing midway (the first N chunk PUTs go through): chunks and the
  .tessera-partial marker, no documents, so zarr-python sees no array; a rerun without
  overwrite replaces it (the command line), resume=True writes only the missing chunks,
  and a failed overwrite has removed the old array's documents and says where the new
  chunks are.

The failing runs take long (each chunk request is tried 8 times with backoff, each task
3 times): they run all at once, each in a process of its own against a proxy of its own
(tessera_run.py), from the module's `failed_runs` fixture; the tests assert on what each
left. Fault draws depend on (seed, method, target, occurrence) only, and the buckets'
names are fixed, so every count asserted here is the same on every run.
"""
import dataclasses
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import zarr

import tessera

from .conftest import REPO, ZarrS3, apply_env
from .tessera_run import values

from fault_proxy import CHUNK_KEY, FAULT_KINDS, FaultProxy  # noqa: E402

RUNNER = Path(__file__).with_name("tessera_run.py")
TESSERA_BIN = os.environ.get("TESSERA_BIN")
TESSERA_ERRORS = (tessera.Error, tessera.StorageError, tessera.FormatError)
DOCUMENTS = ("zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata")
MARKER = ".tessera-partial"
SHAPE, CHUNKS = (40, 40), (10, 10)  # 16 chunks
CHUNK_COUNT = 16
CHUNK_PATTERN = re.compile(CHUNK_KEY)


def names(keys, prefix):
    """The last parts of `keys` under `prefix` ("out.zarr/")."""
    return sorted(key[len(prefix):] for key in keys if key.startswith(prefix))


def chunk_keys(keys):
    return sorted(key for key in keys if CHUNK_PATTERN.search("/" + key))


def document_keys(keys):
    return sorted(key for key in keys if key.rsplit("/", 1)[-1] in DOCUMENTS)


def path_of(target):
    return target.split("?", 1)[0]


def zarr_python_writes(server, url, data, chunks=CHUNKS, zarr_format=3):
    array = zarr.create_array(store=ZarrS3(server).fsspec(url), shape=data.shape,
                              chunks=chunks, dtype=data.dtype, zarr_format=zarr_format)
    array[...] = data


def assert_no_array_reads(server, url, spec):
    """Neither zarr-python (s3fs, obstore) nor Tessera finds an array at `url`."""
    for route in ("s3fs", "obstore"):
        with pytest.raises(zarr.errors.ArrayNotFoundError):
            zarr.open_array(store=ZarrS3(server).store(route, url, read_only=True), mode="r")
    with pytest.raises(tessera.StorageError, match="no Zarr array at"):
        tessera.from_zarr(url, spec=spec)


def assert_reads_as(server, url, data):
    """zarr-python through s3fs and obstore, straight from the server, reads `data`."""
    for route in ("s3fs", "obstore"):
        array = zarr.open_array(store=ZarrS3(server).store(route, url, read_only=True),
                                mode="r")
        np.testing.assert_array_equal(array[...], data, err_msg=f"read through {route}")


# ---- one kind of fault at a time, at a rate of 0.25 ------------------------------------

@pytest.mark.timeout(300)
@pytest.mark.parametrize("zarr_format", [2, 3])
@pytest.mark.parametrize("kind", FAULT_KINDS)
def test_chunk_faults_of_one_kind_leave_the_values_exact(s3_server, fault_proxy, monkeypatch,
                                                        spec, rng, kind, zarr_format):
    """A quarter of the chunk GETs and PUTs get `kind`: the written array and the one read
    back equal the numpy source exactly; each chunk key was PUT and GOT exactly once
    untouched (or delayed): a retry follows a fault only, and every fault is retried."""
    bucket = s3_server.make_bucket(f"kind-v{zarr_format}-{kind.replace('_', '-')}")
    proxy = fault_proxy(seed=2024, rates={kind: 0.25}, delay_s=0.02, methods=["GET", "PUT"],
                        match=CHUNK_KEY)
    apply_env(monkeypatch, s3_server, endpoint=proxy.endpoint)
    data = rng.standard_normal((60, 60))
    url = f"s3://{bucket}/k.zarr"
    tessera.asarray(data, chunks=(10, 10), spec=spec).to_zarr(url, zarr_format=zarr_format)
    back = tessera.from_zarr(url, spec=spec).compute()
    np.testing.assert_array_equal(back, data)
    assert_reads_as(s3_server, url, data)

    keys = s3_server.list_keys(bucket)
    assert len(chunk_keys(keys)) == 36, keys
    assert document_keys(keys) == (["k.zarr/zarr.json"] if zarr_format == 3 else
                                   ["k.zarr/.zarray"]), keys
    assert f"k.zarr/{MARKER}" not in keys
    faulted = [d for d in proxy.history if d.kind is not None]
    assert all(d.kind == kind and d.method in ("GET", "PUT")
               and CHUNK_PATTERN.search(path_of(d.target)) for d in faulted)
    for method in ("PUT", "GET"):
        injected = sum(d.method == method for d in faulted)
        assert injected >= 3, (method, injected, proxy.stats())
        answered = {}  # chunk target: requests answered as the server did
        for d in proxy.history:
            if d.method == method and CHUNK_PATTERN.search(path_of(d.target)) \
                    and d.kind in (None, "delay"):
                answered[path_of(d.target)] = answered.get(path_of(d.target), 0) + 1
        assert len(answered) == 36 and set(answered.values()) == {1}, answered
    assert proxy.injected[kind] == len(faulted) >= 6


# ---- failing runs, all at once ------------------------------------------------------------

@dataclasses.dataclass
class Scenario:
    job: dict  # for tessera_run.py (its url names the bucket)
    proxy: dict  # FaultProxy options
    setup: object = None  # setup(server, bucket) before the run


@dataclasses.dataclass
class Outcome:
    bucket: str
    job: dict
    result: dict  # tessera_run.py's answer
    stderr: str
    proxy: FaultProxy


def dead(kind, methods, **extra):
    return dict(seed=5, rates={kind: 1.0}, methods=methods, match=CHUNK_KEY, **extra)


def write_source(server, bucket, name="src.zarr", zarr_format=3):
    zarr_python_writes(server, f"s3://{bucket}/{name}", values(SHAPE), zarr_format=zarr_format)


def write_old_array(server, bucket):
    zarr_python_writes(server, f"s3://{bucket}/over.zarr", values(SHAPE, offset=-1000.0))


def write_job(name, zarr_format=3, **extra):
    return dict(op="write", path=name, shape=SHAPE, chunks=CHUNKS, zarr_format=zarr_format,
                **extra)


WRITE_KINDS = {"slowdown": ("503", "SlowDown"), "error500": ("500", "InternalError"),
               "throttle": ("429", "SlowDown"), "reset": ("the connection failed",)}
READ_KINDS = dict(WRITE_KINDS, drop_mid=("the connection failed",))

SCENARIOS = {
    **{f"write-v3-{kind}": Scenario(write_job("dead.zarr"), dead(kind, ["PUT"]))
       for kind in WRITE_KINDS},
    "write-v2-slowdown": Scenario(write_job("dead.zarr", zarr_format=2),
                                  dead("slowdown", ["PUT"])),
    **{f"read-v3-{kind}": Scenario(dict(op="read", path="r.zarr"), dead(kind, ["GET"]),
                                   lambda server, bucket: write_source(server, bucket,
                                                                       "r.zarr"))
       for kind in READ_KINDS},
    "read-v2-error500": Scenario(dict(op="read", path="r.zarr"), dead("error500", ["GET"]),
                                 lambda server, bucket: write_source(server, bucket, "r.zarr",
                                                                     zarr_format=2)),
    # the first 5 chunk PUTs of the output go through, then every one fails
    "partial-rerun": Scenario(dict(op="copy", source="src.zarr", path="part.zarr"),
                              dead("slowdown", ["PUT"], pass_first=5), write_source),
    "partial-resume": Scenario(dict(op="copy", source="src.zarr", path="part.zarr"),
                               dead("slowdown", ["PUT"], pass_first=5), write_source),
    "failed-overwrite": Scenario(write_job("over.zarr", overwrite=True),
                                 dead("slowdown", ["PUT"], pass_first=3), write_old_array),
}


@pytest.fixture(scope="module")
def failed_runs(s3_server, tmp_path_factory):
    """{scenario: Outcome}: every scenario of SCENARIOS run at once, each in its own
    bucket ("fail-<scenario>"), process and proxy."""
    launched = {}
    try:
        for name, scenario in SCENARIOS.items():
            bucket = s3_server.make_bucket(f"fail-{name}")
            if scenario.setup is not None:
                scenario.setup(s3_server, bucket)
            job = dict(scenario.job, work_dir=str(tmp_path_factory.mktemp(name)))
            job["url"] = f"s3://{bucket}/{job.pop('path')}"
            if "source" in job:
                job["source"] = f"s3://{bucket}/{job['source']}"
            proxy = FaultProxy(s3_server.endpoint, **scenario.proxy).start()
            env = s3_server.merged_env(endpoint=proxy.endpoint, TESSERA_HISTORY="off",
                                       TESSERA_PROGRESS="0")
            process = subprocess.Popen([sys.executable, str(RUNNER), json.dumps(job)],
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                       text=True, env=env, cwd=REPO)
            launched[name] = (bucket, job, proxy, process)
        outcomes = {}
        for name, (bucket, job, proxy, process) in launched.items():
            stdout, stderr = process.communicate(timeout=240)
            lines = stdout.strip().splitlines()
            assert process.returncode == 0 and lines, (name, stdout, stderr)
            outcomes[name] = Outcome(bucket, job, json.loads(lines[-1]), stderr, proxy)
        yield outcomes
    finally:
        for bucket, job, proxy, process in launched.values():
            if process.poll() is None:
                process.kill()
                process.wait()
            proxy.close()


def assert_failed_clearly(outcome, kind, key_pattern, statuses):
    """A StorageError (an OSError) naming the bucket, a chunk key matching `key_pattern`,
    one of `statuses` and the 8 attempts, after `kind` was injected 8 times at least."""
    result = outcome.result
    assert not result["ok"], result
    assert result["storage_error"] and result["os_error"] and result["tessera"], result
    message = result["message"]
    assert re.search(rf"s3://{re.escape(outcome.bucket)}/{key_pattern}", message), message
    assert "failed after 8 attempts" in message, message
    assert any(status in message for status in statuses), message
    assert outcome.proxy.injected[kind] >= 8, outcome.proxy.stats()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("zarr_format,kind", [(3, kind) for kind in WRITE_KINDS]
                         + [(2, "slowdown")])
def test_chunk_writes_that_always_fail_fail_clearly(failed_runs, s3_server, zarr_format,
                                                   kind):
    """Every chunk PUT answered `kind`: the error names the chunk (bucket, key, status or
    connection, 8 attempts) and where the run's chunks are kept and how to continue; no
    chunk got through and no document was written: no reader sees an array."""
    outcome = failed_runs[f"write-v{zarr_format}-{kind}"]
    key = r"dead\.zarr/c/\d+/\d+" if zarr_format == 3 else r"dead\.zarr/\d+\.\d+"
    assert_failed_clearly(outcome, kind, key, WRITE_KINDS[kind])
    message = outcome.result["message"]
    assert f"kept in s3://{outcome.bucket}/dead.zarr" in message, message
    assert "resume=True in Python" in message, message
    keys = s3_server.list_keys(outcome.bucket)
    assert keys == [f"dead.zarr/{MARKER}"], keys
    assert all(d.kind == kind for d in outcome.proxy.history
               if d.method == "PUT" and CHUNK_PATTERN.search(path_of(d.target)))


@pytest.mark.timeout(300)
@pytest.mark.parametrize("zarr_format,kind", [(3, kind) for kind in READ_KINDS]
                         + [(2, "error500")])
def test_chunk_reads_that_always_fail_fail_clearly(failed_runs, s3_server, zarr_format, kind):
    """Every chunk GET answered `kind` (drop_mid: the answer cut inside its body): the read
    raises, naming the chunk, and returns no data; the array is untouched."""
    outcome = failed_runs[f"read-v{zarr_format}-{kind}"]
    key = r"r\.zarr/c/\d+/\d+" if zarr_format == 3 else r"r\.zarr/\d+\.\d+"
    assert_failed_clearly(outcome, kind, key, READ_KINDS[kind])
    assert "returned" not in outcome.result
    gets = [d for d in outcome.proxy.history
            if d.method == "GET" and CHUNK_PATTERN.search(path_of(d.target))]
    assert gets and all(d.kind == kind for d in gets)
    assert not any(d.method in ("PUT", "DELETE", "POST") for d in outcome.proxy.history)
    assert_reads_as(s3_server, f"s3://{outcome.bucket}/r.zarr", values(SHAPE))


def assert_partial(server, bucket, name, written):
    """What a write failing midway leaves at `name`: exactly `written` chunks, the marker,
    no document."""
    keys = server.list_keys(bucket, f"{name}/")
    assert document_keys(keys) == [], keys
    assert f"{name}/{MARKER}" in keys, keys
    assert len(chunk_keys(keys)) == written, keys
    assert set(keys) == set(chunk_keys(keys)) | {f"{name}/{MARKER}"}, keys
    return chunk_keys(keys)


@pytest.mark.timeout(300)
def test_a_write_failing_midway_reads_as_no_array_and_a_rerun_replaces_it(failed_runs,
                                                                         s3_server, s3_env,
                                                                         spec):
    """5 chunk PUTs went through, then every one failed: 5 chunks and the marker, no
    documents; neither zarr-python (s3fs, obstore) nor Tessera sees an array. `tessera
    rechunk` into it again, without --overwrite, replaces the leftover: the whole array,
    no marker."""
    outcome = failed_runs["partial-rerun"]
    bucket = outcome.bucket
    url = f"s3://{bucket}/part.zarr"
    assert not outcome.result["ok"] and outcome.result["storage_error"], outcome.result
    assert f"kept in {url}" in outcome.result["message"], outcome.result["message"]
    assert_partial(s3_server, bucket, "part.zarr", 5)
    assert outcome.proxy.passed == 5
    assert_no_array_reads(s3_server, url, spec)

    assert TESSERA_BIN, "TESSERA_BIN names the tessera command"
    rerun = subprocess.run(
        [TESSERA_BIN, "rechunk", f"s3://{bucket}/src.zarr", url, "--chunks", "10,10",
         "--allowed-mem", "64MB"], capture_output=True, text=True, timeout=300,
        env=s3_server.merged_env(TESSERA_HISTORY="off", TESSERA_PROGRESS="0"))
    assert rerun.returncode == 0, rerun.stderr + rerun.stdout
    keys = s3_server.list_keys(bucket, "part.zarr/")
    assert f"part.zarr/{MARKER}" not in keys and "part.zarr/zarr.json" in keys, keys
    assert len(chunk_keys(keys)) == CHUNK_COUNT
    assert_reads_as(s3_server, url, values(SHAPE))


@pytest.mark.timeout(300)
def test_resume_writes_only_the_missing_chunks(failed_runs, s3_server, fault_proxy,
                                               monkeypatch):
    """After a write failing midway (5 of 16 chunks written), resume=True with other
    target metadata is refused and touches nothing; with the same work it PUTs exactly the
    11 missing chunks (counted by a proxy) and the array equals the source."""
    outcome = failed_runs["partial-resume"]
    bucket = outcome.bucket
    url = f"s3://{bucket}/part.zarr"
    written = assert_partial(s3_server, bucket, "part.zarr", 5)
    counter = fault_proxy(seed=0)  # no faults: it counts
    apply_env(monkeypatch, s3_server, endpoint=counter.endpoint)
    spec = tessera.Spec(work_dir=outcome.job["work_dir"], allowed_mem="100MB", max_workers=2)
    source = tessera.from_zarr(outcome.job["source"], spec=spec)

    with pytest.raises(tessera.InvalidArgument, match="cannot resume into"):
        source.to_zarr(url, resume=True, compressor="zstd:3")  # other metadata
    assert not any(d.method in ("PUT", "DELETE") for d in counter.history), counter.history
    assert assert_partial(s3_server, bucket, "part.zarr", 5) == written

    counter.reset_counters()
    source.to_zarr(url, resume=True)
    chunk_puts = sorted(path_of(target) for target in counter.targets("PUT", CHUNK_KEY))
    every_chunk = sorted(f"/{bucket}/part.zarr/c/{i}/{j}" for i in range(4) for j in range(4))
    assert chunk_puts == sorted(set(every_chunk) - {f"/{bucket}/{key}" for key in written})
    assert len(chunk_puts) == CHUNK_COUNT - 5
    assert not any(d.method == "DELETE" and CHUNK_PATTERN.search(path_of(d.target))
                   for d in counter.history)
    keys = s3_server.list_keys(bucket, "part.zarr/")
    assert f"part.zarr/{MARKER}" not in keys and "part.zarr/zarr.json" in keys
    assert_reads_as(s3_server, url, values(SHAPE))


@pytest.mark.timeout(300)
def test_a_failed_overwrite_leaves_no_array_and_says_where_the_chunks_are(failed_runs,
                                                                         s3_server, s3_env,
                                                                         spec):
    """Overwriting a complete array, failing after 3 new chunk PUTs: the old array's
    documents and chunks are gone (in that order, after the marker was PUT, before any new
    chunk), 3 new chunks and the marker remain, no array reads there, and the error says
    where the chunks are kept."""
    outcome = failed_runs["failed-overwrite"]
    bucket = outcome.bucket
    url = f"s3://{bucket}/over.zarr"
    message = outcome.result["message"]
    assert not outcome.result["ok"] and outcome.result["storage_error"], outcome.result
    assert f"kept in {url}" in message and "resume" in message, message
    assert_partial(s3_server, bucket, "over.zarr", 3)
    assert_no_array_reads(s3_server, url, spec)

    history = [(d.method, path_of(d.target).removeprefix(f"/{bucket}/over.zarr/"))
               for d in outcome.proxy.history if d.method in ("PUT", "DELETE")]
    marker = history.index(("PUT", MARKER))
    document_deletes = [i for i, (method, key) in enumerate(history)
                        if method == "DELETE" and key in ("zarr.json", ".zattrs", ".zarray")]
    chunk_deletes = [i for i, (method, key) in enumerate(history)
                     if method == "DELETE" and key.startswith("c/")]
    chunk_puts = [i for i, (method, key) in enumerate(history)
                  if method == "PUT" and key.startswith("c/")]
    assert ("DELETE", "zarr.json") in history, history
    assert len(chunk_deletes) == CHUNK_COUNT, history  # the old array's
    assert marker < min(document_deletes), history
    assert max(document_deletes) < min(chunk_deletes), history
    assert max(chunk_deletes) < min(chunk_puts), history
    assert not any(method == "PUT" and key in DOCUMENTS for method, key in history), history
