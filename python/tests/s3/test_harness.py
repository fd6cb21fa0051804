"""The S3 test harness itself, without Tessera: moto's server (tests/s3/s3_server.py) read
and written by boto3 and by zarr-python 3 through s3fs and obstore, the fault proxy
(tests/s3/fault_proxy.py) seen by boto3, and moto's credential checks."""
import concurrent.futures
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import botocore.exceptions
import numpy as np
import pytest
import zarr

from .conftest import REPO, ZarrS3, bucket_name

import s3_server as s3_server_module  # noqa: E402
from fault_proxy import (CHUNK_KEY, ERROR_RESPONSES, FAULT_KINDS, FaultProxy, draw,  # noqa: E402
                         kind_of)
from s3_server import S3Server  # noqa: E402

SERVER_SCRIPT = REPO / "tests" / "s3" / "s3_server.py"
NO_RETRIES = {"retries": {"total_max_attempts": 1}}


def error_of(call):
    """(S3 error code, HTTP status) of a boto3 call that fails, None when it succeeds; a
    connection failure is ("connection", None)."""
    try:
        call()
    except botocore.exceptions.ClientError as error:
        return error.response["Error"]["Code"], error.response["ResponseMetadata"]["HTTPStatusCode"]
    except (botocore.exceptions.ConnectionError, botocore.exceptions.HTTPClientError,
            botocore.exceptions.ResponseStreamingError):
        return "connection", None
    return None


# ---- the server --------------------------------------------------------------------------

def test_server_env_points_at_the_server(s3_server, s3_bucket):
    env = s3_server.env()
    assert env["AWS_ENDPOINT_URL"] == s3_server.endpoint
    assert s3_server.endpoint.startswith("http://127.0.0.1:")
    assert env["AWS_ACCESS_KEY_ID"] == env["AWS_SECRET_ACCESS_KEY"] == "testing"
    assert env["AWS_REGION"] == env["AWS_DEFAULT_REGION"] == "us-east-1"
    assert not os.path.exists(env["AWS_SHARED_CREDENTIALS_FILE"])
    assert not os.path.exists(env["AWS_CONFIG_FILE"])
    s3 = s3_server.client()
    assert s3_bucket in [bucket["Name"] for bucket in s3.list_buckets()["Buckets"]]
    s3.put_object(Bucket=s3_bucket, Key="a/b", Body=b"payload")
    assert s3.get_object(Bucket=s3_bucket, Key="a/b")["Body"].read() == b"payload"
    assert s3_server.list_keys(s3_bucket) == ["a/b"]


def test_s3_env_reaches_a_plain_boto3_client(s3_server, s3_bucket, s3_env, monkeypatch):
    import boto3
    monkeypatch.setenv("AWS_PROFILE", "no-such-profile")  # s3_env removed it; this one
    monkeypatch.delenv("AWS_PROFILE")                      # test's own setting goes too
    s3 = boto3.session.Session().client("s3")  # endpoint, keys and region from os.environ
    s3.put_object(Bucket=s3_bucket, Key="k", Body=b"1")
    assert s3_server.list_keys(s3_bucket) == ["k"]


def test_buckets_are_fresh_per_test(s3_server, s3_bucket):
    assert s3_server.list_keys(s3_bucket) == []
    assert bucket_name("test_x[obstore-v3]") != bucket_name("test_x[obstore-v3]")
    assert 3 <= len(bucket_name("x" * 100)) <= 63


def test_server_stops_and_frees_its_port():
    with S3Server() as server:
        process = server.process
        endpoint = server.endpoint
        log = server.log_path
        assert os.path.exists(log)
    assert process.poll() is not None
    assert not os.path.exists(log)
    with pytest.raises(Exception):
        S3Server.client(server, endpoint=endpoint, **NO_RETRIES).list_buckets()


def test_server_that_cannot_start_says_why():
    server = S3Server(python="/bin/false", startup_timeout=20)
    with pytest.raises(RuntimeError, match="exited with status 1 before answering"):
        server.start()
    assert os.path.exists(server.log_path)  # kept for the one who reads the error
    shutil.rmtree(os.path.dirname(server.log_path))


# ---- zarr-python 3 through s3fs and obstore ----------------------------------------------

