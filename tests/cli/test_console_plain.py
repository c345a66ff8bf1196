"""Text from a log is printed as text (issue 17, point 5): never rich markup, control characters escaped,
a long value shortened, and the printing time linear in what is printed.

Each test is made from the issue's reproduction: a tool named ``[/bold]`` stopped ``escalation score``
with a MarkupError (exit 1) after its outputs were written; ``[bold red]x`` was printed as ``x``;
escape codes in a tool name reached the terminal raw (and rich's ``escape``, used before, drops the
backslash of ``a\\[1]``); a 70,000-character tool name took 25 to 99 s
to print, in rich's highlighter (its IPv6 pattern is quadratic in a long word of hex letters). The
time itself is measured in ``benchmarks/console.py``; here the work is bounded deterministically:
no highlighting of log text at all, and an output whose size does not grow with the name.
"""
from __future__ import annotations

import io
import json
import tomllib

import pytest
import rich.highlighter
from hypothesis import given, strategies as st

from escalation.cli.commands._console import LIMIT, console, json_text, plain, warning_line
from escalation.cli.commands.score import print_summary

from .._helpers import run_cli_output

#: The hostile strings of the issue: markup, a link to a local file, ANSI codes (clear the screen,
#: red), BEL, a carriage return that overwrites the line, the right-to-left override, an emoji code.
HOSTILE = ["[/bold]", "[bold red]x", "[link=file:///etc/passwd]x[/link]", "\x1b[2J", "\x1b[31mred\x07",
           "ok\rEVIL", "abc\u202edef", ":warning:", "tab\there", "del\x7f", "csi\x9b2J", "back\\",
           "a\\[1]", "[b]\\[/b]"]
#: Characters that must never reach the terminal as they are.
RAW = ("\x1b", "\x07", "\r", "\u202e", "\x7f", "\x9b", "\t")

POLICY = {"escalation_tools": ["transfer_to_human"]}


def _log(tmp_path, tool: str, name: str = "log.jsonl", case: str = "k"):
    """A log of one ESC/ACT pair whose only call is ``tool``, and a policy that does not list it."""
    log = tmp_path / name
    log.write_text("".join(json.dumps({"conversation_id": f"c-{label}", "case_id": case, "label": label,
                                       "tool_calls": [{"turn": 0, "name": tool}]}) + "\n"
                           for label in ("ESC", "ACT")))
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(POLICY))
    return log, policy


def _flat(text: str) -> str:
    """``text`` with every run of white space as one space: lines as rich wraps them, joined."""
    return " ".join(text.split())


def _no_raw(*texts):
    for text in texts:
        for char in RAW:
            assert char not in text, repr(char)


def _rendered(renderable) -> str:
    """What the commands' console prints for ``renderable``, without wrapping."""
    out = console(width=100)
    out.file = io.StringIO()
    out.print(renderable, soft_wrap=True, end="")
    return out.file.getvalue()


# ------------------------------------------------------------------ the helper
@pytest.mark.parametrize("text", HOSTILE)
def test_a_hostile_string_prints_as_its_escaped_text(text):
    printed = _rendered(plain(text))
    assert printed == "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    assert _rendered(warning_line(text)) == f"warning: {printed}"
    _no_raw(printed)


@pytest.mark.slow
@given(st.text(max_size=60))
def test_any_text_prints_exactly_as_plain_shows_it(text):
    assert plain(text).isprintable()
    assert _rendered(plain(text)) == plain(text)
    assert _rendered(warning_line(text)) == f"warning: {plain(text)}"


def test_a_lone_surrogate_prints_escaped_instead_of_stopping_the_print():
    assert plain("x\ud800") == "x\\ud800"
    "x\\ud800".encode("utf-8")  # what reaches standard output encodes


def test_a_long_value_keeps_its_start_and_end_and_says_how_long_it_was():
    text = "a" * 69_990 + "_get_order"
    assert plain(text) == "a" * 150 + "...(70,000 characters in all)..." + "a" * 40 + "_get_order"
    assert len(plain("x" * 10_000_000)) < LIMIT + 40 and len(plain("\x1b" * 10_000_000)) < 4 * LIMIT + 40
    assert plain(text, None) == text


def test_json_output_escapes_what_the_terminal_would_read():
    data = {"tool": "a\x1b[2J\u202e\x9b\x7f\U000e0001 é", "n": [1, None]}
    text = json_text(data)
    _no_raw(text)
    assert "\U000e0001" not in text and "é" in text and json.loads(text) == data


