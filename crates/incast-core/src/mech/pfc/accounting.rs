//! Priority-based flow control (IEEE 802.1Qbb) and its buffer accounting.
//!
//! A switch accounts every buffered byte of a lossless class to the
//! *ingress* (port, class) it arrived on, in three layers (as in Broadcom
//! MMUs and the HPCC simulator's `switch-mmu.cc`):
//!
//! 1. a small guaranteed `reserve`;
//! 2. the shared pool, up to the XOFF threshold — static bytes, or dynamic:
//!    `alpha x (buffer - total headroom - total reserve - shared used)`
//!    (Choudhury-Hahne applied at ingress);
//! 3. headroom, for the bytes still arriving after the PAUSE went out.
//!
//! When an ingress crosses XOFF (or any byte lands in headroom) the switch
//! sends a PAUSE for that class out of the same port; when it drains below
//! `threshold - resume_offset` with no headroom in use it sends XON
//! (a PAUSE with zero quanta). A packet that finds headroom full is dropped
//! and counted as a *lossless violation*: with headroom sized by
//! [`headroom_formula`] this never happens.
//!
//! The upstream port stops *starting* frames of a paused class; the frame on
//! the wire completes (802.1Qbb §36.1.3.2). A PAUSE carries quanta of 512
//! bit times at the receiving port's rate; `PauseMode::Quanta` lets the
//! pause expire (the sender refreshes it at half-time while still
//! congested), `PauseMode::UntilResume` is the HPCC simulator's idealised
//! XON/XOFF.

use crate::config_types::{SizeValue, TimeValue};
use crate::units::{self, Bytes, Ps, Rate, NS};
use schemars::JsonSchema;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// Size of a PFC frame on the wire (a minimum Ethernet frame).
pub const PFC_FRAME_BYTES: u32 = 64;

/// One pause quantum: 512 bit times (802.1Qbb §36.1.3.2 / 802.3 Annex 31B).
pub fn quantum(rate: Rate) -> Ps {
    rate.tx_time(64) // 512 bits = 64 bytes
}

/// When the XOFF threshold is crossed.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PfcThreshold {
    /// Shared bytes of an ingress (port, class) above `alpha x (free shared buffer)`.
    Dynamic {
        alpha: f64,
        /// Multiply alpha by (port rate / slowest host link rate), as the HPCC
        /// simulator does (alpha 1/8 at NIC speed, 1/2 at 4x NIC speed).
        #[serde(default)]
        scale_with_rate: bool,
    },
    /// Shared bytes of an ingress (port, class) above a fixed number of bytes.
    Static { xoff: SizeValue },
}

/// Whether a received PAUSE expires.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PauseMode {
    /// 802.1Qbb: the pause lasts `quanta x 512` bit times unless refreshed or
    /// ended by XON; the congested switch refreshes it at half-time.
    #[default]
    Quanta,
    /// The HPCC simulator's idealisation: paused until an explicit XON.
    UntilResume,
}

/// The PFC watchdog: a class paused for longer than `limit` is reported
/// (a trip is counted and logged while the pause is still on).
///
/// With `drop`, a trip also turns PFC off for that class on that port, as
/// switch PFC watchdogs do against pause storms (Guo et al., "RDMA over
/// Commodity Ethernet at Scale", SIGCOMM 2016, section 4.3): the queue is
/// flushed, further PAUSE frames for the class are ignored, and packets that
/// would join the queue are dropped, until no PAUSE has arrived for
/// `restore` (default: `limit`; make it longer than the peer's refresh
/// interval, half the pause time); a pause the peer asked for meanwhile and
/// that is still on is then obeyed. Watchdog drops are counted apart from
/// lossless-violation drops. Drop mode acts on switch egress queues; pauses
/// of a host NIC are reported only.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WatchdogConfig {
    pub limit: TimeValue,
    /// Also flush the queue and disable PFC for the class until `restore`.
    #[serde(default)]
    pub drop: bool,
    /// Quiet time (no PAUSE received) after which PFC is re-enabled.
    #[serde(default)]
    pub restore: Option<TimeValue>,
}

