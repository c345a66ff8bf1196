"""The studies' Markdown tables: an undefined number is ``n/a``, a missing text empty."""
from __future__ import annotations

import math

import pandas as pd

from escalation.studies._tables import markdown_table


def test_an_undefined_number_is_n_a_and_a_missing_text_empty():
    table = pd.DataFrame({"method": ["a", None], "coverage": [0.951234, math.nan], "holds": [True, False]})
    assert markdown_table(table).splitlines()[2:] == ["| a | 0.9512 | yes |", "|  | n/a | no |"]
