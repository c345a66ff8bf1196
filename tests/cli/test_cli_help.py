"""Help that reads well at 80 columns, one name for one thing, and plan's legend.

Every command and subcommand is found by walking the click command tree of ``escalation.cli.app``,
so a new command is checked without being listed here.
"""
from __future__ import annotations

import re
import typing
from enum import Enum

import pytest
import typer.main

from escalation.cli import app

from .._helpers import run_cli_output

WIDTH = 80
#: Where the text of an option's description may start at the latest: at least 40 columns of text.
TEXT_COLUMN = 40
#: Names that would be a second name for something another option already names.
SYNONYMS = {"--reps": "--nsim", "--replications": "--nsim", "--n-sim": "--nsim", "--nreps": "--nsim",
            "--jobs": "--n-jobs", "--workers": "--n-jobs", "--output": "--out", "--out-dir": "--out",
            "--output-dir": "--out", "--random-seed": "--seed", "--overwrite": "--force", "--recompute": "--force",
            "--record-mode": "--mode"}
#: The commands whose help this project's help work covers; their metavars say what is expected.
OWN = {("plan",), ("simulate",), ("leaderboard",), ("capacity",), ("reproduce",), ("suite",), ("suite", "list"),
       ("suite", "export"), ("study",), ("study", "coverage"), ("study", "sample-size"), ("study", "judges"),
       ("study", "calibration"), ("study", "differences"), ("study", "capacity"), ()}


def _walk(command, path=()):
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from _walk(sub, (*path, name))


COMMANDS = list(_walk(typer.main.get_command(app)))
PATHS = [path for path, _ in COMMANDS]


def _help(monkeypatch, capsys, path) -> str:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    code, out, err = run_cli_output(monkeypatch, capsys, *path, "--help")
    assert code == 0, err
    return out


def _sections(text: str) -> dict[str, list[str]]:
    """The lines of each ``Options:`` / ``Arguments:`` / ``Commands:`` section, by its name."""
    sections, current = {}, None
    for line in text.splitlines():
        if re.fullmatch(r"[A-Z][a-z]+:", line):
            current = sections.setdefault(line[:-1], [])
        elif not line.strip():
            current = None
        elif current is not None:
            current.append(line)
    return sections


def test_the_walk_finds_every_command():
    assert {("plan",), ("study", "judges"), ("study", "coverage"), ("reproduce",), ("suite", "export")} <= set(PATHS)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "escalation")
def test_help_reads_well_at_80_columns(monkeypatch, capsys, path):
    text = _help(monkeypatch, capsys, path)
    assert "<bool>" not in text
    for section in ("Options", "Arguments", "Commands"):
        for line in _sections(text).get(section, []):
            body = line.lstrip()
            if len(line) - len(body) == 2:  # an item: NAME [METAVAR], then its text after two spaces or more
                name, _, rest = body.partition("  ")
                if not rest.strip():
                    continue  # a long name has its text on the next lines
                start = len(line) - len(rest.lstrip())
            else:
                start = len(line) - len(body)
            assert start <= TEXT_COLUMN, f"text squeezed to {WIDTH - start} columns: {line!r}"
    long = [line for line in text.splitlines() if len(line) > WIDTH
            and not re.fullmatch(r"  -\S+ \S+", line)]  # only a name and its list of choices may overflow
    assert long == []


@pytest.mark.parametrize("path", sorted(OWN), ids=lambda p: " ".join(p) or "escalation")
def test_metavars_say_what_is_expected(monkeypatch, capsys, path):
    text = _help(monkeypatch, capsys, path)
    options = "\n".join(_sections(text).get("Options", []))
    assert not re.search(r"<(path|int|str|float)>", options), options
    command = dict(COMMANDS)[path]
    for param in getattr(command, "params", []):
        if param.param_type_name == "option" and not param.hidden:
            assert (param.help or "").strip(), f"{param.opts[0]} has no help"


def _kind(param) -> str:
    annotation = param.type_descriptor.annotation
    if typing.get_origin(annotation) is list:
        annotation = typing.get_args(annotation)[0]
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return "choice"
    return "flag" if param.is_flag else getattr(annotation, "__name__", str(annotation))


def test_one_name_for_one_thing():
    kinds: dict[str, set] = {}
    for path, command in COMMANDS:
        for param in getattr(command, "params", []):
            if param.param_type_name != "option" or param.hidden:
                continue
            for name in param.opts:
                assert name not in SYNONYMS, f"{' '.join(path)} {name}: call it {SYNONYMS[name]}"
                kinds.setdefault(name, set()).add(_kind(param))
    assert {name: kind for name, kind in kinds.items() if len(kind) > 1} == {}
    studies = [command for path, command in COMMANDS if path[:1] == ("study",) and len(path) == 2]
    for command in [*studies, dict(COMMANDS)[("reproduce",)]]:
        names = {name for param in command.params for name in param.opts}
        assert {"--out", "--smoke", "--seed", "--n-jobs", "--force", "--backend", "--scheduler"} <= names
    for command in studies:
        assert "--nsim" in {name for param in command.params if not param.hidden for name in param.opts}


