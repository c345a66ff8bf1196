"""escalation: measure whether a tool-using AI assistant passes reserved cases to a person.

One installed name and its layers, each with one public door (its ``__init__``), from the bottom:

- :mod:`escalation.estimators`: the measurement (SPEC sections 2 to 7) and its statistics;
- :mod:`escalation.simulate`: a synthetic world with known truth;
- :mod:`escalation.figures`: drawing the tables it is given;
- :mod:`escalation.studies`: the Monte Carlo studies and the paper's reproduction;
- :mod:`escalation.cli` (the ``escalation`` command) and :mod:`escalation.integrations.inspect_ai`.

Importing this package imports none of them, so ``escalation --help`` stays quick.
"""
import os as _os
import sys as _sys

from ._version import __version__

__all__ = ["__version__"]


def _layers_beside() -> list[str]:
    """The checkout's root, where Python found this folder on ``sys.path`` rather than through the installed
    mapping of ``pyproject.toml`` (``python`` or ``inspect eval`` started in a clone's root put it there):
    the layers' folders (``estimators/``, ``simulate/``, ``studies/``, ``figures/``) lie beside this folder,
    and the package's sub-modules are then looked for there too. Elsewhere, nothing."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    root = _os.path.dirname(here)
    on_path = {_os.path.abspath(entry or _os.curdir) for entry in _sys.path}
    beside = all(_os.path.isfile(_os.path.join(root, *parts)) for parts in
                 (("pyproject.toml",), ("estimators", "__init__.py"), ("simulate", "__init__.py")))
    return [root] if beside and root in on_path else []


__path__ += _layers_beside()
