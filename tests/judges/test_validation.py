"""Mode B corrected with a validation file (issue 16, point 6): ``correct_text_summary``.

The data come from the simulator (``invents_actions``: fake escalations hide ESC errors from the
text and add ACT over-escalations to it), so the truth is known. The counts are checked against
the reference scorer (``score_conversation``, one conversation at a time) and each correction
(predictive values, the default, and Rogan-Gladen) against its formula and cluster-robust
variance computed by hand; over many data sets the corrected rates are closer to the truth than
the text-only ones, and the default correction is unbiased within Monte Carlo error.
"""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import orjson
import pytest
from rich.console import Console
from scipy import stats

import escalation.simulate as S
from escalation.cli.commands._validation import MODE_B_BOUNDS, MODE_B_HEADER, print_validation
from escalation.estimators import judges, metric, records


def _split(sim, folder, *, share=0.3, seed=0):
    """Write ``sim`` as a text-only main file (``tool_calls`` null) and a validation file (both)."""
    whole = S.write_jsonl(sim, folder / "all.jsonl")
    lines = whole.read_bytes().splitlines()
    chosen = np.random.default_rng(seed).random(len(lines)) < share
    main, validation = folder / "main.jsonl", folder / "validation.jsonl"
    with main.open("wb") as m, validation.open("wb") as v:
        for line, is_validation in zip(lines, chosen):
            if is_validation:
                v.write(line + b"\n")
            else:
                record = orjson.loads(line)
                record["tool_calls"] = None
                m.write(orjson.dumps(record) + b"\n")
    return main, validation


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    sim = S.simulate("invents_actions", cases=80, replicas=3, rho=0.3, seed=11)
    main, validation = _split(sim, tmp_path_factory.mktemp("validation"))
    return sim.policy, main, validation


def _by_hand(main_path, validation_path, policy, label, method, confidence=0.95):
    """The correction per scenario, from counts the reference scorer makes one conversation at a time."""
    score = "u" if label == "ESC" else "o"
    # per scenario: t, n (run); both, text_only, record_only, neither (validation)
    per = defaultdict(lambda: np.zeros(6))
    for conv in records.read_jsonl(main_path):
        line = metric.score_conversation(conv, policy, mode="text")
        if line["evaluated"] and line["label"] == label:
            per[line["scenario_id"]] += [line[score], 1, 0, 0, 0, 0]
    for conv in records.read_jsonl(validation_path):
        truth = metric.score_conversation(conv, policy, mode="record")
        text = metric.score_conversation(conv, policy, mode="text")
        if truth["evaluated"] and text["evaluated"] and truth["label"] == label:
            assert truth[score] == conv["metadata"]["truth"][score]  # the simulator's truth
            r, x = truth[score], text[score]
            per[truth["scenario_id"]] += [0, 0, r and x, x and not r, r and not x, not (r or x)]
    t, n, both, text_only, record_only, neither = np.array(list(per.values())).T
    q = t.sum() / n.sum()
    if method == "predictive_values":  # Tenenbein 1970, linearised per scenario
        flagged, clear = both + text_only, record_only + neither
        ppv, fo = both.sum() / flagged.sum(), record_only.sum() / clear.sum()
        p = q * ppv + (1 - q) * fo
        e = ((ppv - fo) * (t - q * n) / n.sum() + q * (both - ppv * flagged) / flagged.sum()
             + (1 - q) * (record_only - fo * clear) / clear.sum())
    else:  # Rogan & Gladen 1978
        err, ok = both + record_only, text_only + neither
        se, sp = both.sum() / err.sum(), neither.sum() / ok.sum()
        j = se + sp - 1
        p = (q + sp - 1) / j
        e = ((t - q * n) / n.sum() - p * (both - se * err) / err.sum() + (1 - p) * (neither - sp * ok) / ok.sum()) / j
    k = len(per)
    std = math.sqrt(k / (k - 1) * np.sum(e ** 2))
    half = stats.t.ppf(0.5 + confidence / 2, k - 1) * std
    return dict(raw=q, rate=p, se=std, ci=(max(p - half, 0.0), min(p + half, 1.0)), clusters=k,
                both=both.sum(), text_only=text_only.sum(), record_only=record_only.sum(), neither=neither.sum())


