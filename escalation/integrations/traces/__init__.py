"""Results back onto the traces they were read from (issue 33): OpenTelemetry GenAI evaluation events.

Importing this door imports nothing more; each name loads its module when first asked for.

OTLP JSON (``escalation score --emit otel``)
============================================
evaluation_events                each scored trace's u, o and a as ``gen_ai.evaluation.result`` events, OTLP JSON
                                 log records parented to the span of the scored turn or call
OtelEvents                       the ``report`` of ``score_file`` that writes them with the run's other files
EVENTS_FILE                      their file beside conversations.jsonl: ``evaluations.otlp.jsonl``
verdicts, Verdict                the figures of a conversation line that go back onto its trace, each with its
                                 explanation and the call whose span it belongs to (Phoenix's annotations too)
"""
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
