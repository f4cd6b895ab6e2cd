//! The IBM talk's adapter (April 2007, its "fine print" slide) as a NIC model, and the
//! sources' half of congestion management (`[cm]`): reaction points.
//!
//! # A raw frame's way through the adapter
//!
//! 1. An on/off source ([`crate::workload::onoff`]) hands a frame to
//!    [`offer`]: it joins the virtual output queue (VOQ) of its destination,
//!    one VOQ per other host, sharing the ingress buffer equally
//!    ([`VoqAdapter`]). A frame that does not fit is refused and its flow
//!    (source, destination) is *quenched*: its source generates nothing for
//!    that destination until the VOQ has room again. Nothing is lost: a
//!    refused frame was never sent (`summary.cm.quenched_frames`).
//! 2. When the port is free and not PAUSEd on the frames' class,
//!    [`Adapter::next_packet`] takes the next VOQ round robin among those
//!    whose rate limiter allows a frame now; otherwise it wakes the NIC at
//!    the earliest time one does. Transport flows (TCP, RDMA) are served
//!    round robin after the raw frames ([`super::RoundRobin`]).
//! 3. Each flow has a reaction point ([`AnyRp`]: ECM, E2CM or QCN), created
//!    with the flow's first frame: the frame carries the limiter's tag
//!    (ECM: the congestion point that limits it, in [`Packet::flow_uid`] as
//!    `cp + 1`) and its source (in [`Packet::flow`]); E2CM may send a probe
//!    right behind it.
//! 4. Feedback from a switch's congestion point ([`crate::mech::cm`]), a
//!    probe reaching its destination (answered at once with an echo) and an
//!    echo back at the source arrive as routed notifications
//!    ([`PacketKind::Notify`], the message in a side table: [`Msgs`]) and
//!    change the flow's limiter ([`on_notify`]); so do the limiter's timers
//!    ([`on_rp_timer`]).
//!
//! # The receiving side: hotspots
//!
//! A host named in `[[workload.hotspot]]` has a receive buffer
//! ([`RxBuffer`], 150 KB) drained at its service rate: its link rate, and
//! `service_rate` times that during the hotspot. At `watermark_high =
//! 150 KB - headroom` it PAUSEs the switch port feeding it (802.3x; the
//! frames' class), and resumes at `watermark_low = high - 10 KB`. Headroom
//! (RTT x bandwidth unless given): the bytes the link delivers in two
//! propagation delays, plus the frame on the wire when the PAUSE leaves and
//! the PAUSE frame itself. Frames are handed to the host (delivered) as the
//! buffer drains them.
//!
//! Feedback, probes and echoes travel on [`CM_CLASS`] (7), which PAUSE does
//! not stop (802.1Qau sends CNMs on a priority of their own).
//!
//! # On threads
//!
//! Everything here is per NIC: a NIC's VOQs and receive buffer, and each
//! flow's reaction point, made at its source's NIC. What crosses NICs is a
//! frame: a Notify frame into another partition's world takes its message
//! with it ([`Msgs`]). Each partition samples its own NICs and switches at
//! the sampler's ticks, and the `cm` series add up tick by tick, the
//! limiters' mean rate from an exact sum ([`crate::cm::report::RateSum`]).

use super::{NicModel, RoundRobin};
pub use crate::cm::adapter::AdapterParams;
use crate::cm::adapter::VoqAdapter;
use crate::cm::e2cm::{ProbeClass, ProbeEcho, ProbeRequest};
use crate::cm::report::{Point, Series};
use crate::cm::rx_buffer::{rx_watermarks, RxBuffer};
use crate::cm::scheme::{AnyRp, Feedback, RpShared};
use crate::cm::{CmConfig, PauseChange, FEEDBACK_FRAME_BYTES};
use crate::engine::LazyTimer;
use crate::host::paths;
use crate::metrics_table::Table;
use crate::net::switch;
use crate::net::{Packet, PacketKind, PktId};
use crate::scenario::{Scenario, ScenarioError};
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::{Ps, Rate};
use std::collections::VecDeque;

/// The class of feedback frames, probes and echoes.
pub(crate) const CM_CLASS: u8 = 7;

/// [`Ev::NicTimer`] codes: a reaction point's timer (for its slot), a
/// hotspot's start and end (for its index).
const RP_TIMER: u16 = 0;
const HOTSPOT_START: u16 = 1;
const HOTSPOT_END: u16 = 2;

/// The adapter NIC model.
pub struct Adapter;

