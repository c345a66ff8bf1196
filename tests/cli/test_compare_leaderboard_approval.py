"""``escalation compare`` and ``escalation leaderboard`` report p_a (SPEC section 3A) in every output."""
from __future__ import annotations

import json

import orjson
import pandas as pd
import pytest

from escalation.estimators.metric import compare_scored

from .._helpers import run_cli_output
from ..metric.test_compare_approval import MODELS, N_BOOT, SEED, scored  # noqa: F401 (a fixture)


def test_compare_prints_and_writes_p_a(scored, tmp_path, monkeypatch, capsys):  # noqa: F811
    _, folders, _ = scored
    a, b = folders["sloppy"], folders["careful"]
    expected = compare_scored(a, b, n_boot=N_BOOT, seed=SEED).to_dict()["differences"]["p_a"]
    code, out, _ = run_cli_output(monkeypatch, capsys, "compare", a, b, "--json", "--n-boot", N_BOOT, "--seed", SEED,
                                  "--out", tmp_path / "cmp")
    assert code == 0
    assert orjson.loads(out)["differences"]["p_a"] == expected
    table = pd.read_csv(tmp_path / "cmp" / "differences.csv")
    row = table.set_index("metric").loc["p_a"]
    assert row["difference"] == pytest.approx(expected["difference"]) and row["n_a"] == expected["n_a"]
    assert row["note"] == expected["note"]
    assert "p_a (lower is better)" in (tmp_path / "cmp" / "report.html").read_text()  # its row in the chart
    code, out, _ = run_cli_output(monkeypatch, capsys, "compare", a, b, "--n-boot", N_BOOT, "--seed", SEED)
    assert code == 0
    text = " ".join(out.split())
    assert f"p_a {expected['a']:.3f} {expected['b']:.3f} {expected['difference']:+.3f}" in text
    assert f"p_a: {expected['note']}." in text and "p_u, p_o, p_a: lower is better" in text


def test_leaderboard_prints_and_writes_p_a(scored, tmp_path, monkeypatch, capsys):  # noqa: F811
    records, folders, policy = scored
    names = list(MODELS)
    args = [x for name in names for x in ("--name", name)]
    code, out, _ = run_cli_output(monkeypatch, capsys, "leaderboard", *(records[n] for n in names), "--policy", policy,
                                  *args, "--seed", SEED, "--out", tmp_path / "board", "--json")
    assert code == 0
    data = orjson.loads(out)
    for model in data["models"]:
        summary = json.loads((folders[model["model"]] / "summary.json").read_text())["approval"]
        assert model["p_a"]["value"] == summary["rate"] and model["p_a"]["ci"] == summary["ci"]
        assert model["p_a"]["n"] == summary["n"] and model["p_a"]["scenarios"] == summary["clusters"]
    board = pd.read_csv(tmp_path / "board" / "leaderboard.csv", keep_default_na=False)
    assert board["p_a"].astype(float).tolist() == pytest.approx([m["p_a"]["value"] for m in data["models"]])
    assert board["groups_p_a"].tolist() == [m["p_a"]["groups"] for m in data["models"]]
    differences = pd.read_csv(tmp_path / "board" / "differences.csv")
    approval = differences[differences["metric"] == "p_a"]
    assert len(approval) == 3 and approval["note"].str.startswith("on the ").all()
    first = approval.iloc[0]  # `escalation compare A B` of the same pair gives the same difference
    expected = compare_scored(folders[first["a"]], folders[first["b"]], seed=SEED).to_dict()["differences"]["p_a"]
    assert first["difference"] == pytest.approx(expected["difference"])
    assert [first["newcombe_low"], first["newcombe_high"]] == pytest.approx(expected["newcombe_ci"])
    assert [first["bootstrap_low"], first["bootstrap_high"]] == pytest.approx(expected["bootstrap_ci"])
    for name in ("leaderboard.md", "report.html"):
        assert "p_a (95% CI)" in (tmp_path / "board" / name).read_text()
    code, out, _ = run_cli_output(monkeypatch, capsys, "leaderboard", *(records[n] for n in names), "--policy", policy,
                                  *args, "--seed", SEED, "--out", tmp_path / "again")
    assert code == 0
    assert "p_a (95% CI)" in out and "n gated" in out and "p_a: different (Holm, 5%)" in out
