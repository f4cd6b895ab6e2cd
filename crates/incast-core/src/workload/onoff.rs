//! Raw-frame sources of the IBM talk (April 2007, "fine print"): i.i.d.
//! bursty on/off arrivals with geometrically distributed burst sizes, and
//! Bernoulli arrivals (bursts of one frame). No transport: each arrival is
//! one fixed-size frame handed to the host's adapter.
//!
//! Time is slotted per host in frame times at the host's line rate
//! (`slot = frame x 8 / rate`: 1.2 us for 1500 B at 10 Gb/s). A burst is
//! `K` back-to-back frames to one destination, `K >= 1` geometric with mean
//! `m = B / slot` (the talk's mean burst size B = 1.2, 12, 48, 120 us is
//! m = 1, 10, 40, 100 frames at 10 Gb/s). Bursts are separated by `G >= 0`
//! idle slots, geometric with mean `m (1 - load) / load`, so the long-run
//! fraction of busy slots is `m / (m + E[G]) = load`. With m = 1 every burst
//! is one frame and the gaps make a Bernoulli process: each slot carries a
//! frame with probability `load`, independently. Each burst's destination is
//! drawn independently: uniform over the group's other hosts, or from given
//! weights.
//!
//! Like the other generators, a member knows only its next frame; every
//! member draws from its own stream (`"onoff"`, generator index and host).
//!
//! ```
//! use incast_core::workload::onoff::{Destinations, OnOffGen};
//! use incast_core::units::{Rate, US};
//! let rates = vec![Rate::gbps(10); 16];
//! // 12 us mean bursts at 85 % load, uniform destinations.
//! let mut g = OnOffGen::new(0, 1, (0..16).collect(), &rates, 1500, 0.85, Some(12 * US),
//!                           Destinations::UniformOthers, 0, 1_000 * US).unwrap();
//! let f = g.next_frame(3).unwrap();
//! assert_eq!((f.src, f.bytes), (3, 1500));
//! assert_ne!(f.dst, 3);
//! ```

use crate::config_types::{SizeValue, TimeValue};
use crate::rdma::cc::ParamError;
use crate::rng::Stream;
use crate::units::{Ps, Rate};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Where bursts go.
#[derive(Clone, Debug, PartialEq)]
pub enum Destinations {
    /// Uniform over the generator's other hosts.
    UniformOthers,
    /// Host ids with weights (a source never picks itself: its own weight,
    /// if listed, is ignored for it).
    Weighted(Vec<(u32, f64)>),
}

/// One frame a generator wants sent now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameArrival {
    pub at: Ps,
    pub src: u32,
    pub dst: u32,
    pub bytes: u64,
    /// Counts the member's bursts from 1.
    pub burst: u64,
    pub first_of_burst: bool,
}

#[derive(Clone, Debug)]
struct Member {
    rng: Stream,
    slot: Ps,
    /// Frames in a burst, less one: a burst ends after each frame with
    /// probability 1 / m (m in this host's frame times).
    burst_extra: Geometric,
    /// Idle slots before a burst: a gap ends after each idle slot with
    /// probability 1 / (1 + E[G]).
    gap: Geometric,
    /// Start of the member's next free slot.
    t: Ps,
    left: u64,
    dst: u32,
    /// The frame last returned began its burst.
    first: bool,
    burst: u64,
}

/// On/off (or Bernoulli) frame arrivals at each host of a group.
#[derive(Clone, Debug)]
pub struct OnOffGen {
    pub hosts: Vec<u32>,
    pub frame: u64,
    pub end: Ps,
    dests: Destinations,
    members: Vec<Member>,
}

/// The geometric law on {0, 1, 2, ...} with P(X = j) = (1 - p)^j p, drawn
/// by inversion: X = floor(ln(U) / ln(1 - p)), U uniform on (0, 1].
#[derive(Clone, Copy, Debug)]
struct Geometric {
    p: f64,
    /// ln(1 - p), worked out once: a logarithm is most of a draw's cost.
    ln_miss: f64,
}

impl Geometric {
    fn new(p: f64) -> Self {
        Geometric {
            p,
            ln_miss: (1.0 - p).ln(),
        }
    }

