"""incast: a deterministic packet-level simulator for data-center networks.

The simulator itself is Rust (`incast._core`); this package reads scenarios,
drives runs, and turns results into pandas DataFrames, Parquet files, plots and
a terminal report.

    >>> import incast
    >>> res = incast.run("scenarios/incast_single_switch.toml", seed=7)
    >>> res.flows[["size_bytes", "fct_us", "slowdown"]].describe()
    >>> res.to_parquet("out/")

Studies over parameters, variants and seeds are experiments (`incast.experiment`,
`incast.sweep`; the `incast sweep` command):

    >>> exp = incast.load_experiment("scenarios/smart_pause/small.toml")
    >>> from incast.sweep import sweep
    >>> sweep(exp, "incast-out/smart_pause_small", jobs=2)

Importing the package is cheap: the core, pandas and pyarrow load on first use.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._input import ScenarioLike, resolve

if TYPE_CHECKING:  # imported lazily at run time: `import incast` stays fast
    from ._core import ScenarioError, Simulation
    from .experiment import Experiment
    from .results import Results

__all__ = [
    "Experiment",
    "Results",
    "ScenarioError",
    "Simulation",
    "__version__",
    "bundled_cdfs",
    "import_hpcc",
    "load_experiment",
    "load_scenario",
    "run",
    "run_hpcc",
    "schema",
    "simulation",
    "validate",
]

_LAZY = {
    # name: (module, attribute)
    "Results": (".results", "Results"),
    "ScenarioError": ("._core", "ScenarioError"),
    "Simulation": ("._core", "Simulation"),
    "__version__": ("._core", "__version__"),
    "Experiment": (".experiment", "Experiment"),
    "load_experiment": (".experiment", "load_experiment"),
    "import_hpcc": (".hpcc", "import_hpcc"),
    "run_hpcc": (".hpcc", "run_hpcc"),
}


def __getattr__(name: str) -> Any:
    """Heavy modules (pandas, pyarrow, the core) load on first use."""
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module, __name__), attr)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'incast' has no attribute {name!r}")


def validate(scenario: ScenarioLike, *, base_dir: str | os.PathLike[str] | None = None) -> dict:
    """Parse and validate a scenario; return its normalized form as a dict.

    Raises `ScenarioError` (a `ValueError`) with the core's message when the
    scenario is invalid.
    """
    from . import _core

    src = resolve(scenario, base_dir)
    return json.loads(_core.validate(src.text, src.fmt, src.base_dir))


def load_scenario(path: str | os.PathLike[str]) -> dict:
    """Read a .toml or .json scenario file; return it validated and normalized
    (every default filled in), ready to modify and pass to `run`.

    Relative paths inside it (e.g. CDF files) resolve against the current
    directory when the dict is run: pass `base_dir=Path(path).parent` to `run`
    if the file refers to files next to it.
    """
    return validate(Path(path))


def schema() -> dict:
    """The JSON Schema of scenario files."""
    from . import _core

    return json.loads(_core.schema())


def bundled_cdfs() -> list[str]:
    """Names of the flow-size distributions built into the core (e.g. "websearch")."""
    from . import _core

    fn = getattr(_core, "bundled_cdfs", None)
    if fn is None:  # a core built before CDFs were bundled
        return []
    return list(fn())


def simulation(
    scenario: ScenarioLike,
    *,
    seed: int | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    threads: int | None = None,
) -> Simulation:
    """Build a low-level `Simulation` (for driving a run step by step; with
    `threads`, it runs by itself on that many threads, `advance` waits)."""
    from . import _core

    src = resolve(scenario, base_dir)
    return _core.Simulation(src.text, src.fmt, src.base_dir, seed, threads)


def run(
    scenario: ScenarioLike,
    *,
    seed: int | None = None,
    progress: bool = False,
    base_dir: str | os.PathLike[str] | None = None,
    threads: int | None = None,
) -> Results:
    """Run a scenario to completion and return its `Results`.

    `scenario` is a path to a .toml or .json file, TOML (or JSON) text, or a
    dict of plain data; `seed` overrides the scenario's seed; `progress` shows
    a progress bar on stderr; `base_dir` is where relative paths inside the
    scenario resolve (default: the file's directory, else the current one).
    `threads` runs it on that many threads in node order (`[timing] ties =
    "node"`, whatever the scenario says): the same results for every count,
    those of the scenario with ties = "node" on one thread; a scenario the
    threads cannot run yet raises ValueError saying what.
    """
    from ._runner import run_to_results

    started = time.perf_counter()
    sim = simulation(scenario, seed=seed, base_dir=base_dir, threads=threads)
    console = None
    if progress:
        from rich.console import Console

        console = Console(stderr=True)
    return run_to_results(sim, started, progress_console=console)
