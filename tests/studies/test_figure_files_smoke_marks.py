"""A smoke run's figures carry a mark, as its report.md and report.html carry the smoke banner (issue 30: the
capacity study's PNGs looked like the study's own)."""
from __future__ import annotations

from matplotlib.figure import Figure

from escalation.studies._figure_files import SMOKE_MARK, save_figure


def _figure() -> Figure:
    fig = Figure(figsize=(3, 2))
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1])
    ax.set_title("a figure")
    return fig


def test_a_smoke_figure_carries_the_mark_on_top(tmp_path):
    fig = _figure()
    paths = save_figure(fig, tmp_path / "smoke", smoke=True)
    assert [p.name for p in paths] == ["smoke.png", "smoke.pdf"] and all(p.stat().st_size for p in paths)
    (mark,) = [t for t in fig.texts if t.get_text() == SMOKE_MARK]
    assert mark.get_position() == (0.5, 1.0) and mark.get_va() == "bottom"  # above the title, inside the PNG
    assert "not fit for conclusions" in SMOKE_MARK


def test_a_full_run_figure_has_no_mark(tmp_path):
    fig = _figure()
    save_figure(fig, tmp_path / "full")
    assert fig.texts == []


def test_a_smoke_mark_makes_the_png_taller(tmp_path):
    from PIL import Image

    save_figure(_figure(), tmp_path / "full")
    save_figure(_figure(), tmp_path / "smoke", smoke=True)
    with Image.open(tmp_path / "full.png") as full, Image.open(tmp_path / "smoke.png") as smoke:
        assert smoke.height > full.height  # the tight box takes the mark in: it is not cut off
