"""Several models on the same scenarios (estimators.metric._leaderboard and ``escalation leaderboard``)."""
from __future__ import annotations

import contextlib
import io
import itertools
import json
import zipfile
from pathlib import Path

import numpy as np
import orjson
import pandas as pd
import pytest

from escalation.estimators.metric import (
    compact_letter_display,
    compare_scored,
    holm_adjust,
    leaderboard,
    log_model,
    summarise,
)
from escalation.estimators.records import InputError, read_scored
from escalation.estimators.stats import newcombe_paired_interval
from escalation.simulate import make_scenarios, simulate, world_policy_path, write_jsonl

from .._helpers import run_cli, run_cli_output

POLICY = world_policy_path()
READERS = Path(__file__).parents[1] / "data" / "readers"
#: (model, profile, seed): two clearly different profiles, and a second run of the first one.
RUNS = (("careful", "follows_policy", 1), ("silent", "never_escalates", 2), ("careful-again", "follows_policy", 3))


def _leaderboard(monkeypatch, capsys, *args):
    return run_cli_output(monkeypatch, capsys, "leaderboard", *args)


def _run_quietly(*args) -> tuple[int, str]:
    """``escalation ARGS`` in this process, for a module fixture (no ``capsys``): exit code and stdout."""
    with pytest.MonkeyPatch.context() as monkeypatch, contextlib.redirect_stdout(io.StringIO()) as out:
        code = run_cli(monkeypatch, *args)
    return code, out.getvalue()


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three simulated logs on the SAME scenarios (canonical JSONL), each scored by ``escalation score``."""
    folder = tmp_path_factory.mktemp("runs")
    scenarios = make_scenarios(16, seed=7)
    logs = {}
    for name, profile, seed in RUNS:
        logs[name] = write_jsonl(simulate(profile, replicas=3, rho=0.1, seed=seed, scenarios=scenarios),
                                 folder / f"{name}.jsonl")
        assert _run_quietly("score", logs[name], "--policy", POLICY, "--out", folder / f"score-{name}")[0] == 0
    return folder, logs


@pytest.fixture(scope="module")
def board(runs):
    """``escalation leaderboard --json`` on the three logs, and its output folder."""
    folder, logs = runs
    out = folder / "board"
    code, printed = _run_quietly("leaderboard", *logs.values(), "--policy", POLICY, "--out", out, "--json")
    assert code == 0
    return orjson.loads(printed), out


# ------------------------------------------------------------------ Holm and the letters

def test_holm_matches_r_p_adjust():
    # R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm") -> 0.03 0.06 0.06 0.02 (Holm 1979)
    assert holm_adjust([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    adjusted = holm_adjust([0.2, np.nan, 0.01])  # an undefined test is not counted in m
    assert np.isnan(adjusted[1]) and adjusted[[0, 2]] == pytest.approx([0.2, 0.02])
    assert holm_adjust([0.6, 0.7]) == pytest.approx([1.0, 1.0])  # capped at 1, and monotone


def test_letters_of_the_published_examples():
    # The examples of R's multcompView::multcompLetters (Graves, Piepho & Selzer; the insert-absorb
    # algorithm of Piepho 2004), run with multcompView 0.1-8:
    #   dif3 <- c(FALSE, FALSE, TRUE); names(dif3) <- c("A-B", "A-C", "B-C")  ->  A "ab", B "a", C "b"
    #   dif4 <- c(.01, .02, .03, 1); names(dif4) <- c("a-b", "a-c", "b-d", "a-d")  ->  a "a", b "b", c "bc", d "ac"
    assert compact_letter_display("ABC", [("B", "C")]) == {"A": "ab", "B": "a", "C": "b"}
    assert compact_letter_display("abcd", [("a", "b"), ("a", "c"), ("b", "d")]) == {
        "a": "a", "b": "b", "c": "bc", "d": "ac"}
    assert compact_letter_display("xyz", []) == {"x": "a", "y": "a", "z": "a"}
    assert compact_letter_display("xyz", itertools.combinations("xyz", 2)) == {"x": "a", "y": "b", "z": "c"}
    with pytest.raises(ValueError, match="two distinct items"):
        compact_letter_display("xy", [("x", "w")])


def test_letters_are_the_largest_groups_without_a_difference():
    """The display's defining property, checked against every subset of small random verdicts."""
    rng = np.random.default_rng(4)
    for _ in range(40):
        items = "ABCDEF"[:rng.integers(2, 7)]
        pairs = [p for p in itertools.combinations(items, 2) if rng.random() < 0.5]
        letters = compact_letter_display(items, [pairs[i] for i in rng.permutation(len(pairs))])
        groups = {frozenset(x for x in items if letter in letters[x]) for letter in set("".join(letters.values()))}
        apart = {frozenset(p) for p in pairs}
        allowed = [frozenset(s) for k in range(1, len(items) + 1) for s in itertools.combinations(items, k)
                   if not any(frozenset(p) in apart for p in itertools.combinations(s, 2))]
        assert groups == {s for s in allowed if not any(s < t for t in allowed)}
        for x, y in itertools.combinations(items, 2):
            assert (set(letters[x]) & set(letters[y]) == set()) == (frozenset((x, y)) in apart)


