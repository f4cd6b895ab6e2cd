//! PFC (IEEE 802.1Qbb) as a switch mechanism: ingress accounting of
//! lossless classes, PAUSE/XON frames, pause expiry and refresh, and the
//! PFC watchdog.
//!
//! The accounting itself (reserve, shared pool, dynamic or static XOFF
//! threshold, headroom) is in [`accounting`]; this file is where it meets
//! the switch and the links:
//!
//! * **ingress** ([`Pfc::on_ingress`]): a packet of a lossless priority is
//!   charged to the (port, priority) it arrived on; crossing XOFF (or
//!   landing in headroom) sends a PAUSE out of that port; a packet that
//!   finds headroom (or the whole buffer) full is dropped and counted as a
//!   lossless violation;
//! * **depart** ([`Pfc::on_depart`]): its bytes are released, and XON goes
//!   upstream when the ingress falls below its resume threshold;
//! * **frames** ([`Pfc::on_frame`]): a PAUSE stops the receiving port's
//!   class (the scheduler skips it: [`crate::net::Port::paused`]) until XON
//!   or, in quanta mode, its expiry; the pausing switch refreshes it at
//!   half-time;
//! * **timers**: expiry, refresh, and the watchdog, which reports pauses
//!   that last too long and, in drop mode, flushes the queue and ignores
//!   PAUSE for the class until it has been quiet for `restore`.

pub mod accounting;

pub use accounting::*;

use super::{DropCause, Hop, SwitchMechanism, TimerKind, Verdict};
use crate::metrics_table::Table;
use crate::net::port::{Owner, Port};
use crate::net::switch::{self, Switch, NO_INGRESS};
use crate::net::{link, PacketKind, PktId, NUM_CLASSES};
use crate::scenario::{check_class, Scenario, ScenarioError, SwitchSection};
use crate::sim::ev::Ev;
use crate::sim::world::World;
use crate::units::{ps_to_us, Bytes, Ps, Rate};

/// `[switch.pfc]`.
pub type Config = PfcConfig;

/// `event` of a PFC log row: the class was paused.
pub const PFC_PAUSED: u8 = 1;
/// `event` of a PFC log row: the class resumed.
pub const PFC_RESUMED: u8 = 0;
/// `event` of a PFC log row: the watchdog tripped on a pause.
pub const PFC_WATCHDOG_TRIP: u8 = 2;
/// `event` of a PFC log row: the dropping watchdog re-enabled PFC.
pub const PFC_WATCHDOG_RESTORE: u8 = 3;

const EXPIRY: TimerKind = 0;
const REFRESH: TimerKind = 1;
const WATCHDOG: TimerKind = 2;

/// Columns of the PFC event log: time, node, local port, class, event.
pub type PfcLog = (Vec<u64>, Vec<u32>, Vec<u32>, Vec<u8>, Vec<u8>);

/// PFC's run-wide state.
#[derive(Default)]
pub(crate) struct Pfc {
    /// `[switch.pfc]` (the default when PFC is off: then never read).
    pub cfg: PfcConfig,
    /// PFC events at the ports that obey them.
    pub log: PfcLog,
    /// Packets of a lossless class dropped (headroom overflow or full buffer).
    pub lossless_drops: u64,
    /// Every port's PFC state and counters, by global port id (NICs' too:
    /// they obey PAUSE), the hot bits aside ([`Port::paused`], [`Port::discarding`]).
    pub ports: Vec<PortPfc>,
}

/// PFC state and counters of one port.
#[derive(Debug, Default)]
pub(crate) struct PortPfc {
    /// When each paused class resumes by itself (quanta mode; `Ps::MAX`: only on XON).
    pub pause_until: [Ps; NUM_CLASSES],
    pub paused_since: [Ps; NUM_CLASSES],
    /// Pending expiry-timer entry of this port.
    pub expiry: crate::engine::LazyTimer,
    /// Pending refresh-timer entry (XOFFs this port sent that must be renewed).
    pub refresh: crate::engine::LazyTimer,
    /// PAUSE frames with non-zero quanta sent / received, per class.
    pub xoff_tx: [u64; NUM_CLASSES],
    pub xon_tx: [u64; NUM_CLASSES],
    pub xoff_rx: [u64; NUM_CLASSES],
    pub xon_rx: [u64; NUM_CLASSES],
    /// Total time each class was paused.
    pub paused_time: [Ps; NUM_CLASSES],
    /// Longest single pause per class.
    pub longest_pause: [Ps; NUM_CLASSES],
    /// Pauses that exceeded the watchdog limit.
    pub watchdog_trips: u64,
    /// Pending watchdog-timer entry of this port.
    pub watchdog: crate::engine::LazyTimer,
    /// Classes whose current pause has already tripped the watchdog.
    pub tripped: u8,
    /// Last PAUSE received per class while its PFC was disabled.
    pub last_xoff: [Ps; NUM_CLASSES],
    /// Packets the dropping watchdog discarded at this port.
    pub watchdog_drops: u64,
}

