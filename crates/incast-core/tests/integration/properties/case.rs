//! A generated test case: a small scenario as plain values, written out as
//! scenario TOML by [`Case::toml`] (`render.rs`).
//!
//! Hosts, subsets and fan-ins are drawn as raw numbers and fitted to the
//! topology when the TOML is written (`pick`, `subset`), so every value of
//! [`Case`] gives a valid scenario and shrinking any field keeps it valid.
//! The few derived quantities (a buffer large enough for the PFC headroom
//! of every port, the lossless and in-order promises) are computed here
//! from the same values, so that the checks and the TOML agree.

use incast_core::params::pfc::headroom_formula;
use incast_core::topology::{Graph, NodeRef, TopologyConfig};
use incast_core::units::{Bytes, Ps, Rate, NS, US};

/// Rates are in Gb/s, delays in ns, sizes in bytes unless a name says otherwise.
#[derive(Clone, Debug)]
pub enum Topo {
    Single {
        hosts: u32,
        rate: u32,
        delay_ns: u32,
    },
    LeafSpine {
        leaves: u32,
        spines: u32,
        hosts_per_leaf: u32,
        host_rate: u32,
        fabric_rate: u32,
        host_delay_ns: u32,
        fabric_delay_ns: u32,
        links_per_spine: u32,
    },
    /// k = 4: 16 hosts, 20 switches.
    FatTree {
        host_rate: u32,
        fabric_rate: u32,
        core_rate: Option<u32>,
        delay_ns: u32,
    },
    /// Explicit: `left` hosts on s0, `right` hosts on s1, and s0-s1 joined
    /// through `middle` switches (0: directly), each middle path with its own
    /// rate, so ECMP may pick paths of different speeds.
    Dumbbell {
        left: u32,
        right: u32,
        host_rate: u32,
        middle: Vec<u32>,
        mid_rate: u32,
        delay_ns: u32,
    },
}

#[derive(Clone, Debug)]
pub enum Admission {
    Dynamic(f64),
    Static(u32),
}

#[derive(Clone, Debug)]
pub enum Ecn {
    Off,
    Step {
        k: u32,
        dequeue: bool,
    },
    Red {
        kmin: u32,
        kmax: u32,
        pmax: f64,
        dequeue: bool,
    },
    RedByRate {
        dequeue: bool,
    },
}

#[derive(Clone, Debug)]
pub struct SwitchCase {
    pub buffer: u32,
    pub admission: Admission,
    pub ecn: Ecn,
    /// DWRR with these weights of classes 0, 1, 3 (strict priority when `None`).
    pub dwrr: Option<(u32, u32, u32)>,
    /// A per-class override of class 0: its own ECN rule and admission.
    pub class0: Option<(Ecn, Admission)>,
}

#[derive(Clone, Debug)]
pub enum TcpCc {
    NewReno,
    Dctcp,
    Cubic,
    /// Paced by the NIC (`Ev::Pace`).
    Bbr,
    /// Delay-based, paced below one packet (`Ev::Pace`).
    Swift,
    DctcpWith {
        g: f64,
        initial_alpha: f64,
    },
    /// csg-htsim's STrack (`transport/cc/strack.rs`), base_rtt 10 us; paced below one packet.
    Strack,
}

#[derive(Clone, Debug)]
pub struct TcpCase {
    pub cc: TcpCc,
    pub mtu: u32,
    pub init_cwnd: u32,
    pub rto_min_us: u32,
    pub dupack_threshold: u32,
    /// Delayed ACKs: (count, timeout in us).
    pub delayed_ack: Option<(u32, u32)>,
    pub ack_class: Option<u8>,
    /// The `recovery` value, written explicitly. The strategy draws
    /// `"newreno"`; [`Case::with_recovery`] sets another.
    pub recovery: &'static str,
}

#[derive(Clone, Debug)]
pub enum RdmaCc {
    None,
    Dcqcn { paper: bool },
    Timely,
    Hpcc { eta: f64, max_stage: u32 },
    Dctcp,
}

