"""Interactive plots of a run for its HTML report (plotly).

Each figure is zoomable and pannable, its legend entries toggle their series, and
hovering reads the values off. The page embeds plotly.js once (`library_script`)
and each figure as a `<div>` with its data (`figure_div`): it opens offline and
fetches nothing. Series longer than `MAX_POINTS` are decimated so that a page
stays a few megabytes whatever the run's length: queues and delays keep each
bin's lowest and highest point (peaks survive), throughput is averaged over
coarser intervals (exact, from the cumulative byte counts), CDFs keep evenly
spaced quantiles and their whole tail.

A figure is plain data, plotly.js's own form (`{"data": [trace, ...], "layout":
{...}}`), written here as plotly's figure objects would write it (the white
template, numeric series as typed arrays): building it through
`plotly.graph_objects`, which checks every property, took about 0.2 s of each
`incast run`.
"""

from __future__ import annotations

import base64
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from .fmt import is_number
from .plot_data import fullest_ports, host_count, measured_groups, port_label, time_unit

#: At most this many points per series on the page.
MAX_POINTS = 2000
#: Ports drawn in the queue and throughput plots (the fullest ones).
TOP_PORTS = 8
#: Port classes drawn in the PFC timeline (those paused longest).
TOP_PAUSED = 24
#: The points of a CDF's upper tail kept whole (p99 and beyond, up to this many).
CDF_TAIL = 500

# matplotlib's colours, so the interactive plots match the PNGs beside them.
_COLOURS = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
]
_CONFIG = {"displaylogo": False, "responsive": True, "scrollZoom": False}
#: The axes' look, on every axis of every figure.
_AXIS = {"separatethousands": True, "showline": True, "mirror": True}


def library_script() -> str:
    """plotly.js, inline, once per page (about 4.8 MB)."""
    from plotly.offline import get_plotlyjs

    return f'<script type="text/javascript" id="plotly-library">{get_plotlyjs()}</script>'


def figure_div(fig: dict, div_id: str) -> str:
    """One figure as a `<div>` and the call that draws it (the library is on
    the page already). A fixed id keeps the page the same bytes for the same run."""
    import plotly.io as pio

    return pio.to_html(
        fig,
        full_html=False,
        include_plotlyjs=False,
        div_id=div_id,
        config=_CONFIG,
        validate=False,
    )


@lru_cache(maxsize=1)
def _template() -> dict:
    """plotly's white template, as plotly's figure objects embed it: read from
    the JSON plotly itself loads it from (`plotly.io.templates`, which builds a
    figure object from it, takes longer than the rest of the report)."""
    import json
    import pkgutil

    try:
        text = pkgutil.get_data("plotly", "package_data/templates/plotly_white.json")
    except OSError:
        text = None
    if text is None:
        import plotly.io as pio

        return pio.templates["plotly_white"].to_plotly_json()
    return json.loads(text)


def _typed(values: Any) -> dict:
    """A numeric series as a plotly.js typed array (little-endian float64 in
    base64), the form plotly's figure objects give numpy arrays."""
    array = np.ascontiguousarray(values, dtype="<f8")
    return {"dtype": "f8", "bdata": base64.b64encode(array.tobytes()).decode("ascii")}


def _trace(kind: str, **props: Any) -> dict:
    """A trace of `kind` (scatter, bar); numpy series become typed arrays."""
    return {
        "type": kind,
        **{k: _typed(v) if isinstance(v, np.ndarray) else v for k, v in props.items()},
    }


def _styled(layout: dict, title: str, height: int) -> dict:
    """`layout` with the report's look: title, white template, matplotlib's colours."""
    layout.update(
        title={"text": title, "x": 0.0, "xanchor": "left"},
        template=_template(),
        colorway=_COLOURS,
        height=height,
        margin={"l": 70, "r": 20, "t": 50, "b": 50},
        legend={"font": {"size": 11}},
        hoverlabel={"namelength": -1},
    )
    return layout


def _figure(title: str, x_title: str, y_title: str, *, height: int = 420) -> dict:
    """An empty figure with one pair of axes, titled."""
    layout = {
        "xaxis": {**_AXIS, "title": {"text": x_title}},
        "yaxis": {**_AXIS, "title": {"text": y_title}},
    }
    return {"data": [], "layout": _styled(layout, title, height)}