impl WatchdogConfig {
    pub fn restore_ps(&self) -> crate::units::Ps {
        self.restore.map_or(self.limit.0, |r| r.0)
    }
}

/// `[switch.pfc]`: priority flow control on every switch.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct PfcConfig {
    /// The lossless classes.
    pub classes: Vec<u8>,
    pub threshold: PfcThreshold,
    /// Bytes guaranteed to each ingress (port, class) before the shared pool.
    pub reserve: SizeValue,
    /// XON hysteresis: resume when shared bytes <= threshold - resume_offset.
    pub resume_offset: SizeValue,
    /// Headroom per ingress (port, class): a size for every port, or a rule
    /// applied to each port's rate and delay ([`Headroom`]). Default:
    /// [`headroom_formula`] from the port's rate and delay, the MTU and
    /// `response_time`.
    pub headroom: Option<Headroom>,
    /// How long an upstream port takes to act on a PAUSE (802.3 Annex 31B bounds
    /// it per PHY). Default 0: the model acts on arrival.
    pub response_time: TimeValue,
    /// Quanta carried by an XOFF frame.
    pub pause_quanta: u16,
    pub mode: PauseMode,
    pub watchdog: Option<WatchdogConfig>,
    /// Hosts obey PAUSE frames (always true on real NICs; off only for experiments).
    pub hosts_obey: bool,
}

impl Default for PfcConfig {
    fn default() -> Self {
        PfcConfig {
            classes: vec![3],
            threshold: PfcThreshold::Dynamic {
                alpha: 0.125,
                scale_with_rate: false,
            },
            reserve: SizeValue(0),
            resume_offset: SizeValue(3000),
            headroom: None,
            response_time: TimeValue(0),
            pause_quanta: 0xFFFF,
            mode: PauseMode::Quanta,
            watchdog: None,
            hosts_obey: true,
        }
    }
}

/// `headroom` of `[switch.pfc]`: how many bytes each ingress (port, lossless
/// class) keeps for what still arrives after its PAUSE went out.
///
/// ```toml
/// headroom = "40KB"                 # the same on every port
/// headroom = { rule = "formula" }   # per port, from its rate and delay (the default)
/// headroom = { rule = "hpcc" }      # per port, the HPCC simulator's 3 x rate x delay
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Headroom {
    /// One size for every port.
    Fixed(SizeValue),
    /// A rule applied to each port's rate and propagation delay.
    Rule { rule: HeadroomRule },
}

/// How a port's headroom follows from its rate and propagation delay.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HeadroomRule {
    /// [`headroom_formula`]: the worst case after an XOFF decision (two MTUs,
    /// the PAUSE frame, the round trip on the wire, `response_time`).
    Formula,
    /// The HPCC simulator's rule ([`hpcc_headroom`]): 3 x rate x delay, the
    /// delay in whole nanoseconds.
    Hpcc,
}