impl NicModel for Adapter {
    /// The adapters and the sources' congestion management.
    type State = Option<Box<CmState>>;

    fn held_bytes(w: &World) -> u64 {
        let st = w.nic_state.adapter.as_deref();
        st.map_or(0, |st| st.held_bytes(|id| w.arena.get(id).size as u64))
    }

    #[inline(never)]
    fn next_packet(w: &mut World, now: Ps, nic: u32) -> Option<PktId> {
        next_frame(w, now, nic).or_else(|| RoundRobin::next_packet(w, now, nic))
    }
    fn flow_ready(w: &mut World, nic: u32, slot: u32) {
        RoundRobin::flow_ready(w, nic, slot)
    }
    fn on_timer(w: &mut World, now: Ps, code: u16, target: u32) {
        match code {
            RP_TIMER => on_rp_timer(w, now, target),
            _ => on_hotspot(w, now, target, code == HOTSPOT_START),
        }
    }
    fn timer_nic(w: &World, code: u16, target: u32) -> Option<u32> {
        let st = w.nic_state.adapter.as_deref()?;
        Some(match code {
            RP_TIMER => st.rps[target as usize].nic,
            _ => st.hotspots[target as usize].nic,
        })
    }

    /// Every NIC's VOQs and receive buffer are its own, and so is each
    /// flow's reaction point (at its source's NIC); what crosses NICs
    /// travels in frames, its message by value ([`Msgs`]). The
    /// `cm` series and the counters add up over the partitions.
    const THREADS: bool = true;

    /// Each NIC's VOQs and receive buffer from its owner; the partition's
    /// reaction points after those already taken (its VOQs' tags renumbered
    /// to match), its counters added, its `cm` series added tick by tick.
    fn merge(into: &mut Self::State, from: &mut Self::State, owned: &dyn Fn(u32) -> bool) {
        let (Some(into), Some(from)) = (into.as_deref_mut(), from.as_deref_mut()) else {
            return;
        };
        for nic in (0..into.voqs.len()).filter(|&nic| owned(nic as u32)) {
            std::mem::swap(&mut into.voqs[nic], &mut from.voqs[nic]);
            std::mem::swap(&mut into.rx[nic], &mut from.rx[nic]);
        }
        for (rp, limit) in from.rps.drain(..).zip(from.limits.drain(..)) {
            let slot = into.rps.len() as u32;
            into.voqs[rp.nic as usize].set_tag(rp.voq as usize, slot);
            into.rps.push(rp);
            into.limits.push(limit);
        }
        into.totals.add(&from.totals);
        into.feedback_sent += from.feedback_sent;
        into.series.merge(&from.series);
    }
    fn flow_done(w: &mut World, nic: u32, slot: u32) {
        RoundRobin::flow_done(w, nic, slot)
    }
    fn has_work(w: &World, nic: u32) -> bool {
        w.nic_state
            .adapter
            .as_ref()
            .is_some_and(|st| st.voqs[nic as usize].total_bytes() > 0)
            || RoundRobin::has_work(w, nic)
    }

    /// One host per NIC, no PCIe link (the receive buffer drains at the
    /// hotspot's service rate), at most 4096 hosts, and `[nic.adapter]`.
    fn validate(sc: &Scenario) -> Result<(), ScenarioError> {
        let c = &sc.config;
        if c.nic.hosts > 1 {
            return Err(ScenarioError::new(
                "nic.hosts",
                "the adapter model has one host per NIC; remove nic.hosts or use \"round_robin\" or \"queues\"",
            ));
        }
        if c.nic.pcie_rate.is_some() {
            return Err(ScenarioError::new(
                "nic.pcie_rate",
                "the adapter drains its receive buffer at the hotspot's service rate; remove nic.pcie_rate",
            ));
        }
        let hosts = sc.graph.n_hosts() as u64;
        if hosts * hosts.saturating_sub(1) > crate::cm::adapter::MAX_TAG as u64 + 1 {
            return Err(ScenarioError::new(
                "nic.model",
                format!("the adapter numbers its flows (one per pair of hosts) in 24 bits: at most 4096 hosts, this topology has {hosts}; use \"round_robin\""),
            ));
        }
        let voqs = sc.graph.n_hosts().saturating_sub(1).max(1);
        c.nic
            .adapter
            .validate(voqs, sc.largest_frame())
            .map_err(|e| ScenarioError::new(format!("nic.adapter.{}", e.field), e.message))
    }

