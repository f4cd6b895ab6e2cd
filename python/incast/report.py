"""The terminal summary of a run (rich)."""

from __future__ import annotations

import math
from typing import Any

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ._runner import format_ps

_PCTS = (("mean", "mean"), ("p50", "p50"), ("p95", "p95"), ("p99", "p99"), ("p999", "p99.9"))

# Top-level summary keys rendered by a dedicated section.
_KNOWN = {
    "scenario",
    "seed",
    "sim_time_us",
    "flows",
    "buckets",
    "overall",
    "drops",
    "ecn_marks",
    "retransmits",
    "timeouts",
    "incasts",
    "utilization",
    "engine",
    "edge",
    "ci",
    "cnps",
    "out_of_order_arrivals",
    "buckets_background",
    "pfc",
    "warnings",
    "queue_series",
    "congestion_controls",
    "by_cc",
    "cm",
    "nic_queues",
    "nic_receive",
    "pcie",
}


def _num(x: Any, digits: int = 2) -> str:
    """A number for display; '-' for missing or NaN."""
    if x is None or isinstance(x, bool):
        return "-" if x is None else str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        if math.isnan(x):
            return "-"
        if x != 0 and abs(x) < 10**-digits:
            return f"{x:.{digits}g}"
        if abs(x) >= 1e4:
            return f"{x:,.0f}"
        return f"{x:,.{digits}f}"
    return str(x)


def _si(x: float) -> str:
    """1234567 -> '1.23M'."""
    for unit, scale in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= scale:
            return f"{x / scale:.3g}{unit}"
    return f"{x:.3g}"


def _bytes(n: Any) -> str:
    """100000 -> '100 KB' (decimal units, as in scenario files)."""
    if not isinstance(n, (int, float)) or isinstance(n, bool):
        return _num(n)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(n) >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.3g} B"


def _pct(x: Any) -> str:
    """A 0..1 share as '12.3 %'."""
    if isinstance(x, (int, float)) and not isinstance(x, bool) and not math.isnan(x):
        return f"{x * 100:.1f} %"
    return "-"


def _get(d: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _bucket_row(label: str, b: dict) -> list[str]:
    sd = b.get("slowdown") if isinstance(b.get("slowdown"), dict) else {}
    fct = b.get("fct_us") if isinstance(b.get("fct_us"), dict) else {}
    return (
        [escape(label), _num(b.get("count"))]
        + [_num(sd.get(k)) for k, _ in _PCTS]
        + [_num(fct.get("mean"), 1)]
    )


def bucket_table(
    summary: dict, key: str = "buckets", title: str = "Slowdown (FCT / ideal FCT) by flow size"
) -> Table | None:
    """Slowdown percentiles and mean FCT per flow-size bucket (plus an overall row
    for all flows)."""
    buckets = [b for b in summary.get(key) or [] if isinstance(b, dict)]
    overall = summary.get("overall") if isinstance(summary.get("overall"), dict) else None
    if key != "buckets":
        overall = None
    if not buckets and not overall:
        return None
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAVY)
    table.add_column("size")
    table.add_column("flows", justify="right")
    for _, head in _PCTS:
        table.add_column(f"{head}", justify="right")
    table.add_column("mean FCT us", justify="right", no_wrap=True)
    for b in buckets:
        table.add_row(*_bucket_row(str(b.get("label", "?")), b))
    if overall:
        table.add_row(*_bucket_row("all", overall), style="bold", end_section=False)
    return table


