"""The page of a study (:func:`escalation.figures.study_page`, issue 19 point 1c), read as HTML: it fetches
nothing, escapes what the report holds, shows every figure and table once, and says when it is a smoke run.

The reports and figures here are small stand-ins written for each test (the page does not read the PNG
bytes it inlines); ``tests/e2e/test_smoke_reports.py`` checks the pages the studies write.
"""
from __future__ import annotations

import base64
import struct
import subprocess
import sys
import zlib
from html.parser import HTMLParser

import pytest

from escalation.figures import SMOKE_BANNER, study_page
from escalation.figures._study_page import _NUMBER

#: The policy the brief of issue 19 asks every page to declare (it forbids any fetch but data: images).
#: The page's own style is allowed by its SHA-256 (issue 31: no 'unsafe-inline').
CSP = "default-src 'none'; img-src data:; style-src 'sha256-"


class Page(HTMLParser):
    """What a page shows: its headings, table rows, attributes, text, and the text of the element ``#smoke-run``."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.headings: list[tuple[str, str]] = []
        self.rows: list[list[str]] = []
        self.attributes: list[tuple[str, str, str]] = []
        self.tags: list[str] = []
        self.metas: list[dict[str, str]] = []
        self.text: list[str] = []
        self.banner: str | None = None
        self._heading = self._cell = self._row = None
        self._banner_depth = 0
        self.feed(html)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [(tag, name, value or "") for name, value in attrs]
        if tag == "meta":
            self.metas.append({name: value or "" for name, value in attrs})
        if self._banner_depth:
            self._banner_depth += tag == "div"
        elif dict(attrs).get("id") == "smoke-run":
            self._banner_depth, self.banner = 1, ""
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self._heading = [tag, ""]
        elif tag == "tr":
            self._row = []
        elif tag in ("td", "th"):
            self._cell = ""

    def handle_endtag(self, tag):
        if self._banner_depth and tag == "div":
            self._banner_depth -= 1
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6") and self._heading:
            self.headings.append((self._heading[0], self._heading[1].strip()))
            self._heading = None
        elif tag in ("td", "th") and self._cell is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(self._row)
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._heading:
            self._heading[1] += data
        if self._cell is not None:
            self._cell += data
        if self._banner_depth:
            self.banner += data

    def images(self) -> list[str]:
        return [value for tag, name, value in self.attributes if tag == "img" and name == "src"]

    def meta(self, http_equiv: str) -> list[str]:
        """The content of each ``<meta http-equiv=...>`` of that name."""
        return [meta.get("content", "") for meta in self.metas
                if meta.get("http-equiv", "").lower() == http_equiv.lower()]


def fetches(page: Page) -> list[str]:
    """Every attribute of the page that could fetch something: a URL that is not a data: image or an anchor."""
    return [f"{tag} {name}={value}" for tag, name, value in page.attributes
            if name in ("src", "href", "srcset", "action", "poster", "data") and not value.startswith(("data:", "#"))]


def png(width: int = 1, height: int = 1) -> bytes:
    """A valid grey PNG (PNG specification, ISO/IEC 15948: signature, IHDR, IDAT, IEND chunks with their CRC)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


REPORT = """# A study: its report

Seed 1; a paragraph with `code`, **bold** and K < 10 & m > 1.

## Design

- one
- two

## Findings

![shown.png](shown.png)

| method | coverage |
|---|---|
| wilson | 0.95 |

## Figures

- `other.png` (and PDF)
"""
TABLES = {"inline.md": "# Shown in the report\n\n| method | coverage |\n|---|---|\n| wilson | 0.95 |\n",
          "extra.md": "# Not in the report\n\n| name | value |\n|---|---|\n| a & b | 1e-05 |\n| <c> | |\n"}


def _page(markdown: str = REPORT, *, smoke: bool = False, title: str = "A study: its report") -> tuple[str, Page]:
    html = study_page(markdown, title=title, figures={"shown.png": png(2, 1), "other.png": png(1, 2)},
                      tables=TABLES, smoke=smoke)
    return html, Page(html)


