"""incast's STrack beside csg-htsim's htsim_dumbell_strack on its dumbbell (docs/htsim-strack.md).

    python scenarios/htsim_strack/compare.py             # run incast, print the doc's table
    python scenarios/htsim_strack/compare.py --check     # exit 1 if the table is not the doc's
    python scenarios/htsim_strack/compare.py --htsim BINARY [--htsim-ack64 BINARY]
        # re-run htsim (and its variant with the ACK path 64 ns longer) into the CSVs
    python scenarios/htsim_strack/compare.py --htsim BINARY --cpu 5 --bench INCAST_BENCH
        # CPU seconds of htsim and incast on the dumbbell, alternated round by round
    python scenarios/htsim_strack/compare.py --htsim-fat-tree BINARY
        # re-run htsim/main_strack_fat_tree.cpp's binary on both matrices into the CSV
    python scenarios/htsim_strack/compare.py --seeds [--check] [--htsim-fat-tree BINARY]
        # the fat-tree's perm and 64-to-1 incast at seeds 1-10: incast rerun, htsim's stored in
        # htsim_fat_tree_seeds.csv (rerun into it with --htsim-fat-tree); --check holds the doc's

The case is dumbbell.toml of this directory (its comments: htsim's topology, 4 flows starting at
0, 5, 10, 15 ms, 200 ms). htsim prints every flow's bytes received once a millisecond
(STrackSinkLoggerSampling) and samples the bottleneck queue every 10 us (QueueLoggerSampling,
read from its binary log with htsim's `parse_output LOG -ascii`); both are stored here,
htsim_received.csv (cumulative bytes per flow per millisecond) and htsim_queue.csv (the queue's
10 us samples averaged and maximised per millisecond). incast's side: the scenario stopped at
1, 5, 20 and 199 ms (an incast run is the same up to its stop whatever comes after), bytes
acknowledged per flow, the bottleneck port's 10 us queue samples.

Held to 10 % (issue 48): the lone flow's goodput over [1, 5) ms and the four flows' total
goodput over [20, 199) ms. Shown, not held: each flow's goodput, Jain's index and the queue,
because htsim's window law (strack.rs: the window is replaced by alpha (target - srtt) / cwnd on
every ACK, a period-2 map, and wraps to max_cwnd once srtt passes the target) makes the split
between flows hinge on single ACK timings: the `ack64` rows are htsim with its ACK pipe 64 ns
longer (incast's two 40 B ACK serialisations at 10 Gb/s) and incast with one sender's link 1 ns
longer; each reshuffles the flows' shares on its own simulator.
The fat-tree cases: htsim has no STrack main for them, so htsim/main_strack_fat_tree.cpp (ours,
modelled on htsim's datacenter/main_swift.cpp) runs STrack on main_swift's k = 8 fat-tree with
the permutation and 64-to-1 matrices of scenarios/htsim_swift/ (2 MB flows: 501 x 4000 B, queues
of 1000 packets, initial window 15, base_rtt 4 us: below every path's RTT, which htsim asserts),
until 20 ms, and one flow alone (LONE_PAIRS); its "Flow ... finished at T" lines are in
htsim_fat_tree_fct.csv. incast runs
htsim_swift's scenarios of the same matrices with `cc` STrack and the same base_rtt, to 20 ms.
FCT percentiles are nearest-rank over the flows that finished; shown, not held (the doc says
why). `--seeds` runs the permutation and the 64-to-1 incast at seeds 1-10 on both sides (htsim's
-seed: every flow's path and its RandomQueue's drops; incast's seed: its path hash), htsim's
"finished" lines stored in htsim_fat_tree_seeds.csv, and prints each seed's figures and their
spread: whether incast's mean lies within htsim's seed range and within 10 % of htsim's mean,
then the permutation's slow flows (over 2 ms) of all seeds binned by FCT. `--seeds-csv` reads
(and with --htsim-fat-tree writes) another per-seed CSV, for a variant of htsim.
Standard library plus incast.
"""

from __future__ import annotations

