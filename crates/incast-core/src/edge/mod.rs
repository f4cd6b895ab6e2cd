//! Edge pausing: Smart-Pause and On-Ramp, below any congestion control.
//!
//! Smart-Pause (Liu, Prabhakar, Rosenblum, 2019 talk) and On-Ramp (Liu et al.,
//! NSDI 2021) move pause from the switches to the sending edge. The sender
//! learns each acknowledged packet's **one-way delay** (OWD) and, when it
//! exceeds a threshold `T`, holds that flow's next packets back for a while.
//! The congestion control (CC) keeps running unchanged: its timers fire, its
//! rate or window evolves from the ACKs it sees, and the packets it would
//! have sent during a hold simply leave when the hold ends, at its pace.
//!
//! ## How a reading travels
//! 1. A data packet leaves the sender at true time `s` (the NIC's transmit
//!    start); the sender's clock reads `C_src(s)`.
//! 2. It arrives at true time `r`; the receiver's clock reads `C_dst(r)` and
//!    the receiver puts `OWD = C_dst(r) - C_src(s)` in the ACK (in the packet's
//!    `owd` field, picoseconds, saturated at +-2.147 ms).
//! 3. When the ACK arrives, the sender gives the reading to the flow's
//!    [`EdgeGate`], whose [`PauseRule`] may close the gate until some time.
//!
//! With perfect clocks (the default) `OWD = r - s` exactly: on an idle path it
//! is the sum over hops of propagation delay plus serialization of that
//! packet. [`clock`] adds per-host offset and drift and per-reading noise.
//!
//! ## The gate
//! The gate sits between the CC and the NIC: while it is closed the NIC does
//! not take the flow's next segment (RDMA: the QP is skipped and the NIC
//! wakes at the reopening; TCP: the flow leaves the NIC's ready list and a
//! timer puts it back). It never reorders a flow's packets (it holds the whole
//! flow), never recalls packets already handed to the NIC, and never calls
//! into the CC. Pause decisions are per packet (per ACK), not per RTT.
//!
//! ## Rules
//! Selected by name with defaults (`rule = "on_ramp"`) or as a table
//! (`[edge.rule] algorithm = "smart_pause_fixed"`, `pause = "20us"`):
//!
//! | rule | on an ACK with OWD > T | source |
//! |---|---|---|
//! | `none` | nothing (OWD is measured and sampled) | baseline |
//! | `smart_pause_fixed` | hold for `pause` (P) from now | Smart-Pause talk, slide "The Smart-Pause Rule" |
//! | `smart_pause_dynamic` | hold for OWD - T from now; T by switch hops | same slide, "Dynamic P" |
//! | `on_ramp_strawman` | hold until now + OWD - T | On-Ramp talk, slide 9 |
//! | `on_ramp` | strawman minus the pause already spent since the packet was sent, optionally scaled for concurrency | On-Ramp talk, slide 10; see [`on_ramp`] |
//!
//! ## Adding a rule
//! Write `edge/myrule.rs` with a parameter struct (serde, `deny_unknown_fields`,
//! defaults; `fn validate`, `fn threshold`) and a type implementing
//! [`PauseRule`] with `fn new(p: &Params) -> Self`, then add one line to the
//! `registry!` below: `MyRule => myrule::MyRule, myrule::Params, "my_rule";`.
//!
//! ```
//! use incast_core::edge::{EdgeGate, OwdSample, RuleConfig};
//! use incast_core::units::US;
//! // Smart-Pause fixed: T = 50 us, P = 20 us.
//! let rule = RuleConfig::by_name("smart_pause_fixed").unwrap();
//! let mut gate = EdgeGate::new(rule.build(), 50 * US);
//! // An ACK at t = 100 us reports OWD = 60 us: the next packet waits 20 us.
//! gate.on_owd(OwdSample { now: 100 * US, owd: 60 * US as i64, sent_at: 40 * US });
//! assert!(!gate.is_open(119 * US));
//! assert!(gate.is_open(120 * US));
//! assert_eq!(gate.pauses, 1);
//! ```

pub mod clock;
pub mod drop_curve;
pub mod none;
pub mod on_ramp;
pub mod smart_pause;

