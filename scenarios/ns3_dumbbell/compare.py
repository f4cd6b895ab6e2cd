"""incast's TCP (CUBIC, BBR) beside ns-3 mainline on issue 43's dumbbell (docs/ns3-tcp.md).

    python scenarios/ns3_dumbbell/compare.py                  # run incast, print the doc's tables
    python scenarios/ns3_dumbbell/compare.py --case bbr_10g_nosack
    python scenarios/ns3_dumbbell/compare.py --check          # exit 1 if a table is not the doc's
    python scenarios/ns3_dumbbell/compare.py --ns3 NS3_DIR    # re-run ns-3 too (ns3/results/)
    python scenarios/ns3_dumbbell/compare.py --case cubic_10g_sack --stop-ms 1000   # 100-1000 ms

ns-3's side is read from ns3/results/*.csv, which `tcp-dumbbell.cc` (ns3/) wrote; only `--ns3`
needs an ns-3 build (with scratch/tcp-dumbbell.cc copied in and built). incast's side runs here.

Dumbbell cases: `<cc>_<10g|40g>_<nosack|sack>` is `<cc>_<10g|40g>.toml` of this directory with
`[transport] recovery` set explicitly ("newreno" beside ns-3 without SACK, classic recovery;
"sack" beside ns-3 with SACK and PRR) and the queue sampled every 10 us, as ns-3's program does.
The window [100 ms, 200 ms) is measured from two runs of the same scenario, one stopped at
100 ms (an incast run is the same up to its stop whatever comes after): goodput = payload bytes
cumulatively acknowledged in the window, retransmitted segments and timeouts per flow, drops
and transmitted bytes at the bottleneck port; the queue mean averages the 10 us samples at
times in [100 ms, 200 ms). Many-flow cases: ns3/websearch32_cubic_<newreno|sack>.toml against
ns-3 with SACK off / on; FCT percentiles per size bucket.
"""

from __future__ import annotations

import argparse
import csv
import math
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
NS3_DIR = HERE / "ns3"
RESULTS = NS3_DIR / "results"
DOC = HERE.parents[1] / "docs" / "ns3-tcp.md"
WINDOW_START_MS = 100
BOTTLENECK_BPS = 10e9

DUMBBELLS = [
    f"{cc}_{rate}_{sack}"
    for cc in ("cubic", "bbr")
    for rate in ("10g", "40g")
    for sack in ("nosack", "sack")
]
MANY = ["websearch32_nosack", "websearch32_sack"]
RECOVERY = {"nosack": "newreno", "sack": "sack"}
# FCT buckets (incast's summary buckets): label, lower bound (inclusive), upper (exclusive).
BUCKETS = [("<100KB", 0, 100_000), ("100KB-1MB", 100_000, 1_000_000), (">=1MB", 1_000_000, None)]

# The figures (issue 43, "Figures"): relative tolerance of the aggregates, absolute
# tolerance of Jain's index, factor for BBR's standing queue.
REL_TOL = 0.10
JAIN_TOL = 0.05
BBR_QUEUE_FACTOR = 2.0


def dumbbell_toml(case: str, skew_ps: int = 0) -> str:
    """The incast scenario of dumbbell `case`, recovery explicit, queue sampled every 10 us;
    sender i's link delay 1 us + i x `skew_ps` (phase_skew.py; as tcp-dumbbell's --delaySkew),
    or 1 us + (3 - i) x |skew_ps| when it is negative (the order reversed)."""
    cc, rate, sack = case.split("_")
    text = (HERE / f"{cc}_{rate}.toml").read_text()
    for i in range(4 if skew_ps else 0):
        link = re.compile(rf'(\{{ a = "s{i}", b = "sw", rate = "\w+", delay = )"1us"')
        offset = i * skew_ps if skew_ps > 0 else (3 - i) * -skew_ps
        text, n = link.subn(rf'\g<1>"{1_000_000 + offset}ps"', text)
        if n != 1:
            sys.exit(f"compare: {cc}_{rate}.toml has no 1us link from s{i} to skew")
    line = f'recovery = "{RECOVERY[sack]}"'
    if re.search(r"(?m)^recovery = .*$", text):
        text = re.sub(r"(?m)^recovery = .*$", line, text)
    else:
        text = re.sub(r"(?m)^(cc = .*)$", rf"\1\n{line}", text, count=1)
    text, n = re.subn(r'(?m)^queue_sample_interval = ".*"$', 'queue_sample_interval = "10us"', text)
    if n != 1:
        sys.exit(f"compare: {cc}_{rate}.toml has no queue_sample_interval line to set")
    return text


