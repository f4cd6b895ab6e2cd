"""A sweep's combined outputs: the points table, per-flow datasets, comparisons.

Everything here is a pure function of the finished run directories, read in
the experiment's run order, so a sweep that was interrupted and resumed writes
the same bytes as one that ran straight through.
"""

from __future__ import annotations

import functools
import json
import math
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from . import keypath
from .experiment import Comparison, Experiment, Run, canonical_json, name_hash

#: Summary keys already present as columns, or not results.
_SKIP_SUMMARY = {"scenario", "seed"}
#: Per-run tables gathered into one partitioned dataset each.
DATASETS = ("flows", "incasts")
#: The points table's column beside the flattened summary (`_queue_stats`).
QUEUE_MAX = "queues.max_bytes"
#: A partition directory's value (`point=<value>`) is at most this long once
#: URL-quoted; a longer one is cut, with a hash of the whole value beside it.
PARTITION_LIMIT = 120


def flatten_summary(summary: Mapping) -> dict[str, Any]:
    """`{"drops": {"packets": 3}, "buckets": [{"label": "<1MB", "slowdown": {...}}]}`
    -> `{"drops.packets": 3, "buckets[<1MB].slowdown.mean": ...}`."""
    out: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                walk(f"{prefix}.{k}" if prefix else str(k), v)
        elif isinstance(value, list):
            if value and all(isinstance(b, Mapping) and "label" in b for b in value):
                for b in value:
                    walk(f"{prefix}[{b['label']}]", {k: v for k, v in b.items() if k != "label"})
            else:
                out[prefix] = canonical_json(value)
        else:
            out[prefix] = value

    for k, v in summary.items():
        if k not in _SKIP_SUMMARY:
            walk(str(k), v)
    return out


def read_summary(out: Path, run: Run) -> dict | None:
    """A finished run's summary; None when the run is not (or no longer) complete."""
    from .sweep import is_finished, read_json, run_dir

    if not is_finished(out, run):
        return None
    return read_json(run_dir(out, run) / "summary.json")


# ---------------------------------------------------------------------------
# The keys a summary will have (checked before the runs).
# ---------------------------------------------------------------------------

#: A tiny run with what a summary at time zero lacks: finished flows (their
#: statistics), an incast beside other traffic (`buckets_background`) and a
#: flow stopped at its stop time (`stopped_flows`).
_REFERENCE = {
    "name": "summary-keys",
    "seed": 1,
    "topology": {"kind": "single_switch", "hosts": 4, "link_rate": "10Gbps", "link_delay": "1us"},
    "workload": {
        "flows": [
            {"src": 0, "dst": 3, "size": "10KB", "start": "0us"},
            {"src": 1, "dst": 2, "start": "0us", "stop": "50us"},
        ],
        "incast": [{"fan_in": 2, "bytes_per_sender": "10KB", "times": ["10us"]}],
    },
}
_BUCKET_KEY = re.compile(r"^([^\[]*)\[([^\]]*)\](.*)$")


def _summary_of(scenario_json: str, base_dir: str, run: bool) -> dict:
    from . import _core

    sim = _core.Simulation(scenario_json, "json", base_dir, None)
    if run:
        from ._runner import drive

        drive(sim)
    summary = sim.finish()["summary"]
    return json.loads(summary) if isinstance(summary, (str, bytes)) else dict(summary)


@functools.lru_cache(maxsize=1)
def _reference_summary() -> dict:
    return _summary_of(canonical_json(_REFERENCE), ".", run=True)


def _bucket_labels(summary: Mapping) -> list[str]:
    return [str(b["label"]) for b in summary.get("buckets") or [] if isinstance(b, Mapping)]


#: Last parts of summary keys that describe a bucket rather than measure anything.
_NOT_METRICS = frozenset({"label", "lo", "hi"})


