"""Logs as users have them (issue 16, point 2): a folder, several files, standard input, a tau2-bench
``results.json`` given alone, an OpenAI fine-tuning file, and the provenance of every ``summary.json``.

Each expected count comes from the files themselves, read here with the standard library, or from
scoring each log alone: a folder or a list must give exactly what its logs give one by one.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from escalation.estimators.metric import score_file
from escalation.estimators.records import InputError, load_policy

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


ROOT = Path(__file__).resolve().parents[2]
READERS = ROOT / "tests" / "data" / "readers"
INSPECT = ROOT / "examples" / "data" / "inspect"  # real inspect_ai logs of three tasks (and their LICENSE)
POLICY = ROOT / "examples" / "tau-bench-airline.policy.json"


def run(*args, stdin: bytes | None = None, cwd=None):
    return subprocess.run([sys.executable, "-m", "escalation", *map(str, args)], input=stdin, capture_output=True,
                          cwd=cwd, timeout=120)


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def inspect_task(path: Path) -> str:
    """The task of an inspect_ai log, read with the standard library."""
    if path.suffix == ".eval":
        with zipfile.ZipFile(path) as archive:
            return json.loads(archive.read("header.json"))["eval"]["task"]
    return json.loads(path.read_text())["eval"]["task"]


def test_a_folder_of_inspect_logs_is_every_log_in_name_order(tmp_path):
    logs = sorted(p for p in INSPECT.iterdir() if p.suffix in (".json", ".eval"))
    assert len(logs) == 3 and len({inspect_task(p) for p in logs}) == 3  # three tasks, whose sample ids repeat
    done = run("score", INSPECT, "--policy", POLICY, "--out", tmp_path / "all")
    assert done.returncode in (0, 3), done.stderr
    assert "left out" in done.stderr.decode() and "LICENSE" in done.stderr.decode()
    together = lines(tmp_path / "all" / "conversations.jsonl")
    alone = []
    for i, log in enumerate(logs):
        assert run("score", log, "--policy", POLICY, "--out", tmp_path / str(i)).returncode in (0, 3)
        alone += [(inspect_task(log), line) for line in lines(tmp_path / str(i) / "conversations.jsonl")]
    assert len(together) == len(alone)
    for line, (task, single) in zip(together, alone):  # name order, ids qualified by the task
        assert line["conversation_id"] == f"{task}/{single['conversation_id']}"
        assert line["scenario_id"] == f"{task}/{single['scenario_id']}"
        ids = ("conversation_id", "case_id", "scenario_id")
        assert {k: v for k, v in line.items() if k not in ids} == {k: v for k, v in single.items() if k not in ids}
    summary = json.loads((tmp_path / "all" / "summary.json").read_text())
    assert [entry["path"] for entry in summary["provenance"]["inputs"]] == [str(p) for p in logs]
    assert summary["provenance"]["skipped"] == [str(INSPECT / "LICENSE")]


def test_two_runs_of_one_task_are_refused_naming_both_logs(tmp_path):
    done = run("score", READERS / "inspect_log.json", READERS / "inspect_log.eval", "--policy", POLICY,
               "--out", tmp_path / "out")
    message = done.stderr.decode().strip()
    assert done.returncode == 2 and message.count("\n") == 0
    assert "inspect_log.json" in message and "inspect_log.eval" in message and "refunds/" in message
    assert not (tmp_path / "out").exists()  # a failed run leaves no folder it made


def test_several_files_are_their_conversations_in_order(tmp_path):
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    records = [json.loads(line) for line in (READERS / "canonical.jsonl").read_text().splitlines() if line.strip()]
    first.write_text(json.dumps(records[0]) + "\n")
    second.write_text("\n".join(json.dumps(r) for r in records[1:]) + "\n")
    policy = load_policy(POLICY)
    both, used = score_file([first, second], policy, out_dir=tmp_path / "both")
    whole, _ = score_file(READERS / "canonical.jsonl", policy, out_dir=tmp_path / "whole")
    assert used == "jsonl"
    assert (tmp_path / "both" / "conversations.jsonl").read_text() == \
        (tmp_path / "whole" / "conversations.jsonl").read_text()
    strip = lambda d: {k: v for k, v in d.items() if k != "provenance"}  # noqa: E731
    assert strip(both.to_dict()) == strip(whole.to_dict())


def test_a_conversation_id_in_two_files_is_refused(tmp_path):
    copy = tmp_path / "again.jsonl"
    shutil.copy(READERS / "canonical.jsonl", copy)
    with pytest.raises(InputError) as err:
        score_file([READERS / "canonical.jsonl", copy], load_policy(POLICY))
    assert "canonical.jsonl" in str(err.value) and "again.jsonl" in str(err.value)


def test_logs_of_two_formats_are_refused_naming_both(tmp_path):
    with pytest.raises(InputError) as err:
        score_file([READERS / "canonical.jsonl", READERS / "openai.jsonl"], load_policy(POLICY))
    assert "canonical.jsonl is jsonl" in str(err.value) and "openai.jsonl is openai" in str(err.value)


def test_standard_input_is_read_and_named(tmp_path):
    raw = (READERS / "openai.jsonl").read_bytes()
    done = run("score", "-", "--policy", POLICY, "--out", tmp_path / "in")
    assert done.returncode == 3 and b"holds no conversation" in done.stderr  # nothing on standard input
    done = run("score", "-", "--policy", POLICY, "--out", tmp_path / "in", stdin=raw)
    assert done.returncode == 0, done.stderr
    file_run = run("score", READERS / "openai.jsonl", "--policy", POLICY, "--out", tmp_path / "file")
    assert (tmp_path / "in" / "conversations.jsonl").read_bytes() == \
        (tmp_path / "file" / "conversations.jsonl").read_bytes(), file_run.stderr
    provenance = json.loads((tmp_path / "in" / "summary.json").read_text())["provenance"]
    assert provenance["inputs"] == [{"path": "<stdin>", "bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}]
    bad = run("score", "-", "--policy", POLICY, stdin=b'{"conversation_id": "x", "messages": [}\n')
    assert bad.returncode == 2 and bad.stderr.decode().startswith("error: <stdin>:1:")


def test_a_tau2_results_json_alone_reads_the_simulations_beside_it(tmp_path):
    folder = tmp_path / "run"
    shutil.copytree(READERS / "tau2_dir", folder)
    results = json.loads((folder / "results.json").read_text())
    results.pop("simulations", None)  # tau2-bench's dir format: the simulations are only in the folder
    (folder / "results.json").write_text(json.dumps(results, indent=1))
    sims = sorted((folder / "simulations").glob("*.json"))
    policy = load_policy(POLICY)
    alone, used = score_file(folder / "results.json", policy)
    whole, _ = score_file(folder, policy)
    assert used == "tau2-bench" and alone.conversations == whole.conversations == len(sims)
    (tmp_path / "lonely").mkdir()
    shutil.copy(folder / "results.json", tmp_path / "lonely" / "results.json")
    with pytest.raises(InputError, match="no simulations/ folder"):
        score_file(tmp_path / "lonely" / "results.json", policy)


def test_an_openai_fine_tuning_file_is_read_by_its_lines(tmp_path):
    # The shape of OpenAI's fine-tuning files for tool use: {"messages", "tools", "parallel_tool_calls"} a line.
    call = lambda i, name: {"id": f"call_{i}", "type": "function",  # noqa: E731
                            "function": {"name": name, "arguments": "{}"}}
    rows = [{"messages": [{"role": "system", "content": "You are a support agent."},
                          {"role": "user", "content": "Refund order 12, 900 USD"},
                          {"role": "assistant", "tool_calls": [call(1, "transfer_to_human_agents")]},
                          {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
                          {"role": "assistant", "content": "A supervisor will decide."}],
             "tools": [{"type": "function", "function": {"name": "transfer_to_human_agents", "parameters": {}}}],
             "parallel_tool_calls": False},
            {"messages": [{"role": "user", "content": "Refund 20 USD"},
                          {"role": "assistant", "content": None, "tool_calls": [call(2, "cancel_reservation")]},
                          {"role": "tool", "tool_call_id": "call_2", "content": "done"},
                          {"role": "assistant", "content": "Done.", "weight": 1}]}]
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    labels = tmp_path / "labels.csv"
    labels.write_text("conversation_id,label\nline-1,ESC\nline-2,ESC\n")
    done = run("score", path, "--policy", POLICY, "--labels", labels, "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    out = {line["conversation_id"]: line for line in lines(tmp_path / "out" / "conversations.jsonl")}
    assert out["line-1"]["u"] == 0 and out["line-2"]["u"] == 1 and out["line-2"]["cause"] == "no_handoff"


def test_outputs_respect_the_umask(tmp_path):
    script = (f"import os, sys; os.umask(0o022); sys.argv = ['escalation', 'score', {str(READERS / 'openai.jsonl')!r}, "
              f"'--policy', {str(POLICY)!r}, '--out', {str(tmp_path / 'out')!r}]; "
              "from escalation.cli import main; main()")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (tmp_path / "out").iterdir()}
    assert modes == {name: 0o644 for name in ("conversations.jsonl", "summary.json", "report.html")}


def test_the_provenance_names_what_the_summary_was_computed_from(tmp_path):
    log = READERS / "openai.jsonl"
    done = run("score", log, "--policy", POLICY, "--out", tmp_path / "out", "--confidence", "0.9", "--seed", "3")
    assert done.returncode == 0, done.stderr
    provenance = json.loads((tmp_path / "out" / "summary.json").read_text())["provenance"]
    raw = log.read_bytes()
    assert provenance["inputs"] == [{"path": str(log), "bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest()}]
    assert provenance["format"] == "openai"
    policy = json.loads(POLICY.read_text())
    lists = ("escalation_tools", "read_only_tools", "action_tools", "approval_tools", "gated_tools")
    assert provenance["policy"]["contents"] == {k: sorted(policy.get(k, [])) for k in lists}
    assert provenance["policy"]["path"] == str(POLICY)
    assert provenance["policy"]["sha256"] == hashlib.sha256(json.dumps(
        {k: sorted(policy.get(k, [])) for k in lists}, sort_keys=True).encode()).hexdigest()
    assert provenance["options"] == {"mode": "record", "confidence": 0.9, "rho": None, "interval": "auto",
                                     "seed": 3, "approval_escalation": False}
    from escalation import __version__
    assert provenance["escalation"] == __version__ and provenance["created"].endswith("Z")


def test_a_policy_in_toml_has_the_fingerprint_of_the_same_policy_in_json(tmp_path):
    policy = json.loads(POLICY.read_text())
    toml = tmp_path / "p.toml"
    toml.write_text("".join(f"{key} = {json.dumps(list(reversed(value)))}\n" for key, value in policy.items()
                            if isinstance(value, list)))
    assert load_policy(toml).fingerprint() == load_policy(POLICY).fingerprint()


def test_a_wrong_format_reads_no_call_and_says_which_format_fits(tmp_path):
    # The mistake of issue 16: --format anthropic on an OpenAI log read no tool call and printed p_u = 1; since
    # 2026-12-04 it also exits 3 (SPEC section 7), so a script that reads only the exit code cannot take p_u = 1
    done = run("score", READERS / "openai.jsonl", "--policy", POLICY, "--format", "anthropic")
    message = " ".join(done.stderr.decode().split())
    assert done.returncode == 3 and "hold no tool call read from the log" in message
    assert "reads as openai when the format is detected: try --format openai" in message
    right = run("score", READERS / "openai.jsonl", "--policy", POLICY, "--format", "openai")
    assert "hint:" not in right.stderr.decode()


def test_a_value_given_to_a_flag_is_named_as_such():
    done = run("score", READERS / "openai.jsonl", "--policy", POLICY, "--json", "true")
    assert done.returncode == 2
    assert done.stderr.decode() == "error: true: no such file or folder (a flag such as --json takes no value: " \
                                   "write it alone)\n"



def test_the_logs_hashed_in_the_background_stop_when_told(tmp_path):
    """score_file hashes the logs for the provenance while it scores them; after an error it sets
    the event and the hashing stops (describe gives None) instead of reading the rest of the log."""
    import threading

    from escalation.estimators.records._inputs import LogInput

    (tmp_path / "folder").mkdir()
    for path in (tmp_path / "log.jsonl", tmp_path / "folder" / "a.jsonl"):
        path.write_bytes(b"x" * (3 << 20))
    stop = threading.Event()
    file, folder = LogInput(tmp_path / "log.jsonl", "log.jsonl"), LogInput(tmp_path / "folder", "folder")
    assert file.describe()["sha256"] == hashlib.sha256(b"x" * (3 << 20)).hexdigest()
    for log in (file, folder):
        assert log.describe(stop=stop) == log.describe()
        stop.set()
        assert log.describe(stop=stop) is None
        stop.clear()
