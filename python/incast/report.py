"""The terminal summary of a run (rich).

Numbers are written by `fmt.py` (the HTML report uses the same helpers); table
values and free lines break only between words, never between a number and its
unit or inside a path, also when the output is piped (80 columns).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from rich import box
from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from .buckets import BucketRow, bucket_rows
from .drop_curve import summary_rows as drop_curve_rows
from .fmt import (
    UNIT_SUFFIXES,
    format_bytes,
    format_count,
    format_number,
    format_ps,
    format_quantity,
    format_share,
    format_si,
    format_value,
    glue,
    is_number,
    label_of,
    whole,
    wrap_text,
)

_PCTS = (("mean", "mean"), ("p50", "p50"), ("p95", "p95"), ("p99", "p99"), ("p999", "p99.9"))

#: Top-level summary keys shown outside `SECTIONS`: in the header (name, seed,
#: simulated time, events), the queue-series line, the warnings, and the names
#: the per-congestion-control tables take.
_SHOWN_ELSEWHERE = frozenset(
    {
        "scenario",
        "seed",
        "sim_time_us",
        "engine",
        "queue_series",
        "warnings",
        "congestion_controls",
    }
)


#: Below this console width the labels of two-column sections wrap too.
NARROW = 60


class Unbroken(Text):
    """A table cell that breaks only at spaces: never between a number and its
    unit, nor inside a path or a word (rich alone breaks at any space and folds
    long words). Its `plain` is the text as given."""

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widest = max(cell_len(line) for line in self.plain.split("\n"))
        chunks = wrap_text(self.plain, 1).split("\n")
        return Measurement(min(max(cell_len(c) for c in chunks), widest), widest)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = wrap_text(self.plain, options.max_width)
        yield Text(lines, style=self.style, justify=self.justify, no_wrap=True, overflow="fold")


class Line:
    """One line of text for the terminal (a warning, a note, a path): broken at
    spaces to the console's width with a hanging indent, never inside a number
    and its unit or a word; a word (a path) longer than the line is printed
    whole, so piped output keeps it intact."""

    def __init__(self, text: str, prefix: str = "", prefix_style: str = "", style: str = ""):
        self.text, self.prefix, self.prefix_style, self.style = text, prefix, prefix_style, style

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        head = f"{self.prefix} " if self.prefix else ""
        body = wrap_text(head + self.text, options.max_width, subsequent_indent=" " * len(head))
        text = Text(body, style=self.style, no_wrap=True, overflow="ignore")
        if self.prefix:
            text.stylize(self.prefix_style, 0, len(self.prefix))
        yield text


def print_line(
    console: Console, text: str, prefix: str = "", prefix_style: str = "", style: str = ""
) -> None:
    """Print a `Line` (uncropped: a path longer than the console stays whole)."""
    console.print(Line(text, prefix, prefix_style, style), crop=False)


def _get(block: Any, *keys: str) -> Any:
    for k in keys:
        if not isinstance(block, dict):
            return None
        block = block.get(k)
    return block


def _bucket_cells(row: BucketRow) -> list[str]:
    slowdown, fct = row.metric("slowdown"), row.metric("fct_us")
    return (
        [escape(row.label), format_number(row.count)]
        + [format_number(slowdown.get(k)) for k, _ in _PCTS]
        + [format_number(fct.get("mean"), 1)]
    )


def bucket_table(
    summary: dict, key: str = "buckets", title: str = "Slowdown (FCT / ideal FCT) by flow size"
) -> Table | None:
    """Slowdown percentiles and mean FCT per flow-size bucket (plus an overall row
    for all flows; `buckets.bucket_rows`); None when no bucket has a measured
    flow (`slowdown_tables` says why it is left out)."""
    rows = bucket_rows(summary, key)
    if not any(row.has_flows for row in rows):
        return None
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAVY)
    table.add_column("size")
    table.add_column("flows", justify="right")
    for _, head in _PCTS:
        table.add_column(f"{head}", justify="right")
    table.add_column("mean FCT us", justify="right", no_wrap=True)
    for row in rows:
        if row.overall:
            table.add_row(*_bucket_cells(row), style="bold", end_section=False)
        else:
            table.add_row(*_bucket_cells(row))
    return table


def _without_slowdown(flows: Any) -> str:
    """Why a run's flows have no slowdown: '3 stopped at their stop time, 1 unfinished'."""
    if not isinstance(flows, dict):
        return "no flow was measured"
    parts = []
    for key, what in (("stopped", "stopped at their stop time"), ("unfinished", "unfinished")):
        if is_number(flows.get(key)) and flows[key] > 0:
            parts.append(f"{format_number(flows[key])} {what}")
    finished, measured = flows.get("finished"), flows.get("measured")
    if is_number(finished) and is_number(measured) and finished > measured:
        parts.append(f"{format_number(finished - measured)} outside the measurement window")
    return ", ".join(parts) or "no flow was measured"


