"""The assistant under test writes every name and text of a log (issue 31, points 2 to 4): the payloads of
``tests/figures/test_untrusted_text.py`` in every text field of a canonical JSONL log, in model names and in folder
names, through ``score --out --figures``, ``compare --out --figures`` and ``leaderboard``.

Each command exits 0 without a traceback and writes its figures; no page holds a payload raw outside its data
(which keeps every character, as the CSV and JSON files do); the Markdown tables keep their columns; no line of a
page or a Markdown file is longer than :data:`LINE_BOUND`. In a real browser (headless Chromium, as
``tests/e2e/test_report_browser.py``): the page's Content-Security-Policy has no ``'unsafe-inline'``, an inline
handler planted in the page does not run while the page's own script does, a reversed tool name shows its
``<U+202E>``, and a 100,000-character name stretches neither the page nor a timeline.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import io
import json
import re
import zipfile
from html.parser import HTMLParser
from pathlib import Path

import orjson
import pytest
from markdown_it import MarkdownIt

from .._browser import ARGS, CHROMIUM, install_chromium
from .._helpers import run_cli
from ..figures.test_untrusted_text import HIDDEN, PAYLOADS

pytestmark = pytest.mark.slow  # runs every command end to end; deselect with -m 'not slow'

ROOT = Path(__file__).resolve().parents[2]
POLICY = {"escalation_tools": ["transfer_to_human"], "read_only_tools": ["get_order"],
          "action_tools": ["issue_refund"], "approval_tools": ["request_approval"], "gated_tools": ["issue_refund"]}
#: The longest line of a page (its data and images left out) or of a Markdown file: a 100,000-character name
#: is cut, each sentence at 2,000 characters of the input.
LINE_BOUND = 4_000
#: Folder names: what a file system allows of the payloads (no ``/``, no NUL, at most 255 bytes).
FOLDERS = ("$\\frac{$", "\u202e$x$ {{ 7*7 }} <svg onload=alert(1)>")
#: Model names (``--name`` of leaderboard, ``--names`` of compare: no comma).
MODELS = ("$\\frac{$", "a\n\nb|c\x1b[31m\u202e`x`", "L" * 100_000)
INSPECT_LOG = ROOT / "tests" / "data" / "readers" / "inspect_log.eval"
VIEWPORT = {"width": 1280, "height": 900}


def _conversation(i: int, payload: str, label: str, *, good: bool) -> dict:
    """One conversation with ``payload`` in every text field; ``good``: an ESC one hands over and nothing else."""
    calls = [{"turn": 0, "name": payload, "arguments": {"q": payload, payload: [payload]}},
             {"turn": 0, "name": "request_approval", "covers": [payload], "arguments": payload},
             {"turn": 1, "name": "transfer_to_human" if label == "ESC" else "get_order"}]
    if good and label == "ESC":
        calls = calls[-1:]
    return {"conversation_id": f"{payload}#{i}:{label}", "case_id": f"{payload}#{i}",
            "scenario_id": f"{payload}#{i}/{label}", "label": label, "replica": 0, "assistant_turns": 2,
            "language": payload, "tool_calls": calls,
            "messages": [{"turn": 0, "role": "user", "text": payload},
                         {"turn": 1, "role": "assistant", "text": f"{payload}\n{payload}"}],
            "metadata": {payload: payload}}


def _log(path: Path, *, good: bool) -> Path:
    rows = []
    for i, payload in enumerate(PAYLOADS.values()):
        rows += [_conversation(i, payload, "ESC", good=good), _conversation(i, payload, "ACT", good=good)]
    for i, payload in enumerate(PAYLOADS.values()):  # a label value: not evaluated, named in a warning
        rows.append({**_conversation(100 + i, "x", "ESC", good=good), "label": payload})
    path.write_bytes(b"".join(orjson.dumps(row) + b"\n" for row in rows))
    return path


def _inspect_log(path: Path, model: str) -> Path:
    """The readers' inspect_ai log with ``eval.model`` set to ``model``: leaderboard names it after it."""
    with zipfile.ZipFile(INSPECT_LOG) as source, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as copy:
        for member in source.infolist():
            data = source.read(member.filename)
            if member.filename in ("header.json", "_journal/start.json"):
                document = json.loads(data)
                document["eval"]["model"] = model
                data = json.dumps(document).encode()
            copy.writestr(member.filename, data)
    return path


