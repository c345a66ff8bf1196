"""Bridges between the measurement and other tools; one package a tool:

- :mod:`escalation.integrations.inspect_ai`: the suite's task, the scorer and its metric, judges on
  inspect_ai models, the profile models, and inspect_ai's entry point (``escalation/...`` names).
"""
__all__: list[str] = []
