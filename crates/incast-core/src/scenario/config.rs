//! The scenario format: serde structs with `deny_unknown_fields`, whose
//! schemars derive is the JSON Schema (`incast schema`). Everything here is
//! what a file may say; what must hold across values is checked by the
//! sibling modules when a [`super::Scenario`] is built.

use super::sections::{scenario_config, workload_entries};
pub use crate::config_types::HostRef;
use crate::config_types::{RateValue, SizeValue, TimeValue};
use crate::mech::switch_config;
use crate::rdma::RdmaConfig;
use crate::topology::TopologyConfig;
use crate::transport::cc::{deserialize_cc, deserialize_cc_opt, CcConfig};
use crate::units::{MS, SEC, US};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

fn default_name() -> String {
    "scenario".into()
}
fn default_seed() -> u64 {
    1
}

crate::feature_sections! { scenario_config;
    /// The top level of a scenario file.
    #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub struct ScenarioConfig {
        /// A short name, used for the output directory and reports: at most 128
        /// characters, no control characters.
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
    // Here one field per top-level section of `feature_sections!` (lib.rs),
    // then:
    after_sections {
        /// The NIC model.
        #[serde(default)]
        pub nic: super::nic::NicConfig,
        /// How switches choose among equal-cost next hops (default: each flow
        /// by incast's seeded hash of its 5-tuple).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub routing: Option<RoutingConfig>,
        /// How times computed from a rate are rounded (default: exactly).
        #[serde(default, skip_serializing_if = "TimingConfig::is_default")]
        pub timing: TimingConfig,
    }
}

/// How the clock turns a rate into a duration (`[timing]`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct TimingConfig {
    /// The duration of a transmission on a link and of an RDMA pacing gap:
    /// `"exact"` (default, to the picosecond) or `"ns3"`, as ns-3 and so the
    /// HPCC simulator compute it: seconds in a double, truncated to whole
    /// nanoseconds (1048 bytes at 100 Gb/s take 83 ns, not 83.84; 1000 bytes
    /// take 79 ns, not 80). The HPCC import sets `"ns3"` unless its option
    /// `clock = "exact"` is given (docs/hpcc-interop.md, "Time in whole nanoseconds").
    #[serde(default)]
    pub tx_times: TxTimes,
    /// The order of events that fall on the same picosecond: `"push"`
    /// (default: the order they were scheduled in) or `"node"` (by the
    /// node, host or switch, whose event scheduled them, then in the order
    /// that node scheduled them). `"node"` is the order a partitioned run
    /// keeps whatever the partition (`Simulation::run_partitioned`); it
    /// moves same-time ties, so results differ from `"push"`'s as two
    /// seeds' do not, but they are not byte-equal.
    #[serde(default, skip_serializing_if = "Ties::is_push")]
    pub ties: Ties,
    /// How many threads one run uses (default 1): with more, the network is
    /// split into as many partitions, each on its own thread
    /// (`incast_core::ThreadedRun`). Needs `ties = "node"`, the order whose
    /// results do not depend on the number of threads. `incast run
    /// --threads N` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
}

/// `[timing] ties`: how events at the same time are ordered.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Ties {
    /// In the order they were scheduled.
    #[default]
    Push,
    /// By the node whose event scheduled them, then in that node's order.
    Node,
}

impl Ties {
    /// The default: left out of a normalized scenario, so that scenarios
    /// written before the key existed hash as they did.
    fn is_push(&self) -> bool {
        *self == Ties::Push
    }
}

impl TimingConfig {
    fn is_default(&self) -> bool {
        *self == TimingConfig::default()
    }

    /// The threads a run of this scenario uses (`threads`, default 1).
    pub fn threads(&self) -> u32 {
        self.threads.unwrap_or(1)
    }
}

/// `[timing] tx_times`: how a duration is computed from a rate.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TxTimes {
    /// bytes x 8 / rate, rounded up to a whole picosecond.
    #[default]
    Exact,
    /// ns-3's arithmetic ([`crate::units::ns3_tx_time`]).
    Ns3,
}

/// How a switch chooses among its equal-cost next hops (`[routing]`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct RoutingConfig {
    /// `"flow"` (default): every packet of a flow takes the port its seeded
    /// hash picks at each switch (the seed moves paths). `"spray"`: each
    /// TCP data segment picks its own (packet spraying). `"hpcc"`: the HPCC
    /// simulator's rule (MurmurHash3 of source IP, destination IP and ports,
    /// seeded with the switch's node id, over its next hops in HPCC-sim's
    /// order); node ids from the names `h<id>` / `s<id>` that
    /// `incast import-hpcc` writes (docs/hpcc-interop.md).
    #[serde(default)]
    pub ecmp: EcmpRule,
    /// With `ecmp = "hpcc"`: every flow's destination port (HPCC flow
    /// files use 100). Source ports are HPCC-sim's: per source and
    /// destination, from 10000 in flow start order.
    #[serde(default = "default_hpcc_dport")]
    pub dport: u16,
}

