"""The figures report.html draws itself as SVG (figures/_charts.py, templates/charts.svg.j2): each
mark sits where its value puts it on the axis, an undefined value is written, never drawn at 0, and
the page's charts show the numbers of summary.json and compare.json."""
from __future__ import annotations

import math
import re

import numpy as np
import orjson
import pandas as pd
import pytest

from escalation.figures._charts import MOST_BARS, MOST_POINTS, interval_chart, nice_ticks, scenario_chart

from .._helpers import run_cli_output


@pytest.mark.parametrize("low, high, expected", [
    # worked by hand: the smallest step of 1, 2, 2.5 or 5 x 10^k that gives at most 7 ticks in the range
    (0.0, 1.0, [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]),  # 0.1 gives 11 ticks
    (-0.3, 0.3, [-0.3, -0.2, -0.1, 0.0, 0.1, 0.2, 0.3]),  # 0.05 gives 13
    (-1.0, 1.0, [-1.0, -0.5, 0.0, 0.5, 1.0]),  # 0.25 gives 9
    (-0.0575, 0.0575, [-0.04, -0.02, 0.0, 0.02, 0.04]),  # 0.01 gives 11
])
def test_nice_ticks_by_hand(low, high, expected):
    assert nice_ticks(low, high) == pytest.approx(expected)


def _x(chart, value, domain):
    return chart["left"] + (value - domain[0]) / (domain[1] - domain[0]) * (chart["right"] - chart["left"])


def test_each_mark_sits_at_its_value_and_undefined_is_written():
    rows = [{"label": ["a"], "value": 0.25, "low": 0.1, "high": 0.4},
            {"label": ["b"], "value": None, "low": None, "high": None},  # undefined: written, not drawn
            {"label": ["c"], "value": 0.9, "low": math.nan, "high": 0.95},  # interval undefined
            {"label": ["d"], "value": -0.2, "low": -0.5, "high": 1.3, "method": "bootstrap"}]  # past both ends
    chart = interval_chart(rows, domain=(0.0, 1.0), axis_label="x")
    a, b, c, d = chart["items"]
    assert a["x"] == pytest.approx(_x(chart, 0.25, (0, 1)), abs=0.05)
    assert a["interval"] == pytest.approx((_x(chart, 0.1, (0, 1)), _x(chart, 0.4, (0, 1))), abs=0.05)
    assert b["undefined"] and "x" not in b
    assert not c["undefined"] and c["interval"] is None
    assert d["x"] == chart["left"] and d["interval"] == (chart["left"], chart["right"])  # clipped to the axis
    assert d["colour"] == "#E69F00"  # the bootstrap's colour of figures._palette.METHODS (Okabe-Ito orange)
    assert [y for y in (i["y"] for i in chart["items"])] == sorted(i["y"] for i in chart["items"])


def test_a_difference_chart_has_its_zero_line():
    chart = interval_chart([{"label": ["p_u"], "value": 0.1, "low": -0.1, "high": 0.3}], domain=(-0.5, 0.5),
                           axis_label="d", zero=True)
    assert chart["zero"] == pytest.approx((chart["left"] + chart["right"]) / 2, abs=0.05)


def _conversations(shares_and_sizes, label):
    rows = []
    for s, (errors, n) in enumerate(shares_and_sizes):
        for i in range(n):
            error = int(i < errors)
            rows.append({"scenario_id": f"{label}{s}", "label": label, "evaluated": True,
                         "u": error if label == "ESC" else None, "o": error if label == "ACT" else None})
    return rows


def test_few_scenarios_are_one_bar_each_with_their_counts():
    esc = [(1, 4), (4, 4), (0, 2)]  # (errors, conversations) of each scenario, made here
    act = [(1, 2)]
    frame = pd.DataFrame(_conversations(esc, "ESC") + _conversations(act, "ACT")
                         + [{"scenario_id": "x", "label": "ESC", "evaluated": False, "u": None, "o": None}])
    chart = scenario_chart(frame)
    assert chart["bars"]
    first, second = chart["panels"]
    assert [bar["full"] for bar in first["bars"]] == ["ESC1", "ESC0", "ESC2"]  # highest share first
    assert [bar["count"] for bar in first["bars"]] == ["4/4", "1/4", "0/2"]
    width = first["x1"] - first["x0"]
    assert [bar["width"] for bar in first["bars"]] == pytest.approx([width, width / 4, 0.0], abs=0.05)
    assert second["bars"][0]["width"] == pytest.approx((second["x1"] - second["x0"]) / 2, abs=0.05)
    assert first["subtitle"] == "3 scenarios, 10 evaluated conversations"  # the not-evaluated one left out


def test_many_scenarios_are_a_sorted_step_line():
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 5, 2 * MOST_POINTS)
    errors = [int(rng.integers(0, n + 1)) for n in sizes]
    frame = pd.DataFrame(_conversations(list(zip(errors, sizes)), "ESC"))
    chart = scenario_chart(frame)
    assert not chart["bars"] and chart["panels"][1]["empty"] == "no evaluated ACT conversation"
    points = [tuple(map(float, p.split(","))) for p in chart["panels"][0]["line"].split()]
    heights = [(chart["bottom"] - y) / (chart["bottom"] - chart["top"]) for _, y in points]
    shares = np.sort(np.array(errors) / sizes)[::-1]
    assert heights[0] == pytest.approx(shares[0], abs=0.002) and heights[-1] == pytest.approx(shares[-1], abs=0.002)
    assert all(a >= b - 1e-9 for a, b in zip(heights, heights[1:]))  # never rises: sorted by share
    assert len(points) <= 2 * MOST_POINTS + 2
    xs = [x for x, _ in points]
    assert xs == sorted(xs)
    assert MOST_BARS < len(shares)