@pytest.mark.parametrize("writer", ["s3fs", "obstore"])
@pytest.mark.parametrize("zarr_format", [2, 3])
def test_zarr_round_trip(s3_server, s3_bucket, zarr_s3, writer, zarr_format, rng):
    data = rng.standard_normal((37, 53)).astype("float32")
    url = f"s3://{s3_bucket}/a.zarr"
    array = zarr.create_array(store=zarr_s3.store(writer, url), shape=data.shape,
                              chunks=(10, 20), dtype=data.dtype, zarr_format=zarr_format)
    array[...] = data
    for reader in ("s3fs", "obstore"):
        back = zarr.open_array(store=zarr_s3.store(reader, url, read_only=True), mode="r")
        np.testing.assert_array_equal(back[...], data)
    keys = s3_server.list_keys(s3_bucket)
    metadata = "a.zarr/zarr.json" if zarr_format == 3 else "a.zarr/.zarray"
    assert metadata in keys
    chunks = [key for key in keys
              if key.rsplit("/", 1)[-1] not in ("zarr.json", ".zarray", ".zattrs", ".zgroup")]
    assert len(chunks) == 4 * 3


def test_zarr_open_array_by_url_with_storage_options(s3_bucket, zarr_s3, rng):
    data = rng.integers(0, 1000, size=(100, 60)).astype("int64")
    url = f"s3://{s3_bucket}/by-url.zarr"
    written = zarr.open_array(url, mode="w", shape=data.shape, chunks=(25, 60),
                              dtype=data.dtype, storage_options=zarr_s3.s3fs_options())
    written[...] = data
    back = zarr.open_array(url, mode="r", storage_options=zarr_s3.s3fs_options())
    np.testing.assert_array_equal(back[...], data)


def test_zarr_sharded_through_obstore(s3_bucket, zarr_s3, rng):
    data = rng.standard_normal((64, 64))
    url = f"s3://{s3_bucket}/sharded.zarr"
    array = zarr.create_array(store=zarr_s3.obstore(url), shape=data.shape, chunks=(8, 8),
                              shards=(32, 32), dtype=data.dtype)
    array[...] = data
    back = zarr.open_array(store=zarr_s3.fsspec(url, read_only=True), mode="r")
    assert back.shards == (32, 32)
    np.testing.assert_array_equal(back[...], data)


# ---- the fault proxy ---------------------------------------------------------------------

def sequential_requests(s3, bucket, count):
    """`count` requests one after another (puts, gets, heads of a few keys, lists): the
    outcome of each (error_of)."""
    outcomes = []
    for i in range(count):
        key = f"k{i % 5}"
        step = i % 4
        if step == 0:
            outcomes.append(("put", key, error_of(
                lambda: s3.put_object(Bucket=bucket, Key=f"{key}-{i}", Body=b"x" * (i + 1)))))
        elif step == 1:
            outcomes.append(("get", key, error_of(
                lambda: s3.get_object(Bucket=bucket, Key="seed")["Body"].read())))
        elif step == 2:
            outcomes.append(("head", key, error_of(
                lambda: s3.head_object(Bucket=bucket, Key="seed"))))
        else:
            outcomes.append(("list", key, error_of(
                lambda: s3.list_objects_v2(Bucket=bucket, Prefix="k"))))
    return outcomes


ERROR_RATES = {"slowdown": 0.15, "error500": 0.1, "throttle": 0.1}


def test_proxy_errors_reach_boto3_and_are_counted(s3_server, s3_bucket, fault_proxy):
    s3_server.client().put_object(Bucket=s3_bucket, Key="seed", Body=b"seed")
    proxy = fault_proxy(seed=7, rates=ERROR_RATES)
    s3 = s3_server.client(endpoint=proxy.endpoint, **NO_RETRIES)
    outcomes = sequential_requests(s3, s3_bucket, 120)

    kinds = proxy.kinds()
    assert len(kinds) == len(outcomes) == 120
    for (op, _, outcome), kind in zip(outcomes, kinds):
        if kind is None:
            assert outcome is None
        else:
            status, _, code, _ = ERROR_RESPONSES[kind]
            # a HEAD answer has no body: botocore reports the status as the code
            assert outcome == ((str(status) if op == "head" else code), status)
    seen = sum(outcome is not None for _, _, outcome in outcomes)
    assert proxy.requests == 120
    assert 0 < proxy.faults == seen < 120
    assert proxy.forwarded == 120 - proxy.faults
    assert set(proxy.injected) <= set(ERROR_RATES)
    # An error answer means the request never happened: only the puts that succeeded
    # stored their keys.
    stored = set(s3_server.list_keys(s3_bucket, prefix="k"))
    for i, (op, key, outcome) in enumerate(outcomes):
        if op == "put":
            assert (f"{key}-{i}" in stored) == (outcome is None), (i, outcome)