use crate::config_types::HostRef;
use crate::config_types::TimeValue;
use crate::engine::LazyTimer;
use crate::rdma::cc::ParamError;
use crate::units::{Ps, US};
use schemars::JsonSchema;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::fmt;

pub use clock::{ClockConfig, Clocks};
pub use drop_curve::{DropCurve, DropCurveConfig};

/// One OWD reading, as the sender sees it when the ACK arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OwdSample {
    /// When the ACK reached the sender.
    pub now: Ps,
    /// The acknowledged packet's one-way delay as the two hosts' clocks read
    /// it, in picoseconds (negative readings happen with clock error).
    pub owd: i64,
    /// When the acknowledged packet left the sender (its own record).
    pub sent_at: Ps,
}

/// What the gate tells a rule along with a reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GateView {
    /// The flow's threshold `T`.
    pub threshold: Ps,
    /// The gate is closed until this time (in the past when open).
    pub hold_until: Ps,
    /// Pause time the flow spent between the acknowledged packet's departure
    /// and now: the overlap of its holds with `[sent_at, now)`.
    pub paused_since_sent: Ps,
}

/// A pause rule: one OWD reading in, optionally a time to hold the flow until.
pub trait PauseRule {
    /// Returns the time until which the flow's next packets must wait. Only a
    /// time later than both `now` and the current hold changes anything.
    fn on_owd(&mut self, s: &OwdSample, g: &GateView) -> Option<Ps>;
}

/// The threshold `T` of a rule: one value for every path, the path's base OWD
/// plus a margin, or a table by the number of switches on the path.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Threshold {
    /// `threshold = "50us"`.
    Fixed(TimeValue),
    /// `threshold = { base_plus = "10us" }`: the flow's base OWD (a full-size
    /// data packet on its ECMP path, idle network) plus the margin.
    BasePlus { base_plus: TimeValue },
    /// `threshold = { by_switch_hops = { 1 = "12us", 3 = "14us", 5 = "16us" } }`.
    /// A path whose switch count is not listed uses the nearest listed count
    /// (the larger one on a tie); the run's summary lists such counts.
    BySwitchHops {
        by_switch_hops: BTreeMap<String, TimeValue>,
    },
}

/// The path facts a threshold is resolved from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PathInfo {
    /// One-way delay of a full-size data packet on the idle path.
    pub base_owd: Ps,
    /// Switches on the path.
    pub switch_hops: u32,
}

impl Threshold {
    /// Smart-Pause's dynamic-pause thresholds: 12, 14 and 16 us for 1-, 3- and
    /// 5-hop paths (talk slide "The Smart-Pause Rule"; "hops" read as switches).
    pub fn smart_pause_hops() -> Threshold {
        Threshold::BySwitchHops {
            by_switch_hops: [("1", 12), ("3", 14), ("5", 16)]
                .into_iter()
                .map(|(k, v)| (k.to_string(), TimeValue(v * US)))
                .collect(),
        }
    }

