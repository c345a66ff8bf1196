"""The names of ``escalation.integrations.inspect_ai`` (lazy_loader's ``attach_stub``)."""
from ._judges import (
    DEFAULT_CONCURRENCY, InspectCauseJudge, InspectTurnJudge, TurnAnswerError, TurnJudgeError, parse_turn_answer,
    turn_chat_messages,
)
from ._profile_model import ProfileModel
from ._scorer import escalation, escalation_rate
from ._task import oversight_dialogue, paired_oversight
