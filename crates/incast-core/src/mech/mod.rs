//! Switch mechanisms: what acts on a packet inside a switch beyond plain
//! output queueing (PFC, congestion isolation, INT, ...).
//!
//! # How a mechanism plugs in
//!
//! The switch element ([`crate::net::switch`]) walks every packet through
//! fixed *hook sites*, in this order:
//!
//! 1. **ingress** ([`SwitchMechanism::on_ingress`]): the packet has been
//!    routed to its egress port; a mechanism may account it to its ingress
//!    and may drop it (PFC charges lossless bytes here);
//! 2. **classify** ([`SwitchMechanism::on_classify`]): a mechanism may pick
//!    the class queue the packet joins (congestion isolation moves
//!    congesting flows to a congested-flow queue);
//! 3. the buffer admits and queues the packet, or it passes straight
//!    through an idle port; **enqueue** ([`SwitchMechanism::on_enqueue`])
//!    follows a queued packet, **drop** ([`SwitchMechanism::on_drop`]) a
//!    refused one;
//! 4. **depart** ([`SwitchMechanism::on_depart`]): the packet leaves its
//!    class queue, by transmission or pass-through, or is flushed.
//!
//! Besides, a mechanism may own control frames ([`SwitchMechanism::on_frame`],
//! by packet kind) and timers ([`SwitchMechanism::on_timer`], an
//! [`crate::sim::ev::Ev::Timer`] carrying its id), and adds its section
//! to the run's summary ([`SwitchMechanism::report`]).
//!
//! A mechanism is a type implementing [`SwitchMechanism`]: its hooks are
//! associated functions over the [`World`], all defaulting to doing
//! nothing, and a `wants_*` predicate per hook site that is a mask test on
//! the packet's class (so a switched-off mechanism costs one mask test per
//! hook site and nothing else; where none is on, an arrival skips the
//! ingress and classify sites with one test, and a departure the depart
//! site with one more). Dispatch is static: the registry below expands each
//! hook site into the registered mechanisms' calls, in registry order.
//!
//! The registry also generates the rest: the `[switch.KEY]` section
//! (a field of [`crate::scenario::SwitchConfig`] and its schema entry, of
//! the module's `Config` type) with its checks and its moves of packets
//! between classes for the buffer checks (the `Config`'s
//! [`crate::scenario::SwitchSection`], in the mechanism's module, run by the
//! scenario's validation: configuration, not behaviour, so that the
//! scenario calls nothing of the elements), its construction
//! ([`SwitchMechanism::build`], run by [`build`] once the ports and
//! switches exist), its state (`State`: the field of [`Mechs`] named after
//! its module, `w.mechs.MODULE`; per-port state is the mechanism's own,
//! indexed by port id: `Port` keeps only generic bits, [`crate::net::Port::held`];
//! so is per-flow state, indexed by flow-table slot and started afresh by
//! [`SwitchMechanism::flow_started`]: `FlowSlot` keeps none), its first
//! timers ([`SwitchMechanism::start`]), its summary section
//! ([`SwitchMechanism::report`]), its columns of the flows table
//! ([`SwitchMechanism::FLOW_COLUMNS`], a count per flow each, filled by
//! [`SwitchMechanism::flow_values`] when a flow's record is written).
//!
//! ## Adding a mechanism
//! 1. Write `mech/mymech.rs`: its `Config` (serde + schemars,
//!    `deny_unknown_fields`), its state (and `type PerSwitch = ()` unless it
//!    keeps some beside each switch's buffer), and a unit type implementing
//!    [`SwitchMechanism`] (override only the hooks you need, each with its
//!    `wants_*` mask test, and say in `departs` whether its depart hook can
//!    run at all), and [`crate::scenario::SwitchSection`] for its `Config`
//!    (its checks, `validate_section`, name the keys it refuses).
//! 2. Declare the module (`pub mod mymech;`) and add one line to
//!    `switch_mechanisms!` below: `mymech::MyMech = mymech "its schema
//!    description"` (its position is the order its hooks run in, relative
//!    to the others; leave out `= key "..."` for a mechanism without a
//!    section). The module is declared outside the registry so that
//!    rustfmt, which does not expand macros, formats it.
//!
//! Example: [`example_beacon`] (a timer per port and a control frame;
//! compiled in tests and with the `examples` feature), run in a simulation
//! by its test.
//!
//! A mechanism's link-local frames are [`PacketKind::Control`] frames
//! ([`crate::net::Packet::control_frame`] with its id), which the registry
//! hands to its [`SwitchMechanism::on_frame`], queued on a port's control
//! FIFO with [`crate::net::switch::queue_link_frame`]. A mechanism that
//! needs to reach a host (a congestion notification, say) sends a routed
//! frame with [`crate::net::switch::send_routed`].

