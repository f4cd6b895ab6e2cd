"""`incast compare DIR_A DIR_B`: the differences between two runs' summaries.

Metrics are grouped by section (the summary's top-level keys) and sorted by
relative change, changes from zero first (a metric that was 0 in A: timeouts,
drops); the `warnings` are compared as lines added and removed. The chart of
the largest changes goes to the current directory unless `--out` names a file.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich import box
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from .fmt import format_number, format_value, glue, is_value
from .keypath import printable
from .report import Unbroken, print_line

#: At most this many metrics are drawn (the largest relative changes).
PLOT_TOP = 20
#: Sections listed last whatever their changes: the simulator's own counters
#: (events, packets in flight), not the network's.
LAST_SECTIONS = ("engine",)


class CompareError(ValueError):
    """A run directory or the chart's path that compare cannot use (the message says why)."""


@dataclass(frozen=True)
class MetricDiff:
    key: str
    a: Any
    b: Any

    @property
    def numeric(self) -> bool:
        return is_value(self.a) and is_value(self.b)

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
        return b / abs(a) - math.copysign(1.0, a)  # (b - a) / |a|, without overflow

    @property
    def section(self) -> str:
        """The summary's top-level key the metric is in: 'buckets[<1MB].fct_us.p99' -> 'buckets'."""
        match = re.match(r"[^.\[]+", self.key)
        return match.group(0) if match else self.key

    @property
    def from_zero(self) -> bool:
        """A number that was 0 in A and is not in B (not merely a change too
        large for a float, as from 1e308 to -1e308)."""
        return self.numeric and float(self.a) == 0 and float(self.b) != 0


@dataclass(frozen=True)
class Comparison:
    """Every summary metric of A and B, and the warnings only one of them has."""

    metrics: list[MetricDiff]
    warnings_added: list[str] = field(default_factory=list)
    warnings_removed: list[str] = field(default_factory=list)

    @property
    def changed(self) -> list[MetricDiff]:
        return [d for d in self.metrics if d.changed]


