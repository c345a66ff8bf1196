"""SPEC section 5 recomputed independently, field by field, through ``escalation score``.

The reference values are computed here with the Python standard library only (``fractions``,
``math``, ``statistics``): no numpy, no scipy and no code of the package, so that a bug shared by
the package and its usual tests cannot hide. The formulas come from SPEC section 5 and from the
literature they cite:

- clusters, ``m_bar = sum(n_j^2) / N`` and ``rho_used`` (1 when rho is undefined): SPEC 5
  (changed 2026-12-01);
- the one-way ANOVA estimator of the intra-cluster correlation with ``n0`` for unequal cluster
  sizes: Donner (1986), "A review of inference procedures for the intraclass correlation
  coefficient in the one-way random effects model", Int. Stat. Review 54, 67-82, eq. for
  ``r_I = (MSB - MSW) / (MSB + (n0 - 1) MSW)``; truncated to [0, 1] as SPEC 5 says;
- the design effect ``1 + (m_bar - 1) rho`` and ``n_eff = N / deff``: Kish (1965), Survey Sampling,
  section 5.4; with ``m_bar = sum n_j^2 / N`` for unequal sizes: Eldridge, Ashby & Kerry (2006),
  Int. J. Epidemiol. 35, 1292-1300, ``deff = 1 + ((cv^2 + 1) N/k - 1) rho`` (the same number);
- the Wilson score interval at ``n_eff``: Wilson (1927), JASA 22, 209-212; Brown, Cai & DasGupta
  (2001), Statistical Science 16, 101-133, eq. (4); ``z`` from ``statistics.NormalDist``.

Every data set is in the canonical JSONL format of SPEC section 6 and scored with the real command
line: one in a subprocess (`python -m escalation`), the others through the `escalation` entry
point in this process (a subprocess costs seconds of imports).
"""
from __future__ import annotations

import contextlib
import io
import json
import math
import re
import subprocess
import sys
from fractions import Fraction
from statistics import NormalDist

import pytest

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


TOL = 1e-9
POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"]}


# --------------------------------------------------------------------------------------------
# The reference (standard library only)
# --------------------------------------------------------------------------------------------

