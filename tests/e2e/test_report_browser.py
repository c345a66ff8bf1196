"""report.html in a real browser (issue 19): headless Chromium, driven by Playwright, opens the page from disk.

The page shows the numbers of summary.json, its pages and filters work, one click on a conversation opens
its timeline with the scored turn highlighted, and the console stays free of errors. Chromium is Debian's
(``/usr/bin/chromium``): the session installs it once when it is missing and this user may (root, apt-get),
else the tests are skipped and say why. Screenshots are saved under pytest's temporary folder and their
paths printed (``pytest -s`` shows them).
"""
from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from .._helpers import run_cli_output

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "examples" / "data" / "tau-bench" / "gpt-4o-airline.json"
POLICY = ROOT / "examples" / "tau-bench-airline.policy.json"
#: The highlighted scored turn's background (report.css: --scored-bg).
SCORED_BACKGROUND = "rgb(255, 248, 225)"


def _shot(tab, folder: Path, name: str) -> Path:
    path = folder / f"{name}.png"
    tab.screenshot(path=str(path))
    print(f"screenshot: {path}")
    return path


def _status(tab) -> str:
    return tab.locator("#conversations-table .status").inner_text()


def test_the_score_report_in_a_browser(page, tmp_path, monkeypatch, capsys):
    out = tmp_path / "tau-bench"
    assert run_cli_output(monkeypatch, capsys, "score", LOG, "--policy", POLICY, "--out", out)[0] == 0
    summary = orjson.loads((out / "summary.json").read_bytes())
    lines = [orjson.loads(line) for line in (out / "conversations.jsonl").read_bytes().splitlines()]
    page.goto((out / "report.html").as_uri())

    for figure, part, value in (("p_u", summary["under"], "rate"), ("p_o", summary["over"], "rate"),
                                ("pi", summary["paired"], "pi")):
        row = page.locator(f'tr[data-figure="{figure}"]')
        low, high = part["ci"]
        number = "n/a" if part[value] is None else f"{part[value]:.4f}"
        limits = "(n/a, n/a)" if low is None else f"({low:.4f}, {high:.4f})"
        assert (row.locator("td.rate").inner_text(), row.locator("td.ci").inner_text()) == (number, limits)
    charts = page.locator("figure svg.chart")
    assert [charts.nth(i).get_attribute("data-chart") for i in range(charts.count())] == ["rates", "scenario_errors"]
    assert page.evaluate("[...document.querySelectorAll('figure svg.chart')].every(s => "
                         "s.getBoundingClientRect().width > 400 && s.getBoundingClientRect().height > 100)")
    ticks = page.locator('svg[data-chart="rates"] text.tick').all_text_contents()
    assert ticks == ["0", "0.2", "0.4", "0.6", "0.8", "1"]  # the axis of a rate, drawn
    _shot(page, tmp_path, "score-top")

    rows = page.locator("#conversations-table tbody tr")
    assert _status(page) == "Showing 1\u201350 of 200 conversations; page 1 of 4" and rows.count() == 50
    page.click("#conversations-table button[name=next]")
    assert _status(page) == "Showing 51\u2013100 of 200 conversations; page 2 of 4"
    assert rows.first.get_attribute("data-row") == "50"
    assert rows.first.locator("td").first.inner_text() == lines[50]["conversation_id"]
    page.click("#conversations-table button[name=last]")
    assert _status(page).endswith("page 4 of 4") and page.locator("button[name=next]").is_disabled()

    errors = sum(1 for line in lines if line["evaluated"] and 1 in (line["u"], line["o"]))
    page.select_option("select[name=result]", "=error")
    assert _status(page) == f"Showing 1\u201350 of {errors} conversations (filtered from 200); page 1 of 2"
    assert set(page.locator("#conversations-table tbody td .badge").all_inner_texts()) == {"error"}
    page.select_option("select[name=cause]", "=acted_before_handoff")
    acted = [i for i, line in enumerate(lines) if line["cause"] == "acted_before_handoff"]
    assert rows.count() == len(acted) == 1
    page.fill("input[name=scenario]", "no such scenario")
    assert rows.first.inner_text().startswith("No conversations match")
    page.click("#conversations-table button:has-text('Clear filters')")
    assert _status(page) == "Showing 1\u201350 of 200 conversations; page 1 of 4"
    page.select_option("select[name=cause]", "=acted_before_handoff")
    _shot(page, tmp_path, "score-filtered")

    line = lines[acted[0]]
    rows.first.click()
    dialog = page.locator("dialog#detail")
    assert dialog.is_visible() and dialog.locator("h3").inner_text() == f"Conversation {line['conversation_id']}"
    scored = dialog.locator("section.turn.scored")
    assert scored.count() == 1
    assert scored.locator("h4").inner_text().startswith(f"Turn {line['turn']}")
    assert f"scored turn: u = 1, {line['cause']}" in scored.locator("h4").inner_text()
    assert scored.evaluate("e => getComputedStyle(e).backgroundColor") == SCORED_BACKGROUND
    assert dialog.locator("li.mark-action").inner_text().count("first consequential action (kA)") == 1
    dialog.locator("button.jump").click()
    page.wait_for_function("() => { const r = document.querySelector('section.turn.scored').getBoundingClientRect();"
                           " return r.top >= 0 && r.top < window.innerHeight / 2; }")  # scrolled to, near the top
    shot = _shot(page, tmp_path, "score-timeline")
    assert shot.stat().st_size > 10_000
    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    assert page.errors == []


