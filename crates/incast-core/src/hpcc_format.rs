//! Interoperability with the HPCC simulator (`alibaba-edu/High-Precision-Congestion-Control`,
//! "HPCC-sim"): its `config.txt`, `topology.txt` and `flow.txt` in, its `fct.txt` and
//! `pfc.txt` out.
//!
//! [`import`] reads an HPCC-sim configuration and the topology and flow files it names,
//! and converts them into an incast [`ScenarioConfig`] (an explicit topology, RDMA NICs
//! with the configured congestion control, PFC and ECN switches) plus a flows CSV. Every
//! configuration key is either mapped, accepted as an output location, or rejected with
//! an error naming the key and its line: nothing is silently ignored. The mapping is
//! documented in `docs/hpcc-interop.md`.
//!
//! [`write_fct`] and [`write_pfc`] write a run's results in HPCC-sim's formats:
//!
//! - `fct.txt`: `sip dip sport dport size start_ns fct_ns standalone_fct_ns`, one line per
//!   finished flow in completion order; IPs as HPCC-sim prints them (`%08x` of
//!   `0x0b000001 + (id / 256) * 0x10000 + (id % 256) * 0x100`), source ports counted per
//!   source host from 10000 in flow-file order, and the standalone FCT computed exactly as
//!   HPCC-sim's `qp_finish` does (integer nanoseconds).
//! - `pfc.txt`: `time_ns node_id node_type if_index type`, one line per PAUSE (type 1) or
//!   resume (type 0) frame, recorded at the port that receives it; `node_type` is 0 for a
//!   host and 1 for a switch; `if_index` counts a node's links from 1 in topology-file order
//!   (ns-3 interface 0 is the loopback).

use crate::config_types::{RateValue, SizeValue, TimeValue};
use crate::metrics_table::{Column, Table};
use crate::scenario::{FlowConfig, HostRef, Scenario, ScenarioConfig, ScenarioError};
use crate::units::{self, Rate, NS};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// First source port of every host (HPCC-sim `third.cc`: "each host use port number from 10000").
pub const FIRST_SPORT: u16 = 10000;
/// Header bytes of an HPCC-sim data packet without INT: Ethernet 14 + IPv4 20 + UDP 8 +
/// sequence 4 + priority group 2.
pub const HPCC_HEADER: u32 = 48;
/// INT bytes per data packet in HPCC mode: 5 hops x 8 B + a 2-byte hop count.
pub const HPCC_INT_BYTES: u32 = 42;
/// Timestamp bytes per data packet in TIMELY mode.
pub const TIMELY_TS_BYTES: u32 = 8;
/// HPCC-sim's switch MMU: guaranteed bytes per ingress (port, queue), 4 KiB.
pub const HPCC_PFC_RESERVE: u64 = 4 * 1024;
/// HPCC-sim's switch MMU: XON hysteresis, 3 KiB.
pub const HPCC_PFC_RESUME_OFFSET: u64 = 3 * 1024;

/// The IPv4 address HPCC-sim gives node `id` (`node_id_to_ip` in `third.cc`).
pub fn node_ip(id: u32) -> u32 {
    0x0b00_0001 + (id / 256) * 0x0001_0000 + (id % 256) * 0x0000_0100
}

/// The IPv4 address of node `id` as HPCC-sim prints it (`%08x`).
pub fn format_ip(id: u32) -> String {
    format!("{:08x}", node_ip(id))
}

/// One flow of the HPCC flow file, in file order (which is start-time order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HpccFlow {
    /// HPCC node ids.
    pub src_id: u32,
    pub dst_id: u32,
    /// incast host indices.
    pub src: u32,
    pub dst: u32,
    /// Priority group (HPCC `pg`), incast class.
    pub priority: u8,
    pub sport: u16,
    pub dport: u16,
    pub size: u64,
    /// Start time, nanoseconds (absolute: HPCC flow files usually start at 2 s).
    pub start_ns: u64,
    /// HPCC-sim's standalone FCT of this flow (ns): base RTT + size with headers / bottleneck.
    pub standalone_fct_ns: u64,
}

/// An imported HPCC-sim experiment.
#[derive(Clone, Debug)]
pub struct HpccImport {
    /// The scenario; `workload.flow_file` names the flows CSV ([`HpccImport::flows_csv`]).
    pub scenario: ScenarioConfig,
    /// The same scenario as plain data, with only the keys the import sets (for TOML output).
    pub scenario_value: Value,
    /// `src,dst,size_bytes,start_ns,class`, one row per flow, in start-time order.
    pub flows_csv: String,
    /// The flows, in the order of `flows_csv` rows (= incast flow ids).
    pub flows: Vec<HpccFlow>,
    /// HPCC node id of incast host index `i`.
    pub host_ids: Vec<u32>,
    /// HPCC node id of incast switch index `i`.
    pub switch_ids: Vec<u32>,
    /// Destination / source port of each flow, in the order of `flows_csv` rows.
    pub dports: Vec<u16>,
    pub sports: Vec<u16>,
    /// The files read.
    pub config_path: PathBuf,
    pub topology_path: PathBuf,
    pub flows_path: PathBuf,
}

/// One PFC event of a run, as [`write_pfc_rows`] needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcEventRow {
    pub time_ps: u64,
    /// Index into the run's `node_names`.
    pub node: u32,
    /// Local port of that node, 0-based in topology link order.
    pub port: u32,
    pub class: u8,
    /// 1: a PAUSE took effect; 0: resumed; 2, 3: watchdog trip, restore.
    pub event: u8,
}

// ---------------------------------------------------------------------------
// Reading the config file

#[derive(Clone, Debug)]
struct Entry {
    line: usize,
    values: Vec<String>,
}

struct Config {
    file: String,
    entries: BTreeMap<String, Entry>,
}

/// What a key is, for the table of known keys.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Mapped onto the scenario.
    Mapped,
    /// An output location of HPCC-sim: accepted, incast writes into its output directory.
    Output,
}

/// Every key HPCC-sim's `third.cc` reads, and what the import does with it.
const KEYS: &[(&str, Kind)] = &[
    ("ENABLE_QCN", Kind::Mapped),
    ("USE_DYNAMIC_PFC_THRESHOLD", Kind::Mapped),
    ("CLAMP_TARGET_RATE", Kind::Mapped),
    ("PAUSE_TIME", Kind::Mapped),
    ("DATA_RATE", Kind::Mapped),
    ("LINK_DELAY", Kind::Mapped),
    ("PACKET_PAYLOAD_SIZE", Kind::Mapped),
    ("L2_CHUNK_SIZE", Kind::Mapped),
    ("L2_ACK_INTERVAL", Kind::Mapped),
    ("L2_BACK_TO_ZERO", Kind::Mapped),
    ("TOPOLOGY_FILE", Kind::Mapped),
    ("FLOW_FILE", Kind::Mapped),
    ("TRACE_FILE", Kind::Output),
    ("TRACE_OUTPUT_FILE", Kind::Output),
    ("FCT_OUTPUT_FILE", Kind::Output),
    ("PFC_OUTPUT_FILE", Kind::Output),
    ("QLEN_MON_FILE", Kind::Output),
    ("QLEN_MON_START", Kind::Mapped),
    ("QLEN_MON_END", Kind::Mapped),
    ("SIMULATOR_STOP_TIME", Kind::Mapped),
    ("ALPHA_RESUME_INTERVAL", Kind::Mapped),
    ("RP_TIMER", Kind::Mapped),
    ("EWMA_GAIN", Kind::Mapped),
    ("FAST_RECOVERY_TIMES", Kind::Mapped),
    ("RATE_AI", Kind::Mapped),
    ("RATE_HAI", Kind::Mapped),
    ("MIN_RATE", Kind::Mapped),
    ("DCTCP_RATE_AI", Kind::Mapped),
    ("RATE_DECREASE_INTERVAL", Kind::Mapped),
    ("ERROR_RATE_PER_LINK", Kind::Mapped),
    ("CC_MODE", Kind::Mapped),
    ("HAS_WIN", Kind::Mapped),
    ("GLOBAL_T", Kind::Mapped),
    ("VAR_WIN", Kind::Mapped),
    ("FAST_REACT", Kind::Mapped),
    ("U_TARGET", Kind::Mapped),
    ("MI_THRESH", Kind::Mapped),
    ("INT_MULTI", Kind::Mapped),
    ("MULTI_RATE", Kind::Mapped),
    ("SAMPLE_FEEDBACK", Kind::Mapped),
    ("PINT_LOG_BASE", Kind::Mapped),
    ("PINT_PROB", Kind::Mapped),
    ("RATE_BOUND", Kind::Mapped),
    ("ACK_HIGH_PRIO", Kind::Mapped),
    ("LINK_DOWN", Kind::Mapped),
    ("ENABLE_TRACE", Kind::Mapped),
    ("KMAX_MAP", Kind::Mapped),
    ("KMIN_MAP", Kind::Mapped),
    ("PMAX_MAP", Kind::Mapped),
    ("BUFFER_SIZE", Kind::Mapped),
];

/// The keys HPCC-sim reads that the import accepts as output locations only.
pub fn output_keys() -> Vec<&'static str> {
    KEYS.iter()
        .filter(|k| k.1 == Kind::Output)
        .map(|k| k.0)
        .collect()
}

/// Every key the import knows.
pub fn known_keys() -> Vec<&'static str> {
    KEYS.iter().map(|k| k.0).collect()
}

