"""Figures of the studies saved to disk: :mod:`escalation.figures` draws, this module writes.

Kept out of :mod:`escalation.figures` so that drawing needs nothing of the measurement; the
files go through :func:`escalation.estimators.records.write_atomic`, like every table.
"""
from __future__ import annotations

import io
from pathlib import Path

from matplotlib.figure import Figure

from escalation.estimators.records import write_atomic

__all__ = ["save_figure", "SMOKE_MARK"]

#: The line on top of every figure of a smoke run, as report.md and report.html carry the smoke banner
#: (:data:`escalation.figures.SMOKE_BANNER`): a figure is often seen alone.
SMOKE_MARK = "Smoke run (--smoke): tiny sizes, to check that the command runs; not fit for conclusions"


def save_figure(fig: Figure, stem: str | Path, *, dpi: int = 150, smoke: bool = False) -> list[Path]:
    """Write ``fig`` to ``stem.png`` and ``stem.pdf`` and return the two paths.

    Each file is drawn in memory and written under a temporary name, then renamed, so a killed
    run never leaves a half-written figure. The PDF has no creation date, so a rerun writes the
    same bytes. A ``smoke`` run's figure carries :data:`SMOKE_MARK` above everything else.
    """
    if smoke:
        fig.text(0.5, 1.0, SMOKE_MARK, ha="center", va="bottom", fontsize=9, fontweight="bold", color="#a50f15")
    stem = Path(stem)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for path in paths:
        metadata = {"CreationDate": None} if path.suffix == ".pdf" else None
        buffer = io.BytesIO()
        fig.savefig(buffer, format=path.suffix[1:], dpi=dpi, bbox_inches="tight", metadata=metadata)
        write_atomic(path, buffer.getvalue())
    return paths