impl<'de> Deserialize<'de> for Headroom {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Table {
            rule: HeadroomRule,
        }
        struct V;
        const EXPECTING: &str =
            "a size (40000 or \"40KB\"), { rule = \"formula\" } or { rule = \"hpcc\" }";
        impl V {
            fn size<E: de::Error>(s: &str) -> Result<Headroom, E> {
                units::parse_bytes(s)
                    .map(|b| Headroom::Fixed(SizeValue(b)))
                    .map_err(|m| E::custom(format!("{m}; expected {EXPECTING}")))
            }
        }
        impl<'de> Visitor<'de> for V {
            type Value = Headroom;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(EXPECTING)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Headroom, E> {
                V::size(v)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Headroom, E> {
                Ok(Headroom::Fixed(SizeValue(v)))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Headroom, E> {
                u64::try_from(v)
                    .map_err(|_| E::custom(format!("{v} is negative; expected {EXPECTING}")))
                    .and_then(|v| self.visit_u64(v))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Headroom, A::Error> {
                let t = Table::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(Headroom::Rule { rule: t.rule })
            }
        }
        d.deserialize_any(V)
    }
}

impl PfcConfig {
    /// The headroom of each lossless ingress (port, class) of a port with
    /// `rate` and propagation `delay`, when the largest data packet on the
    /// wire is `mtu` bytes.
    pub fn port_headroom(&self, rate: Rate, delay: Ps, mtu: u32) -> Bytes {
        match self.headroom {
            None
            | Some(Headroom::Rule {
                rule: HeadroomRule::Formula,
            }) => headroom_formula(rate, delay, mtu, self.response_time.0),
            Some(Headroom::Rule {
                rule: HeadroomRule::Hpcc,
            }) => hpcc_headroom(rate, delay),
            Some(Headroom::Fixed(b)) => b.0,
        }
    }
}

/// The HPCC simulator's headroom of a switch port (`scratch/third.cc`, where
/// the switches are configured): three times the bytes the port's rate puts
/// on the wire in one propagation delay, `rate x delay / 8 / 10^9 x 3` in
/// integer arithmetic with the delay in ns (ns-3's time step there), i.e.
/// 37 500 B at 100 Gb/s on a 1 us link and 150 000 B at 400 Gb/s. HPCC's
/// MMU applies it to each (port, queue) and sums it once per port into the
/// headroom it takes off the buffer (`switch-mmu.cc`).
pub fn hpcc_headroom(rate: Rate, delay: Ps) -> Bytes {
    3 * rate.bytes_in(delay / NS * NS)
}

/// Worst-case bytes that still arrive at an ingress after it decides XOFF
/// (docs/mechanisms.md, PFC): the frame the switch is sending when it decides (MTU), the
/// PAUSE frame itself, the PAUSE's propagation upstream, the upstream's
/// response time, the frame the upstream is sending when it reacts (MTU) and
/// the bits on the wire downstream.
pub fn headroom_formula(rate: Rate, delay: Ps, mtu: u32, response: Ps) -> Bytes {
    let on_wire = rate.bytes_in(delay);
    mtu as Bytes
        + PFC_FRAME_BYTES as Bytes
        + on_wire
        + rate.bytes_in(response)
        + mtu as Bytes
        + on_wire
}

/// The fraction `alpha` of a dynamic threshold, applied to a byte count.
///
/// A power of two (1/8 at NIC speed, 1/2 at 4x: every HPCC configuration)
/// is applied as a shift, which is what the HPCC simulator computes
/// (`free >> pfc_a_shift`) and equals the float product rounded down for
/// any count below 2^53 bytes; any other alpha is a float product. The
/// dynamic threshold is evaluated on every lossless arrival, so this keeps
/// two float conversions off the hot path.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Alpha {
    value: f64,
    /// `Some(e)` when `value` is exactly 2^e.
    exp: Option<i32>,
}

impl Alpha {
    pub fn new(value: f64) -> Alpha {
        let bits = value.to_bits();
        let biased = ((bits >> 52) & 0x7ff) as i32;
        let exact = value > 0.0 && bits & ((1 << 52) - 1) == 0 && biased != 0 && biased != 0x7ff;
        let exp = Some(biased - 1023).filter(|e| exact && (-63..=63).contains(e));
        Alpha { value, exp }
    }
    pub fn value(self) -> f64 {
        self.value
    }
    /// `floor(bytes x alpha)`, saturated.
    #[inline]
    pub fn of(self, bytes: Bytes) -> Bytes {
        match self.exp {
            Some(e) if e <= 0 => bytes >> -e,
            Some(e) if bytes.leading_zeros() >= e as u32 => bytes << e,
            Some(_) => Bytes::MAX,
            None => (bytes as f64 * self.value) as Bytes,
        }
    }
}

/// Accounting of one ingress (port, lossless class): one cache line, all
/// that a lossless arrival or departure reads and writes at its ingress.
#[derive(Clone, Copy, Debug, Default)]
#[repr(align(64))]
pub struct Ingress {
    /// Bytes in the reserve and shared layers.
    pub bytes: Bytes,
    /// Bytes in headroom.
    pub hdrm: Bytes,
    /// XOFF has been sent and not yet undone by XON.
    pub paused: bool,
    pub headroom: Bytes,
    /// The port's alpha, when the XOFF threshold is dynamic.
    pub alpha: Alpha,
}

/// Where an arriving packet was charged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Charge {
    Accepted,
    /// Headroom overflow: drop (a lossless violation).
    Violation,
}