impl Config {
    fn parse(text: &str, file: &str) -> Result<Config, ScenarioError> {
        let mut entries = BTreeMap::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut parts = line.split_whitespace();
            let key = parts.next().unwrap_or_default().to_string();
            let values: Vec<String> = parts.map(str::to_string).collect();
            if !KEYS.iter().any(|k| k.0 == key) {
                return Err(ScenarioError::new(
                    key.clone(),
                    format!(
                        "{file}:{}: unknown HPCC configuration key `{key}`; incast does not support it \
                         (see docs/hpcc-interop.md for the keys it reads)",
                        i + 1
                    ),
                ));
            }
            if let Some(prev) = entries.get(&key) {
                let prev: &Entry = prev;
                return Err(ScenarioError::new(
                    key.clone(),
                    format!(
                        "{file}:{}: `{key}` is given twice (also on line {})",
                        i + 1,
                        prev.line
                    ),
                ));
            }
            entries.insert(
                key,
                Entry {
                    line: i + 1,
                    values,
                },
            );
        }
        Ok(Config {
            file: file.to_string(),
            entries,
        })
    }

    fn err(&self, key: &str, msg: impl std::fmt::Display) -> ScenarioError {
        match self.entries.get(key) {
            Some(e) => ScenarioError::new(key, format!("{}:{}: {key}: {msg}", self.file, e.line)),
            None => ScenarioError::new(key, format!("{}: {key}: {msg}", self.file)),
        }
    }

    fn has(&self, key: &str) -> bool {
        self.entries.contains_key(key)
    }

    /// The single value of `key`, if present.
    fn one(&self, key: &str) -> Result<Option<&str>, ScenarioError> {
        match self.entries.get(key) {
            None => Ok(None),
            Some(e) if e.values.len() == 1 => Ok(Some(e.values[0].as_str())),
            Some(e) => Err(self.err(key, format!("expected one value, got {}", e.values.len()))),
        }
    }

    fn required(&self, key: &str, why: &str) -> Result<&str, ScenarioError> {
        self.one(key)?
            .ok_or_else(|| self.err(key, format!("missing: {why}")))
    }

    fn parse_num<T: std::str::FromStr>(
        &self,
        key: &str,
        v: &str,
        what: &str,
    ) -> Result<T, ScenarioError> {
        v.parse::<T>()
            .map_err(|_| self.err(key, format!("`{v}` is not {what}")))
    }

    fn uint(&self, key: &str, default: u64) -> Result<u64, ScenarioError> {
        match self.one(key)? {
            Some(v) => self.parse_num(key, v, "a non-negative integer"),
            None => Ok(default),
        }
    }

    fn flag(&self, key: &str, default: bool) -> Result<bool, ScenarioError> {
        match self.uint(key, default as u64)? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(self.err(key, format!("expected 0 or 1, got {v}"))),
        }
    }

    fn float(&self, key: &str, default: f64) -> Result<f64, ScenarioError> {
        match self.one(key)? {
            Some(v) => {
                let x: f64 = self.parse_num(key, v, "a number")?;
                if x.is_finite() && x >= 0.0 {
                    Ok(x)
                } else {
                    Err(self.err(key, format!("`{v}` must be a finite non-negative number")))
                }
            }
            None => Ok(default),
        }
    }

    fn required_float(&self, key: &str, why: &str) -> Result<f64, ScenarioError> {
        self.required(key, why)?;
        self.float(key, 0.0)
    }

    /// A rate written as ns-3 does (`"20Mb/s"`, `"100Gbps"`).
    fn rate(&self, key: &str, default: Option<&str>, why: &str) -> Result<Rate, ScenarioError> {
        let v = match (self.one(key)?, default) {
            (Some(v), _) => v,
            (None, Some(d)) => d,
            (None, None) => return Err(self.err(key, format!("missing: {why}"))),
        };
        ns3_rate(v).map_err(|m| self.err(key, m))
    }

    /// A required rate as the JSON string of a congestion-control parameter.
    fn rate_json(&self, key: &str, why: &str) -> Result<Value, ScenarioError> {
        Ok(json!(rate_str(self.rate(key, None, why)?)))
    }

    /// A `KMAX_MAP`-style list: `n rate1 v1 rate2 v2 ...`.
    fn rate_map(&self, key: &str) -> Result<Vec<(u64, f64)>, ScenarioError> {
        let e = self.entries.get(key).ok_or_else(|| {
            self.err(
                key,
                "missing: ENABLE_QCN is 1, so every switch port's rate needs KMIN_MAP, KMAX_MAP and PMAX_MAP entries",
            )
        })?;
        let n: usize = match e.values.first() {
            Some(v) => self.parse_num(key, v, "a count")?,
            None => return Err(self.err(key, "expected `n rate1 value1 ... rateN valueN`")),
        };
        if e.values.len() != 1 + 2 * n {
            return Err(self.err(
                key,
                format!(
                    "the count says {n} (rate, value) pairs, so {} numbers must follow it; got {}",
                    2 * n,
                    e.values.len() - 1
                ),
            ));
        }
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let r: u64 = self.parse_num(key, &e.values[1 + 2 * i], "a rate in bits per second")?;
            let v: f64 = self.parse_num(key, &e.values[2 + 2 * i], "a number")?;
            if !(v.is_finite() && v >= 0.0) || r == 0 {
                return Err(self.err(key, format!("bad pair `{} {}`", r, e.values[2 + 2 * i])));
            }
            if out.iter().any(|(x, _)| *x == r) {
                return Err(self.err(key, format!("rate {r} is listed twice")));
            }
            out.push((r, v));
        }
        Ok(out)
    }
}

/// Parses a rate in ns-3's `DataRate` syntax: `"100Gbps"`, `"20Mb/s"`, `"1000Mb/s"`, `"5MBps"`.
pub fn ns3_rate(s: &str) -> Result<Rate, String> {
    let s = s.trim();
    let end = s
        .find(|c: char| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')
        })
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a rate (e.g. 20Mb/s or 100Gbps)"))?;
    let bits: f64 = match unit {
        "" | "bps" | "b/s" => 1.0,
        "kbps" | "Kbps" | "kb/s" | "Kb/s" => 1e3,
        "Mbps" | "Mb/s" => 1e6,
        "Gbps" | "Gb/s" => 1e9,
        "Tbps" | "Tb/s" => 1e12,
        "Bps" | "B/s" => 8.0,
        "KBps" | "kBps" | "KB/s" | "kB/s" => 8e3,
        "MBps" | "MB/s" => 8e6,
        "GBps" | "GB/s" => 8e9,
        u => {
            return Err(format!(
                "unknown rate unit `{u}` in `{s}` (use e.g. Mb/s, Gbps)"
            ))
        }
    };
    let bps = (v * bits).round();
    if !(bps.is_finite() && bps >= 1.0) {
        return Err(format!("rate `{s}` must be positive"));
    }
    Ok(Rate(bps as u64))
}

/// Parses decimal seconds (`"2.000000962"`) into nanoseconds without floating-point error
/// (digits beyond the ninth decimal are rounded).
fn seconds_to_ns(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.is_empty() || s.starts_with('-') {
        return None;
    }
    if s.bytes().all(|b| b.is_ascii_digit() || b == b'.') && s.matches('.').count() <= 1 {
        let (int, frac) = s.split_once('.').unwrap_or((s, ""));
        let int: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
        let mut digits: Vec<u8> = frac.bytes().map(|b| b - b'0').collect();
        let round_up = digits.len() > 9 && digits[9] >= 5;
        digits.resize(9, 0);
        let mut ns = digits.iter().fold(0u64, |a, &d| a * 10 + d as u64);
        if round_up {
            ns += 1;
        }
        return int.checked_mul(1_000_000_000)?.checked_add(ns);
    }
    let v: f64 = s.parse().ok()?;
    (v.is_finite() && v >= 0.0).then(|| (v * 1e9).round() as u64)
}

// ---------------------------------------------------------------------------
// Topology

struct HpccLink {
    a: u32,
    b: u32,
    rate: Rate,
    /// Propagation delay, ps.
    delay: u64,
}

struct Topo {
    n_nodes: u32,
    is_switch: Vec<bool>,
    links: Vec<HpccLink>,
    /// Per node: (neighbour, link index), in link order.
    adj: Vec<Vec<(u32, usize)>>,
}