def incast_dumbbell(case: str, stop_ms: int = 200, skew_ps: int = 0) -> dict:
    """incast's figures over [100 ms, stop_ms) for dumbbell `case` (the module's docstring)."""
    import incast

    text = dumbbell_toml(case, skew_ps)
    if text.count('stop = "200ms"') != 5:
        sys.exit(f"compare: {case}: expected the run and its 4 flows to stop at 200ms")
    end = incast.run(text.replace('stop = "200ms"', f'stop = "{stop_ms}ms"'))
    start = incast.run(text.replace('stop = "200ms"', f'stop = "{WINDOW_START_MS}ms"'))
    window_s = (stop_ms - WINDOW_START_MS) / 1e3
    f1, f2 = start.flows, end.flows
    goodput = [(b - a) * 8 / window_s / 1e9 for a, b in zip(f1.size_bytes, f2.size_bytes)]
    queues = end.queues
    bottleneck = queues[(queues.node_name == "sw") & (queues.port == 0)]
    times = bottleneck.time_ps
    window = bottleneck[(times >= WINDOW_START_MS * 1e9) & (times < stop_ms * 1e9)]

    def port0(results, table: str, column: str) -> int:
        frame = getattr(results, table)
        row = frame[(frame.node_name == "sw") & (frame.port == 0)]
        return int(row[column].sum())

    tx = port0(end, "ports", "tx_bytes") - port0(start, "ports", "tx_bytes")
    return {
        "goodput": goodput,
        "retransmits": [int(b - a) for a, b in zip(f1.retransmits, f2.retransmits)],
        "timeouts": [int(b - a) for a, b in zip(f1.timeouts, f2.timeouts)],
        "drops": port0(end, "counters", "drop_pkts") - port0(start, "counters", "drop_pkts"),
        "utilization": tx * 8 / BOTTLENECK_BPS / window_s,
        "queue_mean": float(window.bytes.mean()),
    }


def read_ns3(path: Path) -> tuple[list[dict], dict]:
    """ns-3's CSV: per-flow rows and the `# key,value` summary lines."""
    if not path.exists():
        sys.exit(f"compare: {path} is missing; run with --ns3 NS3_DIR to produce it")
    rows, summary = [], {}
    lines = path.read_text().splitlines()
    for line in lines:
        if line.startswith("# "):
            key, value = line[2:].split(",")
            summary[key] = float(value)
    body = [line for line in lines if not line.startswith("# ")]
    rows = list(csv.DictReader(body))
    if "drops" not in summary or "other_drops" not in summary or not rows:
        sys.exit(f"compare: {path} is incomplete (no flows or no drop counts); re-run ns-3")
    return rows, summary


def ns3_csv(case: str, stop_ms: int = 200) -> Path:
    """Where ns-3's output of `case` run to `stop_ms` is kept."""
    return RESULTS / (f"{case}.csv" if stop_ms == 200 else f"{case}_{stop_ms}ms.csv")


def ns3_dumbbell(case: str, stop_ms: int = 200) -> dict:
    rows, summary = read_ns3(ns3_csv(case, stop_ms))
    return {
        "goodput": [float(r["goodput_gbps"]) for r in rows],
        "retransmits": [int(r["retransmits"]) for r in rows],
        "timeouts": [int(r["timeouts"]) for r in rows],
        "drops": int(summary["drops"]),
        "utilization": summary["utilization"],
        "queue_mean": summary["queue_mean_bytes"],
        "other_drops": int(summary["other_drops"]),
    }


def jain(values: list[float]) -> float:
    total = sum(values)
    squares = sum(v * v for v in values)
    return total * total / (len(values) * squares) if squares > 0 else float("nan")


def rel(a: float, b: float) -> float:
    """Relative difference of incast's `a` from ns-3's `b` (0 when both are 0)."""
    if b == 0:
        return 0.0 if a == 0 else math.inf
    return (a - b) / b


