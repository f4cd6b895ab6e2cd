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
//! Parsing rejects unknown keys and wrongly-typed values, naming the key path;
//! [`Scenario::from_toml_str`] then checks everything that depends on more
//! than one value (hosts exist, loads are at most 1, CDFs are monotone, ...)
//! so that a [`crate::Simulation`] never sees invalid input.

use crate::config_types::{RateValue, SizeValue, TimeValue};
use crate::net::pfc::PfcConfig;
use crate::net::switch::{Admission, Ecn, EcnRule, Scheduler, SwitchParams};
use crate::net::NUM_CLASSES;
use crate::rdma::RdmaConfig;
use crate::topology::{Graph, TopologyConfig};
use crate::transport::cc::{deserialize_cc, CcConfig};
use crate::transport::TcpParams;
use crate::units::{Ps, MS, SEC, US};
use crate::workload::cdf::Cdf;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::{Path, PathBuf};

/// A scenario error: where (a key path such as `workload.poisson[0].load`) and what.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    pub path: String,
    pub message: String,
}

impl ScenarioError {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "scenario error: {}", self.message)
        } else {
            write!(f, "scenario error at `{}`: {}", self.path, self.message)
        }
    }
}
impl std::error::Error for ScenarioError {}

fn default_name() -> String {
    "scenario".into()
}
fn default_seed() -> u64 {
    1
}

/// The top level of a scenario file.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ScenarioConfig {
    /// A short name, used for the output directory and reports.
    #[serde(default = "default_name")]
    pub name: String,
    /// Free text: what the experiment is and where it comes from.
    #[serde(default)]
    pub description: String,
    /// Seed of every random stream in the run.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// How long the traffic generators (poisson, incast at a load, packets) create traffic.
    /// Required when there is a generator.
    pub duration: Option<TimeValue>,
    /// Hard stop of the simulated clock (default: when every flow has finished, at most 10 s).
    pub stop: Option<TimeValue>,
    pub topology: TopologyConfig,
    #[serde(default)]
    pub switch: SwitchConfig,
    #[serde(default)]
    pub transport: TransportConfig,
    #[serde(default)]
    pub workload: WorkloadConfig,
    #[serde(default)]
    pub metrics: MetricsConfig,
    /// RDMA NICs: when present, every flow is a RoCEv2 queue pair with rate-based
    /// congestion control instead of a TCP connection.
    pub rdma: Option<RdmaConfig>,
    /// Edge pausing (Smart-Pause, On-Ramp): one-way-delay measurement with
    /// host clocks and a per-flow gate below the congestion control.
    pub edge: Option<crate::edge::EdgeConfig>,
}

/// Where an ECN decision is taken.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MarkPoint {
    /// On arrival, from the queue the packet finds (DCTCP paper, ns-3).
    #[default]
    Enqueue,
    /// On departure, from the queue the packet leaves behind (HPCC simulator).
    Dequeue,
}

/// ECN marking of one class.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum EcnConfig {
    /// No marking.
    #[default]
    Off,
    /// RED with thresholds chosen by the egress link's rate (HPCC simulator
    /// `KMIN_MAP`/`KMAX_MAP`/`PMAX_MAP`): the level with the largest `rate` not above the
    /// port's rate applies (the smallest level if none).
    RedByRate {
        levels: Vec<RedLevel>,
        #[serde(default)]
        at: MarkPoint,
    },
    /// Mark every ECT packet when the instantaneous queue exceeds `k` (DCTCP).
    Step {
        k: SizeValue,
        #[serde(default)]
        at: MarkPoint,
    },
    /// RED on the instantaneous queue: 0 below kmin, linear to pmax at kmax, 1 above kmax.
    Red {
        kmin: SizeValue,
        kmax: SizeValue,
        pmax: f64,
        #[serde(default)]
        at: MarkPoint,
    },
}

/// One level of [`EcnConfig::RedByRate`].
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RedLevel {
    pub rate: RateValue,
    pub kmin: SizeValue,
    pub kmax: SizeValue,
    pub pmax: f64,
}

/// Buffer admission of one class queue.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AdmissionConfig {
    /// Choudhury-Hahne dynamic threshold: a queue may grow while it is below alpha x (free buffer).
    Dynamic { alpha: f64 },
    /// A fixed per-queue limit.
    Static { limit: SizeValue },
}

impl Default for AdmissionConfig {
    fn default() -> Self {
        AdmissionConfig::Dynamic { alpha: 1.0 }
    }
}

#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKind {
    /// Strict priority: class 7 first.
    #[default]
    Strict,
    /// Deficit weighted round robin with per-class weights.
    Dwrr,
}

/// Per-class overrides of the switch defaults.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ClassConfig {
    /// The class, 0..7.
    pub class: u8,
    /// DWRR weight (quantum = weight x dwrr_quantum).
    pub weight: Option<u32>,
    pub ecn: Option<EcnConfig>,
    pub admission: Option<AdmissionConfig>,
}

fn default_buffer() -> SizeValue {
    SizeValue(12_000_000)
}

/// Every switch of the scenario.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SwitchConfig {
    /// Shared buffer per switch.
    pub buffer: SizeValue,
    /// Default admission rule of every class queue.
    pub admission: AdmissionConfig,
    /// Default ECN marking of every class.
    pub ecn: EcnConfig,
    pub scheduler: SchedulerKind,
    /// DWRR base quantum (default: the MTU).
    pub dwrr_quantum: Option<SizeValue>,
    /// Per-class overrides.
    pub classes: Vec<ClassConfig>,
    /// Priority flow control (IEEE 802.1Qbb) for the lossless classes.
    pub pfc: Option<PfcConfig>,
    /// Congestion isolation (IEEE 802.1Qcz) on every switch port.
    pub ci: Option<crate::net::ci::CiConfig>,
}

