"""A sweep's combined outputs: the points table, per-flow datasets, comparisons.

Everything here is a pure function of the finished run directories, read in
the experiment's run order, so a sweep that was interrupted and resumed writes
the same bytes as one that ran straight through.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import keypath
from .buckets import bucket_rows
from .canonical import canonical_json, name_hash
from .experiment import BUCKET_SETS, Comparison, Experiment, Run
from .fmt import format_factor, is_value
from .rundir import is_finished, read_json, run_dir
from .summary_keys import QUEUE_MAX, flatten_summary

#: Per-run tables gathered into one partitioned dataset each.
DATASETS = ("flows", "incasts")
#: A partition directory's value (`point=<value>`) is at most this long once
#: URL-quoted; a longer one is cut, with a hash of the whole value beside it.
PARTITION_LIMIT = 120


def read_summary(out: Path, run: Run) -> dict | None:
    """A finished run's summary; None when the run is not (or no longer) complete."""
    if not is_finished(out, run):
        return None
    return read_json(run_dir(out, run) / "summary.json")


def _column_values(values: list) -> list:
    """Values of one column, made Parquet-friendly: JSON text for lists/tables,
    and text for every value when the column mixes text with numbers."""
    vals = [canonical_json(v) if isinstance(v, (list, dict)) else v for v in values]
    kinds = {type(v) for v in vals if v is not None}
    if str in kinds and len(kinds) > 1:
        vals = [None if v is None else str(v) for v in vals]
    elif bool in kinds and len(kinds) > 1:
        vals = [None if v is None else float(v) for v in vals]
    return vals


def points_frame(
    experiment: Experiment, out: Path, summaries: Mapping[int, Mapping] | None = None
) -> Any:
    """One row per finished run: its identity, parameters and summary metrics
    (`summaries`: `collect_summaries`' result, when the caller has it)."""
    import pandas as pd

    if summaries is None:
        summaries = collect_summaries(experiment, out)
    rows = []
    for run in experiment.runs:
        summary = summaries.get(run.index)
        if summary is None:
            continue
        row: dict[str, Any] = {
            "run": run.label,
            "point": run.point,
            "variant": run.variant,
            "seed": run.seed,
            "hash": run.hash,
            "dir": str(run_dir(out, run).relative_to(out)),
        }
        for col in experiment.param_columns:
            row[f"param:{col}"] = run.params.get(col)
        row.update(flatten_summary(summary))
        row.update(_queue_stats(run_dir(out, run)))
        rows.append(row)
    columns: list[str] = []
    for row in rows:
        for k in row:
            if k not in columns:
                columns.append(k)
    data = {c: _column_values([row.get(c) for row in rows]) for c in columns}
    return pd.DataFrame(data, columns=columns)


def _queue_stats(directory: Path) -> dict[str, Any]:
    """The largest queue any switch port reached (bytes), from counters.parquet."""
    path = directory / "counters.parquet"
    if not path.is_file():
        return {}
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=None)
    if "max_queue_bytes" not in table.column_names or table.num_rows == 0:
        return {QUEUE_MAX: 0}
    import pyarrow.compute as pc

    return {QUEUE_MAX: int(pc.max(table["max_queue_bytes"]).as_py() or 0)}


def _write_table(df: Any, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, compression="zstd")


def write_datasets(
    experiment: Experiment, out: Path, summaries: Mapping[int, Mapping] | None = None
) -> list[Path]:
    """`flows/point=P/variant=V/seed=S/part-0.parquet` (and `incasts/...`): each
    finished run's table, readable as one with `pandas.read_parquet(OUT / "flows")`
    (`summaries`: `collect_summaries`' result, when the caller has it)."""
    finished = summaries if summaries is not None else collect_summaries(experiment, out)
    written = []
    for name in DATASETS:
        root = out / name
        if root.exists():
            shutil.rmtree(root)
        for run in experiment.runs:
            src = run_dir(out, run) / f"{name}.parquet"
            if run.index not in finished or not src.is_file():
                continue
            dest = (
                root
                / f"point={partition_value(run.point)}"
                / f"variant={partition_value(run.variant)}"
                / f"seed={run.seed}"
                / "part-0.parquet"
            )
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dest)
        if root.exists():
            written.append(root)
    return written


