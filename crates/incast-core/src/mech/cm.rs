//! Congestion management in the switches (`[cm]`, `[switch.input_buffer]`):
//! the congestion points of ECM, E2CM and QCN at every output queue, and the
//! IBM talk's input-partitioned memory with PAUSE per input.
//!
//! At the *ingress* hook, in this order:
//!
//! 1. **Input partition** (`[switch.input_buffer]`): the frame is charged to
//!    the partition of the port it arrived on ([`InputBuffers::admit`]); a
//!    full partition drops it; crossing `pause_high` PAUSEs the upstream
//!    sender (802.3x, on the frames' class), falling to `pause_low` resumes
//!    it. The charge is released when the frame leaves (the *depart* hook)
//!    or is refused. There is no per-output limit: the shared buffer's
//!    admission is switched off (the partitions bound the memory).
//! 2. **Congestion point** (`[cm]`): each raw data frame of the frames'
//!    class is shown to its output queue's congestion point with the queue
//!    it makes, itself included ([`AnyCp::on_enqueue`]); a feedback the
//!    point returns becomes a 64-byte [`PacketKind::Notify`] frame, routed
//!    from this switch to the sampled frame's source
//!    ([`switch::send_routed`]), where the NIC's reaction point acts on it
//!    ([`crate::nic::adapter`]).
//!
//! The talk's CP "samples arriving frames": it runs at arrival, before the
//! output queue admits the frame. With the input partitions the output
//! queue has no limit of its own, so every frame shown is then queued.
//!
//! A congestion point is numbered `switch << 16 | local port` (the ECM tag
//! and QCN's CPID carry it).

use super::{DropCause, Hop, SwitchMechanism, Verdict};
use crate::cm::input_buffer::{Admission, InputBufferParams, InputBuffers};
use crate::cm::report::RateSum;
use crate::cm::scheme::{AnyCp, CpFrame};
use crate::cm::CmConfig;
use crate::cm::PauseChange;
use crate::metrics_table::Table;
use crate::net::switch::{self, Switch, NO_INGRESS};
use crate::net::{link, PacketKind, PktId};
use crate::nic::adapter::{self, Msg};
use crate::sim::world::World;
use crate::units::Ps;
use serde_json::{json, Value};

/// The switches' side of congestion management.
#[derive(Default)]
pub(crate) struct CmSwitch {
    /// Bit c set: frames arriving on priority c meet the ingress hook.
    pub ingress_mask: u8,
    /// The class of the raw data frames (congestion points sample it,
    /// PAUSE stops it).
    pub data_class: u8,
    /// One congestion point per switch port (global id - `first_port`);
    /// empty without `[cm]`.
    pub cps: Vec<AnyCp>,
    pub first_port: u32,
    /// One per switch, with the input partitions; empty with the shared buffer.
    pub inputs: Vec<InputBuffers>,
    /// `!inputs.is_empty()`: the depart hook's one test.
    pub partitioned: bool,
}

/// `[switch.input_buffer]`.
pub type Config = InputBufferParams;

/// No checks of its own here: `[switch.input_buffer]`'s are `cm/scenario.rs`'s.
impl crate::scenario::SwitchSection for InputBufferParams {}

/// The mechanism.
pub(crate) struct Cm;

impl SwitchMechanism for Cm {
    const ID: u8 = 4;
    type Config = InputBufferParams;
    type State = CmSwitch;
    type PerSwitch = ();

    /// The switches' congestion points (`[cm]`) and input partitions
    /// (`[switch.input_buffer]`).
    fn build(cfg: Option<&InputBufferParams>, net: &mut super::Network) -> CmSwitch {
        let sc = net.sc;
        let c = &sc.config;
        let mut cm = CmSwitch {
            data_class: sc.data_class(),
            first_port: net.switches.first().map_or(0, |s| s.ports.start),
            ..Default::default()
        };
        if !matches!(c.cm, CmConfig::None(_)) {
            for sw in net.switches.iter() {
                for gp in sw.ports.clone() {
                    let id = sw.id << 16 | (gp - sw.ports.start);
                    cm.cps.push(c.cm.build_cp(id, c.seed).expect("a scheme"));
                }
            }
            cm.ingress_mask |= 1 << cm.data_class;
        }
        if let Some(ib) = cfg {
            let mut largest = 0;
            for sw in net.switches.iter() {
                cm.inputs.push(InputBuffers::new(sw.ports.len(), ib));
                largest = largest.max(sw.ports.len() as u64);
            }
            cm.ingress_mask = 0xFF;
            cm.partitioned = true;
            // No per-output limit: the partitions bound the memory.
            net.params.buffer = ib.memory_per_port.bytes() * largest;
            net.params.admission = [crate::net::switch::Admission::Static {
                limit: net.params.buffer,
            }; crate::net::NUM_CLASSES];
        }
        cm
    }

