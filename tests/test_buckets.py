"""`buckets.bucket_rows`: the one way a summary's size buckets become rows, for
the slowdown tables, a sweep's comparisons and the slowdown plots."""

from __future__ import annotations

import incast
from conftest import INCAST_SCENARIO
from incast.buckets import ALL, bucket_rows
from incast.combine import _metric_items
from incast.experiment import Comparison
from incast.html_plots import slowdown_by_size
from incast.report import bucket_table

SUMMARY = {
    "buckets": [
        {"label": "<10KB", "count": 3, "slowdown": {"p99": 2.0}, "lo": 0, "hi": 10_000},
        {"count": 0, "slowdown": None},  # no label: "?"
        "not a bucket",
    ],
    "buckets_background": [{"label": "<10KB", "count": 1, "slowdown": {"p99": 1.5}}],
    "overall": {"count": 3, "slowdown": {"p99": 2.0}},
}


def test_rows_labels_and_the_row_of_all_flows():
    rows = bucket_rows(SUMMARY)
    assert [(row.label, row.overall) for row in rows] == [
        ("<10KB", False),
        ("?", False),
        (ALL, True),
    ]
    assert [row.has_flows for row in rows] == [True, False, True]
    assert [row.has_slowdown for row in rows] == [True, False, True]
    assert rows[1].metric("slowdown") == {}
    assert [row.label for row in bucket_rows(SUMMARY, overall=False)] == ["<10KB", "?"]
    # The background buckets have no row of all flows (`overall` is every flow's).
    background = bucket_rows(SUMMARY, "buckets_background")
    assert [(row.label, row.overall) for row in background] == [("<10KB", False)]
    assert bucket_rows({}) == []


def test_every_reader_gets_the_same_rows():
    """The terminal's slowdown table, a comparison and the slowdown plot of one
    run name the same buckets, in the same order."""
    summary = incast.run(INCAST_SCENARIO).summary
    rows = bucket_rows(summary)
    table = bucket_table(summary)
    assert table is not None
    assert list(table.columns[0].cells) == [row.label for row in rows]
    comparison = Comparison(
        name="c",
        baseline="base",
        variants=("v",),
        metric="slowdown",
        stats=("p99",),
        buckets="buckets",
        points=None,
        better="lower",
    )
    assert [label for label, _, _ in _metric_items(comparison, summary)] == [
        row.label for row in rows
    ]
    figure = slowdown_by_size(type("R", (), {"summary": summary})())
    plotted = [row.label for row in rows if row.has_slowdown and not row.overall]
    assert list(figure["data"][0]["x"]) == plotted