impl Default for SwitchConfig {
    fn default() -> Self {
        SwitchConfig {
            buffer: default_buffer(),
            admission: AdmissionConfig::default(),
            ecn: EcnConfig::Off,
            scheduler: SchedulerKind::Strict,
            dwrr_quantum: None,
            classes: vec![],
            pfc: None,
            ci: None,
        }
    }
}

/// Delayed ACKs.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DelayedAckConfig {
    /// ACK every `count` in-order segments.
    #[serde(default = "two")]
    pub count: u32,
    /// ... or after this long.
    #[serde(default = "one_ms")]
    pub timeout: TimeValue,
}
fn two() -> u32 {
    2
}
fn one_ms() -> TimeValue {
    TimeValue(MS)
}

/// The transport used by every flow.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct TransportConfig {
    /// Congestion control: a name (`"dctcp"`, `"newreno"`, `"cubic"`, `"bbr"`) or a table
    /// `{ algorithm = "dctcp", g = 0.0625 }` with the algorithm's parameters.
    #[serde(deserialize_with = "deserialize_cc")]
    #[schemars(with = "serde_json::Value")]
    pub cc: CcConfig,
    /// Largest packet on the wire, headers included (bytes). Payload per segment = mtu - header.
    pub mtu: u32,
    /// Header bytes of every data packet.
    pub header: u32,
    /// Size of an ACK on the wire (bytes).
    pub ack_size: u32,
    /// Initial congestion window, in segments (RFC 6928: 10).
    pub init_cwnd: u32,
    /// Lower bound of the retransmission timeout. Default 10 ms: the value the DCTCP paper's
    /// incast experiments used instead of the 200 ms-1 s of stock stacks (RFC 6298 says 1 s).
    pub rto_min: TimeValue,
    /// RTO before the first RTT sample (default: rto_min).
    pub rto_initial: Option<TimeValue>,
    /// Upper bound of the RTO after backoff.
    pub rto_max: TimeValue,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Delayed ACKs (default: off, every segment is ACKed).
    pub delayed_ack: Option<DelayedAckConfig>,
    /// Priority class of data packets.
    pub class: u8,
    /// Priority class of ACKs (default: the data class).
    pub ack_class: Option<u8>,
}

impl Default for TransportConfig {
    fn default() -> Self {
        TransportConfig {
            cc: CcConfig::default(),
            mtu: 1500,
            header: 40,
            ack_size: 64,
            init_cwnd: 10,
            rto_min: TimeValue(10 * MS),
            rto_initial: None,
            rto_max: TimeValue(60 * SEC),
            dupack_threshold: 3,
            delayed_ack: None,
            class: 0,
            ack_class: None,
        }
    }
}

/// A host, by index (`3`) or by name (`"h3"`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum HostRef {
    Index(u32),
    Name(String),
}

impl<'de> Deserialize<'de> for HostRef {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = HostRef;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a host index (0, 1, ...) or a host name (\"h0\")")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<HostRef, E> {
                u32::try_from(v)
                    .map(HostRef::Index)
                    .map_err(|_| E::custom("host index too large"))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<HostRef, E> {
                if v < 0 {
                    return Err(E::custom(format!("host index {v} is negative")));
                }
                self.visit_u64(v as u64)
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<HostRef, E> {
                Ok(HostRef::Name(v.to_string()))
            }
        }
        d.deserialize_any(V)
    }
}

/// One explicitly listed flow.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    pub src: HostRef,
    pub dst: HostRef,
    pub size: SizeValue,
    #[serde(default)]
    pub start: TimeValue,
    /// Priority class (default: transport.class).
    pub class: Option<u8>,
}

/// Poisson flow arrivals at every host of a group.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoissonConfig {
    /// Offered load as a fraction of each sending host's link rate, in (0, 1].
    pub load: f64,
    /// Flow-size distribution: a bundled name (`"websearch"`) or a CDF file path.
    pub cdf: String,
    /// Hosts that send and receive (default: all). Sources and destinations are drawn from this group.
    pub hosts: Option<Vec<HostRef>>,
    /// Priority class (default: transport.class).
    pub class: Option<u8>,
    /// Small-flow prioritization: flows smaller than `below` go in `class`
    /// (e.g. mice under 100 KB in a higher priority, as in the Congestion
    /// Isolation talk's "small flow prioritization mechanism").
    pub small_flows: Option<SmallFlows>,
    /// When arrivals begin.
    #[serde(default)]
    pub start: TimeValue,
}

/// `workload.poisson.small_flows`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SmallFlows {
    pub below: SizeValue,
    pub class: u8,
}

/// Incast events: `fan_in` senders each send `bytes_per_sender` to one receiver at once.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IncastConfig {
    /// Fixed fan-in (number of senders).
    pub fan_in: Option<u32>,
    /// A mix of fan-ins as [fan_in, probability] pairs, e.g. [[1, 0.5], [2, 0.3], [4, 0.2]].
    pub fan_in_mix: Option<Vec<(u32, f64)>>,
    /// Bytes each sender sends. Give this or `cdf`.
    pub bytes_per_sender: Option<SizeValue>,
    /// Or draw each sender's flow size independently from this distribution
    /// (a bundled name or a CDF file), e.g. Smart-Pause's "fan-in" arrivals:
    /// k senders answer one receiver, each with a flow of the workload's size mix.
    pub cdf: Option<String>,
    /// Poisson incast events so that incast bytes are this fraction of the group's host capacity.
    pub load: Option<f64>,
    /// Or incast events at these times.
    pub times: Option<Vec<TimeValue>>,
    /// A fixed receiver (default: a random host of the group for each event).
    pub receiver: Option<HostRef>,
    /// Hosts taking part (default: all).
    pub hosts: Option<Vec<HostRef>>,
    pub class: Option<u8>,
    #[serde(default)]
    pub start: TimeValue,
}