def slowdown_tables(summary: dict) -> tuple[list[Table], list[str]]:
    """The slowdown tables (all flows; without the incast flows; per congestion
    control), and one line for each table left out and why: an empty table (no
    flows, or only long-lived, stopped or unfinished ones), or a congestion
    control's table that would repeat the first one."""
    tables: list[Table] = []
    omitted: list[str] = []
    main = bucket_table(summary)
    flows = summary.get("flows") if isinstance(summary.get("flows"), dict) else {}
    if main is not None:
        tables.append(main)
    elif flows.get("total") == 0:
        omitted.append("no slowdown table: the run has no flows (its traffic is packets only)")
    elif not is_number(flows.get("total")):
        omitted.append("no slowdown table: no measured flows")
    else:
        omitted.append(
            f"no slowdown table: no flow finished in the measurement window "
            f"({format_count(flows.get('total'), 'flow')}: {_without_slowdown(flows)})"
        )
    if summary.get("buckets_background") is not None:
        background = bucket_table(
            summary, "buckets_background", "Slowdown by flow size, without the incast flows"
        )
        if background is not None:
            tables.append(background)
        elif main is not None:
            omitted.append(
                "no slowdown table without the incast flows: every measured flow is an incast flow"
            )
    measured = _get(summary, "overall", "count")
    for name, part in (summary.get("by_cc") or {}).items():
        if not isinstance(part, dict):
            continue
        table = bucket_table(part, title=f"Slowdown by flow size, {name} flows")
        own = _get(part, "overall", "count")
        if table is None:
            flows_of_cc = part.get("flows")
            omitted.append(
                f"no slowdown table for the {name} flows: none of them"
                + (f" ({format_count(flows_of_cc, 'flow')})" if is_number(flows_of_cc) else "")
                + " finished in the measurement window; long-lived, stopped and unfinished "
                "flows have no slowdown"
            )
        elif main is not None and is_number(own) and own > 0 and own == measured:
            omitted.append(
                f"no separate table for the {name} flows: every measured flow is a {name} "
                "flow, so it is the first table"
            )
        else:
            tables.append(table)
    return tables, omitted


