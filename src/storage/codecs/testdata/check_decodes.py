#!/usr/bin/python3
"""Checks that numcodecs decodes what Tessera encoded (run by codec_test.cpp).

    /usr/bin/python3 check_decodes.py DIR

DIR/fixtures.json has make_fixtures.py's layout: each fixture names a numcodecs codec
config, a raw file and an encoded file in DIR. Decodes every encoded file with numcodecs and
compares it with the raw bytes. Exit status: 0 all match, 1 some differ or fail to decode,
2 usage error, 3 numcodecs cannot be imported (the caller skips).
"""

import json
import os
import sys

try:
    import numcodecs
    import numpy as np
except ImportError as error:
    print(f"numcodecs unavailable: {error}", file=sys.stderr)
    sys.exit(3)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    directory = sys.argv[1]
    with open(os.path.join(directory, "fixtures.json")) as f:
        manifest = json.load(f)
    failures = 0
    skipped = 0
    for fixture in manifest["fixtures"]:
        with open(os.path.join(directory, fixture["raw"]), "rb") as f:
            raw = f.read()
        # numcodecs 0.11 reads a decoded size of 0 as an error in Blosc, Zstd and LZ4
        # (Zarr never stores empty chunks), so empty encodings cannot be checked with it.
        if not raw and fixture["codec"]["id"] in ("blosc", "zstd", "lz4"):
            skipped += 1
            continue
        with open(os.path.join(directory, fixture["encoded"]), "rb") as f:
            encoded = f.read()
        try:
            codec = numcodecs.get_codec(dict(fixture["codec"]))
            decoded = np.frombuffer(codec.decode(encoded), dtype=np.uint8).tobytes()
        except Exception as error:  # any failure to decode is a finding
            print(f"FAIL {fixture['name']}: numcodecs raised {error!r}")
            failures += 1
            continue
        if decoded != raw:
            print(f"FAIL {fixture['name']}: decoded {len(decoded)} bytes differ from "
                  f"the {len(raw)} raw bytes")
            failures += 1
    checked = len(manifest["fixtures"]) - skipped
    print(f"numcodecs checked {checked} encodings ({skipped} empty ones skipped), "
          f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
