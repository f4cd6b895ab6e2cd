"""The reports' HTML without a browser: every section of the terminal report,
numbers formatted as the terminal formats them, the interactive plots (plotly)
with their series decimated, one copy of plotly.js, the same bytes for the same
run; the sweep report's run count in `incast validate`'s words. Rendering in
Chromium is checked in test_html.py."""

from __future__ import annotations

import base64
import html as html_escape
import io
import re

import numpy as np
import pandas as pd
import pytest
from rich.console import Console
from rich.table import Table
from rich.text import Text

import incast
from conftest import POISSON_TOML, SCENARIOS, TINY_DICT, TINY_TOML
from incast.experiment import describe_runs, load_experiment
from incast.html import run_report_html, sweep_report_html
from incast.html_plots import (
    FIGURES,
    MAX_POINTS,
    _merge_close,
    _paused_intervals,
    _rate_gbps,
    cdf_points,
    decimate_extremes,
    library_script,
    run_figures,
)
from incast.report import print_summary, queue_series_text, summary_sections
from test_api import CM_TOML

LIBRARY = re.compile(r'<script type="text/javascript" id="plotly-library">.*?</script>', re.S)


def _without_library(page: str) -> str:
    return LIBRARY.sub("", page)


def _points(series) -> int:
    """How many values a trace's series holds: a list, or a typed array
    (float64 in base64)."""
    if series is None:
        return 0
    if isinstance(series, dict):
        assert series["dtype"] == "f8"
        return len(base64.b64decode(series["bdata"])) // 8
    return len(series)


class _TableRecorder(Console):
    """A console that keeps every table the terminal report prints."""

    def __init__(self) -> None:
        super().__init__(file=io.StringIO(), width=200)
        self.tables: list[Table] = []

    def print(self, *objects, **kwargs) -> None:
        self.tables += [o for o in objects if isinstance(o, Table)]
        super().print(*objects, **kwargs)


def _plain(cell) -> str:
    return cell.plain if isinstance(cell, Text) else Text.from_markup(str(cell)).plain


def _shown(table: Table) -> tuple[str, list[list[str]]]:
    """A table as a reader sees it: its title and its columns' cells."""
    return _plain(table.title), [[_plain(c) for c in col.cells] for col in table.columns]


def _every_block(res) -> None:
    """Give a tiny run's summary every block the terminal report has a section for."""
    s = res.summary
    s["buckets_background"] = s["buckets"]
    s["by_cc"] = {
        "cubic": {"buckets": s["buckets"]},
        # Long-lived flows only: no table, a note saying why.
        "bbr": {"flows": 2, "buckets": [{"label": "all", "count": 0}]},
    }
    s["incasts"] = {"count": 2, "finished": 2, "completion_us": {"mean": 12.5, "p99": 20.25}}
    s["pfc"] = {"pause_frames": 3, "paused_time_us": 15219.048365}
    s["edge"] = {"rule": "smart_pause", "gated_hosts": 4, "pauses": 7, "warnings": ["late"]}
    s["ci"] = {"cips_sent": 5, "table_full": 1, "flows_isolated": 2}
    s["cm"] = {
        "scheme": "ecm",
        "feedback_sent": 120,
        "feedback_received": 118,
        "limited_at_end": 3,
        "reaction_points": 8,
        "limited_rate_gbps": {"mean": 1.5, "min": 0.25},
        "receive_buffers": [{"host": 0, "pauses": 4, "peak_bytes": 150000}],
        "input_buffers": {"dropped_frames": 0, "pauses": 9, "peak_bytes": 264000},
    }
    s["nic_queues"] = {
        "split": "cc",
        "limit_bytes": 256_000,
        "queues": {"dctcp": {"max_bytes": 30_000, "mean_bytes": 1_000.0}},
    }
    s["nic_receive"] = {
        "pcie_gbps": 5.0,
        "queues": {"shared": {"max_bytes": 1_000_000, "ecn_marks": 12, "drops": 3}},
    }
    s["pcie"] = {"gbps": 8.0, "max_host_tx_bytes": 2_500_000}
    s["a_future_block"] = {"widgets": 41_000}