def totals_rows(summary: dict) -> list[tuple[str, str]]:
    """(label, value) rows of the run's totals, labelled for a reader: what is
    summed over what, in which unit."""
    rows: list[tuple[str, str]] = []
    flows = summary.get("flows")
    if isinstance(flows, dict):
        parts = [f"{format_number(flows.get('finished'))} finished"]
        if flows.get("unfinished"):
            parts.append(f"{format_number(flows.get('unfinished'))} unfinished")
        # Flows stopped at their `stop` (bulk on-periods, long-lived flows) are
        # never measured: they have no slowdown.
        stopped = flows.get("stopped") or 0
        if stopped:
            parts.append(f"{format_number(stopped)} stopped at their stop time")
        total = flows.get("total")
        if isinstance(total, int) and flows.get("measured") != total - stopped:
            parts.append(
                f"{format_number(flows.get('measured'))} measured (outside warm-up/cool-down)"
            )
        rows.append(("flows", f"{format_number(total)} ({', '.join(parts)})"))
    stopped_flows = summary.get("stopped_flows")
    if isinstance(stopped_flows, dict):
        gbps = stopped_flows.get("goodput_gbps") or {}
        rows.append(
            (
                "stopped flows",
                f"{format_count(stopped_flows.get('count'), 'flow')} delivered "
                f"{format_number(stopped_flows.get('bytes'))} B, goodput mean "
                f"{format_quantity(gbps.get('mean'), 'Gb/s')}, "
                f"max {format_quantity(gbps.get('max'), 'Gb/s')}",
            )
        )
    drops = summary.get("drops")
    if isinstance(drops, dict):
        rows.append(
            (
                "packets dropped, all switch ports",
                f"{format_number(drops.get('packets'))} ({format_bytes(drops.get('bytes'))})",
            )
        )
    elif drops is not None:
        rows.append(("packets dropped, all switch ports", format_number(drops)))
    labels = (
        ("ecn_marks", "packets ECN-marked, all switch ports"),
        ("retransmits", "packets retransmitted, all flows"),
        ("timeouts", "retransmission timeouts, all flows"),
    )
    for key, label in labels:
        if key in summary:
            rows.append((label, format_number(summary[key])))
    # RDMA receivers' CNPs and out-of-order arrivals: only when something happened.
    for key, label in (
        ("cnps", "CNPs sent by receivers"),
        ("out_of_order_arrivals", "packets arriving out of order, all flows"),
    ):
        if summary.get(key):
            rows.append((label, format_number(summary[key])))
    rows += _utilization_rows(summary.get("utilization"))
    return rows


#: The unit suffixes of keys whose value is not a share ("_us", "_bytes", ...).
_NON_SHARE_SUFFIXES = tuple(suffix for suffix, unit in UNIT_SUFFIXES if unit != "%")


def _utilization_rows(util: Any) -> list[tuple[str, str]]:
    """Utilizations are shares of time; `window_us` is the interval they cover."""
    if not isinstance(util, dict):
        return []
    names = {
        "max": "utilization of the busiest port",
        "mean_switch_ports": "utilization, mean over switch ports",
        "window_us": "utilization measured over",
    }
    rows = []
    for k, v in util.items():
        label = names.get(k, f"utilization ({label_of(str(k))})")
        unit_in_key = str(k).endswith(_NON_SHARE_SUFFIXES)
        value = format_share(v) if is_number(v) and not unit_in_key else format_value(str(k), v)
        rows.append((label, value))
    return rows


def _kv_table(title: str, rows: list[tuple[str, str]]) -> Table:
    """A borderless two-column table of labels (dim) and right-aligned values;
    a value breaks only between words (`Unbroken`)."""
    table = Table(show_header=False, box=None, pad_edge=False, title=title, title_justify="left")
    table.add_column(style="dim", no_wrap=True)  # labels are short: the values break instead
    table.add_column(justify="right")
    for label, value in rows:
        table.add_row(Text(label), Unbroken(value, justify="right"))
    return table


#: PFC summary keys, labelled.
_PFC_LABELS = (
    ("pause_frames", "PAUSE frames sent, all ports"),
    ("pause_frames_to_hosts", "  of which to hosts (NICs)"),
    ("resume_frames", "RESUME (XON) frames sent"),
    ("paused_time_us", "paused time, summed over ports and classes"),
    ("lossless_drops", "drops in lossless classes"),
    ("watchdog_trips", "PFC watchdog trips"),
    ("watchdog_drops", "packets dropped by the watchdog"),
)


def pfc_rows(summary: dict) -> list[tuple[str, str]]:
    """(label, value) rows of the PFC totals; none in a run where PFC never acted
    (no PAUSE, no drop)."""
    pfc = summary.get("pfc")
    if not isinstance(pfc, dict) or not any(is_number(v) and v for v in pfc.values()):
        return []
    rows = [(label, format_value(key, pfc[key])) for key, label in _PFC_LABELS if key in pfc]
    known = {key for key, _ in _PFC_LABELS}
    rows += [(label_of(str(k)), format_value(str(k), v)) for k, v in pfc.items() if k not in known]
    return rows


