"""The reports people look at: one self-contained HTML page of a scoring and of a comparison.

Each function takes plain data (``summary.json`` and ``compare.json`` as dicts, tables as
DataFrames, timelines as lists of dicts) and returns the page's text; nothing here writes a
file. A page fetches nothing: its style, its script and its figures (inline SVG drawn by
:mod:`figures._charts` and ``templates/charts.svg.j2``, without matplotlib) are inside it, and
its Content-Security-Policy forbids any fetch. Its data is
one JSON document in a ``<script type="application/json">`` element, with ``<``, ``>`` and
``&`` written as ``\\u003c``, ``\\u003e``, ``\\u0026`` so that no text of the input can end the
element; the page's script draws the tables and timelines from it with ``textContent`` only,
and the templates (``figures/templates``) escape every value (Jinja2 autoescape).
:func:`report_data` reads the data of a page back.

Text from the input (names, ids, labels, texts) is shown by the one rule of
:mod:`escalation.estimators.records` (:func:`~escalation.estimators.records.html_text`): every value a
template writes goes through it (the environment's ``finalize``), hidden characters shown as
``<U+202E>`` and long text cut with its length; the page's script applies the same rule to its data
(:func:`~escalation.estimators.records.hidden_pattern`), which keeps every character. The
Content-Security-Policy allows no inline script or style but the page's own, by their SHA-256
(:func:`content_policy`): no event handler attribute, no injected ``<script>`` runs.
"""
from __future__ import annotations

import base64
import hashlib
import io
import math
from functools import lru_cache
from importlib import resources
from typing import Any

import jinja2
import markupsafe
import numpy as np
import orjson
import pandas as pd

from escalation.estimators.records import NAME_LIMIT, SENTENCE_LIMIT, hidden_pattern, html_text
from escalation.estimators.stats import DEFAULT_INTERVAL, INTERVAL_USES, format_number

from ._charts import interval_chart, scenario_chart
from ._text import counted, p_value_text

__all__ = ["score_report", "compare_report", "report_data", "figure_bytes", "content_policy"]

_TEMPLATES = resources.files(__package__) / "templates"


def _shown(value):
    """What a template writes of ``value``: a text by the one rule (:func:`html_text`, cut at a sentence's length),
    then escaped by autoescape; the page's own markup (``| safe``) and numbers as they are."""
    return value if not isinstance(value, str) or isinstance(value, markupsafe.Markup) else \
        html_text(value, SENTENCE_LIMIT)


#: Compiled templates are kept between runs in Jinja2's own per-user cache folder of the system's
#: temporary directory (compiling them takes a quarter of a second of each ``score``). The compiled code
#: holds the call of ``finalize``, and the cache's key is only the template's name and text: the files'
#: own name keeps them apart from those compiled without it (which would show text from the input raw).
_ENVIRONMENT = jinja2.Environment(loader=jinja2.FileSystemLoader(str(_TEMPLATES)), autoescape=True,
                                  undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                                  bytecode_cache=jinja2.FileSystemBytecodeCache(
                                      pattern="__jinja2_escalation_shown_%s.cache"), finalize=_shown)
_ENVIRONMENT.filters["counted"] = counted  # {{ n | counted("case") }}: 1 case, 2 cases
#: The element that holds a page's data, as the page writes it.
_DATA_OPEN = '<script type="application/json" id="report-data">'
_SCORE_COLUMNS = ("conversation_id", "case_id", "scenario_id", "replica", "label", "result", "cause", "turn",
                  "approval")
#: What a disagreeing scenario's page shows of each conversation beside its timeline.
_CARD_COLUMNS = ("scenario_id", "conversation_id", "replica", "result", "cause", "turn")
#: Planned conversations absent from the log listed on the page (summary.json lists all).
_MISSING_SHOWN = 20
_BETTER = {"p_u": "lower is better", "p_o": "lower is better", "pi": "higher is better", "p_a": "lower is better"}
#: Most characters of a name in a chart's title (the chart does not wrap).
_CHART_NAME = 40


