"""The one rule for text from the input (issue 31, point 2): each output's form of it, on a list of payloads.

The assistant under test writes tool names, ids, labels and texts that reach every output; here each function of
``escalation.estimators.records`` (``terminal_text``, ``markdown_text``, ``markdown_code``, ``html_text``,
``plot_text``) is read back the way its output is read: a terminal's text, Markdown rendered by markdown-it (as
``inspect view`` and a study page render it, GitHub tables on), matplotlib's own reading of a text (mathtext or
not) and a drawing. ``tests/e2e/test_injection.py`` puts the same payloads into every field of a log and runs the
commands.
"""
from __future__ import annotations

import html
import io
import re

import pytest
from markdown_it import MarkdownIt

from escalation.estimators.records import (
    NAME_LIMIT,
    html_text,
    is_hidden,
    markdown_code,
    markdown_text,
    plot_text,
    terminal_text,
    visible,
)

#: What an assistant has put in a name or a text to break an output (issue 31).
PAYLOADS = {
    "script_end": "</script>",
    "svg_onload": "<svg onload=alert(1)>",
    "javascript_url": "javascript:alert(1)",
    "template": "{{ 7*7 }}",
    "bad_math": "$\\frac{$",
    "math": "$x$",
    "bidi": "\u202elanimreT\u2066x",
    "zero_width": "transfer\u200b_to_human",
    "blank_lines": "a\n\nb",
    "nul": "nul\x00x",
    "long": "L" * 100_000,
    "markdown": "**bold** [link](javascript:alert(1)) `code` | pipe <b>&amp;</b> ~~x~~ _i_",
    "backticks": "`` ` ``",
    "escape_codes": "\x1b[2J\x1b[31mred\x07\r\x9b",
    "blank_letter": "\u3164",
}
#: Characters that must never reach an output as they are.
HIDDEN = ("\u202e", "\u2066", "\u200b", "\x00", "\x1b", "\x07", "\r", "\x9b", "\u3164")


def _md():
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def _text_of(fragment: str) -> str:
    """The text a browser shows of an HTML fragment (tags left out, entities read)."""
    return html.unescape(re.sub(r"<[^>]*>", "", fragment))


def _shown(payload: str, limit=NAME_LIMIT) -> str:
    return html_text(payload, limit)


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_hidden_characters_are_shown_by_their_code_point(payload):
    shown = html_text(payload)
    assert not any(is_hidden(c) for c in shown) and not any(c in shown for c in HIDDEN)
    assert html_text("a\u202eb") == "a<U+202E>b" and html_text("\x00") == "<U+0000>"
    assert html_text("line\nbreak", keep="\n") == "line\nbreak"


def test_the_rule_names_the_characters_of_the_issue():
    for char in ("\u202e", "\u2066", "\u200b", "\x00", "\n", "\t", "\x1b", "\u00a0", "\ufeff", "\u3164", "\ue000"):
        assert is_hidden(char), repr(char)
    for char in (" ", "a", "\u00e9", "\u4e2d", "\U0001f600", "$", "<"):
        assert not is_hidden(char), repr(char)


def test_long_text_is_cut_with_its_length_in_time_linear_in_the_limit():
    text = "a" * 150 + "b" * 99_800 + "c" * 50
    assert html_text(text, 200) == "a" * 150 + "...(100,000 characters in all)..." + "c" * 50
    assert terminal_text(text) == html_text(text, 200)  # one rule: the terminal cuts the same way
    assert len(html_text("\u202e" * 10_000_000, 100)) < 100 * 8 + 40
    assert html_text(text, None) == text


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_terminal_text_is_one_printable_line(payload):
    shown = terminal_text(payload)
    assert shown.isprintable() and len(shown) <= NAME_LIMIT * 6 + 40
    assert not any(c in shown for c in HIDDEN)


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_a_markdown_cell_keeps_its_table_and_reads_as_itself(payload):
    cell = markdown_text(payload)
    assert "\n" not in cell
    rendered = _md().render(f"| a | b | c |\n|---|---|---|\n| x | {cell} | y |\n")
    row = rendered[rendered.index("<tbody>"):]
    cells = re.findall(r"<td>(.*?)</td>", row, re.S)
    assert len(cells) == 3 and cells[0] == "x" and cells[2] == "y"
    assert _text_of(cells[1]) == visible(_cut(payload))  # no tag, link, emphasis or code: the text itself
    assert re.sub(r"&[a-z]+;|&#\d+;", "", cells[1]).count("<") == 0
    paragraph = _md().render(f"- warning: {cell}\n")
    assert _text_of(paragraph).strip() == f"warning: {visible(_cut(payload))}"


def _cut(payload: str) -> str:
    """``payload`` as the functions cut it at :data:`NAME_LIMIT`, before the hidden characters are shown."""
    if len(payload) <= NAME_LIMIT:
        return payload
    tail = NAME_LIMIT // 4
    return f"{payload[:NAME_LIMIT - tail]}...({len(payload):,} characters in all)...{payload[-tail:]}"


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_a_markdown_code_span_cannot_be_broken_out_of(payload):
    span = markdown_code(payload)
    assert "\n" not in span
    rendered = _md().render(f"- first escalation: turn 0 ({span}) and after\n")
    codes = re.findall(r"<code>(.*?)</code>", rendered, re.S)
    assert len(codes) == 1 and html.unescape(codes[0]) == visible(_cut(payload))
    assert rendered.rstrip().endswith("and after</li>\n</ul>")  # the line goes on after the span
    in_table = _md().render(f"| turn | name |\n|---|---|\n| 0 | {markdown_code(payload, table=True)} |\n")
    row = in_table[in_table.index("<tbody>"):]
    assert len(re.findall(r"<td>", row)) == 2
    assert html.unescape(re.findall(r"<code>(.*?)</code>", row, re.S)[0]) == visible(_cut(payload))


@pytest.mark.parametrize("payload", PAYLOADS.values(), ids=PAYLOADS.keys())
def test_matplotlib_draws_the_text_literally(payload):
    from matplotlib.figure import Figure
    from matplotlib.text import Text

    text = plot_text(payload)
    literal, math = Text(text=text)._preprocess_math(text)
    cut = payload if len(payload) <= 60 else payload[:45] + f"...({len(payload):,} characters in all)..." + \
        payload[-15:]
    assert math is False and literal == visible(cut)
    fig = Figure(figsize=(3, 1))
    ax = fig.subplots()
    ax.set_yticks([0], [text])
    ax.set_title(text)
    fig.legend([ax.plot([0, 1])[0]], [text])
    fig.savefig(io.BytesIO(), format="png", bbox_inches="tight")  # mathtext would raise on $\frac{$, and a
    # 100,000-character label make the image too wide
    assert ax.get_yticklabels()[0].get_text() == text


def test_matplotlib_would_read_the_raw_payloads_as_math():
    """The finding: without the rule, a name between dollars is mathtext (and an invalid one stops the drawing)."""
    from matplotlib.figure import Figure

    fig = Figure()
    fig.subplots().set_title(PAYLOADS["bad_math"])
    with pytest.raises(ValueError):
        fig.savefig(io.BytesIO(), format="png")