class SummaryKeys:
    """The flattened summary keys (as in points.csv) the runs of an experiment
    will have, learnt without running them: each sampled run's scenario is built
    and finished at time zero, which gives every section its configuration
    makes (PFC, edge pausing, mechanisms, its size buckets and congestion
    controls), with null statistics; a tiny reference run supplies the rest
    (the statistics' fields, `buckets_background`, `stopped_flows`)."""

    def __init__(self) -> None:
        reference = _reference_summary()
        self._reference = flatten_summary(reference)
        self._reference_labels = set(_bucket_labels(reference))
        overall = reference["overall"]["slowdown"]
        self._stat_fields = sorted(overall)
        self._keys: set[str] = set()
        self._summaries: list[dict] = []

    @property
    def sampled(self) -> int:
        return len(self._summaries)

    def add_run(self, run: Run) -> None:
        """Learn the keys of `run`'s configuration (a run that cannot be built
        is skipped: the sweep reports it)."""
        try:
            summary = _summary_of(run.scenario_json(), run.base_dir, run=False)
        except Exception:  # noqa: BLE001 - any build failure is the sweep's to report
            return
        self._summaries.append(summary)
        flat = flatten_summary(summary)
        labels = _bucket_labels(summary)
        self._keys |= set(flat)
        for key in self._reference:
            m = _BUCKET_KEY.match(key)
            if m and m.group(2) in self._reference_labels:
                self._keys |= {f"{m.group(1)}[{label}]{m.group(3)}" for label in labels}
            else:
                self._keys.add(key)
        # A null leaf is a statistic no flow gave yet: its fields are keys too.
        for key, value in flat.items():
            if value is None and key.rsplit(".", 1)[-1] not in _NOT_METRICS:
                self._keys |= {f"{key}.{f}" for f in self._stat_fields}

    def names(self, *, in_summary: bool) -> set[str]:
        """Every metric key known so far (with the points table's own column unless
        `in_summary`, which is what a comparison reads); a bucket's label and bounds
        describe it and are no metric."""
        metrics = {k for k in self._keys if k.rsplit(".", 1)[-1] not in _NOT_METRICS}
        return metrics if in_summary else metrics | {QUEUE_MAX}

    def knows(self, metric: str, *, in_summary: bool) -> bool:
        if metric.rsplit(".", 1)[-1] in _NOT_METRICS:
            return False
        if metric in self.names(in_summary=in_summary):
            return True
        return in_summary and any(self._resolves(s, metric) for s in self._summaries)

    def _resolves(self, summary: Mapping, path: str) -> bool:
        """A key path into the nested summary (`buckets.0.slowdown.mean`) that
        reaches a value, or a null statistic and one of its fields."""
        node: Any = summary
        parts = keypath.split(path)
        for i, part in enumerate(parts):
            if node is None:
                return i == len(parts) - 1 and part in self._stat_fields
            try:
                node = keypath.get(node, part)
            except keypath.KeyPathError:
                return False
        return not isinstance(node, (Mapping, list))


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

    from .sweep import run_dir

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
    from .sweep import run_dir

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
    key = {"buckets": "buckets", "background": "buckets_background"}[comp.buckets]
    items = []
    buckets = [b for b in summary.get(key) or [] if isinstance(b, Mapping)]
    overall = summary.get("overall") if comp.buckets == "buckets" else None
    for stat in comp.stats:
        for b in buckets:
            m = b.get(comp.metric)
            items.append(
                (str(b.get("label")), stat, m.get(stat) if isinstance(m, Mapping) else None)
            )
        if isinstance(overall, Mapping):
            m = overall.get(comp.metric)
            items.append(("all", stat, m.get(stat) if isinstance(m, Mapping) else None))
    return items


def factor(baseline: Any, variant: Any, better: str) -> float:
    """Improvement factor: baseline / variant when lower is better (2.0 = the
    variant halves the metric), variant / baseline when higher is better."""
    if not _is_num(baseline) or not _is_num(variant):
        return math.nan
    num, den = (baseline, variant) if better == "lower" else (variant, baseline)
    if den == 0:
        return 1.0 if num == 0 else math.inf
    return float(num) / float(den)


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and not math.isnan(x)


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
                    bvals = [float(b) for b, _ in pairs if _is_num(b)]
                    vvals = [float(v) for _, v in pairs if _is_num(v)]
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


def format_factor(mean: float, std: float, seeds: int) -> str:
    if math.isnan(mean):
        return "-"
    if math.isinf(mean):
        return "inf"
    text = f"{mean:.2f}x"
    if seeds > 1 and not math.isnan(std):
        text += f" ± {std:.2f}"
    return text


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
