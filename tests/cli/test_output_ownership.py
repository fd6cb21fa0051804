"""What `tessera rechunk` and `tessera calc` create beside OUT (OUT.tessera-partial,
OUT.tessera-old) is marked as Tessera's; nothing Tessera did not make is written into,
removed or followed, a source is never taken for a leftover, --resume continues only the
same work, a killed run's temporaries never reach OUT, and a failed run says where its
partial output is kept. Every case hashes every file of the trees involved before and
after (issue 14, points 1-5 and 7)."""
import os
import shutil
import subprocess

import numcodecs
import numpy as np
import pytest
import zarr
from tessera_run import tree

RNG = np.random.default_rng(14)
CHUNKS = "10,40"  # 8 target chunks of the (40, 80) source
SYNC = ["--allowed-mem", "50MB", "--quiet", "--executor", "sync", "--workers", 1]


def run(tessera_bin, *args):
    return subprocess.run([tessera_bin, *map(str, args)], capture_output=True, text=True,
                          timeout=60)


def rechunk(tessera_bin, source, out, *extra):
    return run(tessera_bin, "rechunk", source, out, "--chunks", CHUNKS, *SYNC, *extra)


def calc(tessera_bin, source, out, *extra):
    return run(tessera_bin, "calc", "a * 2", "--input", f"a={source}", "--output", out, *SYNC,
               *extra)


COMMANDS = {"rechunk": rechunk, "calc": calc}
EXPECTED = {"rechunk": lambda values: values, "calc": lambda values: values * 2}
TARGET_CHUNKS = {"rechunk": 8, "calc": 32}  # calc keeps the source's (10, 10) chunks


def write_source(path, values):
    array = zarr.open_array(str(path), mode="w", zarr_format=2, shape=values.shape, chunks=(10, 10),
                            dtype=values.dtype, compressor=numcodecs.Zlib(level=1))
    array[...] = values
    return path


@pytest.fixture
def source(tmp_path):
    values = RNG.random((40, 80)).astype(np.float32)
    return write_source(tmp_path / "base.zarr", values), values


def partial(out):
    return out.with_name(out.name + ".tessera-partial")


def previous(out):
    return out.with_name(out.name + ".tessera-old")


def interrupt(tessera_bin, command, path, out):
    """Runs `command` until it fails on chunk 3.7 of `path` (corrupted, its size kept);
    returns a function restoring that chunk's bytes with the corrupted file's mtime, so
    that the source's fingerprint (sizes, mtimes) is the one the partial output records."""
    chunk = path / "3.7"
    good = chunk.read_bytes()
    bad = bytearray(good)
    bad[len(bad) // 2] ^= 0xFF
    bad[len(bad) // 2 + 1] ^= 0x55
    chunk.write_bytes(bytes(bad))
    stat = os.stat(chunk)
    result = COMMANDS[command](tessera_bin, path, out)
    assert result.returncode == 1, result.stdout + result.stderr
    assert partial(out).is_dir() and not out.exists()

    def restore():
        chunk.write_bytes(good)
        os.utime(chunk, ns=(stat.st_atime_ns, stat.st_mtime_ns))

    return result, restore


@pytest.mark.parametrize("command", COMMANDS)
def test_source_named_like_the_old_partial_is_left_alone(tessera_bin, tmp_path, source, command):
    """Point 1 as filed: IN named OUT.partial is read, not erased."""
    base, values = source
    named = tmp_path / "x.zarr.partial"
    shutil.copytree(base, named)
    before = tree(named)
    out = tmp_path / "x.zarr"
    result = COMMANDS[command](tessera_bin, named, out)
    assert result.returncode == 0, result.stderr
    assert tree(named) == before
    np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...],
                                  EXPECTED[command](values))


@pytest.mark.parametrize("command", COMMANDS)
def test_source_at_the_partial_name_is_refused(tessera_bin, tmp_path, source, command):
    base, _ = source
    named = partial(tmp_path / "x.zarr")
    shutil.copytree(base, named)
    before = tree(named)
    result = COMMANDS[command](tessera_bin, named, tmp_path / "x.zarr")
    assert result.returncode == 1
    assert "is a source of this run" in result.stderr and "rename the source" in result.stderr
    assert tree(named) == before
    assert not (tmp_path / "x.zarr").exists()


@pytest.mark.parametrize("command", COMMANDS)
def test_partial_name_taken_by_a_link_or_a_users_folder_is_refused(tessera_bin, tmp_path, source,
                                                                    command):
    """Point 2: a link to IN, a link to an outside folder, a user's own folder."""
    base, _ = source
    out = tmp_path / "x.zarr"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "0.0").write_bytes(b"mine")
    (outside / "notes.txt").write_text("keep me")
    users = tmp_path / "users"
    users.mkdir()
    (users / "1.1").write_bytes(b"numbers")
    (users / "report.txt").write_text("mine too")
    cases = [(base, "symbolic link", "rm "), (outside, "symbolic link", "rm "),
             (users, "not made by Tessera", "move or delete")]
    for target, said, what_to_do in cases:
        before = {p: tree(p) for p in (base, outside, users)}
        if target is users:
            shutil.copytree(users, partial(out))
        else:
            os.symlink(target, partial(out))
        taken = tree(partial(out))
        result = COMMANDS[command](tessera_bin, base, out)
        assert result.returncode == 1, result.stderr
        assert said in result.stderr and what_to_do in result.stderr, result.stderr
        assert {p: tree(p) for p in (base, outside, users)} == before
        assert tree(partial(out)) == taken
        assert not out.exists()
        if os.path.islink(partial(out)):
            os.unlink(partial(out))
        else:
            shutil.rmtree(partial(out))