/// How an open-loop packet generator spaces its packets.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Process {
    #[default]
    Poisson,
    /// Constant bit rate.
    Cbr,
}

/// Open-loop datagrams (no transport, no congestion control), e.g. for queueing-theory checks.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PacketsConfig {
    pub src: HostRef,
    pub dst: HostRef,
    /// Bytes per packet on the wire.
    pub size: SizeValue,
    /// Mean rate of the generator.
    pub rate: RateValue,
    #[serde(default)]
    pub process: Process,
    pub class: Option<u8>,
    #[serde(default)]
    pub start: TimeValue,
}

/// Traffic.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct WorkloadConfig {
    pub flows: Vec<FlowConfig>,
    /// A CSV file of flows with the header `src,dst,size_bytes,start_ns` (optional 5th column `class`).
    pub flow_file: Option<String>,
    pub poisson: Vec<PoissonConfig>,
    pub incast: Vec<IncastConfig>,
    pub packets: Vec<PacketsConfig>,
}

/// Which ports have their queue length sampled.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QueuePorts {
    /// Every switch port.
    #[default]
    Switch,
    /// Every port, host NICs included.
    All,
    /// No sampling.
    None,
}

/// What is measured and how it is summarized.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Flows that start before this time are left out of the summary (still in the flow table).
    pub warmup: TimeValue,
    /// Flows that start within this long of the end of `duration` are left out of the summary.
    pub cooldown: TimeValue,
    /// Upper edges of the flow-size buckets of the summary (bytes); a last bucket takes the rest.
    pub size_buckets: Vec<SizeValue>,
    /// Interval of queue-length samples.
    pub queue_sample_interval: TimeValue,
    pub queue_ports: QueuePorts,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            warmup: TimeValue(0),
            cooldown: TimeValue(0),
            size_buckets: vec![SizeValue(100_000), SizeValue(1_000_000)],
            queue_sample_interval: TimeValue(10 * US),
            queue_ports: QueuePorts::Switch,
        }
    }
}

/// A flow to start at a given time (from `workload.flows` or `workload.flow_file`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListedFlow {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub start: Ps,
    pub class: u8,
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
}

fn parse_error_path(path: &serde_path_to_error::Path) -> String {
    let s = path.to_string();
    if s == "." {
        String::new()
    } else {
        s
    }
}

