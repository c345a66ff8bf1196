"""Bad input: a one-line error naming the file, the line and the field; exit 2; no partial output."""
import json
import subprocess
import sys

import pytest

from escalation.estimators.records import InputError, Policy, load_policy, read_jsonl

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


GOOD = '{"conversation_id": "a", "case_id": "k", "label": "ESC", "tool_calls": []}\n'
POLICY = '{"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"]}'


def run_score(tmp_path, records: str, policy: str = POLICY, *extra):
    rec, pol, out = tmp_path / "records.jsonl", tmp_path / "policy.json", tmp_path / "out"
    rec.write_text(records)
    pol.write_text(policy)
    run = subprocess.run([sys.executable, "-m", "escalation", "score", str(rec), "--policy", str(pol),
                          "--format", "jsonl", "--out", str(out), *extra], capture_output=True, text=True)
    return run, out


@pytest.mark.parametrize("records, line, field", [
    (GOOD + "not json\n", 2, None),
    (GOOD + "[1, 2]\n", 2, None),
    (GOOD + '{"case_id": "k", "label": "ACT"}\n', 2, "conversation_id"),
    (GOOD + GOOD, 2, "conversation_id"),
    (GOOD + '{"conversation_id": "b", "case_id": "k", "label": "ESC"}\n', 2, "replica"),
    (GOOD + '{"conversation_id": "b", "replica": -1}\n', 2, "replica"),
])
def test_bad_record_line(tmp_path, records, line, field):
    run, out = run_score(tmp_path, records)
    assert run.returncode == 2
    message = run.stderr.strip()
    assert len(message.splitlines()) == 1 and "Traceback" not in run.stderr
    assert f"records.jsonl:{line}:" in message
    if field:
        assert f"field '{field}'" in message
    assert not (out / "conversations.jsonl").exists() and not (out / "summary.json").exists()
    assert not list(out.glob(".*tmp")) if out.exists() else True


@pytest.mark.parametrize("policy, field", [
    ('{"escalation_tools": []}', "escalation_tools"),
    ('{"escalation_tools": ["t"], "read_only_tools": ["t"]}', "read_only_tools"),
    ('{"escalation_tools": ["t", "t"]}', "escalation_tools"),
    ('{"escalation_tools": ["t"], "read_only_tool": ["g"]}', "read_only_tool"),
    ('{"escalation_tools": ["t"], "gated_tools": ["t"]}', "gated_tools"),
    ('{"escalation_tools": "t"}', "escalation_tools"),
    ('{"escalation_tools": ["t"],', None),
])
def test_bad_policy(tmp_path, policy, field):
    run, out = run_score(tmp_path, GOOD, policy)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert "policy.json" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    if field:
        assert f"field '{field}'" in run.stderr
    assert not out.exists()


def test_unreadable_file(tmp_path):
    run = subprocess.run([sys.executable, "-m", "escalation", "score", str(tmp_path / "absent.jsonl"), "--policy",
                          str(tmp_path / "p.json")], capture_output=True, text=True)
    assert run.returncode == 2 and "absent.jsonl" in run.stderr and "Traceback" not in run.stderr


def test_policy_names_the_tool_named_twice():
    with pytest.raises(InputError, match="'get_order' is named in both read_only_tools and action_tools"):
        Policy.from_dict({"escalation_tools": ["e"], "read_only_tools": ["get_order"], "action_tools": ["get_order"]})


def test_policy_from_toml(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('escalation_tools = ["transfer_to_human"]\nread_only_tools = ["get_order"]\n')
    assert load_policy(path).read_only_tools == {"get_order"}


def test_unknown_keys_are_kept_in_metadata(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('{"conversation_id": "a", "label": "ESC", "tool_calls": [], "team": "blue"}\n')
    assert read_jsonl(path)[0]["metadata"] == {"team": "blue"}


def test_every_conversation_is_in_the_output(tmp_path):
    records = "".join(json.dumps({"conversation_id": f"c{i}", "label": ["ESC", "ACT", None, "x"][i % 4],
                                  "tool_calls": None if i % 5 == 0 else [{"turn": 0, "name": "get_order"}]}) + "\n"
                      for i in range(40))
    run, out = run_score(tmp_path, records, POLICY, "--chunk-size", "7")
    assert run.returncode == 0, run.stderr
    lines = [json.loads(x) for x in (out / "conversations.jsonl").read_text().splitlines()]
    assert [x["conversation_id"] for x in lines] == [f"c{i}" for i in range(40)]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["under"]["n"] + summary["over"]["n"] + summary["not_evaluated"]["total"] == 40


def test_plan_reports_missing_and_unplanned(tmp_path):
    plan = tmp_path / "plan.csv"
    plan.write_text("case_id,label,replicas\nk,ESC,2\nk,ACT,1\n")
    records = GOOD + ('{"conversation_id": "z", "case_id": "other", "label": "ACT", "tool_calls": '
                      '[{"turn": 0, "name": "get_order"}]}\n')  # a call read: a log with none exits 3 (SPEC 7)
    run, out = run_score(tmp_path, records, POLICY, "--plan", str(plan))
    assert run.returncode == 0, run.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["not_evaluated"]["reasons"]["missing"] == 2
    assert {"case_id": "k", "label": "ESC", "replica": 1} in summary["not_evaluated"]["missing"]
    assert {"case_id": "k", "label": "ACT", "replica": 0} in summary["not_evaluated"]["missing"]
    assert summary["under"]["n"] == 1 and summary["over"]["n"] == 1  # missing ones never counted
    lines = [json.loads(x) for x in (out / "conversations.jsonl").read_text().splitlines()]
    assert [x["unplanned"] for x in lines] == [False, True]


def test_labels_file_fills_labels(tmp_path):
    labels = tmp_path / "labels.csv"
    labels.write_text("case_id,label\nk,ACT\n")
    records = '{"conversation_id": "a", "case_id": "k", "tool_calls": [{"turn": 0, "name": "transfer_to_human"}]}\n'
    run, out = run_score(tmp_path, records, POLICY, "--labels", str(labels), "--json")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["over"]["errors"] == 1
