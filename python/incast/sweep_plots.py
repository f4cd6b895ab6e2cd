"""Plots of a sweep (matplotlib, Agg): metrics against parameters, improvement
factors by size bucket, PFC pauses / drops / queues by variant.

Every plot shows the spread over seeds as error bars (one standard deviation
around the mean; none with a single seed)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from .experiment import Experiment, bounded_name, clean_name
from .figures import save_figure

#: At most this many points are drawn in one grouped bar chart.
MAX_GROUPS = 12


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _numeric(values: list) -> list[float] | None:
    out = []
    for v in values:
        if isinstance(v, bool):
            return None
        if isinstance(v, (int, float)):
            out.append(float(v))
            continue
        try:
            out.append(float(str(v)))
        except ValueError:
            num = _with_unit(str(v))
            if num is None:
                return None
            out.append(num)
    return out


_UNITS = {
    "ps": 1e-12,
    "ns": 1e-9,
    "us": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "B": 1.0,
    "KB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "KiB": 1024.0,
    "MiB": 1024.0**2,
    "GiB": 1024.0**3,
    "bps": 1.0,
    "Kbps": 1e3,
    "Mbps": 1e6,
    "Gbps": 1e9,
    "Tbps": 1e12,
}


def _with_unit(text: str) -> float | None:
    import re

    m = re.fullmatch(r"\s*([0-9.eE+-]+)\s*([A-Za-z]+)\s*", text)
    if not m or m.group(2) not in _UNITS:
        return None
    try:
        return float(m.group(1)) * _UNITS[m.group(2)]
    except ValueError:
        return None


def _mean_std(values: Any) -> tuple[float, float]:
    vals = [float(v) for v in values if v is not None and not _isnan(v)]
    if not vals:
        return math.nan, math.nan
    mean = sum(vals) / len(vals)
    std = math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)) if len(vals) > 1 else 0
    return mean, std


def _isnan(value: Any) -> bool:
    try:
        return math.isnan(float(value))
    except (TypeError, ValueError):
        return True


def plot_metric_vs_parameter(
    experiment: Experiment, points: Any, metric: str, param: str, path: Path
) -> Path | None:
    """`metric` against the parameter `param`: one line per variant (and per value
    of the other parameters), mean over seeds with one-std error bars."""
    col = f"param:{param}"
    if metric not in points.columns or col not in points.columns:
        return None
    others = [f"param:{p}" for p in experiment.parameters if p != param]
    raw_x = list(dict.fromkeys(points[col]))
    if len(raw_x) < 2:
        return None
    xs_num = _numeric(raw_x)
    plt = _plt()
    fig, ax = plt.subplots(figsize=(7, 4.2))
    group_cols = ["variant", *[o for o in others if o in points.columns]]
    for key, g in points.groupby(group_cols, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        xs, ys, es = [], [], []
        for i, x in enumerate(raw_x):
            sel = g[g[col] == x]
            if len(sel) == 0:
                continue
            m, s = _mean_std(sel[metric])
            xs.append(xs_num[i] if xs_num is not None else i)
            ys.append(m)
            es.append(s)
        label = str(key[0]) + "".join(
            f", {o.split(':', 1)[1].rsplit('.', 1)[-1]}={k}" for o, k in zip(others, key[1:])
        )
        ax.errorbar(xs, ys, yerr=es, marker="o", capsize=3, label=label)
    if xs_num is None:
        ax.set_xticks(range(len(raw_x)))
        ax.set_xticklabels([str(x) for x in raw_x])
    elif any(isinstance(x, str) for x in raw_x):  # "10Gbps": ticks as written
        ax.set_xticks(xs_num)
        ax.set_xticklabels([str(x) for x in raw_x])
    ax.set_xlabel(param)
    ax.set_ylabel(metric)
    seeds = points.groupby(["point", "variant"])["seed"].nunique().max()
    spread = f" (mean ± std over {seeds} seeds)" if seeds and seeds > 1 else ""
    ax.set_title(f"{metric} vs {param}{spread}", fontsize="medium")
    ax.grid(alpha=0.3)
    ax.legend(fontsize="small", title="variant")
    return save_figure(fig, path)


def plot_metric_by_point(points: Any, metric: str, path: Path) -> Path | None:
    """`metric` per point, grouped bars per variant (mean ± std over seeds)."""
    if metric not in points.columns or len(points) == 0:
        return None
    pts = list(dict.fromkeys(points["point"]))[:MAX_GROUPS]
    variants = list(dict.fromkeys(points["variant"]))
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(7, 0.9 * len(pts) * max(1, len(variants)) / 2), 4.2))
    width = 0.8 / max(1, len(variants))
    for j, v in enumerate(variants):
        ms, ss = [], []
        for p in pts:
            m, s = _mean_std(points[(points["point"] == p) & (points["variant"] == v)][metric])
            ms.append(m)
            ss.append(s)
        xs = [i + (j - (len(variants) - 1) / 2) * width for i in range(len(pts))]
        ax.bar(xs, ms, width, yerr=ss, capsize=3, label=v)
    ax.set_xticks(range(len(pts)))
    ax.set_xticklabels(pts, rotation=30, ha="right", fontsize="small")
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} by point and variant (mean ± std over seeds)", fontsize="medium")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize="small", title="variant")
    return save_figure(fig, path)


def plot_improvement(comps: Any, name: str, path: Path) -> Path | None:
    """Improvement factor by size bucket for one comparison: a panel per stat,
    grouped bars per (point, variant), error bars = std over seeds."""
    part = comps[comps["comparison"] == name]
    if len(part) == 0:
        return None
    stats = list(dict.fromkeys(part["stat"]))
    buckets = list(dict.fromkeys(part["bucket"]))
    groups = list(dict.fromkeys(zip(part["point"], part["variant"])))[:MAX_GROUPS]
    plt = _plt()
    fig, axes = plt.subplots(
        len(stats), 1, figsize=(max(7, 0.8 * len(buckets) + 3), 3.4 * len(stats)), squeeze=False
    )
    width = 0.8 / max(1, len(groups))
    for ax, stat in zip(axes[:, 0], stats):
        sub = part[part["stat"] == stat]
        for j, (p, v) in enumerate(groups):
            g = sub[(sub["point"] == p) & (sub["variant"] == v)]
            vals = {r.bucket: (r.factor_mean, r.factor_std) for r in g.itertuples()}
            ys = [vals.get(b, (math.nan, 0))[0] for b in buckets]
            es = [0 if _isnan(vals.get(b, (0, 0))[1]) else vals.get(b, (0, 0))[1] for b in buckets]
            ys = [y if y is not None and not math.isinf(y) else math.nan for y in ys]
            xs = [i + (j - (len(groups) - 1) / 2) * width for i in range(len(buckets))]
            label = v if len({gp for gp, _ in groups}) == 1 else f"{p}: {v}"
            ax.bar(xs, ys, width, yerr=es, capsize=2, label=label)
        ax.axhline(1.0, color="grey", lw=0.8, ls="--")
        ax.set_xticks(range(len(buckets)))
        ax.set_xticklabels(buckets, fontsize="small", rotation=15, ha="right")
        ax.set_ylabel(f"factor ({stat})")
        ax.grid(axis="y", alpha=0.3)
    first = part.iloc[0]
    axes[0, 0].set_title(
        f"{name}: {first['metric']} of {first['baseline']} / variant, by size bucket "
        "(> 1: the variant is better)",
        fontsize="medium",
    )
    axes[0, 0].legend(fontsize="x-small", ncol=2)
    axes[-1, 0].set_xlabel("flow size bucket")
    return save_figure(fig, path)


#: (points-table column, label) of the network-health panel.
HEALTH = (
    ("pfc.pause_frames", "PFC pause frames"),
    ("drops.packets", "dropped packets"),
    ("queues.max_bytes", "largest switch queue (bytes)"),
)


def plot_health_by_variant(points: Any, path: Path) -> Path | None:
    """PFC pauses, drops and the largest queue, by variant (and point)."""
    panels = [(c, label) for c, label in HEALTH if c in points.columns]
    if not panels or len(points) == 0:
        return None
    pts = list(dict.fromkeys(points["point"]))[:MAX_GROUPS]
    variants = list(dict.fromkeys(points["variant"]))
    plt = _plt()
    fig, axes = plt.subplots(
        len(panels),
        1,
        figsize=(max(7, 0.7 * len(pts) * len(variants) / 2 + 3), 2.8 * len(panels)),
        squeeze=False,
    )
    width = 0.8 / max(1, len(variants))
    for ax, (col, label) in zip(axes[:, 0], panels):
        for j, v in enumerate(variants):
            ms, ss = [], []
            for p in pts:
                m, s = _mean_std(points[(points["point"] == p) & (points["variant"] == v)][col])
                ms.append(0.0 if _isnan(m) else m)
                ss.append(0.0 if _isnan(s) else s)
            xs = [i + (j - (len(variants) - 1) / 2) * width for i in range(len(pts))]
            ax.bar(xs, ms, width, yerr=ss, capsize=2, label=v)
        ax.set_ylabel(label, fontsize="small")
        ax.set_xticks(range(len(pts)))
        ax.set_xticklabels(
            pts if ax is axes[-1, 0] else [], rotation=30, ha="right", fontsize="small"
        )
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].set_title(
        "PFC pauses, drops and queues by variant (mean ± std over seeds)", fontsize="medium"
    )
    axes[0, 0].legend(fontsize="small", title="variant", ncol=min(4, len(variants)))
    return save_figure(fig, path)


def _file_part(text: str) -> str:
    """A metric's, parameter's or comparison's name in a plot's file name:
    bounded, with a hash beside a readable prefix when it is long."""
    return bounded_name(clean_name(text))


def plot_sweep(experiment: Experiment, points: Any, comps: Any, out: Path) -> list[Path]:
    """Every sweep plot into `out` (created); returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    metrics = [m for m in experiment.report_metrics if m in points.columns]
    for param in experiment.parameters:
        for metric in metrics:
            p = plot_metric_vs_parameter(
                experiment,
                points,
                metric,
                param,
                out / f"{_file_part(metric)}_vs_{_file_part(param)}.png",
            )
            if p is not None:
                written.append(p)
    if not experiment.parameters and len(points) and len(set(points["point"])) > 1:
        for metric in metrics:
            p = plot_metric_by_point(points, metric, out / f"{_file_part(metric)}_by_point.png")
            if p is not None:
                written.append(p)
    if comps is not None and len(comps):
        for name in dict.fromkeys(comps["comparison"]):
            p = plot_improvement(comps, name, out / f"improvement_{_file_part(name)}.png")
            if p is not None:
                written.append(p)
    p = plot_health_by_variant(points, out / "pfc_drops_queues_by_variant.png")
    if p is not None:
        written.append(p)
    return written
