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
//!
//! ## Model-based algorithms (BBR)
//! Three more hooks, all off by default so that window-based algorithms cost
//! nothing: [`CongestionControl::wants_rate_samples`] makes the transport keep
//! per-segment delivery state and take a delivery-rate sample
//! ([`RateSample`], draft-cheng-iccrg-delivery-rate-estimation) on every ACK
//! of new data; [`CongestionControl::pacing_rate`] makes the transport space
//! its segments ([`super::TcpFlow::send_state`]); and
//! [`CongestionControl::after_ack`] runs after the transport's own recovery
//! bookkeeping on every ACK, with the ACK's rate sample, so an algorithm that
//! owns its window in every state sets it there.

pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod eqds;
pub mod ndp;
pub mod newreno;
pub mod strack;
pub mod swift;
pub mod windowed_max;

pub use crate::rdma::cc::ParamError;
pub use crate::transport::rate_sample::RateSample;
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
    /// Smoothed RTT (RFC 6298) after this ACK's sample; 0 before the first sample.
    pub srtt: Ps,
    /// Now minus the timestamp the ACK echoes, on every ACK (duplicates
    /// included: the receiver echoes the segment that triggered it). Swift's
    /// delay sample.
    pub delay: Ps,
}

impl AckEvent {
    /// Bytes in flight before this ACK (the draft BBR's `prior_inflight`).
    #[inline]
    pub fn prior_flight(&self) -> u64 {
        self.snd_nxt - (self.snd_una - self.acked)
    }
    /// Bytes in flight after this ACK.
    #[inline]
    pub fn flight(&self) -> u64 {
        self.snd_nxt - self.snd_una
    }
}

