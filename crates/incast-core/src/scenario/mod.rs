//! Scenario files: a whole experiment in one TOML (or JSON) document.
//!
//! ```toml
//! name = "leaf-spine websearch"
//! seed = 1
//! duration = "10ms"          # how long the generators create traffic
//!
//! [topology]
//! kind = "leaf_spine"
//! leaves = 8
//! spines = 4
//! hosts_per_leaf = 16
//! host_rate = "100Gbps"
//! fabric_rate = "400Gbps"
//!
//! [switch]
//! buffer = "12MB"
//! ecn = { kind = "step", k = "100KB" }
//!
//! [transport]
//! cc = "dctcp"
//!
//! [[workload.poisson]]
//! load = 0.5
//! cdf = "websearch"
//! ```
//!
//! Parsing rejects unknown keys and wrongly-typed values, naming the key path
//! and, for TOML text, the key's line; [`Scenario::from_toml_str`] then checks
//! everything that depends on more than one value (hosts exist, loads are at
//! most 1, CDFs are monotone, the switch buffer leaves every class room, ...)
//! so that a [`crate::Simulation`] never sees invalid input.
//!
//! The module is split by concern:
//!
//! * [`config`]: the serde structs of the format (and so its JSON Schema);
//! * `parse`: text to [`ScenarioConfig`], with errors that point at the key
//!   (inside inline and internally tagged tables too) and its line;
//! * `workload`, `switch`, `buffer`, `timing`: the cross-field checks;
//! * `sections`: the sections features own (`[cm]`, `[[workload.hotspot]]`),
//!   whose fields, defaults and checks a registry in lib.rs generates;
//! * `files`: reading the files a scenario names (CDFs, flow lists), capped
//!   in size and restricted to regular files.

mod buffer;
mod bulk;
pub mod config;
#[cfg(any(test, feature = "examples"))]
pub mod example_section;
mod memory;
mod nic;
mod parse;
mod sections;
mod switch;
mod timing;
mod transport;
mod workload;

pub use crate::files::{read_input_file, MAX_FLOW_FILE_BYTES, MAX_INPUT_FILE_BYTES};
pub use config::*;
pub use memory::{MemoryEstimate, BYTES_PER_PORT};
pub use nic::NicConfig;
pub(crate) use sections::{ScenarioSection, SwitchSection, WorkloadSection};
pub use timing::DEFAULT_STOP;
pub use transport::MAX_PACKET_BYTES;

use crate::params::NUM_CLASSES;
use crate::topology::Graph;
use crate::units::Ps;
use crate::workload::cdf::Cdf;
use std::fmt;
use std::path::{Path, PathBuf};

/// A scenario error: where (a key path such as `workload.poisson[0].load`,
/// and for TOML text the key's line when the key is in the text) and what,
/// with the fix.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
    /// 1-based line of the key in the TOML text (`None` for JSON input, for
    /// keys left at their default, and for errors about the whole file).
    pub line: Option<usize>,
}

impl ScenarioError {
    /// An error at key `path`. Values longer than about 60 characters are cut
    /// (with an ellipsis) in both the path and the message, and control
    /// characters escaped; a message about an unknown name that lists the
    /// known ones says which of them is closest ("did you mean").
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        let message = message.into();
        let message = match parse::did_you_mean(&message) {
            Some(name) => format!("{message}; did you mean `{name}`?"),
            None => message,
        };
        ScenarioError {
            path: parse::elide_path(&path.into()),
            message: parse::elide_values(&message),
            line: None,
        }
    }

    /// The same error at `line`.
    pub fn at_line(mut self, line: Option<usize>) -> Self {
        self.line = line;
        self
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let line = match self.line {
            Some(l) => format!(" (line {l})"),
            None => String::new(),
        };
        if self.path.is_empty() {
            write!(f, "scenario error{line}: {}", self.message)
        } else {
            write!(
                f,
                "scenario error at `{}`{line}: {}",
                self.path, self.message
            )
        }
    }
}
impl std::error::Error for ScenarioError {}