fn parse_topology(text: &str, file: &str) -> Result<Topo, ScenarioError> {
    let key = "TOPOLOGY_FILE";
    let err = |line: usize, m: String| ScenarioError::new(key, format!("{file}:{line}: {m}"));
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (ln, head) = lines
        .next()
        .ok_or_else(|| ScenarioError::new(key, format!("{file} is empty")))?;
    let nums: Vec<u32> = head
        .split_whitespace()
        .map(|t| t.parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|_| err(ln, format!("expected `nodes switches links`, got `{head}`")))?;
    if nums.len() != 3 {
        return Err(err(
            ln,
            format!("expected `nodes switches links`, got `{head}`"),
        ));
    }
    let (n_nodes, n_switches, n_links) = (nums[0], nums[1], nums[2] as usize);
    if n_nodes == 0 || n_switches >= n_nodes {
        return Err(err(
            ln,
            format!("{n_nodes} nodes with {n_switches} switches leaves no hosts"),
        ));
    }
    let mut is_switch = vec![false; n_nodes as usize];
    // The switch ids may span lines (HPCC reads them as a stream).
    let mut ids = vec![];
    let mut last_ln = ln;
    while ids.len() < n_switches as usize {
        let (ln, l) = lines.next().ok_or_else(|| {
            err(
                last_ln,
                format!("expected {n_switches} switch ids, found {}", ids.len()),
            )
        })?;
        last_ln = ln;
        for t in l.split_whitespace() {
            let id: u32 = t
                .parse()
                .map_err(|_| err(ln, format!("switch id `{t}` is not a number")))?;
            ids.push((ln, id));
        }
    }
    if ids.len() != n_switches as usize {
        return Err(err(
            last_ln,
            format!("expected {n_switches} switch ids, found {}", ids.len()),
        ));
    }
    for (ln, id) in ids {
        if id >= n_nodes {
            return Err(err(
                ln,
                format!("switch id {id} is not below the node count {n_nodes}"),
            ));
        }
        if is_switch[id as usize] {
            return Err(err(ln, format!("switch id {id} is listed twice")));
        }
        is_switch[id as usize] = true;
    }
    let mut links = Vec::with_capacity(n_links);
    for (ln, l) in lines.by_ref().take(n_links) {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.len() != 5 {
            return Err(err(
                ln,
                format!("expected `a b rate delay error_rate`, got `{l}`"),
            ));
        }
        let node = |s: &str| -> Result<u32, ScenarioError> {
            let v: u32 = s
                .parse()
                .map_err(|_| err(ln, format!("node id `{s}` is not a number")))?;
            if v >= n_nodes {
                return Err(err(
                    ln,
                    format!("node id {v} is not below the node count {n_nodes}"),
                ));
            }
            Ok(v)
        };
        let (a, b) = (node(t[0])?, node(t[1])?);
        if a == b {
            return Err(err(ln, format!("a link from node {a} to itself")));
        }
        let rate = ns3_rate(t[2]).map_err(|m| err(ln, m))?;
        let delay = units::parse_time(t[3]).map_err(|m| err(ln, m))?;
        let er: f64 = t[4]
            .parse()
            .map_err(|_| err(ln, format!("error rate `{}` is not a number", t[4])))?;
        if er != 0.0 {
            return Err(err(
                ln,
                format!("link {a}-{b} has error rate {}; incast supports only lossless links (error rate 0)", t[4]),
            ));
        }
        links.push(HpccLink { a, b, rate, delay });
    }
    if links.len() != n_links {
        return Err(ScenarioError::new(
            key,
            format!(
                "{file}: the header announces {n_links} links, the file has {}",
                links.len()
            ),
        ));
    }
    if let Some((ln, l)) = lines.next() {
        return Err(err(
            ln,
            format!("unexpected line `{l}` after the {n_links} links the header announces"),
        ));
    }
    let mut adj = vec![vec![]; n_nodes as usize];
    for (i, l) in links.iter().enumerate() {
        adj[l.a as usize].push((l.b, i));
        adj[l.b as usize].push((l.a, i));
    }
    Ok(Topo {
        n_nodes,
        is_switch,
        links,
        adj,
    })
}

/// HPCC-sim's base RTT (ns) and bottleneck rate (bits/s) of every host towards `dst`
/// (`CalculateRoute` in `third.cc`): a BFS from `dst` that only passes through switches;
/// per hop, the delay and `payload x 8 / rate` (integer ns) add up, the rate is the
/// minimum. RTT = 2 x delay + serialisation.
fn pair_rtt_to(topo: &Topo, dst: u32, payload: u64) -> Vec<Option<(u64, u64)>> {
    let n = topo.n_nodes as usize;
    let mut dist = vec![u32::MAX; n];
    let mut delay = vec![0u64; n];
    let mut tx = vec![0u64; n];
    let mut bw = vec![u64::MAX; n];
    let mut q = VecDeque::new();
    dist[dst as usize] = 0;
    q.push_back(dst);
    while let Some(now) = q.pop_front() {
        let d = dist[now as usize];
        for &(next, li) in &topo.adj[now as usize] {
            let l = &topo.links[li];
            if dist[next as usize] == u32::MAX {
                dist[next as usize] = d + 1;
                // HPCC-sim keeps ns; topology delays are whole ns in practice.
                delay[next as usize] = delay[now as usize] + l.delay / NS;
                tx[next as usize] = tx[now as usize] + payload * 8_000_000_000 / l.rate.0;
                bw[next as usize] = bw[now as usize].min(l.rate.0);
                if topo.is_switch[next as usize] {
                    q.push_back(next);
                }
            }
        }
    }
    (0..n)
        .map(|i| (dist[i] != u32::MAX && i != dst as usize).then(|| (2 * delay[i] + tx[i], bw[i])))
        .collect()
}

/// HPCC-sim's standalone FCT (`qp_finish`): base RTT + bytes with headers (no INT) / bottleneck.
pub fn standalone_fct_ns(size: u64, payload: u64, base_rtt_ns: u64, bw_bps: u64) -> u64 {
    let total =
        size + size.saturating_sub(1) / payload.max(1) * HPCC_HEADER as u64 + HPCC_HEADER as u64;
    base_rtt_ns + (total as u128 * 8_000_000_000u128 / bw_bps as u128) as u64
}

// ---------------------------------------------------------------------------
// Flows

struct RawFlow {
    line: usize,
    src: u32,
    dst: u32,
    pg: u32,
    dport: u32,
    size: u64,
    start_ns: u64,
}

