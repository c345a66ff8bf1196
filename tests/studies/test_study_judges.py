"""The judges study: its checks, its tables, its determinism, its command and the old name of the command."""
from __future__ import annotations

import math
import sys

import numpy as np
import pandas as pd
import pytest

from escalation.cli import main
from escalation.studies.judges._judges import design_grid, run_cell, run_judges_study as run_study

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'



def _by(rows, **keys):
    (row,) = [r for r in rows if all(r.get(k) == v for k, v in keys.items())]
    return row


@pytest.fixture(scope="module")
def calibrated():
    # 800 labelled pairs per data set, 30 data sets per language; every data set has its own judge
    return {lang: run_cell({"part": "calibration", "language": lang, "pairs": 800, "reps": 30},
                           np.random.SeedSequence(77)) for lang in ("en", "es")}


@pytest.mark.parametrize("language", ["en", "es"])
@pytest.mark.parametrize("method", ["platt", "isotonic"])
def test_calibration_with_many_pairs_leaves_no_bias(calibrated, language, method):
    bias = _by(calibrated[language], method=method, stat="bias")
    assert abs(bias["est"]) <= 2 * bias["mcse"]


def test_the_spanish_judge_is_biased_before_calibration_and_calibration_lowers_its_ece(calibrated):
    # the simulated Spanish judge has curve (0.8, 1.8): it over-reads an obligation (simulate._judges)
    raw_bias = _by(calibrated["es"], method="raw", stat="bias")
    assert raw_bias["est"] > 10 * raw_bias["mcse"]
    raw = _by(calibrated["es"], method="raw", stat="ece")
    for method in ("platt", "isotonic"):
        after = _by(calibrated["es"], method=method, stat="ece")
        assert raw["est"] - after["est"] > 2 * math.hypot(raw["mcse"], after["mcse"])


def test_doubt_comes_from_runs_not_from_stated_confidence():
    rows = run_cell({"part": "doubt", "language": "es", "cases": 600, "reps": 1}, np.random.SeedSequence(78))
    stated = _by(rows, signal="stated_confidence", stat="auroc")
    assert abs(stated["est"] - 0.5) <= 3 * stated["mcse"]  # uninformative: AUROC 0.5 within 3 SE
    for signal in ("disagreement_runs", "disagreement_paraphrases"):
        measured = _by(rows, signal=signal, stat="auroc")
        assert measured["est"] - 0.5 > 3 * measured["mcse"]


def test_the_cause_judge_needs_the_instructions_to_see_a_misapplied_threshold():
    rows = run_cell({"part": "causes", "profile": "threshold_confused", "cases": 300, "reps": 1},
                    np.random.SeedSequence(79))
    given = _by(rows, instructions="given", stat="accuracy")
    withheld = _by(rows, instructions="rules_withheld", stat="accuracy")
    assert given["est"] - withheld["est"] > 2 * math.hypot(given["mcse"], withheld["mcse"])
    assert _by(rows, instructions="rules_withheld", stat="threshold_misapplied")["est"] < 0.05


def test_design_grid_sizes():
    full, smoke = design_grid(), design_grid(smoke=True)
    single = full["part"].isin(["doubt", "causes"])
    assert (full.loc[~single, "reps"] == 200).all() and (full.loc[single, "reps"] == 1).all()
    assert (smoke.loc[~smoke["part"].isin(["doubt", "causes"]), "reps"] == 20).all()
    assert set(full["part"]) == set(smoke["part"]) == {"calibration", "doubt", "mode_b", "read_only", "causes"}
    assert sorted(full.loc[full["part"] == "calibration", "pairs"].unique()) == [25, 50, 100, 200, 400, 800, 1600]


def test_study_tables_are_identical_for_any_number_of_workers(tmp_path):
    one = run_study(tmp_path / "one", smoke=True, nsim=3, n_jobs=1, seed=5, progress=False)
    run_study(tmp_path / "two", smoke=True, nsim=3, n_jobs=2, seed=5, progress=False)
    for name in ("results", "calibration", "calibration_detail", "reliability", "doubt", "mode_b",
                 "mode_b_methods", "read_only", "causes", "design"):
        assert (tmp_path / "one" / f"{name}.csv").read_bytes() == (tmp_path / "two" / f"{name}.csv").read_bytes()
    assert (tmp_path / "one" / "report.md").read_bytes() == (tmp_path / "two" / "report.md").read_bytes()
    calibration = pd.read_csv(tmp_path / "one" / "calibration.csv")
    assert list(calibration.columns) == ["language", "method", "pairs", "ece", "bias", "bias_mcse"]
    assert set(calibration["method"]) == {"raw", "platt", "isotonic"} and set(calibration["language"]) == {"en", "es"}
    mode_b = pd.read_csv(tmp_path / "one" / "mode_b.csv")
    assert list(mode_b.columns) == ["fake_rate", "truth", "without_record", "corrected", "corrected_coverage"]
    assert (mode_b["without_record"] <= mode_b["truth"] + 1e-12).all()
    pd.testing.assert_frame_equal(mode_b, one["mode_b"], check_dtype=False)
    for stem in ("reliability", "calibration_bias", "mode_b"):
        assert (tmp_path / "one" / f"{stem}.png").stat().st_size > 0
        assert (tmp_path / "one" / f"{stem}.pdf").stat().st_size > 0
    report = (tmp_path / "one" / "report.md").read_text()
    assert "3 data sets per calibration, mode B and read-only cell" in report and "stated_confidence" in report


def test_cli_runs_the_smoke_study_and_rejects_bad_options(tmp_path, monkeypatch, capsys):
    def run(*args):
        monkeypatch.setattr(sys, "argv", ["escalation", "study", "judges", *map(str, args)])
        try:
            main()
        except SystemExit as exit_:
            return exit_.code
        return 0
    assert run("--out", tmp_path / "s", "--smoke", "--nsim", "2", "--seed", "3", "--n-jobs", "1") == 0
    assert (tmp_path / "s" / "calibration.csv").exists() and (tmp_path / "s" / "mode_b.md").exists()
    capsys.readouterr()
    assert run("--out", tmp_path / "t", "--nsim", "1") == 2
    assert capsys.readouterr().err == "error: escalation study judges: --nsim must be at least 2, got 1\n"
    assert run("--out", tmp_path / "t", "--n-jobs", "0") == 2
    assert not (tmp_path / "t").exists()


def test_the_old_name_runs_the_same_study_with_a_one_line_notice(tmp_path, monkeypatch, capsys):
    def run(name, out):
        monkeypatch.setattr(sys, "argv", ["escalation", "study", name, "--out", str(out), "--smoke", "--nsim", "2"])
        with pytest.raises(SystemExit) as exit_:
            main()
        assert exit_.value.code == 0
        return capsys.readouterr()
    new, old = run("judges", tmp_path / "new"), run("calibration", tmp_path / "old")
    assert new.err == ""
    assert old.err == "note: `escalation study calibration` is now `escalation study judges`\n"
    for name in ("results.csv", "calibration.csv", "mode_b.csv", "report.md", "mode_b.png"):
        assert (tmp_path / "new" / name).read_bytes() == (tmp_path / "old" / name).read_bytes()
