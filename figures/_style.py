"""Shared figure helpers: a non-interactive backend and saving as PNG and PDF, atomically."""
from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)

from escalation.estimators import write_atomic  # noqa: E402

__all__ = ["save_figure"]


def save_figure(fig: "plt.Figure", stem: str | Path, *, dpi: int = 150) -> list[Path]:
    """Write ``fig`` to ``stem.png`` and ``stem.pdf``, close it and return the two paths.

    Each file is drawn in memory and written under a temporary name, then renamed, so a killed
    run never leaves a half-written figure.
    """
    stem = Path(stem)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    for path in paths:  # no creation date in the PDF, so that a rerun writes the same bytes
        metadata = {"CreationDate": None} if path.suffix == ".pdf" else None
        buffer = io.BytesIO()
        fig.savefig(buffer, format=path.suffix[1:], dpi=dpi, bbox_inches="tight", metadata=metadata)
        write_atomic(path, buffer.getvalue())
    plt.close(fig)
    return paths