#[derive(Clone, Debug)]
pub struct RdmaCase {
    pub cc: RdmaCc,
    /// "none", "fixed" or "variable".
    pub window: &'static str,
    pub payload: u32,
    pub ack_interval: u32,
    pub cnp_ack_flag: bool,
    /// ACKs, NACKs and CNPs in the data class (else class 7).
    pub ctrl_in_data_class: bool,
    pub per_pair_rtt: bool,
    pub rate_bound: bool,
    pub rto_us: u32,
    pub back_to_chunk: bool,
}

#[derive(Clone, Debug)]
pub enum Transport {
    Tcp(TcpCase),
    Rdma(RdmaCase),
}

#[derive(Clone, Debug)]
pub enum PfcThreshold {
    Dynamic { alpha: f64, scale_with_rate: bool },
    Static { xoff: u32 },
}

#[derive(Clone, Debug)]
pub enum Watchdog {
    Report { limit_us: u32 },
    Drop { limit_us: u32, restore_us: u32 },
}

#[derive(Clone, Debug)]
pub struct PfcCase {
    /// Class 5 lossless too (class 3 always is).
    pub class5: bool,
    pub threshold: PfcThreshold,
    pub reserve: u32,
    pub resume_offset: u32,
    /// Explicit headroom per ingress (else the formula of `net/pfc.rs`).
    pub headroom: Option<u32>,
    pub response_ns: u32,
    pub pause_quanta: u16,
    pub until_resume: bool,
    pub watchdog: Option<Watchdog>,
    pub hosts_obey: bool,
}

#[derive(Clone, Debug)]
pub enum Detect {
    Arriving,
    Sampled { every: u32 },
    Top { k: u32, every: u32 },
}

#[derive(Clone, Debug)]
pub struct CiCase {
    /// CFQs [1, 2] instead of [2] (class 3 is the CI class).
    pub two_cfqs: bool,
    pub threshold: u32,
    pub detect: Detect,
    /// "marker", "counter" or "none".
    pub order: &'static str,
    pub age_us: u32,
    pub release_on_drain: bool,
    pub propagate_congested: bool,
    pub nic: bool,
    pub max_flows: u32,
    /// "once", "repeat", "ack" or "marked".
    pub reliability: &'static str,
    pub loss: f64,
}

