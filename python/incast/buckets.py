"""The flow-size bucket rows of a run's summary, built one way for every
reader: the slowdown tables of both reports (`report.bucket_table`), a sweep's
comparisons (`combine`), and the slowdown plots (`plots`, `html_plots`).

A row is a bucket of `summary["buckets"]` (or of `"buckets_background"`, the
flows that are not incast flows) with its label, and, for the main buckets,
the `overall` row of all flows, labelled "all"."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .fmt import is_number

#: The label of the row of all flows.
ALL = "all"


@dataclass(frozen=True)
class BucketRow:
    """One row: its label ("?" for a bucket without one), its statistics
    (count, slowdown, fct_us, lo, hi), and whether it is the row of all flows."""

    label: str
    stats: Mapping
    overall: bool = False

    def metric(self, name: str) -> Mapping:
        """A statistic's block (`slowdown`: mean, p50, ...); empty when the
        bucket has none (no measured flow)."""
        block = self.stats.get(name)
        return block if isinstance(block, Mapping) else {}

    @property
    def count(self) -> Any:
        return self.stats.get("count")

    @property
    def has_flows(self) -> bool:
        """Flows were measured in it (a count above 0, or statistics)."""
        count = self.count
        return (is_number(count) and count > 0) or isinstance(self.stats.get("slowdown"), Mapping)

    @property
    def has_slowdown(self) -> bool:
        """It has flows and their slowdown statistics (what a plot draws)."""
        return bool(self.count) and isinstance(self.stats.get("slowdown"), Mapping)


def bucket_rows(summary: Mapping, key: str = "buckets", *, overall: bool = True) -> list[BucketRow]:
    """The rows of `summary[key]` ("buckets" or "buckets_background"), then
    the row of all flows when `key` is "buckets", `overall` is asked for and
    the summary has one."""
    rows = [
        BucketRow(str(bucket.get("label", "?")), bucket)
        for bucket in summary.get(key) or []
        if isinstance(bucket, Mapping)
    ]
    whole = summary.get("overall")
    if overall and key == "buckets" and isinstance(whole, Mapping):
        rows.append(BucketRow(ALL, whole, overall=True))
    return rows
