//! Packet trimming (Handley et al., "Re-architecting datacenter networks
//! and stacks for low latency and high performance", SIGCOMM 2017, §3.1,
//! NDP's switch; Cheng et al., "Catch the whole lot in an action", NSDI
//! 2014, cut payload): a data packet of a trimming class that would be
//! dropped, because its queue is above a threshold or the buffer refuses
//! it, is cut to its header, and the header joins a strict-priority queue
//! ahead of the data.
//!
//! `[switch.trim]`: the trimming `classes`; the `header_class` queue the
//! headers join (default 7, the first queue strict priority serves: the
//! existing scheduler does the prioritising, nothing new on the dequeue
//! path); `header_bytes` (default 64, htsim's `NdpPacket::ACKSIZE`); the
//! thresholds `threshold_bytes` (trim when the queue's bytes plus the
//! packet's would exceed it: htsim's `CompositeQueue`) and
//! `threshold_packets` (trim when the queue already holds that many
//! packets); `header_limit` (the header queue's static limit, htsim's
//! twice the data queue; default: the class's own admission rule);
//! `count_sending` (the packet on the wire counts as queued, as in htsim's
//! queues, which hold a packet until it has been sent; default: only the
//! packets waiting count); `victim` (which packet a full queue cuts:
//! `"arriving"`, the default, or `"htsim"`, htsim's `CompositeQueue`: with
//! probability 1/2 the one queued last, whose place the arriving one
//! takes, from a seeded stream per switch).
//!
//! How: the classify hook ([`SwitchMechanism::on_classify`]) runs for the
//! trimming classes. A data packet (or an open-loop datagram) that would be
//! refused is trimmed in place (its size becomes `header_bytes`, its
//! [`flags::TRIMMED`] bit is set) and its queue becomes `header_class`;
//! every other packet of the class that is a header already (a trimmed
//! header, an ACK, a NACK, a pull) joins `header_class` too, as htsim's
//! composite queue puts every header-only packet in its high queue. The
//! buffer then admits it or not as any packet. The bytes cut are counted
//! per port and class (the summary's `trim` section) and in the run's
//! byte accounting ([`crate::sim::Conservation::trimmed_bytes`]).
//!
//! What differs from htsim: by default a full queue trims the arriving
//! packet (htsim's trims it or, with probability 1/2, the one queued last,
//! to break phase effects: `victim = "htsim"`; there, when the one queued
//! last is smaller than the arriving one, a flow's last packet, the
//! arriving one is cut instead, where htsim lets the queue overflow by the
//! difference), and only the packets waiting count towards the thresholds
//! (`count_sending`). htsim's header queue is served 100 000 : 1 against
//! the data queue; here strictly first (docs/htsim-eqds.md: a data packet
//! goes ahead of waiting headers once per 100 001 services that find both
//! queues busy).

use super::{Hop, Network, SwitchMechanism};
use crate::config_types::SizeValue;
use crate::metrics_table::Table;
use crate::net::packet::flags;
use crate::net::port::Owner;
use crate::net::switch::{Admission, Enqueue, Switch};
use crate::net::PacketKind;
use crate::rng::Stream;
use crate::scenario::config::SchedulerKind;
use crate::scenario::{Scenario, ScenarioError, SwitchSection};
use crate::sim::world::World;
use crate::units::{Bytes, Ps};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `[switch.trim]`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Config {
    /// The classes whose data packets are trimmed instead of dropped.
    pub classes: Vec<u8>,
    /// The class queue trimmed headers (and the trimming classes' other
    /// header-only packets) join: strict priority serves it first when it
    /// is 7.
    #[serde(default = "seven")]
    pub header_class: u8,
    /// Size of a trimmed packet on the wire (htsim: 64 bytes).
    #[serde(default = "header_default")]
    pub header_bytes: u32,
    /// Trim when the queue's bytes plus the packet's would exceed this.
    #[serde(default)]
    pub threshold_bytes: Option<SizeValue>,
    /// Trim when the queue already holds this many packets.
    #[serde(default)]
    pub threshold_packets: Option<u32>,
    /// Static limit of the header queue (htsim: twice the data queue's
    /// size); without it, the header class's own admission rule.
    #[serde(default)]
    pub header_limit: Option<SizeValue>,
    /// The packet being sent counts towards the thresholds as if queued
    /// (htsim's queues hold a packet until it has been sent).
    #[serde(default)]
    pub count_sending: bool,
    /// Which packet a full queue cuts.
    #[serde(default)]
    pub victim: Victim,
}

