"""What a run's plots show, computed once for both of their renderers: the PNG
plots (`plots`, matplotlib) and the HTML report's interactive ones (`html_plots`,
plotly). Plain pandas and numpy, so that a report without PNG plots never imports
matplotlib."""

from __future__ import annotations

from typing import Any

import numpy as np

from .buckets import bucket_rows


def measured_groups(results: Any, column: str) -> list[tuple[str, np.ndarray]]:
    """`column` (slowdown, fct_us) of the finished flows (in the measurement
    window, when any is), split by the summary's size buckets, plus an "all
    flows" group unless there is exactly one bucket: [(label, values)]. Flows
    stopped at their stop time are left out (their FCT is a lifetime)."""
    flows = results.flows
    if len(flows) == 0 or column not in flows.columns:
        return []
    mask = np.isfinite(flows[column].to_numpy(dtype=float, na_value=np.nan))
    if "finished" in flows.columns:
        mask &= flows["finished"].to_numpy() == 1
    if "measured" in flows.columns and (flows["measured"].to_numpy()[mask] != 0).any():
        mask &= flows["measured"].to_numpy() != 0
    done = flows[mask]
    if len(done) == 0:
        return []
    sizes = done["size_bytes"].to_numpy() if "size_bytes" in done.columns else None
    values = done[column].to_numpy(dtype=float, na_value=np.nan)
    groups = []
    if sizes is not None:
        for row in bucket_rows(results.summary, overall=False):
            lo = row.stats.get("lo") or 0
            hi = row.stats.get("hi")
            sel = (sizes >= lo) & (sizes < hi if hi is not None else True)
            if sel.any():
                groups.append((row.label, values[sel]))
    if len(groups) != 1:
        groups.append(("all flows", values))
    return groups


def time_unit(t_max_ps: float) -> tuple[str, float]:
    """The unit a time axis reaching `t_max_ps` is drawn in, and picoseconds per unit."""
    return ("ms", 1e9) if t_max_ps >= 10_000 * 1e6 else ("us", 1e6)


def fullest_ports(queues: Any) -> Any:
    """The sampled ports whose queue was ever non-empty, fullest first: their peak
    queue in bytes, indexed by (node, port)."""
    peak = queues.groupby(["node", "port"], sort=True)["bytes"].max()
    return peak[peak > 0].sort_values(ascending=False, kind="stable")


def port_label(results: Any, node: int, port: int) -> str:
    """'sw0 port 3 -> h3 (host)': a switch port and the node its link leads to."""
    names = results.node_names
    name = names[node] if 0 <= node < len(names) else f"node {node}"
    ports = getattr(results, "ports", None)
    peer = None
    if ports is not None and len(ports) and {"node", "port", "peer"} <= set(ports.columns):
        row = ports[(ports["node"] == node) & (ports["port"] == port)]
        if len(row):
            peer = int(row["peer"].iloc[0])
    if peer is None:
        return f"{name} port {port}"
    n_hosts = host_count(results)
    peer_name = names[peer] if 0 <= peer < len(names) else f"node {peer}"
    kind = "host" if n_hosts is not None and peer < n_hosts else "switch"
    return f"{name} port {port} -> {peer_name} ({kind})"


def host_count(results: Any) -> int | None:
    """Hosts are nodes 0..H-1 (switches follow): H from the hosts table or ports."""
    hosts = getattr(results, "hosts", None)
    ports = getattr(results, "ports", None)
    if ports is not None and len(ports) and "node" in ports.columns:
        counts = ports.groupby("node").size()
        # A host has exactly one port; the first node with more is a switch.
        multi = counts[counts > 1]
        if len(multi):
            return int(multi.index.min())
    if hosts is not None and len(hosts) and "host" in hosts.columns:
        return int(hosts["host"].max()) + 1
    return None