def _incasts(summary: dict) -> Table | None:
    inc = summary.get("incasts")
    if not isinstance(inc, dict) or not inc.get("count"):
        return None
    table = Table(title="Incast completion time (us)", title_justify="left", box=box.SIMPLE_HEAVY)
    table.add_column("incasts", justify="right")
    table.add_column("finished", justify="right")
    ct = inc.get("completion_us") if isinstance(inc.get("completion_us"), dict) else {}
    for _, head in _PCTS:
        table.add_column(head, justify="right")
    table.add_row(
        format_number(inc.get("count")),
        format_number(inc.get("finished")),
        *[format_number(ct.get(k), 1) for k, _ in _PCTS],
    )
    return table


def _slashed(block: dict, keys: tuple[str, ...], unit: str | None = None, digits: int = 2) -> str:
    """Several values of one block as 'a / b / c', the unit once at the end."""
    text = " / ".join(format_number(block.get(k), digits) for k in keys)
    return f"{text} {unit}" if unit else text


def edge_rows(summary: dict) -> tuple[list[tuple[str, str]], list[str]]:
    """Edge pausing (Smart-Pause / On-Ramp): rule, pauses, OWD, clock error as
    (label, value) rows; and its warnings. Empty without `[edge]`."""
    edge = summary.get("edge")
    if not isinstance(edge, dict):
        return [], []
    rows = [
        ("rule", str(edge.get("rule", "?"))),
        ("gated senders", format_number(edge.get("gated_hosts"))),
        ("smallest threshold T", format_quantity(edge.get("min_threshold_us"), "us")),
        ("pauses", format_number(edge.get("pauses"))),
        ("paused time (all flows)", format_quantity(edge.get("paused_time_us"), "us", digits=1)),
    ]
    owd = edge.get("owd_sampled_us") if isinstance(edge.get("owd_sampled_us"), dict) else {}
    if owd:
        rows.append(("OWD (sampled) mean / p99 / max", _slashed(owd, ("mean", "p99", "max"), "us")))
    clock = edge.get("clock") if isinstance(edge.get("clock"), dict) else {}
    if clock:
        keys = ("mean_abs_error_us", "max_abs_error_us")
        rows.append(("clock error mean / max", _slashed(clock, keys, "us", digits=3)))
    rows += drop_curve_rows(summary)
    return rows, [str(w) for w in edge.get("warnings") or []]


def ci_rows(summary: dict) -> tuple[list[tuple[str, str]], list[str]]:
    """IEEE 802.1Qcz congestion isolation: CIPs, isolations, isolated flows,
    PAUSE frames by queue kind as (label, value) rows; and its warnings."""
    ci = summary.get("ci")
    if not isinstance(ci, dict):
        return [], []
    rows = [
        ("CIPs sent / received / lost", _slashed(ci, ("cips_sent", "cips_received", "cips_lost"))),
        ("CIP resends / gave up", _slashed(ci, ("cip_resends", "cip_gave_up"))),
        ("CIP acks sent / received", _slashed(ci, ("cip_acks_sent", "cip_acks_received"))),
        ("isolations at congestion points", format_number(ci.get("isolations_detected"))),
        ("isolations installed by CIP", format_number(ci.get("isolations_by_cip"))),
        ("isolations at NICs", format_number(ci.get("nic_isolations"))),
        ("de-isolations (switches / NICs)", _slashed(ci, ("deisolations", "nic_deisolations"))),
        (
            "table-full refusals (peak entries)",
            f"{format_number(ci.get('table_full'))}"
            f" ({format_number(ci.get('peak_table_entries'))})",
        ),
    ]
    if ci.get("cfq_blocked_events"):
        rows.append(("CFQ blocked events", format_number(ci.get("cfq_blocked_events"))))
    rows += [
        (
            "flows isolated",
            f"{format_number(ci.get('flows_isolated'))} "
            f"({format_share(ci.get('flows_isolated_share'))} of flows)",
        ),
        (
            f"large flows (>= {format_bytes(ci.get('large_flow_bytes'))}) isolated",
            format_share(ci.get("large_flows_isolated_share")),
        ),
        (
            "PAUSE frames sent: NCQ / CFQ",
            f"{_slashed(ci, ('pause_frames_ncq', 'pause_frames_cfq'))}"
            f" (CFQ {format_share(ci.get('pause_frames_cfq_share'))})",
        ),
        ("PAUSE frames received by NICs", format_number(ci.get("pause_frames_to_nics"))),
    ]
    warnings = []
    if is_number(ci.get("table_full")) and ci["table_full"] > 0:
        warnings.append(
            "congested-flow table full: raise switch.ci.max_flows"
            f" ({format_number(ci['table_full'])} isolations refused)"
        )
    if is_number(ci.get("cip_gave_up")) and ci["cip_gave_up"] > 0:
        warnings.append(
            f"{format_number(ci['cip_gave_up'])} CIPs given up after their resends went"
            " unacknowledged"
        )
    return rows, warnings