def concurrent_requests(s3, bucket, jobs, order):
    """Runs `jobs` ((op, key) pairs: put/get/head) by 8 threads, submitted in `order` (a
    permutation of their indices): {index: outcome (error_of)}."""
    def one(index):
        op, key = jobs[index]
        if op == "put":
            return index, error_of(lambda: s3.put_object(Bucket=bucket, Key=key, Body=b"v"))
        if op == "get":
            return index, error_of(
                lambda: s3.get_object(Bucket=bucket, Key=key)["Body"].read())
        return index, error_of(lambda: s3.head_object(Bucket=bucket, Key=key))

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        return dict(pool.map(one, order))


def test_proxy_faults_repeat_with_the_seed_in_any_order(s3_server, s3_bucket, fault_proxy):
    """A request's fault depends on (seed, method, target, occurrence) only: the same
    requests sent by 8 threads in opposite orders (so on other connections, interleaved
    otherwise) get the same faults with the same seed, and other faults with another."""
    direct = s3_server.client()
    direct.put_object(Bucket=s3_bucket, Key="seed", Body=b"seed")
    for i in range(30):
        direct.put_object(Bucket=s3_bucket, Key=f"g{i}", Body=b"g")
    # unique targets (puts to p*, gets of g*), and one target asked 20 times (GET seed)
    jobs = ([("put", f"p{i}") for i in range(30)] + [("get", f"g{i}") for i in range(30)]
            + [("get", "seed")] * 20 + [("head", f"g{i}") for i in range(10)])
    rates = dict(ERROR_RATES, drop_before=0.05, reset=0.05)
    runs = []
    for seed, order in ((3, range(len(jobs))), (3, reversed(range(len(jobs)))),
                        (4, range(len(jobs)))):
        proxy = fault_proxy(seed=seed, rates=rates)
        s3 = s3_server.client(endpoint=proxy.endpoint, max_pool_connections=8, **NO_RETRIES)
        outcomes = concurrent_requests(s3, s3_bucket, jobs, list(order))
        runs.append((proxy, outcomes))
        # the draw is the documented pure function of each request
        for (method, target, occurrence), kind in proxy.decisions().items():
            value, _ = draw(seed, method, target, occurrence)
            assert kind == kind_of(rates, value)

    (first, first_outcomes), (second, second_outcomes), (other, _) = runs
    assert first.connections > 1 and second.connections > 1
    assert [d.target for d in first.history] != [d.target for d in second.history]
    assert first.decisions() == second.decisions()
    assert first.injected == second.injected
    assert len(set(first.injected)) >= 3, first.injected  # several kinds at stake
    # The same outcome for each request of a unique target; for the 20 GETs of one
    # target, the same outcomes (which thread got which is up to arrival).
    unique = [i for i, job in enumerate(jobs) if job != ("get", "seed")]
    assert [first_outcomes[i] for i in unique] == [second_outcomes[i] for i in unique]
    repeated = [i for i, job in enumerate(jobs) if job == ("get", "seed")]

    def key(outcome):
        return repr(outcome)
    assert sorted((first_outcomes[i] for i in repeated), key=key) == sorted(
        (second_outcomes[i] for i in repeated), key=key)
    assert any(first_outcomes[i] is not None for i in unique)
    assert any(first_outcomes[i] is None for i in unique)
    assert other.decisions() != first.decisions()


def test_chunk_key_pattern():
    pattern = re.compile(CHUNK_KEY)
    chunks = ["/b/a.zarr/c/0/1", "/b/a.zarr/c/12", "/b/a.zarr/c", "/b/a.zarr/c.0.3",
              "/b/a.zarr/0.1", "/b/a.zarr/7", "/b/g/x/3.4.5", "/b/a.zarr/0/1"]
    documents = ["/b/a.zarr/zarr.json", "/b/a.zarr/.zarray", "/b/a.zarr/.zattrs",
                 "/b/a.zarr/.tessera-partial", "/b", "/b/a.zarr/c/x", "/b/a.zarr/c/0.json"]
    assert [key for key in chunks if not pattern.search(key)] == []
    assert [key for key in documents if pattern.search(key)] == []


