//! Host clocks for one-way-delay measurement.
//!
//! Host `h`'s clock reads, at true time `t`,
//!
//! ```text
//! C_h(t) = t + offset_h + drift_h * t + noise
//! ```
//!
//! with `offset_h ~ N(0, offset^2)` and `drift_h ~ N(0, (drift_ppm * 1e-6)^2)`
//! drawn once per host, and `noise ~ N(0, noise^2)` drawn per reading (each
//! OWD takes two readings: the sender's stamp and the receiver's). The
//! presets name the two classes of synchronization the edge-pausing papers
//! contrast (On-Ramp uses Huygens, NSDI 2018):
//!
//! | preset | offset (sd) | drift (sd) | noise (sd) | OWD error (sd) |
//! |---|---|---|---|---|
//! | `perfect` (default) | 0 | 0 | 0 | 0: OWD is exact |
//! | `huygens` | 20 ns | 0 | 10 ns | about 32 ns |
//! | `ntp` | 20 us | 0 | 5 us | about 29 us |
//!
//! The preset values are illustrative of "tens of nanoseconds" and "tens of
//! microseconds"; give a table for anything else:
//! `clock = { offset = "50ns", drift_ppm = 0.5, noise = "20ns" }`.

use crate::config_types::TimeValue;
use crate::rdma::cc::ParamError;
use crate::rng::{Stream, Streams};
use crate::units::{Ps, NS, US};
use schemars::JsonSchema;
use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize};
use std::fmt;

/// Clock-error parameters (standard deviations).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct ClockConfig {
    /// Per-host offset.
    pub offset: TimeValue,
    /// Per-host frequency error, parts per million.
    pub drift_ppm: f64,
    /// Per-reading noise.
    pub noise: TimeValue,
}