def test_the_old_reps_is_hidden_and_still_works_with_a_notice(monkeypatch, capsys, tmp_path):
    import escalation.cli.commands.study as study_command

    text = _help(monkeypatch, capsys, ("study", "judges"))
    assert "--reps" not in text and "--nsim N" in text
    seen = {}

    def fake_run_study(name, out, **options):
        seen.update(options, name=name)
        raise SystemExit(0)
    monkeypatch.setattr(study_command, "run_study", fake_run_study)  # looked up when the command runs
    code, _, err = run_cli_output(monkeypatch, capsys, "study", "judges", "--out", tmp_path / "j", "--reps", "3")
    assert (code == 0 and seen["nsim"] == 3 and seen["name"] == "judges"
            and err == "notice: --reps is now called --nsim\n")
    code, _, err = run_cli_output(monkeypatch, capsys, "study", "judges", "--out", tmp_path / "j", "--reps", "3",
                                  "--nsim", "3")
    assert code == 2 and "give --nsim only" in err
    code, _, err = run_cli_output(monkeypatch, capsys, "study", "judges", "--out", tmp_path / "j", "--reps", "1")
    assert code == 2 and err.endswith("--nsim must be at least 2, got 1\n")


def test_plan_help_says_what_k_counts(monkeypatch, capsys):
    text = " ".join(_help(monkeypatch, capsys, ("plan",)).split())
    assert "K counts the scenarios of one label" in text
    assert "a plan for p_u counts ESC scenarios, a plan for p_o ACT scenarios" in text
    assert "With --paired-figure K counts cases, each an ESC and an ACT scenario" in text
    assert "legend" in text


def _printed(out: str) -> tuple[list[str], list[str]]:
    """The headers of every table ``plan`` printed, and the names its legend explains."""
    headers, names, legend = [], [], False
    for line in out.splitlines():
        if line == "Columns:":
            legend = True
        elif legend:
            match = re.match(r"  (\S+(?: \S+)*)(?:  |$)", line)
            if match:
                names.append(match[1])
        elif "┃" in line:
            headers += [cell.strip() for cell in line.split("┃") if cell.strip()]
    return headers, names


@pytest.mark.parametrize("args", [
    ["--p", "0.1", "--half-width", "0.05", "--rho", "0.1", "--replicas", "10"],
    ["--p", "0.1", "--rho", "0.1", "--scenarios", "40", "--half-width", "0.05", "--size-cv", "0.5"],
    ["--p", "0.1", "--rho", "0.1", "--scenarios", "27", "--replicas", "10"],
    ["--p", "0.8", "--half-width", "0.05", "--rho", "0.1", "--replicas", "3", "--paired-figure"],
    ["--p", "0.1", "--p-b", "0.2", "--power", "0.8", "--rho", "0.05", "--replicas", "10", "--correlation", "0.5"],
    ["--p", "0.1", "--p-b", "0.2", "--rho", "0.05", "--replicas", "10", "--scenarios", "30", "--test", "z"],
    ["--p", "0.1", "--p-b", "0.2", "--power", "0.8", "--rho", "0.05", "--scenarios", "40"],
], ids=["rate", "replicas", "half-width", "pi", "power", "power-solved", "power-replicas"])
def test_plan_legend_names_every_column_it_prints(monkeypatch, capsys, args):
    monkeypatch.setenv("COLUMNS", "250")  # no header wraps
    code, out, err = run_cli_output(monkeypatch, capsys, "plan", *args)
    assert code == 0, err
    headers, names = _printed(out)
    assert headers and names
    assert len(names) == len(set(names))
    for header in headers:
        design, _, key = header.partition(" ")
        if design in ("unpaired", "paired") and key:
            assert key in names and any(f"{design} ..." in name for name in names), header
        else:
            assert header in names, header
    assert all(len(line) <= 250 for line in out.splitlines())


def test_plan_legend_fits_80_columns(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    code, out, _ = run_cli_output(monkeypatch, capsys, "plan", "--p", "0.1", "--p-b", "0.2", "--power", "0.8",
                                  "--rho", "0.05", "--replicas", "10", "--correlation", "0.5")
    assert code == 0
    legend = out.split("Columns:\n", 1)[1].splitlines()
    assert legend and all(len(line) <= WIDTH for line in legend)
    assert "…" not in out  # no column of the tables is cut