def test_proxy_filter_and_pass_first(s3_server, s3_bucket, fault_proxy):
    """methods + match choose the requests that may get a fault; pass_first lets the first
    N of those through: a store that fails midway, after exactly N chunk writes."""
    proxy = fault_proxy(seed=1, rates={"slowdown": 1.0}, methods=["PUT"], match=CHUNK_KEY,
                        pass_first=3)
    s3 = s3_server.client(endpoint=proxy.endpoint, **NO_RETRIES)
    outcomes = []
    for i in range(8):
        outcomes.append(error_of(
            lambda: s3.put_object(Bucket=s3_bucket, Key=f"a.zarr/c/0/{i}", Body=b"x")))
        # a document's PUT and a chunk's GET never match: never faulted
        assert error_of(lambda: s3.put_object(Bucket=s3_bucket, Key="a.zarr/zarr.json",
                                              Body=b"{}")) is None
        assert error_of(lambda: s3.get_object(Bucket=s3_bucket, Key="a.zarr/c/0/0")) is None
    assert outcomes == [None] * 3 + [("SlowDown", 503)] * 5
    assert sorted(s3_server.list_keys(s3_bucket)) == sorted(
        ["a.zarr/zarr.json"] + [f"a.zarr/c/0/{i}" for i in range(3)])
    assert proxy.requests == 24 and proxy.matched == 8 and proxy.passed == 3
    assert proxy.injected == {"slowdown": 5}
    assert [target.split("?", 1)[0] for target in proxy.targets("PUT", CHUNK_KEY)] == [
        f"/{s3_bucket}/a.zarr/c/0/{i}" for i in range(8)]


@pytest.mark.parametrize("kind,happened", [
    ("drop_before", False), ("reset", False), ("drop_mid", True),
    ("drop_after_forward", True)])
def test_proxy_connection_faults(s3_server, s3_bucket, fault_proxy, kind, happened):
    proxy = fault_proxy(seed=1, rates={kind: 1.0})
    s3 = s3_server.client(endpoint=proxy.endpoint, **NO_RETRIES)
    assert error_of(lambda: s3.put_object(Bucket=s3_bucket, Key="p", Body=b"x" * 1000)) == (
        "connection", None)
    assert (s3_server.list_keys(s3_bucket) == ["p"]) == happened
    s3_server.client().put_object(Bucket=s3_bucket, Key="big", Body=b"y" * 100_000)
    assert error_of(lambda: s3.get_object(Bucket=s3_bucket, Key="big")["Body"].read()) == (
        "connection", None)
    assert error_of(lambda: s3.head_object(Bucket=s3_bucket, Key="big")) == ("connection", None)
    assert proxy.injected == {kind: 3}
    assert proxy.forwarded == (3 if happened else 0)


def test_proxy_delay(s3_server, s3_bucket, fault_proxy):
    import time
    proxy = fault_proxy(seed=1, rates={"delay": 1.0}, delay_s=0.3)
    s3 = s3_server.client(endpoint=proxy.endpoint, **NO_RETRIES)
    start = time.monotonic()
    s3.put_object(Bucket=s3_bucket, Key="d", Body=b"d")
    assert time.monotonic() - start >= 0.3
    assert proxy.injected == {"delay": 1}


def test_proxy_keeps_connections_alive(s3_server, s3_bucket, fault_proxy):
    proxy = fault_proxy(seed=1)  # no faults
    s3 = s3_server.client(endpoint=proxy.endpoint, **NO_RETRIES)
    for i in range(20):
        s3.put_object(Bucket=s3_bucket, Key=f"k{i}", Body=b"x" * 2_000_000)  # Expect: 100
    assert proxy.connections == 1  # moto closes each of its connections; the proxy doesn't
    assert proxy.requests == proxy.forwarded == 20


def test_proxy_with_many_requests_in_flight(s3_server, s3_bucket, fault_proxy):
    proxy = fault_proxy(seed=5, rates={"delay": 0.1}, delay_s=0.05)
    s3 = s3_server.client(endpoint=proxy.endpoint, max_pool_connections=32, **NO_RETRIES)

    def round_trip(i):
        body = bytes([i % 251]) * (50_000 + i)
        s3.put_object(Bucket=s3_bucket, Key=f"c{i}", Body=body)
        return s3.get_object(Bucket=s3_bucket, Key=f"c{i}")["Body"].read() == body

    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        assert all(pool.map(round_trip, range(256)))
    assert proxy.requests == proxy.forwarded == 512
    assert 16 <= proxy.connections <= 64
    assert 8 <= proxy.max_in_flight <= 32
    assert proxy.injected["delay"] > 0


