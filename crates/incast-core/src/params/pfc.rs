//! `[switch.pfc]`: priority flow control's settings (IEEE 802.1Qbb) and the
//! headroom rules that size each lossless ingress from a port's rate and
//! delay. The accounting that runs with them is [`crate::mech::pfc`]; the
//! scenario's buffer checks (`scenario/buffer.rs`) read them too.

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::US;

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
}
