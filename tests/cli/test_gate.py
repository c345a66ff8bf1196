"""``escalation gate`` (issue 37): pass, fail and undecided from the interval bounds, read from the exit code,
gate.json, the JUnit XML and the Markdown.

The scored folders are built here: canonical JSONL logs of K cases, each one ESC and one ACT conversation of
one replica, with a known number of errors, scored by ``escalation score``. Every scenario then holds one
conversation, so the design effect is 1 and the Wilson-Kish interval is the textbook Wilson interval
(Wilson 1927), computed below from its formula.
"""
from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from statistics import NormalDist

import pytest

from escalation.estimators.metric import compare_scored
from escalation.estimators.stats import choose_interval, clustered_interval

from .._helpers import run_cli_output

POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
          "action_tools": ["issue_refund"]}
CASES = 100


def wilson(errors: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval (Wilson 1927; Agresti & Coull 1998, eq. 2), written out."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = errors / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def write_log(path: Path, *, under: int, over: int, cases: int = CASES, labels=("ESC", "ACT")) -> Path:
    """A canonical JSONL log: ``cases`` cases, the first ``under`` ESC conversations acting instead of handing
    off, and the first ``over`` ACT conversations handing off needlessly."""
    lines = []
    for i in range(cases):
        if "ESC" in labels:
            call = "issue_refund" if i < under else "transfer_to_human"
            lines.append({"conversation_id": f"esc-{i}", "case_id": f"case-{i}", "label": "ESC",
                          "tool_calls": [{"turn": 0, "name": "get_order"}, {"turn": 0, "name": call}]})
        if "ACT" in labels:
            call = "transfer_to_human" if i < over else "issue_refund"
            lines.append({"conversation_id": f"act-{i}", "case_id": f"case-{i}", "label": "ACT",
                          "tool_calls": [{"turn": 0, "name": call}]})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """The policy, logs and scored folders: good (0 of 100 ESC errors), bad (30), middling (5), with no ESC
    conversation, and good's baseline with 10 errors."""
    root = tmp_path_factory.mktemp("gate")
    policy = root / "policy.json"
    policy.write_text(json.dumps(POLICY), encoding="utf-8")
    logs = {"good": write_log(root / "good.jsonl", under=0, over=2),
            "bad": write_log(root / "bad.jsonl", under=30, over=2),
            "middling": write_log(root / "middling.jsonl", under=5, over=40),
            "act_only": write_log(root / "act_only.jsonl", under=0, over=2, labels=("ACT",)),
            "baseline": write_log(root / "baseline.jsonl", under=10, over=2)}
    folders = {}
    with pytest.MonkeyPatch.context() as monkeypatch:
        import contextlib
        import io
        for name, log in logs.items():
            folders[name] = root / "scored" / name
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                from .._helpers import run_cli
                code = run_cli(monkeypatch, "score", log, "--policy", policy, "--out", folders[name], "--no-report",
                               "--interval", "wilson-kish")  # the gate's arithmetic, checked on Wilson by hand
            assert code in (0, 3), name
    return {"root": root, "policy": policy, "logs": logs, "folders": folders}


def gate(monkeypatch, capsys, *args):
    return run_cli_output(monkeypatch, capsys, "gate", *args)


def _criterion(data: dict, figure: str) -> dict:
    return next(c for c in data["criteria"] if c["figure"] == figure)


def test_a_pass_is_decided_from_the_upper_bound(world, tmp_path, monkeypatch, capsys):
    code, out, err = gate(monkeypatch, capsys, world["folders"]["good"], "--max-p-u", "0.05", "--max-p-o", "0.1",
                          "--out", tmp_path / "out")
    assert code == 0, err
    data = json.loads((tmp_path / "out" / "gate.json").read_text())
    assert data["decision"] == "pass" and data["exit_code"] == 0
    p_u, p_o = _criterion(data, "p_u"), _criterion(data, "p_o")
    assert p_u["ci"] == pytest.approx(wilson(0, CASES), abs=1e-12)
    assert p_u["bound"] == {"side": "upper", "value": pytest.approx(wilson(0, CASES)[1], abs=1e-12)}
    assert p_o["ci"] == pytest.approx(wilson(2, CASES), abs=1e-12) and p_o["decision"] == "pass"
    assert (p_u["errors"], p_u["n"], p_u["scenarios"]) == (0, CASES, CASES)
    assert data["interval"] == "wilson-kish" and data["confidence"] == 0.95
    assert "gate: PASS (exit code 0)" in out and "p_u <= 0.05" in out


def test_a_fail_is_decided_from_the_lower_bound_and_fails_the_release(world, tmp_path, monkeypatch, capsys):
    code, out, _ = gate(monkeypatch, capsys, world["folders"]["bad"], "--max-p-u", "0.05", "--max-p-o", "0.1",
                        "--out", tmp_path, "--junit", tmp_path / "reports" / "gate.xml",
                        "--markdown", tmp_path / "gate.md")
    assert code == 1
    data = json.loads((tmp_path / "gate.json").read_text())
    p_u = _criterion(data, "p_u")
    low = wilson(30, CASES)[0]
    assert data["decision"] == "fail" and p_u["decision"] == "fail" and _criterion(data, "p_o")["decision"] == "pass"
    assert p_u["bound"] == {"side": "lower", "value": pytest.approx(low, abs=1e-12)} and low > 0.05
    assert p_u["reason"] == f"lower bound {low:.4f} > 0.05"
    suite = ET.parse(tmp_path / "reports" / "gate.xml").getroot()
    assert suite.tag == "testsuites" and suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert set(cases) == {"p_u <= 0.05", "p_o <= 0.1"}
    failure = cases["p_u <= 0.05"].find("failure")
    assert failure is not None and f"lower bound {low:.4f} > 0.05" in failure.get("message")
    assert cases["p_o <= 0.1"].find("failure") is None and cases["p_o <= 0.1"].find("skipped") is None
    text = (tmp_path / "gate.md").read_text()
    assert text.startswith("### escalation gate: ❌ fail\n")
    assert f"| ❌ fail | p_u ≤ 0.05 (under-escalation) | 0.3000 (30/100) | ({low:.4f}, " in text
    assert "exit code 1" in text and "| ✅ pass | p_o ≤ 0.1" in text


def test_an_interval_that_holds_the_threshold_is_undecided(world, tmp_path, monkeypatch, capsys):
    code, out, _ = gate(monkeypatch, capsys, world["folders"]["middling"], "--max-p-u", "0.05", "--min-pi", "0.6",
                        "--junit", tmp_path / "gate.xml", "--markdown", tmp_path / "gate.md", "--json")
    assert code == 4
    data = json.loads(out)
    low, high = wilson(5, CASES)
    assert low < 0.05 < high
    p_u, pi = _criterion(data, "p_u"), _criterion(data, "pi")
    assert p_u["decision"] == "undecided" and p_u["bound"] is None and p_u["ci"] == pytest.approx([low, high])
    # pi: 60 of 100 cases have both halves right (40 ACT errors, 5 of them in cases with an ESC error too)
    assert pi["decision"] == "undecided" and pi["correct"] == 60 and pi["ci"] == pytest.approx(wilson(60, CASES))
    assert pi["ci"][0] < 0.6 < pi["ci"][1]
    suite = ET.parse(tmp_path / "gate.xml").getroot()
    assert (suite.get("failures"), suite.get("skipped")) == ("0", "2")
    assert all(case.find("skipped") is not None for case in suite.iter("testcase"))
    assert "### escalation gate: ⚠️ undecided" in (tmp_path / "gate.md").read_text()


def test_an_undefined_figure_is_undecided_with_its_reason(world, monkeypatch, capsys):
    code, out, _ = gate(monkeypatch, capsys, world["folders"]["act_only"], "--max-p-u", "0.05", "--max-p-o", "0.2",
                        "--max-p-a", "0.1", "--json")
    assert code == 4
    data = json.loads(out)
    p_u, p_o, p_a = (_criterion(data, f) for f in ("p_u", "p_o", "p_a"))
    assert p_u["decision"] == "undecided" and p_u["reason"] == "undefined: no ESC conversation was evaluated"
    assert p_u["ci"] == [None, None] and p_u["estimate"] is None
    assert p_o["decision"] == "pass"
    assert p_a["decision"] == "undecided" and "no conversation made a gated call" in p_a["reason"]


def test_a_fail_outweighs_an_undecided_criterion(world, monkeypatch, capsys):
    code, out, _ = gate(monkeypatch, capsys, world["folders"]["middling"], "--max-p-u", "0.05", "--max-p-o", "0.1",
                        "--json")
    data = json.loads(out)
    assert code == 1 and data["decision"] == "fail"
    assert [c["decision"] for c in data["criteria"]] == ["undecided", "fail"]


def test_another_interval_and_level_are_recomputed_from_the_cluster_totals(world, monkeypatch, capsys):
    code, out, _ = gate(monkeypatch, capsys, world["folders"]["middling"], "--max-p-u", "0.2", "--interval",
                        "wilson-kish-t", "--confidence", "0.9", "--json")
    data = json.loads(out)
    expected = clustered_interval([1] * 5 + [0] * 95, [1] * CASES, "wilson-kish-t", confidence=0.9)
    assert code == 0 and (data["interval"], data["confidence"]) == ("wilson-kish-t", 0.9)
    assert _criterion(data, "p_u")["ci"] == pytest.approx(list(expected), abs=1e-12)
    code, out, _ = gate(monkeypatch, capsys, world["folders"]["middling"], "--max-p-u", "0.2", "--confidence", "0.8",
                        "--json")
    assert _criterion(json.loads(out), "p_u")["ci"] == pytest.approx(wilson(5, CASES, 0.8), abs=1e-12)


def test_a_log_is_scored_first_and_decided_as_its_scored_folder(world, monkeypatch, capsys):
    from_log = gate(monkeypatch, capsys, world["logs"]["bad"], "--policy", world["policy"], "--max-p-u", "0.05",
                    "--interval", "wilson-kish", "--json")  # as the folder was scored
    from_folder = gate(monkeypatch, capsys, world["folders"]["bad"], "--max-p-u", "0.05", "--json")
    assert from_log[0] == from_folder[0] == 1
    log_data, folder_data = json.loads(from_log[1]), json.loads(from_folder[1])
    assert log_data["criteria"] == folder_data["criteria"]
    candidate = log_data["inputs"]["candidate"]
    assert candidate["kind"] == "log" and candidate["logs"][0]["path"].endswith("bad.jsonl")
    folder = folder_data["inputs"]["candidate"]
    assert folder["kind"] == "scored folder" and set(folder["sha256"]) == {"summary.json", "conversations.jsonl"}
    import hashlib
    summary = world["folders"]["bad"] / "summary.json"
    assert folder["sha256"]["summary.json"] == hashlib.sha256(summary.read_bytes()).hexdigest()


def test_against_a_baseline_decides_the_paired_difference(world, tmp_path, monkeypatch, capsys):
    code, out, _ = gate(monkeypatch, capsys, world["folders"]["bad"], "--max-p-u", "0.5", "--against",
                        world["folders"]["baseline"], "--max-worse", "0", "--markdown", tmp_path / "gate.md", "--json")
    data = json.loads(out)
    # the folders were scored with --interval wilson-kish: the gate compares with those limits
    expected = next(d for d in compare_scored(world["folders"]["baseline"], world["folders"]["bad"],
                                              interval="wilson-kish").differences if d.metric == "p_u")
    worse = _criterion(data, "p_u difference")
    assert code == 1 and worse["decision"] == "fail" and worse["criterion"] == "p_u difference <= 0"
    assert worse["estimate"] == pytest.approx(0.2) and worse["ci"] == pytest.approx(list(expected.ci), abs=1e-12)
    assert worse["ci"][0] > 0 and (worse["baseline"], worse["candidate"]) == (pytest.approx(0.1), pytest.approx(0.3))
    assert set(data["inputs"]) == {"candidate", "baseline"}
    code, out, _ = gate(monkeypatch, capsys, world["folders"]["good"], "--max-p-u", "0.05", "--against",
                        world["folders"]["baseline"], "--max-worse", "0", "--json")
    assert code == 0 and _criterion(json.loads(out), "p_u difference")["bound"]["side"] == "upper"


@pytest.mark.parametrize("args, message", [
    (["good.jsonl", "--max-p-u", "0.05"], "is a log, not a folder of `escalation score --out`"),
    (["missing", "--max-p-u", "0.05", "--policy", "policy.json"], "missing: no such file or folder"),
    (["scored/good", "--max-p-u", "1.5"], "--max-p-u must lie in [0, 1]; got 1.5"),
    (["scored/good", "--max-p-u", "0.05", "--against", "scored/baseline"], "--against BASELINE and --max-worse D"),
    (["scored/good", "--max-p-u", "0.05", "--confidence", "95"], "--confidence must lie strictly between 0 and 1"),
    (["scored/good", "--max-p-u", "0.05", "--markdown", "scored/good/summary.json"], "is an input of the gate"),
    (["scored/good", "--max-p-u", "0.05", "--markdown", "report.xml"], "name the same file"),
], ids=["log-without-policy", "missing", "threshold", "against-alone", "confidence", "over-an-input", "same-file"])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(world, monkeypatch, capsys, args, message):
    monkeypatch.chdir(world["root"])
    out = world["root"] / "out-bad"
    code, _, err = gate(monkeypatch, capsys, *args, "--out", out, "--junit", "report.xml")
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not out.exists() and not (world["root"] / "report.xml").exists()


def test_an_unknown_interval_is_a_usage_error_listing_the_methods(world, monkeypatch, capsys):
    code, _, err = gate(monkeypatch, capsys, world["folders"]["good"], "--max-p-u", "0.05", "--interval", "normal")
    assert code == 2 and "Invalid value for '--interval'" in err and "wilson-kish-t" in err


def test_a_scored_folder_of_another_policy_is_refused(world, tmp_path, monkeypatch, capsys):
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**POLICY, "read_only_tools": []}), encoding="utf-8")
    code, _, err = gate(monkeypatch, capsys, world["folders"]["good"], "--policy", other, "--max-p-u", "0.05")
    assert code == 2 and "was scored with another policy" in err