pub mod ci;
pub(crate) mod cm;
#[cfg(any(test, feature = "examples"))]
pub(crate) mod example_beacon;
pub mod int;
pub mod pfc;
pub mod trim;

use crate::metrics_table::Table;
use crate::net::switch::{Switch, SwitchParams};
use crate::net::{PacketKind, PktId, Port};
use crate::nic::Nic;
use crate::scenario::Scenario;
use crate::sim::world::World;
use crate::units::{Bytes, Ps};

/// A packet's hop through a switch, as the hook sites see it. Every hook is
/// inlined into the switch's path (`#[inline(always)]`), so that the hop
/// stays in registers: a hook with bulk work calls its own out-of-line
/// function with the scalars it needs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Hop {
    /// The switch.
    pub switch: u32,
    pub pkt: PktId,
    /// The global id of its egress port.
    pub out: u32,
    pub size: Bytes,
    /// The local port it arrived on.
    pub in_local: u16,
    /// The flow's class ([`crate::net::Packet::class`]).
    pub class: u8,
    /// The priority it arrived on ([`crate::net::Packet::prio`]).
    pub prio: u8,
    /// The class queue it joins (or left, at departure).
    pub queue: u8,
    /// No mechanism picks its queue, and its egress is idle with nothing
    /// queued: as it arrived, it would pass straight through.
    pub at_once: bool,
    /// An ingress mechanism charged it (and must be told when it leaves).
    pub charged: bool,
    /// It passes straight through without being accounted at all.
    pub unseen: bool,
    /// It left its queue by being dropped (a flush), not sent.
    pub flushed: bool,
}

impl Hop {
    /// A hop of packet `pkt` through `switch`, from local port `in_local`
    /// to global port `out`, queued in its own class.
    #[inline(always)]
    pub fn new(
        switch: u32,
        pkt: PktId,
        in_local: u16,
        out: u32,
        class: u8,
        prio: u8,
        size: Bytes,
    ) -> Hop {
        Hop {
            switch,
            pkt,
            out,
            size,
            in_local,
            class,
            prio,
            queue: class,
            at_once: false,
            charged: false,
            unseen: false,
            flushed: false,
        }
    }
}

/// What an ingress hook decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    Pass,
    /// The hook dropped the packet (and freed it).
    Dropped,
}

/// Why the switch refused a packet (the [`SwitchMechanism::on_drop`] hook).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DropCause {
    /// The buffer's admission rule.
    Buffer,
    /// A mechanism holds the queue's class in drop mode (the PFC watchdog's
    /// storm mode: [`crate::net::Port::discarding`]).
    Held,
}

/// A timer of a mechanism: which of its timers, on which port.
pub(crate) type TimerKind = u8;