impl Pfc {
    /// Sets up PFC on every switch: the lossless classes in the switches'
    /// parameters, and each ingress (port, lossless class)'s headroom and
    /// dynamic-threshold alpha. `mtu`: the largest data packet on the wire.
    pub fn configure(
        cfg: &PfcConfig,
        switches: &mut [Switch],
        ports: &[Port],
        params: &mut crate::net::switch::SwitchParams,
        mtu: u32,
        min_host_rate: Rate,
    ) -> Pfc {
        for cls in &cfg.classes {
            params.lossless |= 1 << cls;
        }
        for s in switches.iter_mut() {
            let mut st = PfcState {
                ingress: vec![[Ingress::default(); 8]; s.ports.len()],
                ..Default::default()
            };
            for (l, gp) in s.ports.clone().enumerate() {
                let port = &ports[gp as usize];
                let h = cfg.port_headroom(port.rate, port.delay, mtu);
                let alpha = Alpha::new(match cfg.threshold {
                    PfcThreshold::Dynamic {
                        alpha,
                        scale_with_rate,
                    } => {
                        if scale_with_rate {
                            alpha * port.rate.bits_per_sec() as f64
                                / min_host_rate.bits_per_sec() as f64
                        } else {
                            alpha
                        }
                    }
                    PfcThreshold::Static { .. } => 0.0,
                });
                for cls in &cfg.classes {
                    let ing = &mut st.ingress[l][*cls as usize];
                    ing.headroom = h;
                    ing.alpha = alpha;
                    st.total_headroom += h;
                    st.total_reserve += cfg.reserve.0;
                }
            }
            s.mech.pfc = st;
        }
        Pfc {
            cfg: cfg.clone(),
            ports: ports.iter().map(|_| PortPfc::default()).collect(),
            ..Default::default()
        }
    }
}

impl SwitchSection for PfcConfig {
    fn validate_section(&self, sc: &Scenario) -> Result<(), ScenarioError> {
        validate(self, sc)
    }
}

impl SwitchMechanism for Pfc {
    const ID: u8 = 1;
    type Config = PfcConfig;
    type State = Pfc;
    type PerSwitch = PfcState;

    /// The headroom of the switch's lossless ingresses, and how much of it
    /// is in use.
    #[inline(always)]
    fn reserved(state: &PfcState) -> (Bytes, Bytes) {
        (state.total_headroom, state.hdrm_used)
    }

    const THREADS: bool = true;

    /// Each port's state from its owner; the log appended (it is put in
    /// time and node order at the end), lossless drops summed.
    fn merge(into: &mut Pfc, from: &mut Pfc, owned: &dyn Fn(u32) -> bool) {
        for (port, (mine, theirs)) in into.ports.iter_mut().zip(&mut from.ports).enumerate() {
            if owned(port as u32) {
                std::mem::swap(mine, theirs);
            }
        }
        let (log, theirs) = (&mut into.log, &mut from.log);
        log.0.append(&mut theirs.0);
        log.1.append(&mut theirs.1);
        log.2.append(&mut theirs.2);
        log.3.append(&mut theirs.3);
        log.4.append(&mut theirs.4);
        into.lossless_drops += from.lossless_drops;
    }

    /// PFC on every switch (which also marks the lossless classes in the
    /// switches' parameters); without `[switch.pfc]`, PAUSE from the
    /// adapter's receive buffers and the input partitions holds until its
    /// resume (802.3x with a refreshed pause).
    fn build(cfg: Option<&PfcConfig>, net: &mut super::Network) -> Pfc {
        let Some(pc) = cfg else {
            let mut pfc = Pfc {
                ports: net.ports.iter().map(|_| PortPfc::default()).collect(),
                ..Default::default()
            };
            pfc.cfg.mode = PauseMode::UntilResume;
            return pfc;
        };
        let c = &net.sc.config;
        let mtu = match &c.rdma {
            Some(r) => r.data_wire(r.payload),
            None => c.transport.mtu,
        };
        let min_host_rate = net
            .nics
            .iter()
            .map(|n| net.ports[n.port as usize].rate)
            .min()
            .unwrap_or(Rate(1));
        Pfc::configure(pc, net.switches, net.ports, net.params, mtu, min_host_rate)
    }