fn default_hpcc_dport() -> u16 {
    100
}

/// The rule of [`RoutingConfig::ecmp`].
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum EcmpRule {
    /// incast's own: a per-flow hash seeded by the run's seed, re-mixed
    /// with each switch's index.
    #[default]
    Flow,
    /// The HPCC simulator's (`switch-node.cc` `SwitchNode::GetOutDev`).
    Hpcc,
    /// Packet spraying: every data segment of a TCP flow picks its own
    /// equal-cost next hop at each switch (a hash of the flow's and the
    /// segment's sequence number; a retransmission takes its original's
    /// path); ACKs keep their flow's path. NDP flows spray every packet as
    /// with their own `spray = true`. Segments then arrive out of order
    /// (the summary's `out_of_order_arrivals`), which TCP's SACK recovery
    /// tolerates up to its duplicate-ACK threshold and RACK within its
    /// reordering window. TCP only.
    Spray,
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

crate::mech::switch_mechanisms!(switch_config;
    /// Every switch of the scenario.
    #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
    #[serde(deny_unknown_fields, default)]
    pub struct SwitchConfig {
        /// Shared buffer per switch.
        pub buffer: SizeValue = default_buffer(),
        /// Default admission rule of every class queue.
        pub admission: AdmissionConfig = AdmissionConfig::default(),
        /// Default ECN marking of every class.
        pub ecn: EcnConfig = EcnConfig::Off,
        pub scheduler: SchedulerKind = SchedulerKind::Strict,
        /// DWRR base quantum (default: the MTU).
        pub dwrr_quantum: Option<SizeValue> = None,
        /// Per-class overrides.
        pub classes: Vec<ClassConfig> = vec![],
    }
);

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
    /// Congestion control: a name (`"dctcp"`, `"newreno"`, `"cubic"`, `"bbr"`, `"swift"`) or a table
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
    /// Loss recovery: `"sack_rack"` (the default, as Linux's `tcp_sack = 1`, `tcp_recovery = 1`,
    /// `tcp_early_retrans = 3`: SACK blocks, RFC 2018; RFC 6675 recovery with RFC 6937 PRR;
    /// RACK-TLP loss detection, RFC 8985), `"sack"` (the same without RACK-TLP, as ns-3's
    /// default) or `"newreno"` (cumulative ACKs only, RFC 6582).
    pub recovery: crate::transport::Recovery,
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
            recovery: crate::transport::Recovery::SackRack,
            class: 0,
            ack_class: None,
        }
    }
}

/// One explicitly listed flow.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    pub src: HostRef,
    pub dst: HostRef,
    /// Bytes to send. Optional with `stop`: without it the flow is
    /// long-lived (its sender always has data) until `stop`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<SizeValue>,
    #[serde(default)]
    pub start: TimeValue,
    /// When the sender stops offering data (e.g. "11ms"): nothing new is
    /// sent after it and the flow's record is closed then, with the bytes
    /// its receiver got as its size. With `size` too, whichever comes first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<TimeValue>,
    /// Priority class (default: transport.class).
    pub class: Option<u8>,
    /// TCP congestion control of this group's flows (default: `transport.cc`):
    /// a name or a table with its parameters, e.g. storage reads with
    /// `"dctcp"` beside everything else with `"cubic"`.
    #[serde(
        default,
        deserialize_with = "deserialize_cc_opt",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<serde_json::Value>")]
    pub cc: Option<CcConfig>,
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
    /// TCP congestion control of this group's flows (default: `transport.cc`):
    /// a name or a table with its parameters, e.g. storage reads with
    /// `"dctcp"` beside everything else with `"cubic"`.
    #[serde(
        default,
        deserialize_with = "deserialize_cc_opt",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<serde_json::Value>")]
    pub cc: Option<CcConfig>,
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
    /// Or a random receiver from this list for each event, the senders from
    /// `hosts` (the receivers need not be in it): e.g. workers reading from
    /// storage servers. `load` is then a fraction of the senders' capacity.
    pub receivers: Option<Vec<HostRef>>,
    /// Hosts taking part (default: all).
    pub hosts: Option<Vec<HostRef>>,
    pub class: Option<u8>,
    #[serde(default)]
    pub start: TimeValue,
    /// TCP congestion control of this group's flows (default: `transport.cc`):
    /// a name or a table with its parameters, e.g. storage reads with
    /// `"dctcp"` beside everything else with `"cubic"`.
    #[serde(
        default,
        deserialize_with = "deserialize_cc_opt",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<serde_json::Value>")]
    pub cc: Option<CcConfig>,
}

