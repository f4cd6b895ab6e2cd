//! Converting a parsed HPCC-sim experiment into an incast scenario.
//!
//! [`convert`] writes the scenario as plain JSON holding only the keys the
//! import sets (everything else stays incast's default), one function per
//! concern, in this order (which is also the order in which errors are
//! reported):
//!
//! 1. keys incast rejects, and keys that are only validated
//!    ([`reject_unsupported`]);
//! 2. the run: stop time, payload, queue monitor ([`run_settings`]);
//! 3. the congestion control ([`cc`]);
//! 4. the NIC: ACKs, chunks, window, base RTT ([`nic_settings`]);
//! 5. the topology: hosts, switches with their tiers, links ([`nodes`]);
//! 6. the flows, checked against the topology, with HPCC-sim's source ports
//!    and standalone FCTs ([`flows`]);
//! 7. where ACKs travel ([`ack_placement`]), and the switches: buffer, ECN,
//!    PFC ([`switch`]);
//! 8. `[rdma]` and the whole document ([`rdma_section`], [`scenario_value`]).
//!
//! The JSON is then deserialized into a [`ScenarioConfig`], so the scenario
//! format's own checks apply to the result.

mod cc;
mod switch;

use super::config::{seconds_to_ns, Config};
use super::flows::RawFlow;
use super::topology::{pair_rtt_to, standalone_fct_ns, Topo};
use super::{
    AckChoice, ClockChoice, EcmpChoice, HpccFlow, HpccImport, ImportOptions, FIRST_SPORT,
    HPCC_HEADER,
};
use crate::config_types::{RateValue, TimeValue};
use crate::scenario::{ScenarioConfig, ScenarioError};
use crate::units::{self, Rate, NS};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::PathBuf;

/// A rate as the scenario format writes it (`"100Gbps"`).
pub(super) fn rate_str(r: Rate) -> String {
    RateValue(r).0.to_string()
}

/// A time as the scenario format writes it (`"1us"`).
pub(super) fn time_str(ps: u64) -> String {
    TimeValue(ps).to_string()
}

/// A positive number of microseconds (`key`'s value) as a scenario time.
pub(super) fn us_str(cfg: &Config, key: &str, us: f64) -> Result<String, ScenarioError> {
    let ps = (us * 1e6).round();
    if !(ps.is_finite() && ps > 0.0) {
        return Err(cfg.err(
            key,
            format!("must be a positive number of microseconds, got {us}"),
        ));
    }
    Ok(time_str(ps as u64))
}

/// Converts a parsed configuration, topology and flow list (module docs).
pub(super) fn convert(
    cfg: &Config,
    options: &ImportOptions,
    name: &str,
    topo: &Topo,
    raw_flows: &[RawFlow],
) -> Result<HpccImport, ScenarioError> {
    reject_unsupported(cfg)?;
    let run = run_settings(cfg)?;
    let cc = cc::congestion_control(cfg)?;
    let nic = nic_settings(cfg)?;
    let nodes = nodes(topo);
    let flows = flows(topo, &nodes.host_index, raw_flows, run.payload)?;
    let data_class = data_class(&flows)?;
    let acks = ack_placement(options.acks, nic.ack_high_prio, data_class)?;
    let switch = switch::switch_section(cfg, topo, data_class, acks.class, options.headroom)?;
    let rdma = rdma_section(&nic, cc, run.payload, data_class, acks);
    let mut value = scenario_value(name, &run, &nodes, switch, rdma);
    if let Some(routing) = routing_section(options.ecmp, &flows)? {
        value["routing"] = routing;
    }
    if options.clock == ClockChoice::Ns3 {
        // ns-3's `Time`: whole nanoseconds (docs/hpcc-interop.md, "Time in whole nanoseconds").
        value["timing"] = json!({"tx_times": "ns3"});
    }
    let scenario = scenario_from_value(&value)?;
    Ok(HpccImport {
        scenario,
        scenario_value: value,
        flows_csv: flows_csv(&flows),
        dports: flows.iter().map(|f| f.dport).collect(),
        sports: flows.iter().map(|f| f.sport).collect(),
        flows,
        host_ids: nodes.host_ids,
        switch_ids: nodes.switch_ids,
        config_path: PathBuf::new(),
        topology_path: PathBuf::new(),
        flows_path: PathBuf::new(),
    })
}

/// Keys whose HPCC-sim feature incast does not model must have the value
/// that turns the feature off; keys that have no effect are still checked.
fn reject_unsupported(cfg: &Config) -> Result<(), ScenarioError> {
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
        super::config::ns3_rate(v).map_err(|m| cfg.err("DATA_RATE", m))?;
    }
    if let Some(v) = cfg.one("LINK_DELAY")? {
        units::parse_time(v).map_err(|m| cfg.err("LINK_DELAY", m))?;
    }
    Ok(())
}

/// The run as a whole.
struct RunSettings {
    /// Payload bytes per data packet.
    payload: u64,
    /// `SIMULATOR_STOP_TIME`, ns.
    stop_ns: u64,
    /// Whether HPCC-sim's queue monitor window is inside the run.
    sample_queues: bool,
}