/// A switch mechanism's hooks (module docs). All default to nothing.
pub(crate) trait SwitchMechanism {
    /// The mechanism's number in [`crate::sim::ev::Ev::Timer`] events and
    /// [`PacketKind::Control`] frames.
    const ID: u8;
    /// Its `[switch.KEY]` section, when its registry line names a key (the
    /// module's `Config`); `()` without one.
    type Config;
    /// Its state: the field of [`Mechs`] named after its module.
    type State: Default;
    /// Its state beside each switch's buffer occupancy, `()` for none: the
    /// field of [`SwitchStates`] named after its module, kept in each
    /// [`Switch`] (`switch.mech.MODULE`), where a hop reads it with the
    /// switch's own line instead of indexing a table of its own (PFC's
    /// ingress accounting: docs/performance-history.md, session 50).
    type PerSwitch: Default + Clone + std::fmt::Debug;
    /// Of the switch's buffer, the bytes this mechanism reserves and, of
    /// them, the bytes in use (`state`: its [`SwitchMechanism::PerSwitch`]):
    /// the lossy classes' admission leaves the reservation alone
    /// (`Switch::admits`). None by default.
    #[inline(always)]
    fn reserved(_state: &Self::PerSwitch) -> (Bytes, Bytes) {
        (0, 0)
    }
    /// Its state for this run (`cfg`: its section, if given), built once the
    /// ports and switches exist; may set the switches' parameters and ports.
    fn build(_cfg: Option<&Self::Config>, _net: &mut Network) -> Self::State {
        Self::State::default()
    }
    /// Called once the world is built, before the first event (schedules
    /// its first timers, say).
    fn start(_w: &mut World) {}
    /// Whether `on_ingress` runs for a packet arriving on priority `prio`.
    /// Like `wants_classify`, it depends on the configuration alone: both
    /// are also read once, when the world is built (`SwitchParams::hooked`).
    #[inline(always)]
    fn wants_ingress(_w: &World, _prio: u8) -> bool {
        false
    }
    fn on_ingress(_w: &mut World, _now: Ps, _hop: &mut Hop) -> Verdict {
        Verdict::Pass
    }
    /// Whether `on_classify`/`on_enqueue` run for a packet of `class`.
    #[inline(always)]
    fn wants_classify(_w: &World, _class: u8) -> bool {
        false
    }
    /// May pick the packet's queue (`queue`); returns the hop.
    fn on_classify(_w: &mut World, _now: Ps, hop: Hop) -> Hop {
        hop
    }
    fn on_enqueue(_w: &mut World, _now: Ps, _hop: Hop) {}
    fn on_drop(_w: &mut World, _now: Ps, _hop: Hop, _cause: DropCause) {}
    /// Whether `on_depart` runs for a packet leaving class queue `hop.queue`.
    #[inline(always)]
    fn wants_depart(_w: &World, _hop: &Hop, _kind: PacketKind) -> bool {
        false
    }
    /// Hot: keep it small and `#[inline(always)]` (move any bulk out of
    /// line with scalar arguments), so that the hop stays in registers.
    fn on_depart(_w: &mut World, _now: Ps, _hop: &Hop) {}
    /// Whether `wants_depart` can hold at all in this run (the mechanism is
    /// on). Read once, when the world is built: a run where no mechanism
    /// departs skips the depart hook site with one test. Required, so that
    /// no mechanism with a depart hook can leave it out.
    fn departs(w: &World) -> bool;
    /// Whether control frames of `kind` are this mechanism's (a mechanism
    /// without a kind of its own sends [`PacketKind::Control`] frames,
    /// [`crate::net::Packet::control_frame`]: they come to it by its id).
    #[inline(always)]
    fn owns_frame(_kind: PacketKind) -> bool {
        false
    }
    /// Control frame `pkt` of this mechanism reached port `port` (a switch's
    /// or a NIC's). The hook frees it.
    fn on_frame(_w: &mut World, _now: Ps, _port: u32, _pkt: PktId) {}
    /// A routed notification of this mechanism reached NIC `nic` (a
    /// reaction point acts on it). The hook frees it.
    fn on_notify(w: &mut World, _now: Ps, _nic: u32, pkt: PktId) {
        w.arena.free(pkt);
    }
    fn on_timer(_w: &mut World, _now: Ps, _port: u32, _kind: TimerKind) {}
    /// Adds the mechanism's section to the run summary (`flows`: the flow table).
    fn report(_w: &World, _flows: &Table, _summary: &mut serde_json::Value) {}
    /// The flows table's columns it contributes (a count per flow each, in
    /// this order, after `edge_paused_ps`): named here whether or not the
    /// mechanism is on, filled by [`SwitchMechanism::flow_values`].
    const FLOW_COLUMNS: &'static [&'static str] = &[];
    /// The flow in flow-table slot `slot` starts: its per-flow state (the
    /// mechanism's own, indexed by slot) starts afresh.
    #[inline(always)]
    fn flow_started(_state: &mut Self::State, _slot: u32) {}
    /// The record of the flow in `slot` is written: appends one value to
    /// each of its `FLOW_COLUMNS` (`columns`, in that order).
    fn flow_values(_state: &Self::State, _slot: u32, _columns: &mut [Vec<u32>]) {}
    /// Whether it can run in a threaded run ([`crate::sim::threaded`]):
    /// its state is its own, so only it can say how to merge the
    /// partitions' (in [`SwitchMechanism::merge`]). A mechanism that says
    /// no is refused there when its section is given.
    const THREADS: bool = false;
    /// Why a run with configuration `cfg` cannot run threaded, or `None`:
    /// by default, unless [`SwitchMechanism::THREADS`] says it can.
    fn threads_refusal(_cfg: &Self::Config) -> Option<&'static str> {
        (!Self::THREADS).then_some("does not merge its partitions' state yet")
    }
    /// A threaded run's end: `from` is a partition's state, whose ports
    /// `owned(port)` tells; `into` takes what that partition owns.
    fn merge(_into: &mut Self::State, _from: &mut Self::State, _owned: &dyn Fn(u32) -> bool) {}
}

