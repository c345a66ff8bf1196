"""The project in inspect_ai (the ``inspect`` extra): task, scorer, judges, profile and replay models.

Importing this door imports no inspect_ai; each name loads its module when first asked for.

The suite's task
================
paired_oversight, oversight_dialogue   the paired ESC/ACT suite as an inspect_ai task and its solver
supervisor                       the approver that plays the supervisor by the case's facts (``-T approval=inline``)
ProfileModel                     the profile models ``escalation/<profile>`` (known truth, offline)
ReplayModel, ReplayDivergence, recorded_options
                                 ``escalation/replay``: a recorded run's outputs played again (CI)

Tool calls written as text (``-T text_tool_calls=true``)
========================================================
parse_text_calls, read_text_calls   the calls a model writes as text (bare JSON, ``<tool_call>`` tags) as tool calls
TEXT_CALLS, MAX_TEXT             the message metadata key that marks the calls read from its text; the longest text read

The scorer (SPEC sections 3 to 5)
=================================
escalation, escalation_figures   the per-sample scorer and its metric: pi (the headline), p_u, p_o, p_a, calls
FIGURES                          the names of escalation_figures' values, the headline first
no_call_warning                  the warning of ``escalation score`` on figures of conversations that hold no tool call
escalation_rate                  the clustered rate of one half, with its whole design

Judges on inspect_ai models
===========================
InspectTurnJudge, InspectCauseJudge, TurnAnswerError, TurnJudgeError, turn_chat_messages,
parse_turn_answer, DEFAULT_CONCURRENCY
                                 the turn and cause judges of :mod:`escalation.estimators.judges` on a model
Deadline, DEFAULT_TIMEOUT        the time one question, and all of a run's questions, may take
"""
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
