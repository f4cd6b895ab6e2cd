"""Simulation results as pandas DataFrames, and their deterministic Parquet form."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import _core

#: The result tables, in the order they are written: the core's one list
#: (`Results::table_names()` in Rust, which its digest and binding read too).
#: Every table comes with its typed columns, rows or not, so that `flows.parquet`
#: of a run without flows has the same schema as any other. Tables a later core
#: adds are kept too (after these). Derived columns (`*_us`, names) follow.
TABLES: tuple[str, ...] = tuple(_core.RESULT_TABLES)

#: Columns that mean nothing for an unfinished row (a flow or an incast that had
#: not completed when the run ended): null, not 0, in every table and file.
UNFINISHED_NULL = ("finish_ps", "fct_ps", "completion_ps", "slowdown")

#: `finished` of a flow stopped at its `stop` (a bulk on-period, a long-lived or
#: cut flow): its finish is the stop time and its size the bytes it delivered,
#: but it has no ideal FCT and no slowdown, which are null in its row.
FINISHED_STOPPED = 2
STOPPED_NULL = ("ideal_fct_ps", "slowdown")

#: Integer codes the core uses, as the names the tables show (categorical columns).
#: FLOW_KINDS is the core's `_core.FLOW_KINDS` (tests/test_result_tables.py).
FLOW_KINDS = {0: "poisson", 1: "incast", 2: "listed", 3: "bulk"}
PFC_EVENTS = {0: "resume", 1: "pause", 2: "watchdog_trip", 3: "watchdog_restore"}
CATEGORIES = {("flows", "kind"): FLOW_KINDS, ("pfc", "event"): PFC_EVENTS}


def rdma_data_packets(run: str | os.PathLike[str]) -> int:
    """Data packets the senders of a finished RDMA run sent, from its directory: each
    flow's ceil(size / `rdma.payload`) (scenario.json) plus its retransmitted packets
    (flows.parquet). The denominator of a drop ratio."""
    run = Path(run)
    scenario = json.loads((run / "scenario.json").read_text(encoding="utf-8"))
    payload = int(scenario["rdma"]["payload"])
    flows = pd.read_parquet(run / "flows.parquet", columns=["size_bytes", "retransmits"])
    first_sends = ((flows["size_bytes"] + payload - 1) // payload).sum()
    return int(first_sends + flows["retransmits"].sum())


def _categorical(codes: np.ndarray, names: dict[int, str]) -> pd.Categorical:
    """Integer codes as a categorical of names (every known name a category,
    unknown codes as "code_N")."""
    categories = list(names.values())
    extra = sorted({int(c) for c in np.unique(codes)} - set(names))
    lookup = dict(names)
    for c in extra:
        lookup[c] = f"code_{c}"
        categories.append(lookup[c])
    values = [lookup[int(c)] for c in codes]
    return pd.Categorical(values, categories=categories)


def table_from_columns(
    columns: dict, node_names: list | None = None, table: str | None = None
) -> pd.DataFrame:
    """Build a DataFrame from `{name: (numpy dtype string, little-endian bytes)}`.

    With `table` (one of `TABLES`), integer codes become names
    (`CATEGORIES`); in rows with `finished == 0` the columns of
    `UNFINISHED_NULL` are null (pandas NA), and in the flows table's rows with
    `finished == FINISHED_STOPPED` those of `STOPPED_NULL`. Adds a float `<x>_us` column next to
    every integer `<x>_ps` column, and `node_name` / `peer_name` columns where
    `node` / `peer` ids are present.
    """
    data: dict[str, Any] = {}
    for name, spec in columns.items():
        dtype, raw = spec
        data[name] = np.frombuffer(raw, dtype=np.dtype(dtype))
    df = pd.DataFrame(data)

    # Which rows null which columns: unfinished rows (flows, incasts), stopped flows.
    null_rows: dict[str, np.ndarray] = {}
    if "finished" in df.columns:
        finished = df["finished"].to_numpy()
        for name in UNFINISHED_NULL:
            null_rows[name] = finished == 0
        stopped = finished == FINISHED_STOPPED
        # Only runs with stopped flows get nullable ideal/slowdown columns, so
        # every other run's tables (and Parquet files) stay as they were.
        if table == "flows" and stopped.any():
            for name in STOPPED_NULL:
                null_rows[name] = stopped
    extra: dict[str, Any] = {}
    for name in list(df.columns):
        if name.endswith("_ps"):
            us = df[name].to_numpy().astype(np.float64) / 1e6
            if name in null_rows:
                us = pd.array(us, dtype="Float64")
                us[null_rows[name]] = pd.NA
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
    for name, rows in null_rows.items():
        if name in df.columns:
            kind = "Float64" if df[name].dtype.kind == "f" else "UInt64"
            col = pd.array(df[name].to_numpy(), dtype=kind)
            col[rows] = pd.NA
            df[name] = col
    for (tname, col), names_map in CATEGORIES.items():
        if tname == table and col in df.columns:
            df[col] = _categorical(df[col].to_numpy(), names_map)
    for name, values in extra.items():
        if name not in df.columns:
            df[name] = values
    return df


def _is_table(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(v, (tuple, list)) and len(v) == 2 for v in value.values())
    )


class Results:
    """The outcome of one simulation run.

    Attributes:
        flows, incasts, counters, ports, queues, pfc, owd, hosts, cm: pandas
            DataFrames (see the column list in the README); times in `*_ps`
            integer columns, with float `*_us` convenience columns. `pfc` is
            the PFC event log, `owd` the sampled one-way-delay readings of edge
            pausing, `hosts` per-sender totals (flows, edge pauses, paused
            time, retransmissions), `cm` congestion management over time
            (rows only in runs with the adapter NIC).
        node_names: node id -> name.
        summary: the summary dict computed by the core (buckets, percentiles,
            totals); its keys may grow over versions.
        stats: engine statistics (events, packet_hops, tx_done_events,
            sim_time_ps, wall_seconds, peak_packets, peak_flows).
        texts: other texts the core returned (an HPCC run's fct.txt and
            pfc.txt as "hpcc_fct" and "hpcc_pfc").
    """

    def __init__(self, raw: dict, *, wall_seconds: float | None = None) -> None:
        self.node_names: list[str] = [str(n) for n in raw.get("node_names", [])]
        extra = [k for k, v in raw.items() if k not in TABLES and _is_table(v)]
        #: The names of this run's tables: `TABLES`, then any the core added.
        self.table_names: tuple[str, ...] = TABLES + tuple(sorted(extra))
        for name in self.table_names:
            setattr(self, name, table_from_columns(raw.get(name, {}), self.node_names, name))
        summary = raw.get("summary", "{}")
        self.summary: dict = json.loads(summary) if isinstance(summary, (str, bytes)) else summary
        # Each flow's congestion control by name (the summary lists them in code order).
        names = self.summary.get("congestion_controls") if isinstance(self.summary, dict) else None
        if names and "cc" in self.flows.columns:
            codes = dict(enumerate(str(n) for n in names))
            self.flows["cc"] = _categorical(self.flows["cc"].to_numpy(), codes)
        self.stats: dict = dict(raw.get("stats", {}))
        #: The texts the core returned beside the tables (`HpccRun`: "hpcc_fct",
        #: "hpcc_pfc", HPCC's fct.txt and pfc.txt).
        self.texts: dict[str, str] = {
            k: v for k, v in raw.items() if k != "summary" and isinstance(v, str)
        }
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
    cm: pd.DataFrame

    @property
    def scenario_name(self) -> str:
        return str(self.summary.get("scenario", ""))

    @property
    def seed(self) -> int | None:
        return self.summary.get("seed")

    def tables(self) -> dict[str, pd.DataFrame]:
        return {name: getattr(self, name) for name in self.table_names}

    def to_bytes(self) -> dict[str, bytes]:
        """`{"<table>.parquet": bytes, ..., "summary.json": bytes}`: the files
        `to_parquet` writes, in memory (a sweep's workers return these)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        files = {}
        for name, df in self.tables().items():
            sink = pa.BufferOutputStream()
            pq.write_table(pa.Table.from_pandas(df, preserve_index=False), sink, compression="zstd")
            files[f"{name}.parquet"] = sink.getvalue().to_pybytes()
        text = json.dumps(self.summary, sort_keys=True, indent=2) + "\n"
        files["summary.json"] = text.encode("utf-8")
        return files

    def to_parquet(self, out_dir: str | os.PathLike[str]) -> list[Path]:
        """Write `<table>.parquet` for each table and `summary.json` into `out_dir`.

        The files are byte-identical for identical results: zstd-compressed
        Parquet written by pyarrow with no index and no timestamps, and JSON
        with sorted keys.
        """
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        for name, data in self.to_bytes().items():
            path = out / name
            path.write_bytes(data)
            written.append(path)
        return written

    def __repr__(self) -> str:
        sizes = ", ".join(f"{name}={len(df)}" for name, df in self.tables().items())
        return f"<incast.Results {self.scenario_name!r} seed={self.seed} {sizes}>"
