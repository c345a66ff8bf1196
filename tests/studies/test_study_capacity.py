"""The capacity study (``escalation study capacity``): its files, the inverted U from the model itself,
the event simulation against Erlang C, bit-identical results for any n_jobs, and a bad option."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from escalation.estimators.stats import erlang_c, mean_wait_minutes
from escalation.studies import CAPACITY_SEED
from escalation.studies.capacity._capacity import ASSISTANT, protection_curve, simulate_queue

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


TABLES = ("protection", "best", "agreement", "rates", "validation")


def _run(out, *extra):
    return subprocess.run([sys.executable, "-m", "escalation", "study", "capacity", "--smoke", "--out", str(out),
                           *extra], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("capacity")
    one, two = root / "one", root / "two"
    for out, jobs in ((one, "1"), (two, "2")):
        done = _run(out, "--n-jobs", jobs)
        assert done.returncode == 0, done.stderr
        # a smoke run states no finding (issue 30: it printed the best thresholds as if they were found)
        assert "t*=" not in done.stdout and "a smoke run (--smoke: tiny sizes" in " ".join(done.stdout.split())
    return one, two


def test_files(runs):
    out, _ = runs
    for name in TABLES:
        assert (out / f"{name}.csv").is_file() and (out / f"{name}.md").is_file()
    for name in ("protection", "validation"):
        assert (out / f"{name}.png").read_bytes()[:4] == b"\x89PNG"
        assert (out / f"{name}.pdf").read_bytes()[:4] == b"%PDF"
    for name in ("report.md", "report.html", "run.json", "design.csv", "measurements.csv", "queue_runs.csv"):
        assert (out / name).is_file()
    report = (out / "report.md").read_text(encoding="utf-8")
    assert report.startswith("# Oversight capacity")
    assert "## Findings\n\nNot drawn from a smoke run" in report and "The protection is an inverted U" not in report


def test_bit_identical_for_any_n_jobs(runs):
    one, two = runs
    for name in (*TABLES, "measurements", "queue_runs"):
        assert (one / f"{name}.csv").read_bytes() == (two / f"{name}.csv").read_bytes(), name


def test_inverted_u_at_the_true_rates():
    """With one reviewer the protection at the true rates peaks inside (0, 1): more escalation is less safe."""
    t = np.linspace(0.0, 1.0, 201)
    interior = []
    for r in ASSISTANT["reviewers"]:
        protection = protection_curve(t, r)["protection"]
        best = int(np.argmax(protection))
        if 0 < best < len(t) - 1 and protection[best] > protection[0] + 0.1 and protection[best] > protection[-1] + 0.1:
            interior.append(r)
    assert 1 in interior and 2 in interior
    # with many reviewers escalating everything is best under the default assumptions
    assert int(np.argmax(protection_curve(t, 8)["protection"])) == len(t) - 1


def test_event_simulation_agrees_with_erlang_c():
    """M/M/2 at rho = 0.6: the SimPy queue's P(wait) and mean wait within 4 MCSE of Erlang C."""
    rng = np.random.default_rng(CAPACITY_SEED)
    reviewers, tau, rho = 2, 4.0, 0.6
    lam = rho * reviewers * 60.0 / tau
    runs = [simulate_queue(lam, reviewers, tau, warmup=500, customers=3000, rng=rng) for _ in range(8)]
    load = lam * tau / 60.0
    for name, closed in (("p_wait", float(erlang_c(load, reviewers))),
                         ("mean_wait", float(mean_wait_minutes(load, reviewers, tau)))):
        values = np.array([r[name] for r in runs])
        mcse = values.std(ddof=1) / math.sqrt(len(values))
        assert abs(values.mean() - closed) <= 4 * mcse, (name, values.mean(), closed, mcse)


def test_bad_option_exits_2_with_one_line(tmp_path):
    done = _run(tmp_path / "out", "--n-jobs", "0")
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "--n-jobs" in lines[0], done.stderr
    assert not (tmp_path / "out").exists()
