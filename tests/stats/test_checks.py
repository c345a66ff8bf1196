"""One error path: the argument validators name the parameter and quote the value; the command line names
the flag instead, from one table read from the commands' signatures, and prints every error as one line."""
from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest

from escalation.estimators.stats import (
    check_choice,
    check_count,
    check_level,
    check_probability,
    check_range,
    refuse,
)

from .._helpers import run_cli_output

COMMANDS = Path(__file__).resolve().parents[2] / "escalation" / "cli" / "commands"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples"


# ------------------------------------------------------------------ the validators

def test_check_level_names_the_parameter_and_quotes_the_value():
    assert check_level("confidence", 0.95) == 0.95 and check_level("confidence", np.float64(0.5)) == 0.5
    for bad, shown in ((1.5, "1.5"), (0, "0"), (1.0, "1"), (float("nan"), "nan"), ("x", "'x'"), (None, "None")):
        with pytest.raises(ValueError, match=rf"^`confidence` must lie strictly between 0 and 1; got {shown}$"):
            check_level("confidence", bad)


def test_check_probability_closes_the_ends_it_is_told():
    assert check_probability("rho", 0) == 0.0 and check_probability("rho", 1) == 1.0
    with pytest.raises(ValueError, match=r"^`rho` must lie in \[0, 1\]; got 1.5$"):
        check_probability("rho", 1.5)
    with pytest.raises(ValueError, match=r"^`p` must lie in \(0, 1\); got 0$"):
        check_probability("p", 0.0, closed="neither")
    with pytest.raises(ValueError, match=r"^`tau` must lie in \(0, 1\]; got 0$"):
        check_probability("tau", 0, closed="high")
    assert check_probability("tau", 1, closed="high") == 1.0
    with pytest.raises(ValueError, match=r"^`q` must lie in \[0, 1\); got 1$"):
        check_probability("q", 1, closed="low")


def test_check_range_refuses_infinity_and_nan_and_adds_its_note():
    assert check_range("traffic", 0, 0.0, math.inf, closed="low") == 0.0
    with pytest.raises(ValueError, match=r"^`traffic` must lie in \[0, inf\) \(an hour\); got inf$"):
        check_range("traffic", math.inf, 0.0, math.inf, closed="low", note=" (an hour)")
    with pytest.raises(ValueError, match=r"^`correlation` must lie in \[-1, 1\]; got nan$"):
        check_range("correlation", float("nan"), -1.0, 1.0, closed="both")
    with pytest.raises(ValueError, match=r"^`h` must lie in \(0, 0.5\); got 0.62345678901$"):
        check_range("h", 0.62345678901, 0.0, 0.5)  # the value as given, not rounded by :g


def test_check_count_refuses_bools_fractions_and_the_limits():
    assert check_count("replicas", 3) == 3 and check_count("replicas", np.int64(3)) == 3
    assert check_count("replicas", 3.0, whole_floats=True) == 3
    for bad, shown in ((0, "0"), (2.5, "2.5"), (True, "True"), (3.0, "3"), ("3", "'3'")):
        with pytest.raises(ValueError, match=rf"^`replicas` must be a whole number >= 1; got {shown}$"):
            check_count("replicas", bad)
    with pytest.raises(ValueError, match=r"^`draws` must be at most 100,000 \(no more\); got 100001$"):
        check_count("draws", 100_001, 100, 100_000, note=" (no more)")
    with pytest.raises(ValueError, match=r"^`seed` must be a whole number >= 0; got -1$"):
        check_count("seed", -1, 0)


def test_check_choice_lists_the_choices_in_order():
    assert check_choice("test", "t", ("t", "z")) == "t"
    with pytest.raises(ValueError, match=r"^`test` must be one of t, z; got 'f'$"):
        check_choice("test", "f", ("t", "z"))
    with pytest.raises(ValueError, match=r"^`test` must be one of t, z; got \[\]$"):
        check_choice("test", [], ("t", "z"))  # unhashable: refused, not a TypeError


def test_every_refusal_keeps_the_names_it_mentions():
    for call in (lambda: check_level("confidence", 2), lambda: check_count("n", 0), lambda: check_choice("m", 1, "ab"),
                 lambda: check_probability("rho", 2), lambda: check_range("x", -1, 0, 1)):
        with pytest.raises(ValueError) as caught:
            call()
        assert caught.value.parameters == (str(caught.value).split("`")[1],)
    error = refuse("`p_a` and `p_b` must differ", "p_a", "p_b")
    assert isinstance(error, ValueError) and error.parameters == ("p_a", "p_b")