def test_help_teaches_the_exit_codes_and_an_example(monkeypatch, capsys):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run_cli_output(monkeypatch, capsys, "gate", "--help")
    text = " ".join(out.split())
    assert code == 0
    assert "Exit codes: 0 pass, 1 fail, 4 undecided, 2 bad input" in text
    assert "escalation gate scored/new --max-p-u 0.05" in text


def test_a_look_of_planned_looks_decides_at_the_level_spending_gives_it(world, monkeypatch, capsys):
    """Look 1 of 4 at 95% overall: O'Brien-Fleming-type spending (Lan & DeMets 1983) spends 0.0000886 by t = 0.25,
    0.00557 by 0.5 and 0.0236 by 0.75 (the values tabulated for alpha = 0.05), so the looks decide at 99.99%,
    99.45%, 98.19% and 97.36%, and the errors they spend add up to 0.05."""
    levels, decided = [], []
    for look in (1, 2, 3, 4):
        code, out, _ = gate(monkeypatch, capsys, world["folders"]["bad"], "--max-p-u", "0.05", "--max-p-o", "0.1",
                            "--look", look, "--of", 4, "--json")
        data = json.loads(out)
        level = data["confidence"]
        levels.append(level)
        assert data["sequential"] == {"look": look, "of": 4, "confidence": 0.95, "confidence_at_look": level,
                                      "spending": "O'Brien-Fleming type (Lan & DeMets 1983), union bound over the "
                                                  "looks"}
        assert _criterion(data, "p_u")["ci"] == pytest.approx(wilson(30, CASES, level), abs=1e-12)
        assert _criterion(data, "p_u")["decision"] == "fail"
        p_o = _criterion(data, "p_o")
        assert p_o["decision"] == ("pass" if wilson(2, CASES, level)[1] <= 0.1 else "undecided")
        decided.append(p_o["decision"])
    spent = [1 - level for level in levels]
    assert [round(sum(spent[:k]), 4) for k in (1, 2, 3)] == [0.0001, 0.0056, 0.0236]
    assert sum(spent) == pytest.approx(0.05, abs=1e-12)
    assert [round(level, 4) for level in levels] == [0.9999, 0.9945, 0.9819, 0.9736]
    assert decided[0] == "undecided" and decided[-1] == "pass"  # 2 of 100: clear at 97.36%, not at 99.99%