import argparse
import csv
import re
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DOC = HERE.parents[1] / "docs" / "htsim-strack.md"
SCENARIO = HERE / "dumbbell.toml"
RECEIVED_CSV = HERE / "htsim_received.csv"
QUEUE_CSV = HERE / "htsim_queue.csv"
PACKET = 4000
FLOW_STARTS_MS = [0, 5, 10, 15]
LONE = (1, 5)  # ms: flow 0 alone
ALL = (20, 199)  # ms: every flow started; htsim's last sample is at 199 ms
REL_TOL = 0.10
# incast's perturbation beside htsim's ack64: sender s3's link 1 ns longer.
S3_LINK = '{ a = "s3", b = "sw", rate = "10Gbps", delay = "2.5us" }'
S3_LINK_SKEWED = '{ a = "s3", b = "sw", rate = "10Gbps", delay = "2.501us" }'


def scenario_until(stop_ms: int, skewed: bool = False) -> str:
    """dumbbell.toml stopped at `stop_ms`, flows not yet started left out."""
    text = SCENARIO.read_text()
    if text.count('"200ms"') != 5 or S3_LINK not in text:
        sys.exit("compare: dumbbell.toml: expected the run and its 4 flows to stop at 200ms")
    if skewed:
        text = text.replace(S3_LINK, S3_LINK_SKEWED)
    head, *flows = text.split("[[workload.flows]]")
    last, metrics = flows[-1].split("[metrics]")
    flows[-1] = last
    kept = [f for f, start in zip(flows, FLOW_STARTS_MS) if start < stop_ms]
    stop = f'"{stop_ms}ms"'
    body = "".join("[[workload.flows]]" + f.replace('"200ms"', stop) for f in kept)
    return head.replace('"200ms"', stop) + body + "[metrics]" + metrics


def incast_side(skewed: bool = False) -> dict:
    """incast's received bytes per flow at each window edge, the queue over ALL, counters."""
    import incast

    received = {}
    for stop in (*LONE, *ALL):
        results = incast.run(scenario_until(stop, skewed))
        sizes = [int(b) for b in results.flows.size_bytes]
        received[stop] = sizes + [0] * (len(FLOW_STARTS_MS) - len(sizes))
    queues = results.queues
    port = queues[(queues.node_name == "sw") & (queues.port == 0)]
    window = port[(port.time_ps >= ALL[0] * 1e9) & (port.time_ps < ALL[1] * 1e9)]
    flows = results.flows
    return {
        "received": received,
        "queue_mean": float(window.bytes.mean()) / PACKET,
        "queue_max": float(window.bytes.max()) / PACKET,
        "retransmits": int(flows.retransmits.sum()),
        "timeouts": int(flows.timeouts.sum()),
    }


def htsim_side(run: str) -> dict:
    """htsim's stored figures of run `run` ("base" or "ack64"), as incast_side's."""
    received: dict[int, list[int]] = {}
    with RECEIVED_CSV.open() as f:
        for row in csv.DictReader(f):
            if row["run"] == run:
                at = received.setdefault(int(row["time_ms"]), [0] * len(FLOW_STARTS_MS))
                at[int(row["flow"])] = int(row["bytes"])
    means, maxima = [], []
    with QUEUE_CSV.open() as f:
        for row in csv.DictReader(f):
            if row["run"] == run and ALL[0] <= int(row["ms"]) < ALL[1]:
                means.append(float(row["mean_pkts"]))
                maxima.append(float(row["max_pkts"]))
    return {
        "received": received,
        # every millisecond holds 100 samples: the mean of means is the samples' mean.
        "queue_mean": statistics.fmean(means),
        "queue_max": max(maxima),
    }


def goodputs(side: dict, window: tuple[int, int]) -> list[float]:
    """Each flow's goodput (Gb/s) over `window` (ms)."""
    lo, hi = (side["received"][t] for t in window)
    return [(b - a) * 8 / ((window[1] - window[0]) * 1e-3) / 1e9 for a, b in zip(lo, hi)]


def jain(values: list[float]) -> float:
    return sum(values) ** 2 / (len(values) * sum(v * v for v in values))