impl Scenario {
    /// Parses and validates a TOML scenario. Relative file paths in it are relative to `base_dir`.
    pub fn from_toml_str(text: &str, base_dir: &Path) -> Result<Scenario, ScenarioError> {
        let de = toml::Deserializer::new(text);
        let cfg: ScenarioConfig = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = parse_error_path(e.path());
            ScenarioError::new(
                path,
                e.inner().message().to_string() + &location(text, e.inner().span()),
            )
        })?;
        Scenario::from_config(cfg, base_dir)
    }

    /// Parses and validates a JSON scenario (same structure as the TOML form).
    pub fn from_json_str(text: &str, base_dir: &Path) -> Result<Scenario, ScenarioError> {
        let mut de = serde_json::Deserializer::from_str(text);
        let cfg: ScenarioConfig = serde_path_to_error::deserialize(&mut de)
            .map_err(|e| ScenarioError::new(parse_error_path(e.path()), e.inner().to_string()))?;
        Scenario::from_config(cfg, base_dir)
    }

    /// Reads a `.toml` or `.json` scenario file.
    pub fn from_file(path: &Path) -> Result<Scenario, ScenarioError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ScenarioError::new("", format!("cannot read {}: {e}", path.display())))?;
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

    /// Validates a parsed configuration.
    pub fn from_config(config: ScenarioConfig, base_dir: &Path) -> Result<Scenario, ScenarioError> {
        let graph = config
            .topology
            .build()
            .map_err(|(p, m)| ScenarioError::new(join("topology", &p), m))?;
        let mut sc = Scenario {
            config,
            base_dir: base_dir.to_path_buf(),
            graph,
            poisson_cdfs: vec![],
            listed: vec![],
            poisson_hosts: vec![],
            incast_hosts: vec![],
            incast_cdfs: vec![],
            edge_hosts: vec![],
        };
        sc.validate()?;
        Ok(sc)
    }

    fn host(&self, r: &HostRef, path: &str) -> Result<u32, ScenarioError> {
        let n = self.graph.host_names.len();
        match r {
            HostRef::Index(i) if (*i as usize) < n => Ok(*i),
            HostRef::Index(i) => Err(ScenarioError::new(
                path,
                format!(
                    "host {i} does not exist; the topology has hosts 0..{} ({} hosts)",
                    n - 1,
                    n
                ),
            )),
            HostRef::Name(s) => self
                .graph
                .host_names
                .iter()
                .position(|h| h == s)
                .map(|i| i as u32)
                .ok_or_else(|| {
                    let sample: Vec<_> = self.graph.host_names.iter().take(4).cloned().collect();
                    ScenarioError::new(
                        path,
                        format!(
                            "unknown host `{s}`; hosts are named like {} (or use an index 0..{})",
                            sample.join(", "),
                            n - 1
                        ),
                    )
                }),
        }
    }

    fn host_group(
        &self,
        hosts: &Option<Vec<HostRef>>,
        path: &str,
    ) -> Result<Vec<u32>, ScenarioError> {
        match hosts {
            None => Ok((0..self.graph.host_names.len() as u32).collect()),
            Some(list) => {
                let mut out = Vec::with_capacity(list.len());
                for (i, h) in list.iter().enumerate() {
                    let id = self.host(h, &format!("{path}[{i}]"))?;
                    if out.contains(&id) {
                        return Err(ScenarioError::new(
                            format!("{path}[{i}]"),
                            format!("host {id} is listed twice"),
                        ));
                    }
                    out.push(id);
                }
                if out.len() < 2 {
                    return Err(ScenarioError::new(
                        path,
                        "a host group needs at least 2 hosts",
                    ));
                }
                Ok(out)
            }
        }
    }

    fn validate(&mut self) -> Result<(), ScenarioError> {
        let c = &self.config;
        let t = &c.transport;
        check_class(t.class, "transport.class")?;
        if let Some(a) = t.ack_class {
            check_class(a, "transport.ack_class")?;
        }
        if t.header >= t.mtu {
            return Err(ScenarioError::new(
                "transport.header",
                format!(
                    "header ({} B) must be smaller than mtu ({} B)",
                    t.header, t.mtu
                ),
            ));
        }
        if t.mtu < 64 {
            return Err(ScenarioError::new(
                "transport.mtu",
                format!("mtu {} is below 64 B", t.mtu),
            ));
        }
        self.validate_rdma_pfc()?;
        self.validate_ci()?;
        if t.init_cwnd == 0 {
            return Err(ScenarioError::new(
                "transport.init_cwnd",
                "must be at least 1 segment",
            ));
        }
        if t.dupack_threshold == 0 {
            return Err(ScenarioError::new(
                "transport.dupack_threshold",
                "must be at least 1",
            ));
        }
        if t.rto_min.0 == 0 || t.rto_max.0 < t.rto_min.0 {
            return Err(ScenarioError::new(
                "transport.rto_min",
                "need 0 < rto_min <= rto_max",
            ));
        }
        if let Some(d) = t.delayed_ack {
            if d.count == 0 || d.timeout.0 == 0 {
                return Err(ScenarioError::new(
                    "transport.delayed_ack",
                    "count and timeout must be positive",
                ));
            }
        }
        // The algorithm's own parameter ranges (`Params::validate` of each `transport/cc` file).
        t.cc.validate()
            .map_err(|e| ScenarioError::new(format!("transport.cc.{}", e.field), e.message))?;
        self.switch_params()?;

        let w = &c.workload;
        let mut listed = vec![];
        for (i, f) in w.flows.iter().enumerate() {
            let p = format!("workload.flows[{i}]");
            listed.push(self.listed_flow(&f.src, &f.dst, f.size.0, f.start.0, f.class, &p)?);
        }
        if let Some(file) = &w.flow_file {
            listed.extend(self.read_flow_file(file)?);
        }
        listed.sort_by_key(|f| f.start);
        if w.poisson.len() > u16::MAX as usize {
            return Err(ScenarioError::new(
                "workload.poisson",
                "at most 65535 poisson generators",
            ));
        }
        let mut cdfs = vec![];
        let mut poisson_hosts = vec![];
        for (i, p) in w.poisson.iter().enumerate() {
            let path = format!("workload.poisson[{i}]");
            if !(p.load > 0.0 && p.load <= 1.0) {
                return Err(ScenarioError::new(
                    format!("{path}.load"),
                    format!(
                        "load must be in (0, 1] (a fraction of host link capacity), got {}",
                        p.load
                    ),
                ));
            }
            let cdf = Cdf::load(&p.cdf, &self.base_dir)
                .map_err(|m| ScenarioError::new(format!("{path}.cdf"), m))?;
            cdfs.push(cdf);
            poisson_hosts.push(self.host_group(&p.hosts, &format!("{path}.hosts"))?);
            if let Some(sf) = p.small_flows {
                check_class(sf.class, &format!("{path}.small_flows.class"))?;
                if sf.below.0 == 0 {
                    return Err(ScenarioError::new(
                        format!("{path}.small_flows.below"),
                        "must be positive (e.g. \"100KB\")",
                    ));
                }
            }
            if let Some(cl) = p.class {
                check_class(cl, &format!("{path}.class"))?;
            }
        }
        // Total offered load per host from all Poisson groups must not exceed 1.
        let mut per_host = vec![0.0; self.graph.host_names.len()];
        for (p, hosts) in w.poisson.iter().zip(&poisson_hosts) {
            for &h in hosts {
                per_host[h as usize] += p.load;
            }
        }
        if let Some((h, l)) = per_host.iter().enumerate().find(|(_, &l)| l > 1.0 + 1e-9) {
            return Err(ScenarioError::new(
                "workload.poisson",
                format!("the poisson generators offer host {h} a total load of {l:.3}, above 1"),
            ));
        }
        let mut incast_hosts = vec![];
        let mut incast_cdfs = vec![];
        for (i, inc) in w.incast.iter().enumerate() {
            let path = format!("workload.incast[{i}]");
            let group = self.host_group(&inc.hosts, &format!("{path}.hosts"))?;
            let mix = incast_mix(inc, &path)?;
            let max_fan = mix.iter().map(|m| m.0).max().unwrap_or(1);
            if max_fan as usize > group.len() - 1 {
                return Err(ScenarioError::new(
                    format!("{path}.fan_in"),
                    format!("fan-in {max_fan} needs {max_fan} senders besides the receiver, but the group has {} hosts", group.len()),
                ));
            }
            match (inc.load, &inc.times) {
                (Some(l), None) if l > 0.0 && l <= 1.0 => {}
                (Some(l), None) => {
                    return Err(ScenarioError::new(format!("{path}.load"), format!("load must be in (0, 1], got {l}")))
                }
                (None, Some(_)) => {}
                _ => {
                    return Err(ScenarioError::new(
                        path,
                        "give exactly one of `load` (Poisson incast events) or `times` (explicit event times)",
                    ))
                }
            }
            let cdf = match (&inc.bytes_per_sender, &inc.cdf) {
                (Some(b), None) if b.0 == 0 => {
                    return Err(ScenarioError::new(
                        format!("{path}.bytes_per_sender"),
                        "must be positive",
                    ))
                }
                (Some(_), None) => None,
                (None, Some(name)) => Some(
                    Cdf::load(name, &self.base_dir)
                        .map_err(|m| ScenarioError::new(format!("{path}.cdf"), m))?,
                ),
                _ => {
                    return Err(ScenarioError::new(
                        path,
                        "give exactly one of `bytes_per_sender` (every sender sends that much) or `cdf` (each sender's size drawn from a distribution)",
                    ))
                }
            };
            incast_cdfs.push(cdf);
            if let Some(r) = &inc.receiver {
                let r = self.host(r, &format!("{path}.receiver"))?;
                if !group.contains(&r) {
                    return Err(ScenarioError::new(
                        format!("{path}.receiver"),
                        "the receiver must be in the host group",
                    ));
                }
            }
            if let Some(cl) = inc.class {
                check_class(cl, &format!("{path}.class"))?;
            }
            incast_hosts.push(group);
        }
        for (i, p) in w.packets.iter().enumerate() {
            let path = format!("workload.packets[{i}]");
            let s = self.host(&p.src, &format!("{path}.src"))?;
            let d = self.host(&p.dst, &format!("{path}.dst"))?;
            if s == d {
                return Err(ScenarioError::new(
                    format!("{path}.dst"),
                    "source and destination are the same host",
                ));
            }
            if p.size.0 < 64 || p.size.0 > 65_535 {
                return Err(ScenarioError::new(
                    format!("{path}.size"),
                    "packet size must be in [64, 65535] bytes",
                ));
            }
            if let Some(cl) = p.class {
                check_class(cl, &format!("{path}.class"))?;
            }
        }
        let has_generators = !w.poisson.is_empty()
            || w.incast.iter().any(|i| i.load.is_some())
            || !w.packets.is_empty();
        if has_generators && c.duration.is_none() {
            return Err(ScenarioError::new(
                "duration",
                "the workload has traffic generators, so the scenario needs `duration` (e.g. duration = \"10ms\"): how long they create traffic",
            ));
        }
        if listed.is_empty() && !has_generators && w.incast.is_empty() {
            return Err(ScenarioError::new(
                "workload",
                "the workload is empty: add [[workload.flows]], a flow_file, [[workload.poisson]], [[workload.incast]] or [[workload.packets]]",
            ));
        }
        let m = &c.metrics;
        if m.size_buckets.windows(2).any(|w| w[0].0 >= w[1].0)
            || m.size_buckets.iter().any(|b| b.0 == 0)
        {
            return Err(ScenarioError::new(
                "metrics.size_buckets",
                "bucket edges must be positive and strictly increasing",
            ));
        }
        if m.queue_sample_interval.0 == 0 {
            return Err(ScenarioError::new(
                "metrics.queue_sample_interval",
                "must be positive",
            ));
        }
        self.listed = listed;
        self.poisson_cdfs = cdfs;
        self.poisson_hosts = poisson_hosts;
        self.incast_hosts = incast_hosts;
        self.incast_cdfs = incast_cdfs;
        self.validate_edge()?;
        Ok(())
    }

    fn validate_edge(&mut self) -> Result<(), ScenarioError> {
        let Some(e) = &self.config.edge else {
            return Ok(());
        };
        e.rule
            .validate()
            .map_err(|p| ScenarioError::new(format!("edge.rule.{}", p.field), p.message))?;
        e.clock
            .validate()
            .map_err(|p| ScenarioError::new(format!("edge.clock.{}", p.field), p.message))?;
        self.edge_hosts = match &e.hosts {
            None => (0..self.graph.host_names.len() as u32).collect(),
            Some(list) => {
                let mut out = Vec::with_capacity(list.len());
                for (i, h) in list.iter().enumerate() {
                    out.push(self.host(h, &format!("edge.hosts[{i}]"))?);
                }
                if out.is_empty() {
                    return Err(ScenarioError::new(
                        "edge.hosts",
                        "is empty; list the senders that use the gate, or remove the key for all hosts",
                    ));
                }
                out
            }
        };
        Ok(())
    }

    fn listed_flow(
        &self,
        src: &HostRef,
        dst: &HostRef,
        size: u64,
        start: Ps,
        class: Option<u8>,
        p: &str,
    ) -> Result<ListedFlow, ScenarioError> {
        let s = self.host(src, &format!("{p}.src"))?;
        let d = self.host(dst, &format!("{p}.dst"))?;
        if s == d {
            return Err(ScenarioError::new(
                format!("{p}.dst"),
                format!("source and destination are both host {s}"),
            ));
        }
        if size == 0 {
            return Err(ScenarioError::new(
                format!("{p}.size"),
                "a flow must carry at least 1 byte",
            ));
        }
        let class = class.unwrap_or(
            self.config
                .rdma
                .as_ref()
                .map_or(self.config.transport.class, |r| r.data_class),
        );
        check_class(class, &format!("{p}.class"))?;
        Ok(ListedFlow {
            src: s,
            dst: d,
            size,
            start,
            class,
        })
    }

    fn read_flow_file(&self, file: &str) -> Result<Vec<ListedFlow>, ScenarioError> {
        let path = self.base_dir.join(file);
        let field = "workload.flow_file";
        let text = std::fs::read_to_string(&path).map_err(|e| {
            ScenarioError::new(field, format!("cannot read {}: {e}", path.display()))
        })?;
        let mut lines = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'));
        let header: Vec<String> = match lines.next() {
            Some((_, h)) => h.split(',').map(|s| s.trim().to_string()).collect(),
            None => {
                return Err(ScenarioError::new(
                    field,
                    format!("{} is empty", path.display()),
                ))
            }
        };
        let expected = ["src", "dst", "size_bytes", "start_ns"];
        if header.len() < 4
            || header[..4] != expected
            || (header.len() == 5 && header[4] != "class")
            || header.len() > 5
        {
            return Err(ScenarioError::new(
                field,
                format!("{}: the header must be `src,dst,size_bytes,start_ns` (optionally `,class`), got `{}`", path.display(), header.join(",")),
            ));
        }
        let mut out = vec![];
        for (ln, line) in lines {
            let cols: Vec<&str> = line.split(',').map(str::trim).collect();
            let where_ = format!("{field} ({}:{})", path.display(), ln + 1);
            if cols.len() != header.len() {
                return Err(ScenarioError::new(
                    where_,
                    format!("expected {} columns, got {}", header.len(), cols.len()),
                ));
            }
            let host = |s: &str| -> HostRef {
                s.parse::<u32>()
                    .map(HostRef::Index)
                    .unwrap_or(HostRef::Name(s.to_string()))
            };
            let size: u64 = cols[2].parse().map_err(|_| {
                ScenarioError::new(
                    where_.clone(),
                    format!("size_bytes `{}` is not a whole number", cols[2]),
                )
            })?;
            let start_ns: f64 = cols[3]
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| {
                    ScenarioError::new(
                        where_.clone(),
                        format!("start_ns `{}` is not a non-negative number", cols[3]),
                    )
                })?;
            let class = match cols.get(4) {
                Some(c) => Some(c.parse::<u8>().map_err(|_| {
                    ScenarioError::new(where_.clone(), format!("class `{c}` is not 0..7"))
                })?),
                None => None,
            };
            out.push(self.listed_flow(
                &host(cols[0]),
                &host(cols[1]),
                size,
                (start_ns * 1000.0).round() as Ps,
                class,
                &where_,
            )?);
        }
        Ok(out)
    }

    fn validate_rdma_pfc(&self) -> Result<(), ScenarioError> {
        if let Some(pc) = &self.config.switch.pfc {
            if pc.classes.is_empty() {
                return Err(ScenarioError::new(
                    "switch.pfc.classes",
                    "list at least one lossless class, e.g. classes = [3]",
                ));
            }
            for (i, c) in pc.classes.iter().enumerate() {
                check_class(*c, &format!("switch.pfc.classes[{i}]"))?;
            }
            match pc.threshold {
                crate::net::pfc::PfcThreshold::Dynamic { alpha, .. }
                    if !(alpha > 0.0 && alpha.is_finite()) =>
                {
                    return Err(ScenarioError::new(
                        "switch.pfc.threshold.alpha",
                        format!("alpha must be positive, got {alpha}"),
                    ));
                }
                crate::net::pfc::PfcThreshold::Static { xoff } if xoff.0 == 0 => {
                    return Err(ScenarioError::new(
                        "switch.pfc.threshold.xoff",
                        "the XOFF threshold must be positive",
                    ));
                }
                _ => {}
            }
            if pc.pause_quanta == 0 {
                return Err(ScenarioError::new(
                    "switch.pfc.pause_quanta",
                    "an XOFF must carry at least 1 quantum (0 means XON)",
                ));
            }
            if let Some(w) = pc.watchdog {
                if w.limit.0 == 0 {
                    return Err(ScenarioError::new(
                        "switch.pfc.watchdog.limit",
                        "the watchdog limit must be positive",
                    ));
                }
                if w.restore.is_some_and(|r| r.0 == 0) {
                    return Err(ScenarioError::new(
                        "switch.pfc.watchdog.restore",
                        "the restore time must be positive (omit it to use the limit)",
                    ));
                }
            }
        }
        if let Some(r) = &self.config.rdma {
            check_class(r.data_class, "rdma.data_class")?;
            check_class(r.ctrl_class, "rdma.ctrl_class")?;
            if r.payload == 0 {
                return Err(ScenarioError::new(
                    "rdma.payload",
                    "must be at least 1 byte",
                ));
            }
            if r.ack_interval == 0 {
                return Err(ScenarioError::new(
                    "rdma.ack_interval",
                    "must be at least 1 (acknowledge every packet)",
                ));
            }
            if r.chunk == 0 {
                return Err(ScenarioError::new("rdma.chunk", "must be positive"));
            }
            if r.rto.0 == 0 {
                return Err(ScenarioError::new("rdma.rto", "must be positive"));
            }
            if r.cnp_interval.0 == 0 && r.cnp_mode == crate::rdma::CnpMode::Paced {
                return Err(ScenarioError::new(
                    "rdma.cnp_interval",
                    "must be positive (50us in the DCQCN paper)",
                ));
            }
            if r.cc.name() == "dctcp" && r.cnp_mode != crate::rdma::CnpMode::AckFlag {
                return Err(ScenarioError::new(
                    "rdma.cnp_mode",
                    "rate-based DCTCP reads ECN echoes on ACKs: set cnp_mode = \"ack_flag\"",
                ));
            }
            // The algorithm's own parameter ranges (`Params::validate` of each `rdma/cc` file).
            r.cc.validate()
                .map_err(|e| ScenarioError::new(format!("rdma.cc.{}", e.field), e.message))?;
        }
        Ok(())
    }

    /// `[switch.ci]`: classes, queue order and the CIP options.
    fn validate_ci(&self) -> Result<(), ScenarioError> {
        let Some(ci) = &self.config.switch.ci else {
            return Ok(());
        };
        if ci.queues.is_empty() {
            return Err(ScenarioError::new(
                "switch.ci.queues",
                "list at least one CI class, e.g. queues = [{ class = 3, cfq = [2] }]",
            ));
        }
        let lossless: Vec<u8> = self
            .config
            .switch
            .pfc
            .as_ref()
            .map_or(vec![], |p| p.classes.clone());
        let strict = self.config.switch.scheduler == SchedulerKind::Strict;
        let mut used = 0u8;
        for (i, q) in ci.queues.iter().enumerate() {
            let path = format!("switch.ci.queues[{i}]");
            check_class(q.class, &format!("{path}.class"))?;
            if used & (1 << q.class) != 0 {
                return Err(ScenarioError::new(
                    format!("{path}.class"),
                    format!(
                        "class {} is already a CI class or a congested-flow queue",
                        q.class
                    ),
                ));
            }
            used |= 1 << q.class;
            if q.cfq.is_empty() {
                return Err(ScenarioError::new(
                    format!("{path}.cfq"),
                    "give at least one congested-flow queue, e.g. cfq = [2]",
                ));
            }
            for (j, &c) in q.cfq.iter().enumerate() {
                let p = format!("{path}.cfq[{j}]");
                check_class(c, &p)?;
                if used & (1 << c) != 0 {
                    return Err(ScenarioError::new(
                        p,
                        format!("class {c} is already a CI class or a congested-flow queue"),
                    ));
                }
                used |= 1 << c;
                if strict && c >= q.class {
                    return Err(ScenarioError::new(
                        p,
                        format!(
                            "a congested-flow queue is scheduled below its non-congested \
                             queue: under strict priority use a class below {}",
                            q.class
                        ),
                    ));
                }
                if lossless.contains(&q.class) && !lossless.contains(&c) {
                    return Err(ScenarioError::new(
                        p,
                        format!(
                            "class {c} isolates flows of lossless class {}: add {c} to \
                             switch.pfc.classes so it is paused on its own",
                            q.class
                        ),
                    ));
                }
            }
        }
        let t = &self.config.transport;
        let mut ctrl = vec![("transport.ack_class", t.ack_class)];
        if let Some(r) = &self.config.rdma {
            ctrl.push(("rdma.ctrl_class", Some(r.ctrl_class)));
        }
        for (path, c) in ctrl {
            if let Some(c) = c {
                if ci.cfq_mask() & (1 << c) != 0 {
                    return Err(ScenarioError::new(
                        path,
                        format!("class {c} is a congested-flow queue of switch.ci; use another"),
                    ));
                }
            }
        }
        if ci.threshold.0 == 0 {
            return Err(ScenarioError::new(
                "switch.ci.threshold",
                "must be positive (bytes in the non-congested queue)",
            ));
        }
        if ci.age.0 == 0 {
            return Err(ScenarioError::new("switch.ci.age", "must be positive"));
        }
        if ci.max_flows == 0 {
            return Err(ScenarioError::new(
                "switch.ci.max_flows",
                "must be at least 1",
            ));
        }
        match ci.detect {
            crate::net::ci::Detect::Sampled { every }
            | crate::net::ci::Detect::Top { every, .. }
                if every.0 == 0 =>
            {
                return Err(ScenarioError::new(
                    "switch.ci.detect.every",
                    "must be positive (bytes between samples)",
                ));
            }
            crate::net::ci::Detect::Top { k: 0, .. } => {
                return Err(ScenarioError::new(
                    "switch.ci.detect.k",
                    "must be at least 1",
                ));
            }
            _ => {}
        }
        let cip = &ci.cip;
        if !(0.0..1.0).contains(&cip.loss) {
            return Err(ScenarioError::new(
                "switch.ci.cip.loss",
                format!("a probability in [0, 1), got {}", cip.loss),
            ));
        }
        if cip.copies == 0 {
            return Err(ScenarioError::new(
                "switch.ci.cip.copies",
                "must be at least 1",
            ));
        }
        if cip.interval.0 == 0 {
            return Err(ScenarioError::new(
                "switch.ci.cip.interval",
                "must be positive",
            ));
        }
        Ok(())
    }

    /// The switch parameters, checked.
    pub fn switch_params(&self) -> Result<SwitchParams, ScenarioError> {
        let s = &self.config.switch;
        let mtu = self.config.transport.mtu as i64;
        let mut p = SwitchParams {
            buffer: s.buffer.0,
            ..Default::default()
        };
        if p.buffer == 0 {
            return Err(ScenarioError::new(
                "switch.buffer",
                "the shared buffer must be positive",
            ));
        }
        p.scheduler = match s.scheduler {
            SchedulerKind::Strict => Scheduler::StrictPriority,
            SchedulerKind::Dwrr => Scheduler::Dwrr,
        };
        let quantum = s.dwrr_quantum.map_or(mtu, |q| q.0 as i64);
        if quantum < mtu {
            return Err(ScenarioError::new(
                "switch.dwrr_quantum",
                format!("the quantum must be at least the MTU ({mtu} B)"),
            ));
        }
        let adm = admission(&s.admission, "switch.admission")?;
        let ecn = ecn_of(&s.ecn, "switch.ecn")?;
        p.admission = [adm; NUM_CLASSES];
        p.ecn = std::array::from_fn(|_| ecn.clone());
        p.quantum = [quantum; NUM_CLASSES];
        for (i, c) in s.classes.iter().enumerate() {
            let path = format!("switch.classes[{i}]");
            check_class(c.class, &format!("{path}.class"))?;
            let k = c.class as usize;
            if let Some(w) = c.weight {
                if w == 0 {
                    return Err(ScenarioError::new(
                        format!("{path}.weight"),
                        "weights must be at least 1",
                    ));
                }
                p.quantum[k] = quantum * w as i64;
            }
            if let Some(e) = &c.ecn {
                p.ecn[k] = ecn_of(e, &format!("{path}.ecn"))?;
            }
            if let Some(a) = &c.admission {
                p.admission[k] = admission(a, &format!("{path}.admission"))?;
            }
        }
        // A congested-flow queue marks, admits and weighs like its
        // non-congested queue unless `switch.classes` sets it.
        if let Some(ci) = &s.ci {
            for q in &ci.queues {
                for &c in &q.cfq {
                    if !s.classes.iter().any(|x| x.class == c) {
                        let (b, c) = (q.class as usize, c as usize);
                        p.ecn[c] = p.ecn[b].clone();
                        p.admission[c] = p.admission[b];
                        p.quantum[c] = p.quantum[b];
                    }
                }
            }
        }
        Ok(p)
    }

    /// Transport parameters.
    pub fn tcp_params(&self) -> TcpParams {
        let t = &self.config.transport;
        TcpParams {
            mss: (t.mtu - t.header) as u64,
            header: t.header,
            ack_size: t.ack_size,
            init_cwnd: t.init_cwnd as u64,
            rto_min: t.rto_min.0,
            rto_initial: t.rto_initial.map_or(t.rto_min.0, |v| v.0),
            rto_max: t.rto_max.0,
            dupack_threshold: t.dupack_threshold,
            delayed_ack: t.delayed_ack.map(|d| (d.count, d.timeout.0)),
        }
    }

    /// Fan-in mix of incast entry `i`, as (fan_in, probability).
    pub fn incast_mix(&self, i: usize) -> Vec<(u32, f64)> {
        incast_mix(&self.config.workload.incast[i], "").expect("validated")
    }
}

