"""htsim's DCTCP permutation and incast's rendering of it (htsim_dctcp_permutation.toml), run on
this machine one after the other, round by round: CPU seconds of each and their ratio.

    python3 htsim_compare.py --htsim CSG_HTSIM/sim --out DIR [--bench INCAST_BENCH]
                             [--cli INCAST] [--rounds N]

Each round runs htsim, then `incast-bench --one` (the core alone: reading, building, running,
results), then `incast run` as a user would (`--cli`, by default the `incast` on the PATH; `--cli
""` leaves it out): the CLI with its default metrics, Parquet tables, PNG plots and HTML report,
Python's start and imports included.

`CSG_HTSIM` is a checkout of github.com/Broadcom/csg-htsim (measured at 841d9e7). The first run
builds its library as its Makefiles do (`make libhtsim.a`, the fat-tree objects of
`datacenter/`) and compiles `datacenter/old_tests/main_dctcp_permutation.cpp` into `DIR`, as
its `old_tests/Makefile` would (-O2) but without the file's own `ntoa`/`itoa`, which the
library now defines too (the library's and those objects are built in the checkout, where
its Makefiles put them). htsim's defaults are the benchmark: 128 hosts (k = 8), 10 Gb/s,
1 us links, 9000 B packets, 100-packet queues, ECN at 15 packets, 210 ms; it picks its
permutation and paths from the clock, so its runs differ a little. Its log goes to `DIR`.

Why here and not against a figure from another day: this machine's speed drifts by up to 2x
within minutes, so a ratio is only meaningful between runs made side by side. Prints each
round and, at the end, the median of the per-round ratios and the ratio of the fastest runs.
Standard library only.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCENARIO = HERE / "htsim_dctcp_permutation.toml"
# The objects main_dctcp_permutation links with (datacenter/old_tests/Makefile).
TOPOLOGY_OBJECTS = [
    "firstfit.o",
    "vl2_topology.o",
    "fat_tree_topology.o",
    "fat_tree_switch.o",
    "bcube_topology.o",
    "connection_matrix.o",
    "oversubscribed_fat_tree_topology.o",
    "shortflows.o",
    "star_topology.o",
    "multihomed_fat_tree_topology.o",
]


def build(sim: Path, out: Path) -> Path:
    """Builds htsim's DCTCP permutation into `out` (once) and returns the binary."""
    binary = out / "htsim_dctcp_permutation"
    if binary.exists():
        return binary
    print("building htsim (a few minutes) ...", flush=True)
    quiet(["make", "-j2", "libhtsim.a"], sim)
    quiet(["make", "-j2", *TOPOLOGY_OBJECTS], sim / "datacenter")
    source = (sim / "datacenter/old_tests/main_dctcp_permutation.cpp").read_text()
    # The file ends with its own ntoa/itoa, which config.cpp now defines as well.
    cut = source.find("string ntoa(double n) {")
    if cut < 0:
        sys.exit("htsim_compare: main_dctcp_permutation.cpp has changed; update the build step")
    main = out / "main_dctcp_permutation.cpp"
    main.write_text(source[:cut])
    objects = [str(sim / "datacenter" / o) for o in TOPOLOGY_OBJECTS]
    include = [f"-I{sim}", f"-I{sim / 'datacenter'}"]
    command = ["g++", "-std=c++11", "-O2", *include, str(main), *objects]
    quiet([*command, f"-L{sim}", "-lhtsim", "-o", str(binary)], out)
    return binary


def quiet(command: list[str], cwd: Path) -> None:
    """Runs a build step, showing its output only when it fails."""
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"htsim_compare: `{' '.join(command)}` failed:\n{done.stdout}{done.stderr}")


def cpu_seconds(command: list[str], cwd: Path) -> tuple[float, bytes]:
    """Runs `command`; returns its CPU time (user + system) and its standard output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(command, cwd=cwd, stdout=subprocess.PIPE)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"htsim_compare: {command[0]} exited with {done.returncode}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--htsim", type=Path, required=True, help="csg-htsim's sim/ directory")
    parser.add_argument("--out", type=Path, required=True, help="where the build and logs go")
    parser.add_argument("--bench", default="target/release/incast-bench", help="incast-bench")
    parser.add_argument("--cli", default="incast", help='the incast CLI ("" to leave it out)')
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    source = args.htsim / "datacenter/old_tests/main_dctcp_permutation.cpp"
    if not source.is_file():
        sys.exit(
            f"htsim_compare: --htsim {args.htsim}: no {source.relative_to(args.htsim)} in it; "
            "give the sim/ directory of a csg-htsim checkout"
        )
    if shutil.which(args.bench) is None:
        sys.exit(
            f"htsim_compare: --bench {args.bench}: no such program; build it first "
            "(cargo build --release -p incast-bench) or give its path"
        )
    cli = shutil.which(args.cli) if args.cli else None
    if args.cli and cli is None:
        sys.exit(
            f"htsim_compare: --cli {args.cli}: no such program; install incast "
            "(pip install .) or give its path, or --cli '' to leave it out"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    htsim = build(args.htsim.resolve(), args.out.resolve())
    bench = str(Path(args.bench).resolve())
    cpu: dict[str, list[float]] = {"htsim": [], "incast-bench": [], "incast run": []}
    for round_ in range(1, args.rounds + 1):
        started = time.monotonic()
        h, _ = cpu_seconds([str(htsim), "-o", "htsim_log.dat"], args.out)
        cpu["htsim"].append(h)
        # The whole process for both: reading, building, running, results.
        i, output = cpu_seconds([bench, "--one", str(SCENARIO)], args.out)
        if json.loads(output)["events"] == 0:
            sys.exit("htsim_compare: incast ran no events")
        cpu["incast-bench"].append(i)
        line = f"round {round_}: htsim {h:.2f} s, incast-bench {i:.2f} s (ratio {h / i:.2f})"
        if cli is not None:
            run_dir = args.out / "incast_run"
            shutil.rmtree(run_dir, ignore_errors=True)
            c, _ = cpu_seconds([cli, "run", str(SCENARIO), "--out", str(run_dir), "-q"], args.out)
            cpu["incast run"].append(c)
            line += f", incast run {c:.2f} s (ratio {h / c:.2f})"
        print(f"{line} ({time.monotonic() - started:.0f} s)")
    for name in ("incast-bench", "incast run"):
        if cpu[name]:
            print(summary(name, cpu["htsim"], cpu[name]))


def summary(name: str, htsim: list[float], incast: list[float]) -> str:
    """htsim's CPU over `name`'s: the median of the rounds' ratios, their range,
    and the ratio of the fastest runs."""
    ratios = [h / i for h, i in zip(htsim, incast)]
    return (
        f"{name}: median ratio {statistics.median(ratios):.2f} (from {min(ratios):.2f} to "
        f"{max(ratios):.2f}); fastest runs: htsim {min(htsim):.2f} s, {name} "
        f"{min(incast):.2f} s, ratio {min(htsim) / min(incast):.2f}"
    )


if __name__ == "__main__":
    main()
