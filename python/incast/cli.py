"""The `incast` command line: run, sweep, compare, validate, schema, cdfs, import-hpcc.

Only click is imported at start-up (`incast --help` stays fast); the core,
pandas, pyarrow, matplotlib and rich load inside the commands that need them.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import Any, NoReturn

import click

from ._input import from_path
from .filekind import file_kind, is_experiment, parse_text

EXIT_BAD_SCENARIO = 2
EXIT_INTERRUPTED = 130


#: The longest user value (a name, a key) the CLI prints whole.
LONGEST_SHOWN = 80


def _shown(text: object, limit: int | None = LONGEST_SHOWN, newlines: bool = False) -> str:
    """User text made safe to print: cut to `limit` characters (an ellipsis
    ends a cut value; `None`: no cut) and every control character written as
    its escape (`\\x1b`), line breaks too unless `newlines`."""
    from .keypath import printable, shorten

    return printable(str(text) if limit is None else shorten(str(text), limit), newlines)


def _fail(msg: str, code: int = EXIT_BAD_SCENARIO) -> NoReturn:
    """Print `error: msg` (control characters escaped) and exit with `code`."""
    click.echo(f"error: {_shown(msg, None, newlines=True)}", err=True)
    sys.exit(code)


def _is_panic(error: BaseException) -> bool:
    return type(error).__name__ == "PanicException"


def _core_module() -> Any:
    from . import _core

    return _core


def _scenario_error() -> type:
    return _core_module().ScenarioError


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("incast")
    except Exception:  # not installed as a distribution (a source checkout)
        return str(_core_module().__version__)


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
@click.version_option(package_name="incast", prog_name="incast", version=None)
def cli() -> None:
    """incast: packet-level data-center network simulator."""


def _hpcc_file_options(lead: str):
    """--topology and --flows: override the files an HPCC config names."""

    def add(command):
        # Applied bottom-up: --topology is listed first in the help.
        for name, what, key in (
            ("--flows", "flow", "FLOW_FILE"),
            ("--topology", "topology", "TOPOLOGY_FILE"),
        ):
            command = click.option(
                name,
                type=click.Path(exists=True, dir_okay=False),
                default=None,
                help=f"{lead} {what} file to use instead of the config's {key}.",
            )(command)
        return click.option(
            "--import-option",
            "import_options",
            multiple=True,
            metavar="KEY=VALUE",
            help="An HPCC import choice, e.g. --import-option clock=exact --import-option "
            f"ecmp=hpcc (keys: {', '.join(IMPORT_OPTION_KEYS)}; docs/hpcc-interop.md, "
            '"Import options"; repeat for several).',
        )(command)

    return add


#: The HPCC import's options (`incast.hpcc.hpcc_simulation`'s keywords).
IMPORT_OPTION_KEYS = ("headroom", "acks", "ecmp", "clock")


def _parse_import_options(pairs: tuple[str, ...]) -> dict[str, str]:
    """`--import-option KEY=VALUE` pairs as keywords; the core checks the values."""
    options: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not value:
            raise click.BadParameter(
                f"`{_shown(pair)}` is not KEY=VALUE (e.g. ecmp=hpcc)", param_hint="--import-option"
            )
        if key not in IMPORT_OPTION_KEYS:
            raise click.BadParameter(
                f"unknown import option `{_shown(key)}`; "
                f"use one of: {', '.join(IMPORT_OPTION_KEYS)}",
                param_hint="--import-option",
            )
        options[key] = value
    return options


@cli.command()
@click.argument("files", nargs=-1, type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--hpcc",
    "hpcc_config",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Run an HPCC simulator config.txt instead of scenario FILES; also writes "
    "fct.txt and pfc.txt in HPCC's formats (see docs/hpcc-interop.md).",
)
@_hpcc_file_options("With --hpcc: the")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(),
    default=None,
    help="Output directory (with several FILES: one subdirectory per scenario) "
    "[default: ./incast-out/<scenario name>/seed<N>[_<overrides>]].",
)
@click.option(
    "--seed",
    type=click.IntRange(min=0, max=2**64 - 1),
    default=None,
    help="Override the scenario's seed.",
)
@click.option(
    "--set",
    "assignments",
    multiple=True,
    metavar="KEY.PATH=VALUE",
    help="Override a scenario value, e.g. --set switch.buffer=2MB --set transport.cc=newreno "
    "(the value is read as TOML; repeat for several).",
)
@click.option(
    "--force", is_flag=True, help="Replace the contents of a non-empty --out (an earlier output)."
)
@click.option("--no-plots", is_flag=True, help="Do not write the PNG plots.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar, no summary; errors only.")
@click.option(
    "--threads",
    type=click.IntRange(min=1),
    default=None,
    help='Run each scenario on N threads, in node order ([timing] ties = "node", written '
    "to its scenario.json): the same results for every N.",
)
def run(
    files: tuple[str, ...],
    hpcc_config: str | None,
    topology: str | None,
    flows: str | None,
    import_options: tuple[str, ...],
    out_dir: str | None,
    seed: int | None,
    assignments: tuple[str, ...],
    force: bool,
    no_plots: bool,
    quiet: bool,
    threads: int | None,
) -> None:
    """Run the scenario FILES (.toml or .json), or an HPCC simulator experiment
    with --hpcc CONFIG; write Parquet tables, summary.json, plots and
    report.html, and print a summary."""
    from rich.console import Console

    if bool(files) == (hpcc_config is not None):
        raise click.UsageError("give scenario FILES or --hpcc CONFIG (exactly one of the two)")
    if hpcc_config is None and (topology or flows or import_options):
        raise click.UsageError("--topology, --flows and --import-option go with --hpcc")
    if hpcc_config is not None and assignments:
        raise click.UsageError("--set applies to scenario files, not to --hpcc configs")
    if hpcc_config is not None and threads is not None:
        raise click.UsageError("--threads applies to scenario files, not to --hpcc configs")
    overrides = _parse_sets(assignments)
    if threads is not None:
        # Node order: what makes the results independent of the thread count.
        overrides.append(("timing.ties", "node"))
    console = Console(stderr=True, quiet=quiet)
    out_console = Console(quiet=quiet)
    jobs = (
        [_prepare_hpcc(hpcc_config, topology, flows, seed, _parse_import_options(import_options))]
        if hpcc_config
        else [_prepare_scenario(f, seed, overrides) for f in files]
    )
    for job in jobs:
        job["threads"] = threads
    # Every output directory is checked (and created) before anything runs.
    from .outdir import OutDirError, Staging

    stagings = []
    try:
        for job in jobs:
            job["out"] = _out_for(job, out_dir, len(jobs) > 1, overrides)
        outs = [j["out"] for j in jobs]
        if len(set(outs)) != len(outs):
            _fail("two scenarios would write to the same directory: give them distinct names")
        for job in jobs:
            stagings.append(Staging(job["out"], force or job.get("same_scenario", False)))
    except BaseException as e:  # an unusable directory, or Ctrl-C: leave nothing behind
        for st in stagings:
            st.abandon()
        if isinstance(e, OutDirError):
            _fail(str(e))
        raise
    for i, (job, staging) in enumerate(zip(jobs, stagings)):
        try:
            _run_one(job, staging, console, out_console, no_plots, quiet)
        except BaseException:  # stopped: the directories of the runs not yet made go too
            for st in reversed(stagings[i:]):
                st.abandon()
            raise


def _parse_sets(assignments: tuple[str, ...]) -> list[tuple[str, Any]]:
    from .keypath import KeyPathError, parse_assignment

    try:
        return [parse_assignment(a) for a in assignments]
    except KeyPathError as e:
        raise click.BadParameter(str(e), param_hint="--set") from None


def _prepare_scenario(file: str, seed: int | None, overrides: list) -> dict:
    """Read and validate one scenario (with --set applied); nothing runs yet."""
    ScenarioError = _scenario_error()
    core = _core_module()
    if is_experiment(file) and file_kind(file) == "experiment":
        _fail(
            f"{file} is an experiment file (it has a top-level `base`), not a scenario: run it "
            f"with `incast sweep {file}` (`incast run` takes scenario files)"
        )
    src = _load(file)
    text, fmt = src.text, src.fmt
    if overrides:
        text, fmt = _with_overrides(file, src, overrides), "json"
    try:
        normalized = json.loads(core.validate(text, fmt, src.base_dir))
    except ScenarioError as e:
        _fail(f"invalid scenario {file}: {e}")
    if seed is not None:
        normalized["seed"] = seed
    return {
        "file": file,
        "text": text,
        "fmt": fmt,
        "base_dir": src.base_dir,
        "seed": seed,
        "name": str(normalized.get("name") or Path(file).stem),
        "scenario": normalized,
    }


def _with_overrides(file: str, src: Any, overrides: list) -> str:
    """The scenario of `src` with every --set applied, as JSON text."""
    from .keypath import KeyPathError, set_value, value_problem

    try:
        data = parse_text(src.text, src.fmt)
    except ValueError as e:  # malformed: the core says where, naming the key and line
        try:
            _core_module().validate(src.text, src.fmt, src.base_dir)
        except _scenario_error() as core_error:
            _fail(f"invalid scenario {file}: {core_error}")
        _fail(f"--set on {file}: the file cannot be read to apply --set ({e})")
    try:
        for path, value in overrides:
            set_value(data, path, value)
    except KeyPathError as e:
        _fail(f"--set on {file}: {e}")
    problem = value_problem(data)
    if problem:  # a NaN or a huge integer that was in the file: JSON cannot carry it
        _fail(f"invalid scenario {file}: {problem}")
    return json.dumps(data)


def _prepare_hpcc(
    config: str, topology: str | None, flows: str | None, seed: int | None, options: dict
) -> dict:
    return {
        "hpcc": config,
        "topology": topology,
        "flows": flows,
        "seed": seed,
        "options": options,
        "name": Path(config).stem,
        "scenario": None,
    }


def _out_for(job: dict, out_dir: str | None, several: bool, overrides: list) -> Path:
    """The output directory of one run. Default: incast-out/<name>/seed<N>[_<sets>],
    reused only by the same resolved scenario (which gives the same results)."""
    name = _safe_dirname(job["name"])
    if out_dir is not None:
        return Path(out_dir) / name if several else Path(out_dir)
    scenario = job.get("scenario")
    if job.get("hpcc"):  # the seed is the config's unless --seed says otherwise
        key = "hpcc" if job["seed"] is None else f"hpcc_seed{job['seed']}"
        key += "".join(f"_{k}-{_safe_dirname(v)}" for k, v in sorted(job["options"].items()))
    else:
        seed = job["seed"] if job["seed"] is not None else scenario.get("seed", 1)
        key = f"seed{seed}"
    if overrides:
        from .experiment import safe_name, value_label

        sets = ",".join(f"{p}={value_label(v)}" for p, v in overrides)
        key += "_" + safe_name(sets)[:60]
    out = Path("incast-out") / name / key
    if scenario is not None and (out / "scenario.json").is_file():
        try:
            previous = json.loads((out / "scenario.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            previous = None
        if previous == scenario:
            job["same_scenario"] = True  # the same inputs: the results are the same
        else:
            _fail(
                f"{out} holds the results of a different scenario named {job['name']!r}: "
                "pass --out DIR, or --force to replace them"
            )
    elif out.exists() and any(out.iterdir()):
        job["same_scenario"] = (out / ".incast-output").exists()
    return out


def _run_one(
    job: dict, staging: Any, console: Any, out_console: Any, no_plots: bool, quiet: bool
) -> None:
    from ._runner import run_to_results

    ScenarioError = _scenario_error()
    sim = None
    out = job["out"]
    try:
        started = time.perf_counter()
        if job.get("hpcc"):
            from .hpcc import hpcc_simulation

            try:
                sim = hpcc_simulation(
                    job["hpcc"],
                    topology=job["topology"],
                    flows=job["flows"],
                    seed=job["seed"],
                    **job["options"],
                )
            except ScenarioError as e:
                staging.abandon()
                _fail(f"invalid HPCC experiment {job['hpcc']}: {e}")
        else:
            try:
                sim = _core_module().Simulation(
                    job["text"], job["fmt"], job["base_dir"], job["seed"], job.get("threads")
                )
            except ValueError as e:
                if isinstance(e, ScenarioError):
                    raise
                staging.abandon()
                _fail(f"{job['name']}: {e}")
        results = run_to_results(sim, started, progress_console=None if quiet else console)
        stage = staging.partial
        results.to_parquet(stage)
        if job.get("scenario") is not None:
            (stage / "scenario.json").write_text(
                json.dumps(job["scenario"], sort_keys=True, indent=2) + "\n", encoding="utf-8"
            )
        if job.get("hpcc"):
            from .hpcc import write_hpcc_outputs

            write_hpcc_outputs(results.texts, stage)
        notes: list = []
        plots = []
        if not no_plots:
            from .plots import plot_all

            plots = plot_all(results, stage, notes)
        from .html import write_run_report

        write_run_report(results, stage, [p.name for p in plots])
        written = staging.commit()
    except KeyboardInterrupt:
        staging.abandon()
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
        staging.abandon()
        if not _is_panic(e):
            raise
        _fail(
            f"the simulator core crashed (this is a bug in incast, please report it "
            f"with the scenario file): {e}",
            code=1,
        )

    from .fmt import glue
    from .report import print_line, print_paths, print_summary

    print_summary(results, out_console)
    for note in notes:
        print_line(out_console, note, prefix="note:", prefix_style="yellow")
    print_line(out_console, f"{len(written)} files to {glue(out)}/", "wrote", "bold")
    print_paths(out_console, written)


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def validate(file: str) -> None:
    """Check the scenario (or experiment) FILE without running it."""
    if is_experiment(file):
        from .experiment import describe_runs

        exp = _load_experiment(file, [], None)
        click.echo(f"ok: experiment {exp.name}: {describe_runs(exp)}, all valid")
        return
    src = _load(file)
    try:
        normalized = json.loads(_core_module().validate(src.text, src.fmt, src.base_dir))
    except _scenario_error() as e:
        _fail(f"invalid scenario {file}: {e}")
    click.echo(f"ok: {_shown(normalized.get('name', '?'))} ({_describe(normalized)})")


def _load_experiment(file: str, overrides: list, seeds: list | None) -> Any:
    from .experiment import ExperimentError, load_experiment

    if not is_experiment(file) and file_kind(file) == "scenario":
        _fail(
            f"{file} is a scenario file (it has [topology] and no `base`), not an experiment: run "
            f"it with `incast run {file}`, or sweep it from an experiment file whose "
            f'base = "{Path(file).name}"'
        )

    try:
        return load_experiment(file, overrides=overrides, seeds=seeds)
    except ExperimentError as e:
        _fail(f"invalid experiment {e}")


def _describe(scenario: dict) -> str:
    """A short, defensive one-line description of a normalized scenario."""
    parts = [f"seed {scenario.get('seed', '?')}"]
    topo = scenario.get("topology")
    if isinstance(topo, dict):
        kind = topo.get("kind", "?")
        hosts = topo.get("hosts")
        parts.append(f"{kind} topology" + (f", {hosts} hosts" if isinstance(hosts, int) else ""))
    work = scenario.get("workload")
    if isinstance(work, dict):
        for key, items in work.items():
            if isinstance(items, list) and items:
                parts.append(f"{len(items)} {key}")
    if scenario.get("duration") is not None:
        parts.append(f"duration {scenario['duration']}")
    return ", ".join(parts)


@cli.command()
@click.option(
    "--out", "out_file", type=click.Path(dir_okay=False), default=None, help="Write to FILE."
)
@click.option(
    "--experiment", is_flag=True, help="The schema of experiment files (incast sweep) instead."
)
def schema(out_file: str | None, experiment: bool) -> None:
    """Print the JSON Schema of scenario files (or of experiment files)."""
    if experiment:
        from .experiment import experiment_schema

        text = json.dumps(experiment_schema(), indent=2) + "\n"
    else:
        text = json.dumps(json.loads(_core_module().schema()), indent=2) + "\n"
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
def import_hpcc(
    config: str,
    out_file: str | None,
    topology: str | None,
    flows: str | None,
    import_options: tuple[str, ...],
) -> None:
    """Convert an HPCC simulator experiment (CONFIG, with its topology and flow
    files) into an incast scenario file and a flows CSV."""
    from .hpcc import import_hpcc as convert

    out = Path(out_file) if out_file else Path(f"{Path(config).stem}.toml")
    try:
        toml_path, csv_path = convert(
            config, out, topology=topology, flows=flows, **_parse_import_options(import_options)
        )
    except _scenario_error() as e:
        _fail(f"cannot convert {config}: {e}")
    except OSError as e:
        _fail(f"cannot write {out}: {e.strerror or e}")
    click.echo(f"wrote {toml_path} and {csv_path}")


@cli.command()
def cdfs() -> None:
    """List the flow-size distributions built into the simulator: mean,
    median, share of mice (flows of at most 100 KB) and source."""
    stats = getattr(_core_module(), "bundled_cdf_stats", None)
    if stats is None:
        _fail("this build of the core has no bundled CDF statistics: reinstall incast", code=1)
    from .cdf_table import MICE_BYTES, cdf_table_lines

    for line in cdf_table_lines(stats(MICE_BYTES)):
        click.echo(line)


@cli.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--out",
    "out_dir",
    type=click.Path(),
    default=None,
    help="Output directory [default: ./incast-out/<experiment name>]; a rerun into the "
    "same directory skips the runs already finished.",
)
@click.option(
    "-j",
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Simulations at once, one per process [default: the number of cores].",
)
@click.option(
    "--ray",
    "ray_address",
    default=None,
    metavar="ADDRESS|auto|local",
    help="Run on a Ray cluster (ADDRESS, or auto for the running one, or local to start "
    "one here); needs pip install 'incast[ray]'.",
)
@click.option(
    "--set",
    "assignments",
    multiple=True,
    metavar="KEY.PATH=VALUE",
    help="Override a value in every run (after its variant), e.g. --set duration=1ms.",
)
@click.option(
    "--seeds",
    default=None,
    metavar="LIST",
    help="Replace the experiment's seeds, e.g. --seeds 1,2,3 or --seeds 1-5.",
)
@click.option(
    "--force",
    is_flag=True,
    help="Start afresh: delete what an earlier incast run or sweep wrote to --out.",
)
@click.option(
    "--only",
    "only",
    multiple=True,
    metavar="GLOB",
    help="Run only the runs whose label (point/variant/seedN) matches, e.g. "
    "--only 'long12_*' (repeat for several); the combined outputs cover the finished runs.",
)
@click.option(
    "--rerun-stale",
    is_flag=True,
    help="Run again the finished runs that another build of the simulator core made "
    "(run.json's core_build differs from this one's); without it they are kept, with a warning.",
)
@click.option("--dry-run", is_flag=True, help="Validate every run and list them; run nothing.")
@click.option("--no-plots", is_flag=True, help="Do not draw the sweep's plots.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar; errors only.")
def sweep(
    file: str,
    out_dir: str | None,
    jobs: int | None,
    ray_address: str | None,
    assignments: tuple[str, ...],
    seeds: str | None,
    force: bool,
    only: tuple[str, ...],
    rerun_stale: bool,
    dry_run: bool,
    no_plots: bool,
    quiet: bool,
) -> None:
    """Run every point of the experiment FILE (parameters x variants x seeds) in
    parallel, then write the combined tables, comparisons, plots and report.html.
    Every run is validated before any starts."""
    from rich.console import Console

    if ray_address:  # before anything is validated or created
        from .sweep import require_ray

        try:
            require_ray()
        except RuntimeError as e:
            _fail(str(e), code=1)
    overrides = _parse_sets(assignments)
    exp = _load_experiment(file, overrides, _parse_seeds(seeds))
    if only:
        from .sweep import select

        if not select(exp.runs, only):
            _fail(f"--only {' '.join(only)} matches none of the {len(exp.runs)} runs")
    console = Console(stderr=True, quiet=quiet)
    if out_dir:
        out = Path(out_dir)
    else:
        from .experiment import bounded_name

        out = Path("incast-out") / bounded_name(_safe_dirname(exp.name))
    if dry_run:
        from .experiment import describe_runs
        from .rundir import run_damage, run_dir, stale_runs

        stale = {r.index for r in stale_runs(out, exp.runs)}
        for r in exp.runs:
            damage = run_damage(out, r)  # None: finished, or not there yet
            state = "damaged" if damage else "done" if run_dir(out, r).exists() else "todo"
            why = f"  ({damage}: a sweep runs it again)" if damage else ""
            if not damage and r.index in stale:
                state = "stale"
                why = "  (made by another build of the core: --rerun-stale runs it again)"
            click.echo(f"{state:<7}  {r.label:<50} {run_dir(out, r)}{why}")
        click.echo(f"{describe_runs(exp)}, all valid")
        return
    from .outdir import MARKER, OutDirError, check, holds_a_run

    try:
        if not force and holds_a_run(out):
            raise OutDirError(
                f"{out} holds the results of an `incast run`, not of a sweep: pass --force to "
                "replace them, or choose another --out"
            )
        resumable = out.is_dir() and (out / MARKER).exists()
        check(out, force=force or resumable)
    except OutDirError as e:
        _fail(str(e))
    from .sweep import sweep as run_sweep

    try:
        outcome = run_sweep(
            exp,
            out,
            jobs=jobs,
            ray_address=ray_address,
            progress=not quiet,
            console=console,
            plots=not no_plots,
            only=only or None,
            fresh=force,
            rerun_stale=rerun_stale,
        )
    except KeyboardInterrupt:
        from .rundir import is_finished

        done = sum(is_finished(out, r) for r in exp.runs)
        click.echo(
            f"\ninterrupted: {done} of {len(exp.runs)} runs are finished in {out}/ "
            "(rerun the same command to do the rest).",
            err=True,
        )
        sys.exit(EXIT_INTERRUPTED)
    except OutDirError as e:
        _fail(str(e))
    except RuntimeError as e:
        _fail(str(e), code=1)
    out_console = Console(quiet=quiet)
    redone = {r.index for r in outcome.finished} | set(outcome.failed)
    for idx, why in sorted(outcome.damaged.items()):
        then = "removed and run again" if idx in redone else "removed (rerun to redo it)"
        click.echo(f"damaged run {_shown(exp.runs[idx].label)}: {why}; {then}", err=True)
    if outcome.stale and not rerun_stale:
        click.echo(
            f"warning: {len(outcome.stale)} of the finished runs kept in {_shown(out, None)}/ "
            "were made by another build of the simulator core (their run.json's core_build "
            "differs from this build's), so their results may differ from what this build "
            "gives: pass --rerun-stale to run them again, or --force to start afresh.",
            err=True,
        )
    from rich.markup import escape

    out_console.print(
        f"[bold]{escape(_shown(exp.name))}[/bold]: {len(outcome.finished)} runs done, "
        f"{len(outcome.skipped)} already finished, {len(outcome.failed)} failed "
        f"in {outcome.wall_seconds:.1f} s"
    )
    for idx, msg in sorted(outcome.failed.items()):
        why = escape(_shown(msg, None, newlines=True))
        label = escape(_shown(exp.runs[idx].label))
        out_console.print(f"[red]failed[/red] {label}: {why}", highlight=False)
    if (out / "comparisons.md").is_file():
        if not quiet:
            click.echo((out / "comparisons.md").read_text(encoding="utf-8"))
    wrote = f"{escape(_shown(out, None))}/ (points.parquet, flows/, report.html, ...)"
    out_console.print(f"[bold]wrote[/bold] {wrote}")
    if outcome.failed:
        sys.exit(1)


def _parse_seeds(text: str | None) -> list[int] | None:
    if text is None:
        return None
    from .experiment import MAX_RUNS, MAX_SEED

    ranges: list[range] = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = part.split("-", 1)
                ranges.append(range(int(lo), int(hi) + 1))
            elif part:
                ranges.append(range(int(part), int(part) + 1))
    except ValueError:
        raise click.BadParameter(f"{text!r}: write 1,2,3 or 1-5", param_hint="--seeds") from None
    count = sum(max(0, r.stop - r.start) for r in ranges)  # before any list is made
    if count > MAX_RUNS:
        raise click.BadParameter(
            f"{text!r} gives {count:,} seeds, more than the {MAX_RUNS:,} runs one experiment "
            "may have: give fewer",
            param_hint="--seeds",
        )
    seeds = [s for r in ranges for s in r]
    if not seeds or any(s < 0 for s in seeds):
        raise click.BadParameter(f"{text!r}: no seeds", param_hint="--seeds")
    if max(seeds) > MAX_SEED:
        raise click.BadParameter(
            f"{max(seeds)} is more than the largest seed, {MAX_SEED}", param_hint="--seeds"
        )
    return seeds


@cli.command()
@click.argument("dir_a", type=click.Path(exists=True, file_okay=False))
@click.argument("dir_b", type=click.Path(exists=True, file_okay=False))
@click.option(
    "--out",
    "--plot",
    "plot_path",
    type=click.Path(),
    default=None,
    help="Where to draw the chart of the largest changes: a PNG file, or a directory to put "
    "compare_<A>_vs_<B>.png in [default: compare_<A>_vs_<B>.png in the current directory]. "
    "Nothing is written into DIR_A or DIR_B.",
)
@click.option("--no-plot", is_flag=True, help="Print the comparison only; draw no chart.")
@click.option("--all", "show_all", is_flag=True, help="List unchanged metrics too.")
def compare(dir_a: str, dir_b: str, plot_path: str | None, no_plot: bool, show_all: bool) -> None:
    """Compare the summary metrics of two run directories (A -> B): print every
    metric that differs, grouped by section (the summary's top-level keys) and
    sorted by relative change, changes from 0 first; the warnings only one run
    has; and draw the largest changes (see --out)."""
    from rich.console import Console

    from .compare import (
        CompareError,
        compare_dirs,
        default_plot_path,
        plot_comparison,
        print_comparison,
    )
    from .fmt import glue
    from .report import print_line

    a, b = Path(dir_a), Path(dir_b)
    try:
        comparison = compare_dirs(a, b)
    except (OSError, CompareError) as e:
        _fail(str(e))
    console = Console()
    print_comparison(console, comparison, a, b, show_all)
    if no_plot:
        return
    target = Path(plot_path) if plot_path else default_plot_path(a, b)
    if target.is_dir():
        target = target / default_plot_path(a, b).name
    try:
        path = plot_comparison(comparison.metrics, target, a.resolve().name, b.resolve().name)
    except CompareError as e:
        _fail(str(e), code=1)
    if path is not None:
        print_line(console, glue(path), prefix="drew", prefix_style="bold")


def main(argv: list | None = None) -> None:
    """Console-script entry point: Ctrl-C anywhere (also while the libraries
    load) ends with a one-line message and exit code 130, never a traceback."""
    try:
        cli.main(args=argv, prog_name="incast", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("\ninterrupted: stopped.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    except KeyboardInterrupt:
        click.echo("\ninterrupted: stopped.", err=True)
        sys.exit(EXIT_INTERRUPTED)


if __name__ == "__main__":  # pragma: no cover
    main()
