from ._events import (
    EVENTS_FILE as EVENTS_FILE,
    OtelEvents as OtelEvents,
    Verdict as Verdict,
    evaluation_events as evaluation_events,
    verdicts as verdicts,
)
