"""A researcher's own intervals in the coverage study (issue 35): the same data sets as the study's methods, exact
coverage where the method declares its statistics, the report's comparison, resumption, and the one-line errors of
bad methods and grids."""
from __future__ import annotations

import math
import textwrap

import numpy as np
import orjson
import pandas as pd
import pytest

from escalation.estimators.records import InputError
from escalation.estimators.stats import clustered_interval
from escalation.studies import cell_seed, sufficient
from escalation.studies._user_methods import checked_bounds, read_grid, user_functions
from escalation.studies.coverage._coverage import GRID_KEYS, METHODS, build_design, run_cell, run_coverage_study

from .._helpers import run_cli_output

#: The researcher's file, written outside the package: a plain Wilson interval written from its formula, and
#: others for the checks.
OWN_FILE = textwrap.dedent('''
    import numpy as np
    from scipy import stats


    def wilson(totals, sizes, confidence):
        """Plain Wilson on every conversation, ignoring the scenarios (Wilson 1927)."""
        n = sizes.sum(axis=1)
        p = totals.sum(axis=1) / n
        z = stats.norm.ppf(0.5 + confidence / 2)
        centre = (p + z**2 / (2 * n)) / (1 + z**2 / n)
        half = z / (1 + z**2 / n) * np.sqrt(p * (1 - p) / n + z**2 / (4 * n**2))
        return centre - half, centre + half


    wilson.sufficient = "total"


    def flat(totals, sizes, confidence):
        return np.zeros(len(totals)), np.ones((len(totals), 2))


    def undefined_without_errors(totals, sizes, confidence):
        low, high = wilson(totals, sizes, confidence)
        none = totals.sum(axis=1) == 0
        return np.where(none, np.nan, low), high
''')

#: A small grid: two cells of equal sizes and one of unequal sizes.
GRID = {"p": [0.1], "rho": [0.2], "scenarios": [5], "replicas": [4], "size_cv": [0.0, 0.5], "estimand": ["p_u"]}


@pytest.fixture
def own_file(tmp_path):
    path = tmp_path / "elsewhere" / "my_intervals.py"
    path.parent.mkdir()
    path.write_text(OWN_FILE)
    return path


def _cells(methods, grid=GRID, nsim=300, seed=11):
    """Every row of the design of ``grid`` run with ``methods`` (``{name: function or spec}``): the long table."""
    own = user_functions(methods, builtin=METHODS)
    design = build_design(grid=read_grid(grid, GRID_KEYS), nsim=nsim)
    rows = []
    for i, row in design.iterrows():
        rows += [{**row.to_dict(), **r} for r in run_cell(row.to_dict(), cell_seed(seed, i), methods=own)]
    return pd.DataFrame(rows)


def _pair(table, mine, builtin):
    a = table[table["method"] == mine].reset_index(drop=True)
    b = table[table["method"] == builtin].reset_index(drop=True)
    return a, b


def test_a_plain_wilson_of_a_file_outside_the_package_equals_the_builtin_wilson(own_file):
    table = _cells({"mine": f"{own_file}:wilson"})
    mine, wilson = _pair(table, "mine", "wilson")
    assert len(mine) == 2
    # the same data sets: the Monte Carlo counts are the very same
    for column in ("nsim", "coverage", "coverage_mcse", "miss_low", "miss_high"):
        assert mine[column].tolist() == wilson[column].tolist(), column
    np.testing.assert_allclose(mine["mean_width"], wilson["mean_width"], rtol=1e-12)
    # exact in every cell (declared a function of the total), equal and unequal sizes, to the enumeration's rounding
    for column in ("exact_coverage", "exact_miss_low", "exact_miss_high", "exact_mean_width"):
        assert mine[column].notna().all()
        np.testing.assert_allclose(mine[column], wilson[column], rtol=0, atol=1e-12)


def test_total_and_squares_gives_the_exact_coverage_of_an_interval_that_reads_rho():
    @sufficient("total-and-squares")
    def paper(totals, sizes, confidence):
        return clustered_interval(totals, sizes, "wilson-kish", confidence=confidence)

    table = _cells({"paper-again": paper}, grid=GRID | {"estimand": ["p_u", "pi"]}, nsim=200)
    mine, builtin = _pair(table, "paper-again", "wilson-kish")
    for column in ("coverage", "miss_low", "miss_high", "mean_width"):
        assert mine[column].tolist() == builtin[column].tolist(), column
    equal = mine["size_cv"] == 0
    np.testing.assert_allclose(mine.loc[equal, "exact_coverage"], builtin.loc[equal, "exact_coverage"], atol=1e-12)
    np.testing.assert_allclose(mine.loc[equal, "exact_mean_width"], builtin.loc[equal, "exact_mean_width"],
                               rtol=1e-12)
    assert mine.loc[~equal, "exact_coverage"].isna().all()  # (Y, S) is not sufficient with unequal sizes