fn parse_flows(text: &str, file: &str) -> Result<Vec<RawFlow>, ScenarioError> {
    let key = "FLOW_FILE";
    let err = |line: usize, m: String| ScenarioError::new(key, format!("{file}:{line}: {m}"));
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    let (ln, head) = lines
        .next()
        .ok_or_else(|| ScenarioError::new(key, format!("{file} is empty")))?;
    let count: usize = head
        .parse()
        .map_err(|_| err(ln, format!("expected the number of flows, got `{head}`")))?;
    let mut out = Vec::with_capacity(count);
    for (ln, l) in lines {
        let t: Vec<&str> = l.split_whitespace().collect();
        if t.len() != 6 {
            return Err(err(
                ln,
                format!("expected `src dst priority dport size start_seconds`, got `{l}`"),
            ));
        }
        let num = |s: &str, what: &str| -> Result<u64, ScenarioError> {
            s.parse::<u64>()
                .map_err(|_| err(ln, format!("{what} `{s}` is not a non-negative integer")))
        };
        let src = num(t[0], "src")? as u32;
        let dst = num(t[1], "dst")? as u32;
        let pg = num(t[2], "priority")? as u32;
        let dport = num(t[3], "dport")? as u32;
        let size = num(t[4], "size")?;
        let start_ns = seconds_to_ns(t[5]).ok_or_else(|| {
            err(
                ln,
                format!("start time `{}` is not a number of seconds", t[5]),
            )
        })?;
        out.push(RawFlow {
            line: ln,
            src,
            dst,
            pg,
            dport,
            size,
            start_ns,
        });
    }
    if out.len() != count {
        return Err(ScenarioError::new(
            key,
            format!(
                "{file}: the first line announces {count} flows, the file lists {}",
                out.len()
            ),
        ));
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// The import

fn resolve(config: &Path, named: &str) -> PathBuf {
    let dir = config.parent().unwrap_or_else(|| Path::new("."));
    let p = Path::new(named);
    let direct = if p.is_absolute() {
        p.to_path_buf()
    } else {
        dir.join(p)
    };
    if direct.is_file() {
        return direct;
    }
    match p.file_name() {
        Some(base) if dir.join(base).is_file() => dir.join(base),
        _ => direct,
    }
}

fn read(path: &Path, key: &str) -> Result<String, ScenarioError> {
    std::fs::read_to_string(path)
        .map_err(|e| ScenarioError::new(key, format!("cannot read {}: {e}", path.display())))
}

/// Reads an HPCC-sim configuration and the topology and flow files it names (or the given
/// overrides) and converts them. Relative file names in the configuration resolve against
/// the configuration's directory, falling back to their base name in that directory (the
/// shipped configurations say `mix/fat.txt`).
pub fn import(
    config: &Path,
    topology: Option<&Path>,
    flows: Option<&Path>,
) -> Result<HpccImport, ScenarioError> {
    let cfg_text = read(config, "")?;
    let cfg = Config::parse(&cfg_text, &config.display().to_string())?;
    let topo_path = match topology {
        Some(p) => p.to_path_buf(),
        None => resolve(
            config,
            cfg.required("TOPOLOGY_FILE", "the topology file (or give it explicitly)")?,
        ),
    };
    let flow_path = match flows {
        Some(p) => p.to_path_buf(),
        None => resolve(
            config,
            cfg.required("FLOW_FILE", "the flow file (or give it explicitly)")?,
        ),
    };
    let topo_text = read(&topo_path, "TOPOLOGY_FILE")?;
    let flow_text = read(&flow_path, "FLOW_FILE")?;
    let name = config
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "hpcc".into());
    let mut imp = convert(
        &cfg,
        &name,
        &parse_topology(&topo_text, &topo_path.display().to_string())?,
        &parse_flows(&flow_text, &flow_path.display().to_string())?,
    )?;
    imp.scenario.description = format!(
        "Imported from the HPCC simulator configuration {} (topology {}, flows {}).",
        config.display(),
        topo_path.display(),
        flow_path.display()
    );
    imp.scenario_value["description"] = Value::String(imp.scenario.description.clone());
    imp.config_path = config.to_path_buf();
    imp.topology_path = topo_path;
    imp.flows_path = flow_path;
    Ok(imp)
}

/// [`import`] from texts (for tests and for callers that have the files in memory).
pub fn import_texts(
    name: &str,
    config: &str,
    topology: &str,
    flows: &str,
) -> Result<HpccImport, ScenarioError> {
    let cfg = Config::parse(config, "config")?;
    convert(
        &cfg,
        name,
        &parse_topology(topology, "topology")?,
        &parse_flows(flows, "flows")?,
    )
}

fn rate_str(r: Rate) -> String {
    RateValue(r).0.to_string()
}
fn time_str(ps: u64) -> String {
    TimeValue(ps).to_string()
}
fn us_str(cfg: &Config, key: &str, us: f64) -> Result<String, ScenarioError> {
    let ps = (us * 1e6).round();
    if !(ps.is_finite() && ps > 0.0) {
        return Err(cfg.err(
            key,
            format!("must be a positive number of microseconds, got {us}"),
        ));
    }
    Ok(time_str(ps as u64))
}

fn convert(
    cfg: &Config,
    name: &str,
    topo: &Topo,
    raw_flows: &[RawFlow],
) -> Result<HpccImport, ScenarioError> {
    // --- keys incast rejects (HPCC-sim features it does not model)
    if let Some(v) = cfg.one("ERROR_RATE_PER_LINK")? {
        let x: f64 = cfg.parse_num("ERROR_RATE_PER_LINK", v, "a number")?;
        if x != 0.0 {
            return Err(cfg.err(
                "ERROR_RATE_PER_LINK",
                format!("{v}: incast models lossless links only; it must be 0"),
            ));
        }
    }
    if let Some(e) = cfg.entries.get("LINK_DOWN") {
        if e.values.len() != 3 || e.values.iter().any(|v| v.parse::<f64>() != Ok(0.0)) {
            return Err(cfg.err(
                "LINK_DOWN",
                format!(
                    "`{}`: taking a link down is not supported; it must be `0 0 0`",
                    e.values.join(" ")
                ),
            ));
        }
    }
    if cfg.has("ENABLE_TRACE") && cfg.uint("ENABLE_TRACE", 0)? != 0 {
        return Err(cfg.err(
            "ENABLE_TRACE",
            "packet-level traces in HPCC-sim's format are not supported; it must be 0",
        ));
    }
    if cfg.flag("MULTI_RATE", false)? {
        return Err(cfg.err(
            "MULTI_RATE",
            "per-hop HPCC rates are not supported; it must be 0",
        ));
    }
    if cfg.flag("SAMPLE_FEEDBACK", false)? {
        return Err(cfg.err(
            "SAMPLE_FEEDBACK",
            "sampled INT feedback is not supported; it must be 0",
        ));
    }
    if !cfg.flag("USE_DYNAMIC_PFC_THRESHOLD", true)? {
        return Err(cfg.err(
            "USE_DYNAMIC_PFC_THRESHOLD",
            "0 is not supported: HPCC-sim's switch MMU always applies the dynamic threshold \
             (the flag has no effect there) and the configuration has no static XOFF value; use 1",
        ));
    }
    for k in ["PINT_LOG_BASE", "PINT_PROB", "PAUSE_TIME"] {
        cfg.float(k, 0.0)?;
    }
    if let Some(v) = cfg.one("DATA_RATE")? {
        ns3_rate(v).map_err(|m| cfg.err("DATA_RATE", m))?;
    }
    if let Some(v) = cfg.one("LINK_DELAY")? {
        units::parse_time(v).map_err(|m| cfg.err("LINK_DELAY", m))?;
    }
    // HPCC-sim samples queues between QLEN_MON_START and QLEN_MON_END (ns); the shipped
    // configurations disable it with a window after the stop time. incast then samples no
    // queues either (sampling an idle 2 s before the traffic starts costs time and memory).
    let qlen_start = cfg.uint("QLEN_MON_START", 2_000_000_000)?;
    let qlen_end = cfg.uint("QLEN_MON_END", 2_100_000_000)?;

    // --- congestion control
    let cc_mode = cfg.uint("CC_MODE", 1)?;
    let payload = cfg.uint("PACKET_PAYLOAD_SIZE", 1000)?;
    if !(1..=9000).contains(&payload) {
        return Err(cfg.err(
            "PACKET_PAYLOAD_SIZE",
            format!("{payload} is outside 1..9000 bytes"),
        ));
    }
    let min_rate = cfg.rate("MIN_RATE", Some("100Mb/s"), "")?;
    let mut cc = Map::new();
    let int_bytes;
    match cc_mode {
        1 => {
            cc.insert("algorithm".into(), json!("dcqcn"));
            cc.insert("model".into(), json!("mellanox"));
            cc.insert(
                "g".into(),
                json!(cfg.required_float("EWMA_GAIN", "DCQCN's alpha gain g")?),
            );
            cc.insert(
                "alpha_interval".into(),
                json!(us_str(
                    cfg,
                    "ALPHA_RESUME_INTERVAL",
                    cfg.float("ALPHA_RESUME_INTERVAL", 55.0)?
                )?),
            );
            cc.insert(
                "decrease_interval".into(),
                json!(us_str(
                    cfg,
                    "RATE_DECREASE_INTERVAL",
                    cfg.float("RATE_DECREASE_INTERVAL", 4.0)?
                )?),
            );
            cc.insert(
                "increase_interval".into(),
                json!(us_str(
                    cfg,
                    "RP_TIMER",
                    cfg.required_float("RP_TIMER", "DCQCN's rate-increase timer (us)")?
                )?),
            );
            cc.insert(
                "fast_recovery_times".into(),
                json!(cfg.uint("FAST_RECOVERY_TIMES", 5)?),
            );
            cc.insert(
                "rate_ai".into(),
                cfg.rate_json("RATE_AI", "DCQCN's additive increase")?,
            );
            cc.insert(
                "rate_hai".into(),
                cfg.rate_json("RATE_HAI", "DCQCN's hyper increase")?,
            );
            cc.insert("min_rate".into(), json!(rate_str(min_rate)));
            cc.insert(
                "clamp_target_rate".into(),
                json!(cfg.flag("CLAMP_TARGET_RATE", false)?),
            );
            // HPCC-sim's fixed attributes: RateOnFirstCnp 1.0, alpha 1 on the first CNP,
            // no byte counter, and the CNP flag of an ACK acts as a CNP.
            cc.insert("rate_on_first_cnp".into(), json!(1.0));
            cc.insert("initial_alpha".into(), json!(1.0));
            cc.insert("ece_as_cnp".into(), json!(true));
            int_bytes = 0;
        }
        3 => {
            cc.insert("algorithm".into(), json!("hpcc"));
            cc.insert("eta".into(), json!(cfg.float("U_TARGET", 0.95)?));
            cc.insert("max_stage".into(), json!(cfg.uint("MI_THRESH", 5)?));
            cc.insert(
                "rate_ai".into(),
                cfg.rate_json("RATE_AI", "HPCC's additive increase")?,
            );
            cc.insert("min_rate".into(), json!(rate_str(min_rate)));
            cc.insert("fast_react".into(), json!(cfg.flag("FAST_REACT", true)?));
            if !cfg.has("MULTI_RATE") {
                return Err(cfg.err(
                    "MULTI_RATE",
                    "missing: HPCC-sim defaults it to 1 (per-hop rates), which incast does not support; write `MULTI_RATE 0`",
                ));
            }
            int_bytes = HPCC_INT_BYTES;
        }
        7 => {
            cc.insert("algorithm".into(), json!("timely"));
            cc.insert(
                "rate_ai".into(),
                cfg.rate_json("RATE_AI", "TIMELY's additive increase")?,
            );
            cc.insert(
                "rate_hai".into(),
                cfg.rate_json("RATE_HAI", "TIMELY's hyper increase")?,
            );
            cc.insert("min_rate".into(), json!(rate_str(min_rate)));
            // HPCC-sim's fixed TIMELY attributes (rdma-hw.cc), stated so incast's defaults cannot drift.
            cc.insert("ewma_alpha".into(), json!(0.875));
            cc.insert("beta".into(), json!(0.8));
            cc.insert("t_low".into(), json!("50us"));
            cc.insert("t_high".into(), json!("500us"));
            cc.insert("min_rtt".into(), json!("20us"));
            cc.insert("hai_threshold".into(), json!(5));
            int_bytes = TIMELY_TS_BYTES;
        }
        8 => {
            cc.insert("algorithm".into(), json!("dctcp"));
            cc.insert(
                "g".into(),
                json!(cfg.required_float("EWMA_GAIN", "DCTCP's alpha gain g")?),
            );
            cc.insert(
                "rate_ai".into(),
                json!(rate_str(cfg.rate("DCTCP_RATE_AI", Some("1000Mb/s"), "")?)),
            );
            cc.insert("min_rate".into(), json!(rate_str(min_rate)));
            cc.insert("initial_alpha".into(), json!(1.0));
            int_bytes = 0;
        }
        10 => {
            return Err(cfg.err(
                "CC_MODE",
                "10 (HPCC-PINT) is not supported; use 3 (HPCC with full INT)",
            ))
        }
        m => {
            let msg = format!("{m} is not a congestion control of HPCC-sim");
            return Err(cfg.err("CC_MODE", msg + " (1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP)"));
        }
    }
    // Keys of the other algorithms are read (so malformed values are reported) but only the
    // chosen algorithm's keys take effect, as in HPCC-sim.
    for k in [
        "EWMA_GAIN",
        "ALPHA_RESUME_INTERVAL",
        "RATE_DECREASE_INTERVAL",
        "RP_TIMER",
        "U_TARGET",
    ] {
        cfg.float(k, 0.0)?;
    }
    for k in ["FAST_RECOVERY_TIMES", "MI_THRESH"] {
        cfg.uint(k, 0)?;
    }
    for k in ["RATE_AI", "RATE_HAI", "DCTCP_RATE_AI"] {
        if cfg.has(k) {
            cfg.rate(k, None, "")?;
        }
    }
    cfg.flag("CLAMP_TARGET_RATE", false)?;
    cfg.flag("FAST_REACT", true)?;
    let int_multi = cfg.uint("INT_MULTI", 1)?;
    if int_multi == 0 {
        return Err(cfg.err("INT_MULTI", "must be at least 1"));
    }

    // --- NIC
    let ack_interval = cfg.uint("L2_ACK_INTERVAL", 0)?;
    if ack_interval != 1 {
        return Err(cfg.err(
            "L2_ACK_INTERVAL",
            format!(
                "{ack_interval} is not supported: incast ACKs every packet (`L2_ACK_INTERVAL 1`; \
                 HPCC-sim's 0 disables ACKs and values above 1 degenerate to per-packet ACKs, issue #65)"
            ),
        ));
    }
    let chunk = cfg.uint("L2_CHUNK_SIZE", 0)?;
    let back_to_chunk = cfg.flag("L2_BACK_TO_ZERO", false)?;
    if back_to_chunk && chunk == 0 {
        return Err(cfg.err(
            "L2_CHUNK_SIZE",
            "L2_BACK_TO_ZERO 1 needs a positive L2_CHUNK_SIZE",
        ));
    }
    let has_win = cfg.flag("HAS_WIN", true)?;
    let var_win = cfg.flag("VAR_WIN", false)?;
    let window = match (has_win, var_win) {
        (false, _) => "none",
        (true, false) => "fixed",
        (true, true) => "variable",
    };
    let global_t = cfg.flag("GLOBAL_T", true)?;
    let rate_bound = cfg.flag("RATE_BOUND", true)?;
    let ack_high_prio = cfg.flag("ACK_HIGH_PRIO", false)?;
    let stop_s = cfg.float("SIMULATOR_STOP_TIME", 3.01)?;
    let stop_ns = seconds_to_ns(cfg.one("SIMULATOR_STOP_TIME")?.unwrap_or("3.01"))
        .filter(|&ns| ns > 0)
        .ok_or_else(|| {
            cfg.err(
                "SIMULATOR_STOP_TIME",
                format!("{stop_s} is not a positive time"),
            )
        })?;

    // --- topology
    let mut host_ids = vec![];
    let mut switch_ids = vec![];
    let mut host_index = vec![u32::MAX; topo.n_nodes as usize];
    for id in 0..topo.n_nodes {
        if topo.is_switch[id as usize] {
            switch_ids.push(id);
        } else {
            host_index[id as usize] = host_ids.len() as u32;
            host_ids.push(id);
        }
    }
    // Switch tiers: hops from the nearest host.
    let mut tier = vec![u32::MAX; topo.n_nodes as usize];
    let mut q: VecDeque<u32> = host_ids.iter().copied().collect();
    for &h in &host_ids {
        tier[h as usize] = 0;
    }
    while let Some(n) = q.pop_front() {
        for &(m, _) in &topo.adj[n as usize] {
            if tier[m as usize] == u32::MAX {
                tier[m as usize] = tier[n as usize] + 1;
                q.push_back(m);
            }
        }
    }
    let node_name = |id: u32| -> String {
        if topo.is_switch[id as usize] {
            format!("s{id}")
        } else {
            format!("h{id}")
        }
    };
    let switches: Vec<Value> = switch_ids
        .iter()
        .map(|&s| {
            let t = tier[s as usize].clamp(1, 255);
            if t == 1 {
                json!(node_name(s))
            } else {
                json!({"name": node_name(s), "tier": t})
            }
        })
        .collect();
    let links: Vec<Value> = topo
        .links
        .iter()
        .map(|l| {
            json!({"a": node_name(l.a), "b": node_name(l.b), "rate": rate_str(l.rate), "delay": time_str(l.delay)})
        })
        .collect();
    let host_names: Vec<String> = host_ids.iter().map(|&h| node_name(h)).collect();

    // --- flows
    let mut sport_next: BTreeMap<u32, u32> = BTreeMap::new();
    let mut flows = Vec::with_capacity(raw_flows.len());
    let mut rtt_cache: BTreeMap<u32, Vec<Option<(u64, u64)>>> = BTreeMap::new();
    let mut priorities = BTreeSet::new();
    let mut last_start = 0;
    let ferr =
        |f: &RawFlow, m: String| ScenarioError::new("FLOW_FILE", format!("line {}: {m}", f.line));
    for f in raw_flows {
        for (what, id) in [("source", f.src), ("destination", f.dst)] {
            if id >= topo.n_nodes || topo.is_switch[id as usize] {
                return Err(ferr(
                    f,
                    format!("{what} {id} is not a host of the topology"),
                ));
            }
        }
        if f.src == f.dst {
            return Err(ferr(
                f,
                format!("source and destination are both node {}", f.src),
            ));
        }
        if f.size == 0 || f.size > u32::MAX as u64 {
            return Err(ferr(
                f,
                format!("size {} is outside 1..2^32-1 bytes", f.size),
            ));
        }
        if !(1..=7).contains(&f.pg) {
            return Err(ferr(
                f,
                format!("priority {} is not a data queue of HPCC-sim (1..7)", f.pg),
            ));
        }
        if f.dport > u16::MAX as u32 {
            return Err(ferr(f, format!("dport {} does not fit 16 bits", f.dport)));
        }
        if f.start_ns < last_start {
            return Err(ferr(
                f,
                "start times must not decrease (HPCC-sim starts flows in file order)".into(),
            ));
        }
        last_start = f.start_ns;
        priorities.insert(f.pg as u8);
        let counter = sport_next.entry(f.src).or_insert(FIRST_SPORT as u32);
        let sport = *counter;
        if sport > u16::MAX as u32 {
            return Err(ferr(f, format!("host {} runs out of source ports", f.src)));
        }
        *counter += 1;
        let rtts = rtt_cache
            .entry(f.dst)
            .or_insert_with(|| pair_rtt_to(topo, f.dst, payload));
        let (rtt, bw) = rtts[f.src as usize]
            .ok_or_else(|| ferr(f, format!("no path from node {} to node {}", f.src, f.dst)))?;
        flows.push(HpccFlow {
            src_id: f.src,
            dst_id: f.dst,
            src: host_index[f.src as usize],
            dst: host_index[f.dst as usize],
            priority: f.pg as u8,
            sport: sport as u16,
            dport: f.dport as u16,
            size: f.size,
            start_ns: f.start_ns,
            standalone_fct_ns: standalone_fct_ns(f.size, payload, rtt, bw),
        });
    }
    if priorities.len() > 1 {
        let list: Vec<String> = priorities.iter().map(|p| p.to_string()).collect();
        return Err(ScenarioError::new(
            "FLOW_FILE",
            format!(
                "the flows use priorities {}; incast imports one data priority (HPCC-sim serves \
                 data queues round robin, incast's switches strict priority)",
                list.join(", ")
            ),
        ));
    }
    let data_class = priorities.iter().next().copied().unwrap_or(3);
    let ctrl_class: u8 = if ack_high_prio { 7 } else { 3 };
    if ack_high_prio && data_class == 7 {
        return Err(ScenarioError::new(
            "ACK_HIGH_PRIO",
            "the flows use priority 7, which incast reserves for ACKs when ACK_HIGH_PRIO is 1",
        ));
    }

    // --- switches
    let buffer_mb = cfg.uint("BUFFER_SIZE", 16)?;
    if buffer_mb == 0 {
        return Err(cfg.err("BUFFER_SIZE", "must be at least 1 (MB)"));
    }
    let ecn = if cfg.flag("ENABLE_QCN", true)? {
        let kmin = cfg.rate_map("KMIN_MAP")?;
        let kmax = cfg.rate_map("KMAX_MAP")?;
        let pmax = cfg.rate_map("PMAX_MAP")?;
        let port_rates: BTreeSet<u64> = topo
            .links
            .iter()
            .filter(|l| topo.is_switch[l.a as usize] || topo.is_switch[l.b as usize])
            .map(|l| l.rate.0)
            .collect();
        let mut levels = vec![];
        for &r in &port_rates {
            let get = |m: &[(u64, f64)], key: &str| -> Result<f64, ScenarioError> {
                m.iter().find(|x| x.0 == r).map(|x| x.1).ok_or_else(|| {
                    cfg.err(
                        key,
                        format!(
                            "no entry for {} switch ports (HPCC-sim requires one per link rate)",
                            Rate(r)
                        ),
                    )
                })
            };
            let (lo, hi, p) = (
                get(&kmin, "KMIN_MAP")?,
                get(&kmax, "KMAX_MAP")?,
                get(&pmax, "PMAX_MAP")?,
            );
            if lo > hi {
                return Err(cfg.err(
                    "KMIN_MAP",
                    format!("kmin {lo} KB exceeds kmax {hi} KB at {}", Rate(r)),
                ));
            }
            if p > 1.0 {
                return Err(cfg.err("PMAX_MAP", format!("pmax {p} at {} is above 1", Rate(r))));
            }
            // HPCC-sim's thresholds are in KB (x 1000, switch-mmu.cc).
            levels.push(json!({
                "rate": rate_str(Rate(r)),
                "kmin": (lo * 1000.0).round() as u64,
                "kmax": (hi * 1000.0).round() as u64,
                "pmax": p,
            }));
        }
        json!({"kind": "red_by_rate", "levels": levels, "at": "dequeue"})
    } else {
        for k in ["KMIN_MAP", "KMAX_MAP", "PMAX_MAP"] {
            if cfg.has(k) {
                cfg.rate_map(k)?;
            }
        }
        json!({"kind": "off"})
    };
    // PFC headroom: HPCC-sim gives every switch port 3 x rate x delay.
    let headrooms: BTreeSet<u64> = topo
        .links
        .iter()
        .flat_map(|l| {
            let h = l.rate.0 as u128 * (l.delay / NS) as u128 / 8 / 1_000_000_000 * 3;
            let n = topo.is_switch[l.a as usize] as usize + topo.is_switch[l.b as usize] as usize;
            std::iter::repeat_n(h as u64, n)
        })
        .collect();
    let mut pfc = json!({
        "classes": [data_class],
        "threshold": {"kind": "dynamic", "alpha": 0.125, "scale_with_rate": true},
        "reserve": HPCC_PFC_RESERVE,
        "resume_offset": HPCC_PFC_RESUME_OFFSET,
        "mode": "until_resume",
    });
    if headrooms.len() == 1 {
        pfc["headroom"] = json!(headrooms.iter().next().copied().unwrap_or(0));
    }
    let mut switch = json!({
        "buffer": buffer_mb * 1024 * 1024,
        "ecn": ecn,
        "pfc": pfc,
    });
    if ctrl_class != data_class {
        // HPCC-sim never marks its control queue.
        switch["classes"] = json!([{"class": ctrl_class, "ecn": {"kind": "off"}}]);
    }

    let mut rdma = json!({
        "cc": Value::Object(cc),
        "payload": payload,
        "header": HPCC_HEADER,
        "int_bytes": int_bytes,
        "ack_size": (46 + int_bytes).max(60),
        "ack_interval": 1,
        "data_class": data_class,
        "ctrl_class": ctrl_class,
        "cnp_mode": "ack_flag",
        "window": window,
        "base_rtt": if global_t { "global_max" } else { "per_pair" },
        "rate_bound": rate_bound,
        "back_to_chunk": back_to_chunk,
    });
    if chunk > 0 {
        rdma["chunk"] = json!(chunk);
    }

    let sample_queues = qlen_start < stop_ns && qlen_end > qlen_start;
    let flow_file = format!("{name}_flows.csv");
    let mut value = json!({
        "name": name,
        "description": "Imported from an HPCC simulator configuration.",
        "seed": 1,
        "stop": time_str(stop_ns * NS),
        "topology": {
            "kind": "explicit",
            "hosts": host_names,
            "switches": switches,
            "links": links,
        },
        "switch": switch,
        "rdma": rdma,
        "workload": {"flow_file": flow_file},
    });
    // Slowdowns relative to HPCC's own standalone FCT, as HPCC reports them.
    value["metrics"] = json!({"ideal_fct": "hpcc"});
    if !sample_queues {
        value["metrics"]["queue_ports"] = json!("none");
    }
    let scenario = scenario_from_value(&value)?;

    let mut csv = String::with_capacity(32 * flows.len() + 40);
    csv.push_str("src,dst,size_bytes,start_ns,class\n");
    for f in &flows {
        csv.push_str(&format!(
            "h{},h{},{},{},{}\n",
            f.src_id, f.dst_id, f.size, f.start_ns, f.priority
        ));
    }
    Ok(HpccImport {
        scenario,
        scenario_value: value,
        flows_csv: csv,
        dports: flows.iter().map(|f| f.dport).collect(),
        sports: flows.iter().map(|f| f.sport).collect(),
        flows,
        host_ids,
        switch_ids,
        config_path: PathBuf::new(),
        topology_path: PathBuf::new(),
        flows_path: PathBuf::new(),
    })
}

fn scenario_from_value(value: &Value) -> Result<ScenarioConfig, ScenarioError> {
    serde_path_to_error::deserialize::<_, ScenarioConfig>(value).map_err(|e| {
        ScenarioError::new(
            e.path().to_string(),
            format!(
                "the imported scenario does not fit incast's scenario format (a bug in the HPCC import): {}",
                e.inner()
            ),
        )
    })
}

fn strip_nulls(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| !x.is_null())
                .map(|(k, x)| (k.clone(), strip_nulls(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_nulls).collect()),
        other => other.clone(),
    }
}

