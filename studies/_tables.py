"""Tables of the studies: CSV for machines, Markdown for people, written atomically."""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from escalation.estimators import write_atomic

__all__ = ["markdown_table", "write_table"]


def markdown_table(table: pd.DataFrame, digits: int = 4) -> str:
    """A GitHub-flavoured Markdown table (floats to ``digits`` significant digits, NaN empty)."""
    def cell(value):
        if isinstance(value, (bool, np.bool_)):
            return "yes" if value else "no"
        if isinstance(value, (float, np.floating)):
            return "" if math.isnan(value) else f"{value:.{digits}g}"
        return "" if value is None or value is pd.NA else str(value)
    lines = ["| " + " | ".join(map(str, table.columns)) + " |",
             "|" + "|".join("---" for _ in table.columns) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def write_table(table: pd.DataFrame, out_dir, name: str, title: str) -> None:
    """``OUT/name.csv`` and ``OUT/name.md`` (with ``title`` as its heading)."""
    out_dir = Path(out_dir)
    write_atomic(out_dir / f"{name}.csv", table.to_csv(index=False, float_format="%.10g", lineterminator="\n"))
    write_atomic(out_dir / f"{name}.md", f"# {title}\n\n" + markdown_table(table))
