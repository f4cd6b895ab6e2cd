//! Rate-based congestion control for RDMA (RoCEv2) queue pairs.
//!
//! An RDMA NIC paces each queue pair (QP) at a rate its congestion-control
//! algorithm sets. An algorithm is a type implementing [`RateCc`]: it reads
//! congestion signals (CNPs, ACKs carrying RTT samples, ECN echoes or INT hop
//! records) and keeps a rate in bits per second. The NIC owns everything
//! else: pacing, the optional window (`window = maxBDP x rate / line rate`),
//! go-back-N, CNP generation at the receiver.
//!
//! Timers: an algorithm with timers (DCQCN's alpha, rate-decrease and
//! rate-increase timers) reports its earliest deadline from
//! [`RateCc::next_timer`]; the NIC calls [`RateCc::on_timer`] at that time
//! and asks again after every hook. Stale deadlines cost nothing (the NIC's
//! timer is lazy), so an algorithm simply returns its current earliest one.
//!
//! ## Adding an algorithm
//! 1. Write `rdma/cc/myalgo.rs` with `pub struct Params` (serde
//!    `Deserialize` + `JsonSchema`, `deny_unknown_fields`, every field
//!    defaulted) with `fn validate(&self) -> Result<(), ParamError>`
//!    (scenario validation calls it and reports `rdma.cc.<field>`), and a
//!    type implementing [`RateCc`] with `fn new(p: &Params, ctx: &CcCtx) -> Self`.
//! 2. Add one line to the `registry!` invocation below.
//!
//! Scenario files then accept `[rdma] cc = "myalgo"` or
//! `[rdma.cc] algorithm = "myalgo"` followed by its parameters.

pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
pub mod none;
pub mod timely;

use crate::units::Ps;
use serde::{Deserialize, Serialize};
use std::fmt;

/// A congestion-control parameter out of range: the field (its key in the
/// `[rdma.cc]` table) and what is wrong with it, with the fix.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    pub field: &'static str,
    pub message: String,
}

impl ParamError {
    pub fn new(field: &'static str, message: impl Into<String>) -> Self {
        ParamError {
            field,
            message: message.into(),
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.field, self.message)
    }
}

/// The `min_rate` check every rate-based algorithm shares.
pub(crate) fn check_min_rate(min_rate: &crate::config_types::RateValue) -> Result<(), ParamError> {
    if min_rate.rate().bits_per_sec() == 0 {
        return Err(ParamError::new(
            "min_rate",
            "must be positive, e.g. \"1000Mbps\" (HPCC simulator MIN_RATE)",
        ));
    }
    Ok(())
}

/// Most hops an INT stack records (HPCC simulator: 5).
pub const MAX_INT_HOPS: usize = 5;

/// One switch hop's in-band telemetry, written when a data packet leaves
/// the egress port (HPCC, Li et al. SIGCOMM 2019, §3.2; HPCC simulator
/// `switch-node.cc`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IntHop {
    /// Dequeue time.
    pub ts: Ps,
    /// Cumulative bytes transmitted by the egress port.
    pub tx_bytes: u64,
    /// Egress queue length in bytes (all classes of the port, as the HPCC simulator does).
    pub qlen: u64,
    /// Egress link rate, bits per second.
    pub rate_bps: u64,
}

/// The INT records a packet has collected, in path order.
///
/// Aligned to a cache line so that the count and the first record share
/// one; copies go through [`IntStack::copy_from`], which reads the third
/// line only when the stack holds more than three records.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub struct IntStack {
    pub n: u8,
    pub hops: [IntHop; MAX_INT_HOPS],
}