def rel(ours: float, theirs: float) -> float:
    return (ours - theirs) / theirs


def rows() -> list[tuple[str, str, str, str]]:
    """(figure, htsim, incast, difference or why not held) of the doc's table."""
    theirs, ours = htsim_side("base"), incast_side()
    theirs_ack, ours_skew = htsim_side("ack64"), incast_side(skewed=True)
    out = []

    def held(name: str, a: float, b: float) -> None:
        diff = rel(b, a)
        verdict = "within 10 %" if abs(diff) <= REL_TOL else "OUTSIDE 10 %"
        out.append((name, f"{a:.2f}", f"{b:.2f}", f"{100 * diff:+.1f} % ({verdict})"))

    held("flow 0 alone, goodput [1, 5) ms, Gb/s", goodputs(theirs, LONE)[0],
         goodputs(ours, LONE)[0])  # fmt: skip
    held("4 flows, total goodput [20, 199) ms, Gb/s", sum(goodputs(theirs, ALL)),
         sum(goodputs(ours, ALL)))  # fmt: skip
    for label, h, i in (("", theirs, ours), (" (ack64 / s3 +1 ns)", theirs_ack, ours_skew)):
        if label:
            out.append((f"4 flows, total goodput [20, 199) ms, Gb/s{label}",
                        f"{sum(goodputs(h, ALL)):.2f}", f"{sum(goodputs(i, ALL)):.2f}",
                        "shown"))  # fmt: skip
        split_h, split_i = goodputs(h, ALL), goodputs(i, ALL)
        out.append((f"flows 0-3, goodput [20, 199) ms, Gb/s{label}",
                    " / ".join(f"{g:.2f}" for g in split_h),
                    " / ".join(f"{g:.2f}" for g in split_i), "shown"))  # fmt: skip
        out.append((f"Jain's index [20, 199) ms{label}", f"{jain(split_h):.3f}",
                    f"{jain(split_i):.3f}", "shown"))  # fmt: skip
        out.append((f"bottleneck queue mean / max [20, 199) ms, packets{label}",
                    f"{h['queue_mean']:.1f} / {h['queue_max']:.0f}",
                    f"{i['queue_mean']:.1f} / {i['queue_max']:.0f}", "shown"))  # fmt: skip
    out.append(("incast: retransmissions, timeouts (whole run; s3 +1 ns)", "",
                f"{ours['retransmits']}, {ours['timeouts']}; "
                f"{ours_skew['retransmits']}, {ours_skew['timeouts']}", "shown"))  # fmt: skip
    return out


def markdown() -> str:
    lines = ["| figure | htsim | incast | incast - htsim |", "|---|---|---|---|"]
    lines += [f"| {' | '.join(row)} |" for row in rows()]
    return "\n".join(lines) + "\n\n" + "\n".join(fat_tree_rows())


FAT_TREE_CSV = HERE / "htsim_fat_tree_fct.csv"
FAT_TREE_END_US = 20_000
FAT_TREE_BASE_RTT_US = 4