def test_boto3_retries_get_through_the_faults(s3_server, s3_bucket, fault_proxy):
    rates = {"slowdown": 0.1, "error500": 0.05, "throttle": 0.05, "drop_before": 0.03,
             "reset": 0.02, "delay": 0.05}
    proxy = fault_proxy(seed=11, rates=rates, delay_s=0.02)
    s3 = s3_server.client(endpoint=proxy.endpoint,
                          retries={"mode": "standard", "total_max_attempts": 10})
    for i in range(20):
        s3.put_object(Bucket=s3_bucket, Key=f"r{i}", Body=str(i).encode())
    for i in range(20):
        assert s3.get_object(Bucket=s3_bucket, Key=f"r{i}")["Body"].read() == str(i).encode()
    assert proxy.faults > 0
    # every fault but a delay cost one more attempt
    assert proxy.requests == 40 + proxy.faults - proxy.injected["delay"]


def test_zarr_through_the_proxy_with_obstore_retries(s3_server, s3_bucket, fault_proxy, rng):
    proxy = fault_proxy(seed=2, rates={"slowdown": 0.1, "error500": 0.05})
    route = ZarrS3(s3_server, endpoint=proxy.endpoint)
    data = rng.standard_normal((40, 40))
    url = f"s3://{s3_bucket}/proxied.zarr"
    array = zarr.create_array(store=route.obstore(url), shape=data.shape, chunks=(10, 10),
                              dtype=data.dtype)
    array[...] = data
    back = zarr.open_array(store=ZarrS3(s3_server).obstore(url, read_only=True), mode="r")
    np.testing.assert_array_equal(back[...], data)
    assert proxy.faults > 0


def test_proxy_refuses_unknown_kinds_and_excess_rates(s3_server):
    with pytest.raises(ValueError, match="unknown fault kinds"):
        FaultProxy(s3_server.endpoint, rates={"slow": 0.1})
    with pytest.raises(ValueError, match="sum to"):
        FaultProxy(s3_server.endpoint, rates={kind: 0.2 for kind in FAULT_KINDS})


# ---- credentials ---------------------------------------------------------------------------

def test_initial_no_auth_action_count_in_the_server_environment():
    """moto 5.2.5's server mode honours INITIAL_NO_AUTH_ACTION_COUNT from its environment:
    the first N requests go unchecked, later ones need a key of one of its IAM users."""
    with S3Server(server_env={"INITIAL_NO_AUTH_ACTION_COUNT": "2"}) as server:
        s3 = server.client(**NO_RETRIES)
        s3.create_bucket(Bucket="counted")
        s3.put_object(Bucket="counted", Key="k", Body=b"1")
        assert error_of(lambda: s3.get_object(Bucket="counted", Key="k")) == (
            "InvalidAccessKeyId", 403)


def test_auth_server_refuses_a_wrong_secret(s3_auth_server):
    good = s3_auth_server.client(**NO_RETRIES)
    assert s3_auth_server.access_key_id.startswith("AKIA")
    good.create_bucket(Bucket="guarded")
    good.put_object(Bucket="guarded", Key="k", Body=b"secret data")
    assert good.get_object(Bucket="guarded", Key="k")["Body"].read() == b"secret data"

    import boto3
    from botocore.config import Config
    wrong = boto3.session.Session().client(
        "s3", endpoint_url=s3_auth_server.endpoint, region_name="us-east-1",
        aws_access_key_id=s3_auth_server.access_key_id, aws_secret_access_key="wrong",
        config=Config(s3={"addressing_style": "path"}, **NO_RETRIES))
    assert error_of(lambda: wrong.get_object(Bucket="guarded", Key="k")) == (
        "SignatureDoesNotMatch", 403)
    assert error_of(lambda: wrong.put_object(Bucket="guarded", Key="x", Body=b"1")) == (
        "SignatureDoesNotMatch", 403)
    assert error_of(lambda: wrong.list_objects_v2(Bucket="guarded")) == (
        "SignatureDoesNotMatch", 403)
    unknown = boto3.session.Session().client(
        "s3", endpoint_url=s3_auth_server.endpoint, region_name="us-east-1",
        aws_access_key_id="testing", aws_secret_access_key="testing",
        config=Config(s3={"addressing_style": "path"}, **NO_RETRIES))
    assert error_of(lambda: unknown.get_object(Bucket="guarded", Key="k")) == (
        "InvalidAccessKeyId", 403)
    assert s3_auth_server.list_keys("guarded") == ["k"]