/// The largest scenario file read: 64 MiB (a scenario that lists a million
/// flows inline is about 60 MB; larger flow lists belong in `flow_file`).
pub const MAX_SCENARIO_FILE_BYTES: u64 = 64 << 20;

/// The longest scenario name, in characters: it names the output directory
/// (`incast-out/<name>/`, within any file system's 255-byte limit) and heads
/// every report.
pub const MAX_NAME_CHARS: usize = 128;

/// The most hosts one NIC port may serve (`[nic] hosts`).
pub const MAX_HOSTS_PER_NIC: u32 = 64;

/// A flow to start at a given time (from `workload.flows` or `workload.flow_file`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListedFlow {
    pub src: u32,
    pub dst: u32,
    /// Bytes to send; [`LONG_LIVED`] for a flow that sends until `stop`.
    pub size: u64,
    pub start: Ps,
    /// When the sender stops offering data ([`Ps::MAX`]: never).
    pub stop: Ps,
    pub class: u8,
    /// Index in [`Scenario::ccs`].
    pub cc: u8,
}

/// The size of a long-lived flow: more than any run can send (2^62 bytes
/// take 46 days at 10 Tb/s), and small enough that sequence arithmetic on
/// it cannot overflow. Such a flow ends only at its `stop`.
pub const LONG_LIVED: u64 = 1 << 62;

/// A `[[workload.bulk]]` group, resolved: hosts by index, times in ps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BulkGroup {
    pub src: u32,
    pub dst: u32,
    pub start: Ps,
    pub stop: Ps,
    pub on: Ps,
    pub off: Ps,
    pub class: u8,
    /// Index in [`Scenario::ccs`].
    pub cc: u8,
}

/// A validated scenario, ready to run.
#[derive(Clone, Debug)]
pub struct Scenario {
    pub config: ScenarioConfig,
    pub base_dir: PathBuf,
    pub graph: Graph,
    /// CDF of each `workload.poisson` entry.
    pub poisson_cdfs: Vec<Cdf>,
    /// Explicit flows, sorted by start time (stable).
    pub listed: Vec<ListedFlow>,
    /// Host indices of each `workload.poisson` / `workload.incast` group.
    pub poisson_hosts: Vec<Vec<u32>>,
    pub incast_hosts: Vec<Vec<u32>>,
    /// Size distribution of each `workload.incast` entry that gives `cdf`.
    pub incast_cdfs: Vec<Option<Cdf>>,
    /// Senders whose flows run the edge gate (`edge.hosts`; every host by default).
    pub edge_hosts: Vec<u32>,
    /// The TCP congestion controls of the run: `transport.cc` first, then
    /// each distinct one a workload group names (its index is the flows
    /// table's `cc` column and [`ListedFlow::cc`]).
    pub ccs: Vec<crate::transport::cc::CcConfig>,
    /// Index in `ccs` of each `workload.poisson` / `workload.incast` group.
    pub poisson_cc: Vec<u8>,
    pub incast_cc: Vec<u8>,
    /// The `workload.bulk` groups.
    pub bulk: Vec<BulkGroup>,
}

impl Scenario {
    /// A scenario of `config` over `graph` before validation resolves its
    /// workloads (every derived list empty).
    pub(crate) fn unresolved(config: ScenarioConfig, base_dir: PathBuf, graph: Graph) -> Self {
        Scenario {
            config,
            base_dir,
            graph,
            poisson_cdfs: vec![],
            listed: vec![],
            poisson_hosts: vec![],
            incast_hosts: vec![],
            incast_cdfs: vec![],
            edge_hosts: vec![],
            ccs: vec![],
            poisson_cc: vec![],
            incast_cc: vec![],
            bulk: vec![],
        }
    }

