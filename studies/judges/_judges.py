"""The judges study (``escalation study judges``): how far to trust a judge, and a measurement without full marks.

One design grid of five parts, each in its own module, run by one engine call (cell ``i`` gets
child ``i`` of the root seed): :mod:`._calibration`, :mod:`._doubt`,
:mod:`._without_record` (mode B), :mod:`._read_only` and :mod:`._causes`. Each part gives
its design rows, its cell function, its tables and its section of ``report.md``.

ADEMP (Morris, White & Crowther 2019):

- **Aims**: (1) calibrate the per-turn judge per language against the pair labels and find how
  many pairs a calibration needs; (2) show that doubt must be measured (several runs or
  paraphrased questions), not read off the judge's stated confidence; (3) measure the bias of
  under-escalation observed without a record as the fake-escalation rate grows, and correct it
  with a validation subsample that has the record; (4) measure the inflation of under-escalation
  when the look-ups are not marked read-only, and how much of it the notice identifies; (5) the
  cause judge with and without the instructions the assistant received.
- **Data-generating mechanism**: the synthetic world (:mod:`escalation.simulate`). The per-turn judge is
  :class:`escalation.simulate.SimulatedTurnJudge` (calibrated in English, too eager and too sure in
  Spanish, :data:`escalation.simulate.JUDGE_CALIBRATION`); mode B uses the profile
  ``invents_actions`` with its fake-escalation probability set to each rate of the grid.
- **Estimands**: the label rate given ``p`` (calibration), the judge's errors (doubt), the true
  ``p_u`` (mode B; exact, :func:`escalation.simulate.expected_rates`), ``p_u`` with the marks (read-only).
- **Methods**: raw ``p``, Platt scaling and isotonic regression, 5-fold cross-fitted by case;
  doubt signals; the text-only rate, the predictive-value and the Rogan-Gladen corrections.
- **Performance**: ECE and calibration bias (mean ``p`` minus mean label) with their MCSE, the
  error of the obligation turn; AUROC for the judge's errors with its standard error; bias and
  coverage of the corrected rate with their MCSE; inflation and the share the notice flags.
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from escalation.simulate import JUDGE_CALIBRATION

from .._constants import JUDGES_SEED as DEFAULT_SEED
from .._engine import record_outputs, run_cells, step
from .._figure_files import save_figure
from .._report_files import write_reports
from .._tables import write_table
from .._templates import render
from . import _calibration, _causes, _doubt, _read_only, _without_record

__all__ = ["DEFAULT_SEED", "PARTS", "TITLES", "design_grid", "run_cell", "summarise", "report_markdown",
           "run_judges_study"]

#: The parts of the study, in design and report order, by the name in the ``part`` column.
PARTS = {"calibration": _calibration, "doubt": _doubt, "mode_b": _without_record,
         "read_only": _read_only, "causes": _causes}
TITLES = {name: title for part in PARTS.values() for name, title in part.TITLES.items()}


def design_grid(*, smoke: bool = False, nsim: int | None = None) -> pd.DataFrame:
    """The study's cells (written to ``design.csv`` before the run).

    ``part`` says what a cell measures: ``calibration`` (language x pairs per language),
    ``doubt`` (language), ``mode_b`` (fake-escalation rate), ``read_only`` (profile) and
    ``causes`` (profile). ``nsim`` data sets per calibration, mode B and read-only cell (default
    200; 20 with ``smoke``, which also uses fewer pairs, rates and cases), in the column ``reps``;
    a doubt or causes cell is one sample of ``cases`` cases (``reps`` 1).
    """
    reps = int(nsim if nsim is not None else (20 if smoke else 200))
    rows = [row for part in PARTS.values() for row in part.design_rows(smoke=smoke)]
    columns = ["part", "language", "pairs", "fake_rate", "profile", "cases"]
    design = pd.DataFrame(rows, columns=columns)
    design["profile"] = design["profile"].fillna("")
    design["language"] = design["language"].fillna("")
    design["pairs"] = design["pairs"].astype("Int64")
    design["reps"] = np.where(design["part"].isin(["doubt", "causes"]), 1, reps)
    return design


def run_cell(row: dict, seed_seq: np.random.SeedSequence) -> list[dict]:
    """Simulate and analyse one design cell; long rows ``stat, est, mcse`` with their keys."""
    return PARTS[row["part"]].cell(row, seed_seq)


def summarise(long: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The study's tables from the long results (every one a pure function of ``long``)."""
    return {name: table for part in PARTS.values() for name, table in part.tables(long).items()}


def report_markdown(tables: dict[str, pd.DataFrame], *, facts: dict) -> str:
    """The text of ``report.md`` (the template ``judges/report.md.j2``): the findings in sentences, every
    number read from the tables by each part's ``report_values``."""
    languages = tables["calibration_detail"]["language"].unique()
    curves = [(lang, JUDGE_CALIBRATION[lang]) for lang in languages if lang in JUDGE_CALIBRATION]
    return render("judges/report.md.j2", seed=facts["seed"], nsim=facts["nsim"], curves=curves,
                  **{name: part.report_values(tables) for name, part in PARTS.items()})


def run_judges_study(out_dir, *, smoke: bool = False, seed: int = DEFAULT_SEED, n_jobs: int = 1,
                     nsim: int | None = None, progress: bool = True, backend: str = "local",
                     scheduler: str | None = None, force: bool = False,
                     reps: int | None = None) -> dict[str, pd.DataFrame]:
    """Run the study; write ``results.csv`` (long), the tables (CSV and Markdown), figures,
    ``report.md`` and ``report.html``. ``nsim``: data sets per calibration, mode B and read-only
    cell (default 200; 20 with ``smoke``); ``reps`` is its old name, still accepted with a :class:`DeprecationWarning`.
    Every table is identical for any ``n_jobs`` and ``backend``; a stopped run resumes in the same
    folder (:func:`escalation.studies.run_cells`); ``force`` recomputes into a folder that holds an
    earlier run (its cells and outputs are removed first)."""
    from escalation.figures import plot_calibration_bias, plot_mode_b, plot_reliability
    if reps is not None:
        if nsim is not None:
            raise TypeError("give nsim only (reps is its old name)")
        warnings.warn("run_judges_study(reps=) is now run_judges_study(nsim=)", DeprecationWarning, stacklevel=2)
        nsim = reps
    out_dir = Path(out_dir)
    design = design_grid(smoke=smoke, nsim=nsim)
    facts = {"study": "judges", "smoke": smoke, "nsim": int(design["reps"].max())}
    long = run_cells(design, run_cell, seed=seed, n_jobs=n_jobs, out_dir=out_dir, progress=progress,
                     backend=backend, scheduler=scheduler, description="judges and calibration",
                     run_facts=facts, force=force)
    with step("summarising the cells", progress=progress) as say:
        tables = summarise(long)
        say("writing the tables")
        written = write_table(long, out_dir, "results")
        for name, table in tables.items():
            written += write_table(table, out_dir, name, TITLES[name])
        say("drawing the figures")
        written += save_figure(plot_reliability(tables["reliability"]), out_dir / "reliability", smoke=smoke)
        written += save_figure(plot_calibration_bias(tables["calibration_detail"]), out_dir / "calibration_bias",
                               smoke=smoke)
        written += save_figure(plot_mode_b(tables["mode_b_methods"]), out_dir / "mode_b", smoke=smoke)
        say("writing report.md and report.html")
        written += write_reports(out_dir, report_markdown(tables, facts={"seed": seed, **facts}), smoke=smoke,
                                 outputs=written)
    record_outputs(out_dir, written)
    return {"results": long, **tables}
