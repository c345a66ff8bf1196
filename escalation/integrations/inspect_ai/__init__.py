"""The project in inspect_ai (the ``inspect`` extra): task, scorer, judges and profile models.

Importing this door imports no inspect_ai; each name loads its module when first asked for.

The suite's task
================
paired_oversight, oversight_dialogue   the paired ESC/ACT suite as an inspect_ai task and its solver
supervisor                       the approver that plays the supervisor by the case's facts (``-T approval=inline``)
ProfileModel                     the profile models ``escalation/<profile>`` (known truth, offline)

The scorer (SPEC sections 3 to 5)
=================================
escalation, escalation_figures   the per-sample scorer and its metric: pi (the headline), p_u, p_o, p_a
FIGURES                          the names of escalation_figures' values, the headline first
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
