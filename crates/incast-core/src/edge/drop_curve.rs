//! The OWD-versus-drop-probability curve (Smart-Pause talk, slides 3-4).
//!
//! The talk motivates pausing at the edge with one curve per path length:
//! "X-axis: the OWD of the last packet for which sender has received an ack;
//! Y-axis: the probability that the next packet to be transmitted from that
//! flow will be dropped". This module measures exactly that, for every flow
//! that has an edge gate (`[edge]` with any rule, `"none"` included):
//!
//! 1. When a data packet (first transmission or retransmission) leaves its
//!    sender, the flow's last OWD reading picks a cell: no reading yet (the
//!    flow's first round trip), one of the `bin`-wide bins below `max`, or
//!    "at least `max`". The cell, with the path's switch count, goes in the
//!    packet's [`Packet::tag`](crate::net::Packet::tag) and is counted sent.
//! 2. A data packet that reaches its receiver's transport is counted
//!    delivered in its cell.
//! 3. At the end of the run the packets still alive are counted in flight;
//!    every other sent packet was dropped somewhere (a switch buffer, a NIC
//!    receive buffer, a flush): `dropped = sent - delivered - in flight`.
//!
//! Turned on with `[edge] drop_curve = { bin = "1us", max = "100us" }`; the
//! run summary's `edge.owd_drop_curve` lists, per switch count, the cells that
//! sent anything.
//!
//! ```
//! use incast_core::edge::drop_curve::{DropCurve, DropCurveConfig};
//! use incast_core::units::US;
//! let mut curve = DropCurve::new(&DropCurveConfig::default());
//! // A 5-switch flow whose last ACK read 12.5 us sends two packets; one arrives.
//! let tag = curve.on_send(5, Some(12 * US as i64 + 500_000));
//! curve.on_send(5, Some(12 * US as i64 + 700_000));
//! curve.on_delivered(tag);
//! let cell = curve.cell(5, 12).unwrap();
//! assert_eq!((cell.sent, cell.dropped), (2, 1));
//! ```

use crate::config_types::TimeValue;
use crate::rdma::cc::ParamError;
use crate::units::{Ps, US};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Switch counts kept apart; longer paths share the last group.
const HOP_GROUPS: usize = 32;
/// Most OWD bins below `max` (the tags of all cells must fit a `u16`).
pub const MAX_BINS: u64 = 2000;

/// `[edge] drop_curve`: the bins of the curve.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DropCurveConfig {
    /// Width of an OWD bin (default 1 us).
    #[serde(default = "default_bin")]
    pub bin: TimeValue,
    /// Readings of at least `max` share one last bin (default 100 us).
    #[serde(default = "default_max")]
    pub max: TimeValue,
}

fn default_bin() -> TimeValue {
    TimeValue(US)
}

fn default_max() -> TimeValue {
    TimeValue(100 * US)
}

impl Default for DropCurveConfig {
    fn default() -> Self {
        DropCurveConfig {
            bin: default_bin(),
            max: default_max(),
        }
    }
}

impl DropCurveConfig {
    pub fn validate(&self) -> Result<(), ParamError> {
        let (bin, max) = (self.bin.ps(), self.max.ps());
        if bin == 0 {
            return Err(ParamError::new("bin", "must be above 0 (e.g. \"1us\")"));
        }
        if max < bin {
            return Err(ParamError::new(
                "max",
                format!("must be at least `bin` ({} us)", bin as f64 / US as f64),
            ));
        }
        if max.div_ceil(bin) > MAX_BINS {
            return Err(ParamError::new(
                "max",
                format!(
                    "gives {} bins of `bin`; at most {MAX_BINS}: raise `bin` or lower `max`",
                    max.div_ceil(bin)
                ),
            ));
        }
        Ok(())
    }
}

/// One cell's counts, as the summary reports them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cell {
    pub sent: u64,
    pub delivered: u64,
    pub in_flight: u64,
    pub dropped: u64,
}

