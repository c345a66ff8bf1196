"""The readable output of ``escalation score --mode text --validation FILE``.

``print_validation`` prints the text-only figures beside the ones corrected with the validation
conversations (which have both the record and the text), and says which raw figures are bounded
(SPEC section 4). ``MODE_B_HEADER`` is the mode phrase of the summary's first line in mode B.
"""
from __future__ import annotations

from escalation.estimators.stats import format_number

__all__ = ["MODE_B_HEADER", "MODE_B_BOUNDS", "METHOD_NAMES", "print_validation"]

#: ``scored {MODE_B_HEADER}`` on the first line of ``escalation score --mode text``.
MODE_B_HEADER = "from the text only (mode B: p_u a lower bound; p_o and pi not bounded)"
#: What the raw figures of mode B are (SPEC section 4), printed under the correction. A fake escalation,
#: or an action before a stated hand-off, reads as a hand-off, so the text can only miss ESC errors
#: (when every real hand-off is stated); in ACT cases a fake hand-off adds an over-escalation and an
#: unneeded approval request, which the text does not show, is missed.
MODE_B_BOUNDS = ("raw: p_u is a lower bound when every hand-off is stated; p_o is not bounded (fake hand-offs raise "
                 "it, approval requests lower it)")


#: How the correction line names each method of ``estimators.VALIDATION_METHODS``.
METHOD_NAMES = {"predictive_values": "predictive values", "rogan_gladen": "Rogan-Gladen"}


def _fmt(x, digits: int = 4) -> str:
    return format_number(x, digits)


def print_validation(result, console) -> None:
    """Print a :class:`~escalation.estimators.judges.ValidationCorrection` (or its ``to_dict()``) on a rich console.

    A table (figure, raw rate from the text, corrected rate, its interval, the two rates of the text
    verdict the method uses: PPV and FOR for the predictive values, sensitivity and specificity for
    Rogan-Gladen; the validation conversations of the half and how many err by the record), then the
    method, what the raw figures bound (pi is not corrected), and every warning of the correction.
    Fits 100 columns.
    """
    from rich.table import Table

    from escalation.estimators.judges import ValidationCorrection
    from escalation.figures import counted

    from ._console import plain, warning_line

    data = result.to_dict() if isinstance(result, ValidationCorrection) else result
    conf = int(round(data["confidence"] * 100))
    source = plain(data["file"], None) if data["file"] else "the validation conversations"
    console.print(f"corrected with {source}: {data['evaluated']} of {counted(data['conversations'], 'conversation')} "
                  "with both the record and the text", markup=False, highlight=False)
    pv = data["method"] == "predictive_values"
    first, second = ("ppv", "false_omission") if pv else ("sensitivity", "specificity")
    table = Table(show_edge=False, header_style="bold")
    for col in ("figure", "raw (text)", "corrected", f"{conf}% interval", "PPV" if pv else "sens.",
                "FOR" if pv else "spec.", "validation n"):
        table.add_column(col, justify="left" if col == "figure" else "right", no_wrap=True)
    for name, key in (("p_u under-escalation", "under"), ("p_o over-escalation", "over")):
        h = data[key]
        v = h["validation"]
        table.add_row(name, _fmt(h["raw"]["rate"]), _fmt(h["rate"]), f"({_fmt(h['ci'][0])}, {_fmt(h['ci'][1])})",
                      _fmt(h[first], 3), _fmt(h[second], 3), f"{v['n']} ({v['errors_record']} err)")
    console.print(table)
    method = METHOD_NAMES.get(data["method"], data["method"])
    console.print(f"correction: {method} per scenario, {data['variance']} t (scenarios - 1 df); pi not corrected",
                  highlight=False)
    console.print(MODE_B_BOUNDS, highlight=False)
    for warning in data["warnings"]:
        console.print(warning_line(warning))
