"""What a study's run leaves for people (issue 19, points 1c and 5), from the smoke runs of every study command
and of ``escalation reproduce``: ``report.html`` beside ``report.md``, self-contained, with every figure and table
of the run; a smoke run's report says so and draws no findings; ``run.json`` holds the run's wall time; and the
steps after the cells show a spinner on a terminal only.

The five commands run once, as subprocesses (``python -m escalation``), two at a time, at their smallest sizes;
reproduce's standard error is a terminal (a pseudo-terminal), the others' a pipe.
"""
from __future__ import annotations

import base64
import os
import pty
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

import orjson
import pytest

from escalation.figures import SMOKE_BANNER, study_page

from ..figures.test_study_page import CSP, Page, fetches

pytestmark = pytest.mark.slow  # runs commands end to end; deselect with -m 'not slow'


#: The smallest run of each command: ``--smoke`` and the fewest data sets its checks allow (``--help``).
RUNS = {
    "coverage": ["study", "coverage", "--nsim", "10"],
    "sample-size": ["study", "sample-size", "--nsim", "20"],
    "judges": ["study", "judges", "--nsim", "2"],
    "differences": ["study", "differences", "--nsim", "2"],
    "reproduce": ["reproduce", "--expected-pairs", "100"],
}
#: The run whose standard error is a terminal.
ON_A_TERMINAL = "reproduce"
#: Seconds a command may take to start (imports) and to end, outside the run that run.json times.
START_UP = 3.0
TIMEOUT = 600


def _read_all(fd: int, into: list[bytes]) -> None:
    """Read a pseudo-terminal until the child closes it (EIO on Linux)."""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            return
        if not data:
            return
        into.append(data)


def _run(name: str, out: Path) -> dict:
    """Run one command into ``out``; its exit code, standard error and wall time (``time.perf_counter``)."""
    command = [sys.executable, "-m", "escalation", *RUNS[name], "--smoke", "--out", str(out)]
    if name != ON_A_TERMINAL:
        clock = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT)
        return {"code": done.returncode, "err": done.stderr, "seconds": time.perf_counter() - clock}
    master, slave = pty.openpty()
    chunks: list[bytes] = []
    reader = threading.Thread(target=_read_all, args=(master, chunks), daemon=True)
    reader.start()
    clock = time.perf_counter()
    try:
        done = subprocess.run(command, stdout=subprocess.PIPE, stderr=slave, timeout=TIMEOUT,
                              env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "120"})
    finally:
        os.close(slave)
    seconds = time.perf_counter() - clock
    reader.join(timeout=30)
    os.close(master)
    return {"code": done.returncode, "err": b"".join(chunks).decode("utf-8", "replace"), "seconds": seconds}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each command's folder, with what its run printed on standard error and its measured wall time."""
    root = tmp_path_factory.mktemp("smoke")
    with ThreadPoolExecutor(max_workers=2) as pool:  # the longest (coverage) first
        futures = {name: pool.submit(_run, name, root / name) for name in RUNS}
    found = {}
    for name, future in futures.items():
        result = future.result()
        assert result["code"] == 0, (name, result["err"][-2000:])
        out = root / name
        found[name] = {**result, "out": out, "facts": orjson.loads((out / "run.json").read_bytes()),
                       "html": (out / "report.html").read_text(encoding="utf-8"),
                       "markdown": (out / "report.md").read_text(encoding="utf-8")}
        found[name]["page"] = Page(found[name]["html"])
    return found


def _outputs(run: dict, suffix: str) -> list[Path]:
    return [run["out"] / name for name in run["facts"]["outputs"] if name.endswith(suffix)]


@pytest.mark.parametrize("name", RUNS)
def test_report_html_is_beside_report_md_and_listed_in_run_json(runs, name):
    run = runs[name]
    assert (run["out"] / "report.md").is_file() and (run["out"] / "report.html").is_file()
    assert {"report.md", "report.html"} <= set(run["facts"]["outputs"])
    assert all((run["out"] / output).is_file() for output in run["facts"]["outputs"])


@pytest.mark.parametrize("name", RUNS)
def test_the_page_fetches_nothing_and_declares_so(runs, name):
    page, html = runs[name]["page"], runs[name]["html"]
    assert fetches(page) == []
    assert not re.search(r"https?://", " ".join(value for _, _, value in page.attributes))
    assert "script" not in page.tags and "link" not in page.tags and "url(" not in html and "@import" not in html
    policies = page.meta("Content-Security-Policy")
    assert len(policies) == 1 and policies[0].startswith(CSP)


@pytest.mark.parametrize("name", RUNS)
def test_every_figure_of_the_run_is_inlined(runs, name):
    run = runs[name]
    figures = _outputs(run, ".png")
    assert figures, "the run lists no figure"
    shown = run["page"].images()
    for path in figures:  # the base64 of the file's bytes (RFC 4648), as the page's data URI holds it
        assert f"data:image/png;base64,{base64.b64encode(path.read_bytes()).decode('ascii')}" in shown, path.name
    assert len(shown) == len(figures)  # each once