    const SERIES: &'static [&'static str] = &["cm"];

    fn samples(w: &World) -> bool {
        w.nic_state.adapter.is_some()
    }

    fn sample(w: &mut World) {
        let inputs = w.mechs.cm.inputs.iter().flat_map(|i| i.all_stats());
        let input_drops = inputs.map(|s| s.dropped_frames).sum();
        if let Some(st) = w.nic_state.adapter.as_deref_mut() {
            let t = &st.totals;
            let totals = [
                st.feedback_sent,
                t.feedback_received,
                t.quenched_frames,
                input_drops,
            ];
            let point = Point::new(st.limited_rates(), totals, st.rx_occupancy());
            st.series.push(point);
        }
    }

    fn halve_series(w: &mut World) {
        if let Some(st) = w.nic_state.adapter.as_deref_mut() {
            st.series.halve();
        }
    }

    fn series_tables(w: &World, times: &[Ps]) -> Vec<Table> {
        vec![w
            .nic_state
            .adapter
            .as_deref()
            .map_or_else(|| Series::default().table(&[]), |st| st.series.table(times))]
    }

    fn empty_series() -> Vec<Table> {
        vec![Series::default().table(&[])]
    }

    /// The adapters' state ([`CmState`]) and the hotspots' events.
    fn build(sc: &Scenario, w: &mut World) {
        let c = &sc.config;
        let rates: Vec<Rate> = w
            .nics
            .iter()
            .map(|n| w.ports[n.port as usize].rate)
            .collect();
        let mut st = CmState::new(
            &c.cm,
            &c.nic.adapter,
            &rates,
            w.host_nic.len() as u32,
            sc.data_class(),
        );
        let frame = sc.largest_frame();
        for (i, h) in c.workload.hotspot.iter().enumerate() {
            let host = sc.host_index(&h.host);
            let nic = w.host_nic[host as usize];
            let port = &w.ports[w.nics[nic as usize].port as usize];
            let headroom = crate::cm::rx_buffer::rx_headroom(port.rate, port.delay, frame);
            st.add_rx(nic, port.rate, &c.nic.adapter, headroom);
            let rate = Rate((port.rate.bits_per_sec() as f64 * h.service_rate).round() as u64);
            let end = h.duration.map(|d| h.start.0 + d.0);
            st.hotspots.push(Hotspot {
                nic,
                rate,
                start: h.start.0,
                end,
            });
            w.q.push(h.start.0, Ev::NicTimer(HOTSPOT_START, i as u32));
            if let Some(e) = end {
                w.q.push(e, Ev::NicTimer(HOTSPOT_END, i as u32));
            }
        }
        w.nic_state.adapter = Some(Box::new(st));
    }
}

/// A message carried by a [`PacketKind::Notify`] frame.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Msg {
    /// From a congestion point to the sampled frame's source.
    Feedback(Feedback),
    /// E2CM: from a flow's source to its destination; left the source's
    /// port at `wire_at` on the path of `hash`.
    Probe {
        src: u32,
        dst: u32,
        hash: u64,
        wire_at: Ps,
        req: ProbeRequest,
    },
    /// E2CM: the destination's answer, back to the source of flow (`src`, `dst`).
    Echo { src: u32, dst: u32, echo: ProbeEcho },
}

/// The messages in flight, by slot (a Notify frame's `seq`). In a threaded
/// run a frame into another partition's world takes its message with it
/// ([`crate::net::link::Outbox::mail`]), filed there in a slot of that
/// world's table.
#[derive(Default)]
pub(crate) struct Msgs {
    slots: Vec<Option<Msg>>,
    free: Vec<u32>,
}

impl Msgs {
    pub fn put(&mut self, m: Msg) -> u64 {
        match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some(m);
                i as u64
            }
            None => {
                self.slots.push(Some(m));
                (self.slots.len() - 1) as u64
            }
        }
    }
    pub fn take(&mut self, i: u64) -> Msg {
        let m = self.slots[i as usize].take().expect("a message in flight");
        self.free.push(i as u32);
        m
    }
}

/// One flow's reaction point and where its frames wait. Aligned to a
/// cache line, the reaction point first: what a frame sent reads of it is
/// one line ([`AnyRp`]'s layout); its NIC, VOQ and timer, which only its
/// feedback, echoes and timer read, come after.
#[repr(C, align(64))]
pub(crate) struct Rp {
    pub rp: AnyRp,
    pub nic: u32,
    voq: u32,
    timer: LazyTimer,
}

/// A hotspot host's receive side.
pub(crate) struct RxNic {
    buf: RxBuffer,
    /// The frames in the buffer, oldest first (the one in service first).
    pkts: VecDeque<PktId>,
    pub link: Rate,
    pub pauses: u64,
}

