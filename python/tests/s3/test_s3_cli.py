"""The `tessera` command on s3:// paths: info, rechunk (its plan naming the object store
tier when --work-dir is on the server and --local-disk 0) and calc, against moto; the
results read back by zarr-python through s3fs, and nothing left under the work prefix."""
import os
import subprocess

import boto3
import numpy as np
import pytest
import zarr

from .conftest import ZarrS3

TESSERA = os.environ.get("TESSERA_BIN")
pytestmark = pytest.mark.skipif(
    TESSERA is None and os.environ.get("TESSERA_TEST_S3_REQUIRED") != "1",
    reason="TESSERA_BIN names the tessera command (set by ctest)")


def run(*args, check=True):
    completed = subprocess.run([TESSERA, *args], capture_output=True, text=True, timeout=300,
                               env={**os.environ, "TESSERA_PROGRESS": "0",
                                    "TESSERA_HISTORY": "off"})
    if check:
        assert completed.returncode == 0, completed.stderr + completed.stdout
    return completed


def keys_under(bucket, prefix):
    listed = boto3.client("s3").list_objects_v2(Bucket=bucket, Prefix=prefix)
    return [item["Key"] for item in listed.get("Contents", [])]


@pytest.fixture
def source(s3_env, s3_bucket, s3_server):
    data = np.arange(600 * 400, dtype="f8").reshape(600, 400)
    url = f"s3://{s3_bucket}/in.zarr"
    array = zarr.create_array(ZarrS3(s3_server).fsspec(url), shape=data.shape,
                              chunks=(600, 8), dtype=data.dtype)
    array[:] = data
    return url, data


def test_info_names_the_array_on_the_server(source):
    url, _ = source
    out = run("info", url).stdout
    assert url in out and "(600, 400)" in out and "(600, 8)" in out


def test_rechunk_through_the_object_store_tier(source, s3_bucket, s3_server):
    url, data = source
    out_url = f"s3://{s3_bucket}/out.zarr"
    args = ["rechunk", url, out_url, "--chunks", "8,400", "--allowed-mem", "1MB",
            "--total-mem", "2MB", "--work-dir", f"s3://{s3_bucket}/work", "--local-disk", "0"]
    plan = run(*args, "--plan").stdout
    assert "object store" in plan, plan
    assert keys_under(s3_bucket, "out.zarr/") == []  # --plan writes nothing
    run(*args)
    back = zarr.open_array(ZarrS3(s3_server).fsspec(out_url, read_only=True), mode="r")
    assert back.chunks == (8, 400)
    np.testing.assert_array_equal(back[:], data)
    assert keys_under(s3_bucket, "work/") == []
    # An existing output is replaced only with --overwrite.
    refused = run(*args, check=False)
    assert refused.returncode != 0 and "already exists" in refused.stderr, refused.stderr


def test_calc_reads_and_writes_s3(source, s3_bucket, s3_server):
    url, data = source
    out_url = f"s3://{s3_bucket}/doubled.zarr"
    run("calc", "2 * a + 1", "--input", f"a={url}", "--output", out_url, "--allowed-mem", "64MB")
    back = zarr.open_array(ZarrS3(s3_server).fsspec(out_url, read_only=True), mode="r")
    np.testing.assert_array_equal(back[:], 2 * data + 1)


def test_a_missing_bucket_is_a_clear_error(s3_env):
    failed = run("info", "s3://tessera-no-such-bucket/x.zarr", check=False)
    assert failed.returncode != 0
    assert "tessera-no-such-bucket" in failed.stderr and "does not exist" in failed.stderr, \
        failed.stderr
