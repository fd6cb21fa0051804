"""Tessera's s3:// stores against moto's S3-compatible server: Tessera writes and
zarr-python 3 reads (through s3fs and through obstore), zarr-python writes and Tessera
reads and computes, rechunks from S3 to S3 (with the intermediate in the object tier too),
round trips through a proxy injecting S3's and the network's faults, and refused
credentials.

Tessera's engine reads the endpoint and credentials from this process's environment
(AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION), which the
fixtures point at the server (or at a fault proxy in front of it) for each test; they
assume the engine reads them when a store is opened, not once per process.
"""
import os
import re

import numpy as np
import pytest
import zarr

import tessera

from .conftest import ZarrS3, apply_env

# What Tessera raises for a store that fails: StorageError (an OSError) for I/O, Error
# (a RuntimeError) for the rest; FormatError for metadata it cannot read.
TESSERA_ERRORS = (tessera.Error, tessera.StorageError, tessera.FormatError)

METADATA_NAMES = ("zarr.json", ".zarray", ".zattrs", ".zgroup", ".zmetadata")

# The moderate rates of a bad day: with Tessera's retries every request gets through.
MODERATE_FAULTS = {"slowdown": 0.05, "error500": 0.03, "throttle": 0.02, "delay": 0.05,
                   "drop_before": 0.02, "drop_mid": 0.02, "reset": 0.01,
                   "drop_after_forward": 0.01}
ERROR_KINDS = ("slowdown", "error500", "throttle", "drop_before", "drop_mid", "reset",
               "drop_after_forward")


def metadata_keys(keys):
    return [key for key in keys if key.rsplit("/", 1)[-1] in METADATA_NAMES]


def chunk_keys(keys):
    return [key for key in keys if key.rsplit("/", 1)[-1] not in METADATA_NAMES]


def zarr_python_writes(store, data, chunks, zarr_format=3, shards=None):
    array = zarr.create_array(store=store, shape=data.shape, chunks=chunks, shards=shards,
                              dtype=data.dtype, zarr_format=zarr_format)
    array[...] = data
    return array


def assert_failure_names_the_object(error, bucket, key_part, statuses=()):
    """A Tessera error whose message names the bucket and the key (or its prefix), and one
    of `statuses` (e.g. "503") when given."""
    assert isinstance(error, TESSERA_ERRORS), f"not a Tessera error: {type(error)}: {error}"
    message = str(error)
    assert bucket in message, message
    assert key_part in message, message
    if statuses:
        assert any(status in message for status in statuses), message


# ---- (a) Tessera writes, zarr-python reads --------------------------------------------------

LAYOUTS = {
    "v3": {},
    "v2": {"zarr_format": 2},
    "v3-sharded": {"shards": (64, 80)},
    "v3-zstd-crc32c": {"compressor": "zstd:3", "checksum": True},
    "v3-uncompressed": {"compressor": None},
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "int16"])
def test_tessera_writes_zarr_python_reads(s3_server, s3_env, s3_bucket, zarr_s3, spec, rng,
                                          layout, dtype):
    data = (rng.standard_normal((120, 90)) * 1000).astype(dtype)  # edge chunks on both axes
    url = f"s3://{s3_bucket}/t.zarr"
    tessera.asarray(data, chunks=(32, 40), spec=spec).to_zarr(url, **LAYOUTS[layout])

    for route in ("s3fs", "obstore"):
        array = zarr.open_array(store=zarr_s3.store(route, url, read_only=True), mode="r")
        assert array.metadata.zarr_format == (2 if layout == "v2" else 3)
        assert array.shape == data.shape and array.dtype == data.dtype
        assert array.chunks == (32, 40)
        if layout == "v3-sharded":
            assert array.shards == (64, 80)
        np.testing.assert_array_equal(array[...], data, err_msg=f"read through {route}")

    keys = s3_server.list_keys(s3_bucket)
    # Everything in the bucket is the array's own: no staging objects are left behind.
    assert all(key.startswith("t.zarr/") for key in keys), keys
    metadata = "t.zarr/.zarray" if layout == "v2" else "t.zarr/zarr.json"
    assert metadata in keys
    grid = (2, 2) if layout == "v3-sharded" else (4, 3)  # shards, or chunks
    assert len(chunk_keys(keys)) == grid[0] * grid[1], keys


def test_tessera_round_trips_through_s3(s3_env, s3_bucket, spec, rng):
    data = rng.standard_normal((50, 60, 7))
    url = f"s3://{s3_bucket}/nested/level_2/x=1/r.zarr"  # a deep prefix with '=' in it
    tessera.asarray(data, chunks=(20, 25, 7), spec=spec).to_zarr(url)
    back = tessera.from_zarr(url, spec=spec)
    assert back.shape == data.shape and back.chunks == ((20, 20, 10), (25, 25, 10), (7,))
    np.testing.assert_array_equal(back.compute(), data)