    #[inline(always)]
    fn wants_ingress(w: &World, prio: u8) -> bool {
        w.mechs.cm.ingress_mask & (1 << prio) != 0
    }

    /// Inlined, with the work out of line on scalars, so that the hop
    /// stays in registers in the switch's path (`mech` module docs).
    #[inline(always)]
    fn on_ingress(w: &mut World, now: Ps, hop: &mut Hop) -> Verdict {
        let out = ingress(w, now, *hop);
        if out == DROPPED {
            return Verdict::Dropped;
        }
        hop.charged |= out & CHARGED != 0;
        hop.at_once &= out & NOT_AT_ONCE == 0;
        Verdict::Pass
    }

    #[inline(always)]
    fn on_drop(w: &mut World, now: Ps, hop: Hop, _cause: DropCause) {
        if w.mechs.cm.partitioned && hop.charged && hop.in_local != NO_INGRESS {
            release(w, now, hop.switch, hop.in_local, hop.size);
        }
    }

    #[inline(always)]
    fn wants_depart(w: &World, _hop: &Hop, _kind: PacketKind) -> bool {
        w.mechs.cm.partitioned
    }

    fn departs(w: &World) -> bool {
        w.mechs.cm.partitioned
    }

    #[inline(always)]
    fn on_depart(w: &mut World, now: Ps, hop: &Hop) {
        // Frames the switch originated were charged to no input.
        if hop.in_local != NO_INGRESS {
            release(w, now, hop.switch, hop.in_local, hop.size);
        }
    }

    fn owns_frame(kind: PacketKind) -> bool {
        kind == PacketKind::Notify
    }

    fn on_notify(w: &mut World, now: Ps, nic: u32, pkt: PktId) {
        adapter::on_notify(w, now, nic, pkt);
    }

    /// Congestion points are per output port, input partitions per switch:
    /// each from the partition that owns it.
    const THREADS: bool = true;

    fn merge(into: &mut CmSwitch, from: &mut CmSwitch, owned: &dyn Fn(u32) -> bool) {
        let first = into.first_port;
        for (k, (mine, theirs)) in into.cps.iter_mut().zip(&mut from.cps).enumerate() {
            if owned(first + k as u32) {
                std::mem::swap(mine, theirs);
            }
        }
        // A switch's ports follow the previous switch's.
        let mut port = first;
        for (mine, theirs) in into.inputs.iter_mut().zip(&mut from.inputs) {
            if owned(port) {
                std::mem::swap(mine, theirs);
            }
            port += mine.all_stats().count() as u32;
        }
    }

    fn report(w: &World, _flows: &Table, summary: &mut serde_json::Value) {
        if let Some(v) = section(w) {
            summary["cm"] = v;
        }
    }
}

/// What [`ingress`] did to the hop: it dropped the packet, or these bits.
const DROPPED: u8 = 0xFF;
/// The input partition holds the packet: release it when it leaves.
const CHARGED: u8 = 1;
/// A feedback frame took the egress: the packet no longer passes straight through.
const NOT_AT_ONCE: u8 = 2;

/// The ingress hook (module docs, steps 1 and 2), out of line: a run
/// without congestion management only pays the hook's mask test.
#[inline(never)]
fn ingress(w: &mut World, now: Ps, hop: Hop) -> u8 {
    let (s, size) = (hop.switch, hop.size);
    let mut out = 0;
    let cm = &mut w.mechs.cm;
    if cm.partitioned && hop.in_local != NO_INGRESS {
        match cm.inputs[s as usize].admit(hop.in_local as usize, size) {
            Admission::Dropped => {
                w.counters.cons.dropped_bytes += size;
                w.arena.free(hop.pkt);
                return DROPPED;
            }
            Admission::Admitted(change) => {
                out |= CHARGED;
                if let Some(change) = change {
                    send_pause(w, now, s, hop.in_local, change);
                }
            }
        }
    }
    let cm = &mut w.mechs.cm;
    if cm.cps.is_empty() || hop.class != cm.data_class {
        return out;
    }
    let pkt = w.arena.get(hop.pkt);
    if pkt.kind != PacketKind::Raw {
        return out;
    }
    let frame = CpFrame {
        src: pkt.flow,
        dst: pkt.dst,
        bytes: size,
        tag: pkt.flow_uid.checked_sub(1),
    };
    let queue = w.ports[hop.out as usize].queues[hop.queue as usize].bytes + size;
    let cp = &mut cm.cps[(hop.out - cm.first_port) as usize];
    let Some(fb) = cp.on_enqueue(queue, frame) else {
        return out;
    };
    let st = w
        .nic_state
        .adapter
        .as_deref_mut()
        .expect("[cm] needs the adapter model");
    st.feedback_sent += 1;
    let msg = st.msgs.put(Msg::Feedback(fb));
    let hash = crate::rng::mix64((s as u64) << 32 ^ fb.to() as u64);
    let frame = adapter::notify(now, fb.to(), hash, msg);
    let id = w.arena.alloc(frame);
    switch::send_routed(w, now, s, id);
    // The feedback may have taken the frame's egress.
    if !Switch::leaves_at_once(&w.sw, &w.ports[hop.out as usize], hop.class as usize, now) {
        out |= NOT_AT_ONCE;
    }
    out
}