impl IntStack {
    /// Makes this stack hold `from`'s records. Only `from.n` records are
    /// read and written; the rest of this stack is left as it was, and
    /// nothing reads past `n` ([`IntStack::hops`]).
    #[inline]
    pub fn copy_from(&mut self, from: &IntStack) {
        // Two copies of fixed size, inlined as vector moves (LLVM makes a
        // copy of run-time length, or of all five records, a call to
        // `memcpy`, several times the instructions): the first three
        // records, which share the stack's first two cache lines with the
        // count, and the last two only when they are held.
        const HEAD: usize = 3;
        self.hops[..HEAD].copy_from_slice(&from.hops[..HEAD]);
        if from.n as usize > HEAD {
            self.hops[HEAD..].copy_from_slice(&from.hops[HEAD..]);
        }
        self.n = from.n;
    }
    #[inline]
    pub fn push(&mut self, h: IntHop) {
        if (self.n as usize) < MAX_INT_HOPS {
            self.hops[self.n as usize] = h;
            self.n += 1;
        }
    }
    #[inline]
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }
}

/// What an algorithm knows about its QP's path, fixed at QP creation.
#[derive(Clone, Copy, Debug)]
pub struct CcCtx {
    /// The NIC's line rate, bits per second.
    pub line_rate: f64,
    /// Base RTT `T` (HPCC simulator `GLOBAL_T 1`: the largest over all host pairs).
    pub base_rtt: Ps,
    /// Payload bytes per full packet.
    pub mtu: u64,
    /// Bandwidth-delay product `line_rate x base_rtt` in bytes.
    pub bdp: u64,
}

/// An acknowledgement as the sender's congestion control sees it.
#[derive(Clone, Copy, Debug)]
pub struct RdmaAck<'a> {
    pub now: Ps,
    /// Cumulative bytes acknowledged after this ACK.
    pub acked_to: u64,
    /// Bytes newly acknowledged by this ACK.
    pub newly_acked: u64,
    /// The sender's next byte to send when the ACK arrives.
    pub snd_nxt: u64,
    /// RTT sample: now minus the echoed transmit time of the data packet.
    pub rtt: Ps,
    /// The acknowledged data packet was CE-marked (ECN echo; HPCC simulator's
    /// per-ACK CNP flag, and rate-based DCTCP).
    pub ece: bool,
    /// The INT records echoed from the data packet (empty unless `needs_int`).
    pub int: &'a [IntHop],
}

/// Hooks of a rate-based congestion-control algorithm. All but `rate` have defaults.
pub trait RateCc {
    /// The current sending rate, bits per second.
    fn rate(&self) -> f64;
    /// Whether switches must append INT records to this QP's data packets.
    fn needs_int(&self) -> bool {
        false
    }
    /// Whether data packets are sent ECN-capable.
    fn ecn_capable(&self) -> bool {
        true
    }
    /// An ACK arrived (every ACK, including those that acknowledge nothing new).
    fn on_ack(&mut self, _ctx: &CcCtx, _ack: &RdmaAck) {}
    /// A congestion notification packet (CNP) arrived for this QP.
    fn on_cnp(&mut self, _ctx: &CcCtx, _now: Ps) {}
    /// `bytes` of data were just sent (DCQCN's byte counter).
    fn on_sent(&mut self, _ctx: &CcCtx, _now: Ps, _bytes: u64) {}
    /// The earliest pending timer deadline, if any.
    fn next_timer(&self) -> Option<Ps> {
        None
    }
    /// Called at (or after) `next_timer()`: run every timer due at `now`.
    fn on_timer(&mut self, _ctx: &CcCtx, _now: Ps) {}
    /// A scalar worth tracing (DCQCN alpha, HPCC U); `None` if none.
    fn trace_value(&self) -> Option<f64> {
        None
    }
}