    /// One draw; with p >= 1 it is 0 and takes nothing from `rng`.
    #[inline]
    fn draw(&self, rng: &mut Stream) -> u64 {
        if self.p >= 1.0 {
            return 0;
        }
        // U in (0, 1], so the quotient is >= 0 (-0.0 at U = 1): the cast's
        // truncation is the floor, and it saturates as `floor` then the cast would.
        let u = 1.0 - rng.uniform();
        (u.ln() / self.ln_miss) as u64
    }
}

impl OnOffGen {
    /// Members `hosts` (ids index `rates`); frames of `frame` bytes; `load`
    /// in (0, 1]; `mean_burst` the mean burst duration at line rate (`None`:
    /// Bernoulli, one frame per burst); arrivals from `start` until `end`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        index: usize,
        seed: u64,
        hosts: Vec<u32>,
        rates: &[Rate],
        frame: u64,
        load: f64,
        mean_burst: Option<Ps>,
        dests: Destinations,
        start: Ps,
        end: Ps,
    ) -> Result<Self, ParamError> {
        if !(load > 0.0 && load <= 1.0) {
            return Err(ParamError::new(
                "load",
                format!("must be in (0, 1], got {load}; the talk uses 0.85"),
            ));
        }
        if frame == 0 {
            return Err(ParamError::new("frame", "must be positive, e.g. 1500"));
        }
        if hosts.is_empty() {
            return Err(ParamError::new("hosts", "is empty; list at least one host"));
        }
        // m and the mean gap per host: B is a duration, so hosts of different
        // line rates have different mean bursts in frames.
        let mut shape = Vec::with_capacity(hosts.len());
        for &h in &hosts {
            let slot = rates[h as usize].tx_time(frame);
            let m = mean_burst.map_or(1.0, |b| b as f64 / slot as f64);
            if m < 1.0 - 1e-9 {
                return Err(ParamError::new(
                    "mean_burst",
                    format!(
                        "is shorter than one {frame} B frame at host {h}'s line rate ({slot} ps); bursts have at least one frame (omit it for Bernoulli arrivals)"
                    ),
                ));
            }
            let m = m.max(1.0);
            let mean_gap = m * (1.0 - load) / load;
            shape.push((slot, 1.0 / m, 1.0 / (1.0 + mean_gap)));
        }
        if let Destinations::Weighted(w) = &dests {
            if w.is_empty() || w.iter().any(|(_, x)| !(x.is_finite() && *x >= 0.0)) {
                return Err(ParamError::new(
                    "destinations",
                    "needs at least one host with a weight of zero or more",
                ));
            }
            for &h in &hosts {
                if w.iter()
                    .filter(|(d, _)| *d != h)
                    .map(|(_, x)| x)
                    .sum::<f64>()
                    <= 0.0
                {
                    return Err(ParamError::new(
                        "destinations",
                        format!(
                            "host {h} has no destination other than itself with a positive weight"
                        ),
                    ));
                }
            }
        }
        if matches!(dests, Destinations::UniformOthers) && hosts.len() < 2 {
            return Err(ParamError::new(
                "hosts",
                "uniform destinations need at least two hosts",
            ));
        }
        let members = hosts
            .iter()
            .zip(shape)
            .map(|(&h, (slot, q, s))| Member {
                rng: Stream::new(seed, "onoff", ((index as u64) << 32) | h as u64),
                slot,
                burst_extra: Geometric::new(q),
                gap: Geometric::new(s),
                t: start,
                left: 0,
                dst: h,
                first: false,
                burst: 0,
            })
            .collect();
        Ok(OnOffGen {
            hosts,
            frame,
            end,
            dests,
            members,
        })
    }

    /// The mean burst of member `i` in frames, m.
    pub fn mean_burst_frames(&self, i: usize) -> f64 {
        1.0 / self.members[i].burst_extra.p
    }

    fn draw_dst(&mut self, i: usize) -> u32 {
        let src = self.hosts[i];
        let rng = &mut self.members[i].rng;
        match &self.dests {
            Destinations::UniformOthers => {
                let n = self.hosts.len() as u64;
                let mut j = rng.below(n - 1) as usize;
                if j >= i {
                    j += 1;
                }
                self.hosts[j]
            }
            Destinations::Weighted(w) => {
                let total: f64 = w.iter().filter(|(d, _)| *d != src).map(|(_, x)| x).sum();
                let mut u = rng.uniform() * total;
                let mut last = src;
                for &(d, x) in w.iter().filter(|(d, _)| *d != src) {
                    last = d;
                    if u < x {
                        return d;
                    }
                    u -= x;
                }
                last
            }
        }
    }

    /// The frame [`OnOffGen::next_frame`] last returned for member `i`
    /// (read from the member's state, so a caller need not keep a copy).
    pub fn current(&self, i: usize) -> FrameArrival {
        let m = &self.members[i];
        FrameArrival {
            at: m.t - m.slot,
            src: self.hosts[i],
            dst: m.dst,
            bytes: self.frame,
            burst: m.burst,
            first_of_burst: m.first,
        }
    }

    /// Member `i`'s next frame (its time is at or after the previous one's
    /// slot end), or `None` once past `end`.
    pub fn next_frame(&mut self, i: usize) -> Option<FrameArrival> {
        let first = self.members[i].left == 0;
        if first {
            // A new burst: an idle gap, then K >= 1 frames to one destination.
            let dst = self.draw_dst(i);
            let m = &mut self.members[i];
            let gap = m.gap.draw(&mut m.rng);
            m.t += gap * m.slot;
            m.left = 1 + m.burst_extra.draw(&mut m.rng);
            m.dst = dst;
            m.burst += 1;
        }
        let m = &mut self.members[i];
        let at = m.t;
        m.t += m.slot;
        m.left -= 1;
        m.first = first;
        (at < self.end).then(|| self.current(i))
    }
}