impl RxNic {
    pub fn stats(&self) -> crate::cm::rx_buffer::RxStats {
        self.buf.stats
    }
}

/// `[[workload.hotspot]]`, resolved.
pub(crate) struct Hotspot {
    pub nic: u32,
    pub rate: Rate,
    pub start: Ps,
    pub end: Option<Ps>,
}

/// Counters of the sources' side (`summary.cm`).
#[derive(Default, Debug, Clone, Copy)]
pub(crate) struct CmTotals {
    /// Frames the generators offered while their VOQ was full or quenched.
    pub quenched_frames: u64,
    pub quenched_bytes: u64,
    pub feedback_received: u64,
    pub probes_sent: u64,
    pub echoes_received: u64,
    /// Frames lost because a receive buffer overflowed (PAUSE came too late).
    pub rx_overflow_frames: u64,
}

impl CmTotals {
    /// Adds another partition's counts.
    fn add(&mut self, other: &CmTotals) {
        self.quenched_frames += other.quenched_frames;
        self.quenched_bytes += other.quenched_bytes;
        self.feedback_received += other.feedback_received;
        self.probes_sent += other.probes_sent;
        self.echoes_received += other.echoes_received;
        self.rx_overflow_frames += other.rx_overflow_frames;
    }
}

/// The adapter's state: every NIC's VOQs, every flow's reaction point, the
/// hotspots' receive buffers.
pub(crate) struct CmState {
    pub cm: CmConfig,
    /// The class of the raw frames (what PAUSE stops).
    pub data_class: u8,
    /// The class E2CM's probes travel on (`probe_class`: the data class in
    /// band, or [`CM_CLASS`]).
    probe_class: u8,
    pub voqs: Vec<VoqAdapter<QueuedFrame>>,
    pub rps: Vec<Rp>,
    /// Each reaction point's limiter rate (b/s), NaN while it has none, by
    /// slot. Kept by [`sync`] for the sampler, which reads these 8 B per
    /// flow in order every sample instead of each reaction point (two
    /// lines at random per flow, and E2CM-CP has N² flows).
    limits: Vec<f64>,
    /// What the reaction points share, per line rate (one entry per rate).
    rp_shared: Vec<(f64, RpShared)>,
    /// Every flow has a reaction point from its first frame (E2CM-CP probes
    /// unlimited flows too); otherwise one is made by the first feedback.
    eager_rps: bool,
    /// A frame sent concerns its flow's reaction point (E2CM probes, QCN's
    /// byte counter); an ECM one needs only its tag, kept with the VOQ.
    sending_reaches_rps: bool,
    pub rx: Vec<Option<Box<RxNic>>>,
    pub hotspots: Vec<Hotspot>,
    pub msgs: Msgs,
    pub totals: CmTotals,
    /// Feedback frames the congestion points sent.
    pub feedback_sent: u64,
    /// The `cm` table's points, one per sampler tick.
    pub series: Series,
}

impl CmState {
    /// The adapter of every NIC (`nics` ports' rates), for `hosts` hosts.
    pub fn new(
        cm: &CmConfig,
        params: &AdapterParams,
        nic_rates: &[Rate],
        hosts: u32,
        data_class: u8,
    ) -> CmState {
        let voqs = (hosts.max(2) - 1) as usize;
        let probe_class = match cm {
            CmConfig::E2cm(p) | CmConfig::E2cmCp(p) if p.probe_class == ProbeClass::Data => {
                data_class
            }
            _ => CM_CLASS,
        };
        CmState {
            cm: cm.clone(),
            data_class,
            probe_class,
            voqs: nic_rates
                .iter()
                .map(|_| VoqAdapter::from_params(voqs, params))
                .collect(),
            rps: vec![],
            limits: vec![],
            rp_shared: vec![],
            eager_rps: matches!(cm, CmConfig::E2cmCp(_)),
            sending_reaches_rps: !matches!(cm, CmConfig::Ecm(_) | CmConfig::None(_)),
            rx: nic_rates.iter().map(|_| None).collect(),
            hotspots: vec![],
            msgs: Msgs::default(),
            totals: CmTotals::default(),
            feedback_sent: 0,
            series: Default::default(),
        }
    }