@pytest.mark.slow
@pytest.mark.parametrize("method", ["predictive_values", "rogan_gladen"])
@pytest.mark.parametrize("figure,label", [("under", "ESC"), ("over", "ACT")])
def test_the_correction_per_scenario_matches_the_formula_on_the_reference_scorer_counts(files, figure, label, method):
    policy, main, validation = files
    summary, _ = metric.score_file(main, policy, mode="text")
    result = judges.correct_text_summary(summary, validation, policy, method=method)
    got, want = getattr(result, figure), _by_hand(main, validation, policy, label, method)
    assert got.raw == pytest.approx(want["raw"]) and got.raw == getattr(summary, figure).rate
    for key in ("both", "text_only", "record_only", "neither", "clusters"):
        assert getattr(got, key) == want[key], key
    assert got.validation_n == want["both"] + want["text_only"] + want["record_only"] + want["neither"]
    assert got.rate == pytest.approx(want["rate"], rel=1e-12) and got.se == pytest.approx(want["se"], rel=1e-12)
    assert tuple(got.ci) == pytest.approx(want["ci"], rel=1e-12)
    assert got.df == want["clusters"] - 1
    assert got.ppv == want["both"] / (want["both"] + want["text_only"])
    assert got.sensitivity == want["both"] / (want["both"] + want["record_only"])
    assert result.method == method == got.method and result.variance == "cluster-robust"


def test_the_default_is_the_calibration_studys_correction():
    assert judges.VALIDATION_METHOD == "predictive_values"
    assert judges.VALIDATION_METHODS == ("predictive_values", "rogan_gladen")


def test_the_text_only_figures_are_biased_as_spec_section_4_says_and_the_correction_moves_them(files):
    policy, main, validation = files
    summary, _ = metric.score_file(main, policy, mode="text")
    result = judges.correct_text_summary(summary, validation, policy)
    truth = S.expected_rates(S.PROFILES["invents_actions"])
    # p_u from the text misses the fake escalations: below the truth, and the correction raises it
    assert result.under.raw < truth["p_u"] and result.under.rate > result.under.raw
    # every real hand-off is stated, so an error from the text is one with the record
    assert result.under.specificity == 1.0 and result.under.ppv == 1.0
    # p_o from the text counts the fake hand-offs in ACT cases: above the truth, and the correction lowers it
    assert result.over.raw > truth["p_o"] and result.over.rate < result.over.raw
    for half, p in ((result.under, truth["p_u"]), (result.over, truth["p_o"])):
        assert half.ci.low <= p <= half.ci.high


def test_to_dict_is_json_with_nulls_and_the_printout_names_the_bounds(files):
    policy, main, validation = files
    summary, _ = metric.score_file(main, policy, mode="text")
    result = judges.correct_text_summary(summary, validation, policy)
    data = orjson.loads(orjson.dumps(result.to_dict()))
    assert data["method"] == "predictive_values" and data["pi"]["corrected"] is False
    assert data["under"]["validation"]["n"] == result.under.validation_n and data["file"] == str(validation)
    assert data["conversations"] == len(validation.read_bytes().splitlines())
    console = Console(width=100, record=True)
    print_validation(result, console)
    text = console.export_text()
    assert MODE_B_BOUNDS in " ".join(text.split())
    assert "p_u under-escalation" in text and f"{result.under.rate:.4f}" in text
    assert max(map(len, text.splitlines())) <= 100 and len(MODE_B_HEADER) <= 100
    scores, fmt = judges.read_validation(validation, policy)  # read (and checked) first, corrected later: the same
    assert judges.correct_text_summary(summary, scores, source=validation, format=fmt).to_dict() == result.to_dict()
    console = Console(width=100, record=True)
    print_validation(data, console)  # summary.json's object prints the same
    assert console.export_text() == text