def dumbbell_rows(case: str, ours: dict, theirs: dict) -> list[tuple[str, str, str, str]]:
    """(figure, incast, ns-3, verdict) rows of one dumbbell case against the issue's figures."""
    rows = []

    def relative(name: str, a: float, b: float, fmt: str) -> None:
        d = rel(a, b)
        ok = abs(d) <= REL_TOL
        rows.append((name, fmt.format(a), fmt.format(b), f"{d:+.1%} {'ok' if ok else 'MISS'}"))

    relative("goodput, Gb/s", sum(ours["goodput"]), sum(theirs["goodput"]), "{:.3f}")
    relative("utilization", ours["utilization"], theirs["utilization"], "{:.4f}")
    if case.startswith("bbr"):
        a, b = ours["queue_mean"], theirs["queue_mean"]
        ratio = a / b if b > 0 else math.inf
        ok = 1 / BBR_QUEUE_FACTOR <= ratio <= BBR_QUEUE_FACTOR
        verdict = f"x{ratio:.2f} {'ok' if ok else 'MISS'}"
        rows.append(("queue mean, KB", f"{a / 1e3:.1f}", f"{b / 1e3:.1f}", verdict))
    else:
        relative("queue mean, KB", ours["queue_mean"] / 1e3, theirs["queue_mean"] / 1e3, "{:.1f}")
    relative("drops", ours["drops"], theirs["drops"], "{}")
    relative("retransmits", sum(ours["retransmits"]), sum(theirs["retransmits"]), "{}")
    rows.append(("timeouts", str(sum(ours["timeouts"])), str(sum(theirs["timeouts"])), ""))
    ja, jb = jain(ours["goodput"]), jain(theirs["goodput"])
    ok = abs(ja - jb) <= JAIN_TOL
    rows.append(("Jain", f"{ja:.3f}", f"{jb:.3f}", f"{ja - jb:+.3f} {'ok' if ok else 'MISS'}"))
    per_flow = ", ".join
    rows.append(
        (
            "per flow, Gb/s",
            per_flow(f"{g:.2f}" for g in ours["goodput"]),
            per_flow(f"{g:.2f}" for g in theirs["goodput"]),
            "",
        )
    )
    return rows


def percentile(values: list[float], q: float) -> float:
    """The q-quantile by nearest rank: the smallest value with a share q at or below it."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1]


def fct_stats(sizes: list[int], fcts: list[float | None]) -> list[tuple[str, int, int, str]]:
    """Per bucket: label, flows, unfinished, 'p50 / p99 / max' FCT in us."""
    out = []
    for label, lo, hi in BUCKETS:
        inside = [f for s, f in zip(sizes, fcts) if s >= lo and (hi is None or s < hi)]
        done = [f for f in inside if f is not None]
        stats = "-"
        if done:
            p = [percentile(done, 0.5), percentile(done, 0.99), max(done)]
            stats = " / ".join(f"{v:.0f}" for v in p)
        out.append((label, len(inside), len(inside) - len(done), stats))
    return out


def many_case(case: str) -> tuple[list, dict, dict]:
    """FCT rows and totals of many-flow `case` on both sides."""
    import incast

    sack = case.split("_")[1]
    scenario = NS3_DIR / f"websearch32_cubic_{RECOVERY[sack]}.toml"
    res = incast.run(str(scenario))
    flows = res.flows.sort_values("flow_id")
    ours_fct = [float(f) if done == 1 else None for f, done in zip(flows.fct_us, flows.finished)]
    ours_sizes = [int(s) for s in flows.size_bytes]
    counters = res.counters[(res.counters.node_name == "sw") & (res.counters.port == 0)]
    ours = {
        "drops": int(counters.drop_pkts.sum()),
        "retransmits": int(flows.retransmits.sum()),
        "timeouts": int(flows.timeouts.sum()),
    }
    rows, summary = read_ns3(RESULTS / f"{case}.csv")
    theirs_sizes = [int(r["size_bytes"]) for r in rows]
    if theirs_sizes != ours_sizes:
        sys.exit(f"compare: {case}: ns-3's flows are not incast's (flow list changed?)")
    theirs_fct = [float(r["fct_ns"]) / 1e3 if r["fct_ns"] else None for r in rows]
    theirs = {
        "drops": int(summary["drops"]),
        "retransmits": sum(int(r["retransmits"]) for r in rows),
        "timeouts": sum(int(r["timeouts"]) for r in rows),
    }
    table = [
        (label, n, a_left, a_stats, b_left, b_stats)
        for (label, n, a_left, a_stats), (_, _, b_left, b_stats) in zip(
            fct_stats(ours_sizes, ours_fct), fct_stats(theirs_sizes, theirs_fct)
        )
    ]
    return table, ours, theirs


def markdown(cases: list[str], stop_ms: int = 200) -> list[str]:
    """The doc's tables for `cases`, one block of text per case."""
    blocks = []
    for case in cases:
        out = []
        if case in MANY:
            table, ours, theirs = many_case(case)
            out.append(f"**{case}** (FCT in us, p50 / p99 / max; unfinished in brackets)\n")
            out.append("| size | flows | incast | ns-3 |")
            out.append("|---|---|---|---|")
            for label, n, a_left, a_stats, b_left, b_stats in table:
                a = a_stats + (f" ({a_left})" if a_left else "")
                b = b_stats + (f" ({b_left})" if b_left else "")
                out.append(f"| {label} | {n} | {a} | {b} |")
            out.append(
                f"| totals | | drops {ours['drops']}, retransmits {ours['retransmits']}, "
                f"timeouts {ours['timeouts']} | drops {theirs['drops']}, "
                f"retransmits {theirs['retransmits']}, timeouts {theirs['timeouts']} |"
            )
        else:
            ours, theirs = incast_dumbbell(case, stop_ms), ns3_dumbbell(case, stop_ms)
            span = "" if stop_ms == 200 else f", {WINDOW_START_MS}-{stop_ms} ms"
            out.append(f"**{case}**{span}\n")
            out.append("| figure | incast | ns-3 | incast vs ns-3 |")
            out.append("|---|---|---|---|")
            for row in dumbbell_rows(case, ours, theirs):
                out.append("| " + " | ".join(row) + " |")
            if theirs["other_drops"]:
                out.append(
                    f"\nns-3 dropped {theirs['other_drops']} packets outside the bottleneck."
                )
        blocks.append("\n".join(out))
    return blocks