# ---- the command line ----------------------------------------------------------------------

CHILD = textwrap.dedent("""
    import os, sys, boto3
    from botocore.config import Config
    s3 = boto3.session.Session().client("s3", config=Config(s3={"addressing_style": "path"}))
    assert os.environ["TESSERA_TEST_S3_ENDPOINT"] == os.environ["AWS_ENDPOINT_URL"]
    assert os.environ["TESSERA_TEST_S3_BUCKET"] == "first-bucket"
    assert "AWS_PROFILE" not in os.environ
    names = sorted(b["Name"] for b in s3.list_buckets()["Buckets"])
    print("buckets", names)
    s3.put_object(Bucket="first-bucket", Key="k", Body=b"1")
    if len(sys.argv) > 1:  # --no-auth-actions: a wrong secret is refused
        bad = boto3.session.Session(aws_secret_access_key="wrong",
                                    aws_access_key_id=os.environ["AWS_ACCESS_KEY_ID"]).client(
            "s3", config=Config(s3={"addressing_style": "path"},
                                retries={"total_max_attempts": 1}))
        try:
            bad.get_object(Bucket="first-bucket", Key="k")
        except Exception as error:
            print("refused", error.response["Error"]["Code"])
    sys.exit(3)
""")


@pytest.mark.parametrize("auth", [False, True])
def test_command_line_runs_a_command_against_the_server(auth):
    command = [sys.executable, str(SERVER_SCRIPT), "--bucket", "first-bucket", "second-bucket"]
    if auth:
        command += ["--no-auth-actions", "0"]
    command += ["--", sys.executable, "-c", CHILD] + (["auth"] if auth else [])
    env = dict(os.environ, AWS_PROFILE="must-be-removed")
    result = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env)
    assert result.returncode == 3, result.stderr
    assert "buckets ['first-bucket', 'second-bucket']" in result.stdout
    if auth:
        assert "refused SignatureDoesNotMatch" in result.stdout


