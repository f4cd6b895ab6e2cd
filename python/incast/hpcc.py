"""Running and converting HPCC simulator experiments (`config.txt`, `topology.txt`,
`flow.txt`), with outputs in HPCC's `fct.txt` and `pfc.txt` formats.

The conversion itself is in the Rust core (`incast_core::hpcc_format`); the key
mapping is documented in `docs/hpcc-interop.md`.

    >>> import incast
    >>> res = incast.run_hpcc("mix/config.txt", out="out/")   # writes out/fct.txt, out/pfc.txt
    >>> toml_path, csv_path = incast.import_hpcc("mix/config.txt", "scenario.toml")
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from . import _core
from ._runner import run_to_results
from .results import Results

#: Names of the HPCC-format output files.
FCT_FILE = "fct.txt"
PFC_FILE = "pfc.txt"


def _opt(path: str | os.PathLike[str] | None) -> str | None:
    return None if path is None else os.fspath(path)


def hpcc_simulation(
    config: str | os.PathLike[str],
    *,
    topology: str | os.PathLike[str] | None = None,
    flows: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    headroom: str | None = None,
    acks: str | None = None,
    ecmp: str | None = None,
    clock: str | None = None,
) -> Any:
    """Build the low-level `incast._core.HpccRun` for an HPCC configuration file.

    `topology` and `flows` override the files the configuration names (by default
    resolved against the configuration's directory). `headroom` ("hpcc", the
    default, or "formula") and `acks` ("hpcc", the default, or "high_priority")
    choose between what the HPCC simulator does and the alternative; `ecmp`
    ("flow", the default: incast's seeded flow hash, or "hpcc": the HPCC
    simulator's ECMP rule, so that every flow takes its path there) chooses how
    switches pick among equal-cost next hops; `clock` ("exact", the default, or
    "ns3": transmission and pacing times truncated to whole nanoseconds, as
    ns-3 and so the HPCC simulator compute them) chooses the clock (see
    docs/hpcc-interop.md, "Import options"). Raises `ScenarioError` naming the
    configuration key or option at fault.
    """
    return _core.HpccRun(
        os.fspath(config), _opt(topology), _opt(flows), seed, headroom, acks, ecmp, clock
    )


def write_hpcc_outputs(raw: dict, out_dir: str | os.PathLike[str]) -> list[Path]:
    """Write `fct.txt` and `pfc.txt` from the dict `HpccRun.finish()` returned
    (or the `texts` of its `Results`)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, key in ((FCT_FILE, "hpcc_fct"), (PFC_FILE, "hpcc_pfc")):
        path = out / name
        path.write_text(raw.get(key, ""), encoding="utf-8")
        written.append(path)
    return written


def run_hpcc(
    config: str | os.PathLike[str],
    *,
    topology: str | os.PathLike[str] | None = None,
    flows: str | os.PathLike[str] | None = None,
    out: str | os.PathLike[str] | None = None,
    seed: int | None = None,
    progress: bool = False,
    headroom: str | None = None,
    acks: str | None = None,
    ecmp: str | None = None,
    clock: str | None = None,
) -> Results:
    """Run an HPCC simulator experiment and return its `Results`.

    `config` is an HPCC `config.txt`; `topology` / `flows` override the files it
    names. With `out`, `fct.txt` and `pfc.txt` are written there in HPCC's formats
    (the texts are also on the returned object as `hpcc_fct` and `hpcc_pfc`).
    `headroom`, `acks`, `ecmp` and `clock` are the import options of `hpcc_simulation`.
    """
    started = time.perf_counter()
    sim = hpcc_simulation(
        config,
        topology=topology,
        flows=flows,
        seed=seed,
        headroom=headroom,
        acks=acks,
        ecmp=ecmp,
        clock=clock,
    )
    console = None
    if progress:
        from rich.console import Console

        console = Console(stderr=True)
    results = run_to_results(sim, started, progress_console=console)
    results.hpcc_fct = results.texts.get("hpcc_fct", "")  # type: ignore[attr-defined]
    results.hpcc_pfc = results.texts.get("hpcc_pfc", "")  # type: ignore[attr-defined]
    if out is not None:
        write_hpcc_outputs(results.texts, out)
    return results


def import_hpcc(
    config: str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    topology: str | os.PathLike[str] | None = None,
    flows: str | os.PathLike[str] | None = None,
    headroom: str | None = None,
    acks: str | None = None,
    ecmp: str | None = None,
    clock: str | None = None,
) -> tuple[Path, Path]:
    """Convert an HPCC experiment into an incast scenario file `out` (TOML) and a
    flows CSV `<stem>_flows.csv` next to it, which the scenario refers to
    relatively. Returns both paths. `headroom`, `acks`, `ecmp` and `clock` are the
    import options of `hpcc_simulation`."""
    out_path = Path(out)
    csv_path = out_path.with_name(f"{out_path.stem}_flows.csv")
    toml_text, csv_text = _core.import_hpcc(
        os.fspath(config), _opt(topology), _opt(flows), csv_path.name, headroom, acks, ecmp, clock
    )
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(toml_text, encoding="utf-8")
    csv_path.write_text(csv_text, encoding="utf-8")
    return out_path, csv_path
