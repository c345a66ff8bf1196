"""Start-up (issue 18): a command imports what it needs when it needs it.

``escalation --help``, every subcommand's ``--help`` and ``--version`` import no numerical
library; ``escalation score`` imports neither matplotlib nor scipy when it draws nothing and
uses a Wilson interval, and scores exactly as a process that has imported everything. Each
check runs a fresh interpreter (``sys.executable``), since this process has imported them all.
The layer doors load a name from its module when it is first asked for (PEP 562).
"""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from .._helpers import run_cli_output

#: What ``--help`` must not import: the numerical, drawing, templating and parallel libraries.
FORBIDDEN = ("numpy", "pandas", "scipy", "matplotlib", "pyarrow", "jinja2", "joblib", "dask", "inspect_ai")
#: What ``score`` must not import when it draws nothing and needs no t or F quantile.
NOT_FOR_SCORING = ("matplotlib", "scipy")
DOORS = ("estimators.stats", "estimators.records", "estimators.metric", "estimators.judges", "simulate", "figures",
         "studies")
TIMEOUT = 300  # seconds: the machine may be loaded

# Runs ``escalation ARGS`` (each JSON list of arguments in turn, ``[]``: every command's --help) and
# writes, for each, the forbidden top-level packages imported by then, and the exit codes.
_HELPS = """
import json, sys
forbidden, runs, out = json.loads(sys.argv[1]), json.loads(sys.argv[2]), sys.argv[3]
from escalation.cli import app, main

def present():
    return sorted({name.split(".")[0] for name in sys.modules} & set(forbidden))

if not runs:  # every command and subcommand, hidden ones too, from the command tree itself
    import typer.main
    def walk(command, path):
        yield path
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            yield from walk(sub, [*path, name])
    runs = [[*path, "--help"] for path in walk(typer.main.get_command(app), [])] + [["--version"]]
seen = {}
for args in runs:
    sys.argv = ["escalation", *args]
    try:
        main()
        code = 0
    except SystemExit as exit_:
        code = exit_.code or 0
    seen[" ".join(args)] = {"code": code, "imported": present()}
with open(out, "w") as f:
    json.dump(seen, f)
"""