def figure_bytes(fig, format: str = "png", *, dpi: int = 150) -> bytes:
    """``fig`` drawn as PNG or PDF bytes (a PDF without its creation date, so a rerun gives the same bytes)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format=format, dpi=dpi, bbox_inches="tight",
                metadata={"CreationDate": None} if format == "pdf" else None)
    return buffer.getvalue()


@lru_cache(maxsize=None)
def _asset(name: str) -> str:
    """The page's own style or script, inlined as it is (the templates mark it safe)."""
    return (_TEMPLATES / name).read_text(encoding="utf-8")


def _hash(text: str) -> str:
    """A CSP source that allows one inline script or style: the SHA-256 of its exact text."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def content_policy(*, styles=(), scripts=()) -> str:
    """The Content-Security-Policy of a page: nothing fetched (images from ``data:`` only), and of the inline
    styles and scripts only those given, by their SHA-256 (no ``'unsafe-inline'``: an injected ``<script>``,
    ``onerror=`` or ``style=`` attribute is refused). A page without a script allows none."""
    parts = ["default-src 'none'", "img-src data:", "style-src " + (" ".join(map(_hash, styles)) or "'none'")]
    if scripts:
        parts.append("script-src " + " ".join(map(_hash, scripts)))
    return "; ".join([*parts, "base-uri 'none'", "form-action 'none'"])


def _page_text(name: str, **values) -> str:
    """A page of ``report.html.j2``: its style and script inlined, allowed by the page's policy alone."""
    css, js = _asset("report.css"), _asset("report.js")
    return _ENVIRONMENT.get_template(name).render(css=css, js=js, csp=content_policy(styles=[css], scripts=[js]),
                                                  **values)


def _text_rule() -> dict:
    """The one rule of text from the input, as the page's script applies it to the texts of its data."""
    return {"hidden": hidden_pattern(), "name_limit": NAME_LIMIT, "sentence_limit": SENTENCE_LIMIT}


def _data(value) -> str:
    """``value`` as JSON that no text can break out of inside a ``<script>`` element (the templates mark it safe)."""
    raw = orjson.dumps(value)
    raw = raw.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")
    return raw.decode("utf-8")


def report_data(html: str) -> dict:
    """The data a page of :func:`score_report` or :func:`compare_report` holds.

    Raises
    ------
    ValueError
        When ``html`` holds no such data (not a page of these functions).
    """
    start = html.find(_DATA_OPEN)
    stop = html.find("</script>", start)
    if start < 0 or stop < 0:
        raise ValueError("holds no report data (not a report.html of escalation)")
    try:
        return orjson.loads(html[start + len(_DATA_OPEN):stop])
    except orjson.JSONDecodeError as err:
        raise ValueError(f"its report data is not valid JSON ({err.msg})") from None


def _fmt(value, digits: int = 4) -> str:
    """A number as the command line prints it: ``digits`` decimals, ``n/a`` when undefined."""
    return format_number(value, digits)


def _ci(pair, digits: int = 4) -> str:
    low, high = pair if pair else (None, None)
    return f"({_fmt(low, digits)}, {_fmt(high, digits)})"


def _file(facts) -> str:
    """A file of the provenance: its path, size and SHA-256."""
    if not facts:
        return "none"
    size = f"{facts['bytes']:,} bytes" if isinstance(facts.get("bytes"), int) else "size unknown"
    return f"{facts.get('path')} ({size}, SHA-256 {str(facts.get('sha256'))[:16]}...)"


def _rows(frame: pd.DataFrame, columns) -> list[list]:
    """The rows of ``frame``'s ``columns`` as lists, missing values None."""
    part = frame.loc[:, list(columns)].astype(object)
    return part.where(part.notna(), None).to_numpy(object).tolist()


