"""The `incast` command line: run, validate, schema, cdfs, import-hpcc."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import click
from rich.console import Console

from . import ScenarioError, __version__, _core
from ._input import from_path
from ._runner import drive, progress_bar

EXIT_BAD_SCENARIO = 2
EXIT_INTERRUPTED = 130


def _fail(msg: str, code: int = EXIT_BAD_SCENARIO) -> NoReturn:
    click.echo(f"error: {msg}", err=True)
    sys.exit(code)


def _is_panic(e: BaseException) -> bool:
    return type(e).__name__ == "PanicException"


def _load(file: str) -> Any:
    try:
        return from_path(file)
    except OSError as e:
        _fail(f"cannot read scenario {file}: {e.strerror or e}")
    except UnicodeDecodeError as e:
        _fail(f"cannot read scenario {file}: not UTF-8 text ({e.reason})")


def _safe_dirname(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._")
    return cleaned or "scenario"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="incast")
def cli() -> None:
    """incast: packet-level data-center network simulator."""


def _hpcc_file_options(lead: str):
    """--topology and --flows: override the files an HPCC config names."""

    def add(f):
        # Applied bottom-up: --topology is listed first in the help.
        for name, what, key in (
            ("--flows", "flow", "FLOW_FILE"),
            ("--topology", "topology", "TOPOLOGY_FILE"),
        ):
            f = click.option(
                name,
                type=click.Path(exists=True, dir_okay=False),
                default=None,
                help=f"{lead} {what} file to use instead of the config's {key}.",
            )(f)
        return f

    return add


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False), required=False)
@click.option(
    "--hpcc",
    "hpcc_config",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Run an HPCC simulator config.txt instead of a scenario FILE; also writes "
    "fct.txt and pfc.txt in HPCC's formats (see docs/hpcc-interop.md).",
)
@_hpcc_file_options("With --hpcc: the")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="Output directory [default: ./incast-out/<scenario name>].",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0, max=2**64 - 1),
    default=None,
    help="Override the scenario's seed.",
)
@click.option("--no-plots", is_flag=True, help="Do not write the PNG plots.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, no summary; errors only.")
def run(
    file: str | None,
    hpcc_config: str | None,
    topology: str | None,
    flows: str | None,
    out_dir: str | None,
    seed: int | None,
    no_plots: bool,
    quiet: bool,
) -> None:
    """Run the scenario FILE (.toml or .json), or an HPCC simulator experiment
    with --hpcc CONFIG; write Parquet tables, summary.json and plots, and print
    a summary."""
    from .results import Results

    if (file is None) == (hpcc_config is None):
        raise click.UsageError("give a scenario FILE or --hpcc CONFIG (exactly one)")
    if hpcc_config is None and (topology or flows):
        raise click.UsageError("--topology and --flows go with --hpcc")
    console = Console(stderr=True, quiet=quiet)
    out_console = Console(quiet=quiet)
    sim = None
    try:
        t0 = time.perf_counter()
        if hpcc_config is not None:
            from .hpcc import hpcc_simulation

            try:
                sim = hpcc_simulation(hpcc_config, topology=topology, flows=flows, seed=seed)
            except ScenarioError as e:
                _fail(f"invalid HPCC experiment {hpcc_config}: {e}")
        else:
            src = _load(file)
            try:
                sim = _core.Simulation(src.text, src.fmt, src.base_dir, seed)
            except ScenarioError as e:
                _fail(f"invalid scenario {file}: {e}")
        if quiet:
            drive(sim)
        else:
            with progress_bar(console, sim.name) as update:
                drive(sim, update)
        raw = sim.finish()
        results = Results(raw, wall_seconds=time.perf_counter() - t0)
        out = Path(out_dir) if out_dir else Path("incast-out") / _safe_dirname(sim.name)
        written = results.to_parquet(out)
        if hpcc_config is not None:
            from .hpcc import write_hpcc_outputs

            written += write_hpcc_outputs(raw, out)
        notes: list = []
        if not no_plots:
            from .plots import plot_all

            written += plot_all(results, out, notes)
    except KeyboardInterrupt:
        where = ""
        if sim is not None:
            try:
                p = sim.progress()
                where = (
                    f" at simulated {p.get('now_ps', 0) / 1e6:.3f} us ({p.get('fraction', 0):.0%})"
                )
            except Exception:  # already finished or busy: no position to report
                pass
        click.echo(f"\ninterrupted{where}: stopped, no results written.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except BaseException as e:
        if not _is_panic(e):
            raise
        _fail(
            f"the simulator core crashed (this is a bug in incast, please report it "
            f"with the scenario file): {e}",
            code=1,
        )

    from .report import print_summary

    print_summary(results, out_console)
    for note in notes:
        out_console.print(f"[yellow]note:[/yellow] {note}")
    out_console.print(f"[bold]wrote[/bold] {len(written)} files to {out}/")
    for path in written:
        out_console.print(f"  {path}", highlight=False)


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def validate(file: str) -> None:
    """Check the scenario FILE without running it."""
    src = _load(file)
    try:
        normalized = json.loads(_core.validate(src.text, src.fmt, src.base_dir))
    except ScenarioError as e:
        _fail(f"invalid scenario {file}: {e}")
    click.echo(f"ok: {normalized.get('name', '?')} ({_describe(normalized)})")


def _describe(s: dict) -> str:
    """A short, defensive one-line description of a normalized scenario."""
    parts = [f"seed {s.get('seed', '?')}"]
    topo = s.get("topology")
    if isinstance(topo, dict):
        kind = topo.get("kind", "?")
        hosts = topo.get("hosts")
        parts.append(f"{kind} topology" + (f", {hosts} hosts" if isinstance(hosts, int) else ""))
    work = s.get("workload")
    if isinstance(work, dict):
        for key, items in work.items():
            if isinstance(items, list) and items:
                parts.append(f"{len(items)} {key}")
    if s.get("duration") is not None:
        parts.append(f"duration {s['duration']}")
    return ", ".join(parts)


@cli.command()
@click.option(
    "--out", "out_file", type=click.Path(dir_okay=False), default=None, help="Write to FILE."
)
def schema(out_file: str | None) -> None:
    """Print the JSON Schema of scenario files."""
    text = json.dumps(json.loads(_core.schema()), indent=2) + "\n"
    if out_file:
        Path(out_file).write_text(text, encoding="utf-8")
        click.echo(f"wrote {out_file}", err=True)
    else:
        click.echo(text, nl=False)


@cli.command("import-hpcc")
@click.argument("config", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--out",
    "out_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="The scenario file to write [default: ./<config stem>.toml]; the flows go to "
    "<stem>_flows.csv next to it.",
)
@_hpcc_file_options("The")
def import_hpcc(config: str, out_file: str | None, topology: str | None, flows: str | None) -> None:
    """Convert an HPCC simulator experiment (CONFIG, with its topology and flow
    files) into an incast scenario file and a flows CSV."""
    from .hpcc import import_hpcc as convert

    out = Path(out_file) if out_file else Path(f"{Path(config).stem}.toml")
    try:
        toml_path, csv_path = convert(config, out, topology=topology, flows=flows)
    except ScenarioError as e:
        _fail(f"cannot convert {config}: {e}")
    except OSError as e:
        _fail(f"cannot write {out}: {e.strerror or e}")
    click.echo(f"wrote {toml_path} and {csv_path}")


@cli.command()
def cdfs() -> None:
    """List the flow-size distributions built into the simulator."""
    from . import bundled_cdfs

    names = bundled_cdfs()
    if not names and not hasattr(_core, "bundled_cdfs"):
        _fail("this build of the core has no bundled CDFs", code=1)
    for name in names:
        click.echo(name)


def main(argv: list | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv, prog_name="incast")


if __name__ == "__main__":  # pragma: no cover
    main()