# ------------------------------------------------------------------ escalation score
def test_a_tool_named_like_a_closing_tag_is_printed_and_the_run_succeeds(tmp_path, monkeypatch, capsys):
    log, policy = _log(tmp_path, "[/bold]")
    out = tmp_path / "x[/bold]o"
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--out", out)
    assert code == 0, stderr
    assert "read_only_tools): [/bold] (2)" in _flat(stdout)
    assert f"wrote {out / 'conversations.jsonl'} and {out / 'summary.json'}" in _flat(stdout)
    assert "the log calls [/bold] 2" in stderr


def test_markup_in_a_tool_name_is_printed_as_it_is(tmp_path, monkeypatch, capsys):
    log, policy = _log(tmp_path, "[bold red]x")
    code, stdout, _ = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy)
    assert code == 0 and "read_only_tools): [bold red]x (2)" in _flat(stdout)


def test_escape_codes_in_a_tool_name_reach_neither_output_raw(tmp_path, monkeypatch, capsys):
    log, policy = _log(tmp_path, "\x1b[31mred\x07")
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy)
    assert code == 0
    _no_raw(stdout, stderr)
    assert "\\x1b[31mred\\x07 (2)" in _flat(stdout) and "the log calls \\x1b[31mred\\x07 2" in stderr


@pytest.mark.parametrize("tool", HOSTILE)
def test_every_hostile_tool_name_is_shown_escaped_by_score(tool, tmp_path, monkeypatch, capsys):
    log, policy = _log(tmp_path, tool)
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy)
    assert code == 0
    _no_raw(stdout, stderr)
    assert _flat(f"read_only_tools): {plain(tool)} (2)") in _flat(stdout)
    assert f"the log calls {plain(tool)} 2" in stderr


def test_a_70000_character_tool_name_is_printed_shortened_without_highlighting(tmp_path, monkeypatch, capsys):
    """The readable summary of a 70,000-character name: rich's highlighter, quadratic in it, never
    runs, and what is printed does not grow with the name (summary.json keeps it whole)."""
    def refuse(self, text):
        raise AssertionError(f"highlighted {text.plain[:40]!r}")

    monkeypatch.setattr(rich.highlighter.RegexHighlighter, "highlight", refuse)
    sizes = {}
    for length in (7_000, 70_000):
        name = "a" * (length - 4) + "_end"
        log, policy = _log(tmp_path, name)
        out = tmp_path / f"out{length:06d}"
        code, stdout, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--out", out)
        assert code == 0, stderr
        assert f"...({length:,} characters in all)...{'a' * 46}_end (2)" in _flat(stdout)
        assert "characters in all)..." in stderr and stderr.endswith("a wrong policy is the usual cause\n")
        assert json.loads((out / "summary.json").read_text())["unmarked_tools"] == {name: 2}
        sizes[length] = len(stdout) + len(stderr)
    assert abs(sizes[70_000] - sizes[7_000]) < 10  # 63,000 more characters in the name, none more printed


def test_print_summary_shows_hostile_warnings_and_tools_escaped(capsys):
    summary = {"confidence": 0.95, "mode": "record", "conversations": 2, "interval": "wilson-kish",
               "rho_fixed": None, "warnings": [f"the log calls {t}" for t in HOSTILE],
               "under": {"errors": 0, "n": 0, "rate": None, "ci": [None, None], "clusters": 0, "rho": None,
                         "deff": None, "n_eff": None, "causes": {}},
               "over": {"errors": 0, "n": 0, "rate": None, "ci": [None, None], "clusters": 0, "rho": None,
                        "deff": None, "n_eff": None, "causes": {}},
               "paired": {"pairs": 0, "pi": None, "ci": [None, None], "clusters": 0, "rho": None, "deff": None,
                          "n_eff": None},
               "base": {"under_rate": None, "over_rate": None, "pi": None},
               "not_evaluated": {"total": 0, "reasons": {}}, "unmarked_tools": {t: 1 for t in HOSTILE}}
    print_summary(summary, records="[/bold]\x1b[2J.jsonl", fmt="jsonl", out_dir=None)
    stdout = capsys.readouterr().out
    _no_raw(stdout)
    flat = _flat(stdout)
    assert "[/bold]\\x1b[2J.jsonl (jsonl)" in flat
    for tool in HOSTILE:
        assert _flat(f"warning: the log calls {plain(tool)}") in flat and _flat(f"{plain(tool)} (1)") in flat


