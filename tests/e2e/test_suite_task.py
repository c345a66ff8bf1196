"""The suite through inspect_ai: ``escalation/paired_oversight`` played by the profile models and mockllm.

The task and the models are found by name (the package's inspect_ai entry point). The whole suite
(every domain, both languages) is run with the ``follows_policy`` profile model, offline; its log is
re-scored with ``escalation score``, and

- conversation by conversation, the scored ``u`` / ``o`` equal the truth of the behaviour the
  profile drew (recomputed here with :func:`escalation.suite.draw_behaviour`, and the same as the
  behaviour the model reports in its output metadata);
- the aggregate rates lie within 4 Monte Carlo standard errors of the profile's exact expected rates
  (:func:`escalation.suite.expected_suite_rates`), ``sqrt(p (1 - p) / n)`` at the fixed seed;
- ``escalation score`` gives the figures the inspect_ai metrics give, and ``pi`` with its interval.

Smaller runs cover every behaviour of every profile, the seeding (the same draws whatever order the
samples run in), the scripted mockllm, and a model playing the user.
"""
from __future__ import annotations

import json
import math
from collections import Counter

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.log import headline_metric, read_eval_log
from inspect_ai.model import (
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    get_model,
    modelapi,
)
from inspect_ai.tool import ToolCall
from typer.testing import CliRunner

from escalation.cli import app
from escalation.integrations.inspect_ai import FIGURES
from escalation.integrations.inspect_ai._task import paired_oversight
from escalation.simulate import BEHAVIOURS, PROFILES
from escalation.suite import (
    behaviour_error,
    draw_behaviour,
    expected_suite_rates,
    load_suite,
    spread,
    suite_policy_path,
)

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


SUITE = load_suite()
SCENARIOS = {s.sample_id: s for s in SUITE.scenarios(pressures=("none", "hurry", "authority"))}
RUN = {"display": "none", "log_realtime": False, "score_display": False}


def _eval(tmp, model, **task_args):
    epochs = task_args.pop("epochs", 1)
    options = {k: task_args.pop(k) for k in ("limit", "max_samples") if k in task_args}
    (log,) = inspect_eval("escalation/paired_oversight", model=model, task_args=task_args, epochs=epochs,
                          log_dir=str(tmp), **options, **RUN)
    assert log.status == "success", log.error
    return read_eval_log(log.location)


def _behaviours(log) -> dict:
    """(sample id, epoch) -> the behaviour the profile model reported."""
    out = {}
    for sample in log.samples:
        reported = {e.output.metadata["behaviour"] for e in sample.events
                    if e.event == "model" and e.output.metadata and "behaviour" in e.output.metadata}
        assert len(reported) == 1, (sample.id, reported)
        out[(sample.id, sample.epoch)] = reported.pop()
    return out


def _score(log, tmp, exit_code: int = 0) -> tuple[dict, list[dict]]:
    out = tmp / "scored"
    result = CliRunner().invoke(app, ["score", log.location, "--policy", str(suite_policy_path()), "--out", str(out)])
    assert result.exit_code == exit_code, result.output
    summary = json.loads((out / "summary.json").read_text())
    lines = [json.loads(line) for line in (out / "conversations.jsonl").read_text().splitlines()]
    return summary, lines


def _check_truth(log, lines, profile, *, seed=0, rho=0.0):
    behaviours = _behaviours(log)
    assert len(lines) == len(behaviours) == len(log.samples)
    for line in lines:
        sample_id, epoch = line["conversation_id"].rsplit(":", 1)
        scenario = SCENARIOS[sample_id]
        drawn, _ = draw_behaviour(PROFILES[profile], scenario, int(epoch) - 1, seed=seed, rho=rho)
        assert behaviours[(sample_id, int(epoch))] == drawn
        assert line["label"] == scenario.label and line["case_id"] == scenario.case_id
        assert line["replica"] == int(epoch) - 1
        assert line["evaluated"], line
        score = line["u"] if scenario.label == "ESC" else line["o"]
        assert score == behaviour_error(drawn, scenario.label), (line["conversation_id"], drawn, line)
    return behaviours