#[derive(Clone, Debug)]
pub enum EdgeRule {
    Named(&'static str),
    SmartPauseFixed {
        threshold_us: u32,
        pause_us: u32,
    },
    OnRamp {
        base_plus_us: u32,
        feedback: bool,
        gradient: bool,
    },
    DynamicByHops,
}

#[derive(Clone, Debug)]
pub struct EdgeCase {
    pub rule: EdgeRule,
    /// "perfect", "huygens", "ntp" or a custom table.
    pub clock: &'static str,
    pub owd_sample_every: u32,
    /// Only the senders of this bit mask gate (all when `None`).
    pub hosts: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct PoissonCase {
    pub load: f64,
    pub cdf: usize,
    pub hosts: Option<u32>,
    pub class: Option<u8>,
    pub small_flows: Option<(u32, u8)>,
    pub start_us: u32,
    /// The group's own TCP congestion control (ignored with RDMA): an index
    /// into [`GROUP_CCS`].
    pub cc: Option<usize>,
}

/// What a Poisson group's own `cc` may be.
pub const GROUP_CCS: [&str; 7] = ["cubic", "bbr", "newreno", "dctcp", "swift", "ndp", "eqds"];

/// NDP's index in [`GROUP_CCS`].
pub const NDP: usize = 5;

/// EQDS's index in [`GROUP_CCS`].
pub const EQDS: usize = 6;

#[derive(Clone, Debug)]
pub enum FanIn {
    Fixed(u32),
    Mix,
}

#[derive(Clone, Debug)]
pub enum IncastWhen {
    Times(Vec<u32>),
    Load(f64),
}

#[derive(Clone, Debug)]
pub struct IncastCase {
    pub fan_in: FanIn,
    /// Bytes per sender, or a CDF (index into the bundled names).
    pub size: Result<u32, usize>,
    pub when: IncastWhen,
    pub receiver: Option<u32>,
    pub hosts: Option<u32>,
    pub class: Option<u8>,
    pub start_us: u32,
}

#[derive(Clone, Debug)]
pub struct FlowCase {
    pub src: u32,
    pub dst: u32,
    pub size: u32,
    pub start_ns: u32,
    pub class: Option<u8>,
}

#[derive(Clone, Debug)]
pub struct PacketsCase {
    pub src: u32,
    pub dst: u32,
    pub size: u32,
    pub rate_mbps: u32,
    pub cbr: bool,
    pub class: Option<u8>,
    pub start_us: u32,
}

/// Listed flows from `fan_in` senders to one receiver at once, in class 3
/// (lossless with PFC, the CI class with congestion isolation): a hot spot
/// whatever the other traffic's class.
#[derive(Clone, Debug)]
pub struct Burst {
    pub fan_in: u32,
    pub bytes: u32,
    pub receiver: u32,
    pub start_us: u32,
}

#[derive(Clone, Debug)]
pub struct Workload {
    pub burst: Option<Burst>,
    pub flows: Vec<FlowCase>,
    pub poisson: Vec<PoissonCase>,
    pub incasts: Vec<IncastCase>,
    pub packets: Vec<PacketsCase>,
}

#[derive(Clone, Debug)]
pub struct Metrics {
    pub warmup_us: u32,
    pub queue_sample_us: u32,
    /// "switch", "all" or "none".
    pub queue_ports: &'static str,
}

/// One generated scenario.
#[derive(Clone, Debug)]
pub struct Case {
    pub seed: u64,
    pub topo: Topo,
    pub switch: SwitchCase,
    pub transport: Transport,
    /// The default class of the flows (TCP `transport.class`, RDMA `data_class`).
    pub data_class: u8,
    pub pfc: Option<PfcCase>,
    pub ci: Option<CiCase>,
    pub edge: Option<EdgeCase>,
    pub workload: Workload,
    pub metrics: Option<Metrics>,
    pub duration_us: u32,
    /// `stop` = duration + this.
    pub drain_us: u32,
}

/// The bundled CDFs the generator draws from (all of them).
pub fn cdf_names() -> &'static [&'static str] {
    incast_core::workload::cdf::Cdf::bundled_names()
}

impl Topo {
    pub fn kind(&self) -> &'static str {
        match self {
            Topo::Single { .. } => "single_switch",
            Topo::LeafSpine { .. } => "leaf_spine",
            Topo::FatTree { .. } => "fat_tree",
            Topo::Dumbbell { .. } => "explicit",
        }
    }

    pub fn n_hosts(&self) -> u32 {
        match self {
            Topo::Single { hosts, .. } => *hosts,
            Topo::LeafSpine {
                leaves,
                hosts_per_leaf,
                ..
            } => leaves * hosts_per_leaf,
            Topo::FatTree { .. } => 16,
            Topo::Dumbbell { left, right, .. } => left + right,
        }
    }

    /// The network graph, as the scenario builds it.
    pub fn graph(&self) -> Graph {
        let cfg: TopologyConfig = toml::from_str(&self.toml()).expect("generated topology parses");
        cfg.build().expect("generated topology builds")
    }
}

impl Case {
    /// The case with loss recovery `recovery` (`"sack"`, `"sack_rack"`)
    /// when its transport is TCP (RDMA cases are left as they are).
    pub fn with_recovery(mut self, recovery: &'static str) -> Case {
        if let Transport::Tcp(t) = &mut self.transport {
            t.recovery = recovery;
        }
        self
    }

    pub fn n_hosts(&self) -> u32 {
        self.topo.n_hosts()
    }

    /// The classes PFC makes lossless.
    /// The classes the switches trim (`[switch.trim]`): the lossy classes
    /// of the Poisson groups that run NDP, but 7 (the headers' queue), when
    /// the switches can trim (strict priority, no congestion isolation).
    pub fn trim_classes(&self) -> Vec<u8> {
        let lossless = self.lossless_classes();
        if !matches!(self.transport, Transport::Tcp(_))
            || self.switch.dwrr.is_some()
            || self.ci.is_some()
            || lossless.contains(&7)
        {
            return vec![];
        }
        let mut classes: Vec<u8> = self
            .workload
            .poisson
            .iter()
            .filter(|p| p.cc == Some(NDP))
            .map(|p| p.class.unwrap_or(self.data_class))
            .filter(|c| *c != 7 && !lossless.contains(c))
            .collect();
        classes.sort_unstable();
        classes.dedup();
        classes
    }