/// An iperf-like bulk flow switched on and off: from `start`, every
/// `on + off` a new long-lived flow from `src` to `dst` starts and is
/// stopped `on` later; the schedule ends at `stop` (an on-period it cuts
/// ends there).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BulkConfig {
    pub src: HostRef,
    pub dst: HostRef,
    /// When the first on-period begins.
    #[serde(default)]
    pub start: TimeValue,
    /// The end of the whole schedule: no flow runs past it.
    pub stop: TimeValue,
    /// How long each flow sends (positive).
    pub on: TimeValue,
    /// The pause between one flow's stop and the next one's start (0: back to back).
    pub off: TimeValue,
    /// Priority class (default: transport.class).
    pub class: Option<u8>,
    /// TCP congestion control of this group's flows (default: `transport.cc`):
    /// a name or a table with its parameters, e.g. a `"cubic"` bulk flow
    /// beside `"dctcp"` everywhere else.
    #[serde(
        default,
        deserialize_with = "deserialize_cc_opt",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<serde_json::Value>")]
    pub cc: Option<CcConfig>,
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

use crate::host::generators::{workload_config, workload_generators};

// The fields here, then one `[[workload.KEY]]` list per workload section of
// `feature_sections!` (lib.rs), then one per generator kind of
// `workload_generators!` (host/generators.rs).
crate::feature_sections! { workload_entries;
    workload_generators! { workload_config;
        /// Traffic. Besides the fields here, one `[[workload.KEY]]` list per
        /// generator kind of `workload_generators!` (host/generators.rs).
        #[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
        #[serde(deny_unknown_fields, default)]
        pub struct WorkloadConfig {
            pub flows: Vec<FlowConfig>,
            /// A CSV file of flows with the header `src,dst,size_bytes,start_ns` (optional 5th column `class`).
            pub flow_file: Option<String>,
            pub poisson: Vec<PoissonConfig>,
            pub incast: Vec<IncastConfig>,
            pub packets: Vec<PacketsConfig>,
            /// On/off bulk transfers (iperf-like): a long-lived flow per on-period.
            #[serde(skip_serializing_if = "Vec::is_empty")]
            pub bulk: Vec<BulkConfig>,
            /// Raw-frame sources with bursty on/off or Bernoulli arrivals (the IBM
            /// ECM talk's traffic; `workload::onoff`).
            pub onoff: Vec<crate::workload::onoff::OnOffConfig>,
        }
    }
}

/// Which ports get a queue-length time series (the `queues` table). Every
/// switch port's time-weighted mean, percentiles and maximum queue are in
/// the `counters` table whatever this says.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QueuePorts {
    /// The `queue_top` switch ports with the largest peak queue, at most
    /// [`crate::params::queue_series::TOP_POINTS`] points each: the interval
    /// doubles (and every other point is dropped) whenever the series would
    /// grow past that, so the size depends neither on ports nor on time.
    #[default]
    Top,
    /// Every switch port, at the full interval.
    Switch,
    /// Every port, host NICs included, at the full interval.
    All,
    /// Every port of the nodes named in `queue_nodes`, at the full interval.
    Nodes,
    /// No time series.
    None,
}

/// How a flow's ideal FCT (the denominator of its slowdown) is computed.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum IdealFct {
    /// The flow's FCT alone on its idle path, with its real packet sizes:
    /// its packets leave back to back at line rate, cross every hop store
    /// and forward, and the last one's ACK comes back along the ACK's path.
    /// A true lower bound: nothing in a run can beat it, so every slowdown
    /// is at least 1 without clamping.
    #[default]
    Idle,
    /// The HPCC simulator's standalone FCT (`scratch/third.cc`): a full
    /// segment's serialization on every hop plus the whole flow at the
    /// slowest link, twice the propagation delay, no ACK. Comparable with
    /// published HPCC/ConWeave slowdowns; up to 26 % above the idle FCT for
    /// small flows (then slowdown is clamped at 1). HPCC-format runs use it.
    Hpcc,
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
    /// Interval of queue-length samples (the first interval of `"top"`).
    pub queue_sample_interval: TimeValue,
    /// Which ports get a queue time series: `"top"` (default), `"switch"`,
    /// `"all"`, `"nodes"` (with `queue_nodes`) or `"none"`.
    pub queue_ports: QueuePorts,
    /// With `queue_ports = "top"`: how many ports.
    pub queue_top: u32,
    /// With `queue_ports = "nodes"`: node names, `*` matching any run of
    /// characters (`["tor*", "spine0"]`).
    pub queue_nodes: Vec<String>,
    /// The ideal FCT that slowdowns are relative to.
    pub ideal_fct: IdealFct,
}

impl Default for MetricsConfig {
    fn default() -> Self {
        MetricsConfig {
            warmup: TimeValue(0),
            cooldown: TimeValue(0),
            size_buckets: vec![SizeValue(100_000), SizeValue(1_000_000)],
            queue_sample_interval: TimeValue(10 * US),
            queue_ports: QueuePorts::Top,
            queue_top: 16,
            queue_nodes: vec![],
            ideal_fct: IdealFct::Idle,
        }
    }
}
