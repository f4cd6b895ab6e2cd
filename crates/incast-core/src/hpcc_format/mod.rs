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
//! The parts, each a file:
//!
//! - [`config`], [`topology`], [`flows`]: reading the three files (syntax only, with
//!   HPCC-sim's defaults and errors naming the file, line and key);
//! - [`convert`]: building the scenario, one function per concern (run, congestion
//!   control, NIC, topology, flows, switches);
//! - [`write`]: the outputs.
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

mod config;
mod convert;
mod flows;
mod options;
mod topology;
mod write;

#[cfg(test)]
mod test_util;

pub use config::{known_keys, ns3_rate, output_keys};
pub use options::{AckChoice, ClockChoice, EcmpChoice, HeadroomChoice, ImportOptions};
pub use topology::standalone_fct_ns;
pub use write::{pfc_rows, write_fct, write_fct_table, write_pfc, write_pfc_rows};

use crate::config_types::{SizeValue, TimeValue};
use crate::scenario::{FlowConfig, HostRef, Scenario, ScenarioConfig, ScenarioError};
use crate::units::NS;
use config::Config;
use serde_json::Value;
use std::path::{Path, PathBuf};

pub use crate::topology::hpcc_ecmp::{node_ip, FIRST_SPORT};
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
/// overrides) and converts them, reproducing what HPCC-sim does (the default
/// [`ImportOptions`]). Relative file names in the configuration resolve against
/// the configuration's directory, falling back to their base name in that directory (the
/// shipped configurations say `mix/fat.txt`).
pub fn import(
    config: &Path,
    topology: Option<&Path>,
    flows: Option<&Path>,
) -> Result<HpccImport, ScenarioError> {
    import_with(config, topology, flows, &ImportOptions::default())
}

/// [`import`] with the given options.
pub fn import_with(
    config: &Path,
    topology: Option<&Path>,
    flows: Option<&Path>,
    options: &ImportOptions,
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
    let mut imp = convert::convert(
        &cfg,
        options,
        &name,
        &topology::parse_topology(&topo_text, &topo_path.display().to_string())?,
        &flows::parse_flows(&flow_text, &flow_path.display().to_string())?,
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
    import_texts_with(name, config, topology, flows, &ImportOptions::default())
}

/// [`import_texts`] with the given options.
pub fn import_texts_with(
    name: &str,
    config: &str,
    topology: &str,
    flows: &str,
    options: &ImportOptions,
) -> Result<HpccImport, ScenarioError> {
    let cfg = Config::parse(config, "config")?;
    convert::convert(
        &cfg,
        options,
        name,
        &topology::parse_topology(topology, "topology")?,
        &flows::parse_flows(flows, "flows")?,
    )
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
                size: Some(SizeValue(f.size)),
                start: TimeValue(f.start_ns * NS),
                stop: None,
                class: Some(f.priority),
                cc: None,
            })
            .collect();
        Scenario::from_config(cfg, base_dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ips_are_formatted_like_hpcc() {
        assert_eq!(format_ip(0), "0b000001");
        assert_eq!(format_ip(13), "0b000d01");
        assert_eq!(format_ip(300), "0b012c01");
    }
}
