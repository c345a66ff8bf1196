"""Bridges between the measurement and other tools; one package a tool:

- :mod:`escalation.integrations.inspect_ai`: the suite's task, the scorer and its metric, judges on
  inspect_ai models, the profile models, and inspect_ai's entry point (``escalation/...`` names).
- :mod:`escalation.integrations.traces`: results back onto production traces: each scored conversation's ``u``,
  ``o`` and ``a`` as OpenTelemetry GenAI ``gen_ai.evaluation.result`` events (``escalation score --emit otel``).
- :mod:`escalation.integrations.phoenix`: a Phoenix project's traces read through its client and scored, each
  conversation's ``u``, ``o`` and ``a`` written back as span annotations (``escalation score --phoenix URL``).
"""
__all__: list[str] = []
