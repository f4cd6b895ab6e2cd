"""Prints, or writes into its README, a reproduction's tables from the output of its sweep.

    incast sweep scenarios/smart_pause/small.toml --out incast-out/smart_pause_small
    python scenarios/tables.py smart_pause incast-out/smart_pause_small           # print
    python scenarios/tables.py smart_pause incast-out/smart_pause_small --write   # README

reads the sweep's combined tables (points.parquet, comparisons.parquet) and prints
the block; with `--write` it replaces, in scenarios/<talk>/README.md, the block between

    <!-- tables: <experiment name> -->  and  <!-- /tables: <experiment name> -->

with: the experiment's runs (the talk's metrics, mean ± std over seeds per point
and variant) and its comparison tables (improvement factors, mean ± std over
seeds). Nothing in that block is written by hand. `--check` exits 1 if the
README differs from what the sweep gives (a stale table) instead of writing.

`--write` only takes a sweep whose every run is a run of the experiment file as it is
now (same resolved scenario, so the same settings: a sweep made with `--set` or an
older file is refused); the file is the experiment of that name in scenarios/<talk>/,
or `--experiment FILE`.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from incast.combine import comparison_markdown
from incast.results import rdma_data_packets

HERE = Path(__file__).resolve().parent

#: Per talk: the columns of the runs table (points-table column, heading, digits).
METRICS = {
    "smart_pause": [
        ("overall.slowdown.mean", "slowdown mean", 2),
        ("overall.slowdown.p99", "slowdown p99", 1),
        ("drops.packets", "drops", 0),
        ("pfc.pause_frames", "PFC pauses", 0),
        ("edge.pauses", "edge pauses", 0),
        ("flows.measured", "flows", 0),
    ],
    "on_ramp": [
        ("incasts.completion_us.mean", "incast RCT mean (us)", 1),
        ("incasts.completion_us.p95", "incast RCT p95 (us)", 1),
        ("buckets_background[<10KB].fct_us.mean", "bg FCT < 10 KB mean (us)", 1),
        ("retransmits", "retransmits", 0),
        ("drops.packets", "drops", 0),
        ("edge.pauses", "On-Ramp pauses", 0),
    ],
    "congestion_isolation": [
        ("pfc.pause_frames", "PAUSE frames", 0),
        ("pfc.pause_frames_to_hosts", "PAUSE to NICs", 0),
        ("cnps", "CNPs", 0),
        ("ci.pause_frames_cfq_share", "PAUSE from CFQs", 3),
        ("ci.flows_isolated_share", "flows isolated", 3),
        ("ci.large_flows_isolated_share", "large flows isolated", 3),
        ("buckets[<100KB].slowdown.p99", "mice p99 slowdown", 2),
        ("overall.slowdown.mean", "all mean slowdown", 2),
        ("drops.packets", "drops", 0),
        ("flows.unfinished", "unfinished flows", 0),
    ],
    "netronome_fb": [
        ("incasts.completion_us.p50", "read p50 (us)", 0),
        ("incasts.completion_us.p99", "read p99 (us)", 0),
        ("incasts.finished", "reads done", 0),
        ("timeouts", "timeouts", 0),
        ("utilization.max", "bottleneck utilization", 4),
        ("ecn_marks", "switch ECN marks", 0),
    ],
    "ibm_ecm": [
        ("utilization.mean_switch_ports", "mean port utilization", 3),
        ("cm.input_buffers.dropped_frames", "frame drops", 0),
        ("cm.input_buffers.pauses", "input PAUSEs", 0),
        ("cm.feedback_sent", "feedback frames", 0),
        ("cm.probes_sent", "probes", 0),
        ("cm.quenched_frames", "quenched frames", 0),
    ],
}


def _cell(values: pd.Series, digits: int) -> str:
    vals = [float(v) for v in values if v is not None and not _nan(v)]
    if not vals:
        return "-"
    mean = sum(vals) / len(vals)
    fmt = f"{{:,.{digits}f}}"
    text = fmt.format(mean)
    if len(vals) > 1:
        std = math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1))
        text += " ± " + fmt.format(std)
    return text


def _nan(v: object) -> bool:
    try:
        return math.isnan(float(v))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return True


def runs_markdown(points: pd.DataFrame, metrics: list[tuple[str, str, int]]) -> str:
    cols = [(c, h, d) for c, h, d in metrics if c in points.columns]
    head = ["point", "variant", "seeds", *[h for _, h, _ in cols]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (point, variant), g in points.groupby(["point", "variant"], sort=False):
        row = [str(point), str(variant), ",".join(str(s) for s in g["seed"])]
        row += [_cell(g[c], d) for c, _, d in cols]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def _runs(points: pd.DataFrame, sweep_dir: Path, point: str):
    """(variant, seed, run directory, scenario) of every finished run of a point."""
    for r in points[points["point"] == point].itertuples():
        d = sweep_dir / str(r.dir)
        yield r.variant, int(r.seed), d, json.loads((d / "scenario.json").read_text())


def coexist_groups(points: pd.DataFrame, sweep_dir: Path) -> str:
    """Co-existence: incast RCT and retransmissions per host group (the incast
    generators' `hosts`), per case and seed."""
    if "coexist" not in set(points["point"]):
        return ""
    lines = [
        "Co-existence, per group (case A = `base`, B = `on_ramp_group1`, C = `on_ramp`):",
        "",
        "| seed | case | group 1 RCT mean (us) | group 1 retransmits | group 2 RCT mean (us) | "
        "group 2 retransmits |",
        "|---|---|---|---|---|---|",
    ]
    rows = []
    for variant, seed, d, sc in _runs(points, sweep_dir, "coexist"):
        groups = [set(g["hosts"]) for g in sc["workload"]["incast"]]
        inc = pd.read_parquet(d / "incasts.parquet")
        flows = pd.read_parquet(d / "flows.parquet")
        cells = []
        for g in groups:
            done = inc[(inc["finished"] == 1) & inc["receiver"].isin(g)]
            rct = done["completion_ps"].astype(float).mean() / 1e6
            retx = int(flows[flows["src"].isin(g)]["retransmits"].sum())
            cells += [f"{rct:,.0f}", f"{retx:,}"]
        rows.append((seed, variant, cells))
    for seed, variant, cells in sorted(rows, key=lambda x: x[0]):
        lines.append("| " + " | ".join([str(seed), variant, *cells]) + " |")
    return "\n".join(lines) + "\n"


def long12_utilization(points: pd.DataFrame, sweep_dir: Path) -> str:
    """12-to-1: the receiver link's utilization before and after the join, from the
    run stopped at the join (`<point>_join`) and the whole run."""
    names = [p for p in dict.fromkeys(points["point"]) if str(p).startswith("long12_")]
    full = [p for p in names if not p.endswith("_join") and f"{p}_join" in names]
    if not full:
        return ""
    lines = [
        "12-to-1 long flows: receiver-link utilization (the receiver port's bytes sent over "
        "the time x its rate), before the join (0-10 ms) and after it (10-30 ms):",
        "",
        "| point | variant | before join | after join | largest receiver queue, before join / "
        "whole run (MB) | PFC pause frames | On-Ramp pauses |",
        "|---|---|---|---|---|---|---|",
    ]
    for point in full:
        joined = {(v, s): (d, sc) for v, s, d, sc in _runs(points, sweep_dir, f"{point}_join")}
        for variant, seed, d, sc in _runs(points, sweep_dir, point):
            if (variant, seed) not in joined:
                continue
            jd, jsc = joined[(variant, seed)]
            rx = sc["workload"]["flows"][0]["dst"]
            stats = []
            for directory in (jd, d):
                ports = pd.read_parquet(directory / "ports.parquet")
                row = ports[ports["peer"] == rx].iloc[0]
                counters = pd.read_parquet(directory / "counters.parquet")
                q = counters[(counters["node"] == row["node"]) & (counters["port"] == row["port"])]
                stats.append(
                    (int(row["tx_bytes"]), int(row["rate_bps"]), int(q["max_queue_bytes"].max()))
                )
            (b0, rate, q0), (b1, _, q1) = stats
            join_s, end_s = _seconds(jsc["stop"]), _seconds(sc["stop"])
            before = b0 * 8 / (rate * join_s)
            after = (b1 - b0) * 8 / (rate * (end_s - join_s))
            summary = json.loads((d / "summary.json").read_text())
            pauses = (summary.get("edge") or {}).get("pauses", "-")
            lines.append(
                f"| {point} | {variant} | {before:.3f} | **{after:.3f}** | {q0 / 1e6:.2f} / "
                f"{q1 / 1e6:.2f} | {summary['pfc']['pause_frames']:,} | "
                f"{pauses if isinstance(pauses, str) else f'{pauses:,}'} |"
            )
    return "\n".join(lines) + "\n"


def long12_series(points: pd.DataFrame, sweep_dir: Path) -> str:
    """12-to-1 runs with the receiver port's sampled series (long12_experiment.toml): the
    receiver link's utilization before the join and from the join to the stop, the queue's peak
    after the join and its drain time (until, past the peak, it is below a tenth of it), as
    scenarios/claims.py's `receiver_utilization` and `join_drain_ms` compute them."""
    rows = []
    for point in dict.fromkeys(points["point"]):
        for variant, _seed, d, sc in _runs(points, sweep_dir, point):
            flows = (sc.get("workload") or {}).get("flows") or []
            join = max((_seconds(f["start"]) for f in flows), default=0.0)
            if join == 0:
                continue
            ports = pd.read_parquet(d / "ports.parquet")
            port = ports[ports["peer"] == flows[0]["dst"]].iloc[0]
            q = pd.read_parquet(d / "queues.parquet")
            q = q[(q["node"] == port["node"]) & (q["port"] == port["port"])]
            if q.empty:
                continue
            q = q.sort_values("time_ps")
            at = q["time_ps"].to_numpy() / 1e12
            sent = q["tx_bytes"].to_numpy().astype(float)
            queue = q["bytes"].to_numpy().astype(float)
            rate = float(port["rate_bps"])
            first = max(int((at <= join).sum()) - 1, 0)
            before = sent[first] * 8 / (rate * at[first])
            after = (sent[-1] - sent[first]) * 8 / (rate * (at[-1] - at[first]))
            peak = first + int(queue[first:].argmax())
            drained = (queue[peak:] < 0.1 * queue[peak]).nonzero()[0]
            drain = f"{(at[peak + drained[0]] - join) * 1e3:.2f}" if len(drained) else "-"
            rows.append(
                f"| {point} | {variant} | {join * 1e3:g} / {_seconds(sc['stop']) * 1e3:g} | "
                f"{before:.3f} | **{after:.3f}** | {queue[:first].max(initial=0) / 1e6:.2f} / "
                f"{queue[peak] / 1e6:.2f} | {drain} |"
            )
    if not rows:
        return ""
    return (
        "\n".join(
            [
                "12-to-1 long flows: the receiver link's utilization from its port's series "
                "(bytes sent over the time x the rate) before the join and from the join to the "
                "stop; the receiver queue's largest value before the join and its peak after it; "
                "the time from the join until the queue, past its peak, is below a tenth of it "
                "('-': not before the stop):",
                "",
                "| point | variant | join / stop (ms) | before join | after join | queue before / "
                "peak after (MB) | drain (ms) |",
                "|---|---|---|---|---|---|---|",
                *rows,
            ]
        )
        + "\n"
    )


def cubic_two_flows(points: pd.DataFrame, sweep_dir: Path) -> str:
    """Slide 11: two long-lived flows into one receiver: the receiver link's utilization
    over the run, the bottleneck queue from its sampled series, the OWD On-Ramp measured,
    and each flow's goodput."""
    if "two_flows" not in set(points["point"]):
        return ""
    lines = [
        "Two long-lived CUBIC flows: receiver-link utilization over the whole run (its port's "
        "bytes sent over the run time x the rate); the bottleneck queue (switch port to the "
        "receiver) from its series sampled every 10 us: mean, p50, p99 (KB) and the share of "
        "samples with an empty queue; mean OWD as On-Ramp measured it (T = 50 us); each "
        "flow's goodput (bytes its receiver had in order at `stop`) and Jain's fairness index:",
        "",
        "| variant | seed | utilization | queue mean / p50 / p99 (KB) | queue empty | "
        "OWD mean (us) | goodput flow 0 / flow 1 (Gb/s) | Jain | retransmits | On-Ramp pauses |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for variant, seed, d, sc in _runs(points, sweep_dir, "two_flows"):
        rx = sc["workload"]["flows"][0]["dst"]
        run_s = _seconds(sc["stop"])
        ports = pd.read_parquet(d / "ports.parquet")
        row = ports[ports["peer"] == rx].iloc[0]
        util = int(row["tx_bytes"]) * 8 / (int(row["rate_bps"]) * run_s)
        q = pd.read_parquet(d / "queues.parquet")
        q = q[(q["node"] == row["node"]) & (q["port"] == row["port"])]["bytes"].astype(float)
        flows = pd.read_parquet(d / "flows.parquet").sort_values("src")
        gbps = [float(b) * 8 / run_s / 1e9 for b in flows["size_bytes"]]
        jain = sum(gbps) ** 2 / (len(gbps) * sum(g * g for g in gbps))
        summary = json.loads((d / "summary.json").read_text())
        edge = summary.get("edge") or {}
        owd = (edge.get("owd_sampled_us") or {}).get("mean")
        pauses = edge.get("pauses")
        lines.append(
            f"| {variant} | {seed} | **{util:.3f}** | {q.mean() / 1e3:.0f} / "
            f"{q.quantile(0.5) / 1e3:.0f} / {q.quantile(0.99) / 1e3:.0f} | "
            f"{(q == 0).mean():.2f} | {'-' if owd is None else f'{owd:.0f}'} | "
            + " / ".join(f"{g:.2f}" for g in gbps)
            + f" | {jain:.3f} | {summary['retransmits']:,} | "
            f"{'-' if pauses is None else f'{pauses:,}'} |"
        )
    return "\n".join(lines) + "\n"


def _seconds(value) -> float:
    """A scenario time ("30ms", or picoseconds as the normalized form gives) in seconds."""
    if isinstance(value, (int, float)):
        return float(value) / 1e12
    m = re.fullmatch(r"([0-9.]+)\s*(ps|ns|us|ms|s)", str(value))
    if not m:
        raise ValueError(f"not a time: {value!r}")
    scale = {"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    return float(m.group(1)) * scale[m.group(2)]


@dataclass
class HotspotRun:
    """One IBM ECM/E2CM run as time series (seconds, cumulative bytes), from its queue
    series (every port of the one switch, sampled every `queue_sample_interval`) and the
    hotspot's window in its scenario."""

    start: float  # the hotspot's start
    end: float  # and end
    stop: float  # the run's end
    at: np.ndarray  # the sample times
    sent: np.ndarray  # bytes sent by every port of the switch, cumulative
    hot_at: np.ndarray  # the hot port's sample times,
    hot_sent: np.ndarray  # its cumulative bytes sent
    hot_bytes: np.ndarray  # and its queue (bytes)

    def rate(self, a: float, b: float, hot: bool = False) -> float:
        """Throughput (Gb/s) from the last sample at or before `a` to the last at or
        before `b`, of the whole switch or (`hot`) of the hot port; 0 when they coincide."""
        times, series = (self.hot_at, self.hot_sent) if hot else (self.at, self.sent)
        i = max(int(np.searchsorted(times, a, side="right")) - 1, 0)
        j = max(int(np.searchsorted(times, b, side="right")) - 1, 0)
        if times[j] <= times[i]:
            return 0.0
        return float((series[j] - series[i]) * 8 / (times[j] - times[i]) / 1e9)

    def during(self) -> np.ndarray:
        """The hot port's samples inside the hotspot's window (a mask)."""
        return (self.hot_at >= self.start) & (self.hot_at <= self.end)


def hotspot_run(d: Path, sc: dict) -> HotspotRun:
    """Read run directory `d` (scenario `sc`) of the IBM talk's single-switch runs: the
    switch is node `hosts`, the hot port the one to host 0."""
    hot = sc["workload"]["hotspot"][0]
    start = _seconds(hot["start"])
    switch = int(sc["topology"]["hosts"])
    queues = pd.read_parquet(d / "queues.parquet")
    queues = queues[queues["node"] == switch]
    ports = pd.read_parquet(d / "ports.parquet")
    hot_port = int(ports[(ports["node"] == switch) & (ports["peer"] == 0)]["port"].iloc[0])
    total = queues.groupby("time_ps")["tx_bytes"].sum()
    hot_q = queues[queues["port"] == hot_port].sort_values("time_ps")
    return HotspotRun(
        start=start,
        end=start + _seconds(hot["duration"]),
        stop=_seconds(sc["stop"]),
        at=total.index.to_numpy() / 1e12,
        sent=total.to_numpy().astype(float),
        hot_at=hot_q["time_ps"].to_numpy() / 1e12,
        hot_sent=hot_q["tx_bytes"].to_numpy().astype(float),
        hot_bytes=hot_q["bytes"].to_numpy().astype(float),
    )


def ibm_series(points: pd.DataFrame, sweep_dir: Path) -> str:
    """The IBM talk's time-series metrics, from each run's queue series (bytes and
    cumulative tx_bytes of every switch port): aggregate throughput before, during
    and after the hotspot (TP_aggr), the hot port's throughput and queue during it
    (TP_hot, Q_hot), and two recovery times, in 2 ms windows of aggregate
    throughput against its level before the hotspot: *recovery during*, from the
    hotspot's start until the throughput, having fallen below 90 % of that level,
    is back above it (the congestion management restoring the cold flows; "-": not
    before the hotspot ends, "no dip": it never fell); *back after*, from the
    hotspot's end until it is at 95 % ("-": not within the run). (claims.py's `ts.*`
    metrics, `ibm_series_metrics`, read the same series with 5 ms windows.)"""
    lines = [
        "Time series (Gb/s; hot queue in KB; the hotspot's window from the scenario):",
        "",
        "| point | variant | TP_aggr before | TP_aggr during | TP_aggr after | TP_hot during | "
        "Q_hot mean during | Q_hot max | recovery during (ms) | back after (ms) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for point in dict.fromkeys(points["point"]):
        for variant, _seed, d, sc in _runs(points, sweep_dir, point):
            run = hotspot_run(d, sc)
            start, end, stop = run.start, run.end, run.stop
            before = run.rate(start * 0.2, start)
            recovery = "-"
            for t0 in run.at:
                if t0 >= end and t0 + 2e-3 <= stop and run.rate(t0, t0 + 2e-3) >= 0.95 * before:
                    recovery = f"{(t0 - end) * 1e3:.1f}"
                    break
            dipped, during_rec = False, "-"
            for t0 in run.at:
                if t0 < start or t0 + 2e-3 > end:
                    continue
                level = run.rate(t0, t0 + 2e-3)
                if not dipped:
                    dipped = level < 0.9 * before
                elif level >= 0.9 * before:
                    during_rec = f"{(t0 - start) * 1e3:.1f}"
                    break
            if not dipped:
                during_rec = "no dip"
            lines.append(
                f"| {point} | {variant} | {before:.1f} | {run.rate(start, end):.1f} | "
                f"{run.rate(end, stop):.1f} | {run.rate(start, end, hot=True):.2f} | "
                f"{run.hot_bytes[run.during()].mean() / 1e3:.0f} | "
                f"{run.hot_bytes.max() / 1e3:.0f} | {during_rec} | {recovery} |"
            )
    return "\n".join(lines) + "\n"


def ibm_series_metrics(d: Path) -> dict[str, float]:
    """The `ts.*` metrics of one IBM run (scenarios/claims.py documents each)."""
    sc = json.loads((d / "scenario.json").read_text())
    run = hotspot_run(d, sc)
    start, end, at, sent = run.start, run.end, run.at, run.sent
    before = run.rate(0.2 * start, start)
    during = run.during()
    out = {
        "ts.tp_before": before,
        "ts.tp_during": run.rate(start, end),
        "ts.tp_after": run.rate(end, run.stop),
        "ts.tp_hot_during": run.rate(start, end, hot=True),
        "ts.q_hot_mean": float(run.hot_bytes[during].mean()) / 1e3,
        "ts.q_hot_max": float(run.hot_bytes[during].max()) / 1e3,
    }
    # recovery during the hotspot: the aggregate throughput in 5 ms windows (wide enough that
    # the bursts' own swings, about 7 % at B = 120 us, stay inside the 90 % band)
    step = float(np.median(np.diff(at)))
    k = max(int(round(5e-3 / step)), 1)
    inside = np.flatnonzero((at >= start) & (at <= end))
    first, last = int(inside[0]), int(inside[-1])
    smooth = (sent[first + k : last + 1] - sent[first : last + 1 - k]) * 8 / (k * step) / 1e9
    below = np.flatnonzero(smooth < 0.9 * before)
    if not len(below):
        out["ts.recovery_ms"] = 0.0
    else:  # the first time back above 90 % after the first time below it
        back = np.flatnonzero(smooth[int(below[0]) :] >= 0.9 * before)
        done = at[first + int(below[0]) + int(back[0]) + k] if len(back) else end
        out["ts.recovery_ms"] = (done - start) * 1e3
    # the hot queue's first overshoot: from the hotspot's start until the queue (1 ms means)
    # is back below 80 % of its peak, after the peak; the hotspot's duration if never
    m = max(int(round(1e-3 / step)), 1)
    queue = np.convolve(run.hot_bytes[during], np.ones(m) / m, mode="valid")
    times = run.hot_at[during][m - 1 :]
    top = int(np.argmax(queue))
    below = np.flatnonzero(queue[top:] < 0.8 * queue[top])
    settled = times[top + int(below[0])] if len(below) else end
    out["ts.q_settle_ms"] = (settled - start) * 1e3
    # the overshoot: the largest throughput in windows of W after the hotspot's start
    for label, width in (("200us", 200e-6), ("1ms", 1e-3)):
        k = max(int(round(width / step)), 1)
        i = int(np.searchsorted(at, start))
        gbps = (sent[i + k :] - sent[i : len(sent) - k]) * 8 / (at[i + k :] - at[i : len(at) - k])
        gbps = gbps / 1e9
        out[f"ts.overshoot@{label}"] = (
            float(gbps.max()) / before if len(gbps) and before else float("nan")
        )
    return out


def window_utilization(d: Path, links: pd.DataFrame, window_s: float) -> float:
    """The mean utilization of the ports `links` (rows of ports.parquet) over the window in
    which traffic was offered, [0, window_s]: the bytes each port sent inside it, read from the
    run's queue series (cumulative `tx_bytes` per sampled port, `metrics.queue_ports = "nodes"`),
    at the last tick at or before the window's end, over the port's rate x that tick's time.

    A port counts a packet's bytes when its transmission starts, so the figure can exceed the
    exact one by at most one packet per port (1,500 B at 50 Gb/s over 20 ms: 0.0012 %).
    The whole run's bytes over the window (the figure before) counted the backlog drained after
    the arrivals stopped, which reads above 1 in overload."""
    path = d / "queues.parquet"
    series = pd.read_parquet(path) if path.exists() else pd.DataFrame()
    wanted = set(zip(links["node"], links["port"]))
    if series.empty or not wanted <= set(zip(series["node"], series["port"])):
        raise SystemExit(
            f"{d}: the queue series does not cover the links to measure (set "
            '[metrics] queue_ports = "nodes" with queue_nodes naming their switches, e.g. '
            '["spine*"], and a queue_sample_interval that divides the duration)'
        )
    ticks = series.loc[series["time_ps"] <= round(window_s * 1e12), "time_ps"]
    end_ps = int(ticks.max())
    if end_ps <= 0:
        raise SystemExit(f"{d}: the queue series has no tick inside the window")
    at_end = series[series["time_ps"] == end_ps].set_index(["node", "port"])["tx_bytes"]
    sent = [int(at_end.loc[(n, p)]) for n, p in zip(links["node"], links["port"])]
    util = [b * 8 / (rate * end_ps / 1e12) for b, rate in zip(sent, links["rate_bps"])]
    return sum(util) / len(util)


def _six_rack_run(d: Path, sc: dict) -> dict[str, float]:
    """One six-rack run's benchmark figures (the talk's table), from its tables."""
    topo = sc["topology"]
    per_rack, leaves = topo["hosts_per_leaf"], topo["leaves"]
    n_hosts = per_rack * leaves
    storage_hosts = 3 * per_rack  # racks leaf0-leaf2
    worker_leaves = set(range(n_hosts + 3, n_hosts + leaves))
    spines = set(range(n_hosts + leaves, n_hosts + leaves + topo["spines"]))
    ports = pd.read_parquet(d / "ports.parquet")
    down = ports[ports["node"].isin(spines) & ports["peer"].isin(worker_leaves)]
    util = window_utilization(d, down, _seconds(sc["duration"]))
    counters = pd.read_parquet(d / "counters.parquet")
    discards = {
        name: float(counters[counters["node"].isin(nodes)]["drop_bytes"].sum() * 8)
        for name, nodes in (("fsw", spines), ("worker_rack", worker_leaves))
    }
    flows = pd.read_parquet(d / "flows.parquet")
    mss = sc["transport"]["mtu"] - sc["transport"]["header"]
    flows = flows.assign(packets=(flows["size_bytes"] + mss - 1) // mss)
    out = {"util": 100 * util, "fsw": discards["fsw"], "worker_rack": discards["worker_rack"]}
    for name, group in (
        ("storage", flows[flows["src"] < storage_hosts]),
        ("worker", flows[flows["src"] >= storage_hosts]),
    ):
        packets = max(int(group["packets"].sum()), 1)
        out[f"{name}_retx"] = 100 * group["retransmits"].sum() / packets
        out[f"{name}_ce"] = 100 * group["ce_marks"].sum() / packets
    return out


def six_rack_benchmarks(points: pd.DataFrame, sweep_dir: Path) -> str:
    """The talk's "DCTCP in Switch: Benchmarks" table, per point and variant."""
    first = sweep_dir / str(points["dir"].iloc[0]) / "run.json"
    if json.loads(first.read_text(encoding="utf-8"))["experiment"] != "netronome_six_rack":
        return ""
    heads = [
        ("util", "FSW to worker link utilization (%)", 1),
        ("fsw", "FSW discards (bits)", 0),
        ("worker_rack", "worker rack discards (bits)", 0),
        ("storage_retx", "storage retransmits (%)", 3),
        ("worker_retx", "worker retransmits (%)", 3),
        ("storage_ce", "storage CE marked (%)", 1),
        ("worker_ce", "worker CE marked (%)", 1),
    ]
    lines = [
        "The talk's benchmark table (utilization: bytes the FSWs sent down to the worker racks "
        "within the 20 ms of arrivals (from their queue series) x their rate; discards: bytes "
        "dropped x 8 at the FSWs and at the worker racks' switches; retransmits and CE marks: "
        "per data packet of the flows the storage servers (reads) and the workers (cross "
        "traffic) send):",
        "",
        "| point | variant | " + " | ".join(h for _, h, _ in heads) + " |",
        "|---|---|" + "---|" * len(heads),
    ]
    for point in dict.fromkeys(points["point"]):
        by_variant: dict[str, list[dict[str, float]]] = {}
        for variant, _seed, d, sc in _runs(points, sweep_dir, point):
            by_variant.setdefault(variant, []).append(_six_rack_run(d, sc))
        for variant, runs in by_variant.items():
            cells = [_cell(pd.Series([r[k] for r in runs]), digits) for k, _, digits in heads]
            lines.append(f"| {point} | {variant} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


#: Per experiment, where its runs table differs from its talk's.
EXPERIMENT_METRICS = {
    "on_ramp_cubic_two_flows": [
        ("retransmits", "retransmits", 0),
        ("drops.packets", "drops", 0),
        ("edge.pauses", "On-Ramp pauses", 0),
        ("edge.paused_time_us", "paused time, both flows (us)", 0),
    ],
    "on_ramp_cloud": [
        ("incasts.count", "incasts", 0),
        ("incasts.completion_us.mean", "incast RCT mean (us)", 0),
        ("incasts.completion_us.p95", "incast RCT p95 (us)", 0),
        ("incasts.completion_us.p99", "incast RCT p99 (us)", 0),
        ("buckets_background[<10KB].fct_us.mean", "WebSearch FCT < 10 KB mean (us)", 1),
        ("buckets_background[<10KB].fct_us.p95", "WebSearch FCT < 10 KB p95 (us)", 1),
        ("buckets_background[10KB-1MB].fct_us.mean", "10 KB-1 MB mean (us)", 0),
        ("buckets_background[>=1MB].fct_us.mean", ">= 1 MB mean (us)", 0),
        ("retransmits", "retransmits", 0),
        ("timeouts", "timeouts", 0),
        ("drops.packets", "drops", 0),
        ("edge.pauses", "On-Ramp pauses", 0),
    ],
    "on_ramp_clock": [
        ("edge.clock.mean_abs_error_us", "OWD error, mean abs (us)", 3),
        ("incasts.completion_us.mean", "incast RCT mean (us)", 0),
        ("incasts.completion_us.p99", "incast RCT p99 (us)", 0),
        ("buckets_background[<10KB].fct_us.mean", "WebSearch FCT < 10 KB mean (us)", 1),
        ("retransmits", "retransmits", 0),
        ("timeouts", "timeouts", 0),
        ("edge.pauses", "On-Ramp pauses", 0),
    ],
    "on_ramp_long12": [
        ("retransmits", "retransmits", 0),
        ("drops.packets", "drops", 0),
        ("pfc.pause_frames", "PFC pause frames", 0),
        ("edge.pauses", "On-Ramp pauses", 0),
    ],
    "netronome_six_rack": [
        ("incasts.completion_us.p50", "read p50 (us)", 0),
        ("incasts.completion_us.p99", "read p99 (us)", 0),
        ("overall.fct_us.p99", "flow FCT p99 (us)", 0),
        ("retransmits", "retransmits", 0),
        ("timeouts", "timeouts", 0),
        ("drops.packets", "drops", 0),
        ("ecn_marks", "ECN marks", 0),
    ],
    "netronome_multi_host": [
        ("incasts.completion_us.p50", "read p50 (us)", 0),
        ("incasts.completion_us.p99", "read p99 (us)", 0),
        ("incasts.completion_us.p999", "read p99.9 (us)", 0),
        ("incasts.finished", "reads done", 0),
        ("timeouts", "timeouts", 0),
        ("drops.packets", "switch drops", 0),
        ("ecn_marks", "switch ECN marks", 0),
        ("nic_receive.queues.shared.ecn_marks", "NIC ECN marks", 0),
    ],
}


#: Tables beyond the runs and comparisons, per talk.
def pause_readings(points: pd.DataFrame, sweep_dir: Path) -> str:
    """Smart-Pause: the three readings of "pause the next packet for P" at the main point,
    as improvement factors against no PFC (mean over seeds, per size bucket), with each
    variant's drop ratio from its runs' flow tables."""
    if "fixed_rearm" not in set(points["variant"]):
        return ""
    main = points[points["point"] == "dcqcn_60_2mb"]
    cols = [c for c in main.columns if c.startswith("buckets[") and c.endswith("].slowdown.mean")]
    cols.append("overall.slowdown.mean")
    labels = [c[len("buckets[") : -len("].slowdown.mean")] for c in cols[:-1]] + ["all"]
    base = main[main["variant"] == "nopfc"].set_index("seed")
    lines = [
        "Readings of the pause at `dcqcn_60_2mb`: mean slowdown, no PFC / variant, mean over "
        "the seeds (`hold` = once: each reading above T holds the flow for P unless a hold is "
        "on; rearm: every reading restarts the hold; per_packet: each reading adds P):",
        "",
        "| rule | hold | " + " | ".join(labels) + " | drop ratio |",
        "|---|---|" + "---|" * (len(labels) + 1),
    ]
    for rule in ("fixed", "dynamic"):
        for hold, variant in (
            ("once", rule),
            ("rearm", f"{rule}_rearm"),
            ("per_packet", f"{rule}_per_packet"),
        ):
            var = main[main["variant"] == variant].set_index("seed")
            seeds = sorted(set(base.index) & set(var.index))
            if not seeds:
                continue
            cells = []
            for c in cols:
                factors = [float(base.loc[s, c]) / float(var.loc[s, c]) for s in seeds]
                cells.append(f"{sum(factors) / len(factors):.2f}x")
            ratios = [_drop_ratio(sweep_dir / str(var.loc[s, "dir"]), var.loc[s]) for s in seeds]
            ratio = sum(ratios) / len(ratios)
            lines.append(f"| {rule} | {hold} | " + " | ".join(cells) + f" | {100 * ratio:.3f} % |")
    return "\n".join(lines) + "\n"


#: Congestion Isolation: each claim's number per (point, CI variant), against the point's `noci`.
CI_CLAIM_COLUMNS = [
    ("PAUSE", lambda b, v: f"{100 * (v['pfc.pause_frames'] / b['pfc.pause_frames'] - 1):+.0f} %"),
    ("CNPs", lambda b, v: f"{100 * (v['cnps'] / b['cnps'] - 1):+.0f} %"),
    ("from CFQs", lambda b, v: f"{100 * v['ci.pause_frames_cfq_share']:.1f} %"),
    ("isolated", lambda b, v: f"{100 * v['ci.flows_isolated_share']:.1f} %"),
    ("large isolated", lambda b, v: f"{100 * v['ci.large_flows_isolated_share']:.1f} %"),
    (
        "CIPs per PAUSE saved",
        lambda b, v: (
            f"{v['ci.cips_sent'] / (b['pfc.pause_frames'] - v['pfc.pause_frames']):.2f}"
            if b["pfc.pause_frames"] > v["pfc.pause_frames"]
            else "none saved"
        ),
    ),
    ("mean FCT", lambda b, v: f"{b['overall.fct_us.mean'] / v['overall.fct_us.mean']:.2f}x"),
    (
        "mice p99 FCT",
        lambda b, v: f"{b['buckets[<100KB].fct_us.p99'] / v['buckets[<100KB].fct_us.p99']:.2f}x",
    ),
    ("unfinished", lambda b, v: f"{b['flows.unfinished']:.0f} / {v['flows.unfinished']:.0f}"),
]


def ci_claims_by_setting(points: pd.DataFrame, sweep_dir: Path) -> str:
    """Congestion Isolation: the claims' numbers at every point and CI variant (the sensitivity
    table), each against the same point's `noci` run of the same seed, mean over the seeds for
    ratios and cuts (unfinished flows: the seeds' sum, without / with CI)."""
    del sweep_dir
    if "noci" not in set(points["variant"]):
        return ""
    heads = [h for h, _ in CI_CLAIM_COLUMNS]
    lines = [
        "Each claim per setting (with CI against without, same point and seed; mean over the "
        "seeds; cuts are with / without - 1, factors without / with, unfinished flows "
        "without / with CI summed over the seeds):",
        "",
        "| point | variant | " + " | ".join(heads) + " |",
        "|---|---|" + "---|" * len(heads),
    ]
    for point, group in points.groupby("point", sort=False):
        base = group[group["variant"] == "noci"].set_index("seed")
        for variant, runs in group[group["variant"] != "noci"].groupby("variant", sort=False):
            pairs = [
                (base.loc[s], r) for s, r in runs.set_index("seed").iterrows() if s in base.index
            ]
            if not pairs:
                continue
            cells = [_mean_cell([fn(b, v) for b, v in pairs]) for _, fn in CI_CLAIM_COLUMNS]
            lines.append(f"| {point} | {variant} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _mean_cell(texts: list[str]) -> str:
    """The mean of cells that share a format (`-48 %`, `1.31x`, `4.2 %`, `3 / 5`): numbers
    averaged, sums for `a / b` counts; text that is not a number is kept when all agree."""
    if "/" in texts[0]:
        parts = [[float(x) for x in t.split("/")] for t in texts]
        return " / ".join(f"{sum(col):.0f}" for col in zip(*parts))
    numbers = [re.match(r"^[+-]?[\d.]+", t) for t in texts]
    if not all(numbers):
        return texts[0] if len(set(texts)) == 1 else "; ".join(texts)
    values = [float(m.group()) for m in numbers]
    unit = texts[0][numbers[0].end() :]
    mean = sum(values) / len(values)
    digits = len(numbers[0].group().partition(".")[2])
    sign = "+" if texts[0].startswith(("+", "-")) and mean >= 0 else ""
    return f"{sign}{mean:.{digits}f}{unit}"


def _drop_ratio(run: Path, row: pd.Series) -> float:
    """Dropped packets / data packets sent."""
    sent = rdma_data_packets(run)
    return float(row["drops.packets"]) / sent if sent else float("nan")


EXTRAS = {
    "on_ramp": (coexist_groups, long12_utilization, long12_series, cubic_two_flows),
    "ibm_ecm": (ibm_series,),
    "netronome_fb": (six_rack_benchmarks,),
    "smart_pause": (pause_readings,),
    "congestion_isolation": (ci_claims_by_setting,),
}


def tables(talk: str, sweep_dir: Path) -> tuple[str, str]:
    """(experiment name, the Markdown block) from a sweep's output."""
    points = pd.read_parquet(sweep_dir / "points.parquet")
    if len(points) == 0:
        raise SystemExit(f"{sweep_dir}: the sweep has no finished runs")
    run_json = sweep_dir / str(points["dir"].iloc[0]) / "run.json"
    name = json.loads(run_json.read_text(encoding="utf-8"))["experiment"]
    comps_path = sweep_dir / "comparisons.parquet"
    comps = pd.read_parquet(comps_path) if comps_path.is_file() else None
    parts = [
        f"Generated by `python scenarios/tables.py {talk} incast-out/{name} --write` after "
        "`incast sweep` "
        f"of the experiment {name} (from the sweep's points.parquet, comparisons.parquet and run "
        "directories); mean ± standard deviation over the seeds listed.",
        "",
        "Runs:",
        "",
        runs_markdown(points, EXPERIMENT_METRICS.get(name, METRICS[talk])),
        "",
    ]
    for extra in EXTRAS.get(talk, ()):
        text = extra(points, sweep_dir)
        if text:
            parts += [text]
    md = comparison_markdown(comps) if comps is not None else ""
    if md:
        parts += [md.replace("### ", "#### ")]
    return name, "\n".join(parts).rstrip() + "\n"


def replace_block(readme: str, name: str, block: str) -> str:
    start, end = f"<!-- tables: {name} -->", f"<!-- /tables: {name} -->"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    new = f"{start}\n{block}{end}"
    if pattern.search(readme):
        return pattern.sub(lambda _m: new, readme)
    return readme.rstrip() + f"\n\n{new}\n"


def _experiment_file(talk: str, name: str) -> Path:
    """The experiment file in scenarios/<talk>/ whose `name` is `name`."""
    for path in sorted((HERE / talk).glob("*.toml")):
        text = path.read_text(encoding="utf-8")
        if re.search(rf'^name\s*=\s*"{re.escape(name)}"\s*$', text, re.M) and "base =" in text:
            return path
    raise SystemExit(f"no experiment named {name} in scenarios/{talk}/: pass --experiment FILE")


def check_settings(sweep_dir: Path, experiment_file: Path) -> None:
    """Refuses a sweep with a run that the experiment file, as it is now, does not make."""
    from incast.experiment import load_experiment

    hashes = {run.hash for run in load_experiment(experiment_file).runs}
    points = pd.read_parquet(sweep_dir / "points.parquet")
    foreign = [str(r.run) for r in points.itertuples() if r.hash not in hashes]
    if foreign:
        raise SystemExit(
            f"{sweep_dir}: {len(foreign)} of {len(points)} runs (e.g. {foreign[0]}) were not made "
            f"with the settings of {experiment_file} as it is now (an override, or an older "
            "file): rerun the sweep from the file before writing its tables"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("talk", choices=sorted(METRICS))
    ap.add_argument("sweep_dir", type=Path)
    ap.add_argument("--readme", type=Path, default=None)
    ap.add_argument("--write", action="store_true", help="write the block into the README")
    ap.add_argument("--experiment", type=Path, help="the experiment file the sweep ran")
    ap.add_argument("--check", action="store_true", help="fail if the README is stale")
    args = ap.parse_args(argv)
    readme = args.readme or HERE / args.talk / "README.md"
    name, block = tables(args.talk, args.sweep_dir)
    if not args.write and not args.check:
        print(block, end="")
        return 0
    old = readme.read_text(encoding="utf-8")
    new = replace_block(old, name, block)
    if args.check:
        if new != old:
            print(f"{readme}: the tables of {name} are stale", file=sys.stderr)
            return 1
        return 0
    check_settings(args.sweep_dir, args.experiment or _experiment_file(args.talk, name))
    readme.write_text(new, encoding="utf-8")
    print(f"wrote the tables of {name} into {readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