impl HpccImport {
    /// The name of the flows CSV the scenario refers to (`workload.flow_file`).
    pub fn flow_file(&self) -> &str {
        self.scenario
            .workload
            .flow_file
            .as_deref()
            .unwrap_or("flows.csv")
    }

    /// Points `workload.flow_file` at `name` (relative to the scenario file).
    pub fn set_flow_file(&mut self, name: &str) {
        self.scenario.workload.flow_file = Some(name.to_string());
        self.scenario_value["workload"]["flow_file"] = Value::String(name.to_string());
    }

    /// The scenario as a TOML document (only the keys the import sets; the rest are
    /// incast's defaults).
    pub fn to_toml(&self) -> Result<String, ScenarioError> {
        let v: toml::Value = serde_json::from_value(strip_nulls(&self.scenario_value))
            .map_err(|e| ScenarioError::new("", format!("cannot convert to TOML: {e}")))?;
        let body = toml::to_string_pretty(&v)
            .map_err(|e| ScenarioError::new("", format!("cannot write TOML: {e}")))?;
        let mut head = String::from(
            "# Converted from an HPCC simulator experiment by `incast import-hpcc`.\n",
        );
        if !self.config_path.as_os_str().is_empty() {
            head += &format!(
                "# config: {}\n# topology: {}\n# flows: {}\n",
                self.config_path.display(),
                self.topology_path.display(),
                self.flows_path.display()
            );
        }
        head += "# Key mapping: docs/hpcc-interop.md\n\n";
        Ok(head + &body)
    }