    /// Gives NIC `nic` (link `link`) a receive buffer: `params`' size and
    /// gap, PAUSE headroom as given or `headroom`.
    pub fn add_rx(&mut self, nic: u32, link: Rate, params: &AdapterParams, headroom: u64) {
        if self.rx[nic as usize].is_some() {
            return;
        }
        let headroom = params.pause_headroom.map_or(headroom, |h| h.bytes());
        let (high, low) =
            rx_watermarks(params.receive_buffer, headroom, params.pause_gap).expect("validated");
        self.rx[nic as usize] = Some(Box::new(RxNic {
            buf: RxBuffer::new(params.receive_buffer.bytes(), high, low, link),
            pkts: VecDeque::new(),
            link,
            pauses: 0,
        }));
    }

    /// The rates (b/s) of the limited reaction points, in slot order.
    pub fn limited_rates(&self) -> impl Iterator<Item = f64> + '_ {
        debug_assert!(self.limits_follow_rps(), "a limiter changed without `sync`");
        self.limits.iter().copied().filter(|r| !r.is_nan())
    }

    /// Whether [`CmState::limits`] says what each reaction point says.
    fn limits_follow_rps(&self) -> bool {
        self.rps.len() == self.limits.len()
            && self
                .rps
                .iter()
                .zip(&self.limits)
                .all(|(r, &l)| match r.rp.is_limited() {
                    true => l == r.rp.rate(),
                    false => l.is_nan(),
                })
    }

    /// Bytes in the hotspots' receive buffers.
    pub fn rx_occupancy(&self) -> u64 {
        self.rx.iter().flatten().map(|r| r.buf.occupancy()).sum()
    }

    /// Bytes held in VOQs and receive buffers (for conservation).
    pub fn held_bytes(&self, packet_size: impl Fn(PktId) -> u64) -> u64 {
        let voqs: u64 = self.voqs.iter().map(|a| a.total_bytes()).sum();
        let rx: u64 = self
            .rx
            .iter()
            .flatten()
            .flat_map(|r| r.pkts.iter())
            .map(|&id| packet_size(id))
            .sum();
        voqs + rx
    }
}

/// A frame waiting in a VOQ, in compact form: its source, destination and
/// size are its VOQ's and its slot's, so only what tells it apart is kept.
/// It becomes a [`Packet`] in the arena when it is sent: a frame that waits
/// long in a VOQ (1,000 per adapter when the ingress buffer is full) would
/// otherwise be a cold packet line to read back, and the packet written at
/// send time reuses a warm slot of the arena.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QueuedFrame {
    /// When the source generated it.
    pub at: Ps,
    /// Its burst's number at the source (the ECMP flow).
    pub burst: u64,
}

/// The VOQ of destination `dst` at source `src` (one per other host).
#[inline]
fn voq_of(src: u32, dst: u32) -> usize {
    (if dst > src { dst - 1 } else { dst }) as usize
}

/// The destination of VOQ `voq` at source `src` ([`voq_of`]'s inverse).
#[inline]
fn dst_of(src: u32, voq: usize) -> u32 {
    let voq = voq as u32;
    if voq >= src {
        voq + 1
    } else {
        voq
    }
}

/// Flow (`src`, `dst`)'s reaction point; `create`: made now if it has none
/// (`None` without congestion management). A reaction point that has had no
/// feedback is unlimited and sends untagged, exactly as no reaction point:
/// only E2CM-CP, whose unlimited flows probe, needs one for every flow.
fn rp_slot(w: &mut World, src: u32, dst: u32, create: bool) -> Option<u32> {
    let st = w.nic_state.adapter.as_deref_mut()?;
    let nic = w.host_nic[src as usize];
    let voq = voq_of(src, dst);
    // The flow's reaction point is kept with its VOQ (`u32::MAX`: none yet,
    // its frames go at line rate untagged).
    match st.voqs[nic as usize].tag(voq) {
        u32::MAX if !create => return None,
        u32::MAX => {}
        slot => return Some(slot),
    }
    let key = (src as u64) << 32 | dst as u64;
    let line = w.ports[w.nics[nic as usize].port as usize]
        .rate
        .bits_per_sec() as f64;
    // Every flow of a line rate shares its gains and setup: made once.
    let shared = match st.rp_shared.iter().position(|(l, _)| *l == line) {
        Some(i) => i,
        None => {
            st.rp_shared.push((line, st.cm.rp_shared(line)));
            st.rp_shared.len() - 1
        }
    };
    let rp = st
        .cm
        .build_rp_sharing(&st.rp_shared[shared].1, line, w.seed, key)?;
    let slot = st.rps.len() as u32;
    st.rps.push(Rp {
        rp,
        nic,
        voq: voq_of(src, dst) as u32,
        timer: LazyTimer::default(),
    });
    st.limits.push(f64::NAN);
    st.voqs[nic as usize].set_tag(voq, slot);
    Some(slot)
}