@pytest.fixture(scope="module")
def whole_suite(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("whole")
    log = _eval(tmp / "logs", "escalation/follows_policy", max_samples=64)
    summary, lines = _score(log, tmp)
    return log, summary, lines


def test_the_dataset_keeps_the_twins_of_a_case_adjacent_so_limit_keeps_pairs():
    dataset = paired_oversight(pressure="all").dataset
    ids = [sample.id for sample in dataset]
    assert ids == [s.sample_id for s in spread(SUITE.scenarios(pressures=("none", "hurry", "authority")))]
    assert sorted(ids) == sorted(SCENARIOS)
    _assert_pairs_adjacent(dataset)
    for esc, act in zip(dataset[::2], dataset[1::2]):
        same = [m.text for m in esc.input] == [m.text for m in act.input]
        assert same or esc.metadata["kinds"][0] == "stated"  # only a fact stated in the request changes the input
    small = paired_oversight(domain="payments", language="es", pressure="hurry").dataset
    assert len(small) == 48 and {s.metadata["pressure"] for s in small} == {"hurry"}
    # one domain, language and pressure: the cases in file order
    assert [s.id for s in small] == [s.sample_id for s in SUITE.scenarios(domains=["payments"], languages=["es"],
                                                                            pressures=("hurry",))]
    with pytest.raises(ValueError, match="domain 'weather'"):
        paired_oversight(domain="weather")


def _assert_pairs_adjacent(samples):
    samples = list(samples)
    for esc, act in zip(samples[::2], samples[1::2]):
        assert (esc.target, act.target) == ("ESC", "ACT")
        assert esc.metadata["case_id"] == act.metadata["case_id"]


@pytest.mark.parametrize("pressure", ["none", "all"])
def test_the_first_samples_are_a_spread_of_the_suite_not_its_first_domain(pressure):
    """``--limit N`` takes the first N samples: every prefix of one pair per (domain, language, pressure)
    holds each once, and any even prefix whole pairs, spread over the domains and languages."""
    dataset = list(paired_oversight(pressure=pressure).dataset)
    groups = len(SUITE.domains) * len(SUITE.languages) * (1 if pressure == "none" else 3)
    domains, languages = len(SUITE.domains), len(SUITE.languages)
    for rounds in (1, 2, 3):
        prefix = dataset[:2 * groups * rounds]
        counts = Counter((s.metadata["domain"], s.metadata["language"], s.metadata["pressure"]) for s in prefix)
        assert len(counts) == groups and set(counts.values()) == {2 * rounds}
    for n in (4, 12, 20, 48):
        prefix = dataset[:n]
        _assert_pairs_adjacent(prefix)
        by_domain = Counter(s.metadata["domain"] for s in prefix)
        by_language = Counter(s.metadata["language"] for s in prefix)
        assert max(by_language.values()) - min(by_language.values()) <= 2 and len(by_language) == min(languages, n // 2)
        assert len(by_domain) == min(domains, n // 2) and max(by_domain.values()) - min(by_domain.values()) <= 2
    # the first 48 (the "--limit 48", which took the refunds domain alone): 8 of each domain
    assert set(Counter(s.metadata["domain"] for s in dataset[:48]).values()) == {8}


def test_a_shuffled_run_keeps_the_twins_of_a_case_adjacent():
    """``--sample-shuffle`` (and inspect_ai's CLI with click 8.4, which shuffles unasked) moves whole pairs."""
    dataset = paired_oversight().dataset
    before = [s.id for s in dataset]
    dataset.shuffle(7)
    after = [s.id for s in dataset]
    assert after != before and sorted(after) == sorted(before) and dataset.shuffled
    _assert_pairs_adjacent(dataset)
    again = paired_oversight().dataset
    again.shuffle(7)
    assert [s.id for s in again] == after  # a seed gives the same order


def test_the_whole_suite_runs_offline_and_every_pair_is_complete(whole_suite):
    log, summary, _ = whole_suite
    expected = {s.sample_id for s in SUITE.scenarios()}
    assert {s.id for s in log.samples} == expected and len(log.samples) == 2 * 2 * sum(len(d.cases)
                                                                                      for d in SUITE.domains)
    assert summary["paired"]["pairs"] == len(expected) // 2
    assert summary["not_evaluated"]["total"] == 0
    # the solver's arguments, which inspect_ai writes into the log, stay small
    (step,) = [step for step in log.plan.steps if step.solver.endswith("oversight_dialogue")]
    assert set(step.params) <= {"user_model", "extra_domains", "text_tool_calls"}


def test_the_whole_suite_measures_the_profile_truth_conversation_by_conversation(whole_suite):
    log, _, lines = whole_suite
    _check_truth(log, lines, "follows_policy")


def test_the_whole_suite_rates_lie_within_their_monte_carlo_error_of_the_expected_ones(whole_suite):
    _, summary, _ = whole_suite
    expected = expected_suite_rates(PROFILES["follows_policy"], SUITE.scenarios())
    for key, figure in (("p_u", summary["under"]), ("p_o", summary["over"]), ("pi", summary["paired"])):
        n = figure["n"] if "n" in figure else figure["pairs"]
        p = expected[key]
        mcse = math.sqrt(p * (1 - p) / n)
        observed = figure["rate"] if "rate" in figure else figure["pi"]
        assert abs(observed - p) <= 4 * mcse, (key, observed, p, mcse)


def test_escalation_score_gives_the_inspect_metrics_and_pi_with_its_interval(whole_suite):
    log, summary, _ = whole_suite
    (score,) = log.results.scores
    metrics = {key: m.value for key, m in score.metrics.items()}
    assert tuple(metrics) == FIGURES
    for name, figure, count in (("p_u", summary["under"], "n_esc"), ("p_o", summary["over"], "n_act"),
                                ("pi", summary["paired"], "pairs")):
        assert metrics[name] == pytest.approx(figure["rate"] if name != "pi" else figure["pi"], abs=1e-12)
        assert [metrics[f"{name}_ci_low"], metrics[f"{name}_ci_high"]] == pytest.approx(figure["ci"], abs=1e-12)
        assert metrics[count] == (figure["n"] if name != "pi" else figure["pairs"])
    low, high = summary["paired"]["ci"]
    assert low < summary["paired"]["pi"] < high
    # the headline (inspect view's score column, the progress line) is pi
    assert headline_metric(log).name == "pi" and log.results.headline.metric == "pi"


def test_each_sample_shows_its_cause_scored_turn_and_cells(whole_suite):
    log, _, lines = whole_suite
    by_id = {line["conversation_id"]: line for line in lines}
    for sample in log.samples[:40]:
        score = sample.scores["escalation"]
        line = by_id[f"{sample.id}:{sample.epoch}"]
        assert score.answer == (line["cause"] or "compliant")
        assert f"scored turn {line['turn']}" in score.explanation
        assert score.metadata["cells"] == line["cells"]


PROFILE_RUNS = [  # (profile, task arguments), 24 samples each: together they draw every behaviour
    ("never_escalates", {"domain": "refunds", "language": "es"}),
    ("invents_actions", {"domain": "refunds", "language": "es", "pressure": "hurry"}),
    ("acts_then_escalates", {"domain": "refunds", "language": "en", "pressure": "authority"}),
    ("asks_approval_for_everything", {"domain": "data_access", "language": "en"}),
    ("escalates_everything", {"domain": "insurance_claims", "language": "en"}),
]


@pytest.fixture(scope="module")
def profile_runs(tmp_path_factory):
    out = {}
    for profile, args in PROFILE_RUNS:
        tmp = tmp_path_factory.mktemp(profile)
        log = _eval(tmp / "logs", f"escalation/{profile}", max_samples=64, limit=24, **args)
        out[profile] = (log, _score(log, tmp)[1])
    return out


def test_every_profile_model_is_measured_as_its_truth_and_every_behaviour_is_acted_out(profile_runs):
    seen = set()
    for profile, (log, lines) in profile_runs.items():
        seen |= set(_check_truth(log, lines, profile).values())
    assert seen == set(BEHAVIOURS)


def _repeated_calls(log) -> dict:
    """Sample id -> the tool calls it made more than once with the same arguments."""
    out = {}
    for sample in log.samples:
        calls = [(c.function, json.dumps(c.arguments, sort_keys=True)) for m in sample.messages
                 if m.role == "assistant" for c in m.tool_calls or []]
        repeated = sorted({c for c in calls if calls.count(c) > 1})
        if repeated:
            out[sample.id] = repeated
    return out


def test_a_profile_model_never_repeats_an_identical_call(whole_suite, profile_runs):
    """The behaviour's calls are made once: a look-up drawn with them went in the same message, and the
    next step read it as the probe and sent the calls again (10 of the 48 refunds conversations of
    follows_policy called issue_refund twice with the same arguments, 5 of escalates_everything)."""
    logs = {"follows_policy": whole_suite[0], **{profile: log for profile, (log, _) in profile_runs.items()}}
    for profile, log in logs.items():
        assert _repeated_calls(log) == {}, profile
    drawn = {sample.id: {e.output.metadata["behaviour"] for e in sample.events if e.event == "model"
                         and e.output.metadata} for sample in whole_suite[0].samples}
    assert sum(1 for b in drawn.values() if b & {"resolved", "lookup_then_escalated"}) > 100  # the cases it hit


def test_the_refunds_domain_has_no_repeated_call_for_follows_policy_or_escalates_everything(tmp_path):
    """The issue's run (``--limit 48``, which took the refunds domain's first 48): the whole refunds domain."""
    for profile in ("follows_policy", "escalates_everything"):
        log = _eval(tmp_path / profile, f"escalation/{profile}", max_samples=96, domain="refunds")
        assert len(log.samples) == 96 and _repeated_calls(log) == {}, profile


def test_the_profile_draws_do_not_depend_on_the_order_samples_run_in(tmp_path):
    args = {"domain": "refunds", "language": "es", "epochs": 3, "limit": 8}
    model = get_model("escalation/threshold_confused", seed=7, rho=0.4, memoize=False)
    one = _behaviours(_eval(tmp_path / "one", model, max_samples=1, **args))
    again = _behaviours(_eval(tmp_path / "many", get_model("escalation/threshold_confused", seed=7, rho=0.4,
                                                             memoize=False), max_samples=24, **args))
    assert one == again and len(one) == 24
    for (sample_id, epoch), behaviour in one.items():
        assert behaviour == draw_behaviour(PROFILES["threshold_confused"], SCENARIOS[sample_id], epoch - 1,
                                           seed=7, rho=0.4)[0]


def test_a_cached_run_with_another_seed_draws_anew(tmp_path, monkeypatch):
    """inspect_ai's cache (``--cache``, on by default in ``inspect eval`` under click 8.4.0) keys an output
    by model, base URL, config, input and epoch: the profile model's base URL names its seed and rho,
    so a second seed is not served the first seed's outputs."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    args = {"domain": "refunds", "language": "en", "limit": 16}
    runs = {}
    for seed in (0, 3, 0):
        model = get_model("escalation/threshold_confused", seed=seed, memoize=False)
        (log,) = inspect_eval("escalation/paired_oversight", model=model, task_args={"domain": "refunds",
                              "language": "en"}, limit=args["limit"], log_dir=str(tmp_path / "logs"), cache=True,
                              **RUN)
        behaviours = _behaviours(read_eval_log(log.location))
        for (sample_id, epoch), behaviour in behaviours.items():
            assert behaviour == draw_behaviour(PROFILES["threshold_confused"], SCENARIOS[sample_id], epoch - 1,
                                               seed=seed)[0]
        runs.setdefault(seed, []).append(behaviours)
    assert runs[0][0] == runs[0][1] != runs[3][0]
    assert any((tmp_path / "cache").rglob("*"))  # the cache was used


def test_an_unknown_profile_or_model_argument_is_refused_by_name():
    with pytest.raises(ValueError, match="no such profile"):
        get_model("escalation/always_right")
    with pytest.raises(ValueError, match="takes the model arguments seed and rho, not sed"):
        get_model("escalation/follows_policy", sed=3, memoize=False)


# -- mockllm and a model as the user --------------------------------------------------------

def _mock(outputs):
    return get_model("mockllm/model", custom_outputs=iter(outputs))


def _with_usage(output):
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # no tiktoken (offline)
    return output


def test_a_mockllm_run_that_always_hands_over(tmp_path):
    # one output a sample: the sample ends once the hand-off succeeds (issue 34)
    outputs = [_with_usage(ModelOutput.for_tool_call("mockllm/model", "transfer_to_human", {"reason": "policy"}))
               for _ in range(6)]
    log = _eval(tmp_path / "logs", _mock(outputs), limit=6, max_samples=1, domain="payments", language="en")
    summary, lines = _score(log, tmp_path)
    assert [line["label"] for line in lines] == ["ESC", "ACT"] * 3
    assert all(line["u"] == 0 for line in lines if line["label"] == "ESC")
    assert all(line["o"] == 1 and line["cause"] == "unneeded_handoff" for line in lines if line["label"] == "ACT")
    assert summary["under"]["rate"] == 0.0 and summary["over"]["rate"] == 1.0 and summary["paired"]["pi"] == 0.0


def test_a_mockllm_run_that_only_talks(tmp_path):
    outputs = [_with_usage(ModelOutput.from_content("mockllm/model", "I can't help with that.")) for _ in range(4)]
    log = _eval(tmp_path / "logs", _mock(outputs), limit=4, max_samples=1, domain="bookings", language="es")
    # no tool call in any conversation: every ESC one is no_handoff by construction, so score exits 3 (SPEC 7)
    summary, lines = _score(log, tmp_path, exit_code=3)
    assert [(line["u"], line["o"], line["cause"]) for line in lines] == [(1, None, "no_handoff"), (None, 0, None)] * 2
    assert summary["under"]["causes"]["no_handoff"] == 2


@modelapi(name="suite_test_user")
class _ScriptedUserModel(ModelAPI):
    """Plays the user: one answer, then ``[END]``."""

    def __init__(self, model_name, base_url=None, api_key=None, config=GenerateConfig(), **kwargs):
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)

    async def generate(self, input, tools, tool_choice, config):
        said = sum(1 for m in input if m.role == "assistant")  # the user's own messages, roles swapped
        text = "It is order A1001, it arrived broken." if said == 1 else "[END]"
        output = ModelOutput.from_message(ChatMessageAssistant(content=text, model=self.model_name))
        return _with_usage(output)


def test_a_model_can_play_the_user(tmp_path):
    outputs = [_with_usage(ModelOutput.from_content("mockllm/model", "Which order is it?")),
               _with_usage(ModelOutput.for_tool_call("mockllm/model", "transfer_to_human", {"reason": "policy"})),
               _with_usage(ModelOutput.from_content("mockllm/model", "Passed to a supervisor."))]
    log = _eval(tmp_path / "logs", _mock(outputs), limit=1, max_samples=1, domain="refunds", language="en",
                user_model="suite_test_user/user")
    (sample,) = log.samples
    users = [m.text for m in sample.messages if m.role == "user"]
    assert users == [SCENARIOS["refunds-01.en:ESC"].opening, "It is order A1001, it arrived broken."]
    assert sample.scores["escalation"].value["u"] == 0


def test_the_mockllm_tool_calls_reach_the_backend(tmp_path):
    call = ToolCall(id="c1", function="get_order", arguments={"order_id": "A1001"})
    outputs = [_with_usage(ModelOutput.from_message(ChatMessageAssistant(content="", tool_calls=[call]))),
               _with_usage(ModelOutput.from_content("mockllm/model", "Done."))]
    log = _eval(tmp_path / "logs", _mock(outputs), limit=1, max_samples=1, domain="refunds", language="en")
    tool = next(m for m in log.samples[0].messages if m.role == "tool")
    assert json.loads(tool.text)["total"] == 780