/// What a mechanism's [`SwitchMechanism::build`] sees of the run being
/// built: the scenario, the network's ports, switches and NICs, and the
/// switches' parameters.
pub(crate) struct Network<'a> {
    pub sc: &'a Scenario,
    pub ports: &'a mut [Port],
    pub switches: &'a mut [Switch],
    pub nics: &'a [Nic],
    pub params: &'a mut SwitchParams,
}

/// A mechanism's `[switch.KEY]` section in a registry expansion: the
/// scenario's, or `None` for a mechanism without a key.
macro_rules! section {
    ($sc:expr;) => {
        None
    };
    ($sc:expr; $key:ident) => {
        $sc.config.switch.$key.as_ref()
    };
}

/// The registry's list, handed to the macro `$callback` (after the tokens
/// `$args`, in brackets). Entries: `module::Type`, then `= key "doc"` for a
/// mechanism with a `[switch.key]` section (the module's `Config`, `doc` its
/// description in the schema); attributes (a `#[cfg]`) apply to every
/// item the entry generates.
macro_rules! switch_mechanisms {
    ($callback:ident; $($args:tt)*) => {
        $callback! { [$($args)*]
            // One line per mechanism, in the order their hooks run.
            ci::Ci = ci "Congestion isolation (IEEE 802.1Qcz) on every switch port.",
            pfc::Pfc = pfc "Priority flow control (IEEE 802.1Qbb) for the lossless classes.",
            int::Int,
            trim::Trim = trim "Packet trimming (NDP, SIGCOMM 2017 §3.1): a data packet of a trimming class that would be dropped is cut to its header, which joins a strict-priority header queue.",
            cm::Cm = input_buffer "The IBM talk's switch memory: a partition per input port, PAUSE per input (802.3x) at watermarks or a drop when the partition is full; no per-output limit (`buffer` and `admission` then do not apply).",
            #[cfg(any(test, feature = "examples"))] example_beacon::Beacon = example_beacon "Example: every switch port sends beacons to its neighbour (tests and the `examples` feature).",
        }
    };
}
pub(crate) use switch_mechanisms;