/// `[switch.trim] victim`: which packet a full data queue cuts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Victim {
    /// The arriving packet.
    #[default]
    Arriving,
    /// htsim's `CompositeQueue::receivePacket`: the arriving packet, or
    /// with probability 1/2 (`drand() < 0.5`) the packet queued last
    /// (`_enqueued_low.pop_front()`, the most recently pushed), whose place
    /// the arriving one takes.
    Htsim,
}

fn seven() -> u8 {
    7
}

fn header_default() -> u32 {
    64
}

/// The mechanism's state.
#[derive(Default)]
pub(crate) struct TrimState {
    /// Bit c set when class c trims.
    classes: u8,
    header_class: u8,
    header_bytes: u32,
    threshold_bytes: Bytes,
    threshold_packets: usize,
    /// Per global port id and class: packets trimmed, bytes cut.
    trimmed_pkts: Vec<[u64; 8]>,
    trimmed_bytes: Vec<[u64; 8]>,
    /// `count_sending`: per global port id, the queue and size of the last
    /// packet it began to send (the one on the wire while it is busy).
    count_sending: bool,
    sending: Vec<(u8, u32)>,
    /// `victim = "htsim"`: each switch's stream of coin flips.
    victims: Vec<Stream>,
}

impl TrimState {
    /// Whether packets of `class` are trimmed.
    pub(crate) fn trims(&self, class: u8) -> bool {
        self.classes & (1 << class) != 0
    }
}

/// The mechanism.
pub(crate) struct Trim;

fn err(key: &str, msg: impl Into<String>) -> ScenarioError {
    ScenarioError::new(format!("switch.trim.{key}"), msg)
}

impl SwitchSection for Config {
    fn validate_section(&self, sc: &Scenario) -> Result<(), ScenarioError> {
        let sw = &sc.config.switch;
        if self.classes.is_empty() {
            return Err(err(
                "classes",
                "name at least one trimming class (classes = [0]), or remove [switch.trim]",
            ));
        }
        if self.header_class > 7 {
            return Err(err("header_class", "a class is 0..7"));
        }
        let lossless: &[u8] = sw.pfc.as_ref().map_or(&[], |p| &p.classes);
        for (i, &c) in self.classes.iter().enumerate() {
            let key = format!("classes[{i}]");
            if c > 7 {
                return Err(err(&key, format!("class {c}: a class is 0..7")));
            }
            if self.classes[..i].contains(&c) {
                return Err(err(&key, format!("class {c} is listed twice")));
            }
            if c == self.header_class {
                return Err(err(
                    &key,
                    format!(
                        "class {c} is the header class: trim into another class (header_class)"
                    ),
                ));
            }
            if lossless.contains(&c) {
                return Err(err(
                    &key,
                    format!(
                        "class {c} is lossless (switch.pfc.classes): PFC never drops it, so \
                         there is nothing to trim; remove it from switch.trim.classes or from \
                         switch.pfc.classes"
                    ),
                ));
            }
        }
        if lossless.contains(&self.header_class) {
            return Err(err(
                "header_class",
                format!(
                    "class {} is lossless (switch.pfc.classes): trimmed headers must not be \
                     paused behind PFC; pick a lossy header class",
                    self.header_class
                ),
            ));
        }
        if self.header_bytes == 0 {
            return Err(err(
                "header_bytes",
                "a header has at least one byte (htsim: 64)",
            ));
        }
        if self.threshold_packets == Some(0) {
            return Err(err(
                "threshold_packets",
                "0 would trim every packet; give at least 1, or leave it out",
            ));
        }
        if sw.scheduler != SchedulerKind::Strict {
            return Err(ScenarioError::new(
                "switch.scheduler",
                "[switch.trim] serves its headers by strict priority: use scheduler = \"strict\"",
            ));
        }
        // (Congestion isolation refuses trimming in its own checks.)
        if sw.input_buffer.is_some() {
            return Err(err(
                "classes",
                "trimming with the input-partitioned buffer is not modelled: remove \
                 [switch.input_buffer] or [switch.trim]",
            ));
        }
        Ok(())
    }
}

impl SwitchMechanism for Trim {
    const ID: u8 = 6;
    type Config = Config;
    type State = TrimState;
    type PerSwitch = ();

