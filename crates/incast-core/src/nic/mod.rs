//! The NIC element: one network port shared by one host or several (a
//! multi-host NIC), its control FIFO, and a NIC model that decides which
//! flow sends next.
//!
//! # How a host sends
//!
//! The NIC *pulls*. When its port is free ([`transmit_next`]) it sends, in
//! this order: a link-local control frame (a mechanism's), the oldest packet of
//! its FIFO of ready-made packets (ACKs, CNPs, datagrams) unless PFC pauses
//! its priority, then whatever the NIC model picks from its hosts' flows
//! ([`NicModel::next_packet`]). A flow that has something it may send is
//! handed to the model ([`flow_ready`]); when the port is busy the NIC asks
//! for one `TxDone` at the end of the transmission ([`kick`]).
//!
//! # Adding a NIC model
//! Write `nic/mymodel.rs` with a unit type implementing [`NicModel`], and
//! declare its module and add one line to the `nic_models!` registry below,
//! which gives the model its `[nic] model` name. The model asks flows for
//! packets through `sender::offer_tcp` and `sender::offer_qp`, which do
//! what every model must (congestion isolation's ageing, the wait at the
//! sender, the PCIe charge). Its checks and its state go in the model's own
//! file ([`NicModel::validate`], [`NicModel::build`]): its state is its
//! `State`, the field of [`NicStates`] named after its module
//! (`w.nic_state.MODULE`), per-NIC state indexed by NIC inside it (or in
//! [`Nic`]); the bytes it holds count in the conservation account through
//! [`NicModel::held_bytes`], and a time series of its own is a result table
//! through [`NicModel::SERIES`]. A model whose state is per NIC runs in
//! threaded runs when it says so ([`NicModel::THREADS`]) and takes each
//! NIC's state from the partition that owns it ([`NicModel::merge`]). The
//! example extension `nic/example_fifo.rs` (compiled in tests) is such a
//! file.
//!
//! The edge gate (Smart-Pause, On-Ramp: [`crate::edge`]) sits on the NIC
//! side: the model skips a flow whose gate is closed.

pub(crate) mod pcie;
pub(crate) mod rx;
mod sender;

// The models of the registry below. Declared here, not inside the macro:
// rustfmt does not read modules declared inside a macro, so `cargo fmt
// --check` would skip their files.
pub(crate) mod adapter;
#[cfg(any(test, feature = "examples"))]
pub(crate) mod example_fifo;
pub(crate) mod queues;
pub(crate) mod round_robin;

use crate::engine::LazyTimer;
use crate::host::{rdma, tcp};
use crate::mech;
use crate::metrics_table::Table;
use crate::net::packet::flags;
use crate::net::{link, PacketKind, PktId};
use crate::scenario::{Scenario, ScenarioError};
use crate::sim::world::World;
use crate::units::Ps;
use std::collections::VecDeque;

/// A NIC: its port and its queues.
#[derive(Debug, Default)]
pub struct Nic {
    /// Global id of its port.
    pub port: u32,
    /// The node number of the port in result tables (its first host).
    pub node: u32,
    /// Packets built and waiting (ACKs first come first served, datagrams).
    pub ctrl: VecDeque<PktId>,
    /// Round robin: flow slots that may send now, in order.
    pub ready: VecDeque<u32>,
    /// Round robin: wake-up for the earliest pacing or gate deadline.
    pub wake: LazyTimer,
    /// Routed notifications from switches received ([`PacketKind::Notify`]).
    pub notifications: u64,
}

impl Nic {
    pub fn new(port: u32, node: u32) -> Nic {
        Nic {
            port,
            node,
            ..Default::default()
        }
    }
}