fn location(text: &str, span: Option<std::ops::Range<usize>>) -> String {
    match span {
        Some(r) => {
            let line = text[..r.start.min(text.len())].matches('\n').count() + 1;
            format!(" (line {line})")
        }
        None => String::new(),
    }
}

fn join(a: &str, b: &str) -> String {
    if b.is_empty() {
        a.to_string()
    } else {
        format!("{a}.{b}")
    }
}

fn check_class(c: u8, path: &str) -> Result<(), ScenarioError> {
    if (c as usize) < NUM_CLASSES {
        Ok(())
    } else {
        Err(ScenarioError::new(
            path,
            format!("class {c} does not exist; classes are 0..7"),
        ))
    }
}

fn admission(a: &AdmissionConfig, path: &str) -> Result<Admission, ScenarioError> {
    match *a {
        AdmissionConfig::Dynamic { alpha } if alpha > 0.0 && alpha.is_finite() => {
            Ok(Admission::Dynamic { alpha })
        }
        AdmissionConfig::Dynamic { alpha } => Err(ScenarioError::new(
            format!("{path}.alpha"),
            format!("alpha must be positive, got {alpha}"),
        )),
        AdmissionConfig::Static { limit } if limit.0 > 0 => {
            Ok(Admission::Static { limit: limit.0 })
        }
        AdmissionConfig::Static { .. } => Err(ScenarioError::new(
            format!("{path}.limit"),
            "the limit must be positive",
        )),
    }
}