def _hline(fig: dict, y: float, line: dict, text: str | None = None) -> None:
    """A horizontal line across the plot at `y` (and its label at the right end)."""
    layout = fig["layout"]
    shape = {"type": "line", "xref": "x domain", "x0": 0, "x1": 1, "yref": "y", "y0": y, "y1": y}
    layout.setdefault("shapes", []).append({**shape, "line": line})
    if text is not None:
        label = {"text": text, "showarrow": False, "xref": "x domain", "x": 1, "xanchor": "right"}
        layout.setdefault("annotations", []).append(
            {**label, "yref": "y", "y": y, "yanchor": "bottom"}
        )


def decimate_extremes(x: np.ndarray, y: np.ndarray, limit: int = MAX_POINTS) -> tuple:
    """At most `limit` points of (x, y) in order: each of limit/2 bins keeps its
    lowest and highest point, so peaks and troughs stay on the plot."""
    n = len(x)
    if n <= limit:
        return x, y
    bins = max(limit // 2, 1)
    edges = np.linspace(0, n, bins + 1).astype(np.int64)
    keep = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        if hi > lo:
            part = y[lo:hi]
            keep += sorted({lo + int(np.argmin(part)), lo + int(np.argmax(part))})
    keep.append(n - 1)
    idx = np.unique(np.asarray(keep, dtype=np.int64))
    return x[idx], y[idx]


def cdf_points(values: np.ndarray, limit: int = MAX_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """The empirical CDF of `values` as (sorted value, fraction <= value), at most
    about `limit` points: evenly spaced quantiles and the upper tail whole."""
    v = np.sort(values)
    n = len(v)
    y = np.arange(1, n + 1) / n
    if n <= limit:
        return v, y
    tail = min(CDF_TAIL, max(n // 100, 1))
    idx = np.unique(
        np.r_[np.linspace(0, n - 1, limit - tail).astype(np.int64), np.arange(n - tail, n)]
    )
    return v[idx], y[idx]


def slowdown_by_size(results: Any) -> dict | None:
    """p50 / p95 / p99 slowdown per flow-size bucket (log y)."""
    from .buckets import bucket_rows

    rows = [
        (row.label, row.metric("slowdown"))
        for row in bucket_rows(results.summary, overall=False)
        if row.has_slowdown
    ]
    if not rows:
        return None
    fig = _figure("Slowdown by flow size", "flow size bucket (bytes)", "slowdown (FCT / ideal FCT)")
    labels = [label for label, _ in rows]
    for key in ("p50", "p95", "p99"):
        values = [sd.get(key) for _, sd in rows]
        fig["data"].append(
            _trace(
                "bar",
                x=labels,
                y=[float(v) if is_number(v) else None for v in values],
                name=key,
                hovertemplate="%{x}: %{y:,.2f}<extra>" + key + "</extra>",
            )
        )
    _hline(fig, 1.0, {"color": "grey", "dash": "dash", "width": 1})
    layout = fig["layout"]
    layout.update(barmode="group")
    layout["legend"]["title"] = {"text": "percentile"}
    layout["yaxis"]["type"] = "log"
    return fig


def flow_cdf(results: Any, column: str, title: str, x_title: str, fmt: str) -> dict | None:
    """The CDF of `column` of the finished, measured flows per size bucket (log x)."""
    groups = measured_groups(results, column)
    if not groups:
        return None
    fig = _figure(title, x_title, "fraction of flows (CDF)")
    for label, values in groups:
        x, y = cdf_points(values)
        style = {"color": "black", "dash": "dash", "width": 1.5} if label == "all flows" else {}
        fig["data"].append(
            _trace(
                "scatter",
                x=x,
                y=y,
                mode="lines+markers" if len(values) <= 20 else "lines",
                line={"shape": "hv", **style},
                name=f"{label} (n={len(values):,})",
                hovertemplate=f"%{{x:{fmt}}}: %{{y:.2%}} of flows<extra>{label}</extra>",
            )
        )
    layout = fig["layout"]
    layout["xaxis"]["type"] = "log"
    layout["yaxis"]["range"] = [0, 1.02]
    layout["legend"]["title"] = {"text": "size bucket"}
    return fig


def _port_colour(rank: int) -> str:
    """The colour of the `rank`-th fullest port, the same in every plot."""
    return _COLOURS[rank % len(_COLOURS)]


def _port_series(results: Any) -> tuple[Any, list[tuple[str, Any]]]:
    """The sampled queue series and the fullest ports (at most TOP_PORTS), each
    as (`port_label`, its samples in time order), split in one pass."""
    q = results.queues
    if len(q) == 0 or not {"time_ps", "node", "port", "bytes"} <= set(q.columns):
        return q, []
    by_port = q.groupby(["node", "port"], sort=False)
    ports = []
    for node, port in fullest_ports(q).index[:TOP_PORTS]:
        samples = by_port.get_group((node, port)).sort_values("time_ps", kind="stable")
        ports.append((port_label(results, int(node), int(port)), samples))
    return q, ports


def queue_lengths(results: Any) -> dict | None:
    """Egress queue length over time of the fullest sampled switch ports."""
    q, ports = _port_series(results)
    if not ports:
        return None
    unit, scale = time_unit(float(q["time_ps"].max()))
    fig = _figure(
        f"Egress queue length, {len(ports)} fullest port(s)",
        f"simulated time ({unit})",
        "queue length (KB)",
    )
    for i, (label, s) in enumerate(ports):
        x, y = decimate_extremes(
            s["time_ps"].to_numpy(dtype=float) / scale, s["bytes"].to_numpy(dtype=float) / 1e3
        )
        fig["data"].append(
            _trace(
                "scatter",
                x=x,
                y=y,
                mode="lines",
                line={"shape": "hv", "width": 1.5, "color": _port_colour(i)},
                name=label,
                hovertemplate=f"%{{x:,.1f}} {unit}: %{{y:,.1f}} KB<extra>{label}</extra>",
            )
        )
    fig["layout"]["legend"]["title"] = {"text": "switch port -> where it sends"}
    return fig


def _rate_gbps(t_ps: np.ndarray, tx_bytes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Throughput between samples of a cumulative byte count, over at most
    MAX_POINTS intervals (coarser intervals: exact averages): (mid time ps, Gb/s)."""
    if len(t_ps) > MAX_POINTS + 1:
        idx = np.unique(np.linspace(0, len(t_ps) - 1, MAX_POINTS + 1).astype(np.int64))
        t_ps, tx_bytes = t_ps[idx], tx_bytes[idx]
    dt = np.diff(t_ps)
    ok = dt > 0
    gbps = np.diff(tx_bytes)[ok] * 8 / (dt[ok] / 1e12) / 1e9
    return ((t_ps[1:] + t_ps[:-1]) / 2)[ok], gbps


def throughput(results: Any) -> dict | None:
    """Throughput over time: all sampled switch ports together, and each of the
    fullest ports (from the queue series' cumulative `tx_bytes`)."""
    q, ports = _port_series(results)
    if not ports or "tx_bytes" not in q.columns or q["time_ps"].nunique() < 2:
        return None
    unit, scale = time_unit(float(q["time_ps"].max()))
    fig = _figure("Throughput over time", f"simulated time ({unit})", "throughput (Gb/s)")
    switch_ports = q[q["node"] >= (host_count(results) or 0)]
    agg = switch_ports.groupby("time_ps")["tx_bytes"].sum().sort_index()
    series = [("all sampled switch ports", agg.index.to_numpy(float), agg.to_numpy(float))]
    for label, s in ports:
        series.append((label, s["time_ps"].to_numpy(float), s["tx_bytes"].to_numpy(float)))
    for i, (label, t, tx) in enumerate(series):
        mid, gbps = _rate_gbps(t, tx)
        fig["data"].append(
            _trace(
                "scatter",
                x=mid / scale,
                y=gbps,
                mode="lines",
                name=label,
                # The ports keep their colours from the queue plot.
                line={"width": 2.5, "color": "black"} if i == 0 else {"color": _port_colour(i - 1)},
                hovertemplate=f"%{{x:,.1f}} {unit}: %{{y:,.2f}} Gb/s<extra>{label}</extra>",
            )
        )
    return fig


def _paused_intervals(events: Any, end_ps: float) -> list[tuple[float, float]]:
    """(start, end) of each pause of one port class, from its events in time
    order (a pause and the resume that ends it; watchdog events set nothing
    here); a pause never resumed lasts until `end_ps`."""
    kind = events["event"].astype(str).to_numpy()
    sel = (kind == "pause") | (kind == "resume")
    times = events["time_ps"].to_numpy(dtype=float)[sel]
    is_pause = kind[sel] == "pause"
    # Each change of state: a pause after a resume (or first), a resume after a pause.
    change = is_pause != np.r_[False, is_pause[:-1]]
    times, is_pause = times[change], is_pause[change]
    starts = times[is_pause]
    ends = times[~is_pause]
    if len(ends) < len(starts):
        ends = np.r_[ends, max(end_ps, starts[-1])]
    return list(zip(starts.tolist(), ends.tolist()))


def _merge_close(intervals: list, gap: float, limit: int = MAX_POINTS // 3) -> list:
    """Intervals closer than `gap` merged (doubling it) until at most `limit` remain."""
    while len(intervals) > limit:
        merged = [intervals[0]]
        for start, end in intervals[1:]:
            if start - merged[-1][1] <= gap:
                merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
            else:
                merged.append((start, end))
        intervals, gap = merged, gap * 2
    return intervals


def pfc_pauses(results: Any) -> dict | None:
    """PFC: when each port class was paused (it had received a PAUSE and held
    its traffic), one row per port class, the longest-paused at the top."""
    pfc = getattr(results, "pfc", None)
    if pfc is None or len(pfc) == 0 or not {"time_ps", "node", "port", "event"} <= set(pfc.columns):
        return None
    sim_us = results.summary.get("sim_time_us")
    end_ps = float(sim_us) * 1e6 if is_number(sim_us) else float(pfc["time_ps"].max())
    unit, scale = time_unit(end_ps)
    keys = ["node", "port"] + (["class"] if "class" in pfc.columns else [])
    rows = []
    for key, events in pfc.sort_values("time_ps", kind="stable").groupby(keys, sort=True):
        intervals = _paused_intervals(events, end_ps)
        if intervals:
            paused = sum(end - start for start, end in intervals)
            rows.append((paused, tuple(int(k) for k in key), intervals))
    if not rows:
        return None
    rows.sort(key=lambda row: -row[0])
    shown = rows[:TOP_PAUSED]
    title = f"PFC: paused port classes over time ({len(shown)} of {len(rows)})"
    fig = _figure(title, f"simulated time ({unit})", "", height=max(260, 90 + 26 * len(shown)))
    labels = []
    for i, (paused, key, intervals) in enumerate(shown):
        label = port_label(results, key[0], key[1]) + (f", class {key[2]}" if len(key) > 2 else "")
        labels.append(label)
        intervals = _merge_close(intervals, end_ps / MAX_POINTS)
        x: list = []
        for start, end in intervals:
            x += [start / scale, end / scale, None]
        fig["data"].append(
            _trace(
                "scatter",
                x=x,
                y=[label if v is not None else None for v in x],
                mode="lines",
                line={"width": 12, "color": _COLOURS[i % len(_COLOURS)]},
                name=label,
                showlegend=False,
                hovertemplate=(
                    f"%{{x:,.1f}} {unit}<extra>{label}: {len(intervals):,} pauses, "
                    f"{paused / 1e6:,.1f} us paused</extra>"
                ),
            )
        )
    layout = fig["layout"]
    layout["yaxis"].update(type="category", categoryorder="array", categoryarray=labels[::-1])
    layout["xaxis"]["range"] = [0, end_ps / scale]
    return fig


def _stacked_rows(rows: int, spacing: float) -> dict:
    """A layout's axes for `rows` plots stacked over one shared time axis (the
    bottom one's), `spacing` apart, as plotly's `make_subplots` lays them out
    (the same sums): row r's axes are `xaxis{r}` / `yaxis{r}` (`xaxis` /
    `yaxis` for the first, at the top)."""
    height = (1.0 - spacing * (rows - 1)) / rows
    layout = {}
    for row in range(1, rows + 1):
        suffix = "" if row == 1 else str(row)
        below = rows - row  # rows under this one
        bottom = sum([height] * below) + below * spacing
        top = min(bottom + height, 1.0)
        x_axis = {**_AXIS, "anchor": f"y{suffix}", "domain": [0.0, 1.0]}
        if row < rows:
            x_axis.update(matches=f"x{rows}", showticklabels=False)
        layout[f"xaxis{suffix}"] = x_axis
        layout[f"yaxis{suffix}"] = {**_AXIS, "anchor": f"x{suffix}", "domain": [bottom, top]}
    return layout


def cm_rates(results: Any) -> dict | None:
    """Congestion management over time (the adapter NIC): the rate-limited
    flows' mean and lowest rate, how many are limited, and the hotspots'
    receive-buffer bytes."""
    cm = getattr(results, "cm", None)
    if cm is None or len(cm) == 0 or "time_ps" not in cm.columns:
        return None
    unit, scale = time_unit(float(cm["time_ps"].max()))
    t = cm["time_ps"].to_numpy(dtype=float) / scale
    panels = [
        ("mean_rate_gbps", "mean rate of the limited flows", "rate (Gb/s)", 1),
        ("min_rate_gbps", "lowest rate", "rate (Gb/s)", 1),
        ("limited_flows", "flows rate-limited", "flows", 2),
        ("hot_rx_bytes", "hotspots' receive buffers", "receive buffers (KB)", 3),
    ]
    layout = _styled(_stacked_rows(3, 0.06), "Congestion management over time", 640)
    fig = {"data": [], "layout": layout}
    for column, label, axis, row in panels:
        if column not in cm.columns:
            continue
        suffix = "" if row == 1 else str(row)
        values = cm[column].to_numpy(dtype=float, na_value=np.nan)
        x, y = decimate_extremes(t, values / 1e3 if column == "hot_rx_bytes" else values)
        fig["data"].append(
            _trace(
                "scatter",
                x=x,
                y=y,
                mode="lines",
                line={"shape": "hv"},
                name=label,
                hovertemplate=f"%{{x:,.1f}} {unit}: %{{y:,.3~f}}<extra>{label}</extra>",
                xaxis=f"x{suffix}",
                yaxis=f"y{suffix}",
            )
        )
        layout[f"yaxis{suffix}"]["title"] = {"text": axis}
    layout["xaxis3"]["title"] = {"text": f"simulated time ({unit})"}
    return fig


def one_way_delays(results: Any) -> dict | None:
    """Edge pausing: the senders' sampled one-way delays over time, and the
    smallest threshold T."""
    o = getattr(results, "owd", None)
    if o is None or len(o) == 0 or not {"time_ps", "owd_ps"} <= set(o.columns):
        return None
    o = o.sort_values("time_ps", kind="stable")
    unit, scale = time_unit(float(o["time_ps"].max()))
    fig = _figure("One-way delay at the senders", f"simulated time ({unit})", "one-way delay (us)")
    x, y = decimate_extremes(
        o["time_ps"].to_numpy(dtype=float) / scale, o["owd_ps"].to_numpy(dtype=float) / 1e6
    )
    fig["data"].append(
        _trace(
            "scatter",
            x=x,
            y=y,
            mode="markers",
            marker={"size": 3, "opacity": 0.6},
            name="OWD reading",
            hovertemplate=f"%{{x:,.1f}} {unit}: %{{y:,.2f}} us<extra></extra>",
        )
    )
    edge = results.summary.get("edge")
    t_min = edge.get("min_threshold_us") if isinstance(edge, dict) else None
    if is_number(t_min):
        line = {"color": _COLOURS[3], "dash": "dash"}
        _hline(fig, t_min, line, f"smallest T = {t_min:,.3g} us")
    return fig


#: The report's interactive plots in page order: (id, section title, builder).
FIGURES: tuple[tuple[str, str, Callable[[Any], dict | None]], ...] = (
    ("slowdown-by-size", "Slowdown by flow size", slowdown_by_size),
    (
        "slowdown-cdf",
        "Slowdown CDF",
        lambda r: flow_cdf(
            r, "slowdown", "Slowdown CDF by flow size", "slowdown (FCT / ideal FCT)", ",.2f"
        ),
    ),
    (
        "fct-cdf",
        "FCT CDF",
        lambda r: flow_cdf(
            r, "fct_us", "FCT CDF by flow size", "flow completion time (us)", ",.1f"
        ),
    ),
    ("queues", "Queues over time", queue_lengths),
    ("throughput", "Throughput over time", throughput),
    ("pfc", "PFC pauses over time", pfc_pauses),
    ("cm", "Congestion management over time", cm_rates),
    ("owd", "One-way delay (edge pausing)", one_way_delays),
)


def run_figures(results: Any) -> list[tuple[str, str, dict]]:
    """The interactive plots this run has data for: [(id, section title, figure)]."""
    figures = []
    for div_id, title, build in FIGURES:
        fig = build(results)
        if fig is not None:
            figures.append((div_id, title, fig))
    return figures
