"""The archive-limit options (``escalation.cli.commands._archive_limits``) show the library's defaults."""
import json

from escalation.cli.commands._archive_limits import ARCHIVE_DEFAULT, DOCUMENT_DEFAULT, MEMBER_DEFAULT, size
from escalation.estimators.records import ArchiveLimits
from tests._helpers import run_cli_output


def test_the_options_defaults_are_the_archive_limits_defaults():
    assert size(MEMBER_DEFAULT, "--max-member-bytes") == ArchiveLimits().member == 64 << 20
    assert size(ARCHIVE_DEFAULT, "--max-archive-bytes") == ArchiveLimits().archive == 2 << 30
    assert size(DOCUMENT_DEFAULT, "--max-document-bytes") == ArchiveLimits().document == 512 << 20


def test_a_json_document_over_its_limit_is_refused_before_it_is_read(monkeypatch, capsys, tmp_path):
    # issue of 2026-12-04: a .json log had no size limit; parsed whole it took 5 to 24 times its size, and under a
    # memory limit the run ended in a SIGSEGV or a traceback instead of the one-line error
    samples = [{"id": i, "epoch": 1, "target": "ESC", "messages": [{"role": "user", "content": "x" * 100}]}
               for i in range(50)]
    log = tmp_path / "log.json"
    log.write_text(json.dumps({"eval": {"task": "t"}, "samples": samples}, indent=1))
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps({"escalation_tools": ["transfer_to_human"]}))
    code, _, stderr = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--max-document-bytes",
                                     "4K", "--out", tmp_path / "out")
    assert code == 2 and not (tmp_path / "out").exists()
    assert stderr.startswith(f"error: {log}: is a JSON document of ") and "the limit is 4K: raise it with " \
        "--max-document-bytes" in " ".join(stderr.split())
    code, _, _ = run_cli_output(monkeypatch, capsys, "score", log, "--policy", policy, "--max-document-bytes", "1M",
                                "--json")
    assert code == 3  # read: no tool call, so exit 3 (SPEC section 7)


def test_sizes_are_powers_of_1024():
    assert [size(text, "--x") for text in ("1048576", "1K", "1.5M", "2g", "1TiB", " 3 MB ")] == \
        [1 << 20, 1 << 10, 3 << 19, 2 << 30, 1 << 40, 3 << 20]