fn ecn_of(e: &EcnConfig, path: &str) -> Result<EcnRule, ScenarioError> {
    Ok(match e {
        EcnConfig::RedByRate { levels, at } => {
            if levels.is_empty() {
                return Err(ScenarioError::new(
                    format!("{path}.levels"),
                    "give at least one level { rate, kmin, kmax, pmax }",
                ));
            }
            let mut out = vec![];
            for (i, l) in levels.iter().enumerate() {
                let one = EcnConfig::Red {
                    kmin: l.kmin,
                    kmax: l.kmax,
                    pmax: l.pmax,
                    at: *at,
                };
                match ecn_of(&one, &format!("{path}.levels[{i}]"))? {
                    EcnRule::Fixed(e) => out.push((l.rate.0.bits_per_sec(), e)),
                    EcnRule::ByRate(_) => unreachable!(),
                }
            }
            out.sort_by_key(|x| x.0);
            EcnRule::ByRate(out)
        }
        other => EcnRule::Fixed(ecn_fixed(other, path)?),
    })
}

fn ecn_fixed(e: &EcnConfig, path: &str) -> Result<Ecn, ScenarioError> {
    Ok(match *e {
        EcnConfig::Off => Ecn::Off,
        EcnConfig::RedByRate { .. } => unreachable!("handled by ecn_of"),
        EcnConfig::Step { k, at } => Ecn::step(k.0, at == MarkPoint::Dequeue),
        EcnConfig::Red {
            kmin,
            kmax,
            pmax,
            at,
        } => {
            if kmin.0 > kmax.0 {
                return Err(ScenarioError::new(
                    format!("{path}.kmin"),
                    format!("kmin ({} B) must not exceed kmax ({} B)", kmin.0, kmax.0),
                ));
            }
            if !(0.0..=1.0).contains(&pmax) {
                return Err(ScenarioError::new(
                    format!("{path}.pmax"),
                    format!("pmax must be in [0, 1], got {pmax}"),
                ));
            }
            Ecn::Red {
                kmin: kmin.0,
                kmax: kmax.0,
                pmax,
                at_dequeue: at == MarkPoint::Dequeue,
            }
        }
    })
}

fn incast_mix(inc: &IncastConfig, path: &str) -> Result<Vec<(u32, f64)>, ScenarioError> {
    let mix = match (&inc.fan_in, &inc.fan_in_mix) {
        (Some(f), None) => vec![(*f, 1.0)],
        (None, Some(m)) if !m.is_empty() => m.clone(),
        _ => {
            return Err(ScenarioError::new(
                path,
                "give exactly one of `fan_in` (e.g. 8) or `fan_in_mix` (e.g. [[1, 0.5], [2, 0.3], [4, 0.2]])",
            ))
        }
    };
    let total: f64 = mix.iter().map(|m| m.1).sum();
    if mix.iter().any(|m| m.0 == 0 || m.1.is_nan() || m.1 < 0.0) {
        return Err(ScenarioError::new(
            format!("{path}.fan_in_mix"),
            "each fan-in must be at least 1 and each probability non-negative",
        ));
    }
    if (total - 1.0).abs() > 1e-6 {
        return Err(ScenarioError::new(
            format!("{path}.fan_in_mix"),
            format!("the probabilities add up to {total}, not 1"),
        ));
    }
    Ok(mix)
}