def cm_rows(summary: dict) -> list[tuple[str, str]]:
    """Congestion management (`[cm]`, the adapter NIC, input partitions) as
    (label, value) rows; empty without them."""
    cm = summary.get("cm")
    if not isinstance(cm, dict):
        return []
    rows: list[tuple[str, str]] = []
    if "scheme" in cm:
        rows.append(("scheme", str(cm["scheme"])))
        rows.append(
            (
                "feedback frames sent / received",
                _slashed(cm, ("feedback_sent", "feedback_received")),
            )
        )
        if cm.get("probes_sent"):
            rows.append(("E2CM probes / echoes", _slashed(cm, ("probes_sent", "echoes_received"))))
        rows.append(("frames quenched at the sources", format_number(cm.get("quenched_frames"))))
        rate = cm.get("limited_rate_gbps") if isinstance(cm.get("limited_rate_gbps"), dict) else {}
        limited = (
            f"{format_number(cm.get('limited_at_end'))} of "
            f"{format_number(cm.get('reaction_points'))} limiters"
        )
        if rate.get("mean") is not None:
            limited += (
                f", mean {format_quantity(rate.get('mean'), 'Gb/s')}, "
                f"lowest {format_quantity(rate.get('min'), 'Gb/s', digits=3)}"
            )
        rows.append(("flows rate-limited at the end", limited))
        if cm.get("largest_cut") is not None:
            rows.append(("largest QCN cut", format_share(cm["largest_cut"])))
        for rx in cm.get("receive_buffers") or []:
            if not isinstance(rx, dict):
                continue
            rows.append(
                (
                    f"hotspot host {rx.get('host')} receive buffer",
                    f"{format_number(rx.get('pauses'))} PAUSEs, "
                    f"peak {format_bytes(rx.get('peak_bytes'))}, "
                    f"{format_number(rx.get('overflow_frames'))} frames lost",
                )
            )
    ib = cm.get("input_buffers")
    if isinstance(ib, dict):
        rows.append(
            (
                "switch input partitions",
                f"{format_number(ib.get('dropped_frames'))} frames dropped, "
                f"{format_number(ib.get('pauses'))} PAUSEs, "
                f"peak {format_bytes(ib.get('peak_bytes'))}",
            )
        )
    return rows


def nic_rows(summary: dict) -> list[tuple[str, str]]:
    """The NICs' transmit queues, receive path and PCIe links (`[nic]`) as
    (label, value) rows; empty without them."""
    rows: list[tuple[str, str]] = []
    tx = summary.get("nic_queues")
    if isinstance(tx, dict):
        for name, queue in (tx.get("queues") or {}).items():
            rows.append(
                (
                    f"transmit queue {name} ({tx.get('split')})",
                    f"peak {format_bytes(queue.get('max_bytes'))}, "
                    f"mean {format_bytes(queue.get('mean_bytes'))}"
                    f" (limit {format_bytes(tx.get('limit_bytes'))})",
                )
            )
    rx = summary.get("nic_receive")
    if isinstance(rx, dict):
        for name, queue in (rx.get("queues") or {}).items():
            rows.append(
                (
                    f"receive queue {name} (PCIe {format_quantity(rx.get('pcie_gbps'), 'Gb/s')})",
                    f"peak {format_bytes(queue.get('max_bytes'))}, "
                    f"{format_number(queue.get('ecn_marks'))} CE marks, "
                    f"{format_number(queue.get('drops'))} drops",
                )
            )
    pcie = summary.get("pcie")
    if isinstance(pcie, dict):
        rows.append(
            (
                f"host PCIe transmit cap {format_quantity(pcie.get('gbps'), 'Gb/s')}",
                f"busiest host sent {format_bytes(pcie.get('max_host_tx_bytes'))}",
            )
        )
    return rows