def test_an_undefined_correction_is_null_with_a_warning_never_a_placeholder(files, tmp_path):
    """A validation file with no ACT conversation, and no ESC error: nothing can be corrected."""
    policy, main, validation = files
    summary, _ = metric.score_file(main, policy, mode="text")
    kept = [line for line in validation.read_bytes().splitlines()
            if orjson.loads(line)["label"] == "ESC" and orjson.loads(line)["truth"]["u"] == 0]
    only = tmp_path / "only-correct-esc.jsonl"
    only.write_bytes(b"\n".join(kept) + b"\n")
    for method, why in (("predictive_values", "positive predictive value of the text verdict is undefined"),
                        ("rogan_gladen", "sensitivity of the text verdict is undefined")):
        data = judges.correct_text_summary(summary, only, policy, method=method).to_dict()
        for half in ("under", "over"):
            assert data[half]["rate"] is None and data[half]["ci"] == [None, None] and data[half]["se"] is None
            assert data[half]["df"] is None and data[half]["clusters"] == 0
            assert data[half]["raw"]["rate"] == getattr(summary, half).rate
        assert data["under"]["sensitivity"] is None and data["under"]["ppv"] is None
        assert data["under"]["specificity"] == 1.0 and data["under"]["false_omission"] == 0.0
        assert data["over"]["validation"]["n"] == 0 and data["over"]["sensitivity"] is None
        assert any(why in w for w in data["warnings"]), data["warnings"]
        assert any("no evaluated ACT conversation" in w for w in data["warnings"])


def test_bad_validation_input_is_an_input_error_naming_the_file_line_and_id(files, tmp_path):
    policy, main, validation = files
    summary, _ = metric.score_file(main, policy, mode="text")
    lines = validation.read_bytes().splitlines()
    record = orjson.loads(lines[2])
    record["tool_calls"] = None
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b"\n".join([*lines[:2], orjson.dumps(record), *lines[3:]]) + b"\n")
    with pytest.raises(records.InputError) as err:
        judges.correct_text_summary(summary, bad, policy)
    message = str(err.value)
    assert message.startswith(f"{bad}:3: field 'tool_calls': ") and repr(record["conversation_id"]) in message
    assert "no_record" in message and "\n" not in message
    with pytest.raises(records.InputError, match="no such file"):
        judges.correct_text_summary(summary, tmp_path / "absent.jsonl", policy)
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"\n")
    with pytest.raises(records.InputError):
        judges.correct_text_summary(summary, empty, policy)
    record_mode, _ = metric.score_file(validation, policy)
    with pytest.raises(records.InputError, match="--mode text"):
        judges.correct_text_summary(record_mode, validation, policy)


def test_conversations_not_evaluated_in_both_modes_are_left_out_and_counted(files, tmp_path):
    policy, main, validation = files
    summary, _ = metric.score_file(main, policy, mode="text")
    lines = validation.read_bytes().splitlines()
    first, second = orjson.loads(lines[0]), orjson.loads(lines[1])
    first["messages"] = []  # no text: no_text
    second["label"] = None  # no_label
    changed = tmp_path / "changed.jsonl"
    changed.write_bytes(b"\n".join([orjson.dumps(first), orjson.dumps(second), *lines[2:]]) + b"\n")
    result = judges.correct_text_summary(summary, changed, policy)
    assert result.evaluated == len(lines) - 2 and result.not_evaluated == {"no_text": 1, "no_label": 1}
    assert any("2 of" in w and "no_text 1" in w for w in result.warnings)
    assert result.under.validation_n + result.over.validation_n == len(lines) - 2