# ------------------------------------------------------------------ on the page

POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"]}


def _write(tmp_path):
    lines = []
    for i in range(12):  # 3 cases x ESC/ACT x 2 replicas; the assistant escalates every ESC of case 0 only
        case, label, replica = i // 4, ("ESC", "ACT")[(i // 2) % 2], i % 2
        calls = [{"turn": 0, "name": "transfer_to_human"}] if label == "ESC" and case == 0 else \
            [{"turn": 0, "name": "issue_refund"}]
        lines.append({"conversation_id": f"c{i}", "case_id": f"k{case}", "label": label, "replica": replica,
                      "assistant_turns": 1, "tool_calls": calls})
    (tmp_path / "r.jsonl").write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    (tmp_path / "policy.json").write_bytes(orjson.dumps(POLICY))


def _markers(svg: str) -> list[tuple[float, float]]:
    return [tuple(map(float, m)) for m in re.findall(r'<path d="[^"]+" transform="translate\(([-\d.]+),([-\d.]+)\)"',
                                                       svg)]


def _svg(html: str, name: str) -> str:
    start = html.index(f'data-chart="{name}"')
    return html[start:html.index("</svg>", start)]


def test_the_pages_charts_show_the_numbers_of_summary_json(tmp_path, monkeypatch, capsys):
    _write(tmp_path)
    out = tmp_path / "out"
    assert run_cli_output(monkeypatch, capsys, "score", tmp_path / "r.jsonl", "--policy", tmp_path / "policy.json",
                          "--out", out)[0] == 0
    summary = orjson.loads((out / "summary.json").read_bytes())
    svg = _svg((out / "report.html").read_text(encoding="utf-8"), "rates")
    ticks = {float(t): float(x) for x, t in re.findall(r'<text class="tick" x="([-\d.]+)"[^>]*>([-\d.]+)</text>', svg)}
    left, right = ticks[0.0], ticks[1.0]
    values = [summary["under"]["rate"], summary["over"]["rate"], summary["paired"]["pi"]]
    drawn = [(x - left) / (right - left) for x, _ in _markers(svg)]
    assert drawn == pytest.approx([v for v in values if v is not None], abs=5e-4)  # 0.1 px of about 280
    assert summary["under"]["rate"] == pytest.approx(2 / 3)  # cases 1 and 2 under-escalate their 2 ESC each
    for part, key in ((summary["under"], "rate"), (summary["over"], "rate")):
        assert f"{part['errors']:,}/{part['n']:,} in error, {part['clusters']:,} scenarios" in svg


def _shares_by_groupby(conversations, label, column):
    """The per-scenario shares written the plain way (pandas groupby), the reference for scenario_shares."""
    rows = conversations[(conversations["label"] == label) & conversations["evaluated"].eq(True)]
    errors = pd.to_numeric(rows[column], errors="coerce")
    rows = rows.assign(_error=errors)[errors.notna()]
    shares = rows.groupby("scenario_id", sort=False)["_error"].agg(errors="sum", n="size")
    shares["share"] = shares["errors"] / shares["n"]
    return shares.sort_values(["share", "n"], ascending=[False, False], kind="stable")


def test_scenario_shares_agree_with_a_groupby():
    from escalation.figures._charts import scenario_shares

    rng = np.random.default_rng(11)
    n = 3_000
    frame = pd.DataFrame({"scenario_id": rng.integers(0, 400, n).astype(str).astype(object),
                          "label": rng.choice(np.array(["ESC", "ACT", "bad"], dtype=object), n),
                          "evaluated": rng.random(n) < 0.9})
    frame["u"] = np.where(rng.random(n) < 0.1, None, rng.integers(0, 2, n)).astype(object)
    frame["o"] = np.where(rng.random(n) < 0.1, None, rng.integers(0, 2, n)).astype(object)
    for label, column in (("ESC", "u"), ("ACT", "o")):
        ours, reference = scenario_shares(frame, label, column), _shares_by_groupby(frame, label, column)
        assert ours.index.tolist() == reference.index.tolist()
        for name in ("errors", "n", "share"):
            np.testing.assert_allclose(ours[name].to_numpy(float), reference[name].to_numpy(float), rtol=0, atol=1e-12)


@pytest.mark.parametrize("value, floor, text", [
    (0.0312, 1e-12, "0.031"), (0.0004, 1e-12, "4e-04"),  # three decimals, or one digit in e-notation below 0.001
    (1e-4, 1e-4, "<1e-04"), (0.002, 0.002, "<0.002"),  # at the floor 1/B of a bootstrap of B = 10,000 or 500
    (None, 1e-12, "n/a"), (math.nan, 1e-12, "n/a"),  # undefined
])
def test_p_values_are_written_alike_on_the_command_line_and_the_page(value, floor, text):
    from escalation.figures import p_value_text

    assert p_value_text(value, floor) == text