def totals_rows(summary: dict) -> list[tuple[str, str]]:
    """(label, value) rows of the run's totals, labelled for a reader: what is
    summed over what, in which unit."""
    rows: list[tuple[str, str]] = []
    flows = summary.get("flows")
    if isinstance(flows, dict):
        parts = [f"{_num(flows.get('finished'))} finished"]
        if flows.get("unfinished"):
            parts.append(f"{_num(flows.get('unfinished'))} unfinished")
        # Flows stopped at their `stop` (bulk on-periods, long-lived flows) are
        # never measured: they have no slowdown.
        stopped = flows.get("stopped") or 0
        if stopped:
            parts.append(f"{_num(stopped)} stopped at their stop time")
        total = flows.get("total")
        if isinstance(total, int) and flows.get("measured") != total - stopped:
            parts.append(f"{_num(flows.get('measured'))} measured (outside warm-up/cool-down)")
        rows.append(("flows", f"{_num(total)} ({', '.join(parts)})"))
    stopped_flows = summary.get("stopped_flows")
    if isinstance(stopped_flows, dict):
        gbps = stopped_flows.get("goodput_gbps") or {}
        rows.append(
            (
                "stopped flows",
                f"{_num(stopped_flows.get('count'))} flows delivered "
                f"{_num(stopped_flows.get('bytes'))} B, goodput mean "
                f"{_num(gbps.get('mean'))} Gb/s, max {_num(gbps.get('max'))} Gb/s",
            )
        )
    drops = summary.get("drops")
    if isinstance(drops, dict):
        rows.append(
            (
                "packets dropped, all switch ports",
                f"{_num(drops.get('packets'))} ({_bytes(drops.get('bytes'))})",
            )
        )
    elif drops is not None:
        rows.append(("packets dropped, all switch ports", _num(drops)))
    labels = (
        ("ecn_marks", "packets ECN-marked, all switch ports"),
        ("retransmits", "packets retransmitted, all flows"),
        ("timeouts", "retransmission timeouts, all flows"),
    )
    for key, label in labels:
        if key in summary:
            rows.append((label, _num(summary[key])))
    # RDMA receivers' CNPs and out-of-order arrivals: only when something happened.
    for key, label in (
        ("cnps", "CNPs sent by receivers"),
        ("out_of_order_arrivals", "packets arriving out of order, all flows"),
    ):
        if summary.get(key):
            rows.append((label, _num(summary[key])))
    util = summary.get("utilization")
    if isinstance(util, dict):
        names = {
            "max": "utilization of the busiest port",
            "mean_switch_ports": ("utilization, mean over switch ports"),
        }
        for k, v in util.items():
            label = names.get(k, f"utilization ({str(k).replace('_', ' ')})")
            rows.append((label, _pct(v) if isinstance(v, (int, float)) else _num(v)))
    return rows


def _kv_table(title: str) -> Table:
    """A borderless two-column table of labels (dim) and right-aligned values."""
    t = Table(show_header=False, box=None, pad_edge=False, title=title, title_justify="left")
    t.add_column(style="dim")
    t.add_column(justify="right")
    return t


def _totals(summary: dict) -> Table:
    t = _kv_table("Totals")
    for label, value in totals_rows(summary):
        t.add_row(escape(label), escape(value))
    return t


#: PFC summary keys, labelled.
_PFC_LABELS = (
    ("pause_frames", "PAUSE frames sent, all ports"),
    ("pause_frames_to_hosts", "  of which to hosts (NICs)"),
    ("resume_frames", "RESUME (XON) frames sent"),
    ("paused_time_us", "paused time, summed over ports and classes (us)"),
    ("lossless_drops", "drops in lossless classes"),
    ("watchdog_trips", "PFC watchdog trips"),
    ("watchdog_drops", "packets dropped by the watchdog"),
)


def pfc_rows(summary: dict) -> list[tuple[str, str]]:
    """(label, value) rows of the PFC totals; none in a run where PFC never acted
    (no PAUSE, no drop)."""
    pfc = summary.get("pfc")
    if not isinstance(pfc, dict) or not any(
        isinstance(v, (int, float)) and v for v in pfc.values()
    ):
        return []
    rows = [(label, _num(pfc[key])) for key, label in _PFC_LABELS if key in pfc]
    known = {key for key, _ in _PFC_LABELS}
    rows += [(str(k).replace("_", " "), _num(v)) for k, v in pfc.items() if k not in known]
    return rows


def _pfc(summary: dict) -> Table | None:
    rows = pfc_rows(summary)
    if not rows:
        return None
    t = _kv_table("PFC")
    for label, value in rows:
        t.add_row(escape(label), value)
    return t