/// The limiter of `slot` changed: its VOQ's rate and hold, its timer.
fn sync(w: &mut World, now: Ps, slot: u32) {
    let st = w.nic_state.adapter.as_deref_mut().expect("cm");
    let r = &mut st.rps[slot as usize];
    let limited = r.rp.is_limited();
    st.limits[slot as usize] = if limited { r.rp.rate() } else { f64::NAN };
    let ad = &mut st.voqs[r.nic as usize];
    // A tagged flow is limited: the tag lives with the VOQ's limiter.
    ad.set_limit(r.voq as usize, limited.then(|| r.rp.rate()), r.rp.tag());
    let next = r.rp.next_timer();
    if !r.rp.may_send(now) {
        if let Some(t) = next {
            ad.hold_until(r.voq as usize, t);
        }
    }
    match next {
        Some(t) => {
            w.q.arm(&mut r.timer, t.max(now), Ev::NicTimer(RP_TIMER, slot))
        }
        None => r.timer.disarm(),
    }
}

/// Whether the NICs are the IBM talk's adapter (`[nic] model = "adapter"`),
/// whose state the run then holds.
pub(crate) fn active(w: &World) -> bool {
    w.nic_state.adapter.is_some()
}

/// A raw frame of burst `burst`, `bytes` long, from `src` to `dst`, is
/// offered to `src`'s adapter (step 1 of the module docs): queued in its VOQ,
/// or refused (quenched).
#[inline(never)]
pub(crate) fn offer(w: &mut World, now: Ps, src: u32, dst: u32, bytes: u32, burst: u64) {
    let nic = w.host_nic[src as usize];
    let size = bytes as u64;
    // A queued frame is a packet alive, as a refused one was for an instant
    // (the arena's peak counts both, as when every frame was allocated).
    w.arena.hold();
    let st = w
        .nic_state
        .adapter
        .as_deref_mut()
        .expect("the adapter model");
    let frame = QueuedFrame { at: now, burst };
    match st.voqs[nic as usize].offer(voq_of(src, dst), frame, size) {
        Ok(()) => {
            w.counters.cons.sent_bytes += size;
            super::kick(w, now, nic);
        }
        Err(_) => {
            st.totals.quenched_frames += 1;
            st.totals.quenched_bytes += size;
            w.arena.unhold();
        }
    }
}

/// The next raw frame of NIC `nic` (step 2), with its limiter's bookkeeping
/// (step 3). Arms the NIC's wake-up when only limited VOQs have frames.
fn next_frame(w: &mut World, now: Ps, nic: u32) -> Option<PktId> {
    let st = w.nic_state.adapter.as_deref_mut()?;
    let port = &w.ports[w.nics[nic as usize].port as usize];
    if port.paused & (1 << st.data_class) != 0 {
        return None; // the resume kicks the NIC
    }
    let link = port.rate;
    let ad = &mut st.voqs[nic as usize];
    let Some(sent) = ad.next_send(now) else {
        if let Some(t) = ad.next_eligible(now) {
            let wake = &mut w.nics[nic as usize].wake;
            let t = wake.deadline().map_or(t, |d| d.min(t));
            w.q.arm(wake, t, Ev::NicWake(nic));
        }
        return None;
    };
    // The adapter model has one host per NIC: its first host.
    let src = w.nics[nic as usize].node;
    let dst = dst_of(src, sent.voq);
    let frame = sent.item;
    let mut pkt = Packet::raw_frame(
        src,
        dst,
        sent.bytes as u32,
        frame.burst,
        frame.at,
        st.data_class,
    );
    // The tag of the congestion point limiting the flow (ECM), which the
    // VOQ's limiter keeps ([`sync`]).
    pkt.flow_uid = sent.cp.map_or(0, |cp| cp + 1);
    let hash = pkt.hash;
    let id = w.arena.alloc_held(pkt);
    // An ECM frame needs nothing of its reaction point, and an E2CM-CP
    // frame nothing while it passes by (its probe draw was made ahead).
    if !st.sending_reaches_rps || st.voqs[nic as usize].pass_by(sent.voq) {
        return Some(id);
    }
    let eager = st.eager_rps;
    let Some(slot) = rp_slot(w, src, dst, eager) else {
        return Some(id);
    };
    let st = w.nic_state.adapter.as_deref_mut().expect("cm");
    let r = &mut st.rps[slot as usize];
    let (probe, passing) = r.rp.on_sent(now, sent.bytes);
    let moved = r.rp.sending_moves_limiter();
    if passing > 0 {
        st.voqs[nic as usize].set_passing(sent.voq, passing);
    }
    if let Some(req) = probe {
        st.totals.probes_sent += 1;
        let msg = st.msgs.put(Msg::Probe {
            src,
            dst,
            hash,
            wire_at: now + link.tx_time(sent.bytes),
            req,
        });
        let mut probe = notify(now, dst, hash, msg);
        // In band (`probe_class = "data"`), or on the feedback class.
        (probe.class, probe.prio) = (st.probe_class, st.probe_class);
        w.counters.cons.sent_bytes += probe.size as u64;
        let pid = w.arena.alloc(probe);
        w.nics[nic as usize].ctrl.push_back(pid);
    }
    if moved {
        sync(w, now, slot);
    }
    Some(id)
}