def test_a_method_without_a_declaration_is_monte_carlo_and_a_nan_bound_is_neither_cover_nor_miss(own_file):
    table = _cells({"partial": f"{own_file}:undefined_without_errors", "plain": f"{own_file}:wilson"},
                   grid=GRID | {"p": [0.02]}, nsim=400)
    partial, plain = _pair(table, "partial", "plain")
    assert partial["exact_coverage"].isna().all()
    undefined = 1 - partial["coverage"] - partial["miss_low"] - partial["miss_high"]
    assert (undefined > 0.05).all()  # p = 0.02 with 20 conversations: many data sets without an error
    assert (partial["miss_high"] == plain["miss_high"]).all() and (partial["miss_low"] <= plain["miss_low"]).all()


def test_sufficient_declares_and_refuses_other_statistics():
    assert sufficient("total")(lambda t, s, c: None).sufficient == "total"
    with pytest.raises(ValueError, match="total-and-squares"):
        sufficient("everything")

    def vague(totals, sizes, confidence):
        return totals, totals
    vague.sufficient = True
    with pytest.raises(InputError, match="declares sufficient = True"):
        user_functions({"vague": vague}, builtin=METHODS)


def test_the_bounds_a_method_returns_are_checked():
    assert checked_bounds("m", ([0.1, 0.2], [0.3, np.nan]), 2)[1][1] != 0.3
    for result, says in ((([0.1], [0.2], [0.3]), "must return (low, high)"), (np.zeros(2), "must return (low, high)"),
                         (([0.1, 0.2], [[0.3, 0.4]]), "high of shape (1, 2)"), (([0.5, 0.2], [0.3, 0.4]), "low > high"),
                         ((["a", "b"], [0.3, 0.4]), "not numbers")):
        with pytest.raises(InputError, match=r"^method 'm': .*" + says.replace("(", r"\(").replace(")", r"\)")):
            checked_bounds("m", result, 2)


