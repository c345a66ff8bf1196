"""Sphinx configuration of the manual.

Build (``.ci/run`` does, after ``python -m pip install -e ".[docs]"``), offline and with warnings as errors::

    python -m sphinx -W --keep-going -q -b html docs docs/_build/html

The pages are Markdown (MyST); the reference is written from the layer doors by ``_ext/doors.py``.
Production traces and release gates get their tutorials in ``index.md``'s Tutorials toctree when they land.
"""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "_ext"))

from escalation import __version__  # noqa: E402  (the installed package documents itself)

project = "escalation"
author = "the escalation authors"
copyright = "the escalation authors, MIT licence"
version = release = __version__

extensions = [
    "myst_parser",            # the Markdown pages (tutorials, SPEC.md, capacity.md)
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",  # one page per public name of each door
    "numpydoc",               # the docstrings' Parameters, Returns, Notes... sections
    "doors",                  # _ext/doors.py: the reference page of each door, from its __all__ and catalogue
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
templates_path = ["_templates"]
exclude_patterns = ["_build"]

# Reference: every door's names, each on its own page (_ext/doors.py writes the tables autosummary reads).
autosummary_generate = True
autodoc_member_order = "bysource"
autodoc_typehints = "none"           # the signatures stay short; numpydoc's Parameters give the types
numpydoc_show_class_members = False  # the class template lists the members itself
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()   # the docstrings are numpydoc-ish, not all of numpydoc's checks

# Markdown: links to a heading of another page (``page.md#a-heading``).
myst_heading_anchors = 3

html_theme = "furo"
html_title = f"escalation {release}"