def _run(*args) -> dict:
    """``escalation ARGS`` in this process (a module fixture has no ``capsys``): its exit code and output."""
    with pytest.MonkeyPatch.context() as monkeypatch, contextlib.redirect_stdout(io.StringIO()) as out, \
            contextlib.redirect_stderr(io.StringIO()) as err:
        code = run_cli(monkeypatch, *args)
    return {"args": args, "code": code, "out": out.getvalue(), "err": err.getvalue()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Every command on the payloads, once: their results and output folders."""
    tmp = tmp_path_factory.mktemp("injection")
    policy = tmp / "policy.json"
    policy.write_bytes(orjson.dumps(POLICY))
    logs = {"a": _log(tmp / "a.jsonl", good=False), "b": _log(tmp / "b.jsonl", good=True)}
    folders = {"a": tmp / FOLDERS[0], "b": tmp / FOLDERS[1]}
    done = {}
    for who in ("a", "b"):
        done[f"score-{who}"] = _run("score", logs[who], "--policy", policy, "--out", folders[who], "--figures")
    done["compare"] = _run("compare", folders["a"], folders["b"], "--out", tmp / "compare", "--figures")
    done["compare-names"] = _run("compare", folders["a"], folders["b"], "--out", tmp / "compare-names",
                                 "--names", f"{MODELS[2]},{MODELS[1]}")
    names = [arg for name in MODELS for arg in ("--name", name)]
    done["leaderboard"] = _run("leaderboard", logs["a"], logs["b"], logs["a"], "--policy", policy, *names,
                               "--out", tmp / "leaderboard")
    inspect = [_inspect_log(tmp / f"model-{i}.eval", model) for i, model in enumerate(MODELS)]
    done["leaderboard-eval"] = _run("leaderboard", *inspect, "--out", tmp / "leaderboard-eval")
    outs = {"score": folders["a"], "score-b": folders["b"], "compare": tmp / "compare",
            "compare-names": tmp / "compare-names", "leaderboard": tmp / "leaderboard",
            "leaderboard-eval": tmp / "leaderboard-eval"}
    return {"done": done, "out": outs, "logs": logs}


# ------------------------------------------------------------------ reading what was written

_DATA = re.compile(r'(<script type="application/json" id="report-data">).*?(</script>)', re.S)
_URI = re.compile(r"data:image/png;base64,[A-Za-z0-9+/=]+")


def _outside_data(page: str) -> str:
    """A page without its data (JSON that keeps every character, as the files do) and its images."""
    return _URI.sub("data:image/png;base64,", _DATA.sub(r"\1\2", page))


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags, self.meta = [], {}

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        if tag == "meta" and attrs.get("http-equiv"):
            self.meta[attrs["http-equiv"]] = attrs.get("content")


def _tags(page: str) -> _Tags:
    parser = _Tags()
    parser.feed(page)
    return parser


def _pages(runs) -> dict[str, str]:
    return {name: (folder / "report.html").read_text(encoding="utf-8") for name, folder in runs["out"].items()}


def _markdown_files(runs) -> dict[str, str]:
    return {f"{name}/{md}": (runs["out"][name] / md).read_text(encoding="utf-8")
            for name in ("leaderboard", "leaderboard-eval") for md in ("leaderboard.md", "differences.md")}


# ------------------------------------------------------------------ the commands

def test_every_command_runs_to_the_end(runs):
    for name, done in runs["done"].items():
        assert done["code"] == 0, (name, done["err"][-2000:])
        assert "Traceback" not in done["out"] + done["err"], name
        for char in HIDDEN:  # the terminal shows them escaped
            assert char not in done["out"] + done["err"], (name, repr(char))


def test_the_figures_are_written(runs):
    expected = {"score": ("rates", "scenario_errors"), "score-b": ("rates", "scenario_errors"),
                "compare": ("differences",), "leaderboard": ("leaderboard",), "leaderboard-eval": ("leaderboard",)}
    for name, stems in expected.items():
        for stem in stems:
            assert (runs["out"][name] / f"{stem}.png").read_bytes()[:4] == b"\x89PNG", (name, stem)
            assert (runs["out"][name] / f"{stem}.pdf").read_bytes()[:4] == b"%PDF", (name, stem)


def test_the_data_files_keep_every_character(runs):
    lines = [orjson.loads(line) for line in (runs["out"]["score"] / "conversations.jsonl").read_bytes().splitlines()]
    ids = {line["conversation_id"] for line in lines}
    for i, payload in enumerate(PAYLOADS.values()):
        assert f"{payload}#{i}:ESC" in ids
    board = (runs["out"]["leaderboard"] / "leaderboard.csv").read_text(encoding="utf-8")
    assert MODELS[2] in board and "$\\frac{$" in board


@pytest.mark.parametrize("name", ["score", "score-b", "compare", "compare-names", "leaderboard", "leaderboard-eval"])
def test_no_payload_is_raw_on_a_page(runs, name):
    page = _pages(runs)[name]
    outside = _outside_data(page)
    for char in HIDDEN:
        assert char not in outside, repr(char)
    assert "<svg onload" not in page.lower() and "<b>&amp;" not in page
    tags = _tags(page)
    assert page.lower().count("</script") == [t for t, _ in tags.tags].count("script")  # none ended early
    for tag, attrs in tags.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)  # no event handler
        for value in attrs.values():
            assert not (value or "").strip().lower().startswith("javascript:"), (tag, attrs)
    if name.startswith("score") or name.startswith("compare"):
        assert "{{ 7*7 }}" in outside  # shown as it is, never read as a template
    longest = max(map(len, outside.splitlines()))
    assert longest <= LINE_BOUND, longest
    assert "unsafe-inline" not in tags.meta["Content-Security-Policy"]


def test_the_page_shows_hidden_characters_by_their_code_point(runs):
    outside = _outside_data(_pages(runs)["score"])
    for shown in ("&lt;U+202E&gt;lanimreT&lt;U+2066&gt;x", "transfer&lt;U+200B&gt;_to_human",
                  "a&lt;U+000A&gt;&lt;U+000A&gt;b", "nul&lt;U+0000&gt;x", "...(100,000 characters in all)...",
                  "$\\frac{$"):
        assert shown in outside, shown


@pytest.mark.parametrize("name", ["leaderboard/leaderboard.md", "leaderboard/differences.md",
                                  "leaderboard-eval/leaderboard.md", "leaderboard-eval/differences.md"])
def test_the_markdown_tables_keep_their_columns(runs, name):
    text = _markdown_files(runs)[name]
    for char in (*HIDDEN, "\x1b"):
        assert char not in text, repr(char)
    assert max(map(len, text.splitlines())) <= LINE_BOUND
    rendered = MarkdownIt("commonmark", {"html": False}).enable("table").render(text)
    head = len(re.findall(r"<th[ >]", rendered[rendered.index("<thead>"):rendered.index("</thead>")]))
    body = rendered[rendered.index("<tbody>"):rendered.index("</tbody>")]
    rows = body.split("</tr>")[:-1]
    assert len(rows) == (3 if name.endswith("leaderboard.md") else 3 * 4)  # 3 pairs of models, 4 figures each
    assert all(len(re.findall(r"<td[ >]", row)) == head for row in rows)
    assert "<svg" not in rendered and "<b>" not in rendered and "<code>x</code>" not in rendered


# ------------------------------------------------------------------ in a browser
#
# Headless Chromium, driven by Playwright's sync API in a thread of its own: tests/e2e/test_report_browser.py holds
# a browser for the whole session, and one thread runs one Playwright at a time. The thread looks at the pages and
# gives back what it saw; the tests below read it.

def _width(tab) -> int:
    return tab.evaluate("Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")


def _dialog_width(tab) -> int:
    return tab.evaluate("(() => { const d = document.querySelector('dialog#detail');"
                        " return Math.max(d.scrollWidth, d.getBoundingClientRect().width); })()")


def _hidden_in_text(tab) -> list[str]:
    text = tab.evaluate("document.body.innerText")
    return [repr(char) for char in HIDDEN if char != "\r" and char in text]


def _open_each(tab, rows, most: int) -> int:
    """Open the first ``most`` rows' dialogs one after the other: the widest dialog."""
    widest = 0
    for i in range(min(rows.count(), most)):
        rows.nth(i).click()
        widest = max(widest, _dialog_width(tab)) if tab.locator("dialog#detail").is_visible() else 10 ** 9
        tab.keyboard.press("Escape")
    return widest


def _score_page(tab, path: Path) -> dict:
    tab.goto(path.as_uri())
    seen = {"width": _width(tab),
            "header": tab.locator("header.top").evaluate("e => getComputedStyle(e).backgroundColor"),
            "rows": tab.locator("#conversations-table tbody tr").count(),
            "status": tab.locator("#conversations-table .status").inner_text()}
    seen["dialog_width"] = _open_each(tab, tab.locator("#conversations-table tbody tr"), 100)
    seen["hidden"] = _hidden_in_text(tab)
    tab.fill("input[name=conversation]", "lanimreT")  # the reversed name: shown with its override
    tab.locator("#conversations-table tbody tr").first.click()
    dialog = tab.locator("dialog#detail")
    seen["bidi_title"] = dialog.locator("h3").inner_text()
    seen["bidi_calls"] = dialog.locator("ol.calls code").all_inner_texts()
    tab.keyboard.press("Escape")
    seen["width_after"] = _width(tab)
    return seen


def _planted_page(tab, path: Path, folder: Path) -> dict:
    page = path.read_text(encoding="utf-8")
    policy = _tags(page).meta["Content-Security-Policy"]
    plant = ('<img src="x" onerror="document.title=\'PLANTED\'">'
             '<div id="planted" onclick="document.title=\'PLANTED\'">click</div>'
             "<script>document.title='PLANTED'</script><p style=\"width:99999px\">wide</p>")
    planted = folder / "planted.html"
    planted.write_text(page.replace("<body>", "<body>" + plant, 1), encoding="utf-8")
    tab.goto(planted.as_uri())
    tab.click("#planted")
    seen = {"policy": policy, "title": tab.title(), "width": _width(tab)}
    tab.locator("#conversations-table tbody tr").first.click()  # the page's own script still works
    seen["turns"] = tab.locator("dialog#detail section.turn").count()
    bare = folder / "bare.html"  # the plant is real: without the policy it runs
    bare.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", planted.read_text("utf-8")),
                    encoding="utf-8")
    tab.goto(bare.as_uri())
    seen["bare_title"] = tab.title()
    return seen


