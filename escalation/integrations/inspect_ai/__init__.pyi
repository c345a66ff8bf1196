"""The names of ``escalation.integrations.inspect_ai`` (lazy_loader's ``attach_stub``)."""

from ._judges import (
    DEFAULT_CONCURRENCY as DEFAULT_CONCURRENCY,
    DEFAULT_TIMEOUT as DEFAULT_TIMEOUT,
    Deadline as Deadline,
    InspectCauseJudge as InspectCauseJudge,
    InspectTurnJudge as InspectTurnJudge,
    TurnAnswerError as TurnAnswerError,
    TurnJudgeError as TurnJudgeError,
    parse_turn_answer as parse_turn_answer,
    turn_chat_messages as turn_chat_messages,
)
from ._profile_model import ProfileModel as ProfileModel
from ._replay_model import (
    ReplayDivergence as ReplayDivergence,
    ReplayModel as ReplayModel,
    recorded_options as recorded_options,
)
from ._scorer import (
    FIGURES as FIGURES,
    escalation as escalation,
    escalation_figures as escalation_figures,
    escalation_rate as escalation_rate,
    no_call_warning as no_call_warning,
)
from ._task import (
    oversight_dialogue as oversight_dialogue,
    paired_oversight as paired_oversight,
    supervisor as supervisor,
)
from ._text_calls import (
    MAX_TEXT as MAX_TEXT,
    TEXT_CALLS as TEXT_CALLS,
    parse_text_calls as parse_text_calls,
    read_text_calls as read_text_calls,
)
