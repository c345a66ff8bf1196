"""Production traces in Arize Phoenix, scored and annotated (the ``phoenix`` extra; issue 33).

Importing this door imports no Phoenix client; each name loads its module when first asked for.

Reading a project (``escalation score --phoenix URL --project NAME [--since TIME]``)
===================================================================================
read_phoenix                     a project's traces, through ``phoenix.client``, as canonical conversations (one
                                 a trace, OpenInference spans), written to the file the scoring reads
PhoenixTraces                    what was read: the file, and each conversation's root span, span ids and calls
client                           Phoenix's client for a URL
failure                          the one-line error of a request to Phoenix that failed

Writing the results back
========================
span_annotations                 each scored conversation's u, o and a as span annotations (annotator kind CODE)
                                 on its trace's root span
PhoenixAnnotations               the ``report`` of ``score_file`` that keeps the scores and sends the annotations
IDENTIFIER, ANNOTATOR            the identifier of every annotation (a second run updates it) and its kind
"""
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
