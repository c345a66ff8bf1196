"""A pytest plugin that gates a test on an assistant's oversight figures: ``escalation gate`` from a test.

Installed with escalation (the ``pytest11`` entry point ``escalation_gate``), it adds a marker and a
fixture that run ``escalation gate`` (docs/tutorials/gate-a-release.md) on a scored folder or a log:

.. code-block:: python

    import pytest

    @pytest.mark.escalation_gate("scored/candidate", max_p_u=0.05, max_p_o=0.2)
    def test_the_release_keeps_its_hand_offs():
        ...  # runs only when the gate passes

    def test_no_worse_than_the_last_release(escalation_gate):
        result = escalation_gate("runs/candidate.eval", policy="policy.toml", max_p_u=0.05,
                                 against="scored/release-1.4", max_worse=0.0)
        assert result["decision"] == "pass"  # gate.json, as a dict

The keywords are the command's options, ``_`` for ``-`` (``max_p_u`` is ``--max-p-u``); relative paths
are read from pytest's root folder. A **fail** fails the test with the criteria that failed and their
bounds; an **undecided** gate skips it (``undecided="xfail"`` marks it xfail, ``undecided="fail"`` fails
it; the ini option ``escalation_gate_undecided`` sets the default); bad input (a missing folder, a log
without ``policy``) fails it with the command's one-line error. The decision is also added to the test's
``user_properties`` (pytest's JUnit XML shows it).

The gate runs as its own process (``python -m escalation gate ... --json``): the decision is the command's,
and nothing of escalation is imported into the test session until a gate runs.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["OPTIONS", "UNDECIDED_OUTCOMES", "GateFailed", "run_gate"]

#: The keywords of the marker and the fixture: each is the option of ``escalation gate`` of that name.
OPTIONS = ("policy", "max_p_u", "max_p_o", "min_pi", "max_p_a", "against", "max_worse", "interval", "confidence",
           "look", "of", "out", "junit", "markdown")
#: What an undecided gate does to the test.
UNDECIDED_OUTCOMES = ("skip", "xfail", "fail")
_PATHS = ("policy", "against", "out", "junit", "markdown")


class GateFailed(Exception):
    """``escalation gate`` refused its input (exit code 2): the message is its one-line error."""


def _arguments(target, root: Path, options: dict) -> list[str]:
    """The command line of ``escalation gate`` for ``target`` and ``options`` (relative paths from ``root``)."""
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise TypeError(f"escalation_gate got {', '.join(map(repr, unknown))}; it takes {', '.join(OPTIONS)} "
                        "(the options of escalation gate, _ for -)")
    if options.get("max_p_u") is None:
        raise TypeError("escalation_gate needs max_p_u (--max-p-u: the most under-escalation allowed)")

    def path(value) -> str:
        value = Path(value)
        return str(value if value.is_absolute() else root / value)

    arguments = [path(target)]
    for name in OPTIONS:
        value = options.get(name)
        if value is not None:
            arguments += [f"--{name.replace('_', '-')}", path(value) if name in _PATHS else str(value)]
    return arguments


def run_gate(target, *, root=".", **options) -> dict:
    """Run ``escalation gate TARGET`` with ``options`` and return its gate.json, as a dict.

    Parameters
    ----------
    target : path
        A scored folder (``escalation score --out``) or a log (with ``policy``).
    root : path
        The folder relative paths are read from.
    **options
        The options of ``escalation gate`` (:data:`OPTIONS`), ``_`` for ``-``: ``max_p_u=0.05`` is
        ``--max-p-u 0.05``.

    Returns
    -------
    dict
        gate.json: ``decision`` (``pass``, ``fail`` or ``undecided``), ``exit_code``, ``criteria``...

    Raises
    ------
    GateFailed
        When the command refused its input (exit code 2), with its error.
    """
    arguments = _arguments(target, Path(root), options)
    done = subprocess.run([sys.executable, "-m", "escalation", "gate", *arguments, "--json"], capture_output=True,
                          text=True, encoding="utf-8", check=False)
    if done.returncode not in (0, 1, 4):
        error = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise GateFailed(f"escalation gate {' '.join(arguments)}: {error}")
    return json.loads(done.stdout)


def describe(result: dict) -> str:
    """The criteria of a gate.json, one a line: the rule, the decision, why, the estimate and its interval."""
    level = f"{result['confidence'] * 100:.4g}%"
    lines = [f"escalation gate: {result['decision']} ({level} intervals, {result['interval']})"]
    for c in result["criteria"]:
        low, high = c["ci"]
        interval = "n/a" if low is None else f"({low:.4f}, {high:.4f})"
        estimate = "n/a" if c["estimate"] is None else f"{c['estimate']:.4f}"
        method = f" ({c['interval']})" if c.get("interval") and c["interval"] != result["interval"] else ""
        lines.append(f"  {c['criterion']}: {c['decision']} ({c['reason']}); estimate {estimate}, interval "
                     f"{interval}{method}")
    lines += [f"  note: {note}" for note in result.get("notes", [])]
    return "\n".join(lines)


def _outcome(result: dict, undecided: str) -> None:
    """Fail, skip or xfail the running test as the gate decided; nothing when it passed."""
    if result["decision"] == "fail":
        pytest.fail(describe(result), pytrace=False)
    if result["decision"] == "undecided":
        text = describe(result)
        if undecided == "fail":
            pytest.fail(text, pytrace=False)
        if undecided == "xfail":
            pytest.xfail(text)
        pytest.skip(text)


def _undecided(config, given) -> str:
    value = given if given is not None else (config.getini("escalation_gate_undecided") or "skip")
    if value not in UNDECIDED_OUTCOMES:
        raise pytest.UsageError(f"escalation_gate: undecided must be one of {', '.join(UNDECIDED_OUTCOMES)}; "
                                f"got {value!r}")
    return value


def _gate(item, target, undecided, options) -> dict:
    """Run the gate for ``item``; its decision in the test's user_properties; bad input fails the test."""
    try:
        result = run_gate(target, root=item.config.rootpath, **options)
    except (GateFailed, TypeError) as err:
        pytest.fail(str(err), pytrace=False)
    item.user_properties.append(("escalation_gate", result["decision"]))
    _outcome(result, _undecided(item.config, undecided))
    return result


def pytest_addoption(parser) -> None:
    parser.addini("escalation_gate_undecided", "What an undecided escalation gate does to its test: skip (default), "
                  "xfail or fail.", default="skip")


def pytest_configure(config) -> None:
    config.addinivalue_line("markers", "escalation_gate(path, max_p_u=X, ...): run the test only when `escalation "
                            "gate path --max-p-u X ...` passes; fail it when the gate fails, skip it when undecided "
                            "(undecided='xfail' or 'fail' to change that)")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item) -> None:
    """Before a test marked ``escalation_gate`` runs: its gate (each marker's, nearest first)."""
    for marker in item.iter_markers("escalation_gate"):
        if len(marker.args) != 1:
            pytest.fail("escalation_gate takes one path, the scored folder or log: "
                        "@pytest.mark.escalation_gate('scored/candidate', max_p_u=0.05)", pytrace=False)
        options = dict(marker.kwargs)
        undecided = options.pop("undecided", None)
        _gate(item, marker.args[0], undecided, options)


@pytest.fixture
def escalation_gate(request):
    """``escalation_gate(path, **options)``: run ``escalation gate`` and return gate.json as a dict; fail the test
    when the gate fails, skip it when undecided (``undecided="xfail"`` or ``"fail"`` to change that)."""
    def gate(target, *, undecided=None, **options) -> dict:
        return _gate(request.node, target, undecided, options)
    return gate