def swift_compare():
    """scenarios/htsim_swift/compare.py, whose matrices and fat-tree scenarios these share."""
    import importlib.util

    path = HERE.parent / "htsim_swift" / "compare.py"
    spec = importlib.util.spec_from_file_location("htsim_swift_compare", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# htsim's host queue (FairScheduler): STrackSrc stamps a packet when it hands it to the queue and
# the scheduler never holds STrack back (its back-pressure and its stamp at the NIC are for SWIFT
# packets only, swift_scheduler.cpp); incast's transmit-queue NIC does the same, its limit never
# reached (max_cwnd, 1000 x 4000 B), and STrackSrc::send_packets queues every packet its window
# admits on the ACK, the port busy or not (fill = "admitted"). docs/htsim-strack.md: the lone
# flows' per-ACK traces.
NIC_QUEUE = (
    '\n[nic]\nmodel = "queues"         # htsim\'s FairScheduler (htsim_strack/compare.py)\n'
    "# never reached (max_cwnd is 1000 x 4000 B); queued when the window admits them\n"
    'queues = { limit = "4MB", fill = "admitted" }\n'
)

# One flow alone on the fat-tree: under one edge switch, and across the core.
LONE_PAIRS = {"lone_1_2": (1, 2), "lone_14_127": (14, 127)}


def fat_tree_toml(case: str) -> str:
    """htsim_swift's scenario of case `case` ("perm", "incast"; a LONE_PAIRS case: the
    permutation's scenario with only that flow) with STrack instead of Swift, to 20 ms."""
    swift = swift_compare()
    if case in LONE_PAIRS:
        src, dst = LONE_PAIRS[case]
        head = swift.scenario_toml("perm").split("[[workload.flows]]")[0]
        flow = f'src = {src}\ndst = {dst}\nsize = {swift.FLOW_BYTES}\nstart = "0us"\n'
        text = head.replace('"htsim_swift_perm"', f'"htsim_swift_{case}"')
        text += "[[workload.flows]]\n" + flow
    else:
        text = swift.scenario_toml(case)
    replaced = (
        text.replace('name = "htsim_swift_', 'name = "htsim_strack_')
        .replace(
            'cc = "swift"',
            f'cc = {{ algorithm = "strack", base_rtt = "{FAT_TREE_BASE_RTT_US}us" }}',
        )
        .replace('stop = "1s"', f'stop = "{FAT_TREE_END_US // 1000}ms"')
        .replace("Swift with htsim's defaults", "STrack with htsim's defaults")
        .replace("\n[transport]\n", NIC_QUEUE + "\n[transport]\n", 1)
        .replace("SwiftAck::ACKSIZE", "STrackAck::ACKSIZE")
        .replace("SwiftSubflowSrc", "STrackSrc")
        .replace(
            "csg-htsim's Swift experiment (`datacenter/main_swift.cpp`)",
            "STrack on csg-htsim's Swift fat-tree (htsim_strack/htsim/main_strack_fat_tree.cpp)",
        )
        .replace(
            "Written by scenarios/htsim_swift/compare.py --write.",
            "htsim_swift's scenario, made STrack's by scenarios/htsim_strack/compare.py.",
        )
    )
    if (
        'cc = "swift"' in replaced
        or 'algorithm = "strack"' not in replaced
        or "[nic]" not in replaced
    ):
        sys.exit("compare: htsim_swift's scenario text changed; update fat_tree_toml")
    return replaced


def fat_tree_stats(fcts_us: list[float]) -> dict:
    swift = swift_compare()
    return swift.stats(fcts_us) if fcts_us else {}


def fat_tree_rows() -> list[str]:
    """The doc's fat-tree table: FCT percentiles (us) of htsim and incast per case."""
    import incast

    lines = [
        "| case | finished by 20 ms (htsim / incast) | min us | p50 us | p99 us | max us "
        "| incast: retransmits, timeouts, drops |",
        "|---|---|---|---|---|---|---|",
    ]
    cases = [("perm", 128), ("incast", 64)] + [(case, 1) for case in LONE_PAIRS]
    for case, size in cases:
        with FAT_TREE_CSV.open() as f:
            theirs = [float(r["fct_us"]) for r in csv.DictReader(f) if r["case"] == case]
        results = incast.run(fat_tree_toml(case))
        flows = results.flows
        ours = [x / 1e6 for x in flows[flows.finished == 1].fct_ps]
        a, b = fat_tree_stats(theirs), fat_tree_stats(ours)
        cells = [
            f"{a[k]:.1f} / {b[k]:.1f} ({100 * rel(b[k], a[k]):+.1f} %)"
            for k in ("min", "p50", "p99", "max")
        ]
        counted = (
            f"{int(flows.retransmits.sum())}, {int(flows.timeouts.sum())}, "
            f"{int(results.counters.drop_pkts.sum())}"
        )
        lines.append(
            f"| {case} | {len(theirs)} / {len(ours)} of {size} | {' | '.join(cells)} | {counted} |"
        )
    return lines


# The permutation and the 64-to-1 incast at seeds 1..SEEDS on both sides (docs/htsim-strack.md,
# "Seeds"): htsim's -seed seeds glibc's one rand() stream (each flow's path, RandomQueue's drops),
# incast's `seed` its path hash. htsim's "finished" lines per seed are stored in SEEDS_CSV.
SEEDS = 10
SEEDS_CSV = HERE / "htsim_fat_tree_seeds.csv"
SEED_CASES = {"perm": 128, "incast": 64}
SEED_STATS = ("finished", "slow", "p50", "p99", "max")
# "slow": flows not finished within SLOW_US (unfinished ones too), 8 to 12 times a lone flow's FCT
# (167-258 us): the permutation's flows either finish within ~1 ms or fall into STrack's slow mode
# (windows at the 10 B minimum for milliseconds) and take several ms (the doc's "Seeds").
SLOW_US = 2000


def htsim_fat_tree_command(binary: Path, matrix: Path, log: Path) -> list[str]:
    swift = swift_compare()
    return [
        str(binary), "-nodes", "128", "-tm", str(matrix),
        "-flowsize", str(swift.FLOW_PACKETS), "-q", str(swift.QUEUE_PACKETS),
        "-end", str(FAT_TREE_END_US), "-basertt", str(FAT_TREE_BASE_RTT_US), "-o", str(log),
    ]  # fmt: skip


def htsim_finished(command: list[str], cwd: str) -> list[tuple[str, str]]:
    """Runs main_strack_fat_tree's binary; its (flow, FCT us) "finished" lines."""
    done = subprocess.run(command, capture_output=True, text=True, cwd=cwd)
    if done.returncode != 0:
        sys.exit(f"compare: htsim exited with {done.returncode}: {done.stderr[-300:]}")
    lines = (re.match(r"Flow (\S+) finished at ([\d.]+)$", x) for x in done.stdout.splitlines())
    return [(found.group(1), found.group(2)) for found in lines if found]


def rerun_htsim_seeds(binary: Path, stored: Path = SEEDS_CSV) -> None:
    """htsim's SEED_CASES at -seed 1..SEEDS into `stored`."""
    swift = swift_compare()
    with stored.open("w", newline="") as f, tempfile.TemporaryDirectory() as tmp:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["case", "seed", "flow", "fct_us"])
        for case in SEED_CASES:
            matrix = swift.HERE / f"{swift.CASES[case]}.cm"
            command = htsim_fat_tree_command(binary, matrix, Path(tmp) / "log.dat")
            for seed in range(1, SEEDS + 1):
                for flow, fct in htsim_finished([*command, "-seed", str(seed)], tmp):
                    out.writerow([case, seed, flow, fct])