/// A [`PacketKind::Notify`] frame to host `dst` carrying message `msg`.
pub(crate) fn notify(now: Ps, dst: u32, hash: u64, msg: u64) -> Packet {
    let mut p = Packet::link_frame(PacketKind::Notify, now, CM_CLASS, msg, 0);
    p.dst = dst;
    p.hash = hash;
    p.size = FEEDBACK_FRAME_BYTES as u32;
    p.in_port = switch::NO_INGRESS;
    p
}

/// A notification reached NIC `nic` (step 4): feedback to a reaction point,
/// a probe answered with an echo, an echo to its reaction point. Frees it.
#[inline(never)]
pub(crate) fn on_notify(w: &mut World, now: Ps, nic: u32, id: PktId) {
    let pkt = *w.arena.get(id);
    w.arena.free(id);
    let Some(st) = w.nic_state.adapter.as_deref_mut() else {
        return;
    };
    match st.msgs.take(pkt.seq) {
        Msg::Feedback(fb) => {
            st.totals.feedback_received += 1;
            if let Some(slot) = rp_slot(w, fb.to(), fb.flow_dst(), true) {
                let st = w.nic_state.adapter.as_deref_mut().expect("cm");
                st.rps[slot as usize].rp.on_feedback(now, &fb);
                sync(w, now, slot);
                super::kick(w, now, nic);
            }
        }
        Msg::Probe {
            src,
            dst,
            hash,
            wire_at,
            req,
        } => {
            let idle = paths::idle_owd(w, src, dst, hash, FEEDBACK_FRAME_BYTES);
            let echo = ProbeEcho {
                seq: req.seq,
                sent_at: req.sent_at,
                rate: req.rate,
                queueing_delay: now.saturating_sub(wire_at).saturating_sub(idle),
            };
            let st = w.nic_state.adapter.as_deref_mut().expect("cm");
            let msg = st.msgs.put(Msg::Echo { src, dst, echo });
            let back = notify(now, src, crate::rng::mix64(hash), msg);
            w.counters.cons.sent_bytes += back.size as u64;
            let eid = w.arena.alloc(back);
            w.nics[nic as usize].ctrl.push_back(eid);
            super::kick(w, now, nic);
        }
        Msg::Echo { src, dst, echo } => {
            st.totals.echoes_received += 1;
            if let Some(slot) = rp_slot(w, src, dst, false) {
                let st = w.nic_state.adapter.as_deref_mut().expect("cm");
                st.rps[slot as usize].rp.on_probe_echo(now, &echo);
                sync(w, now, slot);
                super::kick(w, now, nic);
            }
        }
    }
}

/// Reaction point `slot`'s timer.
#[inline(never)]
fn on_rp_timer(w: &mut World, now: Ps, slot: u32) {
    let Some(st) = w.nic_state.adapter.as_deref_mut() else {
        return;
    };
    let r = &mut st.rps[slot as usize];
    if !w.q.fire(&mut r.timer, now, Ev::NicTimer(RP_TIMER, slot)) {
        return;
    }
    r.rp.on_timer(now);
    let nic = r.nic;
    sync(w, now, slot);
    super::kick(w, now, nic);
}

/// Whether NIC `nic` holds arriving frames in a receive buffer (a hotspot host).
#[inline]
pub(crate) fn buffers_rx(w: &World, nic: u32) -> bool {
    w.nic_state
        .adapter
        .as_ref()
        .is_some_and(|st| st.rx[nic as usize].is_some())
}