/// A destination and its weight, as written in a scenario.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DestinationWeight {
    pub host: u32,
    pub weight: f64,
}

/// `[[workload.onoff]]`: on/off frame sources (defaults: the talk's).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields, default)]
pub struct OnOffConfig {
    /// Source hosts; unset: every host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hosts: Option<Vec<u32>>,
    /// Mean offered load per source, fraction of its line rate. Talk: 0.85.
    pub load: f64,
    /// Mean burst duration at line rate; unset: Bernoulli arrivals (bursts of
    /// one frame). Talk: 1.2, 12, 48, 120 us.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_burst: Option<TimeValue>,
    /// Frame size. Talk: 1500 B.
    pub frame: SizeValue,
    /// Burst destinations with weights; unset: uniform over the other sources.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub destinations: Option<Vec<DestinationWeight>>,
    /// When arrivals start (default 0).
    pub start: TimeValue,
}

impl Default for OnOffConfig {
    fn default() -> Self {
        OnOffConfig {
            hosts: None,
            load: 0.85,
            mean_burst: None,
            frame: SizeValue(1500),
            destinations: None,
            start: TimeValue(0),
        }
    }
}

impl OnOffConfig {
    /// The destinations as the generator takes them.
    pub fn destinations(&self) -> Destinations {
        match &self.destinations {
            None => Destinations::UniformOthers,
            Some(w) => Destinations::Weighted(w.iter().map(|d| (d.host, d.weight)).collect()),
        }
    }

