"""The error of a bad canonical JSONL file names its first bad line, whatever the chunk size or reader.

A line is bad when it is not a valid record (not JSON, not an object, no ``conversation_id``,
a bad ``replica``...) or when its key repeats an earlier line's (SPEC section 6); the first bad
line is the earliest such line, and a line whose record is not valid is named for that, not
for its key. The readers compared are the reference reader (``iter_jsonl``, and
``iter_records`` with messages, which uses it), the Arrow fast path (``iter_records`` without
messages, which hands a file it cannot take to the reference reader), the readers' entry
point (``read_conversations``, with the format named or detected) and ``score_file``.
"""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from escalation.estimators.metric import score_file
from escalation.estimators.records import InputError, Policy, iter_jsonl, iter_records, read_conversations

POLICY = Policy.from_dict({"escalation_tools": ["transfer_to_human"]})
CHUNK_SIZES = (1, 2, 3, 7, 1000)


def _record(i: int, **fields) -> str:
    return json.dumps({"conversation_id": f"c{i}", "label": "ESC", "tool_calls": [], **fields})


def _error(read) -> str:
    """The message of the InputError that ``read()`` raises ("" when it reads the file)."""
    try:
        read()
    except InputError as err:
        return str(err)
    return ""


def messages(path) -> dict[str, str]:
    """The error of every reader, by reader."""
    found = {}
    for size in CHUNK_SIZES:
        found[f"iter_jsonl({size})"] = _error(lambda: list(iter_jsonl(path, chunk_size=size)))
        found[f"reference({size})"] = _error(lambda: list(iter_records(path, chunk_size=size, messages=True)))
        found[f"score_file jsonl ({size})"] = _error(lambda: score_file(path, POLICY, format="jsonl", chunk_size=size))
    found["arrow"] = _error(lambda: list(iter_records(path, messages=False)))
    found["read_conversations jsonl"] = _error(lambda: read_conversations(path, format="jsonl"))
    found["read_conversations auto"] = _error(lambda: read_conversations(path))
    found["score_file auto"] = _error(lambda: score_file(path, POLICY))
    return found


CASES = {  # lines of the file, and the error every reader must give
    "a repeat (line 5) before a line that is not JSON (line 9)": (
        [_record(1), _record(2), _record(3), _record(4), _record(2), _record(6), _record(7), _record(8), "{bad",
         _record(10)],
        "5: field 'conversation_id': 'c2' repeats the conversation of line 2"),
    "a line that is not JSON (line 5) before a repeat (line 9)": (
        [_record(1), _record(2), _record(3), _record(4), '{"conversation_id": ', _record(6), _record(7), _record(8),
         _record(2)],
        "5: not valid JSON (unexpected end of data)"),
    "a repeat (line 5) before a null line (line 6)": (
        [_record(1), _record(2), _record(3), _record(4), _record(2), "null", _record(7)],
        "5: field 'conversation_id': 'c2' repeats the conversation of line 2"),
    "a missing id (line 4) before a repeat (line 5)": (
        [_record(1), _record(2), _record(3), '{"label": "ESC", "tool_calls": []}', _record(2)],
        "4: field 'conversation_id': is missing"),
    "a repeated (case, label, replica) (line 3) before a repeated id (line 5)": (
        [_record(1, case_id="k"), _record(2), _record(3, case_id="k"), _record(4), _record(2)],
        "3: field 'replica': case 'k', label 'ESC', replica 0 repeats line 1"),
    "a repeat on a line whose record is bad: the record's error": (
        [_record(1), _record(2), _record(1, replica=-1)],
        "3: field 'replica': must be an integer >= 0, got -1"),
    "a line nested 1,100 deep in a field no scorer reads (line 2): Arrow would read it": (
        [_record(1), _record(2, x=None).replace("null", "[" * 1100 + "]" * 1100), _record(3)],
        "2: not valid JSON (depth limit exceeded)"),
    "a bad first line and good lines after it": (
        ['{"conversation_id": "x", ', _record(2), _record(2)],
        "1: not valid JSON (unexpected end of data)"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(CASES))
def test_every_reader_names_the_first_bad_line(tmp_path, case):
    lines, expected = CASES[case]
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(lines) + "\n")
    found = messages(path)
    assert found == dict.fromkeys(found, f"{path}:{expected}")


# --- any small file: one message ------------------------------------------------------------

def _good(i, with_case):
    return {"conversation_id": f"c{i}", "label": "ESC", "tool_calls": [],
            **({"case_id": f"k{i}", "replica": 0} if with_case else {})}