    #[inline(always)]
    fn wants_ingress(w: &World, prio: u8) -> bool {
        w.sw.lossless & (1 << prio) != 0
    }

    /// Charges a lossless packet to its ingress (port, priority).
    #[inline(always)]
    fn on_ingress(w: &mut World, now: Ps, hop: &mut Hop) -> Verdict {
        let (s, in_local, prio, size) = (
            hop.switch,
            hop.in_local as usize,
            hop.prio as usize,
            hop.size,
        );
        let class = hop.class as usize;
        let cfg = &w.mechs.pfc.cfg;
        let sw = &mut w.switches[s as usize];
        let full = sw.used + size > w.sw.buffer;
        // Lossy bytes share the buffer outside the headroom reserve with the
        // lossless shared bytes: when they have filled it, the ingress pauses
        // (the packet itself is charged as the one crossing XOFF), or the
        // reserve another ingress counts on would be eaten.
        let pool = w.sw.buffer.saturating_sub(sw.mech.pfc.total_headroom);
        let pool_full = sw.used - sw.mech.pfc.hdrm_used + size > pool;
        // A packet that leaves at once, at an ingress far from XOFF, passes
        // *unseen*: charging and releasing it in this same instant would
        // change no count and send neither PAUSE nor XON.
        hop.unseen = !full
            && !pool_full
            && hop.at_once
            && sw
                .mech
                .pfc
                .passes_unseen(cfg, w.sw.buffer, in_local, prio, size);
        if hop.unseen {
            return Verdict::Pass;
        }
        if full || sw.mech.pfc.charge(cfg, in_local, prio, size) == Charge::Violation {
            // A lossless violation: headroom (or the whole buffer) overflowed.
            w.mechs.pfc.lossless_drops += 1;
            let cnt = &mut w.ports[hop.out as usize].queues[class].counters;
            cnt.drop_pkts += 1;
            cnt.drop_bytes += size;
            w.counters.cons.dropped_bytes += size;
            w.arena.free(hop.pkt);
            return Verdict::Dropped;
        }
        hop.charged = true;
        let ing = &sw.mech.pfc.ingress[in_local][prio];
        if !ing.paused && (pool_full || sw.mech.pfc.should_pause(cfg, w.sw.buffer, in_local, prio))
        {
            send(w, now, s, hop.in_local, prio as u8, true);
        }
        Verdict::Pass
    }

    #[inline(always)]
    fn on_drop(w: &mut World, now: Ps, hop: Hop, cause: DropCause) {
        match cause {
            DropCause::Buffer => {
                if hop.charged {
                    let cfg = &w.mechs.pfc.cfg;
                    w.switches[hop.switch as usize].mech.pfc.release(
                        cfg,
                        hop.in_local as usize,
                        hop.prio as usize,
                        hop.size,
                    );
                }
            }
            DropCause::Held => {
                w.mechs.pfc.ports[hop.out as usize].watchdog_drops += 1;
                if hop.in_local != NO_INGRESS {
                    release(
                        w,
                        now,
                        hop.switch,
                        hop.in_local,
                        hop.prio as usize,
                        hop.size,
                    );
                }
            }
        }
    }

    /// A switch's queued packets leave flagged `charged` whichever class
    /// they are in; only with a lossless class can PFC have charged one.
    #[inline(always)]
    fn wants_depart(w: &World, hop: &Hop, _kind: PacketKind) -> bool {
        hop.charged && w.sw.lossless != 0
    }

    /// A packet is charged only on a lossless priority (`release` tests it).
    fn departs(w: &World) -> bool {
        w.sw.lossless != 0
    }

    #[inline(always)]
    fn on_depart(w: &mut World, now: Ps, hop: &Hop) {
        release(
            w,
            now,
            hop.switch,
            hop.in_local,
            hop.prio as usize,
            hop.size,
        );
    }

    #[inline(always)]
    fn owns_frame(kind: PacketKind) -> bool {
        kind == PacketKind::Pause
    }

    fn on_frame(w: &mut World, now: Ps, port: u32, id: PktId) {
        on_pause_frame(w, now, port, id);
    }