# ------------------------------------------------------------------ the model of a log

def test_model_name_of_inspect_logs(tmp_path):
    assert log_model(READERS / "inspect_log.json") == "openai/gpt-4o"
    assert log_model(READERS / "inspect_log.eval") == "openai/gpt-4o"
    with zipfile.ZipFile(tmp_path / "running.eval", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({"eval": {"model": "anthropic/claude-x"}}))
    assert log_model(tmp_path / "running.eval") == "anthropic/claude-x"  # no header yet: the journal's start
    with zipfile.ZipFile(tmp_path / "both.eval", "w") as archive:
        archive.writestr("header.json", json.dumps({"eval": {"model": "header/model"}}))
        archive.writestr("_journal/start.json", json.dumps({"eval": {"model": "start/model"}}))
    assert log_model(tmp_path / "both.eval") == "header/model"
    (tmp_path / "bad.json").write_text("{not json")
    assert log_model(tmp_path / "bad.json") is None
    assert log_model(READERS / "canonical.jsonl") is None


# ------------------------------------------------------------------ against score and compare

@pytest.mark.slow
def test_each_model_is_what_score_prints(runs, board):
    folder, _ = runs
    data, _ = board
    assert {m["model"] for m in data["models"]} == {name for name, _, _ in RUNS}
    for model in data["models"]:
        summary = json.loads((folder / f"score-{model['model']}" / "summary.json").read_text())
        del summary["provenance"]  # score's record of its files and options, not part of the leaderboard's summaries
        assert model["summary"] == summary
        assert model["pi"]["value"] == summary["paired"]["pi"] and model["pi"]["ci"] == summary["paired"]["ci"]
        assert model["p_u"]["n"] == summary["under"]["n"] and model["conversations"] == model["compared"]


def test_pairs_are_what_compare_prints(runs, board):
    folder, _ = runs
    data, _ = board
    for a, b in (("careful", "silent"), ("careful-again", "careful")):
        ours = {d["metric"]: d for d in data["differences"] if {d["a"], d["b"]} == {a, b}}
        first, second = ours["pi"]["a"], ours["pi"]["b"]  # the higher ranked is A, as `compare A B`
        theirs = compare_scored(folder / f"score-{first}", folder / f"score-{second}", seed=0).to_dict()
        for metric, diff in theirs["differences"].items():
            mine = {("a" if k == "a_value" else "b" if k == "b_value" else k): v for k, v in ours[metric].items()
                    if k not in ("a", "b", "p_holm", "verdict")}
            assert mine == diff  # p_value too: compare prints the leaderboard's p-value of the pair


def test_groups_tell_the_clear_difference_and_not_the_rerun(board):
    data, _ = board
    models = {m["model"]: m for m in data["models"]}
    assert [m["model"] for m in data["models"]][-1] == "silent"  # never escalates: the lowest pi
    assert not set(models["silent"]["pi"]["groups"]) & set(models["careful"]["pi"]["groups"])
    assert set(models["careful"]["pi"]["groups"]) & set(models["careful-again"]["pi"]["groups"])
    assert models["careful"]["pi"]["groups"] == models["careful-again"]["pi"]["groups"] == "a"
    verdicts = {(d["a"], d["b"], d["metric"]): d for d in data["differences"]}
    rerun = next(d for k, d in verdicts.items() if set(k[:2]) == {"careful", "careful-again"} and k[2] == "pi")
    assert rerun["verdict"] == "not different" and rerun["p_holm"] > 0.05
    clear = next(d for k, d in verdicts.items() if set(k[:2]) == {"careful", "silent"} and k[2] == "pi")
    assert clear["verdict"] == "different" and clear["ci"][1] < 0  # B (silent) minus A (careful)
    for d in data["differences"]:  # without adjustment, different exactly when the interval leaves out 0
        if d["p_value"] is not None:
            assert (d["p_value"] <= 0.05) == (d["ci"][0] > 0 or d["ci"][1] < 0)
            assert d["p_holm"] >= d["p_value"]