def _compare_page(tab, path: Path) -> dict:
    tab.goto(path.as_uri())
    rows = tab.locator("#disagreements-table tbody tr")
    return {"width": _width(tab), "rows": rows.count(), "dialog_width": _open_each(tab, rows, 12),
            "hidden": _hidden_in_text(tab)}


def _study_page(tab, path: Path) -> dict:
    tab.goto(path.as_uri())
    cells = tab.locator("table td.align-right")
    return {"width": _width(tab), "right": cells.count(),
            "align": cells.first.evaluate("e => getComputedStyle(e).textAlign") if cells.count() else None}


def _browse(runs, folder: Path) -> dict:
    """What Chromium shows of each page (run in a thread of its own)."""
    from playwright.sync_api import sync_playwright

    seen = {}
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        for name, look in (("score", lambda tab: _score_page(tab, runs["out"]["score"] / "report.html")),
                           ("planted", lambda tab: _planted_page(tab, runs["out"]["score"] / "report.html", folder)),
                           *((name, lambda tab, name=name: _compare_page(tab, runs["out"][name] / "report.html"))
                             for name in ("compare", "compare-names")),
                           *((name, lambda tab, name=name: _study_page(tab, runs["out"][name] / "report.html"))
                             for name in ("leaderboard", "leaderboard-eval"))):
            context = chromium.new_context(viewport=VIEWPORT)
            tab = context.new_page()
            errors = []
            tab.on("console", lambda message, errors=errors: errors.append(message.text)
                   if message.type == "error" else None)
            tab.on("pageerror", lambda error, errors=errors: errors.append(str(error)))
            seen[name] = {**look(tab), "errors": errors}
            context.close()
        chromium.close()
    return seen


