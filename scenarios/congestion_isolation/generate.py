"""Writes the base scenarios of the Congestion Isolation reproduction (see README.md):
base.toml (full size) and base_small.toml (small), both WebServer flow sizes without CI.
experiment.toml and small.toml vary the flow sizes (workload.poisson.*.cdf) and add CI.

Run from the repository root: python scenarios/congestion_isolation/generate.py
"""

from pathlib import Path

HERE = Path(__file__).parent
WORKLOADS = {
    "datamining": "Data Mining",
    "enterprise": "Enterprise IT",
    "webserver": "WebServer",
    "fb_hadoop": "Hadoop",
    "cachefollower": "Cache Follower",
}
# (prefix, leaves, spines, hosts per leaf, leaves per region, fan-in, duration, stop)
SIZES = {
    "": (48, 24, 24, 4, 16, "5ms", "7ms"),
    "small_": (16, 8, 8, 4, 8, "2ms", "3ms"),
}
PER_SENDER = {"5ms": "4MB", "2ms": "2MB"}


def scenario(prefix, wl, ci):
    leaves, spines, hpl, lpr, fan_in, duration, stop = SIZES[prefix]
    hosts = leaves * hpl
    regions = leaves // lpr
    label = "PFC+ECN with CI" if ci else "PFC+ECN without CI"
    out = [
        "# Congestion Isolation reproduction (talk 'Congestion Management – Congestion Isolation',",
        "# IEEE 802.1 DCB, Sept. 2017, slides 'Simulation Set-up' and",
        "# 'PFC+ECN with CI VS. PFC+ECN without CI').",
        f"# {label}, {WORKLOADS[wl]} flow sizes, {hosts} servers, {leaves + spines} switches.",
        f"# The base of {'small.toml' if prefix else 'experiment.toml'}: "
        "incast sweep scenarios/congestion_isolation/"
        f"{'small.toml' if prefix else 'experiment.toml'}",
        "# Every modelling decision: scenarios/congestion_isolation/README.md.",
        "",
        f'name = "congestion_isolation{"_small" if prefix else ""}"',
        f'description = "Congestion Isolation talk: {label}; 2-tier Clos, 100G, 200 ns links, '
        f"{hosts} servers, {leaves + spines} switches; {regions} regions of {lpr} leaves with "
        f"all-to-all {WORKLOADS[wl]} flows at 50 % load and a persistent "
        f"{fan_in}-to-1 incast each; "
        'DCQCN, PFC on classes 2-4, flows under 100 KB in class 4."',
        "seed = 1",
        f'duration = "{duration}"',
        f'stop = "{stop}"',
        "",
        "[topology]",
        'kind = "leaf_spine"',
        f"leaves = {leaves}",
        f"spines = {spines}",
        f"hosts_per_leaf = {hpl}",
        'host_rate = "100Gbps"',
        'fabric_rate = "100Gbps"',
        'host_delay = "200ns"',
        'fabric_delay = "200ns"',
        "",
        "[switch]",
        'buffer = "4MB"',
        "",
        "[switch.ecn]",
        'kind = "red"',
        'kmin = "50KB"',
        'kmax = "200KB"',
        "pmax = 0.1",
        "",
        "[switch.pfc]",
        "classes = [2, 3, 4]",
        "",
    ]
    if ci:
        out += [
            "[switch.ci]",
            "queues = [{ class = 3, cfq = [2] }]",
            "",
        ]
    out += [
        "[rdma.cc]",
        'algorithm = "dcqcn"',
        "",
    ]
    per_region = lpr * hpl
    for r in range(regions):
        members = list(range(r * per_region, (r + 1) * per_region))
        group = "[" + ", ".join(str(h) for h in members) + "]"
        out += [
            "[[workload.poisson]]",
            "load = 0.5",
            f'cdf = "{wl}"',
            f"hosts = {group}",
            'small_flows = { below = "100KB", class = 4 }',
            "",
            "[[workload.incast]]",
            f"fan_in = {fan_in}",
            f'bytes_per_sender = "{PER_SENDER[duration]}"',
            'times = ["0us"]',
            f"receiver = {members[-1]}",
            f"hosts = {group}",
            "",
        ]
    out += [
        "[metrics]",
        'warmup = "200us"',
        'cooldown = "0us"',
        'queue_ports = "none"',
        "",
    ]
    return "\n".join(out)


if __name__ == "__main__":
    for prefix, name in (("", "base.toml"), ("small_", "base_small.toml")):
        (HERE / name).write_text(scenario(prefix, "webserver", False))
