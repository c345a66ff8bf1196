"""Two intervals of a researcher's, for `escalation study coverage --method NAME=intervals.py:FUNCTION`.

Each takes the cluster totals and sizes of many data sets at once, arrays of shape (data sets, scenarios), and
returns the two bounds, arrays of shape (data sets,).
"""
import numpy as np
from scipy import stats


def wilson_moment(totals, sizes, confidence):
    """Wilson on the effective size N / deff, deff = 1 + (m_bar - 1) rho, with rho the beta-binomial moment
    estimate from the spread of the scenario rates, (m s^2 / (p (1 - p)) - 1) / (m - 1), clipped to [0, 1]."""
    n = sizes.sum(axis=1)
    p = totals.sum(axis=1) / n
    m = (sizes**2).sum(axis=1) / n
    spread = ((totals / sizes - p[:, None]) ** 2).sum(axis=1) / (totals.shape[1] - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = np.clip(np.nan_to_num((m * spread / (p * (1 - p)) - 1) / (m - 1)), 0, 1)
    n_eff = n / (1 + (m - 1) * rho)
    z = stats.norm.ppf(0.5 + confidence / 2)
    centre = (p + z**2 / (2 * n_eff)) / (1 + z**2 / n_eff)
    half = z / (1 + z**2 / n_eff) * np.sqrt(p * (1 - p) / n_eff + z**2 / (4 * n_eff**2))
    return centre - half, centre + half


# with equal sizes it reads the data through Y = sum y_j and S = sum y_j^2 alone: exact coverage there
wilson_moment.sufficient = "total-and-squares"


def jeffreys_kish(totals, sizes, confidence):
    """Jeffreys interval (Beta(y + 1/2, n - y + 1/2) quantiles) on the Kish effective size, rho the ANOVA estimate
    (1 where undefined), as the package's Wilson-Kish reads it."""
    from escalation.estimators.stats import anova_icc

    n = sizes.sum(axis=1)
    p = totals.sum(axis=1) / n
    m = (sizes**2).sum(axis=1) / n
    n_eff = n / (1 + (m - 1) * np.nan_to_num(anova_icc(totals, sizes), nan=1.0))
    y = p * n_eff
    tail = (1 - confidence) / 2
    low = np.where(y > 0, stats.beta.ppf(tail, y + 0.5, n_eff - y + 0.5), 0.0)
    high = np.where(y < n_eff, stats.beta.ppf(1 - tail, y + 0.5, n_eff - y + 0.5), 1.0)
    return low, high


jeffreys_kish.sufficient = "total-and-squares"
