"""``report.html``, and with ``--figures`` the figures as PNG and PDF, beside the outputs of
``escalation score`` and ``escalation compare``.

The page draws its own figures (SVG, without matplotlib, which only ``--figures`` imports). The
score report is made as the run scores (:class:`ScoreReport`, the ``report`` of
:func:`escalation.estimators.metric.score_file`): its table keeps a few columns of every conversation,
its timelines the lines of the first ``--report-timelines`` conversations, whose evidence comes
from a second pass over the logs that stops there. Its files are written with
``conversations.jsonl`` and ``summary.json`` and renamed before the summary, which names them:
a failed run leaves none of them. The compare report reads each folder's timelines back from
its ``report.html``, when the folder's ``summary.json`` names that very file.
"""
from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

#: The figures of each command, each saved as PNG and PDF.
SCORE_FIGURES = ("rates", "scenario_errors")
COMPARE_FIGURES = ("differences",)
REPORT = "report.html"
#: Conversations whose timeline a score report holds unless ``--report-timelines`` says otherwise.
TIMELINES = 1_000
#: The columns of every conversation that the score report keeps (its table, the scenario figure).
_TABLE = ("conversation_id", "case_id", "scenario_id", "replica", "label", "evaluated", "reason", "u", "o", "cause",
          "turn", "a", "approval_cause")


def report_files(figures) -> tuple[str, ...]:
    """``report.html`` and each figure's PNG and PDF: the files a report writes."""
    return (REPORT, *(f"{stem}.{suffix}" for stem in figures for suffix in ("png", "pdf")))


def _drawn(figures: dict) -> dict:
    """Each Figure of ``figures`` (by stem) as the bytes of its PNG and PDF files."""
    from escalation.figures import figure_bytes

    return {f"{stem}.{suffix}": figure_bytes(fig, suffix) for stem, fig in figures.items() for suffix in ("png", "pdf")}


class ScoreReport:
    """The report of one scoring, made as :func:`escalation.estimators.metric.score_file` scores (its ``report``).

    Parameters
    ----------
    policy : Policy
        Gives each call of a timeline its kind.
    mode : {"record", "text"}
    timelines : int
        Conversations, the first in input order, whose timeline the page holds; 0 reads no log twice.
    figures : bool
        Also draw the figures as PNG and PDF files (``--figures``).
    """

    def __init__(self, policy, mode: str, timelines: int, *, figures: bool = False, sources: str | None = None):
        self.policy, self.mode, self.limit, self.figures = policy, mode, timelines, figures
        self.sources = sources  # the logs read again for the timelines, named in an error
        self.names = report_files(SCORE_FIGURES if figures else ())
        self._parts: list[pd.DataFrame] = []
        self._lines: list[Any] = []

    def add(self, results) -> None:
        """Keep the table's columns of a chunk's scored results, and the lines of the first conversations."""
        import orjson

        from escalation.estimators.metric import conversation_lines

        self._parts.append(results.loc[:, list(_TABLE)])
        need = self.limit - len(self._lines)
        if need > 0:
            self._lines.extend(orjson.loads(line) for line in conversation_lines(results.iloc[:need]))

    def files(self, summary, conversations) -> dict[str, bytes]:
        """The bytes of report.html and the figures, by name (``conversations(n)``: the first ``n`` read again)."""
        import pandas as pd

        from escalation.estimators.metric import EVIDENCE_ARGUMENTS_LIMIT, EVIDENCE_ITEMS_LIMIT, EVIDENCE_TEXT_LIMIT
        from escalation.estimators.records import handoff_word
        from escalation.figures import score_report

        table = pd.concat(self._parts, ignore_index=True) if self._parts else pd.DataFrame(columns=list(_TABLE))
        data = summary.to_dict()
        files = {}
        if self.figures:
            from escalation.figures import plot_rates, plot_scenario_errors
            files = _drawn({"rates": plot_rates(data), "scenario_errors": plot_scenario_errors(table)})
        page = score_report(data, table, self._timelines(conversations),
                            limits={"text": EVIDENCE_TEXT_LIMIT, "arguments": EVIDENCE_ARGUMENTS_LIMIT,
                                    "items": EVIDENCE_ITEMS_LIMIT},
                            timeline_limit=self.limit, figure_files=self.figures,
                            fixes=summary.not_evaluated_fixes,
                            handoff_tools=[name for name in data["unmarked_tools"] if handoff_word(name)])
        return {REPORT: page.encode("utf-8"), **files}

    def _timelines(self, conversations) -> list[dict]:
        """The timelines of the first conversations, from the logs read again as far as they are needed."""
        from escalation.estimators.metric import conversation_evidence
        from escalation.estimators.records import InputError

        if not self._lines:
            return []
        found = []
        for line, conversation in zip(self._lines, conversations(len(self._lines))):
            if conversation["conversation_id"] != line["conversation_id"]:
                break
            found.append(conversation_evidence(conversation, self.policy, line, mode=self.mode))
        if len(found) < len(self._lines):
            raise InputError("changed while it was scored (read again for report.html, its conversations are not "
                             "the ones just scored): score it when nothing writes to it, or give --report-timelines 0",
                             source=self.sources)
        return found


def _folder_timelines(folder: Path, summary: dict) -> tuple[dict, str]:
    """The timelines a score folder's report.html holds, by conversation id, and what a conversation
    without one is told: why it has none."""
    from escalation.figures import counted, report_data

    path = Path(folder) / REPORT
    if not path.is_file():
        return {}, f"{folder} has no {REPORT} (scored with --no-report, or by an older escalation)."
    named = ((summary.get("provenance") or {}).get("outputs") or {}).get(REPORT)
    raw = path.read_bytes()
    if not isinstance(named, dict) or named.get("sha256") != hashlib.sha256(raw).hexdigest():
        return {}, (f"{path} is not the one its summary.json names (left by another run); score the folder again "
                    "to have its timelines here.")
    try:
        page = report_data(raw.decode("utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        return {}, f"{path} {err}."
    timelines = {timeline["conversation_id"]: timeline for timeline in page.get("timelines") or ()}
    return timelines, (f"{path} holds the timelines of the first {counted(len(timelines), 'conversation')} in input "
                       "order (escalation score --report-timelines N sets how many).")


def compare_files(a_dir: Path, b_dir: Path, result, data: dict, *, figures: bool = False) -> dict[str, bytes]:
    """The bytes of the compare report.html, and with ``figures`` of its figure as PNG and PDF, by name.

    Parameters
    ----------
    a_dir, b_dir : Path
        The two score folders (read again: their conversations, and the timelines of their reports).
    result : Comparison
    data : dict
        ``compare.json`` (``result.to_dict()``).
    """
    from escalation.estimators.records import read_scored
    from escalation.figures import compare_report

    files = {}
    if figures:
        from escalation.figures import plot_difference_forest
        files = _drawn({"differences": plot_difference_forest(result.to_frame(), confidence=result.confidence)})
    frames, timelines, none = {}, {}, {}
    for who, folder in (("a", a_dir), ("b", b_dir)):
        frames[who], summary = read_scored(folder)
        timelines[who], none[who] = _folder_timelines(folder, summary)
    page = compare_report(data, frames, timelines, no_timeline=none, figure_files=figures)
    return {REPORT: page.encode("utf-8"), **files}