@pytest.mark.slow
def test_a_grid_and_a_method_from_the_command_line(tmp_path, own_file, monkeypatch, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text('p = [0.05, 0.2]\nrho = [0.2]\nscenarios = [4]\nreplicas = [3]\nsize_cv = [0.0]\n'
                    'estimand = ["p_u"]\nnsim = 80\n')
    out = tmp_path / "run"
    code, printed, err = run_cli_output(monkeypatch, capsys, "study", "coverage", "--out", out, "--smoke", "--grid",
                                        grid, "--method", f"mine={own_file}:wilson", "--n-jobs", "2")
    assert code == 0, err
    assert f"2 cells x {len(METHODS) + 1} methods" in printed
    design = pd.read_csv(out / "design.csv")
    # only the grid's cells: its cross product, and its nsim
    assert sorted(design["p"]) == [0.05, 0.2] and set(design["scenarios"]) == {4} and set(design["nsim"]) == {80}
    table = pd.read_csv(out / "coverage.csv")
    mine, wilson = _pair(table, "mine", "wilson")
    assert mine["coverage"].tolist() == wilson["coverage"].tolist()
    args = orjson.loads((out / "run-args.json").read_bytes())
    [record] = args["methods"]
    assert record["function"] == f"{own_file.resolve()}:wilson" and record["sufficient"] == "total"
    assert len(record["source_sha256"]) == 64 and args["grid"]["p"] == [0.05, 0.2]
    report = (out / "report.md").read_text()
    assert "## The researcher's methods" in report and "`mine`" in report
    summary = pd.read_csv(out / "summary.csv")
    assert "mine" in set(summary["method"])
    # the same command resumes; another method, or the method's file edited, is refused as other arguments are
    code, _, err = run_cli_output(monkeypatch, capsys, "study", "coverage", "--out", out, "--smoke", "--grid", grid,
                                  "--method", f"mine={own_file}:wilson")
    assert code == 0 and orjson.loads((out / "run.json").read_bytes())["cells_resumed"] == 2
    own_file.write_text(OWN_FILE + "\n# edited\n")
    code, _, err = run_cli_output(monkeypatch, capsys, "study", "coverage", "--out", out, "--smoke", "--grid", grid,
                                  "--method", f"mine={own_file}:wilson")
    assert code == 2 and len(err.splitlines()) == 1 and "holds a run with other arguments: methods" in err


@pytest.mark.parametrize("option, says", [
    (["--method", "x=no_such_module_of_anyone:f"], "method 'x': cannot import module 'no_such_module_of_anyone'"),
    (["--method", "x={file}:missing"], "method 'x': module '{file}' has no function 'missing'"),
    (["--method", "x={file}:flat"], "method 'x': returned high of shape (2, 2)"),
    (["--method", "wilson={file}:wilson"], "method 'wilson': is the name of a built-in method"),
    (["--method", "x={file}"], "is not MODULE:FUNCTION"),
    (["--method", "x={file}:wilson", "--method", "x={file}:flat"], "method name 'x' is given twice"),
    (["--grid", "{grid}"], "{grid}: unknown key 'colour'"),
])
def test_bad_methods_and_grids_are_one_line_errors_that_write_nothing(tmp_path, own_file, monkeypatch, capsys,
                                                                      option, says):
    grid = tmp_path / "grid.toml"
    grid.write_text('p = [0.1]\nrho = [0.2]\nscenarios = [4]\nreplicas = [3]\nsize_cv = [0.0]\ncolour = ["red"]\n')
    fill = {"file": own_file, "grid": grid}
    out = tmp_path / "never"
    code, printed, err = run_cli_output(monkeypatch, capsys, "study", "coverage", "--out", out, "--smoke", "--nsim",
                                        "5", *[o.format(**fill) for o in option])
    assert code == 2 and printed == "" and len(err.splitlines()) == 1
    assert err.startswith("error: ") and says.format(**fill) in err
    assert not out.exists()


@pytest.mark.parametrize("grid, says", [
    ({"p": [0.1]}, "field 'rho': missing"),
    (GRID | {"p": []}, "field 'p': must be a non-empty list"),
    (GRID | {"p": [0.1, 0.1]}, "field 'p': repeats 0.1"),
    (GRID | {"p": [1.5]}, "field 'p': must be a list of numbers in (0, 1)"),
    (GRID | {"scenarios": [2.5]}, "field 'scenarios': must be a list of whole numbers"),
    (GRID | {"replicas": [True]}, "field 'replicas': must be a list of whole numbers"),
    (GRID | {"estimand": ["p_o"]}, "field 'estimand': must be a list of estimands among p_u, pi, got 'p_o'"),
    (GRID | {"nsim": [10]}, "field 'nsim': must be a whole number from 1, got list"),
    (GRID | {"size_cv": 0.5}, "field 'size_cv': must be a non-empty list"),
])
def test_a_grid_is_checked_key_by_key(grid, says):
    with pytest.raises(InputError) as raised:
        read_grid(grid, GRID_KEYS)
    assert str(raised.value).startswith("grid: ") and says in str(raised.value)


def test_a_grid_file_that_is_not_toml_names_the_file(tmp_path):
    bad = tmp_path / "grid.toml"
    bad.write_text("p = [0.1\n")
    with pytest.raises(InputError, match=f"^{bad}: not a TOML file"):
        read_grid(bad, GRID_KEYS)
    with pytest.raises(InputError, match="no such grid file"):
        read_grid(tmp_path / "none.toml", GRID_KEYS)


def test_the_design_of_a_grid_is_its_full_cross_product():
    grid = read_grid({"p": [0.02, 0.2], "rho": [0.0, 0.3], "scenarios": [3, 40], "replicas": [1, 8],
                      "size_cv": [0.0, 1.0], "nsim": 7}, GRID_KEYS)
    design = build_design(grid=grid)
    assert len(design) == 2 * 2 * 2 * 2 * 2 * 2  # both estimands; m = 1 with rho > 0 kept: the researcher's cells
    assert set(design["nsim"]) == {7} and build_design(grid=grid, nsim=9)["nsim"].eq(9).all()
    assert sorted(set(design.loc[design["estimand"] == "pi", "p"])) == [0.8, 0.98]


def test_the_probe_stops_a_bad_method_before_the_folder_is_made(tmp_path):
    def wrong(totals, sizes, confidence):
        return totals.mean(axis=1)

    out = tmp_path / "never"
    with pytest.raises(InputError, match="method 'wrong': returned ndarray"):
        run_coverage_study(out, methods={"wrong": wrong}, grid=GRID, progress=False)
    assert not out.exists()
    assert math.isfinite(build_design(grid=read_grid(GRID, GRID_KEYS))["rho_outcome"].iloc[0])


@pytest.mark.slow
def test_a_method_from_a_file_runs_on_a_dask_cluster_as_it_runs_here(tmp_path, own_file):
    """The file's module travels to the workers by value: the cluster needs no copy of it."""
    pytest.importorskip("distributed")
    grid = GRID | {"nsim": 60}
    here = run_coverage_study(tmp_path / "here", methods={"mine": f"{own_file}:wilson"}, grid=grid, progress=False)
    there = run_coverage_study(tmp_path / "there", methods={"mine": f"{own_file}:wilson"}, grid=grid, n_jobs=2,
                               backend="dask", progress=False)
    pd.testing.assert_frame_equal(here, there)
    assert (tmp_path / "here" / "coverage.csv").read_bytes() == (tmp_path / "there" / "coverage.csv").read_bytes()