def test_overwrite_leaves_only_the_new_arrays_objects(s3_server, s3_env, s3_bucket, spec):
    """An array of 1200 chunks (more keys than one listing page) replaced by one of 12: no
    stale chunk of the first remains."""
    url = f"s3://{s3_bucket}/o.zarr"
    tessera.asarray(np.arange(1200.0), chunks=(1,), spec=spec).to_zarr(url)
    assert len(chunk_keys(s3_server.list_keys(s3_bucket, "o.zarr/"))) == 1200
    tessera.asarray(-np.arange(1200.0), chunks=(100,), spec=spec).to_zarr(url, overwrite=True)
    assert sorted(chunk_keys(s3_server.list_keys(s3_bucket, "o.zarr/"))) == sorted(
        f"o.zarr/c/{i}" for i in range(12))
    np.testing.assert_array_equal(tessera.from_zarr(url, spec=spec).compute(),
                                  -np.arange(1200.0))


def test_reading_a_missing_array_names_it(s3_env, s3_bucket, spec):
    with pytest.raises(TESSERA_ERRORS) as caught:
        tessera.from_zarr(f"s3://{s3_bucket}/missing.zarr", spec=spec).compute()
    assert_failure_names_the_object(caught.value, s3_bucket, "missing.zarr")


# ---- (b) zarr-python writes, Tessera reads and computes ---------------------------------------

@pytest.mark.parametrize("route", ["s3fs", "obstore"])
@pytest.mark.parametrize("layout", ["v2", "v3", "v3-sharded"])
def test_zarr_python_writes_tessera_computes(s3_env, s3_bucket, zarr_s3, spec, rng, route,
                                            layout):
    data = rng.standard_normal((200, 150))
    url = f"s3://{s3_bucket}/z.zarr"
    zarr_python_writes(zarr_s3.store(route, url), data, chunks=(50, 40),
                       zarr_format=2 if layout == "v2" else 3,
                       shards=(100, 80) if layout == "v3-sharded" else None)

    a = tessera.from_zarr(url, spec=spec)
    assert a.shape == data.shape and a.dtype == data.dtype
    assert a.chunksize == (50, 40)  # a sharded array's chunks are its inner chunks
    np.testing.assert_allclose(tessera.sum(a + 1, axis=0).compute(), (data + 1).sum(axis=0),
                               rtol=1e-12)
    np.testing.assert_array_equal(a[37:161, 5:149:3].compute(), data[37:161, 5:149:3])


def test_tessera_computes_from_s3_into_s3(s3_env, s3_bucket, zarr_s3, spec, rng):
    t2 = (rng.random((4, 60, 70)) * 80 + 230).astype("float32")
    rh = (rng.random((4, 60, 70)) * 99 + 1).astype("float32")
    zarr_python_writes(zarr_s3.fsspec(f"s3://{s3_bucket}/t2.zarr"), t2, chunks=(1, 60, 70))
    zarr_python_writes(zarr_s3.obstore(f"s3://{s3_bucket}/rh.zarr"), rh, chunks=(1, 60, 70))
    a = tessera.from_zarr(f"s3://{s3_bucket}/t2.zarr", spec=spec)
    b = tessera.from_zarr(f"s3://{s3_bucket}/rh.zarr", spec=spec)
    (a * b / 100 - 1).to_zarr(f"s3://{s3_bucket}/out.zarr")
    out = zarr.open_array(store=zarr_s3.obstore(f"s3://{s3_bucket}/out.zarr", read_only=True),
                          mode="r")
    np.testing.assert_allclose(out[...], t2 * rh / np.float32(100) - 1, rtol=1e-6)


# ---- (c) rechunk, S3 to S3 ---------------------------------------------------------------------

@pytest.mark.parametrize("source_format", [2, 3])
def test_rechunk_s3_to_s3(s3_server, s3_env, s3_bucket, zarr_s3, spec, rng, source_format):
    data = rng.standard_normal((300, 240))
    source = f"s3://{s3_bucket}/source.zarr"
    target = f"s3://{s3_bucket}/target.zarr"
    zarr_python_writes(zarr_s3.fsspec(source), data, chunks=(300, 10),
                       zarr_format=source_format)
    tessera.from_zarr(source, spec=spec).rechunk((10, 240)).to_zarr(target)

    for route in ("s3fs", "obstore"):
        array = zarr.open_array(store=zarr_s3.store(route, target, read_only=True), mode="r")
        assert array.chunks == (10, 240)
        assert array.metadata.zarr_format == source_format  # the source's format is kept
        np.testing.assert_array_equal(array[...], data)
    assert all(key.startswith(("source.zarr/", "target.zarr/"))
               for key in s3_server.list_keys(s3_bucket))