    const THREADS: bool = true;

    /// Each port's counts (and, with `count_sending`, the packet on its
    /// wire) from the partition that owns it. The victims' coin flips need
    /// no merge: each switch draws from its own stream, in its own
    /// partition.
    fn merge(into: &mut TrimState, from: &mut TrimState, owned: &dyn Fn(u32) -> bool) {
        for port in 0..into.trimmed_pkts.len() {
            if owned(port as u32) {
                into.trimmed_pkts[port] = from.trimmed_pkts[port];
                into.trimmed_bytes[port] = from.trimmed_bytes[port];
                if let Some(sending) = from.sending.get(port) {
                    into.sending[port] = *sending;
                }
            }
        }
    }

    fn build(cfg: Option<&Config>, net: &mut Network) -> TrimState {
        let Some(cfg) = cfg else {
            return TrimState::default();
        };
        if let Some(limit) = cfg.header_limit {
            net.params.admission[cfg.header_class as usize] = Admission::Static { limit: limit.0 };
        }
        let classes = cfg.classes.iter().fold(0, |m, c| m | 1 << c);
        // Its packets never pass straight through (`classify` picks their queue).
        net.params.classified |= classes;
        TrimState {
            classes,
            header_class: cfg.header_class,
            header_bytes: cfg.header_bytes,
            threshold_bytes: cfg.threshold_bytes.map_or(Bytes::MAX, |s| s.0),
            threshold_packets: cfg.threshold_packets.map_or(usize::MAX, |n| n as usize),
            trimmed_pkts: vec![[0; 8]; net.ports.len()],
            trimmed_bytes: vec![[0; 8]; net.ports.len()],
            count_sending: cfg.count_sending,
            sending: if cfg.count_sending {
                vec![(u8::MAX, 0); net.ports.len()]
            } else {
                vec![]
            },
            victims: match cfg.victim {
                Victim::Arriving => vec![],
                Victim::Htsim => (0..net.switches.len() as u64)
                    .map(|s| Stream::new(net.sc.config.seed, "trim-victim", s))
                    .collect(),
            },
        }
    }

    /// The switches' `classified` mask first (CI's test of it, which
    /// comes first, is the same: one test for a class neither picks).
    #[inline(always)]
    fn wants_classify(w: &World, class: u8) -> bool {
        w.sw.classified & (1 << class) != 0 && w.mechs.trim.classes & (1 << class) != 0
    }

    /// Headers to the header queue; a data packet that would be refused is
    /// trimmed first (module docs).
    #[inline(always)]
    fn on_classify(w: &mut World, now: Ps, hop: Hop) -> Hop {
        classify(w, now, hop)
    }

    #[inline(always)]
    fn wants_depart(w: &World, hop: &Hop, _kind: PacketKind) -> bool {
        w.mechs.trim.count_sending && !hop.flushed
    }

    fn departs(w: &World) -> bool {
        w.mechs.trim.count_sending
    }

    /// `count_sending`: the packet now on the port's wire.
    #[inline(always)]
    fn on_depart(w: &mut World, _now: Ps, hop: &Hop) {
        w.mechs.trim.sending[hop.out as usize] = (hop.queue, hop.size as u32);
    }

    fn report(w: &World, _flows: &Table, summary: &mut serde_json::Value) {
        let st = &w.mechs.trim;
        if st.classes == 0 {
            return;
        }
        let mut ports = vec![];
        let (mut pkts, mut bytes) = (0u64, 0u64);
        for (gp, (tp, tb)) in st.trimmed_pkts.iter().zip(&st.trimmed_bytes).enumerate() {
            for c in 0..8 {
                if tp[c] == 0 {
                    continue;
                }
                pkts += tp[c];
                bytes += tb[c];
                let owner = w.ports[gp].owner();
                let local = match owner {
                    Owner::Switch(s) => gp as u32 - w.switches[s as usize].ports.start,
                    Owner::Nic(_) => 0,
                };
                ports.push(serde_json::json!({
                    "node": w.node_of(owner),
                    "port": local,
                    "class": c,
                    "trimmed_packets": tp[c],
                    "trimmed_bytes": tb[c],
                }));
            }
        }
        summary["trim"] = serde_json::json!({
            "trimmed_packets": pkts,
            "trimmed_bytes": bytes,
            "ports": ports,
        });
    }
}