/// A switch's PFC accounting (one per switch).
#[derive(Clone, Debug, Default)]
pub struct PfcState {
    /// Per local port, per class (only lossless classes are used).
    pub ingress: Vec<[Ingress; 8]>,
    /// Shared bytes in use, all ingresses.
    pub shared_used: Bytes,
    pub total_headroom: Bytes,
    pub total_reserve: Bytes,
    /// Headroom bytes in use, all ingresses.
    pub hdrm_used: Bytes,
}

impl PfcState {
    /// The XOFF threshold (shared bytes) of ingress (`port`, `class`).
    #[inline]
    pub fn threshold(&self, cfg: &PfcConfig, buffer: Bytes, port: usize, class: usize) -> Bytes {
        self.threshold_at(cfg, buffer, port, class, self.shared_used)
    }

    /// [`PfcState::threshold`] when `shared_used` shared bytes are in use.
    #[inline(always)]
    fn threshold_at(
        &self,
        cfg: &PfcConfig,
        buffer: Bytes,
        port: usize,
        class: usize,
        shared_used: Bytes,
    ) -> Bytes {
        match cfg.threshold {
            PfcThreshold::Static { xoff } => xoff.0,
            PfcThreshold::Dynamic { .. } => {
                let free = buffer
                    .saturating_sub(self.total_headroom)
                    .saturating_sub(self.total_reserve)
                    .saturating_sub(shared_used);
                self.ingress[port][class].alpha.of(free)
            }
        }
    }

    /// Whether a packet of `size` bytes that arrives at ingress (`port`, `class`)
    /// and leaves in the same instant may skip its accounting: the ingress
    /// is not paused and holds no headroom bytes, and charging the packet
    /// would not reach XOFF. Then [`PfcState::charge`], a false
    /// [`PfcState::should_pause`] and [`PfcState::release`] would leave
    /// every count as it was, and neither PAUSE nor XON would be due.
    #[inline(always)]
    pub fn passes_unseen(
        &self,
        cfg: &PfcConfig,
        buffer: Bytes,
        port: usize,
        class: usize,
        size: Bytes,
    ) -> bool {
        let ing = &self.ingress[port][class];
        if ing.paused || ing.hdrm > 0 {
            return false;
        }
        // What `charge` would do: the bytes above the reserve come from the shared pool.
        let shared = (ing.bytes + size).saturating_sub(cfg.reserve.0);
        let shared_used = self.shared_used + shared.min(size);
        shared < self.threshold_at(cfg, buffer, port, class, shared_used)
    }

    #[inline]
    fn shared_of(ing: &Ingress, reserve: Bytes) -> Bytes {
        ing.bytes.saturating_sub(reserve)
    }

    /// Charges an arriving packet of `size` bytes to ingress (`port`, `class`).
    /// When the switch's buffer outside the headroom reserve is full (lossy
    /// bytes share that pool with the lossless shared bytes), a packet at an
    /// ingress not yet paused is still charged to the shared layer (it
    /// arrived before the decision, as the packet crossing XOFF does) and the
    /// caller pauses the ingress: charging it to headroom would leave one
    /// packet less of headroom than the formula's in-flight bytes need (found
    /// by the property tests).
    #[inline(always)]
    pub fn charge(&mut self, cfg: &PfcConfig, port: usize, class: usize, size: Bytes) -> Charge {
        let reserve = cfg.reserve.0;
        let ing = self.ingress[port][class];
        let new_bytes = ing.bytes + size;
        if new_bytes <= reserve {
            self.ingress[port][class].bytes = new_bytes;
            return Charge::Accepted;
        }
        if ing.paused || ing.hdrm > 0 {
            // XOFF has been sent: what still arrives is what headroom is for.
            // The packet that crosses XOFF (including a falling dynamic
            // threshold) is charged to the shared pool: it arrived before the
            // decision, as the standard headroom formula assumes.
            if ing.hdrm + size > ing.headroom {
                return Charge::Violation;
            }
            self.ingress[port][class].hdrm += size;
            self.hdrm_used += size;
            return Charge::Accepted;
        }
        let from_shared = size.min(new_bytes - reserve);
        self.ingress[port][class].bytes = new_bytes;
        self.shared_used += from_shared;
        Charge::Accepted
    }