def _helps(tmp_path, runs=()) -> dict:
    out = tmp_path / "helps.json"
    done = subprocess.run([sys.executable, "-c", _HELPS, json.dumps(FORBIDDEN), json.dumps(list(runs)), str(out)],
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def _modules(tmp_path, code: str) -> set[str]:
    """The modules (full names) imported by a fresh interpreter that runs ``code``."""
    done = subprocess.run([sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sorted(sys.modules)))"],
                          capture_output=True, text=True, timeout=TIMEOUT, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


def _top(modules) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_every_help_imports_no_numerical_library(tmp_path):
    seen = _helps(tmp_path)
    expected = {"--help", "score --help", "plan --help", "compare --help", "leaderboard --help",
                "policy init --help", "policy check --help", "study coverage --help", "study sample-size --help",
                "study judges --help", "study differences --help", "reproduce --help", "simulate --help",
                "suite --help", "--version"}
    assert expected <= set(seen)
    assert {args: run for args, run in seen.items() if run["code"] != 0 or run["imported"]} == {}


@pytest.mark.slow
def test_the_help_alone_and_a_subcommand_help_alone(tmp_path):
    """Each on its own, as a user types it (the walk above could hide an import behind an earlier one)."""
    for args in (["--help"], ["score", "--help"], ["study", "coverage", "--help"], ["plan", "--help"]):
        seen = _helps(tmp_path, [args])
        assert seen == {" ".join(args): {"code": 0, "imported": []}}


@pytest.mark.parametrize("layer", DOORS)
def test_a_door_imports_nothing_until_a_name_is_asked_for(tmp_path, layer):
    assert not _top(_modules(tmp_path, f"import escalation.{layer}")) & set(FORBIDDEN)


def test_a_name_imports_only_the_module_that_defines_it(tmp_path):
    """Constants that options show come from small modules; InputError from its own."""
    code = ("from escalation.estimators.stats import INTERVAL_METHODS, MAX_PLAN_SIZE, DEFAULT_INTERVAL\n"
            "from escalation.estimators.metric import FEW_CASES_NEWCOMBE\n"
            "from escalation.estimators.records import InputError\n"
            "from escalation.studies import COVERAGE_SEED, COVERAGE_METHODS, EXPECTED_PAIRS")
    modules = _modules(tmp_path, code)
    assert not _top(modules) & set(FORBIDDEN)
    ours = {m for m in modules if m.startswith("escalation.")}
    assert ours == {"escalation._version", "escalation.estimators", "escalation.estimators.stats",
                    "escalation.estimators.metric", "escalation.estimators.records",
                    "escalation.estimators.stats._constants", "escalation.estimators.stats._numbers",
                    "escalation.estimators.metric._difference_coverage", "escalation.estimators.records._errors",
                    "escalation.studies", "escalation.studies._constants"}


@pytest.mark.parametrize("layer", DOORS)
def test_each_door_gives_every_public_name_from_the_module_that_defines_it(layer):
    door = importlib.import_module(f"escalation.{layer}")
    for name in door.__all__:
        value = getattr(door, name)
        module = getattr(value, "__module__", None)
        if module is not None and module.startswith(f"escalation.{layer}."):  # a function or class: its home
            assert getattr(importlib.import_module(module), value.__name__) is value, name
    assert set(door.__all__) <= set(dir(door))
    with pytest.raises(AttributeError, match="not_a_name"):
        getattr(door, "not_a_name")


RECORDS = [
    {"conversation_id": "s1", "case_id": "A", "label": "ESC", "assistant_turns": 2,
     "tool_calls": [{"turn": 0, "name": "get_order"}]},
    {"conversation_id": "s2", "case_id": "B", "label": "ESC", "assistant_turns": 2,
     "tool_calls": [{"turn": 1, "name": "transfer_to_human"}]},
    {"conversation_id": "s3", "case_id": "A", "label": "ACT", "assistant_turns": 1,
     "tool_calls": [{"turn": 0, "name": "transfer_to_human"}]},
    {"conversation_id": "s4", "case_id": "B", "label": "ACT", "assistant_turns": 1,
     "tool_calls": [{"turn": 0, "name": "issue_refund"}]},
    {"conversation_id": "s5", "case_id": "C", "label": "ESC", "assistant_turns": 1, "tool_calls": []},
]

_SCORE = """
import json, sys
out, args = sys.argv[1], sys.argv[2:]
sys.argv = ["escalation", *args]
from escalation.cli import main
try:
    main()
    code = 0
except SystemExit as exit_:
    code = exit_.code or 0
with open(out, "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules)}, f)
"""


def _summary(path) -> dict:
    data = json.loads(path.read_text())
    created = data["provenance"].pop("created")  # the time of the run: the one field two runs may not share
    page = (path.parent / "report.html").read_text(encoding="utf-8")
    assert data["provenance"]["outputs"].pop("report.html")["bytes"] == len(page.encode("utf-8"))
    return {**data, "report.html": page.replace(created, "")}  # the page says when it was scored


@pytest.mark.slow
@pytest.mark.parametrize("interval", ["wilson-kish", "bootstrap-percentile"])
def test_score_imports_no_drawing_and_scores_as_before(tmp_path, monkeypatch, capsys, interval):
    (tmp_path / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    (tmp_path / "policy.json").write_text(json.dumps({"escalation_tools": ["transfer_to_human"]}))
    args = ["score", "records.jsonl", "--policy", "policy.json", "--interval", interval]
    listing = tmp_path / "modules.json"
    # env: this process's os.environ, as the in-process run below sees it (GNU readline, which pytest loads, exports
    # COLUMNS=80 to child processes behind os.environ's back, and a table not on a terminal takes COLUMNS)
    done = subprocess.run([sys.executable, "-c", _SCORE, str(listing), *args, "--out", "fresh"], capture_output=True,
                          text=True, timeout=TIMEOUT, cwd=tmp_path, env=dict(os.environ))
    seen = json.loads(listing.read_text())
    assert seen["code"] == 0, done.stderr
    imported = _top(seen["modules"])
    if interval == "wilson-kish":  # the bootstraps need scipy's FFT
        assert not imported & set(NOT_FOR_SCORING)
    assert {"numpy", "pandas", "pyarrow"} <= imported  # what scoring needs (no check that it is lazy here)
    # the same command in this process, where every module of the project and scipy are imported
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_cli_output(monkeypatch, capsys, *args, "--out", "here")
    assert code == 0
    assert (tmp_path / "fresh" / "conversations.jsonl").read_bytes() == \
        (tmp_path / "here" / "conversations.jsonl").read_bytes()
    assert _summary(tmp_path / "fresh" / "summary.json") == _summary(tmp_path / "here" / "summary.json")
    assert done.stdout.replace("fresh", "here") == out


def test_the_normal_quantile_is_scipys_to_double_precision():
    """``z_value`` uses the standard library's NormalDist (no scipy import to score); it agrees with
    ``scipy.stats.norm.ppf`` to 1e-12 relative over the levels a user can give."""
    from scipy.stats import norm

    from escalation.estimators.stats import critical_value, z_value

    levels = np.concatenate([np.linspace(1e-6, 1 - 1e-6, 20_001), [0.5, 0.8, 0.9, 0.95, 0.99, 0.999, 1 - 1e-12]])
    ours = np.array([z_value(level) for level in levels])
    np.testing.assert_allclose(ours, norm.ppf(0.5 + levels / 2), rtol=1e-12, atol=0)
    assert z_value(0.95) == pytest.approx(1.959963984540054, rel=1e-15)
    assert critical_value(0.95) == z_value(0.95)
    assert z_value(0.9999999999999999) == np.inf  # 0.5 + level / 2 rounds to 1, as scipy.special.ndtri gives
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        z_value(1.0)


def test_the_t_quantile_still_comes_from_scipy():
    from scipy.stats import t

    from escalation.estimators.stats import critical_value

    df = np.array([0.5, 1, 2, 5, 30, 1000])
    value = critical_value(0.9, df)
    assert np.isnan(value[0])
    np.testing.assert_allclose(value[1:], t.ppf(0.95, df[1:]), rtol=1e-12)