# ---- (d) through injected faults ----------------------------------------------------------------

@pytest.mark.timeout(600)
def test_round_trip_through_moderate_faults_succeeds(s3_server, s3_bucket, fault_proxy,
                                                     monkeypatch, zarr_s3, spec, rng):
    proxy = fault_proxy(seed=1234, rates=MODERATE_FAULTS, delay_s=0.05)
    apply_env(monkeypatch, s3_server, endpoint=proxy.endpoint)
    data = rng.standard_normal((240, 200))
    url = f"s3://{s3_bucket}/f.zarr"
    try:
        tessera.asarray(data, chunks=(20, 40), spec=spec).to_zarr(url)  # 60 chunks
        back = tessera.from_zarr(url, spec=spec)
        values = back.compute()
        sums = tessera.sum(back * 2, axis=1).compute()
    except TESSERA_ERRORS as error:
        # What a failure may look like (the error names the object, and no array with
        # metadata was left) -- but at these rates the retries must get through.
        assert_failure_names_the_object(error, s3_bucket, "f.zarr")
        keys = s3_server.list_keys(s3_bucket, "f.zarr/")
        assert metadata_keys(keys) == [], keys
        pytest.fail(f"retries did not get through {dict(proxy.injected)} injected faults "
                    f"in {proxy.requests} requests: {error}")
    np.testing.assert_array_equal(values, data)
    np.testing.assert_allclose(sums, (data * 2).sum(axis=1), rtol=1e-12)
    # Written right, as zarr-python sees it straight from the server.
    written = zarr.open_array(store=zarr_s3.obstore(url, read_only=True), mode="r")
    np.testing.assert_array_equal(written[...], data)
    assert all(key.startswith("f.zarr/") for key in s3_server.list_keys(s3_bucket))
    injected = {kind: count for kind, count in proxy.injected.items() if count}
    assert sum(injected.get(kind, 0) for kind in ERROR_KINDS) > 0, injected
    assert proxy.requests > 120  # 60 chunk writes and 60 chunk reads at least


@pytest.mark.timeout(600)
@pytest.mark.parametrize("kind,statuses", [
    ("slowdown", ("503", "SlowDown")),
    ("error500", ("500", "InternalError")),
    ("throttle", ("429",)),
    ("reset", ()),
])
def test_write_through_a_dead_store_fails_clearly(s3_server, s3_bucket, fault_proxy,
                                                  monkeypatch, spec, rng, kind, statuses):
    proxy = fault_proxy(seed=1, rates={kind: 1.0})
    apply_env(monkeypatch, s3_server, endpoint=proxy.endpoint)
    url = f"s3://{s3_bucket}/dead.zarr"
    with pytest.raises(TESSERA_ERRORS) as caught:
        tessera.asarray(rng.standard_normal((40, 40)), chunks=(10, 10), spec=spec).to_zarr(url)
    assert_failure_names_the_object(caught.value, s3_bucket, "dead.zarr", statuses)
    assert proxy.injected[kind] > 1  # it retried before giving up
    assert s3_server.list_keys(s3_bucket) == []  # nothing got through, metadata least of all


@pytest.mark.timeout(600)
def test_read_through_a_dead_store_fails_clearly(s3_server, s3_bucket, fault_proxy,
                                                 monkeypatch, zarr_s3, spec, rng):
    url = f"s3://{s3_bucket}/r.zarr"
    zarr_python_writes(zarr_s3.fsspec(url), rng.standard_normal((40, 40)), chunks=(10, 10))
    proxy = fault_proxy(seed=1, rates={"slowdown": 1.0})
    apply_env(monkeypatch, s3_server, endpoint=proxy.endpoint)
    with pytest.raises(TESSERA_ERRORS) as caught:
        tessera.from_zarr(url, spec=spec).compute()
    assert_failure_names_the_object(caught.value, s3_bucket, "r.zarr", ("503", "SlowDown"))


# Chunk requests failing past the store-open probe (every one, or after the first N), and
# what such a run leaves: test_s3_faults.py.


# ---- (e) a rechunk whose intermediate goes to the object tier -----------------------------------

# WORK_DIR/tessera-<pid>-<start>-<n>-<8 hex>/intermediate-<k>/KEY
WORK_KEY = re.compile(r"^work/tessera-(\d+)-\d+-\d+-[0-9a-f]{8}/intermediate-\d+/(.+)$")