@pytest.mark.parametrize("command", COMMANDS)
def test_overwrite_never_deletes_a_users_old_folder_or_the_source(tessera_bin, tmp_path, source,
                                                                  command):
    """Point 3: a user's OUT.old backup survives --overwrite; OUT.tessera-old that is not
    Tessera's, or is IN, is refused and left as it was."""
    base, values = source
    out = tmp_path / "x.zarr"
    assert COMMANDS[command](tessera_bin, base, out).returncode == 0
    backup = tmp_path / "x.zarr.old"
    shutil.copytree(out, backup)
    (backup / "why.txt").write_text("my backup")
    backup_tree = tree(backup)
    result = COMMANDS[command](tessera_bin, base, out, "--overwrite")
    assert result.returncode == 0, result.stderr
    assert tree(backup) == backup_tree

    shutil.copytree(backup, previous(out))
    out_tree, old_tree = tree(out), tree(previous(out))
    result = COMMANDS[command](tessera_bin, base, out, "--overwrite")
    assert result.returncode == 1
    assert "was not made by Tessera" in result.stderr and "move or delete" in result.stderr
    assert tree(out) == out_tree and tree(previous(out)) == old_tree
    shutil.rmtree(previous(out))

    # IN itself at OUT.tessera-old.
    source_as_old = previous(out)
    shutil.copytree(base, source_as_old)
    in_tree = tree(source_as_old)
    result = COMMANDS[command](tessera_bin, source_as_old, out, "--overwrite")
    assert result.returncode == 1
    assert "is a source of this run" in result.stderr
    assert tree(source_as_old) == in_tree and tree(out) == out_tree
    np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...],
                                  EXPECTED[command](values))


@pytest.mark.parametrize("command", COMMANDS)
def test_failed_run_says_where_its_partial_output_is_and_resume_finishes(tessera_bin, tmp_path,
                                                                         source, command):
    """Point 7's message, and point 5: a killed run's temporary file in the partial output
    never reaches OUT."""
    base, values = source
    out = tmp_path / "x.zarr"
    failed, restore = interrupt(tessera_bin, command, base, out)
    message = failed.stderr
    assert f"kept in {partial(out)}" in message, message
    assert "--resume" in message and f"delete {partial(out)}" in message, message
    written = [p.name for p in (partial(out) / "array").iterdir() if not p.name.startswith(".")]
    assert 0 < len(written) < TARGET_CHUNKS[command], written
    restore()
    # What a killed writer leaves: a temporary file of another process, beside a chunk.
    stale = partial(out) / "array" / ".1.1.tessera-tmp-99999-0"
    stale.write_bytes(b"\0" * 4096)
    source_tree = tree(base)
    result = COMMANDS[command](tessera_bin, base, out, "--resume")
    assert result.returncode == 0, result.stderr
    assert "resumed" in result.stdout
    assert tree(base) == source_tree
    assert not partial(out).exists()
    assert not any("tessera-tmp" in name or "tessera-owner" in name for name in tree(out))
    np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...],
                                  EXPECTED[command](values))


@pytest.mark.parametrize("command", COMMANDS)
def test_resume_with_another_source_of_the_same_metadata_is_refused(tessera_bin, tmp_path, source,
                                                                    command):
    """Point 4: another source whose .zarray is identical is not the same work."""
    base, values = source
    out = tmp_path / "x.zarr"
    _, restore = interrupt(tessera_bin, command, base, out)
    restore()
    other = write_source(tmp_path / "other.zarr", (values + 1).astype(np.float32))
    assert (other / ".zarray").read_bytes() == (base / ".zarray").read_bytes()
    before = {p: tree(p) for p in (base, other, partial(out))}
    result = COMMANDS[command](tessera_bin, other, out, "--resume")
    assert result.returncode == 1
    assert "cannot resume" in result.stderr and "source differs" in result.stderr, result.stderr
    assert f"delete {partial(out)}" in result.stderr
    assert {p: tree(p) for p in (base, other, partial(out))} == before
    assert not out.exists()
    # The same source resumes.
    result = COMMANDS[command](tessera_bin, base, out, "--resume")
    assert result.returncode == 0, result.stderr
    np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...],
                                  EXPECTED[command](values))


@pytest.mark.parametrize("command", COMMANDS)
def test_a_folder_left_by_a_run_killed_while_creating_it_is_taken_over(tessera_bin, tmp_path,
                                                                       source, command):
    """A kill between creating OUT.tessera-partial and renaming its marker into place leaves
    the folder empty but for the marker's temporary file: nobody's data, so a new run (with
    or without --resume) takes it over."""
    base, values = source
    out = tmp_path / "x.zarr"
    for extra in ([], ["--resume"]):
        partial(out).mkdir()
        (partial(out) / ".tessera-owner.new").write_text("tessera-owner 1\nkind partial-out")
        result = COMMANDS[command](tessera_bin, base, out, *extra)
        assert result.returncode == 0, result.stderr
        assert not partial(out).exists()
        np.testing.assert_array_equal(zarr.open_array(str(out), mode="r")[...],
                                      EXPECTED[command](values))
        shutil.rmtree(out)
