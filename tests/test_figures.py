"""Every PNG incast writes goes through `figures.save_figure`, at one
resolution (`FIGURE_DPI` = 120: a run's plots were 120 dpi, a sweep's and
`incast compare`'s chart 110; now all are 120)."""

from __future__ import annotations

import ast
import struct
from pathlib import Path

import incast
from conftest import TINY_TOML
from incast.compare import MetricDiff, plot_comparison
from incast.figures import FIGURE_DPI
from incast.plots import plot_slowdown_by_size

PACKAGE = Path(incast.__file__).parent


def _png_pixels(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])  # the IHDR chunk's width and height


def _png_dpi(path: Path) -> float:
    """Pixels per inch from the PNG's pHYs chunk (pixels per metre)."""
    data = path.read_bytes()
    at = data.index(b"pHYs")
    per_metre, _, unit = struct.unpack(">IIB", data[at + 4 : at + 13])
    assert unit == 1  # metres
    return per_metre * 0.0254


def test_the_dpi_is_the_one_rule():
    assert FIGURE_DPI == 120


def test_a_run_plot_and_the_compare_chart_share_it(tmp_path):
    run_plot = plot_slowdown_by_size(incast.run(TINY_TOML), tmp_path / "run.png")
    assert _png_pixels(run_plot) == (7 * FIGURE_DPI, round(4.2 * FIGURE_DPI))
    diffs = [MetricDiff("drops.packets", 10, 20), MetricDiff("overall.slowdown.p99", 2.0, 1.5)]
    chart = plot_comparison(diffs, tmp_path / "chart.png", "a", "b")
    assert chart is not None
    assert _png_pixels(chart)[0] == 9 * FIGURE_DPI  # the chart is 9 inches wide
    for path in (run_plot, chart):
        assert abs(_png_dpi(path) - FIGURE_DPI) < 0.5, path


def test_only_figures_py_writes_a_png():
    """No module calls matplotlib's `savefig` but figures.py."""
    writers = sorted(
        path.name
        for path in PACKAGE.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr == "savefig"
    )
    assert writers == ["figures.py"]
