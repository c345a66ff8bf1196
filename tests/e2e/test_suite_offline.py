"""The suite offline, as a user runs it: ``inspect eval escalation/paired_oversight`` on the project's
profile models and on inspect_ai's ``mockllm/model``.

Every run here is cut off from the network whatever machine runs it: the proxies point at a closed
port of the loopback address and tiktoken's cache at an empty folder, so a download fails at once.

- The profile models (``escalation/<profile>``) need nothing: the ``inspect eval`` command runs them
  with every sample scored; its terminal display at 80 columns shows the metric names whole, ``pi``
  first; the log's headline is ``pi``, which ranks ``follows_policy`` above ``escalates_everything``
  (whose ``p_u`` is 0, the headline before); and no "'initial' parameter is deprecated" warning is
  printed even with DeprecationWarnings shown.
- ``mockllm/model`` from the command line counts tokens with tiktoken's ``o200k_base`` encoding, which
  tiktoken downloads: offline every sample fails and ``inspect eval`` still exits 0. With the encoding
  in ``TIKTOKEN_CACHE_DIR`` (the README's way: the file that the litellm wheel ships) it runs; that
  half needs the file, found in ``$TIKTOKEN_CACHE_DIR`` or an installed litellm, and is skipped
  without it. From Python, outputs that carry their usage need no encoding.
- ``-T approval=inline`` from the command line: inspect_ai puts each gated call to the task's ``supervisor``
  approver, which approves or rejects it as the case says (:func:`escalation.suite.approval_truth`).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import anyio
import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import headline_metric, read_eval_log
from inspect_ai.model import ChatMessageUser, ModelOutput, ModelUsage, get_model

from escalation.integrations.inspect_ai import FIGURES
from escalation.suite import SUITE_PROFILES, approval_truth, draw_approval, draw_behaviour, load_suite

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'

#: tiktoken's URL of the encoding that inspect_ai counts tokens with, its cache file name (the SHA-1 of
#: the URL) and the SHA-256 that tiktoken checks the file against (tiktoken_ext/openai_public.py).
O200K_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
O200K_FILE = "fb374d419588a4632f3f557e76b4b70aebbca790"
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
RETRY_WARNING = "'initial' parameter is deprecated"
PROFILES = ("follows_policy", "escalates_everything")


def test_the_cache_file_name_is_the_sha1_of_the_url():
    assert hashlib.sha1(O200K_URL.encode()).hexdigest() == O200K_FILE
    import tiktoken_ext.openai_public as public
    source = Path(public.__file__).read_text()
    assert O200K_URL in source and O200K_SHA256 in source  # the tiktoken installed reads that file


def _offline_env(tmp: Path, **extra) -> dict:
    """The environment of an offline run: any download fails at once, and inspect_ai's cache of model
    outputs (on by default in ``inspect eval`` under click 8.4.0) is a new folder."""
    empty = tmp / "tiktoken-cache"
    empty.mkdir(exist_ok=True)
    closed = "http://127.0.0.1:9"  # the discard port of the loopback address: nothing listens there
    env = {k: v for k, v in os.environ.items() if k.upper() not in ("NO_PROXY", "TIKTOKEN_CACHE_DIR")}
    env.update(HTTP_PROXY=closed, HTTPS_PROXY=closed, ALL_PROXY=closed, http_proxy=closed, https_proxy=closed,
               TIKTOKEN_CACHE_DIR=str(empty), INSPECT_CACHE_DIR=str(tmp / "inspect-cache"), COLUMNS="80",
               INSPECT_DISPLAY="full", NO_COLOR="1", PYTHONWARNINGS="default::DeprecationWarning")
    env.update(extra)
    return env


def _inspect_eval(tmp: Path, model: str, limit: int, env: dict,
                  *options: str) -> tuple[subprocess.CompletedProcess, list]:
    """``inspect eval escalation/paired_oversight --model MODEL --limit N [OPTIONS]`` (in suite order), and its
    logs."""
    logs = tmp / "logs"
    done = subprocess.run([sys.executable, "-m", "inspect_ai", "eval", "escalation/paired_oversight", "--model", model,
                           "--limit", str(limit), "--sample-shuffle", "false", "--log-dir", str(logs),
                           "--max-samples", "20", *options],
                          capture_output=True, text=True, env=env, timeout=600, cwd=tmp)
    return done, [read_eval_log(str(p)) for p in sorted(logs.glob("*.eval"))]


@pytest.fixture(scope="module")
def profile_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("profiles")
    return _inspect_eval(tmp, ",".join(f"escalation/{p}" for p in PROFILES), 20, _offline_env(tmp))


def test_the_profile_models_run_offline_through_inspect_eval(profile_run):
    done, logs = profile_run
    assert done.returncode == 0, done.stdout + done.stderr
    assert sorted(log.eval.model for log in logs) == sorted(f"escalation/{p}" for p in PROFILES)
    for log in logs:
        assert log.status == "success" and len(log.samples) == 20
        assert not [s.id for s in log.samples if s.error], log.eval.model
        assert all(s.scores["escalation"].metadata["evaluated"] for s in log.samples)


def test_the_headline_is_pi_and_ranks_escalating_everything_below_following_the_policy(profile_run):
    _, logs = profile_run
    figures = {log.eval.model.split("/")[1]: {k: m.value for k, m in log.results.scores[0].metrics.items()}
               for log in logs}
    for log in logs:
        resolved = headline_metric(log)  # what inspect view shows in its log list's score column
        assert (resolved.name, log.results.headline.metric) == ("pi", "pi")
        assert tuple(log.results.scores[0].metrics) == FIGURES  # pi first: also the headline by convention
        assert figures[log.eval.model.split("/")[1]]["pairs"] == 10  # --limit 20: ten whole pairs
    # both hand over every ESC case in time, so p_u (the headline before) is 0 for both
    assert figures["follows_policy"]["p_u"] == figures["escalates_everything"]["p_u"] == 0.0
    assert figures["follows_policy"]["pi"] >= 0.9 > 0.5 >= figures["escalates_everything"]["pi"]
    assert figures["escalates_everything"]["p_o"] >= 0.5


def test_the_terminal_display_fits_80_columns_with_whole_metric_names(profile_run):
    done, logs = profile_run
    shown = done.stdout
    assert "…" not in shown and "escalation_rate" not in shown, shown
    assert all(len(line) <= 80 for line in shown.splitlines()), shown
    for log in logs:
        metrics = log.results.scores[0].metrics
        for name in FIGURES:  # each name whole, beside its value as the display rounds it
            assert re.search(rf"^{name}\s+{metrics[name].value:.3f}\s*$", shown, re.M), (name, shown)


def test_no_inspect_retry_deprecation_warning_is_printed(profile_run):
    """Shown DeprecationWarnings (PYTHONWARNINGS=default::DeprecationWarning) and still none of inspect_ai's
    tenacity call: the task filters it where the project calls a model."""
    done, _ = profile_run
    assert RETRY_WARNING not in done.stdout + done.stderr


def test_inspect_ai_warns_on_a_model_call_outside_the_task_and_not_in_it(tmp_path):
    """The control: a model call of one's own warns (inspect_ai's tenacity call); the task's do not, in
    ``inspect_ai.eval`` as in the command."""
    output = ModelOutput.from_content("mockllm/model", "hi")
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no token count: no tiktoken
    mock = get_model("mockllm/model", custom_outputs=[output], memoize=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        anyio.run(mock.generate, [ChatMessageUser(content="hi")])
    assert any(RETRY_WARNING in str(w.message) for w in caught)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (log,) = inspect_eval("escalation/paired_oversight", model="escalation/follows_policy", limit=4,
                              log_dir=str(tmp_path), display="none")
    assert log.status == "success"
    assert not [w for w in caught if RETRY_WARNING in str(w.message)]


def test_the_inline_approval_design_runs_from_the_command_line(tmp_path):
    """The first 20 samples hold three gated pairs, one of them (refunds-13) a denied approval, which the
    profile asks for and acts on anyway: the supervisor rejects exactly the gated calls the case does not allow."""
    done, (log,) = _inspect_eval(tmp_path, "escalation/defies_denials", 20, _offline_env(tmp_path), "-T",
                                 "approval=inline")
    assert done.returncode == 0 and log.status == "success", done.stdout + done.stderr
    scenarios = {s.sample_id: s for s in load_suite().scenarios()}
    profile = SUITE_PROFILES["defies_denials"]
    decided, expected = [], []
    for sample in log.samples:
        decided += [(sample.id, e.decision) for e in sample.events
                    if e.event == "approval" and e.approver == "escalation/supervisor"]
        scenario = scenarios[sample.id]
        truth = approval_truth(draw_behaviour(profile, scenario, 0)[0], draw_approval(profile, scenario, 0), scenario,
                               inline=True)
        expected += [(sample.id, "approve" if status == "approved" else "reject") for status in truth]
    assert decided == expected and ("refunds-13.es:ACT", "reject") in decided and any(
        d == "approve" for _, d in decided)


# -- mockllm/model ----------------------------------------------------------------------------

def _o200k_folder() -> Path | None:
    """A folder holding tiktoken's o200k_base cache file (checked): ``$TIKTOKEN_CACHE_DIR``, or the
    tokenizers folder that an installed litellm ships; None without one."""
    candidates = [os.environ.get("TIKTOKEN_CACHE_DIR")]
    spec = importlib.util.find_spec("litellm")  # finds, does not import
    if spec is not None and spec.origin:
        candidates.append(str(Path(spec.origin).parent / "litellm_core_utils" / "tokenizers"))
    for folder in filter(None, candidates):
        path = Path(folder) / O200K_FILE
        if path.is_file() and hashlib.sha256(path.read_bytes()).hexdigest() == O200K_SHA256:
            return Path(folder)
    return None


def test_mockllm_from_the_command_line_fails_offline_without_the_encoding(tmp_path):
    """The issue's finding: every sample fails on tiktoken's download of o200k_base, and the command exits 0."""
    done, (log,) = _inspect_eval(tmp_path, "mockllm/model", 2, _offline_env(tmp_path))
    assert done.returncode == 0
    assert log.status == "error" and not log.samples or all(s.error for s in log.samples)
    assert "o200k_base.tiktoken" in (log.error.message if log.error else "") + "".join(
        s.error.message for s in log.samples or [] if s.error)


@pytest.mark.skipif(_o200k_folder() is None, reason="needs tiktoken's o200k_base file: set TIKTOKEN_CACHE_DIR to a "
                    "folder holding it, or install litellm, whose wheel ships it (README, offline runs)")
def test_mockllm_from_the_command_line_runs_offline_with_the_encoding_in_tiktoken_cache_dir(tmp_path):
    folder = _o200k_folder()
    done, (log,) = _inspect_eval(tmp_path, "mockllm/model", 4,
                                 _offline_env(tmp_path, TIKTOKEN_CACHE_DIR=str(folder)))
    assert done.returncode == 0, done.stdout + done.stderr
    assert log.status == "success" and len(log.samples) == 4 and not [s for s in log.samples if s.error]
    # it only talks ("Default output from mockllm/model"): every ESC case no_handoff, every ACT one compliant
    assert {s.scores["escalation"].metadata["cause"] for s in log.samples if s.target == "ESC"} == {"no_handoff"}


def test_mockllm_from_python_needs_no_encoding_when_its_outputs_carry_their_usage(tmp_path):
    """The other way, from Python: an output with ``usage`` set skips mockllm's token count, so tiktoken is
    never called (made to fail here)."""
    import tiktoken

    def refuse(*args, **kwargs):
        raise AssertionError("tiktoken was called")

    def talk(*generate_args) -> ModelOutput:  # custom_outputs may be a function of generate's arguments
        output = ModelOutput.from_content("mockllm/model", "I can't help with that.")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tiktoken, "get_encoding", refuse)
        patch.setattr(tiktoken, "encoding_for_model", refuse)
        (log,) = inspect_eval("escalation/paired_oversight", model=get_model("mockllm/model", custom_outputs=talk),
                              limit=4, log_dir=str(tmp_path), display="none")
    assert log.status == "success" and len(log.samples) == 4 and not [s for s in log.samples if s.error]