def _results(conversations: pd.DataFrame) -> pd.DataFrame:
    """The table of a page: ``result`` (compliant, error or not evaluated) and ``cause`` (a not-evaluated
    conversation's reason) made from ``evaluated``, ``u``, ``o``, ``cause`` and ``reason``."""
    evaluated = conversations["evaluated"].astype(bool).to_numpy()
    score = pd.to_numeric(conversations["u"]).fillna(pd.to_numeric(conversations["o"])).to_numpy(float,
                                                                                                  na_value=np.nan)
    result = np.where(~evaluated, "not evaluated", np.where(score == 1, "error", "compliant"))
    a = pd.to_numeric(conversations["a"]).to_numpy(float, na_value=np.nan) if "a" in conversations else \
        np.full(len(conversations), np.nan)
    causes = conversations["approval_cause"].to_numpy(object) if "approval_cause" in conversations else \
        np.full(len(conversations), None, object)
    approval = np.full(len(conversations), None, dtype=object)
    approval[a == 0] = "compliant"
    approval[a == 1] = ["error: " + str(cause) for cause in causes[a == 1]]
    return conversations.assign(result=result, cause=conversations["cause"].where(evaluated, conversations["reason"]),
                                approval=pd.Series(approval, dtype=object, index=conversations.index),
                                turn=pd.array(conversations["turn"], dtype="Int64"),
                                replica=pd.array(conversations["replica"], dtype="Int64"))


def _score_provenance(summary: dict) -> list[tuple[str, str]]:
    facts = summary.get("provenance") or {}
    options = facts.get("options") or {}
    policy = facts.get("policy") or {}
    lists = policy.get("contents") or {}
    rows = [("logs", "; ".join(_file(log) for log in facts.get("inputs") or ()) or "unknown")]
    if facts.get("skipped"):
        rows.append(("left out of the folders", "; ".join(facts["skipped"])))
    rows += [("format", facts.get("format", "unknown")), ("mode", options.get("mode", summary["mode"])),
             ("interval", summary["interval"]), ("confidence", f"{summary['confidence']:g}"),
             ("rho", "estimated" if summary.get("rho_fixed") is None else f"fixed by --rho at {summary['rho_fixed']}"),
             ("seed", str(summary.get("seed"))),
             ("approval_escalation", str(options.get("approval_escalation", False)).lower()),
             ("policy", f"{policy.get('path')} (SHA-256 of its tool lists {str(policy.get('sha256'))[:16]}...)")]
    for key in ("escalation_tools", "read_only_tools", "action_tools", "approval_tools", "gated_tools"):
        rows.append((key, ", ".join(lists.get(key) or ()) or "none"))
    for key in ("labels", "plan", "validation"):
        rows.append((f"{key} file", _file(facts.get(key))))
    judge = (facts.get("command") or {}).get("judge_model")
    if judge:
        rows.append(("judge model", judge))
    written = (facts.get("outputs") or {}).get("conversations.jsonl")
    if written:
        rows.append(("conversations.jsonl", _file({"path": "this run's", **written})))
    rows += [("escalation", str(facts.get("escalation", "unknown"))), ("scored", str(facts.get("created", "unknown")))]
    return rows


#: The three figures of a scoring: summary key, value key, name, which way is better.
_RATES = (("under", "rate", "p_u: under-escalation", "lower is better"),
          ("over", "rate", "p_o: over-escalation", "lower is better"),
          ("paired", "pi", "pi: paired figure", "higher is better"))
#: The intervals of a difference, in the forest plot's order.
_DIFFERENCE_INTERVALS = (("newcombe", "Newcombe (square-and-add)"), ("bootstrap", "paired cluster bootstrap"))


def _approval_shown(summary: dict) -> bool:
    """Whether a score page shows ``p_a`` (SPEC section 3A): gated calls or approval requests were read, or the
    policy names gated tools (as the command's readable summary)."""
    approval = summary.get("approval")
    if summary["mode"] != "record" or not approval:
        return False
    policy = ((summary.get("provenance") or {}).get("policy") or {}).get("contents") or {}
    return bool(approval["gated_calls"] or approval["requests"] or policy.get("gated_tools"))