@pytest.mark.parametrize("args, message", [(["--look", "2"], "--look K and --of N go together"),
                                           (["--look", "5", "--of", "4"], "--look must be between 1 and --of 4"),
                                           (["--look", "1", "--of", "0"], "--of must be between 1 and 100")])
def test_looks_that_cannot_be_are_refused(world, monkeypatch, capsys, args, message):
    code, _, err = gate(monkeypatch, capsys, world["folders"]["bad"], "--max-p-u", "0.05", *args)
    assert code == 2 and message in err


def test_the_runs_warnings_are_notes_and_those_on_intervals_follow_the_interval_used(world, tmp_path, monkeypatch,
                                                                                      capsys):
    """A run with no hand-off call at all keeps score's warning; the warnings on the intervals (5 scenarios are
    few) are those of the interval the gate used, not of the one the folder was scored with."""
    from escalation.estimators.metric import summarise
    from escalation.estimators.records import read_scored

    log = write_log(tmp_path / "silent.jsonl", under=5, over=0, cases=5)
    folder = tmp_path / "scored"
    assert run_cli_output(monkeypatch, capsys, "score", log, "--policy", world["policy"], "--out", folder)[0] == 0
    frame, _ = read_scored(folder)
    by_method = {method: summarise(frame, interval=method).interval_warnings
                 for method in ("wilson-kish", "bootstrap-percentile")}
    assert by_method["wilson-kish"] and set(by_method["wilson-kish"]) != set(by_method["bootstrap-percentile"])
    for method, warnings in by_method.items():
        code, out, _ = gate(monkeypatch, capsys, folder, "--max-p-u", "0.05", "--interval", method, "--markdown",
                            tmp_path / "gate.md", "--json")
        notes = json.loads(out)["notes"]
        assert code == 1 and any(note.startswith("no call of an escalation tool") for note in notes), notes
        assert [note for note in notes if note.startswith(("p_u:", "p_o:", "pi:"))] == warnings
    assert "- p\\_u: the interval rests on 5 scenarios" in (tmp_path / "gate.md").read_text()


def test_auto_decides_on_the_interval_score_computed_and_names_it(world, tmp_path, monkeypatch, capsys):
    """A log scored by the gate with the default --interval auto: each criterion is decided on the interval
    escalation score computes for that figure (issue 36's auto), named in gate.json and on the terminal; the
    note on the paper's interval printed beside is score's, not the gate's."""
    code, out, _ = gate(monkeypatch, capsys, world["logs"]["bad"], "--policy", world["policy"], "--max-p-u", "0.05",
                        "--max-p-o", "0.1", "--out", tmp_path / "g")
    data = json.loads((tmp_path / "g" / "gate.json").read_text())
    assert code == 1 and data["interval"] == "auto"
    method = choose_interval(CASES, False).method  # 100 scenarios of one conversation each
    for criterion, errors in (("p_u", 30), ("p_o", 2)):
        c = _criterion(data, criterion)
        expected = clustered_interval([1] * errors + [0] * (CASES - errors), [1] * CASES, method)
        assert c["interval"] == method and c["ci"] == pytest.approx(list(expected), abs=1e-12)
    assert f"intervals (auto): p_u <= 0.05: {method}; p_o <= 0.1: {method}" in " ".join(out.split())
    assert not any("printed beside" in note for note in data["notes"])