def other_rows(summary: dict) -> list[tuple[str, str]]:
    """(key path, value) rows of every summary entry no section shows, each in
    the unit its key names."""
    rows: list[tuple[str, str]] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for k, sub in value.items():
                walk(f"{prefix}.{k}", sub)
        else:
            rows.append((prefix, format_value(prefix.rsplit(".", 1)[-1], value)))

    shown = _SHOWN_ELSEWHERE.union(*(kind.keys for kind in SECTIONS))
    for k, v in summary.items():
        if k not in shown:
            walk(str(k), v)
    return rows


def queue_series_text(summary: dict) -> str | None:
    """What the queue time series holds, in one sentence; None when nothing was written."""
    qs = summary.get("queue_series")
    if not isinstance(qs, dict) or not qs.get("written"):
        return None
    written, candidates = qs.get("written"), qs.get("candidates")
    ports = str(qs.get("ports"))
    top = re.match(r"the (\d+) switch ports with the largest peak queue", ports)
    if top and is_number(written) and written < int(top.group(1)):
        # `top` keeps up to N ports, but only ports that ever held a packet.
        what = f"every switch port that queued ({written} of {candidates})"
    elif top:
        what = f"the {written} of {candidates} switch ports with the largest peak queue"
    else:
        what = f"{ports} ({written} ports)"
    every = format_quantity(whole(qs.get("interval_us")), "us")
    return f"queue time series: {what}, {format_number(qs.get('points'))} points every {every}"


@dataclass(frozen=True)
class RunFacts:
    """What the header of both reports says of a run: its seed, the simulated
    time ("46.33 ms"; "?" when unknown) and the events processed ("1.86M";
    None when unknown). The wall time is the terminal's only: the same run
    gives the same HTML page."""

    seed: Any
    simulated: str
    events: Any
    wall_seconds: float | None

    @property
    def events_text(self) -> str | None:
        return f"{format_si(self.events)} events" if is_number(self.events) else None


def run_facts(results: Any) -> RunFacts:
    summary = results.summary if isinstance(results.summary, dict) else {}
    stats = results.stats or {}
    sim_us = summary.get("sim_time_us")
    if is_number(sim_us):
        simulated = format_ps(sim_us * 1e6)
    elif is_number(stats.get("sim_time_ps")):
        simulated = format_ps(stats["sim_time_ps"])
    else:
        simulated = "?"
    wall = stats.get("wall_seconds")
    return RunFacts(
        seed=summary.get("seed", "?"),
        simulated=simulated,
        events=stats.get("events", _get(summary, "engine", "events")),
        wall_seconds=wall if is_number(wall) and wall > 0 else None,
    )


def header_text(results: Any) -> str:
    """The terminal report's two header lines: name and seed; simulated time,
    wall time, events and events per second."""
    facts = run_facts(results)
    name = escape(str(results.summary.get("scenario") or "?"))
    line1 = f"[bold]{name}[/bold]  seed {facts.seed}"
    line2 = f"simulated {facts.simulated}"
    wall = facts.wall_seconds
    if wall is not None:
        line2 += f" in {wall:.2f} s of wall time"
    if facts.events_text is not None:
        line2 += f", {facts.events_text}"
        if wall is not None:
            line2 += f" ({format_si(facts.events / wall)} events/s)"
    return f"{line1}\n{line2}"


@dataclass(frozen=True)
class Section:
    """One part of a run's summary, as both reports show it: a table, or a line
    (`note`) saying why a table is left out."""

    table: Table | None = None
    note: str = ""

    @property
    def title(self) -> str:
        """The table's title as plain text ('' for a note)."""
        return Text.from_markup(str(self.table.title or "")).plain if self.table else ""


Built = tuple[list[Section], list[str]]


@dataclass(frozen=True)
class SectionKind:
    """One kind of section of a run's summary: the top-level summary keys it
    shows (no other section shows them, and "Other" leaves them out) and how it
    is built from the summary: its tables or notes, and its warnings."""

    name: str
    keys: tuple[str, ...]
    build: Callable[[dict], Built]


