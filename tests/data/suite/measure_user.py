"""Measure the suite's scripted user on the labelled assistant turns of ``user_questions.jsonl``.

Run from the repository root::

    python tests/data/suite/measure_user.py [FILE]

Each item is an assistant turn (``text``) in one of the suite's domains and languages, labelled with the
reply a correct user gives (``expect``, see ``README.md``). The item is played against every case of its
domain, both twins, in its language with no pressure: the user (its late fact already said) reads the
turn, and the item is right when every reply is the expected one. Prints the accuracy overall and by
split, category, language and source, then each wrong item with the reply it got.
"""
from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

from escalation.suite import ScriptedUser, load_suite

HERE = Path(__file__).parent
ITEMS = HERE / "user_questions.jsonl"
#: The labels of ``expect`` that are not answers of the case.
NEUTRAL, NONE = "neutral", "none"


def load_items(path: Path = ITEMS) -> list[dict]:
    """The labelled items, one JSON object a line."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def expected_reply(scenario, expect: str, settings: dict) -> str | None:
    """The reply a correct user gives in ``scenario``: no reply (``none``), the default answer (``neutral``),
    or the case's answers named in ``expect`` (``identity+id``), in the order of the suite's intents."""
    if expect == NONE:
        return None
    if expect == NEUTRAL:
        return scenario.default_answer
    wanted = set(expect.split("+"))
    order = [intent["answer"] for intent in settings["intents"]]
    return " ".join(scenario.answers[name] for name in order if name in wanted)


def evaluate(items: list[dict], suite=None) -> list[dict]:
    """Per item: ``right`` and, when wrong, the first wrong scenario's ``got`` and ``wanted`` replies."""
    suite = suite or load_suite()
    settings = suite.settings["user"]
    scenarios: dict = {}
    results = []
    for item in items:
        key = (item["domain"], item["language"])
        if key not in scenarios:
            scenarios[key] = suite.scenarios(domains=[key[0]], languages=[key[1]])
        result = {**item, "right": True}
        for scenario in scenarios[key]:
            got = ScriptedUser(scenario, settings, late_said=True).reply(item["text"], handed_off=False)
            wanted = expected_reply(scenario, item["expect"], settings)
            if got != wanted:
                result.update(right=False, got=got, wanted=wanted, scenario=scenario.sample_id)
                break
        results.append(result)
    return results


def accuracy(results: list[dict], key: str | None = None) -> dict:
    """The share of right items, overall (``key`` None) or by the value of ``key`` (``category``, ...):
    ``{group: (right, total)}``."""
    groups: dict = defaultdict(lambda: [0, 0])
    for r in results:
        group = "all" if key is None else str(r[key]).split("#")[0]
        groups[group][0] += r["right"]
        groups[group][1] += 1
    return {g: tuple(v) for g, v in sorted(groups.items())}


def main(argv: list[str]) -> int:
    results = evaluate(load_items(Path(argv[0]) if argv else ITEMS))
    for key in (None, "split", "category", "language", "source"):
        for group, (right, total) in accuracy(results, key).items():
            print(f"{key or 'overall':>9}  {group:<55} {right:>4} / {total:<4} {right / total:7.1%}")
    for r in results:
        if not r["right"]:
            print(f"\nwrong {r['id']} ({r['language']} {r['category']}, expect {r['expect']}, {r['scenario']}): "
                  f"{r['text'][:160]!r}\n      got {r['got']!r}\n   wanted {r['wanted']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