    fn on_timer(w: &mut World, now: Ps, port: u32, kind: TimerKind) {
        match kind {
            EXPIRY => on_expiry(w, now, port),
            REFRESH => on_refresh(w, now, port),
            WATCHDOG => on_watchdog(w, now, port),
            _ => unreachable!("PFC timer {kind}"),
        }
    }

    /// The summary's `pfc` block (zeros without PFC).
    fn report(w: &World, _flows: &Table, summary: &mut serde_json::Value) {
        let end = w.q.now();
        // Over every port, knowing its owner.
        let sum = |f: &dyn Fn(&Port, &PortPfc) -> u64| {
            w.ports
                .iter()
                .zip(&w.mechs.pfc.ports)
                .map(|(port, state)| f(port, state))
                .sum::<u64>()
        };
        summary["pfc"] = serde_json::json!({
            "pause_frames": sum(&|_, state| state.xoff_tx.iter().sum()),
            // PAUSE frames received by host NICs (the talk's "sent to NICs of servers").
            "pause_frames_to_hosts": sum(&|port, state| match port.owner() {
                Owner::Nic(_) => state.xoff_rx.iter().sum(),
                Owner::Switch(_) => 0,
            }),
            "resume_frames": sum(&|_, state| state.xon_tx.iter().sum()),
            "paused_time_us": ps_to_us(sum(&|port, state| paused_ps(port, state, end))),
            "lossless_drops": w.mechs.pfc.lossless_drops,
            "watchdog_trips": sum(&|_, state| state.watchdog_trips),
            "watchdog_drops": sum(&|_, state| state.watchdog_drops),
        });
    }
}

/// Time `port` spent paused (its PFC state `state`), all classes,
/// including pauses still in force at `end`.
pub(crate) fn paused_ps(port: &Port, state: &PortPfc, end: Ps) -> Ps {
    (0..NUM_CLASSES)
        .map(|c| {
            state.paused_time[c]
                + if port.paused & (1 << c) != 0 {
                    end - state.paused_since[c]
                } else {
                    0
                }
        })
        .sum()
}

/// Sends an XOFF (`pause`) or XON for `class` out of switch `switch`'s local port `local`.
fn send(w: &mut World, now: Ps, switch: u32, local: u16, class: u8, pause: bool) {
    let cfg = &w.mechs.pfc.cfg;
    let quanta = if pause { cfg.pause_quanta } else { 0 };
    let mode = cfg.mode;
    let sw = &mut w.switches[switch as usize];
    sw.mech.pfc.ingress[local as usize][class as usize].paused = pause;
    let port = sw.port(local);
    switch::queue_pause(w, now, port, class, pause, quanta as u64);
    if pause && mode == PauseMode::Quanta && quanta > 0 {
        // Refresh at half the pause time while still congested (802.1Qbb; docs/mechanisms.md, PFC).
        let half = quanta as Ps * quantum(w.ports[port as usize].rate) / 2;
        let state = &mut w.mechs.pfc.ports[port as usize];
        w.q.arm(
            &mut state.refresh,
            now + half.max(1),
            Ev::timer(Pfc::ID, REFRESH, port),
        );
    }
    link::kick(w, now, port);
}

/// Returns a lossless packet's bytes to its ingress accounting (`class`:
/// the priority it arrived on) and sends XON upstream when the ingress
/// falls below its resume threshold.
#[inline]
fn release(w: &mut World, now: Ps, switch: u32, in_local: u16, class: usize, size: Bytes) {
    if w.sw.lossless & (1 << class) == 0 {
        return;
    }
    let cfg = &w.mechs.pfc.cfg;
    let sw = &mut w.switches[switch as usize];
    sw.mech.pfc.release(cfg, in_local as usize, class, size);
    if sw.mech.pfc.ingress[in_local as usize][class].paused
        && sw
            .mech
            .pfc
            .should_resume(cfg, w.sw.buffer, in_local as usize, class)
    {
        send(w, now, switch, in_local, class as u8, false);
    }
}

/// The refresh timer of port `port`: renews the XOFFs still in force.
fn on_refresh(w: &mut World, now: Ps, port: u32) {
    let ev = Ev::timer(Pfc::ID, REFRESH, port);
    if !w
        .q
        .fire(&mut w.mechs.pfc.ports[port as usize].refresh, now, ev)
    {
        return;
    }
    let Owner::Switch(s) = w.ports[port as usize].owner() else {
        return;
    };
    let l = w.ports[port as usize].local;
    let classes = w.mechs.pfc.cfg.classes.clone();
    for c in classes {
        if w.switches[s as usize].mech.pfc.ingress[l as usize][c as usize].paused {
            send(w, now, s, l, c, true);
        }
    }
}

