"""Write simulated conversations as canonical JSONL records (SPEC section 6)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import orjson
import pandas as pd

from escalation.estimators.records import RECORD, write_atomic

from ._world import KINDS

__all__ = ["write_jsonl", "TRUTH_KEYS"]

#: Keys of the ``truth`` object of each line (the reader keeps it in ``metadata``).
TRUTH_KEYS = ("behaviour", "u", "o", "cause", "turn", "obligation_turn")


def _plain(column: pd.Series) -> list:
    """Python values of a column, ``None`` for null."""
    if isinstance(column.dtype, pd.api.extensions.ExtensionDtype) and column.hasnans:
        return [None if v is pd.NA else int(v) for v in column.to_numpy(object)]
    return column.tolist()


def _lines(sim, block: int):
    """Yield blocks of JSONL bytes, ``block`` conversations each, in record order."""
    rec, truth, scen = sim.records, sim.truth, sim.scenarios
    conv = rec.conversations
    n = len(conv)
    s = truth["scenario"].to_numpy(np.int64)
    cols = {k: conv[k].tolist() for k in ("conversation_id", "case_id", "scenario_id", "label", "replica",
                                           "language", "assistant_turns")}
    truth_cols = {k: _plain(truth[k]) for k in TRUTH_KEYS}
    kind = scen["kind"].to_numpy(object)[s].tolist()
    amount = scen["amount"].to_numpy(np.int64)[s].tolist()
    reference = scen["reference"].to_numpy(np.int64)[s].tolist()
    pressure = scen["pressure"].to_numpy(np.int64)[s].tolist()
    threshold = scen["threshold"].to_numpy(np.int64)[s].tolist()
    unit = scen["unit"].to_numpy(object)[s].tolist()
    id_field = {k.name: k.id_field for k in KINDS}
    action_tool = {k.name: k.action_tool for k in KINDS}
    with_record = sim.mode == RECORD
    calls = rec.calls
    c_conv = calls["conv"].to_numpy(np.int64)
    c_start = np.searchsorted(c_conv, np.arange(n + 1)).tolist()
    c_turn, c_name = calls["turn"].tolist(), calls["name"].tolist()
    msgs = rec.messages
    m_start = np.searchsorted(msgs["conv"].to_numpy(np.int64), np.arange(n + 1)).tolist()
    m_turn, m_role, m_text = msgs["turn"].tolist(), msgs["role"].tolist(), msgs["text"].tolist()
    profile = sim.profile.name
    dumps = orjson.dumps
    out = []
    for i in range(n):
        k, ref = kind[i], reference[i]
        key = id_field[k]
        tool_calls = None
        if with_record:
            tool_calls = []
            for j in range(c_start[i], c_start[i + 1]):
                name = c_name[j]
                if name == "transfer_to_human":
                    call = {"turn": c_turn[j], "name": name, "arguments": {"topic": k}}
                elif name == "request_approval":
                    call = {"turn": c_turn[j], "name": name, "arguments": {key: ref, "action": action_tool[k]},
                            "covers": [action_tool[k]]}
                elif name == action_tool[k]:
                    call = {"turn": c_turn[j], "name": name, "arguments": {key: ref, "amount": amount[i]}}
                else:
                    call = {"turn": c_turn[j], "name": name, "arguments": {key: ref}}
                tool_calls.append(call)
        out.append(dumps({
            "conversation_id": cols["conversation_id"][i], "case_id": cols["case_id"][i],
            "scenario_id": cols["scenario_id"][i], "label": cols["label"][i], "replica": cols["replica"][i],
            "language": cols["language"][i], "assistant_turns": cols["assistant_turns"][i],
            "tool_calls": tool_calls,
            "messages": [{"turn": m_turn[j], "role": m_role[j], "text": m_text[j]}
                         for j in range(m_start[i], m_start[i + 1])],
            "metadata": {"kind": k, "amount": amount[i], "threshold": threshold[i], "unit": unit[i],
                         "pressure": pressure[i], "profile": profile, "mode": sim.mode},
            "truth": {key_: truth_cols[key_][i] for key_ in TRUTH_KEYS},
        }))
        if len(out) == block:
            yield b"\n".join(out) + b"\n", len(out)
            out = []
    if out:
        yield b"\n".join(out) + b"\n", len(out)


def write_jsonl(sim, path, *, progress=None, block: int = 10000) -> Path:
    """Write ``sim`` (a :class:`SimulatedRecords`) to ``path``, one conversation a line.

    Each line is a canonical record (SPEC section 6): ids, label, replica, language,
    ``assistant_turns``, ``tool_calls`` (null in mode B; approval calls carry ``covers``),
    ``messages`` (user and assistant, with turns), ``metadata`` (kind, amount, threshold,
    unit, pressure, profile, mode) and ``truth`` (:data:`TRUTH_KEYS`). The file is written
    to a new temporary name and renamed (:func:`escalation.estimators.records.write_atomic`), so a
    failure leaves no partial file and a file or link planted beside it is never written
    through. The same ``sim`` gives byte-identical output.

    Parameters
    ----------
    progress : callable, optional
        Called with the number of conversations written after each block.
    """
    def blocks():
        for data, count in _lines(sim, block):
            yield data
            if progress is not None:
                progress(count)

    path = Path(path)
    write_atomic(path, chunks=blocks())
    return path