def test_command_line_puts_a_fault_proxy_in_front():
    child = textwrap.dedent("""
        import os, boto3
        from botocore.config import Config
        assert os.environ["AWS_ENDPOINT_URL"] == os.environ["TESSERA_TEST_S3_ENDPOINT"]
        assert os.environ["AWS_ENDPOINT_URL"] != os.environ["TESSERA_TEST_S3_SERVER_ENDPOINT"]
        s3 = boto3.session.Session().client("s3", config=Config(
            s3={"addressing_style": "path"}, retries={"total_max_attempts": 1}))
        codes = []
        for i in range(20):
            try:
                s3.put_object(Bucket=os.environ["TESSERA_TEST_S3_BUCKET"], Key=str(i), Body=b"1")
                codes.append(200)
            except Exception as error:
                codes.append(error.response["ResponseMetadata"]["HTTPStatusCode"])
        print("codes", sorted(set(codes)))
    """)
    result = subprocess.run(
        [sys.executable, str(SERVER_SCRIPT), "--faults", "slowdown=0.5", "--fault-seed", "9",
         "--", sys.executable, "-c", child], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "codes [200, 503]" in result.stdout
    assert '"requests": 20' in result.stderr and '"slowdown":' in result.stderr
    bad = subprocess.run([sys.executable, str(SERVER_SCRIPT), "--faults", "bogus=1", "--",
                          "true"], capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "unknown fault kinds" in bad.stderr


def test_command_line_needs_a_command():
    result = subprocess.run([sys.executable, str(SERVER_SCRIPT), "--bucket", "b-b-b"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "no command" in result.stderr


def test_command_line_keeps_the_server_log_when_the_command_fails():
    """A failing CMD keeps the server's log (its path printed on stderr), with moto's own
    lines in it; a CMD that succeeds leaves no log behind."""
    failed = subprocess.run([sys.executable, str(SERVER_SCRIPT), "--", sys.executable, "-c",
                             "import sys; sys.exit(4)"], capture_output=True, text=True,
                            timeout=120)
    assert failed.returncode == 4, failed.stderr
    found = re.search(r"server log (\S+) \(kept: the command failed\)", failed.stderr)
    assert found, failed.stderr
    log = found.group(1)
    try:
        assert os.path.isfile(log)
        with open(log, encoding="utf-8", errors="replace") as text:
            logged = text.read()
        assert "moto.server" in logged and "PUT /tessera-test" in logged, logged[-2000:]
    finally:
        shutil.rmtree(os.path.dirname(log), ignore_errors=True)

    passed = subprocess.run([sys.executable, str(SERVER_SCRIPT), "--", "true"],
                            capture_output=True, text=True, timeout=120)
    assert passed.returncode == 0, passed.stderr
    assert "server log" not in passed.stderr


def test_server_never_takes_another_servers_port_for_its_own(monkeypatch):
    """The port race of ctest -j: the free port found is taken by another moto before ours
    binds it. That one answers the readiness check, but the listening socket is not our
    process's: ours fails to bind, and start() goes on to the next port."""
    with S3Server() as other:
        ports = iter([other.port])
        real_free_port = s3_server_module.free_port
        monkeypatch.setattr(s3_server_module, "free_port",
                            lambda host="127.0.0.1": next(ports, None) or real_free_port(host))
        with S3Server() as server:
            assert server.port != other.port
            assert server.process.poll() is None
            assert s3_server_module._listens(server.process.pid, server.port) is True
            assert s3_server_module._listens(server.process.pid, other.port) is False
            with open(server.log_path, encoding="utf-8", errors="replace") as text:
                assert f"-p {other.port}" in text.read()  # it did try the taken port
            server.make_bucket("ours-only")
            assert "ours-only" not in [bucket["Name"] for bucket in
                                       other.client().list_buckets()["Buckets"]]


@pytest.mark.timeout(120)
def test_server_and_command_die_with_a_killed_harness():
    """SIGKILL of s3_server.py (a test driver's timeout) takes moto's server and CMD with
    it (PR_SET_PDEATHSIG): nothing keeps running or listening."""
    child = ("import os, time; print(os.environ['TESSERA_TEST_S3_SERVER_ENDPOINT'], "
             "os.getpid(), flush=True); time.sleep(120)")
    harness = subprocess.Popen([sys.executable, str(SERVER_SCRIPT), "--", sys.executable,
                                "-c", child], stdout=subprocess.PIPE, text=True)
    command_pid = None
    try:
        endpoint, pid = harness.stdout.readline().split()
        command_pid = int(pid)
        host, port = endpoint.removeprefix("http://").split(":")
        assert s3_server_module._is_moto(host, int(port))
        harness.kill()
        harness.wait(10)

        def alive(pid):
            try:
                with open(f"/proc/{pid}/status") as status:
                    return "State:\tZ" not in status.read()  # a zombie has ended
            except FileNotFoundError:
                return False

        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and (
                s3_server_module._is_moto(host, int(port)) or alive(command_pid)):
            time.sleep(0.1)
        assert not s3_server_module._is_moto(host, int(port)), "moto outlived the harness"
        assert not alive(command_pid), "the command outlived the harness"
    finally:
        if harness.poll() is None:
            harness.kill()
            harness.wait()
        if command_pid is not None:  # a command that outlived it: not beyond this test
            try:
                os.kill(command_pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_command_line_fault_filter_options():
    """--fault-methods, --fault-match chunks and --fault-pass-first reach the proxy: the
    first 2 chunk PUTs pass, later ones get 503; a document's PUT never does."""
    child = textwrap.dedent("""
        import os, boto3
        from botocore.config import Config
        s3 = boto3.session.Session().client("s3", config=Config(
            s3={"addressing_style": "path"}, retries={"total_max_attempts": 1}))
        bucket = os.environ["TESSERA_TEST_S3_BUCKET"]
        def status(key):
            try:
                s3.put_object(Bucket=bucket, Key=key, Body=b"1")
                return 200
            except Exception as error:
                return error.response["ResponseMetadata"]["HTTPStatusCode"]
        print("codes", [status(f"a.zarr/c/0/{i}") for i in range(4)], status("a.zarr/zarr.json"))
    """)
    result = subprocess.run(
        [sys.executable, str(SERVER_SCRIPT), "--faults", "slowdown=1", "--fault-methods", "PUT",
         "--fault-match", "chunks", "--fault-pass-first", "2", "--", sys.executable, "-c",
         child], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "codes [200, 200, 503, 503] 200" in result.stdout, result.stdout
    assert '"matched": 4' in result.stderr and '"passed": 2' in result.stderr, result.stderr