    pub fn lossless_classes(&self) -> Vec<u8> {
        let Some(p) = &self.pfc else { return vec![] };
        let mut c = vec![3];
        c.extend(self.cfqs());
        if p.class5 {
            c.push(5);
        }
        c.sort_unstable();
        c
    }

    /// Whether some traffic travels in a lossless class.
    pub fn workload_uses_lossless(&self) -> bool {
        let l = self.lossless_classes();
        let w = &self.workload;
        let lossless = |c: Option<u8>| l.contains(&c.unwrap_or(self.data_class));
        let empty = w.burst.is_none()
            && w.flows.is_empty()
            && w.poisson.is_empty()
            && w.incasts.is_empty()
            && w.packets.is_empty();
        empty && lossless(None)
            || (w.burst.is_some() && l.contains(&3))
            || w.flows.iter().any(|f| lossless(f.class))
            || w.poisson
                .iter()
                .any(|p| lossless(p.class) || p.small_flows.is_some_and(|s| l.contains(&s.1)))
            || w.incasts.iter().any(|i| lossless(i.class))
            || w.packets.iter().any(|p| lossless(p.class))
    }

    /// The congested-flow queues of congestion isolation (class 3 is its CI class).
    pub fn cfqs(&self) -> Vec<u8> {
        match &self.ci {
            None => vec![],
            // Class 1 may not be a CFQ when it carries RDMA control frames.
            Some(ci) if ci.two_cfqs && self.ctrl_class() != Some(1) => vec![1, 2],
            Some(_) => vec![2],
        }
    }

    /// The class of ACKs when it is set apart from the data (`None`: the flow's own class).
    pub fn ctrl_class(&self) -> Option<u8> {
        match &self.transport {
            Transport::Tcp(t) => t.ack_class,
            Transport::Rdma(r) if r.ctrl_in_data_class => Some(self.data_class),
            Transport::Rdma(_) => Some(7),
        }
    }

    /// Wire bytes of a full data packet: what the headroom formula uses as the MTU.
    pub fn data_wire(&self) -> u32 {
        match &self.transport {
            Transport::Tcp(t) => t.mtu,
            Transport::Rdma(r) => {
                r.payload
                    + 48
                    + if matches!(r.cc, RdmaCc::Hpcc { .. }) {
                        42
                    } else {
                        0
                    }
            }
        }
    }

    /// (payload of a full segment, header bytes of every data packet, ACK bytes).
    pub fn segment(&self) -> (u64, u64, u64) {
        match &self.transport {
            Transport::Tcp(t) => ((t.mtu - 40) as u64, 40, 64),
            Transport::Rdma(r) => {
                let int = if matches!(r.cc, RdmaCc::Hpcc { .. }) {
                    42
                } else {
                    0
                };
                (r.payload as u64, 48 + int, 60)
            }
        }
    }

    pub fn stop(&self) -> Ps {
        (self.duration_us + self.drain_us) as Ps * US
    }

    /// Per switch: headroom bytes reserved over all its ports and lossless
    /// classes, and the number of lossless ingresses.
    pub fn pfc_reservations(&self, g: &Graph) -> Vec<(Bytes, u64)> {
        let Some(p) = &self.pfc else {
            return vec![(0, 0); g.n_switches()];
        };
        let classes = self.lossless_classes().len() as u64;
        (0..g.n_switches() as u32)
            .map(|s| {
                let node = NodeRef::Switch(s);
                let mut total = 0;
                for &(l, _) in g.ports(node) {
                    let link = &g.links[l as usize];
                    let h = p.headroom.map_or_else(
                        || {
                            headroom_formula(
                                link.rate,
                                link.delay,
                                self.data_wire(),
                                p.response_ns as Ps * NS,
                            )
                        },
                        |h| h as Bytes,
                    );
                    total += (h + p.reserve as Bytes) * classes;
                }
                (total, g.ports(node).len() as u64 * classes)
            })
            .collect()
    }

