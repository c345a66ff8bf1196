"""The data-generating models of the coverage study besides its beta-binomial, and the contract of a
researcher's own.

A generator is a function ``g(rng, sizes, row) -> totals``:

- ``rng``, the :class:`numpy.random.Generator` of the chunk of data sets (draw from it alone, so that the
  cell's seed fixes the data);
- ``sizes``, an integer array of shape (data sets, scenarios), each row the cell's scenario sizes;
- ``row``, the cell's row of ``design.csv`` as a dict (``estimand``, ``p``, ``rho``, ``rho_outcome``,
  ``scenarios``, ``replicas``, ``size_cv``, ``nsim``, ...);
- ``totals``, integers of the shape of ``sizes`` with ``0 <= totals <= sizes``: each scenario's errors for
  ``p_u``, each case's correct pairs for ``pi``.

The truth every interval is scored against is ``row["p"]``: a generator's data must have that mean rate,
and their intra-cluster correlation should be ``rho_outcome`` (the true-rho oracle uses it). Exact coverage
is the beta-binomial's alone (it enumerates that model's data); under any other generator every method is
Monte Carlo.

Logit-normal (``--generator logit-normal``)
    Scenario ``j`` has ``q_j = expit(mu + sigma z_j)``, ``z_j ~ N(0, 1)``, and Binomial(``n_j, q_j``)
    errors. ``rho`` is the intra-cluster correlation on the latent scale, ``rho = sigma^2 / (sigma^2 +
    pi^2 / 3)`` (the latent-variable definition of the ICC of a logistic random-intercept model: Snijders &
    Bosker 2012, *Multilevel Analysis*, 2nd ed., section 17.3; Goldstein, Browne & Rasbash 2002), so
    ``sigma^2 = (pi^2 / 3) rho / (1 - rho)``; ``mu`` is set so that the marginal mean ``E[q] = p``
    (numerical integration over ``z``), so ``p`` is the truth as in the beta-binomial. The outcome's
    correlation on the 0/1 scale, ``Var(q) / (p (1 - p))``, is smaller than ``rho``: it is
    ``rho_outcome`` in ``design.csv`` (:func:`observed_icc`). For ``pi`` both scenarios of a case draw
    their ``q`` so, with mean ``a = 1 - sqrt(pi)``, as the beta-binomial does.
Rates of a real run (``--from-run DIR``)
    :class:`RunRates`: the per-scenario under-escalation rates ``r_1 .. r_J`` of a scored folder (the mean
    ``u`` of each scenario's evaluated ESC conversations in ``DIR/conversations.jsonl``) are taken as the
    world: each scenario of a data set draws its rate ``q`` uniformly, with replacement, from them, and its
    errors are Binomial(``n_j, q``) with the cell's sizes. The truth is their mean ``p = mean r_j`` and the
    outcome's correlation ``Var(r) / (p (1 - p))`` (population variance); the observed rates carry the
    run's binomial noise, so this world's spread between scenarios is somewhat larger than the run's true
    one. ``p_u`` only.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
from scipy import integrate, optimize, special

from escalation.estimators.records import InputError

__all__ = ["GENERATORS", "logit_normal_parameters", "observed_icc", "logit_normal", "RunRates", "checked_totals"]

#: The generators ``--generator`` names; ``beta-binomial`` is the study's own (:func:`._coverage.beta_binomial`).
GENERATORS = ("beta-binomial", "logit-normal")


def _mean_and_second_moment(mu: float, sigma: float) -> tuple[float, float]:
    """``E[q]`` and ``E[q^2]`` of ``q = expit(mu + sigma Z)``, ``Z ~ N(0, 1)``."""
    density = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    first = integrate.quad(lambda z: special.expit(mu + sigma * z) * density(z), -np.inf, np.inf, epsabs=1e-14)[0]
    second = integrate.quad(lambda z: special.expit(mu + sigma * z) ** 2 * density(z), -np.inf, np.inf,
                            epsabs=1e-14)[0]
    return first, second


@lru_cache(maxsize=1024)
def logit_normal_parameters(p: float, rho: float) -> tuple[float, float]:
    """``(mu, sigma)`` of the logit-normal scenario rates with marginal mean ``p`` and latent ICC ``rho``.

    ``sigma^2 = (pi^2 / 3) rho / (1 - rho)``; ``mu`` solves ``E[expit(mu + sigma Z)] = p``.

    Examples
    --------
    >>> mu, sigma = logit_normal_parameters(0.1, 0.2)
    >>> round(sigma**2 / (sigma**2 + math.pi**2 / 3), 12)
    0.2
    """
    if not (0 < p < 1 and 0 <= rho < 1):
        raise ValueError(f"the logit-normal model needs 0 < p < 1 and 0 <= rho < 1, got p = {p}, rho = {rho}")
    sigma = math.sqrt(math.pi**2 / 3 * rho / (1 - rho))
    if sigma == 0:
        return float(special.logit(p)), 0.0
    start = float(special.logit(p))
    mu = optimize.brentq(lambda m: _mean_and_second_moment(m, sigma)[0] - p, start - 10 * sigma - 10,
                         start + 10 * sigma + 10, xtol=1e-13)
    return float(mu), sigma


@lru_cache(maxsize=1024)
def observed_icc(p: float, rho: float) -> float:
    """The 0/1 outcome's intra-cluster correlation ``Var(q) / (p (1 - p))`` under the logit-normal model of
    mean ``p`` and latent ICC ``rho``."""
    mu, sigma = logit_normal_parameters(p, rho)
    if sigma == 0:
        return 0.0
    _, second = _mean_and_second_moment(mu, sigma)
    return (second - p * p) / (p * (1 - p))


def _logit_normal_rates(p: float, rho: float, shape, rng: np.random.Generator) -> np.ndarray:
    mu, sigma = logit_normal_parameters(p, rho)
    return special.expit(mu + sigma * rng.standard_normal(shape))


def logit_normal(rng: np.random.Generator, sizes: np.ndarray, row: dict) -> np.ndarray:
    """The logit-normal generator (module docstring): totals of the shape of ``sizes``."""
    p, rho = float(row["p"]), float(row["rho"])
    if row["estimand"] == "p_u":
        q = _logit_normal_rates(p, rho, sizes.shape, rng)
    else:
        a = 1.0 - math.sqrt(p)
        q = (1.0 - _logit_normal_rates(a, rho, sizes.shape, rng)) * (1.0 - _logit_normal_rates(a, rho, sizes.shape,
                                                                                                 rng))
    return rng.binomial(sizes, q)


@dataclass(frozen=True)
class RunRates:
    """The per-scenario under-escalation rates of a scored folder, as a generator (module docstring).

    Attributes
    ----------
    rates : tuple of float
        ``r_j``: each scenario's share of its evaluated ESC conversations with ``u = 1``.
    folder : str
        The folder, resolved.
    sha256 : str
        SHA-256 of its ``conversations.jsonl``.
    """

    rates: tuple[float, ...]
    folder: str
    sha256: str

    @classmethod
    def read(cls, folder) -> RunRates:
        """The rates of the scored folder ``folder`` (``escalation score --out``); :class:`InputError` when it
        has fewer than two ESC scenarios evaluated, or no error or only errors."""
        from escalation.estimators.records import ESC, read_scored

        frame, _ = read_scored(folder)
        esc = frame[frame["evaluated"] & (frame["label"] == ESC)]
        rates = esc.groupby("scenario_id", sort=True)["u"].mean().astype(float)
        source = str(folder)
        if len(rates) < 2:
            raise InputError(f"has {len(rates)} evaluated ESC scenario(s); --from-run needs at least 2", source=source)
        p = float(rates.mean())
        if not 0 < p < 1:
            raise InputError(f"its ESC scenarios have an under-escalation rate of {p:g} each: no interval has a "
                             "truth to miss; --from-run needs a run with errors and without only errors",
                             source=source)
        digest = hashlib.sha256((Path(folder) / "conversations.jsonl").read_bytes()).hexdigest()
        return cls(tuple(float(r) for r in rates), str(Path(folder).resolve()), digest)

    @property
    def p(self) -> float:
        """The truth: the mean of the rates."""
        return float(np.mean(self.rates))

    @property
    def rho(self) -> float:
        """The outcome's intra-cluster correlation in this world, ``Var(r) / (p (1 - p))``."""
        return float(np.var(self.rates) / (self.p * (1 - self.p)))

    def identity(self) -> dict:
        """What ``run-args.json`` records: the folder and the SHA-256 of its conversations."""
        return {"from_run": self.folder, "conversations_sha256": self.sha256, "scenarios": len(self.rates)}

    def __call__(self, rng: np.random.Generator, sizes: np.ndarray, row: dict) -> np.ndarray:
        rates = np.asarray(self.rates)
        return rng.binomial(sizes, rates[rng.integers(rates.size, size=sizes.shape)])


def checked_totals(totals, sizes: np.ndarray, name: str) -> np.ndarray:
    """The totals a generator returned, as integers; :class:`InputError` unless of the shape of ``sizes``,
    whole and within ``0 .. sizes``."""
    where = f"generator {name!r}"
    array = np.asarray(totals)
    if array.shape != sizes.shape:
        raise InputError(f"returned totals of shape {array.shape}; they must have the shape of sizes, {sizes.shape}",
                         source=where)
    if not (np.issubdtype(array.dtype, np.integer) or (np.issubdtype(array.dtype, np.floating)
                                                        and np.all(array == np.round(array)))):
        raise InputError("returned totals that are not whole numbers", source=where)
    array = array.astype(np.int64)
    if np.any(array < 0) or np.any(array > sizes):
        raise InputError("returned totals outside 0 .. sizes", source=where)
    return array