def test_the_library_checks_the_level_in_one_way():
    """The level is refused the same way wherever it is given (it was checked in 7 places, 2 types)."""
    from escalation.estimators.judges import reliability_table
    from escalation.estimators.stats import cluster_bootstrap, wilson_interval, z_value

    bootstrap = cluster_bootstrap([1, 2], [3, 3], n_resamples=20, rng=np.random.default_rng(0))
    for call in (lambda: z_value(1.5), lambda: wilson_interval(1, 10, confidence=1.5),
                 lambda: bootstrap.confidence_interval(confidence=1.5),
                 lambda: reliability_table([0.2, 0.8], [0, 1], confidence=1.5)):
        with pytest.raises(ValueError, match=r"^`confidence` must lie strictly between 0 and 1; got 1.5$") as caught:
            call()
        assert type(caught.value) is ValueError


# ------------------------------------------------------------------ the flag table

def test_the_flag_table_is_read_from_the_signatures():
    from escalation.cli._main import flag_table

    table = flag_table()
    assert table[("plan",)]["half_width"] == "--half-width" and table[("plan",)]["p"] == "--p"
    assert table[("plan",)]["method"] == "--interval" and table[("plan",)]["cases"] == "--scenarios"
    assert table[("capacity",)]["maximum"] == "--quality-max" and table[("compare",)]["n_boot"] == "--n-boot"
    assert ("study", "coverage") in table and ("suite", "export") in table
    for path, flags in table.items():
        assert all(flag.startswith("--") for flag in flags.values()), path


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    from escalation.estimators.metric import score_file
    from escalation.estimators.records import load_policy

    out = tmp_path_factory.mktemp("scored") / "run"
    score_file(EXAMPLE / "data" / "tau-bench" / "gpt-4o-airline.json",
               load_policy(EXAMPLE / "tau-bench-airline.policy.json"), out_dir=out)
    return out


@pytest.mark.parametrize("args, message", [
    (["plan", "--p", "1.5", "--rho", "0.1", "--half-width", "0.05", "--replicas", "10"],
     "--p must lie in (0, 1); got 1.5"),
    (["plan", "--p", "0.1", "--rho", "0.1", "--scenarios", "3", "--replicas", "10", "--paired-figure",
      "--confidence", "1"], "--confidence must lie strictly between 0 and 1; got 1"),
    (["plan", "--p", "0.1", "--rho", "0.1", "--scenarios", "1", "--replicas", "10", "--paired-figure", "--interval",
      "wilson-kish-t"], "--scenarios must be a whole number >= 2; got 1"),
    (["capacity", "{scored}", "--traffic", "200", "--esc-share", "1.5", "--reviewers", "3", "--review-minutes", "4"],
     "--esc-share must lie in [0, 1]; got 1.5"),
    (["capacity", "{scored}", "--traffic", "200", "--esc-share", "0.1", "--reviewers", "3", "--review-minutes", "4",
      "--quality-max", "2"], "--quality-max must lie in (0, 1]; got 2"),
    (["capacity", "{scored}", "--traffic", "200", "--esc-share", "0.1", "--review-minutes", "4", "--solve",
      "reviewers", "--target-protection", "2"], "--target-protection must lie in (0, 1]; got 2"),
    (["compare", "{scored}", "{scored}", "--n-boot", "0"], "--n-boot must be a whole number >= 1; got 0"),
    (["compare", "{scored}", "{scored}", "--names", "a,a"], "--names must be two different names; got 'a' twice"),
    (["score", "{log}", "--policy", "{policy}", "--confidence", "1.5"],
     "--confidence must lie strictly between 0 and 1; got 1.5"),
    (["leaderboard", "{log}", "{log}", "--policy", "{policy}", "--seed", "-1"],
     "--seed must be a whole number >= 0; got -1"),
    (["suite", "export", "--out", "{tmp}/x", "--pressure", "loud"],
     "--pressure must be all, or some of none, hurry, authority; got 'loud'"),
])
def test_every_flag_bearing_error_names_the_flag(args, message, scored, tmp_path, monkeypatch, capsys):
    where = {"{scored}": scored, "{log}": EXAMPLE / "data" / "tau-bench" / "gpt-4o-airline.json",
             "{policy}": EXAMPLE / "tau-bench-airline.policy.json", "{tmp}": tmp_path}
    args = [str(where.get(a, a)).replace("{tmp}", str(tmp_path)) for a in args]
    code, out, err = run_cli_output(monkeypatch, capsys, *args)
    assert (code, err) == (2, f"error: {message}\n")
    assert "`" not in err


def test_no_command_prints_and_exits_on_its_own():
    """The commands raise; only ``main()`` prints an error and exits (a result's own exit status aside)."""
    for path in sorted(COMMANDS.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert not node.value.startswith("error:"), f"{path.name}:{node.lineno} prints an error"
            if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
                assert not str(node.values[0].value).startswith("error:"), f"{path.name}:{node.lineno}"
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("sys.exit", "exit"):
                raise AssertionError(f"{path.name}:{node.lineno} exits on its own")
        assert "re.compile" not in path.read_text() or path.name.startswith("_"), path.name