def _slowdown_sections(summary: dict) -> Built:
    tables, omitted = slowdown_tables(summary)
    return [Section(table=t) for t in tables] + [Section(note=n) for n in omitted], []


def _table(table: Table | None) -> Built:
    return ([Section(table=table)] if table is not None else []), []


def _rows(title: str, rows_of: Callable[[dict], list[tuple[str, str]]]) -> Callable[[dict], Built]:
    """A section of (label, value) rows; none when there are no rows."""

    def build(summary: dict) -> Built:
        rows = rows_of(summary)
        return _table(_kv_table(title, rows) if rows else None)

    return build


def _rows_and_warnings(
    title: str, rows_of: Callable[[dict], tuple[list[tuple[str, str]], list[str]]]
) -> Callable[[dict], Built]:
    """A section of (label, value) rows that also has warnings of its own."""

    def build(summary: dict) -> Built:
        rows, warnings = rows_of(summary)
        return _table(_kv_table(title, rows) if rows else None)[0], warnings

    return build


#: Every section of a run's summary, in the order both reports show them (the
#: terminal's `print_summary` and the HTML report's `html.summary_html`): a
#: section for a new summary block is one line here.
SECTIONS: tuple[SectionKind, ...] = (
    SectionKind(
        "slowdown", ("buckets", "overall", "buckets_background", "by_cc"), _slowdown_sections
    ),
    SectionKind("incasts", ("incasts",), lambda summary: _table(_incasts(summary))),
    SectionKind(
        "totals",
        (
            "flows",
            "stopped_flows",
            "drops",
            "ecn_marks",
            "retransmits",
            "timeouts",
            "cnps",
            "out_of_order_arrivals",
            "utilization",
        ),
        _rows("Totals", totals_rows),
    ),
    SectionKind("pfc", ("pfc",), _rows("PFC", pfc_rows)),
    SectionKind("edge", ("edge",), _rows_and_warnings("Edge pausing", edge_rows)),
    SectionKind("ci", ("ci",), _rows_and_warnings("Congestion isolation", ci_rows)),
    SectionKind("cm", ("cm",), _rows("Congestion management", cm_rows)),
    SectionKind("nic", ("nic_queues", "nic_receive", "pcie"), _rows("NIC", nic_rows)),
    SectionKind("other", (), _rows("Other", other_rows)),
)


def summary_sections(summary: dict) -> tuple[list[Section], list[str]]:
    """The sections of a run's summary (`SECTIONS`, in their order: the
    slowdown tables and a note for each table left out, incast completion
    times, totals, PFC, edge pausing, congestion isolation, congestion
    management, NIC and anything else the core reported; a section with nothing
    in it is left out), and the warnings: the sections' own, then the
    summary's. The terminal (`print_summary`) and the HTML report (`html.py`)
    both render these."""
    sections: list[Section] = []
    warnings: list[str] = []
    for kind in SECTIONS:
        built, notes = kind.build(summary)
        sections += built
        warnings += notes
    warnings += [str(w) for w in summary.get("warnings") or []]
    return sections, warnings


def print_summary(results: Any, console: Console | None = None) -> None:
    """Print the run summary: the header, then `summary_sections` (tables with
    nothing in them left out, each with one line saying why), what the queue
    time series holds, and the warnings."""
    console = console or Console()
    summary = results.summary if isinstance(results.summary, dict) else {}
    console.rule("[bold]incast results")
    console.print(header_text(results), highlight=False)
    sections, warnings = summary_sections(summary)
    for section in sections:
        table = section.table
        if table is None:
            print_line(console, section.note, style="dim")
            continue
        if not table.show_header and console.width < NARROW:
            table.columns[0].no_wrap = False  # too narrow for whole labels
        console.print(table)
    queues = queue_series_text(summary)
    if queues is not None:
        print_line(console, queues, style="dim")
    for warning in warnings:
        print_line(console, warning, prefix="warning:", prefix_style="yellow")


def print_paths(console: Console, paths: Any, indent: str = "  ") -> None:
    """One path a line, whole (a path is never broken, also when piped)."""
    for path in paths:
        print_line(console, glue(f"{indent}{path}"))
