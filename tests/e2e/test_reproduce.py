"""``escalation reproduce``: output contract, agreement with the paper, determinism, report = tables."""
from __future__ import annotations

import math
import os
import re
import subprocess
import sys

import pandas as pd
import pytest

from escalation.simulate import PROFILES, expected_rates
from escalation.studies.reproduction._reproduce import (
    PAPER_CASES,
    PAPER_PROFILES,
    PAPER_RECORD_VS_TEXT,
    PAPER_TABLE,
    PROFILES_COLUMNS,
    RECORD_VS_TEXT_COLUMNS,
    TABLE_TITLES,
    TOLERANCE,
    build_design,
    reproduce as run_study,
)

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


SEED = 11


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory):
    """The smoke reproduction run twice: in process with one worker, through the CLI with two."""
    one = tmp_path_factory.mktemp("jobs1")
    two = tmp_path_factory.mktemp("jobs2")
    run_study(one, smoke=True, n_jobs=1, seed=SEED, progress=False)
    result = subprocess.run([sys.executable, "-m", "escalation", "reproduce", "--out", str(two), "--smoke",
                             "--n-jobs", "2", "--seed", str(SEED)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return one, two


def test_output_contract_columns(smoke_runs):
    out, _ = smoke_runs
    profiles = pd.read_csv(out / "profiles.csv")
    assert tuple(profiles.columns) == PROFILES_COLUMNS
    assert set(profiles["metric"]) == {"p_u", "pi"} and list(dict.fromkeys(profiles["profile"])) == list(PAPER_PROFILES)
    record_vs_text = pd.read_csv(out / "record_vs_text.csv")
    assert tuple(record_vs_text.columns) == RECORD_VS_TEXT_COLUMNS
    assert "invents_actions" in set(record_vs_text["profile"])
    for name in TABLE_TITLES:
        assert (out / f"{name}.csv").stat().st_size > 0 and (out / f"{name}.md").stat().st_size > 0
    for stem in ("profiles", "record_vs_text"):
        assert (out / f"{stem}.png").stat().st_size > 0 and (out / f"{stem}.pdf").stat().st_size > 0
    assert (out / "design.csv").exists() and (out / "run.json").exists()


def test_paper_size_runs_have_88_pairs_and_their_intervals(smoke_runs):
    out, _ = smoke_runs
    rates = pd.read_csv(out / "rates.csv")
    assert (rates["n"] == PAPER_CASES).all()
    # the value is a count out of 88 (the CSV keeps 10 significant digits) and lies in its interval
    assert (rates["value"] * PAPER_CASES - rates["count"]).abs().max() < 1e-7
    assert ((rates["ci_low"] <= rates["value"]) & (rates["value"] <= rates["ci_high"])).all()


def test_expected_values_agree_with_the_paper_table(smoke_runs):
    """Paper section 8 table: the large-run mean within 0.01 + 2 MCSE (the table is self-consistent)."""
    out, _ = smoke_runs
    profiles = pd.read_csv(out / "profiles.csv")
    for row in profiles.itertuples():
        assert row.paper == PAPER_TABLE[row.profile][row.metric]
        assert abs(row.expected - row.paper) <= TOLERANCE + 2 * row.expected_mcse, row


def test_exact_expectations_of_the_profiles_match_the_paper_table():
    """simulate.expected_rates (exact, no Monte Carlo) against the paper's section 8 table."""
    for profile, figures in PAPER_TABLE.items():
        exact = expected_rates(PROFILES[profile])
        for metric, paper in figures.items():
            assert abs(exact[metric] - paper) <= TOLERANCE, (profile, metric, exact[metric], paper)


def test_without_a_record_in_expectation(smoke_runs):
    """Paper section 6: 0.08 without a record for invents_actions; its truth there (0.32) contradicts the table."""
    out, _ = smoke_runs
    expected = pd.read_csv(out / "record_vs_text_expected.csv").set_index("profile")
    row = expected.loc["invents_actions"]
    paper = PAPER_RECORD_VS_TEXT["invents_actions"]
    assert abs(row["without_record"] - paper["without_record"]) <= TOLERANCE + 2 * row["without_record_mcse"]
    assert (expected["with_record"] == expected["truth"]).all()
    # the documented inconsistency: the profile follows the table (0.352), not section 6's 0.32
    assert abs(row["analytic_truth"] - PAPER_TABLE["invents_actions"]["p_u"]) < 1e-12
    assert abs(row["analytic_truth"] - paper["truth"]) > TOLERANCE
    assert "No profile matches both" in (out / "report.md").read_text()


def test_with_a_record_equals_the_truth_and_without_is_below(smoke_runs):
    out, _ = smoke_runs
    table = pd.read_csv(out / "record_vs_text.csv", dtype=str).set_index("profile")
    assert (table["with_record"] == table["truth"]).all()
    numbers = table.astype(float)
    assert (numbers["without_record"] <= numbers["truth"]).all()
    assert numbers.loc["invents_actions", "without_record"] < numbers.loc["invents_actions", "truth"]


def test_tables_are_byte_identical_for_one_and_two_workers(smoke_runs):
    one, two = smoke_runs
    for name in (*TABLE_TITLES, "design"):
        assert (one / f"{name}.csv").read_bytes() == (two / f"{name}.csv").read_bytes(), name
    for name in TABLE_TITLES:
        assert (one / f"{name}.md").read_bytes() == (two / f"{name}.md").read_bytes(), name


def test_paper_size_runs_do_not_depend_on_the_size_of_the_expected_run():
    """The 88-pair runs are the first cells (same child seeds) whatever --smoke or --expected-pairs."""
    columns = ["profile", "run", "cases", "chunk", "text"]
    full, smoke = build_design(), build_design(smoke=True)
    assert full.head(len(PROFILES))[columns].equals(smoke.head(len(PROFILES))[columns])
    assert (full.head(len(PROFILES))["run"] == "paper").all()
    assert full.loc[full["run"] == "expected"].groupby("profile")["cases"].sum().min() >= 100_000


def test_worked_example(smoke_runs):
    """Paper section 7; 95% Wilson interval of 1/2 is R's prop.test(1, 2, correct = FALSE): (0.0945, 0.9055)."""
    out, _ = smoke_runs
    rates = pd.read_csv(out / "worked_example_rates.csv").set_index(["policy", "metric"])
    marked = rates.loc["get_order marked read-only"]
    for metric in ("p_u", "p_o", "pi"):
        assert marked.loc[metric, "value"] == 0.5 and marked.loc[metric, "n"] == 2
        assert marked.loc[metric, "ci_low"] == pytest.approx(0.0945, abs=5e-5)
        assert marked.loc[metric, "ci_high"] == pytest.approx(0.9055, abs=5e-5)
    conversations = pd.read_csv(out / "worked_example.csv",
                                keep_default_na=False).set_index(["policy", "conversation_id"])
    s2 = conversations.loc[("get_order unmarked", "s2")]
    assert s2["cause"] == "acted_before_handoff" and "get_order" in s2["unmarked_tools"].split()
    assert conversations.loc[("get_order marked read-only", "s5"), "reason"] == "no_record"


def test_mutants_and_read_only_mark(smoke_runs):
    out, _ = smoke_runs
    mutants = pd.read_csv(out / "mutants.csv", keep_default_na=False)
    assert len(mutants) == 17 and mutants["caught"].all() and (mutants["cases"] != "").all()  # SPEC 9: 1-17
    marks = pd.read_csv(out / "read_only_mark.csv")
    assert set(marks["profile"]) == set(PROFILES)
    # every error added by removing the mark is flagged by the notice (SPEC section 3)
    assert (marks["added_errors"] == marks["only_unmarked_before_handoff_esc"]).all()
    assert (marks["p_u_unmarked"] >= marks["p_u_marked"]).all()
    base = pd.read_csv(out / "base_metric.csv").set_index(["profile", "metric"])
    assert base.loc[("acts_then_escalates", "p_u"), "base_expected"] < base.loc[("acts_then_escalates", "p_u"),
                                                                                "strict_expected"]


def _report_tables(text: str) -> dict[str, list[list[str]]]:
    """The Markdown table after each "Table `name.csv`" line of the report, as rows of cells."""
    tables, lines = {}, text.splitlines()
    for i, line in enumerate(lines):
        match = re.match(r"Table `(\w+)\.csv`", line)
        if not match:
            continue
        j = i + 1
        while not lines[j].startswith("|"):
            j += 1
        rows = []
        while j < len(lines) and lines[j].startswith("|"):
            rows.append([cell.strip() for cell in lines[j].strip().strip("|").split("|")])
            j += 1
        tables[match.group(1)] = [rows[0]] + rows[2:]
    return tables


def _same(report_cell: str, csv_cell: str) -> bool:
    if report_cell == "n/a":  # an undefined number: n/a for a person, an empty cell in the CSV
        return csv_cell == ""
    if report_cell in ("yes", "no") and csv_cell in ("True", "False"):
        return (report_cell == "yes") == (csv_cell == "True")
    try:
        a, b = float(report_cell), float(csv_cell)
    except ValueError:
        return report_cell == csv_cell
    return math.isclose(a, b, rel_tol=6e-4, abs_tol=1e-12)  # the report shows 4 significant digits


def test_report_numbers_equal_the_csv_numbers(smoke_runs):
    out, _ = smoke_runs
    report = (out / "report.md").read_text()
    tables = _report_tables(report)
    assert set(tables) == set(TABLE_TITLES)
    for name, rows in tables.items():
        csv = pd.read_csv(out / f"{name}.csv", dtype=str, keep_default_na=False)
        assert rows[0] == list(csv.columns), name
        assert len(rows) - 1 == len(csv), name
        for got, want in zip(rows[1:], csv.itertuples(index=False)):
            bad = [(g, w) for g, w in zip(got, want) if not _same(g, w)]
            assert not bad, (name, bad)
    # the sentence on observation without a record quotes record_vs_text.csv
    row = pd.read_csv(out / "record_vs_text.csv").set_index("profile").loc["invents_actions"]
    assert (f"truth {row['truth']:.3f}, with a record {row['with_record']:.3f}, without a record "
            f"{row['without_record']:.3f}") in report
    assert f"seed {SEED}" in report and "version" in report and "Run time" in report


def test_a_resumed_run_says_so_and_its_lines_end_whole(smoke_runs, tmp_path):
    """Run again in a copy of a finished folder, at 80 columns: it says that it resumed, and its summary ends on
    whole sentences (issue 30: "Run time of the simulation cells 0.0 s" alone, a last line ending in "within
    tolerance of the paper; ")."""
    import shutil

    _, two = smoke_runs
    again = tmp_path / "again"
    shutil.copytree(two, again)
    result = subprocess.run([sys.executable, "-m", "escalation", "reproduce", "--out", str(again), "--smoke",
                             "--n-jobs", "2", "--seed", str(SEED)], capture_output=True, text=True,
                            env={**os.environ, "COLUMNS": "80"})
    assert result.returncode == 0, result.stderr
    cells = len(pd.read_csv(again / "design.csv"))
    lines = result.stdout.splitlines()
    assert lines[0] == (f"resumed the run in {again}: {cells} of its {cells} simulation cells reused, 0 computed "
                        "(--force computes them all again)")
    assert re.fullmatch(r"reproduced the paper: (\d+) of \1 expected values within tolerance of the paper", lines[1])
    assert lines[2] == f"wrote the tables, the figures, {again / 'report.md'} and {again / 'report.html'}"
    assert len(lines) == 3
    report = (again / "report.md").read_text()
    assert (f"This run resumed an earlier one in the same folder: it reused {cells} of the {cells} cells and computed "
            "0, and the run time above counts only the cells it computed") in report
    assert "resumed" not in (two / "report.md").read_text()  # the first run computed every cell
    for name in TABLE_TITLES:  # and the tables are the same bytes
        assert (again / f"{name}.csv").read_bytes() == (two / f"{name}.csv").read_bytes(), name


@pytest.mark.parametrize("arguments, message", [(["--n-jobs", "0"], "--n-jobs"), (["--expected-pairs", "0"],
                                                                                  "--expected-pairs")])
def test_bad_arguments_are_one_line_errors(tmp_path, arguments, message):
    result = subprocess.run([sys.executable, "-m", "escalation", "reproduce", "--out", str(tmp_path / "x"), *arguments],
                            capture_output=True, text=True)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "x").exists()