/// A NIC model: which of its hosts' flows sends next.
pub(crate) trait NicModel {
    /// Its state: the field of [`NicStates`] named after its module
    /// (`w.nic_state.MODULE`), built by [`NicModel::build`].
    type State: Default;
    /// The next data packet to put on NIC `nic`'s free port at `now`, or
    /// `None` (then the model arranges its own wake-up, if it needs one).
    fn next_packet(w: &mut World, now: Ps, nic: u32) -> Option<PktId>;
    /// Flow `slot` (of one of the NIC's hosts) may send.
    fn flow_ready(w: &mut World, nic: u32, slot: u32);
    /// Flow `slot`, which the model may still hold, finished: forget it.
    fn flow_done(w: &mut World, nic: u32, slot: u32);
    /// Whether the model has flows waiting.
    fn has_work(w: &World, nic: u32) -> bool;
    /// A flow of NIC `nic` became ready at `now` while the port is busy
    /// (default: nothing, the model takes it when the port is free).
    fn ready_while_busy(_w: &mut World, _now: Ps, _nic: u32) {}
    /// The scenario's checks that concern this model (its own section of
    /// `[nic]`, what it cannot serve), once the shared ones passed.
    fn validate(_sc: &Scenario) -> Result<(), ScenarioError> {
        Ok(())
    }
    /// Its state in the world, and the events it starts with.
    fn build(_sc: &Scenario, _w: &mut World) {}
    /// Whether a threaded run ([`crate::sim::threaded`]) may use it: its
    /// state is per NIC (or in [`Nic`]), each NIC's events read and write
    /// only that NIC's, and [`NicModel::merge`] takes each NIC's from the
    /// partition that owns it. A model that says no is refused there.
    const THREADS: bool = false;
    /// A threaded run's end: `from` is a partition's state, whose NICs
    /// `owned(nic)` tells; `into` takes what that partition owns.
    fn merge(_into: &mut Self::State, _from: &mut Self::State, _owned: &dyn Fn(u32) -> bool) {}
    /// Its timer `code` for `target` fired ([`Ev::NicTimer`]`(code, target)`,
    /// which it pushes itself: codes and targets are its own).
    ///
    /// [`Ev::NicTimer`]: crate::sim::ev::Ev::NicTimer
    fn on_timer(_w: &mut World, _now: Ps, _code: u16, _target: u32) {}
    /// The NIC its timer `code` for `target` concerns (`None`: no single
    /// one): the node a parallel run charges the event to.
    fn timer_nic(_w: &World, _code: u16, _target: u32) -> Option<u32> {
        None
    }
    /// The bytes of packets it holds (queued, buffered): the conservation
    /// account's share of the NICs.
    fn held_bytes(_w: &World) -> u64 {
        0
    }
    /// The result tables its time series make, sampled at the queue
    /// sampler's ticks: result tables of every run (after the core's, in
    /// registry order), empty unless the model runs.
    const SERIES: &'static [&'static str] = &[];
    /// Whether its series want the sampler's ticks in this run.
    fn samples(_w: &World) -> bool {
        false
    }
    /// A tick of the sampler: its series take their next point.
    fn sample(_w: &mut World) {}
    /// The sampler kept its even ticks (and doubled its interval): so do
    /// its series.
    fn halve_series(_w: &mut World) {}
    /// Its series' tables, one per `SERIES` name, at the ticks `times`.
    fn series_tables(_w: &World, _times: &[Ps]) -> Vec<Table> {
        Self::empty_series()
    }
    /// Its series' tables without rows, each with its typed columns: what a
    /// run of another model gets (every run has every table's columns).
    fn empty_series() -> Vec<Table> {
        Self::SERIES.iter().map(|_| Table::default()).collect()
    }
}

