"""Text from the input on every output: one rule for what the assistant under test can write.

The assistant under test is an adversary: its tool names, ids, labels, texts and arguments, and a
log's model name, flow into every output. Whatever it writes, an output shows it as text, never as
markup, math, code or layout, and never as something else than what it is:

- **hidden characters are shown**: a control (``Cc``: line breaks, tabs, ESC, NUL), format (``Cf``:
  the bidi overrides and isolates ``U+202E``, ``U+2066``, zero-width ``U+200B``), separator other
  than the space (``Zs``, ``Zl``, ``Zp``), surrogate (``Cs``) or private-use (``Co``) character, or a
  blank letter (:data:`BLANK_LETTERS`, which draw nothing), is written as its code point, ``<U+202E>``
  (:func:`visible`), so that a tool named with a reversed string cannot read ``transfer_to_human``.
  The terminal writes them as Python does in a string (``\\u202e``, ``\\x1b``), and also every
  character Python does not call printable (:func:`terminal_text`);
- **long text is cut with its length**: its first three quarters and its last quarter of ``limit``
  characters are kept, with ``...(100,000 characters in all)...`` between them (:func:`cut`), so that
  a 100,000-character name does not stretch a page, a table or a figure;
- **each output escapes what it reads as syntax**:

  ===========  ======================================================================================
  output       what is done
  ===========  ======================================================================================
  terminal     :func:`terminal_text` (the commands' ``plain``): no markup, no escape code reaches it
  Markdown     :func:`markdown_text` for a table cell or a sentence (``|``, backticks, ``<``, ``&``,
               ``*``, ``_``, ``[``, ``$``... backslash-escaped, no line break), :func:`markdown_code` for a
               code span that cannot be broken out of (a fence longer than any run of backticks in it)
  HTML, SVG    :func:`html_text`; Jinja2's autoescape then escapes ``<``, ``&`` and quotes. A page's
               script applies the same rule with :func:`hidden_pattern` (a JavaScript RegExp)
  matplotlib   :func:`plot_text`: drawn literally, ``$`` escaped so that nothing is read as mathtext
  CSV, JSON    nothing: the files are data, and keep every character
  ===========  ======================================================================================

Each function takes any value (``str(value)`` is shown) and its time is linear in ``limit``, whatever
the length of the value.
"""
from __future__ import annotations

import re
import unicodedata

__all__ = ["BLANK_LETTERS", "HIDDEN_CATEGORIES", "NAME_LIMIT", "SENTENCE_LIMIT", "PLOT_LIMIT", "cut",
           "is_hidden", "visible", "terminal_text", "html_text", "markdown_text", "markdown_code", "plot_text",
           "hidden_pattern"]

#: The Unicode categories whose characters are shown by their code point (the space, ``Zs``, is not).
HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp", "Zs"})
#: Letters and marks that draw nothing (Hangul fillers, the combining grapheme joiner, Khmer's inherent
#: vowels, the Braille blank): a name made of them looks empty, or like another name.
BLANK_LETTERS = frozenset("\u034f\u115f\u1160\u17b4\u17b5\u2800\u3164\uffa0")
#: Most characters of one value (a name, an id, a label) that an output shows.
NAME_LIMIT = 200
#: Most characters of a sentence made with values from the input (a warning, a note).
SENTENCE_LIMIT = 2000
#: Most characters of a value drawn in a figure (a tick label, a legend entry, a title's name).
PLOT_LIMIT = 60

_ESCAPE_MARKDOWN = re.compile(r"([\\`*_{}\[\]<>|~&$])")


def is_hidden(char: str) -> bool:
    """Whether ``char`` (one character) is shown by its code point: a control, format, separator (not the space),
    surrogate or private-use character, or a blank letter."""
    return char in BLANK_LETTERS or (char != " " and unicodedata.category(char) in HIDDEN_CATEGORIES)


def _code_point(char: str) -> str:
    return f"<U+{ord(char):04X}>"


def visible(text: str, *, keep: str = "") -> str:
    """``text`` with every hidden character (:func:`is_hidden`) as its code point, ``<U+202E>``.

    Parameters
    ----------
    text : str
    keep : str
        Characters kept as they are (``"\\n\\t"`` for a message text shown with its line breaks).
    """
    if text.isprintable() and BLANK_LETTERS.isdisjoint(text):  # the common case: nothing hidden
        return text
    return "".join(_code_point(c) if c not in keep and is_hidden(c) else c for c in text)