    /// Releases a departing packet's bytes from ingress (`port`, `class`).
    pub fn release(&mut self, cfg: &PfcConfig, port: usize, class: usize, size: Bytes) {
        let reserve = cfg.reserve.0;
        let ing = &mut self.ingress[port][class];
        let from_hdrm = size.min(ing.hdrm);
        ing.hdrm -= from_hdrm;
        self.hdrm_used -= from_hdrm;
        let rest = size - from_hdrm;
        let shared = Self::shared_of(ing, reserve);
        let from_shared = rest.min(shared);
        ing.bytes -= rest.min(ing.bytes);
        self.shared_used -= from_shared.min(self.shared_used);
    }

    /// Whether ingress (`port`, `class`) should be paused now.
    #[inline(always)]
    pub fn should_pause(&self, cfg: &PfcConfig, buffer: Bytes, port: usize, class: usize) -> bool {
        let ing = &self.ingress[port][class];
        ing.hdrm > 0
            || Self::shared_of(ing, cfg.reserve.0) >= self.threshold(cfg, buffer, port, class)
    }

    /// Whether a paused ingress (`port`, `class`) may resume now.
    #[inline]
    pub fn should_resume(&self, cfg: &PfcConfig, buffer: Bytes, port: usize, class: usize) -> bool {
        let ing = &self.ingress[port][class];
        if ing.hdrm > 0 {
            return false;
        }
        let shared = Self::shared_of(ing, cfg.reserve.0);
        shared == 0 || shared + cfg.resume_offset.0 <= self.threshold(cfg, buffer, port, class)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Rate, NS, US};

    #[test]
    fn alpha_shift_equals_the_float_product() {
        // The shift form must give floor(bytes x alpha) exactly, as the float
        // product does for counts below 2^53 (where the conversion is exact).
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for e in -20..=20 {
            let a = Alpha::new(2f64.powi(e));
            assert_eq!(a.exp, Some(e));
            for _ in 0..2000 {
                x = crate::rng::mix64(x);
                let bytes = x >> (11 + x % 53); // every magnitude below 2^53
                let float = (bytes as f64 * a.value()) as Bytes;
                assert_eq!(a.of(bytes), float, "alpha 2^{e}, bytes {bytes}");
            }
        }
        for v in [0.0, 0.3, 1.7, 1e-30] {
            assert_eq!(Alpha::new(v).exp, None, "{v}");
            assert_eq!(Alpha::new(v).of(1_000_000), (1e6 * v) as Bytes);
        }
        assert_eq!(Alpha::new(0.125).of(1_000_003), 125_000);
    }

    #[test]
    fn quantum_is_512_bit_times() {
        // docs/mechanisms.md, V10: 51.2 ns at 10G, 5.12 ns at 100G, 1.28 ns at 400G.
        assert_eq!(quantum(Rate::gbps(10)), 51_200);
        assert_eq!(quantum(Rate::gbps(100)), 5_120);
        assert_eq!(quantum(Rate::gbps(400)), 1_280);
        // Max pause at 100G: 65535 quanta = 335.5 us.
        assert_eq!(65535 * quantum(Rate::gbps(100)), 335_539_200);
    }

    #[test]
    fn headroom_matches_the_worked_example() {
        // docs/mechanisms.md, V12: 100G, 0.5 us propagation, 1 us response, 1500 B MTU: about 28 KB.
        let h = headroom_formula(Rate::gbps(100), 500 * NS, 1500, US);
        assert_eq!(h, 1500 + 64 + 6250 + 12500 + 1500 + 6250);
        assert!((27_000..29_000).contains(&h));
    }