    /// A validated, runnable [`Scenario`] with the flows inline (no CSV file needed).
    pub fn runnable(&self, base_dir: &Path) -> Result<Scenario, ScenarioError> {
        let mut cfg = self.scenario.clone();
        cfg.workload.flow_file = None;
        cfg.workload.flows = self
            .flows
            .iter()
            .map(|f| FlowConfig {
                src: HostRef::Index(f.src),
                dst: HostRef::Index(f.dst),
                size: SizeValue(f.size),
                start: TimeValue(f.start_ns * NS),
                class: Some(f.priority),
            })
            .collect();
        Scenario::from_config(cfg, base_dir)
    }
}

// ---------------------------------------------------------------------------
// Output

fn ps_to_ns(ps: u64) -> u64 {
    (ps + 500) / 1000
}

/// Writes `fct.txt` in HPCC-sim's format: one line per finished flow, in completion order
/// (ties by flow id). Returns the number of lines.
pub fn write_fct(
    imp: &HpccImport,
    results: &crate::Results,
    out: &mut dyn Write,
) -> io::Result<usize> {
    write_fct_table(imp, &results.flows, out)
}

/// [`write_fct`] from a flows table (`flow_id`, `finished`, `start_ps`, `fct_ps`, `finish_ps`).
pub fn write_fct_table(imp: &HpccImport, flows: &Table, out: &mut dyn Write) -> io::Result<usize> {
    let bad = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
    let col64 = |n: &str| match flows.get(n) {
        Some(Column::U64(v)) => Ok(v.as_slice()),
        _ => Err(bad(format!("the flows table has no u64 column `{n}`"))),
    };
    let ids = col64("flow_id")?;
    let start = col64("start_ps")?;
    let fct = col64("fct_ps")?;
    let finish = col64("finish_ps")?;
    let finished = match flows.get("finished") {
        Some(Column::U8(v)) => v.as_slice(),
        _ => return Err(bad("the flows table has no u8 column `finished`".into())),
    };
    let mut rows: Vec<usize> = (0..ids.len()).filter(|&i| finished[i] != 0).collect();
    rows.sort_by_key(|&i| (finish[i], ids[i]));
    for &i in &rows {
        let f = imp.flows.get(ids[i] as usize).ok_or_else(|| {
            bad(format!(
                "flow id {} is not one of the {} imported flows",
                ids[i],
                imp.flows.len()
            ))
        })?;
        writeln!(
            out,
            "{} {} {} {} {} {} {} {}",
            format_ip(f.src_id),
            format_ip(f.dst_id),
            f.sport,
            f.dport,
            f.size,
            ps_to_ns(start[i]),
            ps_to_ns(fct[i]),
            f.standalone_fct_ns
        )?;
    }
    Ok(rows.len())
}

/// The PFC events of a results table with columns `time_ps`, `node`, `port`, `class`, `event`.
pub fn pfc_rows(table: &Table) -> Result<Vec<PfcEventRow>, String> {
    if table.columns.is_empty() {
        return Ok(vec![]);
    }
    let time = match table.get("time_ps") {
        Some(Column::U64(v)) => v,
        _ => return Err("the PFC table has no u64 column `time_ps`".into()),
    };
    let u32col = |n: &str| match table.get(n) {
        Some(Column::U32(v)) => Ok(v),
        _ => Err(format!("the PFC table has no u32 column `{n}`")),
    };
    let u8col = |n: &str| match table.get(n) {
        Some(Column::U8(v)) => Ok(v),
        _ => Err(format!("the PFC table has no u8 column `{n}`")),
    };
    let (node, port, class, event) = (
        u32col("node")?,
        u32col("port")?,
        u8col("class")?,
        u8col("event")?,
    );
    Ok((0..time.len())
        .map(|i| PfcEventRow {
            time_ps: time[i],
            node: node[i],
            port: port[i],
            class: class[i],
            event: event[i],
        })
        .collect())
}

/// Writes `pfc.txt` in HPCC-sim's format: `time_ns node_id node_type if_index type` in time
/// order, where `node_names` are the run's node names (`h<id>` / `s<id>` from the import).
pub fn write_pfc_rows(
    node_names: &[String],
    rows: &[PfcEventRow],
    out: &mut dyn Write,
) -> io::Result<usize> {
    let bad = |m: String| io::Error::new(io::ErrorKind::InvalidData, m);
    // HPCC's file knows pauses (1) and resumes (0) only: watchdog events stay out.
    let mut order: Vec<usize> = (0..rows.len()).filter(|&i| rows[i].event <= 1).collect();
    order.sort_by_key(|&i| rows[i].time_ps);
    for &i in &order {
        let r = &rows[i];
        let name = node_names
            .get(r.node as usize)
            .ok_or_else(|| bad(format!("PFC event at unknown node {}", r.node)))?;
        let (kind, id) = match (
            name.as_bytes().first(),
            name.get(1..).and_then(|s| s.parse::<u32>().ok()),
        ) {
            (Some(b'h'), Some(id)) => (0, id),
            (Some(b's'), Some(id)) => (1, id),
            _ => {
                return Err(bad(format!(
                    "node `{name}` is not named like an imported HPCC node (h<id> or s<id>)"
                )))
            }
        };
        writeln!(
            out,
            "{} {} {} {} {}",
            ps_to_ns(r.time_ps),
            id,
            kind,
            r.port + 1,
            r.event
        )?;
    }
    Ok(order.len())
}

