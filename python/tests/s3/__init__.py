"""Tests against an S3-compatible server (moto's, started by conftest.py on loopback): the
harness itself (test_harness.py) and Tessera's s3:// stores read and written by
zarr-python through s3fs and obstore (test_s3_interop.py)."""
