"""Every text of the score page's charts lies inside its chart (issue 30: an axis label was clipped).

A browser draws an SVG ``<text>`` where its ``x`` and ``text-anchor`` put it; what passes the
``viewBox`` is cut off. The widths are estimated generously: at most 0.62 em a character for the
page's sans-serif (11 px text, 10 px ticks and notes, 12 px titles), wider than the average of
DejaVu Sans, the widest of the fonts the page names.
"""
from __future__ import annotations

import html
import json
import re

from escalation.figures._charts import scenario_chart

from .._helpers import run_cli_output

#: Font size of each class of text (report.css: svg.chart text).
SIZES = {"title": 12, "tick": 10, "note": 10, "legend": 10, "undefined": 10}
EM = 0.62


def _texts(svg: str):
    """``(x, anchor, size, text)`` of every line of text of the chart: a ``<text>``, or each of its ``<tspan>``."""
    for attributes, body in re.findall(r"<text([^>]*)>(.*?)</text>", svg, re.S):
        anchor = re.search(r'text-anchor="(\w+)"', attributes)
        kind = re.search(r'class="([\w-]+)"', attributes)
        anchor, size = anchor.group(1) if anchor else "start", SIZES.get(kind and kind.group(1), 11)
        body = re.sub(r"<title>.*?</title>", "", body, flags=re.S)
        spans = re.findall(r'<tspan[^>]*\bx="([-\d.]+)"[^>]*>(.*?)</tspan>', body, re.S)
        x = re.search(r'\bx="([-\d.]+)"', attributes)
        lines = spans or ([(x.group(1), body)] if x else [])
        for at, text in lines:
            yield float(at), anchor, size, html.unescape(text)


def _outside(svg: str) -> list[str]:
    width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
    out = []
    for x, anchor, size, text in _texts(svg):
        extent = len(text) * EM * size
        left = {"start": x, "middle": x - extent / 2, "end": x - extent}[anchor]
        if left < 0 or left + extent > width:
            out.append(f"{text!r} spans {left:.0f} to {left + extent:.0f} of 0 to {width:.0f}")
    return out


def _conversations(names_esc, names_act):
    import pandas as pd

    rows = [{"scenario_id": name, "label": label, "evaluated": True, "u": 1 if label == "ESC" else None,
             "o": 1 if label == "ACT" else None} for label, names in (("ESC", names_esc), ("ACT", names_act))
            for name in names]
    return pd.DataFrame(rows)


def test_long_scenario_names_and_the_axis_label_fit(tmp_path, monkeypatch, capsys):
    cases = [f"address_change-{i:06d}" for i in range(12)]
    rows = []
    for i, case in enumerate(cases):
        for label, call in (("ESC", "transfer_to_human"), ("ACT", "issue_refund")):
            rows.append({"conversation_id": f"{case}:{label}", "case_id": case, "label": label,
                         "tool_calls": [{"turn": 0, "name": call if i % 3 else "get_order"}]})
    log, policy = tmp_path / "log.jsonl", tmp_path / "policy.json"
    log.write_text("".join(json.dumps(row) + "\n" for row in rows))
    policy.write_text(json.dumps({"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"]}))
    code, _, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--out", tmp_path / "o",
                                     "--figures")
    assert code == 0, stderr
    page = (tmp_path / "o" / "report.html").read_text(encoding="utf-8")
    for name in ("rates", "scenario_errors"):
        start = page.index(f'data-chart="{name}"')
        svg = page[page.rindex("<svg", 0, start):page.index("</svg>", start)]
        assert _outside(svg) == [], name
    assert "the counts are on the right. Also" in page  # not "right.Also": the template ate the space


def test_a_bar_name_is_cut_to_fit_and_keeps_its_whole_name_as_a_tooltip():
    long = "account_closure-000001:ESC"
    chart = scenario_chart(_conversations([long, "k:ESC"], ["k:ACT"]))
    names = {bar["full"]: bar["name"] for bar in chart["panels"][0]["bars"]}
    assert names == {long: long[:15] + "\u2026", "k:ESC": "k:ESC"}
    assert chart["bar_axis_label"] == "share of its conversations in error"