def run_ns3(ns3: Path, cases: list[str], stop_ms: int = 200) -> None:
    """Runs ns-3's tcp-dumbbell for `cases` and rewrites their CSVs in ns3/results/."""
    RESULTS.mkdir(exist_ok=True)
    for case in cases:
        if case in MANY:
            sack = case.split("_")[1]
            flows = NS3_DIR / "websearch32_flows.csv"
            args = f"--tcp=TcpCubic --senders=32 --flows={flows} --stop=3s"
        else:
            cc, rate, sack = case.split("_")
            tcp = {"cubic": "TcpCubic", "bbr": "TcpBbr"}[cc]
            args = f"--tcp={tcp} --senderRate={rate[:-1]}Gbps --stop={stop_ms}ms"
        args += f" --sack={int(sack == 'sack')}"
        command = [str(ns3 / "ns3"), "run", "--no-build", f"tcp-dumbbell {args}"]
        print(" ".join(command), flush=True)
        done = subprocess.run(command, cwd=ns3, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"compare: ns-3 failed on {case}:\n{done.stdout}{done.stderr}")
        (RESULTS / ns3_csv(case, stop_ms).name).write_text(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", choices=DUMBBELLS + MANY, help="only these")
    parser.add_argument("--ns3", type=Path, help="an ns-3-dev checkout with tcp-dumbbell built")
    parser.add_argument("--check", action="store_true", help="exit 1 if the doc's tables differ")
    parser.add_argument(
        "--stop-ms",
        type=int,
        default=200,
        help="end of the dumbbells' window and run, ms (default 200, the issue's)",
    )
    args = parser.parse_args()
    cases = args.case or DUMBBELLS + MANY
    if args.stop_ms <= WINDOW_START_MS:
        sys.exit(f"compare: --stop-ms must be above {WINDOW_START_MS} (the window's start)")
    if args.stop_ms != 200:
        if not args.case or set(cases) & set(MANY):
            sys.exit("compare: --stop-ms needs --case, dumbbell cases only")
    if args.ns3:
        run_ns3(args.ns3, cases, args.stop_ms)
    blocks = markdown(cases, args.stop_ms)
    print("\n\n".join(blocks))
    if args.check:
        doc = DOC.read_text()
        moved = [block.split("\n")[0] for block in blocks if block not in doc]
        if moved:
            sys.exit(f"compare: {', '.join(moved)} differ from {DOC.name} (above: the tables now)")
        print(f"compare: every table matches {DOC.name}")


if __name__ == "__main__":
    main()