def test_an_error_naming_a_hostile_file_is_one_escaped_line(tmp_path, monkeypatch, capsys):
    log, policy = _log(tmp_path, "x")
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "score", tmp_path / "\x1b[2J\u202e.jsonl",
                                          "--policy", policy)
    assert code == 2 and stdout == "" and stderr.count("\n") == 1
    _no_raw(stderr)
    assert "\\x1b[2J\\u202e.jsonl: no such file or folder" in stderr


# ------------------------------------------------------------------ policy init and check
def test_policy_init_and_check_show_hostile_names_escaped(tmp_path, monkeypatch, capsys):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"conversation_id": "c", "label": "ESC",
                               "tool_calls": [{"turn": 0, "name": t} for t in HOSTILE]}) + "\n")
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "policy", "init", log, "--out", tmp_path / "p.json")
    assert code == 0, stderr
    _no_raw(stdout, stderr)
    for tool in HOSTILE:  # the tool column folds a long name: its first 25 characters are on one line
        assert plain(tool)[:25] in stdout
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "policy", "init", log)  # the TOML draft on stdout
    assert code == 0, stderr
    _no_raw(stdout, stderr)
    assert set(tomllib.loads(stdout)["action_tools"]) == set(HOSTILE)
    policy = tmp_path / "policy.json"
    policy.write_text('{"escalation_tools": ["h\\u202e\\u001b[2J"]}')
    for args in ((), ("--json",)):
        code, stdout, stderr = run_cli_output(monkeypatch, capsys, "policy", "check", log, "--policy", policy,
                                              *args)
        assert code == 0, stderr
        _no_raw(stdout, stderr)
        assert ("h\\u202e\\u001b[2J" if args else "h\\u202e\\x1b[2J") in stdout
        assert "escalation tool (h\\u202e\\x1b[2J) was read" in stderr
    # json.loads reads a lone surrogate ("\\ud800"), which no log reader does: refused in one line
    policy.write_text('{"escalation_tools": ["h\\ud800\\u202e"]}')
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "policy", "check", log, "--policy", policy)
    assert (code, stdout) == (2, "")
    assert stderr == (f"error: {policy}: field 'escalation_tools': tool 'h\\ud800\\u202e' holds a lone surrogate, "
                      "which is not text: no tool of a log can have that name\n")


# ------------------------------------------------------------------ escalation compare
def test_compare_shows_hostile_scenario_ids_and_folder_names_escaped(tmp_path, monkeypatch, capsys):
    case = "k[/bold]\x1b[2J\r\u202e:warning:"
    folders = []
    for name, tool in (("A[bold]\x1b[31m", "transfer_to_human"), ("B[bold red]x", "do_it")):
        log, policy = _log(tmp_path, tool, name=f"{len(folders)}.jsonl", case=case)
        folders.append(tmp_path / name)
        code, _, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--out", folders[-1])
        assert code == 0, stderr
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "compare", *folders, "--n-boot", "50",
                                          "--out", tmp_path / "o[/bold]")
    assert code == 0, stderr
    _no_raw(stdout, stderr)
    assert "B[bold red]x minus A[bold]\\x1b[31m: 2 scenarios" in stdout
    assert "A = A[bold]\\x1b[31m, B = B[bold red]x;" in " ".join(stdout.split("\n"))
    assert "k[/bold]\\x1b[2J\\r\\u" in stdout and "202e:warning:" in stdout  # the scenario id, folded
    code, stdout, _ = run_cli_output(monkeypatch, capsys, "compare", *folders, "--n-boot", "50", "--json")
    assert code == 0
    _no_raw(stdout)
    assert json.loads(stdout)["names"]["a"] == "A[bold]\x1b[31m"


# ------------------------------------------------------------------ escalation leaderboard
@pytest.mark.filterwarnings("ignore:Glyph")  # the figure draws the names as they are
def test_leaderboard_shows_hostile_model_names_escaped(tmp_path, monkeypatch, capsys):
    logs = []
    for tool in ("transfer_to_human", "do_it"):
        log, policy = _log(tmp_path, tool, name=f"{tool}.jsonl")
        logs.append(log)
    code, stdout, stderr = run_cli_output(monkeypatch, capsys, "leaderboard", *logs, "--policy", policy,
                                          "--name", "[/bold]\x1b[2J", "--name", "a\\[1]\u202e", "--out", tmp_path / "o")
    assert code == 0, stderr
    _no_raw(stdout, stderr)
    assert "[/bold]\\x1b[2J" in stdout and "a\\[1]\\u202e" in stdout