def _incasts(summary: dict) -> Table | None:
    inc = summary.get("incasts")
    if not isinstance(inc, dict) or not inc.get("count"):
        return None
    t = Table(title="Incast completion time (us)", title_justify="left", box=box.SIMPLE_HEAVY)
    t.add_column("incasts", justify="right")
    t.add_column("finished", justify="right")
    ct = inc.get("completion_us") if isinstance(inc.get("completion_us"), dict) else {}
    for _, head in _PCTS:
        t.add_column(head, justify="right")
    t.add_row(
        _num(inc.get("count")), _num(inc.get("finished")), *[_num(ct.get(k), 1) for k, _ in _PCTS]
    )
    return t


def _edge(summary: dict) -> tuple[Table | None, list[str]]:
    """Edge pausing (Smart-Pause / On-Ramp): rule, pauses, OWD, clock error; and warnings."""
    e = summary.get("edge")
    if not isinstance(e, dict):
        return None, []
    t = _kv_table("Edge pausing")
    t.add_row("rule", escape(str(e.get("rule", "?"))))
    t.add_row("gated senders", _num(e.get("gated_hosts")))
    t.add_row("smallest threshold T", f"{_num(e.get('min_threshold_us'))} us")
    t.add_row("pauses", _num(e.get("pauses")))
    t.add_row("paused time (all flows)", f"{_num(e.get('paused_time_us'), 1)} us")
    owd = e.get("owd_sampled_us") if isinstance(e.get("owd_sampled_us"), dict) else {}
    if owd:
        t.add_row(
            "OWD (sampled) mean / p99 / max",
            " / ".join(_num(owd.get(k)) for k in ("mean", "p99", "max")) + " us",
        )
    clock = e.get("clock") if isinstance(e.get("clock"), dict) else {}
    if clock:
        t.add_row(
            "clock error mean / max",
            f"{_num(clock.get('mean_abs_error_us'), 3)} / "
            f"{_num(clock.get('max_abs_error_us'), 3)} us",
        )
    warnings = [str(w) for w in e.get("warnings") or []]
    return t, warnings


def _ci(summary: dict) -> tuple[Table | None, list[str]]:
    """IEEE 802.1Qcz congestion isolation: CIPs, isolations, isolated flows,
    PAUSE frames by queue kind; and warnings."""
    c = summary.get("ci")
    if not isinstance(c, dict):
        return None, []
    t = _kv_table("Congestion isolation")

    def slash(*keys: str) -> str:
        return " / ".join(_num(c.get(k)) for k in keys)

    t.add_row(
        "CIPs sent / received / lost",
        slash("cips_sent", "cips_received", "cips_lost"),
    )
    t.add_row("CIP resends / gave up", slash("cip_resends", "cip_gave_up"))
    t.add_row("CIP acks sent / received", slash("cip_acks_sent", "cip_acks_received"))
    t.add_row("isolations at congestion points", _num(c.get("isolations_detected")))
    t.add_row("isolations installed by CIP", _num(c.get("isolations_by_cip")))
    t.add_row("isolations at NICs", _num(c.get("nic_isolations")))
    t.add_row("de-isolations (switches / NICs)", slash("deisolations", "nic_deisolations"))
    t.add_row(
        "table-full refusals (peak entries)",
        f"{_num(c.get('table_full'))} ({_num(c.get('peak_table_entries'))})",
    )
    if c.get("cfq_blocked_events"):
        t.add_row("CFQ blocked events", _num(c.get("cfq_blocked_events")))
    t.add_row(
        "flows isolated",
        f"{_num(c.get('flows_isolated'))} ({_pct(c.get('flows_isolated_share'))} of flows)",
    )
    t.add_row(
        f"large flows (>= {_bytes(c.get('large_flow_bytes'))}) isolated",
        _pct(c.get("large_flows_isolated_share")),
    )
    t.add_row(
        "PAUSE frames sent: NCQ / CFQ",
        f"{slash('pause_frames_ncq', 'pause_frames_cfq')}"
        f" (CFQ {_pct(c.get('pause_frames_cfq_share'))})",
    )
    t.add_row("PAUSE frames received by NICs", _num(c.get("pause_frames_to_nics")))
    warnings = []
    if isinstance(c.get("table_full"), (int, float)) and c["table_full"] > 0:
        warnings.append(
            "congested-flow table full: raise switch.ci.max_flows"
            f" ({_num(c['table_full'])} isolations refused)"
        )
    if isinstance(c.get("cip_gave_up"), (int, float)) and c["cip_gave_up"] > 0:
        warnings.append(
            f"{_num(c['cip_gave_up'])} CIPs given up after their resends went unacknowledged"
        )
    return t, warnings