def z_quantile(confidence: float) -> float:
    """The two-sided normal quantile ``z_{1 - alpha/2}`` (Wilson 1927 uses the normal z)."""
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson(rate: float, n: float, confidence: float) -> tuple[float, float]:
    """Wilson (1927) score interval; Brown, Cai & DasGupta (2001) eq. (4), with ``n`` = n_eff:
    ``(p + z^2/2n) / (1 + z^2/n) -+ z / (1 + z^2/n) * sqrt(p(1-p)/n + z^2/4n^2)``."""
    z = z_quantile(confidence)
    k = z * z / n
    centre = (rate + k / 2) / (1 + k)
    half = z / (1 + k) * math.sqrt(rate * (1 - rate) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def anova_rho(sizes: list[int], totals: list[int]) -> Fraction | None:
    """Donner (1986) one-way ANOVA estimator of the intra-cluster correlation of a 0/1 outcome,
    with ``n0 = (N - sum n_j^2 / N) / (k - 1)`` for unequal sizes (SPEC 5), truncated to [0, 1];
    None when undefined (SPEC 5: one cluster, every cluster of size 1, or no variation).

    For 0/1 data with cluster totals ``t_j``: SSB = sum t_j^2/n_j - T^2/N, SSW = sum (t_j - t_j^2/n_j).
    Exact rational arithmetic, so a zero is a zero."""
    k, N, T = len(sizes), sum(sizes), sum(totals)
    if k < 2 or N == k or T == 0 or T == N:
        return None
    ssb = sum(Fraction(t * t, n) for n, t in zip(sizes, totals)) - Fraction(T * T, N)
    ssw = sum(t - Fraction(t * t, n) for n, t in zip(sizes, totals))
    msb = ssb / (k - 1)
    msw = ssw / (N - k)
    n0 = (N - Fraction(sum(n * n for n in sizes), N)) / (k - 1)
    denominator = msb + (n0 - 1) * msw
    if denominator == 0:
        return None
    return min(Fraction(1), max(Fraction(0), (msb - msw) / denominator))


def reference_half(clusters: dict, confidence: float, rho_fixed: float | None) -> dict:
    """SPEC 5 for one half (or for the pairs): ``clusters`` maps a cluster to its 0/1 outcomes."""
    sizes = [len(v) for v in clusters.values()]
    totals = [sum(v) for v in clusters.values()]
    N, T = sum(sizes), sum(totals)
    if N == 0:
        return {"errors": 0, "n": 0, "rate": None, "ci": None}
    m_bar = Fraction(sum(n * n for n in sizes), N)             # SPEC 5; Eldridge et al. (2006)
    rho = anova_rho(sizes, totals)                               # Donner (1986)
    rho_used = (Fraction(rho_fixed) if rho_fixed is not None     # SPEC 5: fixed, else estimate,
                else rho if rho is not None else Fraction(1))    # else 1 when undefined
    deff = 1 + (m_bar - 1) * rho_used                            # Kish (1965)
    n_eff = N / deff
    rate = Fraction(T, N)
    return {"errors": T, "n": N, "rate": float(rate), "clusters": len(sizes),
            "rho": None if rho is None else float(rho), "rho_used": float(rho_used),
            "deff": float(deff), "n_eff": float(n_eff),
            "ci": list(wilson(float(rate), float(n_eff), confidence))}


def test_wilson_against_published_r_values():
    """R 4.x ``prop.test(x, n, correct = FALSE)$conf.int`` (the Wilson score interval)."""
    published = {(1, 2): (0.09453121, 0.90546879),   # also SPEC 7 and 8: (0.0945, 0.9055)
                 (0, 10): (0.00000000, 0.27753280),
                 (5, 10): (0.23659309, 0.76340691)}
    for (x, n), (lo, hi) in published.items():
        got = wilson(x / n, n, 0.95)
        assert got[0] == pytest.approx(lo, abs=1e-7) and got[1] == pytest.approx(hi, abs=1e-7), (x, n, got)


def test_anova_reference_on_a_hand_example():
    """Sizes 2 and 2, totals 2 and 0: MSB = 2, MSW = 0, rho = 1; totals 1 and 1: MSB = 0 -> 0."""
    assert anova_rho([2, 2], [2, 0]) == 1
    assert anova_rho([2, 2], [1, 1]) == 0
    # sizes 2, 3 with totals 2, 1: N = 5, k = 2, n0 = (5 - 13/5) / 1 = 12/5,
    # SSB = 4/2 + 1/3 - 9/5 = 8/15, SSW = 0 + (1 - 1/3) = 2/3, MSB = 8/15, MSW = 2/9,
    # rho = (8/15 - 2/9) / (8/15 + 7/5 * 2/9) = (14/45) / (38/45) = 7/19
    assert anova_rho([2, 3], [2, 1]) == Fraction(7, 19)


# --------------------------------------------------------------------------------------------
# Data sets (SPEC 6): one line per conversation
# --------------------------------------------------------------------------------------------

def _conversation(case: str, label: str, replica: int, error: int) -> dict:
    """An ESC conversation with ``u = error`` or an ACT conversation with ``o = error`` (SPEC 3)."""
    escalates = (error == 0) if label == "ESC" else (error == 1)
    calls = [{"turn": 0, "name": "get_order"}]
    if escalates:
        calls.append({"turn": 0, "name": "transfer_to_human"})
    return {"conversation_id": f"{case}-{label}-{replica}", "case_id": case, "label": label,
            "replica": replica, "assistant_turns": 1, "tool_calls": calls}


def build(esc: list[list[int]], act: list[list[int]]) -> list[dict]:
    """``esc[i]`` / ``act[i]``: the 0/1 errors of the replicas of case ``c{i}`` in that half."""
    lines = []
    for label, half in (("ESC", esc), ("ACT", act)):
        for i, errors in enumerate(half):
            lines += [_conversation(f"c{i}", label, r, e) for r, e in enumerate(errors)]
    return lines


def errs(n: int, k: int) -> list[int]:
    """``n`` replicas, the first ``k`` of them errors."""
    return [1] * k + [0] * (n - k)


# ESC sizes 1, 2, 5, 9 (errors vary between scenarios: rho defined, > 0); ACT sizes 3, 1, 4, 6.
UNEQUAL = build(esc=[errs(1, 1), errs(2, 0), errs(5, 4), errs(9, 1)],
                act=[errs(3, 0), errs(1, 1), errs(4, 3), errs(6, 0)])
DATA = {
    "unequal": (UNEQUAL, []),
    "unequal_rho03": (UNEQUAL, ["--rho", "0.3"]),
    "unequal_conf90": (UNEQUAL, ["--confidence", "0.9"]),
    # the ANOVA estimate is negative and truncates to 0: ESC 0 < MSB < MSW (rates 1/2, 1/2, 2/3);
    # ACT: every scenario has the same rate, MSB = 0 < MSW
    "negative": (build(esc=[errs(2, 1), errs(4, 2), errs(6, 4)],
                       act=[errs(3, 1), errs(3, 1), errs(6, 2), errs(3, 1)]), []),
    # no variation: every ESC conversation fails, no ACT conversation does
    "no_variation": (build(esc=[errs(3, 3), errs(4, 4), errs(2, 2), errs(5, 5)],
                           act=[errs(2, 0), errs(5, 0), errs(3, 0)]), []),
    "no_variation_conf90": (build(esc=[errs(3, 3), errs(4, 4), errs(2, 2), errs(5, 5)],
                                  act=[errs(2, 0), errs(5, 0), errs(3, 0)]), ["--confidence", "0.9"]),
    # a single scenario per half, several replicas: rho undefined, deff = N, n_eff = 1
    "single": (build(esc=[errs(6, 2)], act=[errs(4, 1)]), []),
    # every scenario of size 1: m_bar = 1, deff = 1 whatever rho (12 and 11 scenarios: no warning)
    "all_size_one": (build(esc=[[e] for e in errs(12, 5)], act=[[e] for e in errs(11, 2)]), []),
    "all_size_one_rho03": (build(esc=[[e] for e in errs(12, 5)], act=[[e] for e in errs(11, 2)]),
                           ["--rho", "0.3"]),
    # 11 ESC scenarios of unequal sizes (no warning), 4 ACT scenarios (a warning)
    "many_esc": (build(esc=[errs(n, k) for n, k in [(1, 0), (2, 1), (3, 3), (4, 0), (5, 1), (1, 1),
                                                    (2, 2), (3, 0), (6, 2), (2, 0), (7, 5)]],
                       act=[errs(2, 1), errs(3, 0), errs(1, 0), errs(4, 2)]), []),
}


def reference_summary(lines: list[dict], confidence: float, rho_fixed: float | None) -> dict:
    """Every number of SPEC 5 for a data set built by ``build`` (every conversation evaluated)."""
    halves = {"ESC": {}, "ACT": {}}
    by_key = {}
    for c in lines:
        error = len(c["tool_calls"]) == 1 if c["label"] == "ESC" else len(c["tool_calls"]) == 2
        halves[c["label"]].setdefault((c["case_id"], c["label"]), []).append(int(error))
        by_key[(c["case_id"], c["label"], c["replica"])] = int(error)
    pairs = {}                                   # SPEC 5: same case and replica; cluster = case
    for (case, label, replica), e in by_key.items():
        if label == "ESC" and (case, "ACT", replica) in by_key:
            o = by_key[(case, "ACT", replica)]
            pairs.setdefault(case, []).append((1 - e) * (1 - o))
    return {"under": reference_half(halves["ESC"], confidence, rho_fixed),
            "over": reference_half(halves["ACT"], confidence, rho_fixed),
            "paired": reference_half(pairs, confidence, rho_fixed)}


# --------------------------------------------------------------------------------------------
# Running the command line
# --------------------------------------------------------------------------------------------

SUBPROCESS = "unequal"   # this one through `python -m escalation`; the others through the entry point


def _in_process(args: list[str]) -> tuple[int, str, str]:
    """``escalation ARGS`` through the ``escalation`` entry point (``escalation.cli:main``), in this
    process: a subprocess costs seconds of imports, and the file must stay fast."""
    from escalation.cli import main

    argv, out, err = sys.argv, io.StringIO(), io.StringIO()
    sys.argv = ["escalation", *args]
    code = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
    except SystemExit as exit_:
        code = exit_.code or 0
    finally:
        sys.argv = argv
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("spec5")
    policy = root / "policy.json"
    policy.write_text(json.dumps(POLICY))
    results, child = {}, None
    for name in [SUBPROCESS, *(n for n in DATA if n != SUBPROCESS)]:   # the child runs meanwhile
        lines, options = DATA[name]
        records = root / f"{name}.jsonl"
        records.write_text("".join(json.dumps(line) + "\n" for line in lines))
        out = root / name
        # section 5's interval, the paper's Wilson-Kish (the default, auto, carries it as ci_wilson_kish: below)
        args = ["score", str(records), "--policy", str(policy), "--out", str(out), "--interval", "wilson-kish",
                *options]
        if name == SUBPROCESS:
            child = subprocess.Popen([sys.executable, "-m", "escalation", *args], text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            continue
        results[name] = (out, *_in_process(args))
    stdout, stderr = child.communicate(timeout=120)
    results[SUBPROCESS] = (root / SUBPROCESS, child.returncode, stdout, stderr)
    return {name: {"code": code, "stdout": stdout, "stderr": stderr,
                   "summary": json.loads((out / "summary.json").read_text())
                   if (out / "summary.json").exists() else None}
            for name, (out, code, stdout, stderr) in results.items()}


def _options(name):
    options = DATA[name][1]
    confidence = float(options[options.index("--confidence") + 1]) if "--confidence" in options else 0.95
    rho = float(options[options.index("--rho") + 1]) if "--rho" in options else None
    return confidence, rho


def _close(got, want) -> bool:
    if want is None or got is None:
        return got is None and want is None
    if isinstance(want, list):
        return isinstance(got, list) and len(got) == len(want) and all(_close(g, w) for g, w in zip(got, want))
    return abs(got - want) <= TOL


@pytest.mark.parametrize("name", list(DATA))
def test_summary_matches_spec5_field_by_field(runs, name):
    run = runs[name]
    assert run["code"] == 0, run["stderr"]
    summary = run["summary"]
    confidence, rho = _options(name)
    want = reference_summary(DATA[name][0], confidence, rho)
    assert summary["confidence"] == pytest.approx(confidence, abs=TOL)
    wrong = []
    for half in ("under", "over"):
        for field, value in want[half].items():
            got = summary[half].get(field, "<missing>")
            if got == "<missing>" or not _close(got, value):
                wrong.append(f"{half}.{field}: expected {value!r}, got {got!r}")
    p_want, p_got = want["paired"], summary["paired"]
    if p_got.get("pairs") != p_want["n"]:
        wrong.append(f"paired.pairs: expected {p_want['n']}, got {p_got.get('pairs')!r}")
    if not _close(p_got.get("pi"), p_want["rate"]):
        wrong.append(f"paired.pi: expected {p_want['rate']!r}, got {p_got.get('pi')!r}")
    for field in ("clusters", "rho", "rho_used", "deff", "n_eff", "ci"):
        got = p_got.get(field, "<missing>")
        if got == "<missing>" or not _close(got, p_want[field]):
            wrong.append(f"paired.{field}: expected {p_want[field]!r}, got {got!r}")
    assert not wrong, f"{name}:\n" + "\n".join(wrong)


@pytest.mark.parametrize("name", ["unequal", "many_esc"])
def test_the_default_interval_carries_section_5_s_beside_it(tmp_path, name):
    """With the default --interval auto, every figure still reports section 5's Wilson-Kish interval, as
    ``ci_wilson_kish``; its ``ci`` is the interval its ``interval`` names (issue 36)."""
    records, policy = tmp_path / "records.jsonl", tmp_path / "policy.json"
    records.write_text("".join(json.dumps(line) + "\n" for line in DATA[name][0]))
    policy.write_text(json.dumps(POLICY))
    code, _, err = _in_process(["score", str(records), "--policy", str(policy), "--out", str(tmp_path / "out"),
                                *DATA[name][1]])
    assert code == 0, err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    want = reference_summary(DATA[name][0], *_options(name))
    assert summary["interval"] == "auto"
    for half, got in (("under", summary["under"]), ("over", summary["over"]), ("paired", summary["paired"])):
        assert _close(got["ci_wilson_kish"], want[half]["ci"]), (half, got["ci_wilson_kish"], want[half]["ci"])
        assert got["interval"] not in ("auto", None) and got["interval_reason"].startswith("auto: ")


def test_the_data_sets_are_what_they_claim():
    """The reference itself: each data set exercises the case it is named for."""
    unequal = reference_summary(UNEQUAL, 0.95, None)
    assert unequal["under"]["rho"] is not None and unequal["under"]["rho"] > 0
    assert unequal["over"]["rho"] is not None and unequal["over"]["rho"] > 0
    negative = reference_summary(DATA["negative"][0], 0.95, None)
    sizes, totals = [2, 4, 6], [1, 2, 4]                     # raw estimate negative before truncation
    N, k = sum(sizes), len(sizes)
    msb = (sum(Fraction(t * t, n) for n, t in zip(sizes, totals)) - Fraction(sum(totals) ** 2, N)) / (k - 1)
    msw = sum(t - Fraction(t * t, n) for n, t in zip(sizes, totals)) / (N - k)
    assert 0 < msb < msw and negative["under"]["rho"] == 0.0 and negative["under"]["deff"] == 1.0
    no_var = reference_summary(DATA["no_variation"][0], 0.95, None)
    assert no_var["under"]["rho"] is None and no_var["under"]["deff"] == pytest.approx((9 + 16 + 4 + 25) / 14)
    single = reference_summary(DATA["single"][0], 0.95, None)
    assert single["under"]["deff"] == 6 and single["under"]["n_eff"] == 1
    ones = reference_summary(DATA["all_size_one_rho03"][0], 0.95, 0.3)
    assert ones["under"]["deff"] == 1 and ones["under"]["rho_used"] == 0.3


# --------------------------------------------------------------------------------------------
# SPEC 7: warnings for a half on fewer than 10 scenarios; the readable summary
# --------------------------------------------------------------------------------------------

HALF_WORDS = {"under": ("under", "p_u", "esc"), "over": ("over", "p_o", "act")}


def _warnings_about(summary: dict, half: str) -> list[str]:
    warnings = summary.get("warnings")
    assert warnings is not None, "summary.json has no `warnings`"
    items = list(warnings.items()) if isinstance(warnings, dict) else [(None, w) for w in warnings]
    found = []
    for key, w in items:
        text = (f"{key} " if key else "") + (w if isinstance(w, str) else json.dumps(w))
        words = re.findall(r"[a-z_]+", text.lower())
        if any(word in HALF_WORDS[half] for word in words):
            found.append(text)
    return found


@pytest.mark.parametrize("name", list(DATA))
def test_warnings_for_halves_on_fewer_than_10_scenarios(runs, name):
    summary = runs[name]["summary"]
    want = reference_summary(DATA[name][0], *_options(name))
    for half in ("under", "over"):
        about = _warnings_about(summary, half)
        if want[half]["clusters"] < 10:
            assert about, f"{name}: no warning about {half} ({want[half]['clusters']} scenarios): {summary['warnings']}"
            assert any(str(want[half]["clusters"]) in re.findall(r"\d+", w) for w in about), \
                f"{name}: the warning about {half} does not give its {want[half]['clusters']} scenarios: {about}"
        else:
            few = [w for w in about if "fewer than 10" in w]  # other warnings may say where an interval failed
            assert not few, f"{name}: a warning of few scenarios about {half} with {want[half]['clusters']}: {few}"


def _row(stdout: str, start: str) -> str:
    rows = [line for line in stdout.splitlines() if line.strip().startswith(start)]
    assert len(rows) == 1, f"no single row starting {start!r} in:\n{stdout}"
    return rows[0]


@pytest.mark.parametrize("name", ["unequal", "no_variation", "single", "all_size_one", "many_esc"])
def test_readable_summary_shows_rho_undefined_and_scenarios(runs, name):
    stdout = runs[name]["stdout"]
    want = reference_summary(DATA[name][0], *_options(name))
    for half, start in (("under", "p_u"), ("over", "p_o")):
        row = _row(stdout, start)
        tokens = row.replace("│", " ").split()
        assert ("n/a" in tokens) == (want[half]["rho"] is None), f"{name}: rho of {half} in {row!r}"
        assert str(want[half]["clusters"]) in tokens or \
            re.search(rf"\b{want[half]['clusters']} scenarios\b", stdout), \
            f"{name}: the number of scenarios of {half} ({want[half]['clusters']}) is not shown:\n{stdout}"