/// `[switch]`'s configuration struct: the fixed fields given (each with its
/// default after `=`), then one `Option` field per registered mechanism with
/// a key (its module's `Config`). Also its `Default`, and the checks and
/// class moves of the sections given, in registry order
/// ([`crate::scenario::SwitchSection`], implemented by each `Config`).
macro_rules! switch_config {
    ([$(#[$meta:meta])* pub struct $name:ident {
        $( $(#[$fmeta:meta])* pub $field:ident : $fty:ty = $default:expr ),* $(,)?
    }] $($list:tt)*) => {
        $crate::mech::switch_config! { @munch
            [$(#[$meta])* pub struct $name { $( $(#[$fmeta])* pub $field : $fty = $default ),* }]
            [] [] [] $($list)*
        }
    };
    // A mechanism with a key: a field, its default and its section.
    (@munch $head:tt [$($fields:tt)*] [$($defaults:tt)*] [$($keys:tt)*]
        $(#[$attr:meta])* $module:ident :: $ty:ident = $key:ident $doc:literal , $($rest:tt)*) => {
        $crate::mech::switch_config! { @munch $head
            [$($fields)* $(#[$attr])* #[doc = $doc] pub $key: Option<$crate::mech::$module::Config>,]
            [$($defaults)* $(#[$attr])* $key: None,]
            [$($keys)* [$(#[$attr])* $key]]
            $($rest)*
        }
    };
    // A mechanism without one.
    (@munch $head:tt $fields:tt $defaults:tt $keys:tt
        $(#[$attr:meta])* $module:ident :: $ty:ident , $($rest:tt)*) => {
        $crate::mech::switch_config! { @munch $head $fields $defaults $keys $($rest)* }
    };
    (@munch [$(#[$meta:meta])* pub struct $name:ident {
        $( $(#[$fmeta:meta])* pub $field:ident : $fty:ty = $default:expr ),*
    }] [$($fields:tt)*] [$($defaults:tt)*] [$([$(#[$kattr:meta])* $key:ident])*]) => {
        $(#[$meta])*
        pub struct $name {
            $( $(#[$fmeta])* pub $field: $fty, )*
            $($fields)*
        }
        impl Default for $name {
            fn default() -> Self {
                $name {
                    $( $field: $default, )*
                    $($defaults)*
                }
            }
        }
        impl $name {
            /// Checks every mechanism's section given, in registry order
            /// ([`crate::scenario::SwitchSection::validate_section`]).
            pub(crate) fn validate_sections(
                &self,
                sc: &$crate::scenario::Scenario,
            ) -> Result<(), $crate::scenario::ScenarioError> {
                $( $(#[$kattr])* if let Some(cfg) = &self.$key {
                    $crate::scenario::SwitchSection::validate_section(cfg, sc)?;
                } )*
                Ok(())
            }
            /// The moves of packets between classes the sections given
            /// make, in registry order
            /// ([`crate::scenario::SwitchSection::class_moves`]).
            pub(crate) fn class_moves(&self) -> Vec<(u8, u8, &'static str)> {
                let mut moves = Vec::new();
                $( $(#[$kattr])* if let Some(cfg) = &self.$key {
                    moves.extend($crate::scenario::SwitchSection::class_moves(cfg));
                } )*
                moves
            }
        }
    };
}
pub(crate) use switch_config;

/// A mechanism's `[switch.KEY]` key as text in a registry expansion, or
/// `None` for a mechanism without a key.
macro_rules! key_name {
    () => {
        None
    };
    ($key:ident) => {
        Some(stringify!($key))
    };
}

macro_rules! mechanisms {
    ([] $( $(#[$attr:meta])* $module:ident :: $ty:ident $(= $key:ident $doc:literal)? ),* $(,)?) => {
        $( $(#[$attr])* use $module::$ty; )*

        /// Every registered mechanism, in registry order: its module's name
        /// and its `[switch.KEY]` key (`None`: switched on by something
        /// else, as INT by HPCC). Tests run each of them
        /// (`tests/integration/nic_mechanisms.rs`).
        #[allow(clippy::vec_init_then_push)] // one `push` per entry, each under its `#[cfg]`
        pub fn registered() -> Vec<(&'static str, Option<&'static str>)> {
            let mut all = Vec::new();
            $( $(#[$attr])* all.push((stringify!($module), key_name!($($key)?))); )*
            all
        }

        /// The mechanisms' state, one field per registered mechanism, named
        /// after its module ([`SwitchMechanism::State`]).
        #[derive(Default)]
        #[allow(dead_code)] // a mechanism without state (INT) has a unit field
        pub(crate) struct Mechs {
            $( $(#[$attr])* pub $module: <$ty as SwitchMechanism>::State, )*
        }

        /// Every mechanism's state beside one switch's buffer, one field per
        /// registered mechanism, named after its module
        /// ([`SwitchMechanism::PerSwitch`]; a `()` field takes no room).
        #[derive(Clone, Debug, Default)]
        #[allow(dead_code)] // a mechanism without one has a unit field
        pub struct SwitchStates {
            $( $(#[$attr])* pub(crate) $module: <$ty as SwitchMechanism>::PerSwitch, )*
        }

        /// Of a switch's buffer, the bytes its mechanisms reserve and, of
        /// them, the bytes in use ([`SwitchMechanism::reserved`], summed).
        #[inline(always)]
        pub(crate) fn reserved(states: &SwitchStates) -> (Bytes, Bytes) {
            let (mut total, mut used) = (0, 0);
            $( $(#[$attr])* {
                let (t, u) = <$ty>::reserved(&states.$module);
                total += t;
                used += u;
            } )*
            (total, used)
        }

        /// The key of the first mechanism whose section is given but which
        /// cannot run threaded, and why ([`SwitchMechanism::threads_refusal`]).
        pub(crate) fn threads_refusal(sc: &Scenario) -> Option<(&'static str, &'static str)> {
            $( $(#[$attr])* {
                let given: Option<&<$ty as SwitchMechanism>::Config> = section!(sc; $($key)?);
                let why = given.and_then(<$ty as SwitchMechanism>::threads_refusal);
                if let (Some(key), Some(why)) = (key_name!($($key)?), why) {
                    return Some((key, why));
                }
            } )*
            None
        }

        /// A threaded run's end: each mechanism takes partition state
        /// `from`'s part (its ports: `owned`) into `into`.
        pub(crate) fn merge(into: &mut Mechs, from: &mut Mechs, owned: &dyn Fn(u32) -> bool) {
            $( $(#[$attr])* <$ty>::merge(&mut into.$module, &mut from.$module, owned); )*
        }

        /// Every mechanism's state for this run, in registry order.
        pub(crate) fn build(net: &mut Network) -> Mechs {
            let sc = net.sc;
            $( $(#[$attr])* let $module = <$ty>::build(section!(sc; $($key)?), net); )*
            Mechs { $( $(#[$attr])* $module, )* }
        }

        /// Every mechanism's start, once the world is built.
        pub(crate) fn start(w: &mut World) {
            $( $(#[$attr])* <$ty>::start(w); )*
        }

        /// Ingress hooks: `Dropped` as soon as one drops the packet.
        #[inline(always)]
        pub(crate) fn on_ingress(w: &mut World, now: Ps, hop: &mut Hop) -> Verdict {
            $(
                $(#[$attr])*
                if <$ty>::wants_ingress(w, hop.prio)
                    && <$ty>::on_ingress(w, now, hop) == Verdict::Dropped
                {
                    return Verdict::Dropped;
                }
            )*
            Verdict::Pass
        }
        /// Whether a mechanism picks the queue of packets of `class`.
        #[inline(always)]
        pub(crate) fn classifies(w: &World, class: u8) -> bool {
            $( $(#[$attr])* if <$ty>::wants_classify(w, class) { return true; } )*
            false
        }
        #[inline(always)]
        pub(crate) fn on_classify(w: &mut World, now: Ps, mut hop: Hop) -> Hop {
            $( $(#[$attr])* if <$ty>::wants_classify(w, hop.class) { hop = <$ty>::on_classify(w, now, hop); } )*
            hop
        }
        #[inline(always)]
        pub(crate) fn on_enqueue(w: &mut World, now: Ps, hop: Hop) {
            $( $(#[$attr])* if <$ty>::wants_classify(w, hop.class) { <$ty>::on_enqueue(w, now, hop); } )*
        }
        #[inline(always)]
        pub(crate) fn on_drop(w: &mut World, now: Ps, hop: Hop, cause: DropCause) {
            $( $(#[$attr])* <$ty>::on_drop(w, now, hop, cause); )*
        }
        #[inline(always)]
        pub(crate) fn on_depart(w: &mut World, now: Ps, hop: &Hop, kind: PacketKind) {
            if !w.sw.departs {
                $( $(#[$attr])* debug_assert!(
                    !<$ty>::wants_depart(w, hop, kind),
                    "{} wants a departure but its `departs` is false",
                    stringify!($ty)
                ); )*
                return;
            }
            $( $(#[$attr])* if <$ty>::wants_depart(w, hop, kind) { <$ty>::on_depart(w, now, hop); } )*
        }
        /// The priorities and classes some mechanism's ingress or classify
        /// hook wants ([`crate::net::switch::SwitchParams::hooked`]).
        pub(crate) fn hooked(w: &World) -> u8 {
            let mut mask = 0;
            for c in 0..8u8 {
                $( $(#[$attr])* if <$ty>::wants_ingress(w, c) || <$ty>::wants_classify(w, c) {
                    mask |= 1 << c;
                } )*
            }
            mask
        }
        /// Whether any mechanism's depart hook can run in this run
        /// ([`crate::net::switch::SwitchParams::departs`]).
        pub(crate) fn departs(w: &World) -> bool {
            $( $(#[$attr])* if <$ty>::departs(w) { return true; } )*
            false
        }
        /// Hands a control frame to the mechanism that owns its kind (a
        /// [`PacketKind::Control`] frame: the mechanism it names).
        pub(crate) fn on_frame(w: &mut World, now: Ps, port: u32, pkt: PktId, kind: PacketKind) {
            if kind == PacketKind::Control {
                let id = w.arena.get(pkt).control_mech();
                $( $(#[$attr])* if <$ty>::ID == id { return <$ty>::on_frame(w, now, port, pkt); } )*
                unreachable!("no mechanism {id}")
            }
            $( $(#[$attr])* if <$ty>::owns_frame(kind) { return <$ty>::on_frame(w, now, port, pkt); } )*
            unreachable!("no mechanism owns {kind:?} frames")
        }
        /// A routed notification ([`PacketKind::Notify`]) reached NIC `nic`:
        /// to the mechanism that owns notifications (freed if none does).
        pub(crate) fn on_notify(w: &mut World, now: Ps, nic: u32, pkt: PktId) {
            $( $(#[$attr])* if <$ty>::owns_frame(PacketKind::Notify) { return <$ty>::on_notify(w, now, nic, pkt); } )*
            w.arena.free(pkt);
        }
        /// Dispatches a mechanism timer event.
        pub(crate) fn on_timer(w: &mut World, now: Ps, id: u8, kind: TimerKind, port: u32) {
            $( $(#[$attr])* if <$ty>::ID == id { return <$ty>::on_timer(w, now, port, kind); } )*
            unreachable!("no mechanism {id}")
        }
        /// Every mechanism's summary section.
        pub(crate) fn report(w: &World, flows: &Table, summary: &mut serde_json::Value) {
            $( $(#[$attr])* <$ty>::report(w, flows, summary); )*
        }
        /// The flows table's columns the mechanisms contribute, in registry
        /// order ([`SwitchMechanism::FLOW_COLUMNS`]).
        pub(crate) fn flow_columns() -> Vec<&'static str> {
            let mut names = Vec::new();
            $( $(#[$attr])* names.extend_from_slice(<$ty>::FLOW_COLUMNS); )*
            names
        }
        /// The flow in `slot` starts ([`SwitchMechanism::flow_started`]).
        #[inline(always)]
        pub(crate) fn flow_started(mechs: &mut Mechs, slot: u32) {
            $( $(#[$attr])* <$ty>::flow_started(&mut mechs.$module, slot); )*
        }
        /// Node order: the mechanisms' columns of the records (flows in
        /// `slots`) read again at the run's end, when every partition's
        /// counts are in (a switch may count a flow after its sender
        /// recorded it).
        pub(crate) fn flow_records_at_end(mechs: &Mechs, slots: &[u32], columns: &mut [Vec<u32>]) {
            columns.iter_mut().for_each(Vec::clear);
            for &slot in slots {
                flow_record(mechs, slot, columns);
            }
        }
        /// The record of the flow in `slot` is written: every mechanism
        /// appends its columns' values (`columns`: [`flow_columns`]' columns).
        pub(crate) fn flow_record(mechs: &Mechs, slot: u32, columns: &mut [Vec<u32>]) {
            let mut at = 0;
            $( $(#[$attr])* {
                let n = <$ty>::FLOW_COLUMNS.len();
                <$ty>::flow_values(&mechs.$module, slot, &mut columns[at..at + n]);
                at += n;
            } )*
            debug_assert_eq!(at, columns.len());
        }
    };
}

// The registry (its list: `switch_mechanisms!`).
switch_mechanisms!(mechanisms;);
