"""The names of ``escalation.integrations.phoenix`` (lazy_loader's ``attach_stub``)."""

from ._annotate import (
    ANNOTATOR as ANNOTATOR,
    IDENTIFIER as IDENTIFIER,
    PhoenixAnnotations as PhoenixAnnotations,
    span_annotations as span_annotations,
)
from ._read import PhoenixTraces as PhoenixTraces, client as client, failure as failure, read_phoenix as read_phoenix
