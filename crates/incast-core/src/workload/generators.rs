//! Lazy traffic generators: each knows only its *next* arrival.
//!
//! Flows are created when they arrive, never materialized up front, so memory
//! follows the flows that are active, not the flows ever generated. Every
//! generator (and, for Poisson arrivals, every host of a generator) draws from
//! its own random stream: adding a host or a generator leaves every other
//! stream's draws unchanged.

use super::cdf::Cdf;
use crate::rng::Stream;
use crate::units::{Ps, Rate, SEC};

/// A flow a generator wants started now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowRequest {
    pub src: u32,
    pub dst: u32,
    pub size: u64,
    pub class: u8,
    /// The flow's TCP congestion control: an index in `Scenario::ccs` (0:
    /// `transport.cc`).
    pub cc: u8,
}

fn gap(rng: &mut Stream, mean_ps: f64) -> Ps {
    (rng.exponential(mean_ps).round() as Ps).max(1)
}

/// Poisson flow arrivals at each host of a group (HPCC's traffic_gen.py model):
/// host `h` starts flows with exponential inter-arrival times of mean
/// `mean_size * 8 / (rate_h * load)`, sizes from the CDF, destinations uniform
/// over the other hosts of the group.
pub struct PoissonGen {
    /// Its flows' TCP congestion control (an index in `Scenario::ccs`).
    pub cc: u8,
    pub hosts: Vec<u32>,
    pub cdf: Cdf,
    pub class: u8,
    /// Small-flow prioritization: flows below `.0` bytes go in class `.1`.
    pub small: Option<(u64, u8)>,
    pub end: Ps,
    mean_gap: Vec<f64>,
    rngs: Vec<Stream>,
}

impl PoissonGen {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        index: usize,
        seed: u64,
        hosts: Vec<u32>,
        rates: &[Rate],
        cdf: Cdf,
        load: f64,
        class: u8,
        end: Ps,
    ) -> Self {
        let mean_gap = hosts
            .iter()
            .map(|&h| {
                cdf.mean() * 8.0 * SEC as f64 / (rates[h as usize].bits_per_sec() as f64 * load)
            })
            .collect();
        let rngs = hosts
            .iter()
            .map(|&h| Stream::new(seed, "poisson", ((index as u64) << 32) | h as u64))
            .collect();
        PoissonGen {
            cc: 0,
            hosts,
            cdf,
            class,
            small: None,
            end,
            mean_gap,
            rngs,
        }
    }
    /// Time of the next arrival at member `i` after `now`, if before the end.
    pub fn next_time(&mut self, i: usize, now: Ps) -> Option<Ps> {
        let t = now + gap(&mut self.rngs[i], self.mean_gap[i]);
        (t < self.end).then_some(t)
    }
    /// The flow that arrives at member `i`.
    pub fn flow(&mut self, i: usize) -> FlowRequest {
        let rng = &mut self.rngs[i];
        let size = self.cdf.sample(rng.uniform());
        let n = self.hosts.len() as u64;
        let mut j = rng.below(n - 1) as usize;
        if j >= i {
            j += 1;
        }
        let class = match self.small {
            Some((below, c)) if size < below => c,
            _ => self.class,
        };
        FlowRequest {
            src: self.hosts[i],
            dst: self.hosts[j],
            size,
            class,
            cc: self.cc,
        }
    }
}

/// Incast events: a receiver and `fan_in` distinct senders, each sending `bytes` at once.
pub struct IncastGen {
    /// Its flows' TCP congestion control (an index in `Scenario::ccs`).
    pub cc: u8,
    pub hosts: Vec<u32>,
    pub mix: Vec<(u32, f64)>,
    pub sizes: IncastSizes,
    /// The fixed receiver, or the receivers to draw from (empty: any host of the group).
    pub receivers: Vec<u32>,
    pub class: u8,
    pub end: Ps,
    mean_gap: f64,
    times: Vec<Ps>,
    next_index: usize,
    rng: Stream,
}

/// How much each sender of an incast event sends.
#[derive(Clone, Debug)]
pub enum IncastSizes {
    /// Every sender the same number of bytes.
    Fixed(u64),
    /// Each sender's size drawn independently from a distribution.
    Cdf(Cdf),
}

impl IncastSizes {
    /// Mean bytes per sender.
    pub fn mean(&self) -> f64 {
        match self {
            IncastSizes::Fixed(b) => *b as f64,
            IncastSizes::Cdf(c) => c.mean(),
        }
    }
}

/// One incast event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IncastEvent {
    pub receiver: u32,
    pub senders: Vec<u32>,
    /// Bytes of each sender's flow, in `senders` order.
    pub sizes: Vec<u64>,
}