/// A frame reached hotspot NIC `nic`: into its receive buffer (or lost if
/// the buffer overflows), PAUSE by the watermarks.
#[inline(never)]
pub(crate) fn rx_arrive(w: &mut World, now: Ps, nic: u32, id: PktId) {
    let size = w.arena.get(id).size as u64;
    let st = w.nic_state.adapter.as_deref_mut().expect("cm");
    let rx = st.rx[nic as usize].as_deref_mut().expect("rx buffer");
    let out = rx.buf.arrive(now, size);
    if !out.accepted {
        st.totals.rx_overflow_frames += 1;
        w.counters.cons.dropped_bytes += size;
        w.arena.free(id);
        return;
    }
    rx.pkts.push_back(id);
    rx_outcome(w, now, nic, out.pause, out.service_done_at);
}

/// Hotspot NIC `nic`'s frame in service is consumed: to the host.
#[inline(never)]
pub(crate) fn on_rx_done(w: &mut World, now: Ps, nic: u32) {
    let st = w.nic_state.adapter.as_deref_mut().expect("cm");
    let rx = st.rx[nic as usize].as_deref_mut().expect("rx buffer");
    let out = rx.buf.service_done(now);
    let id = rx.pkts.pop_front().expect("a frame in service");
    rx_outcome(w, now, nic, out.pause, out.service_done_at);
    super::deliver(w, now, nic, id);
}

fn rx_outcome(w: &mut World, now: Ps, nic: u32, pause: Option<PauseChange>, done: Option<Ps>) {
    if let Some(t) = done {
        w.q.push(t, Ev::RxDone(nic));
    }
    let Some(change) = pause else {
        return;
    };
    let st = w.nic_state.adapter.as_deref_mut().expect("cm");
    let class = st.data_class;
    let rx = st.rx[nic as usize].as_deref_mut().expect("rx buffer");
    let quanta = if change == PauseChange::Pause {
        rx.pauses += 1;
        0xFFFF
    } else {
        0
    };
    let gp = w.nics[nic as usize].port;
    switch::queue_pause(w, now, gp, class, quanta > 0, quanta);
    super::kick(w, now, nic);
}

/// Hotspot `i` starts (`on`) or ends: its host's service rate.
#[inline(never)]
fn on_hotspot(w: &mut World, _now: Ps, i: u32, on: bool) {
    let st = w.nic_state.adapter.as_deref_mut().expect("cm");
    let h = &st.hotspots[i as usize];
    let rx = st.rx[h.nic as usize].as_deref_mut().expect("rx buffer");
    rx.buf.set_service_rate(if on { h.rate } else { rx.link });
}

#[cfg(test)]
mod tests {
    use crate::scenario::Scenario;
    use crate::sim::Simulation;
    use crate::units::US;
    use std::path::Path;

    /// A 16-host hotspot under `cm`: 85 % Bernoulli load, host 0 served at
    /// 10 % from 1 ms to 6 ms.
    fn hotspot(cm: &str) -> Simulation {
        let text = format!(
            r#"
name = "limits"
duration = "10ms"
stop = "10ms"
cm = "{cm}"
[topology]
kind = "single_switch"
hosts = 16
link_rate = "10Gbps"
link_delay = "500ns"
[switch.input_buffer]
memory_per_port = "300KB"
pause = true
pause_high = "260KB"
pause_low = "230KB"
[nic]
model = "adapter"
[[workload.onoff]]
load = 0.85
frame = 1500
[[workload.hotspot]]
host = 0
service_rate = 0.1
start = "1ms"
duration = "5ms"
"#
        );
        let sc = Scenario::from_toml_str(&text, Path::new(".")).unwrap_or_else(|e| panic!("{e}"));
        Simulation::new(&sc).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The limiter rates the sampler reads (kept by `sync`) are each
    /// reaction point's own, every 100 us, under every scheme, with flows
    /// limited and released along the way.
    #[test]
    fn sampled_limits_follow_every_reaction_point() {
        for cm in ["ecm", "e2cm", "e2cm_cp", "qcn"] {
            let mut sim = hotspot(cm);
            let mut most_limited = 0;
            for step in 1..=100 {
                sim.run_until(step * 100 * US);
                let st = sim.w.nic_state.adapter.as_deref().expect("cm");
                assert!(st.limits_follow_rps(), "{cm} at {step} x 100 us");
                most_limited = most_limited.max(st.limited_rates().count());
            }
            let st = sim.w.nic_state.adapter.as_deref().expect("cm");
            assert!(most_limited > 0, "{cm}: no flow was ever limited");
            assert!(st.rps.len() > most_limited || cm != "e2cm_cp", "{cm}");
        }
    }
}