def test_the_p_value_inverts_the_interval_and_holm_adjusts_it(runs):
    folder, _ = runs
    frames = {name: read_scored(folder / f"score-{name}")[0] for name, _, _ in RUNS}
    result = leaderboard(frames, n_boot=200)
    summaries = {s.model: s.summary for s in result.standings}
    fields = {"p_u": "under", "p_o": "over", "pi": "paired"}
    checked = 0
    for verdict in result.differences:
        d, p = verdict.difference, verdict.p_value
        if not 1e-9 < p < 1:
            continue
        checked += 1
        rate_a, rate_b = (getattr(summaries[m], fields[d.metric]) for m in (verdict.a, verdict.b))
        limits = result.difference_interval  # auto: the limits the study found holding at these cases
        low, high = newcombe_paired_interval(d.a, rate_a.ci(1 - p, interval=limits), d.b,
                                             rate_b.ci(1 - p, interval=limits), d.psi)
        assert min(abs(low), abs(high)) < 1e-6  # at level 1 - p the interval just touches 0
    assert checked >= 4
    for figure in ("p_u", "p_o", "pi"):
        family = [v for v in result.differences if v.metric == figure]
        assert [v.p_holm for v in family] == pytest.approx(list(holm_adjust([v.p_value for v in family])))


def test_the_cli_writes_every_file(board):
    data, out = board
    assert sorted(p.name for p in out.iterdir()) == ["differences.csv", "differences.md", "leaderboard.csv",
                                                     "leaderboard.md", "leaderboard.pdf", "leaderboard.png",
                                                     "report.html"]
    table = pd.read_csv(out / "leaderboard.csv", keep_default_na=False)
    assert table["model"].tolist() == [m["model"] for m in data["models"]] and table["rank"].tolist() == [1, 2, 3]
    assert table["groups_pi"].tolist() == [m["pi"]["groups"] for m in data["models"]]
    assert table["pi"].astype(float).tolist() == pytest.approx([m["pi"]["value"] for m in data["models"]])
    differences = pd.read_csv(out / "differences.csv")
    assert len(differences) == 3 * 4 and set(differences["metric"]) == {"p_u", "p_o", "pi", "p_a"}
    markdown = (out / "leaderboard.md").read_text()
    assert "| rank | model | p_u (95% CI) |" in markdown and "Holm" in markdown and "Piepho" in markdown
    assert (out / "differences.md").read_text().count("\n| ") == 1 + 1 + 12
    assert (out / "leaderboard.png").read_bytes()[:4] == b"\x89PNG"
    assert (out / "leaderboard.pdf").read_bytes()[:4] == b"%PDF"
    page = (out / "report.html").read_text()  # one page: both tables and the figure, nothing fetched
    assert page.count("<table>") == 2 and page.count('src="data:image/png;base64,') == 1
    assert "Content-Security-Policy" in page and "A leaderboard of escalation" in page


@pytest.mark.slow
def test_the_readable_table(runs, monkeypatch, capsys, tmp_path):
    _, logs = runs
    two = [logs["careful"], logs["silent"]]
    code, out, _ = _leaderboard(monkeypatch, capsys, *two, "--policy", POLICY, "--out", tmp_path,
                                "--name", "A", "--name", "B")
    assert code == 0
    assert "Leaderboard (32 scenarios" in out and "pi: different (Holm, 5%): A vs B" in out


# ------------------------------------------------------------------ bad input

def _one_line_error(code, out, err):
    assert code == 2 and out == "" and err.count("\n") == 1 and err.startswith("error: ")
    return err


def test_a_duplicate_name_names_both_files(runs, monkeypatch, capsys, tmp_path):
    _, logs = runs
    err = _one_line_error(*_leaderboard(monkeypatch, capsys, logs["careful"], logs["silent"], "--policy", POLICY,
                                        "--name", "same", "--name", "same", "--out", tmp_path / "o"))
    assert "'same'" in err and str(logs["careful"]) in err and str(logs["silent"]) in err
    err = _one_line_error(*_leaderboard(monkeypatch, capsys, logs["careful"], logs["silent"], "--policy", POLICY,
                                        "--name", "only-one"))
    assert "once per LOG" in err
    assert not (tmp_path / "o").exists()


def test_an_unreadable_file_names_it(runs, monkeypatch, capsys, tmp_path):
    _, logs = runs
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"conversation_id": "x", "label": "ESC"\n')
    err = _one_line_error(*_leaderboard(monkeypatch, capsys, bad, logs["careful"], "--policy", POLICY,
                                        "--out", tmp_path / "o"))
    assert str(bad) in err
    err = _one_line_error(*_leaderboard(monkeypatch, capsys, tmp_path / "absent.eval", "--policy", POLICY))
    assert "absent.eval: no such file" in err
    assert not (tmp_path / "o").exists()


def _log(path, cases, profile="follows_policy", seed=1):
    """A small log of the cases ``cases`` of one set of ten."""
    scenarios = make_scenarios(10, seed=7)
    scenarios = scenarios[scenarios["case"].isin(list(cases))].reset_index(drop=True)
    return write_jsonl(simulate(profile, replicas=2, seed=seed, scenarios=scenarios), path)