impl IncastGen {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        index: usize,
        seed: u64,
        hosts: Vec<u32>,
        rates: &[Rate],
        mix: Vec<(u32, f64)>,
        sizes: IncastSizes,
        load: Option<f64>,
        times: Vec<Ps>,
        receivers: Vec<u32>,
        class: u8,
        end: Ps,
    ) -> Self {
        let mean_fan: f64 = mix.iter().map(|(f, p)| *f as f64 * p).sum();
        let capacity: f64 = hosts
            .iter()
            .map(|&h| rates[h as usize].bits_per_sec() as f64)
            .sum();
        // Incast bytes are `load` of the group's total host capacity (HPCC Fig. 11 setup).
        let mean_gap = load.map_or(f64::INFINITY, |l| {
            mean_fan * sizes.mean() * 8.0 * SEC as f64 / (capacity * l)
        });
        let mut times = times;
        times.sort_unstable();
        IncastGen {
            cc: 0,
            hosts,
            mix,
            sizes,
            receivers,
            class,
            end,
            mean_gap,
            times,
            next_index: 0,
            rng: Stream::new(seed, "incast", index as u64),
        }
    }
    /// Time of the next event after `now` (Poisson mode) or the next listed time.
    pub fn next_time(&mut self, now: Ps) -> Option<Ps> {
        if self.mean_gap.is_finite() {
            let t = now + gap(&mut self.rng, self.mean_gap);
            (t < self.end).then_some(t)
        } else {
            let t = self.times.get(self.next_index).copied();
            self.next_index += 1;
            t
        }
    }
    /// Draws the receiver, the fan-in and the senders of an event.
    pub fn event(&mut self) -> IncastEvent {
        // A fixed receiver draws nothing, so its runs are what they were.
        let receiver = match self.receivers.as_slice() {
            [r] => *r,
            [] => self.hosts[self.rng.below(self.hosts.len() as u64) as usize],
            list => list[self.rng.below(list.len() as u64) as usize],
        };
        let u = self.rng.uniform();
        let mut acc = 0.0;
        let mut fan = self.mix.last().map_or(1, |m| m.0);
        for &(f, p) in &self.mix {
            acc += p;
            if u < acc {
                fan = f;
                break;
            }
        }
        // Partial Fisher-Yates over the group without the receiver.
        let mut pool: Vec<u32> = self
            .hosts
            .iter()
            .copied()
            .filter(|&h| h != receiver)
            .collect();
        let fan = (fan as usize).min(pool.len());
        for k in 0..fan {
            let j = k + self.rng.below((pool.len() - k) as u64) as usize;
            pool.swap(k, j);
        }
        pool.truncate(fan);
        // Sizes are drawn after the senders, so fixed-size generators draw
        // exactly what they drew before sizes could vary.
        let sizes = match &self.sizes {
            IncastSizes::Fixed(b) => vec![*b; pool.len()],
            IncastSizes::Cdf(c) => pool.iter().map(|_| c.sample(self.rng.uniform())).collect(),
        };
        IncastEvent {
            receiver,
            senders: pool,
            sizes,
        }
    }
}

/// Open-loop datagrams from one host to another, Poisson or constant-rate.
pub struct PacketGen {
    pub src: u32,
    pub dst: u32,
    pub size: u32,
    pub class: u8,
    pub end: Ps,
    pub hash: u64,
    mean_gap: f64,
    poisson: bool,
    rng: Stream,
}

