"""The page of a study: its ``report.md`` with the figures and tables of its run, as one HTML file.

Nothing here writes a file or computes a result: :func:`study_page` takes the report's Markdown,
the run's figures (PNG bytes) and Markdown tables and returns the page's text. The page fetches
nothing: its style is inlined (``templates/report.css``, the look of the scoring's page), its
figures are PNG data URIs, a link or image of the report that points elsewhere is kept as its
text only, and its Content-Security-Policy forbids any fetch, any script and any style but its own (by its
SHA-256: a table's column alignment is a class, not a ``style`` attribute). The Markdown is rendered by
markdown-it-py (CommonMark with tables, raw HTML escaped), the page by a Jinja2 template
(``templates/study.html.j2``) that escapes every value.
"""
from __future__ import annotations

import base64
import re
from functools import lru_cache

import markupsafe

from escalation import __version__

from ._report import _ENVIRONMENT, _asset, content_policy

__all__ = ["study_page", "SMOKE_BANNER"]

#: The banner of a smoke run's report, in Markdown: report.md quotes it under its title, the page shows it on top.
SMOKE_BANNER = ("**Smoke run.** Tiny sizes (`--smoke`), to check that the command runs from end to end: the numbers "
                "of this report are not fit for conclusions. Run the command without `--smoke` for the study.")

#: A table cell that holds a number only (aligned right on the page).
_NUMBER = re.compile(r"[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?%?")


@lru_cache(maxsize=1)
def _markdown():
    """The renderer: CommonMark with GitHub's tables, raw HTML shown as text."""
    from markdown_it import MarkdownIt  # imported when a page is made: ``escalation --help`` stays quick

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.add_render_rule("table_open", lambda self, tokens, i, options, env: '<div class="wrap"><table>\n')
    md.add_render_rule("table_close", lambda self, tokens, i, options, env: "</table></div>\n")
    return md


def _uri(png: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(png).decode("ascii")


def _slug(text: str, taken: set[str]) -> str:
    """An id for a heading, unique on the page."""
    base = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    taken.add(slug)
    return slug


def _local(tokens, figures: dict[str, str], placed: set[str]) -> None:
    """Make the inline tokens of a block fetch nothing: an image of a figure of the run becomes its data URI, any
    other image its text, and a link that does not point inside the page its text."""
    kept, depth = [], []
    for token in tokens:
        if token.type == "image":
            src = token.attrGet("src") or ""
            if src in figures:
                token.attrSet("src", figures[src])
                placed.add(src)
            else:
                token.type, token.tag, token.content, token.children = "text", "", f"[{token.content}]", None
        elif token.type == "link_open":
            inside = (token.attrGet("href") or "").startswith("#")
            depth.append(inside)
            if not inside:
                continue
        elif token.type == "link_close" and not depth.pop():
            continue
        kept.append(token)
    tokens[:] = kept


def _render(text: str, *, figures: dict[str, str], placed: set[str], taken: set[str],
            sections: list[tuple[str, str]] | None = None, drop_title: str | None = None) -> str:
    """``text`` (Markdown) as HTML: headings with ids (the ``h2`` listed in ``sections``), numbers in tables aligned,
    and nothing fetched (:func:`_local`). A first ``h1`` that reads ``drop_title`` is left out (the page shows it)."""
    md = _markdown()
    tokens = md.parse(text)
    if (drop_title is not None and len(tokens) >= 3 and tokens[0].type == "heading_open" and tokens[0].tag == "h1"
            and tokens[1].content.strip() == drop_title):
        tokens = tokens[3:]
    for i, token in enumerate(tokens):
        if token.type == "inline":
            _local(token.children or [], figures, placed)
        elif token.type == "heading_open":
            name = tokens[i + 1].content
            token.attrSet("id", _slug(name, taken))
            if token.tag == "h2" and sections is not None:
                sections.append((token.attrGet("id"), name.replace("`", "").replace("**", "")))
        elif token.type in ("th_open", "td_open"):
            # a column's alignment as a class: the page's policy allows no style attribute
            align = (token.attrGet("style") or "").removeprefix("text-align:")
            classes = [f"align-{align}"] if align in ("left", "center", "right") else []
            if token.type == "td_open" and _NUMBER.fullmatch(tokens[i + 1].content.strip()):
                classes.append("num")
            token.attrs.pop("style", None)
            if classes:
                token.attrSet("class", " ".join(classes))
    return md.renderer.render(tokens, md.options, {})


def study_page(markdown_text: str, *, title: str, figures: dict[str, bytes], tables: dict[str, str],
               smoke: bool, what: str | None = None) -> str:
    """The page of a study's run: ``report.md`` rendered, with every figure and table of the run.

    Parameters
    ----------
    markdown_text : str
        The report (``report.md`` without the smoke banner, which ``smoke`` adds). Its first
        heading, when it reads ``title``, becomes the page's.
    title : str
        The page's title.
    figures : dict of str to bytes
        PNG bytes by file name. A figure the report shows as an image (``![name](name.png)``)
        is placed there; the others follow the report, in this order.
    tables : dict of str to str
        The Markdown copies of the run's tables by file name (``# title`` then the table). A
        table the report already holds, character for character, is not repeated; the others
        follow the figures.
    smoke : bool
        A smoke run: :data:`SMOKE_BANNER` on top of the page.
    what : str, optional
        What the page is, one sentence under its title; default: a study's report.

    Returns
    -------
    str
        One self-contained HTML page (UTF-8 text): no script, and nothing fetched. Its size is
        4/3 of the figures' PNG bytes (base64) plus the text and tables (30 to 85 kB in the smoke
        runs). Measured on the smoke runs (``--smoke``, default sizes): ``escalation study
        coverage`` 1.20 MB (six figures, 0.88 MB of PNG), ``escalation reproduce`` 0.26 MB (two
        figures, 0.16 MB of PNG), ``study sample-size`` 0.54 MB, ``study judges`` 0.44 MB,
        ``study differences`` 0.42 MB. A full run has the same figures and longer tables.
    """
    uris = {name: _uri(png) for name, png in figures.items()}
    placed: set[str] = set()
    taken = {"figures-of-this-run", "tables-of-this-run"}
    sections: list[tuple[str, str]] = []
    body = _render(markdown_text, figures=uris, placed=placed, taken=taken, sections=sections, drop_title=title)
    shown = []
    for name, text in tables.items():
        heading, _, table = text.partition("\n")
        if table.strip() and table.strip() in markdown_text:
            continue
        shown.append((_slug(f"table-{name}", taken), name, heading.removeprefix("# ").strip() or name,
                      _render(table, figures=uris, placed=placed, taken=taken)))
    rest = [(name, markupsafe.Markup(uri)) for name, uri in uris.items() if name not in placed]  # base64: no markup
    sections += [("figures-of-this-run", "Figures of this run")] if rest else []
    sections += [("tables-of-this-run", "Tables of this run")] if shown else []
    smoke_banner = _markdown().renderInline(SMOKE_BANNER) if smoke else ""
    what = what or f"A study report of escalation {__version__}: report.md with the figures and tables of its run."
    css = _asset("report.css") + _asset("study.css")
    return _ENVIRONMENT.get_template("study.html.j2").render(
        title=title, what=what, version=__version__, css=css, csp=content_policy(styles=[css]), sections=sections,
        smoke=smoke,
        smoke_banner=smoke_banner, body=body, figures=rest, figures_anchor="figures-of-this-run", tables=shown,
        tables_anchor="tables-of-this-run")