def _rates_chart(summary: dict) -> dict:
    """p_u, p_o, pi (and p_a, :func:`_approval_shown`) with their intervals on [0, 1] (the chart of
    :func:`figures.plot_rates`)."""
    rows = []
    figures = _RATES + ((("approval", "rate", "p_a: approval errors", "lower is better"),)
                        if _approval_shown(summary) else ())
    for key, value_key, name, better in figures:
        part = summary[key]
        low, high = part.get("ci") or (None, None)
        note = (f"{counted(part['pairs'], 'pair')}, {counted(part['cases'], 'case')}" if key == "paired" else
                f"{part['errors']:,}/{part['n']:,} in error, {counted(part['clusters'], 'scenario')}")
        rows.append({"label": [name, f"({better})"], "value": part[value_key], "low": low, "high": high,
                     "note": note})
    return interval_chart(rows, domain=(0.0, 1.0), notes_width=190,
                          axis_label=f"estimate and {summary['confidence']:.0%} interval",
                          title=f"{counted(summary['conversations'], 'conversation')}; interval: "
                                f"{summary['interval']}")


def _forest_chart(comparison: dict, floor: float) -> dict:
    """Each difference B - A with both its intervals, a line at 0 (the chart of :func:`figures.plot_difference_forest`);
    each figure's p-value (of the interval compare chose) as :func:`p_value_text` writes it with ``floor``."""
    rows, spread = [], 0.05
    for i, diff in enumerate(comparison["differences"].values()):
        for j, (which, name) in enumerate(_DIFFERENCE_INTERVALS):
            low, high = diff.get(f"{which}_ci") or (None, None)
            values = [v for v in (diff["difference"], low, high) if v is not None and math.isfinite(v)]
            spread = max([spread, *map(abs, values)])
            label = ([f"{diff['metric']} ({_BETTER.get(diff['metric'], '')})"] if j == 0
                     else [f"p = {p_value_text(diff['p_value'], floor)}"])
            rows.append({"label": label, "value": diff["difference"], "low": low, "high": high, "method": which,
                         "note": _ci((low, high), 3), "rule": i > 0 and j == 0})
    limit = min(1.0, 1.15 * spread)
    names = comparison["names"]
    return interval_chart(rows, domain=(-limit, limit), zero=True, notes_width=110,
                          axis_label=f"difference B - A and its {comparison['confidence']:.0%} interval",
                          title=f"B = {html_text(names['b'], _CHART_NAME)} minus "
                                f"A = {html_text(names['a'], _CHART_NAME)}",
                          legend=_DIFFERENCE_INTERVALS)


def _figure_rows(summary: dict) -> list[dict]:
    """The rows of the figures table: p_u, p_o, pi (and p_a, :func:`_approval_shown`) with their count, interval
    and design effect."""
    p = summary["paired"]
    rows = []
    under, over = summary["under"], summary["over"]
    figures = [("p_u", "p_u under-escalation", under, f"{under['errors']}/{under['n']}"),
               ("p_o", "p_o over-escalation", over, f"{over['errors']}/{over['n']}"),
               ("pi", "pi paired figure", p, counted(p['pairs'], 'pair'))]
    if _approval_shown(summary):
        a = summary["approval"]
        figures.append(("p_a", "p_a approval errors", a, f"{a['errors']}/{a['n']}"))
    for key, name, part, count in figures:
        rows.append({"key": key, "name": name, "count": count,
                     "rate": _fmt(part["pi"] if part is p else part["rate"]), "ci": _ci(part["ci"]),
                     "clusters": counted(p['clusters'], 'case') if part is p
                     else str(part["clusters"]),
                     "rho": _fmt(part["rho"], 3), "deff": _fmt(part["deff"], 3),
                     "n_eff": _fmt(part["n_eff"], 1)})
    return rows


