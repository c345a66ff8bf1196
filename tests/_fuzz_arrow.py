"""The Arrow fast path of canonical JSONL turned off, so the fuzzer can compare it with the reference reader."""
from __future__ import annotations

import contextlib

from escalation.estimators.records import _arrow

__all__ = ["reference_reader"]


def _unavailable(path):
    raise _arrow.FastPathUnavailable("the fuzzer asks for the reference reader")
    yield


@contextlib.contextmanager
def reference_reader():
    """Within the block, every canonical JSONL file is read by the reference reader (as
    ``tests/records/test_arrow_fast_path.py`` does it)."""
    saved = _arrow._arrow_chunks
    _arrow._arrow_chunks = _unavailable
    try:
        yield
    finally:
        _arrow._arrow_chunks = saved
