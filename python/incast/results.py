"""Simulation results as pandas DataFrames, and their deterministic Parquet form."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

#: The result tables, in the order they are written.
TABLES = ("flows", "incasts", "counters", "ports", "queues", "pfc", "owd", "hosts")

# Time columns that are meaningless for an unfinished row (flows, incasts).
_UNFINISHED_NAN = ("finish_ps", "fct_ps", "completion_ps")

FLOW_KINDS = {0: "poisson", 1: "incast", 2: "listed"}


def table_from_columns(columns: dict, node_names: list | None = None) -> pd.DataFrame:
    """Build a DataFrame from `{name: (numpy dtype string, little-endian bytes)}`.

    Adds a float `<x>_us` column next to every integer `<x>_ps` column (NaN for
    finish/fct/completion times of unfinished rows), and `node_name` /
    `peer_name` columns where `node` / `peer` ids are present.
    """
    data: dict[str, Any] = {}
    for name, spec in columns.items():
        dtype, raw = spec
        data[name] = np.frombuffer(raw, dtype=np.dtype(dtype))
    df = pd.DataFrame(data)

    unfinished = None
    if "finished" in df.columns:
        unfinished = df["finished"].to_numpy() == 0
    extra: dict[str, Any] = {}
    for name in list(df.columns):
        if name.endswith("_ps"):
            us = df[name].to_numpy().astype(np.float64) / 1e6
            if unfinished is not None and name in _UNFINISHED_NAN:
                us[unfinished] = np.nan
            extra[name[: -len("_ps")] + "_us"] = us
    if node_names is not None:
        names = np.asarray(list(node_names) + [""], dtype=object)
        for col, out in (("node", "node_name"), ("peer", "peer_name")):
            if col in df.columns:
                ids = df[col].to_numpy().astype(np.int64)
                ok = (ids >= 0) & (ids < len(node_names))
                mapped = names[np.where(ok, ids, len(node_names))]
                if not ok.all():
                    mapped = np.where(ok, mapped, ids.astype(str).astype(object))
                extra[out] = mapped.astype(str)
    for name, values in extra.items():
        if name not in df.columns:
            df[name] = values
    return df


class Results:
    """The outcome of one simulation run.

    Attributes:
        flows, incasts, counters, ports, queues, pfc, owd, hosts: pandas
            DataFrames (see the column list in the README); times in `*_ps`
            integer columns, with float `*_us` convenience columns. `pfc` is
            the PFC event log, `owd` the sampled one-way-delay readings of edge
            pausing, `hosts` per-sender totals (flows, edge pauses, paused
            time, retransmissions).
        node_names: node id -> name.
        summary: the summary dict computed by the core (buckets, percentiles,
            totals); its keys may grow over versions.
        stats: engine statistics (events, packet_hops, sim_time_ps, wall_seconds).
    """

    def __init__(self, raw: dict, *, wall_seconds: float | None = None) -> None:
        self.node_names: list[str] = [str(n) for n in raw.get("node_names", [])]
        for name in TABLES:
            setattr(self, name, table_from_columns(raw.get(name, {}), self.node_names))
        summary = raw.get("summary", "{}")
        self.summary: dict = json.loads(summary) if isinstance(summary, (str, bytes)) else summary
        self.stats: dict = dict(raw.get("stats", {}))
        if wall_seconds is not None and not self.stats.get("wall_seconds"):
            self.stats["wall_seconds"] = wall_seconds

    # Declared for type checkers and readers; set in __init__.
    flows: pd.DataFrame
    incasts: pd.DataFrame
    counters: pd.DataFrame
    ports: pd.DataFrame
    queues: pd.DataFrame
    pfc: pd.DataFrame
    owd: pd.DataFrame
    hosts: pd.DataFrame

    @property
    def scenario_name(self) -> str:
        return str(self.summary.get("scenario", ""))

    @property
    def seed(self) -> int | None:
        return self.summary.get("seed")

    def tables(self) -> dict[str, pd.DataFrame]:
        return {name: getattr(self, name) for name in TABLES}

    def to_parquet(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write `<table>.parquet` for each table and `summary.json` into `out_dir`.

        The files are byte-identical for identical results: zstd-compressed
        Parquet written by pyarrow with no index and no timestamps, and JSON
        with sorted keys.
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, df in self.tables().items():
            path = out / f"{name}.parquet"
            table = pa.Table.from_pandas(df, preserve_index=False)
            pq.write_table(table, path, compression="zstd")
            written.append(path)
        path = out / "summary.json"
        path.write_text(json.dumps(self.summary, sort_keys=True, indent=2) + "\n", encoding="utf-8")
        written.append(path)
        return written

    def __repr__(self) -> str:
        sizes = ", ".join(f"{name}={len(df)}" for name, df in self.tables().items())
        return f"<incast.Results {self.scenario_name!r} seed={self.seed} {sizes}>"
