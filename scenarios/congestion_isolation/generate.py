"""Writes the base scenarios and flow-size files of the Congestion Isolation reproduction
(see README.md):

- base.toml (full size: 1152 servers), base_small.toml (small: 128) and base_medium.toml (512
  servers, 48 switches: the middle of the scale series), all WebServer flow sizes without CI;
  base_small_region2.toml and base_small_region8.toml: the small one with regions of 2 and 8
  leaves (the sensitivity sweep's region size). experiment.toml, small.toml and
  sensitivity.toml vary the flow sizes (workload.poisson.*.cdf) and add CI.
- webserver_mice92.cdf and cachefollower_mice60.cdf: the bundled WebServer and Cache Follower
  CDFs reconstructed to the talk's mice shares (92 % and 60 % of flows under 100 KB; the bundled
  tables have 81.5 % and 53.3 %). Every published point keeps its size; the probabilities below
  100 KB are scaled by share / F(100 KB) and those above are mapped linearly from
  [F(100 KB), 1] onto [share, 1]. So the shape within the mice and within the large flows is the
  published one, and only the split between them moves to the talk's.
- sensitivity.toml: the small experiment over the settings the talk leaves unstated (SETTINGS:
  each with the public material its range comes from), for the flow-size mixes in
  SENSITIVITY_MIXES.
- mix.cdf: the talk's five flow-size mixes (with the two reconstructions) in one distribution,
  each carrying a fifth of the bytes (flows drawn from mix i with weight 1 / mean_i).

Run from the repository root: python scenarios/congestion_isolation/generate.py
"""

from bisect import bisect_left, bisect_right
from pathlib import Path

HERE = Path(__file__).parent
BUNDLED = HERE.parent.parent / "crates" / "incast-core" / "data" / "workloads"
MICE_BELOW = 100_000
#: Reconstructed CDFs: file name -> (bundled CDF, the talk's share of flows under 100 KB).
RECONSTRUCTED = {
    "webserver_mice92.cdf": ("webserver", 0.92),
    "cachefollower_mice60.cdf": ("cachefollower", 0.60),
}
#: The five mixes of the chosen setting, each a fifth of the bytes of mix.cdf.
MIX = ["webserver_mice92.cdf", "fb_hadoop", "enterprise", "datamining", "cachefollower_mice60.cdf"]
WORKLOADS = {
    "datamining": "Data Mining",
    "enterprise": "Enterprise IT",
    "webserver": "WebServer",
    "fb_hadoop": "Hadoop",
    "cachefollower": "Cache Follower",
}
# (prefix, leaves, spines, hosts per leaf, leaves per region, fan-in, duration, stop)
SIZES = {
    "": (48, 24, 24, 4, 16, "5ms", "10ms"),
    "small_": (16, 8, 8, 4, 8, "2ms", "6ms"),
    "medium_": (32, 16, 16, 4, 12, "2ms", "6ms"),
}
#: The experiment each base belongs to (the medium base: the scale series of experiment.toml).
EXPERIMENT_OF = {"": "experiment.toml", "small_": "small.toml", "medium_": "experiment.toml"}
PER_SENDER = {"5ms": "4MB", "2ms": "2MB"}