def test_the_page_declares_a_policy_that_forbids_any_fetch_and_fetches_nothing():
    html, page = _page()
    policies = page.meta("Content-Security-Policy")
    assert len(policies) == 1 and policies[0].startswith(CSP) and "unsafe-inline" not in policies[0]
    assert "script-src" not in policies[0] and "script" not in page.tags  # no script, so none allowed
    assert fetches(page) == []
    assert "link" not in page.tags and "url(" not in html and "@import" not in html


def test_the_headings_of_the_report_are_headings_of_the_page_with_anchors_in_its_menu():
    _, page = _page()
    assert ("h1", "A study: its report") in page.headings
    assert [h for h in page.headings if h[0] == "h1"] == [("h1", "A study: its report")]  # once, not twice
    for name in ("Design", "Findings", "Figures"):
        assert ("h2", name) in page.headings
    anchors = [value for tag, name, value in page.attributes if tag == "a" and name == "href"]
    assert anchors[:3] == ["#design", "#findings", "#figures"]
    ids = [value for _, name, value in page.attributes if name == "id"]
    assert len(ids) == len(set(ids)) and {a[1:] for a in anchors} <= set(ids)


def test_every_figure_is_inlined_once_where_the_report_shows_it_or_after_it():
    html, page = _page()
    shown, other = (f"data:image/png;base64,{base64.b64encode(png(*size)).decode()}" for size in ((2, 1), (1, 2)))
    assert page.images() == [shown, other]  # the report's own image first, the other one after the report
    assert html.index(shown) < html.index('id="figures"') < html.index(other)
    assert ("h2", "Figures of this run") in page.headings


def test_a_table_the_report_holds_is_not_repeated_and_the_others_follow_with_every_cell():
    _, page = _page()
    assert page.rows.count(["wilson", "0.95"]) == 1
    assert ["a & b", "1e-05"] in page.rows and ["<c>", ""] in page.rows  # escaped, and read back as written
    assert ("h3", "Not in the report (extra.md)") in page.headings
    assert not any("Shown in the report" in text for _, text in page.headings)


def test_numbers_in_tables_are_aligned_and_words_are_not():
    html, _ = _page()
    assert '<td class="num">0.95</td>' in html and '<td class="num">1e-05</td>' in html
    assert "<td>wilson</td>" in html and "<td>a &amp; b</td>" in html
    for number in ("0.95", "-3", "1,234", "12%", "1e-05", ".5"):
        assert _NUMBER.fullmatch(number), number
    for word in ("wilson", "K < 10", "0.9 / 0.8", "", "n/a"):
        assert not _NUMBER.fullmatch(word), word


def test_what_the_report_holds_is_escaped_and_links_out_are_kept_as_text():
    hostile = ("# A study: its report\n\n<script>alert(1)</script> <img src=x onerror=alert(2)>\n\n"
               "[the paper](https://example.org/paper) and <https://example.org/raw>, "
               "![a remote figure](http://example.org/f.png), [inside](#design)\n")
    html, page = _page(hostile, title="<b>title</b>")
    assert "<script>" not in html and "onerror" not in [name for _, name, _ in page.attributes]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;title&lt;/b&gt;" in html  # the title too (autoescape)
    assert fetches(page) == [] and "http" not in " ".join(v for _, _, v in page.attributes)
    text = "".join(page.text)
    assert "the paper" in text and "https://example.org/raw" in text and "[a remote figure]" in text
    assert ("a", "href", "#design") in page.attributes


def test_a_smoke_page_carries_the_banner_on_top_and_a_full_size_page_does_not():
    smoke_html, smoke = _page(smoke=True)
    full_html, full = _page(smoke=False)
    assert smoke.banner is not None and smoke.banner.startswith("Smoke run.")
    assert "not fit for conclusions" in smoke.banner and "--smoke" in smoke.banner
    assert smoke_html.index('id="smoke-run"') < smoke_html.index("<p>Seed 1;")  # before the report's text
    assert full.banner is None and "Smoke run" not in full_html
    assert SMOKE_BANNER.startswith("**Smoke run.**")  # what report.md quotes


def test_the_page_is_the_same_for_the_same_inputs():
    assert _page()[0] == _page()[0]


@pytest.mark.slow
def test_importing_the_page_module_does_not_import_markdown_it():
    """markdown-it is imported when a page is made (the brief of issue 19: keep the cost of imports)."""
    code = ("import sys, escalation.figures._study_page\n"
            "print('markdown_it' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