    #[test]
    fn hpcc_headroom_is_three_link_delays_at_line_rate() {
        // Issue 17: 37.5 KB at 100G on 1 us links, 150 KB at 400G; by hand:
        // 100e9 b/s x 1e-6 s / 8 = 12 500 B on the wire, x 3.
        assert_eq!(hpcc_headroom(Rate::gbps(100), US), 37_500);
        assert_eq!(hpcc_headroom(Rate::gbps(400), US), 150_000);
        // 25G on 2 us: 6 250 B on the wire, x 3. 10G on 1.5 us: 1 875 x 3.
        assert_eq!(hpcc_headroom(Rate::gbps(25), 2 * US), 18_750);
        assert_eq!(hpcc_headroom(Rate::gbps(10), 1500 * NS), 5_625);
        // third.cc divides in integers: 1 Gb/s on 999 ns is 124.875 B -> 124, x 3.
        assert_eq!(hpcc_headroom(Rate::gbps(1), 999 * NS), 372);
        // ...and reads the delay in whole ns: 1 us + 999 ps counts as 1 us.
        assert_eq!(hpcc_headroom(Rate::gbps(100), US + 999), 37_500);
    }

    #[test]
    fn headroom_choices_per_port() {
        let mut cfg = PfcConfig::default();
        let (r, d) = (Rate::gbps(100), US);
        assert_eq!(
            cfg.port_headroom(r, d, 1048),
            headroom_formula(r, d, 1048, 0)
        );
        assert_eq!(
            cfg.port_headroom(r, d, 1048),
            1048 + 64 + 12_500 + 1048 + 12_500
        );
        for (text, want) in [
            ("headroom = 40000", 40_000),
            ("headroom = \"40KB\"", 40_000),
            ("headroom = { rule = \"formula\" }", 27_160),
            ("headroom = { rule = \"hpcc\" }", 37_500),
        ] {
            cfg = toml::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(cfg.port_headroom(r, d, 1048), want, "{text}");
            // What a scenario writes back reads the same.
            let again: PfcConfig = toml::from_str(&toml::to_string(&cfg).unwrap()).unwrap();
            assert_eq!(again.headroom, cfg.headroom, "{text}");
        }
        assert_eq!(cfg.port_headroom(Rate::gbps(400), d, 1048), 150_000);
        for (text, says) in [
            ("headroom = { rule = \"bdp\" }", "unknown variant `bdp`"),
            ("headroom = { rule = \"hpcc\", x = 1 }", "unknown field `x`"),
            ("headroom = \"4 parsecs\"", "expected a size"),
            ("headroom = -1", "negative"),
        ] {
            let e = toml::from_str::<PfcConfig>(text).unwrap_err().to_string();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    fn state(ports: usize, headroom: Bytes, alpha: f64) -> PfcState {
        let mut s = PfcState {
            ingress: vec![
                [Ingress {
                    alpha: Alpha::new(alpha),
                    ..Default::default()
                }; 8];
                ports
            ],
            ..Default::default()
        };
        for p in 0..ports {
            s.ingress[p][3].headroom = headroom;
            s.total_headroom += headroom;
        }
        s
    }

    #[test]
    fn static_threshold_pauses_then_fills_headroom_then_drops() {
        let cfg = PfcConfig {
            threshold: PfcThreshold::Static {
                xoff: SizeValue(10_000),
            },
            resume_offset: SizeValue(3_000),
            ..Default::default()
        };
        let mut s = state(2, 5_000, 1.0);
        for _ in 0..10 {
            assert_eq!(s.charge(&cfg, 0, 3, 1000), Charge::Accepted);
        }
        assert!(s.should_pause(&cfg, 1 << 30, 0, 3));
        s.ingress[0][3].paused = true; // the simulation sends XOFF here
        assert_eq!(s.ingress[0][3].bytes, 10_000);
        for _ in 0..5 {
            assert_eq!(s.charge(&cfg, 0, 3, 1000), Charge::Accepted);
        }
        assert_eq!(s.ingress[0][3].hdrm, 5_000);
        assert_eq!(s.charge(&cfg, 0, 3, 1000), Charge::Violation);
        // Draining: headroom first, then shared; resume at <= 7000 shared.
        for _ in 0..5 {
            s.release(&cfg, 0, 3, 1000);
        }
        assert_eq!(s.ingress[0][3].hdrm, 0);
        assert!(!s.should_resume(&cfg, 1 << 30, 0, 3));
        for _ in 0..3 {
            s.release(&cfg, 0, 3, 1000);
        }
        assert!(s.should_resume(&cfg, 1 << 30, 0, 3));
        assert_eq!(s.shared_used, 7_000);
    }

    #[test]
    fn dynamic_threshold_follows_free_buffer() {
        // alpha 1/8 of (B - headroom - shared): with B = 1 MB, 2 x 100 KB headroom.
        let cfg = PfcConfig::default();
        let mut s = state(2, 100_000, 0.125);
        let b = 1_000_000;
        assert_eq!(s.threshold(&cfg, b, 0, 3), 100_000);
        let mut n = 0;
        while !s.should_pause(&cfg, b, 0, 3) {
            s.charge(&cfg, 0, 3, 1000);
            n += 1;
        }
        // Fixed point of q = (800000 - q) / 8: q = 88.9 KB.
        assert_eq!(n, 89);
    }

    /// `passes_unseen` says yes exactly when charging the packet, checking
    /// XOFF and releasing it would find nothing to do (not paused, no
    /// headroom bytes, no XOFF) and leave every count as it was; over random
    /// states on both sides of the reserve and of both kinds of threshold.
    #[test]
    fn passes_unseen_is_a_charge_and_release_that_change_nothing() {
        let mut x: u64 = 7;
        let mut next = |m: u64| {
            x = crate::rng::mix64(x);
            x % m
        };
        let (mut yes, mut no) = (0, 0);
        for i in 0..20_000 {
            let cfg = PfcConfig {
                threshold: if i % 2 == 0 {
                    PfcThreshold::Static {
                        xoff: SizeValue(next(40_000)),
                    }
                } else {
                    PfcConfig::default().threshold
                },
                reserve: SizeValue(next(3) * 2_000),
                ..Default::default()
            };
            let mut s = state(2, 20_000, [0.125, 0.5, 0.3][next(3) as usize]);
            s.total_reserve = 2 * cfg.reserve.0;
            let ing = &mut s.ingress[1][3];
            ing.bytes = next(60_000);
            ing.hdrm = if next(4) == 0 { next(5_000) } else { 0 };
            ing.paused = next(4) == 0;
            s.hdrm_used = ing.hdrm;
            s.shared_used = ing.bytes.saturating_sub(cfg.reserve.0) + next(200_000);
            let (buffer, size) = (400_000 + next(400_000), 64 + next(1_500));

            let want = {
                let mut t = s.clone();
                let quiet = !t.ingress[1][3].paused
                    && t.ingress[1][3].hdrm == 0
                    && t.charge(&cfg, 1, 3, size) == Charge::Accepted
                    && !t.should_pause(&cfg, buffer, 1, 3);
                if quiet {
                    t.release(&cfg, 1, 3, size);
                    let (a, b) = (&t.ingress[1][3], &s.ingress[1][3]);
                    assert_eq!((a.bytes, a.hdrm, a.paused), (b.bytes, b.hdrm, b.paused));
                    assert_eq!((t.shared_used, t.hdrm_used), (s.shared_used, s.hdrm_used));
                }
                quiet
            };
            assert_eq!(s.passes_unseen(&cfg, buffer, 1, 3, size), want, "case {i}");
            if want {
                yes += 1;
            } else {
                no += 1;
            }
        }
        // Both answers are well represented, so neither side is vacuous.
        assert!(yes > 2_000 && no > 2_000, "{yes} {no}");
    }
}