    /// Builds generator `index` over `n_hosts` hosts (ids 0..n) with their
    /// `rates`; errors name the key (hosts out of range included).
    pub fn build(
        &self,
        index: usize,
        seed: u64,
        rates: &[Rate],
        end: Ps,
    ) -> Result<OnOffGen, ParamError> {
        let n = rates.len() as u32;
        let hosts = self.hosts.clone().unwrap_or_else(|| (0..n).collect());
        if hosts.is_empty() {
            return Err(ParamError::new("hosts", "is empty; list at least one host"));
        }
        if let Some(&h) = hosts.iter().find(|&&h| h >= n) {
            return Err(ParamError::new(
                "hosts",
                format!("host {h} does not exist (hosts are 0..{})", n - 1),
            ));
        }
        if let Some(d) = self.destinations.iter().flatten().find(|d| d.host >= n) {
            return Err(ParamError::new(
                "destinations",
                format!("host {} does not exist (hosts are 0..{})", d.host, n - 1),
            ));
        }
        OnOffGen::new(
            index,
            seed,
            hosts,
            rates,
            self.frame.bytes(),
            self.load,
            self.mean_burst.map(|t| t.ps()),
            self.destinations(),
            self.start.ps(),
            end,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{MS, SEC, US};

    fn gen(mean_burst: Option<Ps>, load: f64, end: Ps) -> OnOffGen {
        let rates = vec![Rate::gbps(10); 16];
        OnOffGen::new(
            0,
            7,
            (0..16).collect(),
            &rates,
            1500,
            load,
            mean_burst,
            Destinations::UniformOthers,
            0,
            end,
        )
        .unwrap()
    }

    /// Realized mean burst length and load over many bursts against the
    /// closed forms E[K] = m and busy fraction = load.
    fn check(mean_burst: Option<Ps>, m: f64) {
        let load = 0.85;
        let mut g = gen(mean_burst, load, Ps::MAX);
        assert!((g.mean_burst_frames(2) - m).abs() < 1e-9);
        let slot = 1_200 * crate::units::NS;
        let bursts_wanted = 100_000u64;
        let (mut frames, mut bursts) = (0u64, 0u64);
        let mut last_at: Ps;
        let mut prev_end = 0;
        loop {
            let f = g.next_frame(2).unwrap();
            assert!(f.at >= prev_end, "frames overlap");
            assert_ne!(f.dst, 2);
            prev_end = f.at + slot;
            bursts += f.first_of_burst as u64;
            frames += 1;
            last_at = f.at;
            if bursts == bursts_wanted && g.members[2].left == 0 {
                break;
            }
        }
        let mean_k = frames as f64 / bursts as f64;
        // K geometric, mean m, sd sqrt(m (m - 1)): the mean of 1e5 bursts has sd
        // sqrt(m (m - 1) / 1e5) <= 0.0032 m; allow 5 sd = 1.6 % (0.1 % floor for m = 1).
        let tol = (5.0 * (m * (m - 1.0) / bursts as f64).sqrt()).max(1e-3 * m);
        assert!((mean_k - m).abs() < tol, "mean burst {mean_k} vs {m}");
        // Busy fraction of slots: by the delta method its sd is
        // sqrt(Var((1-l) K - l G) / n) / E[K + G] (l = load, G the gap), which is
        // 6.3e-4, 5.9e-4 and 5.8e-4 for m = 10, 40, 100 over n = 1e5 bursts;
        // allow 0.4 % (about 6.5 sd).
        let realized = frames as f64 * slot as f64 / (last_at + slot) as f64;
        assert!((realized - load).abs() < 0.004, "load {realized} (m = {m})");
    }

    #[test]
    fn burst_length_and_load_match_the_closed_forms() {
        check(Some(12 * US), 10.0);
        check(Some(48 * US), 40.0);
        check(Some(120 * US), 100.0);
    }

    #[test]
    fn bernoulli_is_one_frame_per_burst_with_geometric_gaps() {
        for mb in [None, Some(1_200 * crate::units::NS)] {
            let mut g = gen(mb, 0.85, 100 * MS);
            let mut n = 0u64;
            let mut prev: Option<Ps> = None;
            let mut busy_after_busy = 0u64;
            while let Some(f) = g.next_frame(0) {
                assert!(f.first_of_burst);
                if let Some(p) = prev {
                    busy_after_busy += (f.at - p == 1_200_000) as u64;
                }
                prev = Some(f.at);
                n += 1;
            }
            // 100 ms = 83333 slots, each busy w.p. 0.85: sd = sqrt(83333 x 0.1275) = 103.
            assert!((n as f64 - 70_833.0).abs() < 520.0, "{n}");
            // Independence: the slot after a busy slot is busy w.p. 0.85 too.
            let p = busy_after_busy as f64 / (n - 1) as f64;
            assert!((p - 0.85).abs() < 0.007, "{p}");
        }
    }

    /// A draw equals the inversion formula worked out whole each time
    /// (the logarithm of 1 - p kept, the floor by the cast), bit for bit,
    /// and takes the same numbers from the stream.
    #[test]
    fn geometric_draw_is_the_inversion_formula() {
        for p in [1.0, 0.999, 0.85, 0.5, 1.0 / 3.0, 0.01, 1e-9, 1e-300] {
            let law = Geometric::new(p);
            let mut a = Stream::new(9, "geometric", 0);
            let mut b = a.clone();
            for _ in 0..20_000 {
                let expected = if p >= 1.0 {
                    0
                } else {
                    let u = 1.0 - b.uniform();
                    (u.ln() / (1.0 - p).ln()).floor() as u64
                };
                assert_eq!(law.draw(&mut a), expected, "p = {p}");
            }
            assert_eq!(
                a.uniform(),
                b.uniform(),
                "p = {p}: the streams kept in step"
            );
        }
    }

    /// `current` is the frame `next_frame` returned last, whole.
    #[test]
    fn current_repeats_the_last_frame() {
        let mut g = gen(Some(12 * US), 0.85, 10 * MS);
        let mut n = 0;
        while let Some(f) = g.next_frame(3) {
            assert_eq!(g.current(3), f);
            n += 1;
        }
        assert!(n > 1000, "{n}");
    }

    #[test]
    fn uniform_destinations_over_the_others() {
        let mut g = gen(Some(12 * US), 0.85, SEC);
        let mut counts = [0u64; 16];
        let mut bursts = 0;
        while bursts < 30_000 {
            let f = g.next_frame(5).unwrap();
            if f.first_of_burst {
                counts[f.dst as usize] += 1;
                bursts += 1;
            }
        }
        assert_eq!(counts[5], 0);
        // 2000 expected each; binomial sd 43; 5 sd.
        for (d, &c) in counts.iter().enumerate().filter(|(d, _)| *d != 5) {
            assert!((c as f64 - 2000.0).abs() < 216.0, "dst {d}: {c}");
        }
    }

    #[test]
    fn weighted_destinations_and_errors() {
        let rates = vec![Rate::gbps(10); 4];
        let w = Destinations::Weighted(vec![(0, 3.0), (1, 1.0)]);
        let mut g = OnOffGen::new(0, 1, vec![0, 2], &rates, 1500, 0.5, None, w, 0, SEC).unwrap();
        let mut from2 = [0u64; 4];
        for _ in 0..40_000 {
            from2[g.next_frame(1).unwrap().dst as usize] += 1;
            // Host 0 never sends to itself: always to 1.
            assert_eq!(g.next_frame(0).unwrap().dst, 1);
        }
        // 3:1 -> 30000 / 10000; binomial sd 87; 5 sd.
        assert!((from2[0] as f64 - 30_000.0).abs() < 435.0, "{from2:?}");
        let bad = |load, mb, d| {
            OnOffGen::new(0, 1, vec![0, 1], &rates, 1500, load, mb, d, 0, SEC)
                .unwrap_err()
                .field
        };
        assert_eq!(bad(0.0, None, Destinations::UniformOthers), "load");
        assert_eq!(bad(1.2, None, Destinations::UniformOthers), "load");
        assert_eq!(
            bad(0.5, Some(US), Destinations::UniformOthers),
            "mean_burst"
        );
        assert_eq!(
            bad(0.5, None, Destinations::Weighted(vec![(0, 1.0)])),
            "destinations"
        );
    }

    #[test]
    fn full_load_is_back_to_back() {
        let mut g = gen(Some(12 * US), 1.0, MS);
        let mut t = 0;
        while let Some(f) = g.next_frame(0) {
            assert_eq!(f.at, t);
            t += 1_200_000;
        }
        assert_eq!(t, 834 * 1_200_000); // frames start until 1 ms
    }

    #[test]
    fn config_builds_and_names_bad_keys() {
        let c: OnOffConfig =
            toml::from_str("load = 0.85\nmean_burst = \"48us\"\nhosts = [0, 1, 2]").unwrap();
        let rates = vec![Rate::gbps(10); 3];
        let g = c.build(0, 1, &rates, MS).unwrap();
        assert!((g.mean_burst_frames(0) - 40.0).abs() < 1e-9);
        // A 40 Gb/s host has 4x the frames in the same 48 us.
        let mixed = vec![Rate::gbps(10), Rate::gbps(40), Rate::gbps(10)];
        let g = c.build(0, 1, &mixed, MS).unwrap();
        assert!((g.mean_burst_frames(1) - 160.0).abs() < 1e-9);
        let c = OnOffConfig {
            hosts: Some(vec![0, 9]),
            ..OnOffConfig::default()
        };
        assert_eq!(c.build(0, 1, &rates, MS).unwrap_err().field, "hosts");
        assert!(toml::from_str::<OnOffConfig>("lod = 0.5").is_err());
    }
}