#: Lines bad in themselves, as a JSON Lines file holds them (bytes).
OWN_BAD = {
    "not JSON": b'{"conversation_id": "x", ',
    "garbage": b"{bad",
    "null": b"null",
    "a list": b"[1]",
    "no conversation_id": b'{"label": "ESC", "tool_calls": []}',
    "a negative replica": b'{"conversation_id": "r", "replica": -1, "tool_calls": []}',
    "NaN": b'{"conversation_id": "n", "tool_calls": [], "x": NaN}',
    "bytes that are not UTF-8": b'{"conversation_id": "\xff", "tool_calls": []}',
    "two objects": b'{"conversation_id": "t"} {"conversation_id": "u"}',
    "nested 1,100 deep": b'{"conversation_id": "d", "tool_calls": [], "x": ' + b"[" * 1100 + b"]" * 1100 + b"}",
}
KINDS = st.sampled_from(["good", "good", "good", "good case", "blank", "repeat id", "repeat pair", *OWN_BAD])


def _file(kinds, picks) -> tuple[bytes, int | None]:
    """The file of these kinds of lines, and its first bad line (None when it has none).

    A repeat copies the key of an earlier good line (``picks`` chooses which); with none
    earlier it is a good line.
    """
    lines, first, good, with_case = [], None, [], []
    for number, (kind, pick) in enumerate(zip(kinds, picks), start=1):
        if kind == "repeat id" and good:  # only the id repeats (another label: no (case, label, replica) does)
            row = {"conversation_id": good[pick % len(good)]["conversation_id"], "label": "ACT", "tool_calls": []}
        elif kind == "repeat pair" and with_case:
            row = {**with_case[pick % len(with_case)], "conversation_id": f"p{number}"}
        elif kind in OWN_BAD:
            lines.append(OWN_BAD[kind])
            first = first or number
            continue
        elif kind == "blank":
            lines.append(b"  ")
            continue
        else:
            row = _good(number, kind == "good case")
            good.append(row)
            with_case += [row] if "case_id" in row else []
            lines.append(json.dumps(row).encode())
            continue
        lines.append(json.dumps(row).encode())
        first = first or number
    return b"\n".join(lines) + b"\n", first


@pytest.mark.slow
@settings(max_examples=60, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(st.lists(KINDS, min_size=1, max_size=12).filter(
    lambda kinds: sum(k not in ("good", "good case", "blank") for k in kinds) <= 3),
       st.lists(st.integers(0, 20), min_size=12, max_size=12))
def test_any_small_file_gives_one_message_naming_its_first_bad_line(tmp_path, kinds, picks):
    text, first = _file(kinds, picks)
    path = tmp_path / "log.jsonl"
    path.write_bytes(text)
    found = {f"iter_jsonl({size})": _error(lambda: list(iter_jsonl(path, chunk_size=size))) for size in range(1, 11)}
    found.update({f"reference({size})": _error(lambda: list(iter_records(path, chunk_size=size, messages=True)))
                  for size in range(1, 11)})
    found["arrow"] = _error(lambda: list(iter_records(path, messages=False)))
    found["read_conversations jsonl"] = _error(lambda: read_conversations(path, format="jsonl"))
    found["score_file jsonl"] = _error(lambda: score_file(path, POLICY, format="jsonl", chunk_size=3))
    lines = [line for line in text.split(b"\n") if line.strip()]
    if len(lines) < 2 or json_alone(lines[0]) or json_alone(lines[1]):
        # auto-detection too; only a text whose first two lines are not JSON is not JSON Lines, and
        # detection then names the error of the JSON document it might be
        found["read_conversations auto"] = _error(lambda: read_conversations(path))
    assert len(set(found.values())) == 1, found
    message = found["arrow"]
    if first is None:
        assert message == ""
    else:
        assert message.startswith(f"{path}:{first}: "), (message, first)


def json_alone(line: bytes) -> bool:
    try:
        json.loads(line)
    except ValueError:
        return False
    return True


# --- a file that changes while it is read -----------------------------------------------------

def test_a_file_changed_during_the_read_cannot_slip_a_repeated_id_through(tmp_path):
    """The reference reader keeps each key as its hash, and confirms a repeated hash by reading
    the file again; when that second read no longer holds the earlier key, the file changed, and
    that is an error: the repeat is not let through."""
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([_record(1), _record(2), _record(1)]) + "\n")
    chunks = iter_jsonl(path, chunk_size=1)
    assert [line for line, _ in next(chunks)] == [1]
    with path.open("r+b") as handle:  # line 1 now holds c9: the open reader has already read its lines
        handle.write(_record(9).encode())
    assert [line for line, _ in next(chunks)] == [2]
    with pytest.raises(InputError) as caught:
        next(chunks)
    assert str(caught.value) == (
        f"{path}:3: field 'conversation_id': 'c1' seemed to repeat an earlier conversation, which a second read "
        "does not find: the file changed while it was read; score a copy that no program writes to")


def test_a_repeat_across_chunks_is_confirmed_by_the_second_read(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([_record(i) for i in range(1, 6)] + [_record(1)]) + "\n")
    with pytest.raises(InputError, match=r"log.jsonl:6: field 'conversation_id': 'c1' repeats the conversation of "
                                         r"line 1$"):
        list(iter_jsonl(path, chunk_size=2))