def _rho_note(summary: dict) -> str:
    """What the table's rho means: undefined (rho = 1 used), or fixed by --rho; and, with another interval than the
    paper's, what its deff and n_eff are (the interval's, :data:`INTERVAL_USES`); else nothing."""
    p = summary["paired"]
    notes = []
    if summary["rho_fixed"] is None and any(part["rho"] is None and part.get("rho_used", 1.0) == 1.0
                                            and (part["deff"] or 1.0) > 1.0
                                            for part in (summary["under"], summary["over"], p)):
        notes.append("rho 'n/a' is undefined (one scenario, or every scenario of one conversation, or no variation "
                     "of the outcome): the interval then uses rho = 1.")
    if summary["rho_fixed"] is not None:
        notes.append(f"rho is fixed by --rho at {summary['rho_fixed']}.")
    if summary["interval"] != DEFAULT_INTERVAL and summary["interval"] in INTERVAL_USES:
        notes.append(f"deff and n_eff are what the {summary['interval']} interval used: "
                     f"{INTERVAL_USES[summary['interval']]}; the point estimate's are deff_point in summary.json.")
    return " ".join(notes)


def _timelines_why(shown: int, total: int, timeline_limit: int) -> str:
    """Which conversations have their timeline on the page, and why."""
    if shown == total:
        return "all of them."
    if timeline_limit == 0:
        return "none were asked for (--report-timelines 0)."
    return f"the first {shown:,} in input order (--report-timelines {timeline_limit:,})."


def score_report(summary: dict, conversations: pd.DataFrame, timelines: list[dict], *, limits: dict,
                 timeline_limit: int, figure_files: bool = False, fixes: dict | None = None,
                 handoff_tools=()) -> str:
    """The page of one scoring (``escalation score --out``): its figures, causes, warnings and every conversation.

    Parameters
    ----------
    summary : dict
        ``summary.json``.
    conversations : DataFrame
        One row per input conversation, in input order: ``conversation_id, case_id, scenario_id,
        replica, label, evaluated, reason, u, o, cause, turn``.
    timelines : list of dict
        The timelines (:func:`estimators.conversation_evidence`) of the first ``len(timelines)``
        conversations.
    limits : dict
        ``text``, ``arguments`` and ``items``: where the timelines were cut, said on the page.
    timeline_limit : int
        How many timelines were asked for (``--report-timelines``).
    figure_files : bool
        Whether the figures were also written as PNG and PDF beside the page (the captions say so).
    fixes : dict, optional
        What fixes each not-evaluated reason, by reason.
    handoff_tools : iterable of str
        The unmarked tools whose names suggest a hand-off.

    Returns
    -------
    str
        The HTML page: the table of every conversation with filters and pages, one click on a
        row opening its timeline.
    """
    fixes, handoffs = fixes or {}, set(handoff_tools)
    table = _results(conversations)
    rows = _rows(table, _SCORE_COLUMNS)
    level = f"{summary['confidence']:.0%}"
    figure_rows = _figure_rows(summary)
    rho_note = _rho_note(summary)
    ne = summary["not_evaluated"]
    missing = [html_text(f"{m.get('case_id')}, {m.get('label')}, {m.get('replica')}", NAME_LIMIT)
               for m in ne.get("missing", ())]  # joined in the template: a Markup, which finalize leaves
    provenance = summary.get("provenance") or {}
    shown, total = len(timelines), len(rows)
    why = _timelines_why(shown, total, timeline_limit)
    mode = ("with the tool record (mode A)" if summary["mode"] == "record" else
            "from the assistant's text (mode B): p_u is a lower bound, p_o and pi are bounded neither way")
    data = {"page": "score", "columns": list(_SCORE_COLUMNS), "rows": rows,
            "timelines": timelines, "timeline_limit": timeline_limit, "limits": limits, "text": _text_rule()}
    return _page_text(
        "score.html.j2", title="Escalation report", version=provenance.get("escalation", ""), data=_data(data),
        sections=[("figures", "Figures"), ("causes", "Causes"), ("not-evaluated", "Not evaluated"),
                  *([("unmarked", "Unmarked tools")] if summary["unmarked_tools"] else []),
                  ("conversations", "Conversations"), ("provenance", "Provenance")],
        conversations=summary["conversations"],
        inputs=[html_text(log.get("path"), NAME_LIMIT) for log in provenance.get("inputs", ())] or ["the input"],
        format=provenance.get("format", "unknown"), mode=mode, level=level,
        interval=summary["interval"], created=provenance.get("created", "at an unknown time"),
        figures=figure_rows, rho_note=rho_note, warnings=summary["warnings"],
        charts={"rates": _rates_chart(summary), "scenario_errors": scenario_chart(conversations)},
        chart_texts={"rates": "; ".join(f"{row['name']}: {row['rate']} {row['ci']}" for row in figure_rows),
                     "scenario_errors": "each scenario's share of evaluated conversations in error"},
        figure_files=figure_files,
        causes={"under": list(summary["under"].get("causes", {}).items()),
                "over": list(summary["over"].get("causes", {}).items()),
                "approval": list(summary["approval"]["causes"].items()) if _approval_shown(summary) else None,
                "statuses": list(summary["approval"]["statuses"].items()) if _approval_shown(summary) else None,
                "requests": summary["approval"]["requests"] if _approval_shown(summary) else None,
                "unknown": summary["approval"]["unknown_decisions"] if _approval_shown(summary) else None},
        base={"under": _fmt(summary["base"]["under_rate"]), "over": _fmt(summary["base"]["over_rate"]),
              "pi": _fmt(summary["base"]["pi"])},
        not_evaluated={"total": ne["total"],
                       "reasons": [(reason, n, fixes.get(reason, "")) for reason, n in ne["reasons"].items()],
                       "missing": missing[:_MISSING_SHOWN], "more_missing": max(0, len(missing) - _MISSING_SHOWN),
                       "unplanned": ne.get("unplanned", 0)},
        unmarked={"others": [(html_text(k, NAME_LIMIT), v) for k, v in summary["unmarked_tools"].items()
                             if k not in handoffs],
                  "handoffs": [(html_text(k, NAME_LIMIT), v) for k, v in summary["unmarked_tools"].items()
                               if k in handoffs]},
        timelines={"shown": f"{shown:,}", "total": counted(total, "conversation"),
                   "have": "has" if total == 1 else "have", "why": why}, limits=limits,
        provenance=_score_provenance(summary))


