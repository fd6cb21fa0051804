"""Fixtures of the S3 tests: moto's S3-compatible server on a free loopback port (one per
session), a fresh bucket per test, the server's environment for Tessera's engine in this
process, fault proxies in front of the server, and zarr-python's two S3 routes (s3fs and
obstore) to the same server.

The server and the proxy live in tests/s3/ (s3_server.py, fault_proxy.py), shared with
ctest's C++ tests and bench/compare_s3.py.
"""
import itertools
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]  # python/tests/s3/conftest.py -> the repository
sys.path.insert(0, str(REPO / "tests" / "s3"))

from fault_proxy import FaultProxy  # noqa: E402
from s3_server import REGION, UNSET_VARIABLES, S3Server  # noqa: E402

_bucket_numbers = itertools.count(1)


@pytest.fixture(scope="session")
def s3_server():
    """moto's S3 server for the whole session; no credentials checked."""
    with S3Server() as server:
        yield server


@pytest.fixture(scope="session")
def s3_auth_server():
    """A second server that checks every request's signature from the start: env() hands
    out an IAM user's key (moto knows no other); requests signed with another secret get
    403 SignatureDoesNotMatch, unknown keys 403 InvalidAccessKeyId."""
    with S3Server(no_auth_actions=0) as server:
        yield server


def bucket_name(test_name):
    """A valid bucket name (3-63 of a-z, 0-9, '-') unique in this session, telling the
    test it belongs to."""
    slug = re.sub(r"[^a-z0-9]+", "-", test_name.lower()).strip("-")
    return f"t{next(_bucket_numbers):04d}-{slug}"[:63].rstrip("-")


@pytest.fixture
def s3_bucket(s3_server, request):
    """A new, empty bucket for this test on s3_server: its name."""
    return s3_server.make_bucket(bucket_name(request.node.name))


def apply_env(monkeypatch, server, endpoint=None):
    """Points this process's environment at `server` (or at `endpoint`, a proxy of it):
    what Tessera's engine, boto3, s3fs and obstore read."""
    for name in UNSET_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    env = server.env(endpoint)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


@pytest.fixture
def s3_env(s3_server, monkeypatch):
    """os.environ pointed at s3_server for this test (undone after it): the dict set."""
    return apply_env(monkeypatch, s3_server)


@pytest.fixture
def fault_proxy(s3_server):
    """A factory of FaultProxy in front of s3_server (or `upstream`), started, closed after
    the test: fault_proxy(seed=1, rates={"slowdown": .1}, delay_s=0.05)."""
    proxies = []

    def make(seed=0, rates=None, delay_s=0.2, upstream=None, **options):
        proxy = FaultProxy(upstream or s3_server.endpoint, seed=seed, rates=rates,
                           delay_s=delay_s, **options)
        proxies.append(proxy.start())
        return proxy

    yield make
    for proxy in proxies:
        proxy.close()


class ZarrS3:
    """zarr-python 3 stores on an S3 server, through s3fs (fsspec) or obstore."""

    def __init__(self, server, endpoint=None):
        self.server = server
        self.endpoint = endpoint or server.endpoint

    def s3fs_options(self):
        """storage_options for s3fs (zarr.open_array(url, storage_options=...))."""
        return {
            "endpoint_url": self.endpoint,
            "key": self.server.access_key_id,
            "secret": self.server.secret_access_key,
            "client_kwargs": {"region_name": REGION},
            "use_listings_cache": False,
        }

    def fsspec(self, url, read_only=False):
        """A zarr FsspecStore (s3fs) at `url`, "s3://bucket/prefix"."""
        import zarr.storage
        return zarr.storage.FsspecStore.from_url(url, storage_options=self.s3fs_options(),
                                                 read_only=read_only)

    def obstore(self, url, read_only=False):
        """A zarr ObjectStore over obstore's S3Store at `url`, "s3://bucket/prefix"."""
        import obstore.store
        import zarr.storage
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        store = obstore.store.S3Store(
            bucket, prefix=prefix or None, endpoint=self.endpoint,
            access_key_id=self.server.access_key_id,
            secret_access_key=self.server.secret_access_key, region=REGION,
            virtual_hosted_style_request=False, client_options={"allow_http": True})
        return zarr.storage.ObjectStore(store, read_only=read_only)

    def store(self, route, url, read_only=False):
        """route "s3fs" or "obstore"."""
        return getattr(self, {"s3fs": "fsspec", "obstore": "obstore"}[route])(url, read_only)


@pytest.fixture
def zarr_s3(s3_server):
    """ZarrS3 on s3_server."""
    return ZarrS3(s3_server)