fn run_settings(cfg: &Config) -> Result<RunSettings, ScenarioError> {
    // HPCC-sim samples queues between QLEN_MON_START and QLEN_MON_END (ns); the shipped
    // configurations disable it with a window after the stop time. incast then samples no
    // queues either (sampling an idle 2 s before the traffic starts costs time and memory).
    let qlen_start = cfg.uint("QLEN_MON_START", 2_000_000_000)?;
    let qlen_end = cfg.uint("QLEN_MON_END", 2_100_000_000)?;
    let payload = cfg.uint("PACKET_PAYLOAD_SIZE", 1000)?;
    if !(1..=9000).contains(&payload) {
        return Err(cfg.err(
            "PACKET_PAYLOAD_SIZE",
            format!("{payload} is outside 1..9000 bytes"),
        ));
    }
    let stop_s = cfg.float("SIMULATOR_STOP_TIME", 3.01)?;
    let stop_ns = seconds_to_ns(cfg.one("SIMULATOR_STOP_TIME")?.unwrap_or("3.01"))
        .filter(|&ns| ns > 0)
        .ok_or_else(|| {
            cfg.err(
                "SIMULATOR_STOP_TIME",
                format!("{stop_s} is not a positive time"),
            )
        })?;
    Ok(RunSettings {
        payload,
        stop_ns,
        sample_queues: qlen_start < stop_ns && qlen_end > qlen_start,
    })
}

/// The RDMA NIC's keys.
struct NicSettings {
    /// `L2_CHUNK_SIZE` (0: none).
    chunk: u64,
    back_to_chunk: bool,
    /// `rdma.window`.
    window: &'static str,
    global_t: bool,
    rate_bound: bool,
    ack_high_prio: bool,
}

fn nic_settings(cfg: &Config) -> Result<NicSettings, ScenarioError> {
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
    Ok(NicSettings {
        chunk,
        back_to_chunk,
        window,
        global_t: cfg.flag("GLOBAL_T", true)?,
        rate_bound: cfg.flag("RATE_BOUND", true)?,
        ack_high_prio: cfg.flag("ACK_HIGH_PRIO", false)?,
    })
}

/// The topology's nodes, named and numbered as the import documents.
struct Nodes {
    /// HPCC node id of incast host index `i`, and of switch index `i`.
    host_ids: Vec<u32>,
    switch_ids: Vec<u32>,
    /// incast host index of HPCC node id `n` (`u32::MAX` for a switch).
    host_index: Vec<u32>,
    /// `topology.hosts`, `topology.switches`, `topology.links`.
    host_names: Vec<String>,
    switches: Vec<Value>,
    links: Vec<Value>,
}

/// Hosts `h<id>` and switches `s<id>` in id order, switch tiers (hops from
/// the nearest host; 1 = ToR), and the links in file order.
fn nodes(topo: &Topo) -> Nodes {
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
    Nodes {
        host_ids,
        switch_ids,
        host_index,
        host_names,
        switches,
        links,
    }
}

/// The flows, checked against the topology (hosts, sizes, priorities, start
/// order), with HPCC-sim's source ports (per source and destination host
/// from 10000, in file order: `third.cc` `portNumder[src][dst]++`, a 16-bit
/// counter) and standalone FCTs.
fn flows(
    topo: &Topo,
    host_index: &[u32],
    raw_flows: &[RawFlow],
    payload: u64,
) -> Result<Vec<HpccFlow>, ScenarioError> {
    let mut sport_next: BTreeMap<(u32, u32), u16> = BTreeMap::new();
    let mut flows = Vec::with_capacity(raw_flows.len());
    let mut rtt_cache: BTreeMap<u32, Vec<Option<(u64, u64)>>> = BTreeMap::new();
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
        let counter = sport_next.entry((f.src, f.dst)).or_insert(FIRST_SPORT);
        let sport = *counter;
        *counter = counter.wrapping_add(1);
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
            sport,
            dport: f.dport as u16,
            size: f.size,
            start_ns: f.start_ns,
            standalone_fct_ns: standalone_fct_ns(f.size, payload, rtt, bw),
        });
    }
    Ok(flows)
}

/// `[routing]` for the ECMP choice: none for incast's own hash; HPCC-sim's
/// rule with the flows' one destination port (the scenario gives every flow
/// the same one; HPCC-sim's source ports follow from the flow order).
fn routing_section(choice: EcmpChoice, flows: &[HpccFlow]) -> Result<Option<Value>, ScenarioError> {
    if choice == EcmpChoice::Flow {
        return Ok(None);
    }
    let dports: BTreeSet<u16> = flows.iter().map(|f| f.dport).collect();
    if dports.len() > 1 {
        let list: Vec<String> = dports.iter().map(|p| p.to_string()).collect();
        return Err(ScenarioError::new(
            "FLOW_FILE",
            format!(
                "the flows use destination ports {}; the `hpcc` ECMP option gives every flow one \
                 (routing.dport): use one port in the flow file or the `flow` ECMP choice",
                list.join(", ")
            ),
        ));
    }
    let dport = dports.iter().next().copied().unwrap_or(100);
    Ok(Some(json!({"ecmp": "hpcc", "dport": dport})))
}