def object_tier_setup(s3_server, s3_bucket, fault_proxy, monkeypatch, zarr_s3, rng):
    """A counting proxy in front of the server (this process's environment points at it),
    a source of (1000, 1000) float64 in chunks (1000, 10) written by zarr-python, and a
    Spec whose RAM (total_mem 8MB) and local disk (0) hold no intermediate of a rechunk
    of it, with work_dir on the server."""
    proxy = fault_proxy(seed=0)  # no faults: it counts what reaches the server
    apply_env(monkeypatch, s3_server, endpoint=proxy.endpoint)
    data = rng.standard_normal((1000, 1000))  # 8 MB: more than total_mem holds
    source = f"s3://{s3_bucket}/source.zarr"
    zarr_python_writes(zarr_s3.fsspec(source), data, chunks=(1000, 10))
    spec = tessera.Spec(work_dir=f"s3://{s3_bucket}/work", total_mem="8MB",
                        allowed_mem="2MB", local_disk="0", max_workers=2)
    return proxy, data, source, spec


def work_requests(proxy, bucket, method):
    """The keys under work/ of the requests of `method` the proxy saw."""
    keys = []
    for decision in proxy.history:
        path = decision.target.split("?", 1)[0]
        if decision.method == method and path.startswith(f"/{bucket}/work/"):
            keys.append(path.removeprefix(f"/{bucket}/"))
    return keys


def listing_kernel(s3_server, bucket, listings, fail_at=None):
    """A map_blocks kernel copying its block that, at block (0, 0), lists the bucket's
    work/ prefix straight from the server (what is there mid-run), and raises at block
    `fail_at`."""
    def kernel(block, block_id=None):
        if block_id == (0, 0):
            listings.append(s3_server.list_keys(bucket, "work/"))
        if block_id == fail_at:
            raise RuntimeError("the kernel fails on purpose")
        return block.copy()
    return kernel


def test_rechunk_intermediate_in_the_object_tier(s3_server, s3_bucket, fault_proxy,
                                                 monkeypatch, zarr_s3, rng):
    """The plan puts the rechunk's intermediates in the object store tier; the run really
    writes them under work/tessera-<pid>-...-<8 hex>/intermediate-<k>/ with the marker
    .tessera-intermediate (listed mid-run from inside a kernel), reads them back, deletes
    every object it wrote there, and leaves only the source's and the target's keys."""
    proxy, data, source, spec = object_tier_setup(s3_server, s3_bucket, fault_proxy,
                                                  monkeypatch, zarr_s3, rng)
    target = f"s3://{s3_bucket}/target.zarr"
    rechunked = tessera.from_zarr(source, spec=spec).rechunk((10, 1000))
    plan = tessera.plan(rechunked)
    intermediates = [op for op in plan.ops if op.tier not in ("result", "target", "none")]
    assert intermediates, plan.summary()
    # OpInfo.tier names the object store tier: not in RAM, not on disk
    assert [(op.kind, op.tier) for op in intermediates] == [("rechunk", "object store")], \
        plan.summary()
    described = plan.summary() + "\n" + plan.explain()
    assert "in the object store" in described, described

    listings = []
    pipeline = tessera.map_blocks(listing_kernel(s3_server, s3_bucket, listings), rechunked,
                                  dtype=rechunked.dtype)
    # before a kernel, both stages of the rechunk are intermediates in the object store
    assert [op.tier for op in tessera.plan(pipeline).ops if op.kind == "rechunk"] == [
        "object store"] * 2
    proxy.reset_counters()
    pipeline.to_zarr(target)

    puts = work_requests(proxy, s3_bucket, "PUT")
    assert len(puts) > 100, puts[:10]  # 100 chunks of each stage's intermediate at least
    prefixes = set()
    for key in puts:
        matched = WORK_KEY.match(key)
        assert matched, key
        assert int(matched.group(1)) == os.getpid(), key
        prefixes.add(key[:key.index("/", key.index("intermediate-"))])
    assert len(prefixes) >= 1
    for prefix in prefixes:
        assert f"{prefix}/.tessera-intermediate" in puts, (prefix, puts[:5])
    assert len(work_requests(proxy, s3_bucket, "GET")) >= 100  # read back
    assert set(work_requests(proxy, s3_bucket, "DELETE")) == set(puts)  # all of it removed
    # mid-run, an intermediate and its marker were on the server
    assert len(listings) == 1 and any(key.endswith("/.tessera-intermediate")
                                      for key in listings[0]), listings
    assert sum(WORK_KEY.match(key) is not None for key in listings[0]) > 100

    array = zarr.open_array(store=zarr_s3.obstore(target, read_only=True), mode="r")
    assert array.chunks == (10, 1000)
    np.testing.assert_array_equal(array[...], data)
    np.testing.assert_array_equal(tessera.from_zarr(target, spec=spec).compute(), data)
    assert s3_server.list_keys(s3_bucket, "work/") == []  # the intermediates are removed
    keys = s3_server.list_keys(s3_bucket)
    assert all(key.startswith(("source.zarr/", "target.zarr/")) for key in keys), [
        key for key in keys if not key.startswith(("source.zarr/", "target.zarr/"))]