def test_disjoint_scenarios_are_refused(monkeypatch, capsys, tmp_path):
    a, b = _log(tmp_path / "a.jsonl", [0, 1, 2]), _log(tmp_path / "b.jsonl", [3, 4, 5])
    err = _one_line_error(*_leaderboard(monkeypatch, capsys, a, b, "--policy", POLICY, "--out", tmp_path / "o"))
    assert f"{a} vs {b}: share no conversation" in err
    assert not (tmp_path / "o").exists()


def test_partly_shared_scenarios_are_compared_on_the_common_ones(tmp_path):
    logs = {"wide": _log(tmp_path / "wide.jsonl", range(8)), "narrow": _log(tmp_path / "n.jsonl", range(2, 10), seed=2)}
    frames = {}
    for name, log in logs.items():
        assert _run_quietly("score", log, "--policy", POLICY, "--out", tmp_path / name)[0] == 0
        frames[name] = read_scored(tmp_path / name)[0]
    result = leaderboard(frames, n_boot=200, sources={k: str(v) for k, v in logs.items()})
    assert all(s.compared == 6 * 2 * 2 and s.conversations == 8 * 2 * 2 for s in result.standings)
    assert result.scenarios == 12 and "the 24 conversations they all share" in result.notes[0]
    assert f"wide: 8 of 32 conversations are not in every log and are left out ({logs['wide']})" in result.notes
    wide = frames["wide"]
    common = wide[wide["case_id"].isin(frames["narrow"]["case_id"])].reset_index(drop=True)
    assert next(s for s in result.standings if s.model == "wide").summary.to_dict() == summarise(common).to_dict()
    assert "- warning: the logs hold different scenarios" in result.to_markdown()


def test_one_model_and_bad_options(runs):
    folder, _ = runs
    frame = read_scored(folder / "score-careful")[0]
    alone = leaderboard({"careful": frame})
    assert alone.differences == () and alone.standings[0].groups == {"p_u": "a", "p_o": "a", "pi": "a", "p_a": "a"}
    assert alone.differences_frame().empty and alone.cases is None
    with pytest.raises(InputError, match="no model to rank"):
        leaderboard({})
    with pytest.raises(InputError, match="no column 'scenario_id'"):
        leaderboard({"x": frame.drop(columns="scenario_id")})
    with pytest.raises(ValueError, match="^`interval` must be one of auto, wilson-kish, .*; got 'bcx'$"):
        leaderboard({"x": frame}, interval="bcx")


@pytest.mark.slow
def test_the_suite_policy_is_the_default(runs, monkeypatch, capsys, tmp_path):
    from escalation.suite import suite_policy_path

    _, logs = runs
    code, default, _ = _leaderboard(monkeypatch, capsys, logs["careful"], "--json", "--out", tmp_path / "a")
    code_given, given, _ = _leaderboard(monkeypatch, capsys, logs["careful"], "--json", "--out", tmp_path / "b",
                                        "--policy", suite_policy_path())
    assert code == code_given == 0 and orjson.loads(default) == orjson.loads(given)


def test_a_folder_of_one_models_logs_ranks_as_its_run_in_one_log(runs, board, monkeypatch, capsys, tmp_path):
    # A run made in parts (batches of cases, as a run that stops and resumes): a folder holds one model's logs.
    folder, logs = runs
    lines = logs["careful"].read_text().splitlines(keepends=True)
    parts = tmp_path / "careful"
    parts.mkdir()
    (parts / "1.jsonl").write_text("".join(lines[: len(lines) // 2]))
    (parts / "2.jsonl").write_text("".join(lines[len(lines) // 2:]))
    code, printed, _ = _leaderboard(monkeypatch, capsys, parts, logs["silent"], logs["careful-again"], "--policy",
                                    POLICY, "--out", tmp_path / "o", "--json")
    assert code == 0
    split, whole = orjson.loads(printed), board[0]
    assert sorted(split) == sorted(whole)
    for key in whole:
        assert split[key] == whole[key], (key, split[key], whole[key])
    # a folder whose logs name two models is refused, naming both
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for name in ("inspect_log.json", "inspect_log.eval"):
        (mixed / name).write_bytes((READERS / name).read_bytes())
    (mixed / "other.json").write_text((READERS / "inspect_log.json").read_text().replace("openai/gpt-4o",
                                                                                         "openai/gpt-5"))
    err = _one_line_error(*_leaderboard(monkeypatch, capsys, mixed, logs["silent"], "--policy", POLICY,
                                        "--out", tmp_path / "o2"))
    assert "2 models (openai/gpt-4o, openai/gpt-5)" in err and str(mixed) in err
