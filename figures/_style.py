"""Shared figure helpers: a non-interactive backend and saving as PNG and PDF."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

__all__ = ["save_figure"]


def save_figure(fig: "plt.Figure", stem: str | Path, *, dpi: int = 150) -> list[Path]:
    """Write ``fig`` to ``stem.png`` and ``stem.pdf``, close it and return the two paths."""
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for path in paths:  # no creation date in the PDF, so that a rerun writes the same bytes
        metadata = {"CreationDate": None} if path.suffix == ".pdf" else None
        fig.savefig(path, dpi=dpi, bbox_inches="tight", metadata=metadata)
    plt.close(fig)
    return paths
