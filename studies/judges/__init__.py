"""The judges study (``escalation study judges``): one module per part (:mod:`._calibration`, :mod:`._doubt`,
:mod:`._without_record`, :mod:`._read_only`, :mod:`._causes`), run together by :mod:`._judges`."""
from ._judges import run_judges_study

__all__ = ["run_judges_study"]