/// A frame charged to input `local` of switch `switch` left it (or was refused).
#[inline(never)]
fn release(w: &mut World, now: Ps, switch: u32, local: u16, size: u64) {
    if let Some(change) = w.mechs.cm.inputs[switch as usize].release(local as usize, size) {
        send_pause(w, now, switch, local, change);
    }
}

/// PAUSE (or resume) the sender upstream of input `local` of switch `switch`.
#[inline(never)]
fn send_pause(w: &mut World, now: Ps, switch: u32, local: u16, change: PauseChange) {
    let class = w.mechs.cm.data_class;
    let port = w.switches[switch as usize].port(local);
    let quanta = match change {
        PauseChange::Pause => 0xFFFF,
        PauseChange::Resume => 0,
    };
    switch::queue_pause(w, now, port, class, quanta > 0, quanta);
    link::kick(w, now, port);
}

/// The summary's `cm` section: congestion management (`[cm]`), the adapter
/// NIC model and the input-partitioned switch memory (issue 19's counters:
/// feedback frames sent and received, probes, quenches, the limiters' rates
/// at the end, receive-buffer and input-partition PAUSEs).
/// `None` when the run has neither the adapter model nor input partitions.
fn section(w: &World) -> Option<Value> {
    let inputs = &w.mechs.cm.inputs;
    if w.nic_state.adapter.is_none() && inputs.is_empty() {
        return None;
    }
    let mut out = json!({});
    if let Some(st) = w.nic_state.adapter.as_deref() {
        let t = &st.totals;
        // Summed exactly: a threaded run's reaction points are in another
        // order ([`RateSum`]).
        let mut sum = RateSum::default();
        let limited: Vec<f64> = st
            .limited_rates()
            .inspect(|&r| sum.add(r))
            .map(|r| r / 1e9)
            .collect();
        let mean = (!limited.is_empty()).then(|| sum.mean_gbps(limited.len() as u32));
        let rx: Vec<Value> = st
            .hotspots
            .iter()
            .map(|h| {
                let rx = st.rx[h.nic as usize].as_deref().expect("rx buffer");
                let s = rx.stats();
                json!({
                    "host": w.nics[h.nic as usize].node,
                    "service_gbps": h.rate.bits_per_sec() as f64 / 1e9,
                    "start_us": crate::units::ps_to_us(h.start),
                    "end_us": h.end.map(crate::units::ps_to_us),
                    "pauses": s.pauses,
                    "peak_bytes": s.peak,
                    "overflow_frames": s.overflow_frames,
                    "consumed_bytes": s.bytes_consumed,
                })
            })
            .collect();
        let largest_cut = st
            .rps
            .iter()
            .filter_map(|r| match &r.rp {
                crate::cm::scheme::AnyRp::Qcn(q) => Some(q.stats.largest_cut),
                _ => None,
            })
            .reduce(f64::max);
        out = json!({
            "scheme": st.cm.name(),
            "largest_cut": largest_cut,
            "feedback_sent": st.feedback_sent,
            "feedback_received": t.feedback_received,
            "probes_sent": t.probes_sent,
            "echoes_received": t.echoes_received,
            "quenched_frames": t.quenched_frames,
            "quenched_bytes": t.quenched_bytes,
            "reaction_points": st.rps.len(),
            "limited_at_end": limited.len(),
            "limited_rate_gbps": {
                "mean": mean,
                "min": limited.iter().copied().reduce(f64::min),
                "max": limited.iter().copied().reduce(f64::max),
            },
            "receive_buffers": rx,
            "receive_overflow_frames": t.rx_overflow_frames,
        });
    }
    if !inputs.is_empty() {
        let stats = inputs.iter().flat_map(|i| i.all_stats());
        let (mut drops, mut dropped_bytes, mut pauses, mut peak) = (0u64, 0u64, 0u64, 0u64);
        for s in stats {
            drops += s.dropped_frames;
            dropped_bytes += s.dropped_bytes;
            pauses += s.pauses;
            peak = peak.max(s.peak);
        }
        out["input_buffers"] = json!({
            "dropped_frames": drops,
            "dropped_bytes": dropped_bytes,
            "pauses": pauses,
            "peak_bytes": peak,
        });
    }
    Some(out)
}