def seed_stats(fcts_us: list[float], size: int) -> dict:
    """Flows finished by 20 ms, flows of `size` not finished within SLOW_US and the
    nearest-rank FCT percentiles (us) of one run."""
    slow = size - sum(bool(fct <= SLOW_US) for fct in fcts_us)
    return {"finished": len(fcts_us), "slow": slow, **fat_tree_stats(fcts_us), "fcts": fcts_us}


def htsim_seed_runs(stored: Path = SEEDS_CSV) -> dict[str, list[dict]]:
    """`stored` (rerun_htsim_seeds's CSV): per case, seed_stats of seeds 1..SEEDS."""
    fcts: dict[str, dict[int, list[float]]] = {case: {} for case in SEED_CASES}
    with stored.open() as f:
        for row in csv.DictReader(f):
            fcts[row["case"]].setdefault(int(row["seed"]), []).append(float(row["fct_us"]))
    for case, runs in fcts.items():
        if sorted(runs) != list(range(1, SEEDS + 1)):
            sys.exit(f"compare: {stored.name} lacks {case} at seeds 1-{SEEDS}; rerun htsim")
    return {
        case: [seed_stats(runs[seed], SEED_CASES[case]) for seed in sorted(runs)]
        for case, runs in fcts.items()
    }


def incast_seed_runs() -> dict[str, list[dict]]:
    """incast's SEED_CASES at seeds 1..SEEDS: per case, seed_stats of each seed and its
    "slow_lossy": slow flows (finished or not) with a retransmission or a timeout."""
    import incast

    out = {}
    for case in SEED_CASES:
        toml = fat_tree_toml(case)
        out[case] = []
        for seed in range(1, SEEDS + 1):
            flows = incast.run(toml, seed=seed).flows
            fcts = [x / 1e6 for x in flows[flows.finished == 1].fct_ps]
            slow = flows[(flows.finished != 1) | (flows.fct_ps > SLOW_US * 1e6)]
            lossy = int(((slow.retransmits > 0) | (slow.timeouts > 0)).sum())
            out[case].append({**seed_stats(fcts, SEED_CASES[case]), "slow_lossy": lossy})
    return out