def partition_value(value: str) -> str:
    """A point's or variant's name as a partition directory's value: URL-quoted
    (as pyarrow reads it back), and cut to a bounded length with a hash of the
    whole name beside it when it is long (a file name has at most 255 bytes)."""
    from urllib.parse import quote

    quoted = quote(value, safe="")
    if len(quoted) <= PARTITION_LIMIT:
        return quoted
    cut = PARTITION_LIMIT - 11
    escape = quoted.rfind("%", cut - 2, cut)  # never cut inside a %XX escape
    if escape != -1:
        cut = escape
    return f"{quoted[:cut]}~{name_hash(value)}"


# ---------------------------------------------------------------------------
# Comparisons.
# ---------------------------------------------------------------------------


def _metric_items(comp: Comparison, summary: Mapping) -> list[tuple[str, str, Any]]:
    """(bucket, stat, value) of one run for a comparison."""
    if not comp.bucketed:
        try:
            value = keypath.get(summary, comp.metric)
        except keypath.KeyPathError:  # a key as in points.csv: buckets[<10KB].fct_us.mean
            value = flatten_summary(summary).get(comp.metric)
        return [("value", "-", value)]
    rows = bucket_rows(summary, BUCKET_SETS[comp.buckets])
    return [
        (row.label, stat, row.metric(comp.metric).get(stat)) for stat in comp.stats for row in rows
    ]


def factor(baseline: Any, variant: Any, better: str) -> float:
    """Improvement factor: baseline / variant when lower is better (2.0 = the
    variant halves the metric), variant / baseline when higher is better."""
    if not is_value(baseline) or not is_value(variant):
        return math.nan
    num, den = (baseline, variant) if better == "lower" else (variant, baseline)
    if den == 0:
        return 1.0 if num == 0 else math.inf
    return float(num) / float(den)


def _spread(values: list[float]) -> dict[str, float]:
    finite = [v for v in values if not math.isnan(v)]
    n = len(finite)
    if n == 0:
        return {"mean": math.nan, "std": math.nan, "min": math.nan, "max": math.nan}
    mean = sum(finite) / n
    if math.isinf(mean):
        std = math.nan
    else:
        std = math.sqrt(sum((v - mean) ** 2 for v in finite) / (n - 1)) if n > 1 else 0.0
    return {"mean": mean, "std": std, "min": min(finite), "max": max(finite)}


def comparison_frame(experiment: Experiment, summaries: Mapping[int, Mapping]) -> Any:
    """One row per (comparison, point, variant, stat, bucket): the factor's mean,
    standard deviation, min and max over the seeds both runs have, and the two
    metrics' means."""
    import pandas as pd

    by_key = {(r.point, r.variant, r.seed): summaries.get(r.index) for r in experiment.runs}
    seeds_of: dict[tuple[str, str], list[int]] = {}
    for r in experiment.runs:
        if summaries.get(r.index) is not None:
            seeds_of.setdefault((r.point, r.variant), []).append(r.seed)
    rows = []
    for comp in experiment.comparisons:
        for point in experiment.points:
            if comp.points is not None and not any(
                point == p or point.startswith(f"{p},") for p in comp.points
            ):
                continue
            base_seeds = seeds_of.get((point, comp.baseline), [])
            for variant in comp.variants:
                seeds = [s for s in seeds_of.get((point, variant), []) if s in base_seeds]
                if not seeds:
                    continue
                per_seed: dict[tuple[str, str], list[tuple[Any, Any]]] = {}
                order: list[tuple[str, str]] = []
                for s in seeds:
                    b_items = _metric_items(comp, by_key[(point, comp.baseline, s)] or {})
                    v_items = {
                        (bk, st): val
                        for bk, st, val in _metric_items(comp, by_key[(point, variant, s)] or {})
                    }
                    for bk, st, bval in b_items:
                        if (bk, st) not in per_seed:
                            order.append((bk, st))
                        per_seed.setdefault((bk, st), []).append((bval, v_items.get((bk, st))))
                for bk, st in order:
                    pairs = per_seed[(bk, st)]
                    factors = [factor(b, v, comp.better) for b, v in pairs]
                    spread = _spread(factors)
                    bvals = [float(b) for b, _ in pairs if is_value(b)]
                    vvals = [float(v) for _, v in pairs if is_value(v)]
                    rows.append(
                        {
                            "comparison": comp.name,
                            "point": point,
                            "baseline": comp.baseline,
                            "variant": variant,
                            "metric": comp.metric,
                            "better": comp.better,
                            "stat": st,
                            "bucket": bk,
                            "seeds": len(pairs),
                            "factor_mean": spread["mean"],
                            "factor_std": spread["std"],
                            "factor_min": spread["min"],
                            "factor_max": spread["max"],
                            "baseline_mean": sum(bvals) / len(bvals) if bvals else math.nan,
                            "variant_mean": sum(vvals) / len(vvals) if vvals else math.nan,
                        }
                    )
    columns = [
        "comparison",
        "point",
        "baseline",
        "variant",
        "metric",
        "better",
        "stat",
        "bucket",
        "seeds",
        "factor_mean",
        "factor_std",
        "factor_min",
        "factor_max",
        "baseline_mean",
        "variant_mean",
    ]
    return pd.DataFrame(rows, columns=columns)