macro_rules! registry {
    ($( $variant:ident => $module:ident :: $ty:ident, $name:literal ;)*) => {
        /// RDMA congestion-control choice and parameters, as written in a scenario file.
        #[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
        #[serde(tag = "algorithm", rename_all = "snake_case")]
        pub enum RateCcConfig {
            $( #[serde(rename = $name)] $variant($module::Params), )*
        }

        /// A running instance (static dispatch).
        #[derive(Clone, Debug)]
        pub enum AnyRateCc {
            $( $variant($module::$ty), )*
        }

        impl RateCcConfig {
            /// Names of all registered algorithms.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The algorithm called `name` with its default parameters.
            pub fn by_name(name: &str) -> Option<RateCcConfig> {
                match name {
                    $( $name => Some(RateCcConfig::$variant($module::Params::default())), )*
                    _ => None,
                }
            }
            pub fn name(&self) -> &'static str {
                match self { $( RateCcConfig::$variant(_) => $name, )* }
            }
            pub fn build(&self, ctx: &CcCtx) -> AnyRateCc {
                match self { $( RateCcConfig::$variant(p) => AnyRateCc::$variant($module::$ty::new(p, ctx)), )* }
            }
            /// Checks the parameters' ranges (each algorithm's `Params::validate`);
            /// scenario validation reports an error at `rdma.cc.<field>`.
            pub fn validate(&self) -> Result<(), ParamError> {
                match self { $( RateCcConfig::$variant(p) => p.validate(), )* }
            }
        }

        impl RateCc for AnyRateCc {
            #[inline]
            fn rate(&self) -> f64 {
                match self { $( AnyRateCc::$variant(c) => c.rate(), )* }
            }
            #[inline]
            fn needs_int(&self) -> bool {
                match self { $( AnyRateCc::$variant(c) => c.needs_int(), )* }
            }
            #[inline]
            fn ecn_capable(&self) -> bool {
                match self { $( AnyRateCc::$variant(c) => c.ecn_capable(), )* }
            }
            #[inline]
            fn on_ack(&mut self, ctx: &CcCtx, ack: &RdmaAck) {
                match self { $( AnyRateCc::$variant(c) => c.on_ack(ctx, ack), )* }
            }
            #[inline]
            fn on_cnp(&mut self, ctx: &CcCtx, now: Ps) {
                match self { $( AnyRateCc::$variant(c) => c.on_cnp(ctx, now), )* }
            }
            #[inline]
            fn on_sent(&mut self, ctx: &CcCtx, now: Ps, bytes: u64) {
                match self { $( AnyRateCc::$variant(c) => c.on_sent(ctx, now, bytes), )* }
            }
            #[inline]
            fn next_timer(&self) -> Option<Ps> {
                match self { $( AnyRateCc::$variant(c) => c.next_timer(), )* }
            }
            #[inline]
            fn on_timer(&mut self, ctx: &CcCtx, now: Ps) {
                match self { $( AnyRateCc::$variant(c) => c.on_timer(ctx, now), )* }
            }
            fn trace_value(&self) -> Option<f64> {
                match self { $( AnyRateCc::$variant(c) => c.trace_value(), )* }
            }
        }
    };
}

// The registry: one line per algorithm.
registry! {
    Dcqcn => dcqcn::Dcqcn, "dcqcn";
    Timely => timely::Timely, "timely";
    Hpcc => hpcc::Hpcc, "hpcc";
    Dctcp => dctcp::RateDctcp, "dctcp";
    None => none::LineRate, "none";
}

impl Default for RateCcConfig {
    fn default() -> Self {
        RateCcConfig::Dcqcn(dcqcn::Params::default())
    }
}

impl crate::config_types::Registry for RateCcConfig {
    const NAMES: &'static [&'static str] = RateCcConfig::NAMES;
    const WHAT: &'static str = "RDMA congestion control";
    fn by_name(name: &str) -> Option<Self> {
        RateCcConfig::by_name(name)
    }
}

/// Accepts `cc = "<name>"` (defaults) or a table `{ algorithm = "<name>", ... }`.
pub fn deserialize_rate_cc<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<RateCcConfig, D::Error> {
    crate::config_types::deserialize_registered(d)
}