def _assert_sections_in_page(sections, warnings, page: str) -> None:
    """Every section is on the page: each table under its title, its cells as
    the terminal shows them; each note about a table left out; each warning."""
    for section in sections:
        if section.table is None:
            assert f">{html_escape.escape(section.note)}</p>" in page, section.note
            continue
        title, columns = _shown(section.table)
        assert f">{html_escape.escape(title)}</h2>" in page, title
        for text in (text for column in columns for text in column):
            assert f">{html_escape.escape(text)}</td>" in page, (title, text)
    for warning in warnings:
        assert f"</b> {html_escape.escape(warning)}</p>" in page, warning


def test_every_terminal_section_is_in_the_html():
    """cm, nic and pcie were missing from the HTML; now the terminal and the page
    both render `summary_sections`: the terminal prints exactly its tables and
    notes, and each is on the page, its cells as the terminal shows them."""
    res = incast.run(TINY_TOML)
    _every_block(res)
    sections, warnings = summary_sections(res.summary)
    titles = [section.title for section in sections]
    for title in ("Congestion management", "NIC", "Edge pausing", "Congestion isolation"):
        assert title in titles
    notes = [section.note for section in sections if section.table is None]
    assert any("bbr flows" in note for note in notes)
    console = _TableRecorder()
    print_summary(res, console)
    expected = [_shown(section.table) for section in sections if section.table is not None]
    assert [_shown(table) for table in console.tables] == expected
    terminal = " ".join(console.file.getvalue().split())
    for text in notes + warnings:
        assert text in terminal, text
    page = _without_library(run_report_html(res))
    _assert_sections_in_page(sections, warnings, page)
    assert "host PCIe transmit cap 8.00 Gb/s" in page and "busiest host sent 2.5 MB" in page
    assert "late" in warnings  # the edge-pausing section's warning


def test_the_html_leaves_out_the_tables_the_terminal_leaves_out():
    """The page showed a 'dctcp flows' table repeating the first one and said
    nothing of the long-lived CUBIC flow; now it has the terminal's tables and
    its notes about the ones left out."""
    res = incast.run(SCENARIOS / "dctcp_beside_cubic.toml")
    page = _without_library(run_report_html(res))
    sections, warnings = summary_sections(res.summary)
    _assert_sections_in_page(sections, warnings, page)
    assert "Slowdown by flow size, dctcp flows" not in page
    assert "Slowdown by flow size, cubic flows" not in page
    assert "no separate table for the dctcp flows" in page
    assert "no slowdown table for the cubic flows: none of them (1 flow) finished" in page


def test_a_run_without_flows_says_why_it_has_no_slowdown_table():
    res = incast.run(CM_TOML)
    assert res.summary["flows"]["total"] == 0
    page = _without_library(run_report_html(res))
    assert "no slowdown table: the run has no flows (its traffic is packets only)" in page
    assert "Slowdown (FCT / ideal FCT) by flow size" not in page


def test_the_queue_note_says_what_the_terminal_says():
    """Not "3 of 3 candidate ports (the 16 switch ports with the largest peak queue)"."""
    res = incast.run(POISSON_TOML)
    res.summary["queue_series"] = {
        "ports": "the 16 switch ports with the largest peak queue",
        "candidates": 3,
        "written": 3,
        "points": 301,
        "interval_us": 40.0,
    }
    page = _without_library(run_report_html(res))
    said = queue_series_text(res.summary)
    assert said is not None and "every switch port that queued (3 of 3)" in said
    assert html_escape.escape(said[1:]) in page
    assert "3 of 3 candidate ports" not in page