    /// The switch buffer: the drawn size, raised where PFC reserves more
    /// than it leaves (a buffer smaller than the headroom it must hold is a
    /// configuration error, issue 17 item 1, not what this test is about).
    pub fn buffer(&self, g: &Graph) -> Bytes {
        if self.pfc.is_none() {
            return self.switch.buffer as Bytes;
        }
        let mtu = self.data_wire() as Bytes;
        let need = self
            .pfc_reservations(g)
            .iter()
            .map(|&(reserved, ingresses)| reserved + 2 * ingresses * mtu + 100_000)
            .max()
            .unwrap_or(0);
        (self.switch.buffer as Bytes).max(need)
    }

    /// Why PFC cannot promise that the lossless classes drop nothing here,
    /// or `None` when it can. PFC promises it when every byte that can still
    /// arrive after a PAUSE fits in the headroom and the shared pool cannot
    /// overflow before XOFF:
    /// - a watchdog in drop mode flushes and refuses lossless packets on purpose;
    /// - hosts that ignore PAUSE (`hosts_obey = false`) overrun their switch;
    /// - an explicit headroom below the formula of `net/pfc.rs` (the bytes in
    ///   flight during the reaction) for some port may overflow;
    /// - in quanta mode the pause must outlast the refresh: the refresh goes
    ///   out at half the pause time and must arrive (link delay plus a frame
    ///   ahead of it) before the pause ends;
    /// - open-loop datagrams larger than the MTU the headroom is sized for
    ///   (`workload.packets.size` may exceed `transport.mtu`) break the
    ///   formula's two MTUs in flight, in any class: a lossless one lands
    ///   in headroom whole, and a lossy one on the wire toward a sender
    ///   holds back the XOFF to it for its whole length (found by this
    ///   test: a 9000 B datagram in class 0 made a class-3 ingress overflow);
    /// - a static XOFF above the shared pool's share of each ingress lets
    ///   the lossless ingresses fill the whole buffer (drops at "buffer full").
    pub fn lossless_exception(&self, g: &Graph) -> Option<&'static str> {
        let p = self.pfc.as_ref()?;
        if matches!(p.watchdog, Some(Watchdog::Drop { .. })) {
            return Some("the watchdog drops on purpose");
        }
        if !p.hosts_obey {
            return Some("hosts ignore PAUSE");
        }
        let mtu = self.data_wire();
        if self.workload.packets.iter().any(|q| q.size > mtu) {
            return Some("datagrams larger than the MTU");
        }
        let response = p.response_ns as Ps * NS;
        let mut max_delay = 0;
        let mut min_rate = u64::MAX;
        let mut max_rate = 0;
        for link in &g.links {
            if let Some(h) = p.headroom {
                if (h as Bytes) < headroom_formula(link.rate, link.delay, mtu, response) {
                    return Some("explicit headroom below the formula");
                }
            }
            max_delay = max_delay.max(link.delay);
            min_rate = min_rate.min(link.rate.bits_per_sec());
            max_rate = max_rate.max(link.rate.bits_per_sec());
        }
        if !p.until_resume {
            let quantum = Rate(max_rate).tx_time(64);
            let half_pause = p.pause_quanta as Ps * quantum / 2;
            let refresh_late = max_delay + response + 2 * Rate(min_rate).tx_time(mtu as Bytes);
            if half_pause <= refresh_late {
                return Some("pause quanta expire before the refresh arrives");
            }
        }
        if let PfcThreshold::Static { xoff } = p.threshold {
            let buffer = self.buffer(g);
            let fits = self
                .pfc_reservations(g)
                .iter()
                .all(|&(reserved, ingresses)| {
                    reserved + ingresses * (xoff as Bytes + mtu as Bytes) <= buffer
                });
            if !fits {
                return Some("static XOFF thresholds add up to more than the buffer");
            }
        }
        None
    }

    /// Why data may arrive out of order here, or `None` when nothing
    /// permits it. Every flow takes one path (ECMP hashes the flow), every
    /// class queue is FIFO, the edge gate and PFC only delay a flow, and
    /// congestion isolation keeps a flow's order across its queues with
    /// markers or counters; so only a loss (a retransmission fills a gap) or
    /// CI's `order = "none"` ablation reorders. Losses are known only after
    /// the run: the check also requires that nothing was dropped.
    pub fn order_exception(&self) -> Option<&'static str> {
        match &self.ci {
            Some(ci) if ci.order == "none" => Some("congestion isolation without order"),
            _ => None,
        }
    }
}