/// What the transport knew when its retransmission timer expired.
#[derive(Clone, Copy, Debug)]
pub struct TimeoutEvent {
    /// When the timer expired.
    pub now: Ps,
    /// Bytes in flight when the timer expired (RFC 5681 FlightSize).
    pub flight: u64,
    /// The congestion window just before the transport collapsed it to 1 SMSS.
    pub prior_cwnd: u64,
    /// Highest sequence number sent so far (the end of the data to repair).
    pub high_tx: u64,
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
    /// A retransmission timeout, after the transport set ssthresh
    /// (`max(FlightSize/2, 2 SMSS)`) and cwnd (1 SMSS).
    fn on_timeout(&mut self, _w: &mut Window, _t: &TimeoutEvent) {}
    /// Whether the algorithm needs its flow's path length
    /// ([`CongestionControl::set_path_links`], Swift's hop scaling).
    fn wants_path(&self) -> bool {
        false
    }
    /// Called once when the flow starts, before [`CongestionControl::init`],
    /// when [`CongestionControl::wants_path`]: the number of links on the
    /// flow's forward path.
    fn set_path_links(&mut self, _links: u32) {}
    /// A scalar state worth tracing (e.g. DCTCP's alpha); `None` if none.
    fn trace_value(&self) -> Option<f64> {
        None
    }
    /// Called once when the flow is created, with its initial window.
    fn init(&mut self, _w: &Window) {}
    /// Every ACK, new or duplicate, in any state, after the transport's own
    /// window changes (fast-recovery entry, inflation, deflation, exit) and
    /// [`CongestionControl::on_ack`]. `rate` is the ACK's delivery-rate
    /// sample when the algorithm asked for them (`None` for a duplicate ACK);
    /// `in_recovery` is the sender's state after this ACK. Model-based
    /// algorithms set the window here.
    fn after_ack(
        &mut self,
        _w: &mut Window,
        _ack: &AckEvent,
        _rate: Option<&RateSample>,
        _in_recovery: bool,
    ) {
    }
    /// Whether the transport should keep per-segment delivery state and
    /// take a [`RateSample`] on each ACK of new data.
    fn wants_rate_samples(&self) -> bool {
        false
    }
    /// Pacing rate in payload bytes per second; `None` sends as fast as the
    /// window allows.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
    /// Whether the pacer follows the window, as htsim's `STrackPacer` and
    /// `SwiftPacer` do, on every ACK: one that takes the window below one
    /// packet ([`CongestionControl::pacing_rate`] set) with no paced send
    /// pending sets the next send time one gap after the last segment sent,
    /// at that ACK's rate; one that brings it back to one packet or more
    /// (`pacing_rate` `None`) cancels the pending paced send, and the flow
    /// sends by its window at once. `false` (BBR): the gap starts at the
    /// first paced segment, and a send time set while pacing is kept.
    fn pacer_follows_window(&self) -> bool {
        false
    }
    /// Whether an ACK that acknowledges nothing new while nothing is in flight
    /// still reaches the algorithm ([`CongestionControl::on_ack_any`], then
    /// [`CongestionControl::after_ack`]): htsim's `STrackSrc::receivePacket`
    /// adjusts its window on every ACK not below the last one. It is not a
    /// duplicate ACK (RFC 5681 §2 needs outstanding data) and counts for no
    /// fast retransmit. `false`: such an ACK is dropped unseen (under SACK
    /// recovery its blocks still update the scoreboard).
    fn sees_acks_with_nothing_in_flight(&self) -> bool {
        false
    }
    /// Asked after every ACK when rate samples are on: whether the segments
    /// sent from now on are to be marked application-limited (BBR's ProbeRTT,
    /// draft-cardwell-iccrg-bbr-congestion-control-00 §4.3.5).
    fn mark_app_limited(&self) -> bool {
        false
    }
    /// Called for every segment sent when rate samples are on, before it
    /// leaves: `flight` bytes were in flight, and the sender was
    /// application-limited (BBR's restart from idle, §4.3.4.4).
    fn on_transmit(&mut self, _now: Ps, _flight: u64, _app_limited: bool) {}
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
            /// The algorithm's own parameter ranges (`Params::validate` of each
            /// file); the error names the field of the `[transport.cc]` table.
            pub fn validate(&self) -> Result<(), ParamError> {
                match self { $( CcConfig::$variant(p) => p.validate(), )* }
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
            fn on_timeout(&mut self, w: &mut Window, t: &TimeoutEvent) {
                match self { $( AnyCc::$variant(c) => c.on_timeout(w, t), )* }
            }
            #[inline]
            fn wants_path(&self) -> bool {
                match self { $( AnyCc::$variant(c) => c.wants_path(), )* }
            }
            fn set_path_links(&mut self, links: u32) {
                match self { $( AnyCc::$variant(c) => c.set_path_links(links), )* }
            }
            fn trace_value(&self) -> Option<f64> {
                match self { $( AnyCc::$variant(c) => c.trace_value(), )* }
            }
            #[inline]
            fn init(&mut self, w: &Window) {
                match self { $( AnyCc::$variant(c) => c.init(w), )* }
            }
            #[inline]
            fn after_ack(&mut self, w: &mut Window, a: &AckEvent, r: Option<&RateSample>, in_recovery: bool) {
                match self { $( AnyCc::$variant(c) => c.after_ack(w, a, r, in_recovery), )* }
            }
            #[inline]
            fn wants_rate_samples(&self) -> bool {
                match self { $( AnyCc::$variant(c) => c.wants_rate_samples(), )* }
            }
            #[inline]
            fn pacing_rate(&self) -> Option<f64> {
                match self { $( AnyCc::$variant(c) => c.pacing_rate(), )* }
            }
            #[inline]
            fn pacer_follows_window(&self) -> bool {
                match self { $( AnyCc::$variant(c) => c.pacer_follows_window(), )* }
            }
            #[inline]
            fn sees_acks_with_nothing_in_flight(&self) -> bool {
                match self { $( AnyCc::$variant(c) => c.sees_acks_with_nothing_in_flight(), )* }
            }
            #[inline]
            fn mark_app_limited(&self) -> bool {
                match self { $( AnyCc::$variant(c) => c.mark_app_limited(), )* }
            }
            #[inline]
            fn on_transmit(&mut self, now: Ps, flight: u64, app_limited: bool) {
                match self { $( AnyCc::$variant(c) => c.on_transmit(now, flight, app_limited), )* }
            }
        }
    };
}

// The registry: one line per algorithm.
registry! {
    NewReno => newreno::NewReno, "newreno";
    Dctcp => dctcp::Dctcp, "dctcp";
    Cubic => cubic::Cubic, "cubic";
    Bbr => bbr::Bbr, "bbr";
    Swift => swift::Swift, "swift";
    Ndp => ndp::Ndp, "ndp";
    Strack => strack::Strack, "strack";
    Eqds => eqds::Eqds, "eqds";
}

impl CcConfig {
    /// The name of a receiver-driven transport of its own (NDP, EQDS),
    /// which numbers its packets and so needs a flow size; `None` for TCP.
    pub fn pull_transport(&self) -> Option<&'static str> {
        match self {
            CcConfig::Ndp(_) => Some("NDP"),
            CcConfig::Eqds(_) => Some("EQDS"),
            _ => None,
        }
    }
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

/// [`deserialize_cc`] for an optional key (a workload group's own `cc`).
pub fn deserialize_cc_opt<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<CcConfig>, D::Error> {
    deserialize_cc(d).map(Some)
}