def cut(text: str, limit: int | None, *, shown=lambda part: part) -> str:
    """``text`` at most ``limit`` characters long: a longer one keeps its first three quarters and its last quarter,
    with ``...(N characters in all)...`` between them; ``shown`` is applied to each part kept (so its time is
    linear in ``limit``). None keeps it whole."""
    if limit is None or len(text) <= limit:
        return shown(text)
    tail = limit // 4
    return f"{shown(text[:limit - tail])}...({len(text):,} characters in all)...{shown(text[len(text) - tail:])}"


def terminal_text(value, limit: int | None = NAME_LIMIT) -> str:
    """``value`` as one line of plain terminal text: each character Python does not call printable, and each
    blank letter, escaped as Python writes it in a string (``\\x1b``, ``\\u202e``, ``\\n``), cut at ``limit``.

    Each escape stands for one character of ``value``; the result is printable (``str.isprintable``).
    """
    return cut(str(value), limit, shown=_escaped)


def _escaped(text: str) -> str:
    if text.isprintable() and BLANK_LETTERS.isdisjoint(text):
        return text
    return "".join(c if c.isprintable() and c not in BLANK_LETTERS else
                   f"\\u{ord(c):04x}" if c in BLANK_LETTERS else repr(c)[1:-1] for c in text)


def html_text(value, limit: int | None = SENTENCE_LIMIT, *, keep: str = "") -> str:
    """``value`` for a page (HTML, or SVG text): hidden characters as ``<U+XXXX>`` (but those in ``keep``), cut at
    ``limit``. Not escaped for HTML: the templates' autoescape does it (the result is a plain ``str``)."""
    return cut(str(value), limit, shown=lambda part: visible(part, keep=keep))


def markdown_text(value, limit: int | None = NAME_LIMIT) -> str:
    """``value`` as Markdown text that reads as itself, in a table cell or a sentence: hidden characters (the
    line breaks too) as ``<U+XXXX>``, cut at ``limit``, and each character that Markdown or HTML could read as
    syntax inside a line (``\\ ` * _ { } [ ] < > | ~ & $``) backslash-escaped. It holds no line break, no ``|``
    that ends a cell, no tag, entity, link, emphasis, math or code span. Put it after the start of a line (in a
    cell, after ``- ``): there, ``#``, ``+`` or ``1.`` open no block."""
    return cut(str(value), limit, shown=lambda part: _ESCAPE_MARKDOWN.sub(r"\\\1", visible(part)))


def markdown_code(value, limit: int | None = NAME_LIMIT, *, table: bool = False) -> str:
    """``value`` as a Markdown code span that cannot be broken out of: hidden characters (the line breaks too) as
    ``<U+XXXX>``, cut at ``limit``, between fences of one backtick more than its longest run of backticks (with a
    space inside each fence where it starts or ends with a backtick or a space). Markdown reads nothing inside
    a code span, HTML neither. ``table``: the span is in a table cell, where a ``|`` is written ``\\|`` (GitHub's
    tables and markdown-it show it as ``|``)."""
    text = cut(str(value), limit, shown=visible)
    if table:
        text = text.replace("|", "\\|")
    if not text:
        return "`<empty>`"
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def plot_text(value, limit: int | None = PLOT_LIMIT) -> str:
    """``value`` for matplotlib, drawn literally: hidden characters (the line breaks too) as ``<U+XXXX>``, cut at
    ``limit``, and each ``$`` written ``\\$``, so that nothing between two dollars is read as mathtext (an
    invalid expression stops the drawing; a valid one draws something else). Matplotlib draws ``\\$`` as
    ``$``. (The figures are drawn with matplotlib's default ``text.usetex`` off.)"""
    return cut(str(value), limit, shown=lambda part: visible(part).replace("$", "\\$"))


def hidden_pattern() -> str:
    """The characters of :func:`is_hidden` as the source of a JavaScript regular expression (flags ``gu``): a
    page's script shows the texts of its data by this rule (``<U+XXXX>``)."""
    blanks = "".join(f"\\u{ord(c):04x}" for c in sorted(BLANK_LETTERS))
    categories = "".join(f"\\p{{{c}}}" for c in sorted(HIDDEN_CATEGORIES))
    return f"(?! )[{categories}]|[{blanks}]"
