"""A study's report saved to disk: ``report.md`` and the page ``report.html`` (:func:`escalation.figures.study_page`).

Every study and the reproduction write their report through :func:`write_reports`, once their
tables and figures are written, so the page holds the figures and tables of the same run. Both
files go through :func:`escalation.estimators.records.write_atomic`, like every table.
"""
from __future__ import annotations

from pathlib import Path

from escalation.estimators.records import write_atomic
from escalation.figures import SMOKE_BANNER, study_page

__all__ = ["write_reports"]


def write_reports(out_dir: str | Path, markdown: str, *, smoke: bool, outputs) -> list[Path]:
    """Write ``report.md`` and ``report.html`` of a run into ``out_dir`` and return their two paths.

    Parameters
    ----------
    out_dir : str or Path
    markdown : str
        The report, its first line its ``# title``.
    smoke : bool
        A smoke run: both files carry :data:`escalation.figures.SMOKE_BANNER` under the title.
    outputs : iterable of Path
        The files of the run written so far: the page inlines each ``.png`` and shows each
        Markdown table (``.md``) that the report does not already hold.
    """
    out_dir = Path(out_dir)
    outputs = [Path(p) for p in outputs]
    first, _, rest = markdown.partition("\n")
    paths = [out_dir / "report.md", out_dir / "report.html"]
    write_atomic(paths[0], f"{first}\n\n> {SMOKE_BANNER}\n{rest}" if smoke else markdown)
    page = study_page(markdown, title=first.removeprefix("#").strip(), smoke=smoke,
                      figures={p.name: p.read_bytes() for p in outputs if p.suffix == ".png"},
                      tables={p.name: p.read_text(encoding="utf-8") for p in outputs
                              if p.suffix == ".md" and p.name != "report.md"})
    write_atomic(paths[1], page)
    return paths
