"""A Phoenix project's traces as canonical conversations (``escalation score --phoenix URL --project NAME``).

Read through Phoenix's own client (``arize-phoenix-client``, ``phoenix.client.Client(base_url=...)``): the
project's traces in the order they started (``traces.get_traces`` with ``sort="start_time"``, ``order="asc"``,
``start_time`` the ``--since`` time: Phoenix's inclusive lower bound on a trace's start), then their spans a batch of
traces at a time (``spans.get_spans`` with ``trace_ids``, the REST API's ``GET /v1/projects/{project}/spans``).
Each trace's OpenInference spans make one conversation (``openinference_conversation`` of
:mod:`escalation.estimators.records`), written as a canonical JSONL line (SPEC section 6) to the file that the
scoring reads; a trace with no LLM, AGENT or TOOL span is left out. The client reads ``PHOENIX_API_KEY`` for a
server that asks for one.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import orjson

from escalation.estimators.records import InputError, openinference_conversation

__all__ = ["PhoenixTraces", "read_phoenix", "client", "failure"]

#: Traces whose spans are asked for in one request (their ids go in the query string).
_BATCH = 50
#: The most a listing may return: the client pages through it 100 at a time.
_ALL = sys.maxsize
_TIMEOUT = 30


@dataclass
class PhoenixTraces:
    """What was read of a project: the canonical JSONL file of its conversations, and for each conversation (its
    ``conversation_id`` is the trace id) the ids of its root span and of the span of each turn and call
    (``metadata["otel"]``) with its calls, which place the annotations."""

    url: str
    project: str
    since: datetime | None
    path: Path
    traces: int = 0
    spans: int = 0
    conversations: dict[str, dict] = field(default_factory=dict)

    def provenance(self) -> dict:
        """The facts of the read, for ``summary.json``'s provenance."""
        return {"url": self.url, "project": self.project, "since": None if self.since is None else
                self.since.isoformat(), "traces": self.traces, "spans": self.spans,
                "conversations": len(self.conversations)}


def client(url: str):
    """Phoenix's client for the server at ``url``; an :class:`InputError` that says what to install without it."""
    try:
        from phoenix.client import Client
    except ImportError:
        raise InputError("needs Phoenix's client: python -m pip install -e \".[phoenix]\" in a clone of the project, "
                         "or python -m pip install arize-phoenix-client", field="--phoenix") from None
    return Client(base_url=url)


def failure(url: str, err: Exception) -> InputError:
    """The one-line error of a request to Phoenix that failed: its status, or why the server was not reached."""
    import httpx

    if isinstance(err, httpx.HTTPStatusError):
        return InputError(f"Phoenix answered {err.response.status_code} ({err.response.reason_phrase}) to "
                          f"{err.request.url.path}", source=url)
    return InputError(f"cannot reach Phoenix ({type(err).__name__}: {' '.join(str(err).split()) or 'no answer'})",
                      source=url)


def read_phoenix(url: str, project: str, path: Path, *, since: datetime | None = None) -> PhoenixTraces:
    """Read a Phoenix project's traces (module docstring) into the canonical JSONL file ``path``.

    Parameters
    ----------
    url : str
        The Phoenix server (``http://localhost:6006``).
    project : str
        The project's name or id.
    path : Path
        The file the conversations are written to, one a line, in the order their traces started.
    since : datetime, optional
        Read only the traces that started at or after it.

    Returns
    -------
    PhoenixTraces

    Raises
    ------
    InputError
        When the server cannot be reached or refuses a request (naming the URL), or the project has no such name.
    """
    phoenix = client(url)
    import httpx  # phoenix.client's

    read = PhoenixTraces(url, project, since, path)
    try:
        listed = phoenix.traces.get_traces(project_identifier=project, start_time=since, sort="start_time",
                                           order="asc", limit=_ALL, timeout=_TIMEOUT)
        ids = [trace["trace_id"] for trace in listed]
        with path.open("wb") as out:
            for first in range(0, len(ids), _BATCH):
                batch = ids[first:first + _BATCH]
                spans = phoenix.spans.get_spans(project_identifier=project, trace_ids=batch, limit=_ALL,
                                                timeout=_TIMEOUT)
                read.spans += len(spans)
                by_trace: dict[str, list] = {trace: [] for trace in batch}
                for span in spans:
                    by_trace.setdefault(span["context"]["trace_id"], []).append(span)
                for trace, its_spans in by_trace.items():
                    conversation = openinference_conversation(trace, its_spans)
                    if conversation is None:
                        continue
                    out.write(orjson.dumps(conversation) + b"\n")
                    read.conversations[trace] = {"root": conversation["metadata"]["root_span_id"],
                                                 "otel": conversation["metadata"]["otel"],
                                                 "tool_calls": conversation["tool_calls"]}
    except httpx.HTTPStatusError as err:
        if err.response.status_code == 404 and "/projects/" in err.request.url.path:
            raise InputError(f"Phoenix has no project {project!r}", source=url, field="--project") from None
        raise failure(url, err) from None
    except httpx.HTTPError as err:
        raise failure(url, err) from None
    read.traces = len(ids)
    return read
