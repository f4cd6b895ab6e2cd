"""`incast compare DIR_A DIR_B`: the differences between two runs' summaries."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: At most this many metrics are drawn (the largest relative changes).
PLOT_TOP = 20


@dataclass(frozen=True)
class MetricDiff:
    key: str
    a: Any
    b: Any

    @property
    def numeric(self) -> bool:
        return _num(self.a) and _num(self.b)

    @property
    def changed(self) -> bool:
        if self.numeric:
            return float(self.a) != float(self.b)
        return self.a != self.b

    @property
    def relative(self) -> float:
        """(b - a) / |a|; inf when a is 0 and b is not; nan when not numeric."""
        if not self.numeric:
            return math.nan
        a, b = float(self.a), float(self.b)
        if a == b:
            return 0.0
        if a == 0:
            return math.inf if b > 0 else -math.inf
        return (b - a) / abs(a)


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and not math.isnan(x)


def _summary(directory: Path) -> dict:
    path = directory / "summary.json"
    if not path.is_file():
        raise ValueError(f"{directory} has no summary.json (is it the output of incast run?)")
    return json.loads(path.read_text(encoding="utf-8"))


def compare_dirs(dir_a: Path, dir_b: Path) -> list[MetricDiff]:
    """Every summary metric of A and B (flattened key paths), in A's order."""
    from .combine import flatten_summary

    a, b = flatten_summary(_summary(dir_a)), flatten_summary(_summary(dir_b))
    keys = list(a) + [k for k in b if k not in a]
    return [MetricDiff(k, a.get(k), b.get(k)) for k in keys]


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, int) and not isinstance(x, bool):
        return f"{x:,}"
    return str(x)


def table_of(
    diffs: list[MetricDiff], dir_a: Path, dir_b: Path, show_all: bool = False
) -> tuple[str, Any]:
    """A one-line verdict and the table of metrics (None when there is nothing to list)."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    changed = [d for d in diffs if d.changed]
    title = (
        f"{dir_a} -> {dir_b}: {len(changed)} of {len(diffs)} summary metrics differ"
        if changed
        else f"{dir_a} and {dir_b}: identical summary metrics ({len(diffs)})"
    )
    t = Table(box=box.SIMPLE_HEAVY)
    t.add_column("metric")
    t.add_column("A", justify="right")
    t.add_column("B", justify="right")
    t.add_column("change", justify="right")
    for d in diffs if show_all else changed:
        rel = d.relative
        if math.isnan(rel):
            change = "changed" if d.changed else ""
        elif math.isinf(rel):
            change = "from 0"
        else:
            change = f"{rel * 100:+.1f} %"
        style = "green" if rel < 0 else "red" if rel > 0 else None
        t.add_row(escape(d.key), _fmt(d.a), _fmt(d.b), change, style=style)
    return title, (t if t.row_count else None)


def plot_comparison(diffs: list[MetricDiff], path: Path, name_a: str, name_b: str) -> Path | None:
    """A horizontal bar per metric: relative change from A to B (largest first)."""
    rows = [d for d in diffs if d.numeric and d.changed and not math.isinf(d.relative)]
    if not rows:
        return None
    rows.sort(key=lambda d: -abs(d.relative))
    rows = rows[:PLOT_TOP][::-1]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 0.3 * len(rows) + 1.5))
    vals = [d.relative * 100 for d in rows]
    colors = ["C2" if v < 0 else "C3" for v in vals]
    ax.barh(range(len(rows)), vals, color=colors)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([d.key for d in rows], fontsize="small")
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlabel(f"change from {name_a} to {name_b} (%)")
    ax.set_title(
        f"Summary metrics, {name_b} vs {name_a} ({len(rows)} largest changes)", fontsize="medium"
    )
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path