@pytest.fixture(scope="module")
def shown(runs, tmp_path_factory):
    """What the browser showed of each page (or a skip that says why there is no browser)."""
    pytest.importorskip("playwright.sync_api", reason="playwright is not installed (pip install playwright)")
    why = install_chromium()
    if why is not None:
        pytest.skip(why)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(_browse, runs, tmp_path_factory.mktemp("planted")).result()


def test_the_score_page_in_a_browser(shown):
    seen = shown["score"]
    assert seen["width"] <= VIEWPORT["width"]  # was 773,680 px: the unmarked tool's 100,000-character name
    assert seen["header"] == "rgb(244, 246, 248)"  # the page's own style applies
    assert seen["rows"] == 3 * len(PAYLOADS) and seen["status"].startswith("Showing 1")  # its own script runs
    assert seen["dialog_width"] <= VIEWPORT["width"]  # was 864,534 px
    assert seen["hidden"] == []
    assert seen["bidi_title"].startswith("Conversation <U+202E>lanimreT<U+2066>x#6:")
    assert "<U+202E>lanimreT<U+2066>x" in seen["bidi_calls"]
    assert not any("\u202e" in code for code in seen["bidi_calls"])
    assert seen["width_after"] <= VIEWPORT["width"] and seen["errors"] == []