def test_a_failed_run_leaves_nothing_under_the_work_prefix(s3_server, s3_bucket, fault_proxy,
                                                          monkeypatch, zarr_s3, rng):
    """A kernel after the rechunk raises at its last block, once the object-store
    intermediates were written and read: the run fails with the kernel's error, and
    every object written under work/ is deleted all the same; the target holds no
    document; the source is untouched."""
    proxy, data, source, spec = object_tier_setup(s3_server, s3_bucket, fault_proxy,
                                                  monkeypatch, zarr_s3, rng)
    listings = []
    rechunked = tessera.from_zarr(source, spec=spec).rechunk((10, 1000))
    pipeline = tessera.map_blocks(listing_kernel(s3_server, s3_bucket, listings,
                                                 fail_at=(99, 0)),
                                  rechunked, dtype=rechunked.dtype)
    proxy.reset_counters()
    with pytest.raises(RuntimeError, match="the kernel fails on purpose"):
        pipeline.to_zarr(f"s3://{s3_bucket}/failed.zarr")

    puts = work_requests(proxy, s3_bucket, "PUT")
    assert len(puts) > 100 and all(WORK_KEY.match(key) for key in puts), puts[:5]
    assert listings and sum(WORK_KEY.match(key) is not None for key in listings[0]) > 100
    assert set(work_requests(proxy, s3_bucket, "DELETE")) == set(puts)
    assert s3_server.list_keys(s3_bucket, "work/") == []
    assert metadata_keys(s3_server.list_keys(s3_bucket, "failed.zarr/")) == []
    assert {key.split("/", 1)[0] for key in s3_server.list_keys(s3_bucket)} <= {
        "source.zarr", "failed.zarr"}
    written = zarr.open_array(store=zarr_s3.obstore(source, read_only=True), mode="r")
    np.testing.assert_array_equal(written[...], data)


# ---- (f) refused credentials ---------------------------------------------------------------------

def test_tessera_signs_requests_a_checking_server_accepts(s3_auth_server, monkeypatch, spec,
                                                         rng):
    bucket = s3_auth_server.make_bucket("signed-requests")
    apply_env(monkeypatch, s3_auth_server)
    data = rng.standard_normal((30, 40))
    url = f"s3://{bucket}/signed.zarr"
    tessera.asarray(data, chunks=(10, 10), spec=spec).to_zarr(url)
    np.testing.assert_array_equal(tessera.from_zarr(url, spec=spec).compute(), data)
    assert "signed.zarr/zarr.json" in s3_auth_server.list_keys(bucket)


@pytest.mark.parametrize("wrong", ["secret", "key"])
def test_refused_credentials_raise_without_the_secret(s3_auth_server, monkeypatch, spec, rng,
                                                      wrong):
    bucket = s3_auth_server.make_bucket(f"guarded-wrong-{wrong}")
    url = f"s3://{bucket}/guarded.zarr"
    zarr_python_writes(ZarrS3(s3_auth_server).fsspec(url), rng.standard_normal((20, 20)),
                       chunks=(10, 10))
    apply_env(monkeypatch, s3_auth_server)
    wrong_secret = "wrongSecretValue/DoNotPrint+1234567890abcdefghij"
    if wrong == "secret":
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", wrong_secret)
    else:
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAUNKNOWNUNKNOWN00")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", wrong_secret)

    with pytest.raises(TESSERA_ERRORS) as caught:
        tessera.from_zarr(url, spec=spec).compute()
    message = str(caught.value)
    assert_failure_names_the_object(caught.value, bucket, "guarded.zarr")
    said = message.replace(url, "").replace(bucket, "").lower()  # what it says besides
    assert "403" in said or "denied" in said or "refused" in said or "forbidden" in said, \
        message
    for secret in (wrong_secret, s3_auth_server.secret_access_key):
        assert secret not in message
        assert secret not in repr(caught.value)
        assert all(secret not in str(arg) for arg in caught.value.args)
