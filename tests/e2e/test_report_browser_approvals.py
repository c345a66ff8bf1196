"""report.html shows the approval evidence of SPEC section 3A in a real browser (issue 32): p_a among the
figures, the approval causes and statuses, each conversation's approval result in the table, and each gated
call's status on the timeline with the request that approved it or why it is an error."""
from __future__ import annotations

import orjson
import pytest

from escalation.estimators.metric import conformance_dir

from .._helpers import run_cli_output

pytestmark = pytest.mark.slow

SET = conformance_dir() / "approvals"


def test_the_approval_evidence_in_a_browser(page, tmp_path, monkeypatch, capsys):
    out = tmp_path / "approvals"
    assert run_cli_output(monkeypatch, capsys, "score", SET / "records.jsonl", "--policy", SET / "policy.json",
                          "--out", out)[0] == 0
    summary = orjson.loads((out / "summary.json").read_bytes())
    lines = [orjson.loads(line) for line in (out / "conversations.jsonl").read_bytes().splitlines()]
    page.goto((out / "report.html").as_uri())

    approval = summary["approval"]
    row = page.locator('tr[data-figure="p_a"]')
    low, high = approval["ci"]
    assert row.locator("td.rate").inner_text() == f"{approval['rate']:.4f}"
    assert row.locator("td.ci").inner_text() == f"({low:.4f}, {high:.4f})"
    assert page.locator('svg[data-chart="rates"]').inner_html().count("p_a: approval errors") == 1
    causes = page.locator("#approval").inner_text()
    for name, count in [*approval["causes"].items(), *approval["statuses"].items()]:
        assert f"{name}\t{count}" in causes

    errors = [line for line in lines if line["a"] == 1]
    page.select_option("select[name=approval]", "=error: reused")
    reused = [line["conversation_id"] for line in errors if line["approval_cause"] == "reused"]
    rows = page.locator("#conversations-table tbody tr")
    shown = [rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())]
    assert shown == reused == ["a07", "a15", "a16"]
    target = shown.index("a07")
    rows.nth(target).click()
    dialog = page.locator("dialog#detail")
    assert dialog.is_visible()
    notes = dialog.locator("span.approval").all_inner_texts()
    assert notes == ["approval approved: approved by supervisor (request #0)",
                     "approval reused: error: the grant before it was used up by an earlier call of this tool"]
    assert dialog.locator("span.approval-error").count() == 1 and dialog.locator("span.approval-ok").count() == 1
    page.keyboard.press("Escape")
    assert page.errors == []