def test_an_inline_handler_planted_in_the_page_does_not_run(shown):
    seen = shown["planted"]
    assert "'unsafe-inline'" not in seen["policy"]
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/]+=*'", seen["policy"])
    assert seen["title"] != "PLANTED"  # neither onerror, nor onclick, nor the planted script
    assert seen["width"] <= VIEWPORT["width"]  # nor the planted style attribute
    assert seen["turns"] >= 1  # the page's own script still opens a timeline
    assert seen["bare_title"] == "PLANTED"  # and the plant is real: without the policy it runs


@pytest.mark.parametrize("name", ["compare", "compare-names"])
def test_the_compare_page_in_a_browser(shown, name):
    seen = shown[name]
    assert seen["width"] <= VIEWPORT["width"] and seen["rows"] > 0
    assert seen["dialog_width"] <= VIEWPORT["width"]
    assert seen["hidden"] == [] and seen["errors"] == []


@pytest.mark.parametrize("name", ["leaderboard", "leaderboard-eval"])
def test_the_leaderboard_page_in_a_browser(shown, name):
    seen = shown[name]
    assert seen["width"] <= VIEWPORT["width"]
    assert seen["right"] > 0 and seen["align"] == "right"  # its alignment: a class, as the policy allows
    assert seen["errors"] == []