def scenario(prefix, wl, ci, leaves_per_region=None):
    leaves, spines, hpl, lpr, fan_in, duration, stop = SIZES[prefix]
    lpr = leaves_per_region or lpr
    hosts = leaves * hpl
    regions = leaves // lpr
    label = "PFC+ECN with CI" if ci else "PFC+ECN without CI"
    out = [
        "# Congestion Isolation reproduction (talk 'Congestion Management – Congestion Isolation',",
        "# IEEE 802.1 DCB, Sept. 2017, slides 'Simulation Set-up' and",
        "# 'PFC+ECN with CI VS. PFC+ECN without CI').",
        f"# {label}, {WORKLOADS[wl]} flow sizes, {hosts} servers, {leaves + spines} switches.",
        f"# The base of {EXPERIMENT_OF[prefix]}: "
        f"incast sweep scenarios/congestion_isolation/{EXPERIMENT_OF[prefix]}",
        "# Every modelling decision: scenarios/congestion_isolation/README.md.",
        "",
        f'name = "congestion_isolation{"_" + prefix.rstrip("_") if prefix else ""}"',
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


#: The chosen detection (README, 'The chosen setting'): 802.1Qau QCN's base sampling interval.
CHOSEN_DETECT = 'switch.ci.detect = { kind = "sampled", every = "150KB" }'
#: The sensitivity sweep's CI settings, each a variant run beside `ci` at the chosen point:
#: (variant, overrides as TOML lines, where the range comes from).
CI_SETTINGS = [
    (
        "ci_arriving",
        ['switch.ci.detect = { kind = "arriving" }'],
        "detection: every packet arriving over the threshold (the ECN reading; the former setting)",
    ),
    (
        "ci_sampled64",
        ['switch.ci.detect = { kind = "sampled", every = "64KB" }'],
        "detection: denser sampling",
    ),
    (
        "ci_top2",
        ['switch.ci.detect = { kind = "top", k = 2, every = "64KB" }'],
        "detection: the 2 flows with most bytes in the queue (docs/congestion-isolation.md)",
    ),
    ("ci_threshold50", ['switch.ci.threshold = "50KB"'], "CI threshold at the ECN Kmin"),
    ("ci_threshold200", ['switch.ci.threshold = "200KB"'], "CI threshold at the ECN Kmax"),
    (
        "ci_cfq2",
        ["switch.pfc.classes = [1, 2, 3, 4]", "switch.ci.queues = [{ class = 3, cfq = [1, 2] }]"],
        "two congested-flow queues ('there can be multiple', hash-mapped)",
    ),
]
#: The sensitivity sweep's points: (label, overrides as TOML lines, where the range comes from).
SETTINGS = [
    ("chosen", [], "the chosen setting, and every CI variant (README, 'The chosen setting')"),
    ("load_30", ['workload.poisson."*".load = 0.3'], "load: 30-70 % in DCQCN/HPCC studies"),
    ("load_70", ['workload.poisson."*".load = 0.7'], ""),
    ("fanin_4", ['workload.incast."*".fan_in = 4'], "incast share: 'some persistent incast'"),
    ("fanin_16", ['workload.incast."*".fan_in = 16'], ""),
    ("buffer_2mb", ['switch.buffer = "2MB"'], "buffer: shallow 2017 switches, 2-16 MB"),
    ("buffer_16mb", ['switch.buffer = "16MB"'], "Tomahawk: 16 MB for 32 x 100G"),
    (
        "xoff_alpha_16",
        ['switch.pfc.threshold = { kind = "dynamic", alpha = 0.0625 }'],
        "PFC XOFF: dynamic alpha 1/16-1/2 (HPCC simulator: 1/8 at NIC speed)",
    ),
    ("xoff_alpha_2", ['switch.pfc.threshold = { kind = "dynamic", alpha = 0.5 }'], ""),
    (
        "ecn_dcqcn_paper",
        ['switch.ecn = { kind = "red", kmin = "5KB", kmax = "200KB", pmax = 0.01 }'],
        "DCQCN paper (40G): Kmin 5 KB, Kmax 200 KB, Pmax 1 %",
    ),
    (
        "ecn_hpcc_100g",
        ['switch.ecn = { kind = "red", kmin = "400KB", kmax = "1600KB", pmax = 0.2 }'],
        "HPCC simulator's run.py at 100G: 400/1600 KB, 20 %",
    ),
    ("region_2", ['base = "region2"'], "region size: 2-8 leaves ('several regional all to all')"),
    ("region_8", ['base = "region8"'], ""),
    ("stop_3ms", ['stop = "3ms"'], "the former run length (flows left unfinished)"),
]
SENSITIVITY_MIXES = {
    "ws92": "webserver_mice92.cdf",
    "hadoop": "fb_hadoop",
    "dm": "datamining",
    "mix": "mix.cdf",
}


def sensitivity() -> str:
    out = [
        "# The Congestion Isolation reproduction, SMALL (128 servers): how each claim depends on "
        "the",
        "# settings the talk leaves unstated. Written by generate.py (SETTINGS there: each point "
        "and",
        "# where its range comes from); README.md, 'Sensitivity', has the table.",
        "#",
        "#   incast sweep scenarios/congestion_isolation/sensitivity.toml --out ~/ci_sens -j 1",
        "",
        'name = "congestion_isolation_sensitivity"',
        'description = "Congestion Isolation talk, small: the claims over the unstated settings."',
        'base = "base_small.toml"',
        "seeds = [1, 2]",
        "",
        "[bases]",
        'region2 = "base_small_region2.toml"',
        'region8 = "base_small_region8.toml"',
        "",
        "[variants.noci]",
        "[variants.ci]  # the chosen setting: QCN's sampling, one frame per 150 KB",
        "switch.ci.queues = [{ class = 3, cfq = [2] }]",
        CHOSEN_DETECT,
    ]
    for variant, overrides, source in CI_SETTINGS:
        out += [f"# {source}", f"[variants.{variant}]"]
        if not any(line.startswith("switch.ci.queues") for line in overrides):
            out += ["switch.ci.queues = [{ class = 3, cfq = [2] }]"]
        if not any(line.startswith("switch.ci.detect") for line in overrides):
            out += [CHOSEN_DETECT]
        out += overrides
    out += [""]
    every_variant = ", ".join(f'"{v}"' for v in ["noci", "ci", *(c[0] for c in CI_SETTINGS)])
    for mix, cdf in SENSITIVITY_MIXES.items():
        for label, overrides, source in SETTINGS:
            variants = every_variant if label == "chosen" else '"noci", "ci"'
            out += [f"# {source}"] if source else []
            out += ["[[points]]", f'label = "{mix}/{label}"', f'workload.poisson."*".cdf = "{cdf}"']
            out += [*overrides, f"variants = [{variants}]", ""]
    return "\n".join(out)


def read_cdf(name: str) -> list[tuple[int, float]]:
    """A CDF's points: a bundled name, or a file of this folder."""
    path = HERE / name if name.endswith(".cdf") else BUNDLED / f"{name}.cdf"
    points = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            size, prob = line.split()
            points.append((int(size), float(prob)))
    return points


def cdf_at(points: list[tuple[int, float]], x: float, left: bool = False) -> float:
    """F(x) of a piecewise-linear CDF; `left`: the limit from below (before a point mass)."""
    sizes = [s for s, _ in points]
    if x <= sizes[0]:
        return 0.0 if left or x < sizes[0] else max(p for s, p in points if s == x)
    if x > sizes[-1] or (x == sizes[-1] and not left):
        return 1.0
    i = bisect_left(sizes, x) if left else bisect_right(sizes, x) - 1
    if sizes[i] == x:
        return points[i][1]
    if left:
        i -= 1
    (s0, p0), (s1, p1) = points[i], points[i + 1]
    return p0 + (p1 - p0) * (x - s0) / (s1 - s0)


def mean_size(points: list[tuple[int, float]]) -> float:
    """The linear mean (as incast samples): sum of (x0 + x1) / 2 * (F1 - F0)."""
    return sum((a[0] + b[0]) / 2 * (b[1] - a[1]) for a, b in zip(points, points[1:]))


def with_mice_share(points: list[tuple[int, float]], share: float) -> list[tuple[int, float]]:
    """The CDF with F(100 KB) = share: below it scaled, above it mapped onto [share, 1]."""
    at = cdf_at(points, MICE_BELOW)
    if all(s != MICE_BELOW for s, _ in points):
        points = sorted(points + [(MICE_BELOW, at)])
    out = []
    for size, prob in points:
        if size <= MICE_BELOW:
            out.append((size, prob * share / at))
        else:
            out.append((size, share + (prob - at) * (1 - share) / (1 - at)))
    return out


def mixture(names: list[str]) -> list[tuple[int, float]]:
    """The CDFs of `names`, each carrying an equal share of the bytes."""
    tables = [read_cdf(n) for n in names]
    inverse = [1 / mean_size(t) for t in tables]
    weights = [w / sum(inverse) for w in inverse]
    sizes = sorted({s for t in tables for s, _ in t})
    out: list[tuple[int, float]] = []
    for size in sizes:
        for left in (True, False):
            prob = sum(w * cdf_at(t, size, left) for w, t in zip(weights, tables))
            if not out or (size, prob) != out[-1]:
                out.append((size, prob))
    return out


def cdf_text(points: list[tuple[int, float]], header: str) -> str:
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    last = None
    for size, prob in points:
        row = f"{size} {min(1.0, prob):.6f}".rstrip("0").rstrip(".")
        if row != last:
            lines.append(row)
        last = row
    return "\n".join(lines) + "\n"


def write_cdfs() -> None:
    for name, (bundled, share) in RECONSTRUCTED.items():
        source = read_cdf(bundled)
        header = (
            f"{bundled} (crates/incast-core/data/workloads/{bundled}.cdf) reconstructed to the "
            f"talk's mice share:\n{100 * share:.0f} % of flows under 100 KB (the published "
            f"table: {100 * cdf_at(source, MICE_BELOW):.1f} %). Written by generate.py; "
            "README.md says how."
        )
        (HERE / name).write_text(cdf_text(with_mice_share(source, share), header))
    header = (
        "The talk's five flow-size mixes, each a fifth of the bytes: "
        + ", ".join(MIX)
        + ".\nWritten by generate.py; README.md says how."
    )
    (HERE / "mix.cdf").write_text(cdf_text(mixture(MIX), header))


if __name__ == "__main__":
    for prefix, name in (
        ("", "base.toml"),
        ("small_", "base_small.toml"),
        ("medium_", "base_medium.toml"),
    ):
        (HERE / name).write_text(scenario(prefix, "webserver", False))
    for leaves_per_region in (2, 8):
        text = scenario("small_", "webserver", False, leaves_per_region)
        (HERE / f"base_small_region{leaves_per_region}.toml").write_text(text)
    write_cdfs()
    (HERE / "sensitivity.toml").write_text(sensitivity())