def cm_rows(summary: dict) -> list[tuple[str, str]]:
    """Congestion management (`[cm]`, the adapter NIC, input partitions) as
    (label, value) rows; empty without them."""
    c = summary.get("cm")
    if not isinstance(c, dict):
        return []
    rows: list[tuple[str, str]] = []
    if "scheme" in c:
        rows.append(("scheme", str(c["scheme"])))
        rows.append(
            (
                "feedback frames sent / received",
                f"{_num(c.get('feedback_sent'))} / {_num(c.get('feedback_received'))}",
            )
        )
        if c.get("probes_sent"):
            rows.append(
                (
                    "E2CM probes / echoes",
                    f"{_num(c['probes_sent'])} / {_num(c.get('echoes_received'))}",
                )
            )
        rows.append(("frames quenched at the sources", _num(c.get("quenched_frames"))))
        rate = c.get("limited_rate_gbps") or {}
        rows.append(
            (
                "flows rate-limited at the end",
                f"{_num(c.get('limited_at_end'))} of {_num(c.get('reaction_points'))} limiters"
                + (
                    f", mean {_num(rate.get('mean'))} Gb/s, lowest {_num(rate.get('min'), 4)}"
                    if rate.get("mean") is not None
                    else ""
                ),
            )
        )
        if c.get("largest_cut") is not None:
            rows.append(("largest QCN cut", _pct(c["largest_cut"])))
        for rx in c.get("receive_buffers") or []:
            rows.append(
                (
                    f"hotspot host {rx.get('host')} receive buffer",
                    f"{_num(rx.get('pauses'))} PAUSEs, peak {_bytes(rx.get('peak_bytes'))}, "
                    f"{_num(rx.get('overflow_frames'))} frames lost",
                )
            )
    ib = c.get("input_buffers")
    if isinstance(ib, dict):
        rows.append(
            (
                "switch input partitions",
                f"{_num(ib.get('dropped_frames'))} frames dropped, "
                f"{_num(ib.get('pauses'))} PAUSEs, peak {_bytes(ib.get('peak_bytes'))}",
            )
        )
    return rows


def _cm(summary: dict) -> Table | None:
    rows = cm_rows(summary)
    if not rows:
        return None
    t = _kv_table("Congestion management")
    for k, v in rows:
        t.add_row(escape(k), escape(v))
    return t


def nic_rows(summary: dict) -> list[tuple[str, str]]:
    """The NICs' transmit queues, receive path and PCIe links (`[nic]`) as
    (label, value) rows; empty without them."""
    rows: list[tuple[str, str]] = []
    tx = summary.get("nic_queues")
    if isinstance(tx, dict):
        for name, q in (tx.get("queues") or {}).items():
            rows.append(
                (
                    f"transmit queue {name} ({tx.get('split')})",
                    f"peak {_bytes(q.get('max_bytes'))}, mean {_bytes(q.get('mean_bytes'))}"
                    f" (limit {_bytes(tx.get('limit_bytes'))})",
                )
            )
    rx = summary.get("nic_receive")
    if isinstance(rx, dict):
        for name, q in (rx.get("queues") or {}).items():
            rows.append(
                (
                    f"receive queue {name} (PCIe {_num(rx.get('pcie_gbps'))} Gb/s)",
                    f"peak {_bytes(q.get('max_bytes'))}, {_num(q.get('ecn_marks'))} CE marks, "
                    f"{_num(q.get('drops'))} drops",
                )
            )
    pcie = summary.get("pcie")
    if isinstance(pcie, dict):
        rows.append(
            (
                f"host PCIe transmit cap {_num(pcie.get('gbps'))} Gb/s",
                f"busiest host sent {_bytes(pcie.get('max_host_tx_bytes'))}",
            )
        )
    return rows


