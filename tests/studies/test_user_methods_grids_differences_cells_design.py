"""A researcher's grid in the differences and sample-size studies, and a researcher's difference method
(issue 35)."""
from __future__ import annotations

import textwrap

import numpy as np
import orjson
import pandas as pd
import pytest

from escalation.estimators.records import InputError
from escalation.studies import cell_seed
from escalation.studies._user_methods import read_grid, user_functions
from escalation.studies.differences._cells import run_cell
from escalation.studies.differences._design import DIFFERENCE_METHODS, GRID_KEYS, MODE_B_METHODS, build_design
from escalation.studies.differences._differences import run_differences_study
from escalation.studies.sample_size._design import GRID_KEYS as SIZE_KEYS, design_grid

from .._helpers import run_cli_output

DIFFERENCE_FILE = textwrap.dedent('''
    import numpy as np
    from scipy import stats


    def paired_t(totals_a, sizes_a, totals_b, sizes_b, confidence):
        """t interval of the mean of the scenarios' paired differences of rates (K - 1 degrees of freedom)."""
        d = totals_b / sizes_b - totals_a / sizes_a
        k = d.shape[1]
        half = stats.t.ppf(0.5 + confidence / 2, k - 1) * d.std(axis=1, ddof=1) / np.sqrt(k)
        return d.mean(axis=1) - half, d.mean(axis=1) + half


    def one_bound(totals_a, sizes_a, totals_b, sizes_b, confidence):
        return np.zeros(len(totals_a))
''')
GRID = {"p": [0.1], "p_b": [0.1, 0.25], "rho": [0.2], "between": [0.5], "scenarios": [8], "replicas": [3]}


@pytest.fixture
def own_file(tmp_path):
    path = tmp_path / "differences_of_mine.py"
    path.write_text(DIFFERENCE_FILE)
    return path


def test_a_differences_grid_gives_the_difference_and_mode_b_cells_of_its_cross_product():
    design = build_design(grid=read_grid(GRID | {"nsim": 9}, GRID_KEYS))
    difference = design[design["part"] == "difference"]
    assert list(zip(difference["p_a"], difference["p_b"])) == [(0.1, 0.1), (0.1, 0.25)]
    assert set(difference["between"]) == {0.5} and set(design["nsim"]) == {9}
    assert len(design[design["part"] == "mode_b"]) == 1
    null = build_design(grid=read_grid({k: v for k, v in GRID.items() if k != "p_b"} | {"p": [0.05, 0.2]}, GRID_KEYS))
    assert (null.loc[null["part"] == "difference", "p_a"] == null.loc[null["part"] == "difference", "p_b"]).all()
    with pytest.raises(InputError, match="field 'size_cv': must be a list of 0"):
        read_grid(GRID | {"size_cv": [0.5]}, GRID_KEYS)


def test_a_difference_method_runs_beside_the_studys_on_the_same_data_sets(own_file):
    own = user_functions({"paired-t": f"{own_file}:paired_t"}, builtin=DIFFERENCE_METHODS + MODE_B_METHODS,
                         statistics=False)
    row = build_design(grid=read_grid(GRID, GRID_KEYS), nsim=200).iloc[1].to_dict()
    plain = pd.DataFrame(run_cell(row, cell_seed(2, 1)))
    both = pd.DataFrame(run_cell(row, cell_seed(2, 1), methods=own))
    assert list(both["method"]) == [*DIFFERENCE_METHODS, "paired-t"]
    pd.testing.assert_frame_equal(plain, both.iloc[:len(DIFFERENCE_METHODS)])  # the study's methods: untouched
    mine = both.iloc[4]
    assert 0.8 < mine["coverage"] <= 1 and mine["difference"] == pytest.approx(0.15) and mine["undefined"] == 0
    with pytest.raises(InputError, match="is the name of a built-in method"):
        user_functions({"bootstrap_bca": f"{own_file}:paired_t"}, builtin=DIFFERENCE_METHODS, statistics=False)


def test_a_bad_difference_method_stops_before_anything_is_written(tmp_path, own_file):
    out = tmp_path / "never"
    with pytest.raises(InputError, match="method 'half': returned ndarray"):
        run_differences_study(out, methods={"half": f"{own_file}:one_bound"}, grid=GRID, progress=False)
    assert not out.exists()


@pytest.mark.slow
def test_differences_with_a_grid_and_a_method_from_the_command_line(tmp_path, own_file, monkeypatch, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text("p = [0.1]\np_b = [0.2]\nrho = [0.2]\nscenarios = [6]\nreplicas = [2]\nnsim = 40\n")
    out = tmp_path / "run"
    code, printed, err = run_cli_output(monkeypatch, capsys, "study", "differences", "--out", out, "--grid", grid,
                                        "--method", f"paired-t={own_file}:paired_t")
    assert code == 0, err
    assert "1 difference cells and 1 mode-B cells" in printed
    table = pd.read_csv(out / "differences.csv")
    assert list(table["method"]) == [*DIFFERENCE_METHODS, "paired-t"]
    assert "paired-t" in set(pd.read_csv(out / "summary.csv")["method"])
    report = (out / "report.md").read_text()
    assert "## The researcher's difference methods" in report and "This run's grid is the researcher's" in report
    assert orjson.loads((out / "run-args.json").read_bytes())["methods"][0]["name"] == "paired-t"


def test_a_sample_size_grid_gives_interval_plans_and_size_cells():
    grid = read_grid({"p": [0.1, 0.3], "rho": [0.05], "scenarios": [6, 12], "replicas": [5], "size_cv": [0.0, 0.5],
                      "nsim": 30}, SIZE_KEYS)
    design = design_grid(grid=grid)
    plans = design[design["kind"].isin(["rate", "pi"])]
    assert len(plans) == 2 * 2 * 2  # estimand x p x size_cv
    assert sorted(set(plans.loc[plans["kind"] == "pi", "p"])) == [0.7, 0.9]
    size = design[design["kind"] == "size"]
    assert len(size) == 2 * 2 * 2 * 2 and set(size["scenarios"]) == {6, 12}  # p x cv x design x K
    assert not (design["kind"] == "difference").any() and set(design["nsim"]) == {30}
    only_pi = design_grid(grid=grid | {"estimand": ("pi",)})
    assert set(only_pi["kind"]) == {"pi"}


@pytest.mark.slow
def test_sample_size_with_a_grid_from_the_command_line(tmp_path, monkeypatch, capsys):
    grid = tmp_path / "grid.toml"
    grid.write_text('p = [0.2]\nrho = [0.1]\nscenarios = [8]\nreplicas = [5]\nsize_cv = [0.0]\nestimand = ["p_u"]\n'
                    'nsim = 50\n')
    out = tmp_path / "run"
    code, _, err = run_cli_output(monkeypatch, capsys, "study", "sample-size", "--out", out, "--grid", grid)
    assert code == 0, err
    design = pd.read_csv(out / "design.csv")
    assert list(design["kind"]) == ["rate", "size", "size"]
    assert "The simulated plans and tests are the researcher's grid" in (out / "report.md").read_text()
    assert np.isfinite(pd.read_csv(out / "intervals.csv")["coverage"]).all()
    code, _, err = run_cli_output(monkeypatch, capsys, "study", "sample-size", "--out", tmp_path / "never",
                                  "--method", "x=y:z")
    assert code == 2 and "No such option: --method" in err