/// A PFC frame reached port `port_id` (whose transmitter it pauses or resumes).
fn on_pause_frame(w: &mut World, now: Ps, port_id: u32, id: PktId) {
    let pkt = *w.arena.get(id);
    w.counters.cons.delivered_bytes += pkt.size as u64;
    w.arena.free(id);
    let class = pkt.payload as usize;
    let quanta = pkt.seq;
    let cfg = &w.mechs.pfc.cfg;
    let mode = cfg.mode;
    if matches!(w.ports[port_id as usize].owner(), Owner::Nic(_)) && !cfg.hosts_obey {
        return;
    }
    let watchdog = cfg.watchdog;
    let port = &mut w.ports[port_id as usize];
    let state = &mut w.mechs.pfc.ports[port_id as usize];
    let until = match mode {
        _ if quanta == 0 => now,
        PauseMode::UntilResume => Ps::MAX,
        PauseMode::Quanta => now + quanta * quantum(port.rate),
    };
    if port.discarding & (1 << class) != 0 {
        // The watchdog disabled PFC for this class: count, remember the
        // pause the peer asks for (applied if still on at restore), ignore.
        if quanta > 0 {
            state.xoff_rx[class] += 1;
            state.last_xoff[class] = now;
        } else {
            state.xon_rx[class] += 1;
        }
        state.pause_until[class] = until;
        return;
    }
    if quanta == 0 {
        state.xon_rx[class] += 1;
        if port.paused & (1 << class) != 0 {
            resume(w, now, port_id, class);
        }
        return;
    }
    state.xoff_rx[class] += 1;
    state.pause_until[class] = until;
    if port.paused & (1 << class) == 0 {
        port.paused |= 1 << class;
        state.paused_since[class] = now;
        if let Some(wd) = watchdog {
            let deadline = now + wd.limit.0;
            w.q.arm(
                &mut state.watchdog,
                deadline,
                Ev::timer(Pfc::ID, WATCHDOG, port_id),
            );
        }
        log(w, now, port_id, class as u8, PFC_PAUSED);
    }
    if until != Ps::MAX {
        let state = &mut w.mechs.pfc.ports[port_id as usize];
        w.q.arm(
            &mut state.expiry,
            until,
            Ev::timer(Pfc::ID, EXPIRY, port_id),
        );
    }
}

/// Class `class` of port `port` may send again.
fn resume(w: &mut World, now: Ps, port: u32, class: usize) {
    w.ports[port as usize].paused &= !(1 << class);
    let state = &mut w.mechs.pfc.ports[port as usize];
    state.tripped &= !(1 << class);
    let paused = now - state.paused_since[class];
    state.paused_time[class] += paused;
    state.longest_pause[class] = state.longest_pause[class].max(paused);
    log(w, now, port, class as u8, PFC_RESUMED);
    link::kick(w, now, port);
}

/// The expiry timer of port `port`: pauses whose quanta ran out resume.
fn on_expiry(w: &mut World, now: Ps, port: u32) {
    let ev = Ev::timer(Pfc::ID, EXPIRY, port);
    if !w
        .q
        .fire(&mut w.mechs.pfc.ports[port as usize].expiry, now, ev)
    {
        return;
    }
    let mut next = Ps::MAX;
    for c in 0..NUM_CLASSES {
        if w.ports[port as usize].paused & (1 << c) == 0 {
            continue;
        }
        let until = w.mechs.pfc.ports[port as usize].pause_until[c];
        if until <= now {
            resume(w, now, port, c);
        } else {
            next = next.min(until);
        }
    }
    if next != Ps::MAX {
        w.q.arm(&mut w.mechs.pfc.ports[port as usize].expiry, next, ev);
    }
}