def spread(values: list[float]) -> dict:
    return {
        "min": min(values),
        "max": max(values),
        "mean": statistics.fmean(values),
        "sd": statistics.stdev(values),
    }


def seed_tables(theirs: dict[str, list[dict]], ours: dict[str, list[dict]]) -> list[str]:
    """The doc's two seed tables: every seed's figures, then each statistic's spread and
    whether incast's mean lies within htsim's seed range and within 10 % of htsim's mean."""
    fmt = {
        "finished": "{:.0f}",
        "slow": "{:.0f}",
        "p50": "{:.1f}",
        "p99": "{:.1f}",
        "max": "{:.1f}",
    }
    lines = [
        "| case | seed | finished by 20 ms (htsim / incast) "
        f"| slow: over {SLOW_US / 1000:g} ms | p50 us | p99 us | max us "
        "| incast: slow with a retransmission or timeout |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for case in SEED_CASES:
        for seed, (a, b) in enumerate(zip(theirs[case], ours[case]), start=1):
            cells = [f"{fmt[k].format(a[k])} / {fmt[k].format(b[k])}" for k in SEED_STATS]
            lines.append(f"| {case} | {seed} | {' | '.join(cells)} | {b['slow_lossy']} |")
    lines += [
        "",
        "| case | statistic | htsim min-max, mean (sd) | incast min-max, mean (sd) "
        "| incast's mean in htsim's range | incast's mean - htsim's |",
        "|---|---|---|---|---|---|",
    ]
    for case in SEED_CASES:
        for stat in SEED_STATS:
            a = spread([run[stat] for run in theirs[case]])
            b = spread([run[stat] for run in ours[case]])
            f = fmt[stat]
            cells = [
                f"{f.format(x['min'])}-{f.format(x['max'])}, {x['mean']:.1f} ({x['sd']:.1f})"
                for x in (a, b)
            ]
            inside = "yes" if a["min"] <= b["mean"] <= a["max"] else "no"
            diff = rel(b["mean"], a["mean"])
            verdict = "within 10 %" if abs(diff) <= REL_TOL else "outside 10 %"
            lines.append(
                f"| {case} | {stat} | {' | '.join(cells)} | {inside} "
                f"| {100 * diff:+.1f} % ({verdict}) |"
            )
    return lines


def run_htsim_fat_tree(binary: Path) -> None:
    """Runs main_strack_fat_tree's binary on every fat-tree case into htsim_fat_tree_fct.csv."""
    swift = swift_compare()
    with FAT_TREE_CSV.open("w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        out.writerow(["case", "flow", "fct_us"])
        matrices = {case: swift.HERE / f"{matrix}.cm" for case, matrix in swift.CASES.items()}
        for case in LONE_PAIRS:
            matrices[case] = None
        for case, matrix in matrices.items():
            with tempfile.TemporaryDirectory() as tmp:
                if matrix is None:  # one flow, in htsim's connection-matrix format
                    src, dst = LONE_PAIRS[case]
                    matrix = Path(tmp) / "lone.cm"
                    matrix.write_text(
                        f"Nodes 128\nConnections 1\n{src}->{dst} id 1 start 0 size 2000000\n"
                    )
                command = htsim_fat_tree_command(binary, matrix, Path(tmp) / "log.dat")
                for flow, fct in htsim_finished(command, tmp):
                    out.writerow([case, flow, fct])


def htsim_command(binary: Path, log: Path) -> list[str]:
    return [str(binary), "-conns", str(len(FLOW_STARTS_MS)), "-o", str(log)]


def run_htsim(binary: Path, parse_output: Path) -> tuple[dict[int, list[int]], list[tuple]]:
    """Runs htsim's dumbbell; bytes received per flow at each millisecond ({ms: [flow]}) and
    the queue per millisecond (ms, mean packets, max packets)."""
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "log.dat"
        done = subprocess.run(htsim_command(binary, log), capture_output=True, text=True, cwd=tmp)
        if done.returncode != 0:
            sys.exit(f"compare: htsim exited with {done.returncode}: {done.stderr[-300:]}")
        ascii_log = subprocess.run(
            [str(parse_output), str(log), "-ascii"], capture_output=True, text=True, check=True
        ).stdout
    received: dict[int, list[int]] = {}
    at = None
    for line in done.stdout.splitlines():
        if line.startswith("STrackSinkLoggerSampling(p=0.001), t="):
            at = received.setdefault(round(float(line.split("t=")[1]) * 1e3), [])
        elif line.startswith("total received ") and at is not None:
            at.append(int(line.split()[2]))
    samples: dict[int, list[int]] = {}
    for line in ascii_log.splitlines():
        # "<t s> Type QUEUE_APPROX ID 6 Ev RANGE LastQ <bytes> MinQ .. MaxQ .. Name Queue"
        found = re.match(r"([\d.]+) Type QUEUE_APPROX .* Ev RANGE LastQ (\d+) ", line)
        if found:
            ms = int(round(float(found.group(1)) * 1e6)) // 1000  # 10 us samples: exact
            samples.setdefault(ms, []).append(int(found.group(2)))
    queue = [
        (ms, statistics.fmean(q) / PACKET, max(q) / PACKET) for ms, q in sorted(samples.items())
    ]
    return received, queue


def write_htsim(runs: dict[str, Path], parse_output: Path) -> None:
    with RECEIVED_CSV.open("w", newline="") as rf, QUEUE_CSV.open("w", newline="") as qf:
        r_out = csv.writer(rf, lineterminator="\n")
        q_out = csv.writer(qf, lineterminator="\n")
        r_out.writerow(["run", "time_ms", "flow", "bytes"])
        q_out.writerow(["run", "ms", "mean_pkts", "max_pkts"])
        for run, binary in runs.items():
            received, queue = run_htsim(binary, parse_output)
            for ms, per_flow in sorted(received.items()):
                for flow, size in enumerate(per_flow):
                    r_out.writerow([run, ms, flow, size])
            for ms, mean, peak in queue:
                q_out.writerow([run, ms, f"{mean:.3f}", f"{peak:.0f}"])


def cpu_seconds(command: list[str], cwd: Path) -> float:
    """Runs `command`; its CPU time (user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"compare: {command[0]} exited with {done.returncode}")
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def cpu_rounds(binary: Path, bench: str, rounds: int) -> None:
    """htsim then incast-bench (the whole process) on the dumbbell, round after round; the
    median of the per-round ratios htsim / incast."""
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(1, rounds + 1):
            h = cpu_seconds(htsim_command(binary, Path(tmp) / "log.dat"), Path(tmp))
            i = cpu_seconds([bench, "--one", str(SCENARIO)], Path(tmp))
            ratios.append(h / i)
            print(f"round {round_}: htsim {h:.3f} s, incast {i:.3f} s, ratio {h / i:.2f}")
    print(f"median ratio htsim / incast {statistics.median(ratios):.2f}")


def slow_histogram(theirs: dict[str, list[dict]], ours: dict[str, list[dict]]) -> list[str]:
    """The permutation's slow flows over all seeds by FCT, a row a millisecond from SLOW_US to
    the end, then the unfinished ones: where each simulator's slow flows end."""
    size, edges = SEED_CASES["perm"], range(SLOW_US // 1000, FAT_TREE_END_US // 1000)
    lines = [
        f"| permutation, seeds 1-{SEEDS}: FCT ms | htsim flows | incast flows |",
        "|---|---|---|",
    ]
    counts = []
    for runs in (theirs["perm"], ours["perm"]):
        fcts = [fct for run in runs for fct in run["fcts"] if fct > SLOW_US]
        by_ms = [sum(bool(ms * 1000 < fct <= (ms + 1) * 1000) for fct in fcts) for ms in edges]
        counts.append(by_ms + [sum(size - run["finished"] for run in runs)])
    labels = [f"{ms}-{ms + 1}" for ms in edges] + ["unfinished by 20 ms"]
    lines += [f"| {label} | {a} | {b} |" for label, a, b in zip(labels, *counts)]
    return lines


def seeds(htsim_binary: Path | None, check: bool, stored: Path = SEEDS_CSV) -> None:
    """--seeds: print (and with `check` hold) the doc's seed tables, htsim's side read from
    `stored` (rerun into it first if `htsim_binary`); CPU seconds to stderr."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    if htsim_binary:
        rerun_htsim_seeds(htsim_binary, stored)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = resource.getrusage(resource.RUSAGE_SELF)
    ours = incast_seed_runs()
    end = resource.getrusage(resource.RUSAGE_SELF)
    theirs = htsim_seed_runs(stored)
    table = "\n".join(seed_tables(theirs, ours)) + "\n\n" + "\n".join(slow_histogram(theirs, ours))
    print(table)
    htsim_cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    incast_cpu = end.ru_utime - start.ru_utime + end.ru_stime - start.ru_stime
    print(f"CPU seconds: htsim {htsim_cpu:.1f} (0 if not rerun), incast {incast_cpu:.1f}",
          file=sys.stderr)  # fmt: skip
    if check:
        doc = DOC.read_text()
        if any(part not in doc for part in table.split("\n\n")):
            sys.exit(f"compare: the seed tables differ from {DOC.name} (above: the tables now)")
        print(f"compare: the seed tables match {DOC.name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the doc's table differs")
    parser.add_argument("--htsim", type=Path, help="htsim_dumbell_strack: re-run it into the CSVs")
    parser.add_argument("--htsim-ack64", type=Path, help="its variant, ACK pipe 64 ns longer")
    parser.add_argument("--cpu", type=int, metavar="ROUNDS", help="CPU time rounds (with --htsim)")
    parser.add_argument("--bench", default="target/release/incast-bench", help="for --cpu")
    parser.add_argument("--htsim-fat-tree", type=Path, help="main_strack_fat_tree's binary")
    parser.add_argument(
        "--seeds",
        action="store_true",
        help=f"the fat-tree's perm and incast at seeds 1-{SEEDS} (incast rerun, htsim's stored;"
        " with --htsim-fat-tree htsim's rerun too); --check holds the doc's seed tables",
    )
    parser.add_argument(
        "--seeds-csv",
        type=Path,
        default=SEEDS_CSV,
        help="with --seeds: htsim's per-seed CSV to read (and write with --htsim-fat-tree), for"
        " a variant of htsim (the doc's tail-drop one); default the stored one",
    )
    args = parser.parse_args()
    if args.seeds:
        seeds(args.htsim_fat_tree, args.check, args.seeds_csv)
        return
    if args.htsim_fat_tree:
        run_htsim_fat_tree(args.htsim_fat_tree)
    if args.cpu:
        if not args.htsim:
            sys.exit("compare: --cpu needs --htsim BINARY")
        cpu_rounds(args.htsim, args.bench, args.cpu)
        return
    if args.htsim:
        if not args.htsim_ack64:
            sys.exit("compare: --htsim needs --htsim-ack64 BINARY too (both runs are stored)")
        # htsim's sim/parse_output, beside sim/tests/ where the binary is built.
        parse_output = args.htsim.resolve().parents[1] / "parse_output"
        write_htsim({"base": args.htsim, "ack64": args.htsim_ack64}, parse_output)
    table = markdown()
    print(table)
    if args.check:
        doc = DOC.read_text()
        if any(part not in doc for part in table.split("\n\n")):  # the dumbbell's, the fat-tree's
            sys.exit(f"compare: the table differs from {DOC.name} (above: the table now)")
        print(f"compare: the table matches {DOC.name}")


if __name__ == "__main__":
    main()