def test_the_sweep_report_counts_runs_as_validate_does():
    """It said "4 runs: 1 points x variants ..." (no seeds, "1 points")."""
    experiment = load_experiment(
        {
            "name": "one_point",
            "base": TINY_DICT,
            "seeds": [1, 2],
            "variants": {"dctcp": {}, "newreno": {"transport": {"cc": "newreno"}}},
        }
    )
    page = sweep_report_html(experiment, pd.DataFrame(), None, [])
    said = describe_runs(experiment)
    assert said == "4 runs (1 point x 2 variants x 2 seeds)"
    assert f"{said}, 0 finished; variants: dctcp, newreno." in page
    assert "1 points" not in page


def test_numbers_are_formatted_as_in_the_terminal():
    """`1.52e+04 us` in the HTML where the terminal says 15,219."""
    res = incast.run(TINY_TOML)
    res.summary["overall"]["fct_us"]["mean"] = 15219.048365
    res.summary["sim_time_us"] = 15219.048365
    terminal = io.StringIO()
    print_summary(res, Console(file=terminal, width=200))
    assert "15,219" in terminal.getvalue()
    page = _without_library(run_report_html(res))
    assert "<td>15,219</td>" in page
    assert "simulated 15.22 ms" in page
    assert not re.search(r"\d\.\d+e[+-]\d", page), "a number in scientific notation"


def test_a_congestion_management_run_has_its_plots_over_time():
    res = incast.run(CM_TOML)
    figures = {div_id: fig for div_id, _, fig in run_figures(res)}
    assert {"queues", "throughput", "pfc", "cm"} <= set(figures)
    assert "owd" not in figures and "slowdown-cdf" not in figures  # no flows, no edge
    # The PFC timeline: one row per paused port class, the total paused time its own.
    paused = res.pfc.groupby(["node", "port", "class"], observed=True).ngroups
    assert len(figures["pfc"]["data"]) == min(paused, 24)
    cm = figures["cm"]
    names = {t["name"] for t in cm["data"]}
    assert names >= {"mean rate of the limited flows", "flows rate-limited"}
    page = run_report_html(res)
    for div_id in figures:
        assert f'id="plot-{div_id}"' in page
    assert page.count('id="plotly-library"') == 1 and page.count("* plotly.js v") == 1


def test_the_same_run_gives_the_same_page():
    """Fixed plot ids, no wall time: a rerun writes the same bytes."""
    first = run_report_html(incast.run(POISSON_TOML))
    assert first == run_report_html(incast.run(POISSON_TOML))


def test_long_series_are_decimated_and_the_page_stays_small():
    toml = (
        POISSON_TOML.replace('duration = "1ms"', 'duration = "2ms"')
        + '[metrics]\nqueue_ports = "all"\nqueue_sample_interval = "100ns"\n'
    )
    res = incast.run(toml)
    per_port = res.queues.groupby(["node", "port"]).size()
    assert per_port.max() > 5 * MAX_POINTS  # the run really has long series
    for _, _, fig in run_figures(res):
        for trace in fig["data"]:
            assert _points(trace.get("x")) <= MAX_POINTS + 1
    page = run_report_html(res)
    library = len(library_script())
    assert len(page) - library < 1_000_000, f"{len(page) - library:,} bytes besides plotly.js"


def test_decimation_keeps_peaks_and_troughs():
    x = np.arange(100_000, dtype=float)
    y = np.sin(x / 700.0)
    y[31_337] = 9.0  # a one-sample spike
    y[77_777] = -9.0
    dx, dy = decimate_extremes(x, y, 1000)
    assert len(dx) <= 1001 and np.all(np.diff(dx) > 0)
    assert 31_337 in dx and 77_777 in dx and dy.max() == 9.0 and dy.min() == -9.0
    short = np.arange(10.0)
    assert decimate_extremes(short, short, 1000)[0] is short


