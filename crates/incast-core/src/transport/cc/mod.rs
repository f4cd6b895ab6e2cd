//! Window-based congestion control for the TCP-like transport.
//!
//! An algorithm is a type implementing [`CongestionControl`]: a handful of
//! hooks with default behaviour (standard Reno growth, halving on loss), so an
//! algorithm overrides only what it changes. The transport owns the loss
//! machinery (fast retransmit, NewReno recovery, RTO); the algorithm owns the
//! window's growth and its reaction to congestion signals.
//!
//! ## Adding an algorithm
//! 1. Write `transport/cc/myalgo.rs` with `pub struct Params` (serde
//!    `Deserialize` + `JsonSchema`, `deny_unknown_fields`, every field
//!    defaulted) and a type implementing [`CongestionControl`] with
//!    `fn new(p: &Params) -> Self`.
//! 2. Add one line to the `registry!` invocation below.
//!
//! Scenario files then accept `cc = "myalgo"` or
//! `[transport.cc] algorithm = "myalgo"` followed by its parameters.

pub mod dctcp;
pub mod newreno;

use crate::units::Ps;
use serde::{Deserialize, Serialize};

/// The congestion window, in bytes.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub cwnd: u64,
    pub ssthresh: u64,
    pub mss: u64,
    /// Bytes acknowledged since the last congestion-avoidance increment.
    pub ca_acked: u64,
}

impl Window {
    pub fn new(init_segments: u64, mss: u64) -> Window {
        Window {
            cwnd: init_segments * mss,
            ssthresh: u64::MAX,
            mss,
            ca_acked: 0,
        }
    }

    /// Standard growth for `acked` newly acknowledged bytes. Slow start
    /// (RFC 5681 §3.1, with appropriate byte counting L = 2 SMSS, RFC 3465 §2.2):
    /// `cwnd += min(acked, 2 SMSS)`. Congestion avoidance: `cwnd += SMSS` once
    /// per `cwnd` bytes acknowledged (RFC 5681 §3.1, byte-counting form).
    #[inline]
    pub fn reno_increase(&mut self, acked: u64) {
        if self.cwnd < self.ssthresh {
            self.cwnd += acked.min(2 * self.mss);
        } else {
            self.ca_acked += acked;
            if self.ca_acked >= self.cwnd {
                self.ca_acked -= self.cwnd;
                self.cwnd += self.mss;
            }
        }
    }
}

/// What an ACK told the sender.
#[derive(Clone, Copy, Debug)]
pub struct AckEvent {
    pub now: Ps,
    /// Bytes newly acknowledged (0 for a duplicate ACK).
    pub acked: u64,
    /// The ACK carried ECN-Echo.
    pub ece: bool,
    /// Cumulative ACK point after this ACK.
    pub snd_una: u64,
    /// Next byte to be sent.
    pub snd_nxt: u64,
    /// RTT sample from the echoed timestamp, when the ACK acknowledged new data.
    pub rtt: Option<Ps>,
    /// The sender is in fast recovery.
    pub in_recovery: bool,
}

/// Hooks a congestion-control algorithm implements. All have defaults.
pub trait CongestionControl {
    /// Whether data packets are sent ECN-capable (ECT(0)).
    fn ecn_capable(&self) -> bool {
        false
    }
    /// Every ACK, new or duplicate, in any state, before any window change:
    /// ECN accounting. Return `true` to suppress window growth for this ACK.
    fn on_ack_any(&mut self, _w: &mut Window, _ack: &AckEvent) -> bool {
        false
    }
    /// An ACK of new data outside recovery: grow the window.
    fn on_ack(&mut self, w: &mut Window, ack: &AckEvent) {
        w.reno_increase(ack.acked);
    }
    /// Three duplicate ACKs: the new ssthresh (RFC 5681 §3.2 eq. 4:
    /// `max(FlightSize / 2, 2 SMSS)`).
    fn ssthresh_on_loss(&mut self, w: &Window, flight: u64) -> u64 {
        (flight / 2).max(2 * w.mss)
    }
    /// A retransmission timeout, after the transport set ssthresh and cwnd.
    fn on_timeout(&mut self, _w: &mut Window) {}
    /// A scalar state worth tracing (e.g. DCTCP's alpha); `None` if none.
    fn trace_value(&self) -> Option<f64> {
        None
    }
}

macro_rules! registry {
    ($( $variant:ident => $module:ident :: $ty:ident, $name:literal ;)*) => {
        /// Congestion-control choice and parameters, as written in a scenario file.
        #[derive(Clone, Debug, Deserialize, Serialize, schemars::JsonSchema)]
        #[serde(tag = "algorithm", rename_all = "snake_case")]
        pub enum CcConfig {
            $( #[serde(rename = $name)] $variant($module::Params), )*
        }

        /// A running congestion-control instance (static dispatch).
        #[derive(Clone, Debug)]
        pub enum AnyCc {
            $( $variant($module::$ty), )*
        }

        impl CcConfig {
            /// Names of all registered algorithms.
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// The algorithm called `name` with default parameters.
            pub fn by_name(name: &str) -> Option<CcConfig> {
                match name {
                    $( $name => Some(CcConfig::$variant($module::Params::default())), )*
                    _ => None,
                }
            }
            pub fn name(&self) -> &'static str {
                match self { $( CcConfig::$variant(_) => $name, )* }
            }
            pub fn build(&self) -> AnyCc {
                match self { $( CcConfig::$variant(p) => AnyCc::$variant($module::$ty::new(p)), )* }
            }
        }

        impl CongestionControl for AnyCc {
            #[inline]
            fn ecn_capable(&self) -> bool {
                match self { $( AnyCc::$variant(c) => c.ecn_capable(), )* }
            }
            #[inline]
            fn on_ack_any(&mut self, w: &mut Window, a: &AckEvent) -> bool {
                match self { $( AnyCc::$variant(c) => c.on_ack_any(w, a), )* }
            }
            #[inline]
            fn on_ack(&mut self, w: &mut Window, a: &AckEvent) {
                match self { $( AnyCc::$variant(c) => c.on_ack(w, a), )* }
            }
            #[inline]
            fn ssthresh_on_loss(&mut self, w: &Window, flight: u64) -> u64 {
                match self { $( AnyCc::$variant(c) => c.ssthresh_on_loss(w, flight), )* }
            }
            #[inline]
            fn on_timeout(&mut self, w: &mut Window) {
                match self { $( AnyCc::$variant(c) => c.on_timeout(w), )* }
            }
            fn trace_value(&self) -> Option<f64> {
                match self { $( AnyCc::$variant(c) => c.trace_value(), )* }
            }
        }
    };
}

// The registry: one line per algorithm.
registry! {
    NewReno => newreno::NewReno, "newreno";
    Dctcp => dctcp::Dctcp, "dctcp";
}

impl Default for CcConfig {
    fn default() -> Self {
        CcConfig::Dctcp(dctcp::Params::default())
    }
}

impl crate::config_types::Registry for CcConfig {
    const NAMES: &'static [&'static str] = CcConfig::NAMES;
    const WHAT: &'static str = "congestion control";
    fn by_name(name: &str) -> Option<Self> {
        CcConfig::by_name(name)
    }
}

/// Accepts `cc = "<name>"` (defaults) or a table `{ algorithm = "<name>", ... }`.
pub fn deserialize_cc<'de, D: serde::Deserializer<'de>>(d: D) -> Result<CcConfig, D::Error> {
    crate::config_types::deserialize_registered(d)
}
