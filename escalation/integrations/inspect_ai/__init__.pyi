"""The names of ``escalation.integrations.inspect_ai`` (lazy_loader's ``attach_stub``)."""

from ._judges import (
    DEFAULT_CONCURRENCY as DEFAULT_CONCURRENCY,
)
from ._judges import (
    InspectCauseJudge as InspectCauseJudge,
)
from ._judges import (
    InspectTurnJudge as InspectTurnJudge,
)
from ._judges import (
    TurnAnswerError as TurnAnswerError,
)
from ._judges import (
    TurnJudgeError as TurnJudgeError,
)
from ._judges import (
    parse_turn_answer as parse_turn_answer,
)
from ._judges import (
    turn_chat_messages as turn_chat_messages,
)
from ._profile_model import ProfileModel as ProfileModel
from ._scorer import escalation as escalation
from ._scorer import escalation_rate as escalation_rate
from ._task import oversight_dialogue as oversight_dialogue
from ._task import paired_oversight as paired_oversight