/// Writes `pfc.txt` for a run of an imported scenario.
pub fn write_pfc(results: &crate::Results, out: &mut dyn Write) -> io::Result<usize> {
    let rows = pfc_rows(&results.pfc).map_err(|m| io::Error::new(io::ErrorKind::InvalidData, m))?;
    write_pfc_rows(&results.node_names, &rows, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHARED: &str = "/work/shared/hpcc-format";

    fn shared(name: &str) -> Option<PathBuf> {
        let p = Path::new(SHARED).join(name);
        p.is_file().then_some(p)
    }

    /// Two hosts under one ToR (ids 0, 1), a third host (3) behind a second switch (4).
    const TOPO: &str = "5 2 4\n2 4\n0 2 100Gbps 1000ns 0\n1 2 100Gbps 1000ns 0\n2 4 400Gbps 1000ns 0\n3 4 100Gbps 1000ns 0\n";
    const FLOWS: &str = "3\n0 1 3 100 1000 2.0\n0 3 3 200 1000000 2.000001\n1 0 3 100 5 2.000002\n";

    fn base_config() -> String {
        "ENABLE_QCN 1\nUSE_DYNAMIC_PFC_THRESHOLD 1\nPACKET_PAYLOAD_SIZE 1000\n\
         TOPOLOGY_FILE t.txt\nFLOW_FILE f.txt\nFCT_OUTPUT_FILE mix/fct.txt\nSIMULATOR_STOP_TIME 2.1\n\
         CC_MODE 1\nALPHA_RESUME_INTERVAL 1\nRATE_DECREASE_INTERVAL 4\nCLAMP_TARGET_RATE 0\nRP_TIMER 300\n\
         EWMA_GAIN 0.00390625\nFAST_RECOVERY_TIMES 1\nRATE_AI 20Mb/s\nRATE_HAI 200Mb/s\nMIN_RATE 1000Mb/s\n\
         ERROR_RATE_PER_LINK 0.0000\nL2_CHUNK_SIZE 4000\nL2_ACK_INTERVAL 1\nL2_BACK_TO_ZERO 0\n\
         HAS_WIN 0\nGLOBAL_T 1\nVAR_WIN 0\nFAST_REACT 0\nU_TARGET 0.95\nMI_THRESH 0\nINT_MULTI 1\n\
         MULTI_RATE 0\nSAMPLE_FEEDBACK 0\nRATE_BOUND 1\nACK_HIGH_PRIO 1\nLINK_DOWN 0 0 0\nENABLE_TRACE 0\n\
         KMAX_MAP 2 100000000000 1600 400000000000 6400\nKMIN_MAP 2 100000000000 400 400000000000 1600\n\
         PMAX_MAP 2 100000000000 0.20 400000000000 0.20\nBUFFER_SIZE 32\n"
            .to_string()
    }

    fn with(config: &str, key: &str, line: &str) -> String {
        config
            .lines()
            .map(|l| {
                if l.split_whitespace().next() == Some(key) {
                    line.to_string()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn ips_are_formatted_like_hpcc() {
        assert_eq!(format_ip(0), "0b000001");
        assert_eq!(format_ip(13), "0b000d01");
        assert_eq!(format_ip(300), "0b012c01");
    }

    #[test]
    fn ns3_rates_and_seconds_parse() {
        assert_eq!(ns3_rate("20Mb/s").unwrap(), Rate(20_000_000));
        assert_eq!(ns3_rate("100Gbps").unwrap(), Rate::gbps(100));
        assert_eq!(ns3_rate("1MBps").unwrap(), Rate(8_000_000));
        assert!(ns3_rate("5 parsecs").is_err());
        assert_eq!(seconds_to_ns("2.000000962"), Some(2_000_000_962));
        assert_eq!(seconds_to_ns("2"), Some(2_000_000_000));
        assert_eq!(seconds_to_ns("0.0000000015"), Some(2));
        assert_eq!(seconds_to_ns("4.00"), Some(4_000_000_000));
        assert_eq!(seconds_to_ns("-1"), None);
    }

    #[test]
    fn converts_a_small_experiment() {
        let imp = import_texts("small", &base_config(), TOPO, FLOWS).unwrap();
        assert_eq!(imp.host_ids, vec![0, 1, 3]);
        assert_eq!(imp.switch_ids, vec![2, 4]);
        // Source ports count per source host from 10000, in file order.
        assert_eq!(imp.sports, vec![10000, 10001, 10000]);
        assert_eq!(imp.dports, vec![100, 200, 100]);
        assert_eq!(
            imp.flows_csv,
            "src,dst,size_bytes,start_ns,class\nh0,h1,1000,2000000000,3\nh0,h3,1000000,2000001000,3\nh1,h0,5,2000002000,3\n"
        );
        let s = &imp.scenario;
        assert_eq!(s.stop, Some(TimeValue(2_100 * crate::units::MS)));
        assert_eq!(s.switch.buffer, SizeValue(32 * 1024 * 1024));
        let rd = &imp.scenario_value["rdma"];
        assert_eq!(rd["cnp_mode"], "ack_flag");
        assert_eq!(rd["ctrl_class"], 7);
        assert_eq!(rd["int_bytes"], 0);
        assert_eq!(rd["ack_size"], 60);
        assert_eq!(rd["window"], "none");
        // No QLEN_MON_* keys: HPCC-sim's defaults (2 s to 2.1 s) are inside the run.
        assert_eq!(imp.scenario_value["metrics"].get("queue_ports"), None);
        assert_eq!(imp.scenario_value["metrics"]["ideal_fct"], "hpcc");
        let sw = &imp.scenario_value["switch"];
        assert_eq!(sw["ecn"]["levels"][0]["kmin"], 400_000);
        assert_eq!(sw["ecn"]["levels"][1]["kmax"], 6_400_000);
        assert_eq!(sw["pfc"]["reserve"], 4096);
        // 100G and 400G ports: headrooms differ, so the formula default stays.
        assert!(sw["pfc"].get("headroom").is_none());
        let toml = imp.to_toml().unwrap();
        assert!(toml.contains("flow_file = \"small_flows.csv\""), "{toml}");
        let back: ScenarioConfig = toml::from_str(&toml).unwrap();
        assert_eq!(back.name, "small");
    }

    #[test]
    fn standalone_fct_follows_hpcc_qp_finish() {
        // Intra-rack, 2 x 100G, 1 us links: RTT = 4 us + 2 x 80 ns; 1048 B at 100G = 83.84 -> 83 ns.
        assert_eq!(standalone_fct_ns(1000, 1000, 4160, 100_000_000_000), 4243);
        let imp = import_texts("small", &base_config(), TOPO, FLOWS).unwrap();
        assert_eq!(imp.flows[0].standalone_fct_ns, 4243);
        // Node 0 -> 3: 100G, 400G, 100G; RTT = 6 us + 80 + 20 + 80 ns; 1e6 B + 1000 x 48 B at 100G.
        assert_eq!(imp.flows[1].standalone_fct_ns, 6180 + 83_840);
        // A 5-byte flow: one packet of 53 B.
        assert_eq!(imp.flows[2].standalone_fct_ns, 4160 + 4);
    }

    #[test]
    fn unknown_and_unsupported_keys_are_errors_naming_the_key() {
        let cfg = base_config() + "BOGUS_KNOB 3\n";
        let e = import_texts("x", &cfg, TOPO, FLOWS).unwrap_err();
        assert_eq!(e.path, "BOGUS_KNOB");
        assert!(
            e.message.contains("BOGUS_KNOB") && e.message.contains(":39:"),
            "{e}"
        );
        for (key, line) in [
            ("ERROR_RATE_PER_LINK", "ERROR_RATE_PER_LINK 0.1"),
            ("LINK_DOWN", "LINK_DOWN 1000 2 4"),
            ("MULTI_RATE", "MULTI_RATE 1"),
            ("SAMPLE_FEEDBACK", "SAMPLE_FEEDBACK 1"),
            ("ENABLE_TRACE", "ENABLE_TRACE 1"),
            ("CC_MODE", "CC_MODE 10"),
            ("CC_MODE", "CC_MODE 2"),
            ("L2_ACK_INTERVAL", "L2_ACK_INTERVAL 0"),
            ("USE_DYNAMIC_PFC_THRESHOLD", "USE_DYNAMIC_PFC_THRESHOLD 0"),
            ("KMAX_MAP", "KMAX_MAP 1 100000000000 1600"),
            ("RATE_AI", "RATE_AI 20parsecs"),
        ] {
            let cfg = with(&base_config(), key, line);
            let e = import_texts("x", &cfg, TOPO, FLOWS).unwrap_err();
            assert_eq!(e.path, key, "{line}: {e}");
            assert!(e.message.contains(key), "{e}");
        }
        let e = import_texts("x", &(base_config() + "CC_MODE 3\n"), TOPO, FLOWS).unwrap_err();
        assert!(e.message.contains("twice"), "{e}");
        let lossy = TOPO.replace("0 2 100Gbps 1000ns 0\n", "0 2 100Gbps 1000ns 0.01\n");
        let e = import_texts("x", &base_config(), &lossy, FLOWS).unwrap_err();
        assert_eq!(e.path, "TOPOLOGY_FILE");
    }

    #[test]
    fn flow_file_problems_name_the_line() {
        let e = import_texts("x", &base_config(), TOPO, "2\n0 1 3 100 1000 2.0\n").unwrap_err();
        assert!(e.message.contains("announces 2"), "{e}");
        let e = import_texts("x", &base_config(), TOPO, "1\n0 2 3 100 1000 2.0\n").unwrap_err();
        assert!(
            e.message.contains("line 2") && e.message.contains("not a host"),
            "{e}"
        );
        let e = import_texts(
            "x",
            &base_config(),
            TOPO,
            "2\n0 1 3 100 1000 2.0\n1 0 3 100 1000 1.0\n",
        )
        .unwrap_err();
        assert!(e.message.contains("must not decrease"), "{e}");
    }

    #[test]
    fn hpcc_mode_sets_int_window_and_ack_priority() {
        let mut cfg = with(&base_config(), "CC_MODE", "CC_MODE 3");
        cfg = with(&cfg, "HAS_WIN", "HAS_WIN 1");
        cfg = with(&cfg, "VAR_WIN", "VAR_WIN 1");
        cfg = with(&cfg, "ACK_HIGH_PRIO", "ACK_HIGH_PRIO 0");
        cfg = with(&cfg, "FAST_REACT", "FAST_REACT 1");
        let imp = import_texts("hp", &cfg, TOPO, FLOWS).unwrap();
        let rd = &imp.scenario_value["rdma"];
        assert_eq!(rd["cc"]["algorithm"], "hpcc");
        assert_eq!(rd["int_bytes"], 42);
        assert_eq!(rd["ack_size"], 88);
        assert_eq!(rd["window"], "variable");
        assert_eq!(rd["ctrl_class"], 3);
        let cfg = with(&cfg, "VAR_WIN", "VAR_WIN 0");
        let imp = import_texts("hp", &cfg, TOPO, FLOWS).unwrap();
        assert_eq!(imp.scenario_value["rdma"]["window"], "fixed");
        // Absent MULTI_RATE defaults to 1 in HPCC-sim: refused.
        let cfg: String = cfg
            .lines()
            .filter(|l| !l.starts_with("MULTI_RATE"))
            .map(|l| format!("{l}\n"))
            .collect();
        let e = import_texts("hp", &cfg, TOPO, FLOWS).unwrap_err();
        assert_eq!(e.path, "MULTI_RATE");
    }

    #[test]
    fn every_supported_cc_mode_gives_a_valid_scenario() {
        for (mode, algo) in [(1, "dcqcn"), (3, "hpcc"), (7, "timely"), (8, "dctcp")] {
            let cfg = with(&base_config(), "CC_MODE", &format!("CC_MODE {mode}"));
            let imp =
                import_texts("m", &cfg, TOPO, FLOWS).unwrap_or_else(|e| panic!("{mode}: {e}"));
            assert_eq!(imp.scenario.rdma.as_ref().unwrap().cc.name(), algo);
            imp.runnable(Path::new("."))
                .unwrap_or_else(|e| panic!("{mode}: {e}"));
            let expected_int = match mode {
                3 => 42,
                7 => 8,
                _ => 0,
            };
            assert_eq!(imp.scenario_value["rdma"]["int_bytes"], expected_int);
        }
    }

    #[test]
    fn uniform_links_give_hpcc_headroom() {
        let topo = "4 1 3\n3\n0 3 100Gbps 1000ns 0\n1 3 100Gbps 1000ns 0\n2 3 100Gbps 1000ns 0\n";
        let flows = "1\n0 1 3 100 1000 2.0\n";
        let cfg = with(&base_config(), "KMAX_MAP", "KMAX_MAP 1 100000000000 1600");
        let cfg = with(&cfg, "KMIN_MAP", "KMIN_MAP 1 100000000000 400");
        let cfg = with(&cfg, "PMAX_MAP", "PMAX_MAP 1 100000000000 0.2");
        let imp = import_texts("u", &cfg, topo, flows).unwrap();
        assert_eq!(imp.scenario_value["switch"]["pfc"]["headroom"], 37_500);
    }

    #[test]
    fn writes_fct_and_pfc_lines() {
        let imp = import_texts("small", &base_config(), TOPO, FLOWS).unwrap();
        let mut flows = Table::default();
        flows.push("flow_id", Column::U64(vec![0, 1, 2]));
        flows.push(
            "start_ps",
            Column::U64(vec![
                2_000_000_000_000,
                2_000_001_000_000,
                2_000_002_000_000,
            ]),
        );
        flows.push(
            "finish_ps",
            Column::U64(vec![2_000_000_010_000, 0, 2_000_002_005_000]),
        );
        flows.push("fct_ps", Column::U64(vec![10_000, 0, 3_000]));
        flows.push("finished", Column::U8(vec![1, 0, 1]));
        let mut out = vec![];
        assert_eq!(write_fct_table(&imp, &flows, &mut out).unwrap(), 2);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "0b000001 0b000101 10000 100 1000 2000000000 10 4243\n0b000101 0b000001 10000 100 5 2000002000 3 4164\n"
        );
        let names: Vec<String> = ["h0", "h1", "h3", "s2", "s4"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let rows = [
            PfcEventRow {
                time_ps: 2_000_000_500_000,
                node: 4,
                port: 1,
                class: 3,
                event: 0,
            },
            PfcEventRow {
                time_ps: 2_000_000_100_000,
                node: 4,
                port: 0,
                class: 3,
                event: 1,
            },
            PfcEventRow {
                time_ps: 2_000_000_200_000,
                node: 0,
                port: 0,
                class: 3,
                event: 1,
            },
        ];
        let mut out = vec![];
        write_pfc_rows(&names, &rows, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "2000000100 4 1 1 1\n2000000200 0 0 1 1\n2000000500 4 1 2 0\n"
        );
    }

    #[test]
    fn shipped_configs_import() {
        let (Some(dcqcn), Some(hp95)) = (
            shared("config_fat_web30_10ms_dcqcn.txt"),
            shared("config_fat_web30_10ms_hp95.txt"),
        ) else {
            eprintln!("skipped: {SHARED} is not available");
            return;
        };
        let imp = import(&dcqcn, None, None).unwrap();
        assert_eq!(imp.flows.len(), 6706);
        assert_eq!(imp.flows_csv.lines().count(), 6707);
        assert_eq!(imp.host_ids.len(), 320);
        assert_eq!(imp.switch_ids.len(), 56);
        assert_eq!(imp.scenario.stop, Some(TimeValue(4 * crate::units::SEC)));
        assert_eq!(imp.scenario_value["rdma"]["cc"]["algorithm"], "dcqcn");
        assert_eq!(imp.flow_file(), "config_fat_web30_10ms_dcqcn_flows.csv");
        // QLEN_MON_START 99 s is after the stop time: no queue sampling.
        assert_eq!(imp.scenario_value["metrics"]["queue_ports"], "none");
        // The first flow: 13 -> 6, 24375 B, at 2.000000962 s.
        assert!(imp.flows_csv.lines().nth(1) == Some("h13,h6,24375,2000000962,3"));
        let hp = import(&hp95, None, None).unwrap();
        assert_eq!(hp.scenario_value["rdma"]["cc"]["algorithm"], "hpcc");
        assert_eq!(hp.scenario_value["rdma"]["window"], "variable");
        assert_eq!(hp.scenario_value["rdma"]["ctrl_class"], 3);
        hp.runnable(Path::new(SHARED)).unwrap();
        // The explicit topology builds and every flow validates.
        imp.runnable(Path::new(SHARED)).unwrap();
        // An override of the flow file.
        let short = import(&dcqcn, None, shared("web30_1ms.txt").as_deref()).unwrap();
        assert_eq!(short.flows.len(), 405);
    }

    #[test]
    fn fat_tree_standalone_fct_matches_the_spec_table() {
        let (Some(cfg), Some(_)) = (shared("config_fat_web30_10ms_dcqcn.txt"), shared("fat.txt"))
        else {
            eprintln!("skipped: {SHARED} is not available");
            return;
        };
        let text = std::fs::read_to_string(&cfg).unwrap();
        let topo = std::fs::read_to_string(Path::new(SHARED).join("fat.txt")).unwrap();
        let topo = parse_topology(&topo, "fat.txt").unwrap();
        // Hosts 0 and 1 share a ToR; host 0 and host 319 are in different pods.
        let to1 = pair_rtt_to(&topo, 1, 1000);
        let (rtt, bw) = to1[0].unwrap();
        assert_eq!((rtt, bw), (4160, 100_000_000_000));
        // Spec §3.1 (a): 4.244 us intra-rack 1 KB (HPCC-sim's integer ns: 4243), 12.544 us at 100 KB.
        assert_eq!(standalone_fct_ns(1000, 1000, rtt, bw), 4243);
        assert_eq!(standalone_fct_ns(100_000, 1000, rtt, bw), 12_544);
        assert_eq!(standalone_fct_ns(10_000_000, 1000, rtt, bw), 842_560);
        let to319 = pair_rtt_to(&topo, 319, 1000);
        let (rtt, bw) = to319[0].unwrap();
        assert_eq!((rtt, bw), (12_240, 100_000_000_000));
        // Spec: 12.324 us cross-pod 1 KB (integer: 12323), 96.08 us at 1 MB.
        assert_eq!(standalone_fct_ns(1000, 1000, rtt, bw), 12_323);
        assert_eq!(standalone_fct_ns(1_000_000, 1000, rtt, bw), 96_080);
        let _ = text;
    }
}