def test_cdf_keeps_its_tail_whole():
    values = np.random.default_rng(1).lognormal(size=200_000)
    x, y = cdf_points(values, 2000)
    assert len(x) <= 2000 and np.all(np.diff(x) >= 0)
    assert x[-1] == values.max() and y[-1] == 1.0
    ranked = np.sort(values)
    np.testing.assert_array_equal(x[-500:], ranked[-500:])  # p99.75 onwards, every flow
    # Each kept point is where the exact CDF has it.
    assert np.all(ranked[np.round(y * len(values)).astype(int) - 1] == x)


def test_throughput_over_coarser_intervals_is_exact():
    t = np.arange(0, 10_001, dtype=float) * 1e6  # 10,001 samples, 1 us apart
    tx = np.cumsum(np.r_[0, np.full(10_000, 1250.0)])  # 1,250 B per us: 10 Gb/s
    tx[5000:] += 125_000  # a burst
    mid, gbps = _rate_gbps(t, tx)
    assert len(gbps) <= MAX_POINTS
    # Rate x interval adds back to the bytes sent.
    widths = np.diff(t[np.unique(np.linspace(0, len(t) - 1, MAX_POINTS + 1).astype(int))])
    assert np.sum(gbps * 1e9 / 8 * widths / 1e12) == pytest.approx(tx[-1])


def test_paused_intervals_from_the_event_log():
    events = pd.DataFrame(
        {
            "time_ps": [10, 20, 30, 35, 40, 50],
            "event": ["resume", "pause", "watchdog_trip", "resume", "pause", "watchdog_restore"],
        }
    )
    # A stray resume first, a pause never resumed (lasts to the end of the run).
    assert _paused_intervals(events, 100.0) == [(20.0, 35.0), (40.0, 100.0)]


def test_many_pauses_merge_into_a_bounded_timeline():
    starts = np.arange(10_000) * 100.0
    intervals = [(t, t + 60.0) for t in starts]  # 40 ps apart
    merged = _merge_close(intervals, gap=10.0, limit=500)
    assert len(merged) <= 500
    assert merged[0][0] == 0.0 and merged[-1][1] == starts[-1] + 60.0
    assert all(a[1] < b[0] for a, b in zip(merged, merged[1:]))  # disjoint, in order
    few = intervals[:3]
    assert _merge_close(few, gap=10.0, limit=500) == few


def test_every_figure_is_one_plotly_accepts():
    """The figures are written as plotly.js's plain data (building them through
    `plotly.graph_objects`, which checks each property, took a third of a second
    of every `incast run`). plotly's own checks still accept every one of them:
    a property plotly does not know, or a value of the wrong kind, is refused."""
    import plotly.graph_objects as go

    from test_edge import EDGE_TOML

    shown = set()
    for toml in (POISSON_TOML, CM_TOML, EDGE_TOML):
        for div_id, _, fig in run_figures(incast.run(toml)):
            checked = go.Figure(fig)  # raises ValueError on anything plotly refuses
            assert len(checked.data) == len(fig["data"]) > 0
            shown.add(div_id)
    assert shown == {div_id for div_id, _, _ in FIGURES}  # every kind of figure
    # The check bites: a misspelt property is refused.
    fig = run_figures(incast.run(POISSON_TOML))[0][2]
    fig["layout"]["xaxis"]["colour"] = "red"
    with pytest.raises(ValueError, match="colour"):
        go.Figure(fig)


def test_stacked_plots_are_laid_out_as_plotly_lays_out_subplots():
    """The congestion-management figure's three rows over one time axis are
    written by hand; plotly's `make_subplots` gives the same axes."""
    from plotly.subplots import make_subplots

    from incast.html_plots import _AXIS, _stacked_rows

    ours = _stacked_rows(3, 0.06)
    theirs = make_subplots(rows=3, cols=1, shared_xaxes=True, vertical_spacing=0.06)
    theirs = theirs.to_dict()["layout"]
    assert set(ours) == {k for k in theirs if "axis" in k}
    for name, axis in ours.items():
        look = {k: axis.pop(k) for k in _AXIS}
        assert look == _AXIS
        assert axis == theirs[name], name
