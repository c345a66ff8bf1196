"""Scenarios are drawn in chunks of ``simulate._world.CASES_PER_CHUNK`` cases, each from its own seed."""
from __future__ import annotations

import pytest

import escalation.simulate as S
from escalation.simulate._world import CASES_PER_CHUNK

from .test_simulate import frames_equal


@pytest.mark.slow
def test_chunks_do_not_depend_on_each_other_nor_on_parallel_workers():
    small = S.simulate("follows_policy", cases=CASES_PER_CHUNK, replicas=1, rho=0.3, seed=9)
    large = S.simulate("follows_policy", cases=2 * CASES_PER_CHUNK + 100, replicas=1, rho=0.3, seed=9)
    frames_equal(small, large, rows=2 * CASES_PER_CHUNK)
    parallel = S.simulate("follows_policy", cases=2 * CASES_PER_CHUNK + 100, replicas=1, rho=0.3, seed=9, n_jobs=2)
    frames_equal(large, parallel)