impl PacketGen {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        index: usize,
        seed: u64,
        src: u32,
        dst: u32,
        size: u32,
        rate: Rate,
        poisson: bool,
        class: u8,
        end: Ps,
    ) -> Self {
        let mean_gap = size as f64 * 8.0 * SEC as f64 / rate.bits_per_sec() as f64;
        let mut rng = Stream::new(seed, "packets", index as u64);
        let hash = rng.next_u64();
        PacketGen {
            src,
            dst,
            size,
            class,
            end,
            hash,
            mean_gap,
            poisson,
            rng,
        }
    }
    pub fn next_time(&mut self, now: Ps) -> Option<Ps> {
        let t = if self.poisson {
            now + gap(&mut self.rng, self.mean_gap)
        } else {
            now + self.mean_gap.round() as Ps
        };
        (t < self.end).then_some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{Rate, MS};

    #[test]
    fn poisson_rate_matches_load() {
        let cdf = Cdf::fixed(10_000);
        let rates = vec![Rate::gbps(10); 4];
        let mut g = PoissonGen::new(0, 1, vec![0, 1, 2, 3], &rates, cdf, 0.5, 0, 1000 * MS);
        // 10 KB flows at 50 % of 10G: one every 16 us on average.
        let mut t = 0;
        let mut n = 0;
        while let Some(nt) = g.next_time(0, t) {
            t = nt;
            n += 1;
            let f = g.flow(0);
            assert_eq!(f.src, 0);
            assert_ne!(f.dst, 0);
        }
        let expected = 1000.0 * MS as f64 / 16_000_000.0;
        // Poisson count: sd = sqrt(62500) = 250; allow 4 sd.
        assert!((n as f64 - expected).abs() < 1000.0, "{n} vs {expected}");
    }

    #[test]
    fn small_flows_go_in_their_class() {
        // WebSearch has flows on both sides of 100 KB: each lands in its class.
        let cdf = Cdf::bundled("websearch").unwrap();
        let rates = vec![Rate::gbps(10); 4];
        let mut g = PoissonGen::new(0, 1, vec![0, 1, 2, 3], &rates, cdf, 0.5, 3, 1000 * MS);
        g.small = Some((100_000, 4));
        let (mut small, mut large) = (0, 0);
        for _ in 0..2000 {
            let f = g.flow(1);
            let want = if f.size < 100_000 { 4 } else { 3 };
            assert_eq!(f.class, want, "{} B", f.size);
            if f.size < 100_000 {
                small += 1;
            } else {
                large += 1;
            }
        }
        assert!(small > 100 && large > 100, "{small} / {large}");
    }

    #[test]
    fn incast_receivers_from_a_list_senders_from_the_group() {
        let rates = vec![Rate::gbps(10); 8];
        let mut g = IncastGen::new(
            0,
            5,
            vec![0, 1, 2, 3],
            &rates,
            vec![(3, 1.0)],
            IncastSizes::Fixed(1000),
            Some(0.1),
            vec![],
            vec![4, 5, 6, 7],
            0,
            MS,
        );
        let mut seen = [0u32; 8];
        for _ in 0..400 {
            let e = g.event();
            assert!((4..8).contains(&e.receiver), "{}", e.receiver);
            assert_eq!(e.senders.len(), 3);
            assert!(e.senders.iter().all(|&s| s < 4));
            seen[e.receiver as usize] += 1;
        }
        // Each of the 4 receivers about 100 times (binomial sd 8.7): within 4 sd.
        assert!(
            seen[4..].iter().all(|&n| (65..=135).contains(&n)),
            "{seen:?}"
        );
    }

    #[test]
    fn incast_senders_are_distinct_and_exclude_receiver() {
        let rates = vec![Rate::gbps(10); 16];
        let mut g = IncastGen::new(
            0,
            3,
            (0..16).collect(),
            &rates,
            vec![(1, 0.5), (4, 0.3), (15, 0.2)],
            IncastSizes::Fixed(1000),
            Some(0.1),
            vec![],
            vec![],
            0,
            MS,
        );
        let mut fans = std::collections::BTreeMap::new();
        for _ in 0..2000 {
            let e = g.event();
            assert!(!e.senders.contains(&e.receiver));
            let mut s = e.senders.clone();
            s.sort();
            s.dedup();
            assert_eq!(s.len(), e.senders.len());
            *fans.entry(e.senders.len()).or_insert(0) += 1;
        }
        // 50/30/20 % within 4 binomial sd (sd <= 22 of 2000).
        assert!((fans[&1] as f64 - 1000.0).abs() < 90.0, "{fans:?}");
        assert!((fans[&4] as f64 - 600.0).abs() < 90.0, "{fans:?}");
        assert!((fans[&15] as f64 - 400.0).abs() < 90.0, "{fans:?}");
    }

    #[test]
    fn incast_sizes_from_a_cdf_and_the_load_they_imply() {
        let rates = vec![Rate::gbps(10); 8];
        let cdf = Cdf::bundled("websearch").unwrap();
        let mean = cdf.mean();
        let mut g = IncastGen::new(
            0,
            5,
            (0..8).collect(),
            &rates,
            vec![(2, 1.0)],
            IncastSizes::Cdf(cdf),
            Some(0.5),
            vec![],
            vec![],
            0,
            SEC,
        );
        // Events carry 2 x mean bytes; half of 8 x 10 Gb/s: a gap of 2 x mean x 8 / 40e9 s.
        let want_gap = 2.0 * mean * 8.0 / 40e9 * SEC as f64;
        assert!((g.mean_gap / want_gap - 1.0).abs() < 1e-9);
        let n = 4000;
        let mut total = 0.0;
        for _ in 0..n {
            let e = g.event();
            assert_eq!(e.sizes.len(), e.senders.len());
            assert!(e.sizes.iter().all(|&s| s > 0));
            total += e.sizes.iter().sum::<u64>() as f64;
        }
        // WebSearch sizes: sd/mean about 2.3, so the mean of 8000 draws is
        // within 4 x 2.3 / sqrt(8000) = 10 % of the CDF mean.
        let got = total / (2 * n) as f64;
        assert!((got / mean - 1.0).abs() < 0.1, "{got} vs {mean}");
    }
}