/// The one data priority of the flows (3 when there are none).
fn data_class(flows: &[HpccFlow]) -> Result<u8, ScenarioError> {
    let priorities: BTreeSet<u8> = flows.iter().map(|f| f.priority).collect();
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
    Ok(priorities.iter().next().copied().unwrap_or(3))
}

/// Where the NICs and switches put ACKs and NACKs.
struct AckPlacement {
    /// `rdma.ctrl_class`: their class at the NIC and at every switch.
    class: u8,
    /// `rdma.ctrl_ignores_pause`.
    ignores_pause: bool,
}

/// The ACK class ([`AckChoice`]). HPCC-sim's switches queue an ACK or NACK in
/// queue 0 (strict priority, outside PFC) only with `SwitchNode::AckHighPrio`,
/// which `third.cc` never sets; otherwise in the queue of its `pg`, which the
/// receiver copies from the data packet (`switch-node.cc` `SendToDev`,
/// `rdma-hw.cc` `ReceiveUdp`). Its NICs send ACKs from a queue served before
/// data that obeys pauses of class 0 with `ACK_HIGH_PRIO 1` and of class 3
/// otherwise (`RdmaEgressQueue::ack_q_idx`); switches pause only the data
/// class, so ACKs ignore pauses unless that queue is the data class's.
fn ack_placement(
    choice: AckChoice,
    ack_high_prio: bool,
    data_class: u8,
) -> Result<AckPlacement, ScenarioError> {
    match choice {
        AckChoice::Hpcc => {
            let nic_pause_class = if ack_high_prio { 0 } else { 3 };
            Ok(AckPlacement {
                class: data_class,
                ignores_pause: nic_pause_class != data_class,
            })
        }
        AckChoice::HighPriority => {
            if ack_high_prio && data_class == 7 {
                return Err(ScenarioError::new(
                    "ACK_HIGH_PRIO",
                    "the flows use priority 7, which incast reserves for ACKs when ACK_HIGH_PRIO \
                     is 1 and ACKs travel at high priority (the `high_priority` ACK option)",
                ));
            }
            Ok(AckPlacement {
                class: if ack_high_prio { 7 } else { 3 },
                ignores_pause: false,
            })
        }
    }
}

/// The `[rdma]` table.
fn rdma_section(
    nic: &NicSettings,
    cc: cc::CongestionControl,
    payload: u64,
    data_class: u8,
    acks: AckPlacement,
) -> Value {
    let mut rdma = json!({
        "cc": Value::Object(cc.cc),
        "payload": payload,
        "header": HPCC_HEADER,
        "int_bytes": cc.int_bytes,
        "ack_size": (46 + cc.int_bytes).max(60),
        "ack_interval": 1,
        "data_class": data_class,
        "ctrl_class": acks.class,
        "ctrl_ignores_pause": acks.ignores_pause,
        "cnp_mode": "ack_flag",
        "window": nic.window,
        "base_rtt": if nic.global_t { "global_max" } else { "per_pair" },
        "rate_bound": nic.rate_bound,
        "back_to_chunk": nic.back_to_chunk,
    });
    if nic.chunk > 0 {
        rdma["chunk"] = json!(nic.chunk);
    }
    rdma
}

/// The whole scenario document; the flows live in `<name>_flows.csv`.
fn scenario_value(
    name: &str,
    run: &RunSettings,
    nodes: &Nodes,
    switch: Value,
    rdma: Value,
) -> Value {
    let mut value = json!({
        "name": name,
        "description": "Imported from an HPCC simulator configuration.",
        "seed": 1,
        "stop": time_str(run.stop_ns * NS),
        "topology": {
            "kind": "explicit",
            "hosts": nodes.host_names,
            "switches": nodes.switches,
            "links": nodes.links,
        },
        "switch": switch,
        "rdma": rdma,
        "workload": {"flow_file": format!("{name}_flows.csv")},
    });
    // Slowdowns relative to HPCC's own standalone FCT, as HPCC reports them.
    value["metrics"] = json!({"ideal_fct": "hpcc"});
    if !run.sample_queues {
        value["metrics"]["queue_ports"] = json!("none");
    }
    value
}

/// `src,dst,size_bytes,start_ns,class`, one row per flow, hosts by name.
fn flows_csv(flows: &[HpccFlow]) -> String {
    let mut csv = String::with_capacity(32 * flows.len() + 40);
    csv.push_str("src,dst,size_bytes,start_ns,class\n");
    for f in flows {
        csv.push_str(&format!(
            "h{},h{},{},{},{}\n",
            f.src_id, f.dst_id, f.size, f.start_ns, f.priority
        ));
    }
    csv
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

#[cfg(test)]
mod tests;