def read_summary(directory: Path) -> dict:
    """A run directory's summary.json as a dict; a `CompareError` naming the
    file and what is wrong with it otherwise."""
    path = directory / "summary.json"
    if not path.is_file():
        if (directory / "runs").is_dir():
            raise CompareError(
                f"{printable(directory)} is a sweep's output, not one run's: compare two of "
                f"its runs, e.g. incast compare {printable(directory / 'runs' / '<A>')} "
                f"{printable(directory / 'runs' / '<B>')}"
            )
        raise CompareError(
            f"{printable(directory)} has no summary.json (is it the output of incast run?)"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise CompareError(f"cannot read {path}: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise CompareError(
            f"{path} is not valid JSON ({e.msg}: line {e.lineno}, column {e.colno}): "
            "it is damaged or truncated; rerun the run that wrote it"
        ) from None
    except (ValueError, RecursionError) as e:  # not UTF-8, a 5000-digit number, deep nesting
        reason = "nested too deeply" if isinstance(e, RecursionError) else str(e).split(":")[0]
        raise CompareError(
            f"{path} is not a summary incast wrote ({reason}); rerun the run that wrote it"
        ) from None
    if not isinstance(data, dict):
        kind = {list: "a list", str: "a string"}.get(type(data), f"a {type(data).__name__}")
        raise CompareError(
            f"{path} holds {kind} where a summary (a JSON object) belongs: "
            f"is {directory} the output of incast run?"
        )
    return data


def _warning_lines(summary: dict) -> list[str] | None:
    """The summary's warnings as lines (taken out of it), or None when its
    `warnings` is not a list of lines (then it is compared as a metric)."""
    warnings = summary.get("warnings")
    if warnings is None:
        return []
    if isinstance(warnings, list) and all(isinstance(w, str) for w in warnings):
        del summary["warnings"]
        return warnings
    return None


def compare_dirs(dir_a: Path, dir_b: Path) -> Comparison:
    """Every summary metric of A and B (flattened key paths, A's first), and the
    warning lines B adds and removes."""
    from .summary_keys import flatten_summary

    summary_a, summary_b = read_summary(dir_a), read_summary(dir_b)
    warnings_a, warnings_b = _warning_lines(summary_a), _warning_lines(summary_b)
    if warnings_a is None or warnings_b is None:  # compared as a metric instead
        for summary, lines in ((summary_a, warnings_a), (summary_b, warnings_b)):
            if lines:
                summary["warnings"] = lines
        warnings_a = warnings_b = []
    a, b = flatten_summary(summary_a), flatten_summary(summary_b)
    keys = list(a) + [k for k in b if k not in a]
    return Comparison(
        [MetricDiff(k, a.get(k), b.get(k)) for k in keys],
        [w for w in warnings_b if w not in warnings_a],
        [w for w in warnings_a if w not in warnings_b],
    )


def _rank(diff: MetricDiff) -> tuple:
    """Changes from zero first, then by relative change, then other changes."""
    if not diff.changed:
        return (3, 0.0)
    if not diff.numeric:
        return (2, 0.0)
    if diff.from_zero:
        return (0, 0.0)
    return (1, -abs(diff.relative))


def by_section(diffs: list[MetricDiff]) -> list[tuple[str, list[MetricDiff]]]:
    """The metrics grouped by section, each group sorted by `_rank`; sections in
    the order of their largest change (`LAST_SECTIONS` last)."""
    groups: dict[str, list[MetricDiff]] = {}
    for d in diffs:
        groups.setdefault(d.section, []).append(d)
    for rows in groups.values():
        rows.sort(key=_rank)
    return sorted(
        groups.items(),
        key=lambda item: (item[0] in LAST_SECTIONS, _rank(item[1][0])),
    )


def _value_text(key: str, value: Any) -> str:
    """A metric's value: a number as the terminal report writes it; a list
    (flattened to JSON) in the unit its key names ('0 to 13,514 us')."""
    if isinstance(value, str) and value.startswith("["):
        try:
            return printable(format_value(key.rsplit(".", 1)[-1], json.loads(value)))
        except ValueError:
            return printable(value)
    return printable(format_number(value))


def _change_text(diff: MetricDiff) -> str:
    if not diff.changed:
        return ""
    if diff.a is None or diff.b is None:
        return "only in B" if diff.a is None else "only in A"
    if not diff.numeric:
        return "changed"
    if diff.from_zero:
        return "from 0"
    return f"{'+' if diff.relative > 0 else ''}{format_number(diff.relative * 100, 1)} %"


def _key_parts(key: str) -> list[str]:
    """Where a key path may break: after a '.', before a '['."""
    return [p for p in re.split(r"(?<=\.)|(?=\[)", key) if p]


class KeyPath(Text):
    """A metric's full key path as a table cell: when its column is narrow it
    breaks between the path's parts (the continuation indented), never inside one."""

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        parts = _key_parts(self.plain) or [""]
        return Measurement(max(len(p) for p in parts) + 2, len(self.plain))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = [""]
        for part in _key_parts(self.plain):
            if lines[-1].strip() and len(lines[-1]) + len(part) > options.max_width:
                lines.append("  ")
            lines[-1] += part
        yield Text("\n".join(lines), style=self.style, no_wrap=True, overflow="fold")


def table_of(
    comparison: Comparison, dir_a: Path, dir_b: Path, show_all: bool = False
) -> tuple[str, Table | None]:
    """A one-line verdict and the table of metrics by section (None when there
    is nothing to list)."""
    diffs = comparison.metrics
    changed = comparison.changed
    where = f"{glue(printable(dir_a))} -> {glue(printable(dir_b))}"
    title = (
        f"{len(changed)} of {len(diffs)} summary metrics differ, {where}"
        if changed
        else f"identical summary metrics ({len(diffs)}), {where}"
    )
    t = Table(box=box.SIMPLE_HEAVY)
    t.add_column("metric")
    t.add_column("A", justify="right")
    t.add_column("B", justify="right")
    t.add_column("change", justify="right", no_wrap=True)
    for section, rows in by_section(diffs if show_all else changed):
        if [d.key for d in rows] != [section]:  # a lone top-level number needs no heading
            n_changed = sum(d.changed for d in rows)
            heading = f"{printable(section)} ({n_changed} changed)"
            t.add_row(Text(heading, style="bold"), "", "", "")
        for i, d in enumerate(rows):
            rel = d.relative
            style = "green" if rel < 0 else "red" if rel > 0 else ""
            t.add_row(
                KeyPath(printable(d.key)),
                Unbroken(_value_text(d.key, d.a), justify="right"),
                Unbroken(_value_text(d.key, d.b), justify="right"),
                Text(_change_text(d), style="bold" if d.from_zero else ""),
                style=style or None,
                end_section=i == len(rows) - 1,
            )
    return title, (t if t.row_count else None)


def print_comparison(
    console: Console, comparison: Comparison, dir_a: Path, dir_b: Path, show_all: bool = False
) -> None:
    """The verdict, the table and the warnings B adds (+) and no longer has (-)."""
    title, table = table_of(comparison, dir_a, dir_b, show_all)
    print_line(console, title)
    if table is not None:
        console.print(table)
    added, removed = comparison.warnings_added, comparison.warnings_removed
    if added or removed:
        print_line(console, f"warnings: {len(added)} only in B (+), {len(removed)} only in A (-)")
        for sign, style, lines in (("+", "red", added), ("-", "green", removed)):
            for w in lines:
                print_line(console, printable(w), prefix=f"  {sign}", prefix_style=style)


def default_plot_path(dir_a: Path, dir_b: Path) -> Path:
    """compare_<A>_vs_<B>.png in the current directory (the runs' parent
    directories' names too when both runs have the same name)."""
    from .experiment import safe_name

    a, b = Path(dir_a).resolve(), Path(dir_b).resolve()
    name_a, name_b = a.name, b.name
    if name_a == name_b:
        name_a, name_b = f"{a.parent.name}_{name_a}", f"{b.parent.name}_{name_b}"
    return Path(f"compare_{safe_name(name_a)}_vs_{safe_name(name_b)}.png")


def chart_rows(diffs: list[MetricDiff]) -> list[MetricDiff]:
    """The metrics the chart draws: the `PLOT_TOP` numbers that changed most,
    changes from zero first."""
    return sorted((d for d in diffs if d.numeric and d.changed), key=_rank)[:PLOT_TOP]


def plot_comparison(diffs: list[MetricDiff], path: Path, name_a: str, name_b: str) -> Path | None:
    """A horizontal bar per metric: relative change from A to B (changes from
    zero first, hatched at the end of the axis with their values, then the
    largest); None when no number changed. A `CompareError` when the file
    cannot be written."""
    rows = chart_rows(diffs)[::-1]  # the largest change at the top
    if not rows:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    finite = [abs(d.relative) * 100 for d in rows if not d.from_zero]
    end = max(finite, default=100.0) * 1.15  # where a change from zero is drawn
    vals = [math.copysign(end, d.relative) if d.from_zero else d.relative * 100 for d in rows]
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(rows) + 1.5))
    bars = ax.barh(range(len(rows)), vals, color=["C2" if v < 0 else "C3" for v in vals])
    for bar, d in zip(bars, rows):
        if d.from_zero:
            bar.set_hatch("//")
            bar.set_alpha(0.6)
            ax.text(
                bar.get_width() / 2,
                bar.get_y() + bar.get_height() / 2,
                f"from 0 to {format_number(d.b)}",
                ha="center",
                va="center",
                fontsize="x-small",
                bbox={"facecolor": "white", "edgecolor": "none", "pad": 1},
            )
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([d.key for d in rows], fontsize="small")
    ax.axvline(0, color="black", lw=0.8)
    hatched = "; hatched: from 0" if any(d.from_zero for d in rows) else ""
    ax.set_xlabel(f"change from {name_a} to {name_b} (%{hatched})")
    ax.set_title(
        f"Summary metrics, {name_b} vs {name_a} ({len(rows)} largest changes)", fontsize="medium"
    )
    ax.grid(axis="x", alpha=0.3)
    from .figures import save_figure

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_figure(fig, path)
    except OSError as e:
        plt.close(fig)  # not written: closed all the same
        blocked = next((d for d in path.parents if d.exists() and not d.is_dir()), None)
        reason = f"{blocked} is not a directory" if blocked else (e.strerror or str(e))
        raise CompareError(
            f"cannot write the chart to {path}: {reason}; "
            "pass --out FILE in a writable directory, or --no-plot"
        ) from None
    return path
