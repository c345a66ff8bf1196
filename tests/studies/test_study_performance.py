"""The Monte Carlo performance measures of the studies (``studies._performance``), against hand values."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from escalation.studies._performance import binomial_mcse, interval_rows, mean, median, share


def test_binomial_mcse_is_sqrt_p_q_over_n_for_floats_arrays_and_series():
    # Morris, White & Crowther (2019), table 6: MCSE of a coverage c over nsim runs is sqrt(c (1 - c) / nsim)
    assert binomial_mcse(0.95, 1000) == pytest.approx(math.sqrt(0.95 * 0.05 / 1000))
    np.testing.assert_allclose(binomial_mcse(np.array([0.5, 0.0]), np.array([100, 10])), [0.05, 0.0])
    series = binomial_mcse(pd.Series([0.2]), pd.Series([400]))
    assert isinstance(series, pd.Series) and series.iloc[0] == pytest.approx(0.02)


def test_share_counts_the_true_hits_and_keeps_the_keys_first():
    row = share([True, False, False, True], stat="coverage", method="m")
    assert list(row) == ["stat", "method", "est", "mcse"]
    assert row["est"] == 0.5 and row["mcse"] == pytest.approx(0.25)  # sqrt(0.5 * 0.5 / 4)
    empty = share([], stat="s")
    assert math.isnan(empty["est"]) and math.isnan(empty["mcse"])


def test_mean_leaves_out_nan_and_has_mcse_sd_over_sqrt_r():
    row = mean([1.0, 2.0, 3.0, math.nan], stat="bias")
    assert row["est"] == 2.0 and row["mcse"] == pytest.approx(1.0 / math.sqrt(3))  # sd 1 over sqrt(3)
    assert math.isnan(mean([4.0])["mcse"]) and mean([4.0])["est"] == 4.0


def test_median_mcse_is_half_the_order_statistic_interval():
    # R = 16: sqrt(R)/2 = 2, so the order statistics 6 and 10 (0-based) of 0..15, half distance 2
    row = median(np.arange(16.0)[::-1])
    assert row["est"] == 7.5 and row["mcse"] == 2.0


def test_interval_rows_report_coverage_and_both_misses_apart():
    low, high = np.array([0.0, 0.6, -1.0, np.nan]), np.array([1.0, 0.9, 0.4, np.nan])
    rows = {r["stat"]: r for r in interval_rows(low, high, 0.5, method="m")}
    assert [rows[s]["est"] for s in ("coverage", "miss_below", "miss_above")] == [0.25, 0.25, 0.25]
    assert rows["coverage"]["mcse"] == pytest.approx(math.sqrt(0.25 * 0.75 / 4))
    assert list(rows["miss_above"]) == ["stat", "method", "est", "mcse"]
