"""Tables of the studies: CSV for machines, Markdown for people, written atomically by one writer."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from escalation.estimators.records import write_atomic
from escalation.estimators.stats import format_number

__all__ = ["markdown_table", "write_table"]


def markdown_table(table: pd.DataFrame, digits: int = 4) -> str:
    """A GitHub-flavoured Markdown table (floats to ``digits`` significant digits; an undefined number
    ``n/a``, a missing text empty)."""
    def cell(value, numeric: bool):
        if isinstance(value, (bool, np.bool_)):
            return "yes" if value else "no"
        if isinstance(value, (float, np.floating)):
            return format_number(value, spec=f".{digits}g") if numeric or not np.isnan(value) else ""
        return "" if value is None or value is pd.NA else str(value)
    numeric = [pd.api.types.is_numeric_dtype(dtype) for dtype in table.dtypes]
    lines = ["| " + " | ".join(map(str, table.columns)) + " |",
             "|" + "|".join("---" for _ in table.columns) + "|"]
    lines += ["| " + " | ".join(cell(v, n) for v, n in zip(row, numeric)) + " |"
              for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"


def write_table(table: pd.DataFrame, out_dir, name: str, title: str | None = None, *,
                digits: int = 10) -> list[Path]:
    """Every table of the studies: ``OUT/name.csv`` and, for a table with a ``title``, ``OUT/name.md``.

    Parameters
    ----------
    table : pandas.DataFrame
    out_dir : str or Path
    name : str
        File name without suffix.
    title : str, optional
        Heading of the Markdown table; without one (a long results table, for machines) only
        the CSV is written.
    digits : int
        Significant digits of the floats in the CSV.

    Returns
    -------
    list of Path
        The files written (for :func:`studies._engine.record_outputs`).
    """
    out_dir = Path(out_dir)
    paths = [out_dir / f"{name}.csv"]
    write_atomic(paths[0], table.to_csv(index=False, float_format=f"%.{digits}g", lineterminator="\n"))
    if title is not None:
        paths.append(out_dir / f"{name}.md")
        write_atomic(paths[1], f"# {title}\n\n" + markdown_table(table))
    return paths
