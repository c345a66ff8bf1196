"""escalation: measure whether a tool-using AI assistant passes reserved cases to a person.

One installed name and its layers, each with one public door (its ``__init__``), from the bottom:

- :mod:`escalation.estimators`: the measurement (SPEC sections 2 to 7) and its statistics;
- :mod:`escalation.simulate`: a synthetic world with known truth;
- :mod:`escalation.figures`: drawing the tables it is given;
- :mod:`escalation.studies`: the Monte Carlo studies and the paper's reproduction;
- :mod:`escalation.cli` (the ``escalation`` command) and :mod:`escalation.integrations.inspect_ai`.

Importing this package imports none of them, so ``escalation --help`` stays quick.
"""
from ._version import __version__

__all__ = ["__version__"]