impl ClockConfig {
    pub const PRESETS: &'static [&'static str] = &["perfect", "huygens", "ntp"];

    pub fn preset(name: &str) -> Option<ClockConfig> {
        let c = |o, n| ClockConfig {
            offset: TimeValue(o),
            drift_ppm: 0.0,
            noise: TimeValue(n),
        };
        match name {
            "perfect" => Some(ClockConfig::default()),
            "huygens" => Some(c(20 * NS, 10 * NS)),
            "ntp" => Some(c(20 * US, 5 * US)),
            _ => None,
        }
    }

    pub fn is_perfect(&self) -> bool {
        self.offset.ps() == 0 && self.drift_ppm == 0.0 && self.noise.ps() == 0
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        if !self.drift_ppm.is_finite() || self.drift_ppm < 0.0 {
            return Err(ParamError::new(
                "drift_ppm",
                format!(
                    "is a standard deviation and must be >= 0, got {}",
                    self.drift_ppm
                ),
            ));
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for ClockConfig {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields, default)]
        struct Table {
            offset: TimeValue,
            drift_ppm: f64,
            noise: TimeValue,
        }
        impl Default for Table {
            fn default() -> Self {
                Table {
                    offset: TimeValue(0),
                    drift_ppm: 0.0,
                    noise: TimeValue(0),
                }
            }
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ClockConfig;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(
                    f,
                    "a clock preset ({}) or a table {{ offset = \"20ns\", drift_ppm = 0.0, noise = \"10ns\" }}",
                    ClockConfig::PRESETS.join(", ")
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<ClockConfig, E> {
                ClockConfig::preset(v).ok_or_else(|| {
                    E::custom(format!(
                        "unknown clock preset `{v}`; known: {}",
                        ClockConfig::PRESETS.join(", ")
                    ))
                })
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<ClockConfig, A::Error> {
                let t = Table::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(ClockConfig {
                    offset: t.offset,
                    drift_ppm: t.drift_ppm,
                    noise: t.noise,
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// Every host's clock, and the noise stream of the readings.
#[derive(Clone, Debug)]
pub struct Clocks {
    perfect: bool,
    offset: Vec<f64>,
    drift: Vec<f64>,
    noise: f64,
    /// The readings' noise: the run's stream, or in node order each
    /// receiving host's ([`Clocks::per_receiver_noise`]).
    noise_rng: Streams,
}

impl Clocks {
    pub fn new(cfg: &ClockConfig, hosts: usize, seed: u64) -> Clocks {
        let mut offset = Vec::with_capacity(hosts);
        let mut drift = Vec::with_capacity(hosts);
        for h in 0..hosts {
            // One stream per host: adding hosts never changes another host's clock.
            let mut s = Stream::new(seed, "clock", h as u64);
            offset.push(cfg.offset.ps() as f64 * s.normal());
            drift.push(cfg.drift_ppm * 1e-6 * s.normal());
        }
        Clocks {
            perfect: cfg.is_perfect(),
            offset,
            drift,
            noise: cfg.noise.ps() as f64,
            noise_rng: Streams::new(seed, "clock-noise"),
        }
    }

    /// Node order (a run on threads, [`crate::sim::threaded`]): each
    /// reading's noise comes from its receiver's own stream, which only the
    /// receiver's partition draws from, instead of one stream for the run.
    pub fn per_receiver_noise(&mut self, seed: u64) {
        let hosts = self.offset.len();
        self.noise_rng
            .per_element(seed, "clock-noise-receiver", hosts);
    }

    /// Host `host`'s clock at true time `t`, in picoseconds (one reading: draws noise).
    pub fn read(&mut self, host: u32, t: Ps) -> f64 {
        self.read_for(host, host, t)
    }

    /// [`Clocks::read`] for a reading that `receiver` takes: its noise from
    /// the receiver's stream in node order, from the run's otherwise.
    fn read_for(&mut self, receiver: u32, host: u32, t: Ps) -> f64 {
        let host = host as usize;
        let mut r = t as f64 + self.offset[host] + self.drift[host] * t as f64;
        if self.noise > 0.0 {
            r += self.noise * self.noise_rng.of(receiver).normal();
        }
        r
    }

    /// The OWD a receiver computes for a packet `src` sent at `sent` that
    /// reached `dst` at `recv`: `C_dst(recv) - C_src(sent)`, rounded to 1 ps.
    /// Exact (integer arithmetic) with perfect clocks.
    pub fn owd(&mut self, src: u32, dst: u32, sent: Ps, recv: Ps) -> i64 {
        if self.perfect {
            return recv as i64 - sent as i64;
        }
        let a = self.read_for(dst, src, sent);
        let b = self.read_for(dst, dst, recv);
        // Difference of two readings close to each other: subtract before
        // rounding so large absolute times lose no precision that matters.
        (b - a).round() as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perfect_clocks_are_exact() {
        let mut c = Clocks::new(&ClockConfig::default(), 4, 1);
        assert_eq!(c.owd(0, 3, 1_000_000_007, 1_000_004_321), 4_314);
    }

    #[test]
    fn offsets_and_noise_have_the_configured_spread() {
        let cfg = ClockConfig::preset("huygens").unwrap();
        let hosts = 2000;
        let mut c = Clocks::new(&cfg, hosts, 9);
        // Offsets: sd 20 ns over 2000 hosts (standard error of the sd ~ 1.6 %).
        let sd = (c.offset.iter().map(|x| x * x).sum::<f64>() / hosts as f64).sqrt();
        assert!((sd / (20.0 * NS as f64) - 1.0).abs() < 0.06, "{sd}");
        // OWD error between two hosts: their offset difference plus two
        // noise draws of 10 ns, so sd = sqrt(2) x 10 ns about the mean.
        let d = c.offset[1] - c.offset[0];
        let n = 20_000;
        let errs: Vec<f64> = (0..n)
            .map(|i| c.owd(0, 1, i * US, i * US + 5 * US) as f64 - 5.0 * US as f64)
            .collect();
        let mean = errs.iter().sum::<f64>() / n as f64;
        let sd = (errs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        assert!((mean - d).abs() < 1.0 * NS as f64, "{mean} vs {d}");
        assert!(
            (sd / (2f64.sqrt() * 10.0 * NS as f64) - 1.0).abs() < 0.03,
            "{sd}"
        );
    }

    #[test]
    fn drift_grows_with_time() {
        let cfg = ClockConfig {
            drift_ppm: 10.0,
            ..Default::default()
        };
        let mut c = Clocks::new(&cfg, 2, 3);
        let early = c.owd(0, 1, 0, 5 * US);
        let late = c.owd(0, 1, 1_000_000 * US, 1_000_005 * US); // 1 s later
        let want = (c.drift[1] - c.drift[0]) * 1e12; // ps of error accrued per second
        assert!(
            ((late - early) as f64 - want).abs() < 2.0,
            "{late} {early} {want}"
        );
    }

    #[test]
    fn presets_and_tables_parse() {
        #[derive(Deserialize)]
        struct W {
            clock: ClockConfig,
        }
        let w: W = toml::from_str("clock = \"ntp\"").unwrap();
        assert_eq!(w.clock.offset, TimeValue(20 * US));
        let w: W = toml::from_str("clock = { noise = \"7ns\" }").unwrap();
        assert_eq!(w.clock.noise, TimeValue(7 * NS));
        let e = toml::from_str::<W>("clock = \"gps\"")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("huygens"), "{e}");
        let e = toml::from_str::<W>("clock = { jitter = \"1ns\" }")
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("jitter"), "{e}");
    }
}
