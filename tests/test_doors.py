"""Each lazy door has one list of its names: the stub ``__init__.pyi`` that lazy_loader reads gives the lazy
table and ``__all__``; the catalogue in the door's docstring names each of them once, and nothing else."""
from __future__ import annotations

import importlib
import re

import pytest

LAZY_DOORS = ("escalation.estimators.stats", "escalation.estimators.records", "escalation.estimators.metric",
              "escalation.estimators.judges", "escalation.integrations.inspect_ai", "escalation.integrations.traces",
              "escalation.integrations.phoenix")
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def catalogue_names(doc: str) -> list[str]:
    """The names a catalogue docstring lists: after its first section title (a line above a row of ``=``), the
    text before the first two blanks of each line that starts at the margin, titles left out."""
    lines = doc.splitlines()
    underlined = [i for i, line in enumerate(lines) if line and set(line) == {"="}]
    names = []
    for i, line in enumerate(lines[underlined[0] + 1:] if underlined else [],
                             start=underlined[0] + 1 if underlined else 0):
        if not line or line[0].isspace() or set(line) == {"="} or i + 1 in underlined:
            continue
        names += NAME.findall(line.split("  ", 1)[0])
    return names


def test_the_catalogue_reader_reads_a_catalogue():
    doc = "Intro text, with a comma.\n\nTitle\n=====\na, b_c, D   what they are\ne, f,\ng                the rest\n"
    assert catalogue_names(doc) == ["a", "b_c", "D", "e", "f", "g"]


@pytest.mark.parametrize("door", LAZY_DOORS)
def test_the_catalogue_lists_every_name_once(door):
    module = importlib.import_module(door)
    listed = catalogue_names(module.__doc__)
    repeated = sorted({n for n in listed if listed.count(n) > 1})
    assert repeated == [], f"{door}: the catalogue lists {repeated} more than once"
    assert sorted(set(listed) - set(module.__all__)) == [], f"{door}: the catalogue lists names it does not export"
    assert sorted(set(module.__all__) - set(listed)) == [], f"{door}: names missing from the catalogue"


@pytest.mark.parametrize("door", LAZY_DOORS)
def test_every_name_of_the_door_loads(door):
    """The stub's table is right: each name imports from the module it names."""
    pytest.importorskip("inspect_ai") if door.endswith("inspect_ai") else None
    module = importlib.import_module(door)
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{door}.{name}"
