"""to_zarr into s3:// never destroys what it must not: a target that is, holds or lies
inside a source of the run, a Zarr group, objects that are not a Zarr array; and writing
s3://b/out.zarr touches nothing of s3://b/out.zarr2 or other keys that merely begin
alike. Each refusal is checked against the bucket itself: every object byte for byte
(boto3), the arrays read by zarr-python, and no request that writes (PUT, DELETE, POST)
counted by a proxy in front of the server.
"""
import os
import subprocess

import numpy as np
import pytest
import zarr

import tessera

from .conftest import ZarrS3, apply_env

TESSERA_BIN = os.environ.get("TESSERA_BIN")
WRITES = ("PUT", "DELETE", "POST")


def snapshot(server, bucket):
    """{key: (size, ETag, bytes)} of every object in the bucket."""
    s3 = server.client()
    objects = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for item in page.get("Contents", []):
            body = s3.get_object(Bucket=bucket, Key=item["Key"])["Body"].read()
            objects[item["Key"]] = (item["Size"], item["ETag"], body)
    return objects


def zarr_python_writes(server, url, data, chunks=(10, 10)):
    array = zarr.create_array(store=ZarrS3(server).fsspec(url), shape=data.shape,
                              chunks=chunks, dtype=data.dtype)
    array[...] = data


def zarr_python_reads(server, url):
    return zarr.open_array(store=ZarrS3(server).obstore(url, read_only=True), mode="r")[...]


def tessera_cli(server, endpoint, *args):
    assert TESSERA_BIN, "TESSERA_BIN names the tessera command"
    return subprocess.run([TESSERA_BIN, *args], capture_output=True, text=True, timeout=300,
                          env=server.merged_env(endpoint=endpoint, TESSERA_HISTORY="off",
                                                TESSERA_PROGRESS="0"))


def refused(server, proxy, how, source, target, spec):
    """Runs `source + 1` into `target` (overwriting allowed) from Python or the command
    line; the refusal's message."""
    if how == "python":
        with pytest.raises(tessera.InvalidArgument) as caught:
            (tessera.from_zarr(source, spec=spec) + 1).to_zarr(target, overwrite=True)
        return str(caught.value)
    completed = tessera_cli(server, proxy.endpoint, "calc", "a + 1", "--input", f"a={source}",
                            "--output", target, "--allowed-mem", "64MB", "--overwrite")
    assert completed.returncode != 0, completed.stdout
    return completed.stderr


@pytest.fixture
def counted(s3_server, fault_proxy, monkeypatch):
    """A proxy injecting nothing, counting requests; this process's environment points
    at it."""
    proxy = fault_proxy(seed=0)
    apply_env(monkeypatch, s3_server, endpoint=proxy.endpoint)
    return proxy


# (how, source, target): what the refusal says. The command line checks its --input and
# --output paths itself first; a group holding the source is refused as a group.
SHARING = {
    ("python", "a.zarr", "a.zarr"): "a source of this run",  # the source itself
    ("python", "a.zarr", "a.zarr/inner"): "a source of this run",  # inside it
    ("python", "g.zarr/x", "g.zarr"): "is a Zarr group",  # the group holding it
    ("cli", "a.zarr", "a.zarr"): "never rewrites its source",
    ("cli", "a.zarr", "a.zarr/inner"): "lies inside --input a",
    ("cli", "g.zarr/x", "g.zarr"): "writing --output would replace the source",
}


@pytest.mark.parametrize("how,source_path,target_path", sorted(SHARING))
def test_a_target_sharing_keys_with_a_source_is_refused(s3_server, s3_bucket, counted, spec,
                                                        rng, how, source_path, target_path):
    """The target is, lies inside or holds the source: refused before anything is
    written, whatever overwrite says; the source is intact byte for byte."""
    data = rng.standard_normal((30, 20))
    source = f"s3://{s3_bucket}/{source_path}"
    if "/" in source_path:
        zarr.open_group(store=ZarrS3(s3_server).fsspec(f"s3://{s3_bucket}/g.zarr"), mode="w")
    zarr_python_writes(s3_server, source, data)
    before = snapshot(s3_server, s3_bucket)
    counted.reset_counters()

    message = refused(s3_server, counted, how, source, f"s3://{s3_bucket}/{target_path}", spec)
    assert SHARING[how, source_path, target_path] in message, message
    assert f"s3://{s3_bucket}/{target_path}" in message, message
    assert [d for d in counted.history if d.method in WRITES] == []
    assert snapshot(s3_server, s3_bucket) == before
    np.testing.assert_array_equal(zarr_python_reads(s3_server, source), data)


@pytest.mark.parametrize("how", ["python", "cli"])
def test_a_zarr_group_is_never_replaced(s3_server, s3_bucket, counted, spec, rng, how):
    """A target that is a Zarr group (holding an array, not a source of the run) is
    refused, overwrite or not; the group and its array are intact."""
    data = rng.standard_normal((30, 20))
    zarr.open_group(store=ZarrS3(s3_server).fsspec(f"s3://{s3_bucket}/g.zarr"), mode="w",
                    attributes={"title": "keep me"})
    zarr_python_writes(s3_server, f"s3://{s3_bucket}/g.zarr/x", data)
    source = f"s3://{s3_bucket}/other.zarr"
    zarr_python_writes(s3_server, source, data * 2)
    before = snapshot(s3_server, s3_bucket)
    counted.reset_counters()

    message = refused(s3_server, counted, how, source, f"s3://{s3_bucket}/g.zarr", spec)
    assert "is a Zarr group" in message, message
    assert [d for d in counted.history if d.method in WRITES] == []
    assert snapshot(s3_server, s3_bucket) == before
    group = zarr.open_group(store=ZarrS3(s3_server).obstore(f"s3://{s3_bucket}/g.zarr",
                                                            read_only=True), mode="r")
    assert group.attrs["title"] == "keep me"
    np.testing.assert_array_equal(group["x"][...], data)


