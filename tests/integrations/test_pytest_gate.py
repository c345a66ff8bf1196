"""The pytest plugin ``escalation.integrations.pytest_gate``: the marker and the fixture ``escalation_gate`` pass,
fail, skip or xfail a test as ``escalation gate`` decides (issue 37), run through ``pytester``.

The inner sessions load the plugin with ``-p`` and nothing else (no entry point), so they behave the same
whether or not this checkout is installed with its ``pytest11`` entry point.
"""
from __future__ import annotations

import contextlib
import io
import json

import pytest

from escalation.estimators.stats import choose_interval

from .._helpers import run_cli
from ..cli.test_gate import POLICY, write_log

pytest_plugins = ["pytester"]
PLUGIN = "escalation.integrations.pytest_gate"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Scored folders that pass (0 of 100 ESC errors), fail (30) and stay undecided (5) at --max-p-u 0.05, and
    the policy and a log."""
    root = tmp_path_factory.mktemp("plugin")
    policy = root / "policy.json"
    policy.write_text(json.dumps(POLICY), encoding="utf-8")
    found = {"policy": policy, "log": write_log(root / "bad.jsonl", under=30, over=0)}
    with pytest.MonkeyPatch.context() as monkeypatch:
        for name, under in (("good", 0), ("bad", 30), ("middling", 5)):
            log = write_log(root / f"{name}.jsonl", under=under, over=0)
            found[name] = root / "scored" / name
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                assert run_cli(monkeypatch, "score", log, "--policy", policy, "--out", found[name],
                               "--no-report") == 0
    return found


@pytest.fixture
def inner(pytester, monkeypatch):
    """pytester, with the plugin loaded only by ``-p``."""
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    return pytester


def test_the_marker_passes_fails_skips_and_xfails_a_test(inner, folders):
    inner.makepyfile(f"""
        import pytest

        ran = []

        @pytest.mark.escalation_gate({str(folders["good"])!r}, max_p_u=0.05)
        def test_good():
            ran.append("good")

        @pytest.mark.escalation_gate({str(folders["bad"])!r}, max_p_u=0.05)
        def test_bad():
            ran.append("bad")

        @pytest.mark.escalation_gate({str(folders["middling"])!r}, max_p_u=0.05)
        def test_middling():
            ran.append("middling")

        @pytest.mark.escalation_gate({str(folders["middling"])!r}, max_p_u=0.05, undecided="xfail")
        def test_middling_xfail():
            pass

        def test_the_gated_bodies_ran_only_when_the_gate_passed():
            assert ran == ["good"]
    """)
    result = inner.runpytest("-p", PLUGIN, "-rA")
    result.assert_outcomes(passed=2, failed=1, skipped=1, xfailed=1)
    method = choose_interval(100, False).method  # auto on the folders' 100 single-conversation scenarios
    result.stdout.fnmatch_lines(["*escalation gate: fail (95% intervals, auto)*",
                                 f"*p_u <= 0.05: fail (lower bound * > 0.05)*estimate 0.3000, interval (*) ({method})"])
    result.stdout.fnmatch_lines(["*SKIPPED*escalation gate: undecided*"])


def test_the_fixture_returns_gate_json_and_fails_on_bad_input(inner, folders):
    inner.makepyfile(f"""
        def test_returns_the_decision(escalation_gate):
            result = escalation_gate({str(folders["log"])!r}, policy={str(folders["policy"])!r}, max_p_u=0.5,
                                     against={str(folders["good"])!r}, max_worse=0.5)
            assert result["decision"] == "pass" and result["exit_code"] == 0
            assert [c["criterion"] for c in result["criteria"]] == ["p_u <= 0.5", "p_u difference <= 0.5"]

        def test_a_log_without_its_policy(escalation_gate):
            escalation_gate({str(folders["log"])!r}, max_p_u=0.05)

        def test_a_misspelt_option(escalation_gate):
            escalation_gate({str(folders["good"])!r}, max_pu=0.05)
    """)
    result = inner.runpytest("-p", PLUGIN)
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*is a log, not a folder of `escalation score --out`*"])
    result.stdout.fnmatch_lines(["*escalation_gate got 'max_pu'; it takes policy, max_p_u*"])


def test_the_ini_option_makes_an_undecided_gate_fail_and_relative_paths_read_from_the_root(inner, folders):
    inner.makeini("[pytest]\nescalation_gate_undecided = fail\n")
    scored = inner.path / "scored"
    scored.mkdir()
    (scored / "middling").symlink_to(folders["middling"], target_is_directory=True)
    inner.makepyfile("""
        import pytest

        @pytest.mark.escalation_gate("scored/middling", max_p_u=0.05)
        def test_middling():
            pass
    """)
    result = inner.runpytest("-p", PLUGIN, "--junitxml=report.xml")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*escalation gate: undecided*"])
    assert 'name="escalation_gate" value="undecided"' in (inner.path / "report.xml").read_text()