def comparison_markdown(df: Any) -> str:
    """The comparison tables as Markdown: one table per comparison, a row per
    (point, variant, stat), a column per size bucket; "1.41x ± 0.05" is the
    mean and standard deviation of the factor over seeds."""
    lines: list[str] = []
    if df is None or len(df) == 0:
        return ""
    for comp, part in df.groupby("comparison", sort=False):
        buckets = list(dict.fromkeys(part["bucket"]))
        first = part.iloc[0]
        ratio = "baseline / variant" if _better(part) == "lower" else "variant / baseline"
        lines.append(f"### {comp}: {first['metric']}, improvement factor ({ratio})")
        lines.append("")
        head = ["point", "baseline", "variant", "stat", *buckets, "seeds"]
        lines.append("| " + " | ".join(head) + " |")
        lines.append("|" + "---|" * len(head))
        for (point, variant, stat), g in part.groupby(["point", "variant", "stat"], sort=False):
            cells = {
                r.bucket: format_factor(r.factor_mean, r.factor_std, r.seeds)
                for r in g.itertuples()
            }
            row = [point, str(first["baseline"]), variant, stat]
            row += [cells.get(b, "-") for b in buckets]
            row.append(str(int(g["seeds"].max())))
            lines.append("| " + " | ".join(row) + " |")
        lines.append("")
    return "\n".join(lines)


def _better(part: Any) -> str:
    return str(part.iloc[0].get("better", "lower")) if "better" in part.columns else "lower"


def collect_summaries(experiment: Experiment, out: Path) -> dict[int, dict]:
    """{run index: summary} of every finished (and undamaged) run."""
    result = {}
    for run in experiment.runs:
        s = read_summary(out, run)
        if s is not None:
            result[run.index] = s
    return result


def write_combined(experiment: Experiment, out: Path, *, plots: bool = True) -> list[Path]:
    """Write points.{parquet,csv}, the flows/incasts datasets, comparisons.{parquet,
    csv,md}, plots/ and report.html from the finished runs."""
    written = []
    # Each run's files are checked (hashed) once, here, for everything below.
    summaries = collect_summaries(experiment, out)
    points = points_frame(experiment, out, summaries)
    _write_table(points, out / "points.parquet")
    points.to_csv(out / "points.csv", index=False)
    written += [out / "points.parquet", out / "points.csv"]
    written += write_datasets(experiment, out, summaries)
    comps = comparison_frame(experiment, summaries)
    for stale in ("comparisons.parquet", "comparisons.csv", "comparisons.md"):
        (out / stale).unlink(missing_ok=True)
    if len(experiment.comparisons):
        _write_table(comps, out / "comparisons.parquet")
        comps.to_csv(out / "comparisons.csv", index=False)
        (out / "comparisons.md").write_text(comparison_markdown(comps), encoding="utf-8")
        written += [out / "comparisons.parquet", out / "comparisons.csv", out / "comparisons.md"]
    plot_paths: list[Path] = []
    if plots:
        from .sweep_plots import plot_sweep

        plot_dir = out / "plots"
        if plot_dir.exists():
            shutil.rmtree(plot_dir)
        plot_paths = plot_sweep(experiment, points, comps, plot_dir)
        written += plot_paths
    from .html import write_sweep_report

    written.append(write_sweep_report(experiment, out, points, comps, plot_paths))
    return written
