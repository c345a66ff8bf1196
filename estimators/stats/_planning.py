"""Sample-size plans: how many scenarios and replicas an evaluation needs.

Three plans, each solved for whichever one of its unknowns is ``None`` (as
``statsmodels.stats.power.solve_power`` does; exactly one may be ``None``):

- :func:`plan_interval`: scenarios ``K``, replicas ``m`` or half-width ``h`` of the
  Wilson-Kish interval of a rate (``p_u`` or ``p_o``; SPEC section 5), or of the
  ``wilson-kish-t`` interval (t on ``K - 1`` degrees of freedom).
- :func:`plan_paired_figure`: the same for the paired figure ``pi``, whose clusters are cases.
- :func:`plan_difference`: scenarios, replicas or power to detect a difference between two
  assistants' rates, paired by scenario or unpaired (Donner & Klar 2000, with the design effect),
  for a z test or a t test on the scenarios.

Replicas are not independent, so more replicas cannot replace more scenarios: as
``m -> inf`` the design effect grows like ``m rho`` and ``K`` falls to the *floor*
``z^2 p (1-p) rho / h^2`` (normal rule), below which no number of replicas goes.

Unequal scenario sizes (SPEC section 5 as changed on 2026-12-01)
================================================================
``replicas`` is the mean number ``m`` of conversations per scenario, so ``N = K m``. When the
scenarios differ in size, ``size_cv`` gives the coefficient of variation of their sizes
(population standard deviation over mean), or ``sizes`` gives the sizes themselves (of a
pilot, or of the planned evaluation). Every plan then takes the design effect of SPEC
section 5, Kish's ``1 + (m_bar - 1) rho`` (:func:`estimators.design_effect`), at the
size-weighted mean size ``m_bar = sum n_j^2 / N``:

- with ``sizes``: ``m_bar = m * size_weighted_mean(sizes) / mean(sizes)``
  (:func:`estimators.size_weighted_mean`), the sizes' own ``m_bar`` when ``m`` is their mean;
- with ``size_cv``: ``m_bar = m (1 + cv^2)``, the same number for sizes of mean ``m`` and
  coefficient of variation ``cv``, i.e. ``deff = 1 + ((cv^2 + 1) m - 1) rho`` (Eldridge,
  Ashby & Kerry 2006, "Sample size for cluster randomized trials: effect of coefficient of
  variation of cluster size and analysis method", Int. J. Epidemiol. 35:1292-1300).

``size_cv = 0`` (the default) is the plan for equal sizes. The floor grows to
``z^2 p (1-p) rho (1 + cv^2) / h^2``.

Limits
======
A plan has at most :data:`MAX_PLAN_SIZE` (a million) scenarios (or cases) and as many replicas,
and a scenario size of ``sizes`` is at most that too; ``size_cv`` is at most
:data:`MAX_SIZE_CV`. A target that needs more (a half-width of 1e-10, two rates 1e-7 apart) is
a ValueError that says how many it would need: no evaluation runs that many conversations, and
the solvers, which step one scenario at a time, would not end (``K + 1 == K`` in floating point
beyond 2**53).

z or t
======
A test on ``K`` scenarios estimates its variance from the scenarios, so with few scenarios
its statistic has heavier tails than the normal. ``test="t"`` (the default of
:func:`plan_difference`) plans for the t test on ``K - 1`` degrees of freedom (paired test on
the scenario differences) or ``2 K - 2`` (unpaired test on the two assistants' scenario
means), with the power of the noncentral t (``K`` is iterated, since the degrees of freedom
depend on it). ``test="z"`` is the normal rule of the textbooks. The sample-size study
(``escalation study sample-size``) measures the size and power of both. Under the null, with
p = 0.15 and 5 replicas, the paired z test rejected up to 12.8% at nominal 5% with 5 to 12
scenarios and 6.6% with 24, the unpaired cluster z test 10.0% and 6.0%; the t tests at most 5.7%
and 5.4% (the unpaired one 6.3% with 5 scenarios of unequal size), and less where errors are
rare. Planned for t, each test reached its 80% power (within 2 MCSE) in 27 or 28 of 28 plans, for
1 (unpaired) or 2 (paired) more scenarios than the z plan.

A paired plan is for the test that ``escalation compare`` runs (:data:`COMPARE_INTERVAL`): ``t`` for
``--interval wilson-kish-t`` (Newcombe's interval with Wilson-Kish-t limits), ``z`` for ``--interval
wilson-kish``; ``DifferencePlan.compare_interval`` names it. ``compare`` compares two assistants on the same
scenarios only, so an unpaired plan has none.

The plans live in :mod:`._interval_plan` and :mod:`._difference_plan`; this module holds what they share: the
limits, the spread of the scenario sizes and the checks of the inputs.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ._checks import check_count, check_range, refuse
from ._constants import MAX_PLAN_SIZE
from ._design import size_weighted_mean

__all__ = ["PLAN_INTERVAL_METHODS", "PLAN_TESTS", "DEFAULT_TEST", "COMPARE_INTERVAL", "MAX_PLAN_SIZE", "MAX_SIZE_CV"]

_DESIGNS = ("paired", "unpaired")
#: Intervals an interval plan can be made for (:func:`estimators.clustered_interval` names).
PLAN_INTERVAL_METHODS = ("wilson-kish", "wilson-kish-t")
#: Tests a power plan can be made for.
PLAN_TESTS = ("t", "z")
#: The ``escalation compare --interval`` whose test each planned test is (paired design): Newcombe's interval
#: with Wilson-Kish-t limits inverts a paired t test on ``K - 1`` degrees of freedom to first order (each limit
#: is ``t * se`` of its rate, combined with ``psi``: ``t * sqrt(V(m) / K)`` of the plan), with Wilson-Kish
#: limits the z test. Simulated (independent beta scenario rates, 4000 data sets a design, MCSE 0.0064; four
#: paired designs planned for 80%): the t plan's power against Newcombe-t's rejection rate 0.808/0.798,
#: 0.804/0.787, 0.808/0.810, 0.801/0.785 (Newcombe's 0 to 0.017 below the plan), its size 0.044 to 0.053
#: at nominal 0.05; the z plan against Newcombe with Wilson-Kish limits 0.807/0.796, 0.803/0.796, 0.807/0.809,
#: 0.801/0.788, its size 0.046 to 0.065.
COMPARE_INTERVAL = {"t": "wilson-kish-t", "z": "wilson-kish"}
#: The test of :func:`plan_difference` unless told otherwise (the study: t holds its size).
DEFAULT_TEST = "t"
#: The largest coefficient of variation of the scenario sizes (``m_bar = m (1 + cv^2)``: 10001 m).
MAX_SIZE_CV = 100.0


def _as_dict(obj) -> dict:
    """Plain-Python dict of a frozen plan (floats, ints, str), ready for JSON."""
    out = {}
    for field in dataclasses.fields(obj):
        value = getattr(obj, field.name)
        if isinstance(value, (np.floating, np.integer)):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            value = None
        out[field.name] = value
    return out


# ---------------------------------------------------------------- validation

def _check_count(name, value, least: int = 1):
    return check_count(name, value, least, MAX_PLAN_SIZE, whole_floats=True, note=" (no evaluation runs more)")


def _within_limit(name, needed, target: str, *parameters: str) -> None:
    """ValueError when a solved ``name`` (``needed``, unrounded; NaN or inf when no finite one does)
    passes :data:`MAX_PLAN_SIZE`; ``target`` says what it was solved for (```half_width`=1e-10``), naming
    ``parameters``."""
    needed = float(np.max(needed))
    if not needed <= MAX_PLAN_SIZE:
        raise refuse(f"no plan of at most {MAX_PLAN_SIZE:,} {name} reaches {target}: it needs about "
                     f"{needed:.3g} {name}", *parameters)


def _check_half_width(value):
    return check_range("half_width", value, 0.0, 0.5, note=" (a Wilson interval is never wider than 1)")


def _one_unknown(**given):
    """Name of the single ``None`` argument; ValueError naming them otherwise."""
    missing = [name for name, value in given.items() if value is None]
    if len(missing) != 1:
        names = ", ".join(given)
        raise ValueError(f"exactly one of {names} must be None (the unknown to solve for); "
                         f"got {len(missing)} None: {missing or 'none'}")
    return missing[0]


def _size_spread(size_cv, sizes) -> tuple[float, float]:
    """``(m_bar / m, cv)`` of the scenario sizes: from ``sizes`` by the one rule, else ``1 + cv^2``.

    With ``sizes``, ``m_bar / m = size_weighted_mean(sizes) / mean(sizes)`` (SPEC section 5) and
    ``cv = sqrt(m_bar / m - 1)``, the population coefficient of variation of the sizes.
    """
    if sizes is not None:
        if size_cv:
            raise refuse("give `size_cv` or `sizes` (whose spread gives it), not both", "size_cv", "sizes")
        n = np.asarray(sizes, dtype=float).ravel()
        if n.size == 0 or not np.all(np.isfinite(n)) or np.any(n < 1) or np.any(n != np.round(n)) \
                or np.any(n > MAX_PLAN_SIZE):
            raise refuse(f"`sizes` must be whole numbers >= 1 (conversations per scenario), at most "
                         f"{MAX_PLAN_SIZE:,}; got {sizes!r}", "sizes")
        ratio = float(size_weighted_mean(n)) / float(n.mean())
        return ratio, math.sqrt(max(ratio - 1.0, 0.0))
    cv = check_range("size_cv", size_cv, 0.0, MAX_SIZE_CV, closed="both")
    return 1.0 + cv * cv, cv