/// The classify hook's work, out of line (a trimming run only).
#[inline(never)]
fn classify(w: &mut World, now: Ps, mut hop: Hop) -> Hop {
    let st = &w.mechs.trim;
    let pkt = w.arena.get(hop.pkt);
    let data = matches!(pkt.kind, PacketKind::Data | PacketKind::Raw);
    if !data || pkt.flags & flags::TRIMMED != 0 {
        hop.queue = st.header_class;
        return hop;
    }
    let port = &w.ports[hop.out as usize];
    let c = hop.class as usize;
    let queue = &port.queues[c];
    let (mut pkts, mut bytes) = (queue.pkts.len(), queue.bytes);
    if st.count_sending {
        // htsim's queue still holds the packet it is sending.
        let (q, size) = st.sending[hop.out as usize];
        if q as usize == c && port.busy_until > now {
            pkts += 1;
            bytes += size as Bytes;
        }
    }
    let over = pkts >= st.threshold_packets
        || bytes + hop.size > st.threshold_bytes
        || !Switch::fits(&w.switches[hop.switch as usize], &w.sw, port, c, hop.size);
    if !over || hop.size <= st.header_bytes as Bytes {
        return hop;
    }
    if !w.mechs.trim.victims.is_empty() && trim_queued(w, now, &hop) {
        // The arriving packet takes the place of the one cut.
        return hop;
    }
    // §3.1: cut the payload, forward the header at high priority.
    let st = &mut w.mechs.trim;
    let cut = hop.size - st.header_bytes as Bytes;
    let pkt = w.arena.get_mut(hop.pkt);
    pkt.size = st.header_bytes;
    pkt.flags |= flags::TRIMMED;
    hop.size = st.header_bytes as Bytes;
    hop.queue = st.header_class;
    count(w, hop.out, c, cut);
    hop
}

/// The bytes `cut` from a packet of class `class` at global port `out`.
fn count(w: &mut World, out: u32, class: usize, cut: Bytes) {
    let st = &mut w.mechs.trim;
    st.trimmed_pkts[out as usize][class] += 1;
    st.trimmed_bytes[out as usize][class] += cut;
    w.counters.cons.trimmed_bytes += cut;
}

/// `victim = "htsim"`: with probability 1/2 (htsim's `drand() < 0.5`, one
/// draw per full queue), cuts the packet queued last in the arriving
/// packet's class queue (htsim's `_enqueued_low.pop_front()`) and moves its
/// header to the header queue (dropped if that is full, as htsim's). Not
/// when nothing is queued, or the last one is smaller than the arriving one
/// (the arriving one would still not fit; htsim lets it overflow the queue,
/// here the arriving one is cut). Returns whether it cut the queued one.
fn trim_queued(w: &mut World, now: Ps, hop: &Hop) -> bool {
    let (s, out, c) = (hop.switch as usize, hop.out as usize, hop.class as usize);
    if !w.mechs.trim.victims[s].chance(0.5) {
        return false;
    }
    let Some(&last) = w.ports[out].queues[c].pkts.back() else {
        return false;
    };
    let size = w.arena.get(last).size as Bytes;
    if size < hop.size {
        return false;
    }
    let port = &mut w.ports[out];
    let queue = &mut port.queues[c];
    queue.pkts.pop_back();
    queue.track(now);
    queue.bytes -= size;
    // It left the queue (as a packet sent does, for the queue's counts).
    queue.counters.deq_pkts += 1;
    queue.counters.deq_bytes += size;
    queue.counters.qdelay_sum += now - w.arena.get(last).enq_at;
    if queue.pkts.is_empty() {
        port.nonempty &= !(1 << c);
    }
    w.switches[s].used -= size;
    let st = &w.mechs.trim;
    let (header_bytes, header_class) = (st.header_bytes, st.header_class as usize);
    let pkt = w.arena.get_mut(last);
    pkt.size = header_bytes;
    pkt.flags |= flags::TRIMMED;
    count(w, hop.out, c, size - header_bytes as Bytes);
    // The port is busy (something was queued), so its next service finds it.
    let port = &mut w.ports[out];
    let switch = &mut w.switches[s];
    if switch.enqueue(&w.sw, port, &mut w.arena, last, header_class, now) == Enqueue::Dropped {
        w.counters.cons.dropped_bytes += header_bytes as Bytes;
        w.arena.free(last);
    }
    true
}
