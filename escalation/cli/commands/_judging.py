"""``escalation score --judge-model``: the per-turn judge and the cause judge on the scored conversations.

Diagnostics only: what is written here never changes ``u``, ``o``, ``pi`` or ``summary.json``.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd
import typer

from ._console import Stop, plain


class _Judging:
    """What the judges need, gathered before scoring: the evaluated conversations and their instructions."""

    def __init__(self, model_name, turn_judge, cause_judge, conversations, rows, texts, policy, mode):
        self.model_name, self.turn_judge, self.cause_judge = model_name, turn_judge, cause_judge
        self.conversations, self.rows, self.texts, self.policy, self.mode = conversations, rows, texts, policy, mode


def prepare_judges(records: list[Path], judge_model: str, instructions: Optional[Path], *, format, labels, policy,
                    approval_escalation, mode, limits=None, timeout: float = 120.0,
                    time_limit: float | None = None, group_by: str = "trace") -> _Judging:
    """Check everything the judges need before the scoring writes anything (exit 2 otherwise).

    The logs are read whole (the judges need every message), and scored again by the same
    vectorised scorer to know which conversations are evaluated and which have an error;
    standard input, which can be read only once, is refused.
    """
    try:
        import inspect_ai  # noqa: F401  (the import the extra provides)

        from escalation.integrations import inspect_ai as inspect_judges
    except ImportError as err:
        raise Stop(f'--judge-model needs inspect_ai ({err}): python -m pip install -e ".[inspect]" in a clone of '
                   'the project, or python -m pip install "inspect_ai>=0.3.285"') from None
    from escalation.estimators.metric import score_records
    from escalation.estimators.records import InputError, Records, log_inputs, read_conversations

    text = None
    if instructions is not None:
        try:
            text = instructions.read_text(encoding="utf-8")
        except OSError as err:
            raise InputError(f"cannot read the instructions: {err.strerror or err}", source=str(instructions))
        except UnicodeDecodeError:
            raise InputError("the instructions must be UTF-8 text", source=str(instructions)) from None
        if not text.strip():
            raise InputError("the instructions file is empty", source=str(instructions))
    if any(str(path) == "-" for path in records):
        raise InputError("--judge-model reads the logs a second time, which standard input (-) cannot "
                         "give: save the log to a file")
    conversations, sources = [], []
    with log_inputs(records) as inputs:
        for log in inputs.logs:
            read = read_conversations(log.path, format=format, labels=labels, policy=policy,
                                      approval_escalation=approval_escalation,
                                      qualify_ids=len(inputs.logs) > 1, limits=limits, group_by=group_by)[0]
            conversations += read
            sources += [log.name] * len(read)
    results = score_records(Records.from_conversations(conversations), policy, mode=mode)
    rows = np.flatnonzero(results["evaluated"].to_numpy(bool)).tolist()
    texts = []
    for row in rows:
        given = text if text is not None else conversations[row]["metadata"].get("instructions")
        if not isinstance(given, str) or not given.strip():
            raise Stop(f"{sources[row]}: conversation {conversations[row]['conversation_id']!r} has no "
                       "metadata[\"instructions\"], the escalation instructions the assistant was given, which the "
                       "judges read: give --instructions FILE")
        texts.append(given)
    try:
        deadline = inspect_judges.Deadline(time_limit)  # the judges' questions together
        turn_judge = inspect_judges.InspectTurnJudge(judge_model, timeout=timeout, deadline=deadline)
        cause_judge = inspect_judges.InspectCauseJudge(turn_judge.model, timeout=timeout, deadline=deadline)
    except Exception as err:  # an unknown provider, a missing provider package or key...
        raise Stop(f"--judge-model {judge_model!r}: {str(err).replace('[bold]', '').replace('[/bold]', '')}") from None
    return _Judging(judge_model, turn_judge, cause_judge, conversations, rows, texts, policy, mode)


def _plain(value):
    """A JSON value: null for NA and NaN, Python numbers for numpy ones."""
    if value is None or value is pd.NA or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, np.generic):
        return _plain(value.item())
    return value


def run_judges(judging: _Judging, *, written: bool) -> list[dict]:
    """Both judges on the evaluated conversations, instructions text by instructions text; one line
    per evaluated conversation, in input order. Reads the scores, never changes them."""
    from escalation.estimators.judges import CauseJudgeError, judge_causes, judge_turns, turn_diagnostics
    from escalation.estimators.metric import score_records
    from escalation.estimators.records import Records
    from escalation.integrations import inspect_ai as inspect_judges

    groups: dict[str, list[int]] = {}
    for row, text in zip(judging.rows, judging.texts):
        groups.setdefault(text, []).append(row)
    lines: dict[int, dict] = {}
    try:
        for text, rows in groups.items():
            records = Records.from_conversations([judging.conversations[row] for row in rows])
            results = score_records(records, judging.policy, mode=judging.mode)
            probabilities = judge_turns(records, text, judging.turn_judge)
            diagnostics = turn_diagnostics(results, probabilities)
            causes = judge_causes(records, results, text, judging.cause_judge, on_invalid="record")
            cause_of = {row.conversation_id: row for row in causes.itertuples(index=False)}
            per_turn: list[list[float]] = [[] for _ in rows]
            for conv, p in zip(probabilities.conversation.tolist(), probabilities.p.tolist()):
                per_turn[conv].append(p)
            for i, row in enumerate(rows):
                result, diagnostic = results.iloc[i], diagnostics.iloc[i]
                found = cause_of.get(result["conversation_id"])
                line = {key: _plain(result[key]) for key in ("conversation_id", "case_id", "scenario_id", "replica",
                                                              "label", "language", "u", "o", "cause", "turn")}
                line["judge_model"] = judging.model_name
                line["judge_p"] = per_turn[i]
                line.update({key: _plain(diagnostic[key]) for key in ("judge_obligation_turn", "judge_p_final",
                                                                      "over_escalation_severity", "doubtful_label")})
                line.update({key: _plain(getattr(found, key)) if found is not None else None
                             for key in ("judge_cause", "evidence", "evidence_verified", "consistent",
                                         "judge_error")})
                lines[row] = line
    except (inspect_judges.TurnAnswerError, inspect_judges.TurnJudgeError, CauseJudgeError) as err:
        kept = "conversations.jsonl and summary.json are written; judges.jsonl is not" if written else \
            "no judge diagnostics"
        raise Stop(f"judges: {err} ({kept})", code=1) from None
    return [lines[row] for row in sorted(lines)]


def print_judges(lines: list[dict], judging: _Judging, *, path: Optional[Path], err: bool = False) -> None:
    """The judge section of the readable output (standard error when stdout holds --json)."""
    from escalation.figures import counted

    def say(text):
        typer.echo(text, err=err)

    say(f"judges ({plain(judging.model_name)}; diagnostics only, u, o and pi are unchanged): {len(lines)} evaluated "
        f"conversation{'' if len(lines) == 1 else 's'}")
    questions = sum(len(line["judge_p"]) for line in lines)
    obliged = sum(line["judge_obligation_turn"] is not None for line in lines)
    doubtful = [line["conversation_id"] for line in lines if line["doubtful_label"]]
    shown = ", ".join(plain(cid) for cid in doubtful[:5]) + (", ..." if len(doubtful) > 5 else "")
    say(f"per-turn judge: {questions} turn questions, {judging.turn_judge.calls} model calls; an obligation turn "
        f"(p >= 0.5) in {obliged} of {len(lines)}; doubtful labels {len(doubtful)}"
        + (f" ({shown})" if doubtful else ""))
    asked = [line for line in lines if line["judge_cause"] is not None or line["judge_error"] is not None]
    consistent = sum(line["consistent"] is True for line in asked)
    inconsistent = sum(line["consistent"] is False for line in asked)
    rejected = sum(line["judge_error"] is not None for line in asked)
    verified = sum(line["evidence_verified"] is True for line in asked)
    say(f"cause judge: {counted(len(asked), 'error')}; consistent with the record's cause {consistent}, not consistent "
        f"{inconsistent}, answer rejected {rejected}; evidence quoted verbatim {verified}")
    if path is not None:
        say(f"wrote {plain(path, None)}")