    /// Parses and validates a TOML scenario. Relative file paths in it are relative to `base_dir`.
    /// Errors name the key path and the key's line.
    pub fn from_toml_str(text: &str, base_dir: &Path) -> Result<Scenario, ScenarioError> {
        let cfg = parse::toml_config(text)?;
        Scenario::from_config(cfg, base_dir).map_err(|e| {
            let line = parse::toml_line(text, &e.path);
            e.at_line(line)
        })
    }

    /// Parses and validates a JSON scenario (same structure as the TOML form).
    /// Errors name the key path only: JSON input usually comes from a program
    /// (the Python API serializes a dict), whose text positions mean nothing
    /// to the user; only a syntax error says where in the text it is.
    pub fn from_json_str(text: &str, base_dir: &Path) -> Result<Scenario, ScenarioError> {
        let cfg = parse::json_config(text)?;
        Scenario::from_config(cfg, base_dir)
    }

    /// Reads a `.toml` or `.json` scenario file (a regular file of at most
    /// [`MAX_SCENARIO_FILE_BYTES`]).
    pub fn from_file(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = read_input_file(path, MAX_SCENARIO_FILE_BYTES)
            .map_err(|e| ScenarioError::new("", format!("scenario file {e}")))?;
        let base = path
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_else(|| PathBuf::from("."));
        if path.extension().is_some_and(|e| e == "json") {
            Scenario::from_json_str(&text, &base)
        } else {
            Scenario::from_toml_str(&text, &base)
        }
    }

    /// The normalized scenario as JSON (every default filled in).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.config).expect("serializable")
    }

    /// JSON Schema of the scenario format.
    pub fn json_schema() -> String {
        let schema = schemars::schema_for!(ScenarioConfig);
        serde_json::to_string_pretty(&schema).expect("serializable")
    }

    pub fn name(&self) -> &str {
        &self.config.name
    }
    pub fn seed(&self) -> u64 {
        self.config.seed
    }
    pub fn set_seed(&mut self, seed: u64) {
        self.config.seed = seed;
    }

    /// Validates a parsed configuration. The graph has `[nic] hosts` hosts
    /// behind every NIC port of the topology.
    pub fn from_config(config: ScenarioConfig, base_dir: &Path) -> Result<Scenario, ScenarioError> {
        let mut graph = config
            .topology
            .build()
            .map_err(|(p, m)| ScenarioError::new(join("topology", &p), m))?;
        let per_nic = config.nic.hosts;
        if !(1..=MAX_HOSTS_PER_NIC).contains(&per_nic) {
            return Err(ScenarioError::new(
                "nic.hosts",
                format!(
                    "hosts behind each NIC port: 1 (the default) to {MAX_HOSTS_PER_NIC}, got {per_nic}"
                ),
            ));
        }
        if per_nic > 1 {
            graph = graph.with_hosts_per_nic(per_nic);
        }
        let mut sc = Scenario::unresolved(config, base_dir.to_path_buf(), graph);
        sc.validate()?;
        Ok(sc)
    }

    /// Every cross-field check, in the order a user would fix things: packet
    /// sizes and classes, the switch, the traffic, the clock, then whether
    /// the buffer leaves every class in use room.
    fn validate(&mut self) -> Result<(), ScenarioError> {
        self.validate_name()?;
        self.validate_transport()?;
        self.validate_rdma()?;
        self.config.switch.validate_sections(self)?;
        self.validate_transport_timers()?;
        self.switch_params()?;
        self.validate_workload()?;
        self.validate_timing()?;
        self.validate_buffer(&self.config.switch.class_moves())?;
        self.validate_edge()?;
        self.validate_nic()?;
        sections::validate(self)?;
        self.validate_routing()?;
        self.validate_memory()
    }

    /// `[routing]`: HPCC-sim's ECMP rule needs HPCC node ids in the names.
    fn validate_routing(&self) -> Result<(), ScenarioError> {
        match &self.config.routing {
            Some(r) if r.ecmp == config::EcmpRule::Hpcc => {
                crate::topology::hpcc_ecmp::node_ids(&self.graph)
                    .map(|_| ())
                    .map_err(|m| ScenarioError::new("routing.ecmp", m))
            }
            Some(r) if r.ecmp == config::EcmpRule::Spray => self.validate_spray(),
            _ => Ok(()),
        }
    }

    /// Packet spraying reorders a flow's packets: refused where the
    /// receiver or the NIC model cannot take that (a mechanism's refusal
    /// is in its own checks).
    fn validate_spray(&self) -> Result<(), ScenarioError> {
        let c = &self.config;
        let refuse = |why: &str| {
            Err(ScenarioError::new(
                "routing.ecmp",
                format!("\"spray\" {why}; use ecmp = \"flow\" (the default) with it"),
            ))
        };
        if c.rdma.is_some() {
            return refuse(
                "reorders a flow's packets, and RDMA's go-back-N receiver takes every \
                 out-of-order packet for a loss (a NACK and a resend of everything after it)",
            );
        }
        if c.nic.is_adapter() {
            return refuse(
                "cannot serve the adapter NIC model, which knows a flow by its packets' hash",
            );
        }
        Ok(())
    }

    /// `name`: at most [`MAX_NAME_CHARS`] characters, none of them a control
    /// character (the name is printed and becomes a directory).
    fn validate_name(&self) -> Result<(), ScenarioError> {
        let name = &self.config.name;
        let chars = name.chars().count();
        if chars > MAX_NAME_CHARS {
            return Err(ScenarioError::new(
                "name",
                format!(
                    "is {chars} characters long, more than the {MAX_NAME_CHARS} a name may have \
                     (it names the output directory); shorten it, and put the rest in \
                     `description`"
                ),
            ));
        }
        if name.chars().any(char::is_control) {
            return Err(ScenarioError::new(
                "name",
                format!(
                    "`{name}` holds a control character (an escape, a tab or a line break); a \
                     name is printed and names a directory: use letters, digits and punctuation"
                ),
            ));
        }
        Ok(())
    }

    /// Fan-in mix of incast entry `i`, as (fan_in, probability).
    pub fn incast_mix(&self, i: usize) -> Vec<(u32, f64)> {
        workload::incast_mix(&self.config.workload.incast[i], "").expect("validated")
    }
}

