"""``OutputFile.writelines`` writes and hashes in a thread of its own (issue 18): the same bytes and
digest as writing in the caller's thread, its errors raised in the caller's thread, and the
taking of lines stopped soon after a write fails."""
from __future__ import annotations

import errno
import hashlib

import pytest
from hypothesis import given, settings, strategies as st

from escalation.estimators.records import OutputFile


@settings(max_examples=60, deadline=None)
@given(st.lists(st.binary(max_size=300), max_size=60), st.integers(1, 700), st.integers(1, 3))
def test_the_file_and_its_digest_are_those_of_the_lines(tmp_path_factory, lines, block, queued):
    path = tmp_path_factory.mktemp("w") / "out.jsonl"
    file = OutputFile(path)
    file.writelines(iter(lines), block=block, queued=queued)
    facts = file.close()
    file.commit()
    whole = b"".join(lines)
    assert path.read_bytes() == whole
    assert facts == {"bytes": len(whole), "sha256": hashlib.sha256(whole).hexdigest()}


def test_a_failing_write_is_raised_here_and_stops_taking_lines(tmp_path, monkeypatch):
    path = tmp_path / "out.jsonl"
    file = OutputFile(path)
    written = []

    def write(data):
        if len(written) == 2:
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        written.append(data)

    monkeypatch.setattr(file, "write", write)
    taken = 0

    def lines():
        nonlocal taken
        for _ in range(10_000):
            taken += 1
            yield b"x" * 10

    with pytest.raises(OSError, match="No space left on device") as raised:
        file.writelines(lines(), block=10, queued=2)
    assert raised.value.filename == str(path)
    # the third block failed; at most the two queued behind it, the one being made and the one
    # in the writer's hands were taken after it
    assert taken <= 3 + 2 + 2
    file.discard()
    assert list(tmp_path.iterdir()) == []


def test_an_error_of_the_lines_is_raised_and_the_writer_stops(tmp_path):
    file = OutputFile(tmp_path / "out.jsonl")

    def lines():
        yield b"a\n"
        raise ValueError("bad line")

    with pytest.raises(ValueError, match="bad line"):
        file.writelines(lines(), block=1)
    file.discard()
    assert list(tmp_path.iterdir()) == []