def _markdown_rows(text: str) -> list[list[str]]:
    """The rows of the Markdown tables of ``text``, the separator rows left out, each cell stripped."""
    rows = []
    for line in text.splitlines():
        if line.startswith("|") and not re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line.strip()):
            rows.append([cell.strip() for cell in line.strip()[1:-1].split("|")])
    return rows


@pytest.mark.parametrize("name", RUNS)
def test_every_table_of_the_run_is_on_the_page_cell_for_cell(runs, name):
    run = runs[name]
    tables = [path for path in _outputs(run, ".md") if path.name != "report.md"]
    assert tables, "the run lists no Markdown table"
    page_rows = run["page"].rows
    for path in tables:
        rows = _markdown_rows(path.read_text(encoding="utf-8"))
        assert rows, path.name
        missing = [row for row in rows if row not in page_rows]
        assert missing == [], (path.name, missing[:3])
    for row in _markdown_rows(run["markdown"]):  # and the report's own tables, whose cells may hold `code`, **bold**
        assert [re.sub(r"`|\*\*", "", cell) for cell in row] in page_rows, row


@pytest.mark.parametrize("name", RUNS)
def test_the_headings_of_report_md_are_headings_of_the_page(runs, name):
    run = runs[name]
    wanted = [(f"h{len(marks)}", re.sub(r"`|\*\*", "", text).strip())
              for marks, text in re.findall(r"^(#{1,2}) (.+)$", run["markdown"], flags=re.MULTILINE)]
    assert wanted and wanted[0][0] == "h1"
    assert [h for h in wanted if h not in run["page"].headings] == []


@pytest.mark.parametrize("name", RUNS)
def test_a_smoke_report_carries_the_banner_on_top(runs, name):
    run = runs[name]
    lines = run["markdown"].splitlines()
    assert lines[0].startswith("# ") and lines[1] == "" and lines[2] == f"> {SMOKE_BANNER}"
    banner = run["page"].banner
    assert banner is not None and banner.startswith("Smoke run.") and "not fit for conclusions" in banner
    assert run["html"].split("<main>", 1)[1].lstrip().startswith('<div class="warnings" id="smoke-run"')  # first


def test_a_full_size_page_of_the_same_report_has_no_banner(runs):
    run = runs["coverage"]
    title, _, rest = run["markdown"].partition("\n")
    full = rest.replace(f"\n> {SMOKE_BANNER}\n", "", 1)
    assert full != rest
    figures = {path.name: path.read_bytes() for path in _outputs(run, ".png")}
    html = study_page(title + "\n" + full, title=title[2:], figures=figures, tables={}, smoke=False)
    page = Page(html)
    assert page.banner is None and "Smoke run" not in html
    assert [h for h in run["page"].headings if h[0] in ("h1", "h2") and "of this run" not in h[1]] == \
        [h for h in page.headings if h[0] in ("h1", "h2") and "of this run" not in h[1]]


#: What the full studies conclude (the first words of findings in studies/_coverage_report.py, _differences.py
#: and _sample_size.py), which a smoke run's report must not say.
FULL_FINDINGS = {
    "coverage": ("**Ignoring clustering fails.**", "**The paper's interval (rho estimated, 1 where undefined).**",
                 "**Rare errors concentrated", "**Misses near the boundary are one-sided.**"),
    "differences": ("**Differences (compare).**", "**By the number of scenarios.**", "**Mode B, corrected rate**",
                    "**Where the correction does not exist.**"),
    "sample-size": ("So `plan_difference` plans for the t test by default", "there every test is conservative"),
}


@pytest.mark.parametrize("name", FULL_FINDINGS)
def test_a_smoke_report_draws_none_of_the_full_studys_findings(runs, name):
    markdown = runs[name]["markdown"]
    assert [words for words in FULL_FINDINGS[name] if words in markdown] == []
    if name != "sample-size":  # its findings section holds one neutral sentence
        findings = markdown.split("## Findings", 1)[1].split("\n## ", 1)[0]
        assert findings.strip().startswith("Not drawn from a smoke run") and findings.count("\n-") == 0


@pytest.mark.parametrize("name", RUNS)
def test_elapsed_is_the_wall_time_of_the_run(runs, name):
    run, facts = runs[name], runs[name]["facts"]
    elapsed, measured = facts["elapsed_seconds"], run["seconds"]
    assert 0 < facts["cells_seconds"] <= elapsed <= measured
    started, finished = (datetime.fromisoformat(facts[key]) for key in ("started", "finished"))
    assert abs((finished - started).total_seconds() - elapsed) < 0.002  # run.json's times, to the millisecond
    if name == "coverage":  # most of its time is drawing figures, after the cells: counted
        assert elapsed >= 0.5 * (measured - START_UP), (elapsed, measured)


def test_the_steps_after_the_cells_show_a_spinner_on_a_terminal_only(runs):
    shown = runs[ON_A_TERMINAL]["err"]
    for words in ("scoring the worked example", "writing the tables", "drawing the figures",
                  "writing report.md and report.html"):
        assert words in shown, words  # each drawn when its step begins
    assert re.search("[\u2800-\u28ff]", shown)  # rich's default spinner ("dots") is drawn with Braille patterns
    for name in RUNS:
        if name != ON_A_TERMINAL:
            assert "writing report.md and report.html" not in runs[name]["err"], name