fn join(a: &str, b: &str) -> String {
    if b.is_empty() {
        a.to_string()
    } else {
        format!("{a}.{b}")
    }
}

pub(crate) fn check_class(c: u8, path: &str) -> Result<(), ScenarioError> {
    if (c as usize) < NUM_CLASSES {
        Ok(())
    } else {
        Err(ScenarioError::new(
            path,
            format!("class {c} does not exist; classes are 0..7"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scenario whose name is the TOML string `name` (quotes included).
    fn with_name(name: &str) -> Result<Scenario, ScenarioError> {
        let text = format!(
            "name = {name}\n[topology]\nkind = \"single_switch\"\nhosts = 2\n\
             link_rate = \"10Gbps\"\n[[workload.flows]]\nsrc = 0\ndst = 1\nsize = 1000\n"
        );
        Scenario::from_toml_str(&text, Path::new("."))
    }

    #[test]
    fn names_are_bounded_and_printable() {
        let quoted = |n: usize| format!("\"{}\"", "n".repeat(n));
        assert!(with_name(&quoted(MAX_NAME_CHARS)).is_ok());
        let e = with_name(&quoted(100_000)).unwrap_err();
        assert_eq!((e.path.as_str(), e.line), ("name", Some(1)));
        assert!(
            e.message
                .contains("100000 characters long, more than the 128"),
            "{e}"
        );
        assert!(e.to_string().len() < 300, "the name is not echoed: {e}");
        let e = with_name("\"a\\u001b[2Jb\"").unwrap_err();
        assert_eq!(e.path, "name");
        assert!(
            e.message
                .contains("`a\\u{1b}[2Jb` holds a control character"),
            "{e}"
        );
        assert!(!e.to_string().chars().any(char::is_control), "{e}");
    }
}
