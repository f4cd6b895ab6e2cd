"""Type stubs of `incast._core`, the PyO3 binding of the Rust core
(crates/incast-py/src/lib.rs). tests/test_core_stubs.py checks that every name,
parameter and default here matches the compiled module, so the two cannot
drift apart silently; mypy's stubtest agrees (`python -m mypy.stubtest
incast._core`)."""

import os
from typing import Any, final

__all__ = [
    "__version__",
    "ScenarioError",
    "RESULT_TABLES",
    "FLOW_KINDS",
    "validate",
    "schema",
    "bundled_cdfs",
    "bundled_cdf_stats",
    "Simulation",
    "HpccRun",
    "import_hpcc",
]

_Path = str | os.PathLike[str]

#: The core's version (the incast-py crate's).
__version__: str

#: The names of a run's result tables, in the core's order (`Results::table_names()`);
#: `incast.results.TABLES` is made from it. Every table comes with its typed columns,
#: rows or not.
RESULT_TABLES: list[str]

#: The flow table's `kind` codes and their names, one per generator kind that
#: starts flows (the core's `generators!` registry); `incast.results.FLOW_KINDS`
#: holds the same.
FLOW_KINDS: dict[int, str]

class ScenarioError(ValueError):
    """A scenario could not be parsed or failed validation.

    The message is `<path> (line N): <problem>`; `path`, `line` (None for JSON
    input and keys not written in the text) and `detail` hold the parts."""

    path: str
    line: int | None
    detail: str

def validate(text: str, fmt: str, base_dir: str) -> str:
    """Parse and validate a scenario (`fmt`: "toml" or "json"); return its
    normalized JSON. Raises `ScenarioError` when invalid."""

def schema() -> str:
    """The JSON Schema of a scenario file, as a JSON string."""

def bundled_cdfs() -> list[str]:
    """Names of the flow-size CDFs built into the core (e.g. "websearch")."""

def bundled_cdf_stats(below: int = 100000) -> list[tuple[str, float, int, float]]:
    """Each bundled CDF as (name, mean bytes, median bytes, share of flows of at
    most `below` bytes), in the order of `bundled_cdfs`."""

def import_hpcc(
    config: _Path,
    topology: _Path | None = None,
    flows: _Path | None = None,
    flow_file: str | None = None,
    headroom: str | None = None,
    acks: str | None = None,
    ecmp: str | None = None,
    clock: str | None = None,
) -> tuple[str, str]:
    """Convert an HPCC simulator experiment; return `(toml_text, csv_text)`.
    `headroom`: "hpcc" or "formula"; `acks`: "hpcc" or "high_priority";
    `ecmp`: "flow" or "hpcc"."""

@final
class Simulation:
    """A running simulation: `advance` until it returns True, then `finish` once."""

    def __new__(
        cls,
        text: str,
        fmt: str,
        base_dir: str,
        seed: int | None = None,
        threads: int | None = None,
    ) -> Simulation:
        """`threads`: run on that many threads in the background, in node order
        (`[timing] ties = "node"`): the same results for every count; a scenario
        the threads cannot run yet raises ValueError naming what."""
    @property
    def name(self) -> str:
        """The scenario's name."""
    @property
    def seed(self) -> int:
        """The seed in use (the scenario's, or the override)."""
    @property
    def consumed(self) -> bool:
        """Whether `finish()` has been called."""
    def advance(self, max_events: int) -> bool:
        """Process up to `max_events` events with the GIL released; True when finished."""
    def progress(self) -> dict[str, Any]:
        """now_ps, horizon_ps, fraction, active_flows, finished_flows."""
    def finish(self) -> dict[str, Any]:
        """Consume the simulation; return its tables (each `{column: (dtype,
        bytes)}`), "node_names", "summary" (JSON text) and "stats"."""

@final
class HpccRun:
    """A running simulation of an HPCC simulator experiment, driven like a
    `Simulation`; `finish()` adds "hpcc_fct" and "hpcc_pfc" (the texts of
    fct.txt and pfc.txt)."""

    def __new__(
        cls,
        config: _Path,
        topology: _Path | None = None,
        flows: _Path | None = None,
        seed: int | None = None,
        headroom: str | None = None,
        acks: str | None = None,
        ecmp: str | None = None,
        clock: str | None = None,
    ) -> HpccRun: ...
    @property
    def name(self) -> str:
        """The experiment's name (the configuration file's stem)."""
    @property
    def seed(self) -> int:
        """The seed in use."""
    @property
    def consumed(self) -> bool:
        """Whether `finish()` has been called."""
    @property
    def n_flows(self) -> int:
        """Number of flows in the flow file."""
    def scenario_toml(self) -> str:
        """The imported scenario as TOML."""
    def flows_csv(self) -> str:
        """The flows CSV of the imported scenario."""
    def advance(self, max_events: int) -> bool:
        """Process up to `max_events` events with the GIL released; True when finished."""
    def progress(self) -> dict[str, Any]:
        """now_ps, horizon_ps, fraction, active_flows, finished_flows."""
    def finish(self) -> dict[str, Any]:
        """The results dict of `Simulation.finish()` plus "hpcc_fct" and "hpcc_pfc"."""