macro_rules! nic_models {
    ($( $(#[doc = $doc:literal])* $(#[cfg($cfg:meta)])?
        $variant:ident => $module:ident :: $ty:ident, $name:literal ;)*) => {
        $( $(#[cfg($cfg)])? pub use $module::$ty; )*

        /// Which NIC model sends a host's traffic (`[nic] model`).
        #[derive(
            Clone, Copy, Debug, Default, PartialEq, Eq, serde::Deserialize, serde::Serialize,
            schemars::JsonSchema,
        )]
        pub enum NicModelKind {
            #[default]
            $( $(#[doc = $doc])* $(#[cfg($cfg)])? #[serde(rename = $name)] $variant, )*
        }

        impl NicModelKind {
            /// Every registered model, in registry order.
            pub const ALL: &'static [NicModelKind] = &[$( $(#[cfg($cfg)])? NicModelKind::$variant, )*];

            /// The model's name in scenario files.
            pub fn name(self) -> &'static str {
                match self { $( $(#[cfg($cfg)])? NicModelKind::$variant => $name, )* }
            }
        }

        /// The NIC models' state, one field per registered model, named
        /// after its module ([`NicModel::State`]).
        #[derive(Default)]
        #[allow(dead_code)] // a model without state has a unit field
        pub(crate) struct NicStates {
            $( $(#[cfg($cfg)])? pub $module: <$ty as NicModel>::State, )*
        }

        #[inline(always)]
        fn model_next(w: &mut World, now: Ps, nic: u32) -> Option<PktId> {
            match w.nic_model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::next_packet(w, now, nic), )* }
        }
        /// Flow `slot` of a host of NIC `nic` may send: hand it to the model.
        #[inline]
        pub(crate) fn flow_ready(w: &mut World, nic: u32, slot: u32) {
            match w.nic_model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::flow_ready(w, nic, slot), )* }
        }
        /// Flow `slot` of a host of NIC `nic` finished.
        pub(crate) fn flow_done(w: &mut World, nic: u32, slot: u32) {
            match w.nic_model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::flow_done(w, nic, slot), )* }
        }
        /// A flow of NIC `nic` became ready while its port is busy.
        #[inline]
        fn model_ready_while_busy(w: &mut World, now: Ps, nic: u32) {
            match w.nic_model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::ready_while_busy(w, now, nic), )* }
        }
        #[inline(always)]
        fn model_has_work(w: &World, nic: u32) -> bool {
            match w.nic_model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::has_work(w, nic), )* }
        }
        /// The scenario's checks of its NIC model ([`NicModel::validate`]).
        pub(crate) fn validate_model(sc: &Scenario) -> Result<(), ScenarioError> {
            match sc.config.nic.model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::validate(sc), )* }
        }
        /// The result tables the NIC models' time series make, in registry
        /// order ([`NicModel::SERIES`]).
        pub(crate) fn series_names() -> Vec<&'static str> {
            let mut names = Vec::new();
            $( $(#[cfg($cfg)])? names.extend_from_slice(<$ty>::SERIES); )*
            names
        }
        /// The bytes the run's NIC model holds ([`NicModel::held_bytes`]).
        pub(crate) fn held_bytes(w: &World) -> u64 {
            match w.nic_model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::held_bytes(w), )* }
        }
        /// Whether the run's NIC model samples a time series.
        pub(crate) fn samples(w: &World) -> bool {
            match w.nic_model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::samples(w), )* }
        }
        /// A tick of the queue sampler ([`NicModel::sample`]).
        pub(crate) fn sample(w: &mut World) {
            match w.nic_model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::sample(w), )* }
        }
        /// The sampler kept its even ticks ([`NicModel::halve_series`]).
        pub(crate) fn halve_series(w: &mut World) {
            match w.nic_model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::halve_series(w), )* }
        }
        /// Every [`series_names`] table of this run (empty but the running
        /// model's), at the sampler's ticks `times`.
        pub(crate) fn series_tables(w: &World, times: &[Ps]) -> Vec<Table> {
            let mut tables = Vec::new();
            $( $(#[cfg($cfg)])? if w.nic_model == NicModelKind::$variant {
                tables.extend(<$ty>::series_tables(w, times));
            } else {
                tables.extend(<$ty>::empty_series());
            } )*
            tables
        }
        /// The run's NIC model's timer fired ([`NicModel::on_timer`]).
        pub(crate) fn on_timer(w: &mut World, now: Ps, code: u16, target: u32) {
            match w.nic_model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::on_timer(w, now, code, target), )* }
        }
        /// The NIC the run's NIC model's timer concerns ([`NicModel::timer_nic`]).
        pub(crate) fn timer_nic(w: &World, code: u16, target: u32) -> Option<u32> {
            match w.nic_model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::timer_nic(w, code, target), )* }
        }
        /// Whether the run's NIC model runs threaded ([`NicModel::THREADS`]).
        pub(crate) fn runs_threaded(model: NicModelKind) -> bool {
            match model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::THREADS, )* }
        }
        /// A threaded run's end: the run's NIC model takes partition state
        /// `from`'s NICs (`owned`) into `into` ([`NicModel::merge`]).
        pub(crate) fn merge(
            model: NicModelKind,
            into: &mut NicStates,
            from: &mut NicStates,
            owned: &dyn Fn(u32) -> bool,
        ) {
            match model { $( $(#[cfg($cfg)])? NicModelKind::$variant => {
                <$ty>::merge(&mut into.$module, &mut from.$module, owned)
            } )* }
        }
        /// The NIC model's state in the world ([`NicModel::build`]).
        pub(crate) fn build_model(sc: &Scenario, w: &mut World) {
            w.nic_model = sc.config.nic.model;
            match w.nic_model { $( $(#[cfg($cfg)])? NicModelKind::$variant => <$ty>::build(sc, w), )* }
        }
    };
}

// The registry: one line per NIC model (its module, type and `[nic] model`
// name; the doc comment is the scenario schema's description). The example
// extensions are compiled in tests and with the `examples` feature.
nic_models! {
    /// Round robin over the host's flows; datagrams and raw frames in one FIFO.
    RoundRobin => round_robin::RoundRobin, "round_robin";
    /// The IBM talk's adapter: raw frames in a virtual output queue per
    /// destination (round robin), a rate limiter per flow driven by `[cm]`,
    /// a partitioned ingress buffer with source quench, and a receive buffer
    /// drained at the host's service rate that PAUSEs the switch. Transport
    /// flows are served round robin after the raw frames.
    Adapter => adapter::Adapter, "adapter";
    /// Transmit queues filled by the host stack up to a byte limit, shared
    /// or split by congestion control or class, drained by weighted round
    /// robin (`[nic.queues]`; TCP only).
    Queues => queues::Queues, "queues";
    #[cfg(any(test, feature = "examples"))] ExampleFifo => example_fifo::ExampleFifo, "example_fifo";
}

/// NIC `nic` may have something to send: now if its port is idle, else when
/// its transmission ends.
#[inline]
pub(crate) fn kick(w: &mut World, now: Ps, nic: u32) {
    let p = w.nics[nic as usize].port;
    if w.ports[p as usize].is_idle(now) {
        transmit_next(w, now, nic);
    } else {
        model_ready_while_busy(w, now, nic);
        link::want_tx_done(w, p);
    }
}

/// NIC `nic_id`'s port is free: its next packet (module docs).
pub(crate) fn transmit_next(w: &mut World, now: Ps, nic_id: u32) {
    let p = w.nics[nic_id as usize].port;
    let port = &mut w.ports[p as usize];
    if port.busy_until > now {
        link::want_tx_done(w, p);
        return;
    }
    if let Some(id) = port.pop_ctrl() {
        // Link-local control frames (a mechanism's) are never paused.
        link::transmit(w, now, p, id);
        link::want_tx_done(w, p);
        return;
    }
    let paused = port.paused;
    let nic = &mut w.nics[nic_id as usize];
    let ctrl_ok = nic.ctrl.front().is_some_and(|&id| {
        let pkt = w.arena.get(id);
        // RDMA ACKs, NACKs and CNPs may be set to ignore pauses (`rdma.ctrl_ignores_pause`).
        paused & (1 << pkt.class) == 0
            || (pkt.kind != PacketKind::Raw
                && w.rdma.as_ref().is_some_and(|r| r.cfg.ctrl_ignores_pause))
    });
    let pkt = if ctrl_ok {
        nic.ctrl.pop_front()
    } else {
        model_next(w, now, nic_id)
    };
    if let Some(id) = pkt {
        link::transmit(w, now, p, id);
        if !w.nics[nic_id as usize].ctrl.is_empty() || model_has_work(w, nic_id) {
            link::want_tx_done(w, p);
        }
    }
}

/// A packet reached NIC `nic`: to the transport of its destination host, or
/// into its receive buffer first (a hotspot host of the adapter model).
#[inline]
pub(crate) fn receive(w: &mut World, now: Ps, nic: u32, id: PktId) {
    if adapter::buffers_rx(w, nic) && w.arena.get(id).kind != PacketKind::Notify {
        adapter::rx_arrive(w, now, nic, id);
        return;
    }
    if w.rx.is_some() && w.arena.get(id).kind != PacketKind::Notify {
        // Through the receive queues and PCIe first (`[nic.receive]`).
        rx::arrive(w, now, id);
        return;
    }
    deliver(w, now, nic, id);
}

/// Packet `id` is handed to NIC `nic`'s host.
#[inline(always)]
pub(crate) fn deliver(w: &mut World, now: Ps, nic: u32, id: PktId) {
    let pkt = *w.arena.get(id);
    w.counters.cons.delivered_bytes += pkt.size as u64;
    debug_assert_eq!(
        w.host_nic[pkt.dst as usize], nic,
        "packet delivered to the wrong NIC"
    );
    if pkt.kind == PacketKind::Notify {
        w.nics[nic as usize].notifications += 1;
        mech::on_notify(w, now, nic, id);
        return;
    }
    if pkt.flags & (flags::TRIMMED | flags::NDP | flags::EQDS) != 0 {
        if pkt.flags & flags::NDP != 0 {
            crate::host::ndp::receive(w, now, pkt.dst, &pkt, id);
        } else if pkt.flags & flags::EQDS != 0 {
            crate::host::eqds::receive(w, now, pkt.dst, &pkt, id);
        } else {
            // A header whose payload a switch cut ([`crate::mech::trim`]):
            // TCP and RDMA know no trimming, so to them it is a loss.
            w.arena.free(id);
        }
        return;
    }
    if w.rdma.is_some() && pkt.kind != PacketKind::Raw {
        rdma::receive(w, now, pkt.dst, id);
        return;
    }
    w.arena.free(id);
    if pkt.kind == PacketKind::Raw {
        return;
    }
    tcp::receive(w, now, pkt.dst, &pkt, id);
}

/// Queues a ready-made packet (ACK, CNP, datagram) at the NIC of host `host`.
#[inline]
pub(crate) fn push_ctrl(w: &mut World, host: u32, id: PktId) {
    let n = w.host_nic[host as usize];
    w.nics[n as usize].ctrl.push_back(id);
}