def _nic(summary: dict) -> Table | None:
    rows = nic_rows(summary)
    if not rows:
        return None
    t = _kv_table("NIC")
    for k, v in rows:
        t.add_row(escape(k), escape(v))
    return t


def _flatten(prefix: str, v: Any, out: list) -> None:
    if isinstance(v, dict):
        for k, sub in v.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), sub, out)
    elif isinstance(v, list):
        out.append((prefix, f"[{len(v)} items]"))
    else:
        out.append((prefix, _num(v)))


def _others(summary: dict) -> Table | None:
    rows: list = []
    for k, v in summary.items():
        if k not in _KNOWN:
            _flatten(k, v, rows)
    if not rows:
        return None
    t = _kv_table("Other")
    for k, v in rows:
        t.add_row(escape(k), escape(v))
    return t


def header_text(results: Any) -> str:
    s = results.summary
    stats = results.stats or {}
    name = escape(str(s.get("scenario") or "?"))
    seed = s.get("seed", "?")
    sim_us = s.get("sim_time_us")
    if isinstance(sim_us, (int, float)):
        simtime = format_ps(sim_us * 1e6)
    elif stats.get("sim_time_ps") is not None:
        simtime = format_ps(stats["sim_time_ps"])
    else:
        simtime = "?"
    wall = stats.get("wall_seconds")
    events = stats.get("events", _get(s, "engine", "events"))
    line1 = f"[bold]{name}[/bold]  seed {seed}"
    line2 = f"simulated {simtime}"
    if isinstance(wall, (int, float)) and wall > 0:
        line2 += f" in {wall:.2f} s of wall time"
    if isinstance(events, (int, float)):
        line2 += f", {_si(events)} events"
        if isinstance(wall, (int, float)) and wall > 0:
            line2 += f" ({_si(events / wall)} events/s)"
    return f"{line1}\n{line2}"


def print_summary(results: Any, console: Console | None = None) -> None:
    """Print the run summary: header, slowdown by size bucket, totals,
    incast completion times, edge pausing, congestion isolation and anything
    else the core reported."""
    console = console or Console()
    summary = results.summary if isinstance(results.summary, dict) else {}
    console.rule("[bold]incast results")
    console.print(header_text(results), highlight=False)
    table = bucket_table(summary)
    if table is not None:
        console.print(table)
    else:
        console.print("[dim]no measured flows: no slowdown statistics[/dim]")
    background = bucket_table(
        summary, "buckets_background", "Slowdown by flow size, without the incast flows"
    )
    if background is not None:
        console.print(background)
    for name, part in (summary.get("by_cc") or {}).items():
        if isinstance(part, dict):
            t = bucket_table(part, title=f"Slowdown by flow size, {name} flows")
            if t is not None:
                console.print(t)
    inc = _incasts(summary)
    if inc is not None:
        console.print(inc)
    console.print(_totals(summary))
    pfc = _pfc(summary)
    if pfc is not None:
        console.print(pfc)
    edge, warnings = _edge(summary)
    if edge is not None:
        console.print(edge)
    for w in warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(w)}")
    ci, warnings = _ci(summary)
    if ci is not None:
        console.print(ci)
    cm = _cm(summary)
    if cm is not None:
        console.print(cm)
    nic = _nic(summary)
    if nic is not None:
        console.print(nic)
    for w in warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(w)}")
    other = _others(summary)
    if other is not None:
        console.print(other)
    qs = summary.get("queue_series")
    if isinstance(qs, dict) and qs.get("written"):
        console.print(
            f"[dim]queue time series: {qs['written']} of {qs.get('candidates')} ports "
            f"({escape(str(qs.get('ports')))}), {qs.get('points')} points every "
            f"{_num(qs.get('interval_us'))} us[/dim]",
            highlight=False,
        )
    for w in summary.get("warnings") or []:
        console.print(f"[yellow]warning:[/yellow] {escape(str(w))}")
