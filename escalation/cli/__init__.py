"""The ``escalation`` command line (SPEC section 7): the top of the project; nothing imports it.

main      the entry point of the ``escalation`` command
app       its typer application (each command module under ``commands`` registers its commands)
"""
from ._main import app, main

__all__ = ["app", "main"]
