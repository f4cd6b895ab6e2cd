//! A generated test case: a small scenario as plain values, written out as
//! scenario TOML by [`Case::toml`].
//!
//! Hosts, subsets and fan-ins are drawn as raw numbers and fitted to the
//! topology when the TOML is written (`pick`, `subset`), so every value of
//! [`Case`] gives a valid scenario and shrinking any field keeps it valid.
//! The few derived quantities (a buffer large enough for the PFC headroom
//! of every port, the lossless and in-order promises) are computed here
//! from the same values, so that the checks and the TOML agree.

use incast_core::net::pfc::headroom_formula;
use incast_core::topology::{Graph, NodeRef, TopologyConfig};
use incast_core::units::{Bytes, Ps, Rate, NS, US};
use std::fmt::Write;

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
    DctcpWith { g: f64, initial_alpha: f64 },
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
}

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

#[derive(Clone, Debug)]
pub struct Workload {
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

/// Host `raw` fitted to `n` hosts.
fn pick(raw: u32, n: u32) -> u32 {
    raw % n
}

/// A destination other than `src`.
fn pick_other(src: u32, raw: u32, n: u32) -> u32 {
    (src + 1 + raw % (n - 1)) % n
}

/// The hosts whose bit is set in `mask` (bit i % 32 for host i), at least two.
pub fn subset(mask: u32, n: u32) -> Vec<u32> {
    let mut out: Vec<u32> = (0..n).filter(|h| mask & (1 << (h % 32)) != 0).collect();
    for h in 0..n {
        if out.len() >= 2 {
            break;
        }
        if !out.contains(&h) {
            out.push(h);
        }
    }
    out.sort_unstable();
    out
}

fn list(v: &[u32]) -> String {
    let items: Vec<String> = v.iter().map(u32::to_string).collect();
    format!("[{}]", items.join(", "))
}

fn ecn_toml(e: &Ecn) -> String {
    let at = |d: bool| if d { "dequeue" } else { "enqueue" };
    match e {
        Ecn::Off => r#"{ kind = "off" }"#.into(),
        Ecn::Step { k, dequeue } => {
            format!(r#"{{ kind = "step", k = {k}, at = "{}" }}"#, at(*dequeue))
        }
        Ecn::Red {
            kmin,
            kmax,
            pmax,
            dequeue,
        } => format!(
            r#"{{ kind = "red", kmin = {kmin}, kmax = {}, pmax = {pmax}, at = "{}" }}"#,
            kmin + kmax,
            at(*dequeue)
        ),
        Ecn::RedByRate { dequeue } => format!(
            r#"{{ kind = "red_by_rate", at = "{}", levels = [{{ rate = "10Gbps", kmin = "10KB", kmax = "50KB", pmax = 0.2 }}, {{ rate = "100Gbps", kmin = "100KB", kmax = "400KB", pmax = 0.2 }}] }}"#,
            at(*dequeue)
        ),
    }
}

fn admission_toml(a: &Admission) -> String {
    match a {
        Admission::Dynamic(alpha) => format!(r#"{{ kind = "dynamic", alpha = {alpha} }}"#),
        Admission::Static(limit) => format!(r#"{{ kind = "static", limit = {limit} }}"#),
    }
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

    fn toml(&self) -> String {
        match self {
            Topo::Single {
                hosts,
                rate,
                delay_ns,
            } => format!(
                "kind = \"single_switch\"\nhosts = {hosts}\nlink_rate = \"{rate}Gbps\"\nlink_delay = \"{delay_ns}ns\"\n"
            ),
            Topo::LeafSpine {
                leaves,
                spines,
                hosts_per_leaf,
                host_rate,
                fabric_rate,
                host_delay_ns,
                fabric_delay_ns,
                links_per_spine,
            } => format!(
                "kind = \"leaf_spine\"\nleaves = {leaves}\nspines = {spines}\nhosts_per_leaf = {hosts_per_leaf}\n\
                 host_rate = \"{host_rate}Gbps\"\nfabric_rate = \"{fabric_rate}Gbps\"\nhost_delay = \"{host_delay_ns}ns\"\n\
                 fabric_delay = \"{fabric_delay_ns}ns\"\nlinks_per_spine = {links_per_spine}\n"
            ),
            Topo::FatTree {
                host_rate,
                fabric_rate,
                core_rate,
                delay_ns,
            } => {
                let mut s = format!(
                    "kind = \"fat_tree\"\nk = 4\nhost_rate = \"{host_rate}Gbps\"\nfabric_rate = \"{fabric_rate}Gbps\"\ndelay = \"{delay_ns}ns\"\n"
                );
                if let Some(c) = core_rate {
                    let _ = writeln!(s, "core_rate = \"{c}Gbps\"");
                }
                s
            }
            Topo::Dumbbell {
                left,
                right,
                host_rate,
                middle,
                mid_rate,
                delay_ns,
            } => {
                let n = left + right;
                let hosts: Vec<String> = (0..n).map(|h| format!("\"h{h}\"")).collect();
                let mut switches = vec!["\"s0\"".to_string(), "\"s1\"".to_string()];
                let mut links = vec![];
                for h in 0..n {
                    let sw = if h < *left { "s0" } else { "s1" };
                    links.push(format!(
                        "{{ a = \"h{h}\", b = \"{sw}\", rate = \"{host_rate}Gbps\", delay = \"{delay_ns}ns\" }}"
                    ));
                }
                if middle.is_empty() {
                    links.push(format!(
                        "{{ a = \"s0\", b = \"s1\", rate = \"{mid_rate}Gbps\", delay = \"{delay_ns}ns\" }}"
                    ));
                }
                for (i, r) in middle.iter().enumerate() {
                    switches.push(format!("{{ name = \"m{i}\", tier = 2 }}"));
                    for end in ["s0", "s1"] {
                        links.push(format!(
                            "{{ a = \"{end}\", b = \"m{i}\", rate = \"{r}Gbps\", delay = \"{delay_ns}ns\" }}"
                        ));
                    }
                }
                format!(
                    "kind = \"explicit\"\nhosts = [{}]\nswitches = [{}]\nlinks = [\n    {},\n]\n",
                    hosts.join(", "),
                    switches.join(", "),
                    links.join(",\n    ")
                )
            }
        }
    }

    /// The network graph, as the scenario builds it.
    pub fn graph(&self) -> Graph {
        let cfg: TopologyConfig = toml::from_str(&self.toml()).expect("generated topology parses");
        cfg.build().expect("generated topology builds")
    }
}

impl Case {
    pub fn n_hosts(&self) -> u32 {
        self.topo.n_hosts()
    }

    /// The classes PFC makes lossless.
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
        let empty = w.flows.is_empty()
            && w.poisson.is_empty()
            && w.incasts.is_empty()
            && w.packets.is_empty();
        empty && lossless(None)
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

    /// The scenario as TOML.
    pub fn toml(&self) -> String {
        let g = self.topo.graph();
        let n = self.n_hosts();
        let mut s = String::new();
        let _ = writeln!(s, "name = \"property\"\nseed = {}", self.seed);
        let _ = writeln!(
            s,
            "duration = \"{}us\"\nstop = \"{}us\"",
            self.duration_us,
            self.duration_us + self.drain_us
        );
        let _ = writeln!(s, "\n[topology]\n{}", self.topo.toml());
        self.switch_toml(&mut s, &g);
        self.transport_toml(&mut s);
        if let Some(e) = &self.edge {
            edge_toml(&mut s, e, n);
        }
        if let Some(m) = &self.metrics {
            let _ = writeln!(
                s,
                "[metrics]\nwarmup = \"{}us\"\nqueue_sample_interval = \"{}us\"\nqueue_ports = \"{}\"\nsize_buckets = [\"10KB\", \"100KB\", \"1MB\"]\n",
                m.warmup_us.min(self.duration_us), m.queue_sample_us, m.queue_ports
            );
        }
        self.workload_toml(&mut s);
        s
    }

    fn switch_toml(&self, s: &mut String, g: &Graph) {
        let sw = &self.switch;
        let _ = writeln!(
            s,
            "[switch]\nbuffer = {}\nadmission = {}\necn = {}",
            self.buffer(g),
            admission_toml(&sw.admission),
            ecn_toml(&sw.ecn)
        );
        let mut classes = vec![];
        if let Some((w0, w1, w3)) = sw.dwrr {
            let _ = writeln!(s, "scheduler = \"dwrr\"");
            classes.push(format!("{{ class = 1, weight = {w1} }}"));
            classes.push(format!("{{ class = 3, weight = {w3} }}"));
            if sw.class0.is_none() {
                classes.push(format!("{{ class = 0, weight = {w0} }}"));
            }
        }
        if let Some((e, a)) = &sw.class0 {
            let w = sw
                .dwrr
                .map_or(String::new(), |d| format!(", weight = {}", d.0));
            classes.push(format!(
                "{{ class = 0, ecn = {}, admission = {}{w} }}",
                ecn_toml(e),
                admission_toml(a)
            ));
        }
        if !classes.is_empty() {
            let _ = writeln!(s, "classes = [\n    {},\n]", classes.join(",\n    "));
        }
        if let Some(p) = &self.pfc {
            let classes: Vec<u32> = self.lossless_classes().iter().map(|&c| c as u32).collect();
            let _ = writeln!(s, "\n[switch.pfc]\nclasses = {}", list(&classes));
            match p.threshold {
                PfcThreshold::Dynamic {
                    alpha,
                    scale_with_rate,
                } => {
                    let _ = writeln!(s, "threshold = {{ kind = \"dynamic\", alpha = {alpha}, scale_with_rate = {scale_with_rate} }}");
                }
                PfcThreshold::Static { xoff } => {
                    let _ = writeln!(s, "threshold = {{ kind = \"static\", xoff = {xoff} }}");
                }
            }
            let _ = writeln!(
                s,
                "reserve = {}\nresume_offset = {}\nresponse_time = \"{}ns\"\npause_quanta = {}\nmode = \"{}\"\nhosts_obey = {}",
                p.reserve,
                p.resume_offset,
                p.response_ns,
                p.pause_quanta,
                if p.until_resume { "until_resume" } else { "quanta" },
                p.hosts_obey
            );
            if let Some(h) = p.headroom {
                let _ = writeln!(s, "headroom = {h}");
            }
            match &p.watchdog {
                None => {}
                Some(Watchdog::Report { limit_us }) => {
                    let _ = writeln!(s, "watchdog = {{ limit = \"{limit_us}us\" }}");
                }
                Some(Watchdog::Drop {
                    limit_us,
                    restore_us,
                }) => {
                    let _ = writeln!(
                        s,
                        "watchdog = {{ limit = \"{limit_us}us\", drop = true, restore = \"{restore_us}us\" }}"
                    );
                }
            }
        }
        if let Some(ci) = &self.ci {
            let cfq: Vec<u32> = self.cfqs().iter().map(|&c| c as u32).collect();
            let detect = match ci.detect {
                Detect::Arriving => r#"{ kind = "arriving" }"#.to_string(),
                Detect::Sampled { every } => format!(r#"{{ kind = "sampled", every = {every} }}"#),
                Detect::Top { k, every } => {
                    format!(r#"{{ kind = "top", k = {k}, every = {every} }}"#)
                }
            };
            let _ = writeln!(
                s,
                "\n[switch.ci]\nqueues = [{{ class = 3, cfq = {} }}]\nthreshold = {}\ndetect = {detect}\norder = \"{}\"\n\
                 age = \"{}us\"\nrelease_on_drain = {}\npropagate = \"{}\"\nnic = {}\nmax_flows = {}\n\
                 cip = {{ reliability = \"{}\", loss = {} }}",
                list(&cfq),
                ci.threshold,
                ci.order,
                ci.age_us,
                ci.release_on_drain,
                if ci.propagate_congested { "congested" } else { "immediate" },
                ci.nic,
                ci.max_flows,
                ci.reliability,
                ci.loss
            );
        }
        s.push('\n');
    }

    fn transport_toml(&self, s: &mut String) {
        match &self.transport {
            Transport::Tcp(t) => {
                let cc = match t.cc {
                    TcpCc::NewReno => "\"newreno\"".to_string(),
                    TcpCc::Dctcp => "\"dctcp\"".to_string(),
                    TcpCc::DctcpWith { g, initial_alpha } => {
                        format!(
                            "{{ algorithm = \"dctcp\", g = {g}, initial_alpha = {initial_alpha} }}"
                        )
                    }
                };
                let _ = writeln!(
                    s,
                    "[transport]\ncc = {cc}\nmtu = {}\ninit_cwnd = {}\nrto_min = \"{}us\"\ndupack_threshold = {}\nclass = {}",
                    t.mtu, t.init_cwnd, t.rto_min_us, t.dupack_threshold, self.data_class
                );
                if let Some(c) = t.ack_class {
                    let _ = writeln!(s, "ack_class = {c}");
                }
                if let Some((count, timeout)) = t.delayed_ack {
                    let _ = writeln!(
                        s,
                        "delayed_ack = {{ count = {count}, timeout = \"{timeout}us\" }}"
                    );
                }
            }
            Transport::Rdma(r) => {
                let cc = match r.cc {
                    RdmaCc::None => "\"none\"".to_string(),
                    RdmaCc::Dcqcn { paper: false } => "\"dcqcn\"".to_string(),
                    RdmaCc::Dcqcn { paper: true } => {
                        r#"{ algorithm = "dcqcn", model = "paper" }"#.to_string()
                    }
                    RdmaCc::Timely => "\"timely\"".to_string(),
                    RdmaCc::Hpcc { eta, max_stage } => {
                        format!("{{ algorithm = \"hpcc\", eta = {eta}, max_stage = {max_stage} }}")
                    }
                    RdmaCc::Dctcp => "\"dctcp\"".to_string(),
                };
                // Rate-based DCTCP reads ECN echoes on ACKs.
                let ack_flag = r.cnp_ack_flag || matches!(r.cc, RdmaCc::Dctcp);
                let _ = writeln!(
                    s,
                    "[rdma]\ncc = {cc}\nwindow = \"{}\"\npayload = {}\nack_interval = {}\ncnp_mode = \"{}\"\n\
                     data_class = {}\nctrl_class = {}\nbase_rtt = \"{}\"\nrate_bound = {}\nrto = \"{}us\"\nback_to_chunk = {}",
                    r.window,
                    r.payload,
                    r.ack_interval,
                    if ack_flag { "ack_flag" } else { "paced" },
                    self.data_class,
                    self.ctrl_class().expect("rdma has a control class"),
                    if r.per_pair_rtt { "per_pair" } else { "global_max" },
                    r.rate_bound,
                    r.rto_us,
                    r.back_to_chunk
                );
            }
        }
        s.push('\n');
    }

    fn workload_toml(&self, s: &mut String) {
        let n = self.n_hosts();
        let w = &self.workload;
        let cdfs = cdf_names();
        let class = |c: Option<u8>| c.map_or(String::new(), |c| format!("class = {c}\n"));
        let mut flows = w.flows.clone();
        if w.flows.is_empty()
            && w.poisson.is_empty()
            && w.incasts.is_empty()
            && w.packets.is_empty()
        {
            flows.push(FlowCase {
                src: 0,
                dst: 1,
                size: 1000,
                start_ns: 0,
                class: None,
            });
        }
        for f in &flows {
            let src = pick(f.src, n);
            let _ = writeln!(
                s,
                "[[workload.flows]]\nsrc = {src}\ndst = {}\nsize = {}\nstart = \"{}ns\"\n{}",
                pick_other(src, f.dst, n),
                f.size,
                f.start_ns,
                class(f.class)
            );
        }
        // The loads of the generators add up to at most 0.95 at any host.
        let total: f64 = w.poisson.iter().map(|p| p.load).sum();
        let scale = if total > 0.95 { 0.95 / total } else { 1.0 };
        for p in &w.poisson {
            let load = ((p.load * scale) * 1000.0).floor() / 1000.0;
            let _ = writeln!(
                s,
                "[[workload.poisson]]\nload = {}\ncdf = \"{}\"\nstart = \"{}us\"\n{}",
                load.max(0.001),
                cdfs[p.cdf % cdfs.len()],
                p.start_us,
                class(p.class)
            );
            if let Some(m) = p.hosts {
                let _ = writeln!(s, "hosts = {}", list(&subset(m, n)));
            }
            if let Some((below, c)) = p.small_flows {
                let _ = writeln!(s, "small_flows = {{ below = {below}, class = {c} }}");
            }
        }
        for inc in &w.incasts {
            let group = inc.hosts.map_or_else(|| (0..n).collect(), |m| subset(m, n));
            let max_fan = group.len() as u32 - 1;
            let _ = writeln!(
                s,
                "[[workload.incast]]\nstart = \"{}us\"\n{}",
                inc.start_us,
                class(inc.class)
            );
            match inc.fan_in {
                FanIn::Fixed(f) => {
                    let _ = writeln!(s, "fan_in = {}", 1 + (f - 1) % max_fan);
                }
                FanIn::Mix => {
                    let _ = writeln!(s, "fan_in_mix = [[1, 0.5], [{}, 0.5]]", max_fan.min(4));
                }
            }
            match inc.size {
                Ok(b) => {
                    let _ = writeln!(s, "bytes_per_sender = {b}");
                }
                Err(c) => {
                    let _ = writeln!(s, "cdf = \"{}\"", cdfs[c % cdfs.len()]);
                }
            }
            match &inc.when {
                IncastWhen::Times(t) => {
                    let times: Vec<String> = t
                        .iter()
                        .map(|t| format!("\"{}us\"", t % self.duration_us))
                        .collect();
                    let _ = writeln!(s, "times = [{}]", times.join(", "));
                }
                IncastWhen::Load(l) => {
                    let _ = writeln!(s, "load = {l}");
                }
            }
            if let Some(r) = inc.receiver {
                let _ = writeln!(s, "receiver = {}", group[(r % group.len() as u32) as usize]);
            }
            if inc.hosts.is_some() {
                let _ = writeln!(s, "hosts = {}", list(&group));
            }
            s.push('\n');
        }
        for p in &w.packets {
            let src = pick(p.src, n);
            let _ = writeln!(
                s,
                "[[workload.packets]]\nsrc = {src}\ndst = {}\nsize = {}\nrate = \"{}Mbps\"\nprocess = \"{}\"\nstart = \"{}us\"\n{}",
                pick_other(src, p.dst, n),
                p.size,
                p.rate_mbps,
                if p.cbr { "cbr" } else { "poisson" },
                p.start_us,
                class(p.class)
            );
        }
    }
}

fn edge_toml(s: &mut String, e: &EdgeCase, n: u32) {
    let rule = match &e.rule {
        EdgeRule::Named(name) => format!("\"{name}\""),
        EdgeRule::SmartPauseFixed {
            threshold_us,
            pause_us,
        } => format!(
            "{{ algorithm = \"smart_pause_fixed\", threshold = \"{threshold_us}us\", pause = \"{pause_us}us\" }}"
        ),
        EdgeRule::OnRamp {
            base_plus_us,
            feedback,
            gradient,
        } => format!(
            "{{ algorithm = \"on_ramp\", threshold = {{ base_plus = \"{base_plus_us}us\" }}, feedback = {feedback}, concurrency = \"{}\" }}",
            if *gradient { "gradient" } else { "none" }
        ),
        EdgeRule::DynamicByHops => {
            r#"{ algorithm = "smart_pause_dynamic", threshold = { by_switch_hops = { 1 = "3us", 3 = "6us" } } }"#.to_string()
        }
    };
    let clock = match e.clock {
        "custom" => r#"{ offset = "50ns", drift_ppm = 0.5, noise = "20ns" }"#.to_string(),
        preset => format!("\"{preset}\""),
    };
    let _ = writeln!(
        s,
        "[edge]\nrule = {rule}\nclock = {clock}\nowd_sample_every = {}",
        e.owd_sample_every
    );
    if let Some(m) = e.hosts {
        let _ = writeln!(s, "hosts = {}", list(&subset(m, n)));
    }
    s.push('\n');
}
