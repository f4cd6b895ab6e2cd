"""Standard plots of a run (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import LogFormatter  # noqa: E402

from .buckets import bucket_rows  # noqa: E402
from .drop_curve import MIN_SENT, WINDOW_US, merged  # noqa: E402
from .figures import save_figure  # noqa: E402
from .fmt import is_number  # noqa: E402
from .plot_data import (  # noqa: E402
    fullest_ports,
    host_count,
    measured_groups,
    port_label,
    time_unit,
)

#: How many ports `queue_length.png` shows (those with the largest max queue).
TOP_QUEUES = 4

_PCTS = (("p50", "p50"), ("p95", "p95"), ("p99", "p99"))


def _skip(notes: list | None, msg: str) -> None:
    if notes is None:
        warnings.warn(msg, stacklevel=3)
    else:
        notes.append(msg)


def _plain_log_ticks(axis: Any) -> None:
    """Log-scale tick labels as plain numbers (2, 5, 10) rather than 2x10^0."""
    axis.set_major_formatter(LogFormatter())
    axis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))


def plot_slowdown_by_size(results: Any, path: Path, notes: list | None = None) -> Path | None:
    """p50/p95/p99 slowdown per flow-size bucket (log y)."""
    rows = [
        (row.label, row.metric("slowdown"))
        for row in bucket_rows(results.summary, overall=False)
        if row.has_slowdown
    ]
    if not rows:
        _skip(notes, "slowdown_by_size.png skipped: no size bucket has measured flows")
        return None
    fig, ax = plt.subplots(figsize=(7, 4.2))
    x = np.arange(len(rows))
    width = 0.8 / len(_PCTS)
    for i, (key, label) in enumerate(_PCTS):
        vals = [float(sd.get(key) or np.nan) for _, sd in rows]
        ax.bar(x + (i - (len(_PCTS) - 1) / 2) * width, vals, width, label=label)
    ax.set_xticks(x)
    ax.set_xticklabels([label for label, _ in rows])
    ax.set_yscale("log")
    _plain_log_ticks(ax.yaxis)
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("flow size bucket (bytes)")
    ax.set_ylabel("slowdown (FCT / ideal FCT, log scale)")
    ax.set_title(f"Slowdown by flow size: {results.scenario_name} (seed {results.seed})")
    ax.legend(title="percentile")
    ax.grid(axis="y", which="both", alpha=0.3)
    return save_figure(fig, path)


def plot_slowdown_cdf(results: Any, path: Path, notes: list | None = None) -> Path | None:
    """CDF of slowdown per size bucket (finished, measured flows)."""
    if len(results.flows) == 0 or "slowdown" not in results.flows.columns:
        _skip(notes, "slowdown_cdf.png skipped: no flows")
        return None
    groups = measured_groups(results, "slowdown")
    if not groups:
        _skip(notes, "slowdown_cdf.png skipped: no finished flows")
        return None
    fig, ax = plt.subplots(figsize=(7, 4.2))
    for label, vals in groups:
        v = np.sort(vals)
        y = np.arange(1, len(v) + 1) / len(v)
        style = {"color": "black", "ls": "--", "lw": 1.0} if label == "all flows" else {}
        marker = "o" if len(v) <= 20 else None
        ax.step(
            np.r_[v[0], v],
            np.r_[0.0, y],
            where="post",
            marker=marker,
            markersize=3,
            label=f"{label} (n={len(v)})",
            **style,
        )
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("slowdown (FCT / ideal FCT, log scale)")
    ax.set_ylabel("fraction of flows (CDF)")
    ax.set_title(f"Slowdown CDF by flow size: {results.scenario_name}")
    ax.legend(title="size bucket", fontsize="small")
    ax.grid(which="both", alpha=0.3)
    return save_figure(fig, path)


def plot_queue_length(results: Any, path: Path, notes: list | None = None) -> Path | None:
    """Queue occupancy over time for the ports with the largest max queue."""
    q = results.queues
    needed = {"time_ps", "node", "port", "bytes"}
    if len(q) == 0 or not needed <= set(q.columns):
        _skip(notes, "queue_length.png skipped: no queue samples")
        return None
    peak = fullest_ports(q)
    if len(peak) == 0:
        _skip(notes, "queue_length.png skipped: every sampled queue stayed empty")
        return None
    unit, scale = time_unit(float(q["time_ps"].max()))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    has_class = "class" in q.columns
    for node, port in peak.index[:TOP_QUEUES]:
        s = q[(q["node"] == node) & (q["port"] == port)].sort_values("time_ps", kind="stable")
        label = port_label(results, int(node), int(port))
        if has_class:
            for cls, sc in s.groupby("class", sort=True):
                t = sc["time_ps"].to_numpy(dtype=float) / scale
                ax.step(
                    t,
                    sc["bytes"].to_numpy(dtype=float) / 1e3,
                    where="post",
                    label=f"{label}, class {cls}",
                )
        else:
            t = s["time_ps"].to_numpy(dtype=float) / scale
            ax.step(
                t,
                s["bytes"].to_numpy(dtype=float) / 1e3,
                where="post",
                label=f"{label} (all classes)",
            )
    ax.set_xlabel(f"simulated time ({unit})")
    ax.set_ylabel("egress queue length (KB)")
    shown = min(TOP_QUEUES, len(peak))
    ax.set_title(f"Egress queue length, {shown} fullest port(s): {results.scenario_name}")
    ax.legend(title="switch port -> where it sends", fontsize="small")
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def plot_owd(results: Any, path: Path, notes: list | None = None) -> Path | None:
    """Sampled one-way delays over time (edge pausing), with the smallest threshold T.

    Runs without `[edge]` have no OWD samples; the plot is then omitted silently.
    """
    o = getattr(results, "owd", None)
    if o is None or len(o) == 0 or not {"time_ps", "owd_ps"} <= set(o.columns):
        return None
    unit, scale = time_unit(float(o["time_ps"].max()))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(
        o["time_ps"].to_numpy(dtype=float) / scale,
        o["owd_ps"].to_numpy(dtype=float) / 1e6,
        ".",
        markersize=2,
        alpha=0.5,
        label="OWD reading",
    )
    edge = results.summary.get("edge") if isinstance(results.summary, dict) else None
    t_min = edge.get("min_threshold_us") if isinstance(edge, dict) else None
    if is_number(t_min):
        ax.axhline(t_min, color="C3", linestyle="--", label=f"smallest T = {t_min:.3g} us")
    ax.set_xlabel(f"simulated time ({unit})")
    ax.set_ylabel("one-way delay (us)")
    rule = edge.get("rule", "?") if isinstance(edge, dict) else "?"
    ax.set_title(f"One-way delay at the senders ({rule}): {results.scenario_name}")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def plot_owd_drop_curve(results: Any, path: Path, notes: list | None = None) -> Path | None:
    """The OWD-versus-drop-probability curve (`[edge] drop_curve`): the share of the packets
    sent after a reading in each 10 us window that were dropped, one line per path length.

    Runs without the curve are omitted silently; windows with fewer than `MIN_SENT` packets,
    and the open last cell (readings of at least the curve's `max`), are not drawn.
    """
    edge = results.summary.get("edge") if isinstance(results.summary, dict) else None
    groups = edge.get("owd_drop_curve") if isinstance(edge, dict) else None
    if not groups:
        return None
    curves = merged([groups], results.scenario_name)
    fig, ax = plt.subplots(figsize=(7, 4.2))
    open_from = curves.open_from_us if curves.open_from_us is not None else float("inf")
    for hops, table in curves.windows.items():
        shown = table[(table["sent"] >= MIN_SENT) & (table["owd_lo_us"] + WINDOW_US <= open_from)]
        ax.plot(
            shown["owd_lo_us"] + WINDOW_US / 2,
            100 * shown["drop_probability"],
            marker="o",
            markersize=3,
            label=f"{hops} switch{'es' if hops != 1 else ''}",
        )
    ax.set_xlabel("OWD of the flow's last acknowledged packet (us, 10 us windows)")
    ax.set_ylabel("next packet dropped (%)")
    ax.set_title(f"Drop probability against OWD: {results.scenario_name}")
    ax.legend(fontsize="small")
    ax.grid(alpha=0.3)
    return save_figure(fig, path)


def plot_throughput(results: Any, path: Path, notes: list | None = None) -> Path | None:
    """Congestion-management runs (`[nic] model = "adapter"`): the switch ports'
    aggregate throughput and the hot port's (the sampled port with the largest
    queue), and the hot queue over time, from the queue series' cumulative
    `tx_bytes` (the IBM talk's TP_aggr, TP_hot and Q_hot plots).

    Other runs (no `cm` table) are skipped silently.
    """
    cm = getattr(results, "cm", None)
    q = results.queues
    if cm is None or len(cm) == 0 or len(q) == 0 or "tx_bytes" not in q.columns:
        return None
    n_hosts = host_count(results) or 0
    q = q[q["node"] >= n_hosts]
    times = sorted(q["time_ps"].unique())
    if len(times) < 2:
        _skip(notes, "throughput.png skipped: fewer than two queue samples")
        return None
    unit, scale = time_unit(float(times[-1]))
    agg = q.groupby("time_ps")["tx_bytes"].sum().sort_index()
    t = agg.index.to_numpy(dtype=float)
    mid = (t[1:] + t[:-1]) / 2 / scale
    gbps = np.diff(agg.to_numpy(dtype=float)) * 8 / (np.diff(t) / 1e12) / 1e9
    hot_node, hot_port = q.groupby(["node", "port"])["bytes"].max().idxmax()
    hot = q[(q["node"] == hot_node) & (q["port"] == hot_port)].sort_values("time_ps")
    ht = hot["time_ps"].to_numpy(dtype=float)
    hot_gbps = np.diff(hot["tx_bytes"].to_numpy(dtype=float)) * 8 / (np.diff(ht) / 1e12) / 1e9
    label = port_label(results, int(hot_node), int(hot_port))
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    top.plot(mid, gbps, label="all switch ports (TP_aggr)")
    top.plot((ht[1:] + ht[:-1]) / 2 / scale, hot_gbps, label=f"hot port: {label} (TP_hot)")
    top.set_ylabel("throughput (Gb/s)")
    top.set_yscale("symlog", linthresh=1.0)
    top.legend(fontsize="small")
    top.grid(alpha=0.3)
    bottom.step(ht / scale, hot["bytes"].to_numpy(dtype=float) / 1e3, where="post")
    bottom.set_ylabel("hot queue (KB)")
    bottom.set_xlabel(f"simulated time ({unit})")
    bottom.grid(alpha=0.3)
    scheme = (results.summary.get("cm") or {}).get("scheme", "?")
    top.set_title(f"Throughput and hot queue ({scheme}): {results.scenario_name}")
    return save_figure(fig, path)


def plot_all(
    results: Any, out_dir: str | os.PathLike[str], notes: list | None = None
) -> list[Path]:
    """Write slowdown_by_size.png, slowdown_cdf.png, queue_length.png (and owd.png
    for runs with edge pausing, owd_drop_curve.png for runs measuring that curve,
    throughput.png for runs with congestion management) into `out_dir`.

    A plot whose data is empty is skipped: a note is appended to `notes` (or
    issued as a warning when `notes` is None). Returns the paths written.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for fn, name in (
        (plot_slowdown_by_size, "slowdown_by_size.png"),
        (plot_slowdown_cdf, "slowdown_cdf.png"),
        (plot_queue_length, "queue_length.png"),
        (plot_owd, "owd.png"),
        (plot_owd_drop_curve, "owd_drop_curve.png"),
        (plot_throughput, "throughput.png"),
    ):
        path = fn(results, out / name, notes)
        if path is not None:
            written.append(path)
    return written