def test_the_compare_report_in_a_browser(page, tmp_path, monkeypatch, capsys):
    folders = []
    for profile in ("follows_policy", "escalates_everything"):
        sim = tmp_path / f"sim-{profile}"
        assert run_cli_output(monkeypatch, capsys, "simulate", "--profile", profile, "--cases", "12", "--replicas",
                              "2", "--out", sim)[0] == 0
        folders.append(tmp_path / profile)
        assert run_cli_output(monkeypatch, capsys, "score", sim / "records.jsonl", "--policy", sim / "policy.json",
                              "--out", folders[-1])[0] == 0
    out = tmp_path / "compared"
    assert run_cli_output(monkeypatch, capsys, "compare", *folders, "--out", out)[0] == 0
    compared = orjson.loads((out / "compare.json").read_bytes())
    page.goto((out / "report.html").as_uri())
    assert page.locator('tr[data-figure="p_o"] td').nth(3).inner_text() == \
        f"{compared['differences']['p_o']['difference']:+.3f}"
    forest = page.locator('figure svg.chart[data-chart="differences"]')
    assert forest.is_visible() and forest.locator("line.zero").count() == 1
    assert forest.locator("text.legend").all_text_contents() == ["Newcombe (square-and-add)",
                                                                 "paired cluster bootstrap"]
    _shot(page, tmp_path, "compare-top")
    rows = page.locator("#disagreements-table tbody tr")
    assert rows.count() == min(50, len(compared["disagreements"])) > 0
    rows.first.click()
    dialog = page.locator("dialog#detail")
    first = compared["disagreements"][0]
    assert dialog.locator("h3").inner_text() == f"Scenario {first['scenario_id']}"
    cards = dialog.locator(".side .conv-card")
    assert cards.count() == first["n_a"] + first["n_b"]
    assert dialog.locator(".side section.turn.scored").count() == first["n_a"] + first["n_b"]  # every timeline
    _shot(page, tmp_path, "compare-scenario")
    assert page.errors == []


def test_a_failed_hand_off_is_marked_in_the_timeline(page, tmp_path, monkeypatch, capsys):
    # A real model's hand-off that the tool refused (examples/data/real-runs, qwen2.5-coder-1.5b,
    # payments-02.en:ACT: transfer_to_human sent without its reason) is no hand-off (SPEC section 1).
    from escalation.suite import suite_policy_path

    out = tmp_path / "real"
    code, _, _ = run_cli_output(monkeypatch, capsys, "score", ROOT / "examples" / "data" / "real-runs" /
                                "qwen2.5-coder-1.5b", "--policy", suite_policy_path(), "--out", out)
    assert code in (0, 1)
    lines = [orjson.loads(line) for line in (out / "conversations.jsonl").read_bytes().splitlines()]
    (line,) = [x for x in lines if x["scenario_id"] == "payments-02.en:ACT"]
    assert line["failed_escalations"] == 1 and line["o"] == 0 and not line["escalated"]
    page.goto((out / "report.html").as_uri())
    page.fill("input[name=scenario]", "payments-02.en:ACT")
    rows = page.locator("#conversations-table tbody tr")
    assert rows.count() == 1
    rows.first.click()
    dialog = page.locator("dialog#detail")
    failed = dialog.locator("li.call .kind-failed_escalation")
    assert failed.count() == 1
    assert failed.inner_text() == "failed escalation: no hand-off (SPEC 1)"
    assert failed.evaluate("e => getComputedStyle(e).borderTopStyle") == "dotted"  # an escalation's is solid
    assert "failed escalation" in dialog.locator(".legend").inner_text()
    assert dialog.locator("li.mark-escalation").count() == 0   # no first escalation kE is marked
    _shot(page, tmp_path, "failed-hand-off")
    assert page.errors == []