/// The PFC watchdog's timer on port `port_id`: trips pauses that have lasted
/// `limit` and, in drop mode, restores classes quiet for `restore`.
fn on_watchdog(w: &mut World, now: Ps, port_id: u32) {
    let ev = Ev::timer(Pfc::ID, WATCHDOG, port_id);
    if !w
        .q
        .fire(&mut w.mechs.pfc.ports[port_id as usize].watchdog, now, ev)
    {
        return;
    }
    let wd = w
        .mechs
        .pfc
        .cfg
        .watchdog
        .expect("watchdog events imply a watchdog");
    let (limit, restore) = (wd.limit.0, wd.restore_ps());
    let mut next = Ps::MAX;
    for c in 0..NUM_CLASSES {
        let bit = 1u8 << c;
        let port = &mut w.ports[port_id as usize];
        let state = &mut w.mechs.pfc.ports[port_id as usize];
        if port.paused & bit != 0 && state.tripped & bit == 0 {
            let due = state.paused_since[c] + limit;
            if due > now {
                next = next.min(due);
                continue;
            }
            state.tripped |= bit;
            state.watchdog_trips += 1;
            log(w, now, port_id, c as u8, PFC_WATCHDOG_TRIP);
            // Drop mode acts on switch queues; a host's pauses are only reported.
            if wd.drop && matches!(w.ports[port_id as usize].owner(), Owner::Switch(_)) {
                w.ports[port_id as usize].discarding |= bit;
                w.mechs.pfc.ports[port_id as usize].last_xoff[c] = now;
                next = next.min(now + restore);
                resume(w, now, port_id, c);
                let flushed = switch::flush_class(w, now, port_id, c);
                w.mechs.pfc.ports[port_id as usize].watchdog_drops += flushed;
                // A flushed NCQ may release a congested-flow queue's markers.
                link::kick(w, now, port_id);
            }
        } else if port.discarding & bit != 0 {
            let due = state.last_xoff[c] + restore;
            if due > now {
                next = next.min(due);
                continue;
            }
            port.discarding &= !bit;
            log(w, now, port_id, c as u8, PFC_WATCHDOG_RESTORE);
            // The peer's last word was a pause that is still on: obey it.
            let state = &mut w.mechs.pfc.ports[port_id as usize];
            let until = state.pause_until[c];
            if until > now {
                w.ports[port_id as usize].paused |= bit;
                state.paused_since[c] = now;
                next = next.min(now + limit);
                if until != Ps::MAX {
                    w.q.arm(
                        &mut state.expiry,
                        until,
                        Ev::timer(Pfc::ID, EXPIRY, port_id),
                    );
                }
                log(w, now, port_id, c as u8, PFC_PAUSED);
            }
        }
    }
    if next != Ps::MAX {
        w.q.arm(&mut w.mechs.pfc.ports[port_id as usize].watchdog, next, ev);
    }
}

/// Appends a row to the PFC event log.
fn log(w: &mut World, now: Ps, port_id: u32, class: u8, event: u8) {
    let port = &w.ports[port_id as usize];
    let node = w.node_of(w.ports[port_id as usize].owner());
    let local = port.local as u32;
    let log = &mut w.mechs.pfc.log;
    log.0.push(now);
    log.1.push(node);
    log.2.push(local);
    log.3.push(class);
    log.4.push(event);
}

/// `[switch.pfc]`: classes, thresholds, pause quanta and the watchdog.
fn validate(pc: &PfcConfig, sc: &Scenario) -> Result<(), ScenarioError> {
    if pc.classes.is_empty() {
        return Err(ScenarioError::new(
            "switch.pfc.classes",
            "list at least one lossless class, e.g. classes = [3]",
        ));
    }
    for (i, c) in pc.classes.iter().enumerate() {
        check_class(*c, &format!("switch.pfc.classes[{i}]"))?;
        if pc.classes[..i].contains(c) {
            return Err(ScenarioError::new(
                format!("switch.pfc.classes[{i}]"),
                format!("class {c} is listed twice; list each lossless class once"),
            ));
        }
    }
    if let Some(Headroom::Fixed(h)) = pc.headroom {
        // The largest data packet (as `Simulation::new` sizes the headroom formula).
        let packet = match &sc.config.rdma {
            Some(r) => r.payload as u64 + r.header as u64,
            None => sc.config.transport.mtu as u64,
        };
        if h.0 < packet {
            return Err(ScenarioError::new(
                "switch.pfc.headroom",
                format!(
                    "a headroom of {} B cannot hold one {packet} B packet: every packet \
                     still arriving after a PAUSE would be dropped, which PFC exists to \
                     prevent; omit headroom to size it from each port's rate and delay \
                     (2 packets + the bytes on the wire and more)",
                    h.0
                ),
            ));
        }
    }
    match pc.threshold {
        PfcThreshold::Dynamic { alpha, .. } if !(alpha > 0.0 && alpha.is_finite()) => {
            return Err(ScenarioError::new(
                "switch.pfc.threshold.alpha",
                format!("alpha must be positive, got {alpha}"),
            ));
        }
        PfcThreshold::Static { xoff } if xoff.0 == 0 => {
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

    Ok(())
}