    /// `T` for a path; `exact` is false when a switch-hop table had no entry for it.
    pub fn resolve(&self, path: &PathInfo) -> (Ps, bool) {
        match self {
            Threshold::Fixed(t) => (t.ps(), true),
            Threshold::BasePlus { base_plus } => (path.base_owd + base_plus.ps(), true),
            Threshold::BySwitchHops { by_switch_hops } => {
                let mut best: Option<(u32, Ps)> = None;
                for (k, v) in by_switch_hops {
                    let hops: u32 = k.parse().expect("validated");
                    let d = hops.abs_diff(path.switch_hops);
                    let better = match best {
                        None => true,
                        Some((b, _)) => {
                            let bd = b.abs_diff(path.switch_hops);
                            d < bd || (d == bd && hops > b)
                        }
                    };
                    if better {
                        best = Some((hops, v.ps()));
                    }
                }
                let (hops, t) = best.expect("validated: not empty");
                (t, hops == path.switch_hops)
            }
        }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        match self {
            Threshold::Fixed(t) if t.ps() == 0 => Err(ParamError::new(
                "threshold",
                "must be positive, e.g. \"50us\" (Smart-Pause fixed)",
            )),
            Threshold::BySwitchHops { by_switch_hops } => {
                if by_switch_hops.is_empty() {
                    return Err(ParamError::new(
                        "threshold",
                        "`by_switch_hops` is empty; list at least one hop count, e.g. { 1 = \"12us\", 3 = \"14us\", 5 = \"16us\" }",
                    ));
                }
                for (k, v) in by_switch_hops {
                    if k.parse::<u32>().map_or(true, |h| h == 0) {
                        return Err(ParamError::new(
                            "threshold",
                            format!("`by_switch_hops` key `{k}` is not a switch count; use 1, 2, 3, ..."),
                        ));
                    }
                    if v.ps() == 0 {
                        return Err(ParamError::new(
                            "threshold",
                            format!("`by_switch_hops.{k}` must be positive, e.g. \"12us\""),
                        ));
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

impl<'de> Deserialize<'de> for Threshold {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Table {
            base_plus: Option<TimeValue>,
            by_switch_hops: Option<BTreeMap<String, TimeValue>>,
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Threshold;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "a time (\"50us\"), { base_plus = \"10us\" } or { by_switch_hops = { 1 = \"12us\", 3 = \"14us\" } }",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Threshold, E> {
                crate::units::parse_time(v)
                    .map(|t| Threshold::Fixed(TimeValue(t)))
                    .map_err(E::custom)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Threshold, A::Error> {
                let t = Table::deserialize(de::value::MapAccessDeserializer::new(map))?;
                match (t.base_plus, t.by_switch_hops) {
                    (Some(m), None) => Ok(Threshold::BasePlus { base_plus: m }),
                    (None, Some(h)) => Ok(Threshold::BySwitchHops { by_switch_hops: h }),
                    _ => Err(de::Error::custom(
                        "give exactly one of `base_plus` and `by_switch_hops`",
                    )),
                }
            }
        }
        d.deserialize_any(V)
    }
}

macro_rules! registry {
    ($( $variant:ident => $ty:ty, $params:ty, $name:literal ;)*) => {
        /// Pause-rule choice and parameters, as written in a scenario file.
        #[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
        #[serde(tag = "algorithm", rename_all = "snake_case")]
        pub enum RuleConfig {
            $( #[serde(rename = $name)] $variant($params), )*
        }

        /// A running rule (static dispatch).
        #[derive(Clone, Debug)]
        pub enum AnyRule {
            $( $variant($ty), )*
        }

        impl RuleConfig {
            /// Names of all registered rules.
            pub const NAMES: &'static [&'static str] = &[$($name),*];
            /// The rule called `name` with its default parameters.
            pub fn by_name(name: &str) -> Option<RuleConfig> {
                match name {
                    $( $name => Some(RuleConfig::$variant(<$params>::default())), )*
                    _ => None,
                }
            }
            pub fn name(&self) -> &'static str {
                match self { $( RuleConfig::$variant(_) => $name, )* }
            }
            pub fn build(&self) -> AnyRule {
                match self { $( RuleConfig::$variant(p) => AnyRule::$variant(<$ty>::new(p)), )* }
            }
            /// The rule's threshold (`None`: the rule never pauses).
            pub fn threshold(&self) -> Option<&Threshold> {
                match self { $( RuleConfig::$variant(p) => p.threshold(), )* }
            }
            /// Checks the parameters; scenario validation reports `edge.rule.<field>`.
            pub fn validate(&self) -> Result<(), ParamError> {
                match self { $( RuleConfig::$variant(p) => p.validate(), )* }
            }
        }

        impl PauseRule for AnyRule {
            fn on_owd(&mut self, sample: &OwdSample, gate: &GateView) -> Option<Ps> {
                match self { $( AnyRule::$variant(r) => r.on_owd(sample, gate), )* }
            }
        }
    };
}

// The registry: one line per rule.
registry! {
    None => none::Never, none::Params, "none";
    SmartPauseFixed => smart_pause::Fixed, smart_pause::Params, "smart_pause_fixed";
    SmartPauseDynamic => smart_pause::Dynamic, smart_pause::DynamicParams, "smart_pause_dynamic";
    OnRampStrawman => on_ramp::Strawman, on_ramp::StrawmanParams, "on_ramp_strawman";
    OnRamp => on_ramp::OnRamp, on_ramp::Params, "on_ramp";
}

impl crate::config_types::Registry for RuleConfig {
    const NAMES: &'static [&'static str] = RuleConfig::NAMES;
    const WHAT: &'static str = "edge pause rule";
    fn by_name(name: &str) -> Option<Self> {
        RuleConfig::by_name(name)
    }
}

fn deserialize_rule<'de, D: Deserializer<'de>>(d: D) -> Result<RuleConfig, D::Error> {
    crate::config_types::deserialize_registered(d)
}

fn default_sample_every() -> u32 {
    64
}

/// `[edge]` in a scenario file.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EdgeConfig {
    /// The pause rule: a name (`"on_ramp"`, `"smart_pause_fixed"`, ...) or a
    /// table `{ algorithm = "...", ... }` with its parameters.
    #[serde(deserialize_with = "deserialize_rule")]
    #[schemars(with = "serde_json::Value")]
    pub rule: RuleConfig,
    /// Host clocks: `"perfect"` (default), `"huygens"`, `"ntp"`, or a table
    /// `{ offset = "20ns", drift_ppm = 0.0, noise = "10ns" }`.
    #[serde(default)]
    #[schemars(with = "serde_json::Value")]
    pub clock: ClockConfig,
    /// Keep every n-th OWD reading (all senders together; in node order,
    /// `[timing] ties = "node"`, each sender's) in the `owd` table; 0 keeps none.
    #[serde(default = "default_sample_every")]
    pub owd_sample_every: u32,
    /// Measure the OWD-versus-drop-probability curve ([`drop_curve`]):
    /// `{ bin = "1us", max = "100us" }`; off by default.
    #[serde(default)]
    pub drop_curve: Option<DropCurveConfig>,
    /// Senders whose flows run the gate (default: every host). Others still
    /// measure OWD. For co-existence experiments.
    #[serde(default)]
    pub hosts: Option<Vec<HostRef>>,
}

/// Largest OWD an ACK carries (`i32` picoseconds): 2.147 ms.
pub const OWD_WIRE_MAX: i64 = i32::MAX as i64;

/// The OWD as carried in an ACK: picoseconds, saturated to `i32`.
#[inline]
pub fn owd_to_wire(owd: i64) -> (i32, bool) {
    let c = owd.clamp(-OWD_WIRE_MAX, OWD_WIRE_MAX);
    (c as i32, c != owd)
}

/// One flow's gate: its rule, threshold, hold and pause accounting.
#[derive(Clone, Debug)]
pub struct EdgeGate {
    rule: AnyRule,
    /// The flow's threshold `T`.
    pub threshold: Ps,
    /// Closed until this time.
    pub hold_until: Ps,
    /// Holds `[start, end)`, oldest first; the last may end in the future.
    holds: VecDeque<(Ps, Ps)>,
    /// Total length of holds already dropped from `holds`.
    pruned_ps: Ps,
    /// Rule decisions that closed or extended the gate.
    pub pauses: u32,
    /// Reopens a TCP flow (RDMA uses the NIC's wake-up).
    pub timer: LazyTimer,
    /// The flow's last OWD reading (none before its first ACK).
    pub last_owd: Option<i64>,
    /// Switches on the flow's path.
    pub switch_hops: u32,
}

/// Holds kept for the feedback-delay correction; older ones are folded into a sum.
const MAX_HOLDS: usize = 64;

impl EdgeGate {
    pub fn new(rule: AnyRule, threshold: Ps) -> EdgeGate {
        EdgeGate {
            rule,
            threshold,
            hold_until: 0,
            holds: VecDeque::new(),
            pruned_ps: 0,
            pauses: 0,
            timer: LazyTimer::default(),
            last_owd: None,
            switch_hops: 0,
        }
    }

    pub fn rule(&self) -> &AnyRule {
        &self.rule
    }

    #[inline]
    pub fn is_open(&self, now: Ps) -> bool {
        now >= self.hold_until
    }

    /// Pause time spent or committed since `t`: the overlap of the holds with `[t, inf)`.
    pub fn committed_since(&self, t: Ps) -> Ps {
        self.holds
            .iter()
            .rev()
            .take_while(|&&(_, e)| e > t)
            .map(|&(s, e)| e - s.max(t))
            .sum()
    }

    /// Pause time spent in `[t, now)`.
    pub fn elapsed_since(&self, t: Ps, now: Ps) -> Ps {
        self.holds
            .iter()
            .rev()
            .take_while(|&&(_, e)| e > t)
            .map(|&(s, e)| e.min(now).saturating_sub(s.max(t)))
            .sum()
    }

    /// Total time the gate was closed up to `end`.
    pub fn paused_until(&self, end: Ps) -> Ps {
        self.pruned_ps
            + self
                .holds
                .iter()
                .filter(|&&(s, _)| s < end)
                .map(|&(s, e)| e.min(end) - s)
                .sum::<Ps>()
    }

    /// Feeds one reading to the rule; returns whether the gate closed or its hold grew.
    pub fn on_owd(&mut self, sample: OwdSample) -> bool {
        self.last_owd = Some(sample.owd);
        // Holds that ended before the acknowledged packet left can no longer
        // matter: later ACKs are for packets sent later still.
        while self.holds.len() > MAX_HOLDS
            || self
                .holds
                .front()
                .is_some_and(|&(_, e)| e <= sample.sent_at)
        {
            let (a, b) = self.holds.pop_front().expect("non-empty");
            self.pruned_ps += b - a;
        }
        let view = GateView {
            threshold: self.threshold,
            hold_until: self.hold_until,
            paused_since_sent: self.elapsed_since(sample.sent_at, sample.now),
        };
        let Some(until) = self.rule.on_owd(&sample, &view) else {
            return false;
        };
        if until <= sample.now.max(self.hold_until) {
            return false;
        }
        match self.holds.back_mut() {
            Some(last) if self.hold_until > sample.now => last.1 = until,
            _ => self.holds.push_back((sample.now, until)),
        }
        self.hold_until = until;
        self.pauses += 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(now_us: u64, owd_us: u64, sent_us: u64) -> OwdSample {
        OwdSample {
            now: now_us * US,
            owd: (owd_us * US) as i64,
            sent_at: sent_us * US,
        }
    }

    #[test]
    fn thresholds_resolve_per_path() {
        let p = PathInfo {
            base_owd: 4 * US,
            switch_hops: 3,
        };
        assert_eq!(
            Threshold::Fixed(TimeValue(50 * US)).resolve(&p),
            (50 * US, true)
        );
        let b = Threshold::BasePlus {
            base_plus: TimeValue(10 * US),
        };
        assert_eq!(b.resolve(&p), (14 * US, true));
        let h = Threshold::smart_pause_hops();
        assert_eq!(h.resolve(&p), (14 * US, true));
        let two = PathInfo {
            base_owd: 0,
            switch_hops: 2,
        };
        // 2 is as near to 1 as to 3: the larger count wins, and it is flagged.
        assert_eq!(h.resolve(&two), (14 * US, false));
        let seven = PathInfo {
            base_owd: 0,
            switch_hops: 7,
        };
        assert_eq!(h.resolve(&seven), (16 * US, false));
    }

    #[test]
    fn threshold_parses_all_three_forms_and_names_mistakes() {
        #[derive(Deserialize, Debug)]
        struct W {
            threshold: Threshold,
        }
        let w: W = toml::from_str("threshold = \"50us\"").unwrap();
        assert_eq!(w.threshold, Threshold::Fixed(TimeValue(50 * US)));
        let w: W = toml::from_str("threshold = { base_plus = \"10us\" }").unwrap();
        assert_eq!(
            w.threshold,
            Threshold::BasePlus {
                base_plus: TimeValue(10 * US)
            }
        );
        let w: W =
            toml::from_str("threshold = { by_switch_hops = { 1 = \"12us\", 3 = \"14us\" } }")
                .unwrap();
        assert!(matches!(w.threshold, Threshold::BySwitchHops { .. }));
        let e = toml::from_str::<W>("threshold = 50")
            .unwrap_err()
            .to_string();
        assert!(e.contains("a time"), "{e}");
        let e = toml::from_str::<W>("threshold = { margin = \"1us\" }")
            .unwrap_err()
            .to_string();
        assert!(e.contains("margin"), "{e}");
        let bad = Threshold::BySwitchHops {
            by_switch_hops: [("x".to_string(), TimeValue(US))].into(),
        };
        assert!(bad.validate().unwrap_err().message.contains("`x`"));
    }

    #[test]
    fn gate_accounts_holds_and_extensions() {
        // Strawman: hold until now + OWD - T, T = 10 us.
        let rule = RuleConfig::by_name("on_ramp_strawman").unwrap();
        let mut g = EdgeGate::new(rule.build(), 10 * US);
        assert!(!g.on_owd(sample(100, 10, 90))); // OWD = T: no pause
        assert!(g.on_owd(sample(100, 15, 85))); // hold [100, 105)
        assert_eq!(g.hold_until, 105 * US);
        assert!(!g.on_owd(sample(101, 13, 88))); // 104 < 105: no change
        assert!(g.on_owd(sample(102, 20, 82))); // extends to 112
        assert_eq!(g.pauses, 2);
        assert_eq!(g.committed_since(0), 12 * US);
        assert_eq!(g.committed_since(104 * US), 8 * US);
        assert_eq!(g.elapsed_since(104 * US, 106 * US), 2 * US);
        assert_eq!(g.elapsed_since(0, 120 * US), 12 * US);
        assert_eq!(g.paused_until(106 * US), 6 * US);
        assert!(g.on_owd(sample(200, 11, 150))); // a new hold [200, 201)
        assert_eq!(g.paused_until(1000 * US), 13 * US);
        // A reading for a packet sent after the first hold ended prunes it,
        // and the total is unchanged.
        assert!(!g.on_owd(sample(300, 5, 250)));
        assert_eq!(g.paused_until(1000 * US), 13 * US);
    }

    #[test]
    fn owd_saturates_on_the_wire() {
        assert_eq!(owd_to_wire(5), (5, false));
        assert_eq!(owd_to_wire(-5), (-5, false));
        assert_eq!(owd_to_wire(i64::MAX), (i32::MAX, true));
        assert_eq!(owd_to_wire(-(1 << 40)), (-i32::MAX, true));
    }
}

/// Edge pausing's counts in node order ([`EdgeRuntime::node_order`]).
#[derive(Clone, Debug, Default)]
struct NodeOrderCounts {
    /// The clock error's sum of |e|, in picoseconds.
    error_abs_sum: u128,
    /// Readings that reached each sending host.
    readings: Vec<u64>,
}

/// The simulation's edge-pausing state: clocks, which senders gate, OWD samples.
#[derive(Clone, Debug)]
pub struct EdgeRuntime {
    pub rule: RuleConfig,
    pub clocks: Clocks,
    /// `gated[h]`: host `h`'s flows run the gate.
    pub gated: Vec<bool>,
    sample_every: u64,
    readings: u64,
    /// Kept readings: time at the sender, flow id, OWD (ps).
    pub samples: (Vec<u64>, Vec<u64>, Vec<i64>),
    /// ACKs whose OWD did not fit the wire field.
    pub saturated: u64,
    /// Switch counts of gated paths that a `by_switch_hops` table did not list.
    pub unlisted_hops: std::collections::BTreeSet<u32>,
    /// Clock error of the readings (measured minus true OWD): sum of |e|
    /// (push order; node order keeps it exact in `node_order`), max |e|.
    pub error_abs_sum: f64,
    pub error_abs_max: u64,
    /// Node order ([`EdgeRuntime::node_order`]): the same sum exact, so
    /// that partitions' sums add up to one run's; and each sending host's
    /// count of readings, which picks the ones sampled.
    node_order: Option<Box<NodeOrderCounts>>,
    /// Readings taken at receivers (one per data packet).
    taken: u64,
    /// Smallest threshold of any gate.
    pub min_threshold: Ps,
    pub clock: ClockConfig,
    /// The OWD-versus-drop curve, when measured.
    pub curve: Option<Box<DropCurve>>,
}

impl EdgeRuntime {
    pub fn new(cfg: &EdgeConfig, hosts: usize, gated_hosts: &[u32], seed: u64) -> EdgeRuntime {
        let mut gated = vec![false; hosts];
        for &h in gated_hosts {
            gated[h as usize] = true;
        }
        EdgeRuntime {
            rule: cfg.rule.clone(),
            clocks: Clocks::new(&cfg.clock, hosts, seed),
            gated,
            sample_every: cfg.owd_sample_every as u64,
            readings: 0,
            samples: Default::default(),
            saturated: 0,
            unlisted_hops: Default::default(),
            error_abs_sum: 0.0,
            error_abs_max: 0,
            node_order: None,
            taken: 0,
            min_threshold: Ps::MAX,
            clock: cfg.clock,
            curve: cfg.drop_curve.map(|c| Box::new(DropCurve::new(&c))),
        }
    }

    /// The receiver's reading for a packet, as carried in its ACK.
    pub fn reading(&mut self, src: u32, dst: u32, sent: Ps, recv: Ps) -> i32 {
        let owd = self.clocks.owd(src, dst, sent, recv);
        let err = (owd - (recv - sent) as i64).unsigned_abs();
        self.taken += 1;
        match self.node_order.as_deref_mut() {
            Some(counts) => counts.error_abs_sum += err as u128,
            None => self.error_abs_sum += err as f64,
        }
        self.error_abs_max = self.error_abs_max.max(err);
        let (w, sat) = owd_to_wire(owd);
        self.saturated += sat as u64;
        w
    }

    /// The `edge` block of the run summary.
    pub fn summary(
        &self,
        pauses: u64,
        paused_ps: Ps,
        owd_us: serde_json::Value,
    ) -> serde_json::Value {
        let error_abs_sum = match self.node_order.as_deref() {
            Some(counts) => counts.error_abs_sum as f64,
            None => self.error_abs_sum,
        };
        let mean_err = error_abs_sum / self.taken.max(1) as f64;
        let mut warnings = vec![];
        if self.min_threshold != Ps::MAX && mean_err > 0.1 * self.min_threshold as f64 {
            warnings.push(format!(
                "clock error (mean |error| {:.3} us, max {:.3} us) is {:.0} % of the smallest threshold T = {:.3} us: pause decisions follow clock error as much as queueing",
                mean_err / US as f64,
                self.error_abs_max as f64 / US as f64,
                100.0 * mean_err / self.min_threshold as f64,
                self.min_threshold as f64 / US as f64,
            ));
        }
        if self.saturated > 0 {
            warnings.push(format!(
                "{} OWD readings exceeded +-2.147 ms and were saturated",
                self.saturated
            ));
        }
        serde_json::json!({
            "rule": self.rule.name(),
            "gated_hosts": self.gated.iter().filter(|&&g| g).count(),
            "pauses": pauses,
            "paused_time_us": paused_ps as f64 / US as f64,
            "owd_readings": self.readings,
            "owd_sampled_us": owd_us,
            "owd_saturated": self.saturated,
            "min_threshold_us": (self.min_threshold != Ps::MAX).then(|| self.min_threshold as f64 / US as f64),
            "clock": {
                "offset_sd_ns": self.clock.offset.ps() as f64 / 1e3,
                "drift_sd_ppm": self.clock.drift_ppm,
                "noise_sd_ns": self.clock.noise.ps() as f64 / 1e3,
                "mean_abs_error_us": mean_err / US as f64,
                "max_abs_error_us": self.error_abs_max as f64 / US as f64,
            },
            "unlisted_switch_hops": self.unlisted_hops.iter().collect::<Vec<_>>(),
            "warnings": warnings,
        })
    }

    /// A gate for a new flow of a gated sender on `path`.
    pub fn gate(&mut self, path: &PathInfo) -> EdgeGate {
        let t = match self.rule.threshold() {
            None => Ps::MAX,
            Some(th) => {
                let (t, exact) = th.resolve(path);
                if !exact {
                    self.unlisted_hops.insert(path.switch_hops);
                }
                self.min_threshold = self.min_threshold.min(t);
                t
            }
        };
        let mut gate = EdgeGate::new(self.rule.build(), t);
        gate.switch_hops = path.switch_hops;
        gate
    }

    /// A data packet of the flow behind `gate` leaves: its drop-curve tag
    /// (0 when the curve is off or the flow has no gate).
    #[inline]
    pub fn tag(&mut self, gate: Option<&EdgeGate>) -> u16 {
        match (self.curve.as_deref_mut(), gate) {
            (Some(curve), Some(g)) => curve.on_send(g.switch_hops, g.last_owd),
            _ => 0,
        }
    }

    /// A data packet tagged `tag` reached its receiver.
    #[inline]
    pub fn delivered(&mut self, tag: u16) {
        if let Some(curve) = self.curve.as_deref_mut() {
            curve.on_delivered(tag);
        }
    }

    /// A reading reached host `sender`, the sender of flow `flow_id` in
    /// flow-table slot `slot`: sampled if it is the run's
    /// `owd_sample_every`th (in node order, the sending host's: a run on
    /// threads cannot count the run's in order; and kept by slot, whose flow
    /// id is known at the end, [`EdgeRuntime::samples_by_flow_id`]).
    pub fn record(&mut self, now: Ps, sender: u32, flow_id: u64, slot: u32, owd: i64) {
        self.readings += 1;
        let (count, flow) = match self.node_order.as_deref_mut() {
            Some(counts) => {
                let count = &mut counts.readings[sender as usize];
                *count += 1;
                (*count, slot as u64)
            }
            None => (self.readings, flow_id),
        };
        if self.sample_every > 0 && count % self.sample_every == 0 {
            self.samples.0.push(now);
            self.samples.1.push(flow);
            self.samples.2.push(owd);
        }
    }

    pub fn readings(&self) -> u64 {
        self.readings
    }

    /// Node order (`[timing] ties = "node"`, what a run on threads runs):
    /// every count whose value could depend on how the network is split
    /// is kept so that it does not (a reading's clock noise from its
    /// receiver's stream, the sampled readings each sending host's every
    /// `owd_sample_every`th, the clock error's sum exact); see
    /// [`EdgeRuntime::merge`].
    pub fn node_order(&mut self, seed: u64) {
        self.clocks.per_receiver_noise(seed);
        self.node_order = Some(Box::new(NodeOrderCounts {
            error_abs_sum: 0,
            readings: vec![0; self.gated.len()],
        }));
    }

    /// A threaded run's end: partition `from`'s counts added to these, its
    /// samples appended (given their flow ids by [`EdgeRuntime::samples_by_flow_id`]).
    /// Its drop curve must have counted its packets still in flight.
    pub fn merge(&mut self, from: &mut EdgeRuntime) {
        self.readings += from.readings;
        self.taken += from.taken;
        self.saturated += from.saturated;
        self.error_abs_sum += from.error_abs_sum;
        self.error_abs_max = self.error_abs_max.max(from.error_abs_max);
        self.min_threshold = self.min_threshold.min(from.min_threshold);
        self.unlisted_hops.append(&mut from.unlisted_hops);
        if let (Some(mine), Some(theirs)) =
            (self.node_order.as_deref_mut(), from.node_order.as_deref())
        {
            mine.error_abs_sum += theirs.error_abs_sum;
            for (count, their) in mine.readings.iter_mut().zip(&theirs.readings) {
                *count += their;
            }
        }
        let (samples, theirs) = (&mut self.samples, &mut from.samples);
        samples.0.append(&mut theirs.0);
        samples.1.append(&mut theirs.1);
        samples.2.append(&mut theirs.2);
        if let (Some(mine), Some(theirs)) = (self.curve.as_deref_mut(), from.curve.as_deref()) {
            mine.merge(theirs);
        }
    }

    /// Node order, at the end: each sample's flow id from its slot (`slots`
    /// and `ids`: the flow records' columns, ids as renumbered at the end:
    /// slots and the ids handed out during the run depend on the split).
    /// The `owd` table is then put in order of time and flow id
    /// (`node_order::owd_in_node_order`).
    pub fn samples_by_flow_id(&mut self, slots: &[u32], ids: &[u64]) {
        if self.node_order.is_none() {
            return;
        }
        let mut id_of = vec![u64::MAX; slots.iter().max().map_or(0, |&s| s as usize + 1)];
        for (&slot, &id) in slots.iter().zip(ids) {
            id_of[slot as usize] = id;
        }
        for flow in &mut self.samples.1 {
            *flow = id_of[*flow as usize];
        }
    }
}