@pytest.mark.parametrize("how", ["python", "cli"])
def test_objects_that_are_not_zarr_are_never_replaced(s3_server, s3_bucket, counted, spec,
                                                      rng, how):
    """A prefix holding other objects (files someone keeps there) is refused, overwrite or
    not; they are intact."""
    s3 = s3_server.client()
    s3.put_object(Bucket=s3_bucket, Key="notes/readme.txt", Body=b"do not delete\n")
    s3.put_object(Bucket=s3_bucket, Key="notes/data/table.csv", Body=b"a,b\n1,2\n")
    source = f"s3://{s3_bucket}/src.zarr"
    zarr_python_writes(s3_server, source, rng.standard_normal((20, 20)))
    before = snapshot(s3_server, s3_bucket)
    counted.reset_counters()

    message = refused(s3_server, counted, how, source, f"s3://{s3_bucket}/notes", spec)
    assert "holds objects that are not a Zarr array" in message, message
    assert "readme.txt" in message, message
    assert [d for d in counted.history if d.method in WRITES] == []
    assert snapshot(s3_server, s3_bucket) == before


def test_writing_a_prefix_touches_no_key_that_merely_begins_alike(s3_server, s3_bucket,
                                                                  counted, spec, rng):
    """out.zarr written, then overwritten with another chunking (its old chunks deleted):
    out.zarr2/ (an array and a stray object), out.zarr.bak/ and the object out.zarrx are
    untouched byte for byte; no request wrote outside out.zarr/."""
    neighbour = rng.standard_normal((20, 20))
    zarr_python_writes(s3_server, f"s3://{s3_bucket}/out.zarr2", neighbour)
    s3 = s3_server.client()
    s3.put_object(Bucket=s3_bucket, Key="out.zarr2/stray.txt", Body=b"stray")
    s3.put_object(Bucket=s3_bucket, Key="out.zarr.bak/c/0/0", Body=b"backup")
    s3.put_object(Bucket=s3_bucket, Key="out.zarrx", Body=b"sibling")
    before = snapshot(s3_server, s3_bucket)
    url = f"s3://{s3_bucket}/out.zarr"

    first = rng.standard_normal((40, 30))
    second = rng.standard_normal((40, 30))
    tessera.asarray(first, chunks=(10, 10), spec=spec).to_zarr(url)
    np.testing.assert_array_equal(zarr_python_reads(s3_server, url), first)
    tessera.asarray(second, chunks=(20, 15), spec=spec).to_zarr(url, overwrite=True)
    np.testing.assert_array_equal(zarr_python_reads(s3_server, url), second)

    after = snapshot(s3_server, s3_bucket)
    assert {key: value for key, value in after.items()
            if not key.startswith("out.zarr/")} == before
    assert sorted(key for key in after if key.startswith("out.zarr/c/")) == sorted(
        f"out.zarr/c/{i}/{j}" for i in range(2) for j in range(2))
    writes = [d.target.split("?", 1)[0] for d in counted.history if d.method in WRITES]
    assert any(path.startswith(f"/{s3_bucket}/out.zarr/c/") for path in writes)
    assert all(path.startswith(f"/{s3_bucket}/out.zarr/") for path in writes), writes
    np.testing.assert_array_equal(zarr_python_reads(s3_server, f"s3://{s3_bucket}/out.zarr2"),
                                  neighbour)


@pytest.mark.parametrize("how", ["python", "cli"])
@pytest.mark.parametrize("work_path", ["out.zarr/scratch", "out.zarr", ""])
def test_a_work_dir_inside_or_above_the_target_is_refused(s3_server, s3_bucket, counted, rng,
                                                          how, work_path):
    """An object store work_dir that lies inside the target, is it, or holds it (the
    bucket) is refused before anything is written: its intermediates would be taken for
    foreign objects there. The target's array is intact; a work_dir beside it whose name
    merely begins alike (out.zarr2) is no overlap, and the run writes the array."""
    old = rng.standard_normal((20, 20))
    target = f"s3://{s3_bucket}/out.zarr"
    zarr_python_writes(s3_server, target, old)
    source = f"s3://{s3_bucket}/src.zarr"
    data = rng.standard_normal((20, 20))
    zarr_python_writes(s3_server, source, data)
    before = snapshot(s3_server, s3_bucket)
    counted.reset_counters()

    work_dir = f"s3://{s3_bucket}/{work_path}"
    if how == "python":
        with pytest.raises(tessera.InvalidArgument) as caught:
            spec = tessera.Spec(work_dir=work_dir, allowed_mem="100MB", max_workers=2)
            (tessera.from_zarr(source, spec=spec) + 1).to_zarr(target, overwrite=True)
        message = str(caught.value)
    else:
        completed = tessera_cli(s3_server, counted.endpoint, "calc", "a + 1", "--input",
                                f"a={source}", "--output", target, "--allowed-mem", "64MB",
                                "--work-dir", work_dir, "--overwrite")
        assert completed.returncode != 0, completed.stdout
        message = completed.stderr
    assert f"work_dir {work_dir}" in message and "overlap" in message, message
    assert [d for d in counted.history if d.method in WRITES] == []
    assert snapshot(s3_server, s3_bucket) == before

    beside = tessera.Spec(work_dir=f"s3://{s3_bucket}/out.zarr2", allowed_mem="100MB",
                          max_workers=2)
    (tessera.from_zarr(source, spec=beside) + 1).to_zarr(target, overwrite=True)
    np.testing.assert_array_equal(zarr_python_reads(s3_server, target), data + 1)
