"""Reference values from independent sources, read from ``tests/reference/*.csv``.

Each file holds values that R, statsmodels, exact enumeration, a published table or a hand computation
gave, each row with the call, script or reasoning that produced it (the ``source`` column); lines that
start with ``#`` say where the file's values come from.
"""
from __future__ import annotations

import csv
from pathlib import Path

FOLDER = Path(__file__).resolve().parent / "reference"


def table(name: str) -> list[dict[str, str]]:
    """The rows of ``tests/reference/NAME.csv`` (comment lines left out)."""
    with open(FOLDER / f"{name}.csv", newline="", encoding="utf-8") as file:
        return list(csv.DictReader(line for line in file if not line.startswith("#")))


def values(name: str) -> dict[str, float]:
    """``name -> value`` of a reference file with those two columns."""
    return {row["name"]: float(row["value"]) for row in table(name)}