@pytest.mark.slow
def test_over_many_data_sets_the_corrected_rates_are_closer_to_the_truth_than_the_raw_ones():
    """200 data sets of 150 cases x 2 replicas (rho 0.2), 30% of the conversations with the record.

    The default correction (predictive values) is closer to the truth than the text-only rate in
    every half (paired over the data sets, 3 MCSE), unbiased within 3 MCSE, and its interval covers
    within 3 MCSE of 95%. Rogan-Gladen is closer than the raw rate in mean absolute error too, but
    with the phrase judge's low sensitivity for p_u it is biased up and far more variable: the
    reason the default is the predictive values.
    """
    datasets, cases, replicas, share = 200, 150, 2, 0.3
    profile = S.PROFILES["invents_actions"]
    truth = S.expected_rates(profile)
    sim = S.simulate(profile, cases=datasets * cases, replicas=replicas, rho=0.2, seed=2026)
    scores = judges.validation_scores(sim.records, sim.policy)  # both scores of every conversation, vectorised
    text = metric.score_records(sim.records, sim.policy, mode="text")
    block = sim.records.conversations["case_id"].factorize()[0] // cases
    rng = np.random.default_rng(7)
    rows_of = defaultdict(list)
    for r in range(datasets):
        rows = np.flatnonzero(block == r)
        chosen = rng.random(len(rows)) < share
        summary = metric.summarise(text.iloc[rows[~chosen]], mode="text")
        for method in judges.VALIDATION_METHODS:
            result = judges.correct_text_summary(summary, scores.iloc[rows[chosen]], method=method)
            for figure, p in (("under", truth["p_u"]), ("over", truth["p_o"])):
                half = getattr(result, figure)
                rows_of[method, figure].append((half.raw - p, half.rate - p, half.ci.low <= p <= half.ci.high))
    errors = {key: np.array(rows, dtype=float).T for key, rows in rows_of.items()}
    for (method, figure), (raw, corrected, covered) in errors.items():
        assert np.isfinite(corrected).all()
        gain = np.abs(corrected) - np.abs(raw)  # paired over the data sets
        assert gain.mean() + 3 * gain.std(ddof=1) / math.sqrt(datasets) < 0, (method, figure, gain.mean())
        assert abs(raw.mean()) > 10 * raw.std(ddof=1) / math.sqrt(datasets)  # the raw figure is biased
    for figure in ("under", "over"):
        raw, corrected, covered = errors["predictive_values", figure]
        bias_mcse = corrected.std(ddof=1) / math.sqrt(datasets)
        assert abs(corrected.mean()) < 3 * bias_mcse, (figure, corrected.mean(), bias_mcse)
        assert abs(covered.mean() - 0.95) < 3 * math.sqrt(0.95 * 0.05 / datasets), (figure, covered.mean())
    pv, rg = errors["predictive_values", "under"][1], errors["rogan_gladen", "under"][1]
    assert np.sqrt(np.mean(pv ** 2)) < 0.5 * np.sqrt(np.mean(rg ** 2))


def _cli(*args):
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-m", "escalation", *map(str, args)], capture_output=True, timeout=120)


def _policy_file(policy, tmp_path):
    path = tmp_path / "policy.json"
    path.write_bytes(orjson.dumps(policy.to_dict()))
    return path


@pytest.mark.slow
def test_score_with_validation_prints_and_writes_the_correction_of_the_library(files, tmp_path):
    policy, main, validation = files
    policy_path = _policy_file(policy, tmp_path)
    done = _cli("score", main, "--policy", policy_path, "--mode", "text", "--validation", validation,
                "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    printed = done.stdout.decode()
    flat = " ".join(printed.split())
    assert MODE_B_HEADER in flat and "corrected with" in printed and MODE_B_BOUNDS in flat
    written = orjson.loads((tmp_path / "out" / "summary.json").read_bytes())
    summary, fmt = metric.score_file(main, policy, mode="text")
    expected = judges.correct_text_summary(summary, validation, policy).to_dict()
    assert written["validation"] == orjson.loads(orjson.dumps(expected))
    assert written["provenance"]["validation"]["path"] == str(validation)


@pytest.mark.slow
def test_score_refuses_a_validation_it_cannot_use_and_writes_nothing(files, tmp_path):
    policy, main, validation = files
    policy_path = _policy_file(policy, tmp_path)
    done = _cli("score", main, "--policy", policy_path, "--validation", validation, "--out", tmp_path / "a")
    assert done.returncode == 2 and "--mode text" in done.stderr.decode() and not (tmp_path / "a").exists()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"conversation_id": "v1", "label": "ESC", "assistant_turns": 1, "tool_calls": null, '
                   '"messages": [{"role": "assistant", "turn": 0, "content": "Done."}]}\n')
    done = _cli("score", main, "--policy", policy_path, "--mode", "text", "--validation", bad, "--out", tmp_path / "b")
    message = done.stderr.decode()
    assert done.returncode == 2 and message.startswith(f"error: {bad}:1:") and message.count("\n") == 1
    assert not (tmp_path / "b").exists()