/// The curve's counters: per switch-count group, per cell.
#[derive(Clone, Debug)]
pub struct DropCurve {
    bin: Ps,
    /// OWD bins below `max`.
    bins: usize,
    sent: Vec<u64>,
    delivered: Vec<u64>,
    in_flight: Vec<u64>,
}

impl DropCurve {
    /// Counters for a validated configuration.
    pub fn new(cfg: &DropCurveConfig) -> DropCurve {
        let bin = cfg.bin.ps();
        let bins = cfg.max.ps().div_ceil(bin) as usize;
        let cells = HOP_GROUPS * (bins + 2);
        DropCurve {
            bin,
            bins,
            sent: vec![0; cells],
            delivered: vec![0; cells],
            in_flight: vec![0; cells],
        }
    }

    /// Cells per group: no reading, `bins` bins, at least `max`.
    fn cells(&self) -> usize {
        self.bins + 2
    }

    /// The first cell of the group of paths over `switch_hops` switches.
    fn group_start(&self, switch_hops: u32) -> usize {
        (switch_hops as usize).min(HOP_GROUPS - 1) * self.cells()
    }

    /// The cell of a reading: 0 without one, then the bins (a negative
    /// reading, from clock error, counts in the first), then the last.
    fn cell_of(&self, last_owd: Option<i64>) -> usize {
        match last_owd {
            None => 0,
            Some(owd) => 1 + ((owd.max(0) as u64 / self.bin) as usize).min(self.bins),
        }
    }

    /// A data packet of a flow over `switch_hops` switches leaves, its
    /// flow's last reading `last_owd`: counts it and returns its tag.
    pub fn on_send(&mut self, switch_hops: u32, last_owd: Option<i64>) -> u16 {
        let index = self.group_start(switch_hops) + self.cell_of(last_owd);
        self.sent[index] += 1;
        // Tag 0 means "not tracked"; at most 32 x 2002 cells fit a u16.
        (index + 1) as u16
    }

    /// A data packet tagged `tag` reached its receiver.
    #[inline]
    pub fn on_delivered(&mut self, tag: u16) {
        self.delivered[tag as usize - 1] += 1;
    }

    /// A threaded run's end: another partition's counts added to these.
    pub fn merge(&mut self, from: &DropCurve) {
        for (mine, theirs) in [
            (&mut self.sent, &from.sent),
            (&mut self.delivered, &from.delivered),
            (&mut self.in_flight, &from.in_flight),
        ] {
            for (count, their) in mine.iter_mut().zip(theirs) {
                *count += their;
            }
        }
    }

    /// A tagged packet was still alive when the run ended.
    pub fn on_in_flight(&mut self, tag: u16) {
        self.in_flight[tag as usize - 1] += 1;
    }

    fn counts(&self, index: usize) -> Cell {
        let (sent, delivered, in_flight) = (
            self.sent[index],
            self.delivered[index],
            self.in_flight[index],
        );
        Cell {
            sent,
            delivered,
            in_flight,
            dropped: sent - delivered - in_flight,
        }
    }

    /// The counts of OWD bin `bin` (`bins` is the "at least `max`" one) of
    /// paths over `switch_hops` switches.
    pub fn cell(&self, switch_hops: u32, bin: usize) -> Option<Cell> {
        (bin <= self.bins).then(|| self.counts(self.group_start(switch_hops) + 1 + bin))
    }