def _word(word: dict) -> str:
    return word["word"] if word.get("lowest") is None else f"{word['word']} ({word['lowest']:.2f})"


def compare_report(comparison: dict, conversations: dict, timelines: dict, *, no_timeline: dict,
                   figure_files: bool = False) -> str:
    """The page of a comparison (``escalation compare --out``): the differences and where the assistants disagree.

    Parameters
    ----------
    comparison : dict
        ``compare.json``.
    conversations : dict
        ``{"a": DataFrame, "b": DataFrame}``: each assistant's scored conversations
        (``conversation_id, scenario_id, replica, evaluated, reason, u, o, cause, turn``); those
        of the disagreeing scenarios are shown.
    timelines : dict
        ``{"a": {conversation_id: timeline}, "b": ...}`` (:func:`estimators.conversation_evidence`).
    no_timeline : dict
        ``{"a": text, "b": text}``: why a conversation of that side without a timeline has none.
    figure_files : bool
        Whether the figure was also written as PNG and PDF beside the page (the caption says so).

    Returns
    -------
    str
        The HTML page; one click on a disagreeing scenario opens both assistants' conversations
        of it side by side, replica by replica, with their timelines where the timelines exist.
    """
    names = comparison["names"]
    level = f"{comparison['confidence']:.0%}"
    bootstrap = comparison["interval"].startswith("bootstrap")
    floor = max(1e-12, 1.0 / comparison["n_boot"]) if bootstrap else 1e-12
    differences = []
    for diff in comparison["differences"].values():
        differences.append({"metric": diff["metric"], "better": _BETTER.get(diff["metric"], ""),
                            "cases": diff["clusters"], "a": _fmt(diff["a"], 3), "b": _fmt(diff["b"], 3),
                            "n_a": diff["n_a"], "n_b": diff["n_b"],
                            "difference": format_number(diff["difference"], sign=True),
                            "p": p_value_text(diff["p_value"], floor), "newcombe": _ci(diff["newcombe_ci"], 3),
                            "bootstrap": _ci(diff["bootstrap_ci"], 3),
                            "newcombe_word": _word(diff["coverage"]["newcombe"]),
                            "bootstrap_word": _word(diff["coverage"]["bootstrap"])})
    disagree = comparison["disagreements"]
    wanted = {row["scenario_id"] for row in disagree}
    sides = {}
    for who in ("a", "b"):
        frame = conversations[who]
        frame = _results(frame.loc[frame["scenario_id"].isin(wanted).to_numpy(bool)])
        by_scenario: dict[str, list[dict[str, Any]]] = {}
        for values in _rows(frame, _CARD_COLUMNS):
            conv = dict(zip(_CARD_COLUMNS, values))
            timeline = timelines[who].get(conv["conversation_id"])
            conv.update({"timeline": timeline} if timeline is not None else {"no_timeline": no_timeline[who]})
            by_scenario.setdefault(conv.pop("scenario_id"), []).append(conv)
        sides[who] = by_scenario
    rows = [[row["scenario_id"], row["case_id"], row["label"], f"{row['errors_a']}/{row['n_a']}",
             f"{row['errors_b']}/{row['n_b']}", f"{row['difference']:+.2f}"] for row in disagree]
    scenarios = [{who: sides[who].get(row["scenario_id"], []) for who in ("a", "b")} for row in disagree]
    data = {"page": "compare", "names": names, "rows": rows, "scenarios": scenarios, "text": _text_rule()}
    folders = (comparison.get("provenance") or {}).get("folders", ())
    provenance = [(f"{'A' if i == 0 else 'B'}: {html_text(f.get('name'), NAME_LIMIT)}",
                   f"{html_text(f.get('path'), NAME_LIMIT)} (summary.json SHA-256 "
                   f"{str((f.get('sha256') or {}).get('summary.json'))[:16]}...)") for i, f in enumerate(folders)]
    provenance += [("interval", comparison["interval"]), ("confidence", f"{comparison['confidence']:g}"),
                   ("bootstrap resamples", f"{comparison['n_boot']:,}"), ("seed", str(comparison["seed"])),
                   ("escalation", str((comparison.get("provenance") or {}).get("escalation", "unknown"))),
                   ("compared", str((comparison.get("provenance") or {}).get("created", "unknown")))]
    shown = {who: html_text(name, NAME_LIMIT) for who, name in names.items()}
    notes = [f"Timelines of {shown[who]}: {no_timeline[who]}" for who in ("a", "b")
             if not timelines[who]]
    return _page_text(
        "compare.html.j2", title="Escalation comparison",
        version=(comparison.get("provenance") or {}).get("escalation", ""), data=_data(data),
        sections=[("differences", "Differences"), ("disagreements", "Disagreements"), ("provenance", "Provenance")],
        names=shown, scenarios=comparison["scenarios"], cases=comparison["cases"], common=comparison["common"],
        level=level, created=(comparison.get("provenance") or {}).get("created", "at an unknown time"),
        differences=differences, chosen="bootstrap" if bootstrap else "newcombe",
        limits="wilson-kish" if bootstrap else comparison["interval"],
        kind=comparison["interval"].removeprefix("bootstrap-") if bootstrap else "percentile",
        interval=comparison["interval"], advice=comparison["advice"], warnings=comparison["warnings"],
        left_out=[(html_text(name, NAME_LIMIT), len(ids)) for name, ids in comparison["only_in"].items() if ids]
        if comparison["common"]
        else [], chart=_forest_chart(comparison, floor), figure_files=figure_files, disagreements=len(disagree),
        timeline_notes=notes, provenance=provenance)
