"""Logs read a chunk at a time (``estimators.records.readers._source``, issue "Hostile and careless input").

A JSON Lines chat file larger than the head that detection reads is parsed a line at a time
(:class:`JsonLines`); an inspect ``.eval`` archive one member at a time; and
:func:`iter_conversations` hands them on ``chunk_size`` conversations at a time. What is read,
and every error, is what reading the file whole gives; memory is bounded by the chunk.
"""
from __future__ import annotations

import json
import tracemalloc
import zipfile

import pytest

import escalation.estimators.records.readers._source as source
from escalation.estimators.metric import score_file
from escalation.estimators.records import InputError, Policy, iter_conversations, read_conversations

POLICY = Policy.from_dict({"escalation_tools": ["transfer_to_human"], "action_tools": ["issue_refund"]})


def _chat(i: int, pad: int = 2000, **fields) -> dict:
    call = {"id": f"c{i}", "type": "function", "function": {"name": "transfer_to_human", "arguments": "{}"}}
    return {"conversation_id": f"o{i}", "label": "ESC" if i % 2 else "ACT", **fields,
            "messages": [{"role": "user", "content": "refund " + "x" * pad},
                         {"role": "assistant", "content": None, "tool_calls": [call]}]}


def _write(path, records) -> None:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))


def _read(path, monkeypatch, whole: bool):
    """read_conversations' answer (its conversations, or its error), the file streamed or held whole."""
    with monkeypatch.context() as patch:
        if whole:
            patch.setattr(source, "_HEAD_BYTES", 1 << 30)  # every file is then a head: parsed whole
        streamed = isinstance(source.load_document(path).data, source.JsonLines)
        try:
            return streamed, read_conversations(path)
        except InputError as err:
            return streamed, str(err)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["good", "a bad line", "a repeated id", "an id that is another line's line-N"])
def test_a_large_chat_file_streamed_reads_as_the_same_file_held_whole(case, tmp_path, monkeypatch):
    records = [_chat(i) for i in range(3000)]  # about 6.5 MB: more than the 4 MiB head
    if case == "a bad line":
        records[2500] = '{"conversation_id": "o2500", '
    elif case == "a repeated id":
        records[2900] = _chat(7)
    elif case == "an id that is another line's line-N":
        records[100] = {k: v for k, v in _chat(100).items() if k != "conversation_id"}  # conversation line-101
        records[2000] = _chat(2000, conversation_id="line-101")
    path = tmp_path / "chat.jsonl"
    _write(path, records)
    assert path.stat().st_size > 4 << 20
    streamed, answer = _read(path, monkeypatch, whole=False)
    held, whole = _read(path, monkeypatch, whole=True)
    assert (streamed, held) == (True, False)
    assert answer == whole
    expected = {"good": None, "a bad line": f"{path}:2501: not valid JSON (unexpected end of data)",
                "a repeated id": f"{path}:2901: field 'conversation_id': 'o7' repeats the conversation of line 8",
                "an id that is another line's line-N": f"{path}:2001: field 'conversation_id': 'line-101' is also the "
                "id of line 101, which has no conversation_id (it is then line-N, N its line): ids must be unique"}
    if expected[case] is None:
        assert len(answer[0]) == 3000 and answer[1] == "openai"
    else:
        assert answer == expected[case]


def test_chunks_hold_chunk_size_conversations_and_add_up_to_the_whole(tmp_path):
    path = tmp_path / "chat.jsonl"
    _write(path, [_chat(i, pad=10) for i in range(23)])
    chunks = iter_conversations(path, chunk_size=5)
    assert next(chunks) == "openai"
    sizes, conversations = [], []
    for chunk in chunks:
        sizes.append(len(chunk))
        conversations += chunk
    assert sizes == [5, 5, 5, 5, 3]
    assert conversations == read_conversations(path)[0]


def _archive(path, samples: int, text: int) -> None:
    sample = {"epoch": 1, "target": "ESC",
              "messages": [{"role": "user", "content": "I want a refund."},
                           {"role": "assistant", "content": "x" * text,
                            "tool_calls": [{"id": "c1", "function": "transfer_to_human", "arguments": {}}]}]}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"eval": {"task": "t", "model": "m"}}))
        for i in range(1, samples + 1):
            archive.writestr(f"samples/{i}_epoch_1.json", json.dumps({**sample, "id": i}))


def _peak(read) -> int:
    tracemalloc.start()
    try:
        read()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_an_archive_is_read_a_member_at_a_time_and_scored_a_chunk_at_a_time(tmp_path):
    path = tmp_path / "log.eval"
    _archive(path, samples=200, text=100_000)  # 20 MB of assistant text, which text mode keeps
    whole = _peak(lambda: read_conversations(path))
    chunked = _peak(lambda: [len(chunk) for chunk in iter_conversations(path, chunk_size=10)])
    assert whole > 20e6 and chunked < whole / 5, (whole, chunked)
    small = _peak(lambda: score_file(path, POLICY, mode="text", chunk_size=10, out_dir=tmp_path / "a"))
    large = _peak(lambda: score_file(path, POLICY, mode="text", chunk_size=1000, out_dir=tmp_path / "b"))
    assert small < large / 3, (small, large)
    assert ((tmp_path / "a" / "conversations.jsonl").read_bytes()
            == (tmp_path / "b" / "conversations.jsonl").read_bytes())