    /// The summary's `owd_drop_curve`: per switch count that sent anything,
    /// the packets sent before any reading and the bins that sent anything.
    pub fn summary(&self) -> serde_json::Value {
        let us = |ps: Ps| ps as f64 / US as f64;
        let mut groups = vec![];
        for group in 0..HOP_GROUPS {
            let base = self.group_start(group as u32);
            if self.sent[base..base + self.cells()].iter().all(|&n| n == 0) {
                continue;
            }
            let first = self.counts(base);
            let mut bins = vec![];
            for bin in 0..=self.bins {
                let c = self.counts(base + 1 + bin);
                if c.sent == 0 {
                    continue;
                }
                let lo = bin as u64 * self.bin;
                bins.push(serde_json::json!({
                    "owd_lo_us": us(lo),
                    "owd_hi_us": (bin < self.bins).then(|| us(lo + self.bin)),
                    "sent": c.sent,
                    "dropped": c.dropped,
                    "in_flight": c.in_flight,
                    "drop_probability": c.dropped as f64 / c.sent as f64,
                }));
            }
            groups.push(serde_json::json!({
                "switch_hops": group,
                "before_any_reading": {
                    "sent": first.sent,
                    "dropped": first.dropped,
                    "in_flight": first.in_flight,
                },
                "bins": bins,
            }));
        }
        serde_json::Value::Array(groups)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve(bin_us: u64, max_us: u64) -> DropCurve {
        let cfg = DropCurveConfig {
            bin: TimeValue(bin_us * US),
            max: TimeValue(max_us * US),
        };
        cfg.validate().unwrap();
        DropCurve::new(&cfg)
    }

    #[test]
    fn readings_fall_in_their_bins() {
        let mut c = curve(2, 10);
        let us = |x: u64| Some((x * US) as i64);
        c.on_send(3, None);
        c.on_send(3, us(0));
        c.on_send(3, Some(-5)); // clock error: the first bin
        c.on_send(3, us(3)); // [2, 4)
        c.on_send(3, us(10)); // at max: the last bin
        c.on_send(3, us(500));
        assert_eq!(c.cell(3, 0).unwrap().sent, 2);
        assert_eq!(c.cell(3, 1).unwrap().sent, 1);
        assert_eq!(c.cell(3, 5).unwrap().sent, 2);
        assert_eq!(c.cell(3, 6), None);
        assert_eq!(c.cell(1, 0).unwrap().sent, 0);
        let s = c.summary();
        assert_eq!(s[0]["switch_hops"], 3);
        assert_eq!(s[0]["before_any_reading"]["sent"], 1);
        assert_eq!(s[0]["bins"][2]["owd_lo_us"], 10.0);
        assert!(s[0]["bins"][2]["owd_hi_us"].is_null());
    }

    /// Sent = delivered + in flight + dropped in every cell.
    #[test]
    fn dropped_is_what_neither_arrived_nor_is_in_flight() {
        let mut c = curve(1, 100);
        let tags: Vec<u16> = (0..10).map(|_| c.on_send(5, Some(7 * US as i64))).collect();
        for &t in &tags[..6] {
            c.on_delivered(t);
        }
        c.on_in_flight(tags[6]);
        let cell = c.cell(5, 7).unwrap();
        assert_eq!(
            cell,
            Cell {
                sent: 10,
                delivered: 6,
                in_flight: 1,
                dropped: 3
            }
        );
        assert_eq!(c.summary()[0]["bins"][0]["drop_probability"], 0.3);
    }

    /// The largest configuration's tags stay distinct and fit a u16.
    #[test]
    fn every_tag_fits() {
        let mut c = curve(1, MAX_BINS);
        let last = c.on_send(u32::MAX, Some(i64::MAX));
        assert_eq!(last as usize, HOP_GROUPS * (MAX_BINS as usize + 2));
        assert_eq!(c.on_send(0, None), 1);
    }

    #[test]
    fn bad_bins_are_refused_by_name() {
        let bad = |bin, max| DropCurveConfig {
            bin: TimeValue(bin),
            max: TimeValue(max),
        };
        assert_eq!(bad(0, US).validate().unwrap_err().field, "bin");
        assert_eq!(bad(2 * US, US).validate().unwrap_err().field, "max");
        assert_eq!(bad(1, US).validate().unwrap_err().field, "max");
    }
}
